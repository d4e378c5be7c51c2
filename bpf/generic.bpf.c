// SPDX-License-Identifier: GPL-2.0
/*
 * generic.bpf.c - the probe of every tracepoint named at record time.
 *
 * One classic-tracepoint program, attached once per tracepoint the user named
 * (`st-record -e 'ext4:ext4_da_write_*'`); the BPF cookie of each attachment
 * selects its layout (struct st_generic_event, sttrace_bpf.h). It copies the
 * tracepoint's entry as the kernel wrote it and each __data_loc string into a
 * bounded slot; the schema st-record stored in the file names every field.
 *
 *
 * It records through the same per-CPU stage, ring buffer and filters as
 * the typed probes, so it costs one probe run per event and its records
 * are batched like theirs.
 * The task filters (-p, -c, --cgroup) apply to the task the tracepoint fires
 * in; -d applies to tracepoints with a `dev_t dev` field.
 */
#include "sttrace.bpf.h"
#include "stage.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ST_GENERIC_MAX_EVENTS);
	__type(key, __u32);
	__type(value, struct st_generic_event);
} generic_events SEC(".maps");

#define GENERIC_MAX_COPY (ST_MAX_RECORD_BYTES - sizeof(struct st_event_header))

/*
 * A __data_loc word holds the string's offset in the entry (low 16 bits) and
 * its length (high 16); the slot gets at most ST_GENERIC_STR_LEN - 1 bytes
 * and a NUL.
 */
static __always_inline void copy_string(__u8 *rec, const void *entry, const struct st_generic_string *s)
{
	__u32 loc_offset = s->loc_offset, slot = s->slot_offset;
	__u32 loc = 0;

	if (slot > ST_MAX_RECORD_BYTES - ST_GENERIC_STR_LEN)
		return;
	__builtin_memset(rec + slot, 0, ST_GENERIC_STR_LEN);
	bpf_probe_read_kernel(&loc, sizeof(loc), entry + loc_offset);
	bpf_probe_read_kernel_str(rec + slot, ST_GENERIC_STR_LEN, entry + (loc & 0xffff));
}

SEC("tracepoint")
int generic_tracepoint(void *ctx)
{
	__u32 index = (__u32)bpf_get_attach_cookie(ctx);
	const struct st_generic_event *ge = bpf_map_lookup_elem(&generic_events, &index);
	__u32 size, copy_len;
	__u8 *rec;

	if (!ge || !task_passes())
		return 0;
	if (filter_ndevs && ge->dev_offset) {
		__u32 dev = 0;

		bpf_probe_read_kernel(&dev, sizeof(dev), ctx + ge->dev_offset);
		if (!fs_dev_passes(dev))
			return 0;
	}
	size = ge->size;
	copy_len = ge->copy_len;
	if (size > ST_MAX_RECORD_BYTES || copy_len > GENERIC_MAX_COPY)
		return 0;
	rec = reserve(size, ge->type);
	if (!rec)
		return 0;
	bpf_probe_read_kernel(rec + sizeof(struct st_event_header), copy_len,
			      ctx + ST_GENERIC_ENTRY_SKIP);
	for (__u32 i = 0; i < ST_MAX_RECORD_BYTES / 8 && i * 8 < size; i++)
		((__u64 *)rec)[i] &= ge->keep[i];
	for (__u32 i = 0; i < ST_GENERIC_MAX_STRINGS && i < ge->nstrings; i++)
		copy_string(rec, ctx, &ge->strings[i]);
	submit(rec, size);
	return 0;
}
