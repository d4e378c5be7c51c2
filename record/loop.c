/* SPDX-License-Identifier: MIT */
/*
 * loop.c - st-record's event loop: signals, the drain timer and the ring
 * buffer's wakeups in one epoll; the once-a-second duties.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "record/recorder.h"

/* The signals the event loop handles. */
void rec_loop_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGCHLD);
	sigaddset(mask, SIGUSR1);
}

static int add_fd(int epfd, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

int rec_loop_open(struct recorder *r)
{
	struct itimerspec its = {
		.it_interval = { 0, DRAIN_INTERVAL_NS },
		.it_value = { 0, DRAIN_INTERVAL_NS },
	};
	sigset_t mask;

	rec_loop_signals(&mask);
	r->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	r->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->sigfd < 0 || r->timerfd < 0 || r->epfd < 0 ||
	    timerfd_settime(r->timerfd, 0, &its, NULL) || add_fd(r->epfd, r->sigfd, EPOLLIN) ||
	    add_fd(r->epfd, r->timerfd, EPOLLIN) ||
	    /* edge-triggered: only the BPF side's forced wakeups, not every waiting record */
	    add_fd(r->epfd, r->probes.ring.fd, EPOLLIN | EPOLLET) ||
	    /* a stream's waiting pieces go out as soon as it takes more (rec_sink_reap) */
	    (r->sink.stream && add_fd(r->epfd, r->sink.fd, EPOLLOUT | EPOLLET)))
		return rec_fail("event loop", strerror(errno));
	return 0;
}

static void on_signal(struct recorder *r)
{
	struct signalfd_siginfo si;

	while (read(r->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			rec_command_reap(r, false);
			if (r->child_done)
				r->stop_reason = "command exited";
		} else if (si.ssi_signo == SIGUSR1) {
			if (r->opts.ring_bytes && !r->pending_trigger) {
				snprintf(r->reason, sizeof(r->reason), "SIGUSR1");
				r->hit = (struct rec_flight_hit){ .ts = rec_now_ns() };
				r->pending_trigger = true;
			}
		} else {
			r->stop_reason = si.ssi_signo == SIGINT ? "interrupted" : "terminated";
			if (r->child && !r->child_done)
				kill(r->child, (int)si.ssi_signo);
		}
	}
}

static void print_status(struct recorder *r, const struct st_writer_stats *st, uint64_t now,
			 uint64_t lost)
{
	double secs = (double)(now - r->last_tick_ns) / 1e9;

	if (r->opts.ring_bytes) {
		fprintf(stderr, "\r%s: %.0f events/s, ring %.1f s (%.1f of %.1f MB), %u triggers, "
			"%llu lost   ", REC_NAME, (double)(st->events - r->tick_events) / secs,
			(double)rec_flight_ring_span_ns(&r->ring) / 1e9, (double)r->ring.bytes / 1e6,
			(double)r->ring.max_bytes / 1e6, r->triggers, (unsigned long long)lost);
		return;
	}

	fprintf(stderr, "\r%s: %.0f events/s, %.1f MB written (%.1fx compressed), %llu lost   ",
		REC_NAME, (double)(st->events - r->tick_events) / secs, (double)st->file_bytes / 1e6,
		st->file_bytes ? (double)st->raw_bytes / (double)st->file_bytes : 0.0,
		(unsigned long long)lost);
}

/*
 * --flush-interval: once appended records have waited that long in open
 * chunks, seal them, so a killed recorder leaves them in the file and a
 * follower sees each record soon after the drain that takes it.
 */
static void seal_waiting(struct recorder *r, uint64_t now)
{
	struct st_writer_stats st;

	st_writer_stats(r->w, &st);
	if (st.events == r->seal_events) {
		r->seal_ns = now;	/* nothing appended since the last seal waits */
		return;
	}
	if (now - r->seal_ns < r->opts.flush_ns)
		return;
	if (st_writer_flush(r->w))
		rec_stop_for_write_error(r);
	st_writer_stats(r->w, &st);
	r->seal_events = st.events;
	r->seal_ns = now;
}

/*
 * The most the BPF ring buffer held at a drain since the recording began,
 * and the longest time between two drains (a recorder that got no CPU, or
 * waited for something): metadata updates that go out with the next seal,
 * only when they grew.
 */
void rec_store_ring_fill(struct recorder *r)
{
	uint64_t fill = r->probes.ring.fill_max, gap = r->probes.ring.gap_max_ns;

	if (fill != r->ring_fill_stored)
		rec_set_meta_u64(r->w, "record.ringbuf_used_max_bytes", fill);
	if (gap != r->drain_gap_stored)
		rec_set_meta_u64(r->w, "record.drain_gap_max_ns", gap);
	r->ring_fill_stored = fill;
	r->drain_gap_stored = gap;
}

/* Once a second: keep the file readable, the counts current, the limits enforced. */
static void tick(struct recorder *r, uint64_t now)
{
	struct st_writer_stats st;
	uint64_t lost;

	st_writer_stats(r->w, &st);
	/* what is written reaches the disk: a host crash loses at most a second
	 * or two, and a failing disk stops the recording now, not at the end */
	if (r->out_fd >= 0 && rec_sink_datasync(&r->sink))
		rec_stop_for_write_error(r);
	lost = rec_store_lost(r);
	rec_store_ring_fill(r);
	if (r->status_line)
		print_status(r, &st, now, lost);
	r->tick_events = st.events;
	r->last_tick_ns = now;
}

static void check_limits(struct recorder *r, uint64_t now)
{
	struct st_writer_stats st;

	if (r->opts.duration_ns && now - r->start_ns >= r->opts.duration_ns)
		r->stop_reason = "duration reached";
	if (r->opts.max_size) {
		st_writer_stats(r->w, &st);
		if (st.file_bytes >= r->opts.max_size)
			r->stop_reason = "size limit reached";
	}
}

void rec_loop_run(struct recorder *r)
{
	struct epoll_event evs[4];

	r->last_tick_ns = rec_now_ns();
	while (!r->stop_reason) {
		int n = epoll_wait(r->epfd, evs, 4, -1);
		uint64_t now, expirations;

		if (n < 0 && errno != EINTR) {
			r->stop_reason = "epoll failed";
			break;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == r->sigfd)
				on_signal(r);
			else if (evs[i].data.fd == r->timerfd) {
				if (read(r->timerfd, &expirations, sizeof(expirations)) < 0)
					r->stop_reason = "timer failed";
				rec_probes_flush(&r->probes, rec_now_ns() - DRAIN_INTERVAL_NS);
			}
		}
		rec_ring_drain(&r->probes.ring);
		rec_sink_reap(&r->sink);
		now = rec_now_ns();
		rec_meta_release(r->tracker, r->w, now - META_HOLD_NS);
		if (r->pending_trigger && !r->stop_reason)
			rec_dump_start(r, now);
		if (r->dump && now >= r->dump_until && !r->stop_reason)
			rec_dump_end(r, now);
		if (rec_rotating(r) && !r->stop_reason && rec_rotation_due(r, now))
			rec_rotate(r, now);
		if (!r->stop_reason)
			seal_waiting(r, now);
		if (now - r->last_tick_ns >= TICK_NS && !r->stop_reason)
			tick(r, now);
		if (!r->stop_reason)
			check_limits(r, now);
	}
}
