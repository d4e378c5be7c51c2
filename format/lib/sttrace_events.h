/* SPDX-License-Identifier: MIT */
/*
 * sttrace_events.h - the event records shared by the BPF programs and user space.
 *
 * This header is the single definition of every event sttrace records. It is
 * included by the *.bpf.c programs (after vmlinux.h) and by user space (the
 * recorder, libsttrace's built-in schema, `st-format synth`, the analyzer).
 * Each payload is declared once, as a field list macro; the same list expands
 * into the C struct (ST_DECLARE_PAYLOAD) and into the schema stored in every
 * .sttrace file (format/lib/schema.c), so the two cannot disagree.
 *
 * A record is `struct st_event_header` followed by the payload of its type.
 * Every record size is a multiple of 8 and every field is naturally aligned,
 * so records can be appended to a chunk exactly as the ring buffer hands them
 * over. All integers are little-endian (the only byte order sttrace records on).
 */
#ifndef STTRACE_EVENTS_H
#define STTRACE_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Field display types, stored in the schema. Width comes from the field size. */
enum st_field_type {
	ST_FT_UINT = 1,	/* unsigned decimal */
	ST_FT_INT  = 2,	/* signed decimal */
	ST_FT_HEX  = 3,	/* unsigned, printed 0x...; kernel addresses used as identities */
	ST_FT_DEV  = 4,	/* u32 kernel dev_t: major << 20 | minor, printed major:minor */
	ST_FT_STR  = 5,	/* NUL-padded char array */
	ST_FT_NS   = 6,	/* u64 nanoseconds */
};

/* The common header of every record. */
struct st_event_header {
	__u16 type;	/* event type id (ST_EV_*), schema key */
	__u16 size;	/* whole record in bytes, header included, multiple of 8 */
	__u32 cpu;	/* CPU the event fired on */
	__u64 ts;	/* bpf_ktime_get_ns(): CLOCK_MONOTONIC nanoseconds */
	__u32 pid;	/* thread group id (user-space pid) */
	__u32 tid;	/* thread id */
};

/*
 * Operation and flags of a bio or request, normalized by the BPF side so the
 * meaning does not depend on the kernel version: bits 0-7 are the kernel's
 * REQ_OP_* value (stable ABI), bits 8 and up are sttrace's own flag bits.
 */
#define ST_OP_MASK		0xffu
#define ST_OP_READ		0u
#define ST_OP_WRITE		1u
#define ST_OP_FLUSH		2u
#define ST_OP_DISCARD		3u
#define ST_OP_SECURE_ERASE	5u
#define ST_OP_WRITE_ZEROES	9u
#define ST_F_SYNC		(1u << 8)
#define ST_F_META		(1u << 9)
#define ST_F_FUA		(1u << 10)
#define ST_F_PREFLUSH		(1u << 11)
#define ST_F_RAHEAD		(1u << 12)
#define ST_F_BACKGROUND		(1u << 13)
#define ST_F_NOWAIT		(1u << 14)
/*
 * Request events only: the request is in the kernel's flush sequence
 * (RQF_FLUSH_SEQ): the flush request the kernel issues for pre/post flushes,
 * or a data request with PREFLUSH/FUA between its steps. Such a data
 * request completes twice: once for its data (this bit set, bios not ended
 * yet) and once more when the sequence ends (bit clear).
 */
#define ST_F_FLUSH_SEQ		(1u << 15)
/*
 * block_bio_queue and block_rq_issue_stamped (its first bio) only: held
 * back. blk-throttle kept the bio in the task that submitted it until its
 * cgroup's limit allowed, and its dispatch worker (a kworker) queued it;
 * the bio carries no page cache: direct I/O that task waits for.
 */
#define ST_F_HELD		(1u << 16)

#define ST_COMM_LEN	16
#define ST_PATH_LEN	256
#define ST_RQ_BIOS	4	/* bios of a request's chain stored at issue */
#define ST_RQ_BIOS_COUNTED	256	/* st-record counts at most this many in nr_bios */

/*
 * Payload field lists. F(ctype, name, ftype, doc) is a scalar,
 * A(ctype, name, count, ftype, doc) a fixed array.
 */
#define st_fields_block_bio(F, A)						\
	F(__u64, bio,       ST_FT_HEX,  "struct bio address: the bio's identity until it completes") \
	F(__u64, sector,    ST_FT_UINT, "first 512-byte sector on the device")	\
	F(__u32, dev,       ST_FT_DEV,  "device (kernel dev_t)")			\
	F(__u32, nr_sector, ST_FT_UINT, "length in 512-byte sectors")		\
	F(__u32, opf,       ST_FT_HEX,  "operation and flags (ST_OP_*, ST_F_*)")	\
	F(__s32, error,     ST_FT_INT,  "block status at completion, 0 otherwise")

#define st_fields_block_split(F, A)						\
	F(__u64, bio,        ST_FT_HEX,  "the new bio holding the front part")	\
	F(__u64, parent,     ST_FT_HEX,  "the original bio, which keeps the rest and completes last") \
	F(__u64, sector,     ST_FT_UINT, "first sector of the front part")	\
	F(__u64, new_sector, ST_FT_UINT, "first sector of the remaining parent")	\
	F(__u32, dev,        ST_FT_DEV,  "device (kernel dev_t)")			\
	F(__u32, nr_sector,  ST_FT_UINT, "sectors in the front part")		\
	F(__u32, opf,        ST_FT_HEX,  "operation and flags (ST_OP_*, ST_F_*)")	\
	F(__u32, pad,        ST_FT_UINT, "zero")

#define st_fields_block_rq(F, A)						\
	F(__u64, rq,        ST_FT_HEX,  "struct request address: identity from insert to complete") \
	F(__u64, sector,    ST_FT_UINT, "first 512-byte sector on the device")	\
	F(__u32, dev,       ST_FT_DEV,  "device (kernel dev_t)")			\
	F(__u32, nr_sector, ST_FT_UINT, "length in 512-byte sectors")		\
	F(__u32, bytes,     ST_FT_UINT, "data bytes (0 for a pure flush)")	\
	F(__u32, opf,       ST_FT_HEX,  "operation and flags (ST_OP_*, ST_F_*)")	\
	F(__s32, error,     ST_FT_INT,  "block status at completion, 0 otherwise")	\
	F(__u32, nr_bios,   ST_FT_UINT, "bios in the request's chain")

#define st_fields_block_rq_issue(F, A)						\
	st_fields_block_rq(F, A)						\
	A(__u64, bios, ST_RQ_BIOS, ST_FT_HEX, "first bios of the chain (rq->bio, bi_next...), 0 past nr_bios")

#define st_fields_block_rq_complete(F, A)					\
	st_fields_block_rq(F, A)						\
	F(__u64, bio, ST_FT_HEX, "first bio of the chain (rq->bio) as the request completes, 0 none: names the bio of a request never issued (an empty PREFLUSH in the flush sequence)")

/*
 * block_rq_complete in short, for a request with data outside the flush
 * sequence (the `block` preset): its position, op and bios are its issue's, so a reader
 * takes them from there (spec section 11.2); st-analyze's input layer
 * (analyze/lib/input.c) hands it on as the block_rq_complete it stands for.
 */
#define st_fields_block_rq_complete_compact(F, A)				\
	F(__u64, rq,    ST_FT_HEX,  "struct request address: the request its issue named") \
	F(__u32, dev,   ST_FT_DEV,  "device (kernel dev_t)")			\
	F(__u32, bytes, ST_FT_UINT, "data bytes completed (less than the request's on a partial completion)") \
	F(__s32, error, ST_FT_INT,  "block status")				\
	F(__u32, pad,   ST_FT_UINT, "zero")

/*
 * block_rq_issue plus the stage times the kernel stamped on the request and
 * its bios, as nanoseconds before this event: one probe run gives Q, G and D.
 * A time the kernel did not stamp (or one more than 4.29 s before the issue)
 * has its `stamped` bit clear and is 0.
 */
#define ST_STAMPED_GETRQ	(1u << 0)	/* getrq_ago holds the request's allocation */
#define ST_STAMPED_QUEUE(i)	(1u << (1 + (i)))	/* queue_ago[i] holds bios[i]'s queueing */
/*
 * Never stored: a stamped issue that a cursor hands out as itself
 * (ST_CURSOR_STAMPED, sttrace.h) says with these which events it stands
 * for, its ST_STAMPED_GETRQ and getrq_ago then the block_getrq's.
 */
#define ST_STAMPED_MERGED(i)	(1u << (8 + (i)))	/* bios[i] merged, at ts - queue_ago[i] */
#define ST_STAMPED_MERGED_ANY	0x0000ff00u
#define ST_STAMPED_FIRST_BIO(i)	((__u32)(i) << 16)	/* the bio the request was allocated for */
#define ST_STAMPED_FIRST(stamped)	((stamped) >> 16 & 0xffu)
#define ST_STAMPED_RESOLVED	0x00ffff00u	/* the bits above */

#define st_fields_block_rq_issue_stamped(F, A)					\
	st_fields_block_rq_issue(F, A)						\
	F(__u32, stamped,   ST_FT_HEX,  "times the kernel stamped: bit 0 getrq_ago, bit 1+i queue_ago[i]") \
	F(__u32, getrq_ago, ST_FT_UINT, "ns from the request's allocation (rq->start_time_ns) to this issue") \
	A(__u32, queue_ago, ST_RQ_BIOS, ST_FT_UINT, "ns from each stored bio's queueing (its issue time stamp) to this issue") \
	A(__u32, bio_sectors, ST_RQ_BIOS, ST_FT_UINT, "length of each stored bio in 512-byte sectors")

/*
 * The file whose page cache an issued request carries (writeback,
 * readahead), by its first bio's first page; recorded right after the issue,
 * with its time, only for such requests.
 */
#define st_fields_block_rq_inode(F, A)						\
	F(__u64, rq,     ST_FT_HEX,  "struct request address (its issue has the same ts)") \
	F(__u64, sector, ST_FT_UINT, "first 512-byte sector on the device")	\
	F(__u64, ino,    ST_FT_UINT, "inode number of the file")			\
	F(__u32, dev,    ST_FT_DEV,  "device of the file's file system (kernel dev_t)") \
	F(__u32, disk,   ST_FT_DEV,  "device of the request (kernel dev_t)")

/* A syscall entry's arguments, the part every entry record begins with. */
#define st_fields_sys_args(F, A)						\
	F(__s64, fd,     ST_FT_INT,  "file descriptor (io_submit, io_getevents: aio context)")	\
	F(__u64, count,  ST_FT_UINT, "bytes asked for (vector calls: iovec count; io_uring_enter: to_submit; io_submit, io_getevents: nr)") \
	F(__s64, offset, ST_FT_INT,  "file offset, -1 when the call has none")	\
	F(__u64, flags,  ST_FT_HEX,  "call flags (preadv2/pwritev2, sync_file_range, io_uring_enter)")

/*
 * The calling task's cgroup comes with the arguments (format 1.4): the
 * cgroup its I/O is charged to when the call is one (spec section 11.1).
 */
#define st_fields_sys_enter(F, A)						\
	st_fields_sys_args(F, A)						\
	F(__u64, cgroup, ST_FT_UINT, "cgroup v2 id of the calling task (its directory's inode number), 0 unknown (files before 1.4)") \
	F(__u64, run_delay, ST_FT_NS, "the thread's run-queue wait so far (task->sched_info.run_delay), 0 not recorded (no `why` event selected, files before 1.6)")

/*
 * io_uring_enter's entry adds the ring's completion queue as the call
 * begins: the CQEs from cq_head to cq_tail are posted and not yet read by
 * the application; every CQE before cq_head it has read in user space.
 * It is not an I/O: its requests carry their cgroup (io_uring_submit_req).
 */
#define st_fields_sys_enter_io_uring_enter(F, A)				\
	st_fields_sys_args(F, A)						\
	F(__u32, cq_head, ST_FT_UINT, "completion queue head as the call begins: CQEs the application has read (0 with cq_tail: ring not read)") \
	F(__u32, cq_tail, ST_FT_UINT, "completion queue tail as the call begins: CQEs the kernel has posted")

#define st_fields_sys_enter_openat(F, A)					\
	F(__s32, dfd,      ST_FT_INT, "directory fd")				\
	F(__u32, flags,    ST_FT_HEX, "open flags")				\
	A(char,  filename, ST_PATH_LEN, ST_FT_STR, "path as passed, truncated to fit")

#define st_fields_sys_ret(F, A)							\
	F(__s64, ret, ST_FT_INT, "return value (bytes, fd, or -errno)")

/* A data call's exit: the run-queue wait read again (format 1.6), runq = exit's - entry's. */
#define st_fields_sys_exit(F, A)						\
	st_fields_sys_ret(F, A)							\
	F(__u64, run_delay, ST_FT_NS, "the thread's run-queue wait so far (task->sched_info.run_delay), 0 not recorded (no `why` event selected, files before 1.6)")

/*
 * openat's return plus the regular file it opened (inode -> path for I/O
 * named by inode only) and the path, read at the exit: the kernel has copied
 * it by then, so its page is mapped, which at the entry it may not be yet.
 */
#define st_fields_sys_exit_openat(F, A)						\
	st_fields_sys_ret(F, A)						\
	F(__u64, ino, ST_FT_UINT, "inode of the regular file opened, 0 otherwise")	\
	F(__u32, dev, ST_FT_DEV,  "device of its file system (kernel dev_t), 0 with ino 0") \
	F(__u32, pad, ST_FT_UINT, "zero")					\
	F(__s32, name_len, ST_FT_INT, "bytes of filename read, its NUL included; -errno: the path could not be read; 0: not recorded (files before 1.3)") \
	F(__u32, pad2, ST_FT_UINT, "zero")					\
	A(char,  filename, ST_PATH_LEN, ST_FT_STR, "path as passed, read at the exit, truncated to fit")

#define st_fields_fs_io(F, A)							\
	F(__u64, ino,   ST_FT_UINT, "inode number")				\
	F(__s64, pos,   ST_FT_INT,  "file position (sync: start of range)")	\
	F(__u64, count, ST_FT_UINT, "bytes (sync: length of range, 0 = all)")	\
	F(__s64, ret,   ST_FT_INT,  "result at completion/exit, 0 at begin/enter")	\
	F(__u32, dev,   ST_FT_DEV,  "device of the file system (kernel dev_t)")	\
	F(__u32, flags, ST_FT_HEX,  "dio: iocb ki_flags; sync: 1 for datasync")

#define st_fields_uring(F, A)							\
	F(__u64, ctx,       ST_FT_HEX,  "struct io_ring_ctx address")		\
	F(__u64, req,       ST_FT_HEX,  "struct io_kiocb address: identity submit to complete") \
	F(__u64, user_data, ST_FT_HEX,  "user_data of the SQE")			\
	F(__s32, res,       ST_FT_INT,  "CQE result at completion, 0 at submit")	\
	F(__u32, opcode,    ST_FT_UINT, "IORING_OP_* (submit only)")		\
	F(__u32, flags,     ST_FT_HEX,  "submit: SQE flags; complete: CQE flags")	\
	F(__s32, fd,        ST_FT_INT,  "SQE fd (submit only)")		\
	F(__u64, cgroup,    ST_FT_UINT, "submit only: cgroup v2 id of the submitting task, 0 unknown (files before 1.4)")

#define st_fields_task(F, A)							\
	F(__u32, other_pid, ST_FT_UINT, "fork: parent pid; exec: old pid; exit: 0")	\
	F(__u32, pad,       ST_FT_UINT, "zero")					\
	A(char,  comm, ST_COMM_LEN, ST_FT_STR, "command name after the event")

/*
 * The causes of an I/O's time (format 1.5, the `why` events; the two sched
 * records only with st-record's `sched` preset from 1.6): recorded only
 * where they touch a traced I/O, so st-analyze can split an I/O's interval
 * into waiting for a CPU, a lock, the dirty-page throttle, reclaim (spec
 * section 11.2). A thread st-record follows is one inside a traced data
 * syscall, or a kernel thread that serves one (completed one of its
 * requests, or was woken from inside the call).
 */

/* A context switch where either thread is one st-record follows. */
#define st_fields_sched_switch(F, A)						\
	F(__u32, prev_tid,   ST_FT_UINT, "thread switched out (the record's tid)")	\
	F(__u32, next_tid,   ST_FT_UINT, "thread switched in")			\
	F(__u32, prev_state, ST_FT_HEX,  "prev's state: 0 still runnable (preempted), else blocked (TASK_* bits)") \
	F(__u32, next_pid,   ST_FT_UINT, "next's thread group id")		\
	A(char,  prev_comm, ST_COMM_LEN, ST_FT_STR, "prev's command name")	\
	A(char,  next_comm, ST_COMM_LEN, ST_FT_STR, "next's command name")

/* A followed thread made runnable: it waits on a run queue from now until switched in. */
#define st_fields_sched_wakeup(F, A)						\
	F(__u32, woken_tid,  ST_FT_UINT, "thread woken")				\
	F(__u32, target_cpu, ST_FT_UINT, "CPU whose run queue it joins")

/*
 * A followed thread waiting for a kernel lock (lock:contention_begin) and
 * done waiting (lock:contention_end); the same `lock` pairs them on a thread.
 */
#define st_fields_lock_contention(F, A)					\
	F(__u64, lock,  ST_FT_HEX, "lock address")				\
	F(__u32, flags, ST_FT_HEX, "begin: LCB_F_* (1 spin, 2 read, 4 write, 8 rt, 16 percpu, 32 mutex); end: 0") \
	F(__s32, ret,   ST_FT_INT, "end: 0 acquired, -errno gave up; begin: 0")

/* A followed thread paused by dirty-page throttling (writeback:balance_dirty_pages). */
#define st_fields_dirty_pause(F, A)						\
	F(__u64, pause_ns, ST_FT_NS,   "time it is put to sleep for from ts, 0: not paused") \
	F(__u64, dirty,    ST_FT_UINT, "dirty pages of the limit's domain (global or the cgroup's)") \
	F(__u64, limit,    ST_FT_UINT, "the domain's dirty limit in pages")

/*
 * Direct or memory-cgroup reclaim by a followed thread
 * (vmscan:mm_vmscan_direct_reclaim_begin/end, mm_vmscan_memcg_reclaim_begin/end).
 */
#define st_fields_reclaim(F, A)							\
	F(__u64, value, ST_FT_UINT, "begin: order of the allocation; end: pages reclaimed")

/* A followed thread added a folio to a file's page cache (filemap:mm_filemap_add_to_page_cache). */
#define st_fields_page_cache(F, A)						\
	F(__u64, ino,      ST_FT_UINT, "inode number of the file")		\
	F(__u64, index,    ST_FT_UINT, "index of the folio's first page in the file") \
	F(__u32, dev,      ST_FT_DEV,  "device of the file's file system (kernel dev_t)") \
	F(__u32, nr_pages, ST_FT_UINT, "pages in the folio")

/*
 * The cgroup a held-back bio (ST_F_HELD) is charged to, recorded right after
 * its block_bio_queue, with its time: whose limit held it.
 */
#define st_fields_block_bio_held(F, A)						\
	F(__u64, bio,   ST_FT_HEX,  "struct bio address (its block_bio_queue has the same ts)") \
	F(__u64, blkcg, ST_FT_UINT, "id of the cgroup it is charged to in the hierarchy of its I/O controller (v1 blkio or v2): that directory's inode number, 0 unknown") \
	F(__u32, dev,   ST_FT_DEV,  "device (kernel dev_t)")			\
	F(__u32, pad,   ST_FT_UINT, "zero")

/*
 * The cgroup an issued request's I/O is charged to (format 1.8): its first
 * bio's blkcg, recorded right after the issue, with its time, only when that
 * is not the root of its I/O controller's hierarchy.
 */
#define st_fields_block_rq_cgroup(F, A)						\
	F(__u64, rq,    ST_FT_HEX,  "struct request address (its issue has the same ts)") \
	F(__u64, blkcg, ST_FT_UINT, "id of the cgroup its first bio is charged to in the hierarchy of its I/O controller (v1 blkio or v2): that directory's inode number") \
	F(__u32, dev,   ST_FT_DEV,  "device (kernel dev_t)")			\
	F(__u32, pad,   ST_FT_UINT, "zero")

/*
 * The run-queue wait so far of the kernel thread that completed a selected
 * request (format 1.6), recorded right before its completion record when a
 * `why` event is selected: its increase since the thread's previous one is
 * its wait for a CPU meanwhile (svc_runq without the sched records). From
 * 1.7 also the kernel thread that raised the block softirq the completion
 * runs in (the loop device's worker, when ksoftirqd completes), read as it
 * raised it: the thread that did the I/O before the completing one.
 */
#define st_fields_svc_run_delay(F, A)						\
	F(__u64, run_delay,        ST_FT_NS,   "task->sched_info.run_delay of the completing kernel thread (the record's tid)") \
	F(__u64, raiser_run_delay, ST_FT_NS,   "task->sched_info.run_delay of raiser_tid as it raised the block softirq (1.7)") \
	F(__u64, raised_at,        ST_FT_NS,   "when raiser_tid raised it, on the clock of ts (1.7)") \
	F(__u32, raiser_tid,       ST_FT_UINT, "the kernel thread, other than the record's, that raised in task context the block softirq this completion runs in; 0 none or not recorded (files before 1.7)") \
	F(__u32, pad,              ST_FT_UINT, "zero")

/*
 * Every event type: E(id, name, payload). The name is the kernel tracepoint's;
 * ids are stable forever (spec/sttrace-format.md). New types take new ids.
 */
#define ST_EVENT_TYPES(E)							\
	E(1,  block_bio_queue,       block_bio)					\
	E(2,  block_bio_backmerge,   block_bio)					\
	E(3,  block_bio_frontmerge,  block_bio)					\
	E(4,  block_bio_complete,    block_bio)					\
	E(5,  block_split,           block_split)				\
	E(6,  block_getrq,           block_bio)					\
	E(7,  block_rq_insert,       block_rq)					\
	E(8,  block_rq_issue,        block_rq_issue)				\
	E(9,  block_rq_merge,        block_rq)					\
	E(10, block_rq_requeue,      block_rq)					\
	E(11, block_rq_complete,     block_rq_complete)				\
	E(12, block_rq_issue_stamped, block_rq_issue_stamped)			\
	E(13, block_rq_inode,        block_rq_inode)				\
	E(14, block_rq_complete_compact, block_rq_complete_compact)		\
	E(32, sys_enter_read,        sys_enter)					\
	E(33, sys_exit_read,         sys_exit)					\
	E(34, sys_enter_write,       sys_enter)					\
	E(35, sys_exit_write,        sys_exit)					\
	E(36, sys_enter_pread64,     sys_enter)					\
	E(37, sys_exit_pread64,      sys_exit)					\
	E(38, sys_enter_pwrite64,    sys_enter)					\
	E(39, sys_exit_pwrite64,     sys_exit)					\
	E(40, sys_enter_readv,       sys_enter)					\
	E(41, sys_exit_readv,        sys_exit)					\
	E(42, sys_enter_writev,      sys_enter)					\
	E(43, sys_exit_writev,       sys_exit)					\
	E(44, sys_enter_preadv,      sys_enter)					\
	E(45, sys_exit_preadv,       sys_exit)					\
	E(46, sys_enter_pwritev,     sys_enter)					\
	E(47, sys_exit_pwritev,      sys_exit)					\
	E(48, sys_enter_preadv2,     sys_enter)					\
	E(49, sys_exit_preadv2,      sys_exit)					\
	E(50, sys_enter_pwritev2,    sys_enter)					\
	E(51, sys_exit_pwritev2,     sys_exit)					\
	E(52, sys_enter_fsync,       sys_enter)					\
	E(53, sys_exit_fsync,        sys_exit)					\
	E(54, sys_enter_fdatasync,   sys_enter)					\
	E(55, sys_exit_fdatasync,    sys_exit)					\
	E(56, sys_enter_sync_file_range, sys_enter)				\
	E(57, sys_exit_sync_file_range,  sys_exit)				\
	E(58, sys_enter_openat,      sys_enter_openat)				\
	E(59, sys_exit_openat,       sys_exit_openat)				\
	E(60, sys_enter_io_uring_enter, sys_enter_io_uring_enter)		\
	E(61, sys_exit_io_uring_enter,  sys_exit)				\
	E(62, sys_enter_io_submit,   sys_enter)					\
	E(63, sys_exit_io_submit,    sys_exit)					\
	E(64, iomap_dio_rw_begin,    fs_io)					\
	E(65, iomap_dio_complete,    fs_io)					\
	E(66, ext4_sync_file_enter,  fs_io)					\
	E(67, ext4_sync_file_exit,   fs_io)					\
	E(68, xfs_file_fsync,        fs_io)					\
	E(69, sys_enter_io_getevents, sys_enter)				\
	E(70, sys_exit_io_getevents,  sys_exit)					\
	E(71, sys_enter_close,       sys_enter)					\
	E(72, sys_enter_dup2,        sys_enter)					\
	E(73, sys_enter_dup3,        sys_enter)					\
	E(80, io_uring_submit_req,   uring)					\
	E(81, io_uring_complete,     uring)					\
	E(96, sched_process_fork,    task)					\
	E(97, sched_process_exec,    task)					\
	E(98, sched_process_exit,    task)					\
	E(99, sched_switch,          sched_switch)				\
	E(100, sched_wakeup,         sched_wakeup)				\
	E(101, contention_begin,     lock_contention)				\
	E(102, contention_end,       lock_contention)				\
	E(103, balance_dirty_pages,  dirty_pause)				\
	E(104, mm_vmscan_direct_reclaim_begin, reclaim)			\
	E(105, mm_vmscan_direct_reclaim_end,   reclaim)			\
	E(106, mm_vmscan_memcg_reclaim_begin,  reclaim)			\
	E(107, mm_vmscan_memcg_reclaim_end,    reclaim)			\
	E(108, mm_filemap_add_to_page_cache,   page_cache)			\
	E(109, block_bio_held,       block_bio_held)				\
	E(110, svc_run_delay,        svc_run_delay)				\
	E(111, block_rq_cgroup,      block_rq_cgroup)

/*
 * Ids from here up are tracepoints named at record time (`st-record -e
 * SUBSYS:NAME`), numbered per file: their schema entry, named "SUBSYS:NAME",
 * is all that describes them.
 */
#define ST_GENERIC_TYPE_FIRST	0x8000

/* Type ids: ST_EV_block_rq_issue, ... */
#define ST_DECLARE_ID(id, name, payload) ST_EV_##name = id,
enum st_event_type { ST_EVENT_TYPES(ST_DECLARE_ID) };
#undef ST_DECLARE_ID

/* Payload structs: struct st_block_bio, ... and whole records: struct st_ev_block_bio. */
#define ST_DECLARE_FIELD(ctype, name, ftype, doc) ctype name;
#define ST_DECLARE_ARRAY(ctype, name, n, ftype, doc) ctype name[n];
#define ST_DECLARE_PAYLOAD(payload)						\
	struct st_##payload { st_fields_##payload(ST_DECLARE_FIELD, ST_DECLARE_ARRAY) }; \
	struct st_ev_##payload { struct st_event_header h; struct st_##payload p; };

ST_DECLARE_PAYLOAD(block_bio)
ST_DECLARE_PAYLOAD(block_split)
ST_DECLARE_PAYLOAD(block_rq)
ST_DECLARE_PAYLOAD(block_rq_issue)
ST_DECLARE_PAYLOAD(block_rq_complete)
ST_DECLARE_PAYLOAD(block_rq_complete_compact)
ST_DECLARE_PAYLOAD(block_rq_issue_stamped)
ST_DECLARE_PAYLOAD(block_rq_inode)
ST_DECLARE_PAYLOAD(sys_enter)
ST_DECLARE_PAYLOAD(sys_enter_io_uring_enter)
ST_DECLARE_PAYLOAD(sys_enter_openat)
ST_DECLARE_PAYLOAD(sys_exit)
ST_DECLARE_PAYLOAD(sys_exit_openat)
ST_DECLARE_PAYLOAD(fs_io)
ST_DECLARE_PAYLOAD(uring)
ST_DECLARE_PAYLOAD(task)
ST_DECLARE_PAYLOAD(sched_switch)
ST_DECLARE_PAYLOAD(sched_wakeup)
ST_DECLARE_PAYLOAD(lock_contention)
ST_DECLARE_PAYLOAD(dirty_pause)
ST_DECLARE_PAYLOAD(reclaim)
ST_DECLARE_PAYLOAD(page_cache)
ST_DECLARE_PAYLOAD(block_bio_held)
ST_DECLARE_PAYLOAD(block_rq_cgroup)
ST_DECLARE_PAYLOAD(svc_run_delay)

#endif /* STTRACE_EVENTS_H */
