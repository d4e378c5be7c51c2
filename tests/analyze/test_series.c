/* SPDX-License-Identifier: MIT */
/*
 * The time series near the end of the clock: a trace whose last interval
 * ends past 2^64 ns (a crafted file, or a clock near its end) spreads an
 * I/O's device time over the bins it overlaps, and the bins' device time
 * adds up to the I/O's D to C, as it does anywhere else. The merges of the
 * intervals add up to the I/Os', an incomplete I/O's included (the kernel
 * counted them), by the op of the bios that merged. Each device has a
 * position map of its own: its rows fit its highest sector, not another
 * device's, also after two series are merged; past AN_POS_DEVS devices the
 * I/Os are counted, not mapped; its columns hold whole intervals, as many
 * each.
 */
#include <stdint.h>
#include <string.h>

#include "analyze/lib/series.h"
#include "tests/check.h"

#define SEC 1000000000ull

/* Busy ns of an I/O from issue to complete, summed over the bins of s. */
static uint64_t busy_of(uint64_t t0, uint64_t t1, uint64_t issue, uint64_t complete)
{
	struct an_series s;
	struct an_io io;
	uint64_t sum = 0;

	if (an_series_init(&s, t0, t1, SEC, AN_ST_D2C))
		return 0;
	memset(&io, 0, sizeof(io));
	io.ts[AN_TS_ISSUE] = issue;
	io.ts[AN_TS_COMPLETE] = complete;
	io.op = AN_OP_READ;
	an_series_add(&s, &io);
	for (size_t i = 0; i < s.nbins; i++)
		sum += s.bins[i].busy_ns;
	an_series_free(&s);
	return sum;
}

/* Merges summed over the bins of a series of a complete and an incomplete I/O. */
static int merges_add_up(void)
{
	struct an_series s;
	struct an_io done, open;
	uint64_t merged = 0, reads = 0, writes = 0, bios = 0, ios = 0;

	if (an_series_init(&s, 0, 10 * SEC, SEC, AN_ST_D2C))
		return 0;
	memset(&done, 0, sizeof(done));
	done.ts[AN_TS_ISSUE] = SEC;
	done.ts[AN_TS_COMPLETE] = 2 * SEC;
	done.op = AN_OP_READ;
	done.nbios = 4;
	done.merges = done.read_merges = 3;
	/* a read I/O holding the write bios its thread's dispatch issued */
	open = done;
	open.ts[AN_TS_COMPLETE] = 0;
	open.ts[AN_TS_ISSUE] = 5 * SEC;
	open.flags = AN_IO_INCOMPLETE;
	open.nbios = 6;
	open.merges = 5;
	open.read_merges = 1;
	open.write_merges = 4;
	an_series_add(&s, &done);
	an_series_add(&s, &open);
	for (size_t i = 0; i < s.nbins; i++) {
		merged += s.bins[i].merged;
		reads += s.bins[i].read_merged;
		writes += s.bins[i].write_merged;
		bios += s.bins[i].bios;
		ios += s.bins[i].ios;
	}
	an_series_free(&s);
	return merged == 8 && reads == 4 && writes == 4 && bios == 10 && ios == 1;
}

/* A block write of 8 sectors at sector on dev, completed at t. */
static void add_block(struct an_series *s, uint32_t dev, uint64_t sector, uint64_t t)
{
	struct an_io io;

	memset(&io, 0, sizeof(io));
	io.ts[AN_TS_ISSUE] = t - 1000;
	io.ts[AN_TS_COMPLETE] = t;
	io.op = AN_OP_WRITE;
	io.dev = dev;
	io.sector = sector;
	io.blk_bytes = io.bytes = 4096;
	an_series_add(s, &io);
}

/* The I/Os in row `row` of the map of dev, over all columns; -1 if dev has none. */
static long long map_row(const struct an_series *s, uint32_t dev, unsigned row)
{
	long long n = 0;

	for (unsigned k = 0; k < s->ndev_pos; k++)
		if (s->dev_pos[k].dev == dev) {
			for (size_t c = 0; c < s->pos_cols; c++)
				n += s->dev_pos[k].heat[c * AN_HEAT_POS + row];
			return n;
		}
	return -1;
}

/* Devices written near sector 1000, near 1e9 and at 500, in two series merged; then many more. */
static int device_maps(void)
{
	struct an_series a, b;
	int ok;

	if (an_series_init(&a, 0, 10 * SEC, SEC, AN_ST_D2C) || an_series_init(&b, 0, 10 * SEC, SEC, AN_ST_D2C))
		return 0;
	add_block(&a, 1, 1000, SEC);
	add_block(&a, 2, 1000000000, 2 * SEC);
	add_block(&b, 1, 8, 3 * SEC);
	add_block(&b, 2, 8, 4 * SEC);
	add_block(&b, 3, 500, 5 * SEC);
	ok = !an_series_merge(&a, &b) && a.ndev_pos == 3 && !a.pos_unmapped;
	/* dev 1: sectors 0..1007 on 64 rows of 16: 1000 in row 62, 8 in row 0 */
	ok = ok && a.dev_pos[0].last == 1007 && a.dev_pos[0].shift == 4 && map_row(&a, 1, 62) == 1 &&
	     map_row(&a, 1, 0) == 1;
	/* dev 2: rows of 2^24 sectors, 1e9 in row 59 */
	ok = ok && a.dev_pos[1].last == 1000000007 && a.dev_pos[1].shift == 24 && map_row(&a, 2, 59) == 1 &&
	     map_row(&a, 2, 0) == 1;
	ok = ok && a.dev_pos[2].last == 507 && map_row(&a, 3, 500 >> a.dev_pos[2].shift) == 1;
	for (uint32_t dev = 10; dev < 10 + AN_POS_DEVS; dev++)
		add_block(&a, dev, 0, 6 * SEC);
	ok = ok && a.ndev_pos == AN_POS_DEVS && a.pos_unmapped == 3 && map_row(&a, 10 + AN_POS_DEVS - 4, 0) == 1 &&
	     map_row(&a, 10 + AN_POS_DEVS - 3, 0) == -1;
	an_series_free(&a);
	an_series_free(&b);
	return ok;
}

/* 800 intervals: 200 columns of 4 each; the last interval's I/O in the last column. */
static int device_columns(void)
{
	struct an_series s;
	int ok;

	if (an_series_init(&s, 0, 799 * SEC, SEC, AN_ST_D2C))
		return 0;
	add_block(&s, 1, 0, 799 * SEC + SEC / 2);
	add_block(&s, 1, 0, 4 * SEC);
	ok = s.pos_cols == 200 && s.pos_span == 4 && s.ndev_pos == 1 && s.dev_pos[0].heat[199 * AN_HEAT_POS] == 1 &&
	     s.dev_pos[0].heat[1 * AN_HEAT_POS] == 1;
	an_series_free(&s);
	return ok;
}

int main(void)
{
	uint64_t t1 = UINT64_MAX - 255, t0 = t1 - 10 * SEC - SEC / 3;

	check(busy_of(1000, 1000 + 10 * SEC, 1000 + SEC / 2, 1000 + 3 * SEC) == 5 * SEC / 2,
	      "series.busy", "device time spread over three bins");
	check(busy_of(t0, t1, t1 - 2 * SEC, t1 - SEC / 4) == 7 * SEC / 4,
	      "series.busy_near_2^64", "busy %llu, not 1.75 s",
	      (unsigned long long)busy_of(t0, t1, t1 - 2 * SEC, t1 - SEC / 4));
	check(merges_add_up(), "series.merges",
	      "the intervals' merges are not the I/Os' (8: 4 read, 4 write, of 10 bios; 1 I/O complete)");
	check(device_maps(), "series.device_maps",
	      "each device's map does not fit its own sectors, or more than AN_POS_DEVS maps");
	check(device_columns(), "series.device_columns", "800 intervals not in 200 columns of 4");
	return check_failures != 0;
}
