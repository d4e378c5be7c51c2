/* SPDX-License-Identifier: MIT */
/*
 * corr_owner.c - the I/O a queued bio belongs to.
 * A part of the correlator (corr_internal.h).
 */
#include "analyze/lib/corr_internal.h"

/*
 * Threads whose last bio's device is kept: past this many the table starts
 * again, so that it stays bounded by the threads of the moment.
 */
#define THREAD_DEVS_MAX 65536

/* Thread tid queued a bio on dev (the device a call of it that waits for a held-back bio uses). */
void corr_note_thread_dev(struct an_corr *c, uint32_t tid, uint32_t dev)
{
	if (!tid || an_idmap_get(&c->own.dev_by_tid, tid) == dev)
		return;
	if (c->own.dev_by_tid.count >= THREAD_DEVS_MAX) {
		an_idmap_free(&c->own.dev_by_tid);
		if (an_idmap_init(&c->own.dev_by_tid, 256)) {
			c->failed = 1;
			return;
		}
	}
	put_map(c, &c->own.dev_by_tid, tid, dev);
}

/*
 * The I/O a bio blk-throttle held back belongs to (ST_F_HELD: the
 * throttle kept it in the task that submitted it, its worker queued it): the
 * oldest syscall or io_uring request of the same op still waiting without a
 * bio of its own, of a thread whose last bio was on the same device (not a
 * call waiting for a pipe or a socket: a trace without task filter has
 * those too). The throttle keeps a cgroup's bios in the order they came, so
 * of several waiting, the oldest is the one it lets go first. A thread whose
 * first bio the throttle held back is not known to use the device: that bio
 * stays an I/O of its own.
 */
uint32_t corr_io_waiting_for(struct an_corr *c, const struct st_ev_block_bio *e)
{
	uint8_t op = op_of_opf(e->p.opf, e->p.nr_sector);
	uint32_t k, oldest = AN_NONE;

	for (k = 0; k < c->ios.used; k++) {
		const struct an_io *io = IO(c, k);

		if ((io->flags & AN_IO_LIVE) && (io->flags & (AN_IO_SYSCALL | AN_IO_URING)) &&
		    !(io->flags & AN_IO_DONE) && !io->nbios && io->op == op &&
		    io->ts[AN_TS_SYS_ENTER] <= e->h.ts &&
		    an_idmap_get(&c->own.dev_by_tid, io->tid) == e->p.dev &&
		    (oldest == AN_NONE || io->ts[AN_TS_SYS_ENTER] < IO(c, oldest)->ts[AN_TS_SYS_ENTER]))
			oldest = k;
	}
	if (oldest != AN_NONE)
		IO(c, oldest)->ts[AN_TS_HELD_QUEUE] = e->h.ts;
	return oldest;
}

/*
 * Calls open at one sector that corr_raw_device_owner asks, newest first: a
 * hostile file's thousands of calls at one offset cost each bio no more.
 */
#define RAW_OWNER_ASKS 32

/* Whether the open call i at bio e's sector can own it: of its op, no bio yet, on its device. */
static int raw_call_takes(struct an_corr *c, uint32_t i, const struct st_ev_block_bio *e)
{
	const struct an_io *io = IO(c, i);
	uint32_t dev;

	if ((io->flags & AN_IO_DONE) || io->nbios || io->op != op_of_opf(e->p.opf, e->p.nr_sector) ||
	    io->ts[AN_TS_SYS_ENTER] > e->h.ts)
		return 0;
	dev = an_idmap_get(&c->own.dev_by_tid, io->tid);
	return dev == AN_NONE || dev == e->p.dev;
}

/*
 * A request is dispatched by whichever thread runs its queue (kblockd, or
 * another thread's call on the same device), not always by the thread that
 * queued it, and a stamped issue dates its bios' queueing in the thread that
 * dispatched it. A read or write of a raw block device lies at its call's
 * offset: a call open at this bio's sector that can take it
 * (raw_call_takes) owns it before the thread named, unless the named
 * thread's call is at that offset without a bio yet. Of several (two jobs
 * reading one offset at once), the oldest: the first to enter queues first,
 * as a rule. (Measured: two fio jobs reading one loop device at once lost
 * 1-2 of 800 reads to kblockd or to each other in 3 of 6 runs; reading the
 * same offsets in the same order, 1 in about 4 runs, with only the newest
 * call at an offset known.)
 */
uint32_t corr_raw_device_owner(struct an_corr *c, const struct st_ev_block_bio *e, uint32_t named)
{
	uint32_t i, oldest = AN_NONE, asked = 0;

	/* asked first, it spares the look-up for most bios */
	if (named != AN_NONE && IO(c, named)->offset >= 0 && !IO(c, named)->nbios &&
	    (uint64_t)IO(c, named)->offset / 512 == e->p.sector)
		return named;
	i = get_sparse(&c->sys.by_sector, sector_key(e->p.sector));
	for (; i != AN_NONE && asked < RAW_OWNER_ASKS; i = IO(c, i)->sector_next, asked++)
		if (raw_call_takes(c, i, e))
			oldest = i;
	return oldest != AN_NONE ? oldest : named;
}
