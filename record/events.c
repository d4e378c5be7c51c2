/* SPDX-License-Identifier: MIT */
/*
 * events.c - the event types st-record has probes for, by name, and the
 * tracepoint each is recorded at: what the probe selection (probes.c) and
 * the tracepoints named at record time (tracepoint.c) both look up.
 */
#include <stdio.h>
#include <string.h>

#include "record/record.h"

const struct rec_event rec_events[REC_NEVENTS] = {
#define ST_EVENT_NAME(id, name, payload) { id, #name },
	ST_EVENT_TYPES(ST_EVENT_NAME)
#undef ST_EVENT_NAME
};

/* Tracepoint category of an event: its name's prefix. */
static const struct { const char *prefix, *category; } categories[] = {
	{ "block_", "block" }, { "svc_", "block" }, { "sys_", "syscalls" }, { "iomap_", "iomap" },
	{ "ext4_", "ext4" }, { "xfs_", "xfs" }, { "io_uring_", "io_uring" },
	{ "sched_", "sched" }, { "contention_", "lock" }, { "balance_dirty_pages", "writeback" },
	{ "mm_vmscan_", "vmscan" }, { "mm_filemap_", "filemap" },
};

bool rec_has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static const char *event_name(uint16_t type)
{
	for (size_t i = 0; i < REC_NEVENTS; i++)
		if (rec_events[i].type == type)
			return rec_events[i].name;
	return NULL;
}

/*
 * Events recorded at a tracepoint of another name (block_rq_inode,
 * block_rq_cgroup, block_bio_held and svc_run_delay have no program of their own).
 */
static const char *tracepoint_name(const char *name)
{
	if (!strcmp(name, "block_rq_issue_stamped") || !strcmp(name, "block_rq_inode") ||
	    !strcmp(name, "block_rq_cgroup"))
		return "block_rq_issue";
	if (!strcmp(name, "block_bio_held"))
		return "block_bio_queue";
	return !strcmp(name, "block_rq_complete_compact") || !strcmp(name, "svc_run_delay") ?
	       "block_rq_complete" : name;
}

const char *rec_event_program(uint16_t type)
{
	if (type == ST_EV_block_rq_inode || type == ST_EV_block_rq_cgroup)
		return "block_rq_issue_stamped";
	if (type == ST_EV_svc_run_delay)
		return "block_rq_complete";
	return type == ST_EV_block_bio_held ? "block_bio_queue" : event_name(type);
}

const char *rec_event_tracepoint(uint16_t type, char *buf, size_t cap)
{
	const char *name = event_name(type);

	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(categories) / sizeof(categories[0]); i++)
		if (rec_has_prefix(name, categories[i].prefix)) {
			snprintf(buf, cap, "%s/%s", categories[i].category, tracepoint_name(name));
			return buf;
		}
	return NULL;
}

