/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/run.h"

int an_run_open(struct an_run *r, char *const *files, int nfiles, char *err, size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->filter.pid = -1;
	if (an_names_new(&r->names)) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	if (an_input_open(&r->in, files, nfiles, r->names, err, cap))
		return -1;
	return an_spans_new(&r->spans, r->in, err, cap);
}

void an_run_close(struct an_run *r)
{
	an_spans_free(r->spans);
	an_input_close(r->in);
	an_names_free(r->names);
}

uint64_t an_run_duration(const struct an_run *r)
{
	const struct an_input_info *i = an_input_info(r->in);
	uint64_t from = r->filter.from > i->first_ts ? r->filter.from : i->first_ts;
	uint64_t to = r->filter.to && r->filter.to < i->last_ts ? r->filter.to : i->last_ts;

	return to > from ? to - from : 1;
}

static void on_io(void *ctx, const struct an_io *io)
{
	struct an_run *r = ctx;
	uint64_t ns;

	if (!an_filter_match(&r->filter, r->names, io))
		return;
	if (r->want & AN_WANT_STATS)
		an_stats_add(&r->stats, io);
	if ((r->want & AN_WANT_SERIES) && an_io_in_view(io, r->series.stage))
		an_series_add(&r->series, io);
	if (r->want & AN_WANT_TOP)
		an_top_add(&r->top, io);
	if ((r->want & AN_WANT_STAGE) && !(io->flags & AN_IO_INCOMPLETE) &&
	    an_io_stage(io, r->stage, &ns)) {
		an_qest_add(&r->stage_samples, ns);
		if (r->want & AN_WANT_SLOWEST)
			an_slowest_add(&r->slowest, io, ns);
	}
}

int an_run_pass(struct an_run *r, unsigned want, char *err, size_t cap)
{
	const struct st_event_header *ev;
	struct an_corr *c;
	uint64_t from = 0, to = UINT64_MAX;
	int ret;

	/* I/Os starting in [from, to) need the events around them. */
	if (r->filter.from > r->stale_ns)
		from = r->filter.from - r->stale_ns;
	if (r->filter.to && r->filter.to < UINT64_MAX - r->stale_ns)
		to = r->filter.to + r->stale_ns;
	r->want = want;
	if (an_corr_new(&c, r->stale_ns, on_io, r)) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	if (an_input_start(r->in, from, to, err, cap)) {
		an_corr_free(c);
		return -1;
	}
	an_spans_reset(r->spans);
	while ((ret = an_input_next(r->in, &ev, err, cap)) > 0) {
		if (an_names_wants(ev->type))
			an_names_event(r->names, ev);
		an_corr_event(c, ev);
		if (r->spans)
			an_spans_event(r->spans, ev, on_io, r);
	}
	an_corr_finish(c);
	an_spans_finish(r->spans, on_io, r);
	r->corr = *an_corr_stats(c);
	if (!ret && (an_corr_failed(c) || an_spans_failed(r->spans))) {
		snprintf(err, cap, "out of memory while correlating");
		ret = -1;
	}
	an_corr_free(c);
	return ret;
}

uint64_t an_run_io_bound(const struct an_run *r)
{
	size_t i, ntypes;
	const struct st_type *types = st_builtin_types(&ntypes);
	uint64_t n = 0;

	for (i = 0; i < ntypes; i++)
		if (an_corr_begins_io(types[i].id))
			n += an_input_type_events(r->in, types[i].id);
	return n;
}

size_t an_quantile_heap_size(uint64_t n_max, double q, size_t max)
{
	/*
	 * With n <= n_max samples, the quantile is the sample of rank
	 * ceil(q * n): at most n - q * n + 1 samples rank at or above it.
	 */
	double k = ceil((1 - q) * (double)n_max) + 1;

	return k <= (double)max ? (size_t)k : 0;
}

int an_run_quantile(struct an_run *r, double q, size_t exact_limit, size_t top,
		    size_t one_pass_max, char *err, size_t cap)
{
	size_t k = an_quantile_heap_size(an_run_io_bound(r), q, one_pass_max);
	unsigned want = AN_WANT_STAGE;
	int ret = -1;

	memset(&r->top, 0, sizeof(r->top));
	memset(&r->slowest, 0, sizeof(r->slowest));
	an_qest_init(&r->stage_samples, exact_limit);
	/* Without memory for the heap, two passes give the same answer. */
	if (k && !an_slowest_init(&r->slowest, k))
		want |= AN_WANT_SLOWEST;
	r->quantile_passes = 1;
	if (an_run_pass(r, want, err, cap))
		goto out;
	if (an_top_init(&r->top, r->stage, an_qest_quantile(&r->stage_samples, q), top)) {
		snprintf(err, cap, "out of memory");
		goto out;
	}
	if (!(want & AN_WANT_SLOWEST) || an_slowest_replay(&r->slowest, &r->top)) {
		r->quantile_passes = 2;
		if (an_run_pass(r, AN_WANT_TOP, err, cap))
			goto out;
	}
	ret = 0;
out:
	an_slowest_free(&r->slowest);
	return ret;
}

void an_run_print_header(const struct an_run *r, FILE *out)
{
	const struct an_input_info *i = an_input_info(r->in);
	const struct an_corr_stats *c = &r->corr;

	fprintf(out, "%u file%s%s, %" PRIu64 " events, %.6f s, lost events: %" PRIu64 "%s\n",
		i->files, i->files == 1 ? "" : "s", i->recovered ? " (recovered: footer missing)" : "",
		i->events, an_run_duration(r) / 1e9, i->lost_events,
		i->lost_events ? " (I/Os may be missing or incomplete)" : "");
	fprintf(out, "I/Os in the trace: %" PRIu64 " correlated, %" PRIu64 " incomplete (open at the end or "
		"stale: %" PRIu64 "), begun before the trace: %" PRIu64 " exits, %" PRIu64
		" requests, %" PRIu64 " completions; out-of-order events %" PRIu64 "\n",
		c->ios - c->incomplete, c->incomplete, c->stale, c->orphan_exits, c->orphan_requests,
		c->orphan_completions, c->out_of_order);
	an_spans_print(r->spans, out);
}
