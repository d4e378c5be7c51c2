// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring.bpf.c - the probes of io_uring requests: submitted and
 * completed, in each kernel's form of the tracepoints.
 */
#include "sttrace.bpf.h"
#include "stage.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* io_kiocb.flags and the SQE's flags: a registered file, its fd an index (bit 0 in every kernel). */
#define ST_REQ_F_FIXED_FILE	1u

/* With -d, the io_uring requests on what -d selects: their completion is recorded with them. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u8);
} dev_urings SEC(".maps");

/* fd -1: the kernel's tracepoint names none (before 5.19). */
static __always_inline int emit_uring_submit(__u64 ring, __u64 req, __u64 user_data, __u8 opcode,
					     __u32 flags, __s32 fd)
{
	struct st_ev_uring *e;

	if (!task_passes())
		return 0;
	if (filter_ndevs) {
		__u64 key = (__u64)req;
		__u8 one = 1;

		/* a registered file's index names no fd of the task, nor does a request without one: kept */
		if (!(flags & ST_REQ_F_FIXED_FILE) && fd >= 0 &&
		    !task_fd_dev_passes(current_task(), (unsigned int)fd))
			return 0;
		bpf_map_update_elem(&dev_urings, &key, &one, BPF_ANY);
	}
	e = RESERVE(uring, io_uring_submit_req);
	if (!e)
		return 0;
	e->p.ctx = ring;
	e->p.req = req;
	e->p.user_data = user_data;
	e->p.res = 0;
	e->p.opcode = opcode;
	e->p.flags = flags;
	e->p.fd = fd;
	/* the submitting task's, as a syscall's: io-wq workers that run it later are in it too */
	e->p.cgroup = bpf_get_current_cgroup_id();
	submit(e, sizeof(*e));
	return 0;
}

static __always_inline int uring_submit(const struct io_kiocb *req)
{
	return emit_uring_submit((__u64)req->ctx, (__u64)req, req->cqe.user_data, req->opcode,
				 (__u32)req->flags, req->cqe.fd);
}

SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(io_uring_submit_req, struct io_kiocb *req)
{
	return uring_submit(req);
}

/* Its name until 6.4, with the request as its first argument from 5.19 (record/probes.c picks it). */
SEC("tp_btf/io_uring_submit_sqe")
int BPF_PROG(io_uring_submit_req___sqe, struct io_kiocb *req)
{
	return uring_submit(req);
}

/*
 * Before 5.19 io_uring_complete named the ring and user_data but not the
 * request: each request in flight by its ring and user_data, from its submission.
 */
struct uring_key {
	__u64 ring, user_data;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_MAX_URING_INFLIGHT);
	__type(key, struct uring_key);
	__type(value, __u64);
} uring_reqs SEC(".maps");

/* Before 5.19: the ring and the request as untyped pointers, then the SQE's fields (no fd) */
SEC("tp_btf/io_uring_submit_sqe")
int BPF_PROG(io_uring_submit_req___ctx, void *ring, void *req, __u8 opcode, __u64 user_data, __u32 flags)
{
	struct uring_key k = { (__u64)ring, user_data };
	__u64 r = (__u64)req;

	if (task_passes())
		bpf_map_update_elem(&uring_reqs, &k, &r, BPF_ANY);
	return emit_uring_submit((__u64)ring, r, user_data, opcode, flags, -1);
}

SEC("tracepoint/io_uring/io_uring_complete")
int io_uring_complete(struct trace_event_raw_io_uring_complete *ctx)
{
	struct st_ev_uring *e;
	__u64 req = 0;

	if (!task_passes())
		return 0;
	if (bpf_core_field_exists(ctx->req)) {
		req = (__u64)ctx->req;
	} else {
		struct uring_key k = { (__u64)ctx->ctx, ctx->user_data };
		__u64 *r = bpf_map_lookup_elem(&uring_reqs, &k);

		req = r ? *r : 0;
		bpf_map_delete_elem(&uring_reqs, &k);
	}
	if (filter_ndevs && bpf_map_delete_elem(&dev_urings, &req))
		return 0;
	e = RESERVE(uring, io_uring_complete);
	if (!e)
		return 0;
	e->p.ctx = (__u64)ctx->ctx;
	e->p.req = req;
	e->p.user_data = ctx->user_data;
	e->p.res = ctx->res;
	e->p.opcode = 0;
	e->p.flags = ctx->cflags;
	e->p.fd = -1;
	e->p.cgroup = 0;
	submit(e, sizeof(*e));
	return 0;
}
