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
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "common/usage.h"
#include "record/record.h"

/*
 * 50 ms: a wakeup of the loop costs about 90 us of CPU on the project's VM,
 * whether or not anything is waiting; at 10 ms the wakeups took as much CPU
 * as compressing 80k events a second (scripts/bench/RESULTS.md, issue 14).
 * A burst that fills a quarter of the ring wakes the loop sooner.
 */
#define DRAIN_INTERVAL_NS	50000000ull
#define TICK_NS			1000000000ull	/* the once-a-second duties */
/*
 * Metadata records wait this long for older ones staged on other CPUs: a
 * quiet CPU's records are flushed once they have waited a drain period, at
 * the drain after that, so up to two periods.
 */
#define META_HOLD_NS		(3 * DRAIN_INTERVAL_NS)
#define COMMAND_GRACE_MS	5000		/* for the command to exit after SIGTERM */

struct recorder {
	struct rec_opts opts;
	struct rec_filters filters;
	struct rec_selection sel;
	struct st_writer *w;
	struct rec_sink sink;
	struct rec_probes probes;
	struct rec_meta_tracker *tracker;
	int out_fd;
	pid_t child;			/* the `-- CMD` process, 0 = none */
	int child_go_fd;		/* closing it without a byte makes the child give up */
	int child_status;		/* exit code to return for the command */
	bool child_done;
	int epfd, sigfd, timerfd;
	const char *stop_reason;	/* set when the loop must end */
	bool write_failed;
	uint64_t start_ns, last_tick_ns;
	double start_cpu;		/* CPU seconds spent before recording (BPF load, scans) */
	uint64_t tick_events;		/* writer's events at the last tick */
	uint64_t seal_events;		/* writer's events at the last --flush-interval seal */
	uint64_t seal_ns;		/* since when appended records wait in open chunks */
	uint64_t ring_fill_stored;	/* record.ringbuf_used_max_bytes last set */
	bool status_line;
	/* --rotate: the file being written is number file_index, begun at file_start_ns */
	unsigned file_index;
	uint64_t file_start_ns;
	char path[4096];		/* the file being written ("-" for standard output) */
	uint64_t *lost_base;		/* per CPU, then probe skips: counted in earlier files */
	/* --ring: r->w writes into ring; a trigger dumps it into dump, written through sink */
	struct rec_flight_ring ring;
	struct rec_flight_trigger trigger;
	struct st_writer *dump;
	uint64_t dump_until, dump_end_ns;
	unsigned dumps, triggers;		/* dumps begun (each names its file), triggers seen */
	unsigned dumps_written;			/* dumps closed whole: a refused one is not */
	bool pending_trigger;
	struct rec_flight_hit hit;		/* the pending trigger's request (rq 0: a signal) */
	char reason[128];
};

static int fail(const char *what, const char *why)
{
	fprintf(stderr, "%s: %s: %s\n", REC_NAME, what, why);
	return REC_EXIT_FAIL;
}

/* ---- the command (`-- CMD`) ------------------------------------------- */

/* Fork the command now (its pid goes into the filter) and exec it once the probes are attached. */
static int start_command(struct recorder *r)
{
	int go[2];
	char c;

	if (pipe2(go, O_CLOEXEC))
		return fail("pipe", strerror(errno));
	r->child = fork();
	if (r->child < 0)
		return fail("fork", strerror(errno));
	if (r->child == 0) {
		sigset_t none;

		/* the command gets the signal state st-record was started with */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(r->opts.cmd[0], r->opts.cmd);
		fprintf(stderr, "%s: %s: %s\n", REC_NAME, r->opts.cmd[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	r->child_go_fd = go[1];
	return 0;
}

static void release_command(struct recorder *r)
{
	char c = 'g';

	if (write(r->child_go_fd, &c, 1) != 1)
		fprintf(stderr, "%s: cannot start the command: %s\n", REC_NAME, strerror(errno));
	close(r->child_go_fd);
	r->child_go_fd = -1;
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return REC_EXIT_FAIL;
}

static void reap_command(struct recorder *r, bool wait)
{
	int status;

	if (!r->child || r->child_done)
		return;
	if (waitpid(r->child, &status, wait ? 0 : WNOHANG) == r->child) {
		r->child_done = true;
		r->child_status = exit_code_of(status);
	}
}

/*
 * The recording stopped first: the command was only there to be traced.
 * SIGTERM, and SIGKILL when it is still there after COMMAND_GRACE_MS.
 */
static void end_command(struct recorder *r)
{
	if (!r->child)
		return;
	if (r->child_go_fd >= 0)
		close(r->child_go_fd);
	reap_command(r, false);
	if (!r->child_done)
		kill(r->child, SIGTERM);
	for (int ms = 0; ms < COMMAND_GRACE_MS && !r->child_done; ms += 10) {
		usleep(10000);
		reap_command(r, false);
	}
	if (!r->child_done)
		kill(r->child, SIGKILL);
	reap_command(r, true);
}

/* ---- records ---------------------------------------------------------- */

/* The output failed: stop, and skip the final drain, which would only write more. */
static void stop_for_write_error(struct recorder *r)
{
	r->write_failed = true;
	r->stop_reason = "write error";
}

/* A ring buffer record: one CPU's batch of event records (bpf/sttrace.bpf.c, "records"). */
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
			stop_for_write_error(r);
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

/*
 * Stores the lost counts into w, less what earlier rotated files hold (with
 * `rebase`, this file's counts become the base of the next); returns the
 * recording's total.
 */
static uint64_t store_lost_into(struct recorder *r, struct st_writer *w, bool rebase)
{
	uint64_t total = rec_probes_read_lost(&r->probes), skipped = rec_probes_read_skipped(&r->probes);
	uint64_t *base = r->lost_base;
	int n = r->probes.ncpus;

	for (int cpu = 0; cpu < n; cpu++) {
		uint64_t mine = r->probes.lost[cpu] - (base ? base[cpu] : 0);

		if (mine)
			st_writer_set_lost(w, (uint32_t)cpu, mine);
		if (base && rebase)
			base[cpu] = r->probes.lost[cpu];
	}
	if (skipped - (base ? base[n] : 0))
		st_writer_set_lost(w, ST_LOST_ANY_CPU, skipped - (base ? base[n] : 0));
	if (base && rebase)
		base[n] = skipped;
	return total + skipped;
}

static uint64_t store_lost(struct recorder *r)
{
	return store_lost_into(r, r->w, false);
}

/* ---- setup ------------------------------------------------------------ */

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

/*
 * `-o -`: the trace goes to what standard output was; standard output itself
 * (st-record's and the command's) becomes standard error, so nothing else
 * lands inside the stream. Done before the command is forked.
 */
static int open_stdout(struct recorder *r)
{
	if (isatty(STDOUT_FILENO))
		return fail("-o -", "standard output is a terminal; pipe it or redirect it to a file");
	r->out_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (r->out_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		return fail("-o -", strerror(errno));
	return 0;
}

static bool rotating(const struct recorder *r)
{
	return r->opts.rotate_bytes || r->opts.rotate_ns;
}

/* The file the recording starts with (none in ring mode, which writes only dumps). */
static int open_output(struct recorder *r)
{
	struct rec_filters *f = &r->filters;
	struct stat st;
	char why[160];

	if (r->opts.ring_bytes)
		return 0;
	r->file_index = 1;
	if (rotating(r))
		rec_flight_name(r->opts.output, "", r->file_index, r->path, sizeof(r->path));
	else
		snprintf(r->path, sizeof(r->path), "%s", r->opts.output);
	if (strcmp(r->path, "-")) {
		r->out_fd = st_output_open(r->path, r->opts.force ? ST_OUTPUT_FORCE : 0, why,
					   sizeof(why));
		if (r->out_fd < 0)
			return fail(r->path, why);
	}
	if (fstat(r->out_fd, &st))
		return fail(r->path, strerror(errno));
	/* Our own writes reach a traced disk: mark them so their block events are dropped. */
	f->mark_self_bios = !f->pid && !f->comm && !f->cgroup_id &&
			    rec_filters_disk_traced(f, st.st_dev);
	f->self_ino = st.st_ino;
	f->self_sdev = major(st.st_dev) << 20 | minor(st.st_dev);
	return 0;
}

/* A writer of every built-in type into sink, with the recording's options. */
static int new_writer(struct recorder *r, const struct st_sink *sink, struct st_writer **w,
		      const char *path)
{
	int cpus = libbpf_num_possible_cpus();
	/* a chunk per CPU: the probes hand over each CPU's records in time order */
	struct st_writer_opts wo = {
		.chunk_size = r->opts.chunk_size,
		.zstd_level = r->opts.zstd_level,
		.sink = sink,
		.lanes = cpus <= 0 ? 1 : (unsigned)cpus < ST_MAX_LANES ? (unsigned)cpus : ST_MAX_LANES,
	};

	if (st_writer_open(w, NULL, &wo) || st_writer_add_builtin_types(*w) ||
	    rec_tracepoints_add_types(*w, &r->sel))
		return fail(path, *w ? st_writer_errmsg(*w) : "cannot start the writer");
	return 0;
}

/* The io_uring sink over r->out_fd. */
static int open_sink(struct recorder *r)
{
	/* a compressed chunk is at most slightly larger than its raw bytes */
	size_t buf_size = r->opts.chunk_size + r->opts.chunk_size / 16 + (64u << 10);
	int ret = rec_sink_init(&r->sink, r->out_fd, r->opts.qd, buf_size);

	return ret ? fail("io_uring", strerror(-ret)) : 0;
}

static int open_writer(struct recorder *r, int argc, char **argv)
{
	int ret;

	if (r->opts.ring_bytes) {
		if (rec_flight_ring_init(&r->ring, r->opts.ring_bytes, r->opts.chunk_size))
			return fail("memory", strerror(ENOMEM));
		ret = new_writer(r, &r->ring.sink, &r->w, "ring");
	} else {
		ret = open_sink(r);
		ret = ret ? ret : new_writer(r, &r->sink.sink, &r->w, r->path);
	}
	if (ret)
		return ret;
	rec_meta_static(r->w, argc, argv, &r->opts);
	rec_meta_devices(r->w);
	rec_meta_procs(r->w);
	if (r->filters.pid)
		rec_meta_open_files(r->w, r->filters.pid);
	rec_meta_paths(r->w, r->opts.files, r->opts.nfiles);
	r->tracker = rec_meta_tracker_new();
	if (r->tracker)
		rec_meta_note_cgroup(r->tracker, r->filters.cgroup_id);
	if (r->opts.trigger) {
		rec_flight_trigger_parse(r->opts.trigger, &r->trigger);
		r->trigger.rqs = calloc(FLIGHT_PAIRS, sizeof(*r->trigger.rqs));
		r->trigger.bios = calloc(FLIGHT_PAIRS, sizeof(*r->trigger.bios));
		if (!r->trigger.rqs || !r->trigger.bios)
			return fail("memory", strerror(ENOMEM));
	}
	return r->tracker ? 0 : fail("memory", strerror(ENOMEM));
}

static void set_meta_u64(struct st_writer *w, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	st_writer_set_meta(w, key, buf);
}

/* Close a file's writer and its sink; 0, or REC_EXIT_FAIL after saying why. */
static int close_file(struct recorder *r, struct st_writer **w, const char *path, uint64_t end_ns,
		      bool rebase_lost)
{
	char errmsg[256] = "";
	int ret;

	set_meta_u64(*w, "record.end_ts", end_ns);
	/* sampled again: a reader can tell a wall clock stepped during the file */
	rec_meta_clock(*w, "clock.realtime_offset_end_ns");
	store_lost_into(r, *w, rebase_lost);
	ret = st_writer_close(*w, errmsg, sizeof(errmsg));
	*w = NULL;
	if (r->status_line)
		fputc('\n', stderr);
	if (ret) {
		fprintf(stderr, "%s: %s: %s; recording stopped, the file keeps every complete "
			"chunk written before (st-format recover makes it whole)\n", REC_NAME, path,
			errmsg);
		stop_for_write_error(r);
		return REC_EXIT_FAIL;
	}
	fprintf(stderr, "%s: wrote %s\n", REC_NAME, path);
	return 0;
}

/* ---- rotation and the flight recorder ------------------------------------ */

static int discard_write(void *ctx, const void *buf, size_t len, uint64_t offset)
{
	(void)ctx, (void)buf, (void)len, (void)offset;
	return 0;
}

static int discard_sync(void *ctx)
{
	(void)ctx;
	return 0;
}

/* Where a writer that only holds metadata writes. */
static const struct st_sink discard_sink = { discard_write, discard_sync, NULL };

/* Every metadata key of src into dst: a new file knows what the recording knew. */
static void copy_meta(struct st_writer *dst, const struct st_writer *src)
{
	const char *key, *value;

	for (size_t i = 0; st_writer_meta_at(src, i, &key, &value) == 0; i++)
		st_writer_set_meta(dst, key, value);
}

/* Open r->path through the sink; the caller has closed the previous file. */
static int open_next(struct recorder *r, struct st_writer **w)
{
	char why[160];

	r->out_fd = st_output_open(r->path, r->opts.force ? ST_OUTPUT_FORCE : 0, why, sizeof(why));
	if (r->out_fd < 0) {
		fail(r->path, why);
		stop_for_write_error(r);
		return REC_EXIT_FAIL;
	}
	if (open_sink(r) || new_writer(r, &r->sink.sink, w, r->path)) {
		stop_for_write_error(r);
		return REC_EXIT_FAIL;
	}
	return 0;
}

static void close_out_fd(struct recorder *r)
{
	rec_sink_exit(&r->sink);
	memset(&r->sink, 0, sizeof(r->sink));	/* the next file's, or none: exited once */
	close(r->out_fd);
	r->out_fd = -1;
}

/*
 * The next file of a rotated recording: the same metadata (pid and fd names
 * learned so far, the clock), its own start, end and lost counts, so each
 * file analyzes alone and the set analyzes as one recording.
 */
static void rotate(struct recorder *r, uint64_t now)
{
	struct st_writer *old = r->w, *next = NULL;
	char old_path[sizeof(r->path)];

	rec_meta_cgroups(r->tracker, old);
	if (st_writer_flush(old)) {
		stop_for_write_error(r);
		return;
	}
	/* the new writer needs the sink the old one still uses: keep its metadata in a scratch writer */
	if (new_writer(r, &discard_sink, &next, "metadata")) {
		stop_for_write_error(r);
		return;
	}
	copy_meta(next, old);
	snprintf(old_path, sizeof(old_path), "%s", r->path);
	/* a follower of the set (st-analyze --follow 'run.*.sttrace') waits for it */
	rec_flight_name(r->opts.output, "", r->file_index + 1, r->path, sizeof(r->path));
	st_writer_set_meta(r->w, "record.next_file", basename(r->path));
	if (close_file(r, &r->w, old_path, now, true))
		goto out;
	close_out_fd(r);
	rec_flight_name(r->opts.output, "", ++r->file_index, r->path, sizeof(r->path));
	if (open_next(r, &r->w))
		goto out;
	copy_meta(r->w, next);
	r->seal_events = 0;
	set_meta_u64(r->w, "record.start_ts", now);
	set_meta_u64(r->w, "record.file_index", r->file_index);
	r->file_start_ns = now;
	if (r->opts.keep && r->file_index > r->opts.keep) {
		rec_flight_name(r->opts.output, "", r->file_index - r->opts.keep, old_path, sizeof(old_path));
		if (!unlink(old_path))
			fprintf(stderr, "%s: removed %s (--keep %u)\n", REC_NAME, old_path, r->opts.keep);
	}
out:
	st_writer_close(next, NULL, 0);
}

static bool rotation_due(const struct recorder *r, uint64_t now)
{
	struct st_writer_stats st;

	if (r->opts.rotate_ns)
		return now - r->file_start_ns >= r->opts.rotate_ns;
	st_writer_stats(r->w, &st);
	return st.file_bytes >= r->opts.rotate_bytes;
}

/* A trigger in ring mode: the ring and what follows for --after go into a file of their own. */
static void start_dump(struct recorder *r, uint64_t now)
{
	const struct rec_flight_hit *hit = &r->hit;
	char err[256], dev[32];

	r->pending_trigger = false;
	r->triggers++;
	/* a storm of slow requests is one problem: one dump, the rest only counted */
	if (r->dump || (r->dumps && now - r->dump_end_ns < r->opts.trigger_gap_ns))
		return;
	rec_flight_name(r->opts.output, "trigger-", ++r->dumps, r->path, sizeof(r->path));
	if (st_writer_flush(r->w) || open_next(r, &r->dump))
		return;
	copy_meta(r->dump, r->w);
	st_writer_set_meta(r->dump, "trigger.reason", r->reason);
	set_meta_u64(r->dump, "trigger.ts", hit->ts);
	if (hit->rq) {
		snprintf(dev, sizeof(dev), "%u:%u", hit->dev >> 20, hit->dev & 0xfffff);
		snprintf(err, sizeof(err), "0x%llx", (unsigned long long)hit->rq);
		st_writer_set_meta(r->dump, "trigger.rq", err);
		st_writer_set_meta(r->dump, "trigger.dev", dev);
		set_meta_u64(r->dump, "trigger.sector", hit->sector);
		set_meta_u64(r->dump, "trigger.latency_ns", hit->latency_ns);
	}
	set_meta_u64(r->dump, "record.start_ts", now);
	if (rec_flight_ring_dump(&r->ring, r->dump, err, sizeof(err))) {
		fail(r->path, err);
		stop_for_write_error(r);
		return;
	}
	fprintf(stderr, "%s: trigger %u (%s): writing %s (%.1f s before, %.1f s after; "
		"older chunks dropped so far: %.2f MB)\n", REC_NAME, r->triggers, r->reason, r->path,
		(double)rec_flight_ring_span_ns(&r->ring) / 1e9, (double)r->opts.after_ns / 1e9,
		(double)r->ring.dropped / 1e6);
	r->dump_until = now + r->opts.after_ns;
}

static void end_dump(struct recorder *r, uint64_t now)
{
	copy_meta(r->dump, r->w);
	if (!close_file(r, &r->dump, r->path, now, false))
		r->dumps_written++;
	close_out_fd(r);
	r->dump_end_ns = now;
	if (r->opts.max_triggers && r->dumps >= r->opts.max_triggers)
		r->stop_reason = "--max-triggers reached";
}

/* The signals the event loop handles. */
static void loop_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGCHLD);
	sigaddset(mask, SIGUSR1);
}

static int add_fd(int epfd, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int open_loop(struct recorder *r)
{
	struct itimerspec its = {
		.it_interval = { 0, DRAIN_INTERVAL_NS },
		.it_value = { 0, DRAIN_INTERVAL_NS },
	};
	sigset_t mask;

	loop_signals(&mask);
	r->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	r->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->sigfd < 0 || r->timerfd < 0 || r->epfd < 0 ||
	    timerfd_settime(r->timerfd, 0, &its, NULL) || add_fd(r->epfd, r->sigfd, EPOLLIN) ||
	    add_fd(r->epfd, r->timerfd, EPOLLIN) ||
	    /* edge-triggered: only the BPF side's forced wakeups, not every waiting record */
	    add_fd(r->epfd, r->probes.ring.fd, EPOLLIN | EPOLLET))
		return fail("event loop", strerror(errno));
	return 0;
}

/* ---- the loop --------------------------------------------------------- */

static void on_signal(struct recorder *r)
{
	struct signalfd_siginfo si;

	while (read(r->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			reap_command(r, false);
			if (r->child_done)
				r->stop_reason = "command exited";
		} else if (si.ssi_signo == SIGUSR1) {
			if (r->opts.ring_bytes && !r->pending_trigger) {
				snprintf(r->reason, sizeof(r->reason), "SIGUSR1");
				r->hit = (struct rec_flight_hit){ .ts = rec_now_ns() };
				r->pending_trigger = true;
			}
		} else {
			r->stop_reason = si.ssi_signo == SIGINT ? "interrupted" : "terminated";
			if (r->child && !r->child_done)
				kill(r->child, (int)si.ssi_signo);
		}
	}
}

static void print_status(struct recorder *r, const struct st_writer_stats *st, uint64_t now,
			 uint64_t lost)
{
	double secs = (double)(now - r->last_tick_ns) / 1e9;

	if (r->opts.ring_bytes) {
		fprintf(stderr, "\r%s: %.0f events/s, ring %.1f s (%.1f of %.1f MB), %u triggers, "
			"%llu lost   ", REC_NAME, (double)(st->events - r->tick_events) / secs,
			(double)rec_flight_ring_span_ns(&r->ring) / 1e9, (double)r->ring.bytes / 1e6,
			(double)r->ring.max_bytes / 1e6, r->triggers, (unsigned long long)lost);
		return;
	}

	fprintf(stderr, "\r%s: %.0f events/s, %.1f MB written (%.1fx compressed), %llu lost   ",
		REC_NAME, (double)(st->events - r->tick_events) / secs, (double)st->file_bytes / 1e6,
		st->file_bytes ? (double)st->raw_bytes / (double)st->file_bytes : 0.0,
		(unsigned long long)lost);
}

/*
 * --flush-interval: once appended records have waited that long in open
 * chunks, seal them, so a killed recorder leaves them in the file and a
 * follower sees each record soon after the drain that takes it.
 */
static void seal_waiting(struct recorder *r, uint64_t now)
{
	struct st_writer_stats st;

	st_writer_stats(r->w, &st);
	if (st.events == r->seal_events) {
		r->seal_ns = now;	/* nothing appended since the last seal waits */
		return;
	}
	if (now - r->seal_ns < r->opts.flush_ns)
		return;
	if (st_writer_flush(r->w))
		stop_for_write_error(r);
	st_writer_stats(r->w, &st);
	r->seal_events = st.events;
	r->seal_ns = now;
}

/*
 * The most the BPF ring buffer held at a drain since the recording began:
 * a metadata update that goes out with the next seal, only when it grew.
 */
static void store_ring_fill(struct recorder *r)
{
	uint64_t fill = r->probes.ring.fill_max;

	if (fill == r->ring_fill_stored)
		return;
	set_meta_u64(r->w, "record.ringbuf_used_max_bytes", fill);
	r->ring_fill_stored = fill;
}

/* Once a second: keep the file readable, the counts current, the limits enforced. */
static void tick(struct recorder *r, uint64_t now)
{
	struct st_writer_stats st;
	uint64_t lost;

	st_writer_stats(r->w, &st);
	/* what is written reaches the disk: a host crash loses at most a second
	 * or two, and a failing disk stops the recording now, not at the end */
	if (r->out_fd >= 0 && rec_sink_datasync(&r->sink))
		stop_for_write_error(r);
	lost = store_lost(r);
	store_ring_fill(r);
	if (r->status_line)
		print_status(r, &st, now, lost);
	r->tick_events = st.events;
	r->last_tick_ns = now;
}

static void check_limits(struct recorder *r, uint64_t now)
{
	struct st_writer_stats st;

	if (r->opts.duration_ns && now - r->start_ns >= r->opts.duration_ns)
		r->stop_reason = "duration reached";
	if (r->opts.max_size) {
		st_writer_stats(r->w, &st);
		if (st.file_bytes >= r->opts.max_size)
			r->stop_reason = "size limit reached";
	}
}

static void run_loop(struct recorder *r)
{
	struct epoll_event evs[4];

	r->last_tick_ns = rec_now_ns();
	while (!r->stop_reason) {
		int n = epoll_wait(r->epfd, evs, 4, -1);
		uint64_t now, expirations;

		if (n < 0 && errno != EINTR) {
			r->stop_reason = "epoll failed";
			break;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == r->sigfd)
				on_signal(r);
			else if (evs[i].data.fd == r->timerfd) {
				if (read(r->timerfd, &expirations, sizeof(expirations)) < 0)
					r->stop_reason = "timer failed";
				rec_probes_flush(&r->probes, rec_now_ns() - DRAIN_INTERVAL_NS);
			}
		}
		rec_ring_drain(&r->probes.ring);
		rec_sink_reap(&r->sink);
		now = rec_now_ns();
		rec_meta_release(r->tracker, r->w, now - META_HOLD_NS);
		if (r->pending_trigger && !r->stop_reason)
			start_dump(r, now);
		if (r->dump && now >= r->dump_until && !r->stop_reason)
			end_dump(r, now);
		if (rotating(r) && !r->stop_reason && rotation_due(r, now))
			rotate(r, now);
		if (!r->stop_reason)
			seal_waiting(r, now);
		if (now - r->last_tick_ns >= TICK_NS && !r->stop_reason)
			tick(r, now);
		if (!r->stop_reason)
			check_limits(r, now);
	}
}

/* ---- the end ---------------------------------------------------------- */

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
		(unsigned long long)st->events, (unsigned long long)lost,
		(double)st->raw_bytes / 1e6, file_mb,
		st->events ? file_mb * 1e6 / (double)st->events : 0.0,
		(double)(end_ns - r->start_ns) / 1e9, cpu, (unsigned long long)r->sink.writes, avg_ms,
		(double)r->sink.lat_max_ns / 1e6);
}

/* Drain what the probes left, write the closing metadata and footer. 0 or REC_EXIT_FAIL. */
static int finish(struct recorder *r)
{
	struct st_writer_stats st;
	uint64_t end_ns, lost;

	/* the window closes for every probe at once; detaching takes a while */
	rec_probes_set_window(&r->probes, 0);
	end_ns = rec_now_ns();
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
	rec_probes_store_runs(&r->probes, r->w);
	lost = store_lost(r);
	store_ring_fill(r);
	st_writer_stats(r->w, &st);
	summary(r, &st, end_ns, lost);
	if (r->opts.ring_bytes) {
		if (r->dump)
			end_dump(r, end_ns);
		st_writer_close(r->w, NULL, 0);	/* into the ring, which goes with it */
		r->w = NULL;
		fprintf(stderr, "%s: %u trigger%s (during a dump or --trigger-gap: ignored), %u "
			"file%s written\n", REC_NAME, r->triggers, r->triggers == 1 ? "" : "s",
			r->dumps_written, r->dumps_written == 1 ? "" : "s");
		return r->write_failed ? REC_EXIT_FAIL : 0;
	}
	return close_file(r, &r->w, r->path, end_ns, false);
}

static int record(struct recorder *r)
{
	char err[512], ts[32];
	int ret;

	if (rec_probes_start(&r->probes, &r->sel, &r->filters, r->opts.ringbuf_size, on_batch, r,
			 err, sizeof(err)))
		return fail("probes", err);
	ret = open_loop(r);
	if (ret)
		return ret;
	if (rotating(r) && !(r->lost_base = calloc((size_t)r->probes.ncpus + 1, sizeof(*r->lost_base))))
		return fail("memory", strerror(ENOMEM));
	/* every probe is attached: the window opens for all of them at once */
	r->start_ns = rec_meta_clock(r->w, "clock.realtime_offset_ns");
	rec_probes_set_window(&r->probes, r->opts.duration_ns ? r->start_ns + r->opts.duration_ns :
			  UINT64_MAX);
	r->file_start_ns = r->start_ns;
	r->trigger.armed_ns = r->start_ns + META_HOLD_NS;
	snprintf(ts, sizeof(ts), "%llu", (unsigned long long)r->start_ns);
	st_writer_set_meta(r->w, "record.start_ts", ts);
	set_meta_u64(r->w, "record.ringbuf_bytes", r->probes.ring.mask + 1);
	set_meta_u64(r->w, "record.ringbuf_used_max_bytes", 0);
	/* tests and scripts wait for this line before starting their workload */
	fprintf(stderr, "%s: recording %zu probes into %s\n", REC_NAME, r->probes.nlinks,
		r->opts.ring_bytes ? "the ring" : r->path);
	if (r->child)
		release_command(r);
	r->status_line = isatty(STDERR_FILENO);
	r->start_cpu = cpu_seconds();
	run_loop(r);
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
		return fail("probes", err);
	if (rec_tracepoints_resolve(&r->sel, err, sizeof(err)))
		return usage_error(REC_NAME, "%s", err);
	/* blocked before the fork, so no SIGCHLD is missed; the loop reads them from a signalfd */
	loop_signals(&mask);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* before the fork: the command's standard output must not reach the stream */
	if (!strcmp(r->opts.output, "-") && (ret = open_stdout(r)))
		return ret;
	if (r->opts.cmd) {
		ret = start_command(r);
		if (ret)
			return ret;
		r->filters.pid = r->child;
	}
	ret = open_output(r);
	if (ret)
		return ret;
	rec_probes_resolve_stamps(&r->sel, &r->filters, r->opts.no_stamps);
	return open_writer(r, argc, argv);
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
	end_command(&r);
	if (r.child && r.child_done && ret != REC_EXIT_USAGE)
		ret = ret ? ret : r.child_status;
	rec_selection_free(&r.sel);
	rec_opts_free(&r.opts);
	return ret;
}
