/* SPDX-License-Identifier: MIT */
/*
 * record.h - the parts of st-record: options (options.c), probe selection and
 * loading (probes.c), the io_uring output sink (sink.c), metadata (meta.c)
 * and the recording itself (recorder.h: main.c, loop.c, files.c, command.c).
 */
#ifndef RECORD_H
#define RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <liburing.h>

#include "format/lib/sttrace.h"
#include "bpf/sttrace_bpf.h"

#define REC_TOOL	"st-record " ST_VERSION
#define REC_NAME	"st-record"

/* Exit codes scripts rely on; with `-- CMD` the command's status instead. */
#define REC_EXIT_OK	0
#define REC_EXIT_FAIL	1
#define REC_EXIT_USAGE	2

/* Event type ids go up to 255 (one byte of room in every table indexed by them). */
#define REC_MAX_TYPE	256

/* Everything the user asked for, from the config file then the command line. */
struct rec_opts {
	const char *output;
	uint64_t rotate_bytes;		/* --rotate SIZE: a new file past this many bytes */
	uint64_t rotate_ns;		/* --rotate DURATION: a new file after this long */
	unsigned keep;			/* --keep N: rotated files kept, 0 = all */
	uint64_t ring_bytes;		/* --ring SIZE: flight recorder mode, 0 = off */
	uint64_t after_ns;		/* --after T: recorded after a trigger */
	uint64_t trigger_gap_ns;	/* --trigger-gap T: triggers closer than this are ignored */
	unsigned max_triggers;		/* --max-triggers N, 0 = no limit */
	const char *trigger;		/* --trigger 'STAGE>TIME' */
	bool force;			/* --force: output through a symlink or to a non-regular file */
	uint64_t duration_ns;		/* 0 = until a signal or the command's exit */
	uint64_t max_size;		/* bytes of output, 0 = unlimited */
	const char *events;		/* presets and tracepoint names, comma separated */
	pid_t pid;			/* 0 = any */
	const char *comm;
	const char *cgroup;
	const char *device;
	unsigned qd;			/* output writes in flight */
	uint64_t stream_buffer;		/* --stream-buffer: bytes a stream output may hold back */
	uint64_t ringbuf_size;
	int zstd_level;
	uint64_t chunk_size;
	uint64_t flush_ns;		/* --flush-interval: a chunk waits at most this long */
	const char *config;
	const char **files;		/* select_target.files: paths to resolve to inodes */
	size_t nfiles;
	char **cmd;			/* after `--`, NULL-terminated; NULL = none */
	bool no_stamps;			/* take every block stage from its own probe */
	bool verbose;
};

/*
 * Parse the command line (and the --config file it names) into *o.
 * Returns 0 to go on, REC_EXIT_USAGE after printing the error, or -1 when
 * --help was printed (exit 0).
 */
int rec_opts_parse(struct rec_opts *o, int argc, char **argv);
/* The effective options as a JSON object (the `options` metadata); malloc'd. */
char *rec_opts_json(const struct rec_opts *o);
void rec_opts_free(struct rec_opts *o);

/*
 * A tracepoint named at record time, recorded by the generic probe
 * (tracepoint.c, bpf/generic.bpf.c): its schema type, built from the
 * tracepoint's format file, and the layout the probe follows.
 */
struct rec_tracepoint {
	char *name;			/* "subsys:event", the type's name */
	struct st_type type;
	struct st_generic_event layout;
};

/* Which event types to enable; required ones were named explicitly. */
struct rec_selection {
	bool on[REC_MAX_TYPE];
	bool required[REC_MAX_TYPE];
	char **patterns;		/* names not built in: SUBSYS:NAME, globs, NAME */
	size_t npatterns;
	struct rec_tracepoint *tps;	/* the tracepoints they resolved to */
	size_t ntps;
	/* the program of an event whose tracepoint this kernel has in another form (probes.c) */
	const char *form[REC_MAX_TYPE];
	char *missing[REC_MAX_TYPE];	/* why an event the presets select is not on this kernel */
};
/*
 * Fills *sel from "block,sys_enter_fsync,ext4:*,..."; names that are not
 * built in are kept as patterns. Message in err on a bad list.
 */
int rec_events_select(const char *spec, struct rec_selection *sel, char *err, size_t cap);
/*
 * Resolve sel->patterns against tracefs (mounted: after rec_probes_check): a
 * built-in event selects its typed probe, any other tracepoint gets the
 * generic one. A pattern that matches nothing is an error naming the closest
 * tracepoints. Message in err.
 */
int rec_tracepoints_resolve(struct rec_selection *sel, char *err, size_t cap);
/* Declare the resolved tracepoints' types in the writer's schema. */
int rec_tracepoints_add_types(struct st_writer *w, const struct rec_selection *sel);
void rec_selection_free(struct rec_selection *sel);
/* The event types st-record has probes for (events.c), by name. */
struct rec_event {
	uint16_t type;
	const char *name;
};

#define ST_EVENT_COUNT_ONE(id, name, payload, kind) + 1
#define REC_NEVENTS (0 ST_EVENT_TYPES(ST_EVENT_COUNT_ONE))
extern const struct rec_event rec_events[REC_NEVENTS];

bool rec_has_prefix(const char *s, const char *prefix);
/* Tracepoint name of an event type ("block/block_rq_issue"), NULL if unknown. */
const char *rec_event_tracepoint(uint16_t type, char *buf, size_t cap);
/*
 * The BPF program that emits an event type: the one named after it, but
 * block_rq_inode's and block_rq_cgroup's records come from the issue programs
 * (block_rq_issue_stamped, block_rq_issue).
 */
const char *rec_event_program(uint16_t type);

/* In-kernel filters, resolved from the options before the probes load. */
struct rec_filters {
	uint32_t self_tgid;
	pid_t pid;				/* the -p process (or the command), 0 = none */
	const char *comm;
	uint64_t cgroup_id;			/* --cgroup of a v2 group */
	uint64_t blkcg_id;			/* --cgroup of a v1 blkio group */
	uint32_t devs[ST_MAX_FILTER_DEVS];	/* kernel dev_t; devs[0] is the disk */
	uint32_t ndevs;
	bool mark_self_bios;
	uint64_t self_ino;			/* the output file, whose writeback is ours */
	uint32_t self_sdev;			/* its file system (kernel dev_t) */
};
/* Resolve -d DEVICE to its disk and partitions; message in err on failure. */
int rec_filters_set_device(struct rec_filters *f, const char *device, char *err, size_t cap);
/* Resolve --cgroup PATH to its id; message in err on failure. */
int rec_filters_set_cgroup(struct rec_filters *f, const char *path, char *err, size_t cap);
/* Whether the disk holding the output (st_dev of its file system) is traced. */
bool rec_filters_disk_traced(const struct rec_filters *f, dev_t output_dev);

/* Called for each record drained from the ring buffer; non-zero stops the drain. */
typedef int (*rec_event_fn)(void *ctx, void *data, size_t size);

/* The BPF ring buffer, mapped and read in batches (ring.c). */
struct rec_ring {
	int fd;				/* the map: pollable, wakes at the fill threshold */
	uint64_t *consumer_pos;		/* ours to advance */
	const uint64_t *producer_pos;
	const char *data;
	uint64_t mask;
	size_t map_size, page;
	uint64_t fill_max;		/* most bytes waiting at a drain so far */
	uint64_t last_drain_ns, gap_max_ns;	/* the last drain, the longest time between two */
	rec_event_fn fn;
	void *ctx;
};
int rec_ring_open(struct rec_ring *ring, int map_fd, rec_event_fn fn, void *ctx);
/* Hand every record submitted so far to fn; fn's first non-zero return, or 0. */
int rec_ring_drain(struct rec_ring *ring);
void rec_ring_close(struct rec_ring *ring);

struct sttrace_bpf;
struct bpf_link;

/* A program's runs and run time (BPF statistics). */
struct rec_runs {
	uint64_t runs, ns;
};

struct rec_probes {
	struct sttrace_bpf *skel;
	struct bpf_link **links;	/* a typed probe per event type, the generic one per tracepoint */
	size_t nlinks;
	struct rec_ring ring;
	int ncpus;			/* possible CPUs: entries of the lost counter */
	int flush_fd;			/* flush_stage, run on a CPU by rec_probes_flush() */
	const struct st_stage_age *ages;	/* per possible CPU, mapped */
	size_t ages_size;
	uint64_t *lost;			/* per CPU, last read */
	/* per program (rec_probes_set_window): */
	struct rec_runs runs_opening[REC_MAX_TYPE];	/* just before the window opened */
	struct rec_runs runs_opened[REC_MAX_TYPE];	/* once the runs under way then had ended */
	struct rec_runs runs_in_window[REC_MAX_TYPE];	/* wholly in the window: each saw it open */
	uint64_t runs_at_edges[REC_MAX_TYPE];		/* under way as it opened or closed */
	bool runs_known;		/* both edges were waited out */
};
/*
 * Check the environment (root, BTF, tracefs) and the selected tracepoints:
 * missing optional ones are reported and dropped from *sel, a missing one
 * named explicitly is an error. Message in err.
 */
int rec_probes_check(struct rec_selection *sel, char *err, size_t cap);
/* After rec_tracepoints_resolve(): whether this kernel can record the SUBSYS:NAME tracepoints. */
int rec_probes_check_generic(const struct rec_selection *sel, char *err, size_t cap);
/* The metadata `missing.<event>`: each event of the selection this kernel could not give, and why. */
void rec_probes_store_missing(const struct rec_selection *sel, struct st_writer *w);

/* What the running kernel's BTF offers the probes (kernel.c). */
struct btf;
/* rq->rq_flags' flush-sequence bit: the enumerator __RQF_FLUSH_SEQ's, else the old macro's. */
uint32_t rec_kernel_rqf_flush_seq(const struct btf *btf);
/* An enum of the kernel's BTF has the enumerator (BPF_FUNC_get_attach_cookie: the helper). */
bool rec_kernel_has_enumerator(const struct btf *btf, const char *name);
/* The kernel has the function (a kfunc) in its BTF. */
bool rec_kernel_has_func(const struct btf *btf, const char *name);
/* The arguments of the tracepoint's BTF prototype (btf_trace_NAME), -1 when it has none. */
int rec_kernel_tp_args(const struct btf *btf, const char *tracepoint);
/* Argument arg (from 0) of the tracepoint's BTF prototype points to struct type. */
bool rec_kernel_tp_arg_is(const struct btf *btf, const char *tracepoint, int arg, const char *type);
/*
 * The `block` preset reads the times the kernel stamps on requests and bios
 * (block_rq_issue_stamped). Where this kernel keeps no such stamp, or
 * no_stamps asks so, or a task filter needs to see bios queued, or -d names
 * a bio-based disk (no requests), add the probe that takes that stage
 * instead to *sel, saying so once on stderr.
 */
void rec_probes_resolve_stamps(struct rec_selection *sel, const struct rec_filters *f, bool no_stamps);
/*
 * Open, configure and load the probes of *sel, attach them and set up the
 * ring buffer reader. Message in err.
 */
int rec_probes_start(struct rec_probes *p, const struct rec_selection *sel, const struct rec_filters *f,
		 uint64_t ringbuf_size, rec_event_fn fn, void *ctx, char *err, size_t cap);
/*
 * The probes run from their attach to their detach but record only while
 * the event clock is below until_ns (bpf/stage.bpf.h, `record_until`):
 * set it once every probe is attached (UINT64_MAX, or the end of -t), and
 * to 0 before detaching, so every probe covers the same window.
 */
void rec_probes_set_window(struct rec_probes *p, uint64_t until_ns);
/* Attach the generic probe to each resolved tracepoint (tracepoint.c). */
int rec_tracepoints_attach(struct rec_probes *p, const struct rec_selection *sel, char *err, size_t cap);
/* Show libbpf's messages (verifier logs) on stderr. */
void rec_probes_set_verbose(bool on);
/*
 * The probes stage records per CPU and hand them to the ring buffer in
 * batches (bpf/stage.bpf.h). Move the staged records of every CPU whose
 * oldest one was taken before `staged_before` (event clock, ns) into the
 * ring buffer: at each drain, so a quiet CPU's records wait about one drain
 * period, and with UINT64_MAX after rec_probes_detach().
 */
void rec_probes_flush(struct rec_probes *p, uint64_t staged_before);
/* Detach every probe: no new events after this returns. */
void rec_probes_detach(struct rec_probes *p);
/* Read the per-CPU lost counters into p->lost; returns their sum. */
uint64_t rec_probes_read_lost(struct rec_probes *p);
/*
 * Probe runs the kernel skipped: a probe is not run while the same probe is
 * running on that CPU (say an interrupt completes requests while the probe
 * of a completion in process context runs). No CPU is known for them.
 */
uint64_t rec_probes_read_skipped(struct rec_probes *p);
/*
 * With the kernel's BPF run-time statistics on (kernel.bpf_stats_enabled or
 * BPF_ENABLE_STATS), store each program's runs and run time over the window
 * (rec_probes_set_window) as metadata `probe.<program>` =
 * "runs=N;run_ns=T;edge_runs=E": N runs began and ended inside it (each
 * recorded, when selected), E were under way as it opened or closed (each
 * may have recorded or not), T is the N runs' time.
 */
void rec_probes_store_runs(struct rec_probes *p, struct st_writer *w);
void rec_probes_stop(struct rec_probes *p);

/*
 * The output: chunk bytes written through io_uring, up to qd in flight; to a
 * stream, from a FIFO of pieces, without blocking (sink.c).
 */
struct rec_piece;
struct rec_sink {
	struct io_uring ring;
	int fd;
	bool stream;			/* a pipe, FIFO or socket: in order, never waited for, no sync */
	uint64_t stream_pos;		/* a stream's next file offset */
	bool own_fd;			/* fd: the stream reopened O_NONBLOCK, ours to close */
	bool restore_flags;		/* or O_NONBLOCK set on the caller's fd: give back saved_flags */
	int saved_flags;
	struct rec_piece *head, *tail;	/* a stream's pieces waiting, oldest first */
	uint64_t queued, queued_max;	/* bytes waiting, now and at most */
	uint64_t queue_bound;		/* --stream-buffer: congested past it */
	uint64_t deadline_ns;		/* the end's wait for the stream gives up then */
	uint64_t unwritten;		/* bytes of the file the stream did not take by then */
	unsigned qd;
	size_t buf_size;
	char *pool;			/* qd buffers of buf_size, registered when possible */
	bool fixed;			/* pool registered with the ring */
	unsigned *free_bufs;
	unsigned nfree;
	unsigned inflight;		/* qd - nfree */
	uint64_t *submit_ns;		/* per buffer, for write latency */
	size_t *lens;			/* per buffer, bytes asked */
	uint64_t *offsets;		/* per buffer, file offset */
	bool syncing;			/* a datasync in flight */
	int err;			/* first error (negative errno), sticky */
	uint64_t writes, lat_sum_ns, lat_max_ns;
	struct st_sink sink;
};
/* stream_bound: --stream-buffer, for a stream output */
int rec_sink_init(struct rec_sink *s, int fd, unsigned qd, size_t buf_size, uint64_t stream_bound);
/* Collect finished writes (and datasync), or write to a stream what it takes, without waiting. */
void rec_sink_reap(struct rec_sink *s);
/*
 * A stream: the closing write of the file (sync) waits for the stream until
 * deadline_ns (event clock), then gives up with -ETIME, `unwritten` bytes short.
 */
void rec_sink_set_deadline(struct rec_sink *s, uint64_t deadline_ns);
/*
 * Start an fdatasync of what is written so far, unless one is in flight; it
 * does not wait. A failure shows in the sink's first error. Returns that
 * error (0 when none yet).
 */
int rec_sink_datasync(struct rec_sink *s);
void rec_sink_exit(struct rec_sink *s);

/* Metadata known at start (and refreshed at end). */
void rec_meta_static(struct st_writer *w, int argc, char **argv, const struct rec_opts *o);
/*
 * The wall clock's offset to the event clock, under key (at the start
 * clock.realtime_offset_ns, at the end clock.realtime_offset_end_ns: they
 * differ when the wall clock was stepped meanwhile), and the event-clock
 * now, in ns.
 */
uint64_t rec_meta_clock(struct st_writer *w, const char *key);
void rec_meta_devices(struct st_writer *w);
void rec_meta_procs(struct st_writer *w);
/* fd.* and inode.* of a process's open files. */
void rec_meta_open_files(struct st_writer *w, pid_t pid);
/* inode.* of the given paths. */
void rec_meta_paths(struct st_writer *w, const char **paths, size_t n);
/*
 * pid.* and fd.* learned from fork/exec/openat exit records as they are drained.
 * Records of different CPUs arrive out of time order, so rec_meta_track holds
 * them and rec_meta_release learns, in time order, those taken before `before`
 * (event clock, ns; UINT64_MAX at the end).
 */
struct rec_meta_tracker;
struct rec_meta_tracker *rec_meta_tracker_new(void);
void rec_meta_track(struct rec_meta_tracker *t, struct st_writer *w, const struct st_event_header *h);
void rec_meta_release(struct rec_meta_tracker *t, struct st_writer *w, uint64_t before);
void rec_meta_tracker_free(struct rec_meta_tracker *t);
/*
 * cgroup.* for the cgroup v2 ids the recording names: rec_meta_note_record
 * notes the id a record that begins an I/O carries (every drained record
 * passes; one compare for most), rec_meta_note_cgroup one id (--cgroup's),
 * and rec_meta_cgroups names those it finds under the cgroup2 mount now.
 */
void rec_meta_note_record(struct rec_meta_tracker *t, const struct st_event_header *h);
void rec_meta_note_cgroup(struct rec_meta_tracker *t, uint64_t id);
void rec_meta_cgroups(const struct rec_meta_tracker *t, struct st_writer *w);
/* One id in the I/O controller's hierarchy to name (--cgroup's of a v1 blkio group). */
void rec_meta_note_blkcg(struct rec_meta_tracker *t, uint64_t id);
/*
 * blkcg.* for every cgroup with an I/O limit (v1 blkio throttle files, v2
 * io.max) under the mounts now, the ids block_bio_held names, and for the
 * groups t noted (block_rq_cgroup's, --cgroup's), NULL none.
 */
void rec_meta_blkcgs(const struct rec_meta_tracker *t, struct st_writer *w);

/*
 * Flight recorder (flight.c). In ring mode the writer's sink is a rec_flight_ring:
 * the most recent compressed events chunks, at most max_bytes of them, kept
 * in memory until a trigger dumps them into a file.
 */
struct rec_flight_piece {
	void *buf;
	size_t len;
	uint64_t first_ts, last_ts;	/* events chunks: their records' time range */
};
struct rec_flight_ring {
	struct st_sink sink;		/* give this to st_writer_open */
	struct rec_flight_piece prefix;	/* the file up to its first events chunk: kept for good */
	bool events_seen;
	struct rec_flight_piece *chunks;	/* a FIFO of the chunks after it */
	size_t head, count, cap;
	uint64_t bytes, max_bytes;
	uint64_t dropped;		/* bytes of older chunks let go to make room */
	uint64_t dropped_until;		/* the newest record of those chunks, 0: none let go */
};
int rec_flight_ring_init(struct rec_flight_ring *fr, uint64_t max_bytes, size_t chunk_size);
void rec_flight_ring_free(struct rec_flight_ring *fr);
/* Time the kept chunks cover whole, ns: every CPU's records, to the newest kept. */
uint64_t rec_flight_ring_span_ns(const struct rec_flight_ring *fr);
/* Append every record kept in the ring to w; 0, or -1 with a message in err. */
int rec_flight_ring_dump(const struct rec_flight_ring *fr, struct st_writer *w, char *err, size_t cap);

/* --trigger 'STAGE>TIME': a request whose D2C (or Q2C) passes the threshold. */
#define FLIGHT_PAIRS 65536u		/* requests (and bios) in flight it follows */
struct rec_flight_pair {
	uint64_t key, ts;
	uint64_t sector;	/* a request's, from its issue: a compact completion has none */
};
struct rec_flight_hit {
	uint64_t latency_ns, ts, rq, sector;
	uint32_t dev, bytes;
};
struct rec_flight_trigger {
	uint64_t threshold_ns;
	/* Requests that started before this do not trigger: in the recording's first
	 * moments a request's bios may have been queued before the probes attached. */
	uint64_t armed_ns;
	bool q2c;
	struct rec_flight_pair *rqs, *bios;	/* FLIGHT_PAIRS each, allocated by the caller */
};
/* "D2C>20ms" or "Q2C>1.5s"; 0 or -1. */
int rec_flight_trigger_parse(const char *s, struct rec_flight_trigger *t);
/* Follow one record; true, and the request in *hit, when it completes one slower than the threshold. */
bool rec_flight_trigger_check(struct rec_flight_trigger *t, const struct st_event_header *h,
			  struct rec_flight_hit *hit);
/* OUTPUT "run.sttrace", tag "" or "trigger-", n 3: "run.0003.sttrace", "run.trigger-0003.sttrace". */
void rec_flight_name(const char *output, const char *tag, unsigned n, char *path, size_t cap);

/* The event clock now (CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns), ns. */
static inline uint64_t rec_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* RECORD_H */
