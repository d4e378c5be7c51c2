/* SPDX-License-Identifier: MIT */
/*
 * st_format_synth.c - `st-format synth`: the command line of the synthetic
 * trace generator (format/synth/synth.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/number.h"
#include "format/st-format/st_format.h"
#include "format/synth/synth.h"

enum { OPT_IOS = 256, OPT_SEED, OPT_DEVICES, OPT_PROCS, OPT_CPUS, OPT_CHUNK, OPT_SLOW,
       OPT_LOST, OPT_SKIPPED };

static int parse_unsigned(const char *arg, const char *opt, uint64_t min, uint64_t max, uint64_t *v)
{
	if (parse_count(arg, min, max, v))
		return sf_usage(&sf_cmd_synth, "bad value '%s' for %s", arg, opt);
	return SF_OK;
}

static int parse_option(int c, const char *arg, struct synth_opts *o)
{
	uint64_t v = 0;
	int rc = SF_OK;

	switch (c) {
	case OPT_IOS:
		return parse_unsigned(arg, "--ios", 0, UINT64_MAX, &o->ios);
	case OPT_SEED:
		return parse_unsigned(arg, "--seed", 0, UINT64_MAX, &o->seed);
	case OPT_LOST:
		return parse_unsigned(arg, "--lost", 0, UINT64_MAX, &o->lost);
	case OPT_SKIPPED:
		return parse_unsigned(arg, "--skipped", 0, UINT64_MAX, &o->skipped);
	case OPT_DEVICES:
		rc = parse_unsigned(arg, "--devices", 1, 16, &v);
		o->devices = (unsigned)v;
		break;
	case OPT_PROCS:
		rc = parse_unsigned(arg, "--procs", 1, 64, &v);
		o->procs = (unsigned)v;
		break;
	case OPT_CPUS:
		rc = parse_unsigned(arg, "--cpus", 1, 4096, &v);
		o->cpus = (unsigned)v;
		break;
	case OPT_CHUNK:
		rc = parse_unsigned(arg, "--chunk-size", 0, UINT32_MAX, &v);
		o->chunk_size = (size_t)v;
		break;
	case 'z':
		return sf_parse_level(&sf_cmd_synth, arg, &o->zstd_level);
	case OPT_SLOW:
		if (parse_number(arg, 0, 1e6, &o->slow_factor) || !(o->slow_factor > 0))
			return sf_usage(&sf_cmd_synth, "bad factor '%s' for --slow-factor", arg);
		break;
	}
	return rc;
}

static int synth_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "ios", required_argument, NULL, OPT_IOS },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "devices", required_argument, NULL, OPT_DEVICES },
		{ "procs", required_argument, NULL, OPT_PROCS },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "chunk-size", required_argument, NULL, OPT_CHUNK },
		{ "level", required_argument, NULL, 'z' },
		{ "slow-factor", required_argument, NULL, OPT_SLOW },
		{ "lost", required_argument, NULL, OPT_LOST },
		{ "skipped", required_argument, NULL, OPT_SKIPPED },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct synth_opts o;
	struct synth_result res;
	const char *out = NULL;
	char err[256] = "";
	int have_ios = 0, c;
	struct stat st;

	synth_opts_init(&o);
	while ((c = sf_getopt(&sf_cmd_synth, argc, argv, ":ho:z:", longopts)) != -1) {
		if (c == 'h')
			return SF_OK;
		if (c == '?')
			return SF_USAGE;
		if (c == 'o')
			out = optarg;
		else if (parse_option(c, optarg, &o))
			return SF_USAGE;
		have_ios |= c == OPT_IOS;
	}
	if (sf_positional(&sf_cmd_synth, argc, argv, 0, ""))
		return SF_USAGE;
	if (!out || !have_ios)
		return sf_usage(&sf_cmd_synth, "-o FILE and --ios N are required");
	if (synth_write(&o, out, &res, err, sizeof(err))) {
		unlink(out);
		return sf_error(out, "%s", err);
	}
	if (stat(out, &st))
		return sf_error(out, "written but cannot be stat'ed");
	printf("%s: %" PRIu64 " I/Os, %" PRIu64 " events, %lld bytes, %.2f bytes/event\n", out,
	       res.ios, res.events, (long long)st.st_size,
	       res.events ? (double)st.st_size / (double)res.events : 0.0);
	return SF_OK;
}

const struct sf_cmd sf_cmd_synth = {
	.name = "synth",
	.summary = "write a realistic synthetic trace, deterministic for a seed",
	.help =
	"Usage: st-format synth -o FILE --ios N [OPTIONS]\n"
	"Write a synthetic trace of a small host doing direct I/O, with exactly the\n"
	"event types and semantics st-record produces: per operation the syscall\n"
	"enter/exit, iomap dio begin/complete (files), bio queue, getrq, request\n"
	"insert (mq-deadline devices), issue and complete; some bios merge into a\n"
	"pending request (back/front merge: they complete with it and appear in\n"
	"its bios[] at issue), 1 MiB reads split, rare requeues, fsyncs with\n"
	"journal writes and a flush request, io_uring reads in batches of 4;\n"
	"processes fio (random reads), postgres (reads, writes, fsync), dd\n"
	"(sequential 1 MiB reads of the raw device), rocksdb (io_uring), each with\n"
	"exec/openat events and pid/fd/inode metadata; devices alternate vdX\n"
	"(mq-deadline) and nvmeXn1 (none). Latencies are lognormal at the µs scale\n"
	"with a long tail (0.1% of requests 10-100x slower at the device).\n"
	"The same options give the same bytes; the metadata holds them (options,\n"
	"and command_line, which regenerates the file).\n\n"
	"  -o, --output FILE    the trace to write\n"
	"  --ios N              operations: reads, writes, io_uring requests, fsyncs\n"
	"                       (about 10 events each)\n"
	"  --seed S             random seed (default 1)\n"
	"  --devices D          block devices, 1-16 (default 2)\n"
	"  --procs P            processes, 1-64, kinds in the order above (default 4)\n"
	"  --cpus C             CPUs of the simulated host, 1-4096 (default 8)\n"
	"  --chunk-size B       raw bytes per events chunk (default: the library's)\n"
	"  -z, --level LEVEL    zstd level (default: the library's)\n"
	"  --slow-factor F      multiply every device latency (D2C, and so Q2C and\n"
	"                       the syscall latency) by F: an injected regression for\n"
	"                       testing `st-analyze diff` (default 1)\n"
	"  --lost N             report N events lost by the kernel side, spread over\n"
	"                       the CPUs (default 0)\n"
	"  --skipped N          report N probe runs the kernel skipped, lost on no\n"
	"                       known CPU (default 0)\n"
	"  -h, --help           this text\n\n"
	"Exit status: 0 written, 1 failed write (FILE removed), 2 bad arguments.\n",
	.run = synth_run,
};
