/* SPDX-License-Identifier: MIT */
/*
 * meta.c - the metadata st-record stores: what was run where, the device
 * table, and names for the pids, fds and inodes the events refer to.
 * Key names are the ones every sttrace tool agrees on (spec/sttrace-format.md).
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "record/record.h"

static void meta_setf(struct st_writer *w, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void meta_setf(struct st_writer *w, const char *key, const char *fmt, ...)
{
	char value[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	st_writer_set_meta(w, key, value);
}

/* First line of a small file, without its newline; "" when unreadable. */
static const char *read_small(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, (int)cap, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

static void join_args(char *out, size_t cap, int argc, char **argv)
{
	size_t used = 0;

	out[0] = 0;
	for (int i = 0; i < argc && used < cap; i++)
		used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? " " : "", argv[i]);
}

void rec_meta_static(struct st_writer *w, int argc, char **argv, const struct rec_opts *o)
{
	char line[4096];
	char *json = rec_opts_json(o);
	struct utsname u;

	st_writer_set_meta(w, "tool", REC_TOOL);
	join_args(line, sizeof(line), argc, argv);
	st_writer_set_meta(w, "command_line", line);
	if (json)
		st_writer_set_meta(w, "options", json);
	free(json);
	if (!uname(&u)) {
		st_writer_set_meta(w, "kernel.release", u.release);
		st_writer_set_meta(w, "host.name", u.nodename);
	}
	meta_setf(w, "cpu.count", "%ld", sysconf(_SC_NPROCESSORS_ONLN));
}

uint64_t rec_meta_clock(struct st_writer *w, const char *key)
{
	struct timespec real, mono;

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	meta_setf(w, key, "%lld",
		  (long long)(real.tv_sec - mono.tv_sec) * 1000000000ll +
		  (real.tv_nsec - mono.tv_nsec));
	return (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
}

/* The scheduler in use: the bracketed word of ".. [mq-deadline] none". */
static void current_scheduler(const char *line, char *out, size_t cap)
{
	const char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;

	if (open && close)
		snprintf(out, cap, "%.*s", (int)(close - open - 1), open + 1);
	else
		snprintf(out, cap, "%.63s", line[0] ? line : "none");
}

/* Queue attributes live on the disk; a partition's sysfs dir has none. */
static void queue_attr(const char *name, const char *attr, char *buf, size_t cap)
{
	char path[512];

	snprintf(path, sizeof(path), "/sys/class/block/%s/queue/%s", name, attr);
	if (!read_small(path, buf, cap)[0]) {
		snprintf(path, sizeof(path), "/sys/class/block/%s/../queue/%s", name, attr);
		read_small(path, buf, cap);
	}
}

static void meta_device(struct st_writer *w, const char *name)
{
	char path[512], dev[64], key[80], sector[32], sched_line[256], sched[64], rot[16];
	char model[128];

	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", name);
	if (!read_small(path, dev, sizeof(dev))[0])
		return;
	queue_attr(name, "logical_block_size", sector, sizeof(sector));
	queue_attr(name, "scheduler", sched_line, sizeof(sched_line));
	queue_attr(name, "rotational", rot, sizeof(rot));
	current_scheduler(sched_line, sched, sizeof(sched));
	snprintf(path, sizeof(path), "/sys/class/block/%s/device/model", name);
	read_small(path, model, sizeof(model));
	/* ';' and '=' separate the fields: keep them out of the model string */
	for (char *c = model; *c; c++)
		if (*c == ';' || *c == '=')
			*c = ' ';
	for (size_t n = strlen(model); n && model[n - 1] == ' '; n--)
		model[n - 1] = 0;
	snprintf(key, sizeof(key), "dev.%s", dev);
	meta_setf(w, key, "name=%s;sector_size=%s;scheduler=%s;rotational=%s;model=%s", name,
		  sector[0] ? sector : "512", sched, rot[0] ? rot : "0", model);
}

void rec_meta_devices(struct st_writer *w)
{
	DIR *d = opendir("/sys/class/block");
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			meta_device(w, de->d_name);
	if (d)
		closedir(d);
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

void rec_meta_procs(struct st_writer *w)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char path[300], comm[64], key[32];

	while (d && (de = readdir(d))) {
		if (!all_digits(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (!read_small(path, comm, sizeof(comm))[0])
			continue;
		snprintf(key, sizeof(key), "pid.%.20s", de->d_name);
		st_writer_set_meta(w, key, comm);
	}
	if (d)
		closedir(d);
}

static void meta_inode(struct st_writer *w, const struct stat *st, const char *path)
{
	char key[96];

	snprintf(key, sizeof(key), "inode.%u:%u.%llu", major(st->st_dev), minor(st->st_dev),
		 (unsigned long long)st->st_ino);
	st_writer_set_meta(w, key, path);
}

void rec_meta_open_files(struct st_writer *w, pid_t pid)
{
	char dir[64], path[320], target[PATH_MAX], key[64];
	struct dirent *de;
	struct stat st;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		ssize_t n;

		if (!all_digits(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		snprintf(key, sizeof(key), "fd.%d.%.20s", pid, de->d_name);
		st_writer_set_meta(w, key, target);
		if (!stat(path, &st) && S_ISREG(st.st_mode))
			meta_inode(w, &st, target);
	}
	if (d)
		closedir(d);
}

void rec_meta_paths(struct st_writer *w, const char **paths, size_t n)
{
	struct stat st;

	for (size_t i = 0; i < n; i++)
		if (!stat(paths[i], &st))
			meta_inode(w, &st, paths[i]);
		else
			fprintf(stderr, "%s: %s: cannot stat, not resolved\n", REC_NAME, paths[i]);
}

/* ---- names learned from the events ----------------------------------- */

#define TRACK_SLOTS 4096	/* power of two */

/*
 * The probes hand records over per CPU (bpf/stage.bpf.h), so a fork and
 * the exec after it, or two opens that got one fd, may arrive out of time
 * order when they ran on different CPUs. Records are held until they are
 * older than what any CPU may still have staged (rec_meta_release), in a
 * min-heap by timestamp, and taken in time order. Copies live in a fixed
 * pool: no allocation per record.
 */
#define HELD_MAX 4096		/* past this the oldest goes at once: bounded memory */

/* Room for any record rec_meta_track holds; an openat exit is the largest. */
union held_rec {
	struct st_event_header h;
	struct st_ev_task task;
	struct st_ev_sys_exit_openat open_exit;
};

#define CGROUP_SLOTS 1024	/* power of two; cgroups past 3/4 of it stay unnamed */

/* The cgroup ids of one hierarchy the records name. */
struct id_set {
	uint64_t ids[CGROUP_SLOTS];		/* 0 = free slot */
	uint64_t last;				/* the one noted last: most records repeat it */
	size_t n;
};

struct rec_meta_tracker {
	struct { uint32_t pid; char comm[ST_COMM_LEN]; } names[TRACK_SLOTS];
	struct id_set cgroups;			/* cgroup v2 ids (sys_enter, uring) */
	struct id_set blkcgs;			/* ids in the I/O controller's hierarchy (block_rq_cgroup) */
	union held_rec pool[HELD_MAX];
	union held_rec *spare[HELD_MAX];	/* free pool entries */
	union held_rec *held[HELD_MAX];		/* heap of the others, oldest first */
	size_t nspare, nheld;
};

struct rec_meta_tracker *rec_meta_tracker_new(void)
{
	struct rec_meta_tracker *t = calloc(1, sizeof(*t));

	for (size_t i = 0; t && i < HELD_MAX; i++)
		t->spare[t->nspare++] = &t->pool[i];
	return t;
}

void rec_meta_tracker_free(struct rec_meta_tracker *t)
{
	free(t);
}

static void track_comm(struct rec_meta_tracker *t, struct st_writer *w, uint32_t pid, const char *comm)
{
	unsigned slot = pid & (TRACK_SLOTS - 1);
	char key[32];

	/* the same name again (a thread's fork, a second exec of one binary) is not news */
	if (t->names[slot].pid == pid && !strncmp(t->names[slot].comm, comm, ST_COMM_LEN))
		return;
	t->names[slot].pid = pid;
	memcpy(t->names[slot].comm, comm, ST_COMM_LEN);
	snprintf(key, sizeof(key), "pid.%u", pid);
	meta_setf(w, key, "%.*s", ST_COMM_LEN, comm);
}

/* The path comes with the exit (read there); one that could not be read names nothing. */
static void track_open_exit(struct st_writer *w, const struct st_ev_sys_exit_openat *e)
{
	char key[64];

	if (e->p.ret < 0 || e->p.name_len <= 1)
		return;
	snprintf(key, sizeof(key), "fd.%u.%lld", e->h.pid, (long long)e->p.ret);
	meta_setf(w, key, "%.*s", ST_PATH_LEN, e->p.filename);
}

static void learn(struct rec_meta_tracker *t, struct st_writer *w, const struct st_event_header *h)
{
	switch (h->type) {
	case ST_EV_sched_process_fork:
	case ST_EV_sched_process_exec:
		track_comm(t, w, h->pid, ((const struct st_ev_task *)h)->p.comm);
		break;
	case ST_EV_sys_exit_openat:
		track_open_exit(w, (const void *)h);
		break;
	}
}

static void held_swap(struct rec_meta_tracker *t, size_t a, size_t b)
{
	union held_rec *x = t->held[a];

	t->held[a] = t->held[b];
	t->held[b] = x;
}

/* The oldest held record, removed from the heap (its pool entry stays in use). */
static union held_rec *held_pop(struct rec_meta_tracker *t)
{
	union held_rec *top = t->held[0];
	size_t i = 0;

	t->held[0] = t->held[--t->nheld];
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < t->nheld && t->held[l]->h.ts < t->held[m]->h.ts)
			m = l;
		if (l + 1 < t->nheld && t->held[l + 1]->h.ts < t->held[m]->h.ts)
			m = l + 1;
		if (m == i)
			return top;
		held_swap(t, i, m);
		i = m;
	}
}

void rec_meta_release(struct rec_meta_tracker *t, struct st_writer *w, uint64_t before)
{
	while (t->nheld && t->held[0]->h.ts < before) {
		union held_rec *rec = held_pop(t);

		learn(t, w, &rec->h);
		t->spare[t->nspare++] = rec;
	}
}

void rec_meta_track(struct rec_meta_tracker *t, struct st_writer *w, const struct st_event_header *h)
{
	union held_rec *rec;

	if (h->size > sizeof(*rec))
		return;		/* not a record this tracker learns from */
	if (!t->nspare)
		rec_meta_release(t, w, t->held[0]->h.ts + 1);
	rec = t->spare[--t->nspare];
	memcpy(rec, h, h->size);
	t->held[t->nheld] = rec;
	for (size_t i = t->nheld++; i && t->held[(i - 1) / 2]->h.ts > rec->h.ts; i = (i - 1) / 2)
		held_swap(t, i, (i - 1) / 2);
}

/* ---- cgroups the records name ----------------------------------------- */

/* The slot holding id, else the free slot where it goes (the table is never full). */
static size_t id_slot(const struct id_set *set, uint64_t id)
{
	size_t i = id & (CGROUP_SLOTS - 1);

	while (set->ids[i] && set->ids[i] != id)
		i = (i + 1) & (CGROUP_SLOTS - 1);
	return i;
}

static bool id_noted(const struct id_set *set, uint64_t id)
{
	return set->ids[id_slot(set, id)] == id;
}

static void id_note(struct id_set *set, uint64_t id)
{
	size_t i;

	if (!id || id == set->last)
		return;
	set->last = id;
	i = id_slot(set, id);
	if (!set->ids[i] && set->n < CGROUP_SLOTS / 4 * 3) {
		set->ids[i] = id;
		set->n++;
	}
}

void rec_meta_note_cgroup(struct rec_meta_tracker *t, uint64_t id)
{
	id_note(&t->cgroups, id);
}

void rec_meta_note_blkcg(struct rec_meta_tracker *t, uint64_t id)
{
	id_note(&t->blkcgs, id);
}

/* The cgroup of a record that begins an I/O (ST_KIND_CGROUP), 0 for others. */
static uint64_t record_cgroup(const struct st_event_header *h)
{
	unsigned kind = st_event_kind(h->type);

	if (!(kind & ST_KIND_CGROUP))
		return 0;
	if ((kind & ST_KIND_MASK) == ST_KIND_URING)
		return ((const struct st_ev_uring *)h)->p.cgroup;
	return ((const struct st_ev_sys_enter *)h)->p.cgroup;
}

void rec_meta_note_record(struct rec_meta_tracker *t, const struct st_event_header *h)
{
	if (h->type == ST_EV_block_rq_cgroup)
		id_note(&t->blkcgs, ((const struct st_ev_block_rq_cgroup *)h)->p.blkcg);
	else
		id_note(&t->cgroups, record_cgroup(h));
}

/*
 * Each cgroup directory under the mount open as dir, depth levels deep at
 * most: fn(dir fd, its inode number, path relative to the mount with "" the
 * root, ctx).
 */
typedef void (*cgroup_fn)(int dir, uint64_t ino, const char *path, void *ctx);

static void walk_cgroups(int dir, char *path, size_t len, size_t cap, int depth, cgroup_fn fn,
			 void *ctx)
{
	DIR *d = fdopendir(dir);
	struct dirent *de;
	struct stat st;

	if (!d) {
		close(dir);
		return;
	}
	if (!fstat(dirfd(d), &st) && st.st_ino)
		fn(dirfd(d), st.st_ino, path, ctx);
	while (depth > 0 && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		int sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.' || len + 1 + n >= cap)
			continue;
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, n + 1);
		walk_cgroups(sub, path, len + 1 + n, cap, depth - 1, fn, ctx);
		path[len] = 0;
	}
	closedir(d);
}

#define CGROUP_DEPTH 32	/* levels of a hierarchy walked */

/* The mount of the hierarchy of type `type` ("cgroup2", or "cgroup" with mount option `option`), opened. */
static int open_cgroup_mount(const char *type, const char *option)
{
	FILE *mounts = setmntent("/proc/self/mounts", "re");
	struct mntent *m;
	int dir = -1;

	while (mounts && dir < 0 && (m = getmntent(mounts)))
		if (!strcmp(m->mnt_type, type) && (!option || hasmntopt(m, option)))
			dir = open(m->mnt_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mounts)
		endmntent(mounts);
	return dir;
}

struct named_cgroups {
	const struct rec_meta_tracker *t;
	struct st_writer *w;
};

/* cgroup.ID = path of a noted group (a group's id is its directory's inode number). */
static void name_cgroup(int dir, uint64_t ino, const char *path, void *ctx)
{
	struct named_cgroups *n = ctx;
	char key[40];

	(void)dir;
	if (!id_noted(&n->t->cgroups, ino))
		return;
	snprintf(key, sizeof(key), "cgroup.%llu", (unsigned long long)ino);
	st_writer_set_meta(n->w, key, path[0] ? path : "/");
}

void rec_meta_cgroups(const struct rec_meta_tracker *t, struct st_writer *w)
{
	struct named_cgroups n = { t, w };
	char path[PATH_MAX] = "";
	int dir;

	if (!t->cgroups.n || (dir = open_cgroup_mount("cgroup2", NULL)) < 0)
		return;
	walk_cgroups(dir, path, 0, sizeof(path), CGROUP_DEPTH, name_cgroup, &n);
}

/* ---- cgroups with an I/O limit ------------------------------------------ */

#define LIMIT_LEN	1024	/* bytes of a blkcg.<id>.limit value */
#define LIMIT_DEVS	16	/* devices of one group's limits kept */

/* Appends to a value of LIMIT_LEN bytes, cut where it is full. */
static void limit_append(char *value, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void limit_append(char *value, size_t *len, const char *fmt, ...)
{
	va_list ap;

	if (*len >= LIMIT_LEN - 1)
		return;
	va_start(ap, fmt);
	*len += (size_t)vsnprintf(value + *len, LIMIT_LEN - *len, fmt, ap);
	va_end(ap);
	if (*len > LIMIT_LEN - 1)
		*len = LIMIT_LEN - 1;
}

static const char *const limit_items[] = { "rbps", "wbps", "riops", "wiops" };	/* io.max's order */

/* One device's limits; 0 = none (v1 and v2 refuse a limit of 0). */
struct dev_limits {
	unsigned maj, min;
	unsigned long long value[4];	/* limit_items */
};

static struct dev_limits *limits_of(struct dev_limits *devs, size_t *n, unsigned maj, unsigned min)
{
	for (size_t i = 0; i < *n; i++)
		if (devs[i].maj == maj && devs[i].min == min)
			return &devs[i];
	if (*n == LIMIT_DEVS)
		return NULL;
	memset(&devs[*n], 0, sizeof(devs[*n]));
	devs[*n].maj = maj;
	devs[*n].min = min;
	return &devs[(*n)++];
}

static FILE *open_at(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;

	if (!f && fd >= 0)
		close(fd);
	return f;
}

/* A v1 blkio group's limits: its throttle files' "MAJ:MIN VALUE" lines. */
static void v1_limits(int dir, struct dev_limits *devs, size_t *n)
{
	static const char *const files[] = {
		"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
		"blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device",
	};
	unsigned long long value;
	struct dev_limits *l;
	unsigned maj, min;
	char line[128];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f = open_at(dir, files[i]);

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "%u:%u %llu", &maj, &min, &value) == 3 && value &&
			    (l = limits_of(devs, n, maj, min)))
				l->value[i] = value;
		if (f)
			fclose(f);
	}
}

/* A v2 group's limits: io.max's "MAJ:MIN rbps=max wbps=max riops=250 wiops=max" lines. */
static void v2_limits(int dir, struct dev_limits *devs, size_t *n)
{
	FILE *f = open_at(dir, "io.max");
	unsigned long long value;
	unsigned maj, min;
	char line[256], name[8];
	int used;

	while (f && fgets(line, sizeof(line), f)) {
		struct dev_limits *l;
		char *save = NULL;

		if (sscanf(line, "%u:%u%n", &maj, &min, &used) != 2 || !(l = limits_of(devs, n, maj, min)))
			continue;
		for (char *item = strtok_r(line + used, " \n", &save); item;
		     item = strtok_r(NULL, " \n", &save))
			for (size_t i = 0; i < 4; i++)
				if (sscanf(item, "%7[a-z]=%llu", name, &value) == 2 &&
				    !strcmp(name, limit_items[i]))
					l->value[i] = value;
	}
	if (f)
		fclose(f);
}

struct limited_cgroups {
	struct st_writer *w;
	bool v1;
	const struct id_set *noted;	/* ids of this hierarchy the records name, NULL none */
};

/*
 * blkcg.ID = the group's path ("blkio:/x" in v1's blkio hierarchy, "/x" in
 * v2's), blkcg.ID.limit = its limits, "7:0 riops=250 wbps=1048576" by
 * device, devices separated by "; ". Groups without a limit are left out,
 * but for the path of those the records name.
 */
static void name_limited_cgroup(int dir, uint64_t ino, const char *path, void *ctx)
{
	struct limited_cgroups *lc = ctx;
	struct dev_limits devs[LIMIT_DEVS];
	char key[64], value[LIMIT_LEN];
	size_t n = 0, len = 0;

	if (lc->v1)
		v1_limits(dir, devs, &n);
	else
		v2_limits(dir, devs, &n);
	value[0] = 0;
	for (size_t d = 0; d < n; d++) {
		/* v2 keeps a device's line once all its items are back to "max": no limit */
		if (!(devs[d].value[0] | devs[d].value[1] | devs[d].value[2] | devs[d].value[3]))
			continue;
		limit_append(value, &len, "%s%u:%u", len ? "; " : "", devs[d].maj, devs[d].min);
		for (size_t i = 0; i < 4; i++)
			if (devs[d].value[i])
				limit_append(value, &len, " %s=%llu", limit_items[i], devs[d].value[i]);
	}
	if (len) {
		snprintf(key, sizeof(key), "blkcg.%llu.limit", (unsigned long long)ino);
		st_writer_set_meta(lc->w, key, value);
	} else if (!lc->noted || !id_noted(lc->noted, ino)) {
		return;
	}
	snprintf(key, sizeof(key), "blkcg.%llu", (unsigned long long)ino);
	meta_setf(lc->w, key, "%s%s", lc->v1 ? "blkio:" : "", path[0] ? path : "/");
}

void rec_meta_blkcgs(const struct rec_meta_tracker *t, struct st_writer *w)
{
	const struct id_set *noted = t && t->blkcgs.n ? &t->blkcgs : NULL;
	struct limited_cgroups lc = { w, true, noted };
	char path[PATH_MAX] = "";
	int dir;

	/* the I/O controller is v1 blkio's where that is mounted, else v2's */
	if ((dir = open_cgroup_mount("cgroup", "blkio")) >= 0) {
		walk_cgroups(dir, path, 0, sizeof(path), CGROUP_DEPTH, name_limited_cgroup, &lc);
		lc.noted = NULL;
	}
	lc.v1 = false;
	if ((dir = open_cgroup_mount("cgroup2", NULL)) >= 0)
		walk_cgroups(dir, path, 0, sizeof(path), CGROUP_DEPTH, name_limited_cgroup, &lc);
}
