/* SPDX-License-Identifier: MIT */
/* text.c - a trace's string as text on one line (text.h). */
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
