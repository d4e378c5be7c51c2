/* SPDX-License-Identifier: MIT */
/*
 * synth.h - synthetic .sttrace traces for `st-format synth`.
 *
 * The generator simulates a small host: a few processes, each with a few
 * threads doing direct I/O (psync reads and writes on files and raw devices,
 * io_uring reads, fsync with a flush), over a few block devices. It emits
 * exactly the built-in event types of format/lib/sttrace_events.h with the event
 * semantics the recorder produces, so the analyzer can be tested and
 * benchmarked without BPF. Output is a pure function of the options.
 */
#ifndef STTRACE_SYNTH_H
#define STTRACE_SYNTH_H

#include <stddef.h>
#include <stdint.h>

struct synth_opts {
	uint64_t ios;		/* operations: reads, writes, io_uring requests, fsyncs */
	uint64_t seed;
	unsigned devices;	/* block devices, >= 1 */
	unsigned procs;		/* processes, >= 1 */
	unsigned cpus;		/* CPUs of the simulated host, >= 1 */
	size_t chunk_size;	/* 0 = library default */
	int zstd_level;		/* 0 = library default */
	double slow_factor;	/* multiplies every device (D2C) latency; 1 = none */
	uint64_t lost;		/* events to report as lost by the kernel side */
	uint64_t skipped;	/* probe runs to report as skipped by the kernel (no CPU) */
};

/* Defaults of every option; ios must still be set. */
void synth_opts_init(struct synth_opts *o);

struct synth_result {
	uint64_t ios;
	uint64_t events;
};

/*
 * Write the trace to `path`. Returns 0, or a negative ST_E* code with a
 * one-line message in err (cap bytes).
 */
int synth_write(const struct synth_opts *o, const char *path, struct synth_result *res,
		char *err, size_t cap);

#endif /* STTRACE_SYNTH_H */
