/* SPDX-License-Identifier: MIT */
/*
 * names.h - what the numbers in events stand for: command names of pids,
 * paths of fds, inodes and cgroups, names of devices. Learned from each file's
 * metadata (pid.*, fd.*, inode.*, dev.*, cgroup.*, blkcg.* keys) and from the events that carry
 * them (sched_process_exec/fork, openat, close).
 *
 * An fd names a file from one open to the next open or close of its number:
 * an I/O is charged to the file its fd named when the I/O began (the
 * correlator asks an_names_fd_file() then, and keeps the answer in
 * an_io.file). An open in the trace binds the fd to the path the open was
 * given, or, where the recorder could not read that path, to the inode it
 * opened; a close unbinds it; the metadata's fd.* table (the recorder's view
 * at its end) names an fd only before the trace's first open or close of it.
 */
#ifndef AN_NAMES_H
#define AN_NAMES_H

#include <stddef.h>

#include "analyze/lib/io.h"
#include "format/lib/sttrace.h"

struct an_names;

int an_names_new(struct an_names **n);
void an_names_free(struct an_names *n);
/* Add every name a file's metadata holds; 0 or -1 (out of memory). */
int an_names_load_meta(struct an_names *n, const struct st_reader *r);
/* Learn from one event (built-in layout); other event types are ignored. */
void an_names_event(struct an_names *n, const struct st_event_header *h);
/* 1 if events of this type carry names. Inline: it runs for every event. */
static inline int an_names_wants(unsigned type)
{
	return type == ST_EV_sched_process_exec || type == ST_EV_sched_process_fork ||
	       type == ST_EV_sys_enter_openat || type == ST_EV_sys_exit_openat ||
	       type == ST_EV_sys_enter_close || type == ST_EV_sys_enter_dup2 ||
	       type == ST_EV_sys_enter_dup3;
}
/* Forget the fds' bindings learned from events: a new pass over the trace begins. */
void an_names_rewind(struct an_names *n);
/* The file fd of pid names now, as an an_io.file id; 0 if none is known. */
uint32_t an_names_fd_file(const struct an_names *n, uint32_t pid, int64_t fd);

/* Command name of pid, "?" when unknown. */
const char *an_names_comm(const struct an_names *n, uint32_t pid);
/*
 * The cgroup of an I/O: the one its request was charged to (io->charged) by
 * its path in its I/O controller's hierarchy (metadata blkcg.ID: "blkio:/x"
 * in v1's, "/x" in v2's), else "blkcg ID"; without one, its task's cgroup v2
 * path ("/system.slice"), else the id in decimal; "-" for neither.
 */
const char *an_names_cgroup(const struct an_names *n, const struct an_io *io, char *buf, size_t cap);
/*
 * The cgroup a held-back bio was charged to (block_bio_held's blkcg), in buf:
 * its path (metadata blkcg.ID) and its limits (blkcg.ID.limit) in brackets,
 * else the id in decimal.
 */
const char *an_names_blkcg(const struct an_names *n, uint64_t id, char *buf, size_t cap);
/* Device name ("loop0") or "major:minor"; "-" for 0. */
const char *an_names_dev(const struct an_names *n, uint32_t dev, char *buf, size_t cap);
/* Path of the file an I/O touched (its inode's, else io->file's), else "ino MAJ:MIN/INO" / "fd PID/FD" / "-". */
const char *an_names_file(const struct an_names *n, const struct an_io *io, char *buf, size_t cap);
/* Device (kernel dev_t) named by "loop0", "/dev/loop0" or "7:0"; 0 if none. */
uint32_t an_names_dev_by_name(const struct an_names *n, const char *name);

#endif /* AN_NAMES_H */
