/* SPDX-License-Identifier: MIT */
/*
 * st_format.c - st-format: inspect, check, print, cut, repair and synthesize
 * .sttrace files. This file holds the subcommand table and the helpers the
 * subcommands share; each subcommand lives in its own st_format_*.c.
 */
#include <ctype.h>
#include <inttypes.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "common/input.h"
#include "common/number.h"
#include "common/usage.h"
#include "format/st-format/st_format.h"

static const struct sf_cmd *const commands[] = {
	&sf_cmd_info, &sf_cmd_verify, &sf_cmd_cat, &sf_cmd_slice, &sf_cmd_recover,
	&sf_cmd_synth, &sf_cmd_anonymize, &sf_cmd_convert, &sf_cmd_import_blktrace,
	&sf_cmd_bench_decode, &sf_cmd_bench_write, &sf_cmd_dump_raw,
};

static void main_help(FILE *out)
{
	fputs("Usage: st-format SUBCOMMAND [OPTIONS] ...\n"
	      "Inspect, check, print, cut, repair and synthesize .sttrace files.\n\n"
	      "Subcommands:\n", out);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (commands[i]->summary)
			fprintf(out, "  %-16s %s\n", commands[i]->name, commands[i]->summary);
	fputs("\n`st-format SUBCOMMAND --help` describes each one.\n"
	      "Exit status: 0 success (verify: the file is intact), 1 a bad or damaged\n"
	      "file or a failed check, 2 bad arguments.\n", out);
}

int sf_error(const char *what, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, SF_PROG ": %s: ", what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return SF_BAD;
}

int sf_usage(const struct sf_cmd *cmd, const char *fmt, ...)
{
	char prog[64];
	va_list ap;

	snprintf(prog, sizeof(prog), SF_PROG " %s", cmd->name);
	va_start(ap, fmt);
	usage_verror(prog, fmt, ap);
	va_end(ap);
	return SF_USAGE;
}

int sf_getopt(const struct sf_cmd *cmd, int argc, char **argv, const char *shortopts,
	      const struct option *longopts)
{
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	switch (c) {
	case 'h':
		fputs(cmd->help, stdout);
		break;
	case ':':
		sf_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
		return '?';
	case '?':
		if (!strncmp(argv[optind - 1], "--", 2))
			sf_usage(cmd, "unknown option '%s'", argv[optind - 1]);
		else
			sf_usage(cmd, "unknown option '-%c'", optopt);
		break;
	}
	return c;
}

int sf_positional(const struct sf_cmd *cmd, int argc, char **argv, int n, const char *what)
{
	if (argc - optind < n)
		return sf_usage(cmd, "missing %s", what);
	if (argc - optind > n)
		return sf_usage(cmd, "unexpected argument '%s'", argv[optind + n]);
	return SF_OK;
}

int sf_parse_level(const struct sf_cmd *cmd, const char *arg, int *level)
{
	long long v;

	if (parse_integer(arg, ZSTD_minCLevel(), ZSTD_maxCLevel(), &v))
		return sf_usage(cmd, "bad level '%s' for -z", arg);
	*level = (int)v;
	return SF_OK;
}

int sf_parse_args(const struct sf_cmd *cmd, int argc, char **argv,
		  const struct option *longopts, struct sf_args *a)
{
	int c;

	while ((c = sf_getopt(cmd, argc, argv, ":ho:z:", longopts)) != -1) {
		switch (c) {
		case 'h':
			return -1;
		case 'o':
			a->out = optarg;
			break;
		case 'z':
			if (sf_parse_level(cmd, optarg, &a->level))
				return SF_USAGE;
			break;
		case 'f':
			a->range.from = optarg;
			break;
		case 'T':
			a->range.to = optarg;
			break;
		case 'c':
			a->cursor = 1;
			break;
		case 'F':
			a->force = 1;
			break;
		default:
			return SF_USAGE;
		}
	}
	if (sf_positional(cmd, argc, argv, 1, "FILE"))
		return SF_USAGE;
	a->in = argv[optind];
	return SF_OK;
}

int sf_open(const char *path, unsigned flags, struct st_reader **r)
{
	char real[4096], err[256];
	int rc;

	*r = NULL;
	if (input_path(path, real, sizeof(real), err, sizeof(err)))
		return sf_error(path, "%s", err);
	rc = st_reader_open(r, real, flags);
	if (!rc)
		return SF_OK;
	sf_error(path, "%s", *r ? st_reader_errmsg(*r) : st_strerror(rc));
	st_reader_close(*r);
	*r = NULL;
	return SF_BAD;
}

int sf_resolve_range(const struct sf_cmd *cmd, const struct st_reader *r,
		     const struct sf_range *range, uint64_t *from, uint64_t *to)
{
	uint64_t start = st_trace_start(r);

	*from = 0;
	*to = UINT64_MAX;
	if (range->from && st_parse_time(range->from, start, from))
		return sf_usage(cmd, "bad time '%s' for --from", range->from);
	if (range->to && st_parse_time(range->to, start, to))
		return sf_usage(cmd, "bad time '%s' for --to", range->to);
	if (*from > *to)
		return sf_usage(cmd, "--from is after --to");
	return SF_OK;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		main_help(stderr);
		return SF_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		main_help(stdout);
		return SF_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf(SF_PROG " " ST_VERSION " (format %d.%d)\n", ST_FORMAT_MAJOR, ST_FORMAT_MINOR);
		return SF_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i]->name))
			return commands[i]->run(argc - 1, argv + 1);
	fprintf(stderr, SF_PROG ": unknown subcommand '%s' (see " SF_PROG " --help)\n", argv[1]);
	return SF_USAGE;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void sf_progress_start(struct sf_progress *p, const char *cmd, uint64_t total)
{
	*p = (struct sf_progress){ .cmd = cmd, .on = isatty(STDERR_FILENO), .total = total };
}

void sf_progress_tick(struct sf_progress *p)
{
	double t;

	if (!p->on || ++p->done & 0xffff)
		return;
	t = now_s();
	if (t < p->next)
		return;
	p->next = t + 0.5;
	fprintf(stderr, "\r" SF_PROG " %s: %" PRIu64 " of %" PRIu64 " events (%.0f %%)", p->cmd,
		p->done, p->total, p->total ? 100.0 * p->done / p->total : 100.0);
}

void sf_progress_end(const struct sf_progress *p)
{
	if (p->on && p->done > 0xffff)
		fputs("\r\033[K", stderr);
}
