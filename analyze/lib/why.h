/* SPDX-License-Identifier: MIT */
/*
 * why.h - `st-analyze --why`: per group, for the I/Os at or above the
 * group's q-quantile of a stage, where their time went: the share of their
 * total by cause (analyze/lib/cause.h) and by stage, and the top culprits:
 * for runq the tasks that held the CPU (each I/O's runq charged to the task
 * that held it longest), for lock the lock kinds (each I/O's lock time to
 * the kind of its longest wait), for throttle the cgroups with their limits.
 *
 * Two passes: the first gives each group's quantile (an an_stats), the
 * second feeds every I/O to an_why_add (an an_emit_fn, safe from several
 * threads at once).
 */
#ifndef AN_WHY_H
#define AN_WHY_H

#include <pthread.h>
#include <stdio.h>

#include "analyze/lib/report.h"

/* Culprits of one kind: names with their time; past AN_WHY_NAMES, "(others)". */
#define AN_WHY_NAMES 32
enum an_why_kind { AN_WHY_RUNQ, AN_WHY_LOCK, AN_WHY_THROTTLE, AN_WHY_KINDS };

struct an_why_name {
	char name[120];
	uint64_t ns;
};

struct an_why_group {
	char label[128];
	uint64_t threshold;	/* the group's quantile of the stage */
	uint64_t ios, total_ns;
	uint64_t stage_ns[AN_ST_SPAN0];	/* the built-in stages and the causes, summed */
	unsigned measured;	/* 1 << stage of those an I/O of it had */
	unsigned missing;	/* stages an I/O's kernel could not give (analyze/lib/missing.h) */
	struct an_why_name names[AN_WHY_KINDS][AN_WHY_NAMES + 1];
	unsigned nnames[AN_WHY_KINDS];
};

struct an_why {
	enum an_by by;
	enum an_stage stage;
	const struct an_origin *origins;	/* names and host of each recording */
	struct an_why_group *groups;
	uint32_t ngroups;
	struct an_idmap index;	/* label hash -> groups[] */
	pthread_mutex_t lock;
};

/*
 * The groups of s (filled by a pass, by w's key) whose `stage` has samples,
 * with their q-quantile (0 < q <= 1) as threshold. 0, or -1 out of memory.
 */
int an_why_init(struct an_why *w, struct an_stats *s, enum an_stage stage, double q,
		const struct an_origin *origins);
void an_why_free(struct an_why *w);
/* One I/O (ctx: the an_why): counted when complete and at or above its group's threshold. */
void an_why_add(void *ctx, const struct an_io *io);
/*
 * Text (csv 0; a cause or stage at 0 only as cols says) or CSV:
 * group,ios,threshold_us,kind,name,us,share_pct, a row for every cause,
 * its us and share empty when the recording did not measure it.
 */
void an_why_print(struct an_why *w, const struct an_span_defs *spans, const struct an_cols *cols,
		  FILE *out, int csv);

#endif /* AN_WHY_H */
