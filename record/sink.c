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
 * A stream (a pipe, FIFO or socket: `st-record -o -`) has no offsets and may
 * stop taking bytes for as long as its reader likes, so the event loop never
 * waits for it: the pieces of the file wait in a FIFO of their own, written
 * in order, without blocking (a file description of our own opened
 * O_NONBLOCK), whenever the stream takes more (stream_pump: at each turn of
 * the loop, which also wakes when the stream becomes writable). Once
 * --stream-buffer bytes wait, the sink is congested (st_sink.congested)
 * and the writer drops whole events chunks,
 * counted lost (ST_LOST_DROPPED), while the drain of the BPF ring goes on.
 * The file's beginning, metadata, lost counts and footer are never dropped.
 * At the end, the stream gets until a deadline (rec_sink_set_deadline) to
 * take the rest; after it the stream ends where it stopped (the reader reads
 * up to its last complete chunk), and the bytes not written are counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/record.h"

static char *buffer_at(struct rec_sink *s, unsigned i)
{
	return s->pool + (size_t)i * s->buf_size;
}

/* A piece of a stream's file waiting to be written: what one writer write() gave. */
struct rec_piece {
	struct rec_piece *next;
	size_t len, done;
	uint64_t queued_ns;
	char data[];
};

static void write_done(struct rec_sink *s, uint64_t submit_ns)
{
	uint64_t lat = rec_now_ns() - submit_ns;

	s->writes++;
	s->lat_sum_ns += lat;
	if (lat > s->lat_max_ns)
		s->lat_max_ns = lat;
}

/* The bytes of buf the stream takes without blocking; s->err set on a failure. */
static size_t stream_take(struct rec_sink *s, const char *buf, size_t len)
{
	size_t done = 0;

	while (done < len && !s->err) {
		ssize_t n = write(s->fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0)
			s->err = -errno;
		else
			done += (size_t)n;
	}
	return done;
}

/* Write the waiting pieces, in order, while the stream takes them. */
static void stream_pump(struct rec_sink *s)
{
	struct rec_piece *p;

	while (!s->err && (p = s->head)) {
		p->done += stream_take(s, p->data + p->done, p->len - p->done);
		if (p->done < p->len)
			return;
		write_done(s, p->queued_ns);
		s->queued -= p->len;
		s->head = p->next;
		if (!s->head)
			s->tail = NULL;
		free(p);
	}
}

/*
 * A chunk of the file to the stream: at once when nothing waits and the
 * stream takes it all (no copy), else its rest queued behind what waits.
 */
static int stream_write(struct rec_sink *s, const void *buf, size_t len)
{
	uint64_t now = rec_now_ns();
	size_t done = 0;
	struct rec_piece *p;

	if (!s->head) {
		done = stream_take(s, buf, len);
		if (s->err || done == len) {
			if (!s->err)
				write_done(s, now);
			return s->err;
		}
	}
	p = malloc(sizeof(*p) + len - done);
	if (!p)
		return s->err = -ENOMEM;
	*p = (struct rec_piece){ .len = len - done, .queued_ns = now };
	memcpy(p->data, (const char *)buf + done, len - done);
	if (s->tail)
		s->tail->next = p;
	else
		s->head = p;
	s->tail = p;
	s->queued += p->len;
	if (s->queued > s->queued_max)
		s->queued_max = s->queued;
	stream_pump(s);
	return s->err;
}

/* --stream-buffer bytes wait already (the last chunk taken may pass it, by one chunk). */
static int stream_congested(void *ctx)
{
	struct rec_sink *s = ctx;

	stream_pump(s);
	/* a failed stream is not congested: the writer's next write hears why */
	return !s->err && s->queued >= s->queue_bound;
}

void rec_sink_set_deadline(struct rec_sink *s, uint64_t deadline_ns)
{
	s->deadline_ns = deadline_ns;
}

/* Write what waits, waiting for the stream until the deadline; what is left is counted. */
static int stream_sync(struct rec_sink *s)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLOUT };

	for (stream_pump(s); s->head && !s->err; stream_pump(s)) {
		uint64_t now = rec_now_ns();

		if (now >= s->deadline_ns) {
			s->unwritten = s->queued - s->head->done;
			return s->err = -ETIME;
		}
		if (poll(&pfd, 1, (int)((s->deadline_ns - now) / 1000000 + 1)) < 0 && errno != EINTR)
			s->err = -errno;
	}
	return s->err;
}

/*
 * A file description of the stream's own, non-blocking: O_NONBLOCK on the one
 * st-record was given would reach every other process sharing it. Reopened
 * through /proc (pipes and FIFOs); a socket cannot be, and gets the flag on
 * its own description, restored at the end.
 */
static int stream_open(struct rec_sink *s, int fd)
{
	char path[64];
	int flags;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	s->fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (s->fd >= 0) {
		s->own_fd = true;
		return 0;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	s->fd = fd;
	s->saved_flags = flags;
	s->restore_flags = true;
	return 0;
}

/* The datasync's completion tag; a write's is its pool buffer's index. */
#define DATASYNC_TAG UINT64_MAX

static void complete(struct rec_sink *s, struct io_uring_cqe *cqe)
{
	uint64_t tag = io_uring_cqe_get_data64(cqe);
	unsigned b = (unsigned)tag;
	int res = cqe->res;

	io_uring_cqe_seen(&s->ring, cqe);
	if (tag == DATASYNC_TAG) {
		s->syncing = false;
		if (res < 0 && !s->err)
			s->err = res;
		return;
	}
	write_done(s, s->submit_ns[b]);
	if (res < 0 && !s->err)
		s->err = res;
	else if (res >= 0 && (size_t)res < s->lens[b] && !s->err)
		/* the rest once more, synchronously: usually it reports why (ENOSPC) */
		s->err = st_pwrite_all(s->fd, buffer_at(s, b) + res, s->lens[b] - (size_t)res,
				       s->offsets[b] + (uint64_t)res);
	s->free_bufs[s->nfree++] = b;
	s->inflight--;
}

void rec_sink_reap(struct rec_sink *s)
{
	struct io_uring_cqe *cqe;

	if (s->stream) {
		stream_pump(s);
		return;
	}
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
	if (s->stream) {
		if (off != s->stream_pos)
			return s->err = -ESPIPE;	/* a stream cannot go back: the writer never does */
		s->stream_pos = off + len;
		return stream_write(s, buf, len);
	}
	if (len > s->buf_size) {
		/* the footer of a long recording: rare and final, written in place */
		wait_inflight(s, 0, false);
		if (!s->err)
			s->err = st_pwrite_all(s->fd, buf, len, off);
		return s->err;
	}
	wait_inflight(s, s->qd - 1, false);
	if (s->err)
		return s->err;
	b = s->free_bufs[--s->nfree];
	memcpy(buffer_at(s, b), buf, len);
	sqe = io_uring_get_sqe(&s->ring);
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

	if (s->stream)
		return stream_sync(s);
	wait_inflight(s, 0, true);
	if (!s->err && fsync(s->fd))
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

int rec_sink_init(struct rec_sink *s, int fd, unsigned qd, size_t buf_size, uint64_t stream_bound)
{
	int ret;

	struct stat st;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->buf_size = (buf_size + 4095) & ~(size_t)4095;
	s->sink.write = sink_write;
	s->sink.sync = sink_sync;
	s->sink.ctx = s;
	s->stream = !fstat(fd, &st) && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode);
	if (s->stream) {
		s->queue_bound = stream_bound;
		s->deadline_ns = UINT64_MAX;
		s->sink.congested = stream_congested;
		return stream_open(s, fd);
	}
	s->qd = qd;
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
	return 0;
}

void rec_sink_exit(struct rec_sink *s)
{
	while (s->head) {
		struct rec_piece *p = s->head;

		s->head = p->next;
		free(p);
	}
	s->tail = NULL;
	if (s->own_fd)
		close(s->fd);
	else if (s->restore_flags)
		fcntl(s->fd, F_SETFL, s->saved_flags);
	s->own_fd = s->restore_flags = false;
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
