/* SPDX-License-Identifier: MIT */
/* text.c - a trace's string as text on one line (text.h). */
#include <string.h>

#include "common/text.h"

void text_char(FILE *out, unsigned char c)
{
	if (c == '\\')
		fputs("\\\\", out);
	else if (c >= 0x20 && c < 0x7f)
		putc(c, out);
	else
		fprintf(out, "\\x%02x", c);
}

void text_line(FILE *out, const char *s)
{
	text_quoted(out, s, 0, "");	/* no byte of s is 0 */
}

void text_quoted(FILE *out, const char *s, char quote, const char *as)
{
	for (const char *p = s; *p; p++) {
		if (*p == quote)
			fputs(as, out);
		else
			text_char(out, (unsigned char)*p);
	}
}

/* Unicode table 3-7: the first byte sets the length and the second's range. */
size_t text_utf8(const unsigned char *s, int *bad)
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
 * The unit at p for a terminal: its length, with *act set when a terminal
 * acts on it (C0, DEL, C1 as U+0080..U+009F) or it is not UTF-8: then the
 * one byte, to be written \xNN.
 */
static size_t shown_unit(const unsigned char *p, int *act)
{
	size_t n = text_utf8(p, act);

	if (!*act)
		*act = *p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] < 0xa0);
	return *act ? 1 : n;
}

void text_put_shown(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;
	int act;

	for (; *p; p += n) {
		n = shown_unit(p, &act);
		if (act)
			fprintf(out, "\\x%02x", *p);
		else
			fwrite(p, 1, n, out);
	}
}

const char *text_shown(const char *s, char *buf, size_t cap)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n, len = 0;
	int act = 0;

	for (; *p && !act; p += n)
		n = shown_unit(p, &act);
	if (!act || !cap)
		return s;
	for (p = (const unsigned char *)s; *p; p += n) {
		n = shown_unit(p, &act);
		if (len + (act ? 4 : n) >= cap)
			break;
		if (act)
			len += (size_t)snprintf(buf + len, cap - len, "\\x%02x", *p);
		else
			memcpy(buf + len, p, n);
		len += act ? 0 : n;
	}
	buf[len] = 0;
	return buf;
}
