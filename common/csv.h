/* SPDX-License-Identifier: MIT */
/*
 * csv.h - the one CSV writer of every sttrace program (RFC 4180).
 *
 * A field is enclosed in double quotes when it holds a comma or a double
 * quote, and each double quote inside is doubled. A byte that is not
 * printable ASCII (a newline, a tab, a byte of UTF-8) is written as \xNN and
 * a backslash as \\, as `st-format cat` writes them in every output form: a
 * row is always one line, whatever a command name or path holds, a terminal
 * never receives control bytes, and every byte can be told back. Python's
 * csv, pandas, DuckDB and spreadsheets read the rows.
 */
#ifndef STTRACE_CSV_H
#define STTRACE_CSV_H

#include <stdio.h>

/* A NUL-terminated string as one field. */
void csv_field(FILE *out, const char *s);

#endif /* STTRACE_CSV_H */
