/* SPDX-License-Identifier: MIT */
/*
 * files.c - where st-record's records go: the output file or standard
 * output, the next file of a --rotate set, and a --ring's dumps.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "record/recorder.h"

/*
 * `-o -`: the trace goes to what standard output was; standard output itself
 * (st-record's and the command's) becomes standard error, so nothing else
 * lands inside the stream. Done before the command is forked.
 */
int rec_open_stdout(struct recorder *r)
{
	if (isatty(STDOUT_FILENO))
		return rec_fail("-o -", "standard output is a terminal; pipe it or redirect it to a file");
	r->out_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (r->out_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		return rec_fail("-o -", strerror(errno));
	return 0;
}

bool rec_rotating(const struct recorder *r)
{
	return r->opts.rotate_bytes || r->opts.rotate_ns;
}

/* The file the recording starts with (none in ring mode, which writes only dumps). */
int rec_open_output(struct recorder *r)
{
	struct rec_filters *f = &r->filters;
	struct stat st;
	char why[160];

	if (r->opts.ring_bytes)
		return 0;
	r->file_index = 1;
	if (rec_rotating(r))
		rec_flight_name(r->opts.output, "", r->file_index, r->path, sizeof(r->path));
	else
		snprintf(r->path, sizeof(r->path), "%s", r->opts.output);
	if (strcmp(r->path, "-")) {
		r->out_fd = st_output_open(r->path, r->opts.force ? ST_OUTPUT_FORCE : 0, why,
					   sizeof(why));
		if (r->out_fd < 0)
			return rec_fail(r->path, why);
	}
	if (fstat(r->out_fd, &st))
		return rec_fail(r->path, strerror(errno));
	/* Our own writes reach a traced disk: mark them so their block events are dropped. */
	f->mark_self_bios = !f->pid && !f->comm && !f->cgroup_id && !f->blkcg_id &&
			    rec_filters_disk_traced(f, st.st_dev);
	f->self_ino = st.st_ino;
	f->self_sdev = major(st.st_dev) << 20 | minor(st.st_dev);
	return 0;
}

void rec_discard_output(struct recorder *r)
{
	if (!r->opts.ring_bytes && r->path[0] && strcmp(r->path, "-"))
		unlink(r->path);
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
		return rec_fail(path, *w ? st_writer_errmsg(*w) : "cannot start the writer");
	return 0;
}

/* The io_uring sink over r->out_fd. */
static int open_sink(struct recorder *r)
{
	/* a compressed chunk is at most slightly larger than its raw bytes */
	size_t buf_size = r->opts.chunk_size + r->opts.chunk_size / 16 + (64u << 10);
	int ret = rec_sink_init(&r->sink, r->out_fd, r->opts.qd, buf_size, r->opts.stream_buffer);

	return ret ? rec_fail(r->path, strerror(-ret)) : 0;
}

int rec_open_writer(struct recorder *r, int argc, char **argv)
{
	int ret;

	if (r->opts.ring_bytes) {
		if (rec_flight_ring_init(&r->ring, r->opts.ring_bytes, r->opts.chunk_size))
			return rec_fail("memory", strerror(ENOMEM));
		ret = new_writer(r, &r->ring.sink, &r->w, "ring");
	} else {
		ret = open_sink(r);
		ret = ret ? ret : new_writer(r, &r->sink.sink, &r->w, r->path);
	}
	if (ret)
		return ret;
	rec_meta_static(r->w, argc, argv, &r->opts);
	rec_probes_store_missing(&r->sel, r->w);
	rec_meta_devices(r->w);
	rec_meta_procs(r->w);
	rec_meta_blkcgs(NULL, r->w);
	if (r->filters.pid)
		rec_meta_open_files(r->w, r->filters.pid);
	rec_meta_paths(r->w, r->opts.files, r->opts.nfiles);
	r->tracker = rec_meta_tracker_new();
	if (r->tracker) {
		rec_meta_note_cgroup(r->tracker, r->filters.cgroup_id);
		rec_meta_note_blkcg(r->tracker, r->filters.blkcg_id);
	}
	if (r->opts.trigger) {
		rec_flight_trigger_parse(r->opts.trigger, &r->trigger);
		r->trigger.rqs = calloc(FLIGHT_PAIRS, sizeof(*r->trigger.rqs));
		r->trigger.bios = calloc(FLIGHT_PAIRS, sizeof(*r->trigger.bios));
		if (!r->trigger.rqs || !r->trigger.bios)
			return rec_fail("memory", strerror(ENOMEM));
	}
	return r->tracker ? 0 : rec_fail("memory", strerror(ENOMEM));
}

void rec_set_meta_u64(struct st_writer *w, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	st_writer_set_meta(w, key, buf);
}

/* Close a file's writer and its sink; 0, or REC_EXIT_FAIL after saying why. */
int rec_close_file(struct recorder *r, struct st_writer **w, const char *path, uint64_t end_ns,
		   bool rebase_lost)
{
	char errmsg[256] = "";
	int ret;

	rec_set_meta_u64(*w, "record.end_ts", end_ns);
	/* sampled again: a reader can tell a wall clock stepped during the file */
	rec_meta_clock(*w, "clock.realtime_offset_end_ns");
	rec_store_lost_into(r, *w, rebase_lost);
	ret = st_writer_close(*w, errmsg, sizeof(errmsg));
	*w = NULL;
	if (r->status_line)
		fputc('\n', stderr);
	if (ret && r->sink.unwritten) {
		fprintf(stderr, "%s: %s: the output took no more for %.1f s after the end: the last "
			"%llu bytes of the file not written; it ends at its last complete chunk "
			"(st-format recover makes it whole)\n", REC_NAME, path,
			(double)REC_STREAM_END_WAIT_NS / 1e9, (unsigned long long)r->sink.unwritten);
		rec_stop_for_write_error(r);
		return REC_EXIT_FAIL;
	}
	if (ret) {
		fprintf(stderr, "%s: %s: %s; recording stopped, the file keeps every complete "
			"chunk written before (st-format recover makes it whole)\n", REC_NAME, path,
			errmsg);
		rec_stop_for_write_error(r);
		return REC_EXIT_FAIL;
	}
	fprintf(stderr, "%s: wrote %s\n", REC_NAME, path);
	return 0;
}

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
static const struct st_sink discard_sink = { .write = discard_write, .sync = discard_sync };

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
		rec_fail(r->path, why);
		rec_stop_for_write_error(r);
		return REC_EXIT_FAIL;
	}
	if (open_sink(r) || new_writer(r, &r->sink.sink, w, r->path)) {
		rec_stop_for_write_error(r);
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
void rec_rotate(struct recorder *r, uint64_t now)
{
	struct st_writer *old = r->w, *next = NULL;
	char old_path[sizeof(r->path)];

	rec_meta_cgroups(r->tracker, old);
	rec_meta_blkcgs(r->tracker, old);
	if (st_writer_flush(old)) {
		rec_stop_for_write_error(r);
		return;
	}
	/* the new writer needs the sink the old one still uses: keep its metadata in a scratch writer */
	if (new_writer(r, &discard_sink, &next, "metadata")) {
		rec_stop_for_write_error(r);
		return;
	}
	copy_meta(next, old);
	snprintf(old_path, sizeof(old_path), "%s", r->path);
	/* a follower of the set (st-analyze --follow 'run.*.sttrace') waits for it */
	rec_flight_name(r->opts.output, "", r->file_index + 1, r->path, sizeof(r->path));
	st_writer_set_meta(r->w, "record.next_file", basename(r->path));
	if (rec_close_file(r, &r->w, old_path, now, true))
		goto out;
	close_out_fd(r);
	rec_flight_name(r->opts.output, "", ++r->file_index, r->path, sizeof(r->path));
	if (open_next(r, &r->w))
		goto out;
	copy_meta(r->w, next);
	r->seal_events = 0;
	rec_set_meta_u64(r->w, "record.start_ts", now);
	rec_set_meta_u64(r->w, "record.file_index", r->file_index);
	r->file_start_ns = now;
	if (r->opts.keep && r->file_index > r->opts.keep) {
		rec_flight_name(r->opts.output, "", r->file_index - r->opts.keep, old_path, sizeof(old_path));
		if (!unlink(old_path))
			fprintf(stderr, "%s: removed %s (--keep %u)\n", REC_NAME, old_path, r->opts.keep);
	}
out:
	st_writer_close(next, NULL, 0);
}

bool rec_rotation_due(const struct recorder *r, uint64_t now)
{
	struct st_writer_stats st;

	if (r->opts.rotate_ns)
		return now - r->file_start_ns >= r->opts.rotate_ns;
	st_writer_stats(r->w, &st);
	return st.file_bytes >= r->opts.rotate_bytes;
}

/* A trigger in ring mode: the ring and what follows for --after go into a file of their own. */
void rec_dump_start(struct recorder *r, uint64_t now)
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
	rec_set_meta_u64(r->dump, "trigger.ts", hit->ts);
	if (hit->rq) {
		snprintf(dev, sizeof(dev), "%u:%u", hit->dev >> 20, hit->dev & 0xfffff);
		snprintf(err, sizeof(err), "0x%llx", (unsigned long long)hit->rq);
		st_writer_set_meta(r->dump, "trigger.rq", err);
		st_writer_set_meta(r->dump, "trigger.dev", dev);
		rec_set_meta_u64(r->dump, "trigger.sector", hit->sector);
		rec_set_meta_u64(r->dump, "trigger.latency_ns", hit->latency_ns);
	}
	rec_set_meta_u64(r->dump, "record.start_ts", now);
	if (rec_flight_ring_dump(&r->ring, r->dump, err, sizeof(err))) {
		rec_fail(r->path, err);
		rec_stop_for_write_error(r);
		return;
	}
	fprintf(stderr, "%s: trigger %u (%s): writing %s (%.1f s before, %.1f s after; "
		"older chunks dropped so far: %.2f MB)\n", REC_NAME, r->triggers, r->reason, r->path,
		(double)rec_flight_ring_span_ns(&r->ring) / 1e9, (double)r->opts.after_ns / 1e9,
		(double)r->ring.dropped / 1e6);
	r->dump_until = now + r->opts.after_ns;
}

void rec_dump_end(struct recorder *r, uint64_t now)
{
	copy_meta(r->dump, r->w);
	if (!rec_close_file(r, &r->dump, r->path, now, false))
		r->dumps_written++;
	close_out_fd(r);
	r->dump_end_ns = now;
	if (r->opts.max_triggers && r->dumps >= r->opts.max_triggers)
		r->stop_reason = "--max-triggers reached";
}
