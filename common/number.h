/* SPDX-License-Identifier: MIT */
/*
 * number.h - the one reader of a number or a size on every program's command
 * line (durations are st_parse_duration's, which reads them the same way).
 *
 * A number is decimal from its first byte to its last: digits, an optional
 * fraction and exponent ("99.9", ".5", "1e3"), as st_parse_decimal (libsttrace)
 * reads it for durations too. strtod alone would also take "nan", "inf",
 * hexadecimal ("0x10", "0x1p-3"), a sign and leading blanks, and a NaN passes
 * every range check (each comparison with it is false), so `--threshold nan`
 * would gate nothing. Only parse_integer takes a '-', where it is meant.
 */
#ifndef STTRACE_NUMBER_H
#define STTRACE_NUMBER_H

#include <stdint.h>

/* s as a number in [lo, hi]; 0, or -1 when it is not one or out of range. */
int parse_number(const char *s, double lo, double hi, double *v);

/* s as a whole decimal number (digits only) in [lo, hi]; 0 or -1. */
int parse_count(const char *s, uint64_t lo, uint64_t hi, uint64_t *v);

/* s as a whole decimal number, a '-' before it allowed, in [lo, hi]; 0 or -1. */
int parse_integer(const char *s, long long lo, long long hi, long long *v);

/*
 * s as a size in bytes: a number with an optional binary multiple K, M, G or
 * T (either case), then an optional "iB" or "B" ("4096", "64K", "1.5MiB");
 * rounded down to the byte, below 2^64. 0, or -1.
 */
int parse_size(const char *s, uint64_t *bytes);

#endif /* STTRACE_NUMBER_H */
