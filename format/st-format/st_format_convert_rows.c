/* SPDX-License-Identifier: MIT */
/*
 * st_format_convert_rows.c - `convert --to csv|jsonl`: tables for pandas,
 * DuckDB or Spark. Events are cat's rows (st_format_convert.h); with
 * --records each row is one I/O as st-analyze's correlator builds it, with
 * every stage timestamp and latency, so a notebook starts where st-analyze
 * ends instead of correlating again.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/csv.h"
#include "format/st-format/st_format_convert.h"

/* Column names of the stage timestamps, in enum an_ts order. */
static const char *const ts_names[AN_TS_COUNT] = {
	"ts_sys_enter", "ts_fs_begin", "ts_queue", "ts_getrq", "ts_insert", "ts_issue",
	"ts_complete", "ts_fs_done", "ts_sys_exit",
};

struct rows {
	struct an_corr *corr;
	int json;
};

/* AN_IO_* flags a user filters on, as words joined by '|'. */
static void io_flags(const struct an_io *io, char *buf, size_t cap)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = { { AN_IO_SYSCALL, "syscall" }, { AN_IO_URING, "uring" },
		      { AN_IO_MERGED, "merged" }, { AN_IO_SPLIT, "split" },
		      { AN_IO_ERROR, "error" }, { AN_IO_INCOMPLETE, "incomplete" } };
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (io->flags & names[i].bit)
			n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "|" : "", names[i].name);
}

/* One I/O as a JSON object, numbers as numbers, missing stages as null. */
static struct json_object *io_object(struct sf_convert *cv, const struct an_io *io)
{
	struct json_object *o = json_object_new_object();
	uint64_t ns[AN_ST_COUNT];
	unsigned defined = an_io_stages(io, ns);
	char dev[32], file[64], flags[96];

	json_object_object_add(o, "start_ns", json_object_new_uint64(io->start));
	json_object_object_add(o, "op", json_object_new_string(an_op_name(io->op)));
	json_object_object_add(o, "dev", json_object_new_string(
		an_names_dev(cv->names, io->dev, dev, sizeof(dev))));
	json_object_object_add(o, "sector", json_object_new_uint64(io->sector));
	json_object_object_add(o, "bytes", json_object_new_uint64(io->bytes));
	json_object_object_add(o, "blk_bytes", json_object_new_uint64(io->blk_bytes));
	json_object_object_add(o, "offset", json_object_new_int64(io->offset));
	json_object_object_add(o, "ret", json_object_new_int64(io->ret));
	json_object_object_add(o, "pid", json_object_new_uint64(io->pid));
	json_object_object_add(o, "tid", json_object_new_uint64(io->tid));
	json_object_object_add(o, "comm", json_object_new_string(an_names_comm(cv->names, io->pid)));
	json_object_object_add(o, "file", json_object_new_string(
		an_names_file(cv->names, io, file, sizeof(file))));
	io_flags(io, flags, sizeof(flags));
	json_object_object_add(o, "flags", json_object_new_string(flags));
	json_object_object_add(o, "bios", json_object_new_uint64(io->nbios));
	json_object_object_add(o, "merges", json_object_new_uint64(io->merges));
	json_object_object_add(o, "requeues", json_object_new_uint64(io->requeues));
	for (unsigned t = 0; t < AN_TS_COUNT; t++)
		json_object_object_add(o, ts_names[t],
				       io->ts[t] ? json_object_new_uint64(io->ts[t]) : NULL);
	for (unsigned s = 0; s < AN_ST_COUNT; s++) {
		char key[32];

		snprintf(key, sizeof(key), "%s_ns", an_stage_name(s));
		json_object_object_add(o, key, defined & 1u << s ? json_object_new_uint64(ns[s]) : NULL);
	}
	return o;
}

/*
 * A CSV row from the same object, so the two formats cannot disagree:
 * numbers as they are, strings as the one CSV writer writes fields, null empty.
 */
static void print_csv_row(struct json_object *o, FILE *out)
{
	int first = 1;

	json_object_object_foreach(o, key, v) {
		(void)key;
		if (!first)
			fputc(',', out);
		first = 0;
		if (json_object_is_type(v, json_type_string))
			csv_field(out, json_object_get_string(v));
		else if (v)
			fputs(json_object_to_json_string(v), out);
	}
	fputc('\n', out);
}

static void on_io(void *ctx, const struct an_io *io)
{
	struct sf_convert *cv = ctx;
	struct rows *rows = cv->state;
	struct json_object *o = io_object(cv, io);

	if (rows->json)
		fprintf(cv->text, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	else
		print_csv_row(o, cv->text);
	json_object_put(o);
}

static int rows_begin(struct sf_convert *cv, int json)
{
	struct rows *rows = calloc(1, sizeof(*rows));
	const struct an_io none = { .offset = -1, .fd = -1 };
	struct json_object *o;
	int first = 1;

	cv->state = rows;
	if (!rows || an_corr_new(&rows->corr, 0, on_io, cv))
		return sf_error(cv->in, "out of memory");
	rows->json = json;
	if (json)
		return SF_OK;
	/* the header: the keys of a row's object */
	o = io_object(cv, &none);
	json_object_object_foreach(o, key, v) {
		(void)v;
		fprintf(cv->text, "%s%s", first ? "" : ",", key);
		first = 0;
	}
	fputc('\n', cv->text);
	json_object_put(o);
	return SF_OK;
}

static int csv_begin(struct sf_convert *cv)
{
	return rows_begin(cv, 0);
}

static int jsonl_begin(struct sf_convert *cv)
{
	return rows_begin(cv, 1);
}

static int rows_event(struct sf_convert *cv, const struct st_event_header *ev)
{
	struct rows *rows = cv->state;

	an_corr_event(rows->corr, ev);
	return SF_OK;
}

static int rows_end(struct sf_convert *cv)
{
	struct rows *rows = cv->state;
	int rc = SF_OK;

	if (!rows)
		return SF_OK;
	if (rows->corr) {
		an_corr_finish(rows->corr);
		if (an_corr_failed(rows->corr))
			rc = sf_error(cv->in, "out of memory while correlating");
		an_corr_free(rows->corr);
	}
	free(rows);
	return rc;
}

const struct sf_convert_writer sf_convert_csv = {
	.name = "csv",
	.text = 1,
	.cat_option = "--csv",
	.begin = csv_begin,
	.event = rows_event,
	.end = rows_end,
};

const struct sf_convert_writer sf_convert_jsonl = {
	.name = "jsonl",
	.text = 1,
	.cat_option = "--json",
	.begin = jsonl_begin,
	.event = rows_event,
	.end = rows_end,
};
