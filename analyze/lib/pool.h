/* SPDX-License-Identifier: MIT */
/*
 * pool.h - fixed-size entries addressed by index, for the analyzer's tables
 * of things in flight (an idmap gives the index of an identity's entry).
 *
 * Indices stay valid when a pool grows; pointers do not, so code fetches an
 * entry again after every an_pool_get. A freed entry's first u32 links the
 * free list: an entry type keeps nothing it needs while free there.
 */
#ifndef AN_POOL_H
#define AN_POOL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "analyze/lib/idmap.h"

struct an_pool {
	char *base;
	size_t esz;		/* entry size */
	uint32_t cap, used;	/* entries allocated, and handed out at least once */
	uint32_t free_head;	/* AN_NONE when no entry is free */
};

/* Entry i, as a pointer to type. */
#define AN_POOL_AT(p, type, i) ((type *)((p)->base + (size_t)(i) * (p)->esz))

void an_pool_init(struct an_pool *p, size_t esz);
void an_pool_free(struct an_pool *p);
/* Twice the entries, the new ones zeroed; -1 when out of memory. */
int an_pool_grow(struct an_pool *p);

/* A free entry's index (its content as last left), AN_NONE when out of memory. */
static inline uint32_t an_pool_get(struct an_pool *p)
{
	uint32_t i = p->free_head;

	if (i != AN_NONE) {
		p->free_head = *AN_POOL_AT(p, uint32_t, i);
		return i;
	}
	if (p->used == p->cap && an_pool_grow(p))
		return AN_NONE;
	return p->used++;
}

static inline void an_pool_put(struct an_pool *p, uint32_t i)
{
	*AN_POOL_AT(p, uint32_t, i) = p->free_head;
	p->free_head = i;
}

/*
 * Entry i zeroed, as for a new use. Its size is the pool's, not a constant
 * the compiler sees, so this is a call to the C library's memset (vector
 * stores) and not the `rep stos` GCC inlines for a constant size: for the
 * 400-byte struct an_io that one costs 59 instructions (callgrind counts
 * each repetition) and is slow to start.
 */
static inline void an_pool_zero(struct an_pool *p, uint32_t i)
{
	memset(AN_POOL_AT(p, char, i), 0, p->esz);
}

#endif /* AN_POOL_H */
