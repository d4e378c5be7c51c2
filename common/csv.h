/* SPDX-License-Identifier: MIT */
/*
 * csv.h - the one CSV writer of every sttrace program (RFC 4180).
 *
 * A field is enclosed in double quotes when it holds a comma or a double
 * quote, and each double quote inside is doubled. A byte that is not
 * printable ASCII (a newline, a tab, a byte of UTF-8) is written as \xNN and
 * a backslash as \\, as `st-format cat` writes them in every output form: a
 * row is always one line, whatever a command name or path holds, a terminal
 * never receives control bytes, and every byte can be told back (text.h).
 * Python's csv, pandas, DuckDB and spreadsheets read the rows.
 *
 * A spreadsheet takes a cell beginning with = + - or @ for a formula, which
 * can run commands or send data away (CSV injection). Such a field of two
 * bytes or more, and one beginning with ' so that the rule can be undone,
 * gets a ' in front, as OWASP recommends: '=cmd|' /C calc'!A0 shows as text,
 * and a program that wants the bytes back drops the leading ' of a field of
 * two bytes or more. A lone - (no value) stays as it is. Tab and CR, the
 * other bytes a spreadsheet reads so, never begin a field: they are \x09
 * and \x0d.
 */
#ifndef STTRACE_CSV_H
#define STTRACE_CSV_H

#include <stdio.h>

/* The first bytes of a field of two bytes or more that get a ' in front. */
#define CSV_GUARDED "=+-@'"

/* A NUL-terminated string as one field. */
void csv_field(FILE *out, const char *s);

#endif /* STTRACE_CSV_H */
