/* SPDX-License-Identifier: MIT */
/*
 * --gnuplot DIR: one .dat and one .gp per plot. Each .gp renders its plot to
 * PNG (pngcairo) and SVG, reading its .dat from the current directory, so a
 * user can edit and re-run it (cd DIR && gnuplot cdf.gp). The plots are
 * rendered here when gnuplot is installed.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/st-analyze/analyze.h"
#include "common/text.h"

#define PROG "st-analyze"

/*
 * Both output formats of a plot, PLOT_W x height px (PLOT_H but for a plot
 * of many panels), each to NAME.FORMAT in the current directory;
 * st-analyze renders one format at a time to standard output (formats,
 * to_stdout), into a file it made the safe way.
 */
#define PLOT_W 1100
#define PLOT_H 700
static void render_head(FILE *gp, const char *name, unsigned height)
{
	fprintf(gp, "if (!exists(\"formats\")) formats = \"png svg\"\n"
		"do for [fmt in formats] {\n"
		"  if (fmt eq \"png\") { set terminal pngcairo size %d,%u noenhanced font \",10\" }"
		" else { set terminal svg size %d,%u dynamic noenhanced font \",10\" }\n"
		"  if (exists(\"to_stdout\")) { set output } else { set output '%s.'.fmt }\n",
		PLOT_W, height, PLOT_W, height, name);
}

static const char render_tail[] = "}\nset output\n";

/*
 * A label from the trace (a device, command, file or group name) as a
 * gnuplot string: single-quoted, where no backslash escape, backquote
 * substitution or @ macro happens, on one line (text.h), its own quotes as
 * \x27 (gnuplot's '' is no quote right after the opening one): no byte of
 * it ends the string or the command. Whatever shows it says noenhanced, so
 * that its ^ _ { } are no markup either. A label goes into a .dat only in a
 * comment, through text_line.
 */
static void gp_string(FILE *gp, const char *s)
{
	putc('\'', gp);
	text_quoted(gp, s, '\'', "\\x27");
	putc('\'', gp);
}

static FILE *open_out(const char *dir, const char *name, const char *ext)
{
	char path[4096], why[160];
	FILE *f = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/%s.%s", dir, name, ext);
	fd = st_output_open(path, 0, why, sizeof(why));
	if (fd < 0)
		fprintf(stderr, "%s: %s: %s\n", PROG, path, why);
	else if (!(f = fdopen(fd, "w"))) {
		fprintf(stderr, "%s: %s: %s\n", PROG, path, strerror(errno));
		close(fd);
	}
	return f;
}

/* Close what open_out(dir, name, ext) opened; 0, or 2 after saying why. */
static int close_out(FILE *f, const char *dir, const char *name, const char *ext)
{
	if (fclose(f)) {
		fprintf(stderr, "%s: %s/%s.%s: write failed: %s\n", PROG, dir, name, ext,
			strerror(errno));
		return 2;
	}
	return 0;
}

/* One CDF as a gnuplot data block: dense in the body, then the tail out to the maximum. */
static void write_cdf(FILE *dat, struct an_qest *e)
{
	for (unsigned i = 1; i <= 200; i++) {
		double q = i < 190 ? i / 190.0 * 0.99 : 1 - pow(10, -2 - (i - 190) * 0.3);

		fprintf(dat, "%.3f %.6f\n", an_us(an_qest_quantile(e, q)), q);
	}
	fprintf(dat, "%.3f 1\n\n\n", an_us(e->max));
}

/*
 * One tail CDF as a gnuplot data block: latency_us and 1 - p, from p = 0
 * down to 1 - p = 1e-4 or 1/n, whichever the data reaches first.
 */
static void write_tail_cdf(FILE *dat, struct an_qest *e)
{
	for (int j = 0; j <= 64 && pow(10, -j / 16.0) * e->n >= 1; j++)
		fprintf(dat, "%.3f %.6g\n", an_us(an_qest_quantile(e, 1 - pow(10, -j / 16.0))),
			pow(10, -j / 16.0));
	fprintf(dat, "\n\n");
}

/*
 * Panels of the CDF plot: the groups with the most I/Os (--by devop: reads
 * and writes apart), of at least CDF_MIN_IOS each when any has as many.
 */
#define CDF_PANELS 4
#define CDF_MIN_IOS 100
/* Curve styles: a stage's colour (Tableau 10) and dash by its number, the same in every panel. */
static const char *const cdf_colour[] = { "#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1",
					  "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac" };
#define NCDF_COLOURS (sizeof(cdf_colour) / sizeof(cdf_colour[0]))

/*
 * Tail CDF per group (a panel each, the CDF_PANELS groups with the most
 * I/Os): per latency stage with a value above 0, 1 - p on a log axis against log
 * latency, every curve its own colour and style, its stage named.
 */
static int plot_cdf(struct an_run *r, const char *dir)
{
	FILE *dat = open_out(dir, "cdf", "dat"), *gp;
	uint32_t panel[CDF_PANELS];
	unsigned npanels = 0, blocks = 0, i;
	int ret;

	if (!dat)
		return 2;
	/* the groups with the most I/Os, most first */
	for (uint32_t g = 0; g < r->stats.ngroups; g++) {
		unsigned at = npanels;

		while (at > 0 && r->stats.groups[panel[at - 1]].count < r->stats.groups[g].count)
			at--;
		if (at == CDF_PANELS || !r->stats.groups[g].count)
			continue;
		npanels -= npanels == CDF_PANELS;
		memmove(&panel[at + 1], &panel[at], (npanels - at) * sizeof(*panel));
		panel[at] = g;
		npanels++;
	}
	while (npanels > 1 && r->stats.groups[panel[npanels - 1]].count < CDF_MIN_IOS)
		npanels--;
	if (!(gp = open_out(dir, "cdf", "gp"))) {
		fclose(dat);
		return 2;
	}
	render_head(gp, "cdf", PLOT_H);
	fprintf(gp, "  set multiplot layout %u,1 title 'Tail CDF per stage'\n"
		"  set xlabel 'latency (us)'\n  set ylabel '1 - p'\n  set logscale xy\n"
		"  set format y '%%g'\n  set yrange [1e-4:1]\n  set grid\n  set key outside right\n",
		npanels ? npanels : 1);
	for (i = 0; i < npanels; i++) {
		struct an_group *gr = &r->stats.groups[panel[i]];
		unsigned curves = 0;

		fputs("  set title ", gp);
		gp_string(gp, gr->label);
		fputs("\n  plot ", gp);
		for (int k = 0; k < AN_ST_COUNT; k++) {
			/* Q2Q, the time between I/Os, is no latency */
			if (!gr->st[k].n || !gr->st[k].max || k == AN_ST_Q2Q)
				continue;
			fputs("# ", dat);
			text_line(dat, gr->label);
			fprintf(dat, " %s: latency_us 1-p\n", an_stage_name(&r->spans, k));
			write_tail_cdf(dat, &gr->st[k]);
			fprintf(gp, "%s'cdf.dat' index %u using 1:2 with lines lw 2 lc rgb '%s' dt %u title ",
				curves ? ", " : "", blocks++, cdf_colour[k % NCDF_COLOURS],
				(unsigned)(k / NCDF_COLOURS + 1));
			gp_string(gp, an_stage_name(&r->spans, k));
			curves++;
		}
		fprintf(gp, "%s\n", curves ? "" : "1 notitle");
	}
	if (!npanels)
		fprintf(gp, "  plot 1 notitle\n");
	fprintf(gp, "  unset multiplot\n%s", render_tail);
	if ((ret = close_out(dat, dir, "cdf", "dat"))) {
		fclose(gp);
		return ret;
	}
	return close_out(gp, dir, "cdf", "gp");
}

static int plot_series(struct an_run *r, const char *dir)
{
	FILE *dat = open_out(dir, "timeseries", "dat"), *gp;
	const char *st = an_stage_name(&r->spans, r->series.stage);
	int ret;

	if (!dat)
		return 2;
	fprintf(dat, "# ");
	an_series_print(&r->series, &r->spans, dat, 0);
	if ((ret = close_out(dat, dir, "timeseries", "dat")))
		return ret;
	if (!(gp = open_out(dir, "timeseries", "gp")))
		return 2;
	render_head(gp, "timeseries", PLOT_H);
	fprintf(gp,
		"  set multiplot layout 3,1 title 'Time series, %.3g %s intervals'\n"
		"  set grid\n  set key outside right\n  set xlabel 'time since trace start (s)'\n"
		"  set ylabel 'IOPS'\n  set y2label 'MB/s'\n  set ytics nomirror\n  set y2tics\n"
		"  plot 'timeseries.dat' using 1:3 with lines lw 2 title 'IOPS', "
		"'' using 1:4 axes x1y2 with lines lw 2 title 'MB/s'\n"
		"  unset y2tics\n  unset y2label\n  set ylabel '%s latency (us)'\n"
		"  plot 'timeseries.dat' using 1:5 with lines lw 2 title 'p50', "
		"'' using 1:6 with lines lw 2 title 'p99'\n"
		"  set ylabel 'device queue depth'\n  set y2label 'percent'\n  set y2tics\n"
		"  set y2range [0:100]\n"
		"  plot 'timeseries.dat' using 1:7 with lines lw 2 title 'in flight (D2C)', "
		"'' using 1:8 axes x1y2 with lines title 'read %%', "
		"'' using 1:9 axes x1y2 with lines title 'merged %%'\n"
		"  unset multiplot\n%s", r->series.step / (r->series.step < 1000000000 ? 1e6 : 1e9),
		r->series.step < 1000000000 ? "ms" : "s", st, render_tail);
	return close_out(gp, dir, "timeseries", "gp");
}

/* The heat maps' colours: viridis, the count on a log scale up to max; an empty cell (0) is left blank. */
static void heat_colours(FILE *gp, uint32_t max)
{
	fprintf(gp, "  set cblabel 'I/Os (log)'\n  set logscale cb\n  set cbrange [1:%u]\n"
		"  set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')\n",
		max > 1 ? max : 2);
}

/*
 * Time across, log2 ns buckets up (labelled in time units): the y range the
 * buckets with I/Os span.
 */
static int plot_heatmap_latency(struct an_run *r, const char *dir)
{
	const char *name = "heatmap_latency", *st = an_stage_name(&r->spans, r->series.stage);
	unsigned k, lo = AN_HEAT_LAT, hi = 0;
	FILE *dat = open_out(dir, name, "dat"), *gp;
	uint32_t max = 1;
	int ret;
	size_t i;

	if (!dat)
		return 2;
	for (i = 0; i < r->series.nbins; i++)
		for (k = 0; k < AN_HEAT_LAT; k++) {
			uint32_t v = r->series.bins[i].lat_heat[k];

			if (v) {
				lo = k < lo ? k : lo;
				hi = k > hi ? k : hi;
				max = v > max ? v : max;
			}
		}
	if (lo > hi)
		lo = 0, hi = AN_HEAT_LAT - 1;
	fprintf(dat, "# time_s log2(latency_ns) count\n");
	for (i = 0; i < r->series.nbins; i++) {
		for (k = 0; k < AN_HEAT_LAT; k++)
			fprintf(dat, "%.6f %.6f %u\n", an_series_time(&r->series, i), k + 0.5,
				r->series.bins[i].lat_heat[k]);
		fputc('\n', dat);
	}
	if ((ret = close_out(dat, dir, name, "dat")))
		return ret;
	if (!(gp = open_out(dir, name, "gp")))
		return 2;
	render_head(gp, name, PLOT_H);
	fputs("  set xlabel 'time since trace start (s)'\n", gp);
	heat_colours(gp, max);
	fprintf(gp, "  set title '%s latency heatmap'\n  set ylabel '%s latency'\n"
		"  set ytics ('1 us' log(1e3)/log(2), '10 us' log(1e4)/log(2), '100 us' "
		"log(1e5)/log(2), '1 ms' log(1e6)/log(2), '10 ms' log(1e7)/log(2), '100 ms' "
		"log(1e8)/log(2), '1 s' log(1e9)/log(2), '10 s' log(1e10)/log(2))\n"
		"  set yrange [%u:%u]\n", st, st, lo, hi + 1);
	fprintf(gp, "  plot '%s.dat' using 1:2:($3 > 0 ? $3 : NaN) with image title ''\n%s", name,
		render_tail);
	return close_out(gp, dir, name, "gp");
}

/* Sectors as MiB, the position heat map's unit. */
static double sectors_mib(double sectors)
{
	return sectors * 512 / 1048576;
}

/*
 * The position heat map: a panel per device (series.h's device maps, in the
 * order the devices came), titled with its name; time across, the device up
 * in MiB from 0 to the highest sector an I/O reached, each row the I/Os that
 * began in its sectors; one colour scale for all. The .dat holds one block
 * per device (gnuplot's index). Past PLOT_PANELS panels the plot grows in
 * height; the I/Os of devices past AN_POS_DEVS are counted in its title.
 */
#define PLOT_PANELS 3
static int plot_heatmap_position(struct an_run *r, const char *dir)
{
	const char *name = "heatmap_position";
	const struct an_series *s = &r->series;
	FILE *dat = open_out(dir, name, "dat"), *gp;
	char dev[240];
	uint32_t max = 1;
	unsigned k, n = s->ndev_pos;
	int ret;

	if (!dat)
		return 2;
	for (k = 0; k < n; k++) {
		const struct an_posmap *m = &s->dev_pos[k];
		/* the rows up to the highest sector's, two at least: gnuplot draws no image of one row */
		unsigned rows = m->last >> m->shift ? (unsigned)(m->last >> m->shift) + 1 : 2;

		fputs("# ", dat);
		text_line(dat, an_run_map_name(r, m, dev, sizeof(dev)));
		fputs(": time_s position_MiB count\n", dat);
		for (size_t c = 0; c < s->pos_cols; c++) {
			for (unsigned row = 0; row < rows; row++) {
				uint32_t v = m->heat[c * AN_HEAT_POS + row];

				max = v > max ? v : max;
				fprintf(dat, "%.6f %.9g %u\n", (c + 0.5) * s->pos_span * s->step / 1e9,
					sectors_mib((row + 0.5) * (double)(1ull << m->shift)), v);
			}
			fputc('\n', dat);
		}
		fputc('\n', dat);
	}
	if ((ret = close_out(dat, dir, name, "dat")))
		return ret;
	if (!(gp = open_out(dir, name, "gp")))
		return 2;
	render_head(gp, name, n > PLOT_PANELS ? PLOT_H * n / PLOT_PANELS : PLOT_H);
	fprintf(gp, "  set multiplot layout %u,1", n ? n : 1);
	if (s->pos_unmapped)
		fprintf(gp, " title 'Position heatmap: %" PRIu64 " I/Os of devices past the first %d not shown'",
			s->pos_unmapped, AN_POS_DEVS);
	fputs("\n  set xlabel 'time since trace start (s)'\n  set ylabel 'position on the device (MiB)'\n", gp);
	heat_colours(gp, max);
	for (k = 0; k < n; k++) {
		const struct an_posmap *m = &s->dev_pos[k];

		fputs("  set title 'Position heatmap, '.", gp);
		gp_string(gp, an_run_map_name(r, m, dev, sizeof(dev)));
		/* an empty cell (0) is off the log colour scale: left blank */
		fprintf(gp, "\n  set yrange [0:%.9g]\n"
			"  plot '%s.dat' index %u using 1:2:($3 > 0 ? $3 : NaN) with image title ''\n",
			sectors_mib((double)m->last + 1), name, k);
	}
	if (!n)
		fputs("  set title 'Position heatmap: no block I/O'\n  set xrange [0:1]\n  set yrange [0:1]\n"
		      "  plot NaN notitle\n", gp);
	fprintf(gp, "  unset multiplot\n%s", render_tail);
	return close_out(gp, dir, name, "gp");
}

/*
 * Render dir/NAME.gp in each format to dir/NAME.FORMAT, a file made the safe
 * way (st_output_open) that gnuplot writes as its standard output: its own
 * `set output` would follow a symlink planted at the name and make a file
 * 0644. 0 rendered, 1 no gnuplot, 2 failed (said why).
 */
static int render(const char *dir, const char *name)
{
	static const char *const formats[] = { "png", "svg" };

	for (unsigned i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		char path[4096], script[4096], define[64], why[160];
		int fd, status, ret = -1;
		pid_t pid;

		snprintf(path, sizeof(path), "%s/%s.%s", dir, name, formats[i]);
		fd = st_output_open(path, 0, why, sizeof(why));
		if (fd < 0) {
			fprintf(stderr, "%s: %s: %s\n", PROG, path, why);
			return 2;
		}
		snprintf(script, sizeof(script), "%s.gp", name);
		snprintf(define, sizeof(define), "formats = '%s'; to_stdout = 1", formats[i]);
		pid = fork();
		if (!pid) {
			int null = open("/dev/null", O_WRONLY);

			if (chdir(dir) || dup2(fd, STDOUT_FILENO) < 0)
				_exit(126);
			/* Quiet: warnings about empty plots are not the user's business. */
			if (null >= 0)
				dup2(null, STDERR_FILENO);
			execlp("gnuplot", "gnuplot", "-e", define, script, (char *)NULL);
			_exit(errno == ENOENT ? 127 : 126);
		}
		close(fd);
		if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
			ret = WEXITSTATUS(status) == 127 ? 1 : WEXITSTATUS(status) ? -1 : 0;
		if (!ret)
			continue;
		unlink(path);	/* no empty or partial plot */
		if (ret == 1)
			return 1;
		fprintf(stderr, "%s: %s/%s: gnuplot failed (cd %s && gnuplot %s shows why)\n",
			PROG, dir, script, dir, script);
		return 2;
	}
	return 0;
}

/* --gnuplot DIR made (0700) or reused the safe way (st_output_dir); 0 or 2 after the error. */
static int plot_dir(const struct an_opts *o)
{
	char why[160];

	if (st_output_dir(o->gnuplot_dir, o->force ? ST_OUTPUT_FORCE : 0, why, sizeof(why))) {
		fprintf(stderr, "%s: %s: %s\n", PROG, o->gnuplot_dir, why);
		return 2;
	}
	return 0;
}

/* One log2 histogram (dist.h) as a data block: each slot's low end (1 for slot 0) and count. */
static void write_log2(FILE *dat, const char *label, const struct an_log2 *h)
{
	fputs("# ", dat);
	text_line(dat, label);
	fputs("\n", dat);
	for (int k = 0; k < AN_LOG2_SLOTS; k++)
		if (h->slot[k])
			fprintf(dat, "%" PRIu64 " %" PRIu64 "\n", (uint64_t)1 << k, h->slot[k]);
	fprintf(dat, "\n\n");
}

/* The plots of --sizes, --seek, --hist and --depth with --gnuplot. */
struct dist_plot {
	unsigned bit;			/* AN_DIST_* */
	const char *name, *title, *xlabel, *ylabel;
	int logx;
};

static const struct dist_plot dist_plots[] = {
	{ AN_DIST_SIZE, "sizes", "I/O sizes", "bytes (log2 slot)", "I/Os", 1 },
	{ AN_DIST_SEEK, "seeks", "Seek distances", "sectors (log2 slot)", "requests", 1 },
	{ AN_DIST_HIST, "hist", "Latency histogram", "us (log2 slot)", "I/Os", 1 },
	{ AN_DIST_DEPTH, "depth", "Requests in flight (issue..completion)", "depth",
	  "percent of time", 0 },
};

/* Titles of the data blocks of one plot, NUL-separated. */
struct block_titles {
	char buf[8192];
	size_t len;
	unsigned n;
};

static void add_title(struct block_titles *t, const char *s)
{
	size_t n = strlen(s) + 1;

	if (t->len + n <= sizeof(t->buf)) {
		memcpy(t->buf + t->len, s, n);
		t->len += n;
		t->n++;
	}
}

/* The .gp of a dist plot: one line per data block of its .dat. */
static int write_dist_gp(const char *dir, const struct dist_plot *p, const struct block_titles *t,
			 const char *stage_name)
{
	FILE *gp = open_out(dir, p->name, "gp");
	const char *title = t->buf;

	if (!gp)
		return 2;
	render_head(gp, p->name, PLOT_H);
	fprintf(gp, "  set title '%s%s%s'\n  set xlabel '%s'\n  set ylabel '%s'\n  set grid\n"
		"  set key outside right noenhanced\n%s  plot ", p->title,
		p->bit == AN_DIST_HIST ? " of " : "", p->bit == AN_DIST_HIST ? stage_name : "",
		p->xlabel, p->ylabel, p->logx ? "  set logscale x 2\n" : "");
	for (unsigned i = 0; i < t->n; i++, title += strlen(title) + 1) {
		fprintf(gp, "%s'%s.dat' index %u using 1:2 with linespoints lw 2 title ", i ? ", " : "",
			p->name, i);
		gp_string(gp, title);
	}
	if (!t->n)
		fprintf(gp, "0 notitle");
	fprintf(gp, "\n%s", render_tail);
	return close_out(gp, dir, p->name, "gp");
}

/* The data blocks of one dist plot into dat, their titles into t. */
static void write_dist_dat(FILE *dat, const struct an_run *r, unsigned bit, struct block_titles *t)
{
	const struct an_dist *d = &r->dist;
	char label[256], dev[96];

	for (uint32_t g = 0; (bit == AN_DIST_SIZE || bit == AN_DIST_HIST) && g < d->ngroups; g++) {
		const struct an_log2 *h = bit == AN_DIST_SIZE ? &d->groups[g].size : &d->groups[g].lat;

		if (h->n) {
			write_log2(dat, d->groups[g].label, h);
			add_title(t, d->groups[g].label);
		}
	}
	for (size_t k = 0; bit == AN_DIST_SEEK && k < d->nseeks; k++) {
		const struct an_dist_seek *sk = &d->seeks[k];

		/* the devices' rows; the processes' are in the text and CSV */
		for (int forward = 1; !sk->pid && sk->op != AN_OP_COUNT && forward >= 0; forward--) {
			const struct an_log2 *h = forward ? &sk->fwd : &sk->back;

			if (!h->n)
				continue;
			snprintf(label, sizeof(label), "%s %s %s",
				 an_names_dev(r->origins[sk->recording].names, sk->dev, dev, sizeof(dev)),
				 an_op_name(sk->op), forward ? "forward" : "backward");
			write_log2(dat, label, h);
			add_title(t, label);
		}
	}
	for (size_t k = 0; bit == AN_DIST_DEPTH && k < d->ndepths; k++) {
		const struct an_dist_depth *dp = &d->depths[k];
		const char *name = an_names_dev(r->origins[dp->recording].names, dp->dev, dev, sizeof(dev));

		fputs("# ", dat);
		text_line(dat, name);
		fputs(": depth percent_of_time\n", dat);
		for (uint32_t n = 0; n <= dp->max; n++)
			fprintf(dat, "%u %.4f\n", n, 100.0 * dp->ns[n] / (double)(d->t1 - d->t0));
		fprintf(dat, "\n\n");
		add_title(t, name);
	}
}

/* The dist plots o asks for; their names appended to plots. 0 or 2. */
static int plot_dist(struct an_run *r, const struct an_opts *o, const char *dir, const char **plots,
		     unsigned *nplots)
{
	for (unsigned i = 0; i < sizeof(dist_plots) / sizeof(dist_plots[0]); i++) {
		const struct dist_plot *p = &dist_plots[i];
		struct block_titles t = { .len = 0 };
		FILE *dat;
		int ret;

		if (!(o->dist & p->bit))
			continue;
		if (!(dat = open_out(dir, p->name, "dat")))
			return 2;
		write_dist_dat(dat, r, p->bit, &t);
		if ((ret = close_out(dat, dir, p->name, "dat")) ||
		    (ret = write_dist_gp(dir, p, &t, an_stage_name(&r->spans, o->stage))))
			return ret;
		plots[(*nplots)++] = p->name;
	}
	return 0;
}

int an_plot(struct an_run *r, const struct an_opts *o, FILE *info)
{
	const char *plots[8] = {
		"cdf", "timeseries", "heatmap_latency", "heatmap_position",
	};
	const char *dir = o->gnuplot_dir;
	unsigned i, nplots = 4;
	int ret;

	if ((ret = plot_dir(o)))
		return ret;
	if ((ret = plot_cdf(r, dir)) || (ret = plot_series(r, dir)) ||
	    (ret = plot_heatmap_latency(r, dir)) || (ret = plot_heatmap_position(r, dir)) ||
	    ((r->want & AN_WANT_DIST) && (ret = plot_dist(r, o, dir, plots, &nplots))))
		return ret;
	for (i = 0; i < nplots; i++) {
		ret = render(dir, plots[i]);
		if (ret == 1) {
			fprintf(info, "plots: gnuplot not found; wrote .dat and .gp files to %s\n", dir);
			return 0;
		}
		if (ret)
			return ret;
	}
	fprintf(info, "plots: %s/{cdf,timeseries,heatmap_latency,heatmap_position", dir);
	for (i = 4; i < nplots; i++)
		fprintf(info, ",%s", plots[i]);
	fprintf(info, "}.{png,svg}\n");
	return 0;
}

/* ---- diff --gnuplot ------------------------------------------------------ */

/* A group label as a file name part: "loop0 read" -> "loop0_read". */
static void file_part(const char *label, char *out, size_t cap)
{
	size_t i;

	for (i = 0; label[i] && i + 1 < cap; i++)
		out[i] = isalnum((unsigned char)label[i]) || label[i] == '-' ? label[i] : '_';
	out[i] = 0;
}

/* diff_cdf_OP: a panel per stage with both traces' CDFs, log x. */
static int plot_diff_cdf(struct an_group *b, struct an_group *n, const struct an_span_defs *spans,
			 const char *dir, const char *name)
{
	FILE *dat = open_out(dir, name, "dat"), *gp;
	int stages[AN_ST_COUNT], nstages = 0, ret;

	if (!dat)
		return 2;
	for (int k = 0; k < AN_ST_COUNT; k++) {
		/* nothing to draw on a log axis where both took no time (runq of a quiet host) */
		if (!b->st[k].n || !n->st[k].n || (!b->st[k].max && !n->st[k].max))
			continue;
		fprintf(dat, "# %s base (", an_stage_name(spans, k));
		text_line(dat, b->label);
		fputs("): latency_us fraction\n", dat);
		write_cdf(dat, &b->st[k]);
		fprintf(dat, "# %s new (", an_stage_name(spans, k));
		text_line(dat, n->label);
		fputs("): latency_us fraction\n", dat);
		write_cdf(dat, &n->st[k]);
		stages[nstages++] = k;
	}
	if ((ret = close_out(dat, dir, name, "dat")))
		return ret;
	if (!(gp = open_out(dir, name, "gp")))
		return 2;
	render_head(gp, name, PLOT_H);
	fprintf(gp, "  set multiplot layout %d,%d title ", (nstages + 2) / 3,
		nstages < 3 ? (nstages ? nstages : 1) : 3);
	gp_string(gp, b->label);
	fprintf(gp, ".': latency CDF per stage, base and new' noenhanced\n"
		"  set logscale x\n  set grid\n  set yrange [0:1]\n  set key bottom right\n"
		"  set xlabel 'latency (us, log scale)'\n  set ylabel 'fraction of I/Os'\n");
	for (int i = 0; i < nstages; i++)
		fprintf(gp, "  set title '%s'\n  plot '%s.dat' index %d using 1:2 with lines lw 2 "
			"title 'base', '' index %d using 1:2 with lines lw 2 dt 2 title 'new'\n",
			an_stage_name(spans, stages[i]), name, 2 * i, 2 * i + 1);
	if (!nstages)
		fprintf(gp, "  plot 0 notitle\n");
	fprintf(gp, "  unset multiplot\n%s", render_tail);
	return close_out(gp, dir, name, "gp");
}

/* diff_quantiles_OP: p50, p90, p99 and the chosen quantile of each stage, base and new, with CIs. */
static int plot_diff_quantiles(struct an_group *b, struct an_group *n, const struct an_opts *o,
			       const char *dir, const char *name)
{
	double qs[] = { 0.5, 0.9, 0.99, o->quantile / 100 };
	/* the chosen quantile once, when it is not one of the three */
	unsigned nq = o->quantile == 50 || o->quantile == 90 || o->quantile == 99 ? 3 : 4;
	FILE *dat = open_out(dir, name, "dat"), *gp;
	int ret, row = 0;

	if (!dat)
		return 2;
	fprintf(dat, "# row stage quantile base_us base_lo_us base_hi_us new_us new_lo_us new_hi_us\n");
	for (int k = 0; k < AN_ST_COUNT; k++) {
		if (!b->st[k].n || !n->st[k].n)
			continue;
		for (unsigned i = 0; i < nq; i++) {
			struct an_ci cb = an_quantile_ci(&b->st[k], qs[i]), cn = an_quantile_ci(&n->st[k], qs[i]);

			fprintf(dat, "%d %s p%g %.3f %.3f %.3f %.3f %.3f %.3f\n", row++, an_stage_name(&o->spans, k),
				qs[i] * 100, an_us(cb.value), an_us(cb.lo), an_us(cb.hi), an_us(cn.value),
				an_us(cn.lo), an_us(cn.hi));
		}
	}
	if ((ret = close_out(dat, dir, name, "dat")))
		return ret;
	if (!(gp = open_out(dir, name, "gp")))
		return 2;
	render_head(gp, name, PLOT_H);
	fputs("  set title ", gp);
	gp_string(gp, b->label);
	fprintf(gp, ".': quantiles per stage, base and new, with 95%% confidence intervals' noenhanced\n"
		"  set logscale y\n  set grid\n  set ylabel 'latency (us, log scale)'\n"
		"  set xtics rotate by -60 font ',8'\n  set key top left\n  set xrange [-1:%d]\n"
		"  plot '%s.dat' using ($1-0.15):4:5:6:xtic(stringcolumn(2).' '.stringcolumn(3)) "
		"with yerrorbars pt 7 title 'base', '' using ($1+0.15):7:8:9 with yerrorbars pt 5 "
		"title 'new'\n%s", row ? row : 1, name, render_tail);
	return close_out(gp, dir, name, "gp");
}

int an_plot_diff(struct an_stats *base, struct an_stats *now, const struct an_opts *o, FILE *info)
{
	const char *dir = o->gnuplot_dir;
	char part[128], name[160];
	int ret, rendered = 0;

	if ((ret = plot_dir(o)))
		return ret;
	for (uint32_t g = 0; g < base->ngroups; g++) {
		struct an_group *b = &base->groups[g], *n = NULL;

		for (uint32_t h = 0; h < now->ngroups && !n; h++)
			if (!strcmp(now->groups[h].label, b->label))
				n = &now->groups[h];
		if (!n)
			continue;
		file_part(b->label, part, sizeof(part));
		for (int kind = 0; kind < 2; kind++) {
			snprintf(name, sizeof(name), "diff_%s_%s", kind ? "quantiles" : "cdf", part);
			ret = kind ? plot_diff_quantiles(b, n, o, dir, name) :
				   plot_diff_cdf(b, n, &o->spans, dir, name);
			if (ret)
				return ret;
			ret = render(dir, name);
			if (ret == 1) {
				fprintf(info, "plots: gnuplot not found; wrote .dat and .gp files to %s\n", dir);
				return 0;
			}
			if (ret)
				return ret;
			rendered++;
		}
	}
	fprintf(info, "plots: %d in %s/diff_{cdf,quantiles}_OP.{png,svg}\n", rendered, dir);
	return 0;
}
