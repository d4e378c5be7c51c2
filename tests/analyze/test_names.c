/* SPDX-License-Identifier: MIT */
/*
 * An I/O is charged to the file its fd named when the I/O began: files of
 * hand-built events (opens, reads, closes of reused fd numbers, and the
 * metadata's fd table as st-record writes it at the end of a recording) go
 * through the input layer, the names and the correlator as st-analyze runs
 * them, and each I/O's file is read back the way the reports print it, after
 * the pass, when every fd is in its final state. Likewise each I/O's cgroup,
 * as --by cgroup labels it from the metadata's cgroup.* table.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/lib/correlate.h"
#include "analyze/lib/input.h"
#include "analyze/lib/names.h"
#include "analyze/lib/report.h"
#include "tests/analyze/collect.h"
#include "tests/analyze/events.h"
#include "tests/check.h"

#define EFAULT_LEN	(-14)	/* name_len of a path the recorder could not read */

static void put_open(struct st_writer *w, uint64_t ts, int fd, const char *path, int name_len,
		     uint64_t ino)
{
	struct st_ev_sys_enter_openat e;
	struct st_ev_sys_exit_openat x;

	head(&e.h, ST_EV_sys_enter_openat, sizeof(e), ts);
	memset(&e.p, 0, sizeof(e.p));
	e.p.dfd = -100;
	/* a file before 1.3 has the path at the entry only: name_len 0 */
	if (!name_len)
		snprintf(e.p.filename, sizeof(e.p.filename), "%s", path);
	st_writer_append(w, &e, sizeof(e));
	head(&x.h, ST_EV_sys_exit_openat, sizeof(x), ts + 100);
	memset(&x.p, 0, sizeof(x.p));
	x.p.ret = fd;
	x.p.ino = ino;
	x.p.dev = ino ? 7u << 20 : 0;
	x.p.name_len = name_len;
	if (name_len > 0)
		snprintf(x.p.filename, sizeof(x.p.filename), "%s", path);
	st_writer_append(w, &x, sizeof(x));
}

/*
 * A read of fd by a task of cgroup, entry at ts (the I/O's start), exit 1 us
 * later; the entry record is enter_size bytes (less: a file before 1.4).
 */
static void put_read_in(struct st_writer *w, uint64_t ts, int fd, uint64_t cgroup, uint16_t enter_size)
{
	struct st_ev_sys_enter e;
	struct st_ev_sys_exit x;

	head(&e.h, ST_EV_sys_enter_read, enter_size, ts);
	e.p = (struct st_sys_enter){ .fd = fd, .count = 4096, .offset = -1, .cgroup = cgroup };
	st_writer_append(w, &e, enter_size);
	head(&x.h, ST_EV_sys_exit_read, sizeof(x), ts + 1000);
	x.p.ret = 4096;
	st_writer_append(w, &x, sizeof(x));
}

static void put_read(struct st_writer *w, uint64_t ts, int fd)
{
	put_read_in(w, ts, fd, 0, sizeof(struct st_ev_sys_enter));
}

/* An io_uring read submitted by a task of cgroup at ts, completed 1 us later. */
static void put_uring_read(struct st_writer *w, uint64_t ts, uint64_t cgroup)
{
	struct st_ev_uring e;

	head(&e.h, ST_EV_io_uring_submit_req, sizeof(e), ts);
	e.p = (struct st_uring){ .req = 0xffff888000001000, .opcode = 22, .fd = 4, .cgroup = cgroup };
	st_writer_append(w, &e, sizeof(e));
	head(&e.h, ST_EV_io_uring_complete, sizeof(e), ts + 1000);
	e.p = (struct st_uring){ .req = 0xffff888000001000, .res = 4096, .fd = -1 };
	st_writer_append(w, &e, sizeof(e));
}

static void put_close(struct st_writer *w, uint64_t ts, int fd)
{
	struct st_ev_sys_enter e;

	head(&e.h, ST_EV_sys_enter_close, sizeof(e), ts);
	e.p = (struct st_sys_enter){ .fd = fd, .offset = -1 };
	st_writer_append(w, &e, sizeof(e));
}

/* dup2(oldfd, newfd) */
static void put_dup2(struct st_writer *w, uint64_t ts, int oldfd, int newfd)
{
	struct st_ev_sys_enter e;

	head(&e.h, ST_EV_sys_enter_dup2, sizeof(e), ts);
	e.p = (struct st_sys_enter){ .fd = oldfd, .count = (uint64_t)newfd, .offset = -1 };
	st_writer_append(w, &e, sizeof(e));
}

/*
 * The file of each I/O (by_cgroup: its --by cgroup label), in the order the
 * I/Os began, joined by " | ", after `passes` passes over the file (the
 * names of the last pass); blocks: the events read a block at a time into
 * an_corr_events(), which keeps the names itself, as st-analyze's passes do.
 */
static void labels_of(char *path, int passes, int by_cgroup, int blocks, char *buf, size_t cap)
{
	static uint64_t block[2 * ST_CURSOR_FILL_MIN / 8];
	size_t used;
	int ret;
	const struct st_event_header *ev;
	struct an_names *names;
	struct an_input *in;
	struct an_corr *c;
	char err[256], tmp[128];
	size_t len = 0;
	int i, p;

	an_names_new(&names);
	if (an_input_open(&in, &path, 1, names, err, sizeof(err))) {
		printf("input: %s\n", err);
		exit(1);
	}
	for (p = 0; p < passes; p++) {
		nout = 0;
		if (an_input_start(in, 0, UINT64_MAX, err, sizeof(err))) {
			printf("input: %s\n", err);
			exit(1);
		}
		an_corr_new(&c, 0, collect, NULL);
		an_corr_set_names(c, names);
		if (blocks) {
			do {
				ret = an_input_fill(in, block, sizeof(block), &used, err, sizeof(err));
				an_corr_events(c, block, used, names);
			} while (ret > 0);
		}
		while (!blocks && an_input_next(in, &ev, err, sizeof(err)) > 0) {
			if (an_names_wants(ev->type))
				an_names_event(names, ev);
			an_corr_event(c, ev);
		}
		an_corr_finish(c);
		an_corr_free(c);
	}
	buf[0] = 0;
	for (i = 0; i < nout && i < MAX_OUT && len < cap; i++) {
		if (by_cgroup)
			an_group_label(AN_BY_CGROUP, names, "", &out[i], tmp, sizeof(tmp));
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " | " : "",
					by_cgroup ? tmp : an_names_file(names, &out[i], tmp, sizeof(tmp)));
	}
	an_input_close(in);
	an_names_free(names);
}

static void expect_files(char *path, const char *name, const char *want)
{
	char got[1024], blocks_name[128];
	int passes;

	snprintf(blocks_name, sizeof(blocks_name), "%s.blocks", name);
	/* the second pass (st-analyze --quantile may make two) starts from the metadata again */
	for (passes = 1; passes <= 2; passes++) {
		labels_of(path, passes, 0, 0, got, sizeof(got));
		check(!strcmp(got, want), name, "pass %d: got \"%s\", want \"%s\"", passes, got, want);
		labels_of(path, passes, 0, 1, got, sizeof(got));
		check(!strcmp(got, want), blocks_name, "pass %d: got \"%s\", want \"%s\"", passes, got,
		      want);
	}
}

int main(void)
{
	char a[] = "/tmp/an-names-a.XXXXXX";
	struct st_writer *w;

	close(mkstemp(a));

	/*
	 * ld.so reads a library on fd 3 and closes it; fio opens its JSON report
	 * on fd 3 later and writes it at the end, so the recorder's fd table (its
	 * view at the end) says fd 3 is the report. A read of fd 3 between the
	 * close and the next open read nothing the trace names.
	 */
	w = builtin_writer(a, NULL);
	st_writer_set_meta(w, "fd.42.3", "/out/a.json");
	put_open(w, 1000, 3, "/lib/libc.so.6", 15, 11);
	put_read(w, 2000, 3);
	put_close(w, 4000, 3);
	put_read(w, 5000, 3);
	put_open(w, 7000, 3, "/out/a.json", 12, 12);
	put_read(w, 8000, 3);
	st_writer_close(w, NULL, 0);
	expect_files(a, "names.fd_reused", "/lib/libc.so.6 | fd 42/3 | /out/a.json");

	/*
	 * The metadata's fd table names an fd the trace never opens or closes
	 * (opened before the recording: fd 5), and one only until the trace's
	 * first open of it (fd 7): that open's file from then on, even though
	 * the table, written at the end, names the earlier file.
	 */
	w = builtin_writer(a, NULL);
	st_writer_set_meta(w, "fd.42.5", "/data/log");
	st_writer_set_meta(w, "fd.42.7", "/data/old");
	put_read(w, 1000, 7);
	put_read(w, 2000, 5);
	put_open(w, 3000, 7, "/data/new", 10, 21);
	put_read(w, 4000, 7);
	st_writer_close(w, NULL, 0);
	expect_files(a, "names.meta_before_first_open", "/data/old | /data/log | /data/new");

	/*
	 * fio's job process reads a /sys file on fd 7 whose path the recorder
	 * could not read (-EFAULT), closes it, then opens its data file on fd 7:
	 * the /sys read is charged to the inode that open gave, never to the data
	 * file (which the fd table names). Nor is the read after an open of no
	 * inode whose path could not be read. A file before 1.3 carries the path
	 * at the entry only (name_len 0), as the data file's open here.
	 */
	w = builtin_writer(a, NULL);
	st_writer_set_meta(w, "fd.42.7", "/mnt/truth.dat");
	put_open(w, 1000, 7, "", EFAULT_LEN, 6791);
	put_read(w, 2000, 7);
	put_open(w, 4000, 7, "/mnt/truth.dat", 0, 12);
	put_read(w, 5000, 7);
	put_open(w, 7000, 7, "", EFAULT_LEN, 0);
	put_read(w, 8000, 7);
	st_writer_close(w, NULL, 0);
	expect_files(a, "names.unread_path_is_its_inode",
		     "ino 7:0/6791 | /mnt/truth.dat | fd 42/7");

	/*
	 * dd opens its output on fd 3, dup2s it onto fd 1 and closes fd 3: its
	 * writes on fd 1 are the output file's, not what the fd table says fd 1
	 * was (the terminal or a log the shell gave it). A dup2 of an fd that
	 * names nothing leaves newfd naming nothing.
	 */
	w = builtin_writer(a, NULL);
	st_writer_set_meta(w, "fd.42.1", "/tmp/stdout.log");
	put_read(w, 1000, 1);
	put_open(w, 2000, 3, "/data/out.dat", 14, 31);
	put_dup2(w, 3000, 3, 1);
	put_close(w, 3500, 3);
	put_read(w, 4000, 1);
	put_dup2(w, 5000, 9, 1);
	put_read(w, 6000, 1);
	st_writer_close(w, NULL, 0);
	expect_files(a, "names.dup2_hands_on", "/tmp/stdout.log | /data/out.dat | fd 42/1");

	/*
	 * Each I/O is its calling (or submitting) task's cgroup's, labelled by
	 * the path the metadata gives its id; an id the metadata does not name
	 * by the id, an I/O of no known cgroup "-". Two ids of one path (the
	 * group removed and made again) share the label, so --by cgroup
	 * groups them together.
	 */
	w = builtin_writer(a, NULL);
	st_writer_set_meta(w, "cgroup.4242", "/fio-a");
	st_writer_set_meta(w, "cgroup.4243", "/fio-a");
	st_writer_set_meta(w, "cgroup.1", "/");
	put_read_in(w, 1000, 3, 4242, sizeof(struct st_ev_sys_enter));
	put_read_in(w, 3000, 3, 4243, sizeof(struct st_ev_sys_enter));
	put_read_in(w, 5000, 3, 1, sizeof(struct st_ev_sys_enter));
	put_read_in(w, 7000, 3, 77, sizeof(struct st_ev_sys_enter));
	put_read_in(w, 9000, 3, 0, sizeof(struct st_ev_sys_enter));
	put_uring_read(w, 11000, 4242);
	st_writer_close(w, NULL, 0);
	{
		char got[512];

		labels_of(a, 1, 1, 0, got, sizeof(got));
		check(!strcmp(got, "/fio-a | /fio-a | / | 77 | - | /fio-a"), "names.cgroup_labels",
		      "got \"%s\"", got);
	}

	/*
	 * A file before 1.4: its entries end before the cgroup (and 1.6's
	 * run_delay after it), which reads as unknown.
	 */
	{
		const struct st_type *read = st_builtin_type(ST_EV_sys_enter_read);
		struct st_type old = *read;
		char got[512];

		old.nfields -= 2;
		old.size -= 2 * sizeof(uint64_t);
		w = builtin_writer(a, &old);
		st_writer_set_meta(w, "cgroup.4242", "/fio-a");
		put_read_in(w, 1000, 3, 4242, old.size);
		st_writer_close(w, NULL, 0);
		labels_of(a, 1, 1, 0, got, sizeof(got));
		check(!strcmp(got, "-"), "names.cgroup_before_1_4", "got \"%s\"", got);
	}

	unlink(a);
	return check_failures != 0;
}
