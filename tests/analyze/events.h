/* SPDX-License-Identifier: MIT */
/* events.h - hand-built event records for the analyzer's unit tests. */
#ifndef AN_TEST_EVENTS_H
#define AN_TEST_EVENTS_H

#include <string.h>

#include "format/sttrace.h"

/* The common header of a record of pid and tid 42. */
static inline void head(struct st_event_header *h, uint16_t type, uint16_t size, uint64_t ts)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->size = size;
	h->ts = ts;
	h->pid = h->tid = 42;
}

#endif /* AN_TEST_EVENTS_H */
