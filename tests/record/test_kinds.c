/* SPDX-License-Identifier: MIT */
/*
 * test_kinds.c - a type added to the event table is classified everywhere
 * from its row alone. kind_table.h adds a made-up data call (ids 200/201,
 * nowhere in the code); this program links libsttrace's schema built with
 * it (kind_table.c) and the objects the programs link, unchanged: the
 * correlator makes one I/O of the call, st-format's perfetto writer draws
 * it as a slice, and the recorder's metadata names the cgroup its entry
 * carries, as they do for pread64.
 */
#include <mntent.h>
#include <sys/stat.h>

#include "tests/record/kind_table.h"
#include "tests/format/unit_util.h"
#include "analyze/lib/correlate.h"
#include "format/st-format/st_format_convert.h"
#include "record/record.h"
#include "tests/analyze/collect.h"

#define ENTER_TS 1000
#define EXIT_TS  3500

/* st-format's error line (format/st-format/st_format.c, which holds main()). */
int sf_error(const char *what, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "st-format: %s: ", what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return SF_BAD;
}

static struct st_ev_sys_enter call_enter(uint64_t cgroup)
{
	return (struct st_ev_sys_enter){ .h = { .type = ST_EV_sys_enter_made_up,
		.size = sizeof(struct st_ev_sys_enter), .ts = ENTER_TS, .pid = 7, .tid = 8 },
		.p = { .fd = 3, .count = 4096, .offset = 8192, .cgroup = cgroup } };
}

static struct st_ev_sys_exit call_exit(void)
{
	return (struct st_ev_sys_exit){ .h = { .type = ST_EV_sys_exit_made_up,
		.size = sizeof(struct st_ev_sys_exit), .ts = EXIT_TS, .pid = 7, .tid = 8 },
		.p = { .ret = 4096 } };
}

/* The table: the rows are there, and every exit's id is its entry's + 1. */
static int test_table(void)
{
	size_t n;
	const struct st_type *t = st_builtin_types(&n);
	int bad = expectf(st_event_kind(ST_EV_sys_enter_made_up) ==
			  st_event_kind(ST_EV_sys_enter_pread64), __func__,
			  "made-up entry kind %#x, pread64's %#x", st_event_kind(ST_EV_sys_enter_made_up),
			  st_event_kind(ST_EV_sys_enter_pread64));

	for (size_t i = 0; i < n; i++) {
		const struct st_type *enter = st_builtin_type(t[i].id - 1);

		if ((st_event_kind(t[i].id) & ST_KIND_MASK) != ST_KIND_SYS_EXIT)
			continue;
		bad |= expectf(enter && (st_event_kind(enter->id) & ST_KIND_MASK) == ST_KIND_SYS_ENTER &&
			       !strcmp(enter->name + strlen("sys_enter_"), t[i].name + strlen("sys_exit_")),
			       __func__, "%s (%u): id - 1 is %s, not its entry", t[i].name, t[i].id,
			       enter ? enter->name : "no type");
	}
	return bad;
}

/* The correlator: the entry begins an I/O, the exit ends it. */
static int test_correlator(void)
{
	struct st_ev_sys_enter e = call_enter(0);
	struct st_ev_sys_exit x = call_exit();
	struct an_corr *c = NULL;

	if (expectf(!an_corr_new(&c, 0, collect, NULL), __func__, "an_corr_new"))
		return 1;
	an_corr_event(c, &e.h);
	an_corr_event(c, &x.h);
	an_corr_finish(c);
	an_corr_free(c);
	return expectf(an_corr_begins_io(ST_EV_sys_enter_made_up), __func__, "entry begins no I/O") ||
	       expectf(nout == 1, __func__, "%d I/Os, want 1", nout) ||
	       expectf(out[0].syscall == ST_EV_sys_enter_made_up && out[0].ret == 4096 &&
		       out[0].ts[AN_TS_SYS_ENTER] == ENTER_TS && out[0].ts[AN_TS_SYS_EXIT] == EXIT_TS,
		       __func__, "I/O of call %u, ret %" PRId64 ", enter %" PRIu64 ", exit %" PRIu64,
		       out[0].syscall, out[0].ret, out[0].ts[AN_TS_SYS_ENTER], out[0].ts[AN_TS_SYS_EXIT]);
}

/* st-format convert --to perfetto: one complete slice named after the call. */
static int test_perfetto(void)
{
	struct st_ev_sys_enter e = call_enter(0);
	struct st_ev_sys_exit x = call_exit();
	struct sf_convert cv = { .in = __func__, .first_ts = ENTER_TS };
	char *json = NULL;
	size_t len = 0;
	int bad;

	cv.text = open_memstream(&json, &len);
	if (expectf(cv.text && !an_names_new(&cv.names), __func__, "out of memory"))
		return 1;
	bad = sf_convert_perfetto.begin(&cv) || sf_convert_perfetto.event(&cv, &e.h) ||
	      sf_convert_perfetto.event(&cv, &x.h);
	bad |= sf_convert_perfetto.end(&cv);
	fclose(cv.text);
	an_names_free(cv.names);
	bad = expectf(!bad, __func__, "the writer failed") ||
	      expectf(strstr(json, "\"ph\":\"X\",\"name\":\"made_up\",\"pid\":7,\"tid\":8,"
				   "\"ts\":0.000,\"dur\":2.500") != NULL, __func__,
		      "no slice made_up of 2.5 us in %s", json);
	free(json);
	return bad;
}

/* The cgroup2 hierarchy's root: its inode number, 0 when none is mounted. */
static uint64_t cgroup2_root(void)
{
	FILE *mounts = setmntent("/proc/self/mounts", "re");
	struct mntent *m;
	struct stat st;
	uint64_t ino = 0;

	while (mounts && !ino && (m = getmntent(mounts)))
		if (!strcmp(m->mnt_type, "cgroup2") && !stat(m->mnt_dir, &st))
			ino = st.st_ino;
	if (mounts)
		endmntent(mounts);
	return ino;
}

/* The recorder's metadata: the cgroup the entry carries is named (cgroup.ID). */
static int test_meta(void)
{
	uint64_t root = cgroup2_root();
	struct st_ev_sys_enter e = call_enter(root);
	struct mem_sink m = { 0 };
	struct st_writer *w;
	struct rec_meta_tracker *t;
	struct st_reader *r = NULL;
	const char *path;
	char key[40];
	int bad;

	w = mem_writer(__func__, &m, 0, 0);
	t = rec_meta_tracker_new();
	if (!w || !t)
		return 1;
	rec_meta_note_record(t, &e.h);
	rec_meta_cgroups(t, w);
	rec_meta_tracker_free(t);
	snprintf(key, sizeof(key), "cgroup.%" PRIu64, root);
	bad = expectf(!st_writer_close(w, NULL, 0), __func__, "close") ||
	      open_mem(__func__, &r, m.data, m.len, 0);
	path = r ? st_meta_get(r, key) : NULL;
	bad = bad || expectf(path && !strcmp(path, "/"), __func__, "%s = %s, want /", key,
			     path ? path : "(none)");
	st_reader_close(r);
	free(m.data);
	return bad;
}

int main(void)
{
	RUN(test_table);
	RUN(test_correlator);
	RUN(test_perfetto);
	if (cgroup2_root())
		RUN(test_meta);
	else
		printf("SKIP: test_meta: no cgroup2 hierarchy mounted\n");
	return check_failures != 0;
}
