/* SPDX-License-Identifier: MIT */
/*
 * st_format_json.c - JSON from a trace's bytes (st_format_json.h).
 *
 * Ill-formed UTF-8 becomes U+FFFD, one per maximal subpart as the Unicode
 * Standard recommends (section 3.9, "U+FFFD Substitution of Maximal
 * Subparts", which Python's and browsers' decoders follow too), in the
 * writer and in the json-c strings alike: both go through text_utf8().
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/text.h"
#include "format/st-format/st_format_json.h"

static const char replacement[] = "\xef\xbf\xbd";	/* U+FFFD in UTF-8 */

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
		n = text_utf8(p + at, &bad);
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

/* ---- The writer ---------------------------------------------------------------- */

/*
 * The escape of an ASCII byte in a JSON string, as json-c writes it; NULL
 * when the byte stands for itself. buf holds a \u00xx escape.
 */
static const char *ascii_escape(unsigned char c, char buf[7])
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '/':
		return "\\/";
	case '\b':
		return "\\b";
	case '\f':
		return "\\f";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	}
	if (c >= 0x20)
		return NULL;
	snprintf(buf, 7, "\\u%04x", c);
	return buf;
}

/* s as a JSON string: runs that need nothing go out as they are. */
static void put_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run = p;
	char buf[7];

	putc_unlocked('"', out);
	while (*p) {
		const char *escape;
		size_t n = 1;
		int bad = 0;

		if (*p >= 0x80) {
			n = text_utf8(p, &bad);
			if (!bad) {
				p += n;
				continue;
			}
			escape = replacement;
		} else if (!(escape = ascii_escape(*p, buf))) {
			p++;
			continue;
		}
		fwrite_unlocked(run, 1, (size_t)(p - run), out);
		fputs_unlocked(escape, out);
		p += n;
		run = p;
	}
	fwrite_unlocked(run, 1, (size_t)(p - run), out);
	putc_unlocked('"', out);
}

static void put_u64(FILE *out, uint64_t v)
{
	char digits[20], *p = digits + sizeof(digits);

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	fwrite_unlocked(p, 1, (size_t)(digits + sizeof(digits) - p), out);
}

/* A new member of the open container: a comma after the one before it. */
static void next_member(struct sf_json_writer *w)
{
	uint32_t here = 1u << w->depth;

	if (w->has_member & here)
		putc_unlocked(',', w->out);
	w->has_member |= here;
}

/*
 * Before a value: a member of an array, or the value of the key just
 * written. Top-level values stand alone (one a line in JSON Lines).
 */
static void before_value(struct sf_json_writer *w)
{
	if (w->after_key || !w->depth) {
		w->after_key = 0;
		return;
	}
	next_member(w);
}

void sf_jw_init(struct sf_json_writer *w, FILE *out)
{
	*w = (struct sf_json_writer){ .out = out };
}

static void open_container(struct sf_json_writer *w, char bracket, int array)
{
	uint32_t inner;

	before_value(w);
	putc_unlocked(bracket, w->out);
	assert(w->depth + 1 < SF_JW_MAX_DEPTH);
	inner = 1u << ++w->depth;
	w->has_member &= ~inner;
	w->in_array = array ? w->in_array | inner : w->in_array & ~inner;
}

void sf_jw_object(struct sf_json_writer *w)
{
	open_container(w, '{', 0);
}

void sf_jw_array(struct sf_json_writer *w)
{
	open_container(w, '[', 1);
}

void sf_jw_end(struct sf_json_writer *w)
{
	putc_unlocked(w->in_array & 1u << w->depth ? ']' : '}', w->out);
	w->depth--;
}

void sf_jw_key(struct sf_json_writer *w, const char *key)
{
	next_member(w);
	put_string(w->out, key);
	putc_unlocked(':', w->out);
	w->after_key = 1;
}

void sf_jw_string(struct sf_json_writer *w, const char *s)
{
	before_value(w);
	put_string(w->out, s);
}

void sf_jw_u64(struct sf_json_writer *w, uint64_t v)
{
	before_value(w);
	put_u64(w->out, v);
}

void sf_jw_i64(struct sf_json_writer *w, int64_t v)
{
	before_value(w);
	if (v < 0)
		putc_unlocked('-', w->out);
	put_u64(w->out, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

/* A value written as it is: a literal or a number. */
static void put_token(struct sf_json_writer *w, const char *text)
{
	before_value(w);
	fputs_unlocked(text, w->out);
}

void sf_jw_null(struct sf_json_writer *w)
{
	put_token(w, "null");
}

void sf_jw_number(struct sf_json_writer *w, const char *text)
{
	put_token(w, text);
}

void sf_jw_newline(struct sf_json_writer *w)
{
	putc_unlocked('\n', w->out);
}
