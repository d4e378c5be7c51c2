/* SPDX-License-Identifier: MIT */
/*
 * drop-type-count IN OUT TYPE: IN with its index rewritten (encoded from the
 * spec, stored raw) without the per-type count entry of TYPE, as a writer
 * that forgets a type would leave it. For t_stformat_cat.sh.
 */
#include <stdio.h>
#include <stdlib.h>

#include "format/lib/sttrace.h"
#include "tests/format/spec_encode.h"

static int drop(const char *in, const char *out, const char *type)
{
	struct st_reader *r = NULL;
	struct st_chunk_buf idx = { 0 };
	const struct st_chunk_info *ci;
	const struct st_type *t;
	unsigned char *file = NULL, *p;
	uint32_t nchunks, ntypes;
	size_t len, at, counts, i;
	FILE *f = fopen(in, "rb"), *o = NULL;
	int bad = !f || st_reader_open(&r, in, 0) || !(t = st_type_by_name(r, type));

	if (bad)
		goto out;
	ci = st_chunk_at(r, st_chunk_count(r) - 1);
	bad = ci->kind != ST_CHUNK_INDEX || st_chunk_decode(r, st_chunk_count(r) - 1, &idx);
	file = malloc(ci->offset + 64 + idx.len + 32);
	bad = bad || !file || fread(file, 1, ci->offset, f) != ci->offset;
	if (bad)
		goto out;
	/* head, chunk entries, then 16-byte count entries: cut out the one of `type` */
	p = idx.data;
	memcpy(&nchunks, p, 4);
	memcpy(&ntypes, p + 4, 4);
	counts = 16 + (size_t)nchunks * 48;
	for (i = 0; i < ntypes && (p[counts + 16 * i] | p[counts + 16 * i + 1] << 8) != t->id; i++)
		;
	bad = i == ntypes;
	if (bad)
		goto out;
	memmove(p + counts + 16 * i, p + counts + 16 * (i + 1), idx.len - counts - 16 * (i + 1));
	put32(p + 4, ntypes - 1);
	len = idx.len - 16;
	at = ci->offset + spec_chunk(file + ci->offset, ST_CHUNK_INDEX, ci->seq, p, (uint32_t)len);
	at += spec_trailer(file + at, ci->offset, at - ci->offset);
	o = fopen(out, "wb");
	bad = !o || fwrite(file, 1, at, o) != at;
out:
	if (o && fclose(o))
		bad = 1;
	if (f)
		fclose(f);
	if (bad)
		fprintf(stderr, "drop-type-count: cannot drop %s from %s into %s\n", type, in, out);
	free(file);
	st_chunk_buf_free(&idx);
	st_reader_close(r);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: drop-type-count IN OUT TYPE\n");
		return 2;
	}
	return drop(argv[1], argv[2], argv[3]);
}
