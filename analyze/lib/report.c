/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/cause.h"
#include "analyze/lib/missing.h"
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

static const char *const col_names[AN_COL_COUNT] = { "cache", "op", "dev", "sector", "bytes", "pid",
						     "tid", "comm", "host", "file" };

int an_cols_parse(struct an_cols *c, const char *list, const struct an_span_defs *spans, char *err,
		  size_t cap)
{
	const char *p = list;

	do {
		size_t len = strcspn(p, ",");
		char name[32];
		int k;

		snprintf(name, sizeof(name), "%.*s", (int)len, p);
		if (!strcmp(name, "all"))
			c->wide = 1;
		else if (len < sizeof(name) && (k = an_stage_by_name(spans, name)) >= 0)
			c->stages |= 1u << k;
		else {
			for (k = 0; k < AN_COL_COUNT && strcmp(name, col_names[k]); k++)
				;
			if (k == AN_COL_COUNT || len >= sizeof(name)) {
				snprintf(err, cap, "--columns %s: %.*s is not a stage, span, all or one of cache, "
					 "op, dev, sector, bytes, pid, tid, comm, host, file", list, (int)len, p);
				return -1;
			}
			c->fields |= 1u << k;
		}
		p += len;
	} while (*p++);
	return 0;
}

int an_cols_show(const struct an_cols *cols, unsigned k, uint64_t max)
{
	return max > 0 || (cols && (cols->wide || cols->stages & 1u << k));
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
		if (sg->first && (!dg->first || sg->first < dg->first))
			dg->first = sg->first;
		dg->last = sg->last > dg->last ? sg->last : dg->last;
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
	enum an_ts from, to;

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
	an_io_stage_ends(io, AN_ST_TOTAL, &from, &to);
	if (io->start && (!g->first || io->start < g->first))
		g->first = io->start;
	g->last = io->ts[to] > g->last ? io->ts[to] : g->last;
	/* each built-in stage's sketch at an offset the compiler knows, behind its own test */
	an_io_each_stage(io, add_stage, &sink);
}

void an_stats_drop(struct an_stats *s, unsigned mask)
{
	for (uint32_t g = 0; g < s->ngroups; g++)
		for (unsigned k = 0; k < AN_ST_SPAN0; k++) {
			struct an_group *gr = &s->groups[g];

			if (!(mask & 1u << k))
				continue;
			an_qest_free(&gr->st[k]);
			an_qest_init(&gr->st[k], s->exact_limit);
			if (k >= AN_ST_RUNQ && k < AN_ST_OTHER)
				gr->zero_causes[k - AN_ST_RUNQ] = 0;
		}
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

static void print_stage_row(struct an_qest *e, FILE *out, int csv, const char *busy_s)
{
	unsigned i;

	fprintf(out, csv ? ",%" PRIu64 ",%.3f,%.3f" : " %8" PRIu64 " %9.1f %9.1f", e->n,
		an_us(e->min), an_us(e->sum / e->n));
	for (i = 0; i < NQ; i++)
		fprintf(out, csv ? ",%.3f" : " %9.1f", an_us(an_qest_quantile(e, report_q[i])));
	if (csv)
		fprintf(out, ",%.3f,%s,%s\n", an_us(e->max), an_qest_is_exact(e) ? "exact" : "sketch",
			busy_s);
	else
		fprintf(out, " %9.1f\n", an_us(e->max));
}

double an_group_busy_s(const struct an_group *g)
{
	return g->last > g->first && g->first ? (double)(g->last - g->first) / 1e9 : 0;
}

static void print_group(struct an_group *g, const struct an_span_defs *spans, const struct an_cols *cols,
			FILE *out, int csv, double span)
{
	double busy = an_group_busy_s(g);
	double secs = busy > 0 ? busy : span;
	double iops = secs > 0 ? g->count / secs : 0, mbs = secs > 0 ? g->bytes / secs / 1e6 : 0;
	char busy_s[32] = "";
	/* the causes' names are longer; a group without them keeps its columns */
	int w = g->st[AN_ST_OTHER].n || g->st[AN_ST_RUNQ].n ? 8 : 6;
	char shown[TEXT_SHOWN_MAX];
	int k;

	if (busy > 0)
		snprintf(busy_s, sizeof(busy_s), "%.6f", busy);
	if (!csv) {
		fprintf(out, "\n%s: %" PRIu64 " I/Os, %.1f IOPS, %.2f MB/s over %.4g s %s (of %.3f s), avg %.0f B; "
			"merged %" PRIu64 ", split %" PRIu64 ", requeues %" PRIu64 ", errors %" PRIu64
			", incomplete %" PRIu64 "\n", text_shown(g->label, shown, sizeof(shown)), g->count, iops,
			mbs, secs, busy > 0 ? "busy" : "recorded", span,
			g->count ? (double)g->bytes / g->count : 0.0, g->merged, g->split, g->requeues,
			g->errors, g->incomplete);
		if (g->unjoined)
			fprintf(out, "  %" PRIu64 " without their block I/O joined (block stages missing; "
				"fsync: no device flush joined)\n", g->unjoined);
		fprintf(out, "  %-*s %8s %9s %9s %9s %9s %9s %9s %9s %9s  (us)\n", w, "stage", "n",
			"min", "avg", "p50", "p90", "p99", "p99.9", "p99.95", "max");
	}
	for (k = 0; k < AN_ST_COUNT; k++) {
		/* not measured: no row; in text, none for a stage at 0 throughout either */
		if (!g->st[k].n || (!csv && !an_cols_show(cols, (unsigned)k, g->st[k].max)))
			continue;
		if (csv) {
			csv_field(out, g->label);
			fprintf(out, ",%" PRIu64 ",%.3f,%.4f,%" PRIu64 ",%" PRIu64 ",%s", g->count, iops,
				mbs, g->incomplete, g->errors, an_stage_name(spans, k));
		} else
			fprintf(out, "  %-*s", w, an_stage_name(spans, k));
		print_stage_row(&g->st[k], out, csv, busy_s);
	}
	if (csv && !g->count) {
		csv_field(out, g->label);
		fprintf(out, ",0,0,0,%" PRIu64 ",%" PRIu64 ",,0,,,,,,,,,,\n", g->incomplete, g->errors);
	}
}

void an_stats_print(struct an_stats *s, const struct an_span_defs *spans, const struct an_cols *cols,
		    FILE *out, int csv, uint64_t duration_ns)
{
	double secs = duration_ns / 1e9;
	uint32_t g;

	if (csv)
		fprintf(out, "group,ios,iops,mb_s,incomplete,errors,stage,n,min_us,avg_us,p50_us,"
			"p90_us,p99_us,p99_9_us,p99_95_us,max_us,quantiles,busy_s\n");
	for (g = 0; g < s->ngroups; g++)
		print_group(&s->groups[g], spans, cols, out, csv, secs);
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
	/* Grown as I/Os come: a --top far above the I/Os costs nothing. */
	t->cap = max < 64 ? (max ? max : 1) : 64;
	t->heap = calloc(t->cap, sizeof(*t->heap));
	return t->heap ? 0 : -1;
}

static int top_grow(struct an_top *t)
{
	size_t cap = t->cap <= t->max / 2 ? 2 * t->cap : t->max;
	struct an_io *heap = reallocarray(t->heap, cap, sizeof(*heap));

	if (!heap)
		return -1;
	t->heap = heap;
	t->cap = cap;
	return 0;
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
		if (t->n == t->cap && top_grow(t)) {
			t->failed = 1;
			return;
		}
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
	AN_ST_REAP, AN_ST_RUNQ, AN_ST_SVC_RUNQ, AN_ST_LOCK, AN_ST_THROTTLE, AN_ST_DIRTY,
	AN_ST_RECLAIM, AN_ST_OTHER,
};
#define NBREAK (sizeof(breakdown) / sizeof(breakdown[0]))

/* The stages of the list: the breakdown and the span it ranks by, if it is one. */
static unsigned top_stages(const struct an_top *t, enum an_stage stages[NBREAK + 1])
{
	unsigned n = NBREAK;

	memcpy(stages, breakdown, sizeof(breakdown));
	if (t->stage >= AN_ST_SPAN0)
		stages[n++] = t->stage;
	return n;
}

/* Width in text of each column (an_col), its separator included. */
static const unsigned col_width[AN_COL_COUNT] = { 7, 7, 9, 13, 9, 8, 8, 16, 16, 0 };
/* The file's least width before stages are left out, and a stage's. */
#define FILE_MIN_WIDTH	24
#define STAGE_WIDTH	10

/* The text list's columns: 1 << an_col. */
static unsigned text_fields(const struct an_top *t, const struct an_cols *cols, int show_host)
{
	unsigned f = (1u << AN_COL_COUNT) - 1;
	int cache = 0;

	if (cols && cols->wide)
		return show_host ? f : f & ~(1u << AN_COL_HOST);
	for (size_t i = 0; i < t->n; i++)
		cache |= t->heap[i].cache != AN_CACHE_UNKNOWN;
	f &= ~(1u << AN_COL_TID | 1u << AN_COL_HOST | (cache ? 0 : 1u << AN_COL_CACHE));
	return f | (show_host ? 1u << AN_COL_HOST : 0) | (cols ? cols->fields : 0);
}

/*
 * Of stages[n], those the text shows (an_cols_show of their largest value
 * in the list), in place; by default, when the line would pass
 * AN_TEXT_WIDTH, less those with the least time in the list (never total
 * or the ranked stage), counted in *left_out. Returns how many remain.
 */
static unsigned text_stages(const struct an_top *t, const struct an_cols *cols, unsigned fields,
			    enum an_stage *stages, unsigned n, unsigned *left_out)
{
	uint64_t max[NBREAK + 1] = { 0 }, sum[NBREAK + 1] = { 0 };
	unsigned width = 15 + FILE_MIN_WIDTH, room, kept = 0, i, k;

	for (size_t j = 0; j < t->n; j++)
		for (i = 0; i < n; i++) {
			uint64_t ns;

			if (an_io_stage(&t->heap[j], stages[i], &ns)) {
				max[i] = ns > max[i] ? ns : max[i];
				sum[i] += ns;
			}
		}
	for (k = 0; k < AN_COL_COUNT; k++)
		width += fields & 1u << k ? col_width[k] : 0;
	room = width < AN_TEXT_WIDTH ? (AN_TEXT_WIDTH - width) / STAGE_WIDTH : 0;
	*left_out = 0;
	for (i = 0; i < n; i++)
		if (an_cols_show(cols, stages[i], max[i]))
			stages[kept] = stages[i], max[kept] = max[i], sum[kept++] = sum[i];
	while (!(cols && (cols->wide || cols->stages || cols->fields)) && kept > room) {
		unsigned least = kept;

		for (i = 0; i < kept; i++)
			if (stages[i] != AN_ST_TOTAL && stages[i] != t->stage &&
			    (least == kept || sum[i] < sum[least]))
				least = i;
		if (least == kept)
			break;
		memmove(&stages[least], &stages[least + 1], (kept - least - 1) * sizeof(*stages));
		memmove(&sum[least], &sum[least + 1], (kept - least - 1) * sizeof(*sum));
		kept--;
		(*left_out)++;
	}
	return kept;
}

/* snprintf at *len into line[cap], *len moved past it (held at cap - 1). */
static void __attribute__((format(printf, 4, 5))) put(char *line, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < cap ? *len + (size_t)n : cap - 1;
}

/* The line, then the text s, cut at its start to end the line by AN_TEXT_WIDTH unless wide. */
static void put_last(FILE *out, const char *line, size_t len, const char *s, int wide)
{
	size_t n = strlen(s);

	if (!wide && len + n > AN_TEXT_WIDTH && len + 4 < AN_TEXT_WIDTH)
		fprintf(out, "%s...%s\n", line, s + n - (AN_TEXT_WIDTH - len - 3));
	else
		fprintf(out, "%s%s\n", line, s);
}

static void print_top_csv(const enum an_stage *stages, unsigned n, const struct an_io *io, size_t rank,
			  const struct an_origin *origin, FILE *out, uint64_t t0)
{
	const struct an_names *names = origin->names;
	unsigned i;
	char dev[32], file[128];
	uint64_t ns;

	fprintf(out, "%zu,%.6f", rank, (io->start - t0) / 1e9);
	for (i = 0; i < n; i++) {
		/* a stage its kernel could not give: no value, not 0 (the header says why) */
		if (!(origin->missing & 1u << stages[i]) && an_io_stage(io, stages[i], &ns))
			fprintf(out, ",%.3f", an_us(ns));
		else
			putc(',', out);
	}
	fprintf(out, ",%s,%s,", io->cache == AN_CACHE_UNKNOWN || origin->missing & AN_MISSING_CACHE ? "" :
		an_cache_name(io->cache),
		an_op_name(io->op));
	csv_field(out, an_names_dev(names, io->dev, dev, sizeof(dev)));
	fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%u,%u,", io->sector, io->bytes, io->pid, io->tid);
	csv_field(out, an_names_comm(names, io->pid));
	putc(',', out);
	csv_field(out, an_names_file(names, io, file, sizeof(file)));
	fprintf(out, ",%u,%d,%u,", io->merges, !!(io->flags & AN_IO_SPLIT), io->requeues);
	csv_field(out, origin->host);
	putc('\n', out);
}

static void print_top_text(const enum an_stage *stages, unsigned n, unsigned fields, int wide,
			   const struct an_io *io, size_t rank, const struct an_origin *origin, FILE *out,
			   uint64_t t0)
{
	const struct an_names *names = origin->names;
	char line[1024], dev[32], file[TEXT_SHOWN_MAX + 32], name[128], shown[TEXT_SHOWN_MAX];
	size_t len = 0;
	uint64_t ns;

	put(line, sizeof(line), &len, "%4zu %10.6f", rank, (io->start - t0) / 1e9);
	for (unsigned i = 0; i < n; i++) {
		if (!(origin->missing & 1u << stages[i]) && an_io_stage(io, stages[i], &ns))
			put(line, sizeof(line), &len, " %9.1f", an_us(ns));
		else
			put(line, sizeof(line), &len, " %9s", "-");
	}
	if (fields & 1u << AN_COL_CACHE)
		put(line, sizeof(line), &len, " %-6s",
		    origin->missing & AN_MISSING_CACHE ? "-" : an_cache_name(io->cache));
	if (fields & 1u << AN_COL_OP)
		put(line, sizeof(line), &len, " %-6s", an_op_name(io->op));
	if (fields & 1u << AN_COL_DEV)
		put(line, sizeof(line), &len, " %-8s",
		    text_shown(an_names_dev(names, io->dev, dev, sizeof(dev)), shown, sizeof(shown)));
	if (fields & 1u << AN_COL_SECTOR)
		put(line, sizeof(line), &len, " %12" PRIu64, io->sector);
	if (fields & 1u << AN_COL_BYTES)
		put(line, sizeof(line), &len, " %8" PRIu64, io->bytes);
	if (fields & 1u << AN_COL_PID)
		put(line, sizeof(line), &len, " %7u", io->pid);
	if (fields & 1u << AN_COL_TID)
		put(line, sizeof(line), &len, " %7u", io->tid);
	if (fields & 1u << AN_COL_COMM)
		put(line, sizeof(line), &len, " %-15s",
		    text_shown(an_names_comm(names, io->pid), shown, sizeof(shown)));
	if (fields & 1u << AN_COL_HOST)
		put(line, sizeof(line), &len, " %-15s", text_shown(origin->host, shown, sizeof(shown)));
	put(line, sizeof(line), &len, " ");
	if (!(fields & 1u << AN_COL_FILE)) {
		fprintf(out, "%.*s\n", (int)(len - 1), line);
		return;
	}
	snprintf(file, sizeof(file), "%s%s%s%s",
		 text_shown(an_names_file(names, io, name, sizeof(name)), shown, sizeof(shown)),
		 (io->flags & AN_IO_MERGED) ? " merged" : "", (io->flags & AN_IO_SPLIT) ? " split" : "",
		 io->requeues ? " requeued" : "");
	put_last(out, line, len, file, wide);
}

void an_top_print(struct an_top *t, const struct an_span_defs *spans, const struct an_origin *origins,
		  int show_host, const struct an_cols *cols, FILE *out, int csv, uint64_t t0)
{
	enum an_stage stages[NBREAK + 1];
	unsigned n = top_stages(t, stages), fields = 0, left_out = 0, k;
	int wide = cols && cols->wide;
	char line[1024];
	size_t i, len = 0;

	qsort_r(t->heap, t->n, sizeof(*t->heap), cmp_slowest, &t->stage);
	if (csv) {
		fprintf(out, "rank,start_s");
		for (i = 0; i < n; i++)
			fprintf(out, ",%s_us", an_stage_name(spans, stages[i]));
		fprintf(out, ",cache,op,dev,sector,bytes,pid,tid,comm,file,merged,split,requeues,host\n");
		for (i = 0; i < t->n; i++)
			print_top_csv(stages, n, &t->heap[i], i + 1, &origins[t->heap[i].recording], out, t0);
		return;
	}
	fields = text_fields(t, cols, show_host);
	n = text_stages(t, cols, fields, stages, n, &left_out);
	if (left_out)
		fprintf(out, "(%u stage columns with the least time left out: --wide or --columns)\n",
			left_out);
	put(line, sizeof(line), &len, "%4s %10s", "#", "start_s");
	for (i = 0; i < n; i++)
		put(line, sizeof(line), &len, " %9s", an_stage_name(spans, stages[i]));
	for (k = 0; k < AN_COL_FILE; k++) {
		static const char *const fmt[AN_COL_COUNT] = { " %-6s", " %-6s", " %-8s", " %12s", " %8s",
								 " %7s", " %7s", " %-15s", " %-15s" };

		if (fields & 1u << k)
			put(line, sizeof(line), &len, fmt[k], col_names[k]);
	}
	fprintf(out, "%s%s\n", line, fields & 1u << AN_COL_FILE ? " file" : "");
	for (i = 0; i < t->n; i++)
		print_top_text(stages, n, fields, wide, &t->heap[i], i + 1, &origins[t->heap[i].recording],
			       out, t0);
}

void an_top_merge(struct an_top *dst, const struct an_top *src)
{
	size_t i;

	/* an_top_add() counts again the ones it is given. */
	dst->above += src->above - src->n;
	dst->failed |= src->failed;
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
