/* SPDX-License-Identifier: MIT */
/*
 * corr_bio.c - bios: queue, split, merge, allocation, completion, held back.
 * A part of the correlator (corr_internal.h).
 */
#include <string.h>

#include "analyze/lib/corr_internal.h"

static uint64_t q2q_of(struct an_corr *c, uint32_t dev, uint64_t ts)
{
	struct dev_ent *d = dev_of(c, dev);
	uint64_t gap = UINT64_MAX;

	if (!d)
		return gap;
	if (d->last_queue && ts >= d->last_queue)
		gap = ts - d->last_queue;
	d->last_queue = ts;
	return gap;
}

static inline __attribute__((always_inline)) uint32_t
bio_new(struct an_corr *c, uint64_t bio, uint32_t io, uint64_t ts)
{
	uint32_t b = an_pool_get(&c->bio.pool);
	struct bio_ent *be;

	if (b == AN_NONE) {
		c->failed = 1;
		return AN_NONE;
	}
	be = BIO(c, b);
	memset(be, 0, sizeof(*be));
	be->bio = bio;
	be->io = io;
	be->io_gen = IO(c, io)->gen;
	be->rq = AN_NONE;
	be->rq_next = AN_NONE;
	be->queue_ts = ts;
	IO(c, io)->pending++;
	IO(c, io)->nbios++;
	put_map(c, &c->bio.map, bio, b);
	c->st.bios++;
	return b;
}

/*
 * A bio no task's syscall queued (a kernel thread's: jbd2's journal commit,
 * a kworker's writeback) completed on dev: fsyncs of that file system open
 * since before it was queued waited for it, as far as the events tell. A
 * bio of a known file (its request's block_rq_inode) is the writeback of
 * that file: the data of an fsync of the same file (wb), nothing an fsync
 * of another file waits for. A bio of no known file (the journal,
 * metadata) is the journal commit every open fsync waits for (jnl).
 */
static void fsyncs_waited_for(struct an_corr *c, const struct an_io *bio_io, uint32_t dev,
			      uint64_t queued, uint64_t done)
{
	struct dev_ent *d = dev_of(c, dev);
	uint32_t k;

	if (!d || !d->open_fsyncs)
		return;
	for (k = 0; k < c->ios.used; k++) {
		struct an_io *io = IO(c, k);

		if ((io->flags & (AN_IO_LIVE | AN_IO_FSYNC_OPEN | AN_IO_DONE)) !=
		    (AN_IO_LIVE | AN_IO_FSYNC_OPEN) || io->fs_dev != dev ||
		    io->ts[AN_TS_SYS_ENTER] > queued)
			continue;
		if (!bio_io->ino) {
			set_min(&io->ts[AN_TS_JNL_BEGIN], queued);
			set_max(&io->ts[AN_TS_JNL_DONE], done);
		} else if (bio_io->ino == io->ino && bio_io->fs_dev == io->fs_dev) {
			set_min(&io->ts[AN_TS_WB_BEGIN], queued);
			set_max(&io->ts[AN_TS_WB_DONE], done);
		}
	}
}

/* Where a new bio goes: its device, its sectors and its op flags. */
static void bio_place(struct bio_ent *be, uint32_t dev, uint64_t sector, uint32_t nr_sector,
		      uint32_t opf)
{
	be->dev = dev;
	be->sector = sector;
	be->nr_sector = nr_sector;
	be->opf = opf;
}

/* Forget a bio; `completed_at` 0 means it was lost (its I/O is incomplete). */
void corr_bio_release(struct an_corr *c, uint32_t b, uint64_t completed_at, int32_t error)
{
	struct bio_ent *be = BIO(c, b);
	uint32_t i = io_of_bio(c, b);
	uint64_t queue_ts = be->queue_ts, getrq_ts = be->getrq_ts;
	uint32_t dev = be->dev, opf = be->opf;
	int flush = bio_is_flush(be), merged = be->merged, q_at_g = be->q_at_g;

	an_idmap_del_if(&c->bio.map, be->bio, b);
	be->io = AN_NONE;
	an_pool_put(&c->bio.pool, b);
	if (i == AN_NONE)
		return;
	struct an_io *io = IO(c, i);

	set_min(&io->ts[AN_TS_GETRQ], getrq_ts);
	io->flags |= q_at_g ? AN_IO_Q_AT_G : 0;
	if (merged) {
		io->flags |= AN_IO_MERGED;
		io->merges++;
		io->read_merges += (opf & ST_OP_MASK) == ST_OP_READ;
		io->write_merges += (opf & ST_OP_MASK) == ST_OP_WRITE;
	}
	if (completed_at) {
		/* fsync's parts: its device flushes, and the data it wrote back */
		if (flush) {
			set_min(&io->ts[AN_TS_FLUSH_BEGIN], queue_ts);
			set_max(&io->ts[AN_TS_FLUSH_DONE], completed_at);
		} else if (io->op == AN_OP_FSYNC) {
			set_min(&io->ts[AN_TS_WB_BEGIN], queue_ts);
			set_max(&io->ts[AN_TS_WB_DONE], completed_at);
		}
		if (c->open_fsyncs && !(io->flags & (AN_IO_SYSCALL | AN_IO_URING)) &&
		    !io->ts[AN_TS_FS_BEGIN])
			fsyncs_waited_for(c, io, dev, queue_ts, completed_at);
	}
	io_part_end(c, i, completed_at, error);
}

/* Take a bio out of its request's chain (its request will never complete it). */
static void rq_unlink_bio(struct an_corr *c, uint32_t b)
{
	uint32_t *link = &RQ(c, BIO(c, b)->rq)->head;

	while (*link != AN_NONE && *link != b)
		link = &BIO(c, *link)->rq_next;
	if (*link == b)
		*link = BIO(c, b)->rq_next;
	BIO(c, b)->rq = AN_NONE;
}

void corr_bio_queue(struct an_corr *c, const struct st_ev_block_bio *e)
{
	uint32_t owner = io_of_thread(c, e->h.tid);
	uint32_t b = an_idmap_get(&c->bio.map, e->p.bio);
	struct dev_ent *d;
	struct an_io *io;

	if (b != AN_NONE) {
		uint32_t old = io_of_bio(c, b);

		/*
		 * The remainder of a split bio is queued again by its owner, in
		 * the same thread. Another thread's bio at the address is a new
		 * bio: the old one ended unseen (a bio of a request past the ones
		 * its issue names), and libaio's next iocb must not vanish into it.
		 */
		if (BIO(c, b)->rq == AN_NONE && old != AN_NONE &&
		    (owner == AN_NONE ? IO(c, old)->tid == e->h.tid : old == owner))
			return;
		/*
		 * Address reused: the old bio's completion was lost. Its request
		 * was still issued (btt counts its D): its I/O keeps those times.
		 */
		if (BIO(c, b)->rq != AN_NONE) {
			if (old != AN_NONE)
				rq_stamp_io(c, BIO(c, b)->rq, old, 0);
			rq_unlink_bio(c, b);
		}
		corr_bio_release(c, b, 0, 0);
	}
	/* the first of the owner rules (corr_owner.c) to name an I/O */
	owner = corr_bio_owner(c, e, owner);
	if (owner == AN_NONE)
		return;
	b = bio_new(c, e->p.bio, owner, e->h.ts);
	if (b == AN_NONE)
		return;
	bio_place(BIO(c, b), e->p.dev, e->p.sector, e->p.nr_sector, e->p.opf);
	if (bio_is_flush(BIO(c, b)) && (d = dev_of(c, e->p.dev)))
		d->flush_bio = e->p.bio;
	io = IO(c, owner);
	io->blk_bytes += (uint64_t)e->p.nr_sector * 512;
	if (!(io->flags & (AN_IO_SYSCALL | AN_IO_URING)))
		io->bytes = io->blk_bytes;
	if (io->ts[AN_TS_QUEUE])
		return;
	io->ts[AN_TS_QUEUE] = e->h.ts;
	io->dev = e->p.dev;
	io->sector = e->p.sector;
	io->opf = e->p.opf;
	io->q2q = q2q_of(c, e->p.dev, e->h.ts);
	if (!(io->flags & (AN_IO_SYSCALL | AN_IO_URING)) || io->op == AN_OP_OTHER)
		io->op = op_of_opf(e->p.opf, e->p.nr_sector);
}

void corr_bio_split(struct an_corr *c, const struct st_ev_block_split *e)
{
	uint32_t parent = an_idmap_get(&c->bio.map, e->p.parent), owner, b;

	if (parent == AN_NONE || an_idmap_get(&c->bio.map, e->p.bio) != AN_NONE)
		return;
	owner = io_of_bio(c, parent);
	if (owner == AN_NONE)
		return;
	b = bio_new(c, e->p.bio, owner, BIO(c, parent)->queue_ts);
	if (b == AN_NONE)
		return;
	bio_place(BIO(c, b), e->p.dev, e->p.sector, e->p.nr_sector, e->p.opf);
	IO(c, owner)->flags |= AN_IO_SPLIT;
	c->st.splits++;
}

/* bio-based devices (zram...): the bio completes without a request. */
void corr_bio_complete(struct an_corr *c, const struct st_ev_block_bio *e)
{
	uint32_t b = an_idmap_get(&c->bio.map, e->p.bio);

	if (b != AN_NONE && BIO(c, b)->rq == AN_NONE)
		corr_bio_release(c, b, e->h.ts, e->p.error);
}

/* The cgroup whose limit held a bio back (recorded right after its block_bio_queue). */
void corr_bio_held(struct an_corr *c, const struct st_ev_block_bio_held *e)
{
	uint32_t b = an_idmap_get(&c->bio.map, e->p.bio), i;

	if (b != AN_NONE && (i = io_of_bio(c, b)) != AN_NONE)
		IO(c, i)->blkcg = e->p.blkcg;
}
