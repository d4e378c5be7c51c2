/* SPDX-License-Identifier: MIT */
/*
 * test_format_rules.c - rules of spec/sttrace-format.md that a reader built
 * from the text alone could read either way, pinned on chunks encoded by
 * hand after a writer's schema: a compressed payload is one regular zstd
 * frame filling it (section 1, section 4.1 rule 6); an events chunk without
 * records bounds no time (section 5.3); the file header's flags are ignored
 * and its header_size must be 32 (section 3).
 */
#include <zstd.h>

#include "unit_util.h"

/* A footerless file: a writer's header, metadata and schema, nothing after. */
struct prefix {
	struct mem_sink m;
	size_t len;		/* bytes up to the end of the schema chunk */
	uint32_t next_seq;
};

static int make_prefix(const char *test, struct prefix *p)
{
	struct st_writer *w = mem_writer(test, &p->m, 0, 1);
	struct st_reader *r = NULL;
	int bad = !w;

	if (w) {
		st_writer_set_meta(w, "tool", "test_format_rules");
		bad = expectf(!st_writer_close(w, NULL, 0), test, "writing");
	}
	bad = bad || open_mem(test, &r, p->m.data, p->m.len, 0);
	for (size_t i = 0; !bad && i < st_chunk_count(r); i++) {
		const struct st_chunk_info *ci = st_chunk_at(r, i);

		if (ci->kind == ST_CHUNK_SCHEMA) {
			p->len = ci->offset + ci->stored_size;
			p->next_seq = ci->seq + 1;
		}
	}
	st_reader_close(r);
	return bad || expectf(p->len > 0, test, "no schema chunk");
}

/* Records of sys_exit_pread64 at timestamps ts0, ts0 + 10, ...: their bytes. */
static size_t exit_records(unsigned char *out, size_t n, uint64_t ts0)
{
	for (size_t i = 0; i < n; i++) {
		struct st_ev_sys_exit e = exit_event(ts0 + 10 * i, 0, (int64_t)i);

		memcpy(out + i * sizeof(e), &e, sizeof(e));
	}
	return n * sizeof(struct st_ev_sys_exit);
}

/*
 * The prefix, then an events chunk of 8 records whose zstd payload is
 * `frame` (len bytes). 0 when the scan takes it with its 8 events; else 1,
 * with the reason of the damaged range in why.
 */
static int scan_events_chunk(const char *test, const struct prefix *p, const void *frame, size_t len,
			     char *why, size_t cap)
{
	unsigned char *file = malloc(p->len + 64 + len);
	struct st_reader *r = NULL;
	size_t at = p->len;
	int taken;

	memcpy(file, p->m.data, p->len);
	at += spec_chunk_hdr(file + at, &(struct spec_hdr){
		.kind = ST_CHUNK_EVENTS, .seq = p->next_seq, .flags = 1, .payload_size = (uint32_t)len,
		.raw_size = 8 * sizeof(struct st_ev_sys_exit), .events = 8, .first_ts = 1000, .last_ts = 1070,
	}, frame);
	taken = !open_mem(test, &r, file, at, 0) && st_reader_info(r)->events == 8;
	snprintf(why, cap, "%s", r && st_damage_count(r) ? st_damage_at(r, 0)->why : "");
	st_reader_close(r);
	free(file);
	return !taken;
}

/* A skippable frame of 4 bytes. */
static size_t skippable_frame(unsigned char *out)
{
	put32(out, ZSTD_MAGIC_SKIPPABLE_START);
	put32(out + 4, 4);
	memcpy(out + 8, "skip", 4);
	return 12;
}

static int test_one_zstd_frame(void)
{
	unsigned char raw[8 * sizeof(struct st_ev_sys_exit)], frame[1024], two[2048];
	struct prefix p = { 0 };
	size_t raw_len = exit_records(raw, 8, 1000), len, len2;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	char why[160];
	int bad = make_prefix(__func__, &p);

	len = ZSTD_compress(frame, sizeof(frame), raw, raw_len, 1);
	bad = bad || expectf(!ZSTD_isError(len), __func__, "compress") ||
	      expectf(!scan_events_chunk(__func__, &p, frame, len, why, sizeof(why)), __func__,
		      "one frame not taken: %s", why);
	/* the frame, then a skippable frame zstd would step over */
	memcpy(two, frame, len);
	len2 = len + skippable_frame(two + len);
	bad = bad || expectf(scan_events_chunk(__func__, &p, two, len2, why, sizeof(why)) &&
			     strstr(why, "bytes after the zstd frame"), __func__,
			     "frame + skippable frame: \"%s\"", why);
	/* a skippable frame, then the frame */
	len2 = skippable_frame(two);
	memcpy(two + len2, frame, len);
	bad = bad || expectf(scan_events_chunk(__func__, &p, two, len2 + len, why, sizeof(why)) &&
			     strstr(why, "skippable zstd frame"), __func__, "skippable first: \"%s\"", why);
	/* two frames without content sizes, 3 and 5 records, which zstd would join */
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
	len = ZSTD_compress2(cctx, two, sizeof(two), raw, 3 * sizeof(struct st_ev_sys_exit));
	len2 = ZSTD_compress2(cctx, two + len, sizeof(two) - len, raw + 3 * sizeof(struct st_ev_sys_exit),
			      5 * sizeof(struct st_ev_sys_exit));
	bad = bad || expectf(!ZSTD_isError(len) && !ZSTD_isError(len2), __func__, "compress2") ||
	      expectf(scan_events_chunk(__func__, &p, two, len + len2, why, sizeof(why)) &&
		      strstr(why, "bytes after the zstd frame"), __func__, "two frames: \"%s\"", why);
	ZSTD_freeCCtx(cctx);
	free(p.m.data);
	return bad;
}

/*
 * An events chunk with no records, claiming the time range [1, 2^62], among
 * two chunks of records: the file's time span is that of the records.
 */
static int test_empty_events_chunk(void)
{
	unsigned char raw[256], *file;
	struct prefix p = { 0 };
	struct st_reader *r = NULL;
	size_t len, at;
	int bad = make_prefix(__func__, &p);

	if (bad)
		return 1;
	file = malloc(p.len + 3 * (64 + sizeof(raw)));
	memcpy(file, p.m.data, p.len);
	at = p.len;
	len = exit_records(raw, 4, 5000);
	at += spec_chunk_hdr(file + at, &(struct spec_hdr){
		.kind = ST_CHUNK_EVENTS, .seq = p.next_seq, .payload_size = (uint32_t)len,
		.raw_size = (uint32_t)len, .events = 4, .first_ts = 5000, .last_ts = 5030 }, raw);
	at += spec_chunk_hdr(file + at, &(struct spec_hdr){
		.kind = ST_CHUNK_EVENTS, .seq = p.next_seq + 1, .first_ts = 1, .last_ts = 1ull << 62 }, raw);
	at += spec_chunk_hdr(file + at, &(struct spec_hdr){
		.kind = ST_CHUNK_EVENTS, .seq = p.next_seq + 2, .payload_size = (uint32_t)len,
		.raw_size = (uint32_t)len, .events = 4, .first_ts = 6000, .last_ts = 6030 },
		(exit_records(raw, 4, 6000), raw));
	bad = open_mem(__func__, &r, file, at, 0) ||
	      expectf(!st_damage_count(r) && st_reader_info(r)->event_chunks == 3 &&
		      st_reader_info(r)->events == 8, __func__, "%zu ranges, %llu events chunks",
		      st_damage_count(r), (unsigned long long)st_reader_info(r)->event_chunks) ||
	      expectf(st_reader_info(r)->first_ts == 5000 && st_reader_info(r)->last_ts == 6030, __func__,
		      "time span %llu..%llu, want 5000..6030",
		      (unsigned long long)st_reader_info(r)->first_ts,
		      (unsigned long long)st_reader_info(r)->last_ts);
	st_reader_close(r);
	free(file);
	free(p.m.data);
	return bad;
}

/* The file header: flags are ignored, a header_size other than 32 is refused. */
static int test_file_header_fields(void)
{
	struct prefix p = { 0 };
	struct st_reader *r = NULL;
	int bad = make_prefix(__func__, &p), err;

	if (bad)
		return 1;
	put32(p.m.data + 16, 0x80000001u);
	put64(p.m.data + 24, XXH64(p.m.data, 24, 0));
	bad = open_mem(__func__, &r, p.m.data, p.m.len, 0) ||
	      expectf(st_meta_get(r, "tool") != NULL, __func__, "flags: metadata lost");
	st_reader_close(r);
	put32(p.m.data + 12, 64);
	put64(p.m.data + 24, XXH64(p.m.data, 24, 0));
	err = st_reader_open_mem(&r, p.m.data, p.m.len, 0);
	bad = bad || expectf(err == ST_EFORMAT && strstr(st_reader_errmsg(r), "not a .sttrace file"),
			     __func__, "header_size 64: %d \"%s\"", err, st_reader_errmsg(r));
	st_reader_close(r);
	free(p.m.data);
	return bad;
}

int main(void)
{
	RUN(test_one_zstd_frame);
	RUN(test_empty_events_chunk);
	RUN(test_file_header_fields);
	return check_failures != 0;
}
