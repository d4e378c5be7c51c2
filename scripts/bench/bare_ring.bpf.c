// SPDX-License-Identifier: GPL-2.0
/*
 * bare_ring.bpf.c - the reference scripts/bench/overhead.sh measures next to
 * st-record: the least any ring-buffer tracer of the block layer does. Every
 * block tracepoint of st-record's `block` preset reserves a 32-byte record,
 * fills it (time, task, the tracepoint's first argument) and submits it
 * without waking the reader. No filter, no batching, no field decoding: what
 * this costs the workload is the floor under st-record's block overhead on
 * the machine the bench runs on.
 *
 * With --empty (bare-ring's option), only the two programs at the end are
 * loaded instead: they do nothing, at the two tracepoints st-record's `block`
 * preset runs per request. Their runs are the least any tracer of those two
 * events pays on this machine, whatever it records.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct record {
	__u64 ts;
	__u64 pid_tgid;
	__u64 object;		/* the bio, request or queue the tracepoint passes first */
	__u64 probe;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} records SEC(".maps");

__u64 dropped;			/* reservations that found the ring buffer full */

static __always_inline int emit(__u64 probe, void *object)
{
	struct record *r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);

	if (!r) {
		__sync_fetch_and_add(&dropped, 1);
		return 0;
	}
	r->ts = bpf_ktime_get_ns();
	r->pid_tgid = bpf_get_current_pid_tgid();
	r->object = (__u64)object;
	r->probe = probe;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

#define PROBE(name, n) \
	SEC("tp_btf/" #name) int BPF_PROG(name, void *object) { return emit(n, object); }

PROBE(block_bio_queue, 1)
PROBE(block_bio_backmerge, 2)
PROBE(block_bio_frontmerge, 3)
PROBE(block_getrq, 4)
PROBE(block_bio_complete, 5)
PROBE(block_split, 6)
PROBE(block_rq_insert, 7)
PROBE(block_rq_merge, 8)
PROBE(block_rq_requeue, 9)
PROBE(block_rq_issue, 10)
PROBE(block_rq_complete, 11)

/* Not loaded unless bare-ring --empty asks for them ("?": libbpf's autoload off). */
SEC("?tp_btf/block_rq_issue")
int BPF_PROG(empty_rq_issue)
{
	return 0;
}

SEC("?tp_btf/block_rq_complete")
int BPF_PROG(empty_rq_complete)
{
	return 0;
}
