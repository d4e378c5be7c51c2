/* SPDX-License-Identifier: MIT */
/*
 * text.h - a string from a trace as text on one line, in every output that
 * is not JSON (CSV, `st-format cat`, gnuplot's scripts and data files).
 *
 * A trace's strings (a command name, a path, a device or host name) hold
 * whatever bytes the process or the file's author put there: newlines,
 * quotes, control bytes, bytes that are not UTF-8. Written as they are, a
 * newline starts a new CSV row or a new gnuplot command. So printable ASCII
 * stands for itself, a backslash is written \\ and any other byte \xNN: the
 * text is one line, holds no control byte, and every byte can be told back.
 * Each output quotes the result in its own way around this (csv.h, plot.c).
 */
#ifndef STTRACE_TEXT_H
#define STTRACE_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* One byte of a string. */
void text_char(FILE *out, unsigned char c);
/* A NUL-terminated string. */
void text_line(FILE *out, const char *s);
/* The same with each `quote` byte written as `as`: the inside of a quoted field. */
void text_quoted(FILE *out, const char *s, char quote, const char *as);

/*
 * For an output that must be UTF-8 (JSON, Prometheus' labels): the sequence
 * at s, its length when it is well-formed UTF-8 (shortest form, no
 * surrogates, at most U+10FFFF), else, with *bad set, the length of its
 * maximal subpart (at least 1), which the Unicode Standard replaces by one
 * U+FFFD. s ends with a NUL, no continuation byte, so the walk stops there.
 */
size_t text_utf8(const unsigned char *s, int *bad);

/*
 * s for a terminal (the text reports, st-format info): each byte a terminal
 * acts on (a C0 control such as ESC or CR, DEL, a C1 control U+0080..U+009F)
 * and each byte that is not UTF-8 as \xNN. A name in a trace then cannot
 * move the cursor, rewrite what was printed, retitle the window, set the
 * clipboard (OSC 52) or have the terminal answer a query into its input; a
 * UTF-8 name shows as it is.
 */
void text_put_shown(FILE *out, const char *s);
/* The same as a string: s itself when it holds no such byte, else a copy in buf (cap bytes, cut). */
#define TEXT_SHOWN_MAX 1024	/* a buf for a name of 255 bytes, each as \xNN */
const char *text_shown(const char *s, char *buf, size_t cap);

#endif /* STTRACE_TEXT_H */
