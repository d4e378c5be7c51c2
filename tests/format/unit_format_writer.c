/* SPDX-License-Identifier: MIT */
/*
 * unit_format_writer.c - the writer's error paths and guarantees: a full
 * device (sink returning -ENOSPC) ends with ST_ENOSPC and a file readable up
 * to its last complete chunk; I/O errors; records and types it refuses;
 * flushed data is readable before close; bad files and versions a reader
 * refuses with a message.
 */
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "unit_util.h"

static int append_many(struct st_writer *w, size_t n, int *err)
{
	size_t i;

	*err = 0;
	for (i = 0; i < n && !*err; i++) {
		struct st_ev_sys_exit e = exit_event(i, 0, (int64_t)i);

		*err = st_writer_append(w, &e, sizeof(e));
	}
	return (int)i;
}

static int test_enospc(void)
{
	struct mem_sink m = { .limit = 20000 };
	struct st_writer *w = mem_writer(__func__, &m, 1024, 1);
	struct st_ev_sys_exit e = exit_event(1, 0, 0);
	const struct st_event_header *ev;
	struct st_reader *r = NULL;
	struct st_cursor *c = NULL;
	char msg[256];
	int err, ret = 0, bad;
	uint64_t n = 0;

	if (!w)
		return 1;
	append_many(w, 100000, &err);
	bad = expectf(err == ST_ENOSPC, __func__, "append returned %d", err) ||
	      expectf(st_writer_append(w, &e, sizeof(e)) == ST_ENOSPC && m.len == m.limit, __func__,
		      "writer went on after ENOSPC");
	err = st_writer_close(w, msg, sizeof(msg));
	bad = bad || expectf(err == ST_ENOSPC && strstr(msg, "No space left"), __func__,
			     "close: %d \"%s\"", err, msg) ||
	      open_mem(__func__, &r, m.data, m.len, 0);
	if (!bad) {
		const struct st_file_info *info = st_reader_info(r);

		bad = expectf(info->recovered && info->damage[0] && info->events > 0 &&
			      info->valid_size + info->lost_tail_bytes == m.len, __func__,
			      "recovered %d events %llu: %s", info->recovered,
			      (unsigned long long)info->events, info->damage) ||
		      expectf(!st_cursor_open(r, 0, UINT64_MAX, &c), __func__, "cursor");
		for (; !bad && (ret = st_cursor_next(c, &ev)) > 0; n++)
			bad = expectf(ev->ts == n, __func__, "event %llu has ts %llu",
				      (unsigned long long)n, (unsigned long long)ev->ts);
		st_cursor_close(c);
		bad = bad || expectf(ret == 0 && n == info->events, __func__, "read %llu events",
				     (unsigned long long)n);
	}
	st_reader_close(r);
	free(m.data);
	return bad;
}

static int failing_write(void *ctx, const void *buf, size_t len, uint64_t offset)
{
	(void)ctx, (void)buf, (void)len, (void)offset;
	return -EIO;
}

static int test_sink_eio(void)
{
	struct st_sink sink = { failing_write, NULL, NULL };
	struct st_writer_opts o = { .sink = &sink };
	struct st_writer *w;
	char msg[256];
	int err = st_writer_open(&w, NULL, &o);

	return expectf(err == ST_EIO && strstr(st_writer_errmsg(w), "Input/output error"), __func__,
		       "open: %d %s", err, st_writer_errmsg(w)) ||
	       expectf(st_writer_close(w, msg, sizeof(msg)) == ST_EIO && msg[0], __func__, "close");
}

static const struct st_field bad_fields[] = {
	{ "type", 0, 2, 2, ST_FT_UINT, "" },
	{ "beyond", 40, 8, 8, ST_FT_UINT, "past the end of a 40-byte record" },
};

static int refused_type(const char *test, struct st_type t, const char *why)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = mem_writer(test, &m, 0, 0);
	int err = w ? st_writer_add_type(w, &t) : 0;
	int bad = !w || expectf(err == ST_EINVAL && strstr(st_writer_errmsg(w), why), test,
				"type %u: %d \"%s\"", t.id, err, st_writer_errmsg(w));

	if (w)
		st_writer_close(w, NULL, 0);
	free(m.data);
	return bad;
}

static int refused_record(const char *test, const void *rec, size_t len, const char *why)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = mem_writer(test, &m, 0, 0);
	int err = w ? st_writer_append(w, rec, len) : 0;
	int bad = !w || expectf(err == ST_EINVAL && strstr(st_writer_errmsg(w), why), test,
				"record: %d \"%s\"", err, st_writer_errmsg(w));

	if (w)
		bad |= expectf(st_writer_close(w, NULL, 0) == ST_EINVAL, test, "close forgot the error");
	free(m.data);
	return bad;
}

static int test_refusals(void)
{
	struct st_ev_sys_exit e = exit_event(1, 0, 0);
	struct st_ev_sys_exit undeclared = e, short_size = e;
	struct st_writer_opts tiny = { .chunk_size = 10 }, level = { .zstd_level = 99 };
	struct st_writer *w;
	int bad;

	undeclared.h.type = 9999;
	short_size.h.size = 24;
	bad = refused_record(__func__, &undeclared, sizeof(e), "undeclared type 9999") ||
	      refused_record(__func__, &short_size, sizeof(e), "header size 24") ||
	      refused_record(__func__, &e, 8, "shorter than its header") ||
	      refused_type(__func__, (struct st_type){ 500, 36, "odd", 0, NULL }, "multiple of 8") ||
	      refused_type(__func__, (struct st_type){ 500, 40, "far", 2, bad_fields }, "past the record") ||
	      refused_type(__func__, *st_builtin_type(ST_EV_block_rq_issue), "declared twice") ||
	      refused_type(__func__, (struct st_type){ 0, 40, "zero", 0, NULL }, "type id 0");
	bad = bad || expectf(st_writer_open(&w, NULL, &tiny) == ST_EINVAL &&
			     strstr(st_writer_errmsg(w), "chunk size"), __func__, "tiny chunks");
	st_writer_close(w, NULL, 0);
	bad = bad || expectf(st_writer_open(&w, "/nonexistent/dir/x", &level) == ST_EINVAL, __func__,
			     "level 99");
	st_writer_close(w, NULL, 0);
	bad = bad || expectf(st_writer_open(&w, "/nonexistent/dir/x", NULL) == ST_EIO &&
			     strstr(st_writer_errmsg(w), "cannot create"), __func__, "missing dir");
	st_writer_close(w, NULL, 0);
	return bad;
}

static int test_type_after_schema(void)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = mem_writer(__func__, &m, 0, 0);
	struct st_ev_sys_exit e = exit_event(1, 0, 0);
	struct st_type late = { 700, 32, "late", 0, NULL };
	int bad;

	if (!w)
		return 1;
	st_writer_append(w, &e, sizeof(e));
	st_writer_flush(w);
	bad = expectf(st_writer_add_type(w, &late) == ST_EINVAL, __func__, "late type accepted");
	st_writer_close(w, NULL, 0);
	free(m.data);
	return bad;
}

/* After a flush, what the sink holds already reads back: events survive a crash. */
static int test_flush_is_readable(void)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = mem_writer(__func__, &m, 0, 0);
	struct st_writer_stats st;
	struct st_reader *r = NULL;
	int err, bad;

	if (!w)
		return 1;
	append_many(w, 77, &err);
	st_writer_set_meta(w, "late.key", "after the first chunk");
	bad = expectf(!err && !st_writer_flush(w), __func__, "flush");
	st_writer_stats(w, &st);
	bad = bad || expectf(st.events == 77 && st.raw_bytes == 77 * 32 && st.chunks >= 3 &&
			     st.file_bytes == m.len, __func__, "stats: %llu events, %llu bytes",
			     (unsigned long long)st.events, (unsigned long long)st.file_bytes) ||
	      open_mem(__func__, &r, m.data, m.len, 0);
	bad = bad || expectf(st_reader_info(r)->events == 77 && st_reader_info(r)->recovered &&
			     st_meta_get(r, "late.key"), __func__, "events %llu",
			     (unsigned long long)st_reader_info(r)->events);
	st_reader_close(r);
	st_writer_close(w, NULL, 0);
	free(m.data);
	return bad;
}

static int expect_open_error(const char *test, const void *data, size_t len, int want,
			     const char *why)
{
	struct st_reader *r;
	int err = st_reader_open_mem(&r, data, len, 0);
	int bad = expectf(err == want && strstr(st_reader_errmsg(r), why), test,
			  "open gave %d \"%s\", expected %d \"%s\"", err, st_reader_errmsg(r), want, why);

	st_reader_close(r);
	return bad;
}

static int test_reader_refusals(void)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = mem_writer(__func__, &m, 0, 0);
	static const char text[] = "this is a text file, not a trace, but long enough to be one";
	struct st_reader *r;
	int bad;

	if (!w)
		return 1;
	st_writer_close(w, NULL, 0);
	bad = expect_open_error(__func__, text, sizeof(text), ST_EFORMAT, "not a .sttrace file") ||
	      expect_open_error(__func__, m.data, 20, ST_ETRUNCATED, "shorter than a file header");
	/* A future major version, with a valid header checksum. */
	m.data[8] = 2;
	memcpy(m.data + 24, &(uint64_t){ XXH64(m.data, 24, 0) }, 8);
	bad = bad || expect_open_error(__func__, m.data, m.len, ST_EVERSION, "format version 2.0");
	bad = bad || expectf(st_reader_open(&r, "/nonexistent.sttrace", 0) == ST_EIO &&
			     strstr(st_reader_errmsg(r), "No such file"), __func__, "missing file");
	st_reader_close(r);
	bad = bad || expectf(st_reader_open(&r, "/tmp", 0) == ST_EINVAL, __func__, "directory");
	st_reader_close(r);
	free(m.data);
	return bad;
}

int main(void)
{
	RUN(test_enospc);
	RUN(test_sink_eio);
	RUN(test_refusals);
	RUN(test_type_after_schema);
	RUN(test_flush_is_readable);
	RUN(test_reader_refusals);
	return unit_failed;
}
