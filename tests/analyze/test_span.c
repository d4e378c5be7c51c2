/* SPDX-License-Identifier: MIT */
/*
 * --span on hand-built sequences with known answers: two event types of a
 * file that no build knows (named SUBSYS:NAME, as st-record names the
 * tracepoints it records by name), paired by a field and by thread;
 * interleaved keys, an END without START, a START repeated before its END,
 * a START never ended, one event ending a span and starting another.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/lib/input.h"
#include "analyze/lib/span.h"
#include "tests/check.h"
#include "tests/analyze/collect.h"

/* A generic record: header, then the key field `k` and a field `dev`. */
struct rec {
	struct st_event_header h;
	uint64_t k;
	uint32_t dev, pad;
};

static struct st_field fields[8];

static struct st_type make_type(uint16_t id, const char *name)
{
	const struct st_type *b = st_builtin_type(ST_EV_block_bio_queue);
	unsigned n = 0;

	for (unsigned i = 0; i < 6; i++)
		fields[n++] = b->fields[i];
	fields[n++] = (struct st_field){ .name = "k", .offset = 24, .size = 8, .elem_size = 8,
					 .type = ST_FT_UINT, .doc = "key" };
	fields[n++] = (struct st_field){ .name = "dev", .offset = 32, .size = 4, .elem_size = 4,
					 .type = ST_FT_DEV, .doc = "device" };
	return (struct st_type){ .id = id, .size = sizeof(struct rec), .name = name,
				 .nfields = (uint16_t)n, .fields = fields };
}

#define BEGIN 0x8000
#define END   0x8001

static void put(struct st_writer *w, uint16_t type, uint64_t ts, uint64_t k, uint32_t tid)
{
	struct rec r = { .h = { .type = type, .size = sizeof(r), .ts = ts, .pid = 9, .tid = tid },
			 .k = k, .dev = 7 << 20 | 1 };

	st_writer_append(w, &r, sizeof(r));
}

/* (type, ts, k, tid) rows into a new file at path. */
static int write_file(const char *path, const uint64_t (*ev)[4], size_t n)
{
	struct st_writer *w;
	struct st_type b = make_type(BEGIN, "t:begin"), e;

	if (st_writer_open(&w, path, NULL) || st_writer_add_type(w, &b))
		return -1;
	e = make_type(END, "t:end");
	if (st_writer_add_type(w, &e))
		return -1;
	for (size_t i = 0; i < n; i++)
		put(w, (uint16_t)ev[i][0], ev[i][1], ev[i][2], (uint32_t)ev[i][3]);
	return st_writer_close(w, NULL, 0);
}

/* Runs the spans defined so far over the file; their header lines into report. */
/* The spans the tests define, as st-analyze's options would. */
static struct an_span_defs defs;

static int run(const char *path, char *report, size_t cap)
{
	char *paths[] = { (char *)path }, err[256];
	const struct st_event_header *ev;
	struct an_names *names;
	struct an_input *in;
	struct an_spans *s;
	FILE *f = fmemopen(report, cap, "w");
	int ret;

	nout = 0;
	if (an_names_new(&names) || an_input_open(&in, paths, 1, names, err, sizeof(err)) ||
	    an_spans_new(&s, &defs, in, err, sizeof(err)) || an_input_start(in, 0, UINT64_MAX, err, sizeof(err))) {
		printf("setup: %s\n", err);
		return -1;
	}
	an_spans_reset(s);
	while ((ret = an_input_next(in, &ev, err, sizeof(err))) > 0)
		an_spans_event(s, ev, collect, NULL);
	an_spans_finish(s, collect, NULL);
	an_spans_print(s, f);
	fclose(f);
	an_spans_free(s);
	an_input_close(in);
	an_names_free(names);
	return ret;
}

static int find(uint8_t span, uint64_t start, int incomplete, uint64_t ns)
{
	for (int i = 0; i < nout && i < MAX_OUT; i++)
		if (out[i].span == span && out[i].start == start && out[i].op == AN_OP_SPAN &&
		    !!(out[i].flags & AN_IO_INCOMPLETE) == incomplete && (incomplete || out[i].span_ns == ns))
			return 1;
	return 0;
}

int main(void)
{
	/* type, ts, k, tid */
	static const uint64_t ev[][4] = {
		{ END,   50,  3, 100 },	/* no START for key 3: unpaired end */
		{ BEGIN, 100, 1, 100 },
		{ BEGIN, 110, 2, 200 },
		{ END,   150, 1, 200 },	/* key 1: 50 ns, though another thread ends it */
		{ BEGIN, 160, 4, 100 },
		{ BEGIN, 170, 4, 100 },	/* key 4 again: the first is unpaired */
		{ END,   190, 2, 100 },	/* key 2: 80 ns */
		{ END,   200, 4, 200 },	/* key 4: 30 ns, from the second START */
		{ BEGIN, 300, 5, 100 },	/* never ended */
	};
	char path[] = "/tmp/an-span.XXXXXX", report[1024], err[256];
	int ret;

	close(mkstemp(path));
	if (write_file(path, ev, sizeof(ev) / sizeof(ev[0]))) {
		printf("FAIL: span_setup: cannot write %s\n", path);
		return 1;
	}
	/* by the field k; the END type found without its subsystem */
	check(!an_span_define(&defs, "byk=t:begin..end:k", err, sizeof(err)), "span_define", "%s", err);
	/* by thread (the default): each END closes its thread's open START */
	check(!an_span_define(&defs, "bytid=t:begin..t:end", err, sizeof(err)), "span_define_tid", "%s", err);
	/* an event that both ends a span and starts the next: gaps between ENDs of a thread */
	check(!an_span_define(&defs, "gap=t:end..t:end", err, sizeof(err)), "span_define_same", "%s", err);
	ret = run(path, report, sizeof(report));
	check(!ret, "span_run", "pass failed");
	check(strstr(report, "span byk = t:begin .. end by k: 3 paired, 2 unpaired starts, 1 unpaired ends\n") != NULL,
	      "span_counts_by_field", "%s", report);
	check(find(1, 100, 0, 50) && find(1, 110, 0, 80) && find(1, 170, 0, 30) && find(1, 160, 1, 0) &&
	      find(1, 300, 1, 0), "span_pairs_by_field", "%d records", nout);
	/* tid 100: E50 unpaired, B100 and B160 each repeated before an END (unpaired),
	   B170..E190 (20), B300 never ended; tid 200: B110..E150 (40), E200 unpaired */
	check(strstr(report, "span bytid = t:begin .. t:end by tid: 2 paired, 3 unpaired starts, 2 unpaired ends\n") != NULL,
	      "span_counts_by_thread", "%s", report);
	check(find(2, 110, 0, 40) && find(2, 170, 0, 20), "span_pairs_by_thread", "%d records", nout);
	/* each thread's first END closes nothing; then tid 100's ENDs at 50 and 190
	   (140 ns), tid 200's at 150 and 200 (50 ns); the last ones stay open */
	check(strstr(report, "span gap = t:end .. t:end by tid: 2 paired, 2 unpaired starts, 2 unpaired ends\n") != NULL &&
	      find(3, 50, 0, 140) && find(3, 150, 0, 50), "span_end_starts_next", "%s", report);
	check(an_span_define(&defs, "byk=a..b", err, sizeof(err)) && strstr(err, "already"),
	      "span_define_duplicate", "accepted a second span byk");
	check(an_span_define(&defs, "x=a", err, sizeof(err)) && strstr(err, "NAME=START..END"),
	      "span_define_malformed", "accepted x=a");
	unlink(path);
	return check_failures != 0;
}
