/* SPDX-License-Identifier: MIT */
/* number.c - numbers and sizes on the command line (number.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "common/number.h"
#include "format/lib/sttrace.h"

int parse_number(const char *s, double lo, double hi, double *v)
{
	const char *end;

	return st_parse_decimal(s, v, &end) || *end || *v < lo || *v > hi ? -1 : 0;
}

int parse_count(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	char *end;

	/* strtoull alone would take blanks, a sign and wrap "-1" to 2^64 - 1 */
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end || *v < lo || *v > hi ? -1 : 0;
}

int parse_integer(const char *s, long long lo, long long hi, long long *v)
{
	char *end;

	if (!isdigit((unsigned char)s[*s == '-']))
		return -1;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return errno || *end || *v < lo || *v > hi ? -1 : 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	const char *end;
	double v;
	int shift = 0;

	if (st_parse_decimal(s, &v, &end))
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v * (double)(1ull << shift) >= 18446744073709549568.0)	/* below 2^64 */
		return -1;
	*bytes = (uint64_t)(v * (double)(1ull << shift));
	return 0;
}
