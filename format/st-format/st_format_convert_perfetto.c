/* SPDX-License-Identifier: MIT */
/*
 * st_format_convert_perfetto.c - `convert --to perfetto`: the Chrome
 * trace-event JSON that ui.perfetto.dev and chrome://tracing open.
 *
 * Each block device is a process of its own ("dev loop0 (7:0)"): every
 * request issued and completed in the trace is an async slice from issue
 * (D) to completion (C) named after its operation and size, the time its
 * first bio waited before (Q to D) a "queue" slice, and two counters
 * follow the device: requests in flight and completions per second (over
 * 100 ms intervals). Each traced process is itself, each thread a track
 * with its data syscalls (read, pwrite64, fsync, ...) as slices from entry
 * to exit. Process and thread names come from the trace's metadata and
 * task events. Times are microseconds since the first event.
 *
 * Slices are written when they end, so a slice whose end is not in the
 * trace is not written; every one written has both its ends.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/idmap.h"
#include "format/st-format/st_format_convert.h"
#include "format/st-format/st_format_json.h"

/* Device tracks are processes with ids no real pid takes (pid_max <= 2^22). */
#define DEV_PID_BASE	(1u << 30)
#define IOPS_INTERVAL_NS	100000000ull

struct pf_dev {
	uint32_t dev;
	uint32_t in_flight;
	uint64_t interval;	/* start of the current IOPS interval */
	uint64_t completions;	/* in it */
};

struct pf_request {
	uint64_t issue_ts, queue_ts;
	uint32_t opf, bytes;
};

struct pf_call {
	uint64_t ts;		/* entry, 0: the thread is not in a syscall */
	uint16_t type;
};

/* Entries of one size, reused through a free list kept in the free entries. */
struct pool {
	char *items;
	size_t size;		/* at least 4 bytes: the free list's link */
	uint32_t n, cap, free_head;
};

struct perfetto {
	struct pf_dev *devs;
	size_t ndevs;
	struct an_idmap rq_at;		/* rq address -> struct pf_request in rqs */
	struct an_idmap queued;		/* bio address -> its queue time (uint64_t) in queue_ts */
	struct an_idmap in_syscall;	/* tid -> struct pf_call in calls */
	struct pool rqs, queue_ts, calls;
	struct an_idmap named;		/* pid + 1 (process) or tid | 1 << 32 (thread) -> 1 */
	uint64_t slices;		/* async ids */
	int first;			/* no event written yet */
	struct sf_json_writer w;	/* onto cv->text */
};

/* ---- Output ---------------------------------------------------------------------- */

/*
 * An event object begins: after the previous one's ",\n", its ph, name,
 * pid and tid. The caller adds its own members and closes it (sf_jw_end).
 */
static struct sf_json_writer *event(struct sf_convert *cv, const char *ph, const char *name,
				    uint32_t pid, uint32_t tid)
{
	struct perfetto *pf = cv->state;
	struct sf_json_writer *w = &pf->w;

	if (!pf->first)
		fputs(",\n", cv->text);
	pf->first = 0;
	sf_jw_object(w);
	sf_jw_key(w, "ph");
	sf_jw_string(w, ph);
	sf_jw_key(w, "name");
	sf_jw_string(w, name);
	sf_jw_key(w, "pid");
	sf_jw_u64(w, pid);
	sf_jw_key(w, "tid");
	sf_jw_u64(w, tid);
	return w;
}

/* ns as microseconds, to the nanosecond. */
static void put_us(struct sf_json_writer *w, const char *key, uint64_t ns)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
	sf_jw_key(w, key);
	sf_jw_number(w, buf);
}

/* A time of the event clock as microseconds since the first event. */
static void put_time(struct sf_convert *cv, struct sf_json_writer *w, const char *key, uint64_t ts)
{
	put_us(w, key, ts > cv->first_ts ? ts - cv->first_ts : 0);
}

static void name_track(struct sf_convert *cv, const char *what, uint32_t pid, uint32_t tid,
		       const char *name)
{
	struct sf_json_writer *w = event(cv, "M", what, pid, tid);

	sf_jw_key(w, "args");
	sf_jw_object(w);
	sf_jw_key(w, "name");
	sf_jw_string(w, name);
	sf_jw_end(w);
	sf_jw_end(w);
}

/* Name a process and a thread the first time they show up. */
static int name_task(struct sf_convert *cv, uint32_t pid, uint32_t tid)
{
	struct perfetto *pf = cv->state;

	if (an_idmap_get(&pf->named, (uint64_t)pid + 1) == AN_NONE) {
		if (an_idmap_put(&pf->named, (uint64_t)pid + 1, 1))
			return -1;
		name_track(cv, "process_name", pid, pid, an_names_comm(cv->names, pid));
	}
	if (an_idmap_get(&pf->named, (uint64_t)tid | 1ull << 32) == AN_NONE) {
		if (an_idmap_put(&pf->named, (uint64_t)tid | 1ull << 32, 1))
			return -1;
		name_track(cv, "thread_name", pid, tid, an_names_comm(cv->names, tid == pid ? pid : tid));
	}
	return 0;
}

/* ---- Devices ----------------------------------------------------------------------- */

static void counter(struct sf_convert *cv, uint32_t pid, const char *name, const char *key,
		    uint64_t ts, uint64_t value)
{
	struct sf_json_writer *w = event(cv, "C", name, pid, pid);

	put_time(cv, w, "ts", ts);
	sf_jw_key(w, "args");
	sf_jw_object(w);
	sf_jw_key(w, key);
	sf_jw_u64(w, value);
	sf_jw_end(w);
	sf_jw_end(w);
}

static struct pf_dev *dev_of(struct sf_convert *cv, uint32_t dev, uint32_t *pid)
{
	struct perfetto *pf = cv->state;
	char name[64], label[96];
	struct pf_dev *d;

	for (size_t i = 0; i < pf->ndevs; i++)
		if (pf->devs[i].dev == dev) {
			*pid = DEV_PID_BASE + (uint32_t)i;
			return &pf->devs[i];
		}
	d = realloc(pf->devs, (pf->ndevs + 1) * sizeof(*d));
	if (!d)
		return NULL;
	pf->devs = d;
	d = &pf->devs[pf->ndevs];
	memset(d, 0, sizeof(*d));
	d->dev = dev;
	*pid = DEV_PID_BASE + (uint32_t)pf->ndevs++;
	snprintf(label, sizeof(label), "dev %s (%u:%u)", an_names_dev(cv->names, dev, name, sizeof(name)),
		 dev >> 20, dev & 0xfffff);
	name_track(cv, "process_name", *pid, *pid, label);
	return d;
}

/*
 * Completions per second of the interval that ended before ts, when one did,
 * and one zero for a quiet stretch after it. Intervals are compared by their
 * starts, never by an end: a start + IOPS_INTERVAL_NS near 2^64 would wrap.
 */
static void iops_tick(struct sf_convert *cv, struct pf_dev *d, uint32_t pid, uint64_t ts)
{
	uint64_t start = ts - ts % IOPS_INTERVAL_NS;

	if (!d->interval)
		d->interval = start;
	if (start <= d->interval)
		return;
	counter(cv, pid, "IOPS", "iops", d->interval,
		d->completions * (1000000000ull / IOPS_INTERVAL_NS));
	if (start - d->interval > IOPS_INTERVAL_NS)
		counter(cv, pid, "IOPS", "iops", d->interval + IOPS_INTERVAL_NS, 0);
	d->interval = start;
	d->completions = 0;
}

static void async_slice(struct sf_convert *cv, uint32_t pid, const char *cat, const char *name,
			uint64_t from, uint64_t to)
{
	struct perfetto *pf = cv->state;
	char id[24];

	snprintf(id, sizeof(id), "0x%" PRIx64, ++pf->slices);
	for (int end = 0; end < 2; end++) {
		struct sf_json_writer *w = event(cv, end ? "e" : "b", name, pid, pid);

		sf_jw_key(w, "cat");
		sf_jw_string(w, cat);
		sf_jw_key(w, "id");
		sf_jw_string(w, id);
		put_time(cv, w, "ts", end ? to : from);
		sf_jw_end(w);
	}
}

static void *pool_at(struct pool *p, uint32_t i)
{
	return p->items + (size_t)i * p->size;
}

/* An entry's index; AN_NONE when out of memory. */
static uint32_t pool_get(struct pool *p)
{
	uint32_t i = p->free_head;

	if (i != AN_NONE) {
		memcpy(&p->free_head, pool_at(p, i), sizeof(p->free_head));
		return i;
	}
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 256;
		void *items = realloc(p->items, (size_t)cap * p->size);

		if (!items)
			return AN_NONE;
		p->items = items;
		p->cap = cap;
	}
	return p->n++;
}

static void pool_put(struct pool *p, uint32_t i)
{
	memcpy(pool_at(p, i), &p->free_head, sizeof(p->free_head));
	p->free_head = i;
}

static void pool_init(struct pool *p, size_t size)
{
	p->size = size;
	p->free_head = AN_NONE;
}

static int on_queue(struct perfetto *pf, const struct st_ev_block_bio *b)
{
	uint32_t i = an_idmap_get(&pf->queued, b->p.bio);

	if (i == AN_NONE) {
		i = pool_get(&pf->queue_ts);
		if (i == AN_NONE || an_idmap_put(&pf->queued, b->p.bio, i))
			return -1;
	}
	memcpy(pool_at(&pf->queue_ts, i), &b->h.ts, sizeof(b->h.ts));
	return 0;
}

/* The queue time of a bio, forgotten; 0 if unknown. */
static uint64_t take_queued(struct perfetto *pf, uint64_t bio)
{
	uint32_t i = bio ? an_idmap_get(&pf->queued, bio) : AN_NONE;
	uint64_t ts;

	if (i == AN_NONE)
		return 0;
	memcpy(&ts, pool_at(&pf->queue_ts, i), sizeof(ts));
	an_idmap_del(&pf->queued, bio);
	pool_put(&pf->queue_ts, i);
	return ts;
}

static int on_issue(struct sf_convert *cv, const struct st_ev_block_rq_issue *e)
{
	struct perfetto *pf = cv->state;
	uint32_t i = an_idmap_get(&pf->rq_at, e->p.rq), pid;
	struct pf_dev *d = dev_of(cv, e->p.dev, &pid);
	struct pf_request *rq;
	uint64_t queued = 0;

	if (!d)
		return -1;
	if (i == AN_NONE) {	/* a requeued request is issued again: still one in flight */
		i = pool_get(&pf->rqs);
		if (i == AN_NONE || an_idmap_put(&pf->rq_at, e->p.rq, i))
			return -1;
		iops_tick(cv, d, pid, e->h.ts);
		counter(cv, pid, "in flight", "requests", e->h.ts, ++d->in_flight);
		((struct pf_request *)pool_at(&pf->rqs, i))->queue_ts = 0;
	}
	rq = pool_at(&pf->rqs, i);
	for (unsigned b = 0; b < ST_RQ_BIOS && b < e->p.nr_bios; b++) {
		uint64_t ts = take_queued(pf, e->p.bios[b]);

		if (ts && (!queued || ts < queued))
			queued = ts;
	}
	if (queued)
		rq->queue_ts = queued;
	rq->issue_ts = e->h.ts;
	rq->opf = e->p.opf;
	rq->bytes = e->p.bytes;
	return 0;
}

static int on_complete(struct sf_convert *cv, const struct st_ev_block_rq *e)
{
	static const char *const ops[] = { [ST_OP_READ] = "read", [ST_OP_WRITE] = "write",
		[ST_OP_FLUSH] = "flush", [ST_OP_DISCARD] = "discard" };
	struct perfetto *pf = cv->state;
	uint32_t i = an_idmap_get(&pf->rq_at, e->p.rq), pid, op;
	struct pf_dev *d;
	struct pf_request *rq;
	char name[48];

	if (i == AN_NONE)
		return 0;
	d = dev_of(cv, e->p.dev, &pid);
	if (!d)
		return -1;
	rq = pool_at(&pf->rqs, i);
	op = rq->opf & ST_OP_MASK;
	snprintf(name, sizeof(name), "%s %u", op < 4 && ops[op] ? ops[op] : "other", rq->bytes);
	if (rq->queue_ts && rq->queue_ts <= rq->issue_ts)
		async_slice(cv, pid, "queue", "queue", rq->queue_ts, rq->issue_ts);
	async_slice(cv, pid, "request", name, rq->issue_ts, e->h.ts);
	iops_tick(cv, d, pid, e->h.ts);
	d->completions++;
	counter(cv, pid, "in flight", "requests", e->h.ts, --d->in_flight);
	an_idmap_del(&pf->rq_at, e->p.rq);
	pool_put(&pf->rqs, i);
	return 0;
}

/* ---- Syscalls ----------------------------------------------------------------------- */

static int on_syscall(struct sf_convert *cv, const struct st_event_header *h, unsigned kind)
{
	struct perfetto *pf = cv->state;
	uint32_t i = an_idmap_get(&pf->in_syscall, h->tid);
	const struct st_type *t;
	struct sf_json_writer *w;
	struct pf_call *call;

	if ((kind & ST_KIND_MASK) == ST_KIND_SYS_ENTER) {	/* the slot stays the thread's */
		if (i == AN_NONE) {
			i = pool_get(&pf->calls);
			if (i == AN_NONE || an_idmap_put(&pf->in_syscall, h->tid, i))
				return -1;
		}
		call = pool_at(&pf->calls, i);
		call->ts = h->ts;
		call->type = h->type;
		return 0;
	}
	if (i == AN_NONE)
		return 0;
	call = pool_at(&pf->calls, i);
	if (call->type + 1 != h->type || !call->ts)
		return 0;
	t = st_builtin_type(call->type);
	if (name_task(cv, h->pid, h->tid))
		return -1;
	w = event(cv, "X", t ? t->name + strlen("sys_enter_") : "syscall", h->pid, h->tid);
	put_time(cv, w, "ts", call->ts);
	put_us(w, "dur", h->ts - call->ts);
	sf_jw_end(w);
	call->ts = 0;
	return 0;
}

/* ---- Writer ------------------------------------------------------------------------- */

static int perfetto_begin(struct sf_convert *cv)
{
	struct perfetto *pf = calloc(1, sizeof(*pf));

	cv->state = pf;
	if (!pf || an_idmap_init(&pf->rq_at, 256) || an_idmap_init(&pf->queued, 256) ||
	    an_idmap_init(&pf->in_syscall, 256) || an_idmap_init(&pf->named, 256))
		return sf_error(cv->in, "out of memory");
	pool_init(&pf->rqs, sizeof(struct pf_request));
	pool_init(&pf->queue_ts, sizeof(uint64_t));
	pool_init(&pf->calls, sizeof(struct pf_call));
	pf->first = 1;
	sf_jw_init(&pf->w, cv->text);
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", cv->text);
	return SF_OK;
}

static int perfetto_event(struct sf_convert *cv, const struct st_event_header *ev)
{
	unsigned kind;
	int rc = 0;

	switch (ev->type) {
	case ST_EV_block_bio_queue:
		rc = on_queue(cv->state, (const void *)ev);
		break;
	case ST_EV_block_rq_issue:
		rc = on_issue(cv, (const void *)ev);
		break;
	case ST_EV_block_rq_complete:
		rc = on_complete(cv, (const void *)ev);
		break;
	default:
		/* the calls drawn as slices: data calls and those that submit I/O */
		kind = st_event_kind(ev->type);
		if (kind & (ST_KIND_DATA | ST_KIND_SUBMIT))
			rc = on_syscall(cv, ev, kind);
		break;
	}
	return rc ? sf_error(cv->in, "out of memory") : SF_OK;
}

static int perfetto_end(struct sf_convert *cv)
{
	struct perfetto *pf = cv->state;

	if (!pf)
		return SF_OK;
	for (size_t i = 0; i < pf->ndevs; i++)	/* the last interval, partial */
		if (pf->devs[i].completions)
			counter(cv, DEV_PID_BASE + (uint32_t)i, "IOPS", "iops", pf->devs[i].interval,
				pf->devs[i].completions * (1000000000ull / IOPS_INTERVAL_NS));
	if (pf->rq_at.keys)
		fputs("\n]}\n", cv->text);
	an_idmap_free(&pf->rq_at);
	an_idmap_free(&pf->queued);
	an_idmap_free(&pf->in_syscall);
	an_idmap_free(&pf->named);
	free(pf->devs);
	free(pf->rqs.items);
	free(pf->queue_ts.items);
	free(pf->calls.items);
	free(pf);
	return SF_OK;
}

const struct sf_convert_writer sf_convert_perfetto = {
	.name = "perfetto",
	.text = 1,
	.begin = perfetto_begin,
	.event = perfetto_event,
	.end = perfetto_end,
};
