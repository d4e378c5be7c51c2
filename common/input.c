/* SPDX-License-Identifier: MIT */
/* input.c - standard input as a trace file (input.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/input.h"
#include "common/usage.h"

/* Copy what src reads to its end into an unlinked file; its fd, or -1 with errno set. */
static int spool(int src)
{
	const char *dir = getenv("TMPDIR");
	char buf[1 << 16];
	ssize_t n;
	int fd = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	while ((n = read(src, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write(fd, buf, (size_t)n) != n) {
			int err = n < 0 ? errno : errno ? errno : EIO;

			close(fd);
			errno = err;
			return -1;
		}
	}
	return fd;
}

/*
 * A FIFO named as a FILE: opened without waiting for a writer (O_NONBLOCK,
 * cleared for the reads), then copied like standard input; a FIFO nobody
 * writes to reads as an empty file.
 */
static int spool_fifo(const char *arg, char *path, size_t cap, char *err, size_t errcap)
{
	int src = open(arg, O_RDONLY | O_NONBLOCK | O_CLOEXEC), fd;

	if (src < 0 || fcntl(src, F_SETFL, fcntl(src, F_GETFL) & ~O_NONBLOCK) ||
	    (fd = spool(src)) < 0) {
		snprintf(err, errcap, "cannot copy the FIFO to $TMPDIR: %s", strerror(errno));
		if (src >= 0)
			close(src);
		return -1;
	}
	close(src);
	snprintf(path, cap, "/dev/fd/%d", fd);
	return 0;
}

int input_path(const char *arg, char *path, size_t cap, char *err, size_t errcap)
{
	static int stdin_fd = -1;	/* standard input is one per process: read it once */
	struct stat st;

	if (strcmp(arg, "-")) {
		if (!stat(arg, &st) && S_ISFIFO(st.st_mode))
			return spool_fifo(arg, path, cap, err, errcap);
		snprintf(path, cap, "%s", arg);
		return 0;
	}
	if (stdin_fd >= 0) {
		snprintf(path, cap, "/dev/fd/%d", stdin_fd);
		return 0;
	}
	if (isatty(STDIN_FILENO)) {
		snprintf(err, errcap, "standard input is a terminal; pipe a trace into it");
		return -1;
	}
	if (!fstat(STDIN_FILENO, &st) && S_ISREG(st.st_mode))
		stdin_fd = STDIN_FILENO;
	else if ((stdin_fd = spool(STDIN_FILENO)) < 0) {
		snprintf(err, errcap, "cannot copy standard input to $TMPDIR: %s", strerror(errno));
		return -1;
	}
	snprintf(path, cap, "/dev/fd/%d", stdin_fd);
	return 0;
}

int input_files(char **files, int nfiles, const char *prog)
{
	char path[4096], err[256];

	for (int i = 0; i < nfiles; i++) {
		if (input_path(files[i], path, sizeof(path), err, sizeof(err))) {
			fprintf(stderr, "%s: %s: %s\n", prog, files[i], err);
			return EXIT_FAIL;
		}
		/* a copy of "-" or a FIFO: its /dev/fd path lives as long as argv */
		if (strcmp(path, files[i]) && !(files[i] = strdup(path))) {
			fprintf(stderr, "%s: out of memory\n", prog);
			return EXIT_FAIL;
		}
	}
	return 0;
}
