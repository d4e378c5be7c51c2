/* SPDX-License-Identifier: MIT */
/*
 * Hand-built event sequences with known answers, fed straight to the
 * correlator: each scenario states the events a kernel would emit and the
 * stage latencies that must come out.
 */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "analyze/lib/correlate.h"
#include "format/lib/sttrace.h"
#include "tests/check.h"
#include "tests/analyze/collect.h"

static struct an_corr *start(uint64_t stale_ns)
{
	struct an_corr *c = NULL;

	nout = 0;
	memset(out, 0, sizeof(out));
	an_corr_new(&c, stale_ns, collect, NULL);
	return c;
}

static void head(struct st_event_header *h, uint16_t type, uint16_t size, uint64_t ts, uint32_t tid)
{
	h->type = type;
	h->size = size;
	h->ts = ts;
	h->pid = tid;
	h->tid = tid;
}

static void bio(struct an_corr *c, uint16_t type, uint64_t ts, uint32_t tid, uint64_t id,
		uint64_t sector, uint32_t opf)
{
	struct st_ev_block_bio e = { .p = { .bio = id, .sector = sector, .dev = 7 << 20,
					    .nr_sector = 8, .opf = opf } };

	head(&e.h, type, sizeof(e), ts, tid);
	an_corr_event(c, &e.h);
}

/* An empty bio carrying a preflush: what fsync sends to flush the device cache. */
static void flush_bio(struct an_corr *c, uint16_t type, uint64_t ts, uint32_t tid, uint64_t id)
{
	struct st_ev_block_bio e = { .p = { .bio = id, .dev = 7 << 20,
					    .opf = ST_OP_WRITE | ST_F_PREFLUSH | ST_F_SYNC } };

	head(&e.h, type, sizeof(e), ts, tid);
	an_corr_event(c, &e.h);
}

static void split(struct an_corr *c, uint64_t ts, uint32_t tid, uint64_t front, uint64_t parent)
{
	struct st_ev_block_split e = { .p = { .bio = front, .parent = parent, .dev = 7 << 20,
					      .nr_sector = 8 } };

	head(&e.h, ST_EV_block_split, sizeof(e), ts, tid);
	an_corr_event(c, &e.h);
}

/* A request event; b0 is also block_rq_complete's `bio` (the same offset). */
static void rq(struct an_corr *c, uint16_t type, uint64_t ts, uint32_t tid, uint64_t id,
	       uint32_t opf, uint32_t nr_bios, uint64_t b0, uint64_t b1)
{
	_Static_assert(offsetof(struct st_block_rq_issue, bios) ==
		       offsetof(struct st_block_rq_complete, bio), "complete's bio is issue's bios[0]");
	struct st_ev_block_rq_issue e = { .p = { .rq = id, .dev = 7 << 20, .opf = opf,
						 .nr_sector = nr_bios * 8, .nr_bios = nr_bios,
						 .bios = { b0, b1 } } };

	head(&e.h, type, type == ST_EV_block_rq_issue ? sizeof(e) :
	     type == ST_EV_block_rq_complete ? sizeof(struct st_ev_block_rq_complete) :
	     sizeof(struct st_ev_block_rq), ts, tid);
	an_corr_event(c, &e.h);
}

/* thread tid queues a one-bio read at sector, issued 10 ns later as request rq_id */
static void read_issued(struct an_corr *c, uint64_t ts, uint32_t tid, uint64_t id, uint64_t sector,
			uint64_t rq_id)
{
	bio(c, ST_EV_block_bio_queue, ts, tid, id, sector, ST_OP_READ);
	rq(c, ST_EV_block_rq_issue, ts + 10, tid, rq_id, ST_OP_READ, 1, id, 0);
}

static void sys(struct an_corr *c, uint16_t type, uint64_t ts, uint32_t tid, int64_t arg)
{
	struct st_ev_sys_enter e = { .p = { .fd = 3, .count = 4096, .offset = 8192 } };
	struct st_ev_sys_exit x = { .p = { .ret = arg } };

	if ((st_event_kind(type) & ST_KIND_MASK) == ST_KIND_SYS_ENTER) {
		head(&e.h, type, sizeof(e), ts, tid);
		an_corr_event(c, &e.h);
	} else {
		head(&x.h, type, sizeof(x), ts, tid);
		an_corr_event(c, &x.h);
	}
}

static void fs(struct an_corr *c, uint16_t type, uint64_t ts, uint32_t tid)
{
	struct st_ev_fs_io e = { .p = { .ino = 12, .pos = 8192, .count = 4096, .dev = 8 << 20 } };

	head(&e.h, type, sizeof(e), ts, tid);
	an_corr_event(c, &e.h);
}

static void uring(struct an_corr *c, uint16_t type, uint64_t ts, uint32_t tid, uint64_t req, int32_t res)
{
	struct st_ev_uring e = { .p = { .req = req, .res = res, .opcode = 22, .fd = 5 } };

	head(&e.h, type, sizeof(e), ts, tid);
	an_corr_event(c, &e.h);
}

/* Stage s of I/O k, or UINT64_MAX when undefined. */
static uint64_t stage(int k, enum an_stage s)
{
	uint64_t ns;

	return an_io_stage(&out[k], s, &ns) ? ns : UINT64_MAX;
}

static void test_simple_read(void)
{
	struct an_corr *c = start(0);

	sys(c, ST_EV_sys_enter_pread64, 1000, 9, 0);
	fs(c, ST_EV_iomap_dio_rw_begin, 1100, 9);
	bio(c, ST_EV_block_bio_queue, 1200, 9, 0xa, 16, ST_OP_READ);
	bio(c, ST_EV_block_getrq, 1300, 9, 0xa, 16, ST_OP_READ);
	rq(c, ST_EV_block_rq_insert, 1400, 9, 0x100, ST_OP_READ, 0, 0, 0);
	rq(c, ST_EV_block_rq_issue, 1500, 9, 0x100, ST_OP_READ, 1, 0xa, 0);
	rq(c, ST_EV_block_rq_complete, 5500, 0, 0x100, ST_OP_READ, 1, 0, 0);
	fs(c, ST_EV_iomap_dio_complete, 5600, 9);
	sys(c, ST_EV_sys_exit_pread64, 5700, 9, 4096);
	check(nout == 1, "correlate.simple_read.count", "%d I/Os", nout);
	check(stage(0, AN_ST_TOTAL) == 4700 && stage(0, AN_ST_SYS2FS) == 100 &&
	      stage(0, AN_ST_FS) == 4500 &&
	      stage(0, AN_ST_FS2Q) == 100 && stage(0, AN_ST_Q2G) == 100 &&
	      stage(0, AN_ST_G2I) == 100 && stage(0, AN_ST_I2D) == 100 &&
	      stage(0, AN_ST_D2C) == 4000 && stage(0, AN_ST_Q2C) == 4300 &&
	      stage(0, AN_ST_C2RET) == 200, "correlate.simple_read.stages",
	      "total %" PRIu64 " D2C %" PRIu64, stage(0, AN_ST_TOTAL), stage(0, AN_ST_D2C));
	check(out[0].op == AN_OP_READ && out[0].bytes == 4096 && out[0].ino == 12 &&
	      out[0].dev == (7u << 20) && out[0].offset == 8192 && out[0].fd == 3 &&
	      !(out[0].flags & AN_IO_INCOMPLETE), "correlate.simple_read.fields",
	      "op %d bytes %" PRIu64 " flags %#x", out[0].op, out[0].bytes, out[0].flags);
	an_corr_free(c);
}

/*
 * A stamped issue of request 0x200 as the cursor resolves it
 * (ST_CURSOR_STAMPED): its allocation at getrq for bios[first], and a
 * merge of the other bio.
 */
static void issue_stamped(struct an_corr *c, uint64_t ts, uint64_t b0, uint64_t b1, uint32_t first,
			  uint64_t getrq)
{
	struct st_ev_block_rq_issue_stamped e = { .p = { .rq = 0x200, .dev = 7 << 20,
							 .opf = ST_OP_WRITE, .nr_sector = 16,
							 .nr_bios = 2, .bios = { b0, b1 } } };

	e.p.stamped = ST_STAMPED_GETRQ | ST_STAMPED_FIRST_BIO(first) | ST_STAMPED_MERGED(1 - first);
	e.p.getrq_ago = (uint32_t)(ts - getrq);
	head(&e.h, ST_EV_block_rq_issue_stamped, sizeof(e), ts, 10);
	an_corr_event(c, &e.h);
}

/*
 * Bio B (thread 11) merges into the request bio A (thread 10) allocated;
 * `stamped`: the allocation and the merge told by the issue, resolved.
 */
static void test_merge(uint16_t merge_type, const char *name, int stamped)
{
	struct an_corr *c = start(0);
	int back = merge_type == ST_EV_block_bio_backmerge;
	char n[64];
	int a, b;

	bio(c, ST_EV_block_bio_queue, 100, 10, 0xa, 16, ST_OP_WRITE);
	if (!stamped)
		bio(c, ST_EV_block_getrq, 110, 10, 0xa, 16, ST_OP_WRITE);
	bio(c, ST_EV_block_bio_queue, 120, 11, 0xb, back ? 24 : 8, ST_OP_WRITE);
	if (!stamped)
		bio(c, merge_type, 121, 11, 0xb, 24, ST_OP_WRITE);
	rq(c, ST_EV_block_rq_insert, 130, 10, 0x200, ST_OP_WRITE, 0, 0, 0);
	if (stamped)
		issue_stamped(c, 200, back ? 0xa : 0xb, back ? 0xb : 0xa, back ? 0 : 1, 110);
	else
		rq(c, ST_EV_block_rq_issue, 200, 10, 0x200, ST_OP_WRITE, 2, back ? 0xa : 0xb,
		   back ? 0xb : 0xa);
	rq(c, ST_EV_block_rq_complete, 1000, 0, 0x200, ST_OP_WRITE, 2, 0, 0);
	an_corr_finish(c);
	snprintf(n, sizeof(n), "correlate.%s.count", name);
	check(nout == 2, n, "%d I/Os", nout);
	a = out[0].tid == 10 ? 0 : 1;
	b = 1 - a;
	snprintf(n, sizeof(n), "correlate.%s.stages", name);
	check(stage(a, AN_ST_Q2C) == 900 && stage(b, AN_ST_Q2C) == 880 &&
	      stage(a, AN_ST_D2C) == 800 && stage(b, AN_ST_D2C) == 800 &&
	      stage(b, AN_ST_Q2G) == UINT64_MAX && stage(a, AN_ST_Q2G) == 10, n,
	      "Q2C %" PRIu64 "/%" PRIu64, stage(a, AN_ST_Q2C), stage(b, AN_ST_Q2C));
	snprintf(n, sizeof(n), "correlate.%s.flags", name);
	check((out[b].flags & AN_IO_MERGED) && !(out[a].flags & AN_IO_MERGED) &&
	      !((out[a].flags | out[b].flags) & AN_IO_INCOMPLETE) && out[b].op == AN_OP_WRITE,
	      n, "flags %#x %#x", out[a].flags, out[b].flags);
	check(an_corr_stats(c)->merges == 1, "correlate.merge_stat", "merges %" PRIu64,
	      an_corr_stats(c)->merges);
	an_corr_free(c);
}

/* A request event at a sector, with up to ST_RQ_BIOS of its chain. */
static void rq_at(struct an_corr *c, uint16_t type, uint64_t ts, uint64_t id, uint64_t sector,
		  uint32_t nr_sector, uint32_t nr_bios, const uint64_t *bios)
{
	struct st_ev_block_rq_issue e = { .p = { .rq = id, .sector = sector, .dev = 7 << 20,
						 .opf = ST_OP_WRITE, .nr_sector = nr_sector,
						 .bytes = nr_sector * 512, .nr_bios = nr_bios } };

	for (uint32_t i = 0; bios && i < nr_bios && i < ST_RQ_BIOS; i++)
		e.p.bios[i] = bios[i];
	head(&e.h, type, type == ST_EV_block_rq_issue ? sizeof(e) :
	     type == ST_EV_block_rq_complete ? sizeof(struct st_ev_block_rq_complete) :
	     sizeof(struct st_ev_block_rq), ts, 0);
	an_corr_event(c, &e.h);
}

/*
 * Request 0x400 (bio B, sector 32) is merged into request 0x300 (bio A0 and
 * A1..A3 merged into it, sectors 0..31) before either is issued, as
 * mq-deadline merges adjacent requests at insert: the kernel counts 4
 * merges, and 0x300's chain of 5 stores A0..A3 only. B completes with it,
 * its I/O merged; 0x400 is free, and its next use is a request of its own
 * (inserted at 520, not at its first insert).
 */
static void test_rq_merge(void)
{
	static const uint64_t chain[] = { 0xa0, 0xa1, 0xa2, 0xa3 };
	struct an_corr *c = start(0);
	uint32_t merges = 0;
	int i, complete = 0, b_merged = 0;

	for (i = 0; i < 4; i++) {
		bio(c, ST_EV_block_bio_queue, 100 + i * 10, 10 + i, chain[i], i * 8, ST_OP_WRITE);
		bio(c, i ? ST_EV_block_bio_backmerge : ST_EV_block_getrq, 101 + i * 10, 10 + i,
		    chain[i], i * 8, ST_OP_WRITE);
	}
	rq_at(c, ST_EV_block_rq_insert, 150, 0x300, 0, 32, 0, NULL);
	bio(c, ST_EV_block_bio_queue, 160, 14, 0xb, 32, ST_OP_WRITE);
	bio(c, ST_EV_block_getrq, 161, 14, 0xb, 32, ST_OP_WRITE);
	rq_at(c, ST_EV_block_rq_insert, 170, 0x400, 32, 8, 0, NULL);
	rq_at(c, ST_EV_block_rq_merge, 170, 0x400, 32, 8, 1, NULL);
	rq_at(c, ST_EV_block_rq_issue, 200, 0x300, 0, 40, 5, chain);
	rq_at(c, ST_EV_block_rq_complete, 300, 0x300, 0, 40, 5, chain);
	bio(c, ST_EV_block_bio_queue, 500, 15, 0xc, 100, ST_OP_WRITE);
	bio(c, ST_EV_block_getrq, 510, 15, 0xc, 100, ST_OP_WRITE);
	rq_at(c, ST_EV_block_rq_insert, 520, 0x400, 100, 8, 0, NULL);
	rq_at(c, ST_EV_block_rq_issue, 600, 0x400, 100, 8, 1, (const uint64_t[]){ 0xc });
	rq_at(c, ST_EV_block_rq_complete, 700, 0x400, 100, 8, 1, NULL);
	an_corr_finish(c);
	for (i = 0; i < nout && i < MAX_OUT; i++) {
		merges += out[i].merges;
		complete += !(out[i].flags & AN_IO_INCOMPLETE) && out[i].ts[AN_TS_COMPLETE] ==
			    (out[i].tid == 15 ? 700u : 300u);
		b_merged += out[i].tid == 14 && out[i].merges == 1;
	}
	check(nout == 6 && complete == 6 && merges == 4 && an_corr_stats(c)->merges == 4 &&
	      b_merged,
	      "correlate.rq_merge.counted", "%d I/Os, %d complete, merges %u (stats %" PRIu64 ")",
	      nout, complete, merges, an_corr_stats(c)->merges);
	check(nout == 6 && out[5].tid == 15 && stage(5, AN_ST_G2I) == 10,
	      "correlate.rq_merge.request_freed", "the next request at 0x400: G2I %" PRIu64,
	      nout == 6 ? stage(5, AN_ST_G2I) : 0);
	an_corr_free(c);
}

/* Parent P is split: front S goes first, the remainder P is queued again. */
static void test_split(void)
{
	struct an_corr *c = start(0);

	sys(c, ST_EV_sys_enter_pread64, 1000, 9, 0);
	bio(c, ST_EV_block_bio_queue, 1100, 9, 0x90, 0, ST_OP_READ);
	split(c, 1110, 9, 0x50, 0x90);
	bio(c, ST_EV_block_getrq, 1120, 9, 0x50, 0, ST_OP_READ);
	rq(c, ST_EV_block_rq_issue, 1130, 9, 0x301, ST_OP_READ, 1, 0x50, 0);
	bio(c, ST_EV_block_bio_queue, 1140, 9, 0x90, 8, ST_OP_READ);
	bio(c, ST_EV_block_getrq, 1150, 9, 0x90, 8, ST_OP_READ);
	rq(c, ST_EV_block_rq_issue, 1160, 9, 0x302, ST_OP_READ, 1, 0x90, 0);
	rq(c, ST_EV_block_rq_complete, 2000, 0, 0x301, ST_OP_READ, 1, 0, 0);
	check(nout == 0, "correlate.split.waits_for_parent", "emitted after the front piece");
	rq(c, ST_EV_block_rq_complete, 3000, 0, 0x302, ST_OP_READ, 1, 0, 0);
	sys(c, ST_EV_sys_exit_pread64, 3100, 9, 8192);
	check(nout == 1 && out[0].nbios == 2 && (out[0].flags & AN_IO_SPLIT) &&
	      !(out[0].flags & AN_IO_INCOMPLETE), "correlate.split.joined",
	      "%d I/Os, %u bios, flags %#x", nout, out[0].nbios, out[0].flags);
	check(stage(0, AN_ST_Q2C) == 1900 && stage(0, AN_ST_D2C) == 1870 &&
	      stage(0, AN_ST_C2RET) == 100 && out[0].bytes == 8192, "correlate.split.stages",
	      "Q2C %" PRIu64 " D2C %" PRIu64, stage(0, AN_ST_Q2C), stage(0, AN_ST_D2C));
	an_corr_free(c);
}

static void test_requeue(void)
{
	struct an_corr *c = start(0);

	bio(c, ST_EV_block_bio_queue, 100, 4, 0xa, 0, ST_OP_READ);
	bio(c, ST_EV_block_getrq, 110, 4, 0xa, 0, ST_OP_READ);
	rq(c, ST_EV_block_rq_issue, 200, 4, 0x400, ST_OP_READ, 1, 0xa, 0);
	rq(c, ST_EV_block_rq_requeue, 300, 0, 0x400, ST_OP_READ, 1, 0, 0);
	rq(c, ST_EV_block_rq_insert, 310, 0, 0x400, ST_OP_READ, 1, 0, 0);
	rq(c, ST_EV_block_rq_issue, 500, 0, 0x400, ST_OP_READ, 1, 0xa, 0);
	rq(c, ST_EV_block_rq_complete, 900, 0, 0x400, ST_OP_READ, 1, 0, 0);
	check(nout == 1 && out[0].requeues == 1 && out[0].requeue_ns == 300,
	      "correlate.requeue.counted", "%d I/Os, %u requeues, %" PRIu64 " ns",
	      nout, out[0].requeues, out[0].requeue_ns);
	check(stage(0, AN_ST_D2C) == 400 && stage(0, AN_ST_Q2C) == 800,
	      "correlate.requeue.stages", "D2C %" PRIu64, stage(0, AN_ST_D2C));
	an_corr_free(c);
}

/* fsync: a data write, then a flush request without bios from the same thread. */
static void test_fsync(void)
{
	struct an_corr *c = start(0);

	sys(c, ST_EV_sys_enter_fsync, 1000, 7, 0);
	fs(c, ST_EV_ext4_sync_file_enter, 1010, 7);
	bio(c, ST_EV_block_bio_queue, 1020, 7, 0xa, 0, ST_OP_WRITE | ST_F_SYNC);
	bio(c, ST_EV_block_getrq, 1025, 7, 0xa, 0, ST_OP_WRITE);
	rq(c, ST_EV_block_rq_issue, 1030, 7, 0x500, ST_OP_WRITE, 1, 0xa, 0);
	rq(c, ST_EV_block_rq_complete, 2000, 0, 0x500, ST_OP_WRITE, 1, 0, 0);
	rq(c, ST_EV_block_rq_issue, 2010, 7, 0x501, ST_OP_FLUSH, 0, 0, 0);
	rq(c, ST_EV_block_rq_complete, 3000, 0, 0x501, ST_OP_FLUSH, 0, 0, 0);
	fs(c, ST_EV_ext4_sync_file_exit, 3010, 7);
	sys(c, ST_EV_sys_exit_fsync, 3020, 7, 0);
	/* A flush outside any fsync is an I/O of its own. */
	rq(c, ST_EV_block_rq_issue, 4000, 3, 0x502, ST_OP_FLUSH, 0, 0, 0);
	rq(c, ST_EV_block_rq_complete, 4500, 0, 0x502, ST_OP_FLUSH, 0, 0, 0);
	check(nout == 2 && out[0].op == AN_OP_FSYNC && out[0].bytes == 4096 &&
	      stage(0, AN_ST_TOTAL) == 2020 && out[0].ts[AN_TS_COMPLETE] == 3000 &&
	      !(out[0].flags & AN_IO_INCOMPLETE), "correlate.fsync.flush_joined",
	      "%d I/Os, op %d, total %" PRIu64, nout, out[0].op, stage(0, AN_ST_TOTAL));
	check(nout == 2 && out[1].op == AN_OP_FLUSH && stage(1, AN_ST_D2C) == 500 &&
	      stage(1, AN_ST_TOTAL) == 500, "correlate.flush.own_io", "op %d", out[1].op);
	an_corr_free(c);
}

/* A later event delivered early between two interleaved I/Os. */
static void test_out_of_order(void)
{
	struct an_corr *c = start(0);

	bio(c, ST_EV_block_bio_queue, 100, 1, 0xa, 0, ST_OP_READ);
	bio(c, ST_EV_block_bio_queue, 105, 2, 0xb, 64, ST_OP_READ);
	rq(c, ST_EV_block_rq_issue, 130, 2, 0x602, ST_OP_READ, 1, 0xb, 0);
	rq(c, ST_EV_block_rq_issue, 120, 1, 0x601, ST_OP_READ, 1, 0xa, 0);
	rq(c, ST_EV_block_rq_complete, 500, 0, 0x601, ST_OP_READ, 1, 0, 0);
	rq(c, ST_EV_block_rq_complete, 600, 0, 0x602, ST_OP_READ, 1, 0, 0);
	check(an_corr_stats(c)->out_of_order == 1, "correlate.out_of_order.counted",
	      "%" PRIu64, an_corr_stats(c)->out_of_order);
	check(nout == 2 && out[0].tid == 1 && stage(0, AN_ST_D2C) == 380 &&
	      out[1].tid == 2 && stage(1, AN_ST_D2C) == 470, "correlate.out_of_order.joined",
	      "%d I/Os", nout);
	an_corr_free(c);
}

static void test_incomplete(void)
{
	struct an_corr *c = start(0);
	const struct an_corr_stats *st = an_corr_stats(c);

	/* Begun before the trace: an exit, a completion, a request of unknown bios. */
	sys(c, ST_EV_sys_exit_pread64, 50, 9, 4096);
	rq(c, ST_EV_block_rq_complete, 60, 0, 0x700, ST_OP_READ, 1, 0, 0);
	rq(c, ST_EV_block_rq_issue, 70, 3, 0x701, ST_OP_READ, 1, 0xdead, 0);
	rq(c, ST_EV_block_rq_complete, 80, 0, 0x701, ST_OP_READ, 1, 0, 0);
	/* Open at the end: issued (as btt counts its D), never completed. */
	sys(c, ST_EV_sys_enter_pread64, 100, 9, 0);
	read_issued(c, 110, 9, 0xa, 0, 0x702);
	check(nout == 0, "correlate.incomplete.not_emitted_early", "%d", nout);
	an_corr_finish(c);
	check(st->orphan_exits == 1 && st->orphan_completions == 1 && st->orphan_requests == 1,
	      "correlate.incomplete.start", "exits %" PRIu64 " completions %" PRIu64
	      " requests %" PRIu64, st->orphan_exits, st->orphan_completions, st->orphan_requests);
	check(nout == 1 && (out[0].flags & AN_IO_INCOMPLETE) && st->incomplete == 1 &&
	      out[0].ts[AN_TS_ISSUE] == 120 && out[0].ts[AN_TS_QUEUE] == 110,
	      "correlate.incomplete.end", "%d I/Os, flags %#x, issued at %" PRIu64, nout,
	      out[0].flags, out[0].ts[AN_TS_ISSUE]);
	an_corr_free(c);
}

/*
 * The kernel now and then emits no completion for a request, then reuses the
 * request for the next I/O: the first I/O is incomplete, and the second's
 * completion is the second's alone.
 */
static void test_lost_completion(void)
{
	struct an_corr *c = start(0);
	const struct an_corr_stats *st = an_corr_stats(c);

	sys(c, ST_EV_sys_enter_pread64, 100, 9, 0);
	read_issued(c, 110, 9, 0xa, 0, 0x800);
	sys(c, ST_EV_sys_exit_pread64, 200, 9, 4096);
	sys(c, ST_EV_sys_enter_pread64, 300, 9, 0);
	bio(c, ST_EV_block_bio_queue, 310, 9, 0xb, 64, ST_OP_READ);
	rq(c, ST_EV_block_rq_insert, 315, 9, 0x800, ST_OP_READ, 0, 0, 0);
	rq(c, ST_EV_block_rq_issue, 320, 9, 0x800, ST_OP_READ, 1, 0xb, 0);
	rq(c, ST_EV_block_rq_complete, 400, 0, 0x800, ST_OP_READ, 1, 0, 0);
	sys(c, ST_EV_sys_exit_pread64, 410, 9, 4096);
	/*
	 * The first pread was seen from entry to exit: complete, with its block
	 * stages missing; its bio, handed off at the exit, is the incomplete I/O.
	 */
	check(nout == 3 && !(out[0].flags & AN_IO_INCOMPLETE) && (out[0].flags & AN_IO_UNJOINED) &&
	      stage(0, AN_ST_TOTAL) == 100 && out[0].ts[AN_TS_COMPLETE] == 0 &&
	      (out[1].flags & AN_IO_INCOMPLETE) && !(out[1].flags & AN_IO_SYSCALL) &&
	      out[1].ts[AN_TS_QUEUE] == 110 && st->incomplete == 1,
	      "correlate.lost_completion.first_incomplete",
	      "%d I/Os, first: flags %#x, completed at %" PRIu64, nout, nout ? out[0].flags : 0,
	      nout ? out[0].ts[AN_TS_COMPLETE] : 0);
	check(nout == 3 && !(out[2].flags & (AN_IO_INCOMPLETE | AN_IO_UNJOINED)) &&
	      stage(2, AN_ST_D2C) == 80 && out[2].ts[AN_TS_INSERT] == 315,
	      "correlate.lost_completion.second_alone", "D2C %" PRIu64,
	      nout == 3 ? stage(2, AN_ST_D2C) : 0);
	check(st->missing_completions == 1, "correlate.lost_completion.counted",
	      "%" PRIu64 " missing completions, want 1", st->missing_completions);
	an_corr_free(c);
}

/*
 * An fsync recorded before block_rq_complete named its bio: the empty
 * PREFLUSH bio's request completes unnamed. The fsync, seen from entry to
 * exit, is complete with its total; only its block stages are missing.
 */
static void test_fsync_unjoined(void)
{
	struct an_corr *c = start(0);

	sys(c, ST_EV_sys_enter_fsync, 1000, 7, 0);
	fs(c, ST_EV_ext4_sync_file_enter, 1010, 7);
	flush_bio(c, ST_EV_block_bio_queue, 1020, 7, 0xf);
	flush_bio(c, ST_EV_block_getrq, 1025, 7, 0xf);
	rq(c, ST_EV_block_rq_complete, 1500, 0, 0x601, ST_OP_WRITE | ST_F_SYNC, 0, 0, 0);
	fs(c, ST_EV_ext4_sync_file_exit, 1590, 7);
	sys(c, ST_EV_sys_exit_fsync, 1600, 7, 0);
	check(nout == 1 && out[0].op == AN_OP_FSYNC && !(out[0].flags & AN_IO_INCOMPLETE) &&
	      (out[0].flags & AN_IO_UNJOINED) && stage(0, AN_ST_TOTAL) == 600 &&
	      stage(0, AN_ST_FS) == 580 && stage(0, AN_ST_D2C) == UINT64_MAX,
	      "correlate.fsync_unjoined.complete", "%d I/Os, flags %#x, total %" PRIu64, nout,
	      nout ? out[0].flags : 0, stage(0, AN_ST_TOTAL));
	an_corr_finish(c);
	check(nout == 2 && out[1].op == AN_OP_FLUSH && (out[1].flags & AN_IO_INCOMPLETE) &&
	      an_corr_stats(c)->incomplete == 1, "correlate.fsync_unjoined.bio_apart",
	      "%d I/Os, second op %d flags %#x", nout, nout > 1 ? out[1].op : -1,
	      nout > 1 ? out[1].flags : 0);
	an_corr_free(c);
}

/* block_rq_inode: request rq carries the page cache of inode ino on device 7:0. */
static void rq_inode(struct an_corr *c, uint64_t ts, uint32_t tid, uint64_t id, uint64_t ino)
{
	struct st_ev_block_rq_inode e = { .p = { .rq = id, .ino = ino, .dev = 7 << 20,
						 .disk = 7 << 20 } };

	head(&e.h, ST_EV_block_rq_inode, sizeof(e), ts, tid);
	an_corr_event(c, &e.h);
}

/*
 * Writeback named with its file, and attributed by it: while an fsync of
 * inode 12 is open, a kworker writes back two requests of inode 12 (the
 * fsync's wb: 1100..1300), one of inode 13 (another file's writeback:
 * neither wb nor jnl of this fsync) and one of no file (the journal: jnl,
 * 1150..1350). The writeback I/Os carry their inode; the syscall's own
 * bio keeps its fd and gets no inode from its request.
 */
/*
 * A pread from a task in cgroup v2 group 30 whose request the kernel charged
 * to blkio group 17 (block_rq_cgroup after its issue): the I/O is 17's, and
 * keeps its call's cgroup; the next one, charged to the root (no record), 0.
 */
static void test_rq_cgroup(void)
{
	struct an_corr *c = start(0);
	struct st_ev_sys_enter enter = { .p = { .fd = 3, .count = 4096, .offset = 0, .cgroup = 30 } };
	struct st_ev_block_rq_cgroup cg = { .p = { .rq = 0x900, .blkcg = 17, .dev = 7 << 20 } };

	head(&enter.h, ST_EV_sys_enter_pread64, sizeof(enter), 100, 9);
	an_corr_event(c, &enter.h);
	read_issued(c, 110, 9, 0xa, 0, 0x900);
	head(&cg.h, ST_EV_block_rq_cgroup, sizeof(cg), 120, 9);
	an_corr_event(c, &cg.h);
	rq(c, ST_EV_block_rq_complete, 200, 0, 0x900, ST_OP_READ, 1, 0xa, 0);
	sys(c, ST_EV_sys_exit_pread64, 210, 9, 4096);
	read_issued(c, 300, 9, 0xb, 8, 0x900);
	rq(c, ST_EV_block_rq_complete, 400, 0, 0x900, ST_OP_READ, 1, 0xb, 0);
	an_corr_finish(c);
	check(nout == 2 && out[0].charged == 17 && out[0].cgroup == 30 && out[1].charged == 0,
	      "correlate.rq_cgroup", "%d I/Os, charged %" PRIu64 " cgroup %" PRIu64 ", then %" PRIu64,
	      nout, out[0].charged, out[0].cgroup, nout > 1 ? out[1].charged : 0);
	an_corr_free(c);
}

static void test_writeback_inode(void)
{
	struct an_corr *c = start(0);
	struct st_ev_fs_io sync_enter = { .p = { .ino = 12, .dev = 7 << 20 } };
	int k, named = 0, fsync = -1;

	sys(c, ST_EV_sys_enter_fsync, 1000, 7, 0);
	head(&sync_enter.h, ST_EV_ext4_sync_file_enter, sizeof(sync_enter), 1010, 7);
	an_corr_event(c, &sync_enter.h);
	bio(c, ST_EV_block_bio_queue, 1100, 50, 0xa, 100, ST_OP_WRITE);
	rq(c, ST_EV_block_rq_issue, 1110, 50, 0x611, ST_OP_WRITE, 1, 0xa, 0);
	rq_inode(c, 1110, 50, 0x611, 12);
	bio(c, ST_EV_block_bio_queue, 1120, 50, 0xb, 200, ST_OP_WRITE);
	rq(c, ST_EV_block_rq_issue, 1125, 50, 0x612, ST_OP_WRITE, 1, 0xb, 0);
	rq_inode(c, 1125, 50, 0x612, 13);
	bio(c, ST_EV_block_bio_queue, 1150, 51, 0xc, 300, ST_OP_WRITE);
	rq(c, ST_EV_block_rq_issue, 1155, 51, 0x613, ST_OP_WRITE, 1, 0xc, 0);
	bio(c, ST_EV_block_bio_queue, 1160, 50, 0xd, 400, ST_OP_WRITE);
	rq(c, ST_EV_block_rq_issue, 1165, 50, 0x614, ST_OP_WRITE, 1, 0xd, 0);
	rq_inode(c, 1165, 50, 0x614, 12);
	rq(c, ST_EV_block_rq_complete, 1200, 0, 0x611, ST_OP_WRITE, 1, 0xa, 0);
	rq(c, ST_EV_block_rq_complete, 1250, 0, 0x612, ST_OP_WRITE, 1, 0xb, 0);
	rq(c, ST_EV_block_rq_complete, 1300, 0, 0x614, ST_OP_WRITE, 1, 0xd, 0);
	rq(c, ST_EV_block_rq_complete, 1350, 0, 0x613, ST_OP_WRITE, 1, 0xc, 0);
	sys(c, ST_EV_sys_exit_fsync, 1400, 7, 0);
	for (k = 0; k < nout; k++) {
		if (out[k].op == AN_OP_FSYNC)
			fsync = k;
		else
			named += (out[k].ino == 12 || out[k].ino == 13) && out[k].fs_dev == 7u << 20;
	}
	check(nout == 5 && named == 3, "correlate.writeback_inode.named", "%d I/Os, %d named", nout, named);
	check(fsync >= 0 && stage(fsync, AN_ST_WB) == 200 && stage(fsync, AN_ST_JNL) == 200,
	      "correlate.writeback_inode.fsync_parts", "wb %" PRIu64 " jnl %" PRIu64,
	      fsync >= 0 ? stage(fsync, AN_ST_WB) : 0, fsync >= 0 ? stage(fsync, AN_ST_JNL) : 0);
	sys(c, ST_EV_sys_enter_pread64, 2000, 9, 0);
	read_issued(c, 2010, 9, 0xe, 16, 0x620);
	rq_inode(c, 2020, 9, 0x620, 14);
	rq(c, ST_EV_block_rq_complete, 2100, 0, 0x620, ST_OP_READ, 1, 0xe, 0);
	sys(c, ST_EV_sys_exit_pread64, 2110, 9, 4096);
	check(nout == 6 && out[5].fd == 3 && out[5].ino == 0, "correlate.writeback_inode.syscall_keeps_fd",
	      "%d I/Os, ino %" PRIu64, nout, nout == 6 ? out[5].ino : 0);
	an_corr_free(c);
}

/*
 * Reads blk-throttle held back: two threads of one cgroup, which read the
 * device before, each wait in pread64; the throttle's worker (tid 60)
 * queues their bios later, in the order they came (ST_F_HELD). Each bio
 * joins the oldest read still waiting without a bio of a thread whose last
 * bio was on that device, which keeps its device, and sys2q is the wait.
 * An older read of a thread that never queued a bio (a pipe's reader) is
 * passed over; a worker's bio without the flag (writeback) joins nothing,
 * nor does a held bio of another op.
 */
static void test_held_back(void)
{
	struct an_corr *c = start(0);
	const uint32_t held = ST_OP_READ | ST_F_SYNC | ST_F_HELD;

	sys(c, ST_EV_sys_enter_read, 500, 12, 0);
	for (uint32_t t = 9; t <= 10; t++) {
		sys(c, ST_EV_sys_enter_pread64, 600 + t, t, 0);
		bio(c, ST_EV_block_bio_queue, 610 + t, t, 0xc0 + t, 8, ST_OP_READ);
		rq(c, ST_EV_block_rq_issue, 620 + t, t, 0x1c0 + t, ST_OP_READ, 1, 0xc0 + t, 0);
		rq(c, ST_EV_block_rq_complete, 700 + t, 0, 0x1c0 + t, ST_OP_READ, 1, 0xc0 + t, 0);
		sys(c, ST_EV_sys_exit_pread64, 710 + t, t, 4096);
	}
	sys(c, ST_EV_sys_enter_pread64, 1000, 9, 0);
	sys(c, ST_EV_sys_enter_pread64, 1100, 10, 0);
	sys(c, ST_EV_sys_enter_pwrite64, 1150, 11, 0);
	bio(c, ST_EV_block_bio_queue, 1200, 60, 0xe, 300, ST_OP_WRITE);
	bio(c, ST_EV_block_bio_queue, 50000, 60, 0xa, 16, held);
	rq(c, ST_EV_block_rq_issue, 50010, 60, 0x100, ST_OP_READ, 1, 0xa, 0);
	bio(c, ST_EV_block_bio_queue, 90000, 60, 0xb, 32, held);
	rq(c, ST_EV_block_rq_issue, 90010, 60, 0x101, ST_OP_READ, 1, 0xb, 0);
	rq(c, ST_EV_block_rq_complete, 50100, 0, 0x100, ST_OP_READ, 1, 0xa, 0);
	sys(c, ST_EV_sys_exit_pread64, 50200, 9, 4096);
	rq(c, ST_EV_block_rq_complete, 90100, 0, 0x101, ST_OP_READ, 1, 0xb, 0);
	sys(c, ST_EV_sys_exit_pread64, 90200, 10, 4096);
	check(nout == 4 && out[2].tid == 9 && out[2].dev == 7u << 20 && out[2].sector == 16 &&
	      stage(2, AN_ST_SYS2Q) == 49000 && stage(2, AN_ST_TOTAL) == 49200 &&
	      stage(2, AN_ST_Q2C) == 100 && out[3].tid == 10 && out[3].sector == 32 &&
	      stage(3, AN_ST_SYS2Q) == 88900 && stage(3, AN_ST_D2C) == 90,
	      "correlate.held_back.joined", "%d I/Os, sys2q %" PRIu64 " %" PRIu64, nout,
	      stage(2, AN_ST_SYS2Q), stage(3, AN_ST_SYS2Q));
	sys(c, ST_EV_sys_exit_pwrite64, 90300, 11, 4096);
	sys(c, ST_EV_sys_exit_read, 90400, 12, 1);
	check(nout == 6 && out[4].tid == 11 && !out[4].dev && stage(4, AN_ST_SYS2Q) == UINT64_MAX &&
	      out[5].tid == 12 && !out[5].dev, "correlate.held_back.not_others",
	      "%d I/Os, write dev %u", nout, nout == 6 ? out[4].dev : 0);
	an_corr_free(c);
}

/* thread tid enters pread64 of a raw block device at offset */
static void pread_at(struct an_corr *c, uint64_t ts, uint32_t tid, int64_t offset)
{
	struct st_ev_sys_enter e = { .p = { .fd = 3, .count = 4096, .offset = offset } };

	head(&e.h, ST_EV_sys_enter_pread64, sizeof(e), ts, tid);
	an_corr_event(c, &e.h);
}

/*
 * Reads of a raw block device whose requests another thread dispatched:
 * thread 21's call ran the queue and issued thread 20's request too (its
 * bio at sector 16, thread 20's offset 8192), and kblockd (tid 99, in no
 * call) issued thread 22's (sector 48, offset 24576). Each bio joins the
 * call at its offset: three reads with their own sector, none without
 * block stages, no I/O of the block layer alone. Then threads 23 and 24
 * read the same offset at once (two jobs of one seed), each issuing its
 * own request: each keeps its own.
 */
static void test_raw_device_dispatched(void)
{
	struct an_corr *c = start(0);

	pread_at(c, 1000, 20, 8192);
	pread_at(c, 1010, 21, 16384);
	read_issued(c, 1100, 21, 0xa, 32, 0x100);
	read_issued(c, 1120, 21, 0xb, 16, 0x101);
	pread_at(c, 2000, 22, 24576);
	read_issued(c, 2100, 99, 0xc, 48, 0x102);
	rq(c, ST_EV_block_rq_complete, 1500, 0, 0x100, ST_OP_READ, 1, 0xa, 0);
	rq(c, ST_EV_block_rq_complete, 1600, 0, 0x101, ST_OP_READ, 1, 0xb, 0);
	sys(c, ST_EV_sys_exit_pread64, 1700, 21, 4096);
	sys(c, ST_EV_sys_exit_pread64, 1800, 20, 4096);
	rq(c, ST_EV_block_rq_complete, 2500, 0, 0x102, ST_OP_READ, 1, 0xc, 0);
	sys(c, ST_EV_sys_exit_pread64, 2600, 22, 4096);
	pread_at(c, 3000, 23, 40960);
	pread_at(c, 3010, 24, 40960);
	read_issued(c, 3100, 23, 0xd, 80, 0x103);
	read_issued(c, 3120, 24, 0xe, 80, 0x104);
	rq(c, ST_EV_block_rq_complete, 3500, 0, 0x103, ST_OP_READ, 1, 0xd, 0);
	rq(c, ST_EV_block_rq_complete, 3600, 0, 0x104, ST_OP_READ, 1, 0xe, 0);
	sys(c, ST_EV_sys_exit_pread64, 3700, 23, 4096);
	sys(c, ST_EV_sys_exit_pread64, 3800, 24, 4096);
	an_corr_finish(c);
	check(nout == 5 && out[3].tid == 23 && out[3].nbios == 1 && stage(3, AN_ST_D2C) == 390 &&
	      out[4].tid == 24 && out[4].nbios == 1 && stage(4, AN_ST_D2C) == 470,
	      "correlate.raw_device_same_offset", "%d I/Os", nout);
	check(nout >= 3 && out[0].tid == 21 && out[0].sector == 32 && out[0].nbios == 1 &&
	      out[1].tid == 20 && out[1].sector == 16 && stage(1, AN_ST_D2C) == 470 &&
	      out[2].tid == 22 && out[2].sector == 48 && stage(2, AN_ST_D2C) == 390,
	      "correlate.raw_device_dispatched", "%d I/Os: tid %u sector %" PRIu64 ", tid %u sector %" PRIu64,
	      nout, out[0].tid, out[0].sector, nout > 1 ? out[1].tid : 0, nout > 1 ? out[1].sector : 0);
	an_corr_free(c);
}

/*
 * Two threads read the same offset of a raw block device at once (fio jobs
 * of one offset sequence), and a request is dispatched by a thread other
 * than its own: each call still gets one bio, the one at its offset.
 *   - 40 and 41 at sector 96: 41 issues its own; kblockd (99) then issues
 *     40's, whose offset the newer call 41 holds, its bio already queued.
 *   - 42 and 43 at sector 128: 42 issues its own, then runs the queue and
 *     issues 43's too, in a call at that offset with its bio queued.
 *   - 44 and 45 at sector 160: 45 reads and returns; kblockd then issues
 *     44's, the offset's newer call gone.
 */
static void test_raw_device_same_offset_dispatched(void)
{
	struct an_corr *c = start(0);
	int n, ok;

	pread_at(c, 1000, 40, 96 * 512);
	pread_at(c, 1010, 41, 96 * 512);
	read_issued(c, 1100, 41, 0xa, 96, 0x100);
	read_issued(c, 1120, 99, 0xb, 96, 0x101);
	pread_at(c, 2000, 42, 128 * 512);
	pread_at(c, 2010, 43, 128 * 512);
	read_issued(c, 2100, 42, 0xc, 128, 0x102);
	read_issued(c, 2120, 42, 0xd, 128, 0x103);
	pread_at(c, 3000, 44, 160 * 512);
	pread_at(c, 3010, 45, 160 * 512);
	read_issued(c, 3100, 45, 0xe, 160, 0x104);
	rq(c, ST_EV_block_rq_complete, 3200, 0, 0x104, ST_OP_READ, 1, 0xe, 0);
	sys(c, ST_EV_sys_exit_pread64, 3300, 45, 4096);
	read_issued(c, 3400, 99, 0xf, 160, 0x105);
	rq(c, ST_EV_block_rq_complete, 4000, 0, 0x100, ST_OP_READ, 1, 0xa, 0);
	rq(c, ST_EV_block_rq_complete, 4010, 0, 0x101, ST_OP_READ, 1, 0xb, 0);
	rq(c, ST_EV_block_rq_complete, 4020, 0, 0x102, ST_OP_READ, 1, 0xc, 0);
	rq(c, ST_EV_block_rq_complete, 4030, 0, 0x103, ST_OP_READ, 1, 0xd, 0);
	rq(c, ST_EV_block_rq_complete, 4040, 0, 0x105, ST_OP_READ, 1, 0xf, 0);
	sys(c, ST_EV_sys_exit_pread64, 4100, 40, 4096);
	sys(c, ST_EV_sys_exit_pread64, 4110, 41, 4096);
	sys(c, ST_EV_sys_exit_pread64, 4120, 42, 4096);
	sys(c, ST_EV_sys_exit_pread64, 4130, 43, 4096);
	sys(c, ST_EV_sys_exit_pread64, 4140, 44, 4096);
	an_corr_finish(c);
	ok = nout == 6;
	for (n = 0; ok && n < nout; n++)
		ok = out[n].tid >= 40 && out[n].tid <= 45 && out[n].nbios == 1 && out[n].syscall &&
		     out[n].sector == (uint64_t)out[n].offset / 512;
	check(ok, "correlate.raw_device_same_offset_dispatched", "%d I/Os, want 6 calls of one bio each", nout);
	for (n = 0; n < nout; n++)
		if (out[n].tid == 40 || out[n].tid == 43 || out[n].tid == 44)
			check(stage(n, AN_ST_D2C) == (out[n].tid == 40 ? 2880 : out[n].tid == 43 ? 1900 : 630),
			      "correlate.raw_device_same_offset_dispatched.d2c", "tid %u D2C %" PRIu64,
			      out[n].tid, stage(n, AN_ST_D2C));
	an_corr_free(c);
}

/*
 * A hostile file's 1,000 calls open at one offset of a raw device: a bio
 * kblockd dispatches there asks only the newest 32 (RAW_OWNER_ASKS), so
 * thousands of bios cost no more each, and joins the oldest of those
 * without a bio: the call of thread 1968.
 */
static void with_bio(void *ctx, const struct an_io *io)
{
	uint32_t *tid = ctx;

	if (io->nbios)
		*tid = io->nbios == 1 && !*tid ? io->tid : UINT32_MAX;
}

static void test_raw_device_owner_bounded(void)
{
	struct an_corr *c = NULL;
	uint32_t tid, owner = 0;

	an_corr_new(&c, 0, with_bio, &owner);
	for (tid = 1000; tid < 2000; tid++)
		pread_at(c, tid, tid, 0);
	bio(c, ST_EV_block_bio_queue, 3000, 99, 0xa, 0, ST_OP_READ);
	an_corr_finish(c);
	check(owner == 1968, "correlate.raw_device_owner_bounded", "the bio's call: thread %u", owner);
	an_corr_free(c);
}

/*
 * An fsync that waits for jbd2's journal commit: the bios jbd2 queues on
 * the file system's device while the fsync is open, and completes before
 * it returns, are its jnl stage; one queued before it entered is not.
 */
static void test_fsync_journal(void)
{
	struct an_corr *c = start(0);
	struct st_ev_fs_io sync_enter = { .p = { .ino = 12, .dev = 7 << 20 } };

	bio(c, ST_EV_block_bio_queue, 900, 50, 0xe, 300, ST_OP_WRITE);
	rq(c, ST_EV_block_rq_issue, 905, 50, 0x610, ST_OP_WRITE, 1, 0xe, 0);
	sys(c, ST_EV_sys_enter_fsync, 1000, 7, 0);
	head(&sync_enter.h, ST_EV_ext4_sync_file_enter, sizeof(sync_enter), 1010, 7);
	an_corr_event(c, &sync_enter.h);
	bio(c, ST_EV_block_bio_queue, 1100, 50, 0xa, 100, ST_OP_WRITE);
	rq(c, ST_EV_block_rq_issue, 1110, 50, 0x611, ST_OP_WRITE, 1, 0xa, 0);
	rq(c, ST_EV_block_rq_complete, 1200, 0, 0x610, ST_OP_WRITE, 1, 0xe, 0);
	rq(c, ST_EV_block_rq_complete, 1300, 0, 0x611, ST_OP_WRITE, 1, 0xa, 0);
	sys(c, ST_EV_sys_exit_fsync, 1400, 7, 0);
	check(nout == 3 && out[2].op == AN_OP_FSYNC && stage(2, AN_ST_JNL) == 200 &&
	      stage(2, AN_ST_TOTAL) == 400 && stage(0, AN_ST_Q2C) == 300 &&
	      stage(1, AN_ST_Q2C) == 200, "correlate.fsync_journal.jnl",
	      "%d I/Os, jnl %" PRIu64, nout, stage(2, AN_ST_JNL));
	an_corr_free(c);
}

/*
 * The kernel's flush sequence for an fsync: its thread queues an empty
 * PREFLUSH bio and gets a request R; a kernel thread issues the device
 * flush F (a request without bios); F completes, and right after, in the
 * same context, R completes without ever having been issued, naming its bio.
 */
static void test_fsync_flush_sequence(void)
{
	struct an_corr *c = start(0);

	sys(c, ST_EV_sys_enter_fsync, 1000, 7, 0);
	fs(c, ST_EV_ext4_sync_file_enter, 1010, 7);
	bio(c, ST_EV_block_bio_queue, 1020, 7, 0xa, 64, ST_OP_WRITE);
	rq(c, ST_EV_block_rq_issue, 1030, 7, 0x500, ST_OP_WRITE, 1, 0xa, 0);
	rq(c, ST_EV_block_rq_complete, 1080, 0, 0x500, ST_OP_WRITE, 1, 0xa, 0);
	flush_bio(c, ST_EV_block_bio_queue, 1100, 7, 0xf);
	flush_bio(c, ST_EV_block_getrq, 1105, 7, 0xf);
	rq(c, ST_EV_block_rq_insert, 1150, 3, 0x600, ST_OP_FLUSH | ST_F_PREFLUSH | ST_F_FLUSH_SEQ, 0, 0, 0);
	rq(c, ST_EV_block_rq_issue, 1160, 3, 0x600, ST_OP_FLUSH | ST_F_PREFLUSH | ST_F_FLUSH_SEQ, 0, 0, 0);
	rq(c, ST_EV_block_rq_complete, 1500, 0, 0x600, ST_OP_FLUSH | ST_F_PREFLUSH | ST_F_FLUSH_SEQ,
	   0, 0, 0);
	rq(c, ST_EV_block_rq_complete, 1510, 0, 0x601, ST_OP_WRITE | ST_F_SYNC, 0, 0xf, 0);
	fs(c, ST_EV_ext4_sync_file_exit, 1590, 7);
	sys(c, ST_EV_sys_exit_fsync, 1600, 7, 0);
	check(nout == 2 && out[0].op == AN_OP_FLUSH && out[1].op == AN_OP_FSYNC,
	      "correlate.flush_sequence.count", "%d I/Os", nout);
	check(nout == 2 && !(out[1].flags & (AN_IO_INCOMPLETE | AN_IO_UNJOINED)) &&
	      stage(1, AN_ST_TOTAL) == 600 && stage(1, AN_ST_FLUSH) == 410 &&
	      stage(1, AN_ST_WB) == 60 && out[1].ts[AN_TS_COMPLETE] == 1510 &&
	      out[1].ts[AN_TS_ISSUE] == 1030, "correlate.flush_sequence.fsync_parts",
	      "flags %#x flush %" PRIu64 " wb %" PRIu64, nout == 2 ? out[1].flags : 0,
	      stage(1, AN_ST_FLUSH), stage(1, AN_ST_WB));
	check(nout == 2 && stage(0, AN_ST_D2C) == 340 && stage(0, AN_ST_I2D) == 10 &&
	      an_corr_stats(c)->orphan_completions == 0, "correlate.flush_sequence.device_flush",
	      "D2C %" PRIu64 ", %" PRIu64 " orphan completions", stage(0, AN_ST_D2C),
	      an_corr_stats(c)->orphan_completions);
	an_corr_free(c);
}

/* The flush alone: the fsync's device stages are the device flush's. */
static void test_fsync_flush_only(void)
{
	struct an_corr *c = start(0);
	const uint32_t fl = ST_OP_FLUSH | ST_F_PREFLUSH | ST_F_FLUSH_SEQ;

	/* A device flush that completed before this fsync's bio was queued serves another. */
	rq(c, ST_EV_block_rq_issue, 900, 3, 0x600, fl, 0, 0, 0);
	rq(c, ST_EV_block_rq_complete, 950, 0, 0x600, fl, 0, 0, 0);
	sys(c, ST_EV_sys_enter_fsync, 1000, 7, 0);
	flush_bio(c, ST_EV_block_bio_queue, 1100, 7, 0xf);
	rq(c, ST_EV_block_rq_issue, 1160, 3, 0x600, fl, 0, 0, 0);
	rq(c, ST_EV_block_rq_complete, 1500, 0, 0x600, fl, 0, 0, 0);
	rq(c, ST_EV_block_rq_complete, 1510, 0, 0x601, ST_OP_WRITE | ST_F_SYNC, 0, 0xf, 0);
	sys(c, ST_EV_sys_exit_fsync, 1600, 7, 0);
	check(nout == 3 && out[2].op == AN_OP_FSYNC && stage(2, AN_ST_D2C) == 350 &&
	      stage(2, AN_ST_FLUSH) == 410 && stage(2, AN_ST_WB) == UINT64_MAX &&
	      stage(2, AN_ST_C2RET) == 90, "correlate.flush_sequence.flush_only",
	      "%d I/Os, D2C %" PRIu64 " flush %" PRIu64, nout, stage(2, AN_ST_D2C),
	      stage(2, AN_ST_FLUSH));
	an_corr_free(c);
}

/*
 * An O_DSYNC direct write on a device without FUA: its request carries the
 * data, completes once for it while in the flush sequence, then the device
 * flush runs, then the request completes again and only then its bio ends.
 */
static void test_fua_write(void)
{
	struct an_corr *c = start(0);
	const uint32_t wf = ST_OP_WRITE | ST_F_FUA | ST_F_SYNC;
	const uint32_t fl = ST_OP_FLUSH | ST_F_PREFLUSH | ST_F_FLUSH_SEQ;

	sys(c, ST_EV_sys_enter_pwrite64, 1000, 7, 0);
	bio(c, ST_EV_block_bio_queue, 1020, 7, 0xd, 64, wf);
	bio(c, ST_EV_block_getrq, 1025, 7, 0xd, 64, wf);
	rq(c, ST_EV_block_rq_issue, 1030, 3, 0x700, wf | ST_F_FLUSH_SEQ, 1, 0xd, 0);
	rq(c, ST_EV_block_rq_complete, 1200, 0, 0x700, wf | ST_F_FLUSH_SEQ, 1, 0xd, 0);
	rq(c, ST_EV_block_rq_issue, 1210, 3, 0x600, fl, 0, 0, 0);
	rq(c, ST_EV_block_rq_complete, 1400, 0, 0x600, fl, 0, 0, 0);
	rq(c, ST_EV_block_rq_complete, 1410, 0, 0x700, wf, 0, 0xd, 0);
	sys(c, ST_EV_sys_exit_pwrite64, 1420, 7, 4096);
	check(nout == 2 && out[1].op == AN_OP_WRITE && !(out[1].flags & (AN_IO_INCOMPLETE |
	      AN_IO_UNJOINED)) && out[1].ts[AN_TS_COMPLETE] == 1410 &&
	      stage(1, AN_ST_FLUSH) == 210 && stage(1, AN_ST_D2C) == 380 &&
	      an_corr_stats(c)->orphan_completions == 0, "correlate.fua_write.post_flush",
	      "%d I/Os, C %" PRIu64 " flush %" PRIu64 ", %" PRIu64 " orphan completions", nout,
	      nout == 2 ? out[1].ts[AN_TS_COMPLETE] : 0, stage(1, AN_ST_FLUSH),
	      an_corr_stats(c)->orphan_completions);
	an_corr_free(c);
}

/* Two io_uring reads of one thread in flight together, completed in reverse. */
static void test_uring(void)
{
	struct an_corr *c = start(0);

	uring(c, ST_EV_io_uring_submit_req, 100, 5, 0x1000, 0);
	read_issued(c, 110, 5, 0xa, 0, 0x801);
	uring(c, ST_EV_io_uring_submit_req, 200, 5, 0x2000, 0);
	read_issued(c, 210, 5, 0xb, 8, 0x802);
	rq(c, ST_EV_block_rq_complete, 600, 0, 0x802, ST_OP_READ, 1, 0, 0);
	uring(c, ST_EV_io_uring_complete, 650, 0, 0x2000, 4096);
	rq(c, ST_EV_block_rq_complete, 900, 0, 0x801, ST_OP_READ, 1, 0, 0);
	uring(c, ST_EV_io_uring_complete, 950, 0, 0x1000, 4096);
	check(nout == 2, "correlate.uring.count", "%d I/Os", nout);
	check(out[0].ts[AN_TS_SYS_ENTER] == 200 && stage(0, AN_ST_TOTAL) == 450 &&
	      stage(0, AN_ST_D2C) == 380 && out[1].ts[AN_TS_SYS_ENTER] == 100 &&
	      stage(1, AN_ST_TOTAL) == 850 && stage(1, AN_ST_D2C) == 780 &&
	      (out[1].flags & AN_IO_URING) && out[1].op == AN_OP_READ && out[1].bytes == 4096,
	      "correlate.uring.by_identity", "total %" PRIu64 "/%" PRIu64,
	      stage(0, AN_ST_TOTAL), stage(1, AN_ST_TOTAL));
	an_corr_free(c);
}

/*
 * io_uring_enter(to_submit, ..., flags) of thread tid with the ring's CQ head
 * and tail as it begins (0 and 0: a file without them): its entry, then exit
 * at ts_exit.
 */
static void uring_enter_cq(struct an_corr *c, uint64_t ts, uint64_t ts_exit, uint32_t tid,
			   uint64_t to_submit, uint64_t flags, uint32_t cq_head, uint32_t cq_tail)
{
	struct st_ev_sys_enter_io_uring_enter e = {
		.p = { .fd = 4, .count = to_submit, .offset = -1, .flags = flags,
		       .cq_head = cq_head, .cq_tail = cq_tail } };

	head(&e.h, ST_EV_sys_enter_io_uring_enter, sizeof(e), ts, tid);
	an_corr_event(c, &e.h);
	if (ts_exit)
		sys(c, ST_EV_sys_exit_io_uring_enter, ts_exit, tid, (int64_t)to_submit);
}

static void uring_enter(struct an_corr *c, uint64_t ts, uint64_t ts_exit, uint32_t tid,
			uint64_t to_submit, uint64_t flags)
{
	uring_enter_cq(c, ts, ts_exit, tid, to_submit, flags, 0, 0);
}

/*
 * The reap of io_uring completions by a thread that uses io_uring_enter. A
 * is posted while the thread is in user space: its next entry reaps it. B
 * is posted while it waits in a call that only waits (to_submit 0,
 * GETEVENTS): the return reaps it. C is posted during a call that submits:
 * that return does not reap it, the next entry does. D's reap is not in the
 * trace: complete all the same.
 */
static void test_uring_reap(void)
{
	struct an_corr *c = start(0);
	int d;

	uring_enter(c, 1000, 0, 5, 4, 1);
	uring(c, ST_EV_io_uring_submit_req, 1010, 5, 0xa0, 0);
	uring(c, ST_EV_io_uring_submit_req, 1011, 5, 0xb0, 0);
	uring(c, ST_EV_io_uring_submit_req, 1012, 5, 0xc0, 0);
	uring(c, ST_EV_io_uring_submit_req, 1013, 5, 0xd0, 0);
	sys(c, ST_EV_sys_exit_io_uring_enter, 1020, 5, 4);
	uring(c, ST_EV_io_uring_complete, 2000, 0, 0xa0, 4096);
	check(nout == 0, "correlate.uring_reap.waits", "%d I/Os emitted before the reap", nout);
	uring_enter(c, 2500, 0, 5, 0, 1);
	uring(c, ST_EV_io_uring_complete, 3500, 0, 0xb0, 4096);
	sys(c, ST_EV_sys_exit_io_uring_enter, 3600, 5, 0);
	uring_enter(c, 3700, 0, 5, 1, 1);
	uring(c, ST_EV_io_uring_submit_req, 3705, 5, 0xe0, 0);
	uring(c, ST_EV_io_uring_complete, 3710, 0, 0xc0, 4096);
	sys(c, ST_EV_sys_exit_io_uring_enter, 3720, 5, 1);
	check(nout == 2, "correlate.uring_reap.submit_return_no_reap", "%d I/Os", nout);
	uring_enter(c, 3800, 3900, 5, 0, 1);
	uring(c, ST_EV_io_uring_complete, 4000, 0, 0xd0, 4096);
	an_corr_finish(c);
	check(nout == 5 && stage(0, AN_ST_TOTAL) == 990 && stage(0, AN_ST_REAP) == 500 &&
	      stage(1, AN_ST_TOTAL) == 2489 && stage(1, AN_ST_REAP) == 100 &&
	      out[2].uring_req == 0xc0 && stage(2, AN_ST_REAP) == 90,
	      "correlate.uring_reap.stages", "%d I/Os, reap %" PRIu64 " %" PRIu64 " %" PRIu64, nout,
	      stage(0, AN_ST_REAP), stage(1, AN_ST_REAP), stage(2, AN_ST_REAP));
	/* at the end: D (reap unseen) and E (never completed), in either order */
	d = nout == 5 && out[3].uring_req == 0xd0 ? 3 : 4;
	check(nout == 5 && out[d].uring_req == 0xd0 && stage(d, AN_ST_REAP) == UINT64_MAX &&
	      !(out[d].flags & AN_IO_INCOMPLETE) && (out[7 - d].flags & AN_IO_INCOMPLETE) &&
	      an_corr_stats(c)->incomplete == 1, "correlate.uring_reap.unseen_reap_complete",
	      "flags %#x, %" PRIu64 " incomplete", nout == 5 ? out[d].flags : 0,
	      an_corr_stats(c)->incomplete);
	an_corr_free(c);
}

/*
 * fio's loop at depth: it reads CQEs from the ring in user space and enters
 * the kernel only to submit. A and B are posted during the call that submits
 * C; the next entry (submitting D) finds them unread (CQ head 0, tail 2):
 * not reaped. The one after finds the head past A only: A is reaped there,
 * B at the entry whose head passed it.
 */
static void test_uring_reap_cq_head(void)
{
	struct an_corr *c = start(0);

	uring_enter_cq(c, 1000, 0, 5, 2, 1, 0, 0);
	uring(c, ST_EV_io_uring_submit_req, 1010, 5, 0xa0, 0);
	uring(c, ST_EV_io_uring_submit_req, 1011, 5, 0xb0, 0);
	sys(c, ST_EV_sys_exit_io_uring_enter, 1020, 5, 2);
	uring_enter_cq(c, 2000, 0, 5, 1, 1, 0, 0);
	uring(c, ST_EV_io_uring_submit_req, 2005, 5, 0xc0, 0);
	uring(c, ST_EV_io_uring_complete, 2010, 5, 0xa0, 4096);
	uring(c, ST_EV_io_uring_complete, 2011, 5, 0xb0, 4096);
	sys(c, ST_EV_sys_exit_io_uring_enter, 2020, 5, 1);
	uring_enter_cq(c, 3000, 0, 5, 1, 1, 0, 2);
	uring(c, ST_EV_io_uring_submit_req, 3005, 5, 0xd0, 0);
	sys(c, ST_EV_sys_exit_io_uring_enter, 3020, 5, 1);
	check(nout == 0, "correlate.uring_reap.cq_head_unread", "%d I/Os reaped with their CQEs unread", nout);
	uring_enter_cq(c, 4000, 0, 5, 1, 1, 1, 2);
	uring_enter_cq(c, 5000, 0, 5, 1, 1, 2, 2);
	an_corr_finish(c);
	check(nout == 4 && out[0].uring_req == 0xa0 && stage(0, AN_ST_REAP) == 1990 &&
	      out[1].uring_req == 0xb0 && stage(1, AN_ST_REAP) == 2989 && stage(1, AN_ST_TOTAL) == 1000,
	      "correlate.uring_reap.cq_head_passed", "%d I/Os, reap %" PRIu64 " %" PRIu64, nout,
	      stage(0, AN_ST_REAP), stage(1, AN_ST_REAP));
	an_corr_free(c);
}

/* io_getevents of thread tid: its entry, or its exit returning n events. */
static void getevents(struct an_corr *c, uint64_t ts, uint32_t tid, int exit, int64_t n)
{
	struct st_ev_sys_enter e = { .p = { .fd = 0x7f0000001000, .count = 8, .offset = -1 } };
	struct st_ev_sys_exit x = { .p = { .ret = n } };

	if (exit) {
		head(&x.h, ST_EV_sys_exit_io_getevents, sizeof(x), ts, tid);
		an_corr_event(c, &x.h);
	} else {
		head(&e.h, ST_EV_sys_enter_io_getevents, sizeof(e), ts, tid);
		an_corr_event(c, &e.h);
	}
}

/*
 * io_submit of thread 6 from 1000 to 1050 with two iocbs: one begun at 1005
 * (bio 0xa in request 0x100), one at 1030 (bio 0xb in request 0x101).
 */
static void submit_two_iocbs(struct an_corr *c)
{
	sys(c, ST_EV_sys_enter_io_submit, 1000, 6, 0);
	fs(c, ST_EV_iomap_dio_rw_begin, 1005, 6);
	read_issued(c, 1010, 6, 0xa, 0, 0x100);
	fs(c, ST_EV_iomap_dio_rw_begin, 1030, 6);
	bio(c, ST_EV_block_bio_queue, 1035, 6, 0xb, 64, ST_OP_READ);
	rq(c, ST_EV_block_rq_issue, 1040, 6, 0x101, ST_OP_READ, 1, 0xb, 0);
	sys(c, ST_EV_sys_exit_io_submit, 1050, 6, 2);
}

/* io_submit of one iocb by thread tid at ts (bio and request k), done at ts + 50. */
static void submit_done_iocb(struct an_corr *c, uint64_t ts, uint32_t tid, uint64_t k)
{
	sys(c, ST_EV_sys_enter_io_submit, ts, tid, 0);
	fs(c, ST_EV_iomap_dio_rw_begin, ts + 5, tid);
	bio(c, ST_EV_block_bio_queue, ts + 10, tid, k, 256, ST_OP_READ);
	rq(c, ST_EV_block_rq_issue, ts + 20, tid, 0x10000 + k, ST_OP_READ, 1, k, 0);
	sys(c, ST_EV_sys_exit_io_submit, ts + 30, tid, 1);
	rq(c, ST_EV_block_rq_complete, ts + 50, 0, 0x10000 + k, ST_OP_READ, 1, k, 0);
}

/*
 * libaio's reap. An iocb done at 950, before its thread first called
 * io_getevents, waits all the same (from io_submit on). Two more iocbs are
 * done at 1500 and 1520; io_getevents returns one event at 1550 (the oldest:
 * the first iocb), then two at 1700. The reap runs from each iocb's block
 * completion to the return that handed it over. A thread that piles up
 * AIO_UNREAPED_MAX (1024) iocbs and never calls io_getevents has them reaped
 * elsewhere: they go out without a reap.
 */
static void test_aio_reap(void)
{
	struct an_corr *c = start(0);
	int reaped = 0;

	submit_done_iocb(c, 900, 6, 0x9);
	check(nout == 0, "correlate.aio_reap.held_from_submit", "%d I/Os", nout);
	submit_two_iocbs(c);
	getevents(c, 1100, 6, 0, 0);
	rq(c, ST_EV_block_rq_complete, 1500, 0, 0x100, ST_OP_READ, 1, 0xa, 0);
	rq(c, ST_EV_block_rq_complete, 1520, 0, 0x101, ST_OP_READ, 1, 0xb, 0);
	check(nout == 0, "correlate.aio_reap.waits", "%d I/Os emitted before io_getevents returned", nout);
	getevents(c, 1550, 6, 1, 1);
	getevents(c, 1600, 6, 0, 0);
	getevents(c, 1700, 6, 1, 2);
	/* a return hands its iocbs over newest first */
	check(nout == 3 && stage(0, AN_ST_REAP) == 600 && stage(2, AN_ST_TOTAL) == 495 &&
	      stage(2, AN_ST_REAP) == 200 && stage(1, AN_ST_TOTAL) == 490 && stage(1, AN_ST_REAP) == 180 &&
	      stage(1, AN_ST_C2RET) == UINT64_MAX,
	      "correlate.aio_reap.oldest_first", "%d I/Os, reap %" PRIu64 " %" PRIu64 " %" PRIu64, nout,
	      stage(0, AN_ST_REAP), stage(1, AN_ST_REAP), stage(2, AN_ST_REAP));
	for (uint64_t k = 0; k <= 1024; k++)
		submit_done_iocb(c, 2000 + k * 100, 8, 0x100000 + k);
	for (int k = 3; k < nout && k < MAX_OUT; k++)
		reaped += stage(k, AN_ST_REAP) != UINT64_MAX;
	check(nout == 3 + 1025 && !reaped, "correlate.aio_reap.reaped_elsewhere",
	      "%d I/Os, %d with a reap", nout, reaped);
	an_corr_free(c);
}

/*
 * libaio: io_submit with two iocbs, each an iomap_dio_rw_begin and its bio;
 * each is an I/O from its iomap begin to its block completion. A bio the
 * thread queues outside io_submit is a bare bio I/O as before.
 */
static void test_aio_submit(void)
{
	struct an_corr *c = start(0);

	submit_two_iocbs(c);
	rq(c, ST_EV_block_rq_complete, 1500, 0, 0x100, ST_OP_READ, 1, 0xa, 0);
	rq(c, ST_EV_block_rq_complete, 1600, 0, 0x101, ST_OP_READ, 1, 0xb, 0);
	read_issued(c, 1700, 6, 0xc, 128, 0x102);
	rq(c, ST_EV_block_rq_complete, 1800, 0, 0x102, ST_OP_READ, 1, 0xc, 0);
	getevents(c, 1900, 6, 0, 0);
	getevents(c, 1910, 6, 1, 2);
	check(nout == 3 && stage(2, AN_ST_TOTAL) == 495 && stage(2, AN_ST_FS2Q) == 5 &&
	      out[2].ino == 12 && stage(1, AN_ST_TOTAL) == 570 && stage(1, AN_ST_Q2C) == 565 &&
	      stage(0, AN_ST_TOTAL) == 100 && stage(0, AN_ST_FS2Q) == UINT64_MAX,
	      "correlate.aio_submit.iocbs", "%d I/Os, totals %" PRIu64 " %" PRIu64 " %" PRIu64, nout,
	      stage(2, AN_ST_TOTAL), stage(1, AN_ST_TOTAL), stage(0, AN_ST_TOTAL));
	an_corr_free(c);
}

/*
 * A bio of thread 5 that no issue ever names (a request's bio past the ones
 * its issue carries) keeps its address in the correlator when the kernel
 * hands the address to thread 6's next iocb: that is a new bio of the iocb,
 * not the remainder of a split of the old one (which its own thread queues).
 */
static void test_aio_bio_address_reused(void)
{
	struct an_corr *c = start(0);
	int k, iocb = -1;

	bio(c, ST_EV_block_bio_queue, 500, 5, 0xa, 999, ST_OP_READ);
	submit_done_iocb(c, 900, 6, 0xa);
	getevents(c, 1000, 6, 0, 0);
	getevents(c, 1010, 6, 1, 1);
	for (k = 0; k < nout && k < MAX_OUT; k++)
		if (out[k].flags & AN_IO_AIO)
			iocb = k;
	check(iocb >= 0 && !(out[iocb].flags & AN_IO_INCOMPLETE) && out[iocb].ino == 12 &&
	      stage(iocb, AN_ST_TOTAL) == 45, "correlate.aio_bio_address_reused",
	      "%d I/Os, iocb %d, total %" PRIu64, nout, iocb, iocb >= 0 ? stage(iocb, AN_ST_TOTAL) : 0);
	an_corr_free(c);
}

/*
 * The owner rules (analyze/lib/corr_owner.c, owner_rules[]), a test each:
 * the events of the case a rule exists for, and the I/O it must pick for
 * the bio. Each fails with its rule taken out of the table.
 */

/*
 * Thread tid's call (enter_type) from ts to ts + 600 reading one bio at
 * sector: queued and issued at ts + 100, completed at ts + 500.
 */
static void call_with_read(struct an_corr *c, uint16_t enter_type, uint64_t ts, uint32_t tid,
			   uint64_t id, uint64_t sector, uint64_t rq_id)
{
	sys(c, enter_type, ts, tid, 0);
	read_issued(c, ts + 100, tid, id, sector, rq_id);
	rq(c, ST_EV_block_rq_complete, ts + 500, 0, rq_id, ST_OP_READ, 1, id, 0);
	sys(c, enter_type + 1, ts + 600, tid, 4096);
}

/* I/O k of thread tid, -1 if none. */
static int out_of(uint32_t tid)
{
	for (int k = 0; k < nout && k < MAX_OUT; k++)
		if (out[k].tid == tid)
			return k;
	return -1;
}

/*
 * "the thread's own call at the bio's sector": threads 30 and 31 read one
 * offset of a raw device at once; 31, the newer, queues its bio first.
 * Each bio is its own thread's, not the oldest call's at the sector.
 */
static void test_owner_own_call_at_sector(void)
{
	struct an_corr *c = start(0);
	int a, b;

	pread_at(c, 1000, 30, 96 * 512);
	pread_at(c, 1010, 31, 96 * 512);
	read_issued(c, 1100, 31, 0xa, 96, 0x100);
	read_issued(c, 1200, 30, 0xb, 96, 0x101);
	rq(c, ST_EV_block_rq_complete, 1500, 0, 0x100, ST_OP_READ, 1, 0xa, 0);
	rq(c, ST_EV_block_rq_complete, 1600, 0, 0x101, ST_OP_READ, 1, 0xb, 0);
	sys(c, ST_EV_sys_exit_pread64, 1700, 30, 4096);
	sys(c, ST_EV_sys_exit_pread64, 1710, 31, 4096);
	a = out_of(30);
	b = out_of(31);
	check(nout == 2 && a >= 0 && b >= 0 && out[a].ts[AN_TS_QUEUE] == 1200 &&
	      out[b].ts[AN_TS_QUEUE] == 1100 && out[a].pid == 30 && out[b].pid == 31 &&
	      out[a].op == AN_OP_READ && out[b].op == AN_OP_READ,
	      "correlate.owner.own_call_at_sector", "%d I/Os, thread 30's bio queued at %" PRIu64, nout,
	      a >= 0 ? out[a].ts[AN_TS_QUEUE] : 0);
	an_corr_free(c);
}

/*
 * "a call open at the bio's sector": thread 20 reads a raw device at
 * offset 8192; kblockd (tid 99, in no call) queues and issues its bio at
 * sector 16. The bio is thread 20's read, not an I/O of kblockd's.
 */
static void test_owner_call_at_sector(void)
{
	struct an_corr *c = start(0);

	pread_at(c, 1000, 20, 8192);
	read_issued(c, 1100, 99, 0xa, 16, 0x100);
	rq(c, ST_EV_block_rq_complete, 1500, 0, 0x100, ST_OP_READ, 1, 0xa, 0);
	sys(c, ST_EV_sys_exit_pread64, 1600, 20, 4096);
	an_corr_finish(c);
	check(nout == 1 && out[0].tid == 20 && out[0].pid == 20 && out[0].op == AN_OP_READ &&
	      out[0].nbios == 1 && stage(0, AN_ST_D2C) == 390, "correlate.owner.call_at_sector",
	      "%d I/Os, the first of thread %u, %u bios", nout, out[0].tid, out[0].nbios);
	an_corr_free(c);
}

/*
 * "the thread's data syscall or io_uring request": thread 9's read() of a
 * file (offset 8192) queues a bio at sector 1000, not its offset's; thread
 * 8's io_uring read queues one right after its submission. Each bio is its
 * thread's call.
 */
static void test_owner_thread_call(void)
{
	struct an_corr *c = start(0);

	call_with_read(c, ST_EV_sys_enter_read, 1000, 9, 0xa, 1000, 0x100);
	check(nout == 1 && out[0].tid == 9 && out[0].pid == 9 && out[0].op == AN_OP_READ &&
	      out[0].syscall == ST_EV_sys_enter_read && out[0].nbios == 1,
	      "correlate.owner.thread_call.syscall", "%d I/Os, the first of thread %u, %u bios", nout,
	      out[0].tid, out[0].nbios);
	uring(c, ST_EV_io_uring_submit_req, 2000, 8, 0xd0, 0);
	read_issued(c, 2100, 8, 0xb, 2000, 0x101);
	rq(c, ST_EV_block_rq_complete, 2500, 0, 0x101, ST_OP_READ, 1, 0xb, 0);
	uring(c, ST_EV_io_uring_complete, 2600, 8, 0xd0, 4096);
	check(nout == 2 && out[1].tid == 8 && out[1].op == AN_OP_READ && out[1].uring_req == 0xd0 &&
	      out[1].nbios == 1, "correlate.owner.thread_call.uring", "%d I/Os", nout);
	an_corr_free(c);
}

/*
 * "the iocb io_submit is submitting": thread 6's io_submit begins an iocb
 * (iomap_dio_rw_begin) and queues its bio. The bio is the iocb's: an I/O
 * of libaio with the file system's begin and inode.
 */
static void test_owner_iocb_submitted(void)
{
	struct an_corr *c = start(0);

	submit_done_iocb(c, 1000, 6, 0xa);
	getevents(c, 1100, 6, 0, 0);
	getevents(c, 1110, 6, 1, 1);
	check(nout == 1 && out[0].tid == 6 && out[0].pid == 6 && out[0].op == AN_OP_READ &&
	      (out[0].flags & AN_IO_AIO) && out[0].ino == 12 && stage(0, AN_ST_FS2Q) == 5,
	      "correlate.owner.iocb_submitted", "%d I/Os, flags %#x", nout, out[0].flags);
	an_corr_free(c);
}

/*
 * "the oldest call waiting for a held-back bio": thread 9, which read the
 * device before, waits in pread64 while blk-throttle holds its bio back;
 * the throttle's worker (tid 60) queues it later (ST_F_HELD). The bio is
 * thread 9's read, and sys2q its wait.
 */
static void test_owner_held_call(void)
{
	struct an_corr *c = start(0);

	call_with_read(c, ST_EV_sys_enter_pread64, 100, 9, 0xa, 16, 0x100);
	sys(c, ST_EV_sys_enter_pread64, 1000, 9, 0);
	bio(c, ST_EV_block_bio_queue, 5000, 60, 0xb, 300, ST_OP_READ | ST_F_HELD);
	rq(c, ST_EV_block_rq_issue, 5010, 60, 0x101, ST_OP_READ, 1, 0xb, 0);
	rq(c, ST_EV_block_rq_complete, 5100, 0, 0x101, ST_OP_READ, 1, 0xb, 0);
	sys(c, ST_EV_sys_exit_pread64, 5200, 9, 4096);
	check(nout == 2 && out[1].tid == 9 && out[1].op == AN_OP_READ && out[1].nbios == 1 &&
	      stage(1, AN_ST_SYS2Q) == 4000, "correlate.owner.held_call",
	      "%d I/Os, the last of thread %u, %u bios", nout, out[nout > 1].tid, out[nout > 1].nbios);
	an_corr_free(c);
}

/*
 * A held-back bio tells nothing of its worker's device (held_thread_dev 0
 * of the last two rules): worker 60's bio joined thread 9's call, worker
 * 62's no call (an I/O of its own). When 60 and 62 then wait in calls of
 * their own, the next held bio (worker 63's) joins neither: neither thread
 * is known to use the device.
 */
static void test_owner_held_worker(void)
{
	struct an_corr *c = start(0);
	const uint32_t held = ST_OP_READ | ST_F_HELD;
	int k, joined = 0;

	call_with_read(c, ST_EV_sys_enter_pread64, 100, 9, 0xa, 16, 0x100);
	sys(c, ST_EV_sys_enter_pread64, 1000, 9, 0);
	bio(c, ST_EV_block_bio_queue, 2000, 60, 0xb, 300, held);
	rq(c, ST_EV_block_rq_issue, 2010, 60, 0x101, ST_OP_READ, 1, 0xb, 0);
	rq(c, ST_EV_block_rq_complete, 2100, 0, 0x101, ST_OP_READ, 1, 0xb, 0);
	sys(c, ST_EV_sys_exit_pread64, 2200, 9, 4096);
	bio(c, ST_EV_block_bio_queue, 3000, 62, 0xc, 400, held);
	rq(c, ST_EV_block_rq_issue, 3010, 62, 0x102, ST_OP_READ, 1, 0xc, 0);
	rq(c, ST_EV_block_rq_complete, 3100, 0, 0x102, ST_OP_READ, 1, 0xc, 0);
	sys(c, ST_EV_sys_enter_pread64, 4000, 60, 0);
	sys(c, ST_EV_sys_enter_pread64, 4010, 62, 0);
	bio(c, ST_EV_block_bio_queue, 5000, 63, 0xd, 500, held);
	rq(c, ST_EV_block_rq_issue, 5010, 63, 0x103, ST_OP_READ, 1, 0xd, 0);
	rq(c, ST_EV_block_rq_complete, 5100, 0, 0x103, ST_OP_READ, 1, 0xd, 0);
	sys(c, ST_EV_sys_exit_pread64, 6000, 60, 4096);
	sys(c, ST_EV_sys_exit_pread64, 6010, 62, 4096);
	for (k = 0; k < nout && k < MAX_OUT; k++)
		joined += (out[k].tid == 60 || out[k].tid == 62) && out[k].syscall && out[k].nbios;
	k = out_of(63);
	check(nout == 6 && out[1].tid == 9 && out[1].nbios == 1 && k >= 0 && out[k].nbios == 1 &&
	      !joined, "correlate.owner.held_worker_device_unknown",
	      "%d I/Os, %d calls of the workers with a bio", nout, joined);
	an_corr_free(c);
}

/*
 * "an I/O of its own": a kworker's writeback bio (tid 70, in no call) is an
 * I/O of its own, from its queueing to its completion.
 */
static void test_owner_own_io(void)
{
	struct an_corr *c = start(0);

	bio(c, ST_EV_block_bio_queue, 1000, 70, 0xa, 500, ST_OP_WRITE);
	rq(c, ST_EV_block_rq_issue, 1010, 70, 0x100, ST_OP_WRITE, 1, 0xa, 0);
	rq(c, ST_EV_block_rq_complete, 1300, 0, 0x100, ST_OP_WRITE, 1, 0xa, 0);
	check(nout == 1 && out[0].tid == 70 && out[0].pid == 70 && out[0].op == AN_OP_WRITE &&
	      out[0].nbios == 1 && stage(0, AN_ST_Q2C) == 300, "correlate.owner.own_io", "%d I/Os", nout);
	an_corr_free(c);
}

static void test_stale_and_bio_based(void)
{
	struct an_corr *c = start(1000);

	bio(c, ST_EV_block_bio_queue, 10, 1, 0xa, 0, ST_OP_READ);
	bio(c, ST_EV_block_bio_queue, 5000, 2, 0xb, 0, ST_OP_WRITE);
	bio(c, ST_EV_block_bio_complete, 5300, 0, 0xb, 0, ST_OP_WRITE);
	check(an_corr_stats(c)->stale == 1 && nout == 2 && (out[0].flags & AN_IO_INCOMPLETE),
	      "correlate.stale", "stale %" PRIu64 ", %d I/Os", an_corr_stats(c)->stale, nout);
	check(nout == 2 && stage(1, AN_ST_Q2C) == 300 && stage(1, AN_ST_D2C) == UINT64_MAX &&
	      !(out[1].flags & AN_IO_INCOMPLETE), "correlate.bio_based",
	      "Q2C %" PRIu64, stage(1, AN_ST_Q2C));
	an_corr_free(c);
}

/* an_io_stages() (all stages at once) says what an_io_stage() says, stage by stage. */
static int stages_disagree(const struct an_io *io)
{
	uint64_t all[AN_ST_COUNT], ns;
	unsigned defined = an_io_stages(io, all);
	int s, bad = 0;

	for (s = 0; s < AN_ST_COUNT; s++) {
		int one = an_io_stage(io, s, &ns);

		bad |= one != (int)(defined >> s & 1) || (one && ns != all[s]);
	}
	return bad;
}

static uint64_t rng = 88172645463325252ull;

static uint32_t pick(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/*
 * Random events over few identities (so they collide, repeat and arrive in
 * every order a lossy trace could show): the correlator must not crash, must
 * emit every I/O it counted, and must end with nothing in flight. Their
 * stages, present, missing or out of order, check an_io_stages().
 */
static void test_random_events(void)
{
	static const uint16_t types[] = {
		ST_EV_block_bio_queue, ST_EV_block_bio_backmerge, ST_EV_block_bio_frontmerge,
		ST_EV_block_bio_complete, ST_EV_block_split, ST_EV_block_getrq,
		ST_EV_block_rq_insert, ST_EV_block_rq_issue, ST_EV_block_rq_requeue,
		ST_EV_block_rq_complete, ST_EV_sys_enter_pread64, ST_EV_sys_exit_pread64,
		ST_EV_sys_enter_fsync, ST_EV_sys_exit_fsync, ST_EV_iomap_dio_rw_begin,
		ST_EV_iomap_dio_complete, ST_EV_io_uring_submit_req, ST_EV_io_uring_complete,
	};
	struct an_corr *c = start(20000);
	const struct an_corr_stats *st;
	uint64_t ts = 1000;
	int i, bad = 0, disagree = 0, emitted;

	for (i = 0; i < 300000; i++) {
		uint16_t t = types[pick(sizeof(types) / sizeof(types[0]))];
		uint32_t tid = 1 + pick(4);

		ts += pick(500);
		if (pick(50) == 0)
			ts -= pick(400);	/* a little out of order */
		if (t == ST_EV_block_split)
			split(c, ts, tid, 1 + pick(16), 1 + pick(16));
		else if (st_builtin_type(t)->size == sizeof(struct st_ev_block_bio))
			bio(c, t, ts, tid, 1 + pick(16), pick(64) * 8, pick(2));
		else if ((st_event_kind(t) & ST_KIND_MASK) == ST_KIND_BLOCK)
			rq(c, t, ts, tid, 0x100 + pick(8), pick(3), pick(6), 1 + pick(16), 1 + pick(16));
		else if ((st_event_kind(t) & ST_KIND_MASK) == ST_KIND_FS)
			fs(c, t, ts, tid);
		else if ((st_event_kind(t) & ST_KIND_MASK) == ST_KIND_URING)
			uring(c, t, ts, tid, 0x1000 + pick(8), 4096);
		else
			sys(c, t, ts, tid, 4096);
		emitted = nout < MAX_OUT ? nout : MAX_OUT;
		while (emitted-- > 0) {	/* every emitted I/O is finished or says why not */
			bad += out[emitted].pending && !(out[emitted].flags & AN_IO_INCOMPLETE);
			disagree += stages_disagree(&out[emitted]);
		}
		nout = 0;
	}
	an_corr_finish(c);
	st = an_corr_stats(c);
	check(!bad && !an_corr_failed(c), "correlate.random.emitted_consistent",
	      "%d I/Os emitted with bios pending but not incomplete", bad);
	check(!disagree, "correlate.random.all_stages_at_once",
	      "%d I/Os whose an_io_stages() differs from an_io_stage()", disagree);
	check(st->open_ios == 0 && st->open_bios == 0 && st->open_requests == 0 && st->ios > 0,
	      "correlate.random.nothing_left", "%" PRIu64 " I/Os, %" PRIu64 " bios, %" PRIu64
	      " requests still open of %" PRIu64, st->open_ios, st->open_bios, st->open_requests, st->ios);
	an_corr_free(c);
}

int main(void)
{
	test_simple_read();
	test_merge(ST_EV_block_bio_backmerge, "backmerge", 0);
	test_merge(ST_EV_block_bio_frontmerge, "frontmerge", 0);
	test_merge(ST_EV_block_bio_backmerge, "backmerge_stamped", 1);
	test_merge(ST_EV_block_bio_frontmerge, "frontmerge_stamped", 1);
	test_rq_merge();
	test_split();
	test_requeue();
	test_fsync();
	test_out_of_order();
	test_incomplete();
	test_lost_completion();
	test_fsync_unjoined();
	test_fsync_journal();
	test_held_back();
	test_raw_device_dispatched();
	test_raw_device_same_offset_dispatched();
	test_raw_device_owner_bounded();
	test_fsync_flush_sequence();
	test_fsync_flush_only();
	test_fua_write();
	test_uring();
	test_uring_reap();
	test_uring_reap_cq_head();
	test_writeback_inode();
	test_rq_cgroup();
	test_aio_submit();
	test_aio_reap();
	test_aio_bio_address_reused();
	test_owner_own_call_at_sector();
	test_owner_call_at_sector();
	test_owner_thread_call();
	test_owner_iocb_submitted();
	test_owner_held_call();
	test_owner_held_worker();
	test_owner_own_io();
	test_stale_and_bio_based();
	test_random_events();
	return check_failures != 0;
}
