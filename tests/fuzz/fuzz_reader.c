/* SPDX-License-Identifier: MIT */
/*
 * fuzz_reader.c - libFuzzer entry point for the libsttrace reader.
 *
 * Opens the input as a file (footer mode and scan mode), then exercises every
 * read path a tool uses: info, metadata, schema, lost counts, every chunk
 * decoded and walked, every field of every event read through the schema,
 * and cursors over the whole file and a time window. The library must
 * return errors, never crash, hang or allocate absurdly.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

static uint64_t walk_cursor(struct st_reader *r, uint64_t from, uint64_t to)
{
	const struct st_event_header *e;
	struct st_cursor *c;
	uint64_t sum = 0;

	if (st_cursor_open(r, from, to, &c))
		return 0;
	while (st_cursor_next(c, &e) > 0)
		sum += e->ts + touch_fields(r, e);
	st_cursor_close(c);
	return sum;
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static volatile uint64_t sink;

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
	}
	return 0;
}
