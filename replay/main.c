/* SPDX-License-Identifier: MIT */
/*
 * main.c - st-replay: options, signals, and the four steps of replay.h.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/input.h"
#include "common/number.h"
#include "common/usage.h"
#include "format/lib/sttrace.h"
#include "replay/replay.h"

#define PROG "st-replay"

static const char usage_text[] =
"usage: st-replay FILE [--level block|file] [--target PATH | --map DEV=PATH ...]\n"
"                 [--timing original|afap|scale=X] [--qd N] [--threads N] [--bios]\n"
"                 [--allow-write [--force-in-use]] [--wrap] [--align N] [--max-io SIZE]\n"
"                 [--from T] [--to T]\n"
"                 [--dev D] [--pid P] [--comm C] [--loop N]\n"
"                 [--report FILE.json [--force]]\n"
"\n"
"Re-issue the I/O recorded in FILE (.sttrace; - reads standard input) through\n"
"io_uring.\n"
"\n"
"  --level L       block: the requests each device was issued (after merges), with\n"
"                  O_DIRECT on the mapped device or file; file: the recorded data\n"
"                  syscalls, per recorded thread, into files under --target DIR.\n"
"                  Default: file when FILE holds data syscalls, else block.\n"
"  --bios          block level: the bios as queued instead of the requests\n"
"  --target PATH   block: device or file every recorded device maps to;\n"
"                  file: directory for the replayed files (one per recorded file,\n"
"                  created and filled to cover the recorded offsets)\n"
"  --map DEV=PATH  block: recorded device DEV (loop0, /dev/loop0, 7:0) to PATH;\n"
"                  repeatable; I/O of unmapped devices is not replayed\n"
"  --timing T      original: every I/O at its recorded time from the start, on an\n"
"                  absolute schedule (default); afap: as fast as --qd and the\n"
"                  threads' order allow; scale=X: recorded times multiplied by X\n"
"  --qd N          most I/Os in flight, over all threads (default 128)\n"
"  --threads N     submitting threads, each with its own io_uring and its share\n"
"                  of --qd (1-256). Block level: thread k replays the requests\n"
"                  of the recorded CPUs c with c % N = k; file level: the\n"
"                  recorded threads s with s % N = k, each in its order.\n"
"                  Default: one per recorded CPU (block, as btreplay) or per\n"
"                  recorded thread (file, as one fio job per thread), at most\n"
"                  the CPUs online and --qd; never more than there are of those\n"
"  --allow-write   replay writes and discards (nothing is written without it);\n"
"                  a target a file system or device uses is refused even so:\n"
"                  mounted, held (dm, md, LVM), backing a loop device, or a\n"
"                  loop device over a file another loop device uses\n"
"  --force-in-use  write to such a target all the same (destroys what uses it;\n"
"                  the kernel still refuses a mounted or claimed device)\n"
"  --wrap          fold offsets beyond the target's end into it (else refused)\n"
"  --align N       offsets down, lengths up to a multiple of N bytes (default: the\n"
"                  device's logical block size; file level 1)\n"
"  --max-io SIZE   refuse a trace with an I/O longer than SIZE (default 64M, at\n"
"                  most 4G): each thread holds two buffers of the longest I/O\n"
"  --from T --to T replay the I/Os that started from T to T, both included: a\n"
"                  duration after the trace start (2, 1.5s, 200ms) or @NS\n"
"  --dev D --pid P --comm C   only the I/O of that device, process, command\n"
"  --loop N        replay N times (default 1)\n"
"  --report FILE   also write the report as JSON (created 0600; a symlink or\n"
"                  a non-regular file is refused unless --force)\n"
"  -h, --help, --version\n"
"\n"
"Reads are always allowed. Block level replays discards as fallocate(PUNCH_HOLE)\n"
"and FUA writes with RWF_DSYNC. The report compares what was replayed with what\n"
"was recorded: I/Os, IOPS, MB/s, latency percentiles per op, and for original or\n"
"scaled timing the schedule slip (submission time against plan; late I/Os\n"
"that were due while --qd I/Os were in flight waited for the device). A progress\n"
"line is shown on a terminal; SIGINT stops issuing, waits for the I/Os in flight\n"
"and prints the partial report.\n"
"\n"
"Compare a replay with the recording (run.sttrace recorded with -e block -d sdX):\n"
"  st-record -o replay.sttrace -e block -d sdY -- \\\n"
"      st-replay run.sttrace --target /dev/sdY --allow-write\n"
"  st-analyze diff run.sttrace replay.sttrace --stage D2C\n"
"\n"
"Exit status: 0 replayed (failed I/Os are counted in the report), 1 runtime\n"
"error or unreadable FILE, 2 usage error, 130 interrupted.\n";

enum {
	OPT_LEVEL = 256, OPT_TARGET, OPT_MAP, OPT_TIMING, OPT_QD, OPT_BIOS, OPT_ALLOW_WRITE, OPT_WRAP,
	OPT_ALIGN, OPT_FROM, OPT_TO, OPT_DEV, OPT_PID, OPT_COMM, OPT_LOOP, OPT_REPORT, OPT_FORCE,
	OPT_THREADS, OPT_FORCE_IN_USE, OPT_MAX_IO,
};

static const struct option long_opts[] = {
	{ "level", required_argument, NULL, OPT_LEVEL },
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "map", required_argument, NULL, OPT_MAP },
	{ "timing", required_argument, NULL, OPT_TIMING },
	{ "qd", required_argument, NULL, OPT_QD },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "bios", no_argument, NULL, OPT_BIOS },
	{ "allow-write", no_argument, NULL, OPT_ALLOW_WRITE },
	{ "force-in-use", no_argument, NULL, OPT_FORCE_IN_USE },
	{ "max-io", required_argument, NULL, OPT_MAX_IO },
	{ "wrap", no_argument, NULL, OPT_WRAP },
	{ "align", required_argument, NULL, OPT_ALIGN },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "loop", required_argument, NULL, OPT_LOOP },
	{ "report", required_argument, NULL, OPT_REPORT },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

void rp_opts_init(struct rp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->scale = 1;
	o->qd = 128;
	o->pid = -1;
	o->loops = 1;
	o->max_io = 64ull << 20;
}

static int parse_option(struct rp_opts *o, int opt, char *arg)
{
	uint64_t v, t;
	char *eq;

	switch (opt) {
	case OPT_LEVEL:
		if (strcmp(arg, "block") && strcmp(arg, "file"))
			return usage_error(PROG, "--level %s: not block or file", arg);
		o->level = arg[0] == 'b' ? RP_LEVEL_BLOCK : RP_LEVEL_FILE;
		return 0;
	case OPT_TARGET:
		o->target = arg;
		return 0;
	case OPT_MAP:
		if (!(eq = strchr(arg, '=')) || eq == arg || !eq[1])
			return usage_error(PROG, "--map %s: not DEV=PATH", arg);
		if (o->nmaps == RP_MAX_MAPS)
			return usage_error(PROG, "--map %s: more than 64 maps", arg);
		*eq = '\0';
		o->maps[o->nmaps++] = (struct rp_map){ arg, eq + 1 };
		return 0;
	case OPT_TIMING:
		if (!strcmp(arg, "original")) {
			o->timing = RP_TIMING_ORIGINAL;
		} else if (!strcmp(arg, "afap")) {
			o->timing = RP_TIMING_AFAP;
		} else if (!strncmp(arg, "scale=", 6)) {
			o->timing = RP_TIMING_SCALE;
			if (parse_number(arg + 6, 0, 1e6, &o->scale) || o->scale <= 0 || o->scale >= 1e6)
				return usage_error(PROG, "--timing %s: scale=X needs X > 0", arg);
		} else {
			return usage_error(PROG, "--timing %s: not original, afap or scale=X", arg);
		}
		return 0;
	case OPT_QD:
		if (parse_count(arg, 1, 4096, &v))
			return usage_error(PROG, "--qd %s: not a depth in [1, 4096]", arg);
		o->qd = (unsigned)v;
		return 0;
	case OPT_THREADS:
		if (parse_count(arg, 1, RP_MAX_THREADS, &v))
			return usage_error(PROG, "--threads %s: not a count in [1, 256]", arg);
		o->threads = (unsigned)v;
		return 0;
	case OPT_BIOS:
		o->bios = 1;
		return 0;
	case OPT_ALLOW_WRITE:
		o->allow_write = 1;
		return 0;
	case OPT_FORCE_IN_USE:
		o->force_in_use = 1;
		return 0;
	case OPT_MAX_IO:
		if (parse_size(arg, &t) || t < 4096 || t > (1ull << 32))
			return usage_error(PROG, "--max-io %s: not a size from 4K to 4G", arg);
		o->max_io = t;
		return 0;
	case OPT_WRAP:
		o->wrap = 1;
		return 0;
	case OPT_ALIGN:
		if (parse_count(arg, 1, 1u << 30, &v) || (v & (v - 1)))
			return usage_error(PROG, "--align %s: not a power of two", arg);
		o->align = (unsigned)v;
		return 0;
	case OPT_FROM:
	case OPT_TO:
		if (st_parse_time(arg, 0, &t))
			return usage_error(PROG, opt == OPT_FROM ? "--from %s: not a time (2, 1.5s, 200ms, @NS)" :
					      "--to %s: not a time (2, 1.5s, 200ms, @NS)", arg);
		*(opt == OPT_FROM ? &o->from : &o->to) = arg;
		return 0;
	case OPT_DEV:
		o->dev = arg;
		return 0;
	case OPT_PID:
		if (parse_count(arg, 0, 4294967295ull, &v))
			return usage_error(PROG, "--pid %s: not a pid", arg);
		o->pid = (int64_t)v;
		return 0;
	case OPT_COMM:
		o->comm = arg;
		return 0;
	case OPT_LOOP:
		if (parse_count(arg, 1, 1000000, &v))
			return usage_error(PROG, "--loop %s: not a count in [1, 10^6]", arg);
		o->loops = (unsigned)v;
		return 0;
	case OPT_REPORT:
		o->report_json = arg;
		return 0;
	case OPT_FORCE:
		o->force = 1;
		return 0;
	default:
		return 2;
	}
}

static void on_signal(int sig)
{
	(void)sig;
	rp_stop = 1;
}

/* SIGINT/SIGTERM interrupt the wait for completions (no SA_RESTART). */
static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int main(int argc, char **argv)
{
	struct rp_opts o;
	struct rp_plan plan;
	struct rp_result result;
	char err[512];
	int opt, ret;

	rp_opts_init(&o);
	opterr = 0;	/* one message of ours instead of getopt's */
	while ((opt = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		if (opt == 'h') {
			fputs(usage_text, stdout);
			return 0;
		}
		if (opt == 'V') {
			printf(PROG " " ST_VERSION " (format %d.%d)\n", ST_FORMAT_MAJOR, ST_FORMAT_MINOR);
			return 0;
		}
		if (opt == '?')
			return usage_error(PROG, "%s: unknown option or missing argument", argv[optind - 1]);
		if ((ret = parse_option(&o, opt, optarg)))
			return ret;
	}
	if (optind != argc - 1)
		return usage_error(PROG, "%s", optind < argc ? "one FILE expected" : "FILE missing");
	if (o.threads > o.qd) {
		char msg[96];

		snprintf(msg, sizeof(msg), "--threads %u above --qd %u", o.threads, o.qd);
		return usage_error(PROG, "%s: each thread needs an I/O in flight", msg);
	}
	if (!o.target && !o.nmaps)
		return usage_error(PROG, "%s", "no target: --target PATH or --map DEV=PATH");
	if ((ret = input_files(argv + optind, 1, PROG)))
		return ret;
	o.file = argv[optind];
	o.progress = isatty(STDERR_FILENO);

	if ((ret = rp_plan_build(&plan, &o, err, sizeof(err)))) {
		if (ret == -2)
			return usage_error(PROG, "%s", err);
		fprintf(stderr, "%s: %s\n", PROG, err);
		return 1;
	}
	if (plan.level == RP_LEVEL_FILE && (o.nmaps || !o.target)) {
		rp_plan_free(&plan);
		return usage_error(PROG, "%s", "file level replays into --target DIR (--map is for block level)");
	}
	if (plan.input_note[0])
		fprintf(stderr, "%s: %s\n", PROG, plan.input_note);
	ret = 1;
	if (rp_targets_open(&plan, &o, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", PROG, err);
		goto out;
	}
	catch_signals();
	if (rp_engine_run(&plan, &o, &result, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", PROG, err);
		rp_result_free(&result);
		goto out;
	}
	rp_report_text(&plan, &o, &result, stdout);
	ret = result.interrupted ? 130 : 0;
	if (o.report_json && rp_report_json(&plan, &o, &result, o.report_json, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", PROG, err);
		ret = 1;
	}
	rp_result_free(&result);
out:
	rp_targets_close(&plan);
	rp_plan_free(&plan);
	return ret;
}
