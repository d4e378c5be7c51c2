/* SPDX-License-Identifier: MIT */
/*
 * recorder.h - st-record's state while it records, shared by its parts:
 * the records and the recording's end (main.c), the `-- CMD` process
 * (command.c), the output files, rotation and flight-recorder dumps
 * (files.c), and the event loop (loop.c).
 */
#ifndef RECORDER_H
#define RECORDER_H

#include <signal.h>

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
/*
 * A stream output that takes nothing more (a stalled pipe) gets this long
 * after the recording's end to take the rest of the file: st-record ends
 * within about this of SIGINT, SIGTERM or -t whatever its output does.
 */
#define REC_STREAM_END_WAIT_NS	1000000000ull


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
	uint64_t drain_gap_stored;	/* record.drain_gap_max_ns last set */
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

/* "st-record: WHAT: WHY" on stderr; returns REC_EXIT_FAIL. */
int rec_fail(const char *what, const char *why);
/* A recording that never started: its file is removed, so that nothing reads it as an empty one. */
void rec_discard_output(struct recorder *r);
/* The output failed: stop, and skip the final drain, which would only write more. */
void rec_stop_for_write_error(struct recorder *r);
/*
 * Stores the lost counts into w, less what earlier rotated files hold (with
 * `rebase`, this file's counts become the base of the next); returns the
 * recording's total. rec_store_lost: into the file being written.
 */
uint64_t rec_store_lost_into(struct recorder *r, struct st_writer *w, bool rebase);
uint64_t rec_store_lost(struct recorder *r);

/* command.c: fork the command (its pid goes into the filter), exec it once the probes are attached */
int rec_command_start(struct recorder *r);
void rec_command_release(struct recorder *r);
/* Collect its exit status if it has exited (wait: until it has). */
void rec_command_reap(struct recorder *r, bool wait);
/* The recording stopped first: SIGTERM, then SIGKILL after a grace period. */
void rec_command_end(struct recorder *r);

/* files.c */
int rec_open_stdout(struct recorder *r);
bool rec_rotating(const struct recorder *r);
int rec_open_output(struct recorder *r);
int rec_open_writer(struct recorder *r, int argc, char **argv);
void rec_set_meta_u64(struct st_writer *w, const char *key, uint64_t v);
int rec_close_file(struct recorder *r, struct st_writer **w, const char *path, uint64_t end_ns,
		   bool rebase_lost);
void rec_rotate(struct recorder *r, uint64_t now);
bool rec_rotation_due(const struct recorder *r, uint64_t now);
void rec_dump_start(struct recorder *r, uint64_t now);
void rec_dump_end(struct recorder *r, uint64_t now);

/* loop.c */
void rec_loop_signals(sigset_t *mask);
int rec_loop_open(struct recorder *r);
void rec_store_ring_fill(struct recorder *r);
void rec_loop_run(struct recorder *r);

#endif /* RECORDER_H */
