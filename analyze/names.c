/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/idmap.h"
#include "analyze/names.h"

/* Key spaces share one map; the top byte says which kind a key is. */
#define K_PID	(1ull << 56)
#define K_FD	(2ull << 56)
#define K_INODE	(3ull << 56)
#define K_DEV	(4ull << 56)
#define K_OPEN	(5ull << 56)	/* tid -> path passed to an openat not yet returned */

struct an_names {
	struct an_idmap map;	/* key -> index into strs */
	char **strs;
	uint32_t nstrs, cap;
};

int an_names_new(struct an_names **np)
{
	struct an_names *n = calloc(1, sizeof(*n));

	if (!n || an_idmap_init(&n->map, 256)) {
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
	free(n);
}

static int set_name(struct an_names *n, uint64_t key, const char *s, size_t len)
{
	uint32_t i = an_idmap_get(&n->map, key);
	char *copy = strndup(s, len);

	if (!copy)
		return -1;
	if (i != AN_NONE) {
		free(n->strs[i]);
		n->strs[i] = copy;
		return 0;
	}
	if (n->nstrs == n->cap) {
		uint32_t cap = n->cap ? n->cap * 2 : 64;
		char **p = realloc(n->strs, cap * sizeof(*p));

		if (!p) {
			free(copy);
			return -1;
		}
		n->strs = p;
		n->cap = cap;
	}
	n->strs[n->nstrs] = copy;
	if (an_idmap_put(&n->map, key, n->nstrs)) {
		free(copy);
		return -1;
	}
	n->nstrs++;
	return 0;
}

static const char *get_name(const struct an_names *n, uint64_t key)
{
	uint32_t i = an_idmap_get(&n->map, key);

	return i == AN_NONE ? NULL : n->strs[i];
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
	return K_INODE | (((dev * 0x9e3779b97f4a7c15ull) ^ ino) & ((1ull << 56) - 1));
}

/* One metadata key: pid.P, fd.P.F, inode.MAJ:MIN.INO, dev.MAJ:MIN. */
static int load_key(struct an_names *n, const char *key, const char *val)
{
	unsigned a, b;
	uint64_t x, y;
	const char *p;

	if (!strncmp(key, "pid.", 4) && sscanf(key + 4, "%" SCNu64, &x) == 1)
		return set_name(n, K_PID | x, val, strlen(val));
	if (sscanf(key, "fd.%" SCNu64 ".%" SCNu64, &x, &y) == 2)
		return set_name(n, K_FD | x << 24 | (y & 0xffffff), val, strlen(val));
	if (sscanf(key, "inode.%u:%u.%" SCNu64, &a, &b, &y) == 3)
		return set_name(n, inode_key(mkdev(a, b), y), val, strlen(val));
	if (sscanf(key, "dev.%u:%u", &a, &b) == 2) {
		p = strstr(val, "name=");
		if (!p)
			return 0;
		p += 5;
		return set_name(n, K_DEV | mkdev(a, b), p, strcspn(p, ";"));
	}
	return 0;
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

void an_names_event(struct an_names *n, const struct st_event_header *h)
{
	const struct st_ev_task *t = (const void *)h;
	const struct st_ev_sys_enter_openat *o = (const void *)h;
	const struct st_ev_sys_exit_openat *x = (const void *)h;
	const char *path;

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
		path = get_name(n, K_OPEN | h->tid);
		if (path && x->p.ret >= 0)
			set_name(n, K_FD | (uint64_t)h->pid << 24 | ((uint64_t)x->p.ret & 0xffffff),
				 path, strlen(path));
		/* the inode's name too: I/O of its page cache is known by inode only */
		if (path && x->p.ino)
			set_name(n, inode_key(x->p.dev, x->p.ino), path, strlen(path));
		break;
	}
}

const char *an_names_comm(const struct an_names *n, uint32_t pid)
{
	const char *s = get_name(n, K_PID | pid);

	return s ? s : "?";
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
	if (!s && io->fd >= 0)
		s = get_name(n, K_FD | (uint64_t)io->pid << 24 | ((uint64_t)io->fd & 0xffffff));
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
