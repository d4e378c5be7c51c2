/* SPDX-License-Identifier: MIT */
/*
 * st_format_convert_iolog.c - `convert --to fio-iolog`: the I/Os queued to
 * block devices as fio's iolog version 3, which `fio --read_iolog` replays
 * at the recorded times.
 *
 * One line per bio queued (block_bio_queue, Q: what the layers above asked
 * of the device, before merges), as fio's own blktrace replay takes them:
 * "TIME /dev/NAME read|write|trim|sync OFFSET LENGTH", TIME in microseconds
 * since the first queued bio (the unit fio's write_iolog uses), OFFSET and
 * LENGTH in bytes. A device is added and opened at its first I/O and closed
 * after the last line. An empty flush or preflush bio is a sync.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/idmap.h"
#include "common/text.h"
#include "format/st-format/st_format_convert.h"

struct iolog_state {
	struct an_idmap devs;	/* dev + 1 (0 is no key) -> 1: added and opened */
	uint64_t start;		/* ts of the first queued bio */
	uint64_t last_us;
};

static int iolog_begin(struct sf_convert *cv)
{
	struct iolog_state *s = calloc(1, sizeof(*s));

	cv->state = s;
	if (!s || an_idmap_init(&s->devs, 16))
		return sf_error(cv->in, "out of memory");
	fputs("fio version 3 iolog\n", cv->text);
	return SF_OK;
}

static const char *iolog_action(uint32_t opf, uint32_t nr_sector)
{
	switch (opf & ST_OP_MASK) {
	case ST_OP_READ:
		return "read";
	case ST_OP_DISCARD:
	case ST_OP_SECURE_ERASE:
		return "trim";
	case ST_OP_FLUSH:
		return "sync";
	}
	return nr_sector ? "write" : opf & ST_F_PREFLUSH ? "sync" : NULL;
}

/*
 * "/dev/NAME" as one field of fio's line, whatever bytes a trace's device
 * name holds: on one line (text.h), a space and a slash as \x20 and \x2f,
 * so that a crafted name adds no line and no field, nor leaves /dev (a
 * kernel's device names hold neither).
 */
static void put_dev_path(struct sf_convert *cv, uint32_t dev)
{
	char name[64];

	fputs("/dev/", cv->text);
	for (const unsigned char *p = (const unsigned char *)an_names_dev(cv->names, dev, name,
									   sizeof(name)); *p; p++) {
		if (*p == ' ' || *p == '/')
			fprintf(cv->text, "\\x%02x", *p);
		else
			text_char(cv->text, *p);
	}
}

static int iolog_event(struct sf_convert *cv, const struct st_event_header *ev)
{
	const struct st_ev_block_bio *b = (const void *)ev;
	struct iolog_state *s = cv->state;
	const char *action;
	uint64_t us;

	if (ev->type != ST_EV_block_bio_queue)
		return SF_OK;
	action = iolog_action(b->p.opf, b->p.nr_sector);
	if (!action)
		return SF_OK;
	if (!s->start)
		s->start = ev->ts;
	us = (ev->ts - s->start) / 1000;
	if (an_idmap_get(&s->devs, (uint64_t)b->p.dev + 1) == AN_NONE) {
		if (an_idmap_put(&s->devs, (uint64_t)b->p.dev + 1, 1))
			return sf_error(cv->in, "out of memory");
		fprintf(cv->text, "%" PRIu64 " ", us);
		put_dev_path(cv, b->p.dev);
		fprintf(cv->text, " add\n%" PRIu64 " ", us);
		put_dev_path(cv, b->p.dev);
		fputs(" open\n", cv->text);
	}
	fprintf(cv->text, "%" PRIu64 " ", us);
	put_dev_path(cv, b->p.dev);
	if (!strcmp(action, "sync"))	/* no range */
		fputs(" sync\n", cv->text);
	else
		fprintf(cv->text, " %s %" PRIu64 " %" PRIu64 "\n", action, (uint64_t)b->p.sector << 9,
			(uint64_t)b->p.nr_sector << 9);
	s->last_us = us;
	return SF_OK;
}

static int iolog_end(struct sf_convert *cv)
{
	struct iolog_state *s = cv->state;

	if (!s)
		return SF_OK;
	for (size_t i = 0; s->devs.keys && i <= s->devs.mask; i++)
		if (s->devs.keys[i]) {
			fprintf(cv->text, "%" PRIu64 " ", s->last_us);
			put_dev_path(cv, (uint32_t)(s->devs.keys[i] - 1));
			fputs(" close\n", cv->text);
		}
	if (s->devs.keys)
		an_idmap_free(&s->devs);
	free(s);
	return SF_OK;
}

const struct sf_convert_writer sf_convert_fio_iolog = {
	.name = "fio-iolog",
	.text = 1,
	.begin = iolog_begin,
	.event = iolog_event,
	.end = iolog_end,
};
