/* SPDX-License-Identifier: MIT */
/*
 * sttrace_bpf.h - limits shared by the probes in bpf/ and st-record (not part of
 * the file format).
 */
#ifndef STTRACE_BPF_H
#define STTRACE_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define ST_MAX_FILTER_DEVS	64	/* -d: the disk and its partitions */
#define ST_MAX_TRACKED_TGIDS	65536	/* -p: the process and its descendants */
#define ST_MAX_MARKED_BIOS	65536	/* bios in flight that a filter marked */
#define ST_MAX_DIRTIED_FILES	16384	/* files the traced tasks wrote to (task filter) */
#define ST_MAX_OPENING_THREADS	4096	/* threads inside openat at once, their paths kept */
#define ST_MAX_TRACED_BLKCGS	1024	/* cgroups the traced tasks' I/O is charged to (task filter) */
#define ST_MAX_OPEN_FSYNCS	4096	/* traced threads in fsync/fdatasync at once (task filter) */
#define ST_MAX_URING_INFLIGHT	16384	/* io_uring requests in flight, before 5.19 (bpf/io_uring.bpf.c) */
#define ST_MAX_SERVICE_THREADS	16384	/* kernel threads the `sched` probes follow (bpf/why.bpf.c) */
#define ST_SYSCALL_NRS		512	/* syscall numbers in `traced_calls` (bpf/why.bpf.c) */
#define ST_MAX_UNMARK		32	/* bios of a request unmarked at completion */
#define ST_FLUSH_WAITERS	8	/* requests a device flush serves looked at for a mark */
#define ST_STAGE_BYTES		4096	/* a CPU's staged records go to the ring buffer past this */
#define ST_MAX_RECORD_BYTES	512	/* the largest record the probes emit */
#define ST_MAX_NESTING		3	/* probes interrupting a probe on one CPU (softirq, irq, NMI) */

/* The data calls of `traced_calls`, by syscall number: a thread inside one is followed. */
#define ST_CALL_ON_FD		1	/* its first argument is the fd of the file it works on */
#define ST_CALL_NO_FD		2	/* it names a ring or an aio context, no file (-d follows it always) */

/* A regular file, the key of the `dirtied_files` map: inode and file system device (kernel dev_t). */
struct st_file_key {
	__u64 ino;
	__u32 sdev;
	__u32 pad;
};

/*
 * When a CPU staged its oldest record still waiting for the ring buffer
 * (bpf_ktime_get_ns(), 0: nothing staged); an array of one per possible CPU,
 * a cache line each, mapped by st-record. It runs the flush only on CPUs
 * whose records have waited a drain period, sparing busy CPUs (their
 * batches fill within microseconds) and idle ones an interrupt per drain.
 */
struct st_stage_age {
	__u64 since;
	__u8 pad[56];
};

/*
 * Tracepoints named at record time (`-e SUBSYS:NAME`) share one probe,
 * generic_tracepoint (bpf/generic.bpf.c), attached once per tracepoint with
 * the index of its layout in `generic_events` as the BPF cookie. st-record
 * builds each layout and the matching schema type from the tracepoint's
 * format file (record/tracepoint.c):
 *
 *   record = header (24 bytes)
 *          | the tracepoint's entry after its 8-byte common part, copy_len bytes
 *            (so an entry field at offset o is at record offset o + 16)
 *          | one slot of ST_GENERIC_STR_LEN bytes per __data_loc string,
 *            NUL-padded (a longer string is cut to ST_GENERIC_STR_LEN - 1 bytes)
 */
#define ST_GENERIC_MAX_EVENTS	1024	/* tracepoints of one recording, `-e 'xfs:*'` has 633 */
#define ST_GENERIC_MAX_STRINGS	4	/* __data_loc strings copied per event */
#define ST_GENERIC_STR_LEN	64	/* bytes kept of each, NUL included */
#define ST_GENERIC_ENTRY_SKIP	8	/* the entry's common part (type, flags, preempt count, pid) */

struct st_generic_string {
	__u16 loc_offset;		/* the __data_loc word in the entry */
	__u16 slot_offset;		/* its slot in the record */
};

struct st_generic_event {
	__u16 type;			/* record type id */
	__u16 size;			/* record size, a multiple of 8, <= ST_MAX_RECORD_BYTES */
	__u16 copy_len;			/* entry bytes copied after its common part */
	__u16 dev_offset;		/* a dev_t field `dev` in the entry (-d applies), 0 = none */
	__u32 nstrings;
	struct st_generic_string strings[ST_GENERIC_MAX_STRINGS];
	/*
	 * Per record byte 0xff where a schema field covers it, 0 elsewhere, as
	 * 64-bit words the probe ANDs the record with: the entry's padding holds
	 * stale kernel bytes, __data_loc words and fields left out say what no
	 * field shows, and the tail past the copy holds an earlier record's
	 * bytes. A record keeps no byte its schema does not describe.
	 */
	__u64 keep[ST_MAX_RECORD_BYTES / 8];
};

#endif /* STTRACE_BPF_H */
