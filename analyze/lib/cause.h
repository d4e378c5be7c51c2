/* SPDX-License-Identifier: MIT */
/*
 * cause.h - why an I/O took its time: the engine that splits each I/O's
 * interval into causes from the `why` events of format 1.5 (sched_switch,
 * sched_wakeup, contention_begin/end, balance_dirty_pages, direct and memcg
 * reclaim begin/end, mm_filemap_add_to_page_cache, block_bio_held) and of
 * format 1.6 (the same, sched_switch and sched_wakeup only with st-record's
 * `sched` preset; svc_run_delay and the data calls' run_delay fields).
 *
 * Without any sched record the run-queue waits come from the kernel's own
 * count (task->sched_info.run_delay): runq is the call's exit value less its
 * entry's; svc_runq the completing kernel thread's increase since its
 * previous completion (svc_run_delay), at most the part of the I/O's
 * [issue, complete] after that one (exact with one request in flight; with
 * several, a wait counts for each I/O it overlaps; the thread before it in
 * the chain is not seen); a dirty pause ends at the thread's next event or
 * the exit, less the call's runq; no runq culprit (AN_IO_RUNQ_COUNTED).
 *
 * The correlator (correlate.h) owns one engine when its recording has these
 * events (an_corr_enable_causes), hands it each of them with the I/O of the
 * thread concerned, and calls an_cause_finish() on every I/O before emitting
 * it. A recording without them costs one pointer test per I/O.
 *
 * The causes, in ns, of an I/O's interval (its total: syscall entry -> exit,
 * or the block interval of an I/O without a syscall):
 *
 *   runq      its thread runnable but not running: woken (sched_wakeup) or
 *             preempted (sched_switch with prev_state 0) -> switched in.
 *             Only while the thread is inside the I/O's syscall.
 *   svc_runq  the runq waits, overlapping the I/O's [issue, complete], of
 *             the threads that served it: the one its completion ran in
 *             (ksoftirqd, a loop worker, a kworker) and, back from it, the
 *             thread that woke that one inside the window (the loop worker
 *             that did the I/O), never the I/O's own; at most the window.
 *   lock      contention_begin -> contention_end on the same lock.
 *   throttle  a bio blk-throttle held back: submission (fs begin, else
 *             syscall entry) -> the held bio's queueing by the throttle's
 *             worker; its cgroup from block_bio_held.
 *   dirty     balance_dirty_pages: from ts until the thread is woken (its
 *             timer fires on a tick after ts + pause; a signal cuts it short).
 *   reclaim   direct or memory-cgroup reclaim begin -> end.
 *
 * Time is counted once. A lock, dirty or reclaim window is the outermost
 * one open on the thread (windows inside it count as it), less the runq
 * waits inside it, which are runq. Every cause lies within the interval and
 * the causes never sum to more than it: the thread's own waits first, then
 * throttle (measured from two stage times rather than events of its own),
 * then svc_runq (other threads' waits while it slept) take at most what the
 * others left; the rest of the total is `other` (an_io_causes()), never
 * spread over the causes.
 *
 * Per read, not a time, an_io.cache: direct (iomap_dio_rw_begin, or bios
 * that filled no page of the cache: O_DIRECT on a block device), miss (its
 * thread added pages to the page cache during the call), hit (neither);
 * other ops: none.
 *
 * Per event, no allocation past the pools' growth: threads live in a pool
 * indexed by tid.
 */
#ifndef AN_CAUSE_H
#define AN_CAUSE_H

#include <stdint.h>

#include "analyze/lib/io.h"
#include "format/lib/sttrace_events.h"

/* contention_begin's flags (the kernel's LCB_F_*). */
#define AN_LCB_SPIN	1u
#define AN_LCB_READ	2u
#define AN_LCB_WRITE	4u
#define AN_LCB_RT	8u
#define AN_LCB_PERCPU	16u
#define AN_LCB_MUTEX	32u

struct an_causes;

/* measured: 1 << AN_CAUSE_* of the causes the recording measures. 0, or -1 when out of memory. */
int an_cause_new(struct an_causes **cz, unsigned measured);
void an_cause_free(struct an_causes *cz);
/* 1 after an allocation failed (events were dropped). */
int an_cause_failed(const struct an_causes *cz);

/*
 * One event of those types. `io` is the I/O whose syscall holds the thread
 * whose wait the event may end (a sched_switch's next_tid; the record's
 * thread for the others), NULL if none.
 */
void an_cause_event(struct an_causes *cz, const struct st_event_header *h, struct an_io *io);
/*
 * Before io is emitted: svc_runq, throttle, the bound on the sum (its total,
 * when has_total), cache, the causes measured; sets AN_IO_WHY.
 */
void an_cause_finish(struct an_causes *cz, struct an_io *io, int has_total, uint64_t total);

/* "-" (unknown), "none", "hit", "miss", "direct". */
const char *an_cache_name(enum an_cache c);
/* A lock kind from LCB_F_* flags: "mutex", "rwsem-write", "spinlock", ... */
const char *an_lock_kind(uint32_t flags);

#endif /* AN_CAUSE_H */
