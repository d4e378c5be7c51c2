/* SPDX-License-Identifier: MIT */
/*
 * st_format_bench.c - hidden helpers of scripts/bench/format.sh: decode every
 * chunk of a trace, dump the raw event bytes, and write raw events through
 * the library as the recorder does. The script times them side by side with
 * zstd on the same bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/st-format/st_format.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print_rate(const char *what, uint64_t bytes, uint64_t events, double s)
{
	printf("%s: %" PRIu64 " raw bytes, %" PRIu64 " events in %.3f s: %.1f MB/s, %.1f Mevents/s\n",
	       what, bytes, events, s, s > 0 ? (double)bytes / s / 1e6 : 0.0,
	       s > 0 ? (double)events / s / 1e6 : 0.0);
}

static const struct option bench_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "level", required_argument, NULL, 'z' },
	{ "cursor", no_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* ---- bench-decode ----------------------------------------------------- */

static int decode_chunks(struct st_reader *r, uint64_t *bytes, uint64_t *events)
{
	struct st_chunk_buf buf = { 0 };
	int rc = 0;

	for (size_t i = 0; i < st_chunk_count(r) && !rc; i++) {
		if (st_chunk_at(r, i)->kind != ST_CHUNK_EVENTS)
			continue;
		rc = st_chunk_decode(r, i, &buf);
		*bytes += buf.len;
		*events += st_chunk_at(r, i)->events;
	}
	st_chunk_buf_free(&buf);
	return rc;
}

static int walk_cursor(struct st_reader *r, uint64_t *bytes, uint64_t *events)
{
	const struct st_event_header *ev;
	struct st_cursor *c;
	int rc = st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c);

	if (rc)
		return rc;
	while ((rc = st_cursor_next(c, &ev)) > 0) {
		*bytes += ev->size;
		(*events)++;
	}
	st_cursor_close(c);
	return rc;
}

static int bench_decode_run(int argc, char **argv)
{
	struct sf_args a = { 0 };
	struct st_reader *r;
	uint64_t bytes = 0, events = 0;
	double t;
	int rc = sf_parse_args(&sf_cmd_bench_decode, argc, argv, bench_opts, &a);

	if (rc)
		return rc < 0 ? SF_OK : rc;
	if (sf_open(a.in, 0, &r))
		return SF_BAD;
	t = now_s();
	rc = a.cursor ? walk_cursor(r, &bytes, &events) : decode_chunks(r, &bytes, &events);
	t = now_s() - t;
	if (rc < 0)
		rc = sf_error(a.in, "%s", st_reader_errmsg(r));
	else
		print_rate(a.cursor ? "cursor" : "decode", bytes, events, t);
	st_reader_close(r);
	return rc;
}

const struct sf_cmd sf_cmd_bench_decode = {
	.name = "bench-decode",
	.help =
	"Usage: st-format bench-decode [--cursor] FILE\n"
	"Benchmark helper: decompress and check every events chunk of FILE in one\n"
	"thread (with --cursor: iterate every event in timestamp order instead) and\n"
	"print the raw bytes, events and time.\n",
	.run = bench_decode_run,
};

/* ---- dump-raw --------------------------------------------------------- */

static const struct option dump_raw_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, 'F' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static int dump_raw_run(int argc, char **argv)
{
	struct sf_args a = { 0 };
	struct st_chunk_buf buf = { 0 };
	struct st_reader *r;
	uint64_t written = 0;
	char why[160];
	int fd, err, rc = sf_parse_args(&sf_cmd_dump_raw, argc, argv, dump_raw_opts, &a);

	if (rc)
		return rc < 0 ? SF_OK : rc;
	if (!a.out)
		return sf_usage(&sf_cmd_dump_raw, "missing -o OUT");
	if (sf_open(a.in, 0, &r))
		return SF_BAD;
	fd = st_output_open(a.out, a.force ? ST_OUTPUT_FORCE : 0, why, sizeof(why));
	if (fd < 0)
		rc = sf_error(a.out, "%s", why);
	for (size_t i = 0; i < st_chunk_count(r) && !rc; i++) {
		if (st_chunk_at(r, i)->kind != ST_CHUNK_EVENTS)
			continue;
		if (st_chunk_decode(r, i, &buf))
			rc = sf_error(a.in, "%s", st_reader_errmsg(r));
		else if ((err = st_pwrite_all(fd, buf.data, buf.len, written)))
			rc = sf_error(a.out, "write failed: %s", strerror(-err));
		else
			written += buf.len;
	}
	if (fd >= 0 && close(fd) && !rc)
		rc = sf_error(a.out, "write failed: %s", strerror(errno));
	st_chunk_buf_free(&buf);
	st_reader_close(r);
	return rc;
}

const struct sf_cmd sf_cmd_dump_raw = {
	.name = "dump-raw",
	.help =
	"Usage: st-format dump-raw FILE -o RAW [--force]\n"
	"Benchmark helper: write the decompressed payloads of every events chunk of\n"
	"FILE, concatenated, to RAW (the bytes the recorder appended).\n"
	SF_FORCE_HELP,
	.run = dump_raw_run,
};

/* ---- bench-write ------------------------------------------------------ */

static int discard_write(void *ctx, const void *buf, size_t len, uint64_t offset)
{
	(void)buf;
	(void)offset;
	*(uint64_t *)ctx += len;
	return 0;
}

static int discard_sync(void *ctx)
{
	(void)ctx;
	return 0;
}

/* Append every record of raw[0..len) through a writer whose sink drops the bytes. */
static int write_records(const struct sf_args *a, const uint8_t *raw, size_t len,
			 uint64_t *events, uint64_t *stored)
{
	struct st_sink sink = { .write = discard_write, .sync = discard_sync, .ctx = stored };
	struct st_writer_opts opts = { .zstd_level = a->level, .sink = &sink };
	struct st_writer *w;
	char msg[256];
	size_t pos = 0;

	if (st_writer_open(&w, NULL, &opts) || st_writer_add_builtin_types(w)) {
		snprintf(msg, sizeof(msg), "%s", w ? st_writer_errmsg(w) : "out of memory");
		if (w)
			st_writer_close(w, NULL, 0);
		return sf_error(a->in, "%s", msg);
	}
	while (len - pos >= sizeof(struct st_event_header)) {
		const struct st_event_header *h = (const void *)(raw + pos);

		if (h->size < sizeof(*h) || h->size > len - pos)
			break;
		st_writer_append(w, h, h->size);
		pos += h->size;
		(*events)++;
	}
	if (st_writer_close(w, msg, sizeof(msg)))
		return sf_error(a->in, "%s", msg);
	if (pos != len)
		return sf_error(a->in, "bad record at offset %zu", pos);
	return SF_OK;
}

static int bench_write_run(int argc, char **argv)
{
	struct sf_args a = { 0 };
	uint64_t events = 0, stored = 0;
	struct stat st;
	void *raw;
	double t;
	int fd, rc = sf_parse_args(&sf_cmd_bench_write, argc, argv, bench_opts, &a);

	if (rc)
		return rc < 0 ? SF_OK : rc;
	fd = open(a.in, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_size == 0)
		return sf_error(a.in, "cannot read: %s", fd < 0 ? strerror(errno) : "empty");
	raw = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (raw == MAP_FAILED)
		return sf_error(a.in, "cannot map: %s", strerror(errno));
	t = now_s();
	rc = write_records(&a, raw, (size_t)st.st_size, &events, &stored);
	t = now_s() - t;
	munmap(raw, (size_t)st.st_size);
	if (!rc) {
		print_rate("write", (uint64_t)st.st_size, events, t);
		printf("stored %" PRIu64 " bytes, %.2f bytes/event\n", stored,
		       events ? (double)stored / (double)events : 0.0);
	}
	return rc;
}

const struct sf_cmd sf_cmd_bench_write = {
	.name = "bench-write",
	.help =
	"Usage: st-format bench-write [-z LEVEL] RAW\n"
	"Benchmark helper: append every record of RAW (as written by dump-raw)\n"
	"through a libsttrace writer, chunking, compressing and checksumming as\n"
	"st-record does, to a sink that drops the bytes; print rate and size.\n",
	.run = bench_write_run,
};
