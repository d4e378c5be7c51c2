/* SPDX-License-Identifier: MIT */
/*
 * stamped.h - a block_rq_issue_stamped (the `block` preset) is the
 * block_bio_queue, block_bio_backmerge (block_bio_frontmerge) and
 * block_getrq events it stands for (those the file does not hold already),
 * dated by its stamps, then a block_rq_issue, all in time order
 * (spec/sttrace-format.md, "Whole events"); or itself, its `stamped` word
 * telling the stages so dated (ST_CURSOR_STAMPED). stamped.c makes them;
 * what every record tells of the lives of bios and requests, which dates
 * them, is noted inline here.
 */
#ifndef STTRACE_STAMPED_H
#define STTRACE_STAMPED_H

#include "internal.h"
#include "reorder.h"

#define REQUEUED_MAX 64		/* requeued requests awaiting their issue; the oldest give way */
#define SEEN_SLOTS 1024	/* bios and requests remembered, a power of two; a collision forgets one */

/* A bio address and the time of the last event of its life: its queueing, its request's issue or completion. */
struct bio_seen {
	uint64_t bio, ts;
};

/*
 * A request's stored bios, from its stamped issue, for its completion; the
 * first of those past them (the request's address + 1) stands for them all.
 */
struct rq_seen {
	uint64_t rq, bios[ST_RQ_BIOS + 1];
	uint32_t nbios;		/* bios[] stored before bios[ST_RQ_BIOS]; those past them are 0 */
};

/* The stage events a stamped issue stands for: those the file lacks (st_stamped.stages). */
#define STAGE_QUEUE 1u		/* block_bio_queue */
#define STAGE_GETRQ 2u		/* block_getrq */
#define STAGE_MERGE 4u		/* block_bio_backmerge, block_bio_frontmerge */

/* What dates the stages of a file's stamped issues. */
struct st_stamped {
	unsigned stages;	/* STAGE_* */
	/* requests requeued and not issued again: their next issue stands for no stage event */
	uint64_t requeued[REQUEUED_MAX];
	unsigned nrequeued;
	/*
	 * Recent bio addresses: a freed bio's address is handed out again at
	 * once, and a request taken from a plug's cache carries the plug's
	 * cached clock as its allocation stamp, older than its bio may be. A
	 * bio's synthesized stages are dated no earlier than the end of its
	 * address's previous life (its request's completion), whose events
	 * would otherwise take them, nor than the bio's own queue record where
	 * the file has them (kernels before 6.18 stamp a bio just before it),
	 * before which its merge and allocation would find no bio.
	 */
	struct bio_seen bio_seen[SEEN_SLOTS];
	struct rq_seen rq_seen[SEEN_SLOTS];
};

/* A requeued request (rq_requeue) is issued again: remember it until then. */
void st_stamped_requeue(struct st_stamped *st, uint64_t rq);
/*
 * The events the stamped issue e stands for into ro, in time order; with
 * make 0 (ST_CURSOR_STAMPED, a file without queue events) the queue
 * events alone, then e as itself telling the allocation and the merges.
 * <0 out of memory.
 */
int st_stamped_stages(struct st_stamped *st, struct reorder *ro,
		      const struct st_ev_block_rq_issue_stamped *e, int make);
/* e as itself (ST_CURSOR_STAMPED, a file with queue events) written at out. */
const struct st_event_header *st_stamped_resolve(struct st_stamped *st,
						 const struct st_ev_block_rq_issue_stamped *e,
						 struct st_ev_block_rq_issue_stamped *out);

/* Fibonacci hashing spreads kernel addresses, which share their low bits. */
static inline size_t seen_slot(uint64_t addr)
{
	return (addr * 0x9e3779b97f4a7c15ull) >> 32 & (SEEN_SLOTS - 1);
}

static inline struct bio_seen *bio_seen_slot(struct st_stamped *st, uint64_t bio)
{
	return &st->bio_seen[seen_slot(bio)];
}

static inline void note_bio(struct st_stamped *st, uint64_t bio, uint64_t ts)
{
	if (bio)
		*bio_seen_slot(st, bio) = (struct bio_seen){ .bio = bio, .ts = ts };
}

/* A completion ends the lives of its request's bios (and of the bio it names, issued or not). */
static inline void note_complete(struct st_stamped *st, const struct st_ev_block_rq_complete *e)
{
	const struct rq_seen *r = &st->rq_seen[seen_slot(e->p.rq)];
	unsigned i;

	note_bio(st, e->p.bio, e->h.ts);
	if (r->rq != e->p.rq)
		return;
	for (i = 0; i < r->nbios; i++)
		note_bio(st, r->bios[i], e->h.ts);
	note_bio(st, r->bios[ST_RQ_BIOS], e->h.ts);
}

/*
 * What record h (made whole) tells of the lives of bios and requests, for
 * the stages dated later: a bio's queueing, a requeue, a completion.
 */
static inline void note_record(struct st_stamped *st, const struct st_event_header *h)
{
	switch (h->type) {
	case ST_EV_block_bio_queue:
		note_bio(st, ((const struct st_ev_block_bio *)h)->p.bio, h->ts);
		break;
	case ST_EV_block_rq_requeue:
		st_stamped_requeue(st, ((const struct st_ev_block_rq *)h)->p.rq);
		break;
	case ST_EV_block_rq_complete:
		note_complete(st, (const struct st_ev_block_rq_complete *)h);
		break;
	}
}

#endif /* STTRACE_STAMPED_H */
