/* SPDX-License-Identifier: MIT */
/*
 * Files through the input layer: events out of order across chunks (the
 * cursor merges overlapping chunks), a stored type whose layout differs from
 * the built-in one (adapted by field name, missing fields 0), and two files
 * analyzed as one stream; the stamped issues of st-record's `block` preset
 * standing in for the queue, merge and allocation events they replace, and
 * its compact completions made whole from their requests' issues.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/lib/correlate.h"
#include "analyze/lib/input.h"
#include "tests/analyze/collect.h"
#include "tests/analyze/events.h"
#include "tests/check.h"

/* block_rq_complete as an imaginary other recorder stores it: reordered, no opf/nr_bios. */
struct old_complete {
	struct st_event_header h;
	uint64_t extra, rq, sector;
	uint32_t dev, nr_sector;
	int32_t error;
	uint32_t bytes;
};

static struct st_field old_fields[13];
static struct st_type old_type = {
	.id = ST_EV_block_rq_complete, .size = sizeof(struct old_complete),
	.name = "block_rq_complete", .fields = old_fields,
};

static void declare_old_type(void)
{
	const struct st_type *b = st_builtin_type(ST_EV_block_rq_complete);
	static const struct { const char *name; uint16_t off; uint8_t size, type; } extra[] = {
		{ "extra", 24, 8, ST_FT_UINT }, { "rq", 32, 8, ST_FT_HEX },
		{ "sector", 40, 8, ST_FT_UINT }, { "dev", 48, 4, ST_FT_DEV },
		{ "nr_sector", 52, 4, ST_FT_UINT }, { "error", 56, 4, ST_FT_INT },
		{ "bytes", 60, 4, ST_FT_UINT },	/* a schema covers its record exactly (spec 5.2) */
	};
	unsigned i, n = 0;

	for (i = 0; i < 6; i++)	/* the common header fields, as built in */
		old_fields[n++] = b->fields[i];
	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		old_fields[n++] = (struct st_field){ .name = extra[i].name, .offset = extra[i].off,
			.size = extra[i].size, .elem_size = extra[i].size, .type = extra[i].type,
			.doc = "test" };
	old_type.nfields = (uint16_t)n;
}

static void put_queue(struct st_writer *w, uint64_t ts, uint64_t bio)
{
	struct st_ev_block_bio e = { .p = { .bio = bio, .dev = 7 << 20, .nr_sector = 8 } };

	head(&e.h, ST_EV_block_bio_queue, sizeof(e), ts);
	st_writer_append(w, &e, sizeof(e));
}

static void put_issue(struct st_writer *w, uint64_t ts, uint64_t rq, uint64_t bio)
{
	struct st_ev_block_rq_issue e = { .p = { .rq = rq, .dev = 7 << 20, .nr_sector = 8,
						 .nr_bios = 1, .bios = { bio } } };

	head(&e.h, ST_EV_block_rq_issue, sizeof(e), ts);
	st_writer_append(w, &e, sizeof(e));
}

static void put_complete(struct st_writer *w, uint64_t ts, uint64_t rq, int old_layout)
{
	struct st_ev_block_rq_complete e = { .p = { .rq = rq, .dev = 7 << 20, .nr_sector = 8 } };
	struct old_complete o = { .rq = rq, .dev = 7 << 20, .nr_sector = 8, .extra = 99 };

	if (old_layout) {
		head(&o.h, ST_EV_block_rq_complete, sizeof(o), ts);
		st_writer_append(w, &o, sizeof(o));
		return;
	}
	head(&e.h, ST_EV_block_rq_complete, sizeof(e), ts);
	st_writer_append(w, &e, sizeof(e));
}

/* A stamped issue of rq at ts: bios queued queue_ago[i] before, allocated getrq_ago before. */
static void put_stamped(struct st_writer *w, uint64_t ts, uint64_t rq, uint32_t nr_bios,
			const uint64_t *bios, const uint32_t *queue_ago, uint32_t getrq_ago,
			uint32_t stamped)
{
	struct st_ev_block_rq_issue_stamped e = { .p = { .rq = rq, .sector = 1000, .dev = 7 << 20,
		.nr_sector = 8 * nr_bios, .bytes = 4096 * nr_bios, .opf = ST_OP_WRITE | ST_F_SYNC,
		.nr_bios = nr_bios, .stamped = stamped,
		.getrq_ago = getrq_ago } };
	uint32_t i;

	for (i = 0; i < nr_bios && i < ST_RQ_BIOS; i++) {
		e.p.bios[i] = bios[i];
		e.p.queue_ago[i] = queue_ago[i];
		e.p.bio_sectors[i] = 8;
	}
	head(&e.h, ST_EV_block_rq_issue_stamped, sizeof(e), ts);
	st_writer_append(w, &e, sizeof(e));
}

static void put_compact(struct st_writer *w, uint64_t ts, uint64_t rq, uint32_t bytes)
{
	struct st_ev_block_rq_complete_compact e = { .p = { .rq = rq, .dev = 7 << 20, .bytes = bytes } };

	head(&e.h, ST_EV_block_rq_complete_compact, sizeof(e), ts);
	st_writer_append(w, &e, sizeof(e));
}

/* The input layer over files paths[0..n-1], read from the start; exits when it cannot. */
static struct an_input *input_of(char **paths, int n, struct an_names **names)
{
	struct an_input *in;
	char err[256];

	an_names_new(names);
	if (an_input_open(&in, paths, n, *names, err, sizeof(err)) ||
	    an_input_start(in, 0, UINT64_MAX, err, sizeof(err))) {
		printf("input: %s\n", err);
		exit(1);
	}
	return in;
}

/* One event handed on as text into buf; how many bytes, 0 for an event it leaves out. */
typedef int (*describe_fn)(const struct st_event_header *ev, char *buf, size_t cap);

/* The events the input layer hands on for the file, each as describe puts it. */
static void handed_on(char *path, describe_fn describe, char *buf, size_t cap)
{
	const struct st_event_header *ev;
	struct an_names *names;
	struct an_input *in = input_of(&path, 1, &names);
	char err[256];
	size_t len = 0;

	buf[0] = 0;
	while (an_input_next(in, &ev, err, sizeof(err)) > 0 && len < cap)
		len += (size_t)describe(ev, buf + len, cap - len);
	an_input_close(in);
	an_names_free(names);
}

/* A block_rq_complete as "ts:sector:nr_sector:bio:opf ". */
static int completion(const struct st_event_header *ev, char *buf, size_t cap)
{
	const struct st_ev_block_rq_complete *e = (const void *)ev;

	if (ev->type != ST_EV_block_rq_complete)
		return 0;
	return snprintf(buf, cap, "%" PRIu64 ":%" PRIu64 ":%u:%#" PRIx64 ":%u ", (uint64_t)ev->ts,
			(uint64_t)e->p.sector, e->p.nr_sector, (uint64_t)e->p.bio, e->p.opf);
}

/* A bio merge as "Mbio@ts " (F for a front merge). */
static int bio_merge(const struct st_event_header *ev, char *buf, size_t cap)
{
	if (ev->type != ST_EV_block_bio_backmerge && ev->type != ST_EV_block_bio_frontmerge)
		return 0;
	return snprintf(buf, cap, "%c%#" PRIx64 "@%" PRIu64 " ",
			ev->type == ST_EV_block_bio_backmerge ? 'M' : 'F',
			(uint64_t)((const struct st_ev_block_bio *)ev)->p.bio, (uint64_t)ev->ts);
}

static const struct an_io *io_at_sector(uint64_t sector)
{
	int i;

	for (i = 0; i < nout && i < MAX_OUT; i++)
		if (out[i].sector == sector)
			return &out[i];
	return NULL;
}

/* Q, G, D, C of the I/O at sector, and whether it merged, as "Q G D C m". */
static void stages_at(uint64_t sector, char *buf, size_t cap)
{
	const struct an_io *io = io_at_sector(sector);

	if (!io) {
		snprintf(buf, cap, "none");
		return;
	}
	snprintf(buf, cap, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %d",
		 io->ts[AN_TS_QUEUE], io->ts[AN_TS_GETRQ], io->ts[AN_TS_ISSUE],
		 io->ts[AN_TS_COMPLETE], !!(io->flags & AN_IO_MERGED));
}

static struct st_writer *create(const char *path, int old_layout)
{
	struct st_writer *w = builtin_writer(path, old_layout ? &old_type : NULL);

	if (w)
		st_writer_set_meta(w, "dev.7:0", "name=loop0;sector_size=512");
	return w;
}

/* Correlate every event of the files; returns the out-of-order count. */
static uint64_t analyze(char **paths, int n)
{
	const struct st_event_header *ev;
	struct an_names *names;
	struct an_input *in = input_of(paths, n, &names);
	struct an_corr *c;
	char err[256];
	uint64_t ooo;

	nout = 0;
	an_corr_new(&c, 0, collect, NULL);
	while (an_input_next(in, &ev, err, sizeof(err)) > 0)
		an_corr_event(c, ev);
	an_corr_finish(c);
	ooo = an_corr_stats(c)->out_of_order;
	an_corr_free(c);
	an_input_close(in);
	an_names_free(names);
	return ooo;
}

static uint64_t d2c_of(uint64_t queue_ts)
{
	uint64_t ns;
	int i;

	for (i = 0; i < nout && i < MAX_OUT; i++)
		if (out[i].ts[AN_TS_QUEUE] == queue_ts && !(out[i].flags & AN_IO_INCOMPLETE))
			return an_io_stage(&out[i], AN_ST_D2C, &ns) ? ns : UINT64_MAX;
	return UINT64_MAX;
}

int main(void)
{
	char a[] = "/tmp/an-input-a.XXXXXX", b[] = "/tmp/an-input-b.XXXXXX";
	char *paths[2] = { a, b };
	struct st_writer *w;
	uint64_t ooo;

	declare_old_type();
	close(mkstemp(a));
	close(mkstemp(b));

	/* Chunk 1 spans [100, 900], chunk 2 [250, 800]: they overlap in time. */
	w = create(a, 1);
	put_queue(w, 100, 0xa);
	put_queue(w, 150, 0xb);
	put_issue(w, 200, 0x10, 0xa);
	put_complete(w, 900, 0x10, 1);
	st_writer_flush(w);
	put_issue(w, 250, 0x20, 0xb);
	put_complete(w, 800, 0x20, 1);
	st_writer_close(w, NULL, 0);

	ooo = analyze(paths, 1);
	check(nout == 2 && ooo == 0 && d2c_of(100) == 700 && d2c_of(150) == 550,
	      "input.out_of_order_chunks", "%d I/Os, %" PRIu64 " out of order, D2C %" PRIu64
	      "/%" PRIu64, nout, ooo, d2c_of(100), d2c_of(150));
	check(nout == 2 && out[0].dev == (7u << 20) && out[0].ts[AN_TS_COMPLETE] != 0,
	      "input.adapted_layout", "completion fields not adapted");

	/* A second file, interleaved in time with the first. */
	w = create(b, 0);
	put_queue(w, 120, 0xc);
	put_issue(w, 300, 0x30, 0xc);
	put_complete(w, 400, 0x30, 0);
	st_writer_close(w, NULL, 0);
	ooo = analyze(paths, 2);
	check(nout == 3 && ooo == 0 && d2c_of(120) == 100 && d2c_of(100) == 700 &&
	      d2c_of(150) == 550, "input.two_files_merged", "%d I/Os, %" PRIu64 " out of order",
	      nout, ooo);

	/*
	 * Stamped: three bios merged into one request, queued at 500, 700 and
	 * 400, the request allocated at 450 (by the bio queued first, 0xf),
	 * issued at 1000; an unrelated completion at 600 stored before the
	 * issue; a request without stamps (queued and allocated: unknown).
	 */
	{
		static const uint64_t bios[] = { 0xd, 0xe, 0xf };
		static const uint32_t ago[] = { 500, 300, 600 };
		static const uint32_t none[] = { 0 };
		char s0[64], s1[64], s2[64];

		w = create(a, 0);
		put_complete(w, 600, 0x99, 0);
		put_stamped(w, 1000, 0x40, 3, bios, ago, 550, ST_STAMPED_GETRQ | ST_STAMPED_QUEUE(0) |
			    ST_STAMPED_QUEUE(1) | ST_STAMPED_QUEUE(2));
		{
			struct st_ev_block_rq_complete done = { .p = { .rq = 0x40, .dev = 7 << 20, .nr_sector = 24 } };

			head(&done.h, ST_EV_block_rq_complete, sizeof(done), 1200);
			st_writer_append(w, &done, sizeof(done));
		}
		put_stamped(w, 2000, 0x50, 1, (const uint64_t[]){ 0x11 }, none, 0, 0);
		put_complete(w, 2100, 0x50, 0);
		st_writer_close(w, NULL, 0);
		ooo = analyze(paths, 1);
		stages_at(1000, s0, sizeof(s0));
		stages_at(1008, s1, sizeof(s1));
		stages_at(1016, s2, sizeof(s2));
		check(nout == 4 && ooo == 0 && !strcmp(s0, "500 0 1000 1200 1") &&
		      !strcmp(s1, "700 0 1000 1200 1") && !strcmp(s2, "400 450 1000 1200 0"),
		      "input.stamped_issue", "%d I/Os, %" PRIu64 " out of order; Q G D C merged: "
		      "%s / %s / %s", nout, ooo, s0, s1, s2);
		check(nout == 4 && out[3].ts[AN_TS_QUEUE] == 2000 && !out[3].ts[AN_TS_GETRQ] &&
		      out[3].ts[AN_TS_COMPLETE] == 2100, "input.stamped_issue_unstamped",
		      "an issue without stamps: Q %" PRIu64 " G %" PRIu64, out[3].ts[AN_TS_QUEUE],
		      out[3].ts[AN_TS_GETRQ]);

		/*
		 * Requeued after its first issue: the second issue stands for no
		 * new bio. Without stamps its bio would be queued at that issue,
		 * when it is already in the request.
		 */
		w = create(a, 0);
		put_stamped(w, 1000, 0x40, 1, bios, none, 0, 0);
		{
			struct st_ev_block_rq rq = { .p = { .rq = 0x40, .dev = 7 << 20, .nr_sector = 8 } };

			head(&rq.h, ST_EV_block_rq_requeue, sizeof(rq), 1100);
			st_writer_append(w, &rq, sizeof(rq));
		}
		put_stamped(w, 1300, 0x40, 1, bios, none, 0, 0);
		put_complete(w, 1500, 0x40, 0);
		st_writer_close(w, NULL, 0);
		ooo = analyze(paths, 1);
		check(nout == 1 && ooo == 0 && !(out[0].flags & AN_IO_INCOMPLETE) &&
		      out[0].ts[AN_TS_QUEUE] == 1000 && out[0].ts[AN_TS_ISSUE] == 1300 &&
		      out[0].requeues == 1 && out[0].ts[AN_TS_COMPLETE] == 1500,
		      "input.stamped_requeued", "%d I/Os, flags 0x%x, Q %" PRIu64 " D %" PRIu64
		      " requeues %u", nout, out[0].flags, out[0].ts[AN_TS_QUEUE],
		      out[0].ts[AN_TS_ISSUE], out[0].requeues);

		/*
		 * A bio address used twice: request 0x60 (bio 0x21, allocated at
		 * 900) issued at 1000 and completed at 1200; then request 0x70
		 * with the same address, its allocation stamped at 1100 (a
		 * request from a plug's cache carries the plug's cached clock),
		 * issued at 1500. Dated at its stamp, the second bio's queueing
		 * would come while the first still holds the address, and the
		 * first request's completion would take it.
		 */
		w = create(a, 0);
		put_stamped(w, 1000, 0x60, 1, (const uint64_t[]){ 0x21 }, none, 100,
			    ST_STAMPED_GETRQ);
		put_complete(w, 1200, 0x60, 0);
		put_stamped(w, 1500, 0x70, 1, (const uint64_t[]){ 0x21 }, none, 400,
			    ST_STAMPED_GETRQ);
		put_complete(w, 1600, 0x70, 0);
		st_writer_close(w, NULL, 0);
		ooo = analyze(paths, 1);
		check(nout == 2 && ooo == 0 && !(out[0].flags & AN_IO_INCOMPLETE) &&
		      !(out[1].flags & AN_IO_INCOMPLETE) && out[0].ts[AN_TS_COMPLETE] == 1200 &&
		      out[1].ts[AN_TS_QUEUE] >= 1200 && out[1].ts[AN_TS_GETRQ] >= 1200 &&
		      out[1].ts[AN_TS_ISSUE] == 1500 && out[1].ts[AN_TS_COMPLETE] == 1600,
		      "input.stamped_bio_reused", "%d I/Os; first C %" PRIu64 "; second Q %" PRIu64
		      " G %" PRIu64 " D %" PRIu64 " C %" PRIu64, nout, out[0].ts[AN_TS_COMPLETE],
		      nout > 1 ? out[1].ts[AN_TS_QUEUE] : 0, nout > 1 ? out[1].ts[AN_TS_GETRQ] : 0,
		      nout > 1 ? out[1].ts[AN_TS_ISSUE] : 0, nout > 1 ? out[1].ts[AN_TS_COMPLETE] : 0);
	}
	{
		/*
		 * A stamped issue of a request of 10 bios (sectors 1000..1079, 8
		 * each), of which the issue stores 4: the kernel counted 9 merges.
		 * The 6 bios past those are queued and merged too, each its own
		 * (no syscall to join: an I/O each), sharing the rest evenly.
		 */
		static const uint64_t bios[] = { 0xd1, 0xd2, 0xd3, 0xd4 };
		static const uint32_t none[ST_RQ_BIOS];
		unsigned merges = 0, whole = 0, seen = 0, i;

		w = create(a, 0);
		put_stamped(w, 4000, 0xa0, 10, bios, none, 0, 0);
		put_compact(w, 4100, 0xa0, 10 * 4096);
		st_writer_close(w, NULL, 0);
		ooo = analyze(paths, 1);
		for (i = 0; i < (unsigned)nout && i < MAX_OUT; i++) {
			unsigned k = (unsigned)(out[i].sector - 1000) / 8;

			merges += out[i].merges;
			if (out[i].sector >= 1000 && out[i].sector == 1000 + 8 * k && k < 10 &&
			    !(seen & 1u << k) && out[i].bytes == 4096 &&
			    out[i].ts[AN_TS_COMPLETE] == 4100 && !(out[i].flags & AN_IO_INCOMPLETE)) {
				seen |= 1u << k;
				whole++;
			}
		}
		check(nout == 10 && ooo == 0 && merges == 9 && whole == 10, "input.stamped_past_stored_bios",
		      "%d I/Os, %u merges, %u at their sector with 4096 bytes, complete", nout, merges,
		      whole);

		/*
		 * The same request again, its allocation stamped at 4150, before
		 * its first use completed at 4200 (a plug's cached clock): the
		 * bios past the stored ones have the same addresses both times,
		 * so the second ones are queued after that completion.
		 */
		w = create(a, 0);
		put_stamped(w, 4000, 0xa0, 6, bios, none, 0, 0);
		put_compact(w, 4200, 0xa0, 6 * 4096);
		put_stamped(w, 4500, 0xa0, 6, bios, none, 350, ST_STAMPED_GETRQ);
		put_compact(w, 4600, 0xa0, 6 * 4096);
		st_writer_close(w, NULL, 0);
		ooo = analyze(paths, 1);
		whole = 0;
		for (i = 0; i < (unsigned)nout && i < MAX_OUT; i++)
			whole += !(out[i].flags & AN_IO_INCOMPLETE) &&
				 (out[i].ts[AN_TS_COMPLETE] == 4200 ||
				  (out[i].ts[AN_TS_COMPLETE] == 4600 && out[i].ts[AN_TS_QUEUE] >= 4200));
		check(nout == 12 && whole == 12, "input.stamped_past_stored_reused",
		      "%d I/Os, %u complete and queued after the previous use", nout, whole);
	}
	{
		/*
		 * Request 0xd0 of 6 bios (0xe1..0xe4 stored) allocated at 1100, no
		 * bio stamped; one bio's address was request 0xc0's bio until
		 * 1200, so that bio is dated 1200, and so are the bios after it
		 * in the chain: they merged after it (back merges append), the 2
		 * past the stored ones last. When it is the first, it still got
		 * the request (nothing stamped says another did).
		 */
		static const uint32_t none[ST_RQ_BIOS];
		static const struct { uint64_t reused; const char *name; } cases[] = {
			{ 0xe2, "input.stamped_merges_in_chain_order" },
			{ 0xe1, "input.stamped_first_bio_reused" },
		};
		char got[256];

		for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
			w = create(a, 0);
			put_stamped(w, 1000, 0xc0, 1, &cases[k].reused, none, 0, 0);
			put_compact(w, 1200, 0xc0, 4096);
			put_stamped(w, 1500, 0xd0, 6, (const uint64_t[]){ 0xe1, 0xe2, 0xe3, 0xe4 }, none,
				    400, ST_STAMPED_GETRQ);
			put_compact(w, 1600, 0xd0, 6 * 4096);
			st_writer_close(w, NULL, 0);
			handed_on(a, bio_merge, got, sizeof(got));
			check(!strcmp(got, "M0xe2@1200 M0xe3@1200 M0xe4@1200 M0xd1@1200 M0xd2@1200 "),
			      cases[k].name, "merges handed on: %s", got);
		}
	}
	{
		/*
		 * Compact completions: request 0x80 (sector 1000, 8 sectors, bio
		 * 0xc1) completes in two halves, then a completion of a request
		 * issued before the trace. Each becomes the block_rq_complete it
		 * stands for, from the issue: the second half starts 4 sectors on.
		 */
		static const uint32_t none[ST_RQ_BIOS];
		char got[256], want[256];

		w = create(a, 0);
		put_stamped(w, 3000, 0x80, 1, (const uint64_t[]){ 0xc1 }, none, 0, 0);
		put_compact(w, 3100, 0x80, 2048);
		put_compact(w, 3200, 0x80, 2048);
		put_compact(w, 3300, 0x99, 4096);
		st_writer_close(w, NULL, 0);
		handed_on(a, completion, got, sizeof(got));
		snprintf(want, sizeof(want), "3100:1000:4:0xc1:%u 3200:1004:4:0xc1:%u 3300:0:8:0:0 ",
			 ST_OP_WRITE | ST_F_SYNC, ST_OP_WRITE | ST_F_SYNC);
		check(!strcmp(got, want), "input.compact_made_whole", "completions handed on: %s; want %s",
		      got, want);
		ooo = analyze(paths, 1);
		check(nout == 1 && ooo == 0 && !(out[0].flags & AN_IO_INCOMPLETE) &&
		      out[0].ts[AN_TS_ISSUE] == 3000 && out[0].ts[AN_TS_COMPLETE] == 3200,
		      "input.compact_completes_io", "%d I/Os, flags 0x%x, D %" PRIu64 " C %" PRIu64,
		      nout, nout ? out[0].flags : 0, nout ? out[0].ts[AN_TS_ISSUE] : 0,
		      nout ? out[0].ts[AN_TS_COMPLETE] : 0);
	}
	{
		/*
		 * 20,000 requests, 100 us apart and then 5 us apart, each queued
		 * and allocated up to 250 us before its issue (before the issues
		 * of the requests before it) and completed 40 us after it: the
		 * records held back in the read-ahead window span 2 s, and their
		 * bytes grow tenfold halfway, so the input's buffers wrap and
		 * grow while wrapped. Every request's four events come out, in
		 * time order.
		 */
		enum { REQUESTS = 20000 };
		const struct st_event_header *ev;
		struct an_names *names;
		struct an_input *in;
		uint64_t ts = 1000000, last = 0, count[4] = { 0 }, backwards = 0, other = 0;
		char err[256];
		uint32_t i;

		w = create(a, 0);
		for (i = 0; i < REQUESTS; i++) {
			uint32_t ago = 1000 + 27000 * (i % 10);

			ts += i < REQUESTS / 2 ? 100000 : 5000;
			put_stamped(w, ts, 0x1000 + 0x400 * (uint64_t)i, 1, (const uint64_t[]){ 0x100 + i },
				    (const uint32_t[]){ ago }, ago / 2,
				    ST_STAMPED_GETRQ | ST_STAMPED_QUEUE(0));
			put_compact(w, ts + 40000, 0x1000 + 0x400 * (uint64_t)i, 4096);
		}
		st_writer_close(w, NULL, 0);
		in = input_of(paths, 1, &names);
		while (an_input_next(in, &ev, err, sizeof(err)) > 0) {
			backwards += ev->ts < last;
			last = ev->ts;
			switch (ev->type) {
			case ST_EV_block_bio_queue: count[0]++; break;
			case ST_EV_block_getrq: count[1]++; break;
			case ST_EV_block_rq_issue: count[2]++; break;
			case ST_EV_block_rq_complete: count[3]++; break;
			default: other++;
			}
		}
		an_input_close(in);
		an_names_free(names);
		check(!backwards && !other && count[0] == REQUESTS && count[1] == REQUESTS &&
		      count[2] == REQUESTS && count[3] == REQUESTS, "input.stamped_many_in_order",
		      "%" PRIu64 " steps back in time, %" PRIu64 " other events; Q G D C: %" PRIu64
		      " %" PRIu64 " %" PRIu64 " %" PRIu64 " of %d", backwards, other, count[0], count[1],
		      count[2], count[3], REQUESTS);
	}
	unlink(a);
	unlink(b);
	return check_failures != 0;
}
