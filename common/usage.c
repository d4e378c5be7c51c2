/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "common/usage.h"

int usage_verror(const char *prog, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (see %s --help)\n", prog);
	return EXIT_USAGE;
}

int usage_error(const char *prog, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = usage_verror(prog, fmt, ap);
	va_end(ap);
	return ret;
}
