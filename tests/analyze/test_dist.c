/* SPDX-License-Identifier: MIT */
/*
 * test_dist.c - sizes, seeks, histograms and depth (analyze/lib/dist.c) on
 * hand-made I/Os whose answers are worked out here: btt's seek rule
 * (btt/seek.c) on requests handed over in completion order, the time at
 * each depth of two overlapping requests (a bio merged into one of them
 * not a third), biolatency's slots, exact sizes,
 * and two recordings' counts merged; a request whose completion the trace
 * lacks counts in sizes and seeks (btt counts its D), not in depth, also
 * when it comes out of the correlator (the recorded events of two: the
 * kernel reused the request, or the bio's address, first).
 */
#include <stdint.h>
#include <string.h>

#include "analyze/lib/correlate.h"
#include "analyze/lib/dist.h"
#include "tests/analyze/events.h"
#include "tests/check.h"

#define DEV (7u << 20 | 3)

static struct an_io block_io(uint64_t issue, uint64_t complete, uint64_t sector, uint64_t bytes)
{
	struct an_io io;

	memset(&io, 0, sizeof(io));
	io.ts[AN_TS_ISSUE] = issue;
	io.ts[AN_TS_COMPLETE] = complete;
	io.start = issue;
	io.sector = sector;
	io.blk_bytes = bytes;
	io.bytes = bytes;
	io.dev = DEV;
	io.op = AN_OP_READ;
	io.pid = 42;
	io.fd = -1;
	io.offset = -1;
	return io;
}

/* The device's row of op read, and the process's. */
static const struct an_dist_seek *seek_row(const struct an_dist *d, uint32_t pid)
{
	for (size_t i = 0; i < d->nseeks; i++)
		if (d->seeks[i].pid == pid && d->seeks[i].op == AN_OP_READ)
			return &d->seeks[i];
	return NULL;
}

static int test_seek_btt_rule(void)
{
	/*
	 * Issued in this order, 8 sectors each:
	 *   100: first, from sector 0: forward 100 (slot 6)
	 *   108: starts at the previous end (108): 0
	 *   112: overlaps 108..116: 0
	 *  1000: forward from the previous end 120: 880 (slot 9)
	 *   500: before the previous start 1000: backward 500 (slot 8)
	 */
	static const uint64_t sectors[] = { 100, 108, 112, 1000, 500 };
	struct an_names *names;
	struct an_dist d;
	int ret = 1;

	if (an_names_new(&names))
		return expectf(0, __func__, "out of memory");
	an_dist_init(&d, AN_DIST_SEEK, AN_BY_DEVOP, AN_ST_TOTAL, names);
	/* handed over in completion order, the reverse of issue order */
	for (int i = 4; i >= 0; i--) {
		struct an_io io = block_io(10 + 10 * (uint64_t)i, 1000 - 10 * (uint64_t)i, sectors[i], 4096);

		an_dist_add(&d, &io);
	}
	if (!expectf(!an_dist_finish(&d, 0, 1000), __func__, "finish failed")) {
		const struct an_dist_seek *dev = seek_row(&d, 0), *pid = seek_row(&d, 42);

		ret = expectf(dev && pid, __func__, "no rows") ||
		      expectf(dev->zero == 2 && dev->fwd.n == 2 && dev->back.n == 1, __func__,
			      "zero %lu forward %lu backward %lu, want 2 2 1", (unsigned long)dev->zero,
			      (unsigned long)dev->fwd.n, (unsigned long)dev->back.n) ||
		      expectf(dev->fwd.slot[6] == 1 && dev->fwd.slot[9] == 1 && dev->back.slot[8] == 1,
			      __func__, "slots: forward 6:%lu 9:%lu backward 8:%lu", (unsigned long)dev->fwd.slot[6],
			      (unsigned long)dev->fwd.slot[9], (unsigned long)dev->back.slot[8]) ||
		      expectf(!memcmp(&dev->fwd, &pid->fwd, sizeof(dev->fwd)) && pid->zero == 2, __func__,
			      "the one process's sequence differs from the device's");
	}
	an_dist_free(&d);
	an_names_free(names);
	return ret;
}

static int test_depth(void)
{
	/* 0..100 and 50..150 over [0, 200], all + 1000 (0 is "not seen"): depth 0 for 50, 1 for 100, 2 for 50; mean 1 */
	struct an_io a = block_io(1000, 1100, 0, 4096), b = block_io(1050, 1150, 8, 4096);
	struct an_io merged = block_io(1000, 1100, 8, 4096);
	struct an_names *names;
	struct an_dist d;
	int ret = 1;

	if (an_names_new(&names))
		return expectf(0, __func__, "out of memory");
	an_dist_init(&d, AN_DIST_DEPTH, AN_BY_DEVOP, AN_ST_TOTAL, names);
	/* a bio merged into a's request: the same request, not one more in flight */
	merged.flags |= AN_IO_MERGED;
	a.ts[AN_TS_GETRQ] = b.ts[AN_TS_GETRQ] = 990;
	an_dist_add(&d, &a);
	an_dist_add(&d, &merged);
	an_dist_add(&d, &b);
	if (!expectf(!an_dist_finish(&d, 1000, 1200), __func__, "finish failed")) {
		const struct an_dist_depth *dp = &d.depths[0];

		ret = expectf(d.ndepths == 1 && dp->max == 2 && dp->requests == 2, __func__,
			      "%zu devices, max %u, %lu requests", d.ndepths, dp->max,
			      (unsigned long)dp->requests) ||
		      expectf(dp->ns[0] == 50 && dp->ns[1] == 100 && dp->ns[2] == 50, __func__,
			      "time at 0/1/2: %lu %lu %lu, want 50 100 50", (unsigned long)dp->ns[0],
			      (unsigned long)dp->ns[1], (unsigned long)dp->ns[2]) ||
		      expectf(an_dist_depth_mean(&d, dp) == 1.0, __func__, "mean %f, want 1",
			      an_dist_depth_mean(&d, dp));
	}
	an_dist_free(&d);
	an_names_free(names);
	return ret;
}

static int test_hist_and_sizes(void)
{
	/* D2C 0 ns, 1999 ns (1 us: slot 0), 2000 ns (2 us: slot 1), 1 ms (1000 us: slot 9) */
	static const uint64_t d2c[] = { 0, 1999, 2000, 1000000 };
	static const uint64_t bytes[] = { 4096, 4096, 4096, 16384 };
	struct an_names *names;
	struct an_dist d, other;
	const struct an_dist_group *g;
	int ret;

	if (an_names_new(&names))
		return expectf(0, __func__, "out of memory");
	an_dist_init(&d, AN_DIST_SIZE | AN_DIST_HIST, AN_BY_DEVOP, AN_ST_D2C, names);
	an_dist_init(&other, AN_DIST_SIZE | AN_DIST_HIST, AN_BY_DEVOP, AN_ST_D2C, names);
	for (int i = 0; i < 4; i++) {
		struct an_io io = block_io(1000, 1000 + d2c[i], 8 * (uint64_t)i, bytes[i]);

		an_dist_add(i < 2 ? &d : &other, &io);
	}
	ret = expectf(!an_dist_merge(&d, &other) && !an_dist_finish(&d, 0, 2000000), __func__,
		      "merge or finish failed");
	g = &d.groups[0];
	ret = ret ||
	      expectf(d.ngroups == 1 && g->lat.n == 4 && g->lat.slot[0] == 2 && g->lat.slot[1] == 1 &&
		      g->lat.slot[9] == 1, __func__, "latency slots 0:%lu 1:%lu 9:%lu of %lu",
		      (unsigned long)g->lat.slot[0], (unsigned long)g->lat.slot[1],
		      (unsigned long)g->lat.slot[9], (unsigned long)g->lat.n) ||
	      expectf(g->size.slot[12] == 3 && g->size.slot[14] == 1 && g->nsizes == 2 &&
		      g->size_value[0] == 4096 && g->size_count[0] == 3 && g->size_value[1] == 16384 &&
		      g->size_count[1] == 1 && !g->size_other, __func__, "sizes wrong: %u sizes",
		      g->nsizes);
	an_dist_free(&d);
	an_dist_free(&other);
	an_names_free(names);
	return ret;
}

static int test_uncompleted_request(void)
{
	/*
	 * Three sequential 4 KiB reads at sectors 0, 8 and 16; the middle one's
	 * completion is not in the trace. btt sees three D's: three
	 * sequential requests (no seek of 8 sectors over a missing one), three
	 * of 4 KiB; in flight, only the two whose ends are known.
	 */
	struct an_io io[3] = { block_io(100, 150, 0, 4096), block_io(200, 0, 8, 4096),
			       block_io(300, 350, 16, 4096) };
	struct an_names *names;
	struct an_dist d;
	int ret = 1;

	if (an_names_new(&names))
		return expectf(0, __func__, "out of memory");
	io[1].flags |= AN_IO_INCOMPLETE;
	an_dist_init(&d, AN_DIST_SEEK | AN_DIST_DEPTH | AN_DIST_SIZE, AN_BY_DEVOP, AN_ST_TOTAL, names);
	for (int i = 0; i < 3; i++)
		an_dist_add(&d, &io[i]);
	if (!expectf(!an_dist_finish(&d, 0, 1000), __func__, "finish failed")) {
		const struct an_dist_seek *dev = seek_row(&d, 0);

		ret = expectf(dev && dev->zero == 3 && !dev->fwd.n && !dev->back.n, __func__,
			      "seeks: zero %lu forward %lu, want 3 0", dev ? (unsigned long)dev->zero : 0,
			      dev ? (unsigned long)dev->fwd.n : 0) ||
		      expectf(d.ngroups == 1 && d.groups[0].size_count[0] == 3, __func__,
			      "4 KiB counted %lu times, want 3",
			      d.ngroups ? (unsigned long)d.groups[0].size_count[0] : 0) ||
		      expectf(d.ndepths == 1 && d.depths[0].requests == 2 && d.depths[0].ns[1] == 100,
			      __func__, "depth: %lu requests, %lu ns at 1, want 2 and 100",
			      d.ndepths ? (unsigned long)d.depths[0].requests : 0,
			      d.ndepths ? (unsigned long)d.depths[0].ns[1] : 0);
	}
	an_dist_free(&d);
	an_names_free(names);
	return ret;
}

static void to_dist(void *ctx, const struct an_io *io)
{
	an_dist_add(ctx, io);
}

/* fio's 4 KiB read at `sector`: its bio queued, then issued as request rq 10 us later. */
static void read_issued(struct an_corr *c, uint64_t ts, uint64_t bio, uint64_t sector, uint64_t rq)
{
	struct st_ev_block_bio q = { .p = { .bio = bio, .sector = sector, .dev = DEV, .nr_sector = 8,
					    .opf = ST_OP_READ } };
	struct st_ev_block_rq_issue d = { .p = { .rq = rq, .sector = sector, .dev = DEV, .nr_sector = 8,
						 .bytes = 4096, .opf = ST_OP_READ, .nr_bios = 1,
						 .bios = { bio } } };

	head(&q.h, ST_EV_block_bio_queue, sizeof(q), ts);
	an_corr_event(c, &q.h);
	head(&d.h, ST_EV_block_rq_issue, sizeof(d), ts + 10000);
	an_corr_event(c, &d.h);
}

static void completed(struct an_corr *c, uint64_t ts, uint64_t rq, uint64_t sector)
{
	struct st_ev_block_rq_complete e = { .p = { .rq = rq, .sector = sector, .dev = DEV,
						    .nr_sector = 8, .bytes = 4096, .opf = ST_OP_READ } };

	head(&e.h, ST_EV_block_rq_complete, sizeof(e), ts);
	an_corr_event(c, &e.h);
}

/*
 * The I/Os the correlator makes of the events feed() hands it, in d (seeks
 * and sizes, *names its names): 0, else -1 with nothing left to free.
 */
static int correlated(void (*feed)(struct an_corr *), struct an_dist *d, struct an_names **names)
{
	struct an_corr *c;

	if (an_names_new(names))
		return -1;
	an_dist_init(d, AN_DIST_SEEK | AN_DIST_SIZE, AN_BY_DEVOP, AN_ST_TOTAL, *names);
	if (an_corr_new(&c, 0, to_dist, d)) {
		an_dist_free(d);
		an_names_free(*names);
		return -1;
	}
	feed(c);
	an_corr_finish(c);
	an_corr_free(c);
	if (an_dist_finish(d, 0, UINT64_MAX)) {
		an_dist_free(d);
		an_names_free(*names);
		return -1;
	}
	return 0;
}

/*
 * A sequential fio run's recording (t_seek.sh, reports_seek_seq_btt, on a
 * loaded machine): the read at sector 17984, request 0x2580, has no
 * completion in the trace; the kernel reuses 0x2580 for the read at 18000
 * two reads later.
 */
static void reused_request(struct an_corr *c)
{
	read_issued(c, 473806638119, 0xba68, 17976, 0x2400);
	completed(c, 473806661314, 0x2400, 17976);
	read_issued(c, 473806667484, 0xbb08, 17984, 0x2580);
	read_issued(c, 473807024633, 0xbc98, 17992, 0x2700);
	completed(c, 473807049301, 0x2700, 17992);
	read_issued(c, 473807056252, 0xbc78, 18000, 0x2580);
	completed(c, 473807079637, 0x2580, 18000);
}

/*
 * Another such recording: the reads at 10080, 10088 and 10096 have no
 * completion in the trace, and fio's next bios reuse their (on-stack)
 * addresses before the kernel reuses their requests: the bio at 0xc88 of
 * the read at 10080 is also the next read's, at 10104.
 */
static void reused_bio(struct an_corr *c)
{
	read_issued(c, 798114393936, 0xae8, 10072, 0x9300);
	completed(c, 798114401971, 0x9300, 10072);
	read_issued(c, 798114411629, 0xc88, 10080, 0x9480);
	read_issued(c, 798114658421, 0xae8, 10088, 0x9600);
	read_issued(c, 798114862864, 0xc58, 10096, 0x9780);
	read_issued(c, 798114995652, 0xc88, 10104, 0x9a80);
	completed(c, 798115012123, 0x9a80, 10104);
}

/*
 * btt sees a D of every read of such a sequence, each where the one before
 * ended: zero-distance seeks past the first (from sector 0, a forward one
 * in log2 slot `slot`), not a seek of 8 sectors over a missing read.
 */
static int check_sequential(const char *test, void (*feed)(struct an_corr *), uint64_t reads, int slot)
{
	struct an_names *names;
	struct an_dist d;
	const struct an_dist_seek *dev;
	int ret;

	if (correlated(feed, &d, &names))
		return expectf(0, test, "out of memory");
	dev = seek_row(&d, 0);
	ret = expectf(dev && dev->zero == reads - 1 && dev->fwd.n == 1 && dev->fwd.slot[slot] == 1 &&
		      !dev->back.n, test, "seeks: zero %lu forward %lu, want %lu and 1 (the first, from 0)",
		      dev ? (unsigned long)dev->zero : 0, dev ? (unsigned long)dev->fwd.n : 0,
		      (unsigned long)reads - 1) ||
	      expectf(d.ngroups == 1 && d.groups[0].size_count[0] == reads, test,
		      "4 KiB counted %lu times, want %lu",
		      d.ngroups ? (unsigned long)d.groups[0].size_count[0] : 0, (unsigned long)reads);
	an_dist_free(&d);
	an_names_free(names);
	return ret;
}

static int test_reused_request(void)
{
	return check_sequential(__func__, reused_request, 4, 14);	/* 17976: slot 14 */
}

static int test_reused_bio(void)
{
	return check_sequential(__func__, reused_bio, 5, 13);	/* 10072: slot 13 */
}

int main(void)
{
	RUN(test_seek_btt_rule);
	RUN(test_depth);
	RUN(test_hist_and_sizes);
	RUN(test_uncompleted_request);
	RUN(test_reused_request);
	RUN(test_reused_bio);
	return check_failures != 0;
}
