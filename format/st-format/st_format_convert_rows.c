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

#include "analyze/lib/span.h"
#include "common/csv.h"
#include "format/st-format/st_format_convert.h"
#include "format/st-format/st_format_json.h"

/* Column names: the I/O's own, each stage timestamp's, each built-in stage's latency. */
static const char *const io_names[] = {
	"start_ns", "op", "dev", "sector", "bytes", "blk_bytes", "offset", "ret", "pid", "tid",
	"comm", "file", "flags", "bios", "merges", "requeues",
};
#define N_IO_COLUMNS	(sizeof(io_names) / sizeof(io_names[0]))

/* In enum an_ts order. */
static const char *const ts_names[] = {
	"ts_sys_enter", "ts_fs_begin", "ts_queue", "ts_getrq", "ts_insert", "ts_issue",
	"ts_complete", "ts_fs_done", "ts_sys_exit", "ts_wb_begin", "ts_wb_done",
	"ts_flush_begin", "ts_flush_done", "ts_reap", "ts_jnl_begin", "ts_jnl_done", "ts_held_queue",
};
_Static_assert(sizeof(ts_names) / sizeof(ts_names[0]) == AN_TS_COUNT,
	       "a column name for every stage timestamp of correlate.h");

/* convert has no --span: the built-in stages only. */
/* the stages before the causes: this correlator does not split I/Os into causes */
#define N_COLUMNS	(N_IO_COLUMNS + AN_TS_COUNT + AN_ST_RUNQ)

/* One cell of a row: a number, a string, or nothing (JSON null, an empty CSV cell). */
struct cell {
	enum { CELL_NONE, CELL_U64, CELL_I64, CELL_STR } kind;
	uint64_t u;
	int64_t i;
	const char *s;
};

struct row {
	struct cell cells[N_COLUMNS];
	char dev[32], file[64], flags[96];	/* what the string cells point to */
};

struct rows {
	struct an_corr *corr;
	int json;
	struct sf_json_writer w;
	const char *columns[N_COLUMNS];
	char stage_columns[AN_ST_RUNQ][32];	/* "Q2C_ns", ... */
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

static struct cell u64_cell(uint64_t u)
{
	return (struct cell){ .kind = CELL_U64, .u = u };
}

static struct cell i64_cell(int64_t i)
{
	return (struct cell){ .kind = CELL_I64, .i = i };
}

static struct cell str_cell(const char *s)
{
	return (struct cell){ .kind = CELL_STR, .s = s };
}

/*
 * One I/O as a row, in the order of the columns: the one source of both
 * formats, so the two cannot disagree. Missing stages are no cell.
 */
static void io_row(struct sf_convert *cv, const struct an_io *io, struct row *row)
{
	struct cell *c = row->cells;
	uint64_t ns[AN_ST_COUNT];
	unsigned defined = an_io_stages(io, ns);

	io_flags(io, row->flags, sizeof(row->flags));
	*c++ = u64_cell(io->start);
	*c++ = str_cell(an_op_name(io->op));
	*c++ = str_cell(an_names_dev(cv->names, io->dev, row->dev, sizeof(row->dev)));
	*c++ = u64_cell(io->sector);
	*c++ = u64_cell(io->bytes);
	*c++ = u64_cell(io->blk_bytes);
	*c++ = i64_cell(io->offset);
	*c++ = i64_cell(io->ret);
	*c++ = u64_cell(io->pid);
	*c++ = u64_cell(io->tid);
	*c++ = str_cell(an_names_comm(cv->names, io->pid));
	*c++ = str_cell(an_names_file(cv->names, io, row->file, sizeof(row->file)));
	*c++ = str_cell(row->flags);
	*c++ = u64_cell(io->nbios);
	*c++ = u64_cell(io->merges);
	*c++ = u64_cell(io->requeues);
	for (unsigned t = 0; t < AN_TS_COUNT; t++)
		*c++ = io->ts[t] ? u64_cell(io->ts[t]) : (struct cell){ CELL_NONE };
	for (unsigned s = 0; s < AN_ST_RUNQ; s++)
		*c++ = defined & 1u << s ? u64_cell(ns[s]) : (struct cell){ CELL_NONE };
}

static void print_json_row(struct rows *rows, const struct row *row)
{
	sf_jw_object(&rows->w);
	for (size_t k = 0; k < N_COLUMNS; k++) {
		const struct cell *c = &row->cells[k];

		sf_jw_key(&rows->w, rows->columns[k]);
		if (c->kind == CELL_U64)
			sf_jw_u64(&rows->w, c->u);
		else if (c->kind == CELL_I64)
			sf_jw_i64(&rows->w, c->i);
		else if (c->kind == CELL_STR)
			sf_jw_string(&rows->w, c->s);
		else
			sf_jw_null(&rows->w);
	}
	sf_jw_end(&rows->w);
	sf_jw_newline(&rows->w);
}

/* Numbers as they are, strings as the one CSV writer writes fields, nothing empty. */
static void print_csv_row(const struct row *row, FILE *out)
{
	for (size_t k = 0; k < N_COLUMNS; k++) {
		const struct cell *c = &row->cells[k];

		if (k)
			fputc(',', out);
		if (c->kind == CELL_U64)
			fprintf(out, "%" PRIu64, c->u);
		else if (c->kind == CELL_I64)
			fprintf(out, "%" PRId64, c->i);
		else if (c->kind == CELL_STR)
			csv_field(out, c->s);
	}
	fputc('\n', out);
}

static void on_io(void *ctx, const struct an_io *io)
{
	struct sf_convert *cv = ctx;
	struct rows *rows = cv->state;
	struct row row;

	io_row(cv, io, &row);
	if (rows->json)
		print_json_row(rows, &row);
	else
		print_csv_row(&row, cv->text);
}

static int rows_begin(struct sf_convert *cv, int json)
{
	struct rows *rows = calloc(1, sizeof(*rows));
	const char **col;

	cv->state = rows;
	if (!rows || an_corr_new(&rows->corr, 0, on_io, cv))
		return sf_error(cv->in, "out of memory");
	an_corr_set_names(rows->corr, cv->names);
	rows->json = json;
	sf_jw_init(&rows->w, cv->text);
	col = rows->columns;
	for (size_t k = 0; k < N_IO_COLUMNS; k++)
		*col++ = io_names[k];
	for (unsigned t = 0; t < AN_TS_COUNT; t++)
		*col++ = ts_names[t];
	for (unsigned s = 0; s < AN_ST_RUNQ; s++) {
		snprintf(rows->stage_columns[s], sizeof(rows->stage_columns[s]), "%s_ns",
			 an_stage_name(NULL, s));
		*col++ = rows->stage_columns[s];
	}
	if (json)
		return SF_OK;
	for (size_t k = 0; k < N_COLUMNS; k++)	/* the CSV header */
		fprintf(cv->text, "%s%s", k ? "," : "", rows->columns[k]);
	fputc('\n', cv->text);
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
	.cat_style = SF_CAT_CSV,
	.begin = csv_begin,
	.event = rows_event,
	.end = rows_end,
};

const struct sf_convert_writer sf_convert_jsonl = {
	.name = "jsonl",
	.text = 1,
	.cat_style = SF_CAT_JSON,
	.begin = jsonl_begin,
	.event = rows_event,
	.end = rows_end,
};
