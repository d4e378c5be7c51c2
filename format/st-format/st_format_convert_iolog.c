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

static const char *dev_path(struct sf_convert *cv, uint32_t dev, char *buf, size_t cap)
{
	char name[64];

	snprintf(buf, cap, "/dev/%s", an_names_dev(cv->names, dev, name, sizeof(name)));
	return buf;
}

static int iolog_event(struct sf_convert *cv, const struct st_event_header *ev)
{
	const struct st_ev_block_bio *b = (const void *)ev;
	struct iolog_state *s = cv->state;
	const char *action;
	char path[80];
	uint64_t us;

	if (ev->type != ST_EV_block_bio_queue)
		return SF_OK;
	action = iolog_action(b->p.opf, b->p.nr_sector);
	if (!action)
		return SF_OK;
	if (!s->start)
		s->start = ev->ts;
	us = (ev->ts - s->start) / 1000;
	dev_path(cv, b->p.dev, path, sizeof(path));
	if (an_idmap_get(&s->devs, (uint64_t)b->p.dev + 1) == AN_NONE) {
		if (an_idmap_put(&s->devs, (uint64_t)b->p.dev + 1, 1))
			return sf_error(cv->in, "out of memory");
		fprintf(cv->text, "%" PRIu64 " %s add\n%" PRIu64 " %s open\n", us, path, us, path);
	}
	if (!strcmp(action, "sync"))	/* no range */
		fprintf(cv->text, "%" PRIu64 " %s sync\n", us, path);
	else
		fprintf(cv->text, "%" PRIu64 " %s %s %" PRIu64 " %" PRIu64 "\n", us, path, action,
			(uint64_t)b->p.sector << 9, (uint64_t)b->p.nr_sector << 9);
	s->last_us = us;
	return SF_OK;
}

static int iolog_end(struct sf_convert *cv)
{
	struct iolog_state *s = cv->state;
	char path[80];

	if (!s)
		return SF_OK;
	for (size_t i = 0; s->devs.keys && i <= s->devs.mask; i++)
		if (s->devs.keys[i])
			fprintf(cv->text, "%" PRIu64 " %s close\n", s->last_us,
				dev_path(cv, (uint32_t)(s->devs.keys[i] - 1), path, sizeof(path)));
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
