/* SPDX-License-Identifier: MIT */
/*
 * st_format_json.c - JSON strings from a trace's bytes.
 *
 * A `str` field, a metadata value or a name in the schema holds bytes,
 * usually UTF-8 but not always: a command name or a path is whatever bytes
 * the process used. JSON text must be UTF-8, so each ill-formed part becomes
 * U+FFFD, one per maximal subpart as the Unicode Standard recommends
 * (section 3.9, "U+FFFD Substitution of Maximal Subparts", which Python's
 * and browsers' decoders follow too): every line st-format prints parses.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "format/st-format/st_format.h"

static const char replacement[] = "\xef\xbf\xbd";	/* U+FFFD in UTF-8 */

/*
 * The sequence at s: its length when it is well-formed UTF-8 (Unicode table
 * 3-7: shortest form, no surrogates, at most U+10FFFF), else, with *bad set,
 * the length of its maximal subpart (at least 1). s ends with a NUL, which
 * is no continuation byte, so the walk stops there.
 */
static size_t utf8_sequence(const unsigned char *s, int *bad)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	*bad = 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return *bad = 1, 1;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	for (i = 1; i < len; i++, lo = 0x80, hi = 0xbf)
		if (s[i] < lo || s[i] > hi)
			return *bad = 1, i;
	return len;
}

/*
 * s with each ill-formed part replaced; NULL when s is valid UTF-8 already,
 * or when out of memory (then s goes out as it is).
 */
static char *utf8_repaired(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), n, out = 0;
	char *fixed = NULL;
	int bad;

	for (size_t at = 0; at < len; at += n) {
		n = utf8_sequence(p + at, &bad);
		if (bad && !fixed) {
			/* a replacement (3 bytes) per byte at most */
			fixed = malloc(3 * len + 1);
			if (!fixed)
				return NULL;
			memcpy(fixed, s, at);
			out = at;
		}
		if (bad) {
			memcpy(fixed + out, replacement, 3);
			out += 3;
		} else if (fixed) {
			memcpy(fixed + out, s + at, n);
			out += n;
		}
	}
	if (fixed)
		fixed[out] = '\0';
	return fixed;
}

struct json_object *sf_json_string(const char *s)
{
	char *fixed = utf8_repaired(s);
	struct json_object *o = json_object_new_string(fixed ? fixed : s);

	free(fixed);
	return o;
}

void sf_json_add(struct json_object *o, const char *key, struct json_object *value)
{
	char *fixed = utf8_repaired(key);

	json_object_object_add(o, fixed ? fixed : key, value);
	free(fixed);
}
