/* SPDX-License-Identifier: GPL-2.0 */
/*
 * why.bpf.h - the probes of the causes of an I/O's time (the `why` events,
 * format 1.5, 1.6): context switches and wakeups (the `sched` preset), run-queue
 * waits read from the kernel's own accounting (format 1.6), kernel lock contention, dirty
 * page throttling, reclaim, page-cache adds, and the cgroup of a bio the
 * throttle held back.
 *
 * Included by sttrace.bpf.c after its records section, not built alone:
 * the completion probes below it mark the kernel threads these probes
 * follow, and they record through the same stage and ring buffer.
 *
 * Most of these tracepoints fire all over the system (a context switch on
 * every CPU many thousand times a second), so each records only where a
 * followed thread is involved and drops everything else after a look at
 * each thread it names: the cost follows the traced I/O, not the machine's
 * activity. A thread is followed
 *   - while it is inside a traced data syscall: the I/O's own thread. Asked
 *     where it matters, of the syscall the kernel says the thread is in
 *     (task_syscall_nr()), not kept by the syscall probes: these probes are
 *     rare next to the data calls, which then pay nothing for them;
 *   - with a `sched` event selected, from the moment it serves one as a
 *     kernel thread (it stays followed): one that completes a selected
 *     request (an irq thread, ksoftirqd, a driver's worker), or one a thread
 *     inside a traced call wakes (the loop device's worker, woken to do the
 *     I/O it queued; a flusher). Their switches and wakeups show the
 *     device's completions waiting for a CPU; without them only the I/O's
 *     own thread's events are read (st-analyze's causes are its call's).
 */

const volatile bool follow_threads;	/* a `why` event is selected: run_delay is read */
const volatile bool follow_service_threads;	/* a `sched` event is selected: keep `service_threads` */
const volatile bool record_bio_held;	/* block_bio_held after each held-back block_bio_queue */
const volatile bool record_svc_run_delay; /* svc_run_delay before each completion in a kernel thread */
/* The data calls followed, by syscall number (ST_CALL_*, 0: not one): st-record fills it from <sys/syscall.h>. */
const volatile __u8 traced_calls[ST_SYSCALL_NRS];
extern unsigned long CONFIG_HZ __kconfig;

/* The kernel threads followed: tid -> 1. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_MAX_SERVICE_THREADS);
	__type(key, __u32);
	__type(value, __u8);
} service_threads SEC(".maps");

#define TS_COMPAT	0x0002	/* thread_info.status: inside a 32-bit syscall (x86) */
#define FRED_EVENT_SYSCALL	0x70001	/* a FRED frame's event type 7 (other), vector 1 */

/* x86-64's smallest task stack (16 KiB; 32 with KASAN, whose upper half then reads as an interrupt's) */
#define TASK_STACK_SIZE	(16 << 10)

/*
 * A task's user frame: bpf_task_pt_regs() (5.15+) gives it as a BTF
 * pointer; before it, the frame is where x86-64's task_pt_regs() finds it,
 * at the top of the task's stack, read with probe reads: RREAD(regs, field).
 */
#define have_task_pt_regs bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs)
#define RREAD(regs, field) (have_task_pt_regs ? (regs)->field : BPF_CORE_READ(regs, field))

/*
 * The architecture's part (x86-64), in two steps so that a thread in no
 * traced call costs one load from its frame. First the number in the
 * slot of the task's user frame (bpf_task_pt_regs()) where the syscall
 * entry saves it, what the kernel's syscall_get_nr() reads; -1 for a
 * kernel thread (its frame is zeroed: it would read as read(0)) or a
 * 32-bit call (another table, which the syscall tracepoints skip).
 */
static __always_inline long task_syscall_nr(struct task_struct *task, struct pt_regs **regs)
{
	if ((TREAD(task, flags) & PF_KTHREAD) || (TREAD(task, thread_info.status) & TS_COMPAT))
		return -1;
	if (!have_task_pt_regs)
		*regs = (struct pt_regs *)((__u64)TREAD(task, stack) + TASK_STACK_SIZE) - 1;
	else
		*regs = (struct pt_regs *)bpf_task_pt_regs(task);
	return (long)RREAD(*regs, orig_ax);
}

/*
 * Then whether that number is a syscall's, and the call's first argument.
 * The slot holds one only in a syscall's frame: an exception keeps its
 * error code there (a user page fault's 0x14, an instruction fetch, is
 * writev's number) and an interrupt its vector. A syscall's frame is known
 * by how it was made: with FRED its event type and vector say SYSCALL;
 * without, the entry stored the SYSCALL instruction's copies of ip and
 * flags (rcx, r11) beside them.
 */
static __always_inline bool syscall_frame_arg0(const struct pt_regs *regs, __u64 *arg0)
{
	__u64 fred = 0;

	/* the FRED event of a frame sits above the ss selector, 0 in an IDT frame (and before 6.9) */
	if (bpf_core_field_exists(regs->ssx))
		fred = regs->ssx >> 32 & 0xf00ff;
	if (fred ? fred != FRED_EVENT_SYSCALL :
		   (RREAD(regs, cx) != RREAD(regs, ip) || RREAD(regs, r11) != RREAD(regs, flags)))
		return false;
	*arg0 = RREAD(regs, di);
	return true;
}

/*
 * Whether task is inside a traced data syscall: one selected, of a task the
 * filters pass, and with -d one on a file of the device's file systems or
 * the device itself (a ring or an aio context names no file: followed), so
 * the threads of other disks' I/O are not followed.
 */
static __always_inline bool task_in_traced_call(struct task_struct *task)
{
	struct pt_regs *regs = NULL;
	__u64 fd;
	long nr;
	__u8 call;

	nr = task_syscall_nr(task, &regs);
	if (nr < 0 || nr >= ST_SYSCALL_NRS)
		return false;
	call = traced_calls[nr];
	if (!call || !syscall_frame_arg0(regs, &fd) || !task_struct_passes(task))
		return false;
	return !filter_ndevs || call == ST_CALL_NO_FD || task_fd_dev_passes(task, (unsigned int)fd);
}

static __always_inline bool is_service_thread(__u32 tid)
{
	return bpf_map_lookup_elem(&service_threads, &tid) != NULL;
}

static __always_inline void follow_service_thread(__u32 tid)
{
	__u8 one = 1;

	bpf_map_update_elem(&service_threads, &tid, &one, BPF_NOEXIST);
}

/* Whether the `why` probes follow task: the one question every probe here asks. */
static __always_inline bool task_followed(struct task_struct *task)
{
	__u32 tid = TREAD(task, pid);

	if (!tid)		/* a CPU's idle task */
		return false;
	if (TREAD(task, flags) & PF_KTHREAD)
		return follow_service_threads && is_service_thread(tid);
	return task_in_traced_call(task);
}

static __always_inline bool current_followed(void)
{
	return task_followed(current_task());
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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct block_raise);
} block_raises SEC(".maps");

/*
 * Whether a raw tracepoint fired in task context: its arguments (ctx) sit
 * in the frame of the code that fired it, on the task's own stack there,
 * on the CPU's interrupt stack in a hardirq, an IPI or a softirq run as an
 * interrupt ends (x86-64 switches to it for each; ksoftirqd's softirqs run
 * on its own stack, as its task's). A raise from an interrupt names the
 * thread it interrupted: a single-queue disk's completion raises the block
 * softirq from its hardirq, a remote completion from an IPI.
 */
static __always_inline bool in_task_context(void *ctx, const struct task_struct *task)
{
	__u64 stack = (__u64)TREAD(task, stack);

	return (__u64)ctx >= stack && (__u64)ctx < stack + TASK_STACK_SIZE;
}

SEC("tp_btf/softirq_raise")
int BPF_PROG(softirq_raise, unsigned int vec)
{
	struct task_struct *task;
	struct block_raise *r;
	__u32 zero = 0, tid;

	if (vec != BLOCK_SOFTIRQ || !(r = bpf_map_lookup_elem(&block_raises, &zero)))
		return 0;
	task = current_task();
	tid = TREAD(task, pid);
	if (!(TREAD(task, flags) & PF_KTHREAD) || !tid || !in_task_context(ctx, task)) {
		r->tid = 0;
		return 0;
	}
	r->run_delay = TREAD(task, sched_info.run_delay);
	r->at = bpf_ktime_get_ns();
	r->tid = tid;
	r->dev = 0;
	return 0;
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

#define TASK_RUNNING	0x0000

/* Every switch runs this: a look at each thread decides, the rest only for followed threads. */
static __always_inline int switch_event(bool preempt, struct task_struct *prev, struct task_struct *next,
					unsigned int prev_state)
{
	struct st_ev_sched_switch *e;

	if (!task_followed(prev) && !task_followed(next))
		return 0;
	e = RESERVE(sched_switch, sched_switch);
	if (!e)
		return 0;
	/* the tracepoint fires in prev, before the switch: the header is prev's */
	e->p.prev_tid = prev->pid;
	e->p.next_tid = next->pid;
	e->p.prev_state = preempt || prev_state == TASK_RUNNING ? 0 : prev_state;
	e->p.next_pid = next->tgid;
	bpf_probe_read_kernel(e->p.prev_comm, sizeof(e->p.prev_comm), prev->comm);
	bpf_probe_read_kernel(e->p.next_comm, sizeof(e->p.next_comm), next->comm);
	submit(e, sizeof(*e));
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return switch_event(preempt, prev, next, prev_state);
}

/* Until 5.14 the tracepoint passed no prev_state: the task's state, then named state */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch___state, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return switch_event(preempt, prev, next, BPF_CORE_READ((struct task_struct___510 *)prev, state));
}

/*
 * The header is the waker's (the current thread); the record names the
 * woken one. A kernel thread woken from inside a traced call serves it from
 * then on: a look at the waker, for kernel threads only.
 */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup, struct task_struct *p)
{
	struct st_ev_sched_wakeup *e;

	if (!task_followed(p)) {
		if (!p->pid || !(p->flags & PF_KTHREAD) || !task_in_traced_call(current_task()))
			return 0;
		follow_service_thread(p->pid);
	}
	e = RESERVE(sched_wakeup, sched_wakeup);
	if (!e)
		return 0;
	e->p.woken_tid = p->pid;
	/* in the task until 5.16 */
	e->p.target_cpu = bpf_core_field_exists(((struct task_struct___510 *)0)->cpu) ?
			  BPF_CORE_READ((struct task_struct___510 *)p, cpu) : p->thread_info.cpu;
	submit(e, sizeof(*e));
	return 0;
}

static __always_inline int emit_contention(__u16 type, const void *lock, __u32 flags, __s32 ret)
{
	struct st_ev_lock_contention *e;

	if (!current_followed())
		return 0;
	e = reserve(sizeof(*e), type);
	if (!e)
		return 0;
	e->p.lock = (__u64)lock;
	e->p.flags = flags;
	e->p.ret = ret;
	submit(e, sizeof(*e));
	return 0;
}

SEC("tp_btf/contention_begin")
int BPF_PROG(contention_begin, void *lock, unsigned int flags)
{
	return emit_contention(ST_EV_contention_begin, lock, flags, 0);
}

SEC("tp_btf/contention_end")
int BPF_PROG(contention_end, void *lock, int ret)
{
	return emit_contention(ST_EV_contention_end, lock, 0, ret);
}

/* The pause in jiffies, as the kernel sleeps it (io_schedule_timeout); <= 0: not paused. */
static __always_inline int emit_dirty_pause(long pause, __u64 dirty, __u64 limit)
{
	struct st_ev_dirty_pause *e;

	if (!current_followed())
		return 0;
	e = RESERVE(dirty_pause, balance_dirty_pages);
	if (!e)
		return 0;
	e->p.pause_ns = pause > 0 ? (__u64)pause * 1000000000ull / CONFIG_HZ : 0;
	e->p.dirty = dirty;
	e->p.limit = limit;
	submit(e, sizeof(*e));
	return 0;
}

SEC("tp_btf/balance_dirty_pages")
int BPF_PROG(balance_dirty_pages, struct bdi_writeback *wb, struct dirty_throttle_control *dtc,
	     unsigned long dirty_ratelimit, unsigned long task_ratelimit, unsigned long dirtied,
	     unsigned long period, long pause, unsigned long start_time)
{
	return emit_dirty_pause(pause, dtc->dirty, dtc->limit);
}

/*
 * The tracepoint before it passed the control structure (6.13): the
 * domain's threshold and dirty count as values (record/probes.c picks it).
 */
SEC("tp_btf/balance_dirty_pages")
int BPF_PROG(balance_dirty_pages___thresh, struct bdi_writeback *wb, unsigned long thresh,
	     unsigned long bg_thresh, unsigned long dirty, unsigned long bdi_thresh,
	     unsigned long bdi_dirty, unsigned long dirty_ratelimit, unsigned long task_ratelimit,
	     unsigned long dirtied, unsigned long period, long pause, unsigned long start_time)
{
	return emit_dirty_pause(pause, dirty, thresh);
}

static __always_inline int emit_reclaim(__u16 type, __u64 value)
{
	struct st_ev_reclaim *e;

	if (!current_followed())
		return 0;
	e = reserve(sizeof(*e), type);
	if (!e)
		return 0;
	e->p.value = value;
	submit(e, sizeof(*e));
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(mm_vmscan_direct_reclaim_begin, int order, gfp_t gfp_flags)
{
	return emit_reclaim(ST_EV_mm_vmscan_direct_reclaim_begin, (__u64)order);
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(mm_vmscan_direct_reclaim_end, unsigned long nr_reclaimed)
{
	return emit_reclaim(ST_EV_mm_vmscan_direct_reclaim_end, nr_reclaimed);
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(mm_vmscan_memcg_reclaim_begin, int order, gfp_t gfp_flags)
{
	return emit_reclaim(ST_EV_mm_vmscan_memcg_reclaim_begin, (__u64)order);
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(mm_vmscan_memcg_reclaim_end, unsigned long nr_reclaimed)
{
	return emit_reclaim(ST_EV_mm_vmscan_memcg_reclaim_end, nr_reclaimed);
}

/* folio_nr_pages(): a large folio (its head flag set) keeps its page count in its second page. */
static __always_inline __u32 folio_pages(const struct folio *folio)
{
	unsigned long flags = 0;

	/* the flags word is the folio's first; its type changed (memdesc_flags_t in 6.18) */
	bpf_probe_read_kernel(&flags, sizeof(flags), folio);
	if (!(flags & (1ul << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (bpf_core_field_exists(folio->_nr_pages))
		return folio->_nr_pages;
	/* before _nr_pages: the order in the low byte of the second page's flags */
	return 1u << (folio->_flags_1 & 0xff);
}

static __always_inline int emit_page_cache(const struct address_space *mapping, __u64 index, __u32 nr_pages)
{
	struct st_ev_page_cache *e;
	struct inode *host;

	if (!current_followed())
		return 0;
	host = mapping ? mapping->host : NULL;
	if (!host)
		return 0;
	e = RESERVE(page_cache, mm_filemap_add_to_page_cache);
	if (!e)
		return 0;
	e->p.ino = host->i_ino;
	e->p.index = index;
	/* as the kernel's tracepoint has it: a block device's own page cache has no file system */
	e->p.dev = host->i_sb ? host->i_sb->s_dev : host->i_rdev;
	e->p.nr_pages = nr_pages;
	submit(e, sizeof(*e));
	return 0;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(mm_filemap_add_to_page_cache, struct folio *folio)
{
	return emit_page_cache(folio->mapping, folio->index, folio_pages(folio));
}

/* Until 5.17 the tracepoint passed a page: a file's page cache grew a page at a time (huge shmem pages aside) */
struct page___510 {
	struct address_space *mapping;
	unsigned long index;
} __attribute__((preserve_access_index));

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(mm_filemap_add_to_page_cache___page, struct page___510 *page)
{
	return emit_page_cache(page->mapping, page->index, 1);
}

/*
 * The id of a cgroup in its hierarchy: its kernfs node's id, which is its
 * directory's inode number on 64-bit kernels (kernfs_id_ino).
 */
static __always_inline __u64 css_cgroup_id(const struct cgroup_subsys_state *css)
{
	return css && css->cgroup && css->cgroup->kn ? css->cgroup->kn->id : 0;
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
