/* SPDX-License-Identifier: MIT */
/*
 * whole.c - a file's records as whole events (st_cursor_open without
 * ST_CURSOR_RAW): what the cursor hands out when a program asks for events,
 * not for the records as stored.
 *
 * Three things stand between a stored record and the event it is:
 *   - its layout: a type whose stored layout differs from this build's
 *     (another recorder version) is copied field by field, by name, into the
 *     built-in layout, fields the file lacks left 0 (fields appended by a
 *     newer version: the record copied whole, the rest zeroed); a chunk at
 *     a time, as the cursor decodes it (st_whole_adapt_chunk), so that a
 *     cursor decoding ahead does it in its decoding thread. Decoding a record
 *     through the file's schema into the structs of sttrace_events.h is
 *     reading the format, so it lives here, below every program; and the
 *     two steps after it read the `block` preset's records through those
 *     structs.
 *   - a block_rq_complete_compact is the block_rq_complete it stands for,
 *     its position, op and first bio from the request's issue;
 *   - a block_rq_issue_stamped is the block_bio_queue, block_bio_backmerge
 *     (block_bio_frontmerge) and block_getrq events it stands for (those the
 *     file does not hold already), dated by its stamps, then a block_rq_issue,
 *     all in time order (spec/sttrace-format.md, "Whole events").
 * A file that needs none of them is read straight from the stored records.
 */
#include <stdlib.h>

#include "internal.h"

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
	uint16_t nops;
	/*
	 * The built-in layout is the stored one with fields appended (a newer
	 * minor version): every stored byte is a field of both at the same
	 * place, so the record is copied whole and the rest zeroed, not field
	 * by field.
	 */
	uint8_t extend;
	struct copy_op *ops;
};

#define MAX_RECORD 1024	/* built-in record sizes stay far below */
#define MAX_ADAPTERS 254	/* more than the built-in types */
#define HOW_PASS 0		/* st_whole.how: the record as stored; else adapter + 1 */
#define HOW_DROP 0xff

/*
 * st_whole.noted: a record that tells of bios and requests, handed out as
 * stored (NOTED_PASS) or as another event (NOTED_MAKE: a stamped issue, a
 * compact completion). With stamped issues resolved, a run of records that
 * pass goes out in one copy.
 */
#define NOTED_PASS 1
#define NOTED_MAKE 2

/*
 * Records held back for time order: the stage events a stamped issue
 * stands for are dated before it, so a file that has them is read through
 * a window of REORDER_NS of event time and handed out sorted by (ts, seq),
 * seq the order they were held in. What the file gives comes in time order
 * (the cursor's promise) and waits in a FIFO of bytes, copied once, never
 * allocated per record; only the dated-back stage events, and any record
 * behind the FIFO's newest, wait apart, as late records (struct reorder).
 * The earlier of the two heads goes out first, so the order is the one a
 * single sort would give.
 * The FIFO holds the records alone, laid out as st_cursor_fill() hands
 * them out, so that a run of them due goes out in one copy: a late
 * record's place among them is the count of FIFO records held before it
 * (fifo_at), against the count that went out (fifo_out_count).
 */
struct held {
	uint64_t ts, seq;	/* seq orders late records of one ts */
	uint64_t fifo_at;	/* FIFO records held before this one */
	uint32_t slot;		/* in the reorder's slots */
};

/* A late record: a stage event made here, or a copy of a record the file gave late. */
struct held_rec {
	struct st_ev_block_bio bio;
	struct st_event_header *copy;	/* malloc'd, or NULL: the record is bio */
	uint32_t link;			/* free: the next free slot + 1, 0 none */
};

/* Late records by index: indices stay valid when the array grows. */
struct slots {
	struct held_rec *rec;
	uint32_t cap, used;	/* allocated, and handed out at least once */
	uint32_t free_head;	/* a free slot + 1, 0 none */
};

#define REORDER_NS 100000000ull	/* stamps older than this before their issue come late */
#define LATE_SHIFT_MAX 16	/* late records a new one may move in the ring; past them, the heap */
#define REQUEUED_MAX 64		/* requeued requests awaiting their issue; the oldest give way */
#define SEEN_SLOTS 1024	/* bios and requests remembered, a power of two; a collision forgets one */

/* A bio address and the time of the last event of its life: its queueing, its request's issue or completion. */
struct bio_seen {
	uint64_t bio, ts;
};

/*
 * A request's stored bios, from its stamped issue, for its completion; the
 * first of those past them (the request's address + 1) stands for them all.
 */
struct rq_seen {
	uint64_t rq, bios[ST_RQ_BIOS + 1];
	uint32_t nbios;		/* bios[] stored before bios[ST_RQ_BIOS]; those past them are 0 */
};

/* What a compact completion leaves to its request's issue. */
struct issued_rq {
	uint64_t rq;		/* 0: a free entry (the kernel never issues a NULL request) */
	uint64_t sector, bio;
	uint32_t dev, opf;
	uint32_t bytes, done;	/* the request's bytes, and those completed so far */
};

/*
 * The issued requests of a file with compact completions, by address: open
 * addressing with linear probing and backward-shift deletion (no tombstones,
 * however many requests a long trace issues and completes).
 */
struct issued {
	struct issued_rq *tab;
	size_t mask;		/* capacity - 1, a power of two; 0 before the first */
	size_t count;
};

struct reorder {
	/*
	 * Records from fifo_out to fifo_in, in a ring of fifo.cap bytes that
	 * grows as a decoded chunk's buffer does (st_chunk_buf_reserve:
	 * megabytes on huge pages, a fault each).
	 */
	struct st_chunk_buf fifo;
	size_t fifo_out, fifo_in, fifo_end;
	int fifo_wrapped;		/* fifo_in has started again at the front */
	/*
	 * How far fifo_in may go without fifo_room(): fifo.cap, or while
	 * wrapped fifo_out - 1 (fifo_out > 0 then): a push checks one bound.
	 */
	size_t fifo_lim;
	uint64_t fifo_newest;		/* ts of the FIFO's last record */
	uint64_t fifo_in_count, fifo_out_count;	/* FIFO records held, handed out (from the start) */
	/*
	 * st_whole_fill() lets due records wait while what it reads comes after
	 * them; `eager` once a record dated within REORDER_NS of the clock's end
	 * is held (REORDER_NS after it is not a time): due records go out before
	 * each event is read, as st_whole_next() does. `pending` to
	 * `pending_end` are the records read as stored and not taken yet when
	 * the buffer filled first (the rest of a run of the cursor's).
	 */
	int eager;
	const uint8_t *pending, *pending_end;
	/*
	 * The records held behind the FIFO's newest (`late`: stage events
	 * dated back, records the file gave late), sorted by (ts, seq). Nearly
	 * all land a few places before the end of those held: they wait in a
	 * ring kept in order by insertion, where the first goes out at once.
	 * One that would move more than LATE_SHIFT_MAX of them waits in a
	 * binary heap instead, so that no file costs more than a heap would.
	 * (A heap alone, some 5,000 records deep on a system-wide `block`
	 * recording, took 12 % of the summary's CPU, its walks missing the
	 * cache.) The first late record is the earlier of the two firsts.
	 */
	struct held *ring;
	size_t ring_out, ring_n;	/* ring[ring_out & ring_mask], ring_n of them */
	size_t ring_mask;		/* capacity - 1, a power of two; 0 before the first */
	struct held *heap;
	size_t heap_n, heap_cap;
	size_t n;			/* late records: ring_n + heap_n */
	struct slots slots;
	uint64_t seq, newest;		/* next sequence number; latest ts read from the file */
	size_t held;			/* records held, FIFO and late */
	uint64_t head;			/* ts of the earliest held (when any) */
	uint32_t out_slot;		/* the late slot returned last + 1, released at the next
					   call; 0 none */
};

/* A cursor's whole-event state: one per cursor, from its open to its close. */
struct st_whole {
	struct st_reader *r;
	uint8_t how[ST_NUM_TYPE_IDS];	/* stored type id -> HOW_PASS, adapter + 1, HOW_DROP */
	struct adapter adapters[MAX_ADAPTERS];
	unsigned nadapters;
	uint8_t plain;		/* every stored type passes as it is */
	uint8_t at_most_double;	/* no adapted record is more than twice its stored size */
	/*
	 * block_rq_issue_stamped (the `block` preset) stands for the stages the
	 * kernel stamped: it becomes the block_bio_queue, block_bio_backmerge and
	 * block_getrq events that the file lacks, then a block_rq_issue.
	 */
	uint8_t synth_queue, synth_getrq;	/* the file has none of that type */
	uint8_t synth_merge;	/* the file has no bio merge events */
	uint8_t stamped;	/* the file has stamped issues: read through ro */
	uint8_t stamped_ok;	/* 0: the file has block_rq_issue, the stamped ones are dropped */
	/*
	 * ST_CURSOR_STAMPED on a file with queue events and stamped issues:
	 * those come as themselves, resolved, in the stored time order (no ro).
	 */
	uint8_t resolve;
	/*
	 * ST_CURSOR_STAMPED on a file with stamped issues and no queue
	 * events: those come as themselves, resolved, through ro, after the
	 * queue events made of them.
	 */
	uint8_t resolve_late;
	const uint8_t *pending, *pending_end;	/* the rest of a run when st_whole_fill()'s buf filled */
	/*
	 * Type id -> NOTED_PASS or NOTED_MAKE for the records read through
	 * whole.c one at a time (requeues, issues, completions, queueings where
	 * stages are dated by them): the window takes the others a run at a
	 * time.
	 */
	uint8_t noted[ST_NUM_TYPE_IDS];
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
	 * would otherwise take them, nor than the bio's own queue record where
	 * the file has them (kernels before 6.18 stamp a bio just before it),
	 * before which its merge and allocation would find no bio.
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
	/* the last event made here (a compact completion made whole, a stamped issue resolved) */
	uint64_t made[MAX_RECORD / 8];
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
	uint8_t covered[MAX_RECORD] = { 0 };	/* stored bytes copied to the same place */
	unsigned i, k, extend = t->size <= b->size;

	a->ops = calloc(b->nfields, sizeof(*a->ops));
	if (!a->ops)
		return -1;
	for (i = 0; i < b->nfields; i++) {
		const struct st_field *bf = &b->fields[i], *tf = st_field_find(t, bf->name);
		struct copy_op *op = &a->ops[a->nops];
		unsigned n;

		/* (t->size <= b->size <= MAX_RECORD while extend holds) */
		if (extend && tf && tf->offset == bf->offset && tf->size == bf->size &&
		    tf->elem_size == bf->elem_size && (unsigned)tf->offset + tf->size <= t->size)
			memset(covered + tf->offset, 1, tf->size);
		else if (tf || bf->offset < t->size)
			extend = 0;	/* moved, resized, or in the way of stored bytes */

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
	for (k = 0; extend && k < t->size; k++)
		extend = covered[k];
	a->extend = (uint8_t)extend;
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

/* Record h of a type a adapts, in the built-in layout at dst (a->size bytes). */
static void adapt(const struct adapter *a, const struct st_event_header *h, uint8_t *dst)
{
	const uint8_t *src = (const uint8_t *)h;
	unsigned i, k;

	if (a->extend) {
		memcpy(dst, src, h->size);
		memset(dst + h->size, 0, a->size - h->size);
	} else {
		memset(dst, 0, a->size);
		for (i = 0; i < a->nops; i++) {
			const struct copy_op *op = &a->ops[i];

			for (k = 0; k < op->count; k++)
				store(dst + op->dst + k * op->dsz, op->dsz,
				      load(src + op->src + k * op->ssz, op->ssz, op->sign));
		}
	}
	((struct st_event_header *)dst)->type = a->id;
	((struct st_event_header *)dst)->size = a->size;
}

int st_whole_adapts(const struct st_whole *w)
{
	return !w->plain;
}

/* Bytes the records of a decoded chunk take in the built-in layouts. */
static size_t adapted_len(const struct st_whole *w, const struct st_chunk_buf *in)
{
	const uint8_t *p = in->data, *end = p + in->len;
	size_t len = 0;

	for (; p < end; p += ((const struct st_event_header *)p)->size) {
		const struct st_event_header *h = (const void *)p;
		uint8_t how = w->how[h->type];

		len += how == HOW_PASS ? h->size : how == HOW_DROP ? 0 : w->adapters[how - 1].size;
	}
	return len;
}

int st_whole_adapt_chunk(const struct st_whole *w, struct st_chunk_buf *in,
			 struct st_chunk_buf *out, const char **why)
{
	const uint8_t *p = in->data, *end = p + in->len, *run = p;
	size_t need;
	uint8_t *dst;

	*why = NULL;
	while (p < end && w->how[((const struct st_event_header *)p)->type] == HOW_PASS)
		p += ((const struct st_event_header *)p)->size;
	/* none to adapt (the types that differ have no records here): the bytes change hands */
	if (p == end) {
		struct st_chunk_buf t = *out;

		out->data = in->data;
		out->len = in->len;
		out->cap = in->cap;
		in->data = t.data;
		in->len = t.len;
		in->cap = t.cap;
		return 0;
	}
	/* counted only when some type more than doubles: room for twice the records else */
	need = w->at_most_double ? 2 * in->len : adapted_len(w, in);
	/* every record is of a type this build drops: nothing to copy, maybe nowhere to copy it */
	if (!need) {
		out->len = 0;
		return 0;
	}
	/*
	 * A hostile schema's records could grow 64 times: past twice the
	 * largest chunk, a chunk whose records more than double is refused.
	 */
	if (need > ST_MAX_CHUNK_RAW && need / 2 > in->len)
		return *why = "records more than twice their stored size in this build's layouts",
		       ST_EFORMAT;
	if (st_chunk_buf_reserve(out, need))
		return ST_ENOMEM;
	/* records that pass as stored are copied a run at a time */
	dst = out->data;
	for (; p < end; p += ((const struct st_event_header *)p)->size) {
		const struct st_event_header *h = (const void *)p;
		uint8_t how = w->how[h->type];

		if (how == HOW_PASS)
			continue;
		memcpy(dst, run, (size_t)(p - run));
		dst += p - run;
		run = p + h->size;
		if (how != HOW_DROP) {
			adapt(&w->adapters[how - 1], h, dst);
			dst += w->adapters[how - 1].size;
		}
	}
	memcpy(dst, run, (size_t)(end - run));
	dst += end - run;
	out->len = (size_t)(dst - (uint8_t *)out->data);
	return 0;
}

/* The built-in type called name, NULL when this build does not know it. */
static const struct st_type *builtin_named(const char *name)
{
	size_t k, nb;
	const struct st_type *builtin = st_builtin_types(&nb);

	for (k = 0; k < nb; k++)
		if (!strcmp(builtin[k].name, name))
			return &builtin[k];
	return NULL;
}

/* How each stored type becomes built-in records: pass, adapt or drop. */
static int plan_types(struct st_whole *w)
{
	size_t i, n = st_type_count(w->r);

	memset(w->how, HOW_PASS, sizeof(w->how));
	w->plain = 1;
	w->at_most_double = 1;
	for (i = 0; i < n; i++) {
		const struct st_type *t = st_type_at(w->r, i), *b = builtin_named(t->name);
		struct adapter *a = &w->adapters[w->nadapters];

		/* a type this build does not know passes, unless its id is a built-in type's */
		if (!b && !st_builtin_type(t->id))
			continue;
		if (b && b->id == t->id && same_layout(b, t))
			continue;
		w->plain = 0;
		if (!b || b->size > MAX_RECORD || w->nadapters == MAX_ADAPTERS) {
			w->how[t->id] = HOW_DROP;
			continue;
		}
		memset(a, 0, sizeof(*a));
		a->id = b->id;
		a->size = b->size;
		if (plan_copy(a, b, t))
			return ST_ENOMEM;
		if (b->size > 2u * t->size)
			w->at_most_double = 0;
		w->how[t->id] = (uint8_t)++w->nadapters;
	}
	return 0;
}

/* Events stored in r of the types that become built-in type id (footer or scan counts). */
static uint64_t stored_as(const struct st_reader *r, uint16_t id)
{
	const struct st_type *b = st_builtin_type(id);
	size_t k, ntypes = st_type_count(r);
	uint64_t n = 0;

	for (k = 0; b && k < ntypes; k++) {
		const struct st_type *t = st_type_at(r, k);

		if (!strcmp(t->name, b->name) && b->size <= MAX_RECORD)
			n += st_type_events(r, t->id);
	}
	return n;
}

/*
 * Which stage events the file's stamped issues stand for: those it lacks.
 * A live file's plan only ever gains stamped issues and compact
 * completions, as their first records arrive.
 */
static void plan_stamped(struct st_whole *w)
{
	const struct st_reader *r = w->r;

	w->stamped |= stored_as(r, ST_EV_block_rq_issue_stamped) != 0;
	w->stamped_ok = !stored_as(r, ST_EV_block_rq_issue);
	w->synth_queue = !stored_as(r, ST_EV_block_bio_queue);
	w->synth_getrq = !stored_as(r, ST_EV_block_getrq);
	w->synth_merge = !stored_as(r, ST_EV_block_bio_backmerge) &&
			 !stored_as(r, ST_EV_block_bio_frontmerge);
	w->compact |= stored_as(r, ST_EV_block_rq_complete_compact) != 0;
	/* a bio's queue record dates its stages made here no earlier (bio_seen) */
	w->noted[ST_EV_block_bio_queue] = w->stamped && !w->synth_queue ? NOTED_PASS : 0;
}

uint64_t st_whole_events(const struct st_reader *r, uint16_t id)
{
	uint64_t n = stored_as(r, id);
	uint64_t stamped = stored_as(r, ST_EV_block_rq_issue) ? 0 :
			   stored_as(r, ST_EV_block_rq_issue_stamped);

	/*
	 * every stored bio queued, and one more for the rest of a longer chain:
	 * an estimate past that (each of its bios is queued)
	 */
	if (id == ST_EV_block_bio_queue && !n)
		n += stamped * (ST_RQ_BIOS + 1);
	if (id == ST_EV_block_getrq && !n)
		n += stamped;
	if (id == ST_EV_block_rq_issue)
		n += stamped;
	if (id == ST_EV_block_rq_complete)
		n += stored_as(r, ST_EV_block_rq_complete_compact);
	return n;
}

/* ---- records held back for time order --------------------------------- */

#define NO_SLOT UINT32_MAX

/* Cold: the slots reach their number early. */
static __attribute__((cold)) int slots_grow(struct slots *s)
{
	uint32_t cap = s->cap ? s->cap * 2 : 256;
	struct held_rec *rec = realloc(s->rec, (size_t)cap * sizeof(*rec));

	if (!rec)
		return -1;
	s->rec = rec;
	s->cap = cap;
	return 0;
}

/* A free slot, NO_SLOT when out of memory. */
static uint32_t slot_get(struct slots *s)
{
	uint32_t i = s->free_head;

	if (i) {
		s->free_head = s->rec[i - 1].link;
		return i - 1;
	}
	if (s->used == s->cap && slots_grow(s))
		return NO_SLOT;
	return s->used++;
}

static void slot_put(struct slots *s, uint32_t i)
{
	s->rec[i].link = s->free_head;
	s->free_head = i + 1;
}

static int held_before(const struct held *a, const struct held *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

/* The first late record (ro->n > 0): the ring's or the heap's. */
static inline const struct held *late_first(const struct reorder *ro)
{
	const struct held *r;

	if (!ro->ring_n)
		return ro->heap;
	r = &ro->ring[ro->ring_out & ro->ring_mask];
	return ro->heap_n && held_before(ro->heap, r) ? ro->heap : r;
}

/* Whether the first late record (ro->n > 0) was held before FIFO record number index, dated ts. */
static int late_before(const struct reorder *ro, uint64_t ts, uint64_t index)
{
	const struct held *l = late_first(ro);

	return l->ts < ts || (l->ts == ts && l->fifo_at <= index);
}

/* The FIFO's bytes. */
static inline uint8_t *fifo_bytes(const struct reorder *ro)
{
	return ro->fifo.data;
}

static const struct st_event_header *fifo_first(const struct reorder *ro)
{
	if (!ro->fifo_wrapped && ro->fifo_out == ro->fifo_in)
		return NULL;
	return (const struct st_event_header *)(fifo_bytes(ro) + ro->fifo_out);
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
	size_t cap = ro->fifo.cap ? ro->fifo.cap : 65536;

	/*
	 * Doubled until half as large again as what it holds (a third or more
	 * free after), and room for the newer entries after the older ones.
	 */
	while (cap < (used + need) * 3 / 2 ||
	       (ro->fifo_wrapped && cap < ro->fifo_end + ro->fifo_in + need))
		cap *= 2;
	/*
	 * Each page of a buffer touched first costs a fault: the summary of a
	 * 4 s system-wide `-e block` recording took 2,767 page faults when the
	 * FIFO grew into new malloc'd buffers (64 KiB to 4 MiB), against 620
	 * for one of a recording with queue events (no window).
	 */
	if (st_chunk_buf_reserve(&ro->fifo, cap))
		return -1;
	if (ro->fifo_wrapped) {
		/* the newer entries, at the front, go on after the older ones */
		memcpy(fifo_bytes(ro) + ro->fifo_end, fifo_bytes(ro), ro->fifo_in);
		ro->fifo_in += ro->fifo_end;
		ro->fifo_wrapped = 0;
	}
	ro->fifo_lim = ro->fifo.cap;
	return 0;
}

/*
 * Room for an entry of need bytes that does not fit at fifo_in: an empty
 * ring starts again at its front (only here: it empties seldom, at a
 * window's start or end), a ring with room there wraps, else it grows.
 */
static __attribute__((noinline)) int fifo_room(struct reorder *ro, size_t need)
{
	if (!fifo_first(ro)) {
		ro->fifo_out = ro->fifo_in = 0;
		if (need <= ro->fifo.cap)
			return 0;
	}
	if (!ro->fifo_wrapped && need < ro->fifo_out) {
		ro->fifo_end = ro->fifo_in;
		ro->fifo_in = 0;
		ro->fifo_wrapped = 1;
		ro->fifo_lim = ro->fifo_out - 1;
		return 0;
	}
	return fifo_grow(ro, need);
}

/*
 * count records in time order, first dated first_ts and the last last_ts,
 * into the FIFO: `size` bytes copied from src, `need` taken (the records'
 * spans). Inline: every event of a file with stamped issues passes here.
 */
static inline __attribute__((always_inline)) int
fifo_put(struct reorder *ro, const void *src, size_t size, size_t need, uint64_t count,
	 uint64_t first_ts, uint64_t last_ts)
{
	if (ro->fifo_in + need > ro->fifo_lim && fifo_room(ro, need))
		return -1;
	memcpy(fifo_bytes(ro) + ro->fifo_in, src, size);
	ro->fifo_in += need;
	ro->fifo_newest = last_ts;
	ro->fifo_in_count += count;
	/*
	 * Held records are dated no later than the FIFO's newest (late ones
	 * came behind it), so these are the earliest only when none is held.
	 */
	if (!ro->held)
		ro->head = first_ts;
	ro->held += count;
	return 0;
}

static inline __attribute__((always_inline)) int fifo_push(struct reorder *ro,
							   const struct st_event_header *h)
{
	return fifo_put(ro, h, h->size, st_record_span(h), 1, h->ts, h->ts);
}

/* Past the first `count` records, `bytes` long (they do not wrap). */
static void fifo_skip(struct reorder *ro, size_t bytes, uint64_t count)
{
	ro->fifo_out += bytes;
	ro->fifo_out_count += count;
	ro->held -= count;
	if (!ro->fifo_wrapped)
		return;
	ro->fifo_lim = ro->fifo_out - 1;
	if (ro->fifo_out == ro->fifo_end) {
		ro->fifo_out = 0;
		ro->fifo_wrapped = 0;
		ro->fifo_lim = ro->fifo.cap;
	}
}

static const struct st_event_header *slot_record(struct reorder *ro, uint32_t slot)
{
	struct held_rec *rec = &ro->slots.rec[slot];

	return rec->copy ? rec->copy : &rec->bio.h;
}

static void slot_release(struct reorder *ro, uint32_t slot)
{
	struct held_rec *rec = &ro->slots.rec[slot];

	free(rec->copy);
	rec->copy = NULL;
	slot_put(&ro->slots, slot);
}

static int heap_push(struct reorder *ro, const struct held *e)
{
	size_t i;

	if (ro->heap_n == ro->heap_cap) {
		size_t cap = ro->heap_cap ? ro->heap_cap * 2 : 256;
		struct held *nh = realloc(ro->heap, cap * sizeof(*nh));

		if (!nh)
			return -1;
		ro->heap = nh;
		ro->heap_cap = cap;
	}
	for (i = ro->heap_n++; i && held_before(e, &ro->heap[(i - 1) / 2]); i = (i - 1) / 2)
		ro->heap[i] = ro->heap[(i - 1) / 2];
	ro->heap[i] = *e;
	return 0;
}

static uint32_t heap_pop(struct reorder *ro)
{
	uint32_t top = ro->heap[0].slot;
	struct held last = ro->heap[--ro->heap_n];
	size_t i = 0, child;

	while ((child = 2 * i + 1) < ro->heap_n) {
		if (child + 1 < ro->heap_n && held_before(&ro->heap[child + 1], &ro->heap[child]))
			child++;
		if (!held_before(&ro->heap[child], &last))
			break;
		ro->heap[i] = ro->heap[child];
		i = child;
	}
	if (ro->heap_n)
		ro->heap[i] = last;
	return top;
}

/* Cold: the ring reaches its size early. Its records laid out again from its front. */
static __attribute__((cold)) int ring_grow(struct reorder *ro)
{
	size_t cap = ro->ring_mask ? 2 * (ro->ring_mask + 1) : 256;
	struct held *n = malloc(cap * sizeof(*n));

	if (!n)
		return -1;
	for (size_t k = 0; k < ro->ring_n; k++)
		n[k] = ro->ring[(ro->ring_out + k) & ro->ring_mask];
	free(ro->ring);
	ro->ring = n;
	ro->ring_mask = cap - 1;
	ro->ring_out = 0;
	return 0;
}

/*
 * e into the ring, after the records held before it dated no later (its
 * seq is the newest): 0, 1 when that would move more than LATE_SHIFT_MAX
 * of them, -1 out of memory.
 */
static int ring_insert(struct reorder *ro, const struct held *e)
{
	size_t k = ro->ring_n;

	while (k && ro->ring[(ro->ring_out + k - 1) & ro->ring_mask].ts > e->ts)
		if (ro->ring_n - --k > LATE_SHIFT_MAX)
			return 1;
	if ((!ro->ring_mask || ro->ring_n > ro->ring_mask) && ring_grow(ro))
		return -1;
	for (size_t j = ro->ring_n; j > k; j--)
		ro->ring[(ro->ring_out + j) & ro->ring_mask] =
			ro->ring[(ro->ring_out + j - 1) & ro->ring_mask];
	ro->ring[(ro->ring_out + k) & ro->ring_mask] = *e;
	ro->ring_n++;
	return 0;
}

/* Hold a record behind the FIFO's newest: a copy in a slot, its place in the ring or the heap. */
static int late_push(struct reorder *ro, const struct st_event_header *h)
{
	struct held e = { .ts = h->ts, .seq = ro->seq++, .fifo_at = ro->fifo_in_count };
	struct held_rec *rec;
	int ret;

	if ((e.slot = slot_get(&ro->slots)) == NO_SLOT)
		return -1;
	rec = &ro->slots.rec[e.slot];
	rec->copy = NULL;
	if (h->size <= sizeof(rec->bio)) {
		memcpy(&rec->bio, h, h->size);
	} else if (!(rec->copy = malloc(h->size))) {
		slot_put(&ro->slots, e.slot);
		return -1;
	} else {
		memcpy(rec->copy, h, h->size);
	}
	ret = ring_insert(ro, &e);
	if (ret > 0)
		ret = heap_push(ro, &e);
	if (ret) {
		slot_release(ro, e.slot);
		return -1;
	}
	ro->n++;
	if (!ro->held++ || h->ts < ro->head)
		ro->head = h->ts;
	return 0;
}

/* Take the first late record (ro->n > 0) out of the ring or the heap: its slot. */
static uint32_t late_pop(struct reorder *ro)
{
	const struct held *l = late_first(ro);

	ro->n--;
	if (l == ro->heap)
		return heap_pop(ro);
	ro->ring_n--;
	return ro->ring[ro->ring_out++ & ro->ring_mask].slot;
}

/* Hold a record: in the FIFO when it is not behind its newest, else as a late record. */
static inline int reorder_push(struct reorder *ro, const struct st_event_header *h)
{
	if (h->ts > UINT64_MAX - REORDER_NS)
		ro->eager = 1;
	return h->ts >= ro->fifo_newest ? fifo_push(ro, h) : late_push(ro, h);
}

/* The earliest held time, once records went out (ro->held > 0): the FIFO's first or the first late one. */
static inline void reorder_new_head(struct reorder *ro)
{
	const struct st_event_header *f = fifo_first(ro);

	ro->head = f ? f->ts : UINT64_MAX;
	if (ro->n && late_first(ro)->ts < ro->head)
		ro->head = late_first(ro)->ts;
}

/* Hand out the earliest record held (ro->held > 0): valid until the next call on ro. */
static inline __attribute__((always_inline)) const struct st_event_header *
reorder_pop(struct reorder *ro)
{
	const struct st_event_header *h = fifo_first(ro);

	if (h && !(ro->n && late_before(ro, h->ts, ro->fifo_out_count))) {
		fifo_skip(ro, st_record_span(h), 1);
	} else {
		ro->out_slot = late_pop(ro) + 1;
		h = slot_record(ro, ro->out_slot - 1);
		ro->held--;
	}
	if (ro->held)
		reorder_new_head(ro);
	return h;
}

/* Whether a held record dated ts goes out once it is the earliest: REORDER_NS old, or at the end. */
static inline int reorder_due(const struct reorder *ro, uint64_t ts, int at_end)
{
	return at_end || ts + REORDER_NS <= ro->newest;
}

/*
 * The held records due, earliest first, copied into buf after *used as
 * st_cursor_fill() lays them out: runs of the FIFO a copy each. 0 when buf
 * is full before them all.
 */
static int reorder_drain(struct reorder *ro, int at_end, uint8_t *buf, size_t cap, size_t *used)
{
	/* without `eager` no record is held past the clock's end - REORDER_NS: due is a bound */
	uint64_t due_max = at_end ? UINT64_MAX : ro->newest - REORDER_NS;
	int room = 1;

	if (!at_end && !ro->eager && ro->newest < REORDER_NS)
		return 1;
	while (room && ro->held) {
		const struct st_event_header *f = fifo_first(ro);
		size_t start = ro->fifo_out, at = start, end, fit = start + (cap - *used);
		uint64_t count = 0, late_ts = UINT64_MAX, late_at = UINT64_MAX;

		if (!f || (ro->n && late_before(ro, f->ts, ro->fifo_out_count))) {
			const struct held *l = late_first(ro);

			if (!reorder_due(ro, l->ts, at_end))
				break;
			if (!(room = st_fill_append(buf, cap, used, slot_record(ro, l->slot))))
				break;
			slot_release(ro, late_pop(ro));
			ro->held--;
			continue;
		}
		/* the FIFO's records due before the first late one (late_before()), in this stretch of the ring */
		if (ro->n) {
			const struct held *l = late_first(ro);

			late_ts = l->ts;
			late_at = l->fifo_at;
		}
		end = ro->fifo_wrapped ? ro->fifo_end : ro->fifo_in;
		/*
		 * Most are due and dated before the first late record: one
		 * bound on their times, and the buffer's room checked once past
		 * them; the walk below takes the rest (ties with a late record,
		 * an eager window).
		 */
		if (!ro->eager) {
			uint64_t below = due_max < late_ts ? due_max + 1 : late_ts;
			size_t stop = end < fit ? end : fit, before = at;

			while (at < stop) {
				f = (const struct st_event_header *)(fifo_bytes(ro) + at);
				if (f->ts >= below)
					break;
				before = at;
				at += st_record_span(f);
				count++;
			}
			/* (the last one taken ends past the room) */
			if (at > fit) {
				at = before;
				count--;
				room = 0;
				end = at;
			}
		}
		while (at < end) {
			f = (const struct st_event_header *)(fifo_bytes(ro) + at);
			if (!(ro->eager ? reorder_due(ro, f->ts, at_end) : f->ts <= due_max) ||
			    !(f->ts < late_ts || (f->ts == late_ts && late_at > ro->fifo_out_count + count)))
				break;
			if (st_record_span(f) > fit - at) {
				room = 0;
				break;
			}
			at += st_record_span(f);
			count++;
		}
		/* (none: the first is not due, or does not fit) */
		if (!count)
			break;
		memcpy(buf + *used, fifo_bytes(ro) + start, at - start);
		*used += at - start;
		fifo_skip(ro, at - start, count);
	}
	if (ro->held)
		reorder_new_head(ro);
	return room;
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
		slot_release(ro, late_pop(ro));
	ro->held = 0;
	ro->fifo_out = ro->fifo_in = 0;
	ro->fifo_in_count = ro->fifo_out_count = 0;
	ro->fifo_wrapped = 0;
	ro->fifo_lim = ro->fifo.cap;
	ro->eager = 0;
	ro->pending = ro->pending_end = NULL;
	ro->fifo_newest = 0;
	ro->newest = 0;
}

static void reorder_free(struct reorder *ro)
{
	reorder_clear(ro);
	free(ro->heap);
	free(ro->ring);
	st_chunk_buf_free(&ro->fifo);
	free(ro->slots.rec);
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
static void note_requeue(struct st_whole *w, uint64_t rq)
{
	if (w->nrequeued == REQUEUED_MAX)
		memmove(w->requeued, w->requeued + 1, --w->nrequeued * sizeof(*w->requeued));
	w->requeued[w->nrequeued++] = rq;
}

/* Whether rq's issue is a requeued request's; forgets it. */
static int take_requeued(struct st_whole *w, uint64_t rq)
{
	unsigned i;

	for (i = 0; i < w->nrequeued; i++)
		if (w->requeued[i] == rq) {
			w->requeued[i] = w->requeued[--w->nrequeued];
			return 1;
		}
	return 0;
}

/* Fibonacci hashing spreads kernel addresses, which share their low bits. */
static size_t seen_slot(uint64_t addr)
{
	return (addr * 0x9e3779b97f4a7c15ull) >> 32 & (SEEN_SLOTS - 1);
}

static struct bio_seen *bio_seen_slot(struct st_whole *w, uint64_t bio)
{
	return &w->bio_seen[seen_slot(bio)];
}

static void note_bio(struct st_whole *w, uint64_t bio, uint64_t ts)
{
	if (bio)
		*bio_seen_slot(w, bio) = (struct bio_seen){ .bio = bio, .ts = ts };
}

/*
 * A stamped issue: its bios live at least until then, and until its
 * request completes. (Inline, as note_complete() and stage_first(): once
 * per I/O, in either reading of stamped issues.)
 */
static inline __attribute__((always_inline)) void
note_issue(struct st_whole *w, const struct st_ev_block_rq_issue_stamped *e)
{
	struct rq_seen *r = &w->rq_seen[seen_slot(e->p.rq)];
	uint32_t n = e->p.nr_bios < ST_RQ_BIOS ? e->p.nr_bios : ST_RQ_BIOS, i;

	r->rq = e->p.rq;
	r->nbios = n;
	for (i = 0; i < n; i++) {
		r->bios[i] = e->p.bios[i];
		note_bio(w, r->bios[i], e->h.ts);
	}
	r->bios[ST_RQ_BIOS] = e->p.nr_bios > ST_RQ_BIOS ? e->p.rq + 1 : 0;
	note_bio(w, r->bios[ST_RQ_BIOS], e->h.ts);
}

/* A completion ends the lives of its request's bios (and of the bio it names, issued or not). */
static inline __attribute__((always_inline)) void
note_complete(struct st_whole *w, const struct st_ev_block_rq_complete *e)
{
	const struct rq_seen *r = &w->rq_seen[seen_slot(e->p.rq)];
	unsigned i;

	note_bio(w, e->p.bio, e->h.ts);
	if (r->rq != e->p.rq)
		return;
	for (i = 0; i < r->nbios; i++)
		note_bio(w, r->bios[i], e->h.ts);
	note_bio(w, r->bios[ST_RQ_BIOS], e->h.ts);
}

/* t, or the last event seen of bio's address (its queueing, or its previous life's end) when later. */
static uint64_t after_previous_use(struct st_whole *w, uint64_t bio, uint64_t t)
{
	const struct bio_seen *s = bio_seen_slot(w, bio);

	return s->bio == bio && s->ts > t ? s->ts : t;
}

/*
 * What record h (made whole) tells of the lives of bios and requests, for
 * the stages dated later: a bio's queueing, a requeue, a completion.
 */
static inline __attribute__((always_inline)) void
note_record(struct st_whole *w, const struct st_event_header *h)
{
	switch (h->type) {
	case ST_EV_block_bio_queue:
		note_bio(w, ((const struct st_ev_block_bio *)h)->p.bio, h->ts);
		break;
	case ST_EV_block_rq_requeue:
		note_requeue(w, ((const struct st_ev_block_rq *)h)->p.rq);
		break;
	case ST_EV_block_rq_complete:
		note_complete(w, (const struct st_ev_block_rq_complete *)h);
		break;
	}
}

/* The events a stamped issue stands for, as stage_first() and stage_dates() date them. */
struct stages {
	int again;		/* issued again after a requeue: it stands for no stage event */
	int queue, merge;	/* it stands for its bios' queue (merge) events */
	uint64_t g;		/* its request's allocation, 0 none stamped */
	uint64_t fallback;	/* an unstamped bio's queueing: the allocation stamped, else the issue */
	uint64_t q[ST_RQ_BIOS], at[ST_RQ_BIOS];	/* each stored bio's queueing and sector */
	uint32_t len[ST_RQ_BIOS];
	uint32_t n, first;	/* stored bios; the one that got the request */
	uint32_t rest;		/* bios past the stored ones, queued (and merged) at rest_q */
	uint64_t rest_q, rest_sector;
	uint32_t rest_left;	/* the sectors they share */
};

/*
 * What a stamped issue stands for, and which stored bio got the request
 * (the stamps' word: the earliest queued), dated from the stamps alone.
 */
static inline __attribute__((always_inline)) void
stage_first(struct st_whole *w, const struct st_ev_block_rq_issue_stamped *e, struct stages *s)
{
	uint32_t i;

	s->again = take_requeued(w, e->p.rq);
	s->queue = w->synth_queue && !s->again;
	s->merge = w->synth_merge && !s->again;
	s->g = e->p.stamped & ST_STAMPED_GETRQ ? e->h.ts - e->p.getrq_ago : 0;
	s->fallback = s->g ? s->g : e->h.ts;
	s->n = e->p.nr_bios < ST_RQ_BIOS ? e->p.nr_bios : ST_RQ_BIOS;
	s->first = 0;
	for (i = 0; i < s->n; i++) {
		s->q[i] = e->p.stamped & ST_STAMPED_QUEUE(i) ? e->h.ts - e->p.queue_ago[i] : s->fallback;
		if (s->q[i] < s->q[s->first])
			s->first = i;
	}
	/*
	 * A bio is dated no earlier than its address's previous life; the
	 * request was allocated for its first bio, so not before that bio was
	 * queued.
	 */
	if (s->n) {
		s->q[s->first] = after_previous_use(w, e->p.bios[s->first], s->q[s->first]);
		if (s->g && s->g < s->q[s->first])
			s->g = s->q[s->first];
	}
}

/* The other bios' dates, and the sectors of all, for the events made of them. */
static void stage_dates(struct st_whole *w, const struct st_ev_block_rq_issue_stamped *e,
			struct stages *s)
{
	uint64_t sector = e->p.sector;
	uint32_t i, left = e->p.nr_sector;

	for (i = 0; i < s->n; i++) {
		s->len[i] = e->p.bio_sectors[i] < left ? e->p.bio_sectors[i] : left;
		s->at[i] = sector;
		sector += s->len[i];
		left -= s->len[i];
		if (i != s->first)
			s->q[i] = after_previous_use(w, e->p.bios[i], s->q[i]);
	}
	/*
	 * One the kernel kept no stamp for is dated no earlier than the one it
	 * follows in the chain (back merges append, front merges prepend): a
	 * bio dated later for its address dates those too.
	 */
	for (i = s->first + 1; i < s->n; i++)
		if (!(e->p.stamped & ST_STAMPED_QUEUE(i)) && s->q[i] < s->q[i - 1])
			s->q[i] = s->q[i - 1];
	for (i = s->first; i-- > 0;)
		if (!(e->p.stamped & ST_STAMPED_QUEUE(i)) && s->q[i] < s->q[i + 1])
			s->q[i] = s->q[i + 1];
	s->rest = s->queue && e->p.nr_bios > s->n ?
		  (e->p.nr_bios < ST_RQ_BIOS_COUNTED ? e->p.nr_bios : ST_RQ_BIOS_COUNTED) - s->n : 0;
	/* they joined the chain at its end, after the stored bios */
	s->rest_q = s->rest ? after_previous_use(w, e->p.rq + 1, s->fallback) : s->fallback;
	for (i = 0; s->rest && i < s->n; i++)
		if (s->q[i] > s->rest_q)
			s->rest_q = s->q[i];
	s->rest_sector = sector;
	s->rest_left = left;
}

/* When bio i of the stamped issue planned in s merged: at its queueing, unstamped at the issue. */
static uint64_t merge_date(const struct st_ev_block_rq_issue_stamped *e, const struct stages *s,
			   uint32_t i)
{
	return s->queue || e->p.stamped & ST_STAMPED_QUEUE(i) ? s->q[i] : e->h.ts;
}

/* Whether the stamped issue planned in s stands for a block_getrq. */
static int stands_for_getrq(const struct st_whole *w, const struct stages *s)
{
	return w->synth_getrq && !s->again && s->g && s->n;
}

/*
 * e as itself (ST_CURSOR_STAMPED) at out: its `stamped` word telling the
 * allocation and the stored bios' merges s plans, dated as the events
 * synthesize() makes of them (their dates in s: stage_dates() where merges
 * are told).
 */
static void tell_stages(const struct st_whole *w, const struct st_ev_block_rq_issue_stamped *e,
			const struct stages *s, struct st_ev_block_rq_issue_stamped *out)
{
	uint32_t i;

	*out = *e;
	out->p.stamped = e->p.stamped & ~(ST_STAMPED_GETRQ | ST_STAMPED_RESOLVED);
	out->p.getrq_ago = 0;
	if (stands_for_getrq(w, s)) {
		out->p.stamped |= ST_STAMPED_GETRQ | ST_STAMPED_FIRST_BIO(s->first);
		out->p.getrq_ago = (uint32_t)(e->h.ts - s->g);
	}
	for (i = 0; s->merge && i < s->n; i++)
		if (i != s->first) {
			out->p.stamped |= ST_STAMPED_MERGED(i);
			out->p.queue_ago[i] = (uint32_t)(e->h.ts - merge_date(e, s, i));
		}
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
static int synthesize(struct st_whole *w, const struct st_ev_block_rq_issue_stamped *e)
{
	struct reorder *ro = &w->ro;
	struct stages s;
	uint64_t sector;
	uint32_t i, left;
	union {
		struct st_ev_block_rq_issue plain;
		struct st_ev_block_rq_issue_stamped told;
	} issue;
	/* resolve_late: the stored bios' allocation and merges told by the issue, not made */
	int make = !w->resolve_late;
	int ret = 0;

	stage_first(w, e, &s);
	stage_dates(w, e, &s);
	note_issue(w, e);
	if (s.queue && s.n)
		ret |= push_bio(ro, e, ST_EV_block_bio_queue, s.q[s.first], e->p.bios[s.first],
				s.at[s.first], s.len[s.first]);
	if (make && stands_for_getrq(w, &s))
		ret |= push_bio(ro, e, ST_EV_block_getrq, s.g, e->p.bios[s.first], s.at[s.first],
				s.len[s.first]);
	for (i = 0; i < s.n && (s.queue || s.merge); i++) {
		uint64_t merged;

		if (i == s.first)
			continue;
		merged = merge_date(e, &s, i);
		if (s.queue)
			ret |= push_bio(ro, e, ST_EV_block_bio_queue, s.q[i], e->p.bios[i], s.at[i],
					s.len[i]);
		if (make && s.merge)
			ret |= push_bio(ro, e, i < s.first ? ST_EV_block_bio_frontmerge :
					ST_EV_block_bio_backmerge, merged, e->p.bios[i], s.at[i], s.len[i]);
	}
	sector = s.rest_sector;
	left = s.rest_left;
	for (i = 0; i < s.rest; i++) {
		uint32_t len_i = left / (s.rest - i);

		ret |= push_bio(ro, e, ST_EV_block_bio_queue, s.rest_q, e->p.rq + 1 + i, sector, len_i);
		if (s.merge)
			ret |= push_bio(ro, e, ST_EV_block_bio_backmerge, s.rest_q, e->p.rq + 1 + i,
					sector, len_i);
		sector += len_i;
		left -= len_i;
	}
	if (!make) {
		tell_stages(w, e, &s, &issue.told);
		return ret | reorder_push(ro, &issue.told.h);
	}
	memcpy(&issue.plain, e, sizeof(issue.plain));
	issue.plain.h.type = ST_EV_block_rq_issue;
	issue.plain.h.size = sizeof(issue.plain);
	return ret | reorder_push(ro, &issue.plain.h);
}

/*
 * A stamped issue as itself (ST_CURSOR_STAMPED), its `stamped` word the
 * events it stands for, dated as synthesize() dates them. A file read so
 * has its queue events (the mode's condition): only the allocation and
 * the merges are left, none after the issue (a bio's previous life ended
 * before it, in the file's time order).
 */
static const struct st_event_header *resolve_stamped(struct st_whole *w,
						     const struct st_ev_block_rq_issue_stamped *e,
						     struct st_ev_block_rq_issue_stamped *out)
{
	struct stages s;

	stage_first(w, e, &s);
	if (s.merge && s.n > 1)
		stage_dates(w, e, &s);
	note_issue(w, e);
	tell_stages(w, e, &s, out);
	return &out->h;
}

/* ---- compact completions: made whole from their requests' issues ------- */

/* Fibonacci hashing spreads kernel addresses, which share their low bits. */
static size_t issued_home(const struct issued *is, uint64_t rq)
{
	return (size_t)((rq * 0x9e3779b97f4a7c15ull) >> 32) & is->mask;
}

static void issued_free(struct issued *is)
{
	free(is->tab);
	*is = (struct issued){ 0 };
}

/* Request rq's entry, NULL when it has none. */
static inline __attribute__((always_inline)) struct issued_rq *
issued_find(const struct issued *is, uint64_t rq)
{
	size_t i;

	if (!is->tab || !rq)
		return NULL;
	for (i = issued_home(is, rq); is->tab[i].rq; i = (i + 1) & is->mask)
		if (is->tab[i].rq == rq)
			return &is->tab[i];
	return NULL;
}

/* Twice the entries (2048 at first): the load stays under a half. */
static __attribute__((cold)) int issued_grow(struct issued *is)
{
	struct issued old = *is;
	size_t cap = old.tab ? (old.mask + 1) * 2 : 2048, i;

	if (!(is->tab = calloc(cap, sizeof(*is->tab)))) {
		*is = old;
		return -1;
	}
	is->mask = cap - 1;
	for (i = 0; old.tab && i <= old.mask; i++) {
		size_t k;

		if (!old.tab[i].rq)
			continue;
		for (k = issued_home(is, old.tab[i].rq); is->tab[k].rq; k = (k + 1) & is->mask)
			;
		is->tab[k] = old.tab[i];
	}
	free(old.tab);
	return 0;
}

/*
 * Request rq's entry (rq != 0), a new one when it has none, for the caller
 * to write whole (rq first: until then a new one reads as free); NULL when
 * out of memory. One probe finds it or the free entry a new one takes,
 * unless the table must grow first.
 */
static inline __attribute__((always_inline)) struct issued_rq *
issued_entry(struct issued *is, uint64_t rq)
{
	size_t i;

	if (!is->tab && issued_grow(is))
		return NULL;
	for (i = issued_home(is, rq); is->tab[i].rq; i = (i + 1) & is->mask)
		if (is->tab[i].rq == rq)
			return &is->tab[i];
	if ((is->count + 1) * 2 > is->mask + 1) {
		if (issued_grow(is))
			return NULL;
		for (i = issued_home(is, rq); is->tab[i].rq; i = (i + 1) & is->mask)
			;
	}
	is->count++;
	return &is->tab[i];
}

/* Forget entry r: later members of its probe run move back into the hole. */
static inline __attribute__((always_inline)) void issued_del(struct issued *is, struct issued_rq *r)
{
	size_t i = (size_t)(r - is->tab), j = i, home;

	for (;;) {
		j = (j + 1) & is->mask;
		if (!is->tab[j].rq)
			break;
		home = issued_home(is, is->tab[j].rq);
		/* Entry j may fill hole i only if its home is not in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			is->tab[i] = is->tab[j];
			i = j;
		}
	}
	is->tab[i].rq = 0;
	is->count--;
}

/* An issue (block_rq_issue, or the stamped one, which extends it): what the request's completion leaves out. */
static inline __attribute__((always_inline)) int issued_note(struct issued *is,
							     const struct st_ev_block_rq_issue *e)
{
	struct issued_rq *r;

	/* a NULL request is no kernel's: its completion finds no issue */
	if (!e->p.rq)
		return 0;
	if (!(r = issued_entry(is, e->p.rq)))
		return -1;
	*r = (struct issued_rq){ .rq = e->p.rq, .sector = e->p.sector,
				 .bio = e->p.nr_bios ? e->p.bios[0] : 0,
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
static inline __attribute__((always_inline)) const struct st_event_header *
whole_of_compact(struct st_whole *w, const struct st_ev_block_rq_complete_compact *e,
		 struct st_ev_block_rq_complete *c)
{
	struct issued_rq *r = issued_find(&w->issued, e->p.rq);

	*c = (struct st_ev_block_rq_complete){ .h = e->h };
	c->h.type = ST_EV_block_rq_complete;
	c->h.size = sizeof(*c);
	c->p.rq = e->p.rq;
	c->p.dev = e->p.dev;
	c->p.bytes = e->p.bytes;
	c->p.nr_sector = e->p.bytes >> 9;
	c->p.error = e->p.error;
	if (r) {
		c->p.sector = r->bytes ? r->sector + (r->done >> 9) : 0;
		c->p.opf = r->opf;
		c->p.bio = r->bio;
		r->done += e->p.bytes;
		if (r->done >= r->bytes)
			issued_del(&w->issued, r);
	}
	return &c->h;
}

/*
 * issued_note() and whole_of_compact() out of line, for the loops they
 * would grow (the window's; resolve_run()'s, for a plain issue):
 * resolve_made(), once per I/O with stamped issues resolved, has them
 * inline.
 */
static __attribute__((noinline)) int note_issued(struct issued *is,
						const struct st_ev_block_rq_issue *e)
{
	return issued_note(is, e);
}

static __attribute__((noinline)) const struct st_event_header *
make_whole(struct st_whole *w, const struct st_ev_block_rq_complete_compact *e,
	   struct st_ev_block_rq_complete *c)
{
	return whole_of_compact(w, e, c);
}

/* Issues noted, a compact completion made whole at out; NULL when out of memory. */
static inline const struct st_event_header *complete_whole(struct st_whole *w,
							  const struct st_event_header *h, void *out)
{
	switch (h->type) {
	case ST_EV_block_rq_issue:
	case ST_EV_block_rq_issue_stamped:
		return note_issued(&w->issued, (const struct st_ev_block_rq_issue *)h) ? NULL : h;
	case ST_EV_block_rq_complete_compact:
		return make_whole(w, (const struct st_ev_block_rq_complete_compact *)h, out);
	}
	return h;
}

/* ---- the next whole event --------------------------------------------- */

/* The next event, compact completions made whole (the cursor adapted the layouts). */
static inline int raw_next(struct st_whole *w, struct st_cursor *c, const struct st_event_header **ev)
{
	int ret = st_cursor_stored_next(c, ev);

	if (ret > 0 && w->compact && !(*ev = complete_whole(w, *ev, w->made)))
		return ST_ENOMEM;
	return ret;
}

/*
 * The next event of the file for the window: the first of those left
 * pending, else the cursor's; compact completions made whole.
 */
static inline __attribute__((always_inline)) int
reorder_read(struct st_whole *w, struct st_cursor *c, const struct st_event_header **h)
{
	struct reorder *ro = &w->ro;

	if (ro->pending < ro->pending_end) {
		*h = (const struct st_event_header *)ro->pending;
		ro->pending += (*h)->size;
		if (w->compact && !(*h = complete_whole(w, *h, w->made)))
			return ST_ENOMEM;
		return 1;
	}
	return raw_next(w, c, h);
}

/* Event h of the file into the window: the records it stands for held. */
static inline __attribute__((always_inline)) int reorder_take(struct st_whole *w,
							       const struct st_event_header *h)
{
	struct reorder *ro = &w->ro;

	if (h->ts > ro->newest)
		ro->newest = h->ts;
	note_record(w, h);
	if (h->type != ST_EV_block_rq_issue_stamped ?
	    reorder_push(ro, h) :
	    w->stamped_ok && synthesize(w, (const struct st_ev_block_rq_issue_stamped *)h))
		return ST_ENOMEM;
	return 0;
}

/*
 * Whether a record event h stands for may be dated before a held record
 * already due (and must go out after it): none can be earlier than h's
 * time, or for a stamped issue than its earliest stamp (synthesize() only
 * moves its times later), and due records are REORDER_NS before the
 * newest. A bound past the clock's end wraps: then it may.
 */
static inline int reorder_may_precede(const struct st_whole *w, const struct st_event_header *h)
{
	const struct st_ev_block_rq_issue_stamped *e = (const void *)h;
	uint64_t earliest = h->ts;
	unsigned i;

	if (w->ro.eager)
		return 1;
	if (h->type == ST_EV_block_rq_issue_stamped && w->stamped_ok) {
		if (e->p.stamped & ST_STAMPED_GETRQ && e->h.ts - e->p.getrq_ago < earliest)
			earliest = e->h.ts - e->p.getrq_ago;
		for (i = 0; i < ST_RQ_BIOS && i < e->p.nr_bios; i++)
			if (e->p.stamped & ST_STAMPED_QUEUE(i) && e->h.ts - e->p.queue_ago[i] < earliest)
				earliest = e->h.ts - e->p.queue_ago[i];
	}
	return earliest + REORDER_NS <= w->ro.newest;
}

/*
 * A file with stamped issues read ahead until its earliest held record is
 * REORDER_NS older than the newest read: 1, or 0 at the end, <0 an error.
 */
static inline __attribute__((always_inline)) int reorder_fill(struct st_whole *w, struct st_cursor *c)
{
	struct reorder *ro = &w->ro;
	int ret = 1;

	while (!ro->held || ro->head + REORDER_NS > ro->newest) {
		const struct st_event_header *h;

		ret = reorder_read(w, c, &h);
		if (ret <= 0)
			break;
		if (reorder_take(w, h))
			return ST_ENOMEM;
	}
	return ret;
}

#define DRAIN_EVERY 256	/* events st_whole_fill() reads between copies of the due records */

/*
 * How many records from p on (before end, at most max) the window takes
 * as they are, in one copy into the FIFO, with *bytes their length and
 * *last_ts the last one's time. The caller found p's type not `noted`;
 * the run goes on while the types are not noted either, and no record is
 * within REORDER_NS of the clock's end (which makes the window eager). It
 * is empty when p is dated before the newest read (its record waits as a
 * late one). A run of the cursor's is in time order, so none of them waits
 * as late nor stands for a record dated before one due; their sizes
 * are multiples of 8 (the decoder checks the stored ones, the built-in
 * layouts are), so copied together they lie as st_cursor_fill() lays
 * them out.
 */
static inline __attribute__((always_inline)) unsigned
plain_run(const struct st_whole *w, const uint8_t *p, const uint8_t *end, unsigned max,
	  size_t *bytes, uint64_t *last_ts)
{
	const struct st_event_header *first = (const void *)p;
	const uint8_t *q = p + first->size;
	unsigned n = 1;

	if (!max || w->ro.eager || first->ts < w->ro.newest || first->ts < w->ro.fifo_newest ||
	    first->ts > UINT64_MAX - REORDER_NS)
		return 0;
	*last_ts = first->ts;
	while (q < end && n < max) {
		const struct st_event_header *h = (const void *)q;

		if (w->noted[h->type] || h->ts > UINT64_MAX - REORDER_NS)
			break;
		*last_ts = h->ts;
		q += h->size;
		n++;
	}
	*bytes = (size_t)(q - p);
	return n;
}

/*
 * st_whole_fill() of a file with stamped issues: the records due go out a
 * run at a time, after every DRAIN_EVERY events read, and before an event
 * that may stand for a record dated before them. Until then what is read
 * comes after them in time order, so they go out in the order
 * st_whole_next() gives. The cursor's records come a run at a time; those
 * that plain_run() finds go into the FIFO in one copy.
 */
static int reordered_fill(struct st_whole *w, struct st_cursor *c, uint8_t *buf, size_t cap,
			  size_t *used)
{
	struct reorder *ro = &w->ro;
	unsigned unread = DRAIN_EVERY;
	int ret;

	reorder_done(ro);
	for (;;) {
		const uint8_t *p = ro->pending, *end = ro->pending_end;

		ro->pending = ro->pending_end = NULL;
		if (p == end) {
			ret = st_cursor_stored_run(c, &p, &end);
			if (ret < 0)
				return ret;
			/* the end: all held go out, at a live file's end only the due ones */
			if (!ret)
				return !reorder_drain(ro, !st_reader_live(w->r), buf, cap, used);
		}
		while (p < end) {
			const struct st_event_header *h = (const void *)p;
			size_t bytes;
			uint64_t last_ts;
			unsigned n;

			/* (none of them brings `unread` to 0: that one drains first) */
			if (!w->noted[h->type] && (n = plain_run(w, p, end, unread - 1, &bytes, &last_ts))) {
				if (fifo_put(ro, p, bytes, bytes, n, h->ts, last_ts))
					return ST_ENOMEM;
				ro->newest = last_ts;
				unread -= n;
				p += bytes;
				continue;
			}
			if (!--unread || reorder_may_precede(w, h)) {
				unread = DRAIN_EVERY;
				if (!reorder_drain(ro, 0, buf, cap, used)) {
					ro->pending = p;
					ro->pending_end = end;
					return 1;
				}
			}
			p += h->size;
			if (w->compact && !(h = complete_whole(w, h, w->made)))
				return ST_ENOMEM;
			if (reorder_take(w, h))
				return ST_ENOMEM;
		}
	}
}

/*
 * A NOTED_PASS record read with stamped issues resolved, handed out as
 * stored: what it tells noted, complete_whole()'s step (an issue's) or
 * note_record()'s, their types apart; <0 out of memory.
 */
static inline __attribute__((always_inline)) int
note_passed(struct st_whole *w, const struct st_event_header *h)
{
	if (h->type == ST_EV_block_rq_issue)
		return w->compact && note_issued(&w->issued, (const struct st_ev_block_rq_issue *)h) ?
		       ST_ENOMEM : 0;
	note_record(w, h);
	return 0;
}

/*
 * A NOTED_MAKE record read with stamped issues resolved, written at out
 * (room for any built-in record) as the event to hand out: its bytes
 * there, 0 when it is left out (a stamped issue of a file with plain
 * ones), <0 out of memory. What complete_whole() and note_record() do
 * for its two types, each tested once.
 */
static inline __attribute__((always_inline)) int
resolve_made(struct st_whole *w, const struct st_event_header *h, uint8_t *out)
{
	if (h->type == ST_EV_block_rq_issue_stamped) {
		if (w->compact && issued_note(&w->issued, (const struct st_ev_block_rq_issue *)h))
			return ST_ENOMEM;
		if (!w->stamped_ok)
			return 0;
		h = resolve_stamped(w, (const void *)h, (void *)out);
	} else if (w->compact) {
		h = whole_of_compact(w, (const void *)h, (void *)out);
		note_complete(w, (const struct st_ev_block_rq_complete *)h);
	} else {
		/* a compact completion in a file whose counts have none: as stored */
		memcpy(out, h, h->size);
	}
	return (int)st_record_span(h);
}

/*
 * The next event with stamped issues resolved (ST_CURSOR_STAMPED), in the
 * stored time order: the rest of a run resolved_fill() left, then the cursor's.
 */
static int resolved_next(struct st_whole *w, struct st_cursor *c, const struct st_event_header **ev)
{
	int ret;

	for (;;) {
		if (w->pending < w->pending_end) {
			*ev = (const struct st_event_header *)w->pending;
			w->pending += (*ev)->size;
		} else if ((ret = st_cursor_stored_next(c, ev)) <= 0) {
			return ret;
		}
		if (w->noted[(*ev)->type] != NOTED_MAKE)
			return w->noted[(*ev)->type] && note_passed(w, *ev) ? ST_ENOMEM : 1;
		ret = resolve_made(w, *ev, (uint8_t *)w->made);
		if (ret < 0)
			return ret;
		if (ret) {
			*ev = (const struct st_event_header *)w->made;
			return 1;
		}
	}
}

/*
 * The records of a run from *p to end into buf from *used on
 * (resolved_fill()), *p moved past those that went in: those that pass as
 * stored a copy for each stretch of them (what the NOTED_PASS ones tell
 * noted on the way), a NOTED_MAKE one written as resolved when there is
 * room for any (MAX_RECORD: it is handled once). 0, or <0 out of memory.
 */
static int resolve_run(struct st_whole *w, const uint8_t **p, const uint8_t *end, uint8_t *buf,
		       size_t cap, size_t *used)
{
	const uint8_t *q = *p, *run = q;	/* run to q: records passed, not copied yet */
	size_t at = *used;
	size_t room = cap - at;	/* what buf has left past run to q: one test a record */
	int made, err = 0;

	while (q < end) {
		const struct st_event_header *h = (const void *)q;

		if (w->noted[h->type] != NOTED_MAKE) {
			/*
			 * Stored sizes are multiples of 8: records copied together
			 * lie as filled.
			 */
			if (h->size > room || (w->noted[h->type] && (err = note_passed(w, h))))
				break;
			room -= h->size;
			q += h->size;
			continue;
		}
		if (q > run) {
			memcpy(buf + at, run, (size_t)(q - run));
			at += (size_t)(q - run);
		}
		run = q;
		if (room < MAX_RECORD)
			break;
		if ((made = resolve_made(w, h, buf + at)) < 0) {
			err = made;
			break;
		}
		at += (size_t)made;
		room -= (size_t)made;
		q += h->size;
		run = q;
	}
	if (q > run) {
		memcpy(buf + at, run, (size_t)(q - run));
		at += (size_t)(q - run);
	}
	*used = at;
	*p = q;
	return err;
}

/*
 * st_whole_fill() with stamped issues resolved: the cursor's runs through
 * resolve_run(). What did not fit waits in pending. Out of line (once a
 * fill), so that its loop and the window's are compiled each on its own.
 */
static __attribute__((noinline)) int resolved_fill(struct st_whole *w, struct st_cursor *c,
						   uint8_t *buf, size_t cap, size_t *used)
{
	const uint8_t *p = w->pending, *end = w->pending_end;
	int ret;

	w->pending = w->pending_end = NULL;
	for (;;) {
		if (p == end && (ret = st_cursor_stored_run(c, &p, &end)) <= 0)
			return ret;
		if ((ret = resolve_run(w, &p, end, buf, cap, used)))
			return ret;
		if (p < end) {
			w->pending = p;
			w->pending_end = end;
			return 1;
		}
	}
}

/* The next event of a file with stamped issues: read ahead REORDER_NS, in time order. */
static inline __attribute__((always_inline)) int
reordered_next(struct st_whole *w, struct st_cursor *c, const struct st_event_header **ev)
{
	struct reorder *ro = &w->ro;
	int ret;

	reorder_done(ro);
	ret = reorder_fill(w, c);
	if (ret < 0)
		return ret;
	/* a live file's next events may still come before the held ones */
	if (!ro->held || (!ret && st_reader_live(w->r)))
		return 0;
	*ev = reorder_pop(ro);
	return 1;
}

static inline __attribute__((always_inline)) int
whole_next(struct st_whole *w, struct st_cursor *c, const struct st_event_header **ev)
{
	if (w->resolve)
		return resolved_next(w, c, ev);
	return w->stamped ? reordered_next(w, c, ev) : raw_next(w, c, ev);
}

int st_whole_next(struct st_whole *w, struct st_cursor *c, const struct st_event_header **ev)
{
	return whole_next(w, c, ev);
}

int st_whole_fill(struct st_whole *w, struct st_cursor *c, uint8_t *buf, size_t cap, size_t *used,
		  const struct st_event_header **left)
{
	const struct st_event_header *ev;
	int ret;

	if (w->resolve)
		return resolved_fill(w, c, buf, cap, used);
	if (w->stamped)
		return reordered_fill(w, c, buf, cap, used);
	while ((ret = raw_next(w, c, &ev)) > 0)
		if (!st_fill_append(buf, cap, used, ev)) {
			*left = ev;
			break;
		}
	return ret;
}

int st_whole_busy(const struct st_whole *w)
{
	return !w->plain || w->stamped || w->compact;
}

int st_whole_open(struct st_reader *r, unsigned flags, struct st_whole **wp)
{
	struct st_whole *w = calloc(1, sizeof(*w));

	*wp = w;
	if (!w)
		return ST_ENOMEM;
	w->r = r;
	w->noted[ST_EV_block_rq_requeue] = w->noted[ST_EV_block_rq_issue] = NOTED_PASS;
	w->noted[ST_EV_block_rq_complete] = NOTED_PASS;
	w->noted[ST_EV_block_rq_issue_stamped] = w->noted[ST_EV_block_rq_complete_compact] = NOTED_MAKE;
	plan_stamped(w);
	w->resolve = (flags & ST_CURSOR_STAMPED) && w->stamped && !w->synth_queue &&
		     !st_reader_live(r);
	w->resolve_late = (flags & ST_CURSOR_STAMPED) && w->stamped && w->synth_queue &&
			  !st_reader_live(r);
	return plan_types(w);
}

void st_whole_refresh(struct st_whole *w)
{
	plan_stamped(w);
}

void st_whole_close(struct st_whole *w)
{
	unsigned k;

	if (!w)
		return;
	for (k = 0; k < w->nadapters; k++)
		free(w->adapters[k].ops);
	reorder_free(&w->ro);
	issued_free(&w->issued);
	free(w);
}
