/* SPDX-License-Identifier: MIT */
/*
 * st_format_convert.h - the output writers of `st-format convert`.
 *
 * `convert` reads a trace once, in timestamp order, through the analyzer's
 * input (every event in this build's record layout, whatever recorder wrote
 * it; memory bounded by the chunks that overlap in time), and hands each
 * event to one writer:
 *
 *   begin(cv)       once, before the first event: open outputs, headers
 *   event(cv, ev)   every event, in timestamp order
 *   end(cv)         once, after the last: trailers, close; also after an error
 *                   (cv->failed), when a writer of files of its own removes them
 *
 * Each returns SF_OK or SF_BAD after printing one line (sf_error) naming
 * what failed. A writer keeps its own state behind cv->state. cv->names
 * has learned from every event before the writer sees it.
 *
 * A writer whose events are exactly the rows of `st-format cat` in a
 * style (cat_style) leaves them to cat, which prints every field from the
 * file's own schema; its begin/event/end then serve --records only.
 */
#ifndef STTRACE_ST_FORMAT_CONVERT_H
#define STTRACE_ST_FORMAT_CONVERT_H

#include "analyze/lib/names.h"
#include "format/st-format/st_format.h"

struct sf_convert {
	const char *in;		/* FILE */
	const char *out;	/* -o OUT, NULL: stdout (text formats) */
	FILE *text;		/* text formats: OUT opened for writing, or stdout */
	struct st_reader *r;	/* the trace, for its metadata and schema */
	struct an_names *names;	/* command names, devices, files of the trace */
	uint64_t first_ts;	/* timestamp of the trace's first event */
	int records;		/* --records: one row per correlated I/O */
	int force;		/* --force: outputs may be symlinks or not regular files */
	int failed;		/* at end(): begin or an event failed */
	void *state;		/* the writer's own */
};

struct sf_convert_writer {
	const char *name;	/* --to NAME */
	int text;		/* 1: writes cv->text; 0: writes files named after -o */
	enum sf_cat_style cat_style;	/* CSV, JSON: events as cat prints them; TEXT: no */
	int (*begin)(struct sf_convert *cv);
	int (*event)(struct sf_convert *cv, const struct st_event_header *ev);
	int (*end)(struct sf_convert *cv);
};

/*
 * An output file opened the safe way (st_output_open: a new file 0600, no
 * symlink or file of another user unless --force allows the first); NULL
 * after printing the error line.
 */
FILE *sf_convert_output(const struct sf_convert *cv, const char *path);

extern const struct sf_convert_writer sf_convert_blktrace, sf_convert_blkparse,
	sf_convert_fio_iolog, sf_convert_csv, sf_convert_jsonl, sf_convert_perfetto;

#endif /* STTRACE_ST_FORMAT_CONVERT_H */
