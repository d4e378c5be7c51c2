/* SPDX-License-Identifier: MIT */
/*
 * write-strings OUT COMM PATH: a trace whose strings hold the bytes given,
 * valid UTF-8 or not, as a recorder stores what the kernel hands it: a
 * sched_process_exec record with comm COMM (cut to 15 bytes), an openat
 * record with filename PATH, and metadata pid.100 = COMM, fd.100.3 = PATH,
 * and the key "inode.254:0.PATH" = PATH. For t_stformat_strings.sh.
 */
#include <stdio.h>
#include <string.h>

#include "format/lib/sttrace.h"

static int write_trace(const char *out, const char *comm, const char *path)
{
	struct st_ev_task exec = { { ST_EV_sched_process_exec, sizeof(exec), 0, 1000, 100, 100 }, { 0 } };
	struct st_ev_sys_enter_openat open = {
		{ ST_EV_sys_enter_openat, sizeof(open), 0, 2000, 100, 100 }, { -100, 0, { 0 } }
	};
	char key[64 + sizeof(open.p.filename)];
	struct st_writer *w;
	int err = st_writer_open(&w, out, NULL);

	if (!w)
		return 1;
	strncpy(exec.p.comm, comm, sizeof(exec.p.comm) - 1);
	strncpy(open.p.filename, path, sizeof(open.p.filename) - 1);
	snprintf(key, sizeof(key), "inode.254:0.%s", path);
	if (!err)
		err = st_writer_add_builtin_types(w);
	if (!err)
		err = st_writer_set_meta(w, "pid.100", comm) || st_writer_set_meta(w, "fd.100.3", path) ||
		      st_writer_set_meta(w, key, path);
	if (!err)
		err = st_writer_append(w, &exec, sizeof(exec)) || st_writer_append(w, &open, sizeof(open));
	if (err && w)
		fprintf(stderr, "write-strings: %s: %s\n", out, st_writer_errmsg(w));
	return st_writer_close(w, NULL, 0) || err;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: write-strings OUT COMM PATH\n");
		return 2;
	}
	return write_trace(argv[1], argv[2], argv[3]) ? 1 : 0;
}
