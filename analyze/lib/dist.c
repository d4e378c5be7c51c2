/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/dist.h"
#include "analyze/lib/span.h"
#include "common/csv.h"
#include "common/text.h"

void an_dist_init(struct an_dist *d, unsigned want, enum an_by by, enum an_stage stage,
		  const struct an_names *names)
{
	memset(d, 0, sizeof(*d));
	d->want = want;
	d->by = by;
	d->stage = stage;
	d->names = names;
	if (an_idmap_init(&d->index, 64))
		d->failed = 1;
}

void an_dist_free(struct an_dist *d)
{
	size_t i;

	for (i = 0; i < d->ndepths; i++)
		free(d->depths[i].ns);
	free(d->depths);
	free(d->seeks);
	free(d->rqs);
	free(d->groups);
	an_idmap_free(&d->index);
	memset(d, 0, sizeof(*d));
}

/* The group labelled `label`, made when missing; NULL when out of memory. */
static struct an_dist_group *group_by_label(struct an_dist *d, const char *label)
{
	uint64_t key = an_label_hash(label) | 1ull << 63;
	uint32_t g = an_idmap_get(&d->index, key);
	struct an_dist_group *gr;

	/* Two labels of one hash: the second is found by a scan. */
	if (g != AN_NONE && strcmp(d->groups[g].label, label))
		for (g = 0; g < d->ngroups && strcmp(d->groups[g].label, label); g++)
			;
	if (g != AN_NONE && g < d->ngroups)
		return &d->groups[g];
	if (d->ngroups == d->gcap) {
		uint32_t cap = d->gcap ? d->gcap * 2 : 16;
		struct an_dist_group *p = realloc(d->groups, cap * sizeof(*p));

		if (!p)
			return NULL;
		d->groups = p;
		d->gcap = cap;
	}
	if (an_idmap_get(&d->index, key) == AN_NONE && an_idmap_put(&d->index, key, d->ngroups))
		return NULL;
	gr = &d->groups[d->ngroups++];
	memset(gr, 0, sizeof(*gr));
	snprintf(gr->label, sizeof(gr->label), "%s", label);
	return gr;
}

/* count more I/Os of `bytes` among the exact sizes of g, or its other sizes when they are full. */
static void add_size(struct an_dist_group *g, uint64_t bytes, uint64_t count)
{
	unsigned i;

	for (i = 0; i < g->nsizes && g->size_value[i] != bytes; i++)
		;
	if (i == AN_DIST_SIZES) {
		g->size_other += count;
		return;
	}
	if (i == g->nsizes)
		g->size_value[g->nsizes++] = bytes;
	g->size_count[i] += count;
}

static void count_size(struct an_dist_group *g, uint64_t bytes)
{
	g->size.slot[an_log2_slot(bytes)]++;
	g->size.n++;
	add_size(g, bytes, 1);
}

static int keep_request(struct an_dist *d, const struct an_io *io)
{
	struct an_dist_rq *rq;

	if (d->nrqs == d->rqcap) {
		size_t cap = d->rqcap ? d->rqcap * 2 : 1024;
		struct an_dist_rq *p = realloc(d->rqs, cap * sizeof(*p));

		if (!p)
			return -1;
		d->rqs = p;
		d->rqcap = cap;
	}
	rq = &d->rqs[d->nrqs++];
	*rq = (struct an_dist_rq){
		.issue = io->ts[AN_TS_ISSUE],
		.complete = io->ts[AN_TS_COMPLETE] >= io->ts[AN_TS_ISSUE] ? io->ts[AN_TS_COMPLETE] : 0,
		.sector = io->sector, .sectors = (uint32_t)(io->blk_bytes >> 9), .dev = io->dev,
		.pid = io->pid, .recording = io->recording, .op = io->op,
	};
	return 0;
}

void an_dist_add(struct an_dist *d, const struct an_io *io)
{
	/*
	 * A request's I/O: issued on a device, and not made only of bios merged
	 * into another I/O's request (that one counts it). Its size and place
	 * are known at its issue: an I/O whose completion the trace lacks (the
	 * kernel now and then runs no completion probe, or the trace ends
	 * first) still counts in sizes and seeks, as btt counts every D; its
	 * latency and its time in flight are unknown.
	 */
	int request = io->ts[AN_TS_ISSUE] && io->dev &&
		      (!(io->flags & AN_IO_MERGED) || io->ts[AN_TS_GETRQ]);
	int complete = !(io->flags & AN_IO_INCOMPLETE);
	struct an_dist_group *g = NULL;
	char label[128];
	uint64_t ns;

	if (io->span || !(complete || request))
		return;
	if (d->want & (AN_DIST_SIZE | AN_DIST_HIST)) {
		an_group_label(d->by, d->names, d->host, io, label, sizeof(label));
		if (!(g = group_by_label(d, label))) {
			d->failed = 1;
			return;
		}
	}
	/* The bytes of its bios; an I/O that reached no device, the bytes its call moved. */
	if ((d->want & AN_DIST_SIZE) && (io->blk_bytes || io->bytes))
		count_size(g, io->blk_bytes ? io->blk_bytes : io->bytes);
	if ((d->want & AN_DIST_HIST) && complete && an_io_stage(io, d->stage, &ns)) {
		g->lat.slot[an_log2_slot(ns / 1000)]++;
		g->lat.n++;
	}
	if ((d->want & (AN_DIST_SEEK | AN_DIST_DEPTH)) && request && keep_request(d, io))
		d->failed = 1;
}

static void log2_add(struct an_log2 *dst, const struct an_log2 *src)
{
	for (unsigned k = 0; k < AN_LOG2_SLOTS; k++)
		dst->slot[k] += src->slot[k];
	dst->n += src->n;
}

int an_dist_merge(struct an_dist *dst, struct an_dist *src)
{
	uint32_t g;
	unsigned i;

	for (g = 0; g < src->ngroups; g++) {
		struct an_dist_group *sg = &src->groups[g], *dg = group_by_label(dst, sg->label);

		if (!dg)
			return -1;
		log2_add(&dg->lat, &sg->lat);
		for (i = 0; i < sg->nsizes; i++)
			add_size(dg, sg->size_value[i], sg->size_count[i]);
		log2_add(&dg->size, &sg->size);
		dg->size_other += sg->size_other;
	}
	if (src->nrqs) {
		struct an_dist_rq *p = realloc(dst->rqs, (dst->nrqs + src->nrqs) * sizeof(*p));

		if (!p)
			return -1;
		memcpy(p + dst->nrqs, src->rqs, src->nrqs * sizeof(*p));
		dst->rqs = p;
		dst->nrqs += src->nrqs;
		dst->rqcap = dst->nrqs;
	}
	return 0;
}

static int cmp_group(const void *a, const void *b)
{
	return strcmp(((const struct an_dist_group *)a)->label,
		      ((const struct an_dist_group *)b)->label);
}

static int cmp_issue(const void *a, const void *b)
{
	const struct an_dist_rq *x = a, *y = b;

	if (x->issue != y->issue)
		return x->issue < y->issue ? -1 : 1;
	return x->complete < y->complete ? -1 : x->complete > y->complete;
}

static int same_seek(const struct an_dist_seek *s, uint16_t recording, uint32_t dev, uint32_t pid,
		     uint8_t op)
{
	return s->recording == recording && s->dev == dev && s->pid == pid && s->op == op;
}

/*
 * The entry of (recording, dev, pid, op), made when missing: op AN_OP_COUNT
 * is a sequence (the previous request, pid 0 the device's), another op the
 * counts of that op's requests in it. Its index, or -1 (out of memory).
 */
static long seek_entry(struct an_dist *d, struct an_idmap *map, uint16_t recording, uint32_t dev,
		       uint32_t pid, uint8_t op)
{
	uint64_t key = ((uint64_t)recording << 48 ^ (uint64_t)dev << 16 ^ (uint64_t)op << 8 ^
			(uint64_t)pid * 0x9e3779b97f4a7c15ull) | 1ull << 63;
	uint32_t i = an_idmap_get(map, key);
	struct an_dist_seek *s;

	if (i != AN_NONE) {
		if (same_seek(&d->seeks[i], recording, dev, pid, op))
			return i;
		/* A key two entries share: the second is found by a scan. */
		for (i = 0; i < d->nseeks && !same_seek(&d->seeks[i], recording, dev, pid, op); i++)
			;
		if (i < d->nseeks)
			return i;
	}
	if (d->nseeks == d->seekcap) {
		size_t cap = d->seekcap ? d->seekcap * 2 : 16;
		struct an_dist_seek *p = realloc(d->seeks, cap * sizeof(*p));

		if (!p)
			return -1;
		d->seeks = p;
		d->seekcap = cap;
	}
	if (an_idmap_get(map, key) == AN_NONE && an_idmap_put(map, key, (uint32_t)d->nseeks))
		return -1;
	s = &d->seeks[d->nseeks];
	memset(s, 0, sizeof(*s));
	s->recording = recording;
	s->dev = dev;
	s->pid = pid;
	s->op = op;
	return (long)d->nseeks++;
}

/* A distance in sectors as a signed one: a hostile file's, past 2^63, held at the largest. */
static int64_t seek_sectors(uint64_t n)
{
	return n > INT64_MAX ? INT64_MAX : (int64_t)n;
}

/*
 * btt's seek distance (btt/seek.c, not absolute mode): 0 when the request
 * overlaps or touches the previous one, forward from its end, backward from
 * its start; the first request of a sequence is measured from sector 0.
 */
static int64_t seek_distance(struct an_dist_seek *s, const struct an_dist_rq *rq)
{
	uint64_t start = rq->sector, end = rq->sector + rq->sectors;
	int64_t dist;

	if ((s->last_start <= start && start <= s->last_end) ||
	    (s->last_start <= end && end <= s->last_end))
		dist = 0;
	else if (start > s->last_end)
		dist = seek_sectors(start - s->last_end);
	else
		dist = -seek_sectors(s->last_start - start);
	s->last_start = start;
	s->last_end = end;
	return dist;
}

static void seek_count(struct an_dist_seek *row, int64_t dist)
{
	struct an_log2 *h = dist > 0 ? &row->fwd : &row->back;

	if (!dist) {
		row->zero++;
		return;
	}
	h->slot[an_log2_slot(dist > 0 ? (uint64_t)dist : (uint64_t)-dist)]++;
	h->n++;
}

/* The requests in issue order, each in its device's sequence and its process's on the device. */
static int sweep_seeks(struct an_dist *d)
{
	struct an_idmap map;
	int ret = -1;

	if (an_idmap_init(&map, 64))
		return -1;
	for (size_t i = 0; i < d->nrqs; i++) {
		const struct an_dist_rq *rq = &d->rqs[i];

		for (int per_pid = 0; per_pid < 2; per_pid++) {
			uint32_t pid = per_pid ? rq->pid : 0;
			long seq = seek_entry(d, &map, rq->recording, rq->dev, pid, AN_OP_COUNT);
			long row = seq < 0 ? -1 : seek_entry(d, &map, rq->recording, rq->dev, pid, rq->op);

			if (row < 0)
				goto out;
			seek_count(&d->seeks[row], seek_distance(&d->seeks[seq], rq));
		}
	}
	ret = 0;
out:
	an_idmap_free(&map);
	return ret;
}

struct depth_event {
	uint64_t ts;
	uint32_t depth;		/* index into d->depths */
	int32_t delta;		/* +1 issue, -1 completion */
};

static int cmp_event(const void *a, const void *b)
{
	const struct depth_event *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->delta - y->delta;	/* a completion first: the same time adds none */
}

static int depth_time(struct an_dist_depth *dp, uint64_t until)
{
	if (dp->now >= dp->cap) {
		uint32_t cap = dp->cap ? dp->cap * 2 : 64;
		uint64_t *p;

		while (cap <= dp->now)
			cap *= 2;
		if (!(p = realloc(dp->ns, cap * sizeof(*p))))
			return -1;
		memset(p + dp->cap, 0, (cap - dp->cap) * sizeof(*p));
		dp->ns = p;
		dp->cap = cap;
	}
	if (until > dp->last_ts) {
		dp->ns[dp->now] += until - dp->last_ts;
		dp->last_ts = until;
	}
	return 0;
}

static int sweep_depth(struct an_dist *d)
{
	struct depth_event *ev = malloc((2 * d->nrqs + 1) * sizeof(*ev));
	struct an_idmap map;
	size_t i, n = 0;
	int ret = -1;

	if (!ev || an_idmap_init(&map, 16)) {
		free(ev);
		return -1;
	}
	for (i = 0; i < d->nrqs; i++) {
		const struct an_dist_rq *rq = &d->rqs[i];
		uint64_t key = ((uint64_t)rq->recording << 32 | rq->dev) | 1ull << 63, from, to;
		uint32_t k;

		if (!rq->complete)	/* in flight until an end the trace does not hold */
			continue;
		k = an_idmap_get(&map, key);

		if (k == AN_NONE) {
			struct an_dist_depth *p = realloc(d->depths, (d->ndepths + 1) * sizeof(*p));

			if (!p)
				goto out;
			d->depths = p;
			k = (uint32_t)d->ndepths++;
			d->depths[k] = (struct an_dist_depth){ .dev = rq->dev, .recording = rq->recording,
							       .last_ts = d->t0 };
			if (an_idmap_put(&map, key, k))
				goto out;
		}
		d->depths[k].requests++;
		/*
		 * In flight inside the span only. A request with no time there
		 * (a completion dated at or before its issue: a hostile file or
		 * skewed clocks) adds none: its completion would sort first and
		 * take the depth below zero.
		 */
		from = rq->issue < d->t0 ? d->t0 : rq->issue;
		to = rq->complete > d->t1 ? d->t1 : rq->complete;
		if (from < to) {
			ev[n++] = (struct depth_event){ from, k, 1 };
			ev[n++] = (struct depth_event){ to, k, -1 };
		}
	}
	qsort(ev, n, sizeof(*ev), cmp_event);
	for (i = 0; i < n; i++) {
		struct an_dist_depth *dp = &d->depths[ev[i].depth];

		if (depth_time(dp, ev[i].ts))
			goto out;
		dp->now += ev[i].delta;
		if (dp->now > dp->max)
			dp->max = dp->now;
	}
	for (i = 0; i < d->ndepths; i++)
		if (depth_time(&d->depths[i], d->t1))
			goto out;
	ret = 0;
out:
	an_idmap_free(&map);
	free(ev);
	return ret;
}

int an_dist_finish(struct an_dist *d, uint64_t t0, uint64_t t1)
{
	if (d->ngroups)
		qsort(d->groups, d->ngroups, sizeof(*d->groups), cmp_group);
	d->t0 = t0;
	d->t1 = t1 > t0 ? t1 : t0 + 1;
	if (d->nrqs)
		qsort(d->rqs, d->nrqs, sizeof(*d->rqs), cmp_issue);
	if ((d->want & AN_DIST_SEEK) && sweep_seeks(d))
		return -1;
	if ((d->want & AN_DIST_DEPTH) && sweep_depth(d))
		return -1;
	return 0;
}

/* ---- output -------------------------------------------------------------- */

/* The values slot k of an an_log2 holds. */
static uint64_t slot_lo(int k)
{
	return k ? (uint64_t)1 << k : 0;
}

static uint64_t slot_hi(int k)
{
	return ((uint64_t)2 << k) - 1;
}

/* biolatency's bar: 40 columns for the largest slot. */
static void print_bar(FILE *out, uint64_t v, uint64_t max)
{
	int stars = max ? (int)(v * 40 / max) : 0;

	fprintf(out, "|%.*s%*s|\n", stars, "****************************************", 40 - stars, "");
}

/*
 * h in biolatency's layout (libbpf-tools' print_log2_hist), values in
 * `unit`: from slot 0 as it does (from_zero), else from the first slot used.
 */
static void print_log2(FILE *out, const struct an_log2 *h, const char *unit, int from_zero)
{
	int first = -1, last = -1;
	uint64_t max = 0;

	for (int k = 0; k < AN_LOG2_SLOTS; k++)
		if (h->slot[k]) {
			if (first < 0)
				first = k;
			last = k;
			max = h->slot[k] > max ? h->slot[k] : max;
		}
	if (first < 0)
		return;
	fprintf(out, "%5s%-19s : count    distribution\n", "", unit);
	for (int k = from_zero ? 0 : first; k <= last; k++) {
		fprintf(out, "%10" PRIu64 " -> %-10" PRIu64 " : %-8" PRIu64 " ", slot_lo(k),
			slot_hi(k), h->slot[k]);
		print_bar(out, h->slot[k], max);
	}
}

static int cmp_size_count(const void *a, const void *b, void *ctx)
{
	const struct an_dist_group *g = ctx;
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	if (g->size_count[x] != g->size_count[y])
		return g->size_count[x] > g->size_count[y] ? -1 : 1;
	return g->size_value[x] < g->size_value[y] ? -1 : 1;
}

/* The exact sizes of g, most frequent first. */
static unsigned sizes_by_count(const struct an_dist_group *g, unsigned order[AN_DIST_SIZES])
{
	for (unsigned i = 0; i < g->nsizes; i++)
		order[i] = i;
	qsort_r(order, g->nsizes, sizeof(*order), cmp_size_count, (void *)g);
	return g->nsizes;
}

void an_dist_print_sizes(const struct an_dist *d, FILE *out, int csv)
{
	unsigned order[AN_DIST_SIZES];
	char shown[TEXT_SHOWN_MAX];

	if (csv)
		fprintf(out, "group,kind,from_bytes,to_bytes,count,percent\n");
	for (uint32_t g = 0; g < d->ngroups; g++) {
		const struct an_dist_group *gr = &d->groups[g];
		unsigned n;

		if (!gr->size.n)
			continue;
		n = sizes_by_count(gr, order);
		if (csv) {
			for (int k = 0; k < AN_LOG2_SLOTS; k++)
				if (gr->size.slot[k]) {
					csv_field(out, gr->label);
					fprintf(out, ",log2,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.4f\n",
						slot_lo(k), slot_hi(k), gr->size.slot[k],
						100.0 * gr->size.slot[k] / gr->size.n);
				}
			for (unsigned i = 0; i < n; i++) {
				csv_field(out, gr->label);
				fprintf(out, ",size,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.4f\n",
					gr->size_value[order[i]], gr->size_value[order[i]],
					gr->size_count[order[i]],
					100.0 * gr->size_count[order[i]] / gr->size.n);
			}
			if (gr->size_other) {
				csv_field(out, gr->label);
				fprintf(out, ",other,,,%" PRIu64 ",%.4f\n", gr->size_other,
					100.0 * gr->size_other / gr->size.n);
			}
			continue;
		}
		fprintf(out, "\n%s: %" PRIu64 " I/Os, sizes\n", text_shown(gr->label, shown, sizeof(shown)),
			gr->size.n);
		print_log2(out, &gr->size, "bytes", 0);
		fprintf(out, "  %12s %10s %8s\n", "size (B)", "count", "percent");
		for (unsigned i = 0; i < n; i++)
			fprintf(out, "  %12" PRIu64 " %10" PRIu64 " %7.2f%%\n", gr->size_value[order[i]],
				gr->size_count[order[i]], 100.0 * gr->size_count[order[i]] / gr->size.n);
		if (gr->size_other)
			fprintf(out, "  %12s %10" PRIu64 " %7.2f%%\n", "other", gr->size_other,
				100.0 * gr->size_other / gr->size.n);
	}
}

void an_dist_print_hist(const struct an_dist *d, const struct an_span_defs *spans, FILE *out,
			int csv)
{
	char shown[TEXT_SHOWN_MAX];

	if (csv)
		fprintf(out, "group,stage,from_us,to_us,count,percent\n");
	for (uint32_t g = 0; g < d->ngroups; g++) {
		const struct an_dist_group *gr = &d->groups[g];

		if (!gr->lat.n)
			continue;
		if (csv) {
			int last = -1;

			for (int k = 0; k < AN_LOG2_SLOTS; k++)
				if (gr->lat.slot[k])
					last = k;
			for (int k = 0; k <= last; k++) {
				csv_field(out, gr->label);
				fprintf(out, ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.4f\n",
					an_stage_name(spans, d->stage), slot_lo(k), slot_hi(k),
					gr->lat.slot[k], 100.0 * gr->lat.slot[k] / gr->lat.n);
			}
			continue;
		}
		fprintf(out, "\n%s: %s, %" PRIu64 " I/Os\n", text_shown(gr->label, shown, sizeof(shown)),
			an_stage_name(spans, d->stage), gr->lat.n);
		print_log2(out, &gr->lat, "usecs", 1);
	}
}

static void seek_label(const struct an_dist_seek *s, const struct an_origin *origins, char *buf,
		       size_t cap)
{
	char buf_dev[96];
	const struct an_names *names = origins[s->recording].names;
	const char *dev = an_names_dev(names, s->dev, buf_dev, sizeof(buf_dev));

	if (s->pid)
		snprintf(buf, cap, "%s %s pid %u (%s)", dev, an_op_name(s->op), s->pid,
			 an_names_comm(names, s->pid));
	else
		snprintf(buf, cap, "%s %s", dev, an_op_name(s->op));
}

static int cmp_seek(const void *a, const void *b)
{
	const struct an_dist_seek *x = *(const struct an_dist_seek *const *)a;
	const struct an_dist_seek *y = *(const struct an_dist_seek *const *)b;

	if (x->recording != y->recording)
		return x->recording - y->recording;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->op - y->op;
}

void an_dist_print_seeks(const struct an_dist *d, const struct an_origin *origins, FILE *out,
			 int csv)
{
	const struct an_dist_seek **rows = calloc(d->nseeks + 1, sizeof(*rows));
	size_t i, n = 0;
	char label[200], shown[TEXT_SHOWN_MAX];

	if (!rows)
		return;
	for (i = 0; i < d->nseeks; i++)
		if (d->seeks[i].op != AN_OP_COUNT)
			rows[n++] = &d->seeks[i];
	qsort(rows, n, sizeof(*rows), cmp_seek);
	if (csv)
		fprintf(out, "group,direction,from_sectors,to_sectors,count,percent\n");
	for (i = 0; i < n; i++) {
		const struct an_dist_seek *s = rows[i];
		uint64_t total = s->zero + s->fwd.n + s->back.n;

		seek_label(s, origins, label, sizeof(label));
		if (csv) {
			csv_field(out, label);
			fprintf(out, ",zero,0,0,%" PRIu64 ",%.4f\n", s->zero, 100.0 * s->zero / total);
			for (int dir = 0; dir < 2; dir++) {
				const struct an_log2 *h = dir ? &s->fwd : &s->back;

				for (int k = 0; k < AN_LOG2_SLOTS; k++)
					if (h->slot[k]) {
						csv_field(out, label);
						fprintf(out, ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.4f\n",
							dir ? "forward" : "backward", slot_lo(k),
							slot_hi(k), h->slot[k], 100.0 * h->slot[k] / total);
					}
			}
			continue;
		}
		fprintf(out, "\n%s: %" PRIu64 " requests, sequential (distance 0) %" PRIu64
			" = %.2f%%, forward %" PRIu64 ", backward %" PRIu64 "\n",
			text_shown(label, shown, sizeof(shown)), total, s->zero,
			100.0 * s->zero / total, s->fwd.n, s->back.n);
		if (s->fwd.n) {
			fprintf(out, "  forward seeks:\n");
			print_log2(out, &s->fwd, "sectors", 0);
		}
		if (s->back.n) {
			fprintf(out, "  backward seeks:\n");
			print_log2(out, &s->back, "sectors", 0);
		}
	}
	free(rows);
}

double an_dist_depth_mean(const struct an_dist *d, const struct an_dist_depth *dp)
{
	double sum = 0;

	for (uint32_t k = 0; k <= dp->max && k < dp->cap; k++)
		sum += (double)k * dp->ns[k];
	return sum / (double)(d->t1 - d->t0);
}

void an_dist_print_depth(const struct an_dist *d, const struct an_origin *origins, FILE *out,
			 int csv)
{
	double span = (double)(d->t1 - d->t0);
	char buf_dev[96], shown[TEXT_SHOWN_MAX];

	if (csv)
		fprintf(out, "device,depth,time_s,percent\n");
	for (size_t i = 0; i < d->ndepths; i++) {
		const struct an_dist_depth *dp = &d->depths[i];
		const char *dev = an_names_dev(origins[dp->recording].names, dp->dev, buf_dev,
					       sizeof(buf_dev));
		uint64_t max = 0;

		for (uint32_t k = 0; k <= dp->max; k++)
			max = dp->ns[k] > max ? dp->ns[k] : max;
		if (!csv)
			fprintf(out, "\n%s: %" PRIu64 " requests, in flight (issue..completion) on average "
				"%.3f, at most %u, over %.6f s; in-flight time %.6f s\n"
				"  %6s %12s %8s\n", text_shown(dev, shown, sizeof(shown)), dp->requests, an_dist_depth_mean(d, dp), dp->max,
				span / 1e9, an_dist_depth_mean(d, dp) * span / 1e9, "depth", "time (s)",
				"percent");
		for (uint32_t k = 0; k <= dp->max; k++) {
			if (csv) {
				csv_field(out, dev);
				fprintf(out, ",%u,%.9f,%.4f\n", k, dp->ns[k] / 1e9, 100.0 * dp->ns[k] / span);
				continue;
			}
			fprintf(out, "  %6u %12.6f %7.2f%% ", k, dp->ns[k] / 1e9, 100.0 * dp->ns[k] / span);
			print_bar(out, dp->ns[k], max);
		}
	}
}

/* ---- top lists ----------------------------------------------------------- */

static const char *const rank_names[] = { "ios", "bytes", "tail" };

int an_rank_by_name(const char *name)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(name, rank_names[i]))
			return i;
	return -1;
}

const char *an_rank_name(enum an_rank rank)
{
	return rank_names[rank];
}

struct rank_ctx {
	enum an_rank rank;
	enum an_stage stage;
};

static uint64_t rank_value(struct an_group *g, const struct rank_ctx *c)
{
	switch (c->rank) {
	case AN_RANK_IOS:   return g->count;
	case AN_RANK_BYTES: return g->bytes;
	default:            return g->st[c->stage].n ? an_qest_quantile(&g->st[c->stage], 0.99) : 0;
	}
}

static int cmp_rank(const void *a, const void *b, void *ctx)
{
	struct an_group *x = (struct an_group *)a, *y = (struct an_group *)b;
	uint64_t vx = rank_value(x, ctx), vy = rank_value(y, ctx);

	if (vx != vy)
		return vx > vy ? -1 : 1;
	return strcmp(x->label, y->label);
}

void an_stats_keep_top(struct an_stats *s, enum an_rank rank, enum an_stage stage, size_t n)
{
	struct rank_ctx c = { rank, stage };

	if (s->ngroups)
		qsort_r(s->groups, s->ngroups, sizeof(*s->groups), cmp_rank, &c);
	while (s->ngroups > n) {
		struct an_group *g = &s->groups[--s->ngroups];

		for (int k = 0; k < AN_ST_COUNT; k++)
			an_qest_free(&g->st[k]);
	}
}
