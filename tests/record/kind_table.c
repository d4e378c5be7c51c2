/* SPDX-License-Identifier: MIT */
/*
 * kind_table.c - libsttrace's built-in schema (format/lib/schema.c) with
 * the rows of kind_table.h: linked before libsttrace.a, it stands for the
 * library's schema.o, so st_builtin_types() and st_event_kind() know the
 * made-up types and every other object is the one programs link.
 */
#include "tests/record/kind_table.h"
#include "format/lib/schema.c"
