/* SPDX-License-Identifier: MIT */
/*
 * cursor.c - events of a file in timestamp order.
 *
 * Events chunks are taken in order of their first timestamp. Each one in use
 * is a stream over its decoded records. One pass while decoding tells whether
 * the records are already in timestamp order (the common case): such a
 * stream is walked in place; otherwise it gets its record offsets sorted by
 * timestamp (records of a chunk are nearly sorted already, so an insertion
 * sort does it in about one pass). Streams sit in a binary min-heap keyed by
 * their next record; a chunk is decoded only once the smallest pending
 * timestamp reaches its first timestamp, so memory holds just the chunks that
 * overlap in time, and chunks wholly before `from` are never decompressed.
 *
 * Fast path: nothing can come between the records of the top stream that
 * precede the next chunk's first timestamp and the other streams' next
 * records (the chunks of a file recorded on several CPUs overlap in time),
 * so they are handed out as a run, without the heap: straight from the
 * decoded buffer when it is in order, else through its sorted keys. A file
 * recorded on two CPUs interleaves its two chunks in runs of a few records:
 * source_run() takes those straight from the two streams
 * (pair_run()), past the merge's general steps.
 *
 * Decode ahead (ST_CURSOR_AHEAD): the chunks to visit are known in order at
 * open, so a thread of the cursor's own decodes and indexes them, AHEAD_SLOTS
 * beyond the one the cursor takes next, into a ring of slots that activate()
 * takes in that same order. The streams, and so the events, are those the
 * cursor would have made itself; a chunk's error waits in its slot until the
 * cursor reaches the chunk, and becomes the reader's message only then.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/*
 * Decoded bytes a cursor may hold at once. Real traces overlap a few chunks;
 * a hostile file of many tiny frames all spanning the same time range must
 * get an error, not make the cursor decompress gigabytes into memory.
 */
#define ST_CURSOR_MAX_BYTES	(1ull << 30)

/* A key of the qsort fallback for badly shuffled chunks. */
struct sort_key {
	uint64_t ts;
	uint32_t off;	/* of the record in the chunk; ties keep file order */
	uint32_t pad;
};

struct stream {
	struct st_chunk_buf buf;
	int in_order;		/* records in timestamp order: walked in place, no keys */
	size_t pos, end;	/* next record and its end: byte offsets if in_order, else keys */
	/* Else timestamps and offsets of its records sorted by timestamp (two
	 * arrays: the insertion sort moves words it stored whole, no struct). */
	uint64_t *key_ts;
	uint32_t *key_off;
	size_t cap;
	size_t chunk;		/* index in the file, breaks timestamp ties between chunks */
	uint64_t last_ts;	/* of the chunk */
	uint64_t head_ts;	/* of the record at pos, while pos < end: the merge asks often */
};

/*
 * Chunks decoded ahead of the cursor at most: memory stays that many
 * chunks above the cursor's own (a chunk's raw bytes are at most
 * ST_MAX_CHUNK_RAW, st-record writes about 1 MiB).
 */
#define AHEAD_SLOTS	4

/* One chunk decoded ahead: its stream, or its error and the reader's words for it. */
struct ahead_slot {
	struct stream *s;
	int err;
	char why[200];
};

/*
 * The decoding thread and the cursor share the slots under `lock`: the
 * thread fills pending chunk k into slot k % AHEAD_SLOTS once the cursor has
 * taken chunk k - AHEAD_SLOTS (when it found every slot full, once half of
 * them are free again); the cursor takes chunk k once `decoded` > k,
 * leaving in the slot a spare stream for the thread to reuse (NULL: it
 * allocates one).
 */
struct ahead {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	size_t count;		/* the cursor's pending chunks, which never change (not live) */
	size_t decoded, taken;	/* pending chunks filled in / taken, counted from 0 */
	int stop;		/* the cursor closes */
	int thread_sleeps, cursor_sleeps;	/* who waits (never both): woken only then */
	struct ahead_slot slot[AHEAD_SLOTS];
};

struct st_cursor {
	struct st_reader *r;
	uint64_t from, to;
	uint64_t until;		/* events after it wait (st_cursor_extend), else `to` */
	size_t nchunks;		/* the reader's chunks the cursor has seen */
	size_t *pending;	/* events chunks to visit, by first timestamp */
	size_t npending, next, cap;
	uint64_t next_first;	/* first timestamp of pending[next], when next < npending */
	uint64_t stop;		/* records from this timestamp on wait: next_first, until + 1 */
	struct stream **heap;
	size_t nheap;
	struct stream **spare;	/* exhausted streams, kept for their buffers */
	size_t nspare;
	size_t nstreams;	/* allocated, for the capacity of heap and spare */
	uint64_t active_bytes;	/* raw bytes of the chunks on the heap */
	int advance;		/* the heap top's record was returned: move past it first */
	/* The fast path's run: in-order records, or keys of records in kbase. */
	const uint8_t *run, *run_end;
	const uint32_t *krun, *krun_end;
	const uint8_t *kbase;
	/* Whole events (no ST_CURSOR_RAW): whole.c, when the file needs it. */
	struct st_whole *whole;
	int whole_on;
	int adapt;		/* chunks read into this build's layouts as decoded */
	struct st_chunk_buf raw;	/* a chunk as stored, then (adapt, decoded here) */
	struct ahead *ahead;	/* ST_CURSOR_AHEAD on a reader that is not live */
	/* st_cursor_fill(): the event that did not fit, the error after those that did */
	const struct st_event_header *left;
	int fill_err;
};

static int key_cmp(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * Record at byte offset `off` of a decoded events chunk. st_chunk_decode()
 * checked every record's size, so the cursor walks them without checks.
 */
static const struct st_event_header *rec_at(const struct st_chunk_buf *b, size_t off)
{
	return (const void *)((const uint8_t *)b->data + off);
}

static const struct st_event_header *stream_rec(const struct stream *s)
{
	return rec_at(&s->buf, s->in_order ? s->pos : s->key_off[s->pos]);
}

static uint64_t stream_ts(const struct stream *s)
{
	return s->head_ts;
}

/* head_ts after pos moved; 0 when the stream is exhausted. */
static int stream_note_head(struct stream *s)
{
	if (s->pos >= s->end)
		return 0;
	s->head_ts = s->in_order ? stream_rec(s)->ts : s->key_ts[s->pos];
	return 1;
}

/* Moves past the current record; 0 when the stream is exhausted. */
static int stream_step(struct stream *s)
{
	s->pos += s->in_order ? stream_rec(s)->size : 1;
	return stream_note_head(s);
}

static int stream_less(const struct stream *a, const struct stream *b)
{
	uint64_t x = stream_ts(a), y = stream_ts(b);

	if (x != y)
		return x < y;
	return a->chunk < b->chunk;
}

static void sift_down(struct st_cursor *c, size_t i)
{
	struct stream **h = c->heap;

	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < c->nheap && stream_less(h[l], h[m]))
			m = l;
		if (l + 1 < c->nheap && stream_less(h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct stream *t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void sift_up(struct st_cursor *c, size_t i)
{
	struct stream **h = c->heap;

	while (i > 0 && stream_less(h[i], h[(i - 1) / 2])) {
		struct stream *t = h[i];
		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static struct stream *stream_get(struct st_cursor *c)
{
	struct stream *s;

	if (c->nspare)
		return c->spare[--c->nspare];
	s = calloc(1, sizeof(*s));
	if (s)
		c->nstreams++;
	return s;
}

static void stream_free(struct stream *s)
{
	st_chunk_buf_free(&s->buf);
	free(s->key_ts);
	free(s->key_off);
	free(s);
}

/*
 * One pass over a decoded chunk: 1 when its records are in timestamp order,
 * with pos..end the byte range of those in [from, to]; 0 when they are not.
 */
static int scan_in_order(struct stream *s, uint64_t from, uint64_t to)
{
	uint64_t prev = 0;

	s->pos = s->end = s->buf.len;
	for (size_t off = 0; off < s->buf.len; off += rec_at(&s->buf, off)->size) {
		uint64_t ts = rec_at(&s->buf, off)->ts;

		if (ts < prev)
			return 0;
		prev = ts;
		if (s->pos == s->buf.len && ts >= from)
			s->pos = off;
		if (s->end == s->buf.len && ts > to)
			s->end = off;
	}
	return 1;
}

/* Room for `count` keys. */
static int keys_reserve(struct stream *s, size_t count)
{
	uint64_t *ts = realloc(s->key_ts, count * sizeof(*ts));
	uint32_t *off;

	if (!ts)
		return ST_ENOMEM;
	s->key_ts = ts;
	off = realloc(s->key_off, count * sizeof(*off));
	if (!off)
		return ST_ENOMEM;
	s->key_off = off;
	s->cap = count;
	return 0;
}

/* The first n keys sorted by qsort, stable through the offset tie-break. */
static int qsort_keys(struct stream *s, size_t n)
{
	struct sort_key *k = malloc(n * sizeof(*k));

	if (!k)
		return ST_ENOMEM;
	for (size_t i = 0; i < n; i++)
		k[i] = (struct sort_key){ s->key_ts[i], s->key_off[i], 0 };
	qsort(k, n, sizeof(*k), key_cmp);
	for (size_t i = 0; i < n; i++) {
		s->key_ts[i] = k[i].ts;
		s->key_off[i] = k[i].off;
	}
	free(k);
	return 0;
}

/*
 * Keys of the `count` records of a decoded chunk sorted by timestamp (stable),
 * those in [from, to] kept. Each key is inserted as the walk makes it: the
 * records are nearly in order, so that is about one pass. A hostile or badly
 * shuffled chunk exhausts the budget of moves and is sorted by qsort instead,
 * so the work stays O(n log n).
 */
static int build_keys(struct stream *s, size_t count, uint64_t from, uint64_t to)
{
	size_t n = 0, budget = 8 * count + 64;
	uint64_t *ts;
	uint32_t *off;

	if (count > s->cap && keys_reserve(s, count))
		return ST_ENOMEM;
	ts = s->key_ts;
	off = s->key_off;
	for (size_t at = 0; at < s->buf.len && n < count; at += rec_at(&s->buf, at)->size) {
		uint64_t t = rec_at(&s->buf, at)->ts;
		size_t j = n++;

		for (; budget && j > 0 && ts[j - 1] > t; j--, budget--) {
			ts[j] = ts[j - 1];
			off[j] = off[j - 1];
		}
		ts[j] = t;
		off[j] = (uint32_t)at;
	}
	if (!budget && qsort_keys(s, n))
		return ST_ENOMEM;
	s->pos = 0;
	s->end = n;
	while (s->pos < n && ts[s->pos] < from)
		s->pos++;
	while (s->end > s->pos && ts[s->end - 1] > to)
		s->end--;
	return 0;
}

/*
 * Where the records of decoded chunk ci in [from, to] are, in timestamp
 * order. in_order: the decoder found them in order (a chunk wholly inside
 * [from, to] is then walked without a pass of its own).
 */
static int index_records(struct stream *s, const struct st_chunk_info *ci, int in_order,
			 uint64_t from, uint64_t to)
{
	if (in_order && from <= ci->first_ts && ci->last_ts <= to) {
		s->in_order = 1;
		s->pos = 0;
		s->end = s->buf.len;
		return 0;
	}
	s->in_order = scan_in_order(s, from, to);
	return s->in_order ? 0 : build_keys(s, ci->events, from, to);
}

/*
 * Chunk `chunk` decoded and indexed into s; an error of the chunk's bytes
 * with *why set, ST_ENOMEM with *why NULL. A file of another layout is
 * decoded into raw, then read into s in this build's (whole.c).
 */
static int fill_stream(const struct st_cursor *c, struct stream *s, size_t chunk,
		       struct st_chunk_buf *raw, const char **why)
{
	const struct st_chunk_info *ci = st_chunk_at(c->r, chunk);
	int err, in_order;

	s->chunk = chunk;
	s->last_ts = ci->last_ts;
	err = st_chunk_load(c->r, chunk, c->adapt ? raw : &s->buf, &in_order, why);
	/* adapted records get the cursor's own pass */
	if (!err && c->adapt) {
		err = st_whole_adapt_chunk(c->whole, raw, &s->buf, why);
		in_order = 0;
	}
	if (err)
		return err;
	*why = NULL;
	err = index_records(s, ci, in_order, c->from, c->to);
	if (!err)
		stream_note_head(s);
	return err;
}

static void *decode_ahead(void *arg)
{
	struct st_cursor *c = arg;
	struct ahead *a = c->ahead;
	struct st_chunk_buf raw = { 0 };	/* the chunks as stored, when adapted */

	for (size_t k = 0; k < a->count; k++) {
		struct ahead_slot *slot = &a->slot[k % AHEAD_SLOTS];
		const char *why = NULL;
		struct stream *s;
		int err, stop;

		pthread_mutex_lock(&a->lock);
		/* the slots full: a wake-up (a futex call) for every other chunk, not each one */
		if (!a->stop && k - a->taken >= AHEAD_SLOTS) {
			a->thread_sleeps = 1;
			while (!a->stop && k - a->taken > AHEAD_SLOTS / 2)
				pthread_cond_wait(&a->changed, &a->lock);
			a->thread_sleeps = 0;
		}
		s = slot->s;
		stop = a->stop;
		pthread_mutex_unlock(&a->lock);
		if (stop)
			break;
		if (!s)
			s = calloc(1, sizeof(*s));
		err = s ? fill_stream(c, s, c->pending[k], &raw, &why) : ST_ENOMEM;
		pthread_mutex_lock(&a->lock);
		slot->s = s;
		slot->err = err;
		snprintf(slot->why, sizeof(slot->why), "%s", why ? why : "");
		a->decoded = k + 1;
		if (a->cursor_sleeps)
			pthread_cond_broadcast(&a->changed);
		pthread_mutex_unlock(&a->lock);
	}
	st_chunk_buf_free(&raw);
	return NULL;
}

/*
 * Pending chunk k from its slot, once decoded; the slot gets the spare
 * stream the cursor would have reused. With `report`, the chunk's error
 * becomes the reader's message (before the slot is the thread's again).
 */
static int take_ahead(struct st_cursor *c, size_t k, int report, struct stream **sp)
{
	struct ahead *a = c->ahead;
	struct ahead_slot *slot = &a->slot[k % AHEAD_SLOTS];
	int err;

	pthread_mutex_lock(&a->lock);
	if (a->decoded <= k) {
		a->cursor_sleeps = 1;
		while (a->decoded <= k)
			pthread_cond_wait(&a->changed, &a->lock);
		a->cursor_sleeps = 0;
	}
	*sp = slot->s;
	err = slot->err;
	if (err && report && slot->why[0])
		st_chunk_fail(c->r, c->pending[k], err, slot->why);
	slot->s = c->nspare ? c->spare[--c->nspare] : NULL;
	a->taken = k + 1;
	if (a->thread_sleeps && a->decoded - a->taken <= AHEAD_SLOTS / 2)
		pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->lock);
	return err;
}

/*
 * The first timestamp of the next chunk to visit, kept: the merge asks for
 * it per record; and from it, or past `until`, the records that wait.
 */
static void note_next(struct st_cursor *c)
{
	c->stop = c->until < UINT64_MAX ? c->until + 1 : UINT64_MAX;
	if (c->next < c->npending) {
		c->next_first = st_chunk_at(c->r, c->pending[c->next])->first_ts;
		if (c->next_first < c->stop)
			c->stop = c->next_first;
	}
}

/* Decodes the next pending chunk into a stream on the heap. */
static int activate(struct st_cursor *c)
{
	size_t k = c->next++, chunk = c->pending[k];
	const struct st_chunk_info *ci = st_chunk_at(c->r, chunk);
	struct stream *s;
	const char *why;
	int err;

	note_next(c);
	if (c->active_bytes + ci->raw_size > ST_CURSOR_MAX_BYTES) {
		err = st_reader_fail(c->r, ST_EFORMAT,
				     "chunk %zu: more than %llu MiB of chunks overlap in time", chunk,
				     ST_CURSOR_MAX_BYTES >> 20);
		/* the chunk is passed over as without decoding ahead */
		if (c->ahead) {
			take_ahead(c, k, 0, &s);
			if (s)
				c->spare[c->nspare++] = s;
		}
		return err;
	}
	if (c->ahead) {
		err = take_ahead(c, k, 1, &s);
		if (!s)
			return ST_ENOMEM;
	} else {
		s = stream_get(c);
		if (!s)
			return ST_ENOMEM;
		err = fill_stream(c, s, chunk, &c->raw, &why);
		if (err && why)
			err = st_chunk_fail(c->r, chunk, err, why);
	}
	if (err || s->pos >= s->end) {
		c->spare[c->nspare++] = s;
		return err;
	}
	c->heap[c->nheap++] = s;
	c->active_bytes += s->buf.len;
	sift_up(c, c->nheap - 1);
	return 0;
}

/* Takes the heap top off the heap; its buffer stays valid until the next activate(). */
static void retire_top(struct st_cursor *c)
{
	struct stream *top = c->heap[0];

	c->spare[c->nspare++] = top;
	c->active_bytes -= top->buf.len;
	c->heap[0] = c->heap[--c->nheap];
	sift_down(c, 0);
}

/* Moves past the record returned last; retires its stream when exhausted. */
static void advance_top(struct st_cursor *c)
{
	c->advance = 0;
	if (stream_step(c->heap[0]))
		sift_down(c, 0);
	else
		retire_top(c);
}

static uint64_t pending_first_ts(const struct st_cursor *c)
{
	return c->next_first;
}

/* Position in s of its first record at or after `limit`, s->end if none. */
static size_t stream_until(const struct stream *s, uint64_t limit)
{
	size_t p = s->pos;

	if (!s->in_order) {
		while (p < s->end && s->key_ts[p] < limit)
			p++;
		return p;
	}
	while (p < s->end && rec_at(&s->buf, p)->ts < limit)
		p += rec_at(&s->buf, p)->size;
	return p;
}

/*
 * Fast path: the top stream's records before the next chunk's first
 * timestamp and before the head of every other stream on the heap need no
 * merging, so they become the run, and the stream moves past them (off the
 * heap when that was all of them, else to its place). 0 when there are none
 * (the top's next record has the other head's timestamp: the heap orders them).
 */
static int start_run(struct st_cursor *c)
{
	struct stream *top = c->heap[0];
	const uint8_t *data = top->buf.data;
	uint64_t limit = c->stop;	/* records from this timestamp on wait */
	size_t end = top->end;

	if (c->nheap > 1) {
		/* the least of the others is a child of the top */
		const struct stream *o = c->heap[1];

		if (c->nheap > 2 && stream_less(c->heap[2], o))
			o = c->heap[2];
		if (stream_ts(o) < limit)
			limit = stream_ts(o);
	}
	if (limit <= top->last_ts)
		end = stream_until(top, limit);
	if (end == top->pos)
		return 0;
	if (top->in_order) {
		c->run = data + top->pos;
		c->run_end = data + end;
	} else {
		c->kbase = data;
		c->krun = top->key_off + top->pos;
		c->krun_end = top->key_off + end;
	}
	top->pos = end;
	if (!stream_note_head(top)) {
		retire_top(c);
	} else if (c->nheap == 2) {
		/* two streams (a file of two CPUs): the heap's walk is one compare */
		if (stream_less(c->heap[1], top)) {
			c->heap[0] = c->heap[1];
			c->heap[1] = top;
		}
	} else if (c->nheap > 1) {
		sift_down(c, 0);
	}
	return 1;
}

/*
 * start_run() of two streams, the top's records in place (a file recorded
 * on two CPUs: runs of a few records), as [*begin, *end), straight from
 * the heap as it stands. 0 when the merge decides: the top's next record
 * is not before the other's head (a tie: the heap orders them), nor
 * before a chunk to decode or `until`.
 */
static int pair_run(struct st_cursor *c, const uint8_t **begin, const uint8_t **end)
{
	struct stream *top = c->heap[0], *other = c->heap[1];
	uint64_t limit = stream_ts(other) < c->stop ? stream_ts(other) : c->stop;
	const uint8_t *data = top->buf.data, *p = data + top->pos, *last = data + top->end;

	if (!top->in_order || stream_ts(top) >= limit)
		return 0;
	*begin = p;
	do
		p += ((const struct st_event_header *)p)->size;
	while (p < last && ((const struct st_event_header *)p)->ts < limit);
	*end = p;
	top->pos = (size_t)(p - data);
	if (p == last) {
		retire_top(c);
		return 1;
	}
	top->head_ts = ((const struct st_event_header *)p)->ts;
	if (stream_less(other, top)) {
		c->heap[0] = other;
		c->heap[1] = top;
	}
	return 1;
}

static inline int stored_next(struct st_cursor *c, const struct st_event_header **ev);

/* The next event by merging the streams, or from a run the fast path starts. */
static int next_merged(struct st_cursor *c, const struct st_event_header **ev)
{
	const struct stream *top;
	int err;

	if (c->advance)
		advance_top(c);
	while (c->next < c->npending && (!c->nheap || pending_first_ts(c) <= stream_ts(c->heap[0]))) {
		err = activate(c);
		if (err)
			return err;
	}
	/* Streams end before `to` (index_records()), so the heap's end is the end. */
	if (!c->nheap)
		return 0;
	top = c->heap[0];
	if (stream_ts(top) > c->until)
		return 0;
	if (start_run(c))
		return stored_next(c, ev);
	*ev = stream_rec(top);
	c->advance = 1;
	return 1;
}

/* The next stored record in timestamp order. */
static inline int stored_next(struct st_cursor *c, const struct st_event_header **ev)
{
	if (c->run < c->run_end) {
		const struct st_event_header *e = (const void *)c->run;

		c->run += e->size;
		*ev = e;
		return 1;
	}
	if (c->krun < c->krun_end) {
		*ev = (const void *)(c->kbase + *c->krun++);
		return 1;
	}
	return next_merged(c, ev);
}

/* The cursor as whole.c's source: its stored records, one at a time. */
static int source_next(void *c, const struct st_event_header **ev)
{
	return stored_next(c, ev);
}

/* source_run() but for pair_run(): out of line, its frame off the two streams' path. */
static __attribute__((noinline)) int stored_run(struct st_cursor *c, const uint8_t **begin,
						const uint8_t **end)
{
	const struct st_event_header *ev;
	int ret;

	if (c->run == c->run_end) {
		/* NULL: a run the merge starts now is told from a record it hands out alone */
		c->run = c->run_end = NULL;
		ret = stored_next(c, &ev);
		if (ret <= 0)
			return ret;
		if (!c->run) {
			*begin = (const uint8_t *)ev;
			*end = *begin + ev->size;
			return 1;
		}
		/* the run's first record is ev */
		c->run = (const uint8_t *)ev;
	}
	*begin = c->run;
	*end = c->run_end;
	c->run = c->run_end;
	return 1;
}

/* The cursor as whole.c's source: its stored records, a run at a time. */
static int source_run(void *cursor, const uint8_t **begin, const uint8_t **end)
{
	struct st_cursor *c = cursor;

	if (c->nheap == 2 && !c->advance && c->run == c->run_end && c->krun == c->krun_end &&
	    pair_run(c, begin, end))
		return 1;
	return stored_run(c, begin, end);
}

/* What st_cursor_fill() left for the next call: its event that did not fit, or its error. */
static __attribute__((noinline)) int take_left(struct st_cursor *c,
						const struct st_event_header **ev)
{
	int err = c->fill_err;

	c->fill_err = 0;
	if (err)
		return err;
	*ev = c->left;
	c->left = NULL;
	return 1;
}

int st_cursor_next(struct st_cursor *c, const struct st_event_header **ev)
{
	if (__builtin_expect(c->left || c->fill_err, 0))
		return take_left(c, ev);
	if (c->whole_on)
		return st_whole_next(c->whole, ev);
	return stored_next(c, ev);
}

int st_cursor_fill(struct st_cursor *c, void *buf, size_t cap)
{
	const struct st_event_header *ev;
	uint8_t *out = buf;
	size_t used = 0;
	int ret;

	if (cap < ST_CURSOR_FILL_MIN)
		return ST_EINVAL;
	if (cap > INT_MAX)
		cap = INT_MAX;
	if (c->fill_err || c->left) {
		if ((ret = take_left(c, &ev)) < 0)
			return ret;
		st_fill_append(out, cap, &used, ev);	/* fits: a record is at most 64 KiB */
	}
	if (c->whole_on) {
		ret = st_whole_fill(c->whole, out, cap, &used, &c->left);
	} else {
		while ((ret = stored_next(c, &ev)) > 0)
			if (!st_fill_append(out, cap, &used, ev)) {
				c->left = ev;
				break;
			}
	}
	if (ret < 0 && used)
		c->fill_err = ret;
	return ret < 0 && !used ? ret : (int)used;
}

static int pending_cmp(const void *a, const void *b, void *r)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t tx = st_chunk_at(r, x)->first_ts, ty = st_chunk_at(r, y)->first_ts;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Room for n chunks in pending, heap and spare. */
static int reserve(struct st_cursor *c, size_t n)
{
	size_t *pending;
	struct stream **heap, **spare;

	if (n <= c->cap)
		return 0;
	if (!(pending = realloc(c->pending, n * sizeof(*pending))))
		return ST_ENOMEM;
	c->pending = pending;
	if (!(heap = realloc(c->heap, n * sizeof(*heap))))
		return ST_ENOMEM;
	c->heap = heap;
	if (!(spare = realloc(c->spare, n * sizeof(*spare))))
		return ST_ENOMEM;
	c->spare = spare;
	c->cap = n;
	return 0;
}

/*
 * The reader's chunks the cursor has not seen yet join those still to
 * visit, in order of first timestamp. One that begins before events already
 * handed out is visited next: its events come late, out of order.
 */
static int take_chunks(struct st_cursor *c)
{
	size_t n = st_chunk_count(c->r), old = c->npending;

	if (reserve(c, n > 16 ? n : 16))
		return ST_ENOMEM;
	for (size_t i = c->nchunks; i < n; i++) {
		const struct st_chunk_info *ci = st_chunk_at(c->r, i);

		if (ci->kind == ST_CHUNK_EVENTS && ci->events && ci->last_ts >= c->from &&
		    ci->first_ts <= c->to)
			c->pending[c->npending++] = i;
	}
	c->nchunks = n;
	if (c->npending > old)
		qsort_r(c->pending + c->next, c->npending - c->next, sizeof(*c->pending), pending_cmp,
			c->r);
	note_next(c);
	return 0;
}

/*
 * The decoding thread, when there is more than one chunk to visit; without
 * it (no memory, no thread) the cursor decodes them itself, to the same events.
 */
static void start_ahead(struct st_cursor *c)
{
	struct ahead *a;

	if (c->npending < 2 || !(a = calloc(1, sizeof(*a))))
		return;
	if (pthread_mutex_init(&a->lock, NULL)) {
		free(a);
		return;
	}
	if (pthread_cond_init(&a->changed, NULL)) {
		pthread_mutex_destroy(&a->lock);
		free(a);
		return;
	}
	a->count = c->npending;
	c->ahead = a;
	if (pthread_create(&a->thread, NULL, decode_ahead, c)) {
		c->ahead = NULL;
		pthread_cond_destroy(&a->changed);
		pthread_mutex_destroy(&a->lock);
		free(a);
	}
}

static void stop_ahead(struct ahead *a)
{
	pthread_mutex_lock(&a->lock);
	a->stop = 1;
	pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	for (size_t i = 0; i < AHEAD_SLOTS; i++)
		if (a->slot[i].s)
			stream_free(a->slot[i].s);
	pthread_cond_destroy(&a->changed);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

int st_cursor_open(struct st_reader *r, uint64_t from, uint64_t to, unsigned flags,
		   struct st_cursor **cp)
{
	struct st_cursor *c = calloc(1, sizeof(*c));

	*cp = c;
	if (!c)
		return ST_ENOMEM;
	c->r = r;
	c->from = from;
	c->to = c->until = to;
	if (take_chunks(c) || (!(flags & ST_CURSOR_RAW) && st_whole_open(r, flags,
						   &(struct st_source){ source_next, source_run, c },
						   &c->whole))) {
		st_cursor_close(c);
		*cp = NULL;
		return ST_ENOMEM;
	}
	c->whole_on = c->whole && st_whole_busy(c->whole);
	c->adapt = c->whole && st_whole_adapts(c->whole);
	/* A live reader's chunks grow (st_cursor_extend): those the cursor decodes itself. */
	if ((flags & ST_CURSOR_AHEAD) && !st_reader_live(r))
		start_ahead(c);
	return 0;
}

int st_cursor_extend(struct st_cursor *c, uint64_t until)
{
	c->until = until < c->to ? until : c->to;
	if (c->whole) {
		/* the chunks added may hold the first stamped issues or compact completions */
		st_whole_refresh(c->whole);
		c->whole_on = st_whole_busy(c->whole);
	}
	/* none come to a reader that is not live: a decoding thread's chunks stay put */
	return take_chunks(c);
}

void st_cursor_close(struct st_cursor *c)
{
	if (!c)
		return;
	if (c->ahead)
		stop_ahead(c->ahead);
	for (size_t i = 0; i < c->nheap; i++)
		stream_free(c->heap[i]);
	for (size_t i = 0; i < c->nspare; i++)
		stream_free(c->spare[i]);
	free(c->pending);
	free(c->heap);
	free(c->spare);
	st_chunk_buf_free(&c->raw);
	st_whole_close(c->whole);
	free(c);
}
