/* SPDX-License-Identifier: MIT */
/*
 * run.h - one analysis: the input files, and passes over them that stream
 * events through the correlator into the consumers a report needs.
 */
#ifndef AN_RUN_H
#define AN_RUN_H

#include "analyze/correlate.h"
#include "analyze/input.h"
#include "analyze/names.h"
#include "analyze/report.h"
#include "analyze/series.h"
#include "analyze/span.h"

/* Consumers a pass feeds. */
#define AN_WANT_STATS	1u	/* per-group stage statistics */
#define AN_WANT_SERIES	2u	/* time series and heatmaps */
#define AN_WANT_TOP	4u	/* slowest I/Os at or above top.threshold */
#define AN_WANT_STAGE	8u	/* samples of one stage (quantile threshold) */
#define AN_WANT_SLOWEST	16u	/* with AN_WANT_STAGE: the slowest I/Os of that stage */

/*
 * Most I/Os --quantile keeps in one pass (an_slowest entries of about 210
 * bytes: 55 MB); beyond that it makes two passes.
 */
#define AN_ONE_PASS_MAX	(1u << 18)

struct an_run {
	struct an_names *names;
	struct an_input *in;
	struct an_filter filter;
	uint64_t stale_ns;
	unsigned want;
	struct an_stats stats;
	struct an_series series;
	struct an_top top;
	struct an_slowest slowest;
	struct an_qest stage_samples;
	enum an_stage stage;
	struct an_spans *spans;		/* --span pairing, NULL without spans */
	struct an_corr_stats corr;	/* of the last pass */
	int quantile_passes;		/* passes the last an_run_quantile() made */
};

/* Open the files; -1 with "FILE: what is wrong" in err. */
int an_run_open(struct an_run *r, char *const *files, int nfiles, char *err, size_t cap);
/* Stream every event once into the consumers in `want` (set up by the caller). */
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
/* Most I/Os the files can yield: each begins with an event an_corr_begins_io() names. */
uint64_t an_run_io_bound(const struct an_run *r);
/*
 * Heap entries that hold every I/O at or above the q-quantile of at most
 * n_max I/Os without ties: ceil((1 - q) * n_max) + 1; 0 when above max.
 */
size_t an_quantile_heap_size(uint64_t n_max, double q, size_t max);
void an_run_close(struct an_run *r);
/* Duration of the trace in ns (at least 1). */
uint64_t an_run_duration(const struct an_run *r);
/* The header lines every report starts with: files, events, loss, incomplete I/Os. */
void an_run_print_header(const struct an_run *r, FILE *out);

#endif /* AN_RUN_H */
