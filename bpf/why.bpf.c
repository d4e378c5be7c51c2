// SPDX-License-Identifier: GPL-2.0
/*
 * why.bpf.c - the probes of the causes of an I/O's time (the `why` events,
 * format 1.5, 1.6): context switches and wakeups (the `sched` preset), run-queue
 * waits read from the kernel's own accounting (format 1.6), kernel lock contention, dirty
 * page throttling, reclaim, page-cache adds, and the cgroup of a bio the
 * throttle held back.
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
/* The one declaration of bpf_rdonly_cast in .ksyms (sttrace.bpf.h, CAST) */
#define RDONLY_CAST_KSYM
#include "sttrace.bpf.h"
#include "stage.bpf.h"
#include "why.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool follow_threads;
const volatile bool follow_service_threads;
const volatile bool record_svc_run_delay;
/* The data calls followed, by syscall number (ST_CALL_*, 0: not one): st-record fills it from <sys/syscall.h>. */
const volatile __u8 traced_calls[ST_SYSCALL_NRS];
extern unsigned long CONFIG_HZ __kconfig;

struct service_threads_map service_threads SEC(".maps");
struct block_raises_map block_raises SEC(".maps");

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
