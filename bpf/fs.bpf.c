// SPDX-License-Identifier: GPL-2.0
/*
 * fs.bpf.c - the probes of file systems: iomap's direct I/O, ext4's and
 * xfs's fsync.
 */
#include "sttrace.bpf.h"
#include "stage.bpf.h"

char LICENSE[] SEC("license") = "GPL";

static __always_inline struct st_ev_fs_io *reserve_fs(__u16 type, __u32 dev)
{
	if (!fs_dev_passes(dev) || !task_passes())
		return NULL;
	return reserve(sizeof(struct st_ev_fs_io), type);
}

static __always_inline void fill_fs(struct st_fs_io *p, __u32 dev, __u64 ino, __s64 pos,
				    __u64 count, __s64 ret, __u32 flags)
{
	p->dev = dev;
	p->ino = ino;
	p->pos = pos;
	p->count = count;
	p->ret = ret;
	p->flags = flags;
}

SEC("tracepoint/iomap/iomap_dio_rw_begin")
int iomap_dio_rw_begin(struct trace_event_raw_iomap_dio_rw_begin *ctx)
{
	struct st_ev_fs_io *e = reserve_fs(ST_EV_iomap_dio_rw_begin, ctx->dev);

	if (!e)
		return 0;
	fill_fs(&e->p, ctx->dev, ctx->ino, ctx->pos, ctx->count, 0, ctx->ki_flags);
	submit(e, sizeof(*e));
	return 0;
}

SEC("tracepoint/iomap/iomap_dio_complete")
int iomap_dio_complete(struct trace_event_raw_iomap_dio_complete *ctx)
{
	struct st_ev_fs_io *e = reserve_fs(ST_EV_iomap_dio_complete, ctx->dev);

	if (!e)
		return 0;
	fill_fs(&e->p, ctx->dev, ctx->ino, ctx->pos, 0, ctx->error ? ctx->error : ctx->ret,
		ctx->ki_flags);
	submit(e, sizeof(*e));
	return 0;
}

/*
 * ext4 is a module on distributions' kernels, whose BTF libbpf reads only
 * from 5.11 (module BTF): its tracefs layouts, unchanged since 3.x.
 */
struct ext4_sync_file_enter_args {
	__u64 common;
	__u32 dev;
	__u64 ino;
	__u64 parent;
	__s32 datasync;
};

struct ext4_sync_file_exit_args {
	__u64 common;
	__u32 dev;
	__u64 ino;
	__s32 ret;
};

SEC("tracepoint/ext4/ext4_sync_file_enter")
int ext4_sync_file_enter(struct ext4_sync_file_enter_args *ctx)
{
	struct st_ev_fs_io *e = reserve_fs(ST_EV_ext4_sync_file_enter, ctx->dev);

	if (!e)
		return 0;
	fill_fs(&e->p, ctx->dev, ctx->ino, 0, 0, 0, ctx->datasync != 0);
	submit(e, sizeof(*e));
	return 0;
}

SEC("tracepoint/ext4/ext4_sync_file_exit")
int ext4_sync_file_exit(struct ext4_sync_file_exit_args *ctx)
{
	struct st_ev_fs_io *e = reserve_fs(ST_EV_ext4_sync_file_exit, ctx->dev);

	if (!e)
		return 0;
	fill_fs(&e->p, ctx->dev, ctx->ino, 0, 0, ctx->ret, 0);
	submit(e, sizeof(*e));
	return 0;
}

/* xfs is often a module whose BTF vmlinux.h lacks; this is its tracefs layout. */
struct xfs_file_fsync_args {
	__u64 common;
	__u32 dev;
	__u64 ino;
};

SEC("tracepoint/xfs/xfs_file_fsync")
int xfs_file_fsync(struct xfs_file_fsync_args *ctx)
{
	struct st_ev_fs_io *e = reserve_fs(ST_EV_xfs_file_fsync, ctx->dev);

	if (!e)
		return 0;
	fill_fs(&e->p, ctx->dev, ctx->ino, 0, 0, 0, 0);
	submit(e, sizeof(*e));
	return 0;
}
