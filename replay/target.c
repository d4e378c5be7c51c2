/* SPDX-License-Identifier: MIT */
/*
 * target.c - where a replay's I/O goes, and the checks that keep it from
 * destroying data: nothing is written without --allow-write, and a device
 * that is mounted or held by another driver (LVM, md, device mapper) or is
 * smaller than the trace needs is refused.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "format/sttrace.h"
#include "replay/replay.h"

/* 1 when dev is disk itself or one of its partitions (sysfs puts a partition inside its disk). */
static int on_disk(dev_t dev, dev_t disk)
{
	char path[96], parent[PATH_MAX], whole[PATH_MAX];

	if (dev == disk)
		return 1;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/..", major(dev), minor(dev));
	if (!realpath(path, parent))
		return 0;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(disk), minor(disk));
	return realpath(path, whole) && !strcmp(parent, whole);
}

/*
 * Where the device rdev, or a partition of it, is mounted: "/mnt/point" or
 * "/mnt/point (partition 7:1)" into where; 0 when nothing of it is mounted.
 */
static int mount_point(dev_t rdev, char *where, size_t cap)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096], mnt[4096];
	unsigned maj, min;
	int found = 0;

	if (!f)
		return 0;
	/* "36 35 98:0 /root /mnt/point options ...": the third field is the device. */
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, mnt) == 3 &&
		    on_disk(makedev(maj, min), rdev)) {
			if (makedev(maj, min) == rdev)
				snprintf(where, cap, "%.200s", mnt);
			else
				snprintf(where, cap, "%.200s (partition %u:%u)", mnt, maj, min);
			found = 1;
		}
	fclose(f);
	return found;
}

/* The first holder of the device rdev (a dm, md or LVM device on top of it); 0 when none. */
static int holder(dev_t rdev, char *who, size_t cap)
{
	char dir[96];
	DIR *d;
	struct dirent *e;
	int found = 0;

	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u/holders", major(rdev), minor(rdev));
	if (!(d = opendir(dir)))
		return 0;
	while (!found && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(who, cap, "%s", e->d_name);
			found = 1;
		}
	closedir(d);
	return found;
}

static void human(uint64_t bytes, char *buf, size_t cap)
{
	if (bytes >= (1ull << 30))
		snprintf(buf, cap, "%.1f GiB", bytes / 1073741824.0);
	else
		snprintf(buf, cap, "%.1f MiB", bytes / 1048576.0);
}

/* Open path for the plan's I/O; O_DIRECT when asked and the file system takes it. */
static int open_target(struct rp_target *t, int flags, char *err, size_t cap)
{
	t->fd = open(t->path, flags | (t->direct ? O_DIRECT : 0), 0644);
	if (t->fd < 0 && errno == EINVAL && t->direct) {
		t->direct = 0;	/* tmpfs and a few others have no O_DIRECT */
		t->fd = open(t->path, flags, 0644);
	}
	if (t->fd < 0) {
		snprintf(err, cap, "%s: %s", t->path,
			 errno == EBUSY ? "in use by another program or the kernel (open with O_EXCL failed)" :
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* Highest offset + length and the count of data-changing I/Os of every target. */
static void measure(struct rp_plan *p, unsigned *misaligned)
{
	size_t i;

	for (i = 0; i < p->nios; i++) {
		const struct rp_io *io = &p->ios[i];
		struct rp_target *t = &p->targets[io->target];

		if (io->offset + io->len > t->need)
			t->need = io->offset + io->len;
		if (io->op == AN_OP_WRITE || io->op == AN_OP_DISCARD)
			t->writes++;
		misaligned[io->target] |= (unsigned)((io->offset | io->len) & 511);
	}
}

static int block_open(struct rp_target *t, const struct rp_opts *o, char *err, size_t cap)
{
	struct stat st;
	char where[256], need[32], have[32];
	int writes = t->writes > 0;

	if (stat(t->path, &st)) {
		snprintf(err, cap, "%s: %s", t->path, strerror(errno));
		return -1;
	}
	t->is_blkdev = S_ISBLK(st.st_mode);
	if (!t->is_blkdev && !S_ISREG(st.st_mode)) {
		snprintf(err, cap, "%s: not a block device or a regular file", t->path);
		return -1;
	}
	if (t->is_blkdev && writes && mount_point(st.st_rdev, where, sizeof(where))) {
		snprintf(err, cap, "%s: mounted on %s; st-replay does not write to a mounted device",
			 t->path, where);
		return -1;
	}
	if (t->is_blkdev && writes && holder(st.st_rdev, where, sizeof(where))) {
		snprintf(err, cap, "%s: held by %s (device mapper, md or LVM); st-replay does not write to it",
			 t->path, where);
		return -1;
	}
	t->direct = 1;
	/* O_EXCL on a block device: the kernel refuses it while mounted or claimed. */
	if (open_target(t, (writes ? O_RDWR : O_RDONLY) | (t->is_blkdev && writes ? O_EXCL : 0), err, cap))
		return -1;
	if (t->is_blkdev) {
		if (ioctl(t->fd, BLKGETSIZE64, &t->size)) {
			snprintf(err, cap, "%s: BLKGETSIZE64: %s", t->path, strerror(errno));
			return -1;
		}
	} else {
		t->size = (uint64_t)st.st_size;
	}
	if (t->need > t->size && !o->wrap) {
		human(t->size, have, sizeof(have));
		human(t->need, need, sizeof(need));
		snprintf(err, cap, "%s: %s, smaller than the %s the trace of %s reaches (--wrap folds the offsets into it)",
			 t->path, have, need, t->name);
		return -1;
	}
	return 0;
}

/* Make a file name of a recorded path: "3-data.bin" for the third file, "/mnt/x/data.bin". */
static char *file_path(const char *dir, uint32_t index, const char *name)
{
	const char *base = strrchr(name, '/');
	char *path, *c;

	base = base ? base + 1 : name;
	if (asprintf(&path, "%s/%u-%.100s", dir, index, *base ? base : "file") < 0)
		return NULL;
	for (c = path + strlen(dir) + 1; *c; c++)
		if (*c == ' ' || *c == '/')
			*c = '_';
	return path;
}

/*
 * Write zeros from the file's current end up to t->need, so reads reach real
 * blocks (a hole or an unwritten extent would not reach the device); the
 * replay's writes carry another pattern (engine.c), so what it wrote shows.
 */
static int fill(struct rp_target *t, uint64_t from, char *err, size_t cap)
{
	enum { STEP = 1 << 20 };
	int fd = open(t->path, O_WRONLY);
	char *buf = malloc(STEP);
	uint64_t off;
	int ret = -1;

	if (fd < 0 || !buf) {
		snprintf(err, cap, "%s: %s", t->path, fd < 0 ? strerror(errno) : "out of memory");
		goto out;
	}
	memset(buf, 0, STEP);
	for (off = from; off < t->need; off += STEP) {
		size_t n = t->need - off < STEP ? (size_t)(t->need - off) : STEP;
		int e = st_pwrite_all(fd, buf, n, off);

		if (e) {
			snprintf(err, cap, "%s: writing its recorded extent: %s", t->path, strerror(-e));
			goto out;
		}
	}
	if (fsync(fd)) {
		snprintf(err, cap, "%s: fsync: %s", t->path, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

static int file_open(struct rp_target *t, uint32_t index, const struct rp_opts *o, char *err, size_t cap)
{
	struct stat st;
	uint64_t have = 0;

	if (!(t->path = file_path(o->target, index, t->name))) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	if (!stat(t->path, &st))
		have = (uint64_t)st.st_size;
	if (have < t->need) {
		if (!o->allow_write) {
			snprintf(err, cap, "%s (recorded %s): missing or smaller than the %llu bytes the trace reaches; "
				 "creating it needs --allow-write", t->path, t->name, (unsigned long long)t->need);
			return -1;
		}
		if ((t->fd = open(t->path, O_WRONLY | O_CREAT, 0644)) < 0) {
			snprintf(err, cap, "%s: %s", t->path, strerror(errno));
			return -1;
		}
		close(t->fd);
		if (fill(t, have, err, cap))
			return -1;
	}
	t->size = have > t->need ? have : t->need;
	return open_target(t, t->writes ? O_RDWR : O_RDONLY, err, cap);
}

/* --align and --wrap on the offsets of every I/O. */
static int place(struct rp_plan *p, const struct rp_opts *o, const unsigned *lbs, char *err, size_t cap)
{
	size_t i;

	for (i = 0; i < p->nios; i++) {
		struct rp_io *io = &p->ios[i];
		const struct rp_target *t = &p->targets[io->target];
		uint64_t align = o->align ? o->align : lbs[io->target];
		uint64_t len = (io->len + align - 1) / align * align;

		io->offset -= io->offset % align;
		if (io->len)
			io->len = (uint32_t)len;
		if (io->offset + io->len <= t->size)
			continue;
		if (io->len > t->size) {
			snprintf(err, cap, "%s: smaller than one recorded I/O of %u bytes", t->path, io->len);
			return -1;
		}
		io->offset %= t->size;
		if (io->offset + io->len > t->size)
			io->offset = t->size - io->len;
		io->offset -= io->offset % align;
	}
	return 0;
}

int rp_targets_open(struct rp_plan *p, const struct rp_opts *o, char *err, size_t cap)
{
	unsigned *misaligned = calloc(p->ntargets, sizeof(*misaligned));
	unsigned *lbs = calloc(p->ntargets, sizeof(*lbs));
	struct stat st;
	uint32_t t;
	int ret = -1;

	if (!misaligned || !lbs) {
		snprintf(err, cap, "out of memory");
		goto out;
	}
	measure(p, misaligned);
	if (p->level == RP_LEVEL_FILE && stat(o->target, &st)) {
		snprintf(err, cap, "--target %s: %s", o->target, strerror(errno));
		goto out;
	}
	if (p->level == RP_LEVEL_FILE && !S_ISDIR(st.st_mode)) {
		snprintf(err, cap, "--target %s: not a directory (file level replays into one)", o->target);
		goto out;
	}
	for (t = 0; t < p->ntargets; t++) {
		struct rp_target *tg = &p->targets[t];
		int lb = 512;

		if (tg->writes && !o->allow_write) {
			snprintf(err, cap, "%s: the trace writes to %s (%llu writes or discards); "
				 "nothing is written without --allow-write",
				 p->level == RP_LEVEL_BLOCK ? tg->path : o->target, tg->name,
				 (unsigned long long)tg->writes);
			goto out;
		}
		if (p->level == RP_LEVEL_FILE) {
			/* O_DIRECT only where the recording used it and every I/O is sector aligned. */
			tg->direct = tg->direct && !misaligned[t];
			if (file_open(tg, t, o, err, cap))
				goto out;
			lbs[t] = 1;
			continue;
		}
		if (block_open(tg, o, err, cap))
			goto out;
		if (tg->is_blkdev && ioctl(tg->fd, BLKSSZGET, &lb))
			lb = 512;
		lbs[t] = (unsigned)lb;
	}
	ret = place(p, o, lbs, err, cap);
out:
	free(misaligned);
	free(lbs);
	return ret;
}

void rp_targets_close(struct rp_plan *p)
{
	uint32_t t;

	for (t = 0; t < p->ntargets; t++)
		if (p->targets[t].fd >= 0) {
			close(p->targets[t].fd);
			p->targets[t].fd = -1;
		}
}
