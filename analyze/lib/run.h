/* SPDX-License-Identifier: MIT */
/*
 * run.h - one analysis: the input files, and passes over them that stream
 * events through the correlator into the consumers a report needs.
 */
#ifndef AN_RUN_H
#define AN_RUN_H

#include <string.h>

#include "analyze/lib/correlate.h"
#include "analyze/lib/dist.h"
#include "analyze/lib/input.h"
#include "analyze/lib/names.h"
#include "analyze/lib/report.h"
#include "analyze/lib/series.h"
#include "analyze/lib/span.h"

/* Which I/Os a run counts (--dev, --pid, --comm, --from/--to); zero values mean "any". */
struct an_filter {
	uint32_t dev;
	int64_t pid;		/* -1 any */
	const char *comm;
	uint64_t from, to;	/* I/O start in [from, to), on the run's clock */
};
/* Whether io passes f (names: its recording's, for the comm). Inline: every I/O of a pass asks. */
static inline int an_filter_match(const struct an_filter *f, const struct an_names *names,
				  const struct an_io *io)
{
	if (f->dev && io->dev != f->dev && io->fs_dev != f->dev)
		return 0;
	if (f->pid >= 0 && io->pid != (uint64_t)f->pid)
		return 0;
	if (io->start < f->from || (f->to && io->start > f->to))
		return 0;
	return !f->comm || !strcmp(an_names_comm(names, io->pid), f->comm);
}

/*
 * A recording whose wall-clock offset at its end differs from the one at its
 * start by this much saw its wall clock stepped; the header says so.
 */
#define AN_CLOCK_STEP_NS 1000000

/* Consumers a pass feeds. */
#define AN_WANT_STATS	1u	/* per-group stage statistics */
#define AN_WANT_SERIES	2u	/* time series and heatmaps */
#define AN_WANT_TOP	4u	/* slowest I/Os at or above top.threshold */
#define AN_WANT_STAGE	8u	/* samples of one stage (quantile threshold) */
#define AN_WANT_SLOWEST	16u	/* with AN_WANT_STAGE: the slowest I/Os of that stage */
#define AN_WANT_EMIT	32u	/* every I/O to emit(emit_ctx, io): a program's own consumer,
				   called by the recording's worker (several recordings: several
				   threads at once) */
#define AN_WANT_DIST	64u	/* sizes, seeks, histograms, depth (analyze/lib/dist.h) */

/*
 * Most I/Os --quantile keeps in one pass (an_slowest entries of about 210
 * bytes: 55 MB); beyond that it makes two passes.
 */
#define AN_ONE_PASS_MAX	(1u << 18)

/* Most files one run reads (an_io.recording numbers their recordings). */
#define AN_MAX_FILES 65536

/*
 * One recording: the files of one host and boot (one file, its time
 * slices, or the rotated files of one st-record run). Request and bio addresses, pids and tids are identities
 * only inside a recording, so each has its own input, names and correlator,
 * and a pass runs the recordings side by side (a worker thread per CPU,
 * each taking the next recording) into consumers of their own, merged into
 * the run's at the end in the order the files were given.
 */
struct an_recording {
	struct an_input *in;
	struct an_names *names;
	struct an_spans *spans;		/* --span pairing, NULL without spans */
	char host[128];		/* host.name; the file name when that is ambiguous */
	int64_t clock_offset;	/* clock.realtime_offset_ns: wall = ts + offset */
	int64_t clock_step;	/* clock.realtime_offset_end_ns - clock_offset, 0 unknown */
	uint64_t shift;		/* added to its event times to put them on the run's clock */
	uint32_t dev;		/* --dev as this recording numbers it, 0 any */
	uint16_t index;
	int decode_ahead;	/* its chunks decoded by a thread of their own during a pass */
	struct an_run *run;
	/* One pass: */
	int as_is;		/* its I/Os need no move onto the run's clock and no filter (on_io) */
	an_emit_fn emit;	/* what takes its I/Os: on_io, or on_io_stats for a summary as_is */
	struct an_stats stats;
	struct an_series series;
	struct an_top top;
	struct an_slowest slowest;
	struct an_qest stage_samples;
	struct an_dist dist;
	struct an_corr_stats corr;
	int ret;
	char err[256];
};

struct an_run {
	struct an_recording *recs;
	struct an_origin *origins;	/* names and host of each recording, for output */
	unsigned nrecs;
	struct an_input_info info;	/* of every file; first_ts, last_ts, start_ts on the run's clock */
	int64_t wall_offset;		/* wall-clock ns = run clock + wall_offset */
	struct an_filter filter;	/* times on the run's clock */
	const char *dev_name;		/* --dev, resolved per recording; NULL any */
	uint64_t stale_ns;
	unsigned threads;		/* CPUs a pass may use (--threads), 0 all online */
	unsigned want;
	struct an_stats stats;
	struct an_series series;
	struct an_top top;
	struct an_slowest slowest;
	struct an_qest stage_samples;
	struct an_dist dist;		/* AN_WANT_DIST: set up by the caller, an_dist_finish() after */
	enum an_stage stage;
	an_emit_fn emit;		/* AN_WANT_EMIT */
	void *emit_ctx;
	struct an_corr_stats corr;	/* of the last pass, every recording's added */
	int quantile_passes;		/* passes the last an_run_quantile() made */
	struct an_span_defs spans;	/* --span: the run's own copy, which names its span stages */
};

/*
 * Open the files; -1 with "FILE: what is wrong" in err. Files are one
 * recording when their metadata names the same host and clock offset (read
 * once per recording: slices, or the rotated files of st-record --rotate)
 * and they follow one another in time (overlapping by less than half the
 * shorter one); any other file is a recording of its own. With several recordings, event
 * times are put on one clock, the wall clock (clock.realtime_offset_ns)
 * minus the smallest offset among them; one recording keeps its event clock.
 * spans: the run's --span definitions, copied (NULL: none).
 */
int an_run_open(struct an_run *r, char *const *files, int nfiles, const struct an_span_defs *spans,
		char *err, size_t cap);
/* --dev NAME: resolved in each recording's metadata; -1 when none knows it. */
int an_run_set_dev(struct an_run *r, const char *name);
/*
 * Stream every event once into the consumers in `want` (set up by the
 * caller: the recordings' own are set up like them and merged into them).
 */
int an_run_pass(struct an_run *r, unsigned want, char *err, size_t cap);
/*
 * --quantile: the q-quantile (0 < q <= 1) of r->stage into r->stage_samples
 * and the (at most top) slowest I/Os at or above it into r->top; the caller
 * frees both. One pass when the I/Os at or above it are sure to fit in a
 * heap of one_pass_max entries (0: always two passes), else, or when ties
 * may have pushed one out, a second pass for the list.
 */
int an_run_quantile(struct an_run *r, double q, size_t exact_limit, size_t top,
		    size_t one_pass_max, char *err, size_t cap);
/*
 * The causes (1 << AN_CAUSE_*) the recording measures: 0 without the why
 * events (format 1.5, 1.6, analyze/lib/cause.h), else run queue waits and
 * those whose events it holds (a lock wait from contention_begin/end,
 * throttle from block_bio_held, dirty from balance_dirty_pages, reclaim
 * from the vmscan events), less those whose every event its kernel
 * lacked (metadata missing.*, analyze/lib/missing.h: the reports say "not
 * recorded on this kernel"). A cause whose probe met nothing is not told
 * apart from one not probed: neither is reported as 0. Its I/Os carry
 * their causes (AN_IO_WHY) when not 0.
 */
unsigned an_run_causes(const struct an_recording *x);
/* Most I/Os the files can yield: each begins with an event an_corr_begins_io() names. */
uint64_t an_run_io_bound(const struct an_run *r);
/*
 * Heap entries that hold every I/O at or above the q-quantile of at most
 * n_max I/Os without ties: ceil((1 - q) * n_max) + 1; 0 when above max.
 */
size_t an_quantile_heap_size(uint64_t n_max, double q, size_t max);
void an_run_close(struct an_run *r);
/* Start of the span an_run_duration() measures: the first event, or --from after it. */
uint64_t an_run_t0(const struct an_run *r);
/* Duration of the trace in ns (at least 1). */
uint64_t an_run_duration(const struct an_run *r);
/*
 * The name of device map m (series.h) in buf: its device, after its
 * recording's host when the run has several recordings. As the trace has it
 * (text.h shows it safely).
 */
const char *an_run_map_name(const struct an_run *r, const struct an_posmap *m, char *buf, size_t cap);
/* The header lines every report starts with: files, events, loss, incomplete I/Os. */
void an_run_print_header(const struct an_run *r, FILE *out);

#endif /* AN_RUN_H */
