/* SPDX-License-Identifier: MIT */
/*
 * sink.c - st-record's output: the writer's bytes go to the file through
 * io_uring, up to qd writes in flight, each from a buffer of a fixed pool
 * (registered with the ring when the kernel allows). The writer's buffer is
 * copied into a pool buffer, so it may reuse its own at once; the event loop
 * never waits for the disk unless every pool buffer is in flight.
 *
 * The first failure (an error, or a short write whose remainder also fails,
 * or a failed datasync) is kept and returned by every later call, so the
 * writer stops at the first bad write and the file keeps every chunk written
 * before it. Writes land in the page cache, where a failing disk reports
 * nothing: st-record asks for a datasync each second (rec_sink_datasync), which
 * both bounds what a host crash loses and surfaces the disk's errors.
 *
 * A stream (a pipe or socket: `st-record -o -`) has no offsets: its writes go
 * out one at a time, in file order, at the stream's position, and there is
 * nothing to sync.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/record.h"

static char *buffer_at(struct rec_sink *s, unsigned i)
{
	return s->pool + (size_t)i * s->buf_size;
}

/* Write len bytes at off, synchronously, retrying short writes: 0 or -errno. */
static int write_all(struct rec_sink *s, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	if (!s->stream)
		return st_pwrite_all(s->fd, buf, len, off);
	while (len) {
		ssize_t n = write(s->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The datasync's completion tag; a write's is its pool buffer's index. */
#define DATASYNC_TAG UINT64_MAX

static void complete(struct rec_sink *s, struct io_uring_cqe *cqe)
{
	uint64_t tag = io_uring_cqe_get_data64(cqe);
	unsigned b = (unsigned)tag;
	uint64_t lat;
	int res = cqe->res;

	io_uring_cqe_seen(&s->ring, cqe);
	if (tag == DATASYNC_TAG) {
		s->syncing = false;
		if (res < 0 && !s->err)
			s->err = res;
		return;
	}
	lat = rec_now_ns() - s->submit_ns[b];
	s->writes++;
	s->lat_sum_ns += lat;
	if (lat > s->lat_max_ns)
		s->lat_max_ns = lat;
	if (res < 0 && !s->err)
		s->err = res;
	else if (res >= 0 && (size_t)res < s->lens[b] && !s->err)
		/* the rest once more, synchronously: usually it reports why (ENOSPC) */
		s->err = write_all(s, buffer_at(s, b) + res, s->lens[b] - (size_t)res,
				   s->offsets[b] + (uint64_t)res);
	s->free_bufs[s->nfree++] = b;
	s->inflight--;
}

void rec_sink_reap(struct rec_sink *s)
{
	struct io_uring_cqe *cqe;

	while ((s->inflight || s->syncing) && io_uring_peek_cqe(&s->ring, &cqe) == 0)
		complete(s, cqe);
}

/* Wait until no more than `max_inflight` writes are in flight (and, with `idle`, no datasync). */
static void wait_inflight(struct rec_sink *s, unsigned max_inflight, bool idle)
{
	struct io_uring_cqe *cqe;

	rec_sink_reap(s);
	while (s->inflight > max_inflight || (idle && s->syncing)) {
		int ret = io_uring_wait_cqe(&s->ring, &cqe);

		if (ret == -EINTR)
			continue;
		if (ret < 0) {
			if (!s->err)
				s->err = ret;
			return;
		}
		complete(s, cqe);
	}
}

static int sink_write(void *ctx, const void *buf, size_t len, uint64_t off)
{
	struct rec_sink *s = ctx;
	struct io_uring_sqe *sqe;
	unsigned b;
	int ret;

	if (s->err)
		return s->err;
	if (s->stream && off != s->stream_pos)
		return s->err = -ESPIPE;	/* a stream cannot go back: the writer never does */
	s->stream_pos = off + len;
	if (len > s->buf_size) {
		/* the footer of a long recording: rare and final, written in place */
		wait_inflight(s, 0, false);
		if (!s->err)
			s->err = write_all(s, buf, len, off);
		return s->err;
	}
	wait_inflight(s, s->qd - 1, false);
	if (s->err)
		return s->err;
	b = s->free_bufs[--s->nfree];
	memcpy(buffer_at(s, b), buf, len);
	sqe = io_uring_get_sqe(&s->ring);
	if (s->stream)
		off = (uint64_t)-1;	/* the stream's own position */
	if (s->fixed)
		io_uring_prep_write_fixed(sqe, s->fd, buffer_at(s, b), (unsigned)len, off, (int)b);
	else
		io_uring_prep_write(sqe, s->fd, buffer_at(s, b), (unsigned)len, off);
	io_uring_sqe_set_data64(sqe, b);
	s->submit_ns[b] = rec_now_ns();
	s->lens[b] = len;
	s->offsets[b] = off;
	s->inflight++;
	ret = io_uring_submit(&s->ring);
	if (ret < 0) {
		s->inflight--;
		s->free_bufs[s->nfree++] = b;
		if (!s->err)
			s->err = ret;
	}
	return s->err;
}

int rec_sink_datasync(struct rec_sink *s)
{
	struct io_uring_sqe *sqe;
	int ret;

	rec_sink_reap(s);
	if (s->err || s->syncing || s->stream)
		return s->err;
	sqe = io_uring_get_sqe(&s->ring);
	if (!sqe)
		return 0;	/* every entry taken by writes: the next second's turn */
	io_uring_prep_fsync(sqe, s->fd, IORING_FSYNC_DATASYNC);
	io_uring_sqe_set_data64(sqe, DATASYNC_TAG);
	ret = io_uring_submit(&s->ring);
	if (ret < 0)
		s->err = ret;
	else
		s->syncing = true;
	return s->err;
}

static int sink_sync(void *ctx)
{
	struct rec_sink *s = ctx;

	wait_inflight(s, 0, true);
	if (!s->err && !s->stream && fsync(s->fd))
		s->err = -errno;
	return s->err;
}

static void register_pool(struct rec_sink *s)
{
	struct iovec *iov = calloc(s->qd, sizeof(*iov));

	if (!iov)
		return;
	for (unsigned i = 0; i < s->qd; i++) {
		iov[i].iov_base = buffer_at(s, i);
		iov[i].iov_len = s->buf_size;
	}
	s->fixed = io_uring_register_buffers(&s->ring, iov, s->qd) == 0;
	free(iov);
}

int rec_sink_init(struct rec_sink *s, int fd, unsigned qd, size_t buf_size)
{
	int ret;

	struct stat st;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->stream = !fstat(fd, &st) && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode);
	s->qd = s->stream ? 1 : qd;	/* one write at a time keeps a stream in order */
	qd = s->qd;
	s->buf_size = (buf_size + 4095) & ~(size_t)4095;
	ret = io_uring_queue_init(qd, &s->ring, 0);
	if (ret < 0)
		return ret;
	s->pool = aligned_alloc(4096, (size_t)qd * s->buf_size);
	s->free_bufs = calloc(qd, sizeof(*s->free_bufs));
	s->submit_ns = calloc(qd, sizeof(*s->submit_ns));
	s->lens = calloc(qd, sizeof(*s->lens));
	s->offsets = calloc(qd, sizeof(*s->offsets));
	if (!s->pool || !s->free_bufs || !s->submit_ns || !s->lens || !s->offsets) {
		rec_sink_exit(s);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < qd; i++)
		s->free_bufs[s->nfree++] = qd - 1 - i;
	register_pool(s);
	s->sink.write = sink_write;
	s->sink.sync = sink_sync;
	s->sink.ctx = s;
	return 0;
}

void rec_sink_exit(struct rec_sink *s)
{
	if (s->ring.ring_fd > 0) {
		if (s->inflight || s->syncing)
			wait_inflight(s, 0, true);
		io_uring_queue_exit(&s->ring);
	}
	free(s->pool);
	free(s->free_bufs);
	free(s->submit_ns);
	free(s->lens);
	free(s->offsets);
	s->pool = NULL;
}
