/* SPDX-License-Identifier: MIT */
/*
 * check.h - the one harness of the C unit tests: result lines for
 * tests/run.sh ("PASS: name", "FAIL: name: why").
 *
 *   check(ok, name, why, ...)   one named check, a PASS or FAIL line
 *   RUN(fn)                     a test function returning 0 on success; it
 *                               prints a FAIL line itself (expectf) otherwise
 *   expectf(ok, test, why, ...) FAIL line when !ok; returns 1 then, for
 *                               `if (expectf(...)) return 1;`
 *   return check_failures != 0; the end of main()
 *
 * A test program in which no check ran fails: a main() that lost its calls
 * would otherwise pass silently.
 */
#ifndef STTRACE_TEST_CHECK_H
#define STTRACE_TEST_CHECK_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static int check_failures;
static unsigned check_ran;

static void check_fail_line(const char *name, const char *why, va_list ap)
{
	check_failures++;
	printf("FAIL: %s: ", name);
	vprintf(why, ap);
	putchar('\n');
}

/* One result line: PASS when ok, else FAIL with the formatted reason. */
__attribute__((format(printf, 3, 4), unused))
static void check(int ok, const char *name, const char *why, ...)
{
	va_list ap;

	check_ran++;
	if (ok) {
		printf("PASS: %s\n", name);
		return;
	}
	va_start(ap, why);
	check_fail_line(name, why, ap);
	va_end(ap);
}

/* FAIL line for a failing check inside a RUN() test; returns 1 for `if (expectf(...))`. */
__attribute__((format(printf, 3, 4), unused))
static int expectf(int ok, const char *test, const char *why, ...)
{
	va_list ap;

	if (ok)
		return 0;
	va_start(ap, why);
	check_fail_line(test, why, ap);
	va_end(ap);
	return 1;
}

/* Runs a test function that returns 0 on success (after printing FAIL otherwise). */
#define RUN(fn) do { check_ran++; if (!fn()) printf("PASS: %s\n", #fn); } while (0)

__attribute__((destructor, unused))
static void check_some_ran(void)
{
	if (check_ran)
		return;
	printf("FAIL: %s: no check ran\n", program_invocation_short_name);
	fflush(stdout);
	_exit(1);
}

#endif /* STTRACE_TEST_CHECK_H */
