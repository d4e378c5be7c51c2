// SPDX-License-Identifier: GPL-2.0
/*
 * syscalls.bpf.c - the probes of the data calls (read, write, their vector
 * and positioned forms, fsync, aio, io_uring_enter) and of the calls that
 * name files (openat, close, dup). Under a task filter they keep the task
 * filter's maps: the files the traced tasks write, their cgroups, their
 * fsyncs in progress.
 */
#include "sttrace.bpf.h"
#include "stage.bpf.h"
#include "why.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Task filter: the device of each traced thread's fsync/fdatasync in progress (open_fsyncs counts them). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ST_MAX_OPEN_FSYNCS);
	__type(key, __u32);
	__type(value, __u32);
} fsync_dev_by_tid SEC(".maps");

/* The blkcg the current task's bios are charged to (bio_associate_blkg), 0 for the root's. */
static __always_inline __u64 task_blkcg(void)
{
	return blkcg_key(task_io_css(current_task()));
}

/* The regular file the current task has open as fd, as a key. */
static __always_inline bool fd_file_key(unsigned int fd, struct st_file_key *k)
{
	struct file *file = task_fd_file(current_task(), fd);

	return file && inode_file(KREAD(file, f_inode), k);
}

static __always_inline bool is_write_call(__u16 type)
{
	return type == ST_EV_sys_enter_write || type == ST_EV_sys_enter_pwrite64 ||
	       type == ST_EV_sys_enter_writev || type == ST_EV_sys_enter_pwritev ||
	       type == ST_EV_sys_enter_pwritev2;
}

static __always_inline bool is_fsync_call(__u16 type)
{
	return type == ST_EV_sys_enter_fsync || type == ST_EV_sys_enter_fdatasync;
}

/* A traced thread returns from fsync/fdatasync: one fsync fewer open on its device. */
static __always_inline void fsync_closes(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), *dev, *n;

	dev = bpf_map_lookup_elem(&fsync_dev_by_tid, &tid);
	if (!dev)
		return;
	n = bpf_map_lookup_elem(&open_fsyncs, dev);
	if (n && *n)
		__sync_fetch_and_add(n, -1);
	bpf_map_delete_elem(&fsync_dev_by_tid, &tid);
}

/* ... enters it on fd: its file system's device has one more (a call whose exit was lost, one fewer). */
static __always_inline void fsync_opens(unsigned int fd)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0, *n;
	struct st_file_key k;

	fsync_closes();
	if (!fd_file_key(fd, &k) || bpf_map_update_elem(&fsync_dev_by_tid, &tid, &k.sdev, BPF_NOEXIST))
		return;
	bpf_map_update_elem(&open_fsyncs, &k.sdev, &zero, BPF_NOEXIST);
	n = bpf_map_lookup_elem(&open_fsyncs, &k.sdev);
	if (n)
		__sync_fetch_and_add(n, 1);
}

/*
 * With -d, the threads inside a data call on what -d selects: its exit is
 * recorded with its entry, the others' neither.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} dev_calls SEC(".maps");

/* A call whose argument 0 is the fd of the data it moves or syncs (not close, dup, an aio context). */
static __always_inline bool is_fd_data_call(__u16 type)
{
	return type != ST_EV_sys_enter_close && type != ST_EV_sys_enter_dup2 &&
	       type != ST_EV_sys_enter_dup3 && type != ST_EV_sys_enter_io_submit &&
	       type != ST_EV_sys_enter_io_getevents;
}

static __always_inline int emit_sys_enter(const struct trace_event_raw_sys_enter *ctx, __u16 type,
					  __u64 count, __s64 offset, __u64 flags)
{
	struct st_ev_sys_enter *e;
	struct st_file_key k;
	__u64 blkcg;
	__u8 one = 1;

	if (!task_passes())
		return 0;
	if (filter_ndevs && is_fd_data_call(type)) {
		__u32 tid = (__u32)bpf_get_current_pid_tgid();

		if (!task_fd_dev_passes(current_task(), (unsigned int)ctx->args[0]))
			return 0;
		bpf_map_update_elem(&dev_calls, &tid, &one, BPF_ANY);
	}
	if (task_filter_on()) {
		/* the files it writes: their writeback is recorded too */
		if (is_write_call(type) && fd_file_key((unsigned int)ctx->args[0], &k))
			bpf_map_update_elem(&dirtied_files, &k, &one, BPF_ANY);
		/* its cgroup: bios kernel threads queue for it are recorded too */
		blkcg = task_blkcg();
		if (blkcg && !bpf_map_lookup_elem(&traced_blkcgs, &blkcg))
			bpf_map_update_elem(&traced_blkcgs, &blkcg, &one, BPF_ANY);
		/* its fsync: the journal commit it waits for is recorded too */
		if (is_fsync_call(type))
			fsync_opens((unsigned int)ctx->args[0]);
	}
	e = reserve(sizeof(*e), type);
	if (!e)
		return 0;
	/* fds are C ints; an aio context is a full 64-bit handle */
	e->p.fd = type == ST_EV_sys_enter_io_submit || type == ST_EV_sys_enter_io_getevents ?
		  (__s64)ctx->args[0] : (__s64)(int)ctx->args[0];
	e->p.count = count;
	e->p.offset = offset;
	e->p.flags = flags;
	/* the cgroup v2 id: the one --cgroup names, and each cgroup2 directory's inode number */
	e->p.cgroup = bpf_get_current_cgroup_id();
	e->p.run_delay = current_run_delay();
	submit(e, sizeof(*e));
	return 0;
}

static __always_inline int emit_sys_exit(const struct trace_event_raw_sys_exit *ctx, __u16 type)
{
	struct st_ev_sys_exit *e;

	if (!task_passes())
		return 0;
	if (filter_ndevs && is_fd_data_call(type - 1)) {
		__u32 tid = (__u32)bpf_get_current_pid_tgid();

		if (bpf_map_delete_elem(&dev_calls, &tid))
			return 0;
	}
	if (task_filter_on() && is_fsync_call(type - 1))
		fsync_closes();
	e = reserve(sizeof(*e), type);
	if (!e)
		return 0;
	e->p.ret = ctx->ret;
	e->p.run_delay = current_run_delay();
	submit(e, sizeof(*e));
	return 0;
}

/*
 * A syscall's pair of programs. The fd is always argument 0; count, offset and
 * flags are expressions of ctx. Each reads ctx at a constant offset, which is
 * all the verifier accepts for a tracepoint context.
 */
#define SYSCALL(name, count, offset, flags)					\
SEC("tracepoint/syscalls/sys_enter_" #name)					\
int sys_enter_##name(struct trace_event_raw_sys_enter *ctx)			\
{										\
	return emit_sys_enter(ctx, ST_EV_sys_enter_##name, count, offset, flags); \
}										\
SEC("tracepoint/syscalls/sys_exit_" #name)					\
int sys_exit_##name(struct trace_event_raw_sys_exit *ctx)			\
{										\
	return emit_sys_exit(ctx, ST_EV_sys_exit_##name);			\
}

SYSCALL(read,            ctx->args[2], -1, 0)
SYSCALL(write,           ctx->args[2], -1, 0)
SYSCALL(pread64,         ctx->args[2], ctx->args[3], 0)
SYSCALL(pwrite64,        ctx->args[2], ctx->args[3], 0)
SYSCALL(readv,           ctx->args[2], -1, 0)
SYSCALL(writev,          ctx->args[2], -1, 0)
/* preadv/pwritev: on 64-bit kernels pos_l (arg 3) holds the whole offset */
SYSCALL(preadv,          ctx->args[2], ctx->args[3], 0)
SYSCALL(pwritev,         ctx->args[2], ctx->args[3], 0)
SYSCALL(preadv2,         ctx->args[2], ctx->args[3], ctx->args[5])
SYSCALL(pwritev2,        ctx->args[2], ctx->args[3], ctx->args[5])
SYSCALL(fsync,           0, -1, 0)
SYSCALL(fdatasync,       0, -1, 0)
SYSCALL(sync_file_range, ctx->args[2], ctx->args[1], ctx->args[3])
SYSCALL(io_submit,       ctx->args[1], -1, 0)
SYSCALL(io_getevents,    ctx->args[2], -1, 0)

#define IORING_ENTER_REGISTERED_RING	(1u << 4)	/* fd indexes the task's registered rings */

/* The io_uring file io_uring_enter(fd, ..., flags) names, NULL when there is none. */
static __always_inline struct file *uring_file(unsigned int fd, __u64 flags)
{
	struct io_uring_task *tctx;
	struct file *file = NULL;

	if (!(flags & IORING_ENTER_REGISTERED_RING))
		return task_fd_file(current_task(), fd);
	tctx = TREAD(current_task(), io_uring);
	if (tctx && bpf_core_field_exists(tctx->registered_rings) &&
	    fd < sizeof(tctx->registered_rings) / sizeof(tctx->registered_rings[0]))
		bpf_probe_read_kernel(&file, sizeof(file), (void *)((__u64)tctx->registered_rings +
								     fd * sizeof(file)));
	return file ? CAST(file, struct file) : NULL;
}

/*
 * io_uring_enter's entry also reads the ring's completion queue head and
 * tail: an application reaps CQEs in user space without a syscall (fio does
 * whenever CQEs are waiting), and the head is the kernel's only sight of it.
 */
SEC("tracepoint/syscalls/sys_enter_io_uring_enter")
int sys_enter_io_uring_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct st_ev_sys_enter_io_uring_enter *e;
	struct io_ring_ctx *ring;
	struct io_rings *rings;
	struct file *file;

	if (!task_passes())
		return 0;
	e = RESERVE(sys_enter_io_uring_enter, sys_enter_io_uring_enter);
	if (!e)
		return 0;
	e->p.fd = (int)ctx->args[0];
	e->p.count = ctx->args[1];
	e->p.offset = -1;
	e->p.flags = ctx->args[3];
	e->p.cq_head = 0;
	e->p.cq_tail = 0;
	file = uring_file((unsigned int)ctx->args[0], ctx->args[3]);
	ring = file && KREAD(file, private_data) ? CAST(KREAD(file, private_data), struct io_ring_ctx) :
						   NULL;
	rings = ring ? KREAD(ring, rings) : NULL;
	if (rings) {
		e->p.cq_head = KREAD(rings, cq.head);
		e->p.cq_tail = KREAD(rings, cq.tail);
	}
	submit(e, sizeof(*e));
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_io_uring_enter")
int sys_exit_io_uring_enter(struct trace_event_raw_sys_exit *ctx)
{
	return emit_sys_exit(ctx, ST_EV_sys_exit_io_uring_enter);
}

/* close ends the file its fd named: one probe run per close, no exit needed (EBADF closed nothing). */
SEC("tracepoint/syscalls/sys_enter_close")
int sys_enter_close(struct trace_event_raw_sys_enter *ctx)
{
	return emit_sys_enter(ctx, ST_EV_sys_enter_close, 0, -1, 0);
}

/*
 * dup2/dup3 make newfd (in count) name what oldfd (in fd) names: how a shell
 * or dd puts a file on fd 0 or 1. No exit needed: a call that fails (EBADF)
 * had no file to hand on.
 */
SEC("tracepoint/syscalls/sys_enter_dup2")
int sys_enter_dup2(struct trace_event_raw_sys_enter *ctx)
{
	return emit_sys_enter(ctx, ST_EV_sys_enter_dup2, (__u32)ctx->args[1], -1, 0);
}

SEC("tracepoint/syscalls/sys_enter_dup3")
int sys_enter_dup3(struct trace_event_raw_sys_enter *ctx)
{
	return emit_sys_enter(ctx, ST_EV_sys_enter_dup3, (__u32)ctx->args[1], -1, (__u32)ctx->args[2]);
}

/*
 * The path openat was given, by thread, from its entry to its exit. At the
 * entry the string's page may not be mapped yet (a literal in a binary's
 * rodata that a forked process has not touched: fork copies no page table
 * entries of a read-only file mapping), and a probe cannot fault it in; by
 * the exit the kernel's getname() has, so the exit reads it.
 */
#define ENOENT 2	/* name_len when the entry kept no path: it ran before the probe was attached */

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_MAX_OPENING_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} opening_paths SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_openat")
int sys_enter_openat(struct trace_event_raw_sys_enter *ctx)
{
	struct st_ev_sys_enter_openat *e;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 path = ctx->args[1];

	if (!task_passes())
		return 0;
	bpf_map_update_elem(&opening_paths, &tid, &path, BPF_ANY);
	e = RESERVE(sys_enter_openat, sys_enter_openat);
	if (!e)
		return 0;
	e->p.dfd = (int)ctx->args[0];
	e->p.flags = (__u32)ctx->args[2];
	/* zero first: the string copy leaves the bytes past its NUL untouched */
	__builtin_memset(e->p.filename, 0, sizeof(e->p.filename));
	bpf_probe_read_user_str(e->p.filename, sizeof(e->p.filename), (const void *)ctx->args[1]);
	submit(e, sizeof(*e));
	return 0;
}

#define FMODE_WRITE	0x2	/* file->f_mode: open for writing */

/*
 * The file opened, by inode: writeback and readahead I/O are named by inode
 * only. Under a task filter a file opened for writing is one whose
 * writeback is the task's, whether it writes with write-family calls or
 * through a shared mapping (no call at all) or io_uring.
 */
SEC("tracepoint/syscalls/sys_exit_openat")
int sys_exit_openat(struct trace_event_raw_sys_exit *ctx)
{
	struct st_ev_sys_exit_openat *e;
	struct st_file_key k = {};
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct file *file;
	__u64 *path;
	__u8 one = 1;

	if (!task_passes())
		return 0;
	path = bpf_map_lookup_elem(&opening_paths, &tid);
	file = ctx->ret >= 0 ? task_fd_file(current_task(), (unsigned int)ctx->ret) : NULL;
	if (file && inode_file(KREAD(file, f_inode), &k) && task_filter_on() &&
	    (KREAD(file, f_mode) & FMODE_WRITE))
		bpf_map_update_elem(&dirtied_files, &k, &one, BPF_ANY);
	e = RESERVE(sys_exit_openat, sys_exit_openat);
	if (!e)
		goto out;
	e->p.ret = ctx->ret;
	e->p.ino = k.ino;
	e->p.dev = k.sdev;
	e->p.pad = 0;
	e->p.pad2 = 0;
	/* zero first: the string copy leaves the bytes past its NUL untouched */
	__builtin_memset(e->p.filename, 0, sizeof(e->p.filename));
	e->p.name_len = path ? bpf_probe_read_user_str(e->p.filename, sizeof(e->p.filename),
						       (const void *)*path) : -ENOENT;
	submit(e, sizeof(*e));
out:
	if (path)
		bpf_map_delete_elem(&opening_paths, &tid);
	return 0;
}
