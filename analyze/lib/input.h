/* SPDX-License-Identifier: MIT */
/*
 * input.h - the events of one or more .sttrace files as one time-ordered
 * stream of whole events in the built-in record layout.
 *
 * Reading each file is libsttrace's: its whole-event cursor (st_cursor_open
 * without ST_CURSOR_RAW) hands out the file's records in the built-in
 * layout, copied field by field where the file stores another one, and
 * makes whole what st-record's `block` preset stores compact (a compact
 * completion, a stamped issue and the stages it stands for). The schema
 * adaptation lives there too, not here: decoding a record through its
 * file's schema is reading the format, every program that wants events
 * wants it, and the `block` records are made whole from the built-in
 * layout. The correlator sees the same events as from a recording with a
 * probe for each stage.
 *
 * What stays here is the analysis's: several files merged by timestamp
 * (each file's cursor is already in order), types this build does not know
 * skipped unless a consumer asks for them (an_input_pass_type), names
 * learning each file's metadata, and a live file read as it grows
 * (an_input_open_live, an_input_refresh over st_reader ST_READ_LIVE).
 */
#ifndef AN_INPUT_H
#define AN_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/lib/names.h"
#include "format/lib/sttrace.h"

struct an_input;

struct an_input_info {
	uint64_t events;	/* events in the files */
	uint64_t first_ts, last_ts;
	uint64_t start_ts;	/* the earliest trace start (st_trace_start): times count from it */
	uint64_t lost_events;
	unsigned files, recovered;	/* files, of which read without a valid footer */
};

/*
 * Open every path; names learn their metadata. On failure returns -1 with
 * "FILE: what is wrong" in err.
 */
int an_input_open(struct an_input **in, char *const *paths, int npaths, struct an_names *names,
		  char *err, size_t cap);
/*
 * an_input_open() of files already open, readers[i] for paths[i] (a caller
 * that read their metadata first). The input takes the readers:
 * an_input_close() closes them, after a failure too (when *in is NULL,
 * they are closed already).
 */
int an_input_adopt(struct an_input **in, struct st_reader **readers, char *const *paths,
		   int npaths, struct an_names *names, char *err, size_t cap);
/*
 * One file being written (st_reader ST_READ_LIVE). ST_E* (<0) with the
 * message in err: ST_ETRUNCATED while it lacks its header or schema.
 */
int an_input_open_live(struct an_input **in, const char *path, struct an_names *names, char *err,
		       size_t cap);
/*
 * A live input, after an_input_start(): take in what was written since and
 * hand out events up to `until` (an_input_next() returns 0 after them, for
 * now); `done`: the writer stopped, everything is handed out. 1 while the
 * file may grow, 0 once it ended (its trailer, or done), -1 on error.
 */
int an_input_refresh(struct an_input *in, int done, uint64_t until, char *err, size_t cap);
/* Start (again) at the first event with ts >= from, stop after to; the names' fds start over. */
int an_input_start(struct an_input *in, uint64_t from, uint64_t to, char *err, size_t cap);
/*
 * From the next an_input_start(): `ahead`, each file's chunks decoded by a
 * thread of its own ahead of the reading (ST_CURSOR_AHEAD), for a pass
 * with a CPU to spare, the same events either way; `stamped`, stamped
 * issues as themselves, resolved (ST_CURSOR_STAMPED), for a pass that
 * gives the correlator alone the block events.
 */
void an_input_cursor(struct an_input *in, int ahead, int stamped);
/* 1 and *ev, 0 at the end, -1 on a read error (message in err). */
int an_input_next(struct an_input *in, const struct st_event_header **ev, char *err, size_t cap);
/*
 * The next events copied into buf (cap >= ST_CURSOR_FILL_MIN), each at an
 * 8-byte boundary, *used the bytes filled: 1, 0 at the end, -1 on a read
 * error (message in err; after events filled, at the next call). Not mixed
 * with an_input_next() in one pass.
 */
int an_input_fill(struct an_input *in, void *buf, size_t cap, size_t *used, char *err,
		  size_t errcap);
const struct an_input_info *an_input_info(const struct an_input *in);
/*
 * Events of built-in type id the stream delivers: the sum of st_whole_events()
 * over the files (exact for stored types, an upper bound for the stage
 * events the stamped issues of the `block` preset stand for, but for the
 * bios past ST_RQ_BIOS of a longer chain, counted as one).
 */
uint64_t an_input_type_events(const struct an_input *in, uint16_t id);
/*
 * Records of the types matching `name` (an_event_name_is) that this build
 * does not know are passed through as stored, for a consumer that reads them
 * through their schema (--span). Returns the files that have such a type.
 */
int an_input_pass_type(struct an_input *in, const char *name);
/* The first file's type matching name (an_event_name_is), NULL if none. */
const struct st_type *an_input_type_named(const struct an_input *in, const char *name);
/*
 * The schema type describing ev, the event an_input_next() returned last:
 * its file's, or the built-in one it was adapted to.
 */
const struct st_type *an_input_event_type(const struct an_input *in, const struct st_event_header *ev);
/*
 * Whether a schema type name is the event `wanted`: the same name, or a
 * tracepoint recorded by name ("ext4:ext4_da_write_begin") named without its
 * subsystem ("ext4_da_write_begin").
 */
int an_event_name_is(const char *type_name, const char *wanted);
/* Metadata key of the first file that has it, NULL when none does. */
const char *an_input_meta(const struct an_input *in, const char *key);
void an_input_close(struct an_input *in);

#endif /* AN_INPUT_H */
