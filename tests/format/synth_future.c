/* SPDX-License-Identifier: MIT */
/*
 * synth_future.c - `synth-future FILE` (build/tests/synth-future): a small
 * trace as a later recorder might write it, for compatibility tests and
 * spec/golden/future.sttrace: an event type this
 * build does not define (every field width and display type, one display
 * type code from the future) and a chunk of a kind this build does not know.
 *
 * The file is written through the public writer API into memory; the
 * unknown chunk, a rebuilt index and trailer are then encoded by hand from
 * spec/sttrace-format.md (sections 4.1, 5.5, 6), as a newer writer would.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "format/lib/sttrace.h"

#define FUTURE_TYPE_ID		300u
#define FUTURE_TYPE_SIZE	104u
#define FUTURE_CHUNK_KIND	0x7f02u
#define FUTURE_DISPLAY_TYPE	42u	/* a field display type newer than this build */
#define CHUNK_HEADER_SIZE	64u
#define TRAILER_SIZE		32u
#define INDEX_KIND		5u
#define FUTURE_PID		4242u

/* The record of the future type, as a newer format/lib/sttrace_events.h would define it. */
struct future_cmd {
	struct st_event_header h;
	uint64_t cmd_id;
	uint64_t lba;
	int64_t delta;
	uint64_t latency;
	uint32_t dev;
	uint32_t nsid;
	uint16_t queue;
	uint16_t tag;
	int16_t prio;
	uint8_t opcode;
	uint8_t status;
	uint32_t dwords[4];
	char label[12];
	uint32_t weight;
};
_Static_assert(sizeof(struct future_cmd) == FUTURE_TYPE_SIZE, "future record layout");

#define FIELD(name, type, doc) \
	{ #name, offsetof(struct future_cmd, name), sizeof(((struct future_cmd *)0)->name), \
	  sizeof(((struct future_cmd *)0)->name), type, doc }
#define ARRAY(name, type, doc) \
	{ #name, offsetof(struct future_cmd, name), sizeof(((struct future_cmd *)0)->name), \
	  sizeof(((struct future_cmd *)0)->name[0]), type, doc }

/* Growable memory the writer's sink fills. */
struct membuf {
	uint8_t *data;
	size_t len, cap;
};

static int membuf_reserve(struct membuf *m, size_t len)
{
	size_t cap = m->cap ? m->cap : 4096;
	uint8_t *p;

	while (cap < len)
		cap *= 2;
	if (cap == m->cap)
		return 0;
	p = realloc(m->data, cap);
	if (!p)
		return -ENOMEM;
	m->data = p;
	m->cap = cap;
	return 0;
}

static int mem_write(void *ctx, const void *buf, size_t len, uint64_t offset)
{
	struct membuf *m = ctx;

	if (membuf_reserve(m, offset + len))
		return -ENOMEM;
	memcpy(m->data + offset, buf, len);
	if (offset + len > m->len)
		m->len = offset + len;
	return 0;
}

static int mem_sync(void *ctx)
{
	(void)ctx;
	return 0;
}

/* ---- The events ---------------------------------------------------------- */

static int add_future_type(struct st_writer *w)
{
	const struct st_type *base = st_builtin_type(ST_EV_sched_process_exec);
	struct st_field fields[6 + 14] = {
		[6] = FIELD(cmd_id, ST_FT_HEX, "command identity"),
		[7] = FIELD(lba, ST_FT_UINT, "logical block address"),
		[8] = FIELD(delta, ST_FT_INT, "signed distance from the previous command"),
		[9] = FIELD(latency, ST_FT_NS, "device latency"),
		[10] = FIELD(dev, ST_FT_DEV, "device (kernel dev_t)"),
		[11] = FIELD(nsid, ST_FT_UINT, "namespace"),
		[12] = FIELD(queue, ST_FT_UINT, "hardware queue"),
		[13] = FIELD(tag, ST_FT_UINT, "tag"),
		[14] = FIELD(prio, ST_FT_INT, "priority, signed 16 bits"),
		[15] = FIELD(opcode, ST_FT_UINT, "opcode, 8 bits"),
		[16] = FIELD(status, ST_FT_HEX, "status, 8 bits"),
		[17] = ARRAY(dwords, ST_FT_HEX, "command dwords 10-13"),
		[18] = ARRAY(label, ST_FT_STR, "free text"),
		[19] = FIELD(weight, FUTURE_DISPLAY_TYPE, "a display type newer than this reader"),
	};
	struct st_type t = { .id = FUTURE_TYPE_ID, .size = FUTURE_TYPE_SIZE,
			     .name = "nvme_future_cmd", .nfields = 20, .fields = fields };

	memcpy(fields, base->fields, 6 * sizeof(fields[0]));	/* type size cpu ts pid tid */
	return st_writer_add_type(w, &t);
}

static void append_future(struct st_writer *w, unsigned i, uint64_t ts)
{
	static const char *const labels[] = { "plain", "comma,quote\"", "tab\there", "", "x" };
	struct future_cmd c = {
		.h = { .type = FUTURE_TYPE_ID, .size = FUTURE_TYPE_SIZE, .cpu = i % 2, .ts = ts,
		       .pid = FUTURE_PID, .tid = FUTURE_PID + i },
		.cmd_id = 0xffff888200000000ull + 0x40 * i,
		.lba = 1000000 + 8 * i,
		.delta = i % 2 ? -(int64_t)(8 * i) : (int64_t)(8 * i),
		.latency = 15000 + 1000 * i,
		.dev = (259u << 20) | 3,
		.nsid = 1,
		.queue = (uint16_t)(i + 1),
		.tag = (uint16_t)(65535 - i),
		.prio = (int16_t)(i == 2 ? -32768 : -(int)i),
		.opcode = (uint8_t)(i == 4 ? 255 : 2),
		.status = (uint8_t)(i == 3 ? 0xff : 0),
		.dwords = { i, 0xdeadbeef, 0, 0xffffffffu },
		.weight = 7 * i,
	};

	memcpy(c.label, labels[i], strlen(labels[i]));
	st_writer_append(w, &c, sizeof(c));
}

static void append_builtin(struct st_writer *w, uint64_t ts)
{
	struct st_ev_task exec = {
		.h = { .type = ST_EV_sched_process_exec, .size = sizeof(exec), .cpu = 0, .ts = ts,
		       .pid = FUTURE_PID, .tid = FUTURE_PID },
		.p = { .other_pid = FUTURE_PID, .comm = "nvme-cli" },
	};
	struct st_ev_block_rq_issue issue = {
		.h = { .type = ST_EV_block_rq_issue, .size = sizeof(issue), .cpu = 1,
		       .ts = ts + 9000, .pid = FUTURE_PID, .tid = FUTURE_PID + 1 },
		.p = { .rq = 0xffff888110000180ull, .sector = 8000000, .dev = (259u << 20) | 3,
		       .nr_sector = 8, .bytes = 4096, .opf = ST_OP_READ, .nr_bios = 1,
		       .bios = { 0xffff888100000400ull } },
	};

	st_writer_append(w, &exec, sizeof(exec));
	st_writer_append(w, &issue, sizeof(issue));
}

static void set_metadata(struct st_writer *w)
{
	static const char *const kv[][2] = {
		{ "tool", "st-format synth-future " ST_VERSION },
		{ "command_line", "st-format synth-future" },
		{ "options", "{}" },
		{ "kernel.release", "6.18.0-synth" },
		{ "host.name", "synth" },
		{ "cpu.count", "2" },
		{ "clock.realtime_offset_ns", "1767224600000000000" },
		{ "record.start_ts", "1000000000000" },
		{ "record.end_ts", "1000000100000" },
		{ "dev.259:3", "name=nvme3n1;sector_size=512;scheduler=none;rotational=0;model=Future SSD" },
		{ "pid.4242", "nvme-cli" },
		{ "future.note", "written as a later minor version would: unknown type 300, unknown chunk kind 0x7f02" },
	};

	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		st_writer_set_meta(w, kv[i][0], kv[i][1]);
}

/* The trace through the public writer API, into m. */
static int write_events(struct membuf *m, char *err, size_t cap)
{
	struct st_sink sink = { .write = mem_write, .sync = mem_sync, .ctx = m };
	struct st_writer_opts opts = { .sink = &sink };
	struct st_writer *w;
	uint64_t ts = 1000000010000ull;

	if (st_writer_open(&w, NULL, &opts)) {
		snprintf(err, cap, "%s", w ? st_writer_errmsg(w) : "out of memory");
		st_writer_close(w, NULL, 0);
		return -1;
	}
	st_writer_add_builtin_types(w);
	add_future_type(w);
	set_metadata(w);
	append_builtin(w, ts);
	for (unsigned i = 0; i < 5; i++)
		append_future(w, i, ts + 10000 + 7000 * i);
	st_writer_set_lost(w, 1, 2);
	return st_writer_close(w, err, cap) ? -1 : 0;
}

/* ---- The unknown chunk, by hand ------------------------------------------ */

static uint8_t *put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	return p + 2;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	return put16(put16(p, (uint16_t)v), (uint16_t)(v >> 16));
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
	return put32(put32(p, (uint32_t)v), (uint32_t)(v >> 32));
}

/* A chunk stored uncompressed (flags 0) at out: header and payload. */
static size_t put_chunk(uint8_t *out, uint32_t kind, uint32_t seq, const uint8_t *payload,
			uint32_t len)
{
	uint8_t *p = out;

	p = put32(p, 0x4b435453u);
	p = put32(p, kind);
	p = put32(p, seq);
	p = put32(p, 0);
	p = put32(p, len);
	p = put32(p, len);
	p = put32(p, 0);
	p = put32(p, 0);
	p = put64(p, 0);
	p = put64(p, 0);
	p = put64(p, XXH64(payload, len, 0));
	put64(p, XXH64(out, 56, 0));
	memmove(out + CHUNK_HEADER_SIZE, payload, len);
	return CHUNK_HEADER_SIZE + len;
}

static uint8_t *put_index_entry(uint8_t *p, uint64_t off, uint32_t kind, uint32_t seq,
				uint32_t stored, uint32_t raw, uint32_t events, uint64_t first,
				uint64_t last)
{
	p = put64(p, off);
	p = put32(p, kind);
	p = put32(p, seq);
	p = put32(p, stored);
	p = put32(p, raw);
	p = put32(p, events);
	p = put32(p, 0);
	p = put64(p, first);
	return put64(p, last);
}

/* The index payload of r's chunks (less its index) plus the future chunk at future_off. */
static size_t index_payload(const struct st_reader *r, uint8_t *out, uint64_t future_off,
			    uint32_t future_stored)
{
	size_t nchunks = st_chunk_count(r) - 1, ntypes = 0;
	uint8_t *p = out + 16;
	uint32_t cpu;
	uint64_t lost;

	for (size_t i = 0; i < nchunks; i++) {
		const struct st_chunk_info *c = st_chunk_at(r, i);

		p = put_index_entry(p, c->offset, c->kind, c->seq, c->stored_size, c->raw_size,
				    c->events, c->first_ts, c->last_ts);
	}
	p = put_index_entry(p, future_off, FUTURE_CHUNK_KIND, (uint32_t)nchunks, future_stored,
			    future_stored - CHUNK_HEADER_SIZE, 0, 0, 0);
	for (size_t i = 0; i < st_type_count(r); i++) {
		const struct st_type *t = st_type_at(r, i);

		if (!st_type_events(r, t->id))
			continue;
		p = put64(put32(put16(put16(p, t->id), 0), 0), st_type_events(r, t->id));
		ntypes++;
	}
	for (size_t i = 0; st_lost_at(r, i, &cpu, &lost) == 0; i++)
		p = put64(put32(put32(p, cpu), 0), lost);
	put32(put32(put32(put32(out, (uint32_t)nchunks + 1), (uint32_t)ntypes),
		    (uint32_t)st_lost_count(r)), 0);
	return (size_t)(p - out);
}

/*
 * Replace the index and trailer of the file in m by: the unknown chunk, an
 * index listing it, a trailer.
 */
static int inject_future_chunk(struct membuf *m, char *err, size_t cap)
{
	static const char payload[] = "a chunk of a kind from a later minor version";
	struct st_reader *r;
	const struct st_chunk_info *index;
	uint8_t *p;
	size_t at, len;
	int rc = -1;

	if (st_reader_open_mem(&r, m->data, m->len, 0)) {
		snprintf(err, cap, "%s", r ? st_reader_errmsg(r) : "out of memory");
		goto out;
	}
	index = st_chunk_at(r, st_chunk_count(r) - 1);
	at = index->offset;
	len = 16 + 48 * st_chunk_count(r) + 16 * (st_type_count(r) + st_lost_count(r));
	if (index->kind != INDEX_KIND ||
	    membuf_reserve(m, at + 2 * CHUNK_HEADER_SIZE + sizeof(payload) + 2 * len + TRAILER_SIZE)) {
		snprintf(err, cap, "unexpected file layout or out of memory");
		goto out;
	}
	at += put_chunk(m->data + at, FUTURE_CHUNK_KIND, index->seq, (const uint8_t *)payload,
			sizeof(payload));
	p = m->data + at + CHUNK_HEADER_SIZE + len;	/* scratch behind the index's place */
	len = index_payload(r, p, index->offset, (uint32_t)(at - index->offset));
	m->len = at + put_chunk(m->data + at, INDEX_KIND, index->seq + 1, p, (uint32_t)len);
	p = put64(put64(m->data + m->len, at), m->len - at);
	put64(p, XXH64(m->data + m->len, 16, 0));
	memcpy(p + 8, "STTRAILR", 8);
	m->len += TRAILER_SIZE;
	rc = 0;
out:
	st_reader_close(r);
	return rc;
}

static int save(const struct membuf *m, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t n;

	if (fd < 0) {
		fprintf(stderr, "synth-future: %s: %s\n", path, strerror(errno));
		return 1;
	}
	n = write(fd, m->data, m->len);
	if (close(fd) || n != (ssize_t)m->len) {
		unlink(path);
		fprintf(stderr, "synth-future: %s: write failed\n", path);
		return 1;
	}
	return 0;
}

/*
 * Besides built-in events the file holds an event type this build does not
 * define (id 300, nvme_future_cmd: every field width and display type, and
 * one display type code newer than this build) and a chunk of an unknown
 * kind (0x7f02) listed in the index. Readers must print the type through the
 * file's schema and skip the chunk.
 */
int main(int argc, char **argv)
{
	struct membuf m = { 0 };
	char err[256];
	int rc;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: synth-future FILE\n");
		return 2;
	}
	if (write_events(&m, err, sizeof(err)) || inject_future_chunk(&m, err, sizeof(err))) {
		fprintf(stderr, "synth-future: %s\n", err);
		rc = 1;
	} else {
		rc = save(&m, argv[1]);
	}
	free(m.data);
	return rc;
}
