/* SPDX-License-Identifier: MIT */
/*
 * missing.h - what the recording host's kernel could not give: the
 * metadata keys `missing.<event>` (spec/sttrace-format.md section 10: an
 * event type the recording's preset had that the kernel lacked, and why),
 * and the stages and causes each such event feeds.
 *
 * A stage or cause is not recorded when every event that feeds it is
 * missing (fs is also fed by ext4's and XFS's fsync events, so a kernel
 * without iomap's tracepoints still measures it for fsync): the reports
 * then show it as "not recorded on this kernel", never as 0 or an empty
 * column, and the header names each missing event, its reason and what it
 * feeds.
 */
#ifndef AN_MISSING_H
#define AN_MISSING_H

#include <stdio.h>

#include "analyze/lib/input.h"
#include "analyze/lib/io.h"

/* Not a stage: a read's page cache (an_io.cache), in the same mask. */
#define AN_MISSING_CACHE (1u << 31)
_Static_assert(AN_ST_COUNT < 32, "a bit for the cache after the stages");

/* Stages (bit 1u << enum an_stage) and AN_MISSING_CACHE not recorded in in's files. */
unsigned an_missing_stages(const struct an_input *in);
/*
 * "not recorded on this kernel: EVENT (REASON): what it feeds; ..." with
 * prefix before it, one line; nothing when no event is missing.
 */
void an_missing_print(const struct an_input *in, const char *prefix, FILE *out);

#endif /* AN_MISSING_H */
