/* SPDX-License-Identifier: MIT */
/*
 * test_format_decimal.c - st_parse_decimal, the number every command-line
 * number and duration begins with: decimal digits, a fraction and an
 * exponent, and nothing strtod takes besides (hexadecimal and its floats,
 * inf, nan, a sign, blanks); st_parse_duration reads its number so.
 */
#include <string.h>

#include "format/lib/sttrace.h"
#include "tests/check.h"

int main(void)
{
	static const struct {
		const char *s;
		double v;
		const char *rest;	/* what follows the number */
	} taken[] = {
		{ "16", 16, "" }, { "99.9", 99.9, "" }, { ".5", 0.5, "" }, { "5.", 5, "" },
		{ "1e3", 1e3, "" }, { "1E-3", 1e-3, "" }, { "2.5e+2", 250, "" },
		{ "200ms", 200, "ms" }, { "1e", 1, "e" }, { "1e-", 1, "e-" }, { "64K", 64, "K" },
	};
	static const char *const refused[] = {
		"0x10", "0x1p-3", "0X1P3", "inf", "nan", "-1", "+1", " 1", ".", "", "e3", "1e999",
	};
	char name[64];

	for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
		const char *end = NULL;
		double v = -1;
		int rc = st_parse_decimal(taken[i].s, &v, &end);

		snprintf(name, sizeof(name), "decimal_taken_%s", taken[i].s);
		check(!rc && v == taken[i].v && end && !strcmp(end, taken[i].rest), name,
		      "rc %d, %g before \"%s\"", rc, v, end ? end : "(none)");
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const char *end = NULL;
		double v;

		snprintf(name, sizeof(name), "decimal_refused_'%s'", refused[i]);
		check(st_parse_decimal(refused[i], &v, &end) == ST_EINVAL, name, "taken as %g", v);
	}
	/* durations read their number so: 0x1p-3 was 125 ms */
	{
		uint64_t ns = 0;

		check(st_parse_duration("0x1p-3", &ns) == ST_EINVAL, "duration_hex_float_refused", "taken as %llu ns",
		      (unsigned long long)ns);
		check(!st_parse_duration("1.5e-3s", &ns) && ns == 1500000, "duration_exponent_taken", "%llu ns",
		      (unsigned long long)ns);
		check(!st_parse_duration(".5ms", &ns) && ns == 500000, "duration_fraction_taken", "%llu ns",
		      (unsigned long long)ns);
	}
	return check_failures != 0;
}
