/* SPDX-License-Identifier: MIT */
/*
 * test_format_compat.c - forward compatibility as spec/sttrace-format.md
 * promises it: an event type the built-in schema does not know decodes
 * through the file's schema, a chunk of a kind this library does not know
 * is skipped (and still verifies), and a newer minor version opens.
 *
 * The unknown chunk and the rebuilt index and trailer are encoded here by
 * hand from the spec, not with the library's encoder, so the test also
 * checks that the spec and the code agree.
 */
#include "unit_util.h"

#define FUTURE_KIND 0x7f01u

static int write_future_file(const char *test, struct mem_sink *m)
{
	struct st_writer *w = mem_writer(test, m, 300, 1);
	int err = w ? st_writer_add_type(w, &future_type) : 1;

	for (int i = 0; i < 40 && !err; i++) {
		struct future_rec f = { { FUTURE_TYPE, 48, 0, 100 + (uint64_t)i, 1, 2 }, -i, "lbl", { 1, 2, 3, (uint16_t)i } };
		struct st_ev_sys_exit e = exit_event(100 + (uint64_t)i, 1, i);

		err = st_writer_append(w, &f, sizeof(f)) || st_writer_append(w, &e, sizeof(e));
	}
	return expectf(w && !err && !st_writer_close(w, NULL, 0), test, "write");
}

/*
 * The index payload `idx` with one more chunk entry, for a chunk at
 * `offset`: the head's count, the old entries, the new one, the rest.
 */
static unsigned char *index_plus_entry(const struct st_chunk_buf *idx, uint64_t offset,
				       uint32_t seq, uint32_t payload_len)
{
	unsigned char *payload = malloc(idx->len + 48), *entry;
	uint32_t nchunks;
	size_t entries_end;

	memcpy(&nchunks, idx->data, 4);
	entries_end = 16 + (size_t)nchunks * 48;
	memcpy(payload, idx->data, entries_end);
	put32(payload, nchunks + 1);
	entry = payload + entries_end;
	memset(entry, 0, 48);
	put64(entry, offset);
	put32(entry + 8, FUTURE_KIND);
	put32(entry + 12, seq);
	put32(entry + 16, 64 + payload_len);
	put32(entry + 20, payload_len);
	memcpy(entry + 48, (unsigned char *)idx->data + entries_end, idx->len - entries_end);
	return payload;
}

/*
 * Replaces the index and trailer of the file in m: the future chunk goes
 * where the index was, then an index listing it, then a trailer.
 */
static int inject_future_chunk(const char *test, struct mem_sink *m)
{
	static const char future[] = "bytes of a chunk kind from a later minor version";
	struct st_chunk_buf idx = { 0 };
	struct st_reader *r = NULL;
	const struct st_chunk_info *ci;
	unsigned char *out, *payload;
	size_t at, index_off;

	if (open_mem(test, &r, m->data, m->len, 0))
		return 1;
	ci = st_chunk_at(r, st_chunk_count(r) - 1);
	if (expectf(ci->kind == ST_CHUNK_INDEX && !st_chunk_decode(r, st_chunk_count(r) - 1, &idx),
		    test, "no index chunk to rebuild"))
		return 1;
	out = malloc(m->len + idx.len + 4096);
	at = ci->offset;
	memcpy(out, m->data, at);
	at += spec_chunk(out + at, FUTURE_KIND, ci->seq, future, sizeof(future));
	payload = index_plus_entry(&idx, ci->offset, ci->seq, sizeof(future));
	index_off = at;
	at += spec_chunk(out + at, ST_CHUNK_INDEX, ci->seq + 1, payload, (uint32_t)idx.len + 48);
	at += spec_trailer(out + at, index_off, at - index_off);
	free(payload);
	st_chunk_buf_free(&idx);
	st_reader_close(r);
	free(m->data);
	m->data = out;
	m->len = at;
	return 0;
}

static int check_future_events(const char *test, struct st_reader *r)
{
	const struct st_type *t = st_type_by_id(r, FUTURE_TYPE);
	const struct st_event_header *e;
	struct st_cursor *c;
	int n = 0, bad = 0;
	char label[16];

	if (expectf(t && !st_builtin_type(FUTURE_TYPE) && !strcmp(t->name, "nvme_future_event") &&
		    t->nfields == 9, test, "future type not in the file's schema"))
		return 1;
	if (expectf(!st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c), test, "cursor"))
		return 1;
	while (!bad && st_cursor_next(c, &e) > 0) {
		if (e->type != FUTURE_TYPE)
			continue;
		st_field_str(e, st_field_find(t, "label"), label, sizeof(label));
		bad = expectf(st_field_i64(e, st_field_find(t, "delta"), 0) == -n &&
			      st_field_u64(e, st_field_find(t, "words"), 3) == (uint64_t)n &&
			      !strcmp(label, "lbl"), test, "future event %d fields", n);
		n++;
	}
	st_cursor_close(c);
	return bad || expectf(n == 40 && st_type_events(r, FUTURE_TYPE) == 40, test,
			      "%d future events", n);
}

static int check_future_file(const char *test, const struct mem_sink *m, unsigned flags)
{
	struct st_chunk_buf buf = { 0 };
	struct st_reader *r = NULL;
	int bad = open_mem(test, &r, m->data, m->len, flags), futures = 0;

	if (!bad)
		bad = expectf(st_reader_info(r)->footer_present && !st_reader_info(r)->damage[0],
			      test, "flags %u: %s", flags, st_reader_info(r)->damage);
	for (size_t i = 0; !bad && i < st_chunk_count(r); i++) {
		futures += st_chunk_at(r, i)->kind == FUTURE_KIND;
		bad = expectf(!st_chunk_decode(r, i, &buf), test, "chunk %zu: %s", i,
			      st_reader_errmsg(r));
	}
	bad = bad || expectf(futures == 1, test, "%d future chunks listed", futures) ||
	      check_future_events(test, r);
	st_chunk_buf_free(&buf);
	st_reader_close(r);
	return bad;
}

static int test_unknown_type_and_chunk_kind(void)
{
	struct mem_sink m = { 0 };
	int bad = write_future_file(__func__, &m) || inject_future_chunk(__func__, &m) ||
		  check_future_file(__func__, &m, 0) || check_future_file(__func__, &m, ST_READ_SCAN);

	free(m.data);
	return bad;
}

static int test_newer_minor_version(void)
{
	struct mem_sink m = { 0 };
	struct st_reader *r = NULL;
	int bad = write_future_file(__func__, &m);

	if (bad)
		return 1;
	m.data[10] = 9;	/* minor 9: additive changes only, still readable */
	put64(m.data + 24, XXH64(m.data, 24, 0));
	bad = open_mem(__func__, &r, m.data, m.len, 0) ||
	      expectf(st_reader_info(r)->minor == 9 && st_reader_info(r)->events == 80, __func__,
		      "minor %u", st_reader_info(r)->minor);
	st_reader_close(r);
	free(m.data);
	return bad;
}

int main(void)
{
	RUN(test_unknown_type_and_chunk_kind);
	RUN(test_newer_minor_version);
	return check_failures != 0;
}
