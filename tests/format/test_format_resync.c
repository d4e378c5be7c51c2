/* SPDX-License-Identifier: MIT */
/*
 * test_format_resync.c - a file without footer (a killed recording) whose
 * middle is damaged: a bit flipped in a chunk's header or payload, several
 * chunks, or hostile bytes. The scan skips the damaged bytes, returns every
 * intact chunk before and after them with all their events, and reports
 * each skipped byte range, through memory and through a file. Whole chunks
 * cut out of the file cost only themselves.
 */
#include <unistd.h>

#include "unit_util.h"

/* A closed file and where its index chunk starts: cut there, it has no footer. */
struct sample {
	struct mem_sink m;
	struct st_reader *full;	/* reader of the intact, closed file */
	size_t len;		/* offset of the index chunk */
	size_t nchunks;		/* chunks before the index */
	size_t schema;		/* position of the schema chunk */
};

/* Events with rising timestamps; `random` ones carry incompressible bytes. */
static int append_events(struct st_writer *w, size_t events, int random)
{
	int err = random ? st_writer_add_type(w, &future_type) : 0;

	for (size_t i = 0; i < events && !err; i++) {
		struct future_rec f = { { FUTURE_TYPE, 48, 0, i * 7, 1, 2 }, 0, "", { 0 } };
		struct st_ev_sys_exit ex = exit_event(i * 7, 0, (int64_t)i);

		if (!random) {
			err = st_writer_append(w, &ex, sizeof(ex));
			continue;
		}
		memcpy(&f.delta, &(uint64_t[3]){ rnd(), rnd(), rnd() }, 24);
		err = st_writer_append(w, &f, sizeof(f));
	}
	return err;
}

static int make_sample(const char *test, struct sample *s, size_t events, size_t chunk, int random)
{
	struct st_writer *w = mem_writer(test, &s->m, chunk, 1);
	const struct st_chunk_info *index;
	int err = !w;

	if (w) {
		st_writer_set_meta(w, "tool", "test_format_resync");
		err = append_events(w, events, random);
		st_writer_set_lost(w, 1, 5);
		err = st_writer_close(w, NULL, 0) || err;
	}
	if (expectf(!err, test, "writing the sample") ||
	    open_mem(test, &s->full, s->m.data, s->m.len, 0))
		return 1;
	s->nchunks = st_chunk_count(s->full) - 1;
	index = st_chunk_at(s->full, s->nchunks);
	s->len = index->offset;
	for (size_t i = 0; i < s->nchunks; i++)
		if (st_chunk_at(s->full, i)->kind == ST_CHUNK_SCHEMA)
			s->schema = i;
	return expectf(index->kind == ST_CHUNK_INDEX && s->nchunks > s->schema + 6, test,
		       "%zu chunks before the index", s->nchunks);
}

static void free_sample(struct sample *s)
{
	st_reader_close(s->full);
	free(s->m.data);
}

/* Raw event bytes of the sample's events chunks not marked in `skip`, in file order. */
static unsigned char *events_except(struct sample *s, const char *skip, size_t *len)
{
	struct st_chunk_buf buf = { 0 };
	unsigned char *raw = malloc(st_reader_info(s->full)->raw_bytes + 1);

	*len = 0;
	for (size_t i = 0; raw && i < s->nchunks; i++) {
		if (skip[i] || st_chunk_at(s->full, i)->kind != ST_CHUNK_EVENTS ||
		    st_chunk_decode(s->full, i, &buf))
			continue;
		memcpy(raw + *len, buf.data, buf.len);
		*len += buf.len;
	}
	st_chunk_buf_free(&buf);
	return raw;
}

/* The chunks the scan found are exactly the intact ones, in order. */
static int check_chunks(const char *test, struct sample *s, struct st_reader *r, const char *skip)
{
	size_t at = 0;

	for (size_t i = 0; i < s->nchunks; i++) {
		const struct st_chunk_info *want = st_chunk_at(s->full, i), *got = st_chunk_at(r, at);

		if (skip[i])
			continue;
		if (expectf(got && got->offset == want->offset && got->seq == want->seq, test,
			    "chunk %zu (seq %u at %llu) not found", i, want->seq,
			    (unsigned long long)want->offset))
			return 1;
		at++;
	}
	return expectf(st_chunk_count(r) == at, test, "%zu chunks found, %zu intact",
		       st_chunk_count(r), at);
}

/*
 * One range per run of consecutive skipped chunks: where it starts, its
 * bytes, the first missing sequence number and how many are missing (0 for
 * a run that reaches the end of the file).
 */
static int check_ranges(const char *test, struct sample *s, struct st_reader *r, const char *skip)
{
	const struct st_file_info *info = st_reader_info(r);
	uint64_t bytes = 0, missing = 0;
	size_t n = 0;
	char first[160] = "";

	for (size_t i = 0; i < s->nchunks; i++) {
		const struct st_chunk_info *ci = st_chunk_at(s->full, i);
		const struct st_damage *d = st_damage_at(r, n);
		size_t end = i, size = 0;

		if (!skip[i])
			continue;
		while (end < s->nchunks && skip[end])
			size += st_chunk_at(s->full, end++)->stored_size;
		if (!first[0])
			snprintf(first, sizeof(first), "chunk %zu at offset %llu: ", i,
				 (unsigned long long)ci->offset);
		if (expectf(d && d->offset == ci->offset && d->size == size && d->first_seq == i &&
			    d->chunks == (end < s->nchunks ? end - i : 0), test,
			    "range %zu: want %llu+%zu seq %zu, got %llu+%llu seq %u chunks %u", n,
			    (unsigned long long)ci->offset, size, i,
			    d ? (unsigned long long)d->offset : 0, d ? (unsigned long long)d->size : 0,
			    d ? d->first_seq : 0, d ? d->chunks : 0))
			return 1;
		missing += end < s->nchunks ? end - i : 0;
		bytes += size;
		n++;
		i = end;
	}
	return expectf(st_damage_count(r) == n && info->damaged_ranges == n &&
		       info->skipped_bytes == bytes && info->missing_chunks == missing &&
		       info->recovered && !info->footer_present &&
		       !strncmp(info->damage, first, strlen(first)), test,
		       "%zu ranges (want %zu), %llu bytes (%llu), %llu missing (%llu), damage \"%s\"",
		       st_damage_count(r), n, (unsigned long long)info->skipped_bytes,
		       (unsigned long long)bytes, (unsigned long long)info->missing_chunks,
		       (unsigned long long)missing, info->damage);
}

/* Bytes `len` read through a file when `path` is set, else from memory. */
static int open_damaged(const char *test, struct st_reader **r, const unsigned char *data, size_t len,
			const char *path)
{
	FILE *f;

	if (!path)
		return open_mem(test, r, data, len, 0);
	f = fopen(path, "wb");
	if (expectf(f && fwrite(data, 1, len, f) == len && !fclose(f), test, "writing %s", path))
		return 1;
	return expectf(!st_reader_open(r, path, 0), test, "open: %s", *r ? st_reader_errmsg(*r) : "");
}

/*
 * Flips one bit in each chunk marked in `skip` (in its header when `header`,
 * else in the middle of its payload) of the footerless file, then checks the
 * scan: every other chunk and all its events, and the ranges.
 */
static int check_damage(const char *test, struct sample *s, const char *skip, int header,
			const char *path)
{
	unsigned char *data = malloc(s->len), *want;
	struct st_reader *r = NULL;
	size_t want_len;
	int bad;

	memcpy(data, s->m.data, s->len);
	for (size_t i = 0; i < s->nchunks; i++) {
		const struct st_chunk_info *ci = st_chunk_at(s->full, i);

		if (skip[i])
			data[ci->offset + (header ? 8 : 64 + (ci->stored_size - 64) / 2)] ^= 0x10;
	}
	want = events_except(s, skip, &want_len);
	bad = open_damaged(test, &r, data, s->len, path) || check_chunks(test, s, r, skip) ||
	      check_ranges(test, s, r, skip) || cursor_matches(test, r, want, want_len) ||
	      expectf(st_meta_get(r, "tool") != NULL, test, "metadata lost");
	st_reader_close(r);
	free(want);
	free(data);
	return bad;
}

/* Chunk k of n damaged, for every k after the schema, in its header or its payload. */
static int test_each_chunk(void)
{
	struct sample s = { 0 };
	char skip[4096] = { 0 };
	int bad = make_sample(__func__, &s, 300, 512, 0);

	for (size_t k = s.schema + 1; k < s.nchunks && !bad; k++) {
		skip[k] = 1;
		bad = check_damage(__func__, &s, skip, 1, NULL) || check_damage(__func__, &s, skip, 0, NULL);
		skip[k] = 0;
	}
	free_sample(&s);
	return bad;
}

/* Two chunks next to each other make one range; two apart make two. */
static int test_several_chunks(void)
{
	struct sample s = { 0 };
	char skip[4096] = { 0 };
	int bad = make_sample(__func__, &s, 300, 512, 0);
	size_t k = s.schema + 3;

	skip[k] = skip[k + 1] = 1;
	bad = bad || check_damage(__func__, &s, skip, 1, NULL) || check_damage(__func__, &s, skip, 0, NULL);
	skip[k + 1] = 0;
	skip[k + 3] = skip[s.nchunks - 1] = 1;
	bad = bad || check_damage(__func__, &s, skip, 1, NULL) || check_damage(__func__, &s, skip, 0, NULL);
	free_sample(&s);
	return bad;
}

/* Through a file, with chunks larger than the scan's search window (64 KiB). */
static int test_file_windows(void)
{
	char path[] = "/tmp/test_format_resync.XXXXXX";
	int fd = mkstemp(path), bad = expectf(fd >= 0, __func__, "mkstemp");
	struct sample s = { 0 };
	char skip[4096] = { 0 };

	if (fd >= 0)
		close(fd);
	bad = bad || make_sample(__func__, &s, 60000, 300000, 1) ||
	      expectf(st_chunk_at(s.full, s.schema + 3)->stored_size > 2 * 65536, __func__,
		      "chunk of %u bytes", st_chunk_at(s.full, s.schema + 3)->stored_size);
	skip[s.schema + 3] = 1;
	bad = bad || check_damage(__func__, &s, skip, 1, path) || check_damage(__func__, &s, skip, 0, path);
	skip[s.schema + 5] = skip[s.schema + 6] = 1;
	bad = bad || check_damage(__func__, &s, skip, 1, path);
	free_sample(&s);
	unlink(path);
	return bad;
}

/*
 * `gap` bytes of repeated chunk magic inserted before chunk k (none of it a
 * valid header): every chunk is still found, the ones after the gap where
 * they moved to, and the gap is one range with no chunk missing.
 */
static int check_gap(const char *test, struct sample *s, size_t k, size_t gap, const char *path)
{
	uint64_t at = st_chunk_at(s->full, k)->offset;
	unsigned char *data = malloc(s->len + gap);
	struct st_reader *r = NULL;
	const struct st_damage *d;
	int bad;

	memcpy(data, s->m.data, at);
	for (size_t i = 0; i < gap; i++)
		data[at + i] = (unsigned char)"STCK"[i % 4];
	memcpy(data + at + gap, s->m.data + at, s->len - at);
	bad = open_damaged(test, &r, data, s->len + gap, path);
	for (size_t i = 0; !bad && i < s->nchunks; i++)
		bad = expectf(st_chunk_count(r) == s->nchunks &&
			      st_chunk_at(r, i)->offset == st_chunk_at(s->full, i)->offset + (i < k ? 0 : gap),
			      test, "gap of %zu: chunk %zu of %zu not found", gap, i, st_chunk_count(r));
	d = bad ? NULL : st_damage_at(r, 0);
	bad = bad || expectf(st_damage_count(r) == 1 && d->offset == at && d->size == gap &&
			     d->first_seq == k && d->chunks == 0 && !st_reader_info(r)->missing_chunks,
			     test, "gap of %zu: %zu ranges", gap, st_damage_count(r));
	st_reader_close(r);
	free(data);
	return bad;
}

/*
 * Gaps of every length around the search window's size, so the next header
 * lies at each position near a window's end, partly in the next one.
 */
static int test_gaps(void)
{
	char path[] = "/tmp/test_format_resync.XXXXXX";
	int fd = mkstemp(path), bad = expectf(fd >= 0, __func__, "mkstemp");
	struct sample s = { 0 };

	if (fd >= 0)
		close(fd);
	bad = bad || make_sample(__func__, &s, 300, 512, 0);
	for (size_t gap = 1; gap < 9 && !bad; gap++)
		bad = check_gap(__func__, &s, s.schema + 3, gap, NULL) ||
		      check_gap(__func__, &s, s.schema + 3, gap, path);
	for (size_t gap = 65536 - 200; gap < 65536 + 64 && !bad; gap++)
		bad = check_gap(__func__, &s, s.schema + 3, gap, path);
	free_sample(&s);
	unlink(path);
	return bad;
}

/*
 * Chunks k..k+n-1 cut out whole, in a file with its footer or without:
 * every other chunk is found, moved up by the bytes cut, with all its
 * events, and the n chunks are missing. The cut skipped no bytes, so it is
 * no damaged range (a range is never empty): it is the damage, named by the
 * chunk after it. The trailer, which points at where the index was, is the
 * only range.
 */
static int check_removed(const char *test, struct sample *s, size_t k, size_t n, int footer)
{
	const struct st_chunk_info *first = st_chunk_at(s->full, k), *last = st_chunk_at(s->full, k + n - 1);
	size_t cut = last->offset + last->stored_size - first->offset;
	size_t len = (footer ? s->m.len : s->len) - cut, want_len;
	unsigned char *data = malloc(len), *want;
	char skip[4096] = { 0 }, why[160];
	struct st_reader *r = NULL;
	const struct st_damage *d;
	int bad;

	memcpy(data, s->m.data, first->offset);
	memcpy(data + first->offset, s->m.data + first->offset + cut, len - first->offset);
	memset(skip + k, 1, n);
	want = events_except(s, skip, &want_len);
	bad = open_damaged(test, &r, data, len, NULL);
	for (size_t i = 0, at = 0; !bad && i < s->nchunks; i++) {
		const struct st_chunk_info *got = st_chunk_at(r, at);

		if (skip[i])
			continue;
		bad = expectf(got && got->seq == i &&
			      got->offset == st_chunk_at(s->full, i)->offset - (i > k ? cut : 0),
			      test, "chunks %zu..%zu cut: chunk %zu not found", k, k + n - 1, i);
		at++;
	}
	snprintf(why, sizeof(why), "chunk %zu at offset %llu: absent, chunk %zu comes next", k,
		 (unsigned long long)first->offset, k + n);
	d = bad ? NULL : st_damage_at(r, 0);
	bad = bad || expectf(st_damage_count(r) == (size_t)footer && st_reader_info(r)->missing_chunks == n &&
			     st_reader_info(r)->skipped_bytes == (footer ? 32u : 0u) &&
			     !strcmp(st_reader_info(r)->damage, why), test,
			     "chunks %zu..%zu cut: %zu ranges, the first %llu bytes, %llu missing, damage \"%s\"",
			     k, k + n - 1, st_damage_count(r), d ? (unsigned long long)d->size : 0,
			     (unsigned long long)st_reader_info(r)->missing_chunks, st_reader_info(r)->damage) ||
	      (footer && expectf(d->offset == len - 32 && d->size == 32, test,
				 "chunks %zu..%zu cut: the moved trailer not reported", k, k + n - 1)) ||
	      cursor_matches(test, r, want, want_len);
	st_reader_close(r);
	free(want);
	free(data);
	return bad;
}

/* One or two whole chunks cut out anywhere after the schema cost no other chunk. */
static int test_removed_chunks(void)
{
	struct sample s = { 0 };
	int bad = make_sample(__func__, &s, 300, 512, 0);

	for (size_t k = s.schema + 1; k + 2 < s.nchunks && !bad; k++)
		bad = check_removed(__func__, &s, k, 1, 0) || check_removed(__func__, &s, k, 1, 1) ||
		      check_removed(__func__, &s, k, 2, 0);
	free_sample(&s);
	return bad;
}

/* A chunk header as the spec encodes it, with a payload checksum that never matches. */
static void put_fake_header(unsigned char *p, uint32_t seq, uint32_t payload_size)
{
	uint32_t words[6] = { 0x4b435453, ST_CHUNK_EVENTS, seq, 0, payload_size, payload_size };
	uint64_t xxh = 1;

	memset(p, 0, 64);
	memcpy(p, words, sizeof(words));
	memcpy(p + 48, &xxh, 8);
	xxh = XXH64(p, 56, 0);
	memcpy(p + 56, &xxh, 8);
}

/*
 * After the schema: a megabyte of chunk magic (every candidate fails its
 * header checksum), then headers with valid checksums whose payloads are
 * bad, each claiming the next 100 headers, and old sequence numbers. The
 * scan ends, skips it all as one range, and keeps what came before.
 */
static int test_hostile(void)
{
	struct sample s = { 0 };
	struct st_reader *r = NULL;
	int bad = make_sample(__func__, &s, 300, 512, 0);
	const struct st_chunk_info *schema = st_chunk_at(s.full, s.schema);
	size_t start = schema->offset + schema->stored_size, len = start + (3u << 20);
	unsigned char *data = malloc(len);

	memcpy(data, s.m.data, start);
	for (size_t at = start; at < start + (1u << 20); at += 4)
		memcpy(data + at, "STCK", 4);
	for (size_t at = start + (1u << 20), i = 0; at < len; at += 64, i++)
		put_fake_header(data + at, i % 2 ? (uint32_t)s.schema : 1000, 100 * 64);
	bad = bad || open_mem(__func__, &r, data, len, 0);
	bad = bad || expectf(st_chunk_count(r) == s.schema + 1 && st_damage_count(r) == 1 &&
			     st_damage_at(r, 0)->offset == start && st_damage_at(r, 0)->size == len - start &&
			     st_reader_info(r)->valid_size == start, __func__,
			     "%zu chunks, %zu ranges, valid %llu", st_chunk_count(r), st_damage_count(r),
			     (unsigned long long)st_reader_info(r)->valid_size);
	st_reader_close(r);
	free(data);
	free_sample(&s);
	return bad;
}

int main(void)
{
	RUN(test_each_chunk);
	RUN(test_several_chunks);
	RUN(test_file_windows);
	RUN(test_gaps);
	RUN(test_removed_chunks);
	RUN(test_hostile);
	return check_failures != 0;
}
