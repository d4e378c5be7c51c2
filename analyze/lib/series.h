/* SPDX-License-Identifier: MIT */
/*
 * series.h - per-interval views of the trace: the time series (IOPS, MB/s,
 * latency p50/p99, device queue depth, read/write mix, merge rate) and the
 * two heatmaps (time x log2 latency, time x position on the device), and a
 * position map per device (time x sector of that device alone).
 *
 * An I/O belongs to the interval in which it completed (as iostat counts).
 * Memory is one bin per interval, bounded by AN_SERIES_MAX_BINS whatever the
 * file size, and a grid of at most AN_POS_COLS x AN_HEAT_POS counts for each
 * of at most AN_POS_DEVS devices. Latency quantiles per interval come from a 16-buckets-per-octave
 * sketch (relative error <= 3.1 %).
 */
#ifndef AN_SERIES_H
#define AN_SERIES_H

#include <stdio.h>

#include "analyze/lib/correlate.h"
#include "analyze/lib/sketch.h"

struct an_span_defs;	/* analyze/lib/span.h: stage names of the spans */

#define AN_SERIES_MAX_BINS 20000
#define AN_HEAT_LAT 40		/* log2 ns buckets: 1 ns .. 2^40 ns (18 min) */
#define AN_HEAT_POS 64		/* position buckets, 2^pos_shift sectors each */
#define AN_POS_DEVS 16		/* devices with a position map of their own */
#define AN_POS_COLS 256		/* a device map's time columns, at most */

struct an_bin {
	uint64_t ios, bytes, reads, writes, busy_ns;
	uint64_t read_bytes, write_bytes;	/* of bytes, the reads' and the writes' */
	uint64_t bios, merged;	/* the I/Os' bios, and those of them that merged (iostat's rrqm + wrqm) */
	uint64_t read_merged, write_merged;	/* of those, the read and the write bios (rrqm, wrqm) */
	struct an_sketch lat;	/* allocated with the first I/O */
	uint32_t lat_heat[AN_HEAT_LAT];
	uint32_t pos_heat[AN_HEAT_POS];
};

/* Where on one device its block I/Os began, over time. */
struct an_posmap {
	uint32_t dev;
	uint16_t recording;
	unsigned shift;		/* sectors per row = 2^shift */
	uint64_t last;		/* the highest sector an I/O reached */
	uint64_t ios;
	uint32_t *heat;		/* heat[col * AN_HEAT_POS + row]: I/Os that began there */
};

struct an_series {
	uint64_t t0, t1, step;	/* [t0, t1] covered by bins of step ns */
	size_t nbins;
	enum an_stage stage;	/* latency of the p50/p99 columns and the latency heatmap */
	unsigned pos_shift;	/* sectors per position bucket = 2^pos_shift */
	struct an_bin *bins;
	struct an_posmap dev_pos[AN_POS_DEVS];	/* in the order the devices came */
	unsigned ndev_pos;
	size_t pos_cols;	/* time columns of a device map, */
	size_t pos_span;	/* of pos_span intervals each */
	uint64_t pos_unmapped;	/* I/Os of the devices past AN_POS_DEVS */
	int failed;
};

/* Bins of `step` ns covering [t0, t1]; -1 if more than AN_SERIES_MAX_BINS. */
int an_series_init(struct an_series *s, uint64_t t0, uint64_t t1, uint64_t step, enum an_stage stage);
void an_series_free(struct an_series *s);
void an_series_add(struct an_series *s, const struct an_io *io);
/* dst += src, both made by an_series_init() with the same arguments; 0 or -1. */
int an_series_merge(struct an_series *dst, struct an_series *src);
void an_series_print(struct an_series *s, const struct an_span_defs *spans, FILE *out, int csv);
/* kind 'l': latency heatmap, 'p': position heatmap. */
void an_heatmap_print(const struct an_series *s, int kind, FILE *out, int csv);
/* Middle of interval i in seconds since t0. */
double an_series_time(const struct an_series *s, size_t i);

#endif /* AN_SERIES_H */
