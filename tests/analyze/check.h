/* SPDX-License-Identifier: MIT */
/* check.h - PASS/FAIL lines for tests/run.sh from the analyzer's C unit tests. */
#ifndef AN_TEST_CHECK_H
#define AN_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int check_failures;

/* One result line: PASS when ok, else FAIL with the formatted reason. */
__attribute__((format(printf, 3, 4)))
static void check(int ok, const char *name, const char *why, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS: %s\n", name);
		return;
	}
	check_failures++;
	printf("FAIL: %s: ", name);
	va_start(ap, why);
	vprintf(why, ap);
	va_end(ap);
	putchar('\n');
}

#endif /* AN_TEST_CHECK_H */
