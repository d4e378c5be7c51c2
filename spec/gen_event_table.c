/* SPDX-License-Identifier: MIT */
/*
 * gen_event_table.c - prints the built-in event type tables of
 * spec/sttrace-format.md from format/lib/sttrace_events.h (through libsttrace's
 * built-in schema). `make spec-table` shows it; tests/format/t_lib_spec_table.sh
 * fails when the committed spec and the header disagree.
 */
#include <stdio.h>
#include <string.h>

#include "format/lib/sttrace.h"

static const char *const display_names[] = {
	[ST_FT_UINT] = "uint", [ST_FT_INT] = "int", [ST_FT_HEX] = "hex",
	[ST_FT_DEV] = "dev", [ST_FT_STR] = "str", [ST_FT_NS] = "ns",
};

#define ST_PAYLOAD_NAME(id, name, payload, kind) [id] = #payload,
static const char *const payload_of[] = { ST_EVENT_TYPES(ST_PAYLOAD_NAME) };

static void print_fields(const struct st_type *t)
{
	printf("| field | offset | size | element | display | meaning |\n");
	printf("|---|---|---|---|---|---|\n");
	for (uint16_t i = 6; i < t->nfields; i++) {
		const struct st_field *f = &t->fields[i];

		printf("| `%s` | %u | %u | %u | %s | %s |\n", f->name, f->offset, f->size,
		       f->elem_size, display_names[f->type], f->doc);
	}
}

int main(void)
{
	size_t n;
	const struct st_type *t = st_builtin_types(&n);

	printf("| id | name | record size | payload |\n|---|---|---|---|\n");
	for (size_t i = 0; i < n; i++)
		printf("| %u | `%s` | %u | %s |\n", t[i].id, t[i].name, t[i].size, payload_of[t[i].id]);
	for (size_t i = 0; i < n; i++) {
		int first = 1;

		for (size_t j = 0; j < i; j++)
			first &= t[j].fields != t[i].fields;
		if (!first)
			continue;
		printf("\n#### Payload `%s` (%u bytes after the header)\n\n", payload_of[t[i].id],
		       t[i].size - 24u);
		print_fields(&t[i]);
	}
	return 0;
}
