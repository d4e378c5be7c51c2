/* SPDX-License-Identifier: MIT */
/*
 * whole.c - a file's records as whole events (st_cursor_open without
 * ST_CURSOR_RAW): what the cursor hands out when a program asks for events,
 * not for the records as stored. whole.c reads the stored records from the
 * source the cursor hands it (struct st_source, internal.h) and never
 * calls back into the cursor.
 *
 * Three things stand between a stored record and the event it is, each in
 * a file of its own:
 *   - its layout (adapt.c): a type whose stored layout differs from this
 *     build's is read into the built-in layout, a chunk at a time, as the
 *     cursor decodes it;
 *   - a block_rq_complete_compact is the block_rq_complete it stands for
 *     (compact.c);
 *   - a block_rq_issue_stamped is the stage events it stands for, then a
 *     block_rq_issue (stamped.c), all in time order through a window
 *     (reorder.c; spec/sttrace-format.md, "Whole events").
 * A file that needs none of them is read straight from the stored records.
 */
#include <stdlib.h>

#include "adapt.h"
#include "compact.h"
#include "reorder.h"
#include "stamped.h"

/*
 * st_whole.noted: a record that tells of bios and requests, handed out as
 * stored (NOTED_PASS) or as another event (NOTED_MAKE: a stamped issue, a
 * compact completion). With stamped issues resolved, a run of records that
 * pass goes out in one copy.
 */
#define NOTED_PASS 1
#define NOTED_MAKE 2

/* How a file's records are read: one way, from what it holds and the cursor's flags. */
enum whole_way {
	WAY_STORED,	/* in the stored order, compact completions made whole */
	/* through the window (reorder.h): a file with stamped issues */
	WAY_WINDOW,
	/*
	 * in the stored order, stamped issues as themselves
	 * (ST_CURSOR_STAMPED on a file with queue events and stamped issues)
	 */
	WAY_RESOLVED,
};

/* What a block_rq_issue_stamped becomes. */
enum stamped_as {
	STAMPED_DROPPED,	/* nothing: the file has block_rq_issue */
	STAMPED_STAGES,		/* the stage events it stands for, then a block_rq_issue */
	/*
	 * itself (ST_CURSOR_STAMPED), its `stamped` word telling the
	 * allocation and merges; in a file without queue events, through the
	 * window after the queue events made of it
	 */
	STAMPED_TOLD,
};

/* A cursor's whole-event state: one per cursor, from its open to its close. */
struct st_whole {
	struct st_reader *r;
	struct st_source src;	/* the stored records, in timestamp order */
	struct st_adapt adapt;
	enum whole_way way;
	enum stamped_as stamped_as;
	/*
	 * block_rq_complete_compact (the `block` preset): the file has them,
	 * each becomes the block_rq_complete it stands for, from its request's
	 * last issue (issued)
	 */
	uint8_t compact;
	const uint8_t *pending, *pending_end;	/* the rest of a run when st_whole_fill()'s buf filled */
	/*
	 * Type id -> NOTED_PASS or NOTED_MAKE for the records read through
	 * whole.c one at a time (requeues, issues, completions, queueings where
	 * stages are dated by them): the window takes the others a run at a
	 * time.
	 */
	uint8_t noted[ST_NUM_TYPE_IDS];
	struct reorder ro;
	struct st_stamped st;
	struct issued issued;
	/* the last event made here (a compact completion made whole, a stamped issue resolved) */
	uint64_t made[MAX_RECORD / 8];
};

int st_whole_adapts(const struct st_whole *w)
{
	return !w->adapt.plain;
}

int st_whole_adapt_chunk(const struct st_whole *w, struct st_chunk_buf *in,
			 struct st_chunk_buf *out, const char **why)
{
	return st_adapt_chunk(&w->adapt, in, out, why);
}

/* Events stored in r of the types that become built-in type id (footer or scan counts). */
static uint64_t stored_as(const struct st_reader *r, uint16_t id)
{
	const struct st_type *b = st_builtin_type(id);
	size_t k, ntypes = st_type_count(r);
	uint64_t n = 0;

	for (k = 0; b && k < ntypes; k++) {
		const struct st_type *t = st_type_at(r, k);

		if (!strcmp(t->name, b->name) && b->size <= MAX_RECORD)
			n += st_type_events(r, t->id);
	}
	return n;
}

/*
 * Which stage events the file's stamped issues stand for: those it lacks.
 * A live file's plan only ever gains stamped issues and compact
 * completions, as their first records arrive.
 */
static void plan_stamped(struct st_whole *w, int told)
{
	const struct st_reader *r = w->r;

	if (w->way == WAY_STORED && stored_as(r, ST_EV_block_rq_issue_stamped))
		w->way = WAY_WINDOW;
	w->stamped_as = stored_as(r, ST_EV_block_rq_issue) ? STAMPED_DROPPED :
			told ? STAMPED_TOLD : STAMPED_STAGES;
	w->st.stages = (stored_as(r, ST_EV_block_bio_queue) ? 0 : STAGE_QUEUE) |
		       (stored_as(r, ST_EV_block_getrq) ? 0 : STAGE_GETRQ) |
		       (stored_as(r, ST_EV_block_bio_backmerge) ||
			stored_as(r, ST_EV_block_bio_frontmerge) ? 0 : STAGE_MERGE);
	w->compact |= stored_as(r, ST_EV_block_rq_complete_compact) != 0;
	/* a bio's queue record dates its stages made here no earlier (bio_seen) */
	w->noted[ST_EV_block_bio_queue] =
		w->way != WAY_STORED && !(w->st.stages & STAGE_QUEUE) ? NOTED_PASS : 0;
}

uint64_t st_whole_events(const struct st_reader *r, uint16_t id)
{
	uint64_t n = stored_as(r, id);
	uint64_t stamped = stored_as(r, ST_EV_block_rq_issue) ? 0 :
			   stored_as(r, ST_EV_block_rq_issue_stamped);

	/*
	 * every stored bio queued, and one more for the rest of a longer chain:
	 * an estimate past that (each of its bios is queued)
	 */
	if (id == ST_EV_block_bio_queue && !n)
		n += stamped * (ST_RQ_BIOS + 1);
	if (id == ST_EV_block_getrq && !n)
		n += stamped;
	if (id == ST_EV_block_rq_issue)
		n += stamped;
	if (id == ST_EV_block_rq_complete)
		n += stored_as(r, ST_EV_block_rq_complete_compact);
	return n;
}

/* Issues noted, a compact completion made whole at out; NULL when out of memory. */
static inline const struct st_event_header *complete_whole(struct st_whole *w,
							  const struct st_event_header *h, void *out)
{
	switch (h->type) {
	case ST_EV_block_rq_issue:
	case ST_EV_block_rq_issue_stamped:
		return st_issued_note(&w->issued, (const struct st_ev_block_rq_issue *)h) ? NULL : h;
	case ST_EV_block_rq_complete_compact:
		return st_issued_complete(&w->issued, (const void *)h, out);
	}
	return h;
}

/* ---- the next whole event --------------------------------------------- */

/* The next event, compact completions made whole (the cursor adapted the layouts). */
static inline int raw_next(struct st_whole *w, const struct st_event_header **ev)
{
	int ret = w->src.next(w->src.ctx, ev);

	if (ret > 0 && w->compact && !(*ev = complete_whole(w, *ev, w->made)))
		return ST_ENOMEM;
	return ret;
}

/*
 * The next event of the file for the window: the first of those left
 * pending, else the cursor's; compact completions made whole.
 */
static inline __attribute__((always_inline)) int
reorder_read(struct st_whole *w, const struct st_event_header **h)
{
	struct reorder *ro = &w->ro;

	if (ro->pending < ro->pending_end) {
		*h = (const struct st_event_header *)ro->pending;
		ro->pending += (*h)->size;
		if (w->compact && !(*h = complete_whole(w, *h, w->made)))
			return ST_ENOMEM;
		return 1;
	}
	return raw_next(w, h);
}

/* Event h of the file into the window: the records it stands for held. */
static inline __attribute__((always_inline)) int reorder_take(struct st_whole *w,
							       const struct st_event_header *h)
{
	struct reorder *ro = &w->ro;

	if (h->ts > ro->newest)
		ro->newest = h->ts;
	note_record(&w->st, h);
	if (h->type != ST_EV_block_rq_issue_stamped ?
	    reorder_push(ro, h) :
	    w->stamped_as != STAMPED_DROPPED &&
	    st_stamped_stages(&w->st, ro, (const struct st_ev_block_rq_issue_stamped *)h,
			      w->stamped_as == STAMPED_STAGES))
		return ST_ENOMEM;
	return 0;
}

/*
 * Whether a record event h stands for may be dated before a held record
 * already due (and must go out after it): none can be earlier than h's
 * time, or for a stamped issue than its earliest stamp (st_stamped_stages() only
 * moves its times later), and due records are REORDER_NS before the
 * newest. A bound past the clock's end wraps: then it may.
 */
static inline int reorder_may_precede(const struct st_whole *w, const struct st_event_header *h)
{
	const struct st_ev_block_rq_issue_stamped *e = (const void *)h;
	uint64_t earliest = h->ts;
	unsigned i;

	if (w->ro.eager)
		return 1;
	if (h->type == ST_EV_block_rq_issue_stamped && w->stamped_as != STAMPED_DROPPED) {
		if (e->p.stamped & ST_STAMPED_GETRQ && e->h.ts - e->p.getrq_ago < earliest)
			earliest = e->h.ts - e->p.getrq_ago;
		for (i = 0; i < ST_RQ_BIOS && i < e->p.nr_bios; i++)
			if (e->p.stamped & ST_STAMPED_QUEUE(i) && e->h.ts - e->p.queue_ago[i] < earliest)
				earliest = e->h.ts - e->p.queue_ago[i];
	}
	return earliest + REORDER_NS <= w->ro.newest;
}

/*
 * A file with stamped issues read ahead until its earliest held record is
 * REORDER_NS older than the newest read: 1, or 0 at the end, <0 an error.
 */
static inline __attribute__((always_inline)) int reorder_fill(struct st_whole *w)
{
	struct reorder *ro = &w->ro;
	int ret = 1;

	while (!ro->held || ro->head + REORDER_NS > ro->newest) {
		const struct st_event_header *h;

		ret = reorder_read(w, &h);
		if (ret <= 0)
			break;
		if (reorder_take(w, h))
			return ST_ENOMEM;
	}
	return ret;
}

#define DRAIN_EVERY 256	/* events st_whole_fill() reads between copies of the due records */

/*
 * How many records from p on (before end, at most max) the window takes
 * as they are, in one copy into the FIFO, with *bytes their length and
 * *last_ts the last one's time. The caller found p's type not `noted`;
 * the run goes on while the types are not noted either, and no record is
 * within REORDER_NS of the clock's end (which makes the window eager). It
 * is empty when p is dated before the newest read (its record waits as a
 * late one). A run of the cursor's is in time order, so none of them waits
 * as late nor stands for a record dated before one due; their sizes
 * are multiples of 8 (the decoder checks the stored ones, the built-in
 * layouts are), so copied together they lie as st_cursor_fill() lays
 * them out.
 */
static inline __attribute__((always_inline)) unsigned
plain_run(const struct st_whole *w, const uint8_t *p, const uint8_t *end, unsigned max,
	  size_t *bytes, uint64_t *last_ts)
{
	const struct st_event_header *first = (const void *)p;
	const uint8_t *q = p + first->size;
	unsigned n = 1;

	if (!max || w->ro.eager || first->ts < w->ro.newest || first->ts < w->ro.fifo_newest ||
	    first->ts > UINT64_MAX - REORDER_NS)
		return 0;
	*last_ts = first->ts;
	while (q < end && n < max) {
		const struct st_event_header *h = (const void *)q;

		if (w->noted[h->type] || h->ts > UINT64_MAX - REORDER_NS)
			break;
		*last_ts = h->ts;
		q += h->size;
		n++;
	}
	*bytes = (size_t)(q - p);
	return n;
}

/*
 * st_whole_fill() of a file with stamped issues: the records due go out a
 * run at a time, after every DRAIN_EVERY events read, and before an event
 * that may stand for a record dated before them. Until then what is read
 * comes after them in time order, so they go out in the order
 * st_whole_next() gives. The cursor's records come a run at a time; those
 * that plain_run() finds go into the FIFO in one copy.
 */
static int reordered_fill(struct st_whole *w, uint8_t *buf, size_t cap,
			  size_t *used)
{
	struct reorder *ro = &w->ro;
	unsigned unread = DRAIN_EVERY;
	int ret;

	reorder_done(ro);
	for (;;) {
		const uint8_t *p = ro->pending, *end = ro->pending_end;

		ro->pending = ro->pending_end = NULL;
		if (p == end) {
			ret = w->src.run(w->src.ctx, &p, &end);
			if (ret < 0)
				return ret;
			/* the end: all held go out, at a live file's end only the due ones */
			if (!ret)
				return !st_reorder_drain(ro, !st_reader_live(w->r), buf, cap, used);
		}
		while (p < end) {
			const struct st_event_header *h = (const void *)p;
			size_t bytes;
			uint64_t last_ts;
			unsigned n;

			/* (none of them brings `unread` to 0: that one drains first) */
			if (!w->noted[h->type] && (n = plain_run(w, p, end, unread - 1, &bytes, &last_ts))) {
				if (fifo_put(ro, p, bytes, bytes, n, h->ts, last_ts))
					return ST_ENOMEM;
				ro->newest = last_ts;
				unread -= n;
				p += bytes;
				continue;
			}
			if (!--unread || reorder_may_precede(w, h)) {
				unread = DRAIN_EVERY;
				if (!st_reorder_drain(ro, 0, buf, cap, used)) {
					ro->pending = p;
					ro->pending_end = end;
					return 1;
				}
			}
			p += h->size;
			if (w->compact && !(h = complete_whole(w, h, w->made)))
				return ST_ENOMEM;
			if (reorder_take(w, h))
				return ST_ENOMEM;
		}
	}
}

/*
 * A NOTED_PASS record read with stamped issues resolved, handed out as
 * stored: what it tells noted, complete_whole()'s step (an issue's) or
 * note_record()'s, their types apart; <0 out of memory.
 */
static inline __attribute__((always_inline)) int
note_passed(struct st_whole *w, const struct st_event_header *h)
{
	if (h->type == ST_EV_block_rq_issue)
		return w->compact && st_issued_note(&w->issued, (const struct st_ev_block_rq_issue *)h) ?
		       ST_ENOMEM : 0;
	note_record(&w->st, h);
	return 0;
}

/*
 * A NOTED_MAKE record read with stamped issues resolved, written at out
 * (room for any built-in record) as the event to hand out: its bytes
 * there, 0 when it is left out (a stamped issue of a file with plain
 * ones), <0 out of memory. What complete_whole() and note_record() do
 * for its two types, each tested once.
 */
static inline __attribute__((always_inline)) int
resolve_made(struct st_whole *w, const struct st_event_header *h, uint8_t *out)
{
	if (h->type == ST_EV_block_rq_issue_stamped) {
		if (w->compact && st_issued_note(&w->issued, (const struct st_ev_block_rq_issue *)h))
			return ST_ENOMEM;
		if (w->stamped_as == STAMPED_DROPPED)
			return 0;
		h = st_stamped_resolve(&w->st, (const void *)h, (void *)out);
	} else if (w->compact) {
		h = st_issued_complete(&w->issued, (const void *)h, (void *)out);
		note_complete(&w->st, (const struct st_ev_block_rq_complete *)h);
	} else {
		/* a compact completion in a file whose counts have none: as stored */
		memcpy(out, h, h->size);
	}
	return (int)st_record_span(h);
}

/*
 * The next event with stamped issues resolved (ST_CURSOR_STAMPED), in the
 * stored time order: the rest of a run resolved_fill() left, then the cursor's.
 */
static int resolved_next(struct st_whole *w, const struct st_event_header **ev)
{
	int ret;

	for (;;) {
		if (w->pending < w->pending_end) {
			*ev = (const struct st_event_header *)w->pending;
			w->pending += (*ev)->size;
		} else if ((ret = w->src.next(w->src.ctx, ev)) <= 0) {
			return ret;
		}
		if (w->noted[(*ev)->type] != NOTED_MAKE)
			return w->noted[(*ev)->type] && note_passed(w, *ev) ? ST_ENOMEM : 1;
		ret = resolve_made(w, *ev, (uint8_t *)w->made);
		if (ret < 0)
			return ret;
		if (ret) {
			*ev = (const struct st_event_header *)w->made;
			return 1;
		}
	}
}

/*
 * The records of a run from *p to end into buf from *used on
 * (resolved_fill()), *p moved past those that went in: those that pass as
 * stored a copy for each stretch of them (what the NOTED_PASS ones tell
 * noted on the way), a NOTED_MAKE one written as resolved when there is
 * room for any (MAX_RECORD: it is handled once). 0, or <0 out of memory.
 */
static int resolve_run(struct st_whole *w, const uint8_t **p, const uint8_t *end, uint8_t *buf,
		       size_t cap, size_t *used)
{
	const uint8_t *q = *p, *run = q;	/* run to q: records passed, not copied yet */
	size_t at = *used;
	size_t room = cap - at;	/* what buf has left past run to q: one test a record */
	int made, err = 0;

	while (q < end) {
		const struct st_event_header *h = (const void *)q;

		if (w->noted[h->type] != NOTED_MAKE) {
			/*
			 * Stored sizes are multiples of 8: records copied together
			 * lie as filled.
			 */
			if (h->size > room || (w->noted[h->type] && (err = note_passed(w, h))))
				break;
			room -= h->size;
			q += h->size;
			continue;
		}
		if (q > run) {
			memcpy(buf + at, run, (size_t)(q - run));
			at += (size_t)(q - run);
		}
		run = q;
		if (room < MAX_RECORD)
			break;
		if ((made = resolve_made(w, h, buf + at)) < 0) {
			err = made;
			break;
		}
		at += (size_t)made;
		room -= (size_t)made;
		q += h->size;
		run = q;
	}
	if (q > run) {
		memcpy(buf + at, run, (size_t)(q - run));
		at += (size_t)(q - run);
	}
	*used = at;
	*p = q;
	return err;
}

/*
 * st_whole_fill() with stamped issues resolved: the cursor's runs through
 * resolve_run(). What did not fit waits in pending. Out of line (once a
 * fill), so that its loop and the window's are compiled each on its own.
 */
static __attribute__((noinline)) int resolved_fill(struct st_whole *w,
						   uint8_t *buf, size_t cap, size_t *used)
{
	const uint8_t *p = w->pending, *end = w->pending_end;
	int ret;

	w->pending = w->pending_end = NULL;
	for (;;) {
		if (p == end && (ret = w->src.run(w->src.ctx, &p, &end)) <= 0)
			return ret;
		if ((ret = resolve_run(w, &p, end, buf, cap, used)))
			return ret;
		if (p < end) {
			w->pending = p;
			w->pending_end = end;
			return 1;
		}
	}
}

/* The next event of a file with stamped issues: read ahead REORDER_NS, in time order. */
static inline __attribute__((always_inline)) int
reordered_next(struct st_whole *w, const struct st_event_header **ev)
{
	struct reorder *ro = &w->ro;
	int ret;

	reorder_done(ro);
	ret = reorder_fill(w);
	if (ret < 0)
		return ret;
	/* a live file's next events may still come before the held ones */
	if (!ro->held || (!ret && st_reader_live(w->r)))
		return 0;
	*ev = reorder_pop(ro);
	return 1;
}

static inline __attribute__((always_inline)) int
whole_next(struct st_whole *w, const struct st_event_header **ev)
{
	switch (w->way) {
	case WAY_RESOLVED:
		return resolved_next(w, ev);
	case WAY_WINDOW:
		return reordered_next(w, ev);
	default:
		return raw_next(w, ev);
	}
}

int st_whole_next(struct st_whole *w, const struct st_event_header **ev)
{
	return whole_next(w, ev);
}

int st_whole_fill(struct st_whole *w, uint8_t *buf, size_t cap, size_t *used,
		  const struct st_event_header **left)
{
	const struct st_event_header *ev;
	int ret;

	if (w->way == WAY_RESOLVED)
		return resolved_fill(w, buf, cap, used);
	if (w->way == WAY_WINDOW)
		return reordered_fill(w, buf, cap, used);
	while ((ret = raw_next(w, &ev)) > 0)
		if (!st_fill_append(buf, cap, used, ev)) {
			*left = ev;
			break;
		}
	return ret;
}

int st_whole_busy(const struct st_whole *w)
{
	return !w->adapt.plain || w->way != WAY_STORED || w->compact;
}

int st_whole_open(struct st_reader *r, unsigned flags, const struct st_source *src,
		  struct st_whole **wp)
{
	struct st_whole *w = calloc(1, sizeof(*w));
	/* stamped issues as themselves: the cursor asks, and the file is whole */
	int told = (flags & ST_CURSOR_STAMPED) && !st_reader_live(r);

	*wp = w;
	if (!w)
		return ST_ENOMEM;
	w->r = r;
	w->src = *src;
	w->noted[ST_EV_block_rq_requeue] = w->noted[ST_EV_block_rq_issue] = NOTED_PASS;
	w->noted[ST_EV_block_rq_complete] = NOTED_PASS;
	w->noted[ST_EV_block_rq_issue_stamped] = w->noted[ST_EV_block_rq_complete_compact] = NOTED_MAKE;
	plan_stamped(w, told);
	if (told && w->way == WAY_WINDOW && !(w->st.stages & STAGE_QUEUE))
		w->way = WAY_RESOLVED;
	return st_adapt_plan(&w->adapt, r);
}

void st_whole_refresh(struct st_whole *w)
{
	plan_stamped(w, w->stamped_as == STAMPED_TOLD);
}

void st_whole_close(struct st_whole *w)
{
	if (!w)
		return;
	st_adapt_free(&w->adapt);
	st_reorder_free(&w->ro);
	st_issued_free(&w->issued);
	free(w);
}
