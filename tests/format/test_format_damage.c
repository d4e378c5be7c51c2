/* SPDX-License-Identifier: MIT */
/*
 * test_format_damage.c - files cut at every byte offset (small file) and at
 * random offsets (large file) read back every complete chunk before the cut
 * and report the cut; a bit flip anywhere is caught by a verify-style check
 * (ST_READ_SCAN plus decoding every chunk) that names where; hostile bytes
 * never crash the reader (run under ASan+UBSan as well).
 */
#include "unit_util.h"

/* A file written in memory plus the raw stream of its events, in order. */
struct sample {
	struct mem_sink m;
	unsigned char *raw;
	size_t raw_len;
};

static int make_sample(const char *test, struct sample *s, size_t events, size_t chunk)
{
	struct st_writer *w = mem_writer(test, &s->m, chunk, 1);
	int err = 0;

	s->raw = malloc(events * sizeof(struct st_ev_block_rq_issue));
	s->raw_len = 0;
	if (!w || !s->raw)
		return 1;
	st_writer_set_meta(w, "tool", "test_format_damage");
	for (size_t i = 0; i < events && !err; i++) {
		struct st_ev_block_rq_issue rq = { .h = { ST_EV_block_rq_issue, sizeof(rq), 1, i * 7, 3, 4 } };
		struct st_ev_sys_exit ex = exit_event(i * 7, 0, (int64_t)i);
		const void *rec = i % 3 ? (const void *)&ex : (const void *)&rq;
		size_t len = i % 3 ? sizeof(ex) : sizeof(rq);

		rq.p.sector = i;
		memcpy(s->raw + s->raw_len, rec, len);
		s->raw_len += len;
		err = st_writer_append(w, rec, len);
		if (i == events / 2)
			st_writer_set_lost(w, 2, i);
	}
	return expectf(!st_writer_close(w, NULL, 0) && !err, test, "writing the sample");
}

static void free_sample(struct sample *s)
{
	free(s->m.data);
	free(s->raw);
}

/* Raw event bytes and end offset of the complete chunks of `full` below `cut`. */
static void complete_before(struct st_reader *full, size_t cut, size_t *raw, uint64_t *end,
			    uint64_t *schema_end)
{
	*raw = 0;
	*end = 32;
	for (size_t i = 0; i < st_chunk_count(full); i++) {
		const struct st_chunk_info *ci = st_chunk_at(full, i);

		if (ci->kind == ST_CHUNK_SCHEMA)
			*schema_end = ci->offset + ci->stored_size;
		if (ci->offset + ci->stored_size > cut || *end != ci->offset)
			continue;
		*end = ci->offset + ci->stored_size;
		if (ci->kind == ST_CHUNK_EVENTS)
			*raw += ci->raw_size;
	}
}

static int check_cut(const char *test, const struct sample *s, struct st_reader *full, size_t cut)
{
	uint64_t end, schema_end = 0;
	struct st_reader *r = NULL;
	size_t raw;
	int err, bad;

	complete_before(full, cut, &raw, &end, &schema_end);
	err = st_reader_open_mem(&r, s->m.data, cut, 0);
	if (cut < schema_end) {
		bad = expectf(err != 0 && r && st_reader_errmsg(r)[0], test,
			      "cut at %zu, before the schema's end: opened", cut);
		st_reader_close(r);
		return bad;
	}
	const struct st_file_info *info = r ? st_reader_info(r) : NULL;

	bad = expectf(!err, test, "cut at %zu: %s", cut, r ? st_reader_errmsg(r) : "");
	if (!bad && cut == s->m.len)
		bad = expectf(info->footer_present && !info->recovered && !info->damage[0], test,
			      "whole file: footer %d", info->footer_present);
	else if (!bad)
		bad = expectf(info->recovered && !info->footer_present && info->damage[0] &&
			      info->valid_size == end && info->lost_tail_bytes == cut - end &&
			      info->raw_bytes == raw, test,
			      "cut at %zu: recovered %d valid %llu (expected %llu) raw %llu (%zu): %s",
			      cut, info->recovered, (unsigned long long)info->valid_size,
			      (unsigned long long)end, (unsigned long long)info->raw_bytes, raw,
			      info->damage);
	bad = bad || cursor_matches(test, r, s->raw, raw);
	st_reader_close(r);
	return bad;
}

static int test_cut_every_byte(void)
{
	struct sample s = { 0 };
	struct st_reader *full = NULL;
	int bad = make_sample(__func__, &s, 150, 512) || open_mem(__func__, &full, s.m.data, s.m.len, 0);

	bad = bad || expectf(st_chunk_count(full) > 8, __func__, "only %zu chunks", st_chunk_count(full));
	for (size_t cut = 0; cut <= s.m.len && !bad; cut++)
		bad = check_cut(__func__, &s, full, cut);
	st_reader_close(full);
	free_sample(&s);
	return bad;
}

static int test_cut_large_random(void)
{
	struct sample s = { 0 };
	struct st_reader *full = NULL;
	int bad = make_sample(__func__, &s, 200000, 65536) ||
		  open_mem(__func__, &full, s.m.data, s.m.len, 0);

	rnd_seed(7);
	for (int i = 0; i < 30 && !bad; i++)
		bad = check_cut(__func__, &s, full, (size_t)rnd_below(s.m.len));
	st_reader_close(full);
	free_sample(&s);
	return bad;
}

/*
 * What `st-format verify` does: scan every chunk, then decode each one.
 * 0 for an intact file; otherwise 1 and what was wrong in `why`.
 */
static int verify(const void *data, size_t len, char *why, size_t cap)
{
	struct st_chunk_buf buf = { 0 };
	struct st_reader *r;
	int err = st_reader_open_mem(&r, data, len, ST_READ_SCAN);
	const struct st_file_info *info = err ? NULL : st_reader_info(r);

	if (err)
		snprintf(why, cap, "%s", r ? st_reader_errmsg(r) : "no memory");
	else if (info->damage[0] || !info->footer_present)
		snprintf(why, cap, "%s", info->damage);
	for (size_t i = 0; !err && !why[0] && i < st_chunk_count(r); i++)
		if (st_chunk_decode(r, i, &buf))
			snprintf(why, cap, "%s", st_reader_errmsg(r));
	st_chunk_buf_free(&buf);
	st_reader_close(r);
	return why[0] != 0;
}

/* A reader in footer mode over damaged bytes: read everything, crash nothing. */
static void read_everything(const void *data, size_t len)
{
	struct st_chunk_buf buf = { 0 };
	const struct st_event_header *e;
	struct st_reader *r;
	struct st_cursor *c;

	if (!st_reader_open_mem(&r, data, len, 0)) {
		for (size_t i = 0; i < st_chunk_count(r); i++)
			st_chunk_decode(r, i, &buf);
		if (!st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c)) {
			while (st_cursor_next(c, &e) > 0)
				;
			st_cursor_close(c);
		}
	}
	st_chunk_buf_free(&buf);
	st_reader_close(r);
}

/* The message names the damaged structure: the file header, a chunk or the trailer. */
static int names_place(const char *why)
{
	return strstr(why, "chunk ") || strstr(why, "file header") || strstr(why, "trailer");
}

static int test_bit_flips(void)
{
	struct sample s = { 0 };
	char why[256] = "";
	int bad = make_sample(__func__, &s, 60, 400);

	bad = bad || expectf(!verify(s.m.data, s.m.len, why, sizeof(why)), __func__,
			     "intact file fails verify: %s", why);
	for (size_t i = 0; i < s.m.len && !bad; i++) {
		s.m.data[i] ^= (unsigned char)(1u << (i % 8));
		why[0] = '\0';
		bad = expectf(verify(s.m.data, s.m.len, why, sizeof(why)), __func__,
			      "flip at byte %zu not detected", i) ||
		      expectf(names_place(why), __func__, "flip at %zu: message \"%s\"", i, why);
		read_everything(s.m.data, s.m.len);
		s.m.data[i] ^= (unsigned char)(1u << (i % 8));
	}
	free_sample(&s);
	return bad;
}

/* Random bytes, and random garbage after a valid header, open or fail cleanly. */
static int test_garbage(void)
{
	struct sample s = { 0 };
	unsigned char junk[4096];
	int bad = make_sample(__func__, &s, 10, 0);

	rnd_seed(11);
	for (int round = 0; round < 2000 && !bad; round++) {
		size_t len = (size_t)rnd_below(sizeof(junk));

		for (size_t i = 0; i < len; i++)
			junk[i] = (unsigned char)rnd();
		if (round % 2)
			memcpy(junk, s.m.data, len < 96 ? len : 96);
		read_everything(junk, len);
	}
	free_sample(&s);
	return bad;
}

int main(void)
{
	RUN(test_cut_every_byte);
	RUN(test_cut_large_random);
	RUN(test_bit_flips);
	RUN(test_garbage);
	return check_failures != 0;
}
