/* SPDX-License-Identifier: MIT */
/*
 * adapt.h - records of a type whose stored layout differs from this
 * build's (another recorder version) read into the built-in layout
 * (adapt.c): copied field by field, by name, fields the file lacks left 0
 * (fields appended by a newer version: the record copied whole, the rest
 * zeroed); a chunk at a time, as the cursor decodes it, so that a cursor
 * decoding ahead does it in its decoding thread.
 */
#ifndef STTRACE_ADAPT_H
#define STTRACE_ADAPT_H

#include "internal.h"

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
	uint16_t nops;
	/*
	 * The built-in layout is the stored one with fields appended (a newer
	 * minor version): every stored byte is a field of both at the same
	 * place, so the record is copied whole and the rest zeroed, not field
	 * by field.
	 */
	uint8_t extend;
	struct copy_op *ops;
};

#define MAX_RECORD 1024	/* built-in record sizes stay far below */
#define MAX_ADAPTERS 254	/* more than the built-in types */
#define HOW_PASS 0		/* st_adapt.how: the record as stored; else adapter + 1 */
#define HOW_DROP 0xff

/* How each stored type of a file becomes built-in records: the plan made at open. */
struct st_adapt {
	uint8_t how[ST_NUM_TYPE_IDS];	/* stored type id -> HOW_PASS, adapter + 1, HOW_DROP */
	struct adapter adapters[MAX_ADAPTERS];
	unsigned nadapters;
	uint8_t plain;		/* every stored type passes as it is */
	uint8_t at_most_double;	/* no adapted record is more than twice its stored size */
};

/* a's plan for r's types; ST_ENOMEM. */
int st_adapt_plan(struct st_adapt *a, const struct st_reader *r);
/* st_whole_adapt_chunk() (internal.h) by a's plan. */
int st_adapt_chunk(const struct st_adapt *a, struct st_chunk_buf *in, struct st_chunk_buf *out,
		   const char **why);
void st_adapt_free(struct st_adapt *a);

#endif /* STTRACE_ADAPT_H */
