/* SPDX-License-Identifier: MIT */
/*
 * output.c - creating output files safely.
 *
 * The recorder runs as root and its outputs hold paths, command lines and
 * host names. An output named in a directory others can write (/tmp) must not
 * let them redirect it: a symbolic link planted at the name would make root
 * overwrite the link's target, and a file of theirs would be truncated. So the
 * last component is never followed, only a regular file of the caller is
 * truncated, and a new file is readable by its owner alone (as perf record's).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sttrace.h"

static int refuse(int fd, char *msg, size_t cap, const char *why)
{
	if (fd >= 0)
		close(fd);
	snprintf(msg, cap, "%s", why);
	return ST_EINVAL;
}

int st_output_open(const char *path, unsigned flags, char *msg, size_t cap)
{
	int force = flags & ST_OUTPUT_FORCE;
	struct stat st;
	int fd, err;

	/*
	 * No O_TRUNC here: nothing is truncated before the checks below pass.
	 * O_NONBLOCK: a FIFO without a reader fails at once (ENXIO) instead of
	 * blocking the open for good; it is cleared before the fd is returned.
	 */
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | (force ? 0 : O_NOFOLLOW), 0600);
	if (fd < 0) {
		err = errno;
		if (err == ELOOP && !force)
			return refuse(-1, msg, cap, "is a symbolic link; not followed (--force follows it)");
		if (err == ENXIO)
			return refuse(-1, msg, cap, "is a FIFO without a reader; not a regular file");
		snprintf(msg, cap, "cannot create: %s", strerror(err));
		return err == ENOSPC ? ST_ENOSPC : ST_EIO;
	}
	if (fstat(fd, &st) || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		snprintf(msg, cap, "cannot stat: %s", strerror(errno));
		close(fd);
		return ST_EIO;
	}
	if (!S_ISREG(st.st_mode))
		return force ? fd : refuse(fd, msg, cap, "is not a regular file (--force writes to it)");
	if (st.st_uid != geteuid())
		return refuse(fd, msg, cap, "belongs to another user; not overwritten");
	if (st.st_size && ftruncate(fd, 0)) {
		snprintf(msg, cap, "cannot truncate: %s", strerror(errno));
		close(fd);
		return ST_EIO;
	}
	return fd;
}

int st_output_dir(const char *path, unsigned flags, char *msg, size_t cap)
{
	struct stat st;

	if (mkdir(path, 0700) && errno != EEXIST) {
		snprintf(msg, cap, "cannot create directory: %s", strerror(errno));
		return ST_EIO;
	}
	if ((flags & ST_OUTPUT_FORCE ? stat(path, &st) : lstat(path, &st))) {
		snprintf(msg, cap, "cannot stat: %s", strerror(errno));
		return ST_EIO;
	}
	if (S_ISLNK(st.st_mode))
		return refuse(-1, msg, cap, "is a symbolic link; not followed (--force follows it)");
	if (!S_ISDIR(st.st_mode))
		return refuse(-1, msg, cap, "is not a directory");
	if (st.st_uid != geteuid())
		return refuse(-1, msg, cap, "belongs to another user; not written into");
	return 0;
}
