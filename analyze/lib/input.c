/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/input.h"
#include "analyze/lib/pool.h"

/* Copy one field of a file's record into the built-in layout. */
struct copy_op {
	uint16_t dst, src;	/* offsets */
	uint16_t count;		/* elements */
	uint8_t dsz, ssz;	/* element sizes */
	uint8_t sign;		/* sign-extend the source */
};

/* How records of one stored type become built-in records. */
struct adapter {
	uint16_t id;		/* built-in type id */
	uint16_t size;		/* built-in record size */
	uint16_t file_size;	/* stored record size */
	uint8_t identity;	/* same layout: pass the record through */
	uint16_t nops;
	struct copy_op *ops;
};

#define MAX_RECORD 1024
#define NO_ADAPTER 0xff

/*
 * Records held back for time order: the stage events a stamped issue
 * stands for are dated before it, so a file that has them is read through
 * a window of REORDER_NS of event time and handed out sorted by (ts, seq),
 * seq the order they were held in. What the file gives comes in time order
 * (the cursor's promise) and waits in a FIFO of bytes, copied once, never
 * allocated per record; only the dated-back stage events, and any record
 * behind the FIFO's newest, wait in a heap. The earlier of the two heads
 * goes out first, so the order is the one a single sort would give.
 */
struct held {
	uint64_t ts, seq;
	uint32_t slot;		/* in the reorder's slots */
};

/* A heap record: a stage event made here, or a copy of a record the file gave late. */
struct held_rec {
	struct st_ev_block_bio bio;
	struct st_event_header *copy;	/* malloc'd, or NULL: the record is bio */
};

/* A FIFO entry: its sequence number, then the record (sizes are multiples of 8). */
struct fifo_head {
	uint64_t seq;
};

#define REORDER_NS 100000000ull	/* stamps older than this before their issue come late */
#define REQUEUED_MAX 64		/* requeued requests awaiting their issue; the oldest give way */
#define SEEN_SLOTS 1024	/* bios and requests remembered, a power of two; a collision forgets one */

/* A bio address and the time of the last event of its life: its request's issue or completion. */
struct bio_seen {
	uint64_t bio, ts;
};

/*
 * A request's stored bios, from its stamped issue, for its completion; the
 * first of those past them (the request's address + 1) stands for them all.
 */
struct rq_seen {
	uint64_t rq, bios[ST_RQ_BIOS + 1];
};

/* What a compact completion leaves to its request's issue. */
struct issued_rq {
	uint32_t link;		/* the pool's free list */
	uint32_t dev, opf;
	uint32_t bytes, done;	/* the request's bytes, and those completed so far */
	uint64_t sector, bio;
};

/* The issued requests of a file with compact completions, by address. */
struct issued {
	struct an_idmap map;	/* rq -> rqs */
	struct an_pool rqs;
};

struct reorder {
	uint8_t *fifo;			/* entries from fifo_out to fifo_in, in a ring */
	size_t fifo_out, fifo_in, fifo_end, fifo_cap;
	int fifo_wrapped;		/* fifo_in has started again at the front */
	uint64_t fifo_newest;		/* ts of the FIFO's last entry */
	struct held *heap;
	size_t n, cap;
	struct an_pool slots;		/* struct held_rec */
	uint64_t seq, newest;		/* next sequence number; latest ts read from the file */
	uint32_t out_slot;		/* the heap slot returned last + 1, released at the next
					   call; 0 none */
};

struct file_in {
	const char *path;
	struct st_reader *r;
	struct st_cursor *c;
	/*
	 * Stored type id -> the size from which its records pass through as
	 * they are (the built-in layout); UINT16_MAX, which no record size
	 * reaches (they are multiples of 8), when the type is adapted or unknown.
	 */
	uint16_t pass_min[65536];
	uint8_t slot[65536];	/* stored type id -> adapters[] index, NO_ADAPTER */
	struct adapter adapters[NO_ADAPTER];
	unsigned nadapters;
	const struct st_event_header *cur;	/* current event, NULL at the end */
	/*
	 * block_rq_issue_stamped (the `block` preset) stands for the stages the
	 * kernel stamped: it becomes the block_bio_queue, block_bio_backmerge and
	 * block_getrq events that the file lacks, then a block_rq_issue.
	 */
	uint8_t synth_queue, synth_getrq;	/* the file has none of that type */
	uint8_t synth_merge;	/* the file has no bio merge events */
	uint8_t stamped;	/* the file has stamped issues: read through ro */
	uint8_t stamped_ok;	/* 0: the file has block_rq_issue, the stamped ones are dropped */
	struct reorder ro;
	/* requests requeued and not issued again: their next issue stands for no stage event */
	uint64_t requeued[REQUEUED_MAX];
	unsigned nrequeued;
	/*
	 * Recent bio addresses: a freed bio's address is handed out again at
	 * once, and a request taken from a plug's cache carries the plug's
	 * cached clock as its allocation stamp, older than its bio may be. A
	 * bio's synthesized stages are dated no earlier than the end of its
	 * address's previous life (its request's completion), whose events
	 * would otherwise take them.
	 */
	struct bio_seen bio_seen[SEEN_SLOTS];
	struct rq_seen rq_seen[SEEN_SLOTS];
	/*
	 * block_rq_complete_compact (the `block` preset) leaves the request's
	 * position, op and bios to its issue: it becomes the block_rq_complete
	 * it stands for, from the request's last issue.
	 */
	uint8_t compact;	/* the file has compact completions */
	struct issued issued;
	struct st_ev_block_rq_complete whole;	/* the last one made whole */
	uint64_t scratch[MAX_RECORD / 8];	/* adapted record */
};

struct an_input {
	struct file_in *files;
	/* the fds' bindings start over with each pass; a live file's metadata grows */
	struct an_names *names;
	int nfiles;
	int advance;		/* index of the file whose event was returned last, -1 */
	struct an_input_info info;
};

static int same_layout(const struct st_type *b, const struct st_type *t)
{
	unsigned i;

	if (b->size != t->size)
		return 0;
	for (i = 0; i < b->nfields; i++) {
		const struct st_field *bf = &b->fields[i], *tf = st_field_find(t, bf->name);

		if (!tf || tf->offset != bf->offset || tf->size != bf->size ||
		    tf->elem_size != bf->elem_size)
			return 0;
	}
	return 1;
}

static int plan_copy(struct adapter *a, const struct st_type *b, const struct st_type *t)
{
	unsigned i;

	a->ops = calloc(b->nfields, sizeof(*a->ops));
	if (!a->ops)
		return -1;
	for (i = 0; i < b->nfields; i++) {
		const struct st_field *bf = &b->fields[i], *tf = st_field_find(t, bf->name);
		struct copy_op *op = &a->ops[a->nops];
		unsigned n;

		/* A field the file lacks (or stores oddly or out of bounds) stays 0. */
		if (!tf || (tf->elem_size != 1 && tf->elem_size != 2 && tf->elem_size != 4 &&
			    tf->elem_size != 8) || tf->size % tf->elem_size ||
		    (unsigned)tf->offset + tf->size > t->size)
			continue;
		n = tf->size / tf->elem_size;
		if (n > bf->size / bf->elem_size)
			n = bf->size / bf->elem_size;
		*op = (struct copy_op){ .dst = bf->offset, .src = tf->offset, .count = (uint16_t)n,
					.dsz = bf->elem_size, .ssz = tf->elem_size,
					.sign = tf->type == ST_FT_INT };
		a->nops++;
	}
	return 0;
}

static uint64_t load(const uint8_t *p, unsigned size, int sign)
{
	switch (size) {
	case 1: return sign ? (uint64_t)(int64_t)*(const int8_t *)p : *p;
	case 2: { uint16_t v; memcpy(&v, p, 2); return sign ? (uint64_t)(int64_t)(int16_t)v : v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return sign ? (uint64_t)(int64_t)(int32_t)v : v; }
	default: { uint64_t v; memcpy(&v, p, 8); return v; }
	}
}

static void store(uint8_t *p, unsigned size, uint64_t v)
{
	switch (size) {
	case 1: *p = (uint8_t)v; break;
	case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
	case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
	default: memcpy(p, &v, 8); break;
	}
}

/* Cold: the pass-through path around it stays short. */
static __attribute__((cold)) const struct st_event_header *
adapt(struct file_in *f, const struct adapter *a, const struct st_event_header *h)
{
	uint8_t *dst = (uint8_t *)f->scratch;
	const uint8_t *src = (const uint8_t *)h;
	unsigned i, k;

	memset(dst, 0, a->size);
	for (i = 0; i < a->nops; i++) {
		const struct copy_op *op = &a->ops[i];

		for (k = 0; k < op->count; k++)
			store(dst + op->dst + k * op->dsz, op->dsz,
			      load(src + op->src + k * op->ssz, op->ssz, op->sign));
	}
	((struct st_event_header *)dst)->type = a->id;
	((struct st_event_header *)dst)->size = a->size;
	return (const struct st_event_header *)dst;
}

/* Resolve the file's schema against the built-in types, once. */
static int plan_file(struct file_in *f)
{
	size_t i, n = st_type_count(f->r), nb;
	const struct st_type *builtin = st_builtin_types(&nb);

	memset(f->pass_min, 0xff, sizeof(f->pass_min));
	memset(f->slot, NO_ADAPTER, sizeof(f->slot));
	for (i = 0; i < n && f->nadapters < NO_ADAPTER; i++) {
		const struct st_type *t = st_type_at(f->r, i), *b = NULL;
		struct adapter *a = &f->adapters[f->nadapters];
		size_t k;

		for (k = 0; k < nb && !b; k++)
			if (!strcmp(builtin[k].name, t->name))
				b = &builtin[k];
		if (!b || b->size > MAX_RECORD)
			continue;
		memset(a, 0, sizeof(*a));
		a->id = b->id;
		a->size = b->size;
		a->file_size = t->size;
		a->identity = b->id == t->id && same_layout(b, t);
		if (!a->identity && plan_copy(a, b, t))
			return -1;
		if (a->identity)
			f->pass_min[t->id] = t->size;
		f->slot[t->id] = (uint8_t)f->nadapters++;
	}
	return 0;
}

/* Events of built-in type id stored in file f (footer counts, or scan counts). */
static uint64_t file_type_events(const struct file_in *f, uint16_t id)
{
	size_t k, ntypes = st_type_count(f->r);
	uint64_t n = 0;

	for (k = 0; k < ntypes; k++) {
		uint16_t stored = st_type_at(f->r, k)->id;

		if (f->slot[stored] != NO_ADAPTER && f->adapters[f->slot[stored]].id == id)
			n += st_type_events(f->r, stored);
	}
	return n;
}

/* Which stage events the file's stamped issues stand for: those it lacks. */
static void plan_stamped(struct file_in *f)
{
	f->stamped = file_type_events(f, ST_EV_block_rq_issue_stamped) != 0;
	f->stamped_ok = !file_type_events(f, ST_EV_block_rq_issue);
	f->synth_queue = !file_type_events(f, ST_EV_block_bio_queue);
	f->synth_getrq = !file_type_events(f, ST_EV_block_getrq);
	f->synth_merge = !file_type_events(f, ST_EV_block_bio_backmerge) &&
			 !file_type_events(f, ST_EV_block_bio_frontmerge);
	f->compact = file_type_events(f, ST_EV_block_rq_complete_compact) != 0;
}

static void info_add(struct an_input_info *info, const struct st_reader *r)
{
	const struct st_file_info *fi = st_reader_info(r);
	uint64_t start = st_trace_start(r);

	if (!info->files || start < info->start_ts)
		info->start_ts = start;
	info->events += fi->events;
	info->lost_events += fi->lost_events;
	info->recovered += fi->recovered != 0;
	if (fi->events && (!info->first_ts || fi->first_ts < info->first_ts))
		info->first_ts = fi->first_ts;
	if (fi->last_ts > info->last_ts)
		info->last_ts = fi->last_ts;
}

/* ---- records held back for time order --------------------------------- */

static int held_before(const struct held *a, const struct held *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

static void reorder_init(struct reorder *ro)
{
	an_pool_init(&ro->slots, sizeof(struct held_rec));
}

static const struct fifo_head *fifo_first(const struct reorder *ro)
{
	if (!ro->fifo_wrapped && ro->fifo_out == ro->fifo_in)
		return NULL;
	return (const struct fifo_head *)(ro->fifo + ro->fifo_out);
}

/*
 * The FIFO is a ring of whole entries: one that does not fit before the
 * buffer's end starts again at its front (fifo_end marks where the older
 * entries stop), and a full ring grows, its entries laid out in order.
 */
static int fifo_grow(struct reorder *ro, size_t need)
{
	size_t used = ro->fifo_wrapped ? ro->fifo_end - ro->fifo_out + ro->fifo_in :
					 ro->fifo_in - ro->fifo_out;
	size_t cap = ro->fifo_cap ? ro->fifo_cap : 65536;
	uint8_t *p;

	/* doubled until half as large again as what it holds: a third or more free after */
	while (cap < (used + need) * 3 / 2)
		cap *= 2;
	if (!(p = malloc(cap)))
		return -1;
	if (ro->fifo_wrapped) {
		memcpy(p, ro->fifo + ro->fifo_out, ro->fifo_end - ro->fifo_out);
		memcpy(p + ro->fifo_end - ro->fifo_out, ro->fifo, ro->fifo_in);
	} else if (used) {
		memcpy(p, ro->fifo + ro->fifo_out, used);
	}
	free(ro->fifo);
	ro->fifo = p;
	ro->fifo_cap = cap;
	ro->fifo_out = 0;
	ro->fifo_in = used;
	ro->fifo_wrapped = 0;
	return 0;
}

static int fifo_push(struct reorder *ro, const struct st_event_header *h)
{
	size_t need = sizeof(struct fifo_head) + ((h->size + 7u) & ~7u);
	struct fifo_head fh = { .seq = ro->seq++ };

	if (!fifo_first(ro))
		ro->fifo_out = ro->fifo_in = 0;
	if (ro->fifo_wrapped ? ro->fifo_in + need >= ro->fifo_out : ro->fifo_in + need > ro->fifo_cap) {
		if (!ro->fifo_wrapped && need < ro->fifo_out) {
			ro->fifo_end = ro->fifo_in;
			ro->fifo_in = 0;
			ro->fifo_wrapped = 1;
		} else if (fifo_grow(ro, need)) {
			return -1;
		}
	}
	memcpy(ro->fifo + ro->fifo_in, &fh, sizeof(fh));
	memcpy(ro->fifo + ro->fifo_in + sizeof(fh), h, h->size);
	ro->fifo_in += need;
	ro->fifo_newest = h->ts;
	return 0;
}

/* Past the first entry, whose record is h. */
static void fifo_skip(struct reorder *ro, const struct st_event_header *h)
{
	ro->fifo_out += sizeof(struct fifo_head) + ((h->size + 7u) & ~7u);
	if (ro->fifo_wrapped && ro->fifo_out == ro->fifo_end) {
		ro->fifo_out = 0;
		ro->fifo_wrapped = 0;
	}
}

static const struct st_event_header *fifo_record(const struct fifo_head *fh)
{
	return (const struct st_event_header *)(fh + 1);
}

static int heap_push(struct reorder *ro, const struct st_event_header *h)
{
	struct held e = { .ts = h->ts, .seq = ro->seq++ };
	struct held_rec *rec;
	size_t i;

	if (ro->n == ro->cap) {
		size_t cap = ro->cap ? ro->cap * 2 : 256;
		struct held *nh = realloc(ro->heap, cap * sizeof(*nh));

		if (!nh)
			return -1;
		ro->heap = nh;
		ro->cap = cap;
	}
	if ((e.slot = an_pool_get(&ro->slots)) == AN_NONE)
		return -1;
	rec = AN_POOL_AT(&ro->slots, struct held_rec, e.slot);
	rec->copy = NULL;
	if (h->size <= sizeof(rec->bio)) {
		memcpy(&rec->bio, h, h->size);
	} else if ((rec->copy = malloc(h->size))) {
		memcpy(rec->copy, h, h->size);
	} else {
		an_pool_put(&ro->slots, e.slot);
		return -1;
	}
	for (i = ro->n++; i && held_before(&e, &ro->heap[(i - 1) / 2]); i = (i - 1) / 2)
		ro->heap[i] = ro->heap[(i - 1) / 2];
	ro->heap[i] = e;
	return 0;
}

static uint32_t heap_pop(struct reorder *ro)
{
	uint32_t top = ro->heap[0].slot;
	struct held last = ro->heap[--ro->n];
	size_t i = 0, child;

	while ((child = 2 * i + 1) < ro->n) {
		if (child + 1 < ro->n && held_before(&ro->heap[child + 1], &ro->heap[child]))
			child++;
		if (!held_before(&ro->heap[child], &last))
			break;
		ro->heap[i] = ro->heap[child];
		i = child;
	}
	if (ro->n)
		ro->heap[i] = last;
	return top;
}

static const struct st_event_header *slot_record(struct reorder *ro, uint32_t slot)
{
	struct held_rec *rec = AN_POOL_AT(&ro->slots, struct held_rec, slot);

	return rec->copy ? rec->copy : &rec->bio.h;
}

static void slot_release(struct reorder *ro, uint32_t slot)
{
	struct held_rec *rec = AN_POOL_AT(&ro->slots, struct held_rec, slot);

	free(rec->copy);
	rec->copy = NULL;
	an_pool_put(&ro->slots, slot);
}

/* Hold a record: in the FIFO when it is not behind its newest, else in the heap. */
static int reorder_push(struct reorder *ro, const struct st_event_header *h)
{
	return h->ts >= ro->fifo_newest ? fifo_push(ro, h) : heap_push(ro, h);
}

/* The time of the earliest record held in *ts; 0 when none is held. */
static int reorder_first(const struct reorder *ro, uint64_t *ts)
{
	const struct fifo_head *fh = fifo_first(ro);

	if (!fh && !ro->n)
		return 0;
	*ts = fh ? fifo_record(fh)->ts : UINT64_MAX;
	if (ro->n && ro->heap[0].ts < *ts)
		*ts = ro->heap[0].ts;
	return 1;
}

/* Hand out the earliest record held: valid until the next call on ro. */
static const struct st_event_header *reorder_pop(struct reorder *ro)
{
	const struct fifo_head *fh = fifo_first(ro);
	struct held fifo_key;

	if (fh) {
		fifo_key = (struct held){ .ts = fifo_record(fh)->ts, .seq = fh->seq };
		if (!ro->n || held_before(&fifo_key, &ro->heap[0])) {
			fifo_skip(ro, fifo_record(fh));
			return fifo_record(fh);
		}
	}
	ro->out_slot = heap_pop(ro) + 1;
	return slot_record(ro, ro->out_slot - 1);
}

/* Let go of the record handed out last. */
static void reorder_done(struct reorder *ro)
{
	if (ro->out_slot)
		slot_release(ro, ro->out_slot - 1);
	ro->out_slot = 0;
}

static void reorder_clear(struct reorder *ro)
{
	reorder_done(ro);
	while (ro->n)
		slot_release(ro, heap_pop(ro));
	ro->fifo_out = ro->fifo_in = 0;
	ro->fifo_wrapped = 0;
	ro->fifo_newest = 0;
	ro->newest = 0;
}

static void reorder_free(struct reorder *ro)
{
	reorder_clear(ro);
	free(ro->heap);
	free(ro->fifo);
	an_pool_free(&ro->slots);
}

int an_input_open(struct an_input **inp, char *const *paths, int npaths, struct an_names *names,
		  char *err, size_t cap)
{
	struct an_input *in = calloc(1, sizeof(*in));
	int i;

	*inp = in;
	if (!in || !(in->files = calloc((size_t)npaths, sizeof(*in->files)))) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	in->advance = -1;
	in->names = names;
	for (i = 0; i < npaths; i++) {
		struct file_in *f = &in->files[i];

		f->path = paths[i];
		in->nfiles++;
		if (st_reader_open(&f->r, f->path, 0)) {
			snprintf(err, cap, "%s: %s", f->path, st_reader_errmsg(f->r));
			return -1;
		}
		if (plan_file(f) || an_names_load_meta(names, f->r)) {
			snprintf(err, cap, "%s: out of memory", f->path);
			return -1;
		}
		plan_stamped(f);
		reorder_init(&f->ro);
		an_pool_init(&f->issued.rqs, sizeof(struct issued_rq));
		info_add(&in->info, f->r);
		in->info.files++;
	}
	return 0;
}

/* ---- stamped issues: the stage events they stand for, in time order ---- */

/* A bio event dated ts on behalf of the issue event e. */
static int push_bio(struct reorder *ro, const struct st_ev_block_rq_issue_stamped *e, uint16_t type,
		    uint64_t ts, uint64_t bio, uint64_t sector, uint32_t nr_sector)
{
	struct st_ev_block_bio b = {
		.h = e->h,
		.p = { .bio = bio, .sector = sector, .dev = e->p.dev, .nr_sector = nr_sector,
		       .opf = e->p.opf },
	};

	b.h.type = type;
	b.h.size = sizeof(b);
	b.h.ts = ts;
	return reorder_push(ro, &b.h);
}

/* A requeued request (rq_requeue) is issued again: remember it until then. */
static void note_requeue(struct file_in *f, uint64_t rq)
{
	if (f->nrequeued == REQUEUED_MAX)
		memmove(f->requeued, f->requeued + 1, --f->nrequeued * sizeof(*f->requeued));
	f->requeued[f->nrequeued++] = rq;
}

/* Whether rq's issue is a requeued request's; forgets it. */
static int take_requeued(struct file_in *f, uint64_t rq)
{
	unsigned i;

	for (i = 0; i < f->nrequeued; i++)
		if (f->requeued[i] == rq) {
			f->requeued[i] = f->requeued[--f->nrequeued];
			return 1;
		}
	return 0;
}

/* Fibonacci hashing spreads kernel addresses, which share their low bits. */
static size_t seen_slot(uint64_t addr)
{
	return (addr * 0x9e3779b97f4a7c15ull) >> 32 & (SEEN_SLOTS - 1);
}

static struct bio_seen *bio_seen_slot(struct file_in *f, uint64_t bio)
{
	return &f->bio_seen[seen_slot(bio)];
}

static void note_bio(struct file_in *f, uint64_t bio, uint64_t ts)
{
	struct bio_seen *s = bio_seen_slot(f, bio);

	if (bio) {
		s->bio = bio;
		s->ts = ts;
	}
}

/* A stamped issue: its bios live at least until then, and until its request completes. */
static void note_issue(struct file_in *f, const struct st_ev_block_rq_issue_stamped *e)
{
	struct rq_seen *r = &f->rq_seen[seen_slot(e->p.rq)];
	unsigned i;

	r->rq = e->p.rq;
	for (i = 0; i < ST_RQ_BIOS; i++)
		r->bios[i] = i < e->p.nr_bios ? e->p.bios[i] : 0;
	r->bios[ST_RQ_BIOS] = e->p.nr_bios > ST_RQ_BIOS ? e->p.rq + 1 : 0;
	for (i = 0; i <= ST_RQ_BIOS; i++)
		note_bio(f, r->bios[i], e->h.ts);
}

/* A completion ends the lives of its request's bios (and of the bio it names, issued or not). */
static void note_complete(struct file_in *f, const struct st_ev_block_rq_complete *e)
{
	const struct rq_seen *r = &f->rq_seen[seen_slot(e->p.rq)];
	unsigned i;

	note_bio(f, e->p.bio, e->h.ts);
	for (i = 0; r->rq == e->p.rq && i <= ST_RQ_BIOS; i++)
		note_bio(f, r->bios[i], e->h.ts);
}

/* t, or the end of the previous life of bio's address when that is later. */
static uint64_t after_previous_use(struct file_in *f, uint64_t bio, uint64_t t)
{
	const struct bio_seen *s = bio_seen_slot(f, bio);

	return s->bio == bio && s->ts > t ? s->ts : t;
}

/*
 * The events the stamped issue e stands for, those the file lacks. Each
 * stored bio is queued at its stamp, or where the kernel kept none at the
 * request's allocation (G), or at the issue; the earliest queued got the
 * request, the others merged into it (a bio merges into a request that
 * exists) when they were queued. A file with recorded queue events but no
 * merge events (the block preset under -p or -- CMD, block-queue) has its
 * merges too: an unstamped bio's at the issue, the one time known to be
 * after its recorded queueing. The events come in the kernel's order,
 * which tools that match them by sector (btt, blktrace import) rely on
 * where times are equal: the first bio's Q, its G (the request as
 * allocated: that bio's sectors), then each other bio's Q and its merge,
 * at the request's end (M) or, before the first bio, at its start (F).
 * Bios past the stored ST_RQ_BIOS, when the file has no queue events (else
 * their addresses are not known), are queued and merged too, each one of
 * its own, so that merges are the kernel's (every bio of a request but its
 * first is one: a bio merged into it, or the first of a request merged
 * into it), at the allocation (or the issue) but not before the request's
 * previous completion nor before a stored bio: they joined the chain at
 * its end. Their lengths are not recorded: they share the rest of the
 * request evenly. Their addresses, the request's + 1 to + 252, lie inside
 * the request's own allocation (struct request and its driver's data, at
 * least 256 bytes): never a bio's, nor another request's.
 */
static int synthesize(struct file_in *f, const struct st_ev_block_rq_issue_stamped *e)
{
	struct reorder *ro = &f->ro;
	/* issued again after a requeue: its bios were queued and its request allocated before */
	int again = take_requeued(f, e->p.rq);
	int queue = f->synth_queue && !again, merge = f->synth_merge && !again;
	uint64_t g = e->p.stamped & ST_STAMPED_GETRQ ? e->h.ts - e->p.getrq_ago : 0;
	uint64_t q[ST_RQ_BIOS], at[ST_RQ_BIOS], sector = e->p.sector, fallback = g ? g : e->h.ts, rest_q;
	uint32_t n = e->p.nr_bios < ST_RQ_BIOS ? e->p.nr_bios : ST_RQ_BIOS, i, first = 0, left, rest;
	uint32_t len[ST_RQ_BIOS];
	struct st_ev_block_rq_issue issue;
	int ret = 0;

	left = e->p.nr_sector;
	for (i = 0; i < n; i++) {
		q[i] = e->p.stamped & ST_STAMPED_QUEUE(i) ? e->h.ts - e->p.queue_ago[i] : fallback;
		if (q[i] < q[first])
			first = i;
		len[i] = e->p.bio_sectors[i] < left ? e->p.bio_sectors[i] : left;
		at[i] = sector;
		sector += len[i];
		left -= len[i];
	}
	/*
	 * Which bio got the request is the stamps' word; a bio is then dated no
	 * earlier than its address's previous life, and one the kernel kept no
	 * stamp for no earlier than the one it follows in the chain (back
	 * merges append, front merges prepend): a bio dated later for its
	 * address dates those too.
	 */
	for (i = 0; i < n; i++)
		q[i] = after_previous_use(f, e->p.bios[i], q[i]);
	for (i = first + 1; i < n; i++)
		if (!(e->p.stamped & ST_STAMPED_QUEUE(i)) && q[i] < q[i - 1])
			q[i] = q[i - 1];
	for (i = first; i-- > 0;)
		if (!(e->p.stamped & ST_STAMPED_QUEUE(i)) && q[i] < q[i + 1])
			q[i] = q[i + 1];
	/* the request was allocated for its first bio, so not before that bio was queued */
	if (g && n && g < q[first])
		g = q[first];
	rest = queue && e->p.nr_bios > n ? (e->p.nr_bios < ST_RQ_BIOS_COUNTED ? e->p.nr_bios :
					     ST_RQ_BIOS_COUNTED) - n : 0;
	/* they joined the chain at its end, after the stored bios */
	rest_q = after_previous_use(f, e->p.rq + 1, fallback);
	for (i = 0; i < n; i++)
		if (q[i] > rest_q)
			rest_q = q[i];
	note_issue(f, e);
	if (queue && n)
		ret |= push_bio(ro, e, ST_EV_block_bio_queue, q[first], e->p.bios[first], at[first],
				len[first]);
	if (f->synth_getrq && !again && g && n)
		ret |= push_bio(ro, e, ST_EV_block_getrq, g, e->p.bios[first], at[first], len[first]);
	for (i = 0; i < n && (queue || merge); i++) {
		uint64_t merged = queue || e->p.stamped & ST_STAMPED_QUEUE(i) ? q[i] : e->h.ts;

		if (i == first)
			continue;
		if (queue)
			ret |= push_bio(ro, e, ST_EV_block_bio_queue, q[i], e->p.bios[i], at[i], len[i]);
		if (merge)
			ret |= push_bio(ro, e, i < first ? ST_EV_block_bio_frontmerge :
					ST_EV_block_bio_backmerge, merged, e->p.bios[i], at[i], len[i]);
	}
	for (i = 0; i < rest; i++) {
		uint32_t len_i = left / (rest - i);

		ret |= push_bio(ro, e, ST_EV_block_bio_queue, rest_q, e->p.rq + 1 + i, sector, len_i);
		if (merge)
			ret |= push_bio(ro, e, ST_EV_block_bio_backmerge, rest_q, e->p.rq + 1 + i,
					sector, len_i);
		sector += len_i;
		left -= len_i;
	}
	memcpy(&issue, e, sizeof(issue));
	issue.h.type = ST_EV_block_rq_issue;
	issue.h.size = sizeof(issue);
	return ret | reorder_push(ro, &issue.h);
}

static int raw_next(struct file_in *f, const struct st_event_header **ev, char *err, size_t cap);

/* ---- compact completions: made whole from their requests' issues ------- */

static void issued_clear(struct issued *is)
{
	an_idmap_free(&is->map);
	an_pool_free(&is->rqs);
}

/* The entry of request rq, a new one when it has none; NULL when out of memory. */
static struct issued_rq *issued_entry(struct issued *is, uint64_t rq)
{
	uint32_t i = an_idmap_get(&is->map, rq);

	if (i != AN_NONE)
		return AN_POOL_AT(&is->rqs, struct issued_rq, i);
	i = an_pool_get(&is->rqs);
	if (i == AN_NONE)
		return NULL;
	if (an_idmap_put(&is->map, rq, i)) {
		an_pool_put(&is->rqs, i);
		return NULL;
	}
	return AN_POOL_AT(&is->rqs, struct issued_rq, i);
}

/* An issue (block_rq_issue, or the stamped one, which extends it): what the request's completion leaves out. */
static int note_issued(struct issued *is, const struct st_ev_block_rq_issue *e)
{
	struct issued_rq *r = issued_entry(is, e->p.rq);

	if (!r)
		return -1;
	*r = (struct issued_rq){ .sector = e->p.sector, .bio = e->p.nr_bios ? e->p.bios[0] : 0,
				 .dev = e->p.dev, .opf = e->p.opf & ~ST_F_FLUSH_SEQ,
				 .bytes = e->p.bytes };
	return 0;
}

/*
 * The block_rq_complete a compact one stands for: the request's position
 * past what completed before, its op and first bio, from its issue; the
 * request is forgotten once all of it completed. A request whose issue the
 * file lacks (issued before the trace) has no position: sector 0, as an
 * orphan completion it is not measured.
 */
static const struct st_event_header *make_whole(struct file_in *f,
						const struct st_ev_block_rq_complete_compact *e)
{
	struct issued *is = &f->issued;
	uint32_t i = an_idmap_get(&is->map, e->p.rq);
	struct st_ev_block_rq_complete *w = &f->whole;

	*w = (struct st_ev_block_rq_complete){ .h = e->h };
	w->h.type = ST_EV_block_rq_complete;
	w->h.size = sizeof(*w);
	w->p.rq = e->p.rq;
	w->p.dev = e->p.dev;
	w->p.bytes = e->p.bytes;
	w->p.nr_sector = e->p.bytes >> 9;
	w->p.error = e->p.error;
	if (i != AN_NONE) {
		struct issued_rq *r = AN_POOL_AT(&is->rqs, struct issued_rq, i);

		w->p.sector = r->bytes ? r->sector + (r->done >> 9) : 0;
		w->p.opf = r->opf;
		w->p.bio = r->bio;
		r->done += e->p.bytes;
		if (r->done >= r->bytes) {
			an_idmap_del(&is->map, e->p.rq);
			an_pool_put(&is->rqs, i);
		}
	}
	return &w->h;
}

/* Issues noted, a compact completion made whole; NULL when out of memory. */
static const struct st_event_header *complete_whole(struct file_in *f, const struct st_event_header *h)
{
	switch (h->type) {
	case ST_EV_block_rq_issue:
	case ST_EV_block_rq_issue_stamped:
		return note_issued(&f->issued, (const struct st_ev_block_rq_issue *)h) ? NULL : h;
	case ST_EV_block_rq_complete_compact:
		return make_whole(f, (const struct st_ev_block_rq_complete_compact *)h);
	}
	return h;
}

/* The next event of a file with stamped issues: read ahead REORDER_NS, in time order. */
static int reordered_next(struct file_in *f, const struct st_event_header **ev, char *err,
			  size_t cap)
{
	struct reorder *ro = &f->ro;
	uint64_t first;
	int ret = 1;

	reorder_done(ro);
	while (!reorder_first(ro, &first) || first + REORDER_NS > ro->newest) {
		const struct st_event_header *h;

		ret = raw_next(f, &h, err, cap);
		if (ret <= 0)
			break;
		if (h->ts > ro->newest)
			ro->newest = h->ts;
		if (h->type == ST_EV_block_rq_requeue)
			note_requeue(f, ((const struct st_ev_block_rq *)h)->p.rq);
		if (h->type == ST_EV_block_rq_complete)
			note_complete(f, (const struct st_ev_block_rq_complete *)h);
		if (h->type != ST_EV_block_rq_issue_stamped ?
		    reorder_push(ro, h) :
		    f->stamped_ok && synthesize(f, (const struct st_ev_block_rq_issue_stamped *)h)) {
			snprintf(err, cap, "%s: out of memory", f->path);
			return -1;
		}
	}
	if (ret < 0)
		return ret;
	/* a live file's next events may still come before the held ones */
	if (!reorder_first(ro, &first) || (!ret && st_reader_live(f->r)))
		return 0;
	*ev = reorder_pop(ro);
	return 1;
}

/* The next stored event of file f this build knows, in the built-in layout. */
static inline int stored_next(struct file_in *f, const struct st_event_header **ev, char *err,
			      size_t cap)
{
	const struct adapter *a;
	int ret;

	while ((ret = st_cursor_next(f->c, ev)) > 0) {
		const struct st_event_header *h = *ev;

		if (h->size >= f->pass_min[h->type])
			return 1;
		if (f->slot[h->type] == NO_ADAPTER)
			continue;
		a = &f->adapters[f->slot[h->type]];
		/* Here a record of an identity type is shorter than its type says,
		 * as is one of an adapted type below its stored size: unusable. */
		if (a->identity || h->size < a->file_size)
			continue;
		*ev = adapt(f, a, h);
		return 1;
	}
	if (ret < 0)
		snprintf(err, cap, "%s: %s", f->path, st_reader_errmsg(f->r));
	return ret;
}

/* The next event of file f, compact completions made whole. */
static inline int raw_next(struct file_in *f, const struct st_event_header **ev, char *err,
			   size_t cap)
{
	int ret = stored_next(f, ev, err, cap);

	if (ret > 0 && f->compact && !(*ev = complete_whole(f, *ev))) {
		snprintf(err, cap, "%s: out of memory", f->path);
		return -1;
	}
	return ret;
}

static inline int file_next(struct file_in *f, const struct st_event_header **ev, char *err,
			    size_t cap)
{
	return f->stamped ? reordered_next(f, ev, err, cap) : raw_next(f, ev, err, cap);
}

/* Move file f to its next event (f->cur, NULL at the end). */
static int file_advance(struct file_in *f, char *err, size_t cap)
{
	int ret = file_next(f, &f->cur, err, cap);

	if (ret <= 0)
		f->cur = NULL;
	return ret;
}

int an_input_start(struct an_input *in, uint64_t from, uint64_t to, char *err, size_t cap)
{
	int i;

	an_names_rewind(in->names);

	for (i = 0; i < in->nfiles; i++) {
		struct file_in *f = &in->files[i];

		st_cursor_close(f->c);
		f->c = NULL;
		reorder_clear(&f->ro);
		f->nrequeued = 0;
		/* A pass before this one saw later lives of these addresses. */
		memset(f->bio_seen, 0, sizeof(f->bio_seen));
		memset(f->rq_seen, 0, sizeof(f->rq_seen));
		issued_clear(&f->issued);
		if (f->compact && an_idmap_init(&f->issued.map, 1024)) {
			snprintf(err, cap, "%s: out of memory", f->path);
			return -1;
		}
		if (st_cursor_open(f->r, from, to, &f->c)) {
			snprintf(err, cap, "%s: %s", f->path, st_reader_errmsg(f->r));
			return -1;
		}
		/* A single file is read straight through: no current event to keep. */
		if (in->nfiles > 1 && file_advance(f, err, cap) < 0)
			return -1;
	}
	in->advance = -1;
	return 0;
}

int an_input_open_live(struct an_input **inp, const char *path, struct an_names *names, char *err,
		       size_t cap)
{
	struct an_input *in = calloc(1, sizeof(*in));
	struct file_in *f;
	int ret;

	*inp = in;
	if (!in || !(in->files = calloc(1, sizeof(*in->files)))) {
		snprintf(err, cap, "out of memory");
		return ST_ENOMEM;
	}
	in->advance = -1;
	in->names = names;
	in->nfiles = 1;
	f = &in->files[0];
	f->path = path;
	if ((ret = st_reader_open(&f->r, path, ST_READ_LIVE))) {
		snprintf(err, cap, "%s: %s", path, f->r ? st_reader_errmsg(f->r) : "out of memory");
		return ret;
	}
	if (plan_file(f) || an_names_load_meta(names, f->r)) {
		snprintf(err, cap, "%s: out of memory", path);
		return ST_ENOMEM;
	}
	plan_stamped(f);
	reorder_init(&f->ro);
	an_pool_init(&f->issued.rqs, sizeof(struct issued_rq));
	info_add(&in->info, f->r);
	in->info.files = 1;
	return 0;
}

int an_input_refresh(struct an_input *in, int done, uint64_t until, char *err, size_t cap)
{
	struct file_in *f = &in->files[0];
	int added = st_reader_refresh(f->r, done), compact = f->compact;

	if (added < 0) {
		snprintf(err, cap, "%s: %s", f->path, st_reader_errmsg(f->r));
		return -1;
	}
	/*
	 * What the file's events stand for is planned from the types it holds
	 * so far: a plan only ever gains stamped issues and compact
	 * completions, as their first records arrive.
	 */
	if (added) {
		uint8_t stamped = f->stamped;

		plan_stamped(f);
		f->stamped |= stamped;
		f->compact |= compact;
		if (an_names_load_meta(in->names, f->r)) {
			snprintf(err, cap, "%s: out of memory", f->path);
			return -1;
		}
	}
	if (f->compact && !compact && an_idmap_init(&f->issued.map, 1024)) {
		snprintf(err, cap, "%s: out of memory", f->path);
		return -1;
	}
	memset(&in->info, 0, sizeof(in->info));
	info_add(&in->info, f->r);
	in->info.files = 1;
	if (st_cursor_extend(f->c, st_reader_live(f->r) ? until : UINT64_MAX)) {
		snprintf(err, cap, "%s: out of memory", f->path);
		return -1;
	}
	return st_reader_live(f->r);
}

/* Several files: the earliest of their current events. */
static int next_of_files(struct an_input *in, const struct st_event_header **ev, char *err,
			 size_t cap)
{
	int i, best = -1;

	if (in->advance >= 0 && file_advance(&in->files[in->advance], err, cap) < 0)
		return -1;
	for (i = 0; i < in->nfiles; i++) {
		const struct st_event_header *h = in->files[i].cur;

		if (h && (best < 0 || h->ts < in->files[best].cur->ts))
			best = i;
	}
	in->advance = best;
	if (best < 0)
		return 0;
	*ev = in->files[best].cur;
	return 1;
}

int an_input_next(struct an_input *in, const struct st_event_header **ev, char *err, size_t cap)
{
	int ret;

	if (in->nfiles > 1)
		return next_of_files(in, ev, err, cap);
	ret = file_next(&in->files[0], ev, err, cap);
	return ret < 0 ? -1 : ret;
}

const struct an_input_info *an_input_info(const struct an_input *in)
{
	return &in->info;
}

uint64_t an_input_type_events(const struct an_input *in, uint16_t id)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < in->nfiles; i++) {
		const struct file_in *f = &in->files[i];
		uint64_t stamped = f->stamped && f->stamped_ok ?
				   file_type_events(f, ST_EV_block_rq_issue_stamped) : 0;

		n += file_type_events(f, id);
		/*
		 * every stored bio queued, and one more for the rest of a longer
		 * chain: an estimate past that (each of its bios is queued), which
		 * the one-pass --quantile checks (it reads again when it was short)
		 */
		if (id == ST_EV_block_bio_queue && f->synth_queue)
			n += stamped * (ST_RQ_BIOS + 1);
		if (id == ST_EV_block_getrq && f->synth_getrq)
			n += stamped;
		if (id == ST_EV_block_rq_issue)
			n += stamped;
		if (id == ST_EV_block_rq_complete)
			n += file_type_events(f, ST_EV_block_rq_complete_compact);
	}
	return n;
}

int an_event_name_is(const char *type_name, const char *wanted)
{
	const char *colon = strchr(type_name, ':');

	return !strcmp(type_name, wanted) || (colon && !strchr(wanted, ':') && !strcmp(colon + 1, wanted));
}

int an_input_pass_type(struct an_input *in, const char *name)
{
	int i, found = 0;

	for (i = 0; i < in->nfiles; i++) {
		struct file_in *f = &in->files[i];
		size_t k, ntypes = st_type_count(f->r);
		int has = 0;

		for (k = 0; k < ntypes; k++) {
			const struct st_type *t = st_type_at(f->r, k);

			if (!an_event_name_is(t->name, name))
				continue;
			has = 1;
			if (f->slot[t->id] == NO_ADAPTER)
				f->pass_min[t->id] = t->size;
		}
		found += has;
	}
	return found;
}

const struct st_type *an_input_type_named(const struct an_input *in, const char *name)
{
	for (int i = 0; i < in->nfiles; i++) {
		size_t k, ntypes = st_type_count(in->files[i].r);

		for (k = 0; k < ntypes; k++) {
			const struct st_type *t = st_type_at(in->files[i].r, k);

			if (an_event_name_is(t->name, name))
				return t;
		}
	}
	return NULL;
}

const struct st_type *an_input_event_type(const struct an_input *in, const struct st_event_header *ev)
{
	const struct st_type *builtin = st_builtin_type(ev->type);

	/* a built-in id: passed with the built-in layout, or adapted to it */
	if (builtin)
		return builtin;
	return st_type_by_id(in->files[in->nfiles > 1 ? in->advance : 0].r, ev->type);
}

void an_input_close(struct an_input *in)
{
	int i;
	unsigned k;

	if (!in)
		return;
	for (i = 0; i < in->nfiles; i++) {
		struct file_in *f = &in->files[i];

		for (k = 0; k < f->nadapters; k++)
			free(f->adapters[k].ops);
		reorder_free(&f->ro);
		issued_clear(&f->issued);
		st_cursor_close(f->c);
		st_reader_close(f->r);
	}
	free(in->files);
	free(in);
}

const char *an_input_meta(const struct an_input *in, const char *key)
{
	for (int i = 0; i < in->nfiles; i++) {
		const char *v = st_meta_get(in->files[i].r, key);

		if (v)
			return v;
	}
	return NULL;
}
