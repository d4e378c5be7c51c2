/* SPDX-License-Identifier: MIT */
/*
 * gen_analyze_seeds.c - a seed of fuzz_analyze: the first N records of a
 * trace, as stored (ST_CURSOR_RAW: stamped issues and compact completions
 * as st-record writes them), in time order, one after another.
 * Usage: gen_analyze_seeds TRACE N OUT
 */
#include <stdio.h>
#include <stdlib.h>

#include "format/lib/sttrace.h"

int main(int argc, char **argv)
{
	const struct st_event_header *ev;
	struct st_reader *r = NULL;
	struct st_cursor *c = NULL;
	long n = argc == 4 ? strtol(argv[2], NULL, 10) : 0;
	FILE *out;
	int ret;

	if (n <= 0) {
		fprintf(stderr, "usage: gen_analyze_seeds TRACE N OUT\n");
		return 2;
	}
	if (st_reader_open(&r, argv[1], 0) || st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c)) {
		fprintf(stderr, "gen_analyze_seeds: %s: %s\n", argv[1], st_reader_errmsg(r));
		st_reader_close(r);
		return 1;
	}
	if (!(out = fopen(argv[3], "wb"))) {
		perror(argv[3]);
		return 1;
	}
	while (n-- > 0 && (ret = st_cursor_next(c, &ev)) > 0)
		fwrite(ev, ev->size, 1, out);
	st_cursor_close(c);
	st_reader_close(r);
	return fclose(out) ? 1 : 0;
}
