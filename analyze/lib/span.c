/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze/lib/idmap.h"
#include "analyze/lib/pool.h"
#include "analyze/lib/span.h"

#define MAX_ROLES	(2 * AN_MAX_SPANS)

static int span_error(char *err, size_t cap, const char *spec, const char *why)
{
	snprintf(err, cap, "--span %s: %s", spec, why);
	return -1;
}

int an_span_define(struct an_span_defs *defs, const char *spec, char *err, size_t cap)
{
	const char *eq = strchr(spec, '='), *dots = strstr(spec, "..");
	struct an_span_def d = { .key = "tid" };
	size_t n;

	if (!eq || !dots || dots < eq)
		return span_error(err, cap, spec, "not NAME=START..END[:KEY]");
	n = (size_t)(eq - spec);
	if (!n || n > AN_SPAN_NAME_MAX)
		return span_error(err, cap, spec, "NAME must have 1 to 15 characters");
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)spec[i]) && spec[i] != '_')
			return span_error(err, cap, spec, "NAME may hold letters, digits and _ only");
	memcpy(d.name, spec, n);
	if (an_stage_by_name(defs, d.name) >= 0)
		return span_error(err, cap, spec, "NAME is already a stage or span");
	if (defs->n == AN_MAX_SPANS)
		return span_error(err, cap, spec, "more than 8 spans");
	n = (size_t)(dots - eq - 1);
	if (!n || n >= sizeof(d.start))
		return span_error(err, cap, spec, "no START event");
	memcpy(d.start, eq + 1, n);
	n = strlen(dots + 2);
	if (!n || n >= sizeof(d.end))
		return span_error(err, cap, spec, "no END event");
	memcpy(d.end, dots + 2, n);
	defs->def[defs->n++] = d;
	return 0;
}

const char *an_span_name(const struct an_span_defs *defs, unsigned i)
{
	return defs && i < defs->n ? defs->def[i].name : NULL;
}

int an_span_by_name(const struct an_span_defs *defs, const char *name)
{
	for (unsigned i = 0; defs && i < defs->n; i++)
		if (!strcmp(defs->def[i].name, name))
			return (int)i;
	return -1;
}

/* ---- stage names: the built-in stages, then the spans -------------------- */

static const char *const stage_names[AN_ST_SPAN0] = {
	"total", "sys2fs", "fs", "fs2q", "sys2q", "Q2G", "G2I", "I2D", "D2C", "Q2C", "C2ret", "wb", "jnl",
	"flush", "reap", "Q2Q", "runq", "svc_runq", "lock", "throttle", "dirty", "reclaim", "other",
};

const char *an_stage_name(const struct an_span_defs *defs, enum an_stage s)
{
	return s < AN_ST_SPAN0 ? stage_names[s] : an_span_name(defs, s - AN_ST_SPAN0);
}

int an_stage_by_name(const struct an_span_defs *defs, const char *name)
{
	int s;

	for (s = 0; s < AN_ST_SPAN0; s++)
		if (!strcasecmp(name, stage_names[s]))
			return s;
	s = an_span_by_name(defs, name);
	return s < 0 ? -1 : AN_ST_SPAN0 + s;
}

/* ---- pairing ------------------------------------------------------------- */

/* What one schema type is to the spans: the START and/or END of some. */
struct role {
	uint8_t span;
	uint8_t is_end;
	const struct st_field *key;	/* NULL: the header's tid or pid */
};

struct type_roles {
	const struct st_type *type;
	unsigned nroles;
	struct role roles[MAX_ROLES];
	const struct st_field *dev, *ino;	/* copied into span records when present */
};

/* A START waiting for its END. */
struct open_start {
	uint32_t link;			/* the pool's free list */
	uint32_t pid, tid, dev;
	uint64_t ts, ino;
};

struct span_state {
	struct an_idmap open;		/* key + 1 -> starts; key UINT64_MAX lives in `last` */
	struct an_pool starts;
	struct open_start last;		/* the one key the map cannot hold */
	int last_open;
	uint64_t paired, unpaired_starts, unpaired_ends;
};

struct an_spans {
	struct an_span_defs defs;	/* the run's, each END split from its KEY */
	struct an_input *in;
	struct an_idmap by_type;	/* schema type address -> types[] */
	struct type_roles *types;
	uint32_t ntypes, cap;
	struct span_state state[AN_MAX_SPANS];
	int failed;
};

static int header_key(const char *key)
{
	return !strcmp(key, "tid") || !strcmp(key, "pid");
}

/* END[:KEY]: the whole text when some file has an event of that name, else split at the last ':'. */
static void split_key(struct an_span_def *d, struct an_input *in)
{
	char *colon = strrchr(d->end, ':');

	if (!colon || an_input_type_named(in, d->end))
		return;
	snprintf(d->key, sizeof(d->key), "%s", colon + 1);
	*colon = 0;
}

/* The key field is in the START and END types (the first file's that has them). */
static int check_key(struct an_input *in, const struct an_span_def *d, char *err, size_t cap)
{
	const char *events[2] = { d->start, d->end };

	if (header_key(d->key))
		return 0;
	for (int i = 0; i < 2; i++)
		if (!st_field_find(an_input_type_named(in, events[i]), d->key)) {
			snprintf(err, cap, "--span %s: event %s has no field '%s' (KEY: a field of "
				 "both events, or tid, pid)", d->name, events[i], d->key);
			return -1;
		}
	return 0;
}

int an_spans_new(struct an_spans **sp, const struct an_span_defs *run_defs, struct an_input *in,
		 char *err, size_t cap)
{
	struct an_span_defs defs;
	struct an_spans *s;

	*sp = NULL;
	if (!run_defs || !run_defs->n)
		return 0;
	defs = *run_defs;
	for (unsigned i = 0; i < defs.n; i++) {
		struct an_span_def *d = &defs.def[i];

		split_key(d, in);
		if (!an_input_pass_type(in, d->start) || !an_input_pass_type(in, d->end)) {
			snprintf(err, cap, "--span %s: no event %s in the files' schema", d->name,
				 an_input_pass_type(in, d->start) ? d->end : d->start);
			return -1;
		}
		if (check_key(in, d, err, cap))
			return -1;
	}
	s = calloc(1, sizeof(*s));
	if (!s || an_idmap_init(&s->by_type, 64)) {
		free(s);
		snprintf(err, cap, "out of memory");
		return -1;
	}
	s->defs = defs;
	s->in = in;
	for (unsigned i = 0; i < s->defs.n; i++) {
		an_pool_init(&s->state[i].starts, sizeof(struct open_start));
		if (an_idmap_init(&s->state[i].open, 64)) {
			an_spans_free(s);
			snprintf(err, cap, "out of memory");
			return -1;
		}
	}
	*sp = s;
	return 0;
}

void an_spans_reset(struct an_spans *s)
{
	for (unsigned i = 0; s && i < s->defs.n; i++) {
		struct span_state *st = &s->state[i];

		an_idmap_free(&st->open);
		an_pool_free(&st->starts);
		memset(st, 0, sizeof(*st));
		an_pool_init(&st->starts, sizeof(struct open_start));
		if (an_idmap_init(&st->open, 64))
			s->failed = 1;
	}
}

/* The roles of a schema type, worked out the first time it is seen. */
static const struct type_roles *roles_of(struct an_spans *s, const struct st_type *t)
{
	uint64_t key = (uint64_t)(uintptr_t)t;
	uint32_t i = an_idmap_get(&s->by_type, key);
	struct type_roles *tr;

	if (i != AN_NONE)
		return &s->types[i];
	if (s->ntypes == s->cap) {
		uint32_t cap = s->cap ? 2 * s->cap : 16;
		struct type_roles *p = realloc(s->types, cap * sizeof(*p));

		if (!p)
			return NULL;
		s->types = p;
		s->cap = cap;
	}
	if (an_idmap_put(&s->by_type, key, s->ntypes))
		return NULL;
	tr = &s->types[s->ntypes++];
	memset(tr, 0, sizeof(*tr));
	tr->type = t;
	tr->dev = st_field_find(t, "dev");
	if (tr->dev && tr->dev->type != ST_FT_DEV)
		tr->dev = NULL;
	tr->ino = st_field_find(t, "ino");
	for (unsigned k = 0; k < s->defs.n; k++)
		for (uint8_t end = 0; end < 2; end++) {
			const struct an_span_def *d = &s->defs.def[k];
			const struct st_field *f = header_key(d->key) ? NULL : st_field_find(t, d->key);

			if (!an_event_name_is(t->name, end ? d->end : d->start))
				continue;
			/* a type without the key field can pair nothing: it plays no role */
			if (!header_key(d->key) && !f)
				continue;
			tr->roles[tr->nroles++] = (struct role){ .span = (uint8_t)k, .is_end = end, .key = f };
		}
	return tr;
}

static uint64_t key_of(const struct role *r, const struct an_span_def *d,
		       const struct st_event_header *ev)
{
	if (!r->key)
		return strcmp(d->key, "pid") ? ev->tid : ev->pid;
	return st_field_u64(ev, r->key, 0);
}

static void emit_span(unsigned span, const struct open_start *o, uint64_t end_ts, int incomplete,
		      an_emit_fn emit, void *ctx)
{
	struct an_io io;

	memset(&io, 0, sizeof(io));
	io.start = o->ts;
	/* the interval views place a record at its last timestamp: the END */
	io.ts[AN_TS_SYS_EXIT] = end_ts;
	io.span_ns = end_ts - o->ts;
	io.span = (uint8_t)(span + 1);
	io.op = AN_OP_SPAN;
	io.pid = o->pid;
	io.tid = o->tid;
	io.dev = io.fs_dev = o->dev;
	io.ino = o->ino;
	io.fd = -1;
	io.offset = -1;
	io.q2q = UINT64_MAX;
	io.flags = incomplete ? AN_IO_INCOMPLETE : AN_IO_DONE;
	emit(ctx, &io);
}

static struct open_start *open_slot(struct span_state *st, uint64_t key, int create)
{
	uint32_t i;

	if (key == UINT64_MAX)
		return st->last_open || create ? &st->last : NULL;
	i = an_idmap_get(&st->open, key + 1);
	if (i != AN_NONE)
		return AN_POOL_AT(&st->starts, struct open_start, i);
	if (!create)
		return NULL;
	i = an_pool_get(&st->starts);
	if (i == AN_NONE)
		return NULL;
	if (an_idmap_put(&st->open, key + 1, i)) {
		an_pool_put(&st->starts, i);
		return NULL;
	}
	return AN_POOL_AT(&st->starts, struct open_start, i);
}

static void close_slot(struct span_state *st, uint64_t key)
{
	uint32_t i;

	if (key == UINT64_MAX) {
		st->last_open = 0;
		return;
	}
	i = an_idmap_get(&st->open, key + 1);
	an_idmap_del(&st->open, key + 1);
	an_pool_put(&st->starts, i);
}

static void on_start(struct an_spans *s, const struct type_roles *tr, const struct role *r,
		     const struct st_event_header *ev, an_emit_fn emit, void *ctx)
{
	struct span_state *st = &s->state[r->span];
	uint64_t key = key_of(r, &s->defs.def[r->span], ev);
	int was_open = key == UINT64_MAX ? st->last_open : open_slot(st, key, 0) != NULL;
	struct open_start *o = open_slot(st, key, 1);

	if (!o) {
		s->failed = 1;
		return;
	}
	/* a START again before its END: the first one is unpaired, not matched to a later END */
	if (was_open) {
		st->unpaired_starts++;
		emit_span(r->span, o, o->ts, 1, emit, ctx);
	}
	if (key == UINT64_MAX)
		st->last_open = 1;
	o->ts = ev->ts;
	o->pid = ev->pid;
	o->tid = ev->tid;
	o->dev = tr->dev ? (uint32_t)st_field_u64(ev, tr->dev, 0) : 0;
	o->ino = tr->ino ? st_field_u64(ev, tr->ino, 0) : 0;
}

static void on_end(struct an_spans *s, const struct role *r, const struct st_event_header *ev,
		   an_emit_fn emit, void *ctx)
{
	struct span_state *st = &s->state[r->span];
	uint64_t key = key_of(r, &s->defs.def[r->span], ev);
	struct open_start *o = open_slot(st, key, 0);

	if (!o) {
		st->unpaired_ends++;
		return;
	}
	st->paired++;
	emit_span(r->span, o, ev->ts, 0, emit, ctx);
	close_slot(st, key);
}

void an_spans_event(struct an_spans *s, const struct st_event_header *ev, an_emit_fn emit, void *ctx)
{
	const struct st_type *t = an_input_event_type(s->in, ev);
	const struct type_roles *tr;

	if (!t)
		return;
	tr = roles_of(s, t);
	if (!tr) {
		s->failed = 1;
		return;
	}
	/* an event that ends one span may start another (or the next of the same) */
	for (unsigned i = 0; i < tr->nroles; i++)
		if (tr->roles[i].is_end)
			on_end(s, &tr->roles[i], ev, emit, ctx);
	for (unsigned i = 0; i < tr->nroles; i++)
		if (!tr->roles[i].is_end)
			on_start(s, tr, &tr->roles[i], ev, emit, ctx);
}

void an_spans_finish(struct an_spans *s, an_emit_fn emit, void *ctx)
{
	for (unsigned k = 0; s && k < s->defs.n; k++) {
		struct span_state *st = &s->state[k];

		for (size_t i = 0; i <= st->open.mask; i++)
			if (st->open.keys[i]) {
				const struct open_start *o =
					AN_POOL_AT(&st->starts, struct open_start, st->open.vals[i]);

				st->unpaired_starts++;
				emit_span(k, o, o->ts, 1, emit, ctx);
			}
		if (st->last_open) {
			st->unpaired_starts++;
			emit_span(k, &st->last, st->last.ts, 1, emit, ctx);
		}
	}
}

void an_spans_print(const struct an_spans *s, FILE *out)
{
	for (unsigned k = 0; s && k < s->defs.n; k++) {
		const struct span_state *st = &s->state[k];
		const struct an_span_def *d = &s->defs.def[k];

		fprintf(out, "span %s = %s .. %s by %s: %" PRIu64 " paired, %" PRIu64
			" unpaired starts, %" PRIu64 " unpaired ends\n", d->name, d->start, d->end,
			d->key, st->paired, st->unpaired_starts, st->unpaired_ends);
	}
}

int an_spans_failed(const struct an_spans *s)
{
	return s && s->failed;
}

void an_spans_free(struct an_spans *s)
{
	if (!s)
		return;
	for (unsigned k = 0; k < s->defs.n; k++) {
		an_idmap_free(&s->state[k].open);
		an_pool_free(&s->state[k].starts);
	}
	an_idmap_free(&s->by_type);
	free(s->types);
	free(s);
}
