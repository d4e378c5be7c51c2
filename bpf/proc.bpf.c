// SPDX-License-Identifier: GPL-2.0
/*
 * proc.bpf.c - the probes of processes: fork (which extends -p to the
 * children of traced processes), exec and exit.
 */
#include "sttrace.bpf.h"
#include "stage.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* A task event is about `task`: the header names it, not the current task. */
static __always_inline int emit_task(const struct task_struct *task, __u16 type, __u32 other_pid)
{
	struct st_ev_task *e = reserve(sizeof(*e), type);

	if (!e)
		return 0;
	e->h.pid = task->tgid;
	e->h.tid = task->pid;
	e->p.other_pid = other_pid;
	e->p.pad = 0;
	bpf_probe_read_kernel(e->p.comm, sizeof(e->p.comm), task->comm);
	submit(e, sizeof(*e));
	return 0;
}

/* With -p, children of traced processes become traced before they run. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 child_tgid = child->tgid;
	__u8 one = 1;

	if (filter_pid) {
		__u32 parent_tgid = parent->tgid;

		if (!bpf_map_lookup_elem(&tracked_tgids, &parent_tgid))
			return 0;
		bpf_map_update_elem(&tracked_tgids, &child_tgid, &one, BPF_ANY);
	}
	if (!task_passes() || child_tgid == self_tgid)
		return 0;
	return emit_task(child, ST_EV_sched_process_fork, parent->tgid);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sched_process_exec, struct task_struct *p, pid_t old_pid)
{
	if (!task_passes())
		return 0;
	return emit_task(p, ST_EV_sched_process_exec, old_pid);
}

/* Only whole processes: the thread-group leader's exit. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_process_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	if (p->pid != p->tgid || !task_passes())
		return 0;
	emit_task(p, ST_EV_sched_process_exit, 0);
	if (filter_pid)
		bpf_map_delete_elem(&tracked_tgids, &tgid);
	return 0;
}
