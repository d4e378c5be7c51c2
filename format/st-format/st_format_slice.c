/* SPDX-License-Identifier: MIT */
/*
 * st_format_slice.c - `st-format slice` and `st-format recover`: write a new,
 * valid trace from the chunks of another (a time range of it, or every
 * chunk that is still intact), with the same schema, metadata and losses.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/st-format/st_format.h"

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int sf_copy_open(const struct sf_args *a, struct st_reader *r, struct st_writer **w)
{
	struct st_writer_opts opts = {
		.zstd_level = a->level,
		.output_flags = a->force ? ST_OUTPUT_FORCE : 0,
	};
	const char *in = a->in, *out = a->out;
	const char *key, *value;
	uint32_t cpu;
	uint64_t lost;

	if (same_file(in, out))
		return sf_error(out, "is the input file; choose another output");
	if (st_writer_open(w, out, &opts)) {
		sf_error(out, "%s", *w ? st_writer_errmsg(*w) : "out of memory");
		if (*w)
			st_writer_close(*w, NULL, 0);
		return SF_BAD;
	}
	for (size_t i = 0; i < st_type_count(r); i++)
		st_writer_add_type(*w, st_type_at(r, i));
	for (size_t i = 0; st_meta_at(r, i, &key, &value) == 0; i++)
		st_writer_set_meta(*w, key, value);
	for (size_t i = 0; st_lost_at(r, i, &cpu, &lost) == 0; i++)
		st_writer_set_lost(*w, cpu, lost);
	return SF_OK;
}

int sf_copy_close(struct st_writer *w, const char *out)
{
	char msg[256];

	if (!st_writer_close(w, msg, sizeof(msg)))
		return SF_OK;
	unlink(out);
	return sf_error(out, "%s", msg);
}

static void set_meta_u64(struct st_writer *w, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	st_writer_set_meta(w, key, buf);
}

/* Append the records of a decoded events chunk with from <= ts <= to. */
static uint64_t copy_records(struct st_writer *w, const struct st_chunk_buf *buf, uint64_t from,
			     uint64_t to)
{
	const struct st_event_header *ev;
	uint64_t n = 0;
	size_t pos = 0;

	while (st_chunk_next(buf, &pos, &ev) > 0) {
		if (ev->ts < from || ev->ts > to)
			continue;
		st_writer_append(w, ev, ev->size);
		n++;
	}
	return n;
}

/*
 * Parse the options of slice (with_range) or recover: as sf_parse_args(),
 * with -o OUT required.
 */
static int parse_copy_args(const struct sf_cmd *cmd, int argc, char **argv, int with_range,
			   struct sf_args *a)
{
	static const struct option slice_opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "level", required_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },
		{ "force", no_argument, NULL, 'F' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 'T' },
		{ 0 },
	};
	static const struct option recover_opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "level", required_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },
		{ "force", no_argument, NULL, 'F' },
		{ 0 },
	};
	int rc = sf_parse_args(cmd, argc, argv, with_range ? slice_opts : recover_opts, a);

	if (!rc && !a->out)
		return sf_usage(cmd, "missing -o OUT");
	return rc;
}

/* ---- slice ----------------------------------------------------------------- */

static int slice_chunks(const struct sf_args *a, struct st_reader *r, struct st_writer *w,
			uint64_t from, uint64_t to, uint64_t *kept)
{
	struct st_chunk_buf buf = { 0 };
	int rc = SF_OK;

	for (size_t i = 0; i < st_chunk_count(r) && !rc; i++) {
		const struct st_chunk_info *ci = st_chunk_at(r, i);

		if (ci->kind != ST_CHUNK_EVENTS || ci->last_ts < from || ci->first_ts > to)
			continue;
		if (st_chunk_decode(r, i, &buf))
			rc = sf_error(a->in, "%s", st_reader_errmsg(r));
		else
			*kept += copy_records(w, &buf, from, to);
	}
	st_chunk_buf_free(&buf);
	return rc;
}

static int slice_run(int argc, char **argv)
{
	struct sf_args a = { 0 };
	struct st_reader *r;
	struct st_writer *w;
	uint64_t from, to, kept = 0;
	int rc = parse_copy_args(&sf_cmd_slice, argc, argv, 1, &a);

	if (rc)
		return rc < 0 ? SF_OK : rc;
	if (sf_open(a.in, 0, &r))
		return SF_BAD;
	rc = sf_resolve_range(&sf_cmd_slice, r, &a.range, &from, &to);
	if (!rc)
		rc = sf_copy_open(&a, r, &w);
	if (!rc) {
		set_meta_u64(w, "slice.from_ts", from);
		set_meta_u64(w, "slice.to_ts", to);
		rc = slice_chunks(&a, r, w, from, to, &kept);
		if (rc) {
			st_writer_close(w, NULL, 0);
			unlink(a.out);
		} else {
			rc = sf_copy_close(w, a.out);
		}
	}
	if (!rc)
		printf("%s: %" PRIu64 " of %" PRIu64 " events, %" PRIu64 " <= ts <= %" PRIu64 "\n",
		       a.out, kept, st_reader_info(r)->events, from, to);
	st_reader_close(r);
	return rc;
}

const struct sf_cmd sf_cmd_slice = {
	.name = "slice",
	.summary = "write the events of a time range to a new, valid file",
	.help =
	"Usage: st-format slice FILE -o OUT [--from T] [--to T] [-z LEVEL]\n"
	"Write a new trace holding only the events with FROM <= ts <= TO, with the\n"
	"same schema, the same metadata (plus slice.from_ts and slice.to_ts, the\n"
	"range in event-clock ns) and the same lost-event counts (losses carry no\n"
	"time, so all of them are kept). Records keep their order in the file.\n\n"
	"  -o, --output OUT   the new file (not the input)\n"
	SF_FORCE_HELP
	"  --from T, --to T   the range; either may be omitted\n"
	"  -z, --level LEVEL  zstd level of the new file (default: the library's)\n"
	"  -h, --help         this text\n\n"
	SF_TIME_HELP "\n"
	"Chunks of kinds this build does not know are not copied.\n"
	"Exit status: 0 written, 1 unreadable input or failed write (OUT removed),\n"
	"2 bad arguments.\n",
	.run = slice_run,
};

/* ---- recover --------------------------------------------------------------- */

struct recovery {
	uint64_t chunks, kept_chunks, events, dropped_bytes;
	uint64_t missing_chunks;	/* skipped by the scan, or listed but not decodable */
	char why[256];
};

/* Every events chunk that decodes; the others are counted as dropped. */
static void recover_chunks(struct st_reader *r, struct st_writer *w, struct recovery *rec)
{
	struct st_chunk_buf buf = { 0 };

	for (size_t i = 0; i < st_chunk_count(r); i++) {
		const struct st_chunk_info *ci = st_chunk_at(r, i);

		if (ci->kind != ST_CHUNK_EVENTS)
			continue;
		rec->chunks++;
		if (st_chunk_decode(r, i, &buf)) {
			rec->dropped_bytes += ci->stored_size;
			rec->missing_chunks++;
			if (!rec->why[0])
				snprintf(rec->why, sizeof(rec->why), "%s", st_reader_errmsg(r));
			continue;
		}
		rec->kept_chunks++;
		rec->events += copy_records(w, &buf, 0, UINT64_MAX);
	}
	st_chunk_buf_free(&buf);
}

static void print_recovery(const char *out, const struct recovery *rec)
{
	printf("%s: kept %" PRIu64 " of %" PRIu64 " event chunks, %" PRIu64 " events; dropped %" PRIu64
	       " bytes", out, rec->kept_chunks, rec->chunks, rec->events, rec->dropped_bytes);
	if (rec->missing_chunks)
		printf(", %" PRIu64 " chunk%s missing", rec->missing_chunks,
		       rec->missing_chunks == 1 ? "" : "s");
	printf(" (damage: %s)\n", rec->why);
}

static int recover_run(int argc, char **argv)
{
	struct sf_args a = { 0 };
	struct recovery rec = { 0 };
	const struct st_file_info *in;
	struct st_reader *r;
	struct st_writer *w;
	int rc = parse_copy_args(&sf_cmd_recover, argc, argv, 0, &a);

	if (rc)
		return rc < 0 ? SF_OK : rc;
	if (sf_open(a.in, 0, &r))
		return SF_BAD;
	in = st_reader_info(r);
	rc = sf_copy_open(&a, r, &w);
	if (!rc) {
		recover_chunks(r, w, &rec);
		rec.dropped_bytes += in->skipped_bytes;
		rec.missing_chunks += in->missing_chunks;
		if (!rec.why[0])
			snprintf(rec.why, sizeof(rec.why), "%s", in->damage[0] ? in->damage : "none");
		set_meta_u64(w, "recover.dropped_bytes", rec.dropped_bytes);
		st_writer_set_meta(w, "recover.damage", rec.why);
		rc = sf_copy_close(w, a.out);
	}
	if (!rc)
		print_recovery(a.out, &rec);
	st_reader_close(r);
	return rc;
}

const struct sf_cmd sf_cmd_recover = {
	.name = "recover",
	.summary = "rebuild a valid file from a truncated or corrupt one",
	.help =
	"Usage: st-format recover FILE -o OUT [-z LEVEL]\n"
	"Write a new, valid trace from every intact chunk of a damaged one (cut by\n"
	"a crash or a full disk, or corrupted): the schema, the metadata, the lost\n"
	"counts and every events chunk that still decodes and checks out. With an\n"
	"intact index every listed chunk is tried; without one the file is scanned\n"
	"chunk by chunk, and damaged bytes are skipped up to the next intact chunk,\n"
	"so every intact chunk before and after the damage is kept. Prints the\n"
	"event chunks and events kept, the bytes dropped, the chunks missing (their\n"
	"sequence numbers, when chunks after them survived) and the first damage;\n"
	"the new file's metadata records the bytes and the damage too\n"
	"(recover.dropped_bytes, recover.damage). The new file's chunks are\n"
	"numbered afresh, so it has no gaps and `st-format verify` accepts it.\n\n"
	"  -o, --output OUT   the new file (not the input)\n"
	SF_FORCE_HELP
	"  -z, --level LEVEL  zstd level of the new file (default: the library's)\n"
	"  -h, --help         this text\n\n"
	"Exit status: 0 written, 1 nothing readable (not even a schema) or failed\n"
	"write (OUT removed), 2 bad arguments.\n",
	.run = recover_run,
};
