/* SPDX-License-Identifier: MIT */
/*
 * sttrace_bpf.h - limits shared by sttrace.bpf.c and st-record (not part of
 * the file format).
 */
#ifndef STTRACE_BPF_H
#define STTRACE_BPF_H

#define ST_MAX_FILTER_DEVS	64	/* -d: the disk and its partitions */
#define ST_MAX_TRACKED_TGIDS	65536	/* -p: the process and its descendants */
#define ST_MAX_MARKED_BIOS	65536	/* bios in flight that a filter marked */
#define ST_MAX_CHAIN_WALK	256	/* bios of a request counted at issue */
#define ST_MAX_UNMARK		32	/* bios of a request unmarked at completion */

#endif /* STTRACE_BPF_H */
