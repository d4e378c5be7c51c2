/* SPDX-License-Identifier: MIT */
/*
 * st_format_import.c - `st-format import-blktrace`: blktrace's binary
 * per-CPU files into a .sttrace trace whose block events st-analyze
 * correlates like recorded ones.
 *
 * The files are merged by time, one record of each in memory. blktrace has
 * no bio or request addresses, so identities are rebuilt the way btt
 * matches events, by device and sector: a queued bio (Q) waits at its
 * sector until a request takes it (G) or it merges into one (M at the
 * request's end, F at its start); a request is found by its first sector
 * at insert, issue, requeue and completion, and leaves at its last
 * completion, or when it merges into the request before it on the disk
 * (M of the FS category: block_rq_merge), which takes its bios and sectors. Each bio and request gets a made-up identity, so the events
 * join exactly as recorded ones do. A completion with no request at its
 * sector completes a waiting bio (bio-based devices), else it stands alone.
 * Notify records give the command names (PROCESS) and the wall clock
 * (TIMESTAMP); other notifies, plugs and unplugs carry no I/O and are
 * skipped. Files may be little- or big-endian (blktrace writes the
 * recording host's order); each is checked on its own.
 */
#include <byteswap.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/lib/idmap.h"
#include "common/input.h"
#include "format/st-format/st_format.h"
#include "format/st-format/st_format_blktrace.h"

#define BIO_ID_BASE	0x1000000000000000ull
#define RQ_ID_BASE	0x2000000000000000ull

struct in_file {
	const char *path;
	FILE *f;
	int swap;		/* -1 not known yet, 0 native, 1 byte-swapped */
	uint64_t offset;	/* of the next record */
	int has;		/* t and pdu hold the file's next record */
	struct blk_io_trace t;
	uint8_t pdu[UINT16_MAX + 1];
};

struct request {
	uint64_t id, start, end;	/* sectors [start, end) */
	uint64_t bios[ST_RQ_BIOS];
	uint32_t nbios;
	uint32_t next_free;
};

/* The I/Os in flight on one device, by sector. */
struct device {
	uint32_t dev;
	struct an_idmap waiting;	/* sector + 1 -> bio number: queued, not in a request yet */
	struct an_idmap by_start;	/* first sector + 1 -> rqs[] */
	struct an_idmap by_end;		/* end sector + 1 -> rqs[] */
};

struct import {
	struct st_writer *w;
	struct in_file *in;
	int nin;
	struct device *devs;
	size_t ndevs;
	struct request *rqs;
	uint32_t nrqs, cap_rqs, free_rq;	/* the free list ends at AN_NONE */
	uint32_t last_bio;	/* bio identities: BIO_ID_BASE + a number, never AN_NONE */
	uint64_t last_rq;
	uint64_t events, skipped;
	uint32_t max_cpu;
	int have_clock;
};

/* ---- Reading ---------------------------------------------------------------------- */

static void swap_record(struct blk_io_trace *t)
{
	t->magic = bswap_32(t->magic);
	t->sequence = bswap_32(t->sequence);
	t->time = bswap_64(t->time);
	t->sector = bswap_64(t->sector);
	t->bytes = bswap_32(t->bytes);
	t->action = bswap_32(t->action);
	t->pid = bswap_32(t->pid);
	t->device = bswap_32(t->device);
	t->cpu = bswap_32(t->cpu);
	t->error = bswap_16(t->error);
	t->pdu_len = bswap_16(t->pdu_len);
}

/* The file's next record into in->t and in->pdu: 1, 0 at its end, -1 after printing the error. */
static int read_record(struct in_file *in)
{
	size_t n = fread(&in->t, 1, sizeof(in->t), in->f);
	uint32_t magic = in->t.magic;

	in->has = 0;
	if (n == 0 && !ferror(in->f))
		return 0;
	if (n != sizeof(in->t)) {
		if (ferror(in->f))
			sf_error(in->path, "read failed: %s", strerror(errno));
		else
			sf_error(in->path, "truncated record at byte %" PRIu64, in->offset);
		return -1;
	}
	/* The first record tells the byte order; the magic is the same in both. */
	if (in->swap < 0)
		in->swap = (magic & 0xffffff00) != BLK_IO_TRACE_MAGIC &&
			   (bswap_32(magic) & 0xffffff00) == BLK_IO_TRACE_MAGIC;
	if (in->swap)
		swap_record(&in->t);
	if ((in->t.magic & 0xffffff00) != BLK_IO_TRACE_MAGIC) {
		sf_error(in->path, "not a blktrace record at byte %" PRIu64 " (magic 0x%08x)",
			 in->offset, magic);
		return -1;
	}
	if ((in->t.magic & 0xff) != BLK_IO_TRACE_VERSION) {
		sf_error(in->path, "blktrace version %u at byte %" PRIu64 ", only %u is read",
			 in->t.magic & 0xff, in->offset, BLK_IO_TRACE_VERSION);
		return -1;
	}
	if (in->t.pdu_len && fread(in->pdu, 1, in->t.pdu_len, in->f) != in->t.pdu_len) {
		sf_error(in->path, "truncated record at byte %" PRIu64 " (%u bytes of data)",
			 in->offset, in->t.pdu_len);
		return -1;
	}
	in->offset += sizeof(in->t) + in->t.pdu_len;
	in->has = 1;
	return 1;
}

/* The file whose next record is the earliest, NULL when all are read. */
static struct in_file *earliest(struct import *im)
{
	struct in_file *best = NULL;

	for (int i = 0; i < im->nin; i++)
		if (im->in[i].has && (!best || im->in[i].t.time < best->t.time))
			best = &im->in[i];
	return best;
}

/* ---- Identities -------------------------------------------------------------------- */

static struct device *device_of(struct import *im, uint32_t dev)
{
	struct device *d;

	for (size_t i = 0; i < im->ndevs; i++)
		if (im->devs[i].dev == dev)
			return &im->devs[i];
	d = realloc(im->devs, (im->ndevs + 1) * sizeof(*d));
	if (!d)
		return NULL;
	im->devs = d;
	d = &im->devs[im->ndevs];
	memset(d, 0, sizeof(*d));
	d->dev = dev;
	if (an_idmap_init(&d->waiting, 64) || an_idmap_init(&d->by_start, 64) ||
	    an_idmap_init(&d->by_end, 64))
		return NULL;
	im->ndevs++;
	return d;
}

static uint32_t bio_number(struct import *im)
{
	if (++im->last_bio == AN_NONE)
		im->last_bio = 1;
	return im->last_bio;
}

/* The bio waiting at sector, taken out of the waiting map; a new identity if none. */
static uint64_t bio_take(struct import *im, struct device *d, uint64_t sector)
{
	uint32_t n = an_idmap_get(&d->waiting, sector + 1);

	if (n == AN_NONE)
		return BIO_ID_BASE + bio_number(im);
	an_idmap_del(&d->waiting, sector + 1);
	return BIO_ID_BASE + n;
}

/* Bio number n waits at sector; 0 or -1 (out of memory). */
static int bio_wait(struct device *d, uint64_t sector, uint32_t n)
{
	return an_idmap_put(&d->waiting, sector + 1, n);
}

static uint32_t rq_new(struct import *im, struct device *d, uint64_t start, uint64_t end)
{
	uint32_t i = im->free_rq;

	if (i != AN_NONE) {
		im->free_rq = im->rqs[i].next_free;
	} else {
		if (im->nrqs == im->cap_rqs) {
			uint32_t cap = im->cap_rqs ? im->cap_rqs * 2 : 64;
			void *p = realloc(im->rqs, cap * sizeof(*im->rqs));

			if (!p)
				return AN_NONE;
			im->rqs = p;
			im->cap_rqs = cap;
		}
		i = im->nrqs++;
	}
	memset(&im->rqs[i], 0, sizeof(im->rqs[i]));
	im->rqs[i].id = RQ_ID_BASE + ++im->last_rq;
	im->rqs[i].start = start;
	im->rqs[i].end = end;
	if (an_idmap_put(&d->by_start, start + 1, i) || an_idmap_put(&d->by_end, end + 1, i))
		return AN_NONE;
	return i;
}

static void rq_add_bio(struct request *rq, uint64_t bio)
{
	if (rq->nbios < ST_RQ_BIOS)
		rq->bios[rq->nbios] = bio;
	rq->nbios++;
}

static void rq_drop(struct import *im, struct device *d, uint32_t i)
{
	struct request *rq = &im->rqs[i];

	if (an_idmap_get(&d->by_start, rq->start + 1) == i)
		an_idmap_del(&d->by_start, rq->start + 1);
	if (an_idmap_get(&d->by_end, rq->end + 1) == i)
		an_idmap_del(&d->by_end, rq->end + 1);
	rq->next_free = im->free_rq;
	im->free_rq = i;
}

/* Move a request's range, keeping both maps right. */
static int rq_move(struct import *im, struct device *d, uint32_t i, uint64_t start, uint64_t end)
{
	struct request *rq = &im->rqs[i];

	if (an_idmap_get(&d->by_start, rq->start + 1) == i)
		an_idmap_del(&d->by_start, rq->start + 1);
	if (an_idmap_get(&d->by_end, rq->end + 1) == i)
		an_idmap_del(&d->by_end, rq->end + 1);
	rq->start = start;
	rq->end = end;
	return an_idmap_put(&d->by_start, start + 1, i) || an_idmap_put(&d->by_end, end + 1, i);
}

/*
 * Request i merged into the request that ends where it starts (the kernel
 * merges a request into the one before it on the disk): that one takes its
 * bios and its sectors.
 */
static int rq_absorb(struct import *im, struct device *d, uint32_t i)
{
	uint32_t into = an_idmap_get(&d->by_end, im->rqs[i].start + 1), b;
	struct request *rq;

	if (into == AN_NONE || into == i)
		return 0;
	rq = &im->rqs[into];
	/* past its stored bios they are counted only: rq has one of its own before them */
	for (b = 0; b < im->rqs[i].nbios; b++)
		rq_add_bio(rq, b < ST_RQ_BIOS ? im->rqs[i].bios[b] : 0);
	return rq_move(im, d, into, rq->start, im->rqs[i].end) ? ST_ENOMEM : 0;
}

/* The request starting at sector; a new one (with the bio waiting there) if none. */
static uint32_t rq_at(struct import *im, struct device *d, uint64_t sector, uint32_t nr)
{
	uint32_t i = an_idmap_get(&d->by_start, sector + 1);

	if (i != AN_NONE)
		return i;
	i = rq_new(im, d, sector, sector + nr);
	if (i != AN_NONE && an_idmap_get(&d->waiting, sector + 1) != AN_NONE)
		rq_add_bio(&im->rqs[i], bio_take(im, d, sector));
	return i;
}

/* ---- Events ------------------------------------------------------------------------- */

static void header(struct st_event_header *h, uint16_t type, uint16_t size,
		   const struct blk_io_trace *t)
{
	h->type = type;
	h->size = size;
	h->cpu = t->cpu;
	h->ts = t->time;
	/* blktrace knows the thread only, not its process */
	h->pid = t->pid;
	h->tid = t->pid;
}

static int emit_bio(struct import *im, uint16_t type, const struct blk_io_trace *t, uint64_t bio)
{
	struct st_ev_block_bio e = { 0 };

	header(&e.h, type, sizeof(e), t);
	e.p.bio = bio;
	e.p.sector = t->sector;
	e.p.dev = t->device;
	e.p.nr_sector = t->bytes >> 9;
	e.p.opf = sf_bt_opf(t->action, t->bytes);
	e.p.error = (int16_t)t->error;
	return st_writer_append(im->w, &e, sizeof(e));
}

static int emit_rq(struct import *im, uint16_t type, const struct blk_io_trace *t,
		   const struct request *rq)
{
	/* issue and complete extend block_rq: a bio chain, or the first bio */
	union {
		struct st_ev_block_rq rq;
		struct st_ev_block_rq_issue issue;
		struct st_ev_block_rq_complete complete;
	} u = { 0 };
	struct st_ev_block_rq_issue *ep = &u.issue;
	uint16_t size = type == ST_EV_block_rq_issue ? sizeof(u.issue) :
			type == ST_EV_block_rq_complete ? sizeof(u.complete) : sizeof(u.rq);

	header(&ep->h, type, size, t);
	ep->p.rq = rq ? rq->id : RQ_ID_BASE + ++im->last_rq;
	ep->p.sector = t->sector;
	ep->p.dev = t->device;
	ep->p.nr_sector = t->bytes >> 9;
	ep->p.bytes = t->bytes;
	ep->p.opf = sf_bt_opf(t->action, t->bytes);
	ep->p.error = (int16_t)t->error;
	if (type == ST_EV_block_rq_issue && rq) {
		ep->p.nr_bios = rq->nbios;
		memcpy(ep->p.bios, rq->bios, sizeof(ep->p.bios));
	}
	if (type == ST_EV_block_rq_complete && rq)
		u.complete.p.bio = rq->bios[0];
	return st_writer_append(im->w, &u, size);
}

static int emit_split(struct import *im, const struct blk_io_trace *t, struct device *d,
		      const uint8_t *pdu)
{
	struct st_ev_block_split e = { 0 };
	uint64_t remaining;
	uint32_t front = bio_number(im);

	if (t->pdu_len < sizeof(remaining))
		return 0;
	memcpy(&remaining, pdu, sizeof(remaining));
	header(&e.h, ST_EV_block_split, sizeof(e), t);
	e.p.bio = BIO_ID_BASE + front;
	e.p.parent = bio_take(im, d, t->sector);
	e.p.sector = t->sector;
	e.p.new_sector = be64toh(remaining);
	e.p.dev = t->device;
	e.p.nr_sector = t->bytes >> 9;
	e.p.opf = sf_bt_opf(t->action, t->bytes);
	/* the front part goes on at sector, the parent at the remaining part's */
	if (bio_wait(d, t->sector, front) ||
	    bio_wait(d, e.p.new_sector, (uint32_t)(e.p.parent - BIO_ID_BASE)))
		return ST_ENOMEM;
	return st_writer_append(im->w, &e, sizeof(e));
}

/* One I/O record: its sttrace event(s), identities kept up to date. */
static int import_action(struct import *im, const struct blk_io_trace *t, const uint8_t *pdu)
{
	struct device *d = device_of(im, t->device);
	uint32_t nr = t->bytes >> 9, i, n;
	int fs = !!(t->action & BLK_TC_ACT(BLK_TC_FS));
	struct request *rq;

	if (!d)
		return ST_ENOMEM;
	switch (t->action & 0xffff) {
	case __BLK_TA_QUEUE:
		n = bio_number(im);
		if (bio_wait(d, t->sector, n))
			return ST_ENOMEM;
		return emit_bio(im, ST_EV_block_bio_queue, t, BIO_ID_BASE + n);
	case __BLK_TA_BACKMERGE:
		if (fs) {	/* a request merged into another: it is gone */
			int rc;

			i = an_idmap_get(&d->by_start, t->sector + 1);
			if (i != AN_NONE && (rc = rq_absorb(im, d, i)))
				return rc;
			rc = emit_rq(im, ST_EV_block_rq_merge, t, i == AN_NONE ? NULL : &im->rqs[i]);
			if (i != AN_NONE)
				rq_drop(im, d, i);
			return rc;
		}
		i = an_idmap_get(&d->by_end, t->sector + 1);
		n = (uint32_t)(bio_take(im, d, t->sector) - BIO_ID_BASE);
		if (i != AN_NONE) {
			rq = &im->rqs[i];
			rq_add_bio(rq, BIO_ID_BASE + n);
			if (rq_move(im, d, i, rq->start, rq->end + nr))
				return ST_ENOMEM;
		}
		return emit_bio(im, ST_EV_block_bio_backmerge, t, BIO_ID_BASE + n);
	case __BLK_TA_FRONTMERGE:
		i = an_idmap_get(&d->by_start, t->sector + nr + 1);
		n = (uint32_t)(bio_take(im, d, t->sector) - BIO_ID_BASE);
		if (i != AN_NONE) {
			rq = &im->rqs[i];
			rq_add_bio(rq, BIO_ID_BASE + n);
			if (rq_move(im, d, i, t->sector, rq->end))
				return ST_ENOMEM;
		}
		return emit_bio(im, ST_EV_block_bio_frontmerge, t, BIO_ID_BASE + n);
	case __BLK_TA_GETRQ: {
		uint64_t bio = bio_take(im, d, t->sector);

		i = rq_new(im, d, t->sector, t->sector + nr);
		if (i == AN_NONE)
			return ST_ENOMEM;
		rq_add_bio(&im->rqs[i], bio);
		return emit_bio(im, ST_EV_block_getrq, t, bio);
	}
	case __BLK_TA_SPLIT:
		return emit_split(im, t, d, pdu);
	case __BLK_TA_INSERT:
	case __BLK_TA_ISSUE:
	case __BLK_TA_REQUEUE:
		i = rq_at(im, d, t->sector, nr);
		if (i == AN_NONE)
			return ST_ENOMEM;
		return emit_rq(im, (t->action & 0xffff) == __BLK_TA_INSERT ? ST_EV_block_rq_insert :
			       (t->action & 0xffff) == __BLK_TA_ISSUE ? ST_EV_block_rq_issue :
			       ST_EV_block_rq_requeue, t, &im->rqs[i]);
	case __BLK_TA_COMPLETE: {
		int rc;

		i = an_idmap_get(&d->by_start, t->sector + 1);
		if (i == AN_NONE && an_idmap_get(&d->waiting, t->sector + 1) != AN_NONE)
			return emit_bio(im, ST_EV_block_bio_complete, t, bio_take(im, d, t->sector));
		rc = emit_rq(im, ST_EV_block_rq_complete, t, i == AN_NONE ? NULL : &im->rqs[i]);
		if (i == AN_NONE)
			return rc;
		rq = &im->rqs[i];
		/* a partial completion leaves the rest of the request in flight */
		if (nr && t->sector + nr < rq->end) {
			if (rq_move(im, d, i, t->sector + nr, rq->end))
				return ST_ENOMEM;
		} else {
			rq_drop(im, d, i);
		}
		return rc;
	}
	}
	im->skipped++;
	return 0;
}

static int set_meta_fmt(struct st_writer *w, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int set_meta_fmt(struct st_writer *w, const char *key, const char *fmt, ...)
{
	char value[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	return st_writer_set_meta(w, key, value);
}

static void import_notify(struct import *im, const struct blk_io_trace *t, const uint8_t *pdu)
{
	char key[32], comm[ST_COMM_LEN + 1] = { 0 };
	uint32_t words[2];

	switch (t->action & ~BLK_TC_ACT(BLK_TC_NOTIFY)) {
	case __BLK_TN_PROCESS:
		memcpy(comm, pdu, t->pdu_len < ST_COMM_LEN ? t->pdu_len : ST_COMM_LEN);
		snprintf(key, sizeof(key), "pid.%u", t->pid);
		st_writer_set_meta(im->w, key, comm);
		break;
	case __BLK_TN_TIMESTAMP:
		if (t->pdu_len != sizeof(words) || im->have_clock)
			break;
		memcpy(words, pdu, sizeof(words));
		set_meta_fmt(im->w, "clock.realtime_offset_ns", "%" PRId64,
			     (int64_t)words[0] * 1000000000 + words[1] - (int64_t)t->time);
		im->have_clock = 1;
		break;
	}
}

/* Merge the files by time into the writer. */
static int import_records(struct import *im)
{
	struct in_file *in;
	int rc;

	for (int i = 0; i < im->nin; i++)
		if (read_record(&im->in[i]) < 0)
			return SF_BAD;
	while ((in = earliest(im))) {
		const struct blk_io_trace *t = &in->t;

		if (t->cpu > im->max_cpu)
			im->max_cpu = t->cpu;
		if (t->action & BLK_TC_ACT(BLK_TC_NOTIFY))
			import_notify(im, t, in->pdu);
		else if ((rc = import_action(im, t, in->pdu)))
			return sf_error(in->path, "%s", rc == ST_ENOMEM ? "out of memory" :
					st_writer_errmsg(im->w));
		else
			im->events++;
		if (read_record(in) < 0)
			return SF_BAD;
	}
	return SF_OK;
}

/* "NAME" of NAME.blktrace.CPU, the device blktrace traced, or NULL. */
static int device_name(const char *path, char *name, size_t cap)
{
	const char *base = strrchr(path, '/'), *end;

	base = base ? base + 1 : path;
	end = strstr(base, ".blktrace.");
	if (!end || end == base || (size_t)(end - base) >= cap)
		return -1;
	memcpy(name, base, end - base);
	name[end - base] = 0;
	return 0;
}

static void import_meta(struct import *im, int argc, char **argv)
{
	char line[4096] = "st-format", name[64], key[32];
	size_t len = strlen(line);

	for (int i = 0; i < argc && len < sizeof(line); i++)
		len += snprintf(line + len, sizeof(line) - len, " %s", argv[i]);
	st_writer_set_meta(im->w, "tool", SF_PROG " import-blktrace " ST_VERSION);
	st_writer_set_meta(im->w, "command_line", line);
	set_meta_fmt(im->w, "cpu.count", "%u", im->max_cpu + 1);
	/* blktrace names its files after the device it traced: one device, one name */
	if (im->ndevs == 1 && !device_name(im->in[0].path, name, sizeof(name))) {
		snprintf(key, sizeof(key), "dev.%u:%u", im->devs[0].dev >> 20,
			 im->devs[0].dev & 0xfffff);
		set_meta_fmt(im->w, key, "name=%s;sector_size=512", name);
	}
}

static void import_free(struct import *im)
{
	for (int i = 0; i < im->nin; i++)
		if (im->in[i].f)
			fclose(im->in[i].f);
	free(im->in);
	for (size_t d = 0; d < im->ndevs; d++) {
		an_idmap_free(&im->devs[d].waiting);
		an_idmap_free(&im->devs[d].by_start);
		an_idmap_free(&im->devs[d].by_end);
	}
	free(im->devs);
	free(im->rqs);
}

static int import_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "level", required_argument, NULL, 'z' },
		{ "force", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct st_writer_opts opts = { 0 };
	struct import im = { .free_rq = AN_NONE };
	const char *out = NULL;
	char msg[256];
	int c, rc;

	while ((c = sf_getopt(&sf_cmd_import_blktrace, argc, argv, ":ho:z:", longopts)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'z':
			if (sf_parse_level(&sf_cmd_import_blktrace, optarg, &opts.zstd_level))
				return SF_USAGE;
			break;
		case 'F':
			opts.output_flags = ST_OUTPUT_FORCE;
			break;
		case 'h':
			return SF_OK;
		default:
			return SF_USAGE;
		}
	}
	if (optind >= argc)
		return sf_usage(&sf_cmd_import_blktrace, "missing blktrace FILE");
	if (!out)
		return sf_usage(&sf_cmd_import_blktrace, "missing -o OUT");
	im.nin = argc - optind;
	im.in = calloc(im.nin, sizeof(*im.in));
	if (!im.in)
		return sf_error(out, "out of memory");
	rc = SF_OK;
	for (int i = 0; i < im.nin && !rc; i++) {
		char real[4096];

		im.in[i].path = argv[optind + i];
		im.in[i].swap = -1;
		/* "-" or a FIFO comes copied to a file: one without a writer reads empty, never blocks */
		if (input_path(im.in[i].path, real, sizeof(real), msg, sizeof(msg)))
			rc = sf_error(im.in[i].path, "%s", msg);
		else if (!(im.in[i].f = fopen(real, "rb")))
			rc = sf_error(im.in[i].path, "cannot open: %s", strerror(errno));
	}
	if (!rc && st_writer_open(&im.w, out, &opts))
		rc = sf_error(out, "%s", im.w ? st_writer_errmsg(im.w) : "out of memory");
	if (!rc && st_writer_add_builtin_types(im.w))
		rc = sf_error(out, "%s", st_writer_errmsg(im.w));
	if (!rc)
		rc = import_records(&im);
	if (im.w) {
		if (!rc)
			import_meta(&im, argc, argv);
		if (st_writer_close(im.w, msg, sizeof(msg)) && !rc)
			rc = sf_error(out, "%s", msg);
		if (rc)
			unlink(out);
	}
	import_free(&im);
	return rc;
}

const struct sf_cmd sf_cmd_import_blktrace = {
	.name = "import-blktrace",
	.summary = "turn blktrace's binary files into a trace",
	.help =
	"Usage: st-format import-blktrace DEV.blktrace.0 [DEV.blktrace.1 ...] -o OUT [-z LEVEL] [--force]\n"
	"Read blktrace's binary per-CPU files (struct blk_io_trace; little- or\n"
	"big-endian, with their data and notify records) and write their block\n"
	"events as a trace that st-analyze correlates like a recorded one.\n\n"
	"  Q M F X G I D R C become block_bio_queue, block_bio_backmerge (a request\n"
	"  merge: block_rq_merge), block_bio_frontmerge, block_split, block_getrq,\n"
	"  block_rq_insert, block_rq_issue, block_rq_requeue and block_rq_complete\n"
	"  (block_bio_complete for a bio no request took). Bios and requests get\n"
	"  made-up identities, found again by device and sector as btt does.\n"
	"  Process notifies become pid.* metadata (blktrace's pid is the thread),\n"
	"  the timestamp notify the wall clock; plugs, unplugs, remaps and\n"
	"  messages are skipped. The one device of files named like blktrace's\n"
	"  is named after them (loop0 of loop0.blktrace.0).\n\n"
	"  -o, --output OUT   the trace to write\n"
	"  -z, --level LEVEL  zstd level (default 1)\n"
	SF_FORCE_HELP
	"  -h, --help         this text\n\n"
	"Exit status: 0 written, 1 unreadable, truncated or malformed input (one\n"
	"line names the file and byte), 2 bad arguments.\n",
	.run = import_run,
};
