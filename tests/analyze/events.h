/* SPDX-License-Identifier: MIT */
/* events.h - hand-built event records for the analyzer's unit tests. */
#ifndef AN_TEST_EVENTS_H
#define AN_TEST_EVENTS_H

#include <string.h>

#include "format/lib/sttrace.h"

/* The common header of a record of pid and tid 42. */
static inline void head(struct st_event_header *h, uint16_t type, uint16_t size, uint64_t ts)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->size = size;
	h->ts = ts;
	h->pid = h->tid = 42;
}

/* A file at path declaring every built-in type, or `instead` in place of the one of its id. */
static inline struct st_writer *builtin_writer(const char *path, const struct st_type *instead)
{
	size_t n, i;
	const struct st_type *t = st_builtin_types(&n);
	struct st_writer *w;

	if (st_writer_open(&w, path, NULL))
		return NULL;
	for (i = 0; i < n; i++)
		st_writer_add_type(w, instead && t[i].id == instead->id ? instead : &t[i]);
	return w;
}

#endif /* AN_TEST_EVENTS_H */
