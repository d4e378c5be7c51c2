/* SPDX-License-Identifier: MIT */
/*
 * gen_corpus.c - writes the fuzz seed corpus (`make fuzz-corpus`): small
 * files covering each chunk kind, a custom event type, chunks stored without
 * compression (random bytes), several chunks with overlapping times, and a
 * file cut inside a chunk.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/format/unit_util.h"

/* custom: 0 built-in types only, FUTURE adds future_type, RANDOM_FUTURE with random bytes. */
enum { FUTURE = 1, RANDOM_FUTURE = 2 };

static void append_events(struct st_writer *w, unsigned n, int custom)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t ts = 1000 + i * 100 - (i % 4) * 150;	/* overlapping, out of order */

		if (custom && i % 3 == 0) {
			struct future_rec f = { { FUTURE_TYPE, 48, i % 2, ts, 1, 2 }, -1, "abc", { 0 } };

			if (custom == RANDOM_FUTURE)
				memcpy(&f.delta, &(uint64_t[3]){ rnd(), rnd(), rnd() }, 24);
			st_writer_append(w, &f, sizeof(f));
		} else if (i % 2) {
			struct st_ev_block_rq_issue e = { .h = { ST_EV_block_rq_issue, sizeof(e), i % 2, ts, 5, 6 } };

			e.p.sector = i * 8;
			e.p.nr_bios = 2;
			e.p.bios[0] = 0xffff888000001000ull + i;
			st_writer_append(w, &e, sizeof(e));
		} else {
			struct st_ev_sys_exit e = { .h = { ST_EV_sys_exit_pread64, sizeof(e), i % 2, ts, 5, 6 } };

			e.p.ret = 4096;
			st_writer_append(w, &e, sizeof(e));
		}
	}
}

static int write_seed(const char *dir, const char *name, unsigned events, size_t chunk,
		      int custom, long cut)
{
	struct st_writer_opts o = { .chunk_size = chunk, .zstd_level = 1 };
	struct st_writer *w;
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (st_writer_open(&w, path, &o))
		return 1;
	if (custom)
		st_writer_add_type(w, &future_type);
	else
		st_writer_add_type(w, st_builtin_type(ST_EV_sys_exit_pread64));
	st_writer_add_type(w, st_builtin_type(ST_EV_block_rq_issue));
	if (custom)
		st_writer_add_type(w, st_builtin_type(ST_EV_sys_exit_pread64));
	st_writer_set_meta(w, "tool", "gen_corpus 0.1.0");
	st_writer_set_meta(w, "dev.7:0", "name=loop0;sector_size=512;scheduler=none");
	append_events(w, events, custom);
	st_writer_set_lost(w, 1, 3);
	st_writer_set_meta(w, "pid.5", "fio");
	if (st_writer_close(w, NULL, 0))
		return 1;
	return cut ? truncate(path, cut) : 0;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "tests/fuzz/corpus";

	return write_seed(dir, "seed-empty", 0, 0, 0, 0) |
	       write_seed(dir, "seed-one", 1, 0, 0, 0) |
	       write_seed(dir, "seed-chunks", 60, 512, 0, 0) |
	       write_seed(dir, "seed-custom-type", 30, 400, FUTURE, 0) |
	       write_seed(dir, "seed-stored-chunks", 24, 150, RANDOM_FUTURE, 0) |
	       write_seed(dir, "seed-cut", 60, 512, 0, 1500);
}
