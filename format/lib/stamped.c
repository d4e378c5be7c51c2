/* SPDX-License-Identifier: MIT */
/* stamped.c - the stage events of stamped issues, dated (stamped.h). */
#include "stamped.h"

/* A bio event dated ts on behalf of the issue event e. */
static int push_bio(struct reorder *ro, const struct st_ev_block_rq_issue_stamped *e, uint16_t type,
		    uint64_t ts, uint64_t bio, uint64_t sector, uint32_t nr_sector)
{
	struct st_ev_block_bio b = {
		.h = e->h,
		.p = { .bio = bio, .sector = sector, .dev = e->p.dev, .nr_sector = nr_sector,
		       .opf = e->p.opf },
	};

	b.h.type = type;
	b.h.size = sizeof(b);
	b.h.ts = ts;
	return reorder_push(ro, &b.h);
}

/* A requeued request (rq_requeue) is issued again: remember it until then. */
void st_stamped_requeue(struct st_stamped *st, uint64_t rq)
{
	if (st->nrequeued == REQUEUED_MAX)
		memmove(st->requeued, st->requeued + 1, --st->nrequeued * sizeof(*st->requeued));
	st->requeued[st->nrequeued++] = rq;
}

/* Whether rq's issue is a requeued request's; forgets it. */
static int take_requeued(struct st_stamped *st, uint64_t rq)
{
	unsigned i;

	for (i = 0; i < st->nrequeued; i++)
		if (st->requeued[i] == rq) {
			st->requeued[i] = st->requeued[--st->nrequeued];
			return 1;
		}
	return 0;
}

/*
 * A stamped issue: its bios live at least until then, and until its
 * request completes. (Inline, as stage_first(): once per I/O, in either
 * reading of stamped issues; out of line they cost 0.3 % of the
 * instructions of st-analyze on a `-e block` recording.)
 */
static inline __attribute__((always_inline)) void
note_issue(struct st_stamped *st, const struct st_ev_block_rq_issue_stamped *e)
{
	struct rq_seen *r = &st->rq_seen[seen_slot(e->p.rq)];
	uint32_t n = e->p.nr_bios < ST_RQ_BIOS ? e->p.nr_bios : ST_RQ_BIOS, i;

	r->rq = e->p.rq;
	r->nbios = n;
	for (i = 0; i < n; i++) {
		r->bios[i] = e->p.bios[i];
		note_bio(st, r->bios[i], e->h.ts);
	}
	r->bios[ST_RQ_BIOS] = e->p.nr_bios > ST_RQ_BIOS ? e->p.rq + 1 : 0;
	note_bio(st, r->bios[ST_RQ_BIOS], e->h.ts);
}

/* t, or the last event seen of bio's address (its queueing, or its previous life's end) when later. */
static uint64_t after_previous_use(struct st_stamped *st, uint64_t bio, uint64_t t)
{
	const struct bio_seen *s = bio_seen_slot(st, bio);

	return s->bio == bio && s->ts > t ? s->ts : t;
}

/* The events a stamped issue stands for, as stage_first() and stage_dates() date them. */
struct stages {
	int again;		/* issued again after a requeue: it stands for no stage event */
	int queue, merge;	/* it stands for its bios' queue (merge) events */
	uint64_t g;		/* its request's allocation, 0 none stamped */
	uint64_t fallback;	/* an unstamped bio's queueing: the allocation stamped, else the issue */
	uint64_t q[ST_RQ_BIOS], at[ST_RQ_BIOS];	/* each stored bio's queueing and sector */
	uint32_t len[ST_RQ_BIOS];
	uint32_t n, first;	/* stored bios; the one that got the request */
	uint32_t rest;		/* bios past the stored ones, queued (and merged) at rest_q */
	uint64_t rest_q, rest_sector;
	uint32_t rest_left;	/* the sectors they share */
};

/*
 * What a stamped issue stands for, and which stored bio got the request
 * (the stamps' word: the earliest queued), dated from the stamps alone.
 */
static inline __attribute__((always_inline)) void
stage_first(struct st_stamped *st, const struct st_ev_block_rq_issue_stamped *e, struct stages *s)
{
	uint32_t i;

	s->again = take_requeued(st, e->p.rq);
	s->queue = (st->stages & STAGE_QUEUE) && !s->again;
	s->merge = (st->stages & STAGE_MERGE) && !s->again;
	s->g = e->p.stamped & ST_STAMPED_GETRQ ? e->h.ts - e->p.getrq_ago : 0;
	s->fallback = s->g ? s->g : e->h.ts;
	s->n = e->p.nr_bios < ST_RQ_BIOS ? e->p.nr_bios : ST_RQ_BIOS;
	s->first = 0;
	for (i = 0; i < s->n; i++) {
		s->q[i] = e->p.stamped & ST_STAMPED_QUEUE(i) ? e->h.ts - e->p.queue_ago[i] : s->fallback;
		if (s->q[i] < s->q[s->first])
			s->first = i;
	}
	/*
	 * A bio is dated no earlier than its address's previous life; the
	 * request was allocated for its first bio, so not before that bio was
	 * queued.
	 */
	if (s->n) {
		s->q[s->first] = after_previous_use(st, e->p.bios[s->first], s->q[s->first]);
		if (s->g && s->g < s->q[s->first])
			s->g = s->q[s->first];
	}
}

/* The other bios' dates, and the sectors of all, for the events made of them. */
static void stage_dates(struct st_stamped *st, const struct st_ev_block_rq_issue_stamped *e,
			struct stages *s)
{
	uint64_t sector = e->p.sector;
	uint32_t i, left = e->p.nr_sector;

	for (i = 0; i < s->n; i++) {
		s->len[i] = e->p.bio_sectors[i] < left ? e->p.bio_sectors[i] : left;
		s->at[i] = sector;
		sector += s->len[i];
		left -= s->len[i];
		if (i != s->first)
			s->q[i] = after_previous_use(st, e->p.bios[i], s->q[i]);
	}
	/*
	 * One the kernel kept no stamp for is dated no earlier than the one it
	 * follows in the chain (back merges append, front merges prepend): a
	 * bio dated later for its address dates those too.
	 */
	for (i = s->first + 1; i < s->n; i++)
		if (!(e->p.stamped & ST_STAMPED_QUEUE(i)) && s->q[i] < s->q[i - 1])
			s->q[i] = s->q[i - 1];
	for (i = s->first; i-- > 0;)
		if (!(e->p.stamped & ST_STAMPED_QUEUE(i)) && s->q[i] < s->q[i + 1])
			s->q[i] = s->q[i + 1];
	s->rest = s->queue && e->p.nr_bios > s->n ?
		  (e->p.nr_bios < ST_RQ_BIOS_COUNTED ? e->p.nr_bios : ST_RQ_BIOS_COUNTED) - s->n : 0;
	/* they joined the chain at its end, after the stored bios */
	s->rest_q = s->rest ? after_previous_use(st, e->p.rq + 1, s->fallback) : s->fallback;
	for (i = 0; s->rest && i < s->n; i++)
		if (s->q[i] > s->rest_q)
			s->rest_q = s->q[i];
	s->rest_sector = sector;
	s->rest_left = left;
}

/* When bio i of the stamped issue planned in s merged: at its queueing, unstamped at the issue. */
static uint64_t merge_date(const struct st_ev_block_rq_issue_stamped *e, const struct stages *s,
			   uint32_t i)
{
	return s->queue || e->p.stamped & ST_STAMPED_QUEUE(i) ? s->q[i] : e->h.ts;
}

/* Whether the stamped issue planned in s stands for a block_getrq. */
static int stands_for_getrq(const struct st_stamped *st, const struct stages *s)
{
	return (st->stages & STAGE_GETRQ) && !s->again && s->g && s->n;
}

/*
 * e as itself (ST_CURSOR_STAMPED) at out: its `stamped` word telling the
 * allocation and the stored bios' merges s plans, dated as the events
 * st_stamped_stages() makes of them (their dates in s: stage_dates() where merges
 * are told).
 */
static void tell_stages(const struct st_stamped *st, const struct st_ev_block_rq_issue_stamped *e,
			const struct stages *s, struct st_ev_block_rq_issue_stamped *out)
{
	uint32_t i;

	*out = *e;
	out->p.stamped = e->p.stamped & ~(ST_STAMPED_GETRQ | ST_STAMPED_RESOLVED);
	out->p.getrq_ago = 0;
	if (stands_for_getrq(st, s)) {
		out->p.stamped |= ST_STAMPED_GETRQ | ST_STAMPED_FIRST_BIO(s->first);
		out->p.getrq_ago = (uint32_t)(e->h.ts - s->g);
	}
	for (i = 0; s->merge && i < s->n; i++)
		if (i != s->first) {
			out->p.stamped |= ST_STAMPED_MERGED(i);
			out->p.queue_ago[i] = (uint32_t)(e->h.ts - merge_date(e, s, i));
		}
}

/*
 * The events the stamped issue e stands for, those the file lacks. Each
 * stored bio is queued at its stamp, or where the kernel kept none at the
 * request's allocation (G), or at the issue; the earliest queued got the
 * request, the others merged into it (a bio merges into a request that
 * exists) when they were queued. A file with recorded queue events but no
 * merge events (the block preset under -p or -- CMD, block-queue) has its
 * merges too: an unstamped bio's at the issue, the one time known to be
 * after its recorded queueing. The events come in the kernel's order,
 * which tools that match them by sector (btt, blktrace import) rely on
 * where times are equal: the first bio's Q, its G (the request as
 * allocated: that bio's sectors), then each other bio's Q and its merge,
 * at the request's end (M) or, before the first bio, at its start (F).
 * Bios past the stored ST_RQ_BIOS, when the file has no queue events (else
 * their addresses are not known), are queued and merged too, each one of
 * its own, so that merges are the kernel's (every bio of a request but its
 * first is one: a bio merged into it, or the first of a request merged
 * into it), at the allocation (or the issue) but not before the request's
 * previous completion nor before a stored bio: they joined the chain at
 * its end. Their lengths are not recorded: they share the rest of the
 * request evenly. Their addresses, the request's + 1 to + 252, lie inside
 * the request's own allocation (struct request and its driver's data, at
 * least 256 bytes): never a bio's, nor another request's.
 */
int st_stamped_stages(struct st_stamped *st, struct reorder *ro,
		      const struct st_ev_block_rq_issue_stamped *e, int make)
{
	struct stages s;
	uint64_t sector;
	uint32_t i, left;
	union {
		struct st_ev_block_rq_issue plain;
		struct st_ev_block_rq_issue_stamped told;
	} issue;
	int ret = 0;

	stage_first(st, e, &s);
	stage_dates(st, e, &s);
	note_issue(st, e);
	if (s.queue && s.n)
		ret |= push_bio(ro, e, ST_EV_block_bio_queue, s.q[s.first], e->p.bios[s.first],
				s.at[s.first], s.len[s.first]);
	if (make && stands_for_getrq(st, &s))
		ret |= push_bio(ro, e, ST_EV_block_getrq, s.g, e->p.bios[s.first], s.at[s.first],
				s.len[s.first]);
	for (i = 0; i < s.n && (s.queue || s.merge); i++) {
		uint64_t merged;

		if (i == s.first)
			continue;
		merged = merge_date(e, &s, i);
		if (s.queue)
			ret |= push_bio(ro, e, ST_EV_block_bio_queue, s.q[i], e->p.bios[i], s.at[i],
					s.len[i]);
		if (make && s.merge)
			ret |= push_bio(ro, e, i < s.first ? ST_EV_block_bio_frontmerge :
					ST_EV_block_bio_backmerge, merged, e->p.bios[i], s.at[i], s.len[i]);
	}
	sector = s.rest_sector;
	left = s.rest_left;
	for (i = 0; i < s.rest; i++) {
		uint32_t len_i = left / (s.rest - i);

		ret |= push_bio(ro, e, ST_EV_block_bio_queue, s.rest_q, e->p.rq + 1 + i, sector, len_i);
		if (s.merge)
			ret |= push_bio(ro, e, ST_EV_block_bio_backmerge, s.rest_q, e->p.rq + 1 + i,
					sector, len_i);
		sector += len_i;
		left -= len_i;
	}
	if (!make) {
		tell_stages(st, e, &s, &issue.told);
		return ret | reorder_push(ro, &issue.told.h);
	}
	memcpy(&issue.plain, e, sizeof(issue.plain));
	issue.plain.h.type = ST_EV_block_rq_issue;
	issue.plain.h.size = sizeof(issue.plain);
	return ret | reorder_push(ro, &issue.plain.h);
}

/*
 * A stamped issue as itself (ST_CURSOR_STAMPED), its `stamped` word the
 * events it stands for, dated as st_stamped_stages() dates them. A file read so
 * has its queue events (the mode's condition): only the allocation and
 * the merges are left, none after the issue (a bio's previous life ended
 * before it, in the file's time order).
 */
const struct st_event_header *st_stamped_resolve(struct st_stamped *st,
						     const struct st_ev_block_rq_issue_stamped *e,
						     struct st_ev_block_rq_issue_stamped *out)
{
	struct stages s;

	stage_first(st, e, &s);
	if (s.merge && s.n > 1)
		stage_dates(st, e, &s);
	note_issue(st, e);
	tell_stages(st, e, &s, out);
	return &out->h;
}
