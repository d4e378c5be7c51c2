/* SPDX-License-Identifier: MIT */
/*
 * corr_internal.h - what the correlator's files share (not an API).
 *
 * The correlator (correlate.h) is split by event family, the way btt keeps
 * each trace action in a file of its own:
 *   corr_core.c   the API: new/free, the dispatch of each event to its
 *                 family, the sweep of stale entries, the end;
 *   corr_io.c     the life of an I/O: the reap lists, the calls open at a
 *                 sector, handing a finished call's bios on;
 *   corr_sys.c    data syscalls and the file systems' events inside them;
 *   corr_aio.c    libaio: io_submit's iocbs, io_getevents' reaps;
 *   corr_uring.c  io_uring: submissions, completions, io_uring_enter's reaps;
 *   corr_owner.c  the ordered rules that name the I/O a queued bio belongs to;
 *   corr_bio.c    bios: queue, split, merge, allocation, completion, held;
 *   corr_rq.c     requests: insert, issue, merge, requeue, completion.
 * Calls go one way, no circle: corr_core.c calls the families, corr_rq.c
 * calls corr_bio.c, which calls corr_owner.c, which calls corr_aio.c; all
 * call corr_io.c, which calls none of them. The helpers every event's path
 * runs are inline here, as they were inline in one file: a call's saved
 * registers cost about what their bodies do.
 */
#ifndef AN_CORR_INTERNAL_H
#define AN_CORR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "analyze/lib/cause.h"
#include "analyze/lib/correlate.h"
#include "analyze/lib/idmap.h"
#include "analyze/lib/pool.h"

struct an_names;

struct bio_ent {
	uint32_t link;		/* free list */
	uint32_t io, io_gen;	/* owning I/O, valid while gen matches */
	uint32_t rq;		/* request it is chained to, AN_NONE before issue */
	uint32_t rq_next;	/* next bio of that request */
	uint32_t dev, nr_sector, opf;
	uint8_t merged;		/* joined a request that existed (count_merge) */
	uint8_t q_at_g;		/* queued at its request's allocation, no time of its own (AN_IO_Q_AT_G) */
	uint64_t bio, sector, queue_ts;
	uint64_t getrq_ts;	/* its request's allocation (bio_getrq), 0 none */
};

struct rq_ent {
	uint32_t link;
	uint32_t head;		/* first bio entry of the chain */
	uint32_t io, io_gen;	/* I/O of a request without bios */
	uint32_t dev, nr_sector, remaining, opf;
	uint16_t requeues;
	uint8_t requeued;	/* requeued since its last issue: it will be issued again */
	uint64_t rq, insert_ts, first_issue_ts, issue_ts;
	uint64_t data_done_ts;	/* data step of a flush sequence completed, bios not ended */
};

/*
 * A thread inside io_submit: each iocb it submits starts with an
 * iomap_dio_rw_begin, and the bios queued after it are that iocb's (libaio
 * has no per-request tracepoint).
 */
struct aio_ent {
	uint32_t link;
	uint32_t io, io_gen;	/* I/O of the current iocb, AN_NONE before its first bio */
	uint32_t fs_dev;
	uint64_t fs_begin, ino;	/* last iomap_dio_rw_begin, 0 none */
	int64_t pos;
	uint64_t cgroup;	/* the io_submit's task's, its iocbs' */
};

/*
 * Per device: the last bio queued (Q2Q), the last empty PREFLUSH bio
 * queued, whose flush the flush machinery issues from another thread,
 * and the last device flush the flush sequence completed: the requests
 * it served complete right after it, in the same context, without
 * being issued themselves.
 */
struct dev_ent {
	uint32_t dev;
	uint64_t last_queue;
	uint64_t flush_bio;
	uint64_t flush_insert, flush_issue, flush_complete;
	uint32_t open_fsyncs;	/* fsyncs of its file system in progress */
};

#define MAX_DEVS 256

/* corr_sys.c's: data syscalls. */
struct corr_sys {
	struct an_idmap by_tid;		/* tid -> I/O of its open data syscall */
	struct an_idmap by_sector;	/* sector_key(offset / 512) -> the newest open read or
					   write call at that offset; the others through
					   sector_next and sector_prev */
};

/* corr_uring.c's: io_uring. */
struct corr_uring {
	struct an_idmap by_tid;		/* tid -> io_uring I/O it submitted last */
	struct an_idmap by_req;		/* io_kiocb address -> I/O */
	struct an_idmap enter_tid;	/* tids seen in io_uring_enter: 1 in a call that only waits */
	struct an_idmap reap_by_tid;	/* tid -> newest of its I/Os whose CQE waits to be reaped */
};

/* corr_aio.c's: libaio. */
struct corr_aio {
	struct an_pool pool;		/* struct aio_ent */
	struct an_idmap by_tid;		/* tid -> pool entry while it is in io_submit */
	struct an_idmap getevents_tid;	/* tids in io_submit (0) or seen in io_getevents (1) */
	struct an_idmap reap_by_tid;	/* tid -> newest of its iocbs done, not yet returned by io_getevents */
};

/* corr_bio.c's: bios in flight. */
struct corr_bios {
	struct an_pool pool;		/* struct bio_ent */
	struct an_idmap map;		/* bio address -> pool entry */
};

/* corr_rq.c's: requests in flight. */
struct corr_rqs {
	struct an_pool pool;		/* struct rq_ent */
	struct an_idmap map;		/* request address -> pool entry */
};

/* corr_owner.c's: what the owner rules remember of threads. */
struct corr_owners {
	struct an_idmap dev_by_tid;	/* tid -> device of the last bio it queued (at most THREAD_DEVS_MAX) */
};

struct an_corr {
	struct an_pool ios;		/* struct an_io */
	struct corr_bios bio;
	struct corr_rqs rq;
	struct corr_aio aio;
	struct corr_sys sys;
	struct corr_uring uring;
	struct corr_owners own;
	struct dev_ent devs[MAX_DEVS];
	unsigned ndevs;
	uint32_t open_fsyncs;	/* the devices' open_fsyncs summed: 0 spares a completion their search */
	uint64_t stale_ns, last_ts, next_sweep;
	an_emit_fn emit;
	void *ctx;
	const struct an_names *names;	/* fd -> file as each I/O begins; NULL: none */
	struct an_causes *cause;		/* each I/O's causes; NULL: a recording without the why events */
	uint32_t cur_tid;		/* thread of the event being taken */
	int failed;
	int sweeping;		/* 1 while the sweep expires stale entries */
	struct an_corr_stats st;
};

#define IO(c, i)  AN_POOL_AT(&(c)->ios, struct an_io, i)
#define BIO(c, i) AN_POOL_AT(&(c)->bio.pool, struct bio_ent, i)
#define RQ(c, i)  AN_POOL_AT(&(c)->rq.pool, struct rq_ent, i)
#define AIO(c, i) AN_POOL_AT(&(c)->aio.pool, struct aio_ent, i)

/*
 * an_idmap_get() in the maps a recording may leave empty, asked for every
 * bio (the syscalls' of `-e block`, io_uring's, libaio's): the count answers
 * without a probe. Not for every map: in one that is seldom empty, the test
 * costs more than it spares.
 */
static inline uint32_t get_sparse(const struct an_idmap *m, uint64_t key)
{
	return m->count ? an_idmap_get(m, key) : AN_NONE;
}

static inline void put_map(struct an_corr *c, struct an_idmap *m, uint64_t key, uint32_t val)
{
	if (an_idmap_put(m, key, val))
		c->failed = 1;
}

static inline void set_min(uint64_t *slot, uint64_t ts)
{
	if (ts && (!*slot || ts < *slot))
		*slot = ts;
}

static inline void set_max(uint64_t *slot, uint64_t ts)
{
	if (ts > *slot)
		*slot = ts;
}

static inline uint8_t op_of_opf(uint32_t opf, uint32_t nr_sector)
{
	switch (opf & ST_OP_MASK) {
	case ST_OP_READ:
		return AN_OP_READ;
	case ST_OP_WRITE:
		/* An empty write carrying a preflush is how a flush bio looks. */
		return (!nr_sector && (opf & ST_F_PREFLUSH)) ? AN_OP_FLUSH : AN_OP_WRITE;
	case ST_OP_FLUSH:
		return AN_OP_FLUSH;
	case ST_OP_DISCARD:
	case ST_OP_SECURE_ERASE:
		return AN_OP_DISCARD;
	default:
		return AN_OP_OTHER;
	}
}

/* The entry of device dev, NULL when MAX_DEVS devices are known already (inline: once a bio). */
static inline struct dev_ent *dev_of(struct an_corr *c, uint32_t dev)
{
	unsigned d;

	for (d = 0; d < c->ndevs && c->devs[d].dev != dev; d++)
		;
	if (d == c->ndevs) {
		if (c->ndevs == MAX_DEVS)
			return NULL;
		c->ndevs++;
		memset(&c->devs[d], 0, sizeof(c->devs[d]));
		c->devs[d].dev = dev;
	}
	return &c->devs[d];
}

/* ---- corr_io.c: the life of an I/O ------------------------------------ */


/* Hold a finished I/O until its thread reaps it. */
void corr_reap_wait(struct an_corr *c, uint32_t i);
/* Take an I/O out of its thread's list of I/Os waiting for a reap (the end of the trace came first). */
void corr_reap_unlink(struct an_corr *c, uint32_t i);
/*
 * Thread tid has taken, at ts, every I/O on a reap list but the newest
 * `unread`: those are still waiting (reap lists run newest first, and
 * applications take completions in the order they were posted).
 */
void corr_reap_all_but(struct an_corr *c, struct an_idmap *list, uint32_t tid, uint64_t ts,
		       uint32_t unread);
/*
 * The calls open at one sector (their offset / 512), newest first: two
 * threads may read one offset of a raw device at once, and a bio dispatched
 * by a third belongs to the one of them still without a bio (corr_owner.c).
 */
static inline uint64_t sector_key(uint64_t sector)
{
	return sector + 1;	/* the first sector's key not 0, which no map holds */
}

void corr_sector_link(struct an_corr *c, uint32_t i);
void corr_sector_unlink(struct an_corr *c, uint32_t i);
/*
 * A syscall or io_uring request that ended while bios it queued are still in
 * flight: its bios go on as one I/O of their own.
 */
void corr_hand_off_bios(struct an_corr *c, uint32_t i);

/*
 * A new I/O begun by event h. Inline, as are io_finish, io_maybe_finish,
 * io_of_thread and rq_stamp_io: once on every I/O's path, where the call and
 * its saved registers cost about 25 instructions.
 */
static inline __attribute__((always_inline)) uint32_t
io_new(struct an_corr *c, const struct st_event_header *h, uint16_t flags)
{
	uint32_t i = an_pool_get(&c->ios);
	struct an_io *io;
	uint32_t gen;

	if (i == AN_NONE) {
		c->failed = 1;
		return AN_NONE;
	}
	gen = IO(c, i)->gen;
	an_pool_zero(&c->ios, i);
	io = IO(c, i);
	io->gen = gen;
	io->start = h->ts;
	io->pid = h->pid;
	io->tid = h->tid;
	io->fd = -1;
	io->offset = -1;
	io->q2q = UINT64_MAX;
	io->op = AN_OP_OTHER;
	io->flags = AN_IO_LIVE | flags;
	c->st.open_ios++;
	return i;
}

/* Hand the I/O to the consumer and recycle its entry. */
static inline __attribute__((always_inline)) void io_finish(struct an_corr *c, uint32_t i)
{
	struct an_io *io = IO(c, i);

	if (io->flags & AN_IO_SYSCALL) {
		an_idmap_del_if(&c->sys.by_tid, io->tid, i);
		if (io->flags & AN_IO_AT_SECTOR)
			corr_sector_unlink(c, i);
	}
	if (io->flags & AN_IO_URING) {
		an_idmap_del_if(&c->uring.by_tid, io->tid, i);
		an_idmap_del_if(&c->uring.by_req, io->uring_req, i);
	}
	if (io->flags & AN_IO_REAP_WAIT)
		corr_reap_unlink(c, i);
	if (io->flags & AN_IO_FSYNC_OPEN) {
		dev_of(c, io->fs_dev)->open_fsyncs--;
		c->open_fsyncs--;
	}
	if (io->pending)
		io->flags |= AN_IO_INCOMPLETE;
	/* without bios of its own (an fsync waiting for the journal) its file system's device */
	if (!io->dev)
		io->dev = io->fs_dev;
	if (io->flags & AN_IO_INCOMPLETE) {
		c->st.incomplete++;
		c->st.stale += c->sweeping;
	}
	c->st.ios++;
	if (c->cause) {
		uint64_t total = 0;
		int has_total = an_io_total(io, &total);

		an_cause_finish(c->cause, io, has_total, total);
	}
	io->flags &= (uint16_t)~AN_IO_LIVE;
	c->st.open_ios--;
	c->emit(c->ctx, io);
	io->gen++;
	an_pool_put(&c->ios, i);
}

/* Emit the I/O if nothing it waits for is left: its end, its bios, its reap. */
static inline __attribute__((always_inline)) void io_maybe_finish(struct an_corr *c, uint32_t i)
{
	struct an_io *io = IO(c, i);

	if (io->flags & (AN_IO_SYSCALL | AN_IO_URING)) {
		if (!(io->flags & AN_IO_DONE) || (io->flags & AN_IO_REAP_WAIT))
			return;
		if (io->pending)
			corr_hand_off_bios(c, i);
	} else if (io->pending || (io->flags & AN_IO_REAP_WAIT)) {
		return;
	} else if ((io->flags & AN_IO_AIO) && !io->ts[AN_TS_REAP] &&
		   an_idmap_get(&c->aio.getevents_tid, io->tid) != AN_NONE) {
		/* an iocb of a thread that reaps (or may reap) with io_getevents: held until one returns it */
		corr_reap_wait(c, i);
		return;
	}
	io_finish(c, i);
}

/*
 * One of I/O i's bios or requests ended: at `completed_at` in the current
 * thread (0: lost, so the I/O is incomplete), with `error`; the I/O is
 * emitted if that was the last thing it waited for.
 */
static inline __attribute__((always_inline)) void
io_part_end(struct an_corr *c, uint32_t i, uint64_t completed_at, int32_t error)
{
	struct an_io *io = IO(c, i);

	if (completed_at) {
		set_max(&io->ts[AN_TS_COMPLETE], completed_at);
		io->svc_tid = c->cur_tid;
	} else {
		io->flags |= AN_IO_INCOMPLETE;
	}
	if (error)
		io->flags |= AN_IO_ERROR;
	io->pending--;
	io_maybe_finish(c, i);
}

/* Thread context an event belongs to: its open syscall, else its io_uring I/O. */
static inline __attribute__((always_inline)) uint32_t
io_of_thread(struct an_corr *c, uint32_t tid)
{
	uint32_t i = get_sparse(&c->sys.by_tid, tid);

	if (i != AN_NONE)
		return i;
	i = get_sparse(&c->uring.by_tid, tid);
	if (i != AN_NONE && !(IO(c, i)->flags & AN_IO_DONE))
		return i;
	return AN_NONE;
}

/* Live I/O of a bio entry, AN_NONE when that I/O was already emitted. */
static inline uint32_t io_of_bio(struct an_corr *c, uint32_t b)
{
	struct bio_ent *be = BIO(c, b);

	if (be->io == AN_NONE || IO(c, be->io)->gen != be->io_gen)
		return AN_NONE;
	return be->io;
}

/* Copy the stage times of a request completed at `completed_at` (0: abandoned) into an I/O it carries. */
static inline __attribute__((always_inline)) void
rq_stamp_io(struct an_corr *c, uint32_t r, uint32_t i, uint64_t completed_at)
{
	struct rq_ent *re = RQ(c, r);
	struct an_io *io = IO(c, i);

	set_min(&io->ts[AN_TS_INSERT], re->insert_ts);
	set_min(&io->ts[AN_TS_ISSUE], re->issue_ts);
	io->requeues += re->requeues;
	io->requeue_ns += re->issue_ts - re->first_issue_ts;
	/* PREFLUSH/FUA data on a device that needs a post-flush: data done -> sequence done. */
	if (re->data_done_ts && completed_at) {
		set_min(&io->ts[AN_TS_FLUSH_BEGIN], re->data_done_ts);
		set_max(&io->ts[AN_TS_FLUSH_DONE], completed_at);
	}
}

/* An empty bio carrying a preflush: a device cache flush, what fsync sends. */
static inline int bio_is_flush(const struct bio_ent *be)
{
	return !be->nr_sector && (be->opf & ST_F_PREFLUSH);
}

/*
 * corr_bio.c's, inline here: a stamped issue, one per block I/O, tells them
 * too (corr_rq_issue_stamped).
 *
 * A bio's allocation and merge are kept on its entry and become its I/O's
 * when the bio ends (corr_bio_release): the I/O that owns the bio then, which a
 * call that returned before the issue handed it to (corr_hand_off_bios),
 * whenever they are read (a stamped issue, ST_CURSOR_STAMPED, tells them at
 * the issue). One dated before the bio's queueing is another bio's at that
 * address.
 */
static inline uint32_t bio_at(struct an_corr *c, uint64_t bio, uint64_t ts)
{
	uint32_t b = an_idmap_get(&c->bio.map, bio);

	return b != AN_NONE && ts >= BIO(c, b)->queue_ts ? b : AN_NONE;
}

/* Bio's request allocated at ts (block_getrq). */
static inline void bio_getrq(struct an_corr *c, uint64_t bio, uint64_t ts)
{
	uint32_t b = bio_at(c, bio, ts);

	if (b == AN_NONE)
		return;
	set_min(&BIO(c, b)->getrq_ts, ts);
	/*
	 * Queued at the very nanosecond of its allocation: the reader dated a
	 * queueing that neither a record nor the kernel's stamp gave (spec 11.2).
	 */
	if (BIO(c, b)->queue_ts == ts)
		BIO(c, b)->q_at_g = 1;
}

/* Bio entry b joined a request that existed: one merge, as diskstats counts them. */
static inline void count_merge(struct an_corr *c, uint32_t b)
{
	BIO(c, b)->merged = 1;
	c->st.merges++;
}

static inline void bio_merge(struct an_corr *c, uint64_t bio, uint64_t ts)
{
	uint32_t b = bio_at(c, bio, ts);

	if (b != AN_NONE)
		count_merge(c, b);
}

/* ---- the families' events, which corr_core.c hands them ---------------- */

/* corr_sys.c */
void corr_sys_enter(struct an_corr *c, const struct st_ev_sys_enter *e);
void corr_sys_exit(struct an_corr *c, const struct st_ev_sys_exit *e);
/* a file system's begin (done 0: iomap_dio_rw_begin, ext4_sync_file_enter...) or end */
void corr_fs_event(struct an_corr *c, const struct st_ev_fs_io *e, int done);

/* corr_aio.c */
void corr_aio_submit(struct an_corr *c, const struct st_event_header *h, int exit);
void corr_aio_getevents(struct an_corr *c, const struct st_event_header *h);
/*
 * The I/O a bio queued by a thread inside io_submit belongs to: the current
 * iocb's, AN_NONE when the thread is not in io_submit.
 */
uint32_t corr_aio_owner(struct an_corr *c, const struct st_event_header *h);

/* corr_uring.c */
void corr_uring_submit(struct an_corr *c, const struct st_ev_uring *e);
void corr_uring_complete(struct an_corr *c, const struct st_ev_uring *e);
void corr_uring_enter(struct an_corr *c, const struct st_event_header *h);

/* corr_owner.c */
/*
 * The I/O bio e, queued by a thread whose open call or io_uring request is
 * thread_io (io_of_thread; AN_NONE: none), belongs to: the first of the
 * owner rules to name one, a new I/O of its own at the end; AN_NONE only
 * when out of memory.
 */
uint32_t corr_bio_owner(struct an_corr *c, const struct st_ev_block_bio *e, uint32_t thread_io);

/* corr_bio.c */
void corr_bio_queue(struct an_corr *c, const struct st_ev_block_bio *e);
void corr_bio_split(struct an_corr *c, const struct st_ev_block_split *e);
void corr_bio_complete(struct an_corr *c, const struct st_ev_block_bio *e);
void corr_bio_held(struct an_corr *c, const struct st_ev_block_bio_held *e);
/* Forget a bio; `completed_at` 0 means it was lost (its I/O is incomplete). */
void corr_bio_release(struct an_corr *c, uint32_t b, uint64_t completed_at, int32_t error);

/* corr_rq.c */
void corr_rq_insert(struct an_corr *c, const struct st_ev_block_rq *e);
void corr_rq_issue(struct an_corr *c, const struct st_ev_block_rq_issue *e);
void corr_rq_issue_stamped(struct an_corr *c, const struct st_ev_block_rq_issue_stamped *e);
void corr_rq_requeue(struct an_corr *c, const struct st_ev_block_rq *e);
void corr_rq_merge(struct an_corr *c, const struct st_ev_block_rq *e);
void corr_rq_inode(struct an_corr *c, const struct st_ev_block_rq_inode *e);
void corr_rq_cgroup(struct an_corr *c, const struct st_ev_block_rq_cgroup *e);
void corr_rq_complete(struct an_corr *c, const struct st_ev_block_rq_complete *e);
/* Complete (completed_at != 0) or abandon a request with everything it carries. */
void corr_rq_release(struct an_corr *c, uint32_t r, uint64_t completed_at, int32_t error);

#endif /* AN_CORR_INTERNAL_H */
