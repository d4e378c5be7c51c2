/* SPDX-License-Identifier: MIT */
/*
 * st_format.c - st-format: inspect, check, print, cut, repair and synthesize
 * .sttrace files. This file holds the subcommand table and the helpers the
 * subcommands share; each subcommand lives in its own st_format_*.c.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "format/st_format.h"

static const struct sf_cmd *const commands[] = {
	&sf_cmd_info, &sf_cmd_verify, &sf_cmd_cat, &sf_cmd_slice, &sf_cmd_recover,
	&sf_cmd_synth, &sf_cmd_anonymize, &sf_cmd_convert, &sf_cmd_import_blktrace,
	&sf_cmd_synth_future, &sf_cmd_bench_decode, &sf_cmd_bench_write, &sf_cmd_dump_raw,
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
	va_list ap;

	fprintf(stderr, SF_PROG " %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see " SF_PROG " %s --help)\n", cmd->name);
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

int sf_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

int sf_parse_level(const struct sf_cmd *cmd, const char *arg, int *level)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < -1000000 || v > 1000)
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
	int rc = st_reader_open(r, path, flags);

	if (!rc)
		return SF_OK;
	sf_error(path, "%s", *r ? st_reader_errmsg(*r) : st_strerror(rc));
	st_reader_close(*r);
	*r = NULL;
	return SF_BAD;
}

uint64_t sf_trace_start(const struct st_reader *r)
{
	const char *s = st_meta_get(r, "record.start_ts");
	uint64_t ts;

	if (s && !sf_parse_u64(s, &ts))
		return ts;
	return st_reader_info(r)->first_ts;
}

/* T of SF_TIME_HELP into event-clock ns; 0 on success. */
static int parse_time(const char *s, uint64_t start, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	char *end;
	double v;

	if (!sf_parse_u64(s, ns))
		return 0;
	if (!isdigit((unsigned char)*s) && *s != '.')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double off = round(v * units[i].ns);

		if (strcmp(end, units[i].unit))
			continue;
		if (off >= (double)(UINT64_MAX - start))
			return -1;
		*ns = start + (uint64_t)off;
		return 0;
	}
	return -1;
}

int sf_resolve_range(const struct sf_cmd *cmd, const struct st_reader *r,
		     const struct sf_range *range, uint64_t *from, uint64_t *to)
{
	uint64_t start = sf_trace_start(r);

	*from = 0;
	*to = UINT64_MAX;
	if (range->from && parse_time(range->from, start, from))
		return sf_usage(cmd, "bad time '%s' for --from", range->from);
	if (range->to && parse_time(range->to, start, to))
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
		printf(SF_PROG " " SF_VERSION " (format %d.%d)\n", ST_FORMAT_MAJOR, ST_FORMAT_MINOR);
		return SF_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i]->name))
			return commands[i]->run(argc - 1, argv + 1);
	fprintf(stderr, SF_PROG ": unknown subcommand '%s' (see " SF_PROG " --help)\n", argv[1]);
	return SF_USAGE;
}
