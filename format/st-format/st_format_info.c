/* SPDX-License-Identifier: MIT */
/*
 * st_format_info.c - `st-format info`: what a trace holds, in text or JSON.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "common/number.h"
#include "common/text.h"
#include "format/st-format/st_format.h"
#include "format/st-format/st_format_json.h"

/* Chunks per kind; index 0 counts kinds this build does not know. */
struct kind_counts {
	uint64_t n[ST_CHUNK_INDEX + 1];
};

static const char *const kind_names[ST_CHUNK_INDEX + 1] = {
	[0] = "unknown", [ST_CHUNK_META] = "metadata", [ST_CHUNK_SCHEMA] = "schema",
	[ST_CHUNK_EVENTS] = "events", [ST_CHUNK_LOST] = "lost", [ST_CHUNK_INDEX] = "index",
};

/* Slot of a chunk kind in kind_names and kind_counts. */
static unsigned kind_slot(uint32_t kind)
{
	return kind <= ST_CHUNK_INDEX ? kind : 0;
}

static void count_kinds(const struct st_reader *r, struct kind_counts *k)
{
	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < st_chunk_count(r); i++) {
		k->n[kind_slot(st_chunk_at(r, i)->kind)]++;
	}
}

/* ISO 8601 UTC with nanoseconds of event-clock ts on the wall clock (offset off). */
static void wall_time(uint64_t ts, int64_t off, char *buf, size_t cap)
{
	int64_t ns;
	time_t sec;
	struct tm tm;
	size_t n;

	if (st_wall_time(ts, off, &ns) || (sec = (time_t)(ns / 1000000000), !gmtime_r(&sec, &tm))) {
		snprintf(buf, cap, "?");
		return;
	}
	n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, cap - n, ".%09" PRId64 "Z", ns % 1000000000);
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

/*
 * A range that runs to the end of the file may have held any number of
 * chunks (no chunk after it tells), unless it is the 32 bytes after the
 * index chunk, where only the trailer belongs.
 */
static int missing_unknown(const struct st_reader *r, const struct st_damage *d)
{
	const struct st_chunk_info *last = st_chunk_at(r, st_chunk_count(r) - 1);

	if (d->chunks || d->offset + d->size < st_reader_info(r)->file_size)
		return 0;
	return !(last && last->kind == ST_CHUNK_INDEX && last->offset + last->stored_size == d->offset &&
		 d->size == 32);
}

/*
 * Chunks cut out whole just before chunk i: it starts where the intact chunk
 * before it (or the file header's 32 bytes) ends, no damaged range between
 * them, and its seq jumps; their count.
 */
static uint32_t chunks_cut_before(const struct st_reader *r, size_t i)
{
	const struct st_chunk_info *ci = st_chunk_at(r, i), *prev = i ? st_chunk_at(r, i - 1) : NULL;
	uint64_t prev_end = prev ? prev->offset + prev->stored_size : 32;
	uint32_t expected = prev ? prev->seq + 1 : 0;

	return ci->offset == prev_end && ci->seq > expected ? ci->seq - expected : 0;
}

/* Byte ranges the scan skipped and chunks cut out, with the chunks missing and why. */
static void print_damaged_ranges(const struct st_reader *r, const struct st_file_info *in)
{
	const struct st_damage *end = st_damage_at(r, st_damage_count(r) - 1);

	printf("skipped       %" PRIu64 " bytes in %" PRIu64 " damaged range%s, %" PRIu64
	       " chunk%s missing%s\n", in->skipped_bytes, in->damaged_ranges,
	       in->damaged_ranges == 1 ? "" : "s", in->missing_chunks,
	       in->missing_chunks == 1 ? "" : "s",
	       end && missing_unknown(r, end) ? " and an unknown number at the end" : "");
	for (size_t i = 0; i < st_chunk_count(r); i++) {
		const struct st_chunk_info *ci = st_chunk_at(r, i);
		uint32_t cut = chunks_cut_before(r, i);

		if (cut == 1)
			printf("  cut before byte %" PRIu64 ": chunk %u missing\n", ci->offset, ci->seq - 1);
		else if (cut)
			printf("  cut before byte %" PRIu64 ": chunks %u..%u missing\n", ci->offset,
			       ci->seq - cut, ci->seq - 1);
	}
	for (size_t i = 0; i < st_damage_count(r); i++) {
		const struct st_damage *d = st_damage_at(r, i);

		printf("  bytes %" PRIu64 "..%" PRIu64 " (%" PRIu64 ")", d->offset, d->offset + d->size,
		       d->size);
		if (d->chunks == 1)
			printf(", chunk %u missing", d->first_seq);
		else if (d->chunks)
			printf(", chunks %u..%u missing", d->first_seq, d->first_seq + d->chunks - 1);
		else if (missing_unknown(r, d))
			printf(", chunks from %u missing: how many is unknown", d->first_seq);
		printf(": %s\n", d->why);
	}
}

static void print_footer(const struct st_reader *r, const struct st_file_info *in)
{
	if (in->footer_present && !in->lost_tail_bytes && !in->damaged_ranges && !in->missing_chunks) {
		puts("footer        present");
		return;
	}
	printf("footer        %s: read by scanning the chunks\n",
	       in->footer_present ? "present but damaged" : "missing");
	printf("damage        %s\n", in->damage[0] ? in->damage : "none");
	if (in->damaged_ranges || in->missing_chunks)
		print_damaged_ranges(r, in);
	if (in->lost_tail_bytes)
		printf("lost tail     %" PRIu64 " bytes after offset %" PRIu64 " unreadable\n",
		       in->lost_tail_bytes, in->valid_size);
}

/* The CPUs whose counts `info` lists; --json lists them all. */
#define LOST_CPUS_SHOWN 64

static void print_lost(const struct st_reader *r, const struct st_file_info *in)
{
	unsigned shown = 0, more = 0;

	printf("lost events   %" PRIu64 "%s", in->lost_events,
	       in->lost_events == ST_COUNT_SATURATED ? " or more (the per-CPU counts add up past 2^64: "
						       "not counts a kernel keeps)" : "");
	for (size_t i = 0; i < st_lost_count(r); i++) {
		uint32_t cpu;
		uint64_t lost;

		if (st_lost_at(r, i, &cpu, &lost) || !lost)
			continue;
		if (shown == LOST_CPUS_SHOWN)
			more++;
		else if (cpu == ST_LOST_ANY_CPU)
			printf("%sskipped probe runs: %" PRIu64, shown++ ? ", " : " (", lost);
		else if (cpu == ST_LOST_DROPPED)
			printf("%sdropped, output too slow: %" PRIu64, shown++ ? ", " : " (", lost);
		else
			printf("%scpu %u: %" PRIu64, shown++ ? ", " : " (", cpu, lost);
	}
	if (more)
		printf(", and %u CPUs more", more);
	puts(shown ? ")" : "");
}

/* st-record's BPF ring buffer: its size, and the most it held at a drain. */
static void print_ringbuf(const struct st_reader *r)
{
	const char *size = st_meta_get(r, "record.ringbuf_bytes");
	const char *used = st_meta_get(r, "record.ringbuf_used_max_bytes");
	const char *gap = st_meta_get(r, "record.drain_gap_max_ns");
	uint64_t s, u, g;

	if (!size || !used || parse_count(size, 1, UINT64_MAX, &s) || parse_count(used, 0, UINT64_MAX, &u))
		return;
	printf("ring buffer   %" PRIu64 " bytes, at most %" PRIu64 " used (%.1f%%)",
	       s, u, 100.0 * (double)u / (double)s);
	if (gap && !parse_count(gap, 0, UINT64_MAX, &g))
		printf(", drained at most %.3f s apart", (double)g / 1e9);
	putchar('\n');
}

/* The events the recording's selection had that its kernel could not give (metadata missing.*). */
static void print_missing(const struct st_reader *r)
{
	const char *key, *value;

	for (size_t i = 0; st_meta_at(r, i, &key, &value) == 0; i++)
		if (!strncmp(key, "missing.", 8))
			printf("not recorded  %s: %s\n", key + 8, value);
}

static void print_span(const struct st_reader *r, const struct st_file_info *in)
{
	char a[64], b[64];
	int64_t off;

	if (!in->events) {
		puts("time span     no events");
		return;
	}
	printf("time span     %" PRIu64 " .. %" PRIu64 " ns (event clock), %.6f s\n", in->first_ts,
	       in->last_ts, (double)(in->last_ts - in->first_ts) / 1e9);
	if (in->wide_chunks)
		printf("              from the records: the headers of %" PRIu64 " events chunks give "
		       "a range of 146 years or more\n", in->wide_chunks);
	if (!st_clock_offset(r, "clock.realtime_offset_ns", &off)) {
		wall_time(in->first_ts, off, a, sizeof(a));
		wall_time(in->last_ts, off, b, sizeof(b));
		printf("wall clock    %s .. %s\n", a, b);
	}
}

static void print_chunk_list(const struct st_reader *r)
{
	puts("\nchunks\n  seq       offset kind      stored      raw   events first_ts .. last_ts");
	for (size_t i = 0; i < st_chunk_count(r); i++) {
		const struct st_chunk_info *ci = st_chunk_at(r, i);

		printf("  %-5u %10" PRIu64 " %-8s %8u %8u %8u", ci->seq, ci->offset,
		       kind_names[kind_slot(ci->kind)], ci->stored_size, ci->raw_size, ci->events);
		if (ci->kind == ST_CHUNK_EVENTS)
			printf(" %" PRIu64 " .. %" PRIu64, ci->first_ts, ci->last_ts);
		putchar('\n');
	}
}

static void print_text(const char *path, const struct st_reader *r)
{
	const struct st_file_info *in = st_reader_info(r);
	struct kind_counts k;
	const char *key, *value;

	count_kinds(r, &k);
	printf("file          %s\n", path);
	printf("format        %u.%u\n", in->major, in->minor);
	printf("size          %" PRIu64 " bytes\n", in->file_size);
	print_footer(r, in);
	printf("chunks        %" PRIu64 " (", in->chunks);
	for (int i = 1; i <= ST_CHUNK_INDEX; i++)
		printf("%" PRIu64 " %s, ", k.n[i], kind_names[i]);
	printf("%" PRIu64 " of unknown kinds)\n", k.n[0]);
	printf("events        %" PRIu64 "\n", in->events);
	print_span(r, in);
	printf("bytes         raw %" PRIu64 ", stored %" PRIu64 ", ratio %.2f, %.2f bytes/event\n",
	       in->raw_bytes, in->stored_bytes, ratio(in->raw_bytes, in->stored_bytes),
	       ratio(in->stored_bytes, in->events));
	print_lost(r, in);
	print_ringbuf(r);
	print_missing(r);
	printf("schema        %zu event types\n", st_type_count(r));
	puts("\nevents per type");
	for (size_t i = 0; i < st_type_count(r); i++) {
		const struct st_type *t = st_type_at(r, i);
		uint64_t n = st_type_events(r, t->id);
		char shown[TEXT_SHOWN_MAX];

		if (n)
			printf("  %-28s %" PRIu64 "\n", text_shown(t->name, shown, sizeof(shown)), n);
	}
	puts("\nmetadata");
	for (size_t i = 0; st_meta_at(r, i, &key, &value) == 0; i++) {
		fputs("  ", stdout);
		text_put_shown(stdout, key);
		fputs(" = ", stdout);
		text_put_shown(stdout, value);
		putchar('\n');
	}
}

/* ---- JSON ---------------------------------------------------------------- */

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static struct json_object *json_types(const struct st_reader *r)
{
	struct json_object *o = json_object_new_object();

	for (size_t i = 0; i < st_type_count(r); i++) {
		const struct st_type *t = st_type_at(r, i);
		uint64_t n = st_type_events(r, t->id);

		if (n)
			sf_json_add(o, t->name, json_object_new_uint64(n));
	}
	return o;
}

static struct json_object *json_lost(const struct st_reader *r)
{
	struct json_object *o = json_object_new_object();
	char cpu_key[16];

	for (size_t i = 0; i < st_lost_count(r); i++) {
		uint32_t cpu;
		uint64_t lost;

		if (st_lost_at(r, i, &cpu, &lost) || !lost)
			continue;
		if (cpu == ST_LOST_ANY_CPU)
			snprintf(cpu_key, sizeof(cpu_key), "any");
		else if (cpu == ST_LOST_DROPPED)
			snprintf(cpu_key, sizeof(cpu_key), "dropped");
		else
			snprintf(cpu_key, sizeof(cpu_key), "%u", cpu);
		add_u64(o, cpu_key, lost);
	}
	return o;
}

static struct json_object *json_meta(const struct st_reader *r)
{
	struct json_object *o = json_object_new_object();
	const char *key, *value;

	for (size_t i = 0; st_meta_at(r, i, &key, &value) == 0; i++)
		sf_json_add(o, key, sf_json_string(value));
	return o;
}

static struct json_object *json_chunks(const struct st_reader *r)
{
	struct json_object *o = json_object_new_object();
	struct kind_counts k;

	count_kinds(r, &k);
	for (int i = 0; i <= ST_CHUNK_INDEX; i++)
		add_u64(o, kind_names[i], k.n[i]);
	return o;
}

static struct json_object *json_chunk_list(const struct st_reader *r)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < st_chunk_count(r); i++) {
		const struct st_chunk_info *ci = st_chunk_at(r, i);
		struct json_object *o = json_object_new_object();

		add_u64(o, "seq", ci->seq);
		add_u64(o, "offset", ci->offset);
		json_object_object_add(o, "kind", json_object_new_string(kind_names[kind_slot(ci->kind)]));
		add_u64(o, "kind_id", ci->kind);
		add_u64(o, "stored_size", ci->stored_size);
		add_u64(o, "raw_size", ci->raw_size);
		add_u64(o, "events", ci->events);
		add_u64(o, "first_ts", ci->first_ts);
		add_u64(o, "last_ts", ci->last_ts);
		json_object_array_add(a, o);
	}
	return a;
}

/* missing_chunks is null where the count is unknown (missing_unknown()). */
static struct json_object *json_damaged_ranges(const struct st_reader *r)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < st_damage_count(r); i++) {
		const struct st_damage *d = st_damage_at(r, i);
		struct json_object *o = json_object_new_object();

		add_u64(o, "offset", d->offset);
		add_u64(o, "size", d->size);
		add_u64(o, "first_seq", d->first_seq);
		if (missing_unknown(r, d))
			json_object_object_add(o, "missing_chunks", NULL);
		else
			add_u64(o, "missing_chunks", d->chunks);
		json_object_object_add(o, "why", json_object_new_string(d->why));
		json_object_array_add(a, o);
	}
	return a;
}

static struct json_object *json_cuts(const struct st_reader *r)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < st_chunk_count(r); i++) {
		const struct st_chunk_info *ci = st_chunk_at(r, i);
		uint32_t cut = chunks_cut_before(r, i);
		struct json_object *o;

		if (!cut)
			continue;
		o = json_object_new_object();
		add_u64(o, "offset", ci->offset);
		add_u64(o, "first_seq", ci->seq - cut);
		add_u64(o, "missing_chunks", cut);
		json_object_array_add(a, o);
	}
	return a;
}

static void json_span(struct json_object *o, const struct st_reader *r,
		      const struct st_file_info *in)
{
	char buf[64];
	int64_t off;

	add_u64(o, "first_ts", in->first_ts);
	add_u64(o, "last_ts", in->last_ts);
	add_u64(o, "duration_ns", in->last_ts - in->first_ts);
	add_u64(o, "wide_chunks", in->wide_chunks);
	if (!in->events || st_clock_offset(r, "clock.realtime_offset_ns", &off))
		return;
	wall_time(in->first_ts, off, buf, sizeof(buf));
	json_object_object_add(o, "wall_first", json_object_new_string(buf));
	wall_time(in->last_ts, off, buf, sizeof(buf));
	json_object_object_add(o, "wall_last", json_object_new_string(buf));
}

static void print_json(const char *path, const struct st_reader *r, int chunk_list)
{
	const struct st_file_info *in = st_reader_info(r);
	struct json_object *o = json_object_new_object();
	char version[16];

	snprintf(version, sizeof(version), "%u.%u", in->major, in->minor);
	json_object_object_add(o, "file", sf_json_string(path));
	json_object_object_add(o, "format", json_object_new_string(version));
	add_u64(o, "file_size", in->file_size);
	json_object_object_add(o, "footer_present", json_object_new_boolean(in->footer_present));
	json_object_object_add(o, "recovered", json_object_new_boolean(in->recovered));
	json_object_object_add(o, "damage", json_object_new_string(in->damage));
	add_u64(o, "valid_size", in->valid_size);
	add_u64(o, "lost_tail_bytes", in->lost_tail_bytes);
	add_u64(o, "skipped_bytes", in->skipped_bytes);
	add_u64(o, "missing_chunks", in->missing_chunks);
	json_object_object_add(o, "damaged_ranges", json_damaged_ranges(r));
	json_object_object_add(o, "cuts", json_cuts(r));
	add_u64(o, "chunk_count", in->chunks);
	json_object_object_add(o, "chunks", json_chunks(r));
	add_u64(o, "events", in->events);
	json_span(o, r, in);
	add_u64(o, "raw_bytes", in->raw_bytes);
	add_u64(o, "stored_bytes", in->stored_bytes);
	json_object_object_add(o, "ratio", json_object_new_double(ratio(in->raw_bytes,
									  in->stored_bytes)));
	json_object_object_add(o, "bytes_per_event",
			       json_object_new_double(ratio(in->stored_bytes, in->events)));
	add_u64(o, "lost_events", in->lost_events);
	json_object_object_add(o, "lost_per_cpu", json_lost(r));
	add_u64(o, "schema_types", st_type_count(r));
	json_object_object_add(o, "events_per_type", json_types(r));
	json_object_object_add(o, "metadata", json_meta(r));
	if (chunk_list)
		json_object_object_add(o, "chunk_list", json_chunk_list(r));
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
	json_object_put(o);
}

static int info_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "chunks", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const struct st_file_info *in;
	struct st_reader *r;
	int json = 0, chunk_list = 0, c, rc = SF_OK;

	while ((c = sf_getopt(&sf_cmd_info, argc, argv, ":h", longopts)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'c':
			chunk_list = 1;
			break;
		case 'h':
			return SF_OK;
		default:
			return SF_USAGE;
		}
	}
	if (sf_positional(&sf_cmd_info, argc, argv, 1, "FILE"))
		return SF_USAGE;
	if (sf_open(argv[optind], 0, &r))
		return SF_BAD;
	if (json) {
		print_json(argv[optind], r, chunk_list);
	} else {
		print_text(argv[optind], r);
		if (chunk_list)
			print_chunk_list(r);
	}
	/* what the footer says, checked against the chunks (verify's check) */
	in = st_reader_info(r);
	fflush(stdout);
	if (in->footer_present && !in->recovered && sf_check_index(argv[optind], r))
		rc = SF_BAD;
	st_reader_close(r);
	return rc;
}

const struct sf_cmd sf_cmd_info = {
	.name = "info",
	.summary = "versions, metadata, time span, chunks, events per type, sizes, losses",
	.help =
	"Usage: st-format info [--json] [--chunks] FILE\n"
	"Describe a trace: format version, file size, whether the footer (index)\n"
	"was present or the file was read by scanning its chunks (and what was\n"
	"lost then: every damaged byte range skipped, the chunks missing there\n"
	"and why, and chunks cut out whole), chunks per kind, events, time span on the event clock and on\n"
	"the wall clock (through clock.realtime_offset_ns), raw and stored bytes,\n"
	"compression ratio, stored bytes per event, events lost by the kernel side\n"
	"(per CPU, the first 64 in text), events per type and every metadata key.\n"
	"What the footer says is checked against every chunk, as verify does.\n\n"
	"  --json     one JSON object instead of text\n"
	"  --chunks   also list every chunk: sequence number, byte offset, kind,\n"
	"             stored and raw bytes, events, time range\n"
	"  -h, --help this text\n\n"
	"Exit status: 0 when the file could be read (even if damaged: see\n"
	"`footer`), 2 for bad arguments, 1 when it cannot be read at all or when\n"
	"the chunks contradict the footer: a damaged chunk, or an index or chunk\n"
	"header whose counts lie (the figures printed are the footer's; one line\n"
	"on stderr says what differs, and `st-format verify` fails on it).\n",
	.run = info_run,
};
