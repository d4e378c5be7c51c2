/* SPDX-License-Identifier: MIT */
/*
 * replay.h - st-replay: re-issue the I/O of a .sttrace file through io_uring.
 *
 *   rp_plan_build(&plan, &opts, &err)     trace -> the I/Os to issue, in time order
 *   rp_targets_open(&plan, &opts, &err)   open the targets, refuse unsafe ones
 *   rp_engine_run(&plan, &opts, &result)  issue them: schedule, queue depth, order
 *   rp_report_text / rp_report_json       achieved against recorded
 *
 * Block level: every request the device was issued (block_rq_issue, after
 * merges), or with --bios every bio as queued, becomes one I/O on the target
 * its device maps to. File level: every data syscall the correlator
 * (analyze/lib/correlate.h) turned into an I/O becomes one I/O on a file under
 * the target directory, in a stream per recorded thread: an I/O of a stream
 * starts only after the one before it returned, as it did when recorded.
 *
 * Errors: functions that can fail return 0 or -1 with one line naming the
 * bad input in err; only main() prints.
 */
#ifndef RP_REPLAY_H
#define RP_REPLAY_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "analyze/lib/correlate.h"
#include "analyze/lib/sketch.h"

enum rp_level { RP_LEVEL_AUTO, RP_LEVEL_BLOCK, RP_LEVEL_FILE };
enum rp_timing { RP_TIMING_ORIGINAL, RP_TIMING_AFAP, RP_TIMING_SCALE };

#define RP_MAX_MAPS	64
#define RP_MAX_THREADS	256

struct rp_map {
	const char *dev;	/* as given: "loop0", "/dev/loop0" or "7:0" */
	const char *path;
};

struct rp_opts {
	const char *file;
	enum rp_level level;
	int bios;		/* block level: bios as queued instead of requests */
	const char *target;	/* block: device or file for every device; file: directory */
	struct rp_map maps[RP_MAX_MAPS];
	unsigned nmaps;
	enum rp_timing timing;
	double scale;		/* planned time = recorded time * scale */
	unsigned qd;		/* in flight over all threads */
	unsigned threads;	/* submitting threads; 0: one per recorded CPU (block) or thread (file), at most the CPUs online */
	int allow_write, wrap;
	int force_in_use;	/* --force-in-use: write even to a target mounted, held or backing a loop device */
	uint64_t max_io;	/* longest I/O replayed, bytes: each thread holds buffers of the longest */
	unsigned align;		/* 0: the target's logical block size (block level), 1 (file) */
	const char *from, *to;	/* times as given (st_parse_time), NULL: the trace's ends */
	const char *dev, *comm;
	int64_t pid;		/* -1 any */
	unsigned loops;
	const char *report_json;
	int force;		/* --force: the report may go through a symlink or to a non-regular file */
	int progress;		/* 1: a status line each second on stderr */
};

void rp_opts_init(struct rp_opts *o);

/* One I/O to issue. */
struct rp_io {
	uint64_t at;		/* recorded start, ns since the first I/O of the plan */
	uint64_t offset;	/* bytes, on the target */
	uint64_t rec_lat;	/* recorded latency in ns (issue to complete, or the syscall), 0 unknown */
	uint32_t len;		/* bytes; 0 for flush/fsync */
	uint32_t target;	/* index into plan->targets */
	uint32_t next;		/* file level: the next I/O of the same thread, RP_NONE at its end */
	uint8_t op;		/* enum an_op: READ, WRITE, FLUSH, DISCARD or FSYNC */
	uint8_t flags;		/* RP_IO_* */
	uint16_t cpu;		/* block level: recorded CPU, numbered 0.. in order of first use */
};

#define RP_NONE		UINT32_MAX
#define RP_IO_FUA	1u	/* write with forced unit access: issued with RWF_DSYNC */
#define RP_IO_DATASYNC	2u	/* fdatasync rather than fsync */

struct rp_target {
	char *name;		/* recorded: device name, or the file's path or "fd PID/FD" */
	char *path;		/* as opened */
	uint32_t dev;		/* block level: recorded device (kernel dev_t) */
	int fd;
	int direct;		/* opened with O_DIRECT */
	int is_blkdev;
	uint64_t size;		/* bytes */
	uint64_t need;		/* highest recorded offset + length */
	uint64_t writes;	/* I/Os that change data: writes and discards */
};

struct rp_plan {
	enum rp_level level;
	struct rp_io *ios;
	size_t nios, cap;
	struct rp_target *targets;
	uint32_t ntargets;
	uint32_t *stream_first;	/* file level: first I/O of each recorded thread */
	uint32_t nstreams;
	uint32_t ncpus;		/* block level: CPUs the I/Os were recorded on (at most 65536) */
	uint64_t span;		/* recorded ns from the first to the last I/O start: the schedule */
	uint64_t rec_elapsed;	/* recorded ns from the first I/O's start to the last completion */
	uint64_t rec_bytes;
	uint64_t skipped;	/* recorded I/Os not replayable (unmapped device, failed call) */
	char input_note[256];	/* "" or what the reader said of a damaged input */
};

/* 0; -1 with the reason in err; -2 when the options contradict each other (a usage error). */
int rp_plan_build(struct rp_plan *p, const struct rp_opts *o, char *err, size_t cap);
void rp_plan_free(struct rp_plan *p);

/*
 * Open every target of the plan (block: the mapped devices or files; file:
 * files under the target directory, created and filled to cover their
 * recorded offsets) after the safety checks: writes need --allow-write; a
 * target written that a file system or another device uses (mounted, held,
 * claimed elsewhere, a loop device's backing, itself or through an overlay,
 * a loop device sharing its backing file) is
 * refused without --force-in-use; a file-level file is never a symbolic
 * link and its fill must fit in the space free; a target smaller than the
 * highest recorded offset (without --wrap) is refused. Applies --align and
 * --wrap to the plan's offsets.
 */
int rp_targets_open(struct rp_plan *p, const struct rp_opts *o, char *err, size_t cap);
void rp_targets_close(struct rp_plan *p);

/* What a replay achieved. */
struct rp_result {
	unsigned threads;		/* submitting threads used */
	uint64_t issued, completed, failed, bytes;
	uint64_t elapsed_ns;		/* first submission to last completion: the rates' span */
	int interrupted;		/* stopped by SIGINT/SIGTERM */
	int first_errno;		/* of the first failed I/O, 0 none */
	struct an_qest lat[AN_OP_COUNT];	/* achieved: submission to completion */
	struct an_qest rec_lat[AN_OP_COUNT];	/* recorded, of the I/Os issued */
	struct an_qest slip;		/* submission against plan (original/scale timing) */
	uint64_t late_ios;		/* I/Os submitted more than 1 ms after their plan */
	uint64_t late_qd_full;		/* of those, due while --qd I/Os were in flight */
};

/* Set by the SIGINT/SIGTERM handler: stop issuing, drain, report. */
extern volatile int rp_stop;

/*
 * Threads: the plan is split over o->threads submitting threads (0: one per
 * recorded CPU at block level, as btreplay does, or per recorded thread at
 * file level, as one fio job per thread would, at most the CPUs online;
 * never more than o->qd or than those lanes), each with its own io_uring
 * and its share of o->qd.
 * Block level gives thread k the I/Os of the recorded CPUs c with
 * c % threads == k; file level gives it the recorded threads s with
 * s % threads == k, whose chains keep their order. r->threads says how
 * many ran.
 */
int rp_engine_run(const struct rp_plan *p, const struct rp_opts *o, struct rp_result *r,
		  char *err, size_t cap);
void rp_result_free(struct rp_result *r);

void rp_report_text(const struct rp_plan *p, const struct rp_opts *o, struct rp_result *r, FILE *out);
int rp_report_json(const struct rp_plan *p, const struct rp_opts *o, struct rp_result *r,
		   const char *path, char *err, size_t cap);

#endif /* RP_REPLAY_H */
