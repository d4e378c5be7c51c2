/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/lib/missing.h"
#include "analyze/lib/run.h"
#include "common/text.h"

/* What says which recording a file belongs to, and its time span. */
struct file_id {
	struct st_reader *rd;	/* open until its recording's input takes it */
	char host[128];
	char offset[32];	/* clock.realtime_offset_ns, "" absent */
	int64_t clock_offset, clock_step;
	uint64_t first_ts, last_ts;
	/* a part of st-record --rotate's set: its number (1 the first), 0 none; when it was open */
	uint64_t part, part_from, part_to;
	unsigned rec;
};

static uint64_t meta_u64(const struct st_reader *rd, const char *key, uint64_t absent)
{
	const char *v = st_meta_get(rd, key);

	return v ? strtoull(v, NULL, 10) : absent;
}

/* The first part names the next (record.next_file); the others carry their number. */
static void identify_part(struct file_id *id)
{
	id->part = meta_u64(id->rd, "record.file_index", st_meta_get(id->rd, "record.next_file") ? 1 : 0);
	id->part_from = st_trace_start(id->rd);
	id->part_to = meta_u64(id->rd, "record.end_ts", UINT64_MAX);
}

static void meta_copy(const struct st_reader *rd, const char *key, char *buf, size_t cap)
{
	const char *v = st_meta_get(rd, key);

	snprintf(buf, cap, "%s", v ? v : "");
}

/* The file at path opened, kept in id->rd for its recording's input. */
static int identify(struct file_id *id, const char *path, char *err, size_t cap)
{
	const struct st_file_info *fi;
	struct st_reader *rd;
	int64_t end;

	if (st_reader_open(&id->rd, path, 0)) {
		snprintf(err, cap, "%s: %s", path, id->rd ? st_reader_errmsg(id->rd) : "out of memory");
		return -1;
	}
	rd = id->rd;
	meta_copy(rd, "host.name", id->host, sizeof(id->host));
	if (!id->host[0])
		snprintf(id->host, sizeof(id->host), "?");
	/* offsets within ST_PLAUSIBLE_SPAN_NS: their differences fit */
	if (st_clock_offset(rd, "clock.realtime_offset_ns", &id->clock_offset))
		id->clock_offset = 0;
	else
		meta_copy(rd, "clock.realtime_offset_ns", id->offset, sizeof(id->offset));
	id->clock_step = id->offset[0] && !st_clock_offset(rd, "clock.realtime_offset_end_ns", &end) ?
				 end - id->clock_offset : 0;
	fi = st_reader_info(rd);
	id->first_ts = fi->first_ts;
	id->last_ts = fi->last_ts;
	identify_part(id);
	return 0;
}

/* Do the time spans of a and b, each moved by its shift, overlap? */
static int overlap(const struct file_id *a, int64_t shift_a, const struct file_id *b, int64_t shift_b)
{
	/* in 128 bits: a hostile file's times near 2^64 do not wrap */
	return (__int128)a->first_ts + shift_a <= (__int128)b->last_ts + shift_b &&
	       (__int128)b->first_ts + shift_b <= (__int128)a->last_ts + shift_a;
}

/*
 * Do a and b follow one another, as parts of one recording do? Two parts of
 * a rotating set do when each was open while the other was not: every
 * record goes to the part open as it is drained, however old (a backlog in
 * the ring buffer, drained into the next part, took a part's events back
 * 96 ms into its 98 ms predecessor in t_flight). Other files may overlap a
 * little (events reach a file in per-CPU batches, so one file's last ones
 * can follow the next file's first), but by less than half the shorter one:
 * two recordings made side by side, or the same file again, overlap wholly.
 */
static int follow(const struct file_id *a, const struct file_id *b)
{
	uint64_t from = a->first_ts > b->first_ts ? a->first_ts : b->first_ts;
	uint64_t to = a->last_ts < b->last_ts ? a->last_ts : b->last_ts;
	uint64_t span_a = a->last_ts - a->first_ts, span_b = b->last_ts - b->first_ts;

	if (a->part && b->part && a->part != b->part)
		return a->part_to <= b->part_from || b->part_to <= a->part_from;
	return to < from || (to - from) * 2 < (span_a < span_b ? span_a : span_b);
}

/*
 * Is file i a part of recording rec: the same host and the same clock
 * offset (read once per recording: its slices and rotated files carry it),
 * following each of its files?
 */
static int joins(const struct file_id *ids, int i, unsigned rec)
{
	const struct file_id *f = &ids[i];
	int j;

	for (j = 0; j < i; j++) {
		const struct file_id *g = &ids[j];

		if (g->rec != rec)
			continue;
		if (!f->offset[0] || strcmp(f->host, g->host) || strcmp(f->offset, g->offset) ||
		    !follow(f, g))
			return 0;
	}
	return 1;
}

/*
 * Host labels: host.name, or the file name where two recordings of one host
 * name overlap in wall-clock time (--by host must tell them apart), with
 * " #N" when that is the same file given again.
 */
static void label_hosts(struct an_run *r, const struct file_id *ids, char *const *files,
			const int *first)
{
	unsigned a, b;

	for (a = 0; a < r->nrecs; a++) {
		const struct file_id *fa = &ids[first[a]];

		snprintf(r->recs[a].host, sizeof(r->recs[a].host), "%s", fa->host);
		for (b = 0; b < r->nrecs; b++) {
			const struct file_id *fb = &ids[first[b]];

			if (a != b && !strcmp(fa->host, fb->host) &&
			    overlap(fa, fa->clock_offset, fb, fb->clock_offset)) {
				snprintf(r->recs[a].host, sizeof(r->recs[a].host), "%s", files[first[a]]);
				break;
			}
		}
		for (b = 0; b < a; b++)
			if (!strcmp(r->recs[a].host, r->recs[b].host)) {
				size_t len = strnlen(r->recs[a].host, sizeof(r->recs[a].host) - 12);

				snprintf(r->recs[a].host + len, sizeof(r->recs[a].host) - len, " #%u", a + 1);
				break;
			}
	}
}

/*
 * Open recording rec: the files of ids that belong to it, in the order
 * given, read by the readers identify() opened (its input takes them).
 */
static int open_recording(struct an_run *r, unsigned rec, struct file_id *ids,
			  char *const *files, int nfiles, char *err, size_t cap)
{
	struct an_recording *x = &r->recs[rec];
	char **paths = calloc((size_t)nfiles, sizeof(*paths));
	struct st_reader **readers = calloc((size_t)nfiles, sizeof(*readers));
	int i, n = 0, ret;

	x->index = (uint16_t)rec;
	x->run = r;
	if (!paths || !readers || an_names_new(&x->names)) {
		free(paths);
		free(readers);
		snprintf(err, cap, "out of memory");
		return -1;
	}
	for (i = 0; i < nfiles; i++)
		if (ids[i].rec == rec) {
			paths[n] = files[i];
			readers[n++] = ids[i].rd;
			ids[i].rd = NULL;
		}
	ret = an_input_adopt(&x->in, readers, paths, n, x->names, err, cap);
	free(paths);
	free(readers);
	return ret ? ret : an_spans_new(&x->spans, &r->spans, x->in, err, cap);
}

/* Put every recording on one clock and add up what the files hold. */
static void common_clock(struct an_run *r, const struct file_id *ids, const int *first)
{
	int64_t min = 0;
	unsigned a;

	for (a = 0; a < r->nrecs; a++) {
		r->recs[a].clock_offset = ids[first[a]].clock_offset;
		r->recs[a].clock_step = ids[first[a]].clock_step;
		if (!a || r->recs[a].clock_offset < min)
			min = r->recs[a].clock_offset;
	}
	memset(&r->info, 0, sizeof(r->info));
	r->wall_offset = r->nrecs > 1 ? min : r->recs[0].clock_offset;
	for (a = 0; a < r->nrecs; a++) {
		struct an_recording *x = &r->recs[a];
		const struct an_input_info *i = an_input_info(x->in);

		/* wall - min = ts + (offset - min): never negative. One recording keeps its clock. */
		x->shift = r->nrecs > 1 ? (uint64_t)(x->clock_offset - min) : 0;
		r->info.events += i->events;
		r->info.lost_events = st_add_count(r->info.lost_events, i->lost_events);
		r->info.files += i->files;
		r->info.recovered += i->recovered;
		if (!a || i->start_ts + x->shift < r->info.start_ts)
			r->info.start_ts = i->start_ts + x->shift;
		if (i->events && (!r->info.first_ts || i->first_ts + x->shift < r->info.first_ts))
			r->info.first_ts = i->first_ts + x->shift;
		if (i->last_ts + x->shift > r->info.last_ts)
			r->info.last_ts = i->last_ts + x->shift;
	}
}

int an_run_open(struct an_run *r, char *const *files, int nfiles, const struct an_span_defs *spans,
		char *err, size_t cap)
{
	struct file_id *ids = calloc((size_t)nfiles, sizeof(*ids));
	int *first = calloc((size_t)nfiles, sizeof(*first));
	int i, ret = -1;
	unsigned a;

	memset(r, 0, sizeof(*r));
	r->spans = spans ? *spans : (struct an_span_defs){ 0 };
	r->filter.pid = -1;
	if (nfiles > AN_MAX_FILES) {
		snprintf(err, cap, "%d files: at most %d at once", nfiles, AN_MAX_FILES);
		goto out;
	}
	r->recs = calloc((size_t)nfiles, sizeof(*r->recs));
	r->origins = calloc((size_t)nfiles, sizeof(*r->origins));
	if (!ids || !first || !r->recs || !r->origins) {
		snprintf(err, cap, "out of memory");
		goto out;
	}
	for (i = 0; i < nfiles; i++) {
		if (identify(&ids[i], files[i], err, cap))
			goto out;
		for (a = 0; a < r->nrecs && !joins(ids, i, a); a++)
			;
		ids[i].rec = a;
		if (a == r->nrecs)
			first[r->nrecs++] = i;
	}
	for (a = 0; a < r->nrecs; a++) {
		if (open_recording(r, a, ids, files, nfiles, err, cap))
			goto out;
		r->origins[a] = (struct an_origin){ .names = r->recs[a].names, .host = r->recs[a].host,
						    .missing = an_missing_stages(r->recs[a].in) };
	}
	label_hosts(r, ids, files, first);
	common_clock(r, ids, first);
	ret = 0;
out:
	/* the files no recording's input took: those after a failure */
	for (i = 0; ids && i < nfiles; i++)
		st_reader_close(ids[i].rd);
	free(ids);
	free(first);
	return ret;
}

int an_run_set_dev(struct an_run *r, const char *name)
{
	uint32_t any = 0;
	unsigned a;

	for (a = 0; a < r->nrecs; a++)
		if ((r->recs[a].dev = an_names_dev_by_name(r->recs[a].names, name)) && !any)
			any = r->recs[a].dev;
	if (!any)
		return -1;
	/* A recording whose metadata lacks the name: the number another one gave it. */
	for (a = 0; a < r->nrecs; a++)
		if (!r->recs[a].dev)
			r->recs[a].dev = any;
	r->filter.dev = any;
	return 0;
}

void an_run_close(struct an_run *r)
{
	unsigned a;

	for (a = 0; r->recs && a < r->nrecs; a++) {
		an_spans_free(r->recs[a].spans);
		an_input_close(r->recs[a].in);
		an_names_free(r->recs[a].names);
	}
	free(r->recs);
	free(r->origins);
	r->recs = NULL;
	r->origins = NULL;
}

uint64_t an_run_t0(const struct an_run *r)
{
	return r->filter.from > r->info.first_ts ? r->filter.from : r->info.first_ts;
}

uint64_t an_run_duration(const struct an_run *r)
{
	const struct an_input_info *i = &r->info;
	uint64_t from = an_run_t0(r);
	uint64_t to = r->filter.to && r->filter.to < i->last_ts ? r->filter.to : i->last_ts;

	return to > from ? to - from : 1;
}

const char *an_run_map_name(const struct an_run *r, const struct an_posmap *m, char *buf, size_t cap)
{
	char dev[96];

	snprintf(buf, cap, "%s%s%s", r->nrecs > 1 ? r->origins[m->recording].host : "", r->nrecs > 1 ? " " : "",
		 an_names_dev(r->origins[m->recording].names, m->dev, dev, sizeof(dev)));
	return buf;
}

/*
 * io as the run sees it: on the run's clock with its recording's index (a
 * copy in *moved when that changes it); NULL when the run's filter leaves
 * it out.
 */
static const struct an_io *run_io(struct an_recording *x, const struct an_io *io, struct an_io *moved)
{
	struct an_filter *f = &x->run->filter;
	int k;

	if (x->shift || x->index) {
		*moved = *io;
		for (k = 0; k < AN_TS_COUNT; k++)
			if (moved->ts[k])
				moved->ts[k] += x->shift;
		moved->start += x->shift;
		moved->recording = x->index;
		io = moved;
	}
	if (x->dev != f->dev) {
		struct an_filter own = *f;

		own.dev = x->dev;
		return an_filter_match(&own, x->names, io) ? io : NULL;
	}
	return an_filter_match(f, x->names, io) ? io : NULL;
}

static void on_io(void *ctx, const struct an_io *io)
{
	struct an_recording *x = ctx;
	struct an_io moved;
	uint64_t ns;

	if (!x->as_is && !(io = run_io(x, io, &moved)))
		return;
	if (x->run->want & AN_WANT_STATS)
		an_stats_add(&x->stats, io);
	if ((x->run->want & AN_WANT_SERIES) && an_io_in_view(io, x->series.stage))
		an_series_add(&x->series, io);
	if (x->run->want & AN_WANT_TOP)
		an_top_add(&x->top, io);
	if (x->run->want & AN_WANT_DIST)
		an_dist_add(&x->dist, io);
	if ((x->run->want & AN_WANT_STAGE) && !(io->flags & AN_IO_INCOMPLETE) &&
	    an_io_stage(io, x->run->stage, &ns)) {
		an_qest_add(&x->stage_samples, ns);
		if (x->run->want & AN_WANT_SLOWEST)
			an_slowest_add(&x->slowest, io, ns);
	}
	if (x->run->want & AN_WANT_EMIT)
		x->run->emit(x->run->emit_ctx, io);
}

/* on_io of a summary's pass (stage statistics alone) over I/Os taken as they come (as_is). */
static void on_io_stats(void *ctx, const struct an_io *io)
{
	an_stats_add(&((struct an_recording *)ctx)->stats, io);
}

/* Event-clock time of the recording for a time t on the run's clock (0 before it starts). */
static uint64_t own_clock(const struct an_recording *x, uint64_t t)
{
	if (t == UINT64_MAX)
		return t;
	return t > x->shift ? t - x->shift : 0;
}

/* One event into the recording's correlator and its names and spans (inline: every event's step). */
static inline __attribute__((always_inline)) void take_event(struct an_recording *x, struct an_corr *c,
							      const struct st_event_header *ev)
{
	if (an_names_wants(ev->type))
		an_names_event(x->names, ev);
	an_corr_event(c, ev);
	if (x->spans)
		an_spans_event(x->spans, ev, x->emit, x);
}

/*
 * A recording's events are read (merged in time order, stamped issues made
 * whole) into a block at a time and correlated from there: a call per block,
 * not per event (by event, the reorder's window cost a fifth of the pass
 * more).
 */
#define READ_BLOCK_BYTES	(256u << 10)	/* far above the largest record (64 KiB) */

struct read_block {
	size_t used;
	uint64_t data[READ_BLOCK_BYTES / 8];	/* records at 8-byte boundaries */
};

static void take_block(struct an_recording *x, struct an_corr *c, const struct read_block *b)
{
	/* spans take each event after the correlator: those go one by one */
	if (!x->spans) {
		an_corr_events(c, b->data, b->used, x->names);
		return;
	}
	for (size_t off = 0; off < b->used;) {
		const struct st_event_header *ev = (const void *)((const char *)b->data + off);

		take_event(x, c, ev);
		off += st_record_span(ev);
	}
}

/* Every event of the recording; an_input_fill's last answer. */
static int take_events(struct an_recording *x, struct an_corr *c)
{
	struct read_block *b = malloc(sizeof(*b));
	int ret;

	if (!b) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		return -1;
	}
	do {
		ret = an_input_fill(x->in, b->data, sizeof(b->data), &b->used, x->err, sizeof(x->err));
		take_block(x, c, b);
	} while (ret > 0);
	free(b);
	return ret;
}

/* Whether x holds an event of a type of the `why` kind (the causes' events). */
static int has_why_events(const struct an_recording *x)
{
	size_t n;
	const struct st_type *t = st_builtin_types(&n);

	for (size_t i = 0; i < n; i++)
		if ((st_event_kind(t[i].id) & ST_KIND_WHY) && an_input_type_events(x->in, t[i].id))
			return 1;
	return 0;
}

/* Whether x holds an event of one of the types ids[0..n). */
static int has_types(const struct an_recording *x, const uint16_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (an_input_type_events(x->in, ids[i]))
			return 1;
	return 0;
}

#define HAS_TYPES(x, ...) \
	has_types(x, (const uint16_t[]){ __VA_ARGS__ }, sizeof((uint16_t[]){ __VA_ARGS__ }) / sizeof(uint16_t))

unsigned an_run_causes(const struct an_recording *x)
{
	unsigned m;

	/* svc_run_delay too: a `why` recording of direct I/O may have no other (format 1.6) */
	if (!has_why_events(x))
		return 0;
	/* the run queue from the sched records or the kernel's run_delay counts, which come with any */
	m = 1u << AN_CAUSE_RUNQ | 1u << AN_CAUSE_SVC_RUNQ;
	if (HAS_TYPES(x, ST_EV_contention_begin, ST_EV_contention_end))
		m |= 1u << AN_CAUSE_LOCK;
	if (HAS_TYPES(x, ST_EV_block_bio_held))
		m |= 1u << AN_CAUSE_THROTTLE;
	if (HAS_TYPES(x, ST_EV_balance_dirty_pages))
		m |= 1u << AN_CAUSE_DIRTY;
	if (HAS_TYPES(x, ST_EV_mm_vmscan_direct_reclaim_begin, ST_EV_mm_vmscan_direct_reclaim_end,
		      ST_EV_mm_vmscan_memcg_reclaim_begin, ST_EV_mm_vmscan_memcg_reclaim_end))
		m |= 1u << AN_CAUSE_RECLAIM;
	/* nor one its kernel could not give (missing.*, analyze/lib/missing.h) */
	return m & ~(x->run->origins[x->index].missing >> AN_ST_RUNQ);
}

/* One recording's pass into its own consumers. */
static void pass_recording(struct an_recording *x)
{
	const struct an_run *r = x->run;
	struct an_corr *c;
	uint64_t from = 0, to = UINT64_MAX;
	int ret;

	/* I/Os starting in [from, to) need the events around them. */
	if (r->filter.from > r->stale_ns)
		from = r->filter.from - r->stale_ns;
	if (r->filter.to && r->filter.to < UINT64_MAX - r->stale_ns)
		to = r->filter.to + r->stale_ns;
	x->ret = -1;
	if (an_corr_new(&c, r->stale_ns, x->emit, x)) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		return;
	}
	/*
	 * Each I/O's file (an_io.file) for the consumers that name files: every
	 * one but the stage statistics grouped by another key (the summary).
	 */
	if (r->want != AN_WANT_STATS || r->stats.by == AN_BY_FILE)
		an_corr_set_names(c, x->names);
	if (an_run_causes(x) && an_corr_enable_causes(c, an_run_causes(x))) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		an_corr_free(c);
		return;
	}
	/*
	 * A CPU to spare: the cursor's own thread decodes the chunks ahead, this
	 * one does the rest. Spans may pair block events in time order: they
	 * take the stamped issues' events as such.
	 */
	an_input_cursor(x->in, x->decode_ahead, !x->spans);
	if (an_input_start(x->in, own_clock(x, from), own_clock(x, to), x->err, sizeof(x->err))) {
		an_corr_free(c);
		return;
	}
	an_spans_reset(x->spans);
	ret = take_events(x, c);
	an_corr_finish(c);
	an_spans_finish(x->spans, x->emit, x);
	x->corr = *an_corr_stats(c);
	if (!ret && (an_corr_failed(c) || an_spans_failed(x->spans))) {
		snprintf(x->err, sizeof(x->err), "out of memory while correlating");
		ret = -1;
	}
	an_corr_free(c);
	x->ret = ret;
}

/* The workers of one pass take the recordings in turn. */
struct pass_pool {
	struct an_recording *recs;
	unsigned nrecs;
	unsigned next;		/* the first recording not taken yet (atomic) */
};

static void *pass_worker(void *arg)
{
	struct pass_pool *p = arg;
	unsigned i;

	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->nrecs)
		pass_recording(&p->recs[i]);
	return NULL;
}

/* The recording's consumers, set up like the run's; 0 or -1. */
static int setup_recording(struct an_recording *x, unsigned want)
{
	const struct an_run *r = x->run;

	memset(&x->stats, 0, sizeof(x->stats));
	memset(&x->series, 0, sizeof(x->series));
	memset(&x->top, 0, sizeof(x->top));
	memset(&x->slowest, 0, sizeof(x->slowest));
	an_qest_init(&x->stage_samples, r->stage_samples.limit);
	x->as_is = !x->shift && !x->index && !x->dev && !r->filter.dev && r->filter.pid < 0 &&
		   !r->filter.comm && !r->filter.from && !r->filter.to;
	/* the summary's pass over such I/Os: straight into its one consumer */
	x->emit = x->as_is && want == AN_WANT_STATS ? on_io_stats : on_io;
	if (want & AN_WANT_STATS) {
		an_stats_init(&x->stats, r->stats.by, r->stats.exact_limit, x->names);
		x->stats.host = x->host;
		if (x->stats.failed)
			return -1;
	}
	if (want & AN_WANT_DIST) {
		an_dist_init(&x->dist, r->dist.want, r->dist.by, r->dist.stage, x->names);
		x->dist.host = x->host;
		if (x->dist.failed)
			return -1;
	}
	if ((want & AN_WANT_SERIES) &&
	    an_series_init(&x->series, r->series.t0, r->series.t1, r->series.step, r->series.stage))
		return -1;
	if ((want & AN_WANT_TOP) && an_top_init(&x->top, r->top.stage, r->top.threshold, r->top.max))
		return -1;
	if ((want & AN_WANT_SLOWEST) && an_slowest_init(&x->slowest, r->slowest.cap))
		return -1;
	return 0;
}

/* Move the recording's results into the run's, and free its consumers. */
static int merge_recording(struct an_run *r, struct an_recording *x)
{
	const uint64_t *from = (const uint64_t *)&x->corr;
	uint64_t *to = (uint64_t *)&r->corr;
	size_t k;
	int ret = 0;

	/* Every field of an_corr_stats is a count. */
	for (k = 0; k < sizeof(r->corr) / sizeof(uint64_t); k++)
		to[k] += from[k];
	if (r->want & AN_WANT_STATS) {
		/* a cause not recorded is 0 for every I/O: no samples rather than zeros */
		an_stats_drop(&x->stats, r->origins[x->index].missing);
		if (x->stats.failed || an_stats_merge(&r->stats, &x->stats))
			r->stats.failed = 1;
		an_stats_free(&x->stats);
	}
	if (r->want & AN_WANT_SERIES) {
		if (an_series_merge(&r->series, &x->series))
			r->series.failed = 1;
		an_series_free(&x->series);
	}
	if (r->want & AN_WANT_TOP)
		an_top_merge(&r->top, &x->top);
	if (r->want & AN_WANT_DIST) {
		if (x->dist.failed || an_dist_merge(&r->dist, &x->dist))
			r->dist.failed = 1;
		an_dist_free(&x->dist);
	}
	if ((r->want & AN_WANT_STAGE) && an_qest_merge(&r->stage_samples, &x->stage_samples))
		ret = -1;
	if (r->want & AN_WANT_SLOWEST)
		an_slowest_merge(&r->slowest, &x->slowest);
	an_top_free(&x->top);
	an_slowest_free(&x->slowest);
	an_qest_free(&x->stage_samples);
	return ret;
}

int an_run_pass(struct an_run *r, unsigned want, char *err, size_t cap)
{
	struct pass_pool pool = { .recs = r->recs, .nrecs = r->nrecs };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned a, nthreads = 0, workers = cpus > 1 ? (unsigned)cpus : 1;
	pthread_t *threads;
	int ret = 0;

	/* A worker per CPU, at most one per recording; this thread is one of them. */
	if (r->threads && r->threads < workers)
		workers = r->threads;
	/*
	 * CPUs to spare after that: each recording's decoding gets a thread of
	 * its own. Not its reading too: a third thread reading into a ring of
	 * blocks between the two (each event crossing CPUs twice) took a 40 s
	 * `-e all` recording on 2 CPUs to 0.67 s wall and 1.14 s CPU, against
	 * 0.58 s and 1.11 s without it and 1.11 s in one thread
	 * (scripts/bench/RESULTS.md, 2026-12-03).
	 */
	for (a = 0; a < r->nrecs; a++)
		r->recs[a].decode_ahead = workers >= 2 * r->nrecs;
	if (workers > r->nrecs)
		workers = r->nrecs;
	threads = calloc(workers, sizeof(*threads));
	r->want = want;
	memset(&r->corr, 0, sizeof(r->corr));
	if (!threads) {
		snprintf(err, cap, "out of memory");
		ret = -1;
	}
	for (a = 0; a < r->nrecs && !ret; a++)
		if (setup_recording(&r->recs[a], want)) {
			snprintf(err, cap, "out of memory");
			ret = -1;
		}
	/* Without more threads, this one does every recording. */
	while (!ret && nthreads + 1 < workers &&
	       !pthread_create(&threads[nthreads], NULL, pass_worker, &pool))
		nthreads++;
	if (!ret)
		pass_worker(&pool);
	while (nthreads)
		pthread_join(threads[--nthreads], NULL);
	/* In the order given, whatever order they finished in: the same output every time. */
	for (a = 0; a < r->nrecs; a++) {
		struct an_recording *x = &r->recs[a];

		if (!ret && x->ret) {
			snprintf(err, cap, "%s", x->err);
			ret = -1;
		}
		if (merge_recording(r, x) && !ret) {
			snprintf(err, cap, "out of memory");
			ret = -1;
		}
	}
	free(threads);
	return ret;
}

uint64_t an_run_io_bound(const struct an_run *r)
{
	size_t i, ntypes;
	const struct st_type *types = st_builtin_types(&ntypes);
	uint64_t n = 0;
	unsigned a;

	for (a = 0; a < r->nrecs; a++)
		for (i = 0; i < ntypes; i++)
			if (an_corr_begins_io(types[i].id))
				n += an_input_type_events(r->recs[a].in, types[i].id);
	return n;
}

size_t an_quantile_heap_size(uint64_t n_max, double q, size_t max)
{
	/*
	 * With n <= n_max samples, the quantile is the sample of rank
	 * ceil(q * n): at most n - q * n + 1 samples rank at or above it.
	 */
	double k = ceil((1 - q) * (double)n_max) + 1;

	return k <= (double)max ? (size_t)k : 0;
}

int an_run_quantile(struct an_run *r, double q, size_t exact_limit, size_t top,
		    size_t one_pass_max, char *err, size_t cap)
{
	size_t k = an_quantile_heap_size(an_run_io_bound(r), q, one_pass_max);
	unsigned want = AN_WANT_STAGE;
	int ret = -1;

	memset(&r->top, 0, sizeof(r->top));
	memset(&r->slowest, 0, sizeof(r->slowest));
	an_qest_init(&r->stage_samples, exact_limit);
	/* Without memory for the heap, two passes give the same answer. */
	if (k && !an_slowest_init(&r->slowest, k))
		want |= AN_WANT_SLOWEST;
	r->quantile_passes = 1;
	if (an_run_pass(r, want, err, cap))
		goto out;
	if (an_top_init(&r->top, r->stage, an_qest_quantile(&r->stage_samples, q), top)) {
		snprintf(err, cap, "out of memory");
		goto out;
	}
	if (!(want & AN_WANT_SLOWEST) || an_slowest_replay(&r->slowest, &r->top)) {
		r->quantile_passes = 2;
		if (an_run_pass(r, AN_WANT_TOP, err, cap))
			goto out;
	}
	if (r->top.failed) {
		snprintf(err, cap, "out of memory");
		goto out;
	}
	ret = 0;
out:
	an_slowest_free(&r->slowest);
	return ret;
}

void an_run_print_header(const struct an_run *r, FILE *out)
{
	const struct an_input_info *i = &r->info;
	const struct an_corr_stats *c = &r->corr;
	char shown[TEXT_SHOWN_MAX];
	unsigned a;

	fprintf(out, "%u file%s%s, %" PRIu64 " events, %.6f s, lost events: %" PRIu64 "%s%s\n",
		i->files, i->files == 1 ? "" : "s", i->recovered ? " (recovered: footer missing)" : "",
		i->events, an_run_duration(r) / 1e9, i->lost_events,
		i->lost_events == ST_COUNT_SATURATED ? " or more (the counts add up past 2^64)" : "",
		i->lost_events ? " (I/Os may be missing or incomplete)" : "");
	fprintf(out, "I/Os in the trace: %" PRIu64 " correlated, %" PRIu64 " incomplete (open at the end or "
		"stale: %" PRIu64 "), begun before the trace: %" PRIu64 " exits, %" PRIu64
		" requests, %" PRIu64 " completions; out-of-order events %" PRIu64 "\n",
		c->ios - c->incomplete, c->incomplete, c->stale, c->orphan_exits, c->orphan_requests,
		c->orphan_completions, c->out_of_order);
	/* a request issued again before its completion: the kernel skipped the probe, uncounted */
	if (c->missing_completions > i->lost_events)
		fprintf(out, "warning: %" PRIu64 " request%s issued again without a completion event "
			"between: completion events missing beyond the %" PRIu64 " counted lost; "
			"those I/Os are incomplete\n",
			c->missing_completions, c->missing_completions == 1 ? " was" : "s were",
			i->lost_events);
	for (a = 0; a < r->nrecs; a++)
		an_spans_print(r->recs[a].spans, out);
	for (a = 0; a < r->nrecs; a++) {
		char prefix[TEXT_SHOWN_MAX + 2];

		snprintf(prefix, sizeof(prefix), "%s%s", r->nrecs > 1 ? text_shown(r->recs[a].host, shown,
			 sizeof(shown)) : "", r->nrecs > 1 ? ": " : "");
		an_missing_print(r->recs[a].in, prefix, out);
	}
	if (r->nrecs < 2)
		return;
	fprintf(out, "recordings: %u, each correlated on its own, times on one wall clock "
		"(event clock + offset):", r->nrecs);
	for (a = 0; a < r->nrecs; a++)
		fprintf(out, "%s %s %+.6f s", a ? "," : "", text_shown(r->recs[a].host, shown, sizeof(shown)),
			r->recs[a].shift / 1e9);
	fputc('\n', out);
	/* Two reads of the offset differ by their jitter; a step is more. */
	for (a = 0; a < r->nrecs; a++)
		if (llabs(r->recs[a].clock_step) >= AN_CLOCK_STEP_NS)
			fprintf(out, "%s: the wall clock was stepped by %+.3f ms during the recording; its "
				"times are placed with the offset read at its start\n", r->recs[a].host,
				r->recs[a].clock_step / 1e6);
}
