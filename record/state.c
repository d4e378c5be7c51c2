/* SPDX-License-Identifier: MIT */
/*
 * state.c - the steps every part of st-record takes on the shared state
 * (recorder.h): failing with a message, stopping on a write error, storing
 * the lost counts. Apart from main.c, which calls the parts, so that no
 * part calls back up into it.
 */
#include <stdio.h>

#include "record/recorder.h"

int rec_fail(const char *what, const char *why)
{
	fprintf(stderr, "%s: %s: %s\n", REC_NAME, what, why);
	return REC_EXIT_FAIL;
}

void rec_stop_for_write_error(struct recorder *r)
{
	r->write_failed = true;
	r->stop_reason = "write error";
}

uint64_t rec_store_lost_into(struct recorder *r, struct st_writer *w, bool rebase)
{
	uint64_t total = rec_probes_read_lost(&r->probes), skipped = rec_probes_read_skipped(&r->probes);
	uint64_t *base = r->lost_base;
	int n = r->probes.ncpus;

	for (int cpu = 0; cpu < n; cpu++) {
		uint64_t mine = r->probes.lost[cpu] - (base ? base[cpu] : 0);

		if (mine)
			st_writer_set_lost(w, (uint32_t)cpu, mine);
		if (base && rebase)
			base[cpu] = r->probes.lost[cpu];
	}
	if (skipped - (base ? base[n] : 0))
		st_writer_set_lost(w, ST_LOST_ANY_CPU, skipped - (base ? base[n] : 0));
	if (base && rebase)
		base[n] = skipped;
	return total + skipped;
}

uint64_t rec_store_lost(struct recorder *r)
{
	return rec_store_lost_into(r, r->w, false);
}
