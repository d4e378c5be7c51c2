/* SPDX-License-Identifier: MIT */
/*
 * metrics.h - st-analyze --follow --metrics ADDR:PORT: the followed I/Os as
 * Prometheus metrics over HTTP (libmicrohttpd), in the text exposition
 * format, or OpenMetrics when the scraper's Accept header asks for it.
 *
 * Cumulative latency histograms per host, device, op and stage
 * (sttrace_io_latency_seconds, buckets 1 us .. 10 s, five per decade),
 * counters of I/Os, bytes, errors and incomplete I/Os per host, device and
 * op, and the recording's own health per host (events, lost events, the
 * file's size, the recorder's ring buffer use). Memory is fixed: at most AN_METRICS_SERIES host x device x
 * op series, devices past them counted as device "other" per op.
 */
#ifndef AN_METRICS_H
#define AN_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/lib/correlate.h"

#define AN_METRICS_SERIES 64
#define AN_METRICS_BUCKETS 36	/* finite bounds: 10^(-6 + k/5) s, k = 0..35 */

struct an_metrics;
struct an_span_defs;	/* analyze/lib/span.h */

/* The recording's health so far. */
struct an_health {
	uint64_t events, lost;	/* events read, events lost */
	uint64_t file_bytes;	/* of its file(s) */
	uint64_t ended;		/* 1: the recording has ended, the values are final */
	uint64_t ring_bytes, ring_used_max;	/* the recorder's ring buffer, the most it held; 0 0 unknown (last: metrics.c) */
};

/*
 * Listen on addr: "PORT" or ":PORT" (loopback), "HOST:PORT", "[V6]:PORT";
 * numeric addresses only. 0, or -1 with "ADDR: why" in err.
 */
int an_metrics_start(struct an_metrics **m, const char *addr, const struct an_span_defs *spans,
		     char *err, size_t cap);
/* One I/O (complete or incomplete) of device dev (a name) on host. */
void an_metrics_io(struct an_metrics *m, const char *host, const char *dev, const struct an_io *io);
void an_metrics_health(struct an_metrics *m, const char *host, const struct an_health *health);
/* Upper bound (s) of bucket k; the last, AN_METRICS_BUCKETS, is +Inf. */
double an_metrics_bound(unsigned k);
void an_metrics_stop(struct an_metrics *m);

#endif /* AN_METRICS_H */
