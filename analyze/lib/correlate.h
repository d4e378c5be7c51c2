/* SPDX-License-Identifier: MIT */
/*
 * correlate.h - raw events in, one record per I/O out.
 *
 * The correlator is fed events in time order (records in the built-in layout
 * of format/sttrace_events.h) and calls `emit` once per I/O when its last stage
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

#include "format/lib/sttrace_events.h"

/* Stage timestamps of one I/O (0 = not seen). */
enum an_ts {
	AN_TS_SYS_ENTER,	/* syscall entry, or io_uring submit */
	AN_TS_FS_BEGIN,		/* iomap_dio_rw_begin / ext4_sync_file_enter */
	AN_TS_QUEUE,		/* first block_bio_queue (Q) */
	AN_TS_GETRQ,		/* first block_getrq (G) */
	AN_TS_INSERT,		/* first block_rq_insert (I) */
	AN_TS_ISSUE,		/* first (final, after requeues) block_rq_issue (D) */
	AN_TS_COMPLETE,		/* last block_rq_complete / block_bio_complete (C) */
	AN_TS_FS_DONE,		/* iomap_dio_complete / ext4_sync_file_exit */
	AN_TS_SYS_EXIT,		/* syscall exit, or io_uring complete */
	AN_TS_WB_BEGIN,		/* fsync: first data bio its thread queued */
	AN_TS_WB_DONE,		/* fsync: last completion of those bios */
	AN_TS_FLUSH_BEGIN,	/* empty PREFLUSH bio queued, or a data step of the flush sequence done */
	AN_TS_FLUSH_DONE,	/* the flush sequence ended: the request's final completion */
	AN_TS_REAP,		/* the submitting thread took the completion: io_uring, the return of
				   its call that waited, or the entry of its first call with the
				   ring's CQ head past the CQE; libaio, the return of io_getevents */
	AN_TS_JNL_BEGIN,	/* fsync: first kernel-thread bio queued on its device while it was open */
	AN_TS_JNL_DONE,		/* fsync: last completion of those (before its exit) */
	AN_TS_HELD_QUEUE,	/* its bio, which blk-throttle held back, queued by the
				   throttle's dispatch worker */
	AN_TS_COUNT
};

/* Spans the user may define (--span, analyze/span.h): each is a stage after the built-in ones. */
#define AN_MAX_SPANS	8

/*
 * Reported latencies; an_io_stage() gives their exact definitions. Stage
 * AN_ST_SPAN0 + i is span i (analyze/span.h), measured on span records only.
 */
enum an_stage {
	AN_ST_TOTAL, AN_ST_SYS2FS, AN_ST_FS, AN_ST_FS2Q, AN_ST_SYS2Q, AN_ST_Q2G, AN_ST_G2I, AN_ST_I2D,
	AN_ST_D2C, AN_ST_Q2C, AN_ST_C2RET, AN_ST_WB, AN_ST_JNL, AN_ST_FLUSH, AN_ST_REAP, AN_ST_Q2Q,
	AN_ST_SPAN0,
	AN_ST_COUNT = AN_ST_SPAN0 + AN_MAX_SPANS
};

/* AN_OP_SPAN: a span record (a START..END pair of --span), not an I/O. */
enum an_op { AN_OP_READ, AN_OP_WRITE, AN_OP_FLUSH, AN_OP_DISCARD, AN_OP_FSYNC, AN_OP_OTHER,
	     AN_OP_SPAN, AN_OP_COUNT };

#define AN_IO_SYSCALL		(1u << 0)	/* begun by a data syscall */
#define AN_IO_URING		(1u << 1)	/* an io_uring request */
#define AN_IO_MERGED		(1u << 2)	/* a bio of it merged into another request */
#define AN_IO_SPLIT		(1u << 3)	/* a bio of it was split */
#define AN_IO_ERROR		(1u << 4)	/* block error or negative return */
#define AN_IO_INCOMPLETE	(1u << 5)	/* a stage is missing: open at the end, stale, or a lost bio */
#define AN_IO_DONE		(1u << 6)	/* syscall exited / io_uring completed */
#define AN_IO_LIVE		(1u << 7)	/* internal: in use */
#define AN_IO_UNJOINED		(1u << 8)	/* syscall seen whole, but bios it queued had not completed at
						   its exit (fsync: no device flush joined): block stages
						   missing; those bios became an I/O of their own */
#define AN_IO_REAP_WAIT		(1u << 9)	/* internal: CQE posted, its reap not seen yet */
#define AN_IO_FSYNC_OPEN	(1u << 10)	/* internal: an fsync counted open on its fs device */
#define AN_IO_AIO		(1u << 11)	/* a libaio iocb: from its iomap_dio_rw_begin in io_submit */

struct an_io {
	uint64_t ts[AN_TS_COUNT];
	uint64_t start;		/* first timestamp of the I/O */
	uint64_t sector;	/* first sector of the first bio */
	uint64_t bytes;		/* syscall/uring: bytes returned; block: bytes of its bios */
	uint64_t blk_bytes;	/* bytes of its bios */
	uint64_t ino;		/* inode (0 unknown) */
	uint64_t requeue_ns;	/* first issue to final issue, summed over requests */
	uint64_t q2q;		/* gap since the previous bio queued on dev, UINT64_MAX none */
	uint64_t uring_req;	/* io_kiocb address of an io_uring I/O */
	int64_t offset;		/* file offset, -1 unknown */
	int64_t ret;		/* syscall / CQE result, or block error */
	uint32_t dev;		/* block device (kernel dev_t), else its file system's, 0 unknown */
	uint32_t fs_dev;	/* device of the file system (inode's dev) */
	uint32_t opf;		/* ST_OP_* | ST_F_* of the first bio/request */
	uint32_t pid, tid;
	int32_t fd;		/* -1 unknown */
	uint32_t file;		/* the file fd named as the I/O began (an_names_fd_file), 0 unknown */
	uint32_t gen;		/* internal: reuse generation */
	uint32_t reap_next;	/* internal: next I/O of its thread waiting for a reap */
	uint64_t span_ns;	/* span records: END - START */
	uint16_t syscall;	/* enter event type id, 0 none */
	uint8_t span;		/* span records: span index + 1; 0 for I/Os */
	uint32_t nbios;		/* bios queued (or split off) for it */
	uint32_t merges;	/* of those, joined to a request that existed (diskstats' merges) */
	uint16_t pending, requeues;
	uint16_t recording;	/* index of its recording in the run (set by the run, not here) */
	uint16_t flags;		/* AN_IO_* */
	uint8_t op;		/* enum an_op */
};

struct an_corr_stats {
	uint64_t events, ios, incomplete, stale, out_of_order;
	uint64_t orphan_exits;		/* syscall exits / uring completions without a start */
	uint64_t orphan_requests;	/* requests whose bios were all queued before the trace */
	uint64_t orphan_completions;	/* completions of requests never seen before */
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
/* One event, built-in layout, header->size already checked by the caller. */
void an_corr_event(struct an_corr *c, const struct st_event_header *ev);
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

const char *an_stage_name(enum an_stage s);
int an_stage_by_name(const char *name);	/* -1 unknown */
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

/* Latency of stage s for io in *ns: 1 when defined, 0 when a stage end is missing. */
static inline int an_io_stage(const struct an_io *io, enum an_stage s, uint64_t *ns)
{
	enum an_ts from, to;

	if (s == AN_ST_Q2Q) {
		*ns = io->q2q;
		return io->q2q != UINT64_MAX;
	}
	if ((unsigned)s >= AN_ST_SPAN0) {
		*ns = io->span_ns;
		return io->span && (unsigned)s == AN_ST_SPAN0 + io->span - 1u;
	}
	an_io_stage_ends(io, s, &from, &to);
	return an_io_span(io, from, to, ns);
}

/*
 * Every stage of io at once, without a branch per stage (the summary does
 * this for every I/O): ns[s] is stage s's latency when bit s of the result
 * is set, the same definitions as an_io_stage().
 */
static inline unsigned an_io_stages(const struct an_io *io, uint64_t ns[AN_ST_COUNT])
{
	unsigned defined = 0;
	enum an_ts from, to;

	an_io_stage_ends(io, AN_ST_TOTAL, &from, &to);
#pragma GCC unroll 16
	for (unsigned s = AN_ST_TOTAL; s < AN_ST_Q2Q; s++) {
		uint64_t a, b;

		if (s != AN_ST_TOTAL) {
			from = an_stage_ends[s][0];
			to = an_stage_ends[s][1];
		}
		a = io->ts[from];
		b = io->ts[to];
		ns[s] = b - a;
		/* an_io_span(): both ends seen and in order (then b is not 0 either). */
		defined |= (unsigned)(a && b >= a) << s;
	}
	/* reap's start depends on the I/O (an_io_stage_ends) */
	an_io_stage_ends(io, AN_ST_REAP, &from, &to);
	ns[AN_ST_REAP] = io->ts[to] - io->ts[from];
	defined = (defined & ~(1u << AN_ST_REAP)) |
		  (unsigned)(io->ts[from] && io->ts[to] >= io->ts[from]) << AN_ST_REAP;
	ns[AN_ST_Q2Q] = io->q2q;
	defined |= (unsigned)(io->q2q != UINT64_MAX) << AN_ST_Q2Q;
	if (io->span) {
		ns[AN_ST_SPAN0 + io->span - 1] = io->span_ns;
		defined |= 1u << (AN_ST_SPAN0 + io->span - 1);
	}
	return defined;
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
