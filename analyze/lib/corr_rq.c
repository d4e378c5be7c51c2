/* SPDX-License-Identifier: MIT */
/*
 * corr_rq.c - requests: insert, issue, merge, requeue, inode, cgroup, completion.
 * A part of the correlator (corr_internal.h).
 */
#include <string.h>

#include "analyze/lib/corr_internal.h"

/* The request's entry: r (the rq_map's answer for it), or a new one when r is AN_NONE. */
static uint32_t rq_or_new(struct an_corr *c, const struct st_ev_block_rq *e, uint32_t r)
{
	struct rq_ent *re;

	if (r != AN_NONE)
		return r;
	r = an_pool_get(&c->rq.pool);
	if (r == AN_NONE) {
		c->failed = 1;
		return AN_NONE;
	}
	re = RQ(c, r);
	memset(re, 0, sizeof(*re));
	re->rq = e->p.rq;
	re->head = AN_NONE;
	re->io = AN_NONE;
	re->dev = e->p.dev;
	re->opf = e->p.opf;
	put_map(c, &c->rq.map, e->p.rq, r);
	return r;
}

static void rq_free(struct an_corr *c, uint32_t r);

/*
 * The entry of a request being inserted or issued. One issued before and
 * neither completed nor requeued since is the kernel reusing the request for
 * another I/O: the earlier completion event never came (this kernel skips
 * one now and then), so the I/Os it carried are incomplete, not completed
 * by the next one's completion.
 */
static uint32_t rq_for_dispatch(struct an_corr *c, const struct st_ev_block_rq *e)
{
	uint32_t r = an_idmap_get(&c->rq.map, e->p.rq);

	if (r != AN_NONE && RQ(c, r)->issue_ts && !RQ(c, r)->requeued) {
		c->st.missing_completions++;
		corr_rq_release(c, r, 0, 0);
		r = AN_NONE;
	}
	return rq_or_new(c, e, r);
}

void corr_rq_insert(struct an_corr *c, const struct st_ev_block_rq *e)
{
	uint32_t r = rq_for_dispatch(c, e);

	if (r != AN_NONE)
		set_min(&RQ(c, r)->insert_ts, e->h.ts);
}

static void rq_link_bio(struct an_corr *c, uint32_t r, uint32_t b)
{
	BIO(c, b)->rq = r;
	BIO(c, b)->rq_next = RQ(c, r)->head;
	RQ(c, r)->head = b;
}

/*
 * Bios past the ST_RQ_BIOS recorded at issue: merged bios not yet chained
 * whose sectors lie inside the request. Rare (large merged requests), so a
 * scan of the bios in flight is fine.
 */
static unsigned rq_link_merged(struct an_corr *c, uint32_t r, uint64_t sector, uint32_t nr_sector)
{
	unsigned n = 0;
	uint32_t b;

	for (b = 0; b < c->bio.pool.used; b++) {
		struct bio_ent *be = BIO(c, b);

		if (be->io != AN_NONE && be->merged && be->rq == AN_NONE &&
		    be->dev == RQ(c, r)->dev && be->sector >= sector &&
		    be->sector + be->nr_sector <= sector + nr_sector) {
			rq_link_bio(c, r, b);
			n++;
		}
	}
	return n;
}

/*
 * A request merged into the one before it on the disk (block_rq_merge names
 * the one that goes): its bios join that request, which the kernel counts
 * as one merge, that of the bio the request was made for (the others
 * merged into it before). That bio is the one of its sectors and operation
 * chained to no request yet (bios are chained at issue) and not merged; it
 * is found by a scan of the bios in flight, as in rq_link_merged, and
 * flagged merged so that the issue of the request it joined chains it. The
 * request's own entry (from its insert) goes: its address is free for a
 * new request.
 */
void corr_rq_merge(struct an_corr *c, const struct st_ev_block_rq *e)
{
	uint32_t r = an_idmap_get(&c->rq.map, e->p.rq), b;

	for (b = 0; b < c->bio.pool.used; b++) {
		const struct bio_ent *be = BIO(c, b);

		if (be->io != AN_NONE && !be->merged && be->rq == AN_NONE &&
		    be->dev == e->p.dev && be->sector >= e->p.sector &&
		    be->sector + be->nr_sector <= e->p.sector + e->p.nr_sector &&
		    (be->opf & ST_OP_MASK) == (e->p.opf & ST_OP_MASK))
			break;
	}
	if (b < c->bio.pool.used)
		count_merge(c, b);
	else
		c->st.merges++;
	if (r != AN_NONE && !RQ(c, r)->issue_ts && RQ(c, r)->head == AN_NONE)
		rq_free(c, r);
}

/*
 * The flush I/O of the empty PREFLUSH bio waiting on the device that a flush
 * request issued at ts serves, AN_NONE if none: its request completes
 * unissued after this one (rq_complete_unissued), so the flush is that
 * task's one I/O. A bio of an fsync's I/O is not taken: the flush stays a
 * flush I/O of its own.
 */
static uint32_t flush_bio_io(struct an_corr *c, const struct st_ev_block_rq_issue *e)
{
	struct dev_ent *d = (e->p.opf & ST_OP_MASK) == ST_OP_FLUSH ? dev_of(c, e->p.dev) : NULL;
	uint32_t b = d && d->flush_bio ? an_idmap_get(&c->bio.map, d->flush_bio) : AN_NONE, i;

	if (b == AN_NONE || BIO(c, b)->rq != AN_NONE || !bio_is_flush(BIO(c, b)) ||
	    BIO(c, b)->queue_ts > e->h.ts || (i = io_of_bio(c, b)) == AN_NONE || IO(c, i)->op != AN_OP_FLUSH)
		return AN_NONE;
	d->flush_bio = 0;
	return i;
}

/* A request with no bios: a flush from the flush machinery, its own I/O. */
static void rq_adopt_bioless(struct an_corr *c, uint32_t r, const struct st_ev_block_rq_issue *e)
{
	uint32_t i = an_idmap_get(&c->sys.by_tid, e->h.tid);
	struct an_io *io;

	/* fsync -> flush: the flush issued by the syncing thread is part of it. */
	if (i == AN_NONE || IO(c, i)->op != AN_OP_FSYNC)
		i = flush_bio_io(c, e);
	if (i == AN_NONE) {
		i = io_new(c, &e->h, 0);
		if (i == AN_NONE)
			return;
		io = IO(c, i);
		io->dev = e->p.dev;
		io->sector = e->p.sector;
		io->opf = e->p.opf;
		io->op = op_of_opf(e->p.opf, e->p.nr_sector);
	}
	io = IO(c, i);
	io->pending++;
	RQ(c, r)->io = i;
	RQ(c, r)->io_gen = io->gen;
}

void corr_rq_issue(struct an_corr *c, const struct st_ev_block_rq_issue *e)
{
	uint32_t r = rq_for_dispatch(c, (const struct st_ev_block_rq *)e), n, i, known = 0;
	struct rq_ent *re;

	if (r == AN_NONE)
		return;
	re = RQ(c, r);
	re->requeued = 0;
	if (!re->first_issue_ts)
		re->first_issue_ts = e->h.ts;
	re->issue_ts = e->h.ts;
	re->nr_sector = e->p.nr_sector;
	re->remaining = e->p.nr_sector;
	re->opf = e->p.opf;
	n = e->p.nr_bios < ST_RQ_BIOS ? e->p.nr_bios : ST_RQ_BIOS;
	for (i = 0; i < n; i++) {
		uint32_t b = an_idmap_get(&c->bio.map, e->p.bios[i]);

		if (b == AN_NONE)
			continue;
		known++;
		if (BIO(c, b)->rq == AN_NONE)
			rq_link_bio(c, r, b);
	}
	if (e->p.nr_bios > ST_RQ_BIOS)
		known += rq_link_merged(c, r, e->p.sector, e->p.nr_sector);
	if (RQ(c, r)->head != AN_NONE || RQ(c, r)->io != AN_NONE)
		return;
	if (e->p.nr_bios == 0)
		rq_adopt_bioless(c, r, e);
	else if (!known)
		c->st.orphan_requests++;
}

/*
 * A stamped issue as the cursor resolves it (ST_CURSOR_STAMPED): the
 * allocation and merges it stands for, then the issue it extends. They
 * come later than their times: kept on their bios until the bios end
 * (bio_at), they count as they do in time order.
 */
void corr_rq_issue_stamped(struct an_corr *c, const struct st_ev_block_rq_issue_stamped *e)
{
	uint32_t i;

	if (e->p.stamped & ST_STAMPED_GETRQ)
		bio_getrq(c, e->p.bios[ST_STAMPED_FIRST(e->p.stamped)],
			  e->h.ts - e->p.getrq_ago);
	for (i = 0; e->p.stamped & ST_STAMPED_MERGED_ANY && i < ST_RQ_BIOS; i++)
		if (e->p.stamped & ST_STAMPED_MERGED(i))
			bio_merge(c, e->p.bios[i], e->h.ts - e->p.queue_ago[i]);
	corr_rq_issue(c, (const struct st_ev_block_rq_issue *)e);
}

/*
 * The file an issued request's page-cache data belongs to: its I/Os that no
 * syscall names (writeback, other threads' readahead) are that file's. A
 * request is named by its first page, so bios merged into it from another
 * file would be named wrongly; writeback merges a file's adjacent pages.
 */
void corr_rq_inode(struct an_corr *c, const struct st_ev_block_rq_inode *e)
{
	uint32_t r = an_idmap_get(&c->rq.map, e->p.rq), b;

	if (r == AN_NONE)
		return;
	for (b = RQ(c, r)->head; b != AN_NONE; b = BIO(c, b)->rq_next) {
		uint32_t i = io_of_bio(c, b);

		if (i != AN_NONE && IO(c, i)->fd < 0 && !IO(c, i)->ino) {
			IO(c, i)->ino = e->p.ino;
			IO(c, i)->fs_dev = e->p.dev;
		}
	}
}

/* The cgroup an issued request's I/O was charged to: its I/Os are that group's. */
void corr_rq_cgroup(struct an_corr *c, const struct st_ev_block_rq_cgroup *e)
{
	uint32_t r = an_idmap_get(&c->rq.map, e->p.rq), b, i;

	if (r == AN_NONE)
		return;
	for (b = RQ(c, r)->head; b != AN_NONE; b = BIO(c, b)->rq_next)
		if ((i = io_of_bio(c, b)) != AN_NONE)
			IO(c, i)->charged = e->p.blkcg;
	if ((i = RQ(c, r)->io) != AN_NONE && IO(c, i)->gen == RQ(c, r)->io_gen)
		IO(c, i)->charged = e->p.blkcg;
}

void corr_rq_requeue(struct an_corr *c, const struct st_ev_block_rq *e)
{
	uint32_t r = an_idmap_get(&c->rq.map, e->p.rq);

	if (r != AN_NONE) {
		RQ(c, r)->requeued = 1;
		RQ(c, r)->requeues++;
		c->st.requeues++;
	}
}

static void rq_free(struct an_corr *c, uint32_t r)
{
	an_idmap_del_if(&c->rq.map, RQ(c, r)->rq, r);
	RQ(c, r)->rq = 0;
	an_pool_put(&c->rq.pool, r);
}

/*
 * Complete (completed_at != 0) or abandon a request with everything it
 * carries. An abandoned request (its completion not in the trace) was still
 * inserted and issued when it was: its I/Os keep those times, so that they
 * count where btt counts every D (sizes, seeks).
 */
void corr_rq_release(struct an_corr *c, uint32_t r, uint64_t completed_at, int32_t error)
{
	uint32_t b = RQ(c, r)->head, i;
	struct dev_ent *d;

	if (completed_at && b == AN_NONE && (RQ(c, r)->opf & ST_F_FLUSH_SEQ) &&
	    (d = dev_of(c, RQ(c, r)->dev))) {
		d->flush_insert = RQ(c, r)->insert_ts;
		d->flush_issue = RQ(c, r)->issue_ts;
		d->flush_complete = completed_at;
	}

	while (b != AN_NONE) {
		uint32_t next = BIO(c, b)->rq_next;

		i = io_of_bio(c, b);
		if (i != AN_NONE)
			rq_stamp_io(c, r, i, completed_at);
		corr_bio_release(c, b, completed_at, error);
		b = next;
	}
	i = RQ(c, r)->io;
	if (i != AN_NONE && IO(c, i)->gen == RQ(c, r)->io_gen) {
		rq_stamp_io(c, r, i, completed_at);
		io_part_end(c, i, completed_at, error);
	}
	rq_free(c, r);
}

/*
 * A request completed without ever being issued, named by its bio: the flush
 * sequence ending an empty PREFLUSH bio's request right after the device
 * flush that served it, which completed just before in the same context and
 * gives it its insert and issue. Without the bio's queueing in the trace (a
 * stamped recording), the flush is its own I/O and this completion adds
 * nothing: it began in the trace, no orphan. 0 when it is not one of these.
 */
static int rq_complete_unissued(struct an_corr *c, const struct st_ev_block_rq_complete *e)
{
	uint32_t b = e->p.bio ? an_idmap_get(&c->bio.map, e->p.bio) : AN_NONE, i;
	struct dev_ent *d = e->p.bio ? dev_of(c, e->p.dev) : NULL;
	uint64_t queued;

	if (b == AN_NONE)
		return d && d->flush_complete && d->flush_complete <= e->h.ts && !e->p.nr_sector &&
		       (e->p.opf & ST_OP_MASK) != ST_OP_FLUSH;
	if (BIO(c, b)->rq != AN_NONE)
		return 0;
	i = io_of_bio(c, b);
	queued = BIO(c, b)->queue_ts;
	if (i != AN_NONE && d && d->flush_issue >= queued && d->flush_complete <= e->h.ts) {
		if (d->flush_insert >= queued)
			set_min(&IO(c, i)->ts[AN_TS_INSERT], d->flush_insert);
		set_min(&IO(c, i)->ts[AN_TS_ISSUE], d->flush_issue);
	}
	corr_bio_release(c, b, e->h.ts, e->p.error);
	return 1;
}

void corr_rq_complete(struct an_corr *c, const struct st_ev_block_rq_complete *e)
{
	uint32_t r = an_idmap_get(&c->rq.map, e->p.rq);
	struct rq_ent *re;

	if (r == AN_NONE && rq_complete_unissued(c, e))
		return;
	if (r == AN_NONE || !RQ(c, r)->issue_ts) {
		c->st.orphan_completions++;
		if (r != AN_NONE)
			corr_rq_release(c, r, 0, 0);
		return;
	}
	re = RQ(c, r);
	/* A data step of the flush sequence: its bios end when the sequence does. */
	if ((e->p.opf & ST_F_FLUSH_SEQ) && re->head != AN_NONE) {
		set_max(&re->data_done_ts, e->h.ts);
		return;
	}
	/* A partial completion leaves the request in flight. */
	if (e->p.nr_sector && e->p.nr_sector < re->remaining) {
		re->remaining -= e->p.nr_sector;
		return;
	}
	corr_rq_release(c, r, e->h.ts, e->p.error);
}
