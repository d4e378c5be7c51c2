/* SPDX-License-Identifier: MIT */
/*
 * plan.c - the I/Os of a trace as st-replay will issue them.
 *
 * Block level reads the requests straight from the events: a request is an
 * identity (its address) from block_rq_issue to block_rq_complete, which is
 * not one of the correlator's I/Os (those are syscalls or bios, several of
 * which a merged request carries). File level takes the correlator's I/Os
 * (analyze/lib/run.h, AN_WANT_EMIT), which already join each syscall's entry and
 * exit and name its file.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/idmap.h"
#include "analyze/lib/run.h"
#include "replay/replay.h"

struct builder {
	struct rp_plan *p;
	const struct rp_opts *o;
	struct an_run *run;
	uint32_t dev;			/* --dev, 0 any */
	struct an_idmap open;		/* block: request or bio address -> plan index */
	struct an_idmap by_key;		/* target key -> target index */
	struct an_idmap by_tid;		/* file level: thread -> stream */
	struct an_idmap by_cpu;		/* block level: recorded CPU + 1 -> its number in rp_io.cpu */
	int failed;			/* out of memory */
	uint64_t too_long, too_long_ts;	/* the first I/O longer than --max-io: bytes, when */
};

/* 1 when an I/O of len bytes may be replayed; else the first such is kept for the error. */
static int length_ok(struct builder *b, uint64_t len, uint64_t ts)
{
	if (len <= b->o->max_io)
		return 1;
	if (!b->too_long) {
		b->too_long = len;
		b->too_long_ts = ts;
	}
	return 0;
}

static int plan_add(struct builder *b, const struct rp_io *io)
{
	struct rp_plan *p = b->p;

	if (p->nios == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 4096;
		struct rp_io *ios = realloc(p->ios, cap * sizeof(*ios));

		if (!ios) {
			b->failed = 1;
			return -1;
		}
		p->ios = ios;
		p->cap = cap;
	}
	p->ios[p->nios++] = *io;
	return 0;
}

/* FNV-1a of a target's key, never 0 (the idmap's empty key). */
static uint64_t key_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h | 1;
}

/* Index of the target named name (made on first use), RP_NONE when out of memory. */
static uint32_t target_for(struct builder *b, const char *name, const char *path, uint32_t dev)
{
	struct rp_plan *p = b->p;
	uint64_t key = key_hash(name);
	uint32_t t;
	struct rp_target *grown;

	/* Two names with one hash take the next key: a linear probe over keys. */
	while ((t = an_idmap_get(&b->by_key, key)) != AN_NONE && strcmp(p->targets[t].name, name))
		key = key + 2;
	if (t != AN_NONE)
		return t;
	grown = realloc(p->targets, (p->ntargets + 1) * sizeof(*grown));
	if (!grown)
		goto oom;
	p->targets = grown;
	t = p->ntargets;
	memset(&p->targets[t], 0, sizeof(p->targets[t]));
	p->targets[t].fd = -1;
	p->targets[t].dev = dev;
	p->targets[t].name = strdup(name);
	p->targets[t].path = path ? strdup(path) : NULL;
	if (!p->targets[t].name || (path && !p->targets[t].path) || an_idmap_put(&b->by_key, key, t)) {
		free(p->targets[t].name);
		free(p->targets[t].path);
		goto oom;
	}
	p->ntargets++;
	return t;
oom:
	b->failed = 1;
	return RP_NONE;
}

/* Block level: the target a recorded device maps to (--map, else --target), RP_NONE when none. */
static uint32_t block_target(struct builder *b, uint32_t dev)
{
	const struct rp_opts *o = b->o;
	const char *path = o->target;
	char buf[64];
	unsigned i;

	for (i = 0; i < o->nmaps; i++)
		if (an_names_dev_by_name(b->run->recs[0].names, o->maps[i].dev) == dev) {
			path = o->maps[i].path;
			break;
		}
	if (!path)
		return RP_NONE;
	return target_for(b, an_names_dev(b->run->recs[0].names, dev, buf, sizeof(buf)), path, dev);
}

static uint8_t block_op(uint32_t opf)
{
	switch (opf & ST_OP_MASK) {
	case ST_OP_READ:
		return AN_OP_READ;
	case ST_OP_WRITE:
		return AN_OP_WRITE;
	case ST_OP_FLUSH:
		return AN_OP_FLUSH;
	case ST_OP_DISCARD: case ST_OP_SECURE_ERASE: case ST_OP_WRITE_ZEROES:
		return AN_OP_DISCARD;
	default:
		return AN_OP_OTHER;
	}
}

static int block_wanted(struct builder *b, const struct st_event_header *h, uint32_t dev)
{
	const struct rp_opts *o = b->o;
	const struct an_filter *f = &b->run->filter;

	if (b->dev && dev != b->dev)
		return 0;
	if (o->pid >= 0 && h->pid != (uint64_t)o->pid)
		return 0;
	if (h->ts < f->from || (f->to && h->ts > f->to))
		return 0;
	return !o->comm || !strcmp(an_names_comm(b->run->recs[0].names, h->pid), o->comm);
}

/* The number of a recorded CPU in order of first use; beyond 65536 CPUs they share numbers. */
static uint16_t cpu_number(struct builder *b, uint32_t cpu)
{
	uint32_t n = an_idmap_get(&b->by_cpu, (uint64_t)cpu + 1);

	if (n != AN_NONE)
		return (uint16_t)n;
	n = b->p->ncpus < 65536 ? b->p->ncpus++ : cpu % 65536;
	if (an_idmap_put(&b->by_cpu, (uint64_t)cpu + 1, n))
		b->failed = 1;
	return (uint16_t)n;
}

/* A request issued, or with --bios a bio queued: one I/O to replay. */
static void block_begin(struct builder *b, const struct st_event_header *h, uint64_t id, uint32_t dev,
			uint64_t sector, uint32_t bytes, uint32_t opf)
{
	struct rp_io io = { .at = h->ts, .offset = sector << 9, .len = bytes, .next = RP_NONE };

	if (!block_wanted(b, h, dev))
		return;
	io.op = block_op(opf);
	if (io.op == AN_OP_FLUSH)
		io.len = 0;
	if (!length_ok(b, io.len, h->ts))
		return;
	io.target = block_target(b, dev);
	if (io.op == AN_OP_OTHER || io.target == RP_NONE) {
		b->p->skipped++;
		return;
	}
	io.flags = opf & ST_F_FUA ? RP_IO_FUA : 0;
	io.cpu = cpu_number(b, h->cpu);
	if (plan_add(b, &io) || an_idmap_put(&b->open, id, (uint32_t)(b->p->nios - 1)))
		b->failed = 1;
}

static void block_end(struct builder *b, uint64_t id, uint64_t ts, int requeued)
{
	uint32_t i = an_idmap_get(&b->open, id);
	struct rp_io *io;

	if (i == AN_NONE)
		return;
	an_idmap_del(&b->open, id);
	io = &b->p->ios[i];
	if (requeued)
		io->op = AN_OP_OTHER;	/* issued again later: replayed once, from that issue */
	else
		io->rec_lat = ts - io->at;
}

static void block_event(struct builder *b, const struct st_event_header *h)
{
	const struct st_ev_block_rq_issue *issue = (const void *)h;
	const struct st_ev_block_rq *rq = (const void *)h;
	const struct st_ev_block_bio *bio = (const void *)h;

	switch (h->type) {
	case ST_EV_block_rq_issue:
		if (!b->o->bios)
			block_begin(b, h, issue->p.rq, issue->p.dev, issue->p.sector,
				    block_op(issue->p.opf) == AN_OP_DISCARD ? issue->p.nr_sector << 9 :
				    issue->p.bytes, issue->p.opf);
		break;
	case ST_EV_block_rq_requeue:
	case ST_EV_block_rq_complete:
		if (!b->o->bios)
			block_end(b, rq->p.rq, h->ts, h->type == ST_EV_block_rq_requeue);
		break;
	case ST_EV_block_bio_queue:
		if (b->o->bios)
			block_begin(b, h, bio->p.bio, bio->p.dev, bio->p.sector, bio->p.nr_sector << 9,
				    bio->p.opf);
		break;
	case ST_EV_block_bio_complete:
		if (b->o->bios)
			block_end(b, bio->p.bio, h->ts, 0);
		break;
	}
}

/* Drop the requests that were requeued (op OTHER): their final issue is in the plan. */
static void drop_requeued(struct rp_plan *p)
{
	size_t i, n = 0;

	for (i = 0; i < p->nios; i++)
		if (p->ios[i].op != AN_OP_OTHER)
			p->ios[n++] = p->ios[i];
	p->nios = n;
}

static int build_block(struct builder *b, char *err, size_t cap)
{
	const struct st_event_header *ev;
	int ret;

	if (an_idmap_init(&b->open, 1024) || an_idmap_init(&b->by_cpu, 64)) {
		b->failed = 1;
		return 0;
	}
	if (an_input_start(b->run->recs[0].in, 0, UINT64_MAX, err, cap))
		return -1;
	while ((ret = an_input_next(b->run->recs[0].in, &ev, err, cap)) > 0) {
		if (an_names_wants(ev->type))
			an_names_event(b->run->recs[0].names, ev);
		block_event(b, ev);
	}
	drop_requeued(b->p);
	return ret;
}

/* Stream of a recorded thread; RP_NONE when out of memory. */
static uint32_t stream_for(struct builder *b, uint32_t tid)
{
	uint32_t s = an_idmap_get(&b->by_tid, tid);

	if (s != AN_NONE)
		return s;
	s = b->p->nstreams;
	if (an_idmap_put(&b->by_tid, tid, s)) {
		b->failed = 1;
		return RP_NONE;
	}
	b->p->nstreams++;
	return s;
}

/* File level: one correlated I/O (AN_WANT_EMIT). */
static void file_io(void *ctx, const struct an_io *io)
{
	struct builder *b = ctx;
	struct rp_io r = { .at = io->ts[AN_TS_SYS_ENTER], .offset = UINT64_MAX };
	char buf[64];
	const char *name;

	if (!(io->flags & AN_IO_SYSCALL))
		return;
	if ((io->flags & AN_IO_INCOMPLETE) || io->ret < 0 || (io->op != AN_OP_FSYNC && io->ret == 0) ||
	    (name = an_names_file(b->run->recs[0].names, io, buf, sizeof(buf)))[0] == '-') {
		b->p->skipped++;
		return;
	}
	if (io->op != AN_OP_FSYNC && !length_ok(b, (uint64_t)io->ret, r.at))
		return;
	r.op = io->op;
	if (r.op == AN_OP_FSYNC)
		r.flags = io->syscall == ST_EV_sys_enter_fsync ? 0 : RP_IO_DATASYNC;
	else
		r.len = (uint32_t)io->ret;
	if (io->offset >= 0)
		r.offset = (uint64_t)io->offset;
	r.rec_lat = io->ts[AN_TS_SYS_EXIT] - io->ts[AN_TS_SYS_ENTER];
	r.target = target_for(b, name, NULL, 0);
	/* Until link_streams(), next holds the I/O's stream. */
	r.next = stream_for(b, io->tid);
	if (r.target == RP_NONE || r.next == RP_NONE)
		return;
	/* Only direct I/O passes iomap_dio_rw_begin: the file was opened O_DIRECT. */
	if (io->ts[AN_TS_FS_BEGIN] && r.op != AN_OP_FSYNC)
		b->p->targets[r.target].direct = 1;
	plan_add(b, &r);
}

static int by_start(const void *a, const void *b)
{
	const struct rp_io *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->next < y->next ? -1 : x->next > y->next;
}

/*
 * In start order: chain each thread's I/Os through next, and give calls
 * without an offset (read, write, readv, writev) the file position they
 * continue from, since the trace does not hold it.
 */
static int link_streams(struct rp_plan *p)
{
	uint32_t *last = malloc((p->nstreams ? p->nstreams : 1) * sizeof(*last));
	uint64_t *pos = calloc(p->ntargets ? p->ntargets : 1, sizeof(*pos));
	size_t i;

	p->stream_first = malloc((p->nstreams ? p->nstreams : 1) * sizeof(*p->stream_first));
	if (!last || !pos || !p->stream_first) {
		free(last);
		free(pos);
		return -1;
	}
	for (i = 0; i < p->nstreams; i++)
		last[i] = p->stream_first[i] = RP_NONE;
	for (i = 0; i < p->nios; i++) {
		struct rp_io *io = &p->ios[i];
		uint32_t s = io->next;

		if (last[s] == RP_NONE)
			p->stream_first[s] = (uint32_t)i;
		else
			p->ios[last[s]].next = (uint32_t)i;
		last[s] = (uint32_t)i;
		if (io->op == AN_OP_FSYNC)
			io->offset = 0;
		else if (io->offset == UINT64_MAX)
			io->offset = pos[io->target];
		pos[io->target] = io->offset + io->len;
	}
	for (i = 0; i < p->nstreams; i++)
		p->ios[last[i]].next = RP_NONE;
	free(last);
	free(pos);
	return 0;
}

static int build_file(struct builder *b, char *err, size_t cap)
{
	struct an_run *run = b->run;

	if (an_idmap_init(&b->by_tid, 64)) {
		b->failed = 1;
		return 0;
	}
	run->emit = file_io;
	run->emit_ctx = b;
	if (an_run_pass(run, AN_WANT_EMIT, err, cap))
		return -1;
	if (b->failed)
		return 0;
	if (!b->p->nios)
		return 0;	/* nothing to order or link: rp_plan_build says so */
	qsort(b->p->ios, b->p->nios, sizeof(*b->p->ios), by_start);
	if (link_streams(b->p))
		b->failed = 1;
	return 0;
}

/* File level when the trace holds data syscalls, else block level. */
static enum rp_level auto_level(const struct an_run *run)
{
	static const uint16_t data_calls[] = {
		ST_EV_sys_enter_read, ST_EV_sys_enter_write, ST_EV_sys_enter_pread64,
		ST_EV_sys_enter_pwrite64, ST_EV_sys_enter_readv, ST_EV_sys_enter_writev,
		ST_EV_sys_enter_preadv, ST_EV_sys_enter_pwritev, ST_EV_sys_enter_preadv2,
		ST_EV_sys_enter_pwritev2, ST_EV_sys_enter_fsync, ST_EV_sys_enter_fdatasync,
	};
	size_t i;

	for (i = 0; i < sizeof(data_calls) / sizeof(data_calls[0]); i++)
		if (an_input_type_events(run->recs[0].in, data_calls[i]))
			return RP_LEVEL_FILE;
	return RP_LEVEL_BLOCK;
}

int rp_plan_build(struct rp_plan *p, const struct rp_opts *o, char *err, size_t cap)
{
	struct builder b = { .p = p, .o = o };
	struct an_run run;
	const struct an_input_info *info;
	char *const files[] = { (char *)o->file };
	size_t i;
	int ret = -1;

	memset(p, 0, sizeof(*p));
	if (an_run_open(&run, files, 1, NULL, err, cap)) {
		an_run_close(&run);
		return -1;
	}
	b.run = &run;
	info = an_input_info(run.recs[0].in);
	if (info->recovered)
		snprintf(p->input_note, sizeof(p->input_note),
			 "%s: damaged or cut (no valid footer): replaying the events of its intact chunks",
			 o->file);
	run.filter.pid = o->pid;
	run.filter.comm = o->comm;
	if (o->from)
		st_parse_time(o->from, info->start_ts, &run.filter.from);
	if (o->to)
		st_parse_time(o->to, info->start_ts, &run.filter.to);
	if (o->from && o->to && run.filter.from > run.filter.to) {
		snprintf(err, cap, "--from %s is after --to %s", o->from, o->to);
		ret = -2;
		goto out;
	}
	/* one file, one recording: its device numbers are the run's */
	if (o->dev && !(b.dev = run.filter.dev = run.recs[0].dev =
			an_names_dev_by_name(run.recs[0].names, o->dev))) {
		snprintf(err, cap, "--dev %s: no such device in %s", o->dev, o->file);
		goto out;
	}
	p->level = o->level != RP_LEVEL_AUTO ? o->level : auto_level(&run);
	if (an_idmap_init(&b.by_key, 64)) {
		snprintf(err, cap, "out of memory");
		goto out;
	}
	if ((p->level == RP_LEVEL_BLOCK ? build_block(&b, err, cap) : build_file(&b, err, cap)))
		goto out;
	if (b.failed) {
		snprintf(err, cap, "out of memory while reading %s", o->file);
		goto out;
	}
	if (b.too_long) {
		snprintf(err, cap, "%s: an I/O of %llu bytes (at @%llu) is longer than --max-io %llu; "
			 "raise it to replay this trace", o->file, (unsigned long long)b.too_long,
			 (unsigned long long)b.too_long_ts, (unsigned long long)o->max_io);
		goto out;
	}
	if (!p->nios) {
		snprintf(err, cap, "%s: no %s I/O to replay%s", o->file,
			 p->level == RP_LEVEL_BLOCK ? "block" : "file",
			 p->skipped ? " (none maps to a target: see --map and --dev)" :
			 p->level == RP_LEVEL_FILE && auto_level(&run) == RP_LEVEL_BLOCK ?
			 " (it holds no read, write or fsync calls; --level block replays its block I/O)" : "");
		goto out;
	}
	for (i = 0; i < p->nios; i++)
		p->rec_bytes += p->ios[i].len;
	p->span = p->ios[p->nios - 1].at - p->ios[0].at;
	for (i = p->nios; i-- > 0;) {
		struct rp_io *io = &p->ios[i];
		uint64_t end;

		io->at -= p->ios[0].at;
		/* a crafted completion before its start must not wrap the end around */
		end = io->rec_lat > UINT64_MAX - io->at ? UINT64_MAX : io->at + io->rec_lat;
		if (end > p->rec_elapsed)
			p->rec_elapsed = end;
	}
	ret = 0;
out:
	if (ret)
		rp_plan_free(p);
	an_idmap_free(&b.open);
	an_idmap_free(&b.by_key);
	an_idmap_free(&b.by_tid);
	an_idmap_free(&b.by_cpu);
	an_run_close(&run);
	return ret;
}

void rp_plan_free(struct rp_plan *p)
{
	uint32_t t;

	for (t = 0; t < p->ntargets; t++) {
		free(p->targets[t].name);
		free(p->targets[t].path);
	}
	free(p->targets);
	free(p->ios);
	free(p->stream_first);
	memset(p, 0, sizeof(*p));
}
