/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stage.bpf.h - how a probe records: reserve a record, fill it, submit it.
 * The maps and the clock window are defined in sttrace.bpf.c, with the
 * flush_stage program st-record runs.
 */
#ifndef STAGE_BPF_H
#define STAGE_BPF_H

extern const volatile __u64 wakeup_bytes;	/* force a wakeup past this much unread data */

/*
 * Probes record while the event clock is below this: 0 until st-record has
 * attached the last probe, then the end of -t (or never), and 0 again before
 * the first probe is detached. So every probe records over the same window,
 * however long attaching and detaching take, and -t bounds it on the event
 * clock. Outside it the probes only keep their maps (marks, tasks) current.
 */
extern __u64 record_until;

struct events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);		/* resized by st-record before load */
};
extern struct events_map events SEC(".maps");

/* Records that found no room, per CPU */
struct lost_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
};
extern struct lost_map lost SEC(".maps");

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

struct stages_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stage);
};
extern struct stages_map stages SEC(".maps");

/* When each CPU staged its oldest waiting record (sttrace_bpf.h). */
struct stage_ages_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);			/* one per possible CPU, set by st-record */
	__type(key, __u32);
	__type(value, struct st_stage_age);
};
extern struct stage_ages_map stage_ages SEC(".maps");

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

#define RESERVE(payload, name) \
	((struct st_ev_##payload *)reserve(sizeof(struct st_ev_##payload), ST_EV_##name))

#endif /* STAGE_BPF_H */
