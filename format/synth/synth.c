/* SPDX-License-Identifier: MIT */
/*
 * synth.c - the synthetic trace generator (see synth.h).
 *
 * A discrete-event simulation. Every thread knows when it starts its next
 * operation; the thread that starts first generates its whole operation at
 * once (every event with its timestamp, latencies drawn from lognormal
 * distributions) into an output heap ordered by a "drain time" a little after
 * each event's timestamp. No later operation can produce an event before the
 * next operation's start, so every event draining before it goes to the
 * writer. The random gap between timestamp and drain time imitates ring
 * buffer order across CPUs: nearly, not perfectly, sorted by timestamp.
 *
 * Because an operation is generated whole, a request's issue and completion
 * events sit in the heap until the clock passes them; a later bio that merges
 * into the request patches them there (size, bio chain), as the kernel's
 * request grows before it is issued.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "format/lib/sttrace.h"
#include "format/synth/synth.h"

/* Simulated host. */
#define EVENT_CLOCK_START_NS	1000000000000ull	/* 1000 s after boot */
#define REALTIME_START_NS	1767225600000000000ll	/* 2026-01-01T00:00:00Z */
#define DEV_SECTORS		(128ull << 21)		/* 128 GiB: room for 64 files of 1 GiB */
#define FILE_BYTES		(1ull << 30)
#define JOURNAL_SECTOR		2048u
#define JOURNAL_SECTORS		65536u
#define MAX_RQ_SECTORS		1024u			/* max_sectors_kb = 512 */
#define DRAIN_JITTER_NS		3000u
#define AT_FDCWD_VALUE		(-100)
#define OPEN_FLAGS		0x4002u			/* O_RDWR | O_DIRECT */
#define IOCB_DIRECT_FLAG	0x20000u
#define IORING_OP_READ_VALUE	22u
#define IORING_ENTER_GETEVENTS_VALUE 1u
#define URING_BATCH		4u
#define KWORKER_PID		97u
#define MAX_DEVICES		16u
#define MAX_PROCS		64u

/* Median latencies (ns) and spreads of the simulated stages. */
#define LAT_SYSCALL_TO_FS	1500
#define LAT_FS_TO_QUEUE		1200
#define LAT_Q2G			800
#define LAT_G2I			400
#define LAT_I2D_SCHED		9000
#define LAT_I2D_NONE		1000
#define LAT_D2C_READ		70000
#define LAT_D2C_WRITE		25000
#define LAT_D2C_FLUSH		250000
#define D2C_NS_PER_BYTE		0.5			/* 2 GB/s transfer */
#define LAT_WAKEUP		3000
#define LAT_EXIT		800
#define LAT_THINK		20000

/* How often the unusual things happen. */
#define P_TAIL			0.001	/* device latency 10-100x */
#define P_REQUEUE		0.002
#define P_MERGE			0.5	/* when a pending request fits */
#define P_FRONT_MERGE		0.3
#define P_FSYNC			0.03
#define P_MIGRATE		0.02
#define P_PAUSE			0.01	/* thread idles 1-5 ms */

/* ---- Random numbers: xoshiro256**, seeded by splitmix64 --------------- */

struct rng {
	uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Uniform in [0, 1). */
static double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static uint64_t rng_below(struct rng *r, uint64_t n)
{
	return n ? rng_next(r) % n : 0;
}

static int rng_chance(struct rng *r, double p)
{
	return rng_unit(r) < p;
}

/* Standard normal (Box-Muller). */
static double rng_normal(struct rng *r)
{
	double u1 = 1.0 - rng_unit(r);
	double u2 = rng_unit(r);

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* Lognormal duration with the given median; at least 1 ns. */
static uint64_t lognormal_ns(struct rng *r, double median_ns, double sigma)
{
	return (uint64_t)(median_ns * exp(sigma * rng_normal(r))) + 1;
}

/* ---- Min-heap of (key, insertion order) -------------------------------- */

struct heap_item {
	uint64_t key;
	uint64_t seq;	/* ties keep insertion order: deterministic output */
	uint32_t idx;
};

struct heap {
	struct heap_item *v;
	size_t n, cap;
	uint64_t seq;
};

static int item_before(const struct heap_item *a, const struct heap_item *b)
{
	return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

static int heap_push(struct heap *h, uint64_t key, uint32_t idx)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 256;
		struct heap_item *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return ST_ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	i = h->n++;
	h->v[i] = (struct heap_item){ key, h->seq++, idx };
	while (i > 0 && item_before(&h->v[i], &h->v[(i - 1) / 2])) {
		struct heap_item tmp = h->v[i];

		h->v[i] = h->v[(i - 1) / 2];
		h->v[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
	return 0;
}

static struct heap_item heap_pop(struct heap *h)
{
	struct heap_item top = h->v[0];
	size_t i = 0;

	h->v[0] = h->v[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && item_before(&h->v[l], &h->v[m]))
			m = l;
		if (r < h->n && item_before(&h->v[r], &h->v[m]))
			m = r;
		if (m == i)
			break;
		struct heap_item tmp = h->v[i];

		h->v[i] = h->v[m];
		h->v[m] = tmp;
		i = m;
	}
	return top;
}

/* ---- Event slots: records waiting in the output heap ------------------- */

union synth_rec {
	struct st_event_header h;
	struct st_ev_block_bio bio;
	struct st_ev_block_split split;
	struct st_ev_block_rq rq;
	struct st_ev_block_rq_issue issue;
	struct st_ev_block_rq_complete complete;
	struct st_ev_sys_enter enter;
	struct st_ev_sys_enter_io_uring_enter uring_enter;
	struct st_ev_sys_enter_openat openat;
	struct st_ev_sys_exit exit;
	struct st_ev_sys_exit_openat opened;
	struct st_ev_fs_io fs;
	struct st_ev_uring uring;
	struct st_ev_task task;
};

/* Slots live in fixed blocks so a record never moves while it waits. */
#define SLOT_BLOCK 4096u

struct slots {
	union synth_rec **blocks;
	size_t nblocks;
	uint32_t *free;		/* stack of free slot indexes */
	size_t nfree;
};

static union synth_rec *slot_at(const struct slots *s, uint32_t i)
{
	return &s->blocks[i / SLOT_BLOCK][i % SLOT_BLOCK];
}

static int slots_grow(struct slots *s)
{
	size_t n = s->nblocks + 1;
	union synth_rec **blocks = realloc(s->blocks, n * sizeof(*blocks));
	uint32_t *free_stack;

	if (!blocks)
		return ST_ENOMEM;
	s->blocks = blocks;
	free_stack = realloc(s->free, n * SLOT_BLOCK * sizeof(*free_stack));
	if (!free_stack)
		return ST_ENOMEM;
	s->free = free_stack;
	blocks[s->nblocks] = malloc(SLOT_BLOCK * sizeof(union synth_rec));
	if (!blocks[s->nblocks])
		return ST_ENOMEM;
	for (uint32_t i = SLOT_BLOCK; i > 0; i--)
		s->free[s->nfree++] = (uint32_t)(s->nblocks * SLOT_BLOCK + i - 1);
	s->nblocks = n;
	return 0;
}

static void slots_free(struct slots *s)
{
	for (size_t i = 0; i < s->nblocks; i++)
		free(s->blocks[i]);
	free(s->blocks);
	free(s->free);
}

/* ---- Identities (bio, request, io_uring request addresses) ------------- */

/*
 * Kernel objects come from slabs and their addresses are reused; a pool
 * hands out the next address not in use at the given time, so identities
 * repeat over a trace but never while an object is in flight.
 */
struct id_pool {
	uint64_t base, stride;
	uint64_t *busy_until;	/* per address; UINT64_MAX while taken */
	uint32_t n, cursor;
};

static int id_pool_init(struct id_pool *p, uint64_t base, uint64_t stride, uint32_t n)
{
	p->base = base;
	p->stride = stride;
	p->n = n;
	p->cursor = 0;
	p->busy_until = calloc(n, sizeof(*p->busy_until));
	return p->busy_until ? 0 : ST_ENOMEM;
}

/* Index of a free identity at `now`, marked taken; UINT32_MAX when out of memory. */
static uint32_t id_take(struct id_pool *p, uint64_t now)
{
	for (uint32_t tries = 0; tries < p->n; tries++) {
		uint32_t i = p->cursor;

		p->cursor = (p->cursor + 1) % p->n;
		if (p->busy_until[i] <= now) {
			p->busy_until[i] = UINT64_MAX;
			return i;
		}
	}
	uint64_t *grown = realloc(p->busy_until, 2 * (size_t)p->n * sizeof(*grown));

	if (!grown)
		return UINT32_MAX;
	memset(grown + p->n, 0, p->n * sizeof(*grown));
	p->busy_until = grown;
	p->cursor = p->n + 1;
	p->n *= 2;
	grown[p->cursor - 1] = UINT64_MAX;
	return p->cursor - 1;
}

static void id_release(struct id_pool *p, uint32_t i, uint64_t at)
{
	if (i != UINT32_MAX)
		p->busy_until[i] = at;
}

static uint64_t id_addr(const struct id_pool *p, uint32_t i)
{
	return p->base + (uint64_t)i * p->stride;
}

/* ---- The simulated host ------------------------------------------------ */

/* The request fields shared by every block_rq_* record, plus the bio chain. */
struct rq_state {
	struct st_block_rq r;
	uint64_t bios[ST_RQ_BIOS];
};
_Static_assert(offsetof(struct st_block_rq_issue, bios) == sizeof(struct st_block_rq),
	       "block_rq_issue extends block_rq");
_Static_assert(offsetof(struct st_block_rq_complete, bio) == sizeof(struct st_block_rq),
	       "block_rq_complete extends block_rq");

/* A request not issued yet that later bios of the same file may merge into. */
struct pending_rq {
	int valid;
	unsigned proc;
	uint32_t issue_slot, complete_slot;
	uint64_t issue_ts, complete_ts;
	int64_t pos_first, pos_end;	/* file range the request covers */
	struct rq_state rq;
};

struct synth_dev {
	uint32_t devt;
	char name[24];
	const char *model;
	int sched;		/* 1: mq-deadline (insert events, merges); 0: none */
	unsigned irq_cpu;
	struct id_pool tags;
	struct pending_rq pend;
};

enum proc_kind { PK_RANDREAD, PK_DB, PK_SEQREAD, PK_URING, PK_KINDS };

static const struct kind_desc {
	const char *comm;
	unsigned threads;
	int on_file;		/* 1: a file on ext4 (iomap events); 0: the raw device */
} kinds[PK_KINDS] = {
	[PK_RANDREAD] = { "fio", 4, 1 },
	[PK_DB] = { "postgres", 3, 1 },
	[PK_SEQREAD] = { "dd", 1, 0 },
	[PK_URING] = { "rocksdb", 2, 1 },
};

struct synth_proc {
	uint32_t pid;
	enum proc_kind kind;
	unsigned dev;
	int fd, ring_fd;
	uint64_t ino;
	uint64_t base_sector;	/* the file is one extent starting here */
	uint64_t size;
	uint64_t ring_ctx;
	uint64_t user_data;
	char path[64];
	struct id_pool reqs;
};

struct synth_thread {
	uint32_t tid;
	unsigned proc, cpu;
	uint64_t next_start;
	int64_t seq_pos;
};

struct who {
	uint32_t pid, tid, cpu;
};

struct synth {
	const struct synth_opts *o;
	struct rng rng;
	struct st_writer *w;
	struct heap out;	/* events by drain time */
	struct heap runq;	/* threads by next start */
	struct slots slots;
	union synth_rec scratch;	/* written instead of a slot when out of memory */
	struct synth_dev *devs;
	struct synth_proc *procs;
	struct synth_thread *threads;
	unsigned nthreads;
	struct id_pool bios;
	uint64_t ios_done, events, last_ts;
	int err;
};

/* ---- Emitting records -------------------------------------------------- */

/*
 * A zeroed record with its header, queued for draining; its slot index in
 * *idx. On allocation failure records the error and returns a scratch record,
 * so generation code never branches on it (the main loop stops).
 */
static union synth_rec *event_new(struct synth *s, uint16_t type, size_t size, uint64_t ts,
				  struct who who, uint32_t *idx)
{
	union synth_rec *rec;
	uint32_t i;

	if (!s->slots.nfree && !s->err)
		s->err = slots_grow(&s->slots);
	if (s->err) {
		*idx = UINT32_MAX;
		return &s->scratch;
	}
	i = s->slots.free[--s->slots.nfree];
	rec = slot_at(&s->slots, i);
	memset(rec, 0, size);
	rec->h = (struct st_event_header){ .type = type, .size = (uint16_t)size, .cpu = who.cpu,
					   .ts = ts, .pid = who.pid, .tid = who.tid };
	s->err = heap_push(&s->out, ts + rng_below(&s->rng, DRAIN_JITTER_NS), i);
	*idx = i;
	return rec;
}

static void emit_bio(struct synth *s, uint16_t type, uint64_t ts, struct who who,
		     const struct st_block_bio *bio)
{
	uint32_t idx;

	event_new(s, type, sizeof(struct st_ev_block_bio), ts, who, &idx)->bio.p = *bio;
}

static uint32_t emit_rq(struct synth *s, uint16_t type, uint64_t ts, struct who who,
			const struct rq_state *rq)
{
	uint32_t idx;

	event_new(s, type, sizeof(struct st_ev_block_rq), ts, who, &idx)->rq.p = rq->r;
	return idx;
}

static void fill_issue(union synth_rec *rec, const struct rq_state *rq)
{
	memcpy(&rec->issue.p, &rq->r, sizeof(rq->r));
	memcpy(rec->issue.p.bios, rq->bios, sizeof(rq->bios));
}

static uint32_t emit_issue(struct synth *s, uint64_t ts, struct who who, const struct rq_state *rq)
{
	uint32_t idx;

	fill_issue(event_new(s, ST_EV_block_rq_issue, sizeof(struct st_ev_block_rq_issue), ts, who,
			     &idx), rq);
	return idx;
}

/* The chain still hangs off the request as it completes: its first bio is named. */
static void fill_complete(union synth_rec *rec, const struct rq_state *rq)
{
	memcpy(&rec->complete.p, &rq->r, sizeof(rq->r));
	rec->complete.p.bio = rq->bios[0];
}

static uint32_t emit_complete(struct synth *s, uint64_t ts, struct who who, const struct rq_state *rq)
{
	uint32_t idx;

	fill_complete(event_new(s, ST_EV_block_rq_complete, sizeof(struct st_ev_block_rq_complete),
				ts, who, &idx), rq);
	return idx;
}

static void emit_enter(struct synth *s, uint16_t type, uint64_t ts, struct who who,
		       int64_t fd, uint64_t count, int64_t offset, uint64_t flags)
{
	union synth_rec *e;
	uint32_t idx;

	/* io_uring_enter's record has the CQ head and tail: 0 and 0, the ring not read */
	if (type == ST_EV_sys_enter_io_uring_enter) {
		e = event_new(s, type, sizeof(struct st_ev_sys_enter_io_uring_enter), ts, who, &idx);
		e->uring_enter.p = (struct st_sys_enter_io_uring_enter){ .fd = fd, .count = count,
									 .offset = offset, .flags = flags };
		return;
	}
	/* the cgroup stays 0: unknown, as in a file whose recorder could not tell */
	event_new(s, type, sizeof(struct st_ev_sys_enter), ts, who, &idx)->enter.p =
		(struct st_sys_enter){ .fd = fd, .count = count, .offset = offset, .flags = flags };
}

static void emit_exit(struct synth *s, uint16_t type, uint64_t ts, struct who who, int64_t ret)
{
	uint32_t idx;

	event_new(s, type, sizeof(struct st_ev_sys_exit), ts, who, &idx)->exit.p.ret = ret;
}

static void emit_fs(struct synth *s, uint16_t type, uint64_t ts, struct who who,
		    const struct synth_proc *p, int64_t pos, uint64_t count, int64_t ret,
		    uint32_t flags)
{
	uint32_t idx;

	event_new(s, type, sizeof(struct st_ev_fs_io), ts, who, &idx)->fs.p = (struct st_fs_io){
		.ino = p->ino, .pos = pos, .count = count, .ret = ret,
		.dev = s->devs[p->dev].devt, .flags = flags };
}

static void emit_uring(struct synth *s, uint16_t type, uint64_t ts, struct who who,
		       const struct st_uring *u)
{
	uint32_t idx;

	event_new(s, type, sizeof(struct st_ev_uring), ts, who, &idx)->uring.p = *u;
}

/* ---- The block layer --------------------------------------------------- */

static struct who irq_who(const struct synth_dev *d)
{
	return (struct who){ 0, 0, d->irq_cpu };
}

static uint64_t take_bio(struct synth *s, uint64_t now, uint32_t *slot)
{
	*slot = id_take(&s->bios, now);
	if (*slot == UINT32_MAX) {
		s->err = ST_ENOMEM;
		return 0;
	}
	return id_addr(&s->bios, *slot);
}

/* Device service time (D2C) of a request: lognormal, size-dependent, rare long tail. */
static uint64_t device_latency(struct synth *s, const struct rq_state *rq)
{
	uint32_t op = rq->r.opf & ST_OP_MASK;
	double median = op == ST_OP_READ ? LAT_D2C_READ :
			op == ST_OP_WRITE ? LAT_D2C_WRITE : LAT_D2C_FLUSH;
	double ns = median * exp(0.35 * rng_normal(&s->rng)) + rq->r.bytes * D2C_NS_PER_BYTE;

	if (rng_chance(&s->rng, P_TAIL))
		ns *= pow(10.0, 1.0 + rng_unit(&s->rng));
	return (uint64_t)(ns * s->o->slow_factor) + 1;
}

/* What a request carries into the merge bookkeeping: the file range it covers. */
struct merge_key {
	unsigned proc;
	int64_t pos;
	uint32_t len;
};

/*
 * One bio turned into one request: getrq, [insert], issue, [requeue, issue],
 * complete. Returns the completion time. A request from `mk` (NULL for none)
 * stays open to merges until it is issued.
 */
static uint64_t request_run(struct synth *s, struct synth_dev *d, struct who who,
			    const struct st_block_bio *bio, uint64_t t, const struct merge_key *mk)
{
	int flush = (bio->opf & ST_OP_MASK) == ST_OP_FLUSH;
	struct rq_state rq = { 0 };
	uint32_t tag, issue_slot, complete_slot;

	t += lognormal_ns(&s->rng, LAT_Q2G, 0.3);
	emit_bio(s, ST_EV_block_getrq, t, who, bio);
	tag = id_take(&d->tags, t);
	if (tag == UINT32_MAX)
		s->err = ST_ENOMEM;
	rq.r = (struct st_block_rq){ .rq = id_addr(&d->tags, tag), .sector = bio->sector,
				     .dev = bio->dev, .nr_sector = bio->nr_sector,
				     .bytes = bio->nr_sector * 512u, .opf = bio->opf, .nr_bios = 1 };
	rq.bios[0] = bio->bio;
	if (d->sched && !flush) {
		t += lognormal_ns(&s->rng, LAT_G2I, 0.3);
		emit_rq(s, ST_EV_block_rq_insert, t, who, &rq);
		t += lognormal_ns(&s->rng, LAT_I2D_SCHED, 0.7);
	} else {
		t += lognormal_ns(&s->rng, LAT_I2D_NONE, 0.3);
	}
	issue_slot = emit_issue(s, t, who, &rq);
	if (rng_chance(&s->rng, P_REQUEUE)) {
		struct who kworker = { KWORKER_PID, KWORKER_PID, who.cpu };

		t += lognormal_ns(&s->rng, 30000, 0.5);
		emit_rq(s, ST_EV_block_rq_requeue, t, who, &rq);
		t += lognormal_ns(&s->rng, 60000, 0.5);
		emit_issue(s, t, kworker, &rq);
		mk = NULL;	/* issued already: nothing merges into it any more */
	}
	uint64_t issue_ts = t;

	t += device_latency(s, &rq);
	complete_slot = emit_complete(s, t, irq_who(d), &rq);
	id_release(&d->tags, tag, t);
	if (mk && d->sched && !flush)
		d->pend = (struct pending_rq){
			.valid = 1, .proc = mk->proc, .issue_slot = issue_slot,
			.complete_slot = complete_slot, .issue_ts = issue_ts, .complete_ts = t,
			.pos_first = mk->pos, .pos_end = mk->pos + mk->len, .rq = rq };
	return t;
}

/*
 * Submit one bio: queue, then split into max-size front pieces (each its own
 * request, the parent keeps the rest and completes last). Returns when the
 * whole bio completed.
 */
static uint64_t bio_submit(struct synth *s, struct who who, unsigned dev, uint64_t sector,
			   uint32_t nr_sector, uint32_t opf, uint64_t t, const struct merge_key *mk)
{
	uint32_t parent_slot, piece_slot;
	struct st_block_bio bio = { .bio = take_bio(s, t, &parent_slot), .sector = sector,
				    .dev = s->devs[dev].devt, .nr_sector = nr_sector, .opf = opf };
	uint64_t done = t;

	emit_bio(s, ST_EV_block_bio_queue, t, who, &bio);
	while (bio.nr_sector > MAX_RQ_SECTORS) {
		struct st_block_bio front = bio;
		uint32_t idx;

		front.bio = take_bio(s, t, &piece_slot);
		front.nr_sector = MAX_RQ_SECTORS;
		t += lognormal_ns(&s->rng, 400, 0.3);
		event_new(s, ST_EV_block_split, sizeof(struct st_ev_block_split), t, who,
			  &idx)->split.p = (struct st_block_split){
			.bio = front.bio, .parent = bio.bio, .sector = front.sector,
			.new_sector = front.sector + MAX_RQ_SECTORS, .dev = bio.dev,
			.nr_sector = MAX_RQ_SECTORS, .opf = opf };
		uint64_t c = request_run(s, &s->devs[dev], who, &front, t, NULL);

		id_release(&s->bios, piece_slot, c);
		done = c > done ? c : done;
		bio.sector += MAX_RQ_SECTORS;
		bio.nr_sector -= MAX_RQ_SECTORS;
		t += lognormal_ns(&s->rng, 1000, 0.3);
		mk = NULL;
	}
	uint64_t c = request_run(s, &s->devs[dev], who, &bio, t, mk);

	done = c > done ? c : done;
	id_release(&s->bios, parent_slot, done);
	return done;
}

/*
 * Whether an operation of `len` bytes queued at t_queue merges into the
 * pending request of its device; if so moves *pos next to it and returns
 * +1 (back merge) or -1 (front merge), else 0.
 */
static int pick_merge(struct synth *s, const struct synth_proc *p, unsigned proc, uint32_t opf,
		      uint32_t len, uint64_t t_queue, int64_t *pos)
{
	const struct pending_rq *pend = &s->devs[p->dev].pend;

	if (!pend->valid || pend->proc != proc || pend->rq.r.opf != opf ||
	    pend->issue_ts <= t_queue + 1000 || pend->rq.r.nr_bios >= ST_RQ_BIOS ||
	    pend->rq.r.nr_sector + len / 512 > MAX_RQ_SECTORS || !rng_chance(&s->rng, P_MERGE))
		return 0;
	if (pend->pos_first >= (int64_t)len && rng_chance(&s->rng, P_FRONT_MERGE)) {
		*pos = pend->pos_first - len;
		return -1;
	}
	if ((uint64_t)pend->pos_end + len > p->size)
		return 0;
	*pos = pend->pos_end;
	return 1;
}

/* A bio merging into the pending request: queue, back/front merge, patched issue/complete. */
static uint64_t merge_run(struct synth *s, struct who who, unsigned dev, uint64_t sector,
			  uint32_t nr_sector, uint32_t opf, uint64_t t, int dir)
{
	struct synth_dev *d = &s->devs[dev];
	struct pending_rq *pend = &d->pend;
	struct rq_state *rq = &pend->rq;
	uint32_t slot;
	struct st_block_bio bio = { .bio = take_bio(s, t, &slot), .sector = sector,
				    .dev = d->devt, .nr_sector = nr_sector, .opf = opf };

	emit_bio(s, ST_EV_block_bio_queue, t, who, &bio);
	t += lognormal_ns(&s->rng, 300, 0.3);
	emit_bio(s, dir > 0 ? ST_EV_block_bio_backmerge : ST_EV_block_bio_frontmerge, t, who, &bio);
	if (dir > 0) {
		rq->bios[rq->r.nr_bios] = bio.bio;
		pend->pos_end += nr_sector * 512;
	} else {
		memmove(rq->bios + 1, rq->bios, rq->r.nr_bios * sizeof(rq->bios[0]));
		rq->bios[0] = bio.bio;
		rq->r.sector = sector;
		pend->pos_first -= nr_sector * 512;
	}
	rq->r.nr_bios++;
	rq->r.nr_sector += nr_sector;
	rq->r.bytes += nr_sector * 512;
	if (!s->err) {
		fill_issue(slot_at(&s->slots, pend->issue_slot), rq);
		fill_complete(slot_at(&s->slots, pend->complete_slot), rq);
	}
	id_release(&s->bios, slot, pend->complete_ts);
	return pend->complete_ts;
}

/* The block part of a data operation on a process's file or device. */
static uint64_t data_block_io(struct synth *s, struct who who, unsigned proc, int64_t pos,
			      uint32_t len, uint32_t opf, uint64_t t_queue, int merge)
{
	const struct synth_proc *p = &s->procs[proc];
	uint64_t sector = p->base_sector + (uint64_t)pos / 512;
	struct merge_key mk = { proc, pos, len };

	if (merge)
		return merge_run(s, who, p->dev, sector, len / 512, opf, t_queue, merge);
	return bio_submit(s, who, p->dev, sector, len / 512, opf, t_queue, &mk);
}

/* ---- Operations -------------------------------------------------------- */

static struct who thread_who(const struct synth *s, const struct synth_thread *th)
{
	return (struct who){ s->procs[th->proc].pid, th->tid, th->cpu };
}

static uint32_t pick_size(struct synth *s, enum proc_kind kind)
{
	static const uint32_t randread[] = { 4096, 4096, 4096, 4096, 4096, 4096, 4096,
					     8192, 16384, 65536 };

	switch (kind) {
	case PK_RANDREAD:
		return randread[rng_below(&s->rng, sizeof(randread) / sizeof(randread[0]))];
	case PK_DB:
		return 8192;
	case PK_SEQREAD:
		return 1u << 20;
	default:
		return 4096;
	}
}

static int64_t pick_pos(struct synth *s, const struct synth_proc *p, uint32_t len)
{
	return (int64_t)(rng_below(&s->rng, (p->size - len) / 4096 + 1) * 4096);
}

/* A psync pread64/pwrite64 with O_DIRECT; returns the syscall exit time. */
static uint64_t sync_io(struct synth *s, struct synth_thread *th, int write, uint64_t t)
{
	struct synth_proc *p = &s->procs[th->proc];
	const struct kind_desc *k = &kinds[p->kind];
	struct who who = thread_who(s, th);
	uint16_t enter = write ? ST_EV_sys_enter_pwrite64 : ST_EV_sys_enter_pread64;
	uint32_t opf = write ? ST_OP_WRITE | ST_F_SYNC : ST_OP_READ;
	uint32_t len = pick_size(s, p->kind);
	int64_t pos = p->kind == PK_SEQREAD ? th->seq_pos : pick_pos(s, p, len);
	uint64_t t_fs = t + lognormal_ns(&s->rng, LAT_SYSCALL_TO_FS, 0.3);
	uint64_t t_queue = (k->on_file ? t_fs : t) + lognormal_ns(&s->rng, LAT_FS_TO_QUEUE, 0.3);
	int merge = pick_merge(s, p, th->proc, opf, len, t_queue, &pos);

	if (p->kind == PK_SEQREAD)
		th->seq_pos = (int64_t)((th->seq_pos + len) % p->size);
	emit_enter(s, enter, t, who, p->fd, len, pos, 0);
	if (k->on_file)
		emit_fs(s, ST_EV_iomap_dio_rw_begin, t_fs, who, p, pos, len, 0, IOCB_DIRECT_FLAG);
	t = data_block_io(s, who, th->proc, pos, len, opf, t_queue, merge);
	t += lognormal_ns(&s->rng, LAT_WAKEUP, 0.5);
	if (k->on_file) {
		emit_fs(s, ST_EV_iomap_dio_complete, t, who, p, pos, len, len, IOCB_DIRECT_FLAG);
		t += lognormal_ns(&s->rng, LAT_EXIT, 0.3);
	}
	emit_exit(s, enter + 1, t, who, len);
	s->ios_done++;
	return t;
}

/* fsync: ext4 sync, journal writes, then a flush request. */
static uint64_t fsync_op(struct synth *s, struct synth_thread *th, uint64_t t)
{
	const struct synth_proc *p = &s->procs[th->proc];
	struct who who = thread_who(s, th);
	uint32_t writes = 1 + (uint32_t)rng_below(&s->rng, 2);
	uint64_t sector = JOURNAL_SECTOR + rng_below(&s->rng, JOURNAL_SECTORS / 8) * 8;
	uint64_t done, t_queue;

	emit_enter(s, ST_EV_sys_enter_fsync, t, who, p->fd, 0, -1, 0);
	t += lognormal_ns(&s->rng, 1200, 0.3);
	emit_fs(s, ST_EV_ext4_sync_file_enter, t, who, p, 0, 0, 0, 0);
	done = t_queue = t + lognormal_ns(&s->rng, 2000, 0.3);
	for (uint32_t i = 0; i < writes; i++) {
		uint64_t c = bio_submit(s, who, p->dev, sector + 8 * i, 8,
					ST_OP_WRITE | ST_F_SYNC | ST_F_META, t_queue, NULL);

		done = c > done ? c : done;
		t_queue += lognormal_ns(&s->rng, 500, 0.3);
	}
	t = bio_submit(s, who, p->dev, 0, 0, ST_OP_FLUSH | ST_F_PREFLUSH,
		       done + lognormal_ns(&s->rng, 2000, 0.3), NULL);
	t += lognormal_ns(&s->rng, 2500, 0.3);
	emit_fs(s, ST_EV_ext4_sync_file_exit, t, who, p, 0, 0, 0, 0);
	t += lognormal_ns(&s->rng, LAT_EXIT, 0.3);
	emit_exit(s, ST_EV_sys_exit_fsync, t, who, 0);
	s->ios_done++;
	return t;
}

/* One io_uring request of a batch: submit, dio, block, completion. */
static uint64_t uring_req(struct synth *s, struct synth_thread *th, uint64_t t, uint64_t *next)
{
	struct synth_proc *p = &s->procs[th->proc];
	struct who who = thread_who(s, th);
	uint32_t len = pick_size(s, p->kind);
	int64_t pos = pick_pos(s, p, len);
	uint32_t req_slot = id_take(&p->reqs, t);
	struct st_uring u = { .ctx = p->ring_ctx, .req = id_addr(&p->reqs, req_slot),
			      .user_data = ++p->user_data, .opcode = IORING_OP_READ_VALUE,
			      .fd = p->fd };
	uint64_t t_fs = t + lognormal_ns(&s->rng, 700, 0.3);
	uint64_t t_queue = t_fs + lognormal_ns(&s->rng, 900, 0.3);
	int merge = pick_merge(s, p, th->proc, ST_OP_READ, len, t_queue, &pos);

	if (req_slot == UINT32_MAX)
		s->err = ST_ENOMEM;
	emit_uring(s, ST_EV_io_uring_submit_req, t, who, &u);
	emit_fs(s, ST_EV_iomap_dio_rw_begin, t_fs, who, p, pos, len, 0, IOCB_DIRECT_FLAG);
	*next = t_queue + lognormal_ns(&s->rng, 600, 0.3);
	t = data_block_io(s, who, th->proc, pos, len, ST_OP_READ, t_queue, merge);
	t += lognormal_ns(&s->rng, 1500, 0.3);
	emit_fs(s, ST_EV_iomap_dio_complete, t, irq_who(&s->devs[p->dev]), p, pos, len, len,
		IOCB_DIRECT_FLAG);
	t += lognormal_ns(&s->rng, 1500, 0.3);
	u.res = (int32_t)len;
	u.opcode = 0;
	u.fd = 0;
	emit_uring(s, ST_EV_io_uring_complete, t, who, &u);
	id_release(&p->reqs, req_slot, t);
	s->ios_done++;
	return t;
}

/* io_uring_enter submitting a batch and waiting for all of it. */
static uint64_t uring_batch(struct synth *s, struct synth_thread *th, uint64_t t)
{
	const struct synth_proc *p = &s->procs[th->proc];
	struct who who = thread_who(s, th);
	uint64_t left = s->o->ios - s->ios_done;
	uint32_t n = left < URING_BATCH ? (uint32_t)left : URING_BATCH;
	uint64_t last = t, next = t + lognormal_ns(&s->rng, 800, 0.3);

	emit_enter(s, ST_EV_sys_enter_io_uring_enter, t, who, p->ring_fd, n, -1,
		   IORING_ENTER_GETEVENTS_VALUE);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t c = uring_req(s, th, next, &next);

		last = c > last ? c : last;
	}
	last += lognormal_ns(&s->rng, 1000, 0.3);
	emit_exit(s, ST_EV_sys_exit_io_uring_enter, last, who, n);
	return last;
}

/* Run the thread's next operation; returns when the thread is done with it. */
static uint64_t thread_op(struct synth *s, struct synth_thread *th)
{
	const struct synth_proc *p = &s->procs[th->proc];
	uint64_t t = th->next_start;

	if (rng_chance(&s->rng, P_MIGRATE))
		th->cpu = (uint32_t)rng_below(&s->rng, s->o->cpus);
	switch (p->kind) {
	case PK_DB:
		if (rng_chance(&s->rng, P_FSYNC))
			return fsync_op(s, th, t);
		return sync_io(s, th, rng_chance(&s->rng, 0.35), t);
	case PK_URING:
		return uring_batch(s, th, t);
	default:
		return sync_io(s, th, 0, t);
	}
}

static uint64_t think_time(struct synth *s)
{
	if (rng_chance(&s->rng, P_PAUSE))
		return 1000000 + rng_below(&s->rng, 4000000);
	return lognormal_ns(&s->rng, LAT_THINK, 1.0);
}

/* ---- Setup and metadata ------------------------------------------------ */

static int set_meta(struct synth *s, const char *key, const char *value)
{
	int rc = st_writer_set_meta(s->w, key, value);

	if (rc && !s->err)
		s->err = rc;
	return rc;
}

static void set_meta_u64(struct synth *s, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	set_meta(s, key, buf);
}

static void devt_str(uint32_t devt, char *buf, size_t cap)
{
	snprintf(buf, cap, "%u:%u", devt >> 20, devt & 0xfffffu);
}

static int setup_devices(struct synth *s)
{
	static const char *const models[] = { "Virtio Block Device", "Samsung SSD 980 PRO 1TB" };

	s->devs = calloc(s->o->devices, sizeof(*s->devs));
	if (!s->devs)
		return ST_ENOMEM;
	for (unsigned i = 0; i < s->o->devices; i++) {
		struct synth_dev *d = &s->devs[i];

		d->sched = i % 2 == 0;
		if (d->sched) {
			d->devt = (254u << 20) | (16u * (i / 2));
			snprintf(d->name, sizeof(d->name), "vd%c", 'a' + i / 2);
		} else {
			d->devt = (259u << 20) | (i / 2);
			snprintf(d->name, sizeof(d->name), "nvme%un1", i / 2);
		}
		d->model = models[i % 2];
		d->irq_cpu = (s->o->cpus - 1 - i % s->o->cpus);
		if (id_pool_init(&d->tags, 0xffff888110000000ull + ((uint64_t)i << 24), 0x180, 256))
			return ST_ENOMEM;
	}
	return 0;
}

static int setup_procs(struct synth *s)
{
	unsigned t = 0;

	s->procs = calloc(s->o->procs, sizeof(*s->procs));
	if (!s->procs)
		return ST_ENOMEM;
	for (unsigned i = 0; i < s->o->procs; i++) {
		struct synth_proc *p = &s->procs[i];

		p->kind = (enum proc_kind)(i % PK_KINDS);
		p->pid = 1200 + 50 * i;
		p->dev = i % s->o->devices;
		p->fd = kinds[p->kind].on_file ? 5 : 3;
		p->ring_fd = 6;
		p->ring_ctx = 0xffff888120000000ull + ((uint64_t)i << 20);
		if (kinds[p->kind].on_file) {
			p->ino = 12 + 1000 * (uint64_t)i;
			p->base_sector = (1 + i / s->o->devices) * (FILE_BYTES / 512);
			p->size = FILE_BYTES;
			snprintf(p->path, sizeof(p->path), "/srv/%s/%s.%u.dat",
				 s->devs[p->dev].name, kinds[p->kind].comm, i);
		} else {
			p->size = DEV_SECTORS * 512;
			snprintf(p->path, sizeof(p->path), "/dev/%s", s->devs[p->dev].name);
		}
		if (id_pool_init(&p->reqs, 0xffff888130000000ull + ((uint64_t)i << 20), 0x100, 64))
			return ST_ENOMEM;
		s->nthreads += kinds[p->kind].threads;
	}
	s->threads = calloc(s->nthreads, sizeof(*s->threads));
	if (!s->threads)
		return ST_ENOMEM;
	for (unsigned i = 0; i < s->o->procs; i++)
		for (unsigned k = 0; k < kinds[s->procs[i].kind].threads; k++, t++)
			s->threads[t] = (struct synth_thread){ .tid = s->procs[i].pid + k, .proc = i,
							       .cpu = t % s->o->cpus };
	return 0;
}

static void options_json(struct synth *s)
{
	const struct synth_opts *o = s->o;
	struct json_object *j = json_object_new_object();

	if (!j) {
		s->err = ST_ENOMEM;
		return;
	}
	json_object_object_add(j, "ios", json_object_new_uint64(o->ios));
	json_object_object_add(j, "seed", json_object_new_uint64(o->seed));
	json_object_object_add(j, "devices", json_object_new_uint64(o->devices));
	json_object_object_add(j, "procs", json_object_new_uint64(o->procs));
	json_object_object_add(j, "cpus", json_object_new_uint64(o->cpus));
	json_object_object_add(j, "chunk_size", json_object_new_uint64(o->chunk_size));
	json_object_object_add(j, "zstd_level", json_object_new_int(o->zstd_level));
	json_object_object_add(j, "slow_factor", json_object_new_double(o->slow_factor));
	json_object_object_add(j, "lost", json_object_new_uint64(o->lost));
	if (o->skipped)	/* only when set: older files keep their bytes */
		json_object_object_add(j, "skipped", json_object_new_uint64(o->skipped));
	set_meta(s, "options", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
	json_object_put(j);
}

/* The command that regenerates this file (without -o, so the bytes do not depend on it). */
static void command_line(struct synth *s)
{
	const struct synth_opts *o = s->o;
	char buf[256];
	int n = snprintf(buf, sizeof(buf),
			 "st-format synth --ios %" PRIu64 " --seed %" PRIu64 " --devices %u --procs %u"
			 " --cpus %u --chunk-size %zu -z %d --slow-factor %g --lost %" PRIu64,
			 o->ios, o->seed, o->devices, o->procs, o->cpus, o->chunk_size, o->zstd_level,
			 o->slow_factor, o->lost);

	if (o->skipped && n > 0 && (size_t)n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - (size_t)n, " --skipped %" PRIu64, o->skipped);
	set_meta(s, "command_line", buf);
}

static void host_metadata(struct synth *s)
{
	char key[64], value[160];

	set_meta(s, "tool", "st-format synth " ST_VERSION);
	command_line(s);
	options_json(s);
	set_meta(s, "kernel.release", "6.18.0-synth");
	set_meta(s, "host.name", "synth");
	set_meta_u64(s, "cpu.count", s->o->cpus);
	snprintf(value, sizeof(value), "%lld",
		 REALTIME_START_NS - (long long)EVENT_CLOCK_START_NS);
	set_meta(s, "clock.realtime_offset_ns", value);
	set_meta_u64(s, "record.start_ts", EVENT_CLOCK_START_NS);
	for (unsigned i = 0; i < s->o->devices; i++) {
		const struct synth_dev *d = &s->devs[i];
		char devt[24];

		devt_str(d->devt, devt, sizeof(devt));
		snprintf(key, sizeof(key), "dev.%s", devt);
		snprintf(value, sizeof(value),
			 "name=%s;sector_size=512;scheduler=%s;rotational=0;model=%s", d->name,
			 d->sched ? "mq-deadline" : "none", d->model);
		set_meta(s, key, value);
	}
	set_meta(s, "pid.0", "swapper");
	snprintf(key, sizeof(key), "pid.%u", KWORKER_PID);
	set_meta(s, key, "kworker/u16:1H");
}

static void proc_metadata(struct synth *s, const struct synth_proc *p)
{
	char key[96], devt[24];

	snprintf(key, sizeof(key), "pid.%u", p->pid);
	set_meta(s, key, kinds[p->kind].comm);
	snprintf(key, sizeof(key), "fd.%u.%d", p->pid, p->fd);
	set_meta(s, key, p->path);
	if (p->ino) {
		devt_str(s->devs[p->dev].devt, devt, sizeof(devt));
		snprintf(key, sizeof(key), "inode.%s.%" PRIu64, devt, p->ino);
		set_meta(s, key, p->path);
	}
	if (p->kind == PK_URING) {
		snprintf(key, sizeof(key), "fd.%u.%d", p->pid, p->ring_fd);
		set_meta(s, key, "anon_inode:[io_uring]");
	}
}

/* Each process execs and opens its file; its threads start after that. */
static void proc_start(struct synth *s, unsigned i, uint64_t t)
{
	const struct synth_proc *p = &s->procs[i];
	struct who who = { p->pid, p->pid, i % s->o->cpus };
	uint32_t idx;
	union synth_rec *rec;

	proc_metadata(s, p);
	rec = event_new(s, ST_EV_sched_process_exec, sizeof(struct st_ev_task), t, who, &idx);
	rec->task.p.other_pid = p->pid;
	snprintf(rec->task.p.comm, sizeof(rec->task.p.comm), "%s", kinds[p->kind].comm);
	rec = event_new(s, ST_EV_sys_enter_openat, sizeof(struct st_ev_sys_enter_openat), t + 10000,
			who, &idx);
	rec->openat.p.dfd = AT_FDCWD_VALUE;
	rec->openat.p.flags = OPEN_FLAGS;
	snprintf(rec->openat.p.filename, sizeof(rec->openat.p.filename), "%s", p->path);
	rec = event_new(s, ST_EV_sys_exit_openat, sizeof(struct st_ev_sys_exit_openat), t + 25000,
			who, &idx);
	rec->opened.p = (struct st_sys_exit_openat){ .ret = p->fd, .ino = p->ino,
						     .dev = s->devs[p->dev].devt };
	rec->opened.p.name_len = snprintf(rec->opened.p.filename, sizeof(rec->opened.p.filename),
					  "%s", p->path) + 1;
}

static int setup(struct synth *s)
{
	uint64_t t0 = EVENT_CLOCK_START_NS + 5000;
	int rc;

	rng_seed(&s->rng, s->o->seed);
	if ((rc = setup_devices(s)) || (rc = setup_procs(s)))
		return rc;
	if (id_pool_init(&s->bios, 0xffff888100000000ull, 0x100, 4096))
		return ST_ENOMEM;
	host_metadata(s);
	for (unsigned i = 0; i < s->o->procs; i++)
		proc_start(s, i, t0 + 50000ull * i);
	t0 += 50000ull * s->o->procs + 100000;
	for (unsigned i = 0; i < s->nthreads && !s->err; i++) {
		s->threads[i].next_start = t0 + rng_below(&s->rng, 50000);
		s->err = heap_push(&s->runq, s->threads[i].next_start, i);
	}
	return s->err;
}

/* ---- Main loop --------------------------------------------------------- */

/* Hand every event that drains before `limit` to the writer. */
static void drain_until(struct synth *s, uint64_t limit)
{
	while (s->out.n && s->out.v[0].key < limit && !s->err) {
		struct heap_item it = heap_pop(&s->out);
		union synth_rec *rec = slot_at(&s->slots, it.idx);

		s->err = st_writer_append(s->w, rec, rec->h.size);
		if (rec->h.ts > s->last_ts)
			s->last_ts = rec->h.ts;
		s->events++;
		s->slots.free[s->slots.nfree++] = it.idx;
	}
}

/*
 * The kernel side's losses so far, as a recorder reads them while it runs:
 * each CPU's share of --lost (and --skipped) grows with the I/Os done, so
 * LOST chunks go out during the file, and a file cut anywhere reports the
 * losses up to its last one.
 */
static uint64_t share_so_far(const struct synth *s, uint64_t total)
{
	uint64_t done = s->ios_done < s->o->ios ? s->ios_done : s->o->ios;

	if (!s->o->ios)
		return total;
	return (uint64_t)((unsigned __int128)total * done / s->o->ios);
}

static void set_lost_so_far(struct synth *s)
{
	uint64_t per_cpu = s->o->lost / s->o->cpus, extra = s->o->lost % s->o->cpus;
	uint64_t skipped = share_so_far(s, s->o->skipped);

	for (uint32_t cpu = 0; cpu < s->o->cpus && !s->err; cpu++) {
		uint64_t n = share_so_far(s, per_cpu + (cpu < extra));

		if (n)
			s->err = st_writer_set_lost(s->w, cpu, n);
	}
	if (skipped && !s->err)
		s->err = st_writer_set_lost(s->w, ST_LOST_ANY_CPU, skipped);
}

static void run(struct synth *s)
{
	while (s->ios_done < s->o->ios && !s->err) {
		struct heap_item it = heap_pop(&s->runq);
		struct synth_thread *th = &s->threads[it.idx];

		drain_until(s, th->next_start);
		th->next_start = thread_op(s, th) + think_time(s);
		set_lost_so_far(s);
		if (!s->err)
			s->err = heap_push(&s->runq, th->next_start, it.idx);
	}
	drain_until(s, UINT64_MAX);
}

static void finish(struct synth *s)
{
	set_lost_so_far(s);
	set_meta_u64(s, "record.end_ts", s->last_ts + 1000);
}

static void synth_free(struct synth *s)
{
	for (unsigned i = 0; s->devs && i < s->o->devices; i++)
		free(s->devs[i].tags.busy_until);
	for (unsigned i = 0; s->procs && i < s->o->procs; i++)
		free(s->procs[i].reqs.busy_until);
	free(s->devs);
	free(s->procs);
	free(s->threads);
	free(s->bios.busy_until);
	free(s->out.v);
	free(s->runq.v);
	slots_free(&s->slots);
}

void synth_opts_init(struct synth_opts *o)
{
	*o = (struct synth_opts){ .seed = 1, .devices = 2, .procs = 4, .cpus = 8,
				  .slow_factor = 1.0 };
}

static int check_opts(const struct synth_opts *o, char *err, size_t cap)
{
	if (o->devices < 1 || o->devices > MAX_DEVICES || o->procs < 1 || o->procs > MAX_PROCS ||
	    o->cpus < 1 || o->cpus > 4096 || !(o->slow_factor > 0 && o->slow_factor <= 1e6)) {
		snprintf(err, cap, "bad synth options: devices 1-%u, procs 1-%u, cpus 1-4096, "
			 "slow factor in (0, 1e6]", MAX_DEVICES, MAX_PROCS);
		return ST_EINVAL;
	}
	return 0;
}

int synth_write(const struct synth_opts *o, const char *path, struct synth_result *res,
		char *err, size_t cap)
{
	struct st_writer_opts wo = { .chunk_size = o->chunk_size, .zstd_level = o->zstd_level };
	struct synth s = { .o = o };
	int rc;

	if ((rc = check_opts(o, err, cap)))
		return rc;
	rc = st_writer_open(&s.w, path, &wo);
	if (rc) {
		snprintf(err, cap, "%s", s.w ? st_writer_errmsg(s.w) : st_strerror(rc));
		if (s.w)
			st_writer_close(s.w, NULL, 0);
		return rc;
	}
	s.err = st_writer_add_builtin_types(s.w);
	if (!s.err)
		s.err = setup(&s);
	if (!s.err)
		run(&s);
	if (!s.err)
		finish(&s);
	rc = st_writer_close(s.w, err, cap);
	if (s.err) {
		if (!rc || !*err)
			snprintf(err, cap, "%s", st_strerror(s.err));
		rc = s.err;
	}
	*res = (struct synth_result){ s.ios_done, s.events };
	synth_free(&s);
	return rc;
}
