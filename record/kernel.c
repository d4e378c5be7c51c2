/* SPDX-License-Identifier: MIT */
/*
 * kernel.c - what the running kernel's BTF says its probes may use: the
 * decisions st-record makes at load time for one BPF object built once
 * (record/probes.c applies them), never from version numbers.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>

#include "record/record.h"

/* Until the request flags became an enum (rqf_flags) RQF_FLUSH_SEQ was a macro: 1 << 4. */
#define RQF_FLUSH_SEQ_MACRO	(1u << 4)

/* The value of an enumerator of any enum, named or not, in *val; false when none has it. */
static bool find_enumerator(const struct btf *btf, const char *name, int64_t *val)
{
	uint32_t n = btf ? btf__type_cnt(btf) : 0;

	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_enum *e;

		if (!btf_is_enum(t))
			continue;
		e = btf_enum(t);
		for (int i = 0; i < btf_vlen(t); i++)
			if (!strcmp(btf__name_by_offset(btf, e[i].name_off), name)) {
				*val = e[i].val;
				return true;
			}
	}
	return false;
}

uint32_t rec_kernel_rqf_flush_seq(const struct btf *btf)
{
	int64_t bit;

	/* named (rqf_flags) or not */
	return find_enumerator(btf, "__RQF_FLUSH_SEQ", &bit) ? 1u << bit : RQF_FLUSH_SEQ_MACRO;
}

bool rec_kernel_has_enumerator(const struct btf *btf, const char *name)
{
	int64_t val;

	return find_enumerator(btf, name, &val);
}

bool rec_kernel_has_func(const struct btf *btf, const char *name)
{
	return btf && btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) > 0;
}

/* The prototype of a tracepoint's BTF typedef (btf_trace_NAME), NULL when the kernel has none. */
static const struct btf_type *tp_proto(const struct btf *btf, const char *tracepoint)
{
	const struct btf_type *t;
	char name[160];
	int id;

	snprintf(name, sizeof(name), "btf_trace_%s", tracepoint);
	id = btf ? btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) : -1;
	if (id <= 0)
		return NULL;
	/* typedef -> pointer -> prototype (void *__data, the tracepoint's arguments...) */
	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (!t || !btf_is_ptr(t))
		return NULL;
	t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) && btf_vlen(t) > 0 ? t : NULL;
}

int rec_kernel_tp_args(const struct btf *btf, const char *tracepoint)
{
	const struct btf_type *t = tp_proto(btf, tracepoint);

	return t ? btf_vlen(t) - 1 : -1;
}

bool rec_kernel_tp_arg_is(const struct btf *btf, const char *tracepoint, int arg, const char *type)
{
	const struct btf_type *t = tp_proto(btf, tracepoint);

	if (!t || arg < 0 || arg + 1 >= btf_vlen(t))
		return false;
	t = btf__type_by_id(btf, btf_params(t)[arg + 1].type);
	if (!t || !btf_is_ptr(t))
		return false;
	t = btf__type_by_id(btf, t->type);
	return t && btf_is_struct(t) && !strcmp(btf__name_by_offset(btf, t->name_off), type);
}
