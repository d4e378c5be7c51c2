/* SPDX-License-Identifier: MIT */
/*
 * io.h - the record of one I/O the correlator (correlate.h) emits: its stage
 * timestamps, stages, op and flags. A header of its own, below both the
 * correlator and the names (names.h), which reads an I/O's file fields and
 * which the correlator asks, so that neither includes the other.
 */
#ifndef AN_IO_H
#define AN_IO_H

#include <stdint.h>

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

/* Spans the user may define (--span, analyze/lib/span.h): each is a stage after the built-in ones. */
#define AN_MAX_SPANS	8

/*
 * Reported latencies; an_io_stage() gives their exact definitions. Stage
 * AN_ST_SPAN0 + i is span i (analyze/lib/span.h), measured on span records only.
 */
enum an_stage {
	AN_ST_TOTAL, AN_ST_SYS2FS, AN_ST_FS, AN_ST_FS2Q, AN_ST_SYS2Q, AN_ST_Q2G, AN_ST_G2I, AN_ST_I2D,
	AN_ST_D2C, AN_ST_Q2C, AN_ST_C2RET, AN_ST_WB, AN_ST_JNL, AN_ST_FLUSH, AN_ST_REAP, AN_ST_Q2Q,
	/* causes of the total (analyze/lib/cause.h), in enum an_cause order, then the rest */
	AN_ST_RUNQ, AN_ST_SVC_RUNQ, AN_ST_LOCK, AN_ST_THROTTLE, AN_ST_DIRTY, AN_ST_RECLAIM,
	AN_ST_OTHER,
	AN_ST_SPAN0,
	AN_ST_COUNT = AN_ST_SPAN0 + AN_MAX_SPANS
};

/* What took an I/O's time (analyze/lib/cause.h); the stages AN_ST_RUNQ.. in this order. */
enum an_cause { AN_CAUSE_RUNQ, AN_CAUSE_SVC_RUNQ, AN_CAUSE_LOCK, AN_CAUSE_THROTTLE, AN_CAUSE_DIRTY,
		AN_CAUSE_RECLAIM, AN_CAUSE_COUNT };

/* A read's page cache (analyze/lib/cause.h); UNKNOWN: a recording without the why events. */
enum an_cache { AN_CACHE_UNKNOWN, AN_CACHE_NONE, AN_CACHE_HIT, AN_CACHE_MISS, AN_CACHE_DIRECT,
		AN_CACHE_COUNT };

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
#define AN_IO_WHY		(1u << 12)	/* its causes are known: cause_ns, cache (a recording with
						   the why events, analyze/lib/cause.h) */
#define AN_IO_RUNQ_COUNTED	(1u << 13)	/* its runq from the kernel's run_delay counts, not the
						   sched records: no culprit known */
#define AN_IO_AT_SECTOR		(1u << 14)	/* internal: a call in the list of those open at its
						   offset's sector */

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
	uint64_t cgroup;	/* cgroup v2 id of the task whose call or submission began it, 0 unknown */
	uint64_t charged;	/* the cgroup its request was charged to (block_rq_cgroup), in the
				   I/O controller's hierarchy (v1 blkio or v2), 0 its root or unknown */
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
	uint32_t sector_next, sector_prev;	/* internal: the older and newer calls open at its
						   offset's sector */
	uint64_t span_ns;	/* span records: END - START */
	uint16_t syscall;	/* enter event type id, 0 none */
	uint8_t span;		/* span records: span index + 1; 0 for I/Os */
	uint32_t nbios;		/* bios queued (or split off) for it */
	uint32_t merges;	/* of those, joined to a request that existed (diskstats' merges) */
	uint32_t read_merges, write_merges;	/* of those, the read and the write bios (diskstats'
						   per op: a request's bios may be another's) */
	uint16_t pending, requeues;
	uint16_t recording;	/* index of its recording in the run (set by the run, not here) */
	uint16_t flags;		/* AN_IO_* */
	uint8_t op;		/* enum an_op */
	/* Causes (AN_IO_WHY only, analyze/lib/cause.h): */
	uint8_t cache;		/* enum an_cache */
	uint8_t lock_flags;	/* LCB_F_* of its longest lock wait */
	uint32_t svc_tid;	/* the thread that completed its last request or bio */
	/* its thread's run-queue wait so far at the call's entry and exit, 0 not recorded (1.6) */
	uint64_t run_delay_enter, run_delay_exit;
	uint64_t cause_ns[AN_CAUSE_COUNT];
	uint64_t blkcg;		/* the cgroup its held-back bio was charged to, 0 none */
	char runq_culprit[16];	/* the task that held the CPU longest while it waited for one */
};

#endif /* AN_IO_H */
