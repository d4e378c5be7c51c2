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
 * Both output formats of every plot, each to NAME.FORMAT in the current
 * directory; st-analyze renders one format at a time to standard output
 * (formats, to_stdout), into a file it made the safe way.
 */
static const char render_head[] =
	"if (!exists(\"formats\")) formats = \"png svg\"\n"
	"do for [fmt in formats] {\n"
	"  if (fmt eq \"png\") { set terminal pngcairo size 1100,700 enhanced font \",10\" }"
	" else { set terminal svg size 1100,700 dynamic enhanced font \",10\" }\n"
	"  if (exists(\"to_stdout\")) { set output } else { set output '%s.'.fmt }\n";
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

/* Latency CDF of every stage with samples, over all I/Os. */
static int plot_cdf(struct an_run *r, const char *dir)
{
	FILE *dat = open_out(dir, "cdf", "dat"), *gp;
	int k, blocks = 0, ret;
	char titles[AN_ST_COUNT][16];
	unsigned i;

	if (!dat)
		return 2;
	for (k = 0; k < AN_ST_COUNT; k++) {
		struct an_qest all;

		an_qest_init(&all, r->stats.exact_limit);
		if (an_stats_merge_stage(&r->stats, k, &all) == 0 && all.n) {
			fprintf(dat, "# %s: latency_us fraction\n", an_stage_name(&r->spans, k));
			write_cdf(dat, &all);
			snprintf(titles[blocks++], sizeof(titles[0]), "%s", an_stage_name(&r->spans, k));
		}
		an_qest_free(&all);
	}
	if ((ret = close_out(dat, dir, "cdf", "dat")))
		return ret;
	if (!(gp = open_out(dir, "cdf", "gp")))
		return 2;
	fprintf(gp, render_head, "cdf");
	fprintf(gp, "  set title 'Latency CDF per stage'\n  set xlabel 'latency (us, log scale)'\n"
		"  set ylabel 'fraction of I/Os'\n  set logscale x\n  set grid\n"
		"  set key outside right\n  set yrange [0:1]\n  plot ");
	for (i = 0; i < (unsigned)blocks; i++)
		fprintf(gp, "%s'cdf.dat' index %u using 1:2 with lines lw 2 title '%s'", i ? ", " : "",
			i, titles[i]);
	if (!blocks)
		fprintf(gp, "0 notitle");
	fprintf(gp, "\n%s", render_tail);
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
	fprintf(gp, render_head, "timeseries");
	fprintf(gp,
		"  set multiplot layout 3,1 title 'Time series (interval %.6f s)'\n"
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
		"  unset multiplot\n%s", r->series.step / 1e9, st, render_tail);
	return close_out(gp, dir, "timeseries", "gp");
}

/* kind 'l' (y: log2 ns buckets, labelled in time units) or 'p' (y: MiB on the device). */
static int plot_heatmap(struct an_run *r, const char *dir, int kind)
{
	const char *name = kind == 'l' ? "heatmap_latency" : "heatmap_position";
	unsigned n = kind == 'l' ? AN_HEAT_LAT : AN_HEAT_POS, k;
	FILE *dat = open_out(dir, name, "dat"), *gp;
	int ret;
	size_t i;

	if (!dat)
		return 2;
	fprintf(dat, "# time_s %s count\n", kind == 'l' ? "log2(latency_ns)" : "position_MiB");
	for (i = 0; i < r->series.nbins; i++) {
		const struct an_bin *b = &r->series.bins[i];

		for (k = 0; k < n; k++) {
			double y = kind == 'l' ? k + 0.5
				: (((double)k + 0.5) * (1ull << r->series.pos_shift)) * 512 / 1048576;

			fprintf(dat, "%.6f %.6f %u\n", an_series_time(&r->series, i), y,
				kind == 'l' ? b->lat_heat[k] : b->pos_heat[k]);
		}
		fputc('\n', dat);
	}
	if ((ret = close_out(dat, dir, name, "dat")))
		return ret;
	if (!(gp = open_out(dir, name, "gp")))
		return 2;
	fprintf(gp, render_head, name);
	fprintf(gp, "  set xlabel 'time since trace start (s)'\n  set cblabel 'I/Os'\n"
		"  set palette defined (0 'white', 1 'yellow', 2 'orange', 3 'red', 4 'black')\n");
	if (kind == 'l')
		fprintf(gp, "  set title '%s latency heatmap (I/Os per interval and latency octave)'\n"
			"  set ylabel '%s latency'\n"
			"  set ytics ('1 us' log(1e3)/log(2), '10 us' log(1e4)/log(2), '100 us' "
			"log(1e5)/log(2), '1 ms' log(1e6)/log(2), '10 ms' log(1e7)/log(2), '100 ms' "
			"log(1e8)/log(2), '1 s' log(1e9)/log(2), '10 s' log(1e10)/log(2))\n"
			"  set yrange [8:36]\n", an_stage_name(&r->spans, r->series.stage),
		an_stage_name(&r->spans, r->series.stage));
	else
		fprintf(gp, "  set title 'Position heatmap (I/Os per interval and device region)'\n"
			"  set ylabel 'position on the device (MiB)'\n");
	fprintf(gp, "  plot '%s.dat' using 1:2:3 with image title ''\n%s", name, render_tail);
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
	fprintf(gp, render_head, p->name);
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
	    (ret = plot_heatmap(r, dir, 'l')) || (ret = plot_heatmap(r, dir, 'p')) ||
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
	fprintf(gp, render_head, name);
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
	fprintf(gp, render_head, name);
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
