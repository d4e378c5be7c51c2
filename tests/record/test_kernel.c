/* SPDX-License-Identifier: MIT */
/*
 * test_kernel.c - st-record's load-time decisions from a kernel's BTF
 * (record/kernel.c), on BTF made here as each kernel has it.
 */
#include <stdio.h>

#include <bpf/btf.h>

#include "record/record.h"
#include "tests/check.h"

/* btf_trace_NAME: typedef of a pointer to void (void *, and nargs unsigned longs) */
static void add_tracepoint(struct btf *btf, const char *name, int nargs)
{
	int ulong = btf__add_int(btf, "long unsigned int", 8, 0);
	int voidp = btf__add_ptr(btf, 0);
	int proto = btf__add_func_proto(btf, 0);
	char typedef_name[128];

	btf__add_func_param(btf, "", voidp);
	for (int i = 0; i < nargs; i++)
		btf__add_func_param(btf, "", ulong);
	snprintf(typedef_name, sizeof(typedef_name), "btf_trace_%s", name);
	btf__add_typedef(btf, typedef_name, btf__add_ptr(btf, proto));
}

/* btf_trace_NAME: typedef of a pointer to void (void *, struct type *) */
static void add_tracepoint_of(struct btf *btf, const char *name, const char *type)
{
	int voidp = btf__add_ptr(btf, 0);
	int arg = btf__add_ptr(btf, btf__add_struct(btf, type, 8));
	int proto = btf__add_func_proto(btf, 0);
	char typedef_name[128];

	btf__add_func_param(btf, "", voidp);
	btf__add_func_param(btf, "", arg);
	snprintf(typedef_name, sizeof(typedef_name), "btf_trace_%s", name);
	btf__add_typedef(btf, typedef_name, btf__add_ptr(btf, proto));
}

int main(void)
{
	struct btf *old = btf__new_empty(), *anon = btf__new_empty(), *named = btf__new_empty();
	int proto;

	/* 6.1: RQF_FLUSH_SEQ a macro (no enumerator), no bpf_rdonly_cast, io_uring_submit_sqe */
	add_tracepoint(old, "io_uring_submit_sqe", 2);
	add_tracepoint(old, "balance_dirty_pages", 12);
	check(rec_kernel_rqf_flush_seq(old) == 1u << 4, "rqf_macro", "0x%x, want 0x10",
	      rec_kernel_rqf_flush_seq(old));
	check(!rec_kernel_has_func(old, "bpf_rdonly_cast"), "kfunc_absent", "found");
	check(!rec_kernel_has_enumerator(old, "BPF_FUNC_get_attach_cookie"), "enumerator_absent", "found");
	check(rec_kernel_tp_args(old, "io_uring_submit_req") == -1, "tp_absent", "%d args",
	      rec_kernel_tp_args(old, "io_uring_submit_req"));
	check(rec_kernel_tp_args(old, "io_uring_submit_sqe") == 2, "tp_args", "%d, want 2",
	      rec_kernel_tp_args(old, "io_uring_submit_sqe"));
	check(rec_kernel_tp_args(old, "balance_dirty_pages") == 12, "tp_args_thresh", "%d, want 12",
	      rec_kernel_tp_args(old, "balance_dirty_pages"));

	/* 5.10: the page cache's tracepoint takes a page; the bio ones the queue first */
	add_tracepoint_of(old, "mm_filemap_add_to_page_cache", "page");
	add_tracepoint(old, "block_bio_queue", 2);
	check(rec_kernel_tp_arg_is(old, "mm_filemap_add_to_page_cache", 0, "page") &&
	      !rec_kernel_tp_arg_is(old, "mm_filemap_add_to_page_cache", 0, "folio"), "tp_first_arg_page",
	      "the page form not told from the folio one");
	check(!rec_kernel_tp_arg_is(old, "mm_filemap_add_to_page_cache", 1, "page") &&
	      !rec_kernel_tp_arg_is(old, "block_bio_queue", 0, "bio") &&
	      !rec_kernel_tp_arg_is(old, "absent", 0, "page"), "tp_arg_not_struct",
	      "an argument past the last, an integer or an absent tracepoint taken for a struct");
	check(rec_kernel_tp_args(old, "block_bio_queue") == 2, "tp_args_queue_first", "%d, want 2",
	      rec_kernel_tp_args(old, "block_bio_queue"));

	/* 6.12: the flags an anonymous enum, __RQF_FLUSH_SEQ = 1 */
	btf__add_enum(anon, NULL, 4);
	btf__add_enum_value(anon, "__RQF_STARTED", 0);
	btf__add_enum_value(anon, "__RQF_FLUSH_SEQ", 1);
	check(rec_kernel_rqf_flush_seq(anon) == 1u << 1, "rqf_anonymous_enum", "0x%x, want 0x2",
	      rec_kernel_rqf_flush_seq(anon));

	/* 6.18: enum rqf_flags, and the kfunc */
	btf__add_enum(named, "rqf_flags", 4);
	btf__add_enum_value(named, "__RQF_STARTED", 0);
	btf__add_enum_value(named, "__RQF_MIXED", 1);
	btf__add_enum_value(named, "__RQF_FLUSH_SEQ", 2);
	proto = btf__add_func_proto(named, 0);
	btf__add_func(named, "bpf_rdonly_cast", BTF_FUNC_GLOBAL, proto);
	check(rec_kernel_rqf_flush_seq(named) == 1u << 2, "rqf_named_enum", "0x%x, want 0x4",
	      rec_kernel_rqf_flush_seq(named));
	check(rec_kernel_has_func(named, "bpf_rdonly_cast"), "kfunc_present", "not found");
	check(rec_kernel_has_enumerator(anon, "__RQF_FLUSH_SEQ") &&
	      rec_kernel_has_enumerator(named, "__RQF_FLUSH_SEQ"), "enumerator_present", "not found");
	check(rec_kernel_rqf_flush_seq(NULL) == 1u << 4 && !rec_kernel_has_func(NULL, "x") &&
	      rec_kernel_tp_args(NULL, "x") == -1, "no_btf", "a kernel without BTF");
	btf__free(old);
	btf__free(anon);
	btf__free(named);
	return check_failures != 0;
}
