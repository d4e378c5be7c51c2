/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/input.h"

struct file_in {
	const char *path;
	struct st_reader *r;
	struct st_cursor *c;	/* whole events */
	/*
	 * Type id -> 1 for the events the analysis takes: the built-in types,
	 * and those an_input_pass_type() asked for; the others are skipped.
	 */
	uint8_t keep[65536];
	int keep_all;		/* every stored type is kept: no event to leave out */
	const struct st_event_header *cur;	/* current event, NULL at the end */
};

struct an_input {
	struct file_in *files;
	/* the fds' bindings start over with each pass; a live file's metadata grows */
	struct an_names *names;
	int nfiles;
	int advance;		/* index of the file whose event was returned last, -1 */
	int fill_ret;		/* an_input_fill(): the error after the events it filled */
	unsigned cursor_flags;	/* ST_CURSOR_AHEAD, ST_CURSOR_STAMPED */
	struct an_input_info info;
};

static void info_add(struct an_input_info *info, const struct st_reader *r)
{
	const struct st_file_info *fi = st_reader_info(r);
	uint64_t start = st_trace_start(r);

	if (!info->files || start < info->start_ts)
		info->start_ts = start;
	info->events += fi->events;
	info->lost_events = st_add_count(info->lost_events, fi->lost_events);
	info->recovered += fi->recovered != 0;
	if (fi->events && (!info->first_ts || fi->first_ts < info->first_ts))
		info->first_ts = fi->first_ts;
	if (fi->last_ts > info->last_ts)
		info->last_ts = fi->last_ts;
}

/* The built-in types are kept (whatever the file stores becomes one of them). */
static void plan_keep(struct file_in *f)
{
	size_t k, nb;
	const struct st_type *builtin = st_builtin_types(&nb);

	for (k = 0; k < nb; k++)
		f->keep[builtin[k].id] = 1;
}

int an_input_adopt(struct an_input **inp, struct st_reader **readers, char *const *paths,
		   int npaths, struct an_names *names, char *err, size_t cap)
{
	struct an_input *in = calloc(1, sizeof(*in));
	int i;

	*inp = in;
	if (!in || !(in->files = calloc((size_t)npaths, sizeof(*in->files)))) {
		for (i = 0; i < npaths; i++)
			st_reader_close(readers[i]);
		snprintf(err, cap, "out of memory");
		return -1;
	}
	in->advance = -1;
	in->names = names;
	/* every reader is the input's from here, to close with it whatever happens below */
	for (i = 0; i < npaths; i++) {
		in->files[i].path = paths[i];
		in->files[i].r = readers[i];
	}
	in->nfiles = npaths;
	for (i = 0; i < npaths; i++) {
		struct file_in *f = &in->files[i];

		if (an_names_load_meta(names, f->r)) {
			snprintf(err, cap, "%s: out of memory", f->path);
			return -1;
		}
		plan_keep(f);
		info_add(&in->info, f->r);
		in->info.files++;
	}
	return 0;
}

int an_input_open(struct an_input **inp, char *const *paths, int npaths, struct an_names *names,
		  char *err, size_t cap)
{
	struct st_reader **readers = calloc((size_t)npaths ? (size_t)npaths : 1, sizeof(*readers));
	int i, ret;

	*inp = NULL;
	if (!readers) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	for (i = 0; i < npaths; i++)
		if (st_reader_open(&readers[i], paths[i], 0)) {
			snprintf(err, cap, "%s: %s", paths[i],
				 readers[i] ? st_reader_errmsg(readers[i]) : "out of memory");
			while (i >= 0)
				st_reader_close(readers[i--]);
			free(readers);
			return -1;
		}
	ret = an_input_adopt(inp, readers, paths, npaths, names, err, cap);
	free(readers);
	return ret;
}

/* The next whole event of file f the analysis takes. */
static inline int file_next(struct file_in *f, const struct st_event_header **ev, char *err,
			    size_t cap)
{
	int ret;

	while ((ret = st_cursor_next(f->c, ev)) > 0)
		if (f->keep[(*ev)->type])
			return 1;
	if (ret < 0)
		snprintf(err, cap, "%s: %s", f->path,
			 ret == ST_ENOMEM ? "out of memory" : st_reader_errmsg(f->r));
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

/* Whether f's cursor hands out only events the analysis takes (the types it passes are kept). */
static int keeps_all(const struct file_in *f)
{
	size_t k, ntypes = st_type_count(f->r);

	for (k = 0; k < ntypes; k++)
		if (!f->keep[st_type_at(f->r, k)->id])
			return 0;
	return 1;
}

int an_input_start(struct an_input *in, uint64_t from, uint64_t to, char *err, size_t cap)
{
	int i;

	an_names_rewind(in->names);

	for (i = 0; i < in->nfiles; i++) {
		struct file_in *f = &in->files[i];
		int ret;

		st_cursor_close(f->c);
		f->keep_all = keeps_all(f);
		if ((ret = st_cursor_open(f->r, from, to, in->cursor_flags, &f->c))) {
			snprintf(err, cap, "%s: %s", f->path,
				 ret == ST_ENOMEM ? "out of memory" : st_reader_errmsg(f->r));
			return -1;
		}
		/* A single file is read straight through: no current event to keep. */
		if (in->nfiles > 1 && file_advance(f, err, cap) < 0)
			return -1;
	}
	in->advance = -1;
	in->fill_ret = 0;
	return 0;
}

void an_input_cursor(struct an_input *in, int ahead, int stamped)
{
	in->cursor_flags = (ahead ? ST_CURSOR_AHEAD : 0) | (stamped ? ST_CURSOR_STAMPED : 0);
}

int an_input_open_live(struct an_input **inp, const char *path, struct an_names *names, char *err,
		       size_t cap)
{
	struct an_input *in = calloc(1, sizeof(*in));
	struct file_in *f;
	int ret;

	*inp = in;
	if (!in || !(in->files = calloc(1, sizeof(*in->files)))) {
		snprintf(err, cap, "out of memory");
		return ST_ENOMEM;
	}
	in->advance = -1;
	in->names = names;
	in->nfiles = 1;
	f = &in->files[0];
	f->path = path;
	if ((ret = st_reader_open(&f->r, path, ST_READ_LIVE))) {
		snprintf(err, cap, "%s: %s", path, f->r ? st_reader_errmsg(f->r) : "out of memory");
		return ret;
	}
	if (an_names_load_meta(names, f->r)) {
		snprintf(err, cap, "%s: out of memory", path);
		return ST_ENOMEM;
	}
	plan_keep(f);
	info_add(&in->info, f->r);
	in->info.files = 1;
	return 0;
}

int an_input_refresh(struct an_input *in, int done, uint64_t until, char *err, size_t cap)
{
	struct file_in *f = &in->files[0];
	int added = st_reader_refresh(f->r, done);

	if (added < 0) {
		snprintf(err, cap, "%s: %s", f->path, st_reader_errmsg(f->r));
		return -1;
	}
	if (added && an_names_load_meta(in->names, f->r)) {
		snprintf(err, cap, "%s: out of memory", f->path);
		return -1;
	}
	memset(&in->info, 0, sizeof(in->info));
	info_add(&in->info, f->r);
	in->info.files = 1;
	/* the cursor plans its whole events again: the file's first stamped issues may be new */
	if (st_cursor_extend(f->c, st_reader_live(f->r) ? until : UINT64_MAX)) {
		snprintf(err, cap, "%s: out of memory", f->path);
		return -1;
	}
	return st_reader_live(f->r);
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

int an_input_fill(struct an_input *in, void *buf, size_t cap, size_t *used, char *err,
		  size_t errcap)
{
	struct file_in *f = &in->files[0];
	const struct st_event_header *ev;
	int ret;

	*used = 0;
	/* one file whose events are all taken: the cursor copies them a block at a time */
	if (in->nfiles == 1 && f->keep_all) {
		ret = st_cursor_fill(f->c, buf, cap);
		if (ret < 0) {
			snprintf(err, errcap, "%s: %s", f->path,
				 ret == ST_ENOMEM ? "out of memory" : st_reader_errmsg(f->r));
			return -1;
		}
		*used = (size_t)ret;
		return ret > 0;
	}
	/* else an event at a time, while the largest record still fits; an error after them next */
	if ((ret = in->fill_ret)) {
		in->fill_ret = 0;
		return ret;
	}
	while (cap - *used >= ST_CURSOR_FILL_MIN && (ret = an_input_next(in, &ev, err, errcap)) > 0) {
		memcpy((char *)buf + *used, ev, ev->size);
		*used += st_record_span(ev);
	}
	if (ret < 0 && *used)
		in->fill_ret = ret;
	return *used ? 1 : ret;
}

const struct an_input_info *an_input_info(const struct an_input *in)
{
	return &in->info;
}

uint64_t an_input_type_events(const struct an_input *in, uint16_t id)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < in->nfiles; i++)
		n += st_whole_events(in->files[i].r, id);
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
			/* a built-in id is kept already: a type this build knows, or left out */
			f->keep[t->id] = 1;
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

	if (!in)
		return;
	for (i = 0; i < in->nfiles; i++) {
		struct file_in *f = &in->files[i];

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
