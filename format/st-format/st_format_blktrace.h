/* SPDX-License-Identifier: MIT */
/*
 * st_format_blktrace.h - sttrace block events and blktrace's records
 * (struct blk_io_trace, linux/blktrace_api.h), both ways: the one mapping
 * `convert --to blktrace|blkparse` and `import-blktrace` share.
 *
 * Action of each block event, as the kernel's blktrace emits it:
 *   block_bio_queue Q, block_bio_backmerge M, block_bio_frontmerge F,
 *   block_split X (PDU: the remaining part's sector, big-endian u64),
 *   block_getrq G, block_rq_insert I, block_rq_issue D,
 *   block_rq_merge M (a request merged into another one), block_rq_requeue R,
 *   block_rq_complete C, block_bio_complete C (bio-based devices).
 * Category bits: READ or WRITE by the operation's direction, SYNC, AHEAD,
 * META, FLUSH (a flush or a preflush), FUA, DISCARD; request events add FS.
 * blk_io_trace.pid is the thread id; bytes are the bio's or the request's.
 */
#ifndef STTRACE_ST_FORMAT_BLKTRACE_H
#define STTRACE_ST_FORMAT_BLKTRACE_H

#include <linux/blktrace_api.h>
#include <stdint.h>

#include "format/lib/sttrace_events.h"

/* BLK_TA_* action (categories included) of an sttrace event; 0: none. */
uint32_t sf_bt_action(const struct st_event_header *ev);

/*
 * The blk_io_trace of a block event, sequence 0, and its PDU (split only):
 * returns the PDU length, or -1 for an event without a blktrace action.
 */
int sf_bt_from_event(const struct st_event_header *ev, struct blk_io_trace *t, uint64_t *pdu);

/* sttrace operation and flags (ST_OP_*, ST_F_*) of a blktrace action. */
uint32_t sf_bt_opf(uint32_t action, uint32_t bytes);

#endif /* STTRACE_ST_FORMAT_BLKTRACE_H */
