/* SPDX-License-Identifier: MIT */
/* reorder.c - the window's slow steps: growing, late records, draining (reorder.h). */
#include <stdlib.h>

#include "reorder.h"

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
int st_reorder_room(struct reorder *ro, size_t need)
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

void st_reorder_release(struct reorder *ro, uint32_t slot)
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
int st_reorder_late(struct reorder *ro, const struct st_event_header *h)
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
		st_reorder_release(ro, e.slot);
		return -1;
	}
	ro->n++;
	if (!ro->held++ || h->ts < ro->head)
		ro->head = h->ts;
	return 0;
}

/* Take the first late record (ro->n > 0) out of the ring or the heap: its slot. */
uint32_t st_reorder_late_pop(struct reorder *ro)
{
	const struct held *l = late_first(ro);

	ro->n--;
	if (l == ro->heap)
		return heap_pop(ro);
	ro->ring_n--;
	return ro->ring[ro->ring_out++ & ro->ring_mask].slot;
}

/*
 * The held records due, earliest first, copied into buf after *used as
 * st_cursor_fill() lays them out: runs of the FIFO a copy each. 0 when buf
 * is full before them all.
 */
int st_reorder_drain(struct reorder *ro, int at_end, uint8_t *buf, size_t cap, size_t *used)
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
			st_reorder_release(ro, st_reorder_late_pop(ro));
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

/* The records still held may own copies: let them go before the buffers. */
void st_reorder_free(struct reorder *ro)
{
	reorder_done(ro);
	while (ro->n)
		st_reorder_release(ro, st_reorder_late_pop(ro));
	free(ro->heap);
	free(ro->ring);
	st_chunk_buf_free(&ro->fifo);
	free(ro->slots.rec);
}
