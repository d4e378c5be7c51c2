/* SPDX-License-Identifier: MIT */
/*
 * st_format_json.h - JSON from a trace's bytes.
 *
 * Strings in a trace (a `str` field, a metadata value, a name in the
 * schema) hold bytes, usually UTF-8 but not always: a command name or a
 * path is whatever bytes the process used. JSON text must be UTF-8, so
 * every string st-format puts into JSON has each ill-formed part replaced
 * by U+FFFD, one per maximal subpart (spec/sttrace-format.md, section 14),
 * and every line it prints parses.
 *
 * Two ways in, one repair:
 *
 * - The writer, for what is printed per event (cat --json, convert --to
 *   jsonl, --records, perfetto): values go straight into a stdio stream,
 *   no tree is built. Commas and closing brackets are its business:
 *
 *	struct sf_json_writer w;
 *
 *	sf_jw_init(&w, stdout);
 *	sf_jw_object(&w);			{
 *	sf_jw_key(&w, "ts");			"ts":
 *	sf_jw_u64(&w, ts);			1234
 *	sf_jw_key(&w, "bios");			,"bios":
 *	sf_jw_array(&w);			[
 *	sf_jw_string(&w, "0x1");		"0x1"
 *	sf_jw_end(&w);				]
 *	sf_jw_end(&w);				}
 *	sf_jw_newline(&w);			one value a line (JSON Lines)
 *
 *   Objects and arrays nest at most SF_JW_MAX_DEPTH deep. Write errors
 *   stay in the stream (ferror()), for the caller to check once at the
 *   end. The text is json-c's plain form byte for byte (no spaces; `/`
 *   as `\/`; \b \f \n \r \t; other control characters as \u00xx), so a
 *   line reads the same as when it was made by json-c.
 *
 * - sf_json_string/sf_json_add, for the documents st-format builds as a
 *   whole with json-c (info --json).
 */
#ifndef STTRACE_ST_FORMAT_JSON_H
#define STTRACE_ST_FORMAT_JSON_H

#include <stdint.h>
#include <stdio.h>

#define SF_JW_MAX_DEPTH 32

struct sf_json_writer {
	FILE *out;
	unsigned depth;		/* objects and arrays open */
	uint32_t in_array;	/* bit d: the container at depth d (from 1) is an array */
	uint32_t has_member;	/* bit d: it holds a member already */
	int after_key;		/* a key was written, its value comes next */
};

void sf_jw_init(struct sf_json_writer *w, FILE *out);
void sf_jw_object(struct sf_json_writer *w);
void sf_jw_array(struct sf_json_writer *w);
/* Close the innermost object or array. */
void sf_jw_end(struct sf_json_writer *w);
/* A member's name in the open object; its value is the next thing written. */
void sf_jw_key(struct sf_json_writer *w, const char *key);
/* A NUL-terminated string of any bytes (repaired). */
void sf_jw_string(struct sf_json_writer *w, const char *s);
void sf_jw_u64(struct sf_json_writer *w, uint64_t v);
void sf_jw_i64(struct sf_json_writer *w, int64_t v);
void sf_jw_null(struct sf_json_writer *w);
/* A number formatted by the caller (perfetto's microseconds, "12.345"). */
void sf_jw_number(struct sf_json_writer *w, const char *text);
/* End of a line: after each top-level value of JSON Lines. */
void sf_jw_newline(struct sf_json_writer *w);

/* json-c: a string object of s, repaired; o[key] = value, key repaired. */
struct json_object;
struct json_object *sf_json_string(const char *s);
void sf_json_add(struct json_object *o, const char *key, struct json_object *value);

#endif /* STTRACE_ST_FORMAT_JSON_H */
