/* SPDX-License-Identifier: MIT */
/*
 * st-analyze on a built trace with the why events: the per-I/O list's cause
 * columns and cache, the summary's cause stages, --by cache, --why, and a
 * one-line error for each bad use. The trace is written here with
 * libsttrace's writer; every expected figure is worked out by hand from the
 * timestamps below (in ns; the reports print us).
 *
 *   A  pread  1000000..1006000, preempted by "hog" 1002000..1005000:
 *      runq 3.000, other 3.000; buffered, no page added: hit
 *   B  read   2000000..2002000, added pages at 2000500: other 2.000; miss
 *   D  pread  3000000..3001100, direct (fs begin 3000100), its bio served
 *      3000400..3001000: other 1.100; direct
 *   C  pread  4000000..4052000, direct from 4000100, its bio held back by
 *      blk-throttle until 4050100 (cgroup 1234): throttle 50.000; woken at
 *      4051000 by the worker, on a CPU at 4051500: runq 0.500 (the worker
 *      held it); other 52.000 - 50.500 = 1.500; direct
 *   E  pwrite 5000000..5006000, a mutex waited for 5001000..5005000:
 *      lock 4.000, other 2.000; none
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/lib/cause.h"
#include "tests/check.h"
#include "tests/analyze/events.h"

#define APP	42
#define WORKER	7
#define HOG	99
#define THROTL	55
#define DEV	(7u << 20)

static struct st_writer *w;

static void put(struct st_event_header *h, uint16_t type, uint16_t size, uint64_t ts, uint32_t tid)
{
	h->type = type;
	h->size = size;
	h->ts = ts;
	h->pid = h->tid = tid;
	st_writer_append(w, h, size);
}

static void sys(uint16_t type, uint64_t ts)
{
	struct st_ev_sys_enter e = { .p = { .fd = 3, .count = 4096, .offset = 8192 } };
	struct st_ev_sys_exit x = { .p = { .ret = 4096 } };

	if ((st_event_kind(type) & ST_KIND_MASK) == ST_KIND_SYS_ENTER)
		put(&e.h, type, sizeof(e), ts, APP);
	else
		put(&x.h, type, sizeof(x), ts, APP);
}

static void sw(uint64_t ts, uint32_t prev, uint32_t state, uint32_t next, const char *prev_comm,
	       const char *next_comm)
{
	struct st_ev_sched_switch e = { .p = { .prev_tid = prev, .next_tid = next,
					       .prev_state = state, .next_pid = next } };

	strncpy(e.p.prev_comm, prev_comm, sizeof(e.p.prev_comm) - 1);
	strncpy(e.p.next_comm, next_comm, sizeof(e.p.next_comm) - 1);
	put(&e.h, ST_EV_sched_switch, sizeof(e), ts, prev);
}

static void bio(uint64_t ts, uint32_t tid, uint64_t id, uint32_t opf)
{
	struct st_ev_block_bio e = { .p = { .bio = id, .sector = 16, .dev = DEV, .nr_sector = 8,
					    .opf = opf } };

	put(&e.h, ST_EV_block_bio_queue, sizeof(e), ts, tid);
}

static void dio_begin(uint64_t ts)
{
	struct st_ev_fs_io e = { .p = { .ino = 12, .pos = 8192, .count = 4096, .dev = 8 << 20 } };

	put(&e.h, ST_EV_iomap_dio_rw_begin, sizeof(e), ts, APP);
}

/* Request rq of bio b: inserted 50 ns before its issue, completed by the worker. */
static void request(uint64_t issue, uint64_t done, uint64_t rq, uint64_t b)
{
	struct st_ev_block_rq_issue e = { .p = { .rq = rq, .dev = DEV, .opf = ST_OP_READ,
						 .nr_sector = 8, .nr_bios = 1, .bios = { b } } };

	put(&e.h, ST_EV_block_rq_insert, sizeof(struct st_ev_block_rq), issue - 50, WORKER);
	put(&e.h, ST_EV_block_rq_issue, sizeof(e), issue, WORKER);
	put(&e.h, ST_EV_block_rq_complete, sizeof(struct st_ev_block_rq_complete), done, WORKER);
}

/* I/O D: a direct read with its bio, which tells that thread uses the device. */
static void direct_read(void)
{
	sys(ST_EV_sys_enter_pread64, 3000000);
	dio_begin(3000100);
	bio(3000200, APP, 0xb0, ST_OP_READ);
	request(3000400, 3001000, 0x100, 0xb0);
	sys(ST_EV_sys_exit_pread64, 3001100);
}

static int write_trace(const char *path, int why)
{
	struct st_ev_page_cache pc = { .p = { .ino = 5, .dev = 8 << 20, .nr_pages = 1 } };
	struct st_ev_block_bio_held held = { .p = { .bio = 0xb1, .blkcg = 1234, .dev = DEV } };
	struct st_ev_sched_wakeup wake = { .p = { .woken_tid = APP } };
	struct st_ev_lock_contention lk = { .p = { .lock = 0xa0, .flags = AN_LCB_MUTEX } };

	if (!(w = builtin_writer(path, NULL)))
		return -1;
	st_writer_set_meta(w, "dev.7:0", "name=loop0;sector_size=512");
	st_writer_set_meta(w, "pid.42", "fio");
	st_writer_set_meta(w, "blkcg.1234", "/blkio/slow");
	st_writer_set_meta(w, "blkcg.1234.limit", "read_iops 7:0 250");
	if (!why) {
		direct_read();
		return st_writer_close(w, NULL, 0);
	}
	sys(ST_EV_sys_enter_pread64, 1000000);
	sw(1002000, APP, 0, HOG, "fio", "hog");
	sw(1005000, HOG, 0, APP, "hog", "fio");
	sys(ST_EV_sys_exit_pread64, 1006000);
	sys(ST_EV_sys_enter_read, 2000000);
	put(&pc.h, ST_EV_mm_filemap_add_to_page_cache, sizeof(pc), 2000500, APP);
	sys(ST_EV_sys_exit_read, 2002000);
	direct_read();
	sys(ST_EV_sys_enter_pread64, 4000000);
	dio_begin(4000100);
	bio(4050100, THROTL, 0xb1, ST_OP_READ | ST_F_HELD);
	put(&held.h, ST_EV_block_bio_held, sizeof(held), 4050100, THROTL);
	request(4050200, 4051000, 0x100, 0xb1);
	put(&wake.h, ST_EV_sched_wakeup, sizeof(wake), 4051000, WORKER);
	sw(4051500, WORKER, 1, APP, "kworker", "fio");
	sys(ST_EV_sys_exit_pread64, 4052000);
	sys(ST_EV_sys_enter_pwrite64, 5000000);
	put(&lk.h, ST_EV_contention_begin, sizeof(lk), 5001000, APP);
	lk.p.flags = 0;
	put(&lk.h, ST_EV_contention_end, sizeof(lk), 5005000, APP);
	sys(ST_EV_sys_exit_pwrite64, 5006000);
	return st_writer_close(w, NULL, 0);
}

static char dir[] = "/tmp/an-why.XXXXXX";
static char out_text[65536], err_text[4096];

static void slurp(const char *name, char *buf, size_t cap)
{
	char path[96];
	FILE *f;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "r"))) {
		n = fread(buf, 1, cap - 1, f);
		fclose(f);
	}
	buf[n] = 0;
}

/* st-analyze ARGS: its exit status, its output in out_text and its errors in err_text. */
static int run(const char *args)
{
	char cmd[512];
	int st;

	snprintf(cmd, sizeof(cmd), "cd %s && st-analyze %s >out 2>err", dir, args);
	st = system(cmd);
	slurp("out", out_text, sizeof(out_text));
	slurp("err", err_text, sizeof(err_text));
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Index of column `name` in a CSV header line, -1 if absent. */
static int column(const char *header, const char *name)
{
	size_t len = strlen(name);
	int k = 0;

	for (const char *p = header; *p; k++) {
		if (!strncmp(p, name, len) && (p[len] == ',' || p[len] == '\n' || !p[len]))
			return k;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return -1;
}

/* Field k of a CSV line (no quoted fields before it) into buf. */
static const char *field(const char *line, int k, char *buf, size_t cap)
{
	for (; k > 0 && line; k--)
		if ((line = strchr(line, ',')))
			line++;
	if (!line || k < 0)
		return "";
	snprintf(buf, cap, "%.*s", (int)strcspn(line, ",\n"), line);
	return buf;
}

/* The first line of out_text whose columns k1 and k2 (-1: any) are v1 and v2, NULL if none. */
static const char *row_where(int k1, const char *v1, int k2, const char *v2)
{
	char buf[128];

	for (const char *l = strchr(out_text, '\n'); l && *++l; l = strchr(l, '\n'))
		if (!strcmp(field(l, k1, buf, sizeof(buf)), v1) &&
		    (k2 < 0 || !strcmp(field(l, k2, buf, sizeof(buf)), v2)))
			return l;
	return NULL;
}

/* One line on standard error naming `what`, nothing on standard output, exit `status`. */
static void check_error(const char *args, int status, const char *what, const char *name)
{
	int st = run(args);
	const char *nl = strchr(err_text, '\n');

	check(st == status && nl && !nl[1] && strstr(err_text, what) && !out_text[0], name,
	      "status %d, errors '%s'", st, err_text);
}

static void test_list(void)
{
	static const char *const cols[] = { "runq_us", "svc_runq_us", "lock_us", "throttle_us",
					    "dirty_us", "reclaim_us", "other_us", "cache" };
	/* the file holds no dirty pause nor reclaim: not measured, empty (never 0) */
	static const char *const want_c[] = { "0.500", "0.000", "0.000", "50.000", "", "",
					      "1.500", "direct" };
	static const char *const want_e[] = { "0.000", "0.000", "4.000", "0.000", "", "",
					      "2.000", "none" };
	int st = run("why.sttrace --quantile 1 --top 100 --csv"), k[8], total = column(out_text, "total_us");
	const char *c = row_where(total, "52.000", -1, NULL), *e;
	char buf[64], got[256] = "";
	int ok = st == 0 && c;

	for (unsigned i = 0; i < 8; i++)
		k[i] = column(out_text, cols[i]);
	for (unsigned i = 0; ok && i < 8; i++) {
		field(c, k[i], buf, sizeof(buf));
		snprintf(got + strlen(got), sizeof(got) - strlen(got), " %s=%s", cols[i], buf);
		ok = ok && !strcmp(buf, want_c[i]);
	}
	check(ok, "analyze.why.list_columns", "status %d,%s", st, got);
	/* A is 6.000 too: E is the write */
	e = row_where(total, "6.000", column(out_text, "op"), "write");
	ok = e != NULL;
	for (unsigned i = 0; ok && i < 8; i++)
		ok = !strcmp(field(e, k[i], buf, sizeof(buf)), want_e[i]);
	check(ok, "analyze.why.list_lock", "write row %s", e ? "differs" : "missing");

	/* a file without the why events: the same columns, the causes and cache empty */
	st = run("old.sttrace --quantile 1 --csv");
	total = column(out_text, "total_us");
	c = row_where(column(out_text, "runq_us"), "", column(out_text, "cache"), "");
	check(st == 0 && total >= 0 && column(out_text, "runq_us") == k[0] &&
	      column(out_text, "cache") == k[7] && c && c == strchr(out_text, '\n') + 1 &&
	      !row_where(column(out_text, "runq_us"), "0.000", -1, NULL),
	      "analyze.why.list_old_file", "status %d", st);
}

static void test_summary_and_cache(void)
{
	char buf[64];
	int st = run("why.sttrace --csv --by op"), stage, n, group;
	const char *r;

	stage = column(out_text, "stage");
	n = column(out_text, "n");
	group = column(out_text, "group");
	r = row_where(stage, "throttle", -1, NULL);
	/* 4 reads (A, B, C, D) have a throttle stage, 0 for all but C */
	check(st == 0 && r && !strcmp(field(r, group, buf, sizeof(buf)), "read") &&
	      !strcmp(field(r, n, buf, sizeof(buf)), "4"), "analyze.why.summary_stage",
	      "status %d, %s", st, r ? "wrong group or count" : "no throttle row");

	st = run("why.sttrace --csv --by cache");
	group = column(out_text, "group");
	stage = column(out_text, "stage");
	int ios = column(out_text, "ios"), ok = st == 0;
	static const char *const classes[] = { "direct", "hit", "miss", "none" };
	static const char *const counts[] = { "2", "1", "1", "1" };

	for (unsigned i = 0; ok && i < 4; i++)
		ok = (r = row_where(group, classes[i], stage, "total")) &&
		     !strcmp(field(r, ios, buf, sizeof(buf)), counts[i]);
	check(ok, "analyze.why.by_cache", "status %d:\n%s", st, out_text);
}

static void test_why(void)
{
	int st = run("why.sttrace --why --csv --by op --quantile 1");
	int kind = column(out_text, "kind"), name = column(out_text, "name"), us = column(out_text, "us");
	int ios = column(out_text, "ios");
	static const char *const rows[][3] = {
		/* the 4 reads: runq 3.000 + 0.500, throttle 50.000, other 3 + 2 + 1.1 + 1.5 */
		{ "cause", "runq", "3.500" }, { "cause", "throttle", "50.000" },
		{ "cause", "other", "7.600" }, { "stage", "total", "61.100" },
		{ "runq_task", "hog", "3.000" }, { "runq_task", "kworker", "0.500" },
		{ "throttle_cgroup", "/blkio/slow (read_iops 7:0 250)", "50.000" },
		/* the write */
		{ "cause", "lock", "4.000" }, { "lock_kind", "mutex", "4.000" },
	};
	char a[64], b[64], c[64];
	int ok = st == 0;

	for (unsigned i = 0; ok && i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *r;

		ok = 0;
		for (r = strchr(out_text, '\n'); r && *++r; r = strchr(r, '\n'))
			if (!strcmp(field(r, kind, a, sizeof(a)), rows[i][0]) &&
			    !strcmp(field(r, name, b, sizeof(b)), rows[i][1]) &&
			    !strcmp(field(r, us, c, sizeof(c)), rows[i][2]) &&
			    !strcmp(field(r, ios, a, sizeof(a)), i < 7 ? "4" : "1"))
				ok = 1;
		if (!ok)
			printf("missing row %s,%s,%s\n", rows[i][0], rows[i][1], rows[i][2]);
	}
	check(ok, "analyze.why.report", "status %d:\n%s%s", st, out_text, err_text);
	st = run("why.sttrace --why");
	check(st == 0 && strstr(out_text, "throttle") && strstr(out_text, "hog"),
	      "analyze.why.report_text", "status %d", st);
}

int main(void)
{
	char path[96];

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/why.sttrace", dir);
	check(!write_trace(path, 1), "analyze.why.trace", "cannot write %s", path);
	snprintf(path, sizeof(path), "%s/old.sttrace", dir);
	check(!write_trace(path, 0), "analyze.why.old_trace", "cannot write %s", path);
	test_list();
	test_summary_and_cache();
	test_why();
	check_error("old.sttrace --why", 1, "--why", "analyze.why.error_no_events");
	check_error("old.sttrace --by cache", 1, "--by cache", "analyze.why.error_by_cache");
	check_error("why.sttrace --by nonsense", 2, "--by nonsense", "analyze.why.error_by");
	check_error("why.sttrace --why --html x.html", 2, "--why", "analyze.why.error_html");
	check_error("why.sttrace --why --quantile 0", 2, "--quantile", "analyze.why.error_quantile");
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path))
		return 1;
	return check_failures != 0;
}
