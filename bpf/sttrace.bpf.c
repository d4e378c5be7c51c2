// SPDX-License-Identifier: GPL-2.0
/*
 * sttrace.bpf.c - the probes behind st-record.
 *
 * Every probe is a tracepoint (classic or BTF raw): kprobes and fentry do not
 * load on locked-down kernels. Each program is named after the event type it
 * emits (format/lib/sttrace_events.h), so st-record enables a program by its event
 * name and leaves the others unloaded.
 *
 * Hot path rules: reserve a fixed-size record, fill it with plain loads,
 * submit. Records are staged per CPU and reach the ring buffer in batches
 * (see "records" below), submitted without waking the reader unless the
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
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sttrace_events.h"
#include "sttrace_bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 self_tgid;
const volatile __u64 wakeup_bytes = ~0ull;	/* force a wakeup past this much unread data */
const volatile bool filter_pid;			/* tgids in tracked_tgids */
const volatile bool filter_comm;
const volatile char target_comm[ST_COMM_LEN];
const volatile __u64 filter_cgroup;		/* cgroup v2 id, 0 = off */
const volatile __u64 filter_blkcg;		/* cgroup v1 blkio id, 0 = off */
const volatile __u32 filter_ndevs;		/* 0 = off; devs[0] is the disk */
const volatile __u32 filter_devs[ST_MAX_FILTER_DEVS];
const volatile bool mark_self_bios;		/* drop block events of the recorder's bios */
const volatile __u64 self_ino;			/* the output file: its writeback is ours too */
const volatile __u32 self_sdev;
const volatile bool record_rq_inode;		/* block_rq_inode after each issue of page-cache data */
const volatile bool record_rq_cgroup;		/* block_rq_cgroup after each issue charged to a group */

/*
 * Probes record while the event clock is below this: 0 until st-record has
 * attached the last probe, then the end of -t (or never), and 0 again before
 * the first probe is detached. So every probe records over the same window,
 * however long attaching and detaching take, and -t bounds it on the event
 * clock. Outside it the probes only keep their maps (marks, tasks) current.
 */
__u64 record_until;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);		/* resized by st-record before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ST_MAX_TRACKED_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} tracked_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_MAX_MARKED_BIOS);
	__type(key, __u64);
	__type(value, __u8);
} marked_bios SEC(".maps");

/*
 * Task filter: files the traced tasks wrote to or opened for writing; their
 * writeback is theirs. st-record adds the files the -p processes have open
 * for writing as it starts.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_MAX_DIRTIED_FILES);
	__type(key, struct st_file_key);
	__type(value, __u8);
} dirtied_files SEC(".maps");

/*
 * Task filter: the blkcgs (css addresses) the traced tasks' I/O is charged to,
 * but the root's: a bio blk-throttle held back in one of them is theirs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_MAX_TRACED_BLKCGS);
	__type(key, __u64);
	__type(value, __u8);
} traced_blkcgs SEC(".maps");

/*
 * Task filter: the traced tasks' fsync/fdatasync calls in progress, by thread
 * (the file system's device), and their number per device: the bios a
 * kernel thread queues there meanwhile that carry no file's page cache
 * (jbd2's journal commit, metadata) are what those calls wait for.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ST_MAX_OPEN_FSYNCS);
	__type(key, __u32);
	__type(value, __u32);
} fsync_dev_by_tid SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ST_MAX_OPEN_FSYNCS);
	__type(key, __u32);
	__type(value, __u32);
} open_fsyncs SEC(".maps");

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
 * The id of the task's cgroup in its I/O controller's hierarchy (cgroup v1
 * blkio, where --cgroup names a blkio group), 0 on a kernel without one.
 */
static __always_inline __u64 task_blkio_id(const struct task_struct *task)
{
	struct cgroup_subsys_state *css;

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, io_cgrp_id) || !task->cgroups)
		return 0;
	css = task->cgroups->subsys[bpf_core_enum_value(enum cgroup_subsys_id, io_cgrp_id)];
	return css && css->cgroup && css->cgroup->kn ? css->cgroup->kn->id : 0;
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

static __always_inline bool disk_passes(__u32 disk)
{
	return !filter_ndevs || disk == filter_devs[0];
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

static __always_inline bool bio_marked(const struct bio *bio)
{
	__u64 key = (__u64)bio;

	return bpf_map_lookup_elem(&marked_bios, &key) != NULL;
}

static __always_inline void mark_bio(const struct bio *bio)
{
	__u64 key = (__u64)bio;
	__u8 one = 1;

	bpf_map_update_elem(&marked_bios, &key, &one, BPF_ANY);
}

static __always_inline void unmark_bio(const struct bio *bio)
{
	__u64 key = (__u64)bio;

	bpf_map_delete_elem(&marked_bios, &key);
}

/*
 * A kernel address as a BTF pointer of the given type: plain loads through
 * it, no helper calls. A kfunc of 6.2+: weak, so the object loads where the
 * kernel lacks it, and used only where st-record found it in the kernel's
 * BTF (have_rdonly_cast); there CAST() leaves the address as it is and
 * KREAD() reads through it with a probe read, the verifier dropping the
 * branch not taken.
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
const volatile bool have_rdonly_cast;

#define CAST(ptr, type) \
	((type *)(have_rdonly_cast ? bpf_rdonly_cast((void *)(ptr), bpf_core_type_id_kernel(type)) : \
				     (void *)(ptr)))
/* ptr->field of a pointer CAST() made (field: one member, or a member of a member) */
#define KREAD(ptr, field) (have_rdonly_cast ? (ptr)->field : BPF_CORE_READ(ptr, field))

#define S_IFMT	00170000
#define S_IFREG	0100000
#define S_IFBLK	0060000

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

/*
 * The file whose page cache a bio carries (writeback, readahead), by its
 * first page. false for anything else: direct I/O into user memory
 * (anonymous pages), the block device's own page cache (metadata, the
 * journal), a bio without data.
 */
static __always_inline bool bio_file(const struct bio *bio, struct st_file_key *k)
{
	struct page *page = bio->bi_io_vec ? bio->bi_io_vec->bv_page : NULL;
	unsigned long head = 0, mapping = 0;
	struct address_space *as;

	if (!page)
		return false;
	/* a large folio's tail page points at its head page, which has the mapping */
	bpf_probe_read_kernel(&head, sizeof(head), &page->compound_head);
	if (head & 1)
		page = (struct page *)(head - 1);
	bpf_probe_read_kernel(&mapping, sizeof(mapping), &page->mapping);
	/* low bits set: anonymous or movable memory, not a file's page cache */
	if (!mapping || (mapping & 3))
		return false;
	as = CAST(mapping, struct address_space);
	return inode_file(KREAD(as, host), k);
}

/* The bio writes the recorder's output file (page cache writeback by a flusher thread). */
static __always_inline bool bio_of_output(const struct bio *bio)
{
	struct st_file_key k;

	return bio_file(bio, &k) && k.ino == self_ino && k.sdev == self_sdev;
}

/* The bio carries a file the traced tasks wrote to. */
static __always_inline bool bio_of_dirtied_file(const struct bio *bio)
{
	struct st_file_key k;

	return bio_file(bio, &k) && bpf_map_lookup_elem(&dirtied_files, &k);
}

/*
 * Until 5.12 a bio named its disk and partition number (bi_disk,
 * bi_partno), not the partition's block_device (bi_bdev), and until 5.16 a
 * request its disk (rq_disk), not through its queue.
 */
struct bio___510 {
	struct gendisk *bi_disk;
	__u8 bi_partno;
} __attribute__((preserve_access_index));

struct request___510 {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline __u32 disk_devt(const struct gendisk *disk)
{
	if (!disk)
		return 0;
	return (__u32)disk->major << 20 | (__u32)disk->first_minor;
}

static __always_inline struct gendisk *bio_gendisk(const struct bio *bio)
{
	if (bpf_core_field_exists(((struct bio___510 *)0)->bi_disk))
		return ((const struct bio___510 *)bio)->bi_disk;
	return bio->bi_bdev->bd_disk;
}

/* The device of the bio's partition (the whole disk's for none), as its file system has it. */
static __always_inline __u32 bio_part_devt(const struct bio *bio)
{
	const struct bio___510 *old = (const void *)bio;

	if (bpf_core_field_exists(old->bi_disk))
		return disk_devt(old->bi_disk) + old->bi_partno;
	return bio->bi_bdev->bd_dev;
}

#define PF_WQ_WORKER	0x00000020	/* task->flags: a workqueue worker (kworker) */
#define PF_KTHREAD	0x00200000	/* task->flags: a kernel thread */

/* A blkcg as its css address, 0 for the root's (css without a parent) or none; css may be the current task's. */
static __always_inline __u64 blkcg_key(const struct cgroup_subsys_state *css)
{
	return css && TREAD(css, parent) ? (__u64)css : 0;
}

/* The blkcg a bio is charged to (bio->bi_blkg, set from the task that submitted it), 0 for the root's. */
static __always_inline __u64 bio_blkcg(const struct bio *bio)
{
	return bio->bi_blkg ? blkcg_key(&bio->bi_blkg->blkcg->css) : 0;
}

/* The blkcg the current task's bios are charged to (bio_associate_blkg), 0 for the root's. */
static __always_inline __u64 task_blkcg(void)
{
	struct css_set *cgroups = TREAD(current_task(), cgroups);

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, io_cgrp_id) || !cgroups)
		return 0;
	return blkcg_key(TREAD(cgroups, subsys[bpf_core_enum_value(enum cgroup_subsys_id, io_cgrp_id)]));
}

/* blk-throttle's part of a queue; a kernel built without it has no request_queue->td. */
struct throtl_data___st {
	struct work_struct dispatch_work;
} __attribute__((preserve_access_index));

struct request_queue___st {
	struct throtl_data___st *td;
} __attribute__((preserve_access_index));

/*
 * The current task is blk-throttle's dispatch worker of queue q: a kworker
 * running q->td->dispatch_work (blk_throtl_dispatch_work_fn). It queues
 * and, unplugging, issues the bios the throttle held back in the tasks that
 * submitted them, once their cgroups' limits allow.
 */
static __always_inline bool throttle_dispatching(const struct request_queue *q)
{
	struct task_struct *task = current_task();
	struct task_struct___510 *task510 = (void *)task;
	struct throtl_data___st *td;
	struct kthread *kthread;
	struct worker *worker;

	void *private;

	if (!(TREAD(task, flags) & PF_WQ_WORKER) ||
	    !bpf_core_field_exists(((struct request_queue___st *)0)->td))
		return false;
	/* a kernel thread's struct kthread, where set_child_tid kept it until 5.17 */
	private = bpf_core_field_exists(task->worker_private) ? TREAD(task, worker_private) :
			TREAD(task510, set_child_tid);
	if (!private)
		return false;
	td = BPF_CORE_READ((const struct request_queue___st *)q, td);
	kthread = CAST(private, struct kthread);
	if (!td || !KREAD(kthread, data))
		return false;
	worker = CAST(KREAD(kthread, data), struct worker);
	return (__u64)KREAD(worker, current_work) ==
	       (__u64)td + bpf_core_field_offset(struct throtl_data___st, dispatch_work);
}

/*
 * A bio the throttle held back that carries no page cache (its dispatch
 * worker queues it): direct I/O, which the task that submitted it waits
 * for. The page cache's bios are writeback and readahead, which no call
 * waits for as it waits for its own.
 */
static __always_inline bool bio_held_back(const struct bio *bio, bool dispatching)
{
	struct st_file_key k;

	return dispatching && !bio_file(bio, &k);
}

/*
 * A bio a kernel thread queues, of no file's page cache, on a device where
 * a traced task is in fsync: its journal commit (jbd2) or metadata, which
 * the fsync waits for. The device is the bio's own (a partition's), as the
 * file system has it.
 */
static __always_inline bool bio_for_open_fsync(const struct bio *bio)
{
	__u32 dev = bio_part_devt(bio);
	struct st_file_key k;
	__u32 *n;

	if (!(TREAD(current_task(), flags) & PF_KTHREAD))
		return false;
	n = bpf_map_lookup_elem(&open_fsyncs, &dev);
	return n && *n && !bio_file(bio, &k);
}

/* Whether the block events of this bio are kept (marks mean "traced" with a task filter, "ours" without). */
static __always_inline bool bio_selected(const struct bio *bio)
{
	if (task_filter_on())
		return bio_marked(bio);
	if (mark_self_bios)
		return !bio_marked(bio);
	return true;
}

/* ---- records ---------------------------------------------------------- */

/*
 * Each CPU stages its records and hands them to the ring buffer as one batch
 * of ST_STAGE_BYTES or more: a ring buffer reservation takes a spinlock with
 * interrupts off, which costs more than the rest of a probe (in a
 * paravirtualised guest far more), so one per batch instead of one per event.
 * A batch is one CPU's records in time order, which is how st-record writes
 * them (one open chunk per CPU). At each drain st-record runs flush_stage on
 * the CPUs whose oldest staged record has waited a drain period
 * (stage_ages), so a quiet CPU's records wait about one drain period.
 *
 * Programs run with preemption off, but one may interrupt another on the
 * same CPU (a completion in interrupt context during a submission). Nesting
 * is strictly last in, first out, so a depth counter without atomics
 * suffices: the outermost program (depth 0) writes into the stage; nested
 * ones write into a slot of their own and go to the ring buffer directly,
 * and never touch the stage that the program they interrupted is filling.
 */
struct stage {
	__u32 depth;			/* programs on this CPU between reserve and submit */
	__u32 len;			/* bytes staged, < ST_STAGE_BYTES between programs */
	__u64 count;			/* records staged */
	__u8 buf[2 * ST_STAGE_BYTES];	/* len < ST_STAGE_BYTES + one record */
	__u8 nested[ST_MAX_NESTING][ST_MAX_RECORD_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stage);
} stages SEC(".maps");

/* When each CPU staged its oldest waiting record (sttrace_bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);			/* one per possible CPU, set by st-record */
	__type(key, __u32);
	__type(value, struct st_stage_age);
} stage_ages SEC(".maps");

_Static_assert(sizeof(struct st_ev_sys_exit_openat) <= ST_MAX_RECORD_BYTES &&
	       ST_MAX_RECORD_BYTES <= ST_STAGE_BYTES, "the largest record must fit a slot and the stage");

/* Keeps the compiler from moving stage accesses across a depth change. */
#define barrier() asm volatile("" ::: "memory")

static __always_inline struct stage *this_stage(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stages, &zero);
}

static __always_inline void count_lost(__u64 n)
{
	__u32 zero = 0;
	__u64 *lost_here = bpf_map_lookup_elem(&lost, &zero);

	if (lost_here)
		*lost_here += n;
}

/* Into the ring buffer, waking the reader only past the fill threshold. */
static __always_inline void output(void *data, __u64 size, __u64 records)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) + size >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&events, data, size, flags))
		count_lost(records);
}

static __always_inline void set_stage_age(__u64 since)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct st_stage_age *age = bpf_map_lookup_elem(&stage_ages, &cpu);

	if (age)
		age->since = since;
}

/* The stage's batch into the ring buffer; the caller holds depth 0 -> 1. */
static __always_inline void flush(struct stage *s)
{
	/* the mask changes nothing (len < sizeof(buf)): it shows the verifier the bound */
	__u32 len = s->len & (sizeof(s->buf) - 1);

	if (len)
		output(s->buf, len, s->count);
	s->len = 0;
	s->count = 0;
	set_stage_age(0);
}

static __always_inline void *reserve(__u32 size, __u16 type)
{
	struct stage *s = this_stage();
	__u64 now = bpf_ktime_get_ns();
	struct st_event_header *h;
	__u64 id;
	__u32 depth;

	if (!s || now >= record_until)
		return NULL;
	depth = s->depth;
	if (depth > ST_MAX_NESTING) {
		count_lost(1);
		return NULL;
	}
	s->depth = depth + 1;
	barrier();
	/* the mask changes nothing (len < ST_STAGE_BYTES here): it shows the verifier the bound */
	if (depth == 0) {
		h = (void *)(s->buf + (s->len & (ST_STAGE_BYTES - 1)));
	} else {
		__u32 slot = depth - 1;

		/* the bound again where the verifier sees it: 6.1's does not narrow depth by depth != 0 */
		asm volatile("" : "+r"(slot));
		if (slot >= ST_MAX_NESTING) {
			s->depth = depth;
			return NULL;
		}
		h = (void *)s->nested[slot];
	}
	id = bpf_get_current_pid_tgid();
	h->type = type;
	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
	h->ts = now;
	h->pid = id >> 32;
	h->tid = (__u32)id;
	return h;
}

/*
 * Every reserve() that returned a record is followed by exactly one
 * submit_records() of what it reserved: n records, size bytes from rec.
 */
static __always_inline void submit_records(void *rec, __u32 size, __u32 n)
{
	struct stage *s = this_stage();
	__u32 depth;

	if (!s)
		return;
	depth = s->depth - 1;
	if (depth == 0) {
		if (!s->count)
			set_stage_age(((struct st_event_header *)rec)->ts);
		s->count += n;
		s->len += size;
		if (s->len >= ST_STAGE_BYTES)
			flush(s);
	} else {
		output(rec, size, n);
	}
	barrier();
	s->depth = depth;
}

static __always_inline void submit(void *rec, __u32 size)
{
	submit_records(rec, size, 1);
}

/* Run by st-record on one CPU (BPF_PROG_TEST_RUN): a quiet one at a drain, each at the end. */
SEC("raw_tp")
int flush_stage(void *ctx)
{
	struct stage *s = this_stage();

	/* interrupted a probe on this CPU: the next drain flushes */
	if (!s || s->depth)
		return 0;
	s->depth = 1;
	barrier();
	flush(s);
	barrier();
	s->depth = 0;
	return 0;
}

#define RESERVE(payload, name) \
	((struct st_ev_##payload *)reserve(sizeof(struct st_ev_##payload), ST_EV_##name))

/* ---- the causes of an I/O's time --------------------------------------- */

#include "why.bpf.h"

/* ---- block layer ------------------------------------------------------ */

#define REQ_BIT(name) (1u << bpf_core_enum_value(enum req_flag_bits, name))

/* Kernel op/flags to ST_OP_* | ST_F_*: the flag bit positions move between kernel versions. */
static __always_inline __u32 normalize_opf(__u32 opf)
{
	__u32 out = opf & ST_OP_MASK;

	if (opf & REQ_BIT(__REQ_SYNC))
		out |= ST_F_SYNC;
	if (opf & REQ_BIT(__REQ_META))
		out |= ST_F_META;
	if (opf & REQ_BIT(__REQ_FUA))
		out |= ST_F_FUA;
	if (opf & REQ_BIT(__REQ_PREFLUSH))
		out |= ST_F_PREFLUSH;
	if (opf & REQ_BIT(__REQ_RAHEAD))
		out |= ST_F_RAHEAD;
	if (opf & REQ_BIT(__REQ_BACKGROUND))
		out |= ST_F_BACKGROUND;
	if (opf & REQ_BIT(__REQ_NOWAIT))
		out |= ST_F_NOWAIT;
	return out;
}

static __always_inline __u32 bio_disk(const struct bio *bio)
{
	return disk_devt(bio_gendisk(bio));
}

static __always_inline __u32 rq_disk(const struct request *rq)
{
	if (bpf_core_field_exists(((struct request___510 *)0)->rq_disk))
		return disk_devt(((const struct request___510 *)rq)->rq_disk);
	return disk_devt(rq->q->disk);
}

/*
 * Bio events. The device is the bio's disk (not the partition): bios are
 * remapped to whole-disk sectors before block_bio_queue fires, so disk and
 * sector agree, and they agree with the request events. Returns the
 * record's time, 0 when none was recorded.
 */
static __always_inline __u64 emit_bio(const struct bio *bio, __u16 type, __s32 error, __u32 flags)
{
	struct st_ev_block_bio *e;
	__u32 disk = bio_disk(bio);
	__u64 ts;

	if (!disk_passes(disk) || !bio_selected(bio))
		return 0;
	e = reserve(sizeof(*e), type);
	if (!e)
		return 0;
	ts = e->h.ts;
	e->p.bio = (__u64)bio;
	e->p.sector = bio->bi_iter.bi_sector;
	e->p.dev = disk;
	e->p.nr_sector = bio->bi_iter.bi_size >> 9;
	e->p.opf = normalize_opf(bio->bi_opf) | flags;
	e->p.error = error;
	submit(e, sizeof(*e));
	return ts;
}

static __always_inline int bio_queue(struct bio *bio)
{
	bool dispatching = throttle_dispatching(bio_gendisk(bio)->queue);
	__u64 blkcg, ts;
	bool held;

	if (task_filter_on()) {
		/*
		 * Kernel threads' work for the traced tasks is theirs: the
		 * writeback of a file they wrote, the bios the throttle held
		 * back in their cgroup, the journal commit their fsync waits for
		 */
		blkcg = dispatching ? bio_blkcg(bio) : 0;
		if (!task_passes() && !bio_of_dirtied_file(bio) &&
		    !(blkcg && bpf_map_lookup_elem(&traced_blkcgs, &blkcg)) &&
		    (dispatching || !bio_for_open_fsync(bio)))
			return 0;
		mark_bio(bio);
	} else if (mark_self_bios &&
		   (bpf_get_current_pid_tgid() >> 32 == self_tgid || bio_of_output(bio))) {
		mark_bio(bio);
		return 0;
	}
	held = bio_held_back(bio, dispatching);
	ts = emit_bio(bio, ST_EV_block_bio_queue, 0, held ? ST_F_HELD : 0);
	if (ts && held)
		emit_bio_held(bio, bio_disk(bio), ts);
	return 0;
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(block_bio_queue, struct bio *bio)
{
	return bio_queue(bio);
}

/* Until 5.11 the bio tracepoints passed the queue first (record/probes.c picks the form). */
SEC("tp_btf/block_bio_queue")
int BPF_PROG(block_bio_queue___q, struct request_queue *q, struct bio *bio)
{
	return bio_queue(bio);
}

SEC("tp_btf/block_bio_backmerge")
int BPF_PROG(block_bio_backmerge, struct bio *bio)
{
	emit_bio(bio, ST_EV_block_bio_backmerge, 0, 0);
	return 0;
}

SEC("tp_btf/block_bio_backmerge")
int BPF_PROG(block_bio_backmerge___q, struct request_queue *q, struct request *rq, struct bio *bio)
{
	emit_bio(bio, ST_EV_block_bio_backmerge, 0, 0);
	return 0;
}

SEC("tp_btf/block_bio_frontmerge")
int BPF_PROG(block_bio_frontmerge, struct bio *bio)
{
	emit_bio(bio, ST_EV_block_bio_frontmerge, 0, 0);
	return 0;
}

SEC("tp_btf/block_bio_frontmerge")
int BPF_PROG(block_bio_frontmerge___q, struct request_queue *q, struct request *rq, struct bio *bio)
{
	emit_bio(bio, ST_EV_block_bio_frontmerge, 0, 0);
	return 0;
}

SEC("tp_btf/block_getrq")
int BPF_PROG(block_getrq, struct bio *bio)
{
	emit_bio(bio, ST_EV_block_getrq, 0, 0);
	return 0;
}

SEC("tp_btf/block_getrq")
int BPF_PROG(block_getrq___q, struct request_queue *q, struct bio *bio, int rw)
{
	emit_bio(bio, ST_EV_block_getrq, 0, 0);
	return 0;
}

SEC("tp_btf/block_bio_complete")
int BPF_PROG(block_bio_complete, struct request_queue *q, struct bio *bio)
{
	emit_bio(bio, ST_EV_block_bio_complete, bio->bi_status, 0);
	if (task_filter_on() || mark_self_bios)
		unmark_bio(bio);
	return 0;
}

/*
 * The split-off front piece is chained to the original bio (bi_private) before
 * the tracepoint fires; it inherits the original's mark.
 */
static __always_inline int split(struct bio *bio, unsigned int new_sector)
{
	struct bio *parent = bio->bi_private;
	struct st_ev_block_split *e;
	__u32 disk = bio_disk(bio);

	if ((task_filter_on() || mark_self_bios) && bio_marked(parent))
		mark_bio(bio);
	if (!disk_passes(disk) || !bio_selected(parent))
		return 0;
	e = RESERVE(block_split, block_split);
	if (!e)
		return 0;
	e->p.bio = (__u64)bio;
	e->p.parent = (__u64)parent;
	e->p.sector = bio->bi_iter.bi_sector;
	e->p.new_sector = new_sector;
	e->p.dev = disk;
	e->p.nr_sector = bio->bi_iter.bi_size >> 9;
	e->p.opf = normalize_opf(bio->bi_opf);
	e->p.pad = 0;
	submit(e, sizeof(*e));
	return 0;
}

SEC("tp_btf/block_split")
int BPF_PROG(block_split, struct bio *bio, unsigned int new_sector)
{
	return split(bio, new_sector);
}

SEC("tp_btf/block_split")
int BPF_PROG(block_split___q, struct request_queue *q, struct bio *bio, unsigned int new_sector)
{
	return split(bio, new_sector);
}

/*
 * rq->rq_flags' bit of a request in the flush sequence, from the kernel's
 * BTF (record/kernel.c): an enum value since 6.10, a macro before.
 */
const volatile __u32 rqf_flush_seq;

static __always_inline bool rq_in_flush_seq(const struct request *rq)
{
	return rq->rq_flags & rqf_flush_seq;
}

/*
 * The device flush of the flush sequence (no bios) is issued and completed
 * in kernel threads for the requests waiting on the running list of its
 * hardware queue's flush queue (rq->queuelist links them; the list is
 * switched only after the flush's completion event). It was caused by the
 * traced tasks when one of the first ST_FLUSH_WAITERS carries a marked bio.
 * List links are read as plain addresses: they point into requests, which
 * are walked back to with container_of arithmetic.
 */
static __always_inline bool flush_serves_marked(const struct request *rq)
{
	struct blk_flush_queue *fq = rq->mq_hctx ? rq->mq_hctx->fq : NULL;
	const struct list_head *head;
	__u64 pos, req, bio;

	if (!fq)
		return false;
	head = BPF_CORE_READ_BITFIELD_PROBED(fq, flush_running_idx) ? &fq->flush_queue[1] :
								      &fq->flush_queue[0];
	if (bpf_probe_read_kernel(&pos, sizeof(pos), &head->next))
		return false;
	for (int i = 0; i < ST_FLUSH_WAITERS && pos != (__u64)head; i++) {
		req = pos - bpf_core_field_offset(struct request, queuelist);
		if (bpf_probe_read_kernel(&bio, sizeof(bio),
					  (void *)(req + bpf_core_field_offset(struct request, bio))))
			return false;
		if (bio && bio_marked((const struct bio *)bio))
			return true;
		if (bpf_probe_read_kernel(&pos, sizeof(pos), (void *)pos))
			return false;
	}
	return false;
}

static __always_inline bool rq_selected(const struct request *rq, __u32 disk)
{
	struct bio *first = rq->bio;

	if (!disk_passes(disk))
		return false;
	/*
	 * A request without bios belongs to whoever issued it, except the
	 * device flush, which belongs to the tasks whose requests it serves.
	 */
	if (!first)
		return task_passes() ||
		       (task_filter_on() && rq_in_flush_seq(rq) && flush_serves_marked(rq));
	return bio_selected(first);
}

/*
 * At an issue: whether it is recorded. A request without bios is marked
 * then by its own address (marks mean "traced" under a task filter, "ours"
 * without), for its completion: the task an interrupt completes it in says
 * nothing of whose it is.
 */
static __always_inline bool rq_issue_selected(const struct request *rq, __u32 disk)
{
	bool selected = rq_selected(rq, disk);

	if (!rq->bio && disk_passes(disk) &&
	    (task_filter_on() ? selected : mark_self_bios && !selected))
		mark_bio((const struct bio *)rq);
	return selected;
}

/* At a completion: whether it is recorded, as its issue was; drops the mark of a request without bios. */
static __always_inline bool rq_complete_selected(const struct request *rq, __u32 disk)
{
	bool marked;

	if (rq->bio)
		return rq_selected(rq, disk);
	if (!disk_passes(disk))
		return false;
	if (!task_filter_on() && !mark_self_bios)
		return true;
	marked = bio_marked((const struct bio *)rq);
	if (marked)
		unmark_bio((const struct bio *)rq);
	return task_filter_on() ? marked : !marked;
}

static __always_inline void fill_rq(struct st_block_rq *p, const struct request *rq, __u32 disk)
{
	p->rq = (__u64)rq;
	/* a request without data (a flush) has no position: the kernel keeps -1 there */
	p->sector = rq->__data_len ? rq->__sector : 0;
	p->dev = disk;
	p->bytes = rq->__data_len;
	p->nr_sector = rq->__data_len >> 9;
	p->opf = normalize_opf(rq->cmd_flags);
	if (rq_in_flush_seq(rq))
		p->opf |= ST_F_FLUSH_SEQ;
	p->error = 0;
	p->nr_bios = 0;
}

static __always_inline int emit_rq(const struct request *rq, __u16 type)
{
	struct st_ev_block_rq *e;
	__u32 disk = rq_disk(rq);

	if (!rq_selected(rq, disk))
		return 0;
	e = reserve(sizeof(*e), type);
	if (!e)
		return 0;
	fill_rq(&e->p, rq, disk);
	submit(e, sizeof(*e));
	return 0;
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(block_rq_insert, struct request *rq)
{
	return emit_rq(rq, ST_EV_block_rq_insert);
}

SEC("tp_btf/block_rq_merge")
int BPF_PROG(block_rq_merge, struct request *rq)
{
	return emit_rq(rq, ST_EV_block_rq_merge);
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(block_rq_requeue, struct request *rq)
{
	return emit_rq(rq, ST_EV_block_rq_requeue);
}

/* A completed request's bios are gone: drop their marks before the addresses are reused. */
static __always_inline void unmark_chain(const struct request *rq)
{
	struct bio *bio = rq->bio;

	for (int i = 0; i < ST_MAX_UNMARK && bio; i++) {
		unmark_bio(bio);
		bio = bio->bi_next;
	}
}

/* A completed request's marks go, except a flush sequence's data step's: its bios live on. */
static __always_inline void unmark_completed(const struct request *rq, unsigned int nr_bytes)
{
	if ((task_filter_on() || mark_self_bios) && !(nr_bytes && rq_in_flush_seq(rq)))
		unmark_chain(rq);
}

/*
 * The tracepoint fires before the request's bios are ended, so rq->bio still
 * names the chain; for a request the flush sequence completes without ever
 * issuing it (an empty PREFLUSH) that is the only link to its bio.
 */
static __always_inline void emit_complete(const struct request *rq, __u32 disk, blk_status_t error,
					  unsigned int nr_bytes)
{
	struct st_ev_block_rq_complete *e;
	__u32 lead;
	void *start = reserve_with_svc_run_delay(sizeof(*e), ST_EV_block_rq_complete, disk, &lead);

	if (!start)
		return;
	e = start + lead;
	fill_rq((struct st_block_rq *)&e->p, rq, disk);
	e->p.error = error;
	if (nr_bytes) {
		e->p.bytes = nr_bytes;
		e->p.nr_sector = nr_bytes >> 9;
	}
	e->p.bio = (__u64)rq->bio;
	submit_records(start, lead + sizeof(*e), lead ? 2 : 1);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(block_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u32 disk = rq_disk(rq);

	note_completion(disk);
	if (rq_complete_selected(rq, disk)) {
		emit_complete(rq, disk, error, nr_bytes);
		follow_service();
	}
	unmark_completed(rq, nr_bytes);
	return 0;
}

/* The request and what completed; the rest is its issue's. */
static __always_inline void emit_complete_compact(const struct request *rq, __u32 disk,
						  blk_status_t error, unsigned int nr_bytes)
{
	struct st_ev_block_rq_complete_compact *e;
	__u32 lead;
	void *start = reserve_with_svc_run_delay(sizeof(*e), ST_EV_block_rq_complete_compact, disk, &lead);

	if (!start)
		return;
	e = start + lead;
	e->p.rq = (__u64)rq;
	e->p.dev = disk;
	e->p.bytes = nr_bytes ? nr_bytes : rq->__data_len;
	e->p.error = error;
	e->p.pad = 0;
	submit_records(start, lead + sizeof(*e), lead ? 2 : 1);
}

/*
 * The `block` preset's completion, in short. A request without data or in
 * the flush sequence gets the whole record: an empty PREFLUSH completes
 * without an issue (its flag already cleared), named by its bio, and a data
 * step says so in its flags.
 */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(block_rq_complete_compact, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u32 disk = rq_disk(rq);

	note_completion(disk);
	if (rq_complete_selected(rq, disk)) {
		if (!rq->__data_len || rq_in_flush_seq(rq))
			emit_complete(rq, disk, error, nr_bytes);
		else
			emit_complete_compact(rq, disk, error, nr_bytes);
		follow_service();
	}
	unmark_completed(rq, nr_bytes);
	return 0;
}

/* At issue the request's bio chain is final: store the first bios and count all of them. */
static __always_inline void fill_issue(struct st_block_rq_issue *p, const struct request *rq,
				       __u32 disk)
{
	struct bio *bio;
	__u32 n = 0;

	fill_rq((struct st_block_rq *)p, rq, disk);
	bio = rq->bio;
	for (int i = 0; i < ST_RQ_BIOS; i++) {
		p->bios[i] = (__u64)bio;
		if (bio) {
			bio = bio->bi_next;
			n++;
		}
	}
	for (int i = ST_RQ_BIOS; i < ST_RQ_BIOS_COUNTED && bio; i++) {
		bio = bio->bi_next;
		n++;
	}
	p->nr_bios = n;
}

/*
 * After an issue: the file whose page cache the request carries (its first
 * bio's first page), for page-cache I/O only, stamped with the issue's time.
 */
static __always_inline void emit_rq_inode(const struct request *rq, __u32 disk, __u64 issue_ts)
{
	struct st_ev_block_rq_inode *e;
	struct st_file_key k;

	if (!record_rq_inode || !rq->bio || !bio_file(rq->bio, &k))
		return;
	e = RESERVE(block_rq_inode, block_rq_inode);
	if (!e)
		return;
	e->h.ts = issue_ts;
	e->p.rq = (__u64)rq;
	e->p.sector = rq->__sector;
	e->p.ino = k.ino;
	e->p.dev = k.sdev;
	e->p.disk = disk;
	submit(e, sizeof(*e));
}

/*
 * After an issue: the cgroup the request's first bio is charged to (v1
 * blkio or v2 io: bio->bi_blkg->blkcg), when it is not its hierarchy's root,
 * stamped with the issue's time. A kernel without CONFIG_BLK_CGROUP has no
 * bi_blkg.
 */
static __always_inline void emit_rq_cgroup(const struct request *rq, __u32 disk, __u64 issue_ts)
{
	struct st_ev_block_rq_cgroup *e;
	struct cgroup_subsys_state *css;

	if (!record_rq_cgroup || !bpf_core_field_exists(((struct bio *)0)->bi_blkg) || !rq->bio ||
	    !rq->bio->bi_blkg)
		return;
	css = &rq->bio->bi_blkg->blkcg->css;
	if (!css->parent)
		return;
	e = RESERVE(block_rq_cgroup, block_rq_cgroup);
	if (!e)
		return;
	e->h.ts = issue_ts;
	e->p.rq = (__u64)rq;
	e->p.blkcg = css_cgroup_id(css);
	e->p.dev = disk;
	e->p.pad = 0;
	submit(e, sizeof(*e));
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(block_rq_issue, struct request *rq)
{
	struct st_ev_block_rq_issue *e;
	__u32 disk = rq_disk(rq);
	__u64 ts;

	if (!rq_issue_selected(rq, disk))
		return 0;
	e = RESERVE(block_rq_issue, block_rq_issue);
	if (!e)
		return 0;
	fill_issue(&e->p, rq, disk);
	ts = e->h.ts;
	submit(e, sizeof(*e));
	emit_rq_inode(rq, disk, ts);
	emit_rq_cgroup(rq, disk, ts);
	return 0;
}

/*
 * Kernels 4.19 to 6.17 stamp every bio with CONFIG_BLK_CGROUP as it is queued
 * (submit_bio_noacct_nocheck, next to the block_bio_queue tracepoint) in
 * bi_issue: 51 bits of ktime_get_ns() under the bio's size.
 */
struct bio_issue___old {
	__u64 value;
};

struct bio___old {
	struct bio_issue___old bi_issue;
} __attribute__((preserve_access_index));

#define BIO_ISSUE_TIME_MASK ((1ull << 51) - 1)

/*
 * When the bio was queued, 0 when the kernel did not stamp it. 6.18 moved the
 * stamp to issue_time_ns, set in blk_mq_submit_bio only for disks with
 * QUEUE_FLAG_BIO_ISSUE_TIME (blk-iolatency in use); st-record's probe check
 * says which (probes.c).
 */
static __always_inline __u64 bio_queue_time(const struct bio *bio, __u64 now)
{
	if (bpf_core_field_exists(bio->issue_time_ns))
		return bio->issue_time_ns;
	if (bpf_core_field_exists(((struct bio___old *)0)->bi_issue)) {
		__u64 t = BPF_CORE_READ((struct bio___old *)bio, bi_issue.value) & BIO_ISSUE_TIME_MASK;

		/* the mask keeps the low 51 bits of the clock: rebuild the rest from now */
		return t ? now - ((now - t) & BIO_ISSUE_TIME_MASK) : 0;
	}
	return 0;
}

/* ns from `then` to `now` when then is a stamp within 4.29 s before now, else 0 */
static __always_inline __u32 ns_before(__u64 then, __u64 now, __u32 bit, __u32 *stamped)
{
	if (!then || then > now || now - then > 0xffffffffull)
		return 0;
	*stamped |= bit;
	return (__u32)(now - then);
}

/*
 * block_rq_issue with the times the kernel stamped at the stages before it:
 * the request's allocation (rq->start_time_ns: with I/O statistics on, a
 * scheduler or blk-stat users; every kernel since 4.18) and each stored bio's
 * queueing. One probe run instead of one each for Q, G and D.
 */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(block_rq_issue_stamped, struct request *rq)
{
	struct st_ev_block_rq_issue_stamped *e;
	__u32 disk = rq_disk(rq), stamped = 0;
	struct bio *bio;
	__u64 now;

	/* Without block_bio_queue the recorder's own bios are found here, by the first one. */
	if (mark_self_bios && rq->bio &&
	    (bpf_get_current_pid_tgid() >> 32 == self_tgid || bio_of_output(rq->bio))) {
		mark_bio(rq->bio);
		return 0;
	}
	if (!rq_issue_selected(rq, disk))
		return 0;
	e = RESERVE(block_rq_issue_stamped, block_rq_issue_stamped);
	if (!e)
		return 0;
	fill_issue((struct st_block_rq_issue *)&e->p, rq, disk);
	/* no queue event may say it: the bios the throttle held back are issued as its worker unplugs */
	if (rq->bio && bio_held_back(rq->bio, throttle_dispatching(rq->q)))
		e->p.opf |= ST_F_HELD;
	now = e->h.ts;
	e->p.getrq_ago = ns_before(rq->start_time_ns, now, ST_STAMPED_GETRQ, &stamped);
	bio = rq->bio;
	for (int i = 0; i < ST_RQ_BIOS; i++) {
		e->p.queue_ago[i] = bio ? ns_before(bio_queue_time(bio, now), now,
						    ST_STAMPED_QUEUE(i), &stamped) : 0;
		e->p.bio_sectors[i] = bio ? bio->bi_iter.bi_size >> 9 : 0;
		if (bio)
			bio = bio->bi_next;
	}
	e->p.stamped = stamped;
	submit(e, sizeof(*e));
	emit_rq_inode(rq, disk, now);
	emit_rq_cgroup(rq, disk, now);
	return 0;
}

/* ---- system calls ----------------------------------------------------- */

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

/* ---- file systems ----------------------------------------------------- */

static __always_inline struct st_ev_fs_io *reserve_fs(__u16 type, __u32 dev)
{
	if (!fs_dev_passes(dev) || !task_passes())
		return NULL;
	return reserve(sizeof(struct st_ev_fs_io), type);
}

static __always_inline void fill_fs(struct st_fs_io *p, __u32 dev, __u64 ino, __s64 pos,
				    __u64 count, __s64 ret, __u32 flags)
{
	p->dev = dev;
	p->ino = ino;
	p->pos = pos;
	p->count = count;
	p->ret = ret;
	p->flags = flags;
}

SEC("tracepoint/iomap/iomap_dio_rw_begin")
int iomap_dio_rw_begin(struct trace_event_raw_iomap_dio_rw_begin *ctx)
{
	struct st_ev_fs_io *e = reserve_fs(ST_EV_iomap_dio_rw_begin, ctx->dev);

	if (!e)
		return 0;
	fill_fs(&e->p, ctx->dev, ctx->ino, ctx->pos, ctx->count, 0, ctx->ki_flags);
	submit(e, sizeof(*e));
	return 0;
}

SEC("tracepoint/iomap/iomap_dio_complete")
int iomap_dio_complete(struct trace_event_raw_iomap_dio_complete *ctx)
{
	struct st_ev_fs_io *e = reserve_fs(ST_EV_iomap_dio_complete, ctx->dev);

	if (!e)
		return 0;
	fill_fs(&e->p, ctx->dev, ctx->ino, ctx->pos, 0, ctx->error ? ctx->error : ctx->ret,
		ctx->ki_flags);
	submit(e, sizeof(*e));
	return 0;
}

/*
 * ext4 is a module on distributions' kernels, whose BTF libbpf reads only
 * from 5.11 (module BTF): its tracefs layouts, unchanged since 3.x.
 */
struct ext4_sync_file_enter_args {
	__u64 common;
	__u32 dev;
	__u64 ino;
	__u64 parent;
	__s32 datasync;
};

struct ext4_sync_file_exit_args {
	__u64 common;
	__u32 dev;
	__u64 ino;
	__s32 ret;
};

SEC("tracepoint/ext4/ext4_sync_file_enter")
int ext4_sync_file_enter(struct ext4_sync_file_enter_args *ctx)
{
	struct st_ev_fs_io *e = reserve_fs(ST_EV_ext4_sync_file_enter, ctx->dev);

	if (!e)
		return 0;
	fill_fs(&e->p, ctx->dev, ctx->ino, 0, 0, 0, ctx->datasync != 0);
	submit(e, sizeof(*e));
	return 0;
}

SEC("tracepoint/ext4/ext4_sync_file_exit")
int ext4_sync_file_exit(struct ext4_sync_file_exit_args *ctx)
{
	struct st_ev_fs_io *e = reserve_fs(ST_EV_ext4_sync_file_exit, ctx->dev);

	if (!e)
		return 0;
	fill_fs(&e->p, ctx->dev, ctx->ino, 0, 0, ctx->ret, 0);
	submit(e, sizeof(*e));
	return 0;
}

/* xfs is often a module whose BTF vmlinux.h lacks; this is its tracefs layout. */
struct xfs_file_fsync_args {
	__u64 common;
	__u32 dev;
	__u64 ino;
};

SEC("tracepoint/xfs/xfs_file_fsync")
int xfs_file_fsync(struct xfs_file_fsync_args *ctx)
{
	struct st_ev_fs_io *e = reserve_fs(ST_EV_xfs_file_fsync, ctx->dev);

	if (!e)
		return 0;
	fill_fs(&e->p, ctx->dev, ctx->ino, 0, 0, 0, 0);
	submit(e, sizeof(*e));
	return 0;
}

/* ---- io_uring --------------------------------------------------------- */

/* io_kiocb.flags and the SQE's flags: a registered file, its fd an index (bit 0 in every kernel). */
#define ST_REQ_F_FIXED_FILE	1u

/* With -d, the io_uring requests on what -d selects: their completion is recorded with them. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u8);
} dev_urings SEC(".maps");

/* fd -1: the kernel's tracepoint names none (before 5.19). */
static __always_inline int emit_uring_submit(__u64 ring, __u64 req, __u64 user_data, __u8 opcode,
					     __u32 flags, __s32 fd)
{
	struct st_ev_uring *e;

	if (!task_passes())
		return 0;
	if (filter_ndevs) {
		__u64 key = (__u64)req;
		__u8 one = 1;

		/* a registered file's index names no fd of the task, nor does a request without one: kept */
		if (!(flags & ST_REQ_F_FIXED_FILE) && fd >= 0 &&
		    !task_fd_dev_passes(current_task(), (unsigned int)fd))
			return 0;
		bpf_map_update_elem(&dev_urings, &key, &one, BPF_ANY);
	}
	e = RESERVE(uring, io_uring_submit_req);
	if (!e)
		return 0;
	e->p.ctx = ring;
	e->p.req = req;
	e->p.user_data = user_data;
	e->p.res = 0;
	e->p.opcode = opcode;
	e->p.flags = flags;
	e->p.fd = fd;
	/* the submitting task's, as a syscall's: io-wq workers that run it later are in it too */
	e->p.cgroup = bpf_get_current_cgroup_id();
	submit(e, sizeof(*e));
	return 0;
}

static __always_inline int uring_submit(const struct io_kiocb *req)
{
	return emit_uring_submit((__u64)req->ctx, (__u64)req, req->cqe.user_data, req->opcode,
				 (__u32)req->flags, req->cqe.fd);
}

SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(io_uring_submit_req, struct io_kiocb *req)
{
	return uring_submit(req);
}

/* Its name until 6.4, with the request as its first argument from 5.19 (record/probes.c picks it). */
SEC("tp_btf/io_uring_submit_sqe")
int BPF_PROG(io_uring_submit_req___sqe, struct io_kiocb *req)
{
	return uring_submit(req);
}

/*
 * Before 5.19 io_uring_complete named the ring and user_data but not the
 * request: each request in flight by its ring and user_data, from its submission.
 */
struct uring_key {
	__u64 ring, user_data;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_MAX_URING_INFLIGHT);
	__type(key, struct uring_key);
	__type(value, __u64);
} uring_reqs SEC(".maps");

/* Before 5.19: the ring and the request as untyped pointers, then the SQE's fields (no fd) */
SEC("tp_btf/io_uring_submit_sqe")
int BPF_PROG(io_uring_submit_req___ctx, void *ring, void *req, __u8 opcode, __u64 user_data, __u32 flags)
{
	struct uring_key k = { (__u64)ring, user_data };
	__u64 r = (__u64)req;

	if (task_passes())
		bpf_map_update_elem(&uring_reqs, &k, &r, BPF_ANY);
	return emit_uring_submit((__u64)ring, r, user_data, opcode, flags, -1);
}

SEC("tracepoint/io_uring/io_uring_complete")
int io_uring_complete(struct trace_event_raw_io_uring_complete *ctx)
{
	struct st_ev_uring *e;
	__u64 req = 0;

	if (!task_passes())
		return 0;
	if (bpf_core_field_exists(ctx->req)) {
		req = (__u64)ctx->req;
	} else {
		struct uring_key k = { (__u64)ctx->ctx, ctx->user_data };
		__u64 *r = bpf_map_lookup_elem(&uring_reqs, &k);

		req = r ? *r : 0;
		bpf_map_delete_elem(&uring_reqs, &k);
	}
	if (filter_ndevs && bpf_map_delete_elem(&dev_urings, &req))
		return 0;
	e = RESERVE(uring, io_uring_complete);
	if (!e)
		return 0;
	e->p.ctx = (__u64)ctx->ctx;
	e->p.req = req;
	e->p.user_data = ctx->user_data;
	e->p.res = ctx->res;
	e->p.opcode = 0;
	e->p.flags = ctx->cflags;
	e->p.fd = -1;
	e->p.cgroup = 0;
	submit(e, sizeof(*e));
	return 0;
}

/* ---- processes -------------------------------------------------------- */

/* A task event is about `task`: the header names it, not the current task. */
static __always_inline int emit_task(const struct task_struct *task, __u16 type, __u32 other_pid)
{
	struct st_ev_task *e = reserve(sizeof(*e), type);

	if (!e)
		return 0;
	e->h.pid = task->tgid;
	e->h.tid = task->pid;
	e->p.other_pid = other_pid;
	e->p.pad = 0;
	bpf_probe_read_kernel(e->p.comm, sizeof(e->p.comm), task->comm);
	submit(e, sizeof(*e));
	return 0;
}

/* With -p, children of traced processes become traced before they run. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 child_tgid = child->tgid;
	__u8 one = 1;

	if (filter_pid) {
		__u32 parent_tgid = parent->tgid;

		if (!bpf_map_lookup_elem(&tracked_tgids, &parent_tgid))
			return 0;
		bpf_map_update_elem(&tracked_tgids, &child_tgid, &one, BPF_ANY);
	}
	if (!task_passes() || child_tgid == self_tgid)
		return 0;
	return emit_task(child, ST_EV_sched_process_fork, parent->tgid);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sched_process_exec, struct task_struct *p, pid_t old_pid)
{
	if (!task_passes())
		return 0;
	return emit_task(p, ST_EV_sched_process_exec, old_pid);
}

/* Only whole processes: the thread-group leader's exit. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_process_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	if (p->pid != p->tgid || !task_passes())
		return 0;
	emit_task(p, ST_EV_sched_process_exit, 0);
	if (filter_pid)
		bpf_map_delete_elem(&tracked_tgids, &tgid);
	return 0;
}

/* ---- tracepoints named at record time ---------------------------------- */

#include "generic.bpf.h"
