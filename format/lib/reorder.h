/* SPDX-License-Identifier: MIT */
/*
 * reorder.h - records held back for time order (reorder.c): the window a
 * file with stamped issues is read through. Those called for every event
 * are inline here; growing and draining are in reorder.c.
 */
#ifndef STTRACE_REORDER_H
#define STTRACE_REORDER_H

#include "internal.h"

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
	 * How far fifo_in may go without st_reorder_room(): fifo.cap, or while
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

/* Room for an entry of need bytes that does not fit at fifo_in (reorder.c). */
int st_reorder_room(struct reorder *ro, size_t need);
/* Hold a record behind the FIFO's newest: a copy in a slot, its place in the ring or the heap. */
int st_reorder_late(struct reorder *ro, const struct st_event_header *h);
/* Take the first late record (ro->n > 0) out of the ring or the heap: its slot. */
uint32_t st_reorder_late_pop(struct reorder *ro);
/* Let go of a late record's slot. */
void st_reorder_release(struct reorder *ro, uint32_t slot);
/*
 * The held records due, earliest first, copied into buf after *used as
 * st_cursor_fill() lays them out: runs of the FIFO a copy each. 0 when buf
 * is full before them all.
 */
int st_reorder_drain(struct reorder *ro, int at_end, uint8_t *buf, size_t cap, size_t *used);
void st_reorder_free(struct reorder *ro);

static inline int held_before(const struct held *a, const struct held *b)
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
static inline int late_before(const struct reorder *ro, uint64_t ts, uint64_t index)
{
	const struct held *l = late_first(ro);

	return l->ts < ts || (l->ts == ts && l->fifo_at <= index);
}

/* The FIFO's bytes. */
static inline uint8_t *fifo_bytes(const struct reorder *ro)
{
	return ro->fifo.data;
}

static inline const struct st_event_header *fifo_first(const struct reorder *ro)
{
	if (!ro->fifo_wrapped && ro->fifo_out == ro->fifo_in)
		return NULL;
	return (const struct st_event_header *)(fifo_bytes(ro) + ro->fifo_out);
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
	if (ro->fifo_in + need > ro->fifo_lim && st_reorder_room(ro, need))
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
static inline void fifo_skip(struct reorder *ro, size_t bytes, uint64_t count)
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

static inline const struct st_event_header *slot_record(struct reorder *ro, uint32_t slot)
{
	struct held_rec *rec = &ro->slots.rec[slot];

	return rec->copy ? rec->copy : &rec->bio.h;
}

/* Hold a record: in the FIFO when it is not behind its newest, else as a late record. */
static inline int reorder_push(struct reorder *ro, const struct st_event_header *h)
{
	if (h->ts > UINT64_MAX - REORDER_NS)
		ro->eager = 1;
	return h->ts >= ro->fifo_newest ? fifo_push(ro, h) : st_reorder_late(ro, h);
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
		ro->out_slot = st_reorder_late_pop(ro) + 1;
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

/* Let go of the record handed out last. */
static inline void reorder_done(struct reorder *ro)
{
	if (ro->out_slot)
		st_reorder_release(ro, ro->out_slot - 1);
	ro->out_slot = 0;
}

#endif /* STTRACE_REORDER_H */
