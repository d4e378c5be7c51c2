/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sttrace.bpf.h - what every probe of st-record reads: the recording's
 * settings, the task filter's maps, the kernel access that works on every
 * kernel of the matrix (5.10 on) and the filters.
 *
 * The probes are one .bpf.c per concern (bpf/README.md), linked into one
 * object, sttrace.bpf.o, by libbpf's static linker (bpftool gen object).
 * A setting or map several of them read is defined once, in the file
 * named beside it, and declared extern here: the linker resolves each
 * extern to that definition, so a setting is one variable of the object's
 * .rodata, which st-record sets before load, and a map one map.
 *
 * Every probe is a tracepoint (classic or BTF raw): kprobes and fentry do not
 * load on locked-down kernels. Each program is named after the event type it
 * emits (format/lib/sttrace_events.h), so st-record enables a program by its event
 * name and leaves the others unloaded.
 *
 * Hot path rules: reserve a fixed-size record, fill it with plain loads,
 * submit. Records are staged per CPU and reach the ring buffer in batches
 * (stage.bpf.h), submitted without waking the reader unless the
 * buffer passed its fill threshold. Records that find no room are counted in
 * a per-CPU array.
 *
 * Filters are read-only globals set before load: the verifier prunes the
 * branches of the filters that are off, so they cost nothing.
 *   task filter (-p, -c, --cgroup): syscall, fs, io_uring and task events are
 *     kept for matching tasks. A bio queued by a matching task is marked in
 *     `marked_bios`; later block events (which may run in interrupt or worker
 *     context) are kept when their bio, or their request's first bio, is marked;
 *     a device flush (no bios) when a request it serves has a marked bio.
 *     Bios kernel threads queue for the matching tasks are marked as they
 *     are queued too: a bio of a file they wrote to with write-family
 *     syscalls (`dirtied_files`: its writeback), a bio blk-throttle held
 *     back in a cgroup they run in (`traced_blkcgs`: its dispatch worker
 *     queues it later), and a bio of no file on a device where one of
 *     them is in fsync (`open_fsyncs`: the journal commit it waits for).
 *   device filter (-d): block events by their disk, fs events by their file
 *     system device (the disk or one of its partitions). Data syscalls and
 *     io_uring requests by their fd's file: a file of a file system on the
 *     devices, or a device itself (`dev_calls`, `dev_urings`: the exit or
 *     completion goes with its entry or submission); a pipe, a socket or
 *     another device's file is not recorded. A request on a registered file,
 *     io_uring_enter and the aio calls (a ring, a context) are kept; so are
 *     openat, close and dup, which name the fds.
 *   self: the recorder's own tasks never pass the task filter. Without a task
 *     filter, and when the recorder's output is on a traced disk, bios queued
 *     by the recorder or carrying the output file's pages (writeback runs in
 *     kernel threads) are marked instead and their block events dropped.
 */
#ifndef STTRACE_BPF_BPF_H
#define STTRACE_BPF_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sttrace_events.h"
#include "sttrace_bpf.h"

/* The recording's settings, set by st-record before load (sttrace.bpf.c) */
extern const volatile __u32 self_tgid;
extern const volatile bool filter_pid;			/* tgids in tracked_tgids */
extern const volatile bool filter_comm;
extern const volatile char target_comm[ST_COMM_LEN];
extern const volatile __u64 filter_cgroup;		/* cgroup v2 id, 0 = off */
extern const volatile __u64 filter_blkcg;		/* cgroup v1 blkio id, 0 = off */
extern const volatile __u32 filter_ndevs;		/* 0 = off; devs[0] is the disk */
extern const volatile __u32 filter_devs[ST_MAX_FILTER_DEVS];
extern const volatile bool mark_self_bios;		/* drop block events of the recorder's bios */
extern const volatile __u64 self_ino;			/* the output file: its writeback is ours too */
extern const volatile __u32 self_sdev;

/* The task filter's maps (sttrace.bpf.c): -p's processes, filled by st-record and fork */
struct tracked_tgids_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ST_MAX_TRACKED_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
};
extern struct tracked_tgids_map tracked_tgids SEC(".maps");

/*
 * Task filter: files the traced tasks wrote to or opened for writing; their
 * writeback is theirs. st-record adds the files the -p processes have open
 * for writing as it starts.
 */
struct dirtied_files_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_MAX_DIRTIED_FILES);
	__type(key, struct st_file_key);
	__type(value, __u8);
};
extern struct dirtied_files_map dirtied_files SEC(".maps");

/*
 * Task filter: the blkcgs (css addresses) the traced tasks' I/O is charged to,
 * but the root's: a bio blk-throttle held back in one of them is theirs.
 */
struct traced_blkcgs_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_MAX_TRACED_BLKCGS);
	__type(key, __u64);
	__type(value, __u8);
};
extern struct traced_blkcgs_map traced_blkcgs SEC(".maps");

/*
 * Task filter: the traced tasks' fsync/fdatasync calls in progress, their
 * number per device (the file system's, syscalls.bpf.c keeps it): the bios
 * a kernel thread queues there meanwhile that carry no file's page cache
 * (jbd2's journal commit, metadata) are what those calls wait for.
 */
struct open_fsyncs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ST_MAX_OPEN_FSYNCS);
	__type(key, __u32);
	__type(value, __u32);
};
extern struct open_fsyncs_map open_fsyncs SEC(".maps");

#define task_filter_on() (filter_pid || filter_comm || filter_cgroup || filter_blkcg)

/*
 * The current task. bpf_get_current_task_btf() (5.11+) gives a BTF pointer,
 * read with plain loads; before it bpf_get_current_task() gives an address,
 * read with probe reads. TREAD(task, a, b) is task->a->b either way, the
 * kernel's BTF (its helper ids) saying which and the verifier dropping the
 * other branch. The tracepoints' own task arguments are BTF pointers on every
 * kernel: TREAD reads them too.
 */
#define have_task_btf bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)
#define current_task() \
	((struct task_struct *)(have_task_btf ? (void *)bpf_get_current_task_btf() : \
						(void *)bpf_get_current_task()))
#define TREAD(ptr, ...) (have_task_btf ? ___arrow(ptr, __VA_ARGS__) : BPF_CORE_READ(ptr, __VA_ARGS__))

/* What task_struct had before: state (5.14), cpu (5.16), a kthread's own data (5.17) */
struct task_struct___510 {
	long state;
	unsigned int cpu;
	int *set_child_tid;
} __attribute__((preserve_access_index));

/*
 * A kernel address as a BTF pointer of the given type: plain loads through
 * it, no helper calls. A kfunc of 6.2+: weak, so the object loads where the
 * kernel lacks it, and used only where st-record found it in the kernel's
 * BTF (have_rdonly_cast); there CAST() leaves the address as it is and
 * KREAD() reads through it with a probe read, the verifier dropping the
 * branch not taken.
 *
 * libbpf's static linker before 1.5 fails on a kfunc two objects declare
 * in .ksyms ("failed to resolve size of underlying type"). One object
 * does, why.bpf.c (RDONLY_CAST_KSYM), the first in link order to call it;
 * the others declare it in no section, and the linker joins theirs to it
 * (one of theirs before it fails the link: "section mismatch"). The calls
 * stay kfunc calls, which the verifier of 6.2+ turns into a move.
 */
#ifdef RDONLY_CAST_KSYM
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
#else
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __weak;
#endif
extern const volatile bool have_rdonly_cast;

#define CAST(ptr, type) \
	((type *)(have_rdonly_cast ? bpf_rdonly_cast((void *)(ptr), bpf_core_type_id_kernel(type)) : \
				     (void *)(ptr)))
/* ptr->field of a pointer CAST() made (field: one member, or a member of a member) */
#define KREAD(ptr, field) (have_rdonly_cast ? (ptr)->field : BPF_CORE_READ(ptr, field))

#define S_IFMT	00170000
#define S_IFREG	0100000
#define S_IFBLK	0060000

#define PF_WQ_WORKER	0x00000020	/* task->flags: a workqueue worker (kworker) */
#define PF_KTHREAD	0x00200000	/* task->flags: a kernel thread */

/* ---- filters ---------------------------------------------------------- */

static __always_inline bool comm_matches(const char *comm)
{
	for (int i = 0; i < ST_COMM_LEN; i++) {
		if (comm[i] != target_comm[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

/*
 * The task's css in its I/O controller's hierarchy (cgroup v1 blkio or v2
 * io), NULL on a kernel without one. Through TREAD: the current task is no
 * BTF pointer before 5.11.
 */
static __always_inline struct cgroup_subsys_state *task_io_css(const struct task_struct *task)
{
	struct css_set *cgroups;

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, io_cgrp_id))
		return NULL;
	cgroups = TREAD(task, cgroups);
	return cgroups ? TREAD(cgroups, subsys[bpf_core_enum_value(enum cgroup_subsys_id, io_cgrp_id)]) : NULL;
}

/*
 * The id of the task's cgroup in its I/O controller's hierarchy (cgroup v1
 * blkio, where --cgroup names a blkio group), 0 on a kernel without one.
 */
static __always_inline __u64 task_blkio_id(const struct task_struct *task)
{
	struct cgroup_subsys_state *css = task_io_css(task);

	return css ? TREAD(css, cgroup, kn, id) : 0;
}

/*
 * A task we trace (the recorder never is): the current one, or one a
 * scheduler probe names. Plain loads from the task; its cgroup's kernfs id
 * is what bpf_get_current_cgroup_id() returns, the id --cgroup names.
 */
static __always_inline bool task_struct_passes(const struct task_struct *task)
{
	__u32 tgid = TREAD(task, tgid);

	if (tgid == self_tgid)
		return false;
	if (filter_pid && !bpf_map_lookup_elem(&tracked_tgids, &tgid))
		return false;
	if (filter_comm) {
		char comm[ST_COMM_LEN];

		bpf_probe_read_kernel(comm, sizeof(comm), task->comm);
		if (!comm_matches(comm))
			return false;
	}
	if (filter_cgroup && TREAD(task, cgroups, dfl_cgrp, kn, id) != filter_cgroup)
		return false;
	return !filter_blkcg || task_blkio_id(task) == filter_blkcg;
}

static __always_inline bool task_passes(void)
{
	return task_struct_passes(current_task());
}

static __always_inline bool fs_dev_passes(__u32 dev)
{
	if (!filter_ndevs)
		return true;
	for (__u32 i = 0; i < ST_MAX_FILTER_DEVS && i < filter_ndevs; i++)
		if (dev == filter_devs[i])
			return true;
	return false;
}

/*
 * The file a task has open as fd, NULL when none. Plain loads through BTF
 * pointers (bpf_get_current_task_btf, bpf_rdonly_cast) instead of a helper
 * call per pointer: this runs at every io_uring_enter.
 */
static __always_inline struct file *task_fd_file(const struct task_struct *task, unsigned int fd)
{
	struct fdtable *fdt = TREAD(task, files, fdt);
	struct file *file = NULL;

	if (fdt && fd < TREAD(fdt, max_fds))
		bpf_probe_read_kernel(&file, sizeof(file), (void *)((__u64)TREAD(fdt, fd) + fd * sizeof(file)));
	return file ? CAST(file, struct file) : NULL;
}

/*
 * Whether fd of task names what -d selects: a file of a file system on
 * the devices, or one of the devices itself (its block special file); a
 * pipe, a socket, another device's file, no file: false.
 */
static __always_inline bool task_fd_dev_passes(const struct task_struct *task, unsigned int fd)
{
	struct file *file = task_fd_file(task, fd);
	struct inode *inode = file ? KREAD(file, f_inode) : NULL;
	struct super_block *sb;

	if (!inode)
		return false;
	if ((KREAD(inode, i_mode) & S_IFMT) == S_IFBLK)
		return fs_dev_passes(KREAD(inode, i_rdev));
	sb = KREAD(inode, i_sb);
	return fs_dev_passes(KREAD(sb, s_dev));
}

/* The regular file an inode is, as a key; false for anything else (a block device, a directory). */
static __always_inline bool inode_file(const struct inode *inode, struct st_file_key *k)
{
	struct super_block *sb;

	if (!inode || (KREAD(inode, i_mode) & S_IFMT) != S_IFREG)
		return false;
	k->ino = KREAD(inode, i_ino);
	sb = KREAD(inode, i_sb);
	k->sdev = KREAD(sb, s_dev);
	k->pad = 0;
	return true;
}

/* A blkcg as its css address, 0 for the root's (css without a parent) or none; css may be the current task's. */
static __always_inline __u64 blkcg_key(const struct cgroup_subsys_state *css)
{
	return css && TREAD(css, parent) ? (__u64)css : 0;
}

#endif /* STTRACE_BPF_BPF_H */
