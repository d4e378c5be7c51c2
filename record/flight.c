/* SPDX-License-Identifier: MIT */
/*
 * flight.c - what st-record needs to run as a flight recorder: the in-memory
 * ring of compressed chunks, the trigger that watches request latencies as
 * the records pass, and the names of rotated and dumped files.
 *
 * Ring: the writer's sink in ring mode. The file's beginning (header,
 * metadata and schema, up to the first events chunk) stays: a dump cannot be
 * read without it. Every later chunk is kept as the writer encoded it, in
 * order, and when the ring passes its size the oldest go, so the kept chunks
 * follow each other with one gap, after the beginning. A dump reads the kept bytes back with
 * libsttrace (a file image whose missing chunks a scan skips) and appends
 * their records to the dump's own writer: chunks are compressed once while
 * recording, and decompressed only when a trigger fires.
 *
 * Trigger: pairs block_rq_issue with block_rq_complete (or its compact
 * form, whose sector the issue gives) by request address (and, for Q2C,
 * block_bio_queue with the issue's bio chain) in fixed-size tables, so its
 * memory does not grow with the load; an entry that finds its slot taken
 * replaces the older one, which then simply is not measured.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/record.h"

/* ---- the ring of chunks ------------------------------------------------ */

static void piece_free(struct rec_flight_piece *p)
{
	free(p->buf);
	p->buf = NULL;
	p->len = 0;
}

static int piece_set(struct rec_flight_piece *p, const void *buf, size_t len)
{
	void *copy = malloc(len);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	piece_free(p);
	p->buf = copy;
	p->len = len;
	return 0;
}

/* Append to a piece that only grows: the file's beginning. */
static int piece_add(struct rec_flight_piece *p, const void *buf, size_t len)
{
	char *grown = realloc(p->buf, p->len + len);

	if (!grown)
		return -ENOMEM;
	memcpy(grown + p->len, buf, len);
	p->buf = grown;
	p->len += len;
	return 0;
}

/* Drop the oldest events chunk. */
static void ring_evict(struct rec_flight_ring *fr)
{
	struct rec_flight_piece *p = &fr->chunks[fr->head];

	fr->bytes -= p->len;
	piece_free(p);
	fr->head = (fr->head + 1) % fr->cap;
	fr->count--;
}

static int ring_write(void *ctx, const void *buf, size_t len, uint64_t offset)
{
	struct rec_flight_ring *fr = ctx;
	struct st_chunk_info ci;
	struct rec_flight_piece *p;

	if (st_chunk_peek(buf, len, &ci)) {
		/* the file header (offset 0) stays; the trailer of the ring writer's close goes */
		return offset ? 0 : piece_add(&fr->prefix, buf, len);
	}
	if (!fr->events_seen && ci.kind != ST_CHUNK_EVENTS)
		return piece_add(&fr->prefix, buf, len);
	fr->events_seen = true;
	while (fr->count && (fr->count == fr->cap || fr->bytes + len > fr->max_bytes)) {
		struct rec_flight_piece *old = &fr->chunks[fr->head];

		fr->dropped += old->len;
		if (old->last_ts > fr->dropped_until)
			fr->dropped_until = old->last_ts;
		ring_evict(fr);
	}
	p = &fr->chunks[(fr->head + fr->count) % fr->cap];
	if (piece_set(p, buf, len))
		return -ENOMEM;
	p->first_ts = ci.first_ts;
	p->last_ts = ci.last_ts;
	fr->count++;
	fr->bytes += len;
	return 0;
}

static int ring_sync(void *ctx)
{
	(void)ctx;
	return 0;
}

int rec_flight_ring_init(struct rec_flight_ring *fr, uint64_t max_bytes, size_t chunk_size)
{
	memset(fr, 0, sizeof(*fr));
	fr->max_bytes = max_bytes;
	/* chunks compress, so more of them fit than max_bytes / chunk_size */
	fr->cap = (size_t)(max_bytes / (chunk_size / 64 + 1)) + 2;
	fr->chunks = calloc(fr->cap, sizeof(*fr->chunks));
	fr->sink.write = ring_write;
	fr->sink.sync = ring_sync;
	fr->sink.ctx = fr;
	return fr->chunks ? 0 : -ENOMEM;
}

void rec_flight_ring_free(struct rec_flight_ring *fr)
{
	while (fr->count)
		ring_evict(fr);
	piece_free(&fr->prefix);
	free(fr->chunks);
	fr->chunks = NULL;
}

/*
 * From the newest record the ring let go, or its oldest kept one: each
 * CPU's chunks hold its records in time order and go oldest first, so
 * after the newest dropped record every CPU's records are there, while a
 * quiet CPU's kept chunk may reach back further than a busy one's.
 */
uint64_t rec_flight_ring_span_ns(const struct rec_flight_ring *fr)
{
	uint64_t first = UINT64_MAX, last = 0;

	for (size_t i = 0; i < fr->count; i++) {
		const struct rec_flight_piece *p = &fr->chunks[(fr->head + i) % fr->cap];

		if (!p->last_ts)
			continue;	/* metadata, lost counts */
		first = p->first_ts < first ? p->first_ts : first;
		last = p->last_ts > last ? p->last_ts : last;
	}
	if (fr->dropped_until > first)
		first = fr->dropped_until;
	return last > first ? last - first : 0;
}

/* The kept bytes as one file image: the beginning, then the chunks oldest first. */
static void *ring_image(const struct rec_flight_ring *fr, size_t *len)
{
	size_t n = fr->prefix.len + fr->bytes, off = 0;
	char *img = malloc(n ? n : 1);

	if (!img)
		return NULL;
	memcpy(img, fr->prefix.buf, fr->prefix.len);
	off += fr->prefix.len;
	for (size_t i = 0; i < fr->count; i++) {
		const struct rec_flight_piece *p = &fr->chunks[(fr->head + i) % fr->cap];

		memcpy(img + off, p->buf, p->len);
		off += p->len;
	}
	*len = off;
	return img;
}

int rec_flight_ring_dump(const struct rec_flight_ring *fr, struct st_writer *w, char *err, size_t cap)
{
	struct st_chunk_buf buf = { 0 };
	struct st_reader *r = NULL;
	const struct st_event_header *ev;
	size_t len, pos;
	void *img;
	int ret = 0;

	if (!fr->events_seen)
		return 0;
	img = ring_image(fr, &len);
	if (!img) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	if (st_reader_open_mem(&r, img, len, ST_READ_SCAN)) {
		snprintf(err, cap, "ring: %s", r ? st_reader_errmsg(r) : "out of memory");
		ret = -1;
	}
	for (size_t i = 0; !ret && i < st_chunk_count(r); i++) {
		if (st_chunk_at(r, i)->kind != ST_CHUNK_EVENTS)
			continue;
		if (st_chunk_decode(r, i, &buf)) {
			snprintf(err, cap, "ring: %s", st_reader_errmsg(r));
			ret = -1;
			break;
		}
		for (pos = 0; st_chunk_next(&buf, &pos, &ev) > 0;)
			st_writer_append(w, ev, ev->size);
	}
	st_chunk_buf_free(&buf);
	st_reader_close(r);
	free(img);
	return ret;
}

/* ---- the trigger --------------------------------------------------------- */

int rec_flight_trigger_parse(const char *s, struct rec_flight_trigger *t)
{
	char stage[8];
	const char *gt = strchr(s, '>');

	if (!gt || gt - s >= (long)sizeof(stage))
		return -1;
	memcpy(stage, s, (size_t)(gt - s));
	stage[gt - s] = 0;
	if (!strcmp(stage, "D2C"))
		t->q2c = false;
	else if (!strcmp(stage, "Q2C"))
		t->q2c = true;
	else
		return -1;
	return st_parse_duration(gt + 1, &t->threshold_ns) || !t->threshold_ns ? -1 : 0;
}

static size_t slot_of(uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (FLIGHT_PAIRS - 1);
}

/* Earliest queueing of the issued request's bios, 0 when none was seen. */
static uint64_t queued_at(struct rec_flight_trigger *t, const struct st_ev_block_rq_issue *e)
{
	uint64_t q = 0;

	for (unsigned i = 0; i < e->p.nr_bios && i < ST_RQ_BIOS; i++) {
		struct rec_flight_pair *b = &t->bios[slot_of(e->p.bios[i])];

		if (b->key == e->p.bios[i] && (!q || b->ts < q))
			q = b->ts;
	}
	return q;
}

/* Request rq completed at h: whether its latency passes the threshold, then *hit says which. */
static bool completed(struct rec_flight_trigger *t, const struct st_event_header *h, uint64_t rq,
		      uint32_t dev, uint32_t bytes, struct rec_flight_hit *hit)
{
	struct rec_flight_pair *p = &t->rqs[slot_of(rq)];

	if (p->key != rq || h->ts < p->ts)
		return false;
	p->key = 0;
	if (h->ts - p->ts <= t->threshold_ns || p->ts < t->armed_ns)
		return false;
	*hit = (struct rec_flight_hit){ .latency_ns = h->ts - p->ts, .ts = h->ts, .rq = rq, .dev = dev,
				    .sector = p->sector, .bytes = bytes };
	return true;
}

/* Q of a stamped issue: its earliest bio stamp, else the request's allocation, else the issue. */
static uint64_t stamped_queue_time(const struct st_ev_block_rq_issue_stamped *e)
{
	uint64_t q = e->p.stamped & ST_STAMPED_GETRQ ? e->h.ts - e->p.getrq_ago : e->h.ts;

	for (unsigned i = 0; i < e->p.nr_bios && i < ST_RQ_BIOS; i++)
		if (e->p.stamped & ST_STAMPED_QUEUE(i) && e->h.ts - e->p.queue_ago[i] < q)
			q = e->h.ts - e->p.queue_ago[i];
	return q;
}

bool rec_flight_trigger_check(struct rec_flight_trigger *t, const struct st_event_header *h,
			  struct rec_flight_hit *hit)
{
	switch (h->type) {
	case ST_EV_block_bio_queue: {
		const struct st_ev_block_bio *e = (const void *)h;

		if (t->q2c)
			t->bios[slot_of(e->p.bio)] = (struct rec_flight_pair){ .key = e->p.bio, .ts = h->ts };
		return false;
	}
	case ST_EV_block_rq_issue:
	case ST_EV_block_rq_issue_stamped: {
		/* the stamped issue extends block_rq_issue (format/lib/sttrace_events.h) */
		const struct st_ev_block_rq_issue *e = (const void *)h;
		uint64_t start = !t->q2c ? h->ts : h->type == ST_EV_block_rq_issue ? queued_at(t, e) :
				 stamped_queue_time((const void *)h);

		if (start)
			t->rqs[slot_of(e->p.rq)] = (struct rec_flight_pair){ .key = e->p.rq, .ts = start,
									     .sector = e->p.sector };
		return false;
	}
	case ST_EV_block_rq_complete: {
		const struct st_ev_block_rq *e = (const void *)h;

		return completed(t, h, e->p.rq, e->p.dev, e->p.bytes, hit);
	}
	case ST_EV_block_rq_complete_compact: {
		const struct st_ev_block_rq_complete_compact *e = (const void *)h;

		return completed(t, h, e->p.rq, e->p.dev, e->p.bytes, hit);
	}
	default:
		return false;
	}
}

/* ---- file names ---------------------------------------------------------- */

void rec_flight_name(const char *output, const char *tag, unsigned n, char *path, size_t cap)
{
	size_t len = strlen(output);
	const char *ext = ".sttrace";

	if (len > strlen(ext) && !strcmp(output + len - strlen(ext), ext))
		len -= strlen(ext);
	snprintf(path, cap, "%.*s.%s%04u%s", (int)len, output, tag, n, ext);
}
