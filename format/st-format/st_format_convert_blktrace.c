/* SPDX-License-Identifier: MIT */
/*
 * st_format_convert_blktrace.c - `convert --to blktrace` and
 * `convert --to blkparse`: the block events of a trace as the kernel's
 * blktrace would have written them, so blkparse, btt, iowatcher and
 * btrecord read traces recorded where blktrace itself cannot run.
 *
 * Both writers build the same records: a TIMESTAMP notify (the wall clock
 * at the first event) on each device, a PROCESS notify (thread id and
 * command name) before each thread's first event on a device, and one
 * record per block event with a sequence number counted per device and
 * CPU from 1, as the kernel counts. blktrace writes them to one file per
 * CPU; blkparse prints them as blkparse prints those files: in time order
 * (the order they arrive in here, equal times as its file merge orders
 * them), then its statistics.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/lib/idmap.h"
#include "common/text.h"
#include "format/st-format/st_format_blktrace.h"
#include "format/st-format/st_format_convert.h"

#define NAME_LEN ST_COMM_LEN
/*
 * CPU numbers end below Linux's largest NR_CPUS (8192, x86-64 MAXSMP): the
 * per-CPU tables and blktrace's files (one per CPU up to the highest) stay
 * bounded. An event on a CPU past it (a hostile file's 0xffffffff) ends the
 * conversion with an error naming it, as any malformed input does.
 */
#define BT_MAX_CPUS 8192u

/*
 * Sizes as blkparse sums them: whole KiB and the bytes under a KiB apart.
 * It prints kb + (b >> 10) KiB, and its throughput as (1000 kb + b) / ms
 * (as measured against it: the two differ for I/Os of no whole KiB).
 */
struct bp_size {
	uint64_t kb, b;
};

/* What blkparse counts per CPU (its struct io_stats). */
struct bp_stats {
	uint64_t events;
	uint64_t queued[2], issued[2], requeued[2], completed[2], merged[2];
	struct bp_size queued_size[2], issued_size[2], completed_size[2], merged_size[2];
};

struct bp_device {
	uint32_t dev;		/* the first device seen, 0 before */
	uint32_t depth[2], max_depth[2];	/* requests issued and not completed, by direction */
	uint64_t first, last;	/* times of its first and last event, relative */
	uint64_t events;
	struct bp_stats *cpus;
	uint32_t ncpus;
};

struct bt_state {
	struct an_idmap seq;	/* device << 32 | cpu -> last sequence number */
	struct an_idmap noted;	/* device << 32 | tid -> 1: PROCESS notify written */
	struct an_idmap name_at;	/* tid -> names[]: the name blkparse shows (first notify) */
	char (*names)[NAME_LEN + 1];
	size_t nnames, cap;
	int64_t realtime_offset;	/* wall clock - event clock, ns */
	uint64_t genesis;	/* time of the first record: blkparse's time 0 */
	/* blktrace: one file per CPU */
	FILE **cpu_files;
	unsigned ncpus;
	/* blkparse: the records of one timestamp, printed in blkparse's order */
	struct bt_record *same_time;
	size_t nsame, same_cap;
	int failed;		/* out of memory while printing */
	uint64_t *printed_at;	/* per CPU: when it last printed a record (nprinted), 0 never */
	uint32_t ncpu_seen;
	uint64_t nprinted;
	/*
	 * blkparse: its statistics. It counts every record of a set of files
	 * under the one device the files are named after, so here too all
	 * devices count as one, named after the first device seen.
	 */
	struct bp_device bp;
};

struct bt_record {
	struct blk_io_trace t;
	uint64_t pdu;
};

static int bt_begin(struct sf_convert *cv)
{
	struct bt_state *s = calloc(1, sizeof(*s));

	cv->state = s;
	if (!s || an_idmap_init(&s->seq, 64) || an_idmap_init(&s->noted, 1024) ||
	    an_idmap_init(&s->name_at, 1024))
		return sf_error(cv->in, "out of memory");
	if (st_clock_offset(cv->r, "clock.realtime_offset_ns", &s->realtime_offset))
		s->realtime_offset = 0;
	return SF_OK;
}

static void bt_free(struct bt_state *s)
{
	if (!s)
		return;
	if (s->seq.keys) {
		an_idmap_free(&s->seq);
		an_idmap_free(&s->noted);
		an_idmap_free(&s->name_at);
	}
	free(s->names);
	free(s->cpu_files);
	free(s->same_time);
	free(s->bp.cpus);
	free(s->printed_at);
	free(s);
}

/*
 * The command name blkparse will show for tid: the one of its first notify,
 * on one line and without a byte a terminal acts on (common/text.h), in buf.
 */
static const char *bt_name(const struct bt_state *s, uint32_t tid, char *buf, size_t cap)
{
	uint32_t i = an_idmap_get(&s->name_at, (uint64_t)tid + 1);

	return i == AN_NONE ? "" : text_shown(s->names[i], buf, cap);
}

static int bt_remember_name(struct bt_state *s, uint32_t tid, const char *name)
{
	if (an_idmap_get(&s->name_at, (uint64_t)tid + 1) != AN_NONE)
		return 0;
	if (s->nnames == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		void *p = realloc(s->names, cap * sizeof(*s->names));

		if (!p)
			return -1;
		s->names = p;
		s->cap = cap;
	}
	snprintf(s->names[s->nnames], sizeof(s->names[0]), "%s", name);
	return an_idmap_put(&s->name_at, (uint64_t)tid + 1, (uint32_t)s->nnames++);
}

/* Hand one record (and its PDU) to the writer's output. */
typedef int (*bt_put_fn)(struct sf_convert *cv, const struct blk_io_trace *t, const void *pdu);

/*
 * The notifies the kernel writes before an event's record: the device's
 * TIMESTAMP at its first event, the thread's PROCESS at its first event on
 * the device.
 */
static int bt_notify(struct sf_convert *cv, const struct blk_io_trace *ev, bt_put_fn put)
{
	struct bt_state *s = cv->state;
	struct blk_io_trace t = {
		.magic = BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION,
		.time = ev->time,
		.device = ev->device,
		.cpu = ev->cpu,
	};
	uint64_t dev_key = (uint64_t)ev->device << 32 | UINT32_MAX;
	uint64_t key = (uint64_t)ev->device << 32 | ev->pid;
	char name[NAME_LEN] = { 0 };
	int rc;

	if (!s->genesis)
		s->genesis = ev->time;
	if (an_idmap_get(&s->noted, dev_key) == AN_NONE) {
		int64_t wall = 0;
		uint32_t words[2];

		if (st_wall_time(ev->time, s->realtime_offset, &wall))
			wall = 0;	/* no wall clock: blkparse shows the epoch */
		words[0] = (uint32_t)(wall / 1000000000);
		words[1] = (uint32_t)(wall % 1000000000);

		t.action = BLK_TN_TIMESTAMP;
		t.pdu_len = sizeof(words);
		if (an_idmap_put(&s->noted, dev_key, 1))
			return sf_error(cv->in, "out of memory");
		if ((rc = put(cv, &t, words)))
			return rc;
	}
	if (an_idmap_get(&s->noted, key) != AN_NONE)
		return SF_OK;
	strncpy(name, an_names_comm(cv->names, ev->pid), sizeof(name) - 1);
	if (an_idmap_put(&s->noted, key, 1) || bt_remember_name(s, ev->pid, name))
		return sf_error(cv->in, "out of memory");
	t.action = BLK_TN_PROCESS;
	t.pid = ev->pid;
	t.pdu_len = sizeof(name);
	return put(cv, &t, name);
}

/* One block event: its notifies, then its record with the next sequence number. */
static int bt_event(struct sf_convert *cv, const struct st_event_header *ev, bt_put_fn put)
{
	struct bt_state *s = cv->state;
	struct blk_io_trace t;
	uint64_t pdu, key;
	uint32_t seq;
	int rc;

	if (sf_bt_from_event(ev, &t, &pdu) < 0)
		return SF_OK;
	if (t.cpu >= BT_MAX_CPUS)
		return sf_error(cv->in, "an event at %" PRIu64 " ns on CPU %u: CPU numbers end at %u",
				(uint64_t)ev->ts, t.cpu, BT_MAX_CPUS - 1);
	if ((rc = bt_notify(cv, &t, put)))
		return rc;
	key = (uint64_t)t.device << 32 | t.cpu;
	seq = an_idmap_get(&s->seq, key);
	t.sequence = seq == AN_NONE ? 1 : seq + 1;
	if (an_idmap_put(&s->seq, key, t.sequence))
		return sf_error(cv->in, "out of memory");
	return put(cv, &t, &pdu);
}

/* ---- blktrace: binary, one file per CPU --------------------------------------- */

static int cpu_file_open(struct sf_convert *cv, unsigned cpu)
{
	struct bt_state *s = cv->state;
	char path[4096];

	if (cpu >= s->ncpus) {
		FILE **p = realloc(s->cpu_files, (cpu + 1) * sizeof(*p));

		if (!p)
			return sf_error(cv->in, "out of memory");
		memset(p + s->ncpus, 0, (cpu + 1 - s->ncpus) * sizeof(*p));
		s->cpu_files = p;
		s->ncpus = cpu + 1;
	}
	if (s->cpu_files[cpu])
		return SF_OK;
	snprintf(path, sizeof(path), "%s.blktrace.%u", cv->out, cpu);
	s->cpu_files[cpu] = sf_convert_output(cv, path);
	return s->cpu_files[cpu] ? SF_OK : SF_BAD;
}

static int put_binary(struct sf_convert *cv, const struct blk_io_trace *t, const void *pdu)
{
	struct bt_state *s = cv->state;
	FILE *f;
	int rc;

	if (t->cpu >= s->ncpus || !s->cpu_files[t->cpu]) {
		/* blkparse reads NAME.blktrace.0, .1, ... up to the first missing one */
		for (unsigned cpu = 0; cpu <= t->cpu; cpu++)
			if ((rc = cpu_file_open(cv, cpu)))
				return rc;
	}
	f = s->cpu_files[t->cpu];
	if (fwrite(t, sizeof(*t), 1, f) != 1 || (t->pdu_len && fwrite(pdu, t->pdu_len, 1, f) != 1))
		return sf_error(cv->out, "write failed: %s", strerror(errno));
	return SF_OK;
}

static int blktrace_begin(struct sf_convert *cv)
{
	const char *n = st_meta_get(cv->r, "cpu.count");
	unsigned long cpus = n ? strtoul(n, NULL, 10) : 1;
	int rc = bt_begin(cv);

	/* Every CPU of the recorded host gets a file, as blktrace makes them. */
	if (!rc && cpus && cpus <= ST_MAX_LANES)
		rc = cpu_file_open(cv, (unsigned)cpus - 1);
	for (unsigned cpu = 0; !rc && cpu + 1 < cpus && cpus <= ST_MAX_LANES; cpu++)
		rc = cpu_file_open(cv, cpu);
	return rc;
}

static int blktrace_event(struct sf_convert *cv, const struct st_event_header *ev)
{
	return bt_event(cv, ev, put_binary);
}

static int blktrace_end(struct sf_convert *cv)
{
	struct bt_state *s = cv->state;
	int rc = SF_OK;

	char path[4096];

	for (unsigned cpu = 0; s && cpu < s->ncpus; cpu++)
		if (s->cpu_files[cpu] && fclose(s->cpu_files[cpu]) && !rc)
			rc = sf_error(cv->out, "write failed: %s", strerror(errno));
	/* no empty or half-written OUT.blktrace.N left behind */
	for (unsigned cpu = 0; s && (cv->failed || rc) && cpu < s->ncpus; cpu++) {
		snprintf(path, sizeof(path), "%s.blktrace.%u", cv->out, cpu);
		if (s->cpu_files[cpu])
			unlink(path);
	}
	bt_free(s);
	return rc;
}

const struct sf_convert_writer sf_convert_blktrace = {
	.name = "blktrace",
	.begin = blktrace_begin,
	.event = blktrace_event,
	.end = blktrace_end,
};

/* ---- blkparse: its default text ------------------------------------------------ */

/* blkparse's RWBS column. */
static void rwbs(const struct blk_io_trace *t, char out[8])
{
	uint32_t c = t->action >> BLK_TC_SHIFT;
	int i = 0;

	if (c & BLK_TC_FLUSH)
		out[i++] = 'F';
	if (c & BLK_TC_DISCARD)
		out[i++] = 'D';
	else if (c & BLK_TC_WRITE)
		out[i++] = 'W';
	else if (t->bytes)
		out[i++] = 'R';
	else
		out[i++] = 'N';
	if (c & BLK_TC_FUA)
		out[i++] = 'F';
	if (c & BLK_TC_AHEAD)
		out[i++] = 'A';
	if (c & BLK_TC_SYNC)
		out[i++] = 'S';
	if (c & BLK_TC_META)
		out[i++] = 'M';
	out[i] = 0;
}

/* The statistics of CPU cpu; NULL when out of memory. */
static struct bp_stats *bp_stats_of(struct bp_device *d, uint32_t cpu)
{
	if (cpu >= d->ncpus) {
		struct bp_stats *c = realloc(d->cpus, (cpu + 1) * sizeof(*c));

		if (!c)
			return NULL;
		memset(c + d->ncpus, 0, (cpu + 1 - d->ncpus) * sizeof(*c));
		d->cpus = c;
		d->ncpus = cpu + 1;
	}
	return &d->cpus[cpu];
}

static void bp_size_add(struct bp_size *sum, const struct bp_size *n)
{
	sum->kb += n->kb;
	sum->b += n->b;
}

/* Count one printed record as blkparse does (depth: issued minus completed and requeued). */
static int bp_account(struct bt_state *s, const struct blk_io_trace *t, uint64_t rel)
{
	int w = !!(t->action & BLK_TC_ACT(BLK_TC_WRITE));
	const struct bp_size size = { t->bytes >> 10, t->bytes & 1023 };
	struct bp_device *d = &s->bp;
	struct bp_stats *st = bp_stats_of(d, t->cpu);

	if (!st)
		return -1;
	if (!d->dev)
		d->dev = t->device;
	if (!d->events++)
		d->first = rel;
	d->last = rel;
	st->events++;
	switch (t->action & 0xffff) {
	case __BLK_TA_QUEUE:
		st->queued[w]++;
		bp_size_add(&st->queued_size[w], &size);
		break;
	case __BLK_TA_BACKMERGE:
	case __BLK_TA_FRONTMERGE:
		st->merged[w]++;
		bp_size_add(&st->merged_size[w], &size);
		break;
	case __BLK_TA_REQUEUE:
		if (d->depth[w])
			d->depth[w]--;
		st->requeued[w]++;
		st->issued_size[w].kb -= size.kb;
		st->issued_size[w].b -= size.b;
		break;
	case __BLK_TA_ISSUE:
		st->issued[w]++;
		bp_size_add(&st->issued_size[w], &size);
		if (++d->depth[w] > d->max_depth[w])
			d->max_depth[w] = d->depth[w];
		break;
	case __BLK_TA_COMPLETE:
		if (d->depth[w])
			d->depth[w]--;
		st->completed[w]++;
		bp_size_add(&st->completed_size[w], &size);
		break;
	}
	return 0;
}

static void print_record(struct sf_convert *cv, const struct blk_io_trace *t, const void *pdu)
{
	static const char act[] = { [__BLK_TA_QUEUE] = 'Q', [__BLK_TA_BACKMERGE] = 'M',
		[__BLK_TA_FRONTMERGE] = 'F', [__BLK_TA_GETRQ] = 'G', [__BLK_TA_REQUEUE] = 'R',
		[__BLK_TA_ISSUE] = 'D', [__BLK_TA_COMPLETE] = 'C', [__BLK_TA_INSERT] = 'I',
		[__BLK_TA_SPLIT] = 'X' };
	struct bt_state *s = cv->state;
	uint64_t rel = t->time - s->genesis;
	unsigned a = t->action & 0xffff;
	char flags[8], shown[4 * NAME_LEN + 1];
	FILE *out = cv->text;

	if (bp_account(s, t, rel))
		s->failed = 1;
	rwbs(t, flags);
	fprintf(out, "%3u,%-3u %2u %8u %5u.%09u %5u %2c %3s ", t->device >> 20,
		t->device & 0xfffff, t->cpu, t->sequence, (unsigned)(rel / 1000000000),
		(unsigned)(rel % 1000000000), t->pid, act[a], flags);
	/* An event without data (a flush) has no "+ sectors" part. */
	switch (a) {
	case __BLK_TA_COMPLETE:
	case __BLK_TA_REQUEUE:
		if (t->bytes >> 9)
			fprintf(out, "%" PRIu64 " + %u [%u]\n", (uint64_t)t->sector, t->bytes >> 9,
				t->error);
		else
			fprintf(out, "%" PRIu64 " [%u]\n", (uint64_t)t->sector, t->error);
		break;
	case __BLK_TA_SPLIT:
		fprintf(out, "%" PRIu64 " / %" PRIu64 " [%s]\n", (uint64_t)t->sector,
			be64toh(*(const uint64_t *)pdu), bt_name(s, t->pid, shown, sizeof(shown)));
		break;
	default:
		if (t->bytes >> 9)
			fprintf(out, "%" PRIu64 " + %u [%s]\n", (uint64_t)t->sector, t->bytes >> 9,
				bt_name(s, t->pid, shown, sizeof(shown)));
		else
			fprintf(out, "[%s]\n", bt_name(s, t->pid, shown, sizeof(shown)));
		break;
	}
}

/* Print the buffered records of CPU cpu, in their order, and note that it printed last. */
static int print_cpu(struct sf_convert *cv, uint32_t cpu)
{
	struct bt_state *s = cv->state;

	if (cpu >= s->ncpu_seen) {
		uint64_t *p = realloc(s->printed_at, (cpu + 1) * sizeof(*p));

		if (!p)
			return -1;
		memset(p + s->ncpu_seen, 0, (cpu + 1 - s->ncpu_seen) * sizeof(*p));
		s->printed_at = p;
		s->ncpu_seen = cpu + 1;
	}
	for (size_t i = 0; i < s->nsame; i++)
		if (s->same_time[i].t.cpu == cpu)
			print_record(cv, &s->same_time[i].t, &s->same_time[i].pdu);
	s->printed_at[cpu] = ++s->nprinted;
	return 0;
}

static uint64_t printed_at(const struct bt_state *s, uint32_t cpu)
{
	return cpu < s->ncpu_seen ? s->printed_at[cpu] : 0;
}

/*
 * The records of one timestamp in blkparse's order. blkparse merges its
 * per-CPU files through a list ordered by the time of each file's next
 * record: the head gives records while its next one is not later than the
 * second file's, and a file put back goes in front of the files whose next
 * record is as late. So a file becomes the first of those due at time T
 * whenever it gives a record and its next one is at T: records of equal
 * time come file by file, the file that gave a record most recently first.
 * Files that never gave one were put in when blkparse started, each CPU
 * after the first going right behind the head: CPU 0 (the lowest), then
 * the others from the highest down. Within a file, records keep their order.
 */
static int later_first(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;	/* {printed_at, cpu} */

	if (x[0] != y[0])
		return x[0] < y[0] ? 1 : -1;
	return x[1] < y[1] ? 1 : x[1] > y[1] ? -1 : 0;
}

static void print_same_time(struct sf_convert *cv)
{
	struct bt_state *s = cv->state;
	uint64_t (*order)[2] = malloc(s->nsame * sizeof(*order));
	size_t n = 0, never;

	if (!order) {
		s->failed = 1;
		s->nsame = 0;
		return;
	}
	for (size_t i = 0; i < s->nsame; i++) {
		uint32_t cpu = s->same_time[i].t.cpu;
		size_t k = 0;

		while (k < n && order[k][1] != cpu)
			k++;
		if (k == n) {
			order[n][0] = printed_at(s, cpu);
			order[n++][1] = cpu;
		}
	}
	qsort(order, n, sizeof(*order), later_first);
	for (never = n; never > 0 && !order[never - 1][0]; never--)
		;
	if (n - never > 1) {	/* the lowest CPU that never printed goes first of those */
		uint64_t low[2] = { order[n - 1][0], order[n - 1][1] };

		memmove(order[never + 1], order[never], (n - never - 1) * sizeof(*order));
		order[never][0] = low[0];
		order[never][1] = low[1];
	}
	for (size_t k = 0; k < n; k++)
		if (print_cpu(cv, (uint32_t)order[k][1]))
			s->failed = 1;
	free(order);
	s->nsame = 0;
}

/* Records wait until the timestamp changes, then print in blkparse's order. */
static int put_text(struct sf_convert *cv, const struct blk_io_trace *t, const void *pdu)
{
	struct bt_state *s = cv->state;
	struct bt_record *rec;

	if (t->action & BLK_TC_ACT(BLK_TC_NOTIFY))
		return SF_OK;
	if (s->nsame && s->same_time[0].t.time != t->time)
		print_same_time(cv);
	if (s->nsame == s->same_cap) {
		size_t cap = s->same_cap ? s->same_cap * 2 : 16;
		void *p = realloc(s->same_time, cap * sizeof(*s->same_time));

		if (!p)
			return sf_error(cv->in, "out of memory");
		s->same_time = p;
		s->same_cap = cap;
	}
	rec = &s->same_time[s->nsame++];
	rec->t = *t;
	rec->pdu = t->pdu_len ? *(const uint64_t *)pdu : 0;
	return SF_OK;
}

static int blkparse_event(struct sf_convert *cv, const struct st_event_header *ev)
{
	return bt_event(cv, ev, put_text);
}

/* blkparse's size_cnv(): 8 wide, thousands as a K (counts) or M (KiB) suffix above 10^6. */
static const char *bp_count(char *buf, uint64_t n, int kib)
{
	static const char suffix[] = { 0, 'K', 'M', 'G', 'P' };
	unsigned i = kib;

	while (n > 1000 * 1000ull && i < sizeof(suffix) - 1) {
		i++;
		n /= 1000;
	}
	sprintf(buf, "%8" PRIu64 "%.1s", n, &suffix[i]);
	return buf;
}

/* A size as blkparse prints it. */
static const char *bp_kib(char *buf, const struct bp_size *size)
{
	return bp_count(buf, size->kb + (size->b >> 10), 1);
}

static void bp_print_stats(FILE *out, const char *title, const struct bp_stats *st,
			   const struct bp_device *d)
{
	char a[32], b[32];

	fprintf(out, "%s\n", title);
	fprintf(out, " Reads Queued:    %s, %siB\t", bp_count(a, st->queued[0], 0), bp_kib(b, &st->queued_size[0]));
	fprintf(out, " Writes Queued:    %s, %siB\n", bp_count(a, st->queued[1], 0), bp_kib(b, &st->queued_size[1]));
	fprintf(out, " Read Dispatches: %s, %siB\t", bp_count(a, st->issued[0], 0), bp_kib(b, &st->issued_size[0]));
	fprintf(out, " Write Dispatches: %s, %siB\n", bp_count(a, st->issued[1], 0), bp_kib(b, &st->issued_size[1]));
	fprintf(out, " Reads Requeued:  %s\t\t", bp_count(a, st->requeued[0], 0));
	fprintf(out, " Writes Requeued:  %s\n", bp_count(a, st->requeued[1], 0));
	fprintf(out, " Reads Completed: %s, %siB\t", bp_count(a, st->completed[0], 0), bp_kib(b, &st->completed_size[0]));
	fprintf(out, " Writes Completed: %s, %siB\n", bp_count(a, st->completed[1], 0), bp_kib(b, &st->completed_size[1]));
	fprintf(out, " Read Merges:     %s, %siB\t", bp_count(a, st->merged[0], 0), bp_kib(b, &st->merged_size[0]));
	fprintf(out, " Write Merges:     %s, %siB\n", bp_count(a, st->merged[1], 0), bp_kib(b, &st->merged_size[1]));
	if (d) {
		fprintf(out, " Read depth:      %8u%8c\t", d->max_depth[0], ' ');
		fprintf(out, " Write depth:      %8u\n", d->max_depth[1]);
	}
	fprintf(out, " IO unplugs:      %8u%8c\t", 0, ' ');
	fprintf(out, " Timer unplugs:    %8u\n", 0);
}

static void bp_add(struct bp_stats *sum, const struct bp_stats *st)
{
	for (int w = 0; w < 2; w++) {
		sum->queued[w] += st->queued[w];
		bp_size_add(&sum->queued_size[w], &st->queued_size[w]);
		sum->issued[w] += st->issued[w];
		bp_size_add(&sum->issued_size[w], &st->issued_size[w]);
		sum->requeued[w] += st->requeued[w];
		sum->completed[w] += st->completed[w];
		bp_size_add(&sum->completed_size[w], &st->completed_size[w]);
		sum->merged[w] += st->merged[w];
		bp_size_add(&sum->merged_size[w], &st->merged_size[w]);
	}
}

/*
 * blkparse's closing statistics: each CPU with events, their total when
 * more than one, the completion throughput over the first to the last
 * event, the event count, and skips (none: the sequence numbers written
 * here have no gaps). blkparse names them after its input files; here they
 * have the trace's name of the first device, which is what blkparse shows
 * for files named after it (convert --to blktrace -o DIR/loop0).
 */
static void bp_summary(struct sf_convert *cv)
{
	struct bt_state *s = cv->state;
	const struct bp_device *d = &s->bp;
	struct bp_stats total = { 0 };
	uint64_t msec = (d->last - d->first) / 1000000;
	char name[64], title[96], shown[TEXT_SHOWN_MAX];
	unsigned cpus = 0;
	FILE *out = cv->text;

	if (!d->events)
		return;
	snprintf(name, sizeof(name), "%s", text_shown(an_names_dev(cv->names, d->dev, title, sizeof(title)),
						      shown, sizeof(shown)));
	for (uint32_t c = 0; c < d->ncpus; c++) {
		if (!d->cpus[c].events)
			continue;
		snprintf(title, sizeof(title), "CPU%u (%s):", c, name);
		bp_print_stats(out, title, &d->cpus[c], d);
		bp_add(&total, &d->cpus[c]);
		cpus++;
	}
	if (cpus > 1) {
		snprintf(title, sizeof(title), "\nTotal (%s):", name);
		bp_print_stats(out, title, &total, NULL);
	}
	fprintf(out, "\nThroughput (R/W): %" PRIu64 "KiB/s / %" PRIu64 "KiB/s\n",
		msec ? (1000 * total.completed_size[0].kb + total.completed_size[0].b) / msec : 0,
		msec ? (1000 * total.completed_size[1].kb + total.completed_size[1].b) / msec : 0);
	fprintf(out, "Events (%s): %" PRIu64 " entries\n", name, d->events);
	fprintf(out, "Skips: 0 forward (0 -   0.0%%)\n");
}

static int blkparse_end(struct sf_convert *cv)
{
	struct bt_state *s = cv->state;
	int rc = SF_OK;

	if (s) {
		print_same_time(cv);
		if (s->failed)
			rc = sf_error(cv->in, "out of memory");
		else
			bp_summary(cv);
	}
	bt_free(s);
	return rc;
}

const struct sf_convert_writer sf_convert_blkparse = {
	.name = "blkparse",
	.text = 1,
	.begin = bt_begin,
	.event = blkparse_event,
	.end = blkparse_end,
};
