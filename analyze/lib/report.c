/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/cause.h"
#include "analyze/lib/report.h"
#include "analyze/lib/span.h"
#include "common/csv.h"
#include "common/text.h"

double an_us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

static const char *const by_names[] = { "devop", "op", "dev", "comm", "pid", "file", "host", "cgroup",
					"cache" };

const char *an_by_name(enum an_by by)
{
	return by_names[by];
}

int an_by_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(by_names) / sizeof(by_names[0]); i++)
		if (!strcmp(name, by_names[i]))
			return (int)i;
	return -1;
}

void an_stats_init(struct an_stats *s, enum an_by by, size_t exact_limit, const struct an_names *names)
{
	memset(s, 0, sizeof(*s));
	s->by = by;
	s->exact_limit = exact_limit;
	s->names = names;
	if (an_idmap_init(&s->index, 64))
		s->failed = 1;
}

void an_stats_free(struct an_stats *s)
{
	uint32_t g;
	int k;

	for (g = 0; g < s->ngroups; g++)
		for (k = 0; k < AN_ST_COUNT; k++)
			an_qest_free(&s->groups[g].st[k]);
	free(s->groups);
	an_idmap_free(&s->index);
}

uint64_t an_label_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h;
}

/* an_group_key() inline in an_stats_add(), which asks it for every I/O */
static inline __attribute__((always_inline)) uint64_t group_key(enum an_by by,
								 const struct an_names *names,
								 const char *host, const struct an_io *io)
{
	uint64_t k;

	switch (by) {
	case AN_BY_DEVOP: k = (uint64_t)io->dev << 8 | io->op; break;
	case AN_BY_OP:    k = io->op; break;
	case AN_BY_DEV:   k = io->dev; break;
	case AN_BY_PID:   k = io->pid; break;
	case AN_BY_COMM:  k = an_label_hash(an_names_comm(names, io->pid)); break;
	case AN_BY_HOST:  k = an_label_hash(host); break;
	case AN_BY_CACHE: k = io->cache; break;
	case AN_BY_CGROUP: {
		/* by the path: merged recordings of several hosts share labels, not ids */
		char tmp[32];

		k = an_label_hash(an_names_cgroup(names, io, tmp, sizeof(tmp)));
		break;
	}
	default: {
		/* by the name: an fd names another file after each open, an inode the same one from every fd */
		char tmp[96];

		k = an_label_hash(an_names_file(names, io, tmp, sizeof(tmp)));
		break;
	}
	}
	return k | 1ull << 63;
}

uint64_t an_group_key(enum an_by by, const struct an_names *names, const char *host,
		      const struct an_io *io)
{
	return group_key(by, names, host, io);
}

void an_group_label(enum an_by by, const struct an_names *names, const char *host,
		    const struct an_io *io, char *buf, size_t cap)
{
	char tmp[96];

	switch (by) {
	case AN_BY_DEVOP:
		snprintf(buf, cap, "%s %s", an_names_dev(names, io->dev, tmp, sizeof(tmp)),
			 an_op_name(io->op));
		break;
	case AN_BY_OP:
		snprintf(buf, cap, "%s", an_op_name(io->op));
		break;
	case AN_BY_DEV:
		snprintf(buf, cap, "%s", an_names_dev(names, io->dev, tmp, sizeof(tmp)));
		break;
	case AN_BY_PID:
		snprintf(buf, cap, "%u (%s)", io->pid, an_names_comm(names, io->pid));
		break;
	case AN_BY_COMM:
		snprintf(buf, cap, "%s", an_names_comm(names, io->pid));
		break;
	case AN_BY_HOST:
		snprintf(buf, cap, "%s", host);
		break;
	case AN_BY_CGROUP:
		snprintf(buf, cap, "%s", an_names_cgroup(names, io, tmp, sizeof(tmp)));
		break;
	case AN_BY_CACHE:
		snprintf(buf, cap, "%s", an_cache_name(io->cache));
		break;
	default:
		snprintf(buf, cap, "%s", an_names_file(names, io, tmp, sizeof(tmp)));
		break;
	}
}

/* A new group under key, labelled by the caller. */
static struct an_group *new_group(struct an_stats *s, uint64_t key)
{
	struct an_group *gr;
	int k;

	if (s->ngroups == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 16;
		struct an_group *p = realloc(s->groups, cap * sizeof(*p));

		if (!p)
			return NULL;
		s->groups = p;
		s->cap = cap;
	}
	/* Key 0 (reserved by the map): a group outside it. */
	if (key && an_idmap_put(&s->index, key, s->ngroups))
		return NULL;
	gr = &s->groups[s->ngroups++];
	memset(gr, 0, sizeof(*gr));
	for (k = 0; k < AN_ST_COUNT; k++)
		an_qest_init(&gr->st[k], s->exact_limit);
	return gr;
}

static struct an_group *group_of(struct an_stats *s, const struct an_io *io)
{
	uint64_t key = group_key(s->by, s->names, s->host, io);
	struct an_group_hint *hint = &s->recent[key & (AN_GROUP_RECENT - 1)];
	uint32_t g;
	struct an_group *gr;

	/* I/Os of a few groups come in runs, interleaved. */
	if (key == hint->key)
		return &s->groups[hint->group];
	g = an_idmap_get(&s->index, key);
	if (g != AN_NONE) {
		*hint = (struct an_group_hint){ key, g };
		return &s->groups[g];
	}
	gr = new_group(s, key);
	if (gr)
		an_group_label(s->by, s->names, s->host, io, gr->label, sizeof(gr->label));
	return gr;
}

/* The group labelled `label` in a merged an_stats, made when missing. */
static struct an_group *group_by_label(struct an_stats *s, const char *label)
{
	uint64_t key = an_label_hash(label) | 1ull << 63;
	uint32_t g = an_idmap_get(&s->index, key);
	struct an_group *gr;

	if (g != AN_NONE && !strcmp(s->groups[g].label, label))
		return &s->groups[g];
	if (g != AN_NONE) {
		/* Another label of the same 64-bit hash: this one is found by a scan. */
		for (g = 0; g < s->ngroups; g++)
			if (!strcmp(s->groups[g].label, label))
				return &s->groups[g];
		key = 0;
	}
	gr = new_group(s, key);
	if (gr)
		snprintf(gr->label, sizeof(gr->label), "%s", label);
	return gr;
}

int an_stats_merge(struct an_stats *dst, struct an_stats *src)
{
	uint32_t g;
	int k;

	if (an_stats_settle(src))
		return -1;
	for (g = 0; g < src->ngroups; g++) {
		struct an_group *sg = &src->groups[g];
		struct an_group *dg = group_by_label(dst, sg->label);

		if (!dg)
			return -1;
		dg->count += sg->count;
		dg->bytes += sg->bytes;
		dg->incomplete += sg->incomplete;
		dg->errors += sg->errors;
		dg->merged += sg->merged;
		dg->split += sg->split;
		dg->requeues += sg->requeues;
		for (k = 0; k < AN_ST_COUNT; k++)
			if (an_qest_take(&dg->st[k], &sg->st[k]))
				return -1;
	}
	return 0;
}

/* an_stats_add()'s stage(): a sample of stage k into its group. */
struct stage_sink {
	struct an_stats *s;
	struct an_group *g;
};

static inline __attribute__((always_inline)) void add_stage(void *ctx, unsigned k, uint64_t ns)
{
	struct stage_sink *sink = ctx;
	/* the causes are 0 for most I/Os, only counted (k is a constant here: the test goes for the other stages) */
	if (k >= AN_ST_RUNQ && k < AN_ST_OTHER && !ns)
		sink->g->zero_causes[k - AN_ST_RUNQ]++;
	else if (an_qest_add(&sink->g->st[k], ns))
		sink->s->failed = 1;
}

int an_stats_settle(struct an_stats *s)
{
	uint32_t g;
	int k;

	for (g = 0; g < s->ngroups; g++)
		for (k = 0; k < AN_CAUSE_COUNT; k++) {
			struct an_group *gr = &s->groups[g];

			if (an_qest_add_zeros(&gr->st[AN_ST_RUNQ + k], gr->zero_causes[k])) {
				s->failed = 1;
				return -1;
			}
			gr->zero_causes[k] = 0;
		}
	return 0;
}

void an_stats_add(struct an_stats *s, const struct an_io *io)
{
	struct stage_sink sink = { s, group_of(s, io) };
	struct an_group *g = sink.g;

	if (!g) {
		s->failed = 1;
		return;
	}
	/* the kernel counted its merges, whether the trace saw the I/O end or not */
	g->merged += io->merges;
	if (io->flags & AN_IO_INCOMPLETE) {
		g->incomplete++;
		return;
	}
	g->count++;
	g->bytes += io->bytes;
	g->errors += !!(io->flags & AN_IO_ERROR);
	g->split += !!(io->flags & AN_IO_SPLIT);
	g->requeues += io->requeues;
	g->unjoined += !!(io->flags & AN_IO_UNJOINED);
	/* each built-in stage's sketch at an offset the compiler knows, behind its own test */
	an_io_each_stage(io, add_stage, &sink);
}

static int cmp_group(const void *a, const void *b)
{
	return strcmp(((const struct an_group *)a)->label, ((const struct an_group *)b)->label);
}

void an_stats_sort(struct an_stats *s)
{
	if (s->ngroups)
		qsort(s->groups, s->ngroups, sizeof(*s->groups), cmp_group);
}

int an_stats_exact(const struct an_stats *s)
{
	uint32_t g;
	int k;

	for (g = 0; g < s->ngroups; g++)
		for (k = 0; k < AN_ST_COUNT; k++)
			if (!an_qest_is_exact(&s->groups[g].st[k]))
				return 0;
	return 1;
}

int an_stats_merge_stage(struct an_stats *s, enum an_stage st, struct an_qest *dst)
{
	uint32_t g;

	for (g = 0; g < s->ngroups; g++)
		if (an_qest_merge(dst, &s->groups[g].st[st]))
			return -1;
	return 0;
}

static const double report_q[] = { 0.5, 0.9, 0.99, 0.999, 0.9995 };
#define NQ (sizeof(report_q) / sizeof(report_q[0]))

static void print_stage_row(struct an_qest *e, FILE *out, int csv)
{
	unsigned i;

	fprintf(out, csv ? ",%" PRIu64 ",%.3f,%.3f" : " %8" PRIu64 " %9.1f %9.1f", e->n,
		an_us(e->min), an_us(e->sum / e->n));
	for (i = 0; i < NQ; i++)
		fprintf(out, csv ? ",%.3f" : " %9.1f", an_us(an_qest_quantile(e, report_q[i])));
	fprintf(out, csv ? ",%.3f,%s\n" : " %9.1f\n", an_us(e->max),
		an_qest_is_exact(e) ? "exact" : "sketch");
}

static void print_group(struct an_group *g, const struct an_span_defs *spans, FILE *out, int csv,
			double secs)
{
	double iops = secs > 0 ? g->count / secs : 0, mbs = secs > 0 ? g->bytes / secs / 1e6 : 0;
	/* the causes' names are longer; a group without them keeps its columns */
	int w = g->st[AN_ST_OTHER].n || g->st[AN_ST_RUNQ].n ? 8 : 6;
	char shown[TEXT_SHOWN_MAX];
	int k;

	if (!csv) {
		fprintf(out, "\n%s: %" PRIu64 " I/Os, %.1f IOPS, %.2f MB/s, avg %.0f B; merged %"
			PRIu64 ", split %" PRIu64 ", requeues %" PRIu64 ", errors %" PRIu64
			", incomplete %" PRIu64 "\n", text_shown(g->label, shown, sizeof(shown)), g->count, iops, mbs,
			g->count ? (double)g->bytes / g->count : 0.0, g->merged, g->split,
			g->requeues, g->errors, g->incomplete);
		if (g->unjoined)
			fprintf(out, "  %" PRIu64 " without their block I/O joined (block stages missing; "
				"fsync: no device flush joined)\n", g->unjoined);
		fprintf(out, "  %-*s %8s %9s %9s %9s %9s %9s %9s %9s %9s  (us)\n", w, "stage", "n",
			"min", "avg", "p50", "p90", "p99", "p99.9", "p99.95", "max");
	}
	for (k = 0; k < AN_ST_COUNT; k++) {
		if (!g->st[k].n)
			continue;
		if (csv) {
			csv_field(out, g->label);
			fprintf(out, ",%" PRIu64 ",%.3f,%.4f,%" PRIu64 ",%" PRIu64 ",%s", g->count, iops,
				mbs, g->incomplete, g->errors, an_stage_name(spans, k));
		} else
			fprintf(out, "  %-*s", w, an_stage_name(spans, k));
		print_stage_row(&g->st[k], out, csv);
	}
	if (csv && !g->count) {
		csv_field(out, g->label);
		fprintf(out, ",0,0,0,%" PRIu64 ",%" PRIu64 ",,0,,,,,,,,,\n", g->incomplete, g->errors);
	}
}

void an_stats_print(struct an_stats *s, const struct an_span_defs *spans, FILE *out, int csv,
		    uint64_t duration_ns)
{
	double secs = duration_ns / 1e9;
	uint32_t g;

	if (csv)
		fprintf(out, "group,ios,iops,mb_s,incomplete,errors,stage,n,min_us,avg_us,p50_us,"
			"p90_us,p99_us,p99_9_us,p99_95_us,max_us,quantiles\n");
	for (g = 0; g < s->ngroups; g++)
		print_group(&s->groups[g], spans, out, csv, secs);
}

/* ---- slowest I/Os -------------------------------------------------------- */

static uint64_t stage_or_zero(const struct an_io *io, enum an_stage s)
{
	uint64_t ns = 0;

	return an_io_stage(io, s, &ns) ? ns : 0;
}

int an_top_init(struct an_top *t, enum an_stage stage, uint64_t threshold, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->stage = stage;
	t->threshold = threshold;
	t->max = max;
	t->heap = calloc(max ? max : 1, sizeof(*t->heap));
	return t->heap ? 0 : -1;
}

void an_top_free(struct an_top *t)
{
	free(t->heap);
	t->heap = NULL;
}

static void sift_down(struct an_top *t, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct an_io tmp;

		if (l < t->n && stage_or_zero(&t->heap[l], t->stage) < stage_or_zero(&t->heap[m], t->stage))
			m = l;
		if (l + 1 < t->n &&
		    stage_or_zero(&t->heap[l + 1], t->stage) < stage_or_zero(&t->heap[m], t->stage))
			m = l + 1;
		if (m == i)
			return;
		tmp = t->heap[i];
		t->heap[i] = t->heap[m];
		t->heap[m] = tmp;
		i = m;
	}
}

void an_top_add(struct an_top *t, const struct an_io *io)
{
	uint64_t ns;
	size_t i;

	if ((io->flags & AN_IO_INCOMPLETE) || !an_io_stage(io, t->stage, &ns) || ns < t->threshold)
		return;
	t->above++;
	if (t->n < t->max) {
		/* Sift up. */
		i = t->n++;
		t->heap[i] = *io;
		while (i && stage_or_zero(&t->heap[(i - 1) / 2], t->stage) > ns) {
			struct an_io tmp = t->heap[i];

			t->heap[i] = t->heap[(i - 1) / 2];
			t->heap[(i - 1) / 2] = tmp;
			i = (i - 1) / 2;
		}
	} else if (t->max && ns > stage_or_zero(&t->heap[0], t->stage)) {
		t->heap[0] = *io;
		sift_down(t, 0);
	}
}

static int cmp_slowest(const void *a, const void *b, void *stage)
{
	uint64_t x = stage_or_zero(a, *(enum an_stage *)stage), y = stage_or_zero(b, *(enum an_stage *)stage);

	return (x < y) - (x > y);
}

static const enum an_stage breakdown[] = {
	AN_ST_TOTAL, AN_ST_SYS2FS, AN_ST_FS, AN_ST_FS2Q, AN_ST_SYS2Q, AN_ST_Q2G, AN_ST_G2I,
	AN_ST_I2D, AN_ST_D2C, AN_ST_Q2C, AN_ST_C2RET, AN_ST_WB, AN_ST_JNL, AN_ST_FLUSH,
	AN_ST_REAP,
};
#define NBREAK (sizeof(breakdown) / sizeof(breakdown[0]))

#define NCAUSE (AN_ST_OTHER - AN_ST_RUNQ + 1)

/* Whether an I/O of the list has its causes: then they are columns, and its cache. */
static int top_has_causes(const struct an_top *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->heap[i].flags & AN_IO_WHY)
			return 1;
	return 0;
}

/*
 * The stages of the list: the breakdown, the causes when why, and the span
 * the list ranks by, if it is one.
 */
static unsigned top_stages(const struct an_top *t, int why, enum an_stage stages[NBREAK + NCAUSE + 1])
{
	unsigned n = NBREAK;

	memcpy(stages, breakdown, sizeof(breakdown));
	for (unsigned k = 0; why && k < NCAUSE; k++)
		stages[n++] = (enum an_stage)(AN_ST_RUNQ + k);
	if (t->stage >= AN_ST_SPAN0)
		stages[n++] = t->stage;
	return n;
}

static void print_top_row(const struct an_top *t, int why, const struct an_io *io, size_t rank,
			  const struct an_origin *origin, int show_host, FILE *out, int csv,
			  uint64_t t0)
{
	const struct an_names *names = origin->names;
	enum an_stage stages[NBREAK + NCAUSE + 1];
	unsigned i, n = top_stages(t, why, stages);
	char dev[32], file[128], shown[3][TEXT_SHOWN_MAX];
	uint64_t ns;

	fprintf(out, csv ? "%zu,%.6f" : "%4zu %10.6f", rank, (io->start - t0) / 1e9);
	for (i = 0; i < n; i++) {
		if (an_io_stage(io, stages[i], &ns))
			fprintf(out, csv ? ",%.3f" : " %9.1f", an_us(ns));
		else
			fprintf(out, csv ? "," : " %9s", "-");
	}
	if (why)
		fprintf(out, csv ? ",%s" : " %-6s", an_cache_name(io->cache));
	if (csv) {
		fprintf(out, ",%s,", an_op_name(io->op));
		csv_field(out, an_names_dev(names, io->dev, dev, sizeof(dev)));
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%u,%u,", io->sector, io->bytes, io->pid, io->tid);
		csv_field(out, an_names_comm(names, io->pid));
		putc(',', out);
		csv_field(out, an_names_file(names, io, file, sizeof(file)));
		fprintf(out, ",%u,%d,%u,", io->merges, !!(io->flags & AN_IO_SPLIT), io->requeues);
		csv_field(out, origin->host);
		putc('\n', out);
		return;
	}
	fprintf(out, " %-6s %-8s %12" PRIu64 " %8" PRIu64 " %7u %7u %-15s ", an_op_name(io->op),
		text_shown(an_names_dev(names, io->dev, dev, sizeof(dev)), shown[0], sizeof(shown[0])),
		io->sector, io->bytes, io->pid, io->tid,
		text_shown(an_names_comm(names, io->pid), shown[1], sizeof(shown[1])));
	if (show_host)
		fprintf(out, "%-15s ", text_shown(origin->host, shown[2], sizeof(shown[2])));
	fprintf(out, "%s%s%s%s\n", text_shown(an_names_file(names, io, file, sizeof(file)), shown[0],
					      sizeof(shown[0])),
		(io->flags & AN_IO_MERGED) ? " merged" : "", (io->flags & AN_IO_SPLIT) ? " split" : "",
		io->requeues ? " requeued" : "");
}

void an_top_print(struct an_top *t, const struct an_span_defs *spans, const struct an_origin *origins,
		  int show_host, FILE *out, int csv, uint64_t t0)
{
	enum an_stage stages[NBREAK + NCAUSE + 1];
	int why = top_has_causes(t);
	size_t i, n = top_stages(t, why, stages);

	qsort_r(t->heap, t->n, sizeof(*t->heap), cmp_slowest, &t->stage);
	if (csv) {
		fprintf(out, "rank,start_s");
		for (i = 0; i < n; i++)
			fprintf(out, ",%s_us", an_stage_name(spans, stages[i]));
		fprintf(out, "%s,op,dev,sector,bytes,pid,tid,comm,file,merged,split,requeues,host\n",
			why ? ",cache" : "");
	} else {
		fprintf(out, "%4s %10s", "#", "start_s");
		for (i = 0; i < n; i++)
			fprintf(out, " %9s", an_stage_name(spans, stages[i]));
		if (why)
			fprintf(out, " %-6s", "cache");
		fprintf(out, " %-6s %-8s %12s %8s %7s %7s %-15s ", "op", "dev", "sector", "bytes",
			"pid", "tid", "comm");
		if (show_host)
			fprintf(out, "%-15s ", "host");
		fprintf(out, "file\n");
	}
	for (i = 0; i < t->n; i++)
		print_top_row(t, why, &t->heap[i], i + 1, &origins[t->heap[i].recording], show_host, out,
			      csv, t0);
}

void an_top_merge(struct an_top *dst, const struct an_top *src)
{
	size_t i;

	/* an_top_add() counts again the ones it is given. */
	dst->above += src->above - src->n;
	for (i = 0; i < src->n; i++)
		an_top_add(dst, &src->heap[i]);
}

/* ---- slowest I/Os in one pass -------------------------------------------- */

int an_slowest_init(struct an_slowest *s, size_t cap)
{
	memset(s, 0, sizeof(*s));
	s->cap = cap ? cap : 1;
	/* Untouched pages cost nothing: only as many as I/Os arrive are used. */
	s->heap = calloc(s->cap, sizeof(*s->heap));
	return s->heap ? 0 : -1;
}

void an_slowest_free(struct an_slowest *s)
{
	free(s->heap);
	s->heap = NULL;
}

static void slow_swap(struct an_slow *a, struct an_slow *b)
{
	struct an_slow tmp = *a;

	*a = *b;
	*b = tmp;
}

static void slow_sift_down(struct an_slowest *s)
{
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < s->n && s->heap[l].ns < s->heap[m].ns)
			m = l;
		if (l + 1 < s->n && s->heap[l + 1].ns < s->heap[m].ns)
			m = l + 1;
		if (m == i)
			return;
		slow_swap(&s->heap[i], &s->heap[m]);
		i = m;
	}
}

static void slow_drop(struct an_slowest *s, uint64_t ns)
{
	s->dropped++;
	s->dropped_max = ns > s->dropped_max ? ns : s->dropped_max;
}

void an_slowest_add(struct an_slowest *s, const struct an_io *io, uint64_t ns)
{
	struct an_slow *e;
	size_t i;

	if (s->n < s->cap) {
		i = s->n++;
		e = &s->heap[i];
		e->ns = ns;
		e->seq = s->seen++;
		e->io = *io;
		for (; i && s->heap[(i - 1) / 2].ns > ns; i = (i - 1) / 2)
			slow_swap(&s->heap[i], &s->heap[(i - 1) / 2]);
		return;
	}
	if (ns <= s->heap[0].ns) {
		s->seen++;
		slow_drop(s, ns);
		return;
	}
	slow_drop(s, s->heap[0].ns);
	e = &s->heap[0];
	e->ns = ns;
	e->seq = s->seen++;
	e->io = *io;
	slow_sift_down(s);
}

static int cmp_arrival(const void *a, const void *b)
{
	uint64_t x = ((const struct an_slow *)a)->seq, y = ((const struct an_slow *)b)->seq;

	return (x > y) - (x < y);
}

int an_slowest_replay(struct an_slowest *s, struct an_top *t)
{
	size_t i;

	/* Everything dropped was at most dropped_max: none of it is missed below it. */
	if (s->dropped && s->dropped_max >= t->threshold)
		return -1;
	qsort(s->heap, s->n, sizeof(*s->heap), cmp_arrival);
	for (i = 0; i < s->n; i++)
		an_top_add(t, &s->heap[i].io);
	return 0;
}

void an_slowest_merge(struct an_slowest *dst, struct an_slowest *src)
{
	size_t i;

	/* In src's arrival order, which a replay keeps for ties. */
	qsort(src->heap, src->n, sizeof(*src->heap), cmp_arrival);
	/* What src dropped is dropped from dst too: the replay's check covers both. */
	dst->seen += src->seen - src->n;
	dst->dropped += src->dropped;
	if (src->dropped && src->dropped_max > dst->dropped_max)
		dst->dropped_max = src->dropped_max;
	for (i = 0; i < src->n; i++)
		an_slowest_add(dst, &src->heap[i].io, src->heap[i].ns);
}
