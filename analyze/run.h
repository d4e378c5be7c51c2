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

/* Consumers a pass feeds. */
#define AN_WANT_STATS	1u	/* per-group stage statistics */
#define AN_WANT_SERIES	2u	/* time series and heatmaps */
#define AN_WANT_TOP	4u	/* slowest I/Os at or above top.threshold */
#define AN_WANT_STAGE	8u	/* samples of one stage (quantile threshold) */

struct an_run {
	struct an_names *names;
	struct an_input *in;
	struct an_filter filter;
	uint64_t stale_ns;
	unsigned want;
	struct an_stats stats;
	struct an_series series;
	struct an_top top;
	struct an_qest stage_samples;
	enum an_stage stage;
	struct an_corr_stats corr;	/* of the last pass */
};

/* Open the files; -1 with "FILE: what is wrong" in err. */
int an_run_open(struct an_run *r, char *const *files, int nfiles, char *err, size_t cap);
/* Stream every event once into the consumers in `want` (set up by the caller). */
int an_run_pass(struct an_run *r, unsigned want, char *err, size_t cap);
void an_run_close(struct an_run *r);
/* Duration of the trace in ns (at least 1). */
uint64_t an_run_duration(const struct an_run *r);
/* The header lines every report starts with: files, events, loss, incomplete I/Os. */
void an_run_print_header(const struct an_run *r, FILE *out);

/* "1.5", "250ms", "20us", "100ns", "2s" -> ns; -1 when malformed. */
int an_parse_duration(const char *s, uint64_t *ns);

#endif /* AN_RUN_H */
