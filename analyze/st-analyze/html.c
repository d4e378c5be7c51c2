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
#include <math.h>
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
"body{font-family:sans-serif;margin:.5em 1em;color:#222;max-width:1380px}\n"
"h1{font-size:1.3em;margin:.2em 0}h2{font-size:1.1em;margin:.2em 0}\n"
".row{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start}\n"
"details{margin:.4em 0}details>summary{cursor:pointer;font-weight:bold;font-size:1.05em}\n"
"#glance{font-size:80%}#tail-table{font-size:72%}\n"
"table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:85%}\n"
"th,td{border:1px solid #bbb;padding:2px 6px;text-align:right}\n"
"th{background:#eee;cursor:pointer}td:first-child{text-align:left}\n"
"pre{background:#f6f6f6;padding:.3em;overflow-x:auto;font-size:75%;margin:.2em 0}\n"
"svg{margin:.2em 0;background:#fcfcfc;border:1px solid #ddd}\n"
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

/*
 * One cell of a CSV row (common/csv.h: quoted when it holds a comma or a
 * quote, quotes doubled) into buf; returns what follows it: past its comma,
 * or at the row's end, past its newline.
 */
static const char *csv_cell(const char *s, char *buf, size_t cap)
{
	size_t n = 0;

	if (*s == '"') {
		for (s++; *s && *s != '\n'; s++) {
			if (*s == '"' && s[1] == '"')
				s++;
			else if (*s == '"') {
				s++;
				break;
			}
			if (n + 1 < cap)
				buf[n++] = *s;
		}
	}
	for (; *s && *s != ',' && *s != '\n'; s++)
		if (n + 1 < cap)
			buf[n++] = *s;
	buf[n] = 0;
	return *s ? s + 1 : s;
}

/* A stream that captures a report; NULL when out of memory. */
static FILE *capture(struct page *p)
{
	free(p->buf);
	p->buf = NULL;
	p->len = 0;
	return open_memstream(&p->buf, &p->len);
}

/* One CSV row as table cells of `tag`, those of the columns in `shown` (bit k: column k); returns the next row. */
static const char *put_row(FILE *out, const char *row, const char *tag, uint64_t shown)
{
	const char *s = row;
	char cell[512];

	fputs("<tr>", out);
	for (unsigned k = 0; *s; k++) {
		int last;

		s = csv_cell(s, cell, sizeof(cell));
		last = s[-1] != ',';
		if (k >= 64 || shown & 1ull << k)
			fprintf(out, "<%s>", tag), put_text(out, cell), fprintf(out, "</%s>", tag);
		if (last)
			break;
	}
	fputs("</tr>\n", out);
	return s;
}

/* Of the CSV's first 64 columns, those with a value other than empty or 0 in a row. */
static uint64_t columns_with_data(const char *s)
{
	uint64_t data = 0;
	char cell[512];

	s += strcspn(s, "\n");
	s += *s == '\n';
	while (*s)
		for (unsigned k = 0; *s; k++) {
			char *end;

			s = csv_cell(s, cell, sizeof(cell));
			if (k < 64 && cell[0] && (strtod(cell, &end) != 0 || *end))
				data |= 1ull << k;
			if (s[-1] != ',')
				break;
		}
	return data;
}

/* The CSV captured last as table `id`: its first row the headings; compact: the columns with data only. */
static void put_captured(struct page *p, const char *id, const char *title, int compact)
{
	uint64_t shown = ~0ull;
	const char *s;

	fprintf(p->out, "<h3>%s</h3>\n", title);
	if (!p->buf || !p->len) {
		fputs("<p>none in this trace</p>\n", p->out);
		return;
	}
	if (compact)
		shown = columns_with_data(p->buf);
	fprintf(p->out, "<table class=\"sortable\" id=\"%s\">\n<thead>", id);
	s = put_row(p->out, p->buf, "th", shown);
	fputs("</thead>\n<tbody>\n", p->out);
	while (*s)
		s = put_row(p->out, s, "td", shown);
	fputs("</tbody>\n</table>\n", p->out);
}

/* The CSV captured in m as table `id` (put_captured). */
static void put_table(struct page *p, FILE *m, const char *id, const char *title, int compact)
{
	fclose(m);
	put_captured(p, id, title, compact);
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

/* ---- the pictures the page leads with --------------------------------------- */

#define PIC_W 660	/* a picture's size: two side by side within 1,400 px */
#define PIC_H 300
#define PIC_L 64	/* plot area: left, right, top, bottom margins */
#define PIC_R 78
#define PIC_T 24
#define PIC_B 34

/* One colour a curve (Tableau 10): never two curves alike. */
static const char *const curve_colour[] = { "#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1",
					    "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac" };
#define NCOLOURS (sizeof(curve_colour) / sizeof(curve_colour[0]))

/* f in [0, 1] on viridis: dark purple (few) to yellow (most). */
static void heat_colour(char *buf, size_t cap, double f)
{
	static const unsigned char stop[5][3] = { { 68, 1, 84 }, { 59, 82, 139 }, { 33, 145, 140 },
						  { 94, 201, 98 }, { 253, 231, 37 } };
	double x = (f < 0 ? 0 : f > 1 ? 1 : f) * 4;
	int i = x >= 4 ? 3 : (int)x;
	double t = x - i;

	snprintf(buf, cap, "#%02x%02x%02x", (int)(stop[i][0] + t * (stop[i + 1][0] - stop[i][0])),
		 (int)(stop[i][1] + t * (stop[i + 1][1] - stop[i][1])),
		 (int)(stop[i][2] + t * (stop[i + 1][2] - stop[i][2])));
}

static void pic_head(FILE *out, const char *id, const char *title)
{
	fprintf(out, "<svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-size=\"11\" role=\"img\"><title>", id, PIC_W, PIC_H);
	put_text(out, title);
	fprintf(out, "</title><text x=\"%d\" y=\"15\" font-size=\"13\" font-weight=\"bold\">", PIC_L);
	put_text(out, title);
	fputs("</text>", out);
}

/* The time axis under the plot area: 0, the middle and the end, in s. */
static void pic_time_axis(FILE *out, double secs)
{
	for (int i = 0; i <= 4; i++)
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.3g</text>",
			PIC_L + (PIC_W - PIC_L - PIC_R) * i / 4.0, PIC_H - PIC_B + 14, secs * i / 4);
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time (s)</text>",
		PIC_L + (PIC_W - PIC_L - PIC_R) / 2, PIC_H - 4);
}

/* A latency in ns as text: "850 ns", "12 us", "3.4 ms", "1.2 s". */
static void short_time(char *buf, size_t cap, double ns)
{
	if (ns < 1e3)
		snprintf(buf, cap, "%.3g ns", ns);
	else if (ns < 1e6)
		snprintf(buf, cap, "%.3g us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, cap, "%.3g ms", ns / 1e6);
	else
		snprintf(buf, cap, "%.3g s", ns / 1e9);
}

/*
 * The cells of a heat map: counts v[col * stride + row] of `cols` columns
 * w px wide from the plot area's left (the last cut at its right), row k
 * between the heights edge[k] (bottom) and edge[k + 1] (top); colour on a
 * log scale of the count up to max, an empty cell not drawn.
 */
static void heat_cells(FILE *out, const uint32_t *v, size_t cols, double w, size_t stride, unsigned rows,
		       const double *edge, uint32_t max)
{
	double lmax = log((double)max + 1);
	char c[16];

	for (size_t i = 0; i < cols; i++) {
		double x = PIC_L + i * w, cw = PIC_W - PIC_R - x < w ? PIC_W - PIC_R - x : w;

		for (unsigned k = 0; k < rows; k++) {
			if (!v[i * stride + k])
				continue;
			heat_colour(c, sizeof(c), log((double)v[i * stride + k] + 1) / lmax);
			fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>",
				x, edge[k + 1], cw + 0.3, edge[k] - edge[k + 1] + 0.3, c);
		}
	}
}

/* Under and beside a heat map: the time axis and the colour bar, 1 to max I/Os (log); the end of its svg. */
static void heat_tail(FILE *out, double secs, uint32_t max)
{
	char c[16];

	pic_time_axis(out, secs);
	for (int j = 0; j < 20; j++) {
		heat_colour(c, sizeof(c), j / 19.0);
		fprintf(out, "<rect x=\"%d\" y=\"%.1f\" width=\"12\" height=\"%.1f\" fill=\"%s\"/>",
			PIC_W - PIC_R + 14, PIC_H - PIC_B - (j + 1) * (PIC_H - PIC_T - PIC_B) / 20.0,
			(PIC_H - PIC_T - PIC_B) / 20.0 + 0.3, c);
	}
	fprintf(out, "<text x=\"%d\" y=\"%d\">%u</text><text x=\"%d\" y=\"%d\">1</text>"
		"<text x=\"%d\" y=\"%d\">I/Os (log)</text></svg>\n", PIC_W - PIC_R + 30, PIC_T + 8, max,
		PIC_W - PIC_R + 30, PIC_H - PIC_B, PIC_W - PIC_R + 2, PIC_T - 4);
}

/*
 * The latency heat map of s: time across, the log2 latency buckets up from
 * the first used to the last, colour on a log scale of the count.
 */
static void svg_heat(FILE *out, const struct an_series *s, const char *title)
{
	unsigned lo = AN_HEAT_LAT, hi = 0, rows;
	double edge[AN_HEAT_LAT + 1], h;
	uint32_t max = 0, *v;
	char label[32];

	for (size_t i = 0; i < s->nbins; i++)
		for (unsigned k = 0; k < AN_HEAT_LAT; k++)
			if (s->bins[i].lat_heat[k]) {
				lo = k < lo ? k : lo;
				hi = k > hi ? k : hi;
				max = s->bins[i].lat_heat[k] > max ? s->bins[i].lat_heat[k] : max;
			}
	rows = hi - lo + 1;
	if (!max || !(v = malloc(s->nbins * AN_HEAT_LAT * sizeof(*v))))
		return;
	for (size_t i = 0; i < s->nbins; i++)
		memcpy(v + i * AN_HEAT_LAT, s->bins[i].lat_heat, sizeof(s->bins[i].lat_heat));
	h = (PIC_H - PIC_T - PIC_B) / (double)rows;
	for (unsigned k = 0; k <= rows; k++)
		edge[k] = PIC_H - PIC_B - k * h;
	pic_head(out, "heat-latency", title);
	heat_cells(out, v + lo, s->nbins, (PIC_W - PIC_L - PIC_R) / (double)s->nbins, AN_HEAT_LAT, rows, edge,
		   max);
	free(v);
	/* the y axis: a bucket's lower end, every few rows */
	for (unsigned k = lo; k <= hi + 1; k += (hi - lo) / 6 + 1) {
		short_time(label, sizeof(label), k ? (double)(1ull << k) : 0);
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>", PIC_L - 4,
			edge[k - lo] + 4, label);
	}
	heat_tail(out, (s->t1 - s->t0) / 1e9, max);
}

/* A size in bytes as text: "512 B", "12 MiB", "1.5 GiB". */
static void short_bytes(char *buf, size_t cap, double b)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	int u = 0;

	while (b >= 1024 && u < 6) {
		b /= 1024;
		u++;
	}
	snprintf(buf, cap, "%.4g %s", b, units[u]);
}

/*
 * Device map m of s: time across, the device's sectors up from 0 to the
 * highest an I/O reached, each row the I/Os that began in its sectors. The
 * svg says which device (data-dev), the sectors its axis spans
 * (data-sectors) and the heights of sector 0 and of the axis' top
 * (data-y0, data-y1), so the cells can be read back as sectors.
 */
static void svg_devmap(FILE *out, const struct an_series *s, const struct an_posmap *m, const char *dev,
		       unsigned n)
{
	double top = (double)m->last + 1, edge[AN_HEAT_POS + 1];
	unsigned rows = (unsigned)(m->last >> m->shift) + 1;
	uint32_t max = 0;
	char title[256], id[32], label[32];

	for (size_t i = 0; i < s->pos_cols * AN_HEAT_POS; i++)
		max = m->heat[i] > max ? m->heat[i] : max;
	if (!max)
		return;
	for (unsigned k = 0; k <= rows; k++) {
		double sector = (double)((uint64_t)k << m->shift);

		edge[k] = PIC_H - PIC_B - (PIC_H - PIC_T - PIC_B) * (sector < top ? sector : top) / top;
	}
	snprintf(title, sizeof(title), "Position on %s over time (I/Os, log colour)", dev);
	snprintf(id, sizeof(id), "heat-position-%u", n);
	pic_head(out, id, title);
	fputs("<g class=\"cells\" data-dev=\"", out);
	put_text(out, dev);
	fprintf(out, "\" data-sectors=\"%.0f\" data-y0=\"%d\" data-y1=\"%d\">", top, PIC_H - PIC_B, PIC_T);
	heat_cells(out, m->heat, s->pos_cols, (PIC_W - PIC_L - PIC_R) * (double)s->pos_span / s->nbins,
		   AN_HEAT_POS, rows, edge, max);
	fputs("</g>", out);
	for (int t = 0; t <= 4; t++) {
		short_bytes(label, sizeof(label), top * 512 * t / 4);
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>", PIC_L - 4,
			PIC_H - PIC_B - (PIC_H - PIC_T - PIC_B) * t / 4.0 + 4, label);
	}
	heat_tail(out, (s->t1 - s->t0) / 1e9, max);
}

/* The tail CDF's legend entry i, at the bottom left (the curves fall to the right): colour i, the label escaped. */
static void pic_legend(FILE *out, int i, const char *label)
{
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"3\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">",
		PIC_L + 10, PIC_H - PIC_B - 14 - 14 * i, curve_colour[i % NCOLOURS], PIC_L + 28,
		PIC_H - PIC_B - 10 - 14 * i);
	put_text(out, label);
	fputs("</text>", out);
}

/* The axis' top for values up to v: 1, 2 or 5 times a power of 10. */
static double nice_top(double v)
{
	double m = pow(10, floor(log10(v > 0 ? v : 1)));

	return v <= m ? m : v <= 2 * m ? 2 * m : v <= 5 * m ? 5 * m : 10 * m;
}

/* Curve c of the rates: read IOPS, write IOPS, read MB/s, write MB/s of bin i. */
static double rate(const struct an_series *s, size_t i, int c)
{
	const struct an_bin *b = &s->bins[i];
	double secs = s->step / 1e9;

	return c == 0 ? b->reads / secs : c == 1 ? b->writes / secs :
	       (c == 2 ? b->read_bytes : b->write_bytes) / secs / 1e6;
}

/*
 * Per interval, per op with I/Os: IOPS (solid, left axis) and MB/s (dashed,
 * right axis), an op's two curves in its colour.
 */
static void svg_rates(FILE *out, const struct an_series *s)
{
	static const char *const names[] = { "read IOPS", "write IOPS", "read MB/s", "write MB/s" };
	double max[4] = { 0 }, top[2];
	int shown = 0;

	for (size_t i = 0; i < s->nbins; i++)
		for (int c = 0; c < 4; c++)
			max[c] = rate(s, i, c) > max[c] ? rate(s, i, c) : max[c];
	if (max[0] <= 0 && max[1] <= 0)
		return;
	top[0] = nice_top(max[0] > max[1] ? max[0] : max[1]);
	top[1] = nice_top(max[2] > max[3] ? max[2] : max[3]);
	pic_head(out, "rates", "IOPS and MB/s per op over time");
	for (int c = 0; c < 4; c++) {
		if (max[c] <= 0)
			continue;
		fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"",
			curve_colour[c % 2], c >= 2 ? " stroke-dasharray=\"4 3\"" : "");
		for (size_t i = 0; i < s->nbins; i++)
			fprintf(out, "%.1f,%.1f ", PIC_L + (PIC_W - PIC_L - PIC_R) * (i + 0.5) / s->nbins,
				PIC_H - PIC_B - (PIC_H - PIC_T - PIC_B) * rate(s, i, c) / top[c / 2]);
		fputs("\"/>", out);
		fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>"
			"<text x=\"%d\" y=\"%d\">%s</text>", PIC_L + 10, PIC_L + 26, PIC_T + 9 + 14 * shown,
			PIC_T + 9 + 14 * shown, curve_colour[c % 2], c >= 2 ? " stroke-dasharray=\"4 3\"" : "",
			PIC_L + 30, PIC_T + 12 + 14 * shown, names[c]);
		shown++;
	}
	for (int t = 0; t <= 4; t++)
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.6g</text>"
			"<text x=\"%d\" y=\"%.1f\">%.6g</text>", PIC_L - 4,
			PIC_H - PIC_B - (PIC_H - PIC_T - PIC_B) * t / 4.0 + 4, top[0] * t / 4, PIC_W - PIC_R + 4,
			PIC_H - PIC_B - (PIC_H - PIC_T - PIC_B) * t / 4.0 + 4, top[1] * t / 4);
	fprintf(out, "<text x=\"4\" y=\"%d\">IOPS</text><text x=\"%d\" y=\"%d\">MB/s (dashed)</text>",
		PIC_T - 8, PIC_W - PIC_R + 4, PIC_T - 8);
	pic_time_axis(out, (s->t1 - s->t0) / 1e9);
	fputs("</svg>\n", out);
}

/* Tail CDF: per group, the latency of --stage at p (log x) against 1 - p (log y, 1 to 1e-4). */
static void svg_tail_cdf(FILE *out, struct an_stats *st, enum an_stage stage, const char *stage_name)
{
	double lo = 0, hi = 0, x, y;
	char label[32], title[96];
	int shown = 0;

	for (uint32_t g = 0; g < st->ngroups; g++) {
		struct an_qest *e = &st->groups[g].st[stage];

		if (!e->n)
			continue;
		lo = !lo || (e->min > 0 && e->min < lo) ? (e->min > 0 ? (double)e->min : 1) : lo;
		hi = (double)e->max > hi ? (double)e->max : hi;
	}
	if (hi <= 0)
		return;
	lo = pow(10, floor(log10(lo)));
	hi = pow(10, ceil(log10(hi)));
	hi = hi > lo ? hi : lo * 10;
	snprintf(title, sizeof(title), "%s tail: 1 - p against latency (log, log)", stage_name);
	pic_head(out, "tail-cdf", title);
	for (uint32_t g = 0; g < st->ngroups && g < HTML_CHARTS; g++) {
		struct an_qest *e = &st->groups[g].st[stage];

		if (!e->n)
			continue;
		fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
			curve_colour[shown % NCOLOURS]);
		/* 1 - p from 1 down to 1e-4, or to 1/n: no tail drawn past the data */
		for (int j = 0; j <= 32 && pow(10, -j / 8.0) * e->n >= 1; j++) {
			double v = (double)an_qest_quantile(e, 1 - pow(10, -j / 8.0));

			x = PIC_L + (PIC_W - PIC_L - PIC_R) * log10((v > lo ? v : lo) / lo) / log10(hi / lo);
			y = PIC_T + (PIC_H - PIC_T - PIC_B) * j / 32.0;
			fprintf(out, "%.1f,%.1f ", x, y);
		}
		fputs("\"/>", out);
		pic_legend(out, shown++, st->groups[g].label);
	}
	for (int j = 0; j <= 4; j++)
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>", PIC_L - 4,
			PIC_T + (PIC_H - PIC_T - PIC_B) * j / 4.0 + 4, pow(10, -j));
	for (double v = lo; v <= hi * 1.001; v *= 10) {
		short_time(label, sizeof(label), v);
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
			PIC_L + (PIC_W - PIC_L - PIC_R) * log10(v / lo) / log10(hi / lo), PIC_H - PIC_B + 14, label);
	}
	fprintf(out, "<text x=\"4\" y=\"%d\">1 - p</text><text x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
		"latency</text></svg>\n", PIC_T - 4, PIC_L + (PIC_W - PIC_L - PIC_R) / 2, PIC_H - 4);
}

/*
 * The summary at a glance, per group: I/Os, IOPS, MB/s and busy time, and
 * --stage's p50, p99, p99.9 and max: the cells of the summary's CSV rows of
 * that stage, as they are written there.
 */
static void put_glance(struct page *p, const char *stage_name)
{
	static const char *const want[] = { "group", "ios", "iops", "mb_s", "busy_s", "p50_us", "p99_us",
					    "p99_9_us", "max_us" };
	enum { NWANT = sizeof(want) / sizeof(want[0]) };
	int col[NWANT], stage_col = -1, k, i;
	char cell[64][160];
	const char *s = p->buf;

	if (!s || !*s)
		return;
	for (k = 0; (k == 0 || s[-1] == ',') && k < 64; k++)
		s = csv_cell(s, cell[k], sizeof(cell[k]));
	for (i = 0; i < NWANT; i++) {
		col[i] = -1;
		for (int j = 0; j < k; j++)
			col[i] = !strcmp(cell[j], want[i]) ? j : col[i];
	}
	for (int j = 0; j < k; j++)
		stage_col = !strcmp(cell[j], "stage") ? j : stage_col;
	fputs("<table id=\"glance\" class=\"sortable\">\n<thead><tr>", p->out);
	for (i = 0; i < NWANT; i++)
		fprintf(p->out, "<th>%s</th>", want[i]);
	fputs("</tr></thead>\n<tbody>\n", p->out);
	while (*s) {
		for (k = 0; (k == 0 || s[-1] == ',') && k < 64; k++)
			s = csv_cell(s, cell[k], sizeof(cell[k]));
		if (stage_col < 0 || stage_col >= k || strcmp(cell[stage_col], stage_name))
			continue;
		fputs("<tr>", p->out);
		for (i = 0; i < NWANT; i++) {
			fputs("<td>", p->out);
			if (col[i] >= 0 && col[i] < k)
				put_text(p->out, cell[col[i]]);
			fputs("</td>", p->out);
		}
		fputs("</tr>\n", p->out);
	}
	fputs("</tbody></table>\n", p->out);
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

/*
 * The first pass's reports: first what fits a screen (the latency heat map
 * and the summary at a glance, then each device's position map, the rates
 * and the tail), then each report folded: identity, the summary's every
 * stage, histograms, sizes, seeks, depth.
 */
static void put_first_pass(struct page *p, struct an_run *r, const struct an_opts *o)
{
	const char *stage = an_stage_name(&r->spans, o->stage);
	FILE *m;
	char title[200];

	if ((m = capture(p))) {
		an_run_print_header(r, m);
		put_pre(p, m);
	}
	if ((m = capture(p))) {
		an_stats_print(&r->stats, &r->spans, NULL, m, 1, an_run_duration(r));
		fclose(m);
	}
	fputs("<div class=\"row\">\n", p->out);
	snprintf(title, sizeof(title), "%s latency over time (log), I/Os per cell (log colour)", stage);
	svg_heat(p->out, &r->series, title);
	fprintf(p->out, "<div id=\"summary\"><h2>Summary</h2><p>%s in us; IOPS and MB/s over the "
		"time each group was busy (busy_s)</p>\n", stage);
	put_glance(p, stage);
	fputs("</div>\n</div>\n<div class=\"row\">\n", p->out);
	/* a position map per device, each its own axis; its host named when there are several */
	for (unsigned k = 0; k < r->series.ndev_pos && k < HTML_CHARTS; k++) {
		char name[240];

		svg_devmap(p->out, &r->series, &r->series.dev_pos[k],
			   an_run_map_name(r, &r->series.dev_pos[k], name, sizeof(name)), k);
	}
	if (r->series.pos_unmapped)
		fprintf(p->out, "<p>%" PRIu64 " I/Os of devices past the first %d not mapped</p>\n",
			r->series.pos_unmapped, AN_POS_DEVS);
	svg_rates(p->out, &r->series);
	svg_tail_cdf(p->out, &r->stats, o->stage, stage);
	fputs("</div>\n", p->out);
	fputs("<details id=\"identity\"><summary>Trace</summary>\n", p->out);
	put_identity(p, r);
	fputs("</details>\n<details id=\"summary-all\"><summary>Summary, every stage</summary>\n", p->out);
	/* the summary's CSV, still captured from the glance above */
	put_captured(p, "summary-table", "Stage latencies per group (us; --csv)", 0);
	fputs("</details>\n<details id=\"plots\"><summary>Latency histograms, IOPS and p99 per "
	      "interval</summary>\n", p->out);
	svg_series(p->out, &r->series, &r->spans);
	for (uint32_t g = 0; g < r->dist.ngroups && g < HTML_CHARTS; g++) {
		const struct an_dist_group *gr = &r->dist.groups[g];

		snprintf(title, sizeof(title), "%s: %s latency (log2 us)", gr->label, stage);
		svg_log2(p->out, title, "I/Os", &gr->lat);
	}
	if ((m = capture(p))) {
		an_dist_print_hist(&r->dist, &r->spans, m, 1);
		put_table(p, m, "hist-table", "Log2 histograms (--hist --csv)", 0);
	}
	fputs("</details>\n<details id=\"sizes\"><summary>Sizes</summary>\n", p->out);
	for (uint32_t g = 0; g < r->dist.ngroups && g < HTML_CHARTS; g++) {
		const struct an_dist_group *gr = &r->dist.groups[g];

		snprintf(title, sizeof(title), "%s: I/O sizes (log2 bytes)", gr->label);
		svg_log2(p->out, title, "I/Os", &gr->size);
	}
	if ((m = capture(p))) {
		an_dist_print_sizes(&r->dist, m, 1);
		put_table(p, m, "sizes-table", "Sizes (--sizes --csv)", 0);
	}
	fputs("</details>\n<details id=\"seeks\"><summary>Seeks</summary>\n", p->out);
	if ((m = capture(p))) {
		an_dist_print_seeks(&r->dist, r->origins, m, 1);
		put_table(p, m, "seek-table", "Seek distances (--seek --csv)", 0);
	}
	fputs("</details>\n<details id=\"depth\"><summary>Queue depth</summary>\n", p->out);
	svg_depth(p->out, &r->dist, r->origins);
	if ((m = capture(p))) {
		an_dist_print_depth(&r->dist, r->origins, m, 1);
		put_table(p, m, "depth-table", "Requests in flight, time-weighted (--depth --csv)", 0);
	}
	fputs("</details>\n", p->out);
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
			put_table(p, m, id, title, 0);
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
		fputs("<details id=\"tail\"><summary>The slowest I/Os</summary>\n", p->out);
		if ((m = capture(p))) {
			an_top_print(&r->top, &r->spans, r->origins, r->nrecs > 1, NULL, m, 1, r->info.first_ts);
			put_table(p, m, "tail-table", title, 1);
		}
		fputs("<p>Columns empty or 0 in every row left out (--quantile --csv has them all).</p>"
		      "</details>\n", p->out);
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
		fputs("<h1>sttrace report</h1>\n<nav><a href=\"#summary\">summary</a><a href=\"#identity\">"
		      "trace</a><a href=\"#summary-all\">every stage</a><a href=\"#plots\">histograms</a>"
		      "<a href=\"#sizes\">sizes</a><a href=\"#seeks\">seeks</a><a href=\"#depth\">depth</a>"
		      "<a href=\"#top\">top</a><a href=\"#tail\">tail</a></nav>\n", p.out);
		put_first_pass(&p, r, o);
	}
	an_series_free(&r->series);
	an_dist_free(&r->dist);
	an_stats_free(&r->stats);
	if (!ret) {
		fputs("<details id=\"top\"><summary>Top processes, files and cgroups</summary>\n", p.out);
		ret = put_top(&p, r, o, AN_BY_COMM);
	}
	if (!ret)
		ret = put_top(&p, r, o, AN_BY_PID);
	if (!ret)
		ret = put_top(&p, r, o, AN_BY_FILE);
	if (!ret)
		ret = put_top(&p, r, o, AN_BY_CGROUP);
	if (!ret) {
		fputs("</details>\n", p.out);
		ret = put_tail(&p, r, o);
	}
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
