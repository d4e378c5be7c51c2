/* SPDX-License-Identifier: GPL-2.0 */
/*
 * block.bpf.h - the block layer's helpers, shared by the bio probes
 * (bio.bpf.c) and the request probes (request.bpf.c): devices, flags,
 * marks, the file a bio carries, blk-throttle and which bios are kept.
 */
#ifndef BLOCK_BPF_H
#define BLOCK_BPF_H

/* Bios in flight a filter marked (bio.bpf.c); a request without bios by its own address */
struct marked_bios_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_MAX_MARKED_BIOS);
	__type(key, __u64);
	__type(value, __u8);
};
extern struct marked_bios_map marked_bios SEC(".maps");

static __always_inline bool disk_passes(__u32 disk)
{
	return !filter_ndevs || disk == filter_devs[0];
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

/* The blkcg a bio is charged to (bio->bi_blkg, set from the task that submitted it), 0 for the root's. */
static __always_inline __u64 bio_blkcg(const struct bio *bio)
{
	return bio->bi_blkg ? blkcg_key(&bio->bi_blkg->blkcg->css) : 0;
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

/*
 * The id of a cgroup in its hierarchy: its kernfs node's id, which is its
 * directory's inode number on 64-bit kernels (kernfs_id_ino).
 */
static __always_inline __u64 css_cgroup_id(const struct cgroup_subsys_state *css)
{
	return css && css->cgroup && css->cgroup->kn ? css->cgroup->kn->id : 0;
}

#endif /* BLOCK_BPF_H */
