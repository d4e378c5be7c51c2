/* SPDX-License-Identifier: MIT */
/*
 * Files through the input layer: events out of order across chunks (the
 * cursor merges overlapping chunks), a stored type whose layout differs from
 * the built-in one (adapted by field name, missing fields 0), and two files
 * analyzed as one stream.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/correlate.h"
#include "analyze/input.h"
#include "tests/check.h"
#include "tests/analyze/collect.h"

/* block_rq_complete as an imaginary other recorder stores it: reordered, no opf/nr_bios. */
struct old_complete {
	struct st_event_header h;
	uint64_t extra, rq, sector;
	uint32_t dev, nr_sector;
	int32_t error;
	uint32_t bytes;
};

static struct st_field old_fields[12];
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

static void head(struct st_event_header *h, uint16_t type, uint16_t size, uint64_t ts)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->size = size;
	h->ts = ts;
	h->pid = h->tid = 42;
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
	struct st_ev_block_rq e = { .p = { .rq = rq, .dev = 7 << 20, .nr_sector = 8 } };
	struct old_complete o = { .rq = rq, .dev = 7 << 20, .nr_sector = 8, .extra = 99 };

	if (old_layout) {
		head(&o.h, ST_EV_block_rq_complete, sizeof(o), ts);
		st_writer_append(w, &o, sizeof(o));
		return;
	}
	head(&e.h, ST_EV_block_rq_complete, sizeof(e), ts);
	st_writer_append(w, &e, sizeof(e));
}

static struct st_writer *create(const char *path, int old_layout)
{
	size_t n, i;
	const struct st_type *t = st_builtin_types(&n);
	struct st_writer *w;

	if (st_writer_open(&w, path, NULL))
		return NULL;
	for (i = 0; i < n; i++)
		st_writer_add_type(w, t[i].id == ST_EV_block_rq_complete && old_layout ? &old_type : &t[i]);
	st_writer_set_meta(w, "dev.7:0", "name=loop0;sector_size=512");
	return w;
}

/* Correlate every event of the files; returns the out-of-order count. */
static uint64_t analyze(char **paths, int n)
{
	const struct st_event_header *ev;
	struct an_names *names;
	struct an_input *in;
	struct an_corr *c;
	char err[256];
	uint64_t ooo;

	nout = 0;
	an_names_new(&names);
	if (an_input_open(&in, paths, n, names, err, sizeof(err)) ||
	    an_input_start(in, 0, UINT64_MAX, err, sizeof(err))) {
		printf("input: %s\n", err);
		exit(1);
	}
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
	unlink(a);
	unlink(b);
	return check_failures != 0;
}
