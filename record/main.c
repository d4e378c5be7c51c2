/* SPDX-License-Identifier: MIT */
/*
 * st-record - record kernel I/O events into a .sttrace file.
 *
 * One event loop: the probes submit records without waking us, a 50 ms timer
 * drains the ring buffer (plus a wakeup when the buffer passes a quarter
 * full), each record is appended to the writer as is, and sealed chunks go to
 * the file through the io_uring sink. Partial chunks are sealed once their
 * records waited --flush-interval (so a killed recorder leaves a readable
 * file and a follower sees them). Once a second: start a datasync of the file (so
 * a crashed host does too, and a failing disk is noticed), store the lost
 * counts, check the limits, print the status line on a terminal.
 *
 * This file: the records as they come (on_batch), the setup and the end of
 * a recording; the event loop is loop.c, the output files, rotation and
 * dumps files.c, the `-- CMD` process command.c, the steps they share
 * (failing, lost counts) state.c (recorder.h holds their
 * shared state).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "common/usage.h"
#include "record/recorder.h"

/* A ring buffer record: one CPU's batch of event records (bpf/stage.bpf.h). */
static int on_batch(void *ctx, void *data, size_t size)
{
	struct recorder *r = ctx;
	struct rec_flight_hit hit;

	if (!r->w)	/* the next file of a rotation could not be made: the recording stopped */
		return 0;
	for (size_t off = 0; off < size;) {
		const struct st_event_header *h = (const void *)((char *)data + off);
		int ret;

		if (size - off < sizeof(*h) || h->size < sizeof(*h) || h->size > size - off) {
			r->stop_reason = "malformed batch from the probes";
			return ST_EINVAL;
		}
		ret = st_writer_append(r->w, h, h->size);
		if (!ret && r->dump)
			ret = st_writer_append(r->dump, h, h->size);
		if (ret) {
			rec_stop_for_write_error(r);
			return ret;
		}
		if (r->trigger.rqs && rec_flight_trigger_check(&r->trigger, h, &hit) && !r->pending_trigger) {
			snprintf(r->reason, sizeof(r->reason), "%s %.3f ms > %.3f ms",
				 r->trigger.q2c ? "Q2C" : "D2C", (double)hit.latency_ns / 1e6,
				 (double)r->trigger.threshold_ns / 1e6);
			r->hit = hit;
			r->pending_trigger = true;
		}
		if (h->type == ST_EV_sys_exit_openat || h->type == ST_EV_sched_process_fork || h->type == ST_EV_sched_process_exec)
			rec_meta_track(r->tracker, r->w, h);
		rec_meta_note_record(r->tracker, h);
		off += h->size;
	}
	return 0;
}

static int resolve_filters(struct recorder *r)
{
	struct rec_filters *f = &r->filters;
	char err[512];

	f->self_tgid = (uint32_t)getpid();
	f->pid = r->opts.pid;
	if (f->pid && kill(f->pid, 0) && errno == ESRCH) {
		snprintf(err, sizeof(err), "-p %d: no such process", f->pid);
		return usage_error(REC_NAME, "%s", err);
	}
	f->comm = r->opts.comm;
	if (r->opts.cgroup && rec_filters_set_cgroup(f, r->opts.cgroup, err, sizeof(err)))
		return usage_error(REC_NAME, "%s", err);
	if (r->opts.device && rec_filters_set_device(f, r->opts.device, err, sizeof(err)))
		return usage_error(REC_NAME, "%s", err);
	return 0;
}

/* CPU time of this process so far (user + system), s. */
static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void summary(struct recorder *r, const struct st_writer_stats *st, uint64_t end_ns,
		    uint64_t lost)
{
	double file_mb = (double)st->file_bytes / 1e6;
	double cpu = cpu_seconds() - r->start_cpu;
	double avg_ms = r->sink.writes ? (double)r->sink.lat_sum_ns / (double)r->sink.writes / 1e6 : 0;

	if (r->status_line)
		fputc('\n', stderr);
	fprintf(stderr, "%s: %s: %llu events, %llu lost, %.1f MB raw -> %.1f MB, %.1f bytes/event, "
		"%.1f s, %.2f s CPU, %llu writes (avg %.3f ms, max %.3f ms)\n", REC_NAME, r->stop_reason,
		(unsigned long long)(st->events - st->dropped_events), (unsigned long long)lost,
		(double)st->raw_bytes / 1e6, file_mb,
		st->events ? file_mb * 1e6 / (double)st->events : 0.0,
		(double)(end_ns - r->start_ns) / 1e9, cpu, (unsigned long long)r->sink.writes, avg_ms,
		(double)r->sink.lat_max_ns / 1e6);
	if (st->dropped_events)
		fprintf(stderr, "%s: the output did not keep up: %llu events dropped in %llu whole "
			"chunks (counted lost), %.1f MB waited for it at most (--stream-buffer)\n",
			REC_NAME, (unsigned long long)st->dropped_events,
			(unsigned long long)st->dropped_chunks, (double)r->sink.queued_max / 1e6);
}

/* Drain what the probes left, write the closing metadata and footer. 0 or REC_EXIT_FAIL. */
static int finish(struct recorder *r)
{
	struct st_writer_stats st;
	uint64_t end_ns, lost;

	/* the window closes for every probe at once; detaching takes a while */
	rec_probes_set_window(&r->probes, 0);
	end_ns = rec_now_ns();
	rec_sink_set_deadline(&r->sink, end_ns + REC_STREAM_END_WAIT_NS);
	if (r->opts.duration_ns && end_ns > r->start_ns + r->opts.duration_ns)
		end_ns = r->start_ns + r->opts.duration_ns;
	rec_probes_detach(&r->probes);
	rec_probes_flush(&r->probes, UINT64_MAX);
	if (!r->write_failed)
		rec_ring_drain(&r->probes.ring);
	/* a rotation that could not make the next file: the files before it are closed and whole */
	if (!r->w && !r->opts.ring_bytes)
		return REC_EXIT_FAIL;
	rec_meta_release(r->tracker, r->w, UINT64_MAX);
	rec_meta_procs(r->w);
	rec_meta_cgroups(r->tracker, r->w);
	rec_meta_blkcgs(r->tracker, r->w);
	rec_probes_store_runs(&r->probes, r->w);
	lost = rec_store_lost(r);
	rec_store_ring_fill(r);
	st_writer_stats(r->w, &st);
	summary(r, &st, end_ns, lost);
	if (r->opts.ring_bytes) {
		if (r->dump)
			rec_dump_end(r, end_ns);
		st_writer_close(r->w, NULL, 0);	/* into the ring, which goes with it */
		r->w = NULL;
		fprintf(stderr, "%s: %u trigger%s (during a dump or --trigger-gap: ignored), %u "
			"file%s written\n", REC_NAME, r->triggers, r->triggers == 1 ? "" : "s",
			r->dumps_written, r->dumps_written == 1 ? "" : "s");
		return r->write_failed ? REC_EXIT_FAIL : 0;
	}
	return rec_close_file(r, &r->w, r->path, end_ns, false);
}

static int record(struct recorder *r)
{
	char err[512], ts[32];
	int ret;

	if (rec_probes_start(&r->probes, &r->sel, &r->filters, r->opts.ringbuf_size, on_batch, r,
			 err, sizeof(err))) {
		rec_discard_output(r);
		return rec_fail("probes", err);
	}
	ret = rec_loop_open(r);
	if (ret) {
		rec_discard_output(r);
		return ret;
	}
	if (rec_rotating(r) && !(r->lost_base = calloc((size_t)r->probes.ncpus + 1, sizeof(*r->lost_base))))
		return rec_fail("memory", strerror(ENOMEM));
	/* every probe is attached: the window opens for all of them at once */
	r->start_ns = rec_meta_clock(r->w, "clock.realtime_offset_ns");
	rec_probes_set_window(&r->probes, r->opts.duration_ns ? r->start_ns + r->opts.duration_ns :
			  UINT64_MAX);
	r->file_start_ns = r->start_ns;
	r->trigger.armed_ns = r->start_ns + META_HOLD_NS;
	snprintf(ts, sizeof(ts), "%llu", (unsigned long long)r->start_ns);
	st_writer_set_meta(r->w, "record.start_ts", ts);
	rec_set_meta_u64(r->w, "record.ringbuf_bytes", r->probes.ring.mask + 1);
	rec_set_meta_u64(r->w, "record.ringbuf_used_max_bytes", 0);
	/* tests and scripts wait for this line before starting their workload */
	fprintf(stderr, "%s: recording %zu probes into %s\n", REC_NAME, r->probes.nlinks,
		r->opts.ring_bytes ? "the ring" : r->path);
	if (r->child)
		rec_command_release(r);
	r->status_line = isatty(STDERR_FILENO);
	r->start_cpu = cpu_seconds();
	rec_loop_run(r);
	return finish(r);
}

static int setup(struct recorder *r, int argc, char **argv)
{
	char err[512];
	sigset_t mask;
	int ret = resolve_filters(r);

	if (ret)
		return ret;
	if (rec_events_select(r->opts.events, &r->sel, err, sizeof(err)))
		return usage_error(REC_NAME, "%s", err);
	if (rec_probes_check(&r->sel, err, sizeof(err)))
		return rec_fail("probes", err);
	if (rec_tracepoints_resolve(&r->sel, err, sizeof(err)))
		return usage_error(REC_NAME, "%s", err);
	if (rec_probes_check_generic(&r->sel, err, sizeof(err)))
		return rec_fail("probes", err);
	/* blocked before the fork, so no SIGCHLD is missed; the loop reads them from a signalfd */
	rec_loop_signals(&mask);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* before the fork: the command's standard output must not reach the stream */
	if (!strcmp(r->opts.output, "-") && (ret = rec_open_stdout(r)))
		return ret;
	if (r->opts.cmd) {
		ret = rec_command_start(r);
		if (ret)
			return ret;
		r->filters.pid = r->child;
	}
	ret = rec_open_output(r);
	if (ret)
		return ret;
	rec_probes_resolve_stamps(&r->sel, &r->filters, r->opts.no_stamps);
	return rec_open_writer(r, argc, argv);
}

static void close_fds(struct recorder *r)
{
	int fds[] = { r->epfd, r->sigfd, r->timerfd, r->out_fd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

int main(int argc, char **argv)
{
	struct recorder r = { .out_fd = -1, .child_go_fd = -1, .epfd = -1, .sigfd = -1,
			      .timerfd = -1 };
	int ret = rec_opts_parse(&r.opts, argc, argv);

	if (ret)
		return ret < 0 ? 0 : ret;
	rec_probes_set_verbose(r.opts.verbose);
	ret = setup(&r, argc, argv);
	if (!ret)
		ret = record(&r);
	if (r.w)
		st_writer_close(r.w, NULL, 0);
	rec_probes_stop(&r.probes);
	rec_sink_exit(&r.sink);
	close_fds(&r);
	rec_meta_tracker_free(r.tracker);
	if (r.opts.ring_bytes)
		rec_flight_ring_free(&r.ring);
	free(r.trigger.rqs);
	free(r.trigger.bios);
	free(r.lost_base);
	rec_command_end(&r);
	if (r.child && r.child_done && ret != REC_EXIT_USAGE)
		ret = ret ? ret : r.child_status;
	rec_selection_free(&r.sel);
	rec_opts_free(&r.opts);
	return ret;
}
