/* SPDX-License-Identifier: GPL-2.0 */
/*
 * why.bpf.h - what the block and syscall probes ask of the `why` probes
 * (why.bpf.c): the kernel threads followed, the run-queue wait of the
 * current thread, and the svc_run_delay record that goes before a
 * completion in a kernel thread.
 */
#ifndef WHY_BPF_H
#define WHY_BPF_H

extern const volatile bool follow_threads;	/* a `why` event is selected: run_delay is read */
extern const volatile bool follow_service_threads;	/* a `sched` event is selected: keep `service_threads` */
extern const volatile bool record_svc_run_delay; /* svc_run_delay before each completion in a kernel thread */

/* The kernel threads followed: tid -> 1. */
struct service_threads_map {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_MAX_SERVICE_THREADS);
	__type(key, __u32);
	__type(value, __u8);
};
extern struct service_threads_map service_threads SEC(".maps");

/*
 * The kernel thread that last raised this CPU's block softirq in task
 * context, as it raised it (tid 0: the last raise came from an interrupt or
 * a user thread). The softirq runs on the CPU that raised it, and with a
 * busy CPU in ksoftirqd, not in the raiser: the loop device's worker reads
 * the data, raises it and goes on, so the completion alone would never name
 * the thread whose wait for a CPU came first (format 1.7).
 */
struct block_raise {
	__u64 run_delay, at;
	__u32 tid;
	__u32 dev;	/* of the first completion after it (0: none yet) */
};

struct block_raises_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct block_raise);
};
extern struct block_raises_map block_raises SEC(".maps");

static __always_inline bool is_service_thread(__u32 tid)
{
	return bpf_map_lookup_elem(&service_threads, &tid) != NULL;
}

static __always_inline void follow_service_thread(__u32 tid)
{
	__u8 one = 1;

	bpf_map_update_elem(&service_threads, &tid, &one, BPF_NOEXIST);
}

/*
 * The current thread completed a selected request: a kernel thread is one
 * that serves the device. A completion in interrupt context names the
 * thread it interrupted, which then is followed too (more records, none
 * wrong: each names its threads).
 */
static __always_inline void follow_service(void)
{
	struct task_struct *task;
	__u32 tid;

	if (!follow_service_threads)
		return;
	task = current_task();
	tid = TREAD(task, pid);
	if (tid && (TREAD(task, flags) & PF_KTHREAD) && !is_service_thread(tid))
		follow_service_thread(tid);
}

/*
 * The current thread's run-queue wait so far: the kernel adds each wait at
 * the switch-in that ends it (CONFIG_SCHED_INFO), so two reads in a running
 * thread bound every wait between them, woken or preempted, with no
 * scheduler probe. 0 when no `why` event is selected (not recorded).
 */
static __always_inline __u64 current_run_delay(void)
{
	if (!follow_threads)
		return 0;
	return TREAD(current_task(), sched_info.run_delay);
}

/*
 * Every completion, selected or not, in whatever thread: the first after a
 * raise names the raiser's device (below).
 */
static __always_inline void note_completion(__u32 dev)
{
	__u32 zero = 0;
	struct block_raise *r;

	if (record_svc_run_delay && (r = bpf_map_lookup_elem(&block_raises, &zero)) && !r->dev)
		r->dev = dev;
}

/*
 * The raise before this completion, when another kernel thread made it,
 * for a request of the raiser's device. A thread raises the softirq only
 * when it finds the CPU's list of completions empty, and the softirq takes
 * them in the order they came: the first completion after a raise is the
 * raiser's own request, and names its device. Others may join the list
 * before the softirq runs (a disk's hardirq adds its request and raises
 * nothing), and are not the raiser's: another device's are passed over.
 */
static __always_inline void set_raiser(struct st_ev_svc_run_delay *d, const struct task_struct *task,
				       __u32 dev)
{
	__u32 zero = 0;
	struct block_raise *r = bpf_map_lookup_elem(&block_raises, &zero);

	d->p.raiser_tid = 0;
	d->p.pad = 0;
	if (!r || !r->tid || r->tid == TREAD(task, pid) || r->dev != dev) {
		d->p.raiser_run_delay = 0;
		d->p.raised_at = 0;
		return;
	}
	d->p.raiser_tid = r->tid;
	d->p.raiser_run_delay = r->run_delay;
	d->p.raised_at = r->at;
}

/*
 * A selected completion's record of size bytes, reserved with, before it,
 * the svc_run_delay record of the kernel thread it runs in (the thread
 * serving the device) and of the one that raised its softirq: one
 * reservation and one clock read for both, the same ts. Returns where the
 * reservation starts (NULL: none), *lead the bytes before the completion's
 * record (0 without svc_run_delay); submit with
 * submit_records(start, *lead + size, *lead ? 2 : 1).
 */
static __always_inline void *reserve_with_svc_run_delay(__u32 size, __u16 type, __u32 dev, __u32 *lead)
{
	struct task_struct *task = current_task();
	struct st_ev_svc_run_delay *d;
	struct st_event_header *h;

	*lead = 0;
	if (!record_svc_run_delay || !(TREAD(task, flags) & PF_KTHREAD))
		return reserve(size, type);
	d = reserve(sizeof(*d) + size, ST_EV_svc_run_delay);
	if (!d)
		return NULL;
	d->h.size = sizeof(*d);
	d->p.run_delay = TREAD(task, sched_info.run_delay);
	set_raiser(d, task, dev);
	h = (void *)(d + 1);
	*h = d->h;
	h->type = type;
	h->size = size;
	*lead = sizeof(*d);
	return d;
}

#endif /* WHY_BPF_H */
