/* SPDX-License-Identifier: MIT */
/*
 * target.c - where a replay's I/O goes, and the checks that keep it from
 * destroying data: nothing is written without --allow-write; what is to be
 * written is checked as opened (fstat of the fd, so no link or rename in
 * between redirects it), and refused when a file system or another device
 * uses it: mounted, held by another driver (LVM, md, device mapper), claimed
 * where this mount table does not show it (the kernel refuses an O_EXCL
 * open: another mount namespace, btrfs), a loop device's backing file or
 * device (itself or through an overlay), or a loop device sharing its
 * backing file with another; a target smaller than the trace needs is
 * refused too. The files of a file-level replay are never opened through a
 * symbolic link.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "format/lib/sttrace.h"
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
 * Where the device rdev is mounted, or with `partitions` a partition of it
 * too: "/mnt/point" or "/mnt/point (partition 7:1)" into where; 0 when none.
 */
static int mount_point(dev_t rdev, int partitions, char *where, size_t cap)
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
		    (makedev(maj, min) == rdev || (partitions && on_disk(makedev(maj, min), rdev)))) {
			if (makedev(maj, min) == rdev)
				snprintf(where, cap, "%.200s", mnt);
			else
				snprintf(where, cap, "%.200s (partition %u:%u)", mnt, maj, min);
			found = 1;
		}
	fclose(f);
	return found;
}

/* The first entry of a sysfs directory of block device names (holders, slaves) into name; 0 when none. */
static int first_entry(const char *dir, char *name, size_t cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(name, cap, "%s", e->d_name);
			found = 1;
		}
	closedir(d);
	return found;
}

/* The first line of a small sysfs file into buf, without its newline; 0 when unreadable. */
static int read_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	int ok = f && fgets(buf, (int)cap, f);

	if (f)
		fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/* The device number of the block device sysfs names name ("loop3", "sda1"); 0 when unknown. */
static dev_t dev_of(const char *name)
{
	char path[PATH_MAX], line[32];
	unsigned maj, min;

	snprintf(path, sizeof(path), "/sys/class/block/%.200s/dev", name);
	if (!read_line(path, line, sizeof(line)) || sscanf(line, "%u:%u", &maj, &min) != 2)
		return 0;
	return makedev(maj, min);
}

/* 1 when a and b are the same device (block devices) or the same file (regular files). */
static int same_node(const struct stat *a, const struct stat *b)
{
	if (S_ISBLK(a->st_mode))
		return S_ISBLK(b->st_mode) && a->st_rdev == b->st_rdev;
	return S_ISREG(b->st_mode) && a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* A mountinfo field with its octal escapes (\040 for a space, \072 for ':') undone, in place. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++)
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	*out = '\0';
}

/*
 * The layer file that `rel` (a path inside an overlay, from its root) is,
 * after the overlay's super options `opts` ("rw,lowerdir=A:B,upperdir=U,..."):
 * the first of upperdir, then each lowerdir, that holds rel, as the overlay
 * itself looks it up, its layers' paths taken below `root` (the root of the
 * mount namespace that mounted it). Its identity into real; 0 when no layer
 * holds it.
 */
static int overlay_lookup(const char *root, char *opts, const char *rel, struct stat *real)
{
	enum { LAYERS = 500 };	/* the kernel's own bound on lower layers */
	char *layers[LAYERS + 1] = { NULL }, *opt, *dir, *save, *dsave, path[PATH_MAX];
	unsigned n = 1, i;	/* layers[0]: the upper directory, when there is one */

	for (opt = strtok_r(opts, ",", &save); opt; opt = strtok_r(NULL, ",", &save))
		if (!strncmp(opt, "upperdir=", 9))
			layers[0] = opt + 9;
		else if (!strncmp(opt, "lowerdir=", 9) || !strncmp(opt, "lowerdir+=", 10) ||
			 !strncmp(opt, "datadir+=", 9))
			/* "A:B", "::" before data-only layers; a ':' in a name is escaped */
			for (dir = strtok_r(strchr(opt, '=') + 1, ":", &dsave); dir && n <= LAYERS;
			     dir = strtok_r(NULL, ":", &dsave))
				layers[n++] = dir;
	for (i = 0; i < n; i++) {
		if (!layers[i])
			continue;
		unescape(layers[i]);
		if (snprintf(path, sizeof(path), "%s%s%s", root, layers[i], rel) < (int)sizeof(path) &&
		    !lstat(path, real))
			return 1;
	}
	return 0;
}

/*
 * overlay_layer() in the mount namespace of process `proc` ("/proc/self",
 * "/proc/123"), whose paths are below proc/root: 1 found; 0 when a mount
 * there has st's device but no overlay's layer holds path; -1 when path is
 * not st there or no mount there has st's device.
 */
static int overlay_in(const char *proc, const struct stat *st, const char *path, struct stat *real)
{
	FILE *f;
	char line[8192], root[PATH_MAX], mnt[PATH_MAX], opts[8192], rel[PATH_MAX], top[64];
	struct stat now;
	unsigned maj, min;
	size_t len;
	int found = -1;

	snprintf(top, sizeof(top), "%s/root", proc);
	snprintf(rel, sizeof(rel), "%s%s", top, path);
	if (stat(rel, &now) || !same_node(st, &now))
		return -1;	/* path is not st in this namespace */
	snprintf(line, sizeof(line), "%s/mountinfo", proc);
	if (!(f = fopen(line, "r")))
		return -1;
	/* "49 30 0:40 / /merged rw,relatime - overlay ov rw,lowerdir=...,upperdir=...,workdir=..." */
	while (found < 1 && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - overlay ");

		if (sscanf(line, "%*u %*u %u:%u %4095s %4095s", &maj, &min, root, mnt) != 4 ||
		    makedev(maj, min) != st->st_dev)
			continue;
		found = 0;
		if (!sep || sscanf(sep, " - overlay %*s %8191s", opts) != 1)
			continue;
		unescape(root);
		unescape(mnt);
		len = strcmp(mnt, "/") ? strlen(mnt) : 0;
		if (strncmp(path, mnt, len) || path[len] != '/')
			continue;
		snprintf(rel, sizeof(rel), "%s%s", strcmp(root, "/") ? root : "", path + len);
		found = overlay_lookup(top, opts, rel, real);
	}
	fclose(f);
	return found;
}

/*
 * The file under an overlay that the file st, reached as the absolute path
 * `path`, is: the overlay gives st its own device and inode numbers, and a
 * loop device over a file of its merged directory names those, not the
 * layer's file that holds the data (nor the other way round). The overlay
 * is looked for in this mount namespace, then, when no mount here has st's
 * device, in every other one a process is in (a loop device's backing file
 * path is the one it had where it was set up). 0 when st is on no overlay,
 * path does not name it, or no layer holds it.
 */
static int overlay_layer(const struct stat *st, const char *path, struct stat *real)
{
	enum { SPACES = 1024 };
	char proc[32], ns[48], link[64], seen[SPACES][24];
	unsigned nseen = 0, i;
	struct dirent *e;
	ssize_t n;
	DIR *d;
	int found;

	/* an overlay has an anonymous device number (major 0), as tmpfs or btrfs */
	if (major(st->st_dev) || !path || path[0] != '/')
		return 0;
	if ((found = overlay_in("/proc/self", st, path, real)) >= 0 || !(d = opendir("/proc")))
		return found > 0;
	if ((n = readlink("/proc/self/ns/mnt", seen[0], sizeof(seen[0]) - 1)) > 0) {
		seen[0][n] = '\0';	/* this namespace: read already */
		nseen = 1;
	}
	while (found < 1 && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(proc, sizeof(proc), "/proc/%.20s", e->d_name);
		snprintf(ns, sizeof(ns), "%s/ns/mnt", proc);
		if ((n = readlink(ns, link, sizeof(link) - 1)) <= 0)
			continue;
		link[n] = '\0';
		for (i = 0; i < nseen && strcmp(seen[i], link); i++)
			;
		if (i < nseen)
			continue;	/* a namespace already read */
		if (nseen < SPACES)
			snprintf(seen[nseen++], sizeof(seen[0]), "%.23s", link);
		found = overlay_in(proc, st, path, real);
	}
	closedir(d);
	return found > 0;
}

/*
 * The file or device loop device `name` ("loop3") reads and writes: its path
 * as sysfs gives it into backing, its identity into b (st_mode's type,
 * st_dev and st_ino, st_rdev of a device); 0 when name is no bound loop
 * device. The identity is the kernel's (LOOP_GET_STATUS64 on /dev/NAME), not
 * the path's: an image unlinked while a hard link keeps it has the path
 * "NAME (deleted)", and another file may have taken its name since. Without
 * access to /dev/NAME (not root) the path is all there is.
 */
static int loop_backing(const char *name, char *backing, size_t cap, struct stat *b)
{
	struct loop_info64 info;
	char path[PATH_MAX];
	struct stat node;
	int fd, known;

	snprintf(path, sizeof(path), "/sys/block/%.200s/loop/backing_file", name);
	if (!read_line(path, backing, cap))
		return 0;
	snprintf(path, sizeof(path), "/dev/%.200s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	known = fd >= 0 && !fstat(fd, &node) && S_ISBLK(node.st_mode) && node.st_rdev == dev_of(name) &&
		!ioctl(fd, LOOP_GET_STATUS64, &info);
	if (fd >= 0)
		close(fd);
	if (!known)
		return !stat(backing, b);
	memset(b, 0, sizeof(*b));
	/* a loop device is over a regular file or a block device, which alone has an rdev */
	b->st_mode = info.lo_rdevice ? S_IFBLK : S_IFREG;
	b->st_dev = (dev_t)info.lo_device;
	b->st_ino = (ino_t)info.lo_inode;
	b->st_rdev = (dev_t)info.lo_rdevice;
	return 1;
}

/*
 * A loop device other than `except` whose backing file is st (by device or
 * inode), or is st through an overlay: its name (and the overlay's file)
 * into who; 0 when none.
 */
static int loop_over(const struct stat *st, const char *except, char *who, size_t cap)
{
	DIR *d = opendir("/sys/block");
	struct dirent *e;
	char backing[PATH_MAX];
	struct stat b, real;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (strncmp(e->d_name, "loop", 4) || (except && !strcmp(e->d_name, except)) ||
		    !loop_backing(e->d_name, backing, sizeof(backing), &b))
			continue;
		if (same_node(st, &b)) {
			snprintf(who, cap, "%s", e->d_name);
			found = 1;
		} else if (S_ISREG(st->st_mode) && S_ISREG(b.st_mode) && overlay_layer(&b, backing, &real) &&
			   same_node(st, &real)) {
			snprintf(who, cap, "%s (over %.200s, this file through an overlay)", e->d_name, backing);
			found = 1;
		}
	}
	closedir(d);
	return found;
}

/*
 * Whether the block device rdev (a node of it at hint, or /dev/NAME) is
 * mounted or claimed by anything, anywhere: the kernel refuses an exclusive
 * open (O_EXCL) of a device mounted in any mount namespace, by a file
 * system whatever device number it shows (btrfs: 0:NN), or held by a
 * driver. 1 busy, 0 free, -1 when it cannot tell (reason in why).
 */
static int claimed(dev_t rdev, const char *hint, char *why, size_t cap)
{
	char path[PATH_MAX], sys[PATH_MAX];
	struct stat node;
	int fd;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(rdev), minor(rdev));
	if (!hint || stat(hint, &node) || !S_ISBLK(node.st_mode) || node.st_rdev != rdev) {
		if (!realpath(path, sys)) {
			snprintf(why, cap, "cannot tell whether device %u:%u is in use: %s", major(rdev), minor(rdev),
				 strerror(errno));
			return -1;
		}
		snprintf(path, sizeof(path), "/dev/%.200s", strrchr(sys, '/') + 1);
		if (stat(path, &node) || !S_ISBLK(node.st_mode) || node.st_rdev != rdev) {
			snprintf(why, cap, "cannot tell whether device %u:%u is in use: %.200s is not its node",
				 major(rdev), minor(rdev), path);
			return -1;
		}
		hint = path;
	}
	fd = open(hint, O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == EBUSY)
		return 1;
	snprintf(why, cap, "cannot tell whether %.200s is in use: %s", hint, strerror(errno));
	return -1;
}

/* A device rdev is on top of (device mapper, md: its sysfs slaves) that is mounted: its name and where. */
static int mounted_under(dev_t rdev, char *name, size_t namecap, char *where, size_t cap)
{
	char dir[96];
	DIR *d;
	struct dirent *e;
	dev_t under;
	int found = 0;

	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u/slaves", major(rdev), minor(rdev));
	if (!(d = opendir(dir)))
		return 0;
	while (!found && (e = readdir(d)))
		if (e->d_name[0] != '.' && (under = dev_of(e->d_name)) &&
		    mount_point(under, 1, where, cap)) {
			snprintf(name, namecap, "%s", e->d_name);
			found = 1;
		}
	closedir(d);
	return found;
}

#define IN_USE_DEPTH	8	/* loop over loop over ...: deeper stacks are refused */

/*
 * Why writing to the block device or regular file st (reached as path)
 * describes would write into storage something else uses, into why; 0
 * when nothing does. It is in use when it is mounted (a disk: or a
 * partition of it), held (device mapper, md, LVM), a partition of a
 * mounted disk, on top of a mounted device, claimed where this mount table
 * does not show it (an exclusive open refused), or backs a loop device,
 * itself or through an overlay; a loop device is in use when its backing
 * file or device is, counting the loop devices over it other than itself.
 */
static int in_use(const struct stat *st, const char *path, const char *self, unsigned depth,
		  char *why, size_t cap)
{
	char dir[128], name[NAME_MAX + 256], where[256], inner[512], backing[PATH_MAX], sys[PATH_MAX];
	dev_t rdev = st->st_rdev, disk;
	struct stat b;
	int busy;

	if (depth >= IN_USE_DEPTH) {
		snprintf(why, cap, "a stack of more than %d loop devices", IN_USE_DEPTH);
		return 1;
	}
	if (loop_over(st, self, name, sizeof(name))) {
		snprintf(why, cap, "backs loop device %.400s", name);
		return 1;
	}
	if (S_ISREG(st->st_mode) && overlay_layer(st, path, &b) && loop_over(&b, self, name, sizeof(name))) {
		snprintf(why, cap, "an overlay's file whose layer file backs loop device %.400s", name);
		return 1;
	}
	if (!S_ISBLK(st->st_mode))
		return 0;
	if (mount_point(rdev, 1, where, sizeof(where))) {
		snprintf(why, cap, "mounted on %s", where);
		return 1;
	}
	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u/holders", major(rdev), minor(rdev));
	if (first_entry(dir, name, sizeof(name))) {
		snprintf(why, cap, "held by %s (device mapper, md or LVM)", name);
		return 1;
	}
	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u/partition", major(rdev), minor(rdev));
	if (!access(dir, F_OK)) {
		snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u/..", major(rdev), minor(rdev));
		if (realpath(dir, sys) && (disk = dev_of(strrchr(sys, '/') + 1)) &&
		    mount_point(disk, 0, where, sizeof(where))) {
			snprintf(why, cap, "a partition of %s, mounted on %s", strrchr(sys, '/') + 1, where);
			return 1;
		}
	}
	if (mounted_under(rdev, name, sizeof(name), where, sizeof(where))) {
		snprintf(why, cap, "on top of %.100s, mounted on %s", name, where);
		return 1;
	}
	if ((busy = claimed(rdev, path, why, cap))) {
		if (busy > 0)
			snprintf(why, cap, "mounted or held where this mount table does not show it (another mount "
				 "namespace, btrfs, a driver): the kernel refuses to open it exclusively");
		return 1;
	}
	/* A loop device: what it reads and writes is its backing file's, shared by every loop over that. */
	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u", major(rdev), minor(rdev));
	if (!realpath(dir, sys) || !loop_backing(strrchr(sys, '/') + 1, backing, sizeof(backing), &b))
		return 0;
	if (!in_use(&b, backing, strrchr(sys, '/') + 1, depth + 1, inner, sizeof(inner)))
		return 0;
	snprintf(why, cap, "a loop device over %.200s: %.250s", backing, inner);
	return 1;
}

static void human(uint64_t bytes, char *buf, size_t cap)
{
	static const char unit[][4] = { "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes / 1048576.0;
	unsigned u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, cap, "%.1f %s", v, unit[u]);
}

/*
 * Open t->path for the plan's I/O (O_DIRECT when t->direct and the file
 * system takes it) and stat what was opened into st. O_NONBLOCK keeps a
 * FIFO planted at the name from blocking the open; it is cleared after.
 */
static int open_target(struct rp_target *t, int flags, struct stat *st, char *err, size_t cap)
{
	flags |= O_CLOEXEC | O_NONBLOCK;
	t->fd = open(t->path, flags | (t->direct ? O_DIRECT : 0), 0644);
	if (t->fd < 0 && errno == EINVAL && t->direct) {
		t->direct = 0;	/* tmpfs and a few others have no O_DIRECT */
		t->fd = open(t->path, flags, 0644);
	}
	if (t->fd < 0) {
		snprintf(err, cap, "%s: %s", t->path, errno == ELOOP && (flags & O_NOFOLLOW) ?
			 "is a symbolic link; not followed" : strerror(errno));
		return -1;
	}
	if (fstat(t->fd, st) || fcntl(t->fd, F_SETFL, fcntl(t->fd, F_GETFL) & ~O_NONBLOCK)) {
		snprintf(err, cap, "%s: %s", t->path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Refuse to write to what st describes when something else uses it, unless --force-in-use. */
static int refuse_in_use(const struct rp_target *t, const struct stat *st, const struct rp_opts *o,
			 char *err, size_t cap)
{
	char why[640], self[32], path[PATH_MAX];
	ssize_t n;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", t->fd);
	n = readlink(self, path, sizeof(path) - 1);	/* what was opened, as an absolute path */
	path[n > 0 ? n : 0] = '\0';
	if (o->force_in_use || !in_use(st, path, NULL, 0, why, sizeof(why)))
		return 0;
	snprintf(err, cap, "%s: %s; st-replay does not write to it (--force-in-use does)", t->path, why);
	return -1;
}

/* Highest offset + length and the count of data-changing I/Os of every target. */
static void measure(struct rp_plan *p, unsigned *misaligned)
{
	size_t i;

	for (i = 0; i < p->nios; i++) {
		const struct rp_io *io = &p->ios[i];
		struct rp_target *t = &p->targets[io->target];
		/* a crafted offset near 2^64 must not wrap the end around to a small one */
		uint64_t end = io->offset > UINT64_MAX - io->len ? UINT64_MAX : io->offset + io->len;

		if (end > t->need)
			t->need = end;
		if (io->op == AN_OP_WRITE || io->op == AN_OP_DISCARD)
			t->writes++;
		misaligned[io->target] |= (unsigned)((io->offset | io->len) & 511);
	}
}

/*
 * Claim the block device t->fd is open on for ourselves: reopened through
 * /proc/self/fd (the same device, whatever its path names now) with O_EXCL,
 * which the kernel refuses while it is mounted or claimed by anything else.
 */
static int claim(struct rp_target *t, char *err, size_t cap)
{
	char self[32];
	int fd;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", t->fd);
	fd = open(self, O_RDWR | O_EXCL | O_CLOEXEC | O_DIRECT);
	if (fd < 0) {
		snprintf(err, cap, "%s: %s", t->path,
			 errno == EBUSY ? "in use by another program or the kernel (open with O_EXCL failed)" :
			 strerror(errno));
		return -1;
	}
	close(t->fd);
	t->fd = fd;
	return 0;
}

static int block_open(struct rp_target *t, const struct rp_opts *o, char *err, size_t cap)
{
	struct stat st;
	char need[32], have[32];
	int writes = t->writes > 0;

	t->direct = 1;
	if (open_target(t, writes ? O_RDWR : O_RDONLY, &st, err, cap))
		return -1;
	t->is_blkdev = S_ISBLK(st.st_mode);
	if (!t->is_blkdev && !S_ISREG(st.st_mode)) {
		snprintf(err, cap, "%s: not a block device or a regular file", t->path);
		return -1;
	}
	if (writes && (refuse_in_use(t, &st, o, err, cap) || (t->is_blkdev && claim(t, err, cap))))
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
 * Write zeros from the file's current end `from` up to t->need, so reads
 * reach real blocks (a hole or an unwritten extent would not reach the
 * device); the replay's writes carry another pattern (engine.c), so what it
 * wrote shows. Refused up front when the zeros would not fit in the space
 * free on the file system: a trace reaching a PiB fills no disk.
 */
static int fill(struct rp_target *t, uint64_t from, char *err, size_t cap)
{
	enum { STEP = 1 << 20 };
	struct statvfs vfs;
	char *buf = NULL;
	char need[32], free_space[32];
	uint64_t off;

	if (fstatvfs(t->fd, &vfs)) {
		snprintf(err, cap, "%s: statvfs: %s", t->path, strerror(errno));
		return -1;
	}
	if (t->need - from > (uint64_t)vfs.f_bavail * vfs.f_frsize) {
		human(t->need - from, need, sizeof(need));
		human((uint64_t)vfs.f_bavail * vfs.f_frsize, free_space, sizeof(free_space));
		snprintf(err, cap, "%s (recorded %s): the trace reaches %llu bytes into it; filling it takes "
			 "%s, more than the %s free there", t->path, t->name, (unsigned long long)t->need,
			 need, free_space);
		return -1;
	}
	if (!(buf = calloc(1, STEP))) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	for (off = from; off < t->need; off += STEP) {
		size_t n = t->need - off < STEP ? (size_t)(t->need - off) : STEP;
		int e = st_pwrite_all(t->fd, buf, n, off);

		if (e) {
			snprintf(err, cap, "%s: writing its recorded extent: %s", t->path, strerror(-e));
			free(buf);
			return -1;
		}
	}
	free(buf);
	if (fsync(t->fd)) {
		snprintf(err, cap, "%s: fsync: %s", t->path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * A file of the replay, DIR/N-name: never through a symbolic link, a regular
 * file only, and when it is to be written not one that backs a loop device
 * (a hard link to an image planted at the name).
 */
static int file_open(struct rp_target *t, uint32_t index, const struct rp_opts *o, char *err, size_t cap)
{
	struct stat st;
	int direct = t->direct;

	if (!(t->path = file_path(o->target, index, t->name))) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	t->direct = 0;	/* the fill writes whole MiBs through the page cache; O_DIRECT after it */
	if (open_target(t, O_NOFOLLOW | (o->allow_write ? O_RDWR | O_CREAT : O_RDONLY), &st, err, cap)) {
		if (errno == ENOENT)
			snprintf(err, cap, "%s (recorded %s): missing; creating it needs --allow-write",
				 t->path, t->name);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, cap, "%s: not a regular file", t->path);
		return -1;
	}
	if ((uint64_t)st.st_size < t->need) {
		if (!o->allow_write) {
			snprintf(err, cap, "%s (recorded %s): smaller than the %llu bytes the trace reaches; "
				 "filling it needs --allow-write", t->path, t->name, (unsigned long long)t->need);
			return -1;
		}
		if (refuse_in_use(t, &st, o, err, cap) || fill(t, (uint64_t)st.st_size, err, cap))
			return -1;
	} else if (t->writes && refuse_in_use(t, &st, o, err, cap)) {
		return -1;
	}
	t->size = (uint64_t)st.st_size > t->need ? (uint64_t)st.st_size : t->need;
	/* tmpfs and a few others have no O_DIRECT: buffered there */
	t->direct = direct && !fcntl(t->fd, F_SETFL, fcntl(t->fd, F_GETFL) | O_DIRECT);
	return 0;
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
		if (io->offset <= t->size && io->len <= t->size - io->offset)
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
