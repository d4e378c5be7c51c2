/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/report.h"
#include "analyze/lib/series.h"
#include "analyze/lib/span.h"

int an_series_init(struct an_series *s, uint64_t t0, uint64_t t1, uint64_t step, enum an_stage stage)
{
	memset(s, 0, sizeof(*s));
	if (!step || t1 < t0 || (t1 - t0) / step + 1 > AN_SERIES_MAX_BINS)
		return -1;
	/* Enough bins of step ns to hold t1, the last possibly cut short. */
	s->t0 = t0;
	s->t1 = t1;
	s->step = step;
	s->stage = stage;
	s->nbins = (t1 - t0) / step + 1;
	/* a device map's column: the same number of whole intervals, the last column's possibly fewer */
	s->pos_span = (s->nbins + AN_POS_COLS - 1) / AN_POS_COLS;
	s->pos_cols = (s->nbins + s->pos_span - 1) / s->pos_span;
	s->bins = calloc(s->nbins, sizeof(*s->bins));
	return s->bins ? 0 : -1;
}

void an_series_free(struct an_series *s)
{
	size_t i;

	for (i = 0; i < s->nbins; i++)
		an_sketch_free(&s->bins[i].lat);
	free(s->bins);
	s->bins = NULL;
	for (i = 0; i < s->ndev_pos; i++)
		free(s->dev_pos[i].heat);
	s->ndev_pos = 0;
}

double an_series_time(const struct an_series *s, size_t i)
{
	return ((double)i + 0.5) * s->step / 1e9;
}

static uint64_t io_end(const struct an_io *io)
{
	uint64_t end = 0;
	int k;

	for (k = 0; k < AN_TS_COUNT; k++)
		if (io->ts[k] > end)
			end = io->ts[k];
	return end;
}

/* Device time of the I/O, spread over the intervals it overlaps. */
static void add_busy(struct an_series *s, uint64_t from, uint64_t to)
{
	while (from < to && from >= s->t0) {
		size_t i = (from - s->t0) / s->step;
		/* to the bin's end, not to t0 + (i + 1) * step: that wraps near 2^64 */
		uint64_t left = s->step - (from - s->t0) % s->step;
		uint64_t piece = to - from < left ? to - from : left;

		if (i >= s->nbins)
			return;
		s->bins[i].busy_ns += piece;
		from += piece;
	}
}

/* A column of position buckets twice as wide: each pair of neighbours summed. */
static void halve_rows(uint32_t *h)
{
	unsigned k;

	for (k = 0; k < AN_HEAT_POS / 2; k++)
		h[k] = h[2 * k] + h[2 * k + 1];
	memset(h + AN_HEAT_POS / 2, 0, AN_HEAT_POS / 2 * sizeof(*h));
}

/* Widen the position buckets until sector fits, merging neighbours. */
static void fit_position(struct an_series *s, uint64_t sector)
{
	size_t i;

	while ((sector >> s->pos_shift) >= AN_HEAT_POS) {
		for (i = 0; i < s->nbins; i++)
			halve_rows(s->bins[i].pos_heat);
		s->pos_shift++;
	}
}

/* Widen a device map's rows until sector fits, merging neighbours. */
static void fit_device(struct an_posmap *m, size_t cols, uint64_t sector)
{
	size_t c;

	while ((sector >> m->shift) >= AN_HEAT_POS) {
		for (c = 0; c < cols; c++)
			halve_rows(m->heat + c * AN_HEAT_POS);
		m->shift++;
	}
}

/* The map of (recording, dev), made when missing; NULL past AN_POS_DEVS or out of memory. */
static struct an_posmap *device_map(struct an_series *s, uint16_t recording, uint32_t dev)
{
	struct an_posmap *m;
	unsigned i;

	for (i = 0; i < s->ndev_pos; i++)
		if (s->dev_pos[i].dev == dev && s->dev_pos[i].recording == recording)
			return &s->dev_pos[i];
	if (s->ndev_pos == AN_POS_DEVS)
		return NULL;
	m = &s->dev_pos[s->ndev_pos];
	*m = (struct an_posmap){ .dev = dev, .recording = recording };
	if (!(m->heat = calloc(s->pos_cols * AN_HEAT_POS, sizeof(*m->heat)))) {
		s->failed = 1;
		return NULL;
	}
	s->ndev_pos++;
	return m;
}

/* An I/O that began at sector and reached last, in interval i of device map m. */
static void add_device(struct an_series *s, struct an_posmap *m, size_t i, uint64_t sector, uint64_t last)
{
	fit_device(m, s->pos_cols, last);
	m->last = last > m->last ? last : m->last;
	m->ios++;
	m->heat[i / s->pos_span * AN_HEAT_POS + (sector >> m->shift)]++;
}

void an_series_add(struct an_series *s, const struct an_io *io)
{
	uint64_t end = io_end(io), ns;
	struct an_bin *b;
	unsigned lb;
	size_t i;

	if (end < s->t0 || (i = (end - s->t0) / s->step) >= s->nbins)
		return;
	b = &s->bins[i];
	/*
	 * The kernel counted the merges of an I/O the trace did not see end:
	 * its bios count where it was seen last, nothing else of it.
	 */
	b->bios += io->nbios;
	b->merged += io->merges;
	b->read_merged += io->read_merges;
	b->write_merged += io->write_merges;
	if (io->flags & AN_IO_INCOMPLETE)
		return;
	b->ios++;
	b->bytes += io->bytes;
	b->reads += io->op == AN_OP_READ;
	b->writes += io->op == AN_OP_WRITE;
	b->read_bytes += io->op == AN_OP_READ ? io->bytes : 0;
	b->write_bytes += io->op == AN_OP_WRITE ? io->bytes : 0;
	if (io->ts[AN_TS_ISSUE] && io->ts[AN_TS_COMPLETE])
		add_busy(s, io->ts[AN_TS_ISSUE], io->ts[AN_TS_COMPLETE]);
	if (io->ts[AN_TS_QUEUE] || io->ts[AN_TS_ISSUE]) {
		struct an_posmap *m = device_map(s, io->recording, io->dev);
		uint64_t sectors = io->blk_bytes / 512, last = io->sector + (sectors ? sectors - 1 : 0);

		fit_position(s, io->sector);
		b->pos_heat[io->sector >> s->pos_shift]++;
		if (m)
			add_device(s, m, i, io->sector,
				   last >= io->sector ? last : UINT64_MAX);
		else
			s->pos_unmapped++;
	}
	if (!an_io_stage(io, s->stage, &ns))
		return;
	if (!b->lat.counts && an_sketch_init(&b->lat, 4)) {
		s->failed = 1;
		return;
	}
	an_sketch_add(&b->lat, ns);
	lb = ns ? 63 - (unsigned)__builtin_clzll(ns) : 0;
	b->lat_heat[lb < AN_HEAT_LAT ? lb : AN_HEAT_LAT - 1]++;
}

int an_series_merge(struct an_series *dst, struct an_series *src)
{
	size_t i;
	unsigned k;

	/* Position buckets of both as wide as the wider one's. */
	fit_position(dst, ((uint64_t)AN_HEAT_POS << src->pos_shift) - 1);
	fit_position(src, ((uint64_t)AN_HEAT_POS << dst->pos_shift) - 1);
	dst->failed |= src->failed;
	dst->pos_unmapped += src->pos_unmapped;
	for (k = 0; k < src->ndev_pos; k++) {
		struct an_posmap *b = &src->dev_pos[k], *d = device_map(dst, b->recording, b->dev);

		if (!d) {
			dst->pos_unmapped += b->ios;
			continue;
		}
		/* rows of both as wide as the wider one's, then the counts row by row */
		fit_device(d, dst->pos_cols, b->last);
		fit_device(b, src->pos_cols, ((uint64_t)AN_HEAT_POS << d->shift) - 1);
		d->last = b->last > d->last ? b->last : d->last;
		d->ios += b->ios;
		for (i = 0; i < dst->pos_cols && i < src->pos_cols; i++)
			for (unsigned row = 0; row < AN_HEAT_POS; row++)
				d->heat[i * AN_HEAT_POS + row] += b->heat[i * AN_HEAT_POS + row];
	}
	for (i = 0; i < dst->nbins && i < src->nbins; i++) {
		struct an_bin *d = &dst->bins[i], *b = &src->bins[i];

		d->ios += b->ios;
		d->bytes += b->bytes;
		d->reads += b->reads;
		d->writes += b->writes;
		d->read_bytes += b->read_bytes;
		d->write_bytes += b->write_bytes;
		d->bios += b->bios;
		d->merged += b->merged;
		d->read_merged += b->read_merged;
		d->write_merged += b->write_merged;
		d->busy_ns += b->busy_ns;
		for (k = 0; k < AN_HEAT_LAT; k++)
			d->lat_heat[k] += b->lat_heat[k];
		for (k = 0; k < AN_HEAT_POS; k++)
			d->pos_heat[k] += b->pos_heat[k];
		if (!b->lat.counts)
			continue;
		if (!d->lat.counts && an_sketch_init(&d->lat, b->lat.bits))
			return -1;
		an_sketch_merge(&d->lat, &b->lat);
	}
	return 0;
}

/* Seconds of trace inside interval i: the last one is usually cut short. */
static double bin_seconds(const struct an_series *s, size_t i)
{
	uint64_t start = s->t0 + i * s->step, end = start + s->step;

	if (end > s->t1 + 1)
		end = s->t1 + 1;
	return end > start ? (end - start) / 1e9 : s->step / 1e9;
}

void an_series_print(struct an_series *s, const struct an_span_defs *spans, FILE *out, int csv)
{
	size_t i;

	fprintf(out, csv ? "time_s,ios,iops,mb_s,%s_p50_us,%s_p99_us,depth,read_pct,merged_pct,"
			   "bios,merged,read_merged,write_merged\n"
			 : "%10s %8s %10s %9s %10s %10s %7s %6s %7s %8s %8s %11s %12s\n",
		csv ? an_stage_name(spans, s->stage) : "time_s",
		csv ? an_stage_name(spans, s->stage) : "ios",
		"iops", "MB/s", "p50_us", "p99_us", "depth", "read%", "merged%", "bios", "merged",
		"read_merged", "write_merged");
	for (i = 0; i < s->nbins; i++) {
		struct an_bin *b = &s->bins[i];
		double rw = (double)(b->reads + b->writes), secs = bin_seconds(s, i);

		fprintf(out, csv ? "%.6f,%" PRIu64 ",%.1f,%.3f,%.3f,%.3f,%.3f,%.1f,%.1f,%" PRIu64
				   ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n"
				 : "%10.6f %8" PRIu64 " %10.1f %9.3f %10.1f %10.1f %7.2f %6.1f %7.1f %8" PRIu64
				   " %8" PRIu64 " %11" PRIu64 " %12" PRIu64 "\n",
			an_series_time(s, i), b->ios, b->ios / secs, b->bytes / secs / 1e6,
			b->lat.counts ? an_us(an_sketch_quantile(&b->lat, 0.5)) : 0.0,
			b->lat.counts ? an_us(an_sketch_quantile(&b->lat, 0.99)) : 0.0,
			b->busy_ns / secs / 1e9, rw > 0 ? 100.0 * b->reads / rw : 0.0,
			b->bios ? 100.0 * b->merged / b->bios : 0.0, b->bios, b->merged, b->read_merged,
			b->write_merged);
	}
}

void an_heatmap_print(const struct an_series *s, int kind, FILE *out, int csv)
{
	unsigned n = kind == 'l' ? AN_HEAT_LAT : AN_HEAT_POS, k;
	const char *sep = csv ? "," : " ";
	size_t i;

	/* Header: bucket lower bounds (ns of latency, or sectors). */
	fprintf(out, "time_s");
	for (k = 0; k < n; k++)
		fprintf(out, "%s%s%" PRIu64, sep, kind == 'l' ? "ns>=" : "sector>=",
			kind == 'l' ? (k ? (uint64_t)1 << k : 0) : (uint64_t)k << s->pos_shift);
	fputc('\n', out);
	for (i = 0; i < s->nbins; i++) {
		const uint32_t *h = kind == 'l' ? s->bins[i].lat_heat : s->bins[i].pos_heat;

		fprintf(out, "%.6f", an_series_time(s, i));
		for (k = 0; k < n; k++)
			fprintf(out, "%s%u", sep, h[k]);
		fputc('\n', out);
	}
}
