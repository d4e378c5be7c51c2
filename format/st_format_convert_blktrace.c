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
 * CPU; blkparse prints them in time order, which is the order they arrive
 * in here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/idmap.h"
#include "format/st_format_blktrace.h"
#include "format/st_format_convert.h"

#define NAME_LEN ST_COMM_LEN

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
};

struct bt_record {
	struct blk_io_trace t;
	uint64_t pdu;
};

static int bt_begin(struct sf_convert *cv)
{
	struct bt_state *s = calloc(1, sizeof(*s));
	const char *off = st_meta_get(cv->r, "clock.realtime_offset_ns");

	cv->state = s;
	if (!s || an_idmap_init(&s->seq, 64) || an_idmap_init(&s->noted, 1024) ||
	    an_idmap_init(&s->name_at, 1024))
		return sf_error(cv->in, "out of memory");
	s->realtime_offset = off ? strtoll(off, NULL, 10) : 0;
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
	free(s);
}

/* The command name blkparse will show for tid: the one of its first notify. */
static const char *bt_name(const struct bt_state *s, uint32_t tid)
{
	uint32_t i = an_idmap_get(&s->name_at, (uint64_t)tid + 1);

	return i == AN_NONE ? "" : s->names[i];
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
		int64_t wall = (int64_t)ev->time + s->realtime_offset;
		uint32_t words[2] = { (uint32_t)(wall / 1000000000), (uint32_t)(wall % 1000000000) };

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
	s->cpu_files[cpu] = fopen(path, "w");
	if (!s->cpu_files[cpu])
		return sf_error(path, "cannot create: %s", strerror(errno));
	return SF_OK;
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

	for (unsigned cpu = 0; s && cpu < s->ncpus; cpu++)
		if (s->cpu_files[cpu] && fclose(s->cpu_files[cpu]) && !rc)
			rc = sf_error(cv->out, "write failed: %s", strerror(errno));
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

static void print_record(struct sf_convert *cv, const struct blk_io_trace *t, const void *pdu)
{
	static const char act[] = { [__BLK_TA_QUEUE] = 'Q', [__BLK_TA_BACKMERGE] = 'M',
		[__BLK_TA_FRONTMERGE] = 'F', [__BLK_TA_GETRQ] = 'G', [__BLK_TA_REQUEUE] = 'R',
		[__BLK_TA_ISSUE] = 'D', [__BLK_TA_COMPLETE] = 'C', [__BLK_TA_INSERT] = 'I',
		[__BLK_TA_SPLIT] = 'X' };
	const struct bt_state *s = cv->state;
	uint64_t rel = t->time - s->genesis;
	unsigned a = t->action & 0xffff;
	char flags[8];
	FILE *out = cv->text;

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
			be64toh(*(const uint64_t *)pdu), bt_name(s, t->pid));
		break;
	default:
		if (t->bytes >> 9)
			fprintf(out, "%" PRIu64 " + %u [%s]\n", (uint64_t)t->sector, t->bytes >> 9,
				bt_name(s, t->pid));
		else
			fprintf(out, "[%s]\n", bt_name(s, t->pid));
		break;
	}
}

/* blkparse's order for equal timestamps: device, then sequence number. */
static int record_cmp(const void *a, const void *b)
{
	const struct blk_io_trace *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->sequence > y->sequence) - (x->sequence < y->sequence);
}

static void print_same_time(struct sf_convert *cv)
{
	struct bt_state *s = cv->state;

	if (s->nsame > 1)
		qsort(s->same_time, s->nsame, sizeof(*s->same_time), record_cmp);
	for (size_t i = 0; i < s->nsame; i++)
		print_record(cv, &s->same_time[i].t, &s->same_time[i].pdu);
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

static int blkparse_end(struct sf_convert *cv)
{
	if (cv->state)
		print_same_time(cv);
	bt_free(cv->state);
	return SF_OK;
}

const struct sf_convert_writer sf_convert_blkparse = {
	.name = "blkparse",
	.text = 1,
	.begin = bt_begin,
	.event = blkparse_event,
	.end = blkparse_end,
};
