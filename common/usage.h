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

/* The exit status of a command line that cannot run (a failed run exits 1). */
#define EXIT_USAGE 2

/* Prints the line for PROG (e.g. "st-analyze", "st-format slice"); returns EXIT_USAGE. */
int usage_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int usage_verror(const char *prog, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#endif /* STTRACE_USAGE_H */
