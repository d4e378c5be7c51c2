/* SPDX-License-Identifier: MIT */
/*
 * report.h - consumers of correlated I/Os: per-group stage statistics (the
 * summary and diff), the slowest-I/O list of --quantile, and their text and
 * CSV output.
 */
#ifndef AN_REPORT_H
#define AN_REPORT_H

#include <stdio.h>

#include "analyze/lib/correlate.h"
#include "analyze/lib/idmap.h"
#include "analyze/lib/names.h"
#include "analyze/lib/sketch.h"

struct an_span_defs;	/* analyze/lib/span.h: stage names of the spans */

/* AN_BY_CACHE: a read's page cache (an_io.cache: hit, miss, direct; none for other ops). */
enum an_by { AN_BY_DEVOP, AN_BY_OP, AN_BY_DEV, AN_BY_COMM, AN_BY_PID, AN_BY_FILE, AN_BY_HOST,
	     AN_BY_CGROUP, AN_BY_CACHE };

/* What the I/Os of one recording are printed with; io->recording indexes an array of these. */
struct an_origin {
	const struct an_names *names;
	const char *host;
	unsigned missing;	/* stages its kernel could not give (analyze/lib/missing.h) */
};

/* The --quantile list's columns beside its stages, in their order (--columns names them). */
enum an_col { AN_COL_CACHE, AN_COL_OP, AN_COL_DEV, AN_COL_SECTOR, AN_COL_BYTES, AN_COL_PID,
	      AN_COL_TID, AN_COL_COMM, AN_COL_HOST, AN_COL_FILE, AN_COL_COUNT };

/* The widest line of a text table by default: a terminal of 200 columns. */
#define AN_TEXT_WIDTH 200

/*
 * What the text tables show; CSV has every column, always, in its fixed
 * order. By default (all 0): the stages and causes with a value above 0,
 * the list's columns but tid (host with several hosts); in the list, when
 * the line would pass AN_TEXT_WIDTH, the stages with the least time left
 * out (total and the ranked stage stay) and the file cut at its start.
 * wide: every stage measured and every column, lines of any width.
 * stages and fields (--columns): those too, the list's stages not left out.
 */
struct an_cols {
	int wide;
	unsigned stages;	/* 1 << enum an_stage */
	unsigned fields;	/* 1 << enum an_col */
};

/*
 * --columns LIST: stage, span and column names (an_col: cache, op, dev,
 * sector, bytes, pid, tid, comm, host, file) separated by commas, or all
 * (wide). 0, or -1 with a one-line message naming the bad one in err.
 */
int an_cols_parse(struct an_cols *c, const char *list, const struct an_span_defs *spans, char *err,
		  size_t cap);
/* Whether a text table shows stage k, whose largest value is max (cols NULL: the default). */
int an_cols_show(const struct an_cols *cols, unsigned k, uint64_t max);

/* "devop", "op", ... for --by and summaries; an_by_by_name: -1 unknown. */
const char *an_by_name(enum an_by by);
int an_by_by_name(const char *name);

struct an_group {
	char label[128];
	uint64_t count, bytes, incomplete, errors, split, requeues;
	uint64_t merged;	/* merges of the I/Os' bios into requests (an_io.merges) */
	uint64_t unjoined;	/* complete syscalls whose bios did not join (AN_IO_UNJOINED) */
	/* when the group was busy: the first complete I/O's start, the last one's end (0: not known) */
	uint64_t first, last;
	struct an_qest st[AN_ST_COUNT];
	/* I/Os whose cause was 0, not yet in st[AN_ST_RUNQ + cause] (an_stats_settle) */
	uint64_t zero_causes[AN_CAUSE_COUNT];
};

#define AN_GROUP_RECENT 4	/* an_stats.recent's entries, a power of two */

struct an_stats {
	enum an_by by;
	size_t exact_limit;
	const struct an_names *names;
	const char *host;	/* of the I/Os added, for --by host */
	struct an_idmap index;	/* group key -> groups[] (after a merge: hash of the label) */
	struct an_group *groups;
	uint32_t ngroups, cap;
	/*
	 * Groups met last, by the low bits of their key (a devop or op key's
	 * op: reads and writes come interleaved); key 0 none.
	 */
	struct an_group_hint {
		uint64_t key;
		uint32_t group;
	} recent[AN_GROUP_RECENT];
	int failed;		/* out of memory: some samples were dropped */
};

/* Seconds g was busy (its first complete I/O's start to the last one's end), 0 when not known. */
double an_group_busy_s(const struct an_group *g);

/* Key of io's group under `by` (never 0), and its label; host for AN_BY_HOST. */
uint64_t an_group_key(enum an_by by, const struct an_names *names, const char *host,
		      const struct an_io *io);
void an_group_label(enum an_by by, const struct an_names *names, const char *host,
		    const struct an_io *io, char *buf, size_t cap);
/* FNV-1a of a label, for maps keyed by label. */
uint64_t an_label_hash(const char *s);

void an_stats_init(struct an_stats *s, enum an_by by, size_t exact_limit, const struct an_names *names);
void an_stats_free(struct an_stats *s);
/*
 * One I/O: complete ones feed the stage statistics, incomplete ones are
 * counted. A cause of 0 (most I/Os' every cause) is only counted, in the
 * group's zero_causes: an_stats_settle() adds those samples to st[], and
 * must come before st[] is read.
 */
void an_stats_add(struct an_stats *s, const struct an_io *io);
/* Every group's zero_causes into its st[]; 0 or -1 (out of memory: failed is set). */
int an_stats_settle(struct an_stats *s);
/* Drop the samples of the stages in mask (bits 1u << enum an_stage): stages not recorded. */
void an_stats_drop(struct an_stats *s, unsigned mask);
/* Groups sorted by label (stable output). */
void an_stats_sort(struct an_stats *s);
/* 1 if every quantile of every group came from exact samples. */
int an_stats_exact(const struct an_stats *s);
/*
 * Summary table: text (csv = 0, its rows as cols says) or CSV. Rates over
 * the time each group was busy (first, last), else over duration_ns, the
 * recording's span, which the text prints beside them. CSV: group, ios,
 * iops, mb_s, incomplete, errors, stage, n, min_us, avg_us, p50_us, p90_us,
 * p99_us, p99_9_us, p99_95_us, max_us, quantiles, busy_s (empty when not known).
 */
void an_stats_print(struct an_stats *s, const struct an_span_defs *spans, const struct an_cols *cols,
		    FILE *out, int csv, uint64_t duration_ns);
/*
 * dst += src, group by group with the same label (src settled first; its samples move to dst
 * unchanged: the same quantiles as if dst had seen src's I/Os; a group's
 * statistics may move, leaving src's empty, to be freed). A dst is either
 * fed I/Os or merged into, not both. 0 or -1 (out of memory).
 */
int an_stats_merge(struct an_stats *dst, struct an_stats *src);
/* Merge every group's stage s into dst (for whole-trace CDFs). */
int an_stats_merge_stage(struct an_stats *s, enum an_stage st, struct an_qest *dst);

/* The slowest I/Os of one stage at or above a threshold, bounded to `max`. */
struct an_top {
	enum an_stage stage;
	uint64_t threshold;
	size_t max, n, cap;	/* cap: heap's length, grown up to max as I/Os come */
	uint64_t above;		/* I/Os at or above the threshold */
	struct an_io *heap;	/* min-heap on the stage latency */
	int failed;		/* out of memory growing the heap */
};

int an_top_init(struct an_top *t, enum an_stage stage, uint64_t threshold, size_t max);
void an_top_free(struct an_top *t);
void an_top_add(struct an_top *t, const struct an_io *io);
/* dst += src: the I/Os of both at or above the threshold, the slowest kept. */
void an_top_merge(struct an_top *dst, const struct an_top *src);
/*
 * Slowest first, each with its full stage breakdown, process, file and (in
 * CSV, and in text when show_host) host, names from origins[io->recording];
 * the text's columns as cols says. CSV: rank, start_s, the stages in
 * enum an_stage order but Q2Q (the causes too, empty when not known), the
 * span ranked by if one, then cache, op, dev, sector, bytes, pid, tid,
 * comm, file, merged, split, requeues, host.
 */
void an_top_print(struct an_top *t, const struct an_span_defs *spans, const struct an_origin *origins,
		  int show_host, const struct an_cols *cols, FILE *out, int csv, uint64_t t0);

/*
 * --quantile in one pass: the `cap` slowest I/Os of a stage, kept while
 * the quantile itself is still being computed. Once it is known,
 * an_slowest_replay() feeds the kept I/Os at or above it to an an_top in the
 * order they arrived, the same calls a second pass would make, so the list
 * comes out identical.
 */
struct an_slow {
	uint64_t ns;		/* the stage's latency */
	uint64_t seq;		/* arrival order */
	struct an_io io;
};

struct an_slowest {
	size_t cap, n;
	uint64_t seen;		/* I/Os offered */
	uint64_t dropped;	/* of them not kept (rejected or evicted) */
	uint64_t dropped_max;	/* the slowest of those */
	struct an_slow *heap;	/* min-heap on ns */
};

int an_slowest_init(struct an_slowest *s, size_t cap);
void an_slowest_free(struct an_slowest *s);
/* One complete I/O whose stage latency is ns. */
void an_slowest_add(struct an_slowest *s, const struct an_io *io, uint64_t ns);
/* dst += src: what dst would hold had src's I/Os come after its own (src is reordered). */
void an_slowest_merge(struct an_slowest *dst, struct an_slowest *src);
/*
 * Feed the kept I/Os to t (set up with its threshold) in arrival order: 0,
 * or -1 without touching t when an I/O at or above t->threshold may have
 * been dropped (ties or a bound that was too small: a second pass must do).
 */
int an_slowest_replay(struct an_slowest *s, struct an_top *t);

/* Microseconds with three decimals, for tables. */
double an_us(uint64_t ns);

#endif /* AN_REPORT_H */
