/* SPDX-License-Identifier: MIT */
/*
 * Several recordings in one run: each is correlated on its own (two hosts
 * that reuse the same request and bio addresses and tids at the same event
 * times stay apart), their times meet on the wall clock of their metadata,
 * --by host separates them, and the same file given twice counts every I/O
 * twice with the same quantiles.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/lib/run.h"
#include "format/synth/synth.h"
#include "tests/analyze/events.h"
#include "tests/check.h"

#define STALE_NS 60000000000ull
#define OFFSET_ALPHA 1000000000000ll	/* wall = ts + offset */
#define OFFSET_BETA (OFFSET_ALPHA + 3000000)	/* beta's clock reads 3 ms less at one instant */

/*
 * One I/O of one bio: queued at q, issued at d, completed at c, with the
 * same bio and request addresses in every file; the wall clock stepped by
 * `step` ns during the recording (0: no clock.realtime_offset_end_ns).
 * reissue (0: none): the request issued again then, before the completion.
 */
static int write_host(const char *path, const char *host, long long offset, long long step,
		      uint64_t q, uint64_t d, uint64_t c, uint64_t reissue)
{
	struct st_ev_block_bio queue = { .p = { .bio = 0xa, .dev = 7 << 20, .nr_sector = 8 } };
	struct st_ev_block_rq_issue issue = { .p = { .rq = 0x10, .dev = 7 << 20, .nr_sector = 8,
						     .nr_bios = 1, .bios = { 0xa } } };
	struct st_ev_block_rq_complete complete = { .p = { .rq = 0x10, .dev = 7 << 20, .nr_sector = 8 } };
	const struct st_type *t;
	struct st_writer *w;
	char value[32];
	size_t n, i;

	if (st_writer_open(&w, path, NULL))
		return -1;
	t = st_builtin_types(&n);
	for (i = 0; i < n; i++)
		st_writer_add_type(w, &t[i]);
	st_writer_set_meta(w, "host.name", host);
	snprintf(value, sizeof(value), "%lld", offset);
	st_writer_set_meta(w, "clock.realtime_offset_ns", value);
	if (step) {
		snprintf(value, sizeof(value), "%lld", offset + step);
		st_writer_set_meta(w, "clock.realtime_offset_end_ns", value);
	}
	st_writer_set_meta(w, "record.start_ts", "900");
	st_writer_set_meta(w, "dev.7:0", "name=loop0;sector_size=512");
	head(&queue.h, ST_EV_block_bio_queue, sizeof(queue), q);
	head(&issue.h, ST_EV_block_rq_issue, sizeof(issue), d);
	head(&complete.h, ST_EV_block_rq_complete, sizeof(complete), c);
	st_writer_append(w, &queue, sizeof(queue));
	st_writer_append(w, &issue, sizeof(issue));
	if (reissue) {
		head(&issue.h, ST_EV_block_rq_issue, sizeof(issue), reissue);
		st_writer_append(w, &issue, sizeof(issue));
	}
	st_writer_append(w, &complete, sizeof(complete));
	return st_writer_close(w, NULL, 0);
}

static int open_run(struct an_run *r, char **paths, int n, enum an_by by)
{
	char err[256];

	if (an_run_open(r, paths, n, NULL, err, sizeof(err))) {
		printf("FAIL: recordings.open: %s\n", err);
		an_run_close(r);
		return -1;
	}
	r->stale_ns = STALE_NS;
	an_stats_init(&r->stats, by, 10000, NULL);
	return 0;
}

static struct an_group *group(struct an_stats *s, const char *label)
{
	uint32_t g;

	for (g = 0; g < s->ngroups; g++)
		if (!strcmp(s->groups[g].label, label))
			return &s->groups[g];
	return NULL;
}

/*
 * alpha: queued 1000, issued 1200, completed 1500 (D2C 300); beta, on its
 * own clock: 1100, 1300, 1900 (D2C 600), the same addresses, interleaved.
 */
static void check_two_hosts(char *alpha, char *beta)
{
	char *paths[2] = { alpha, beta }, err[256];
	struct an_group *ga, *gb;
	struct an_run r;
	char *header;
	size_t len;
	FILE *f;
	int ok;

	if (open_run(&r, paths, 2, AN_BY_HOST))
		return;
	ok = !an_series_init(&r.series, r.info.first_ts, r.info.last_ts, 1000000, AN_ST_D2C) &&
	     !an_run_pass(&r, AN_WANT_STATS | AN_WANT_SERIES, err, sizeof(err));
	ga = group(&r.stats, "alpha");
	gb = group(&r.stats, "beta");
	check(ok && r.nrecs == 2 && r.corr.ios == 2 && !r.corr.incomplete && ga && gb &&
	      ga->count == 1 && gb->count == 1 && ga->st[AN_ST_D2C].min == 300 &&
	      gb->st[AN_ST_D2C].min == 600, "recordings.correlated_apart",
	      "%u recordings, %" PRIu64 " I/Os, %" PRIu64 " incomplete; alpha %" PRIu64
	      " I/Os D2C %" PRIu64 ", beta %" PRIu64 " I/Os D2C %" PRIu64, r.nrecs, r.corr.ios,
	      r.corr.incomplete, ga ? ga->count : 0, ga ? ga->st[AN_ST_D2C].min : 0,
	      gb ? gb->count : 0, gb ? gb->st[AN_ST_D2C].min : 0);
	/* On the wall clock (minus alpha's offset, the smaller): alpha 1000..1500, beta 3001100..3001900. */
	check(ok && r.info.first_ts == 1000 && r.info.last_ts == 3001900 && r.info.start_ts == 900 &&
	      r.series.nbins == 4 &&
	      r.series.bins[0].ios == 1 && r.series.bins[3].ios == 1 &&
	      r.series.bins[1].ios + r.series.bins[2].ios == 0, "recordings.wall_clock_series",
	      "span %" PRIu64 "..%" PRIu64 " from %" PRIu64 ", %zu bins", r.info.first_ts,
	      r.info.last_ts, r.info.start_ts, r.series.nbins);
	header = NULL;
	if ((f = open_memstream(&header, &len))) {
		an_run_print_header(&r, f);
		fclose(f);
	}
	check(header && strstr(header, "beta: the wall clock was stepped by -5.000 ms") &&
	      !strstr(header, "alpha: the wall clock"), "recordings.clock_step_shown", "header: %s",
	      header ? header : "none");
	free(header);
	if (ok)
		an_series_free(&r.series);
	an_stats_free(&r.stats);
	an_run_close(&r);

	/* The --quantile list: beta's I/O at its wall-clock start, named by its host. */
	if (open_run(&r, paths, 2, AN_BY_DEVOP))
		return;
	r.stage = AN_ST_D2C;
	ok = !an_run_quantile(&r, 0.5, 10000, 20, AN_ONE_PASS_MAX, err, sizeof(err));
	check(ok && r.top.n == 2 && r.top.heap[0].start + r.top.heap[1].start == 1000 + 3001100 &&
	      !strcmp(r.origins[r.top.heap[r.top.heap[0].start == 3001100 ? 0 : 1].recording].host,
		      "beta"), "recordings.wall_clock_quantile_list", "%zu listed", r.top.n);
	an_top_free(&r.top);
	an_qest_free(&r.stage_samples);
	an_stats_free(&r.stats);
	an_run_close(&r);

	/* --from on the common clock: beta's I/O starts at 3001100, alpha's at 1000. */
	if (open_run(&r, paths, 2, AN_BY_HOST))
		return;
	r.filter.from = 3000000;
	ok = !an_run_pass(&r, AN_WANT_STATS, err, sizeof(err));
	check(ok && r.stats.ngroups == 1 && !strcmp(r.stats.groups[0].label, "beta") &&
	      r.stats.groups[0].count == 1, "recordings.wall_clock_from", "%u groups",
	      r.stats.ngroups);
	an_stats_free(&r.stats);
	an_run_close(&r);

	/* One recording alone keeps its event clock. */
	if (open_run(&r, paths + 1, 1, AN_BY_DEVOP))
		return;
	check(r.info.first_ts == 1100 && r.info.last_ts == 1900, "recordings.single_own_clock",
	      "span %" PRIu64 "..%" PRIu64, r.info.first_ts, r.info.last_ts);
	an_stats_free(&r.stats);
	an_run_close(&r);
}

/* One event of an I/O of one bio: its bio 0xa0 + io, its request 0x100 + io. */
struct part_event {
	uint16_t type;
	uint64_t ts;
	unsigned io;
};

/* A file of host alpha with the metadata pairs meta (key, value, ..., NULL) and the events. */
static int write_part(const char *path, const char *const *meta, const struct part_event *ev, size_t n)
{
	struct st_writer *w = builtin_writer(path, NULL);
	size_t i;

	if (!w)
		return -1;
	st_writer_set_meta(w, "host.name", "alpha");
	st_writer_set_meta(w, "clock.realtime_offset_ns", "1000000000000");
	st_writer_set_meta(w, "dev.7:0", "name=loop0;sector_size=512");
	for (i = 0; meta[i]; i += 2)
		st_writer_set_meta(w, meta[i], meta[i + 1]);
	for (i = 0; i < n; i++) {
		struct st_ev_block_rq_issue e = { .p = { .rq = 0x100 + ev[i].io, .dev = 7 << 20,
							 .nr_sector = 8, .nr_bios = 1,
							 .bios = { 0xa0 + ev[i].io } } };
		struct st_ev_block_bio q = { .p = { .bio = 0xa0 + ev[i].io, .dev = 7 << 20, .nr_sector = 8 } };

		if (ev[i].type == ST_EV_block_bio_queue) {
			head(&q.h, ev[i].type, sizeof(q), ev[i].ts);
			st_writer_append(w, &q, sizeof(q));
		} else {
			head(&e.h, ev[i].type, ev[i].type == ST_EV_block_rq_issue ? sizeof(e) :
			     sizeof(struct st_ev_block_rq_complete), ev[i].ts);
			st_writer_append(w, &e, e.h.size);
		}
	}
	return st_writer_close(w, NULL, 0);
}

/*
 * Two parts of a rotating set: the first open 900..3000, the second
 * 3000..6000 and holding a backlog the ring buffer kept, so its events
 * (1500..5000) reach back over most of the first's (1000..2900). I/O 1 is
 * cut by the boundary: queued and issued in the first, its completion
 * drained into the second. One recording, three I/Os whole, I/O 1's D2C
 * 300. Then the same two files without their part keys: the events alone
 * overlap too much, two recordings, I/O 1 incomplete.
 */
static void check_rotated_parts(void)
{
	static const struct part_event first[] = {
		{ ST_EV_block_bio_queue, 1000, 1 }, { ST_EV_block_rq_issue, 1200, 1 },
		{ ST_EV_block_bio_queue, 2000, 2 }, { ST_EV_block_rq_issue, 2100, 2 },
		{ ST_EV_block_rq_complete, 2900, 2 },
	};
	static const struct part_event second[] = {
		{ ST_EV_block_rq_complete, 1500, 1 }, { ST_EV_block_bio_queue, 3500, 3 },
		{ ST_EV_block_rq_issue, 3600, 3 }, { ST_EV_block_rq_complete, 5000, 3 },
	};
	const char *meta1[] = { "record.start_ts", "900", "record.end_ts", "3000",
				"record.next_file", "p.0002.sttrace", NULL };
	const char *meta2[] = { "record.start_ts", "3000", "record.end_ts", "6000",
				"record.file_index", "2", NULL };
	const char *bare[] = { NULL };
	char p1[] = "/tmp/an-rec-part1.XXXXXX", p2[] = "/tmp/an-rec-part2.XXXXXX", err[256];
	char *paths[2] = { p1, p2 };
	struct an_group *g;
	struct an_run r;
	int ok, parts;

	close(mkstemp(p1));
	close(mkstemp(p2));
	for (parts = 1; parts >= 0; parts--) {
		if (write_part(p1, parts ? meta1 : bare, first, 5) ||
		    write_part(p2, parts ? meta2 : bare, second, 4) ||
		    open_run(&r, paths, 2, AN_BY_DEV)) {
			printf("FAIL: recordings.rotated_parts: cannot write or open the parts\n");
			break;
		}
		ok = !an_run_pass(&r, AN_WANT_STATS, err, sizeof(err));
		g = group(&r.stats, "loop0");
		if (parts)
			check(ok && r.nrecs == 1 && r.corr.ios == 3 && !r.corr.incomplete && g &&
			      g->count == 3 && g->st[AN_ST_D2C].min == 300,
			      "recordings.rotated_parts", "%u recordings, %" PRIu64 " I/Os, %" PRIu64
			      " incomplete", r.nrecs, r.corr.ios, r.corr.incomplete);
		else
			check(ok && r.nrecs == 2 && r.corr.incomplete == 1,
			      "recordings.overlapping_files_apart", "%u recordings, %" PRIu64
			      " incomplete", r.nrecs, r.corr.incomplete);
		an_stats_free(&r.stats);
		an_run_close(&r);
	}
	unlink(p1);
	unlink(p2);
}

/* Every group of `twice` has twice the counts of `once` and the same quantiles. */
static int doubled(struct an_stats *once, struct an_stats *twice, char *why, size_t cap)
{
	static const double qs[] = { 0.5, 0.9, 0.99, 0.999 };
	uint32_t g;
	unsigned k, i;

	if (once->ngroups != twice->ngroups || !once->ngroups) {
		snprintf(why, cap, "%u groups, then %u", once->ngroups, twice->ngroups);
		return 0;
	}
	for (g = 0; g < once->ngroups; g++) {
		struct an_group *a = &once->groups[g], *b = group(twice, a->label);

		if (!b || b->count != 2 * a->count || b->bytes != 2 * a->bytes ||
		    b->incomplete != 2 * a->incomplete || b->merged != 2 * a->merged) {
			snprintf(why, cap, "%s: counts not doubled", a->label);
			return 0;
		}
		for (k = 0; k < AN_ST_COUNT; k++) {
			if (b->st[k].n != 2 * a->st[k].n) {
				snprintf(why, cap, "%s %s: n not doubled", a->label, an_stage_name(NULL, k));
				return 0;
			}
			for (i = 0; i < sizeof(qs) / sizeof(qs[0]) && a->st[k].n; i++)
				if (an_qest_quantile(&a->st[k], qs[i]) != an_qest_quantile(&b->st[k], qs[i])) {
					snprintf(why, cap, "%s %s p%g differs", a->label, an_stage_name(NULL, k),
						 qs[i] * 100);
					return 0;
				}
		}
	}
	return 1;
}

static void check_same_file_twice(char *path, size_t exact_limit, const char *name)
{
	char *paths[2] = { path, path }, err[256], why[256] = "";
	struct an_run once, twice;
	int ok;

	if (open_run(&once, paths, 1, AN_BY_DEVOP))
		return;
	if (open_run(&twice, paths, 2, AN_BY_DEVOP)) {
		an_run_close(&once);
		return;
	}
	once.stats.exact_limit = twice.stats.exact_limit = exact_limit;
	ok = !an_run_pass(&once, AN_WANT_STATS, err, sizeof(err)) &&
	     !an_run_pass(&twice, AN_WANT_STATS, err, sizeof(err)) &&
	     doubled(&once.stats, &twice.stats, why, sizeof(why));
	check(ok && twice.nrecs == 2 && twice.corr.ios == 2 * once.corr.ios &&
	      twice.corr.incomplete == 2 * once.corr.incomplete && !twice.corr.orphan_completions,
	      name, "%s; %" PRIu64 " I/Os once, %" PRIu64 " twice (%" PRIu64 " incomplete)", why,
	      once.corr.ios, twice.corr.ios, twice.corr.incomplete);
	an_stats_free(&once.stats);
	an_stats_free(&twice.stats);
	an_run_close(&once);
	an_run_close(&twice);
}

/*
 * an_stats_add() against an_io_stage(), stage by stage: each I/O alone in
 * an an_stats has one sample, an_io_stage()'s latency, in every stage it
 * defines and none elsewhere (block stages and Q2Q; a call with its causes
 * and other; a span record).
 */
static void check_stats_stages(void)
{
	struct an_io ios[3];
	unsigned i, k, bad = 0, first = 0;

	memset(ios, 0, sizeof(ios));
	for (i = 0; i < 3; i++) {
		ios[i].q2q = UINT64_MAX;
		ios[i].fd = -1;
		ios[i].offset = -1;
	}
	ios[0].op = AN_OP_READ;
	ios[0].ts[AN_TS_QUEUE] = 100;
	ios[0].ts[AN_TS_GETRQ] = 110;
	ios[0].ts[AN_TS_INSERT] = 125;
	ios[0].ts[AN_TS_ISSUE] = 140;
	ios[0].ts[AN_TS_COMPLETE] = 300;
	ios[0].q2q = 50;
	ios[1].op = AN_OP_WRITE;
	ios[1].flags = AN_IO_SYSCALL | AN_IO_WHY;
	ios[1].causes = AN_CAUSES_ALL;
	ios[1].ts[AN_TS_SYS_ENTER] = 1000;
	ios[1].ts[AN_TS_QUEUE] = 1100;
	ios[1].ts[AN_TS_COMPLETE] = 1700;
	ios[1].ts[AN_TS_SYS_EXIT] = 2000;
	for (k = 0; k < AN_CAUSE_COUNT; k++)
		ios[1].cause_ns[k] = 10 * (k + 1);
	ios[2].op = AN_OP_SPAN;
	ios[2].span = 2;
	ios[2].span_ns = 777;
	for (i = 0; i < 3; i++) {
		struct an_stats st;

		an_stats_init(&st, AN_BY_OP, 10000, NULL);
		an_stats_add(&st, &ios[i]);
		an_stats_settle(&st);
		for (k = 0; k < AN_ST_COUNT; k++) {
			const struct an_qest *e = &st.groups[0].st[k];
			uint64_t ns = 0;
			int has = an_io_stage(&ios[i], k, &ns);

			if (has ? e->n != 1 || e->max != ns : e->n != 0) {
				if (!bad++)
					first = i * 100 + k;
			}
		}
		an_stats_free(&st);
	}
	check(!bad, "recordings.stats_stages", "%u stages of the I/Os other than an_io_stage(), "
	      "the first I/O %u stage %u", bad, first / 100, first % 100);
}

/*
 * Causes of 0 are counted apart by an_stats_add() and added to the stages
 * by an_stats_merge(): 100 I/Os without a cause and 50 with all six, past
 * an exact limit of 100, merged into a run's an_stats, as the summary does.
 */
static void check_stats_zero_causes(void)
{
	struct an_stats fed, run;
	struct an_io io;
	unsigned i, k, bad = 0;

	memset(&io, 0, sizeof(io));
	io.q2q = UINT64_MAX;
	io.fd = -1;
	io.offset = -1;
	io.op = AN_OP_READ;
	io.flags = AN_IO_SYSCALL | AN_IO_WHY;
	io.causes = AN_CAUSES_ALL;
	io.ts[AN_TS_SYS_ENTER] = 1000;
	io.ts[AN_TS_SYS_EXIT] = 2000;
	an_stats_init(&fed, AN_BY_OP, 100, NULL);
	an_stats_init(&run, AN_BY_OP, 100, NULL);
	for (i = 0; i < 150; i++) {
		for (k = 0; k < AN_CAUSE_COUNT; k++)
			io.cause_ns[k] = i < 100 ? 0 : 10 * (k + 1);
		an_stats_add(&fed, &io);
	}
	if (an_stats_merge(&run, &fed) || run.ngroups != 1)
		bad = 1;
	for (k = 0; !bad && k < AN_CAUSE_COUNT; k++) {
		struct an_qest *e = &run.groups[0].st[AN_ST_RUNQ + k];

		bad = e->n != 150 || e->min != 0 || e->max != 10 * (k + 1) || e->sum != 500 * (k + 1) ||
		      an_qest_is_exact(e) || an_qest_quantile(e, 0.5) != 0 ||
		      an_qest_quantile(e, 0.9) != 10 * (k + 1);
	}
	check(!bad, "recordings.stats_zero_causes", "a cause's samples after the merge other than its "
	      "100 zeros and 50 values");
	an_stats_free(&fed);
	an_stats_free(&run);
}

/*
 * A request issued again before its completion came: the kernel recorded no
 * completion for the first I/O and counted no loss. The header says so.
 */
static void check_missing_completion(char *path)
{
	char err[256], *header = NULL;
	struct an_run r;
	size_t len;
	FILE *f;
	int ok;

	if (open_run(&r, &path, 1, AN_BY_DEVOP))
		return;
	ok = !an_run_pass(&r, AN_WANT_STATS, err, sizeof(err));
	if ((f = open_memstream(&header, &len))) {
		an_run_print_header(&r, f);
		fclose(f);
	}
	check(ok && r.corr.missing_completions == 1 && r.corr.incomplete == 1 && header &&
	      strstr(header, "warning: 1 request was issued again without a completion event"),
	      "recordings.missing_completion_shown", "%" PRIu64 " missing, %" PRIu64
	      " incomplete; header: %s", r.corr.missing_completions, r.corr.incomplete,
	      header ? header : "none");
	free(header);
	an_stats_free(&r.stats);
	an_run_close(&r);
}

int main(void)
{
	char alpha[] = "/tmp/an-rec-alpha.XXXXXX", beta[] = "/tmp/an-rec-beta.XXXXXX";
	char synth[] = "/tmp/an-rec-synth.XXXXXX", err[256];
	struct synth_opts o;
	struct synth_result res;

	close(mkstemp(alpha));
	close(mkstemp(beta));
	close(mkstemp(synth));
	if (write_host(alpha, "alpha", OFFSET_ALPHA, 0, 1000, 1200, 1500, 0) ||
	    write_host(beta, "beta", OFFSET_BETA, -5000000, 1100, 1300, 1900, 0)) {
		printf("FAIL: recordings.write: cannot write the test files\n");
		return 1;
	}
	check_two_hosts(alpha, beta);
	if (write_host(alpha, "alpha", OFFSET_ALPHA, 0, 1000, 1200, 1500, 1300)) {
		printf("FAIL: recordings.write: cannot write the test file\n");
		return 1;
	}
	check_missing_completion(alpha);
	check_rotated_parts();
	check_stats_stages();
	check_stats_zero_causes();
	synth_opts_init(&o);
	o.ios = 20000;
	o.seed = 11;
	if (synth_write(&o, synth, &res, err, sizeof(err))) {
		printf("FAIL: recordings.synth: %s\n", err);
		return 1;
	}
	check_same_file_twice(synth, 1u << 30, "recordings.same_file_twice.exact");
	check_same_file_twice(synth, 1000, "recordings.same_file_twice.sketch");
	unlink(alpha);
	unlink(beta);
	unlink(synth);
	return check_failures != 0;
}
