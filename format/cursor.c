/* SPDX-License-Identifier: MIT */
/*
 * cursor.c - events of a file in timestamp order.
 *
 * Events chunks are taken in order of their first timestamp. Each one in use
 * is a stream: its decoded records plus their offsets sorted by timestamp
 * (records of a chunk are nearly sorted already, so an insertion sort does
 * it in about one pass). Streams sit in a binary min-heap keyed by their next
 * record; a chunk is decoded only once the smallest pending timestamp
 * reaches its first timestamp, so memory holds just the chunks that overlap
 * in time, and chunks wholly before `from` are never decompressed.
 */
#include <stdlib.h>

#include "internal.h"

/*
 * Decoded bytes a cursor may hold at once. Real traces overlap a few chunks;
 * a hostile file of many tiny frames all spanning the same time range must
 * get an error, not make the cursor decompress gigabytes into memory.
 */
#define ST_CURSOR_MAX_BYTES	(1ull << 30)

struct sort_key {
	uint64_t ts;
	uint32_t off;	/* of the record in the chunk; ties keep file order */
	uint32_t pad;
};

struct stream {
	struct st_chunk_buf buf;
	struct sort_key *keys;
	size_t nkeys, cap, pos;
	size_t chunk;	/* index in the file, breaks timestamp ties between chunks */
};

struct st_cursor {
	struct st_reader *r;
	uint64_t from, to;
	size_t *pending;	/* events chunks to visit, by first timestamp */
	size_t npending, next;
	struct stream **heap;
	size_t nheap;
	struct stream **spare;	/* exhausted streams, kept for their buffers */
	size_t nspare;
	size_t nstreams;	/* allocated, for the capacity of heap and spare */
	uint64_t active_bytes;	/* raw bytes of the chunks on the heap */
	int advance;		/* the heap top's record was returned: move past it first */
};

static int key_cmp(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * Stable sort by timestamp. Insertion sort while the records are nearly in
 * order; a hostile or badly shuffled chunk falls back to qsort, whose
 * offset tie-break keeps it stable, so the work stays O(n log n).
 */
static void sort_keys(struct sort_key *k, size_t n)
{
	size_t budget = 8 * n + 64;

	for (size_t i = 1; i < n; i++) {
		struct sort_key v = k[i];
		size_t j = i;

		while (j > 0 && k[j - 1].ts > v.ts) {
			k[j] = k[j - 1];
			j--;
			if (!--budget) {
				k[j] = v;
				qsort(k, n, sizeof(*k), key_cmp);
				return;
			}
		}
		k[j] = v;
	}
}

static int stream_less(const struct stream *a, const struct stream *b)
{
	const struct sort_key *x = &a->keys[a->pos], *y = &b->keys[b->pos];

	if (x->ts != y->ts)
		return x->ts < y->ts;
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
	free(s->keys);
	free(s);
}

/* Sort keys of a decoded chunk's records, skipping those before `from`. */
static int build_keys(struct stream *s, uint64_t from)
{
	const struct st_event_header *e;
	size_t pos = 0, at = 0;
	int ret;

	s->nkeys = 0;
	s->pos = 0;
	while ((ret = st_chunk_next(&s->buf, &at, &e)) > 0) {
		if (s->nkeys == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 1024;
			struct sort_key *k = realloc(s->keys, cap * sizeof(*k));

			if (!k)
				return ST_ENOMEM;
			s->keys = k;
			s->cap = cap;
		}
		s->keys[s->nkeys++] = (struct sort_key){ e->ts, (uint32_t)pos, 0 };
		pos = at;
	}
	if (ret < 0)
		return ret;
	sort_keys(s->keys, s->nkeys);
	while (s->pos < s->nkeys && s->keys[s->pos].ts < from)
		s->pos++;
	return 0;
}

/* Decodes the next pending chunk into a stream on the heap. */
static int activate(struct st_cursor *c)
{
	size_t chunk = c->pending[c->next++];
	uint32_t raw = st_chunk_at(c->r, chunk)->raw_size;
	struct stream *s;
	int err;

	if (c->active_bytes + raw > ST_CURSOR_MAX_BYTES)
		return st_reader_fail(c->r, ST_EFORMAT,
				      "chunk %zu: more than %llu MiB of chunks overlap in time", chunk,
				      ST_CURSOR_MAX_BYTES >> 20);
	s = stream_get(c);
	if (!s)
		return ST_ENOMEM;
	s->chunk = chunk;
	err = st_chunk_decode(c->r, chunk, &s->buf);
	if (!err)
		err = build_keys(s, c->from);
	if (err || s->pos == s->nkeys) {
		c->spare[c->nspare++] = s;
		return err;
	}
	c->heap[c->nheap++] = s;
	c->active_bytes += s->buf.len;
	sift_up(c, c->nheap - 1);
	return 0;
}

/* Moves past the record returned last; retires its stream when exhausted. */
static void advance_top(struct st_cursor *c)
{
	struct stream *top = c->heap[0];

	c->advance = 0;
	if (++top->pos < top->nkeys) {
		sift_down(c, 0);
		return;
	}
	c->spare[c->nspare++] = top;
	c->active_bytes -= top->buf.len;
	c->heap[0] = c->heap[--c->nheap];
	sift_down(c, 0);
}

static uint64_t pending_first_ts(const struct st_cursor *c)
{
	return st_chunk_at(c->r, c->pending[c->next])->first_ts;
}

int st_cursor_next(struct st_cursor *c, const struct st_event_header **ev)
{
	const struct stream *top;
	int err;

	if (c->advance)
		advance_top(c);
	while (c->next < c->npending &&
	       (!c->nheap || pending_first_ts(c) <= c->heap[0]->keys[c->heap[0]->pos].ts)) {
		err = activate(c);
		if (err)
			return err;
	}
	if (!c->nheap)
		return 0;
	top = c->heap[0];
	if (top->keys[top->pos].ts > c->to)
		return 0;
	*ev = (const void *)((const uint8_t *)top->buf.data + top->keys[top->pos].off);
	c->advance = 1;
	return 1;
}

static int pending_cmp(const void *a, const void *b, void *r)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t tx = st_chunk_at(r, x)->first_ts, ty = st_chunk_at(r, y)->first_ts;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x < y ? -1 : x > y;
}

int st_cursor_open(struct st_reader *r, uint64_t from, uint64_t to, struct st_cursor **cp)
{
	size_t n = st_chunk_count(r);
	struct st_cursor *c = calloc(1, sizeof(*c));

	*cp = c;
	if (!c)
		return ST_ENOMEM;
	c->r = r;
	c->from = from;
	c->to = to;
	c->pending = calloc(n ? n : 1, sizeof(*c->pending));
	c->heap = calloc(n ? n : 1, sizeof(*c->heap));
	c->spare = calloc(n ? n : 1, sizeof(*c->spare));
	if (!c->pending || !c->heap || !c->spare) {
		st_cursor_close(c);
		*cp = NULL;
		return ST_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct st_chunk_info *ci = st_chunk_at(r, i);

		if (ci->kind == ST_CHUNK_EVENTS && ci->events && ci->last_ts >= from &&
		    ci->first_ts <= to)
			c->pending[c->npending++] = i;
	}
	qsort_r(c->pending, c->npending, sizeof(*c->pending), pending_cmp, r);
	return 0;
}

void st_cursor_close(struct st_cursor *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nheap; i++)
		stream_free(c->heap[i]);
	for (size_t i = 0; i < c->nspare; i++)
		stream_free(c->spare[i]);
	free(c->pending);
	free(c->heap);
	free(c->spare);
	free(c);
}
