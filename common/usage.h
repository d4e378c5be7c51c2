/* SPDX-License-Identifier: MIT */
/*
 * usage.h - a command line a program cannot run. Every sttrace program says
 * so the same way, on one line of standard error, and exits with the same
 * status, so scripts can tell a bad call from a failed run:
 *
 *	PROG: what is wrong (see PROG --help)
 */
#ifndef STTRACE_USAGE_H
#define STTRACE_USAGE_H

#include <stdarg.h>

/*
 * The exit statuses every program keeps (README.md, Conventions, and each
 * man page): 0 success; EXIT_FAIL a failed run (an input that cannot be
 * read or is not a trace, a damaged file, a failed write); EXIT_USAGE a
 * command line that cannot run; EXIT_REGRESSED st-analyze diff's gate.
 * st-record -- CMD returns CMD's, st-replay 130 when interrupted.
 */
#define EXIT_FAIL	1
#define EXIT_USAGE	2
#define EXIT_REGRESSED	3

/* Prints the line for PROG (e.g. "st-analyze", "st-format slice"); returns EXIT_USAGE. */
int usage_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int usage_verror(const char *prog, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#endif /* STTRACE_USAGE_H */
