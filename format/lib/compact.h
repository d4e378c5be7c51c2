/* SPDX-License-Identifier: MIT */
/*
 * compact.h - a block_rq_complete_compact (the `block` preset) leaves the
 * request's position, op and bios to its issue: it becomes the
 * block_rq_complete it stands for, from the request's last issue
 * (compact.c).
 */
#ifndef STTRACE_COMPACT_H
#define STTRACE_COMPACT_H

#include "internal.h"

/* What a compact completion leaves to its request's issue. */
struct issued_rq {
	uint64_t rq;		/* 0: a free entry (the kernel never issues a NULL request) */
	uint64_t sector, bio;
	uint32_t dev, opf;
	uint32_t bytes, done;	/* the request's bytes, and those completed so far */
};

/*
 * The issued requests of a file with compact completions, by address: open
 * addressing with linear probing and backward-shift deletion (no tombstones,
 * however many requests a long trace issues and completes).
 */
struct issued {
	struct issued_rq *tab;
	size_t mask;		/* capacity - 1, a power of two; 0 before the first */
	size_t count;
};

/*
 * An issue (block_rq_issue, or the stamped one, which extends it): what
 * the request's completion leaves out; <0 out of memory.
 */
int st_issued_note(struct issued *is, const struct st_ev_block_rq_issue *e);
/*
 * The block_rq_complete a compact one stands for: the request's position
 * past what completed before, its op and first bio, from its issue; the
 * request is forgotten once all of it completed. A request whose issue the
 * file lacks (issued before the trace) has no position: sector 0, as an
 * orphan completion it is not measured.
 */
const struct st_event_header *st_issued_complete(struct issued *is,
						 const struct st_ev_block_rq_complete_compact *e,
						 struct st_ev_block_rq_complete *c);
void st_issued_free(struct issued *is);

#endif /* STTRACE_COMPACT_H */
