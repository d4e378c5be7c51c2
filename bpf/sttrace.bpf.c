// SPDX-License-Identifier: GPL-2.0
/*
 * sttrace.bpf.c - what the probes of every other file share, defined once:
 * the recording's settings (declared in sttrace.bpf.h), the task filter's
 * maps, the per-CPU stage and ring buffer (stage.bpf.h) and flush_stage,
 * which st-record runs to hand a CPU's staged records over.
 */
#include "sttrace.bpf.h"
#include "stage.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 self_tgid;
const volatile __u64 wakeup_bytes = ~0ull;
const volatile bool filter_pid;
const volatile bool filter_comm;
const volatile char target_comm[ST_COMM_LEN];
const volatile __u64 filter_cgroup;
const volatile __u64 filter_blkcg;
const volatile __u32 filter_ndevs;
const volatile __u32 filter_devs[ST_MAX_FILTER_DEVS];
const volatile bool mark_self_bios;
const volatile __u64 self_ino;
const volatile __u32 self_sdev;
const volatile bool have_rdonly_cast;

__u64 record_until;

struct events_map events SEC(".maps");
struct lost_map lost SEC(".maps");
struct tracked_tgids_map tracked_tgids SEC(".maps");
struct dirtied_files_map dirtied_files SEC(".maps");
struct traced_blkcgs_map traced_blkcgs SEC(".maps");
struct open_fsyncs_map open_fsyncs SEC(".maps");
struct stages_map stages SEC(".maps");
struct stage_ages_map stage_ages SEC(".maps");

/* Run by st-record on one CPU (BPF_PROG_TEST_RUN): a quiet one at a drain, each at the end. */
SEC("raw_tp")
int flush_stage(void *ctx)
{
	struct stage *s = this_stage();

	/* interrupted a probe on this CPU: the next drain flushes */
	if (!s || s->depth)
		return 0;
	s->depth = 1;
	barrier();
	flush(s);
	barrier();
	s->depth = 0;
	return 0;
}
