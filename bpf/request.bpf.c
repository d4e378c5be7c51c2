// SPDX-License-Identifier: GPL-2.0
/*
 * request.bpf.c - the probes of requests: inserted, merged, requeued,
 * issued (with the file and cgroup of its data, or with the times the
 * kernel stamped before), completed (in full or in short).
 */
#include "sttrace.bpf.h"
#include "stage.bpf.h"
#include "block.bpf.h"
#include "why.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool record_rq_inode;		/* block_rq_inode after each issue of page-cache data */
const volatile bool record_rq_cgroup;		/* block_rq_cgroup after each issue charged to a group */

static __always_inline __u32 rq_disk(const struct request *rq)
{
	if (bpf_core_field_exists(((struct request___510 *)0)->rq_disk))
		return disk_devt(((const struct request___510 *)rq)->rq_disk);
	return disk_devt(rq->q->disk);
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
