/* SPDX-License-Identifier: MIT */
/*
 * --html FILE: every report of a trace in one page to attach to a bug: the
 * trace's identity, the summary, plots as inline SVG, sizes, seeks,
 * latency histograms, queue depth, the heaviest processes and files, and
 * the slowest I/Os.
 *
 * Each table is the report's own --csv output turned into rows, so the page
 * holds the numbers the CSV does. The page loads nothing: no script, style,
 * font or image comes from elsewhere, and its Content-Security-Policy
 * forbids any request. The one inline script only sorts tables when a
 * heading is clicked; without scripts they are plain tables.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/st-analyze/analyze.h"

#define PROG "st-analyze"

static const char page_head[] =
"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
"style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
"base-uri 'none'; form-action 'none'\">\n"
"<meta name=\"viewport\" content=\"width=device-width\">\n<title>sttrace report</title>\n<style>\n"
"body{font-family:sans-serif;margin:1em 2em;color:#222}\n"
"table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:85%}\n"
"th,td{border:1px solid #bbb;padding:2px 6px;text-align:right}\n"
"th{background:#eee;cursor:pointer}td:first-child{text-align:left}\n"
"pre{background:#f6f6f6;padding:.5em;overflow-x:auto}\n"
"svg{margin:.3em 1em .3em 0;background:#fcfcfc;border:1px solid #ddd}\n"
"nav a{margin-right:1em}\n</style>\n</head>\n<body>\n";

/* Sorting by a clicked heading: numbers as numbers, the rest as text. */
static const char page_script[] =
"<script>\n"
"document.querySelectorAll('table.sortable th').forEach(function(th){\n"
" th.addEventListener('click',function(){\n"
"  var t=th.closest('table'),b=t.tBodies[0],i=th.cellIndex,d=th.dataset.dir=th.dataset.dir=='a'?'d':'a';\n"
"  var rows=Array.prototype.slice.call(b.rows);\n"
"  rows.sort(function(x,y){var p=x.cells[i].textContent,q=y.cells[i].textContent;\n"
"   var a=parseFloat(p),c=parseFloat(q),r=isNaN(a)||isNaN(c)?p.localeCompare(q):a-c;\n"
"   return d=='a'?r:-r;});\n"
"  rows.forEach(function(r){b.appendChild(r);});\n"
" });\n"
"});\n</script>\n";

struct page {
	FILE *out;
	char *buf;		/* a report's CSV, captured */
	size_t len;
};

static void put_escaped(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		switch (s[i]) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(s[i], out);
		}
	}
}

static void put_text(FILE *out, const char *s)
{
	put_escaped(out, s, strlen(s));
}

/* A stream that captures a report; NULL when out of memory. */
static FILE *capture(struct page *p)
{
	free(p->buf);
	p->buf = NULL;
	p->len = 0;
	return open_memstream(&p->buf, &p->len);
}

/*
 * One CSV row (common/csv.h: a field is quoted when it holds a comma or a
 * quote, quotes doubled) as table cells of `tag`; returns the next row.
 */
static const char *put_row(FILE *out, const char *row, const char *tag)
{
	const char *s = row;

	fputs("<tr>", out);
	for (;;) {
		fprintf(out, "<%s>", tag);
		if (*s == '"') {
			for (s++; *s && *s != '\n'; s++) {
				if (*s == '"' && s[1] == '"')
					s++;
				else if (*s == '"') {
					s++;
					break;
				}
				put_escaped(out, s, 1);
			}
		} else {
			size_t n = strcspn(s, ",\n");

			put_escaped(out, s, n);
			s += n;
		}
		fprintf(out, "</%s>", tag);
		if (*s != ',')
			break;
		s++;
	}
	fputs("</tr>\n", out);
	return *s == '\n' ? s + 1 : s;
}

/* The captured CSV as table `id`: its first row the headings. */
static void put_table(struct page *p, FILE *m, const char *id, const char *title)
{
	const char *s;

	fclose(m);
	fprintf(p->out, "<h3>%s</h3>\n", title);
	if (!p->buf || !p->len) {
		fputs("<p>none in this trace</p>\n", p->out);
		return;
	}
	fprintf(p->out, "<table class=\"sortable\" id=\"%s\">\n<thead>", id);
	s = put_row(p->out, p->buf, "th");
	fputs("</thead>\n<tbody>\n", p->out);
	while (*s)
		s = put_row(p->out, s, "td");
	fputs("</tbody>\n</table>\n", p->out);
}

/* The captured text as a <pre> block. */
static void put_pre(struct page *p, FILE *m)
{
	fclose(m);
	fputs("<pre>", p->out);
	if (p->buf)
		put_text(p->out, p->buf);
	fputs("</pre>\n", p->out);
}

/* ---- inline SVG ------------------------------------------------------------ */

/* Charts of at most this many groups per kind (--by file may make thousands): the rest are in the tables. */
#define HTML_CHARTS 16

#define SVG_W 560
#define SVG_H 220
#define SVG_L 60	/* room for the y axis labels */
#define SVG_B 40	/* and the x axis labels */

static double nice_max(double v)
{
	double m = 1;

	while (m < v)
		m *= m * 2 > v ? 2 : 10;
	return v > 0 ? m : 1;
}

static void svg_head(FILE *out, const char *title, double ymax, const char *ylabel)
{
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-size=\"10\" role=\"img\"><title>", SVG_W, SVG_H);
	put_text(out, title);
	fprintf(out, "</title><text x=\"%d\" y=\"14\" font-size=\"12\">", SVG_L);
	put_text(out, title);
	fprintf(out, "</text><text x=\"4\" y=\"30\">");
	put_text(out, ylabel);
	fprintf(out, "</text>");
	for (int i = 0; i <= 4; i++) {
		double y = SVG_H - SVG_B - (SVG_H - SVG_B - 40) * i / 4.0;

		fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>", SVG_L, SVG_W - 10,
			y, y, SVG_L - 4, y + 3, ymax * i / 4);
	}
}

/* Bars of values v (labels under them). */
static void svg_bars(FILE *out, const char *title, const char *ylabel, char labels[][24],
		     const double *v, int n)
{
	double max = 0, w;
	int every = n > 16 ? (n + 15) / 16 : 1;

	for (int i = 0; i < n; i++)
		max = v[i] > max ? v[i] : max;
	max = nice_max(max);
	svg_head(out, title, max, ylabel);
	w = (SVG_W - SVG_L - 10) / (double)(n ? n : 1);
	for (int i = 0; i < n; i++) {
		double h = (SVG_H - SVG_B - 40) * v[i] / max, x = SVG_L + i * w;

		fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#4a7bb7\">"
			"<title>%s: %.6g</title></rect>", x + 1, SVG_H - SVG_B - h, w > 3 ? w - 2 : w, h,
			labels[i], v[i]);
		if (i % every == 0)
			fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
				x + w / 2, SVG_H - SVG_B + 12, labels[i]);
	}
	fputs("</svg>\n", out);
}

/* A line over x in [0, xmax] seconds. */
static void svg_line(FILE *out, const char *title, const char *ylabel, const double *x,
		     const double *y, int n, double xmax)
{
	double max = 0;

	for (int i = 0; i < n; i++)
		max = y[i] > max ? y[i] : max;
	max = nice_max(max);
	svg_head(out, title, max, ylabel);
	fputs("<polyline fill=\"none\" stroke=\"#b74a4a\" stroke-width=\"1.5\" points=\"", out);
	for (int i = 0; i < n; i++)
		fprintf(out, "%.1f,%.1f ", SVG_L + (SVG_W - SVG_L - 10) * x[i] / (xmax > 0 ? xmax : 1),
			SVG_H - SVG_B - (SVG_H - SVG_B - 40) * y[i] / max);
	fprintf(out, "\"/><text x=\"%d\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\" "
		"text-anchor=\"end\">%.3f s</text></svg>\n", SVG_L, SVG_H - SVG_B + 12, SVG_W - 10,
		SVG_H - SVG_B + 12, xmax);
}

/* "4K", "1M": a slot's lower end, short. */
static void short_num(char *buf, size_t cap, uint64_t v)
{
	static const char units[] = " KMGTPE";
	int u = 0;

	while (v >= 1024 && !(v % 1024) && u < 6) {
		v /= 1024;
		u++;
	}
	snprintf(buf, cap, "%" PRIu64 "%.*s", v, u ? 1 : 0, &units[u]);
}

/* A log2 histogram (dist.h) as bars from its first used slot to its last. */
static void svg_log2(FILE *out, const char *title, const char *unit, const struct an_log2 *h)
{
	char labels[AN_LOG2_SLOTS][24];
	double v[AN_LOG2_SLOTS];
	int first = -1, last = -1, n = 0;

	for (int k = 0; k < AN_LOG2_SLOTS; k++)
		if (h->slot[k]) {
			first = first < 0 ? k : first;
			last = k;
		}
	for (int k = first; first >= 0 && k <= last; k++) {
		short_num(labels[n], sizeof(labels[n]), k ? (uint64_t)1 << k : 0);
		v[n++] = (double)h->slot[k];
	}
	if (n)
		svg_bars(out, title, unit, labels, v, n);
}

static void svg_series(FILE *out, struct an_series *s, const struct an_span_defs *spans)
{
	size_t n = s->nbins;
	double *x = calloc(n + 1, sizeof(*x)), *iops = calloc(n + 1, sizeof(*x));
	double *p99 = calloc(n + 1, sizeof(*x));
	char title[96];

	if (x && iops && p99) {
		for (size_t i = 0; i < n; i++) {
			x[i] = an_series_time(s, i);
			iops[i] = s->bins[i].ios / (s->step / 1e9);
			p99[i] = s->bins[i].lat.counts ? an_us(an_sketch_quantile(&s->bins[i].lat, 0.99)) : 0;
		}
		svg_line(out, "I/Os per second", "IOPS", x, iops, (int)n, (s->t1 - s->t0) / 1e9);
		snprintf(title, sizeof(title), "%s p99 per interval", an_stage_name(spans, s->stage));
		svg_line(out, title, "us", x, p99, (int)n, (s->t1 - s->t0) / 1e9);
	}
	free(x);
	free(iops);
	free(p99);
}

static void svg_depth(FILE *out, const struct an_dist *d, const struct an_origin *origins)
{
	for (size_t i = 0; i < d->ndepths; i++) {
		const struct an_dist_depth *dp = &d->depths[i];
		uint32_t n = dp->max + 1 < AN_LOG2_SLOTS ? dp->max + 1 : AN_LOG2_SLOTS;
		char labels[AN_LOG2_SLOTS][24], dev[96], title[160];
		double v[AN_LOG2_SLOTS];

		/* Depths past the chart's width are in the table. */
		for (uint32_t k = 0; k < n; k++) {
			snprintf(labels[k], sizeof(labels[k]), "%u", k);
			v[k] = 100.0 * dp->ns[k] / (double)(d->t1 - d->t0);
		}
		snprintf(title, sizeof(title), "%s: time at each depth (mean %.2f)",
			 an_names_dev(origins[dp->recording].names, dp->dev, dev, sizeof(dev)),
			 an_dist_depth_mean(d, dp));
		svg_bars(out, title, "% of time", labels, v, (int)n);
	}
}

/* ---- the page -------------------------------------------------------------- */

static void put_identity(struct page *p, struct an_run *r)
{
	char dev[96];

	fputs("<h2 id=\"identity\">Trace</h2>\n<table id=\"identity-table\">\n", p->out);
	for (unsigned a = 0; a < r->nrecs; a++) {
		const char *kernel = an_input_meta(r->recs[a].in, "kernel.release");
		const char *cpus = an_input_meta(r->recs[a].in, "cpu.count");

		fputs("<tr><th>host</th><td>", p->out);
		put_text(p->out, r->recs[a].host);
		fputs("</td></tr>\n<tr><th>kernel</th><td>", p->out);
		put_text(p->out, kernel ? kernel : "?");
		fputs("</td></tr>\n<tr><th>CPUs</th><td>", p->out);
		put_text(p->out, cpus ? cpus : "?");
		fputs("</td></tr>\n", p->out);
	}
	fputs("<tr><th>devices</th><td>", p->out);
	for (size_t i = 0; i < r->dist.ndepths; i++) {
		const struct an_dist_depth *dp = &r->dist.depths[i];

		fputs(i ? ", " : "", p->out);
		put_text(p->out, an_names_dev(r->origins[dp->recording].names, dp->dev, dev, sizeof(dev)));
	}
	fprintf(p->out, "</td></tr>\n<tr><th>span</th><td>%.6f s</td></tr>\n"
		"<tr><th>files</th><td>%u</td></tr>\n<tr><th>events</th><td>%" PRIu64 "</td></tr>\n"
		"<tr><th>lost events</th><td>%" PRIu64 "</td></tr>\n</table>\n",
		an_run_duration(r) / 1e9, r->info.files, r->info.events, r->info.lost_events);
}

/* Summary, plots and distributions: the first pass's reports. */
static void put_first_pass(struct page *p, struct an_run *r, const struct an_opts *o)
{
	FILE *m;
	char title[200];

	put_identity(p, r);
	if ((m = capture(p))) {
		an_run_print_header(r, m);
		put_pre(p, m);
	}
	fputs("<h2 id=\"summary\">Summary</h2>\n", p->out);
	if ((m = capture(p))) {
		an_stats_print(&r->stats, &r->spans, NULL, m, 1, an_run_duration(r));
		put_table(p, m, "summary-table", "Stage latencies per group (us)");
	}
	fputs("<h2 id=\"plots\">Plots</h2>\n", p->out);
	svg_series(p->out, &r->series, &r->spans);
	for (uint32_t g = 0; g < r->dist.ngroups && g < HTML_CHARTS; g++) {
		const struct an_dist_group *gr = &r->dist.groups[g];

		snprintf(title, sizeof(title), "%s: %s latency (log2 us)", gr->label,
			 an_stage_name(&r->spans, o->stage));
		svg_log2(p->out, title, "I/Os", &gr->lat);
	}
	fputs("<h2 id=\"sizes\">Sizes</h2>\n", p->out);
	for (uint32_t g = 0; g < r->dist.ngroups && g < HTML_CHARTS; g++) {
		const struct an_dist_group *gr = &r->dist.groups[g];

		snprintf(title, sizeof(title), "%s: I/O sizes (log2 bytes)", gr->label);
		svg_log2(p->out, title, "I/Os", &gr->size);
	}
	if ((m = capture(p))) {
		an_dist_print_sizes(&r->dist, m, 1);
		put_table(p, m, "sizes-table", "Sizes (--sizes --csv)");
	}
	fputs("<h2 id=\"seeks\">Seeks</h2>\n", p->out);
	if ((m = capture(p))) {
		an_dist_print_seeks(&r->dist, r->origins, m, 1);
		put_table(p, m, "seek-table", "Seek distances (--seek --csv)");
	}
	fputs("<h2 id=\"hist\">Latency histograms</h2>\n", p->out);
	if ((m = capture(p))) {
		an_dist_print_hist(&r->dist, &r->spans, m, 1);
		put_table(p, m, "hist-table", "Log2 histograms (--hist --csv)");
	}
	fputs("<h2 id=\"depth\">Queue depth</h2>\n", p->out);
	svg_depth(p->out, &r->dist, r->origins);
	if ((m = capture(p))) {
		an_dist_print_depth(&r->dist, r->origins, m, 1);
		put_table(p, m, "depth-table", "Requests in flight, time-weighted (--depth --csv)");
	}
}

/* --top-by KEY for the page: a pass grouping by KEY. 0 or 2. */
static int put_top(struct page *p, struct an_run *r, const struct an_opts *o, enum an_by by)
{
	char title[160], id[32];
	FILE *m;
	int ret;

	an_stats_init(&r->stats, by, o->exact_limit, NULL);
	if (!(ret = an_pass(r, AN_WANT_STATS, PROG))) {
		an_stats_keep_top(&r->stats, o->top_rank, o->stage, o->top);
		snprintf(title, sizeof(title), "Top %zu %s by %s (--top-by %s:%s --csv)", o->top,
			 an_by_name(by), an_rank_name(o->top_rank), an_by_name(by), an_rank_name(o->top_rank));
		snprintf(id, sizeof(id), "top-%s-table", an_by_name(by));
		if ((m = capture(p))) {
			an_stats_print(&r->stats, &r->spans, NULL, m, 1, an_run_duration(r));
			put_table(p, m, id, title);
		}
	}
	an_stats_free(&r->stats);
	return ret;
}

/* The slowest I/Os of --stage at or above --quantile (99 by default). */
static int put_tail(struct page *p, struct an_run *r, const struct an_opts *o)
{
	double q = o->quantile > 0 ? o->quantile : 99;
	char err[512], title[160];
	FILE *m;
	int ret = 0;

	if (an_run_quantile(r, q / 100, o->exact_limit, o->top, AN_ONE_PASS_MAX, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", PROG, err);
		ret = 2;
	} else {
		snprintf(title, sizeof(title), "The %zu slowest I/Os at or above %s p%g = %.3f us "
			 "(--quantile %g --csv; click a heading to sort)", r->top.n, an_stage_name(&r->spans, o->stage),
			 q, an_us(r->top.threshold), q);
		fputs("<h2 id=\"tail\">Tail</h2>\n", p->out);
		if ((m = capture(p))) {
			an_top_print(&r->top, &r->spans, r->origins, r->nrecs > 1, NULL, m, 1, r->info.first_ts);
			put_table(p, m, "tail-table", title);
		}
	}
	an_top_free(&r->top);
	an_qest_free(&r->stage_samples);
	return ret;
}

static FILE *open_page(const struct an_opts *o)
{
	char why[160];
	int fd = st_output_open(o->html, o->force ? ST_OUTPUT_FORCE : 0, why, sizeof(why));
	FILE *f;

	if (fd < 0) {
		fprintf(stderr, "%s: --html %s: %s\n", PROG, o->html, why);
		return NULL;
	}
	if (!(f = fdopen(fd, "w"))) {
		fprintf(stderr, "%s: --html %s: %s\n", PROG, o->html, strerror(errno));
		close(fd);
	}
	return f;
}

int an_html_report(struct an_run *r, const struct an_opts *o, FILE *info)
{
	struct page p = { 0 };
	uint64_t t0 = an_run_t0(r), dur = an_run_duration(r);
	int ret;

	if (!(p.out = open_page(o)))
		return 2;
	an_stats_init(&r->stats, o->by, o->exact_limit, NULL);
	an_dist_init(&r->dist, AN_DIST_SIZE | AN_DIST_SEEK | AN_DIST_HIST | AN_DIST_DEPTH, o->by,
		     o->stage, NULL);
	if (an_series_init(&r->series, t0, t0 + dur, an_auto_interval(r, o->interval), o->stage)) {
		fprintf(stderr, "%s: --interval: more than %d intervals (or out of memory)\n", PROG,
			AN_SERIES_MAX_BINS);
		ret = 2;
	} else if (!(ret = an_pass(r, AN_WANT_STATS | AN_WANT_SERIES | AN_WANT_DIST, PROG))) {
		if (an_dist_finish(&r->dist, t0, t0 + dur)) {
			fprintf(stderr, "%s: out of memory\n", PROG);
			ret = 2;
		}
	}
	if (!ret) {
		an_stats_sort(&r->stats);
		fputs(page_head, p.out);
		fputs("<h1>sttrace report</h1>\n<nav><a href=\"#identity\">trace</a><a href=\"#summary\">"
		      "summary</a><a href=\"#plots\">plots</a><a href=\"#sizes\">sizes</a><a href=\"#seeks\">"
		      "seeks</a><a href=\"#hist\">histograms</a><a href=\"#depth\">depth</a><a href=\"#top\">"
		      "top</a><a href=\"#tail\">tail</a></nav>\n", p.out);
		put_first_pass(&p, r, o);
	}
	an_series_free(&r->series);
	an_dist_free(&r->dist);
	an_stats_free(&r->stats);
	if (!ret) {
		fputs("<h2 id=\"top\">Top</h2>\n", p.out);
		ret = put_top(&p, r, o, AN_BY_COMM);
	}
	if (!ret)
		ret = put_top(&p, r, o, AN_BY_PID);
	if (!ret)
		ret = put_top(&p, r, o, AN_BY_FILE);
	if (!ret)
		ret = put_top(&p, r, o, AN_BY_CGROUP);
	if (!ret)
		ret = put_tail(&p, r, o);
	if (!ret)
		fprintf(p.out, "%s<p>st-analyze " ST_VERSION "</p>\n</body>\n</html>\n", page_script);
	free(p.buf);
	if (fclose(p.out) && !ret) {
		fprintf(stderr, "%s: --html %s: write failed: %s\n", PROG, o->html, strerror(errno));
		ret = 2;
	}
	if (!ret)
		fprintf(info, "html: %s\n", o->html);
	return ret;
}
