/* SPDX-License-Identifier: MIT */
/* csv.c - RFC 4180 fields (csv.h). */
#include <string.h>

#include "common/csv.h"
#include "common/text.h"

void csv_field(FILE *out, const char *s)
{
	int quote = strpbrk(s, ",\"") != NULL;

	if (quote)
		putc('"', out);
	if (*s && s[1] && strchr(CSV_GUARDED, *s))
		putc('\'', out);
	text_quoted(out, s, '"', "\"\"");
	if (quote)
		putc('"', out);
}
