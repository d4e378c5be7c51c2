/* SPDX-License-Identifier: MIT */
/*
 * st_format_blktrace.c - the mapping between sttrace block events and
 * blktrace's records (st_format_blktrace.h).
 */
#include <endian.h>
#include <string.h>

#include "format/st-format/st_format_blktrace.h"

/* Category bits of an operation, as the kernel's blktrace sets them. */
static uint32_t categories(uint32_t opf)
{
	uint32_t op = opf & ST_OP_MASK, c;

	/* The kernel's op_is_write(): odd operations move data to the device. */
	c = op & 1 ? BLK_TC_WRITE : BLK_TC_READ;
	if (opf & ST_F_SYNC)
		c |= BLK_TC_SYNC;
	if (opf & ST_F_RAHEAD)
		c |= BLK_TC_AHEAD;
	if (opf & ST_F_META)
		c |= BLK_TC_META;
	if (opf & ST_F_PREFLUSH || op == ST_OP_FLUSH)
		c |= BLK_TC_FLUSH;
	if (opf & ST_F_FUA)
		c |= BLK_TC_FUA;
	if (op == ST_OP_DISCARD || op == ST_OP_SECURE_ERASE)
		c |= BLK_TC_DISCARD;
	return BLK_TC_ACT(c);
}

uint32_t sf_bt_action(const struct st_event_header *ev)
{
	switch (ev->type) {
	case ST_EV_block_bio_queue:
		return BLK_TA_QUEUE;
	case ST_EV_block_bio_backmerge:
	case ST_EV_block_rq_merge:
		return BLK_TA_BACKMERGE;
	case ST_EV_block_bio_frontmerge:
		return BLK_TA_FRONTMERGE;
	case ST_EV_block_split:
		return BLK_TA_SPLIT;
	case ST_EV_block_getrq:
		return BLK_TA_GETRQ;
	case ST_EV_block_rq_insert:
		return BLK_TA_INSERT;
	case ST_EV_block_rq_issue:
		return BLK_TA_ISSUE;
	case ST_EV_block_rq_requeue:
		return BLK_TA_REQUEUE;
	case ST_EV_block_rq_complete:
	case ST_EV_block_bio_complete:
		return BLK_TA_COMPLETE;
	}
	return 0;
}

int sf_bt_from_event(const struct st_event_header *ev, struct blk_io_trace *t, uint64_t *pdu)
{
	const struct st_ev_block_bio *bio = (const void *)ev;
	const struct st_ev_block_rq *rq = (const void *)ev;
	const struct st_ev_block_split *split = (const void *)ev;
	uint32_t action = sf_bt_action(ev);
	int pdu_len = 0;

	if (!action)
		return -1;
	memset(t, 0, sizeof(*t));
	t->magic = BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION;
	t->time = ev->ts;
	t->pid = ev->tid;
	t->cpu = ev->cpu;
	switch (ev->type) {
	case ST_EV_block_split:
		t->sector = split->p.sector;
		t->bytes = split->p.nr_sector << 9;
		t->device = split->p.dev;
		t->action = action | categories(split->p.opf);
		*pdu = htobe64(split->p.new_sector);
		pdu_len = sizeof(*pdu);
		break;
	case ST_EV_block_rq_insert:
	case ST_EV_block_rq_issue:
	case ST_EV_block_rq_merge:
	case ST_EV_block_rq_requeue:
	case ST_EV_block_rq_complete:
		t->sector = rq->p.sector;
		t->bytes = rq->p.bytes;
		t->device = rq->p.dev;
		t->error = (uint16_t)rq->p.error;
		t->action = action | categories(rq->p.opf) | BLK_TC_ACT(BLK_TC_FS);
		break;
	default:
		t->sector = bio->p.sector;
		t->bytes = bio->p.nr_sector << 9;
		t->device = bio->p.dev;
		t->error = (uint16_t)bio->p.error;
		t->action = action | categories(bio->p.opf);
		break;
	}
	t->pdu_len = (uint16_t)pdu_len;
	return pdu_len;
}

uint32_t sf_bt_opf(uint32_t action, uint32_t bytes)
{
	uint32_t c = action >> BLK_TC_SHIFT, opf;

	if (c & BLK_TC_DISCARD)
		opf = ST_OP_DISCARD;
	else if (c & BLK_TC_WRITE)
		opf = ST_OP_WRITE;
	else if (c & BLK_TC_FLUSH && !bytes)
		opf = ST_OP_FLUSH;
	else
		opf = ST_OP_READ;
	if (c & BLK_TC_FLUSH && opf != ST_OP_FLUSH)
		opf |= ST_F_PREFLUSH;
	if (c & BLK_TC_SYNC)
		opf |= ST_F_SYNC;
	if (c & BLK_TC_AHEAD)
		opf |= ST_F_RAHEAD;
	if (c & BLK_TC_META)
		opf |= ST_F_META;
	if (c & BLK_TC_FUA)
		opf |= ST_F_FUA;
	return opf;
}
