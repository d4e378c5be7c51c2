/* SPDX-License-Identifier: MIT */
/*
 * corr_aio.c - libaio: the iocbs io_submit submits, io_getevents' reaps.
 * A part of the correlator (corr_internal.h).
 */
#include <string.h>

#include "analyze/lib/corr_internal.h"

/*
 * A thread that submits iocbs is expected to reap them with io_getevents:
 * its iocbs are held for that from the first io_submit on (the kernel keeps
 * their events in order, so one not held would shift which iocbs a return
 * hands over). A thread that piled up AIO_UNREAPED_MAX without ever calling
 * io_getevents has another thread reap them: they go out without a reap.
 */
#define AIO_UNREAPED_MAX 1024

static void aio_expect_reap(struct an_corr *c, uint32_t tid)
{
	uint32_t n = 0, i = an_idmap_get(&c->aio.reap_by_tid, tid);

	if (an_idmap_get(&c->aio.getevents_tid, tid) == 1)
		return;
	for (; i != AN_NONE && n < AIO_UNREAPED_MAX; i = IO(c, i)->reap_next)
		n++;
	if (n < AIO_UNREAPED_MAX) {
		put_map(c, &c->aio.getevents_tid, tid, 0);
		return;
	}
	an_idmap_del(&c->aio.getevents_tid, tid);
	for (i = an_idmap_get(&c->aio.reap_by_tid, tid); i != AN_NONE;
	     i = an_idmap_get(&c->aio.reap_by_tid, tid))
		io_finish(c, i);
}

void corr_aio_submit(struct an_corr *c, const struct st_event_header *h, int exit)
{
	uint32_t a = an_idmap_get(&c->aio.by_tid, h->tid);

	if (!exit)
		aio_expect_reap(c, h->tid);

	if (exit) {
		if (a != AN_NONE) {
			an_idmap_del(&c->aio.by_tid, h->tid);
			an_pool_put(&c->aio.pool, a);
		}
		return;
	}
	if (a == AN_NONE) {
		a = an_pool_get(&c->aio.pool);
		if (a == AN_NONE) {
			c->failed = 1;
			return;
		}
		put_map(c, &c->aio.by_tid, h->tid, a);
	}
	memset(AIO(c, a), 0, sizeof(struct aio_ent));
	AIO(c, a)->io = AN_NONE;
	AIO(c, a)->cgroup = ((const struct st_ev_sys_enter *)h)->p.cgroup;
}

/*
 * The I/O a bio queued by a thread inside io_submit belongs to: the current
 * iocb's (made at its first bio, starting at its iomap_dio_rw_begin), or
 * AN_NONE when the thread is not in io_submit.
 */
uint32_t corr_aio_owner(struct an_corr *c, const struct st_event_header *h)
{
	uint32_t a = get_sparse(&c->aio.by_tid, h->tid), i;
	struct aio_ent *ae;
	struct an_io *io;

	if (a == AN_NONE || !AIO(c, a)->fs_begin)
		return AN_NONE;
	ae = AIO(c, a);
	if (ae->io != AN_NONE && IO(c, ae->io)->gen == ae->io_gen && (IO(c, ae->io)->flags & AN_IO_LIVE))
		return ae->io;
	i = io_new(c, h, AN_IO_AIO);
	if (i == AN_NONE)
		return AN_NONE;
	ae = AIO(c, a);
	io = IO(c, i);
	io->start = ae->fs_begin;
	io->ts[AN_TS_FS_BEGIN] = ae->fs_begin;
	io->ino = ae->ino;
	io->fs_dev = ae->fs_dev;
	io->offset = ae->pos;
	io->cgroup = ae->cgroup;
	ae->io = i;
	ae->io_gen = io->gen;
	return i;
}

/*
 * io_getevents: its entry marks a thread that reaps its iocbs so; its return
 * of n events hands over the n oldest iocbs done (the kernel's completion
 * ring is in completion order).
 */
void corr_aio_getevents(struct an_corr *c, const struct st_event_header *h)
{
	uint32_t done = 0, i;
	int64_t ret;

	if (h->type == ST_EV_sys_enter_io_getevents) {
		put_map(c, &c->aio.getevents_tid, h->tid, 1);
		return;
	}
	ret = ((const struct st_ev_sys_exit *)h)->p.ret;
	if (ret <= 0)
		return;
	for (i = an_idmap_get(&c->aio.reap_by_tid, h->tid); i != AN_NONE; i = IO(c, i)->reap_next)
		done++;
	corr_reap_all_but(c, &c->aio.reap_by_tid, h->tid, h->ts, done > ret ? done - (uint32_t)ret : 0);
}
