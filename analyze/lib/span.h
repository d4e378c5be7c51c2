/* SPDX-License-Identifier: MIT */
/*
 * span.h - stages the user defines: `--span NAME=START..END[:KEY]` pairs
 * each START event with the next END event of the same KEY into one span
 * record, whose latency is stage NAME (AN_ST_SPAN0 + its index).
 *
 * START and END are event type names as the file's schema has them: built-in
 * ones (sys_enter_write) or tracepoints recorded by name, with or without
 * their subsystem (ext4:ext4_da_write_begin, ext4_da_write_begin). KEY is a
 * field both events have (ino, dev, ...), or tid (the default) or pid from
 * the record header.
 *
 * Span records are struct an_io with op AN_OP_SPAN: they go to the same
 * consumers as I/Os (summary group "span", --quantile, series, heatmaps,
 * CSV, gnuplot, diff), with the START event's process, thread, time, and
 * its `dev` and `ino` fields when it has them, so the filters and --by apply.
 * Pairs are never guessed: an END without an open START is an unpaired end;
 * a START followed by another START of the same key, or still open at the
 * end of the trace, is an unpaired start (and an incomplete span record).
 */
#ifndef AN_SPAN_H
#define AN_SPAN_H

#include <stdio.h>

#include "analyze/lib/correlate.h"
#include "analyze/lib/input.h"

#define AN_SPAN_NAME_MAX 15	/* characters of a span name: letters, digits, _ */
#define AN_SPAN_EVENT_MAX 128	/* bytes of an event name, NUL included */
#define AN_SPAN_KEY_MAX 64	/* bytes of a KEY, NUL included */

struct an_span_def {
	char name[AN_SPAN_NAME_MAX + 1];
	char start[AN_SPAN_EVENT_MAX];
	char end[AN_SPAN_EVENT_MAX + AN_SPAN_KEY_MAX];	/* END[:KEY] until an_spans_new() splits it */
	char key[AN_SPAN_KEY_MAX];	/* a field name, or "tid" / "pid" of the header */
};

/*
 * The spans of a run: configuration, defined while the options are parsed,
 * before any pass, and handed to the run (an_run_open) and to whatever
 * names stages. Zeroed: no span.
 */
struct an_span_defs {
	struct an_span_def def[AN_MAX_SPANS];
	unsigned n;
};

/* Define one span from "NAME=START..END[:KEY]". 0, or -1 with a one-line message in err. */
int an_span_define(struct an_span_defs *defs, const char *spec, char *err, size_t cap);
/* Name of span i, NULL past the last. defs may be NULL: no span. */
const char *an_span_name(const struct an_span_defs *defs, unsigned i);
/* Index of the span called name, -1 if none. */
int an_span_by_name(const struct an_span_defs *defs, const char *name);
/*
 * Name of stage s (a built-in stage, whose names are static, then the spans
 * of defs), and its inverse.
 */
const char *an_stage_name(const struct an_span_defs *defs, enum an_stage s);
int an_stage_by_name(const struct an_span_defs *defs, const char *name);	/* -1 unknown */

/* Pairing state of the defined spans over one input. */
struct an_spans;

/*
 * Check every span of defs against the files (both events must be in some
 * file's schema, with the KEY field) and have the input pass them through.
 * The pairing keeps its own copy of defs. NULL in *s when no span is
 * defined. 0, or -1 with the message in err.
 */
int an_spans_new(struct an_spans **s, const struct an_span_defs *defs, struct an_input *in,
		 char *err, size_t cap);
/* Forget the open starts and counts: a new pass begins. */
void an_spans_reset(struct an_spans *s);
/* One event in time order, ev from an_input_next(); completed spans go to emit. */
void an_spans_event(struct an_spans *s, const struct st_event_header *ev, an_emit_fn emit, void *ctx);
/* End of input: starts still open are emitted as incomplete span records. */
void an_spans_finish(struct an_spans *s, an_emit_fn emit, void *ctx);
/* One line per span: its definition, paired, unpaired starts and ends (of the last pass). */
void an_spans_print(const struct an_spans *s, FILE *out);
/* 1 after an allocation failed (span records were dropped); the caller reports it. */
int an_spans_failed(const struct an_spans *s);
void an_spans_free(struct an_spans *s);

#endif /* AN_SPAN_H */
