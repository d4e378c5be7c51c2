/* SPDX-License-Identifier: MIT */
/*
 * report.c - what a replay achieved against what was recorded: counts,
 * rates, latency percentiles per op, schedule slip. Text on stdout, JSON
 * with --report.
 *
 * Rates are I/Os (bytes) over the span from the first start to the last
 * completion, in ns, recorded and replayed alike, so an original-timing
 * replay that keeps its schedule shows the recorded rate, and one that
 * submits every I/O at once (afap) the rate at which they completed. A
 * span of 0 ns (one recorded I/O of unknown latency) has no rate: "-" in
 * text, null in JSON, never a rate of 0 for I/Os that were done. Latency is submission to completion as
 * io_uring sees it, against issue to completion (block level) or syscall
 * entry to exit (file level) as recorded.
 */
#include <json-c/json.h>
#include <string.h>
#include <unistd.h>

#include "format/lib/sttrace.h"
#include "replay/replay.h"

static const char *const level_names[] = { "auto", "block", "file" };
static const char *const timing_names[] = { "original", "afap", "scale" };
static const double percentiles[] = { 0.50, 0.90, 0.99 };
static const char *const percentile_names[] = { "p50", "p90", "p99" };
#define NPCT (sizeof(percentiles) / sizeof(percentiles[0]))

static double us(uint64_t ns)
{
	return ns / 1e3;
}

static double rate(uint64_t n, uint64_t span_ns)
{
	return span_ns ? n / (span_ns / 1e9) : 0;
}

/* A rate as a column of the text report: "-" when there is none (see above). */
static void rate_cell(FILE *out, uint64_t n, uint64_t span_ns, double unit, int decimals)
{
	if (n && !span_ns)
		fprintf(out, " %14s", "-");
	else
		fprintf(out, " %14.*f", decimals, rate(n, span_ns) / unit);
}

static json_object *rate_json(uint64_t n, uint64_t span_ns, double unit)
{
	return n && !span_ns ? NULL : json_object_new_double(rate(n, span_ns) / unit);
}

static int timed(const struct rp_opts *o)
{
	return o->timing != RP_TIMING_AFAP;
}

void rp_report_text(const struct rp_plan *p, const struct rp_opts *o, struct rp_result *r, FILE *out)
{
	uint64_t planned = (uint64_t)p->nios * o->loops;
	int op;

	fprintf(out, "st-replay %s: %s level, timing %s", o->file, level_names[p->level],
		timing_names[o->timing]);
	if (o->timing == RP_TIMING_SCALE)
		fprintf(out, " x%g", o->scale);
	fprintf(out, ", qd %u, %u thread%s, %u loop%s\n", o->qd, r->threads, r->threads == 1 ? "" : "s",
		o->loops, o->loops == 1 ? "" : "s");
	if (p->input_note[0])
		fprintf(out, "input: %s\n", p->input_note);
	if (r->interrupted)
		fprintf(out, "interrupted: partial report of the I/Os issued before the signal\n");
	fprintf(out, "I/Os: %llu planned, %llu issued, %llu completed, %llu failed",
		(unsigned long long)planned, (unsigned long long)r->issued,
		(unsigned long long)r->completed, (unsigned long long)r->failed);
	if (r->first_errno)
		fprintf(out, " (first: %s)", strerror(r->first_errno));
	fprintf(out, "; recorded I/Os not replayable: %llu\n", (unsigned long long)p->skipped);
	fprintf(out, "%-10s %14s %14s\n", "", "recorded", "replayed");
	fprintf(out, "%-10s %14.9f %14.9f\n", "span s", p->rec_elapsed / 1e9, r->elapsed_ns / 1e9);
	fprintf(out, "%-10s", "IOPS");
	rate_cell(out, p->nios, p->rec_elapsed, 1, 1);
	rate_cell(out, r->issued, r->elapsed_ns, 1, 1);
	fprintf(out, "\n%-10s", "MB/s");
	rate_cell(out, p->rec_bytes, p->rec_elapsed, 1e6, 2);
	rate_cell(out, r->bytes, r->elapsed_ns, 1e6, 2);
	fprintf(out, "\n");
	if ((p->nios && !p->rec_elapsed) || (r->issued && !r->elapsed_ns))
		fprintf(out, "rates: - where the span is 0 ns (one I/O of unknown latency): no rate\n");
	fprintf(out, "latency us  %10s", "count");
	for (size_t i = 0; i < NPCT; i++)
		fprintf(out, " %9s rec %9s", percentile_names[i], percentile_names[i]);
	fprintf(out, "\n");
	for (op = 0; op < AN_OP_COUNT; op++) {
		struct an_qest *a = &r->lat[op], *b = &r->rec_lat[op];

		if (!a->n && !b->n)
			continue;
		fprintf(out, "%-11s %10llu", an_op_name(op), (unsigned long long)a->n);
		for (size_t i = 0; i < NPCT; i++)
			fprintf(out, " %13.1f %9.1f", b->n ? us(an_qest_quantile(b, percentiles[i])) : 0.0,
				a->n ? us(an_qest_quantile(a, percentiles[i])) : 0.0);
		fprintf(out, "\n");
	}
	if (timed(o) && r->slip.n)
		fprintf(out, "schedule slip us: p50 %.1f, p99 %.1f, max %.1f; late by more than 1 ms: %llu of %llu"
			" (%llu due while --qd I/Os were in flight)\n",
			us(an_qest_quantile(&r->slip, 0.50)), us(an_qest_quantile(&r->slip, 0.99)),
			us(r->slip.max), (unsigned long long)r->late_ios, (unsigned long long)r->slip.n,
			(unsigned long long)r->late_qd_full);
}

static json_object *rates(uint64_t span_ns, uint64_t ios, uint64_t bytes)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "span_s", json_object_new_double(span_ns / 1e9));
	json_object_object_add(j, "ios", json_object_new_uint64(ios));
	json_object_object_add(j, "iops", rate_json(ios, span_ns, 1));
	json_object_object_add(j, "mb_s", rate_json(bytes, span_ns, 1e6));
	return j;
}

static json_object *quantiles(struct an_qest *q)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "count", json_object_new_uint64(q->n));
	if (!q->n)
		return j;
	for (size_t i = 0; i < NPCT; i++)
		json_object_object_add(j, percentile_names[i],
				       json_object_new_double(us(an_qest_quantile(q, percentiles[i]))));
	json_object_object_add(j, "max", json_object_new_double(us(q->max)));
	return j;
}

int rp_report_json(const struct rp_plan *p, const struct rp_opts *o, struct rp_result *r,
		   const char *path, char *err, size_t cap)
{
	json_object *j = json_object_new_object(), *lat = json_object_new_object();
	char msg[256];
	int op, fd, ret = 0;

	json_object_object_add(j, "file", json_object_new_string(o->file));
	json_object_object_add(j, "level", json_object_new_string(level_names[p->level]));
	json_object_object_add(j, "timing", json_object_new_string(timing_names[o->timing]));
	json_object_object_add(j, "scale", json_object_new_double(o->scale));
	json_object_object_add(j, "qd", json_object_new_uint64(o->qd));
	json_object_object_add(j, "threads", json_object_new_uint64(r->threads));
	json_object_object_add(j, "loops", json_object_new_uint64(o->loops));
	json_object_object_add(j, "interrupted", json_object_new_boolean(r->interrupted));
	json_object_object_add(j, "input_damaged", json_object_new_boolean(p->input_note[0] != 0));
	json_object_object_add(j, "planned", json_object_new_uint64((uint64_t)p->nios * o->loops));
	json_object_object_add(j, "issued", json_object_new_uint64(r->issued));
	json_object_object_add(j, "completed", json_object_new_uint64(r->completed));
	json_object_object_add(j, "failed", json_object_new_uint64(r->failed));
	json_object_object_add(j, "first_error",
			       r->first_errno ? json_object_new_string(strerror(r->first_errno)) : NULL);
	json_object_object_add(j, "not_replayable", json_object_new_uint64(p->skipped));
	json_object_object_add(j, "recorded", rates(p->rec_elapsed, p->nios, p->rec_bytes));
	json_object_object_add(j, "replayed", rates(r->elapsed_ns, r->issued, r->bytes));
	json_object_object_add(j, "elapsed_s", json_object_new_double(r->elapsed_ns / 1e9));
	for (op = 0; op < AN_OP_COUNT; op++) {
		json_object *one;

		if (!r->lat[op].n && !r->rec_lat[op].n)
			continue;
		one = json_object_new_object();
		json_object_object_add(one, "recorded", quantiles(&r->rec_lat[op]));
		json_object_object_add(one, "replayed", quantiles(&r->lat[op]));
		json_object_object_add(lat, an_op_name(op), one);
	}
	json_object_object_add(j, "latency_us", lat);
	if (timed(o)) {
		json_object *slip = quantiles(&r->slip);

		json_object_object_add(slip, "late_1ms", json_object_new_uint64(r->late_ios));
		json_object_object_add(slip, "late_1ms_qd_full", json_object_new_uint64(r->late_qd_full));
		json_object_object_add(j, "slip_us", slip);
	}
	fd = st_output_open(path, o->force ? ST_OUTPUT_FORCE : 0, msg, sizeof(msg));
	if (fd < 0) {
		snprintf(err, cap, "--report %s: %s", path, msg);
		ret = -1;
	} else {
		if (json_object_to_fd(fd, j, JSON_C_TO_STRING_PRETTY)) {
			snprintf(err, cap, "--report %s: %s", path, json_util_get_last_err());
			ret = -1;
		}
		close(fd);
	}
	json_object_put(j);
	return ret;
}
