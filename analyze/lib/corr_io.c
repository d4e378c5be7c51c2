/* SPDX-License-Identifier: MIT */
/*
 * corr_io.c - the life of an I/O: the devices, the reap lists, the calls open
 * at a sector, the bios a finished call leaves in flight.
 * A part of the correlator (corr_internal.h).
 */
#include <string.h>

#include "analyze/lib/corr_internal.h"

/*
 * Per thread, the I/Os the application can take and has not taken yet, newest
 * first (linked through reap_next): io_uring requests whose CQE is posted,
 * libaio iocbs done and not yet returned by io_getevents.
 */
static struct an_idmap *reap_list(struct an_corr *c, const struct an_io *io)
{
	return io->flags & AN_IO_AIO ? &c->aio.reap_by_tid : &c->uring.reap_by_tid;
}

/* Hold a finished I/O until its thread reaps it. */
void corr_reap_wait(struct an_corr *c, uint32_t i)
{
	struct an_io *io = IO(c, i);
	struct an_idmap *list = reap_list(c, io);

	io->flags |= AN_IO_REAP_WAIT;
	io->reap_next = an_idmap_get(list, io->tid);
	put_map(c, list, io->tid, i);
}

/* Take an I/O out of its thread's list of I/Os waiting for a reap (the end of the trace came first). */
void corr_reap_unlink(struct an_corr *c, uint32_t i)
{
	struct an_idmap *list = reap_list(c, IO(c, i));
	uint32_t tid = IO(c, i)->tid, head = an_idmap_get(list, tid), k;

	if (head == i) {
		if (IO(c, i)->reap_next == AN_NONE)
			an_idmap_del(list, tid);
		else
			put_map(c, list, tid, IO(c, i)->reap_next);
	} else {
		for (k = head; k != AN_NONE && IO(c, k)->reap_next != i; k = IO(c, k)->reap_next)
			;
		if (k != AN_NONE)
			IO(c, k)->reap_next = IO(c, i)->reap_next;
	}
	IO(c, i)->flags &= (uint16_t)~AN_IO_REAP_WAIT;
}

void corr_sector_link(struct an_corr *c, uint32_t i)
{
	struct an_io *io = IO(c, i);
	uint64_t key = sector_key((uint64_t)io->offset / 512);
	uint32_t newest = get_sparse(&c->sys.by_sector, key);

	if (newest != AN_NONE)
		IO(c, newest)->sector_prev = i;
	io->sector_next = newest;
	io->sector_prev = AN_NONE;
	io->flags |= AN_IO_AT_SECTOR;
	put_map(c, &c->sys.by_sector, key, i);
}

void corr_sector_unlink(struct an_corr *c, uint32_t i)
{
	const struct an_io *io = IO(c, i);
	uint64_t key = sector_key((uint64_t)io->offset / 512);

	if (io->sector_next != AN_NONE)
		IO(c, io->sector_next)->sector_prev = io->sector_prev;
	if (io->sector_prev != AN_NONE)
		IO(c, io->sector_prev)->sector_next = io->sector_next;
	else if (io->sector_next != AN_NONE)
		put_map(c, &c->sys.by_sector, key, io->sector_next);
	else
		an_idmap_del(&c->sys.by_sector, key);
}

/*
 * A syscall or io_uring request that ended while bios it queued are still in
 * flight (readahead, writeback it started, a flush whose completion did not
 * join): seen from start to end, it is complete without their block stages,
 * and the bios go on as one I/O of their own.
 */
void corr_hand_off_bios(struct an_corr *c, uint32_t i)
{
	uint32_t gen = IO(c, i)->gen, heir = AN_NONE, b;
	struct st_event_header h = { .pid = IO(c, i)->pid, .tid = IO(c, i)->tid };

	for (b = 0; b < c->bio.pool.used; b++) {
		struct bio_ent *be = BIO(c, b);
		struct an_io *io;

		if (be->io != i || be->io_gen != gen)
			continue;
		if (heir == AN_NONE) {
			h.ts = be->queue_ts;
			heir = io_new(c, &h, 0);
			if (heir == AN_NONE)
				break;
			io = IO(c, heir);
			io->dev = be->dev;
			io->sector = be->sector;
			io->opf = be->opf;
			io->op = op_of_opf(be->opf, be->nr_sector);
		}
		io = IO(c, heir);
		be->io = heir;
		be->io_gen = io->gen;
		set_min(&io->ts[AN_TS_QUEUE], be->queue_ts);
		io->start = io->ts[AN_TS_QUEUE];
		io->blk_bytes += (uint64_t)be->nr_sector * 512;
		io->bytes = io->blk_bytes;
		io->pending++;
		io->nbios++;
	}
	IO(c, i)->pending = 0;
	IO(c, i)->flags |= AN_IO_UNJOINED;
}

/*
 * Thread tid has taken, at ts, every I/O on a reap list but the newest
 * `unread`: those are still waiting (reap lists run newest first, and
 * applications take completions in the order they were posted).
 */
void corr_reap_all_but(struct an_corr *c, struct an_idmap *list, uint32_t tid, uint64_t ts,
			 uint32_t unread)
{
	uint32_t i = an_idmap_get(list, tid), newer = AN_NONE;

	for (; i != AN_NONE && unread; unread--) {
		newer = i;
		i = IO(c, i)->reap_next;
	}
	if (i == AN_NONE)
		return;
	if (newer == AN_NONE)
		an_idmap_del(list, tid);
	else
		IO(c, newer)->reap_next = AN_NONE;
	while (i != AN_NONE) {
		uint32_t next = IO(c, i)->reap_next;

		IO(c, i)->ts[AN_TS_REAP] = ts;
		IO(c, i)->flags &= (uint16_t)~AN_IO_REAP_WAIT;
		io_maybe_finish(c, i);
		i = next;
	}
}
