/* SPDX-License-Identifier: MIT */
/*
 * adapt.c - a file's records of another layout into this build's (adapt.h).
 * Decoding a record through the file's schema into the structs of
 * sttrace_events.h is reading the format, so it lives here, below every
 * program.
 */
#include <stdlib.h>

#include "adapt.h"

static int same_layout(const struct st_type *b, const struct st_type *t)
{
	unsigned i;

	if (b->size != t->size)
		return 0;
	for (i = 0; i < b->nfields; i++) {
		const struct st_field *bf = &b->fields[i], *tf = st_field_find(t, bf->name);

		if (!tf || tf->offset != bf->offset || tf->size != bf->size ||
		    tf->elem_size != bf->elem_size)
			return 0;
	}
	return 1;
}

static int plan_copy(struct adapter *a, const struct st_type *b, const struct st_type *t)
{
	uint8_t covered[MAX_RECORD] = { 0 };	/* stored bytes copied to the same place */
	unsigned i, k, extend = t->size <= b->size;

	a->ops = calloc(b->nfields, sizeof(*a->ops));
	if (!a->ops)
		return -1;
	for (i = 0; i < b->nfields; i++) {
		const struct st_field *bf = &b->fields[i], *tf = st_field_find(t, bf->name);
		struct copy_op *op = &a->ops[a->nops];
		unsigned n;

		/* (t->size <= b->size <= MAX_RECORD while extend holds) */
		if (extend && tf && tf->offset == bf->offset && tf->size == bf->size &&
		    tf->elem_size == bf->elem_size && (unsigned)tf->offset + tf->size <= t->size)
			memset(covered + tf->offset, 1, tf->size);
		else if (tf || bf->offset < t->size)
			extend = 0;	/* moved, resized, or in the way of stored bytes */

		/* A field the file lacks (or stores oddly or out of bounds) stays 0. */
		if (!tf || (tf->elem_size != 1 && tf->elem_size != 2 && tf->elem_size != 4 &&
			    tf->elem_size != 8) || tf->size % tf->elem_size ||
		    (unsigned)tf->offset + tf->size > t->size)
			continue;
		n = tf->size / tf->elem_size;
		if (n > bf->size / bf->elem_size)
			n = bf->size / bf->elem_size;
		*op = (struct copy_op){ .dst = bf->offset, .src = tf->offset, .count = (uint16_t)n,
					.dsz = bf->elem_size, .ssz = tf->elem_size,
					.sign = tf->type == ST_FT_INT };
		a->nops++;
	}
	for (k = 0; extend && k < t->size; k++)
		extend = covered[k];
	a->extend = (uint8_t)extend;
	return 0;
}

static uint64_t load(const uint8_t *p, unsigned size, int sign)
{
	switch (size) {
	case 1: return sign ? (uint64_t)(int64_t)*(const int8_t *)p : *p;
	case 2: { uint16_t v; memcpy(&v, p, 2); return sign ? (uint64_t)(int64_t)(int16_t)v : v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return sign ? (uint64_t)(int64_t)(int32_t)v : v; }
	default: { uint64_t v; memcpy(&v, p, 8); return v; }
	}
}

static void store(uint8_t *p, unsigned size, uint64_t v)
{
	switch (size) {
	case 1: *p = (uint8_t)v; break;
	case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
	case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
	default: memcpy(p, &v, 8); break;
	}
}

/* Record h of a type a adapts, in the built-in layout at dst (a->size bytes). */
static void adapt(const struct adapter *a, const struct st_event_header *h, uint8_t *dst)
{
	const uint8_t *src = (const uint8_t *)h;
	unsigned i, k;

	if (a->extend) {
		memcpy(dst, src, h->size);
		memset(dst + h->size, 0, a->size - h->size);
	} else {
		memset(dst, 0, a->size);
		for (i = 0; i < a->nops; i++) {
			const struct copy_op *op = &a->ops[i];

			for (k = 0; k < op->count; k++)
				store(dst + op->dst + k * op->dsz, op->dsz,
				      load(src + op->src + k * op->ssz, op->ssz, op->sign));
		}
	}
	((struct st_event_header *)dst)->type = a->id;
	((struct st_event_header *)dst)->size = a->size;
}

/* Bytes the records of a decoded chunk take in the built-in layouts. */
static size_t adapted_len(const struct st_adapt *pl, const struct st_chunk_buf *in)
{
	const uint8_t *p = in->data, *end = p + in->len;
	size_t len = 0;

	for (; p < end; p += ((const struct st_event_header *)p)->size) {
		const struct st_event_header *h = (const void *)p;
		uint8_t how = pl->how[h->type];

		len += how == HOW_PASS ? h->size : how == HOW_DROP ? 0 : pl->adapters[how - 1].size;
	}
	return len;
}

int st_adapt_chunk(const struct st_adapt *pl, struct st_chunk_buf *in, struct st_chunk_buf *out,
		   const char **why)
{
	const uint8_t *p = in->data, *end = p + in->len, *run = p;
	size_t need;
	uint8_t *dst;

	*why = NULL;
	while (p < end && pl->how[((const struct st_event_header *)p)->type] == HOW_PASS)
		p += ((const struct st_event_header *)p)->size;
	/* none to adapt (the types that differ have no records here): the bytes change hands */
	if (p == end) {
		struct st_chunk_buf t = *out;

		out->data = in->data;
		out->len = in->len;
		out->cap = in->cap;
		in->data = t.data;
		in->len = t.len;
		in->cap = t.cap;
		return 0;
	}
	/* counted only when some type more than doubles: room for twice the records else */
	need = pl->at_most_double ? 2 * in->len : adapted_len(pl, in);
	/* every record is of a type this build drops: nothing to copy, maybe nowhere to copy it */
	if (!need) {
		out->len = 0;
		return 0;
	}
	/*
	 * A hostile schema's records could grow 64 times: past twice the
	 * largest chunk, a chunk whose records more than double is refused.
	 */
	if (need > ST_MAX_CHUNK_RAW && need / 2 > in->len)
		return *why = "records more than twice their stored size in this build's layouts",
		       ST_EFORMAT;
	if (st_chunk_buf_reserve(out, need))
		return ST_ENOMEM;
	/* records that pass as stored are copied a run at a time */
	dst = out->data;
	for (; p < end; p += ((const struct st_event_header *)p)->size) {
		const struct st_event_header *h = (const void *)p;
		uint8_t how = pl->how[h->type];

		if (how == HOW_PASS)
			continue;
		memcpy(dst, run, (size_t)(p - run));
		dst += p - run;
		run = p + h->size;
		if (how != HOW_DROP) {
			adapt(&pl->adapters[how - 1], h, dst);
			dst += pl->adapters[how - 1].size;
		}
	}
	memcpy(dst, run, (size_t)(end - run));
	dst += end - run;
	out->len = (size_t)(dst - (uint8_t *)out->data);
	return 0;
}

/* The built-in type called name, NULL when this build does not know it. */
static const struct st_type *builtin_named(const char *name)
{
	size_t k, nb;
	const struct st_type *builtin = st_builtin_types(&nb);

	for (k = 0; k < nb; k++)
		if (!strcmp(builtin[k].name, name))
			return &builtin[k];
	return NULL;
}

/* How each stored type becomes built-in records: pass, adapt or drop. */
int st_adapt_plan(struct st_adapt *pl, const struct st_reader *r)
{
	size_t i, n = st_type_count(r);

	memset(pl->how, HOW_PASS, sizeof(pl->how));
	pl->plain = 1;
	pl->at_most_double = 1;
	for (i = 0; i < n; i++) {
		const struct st_type *t = st_type_at(r, i), *b = builtin_named(t->name);
		struct adapter *a = &pl->adapters[pl->nadapters];

		/* a type this build does not know passes, unless its id is a built-in type's */
		if (!b && !st_builtin_type(t->id))
			continue;
		if (b && b->id == t->id && same_layout(b, t))
			continue;
		pl->plain = 0;
		if (!b || b->size > MAX_RECORD || pl->nadapters == MAX_ADAPTERS) {
			pl->how[t->id] = HOW_DROP;
			continue;
		}
		memset(a, 0, sizeof(*a));
		a->id = b->id;
		a->size = b->size;
		if (plan_copy(a, b, t))
			return ST_ENOMEM;
		if (b->size > 2u * t->size)
			pl->at_most_double = 0;
		pl->how[t->id] = (uint8_t)++pl->nadapters;
	}
	return 0;
}

void st_adapt_free(struct st_adapt *a)
{
	unsigned k;

	for (k = 0; k < a->nadapters; k++)
		free(a->adapters[k].ops);
}
