/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/cause.h"
#include "analyze/lib/idmap.h"
#include "analyze/lib/pool.h"

/* Runq waits kept per thread for svc_runq: enough for the requests a worker completes meanwhile. */
#define RUNQ_RING 32

/* Threads of a service chain followed back from the completion (svc_runq). */
#define SVC_CHAIN 4

/* One runq wait: [from, to), and the thread that woke it (0: it was preempted). */
struct wait {
	uint64_t from, to;
	uint32_t waker;
};

/*
 * A kernel thread's run-queue wait so far as it completed a request
 * (svc_run_delay), or as it raised the block softirq another one completed
 * in; of a completion, the thread that raised it (0 none).
 */
struct delay_sample {
	uint64_t ts, run_delay;
	uint32_t raiser;
};

/* Samples kept per thread: enough for the requests it completes before their I/Os end. */
#define DELAY_RING 32

/* Threads kept: past this many the table starts again, bounded by the threads of the moment. */
#define THREADS_MAX 65536

struct thr {
	uint32_t link;		/* pool free list */
	uint32_t ring_next;	/* next slot of ring */
	uint64_t runnable_since;	/* woken or preempted at, 0: running or blocked */
	uint32_t waker;		/* the thread that woke it then, 0 preempted */
	char preempted_by[ST_COMM_LEN];	/* the task that took its CPU, "" when it was woken */
	/* The I/O the maxima are of (its start), so a new call starts them again. */
	uint64_t io_start, runq_max, lock_max;
	/* The outermost lock or reclaim window open, win_start 0 none. */
	uint64_t win_start, win_lock, win_io_start;
	uint64_t win_runq;	/* its I/O's runq when it opened */
	uint32_t win_depth;	/* reclaims nested in it */
	uint8_t win_cause;	/* AN_CAUSE_LOCK or AN_CAUSE_RECLAIM */
	uint8_t win_flags;	/* the lock's LCB_F_* */
	uint64_t dirty_from, dirty_to;	/* its last dirty-page pause */
	uint8_t dirty_asleep;	/* in that pause: its end is the wakeup, not ts + pause */
	/* Without sched records: the time its pauses of I/O dirty_ext_io ran past their ask. */
	uint64_t dirty_ext, dirty_ext_io;
	struct wait ring[RUNQ_RING];	/* its last runq waits */
	uint32_t delay_next;	/* next slot of delays */
	/*
	 * Records pushed since the last one dated before the one it followed,
	 * while the ring still holds that pair (DELAY_RING - 1 more pushes):
	 * not 0, the ring is not in time order.
	 */
	uint8_t delays_unsorted;
	struct delay_sample delays[DELAY_RING];	/* its last svc_run_delay records */
};

struct an_causes {
	struct an_pool thrs;
	struct an_idmap by_tid;
	int failed;
	int sched_seen;	/* sched records met: runq from them, else from the run_delay reads */
	unsigned measured;	/* an_io.causes of every I/O */
	uint32_t dirty_asleep;	/* threads asleep in a dirty-page pause (thr.dirty_asleep) */
};

#define THR(cz, i) AN_POOL_AT(&(cz)->thrs, struct thr, i)

int an_cause_new(struct an_causes **czp, unsigned measured)
{
	struct an_causes *cz = calloc(1, sizeof(*cz));

	if (!cz)
		return -1;
	cz->measured = measured;
	an_pool_init(&cz->thrs, sizeof(struct thr));
	if (an_idmap_init(&cz->by_tid, 256)) {
		free(cz);
		return -1;
	}
	*czp = cz;
	return 0;
}

void an_cause_free(struct an_causes *cz)
{
	if (!cz)
		return;
	an_pool_free(&cz->thrs);
	an_idmap_free(&cz->by_tid);
	free(cz);
}

int an_cause_failed(const struct an_causes *cz)
{
	return cz->failed;
}

/*
 * Thread tid's state, NULL when it has none. Inline, as thr_get()'s look-up:
 * a few per event and per I/O, where a call costs what the probe does.
 */
static inline __attribute__((always_inline)) struct thr *thr_find(struct an_causes *cz, uint32_t tid)
{
	uint32_t i = an_idmap_get(&cz->by_tid, tid);

	return i == AN_NONE ? NULL : THR(cz, i);
}

/* thr_get() of a thread met for the first time: its state made. */
static __attribute__((noinline)) struct thr *thr_new(struct an_causes *cz, uint32_t tid)
{
	uint32_t i;

	if (!tid)
		return NULL;
	if (cz->by_tid.count >= THREADS_MAX) {
		an_idmap_clear(&cz->by_tid);
		an_pool_free(&cz->thrs);
		an_pool_init(&cz->thrs, sizeof(struct thr));
		cz->dirty_asleep = 0;
	}
	i = an_pool_get(&cz->thrs);
	if (i == AN_NONE || an_idmap_put(&cz->by_tid, tid, i)) {
		cz->failed = 1;
		return NULL;
	}
	memset(THR(cz, i), 0, sizeof(struct thr));
	return THR(cz, i);
}

/* Thread tid's state, made when missing; NULL when out of memory. */
static inline __attribute__((always_inline)) struct thr *thr_get(struct an_causes *cz, uint32_t tid)
{
	struct thr *t = thr_find(cz, tid);

	return t ? t : thr_new(cz, tid);
}

/* The thread's maxima are io's: a new I/O starts them again. */
static void thr_io(struct thr *t, const struct an_io *io)
{
	if (t->io_start != io->start) {
		t->io_start = io->start;
		t->runq_max = 0;
		t->lock_max = 0;
	}
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/* Thread t waited on a run queue over [from, to); io: the I/O of its syscall, NULL none. */
static void runq_wait(struct thr *t, uint64_t from, uint64_t to, const char *culprit, struct an_io *io)
{
	uint64_t ns, in_dirty;

	t->ring[t->ring_next] = (struct wait){ from, to, t->waker };
	t->ring_next = (t->ring_next + 1) % RUNQ_RING;
	if (!io)
		return;
	ns = overlap(from, to, io->ts[AN_TS_SYS_ENTER], to);
	if (!ns)
		return;
	io->cause_ns[AN_CAUSE_RUNQ] += ns;
	thr_io(t, io);
	if (ns > t->runq_max) {
		t->runq_max = ns;
		memcpy(io->runq_culprit, culprit, ST_COMM_LEN);
		io->runq_culprit[ST_COMM_LEN - 1] = 0;
	}
	/* a wait inside its dirty-page pause is runq, not dirty */
	if (t->dirty_from >= io->ts[AN_TS_SYS_ENTER]) {
		in_dirty = overlap(from, to, t->dirty_from, t->dirty_to);
		io->cause_ns[AN_CAUSE_DIRTY] -= in_dirty < io->cause_ns[AN_CAUSE_DIRTY] ?
						in_dirty : io->cause_ns[AN_CAUSE_DIRTY];
	}
}

static void on_wakeup(struct an_causes *cz, const struct st_ev_sched_wakeup *e)
{
	struct thr *t = thr_get(cz, e->p.woken_tid);

	if (t && !t->runnable_since) {
		t->runnable_since = e->h.ts;
		t->waker = e->h.tid;
		t->preempted_by[0] = 0;
	}
}

/*
 * Thread t, asleep in a dirty-page pause, woke at ts: the pause lasted until
 * then (its timer fires on a tick after ts + pause; a signal cuts it short).
 * Measured here: 44 pauses asking 180 ms kept fio asleep 315 ms.
 */
static void dirty_woken(struct an_causes *cz, struct thr *t, uint64_t ts, struct an_io *io)
{
	uint64_t *dirty;

	t->dirty_asleep = 0;
	cz->dirty_asleep--;
	if (!io || t->dirty_from < io->ts[AN_TS_SYS_ENTER] || ts < t->dirty_from)
		return;
	dirty = &io->cause_ns[AN_CAUSE_DIRTY];
	if (ts > t->dirty_to) {
		*dirty += ts - t->dirty_to;
		if (t->dirty_ext_io == io->start)
			t->dirty_ext += ts - t->dirty_to;
	} else
		*dirty -= t->dirty_to - ts < *dirty ? t->dirty_to - ts : *dirty;
	t->dirty_to = ts;
}

static void on_switch(struct an_causes *cz, const struct st_ev_sched_switch *e, struct an_io *next_io)
{
	struct thr *t;

	if (e->p.prev_state == 0) {
		t = thr_get(cz, e->p.prev_tid);
		if (t) {
			t->runnable_since = e->h.ts;
			t->waker = 0;
			memcpy(t->preempted_by, e->p.next_comm, ST_COMM_LEN);
		}
	} else if ((t = thr_find(cz, e->p.prev_tid))) {
		t->runnable_since = 0;
	}
	t = thr_find(cz, e->p.next_tid);
	if (!t)
		return;
	if (t->dirty_asleep)
		dirty_woken(cz, t, t->runnable_since ? t->runnable_since : e->h.ts, next_io);
	if (!t->runnable_since)
		return;
	if (e->h.ts > t->runnable_since)
		runq_wait(t, t->runnable_since, e->h.ts,
			  t->preempted_by[0] ? t->preempted_by : e->p.prev_comm, next_io);
	t->runnable_since = 0;
}

/* Inside the thread's last dirty-page pause. */
static int in_dirty_pause(const struct thr *t, uint64_t ts)
{
	return ts >= t->dirty_from && ts < t->dirty_to;
}

static void window_open(struct thr *t, uint64_t ts, uint8_t cause, uint64_t lock, uint8_t flags,
			const struct an_io *io)
{
	t->win_start = ts;
	t->win_cause = cause;
	t->win_lock = lock;
	t->win_flags = flags;
	t->win_depth = 1;
	t->win_io_start = io->start;
	t->win_runq = io->cause_ns[AN_CAUSE_RUNQ];
}

/* The outermost window ends at ts: its time inside io, less the runq waits in it. */
static void window_close(struct thr *t, uint64_t ts, struct an_io *io)
{
	uint64_t from = t->win_start, ns, runq;

	t->win_start = 0;
	if (!io)
		return;
	if (from < io->ts[AN_TS_SYS_ENTER])
		from = io->ts[AN_TS_SYS_ENTER];
	/* opened before this call: every runq wait of the call so far was inside it */
	runq = io->cause_ns[AN_CAUSE_RUNQ] - (t->win_io_start == io->start ? t->win_runq : 0);
	ns = ts > from ? ts - from : 0;
	ns = ns > runq ? ns - runq : 0;
	io->cause_ns[t->win_cause] += ns;
	thr_io(t, io);
	if (t->win_cause == AN_CAUSE_LOCK && ns > t->lock_max) {
		t->lock_max = ns;
		io->lock_flags = t->win_flags;
	}
}

static void on_lock(struct an_causes *cz, const struct st_ev_lock_contention *e, struct an_io *io)
{
	struct thr *t;

	if (e->h.type == ST_EV_contention_end) {
		t = thr_find(cz, e->h.tid);
		if (t && t->win_start && t->win_cause == AN_CAUSE_LOCK && t->win_lock == e->p.lock)
			window_close(t, e->h.ts, io);
		return;
	}
	if (!io || !(t = thr_get(cz, e->h.tid)))
		return;
	if (t->win_start) {
		/* the same lock begun again: a mutex that spun, now sleeping on it */
		if (t->win_cause == AN_CAUSE_LOCK && t->win_lock == e->p.lock)
			t->win_flags = (uint8_t)e->p.flags;
		return;
	}
	if (!in_dirty_pause(t, e->h.ts))
		window_open(t, e->h.ts, AN_CAUSE_LOCK, e->p.lock, (uint8_t)e->p.flags, io);
}

static void on_reclaim(struct an_causes *cz, const struct st_event_header *h, struct an_io *io)
{
	int begin = h->type == ST_EV_mm_vmscan_direct_reclaim_begin ||
		    h->type == ST_EV_mm_vmscan_memcg_reclaim_begin;
	struct thr *t;

	if (!begin) {
		t = thr_find(cz, h->tid);
		if (t && t->win_start && t->win_cause == AN_CAUSE_RECLAIM && !--t->win_depth)
			window_close(t, h->ts, io);
		return;
	}
	if (!io || !(t = thr_get(cz, h->tid)))
		return;
	if (t->win_start)
		t->win_depth += t->win_cause == AN_CAUSE_RECLAIM;
	else if (!in_dirty_pause(t, h->ts))
		window_open(t, h->ts, AN_CAUSE_RECLAIM, 0, 0, io);
}

static void on_dirty(struct an_causes *cz, const struct st_ev_dirty_pause *e, struct an_io *io)
{
	struct thr *t;

	if (!io || !e->p.pause_ns || !(t = thr_get(cz, e->h.tid)))
		return;
	if (t->win_start || in_dirty_pause(t, e->h.ts))
		return;
	t->dirty_from = e->h.ts;
	t->dirty_to = e->h.ts + e->p.pause_ns;
	cz->dirty_asleep += !t->dirty_asleep;
	t->dirty_asleep = 1;
	if (t->dirty_ext_io != io->start) {
		t->dirty_ext_io = io->start;
		t->dirty_ext = 0;
	}
	io->cause_ns[AN_CAUSE_DIRTY] += e->p.pause_ns;
}

static void on_page_cache(const struct st_ev_page_cache *e, struct an_io *io)
{
	if (io && io->op == AN_OP_READ && (!io->ino || io->ino == e->p.ino))
		io->cache = AN_CACHE_MISS;
}

/*
 * The ring is in time order again once the pair out of order has left it:
 * one record dated early (a raiser's sample from before its last, a CPU's
 * records behind another's) would otherwise send every later lookup of
 * the thread through the scans of the whole ring.
 */
static void delay_push(struct thr *t, struct delay_sample d)
{
	if (d.ts < t->delays[(t->delay_next + DELAY_RING - 1) % DELAY_RING].ts)
		t->delays_unsorted = DELAY_RING - 1;
	else if (t->delays_unsorted)
		t->delays_unsorted--;
	t->delays[t->delay_next] = d;
	t->delay_next = (t->delay_next + 1) % DELAY_RING;
}

/*
 * The completing thread's sample, and the raiser's as it raised: once per
 * raise, which the completions of one softirq run all name (a batch would
 * push the raiser's earlier samples out of its ring).
 */
static void on_svc_run_delay(struct an_causes *cz, const struct st_ev_svc_run_delay *e)
{
	struct thr *t = thr_get(cz, e->h.tid), *r;
	uint32_t raiser = e->p.raiser_tid != e->h.tid ? e->p.raiser_tid : 0;

	if (!t)
		return;
	delay_push(t, (struct delay_sample){ e->h.ts, e->p.run_delay, raiser });
	if (!raiser || !(r = thr_get(cz, raiser)))
		return;
	const struct delay_sample *newest = &r->delays[(r->delay_next + DELAY_RING - 1) % DELAY_RING];

	if (newest->ts != e->p.raised_at || newest->run_delay != e->p.raiser_run_delay)
		delay_push(r, (struct delay_sample){ e->p.raised_at, e->p.raiser_run_delay, 0 });
}

void an_cause_event(struct an_causes *cz, const struct st_event_header *h, struct an_io *io)
{
	struct thr *t;

	/*
	 * Without sched records a dirty pause ends at its thread's next event
	 * (or the call's exit): it ran on a CPU again by then. The run-queue
	 * wait after its wakeup is taken out at the finish.
	 */
	if (cz->dirty_asleep && !cz->sched_seen && h->type != ST_EV_sched_switch &&
	    h->type != ST_EV_sched_wakeup && h->type != ST_EV_svc_run_delay &&
	    (t = thr_find(cz, h->tid)) && t->dirty_asleep)
		dirty_woken(cz, t, h->ts, io);
	switch (h->type) {
	case ST_EV_sched_switch:
		cz->sched_seen = 1;
		on_switch(cz, (const struct st_ev_sched_switch *)h, io);
		break;
	case ST_EV_sched_wakeup:
		cz->sched_seen = 1;
		on_wakeup(cz, (const struct st_ev_sched_wakeup *)h);
		break;
	case ST_EV_svc_run_delay:
		on_svc_run_delay(cz, (const struct st_ev_svc_run_delay *)h);
		break;
	case ST_EV_contention_begin:
	case ST_EV_contention_end:
		on_lock(cz, (const struct st_ev_lock_contention *)h, io);
		break;
	case ST_EV_balance_dirty_pages:
		on_dirty(cz, (const struct st_ev_dirty_pause *)h, io);
		break;
	case ST_EV_mm_filemap_add_to_page_cache:
		on_page_cache((const struct st_ev_page_cache *)h, io);
		break;
	default:
		on_reclaim(cz, h, io);
		break;
	}
}

/*
 * The runq waits inside io's [issue, complete] of the threads that served
 * it: the one its completion ran in (ksoftirqd, a loop worker, a kworker),
 * and, back from it, the thread that woke it inside that window for the
 * part before (the loop worker that did the I/O and woke ksoftirqd), up to
 * SVC_CHAIN threads, never io's own. At most the window.
 */
static uint64_t svc_runq(struct an_causes *cz, const struct an_io *io)
{
	uint64_t from = io->ts[AN_TS_ISSUE] ? io->ts[AN_TS_ISSUE] : io->ts[AN_TS_QUEUE];
	uint64_t end = io->ts[AN_TS_COMPLETE], to = end, ns = 0;
	uint32_t tid = io->svc_tid;

	if (!from || end <= from)
		return 0;
	for (unsigned depth = 0; depth < SVC_CHAIN && tid && tid != io->tid; depth++) {
		const struct thr *t = thr_find(cz, tid);
		const struct wait *last = NULL;

		if (!t)
			break;
		for (unsigned k = 0; k < RUNQ_RING; k++) {
			const struct wait *w = &t->ring[k];

			ns += overlap(w->from, w->to, from, to);
			if (w->to <= to && w->to > from && (!last || w->to > last->to))
				last = w;
		}
		/* the wait before it served: woken inside the window, its waker served before it */
		if (!last || !last->waker || last->from <= from)
			break;
		to = last->from;
		tid = last->waker;
	}
	return ns < end - from ? ns : end - from;
}

/*
 * Of the samples of slot *k's time, read from it back in time (at most
 * *left more slots: they are in time order), the lowest slot; *k is left at
 * the first slot of another time, DELAY_RING when none was left to read.
 */
static const struct delay_sample *time_run(const struct thr *t, unsigned *k, unsigned *left)
{
	const struct delay_sample *low = &t->delays[*k];
	uint64_t ts = low->ts;

	while (*left) {
		--*left;
		*k = (*k + DELAY_RING - 1) % DELAY_RING;
		if (t->delays[*k].ts != ts)
			return low;
		if (&t->delays[*k] < low)
			low = &t->delays[*k];
	}
	*k = DELAY_RING;
	return low;
}

/*
 * The latest of t's samples at or before end (*cur) and the latest before
 * that (*prev), NULL none; of samples of one time, the lowest slot.
 */
static void delay_samples(const struct thr *t, uint64_t end, const struct delay_sample **cur,
			  const struct delay_sample **prev)
{
	*cur = *prev = NULL;
	if (t->delays_unsorted) {
		for (unsigned k = 0; k < DELAY_RING; k++) {
			const struct delay_sample *d = &t->delays[k];

			if (d->ts && d->ts <= end && (!*cur || d->ts > (*cur)->ts))
				*cur = d;
		}
		for (unsigned k = 0; *cur && k < DELAY_RING; k++) {
			const struct delay_sample *d = &t->delays[k];

			if (d->ts && d->ts < (*cur)->ts && (!*prev || d->ts > (*prev)->ts))
				*prev = d;
		}
		return;
	}
	/*
	 * Records in time order (the correlator's events are): newest first,
	 * past those after end, the first two times met are the two wanted;
	 * this runs for every I/O, where scanning the whole ring twice took a
	 * quarter of the correlation's time. An empty slot (time 0) has only
	 * empty ones before it.
	 */
	unsigned left = DELAY_RING, k = t->delay_next;

	do {
		if (!left--)
			return;
		k = (k + DELAY_RING - 1) % DELAY_RING;
		if (!t->delays[k].ts)
			return;
	} while (t->delays[k].ts > end);
	*cur = time_run(t, &k, &left);
	if (k < DELAY_RING && t->delays[k].ts)
		*prev = time_run(t, &k, &left);
}

/*
 * A thread's run-queue wait from the kernel's own count between its sample
 * at or before end (*cur, NULL none) and the one before: at most the part
 * of [from, end] between the two. 0 without two samples.
 */
static uint64_t delay_between(const struct thr *t, uint64_t from, uint64_t end,
			      const struct delay_sample **cur)
{
	const struct delay_sample *prev;
	uint64_t ns, lo;

	delay_samples(t, end, cur, &prev);
	if (!prev || (*cur)->run_delay < prev->run_delay)
		return 0;
	ns = (*cur)->run_delay - prev->run_delay;
	lo = prev->ts > from ? prev->ts : from;
	if ((*cur)->ts <= lo)
		return 0;
	return ns < (*cur)->ts - lo ? ns : (*cur)->ts - lo;
}

/*
 * Without sched records: the run-queue waits of the thread that completed
 * io's last request (svc_run_delay, recorded just before the completion)
 * since its completion before, and of the thread that raised the softirq it
 * completed in (the loop worker that did the I/O, for ksoftirqd) before it
 * raised, each within [issue, complete], together at most that. Exact with
 * one request in flight; with several, a wait while the thread served
 * another request in the same stretch counts for each I/O it overlaps.
 */
static uint64_t svc_runq_delay(struct an_causes *cz, const struct an_io *io)
{
	uint64_t from = io->ts[AN_TS_ISSUE] ? io->ts[AN_TS_ISSUE] : io->ts[AN_TS_QUEUE];
	uint64_t end = io->ts[AN_TS_COMPLETE], ns;
	const struct delay_sample *cur = NULL, *raised;
	const struct thr *t;

	if (!from || end <= from || !io->svc_tid || io->svc_tid == io->tid ||
	    !(t = thr_find(cz, io->svc_tid)))
		return 0;
	ns = delay_between(t, from, end, &cur);
	if (cur && cur->raiser && cur->raiser != io->tid && (t = thr_find(cz, cur->raiser)))
		ns += delay_between(t, from, end, &raised);
	return ns < end - from ? ns : end - from;
}

/* Without sched records: the call's thread's wait between its entry and its exit. */
static uint64_t runq_delay(const struct an_io *io)
{
	if (!io->run_delay_enter || io->run_delay_exit < io->run_delay_enter)
		return 0;
	return io->run_delay_exit - io->run_delay_enter;
}

static uint8_t cache_of(const struct an_io *io)
{
	if (io->op != AN_OP_READ || !(io->flags & (AN_IO_SYSCALL | AN_IO_URING | AN_IO_AIO)))
		return AN_CACHE_NONE;
	if (io->ts[AN_TS_FS_BEGIN])
		return AN_CACHE_DIRECT;
	if (io->cache == AN_CACHE_MISS)
		return AN_CACHE_MISS;
	/* bios that filled no page of the cache: O_DIRECT without iomap (a block device) */
	return io->nbios ? AN_CACHE_DIRECT : AN_CACHE_HIT;
}

void an_cause_finish(struct an_causes *cz, struct an_io *io, int has_total, uint64_t total)
{
	uint64_t left, throttle = 0;
	/* its thread's state, looked up once for both uses below (nothing between adds threads) */
	struct thr *t = (io->flags & AN_IO_SYSCALL) || !cz->sched_seen ? thr_find(cz, io->tid) : NULL;

	if ((io->flags & AN_IO_SYSCALL) && t) {
		/* the call returned: a window still open lost its end */
		t->win_start = 0;
		if (!cz->sched_seen && t->dirty_asleep && io->ts[AN_TS_SYS_EXIT])
			dirty_woken(cz, t, io->ts[AN_TS_SYS_EXIT], io);
		if (io->ts[AN_TS_SYS_EXIT] && t->dirty_to > io->ts[AN_TS_SYS_EXIT] &&
		    t->dirty_from >= io->ts[AN_TS_SYS_ENTER]) {
			uint64_t past = t->dirty_to - io->ts[AN_TS_SYS_EXIT];

			io->cause_ns[AN_CAUSE_DIRTY] -= past < io->cause_ns[AN_CAUSE_DIRTY] ?
							past : io->cause_ns[AN_CAUSE_DIRTY];
		}
	}
	if (cz->sched_seen) {
		io->cause_ns[AN_CAUSE_SVC_RUNQ] = svc_runq(cz, io);
	} else {
		io->cause_ns[AN_CAUSE_SVC_RUNQ] = svc_runq_delay(cz, io);
		if (io->flags & AN_IO_SYSCALL)
			io->cause_ns[AN_CAUSE_RUNQ] = runq_delay(io);
		io->flags |= AN_IO_RUNQ_COUNTED;
		/* a wait for a CPU after a pause's wakeup is runq, not dirty (assumed all of it there) */
		if (t && t->dirty_ext_io == io->start && t->dirty_ext) {
			uint64_t *dirty = &io->cause_ns[AN_CAUSE_DIRTY], runq = io->cause_ns[AN_CAUSE_RUNQ];
			uint64_t cut = runq < t->dirty_ext ? runq : t->dirty_ext;

			*dirty -= cut < *dirty ? cut : *dirty;
			t->dirty_ext = 0;
		}
	}
	if (io->ts[AN_TS_HELD_QUEUE]) {
		uint64_t sub = io->ts[AN_TS_FS_BEGIN] ? io->ts[AN_TS_FS_BEGIN] : io->ts[AN_TS_SYS_ENTER];

		if (sub && io->ts[AN_TS_HELD_QUEUE] > sub)
			throttle = io->ts[AN_TS_HELD_QUEUE] - sub;
	}
	io->cause_ns[AN_CAUSE_THROTTLE] = throttle;
	if (has_total) {
		/*
		 * Within the total, the thread's own waits first; then throttle,
		 * measured from two stage times rather than events of its own;
		 * svc_runq, other threads' waits while it slept, takes what they
		 * left (a read's reclaim was squeezed to 0 by it once).
		 */
		static const uint8_t order[AN_CAUSE_COUNT] = {
			AN_CAUSE_RUNQ, AN_CAUSE_LOCK, AN_CAUSE_DIRTY, AN_CAUSE_RECLAIM,
			AN_CAUSE_THROTTLE, AN_CAUSE_SVC_RUNQ,
		};

		left = total;
		/* unrolled: the order's loads and the loop's count cost as much as the steps */
#pragma GCC unroll 6
		for (unsigned k = 0; k < AN_CAUSE_COUNT; k++) {
			uint64_t *ns = &io->cause_ns[order[k]];

			if (*ns > left)
				*ns = left;
			left -= *ns;
		}
	}
	io->cache = cache_of(io);
	io->causes = (uint8_t)cz->measured;
	io->flags |= AN_IO_WHY;
}

static const char *const cache_names[AN_CACHE_COUNT] = { "-", "none", "hit", "miss", "direct" };

const char *an_cache_name(enum an_cache c)
{
	return c < AN_CACHE_COUNT ? cache_names[c] : "-";
}

const char *an_lock_kind(uint32_t flags)
{
	if (flags & AN_LCB_MUTEX)
		return flags & AN_LCB_SPIN ? "mutex-spin" : "mutex";
	if (flags & AN_LCB_RT)
		return "rtmutex";
	if (flags & AN_LCB_PERCPU)
		return flags & AN_LCB_WRITE ? "percpu-rwsem-write" : "percpu-rwsem-read";
	if (flags & AN_LCB_SPIN)
		return flags & AN_LCB_WRITE ? "rwlock-write" : flags & AN_LCB_READ ? "rwlock-read" :
		       "spinlock";
	if (flags & AN_LCB_WRITE)
		return "rwsem-write";
	if (flags & AN_LCB_READ)
		return "rwsem-read";
	return "lock";
}
