/* SPDX-License-Identifier: MIT */
/* compact.c - compact completions made whole from their requests' issues (compact.h). */
#include <stdlib.h>

#include "compact.h"

/* Fibonacci hashing spreads kernel addresses, which share their low bits. */
static size_t issued_home(const struct issued *is, uint64_t rq)
{
	return (size_t)((rq * 0x9e3779b97f4a7c15ull) >> 32) & is->mask;
}

void st_issued_free(struct issued *is)
{
	free(is->tab);
	*is = (struct issued){ 0 };
}

/* Request rq's entry, NULL when it has none. */
static struct issued_rq *issued_find(const struct issued *is, uint64_t rq)
{
	size_t i;

	if (!is->tab || !rq)
		return NULL;
	for (i = issued_home(is, rq); is->tab[i].rq; i = (i + 1) & is->mask)
		if (is->tab[i].rq == rq)
			return &is->tab[i];
	return NULL;
}

/* Twice the entries (2048 at first): the load stays under a half. */
static __attribute__((cold)) int issued_grow(struct issued *is)
{
	struct issued old = *is;
	size_t cap = old.tab ? (old.mask + 1) * 2 : 2048, i;

	if (!(is->tab = calloc(cap, sizeof(*is->tab)))) {
		*is = old;
		return -1;
	}
	is->mask = cap - 1;
	for (i = 0; old.tab && i <= old.mask; i++) {
		size_t k;

		if (!old.tab[i].rq)
			continue;
		for (k = issued_home(is, old.tab[i].rq); is->tab[k].rq; k = (k + 1) & is->mask)
			;
		is->tab[k] = old.tab[i];
	}
	free(old.tab);
	return 0;
}

/*
 * Request rq's entry (rq != 0), a new one when it has none, for the caller
 * to write whole (rq first: until then a new one reads as free); NULL when
 * out of memory. One probe finds it or the free entry a new one takes,
 * unless the table must grow first.
 */
static struct issued_rq *issued_entry(struct issued *is, uint64_t rq)
{
	size_t i;

	if (!is->tab && issued_grow(is))
		return NULL;
	for (i = issued_home(is, rq); is->tab[i].rq; i = (i + 1) & is->mask)
		if (is->tab[i].rq == rq)
			return &is->tab[i];
	if ((is->count + 1) * 2 > is->mask + 1) {
		if (issued_grow(is))
			return NULL;
		for (i = issued_home(is, rq); is->tab[i].rq; i = (i + 1) & is->mask)
			;
	}
	is->count++;
	return &is->tab[i];
}

/* Forget entry r: later members of its probe run move back into the hole. */
static void issued_del(struct issued *is, struct issued_rq *r)
{
	size_t i = (size_t)(r - is->tab), j = i, home;

	for (;;) {
		j = (j + 1) & is->mask;
		if (!is->tab[j].rq)
			break;
		home = issued_home(is, is->tab[j].rq);
		/* Entry j may fill hole i only if its home is not in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			is->tab[i] = is->tab[j];
			i = j;
		}
	}
	is->tab[i].rq = 0;
	is->count--;
}

int st_issued_note(struct issued *is, const struct st_ev_block_rq_issue *e)
{
	struct issued_rq *r;

	/* a NULL request is no kernel's: its completion finds no issue */
	if (!e->p.rq)
		return 0;
	if (!(r = issued_entry(is, e->p.rq)))
		return -1;
	*r = (struct issued_rq){ .rq = e->p.rq, .sector = e->p.sector,
				 .bio = e->p.nr_bios ? e->p.bios[0] : 0,
				 .dev = e->p.dev, .opf = e->p.opf & ~ST_F_FLUSH_SEQ,
				 .bytes = e->p.bytes };
	return 0;
}

const struct st_event_header *st_issued_complete(struct issued *is,
						 const struct st_ev_block_rq_complete_compact *e,
						 struct st_ev_block_rq_complete *c)
{
	struct issued_rq *r = issued_find(is, e->p.rq);

	*c = (struct st_ev_block_rq_complete){ .h = e->h };
	c->h.type = ST_EV_block_rq_complete;
	c->h.size = sizeof(*c);
	c->p.rq = e->p.rq;
	c->p.dev = e->p.dev;
	c->p.bytes = e->p.bytes;
	c->p.nr_sector = e->p.bytes >> 9;
	c->p.error = e->p.error;
	if (r) {
		c->p.sector = r->bytes ? r->sector + (r->done >> 9) : 0;
		c->p.opf = r->opf;
		c->p.bio = r->bio;
		r->done += e->p.bytes;
		if (r->done >= r->bytes)
			issued_del(is, r);
	}
	return &c->h;
}
