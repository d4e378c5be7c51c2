/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/input.h"

/* Copy one field of a file's record into the built-in layout. */
struct copy_op {
	uint16_t dst, src;	/* offsets */
	uint16_t count;		/* elements */
	uint8_t dsz, ssz;	/* element sizes */
	uint8_t sign;		/* sign-extend the source */
};

/* How records of one stored type become built-in records. */
struct adapter {
	uint16_t id;		/* built-in type id */
	uint16_t size;		/* built-in record size */
	uint16_t file_size;	/* stored record size */
	uint8_t identity;	/* same layout: pass the record through */
	uint16_t nops;
	struct copy_op *ops;
};

#define MAX_RECORD 1024
#define NO_ADAPTER 0xff

struct file_in {
	const char *path;
	struct st_reader *r;
	struct st_cursor *c;
	/*
	 * Stored type id -> the size from which its records pass through as
	 * they are (the built-in layout); UINT16_MAX, which no record size
	 * reaches (they are multiples of 8), when the type is adapted or unknown.
	 */
	uint16_t pass_min[65536];
	uint8_t slot[65536];	/* stored type id -> adapters[] index, NO_ADAPTER */
	struct adapter adapters[NO_ADAPTER];
	unsigned nadapters;
	const struct st_event_header *cur;	/* current event, NULL at the end */
	uint64_t scratch[MAX_RECORD / 8];	/* adapted record */
};

struct an_input {
	struct file_in *files;
	int nfiles;
	int advance;		/* index of the file whose event was returned last, -1 */
	struct an_input_info info;
};

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
	unsigned i;

	a->ops = calloc(b->nfields, sizeof(*a->ops));
	if (!a->ops)
		return -1;
	for (i = 0; i < b->nfields; i++) {
		const struct st_field *bf = &b->fields[i], *tf = st_field_find(t, bf->name);
		struct copy_op *op = &a->ops[a->nops];
		unsigned n;

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

/* Cold: the pass-through path around it stays short. */
static __attribute__((cold)) const struct st_event_header *
adapt(struct file_in *f, const struct adapter *a, const struct st_event_header *h)
{
	uint8_t *dst = (uint8_t *)f->scratch;
	const uint8_t *src = (const uint8_t *)h;
	unsigned i, k;

	memset(dst, 0, a->size);
	for (i = 0; i < a->nops; i++) {
		const struct copy_op *op = &a->ops[i];

		for (k = 0; k < op->count; k++)
			store(dst + op->dst + k * op->dsz, op->dsz,
			      load(src + op->src + k * op->ssz, op->ssz, op->sign));
	}
	((struct st_event_header *)dst)->type = a->id;
	((struct st_event_header *)dst)->size = a->size;
	return (const struct st_event_header *)dst;
}

/* Resolve the file's schema against the built-in types, once. */
static int plan_file(struct file_in *f)
{
	size_t i, n = st_type_count(f->r), nb;
	const struct st_type *builtin = st_builtin_types(&nb);

	memset(f->pass_min, 0xff, sizeof(f->pass_min));
	memset(f->slot, NO_ADAPTER, sizeof(f->slot));
	for (i = 0; i < n && f->nadapters < NO_ADAPTER; i++) {
		const struct st_type *t = st_type_at(f->r, i), *b = NULL;
		struct adapter *a = &f->adapters[f->nadapters];
		size_t k;

		for (k = 0; k < nb && !b; k++)
			if (!strcmp(builtin[k].name, t->name))
				b = &builtin[k];
		if (!b || b->size > MAX_RECORD)
			continue;
		memset(a, 0, sizeof(*a));
		a->id = b->id;
		a->size = b->size;
		a->file_size = t->size;
		a->identity = b->id == t->id && same_layout(b, t);
		if (!a->identity && plan_copy(a, b, t))
			return -1;
		if (a->identity)
			f->pass_min[t->id] = t->size;
		f->slot[t->id] = (uint8_t)f->nadapters++;
	}
	return 0;
}

static void info_add(struct an_input_info *info, const struct st_reader *r)
{
	const struct st_file_info *fi = st_reader_info(r);
	uint64_t start = st_trace_start(r);

	if (!info->files || start < info->start_ts)
		info->start_ts = start;
	info->events += fi->events;
	info->lost_events += fi->lost_events;
	info->recovered += fi->recovered != 0;
	if (fi->events && (!info->first_ts || fi->first_ts < info->first_ts))
		info->first_ts = fi->first_ts;
	if (fi->last_ts > info->last_ts)
		info->last_ts = fi->last_ts;
}

int an_input_open(struct an_input **inp, char *const *paths, int npaths, struct an_names *names,
		  char *err, size_t cap)
{
	struct an_input *in = calloc(1, sizeof(*in));
	int i;

	*inp = in;
	if (!in || !(in->files = calloc((size_t)npaths, sizeof(*in->files)))) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	in->advance = -1;
	for (i = 0; i < npaths; i++) {
		struct file_in *f = &in->files[i];

		f->path = paths[i];
		in->nfiles++;
		if (st_reader_open(&f->r, f->path, 0)) {
			snprintf(err, cap, "%s: %s", f->path, st_reader_errmsg(f->r));
			return -1;
		}
		if (plan_file(f) || an_names_load_meta(names, f->r)) {
			snprintf(err, cap, "%s: out of memory", f->path);
			return -1;
		}
		info_add(&in->info, f->r);
		in->info.files++;
	}
	return 0;
}

/* The next event of file f this build knows, in the built-in layout. */
static inline int file_next(struct file_in *f, const struct st_event_header **ev, char *err,
			    size_t cap)
{
	const struct adapter *a;
	int ret;

	while ((ret = st_cursor_next(f->c, ev)) > 0) {
		const struct st_event_header *h = *ev;

		if (h->size >= f->pass_min[h->type])
			return 1;
		if (f->slot[h->type] == NO_ADAPTER)
			continue;
		a = &f->adapters[f->slot[h->type]];
		/* Here a record of an identity type is shorter than its type says,
		 * as is one of an adapted type below its stored size: unusable. */
		if (a->identity || h->size < a->file_size)
			continue;
		*ev = adapt(f, a, h);
		return 1;
	}
	if (ret < 0)
		snprintf(err, cap, "%s: %s", f->path, st_reader_errmsg(f->r));
	return ret;
}

/* Move file f to its next event (f->cur, NULL at the end). */
static int file_advance(struct file_in *f, char *err, size_t cap)
{
	int ret = file_next(f, &f->cur, err, cap);

	if (ret <= 0)
		f->cur = NULL;
	return ret;
}

int an_input_start(struct an_input *in, uint64_t from, uint64_t to, char *err, size_t cap)
{
	int i;

	for (i = 0; i < in->nfiles; i++) {
		struct file_in *f = &in->files[i];

		st_cursor_close(f->c);
		f->c = NULL;
		if (st_cursor_open(f->r, from, to, &f->c)) {
			snprintf(err, cap, "%s: %s", f->path, st_reader_errmsg(f->r));
			return -1;
		}
		/* A single file is read straight through: no current event to keep. */
		if (in->nfiles > 1 && file_advance(f, err, cap) < 0)
			return -1;
	}
	in->advance = -1;
	return 0;
}

/* Several files: the earliest of their current events. */
static int next_of_files(struct an_input *in, const struct st_event_header **ev, char *err,
			 size_t cap)
{
	int i, best = -1;

	if (in->advance >= 0 && file_advance(&in->files[in->advance], err, cap) < 0)
		return -1;
	for (i = 0; i < in->nfiles; i++) {
		const struct st_event_header *h = in->files[i].cur;

		if (h && (best < 0 || h->ts < in->files[best].cur->ts))
			best = i;
	}
	in->advance = best;
	if (best < 0)
		return 0;
	*ev = in->files[best].cur;
	return 1;
}

int an_input_next(struct an_input *in, const struct st_event_header **ev, char *err, size_t cap)
{
	int ret;

	if (in->nfiles > 1)
		return next_of_files(in, ev, err, cap);
	ret = file_next(&in->files[0], ev, err, cap);
	return ret < 0 ? -1 : ret;
}

const struct an_input_info *an_input_info(const struct an_input *in)
{
	return &in->info;
}

uint64_t an_input_type_events(const struct an_input *in, uint16_t id)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < in->nfiles; i++) {
		const struct file_in *f = &in->files[i];
		size_t k, ntypes = st_type_count(f->r);

		for (k = 0; k < ntypes; k++) {
			uint16_t stored = st_type_at(f->r, k)->id;

			if (f->slot[stored] != NO_ADAPTER && f->adapters[f->slot[stored]].id == id)
				n += st_type_events(f->r, stored);
		}
	}
	return n;
}

int an_event_name_is(const char *type_name, const char *wanted)
{
	const char *colon = strchr(type_name, ':');

	return !strcmp(type_name, wanted) || (colon && !strchr(wanted, ':') && !strcmp(colon + 1, wanted));
}

int an_input_pass_type(struct an_input *in, const char *name)
{
	int i, found = 0;

	for (i = 0; i < in->nfiles; i++) {
		struct file_in *f = &in->files[i];
		size_t k, ntypes = st_type_count(f->r);
		int has = 0;

		for (k = 0; k < ntypes; k++) {
			const struct st_type *t = st_type_at(f->r, k);

			if (!an_event_name_is(t->name, name))
				continue;
			has = 1;
			if (f->slot[t->id] == NO_ADAPTER)
				f->pass_min[t->id] = t->size;
		}
		found += has;
	}
	return found;
}

const struct st_type *an_input_type_named(const struct an_input *in, const char *name)
{
	for (int i = 0; i < in->nfiles; i++) {
		size_t k, ntypes = st_type_count(in->files[i].r);

		for (k = 0; k < ntypes; k++) {
			const struct st_type *t = st_type_at(in->files[i].r, k);

			if (an_event_name_is(t->name, name))
				return t;
		}
	}
	return NULL;
}

const struct st_type *an_input_event_type(const struct an_input *in, const struct st_event_header *ev)
{
	const struct st_type *builtin = st_builtin_type(ev->type);

	/* a built-in id: passed with the built-in layout, or adapted to it */
	if (builtin)
		return builtin;
	return st_type_by_id(in->files[in->nfiles > 1 ? in->advance : 0].r, ev->type);
}

void an_input_close(struct an_input *in)
{
	int i;
	unsigned k;

	if (!in)
		return;
	for (i = 0; i < in->nfiles; i++) {
		struct file_in *f = &in->files[i];

		for (k = 0; k < f->nadapters; k++)
			free(f->adapters[k].ops);
		st_cursor_close(f->c);
		st_reader_close(f->r);
	}
	free(in->files);
	free(in);
}

const char *an_input_meta(const struct an_input *in, const char *key)
{
	for (int i = 0; i < in->nfiles; i++) {
		const char *v = st_meta_get(in->files[i].r, key);

		if (v)
			return v;
	}
	return NULL;
}
