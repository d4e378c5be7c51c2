/* SPDX-License-Identifier: MIT */
/*
 * st_format.h - what the st-format subcommands share: exit codes, error
 * lines, option parsing and the time-range rule.
 */
#ifndef STTRACE_ST_FORMAT_H
#define STTRACE_ST_FORMAT_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "format/lib/sttrace.h"

#define SF_PROG "st-format"

/* Exit codes scripts can rely on. */
enum {
	SF_OK = 0,	/* done; for verify: the file is intact */
	SF_BAD = 1,	/* a bad or damaged file (info: printed, the chunks contradict
			   the footer), a failed check, an I/O error */
	SF_USAGE = 2,	/* bad arguments */
};

/* One subcommand: its options and its work. */
struct sf_cmd {
	const char *name;
	const char *summary;	/* NULL: hidden (benchmark helpers) */
	const char *help;	/* full --help text */
	int (*run)(int argc, char **argv);
};

extern const struct sf_cmd sf_cmd_info, sf_cmd_verify, sf_cmd_cat, sf_cmd_slice,
	sf_cmd_recover, sf_cmd_synth, sf_cmd_bench_decode, sf_cmd_bench_write,
	sf_cmd_dump_raw, sf_cmd_convert, sf_cmd_import_blktrace, sf_cmd_anonymize;

/* "st-format: WHAT: message" on stderr; returns SF_BAD. */
int sf_error(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "st-format CMD: message (see st-format CMD --help)" on stderr; returns SF_USAGE. */
int sf_usage(const struct sf_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * getopt_long for a subcommand with its errors in st-format's one-line form:
 * returns the option, -1 at the end, or '?' after printing the usage error.
 * Prints the help and returns 'h' for -h/--help (callers exit SF_OK).
 */
int sf_getopt(const struct sf_cmd *cmd, int argc, char **argv, const char *shortopts,
	      const struct option *longopts);

/* Exactly `n` positional arguments left after the options, else a usage error. */
int sf_positional(const struct sf_cmd *cmd, int argc, char **argv, int n, const char *what);

/* Unsigned decimal with nothing after it; 0 on success. */

/* A --from/--to pair as given on the command line (NULL when absent). */
struct sf_range {
	const char *from, *to;
};

/* -z LEVEL: an integer in zstd's range (negative levels too), else a usage error. */
int sf_parse_level(const struct sf_cmd *cmd, const char *arg, int *level);

/* The options of the subcommands that read one FILE and may write OUT. */
struct sf_args {
	const char *in;		/* FILE */
	const char *out;	/* -o, --output OUT */
	int level;		/* -z, --level LEVEL; 0 = the library's default */
	int cursor;		/* --cursor (bench-decode) */
	int force;		/* --force: write OUT even through a symlink or to a non-regular file */
	struct sf_range range;	/* --from T, --to T */
};

/*
 * Parse exactly one FILE and the options of longopts, which may be any of
 * output ('o'), level ('z'), from ('f'), to ('T'), cursor ('c'), force ('F')
 * and help ('h'). Returns SF_OK, -1 after printing --help, or SF_USAGE after the error.
 */
int sf_parse_args(const struct sf_cmd *cmd, int argc, char **argv,
		  const struct option *longopts, struct sf_args *a);

/*
 * A writer for a->out (its level, --force) with the schema, metadata and
 * lost counts of the trace `r` read from a->in (refused when out is in):
 * SF_OK, or SF_BAD after the error line. Errors of the copying calls
 * surface at sf_copy_close(), which closes the writer and removes `out`
 * when it failed.
 */
int sf_copy_open(const struct sf_args *a, struct st_reader *r, struct st_writer **w);
int sf_copy_close(struct st_writer *w, const char *out);

/*
 * The file at path read through its footer (idx) against every chunk read
 * by a scan: SF_OK when they agree (or idx has no footer), else SF_BAD after
 * one line on stderr saying what differs (verify's, info's check).
 */
int sf_check_index(const char *path, const struct st_reader *idx);
/* Open a trace; on failure prints "st-format: FILE: why" and returns SF_BAD. */
int sf_open(const char *path, unsigned flags, struct st_reader **r);

#define SF_TIME_HELP \
	"  T is a time in the trace: seconds after the trace start with an optional\n" \
	"  unit, ns, us, ms, s, m or h (2, 1.5s, 200ms), or @NS, an absolute\n" \
	"  timestamp of the event clock in ns as cat prints it (@1234567890). The\n" \
	"  trace start is the record.start_ts metadata, or the first event's\n" \
	"  timestamp when the file has none. Both ends are inclusive:\n" \
	"  events with FROM <= ts <= TO.\n"

/* Outputs are made 0600 and never through a symlink (st_output_open). */
#define SF_FORCE_HELP \
	"  --force            write OUT even if it is a symbolic link (followed) or\n" \
	"                     not a regular file; a file of another user is never\n" \
	"                     overwritten. A new OUT is readable by its owner only.\n"

/* Resolve a range into event-clock ns [*from, *to]; a usage error if malformed. */
int sf_resolve_range(const struct sf_cmd *cmd, const struct st_reader *r,
		     const struct sf_range *range, uint64_t *from, uint64_t *to);

/*
 * A progress line for a long pass over a trace, only when stderr is a
 * terminal: "st-format CMD: N of M events (P %)", redrawn at most twice a
 * second, erased at the end.
 */
struct sf_progress {
	const char *cmd;
	int on;
	uint64_t total, done;
	double next;
};

void sf_progress_start(struct sf_progress *p, const char *cmd, uint64_t total);
void sf_progress_tick(struct sf_progress *p);	/* one event done */
void sf_progress_end(const struct sf_progress *p);

/* The forms `st-format cat` prints events in (spec/sttrace-format.md, section 14). */
enum sf_cat_style { SF_CAT_TEXT, SF_CAT_CSV, SF_CAT_JSON };

/*
 * Every event of the trace at path on stdout, as `st-format cat` prints
 * it in `style`, with a progress line (sf_progress) naming progress_cmd
 * unless NULL: the events of `convert --to csv|jsonl`. Returns cat's exit
 * status.
 */
int sf_cat_events(const char *path, enum sf_cat_style style, const char *progress_cmd);

#endif /* STTRACE_ST_FORMAT_H */
