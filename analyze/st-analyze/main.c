/* SPDX-License-Identifier: MIT */
/*
 * st-analyze - correlate the events of .sttrace files into I/Os and report
 * their stage latencies: summary, slowest I/Os, time series, heatmaps,
 * plots, and (st-analyze diff) a comparison of two traces.
 *
 * Exit status: common/usage.h (0 ok, 1 failed, 2 usage, 3 diff: a regression).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/st-analyze/analyze.h"
#include "analyze/lib/missing.h"
#include "analyze/lib/run.h"
#include "analyze/lib/summary.h"
#include "analyze/lib/why.h"
#include "common/input.h"
#include "common/usage.h"

#define PROG "st-analyze"

static const char usage_text[] =
"usage: st-analyze [options] FILE...     (FILE - is standard input)\n"
"       st-analyze diff BASE NEW [options]   (st-analyze diff --help)\n"
"       st-analyze merge SUMMARY... [options] (st-analyze merge --help)\n"
"\n"
"Correlates the events of one or more .sttrace files (see Several files below)\n"
"into one record per I/O and reports stage latencies. Needs no root or BPF.\n"
"\n"
"Reports (default: summary per device x op):\n"
"  --quantile Q       list the I/Os at or above the Q-th percentile (0 < Q <= 100) of\n"
"                     --stage, slowest first, with full breakdown, process, file\n"
"  --stage S          stage or span for --quantile, --interval and heatmaps\n"
"                     (default total)\n"
"  --span NAME=START..END[:KEY]\n"
"                     a stage of your own: each START event paired with the next\n"
"                     END event of the same KEY (a field of both, or tid (the\n"
"                     default) or pid); events by schema name, built-in or\n"
"                     recorded by name (ext4:ext4_da_write_begin or\n"
"                     ext4_da_write_begin). Reported as stage NAME of group\n"
"                     'span' everywhere; unpaired starts/ends are counted.\n"
"                     Up to 8, NAME up to 15 letters, digits, _\n"
"  --why              per --by group, for the I/Os at or above its --quantile\n"
"                     (default 99) of --stage: the share of their time by cause\n"
"                     and by stage, the tasks that held the CPU while they\n"
"                     waited for one, the lock kinds, the throttling cgroups\n"
"                     and their limits (a recording with st-record's why events)\n"
"  --top N            at most N I/Os in the --quantile list, N groups in --top-by\n"
"                     (default 20)\n"
"  --by KEY           group the summary by devop (default), op, dev, comm, pid, file,\n"
"                     host (host.name; the file name when two files of one host\n"
"                     overlap in time), cgroup (v2 path of the task that made\n"
"                     the call; - for I/O no call began, or a file before 1.4),\n"
"                     cache (reads: hit, miss, direct; none for other ops; a\n"
"                     recording with the why events)\n"
"  --interval T       time series per T: IOPS, MB/s, p50/p99 of --stage, device\n"
"                     queue depth, read %, merged %; bios, merged, read and\n"
"                     write merged bios\n"
"  --heatmap KIND     lat: time x log2 latency counts; pos: time x sector counts\n"
"                     (interval: --interval, else 1/100 of the trace)\n"
"  --heatmap-rows N   heatmaps in N intervals instead\n"
"  --sizes            I/O sizes per --by group: log2 histogram (biolatency's layout)\n"
"                     and the count of each size (bytes of the request)\n"
"  --seek             seek distance per device and op, and per process, in issue\n"
"                     order, btt's way (sectors from the previous request's end;\n"
"                     backward from its start; 0 when it touches or overlaps):\n"
"                     sequential share (distance 0), log2 histograms\n"
"  --hist             log2 us histogram of --stage per --by group, as biolatency\n"
"                     prints it (-D per disk: --by dev; per op: --by devop)\n"
"  --depth            time-weighted distribution of requests in flight (issue to\n"
"                     completion) per device, its mean (iostat's aqu-sz) and max\n"
"  --top-by KEY[:RANK]\n"
"                     the --top heaviest comm, pid, file or cgroup, ranked by ios\n"
"                     (default), bytes or tail (p99 of --stage), each with its\n"
"                     stage breakdown (biotop, fileslower)\n"
"                     (these replace the summary; several may be given)\n"
"  --html FILE        every report in one self-contained page to attach to a bug:\n"
"                     trace identity, summary, inline SVG plots, sizes, seeks,\n"
"                     histograms, depth, top comm/pid/file/cgroup, the --quantile (99)\n"
"                     list, sortable; loads nothing, works without scripts;\n"
"                     made 0600, never through a symlink\n"
"  --csv              CSV instead of text for every table: every column, always, in\n"
"                     a fixed order (st-analyze(1)); not measured is empty\n"
"  --wide             text tables in full: every stage measured, also at 0, the\n"
"                     list's tid (default: what has data, within 200 columns)\n"
"  --columns LIST     text tables show these too: stages, spans, and the list's\n"
"                     cache, op, dev, sector, bytes, pid, tid, comm, host, file\n"
"  --gnuplot DIR      write .dat + .gp per plot (latency CDF per stage, time series,\n"
"                     both heatmaps; sizes, seeks, hist, depth when asked) into\n"
"                     DIR and render PNG and SVG with gnuplot;\n"
"                     DIR is made 0700, never followed when it is a symlink\n"
"  --force            follow a symlink given as --gnuplot DIR, --save-summary OUT\n"
"                     or --html FILE\n"
"  --save-summary OUT also write the summary's counts and quantile sketches to OUT,\n"
"                     a small file st-analyze merge and diff read (with --by);\n"
"                     made 0600, never through a symlink\n"
"Live (analyze/README.md, Live):\n"
"  --follow           read FILE while st-record writes it: a growing file (each\n"
"                     chunk as it lands; waits for it to appear), - (st-record\n"
"                     -o - | st-analyze --follow -), or a rotating set, quoted\n"
"                     ('run.*.sttrace'). Every --interval (default 1s) a view\n"
"                     of the last interval and the run so far per --by group:\n"
"                     IOPS and MB/s over the trace's time (the run so far:\n"
"                     over the time the group was busy), p50/p99/p99.9 of\n"
"                     total and of the stage with the longest p99, errors,\n"
"                     lost events, ring buffer use; the processes and files\n"
"                     with the most time in the tail. Redrawn in place on a\n"
"                     terminal, else one block per interval. At the end of the\n"
"                     recording (or SIGINT) the report of the files it read,\n"
"                     the same as without --follow\n"
"  --metrics ADDR:PORT\n"
"                     with --follow, serve Prometheus metrics at\n"
"                     http://ADDR:PORT/metrics (PORT alone: 127.0.0.1);\n"
"                     after the recording's end, its final values until\n"
"                     SIGINT\n"
"Filters (an I/O counts when it starts inside the window):\n"
"  --dev DEV          device: name (loop0), /dev/name or major:minor\n"
"  --pid PID, --comm NAME\n"
"  --from T, --to T   time since the first event: 1.5, 1500ms, 20us...\n"
"Several files: each recording (a file, or time slices of one) is correlated on\n"
"its own, a thread per CPU taking them in turn; with two or more recordings\n"
"every time is on their common wall clock (each file's clock.realtime_offset_ns).\n"
"Accuracy and memory:\n"
"  --exact-limit N    exact quantiles up to N samples per group and stage\n"
"                     (default 10000), then a log-linear sketch, relative error\n"
"                     <= 0.39 %; the report says which was used\n"
"  --stale T          I/Os open longer than T are reported incomplete (default 60s)\n"
"  --threads N        CPUs to use (default: all online): a recording each, and\n"
"                     where CPUs are left over one more thread each, to\n"
"                     decode its chunks ahead\n"
"  --config FILE      JSON: a module (modules/*.json: spans and options) or a\n"
"                     stortrace config (filter, statistical_params); the\n"
"                     command line wins (analyze/README.md, Config files)\n"
"  -h, --help, --version\n"
"\n"
"I/Os: a data syscall (read/write/pread64/pwrite64/readv/writev/preadv*/pwritev*/\n"
"fsync/fdatasync/sync_file_range) with the bios its thread queued while it was\n"
"open; an io_uring request (submit_req..complete by request address) with the\n"
"bios its thread queued right after submission; else one queued bio, or one\n"
"request without bios (a flush). Bios join requests through block_rq_issue's\n"
"bio chain; merged bios complete with the request that absorbed them; split\n"
"pieces join their parent. With several bios, Q/G/I/D are the first, C the last.\n"
"\n"
"Stages (btt names where they overlap; us in reports):\n"
"  total   syscall entry -> exit (io_uring: submit -> complete; libaio iocb:\n"
"          iomap_dio_rw_begin in io_submit -> block completion); without a\n"
"          syscall Q2C, or insert/issue -> complete for a request without bios\n"
"  sys2fs  syscall entry -> fs begin (iomap_dio_rw_begin, ext4_sync_file_enter)\n"
"  fs      fs begin -> fs end (iomap_dio_complete, ext4_sync_file_exit)\n"
"  fs2q    fs begin -> first block_bio_queue\n"
"  sys2q   syscall entry -> its bio queued by blk-throttle's dispatch worker\n"
"          (the time the throttle held the bio back under its cgroup's limit)\n"
"  Q2G     bio queued -> request allocated (block_getrq); none for merged bios\n"
"  G2I     request allocated -> inserted into the scheduler (block_rq_insert)\n"
"  I2D     inserted -> issued to the driver (block_rq_issue; the final issue\n"
"          when requeued, requeue time = first issue -> final issue)\n"
"  D2C     issued -> completed (block_rq_complete, or block_bio_complete)\n"
"  Q2C     bio queued -> completed\n"
"  C2ret   block completion -> syscall exit (or io_uring completion)\n"
"  wb      fsync/fdatasync: first data bio its thread queued, or a kernel\n"
"          thread's bio of its file (block_rq_inode) while it was open -> last\n"
"          of them completed (its file's data written back while it waited)\n"
"  jnl     fsync: first bio of no known file a kernel thread (jbd2 journal\n"
"          commit, metadata) queued on its file system's device while it was\n"
"          open -> last of them completed (st-record keeps them under a task\n"
"          filter with the fsync syscalls recorded)\n"
"  flush   device cache flush: empty PREFLUSH bio queued (or a FUA/PREFLUSH\n"
"          write's data done) -> the kernel's flush sequence ended\n"
"  reap    the application taking the completion. io_uring: CQE posted ->\n"
"          the return of the submitting thread's io_uring_enter that only\n"
"          waits (to_submit 0), else the entry of its first io_uring_enter\n"
"          whose ring CQ head has passed the CQE (the application read it in\n"
"          user space, which no syscall shows, since its previous call).\n"
"          libaio: iocb done (block completion) -> the return of the thread's\n"
"          io_getevents that handed it over. fio's figures bracket total +\n"
"          reap: clat <= total + reap <= lat (+ fio's time in user space\n"
"          between its completion stamp and its next io_uring_enter)\n"
"  Q2Q     time since the previous bio queued on the same device\n"
"Causes of total (a recording with st-record's why events; analyze/README.md,\n"
"Causes); each counted once, never more than total in all:\n"
"  runq     its thread runnable, not running: woken or preempted -> on a CPU\n"
"           (sched_wakeup, sched_switch), while inside its syscall\n"
"  svc_runq the threads that served its request (where its completion ran,\n"
"           and back from it the thread that woke that one or raised its\n"
"           softirq: ksoftirqd, loop worker, kworker) waiting for a CPU\n"
"           between issue and completion\n"
"  lock     contention_begin -> contention_end (less runq inside)\n"
"  throttle fs begin (else syscall entry) -> its bio queued by blk-throttle\n"
"  dirty    balance_dirty_pages' pause until woken (less runq inside)\n"
"  reclaim  direct or memory-cgroup reclaim begin -> end (less runq inside)\n"
"  other    the rest of total, which no cause explains\n"
"\n"
"A syscall seen from entry to exit is complete; bios of it that did not join\n"
"are counted (\"without their block I/O joined\") and become an I/O of their own.\n"
"Incomplete I/Os (open at the end, older than --stale, or missing a completion)\n"
"are counted, never mixed into latencies; events of I/Os begun before the trace\n"
"are counted separately. Lost events (kernel side) are shown in every report.\n"
"Exit: 0 ok, 1 failed (an unreadable input, not a trace, a failed write), 2 bad\n"
"usage (one line naming it).\n";

static void print_quantile_note(const struct an_stats *s, size_t limit, FILE *out)
{
	if (an_stats_exact(s))
		fprintf(out, "quantiles: exact (at most %zu samples per group and stage)\n", limit);
	else
		fprintf(out, "quantiles: log-linear sketch where a group and stage passed %zu samples "
			"(relative error <= 0.39%%), exact elsewhere (CSV column 'quantiles')\n", limit);
}

/*
 * A flight recorder's dump names the request that triggered it (st-record
 * --trigger): say where it is among the listed I/Os, by device and completion
 * time (the sector may be another bio's of the same I/O).
 */
static void print_trigger(const struct an_run *r, const struct an_recording *x, FILE *out)
{
	const char *reason = an_input_meta(x->in, "trigger.reason");
	const char *dev = an_input_meta(x->in, "trigger.dev");
	const char *sector = an_input_meta(x->in, "trigger.sector");
	const char *ts = an_input_meta(x->in, "trigger.ts");
	unsigned maj, min;

	if (!reason)
		return;
	if (!dev || !sector || !ts || sscanf(dev, "%u:%u", &maj, &min) != 2) {
		fprintf(out, "trigger: %s\n", reason);
		return;
	}
	for (size_t i = 0; i < r->top.n; i++) {
		const struct an_io *io = &r->top.heap[i];

		/* The listed I/Os' times are on the run's clock. */
		if (io->recording == x->index && io->dev == (maj << 20 | min) &&
		    io->ts[AN_TS_COMPLETE] == strtoull(ts, NULL, 10) + x->shift) {
			fprintf(out, "trigger: %s: the I/O listed as #%zu\n", reason, i + 1);
			return;
		}
	}
	fprintf(out, "trigger: %s: device %s sector %s, not among the I/Os listed\n", reason, dev,
		sector);
}

/* --quantile: one pass when the slowest I/Os fit a bounded heap, else two. */
static int report_quantile(struct an_run *r, const struct an_opts *o, FILE *info)
{
	char err[512];
	int ret = 0;

	if (an_run_quantile(r, o->quantile / 100, o->exact_limit, o->top, AN_ONE_PASS_MAX, err,
			    sizeof(err))) {
		fprintf(stderr, "%s: %s\n", PROG, err);
		ret = EXIT_FAIL;
	} else {
		an_run_print_header(r, info);
		fprintf(info, "%s p%g: %.3f us (%s over %" PRIu64 " I/Os); %" PRIu64
			" I/Os at or above it, %zu shown, slowest first\n", an_stage_name(&r->spans, o->stage),
			o->quantile, an_us(r->top.threshold),
			an_qest_is_exact(&r->stage_samples) ? "exact" : "sketch, <= 0.39% error",
			r->stage_samples.n, r->top.above, r->top.n);
		an_top_print(&r->top, &r->spans, r->origins, r->nrecs > 1, &o->cols, stdout, o->csv,
			     r->info.first_ts);
		for (unsigned a = 0; a < r->nrecs; a++)
			print_trigger(r, &r->recs[a], info);
	}
	an_top_free(&r->top);
	an_qest_free(&r->stage_samples);
	return ret;
}

/* 1 when a recording of r has the why events; else 0 after a one-line error naming what needs them. */
static int has_causes(const struct an_run *r, const char *what)
{
	for (unsigned a = 0; a < r->nrecs; a++)
		if (an_run_causes(&r->recs[a]))
			return 1;
	fprintf(stderr, "%s: %s: no why events in the input (record them with st-record -e why)\n",
		PROG, what);
	return 0;
}

/* --why: a pass for each group's quantile of --stage, one for the causes of the I/Os above it. */
static int report_why(struct an_run *r, const struct an_opts *o, FILE *info)
{
	double q = o->quantile > 0 ? o->quantile : 99;
	struct an_why w;
	int ret;

	if (!has_causes(r, "--why"))
		return EXIT_FAIL;
	an_stats_init(&r->stats, o->by, o->exact_limit, NULL);
	ret = an_pass(r, AN_WANT_STATS, PROG);
	if (ret) {
		an_stats_free(&r->stats);
		return ret;
	}
	if (an_why_init(&w, &r->stats, o->stage, q / 100, r->origins)) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		ret = EXIT_FAIL;
	}
	if (!ret) {
		r->emit = an_why_add;
		r->emit_ctx = &w;
		ret = an_pass(r, AN_WANT_EMIT, PROG);
	}
	if (!ret) {
		an_run_print_header(r, info);
		fprintf(info, "why: per %s group, the I/Os at or above its p%g of %s; share of their "
			"total time\n", an_by_name(o->by), q, an_stage_name(&r->spans, o->stage));
		an_why_print(&w, &r->spans, &o->cols, stdout, o->csv);
	}
	an_why_free(&w);
	an_stats_free(&r->stats);
	return ret;
}

/* --sizes, --seek, --hist, --depth and --top-by, in that order, after the pass. */
static void print_dists(struct an_run *r, const struct an_opts *o, FILE *info)
{
	if (o->dist & AN_DIST_SIZE)
		an_dist_print_sizes(&r->dist, stdout, o->csv);
	if (o->dist & AN_DIST_SEEK)
		an_dist_print_seeks(&r->dist, r->origins, stdout, o->csv);
	if (o->dist & AN_DIST_HIST)
		an_dist_print_hist(&r->dist, &r->spans, stdout, o->csv);
	if (o->dist & AN_DIST_DEPTH)
		an_dist_print_depth(&r->dist, r->origins, stdout, o->csv);
	if (o->top_by >= 0) {
		an_stats_keep_top(&r->stats, o->top_rank, o->stage, o->top);
		fprintf(info, "\ntop %zu %s by %s%s%s\n", o->top, an_by_name(o->top_by),
			an_rank_name(o->top_rank), o->top_rank == AN_RANK_TAIL ? ": p99 of " : "",
			o->top_rank == AN_RANK_TAIL ? an_stage_name(&r->spans, o->stage) : "");
		an_stats_print(&r->stats, &r->spans, &o->cols, stdout, o->csv, an_run_duration(r));
	}
}

/* 1 when a recording's kernel gave what bit stands for (analyze/lib/missing.h); else 0 after a one-line error. */
static int recorded(const struct an_run *r, unsigned bit, const char *what)
{
	for (unsigned a = 0; a < r->nrecs; a++)
		if (!(r->origins[a].missing & bit))
			return 1;
	fprintf(stderr, "%s: %s: not recorded on this kernel (st-format info names the events it lacked)\n",
		PROG, what);
	return 0;
}

static int report_main(struct an_run *r, const struct an_opts *o)
{
	char stage[64];
	FILE *info = o->csv ? stderr : stdout;
	int reports = o->dist || o->top_by >= 0;
	unsigned want = 0;
	char err[512];
	int ret;

	if (o->by == AN_BY_CACHE && (!has_causes(r, "--by cache") ||
				      !recorded(r, AN_MISSING_CACHE, "--by cache")))
		return EXIT_FAIL;
	snprintf(stage, sizeof(stage), "--stage %s", an_stage_name(&r->spans, o->stage));
	if (o->stage < AN_ST_SPAN0 && !recorded(r, 1u << o->stage, stage))
		return EXIT_FAIL;
	if (o->html)
		return an_html_report(r, o, info) ? EXIT_FAIL : 0;
	if (o->why)
		return report_why(r, o, info);
	if (o->quantile > 0)
		return report_quantile(r, o, info);
	if ((!o->interval && !o->heatmap && !reports) || o->gnuplot_dir || o->save_summary ||
	    o->top_by >= 0)
		want |= AN_WANT_STATS;
	if (o->dist) {
		want |= AN_WANT_DIST;
		an_dist_init(&r->dist, o->dist, o->by, o->stage, NULL);
	}
	if (o->interval || o->heatmap || o->gnuplot_dir) {
		uint64_t t0 = an_run_t0(r);

		want |= AN_WANT_SERIES;
		/* --heatmap-rows: that many intervals for a heatmap, whatever --interval says */
		uint64_t step = o->heatmap && o->heatmap_rows ? an_run_duration(r) / o->heatmap_rows + 1 :
				an_auto_interval(r, o->interval);

		if (an_series_init(&r->series, t0, t0 + an_run_duration(r), step, o->stage)) {
			fprintf(stderr, "%s: --interval: more than %d intervals (or out of memory)\n",
				PROG, AN_SERIES_MAX_BINS);
			return EXIT_FAIL;
		}
	}
	an_stats_init(&r->stats, o->top_by >= 0 ? (enum an_by)o->top_by : o->by, o->exact_limit, NULL);
	ret = an_pass(r, want, PROG);
	if (!ret && (want & AN_WANT_DIST) && an_dist_finish(&r->dist, an_run_t0(r), an_run_t0(r) + an_run_duration(r))) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		ret = EXIT_FAIL;
	}
	if (!ret) {
		an_run_print_header(r, info);
		if (want & AN_WANT_STATS) {
			an_stats_sort(&r->stats);
			print_quantile_note(&r->stats, o->exact_limit, info);
			if (!o->interval && !o->heatmap && !reports)
				an_stats_print(&r->stats, &r->spans, &o->cols, stdout, o->csv, an_run_duration(r));
		}
		print_dists(r, o, info);
		if (o->interval && !o->heatmap)
			an_series_print(&r->series, &r->spans, stdout, o->csv);
		if (o->heatmap)
			an_heatmap_print(&r->series, o->heatmap, stdout, o->csv);
		if (o->gnuplot_dir)
			ret = an_plot(r, o, info) ? EXIT_FAIL : 0;
	}
	if (!ret && o->save_summary && an_summary_save(r, o->save_summary, o->force ? ST_OUTPUT_FORCE : 0, err,
						 sizeof(err))) {
		fprintf(stderr, "%s: --save-summary %s\n", PROG, err);
		ret = EXIT_FAIL;
	}
	if (want & AN_WANT_SERIES)
		an_series_free(&r->series);
	if (want & AN_WANT_DIST)
		an_dist_free(&r->dist);
	an_stats_free(&r->stats);
	return ret;
}

/* --follow: the views while the recording grows, then the report of what it read. */
static int report_followed(const struct an_opts *o, const char *arg)
{
	struct an_run r;
	struct an_metrics *metrics;
	char **files;
	int nfiles, ret = an_follow(o, arg, PROG, &files, &nfiles, &metrics);

	if (ret)
		return ret;
	ret = an_open(&r, o, files, nfiles, PROG);
	if (!ret) {
		ret = report_main(&r, o);
		an_run_close(&r);
	}
	fflush(stdout);
	an_follow_serve(metrics, o->metrics, PROG);
	while (nfiles)
		free(files[--nfiles]);
	free(files);
	return ret;
}

int main(int argc, char **argv)
{
	struct an_opts o;
	struct an_run r;
	int ret;

	if (argc > 1 && !strcmp(argv[1], "diff"))
		return an_diff_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "merge"))
		return an_merge_main(argc - 1, argv + 1);
	an_opts_init(&o);
	if ((ret = an_config_apply(&o, argc, argv, PROG)))
		return ret;
	if ((ret = an_parse_args(argc, argv, &o, NULL, usage_text, an_report_accepts)) >= 0)
		return ret;
	if (optind >= argc)
		return usage_error(PROG, "%s", "no input file");
	if (o.save_summary && o.quantile > 0)
		return usage_error(PROG, "%s", "--save-summary saves the summary, not a --quantile list");
	if (o.save_summary && o.top_by >= 0)
		return usage_error(PROG, "%s", "--save-summary saves the summary, not a --top-by list");
	if (o.html && (o.gnuplot_dir || o.save_summary || o.heatmap || o.csv))
		return usage_error(PROG, "%s", "--html writes a page of its own: not with --gnuplot, "
				      "--save-summary, --heatmap or --csv");
	if (o.quantile > 0 && !o.html && (o.dist || o.top_by >= 0))
		return usage_error(PROG, "%s", "--quantile lists I/Os: --sizes, --seek, --hist, --depth "
				      "and --top-by are reports of their own");
	if (o.why && (o.html || o.gnuplot_dir || o.save_summary || o.dist || o.top_by >= 0 ||
		      o.interval || o.heatmap || o.follow))
		return usage_error(PROG, "%s", "--why is a report of its own: not with --html, --gnuplot, "
				      "--save-summary, --interval, --heatmap, --follow, --sizes, --seek, "
				      "--hist, --depth or --top-by");
	if (o.metrics && !o.follow)
		return usage_error(PROG, "%s", "--metrics serves what --follow reads: add --follow");
	if (o.follow && argc - optind != 1)
		return usage_error(PROG, "%s", "--follow reads one FILE (quote a rotating set's pattern)");
	if ((ret = an_opts_resolve(&o, PROG)))
		return ret;
	if (o.follow)
		return report_followed(&o, argv[optind]);
	if ((ret = input_files(argv + optind, argc - optind, PROG)) ||
	    (ret = an_open(&r, &o, argv + optind, argc - optind, PROG)))
		return ret;
	ret = report_main(&r, &o);
	an_run_close(&r);
	return ret;
}
