/* SPDX-License-Identifier: MIT */
/*
 * summary.h - mergeable summaries: what a summary report is made of (the
 * files' counts, the correlation counts, the wall-clock span and, per group,
 * I/O counts and one quantile sketch per stage) in a small versioned text
 * file. `st-analyze FILE --save-summary OUT` writes one; `st-analyze merge`
 * adds several up into the report analyzing their traces together prints
 * (counts exact, quantiles within the sketch's 0.39 %); `st-analyze diff`
 * compares two. analyze/README.md, "Summary files", is the format's text.
 */
#ifndef AN_SUMMARY_H
#define AN_SUMMARY_H

#include <stddef.h>

#include "analyze/lib/run.h"

#define AN_SUMMARY_MAGIC "sttrace-summary"
#define AN_SUMMARY_VERSION 2	/* 2: busy lines; 1 is read too */

/*
 * Write r's summary (after a pass with AN_WANT_STATS) to path, made as
 * st_output_open() makes outputs (output_flags: ST_OUTPUT_*); 0 or -1 with err.
 */
int an_summary_save(struct an_run *r, const char *path, unsigned output_flags, char *err,
		    size_t cap);
/*
 * Add the summary in path to r: its files, correlation counts and span to
 * r->info and r->corr, its groups to r->stats (initialized here with the
 * summary's grouping when r holds no summary yet, else the same grouping is
 * required). path may be "-" or a FIFO, read as input.h reads them. 0, or -1
 * with "PATH: line N: what is wrong" in err.
 */
int an_summary_load(struct an_run *r, const char *path, char *err, size_t cap);
/* 1 when the file at path starts like a summary (any version). */
int an_summary_is(const char *path);

#endif /* AN_SUMMARY_H */
