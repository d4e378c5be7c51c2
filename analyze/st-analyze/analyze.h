/* SPDX-License-Identifier: MIT */
/*
 * analyze.h - what the st-analyze program's parts share: options, opening
 * and passing over the input with one-line errors, the plots, diff.
 */
#ifndef AN_ANALYZE_H
#define AN_ANALYZE_H

#include <getopt.h>
#include <stdio.h>

#include "analyze/lib/run.h"

struct an_opts {
	double quantile;	/* 0: no --quantile */
	enum an_stage stage;	/* stage_name resolved by an_opts_resolve() */
	const char *stage_name;
	size_t top;
	enum an_by by;
	uint64_t interval;	/* 0: none */
	int heatmap;		/* 0, 'l' or 'p' */
	int csv;
	const char *gnuplot_dir;
	const char *save_summary;	/* --save-summary FILE */
	int force;		/* --force: DIR may be a symlink (followed) */
	const char *dev, *comm;
	int64_t pid;
	const char *from, *to;	/* NULL, or a time: st_parse_time() from the trace start */
	size_t exact_limit;
	uint64_t stale;		/* open I/Os older than this are incomplete */
	unsigned threads;	/* --threads: CPUs a pass may use, 0 all online */
	double threshold;	/* diff: percent */
	unsigned heatmap_rows;	/* 0: heatmaps use the interval */
	unsigned dist;		/* AN_DIST_*: --sizes, --seek, --hist, --depth */
	int top_by;		/* --top-by: an_by, -1 none */
	enum an_rank top_rank;
	const char *html;	/* --html FILE */
	int follow;		/* --follow: read the recording while it is written */
	const char *metrics;	/* --metrics ADDR:PORT, NULL none */
	int why;		/* --why: the causes of the slowest I/Os' time */
	struct an_span_defs spans;	/* --span, in the order given */
	const char *columns;	/* --columns LIST, into cols by an_opts_resolve() */
	struct an_cols cols;	/* what the text tables show: --wide, --columns */
};

/* getopt_long value of --threshold, an option of diff only. */
#define AN_OPT_THRESHOLD 1000

void an_opts_init(struct an_opts *o);
/*
 * --config FILE in argv (a module or a stortrace config, config.c): applied
 * before the other options, which override it. 0 or 2 after the error.
 */
int an_config_apply(struct an_opts *o, int argc, char **argv, const char *prog);
/* Whether `st-analyze diff` takes this getopt_long value (the others are refused). */
int an_diff_accepts(int opt);
/*
 * The options of st-analyze (name NULL) or of its subcommand `name` (then
 * argv[0]) into o: --help prints usage, --version the version, an option
 * `accepts` refuses is a usage error. -1 to go on with the arguments from
 * optind, else the exit status.
 */
int an_parse_args(int argc, char **argv, struct an_opts *o, const char *name, const char *usage,
		  int (*accepts)(int opt));
/* 1 for the options of st-analyze FILE... (all but diff's --threshold). */
int an_report_accepts(int opt);
/* --version of st-analyze and its subcommands. */
void an_print_version(void);
/* 1 for the options st-analyze merge takes. */
int an_merge_accepts(int opt);
const struct option *an_long_opts(void);
/* Apply one getopt_long result; 0 or 2 after printing a one-line error. */
int an_parse_option(struct an_opts *o, int opt, const char *arg, const char *prog);
/* After the last option, when every --span is defined: resolve --stage. 0 or 2 after the error. */
int an_opts_resolve(struct an_opts *o, const char *prog);
/* Open files with the options' filters; 0, or the exit status after printing the error. */
int an_open(struct an_run *r, const struct an_opts *o, char *const *files, int nfiles, const char *prog);
/* One pass; 0 or EXIT_FAIL after printing the error. */
int an_pass(struct an_run *r, unsigned want, const char *prog);
/* Interval of series and heatmaps: the option, else 1/100 of the trace. */
uint64_t an_auto_interval(const struct an_run *r, uint64_t interval);

/*
 * --follow FILE (a path, "-", or a rotating set's pattern, run.*.sttrace):
 * views every o->interval (default 1 s) on standard output and, with
 * o->metrics, the Prometheus endpoint, until the recording ends or SIGINT.
 * Then 0 and the files it read in *files (malloc'd), for the final report;
 * else the exit status after printing the error. When the recording ended
 * by itself, the endpoint is still up: *metrics (NULL: none) is for
 * an_follow_serve().
 */
struct an_metrics;
int an_follow(const struct an_opts *o, const char *arg, const char *prog, char ***files, int *nfiles,
	      struct an_metrics **metrics);
/*
 * The endpoint keeps serving the recording's final values (a scraper sees
 * its end, and the target stays up) until SIGINT or SIGTERM; then it stops.
 */
void an_follow_serve(struct an_metrics *metrics, const char *addr, const char *prog);

/* --gnuplot: write the plots of r (stats and series filled) into o->gnuplot_dir. */
int an_plot(struct an_run *r, const struct an_opts *o, FILE *info);
/* diff --gnuplot: per op, both traces' CDFs per stage and their quantiles with CIs. */
int an_plot_diff(struct an_stats *base, struct an_stats *now, const struct an_opts *o, FILE *info);

/*
 * --html FILE: every report of the trace in one self-contained page (html.c),
 * written through st_output_open(); 0 or 2 after the error.
 */
int an_html_report(struct an_run *r, const struct an_opts *o, FILE *info);

/* st-analyze diff; argv[0] is "diff". */
int an_diff_main(int argc, char **argv);
/* st-analyze merge; argv[0] is "merge". */
int an_merge_main(int argc, char **argv);

#endif /* AN_ANALYZE_H */
