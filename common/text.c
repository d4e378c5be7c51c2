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
