// SPDX-License-Identifier: GPL-2.0
/*
 * bio.bpf.c - the probes of bios: queued (and marked for the filters),
 * merged, given a request, completed, split; and block_bio_held, the
 * cgroup whose limit held a bio back.
 */
#include "sttrace.bpf.h"
#include "stage.bpf.h"
#include "block.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool record_bio_held;	/* block_bio_held after each held-back block_bio_queue */

struct marked_bios_map marked_bios SEC(".maps");

static __always_inline __u32 bio_disk(const struct bio *bio)
{
	return disk_devt(bio_gendisk(bio));
}

/* After a held-back bio's block_bio_queue record (stamped `ts`): the cgroup whose limit held it. */
static __always_inline void emit_bio_held(const struct bio *bio, __u32 disk, __u64 ts)
{
	struct st_ev_block_bio_held *e;

	if (!record_bio_held)
		return;
	e = RESERVE(block_bio_held, block_bio_held);
	if (!e)
		return;
	e->h.ts = ts;
	e->p.bio = (__u64)bio;
	e->p.blkcg = bio->bi_blkg ? css_cgroup_id(&bio->bi_blkg->blkcg->css) : 0;
	e->p.dev = disk;
	e->p.pad = 0;
	submit(e, sizeof(*e));
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
