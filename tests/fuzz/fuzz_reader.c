/* SPDX-License-Identifier: MIT */
/*
 * fuzz_reader.c - libFuzzer entry point for the libsttrace reader.
 *
 * Opens the input as a file (footer mode and scan mode), then exercises every
 * read path a tool uses: info, metadata, schema, lost counts, every chunk
 * decoded and walked, every field of every event read through the schema,
 * and cursors over the whole file and a time window (whole events also a
 * block at a time, stamped issues resolved). Then reads it as a file
 * being written (ST_READ_LIVE), as `st-analyze --follow` does. The library
 * must return errors, never crash, hang or allocate absurdly.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/lib/sttrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads every field of a record the way `st-format cat` does. */
static uint64_t touch_fields(const struct st_reader *r, const struct st_event_header *e)
{
	const struct st_type *t = st_type_by_id(r, e->type);
	uint64_t sum = 0;
	char str[64];

	if (!t)
		return 1;
	for (uint16_t i = 0; i < t->nfields; i++) {
		const struct st_field *f = &t->fields[i];

		sum += st_field_u64(e, f, 0) + (uint64_t)st_field_i64(e, f, 1);
		sum += st_field_str(e, f, str, sizeof(str));
	}
	return sum;
}

static uint64_t walk_chunks(struct st_reader *r)
{
	struct st_chunk_buf buf = { 0 };
	const struct st_event_header *e;
	uint64_t sum = 0;

	for (size_t i = 0; i < st_chunk_count(r); i++) {
		size_t pos = 0;

		if (st_chunk_decode(r, i, &buf))
			continue;
		if (st_chunk_at(r, i)->kind != ST_CHUNK_EVENTS)
			continue;
		while (st_chunk_next(&buf, &pos, &e) > 0)
			sum += touch_fields(r, e);
	}
	st_chunk_buf_free(&buf);
	return sum;
}

/* Whole events as st-analyze reads them: a block at a time, stamped issues resolved. */
static uint64_t fill_cursor(struct st_reader *r, uint64_t from, uint64_t to)
{
	static uint64_t buf[ST_CURSOR_FILL_MIN / 8];
	struct st_cursor *c;
	uint64_t sum = 0;
	int n;

	if (st_cursor_open(r, from, to, ST_CURSOR_STAMPED, &c))
		return 0;
	while ((n = st_cursor_fill(c, buf, sizeof(buf))) > 0)
		for (int off = 0; off < n;) {
			const struct st_event_header *e = (const void *)((uint8_t *)buf + off);

			sum += e->ts;
			off += (int)st_record_span(e);
		}
	st_cursor_close(c);
	return sum;
}

static uint64_t walk_cursor(struct st_reader *r, uint64_t from, uint64_t to)
{
	const struct st_event_header *e;
	struct st_cursor *c;
	uint64_t sum = 0;

	if (st_cursor_open(r, from, to, ST_CURSOR_RAW, &c))
		return 0;
	while (st_cursor_next(c, &e) > 0)
		sum += e->ts + touch_fields(r, e);
	st_cursor_close(c);
	/* whole events: compact and stamped records made whole, hostile ones too */
	if (st_cursor_open(r, from, to, 0, &c))
		return sum;
	while (st_cursor_next(c, &e) > 0)
		sum += e->ts + e->size;
	st_cursor_close(c);
	return sum + fill_cursor(r, from, to);
}

static uint64_t walk_descriptors(const struct st_reader *r)
{
	const char *k, *v;
	uint64_t sum = 0, lost;
	uint32_t cpu;

	for (size_t i = 0; i < st_meta_count(r); i++)
		if (!st_meta_at(r, i, &k, &v))
			sum += (uint64_t)(k[0] + v[0]) + (st_meta_get(r, k) != NULL);
	for (size_t i = 0; i < st_type_count(r); i++)
		sum += st_type_events(r, st_type_at(r, i)->id) +
		       (st_type_by_name(r, st_type_at(r, i)->name) != NULL);
	for (size_t i = 0; i < st_lost_count(r); i++)
		if (!st_lost_at(r, i, &cpu, &lost))
			sum += cpu + lost;
	return sum;
}

/*
 * The damaged ranges a scan reports lie in the file, in order, apart, and add
 * up to the skipped bytes; a broken promise stops the fuzzer.
 */
static uint64_t walk_damage(const struct st_reader *r, size_t size)
{
	const struct st_file_info *info = st_reader_info(r);
	uint64_t end = 0, bytes = 0, sum = 0;

	for (size_t i = 0; i < st_damage_count(r); i++) {
		const struct st_damage *d = st_damage_at(r, i);

		if (d->offset < end || !d->size || d->size > size - d->offset)
			__builtin_trap();
		end = d->offset + d->size;
		bytes += d->size;
		sum += d->first_seq + d->chunks + strlen(d->why);
	}
	if (st_damage_count(r) != info->damaged_ranges || bytes != info->skipped_bytes ||
	    info->valid_size + info->lost_tail_bytes != size)
		__builtin_trap();
	return sum;
}

/* Pieces the input lands in while the live reader reads it. */
#define LIVE_PIECES 4

/*
 * The file the live reader reads: a memfd (no disk I/O per input), opened by
 * its /proc path as a file a writer grows. Emptied for each input.
 */
static int live_file(char *path, size_t cap)
{
	static int fd = -1;

	if (fd < 0 && (fd = memfd_create("fuzz_live", MFD_CLOEXEC)) < 0)
		return -1;
	snprintf(path, cap, "/proc/self/fd/%d", fd);
	return ftruncate(fd, 0) ? -1 : fd;
}

static int write_all(int fd, const uint8_t *p, size_t len, size_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n <= 0)
			return -1;
		p += n;
		off += (size_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* The live cursor's view: what it handed out and what it was promised. */
struct live_walk {
	struct st_cursor *c;
	size_t chunks;		/* the reader's chunks checked so far */
	uint64_t newest, oldest;	/* timestamps of the events chunks so far (none: 0, max) */
	uint64_t until;		/* the hold given last */
	int held;		/* a hold was given and events read up to it */
	int late;		/* a chunk came that begins at or before a hold given */
	uint64_t events, hash;	/* of the events handed out, in order */
	uint64_t sum;
};

/* Folds an event into a hash of the sequence: same events in the same order, same hash. */
static uint64_t event_hash(uint64_t h, const struct st_event_header *e)
{
	const uint8_t *p = (const uint8_t *)e;

	for (uint32_t i = 0; i < e->size; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/*
 * After an open or a refresh: while the file is live, no damage is noted and
 * the chunks taken lie in the bytes written, each after the one before; the
 * chunks that came are checked for lateness against the hold given.
 */
static void live_check(const struct st_reader *r, struct live_walk *w, size_t written)
{
	const struct st_file_info *info = st_reader_info(r);
	const struct st_chunk_info *last = w->chunks ? st_chunk_at(r, w->chunks - 1) : NULL;
	uint64_t end = last ? last->offset + last->stored_size : 0;

	if (info->file_size > written)
		__builtin_trap();
	if (st_reader_live(r) && (st_damage_count(r) || info->valid_size > info->file_size))
		__builtin_trap();
	for (; w->chunks < st_chunk_count(r); w->chunks++) {
		const struct st_chunk_info *ci = st_chunk_at(r, w->chunks);

		if (ci->offset < end || ci->stored_size > info->valid_size ||
		    ci->offset > info->valid_size - ci->stored_size)
			__builtin_trap();
		end = ci->offset + ci->stored_size;
		if (ci->kind != ST_CHUNK_EVENTS || !ci->events)
			continue;
		if (w->held && ci->first_ts <= w->until)
			w->late = 1;
		if (ci->first_ts < w->oldest)
			w->oldest = ci->first_ts;
		if (ci->last_ts > w->newest)
			w->newest = ci->last_ts;
	}
}

/* A hold behind the newest event by a quarter of the time the chunks span. */
static uint64_t live_hold(const struct live_walk *w)
{
	return w->newest < w->oldest ? 0 : w->newest - (w->newest - w->oldest) / 4;
}

/* Hands out the events up to `until`, none past it. <0 after ST_ENOMEM. */
static int live_read(struct st_reader *r, struct live_walk *w, uint64_t until)
{
	const struct st_event_header *e;
	int ret;

	if (until < w->until)
		until = w->until;
	if (st_cursor_extend(w->c, until))
		return -1;
	w->until = until;
	w->held = 1;
	while ((ret = st_cursor_next(w->c, &e))) {
		if (ret == ST_ENOMEM)
			return -1;
		if (ret < 0)
			continue;
		if (e->ts > until)
			__builtin_trap();
		w->events++;
		w->hash = event_hash(w->hash, e);
		w->sum += touch_fields(r, e);
	}
	return 0;
}

/*
 * A cursor over the finished reader gives the events the live cursor gave,
 * in the same order, when no chunk came late.
 */
static void live_compare(struct st_reader *r, const struct live_walk *w)
{
	const struct st_event_header *e;
	struct st_cursor *c;
	uint64_t events = 0, hash = 0;
	int ret;

	if (w->late || st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c))
		return;
	while ((ret = st_cursor_next(c, &e))) {
		if (ret == ST_ENOMEM) {
			st_cursor_close(c);
			return;
		}
		if (ret < 0)
			continue;
		events++;
		hash = event_hash(hash, e);
	}
	st_cursor_close(c);
	if (events != w->events || hash != w->hash)
		__builtin_trap();
}

/*
 * The input lands in the file in LIVE_PIECES pieces, cut anywhere; after
 * each, the reader (opened once it reads a header and a schema) is
 * refreshed, and its cursor hands out the events up to a hold behind the
 * newest chunk's last timestamp. Then the writer is said to be done: the
 * rest is read as a scan reads it, with the damage a scan reports.
 */
static uint64_t walk_live(const uint8_t *data, size_t size)
{
	struct live_walk w = { .oldest = UINT64_MAX };
	struct st_reader *r = NULL;
	size_t written = 0;
	char path[64];
	int fd = live_file(path, sizeof(path));

	if (fd < 0)
		return 0;
	for (unsigned piece = 1; piece <= LIVE_PIECES + 1; piece++) {
		int done = piece > LIVE_PIECES;
		size_t end = done ? size : size * piece / LIVE_PIECES;

		if (write_all(fd, data + written, end - written, written))
			break;
		written = end;
		if (!r) {
			if (st_reader_open(&r, path, ST_READ_LIVE) ||
			    st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &w.c)) {
				st_reader_close(r);
				r = NULL;
				continue;
			}
		}
		if (st_reader_refresh(r, done) < 0)
			break;
		live_check(r, &w, written);
		w.sum += walk_descriptors(r);
		if (live_read(r, &w, done ? UINT64_MAX : live_hold(&w)))
			break;
		if (done) {
			w.sum += walk_damage(r, st_reader_info(r)->file_size);
			live_compare(r, &w);
		}
	}
	st_cursor_close(w.c);
	st_reader_close(r);
	return w.sum + w.events;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static volatile uint64_t sink;
	int scanned = 0;

	for (unsigned flags = 0; flags <= ST_READ_SCAN; flags += ST_READ_SCAN) {
		struct st_reader *r;
		const struct st_file_info *info;

		if (st_reader_open_mem(&r, data, size, flags)) {
			st_reader_close(r);
			continue;
		}
		info = st_reader_info(r);
		sink += walk_damage(r, size) + walk_descriptors(r) + walk_chunks(r) +
			walk_cursor(r, 0, UINT64_MAX) +
			walk_cursor(r, info->first_ts + (info->last_ts - info->first_ts) / 2,
				    info->last_ts - (info->last_ts - info->first_ts) / 4);
		st_reader_close(r);
		scanned = flags == ST_READ_SCAN;
	}
	/*
	 * An input a scan cannot open (no file header or schema in it) is not
	 * read live: its prefixes hold no more, and each try to open one costs a
	 * reader, whose type tables are most of the time an input takes.
	 */
	if (scanned)
		sink += walk_live(data, size);
	return 0;
}
