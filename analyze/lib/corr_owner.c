/* SPDX-License-Identifier: MIT */
/*
 * corr_owner.c - the I/O a queued bio belongs to: an ordered table of
 * rules (owner_rules, at the end), each for a case the events show, tried
 * in order; the first that names an I/O owns the bio.
 * A part of the correlator (corr_internal.h).
 */
#include "analyze/lib/corr_internal.h"

/*
 * Threads whose last bio's device is kept: past this many the table starts
 * again, so that it stays bounded by the threads of the moment.
 */
#define THREAD_DEVS_MAX 65536

/* Thread tid queued a bio on dev (the device a call of it that waits for a held-back bio uses). */
static void note_thread_dev(struct an_corr *c, uint32_t tid, uint32_t dev)
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
static uint32_t io_waiting_for(struct an_corr *c, const struct st_ev_block_bio *e)
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
 * Calls open at one sector that call_at_sector asks, newest first: a
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

/* ---- the rules ---------------------------------------------------------- */

/* What a rule is asked about: the bio queued, and the queueing thread's open call (io_of_thread). */
struct owner_ask {
	const struct st_ev_block_bio *e;
	uint32_t thread_io;
};

/*
 * A read or write of a raw block device lies at its call's offset: the
 * queueing thread's own call at this bio's sector, without a bio yet, owns
 * it. Asked first, it spares the next rule's look-up for most bios, and
 * of two calls at one offset it keeps each thread's bio with its own call.
 */
static uint32_t own_call_at_sector(struct an_corr *c, const struct owner_ask *a)
{
	uint32_t i = a->thread_io;

	if ((a->e->p.opf & ST_F_HELD) || i == AN_NONE || IO(c, i)->offset < 0 || IO(c, i)->nbios ||
	    (uint64_t)IO(c, i)->offset / 512 != a->e->p.sector)
		return AN_NONE;
	return i;
}

/*
 * A request is dispatched by whichever thread runs its queue (kblockd, or
 * another thread's call on the same device), not always by the thread that
 * queued it, and a stamped issue dates its bios' queueing in the thread that
 * dispatched it. A read or write of a raw block device lies at its call's
 * offset: a call open at this bio's sector that can take it
 * (raw_call_takes) owns it before the thread named. Of several (two jobs
 * reading one offset at once), the oldest: the first to enter queues first,
 * as a rule. (Measured: two fio jobs reading one loop device at once lost
 * 1-2 of 800 reads to kblockd or to each other in 3 of 6 runs; reading the
 * same offsets in the same order, 1 in about 4 runs, with only the newest
 * call at an offset known.)
 */
static uint32_t call_at_sector(struct an_corr *c, const struct owner_ask *a)
{
	uint32_t i, oldest = AN_NONE, asked = 0;

	if (a->e->p.opf & ST_F_HELD)
		return AN_NONE;
	i = get_sparse(&c->sys.by_sector, sector_key(a->e->p.sector));
	for (; i != AN_NONE && asked < RAW_OWNER_ASKS; i = IO(c, i)->sector_next, asked++)
		if (raw_call_takes(c, i, a->e))
			oldest = i;
	return oldest;
}

/*
 * A bio queued by a thread inside a data syscall (a file's read, write or
 * fsync) or right after its io_uring submission is that call's.
 */
static uint32_t thread_call(struct an_corr *c, const struct owner_ask *a)
{
	(void)c;
	return a->thread_io;
}

/* A bio queued by a thread inside io_submit is the iocb's being submitted (corr_aio.c). */
static uint32_t iocb_submitted(struct an_corr *c, const struct owner_ask *a)
{
	return corr_aio_owner(c, &a->e->h);
}

/* A bio blk-throttle held back belongs to the call that waits for it (io_waiting_for). */
static uint32_t held_call(struct an_corr *c, const struct owner_ask *a)
{
	return (a->e->p.opf & ST_F_HELD) ? io_waiting_for(c, a->e) : AN_NONE;
}

/*
 * A bio no call claims is an I/O of its own: writeback, the journal,
 * readahead of other threads, a recording without syscalls (`-e block`).
 */
static uint32_t own_io(struct an_corr *c, const struct owner_ask *a)
{
	return io_new(c, &a->e->h, 0);
}

/* The rules above, by name, for the table. */
enum owner_pick {
	OWN_CALL_AT_SECTOR, CALL_AT_SECTOR, THREAD_CALL, IOCB_SUBMITTED, HELD_CALL, OWN_IO,
};

struct owner_rule {
	const char *name;
	enum owner_pick pick;
	/*
	 * A held-back bio it picks tells the device of the thread that queued
	 * it (0: the throttle's worker queued it for another thread's call).
	 * Any other bio does.
	 */
	uint8_t held_thread_dev;
};

/*
 * Tried in order; the first to name an I/O owns the bio. A test each:
 * correlate.owner.* in tests/analyze/test_correlate.c.
 */
static const struct owner_rule owner_rules[] = {
	{ "the thread's own call at the bio's sector", OWN_CALL_AT_SECTOR, 1 },
	{ "a call open at the bio's sector", CALL_AT_SECTOR, 1 },
	{ "the thread's data syscall or io_uring request", THREAD_CALL, 1 },
	{ "the iocb io_submit is submitting", IOCB_SUBMITTED, 1 },
	{ "the oldest call waiting for a held-back bio", HELD_CALL, 0 },
	{ "an I/O of its own", OWN_IO, 0 },
};

#define OWNER_RULES (sizeof(owner_rules) / sizeof(owner_rules[0]))

/*
 * Rule `pick` asked. A switch rather than a pointer in the table: the
 * loop below, unrolled over the constant table, then runs each rule inline
 * (through a pointer, a call each: 0.8 % more instructions for st-analyze
 * of a libaio and io_uring recording, callgrind).
 */
static inline __attribute__((always_inline)) uint32_t
owner_rule_pick(struct an_corr *c, const struct owner_ask *a, enum owner_pick pick)
{
	switch (pick) {
	case OWN_CALL_AT_SECTOR:
		return own_call_at_sector(c, a);
	case CALL_AT_SECTOR:
		return call_at_sector(c, a);
	case THREAD_CALL:
		return thread_call(c, a);
	case IOCB_SUBMITTED:
		return iocb_submitted(c, a);
	case HELD_CALL:
		return held_call(c, a);
	case OWN_IO:
		return own_io(c, a);
	}
	return AN_NONE;
}

uint32_t corr_bio_owner(struct an_corr *c, const struct st_ev_block_bio *e, uint32_t thread_io)
{
	const struct owner_ask a = { e, thread_io };
	uint32_t owner = AN_NONE;
	unsigned r;

#pragma GCC unroll 8
	for (r = 0; r < OWNER_RULES; r++) {
		owner = owner_rule_pick(c, &a, owner_rules[r].pick);
		if (owner != AN_NONE)
			break;
	}
	if (!(e->p.opf & ST_F_HELD) || (r < OWNER_RULES && owner_rules[r].held_thread_dev))
		note_thread_dev(c, e->h.tid, e->p.dev);
	return owner;
}
