/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/pool.h"

void an_pool_init(struct an_pool *p, size_t esz)
{
	memset(p, 0, sizeof(*p));
	p->esz = esz;
	p->free_head = AN_NONE;
}

void an_pool_free(struct an_pool *p)
{
	free(p->base);
	an_pool_init(p, p->esz);
}

/* Cold: pools reach their size early. */
__attribute__((cold)) int an_pool_grow(struct an_pool *p)
{
	uint32_t cap = p->cap ? p->cap * 2 : 256;
	char *nb = realloc(p->base, (size_t)cap * p->esz);

	if (!nb)
		return -1;
	memset(nb + (size_t)p->cap * p->esz, 0, (size_t)(cap - p->cap) * p->esz);
	p->base = nb;
	p->cap = cap;
	return 0;
}
