/* SPDX-License-Identifier: MIT */
/*
 * The time series near the end of the clock: a trace whose last interval
 * ends past 2^64 ns (a crafted file, or a clock near its end) spreads an
 * I/O's device time over the bins it overlaps, and the bins' device time
 * adds up to the I/O's D to C, as it does anywhere else. The merges of the
 * intervals add up to the I/Os', an incomplete I/O's included (the kernel
 * counted them), by the op of the bios that merged.
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
	return check_failures != 0;
}
