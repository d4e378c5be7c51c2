/* SPDX-License-Identifier: MIT */
#include <stdint.h>

#include "analyze/lib/missing.h"
#include "analyze/lib/span.h"
#include "common/text.h"
#include "format/lib/sttrace_events.h"

#define S(s) (1u << AN_ST_##s)
#define FS_BEGIN (S(SYS2FS) | S(FS) | S(FS2Q))

/* The events st-record may find missing, and what each feeds (analyze/README.md, Stages and Causes). */
static const struct {
	uint16_t type;
	unsigned stages;
	const char *also;	/* what else it feeds, NULL nothing */
} feeds[] = {
	{ ST_EV_iomap_dio_rw_begin, FS_BEGIN, "libaio iocbs" },
	{ ST_EV_iomap_dio_complete, S(FS), NULL },
	{ ST_EV_ext4_sync_file_enter, FS_BEGIN | S(WB) | S(JNL), NULL },
	{ ST_EV_ext4_sync_file_exit, S(FS), NULL },
	{ ST_EV_xfs_file_fsync, FS_BEGIN | S(WB) | S(JNL), NULL },
	{ ST_EV_io_uring_submit_req, 0, "io_uring requests" },
	{ ST_EV_io_uring_complete, 0, "io_uring requests" },
	{ ST_EV_sys_enter_io_uring_enter, S(REAP), NULL },
	{ ST_EV_sys_exit_io_uring_enter, S(REAP), NULL },
	{ ST_EV_sys_enter_io_getevents, S(REAP), NULL },
	{ ST_EV_sys_exit_io_getevents, S(REAP), NULL },
	{ ST_EV_sched_switch, 0, "runq culprits" },
	{ ST_EV_sched_wakeup, 0, "runq culprits" },
	{ ST_EV_svc_run_delay, S(SVC_RUNQ), NULL },
	{ ST_EV_contention_begin, S(LOCK), NULL },
	{ ST_EV_contention_end, S(LOCK), NULL },
	{ ST_EV_block_bio_held, S(THROTTLE), NULL },
	{ ST_EV_balance_dirty_pages, S(DIRTY), NULL },
	{ ST_EV_mm_vmscan_direct_reclaim_begin, S(RECLAIM), NULL },
	{ ST_EV_mm_vmscan_direct_reclaim_end, S(RECLAIM), NULL },
	{ ST_EV_mm_vmscan_memcg_reclaim_begin, S(RECLAIM), NULL },
	{ ST_EV_mm_vmscan_memcg_reclaim_end, S(RECLAIM), NULL },
	{ ST_EV_mm_filemap_add_to_page_cache, AN_MISSING_CACHE, NULL },
};
#define NFEEDS (sizeof(feeds) / sizeof(feeds[0]))

/* The reason the metadata gives for event i of feeds[], NULL when it is not missing. */
static const char *reason(const struct an_input *in, size_t i)
{
	char key[96];

	snprintf(key, sizeof(key), "missing.%s", st_builtin_type(feeds[i].type)->name);
	return an_input_meta(in, key);
}

unsigned an_missing_stages(const struct an_input *in)
{
	unsigned lost = 0, kept = 0;

	for (size_t i = 0; i < NFEEDS; i++) {
		if (reason(in, i))
			lost |= feeds[i].stages;
		else
			kept |= feeds[i].stages;
	}
	return lost & ~kept;
}

void an_missing_print(const struct an_input *in, const char *prefix, FILE *out)
{
	char shown[TEXT_SHOWN_MAX];
	int n = 0;

	for (size_t i = 0; i < NFEEDS; i++) {
		const char *why = reason(in, i);
		int k = 0;

		if (!why)
			continue;
		if (!n++)
			fprintf(out, "%snot recorded on this kernel:", prefix);
		else
			fputc(';', out);
		fprintf(out, " %s (%s):", st_builtin_type(feeds[i].type)->name,
			text_shown(why, shown, sizeof(shown)));
		for (unsigned s = 0; s < AN_ST_SPAN0; s++)
			if (feeds[i].stages & 1u << s)
				fprintf(out, "%s %s", k++ ? "," : "", an_stage_name(NULL, s));
		if (feeds[i].stages & AN_MISSING_CACHE)
			fprintf(out, "%s cache", k++ ? "," : "");
		if (feeds[i].also)
			fprintf(out, "%s %s", k ? "," : "", feeds[i].also);
	}
	if (n)
		fputc('\n', out);
}
