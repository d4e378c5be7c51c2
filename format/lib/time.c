/* SPDX-License-Identifier: MIT */
/*
 * time.c - the one way every sttrace program reads a time from its command
 * line: durations (st-record -t, st-analyze --interval) and times inside a
 * trace (--from/--to of st-analyze and st-format), so that `--from 2`
 * means the same thing to every tool; and sizes (st-record --max-size,
 * st-replay --max-io) likewise. And the one way from an event time to the
 * wall clock (st_clock_offset, st_wall_time), checked, since a file's
 * offset and times can be anything.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sttrace.h"

int st_parse_decimal(const char *s, double *v, const char **end)
{
	const char *p = s;
	char *parsed;
	size_t digits;

	digits = strspn(p, "0123456789");
	p += digits;
	if (*p == '.') {
		size_t fraction = strspn(p + 1, "0123456789");

		digits += fraction;
		p += 1 + fraction;
	}
	if (!digits)
		return ST_EINVAL;
	if (*p == 'e' || *p == 'E') {
		const char *exp = p + 1 + (p[1] == '+' || p[1] == '-');
		size_t n = strspn(exp, "0123456789");

		if (n)	/* an e without digits is no exponent: "1e" is 1 and an "e" */
			p = exp + n;
	}
	/* only decimal digits are left for strtod, which must end where the scan did */
	errno = 0;
	*v = strtod(s, &parsed);
	if (errno || parsed != p || !isfinite(*v))
		return ST_EINVAL;
	*end = p;
	return 0;
}

int st_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {
		{ "", 1e9 }, { "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 }, { "ns", 1 },
		{ "m", 60e9 }, { "h", 3600e9 },
	};
	const char *end;
	double v;

	if (st_parse_decimal(s, &v, &end))
		return ST_EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double t = round(v * units[i].ns);

		if (strcmp(end, units[i].unit))
			continue;
		if (t >= 18446744073709549568.0)	/* the largest double below 2^64 */
			return ST_EINVAL;
		*ns = (uint64_t)t;
		return 0;
	}
	return ST_EINVAL;
}

int st_parse_time(const char *s, uint64_t start, uint64_t *ns)
{
	uint64_t v;
	char *end;

	if (*s == '@') {
		if (!isdigit((unsigned char)s[1]))
			return ST_EINVAL;
		errno = 0;
		v = strtoull(s + 1, &end, 10);
		if (errno || *end)
			return ST_EINVAL;
		*ns = v;
		return 0;
	}
	if (st_parse_duration(s, &v) || v > UINT64_MAX - start)
		return ST_EINVAL;
	*ns = start + v;
	return 0;
}

uint64_t st_trace_start(const struct st_reader *r)
{
	const char *s = st_meta_get(r, "record.start_ts");
	char *end;
	uint64_t ts;

	if (s && isdigit((unsigned char)*s)) {
		errno = 0;
		ts = strtoull(s, &end, 10);
		if (!errno && !*end)
			return ts;
	}
	return st_reader_info(r)->first_ts;
}

int st_clock_offset(const struct st_reader *r, const char *key, int64_t *off)
{
	const char *s = st_meta_get(r, key);
	char *end;
	long long v;

	if (!s || !(isdigit((unsigned char)*s) || (*s == '-' && isdigit((unsigned char)s[1]))))
		return ST_ENOTFOUND;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v > (long long)ST_PLAUSIBLE_SPAN_NS || v < -(long long)ST_PLAUSIBLE_SPAN_NS)
		return ST_ENOTFOUND;
	*off = v;
	return 0;
}

int st_wall_time(uint64_t ts, int64_t off, int64_t *wall)
{
	if (ts > INT64_MAX || __builtin_add_overflow((int64_t)ts, off, wall) || *wall < 0)
		return ST_EINVAL;
	return 0;
}
