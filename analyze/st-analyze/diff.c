/* SPDX-License-Identifier: MIT */
/*
 * st-analyze diff BASE NEW: per op and stage, quantiles side by side with
 * their change, and a 95 % confidence interval per quantile from the
 * distribution-free order-statistic bound (ranks n*q -/+ 1.96*sqrt(n*q*(1-q))).
 * A change counts as a regression when it exceeds --threshold and the two
 * intervals do not overlap, so noise between runs does not fail a CI gate.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/st-analyze/analyze.h"
#include "analyze/lib/summary.h"
#include "common/csv.h"
#include "common/input.h"
#include "common/text.h"
#include "common/usage.h"

#define PROG "st-analyze diff"

static const char diff_usage[] =
"usage: st-analyze diff BASE NEW [options]\n"
"\n"
"BASE and NEW are traces, or summaries (st-analyze --save-summary; their groups\n"
"as saved, so save with --by op to compare like traces; quantiles from their\n"
"sketches). Compares two traces per op and stage: count, p50, p90, p99 and the chosen\n"
"quantile, base -> new, change in percent, and for the chosen quantile a 95%\n"
"confidence interval of each side (order statistics: ranks n*q -/+\n"
"1.96*sqrt(n*q*(1-q))). The gate: the chosen quantile of the chosen stage\n"
"regressed when it grew by more than the threshold AND the intervals do not\n"
"overlap (a difference noise cannot explain). Fewer than 5 samples above the\n"
"quantile (n*(1-q) < 5) are never significant.\n"
"\n"
"  --stage S          stage of the gate (default total; see st-analyze --help)\n"
"  --quantile Q       percentile of the gate, 0-100 (default 99)\n"
"  --threshold PCT    regression threshold in percent (default 10)\n"
"  --csv              CSV output\n"
"  --gnuplot DIR      also plot, per op, both traces' latency CDFs of every\n"
"                     stage overlaid (log x: diff_cdf_OP) and p50, p90, p99 and\n"
"                     the chosen quantile of every stage with their 95%\n"
"                     confidence intervals (diff_quantiles_OP), as .dat, .gp,\n"
"                     PNG and SVG\n"
"  --force            DIR may be a symbolic link (followed)\n"
"  --dev, --pid, --comm, --from, --to, --exact-limit, --stale, --span, --config\n"
"                     as st-analyze\n"
"  -h, --help, --version\n"
"\n"
"Exit: 0 no regression, 1 the chosen quantile regressed past the threshold,\n"
"2 usage error or unreadable input.\n";

struct side {
	struct an_run run;
	int open;
};

static double change_pct(uint64_t base, uint64_t now)
{
	return base ? 100.0 * ((double)now - (double)base) / (double)base : 0.0;
}

/* Verdict of one quantile; 1 when it is a significant regression past threshold. */
static const char *verdict(const struct an_ci *b, const struct an_ci *n, double threshold, int *regressed)
{
	double ch = change_pct(b->value, n->value);

	*regressed = 0;
	if (!b->enough || !n->enough)
		return "too few samples";
	if (n->lo > b->hi && ch > threshold) {
		*regressed = 1;
		return "REGRESSED";
	}
	if (n->hi < b->lo && ch < -threshold)
		return "improved";
	if (n->lo > b->hi || n->hi < b->lo)
		return "changed, within threshold";
	return "no significant change";
}

static struct an_group *find_group(struct an_stats *s, const char *label)
{
	uint32_t g;

	for (g = 0; g < s->ngroups; g++)
		if (!strcmp(s->groups[g].label, label))
			return &s->groups[g];
	return NULL;
}

static const double shown_q[] = { 0.5, 0.9, 0.99 };

/* Rows of one op and stage; returns 1 if its gate quantile regressed. */
static int compare_stage(const char *op, int stage, struct an_qest *b, struct an_qest *n,
			 const struct an_opts *o, FILE *out)
{
	double q = o->quantile / 100;
	struct an_ci cb = an_quantile_ci(b, q), cn = an_quantile_ci(n, q);
	int gate = stage == (int)o->stage, regressed;
	const char *v = verdict(&cb, &cn, o->threshold, &regressed);
	unsigned i;

	if (o->csv) {
		for (i = 0; i < sizeof(shown_q) / sizeof(shown_q[0]); i++) {
			csv_field(out, op);
			fprintf(out, ",%s,%g,%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.2f,,,,,\n",
				an_stage_name(&o->spans, stage), shown_q[i] * 100, b->n, n->n,
				an_us(an_qest_quantile(b, shown_q[i])), an_us(an_qest_quantile(n, shown_q[i])),
				change_pct(an_qest_quantile(b, shown_q[i]), an_qest_quantile(n, shown_q[i])));
		}
		csv_field(out, op);
		fprintf(out, ",%s,%g,%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.2f,%.3f,%.3f,%.3f,%.3f,%s%s\n",
			an_stage_name(&o->spans, stage), o->quantile, b->n, n->n, an_us(cb.value),
			an_us(cn.value), change_pct(cb.value, cn.value), an_us(cb.lo), an_us(cb.hi),
			an_us(cn.lo), an_us(cn.hi), v, gate ? " (gate)" : "");
		return gate && regressed;
	}
	fprintf(out, "  %-6s n %" PRIu64 " -> %" PRIu64 ":", an_stage_name(&o->spans, stage), b->n,
		n->n);
	for (i = 0; i < sizeof(shown_q) / sizeof(shown_q[0]); i++) {
		uint64_t x = an_qest_quantile(b, shown_q[i]), y = an_qest_quantile(n, shown_q[i]);

		fprintf(out, "  p%g %.1f -> %.1f (%+.1f%%)", shown_q[i] * 100, an_us(x), an_us(y),
			change_pct(x, y));
	}
	fprintf(out, "\n         p%g %.1f -> %.1f us (%+.1f%%), 95%% CI [%.1f, %.1f] -> [%.1f, %.1f]: %s%s\n",
		o->quantile, an_us(cb.value), an_us(cn.value), change_pct(cb.value, cn.value),
		an_us(cb.lo), an_us(cb.hi), an_us(cn.lo), an_us(cn.hi), v, gate ? " (gate)" : "");
	return gate && regressed;
}

static int compare(struct an_stats *base, struct an_stats *now, const struct an_opts *o, FILE *out)
{
	char shown[TEXT_SHOWN_MAX];
	int regressions = 0, k;
	uint32_t g;

	if (o->csv)
		fprintf(out, "op,stage,quantile,n_base,n_new,base_us,new_us,change_pct,base_ci_lo_us,"
			"base_ci_hi_us,new_ci_lo_us,new_ci_hi_us,verdict\n");
	for (g = 0; g < base->ngroups; g++) {
		struct an_group *b = &base->groups[g], *n = find_group(now, b->label);

		if (!n) {
			if (!o->csv)
				fprintf(out, "\n%s: only in BASE (%" PRIu64 " I/Os)\n",
					text_shown(b->label, shown, sizeof(shown)), b->count);
			continue;
		}
		if (!o->csv)
			fprintf(out, "\n%s: %" PRIu64 " -> %" PRIu64 " I/Os\n",
				text_shown(b->label, shown, sizeof(shown)), b->count, n->count);
		for (k = 0; k < AN_ST_COUNT; k++)
			if (b->st[k].n && n->st[k].n)
				regressions += compare_stage(b->label, k, &b->st[k], &n->st[k], o, out);
	}
	for (g = 0; g < now->ngroups; g++)
		if (!o->csv && !find_group(base, now->groups[g].label))
			fprintf(out, "\n%s: only in NEW (%" PRIu64 " I/Os)\n",
				text_shown(now->groups[g].label, shown, sizeof(shown)), now->groups[g].count);
	return regressions;
}

/* A summary file as one side: its groups as saved. */
static int summary_side(struct side *s, const struct an_opts *o, char *path)
{
	char err[512];

	if (o->dev || o->comm || o->pid >= 0 || o->from || o->to)
		return usage_error(PROG, "%s: a summary is compared as saved: no --dev, --pid, "
				      "--comm, --from or --to", path);
	memset(&s->run, 0, sizeof(s->run));
	s->run.spans = o->spans;
	s->run.stats.exact_limit = o->exact_limit;
	s->open = 1;
	if (an_summary_load(&s->run, path, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", PROG, err);
		return 2;
	}
	return 0;
}

/* A trace as one side: grouped by op. */
static int trace_side(struct side *s, const struct an_opts *o, char *path)
{
	int ret = an_open(&s->run, o, &path, 1, PROG);

	if (ret)
		return ret;
	s->open = 1;
	an_stats_init(&s->run.stats, AN_BY_OP, o->exact_limit, NULL);
	return an_pass(&s->run, AN_WANT_STATS, PROG);
}

static int analyze_side(struct side *s, const struct an_opts *o, char *path, FILE *info, const char *name)
{
	int summary = an_summary_is(path);
	int ret = summary ? summary_side(s, o, path) : trace_side(s, o, path);

	if (ret)
		return ret;
	an_stats_sort(&s->run.stats);
	fprintf(info, "%s: %s%s: ", name, path, summary ? " (summary)" : "");
	an_run_print_header(&s->run, info);
	return 0;
}

int an_diff_main(int argc, char **argv)
{
	struct side sides[2] = { { .open = 0 }, { .open = 0 } };
	struct an_opts o;
	FILE *info;
	int ret, i, regressions;

	an_opts_init(&o);
	o.quantile = 99;
	if ((ret = an_config_apply(&o, argc, argv, PROG)))
		return ret;
	if ((ret = an_parse_args(argc, argv, &o, "diff", diff_usage, an_diff_accepts)) >= 0)
		return ret;
	if (argc - optind != 2)
		return usage_error(PROG, "%s", "needs exactly two files, BASE and NEW");
	if ((ret = an_opts_resolve(&o, PROG)))
		return ret;
	if (o.quantile <= 0 || o.quantile >= 100)
		return usage_error(PROG, "%s", "--quantile must be above 0 and below 100");
	if ((ret = input_files(argv + optind, 2, PROG)))
		return ret;
	info = o.csv ? stderr : stdout;
	for (i = 0; i < 2 && !ret; i++)
		ret = analyze_side(&sides[i], &o, argv[optind + i], info, i ? "new" : "base");
	if (!ret) {
		fprintf(info, "gate: %s p%g of every op, regression when it grows by more than %g%% "
			"and the 95%% confidence intervals do not overlap\n", an_stage_name(&o.spans, o.stage),
			o.quantile, o.threshold);
		regressions = compare(&sides[0].run.stats, &sides[1].run.stats, &o, stdout);
		if (o.gnuplot_dir && (ret = an_plot_diff(&sides[0].run.stats, &sides[1].run.stats, &o, info)))
			regressions = 0;
		if (!ret) {
			fprintf(info, "\n%s\n", regressions ? "result: REGRESSION" : "result: no regression");
			ret = regressions ? 1 : 0;
		}
	}
	for (i = 0; i < 2; i++) {
		if (!sides[i].open)
			continue;
		an_stats_free(&sides[i].run.stats);
		an_run_close(&sides[i].run);
	}
	return ret;
}
