/* SPDX-License-Identifier: MIT */
/*
 * engine.c - issue the plan through one io_uring, at most --qd in flight.
 *
 * The schedule is absolute: I/O i is due at t0 + at(i) * scale, computed
 * from the start every time, so a late I/O never delays the ones after it
 * (no accumulated sleeps). Waiting for the next due time happens inside the
 * wait for completions, and the last 50 us are spun, since a sleep that
 * short overshoots by more than it waits on a loaded machine.
 *
 * Candidates: block level issues the plan in order, every I/O independent.
 * File level keeps a heap of the next I/O of every recorded thread that has
 * none in flight: a thread's next I/O becomes a candidate when the one
 * before it completed, as when it was recorded.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>

#include "replay/replay.h"

volatile int rp_stop;

#define SPIN_NS		50000ull	/* closer to the due time than this: spin */
#define LATE_NS		1000000ull	/* slip above this counts the I/O as late */
#define EXACT_LIMIT	10000		/* samples kept exactly per quantile estimate (analyze's default) */

struct slot {
	uint32_t io;
	uint64_t due;		/* planned submission, 0 for afap */
	uint64_t submitted;
	char *buf;		/* reads land here */
};

struct engine {
	const struct rp_plan *p;
	const struct rp_opts *o;
	struct rp_result *r;
	struct io_uring ring;
	int fixed;		/* buffers registered: READ_FIXED / WRITE_FIXED */
	char *pattern;		/* what every write writes: 0x5a, never read into (index qd when registered) */
	struct slot *slots;
	uint32_t *free_slots, nfree;
	uint32_t *batch;	/* slots prepared since the last submit */
	unsigned nbatch, inflight;
	size_t cursor;		/* block level: next I/O of the plan */
	uint32_t *heap;		/* file level: candidates, a min-heap by start time */
	size_t nheap;
	uint64_t t0;		/* CLOCK_MONOTONIC ns of the plan's time 0 in this loop */
	uint64_t first_submit, last_submit, last_complete, next_progress;
	uint64_t total;		/* I/Os to issue over every loop */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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
static uint32_t candidate(const struct engine *e)
{
	if (e->p->level == RP_LEVEL_FILE)
		return e->nheap ? e->heap[0] : RP_NONE;
	return e->cursor < e->p->nios ? (uint32_t)e->cursor : RP_NONE;
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
			io_uring_prep_read_fixed(sqe, fd, slot->buf, io->len, io->offset, (int)s);
		else
			io_uring_prep_read(sqe, fd, slot->buf, io->len, io->offset);
		break;
	case AN_OP_WRITE:
		if (e->fixed)
			io_uring_prep_write_fixed(sqe, fd, e->pattern, io->len, io->offset, (int)e->o->qd);
		else
			io_uring_prep_write(sqe, fd, e->pattern, io->len, io->offset);
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
	struct rp_result *r = e->r;

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

static void reap(struct engine *e)
{
	struct io_uring_cqe *cqe;
	uint64_t now = 0;

	while (!io_uring_peek_cqe(&e->ring, &cqe)) {
		if (!now)
			now = now_ns();
		complete(e, cqe, now);
		io_uring_cqe_seen(&e->ring, cqe);
	}
}

static void progress(struct engine *e, uint64_t now)
{
	struct rp_result *r = e->r;
	double secs = (now - e->first_submit) / 1e9;

	if (!e->o->progress || now < e->next_progress)
		return;
	e->next_progress = now + 1000000000ull;
	fprintf(stderr, "\rst-replay: %llu/%llu I/Os, %.0f IOPS, %llu failed, %llu late   ",
		(unsigned long long)r->issued, (unsigned long long)e->total,
		secs > 0 ? r->completed / secs : 0.0, (unsigned long long)r->failed,
		(unsigned long long)r->late_ios);
}

/*
 * Submit what was prepared. The time before the call is the I/Os' issue
 * time, for latency and slip alike: the kernel may complete some of them
 * before io_uring_submit() returns.
 */
static int submit(struct engine *e)
{
	uint64_t now = now_ns();
	int ret = io_uring_submit(&e->ring);
	unsigned i;

	if (ret < 0)
		return ret;
	if (!e->first_submit)
		e->first_submit = now;
	e->last_submit = now;
	for (i = 0; i < e->nbatch; i++) {
		struct slot *slot = &e->slots[e->batch[i]];

		slot->submitted = now;
		if (slot->due) {
			uint64_t slip = now > slot->due ? now - slot->due : 0;

			an_qest_add(&e->r->slip, slip);
			e->r->late_ios += slip > LATE_NS;
		}
	}
	e->r->issued += e->nbatch;
	e->nbatch = 0;
	return 0;
}

/* Until the next due time (or a completion, or a signal). */
static void wait_until(struct engine *e, uint64_t when, uint64_t now)
{
	struct io_uring_cqe *cqe;
	uint64_t ns = when - now - SPIN_NS / 2;
	struct __kernel_timespec ts = { .tv_sec = (long long)(ns / 1000000000ull),
					.tv_nsec = (long long)(ns % 1000000000ull) };

	if (e->inflight) {
		io_uring_wait_cqe_timeout(&e->ring, &cqe, &ts);
	} else {
		struct timespec abs = { .tv_sec = (time_t)((when - SPIN_NS / 2) / 1000000000ull),
					.tv_nsec = (long)((when - SPIN_NS / 2) % 1000000000ull) };

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
	}
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
		for (s = 0; s < p->nstreams; s++)
			heap_push(e, p->stream_first[s]);
	for (;;) {
		uint64_t now = now_ns(), when = 0;
		unsigned prepared = 0;
		uint32_t io;

		while (!rp_stop && e->inflight < e->o->qd && (io = candidate(e)) != RP_NONE) {
			when = due(e, io);
			if (when > now)
				break;
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
		progress(e, now);
		io = candidate(e);
		if (!e->inflight && (rp_stop || (io == RP_NONE)))
			return 0;
		if (prepared)
			continue;
		if (!rp_stop && io != RP_NONE && e->inflight < e->o->qd) {
			when = due(e, io);
			if (when > now + SPIN_NS)
				wait_until(e, when, now);
		} else if (e->inflight) {
			io_uring_wait_cqe(&e->ring, &cqe);	/* -EINTR on a signal: rp_stop is checked above */
		}
	}
}

static int engine_init(struct engine *e, char *err, size_t cap)
{
	const struct rp_plan *p = e->p;
	unsigned qd = e->o->qd, i, entries = 1;
	size_t maxlen = 4096, k;
	struct iovec *iov;
	int ret;

	for (k = 0; k < p->nios; k++)
		if (p->ios[k].len > maxlen)
			maxlen = p->ios[k].len;
	maxlen = (maxlen + 4095) & ~(size_t)4095;
	while (entries < qd)
		entries *= 2;
	if ((ret = io_uring_queue_init(entries, &e->ring, 0))) {
		snprintf(err, cap, "io_uring_queue_init(%u): %s", entries, strerror(-ret));
		return -1;
	}
	e->slots = calloc(qd, sizeof(*e->slots));
	e->free_slots = calloc(qd, sizeof(*e->free_slots));
	e->batch = calloc(qd, sizeof(*e->batch));
	e->heap = calloc(p->nstreams ? p->nstreams : 1, sizeof(*e->heap));
	iov = calloc(qd + 1, sizeof(*iov));
	if (!e->slots || !e->free_slots || !e->batch || !e->heap || !iov)
		goto oom;
	/* O_DIRECT needs aligned memory. */
	for (i = 0; i < qd; i++) {
		if (posix_memalign((void **)&e->slots[i].buf, 4096, maxlen))
			goto oom;
		iov[i] = (struct iovec){ e->slots[i].buf, maxlen };
		e->free_slots[e->nfree++] = qd - 1 - i;
	}
	if (posix_memalign((void **)&e->pattern, 4096, maxlen))
		goto oom;
	memset(e->pattern, 0x5a, maxlen);
	iov[qd] = (struct iovec){ e->pattern, maxlen };
	/* Registered buffers save a page pinning per I/O; without them (memlock) plain reads work. */
	e->fixed = !io_uring_register_buffers(&e->ring, iov, qd + 1);
	free(iov);
	return 0;
oom:
	free(iov);
	snprintf(err, cap, "out of memory for %u buffers of %zu bytes", qd, maxlen);
	return -1;
}

static void engine_free(struct engine *e)
{
	unsigned i;

	if (e->slots)
		for (i = 0; i < e->o->qd; i++)
			free(e->slots[i].buf);
	free(e->slots);
	free(e->pattern);
	free(e->free_slots);
	free(e->batch);
	free(e->heap);
	io_uring_queue_exit(&e->ring);
}

int rp_engine_run(const struct rp_plan *p, const struct rp_opts *o, struct rp_result *r,
		  char *err, size_t cap)
{
	struct engine e = { .p = p, .o = o, .r = r };
	/* Loops follow each other on the schedule, one recorded mean gap apart. */
	uint64_t period = (uint64_t)((double)(p->span + p->span / p->nios) * o->scale);
	uint64_t start;
	unsigned loop;
	int ret = 0, k;

	memset(r, 0, sizeof(*r));
	/* Timed waits end when asked, not up to 50 us later (the default timer slack). */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (k = 0; k < AN_OP_COUNT; k++) {
		an_qest_init(&r->lat[k], EXACT_LIMIT);
		an_qest_init(&r->rec_lat[k], EXACT_LIMIT);
	}
	an_qest_init(&r->slip, EXACT_LIMIT);
	e.total = (uint64_t)p->nios * o->loops;
	if (engine_init(&e, err, cap)) {
		engine_free(&e);
		return -1;
	}
	start = now_ns();
	for (loop = 0; loop < o->loops && !rp_stop && !ret; loop++) {
		e.t0 = start + loop * period;
		ret = run_loop(&e, err, cap);
	}
	if (o->progress)
		fputs("\n", stderr);
	r->interrupted = rp_stop;
	r->span_ns = e.last_submit - e.first_submit;
	r->elapsed_ns = e.last_complete > e.first_submit ? e.last_complete - e.first_submit : 0;
	engine_free(&e);
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
