/* SPDX-License-Identifier: MIT */
/*
 * test_meta.c - the recorder's metadata tracker (record/meta.c) learns
 * process names and open files in time order, whatever order the per-CPU
 * batches deliver the records in.
 */
#include "tests/format/unit_util.h"
#include "record/record.h"

static struct st_ev_task task_event(uint16_t type, uint64_t ts, uint32_t pid, const char *comm)
{
	struct st_ev_task e = { .h = { .type = type, .size = sizeof(e), .ts = ts, .pid = pid,
				       .tid = pid } };

	snprintf(e.p.comm, sizeof(e.p.comm), "%s", comm);
	return e;
}

/* The metadata value of `key` in the file the writer made, "" when absent. */
static const char *meta_of(struct st_reader *r, const char *key)
{
	const char *v = st_meta_get(r, key);

	return v ? v : "";
}

/* An exec delivered before the fork that preceded it: the name is the exec's. */
static int test_fork_exec_reordered(void)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = mem_writer(__func__, &m, 0, 0);
	struct rec_meta_tracker *t = rec_meta_tracker_new();
	struct st_ev_task exec = task_event(ST_EV_sched_process_exec, 2000, 100, "dd");
	struct st_ev_task fork = task_event(ST_EV_sched_process_fork, 1000, 100, "sh");
	struct st_reader *r = NULL;
	int bad;

	if (!w || !t)
		return 1;
	rec_meta_track(t, w, &exec.h);
	rec_meta_track(t, w, &fork.h);
	rec_meta_release(t, w, UINT64_MAX);
	rec_meta_tracker_free(t);
	bad = expectf(!st_writer_close(w, NULL, 0), __func__, "close") ||
	      open_mem(__func__, &r, m.data, m.len, 0) ||
	      expectf(!strcmp(meta_of(r, "pid.100"), "dd"), __func__, "pid.100 = '%s', want dd",
		      meta_of(r, "pid.100"));
	st_reader_close(r);
	free(m.data);
	return bad;
}

static struct st_ev_sys_exit_openat open_exit(uint64_t ts, int fd, const char *path, int name_len)
{
	struct st_ev_sys_exit_openat e = { .h = { .type = ST_EV_sys_exit_openat, .size = sizeof(e),
		.ts = ts, .pid = 7, .tid = 8 }, .p = { .ret = fd, .name_len = name_len } };

	snprintf(e.p.filename, sizeof(e.p.filename), "%s", path);
	return e;
}

/*
 * Two opens that got one fd, the later delivered first (they ran on two CPUs):
 * the fd is the later one's; an open whose path the exit could not read
 * (-EFAULT) names nothing, not an empty path.
 */
static int test_openat_reordered(void)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = mem_writer(__func__, &m, 0, 0);
	struct rec_meta_tracker *t = rec_meta_tracker_new();
	struct st_ev_sys_exit_openat first = open_exit(3000, 5, "/data/a", 8);
	struct st_ev_sys_exit_openat later = open_exit(3100, 5, "/data/b", 8);
	struct st_ev_sys_exit_openat unread = open_exit(3200, 6, "", -14);
	struct st_reader *r = NULL;
	int bad;

	if (!w || !t)
		return 1;
	rec_meta_track(t, w, &later.h);
	/* held: nothing taken after 3100 ns is learned before its time comes */
	rec_meta_release(t, w, 3050);
	rec_meta_track(t, w, &first.h);
	rec_meta_track(t, w, &unread.h);
	rec_meta_release(t, w, UINT64_MAX);
	rec_meta_tracker_free(t);
	bad = expectf(!st_writer_close(w, NULL, 0), __func__, "close") ||
	      open_mem(__func__, &r, m.data, m.len, 0) ||
	      expectf(!strcmp(meta_of(r, "fd.7.5"), "/data/b"), __func__,
		      "fd.7.5 = '%s', want /data/b", meta_of(r, "fd.7.5")) ||
	      expectf(!st_meta_get(r, "fd.7.6"), __func__, "fd.7.6 = '%s', want none",
		      meta_of(r, "fd.7.6"));
	st_reader_close(r);
	free(m.data);
	return bad;
}

int main(void)
{
	RUN(test_fork_exec_reordered);
	RUN(test_openat_reordered);
	return check_failures != 0;
}
