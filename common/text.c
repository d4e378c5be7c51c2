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
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		text_char(out, *p);
}
