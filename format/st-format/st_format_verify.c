/* SPDX-License-Identifier: MIT */
/*
 * st_format_verify.c - `st-format verify`: is every byte of a trace intact?
 *
 * Two reads of the file: a scan that decodes and checks every chunk in file
 * order (the library checks header and payload checksums, decompression,
 * record sizes, types and timestamps against the schema and chunk header),
 * then the footer path, whose index and per-type counts must describe
 * exactly the chunks the scan found.
 */
#include <inttypes.h>
#include <string.h>

#include "format/st-format/st_format.h"

static int same_chunk(const struct st_chunk_info *a, const struct st_chunk_info *b)
{
	return a->offset == b->offset && a->kind == b->kind && a->seq == b->seq &&
	       a->stored_size == b->stored_size && a->raw_size == b->raw_size &&
	       a->events == b->events && a->first_ts == b->first_ts && a->last_ts == b->last_ts;
}

/* The index read through the footer against the chunks found by the scan. */
static int check_index(const char *path, const struct st_reader *scan,
		       const struct st_reader *idx)
{
	size_t n = st_chunk_count(scan);

	if (!st_reader_info(idx)->footer_present || st_reader_info(idx)->recovered)
		return sf_error(path, "index: unreadable although the chunks are intact");
	if (st_chunk_count(idx) != n)
		return sf_error(path, "index: lists %zu chunks, the file holds %zu",
				st_chunk_count(idx), n);
	for (size_t i = 0; i < n; i++)
		if (!same_chunk(st_chunk_at(scan, i), st_chunk_at(idx, i)))
			return sf_error(path, "index: entry %zu differs from chunk %zu at offset %" PRIu64,
					i, i, st_chunk_at(scan, i)->offset);
	for (size_t i = 0; i < st_type_count(scan); i++) {
		const struct st_type *t = st_type_at(scan, i);
		uint64_t counted = st_type_events(scan, t->id), listed = st_type_events(idx, t->id);

		if (counted != listed)
			return sf_error(path, "index: %" PRIu64 " %s events listed, the chunks hold %" PRIu64,
					listed, t->name, counted);
	}
	if (st_reader_info(idx)->lost_events != st_reader_info(scan)->lost_events)
		return sf_error(path, "index: lost event counts differ from the lost chunks");
	return SF_OK;
}

int sf_check_index(const char *path, const struct st_reader *idx)
{
	const struct st_file_info *in;
	struct st_reader *scan;
	int rc;

	if (sf_open(path, ST_READ_SCAN, &scan))
		return SF_BAD;
	in = st_reader_info(scan);
	if (in->damage[0] || in->lost_tail_bytes)
		rc = sf_error(path, "%s", in->damage[0] ? in->damage : "bytes after the trailer");
	else
		rc = check_index(path, scan, idx);
	st_reader_close(scan);
	return rc;
}

static int verify_file(const char *path, int quiet)
{
	const struct st_file_info *in;
	struct st_reader *idx;
	int rc;

	if (sf_open(path, 0, &idx))
		return SF_BAD;
	in = st_reader_info(idx);
	rc = sf_check_index(path, idx);
	if (!rc && !quiet)
		printf("%s: ok: format %u.%u, %" PRIu64 " chunks, %" PRIu64 " events\n", path,
		       in->major, in->minor, in->chunks, in->events);
	st_reader_close(idx);
	return rc;
}

static int verify_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int quiet = 0, c;

	while ((c = sf_getopt(&sf_cmd_verify, argc, argv, ":hq", longopts)) != -1) {
		switch (c) {
		case 'q':
			quiet = 1;
			break;
		case 'h':
			return SF_OK;
		default:
			return SF_USAGE;
		}
	}
	if (sf_positional(&sf_cmd_verify, argc, argv, 1, "FILE"))
		return SF_USAGE;
	return verify_file(argv[optind], quiet);
}

const struct sf_cmd sf_cmd_verify = {
	.name = "verify",
	.summary = "check every chunk and the index; exit 0 only for an intact file",
	.help =
	"Usage: st-format verify [-q] FILE\n"
	"Check a trace completely: every chunk in file order (header and payload\n"
	"checksums, decompression, record sizes and types against the file's\n"
	"schema, timestamps and counts against the chunk header), the trailer, and\n"
	"the index footer against the chunks actually found (offsets, sizes,\n"
	"counts, time ranges, events per type, lost counts).\n\n"
	"  -q, --quiet  print nothing for an intact file\n"
	"  -h, --help   this text\n\n"
	"Exit status: 0 the file is intact (\"FILE: ok: ...\" on stdout), 1 it is\n"
	"not: one line on stderr names the first bad chunk and its byte offset\n"
	"(\"st-format: FILE: chunk 12 at offset 1234: payload checksum mismatch\"),\n"
	"2 bad arguments.\n",
	.run = verify_run,
};
