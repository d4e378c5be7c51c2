/* SPDX-License-Identifier: MIT */
/*
 * The causes of an I/O's time (analyze/lib/cause.h) from hand-built event
 * sequences fed to the correlator: each scenario states what the kernel
 * would record, and the expected causes are worked out by hand from its
 * timestamps in the comment above it.
 */
#include <inttypes.h>
#include <string.h>

#include "analyze/lib/cause.h"
#include "analyze/lib/correlate.h"
#include "tests/check.h"
#include "tests/analyze/collect.h"
#include "tests/analyze/events.h"

#define APP	42	/* the thread doing the I/O */
#define WORKER	7	/* the thread serving the device (a loop worker) */
#define HOG	99	/* a busy loop */
#define THROTL	55	/* blk-throttle's dispatch worker */
#define SOFTIRQ	14	/* ksoftirqd, where completions run under load */
#define DEV	(7u << 20)

/* A correlator that splits I/Os into causes, its output cleared. */
static struct an_corr *start(void)
{
	struct an_corr *c = NULL;

	nout = 0;
	return an_corr_new(&c, 0, collect, NULL) || an_corr_enable_causes(c, AN_CAUSES_ALL) ? NULL : c;
}

/* The record's header (events.h) as thread tid's. */
static void head_of(struct st_event_header *h, uint16_t type, uint16_t size, uint64_t ts, uint32_t tid)
{
	head(h, type, size, ts);
	h->pid = h->tid = tid;
}

static void sys(struct an_corr *c, uint16_t type, uint64_t ts, int64_t ret)
{
	struct st_ev_sys_enter e = { .p = { .fd = 3, .count = 4096, .offset = 8192 } };
	struct st_ev_sys_exit x = { .p = { .ret = ret } };

	if ((st_event_kind(type) & ST_KIND_MASK) == ST_KIND_SYS_ENTER) {
		head_of(&e.h, type, sizeof(e), ts, APP);
		an_corr_event(c, &e.h);
	} else {
		head_of(&x.h, type, sizeof(x), ts, APP);
		an_corr_event(c, &x.h);
	}
}

/* prev_state 0: prev was preempted (still runnable); else it blocked. */
static void sw(struct an_corr *c, uint64_t ts, uint32_t prev, uint32_t state, uint32_t next,
	       const char *prev_comm, const char *next_comm)
{
	struct st_ev_sched_switch e = { .p = { .prev_tid = prev, .next_tid = next,
					       .prev_state = state, .next_pid = next } };

	strncpy(e.p.prev_comm, prev_comm, sizeof(e.p.prev_comm) - 1);
	strncpy(e.p.next_comm, next_comm, sizeof(e.p.next_comm) - 1);
	head_of(&e.h, ST_EV_sched_switch, sizeof(e), ts, prev);
	an_corr_event(c, &e.h);
}

static void wake(struct an_corr *c, uint64_t ts, uint32_t waker, uint32_t woken)
{
	struct st_ev_sched_wakeup e = { .p = { .woken_tid = woken } };

	head_of(&e.h, ST_EV_sched_wakeup, sizeof(e), ts, waker);
	an_corr_event(c, &e.h);
}

static void lock(struct an_corr *c, uint16_t type, uint64_t ts, uint64_t addr, uint32_t flags)
{
	struct st_ev_lock_contention e = { .p = { .lock = addr, .flags = flags } };

	head_of(&e.h, type, sizeof(e), ts, APP);
	an_corr_event(c, &e.h);
}

static void reclaim(struct an_corr *c, uint16_t type, uint64_t ts)
{
	struct st_ev_reclaim e = { .p = { .value = 0 } };

	head_of(&e.h, type, sizeof(e), ts, APP);
	an_corr_event(c, &e.h);
}

static void dirty(struct an_corr *c, uint64_t ts, uint64_t pause)
{
	struct st_ev_dirty_pause e = { .p = { .pause_ns = pause } };

	head_of(&e.h, ST_EV_balance_dirty_pages, sizeof(e), ts, APP);
	an_corr_event(c, &e.h);
}

static void page_added(struct an_corr *c, uint64_t ts)
{
	struct st_ev_page_cache e = { .p = { .ino = 5, .dev = 8 << 20, .nr_pages = 4 } };

	head_of(&e.h, ST_EV_mm_filemap_add_to_page_cache, sizeof(e), ts, APP);
	an_corr_event(c, &e.h);
}

static void dio_begin(struct an_corr *c, uint64_t ts)
{
	struct st_ev_fs_io e = { .p = { .ino = 12, .pos = 8192, .count = 4096, .dev = 8 << 20 } };

	head_of(&e.h, ST_EV_iomap_dio_rw_begin, sizeof(e), ts, APP);
	an_corr_event(c, &e.h);
}

static void bio_queue(struct an_corr *c, uint64_t ts, uint32_t tid, uint64_t bio, uint32_t opf)
{
	struct st_ev_block_bio e = { .p = { .bio = bio, .sector = 16, .dev = DEV, .nr_sector = 8,
					    .opf = opf } };

	head_of(&e.h, ST_EV_block_bio_queue, sizeof(e), ts, tid);
	an_corr_event(c, &e.h);
}

static void held(struct an_corr *c, uint64_t ts, uint64_t bio, uint64_t blkcg)
{
	struct st_ev_block_bio_held e = { .p = { .bio = bio, .blkcg = blkcg, .dev = DEV } };

	head_of(&e.h, ST_EV_block_bio_held, sizeof(e), ts, THROTL);
	an_corr_event(c, &e.h);
}

/* Request rq with its one bio inserted 50 ns before its issue at ts, by the reader. */
static void issue(struct an_corr *c, uint64_t ts, uint64_t rq, uint64_t bio)
{
	struct st_ev_block_rq_issue e = { .p = { .rq = rq, .dev = DEV, .opf = ST_OP_READ,
						 .nr_sector = 8, .nr_bios = 1, .bios = { bio } } };

	head_of(&e.h, ST_EV_block_rq_insert, sizeof(struct st_ev_block_rq), ts - 50, APP);
	an_corr_event(c, &e.h);
	head_of(&e.h, ST_EV_block_rq_issue, sizeof(e), ts, APP);
	an_corr_event(c, &e.h);
}

/* Request rq completed at ts in thread tid. */
static void complete(struct an_corr *c, uint64_t ts, uint32_t tid, uint64_t rq)
{
	struct st_ev_block_rq_complete e = { .p = { .rq = rq, .dev = DEV, .opf = ST_OP_READ,
						    .nr_sector = 8 } };

	head_of(&e.h, ST_EV_block_rq_complete, sizeof(e), ts, tid);
	an_corr_event(c, &e.h);
}

/* Stage s of I/O k, or UINT64_MAX when undefined. */
static uint64_t stage(int k, enum an_stage s)
{
	uint64_t ns;

	return an_io_stage(&out[k], s, &ns) ? ns : UINT64_MAX;
}

/*
 * Every I/O: the causes and `other` add up to its total exactly, so they
 * never sum to more than it.
 */
static void check_sums(const char *name)
{
	char n[96];

	for (int k = 0; k < nout && k < MAX_OUT; k++) {
		uint64_t sum = stage(k, AN_ST_OTHER);

		for (unsigned s = AN_ST_RUNQ; s < AN_ST_OTHER; s++)
			sum += stage(k, (enum an_stage)s);
		snprintf(n, sizeof(n), "cause.%s.sum.%d", name, k);
		check((out[k].flags & AN_IO_WHY) && sum == stage(k, AN_ST_TOTAL), n,
		      "causes + other %" PRIu64 ", total %" PRIu64, sum, stage(k, AN_ST_TOTAL));
	}
}

static void expect(const char *name, int k, uint64_t runq, uint64_t svc, uint64_t lck, uint64_t thr,
		   uint64_t drt, uint64_t rcl, uint64_t other)
{
	char n[96];

	snprintf(n, sizeof(n), "cause.%s", name);
	check(k < nout && stage(k, AN_ST_RUNQ) == runq && stage(k, AN_ST_SVC_RUNQ) == svc &&
	      stage(k, AN_ST_LOCK) == lck && stage(k, AN_ST_THROTTLE) == thr &&
	      stage(k, AN_ST_DIRTY) == drt && stage(k, AN_ST_RECLAIM) == rcl &&
	      stage(k, AN_ST_OTHER) == other, n,
	      "runq %" PRIu64 " svc_runq %" PRIu64 " lock %" PRIu64 " throttle %" PRIu64
	      " dirty %" PRIu64 " reclaim %" PRIu64 " other %" PRIu64 " (%d I/Os)",
	      stage(k, AN_ST_RUNQ), stage(k, AN_ST_SVC_RUNQ), stage(k, AN_ST_LOCK),
	      stage(k, AN_ST_THROTTLE), stage(k, AN_ST_DIRTY), stage(k, AN_ST_RECLAIM),
	      stage(k, AN_ST_OTHER), nout);
}

/*
 * pread 10000..16000, preempted by the hog at 12000, back on a CPU at
 * 15000: runq 3000 (the hog held the CPU), other 6000 - 3000 = 3000.
 */
static void test_preempted(void)
{
	struct an_corr *c = start();

	sys(c, ST_EV_sys_enter_pread64, 10000, 0);
	sw(c, 12000, APP, 0, HOG, "fio", "hog");
	sw(c, 15000, HOG, 0, APP, "hog", "fio");
	sys(c, ST_EV_sys_exit_pread64, 16000, 4096);
	expect("preempted", 0, 3000, 0, 0, 0, 0, 0, 3000);
	check(nout == 1 && !strcmp(out[0].runq_culprit, "hog"), "cause.preempted.culprit", "'%s'",
	      out[0].runq_culprit);
	check_sums("preempted");
	an_corr_free(c);
}

/*
 * pread 10000..15000 blocks at 10500 (state 2), is woken by the worker at
 * 14000 and switched in at 14700, after the worker: runq 700, culprit the
 * worker (prev of its switch-in), other 5000 - 700 = 4300.
 */
static void test_woken(void)
{
	struct an_corr *c = start();

	sys(c, ST_EV_sys_enter_pread64, 10000, 0);
	sw(c, 10500, APP, 2, 0, "fio", "swapper/0");
	wake(c, 14000, WORKER, APP);
	sw(c, 14700, WORKER, 2, APP, "kworker/u4:1", "fio");
	sys(c, ST_EV_sys_exit_pread64, 15000, 4096);
	expect("woken", 0, 700, 0, 0, 0, 0, 0, 4300);
	check(nout == 1 && !strcmp(out[0].runq_culprit, "kworker/u4:1"), "cause.woken.culprit",
	      "'%s'", out[0].runq_culprit);
	check_sums("woken");
	an_corr_free(c);
}

/*
 * pwrite 10000..16000 waits for a mutex 11000..15000 and is preempted
 * inside that wait 12000..12500: runq 500, lock 4000 - 500 = 3500, other
 * 6000 - 4000 = 2000; its kind mutex.
 */
static void test_lock_with_runq(void)
{
	struct an_corr *c = start();

	sys(c, ST_EV_sys_enter_pwrite64, 10000, 0);
	lock(c, ST_EV_contention_begin, 11000, 0xa0, AN_LCB_MUTEX);
	sw(c, 12000, APP, 0, HOG, "fio", "hog");
	sw(c, 12500, HOG, 0, APP, "hog", "fio");
	lock(c, ST_EV_contention_end, 15000, 0xa0, 0);
	sys(c, ST_EV_sys_exit_pwrite64, 16000, 4096);
	expect("lock_runq", 0, 500, 0, 3500, 0, 0, 0, 2000);
	check(nout == 1 && !strcmp(an_lock_kind(out[0].lock_flags), "mutex"), "cause.lock_runq.kind",
	      "%s", an_lock_kind(out[0].lock_flags));
	check_sums("lock_runq");
	an_corr_free(c);
}

/*
 * Nested windows, the outermost counts. pwrite 10000..15000: reclaim
 * 11000..14000 with a spinlock wait 11500..12000 inside it: reclaim 3000,
 * lock 0, other 2000. pwrite 20000..24000: a mutex that spins from 21000,
 * begun again at 21200 to sleep, acquired at 23000: one wait, lock 2000,
 * kind mutex (the way it waited last), other 2000.
 */
static void test_nested(void)
{
	struct an_corr *c = start();

	sys(c, ST_EV_sys_enter_pwrite64, 10000, 0);
	reclaim(c, ST_EV_mm_vmscan_direct_reclaim_begin, 11000);
	lock(c, ST_EV_contention_begin, 11500, 0xb0, AN_LCB_SPIN);
	lock(c, ST_EV_contention_end, 12000, 0xb0, 0);
	reclaim(c, ST_EV_mm_vmscan_direct_reclaim_end, 14000);
	sys(c, ST_EV_sys_exit_pwrite64, 15000, 4096);
	sys(c, ST_EV_sys_enter_pwrite64, 20000, 0);
	lock(c, ST_EV_contention_begin, 21000, 0xa0, AN_LCB_MUTEX | AN_LCB_SPIN);
	lock(c, ST_EV_contention_begin, 21200, 0xa0, AN_LCB_MUTEX);
	lock(c, ST_EV_contention_end, 23000, 0xa0, 0);
	sys(c, ST_EV_sys_exit_pwrite64, 24000, 4096);
	expect("nested.reclaim", 0, 0, 0, 0, 0, 0, 3000, 2000);
	expect("nested.mutex", 1, 0, 0, 2000, 0, 0, 0, 2000);
	check(nout == 2 && !strcmp(an_lock_kind(out[1].lock_flags), "mutex"), "cause.nested.kind",
	      "%s", an_lock_kind(out[1].lock_flags));
	check_sums("nested");
	an_corr_free(c);
}

/*
 * Clipped at the I/O's edges. write 10000..15000 paused for 5000 from
 * 12000 (to 17000, past its exit): dirty 15000 - 12000 = 3000, other 2000.
 * write 20000..23000: woken at 18000 (before the call: its switch-in was
 * lost), switched in at 21000: runq from the entry, 1000; a dirty pause
 * 21500..26500 cut at the exit: 1500; other 500.
 */
static void test_clipped(void)
{
	struct an_corr *c = start();

	sys(c, ST_EV_sys_enter_write, 10000, 0);
	dirty(c, 12000, 5000);
	sys(c, ST_EV_sys_exit_write, 15000, 4096);
	wake(c, 18000, WORKER, APP);
	sys(c, ST_EV_sys_enter_write, 20000, 0);
	sw(c, 21000, HOG, 0, APP, "hog", "fio");
	dirty(c, 21500, 5000);
	sys(c, ST_EV_sys_exit_write, 23000, 4096);
	expect("clipped.dirty", 0, 0, 0, 0, 0, 3000, 0, 2000);
	expect("clipped.runq", 1, 1000, 0, 0, 0, 1500, 0, 500);
	check_sums("clipped");
	an_corr_free(c);
}

/*
 * A direct pread 10000..14200; its request issued at 10400. The reader wakes
 * the loop worker at 10450, which waits for a CPU until 12500 (its earlier
 * wait 9000..9500 is before the issue), does the I/O and wakes ksoftirqd at
 * 13000, which waits until 13600 and completes the request at 13700:
 * svc_runq 2050 + 600 = 2650, the chain followed back from the completion.
 * The reader, woken at 13700, runs at 14000: runq 300. other 4200 - 2950 =
 * 1250.
 */
static void test_service_thread(void)
{
	struct an_corr *c = start();

	wake(c, 9000, HOG, WORKER);
	sw(c, 9500, HOG, 0, WORKER, "hog", "kworker");
	sw(c, 9600, WORKER, 1, HOG, "kworker", "hog");
	sys(c, ST_EV_sys_enter_pread64, 10000, 0);
	dio_begin(c, 10100);
	bio_queue(c, 10200, APP, 0xb1, ST_OP_READ);
	issue(c, 10400, 0x100, 0xb1);
	wake(c, 10450, APP, WORKER);
	sw(c, 10500, APP, 2, HOG, "fio", "hog");
	sw(c, 12500, HOG, 0, WORKER, "hog", "kworker");
	wake(c, 13000, WORKER, SOFTIRQ);
	sw(c, 13100, WORKER, 1, HOG, "kworker", "hog");
	sw(c, 13600, HOG, 0, SOFTIRQ, "hog", "ksoftirqd/0");
	complete(c, 13700, SOFTIRQ, 0x100);
	wake(c, 13700, SOFTIRQ, APP);
	sw(c, 13800, SOFTIRQ, 1, HOG, "ksoftirqd/0", "hog");
	sw(c, 14000, HOG, 0, APP, "hog", "fio");
	sys(c, ST_EV_sys_exit_pread64, 14200, 4096);
	expect("svc_runq", 0, 300, 2650, 0, 0, 0, 0, 1250);
	check(nout == 1 && out[0].cache == AN_CACHE_DIRECT, "cause.cache_direct", "%s",
	      an_cache_name(out[0].cache));
	check_sums("svc_runq");
	an_corr_free(c);
}

/*
 * A direct pread 1000..2100 with its bio (the thread uses the device), then
 * one 10000..30500 whose bio blk-throttle held back: its worker queued it at
 * 30000 (cgroup 1234): throttle 30000 - 10100 (the fs begin) = 19900. The
 * reader was preempted 10150..10900, inside that window: runq 750, and
 * throttle takes what is left of the total, 20500 - 750 = 19750; other 0.
 */
static void test_held(void)
{
	struct an_corr *c = start();

	sys(c, ST_EV_sys_enter_pread64, 1000, 0);
	dio_begin(c, 1100);
	bio_queue(c, 1200, APP, 0xb0, ST_OP_READ);
	issue(c, 1400, 0x100, 0xb0);
	complete(c, 2000, WORKER, 0x100);
	sys(c, ST_EV_sys_exit_pread64, 2100, 4096);
	sys(c, ST_EV_sys_enter_pread64, 10000, 0);
	dio_begin(c, 10100);
	sw(c, 10150, APP, 0, HOG, "fio", "hog");
	sw(c, 10900, HOG, 0, APP, "hog", "fio");
	bio_queue(c, 30000, THROTL, 0xb1, ST_OP_READ | ST_F_HELD);
	held(c, 30000, 0xb1, 1234);
	issue(c, 30100, 0x100, 0xb1);
	complete(c, 30400, WORKER, 0x100);
	sys(c, ST_EV_sys_exit_pread64, 30500, 4096);
	expect("held", 1, 750, 0, 0, 19750, 0, 0, 0);
	check(nout == 2 && out[1].blkcg == 1234, "cause.held.cgroup", "blkcg %" PRIu64, out[1].blkcg);
	check_sums("held");
	an_corr_free(c);
}

/*
 * Reads without iomap: one that added pages to the page cache (miss), one
 * whose bio filled no page of it (direct: O_DIRECT on a block device), one
 * with neither (hit); a write (none).
 */
static void test_cache(void)
{
	struct an_corr *c = start();

	sys(c, ST_EV_sys_enter_read, 10000, 0);
	page_added(c, 10500);
	sys(c, ST_EV_sys_exit_read, 12000, 4096);
	sys(c, ST_EV_sys_enter_read, 13000, 0);
	bio_queue(c, 13100, APP, 0xc1, ST_OP_READ);
	issue(c, 13200, 0x200, 0xc1);
	complete(c, 13800, WORKER, 0x200);
	sys(c, ST_EV_sys_exit_read, 14000, 4096);
	sys(c, ST_EV_sys_enter_read, 15000, 0);
	sys(c, ST_EV_sys_exit_read, 15500, 4096);
	sys(c, ST_EV_sys_enter_write, 16000, 0);
	sys(c, ST_EV_sys_exit_write, 16500, 4096);
	check(nout == 4 && out[0].cache == AN_CACHE_MISS && out[1].cache == AN_CACHE_DIRECT &&
	      out[2].cache == AN_CACHE_HIT && out[3].cache == AN_CACHE_NONE, "cause.cache",
	      "%d I/Os: %s %s %s %s", nout, an_cache_name(out[0].cache), an_cache_name(out[1].cache),
	      an_cache_name(out[2].cache), an_cache_name(out[3].cache));
	check_sums("cache");
	an_corr_free(c);
}

/*
 * A direct pread 10000..10400 whose thread reclaimed memory 10030..10330
 * (running, not waiting) while the worker it woke at 10015 for the request
 * issued at 10020 waited for a CPU until 10330 (svc_runq 10020..10330 =
 * 310), the request completed at 10390. The thread's own wait comes first:
 * reclaim 300; svc_runq takes what is left, 100; other 0.
 */
static void test_own_first(void)
{
	struct an_corr *c = start();

	sys(c, ST_EV_sys_enter_pread64, 10000, 0);
	dio_begin(c, 10005);
	bio_queue(c, 10010, APP, 0xd1, ST_OP_READ);
	wake(c, 10015, APP, WORKER);
	issue(c, 10020, 0x300, 0xd1);
	reclaim(c, ST_EV_mm_vmscan_direct_reclaim_begin, 10030);
	reclaim(c, ST_EV_mm_vmscan_direct_reclaim_end, 10330);
	sw(c, 10330, APP, 2, WORKER, "fio", "kworker");
	complete(c, 10390, WORKER, 0x300);
	sys(c, ST_EV_sys_exit_pread64, 10400, 4096);
	expect("own_first", 0, 0, 100, 0, 0, 0, 300, 0);
	check_sums("own_first");
	an_corr_free(c);
}

/*
 * A dirty pause of 5000 from 10500 in a write 10000..13000, cut short: the
 * thread was woken at 11000 (a signal) and waited for a CPU until 12000:
 * dirty 10500..11000 = 500, runq 1000, other 3000 - 1500 = 1500. Then a
 * pause of 1000 from 20500 in a write 20000..22500 whose timer fired on a
 * later tick, 22000 (the pause lasts until the wakeup: 1500), the thread
 * running at 22200: runq 200, other 2500 - 1700 = 800.
 */
static void test_dirty_runq(void)
{
	struct an_corr *c = start();

	sys(c, ST_EV_sys_enter_write, 10000, 0);
	dirty(c, 10500, 5000);
	wake(c, 11000, HOG, APP);
	sw(c, 12000, HOG, 0, APP, "hog", "fio");
	sys(c, ST_EV_sys_exit_write, 13000, 4096);
	sys(c, ST_EV_sys_enter_write, 20000, 0);
	dirty(c, 20500, 1000);
	sw(c, 20600, APP, 2, HOG, "fio", "hog");
	wake(c, 22000, HOG, APP);
	sw(c, 22200, HOG, 0, APP, "hog", "fio");
	sys(c, ST_EV_sys_exit_write, 22500, 4096);
	expect("dirty_runq.early", 0, 1000, 0, 0, 0, 500, 0, 1500);
	expect("dirty_runq.tick", 1, 200, 0, 0, 0, 1500, 0, 800);
	check_sums("dirty_runq");
	an_corr_free(c);
}

/* Without an_corr_enable_causes (a recording without the why events): no cause stages. */
static void test_off(void)
{
	struct an_corr *c = NULL;

	nout = 0;
	an_corr_new(&c, 0, collect, NULL);
	sys(c, ST_EV_sys_enter_pread64, 10000, 0);
	sw(c, 12000, APP, 0, HOG, "fio", "hog");
	sw(c, 15000, HOG, 0, APP, "hog", "fio");
	sys(c, ST_EV_sys_exit_pread64, 16000, 4096);
	check(nout == 1 && !(out[0].flags & AN_IO_WHY) && stage(0, AN_ST_RUNQ) == UINT64_MAX &&
	      stage(0, AN_ST_OTHER) == UINT64_MAX && stage(0, AN_ST_TOTAL) == 6000, "cause.off",
	      "flags %#x runq %" PRIu64, out[0].flags, stage(0, AN_ST_RUNQ));
	an_corr_free(c);
}

/* A data call's entry or exit (format 1.6) with its thread's run_delay then. */
static void sys_rd(struct an_corr *c, uint16_t type, uint64_t ts, int64_t ret, uint64_t run_delay)
{
	struct st_ev_sys_enter e = { .p = { .fd = 3, .count = 4096, .offset = 8192,
					    .run_delay = run_delay } };
	struct st_ev_sys_exit x = { .p = { .ret = ret, .run_delay = run_delay } };

	if ((st_event_kind(type) & ST_KIND_MASK) == ST_KIND_SYS_ENTER) {
		head_of(&e.h, type, sizeof(e), ts, APP);
		an_corr_event(c, &e.h);
	} else {
		head_of(&x.h, type, sizeof(x), ts, APP);
		an_corr_event(c, &x.h);
	}
}

/* A pread of APP's entered at ts (its thread's run_delay then), its bio queued and issued by 400. */
static void pread_issued(struct an_corr *c, uint64_t ts, uint64_t run_delay, uint64_t bio, uint64_t rq)
{
	sys_rd(c, ST_EV_sys_enter_pread64, ts, 0, run_delay);
	dio_begin(c, ts + 100);
	bio_queue(c, ts + 200, APP, bio, ST_OP_READ);
	issue(c, ts + 400, rq, bio);
}

/* Kernel thread tid's run_delay as it completes a request at ts (recorded just before). */
static void svc_delay(struct an_corr *c, uint64_t ts, uint32_t tid, uint64_t run_delay)
{
	struct st_ev_svc_run_delay e = { .p = { .run_delay = run_delay } };

	head_of(&e.h, ST_EV_svc_run_delay, sizeof(e), ts, tid);
	an_corr_event(c, &e.h);
}

/* The same, naming the thread that raised the softirq it completes in (format 1.7). */
static void svc_raise(struct an_corr *c, uint64_t ts, uint32_t tid, uint64_t run_delay,
		      uint32_t raiser, uint64_t raised_at, uint64_t raiser_run_delay)
{
	struct st_ev_svc_run_delay e = { .p = { .run_delay = run_delay, .raiser_tid = raiser,
						.raised_at = raised_at,
						.raiser_run_delay = raiser_run_delay } };

	head_of(&e.h, ST_EV_svc_run_delay, sizeof(e), ts, tid);
	an_corr_event(c, &e.h);
}

/*
 * No sched records (format 1.6's `why`): runq from the run_delay counts.
 * ksoftirqd completed an earlier request at 5000 (its run_delay 1000).
 * pread 10000..14200, its thread's run_delay 500 at the entry, 800 at the
 * exit: runq 300. Its request issued 10400, completed by ksoftirqd at
 * 13700 with run_delay 2200: it waited 1200 since 5000, all inside
 * [10400, 13700] (3300 long): svc_runq 1200; other 4200 - 1500 = 2700.
 * Then pread 20000..21500 (run_delay 800 both ends: runq 0), issued 20400,
 * completed by ksoftirqd at 21000 with run_delay 7200: 5000 since 13700,
 * but only 21000 - 20400 = 600 of that stretch is inside the I/O's
 * window: svc_runq 600, other 900. No culprit is known: the flag says so.
 * A wait of the I/O's own thread never counts as svc_runq: a completion
 * in the caller (APP) gives none.
 */
static void test_run_delay(void)
{
	struct an_corr *c = start();

	svc_delay(c, 5000, SOFTIRQ, 1000);
	pread_issued(c, 10000, 500, 0xb1, 0x100);
	svc_delay(c, 13700, SOFTIRQ, 2200);
	complete(c, 13700, SOFTIRQ, 0x100);
	sys_rd(c, ST_EV_sys_exit_pread64, 14200, 4096, 800);
	expect("run_delay", 0, 300, 1200, 0, 0, 0, 0, 2700);
	pread_issued(c, 20000, 800, 0xb2, 0x200);
	svc_delay(c, 21000, SOFTIRQ, 7200);
	complete(c, 21000, SOFTIRQ, 0x200);
	sys_rd(c, ST_EV_sys_exit_pread64, 21500, 4096, 800);
	expect("run_delay_clipped", 1, 0, 600, 0, 0, 0, 0, 900);
	check(nout == 2 && (out[0].flags & AN_IO_RUNQ_COUNTED) && !out[0].runq_culprit[0],
	      "cause.run_delay_no_culprit", "flags %#x culprit '%s'", out[0].flags, out[0].runq_culprit);
	pread_issued(c, 30000, 800, 0xb3, 0x300);
	complete(c, 31000, APP, 0x300);
	sys_rd(c, ST_EV_sys_exit_pread64, 31500, 4096, 900);
	expect("run_delay_own_completion", 2, 100, 0, 0, 0, 0, 0, 1400);
	check_sums("run_delay");
	an_corr_free(c);
}

/*
 * No sched records, the completing thread's samples past its ring of 32:
 * ksoftirqd's run_delay 100 * i at 1000 * i for i = 1..39, then 4200 at
 * 39800 as it completes the request a pread (39100..40000) issued at
 * 39400, then 9999 at 39900, after the completion: svc_runq is 4200 - 3900
 * = 300 since 39000 (the samples at 39800 and 39000, newest first over the
 * wrapped ring, the one after the completion passed over); other 600.
 * Then a sample that comes late (44000 after 45000): the ring is no longer
 * in time order, and the sample before the completion at 46800 is the one
 * at 45000 (10000), not the one that came last: a pread 45200..47000
 * issued at 45500 gets 10500 - 10000 = 500, not 1500 clipped to 1300.
 */
static void test_run_delay_ring(void)
{
	struct an_corr *c = start();

	for (uint64_t i = 1; i < 40; i++)
		svc_delay(c, 1000 * i, SOFTIRQ, 100 * i);
	sys_rd(c, ST_EV_sys_enter_pread64, 39100, 0, 500);
	dio_begin(c, 39150);
	bio_queue(c, 39200, APP, 0xb1, ST_OP_READ);
	issue(c, 39400, 0x100, 0xb1);
	svc_delay(c, 39800, SOFTIRQ, 4200);
	complete(c, 39800, SOFTIRQ, 0x100);
	svc_delay(c, 39900, SOFTIRQ, 9999);
	sys_rd(c, ST_EV_sys_exit_pread64, 40000, 4096, 500);
	expect("run_delay_ring", 0, 0, 300, 0, 0, 0, 0, 600);
	svc_delay(c, 45000, SOFTIRQ, 10000);
	svc_delay(c, 44000, SOFTIRQ, 9000);
	sys_rd(c, ST_EV_sys_enter_pread64, 45200, 0, 500);
	dio_begin(c, 45300);
	bio_queue(c, 45400, APP, 0xb2, ST_OP_READ);
	issue(c, 45500, 0x200, 0xb2);
	svc_delay(c, 46800, SOFTIRQ, 10500);
	complete(c, 46800, SOFTIRQ, 0x200);
	sys_rd(c, ST_EV_sys_exit_pread64, 47000, 4096, 500);
	expect("run_delay_ring_late", 1, 0, 500, 0, 0, 0, 0, 1300);
	an_corr_free(c);
}

/*
 * A late sample leaves the ring out of time order only while the pair out
 * of order is in it: ksoftirqd's samples at 1000 * i (i = 1..10), a pread
 * 43100..48000 issued at 43500, ksoftirqd's samples at 45000 (10000) and,
 * late, 44000 (9000), the completion at 46800, then 30 samples after it
 * (47000 on) before the call returns. The ring of 32 still holds 45000 and
 * 44000: the sample before the completion is 45000's, the one before it
 * 44000's: svc_runq 1000 (from 44000 to 45000), other 3900. Walked newest
 * first, as a ring in time order is, 44000 would come first (svc_runq 0).
 * 31 samples later the pair has left the ring, which is in order again: a
 * second pread 60000..63000 issued at 60400, completed at 62000 (ksoftirqd
 * at 61000 (30500) and 62000 (31000)): svc_runq 500, other 2500.
 */
static void test_run_delay_ring_sorted(void)
{
	struct an_corr *c = start();

	for (uint64_t i = 1; i <= 10; i++)
		svc_delay(c, 1000 * i, SOFTIRQ, 100 * i);
	pread_issued(c, 43100, 500, 0xb1, 0x100);
	svc_delay(c, 45000, SOFTIRQ, 10000);
	svc_delay(c, 44000, SOFTIRQ, 9000);
	complete(c, 46800, SOFTIRQ, 0x100);
	for (uint64_t i = 0; i < 30; i++)
		svc_delay(c, 47000 + 10 * i, SOFTIRQ, 20000 + i);
	sys_rd(c, ST_EV_sys_exit_pread64, 48000, 4096, 500);
	expect("run_delay_ring_pair_kept", 0, 0, 1000, 0, 0, 0, 0, 3900);
	svc_delay(c, 50000, SOFTIRQ, 30000);
	pread_issued(c, 60000, 500, 0xb2, 0x200);
	svc_delay(c, 61000, SOFTIRQ, 30500);
	svc_delay(c, 62000, SOFTIRQ, 31000);
	complete(c, 62000, SOFTIRQ, 0x200);
	sys_rd(c, ST_EV_sys_exit_pread64, 63000, 4096, 500);
	expect("run_delay_ring_sorted_again", 1, 0, 500, 0, 0, 0, 0, 2500);
	an_corr_free(c);
}

/*
 * No sched records, ksoftirqd completing what the loop worker raised
 * (format 1.7): the worker's wait before its raise counts too. ksoftirqd
 * completed an earlier request at 5000 (its run_delay 1000), raised by the
 * worker at 4000 (100). A pread 10000..14200 (runq 0) issued at 10400: the
 * worker waits 2000 and raises at 12900 (2100); ksoftirqd completes a batch
 * of 40 requests it raised from 13661 to 13700 (run_delay 1300), the
 * pread's last: ksoftirqd's own wait, 300, went to the batch's first, the
 * worker's 2000 (between its raises at 4000 and 12900, inside [10400,
 * 13700]) to each: svc_runq 2000 (0 if the batch's 40 copies of one raise
 * pushed the raise at 4000 out of the worker's ring of 32), other 2200.
 * Then a pread 20000..22000 issued at 20400: the worker's run_delay grows
 * 1000 to its raise at 21000, but only 600 of that stretch is the I/O's
 * and before the raise: svc_runq 600, other 1400.
 */
static void test_run_delay_raiser(void)
{
	struct an_corr *c = start();

	svc_raise(c, 5000, SOFTIRQ, 1000, WORKER, 4000, 100);
	pread_issued(c, 10000, 500, 0xb1, 0x100);
	for (uint64_t ts = 13661; ts <= 13700; ts++)
		svc_raise(c, ts, SOFTIRQ, 1300, WORKER, 12900, 2100);
	complete(c, 13700, SOFTIRQ, 0x100);
	sys_rd(c, ST_EV_sys_exit_pread64, 14200, 4096, 500);
	expect("run_delay_raiser", 0, 0, 2000, 0, 0, 0, 0, 2200);
	pread_issued(c, 20000, 500, 0xb2, 0x200);
	svc_raise(c, 21500, SOFTIRQ, 1300, WORKER, 21000, 3100);
	complete(c, 21500, SOFTIRQ, 0x200);
	sys_rd(c, ST_EV_sys_exit_pread64, 22000, 4096, 500);
	expect("run_delay_raiser_clipped", 1, 0, 600, 0, 0, 0, 0, 1400);
	check_sums("run_delay_raiser");
	an_corr_free(c);
}

/*
 * No sched records, a dirty pause: pwrite 10000..30000 (run_delay 0 at the
 * entry, 2000 at the exit: runq 2000), paused at 11000 for 4000 (to 15000
 * as asked); its next event, a page-cache add at 25000, says it ran again
 * by then: the pause lasted 14000, 10000 past the ask, of which the call's
 * runq 2000 is taken as the wait after its wakeup: dirty 12000; other
 * 20000 - 14000 = 6000. A second pwrite 40000..50000 paused at 41000 for
 * 3000 with no event after: its pause ends at the exit, 9000, runq 0.
 */
static void test_run_delay_dirty(void)
{
	struct an_corr *c = start();

	sys_rd(c, ST_EV_sys_enter_pwrite64, 10000, 0, 1);
	dirty(c, 11000, 4000);
	page_added(c, 25000);
	sys_rd(c, ST_EV_sys_exit_pwrite64, 30000, 4096, 2001);
	expect("run_delay_dirty", 0, 2000, 0, 0, 0, 12000, 0, 6000);
	sys_rd(c, ST_EV_sys_enter_pwrite64, 40000, 0, 2001);
	dirty(c, 41000, 3000);
	sys_rd(c, ST_EV_sys_exit_pwrite64, 50000, 4096, 2001);
	expect("run_delay_dirty_to_exit", 1, 0, 0, 0, 0, 9000, 0, 1000);
	check_sums("run_delay_dirty");
	an_corr_free(c);
}

/*
 * A 1.5 file (sched records, no run_delay): the sched records decide, and
 * once any is met the run_delay counts are not used: the culprit is named.
 */
static void test_sched_decides(void)
{
	struct an_corr *c = start();

	sys_rd(c, ST_EV_sys_enter_pread64, 10000, 0, 100);
	sw(c, 12000, APP, 0, HOG, "fio", "hog");
	sw(c, 15000, HOG, 0, APP, "hog", "fio");
	sys_rd(c, ST_EV_sys_exit_pread64, 16000, 4096, 9100);
	expect("sched_decides", 0, 3000, 0, 0, 0, 0, 0, 3000);
	check(nout == 1 && !(out[0].flags & AN_IO_RUNQ_COUNTED) && !strcmp(out[0].runq_culprit, "hog"),
	      "cause.sched_decides_culprit", "flags %#x culprit '%s'", out[0].flags, out[0].runq_culprit);
	an_corr_free(c);
}

/* I/Os the random sequence emitted, and those whose causes broke the bound. */
static uint64_t random_ios, random_bad;

static void check_bound(void *ctx, const struct an_io *io)
{
	uint64_t ns[AN_ST_COUNT], sum = 0;
	unsigned defined = an_io_stages(io, ns);

	(void)ctx;
	random_ios++;
	if (!(io->flags & AN_IO_WHY)) {
		random_bad++;
		return;
	}
	if (!(defined & 1u << AN_ST_TOTAL))
		return;
	for (unsigned s = AN_ST_RUNQ; s <= AN_ST_OTHER; s++)
		sum += ns[s];
	random_bad += sum != ns[AN_ST_TOTAL];
}

/*
 * 200000 events of the why types with random fields (lost ends, unpaired
 * locks, huge pauses, unknown threads) among the syscalls of four threads:
 * every I/O still has causes and other adding up to its total exactly (the
 * ASan build checks the memory).
 */
static void test_random(void)
{
	static const uint16_t types[] = {
		ST_EV_sched_switch, ST_EV_sched_wakeup, ST_EV_contention_begin, ST_EV_contention_end,
		ST_EV_balance_dirty_pages, ST_EV_mm_vmscan_direct_reclaim_begin,
		ST_EV_mm_vmscan_direct_reclaim_end, ST_EV_mm_vmscan_memcg_reclaim_begin,
		ST_EV_mm_vmscan_memcg_reclaim_end, ST_EV_mm_filemap_add_to_page_cache,
	};
	struct an_corr *c = NULL;
	uint64_t x = 88172645463325252ull, ts = 1000;
	union {
		struct st_event_header h;
		struct st_ev_sched_switch sw;
		struct st_ev_sys_enter in;
		struct st_ev_sys_exit ex;
		unsigned char raw[256];
	} e;

	an_corr_new(&c, 0, check_bound, NULL);
	an_corr_enable_causes(c, AN_CAUSES_ALL);
	for (int k = 0; k < 200000; k++) {
		uint32_t tid = 1 + (uint32_t)(x % 4), r;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		r = (uint32_t)(x >> 32);
		ts += r % 1000;
		memset(&e, 0, sizeof(e));
		for (unsigned b = 0; b < sizeof(e.raw); b++)
			e.raw[b] = (unsigned char)(x >> (b % 8 * 8)) ^ (unsigned char)b;
		if (r % 5 == 0) {
			/* a pread's entry or exit */
			head_of(&e.h, r & 64 ? ST_EV_sys_enter_pread64 : ST_EV_sys_exit_pread64,
				sizeof(e.in), ts, tid);
		} else {
			head_of(&e.h, types[r % (sizeof(types) / sizeof(types[0]))], sizeof(e.raw), ts, tid);
			if (e.h.type == ST_EV_sched_switch) {
				e.sw.p.prev_tid = tid;
				e.sw.p.next_tid = 1 + r % 5;
				e.sw.p.prev_state = r & 128 ? 0 : 1;
			}
		}
		an_corr_event(c, &e.h);
	}
	an_corr_finish(c);
	check(random_ios > 1000 && !random_bad, "cause.random_bound",
	      "%" PRIu64 " of %" PRIu64 " I/Os without causes or off their total", random_bad, random_ios);
	an_corr_free(c);
}

int main(void)
{
	test_preempted();
	test_woken();
	test_lock_with_runq();
	test_nested();
	test_clipped();
	test_service_thread();
	test_held();
	test_cache();
	test_dirty_runq();
	test_own_first();
	test_off();
	test_run_delay();
	test_run_delay_ring();
	test_run_delay_ring_sorted();
	test_run_delay_raiser();
	test_run_delay_dirty();
	test_sched_decides();
	test_random();
	return check_failures != 0;
}
