/* SPDX-License-Identifier: MIT */
/*
 * dist.h - the distributions storage engineers read in btt, biolatency,
 * iostat and biotop, from correlated I/Os: request sizes, seek distances,
 * log2 latency histograms, time-weighted queue depth, and the heaviest
 * files, commands or processes.
 *
 * Sizes and histograms are counted per --by group as I/Os arrive. Seeks and
 * depth need the I/Os in the order they were issued, which is not the order
 * they complete in: each block I/O keeps a record of 40 bytes (issue,
 * completion or 0 where the trace holds none, sectors, device, op, pid)
 * until the end of the pass, when the records are sorted by issue time.
 */
#ifndef AN_DIST_H
#define AN_DIST_H

#include <stdint.h>
#include <stdio.h>

#include "analyze/lib/report.h"

/*
 * A log2 histogram as biolatency prints it: slot 0 holds 0 and 1, slot k
 * the values in [2^k, 2^(k+1)).
 */
#define AN_LOG2_SLOTS 64
struct an_log2 {
	uint64_t slot[AN_LOG2_SLOTS];
	uint64_t n;
};

static inline unsigned an_log2_slot(uint64_t v)
{
	return v < 2 ? 0 : 63 - (unsigned)__builtin_clzll(v);
}

/* Sizes kept exactly per group; the rest are counted as other sizes. */
#define AN_DIST_SIZES 32

struct an_dist_group {
	char label[128];
	struct an_log2 size;		/* bytes */
	uint64_t size_value[AN_DIST_SIZES], size_count[AN_DIST_SIZES];
	unsigned nsizes;
	uint64_t size_other;
	struct an_log2 lat;		/* of the stage, in us */
};

/* A block I/O as the seek and depth sweeps need it. */
struct an_dist_rq {
	uint64_t issue, complete, sector;
	uint32_t sectors, dev;
	uint32_t pid;
	uint16_t recording;
	uint8_t op;
};

/* Seeks of one device and op, or of one process (op AN_OP_COUNT: any). */
struct an_dist_seek {
	uint32_t dev, pid;		/* pid 0: per device */
	uint16_t recording;
	uint8_t op;
	uint64_t last_start, last_end;	/* sectors of the previous request, btt's way */
	uint64_t zero;			/* distance 0: sequential */
	struct an_log2 fwd, back;	/* |distance| in sectors */
};

/* Time spent at each number of requests in flight (issue..completion) on one device. */
struct an_dist_depth {
	uint32_t dev;
	uint16_t recording;
	uint32_t now, max;
	uint64_t last_ts;
	uint64_t *ns;			/* ns[k]: time with k in flight */
	uint32_t cap;
	uint64_t requests;
};

#define AN_DIST_SIZE	1u
#define AN_DIST_SEEK	2u
#define AN_DIST_HIST	4u
#define AN_DIST_DEPTH	8u

struct an_dist {
	unsigned want;			/* AN_DIST_* */
	enum an_by by;
	enum an_stage stage;		/* of the histograms */
	const struct an_names *names;	/* of the I/Os added (per recording) */
	const char *host;
	struct an_idmap index;		/* hash of a group label -> groups[] */
	struct an_dist_group *groups;
	uint32_t ngroups, gcap;
	struct an_dist_rq *rqs;
	size_t nrqs, rqcap;
	/* an_dist_finish(): */
	struct an_dist_seek *seeks;
	size_t nseeks, seekcap;
	struct an_dist_depth *depths;
	size_t ndepths;
	uint64_t t0, t1;		/* the span depth is spread over */
	int failed;
};

void an_dist_init(struct an_dist *d, unsigned want, enum an_by by, enum an_stage stage,
		  const struct an_names *names);
void an_dist_free(struct an_dist *d);
/* One I/O; an incomplete one counts where what it lacks is not needed (an_dist_add). */
void an_dist_add(struct an_dist *d, const struct an_io *io);
/* dst += src (src's records move to dst). 0 or -1 (out of memory). */
int an_dist_merge(struct an_dist *dst, struct an_dist *src);
/*
 * After the last I/O: sort the groups by label, the block I/Os by issue,
 * and sweep them into seeks and depth over [t0, t1] (the trace's span).
 * 0 or -1 (out of memory).
 */
int an_dist_finish(struct an_dist *d, uint64_t t0, uint64_t t1);

/* The reports, text or CSV; origins name each recording's devices and processes. */
void an_dist_print_sizes(const struct an_dist *d, FILE *out, int csv);
void an_dist_print_seeks(const struct an_dist *d, const struct an_origin *origins, FILE *out,
			 int csv);
void an_dist_print_hist(const struct an_dist *d, const struct an_span_defs *spans, FILE *out,
			int csv);
void an_dist_print_depth(const struct an_dist *d, const struct an_origin *origins, FILE *out,
			 int csv);
/* Mean requests in flight of a device over [t0, t1]. */
double an_dist_depth_mean(const struct an_dist *d, const struct an_dist_depth *dp);

/* --top-by: what ranks the groups. */
enum an_rank { AN_RANK_IOS, AN_RANK_BYTES, AN_RANK_TAIL };
/* "ios", "bytes", "tail"; -1 unknown. */
int an_rank_by_name(const char *name);
const char *an_rank_name(enum an_rank rank);
/*
 * Keep the n heaviest groups of s (sorted heaviest first) by I/Os, bytes or
 * the p99 of `stage`; the others are freed.
 */
void an_stats_keep_top(struct an_stats *s, enum an_rank rank, enum an_stage stage, size_t n);

#endif /* AN_DIST_H */
