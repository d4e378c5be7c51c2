/* SPDX-License-Identifier: MIT */
/*
 * sttrace_bpf.h - limits shared by sttrace.bpf.c and st-record (not part of
 * the file format).
 */
#ifndef STTRACE_BPF_H
#define STTRACE_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define ST_MAX_FILTER_DEVS	64	/* -d: the disk and its partitions */
#define ST_MAX_TRACKED_TGIDS	65536	/* -p: the process and its descendants */
#define ST_MAX_MARKED_BIOS	65536	/* bios in flight that a filter marked */
#define ST_MAX_CHAIN_WALK	256	/* bios of a request counted at issue */
#define ST_MAX_UNMARK		32	/* bios of a request unmarked at completion */
#define ST_FLUSH_WAITERS	8	/* requests a device flush serves looked at for a mark */
#define ST_STAGE_BYTES		4096	/* a CPU's staged records go to the ring buffer past this */
#define ST_MAX_RECORD_BYTES	512	/* the largest record the probes emit */
#define ST_MAX_NESTING		3	/* probes interrupting a probe on one CPU (softirq, irq, NMI) */

/*
 * When a CPU staged its oldest record still waiting for the ring buffer
 * (bpf_ktime_get_ns(), 0: nothing staged); an array of one per possible CPU,
 * a cache line each, mapped by st-record. It runs the flush only on CPUs
 * whose records have waited a drain period, sparing busy CPUs (their
 * batches fill within microseconds) and idle ones an interrupt per drain.
 */
struct st_stage_age {
	__u64 since;
	__u8 pad[56];
};

#endif /* STTRACE_BPF_H */
