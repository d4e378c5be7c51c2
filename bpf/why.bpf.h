/* SPDX-License-Identifier: GPL-2.0 */
/*
 * why.bpf.h - the probes of the causes of an I/O's time (the `why` events,
 * format 1.5, 1.6): context switches and wakeups (the `sched` preset), run-queue
 * waits read from the kernel's own accounting (format 1.6), kernel lock contention, dirty
 * page throttling, reclaim, page-cache adds, and the cgroup of a bio the
 * throttle held back.
 *
 * Included by sttrace.bpf.c after its records section, not built alone:
 * the syscall and completion probes below it mark the threads these probes
 * follow, and they record through the same stage and ring buffer.
 *
 * Most of these tracepoints fire all over the system (a context switch on
 * every CPU many thousand times a second), so each records only where a
 * followed thread is involved and drops everything else after one lookup
 * per thread it names: the cost follows the traced I/O, not the machine's
 * activity. A thread is followed
 *   - while it is inside a traced data syscall (its entry recorded, its exit
 *     not yet): the I/O's own thread;
 *   - from the moment it serves one as a kernel thread (it stays followed):
 *     one that completes a selected request (an irq thread, ksoftirqd, a
 *     driver's worker), or one a thread inside a traced call wakes (the
 *     loop device's worker, woken to do the I/O it queued; a flusher).
 *     Their run queue waits delay the device's completions.
 */

const volatile bool follow_threads;	/* a `why` event is selected: keep `followed` */
const volatile bool record_bio_held;	/* block_bio_held after each held-back block_bio_queue */
const volatile bool record_svc_run_delay; /* svc_run_delay after each completion in a kernel thread */
extern unsigned long CONFIG_HZ __kconfig;

#define ST_FOLLOW_IN_CALL	1	/* inside a traced data syscall */
#define ST_FOLLOW_SERVICE	2	/* a kernel thread that completed a selected request */

/* The threads followed: tid -> ST_FOLLOW_* bits, 0 once neither holds. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_MAX_FOLLOWED_THREADS);
	__type(key, __u32);
	__type(value, __u8);
} followed SEC(".maps");

static __always_inline bool is_followed(__u32 tid)
{
	__u8 *f;

	if (!tid)	/* a CPU's idle task */
		return false;
	f = bpf_map_lookup_elem(&followed, &tid);
	return f && *f;
}

static __always_inline void follow_set(__u32 tid, __u8 bit)
{
	__u8 *f = bpf_map_lookup_elem(&followed, &tid);

	if (f)
		*f |= bit;
	else
		bpf_map_update_elem(&followed, &tid, &bit, BPF_ANY);
}

/* The current thread enters a traced data syscall. */
static __always_inline void follow_call_enter(void)
{
	if (follow_threads)
		follow_set((__u32)bpf_get_current_pid_tgid(), ST_FOLLOW_IN_CALL);
}

/* ... and returns from it: the entry stays (LRU) with the bit cleared, no update next time. */
static __always_inline void follow_call_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u8 *f;

	if (!follow_threads)
		return;
	f = bpf_map_lookup_elem(&followed, &tid);
	if (f && (*f & ST_FOLLOW_IN_CALL))
		*f &= ~ST_FOLLOW_IN_CALL;
}

/*
 * The current thread completed a selected request: a kernel thread is one
 * that serves the device. A completion in interrupt context names the
 * thread it interrupted, which then is followed too (more records, none
 * wrong: each names its threads).
 */
static __always_inline void follow_service(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (follow_threads && tid && (bpf_get_current_task_btf()->flags & PF_KTHREAD) &&
	    !is_followed(tid))
		follow_set(tid, ST_FOLLOW_SERVICE);
}

static __always_inline bool current_followed(void)
{
	return is_followed((__u32)bpf_get_current_pid_tgid());
}

static __always_inline bool current_in_call(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u8 *f = bpf_map_lookup_elem(&followed, &tid);

	return f && (*f & ST_FOLLOW_IN_CALL);
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
	return bpf_get_current_task_btf()->sched_info.run_delay;
}

/* Before a selected completion's record: a kernel thread's wait so far (the thread serving the device). */
static __always_inline void emit_svc_run_delay(void)
{
	struct task_struct *task;
	struct st_ev_svc_run_delay *e;

	if (!record_svc_run_delay)
		return;
	task = bpf_get_current_task_btf();
	if (!(task->flags & PF_KTHREAD))
		return;
	e = RESERVE(svc_run_delay, svc_run_delay);
	if (!e)
		return;
	e->p.run_delay = task->sched_info.run_delay;
	submit(e, sizeof(*e));
}

#define TASK_RUNNING	0x0000

/* Every switch runs this: two lookups decide, the rest only for followed threads. */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct st_ev_sched_switch *e;

	if (!is_followed(prev->pid) && !is_followed(next->pid))
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

/*
 * The header is the waker's (the current thread); the record names the
 * woken one. A kernel thread woken from inside a traced call serves it from
 * then on: a second lookup, for kernel threads only.
 */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup, struct task_struct *p)
{
	struct st_ev_sched_wakeup *e;

	if (!is_followed(p->pid)) {
		if (!follow_threads || !p->pid || !(p->flags & PF_KTHREAD) || !current_in_call())
			return 0;
		follow_set(p->pid, ST_FOLLOW_SERVICE);
	}
	e = RESERVE(sched_wakeup, sched_wakeup);
	if (!e)
		return 0;
	e->p.woken_tid = p->pid;
	e->p.target_cpu = p->thread_info.cpu;
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
SEC("tp_btf/balance_dirty_pages")
int BPF_PROG(balance_dirty_pages, struct bdi_writeback *wb, struct dirty_throttle_control *dtc,
	     unsigned long dirty_ratelimit, unsigned long task_ratelimit, unsigned long dirtied,
	     unsigned long period, long pause, unsigned long start_time)
{
	struct st_ev_dirty_pause *e;

	if (!current_followed())
		return 0;
	e = RESERVE(dirty_pause, balance_dirty_pages);
	if (!e)
		return 0;
	e->p.pause_ns = pause > 0 ? (__u64)pause * 1000000000ull / CONFIG_HZ : 0;
	e->p.dirty = dtc->dirty;
	e->p.limit = dtc->limit;
	submit(e, sizeof(*e));
	return 0;
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

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(mm_filemap_add_to_page_cache, struct folio *folio)
{
	struct st_ev_page_cache *e;
	struct inode *host;

	if (!current_followed())
		return 0;
	host = folio->mapping ? folio->mapping->host : NULL;
	if (!host)
		return 0;
	e = RESERVE(page_cache, mm_filemap_add_to_page_cache);
	if (!e)
		return 0;
	e->p.ino = host->i_ino;
	e->p.index = folio->index;
	/* as the kernel's tracepoint has it: a block device's own page cache has no file system */
	e->p.dev = host->i_sb ? host->i_sb->s_dev : host->i_rdev;
	e->p.nr_pages = folio_pages(folio);
	submit(e, sizeof(*e));
	return 0;
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
