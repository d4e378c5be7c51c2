/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/cause.h"
#include "analyze/lib/span.h"
#include "analyze/lib/why.h"
#include "common/csv.h"
#include "common/text.h"

/*
 * The runq culprit of I/Os recorded without the sched records (their runq
 * from the kernel's counts): one row saying how to get the names.
 */
#define RUNQ_NEEDS_SCHED "(tasks: record with -e sched)"

/* The culprits' kinds, as the CSV and the text name them. */
static const char *const kind_names[AN_WHY_KINDS] = { "runq_task", "lock_kind", "throttle_cgroup" };

int an_why_init(struct an_why *w, struct an_stats *s, enum an_stage stage, double q,
		const struct an_origin *origins)
{
	memset(w, 0, sizeof(*w));
	w->by = s->by;
	w->stage = stage;
	w->origins = origins;
	pthread_mutex_init(&w->lock, NULL);
	if (an_idmap_init(&w->index, 64) || !(w->groups = calloc(s->ngroups + 1, sizeof(*w->groups))))
		return -1;
	for (uint32_t g = 0; g < s->ngroups; g++) {
		struct an_why_group *wg = &w->groups[w->ngroups];
		struct an_qest *e = &s->groups[g].st[stage];

		if (!e->n)
			continue;
		snprintf(wg->label, sizeof(wg->label), "%s", s->groups[g].label);
		wg->threshold = an_qest_quantile(e, q);
		if (an_idmap_put(&w->index, an_label_hash(wg->label) | 1ull << 63, w->ngroups))
			return -1;
		w->ngroups++;
	}
	return 0;
}

void an_why_free(struct an_why *w)
{
	free(w->groups);
	an_idmap_free(&w->index);
	pthread_mutex_destroy(&w->lock);
}

/* ns more for culprit `name` of one kind; the last slot gathers the names past the table. */
static void charge(struct an_why_group *g, enum an_why_kind k, const char *name, uint64_t ns)
{
	struct an_why_name *t = g->names[k];
	unsigned i;

	if (!ns)
		return;
	for (i = 0; i < g->nnames[k] && strcmp(t[i].name, name); i++)
		;
	if (i == g->nnames[k]) {
		if (i == AN_WHY_NAMES) {
			snprintf(t[i].name, sizeof(t[i].name), "(others)");
			g->nnames[k] = AN_WHY_NAMES + 1;
		} else if (i < AN_WHY_NAMES) {
			snprintf(t[i].name, sizeof(t[i].name), "%s", name);
			g->nnames[k]++;
		} else {
			i = AN_WHY_NAMES;
		}
	}
	t[i].ns += ns;
}

void an_why_add(void *ctx, const struct an_io *io)
{
	struct an_why *w = ctx;
	const struct an_origin *o = &w->origins[io->recording];
	uint64_t ns[AN_ST_COUNT], stage_ns;
	unsigned defined;
	char label[128], name[120];
	struct an_why_group *g;
	uint32_t i;

	if ((io->flags & AN_IO_INCOMPLETE) || !an_io_stage(io, w->stage, &stage_ns))
		return;
	an_group_label(w->by, o->names, o->host, io, label, sizeof(label));
	pthread_mutex_lock(&w->lock);
	i = an_idmap_get(&w->index, an_label_hash(label) | 1ull << 63);
	if (i == AN_NONE || stage_ns < w->groups[i].threshold || strcmp(w->groups[i].label, label)) {
		pthread_mutex_unlock(&w->lock);
		return;
	}
	g = &w->groups[i];
	defined = an_io_stages(io, ns) & ~o->missing;
	g->missing |= o->missing;
	g->ios++;
	g->measured |= defined;
	for (unsigned k = 0; k < AN_ST_SPAN0; k++)
		if (defined & 1u << k && k != AN_ST_Q2Q)
			g->stage_ns[k] += ns[k];
	g->total_ns = g->stage_ns[AN_ST_TOTAL];
	if (defined & 1u << AN_ST_RUNQ) {
		charge(g, AN_WHY_RUNQ, io->runq_culprit[0] ? io->runq_culprit :
		       io->flags & AN_IO_RUNQ_COUNTED ? RUNQ_NEEDS_SCHED : "?", ns[AN_ST_RUNQ]);
		if (defined & 1u << AN_ST_LOCK)
			charge(g, AN_WHY_LOCK, an_lock_kind(io->lock_flags), ns[AN_ST_LOCK]);
		if (defined & 1u << AN_ST_THROTTLE && ns[AN_ST_THROTTLE])
			charge(g, AN_WHY_THROTTLE, an_names_blkcg(o->names, io->blkcg, name, sizeof(name)),
			       ns[AN_ST_THROTTLE]);
	}
	pthread_mutex_unlock(&w->lock);
}

static double share(uint64_t ns, uint64_t total)
{
	return total ? 100.0 * (double)ns / (double)total : 0;
}

static int cmp_name(const void *a, const void *b)
{
	uint64_t x = ((const struct an_why_name *)a)->ns, y = ((const struct an_why_name *)b)->ns;

	return (x < y) - (x > y);
}

static void put_row(const struct an_why_group *g, FILE *out, int csv, const char *kind,
		    const char *name, uint64_t ns)
{
	char shown[TEXT_SHOWN_MAX];

	if (csv) {
		csv_field(out, g->label);
		fprintf(out, ",%" PRIu64 ",%.3f,%s,", g->ios, an_us(g->threshold), kind);
		csv_field(out, name);
		fprintf(out, ",%.3f,%.2f\n", an_us(ns), share(ns, g->total_ns));
	} else {
		fprintf(out, "  %-15s %-32s %7.1f%% %12.1f\n", kind, text_shown(name, shown, sizeof(shown)),
			share(ns, g->total_ns), an_us(g->ios ? ns / g->ios : 0));
	}
}

/* Most culprits of a kind the text shows (the CSV has them all). */
#define TEXT_NAMES 5

static void print_group(struct an_why_group *g, enum an_stage stage, const struct an_span_defs *spans,
			const struct an_cols *cols, FILE *out, int csv)
{
	char shown[TEXT_SHOWN_MAX];

	if (!csv) {
		fprintf(out, "\n%s: %" PRIu64 " I/Os at or above %.1f us of %s, %.1f us in all\n",
			text_shown(g->label, shown, sizeof(shown)), g->ios, an_us(g->threshold), an_stage_name(spans, stage), an_us(g->total_ns));
		fprintf(out, "  %-15s %-32s %8s %12s\n", "kind", "name", "share", "avg_us");
	}
	for (unsigned k = AN_ST_RUNQ; k <= AN_ST_OTHER; k++) {
		if (csv && !(g->measured & 1u << k)) {
			csv_field(out, g->label);
			fprintf(out, ",%" PRIu64 ",%.3f,cause,%s,,\n", g->ios, an_us(g->threshold),
				an_stage_name(NULL, k));
		} else if (csv || (g->measured & 1u << k && an_cols_show(cols, k, g->stage_ns[k])))
			put_row(g, out, csv, "cause", an_stage_name(NULL, k), g->stage_ns[k]);
		else if (!(g->measured & 1u << k) && g->missing & 1u << k)
			fprintf(out, "  %-15s %-32s %s\n", "cause", an_stage_name(NULL, k),
				"not recorded on this kernel");
	}
	for (unsigned k = 0; k < AN_ST_RUNQ; k++)
		if (g->stage_ns[k] || (!csv && g->measured & 1u << k && an_cols_show(cols, k, 0)))
			put_row(g, out, csv, "stage", an_stage_name(NULL, k), g->stage_ns[k]);
	for (unsigned k = 0; k < AN_WHY_KINDS; k++) {
		qsort(g->names[k], g->nnames[k], sizeof(g->names[k][0]), cmp_name);
		for (unsigned i = 0; i < g->nnames[k] && (csv || i < TEXT_NAMES); i++)
			put_row(g, out, csv, kind_names[k], g->names[k][i].name, g->names[k][i].ns);
	}
}

void an_why_print(struct an_why *w, const struct an_span_defs *spans, const struct an_cols *cols,
		  FILE *out, int csv)
{
	if (csv)
		fprintf(out, "group,ios,threshold_us,kind,name,us,share_pct\n");
	for (uint32_t g = 0; g < w->ngroups; g++)
		print_group(&w->groups[g], w->stage, spans, cols, out, csv);
}
