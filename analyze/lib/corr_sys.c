/* SPDX-License-Identifier: MIT */
/*
 * corr_sys.c - data syscalls (read, write, pread64..., fsync) and the file
 * systems' events inside them.
 * A part of the correlator (corr_internal.h).
 */
#include "analyze/lib/corr_internal.h"
#include "analyze/lib/names.h"

static uint8_t op_of_syscall(uint16_t enter_type)
{
	switch (enter_type) {
	case ST_EV_sys_enter_read: case ST_EV_sys_enter_pread64: case ST_EV_sys_enter_readv:
	case ST_EV_sys_enter_preadv: case ST_EV_sys_enter_preadv2:
		return AN_OP_READ;
	case ST_EV_sys_enter_write: case ST_EV_sys_enter_pwrite64: case ST_EV_sys_enter_writev:
	case ST_EV_sys_enter_pwritev: case ST_EV_sys_enter_pwritev2:
		return AN_OP_WRITE;
	default:
		return AN_OP_FSYNC;
	}
}

void corr_sys_enter(struct an_corr *c, const struct st_ev_sys_enter *e)
{
	uint32_t old = an_idmap_get(&c->sys.by_tid, e->h.tid), i;
	struct an_io *io;

	if (old != AN_NONE) {
		/* Its exit was lost: the thread cannot be in two syscalls. */
		IO(c, old)->flags |= AN_IO_INCOMPLETE | AN_IO_DONE;
		io_maybe_finish(c, old);
		if (an_idmap_get(&c->sys.by_tid, e->h.tid) == old)
			an_idmap_del(&c->sys.by_tid, e->h.tid);
	}
	i = io_new(c, &e->h, AN_IO_SYSCALL);
	if (i == AN_NONE)
		return;
	io = IO(c, i);
	io->ts[AN_TS_SYS_ENTER] = e->h.ts;
	io->syscall = e->h.type;
	io->op = op_of_syscall(e->h.type);
	io->fd = (int32_t)e->p.fd;
	if (c->names)
		io->file = an_names_fd_file(c->names, e->h.pid, e->p.fd);
	io->offset = e->p.offset;
	io->cgroup = e->p.cgroup;
	io->run_delay_enter = e->p.run_delay;
	put_map(c, &c->sys.by_tid, e->h.tid, i);
	if (io->op != AN_OP_FSYNC && e->p.offset >= 0 && e->p.offset % 512 == 0)
		corr_sector_link(c, i);
}

void corr_sys_exit(struct an_corr *c, const struct st_ev_sys_exit *e)
{
	uint32_t i = an_idmap_get(&c->sys.by_tid, e->h.tid);
	struct an_io *io;

	if (i == AN_NONE || IO(c, i)->syscall + 1 != e->h.type) {
		c->st.orphan_exits++;
		return;
	}
	/* a call is never held for a reap: io_maybe_finish ends it, io_finish unmaps it */
	io = IO(c, i);
	io->ts[AN_TS_SYS_EXIT] = e->h.ts;
	io->ret = e->p.ret;
	io->run_delay_exit = e->p.run_delay;
	io->flags |= AN_IO_DONE;
	if (e->p.ret < 0)
		io->flags |= AN_IO_ERROR;
	io->bytes = io->op == AN_OP_FSYNC ? io->blk_bytes : e->p.ret > 0 ? (uint64_t)e->p.ret : 0;
	io_maybe_finish(c, i);
}

void corr_fs_event(struct an_corr *c, const struct st_ev_fs_io *e, int done)
{
	uint32_t i = io_of_thread(c, e->h.tid), a;
	struct dev_ent *d;
	struct an_io *io;

	if (i == AN_NONE) {
		/* a new iocb of io_submit */
		a = an_idmap_get(&c->aio.by_tid, e->h.tid);
		if (a != AN_NONE && !done && e->h.type == ST_EV_iomap_dio_rw_begin) {
			AIO(c, a)->io = AN_NONE;
			AIO(c, a)->fs_begin = e->h.ts;
			AIO(c, a)->ino = e->p.ino;
			AIO(c, a)->fs_dev = e->p.dev;
			AIO(c, a)->pos = e->p.pos;
		}
		return;
	}
	io = IO(c, i);
	if (done) {
		set_max(&io->ts[AN_TS_FS_DONE], e->h.ts);
		return;
	}
	set_min(&io->ts[AN_TS_FS_BEGIN], e->h.ts);
	io->ino = e->p.ino;
	io->fs_dev = e->p.dev;
	if (io->op == AN_OP_FSYNC && !(io->flags & AN_IO_FSYNC_OPEN) && (d = dev_of(c, io->fs_dev))) {
		d->open_fsyncs++;
		c->open_fsyncs++;
		io->flags |= AN_IO_FSYNC_OPEN;
	}
	if (io->offset < 0)
		io->offset = e->p.pos;
}
