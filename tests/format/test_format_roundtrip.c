/* SPDX-License-Identifier: MIT */
/*
 * test_format_roundtrip.c - what the writer writes, the reader reads back
 * byte for byte and in order: built-in and random schemas, random events of
 * many sizes across chunk boundaries, the empty file, one event, 10^6
 * events through a real file; metadata, lost counts, field accessors.
 */
#include <unistd.h>

#include "unit_util.h"

#define MAX_TYPES 24
#define MAX_FIELDS 16

/* A random schema; field names and docs live in static storage. */
struct rnd_schema {
	struct st_type types[MAX_TYPES];
	struct st_field fields[MAX_TYPES][MAX_FIELDS + 6];
	char names[MAX_TYPES][MAX_FIELDS + 1][16];
	size_t n;
};

static void rnd_field(struct st_field *f, char *name, unsigned i, uint16_t rec_size)
{
	static const uint8_t elems[] = { 1, 2, 4, 8 };
	uint8_t type = (uint8_t)(1 + rnd_below(6));
	uint8_t elem = type == ST_FT_STR ? 1 : elems[rnd_below(4)];	/* strings are bytes */
	uint16_t count = (uint16_t)(1 + rnd_below(4));
	uint16_t payload = rec_size - 24;

	while (count * elem > payload)
		count--;
	snprintf(name, 16, "f%u", i);
	f->name = name;
	f->elem_size = elem;
	f->size = (uint16_t)(count * elem);
	f->offset = (uint16_t)(24 + rnd_below((payload - f->size) / elem + 1) * elem);
	f->type = type;
	f->doc = "random field";
}

static void rnd_schema(struct rnd_schema *s, size_t n)
{
	size_t nb;
	const struct st_field *hdr = st_builtin_types(&nb)[0].fields;

	s->n = n;
	for (size_t t = 0; t < n; t++) {
		struct st_type *ty = &s->types[t];
		uint16_t nf = (uint16_t)rnd_below(MAX_FIELDS);

		ty->id = (uint16_t)(1000 + t * 37 + rnd_below(30));
		ty->size = (uint16_t)(32 + 8 * rnd_below(60));
		snprintf(s->names[t][MAX_FIELDS], 16, "type_%u", ty->id);
		ty->name = s->names[t][MAX_FIELDS];
		memcpy(s->fields[t], hdr, 6 * sizeof(*hdr));
		for (uint16_t f = 0; f < nf; f++)
			rnd_field(&s->fields[t][6 + f], s->names[t][f], f, ty->size);
		ty->nfields = (uint16_t)(6 + nf);
		ty->fields = s->fields[t];
	}
}

/* Random records of the schema's types with nondecreasing timestamps. */
static size_t rnd_events(const struct rnd_schema *s, unsigned char *out, size_t n)
{
	size_t len = 0;
	uint64_t ts = 1000;

	for (size_t i = 0; i < n; i++) {
		const struct st_type *t = &s->types[rnd_below(s->n)];
		struct st_event_header *h = (void *)(out + len);

		for (size_t b = 0; b < t->size; b++)
			out[len + b] = (unsigned char)rnd();
		ts += rnd_below(3) ? rnd_below(5000) : 0;
		h->type = t->id;
		h->size = t->size;
		h->ts = ts;
		len += t->size;
	}
	return len;
}

static int same_type(const char *test, const struct st_type *a, const struct st_type *b)
{
	if (expectf(a && b, test, "type missing"))
		return 1;
	if (expectf(a->id == b->id && a->size == b->size && !strcmp(a->name, b->name) &&
		    a->nfields == b->nfields, test, "type %u differs", a->id))
		return 1;
	for (uint16_t i = 0; i < a->nfields; i++) {
		const struct st_field *x = &a->fields[i], *y = &b->fields[i];

		if (expectf(!strcmp(x->name, y->name) && !strcmp(x->doc, y->doc) &&
			    x->offset == y->offset && x->size == y->size &&
			    x->elem_size == y->elem_size && x->type == y->type,
			    test, "type %u field %u differs", a->id, i))
			return 1;
	}
	return 0;
}

/* Every events chunk decoded in file order, concatenated, equals `raw`. */
static int check_chunks(const char *test, struct st_reader *r, const unsigned char *raw, size_t len)
{
	struct st_chunk_buf buf = { 0 };
	size_t at = 0;
	int bad = 0;

	for (size_t i = 0; i < st_chunk_count(r) && !bad; i++) {
		if (st_chunk_at(r, i)->kind != ST_CHUNK_EVENTS)
			continue;
		bad = expectf(!st_chunk_decode(r, i, &buf), test, "decode: %s", st_reader_errmsg(r)) ||
		      expectf(at + buf.len <= len && !memcmp(raw + at, buf.data, buf.len), test,
			      "chunk %zu differs from what was written", i);
		at += buf.len;
	}
	st_chunk_buf_free(&buf);
	return bad || expectf(at == len, test, "%zu raw bytes read back, %zu written", at, len);
}

static int check_file(const char *test, const struct mem_sink *m, const struct rnd_schema *s,
		      const unsigned char *raw, size_t len, unsigned flags)
{
	struct st_reader *r = NULL;
	int bad = open_mem(test, &r, m->data, m->len, flags);

	if (!bad) {
		bad = expectf(st_reader_info(r)->footer_present && !st_reader_info(r)->damage[0],
			      test, "damage: %s", st_reader_info(r)->damage) ||
		      expectf(st_type_count(r) == s->n, test, "%zu types", st_type_count(r));
		for (size_t i = 0; i < s->n && !bad; i++)
			bad = same_type(test, st_type_by_id(r, s->types[i].id), &s->types[i]);
		bad = bad || check_chunks(test, r, raw, len) || cursor_matches(test, r, raw, len);
	}
	st_reader_close(r);
	return bad;
}

static int roundtrip(const char *test, size_t ntypes, size_t nevents, size_t chunk_size, int level)
{
	struct rnd_schema s;
	struct mem_sink m = { 0 };
	struct st_sink sink = mem_sink_of(&m);
	struct st_writer_opts o = { .chunk_size = chunk_size, .zstd_level = level, .sink = &sink };
	unsigned char *raw = malloc(nevents * 512 + 1);
	struct st_writer *w;
	size_t len;
	int err, bad;

	rnd_schema(&s, ntypes);
	len = rnd_events(&s, raw, nevents);
	err = st_writer_open(&w, NULL, &o);
	for (size_t i = 0; i < ntypes && !err; i++)
		err = st_writer_add_type(w, &s.types[i]);
	for (size_t at = 0; at < len && !err; at += ((struct st_event_header *)(raw + at))->size)
		err = st_writer_append(w, raw + at, ((struct st_event_header *)(raw + at))->size);
	err = st_writer_close(w, NULL, 0);
	bad = expectf(!err, test, "writer: %s", st_strerror(err)) ||
	      check_file(test, &m, &s, raw, len, 0) || check_file(test, &m, &s, raw, len, ST_READ_SCAN);
	free(raw);
	free(m.data);
	return bad;
}

static int test_random_schemas(void)
{
	static const size_t chunk_sizes[] = { 64, 100, 1000, 4096, 65536, 1 << 20 };
	int bad = 0;

	rnd_seed(1);
	for (int round = 0; round < 24 && !bad; round++) {
		size_t nevents = round % 4 == 0 ? 1 : rnd_below(3000);
		size_t chunk = chunk_sizes[round % 6];
		int level = round % 3 == 0 ? 1 : round % 3 == 1 ? -3 : 7;

		bad = roundtrip(__func__, 1 + rnd_below(MAX_TYPES), nevents, chunk, level);
	}
	return bad;
}

static int test_empty_file(void)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = mem_writer(__func__, &m, 0, 0);
	struct st_reader *r = NULL;
	size_t nb;
	int bad;

	if (!w)
		return 1;
	bad = expectf(!st_writer_close(w, NULL, 0), __func__, "close") ||
	      open_mem(__func__, &r, m.data, m.len, 0);
	if (!bad) {
		const struct st_file_info *info = st_reader_info(r);

		st_builtin_types(&nb);
		bad = expectf(info->footer_present && info->events == 0 && info->event_chunks == 0 &&
			      st_type_count(r) == nb && info->valid_size == m.len, __func__,
			      "footer %d events %llu types %zu", info->footer_present,
			      (unsigned long long)info->events, st_type_count(r)) ||
		      cursor_matches(__func__, r, NULL, 0);
		bad = bad || expectf(m.syncs == 1, __func__, "sink synced %d times", m.syncs);
	}
	st_reader_close(r);
	free(m.data);
	return bad;
}

static int test_one_event(void)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = mem_writer(__func__, &m, 0, 0);
	struct st_ev_sys_exit e = exit_event(42, 1, -5);
	struct st_reader *r = NULL;
	int bad;

	if (!w)
		return 1;
	bad = expectf(!st_writer_append(w, &e, sizeof(e)), __func__, "append") ||
	      expectf(!st_writer_close(w, NULL, 0), __func__, "close") ||
	      open_mem(__func__, &r, m.data, m.len, 0);
	if (!bad) {
		const struct st_file_info *info = st_reader_info(r);

		bad = expectf(info->events == 1 && info->first_ts == 42 && info->last_ts == 42 &&
			      st_type_events(r, ST_EV_sys_exit_pread64) == 1, __func__,
			      "events %llu span %llu..%llu", (unsigned long long)info->events,
			      (unsigned long long)info->first_ts, (unsigned long long)info->last_ts) ||
		      cursor_matches(__func__, r, (const void *)&e, sizeof(e));
	}
	st_reader_close(r);
	free(m.data);
	return bad;
}

/* Event i of the million: sizes vary by type, content is a function of i. */
static size_t million_event(uint64_t i, unsigned char *out)
{
	if (i % 3 == 0) {
		struct st_ev_block_rq_issue e;

		memset(&e, 0, sizeof(e));
		e.h = (struct st_event_header){ ST_EV_block_rq_issue, sizeof(e), (uint32_t)(i % 4),
						 i * 10, 7, 8 };
		e.p.sector = i * 8;
		e.p.nr_sector = 8;
		e.p.bios[i % ST_RQ_BIOS] = i;
		memcpy(out, &e, sizeof(e));
		return sizeof(e);
	}
	struct st_ev_sys_exit e = exit_event(i * 10, (uint32_t)(i % 4), (int64_t)i);

	memcpy(out, &e, sizeof(e));
	return sizeof(e);
}

static int write_million(const char *path, uint64_t n)
{
	struct st_writer *w;
	unsigned char rec[256];
	int err = st_writer_open(&w, path, NULL);

	if (!err)
		err = st_writer_add_builtin_types(w);
	for (uint64_t i = 0; i < n && !err; i++)
		err = st_writer_append(w, rec, million_event(i, rec));
	return st_writer_close(w, NULL, 0);
}

static int test_million_events_file(void)
{
	const uint64_t n = 1000000;
	char path[] = "/tmp/test_format_roundtrip.XXXXXX";
	int fd = mkstemp(path), ret = 0, bad;
	const struct st_event_header *e;
	unsigned char rec[256];
	struct st_reader *r = NULL;
	struct st_cursor *c;
	uint64_t i = 0;

	if (expectf(fd >= 0, __func__, "mkstemp"))
		return 1;
	close(fd);
	bad = expectf(!write_million(path, n), __func__, "write");
	if (!bad && st_reader_open(&r, path, 0))
		bad = expectf(0, __func__, "open: %s", st_reader_errmsg(r));
	if (!bad && !expectf(!st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c), __func__, "cursor")) {
		while ((ret = st_cursor_next(c, &e)) > 0 && !bad) {
			size_t len = million_event(i, rec);

			bad = expectf(e->size == len && !memcmp(e, rec, len), __func__,
				      "event %llu differs", (unsigned long long)i);
			i++;
		}
		st_cursor_close(c);
		bad = bad || expectf(ret == 0 && i == n && st_reader_info(r)->events == n &&
				     st_type_events(r, ST_EV_block_rq_issue) == (n + 2) / 3,
				     __func__, "ret %d, %llu events", ret, (unsigned long long)i);
	}
	st_reader_close(r);
	unlink(path);
	return bad;
}

static int test_metadata(void)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = mem_writer(__func__, &m, 256, 0);
	const char *k, *v;
	struct st_reader *r = NULL;
	int bad;

	if (!w)
		return 1;
	st_writer_set_meta(w, "tool", "unit 0.1");
	st_writer_set_meta(w, "host.name", "first");
	st_writer_set_meta(w, "host.name", "second");
	for (int i = 0; i < 40; i++) {
		struct st_ev_sys_exit e = exit_event((uint64_t)i, 0, i);

		st_writer_append(w, &e, sizeof(e));
		if (i == 20)
			st_writer_set_meta(w, "pid.7", "fio");
	}
	st_writer_set_meta(w, "tool", "unit 0.2");
	bad = expectf(!st_writer_close(w, NULL, 0), __func__, "close");
	for (unsigned flags = 0; flags <= ST_READ_SCAN && !bad; flags += ST_READ_SCAN) {
		bad = open_mem(__func__, &r, m.data, m.len, flags) ||
		      expectf(st_meta_count(r) == 3, __func__, "%zu keys", st_meta_count(r)) ||
		      expectf(!strcmp(st_meta_get(r, "tool"), "unit 0.2") &&
			      !strcmp(st_meta_get(r, "host.name"), "second") &&
			      !strcmp(st_meta_get(r, "pid.7"), "fio") && !st_meta_get(r, "nope"),
			      __func__, "values") ||
		      expectf(!st_meta_at(r, 0, &k, &v) && !strcmp(k, "host.name") &&
			      st_meta_at(r, 3, &k, &v) == ST_ENOTFOUND, __func__, "order");
		st_reader_close(r);
	}
	free(m.data);
	return bad;
}

static int check_lost(const char *test, struct st_reader *r)
{
	uint32_t cpu;
	uint64_t lost, sum = 0, cpu0 = 0, cpu3 = 0;

	for (size_t i = 0; i < st_lost_count(r); i++) {
		st_lost_at(r, i, &cpu, &lost);
		sum += lost;
		cpu0 += cpu == 0 ? lost : 0;
		cpu3 += cpu == 3 ? lost : 0;
	}
	return expectf(st_lost_count(r) == 2 && cpu0 == 9 && cpu3 == 7 && sum == 16 &&
		       st_reader_info(r)->lost_events == 16, test,
		       "%zu cpus, cpu0 %llu cpu3 %llu", st_lost_count(r),
		       (unsigned long long)cpu0, (unsigned long long)cpu3);
}

static int test_lost_counts(void)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = mem_writer(__func__, &m, 64, 0);
	struct st_ev_sys_exit e = exit_event(1, 0, 0);
	struct st_reader *r = NULL;
	int bad = 0;

	if (!w)
		return 1;
	st_writer_set_lost(w, 0, 5);
	st_writer_set_lost(w, 3, 7);
	st_writer_append(w, &e, sizeof(e));
	st_writer_append(w, &e, sizeof(e));
	st_writer_append(w, &e, sizeof(e));
	st_writer_set_lost(w, 0, 9);
	bad = expectf(!st_writer_close(w, NULL, 0), __func__, "close");
	for (unsigned flags = 0; flags <= ST_READ_SCAN && !bad; flags += ST_READ_SCAN) {
		bad = open_mem(__func__, &r, m.data, m.len, flags) ||
		      check_lost(__func__, r);
		st_reader_close(r);
	}
	free(m.data);
	return bad;
}

static int test_builtin_schema(void)
{
	size_t n;
	const struct st_type *t = st_builtin_types(&n);
	const struct st_type *issue = st_builtin_type(ST_EV_block_rq_issue);
	struct st_ev_block_rq_issue e = { .h = { .type = ST_EV_block_rq_issue } };
	struct st_ev_task task = { .h = { .type = ST_EV_sched_process_exec } };
	char comm[64];

	e.p.error = -5;
	e.p.bios[2] = 0xdeadbeef;
	for (size_t i = 0; i < n; i++) {
		if (expectf(t[i].size % 8 == 0 && t[i].nfields >= 6 &&
			    !strcmp(t[i].fields[3].name, "ts") && (i == 0 || t[i - 1].id < t[i].id) &&
			    st_builtin_type(t[i].id) == &t[i], __func__, "type %s", t[i].name))
			return 1;
	}
	memcpy(task.p.comm, "fio-worker-01234", ST_COMM_LEN);
	return expectf(issue && !strcmp(issue->name, "block_rq_issue") &&
		       issue->size == sizeof(struct st_ev_block_rq_issue), __func__, "issue type") ||
	       expectf(st_field_i64(&e, st_field_find(issue, "error"), 0) == -5 &&
		       st_field_u64(&e, st_field_find(issue, "error"), 0) == 0xfffffffbu &&
		       st_field_u64(&e, st_field_find(issue, "bios"), 2) == 0xdeadbeef &&
		       st_field_u64(&e, st_field_find(issue, "bios"), ST_RQ_BIOS) == 0 &&
		       st_field_u64(&e, st_field_find(issue, "type"), 0) == ST_EV_block_rq_issue &&
		       !st_field_find(issue, "nonexistent") && !st_builtin_type(0), __func__,
		       "field access") ||
	       expectf(st_field_str(&task, st_field_find(st_builtin_type(ST_EV_sched_process_exec),
							 "comm"), comm, sizeof(comm)) == ST_COMM_LEN &&
		       !strcmp(comm, "fio-worker-01234"), __func__, "string field \"%s\"", comm);
}

int main(void)
{
	RUN(test_builtin_schema);
	RUN(test_empty_file);
	RUN(test_one_event);
	RUN(test_random_schemas);
	RUN(test_metadata);
	RUN(test_lost_counts);
	RUN(test_million_events_file);
	return check_failures != 0;
}
