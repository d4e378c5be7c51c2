/* SPDX-License-Identifier: MIT */
/*
 * st-analyze merge SUMMARY...: the summary report of the traces behind
 * several summaries (--save-summary), as analyzing them together prints it:
 * counts exact, quantiles from the merged sketches. A fleet saves one
 * summary per node and merges them on one machine, the traces stay put.
 */
#include <stdio.h>
#include <string.h>

#include "analyze/st-analyze/analyze.h"
#include "analyze/lib/summary.h"
#include "common/usage.h"

#define PROG "st-analyze merge"

static const char merge_usage[] =
"usage: st-analyze merge SUMMARY... [options]\n"
"\n"
"Adds up summaries written by st-analyze FILE --save-summary OUT (all saved\n"
"with the same --by) and prints the summary report of their traces analyzed\n"
"together: I/O, byte, error and incomplete counts exact; quantiles from the\n"
"merged log-linear sketches (relative error <= 0.39 %); rates over the time\n"
"each group was busy (version 1 summaries: the span from the earliest to the\n"
"latest summary on the wall clock). A SUMMARY of - is read from standard input.\n"
"\n"
"  --csv              CSV instead of text\n"
"  --wide             every stage measured, also those at 0 throughout\n"
"  --save-summary OUT write the merged summary (merge again later); made 0600,\n"
"                     never through a symlink\n"
"  --force            follow a symlink given as --save-summary OUT\n"
"  -h, --help, --version\n"
"\n"
"Exit: 0 ok, 1 an unreadable or corrupt summary, 2 bad usage.\n";

int an_merge_main(int argc, char **argv)
{
	struct an_opts o;
	struct an_run r;
	char err[512];
	FILE *info;
	int ret, i;

	an_opts_init(&o);
	if ((ret = an_parse_args(argc, argv, &o, "merge", merge_usage, an_merge_accepts)) >= 0)
		return ret;
	ret = 0;
	if (optind >= argc)
		return usage_error(PROG, "%s", "no summary file");
	memset(&r, 0, sizeof(r));
	r.spans = o.spans;
	r.stats.exact_limit = o.exact_limit;
	for (i = optind; i < argc && !ret; i++)
		if (an_summary_load(&r, argv[i], err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", PROG, err);
			ret = EXIT_FAIL;
		}
	if (!ret && r.stats.failed) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		ret = EXIT_FAIL;
	}
	if (!ret && o.save_summary && an_summary_save(&r, o.save_summary, o.force ? ST_OUTPUT_FORCE : 0, err,
							sizeof(err))) {
		fprintf(stderr, "%s: --save-summary %s\n", PROG, err);
		ret = EXIT_FAIL;
	}
	if (!ret) {
		info = o.csv ? stderr : stdout;
		an_run_print_header(&r, info);
		an_stats_sort(&r.stats);
		fprintf(info, "quantiles: the summaries' log-linear sketches, merged (relative error "
			"<= 0.39%%)\n");
		an_stats_print(&r.stats, &r.spans, &o.cols, stdout, o.csv, an_run_duration(&r));
	}
	an_stats_free(&r.stats);
	return ret;
}
