/* SPDX-License-Identifier: MIT */
/*
 * replace-strings IN OUT OLD NEW [KEY=VALUE...]: a copy of IN whose metadata
 * values and string fields (a command name, a path) have each OLD replaced by
 * NEW, cut to the field's size: the names of a real or synthetic trace made
 * into what a hostile author could write (t_inject.sh); each KEY=VALUE set in
 * its metadata after them (what another recorder or kernel would write:
 * t_missing_report.sh). Schema, events and losses as they are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/lib/sttrace.h"

/* s with each old replaced by new, into out (cap bytes, cut, NUL-terminated). */
static void replaced(const char *s, const char *old, const char *new, char *out, size_t cap)
{
	size_t len = 0, olen = strlen(old), nlen = strlen(new);

	while (*s && len + 1 < cap) {
		const char *from = strncmp(s, old, olen) ? s : new;
		size_t n = from == new ? nlen : 1;

		n = n < cap - 1 - len ? n : cap - 1 - len;
		memcpy(out + len, from, n);
		len += n;
		s += from == new ? olen : 1;
	}
	out[len] = 0;
}

static void replace_fields(void *rec, const struct st_type *t, const char *old, const char *new)
{
	for (unsigned i = 0; t && i < t->nfields; i++) {
		const struct st_field *f = &t->fields[i];
		char was[4096], now[4096];

		if (f->type != ST_FT_STR || f->size >= sizeof(was))
			continue;
		st_field_str(rec, f, was, sizeof(was));
		replaced(was, old, new, now, (size_t)f->size + 1);
		memset((char *)rec + f->offset, 0, f->size);
		memcpy((char *)rec + f->offset, now, strlen(now));
	}
}

static int copy(const char *in, const char *out, const char *old, const char *new, char **set, int nset)
{
	struct st_reader *r = NULL;
	struct st_writer *w = NULL;
	struct st_cursor *c = NULL;
	const struct st_event_header *ev;
	const char *key, *value;
	unsigned char rec[65536];
	char now[65536];
	uint64_t lost;
	uint32_t cpu;
	int err = st_reader_open(&r, in, 0) || st_writer_open(&w, out, NULL) ||
		  st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c);

	for (size_t i = 0; !err && i < st_type_count(r); i++)
		err = st_writer_add_type(w, st_type_at(r, i));
	for (size_t i = 0; !err && st_meta_at(r, i, &key, &value) == 0; i++) {
		replaced(value, old, new, now, sizeof(now));
		err = st_writer_set_meta(w, key, now);
	}
	for (int i = 0; !err && i < nset; i++) {
		char *eq = strchr(set[i], '=');

		if (!eq) {
			fprintf(stderr, "replace-strings: %s: not KEY=VALUE\n", set[i]);
			err = -1;
			break;
		}
		*eq = 0;
		err = st_writer_set_meta(w, set[i], eq + 1);
	}
	for (size_t i = 0; !err && st_lost_at(r, i, &cpu, &lost) == 0; i++)
		err = st_writer_set_lost(w, cpu, lost);
	while (!err && (err = st_cursor_next(c, &ev)) > 0) {
		memcpy(rec, ev, ev->size);
		replace_fields(rec, st_type_by_id(r, ev->type), old, new);
		err = st_writer_append(w, rec, ev->size);
	}
	if (err)
		fprintf(stderr, "replace-strings: %s -> %s: %s\n", in, out,
			r && *st_reader_errmsg(r) ? st_reader_errmsg(r) : w ? st_writer_errmsg(w) : "failed");
	st_cursor_close(c);
	st_reader_close(r);
	return (w && st_writer_close(w, NULL, 0)) || err;
}

int main(int argc, char **argv)
{
	if (argc < 5 || !*argv[3]) {
		fprintf(stderr, "usage: replace-strings IN OUT OLD NEW [KEY=VALUE...]\n");
		return 2;
	}
	return copy(argv[1], argv[2], argv[3], argv[4], argv + 5, argc - 5) ? 1 : 0;
}
