/* SPDX-License-Identifier: MIT */
/*
 * correlate.h - raw events in, one record per I/O out.
 *
 * The correlator is fed events in time order (records in the built-in layout
 * of bpf/sttrace_events.h) and calls `emit` once per I/O when its last stage
 * has been seen. An I/O is, in order of preference:
 *   - a data syscall (read/write/pread64/.../fsync/fdatasync/sync_file_range):
 *     the bios queued by its thread while it is open belong to it;
 *   - an io_uring request (submit_req .. complete, joined by req address):
 *     the bios its submitting thread queues right after submission belong to it;
 *   - otherwise one queued bio (writeback, readahead of other threads, the
 *     `block` preset without syscalls), or a request without bios (a flush
 *     issued by the flush machinery outside any fsync).
 * Bios join requests exactly through the bios[] chain of block_rq_issue;
 * merged bios complete with the request that absorbed them; the front piece
 * of a split joins its parent's I/O. Memory is bounded by what is in flight:
 * entries leave their maps at completion, and anything older than the stale
 * window is emitted as incomplete.
 */
#ifndef AN_CORRELATE_H
#define AN_CORRELATE_H

#include <stdint.h>

#include "bpf/sttrace_events.h"

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
	AN_TS_COUNT
};

/* Reported latencies; an_io_stage() gives their exact definitions. */
enum an_stage {
	AN_ST_TOTAL, AN_ST_SYS2FS, AN_ST_FS, AN_ST_FS2Q, AN_ST_Q2G, AN_ST_G2I, AN_ST_I2D,
	AN_ST_D2C, AN_ST_Q2C, AN_ST_C2RET, AN_ST_Q2Q, AN_ST_COUNT
};

enum an_op { AN_OP_READ, AN_OP_WRITE, AN_OP_FLUSH, AN_OP_DISCARD, AN_OP_FSYNC, AN_OP_OTHER, AN_OP_COUNT };

#define AN_IO_SYSCALL		(1u << 0)	/* begun by a data syscall */
#define AN_IO_URING		(1u << 1)	/* an io_uring request */
#define AN_IO_MERGED		(1u << 2)	/* a bio of it merged into another request */
#define AN_IO_SPLIT		(1u << 3)	/* a bio of it was split */
#define AN_IO_ERROR		(1u << 4)	/* block error or negative return */
#define AN_IO_INCOMPLETE	(1u << 5)	/* a stage is missing: open at the end, stale, or a lost bio */
#define AN_IO_DONE		(1u << 6)	/* syscall exited / io_uring completed */
#define AN_IO_LIVE		(1u << 7)	/* internal: in use */

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
	uint32_t dev;		/* block device (kernel dev_t), 0 unknown */
	uint32_t fs_dev;	/* device of the file system (inode's dev) */
	uint32_t opf;		/* ST_OP_* | ST_F_* of the first bio/request */
	uint32_t pid, tid;
	int32_t fd;		/* -1 unknown */
	uint32_t gen;		/* internal: reuse generation */
	uint16_t syscall;	/* enter event type id, 0 none */
	uint16_t nbios, pending, requeues, merges;
	uint8_t op;		/* enum an_op */
	uint8_t flags;		/* AN_IO_* */
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

/* stale_ns: I/Os open longer than this are emitted as incomplete (0 = 60 s). */
int an_corr_new(struct an_corr **c, uint64_t stale_ns, an_emit_fn emit, void *ctx);
/* One event, built-in layout, header->size already checked by the caller. */
void an_corr_event(struct an_corr *c, const struct st_event_header *ev);
/* End of input: everything still open is emitted as incomplete. */
void an_corr_finish(struct an_corr *c);
const struct an_corr_stats *an_corr_stats(struct an_corr *c);
/* 1 after an allocation failed (events were dropped); the caller reports it. */
int an_corr_failed(const struct an_corr *c);
void an_corr_free(struct an_corr *c);

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

/* Latency of stage s for io in *ns: 1 when defined, 0 when a stage end is missing.
 * Inline: the summary computes every stage of every I/O. */
static inline int an_io_stage(const struct an_io *io, enum an_stage s, uint64_t *ns)
{
	switch (s) {
	case AN_ST_TOTAL:
		if (io->ts[AN_TS_SYS_ENTER])
			return an_io_span(io, AN_TS_SYS_ENTER, AN_TS_SYS_EXIT, ns);
		if (io->ts[AN_TS_QUEUE])
			return an_io_span(io, AN_TS_QUEUE, AN_TS_COMPLETE, ns);
		return an_io_span(io, io->ts[AN_TS_INSERT] ? AN_TS_INSERT : AN_TS_ISSUE, AN_TS_COMPLETE, ns);
	case AN_ST_SYS2FS: return an_io_span(io, AN_TS_SYS_ENTER, AN_TS_FS_BEGIN, ns);
	case AN_ST_FS:     return an_io_span(io, AN_TS_FS_BEGIN, AN_TS_FS_DONE, ns);
	case AN_ST_FS2Q:   return an_io_span(io, AN_TS_FS_BEGIN, AN_TS_QUEUE, ns);
	case AN_ST_Q2G:    return an_io_span(io, AN_TS_QUEUE, AN_TS_GETRQ, ns);
	case AN_ST_G2I:    return an_io_span(io, AN_TS_GETRQ, AN_TS_INSERT, ns);
	case AN_ST_I2D:    return an_io_span(io, AN_TS_INSERT, AN_TS_ISSUE, ns);
	case AN_ST_D2C:    return an_io_span(io, AN_TS_ISSUE, AN_TS_COMPLETE, ns);
	case AN_ST_Q2C:    return an_io_span(io, AN_TS_QUEUE, AN_TS_COMPLETE, ns);
	case AN_ST_C2RET:  return an_io_span(io, AN_TS_COMPLETE, AN_TS_SYS_EXIT, ns);
	case AN_ST_Q2Q:
		*ns = io->q2q;
		return io->q2q != UINT64_MAX;
	default:
		return 0;
	}
}

#endif /* AN_CORRELATE_H */
