/* SPDX-License-Identifier: MIT */
/*
 * idmap.h - map from a 64-bit identity (bio/request address, tid, io_uring
 * request) to a 32-bit index into one of the correlator's pools.
 *
 * Open addressing with linear probing and backward-shift deletion, so there
 * are no tombstones and lookups stay short however many inserts and removals
 * a long trace makes. Key 0 marks an empty slot: it is never stored (the
 * kernel never hands out a NULL identity; a key that may be 0, such as a
 * sector, is stored plus one), and an_idmap_get() of it is AN_NONE.
 */
#ifndef AN_IDMAP_H
#define AN_IDMAP_H

#include <stdint.h>
#include <stddef.h>

#define AN_NONE UINT32_MAX	/* "no index" in every pool reference */

struct an_idmap {
	uint64_t *keys;
	uint32_t *vals;
	size_t mask;		/* capacity - 1, capacity a power of two */
	size_t count;
};

int an_idmap_init(struct an_idmap *m, size_t capacity_hint);
void an_idmap_free(struct an_idmap *m);
/* Fibonacci hashing spreads kernel addresses, which share their low bits. */
static inline size_t an_idmap_slot(const struct an_idmap *m, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & m->mask;
}

/* The slot holding key, or the empty slot ending its probe run. */
static inline size_t an_idmap_slot_of(const struct an_idmap *m, uint64_t key)
{
	size_t i = an_idmap_slot(m, key);

	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & m->mask;
	return i;
}

/* Index stored for key, AN_NONE if absent. Inline: it runs for most events. */
static inline uint32_t an_idmap_get(const struct an_idmap *m, uint64_t key)
{
	size_t i = an_idmap_slot_of(m, key);

	return m->keys[i] ? m->vals[i] : AN_NONE;
}
/* What an_idmap_put() leaves out of line: the table doubled, then key put. */
int an_idmap_put_growing(struct an_idmap *m, uint64_t key, uint32_t val);
/* Empty slot i, which holds a key (the backward shift, out of line). */
void an_idmap_remove_at(struct an_idmap *m, size_t i);

/*
 * Insert or replace; 0 or -1 when out of memory. Inline, as the removals: a few per I/O.
 * Key 0 stores nothing: a hostile file's bio or tid 0, counted, grew the table for nothing.
 */
static inline int an_idmap_put(struct an_idmap *m, uint64_t key, uint32_t val)
{
	size_t i;

	if (!key)
		return 0;
	/* Keep the load factor under 1/2 so probe sequences stay short. */
	if ((m->count + 1) * 2 > m->mask + 1)
		return an_idmap_put_growing(m, key, val);
	i = an_idmap_slot_of(m, key);
	if (!m->keys[i])
		m->count++;
	m->keys[i] = key;
	m->vals[i] = val;
	return 0;
}

/*
 * an_idmap_remove_at() inline where no key follows slot i, the usual case
 * under a load of 1/2: no run to shift back, nothing but the slot to empty.
 */
static inline void an_idmap_empty_slot(struct an_idmap *m, size_t i)
{
	if (m->keys[(i + 1) & m->mask]) {
		an_idmap_remove_at(m, i);
		return;
	}
	m->keys[i] = 0;
	m->count--;
}

/* Remove key if present. */
static inline void an_idmap_del(struct an_idmap *m, uint64_t key)
{
	size_t i = an_idmap_slot_of(m, key);

	if (m->keys[i])
		an_idmap_empty_slot(m, i);
}

/* Remove key if it maps to val: an_idmap_get() == val then an_idmap_del() in one probe. */
static inline void an_idmap_del_if(struct an_idmap *m, uint64_t key, uint32_t val)
{
	size_t i = an_idmap_slot_of(m, key);

	if (m->keys[i] && m->vals[i] == val)
		an_idmap_empty_slot(m, i);
}
/* Remove every key, keeping the table's size. */
void an_idmap_clear(struct an_idmap *m);

#endif /* AN_IDMAP_H */
