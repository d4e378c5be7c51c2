// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_steps.bpf.c - the `block` preset's two programs (block_rq_issue_stamped
 * and block_rq_complete_compact of bpf/request.bpf.c) built up step by step
 * at the same tracepoints, for scripts/bench/bpf_steps.sh: what each part of
 * them costs per run. Step n adds to step n - 1:
 *   0  nothing (the programs return at once)
 *   1  the disk filter as `-d DEV` sets it, then the clock: bpf_ktime_get_ns
 *      and the recording window's end (the disk first, so that every step
 *      drops other disks' requests as st-record does, and they cost the
 *      same in every row)
 *   2  the record in the per-CPU stage: the stage, the header (task, CPU);
 *      a full stage is dropped
 *   3  the stage's batch into the ring buffer past ST_STAGE_BYTES, and the
 *      stage's age
 *   4  the request's fields: device, position, op and flags, the bio chain
 *   5  the stamps: the request's allocation and its bios' queueing and sizes
 *   6  the other checks of st-record's: the recorder's own task,
 *      blk-throttle's dispatch worker, a completion's flush sequence
 *   7  block_rq_inode's check of the first bio's first page for a file's
 *      page cache: what `block` runs after every issue
 * and step 3r is step 3 without the stage: a ring buffer reservation and
 * submission per record (the header only), as bare_ring.bpf.c does.
 * Every step is one pair of programs, named stepN_issue and stepN_complete,
 * not loaded unless bpf-steps asks for them ("?": libbpf's autoload off).
 * The parts are written as bpf/ has them, smaller where a part
 * only matters for the filters and nesting the bench does not use.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sttrace_events.h"
#include "sttrace_bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 filter_dev;		/* the traced disk (kernel dev_t) */
const volatile __u32 self_tgid;
__u64 record_until = ~0ull;
__u64 lost;				/* records the ring buffer had no room for */
__u64 page_cache_issues;		/* step 7: issues block_rq_inode would follow */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);		/* st-record's default (record/options.c) */
} events SEC(".maps");

struct stage {
	__u32 depth;
	__u32 len;
	__u64 count;
	__u8 buf[2 * ST_STAGE_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stage);
} stages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct st_stage_age);
} stage_ages SEC(".maps");

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

static __always_inline void stage_age(__u64 since)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct st_stage_age *age = bpf_map_lookup_elem(&stage_ages, &cpu);

	if (age)
		age->since = since;
}

static __always_inline void fill_header(struct st_event_header *h, __u32 size, __u16 type, __u64 now)
{
	__u64 id = bpf_get_current_pid_tgid();

	h->type = type;
	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
	h->ts = now;
	h->pid = id >> 32;
	h->tid = (__u32)id;
}

/* A record of `size` bytes at the stage's end, its header filled; NULL outside the window. */
static __always_inline void *stage_record(int step, __u32 size, __u16 type, __u64 now)
{
	__u32 zero = 0;
	struct st_event_header *h;
	struct stage *s;

	if (step < 2)
		return NULL;
	s = bpf_map_lookup_elem(&stages, &zero);
	if (!s || s->depth)
		return NULL;
	s->depth = 1;
	h = (void *)(s->buf + (s->len & (ST_STAGE_BYTES - 1)));
	fill_header(h, size, type, now);
	return h;
}

static __always_inline void stage_commit(int step, __u32 size, __u64 now)
{
	__u32 zero = 0, len;
	struct stage *s = bpf_map_lookup_elem(&stages, &zero);
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (!s)
		return;
	if (step >= 3 && !s->count++)
		stage_age(now);
	s->len += size;
	if (s->len >= ST_STAGE_BYTES && step < 3)
		s->len = 0;
	if (s->len >= ST_STAGE_BYTES) {
		len = s->len & (sizeof(s->buf) - 1);
		if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) + len >= (4 << 20))
			flags = BPF_RB_FORCE_WAKEUP;
		if (bpf_ringbuf_output(&events, s->buf, len, flags))
			__sync_fetch_and_add(&lost, s->count);
		s->len = 0;
		s->count = 0;
		stage_age(0);
	}
	s->depth = 0;
}

#define REQ_BIT(name) (1u << bpf_core_enum_value(enum req_flag_bits, name))

static __always_inline __u32 opf_flags(__u32 opf)
{
	__u32 out = opf & ST_OP_MASK;

	out |= opf & REQ_BIT(__REQ_SYNC) ? ST_F_SYNC : 0;
	out |= opf & REQ_BIT(__REQ_META) ? ST_F_META : 0;
	out |= opf & REQ_BIT(__REQ_FUA) ? ST_F_FUA : 0;
	out |= opf & REQ_BIT(__REQ_PREFLUSH) ? ST_F_PREFLUSH : 0;
	out |= opf & REQ_BIT(__REQ_RAHEAD) ? ST_F_RAHEAD : 0;
	out |= opf & REQ_BIT(__REQ_BACKGROUND) ? ST_F_BACKGROUND : 0;
	out |= opf & REQ_BIT(__REQ_NOWAIT) ? ST_F_NOWAIT : 0;
	return out;
}

static __always_inline bool flush_seq(const struct request *rq)
{
	return rq->rq_flags & (1u << bpf_core_enum_value(enum rqf_flags, __RQF_FLUSH_SEQ));
}

static __always_inline __u32 devt(const struct request *rq)
{
	const struct gendisk *disk = rq->q->disk;

	return disk ? (__u32)disk->major << 20 | (__u32)disk->first_minor : 0;
}

/* step 6: blk-throttle's dispatch worker (block.bpf.h's throttle_dispatching, its first test) */
static __always_inline bool in_worker(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return (task->flags & 0x20) && task->worker_private;
}

/* step 7: the first bio's first page is a file's page cache (block.bpf.h's bio_file) */
static __always_inline bool page_cache_bio(const struct bio *bio)
{
	struct page *page = bio->bi_io_vec ? bio->bi_io_vec->bv_page : NULL;
	unsigned long head = 0, mapping = 0;

	if (!page)
		return false;
	bpf_probe_read_kernel(&head, sizeof(head), &page->compound_head);
	if (head & 1)
		page = bpf_rdonly_cast((void *)(head - 1), bpf_core_type_id_kernel(struct page));
	bpf_probe_read_kernel(&mapping, sizeof(mapping), &page->mapping);
	return mapping && !(mapping & 3);
}

static __always_inline __u32 ago(__u64 then, __u64 now, __u32 bit, __u32 *stamped)
{
	if (!then || then > now || now - then > 0xffffffffull)
		return 0;
	*stamped |= bit;
	return (__u32)(now - then);
}

/* Step 1: the request is on the traced disk, and *now (taken then) inside the recording window. */
static __always_inline bool traced_now(const struct request *rq, __u64 *now)
{
	if (devt(rq) != filter_dev)
		return false;
	*now = bpf_ktime_get_ns();
	return *now < record_until;
}

static __always_inline int issue(int step, const struct request *rq)
{
	struct st_ev_block_rq_issue_stamped *e;
	__u32 stamped = 0, n = 0;
	struct bio *bio;
	__u64 now;

	if (step < 1 || !traced_now(rq, &now) || (step >= 6 && bpf_get_current_pid_tgid() >> 32 == self_tgid))
		return 0;
	e = stage_record(step, sizeof(*e), ST_EV_block_rq_issue_stamped, now);
	if (!e)
		return 0;
	if (step >= 4) {
		e->p.rq = (__u64)rq;
		e->p.sector = rq->__data_len ? rq->__sector : 0;
		e->p.dev = filter_dev;
		e->p.bytes = rq->__data_len;
		e->p.nr_sector = rq->__data_len >> 9;
		e->p.opf = opf_flags(rq->cmd_flags) | (flush_seq(rq) ? ST_F_FLUSH_SEQ : 0);
		e->p.error = 0;
		bio = rq->bio;
		for (int i = 0; i < ST_RQ_BIOS; i++) {
			e->p.bios[i] = (__u64)bio;
			if (step >= 5) {
				e->p.queue_ago[i] = bio && bpf_core_field_exists(bio->issue_time_ns) ?
					ago(bio->issue_time_ns, now, ST_STAMPED_QUEUE(i), &stamped) : 0;
				e->p.bio_sectors[i] = bio ? bio->bi_iter.bi_size >> 9 : 0;
			}
			if (bio) {
				bio = bio->bi_next;
				n++;
			}
		}
		for (int i = ST_RQ_BIOS; i < ST_RQ_BIOS_COUNTED && bio; i++) {
			bio = bio->bi_next;
			n++;
		}
		e->p.nr_bios = n;
	}
	if (step >= 5)
		e->p.getrq_ago = ago(rq->start_time_ns, now, ST_STAMPED_GETRQ, &stamped);
	if (step >= 6 && in_worker())
		e->p.opf |= ST_F_HELD;
	e->p.stamped = stamped;
	stage_commit(step, sizeof(*e), now);
	if (step >= 7 && rq->bio && page_cache_bio(rq->bio))
		page_cache_issues++;
	return 0;
}

static __always_inline int complete(int step, const struct request *rq, unsigned int nr_bytes)
{
	struct st_ev_block_rq_complete_compact *e;
	__u64 now;

	if (step < 1 || !traced_now(rq, &now) || (step >= 6 && (!rq->__data_len || flush_seq(rq))))
		return 0;
	e = stage_record(step, sizeof(*e), ST_EV_block_rq_complete_compact, now);
	if (!e)
		return 0;
	if (step >= 4) {
		e->p.rq = (__u64)rq;
		e->p.dev = filter_dev;
		e->p.bytes = nr_bytes ? nr_bytes : rq->__data_len;
		e->p.error = 0;
		e->p.pad = 0;
	}
	stage_commit(step, sizeof(*e), now);
	return 0;
}

#define STEP(n)										\
	SEC("?tp_btf/block_rq_issue")							\
	int BPF_PROG(step##n##_issue, struct request *rq) { return issue(n, rq); }	\
	SEC("?tp_btf/block_rq_complete")						\
	int BPF_PROG(step##n##_complete, struct request *rq, blk_status_t error,	\
		     unsigned int nr_bytes) { return complete(n, rq, nr_bytes); }

STEP(0)
STEP(1)
STEP(2)
STEP(3)
STEP(4)
STEP(5)
STEP(6)
STEP(7)

/* step 3r: step 1, then a ring buffer reservation per record, its header filled */
static __always_inline int reserve_each(const struct request *rq, __u32 size, __u16 type)
{
	struct st_event_header *h;
	__u64 now;

	if (!traced_now(rq, &now))
		return 0;
	h = bpf_ringbuf_reserve(&events, size, 0);
	if (!h) {
		__sync_fetch_and_add(&lost, 1);
		return 0;
	}
	fill_header(h, size, type, now);
	bpf_ringbuf_submit(h, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("?tp_btf/block_rq_issue")
int BPF_PROG(step3r_issue, struct request *rq)
{
	return reserve_each(rq, sizeof(struct st_ev_block_rq_issue_stamped), ST_EV_block_rq_issue_stamped);
}

SEC("?tp_btf/block_rq_complete")
int BPF_PROG(step3r_complete, struct request *rq)
{
	return reserve_each(rq, sizeof(struct st_ev_block_rq_complete_compact), ST_EV_block_rq_complete_compact);
}
