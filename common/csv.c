/* SPDX-License-Identifier: MIT */
/* csv.c - RFC 4180 fields (csv.h). */
#include <ctype.h>
#include <string.h>

#include "common/csv.h"

void csv_field(FILE *out, const char *s)
{
	int quote = strpbrk(s, ",\"") != NULL;

	if (quote)
		putc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"')
			fputs("\"\"", out);
		else if (*p == '\\')
			fputs("\\\\", out);
		else if (isprint(*p))
			putc(*p, out);
		else
			fprintf(out, "\\x%02x", *p);
	}
	if (quote)
		putc('"', out);
}
