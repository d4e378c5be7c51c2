/* SPDX-License-Identifier: MIT */
/* collect.h - the correlator's emitted I/Os, kept for a test to inspect. */
#ifndef AN_TEST_COLLECT_H
#define AN_TEST_COLLECT_H

#include "analyze/lib/correlate.h"

#define MAX_OUT 16
static struct an_io out[MAX_OUT];
static int nout;	/* I/Os emitted, also those past MAX_OUT */

static void collect(void *ctx, const struct an_io *io)
{
	(void)ctx;
	if (nout < MAX_OUT)
		out[nout] = *io;
	nout++;
}

#endif /* AN_TEST_COLLECT_H */
