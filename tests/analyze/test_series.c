/* SPDX-License-Identifier: MIT */
/*
 * The time series near the end of the clock: a trace whose last interval
 * ends past 2^64 ns (a crafted file, or a clock near its end) spreads an
 * I/O's device time over the bins it overlaps, and the bins' device time
 * adds up to the I/O's D to C, as it does anywhere else.
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

int main(void)
{
	uint64_t t1 = UINT64_MAX - 255, t0 = t1 - 10 * SEC - SEC / 3;

	check(busy_of(1000, 1000 + 10 * SEC, 1000 + SEC / 2, 1000 + 3 * SEC) == 5 * SEC / 2,
	      "series.busy", "device time spread over three bins");
	check(busy_of(t0, t1, t1 - 2 * SEC, t1 - SEC / 4) == 7 * SEC / 4,
	      "series.busy_near_2^64", "busy %llu, not 1.75 s",
	      (unsigned long long)busy_of(t0, t1, t1 - 2 * SEC, t1 - SEC / 4));
	return check_failures != 0;
}
