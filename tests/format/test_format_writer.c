/* SPDX-License-Identifier: MIT */
/*
 * test_format_writer.c - the writer's error paths and guarantees: a full
 * device (sink returning -ENOSPC) ends with ST_ENOSPC and a file readable up
 * to its last complete chunk; I/O errors; records and types it refuses;
 * flushed data is readable before close; bad files and versions a reader
 * refuses with a message; lanes (one open events chunk per cpu % lanes) keep
 * per-CPU batches apart, each chunk in time order; a congested sink's
 * events chunks dropped whole and counted.
 */
#include <sys/stat.h>
#include <unistd.h>

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
		      expectf(!st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c), __func__, "cursor");
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
	struct st_sink sink = { .write = failing_write };
	struct st_writer_opts o = { .sink = &sink };
	struct st_writer *w;
	char msg[256];
	int err = st_writer_open(&w, NULL, &o);

	return expectf(err == ST_EIO && strstr(st_writer_errmsg(w), "Input/output error"), __func__,
		       "open: %d %s", err, st_writer_errmsg(w)) ||
	       expectf(st_writer_close(w, msg, sizeof(msg)) == ST_EIO && msg[0], __func__, "close");
}

/* A memory sink that says it is congested while `congested` is set. */
struct slow_sink {
	struct mem_sink m;
	int congested;
};

static int slow_write(void *ctx, const void *buf, size_t len, uint64_t offset)
{
	return mem_sink_write(&((struct slow_sink *)ctx)->m, buf, len, offset);
}

static int slow_congested(void *ctx)
{
	return ((struct slow_sink *)ctx)->congested;
}

/*
 * While the sink is congested the writer drops whole events chunks: the file
 * verifies, its chunks are numbered without a gap, its per-type counts are
 * those of the chunks it holds, and the dropped events are its lost events,
 * under ST_LOST_DROPPED; the metadata set meanwhile goes out at close.
 */
static int test_congested_drops(void)
{
	struct slow_sink s = { 0 };
	struct st_sink sink = { .write = slow_write, .sync = NULL, .ctx = &s,
				.congested = slow_congested };
	struct st_writer_opts o = { .sink = &sink, .chunk_size = 1024, .zstd_level = 1 };
	struct st_writer_stats st;
	struct st_reader *r = NULL;
	struct st_cursor *c = NULL;
	const struct st_event_header *ev;
	uint64_t read = 0, lost = 0;
	uint32_t cpu = 0;
	struct st_writer *w;
	int err, bad;

	if (expectf(!st_writer_open(&w, NULL, &o) && !st_writer_add_builtin_types(w),
		    __func__, "open"))
		return 1;
	append_many(w, 100, &err);
	s.congested = 1;
	append_many(w, 300, &err);
	st_writer_set_meta(w, "late", "set while congested");
	s.congested = 0;
	append_many(w, 100, &err);
	st_writer_stats(w, &st);
	bad = expectf(!err && st.dropped_chunks > 0 && st.dropped_events >= 250 &&
		      st.dropped_events <= 300 + 100, __func__, "%llu events dropped in %llu chunks",
		      (unsigned long long)st.dropped_events, (unsigned long long)st.dropped_chunks) ||
	      expectf(!st_writer_close(w, NULL, 0), __func__, "close") ||
	      open_mem(__func__, &r, s.m.data, s.m.len, 0);
	if (!bad) {
		const struct st_file_info *in = st_reader_info(r);

		bad = expectf(!st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c), __func__, "cursor");
		while (!bad && st_cursor_next(c, &ev) > 0)
			read++;
		st_cursor_close(c);
		bad = bad || expectf(st_lost_count(r) == 1 && !st_lost_at(r, 0, &cpu, &lost), __func__,
				     "%zu lost entries", st_lost_count(r)) ||
		      expectf(in->footer_present && !in->missing_chunks && read == 500 - st.dropped_events &&
			      st_type_events(r, ST_EV_sys_exit_pread64) == read &&
			      cpu == ST_LOST_DROPPED && lost == st.dropped_events &&
			      in->lost_events == lost && st_meta_get(r, "late"), __func__,
			      "footer %d, %llu missing, %llu events read, %llu counted, lost %llu on cpu "
			      "0x%x of %llu dropped", in->footer_present,
			      (unsigned long long)in->missing_chunks, (unsigned long long)read,
			      (unsigned long long)st_type_events(r, ST_EV_sys_exit_pread64),
			      (unsigned long long)lost, cpu, (unsigned long long)st.dropped_events);
	}
	st_reader_close(r);
	free(s.m.data);
	return bad;
}

static const struct st_field bad_fields[] = {
	{ "type", 0, 2, 2, ST_FT_UINT, "" },
	{ "beyond", 40, 8, 8, ST_FT_UINT, "past the end of a 40-byte record" },
};

/* The six header fields of every type, then one more field `extra`. */
static struct st_type type_with(struct st_field fields[7], struct st_field extra)
{
	memcpy(fields, st_builtin_type(ST_EV_sys_exit_pread64)->fields, 6 * sizeof(*fields));
	fields[6] = extra;
	return (struct st_type){ 500, 32, "new_type", 7, fields };
}

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

/* The schema rules of spec section 5.2, which the reader applies too. */
static int test_schema_refusals(void)
{
	static const struct st_field no_header[] = { { "x", 24, 8, 8, ST_FT_UINT, "" } };
	struct st_field f[7], g[7];
	struct st_type renamed = type_with(g, (struct st_field){ "x", 24, 8, 8, ST_FT_UINT, "" });

	renamed.name = "block_rq_issue";
	return refused_type(__func__, (struct st_type){ 500, 32, "headless", 1, no_header }, "record header") ||
	       refused_type(__func__, type_with(f, (struct st_field){ "cpu", 24, 8, 8, ST_FT_UINT, "" }),
			    "two fields of the same name") ||
	       refused_type(__func__, type_with(f, (struct st_field){ "s", 24, 8, 2, ST_FT_STR, "" }),
			    "string field with elements of more than one byte") ||
	       refused_type(__func__, type_with(f, (struct st_field){ "z", 24, 0, 1, ST_FT_UINT, "" }),
			    "multiple of its element size") ||
	       refused_type(__func__, renamed, "type name block_rq_issue declared twice");
}

static int test_refusals(void)
{
	struct st_ev_sys_exit e = exit_event(1, 0, 0);
	struct st_ev_sys_exit undeclared = e, short_size = e;
	struct st_writer_opts tiny = { .chunk_size = 10 }, level = { .zstd_level = 99 };
	struct st_writer_opts lanes = { .lanes = 5000 };
	struct st_writer *w;
	int err, bad;

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
	err = st_writer_open(&w, "/nonexistent/dir/x", &lanes);
	bad = bad || expectf(err == ST_EINVAL && strstr(st_writer_errmsg(w), "5000 lanes"), __func__,
			     "5000 lanes: %d \"%s\"", err, st_writer_errmsg(w));
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
	bad = bad || expectf(st.events == 77 && st.raw_bytes == 77 * sizeof(struct st_ev_sys_exit) && st.chunks >= 3 &&
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
	struct st_reader *r = NULL;
	int bad;

	if (!w)
		return 1;
	st_writer_close(w, NULL, 0);
	bad = expect_open_error(__func__, text, sizeof(text), ST_EFORMAT, "not a .sttrace file") ||
	      expect_open_error(__func__, m.data, 20, ST_ETRUNCATED, "shorter than a file header");
	/* A future major version (2.0), with a valid header checksum. */
	m.data[8] = 2;
	m.data[10] = 0;
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

/*
 * A schema payload of two types, ids 500 and 501, with the names given and
 * the six header fields each, encoded from the spec.
 */
static size_t spec_schema(unsigned char *out, const char *name1, const char *name2)
{
	const struct st_type *hdr = st_builtin_type(ST_EV_sys_exit_pread64);
	const char *names[2] = { name1, name2 };
	size_t at = 8;

	put32(out, 2);
	put32(out + 4, 0);
	for (int t = 0; t < 2; t++) {
		put32(out + at, (uint32_t)(500 + t) | 32u << 16);
		put32(out + at + 4, 6u | (uint32_t)strlen(names[t]) << 16);
		memcpy(out + at + 8, names[t], strlen(names[t]));
		at += 8 + strlen(names[t]);
		for (int i = 0; i < 6; i++) {
			const struct st_field *f = &hdr->fields[i];

			put32(out + at, f->offset | (uint32_t)f->size << 16);
			out[at + 4] = f->elem_size;
			out[at + 5] = f->type;
			put32(out + at + 6, (uint32_t)strlen(f->name));
			memcpy(out + at + 10, f->name, strlen(f->name));
			at += 10 + strlen(f->name);
		}
	}
	return at;
}

/* A file of a header and one schema chunk: its two types must have different names. */
static int test_reader_schema_names(void)
{
	unsigned char file[1024], schema[512];
	struct st_reader *r = NULL;
	size_t len;
	int bad;

	memcpy(file, "\x89STT\r\n\x1a\n", 8);
	put32(file + 8, 1);
	put32(file + 12, 32);
	memset(file + 16, 0, 8);
	put64(file + 24, XXH64(file, 24, 0));
	len = 32 + spec_chunk(file + 32, ST_CHUNK_SCHEMA, 0, schema, (uint32_t)spec_schema(schema, "a", "b"));
	bad = open_mem(__func__, &r, file, len, 0);
	st_reader_close(r);
	len = 32 + spec_chunk(file + 32, ST_CHUNK_SCHEMA, 0, schema, (uint32_t)spec_schema(schema, "a", "a"));
	return bad || expect_open_error(__func__, file, len, ST_ETRUNCATED,
					"chunk 0 at offset 32: type name declared twice");
}

/* A writer into `m` with `lanes` open events chunks and the built-in types. */
static struct st_writer *lanes_writer(const char *test, struct mem_sink *m, size_t chunk_size,
				      unsigned lanes)
{
	return mem_writer_opts(test, m, (struct st_writer_opts){ .chunk_size = chunk_size,
								 .lanes = lanes });
}

static int cmp_ts(const void *a, const void *b)
{
	const struct st_ev_sys_exit *x = a, *y = b;

	return x->h.ts < y->h.ts ? -1 : x->h.ts > y->h.ts;
}

/*
 * What a multi-CPU recorder hands over: batches of 1 to 20 records of one
 * CPU, the CPU picked at random; CPU c's k-th record has ts 7k + c, so each
 * CPU is in time order, all timestamps differ and the CPUs' ranges overlap.
 * Fills ev[0..n) in append order; 0, or the first append error.
 */
static int append_cpu_batches(struct st_writer *w, struct st_ev_sys_exit *ev, size_t n)
{
	uint64_t next[2] = { 0, 0 };
	int err = 0;

	rnd_seed(42);
	for (size_t i = 0; i < n && !err;) {
		uint32_t cpu = (uint32_t)rnd_below(2);

		for (size_t b = 1 + rnd_below(20); b && i < n && !err; b--, i++) {
			ev[i] = exit_event(7 * next[cpu]++ + cpu, cpu, (int64_t)i);
			err = st_writer_append(w, &ev[i], sizeof(ev[i]));
		}
	}
	return err;
}

/* Events chunk i holds records of one CPU in time order, its header's range and count exact. */
static int check_one_cpu_chunk(const char *test, struct st_reader *r, size_t i,
			       struct st_chunk_buf *buf)
{
	const struct st_chunk_info *ci = st_chunk_at(r, i);
	const struct st_event_header *e, *first, *prev;
	size_t pos = 0;
	uint32_t n = 1;
	int ret;

	if (expectf(!st_chunk_decode(r, i, buf) && st_chunk_next(buf, &pos, &first) > 0, test,
		    "chunk %zu: %s", i, st_reader_errmsg(r)))
		return 1;
	for (prev = first; (ret = st_chunk_next(buf, &pos, &e)) > 0; prev = e, n++)
		if (expectf(e->cpu == first->cpu, test, "chunk %zu mixes cpu %u and %u", i,
			    first->cpu, e->cpu) ||
		    expectf(prev->ts <= e->ts, test, "chunk %zu: ts %llu after %llu", i,
			    (unsigned long long)e->ts, (unsigned long long)prev->ts))
			return 1;
	return expectf(ret == 0 && n == ci->events && ci->first_ts == first->ts &&
		       ci->last_ts == prev->ts, test,
		       "chunk %zu: %u records, header says %u in [%llu, %llu]", i, n, ci->events,
		       (unsigned long long)ci->first_ts, (unsigned long long)ci->last_ts);
}

/*
 * Two CPUs' batches interleaved, lanes = 2: every events chunk holds one
 * CPU in time order (with one shared chunk they would be shuffled), and the
 * cursor still returns every record in global time order.
 */
static int test_lanes_per_cpu(void)
{
	enum { N = 3000 };
	struct st_ev_sys_exit *ev = calloc(N, sizeof(*ev));
	struct mem_sink m = { 0 };
	struct st_writer *w = lanes_writer(__func__, &m, 1024, 2);
	struct st_chunk_buf buf = { 0 };
	struct st_reader *r = NULL;
	uint64_t events = 0, chunks = 0;
	int bad;

	if (!w || !ev) {
		if (w)
			st_writer_close(w, NULL, 0);
		free(ev);
		return !w || expectf(0, __func__, "out of memory");
	}
	bad = expectf(!append_cpu_batches(w, ev, N) && !st_writer_close(w, NULL, 0), __func__,
		      "write") ||
	      open_mem(__func__, &r, m.data, m.len, 0);
	for (size_t i = 0; !bad && i < st_chunk_count(r); i++) {
		if (st_chunk_at(r, i)->kind != ST_CHUNK_EVENTS)
			continue;
		bad = check_one_cpu_chunk(__func__, r, i, &buf);
		events += st_chunk_at(r, i)->events;
		chunks++;
	}
	/* 32 records per chunk: about 47 chunks per CPU. */
	bad = bad || expectf(events == N && chunks >= N / 32, __func__, "%llu events in %llu chunks",
			     (unsigned long long)events, (unsigned long long)chunks);
	qsort(ev, N, sizeof(*ev), cmp_ts);
	bad = bad || cursor_matches(__func__, r, (const unsigned char *)ev, N * sizeof(*ev));
	st_chunk_buf_free(&buf);
	st_reader_close(r);
	free(m.data);
	free(ev);
	return bad;
}

/* The file of lanes_writer(lanes) for the two-CPU batches; 1 on error. */
static int write_batches(const char *test, struct mem_sink *m, unsigned lanes)
{
	struct st_ev_sys_exit ev[500];
	struct st_writer *w = lanes_writer(test, m, 1024, lanes);

	return !w || expectf(!append_cpu_batches(w, ev, 500) && !st_writer_close(w, NULL, 0), test,
			     "write, %u lanes", lanes);
}

/* Whether some events chunk of r holds records of both CPU 0 and CPU 1. */
static int chunk_mixes_cpus(struct st_reader *r)
{
	struct st_chunk_buf buf = { 0 };
	const struct st_event_header *e;
	int mixed = 0;

	for (size_t i = 0; !mixed && i < st_chunk_count(r); i++) {
		size_t pos = 0;
		unsigned cpus = 0;

		if (st_chunk_at(r, i)->kind != ST_CHUNK_EVENTS || st_chunk_decode(r, i, &buf))
			continue;
		while (st_chunk_next(&buf, &pos, &e) > 0)
			cpus |= 1u << e->cpu;
		mixed = cpus == 3;
	}
	st_chunk_buf_free(&buf);
	return mixed;
}

/* lanes = 0 is one lane: the very same file, whose chunks mix both CPUs. */
static int test_lanes_zero_is_one(void)
{
	struct mem_sink zero = { 0 }, one = { 0 };
	struct st_reader *r = NULL;
	int bad = write_batches(__func__, &zero, 0) || write_batches(__func__, &one, 1) ||
		  expectf(zero.len == one.len && !memcmp(zero.data, one.data, one.len), __func__,
			  "lanes 0 and 1 wrote different files") ||
		  open_mem(__func__, &r, zero.data, zero.len, 0) ||
		  expectf(chunk_mixes_cpus(r), __func__, "no chunk holds both CPUs: not one lane");

	st_reader_close(r);
	free(zero.data);
	free(one.data);
	return bad;
}

/* What the sink holds so far (a reader scans the file, open or closed). */
static int sink_info(const char *test, const struct mem_sink *m, struct st_file_info *info)
{
	struct st_reader *r = NULL;
	int bad = open_mem(test, &r, m->data, m->len, 0);

	if (!bad)
		*info = *st_reader_info(r);
	st_reader_close(r);
	return bad;
}

static int append_on(struct st_writer *w, uint32_t cpu, uint64_t ts, int n)
{
	int err = 0;

	for (int i = 0; i < n && !err; i++) {
		struct st_ev_sys_exit e = exit_event(ts + (uint64_t)i, cpu, i);

		err = st_writer_append(w, &e, sizeof(e));
	}
	return err;
}

/* Chunks of 4 records: a lane that fills is sealed alone, the other stays open. */
static int test_lane_fills_alone(void)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = lanes_writer(__func__, &m, 4 * sizeof(struct st_ev_sys_exit), 2);
	struct st_file_info info;
	int bad;

	if (!w)
		return 1;
	bad = expectf(!append_on(w, 1, 100, 1) && !append_on(w, 0, 10, 5), __func__, "append") ||
	      sink_info(__func__, &m, &info) ||
	      expectf(info.events == 4 && info.event_chunks == 1 && info.first_ts == 10 &&
		      info.last_ts == 13, __func__, "after lane 0 filled: %llu events in %llu chunks,"
		      " ts %llu..%llu; expected lane 0's first 4 alone", (unsigned long long)info.events,
		      (unsigned long long)info.event_chunks, (unsigned long long)info.first_ts,
		      (unsigned long long)info.last_ts);
	bad |= expectf(!st_writer_close(w, NULL, 0), __func__, "close");
	bad = bad || sink_info(__func__, &m, &info) ||
	      expectf(info.events == 6 && info.event_chunks == 3, __func__,
		      "after close: %llu events in %llu chunks", (unsigned long long)info.events,
		      (unsigned long long)info.event_chunks);
	free(m.data);
	return bad;
}

/* Flush seals every lane that holds records: cpu 5 shares lane 1 with cpu 1, lane 3 is idle. */
static int test_flush_seals_all_lanes(void)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = lanes_writer(__func__, &m, 0, 4);
	struct st_file_info info;
	int bad;

	if (!w)
		return 1;
	bad = expectf(!append_on(w, 0, 10, 3) && !append_on(w, 1, 20, 2) && !append_on(w, 2, 5, 4) &&
		      !append_on(w, 5, 1, 1) && !st_writer_flush(w), __func__, "append, flush") ||
	      sink_info(__func__, &m, &info) ||
	      expectf(info.events == 10 && info.event_chunks == 3, __func__,
		      "after flush: %llu events in %llu chunks", (unsigned long long)info.events,
		      (unsigned long long)info.event_chunks);
	bad |= expectf(!st_writer_close(w, NULL, 0), __func__, "close");
	bad = bad || sink_info(__func__, &m, &info) ||
	      expectf(info.events == 10 && info.event_chunks == 3, __func__,
		      "after close: %llu events in %llu chunks", (unsigned long long)info.events,
		      (unsigned long long)info.event_chunks);
	free(m.data);
	return bad;
}

int main(void)
{
	RUN(test_enospc);
	RUN(test_sink_eio);
	RUN(test_congested_drops);
	RUN(test_refusals);
	RUN(test_schema_refusals);
	RUN(test_reader_schema_names);
	RUN(test_type_after_schema);
	RUN(test_flush_is_readable);
	RUN(test_reader_refusals);
	RUN(test_lanes_per_cpu);
	RUN(test_lanes_zero_is_one);
	RUN(test_lane_fills_alone);
	RUN(test_flush_seals_all_lanes);
	return check_failures != 0;
}
