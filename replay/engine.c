/* SPDX-License-Identifier: MIT */
/*
 * engine.c - issue the plan from --threads threads, each through its own
 * io_uring with its share of --qd in flight.
 *
 * The schedule is absolute: I/O i is due at t0 + at(i) * scale, computed
 * from the start every time, so a late I/O never delays the ones after it
 * (no accumulated sleeps). Every I/O whose time has come goes into one
 * submission; completions are reaped from the ring without a system call.
 * Waiting for the next due time happens inside the wait for completions,
 * woken a margin early, and the margin is spun: a sleeping thread is run
 * later than its timer asks (about 75 us on the 2-core test VM, idle or
 * not), so the margin follows the 90th percentile of the wake-up delays
 * this thread has seen, between 20 us and 1 ms.
 *
 * Candidates: block level issues the plan in order, every I/O independent,
 * each thread the I/Os of its recorded CPUs. File level keeps a heap of the
 * next I/O of every recorded thread (of this submitting thread's share)
 * that has none in flight: a thread's next I/O becomes a candidate when the
 * one before it completed, as when it was recorded.
 *
 * The threads share the plan (read only), the schedule (start, period)
 * and the progress counters, nothing else; each keeps its own result,
 * summed when all have ended.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "replay/replay.h"

volatile int rp_stop;

#define MARGIN_MIN_NS	20000ull	/* wake at least this long before a due time, and spin the rest */
#define MARGIN_MAX_NS	1000000ull	/* and at most this long: longer delays are preemption, not wake-up */
#define MARGIN_STEP_NS	1000ull		/* down by one step on a wake-up in time, up by nine on a late one */
#define LATE_NS		1000000ull	/* slip above this counts the I/O as late */
#define EXACT_LIMIT	10000		/* samples kept exactly per quantile estimate (analyze's default) */
#define WAIT_MAX_NS	100000000ull	/* longest wait: a thread the signal did not wake sees rp_stop */
#define START_LEAD_NS	1000000ull	/* time 0 after the go: room for every thread to wake up */

struct slot {
	uint32_t io;
	uint64_t due;		/* planned submission, 0 for afap */
	uint64_t submitted;
};

/* What every thread adds to as it goes, for the progress line. */
struct progress {
	uint64_t issued, completed, failed, late;
};

/* The threads, and what the main thread waits on while they run. */
struct crew {
	struct engine *engines;
	unsigned n;
	unsigned running;
	pthread_mutex_t lock;
	pthread_cond_t ended;	/* on CLOCK_MONOTONIC: a thread ended */
	pthread_cond_t go;	/* every thread is running: start is set */
	uint64_t start;		/* the plan's time 0, START_LEAD_NS after the go */
	uint64_t period;	/* loop n's time 0 is start + n * period */
	struct progress progress;
	/*
	 * Every read of every thread lands in `sink`, whose bytes nobody looks at,
	 * and every write writes `pattern`: two buffers of the longest I/O for the
	 * whole replay, not one per I/O in flight (--qd 128 of 64 MiB I/Os would
	 * pin 8 GiB).
	 */
	char *sink, *pattern;
	size_t buflen;
};

struct engine {
	const struct rp_plan *p;
	const struct rp_opts *o;
	struct rp_result r;
	struct crew *crew;
	unsigned self;		/* this thread's number, of crew->n */
	unsigned qd;		/* this thread's share of --qd */
	pthread_t thread;
	int ret;
	char err[256];
	struct io_uring ring;
	int ring_ready;		/* ring set up: io_uring_queue_exit() it */
	int fixed;		/* crew's sink and pattern registered as buffers 0 and 1: READ_FIXED / WRITE_FIXED */
	struct slot *slots;
	uint32_t *free_slots, nfree;
	uint32_t *batch;	/* slots prepared since the last submit */
	unsigned nbatch, inflight;
	size_t cursor;		/* block level: next I/O of the plan */
	uint32_t *heap;		/* file level: candidates, a min-heap by start time */
	size_t nheap;
	uint64_t t0;		/* CLOCK_MONOTONIC ns of the plan's time 0 in this loop */
	uint64_t first_submit, last_complete;
	uint64_t qd_full_at;	/* last time an I/O was due while qd were in flight */
	uint64_t margin;	/* wake this long before a due time: ~p90 of the wake-up delays */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A CLOCK_MONOTONIC time in ns as the timespec of the absolute waits. */
static struct timespec timespec_of(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull) };
}

static int heap_less(const struct engine *e, uint32_t a, uint32_t b)
{
	const struct rp_io *x = &e->p->ios[a], *y = &e->p->ios[b];

	return x->at != y->at ? x->at < y->at : a < b;
}

static void heap_push(struct engine *e, uint32_t io)
{
	size_t i = e->nheap++;

	while (i && heap_less(e, io, e->heap[(i - 1) / 2])) {
		e->heap[i] = e->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	e->heap[i] = io;
}

static void heap_pop(struct engine *e)
{
	uint32_t last = e->heap[--e->nheap];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < e->nheap) {
		if (c + 1 < e->nheap && heap_less(e, e->heap[c + 1], e->heap[c]))
			c++;
		if (!heap_less(e, e->heap[c], last))
			break;
		e->heap[i] = e->heap[c];
		i = c;
	}
	e->heap[i] = last;
}

/* The next I/O to issue, RP_NONE when none is ready (file level) or left. */
static uint32_t candidate(struct engine *e)
{
	const struct rp_plan *p = e->p;

	if (p->level == RP_LEVEL_FILE)
		return e->nheap ? e->heap[0] : RP_NONE;
	while (e->cursor < p->nios && p->ios[e->cursor].cpu % e->crew->n != e->self)
		e->cursor++;
	return e->cursor < p->nios ? (uint32_t)e->cursor : RP_NONE;
}

static void take_candidate(struct engine *e)
{
	if (e->p->level == RP_LEVEL_FILE)
		heap_pop(e);
	else
		e->cursor++;
}

static uint64_t due(const struct engine *e, uint32_t io)
{
	if (e->o->timing == RP_TIMING_AFAP)
		return 0;
	return e->t0 + (uint64_t)((double)e->p->ios[io].at * e->o->scale);
}

static void prepare(struct engine *e, uint32_t io_index, uint64_t due_ns)
{
	const struct rp_io *io = &e->p->ios[io_index];
	int fd = e->p->targets[io->target].fd;
	uint32_t s = e->free_slots[--e->nfree];
	struct slot *slot = &e->slots[s];
	struct io_uring_sqe *sqe = io_uring_get_sqe(&e->ring);

	slot->io = io_index;
	slot->due = due_ns;
	switch (io->op) {
	case AN_OP_READ:
		if (e->fixed)
			io_uring_prep_read_fixed(sqe, fd, e->crew->sink, io->len, io->offset, 0);
		else
			io_uring_prep_read(sqe, fd, e->crew->sink, io->len, io->offset);
		break;
	case AN_OP_WRITE:
		if (e->fixed)
			io_uring_prep_write_fixed(sqe, fd, e->crew->pattern, io->len, io->offset, 1);
		else
			io_uring_prep_write(sqe, fd, e->crew->pattern, io->len, io->offset);
		if (io->flags & RP_IO_FUA)
			sqe->rw_flags = RWF_DSYNC;
		break;
	case AN_OP_DISCARD:
		io_uring_prep_fallocate(sqe, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					(off_t)io->offset, io->len);
		break;
	default:	/* flush, fsync, fdatasync */
		io_uring_prep_fsync(sqe, fd, io->flags & RP_IO_DATASYNC ? IORING_FSYNC_DATASYNC : 0);
		break;
	}
	io_uring_sqe_set_data64(sqe, s);
	e->batch[e->nbatch++] = s;
	e->inflight++;
}

static void complete(struct engine *e, const struct io_uring_cqe *cqe, uint64_t now)
{
	uint32_t s = (uint32_t)cqe->user_data;
	const struct slot *slot = &e->slots[s];
	const struct rp_io *io = &e->p->ios[slot->io];
	struct rp_result *r = &e->r;

	if (cqe->res < 0) {
		r->failed++;
		if (!r->first_errno)
			r->first_errno = -cqe->res;
	} else {
		r->completed++;
		r->bytes += io->op == AN_OP_READ || io->op == AN_OP_WRITE ? (uint64_t)cqe->res : io->len;
		an_qest_add(&r->lat[io->op], now - slot->submitted);
		if (io->rec_lat)
			an_qest_add(&r->rec_lat[io->op], io->rec_lat);
	}
	if (e->p->level == RP_LEVEL_FILE && io->next != RP_NONE)
		heap_push(e, io->next);
	e->free_slots[e->nfree++] = s;
	e->inflight--;
	e->last_complete = now;
}

/* Completions are read from the ring in memory: no system call. */
static void reap(struct engine *e)
{
	struct io_uring_cqe *cqe;
	uint64_t now = 0, completed = e->r.completed, failed = e->r.failed;

	while (!io_uring_peek_cqe(&e->ring, &cqe)) {
		if (!now)
			now = now_ns();
		complete(e, cqe, now);
		io_uring_cqe_seen(&e->ring, cqe);
	}
	if (now) {
		__atomic_fetch_add(&e->crew->progress.completed, e->r.completed - completed, __ATOMIC_RELAXED);
		__atomic_fetch_add(&e->crew->progress.failed, e->r.failed - failed, __ATOMIC_RELAXED);
	}
}

/*
 * Submit what was prepared. The time before the call is the I/Os' issue
 * time, for latency and slip alike: the kernel may complete some of them
 * before io_uring_submit() returns.
 */
static int submit(struct engine *e)
{
	uint64_t now = now_ns(), late = e->r.late_ios;
	int ret = io_uring_submit(&e->ring);
	unsigned i;

	if (ret < 0)
		return ret;
	if (!e->first_submit)
		e->first_submit = now;
	for (i = 0; i < e->nbatch; i++) {
		struct slot *slot = &e->slots[e->batch[i]];

		slot->submitted = now;
		if (slot->due) {
			uint64_t slip = now > slot->due ? now - slot->due : 0;

			an_qest_add(&e->r.slip, slip);
			e->r.late_ios += slip > LATE_NS;
			e->r.late_qd_full += slip > LATE_NS && slot->due <= e->qd_full_at;
		}
	}
	e->r.issued += e->nbatch;
	__atomic_fetch_add(&e->crew->progress.issued, e->nbatch, __ATOMIC_RELAXED);
	__atomic_fetch_add(&e->crew->progress.late, e->r.late_ios - late, __ATOMIC_RELAXED);
	e->nbatch = 0;
	return 0;
}

/*
 * Until the next due time less the margin, a completion or a signal, and
 * at most WAIT_MAX_NS: a signal wakes one thread, the others see rp_stop
 * when their wait ends. A timed-out wait measures the wake-up delay, which
 * moves the margin towards its 90th percentile: up nine steps when the
 * delay exceeded it, down one when not (a stochastic quantile estimate).
 */
static void wait_until(struct engine *e, uint64_t when, uint64_t now)
{
	struct io_uring_cqe *cqe;
	uint64_t ns = when - now - e->margin, woke;
	int timed_out;

	if (ns > WAIT_MAX_NS)
		ns = WAIT_MAX_NS;
	if (e->inflight) {
		struct __kernel_timespec ts = { .tv_sec = (long long)(ns / 1000000000ull),
						.tv_nsec = (long long)(ns % 1000000000ull) };

		timed_out = io_uring_wait_cqe_timeout(&e->ring, &cqe, &ts) == -ETIME;
	} else {
		struct timespec abs = timespec_of(now + ns);

		timed_out = !clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
	}
	if (!timed_out)
		return;
	woke = now_ns();
	if (woke > now + ns + e->margin)
		e->margin = e->margin + 9 * MARGIN_STEP_NS < MARGIN_MAX_NS ? e->margin + 9 * MARGIN_STEP_NS :
			    MARGIN_MAX_NS;
	else if (e->margin >= MARGIN_MIN_NS + MARGIN_STEP_NS)
		e->margin -= MARGIN_STEP_NS;
}

static int run_loop(struct engine *e, char *err, size_t cap)
{
	const struct rp_plan *p = e->p;
	struct io_uring_cqe *cqe;
	uint32_t s;
	int ret;

	e->cursor = 0;
	e->nheap = 0;
	if (p->level == RP_LEVEL_FILE)
		for (s = e->self; s < p->nstreams; s += e->crew->n)
			heap_push(e, p->stream_first[s]);
	for (;;) {
		uint64_t now = now_ns(), when = 0;
		unsigned prepared = 0;
		uint32_t io;

		while (!rp_stop && (io = candidate(e)) != RP_NONE) {
			when = due(e, io);
			if (when > now)
				break;
			if (e->inflight == e->qd) {
				e->qd_full_at = now;
				break;
			}
			prepare(e, io, when);
			take_candidate(e);
			prepared++;
		}
		if (prepared && (ret = submit(e))) {
			snprintf(err, cap, "io_uring_submit: %s", strerror(-ret));
			return -1;
		}
		reap(e);
		now = now_ns();
		io = candidate(e);
		if (!e->inflight && (rp_stop || (io == RP_NONE)))
			return 0;
		if (prepared)
			continue;
		if (!rp_stop && io != RP_NONE && e->inflight < e->qd) {
			when = due(e, io);
			if (when > now + e->margin)
				wait_until(e, when, now);
		} else if (e->inflight) {
			io_uring_wait_cqe(&e->ring, &cqe);	/* -EINTR on a signal: rp_stop is checked above */
		}
	}
}

static int engine_init(struct engine *e, char *err, size_t cap)
{
	const struct crew *c = e->crew;
	struct iovec iov[2] = { { c->sink, c->buflen }, { c->pattern, c->buflen } };
	unsigned qd = e->qd, i, entries = 1;
	int ret;

	while (entries < qd)
		entries *= 2;
	if ((ret = io_uring_queue_init(entries, &e->ring, 0))) {
		snprintf(err, cap, "io_uring_queue_init(%u): %s", entries, strerror(-ret));
		return -1;
	}
	e->ring_ready = 1;
	e->slots = calloc(qd, sizeof(*e->slots));
	e->free_slots = calloc(qd, sizeof(*e->free_slots));
	e->batch = calloc(qd, sizeof(*e->batch));
	e->heap = calloc(e->p->nstreams ? e->p->nstreams : 1, sizeof(*e->heap));
	if (!e->slots || !e->free_slots || !e->batch || !e->heap) {
		snprintf(err, cap, "out of memory for %u I/Os in flight", qd);
		return -1;
	}
	for (i = 0; i < qd; i++)
		e->free_slots[e->nfree++] = qd - 1 - i;
	/* Registered buffers save a page pinning per I/O; without them (memlock) plain reads work. */
	e->fixed = !io_uring_register_buffers(&e->ring, iov, 2);
	return 0;
}

/* The crew's two buffers, as long as the longest I/O of the plan; O_DIRECT needs them aligned. */
static int buffers_init(struct crew *c, const struct rp_plan *p, char *err, size_t cap)
{
	size_t k;

	c->buflen = 4096;
	for (k = 0; k < p->nios; k++)
		if (p->ios[k].len > c->buflen)
			c->buflen = p->ios[k].len;
	c->buflen = (c->buflen + 4095) & ~(size_t)4095;
	if (posix_memalign((void **)&c->sink, 4096, c->buflen) ||
	    posix_memalign((void **)&c->pattern, 4096, c->buflen)) {
		snprintf(err, cap, "out of memory for two buffers of %zu bytes", c->buflen);
		return -1;
	}
	memset(c->pattern, 0x5a, c->buflen);
	return 0;
}

static void engine_free(struct engine *e)
{
	free(e->slots);
	free(e->free_slots);
	free(e->batch);
	free(e->heap);
	if (e->ring_ready)
		io_uring_queue_exit(&e->ring);
}

static void result_init(struct rp_result *r)
{
	int k;

	memset(r, 0, sizeof(*r));
	for (k = 0; k < AN_OP_COUNT; k++) {
		an_qest_init(&r->lat[k], EXACT_LIMIT);
		an_qest_init(&r->rec_lat[k], EXACT_LIMIT);
	}
	an_qest_init(&r->slip, EXACT_LIMIT);
}

/* dst += src; -1 when out of memory. */
static int result_add(struct rp_result *dst, struct rp_result *src)
{
	int k, ret = 0;

	dst->issued += src->issued;
	dst->completed += src->completed;
	dst->failed += src->failed;
	dst->bytes += src->bytes;
	dst->late_ios += src->late_ios;
	dst->late_qd_full += src->late_qd_full;
	if (!dst->first_errno)
		dst->first_errno = src->first_errno;
	for (k = 0; k < AN_OP_COUNT; k++)
		ret |= an_qest_merge(&dst->lat[k], &src->lat[k]) | an_qest_merge(&dst->rec_lat[k], &src->rec_lat[k]);
	return ret | an_qest_merge(&dst->slip, &src->slip);
}

static void *engine_thread(void *arg)
{
	struct engine *e = arg;
	uint64_t start;
	unsigned loop;

	pthread_mutex_lock(&e->crew->lock);
	while (!e->crew->start)
		pthread_cond_wait(&e->crew->go, &e->crew->lock);
	start = e->crew->start;
	pthread_mutex_unlock(&e->crew->lock);
	for (loop = 0; loop < e->o->loops && !rp_stop && !e->ret; loop++) {
		e->t0 = start + loop * e->crew->period;
		e->ret = run_loop(e, e->err, sizeof(e->err));
	}
	pthread_mutex_lock(&e->crew->lock);
	e->crew->running--;
	pthread_cond_signal(&e->crew->ended);
	pthread_mutex_unlock(&e->crew->lock);
	return NULL;
}

/*
 * --threads, else one per recorded CPU (block) or thread (file) up to the
 * CPUs online here: more would only take turns spinning on them. Never
 * more than those lanes or --qd.
 */
static unsigned thread_count(const struct rp_plan *p, const struct rp_opts *o)
{
	unsigned lanes = p->level == RP_LEVEL_FILE ? p->nstreams : p->ncpus;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = o->threads ? o->threads : lanes;

	if (!o->threads && online > 0 && n > (unsigned long)online)
		n = (unsigned)online;
	if (n > lanes)
		n = lanes;
	if (n > o->qd)
		n = o->qd;
	if (n > RP_MAX_THREADS)
		n = RP_MAX_THREADS;
	return n ? n : 1;
}

/* A status line each second on stderr while the threads run, until the last has ended. */
static void wait_for_threads(struct crew *c, const struct rp_opts *o, uint64_t total, uint64_t start)
{
	pthread_mutex_lock(&c->lock);
	while (c->running) {
		uint64_t now = now_ns(), next = now + 1000000000ull;
		struct timespec ts = timespec_of(next);
		double secs = now > start ? (now - start) / 1e9 : 0;

		if (o->progress && secs > 0)
			fprintf(stderr, "\rst-replay: %llu/%llu I/Os, %.0f IOPS, %llu failed, %llu late   ",
				(unsigned long long)__atomic_load_n(&c->progress.issued, __ATOMIC_RELAXED),
				(unsigned long long)total,
				__atomic_load_n(&c->progress.completed, __ATOMIC_RELAXED) / secs,
				(unsigned long long)__atomic_load_n(&c->progress.failed, __ATOMIC_RELAXED),
				(unsigned long long)__atomic_load_n(&c->progress.late, __ATOMIC_RELAXED));
		pthread_cond_timedwait(&c->ended, &c->lock, &ts);
	}
	pthread_mutex_unlock(&c->lock);
	if (o->progress)
		fputs("\n", stderr);
}

int rp_engine_run(const struct rp_plan *p, const struct rp_opts *o, struct rp_result *r,
		  char *err, size_t cap)
{
	/* Loops follow each other on the schedule, one recorded mean gap apart. */
	struct crew c = { .n = thread_count(p, o),
			  .period = (uint64_t)((double)(p->span + p->span / p->nios) * o->scale) };
	uint64_t first_submit = 0, last_complete = 0;
	pthread_condattr_t attr;
	unsigned k, started = 0;
	int ret = 0;

	result_init(r);
	r->threads = c.n;
	c.engines = calloc(c.n, sizeof(*c.engines));
	if (!c.engines) {
		snprintf(err, cap, "out of memory for %u threads", c.n);
		return -1;
	}
	pthread_mutex_init(&c.lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&c.ended, &attr);
	pthread_condattr_destroy(&attr);
	pthread_cond_init(&c.go, NULL);
	/* Timed waits end when asked, not up to 50 us later (the default timer slack); threads inherit it. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	/* Every ring and buffer first: a thread that cannot start fails the run before any I/O. */
	ret = buffers_init(&c, p, err, cap);
	for (k = 0; k < c.n && !ret; k++) {
		struct engine *e = &c.engines[k];

		*e = (struct engine){ .p = p, .o = o, .crew = &c, .self = k,
				      .qd = o->qd / c.n + (k < o->qd % c.n), .margin = 4 * MARGIN_MIN_NS };
		result_init(&e->r);
		ret = engine_init(e, err, cap);
	}
	c.running = c.n;
	for (k = 0; k < c.n && !ret; k++) {
		if ((ret = pthread_create(&c.engines[k].thread, NULL, engine_thread, &c.engines[k]))) {
			snprintf(err, cap, "cannot start thread %u of %u: %s", k + 1, c.n, strerror(ret));
			rp_stop = 1;
			ret = -1;
		} else {
			started++;
		}
	}
	/* The schedule starts once every thread runs: a thread still being created is not late. */
	pthread_mutex_lock(&c.lock);
	c.running -= c.n - started;
	c.start = now_ns() + START_LEAD_NS;
	pthread_cond_broadcast(&c.go);
	pthread_mutex_unlock(&c.lock);
	wait_for_threads(&c, o, (uint64_t)p->nios * o->loops, c.start);
	for (k = 0; k < started; k++)
		pthread_join(c.engines[k].thread, NULL);
	for (k = 0; k < c.n; k++) {
		struct engine *e = &c.engines[k];

		if (!ret && e->ret) {
			snprintf(err, cap, "%s", e->err);
			ret = -1;
		}
		if (!ret && result_add(r, &e->r)) {
			snprintf(err, cap, "out of memory for the latency samples");
			ret = -1;
		}
		if (e->first_submit && (!first_submit || e->first_submit < first_submit))
			first_submit = e->first_submit;
		last_complete = e->last_complete > last_complete ? e->last_complete : last_complete;
		rp_result_free(&e->r);
		engine_free(e);
	}
	r->interrupted = rp_stop;
	r->elapsed_ns = last_complete > first_submit ? last_complete - first_submit : 0;
	pthread_cond_destroy(&c.ended);
	pthread_cond_destroy(&c.go);
	pthread_mutex_destroy(&c.lock);
	free(c.engines);
	free(c.sink);
	free(c.pattern);
	return ret;
}

void rp_result_free(struct rp_result *r)
{
	int k;

	for (k = 0; k < AN_OP_COUNT; k++) {
		an_qest_free(&r->lat[k]);
		an_qest_free(&r->rec_lat[k]);
	}
	an_qest_free(&r->slip);
}
