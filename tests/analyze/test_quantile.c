/* SPDX-License-Identifier: MIT */
/*
 * --quantile in one pass against two: on synthetic traces, for several
 * quantiles, stages and both quantile estimators (exact samples, sketch),
 * the one-pass list (bounded heap, replayed) must print byte for byte what
 * the two-pass list prints; a heap bound too small, and ties at the
 * threshold, must fall back to the second pass.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/lib/run.h"
#include "format/synth/synth.h"
#include "tests/check.h"

#define STALE_NS 60000000000ull
#define EXACT_ALL ((size_t)1 << 30)

/* The whole --quantile answer as text: threshold, counts, the list. */
struct answer {
	char *text;
	size_t len;
	int passes;
};

static int answer(const char *path, enum an_stage stage, double q, size_t exact_limit, size_t top,
		  size_t one_pass_max, struct answer *a)
{
	char *files[1] = { (char *)path }, err[512];
	struct an_run r;
	FILE *f;
	int ret;

	memset(a, 0, sizeof(*a));
	if (an_run_open(&r, files, 1, NULL, err, sizeof(err))) {
		an_run_close(&r);
		printf("%s\n", err);
		return -1;
	}
	r.stale_ns = STALE_NS;
	r.stage = stage;
	ret = an_run_quantile(&r, q, exact_limit, top, one_pass_max, err, sizeof(err));
	if (!ret && (f = open_memstream(&a->text, &a->len))) {
		fprintf(f, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %zu %d\n", r.top.threshold,
			r.stage_samples.n, r.top.above, r.top.n, an_qest_is_exact(&r.stage_samples));
		an_top_print(&r.top, NULL, r.origins, 0, NULL, f, 1, 0);
		fclose(f);
	}
	a->passes = r.quantile_passes;
	an_top_free(&r.top);
	an_qest_free(&r.stage_samples);
	an_run_close(&r);
	return ret || !a->text ? -1 : 0;
}

/* One-pass and two-pass answers agree; *passes: passes the one-pass run made. */
static int same_answer(const char *path, enum an_stage stage, double q, size_t exact_limit,
		       size_t one_pass_max, int *passes)
{
	struct answer one, two;
	int same;

	same = !answer(path, stage, q, exact_limit, 20, 0, &two) &&
	       !answer(path, stage, q, exact_limit, 20, one_pass_max, &one) &&
	       two.passes == 2 && one.len == two.len && !memcmp(one.text, two.text, one.len);
	*passes = one.passes;
	free(one.text);
	free(two.text);
	return same;
}

static void check_grid(const char *path)
{
	static const double qs[] = { 50, 99, 99.95, 100 };
	static const enum an_stage stages[] = { AN_ST_TOTAL, AN_ST_D2C, AN_ST_Q2G, AN_ST_Q2Q };
	static const size_t limits[] = { 1000, EXACT_ALL };	/* sketch, exact */
	unsigned i, k, l;

	for (i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
		for (k = 0; k < sizeof(stages) / sizeof(stages[0]); k++)
			for (l = 0; l < 2; l++) {
				int passes = 0, same = same_answer(path, stages[k], qs[i] / 100,
								   limits[l], AN_ONE_PASS_MAX,
								   &passes);
				char name[96];

				snprintf(name, sizeof(name), "quantile.one_pass_same.p%g.%s.%s", qs[i],
					 an_stage_name(NULL, stages[k]), l ? "exact" : "sketch");
				/* Continuous total latencies have no ties: one pass must do. */
				check(same && (stages[k] != AN_ST_TOTAL || passes == 1), name,
				      "lists differ (or total took %d passes)", passes);
			}
}

static void check_bound(const char *path)
{
	char *files[1] = { (char *)path }, err[512];
	struct an_run r;
	uint64_t bound = 0, ios = 1;

	if (!an_run_open(&r, files, 1, NULL, err, sizeof(err))) {
		r.stale_ns = STALE_NS;
		bound = an_run_io_bound(&r);
		if (!an_run_pass(&r, 0, err, sizeof(err)))
			ios = r.corr.ios;
	}
	an_run_close(&r);
	check(bound >= ios && ios > 1, "quantile.io_bound", "bound %" PRIu64 ", %" PRIu64 " I/Os",
	      bound, ios);
	check(an_quantile_heap_size(200000, 0.9995, AN_ONE_PASS_MAX) == 101 &&
	      an_quantile_heap_size(10, 0.5, AN_ONE_PASS_MAX) == 6 &&
	      an_quantile_heap_size(1000000, 0.5, AN_ONE_PASS_MAX) == 0,
	      "quantile.heap_size", "ceil((1 - q) * n_max) + 1, 0 above the limit");
}

static void check_fallback(const char *path)
{
	int passes = 0, same = same_answer(path, AN_ST_TOTAL, 0.99, EXACT_ALL, 10, &passes);

	check(same && passes == 2, "quantile.fallback_when_heap_too_large",
	      "same %d, %d passes", same, passes);
}

/* Three I/Os of equal latency, a heap of two: the third may be at the threshold. */
static void check_ties(void)
{
	struct an_slowest s;
	struct an_top t;
	struct an_io io;
	int ret_tie, ret_below;

	memset(&io, 0, sizeof(io));
	an_slowest_init(&s, 2);
	an_slowest_add(&s, &io, 5);
	an_slowest_add(&s, &io, 5);
	an_slowest_add(&s, &io, 5);
	an_top_init(&t, AN_ST_TOTAL, 5, 20);
	ret_tie = an_slowest_replay(&s, &t);
	an_top_free(&t);
	an_slowest_free(&s);
	check(ret_tie == -1, "quantile.tie_at_threshold_needs_second_pass", "replay %d", ret_tie);

	/* 1, 9, 7 in a heap of two: only 1 is dropped, below the threshold 7. */
	io.ts[AN_TS_SYS_ENTER] = 100;
	an_slowest_init(&s, 2);
	io.ts[AN_TS_SYS_EXIT] = 101;
	an_slowest_add(&s, &io, 1);
	io.ts[AN_TS_SYS_EXIT] = 109;
	an_slowest_add(&s, &io, 9);
	io.ts[AN_TS_SYS_EXIT] = 107;
	an_slowest_add(&s, &io, 7);
	an_top_init(&t, AN_ST_TOTAL, 7, 20);
	ret_below = an_slowest_replay(&s, &t);
	check(ret_below == 0 && t.above == 2 && t.n == 2, "quantile.drop_below_threshold_one_pass",
	      "replay %d, %" PRIu64 " above, %zu kept", ret_below, t.above, t.n);
	an_top_free(&t);
	an_slowest_free(&s);
}

/*
 * Ties inside the list: a second pass offers 6 (sector 2), 6 (3), 7 (4) to a
 * top-2 list, which keeps the later 6 (sector 3) when 7 evicts the root;
 * the replay must offer them in that order, not in heap order.
 */
static void check_tie_order(void)
{
	static const uint64_t ns[] = { 5, 6, 6, 7 };
	struct an_slowest s;
	struct an_top t;
	struct an_io io;
	uint64_t sectors = 0;
	unsigned i;

	memset(&io, 0, sizeof(io));
	io.ts[AN_TS_SYS_ENTER] = 100;
	an_slowest_init(&s, 3);
	for (i = 0; i < 4; i++) {
		io.ts[AN_TS_SYS_EXIT] = 100 + ns[i];
		io.sector = i + 1;
		an_slowest_add(&s, &io, ns[i]);
	}
	an_top_init(&t, AN_ST_TOTAL, 6, 2);
	an_slowest_replay(&s, &t);
	for (i = 0; i < t.n; i++)
		sectors |= 1u << t.heap[i].sector;
	check(t.n == 2 && sectors == ((1u << 3) | (1u << 4)), "quantile.ties_replayed_in_arrival_order",
	      "kept sectors mask %#" PRIx64, sectors);
	an_top_free(&t);
	an_slowest_free(&s);
}

int main(void)
{
	char path[] = "/tmp/an-quantile.XXXXXX", err[256];
	struct synth_opts o;
	struct synth_result res;

	close(mkstemp(path));
	synth_opts_init(&o);
	o.ios = 10000;
	o.seed = 7;
	if (synth_write(&o, path, &res, err, sizeof(err))) {
		printf("FAIL: quantile.synth: %s\n", err);
		unlink(path);
		return 1;
	}
	check_bound(path);
	check_grid(path);
	check_fallback(path);
	check_ties();
	check_tie_order();
	unlink(path);
	return check_failures != 0;
}
