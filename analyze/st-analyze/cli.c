/* SPDX-License-Identifier: MIT */
/*
 * cli.c - what st-analyze and st-analyze diff share on the command line:
 * option parsing, one-line usage errors, opening the input and running a
 * pass with errors reported the same way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/st-analyze/analyze.h"
#include "common/input.h"
#include "common/number.h"
#include "common/usage.h"

enum {
	OPT_QUANTILE = 256, OPT_STAGE, OPT_TOP, OPT_BY, OPT_INTERVAL, OPT_HEATMAP, OPT_CSV,
	OPT_GNUPLOT, OPT_DEV, OPT_PID, OPT_COMM, OPT_FROM, OPT_TO, OPT_EXACT, OPT_STALE, OPT_THREADS, OPT_FORCE,
	OPT_SAVE_SUMMARY,
	OPT_SPAN, OPT_CONFIG, OPT_HEATMAP_ROWS,
	OPT_SIZES, OPT_SEEK, OPT_HIST, OPT_DEPTH, OPT_TOP_BY, OPT_HTML, OPT_FOLLOW, OPT_METRICS,
	OPT_WHY, OPT_COLUMNS, OPT_WIDE,
};

static const struct option long_opts[] = {
	{ "quantile", required_argument, NULL, OPT_QUANTILE },
	{ "stage", required_argument, NULL, OPT_STAGE },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "by", required_argument, NULL, OPT_BY },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "heatmap", required_argument, NULL, OPT_HEATMAP },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "gnuplot", required_argument, NULL, OPT_GNUPLOT },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "save-summary", required_argument, NULL, OPT_SAVE_SUMMARY },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "exact-limit", required_argument, NULL, OPT_EXACT },
	{ "stale", required_argument, NULL, OPT_STALE },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "span", required_argument, NULL, OPT_SPAN },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "heatmap-rows", required_argument, NULL, OPT_HEATMAP_ROWS },
	{ "sizes", no_argument, NULL, OPT_SIZES },
	{ "seek", no_argument, NULL, OPT_SEEK },
	{ "hist", no_argument, NULL, OPT_HIST },
	{ "depth", no_argument, NULL, OPT_DEPTH },
	{ "top-by", required_argument, NULL, OPT_TOP_BY },
	{ "html", required_argument, NULL, OPT_HTML },
	{ "follow", no_argument, NULL, OPT_FOLLOW },
	{ "metrics", required_argument, NULL, OPT_METRICS },
	{ "why", no_argument, NULL, OPT_WHY },
	{ "columns", required_argument, NULL, OPT_COLUMNS },
	{ "wide", no_argument, NULL, OPT_WIDE },
	{ "threshold", required_argument, NULL, AN_OPT_THRESHOLD },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* --top-by KEY[:ios|bytes|tail]: the groups of KEY (file, comm, pid, cgroup) ranked by I/Os by default. */
static int parse_top_by(struct an_opts *o, const char *arg, const char *prog)
{
	const char *colon = strchr(arg, ':');
	char key[16];
	int by, rank = AN_RANK_IOS;

	snprintf(key, sizeof(key), "%.*s", colon ? (int)(colon - arg) : (int)strlen(arg), arg);
	by = an_by_by_name(key);
	if (by != AN_BY_FILE && by != AN_BY_COMM && by != AN_BY_PID && by != AN_BY_CGROUP)
		return usage_error(prog, "--top-by %s: not file, comm, pid or cgroup (with :ios, :bytes or :tail)",
				      arg);
	if (colon && (rank = an_rank_by_name(colon + 1)) < 0)
		return usage_error(prog, "--top-by %s: rank by ios, bytes or tail", arg);
	o->top_by = by;
	o->top_rank = (enum an_rank)rank;
	return 0;
}

int an_parse_option(struct an_opts *o, int opt, const char *arg, const char *prog)
{
	uint64_t u;
	double v;

	switch (opt) {
	case OPT_QUANTILE:
		if (parse_number(arg, 0, 100, &v) || v <= 0)
			return usage_error(prog, "--quantile %s: not a percentile in (0, 100]", arg);
		o->quantile = v;
		return 0;
	case OPT_STAGE:
		o->stage_name = arg;
		return 0;
	case OPT_SPAN: {
		char err[320];

		if (an_span_define(&o->spans, arg, err, sizeof(err)))
			return usage_error(prog, "%s", err);
		return 0;
	}
	case OPT_TOP:
		if (parse_number(arg, 1, 1e15, &v))
			return usage_error(prog, "--top %s: not a count in [1, 10^15]", arg);
		o->top = (size_t)v;
		return 0;
	case OPT_BY:
		if (an_by_by_name(arg) >= 0) {
			o->by = (enum an_by)an_by_by_name(arg);
			return 0;
		}
		return usage_error(prog, "--by %s: not one of devop, op, dev, comm, pid, file, host, cgroup, "
				   "cache", arg);
	case OPT_INTERVAL:
		if (st_parse_duration(arg, &o->interval) || !o->interval)
			return usage_error(prog, "--interval %s: not a positive duration", arg);
		return 0;
	case OPT_HEATMAP:
		if (strcmp(arg, "lat") && strcmp(arg, "pos"))
			return usage_error(prog, "--heatmap %s: not lat or pos", arg);
		o->heatmap = arg[0];
		return 0;
	case OPT_CSV:
		o->csv = 1;
		return 0;
	case OPT_GNUPLOT:
		o->gnuplot_dir = arg;
		return 0;
	case OPT_FORCE:
		o->force = 1;
		return 0;
	case OPT_SAVE_SUMMARY:
		o->save_summary = arg;
		return 0;
	case OPT_DEV:
		o->dev = arg;
		return 0;
	case OPT_PID:
		if (parse_number(arg, 0, 4294967295.0, &v))
			return usage_error(prog, "--pid %s: not a pid", arg);
		o->pid = (int64_t)v;
		return 0;
	case OPT_COMM:
		o->comm = arg;
		return 0;
	case OPT_FROM:
	case OPT_TO:
		if (st_parse_time(arg, 0, &u))
			return usage_error(prog, opt == OPT_FROM ? "--from %s: not a time (2, 1.5s, 200ms, @NS)" :
					  "--to %s: not a time (2, 1.5s, 200ms, @NS)", arg);
		*(opt == OPT_FROM ? &o->from : &o->to) = arg;
		return 0;
	case OPT_EXACT:
		if (parse_number(arg, 1, 1e9, &v))
			return usage_error(prog, "--exact-limit %s: not a count in [1, 10^9]", arg);
		o->exact_limit = (size_t)v;
		return 0;
	case OPT_STALE:
		if (st_parse_duration(arg, &o->stale) || !o->stale)
			return usage_error(prog, "--stale %s: not a positive duration", arg);
		return 0;
	case OPT_THREADS: {
		uint64_t n;

		if (parse_count(arg, 1, 1024, &n))
			return usage_error(prog, "--threads %s: not a count in [1, 1024]", arg);
		o->threads = (unsigned)n;
		return 0;
	}
	case OPT_CONFIG:	/* an_config_apply() read it first */
		return 0;
	case OPT_HEATMAP_ROWS:
		if (parse_number(arg, 1, AN_SERIES_MAX_BINS, &v))
			return usage_error(prog, "--heatmap-rows %s: not a count in [1, 20000]", arg);
		o->heatmap_rows = (unsigned)v;
		return 0;
	case OPT_SIZES:
		o->dist |= AN_DIST_SIZE;
		return 0;
	case OPT_SEEK:
		o->dist |= AN_DIST_SEEK;
		return 0;
	case OPT_HIST:
		o->dist |= AN_DIST_HIST;
		return 0;
	case OPT_DEPTH:
		o->dist |= AN_DIST_DEPTH;
		return 0;
	case OPT_TOP_BY:
		return parse_top_by(o, arg, prog);
	case OPT_HTML:
		o->html = arg;
		return 0;
	case OPT_FOLLOW:
		o->follow = 1;
		return 0;
	case OPT_METRICS:
		o->metrics = arg;
		return 0;
	case OPT_WHY:
		o->why = 1;
		return 0;
	case OPT_COLUMNS:
		o->columns = arg;
		return 0;
	case OPT_WIDE:
		o->cols.wide = 1;
		return 0;
	case AN_OPT_THRESHOLD:
		if (parse_number(arg, 0, 1e6, &v))
			return usage_error(prog, "--threshold %s: not a percentage", arg);
		o->threshold = v;
		return 0;
	default:
		return 2;
	}
}

int an_diff_accepts(int opt)
{
	switch (opt) {
	case OPT_QUANTILE: case OPT_STAGE: case OPT_CSV: case OPT_DEV: case OPT_PID:
	case OPT_COMM: case OPT_FROM: case OPT_TO: case OPT_EXACT: case OPT_STALE: case OPT_THREADS:
	case OPT_GNUPLOT: case OPT_FORCE: case OPT_SPAN: case OPT_CONFIG: case AN_OPT_THRESHOLD:
	case 'h': case 'V':
		return 1;
	}
	return 0;
}

int an_parse_args(int argc, char **argv, struct an_opts *o, const char *name, const char *usage,
		  int (*accepts)(int opt))
{
	char prog[32], msg[96];
	int opt, idx = 0, ret;

	snprintf(prog, sizeof(prog), "st-analyze%s%s", name ? " " : "", name ? name : "");
	optind = 1;
	opterr = 0;	/* one message of ours instead of getopt's */
	while ((opt = getopt_long(argc, argv, "h", an_long_opts(), &idx)) != -1) {
		if (opt == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		if (opt == 'V') {
			an_print_version();
			return 0;
		}
		if (opt == '?')
			return usage_error(prog, "%s: unknown option or missing argument",
					      argv[optind - 1]);
		if (!accepts(opt)) {
			snprintf(msg, sizeof(msg), "--%s: not an option of %s", an_long_opts()[idx].name,
				 name ? name : prog);
			return usage_error(prog, "%s", msg);
		}
		if ((ret = an_parse_option(o, opt, optarg, prog)))
			return ret;
	}
	return -1;
}

void an_print_version(void)
{
	printf("st-analyze " ST_VERSION " (format %d.%d)\n", ST_FORMAT_MAJOR, ST_FORMAT_MINOR);
}

int an_report_accepts(int opt)
{
	return opt != AN_OPT_THRESHOLD;
}

int an_merge_accepts(int opt)
{
	/* Filters and report choices were made when the summaries were saved. */
	return opt == OPT_CSV || opt == OPT_SAVE_SUMMARY || opt == OPT_FORCE || opt == OPT_WIDE ||
	       opt == 'h' || opt == 'V';
}

void an_opts_init(struct an_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->stage = AN_ST_TOTAL;
	o->top = 20;
	o->pid = -1;
	o->exact_limit = 10000;
	o->threshold = 10;
	o->stale = 60000000000ull;
	o->top_by = -1;
}

int an_opts_resolve(struct an_opts *o, const char *prog)
{
	int stage = o->stage_name ? an_stage_by_name(&o->spans, o->stage_name) : AN_ST_TOTAL;
	char err[320];

	if (stage < 0)
		return usage_error(prog, "--stage %s: unknown stage or span", o->stage_name);
	o->stage = (enum an_stage)stage;
	if (o->columns && an_cols_parse(&o->cols, o->columns, &o->spans, err, sizeof(err)))
		return usage_error(prog, "%s", err);
	return 0;
}

const struct option *an_long_opts(void)
{
	return long_opts;
}

int an_open(struct an_run *r, const struct an_opts *o, char *const *files, int nfiles, const char *prog)
{
	char err[512];

	if (an_run_open(r, files, nfiles, &o->spans, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		an_run_close(r);
		return EXIT_FAIL;
	}
	r->stale_ns = o->stale;
	r->threads = o->threads;
	r->stage = o->stage;
	r->filter.pid = o->pid;
	r->filter.comm = o->comm;
	if (o->from)
		st_parse_time(o->from, r->info.start_ts, &r->filter.from);
	if (o->to)
		st_parse_time(o->to, r->info.start_ts, &r->filter.to);
	if (o->from && o->to && r->filter.from > r->filter.to) {
		an_run_close(r);
		return usage_error(prog, "--from %s is after --to", o->from);
	}
	if (o->dev && an_run_set_dev(r, o->dev)) {
		fprintf(stderr, "%s: --dev %s: no such device in the trace's metadata\n", prog, o->dev);
		an_run_close(r);
		return EXIT_FAIL;
	}
	return 0;
}

int an_pass(struct an_run *r, unsigned want, const char *prog)
{
	char err[512];

	if (an_run_pass(r, want, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return EXIT_FAIL;
	}
	if (r->stats.failed || r->series.failed || r->dist.failed) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return EXIT_FAIL;
	}
	return 0;
}

uint64_t an_auto_interval(const struct an_run *r, uint64_t interval)
{
	/* 100 intervals, the last one ending exactly with the trace. */
	return interval ? interval : an_run_duration(r) / 100 + 1;
}

