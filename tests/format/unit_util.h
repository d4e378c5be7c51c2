/* SPDX-License-Identifier: MIT */
/*
 * unit_util.h - helpers shared by the libsttrace unit tests (results through
 * tests/check.h): a seeded random generator, an in-memory sink, writers and
 * readers over memory, and (spec_encode.h) chunks encoded from the spec.
 */
#ifndef STTRACE_UNIT_UTIL_H
#define STTRACE_UNIT_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/lib/sttrace.h"
#include "tests/check.h"
#include "tests/format/spec_encode.h"

/* xorshift64*: deterministic for a seed, good enough for test data. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static inline __attribute__((unused)) void rnd_seed(uint64_t s)
{
	rnd_state = s ? s : 1;
}

static inline __attribute__((unused)) uint64_t rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dull;
}

static inline __attribute__((unused)) uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* A sink collecting the file in memory; writes past `limit` fail with ENOSPC. */
struct mem_sink {
	unsigned char *data;
	size_t len, cap;
	size_t limit;		/* 0 = unlimited */
	int syncs;
};

static int mem_sink_write(void *ctx, const void *buf, size_t len, uint64_t offset)
{
	struct mem_sink *m = ctx;
	size_t room = len;

	if (offset != m->len)
		return -EINVAL;
	if (m->limit && m->len + len > m->limit)
		room = m->limit - m->len;
	if (m->len + room > m->cap) {
		size_t cap = (m->len + room) * 2 + 4096;
		unsigned char *p = realloc(m->data, cap);

		if (!p)
			return -ENOMEM;
		m->data = p;
		m->cap = cap;
	}
	memcpy(m->data + m->len, buf, room);
	m->len += room;
	return room == len ? 0 : -ENOSPC;
}

static int mem_sink_sync(void *ctx)
{
	((struct mem_sink *)ctx)->syncs++;
	return 0;
}

static inline __attribute__((unused)) struct st_sink mem_sink_of(struct mem_sink *m)
{
	return (struct st_sink){ .write = mem_sink_write, .sync = mem_sink_sync, .ctx = m };
}

/* A writer with options `o` into `m`, the built-in types declared; NULL (and FAIL) on error. */
static inline __attribute__((unused)) struct st_writer *
mem_writer_opts(const char *test, struct mem_sink *m, struct st_writer_opts o)
{
	struct st_sink sink = mem_sink_of(m);
	struct st_writer *w;
	int err;

	o.sink = &sink;
	err = st_writer_open(&w, NULL, &o);
	if (!err)
		err = st_writer_add_builtin_types(w);
	if (expectf(!err, test, "writer open: %s", w ? st_writer_errmsg(w) : "no memory")) {
		if (w)
			st_writer_close(w, NULL, 0);
		return NULL;
	}
	return w;
}

/* The same with a chunk size and a zstd level, the options most tests vary. */
static inline __attribute__((unused)) struct st_writer *
mem_writer(const char *test, struct mem_sink *m, size_t chunk_size, int level)
{
	return mem_writer_opts(test, m, (struct st_writer_opts){ .chunk_size = chunk_size,
								 .zstd_level = level });
}

/* Opens a reader over memory; 1 (and FAIL naming the error) when it fails. */
static inline __attribute__((unused)) int
open_mem(const char *test, struct st_reader **r, const void *data, size_t len, unsigned flags)
{
	int err = st_reader_open_mem(r, data, len, flags);

	return expectf(!err, test, "open: %s: %s", st_strerror(err),
		       *r ? st_reader_errmsg(*r) : "no memory");
}

/*
 * A cursor over the whole file returns exactly the records of `raw` (written
 * with nondecreasing timestamps), in order.
 */
static inline __attribute__((unused)) int
cursor_matches(const char *test, struct st_reader *r, const unsigned char *raw, size_t len)
{
	const struct st_event_header *e;
	struct st_cursor *c;
	size_t at = 0;
	int ret, bad = 0;

	if (expectf(!st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c), test, "cursor open"))
		return 1;
	while (!bad && (ret = st_cursor_next(c, &e)) > 0) {
		bad = expectf(at + e->size <= len && !memcmp(raw + at, e, e->size), test,
			      "record at %zu differs", at);
		at += e->size;
	}
	st_cursor_close(c);
	return bad || expectf(ret == 0 && at == len, test, "cursor: ret %d after %zu of %zu bytes",
			      ret, at, len);
}

/*
 * An event type no sttrace build knows, as a newer recorder might write it:
 * tests of forward compatibility and the fuzz seed corpus use it.
 */
#define FUTURE_TYPE 300
static const struct st_field future_fields[] __attribute__((unused)) = {
	{ "type", 0, 2, 2, ST_FT_UINT, "event type id" },
	{ "size", 2, 2, 2, ST_FT_UINT, "record size" },
	{ "cpu", 4, 4, 4, ST_FT_UINT, "cpu" },
	{ "ts", 8, 8, 8, ST_FT_NS, "timestamp" },
	{ "pid", 16, 4, 4, ST_FT_UINT, "pid" },
	{ "tid", 20, 4, 4, ST_FT_UINT, "tid" },
	{ "delta", 24, 8, 8, ST_FT_INT, "a signed value" },
	{ "label", 32, 8, 1, ST_FT_STR, "a short string" },
	{ "words", 40, 8, 2, ST_FT_HEX, "four 16-bit words" },
};
static const struct st_type future_type __attribute__((unused)) = { FUTURE_TYPE, 48, "nvme_future_event", 9, future_fields };

struct future_rec {
	struct st_event_header h;
	int64_t delta;
	char label[8];
	uint16_t words[4];
};

/* A sys_exit record: the smallest built-in type, handy as a test event. */
static inline __attribute__((unused)) struct st_ev_sys_exit
exit_event(uint64_t ts, uint32_t cpu, int64_t ret)
{
	struct st_ev_sys_exit e;

	memset(&e, 0, sizeof(e));
	e.h.type = ST_EV_sys_exit_pread64;
	e.h.size = sizeof(e);
	e.h.cpu = cpu;
	e.h.ts = ts;
	e.h.pid = 100 + cpu;
	e.h.tid = 200 + cpu;
	e.p.ret = ret;
	return e;
}

#endif /* STTRACE_UNIT_UTIL_H */
