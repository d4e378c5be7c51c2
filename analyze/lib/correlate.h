/* SPDX-License-Identifier: MIT */
/*
 * correlate.h - raw events in, one record per I/O out.
 *
 * The correlator is fed events in time order (records in the built-in layout
 * of format/lib/sttrace_events.h) and calls `emit` once per I/O when its last stage
 * has been seen. An I/O is, in order of preference:
 *   - a data syscall (read/write/pread64/.../fsync/fdatasync/sync_file_range):
 *     the bios queued by its thread while it is open belong to it;
 *   - an io_uring request (submit_req .. complete, joined by req address):
 *     the bios its submitting thread queues right after submission belong to it;
 *   - a libaio iocb: an iomap_dio_rw_begin inside io_submit and the bios the
 *     thread queues after it;
 *   - a bio blk-throttle held back (ST_F_HELD, queued by its dispatch
 *     worker) joins the oldest syscall or io_uring request of its op
 *     still waiting without a bio, of a thread whose last bio was on its
 *     device;
 *   - otherwise one queued bio (writeback, readahead of other threads, the
 *     `block` preset without syscalls), or a request without bios (a flush
 *     issued by the flush machinery outside any fsync).
 * Bios join requests exactly through the bios[] chain of block_rq_issue, or
 * the bio block_rq_complete names for a request never issued (an fsync's
 * empty PREFLUSH, ended by the kernel's flush sequence after the device
 * flush, whose insert/issue it takes);
 * merged bios complete with the request that absorbed them; the front piece
 * of a split joins its parent's I/O. A syscall or io_uring I/O is emitted at
 * its end even when bios it queued are still in flight (AN_IO_UNJOINED): they
 * go on as an I/O of their own. Memory is bounded by what is in flight:
 * entries leave their maps at completion, and anything older than the stale
 * window is emitted as incomplete.
 */
#ifndef AN_CORRELATE_H
#define AN_CORRELATE_H

#include <stdint.h>

#include "analyze/lib/io.h"
#include "format/lib/sttrace_events.h"

struct an_corr_stats {
	uint64_t events, ios, incomplete, stale, out_of_order;
	uint64_t orphan_exits;		/* syscall exits / uring completions without a start */
	uint64_t orphan_requests;	/* requests whose bios were all queued before the trace */
	uint64_t orphan_completions;	/* completions of requests never seen before */
	uint64_t missing_completions;	/* requests issued again with no completion between */
	uint64_t bios, merges, splits, requeues;
	uint64_t open_ios, open_bios, open_requests;	/* in flight now */
};

typedef void (*an_emit_fn)(void *ctx, const struct an_io *io);

struct an_corr;
struct an_names;

/* stale_ns: I/Os open longer than this are emitted as incomplete (0 = 60 s). */
int an_corr_new(struct an_corr **c, uint64_t stale_ns, an_emit_fn emit, void *ctx);
/*
 * The names the caller keeps current with the events (an_names_event before
 * an_corr_event): each I/O's fd is resolved to its file as the I/O begins.
 * Without them an_io.file stays 0.
 */
void an_corr_set_names(struct an_corr *c, const struct an_names *names);
/*
 * Split each I/O into its causes (analyze/lib/cause.h) from the why events
 * of a recording that has them: an I/O emitted after this carries AN_IO_WHY,
 * and `measured` (1 << AN_CAUSE_*: the causes whose events the recording
 * holds) in an_io.causes. 0, or -1 when out of memory.
 */
int an_corr_enable_causes(struct an_corr *c, unsigned measured);
/* One event, built-in layout, header->size already checked by the caller. */
void an_corr_event(struct an_corr *c, const struct st_event_header *ev);
/*
 * The events of a block laid out as st_cursor_fill() fills it (len bytes),
 * each first into names (an_names_event; NULL: none kept) when it names a
 * task or a file, then into the correlator: an_corr_event() without a
 * call per event.
 */
void an_corr_events(struct an_corr *c, const void *buf, size_t len, struct an_names *names);
/* End of input: everything still open is emitted as incomplete. */
void an_corr_finish(struct an_corr *c);
const struct an_corr_stats *an_corr_stats(struct an_corr *c);
/* 1 after an allocation failed (events were dropped); the caller reports it. */
int an_corr_failed(const struct an_corr *c);
void an_corr_free(struct an_corr *c);
/*
 * 1 for the event types of which each begins at most one I/O (data syscall
 * entries, io_uring submissions, queued bios, issued requests): every I/O
 * emitted begins with one, so their count bounds the I/Os of a trace.
 */
int an_corr_begins_io(uint16_t type);

const char *an_op_name(enum an_op op);
/* Latency between two stage timestamps; 0 when one is missing or out of order. */
static inline int an_io_span(const struct an_io *io, enum an_ts from, enum an_ts to, uint64_t *ns)
{
	if (!io->ts[from] || !io->ts[to] || io->ts[to] < io->ts[from])
		return 0;
	*ns = io->ts[to] - io->ts[from];
	return 1;
}

/* Stage timestamps each stage spans (from, to); total depends on the I/O, Q2Q is none. */
static const uint8_t an_stage_ends[AN_ST_COUNT][2] = {
	[AN_ST_SYS2FS] = { AN_TS_SYS_ENTER, AN_TS_FS_BEGIN },
	[AN_ST_FS]     = { AN_TS_FS_BEGIN, AN_TS_FS_DONE },
	[AN_ST_FS2Q]   = { AN_TS_FS_BEGIN, AN_TS_QUEUE },
	[AN_ST_SYS2Q]  = { AN_TS_SYS_ENTER, AN_TS_HELD_QUEUE },
	[AN_ST_Q2G]    = { AN_TS_QUEUE, AN_TS_GETRQ },
	[AN_ST_G2I]    = { AN_TS_GETRQ, AN_TS_INSERT },
	[AN_ST_I2D]    = { AN_TS_INSERT, AN_TS_ISSUE },
	[AN_ST_D2C]    = { AN_TS_ISSUE, AN_TS_COMPLETE },
	[AN_ST_Q2C]    = { AN_TS_QUEUE, AN_TS_COMPLETE },
	[AN_ST_C2RET]  = { AN_TS_COMPLETE, AN_TS_SYS_EXIT },
	[AN_ST_WB]     = { AN_TS_WB_BEGIN, AN_TS_WB_DONE },
	[AN_ST_JNL]    = { AN_TS_JNL_BEGIN, AN_TS_JNL_DONE },
	[AN_ST_FLUSH]  = { AN_TS_FLUSH_BEGIN, AN_TS_FLUSH_DONE },
	[AN_ST_REAP]   = { AN_TS_SYS_EXIT, AN_TS_REAP },	/* io_uring; libaio: an_io_stage_ends() */
};

/* Ends of stage s (not Q2Q) for io: total runs from the earliest stage it has. */
static inline void an_io_stage_ends(const struct an_io *io, enum an_stage s, enum an_ts *from,
				    enum an_ts *to)
{
	if (s == AN_ST_REAP) {
		/* from the completion the application can take: CQE posted, or iocb done */
		*from = io->ts[AN_TS_SYS_EXIT] ? AN_TS_SYS_EXIT : AN_TS_COMPLETE;
		*to = AN_TS_REAP;
	} else if (s != AN_ST_TOTAL) {
		*from = an_stage_ends[s][0];
		*to = an_stage_ends[s][1];
	} else if (io->ts[AN_TS_SYS_ENTER]) {
		*from = AN_TS_SYS_ENTER;
		*to = AN_TS_SYS_EXIT;
	} else {
		/* a libaio iocb starts at its iomap_dio_rw_begin inside io_submit */
		*from = io->ts[AN_TS_FS_BEGIN] ? AN_TS_FS_BEGIN : io->ts[AN_TS_QUEUE] ? AN_TS_QUEUE :
			io->ts[AN_TS_INSERT] ? AN_TS_INSERT : AN_TS_ISSUE;
		*to = AN_TS_COMPLETE;
	}
}

/* an_io_stage(io, AN_ST_TOTAL, ns), inline (the causes need it for every I/O). */
static inline int an_io_total(const struct an_io *io, uint64_t *ns)
{
	enum an_ts from, to;

	an_io_stage_ends(io, AN_ST_TOTAL, &from, &to);
	return an_io_span(io, from, to, ns);
}

/* The part of a total its causes, which sum to sum, leave (AN_ST_OTHER). */
static inline uint64_t an_io_cause_rest(uint64_t total, uint64_t sum)
{
	/* an_cause_finish() keeps the causes within the total */
	return total > sum ? total - sum : 0;
}

/*
 * an_io_causes() of an I/O whose total is known: has_total, and total
 * when it has one.
 */
static inline unsigned an_io_causes_of(const struct an_io *io, int has_total, uint64_t total,
				       uint64_t ns[AN_ST_COUNT])
{
	uint64_t sum = 0;

	for (unsigned k = 0; k < AN_CAUSE_COUNT; k++) {
		ns[AN_ST_RUNQ + k] = io->cause_ns[k];
		sum += io->cause_ns[k];
	}
	if (!has_total)
		return (unsigned)io->causes << AN_ST_RUNQ;
	ns[AN_ST_OTHER] = an_io_cause_rest(total, sum);
	return ((unsigned)io->causes | 1u << AN_CAUSE_COUNT) << AN_ST_RUNQ;
}

/*
 * The causes of io's total (AN_IO_WHY): ns[AN_ST_RUNQ + k] = cause k, and
 * ns[AN_ST_OTHER] the rest of the total when it is defined. Returns their
 * bits, 0 without AN_IO_WHY.
 */
static inline unsigned an_io_causes(const struct an_io *io, uint64_t ns[AN_ST_COUNT])
{
	uint64_t total = 0;
	int has_total;

	if (!(io->flags & AN_IO_WHY))
		return 0;
	has_total = an_io_total(io, &total);
	return an_io_causes_of(io, has_total, total, ns);
}

_Static_assert(AN_ST_OTHER == AN_ST_RUNQ + AN_CAUSE_COUNT, "a stage per cause, then other");
_Static_assert(AN_ST_COUNT <= 32, "stages are bits of an unsigned");

/* Latency of stage s for io in *ns: 1 when defined, 0 when a stage end is missing. */
static inline int an_io_stage(const struct an_io *io, enum an_stage s, uint64_t *ns)
{
	enum an_ts from, to;

	if (s >= AN_ST_RUNQ && s <= AN_ST_OTHER) {
		uint64_t all[AN_ST_COUNT];

		if (!(an_io_causes(io, all) & 1u << s))
			return 0;
		*ns = all[s];
		return 1;
	}
	if (s == AN_ST_Q2Q) {
		*ns = io->q2q;
		return io->q2q != UINT64_MAX;
	}
	if (s == AN_ST_Q2G && (io->flags & AN_IO_Q_AT_G))
		return 0;
	if ((unsigned)s >= AN_ST_SPAN0) {
		*ns = io->span_ns;
		return io->span && (unsigned)s == AN_ST_SPAN0 + io->span - 1u;
	}
	an_io_stage_ends(io, s, &from, &to);
	return an_io_span(io, from, to, ns);
}

/*
 * Calls stage(ctx, s, ns) for every stage s io has, in ascending order, with
 * its latency: the same definitions as an_io_stage(). Always inline, and
 * meant for a `stage` the caller names, so that the compiler makes the
 * call a direct one and inlines it into the unrolled loop: the summary
 * runs this for every I/O, and a stage that is missing then costs its two
 * loads and one compare.
 */
static inline __attribute__((always_inline)) void
an_io_each_stage(const struct an_io *io, void (*stage)(void *ctx, unsigned s, uint64_t ns), void *ctx)
{
	/*
	 * Times most block I/Os lack: the call's entry and the file system's
	 * start each begin two stages, the insert ends one and begins the
	 * next; one test skips both. The reap ends one whose start depends
	 * on the I/O.
	 */
	int sys = io->ts[AN_TS_SYS_ENTER] != 0, fs = io->ts[AN_TS_FS_BEGIN] != 0;
	int inserted = io->ts[AN_TS_INSERT] != 0, reaped = io->ts[AN_TS_REAP] != 0;
	enum an_ts from, to;
	uint64_t total = 0;
	int has_total = 0;

	an_io_stage_ends(io, AN_ST_TOTAL, &from, &to);
#pragma GCC unroll 16
	for (unsigned s = AN_ST_TOTAL; s < AN_ST_Q2Q; s++) {
		uint64_t a, b;

		if (((s == AN_ST_SYS2FS || s == AN_ST_SYS2Q) && !sys) ||
		    (s == AN_ST_Q2G && (io->flags & AN_IO_Q_AT_G)) ||
		    ((s == AN_ST_FS || s == AN_ST_FS2Q) && !fs) ||
		    ((s == AN_ST_G2I || s == AN_ST_I2D) && !inserted) || (s == AN_ST_REAP && !reaped))
			continue;
		if (s == AN_ST_REAP)
			an_io_stage_ends(io, AN_ST_REAP, &from, &to);
		else if (s != AN_ST_TOTAL)
			from = an_stage_ends[s][0], to = an_stage_ends[s][1];
		a = io->ts[from];
		b = io->ts[to];
		/*
		 * an_io_span(): both ends seen and in order (then b is not 0
		 * either). a - 1 < b says it in one compare: a = 0 wraps to the
		 * largest value, which no b is below.
		 */
		if (a - 1 < b) {
			if (s == AN_ST_TOTAL)
				has_total = 1, total = b - a;
			stage(ctx, s, b - a);
		}
	}
	if (io->q2q != UINT64_MAX)
		stage(ctx, AN_ST_Q2Q, io->q2q);
	if (io->flags & AN_IO_WHY) {
		uint64_t sum = 0;

		/* an_io_causes_of()'s stages, each as it is read */
#pragma GCC unroll 8
		for (unsigned k = 0; k < AN_CAUSE_COUNT; k++) {
			uint64_t ns = io->cause_ns[k];

			if (io->causes & 1u << k)
				stage(ctx, AN_ST_RUNQ + k, ns);
			sum += ns;
		}
		if (has_total)
			stage(ctx, AN_ST_OTHER, an_io_cause_rest(total, sum));
	}
	if (io->span)
		stage(ctx, AN_ST_SPAN0 + io->span - 1u, io->span_ns);
}

/* an_io_stages()' stage(): into ns[], and its bit. */
struct an_stage_out {
	uint64_t *ns;
	unsigned defined;
};

static inline __attribute__((always_inline)) void an_io_stage_store(void *ctx, unsigned s, uint64_t ns)
{
	struct an_stage_out *out = ctx;

	out->ns[s] = ns;
	out->defined |= 1u << s;
}

/*
 * Every stage of io at once: ns[s] is stage s's latency when bit s of the
 * result is set, the same definitions as an_io_stage().
 */
static inline unsigned an_io_stages(const struct an_io *io, uint64_t ns[AN_ST_COUNT])
{
	struct an_stage_out out = { ns, 0 };

	an_io_each_stage(io, an_io_stage_store, &out);
	return out.defined;
}

/*
 * Whether io belongs to the per-interval views of stage s (series, heatmaps):
 * a span's records for a span, I/Os for a built-in stage.
 */
static inline int an_io_in_view(const struct an_io *io, enum an_stage s)
{
	return (unsigned)s >= AN_ST_SPAN0 ? an_io_stage(io, s, &(uint64_t){ 0 }) : !io->span;
}

#endif /* AN_CORRELATE_H */
