/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/idmap.h"

static int alloc_table(struct an_idmap *m, size_t capacity)
{
	m->keys = calloc(capacity, sizeof(*m->keys));
	m->vals = malloc(capacity * sizeof(*m->vals));
	if (!m->keys || !m->vals) {
		free(m->keys);
		free(m->vals);
		return -1;
	}
	m->mask = capacity - 1;
	m->count = 0;
	return 0;
}

int an_idmap_init(struct an_idmap *m, size_t capacity_hint)
{
	size_t cap = 64;

	while (cap < capacity_hint * 2)
		cap *= 2;
	return alloc_table(m, cap);
}

void an_idmap_free(struct an_idmap *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
}

/*
 * Cold and not inlined, so that an_idmap_put()'s fast path saves no
 * registers (inlined, even in a cold section, grow's loop made every put
 * push five).
 */
__attribute__((cold, noinline)) int an_idmap_put_growing(struct an_idmap *m, uint64_t key,
							  uint32_t val)
{
	struct an_idmap old = *m;
	size_t i;

	if (alloc_table(m, (old.mask + 1) * 2)) {
		*m = old;
		return -1;
	}
	for (i = 0; i <= old.mask; i++)
		if (old.keys[i])
			an_idmap_put(m, old.keys[i], old.vals[i]);
	an_idmap_free(&old);
	return an_idmap_put(m, key, val);
}

void an_idmap_remove_at(struct an_idmap *m, size_t i)
{
	size_t j = i, home;

	/* Backward shift: move later members of the probe run into the hole. */
	for (;;) {
		j = (j + 1) & m->mask;
		if (!m->keys[j])
			break;
		home = an_idmap_slot(m, m->keys[j]);
		/* Entry j may fill hole i only if its home is not in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->keys[i] = 0;
	m->count--;
}

void an_idmap_clear(struct an_idmap *m)
{
	memset(m->keys, 0, (m->mask + 1) * sizeof(*m->keys));
	m->count = 0;
}
