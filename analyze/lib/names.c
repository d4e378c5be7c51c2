/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/idmap.h"
#include "analyze/lib/names.h"

/* Key spaces share one map; the top byte says which kind a key is. */
#define K_PID	(1ull << 56)
#define K_FD	(2ull << 56)	/* the metadata's fd table: before the trace's first open or close */
#define K_INODE	(3ull << 56)
#define K_DEV	(4ull << 56)
#define K_OPEN	(5ull << 56)	/* tid -> path an openat entry passed (files before 1.3), not yet used */
#define K_PATH	(6ull << 56)	/* a path's hash -> the path (an opened file without an inode) */
#define K_CGROUP (7ull << 56)	/* cgroup v2 id -> its path (kernfs ids stay far below 2^56) */
#define K_BLKCG	(8ull << 56)	/* I/O controller cgroup id -> its path */
#define K_BLKCG_LIMIT (9ull << 56)	/* I/O controller cgroup id -> its limits */
#define KEY_BITS ((1ull << 56) - 1)

/* A value of `bound`: the trace closed the fd (or opened something it cannot name). */
#define UNBOUND	(AN_NONE - 1)

struct an_names {
	struct an_idmap map;	/* key -> index into strs */
	struct an_idmap bound;	/* K_FD keys -> index into strs, or UNBOUND: the trace's opens and closes */
	char **strs;		/* a file's id (an_io.file) is its index + 1 */
	uint32_t nstrs, cap;
};

int an_names_new(struct an_names **np)
{
	struct an_names *n = calloc(1, sizeof(*n));

	if (!n || an_idmap_init(&n->map, 256) || an_idmap_init(&n->bound, 64)) {
		if (n)
			an_idmap_free(&n->map);
		free(n);
		return -1;
	}
	*np = n;
	return 0;
}

void an_names_free(struct an_names *n)
{
	uint32_t i;

	if (!n)
		return;
	for (i = 0; i < n->nstrs; i++)
		free(n->strs[i]);
	free(n->strs);
	an_idmap_free(&n->map);
	an_idmap_free(&n->bound);
	free(n);
}

/* A new string; its index, or AN_NONE when out of memory. */
static uint32_t add_str(struct an_names *n, const char *s, size_t len)
{
	char *copy;

	if (n->nstrs == n->cap) {
		uint32_t cap = n->cap ? n->cap * 2 : 64;
		char **p = realloc(n->strs, cap * sizeof(*p));

		if (!p)
			return AN_NONE;
		n->strs = p;
		n->cap = cap;
	}
	if (!(copy = strndup(s, len)))
		return AN_NONE;
	n->strs[n->nstrs] = copy;
	return n->nstrs++;
}

static int same_str(const char *a, const char *s, size_t len)
{
	return a && strlen(a) == len && !memcmp(a, s, len);
}

/* The name of key becomes s; its index, or AN_NONE when out of memory. */
static uint32_t set_name(struct an_names *n, uint64_t key, const char *s, size_t len)
{
	uint32_t i = an_idmap_get(&n->map, key);
	char *copy;

	if (i != AN_NONE) {
		if (same_str(n->strs[i], s, len))
			return i;
		if (!(copy = strndup(s, len)))
			return AN_NONE;
		free(n->strs[i]);
		n->strs[i] = copy;
		return i;
	}
	i = add_str(n, s, len);
	if (i != AN_NONE && an_idmap_put(&n->map, key, i))
		return AN_NONE;		/* the string stays, unnamed, until an_names_free */
	return i;
}

static const char *get_name(const struct an_names *n, uint64_t key)
{
	uint32_t i = an_idmap_get(&n->map, key);

	return i == AN_NONE ? NULL : n->strs[i];
}

/* One string per distinct path however often it is opened (probing past a hash collision). */
static uint32_t intern_path(struct an_names *n, const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t i;
	size_t k;

	for (k = 0; k < len; k++)
		h = (h ^ (uint8_t)s[k]) * 0x100000001b3ull;
	for (;; h++) {
		i = an_idmap_get(&n->map, K_PATH | (h & KEY_BITS));
		if (i == AN_NONE)
			return set_name(n, K_PATH | (h & KEY_BITS), s, len);
		if (same_str(n->strs[i], s, len))
			return i;
	}
}

static uint64_t mkdev(unsigned major, unsigned minor)
{
	return ((uint64_t)major << 20) | minor;
}

/*
 * The low 56 bits hold the inode number mixed with the device: inodes of one
 * device never share a key (the top byte is the key's kind).
 */
static uint64_t inode_key(uint64_t dev, uint64_t ino)
{
	return K_INODE | (((dev * 0x9e3779b97f4a7c15ull) ^ ino) & KEY_BITS);
}

/* pid and fd of an fd's binding; an fd is a C int, the 24 bits any kernel's limit fits in. */
static uint64_t fd_key(uint64_t pid, uint64_t fd)
{
	return pid << 24 | (fd & 0xffffff);
}

/* One metadata key: pid.P, fd.P.F, inode.MAJ:MIN.INO, dev.MAJ:MIN, cgroup.ID, blkcg.ID[.limit]. */
static int load_key(struct an_names *n, const char *key, const char *val)
{
	unsigned a, b;
	int end = 0;
	uint64_t x, y;
	const char *p;

	uint64_t k;
	size_t len = strlen(val);

	if (!strncmp(key, "pid.", 4) && sscanf(key + 4, "%" SCNu64, &x) == 1)
		k = K_PID | x;
	else if (sscanf(key, "fd.%" SCNu64 ".%" SCNu64, &x, &y) == 2)
		k = K_FD | fd_key(x, y);
	else if (sscanf(key, "inode.%u:%u.%" SCNu64, &a, &b, &y) == 3)
		k = inode_key(mkdev(a, b), y);
	else if (!strncmp(key, "cgroup.", 7) && sscanf(key + 7, "%" SCNu64, &x) == 1)
		k = K_CGROUP | (x & KEY_BITS);
	else if (!strncmp(key, "blkcg.", 6) && sscanf(key + 6, "%" SCNu64 "%n", &x, &end) == 1 &&
		 (!key[6 + end] || !strcmp(key + 6 + end, ".limit")))
		k = (key[6 + end] ? K_BLKCG_LIMIT : K_BLKCG) | (x & KEY_BITS);
	else if (sscanf(key, "dev.%u:%u", &a, &b) == 2 && (p = strstr(val, "name="))) {
		k = K_DEV | mkdev(a, b);
		val = p + 5;
		len = strcspn(val, ";");
	} else {
		return 0;
	}
	return set_name(n, k, val, len) == AN_NONE ? -1 : 0;
}

int an_names_load_meta(struct an_names *n, const struct st_reader *r)
{
	size_t i, count = st_meta_count(r);
	const char *k, *v;

	for (i = 0; i < count; i++)
		if (!st_meta_at(r, i, &k, &v) && load_key(n, k, v))
			return -1;
	return 0;
}

void an_names_rewind(struct an_names *n)
{
	an_idmap_clear(&n->bound);
}

/*
 * The file an open bound its fd to: the inode it opened, named by the path
 * (which names the inode's page-cache I/O too); a path without an inode (a
 * directory, a file of a recording before 1.1) by the path alone; an inode
 * whose path could not be read by the inode, as "ino MAJ:MIN/INO" until an
 * open that read it names it. UNBOUND without either, AN_NONE when out of memory.
 */
static uint32_t opened_file(struct an_names *n, const char *path, size_t len, uint32_t dev, uint64_t ino)
{
	char buf[64];
	uint32_t i;

	if (ino && len)
		return set_name(n, inode_key(dev, ino), path, len);
	if (len)
		return intern_path(n, path, len);
	if (!ino)
		return UNBOUND;
	i = an_idmap_get(&n->map, inode_key(dev, ino));
	if (i != AN_NONE)
		return i;
	snprintf(buf, sizeof(buf), "ino %u:%u/%" PRIu64, dev >> 20, dev & 0xfffff, ino);
	return set_name(n, inode_key(dev, ino), buf, strlen(buf));
}

static void open_exit(struct an_names *n, const struct st_ev_sys_exit_openat *x)
{
	uint32_t at = an_idmap_get(&n->map, K_OPEN | x->h.tid), file;
	const char *path = "";
	size_t len = 0;

	if (x->p.name_len > 1) {
		path = x->p.filename;
		len = strnlen(path, ST_PATH_LEN);
	} else if (!x->p.name_len && at != AN_NONE && n->strs[at]) {
		/* a file before 1.3: the path as the entry read it, empty where it could not */
		path = n->strs[at];
		len = strlen(path);
	}
	if (x->p.ret >= 0) {
		file = opened_file(n, path, len, x->p.dev, x->p.ino);
		if (file != AN_NONE)
			an_idmap_put(&n->bound, K_FD | fd_key(x->h.pid, (uint64_t)x->p.ret), file);
	}
	if (at != AN_NONE) {	/* this entry's path is used: an exit without an entry finds none */
		free(n->strs[at]);
		n->strs[at] = NULL;
	}
}

/* dup2/dup3: newfd names what oldfd names now (nothing, if oldfd names nothing). */
static void dup_enter(struct an_names *n, const struct st_ev_sys_enter *d)
{
	uint32_t file;

	if (d->p.fd < 0 || d->p.count > INT32_MAX || (uint64_t)d->p.fd == d->p.count)
		return;
	file = an_names_fd_file(n, d->h.pid, d->p.fd);
	an_idmap_put(&n->bound, K_FD | fd_key(d->h.pid, d->p.count), file ? file - 1 : UNBOUND);
}

void an_names_event(struct an_names *n, const struct st_event_header *h)
{
	const struct st_ev_task *t = (const void *)h;
	const struct st_ev_sys_enter_openat *o = (const void *)h;
	const struct st_ev_sys_enter *c = (const void *)h;
	uint64_t key;

	/* Names are best effort: running out of memory only loses a label. */
	switch (h->type) {
	case ST_EV_sched_process_exec:
	case ST_EV_sched_process_fork:
		set_name(n, K_PID | h->pid, t->p.comm, strnlen(t->p.comm, ST_COMM_LEN));
		break;
	case ST_EV_sys_enter_openat:
		set_name(n, K_OPEN | h->tid, o->p.filename, strnlen(o->p.filename, ST_PATH_LEN));
		break;
	case ST_EV_sys_exit_openat:
		open_exit(n, (const void *)h);
		break;
	case ST_EV_sys_enter_close:
		if (c->p.fd < 0)
			break;
		key = K_FD | fd_key(h->pid, (uint64_t)c->p.fd);
		/* memory follows the open fds: only a metadata name needs hiding after a close */
		if (an_idmap_get(&n->map, key) == AN_NONE)
			an_idmap_del(&n->bound, key);
		else
			an_idmap_put(&n->bound, key, UNBOUND);
		break;
	case ST_EV_sys_enter_dup2:
	case ST_EV_sys_enter_dup3:
		dup_enter(n, c);
		break;
	}
}

uint32_t an_names_fd_file(const struct an_names *n, uint32_t pid, int64_t fd)
{
	uint32_t i;

	if (fd < 0)
		return 0;
	i = an_idmap_get(&n->bound, K_FD | fd_key(pid, (uint64_t)fd));
	if (i == AN_NONE)
		i = an_idmap_get(&n->map, K_FD | fd_key(pid, (uint64_t)fd));
	return i == AN_NONE || i == UNBOUND ? 0 : i + 1;
}

const char *an_names_comm(const struct an_names *n, uint32_t pid)
{
	const char *s = get_name(n, K_PID | pid);

	return s ? s : "?";
}

const char *an_names_cgroup(const struct an_names *n, const struct an_io *io, char *buf, size_t cap)
{
	uint64_t id = io->charged ? io->charged : io->cgroup;
	const char *s = id ? get_name(n, (io->charged ? K_BLKCG : K_CGROUP) | (id & KEY_BITS)) : NULL;

	if (s)
		return s;
	if (!id)
		return "-";
	snprintf(buf, cap, "%s%" PRIu64, io->charged ? "blkcg " : "", id);
	return buf;
}

const char *an_names_blkcg(const struct an_names *n, uint64_t id, char *buf, size_t cap)
{
	const char *path = get_name(n, K_BLKCG | (id & KEY_BITS));
	const char *limit = get_name(n, K_BLKCG_LIMIT | (id & KEY_BITS));
	char num[24];

	if (!path) {
		snprintf(num, sizeof(num), "%" PRIu64, id);
		path = num;
	}
	if (limit)
		snprintf(buf, cap, "%s (%s)", path, limit);
	else
		snprintf(buf, cap, "%s", path);
	return buf;
}

const char *an_names_dev(const struct an_names *n, uint32_t dev, char *buf, size_t cap)
{
	const char *s = get_name(n, K_DEV | dev);

	if (s)
		return s;
	if (!dev)
		return "-";
	snprintf(buf, cap, "%u:%u", dev >> 20, dev & 0xfffff);
	return buf;
}

const char *an_names_file(const struct an_names *n, const struct an_io *io, char *buf, size_t cap)
{
	const char *s = NULL;

	if (io->ino)
		s = get_name(n, inode_key(io->fs_dev, io->ino));
	if (!s && io->file && io->file <= n->nstrs)
		s = n->strs[io->file - 1];
	if (s)
		return s;
	if (io->ino)
		snprintf(buf, cap, "ino %u:%u/%" PRIu64, io->fs_dev >> 20, io->fs_dev & 0xfffff, io->ino);
	else if (io->fd >= 0)
		snprintf(buf, cap, "fd %u/%d", io->pid, io->fd);
	else
		return "-";
	return buf;
}

uint32_t an_names_dev_by_name(const struct an_names *n, const char *name)
{
	unsigned a, b;
	uint32_t i;

	if (sscanf(name, "%u:%u", &a, &b) == 2)
		return (uint32_t)mkdev(a, b);
	if (!strncmp(name, "/dev/", 5))
		name += 5;
	for (i = 0; i < n->map.mask + 1; i++) {
		uint64_t k = n->map.keys[i];

		if ((k >> 56) == (K_DEV >> 56) && !strcmp(n->strs[n->map.vals[i]], name))
			return (uint32_t)(k & 0xffffffff);
	}
	return 0;
}
