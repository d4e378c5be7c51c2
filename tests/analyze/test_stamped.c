/* SPDX-License-Identifier: MIT */
/*
 * A file with stamped issues correlated twice: from whole events (the
 * stamped issues' allocations and merges as events of their own, in time
 * order) and with ST_CURSOR_STAMPED (told by the issues, at the issues).
 * The I/Os that come out are the same, field by field, in the cases where
 * telling them late could differ: a call that returns before its bio's
 * request is issued (the bio handed to another I/O), a request from a
 * plug's cache stamped before its bio was queued, bios stamped just before
 * their queue record (kernels before 6.18 date a bio's queueing so), an
 * allocation 300 ms before its issue (older than the whole events' window:
 * only the out-of-order count differs, as the stamped issue is not out of
 * order), and a mix of all of them; and in files without queue events
 * (their queueings made of the stamps in either reading): requests of 1 to
 * 3 bios, one queued 300 ms before its issue, and 3,000 of them 40 us
 * apart.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/lib/correlate.h"
#include "tests/analyze/events.h"
#include "tests/check.h"

#define DEV (7u << 20)
#define T0 1000000000ull
#define MAX_IOS 4096

struct ios {
	struct an_io io[MAX_IOS];
	int n;
};

static void keep(void *ctx, const struct an_io *io)
{
	struct ios *k = ctx;

	if (k->n < MAX_IOS)
		k->io[k->n] = *io;
	k->n++;
}

static void put(struct st_writer *w, const struct st_event_header *h)
{
	st_writer_append(w, h, h->size);
}

static void queue(struct st_writer *w, uint64_t ts, uint32_t tid, uint64_t bio, uint64_t sector,
		  uint32_t opf)
{
	struct st_ev_block_bio e = { .p = { .bio = bio, .sector = sector, .dev = DEV,
					    .nr_sector = 8, .opf = opf } };

	head(&e.h, ST_EV_block_bio_queue, sizeof(e), ts);
	e.h.pid = e.h.tid = tid;
	put(w, &e.h);
}

/* Request rq of nb bios from sector, issued at ts; g and q[i] the stamps, 0 none. */
static void issue(struct st_writer *w, uint64_t ts, uint32_t tid, uint64_t rq, uint64_t sector,
		  uint32_t nb, const uint64_t *bios, uint64_t g, const uint64_t *q, uint32_t opf)
{
	struct st_ev_block_rq_issue_stamped e = { .p = { .rq = rq, .sector = sector, .dev = DEV,
							 .nr_sector = 8 * nb, .bytes = 4096 * nb,
							 .opf = opf, .nr_bios = nb } };

	head(&e.h, ST_EV_block_rq_issue_stamped, sizeof(e), ts);
	e.h.pid = e.h.tid = tid;
	for (uint32_t i = 0; i < nb; i++) {
		e.p.bios[i] = bios[i];
		e.p.bio_sectors[i] = 8;
		if (q && q[i]) {
			e.p.stamped |= ST_STAMPED_QUEUE(i);
			e.p.queue_ago[i] = (uint32_t)(ts - q[i]);
		}
	}
	if (g) {
		e.p.stamped |= ST_STAMPED_GETRQ;
		e.p.getrq_ago = (uint32_t)(ts - g);
	}
	put(w, &e.h);
}

static void complete(struct st_writer *w, uint64_t ts, uint64_t rq, uint32_t bytes)
{
	struct st_ev_block_rq_complete_compact e = { .p = { .rq = rq, .dev = DEV, .bytes = bytes } };

	head(&e.h, ST_EV_block_rq_complete_compact, sizeof(e), ts);
	e.h.pid = e.h.tid = 0;
	put(w, &e.h);
}

static void call(struct st_writer *w, uint16_t type, uint64_t ts, uint32_t tid, int64_t ret)
{
	struct st_ev_sys_enter e = { .p = { .fd = 3, .count = 4096, .offset = -1 } };
	struct st_ev_sys_exit x = { .p = { .ret = ret } };

	if ((st_event_kind(type) & ST_KIND_MASK) == ST_KIND_SYS_ENTER) {
		head(&e.h, type, sizeof(e), ts);
		e.h.pid = e.h.tid = tid;
		put(w, &e.h);
	} else {
		head(&x.h, type, sizeof(x), ts);
		x.h.pid = x.h.tid = tid;
		put(w, &x.h);
	}
}

/* A read call that queues bio A and returns before A's request is issued. */
static void hand_off(struct st_writer *w, uint64_t t, uint64_t bio, uint64_t rq)
{
	uint64_t a[1] = { bio };

	call(w, ST_EV_sys_enter_read, t, 10, 0);
	queue(w, t + 100, 10, bio, rq, ST_OP_READ);
	call(w, ST_EV_sys_exit_read, t + 300, 10, 4096);
	issue(w, t + 50000, 0, rq, rq, 1, a, t + 200, NULL, ST_OP_READ);
	complete(w, t + 90000, rq, 4096);
}

/* Two bios of one call in one request from a plug's cache: its stamp before A's queueing. */
static void plug_cache(struct st_writer *w, uint64_t t, uint64_t bio, uint64_t rq)
{
	uint64_t b[2] = { bio, bio + 0x100 };

	call(w, ST_EV_sys_enter_pwritev, t, 11, 0);
	queue(w, t + 1000, 11, b[0], rq, ST_OP_WRITE);
	queue(w, t + 1500, 11, b[1], rq + 8, ST_OP_WRITE);
	issue(w, t + 5000, 11, rq, rq, 2, b, t + 500, NULL, ST_OP_WRITE);
	complete(w, t + 60000, rq, 8192);
	call(w, ST_EV_sys_exit_pwritev, t + 61000, 11, 8192);
}

/*
 * B (thread tb) back-merges into the request A (thread ta) was allocated
 * for, 200 ns after A's queueing; both stamped `early` ns before their
 * queue records.
 */
static void back_merge(struct st_writer *w, uint64_t t, uint64_t bio, uint64_t rq, uint64_t early,
		       uint32_t ta, uint32_t tb)
{
	uint64_t b[2] = { bio, bio + 0x100 }, q[2] = { t + 1000 - early, t + 1500 - early };

	queue(w, t + 1000, ta, b[0], rq, ST_OP_WRITE);
	queue(w, t + 1500, tb, b[1], rq + 8, ST_OP_WRITE);
	issue(w, t + 5000, ta, rq, rq, 2, b, t + 1200, q, ST_OP_WRITE);
	complete(w, t + 60000, rq, 8192);
}

/* Kernels before 6.18: bios stamped 200 ns before their queue records. */
static void stamped_early(struct st_writer *w, uint64_t t, uint64_t bio, uint64_t rq)
{
	back_merge(w, t, bio, rq, 200, 12, 13);
}

/* The usual merge: stamped at their queue records, of one thread. */
static void merged(struct st_writer *w, uint64_t t, uint64_t bio, uint64_t rq)
{
	back_merge(w, t, bio, rq, 0, 14, 14);
}

/* Allocated 10 us after its queueing, issued 300 ms later; 5 I/Os in between. */
static void late(struct st_writer *w, uint64_t t, uint64_t bio, uint64_t rq)
{
	uint64_t a[1] = { bio };

	queue(w, t, 20, bio, rq, ST_OP_WRITE);
	for (uint64_t k = 1; k <= 5; k++)
		merged(w, t + k * 50000000ull, bio + k * 0x1000, rq + k * 0x1000);
	issue(w, t + 300000000ull, 0, rq, rq, 1, a, t + 10000, NULL, ST_OP_WRITE);
	complete(w, t + 300100000ull, rq, 4096);
}

/*
 * Without queue events (st-record system-wide: the stamps alone date the
 * queueings): a pwritev of 1 to 3 bios in one request, some unstamped,
 * allocated before or after its first bio's queueing, issued by the
 * calling thread, completed before the call returns.
 */
static void unqueued(struct st_writer *w, uint64_t t, uint64_t bio, uint64_t rq)
{
	uint32_t nb = 1 + (uint32_t)(rq >> 12) % 3, tid = 30 + (uint32_t)(rq >> 12) % 2;
	uint64_t b[3] = { bio, bio + 0x100, bio + 0x200 }, q[3] = { t + 1000, t + 1500, 0 };
	uint64_t g = (rq >> 12) % 4 ? t + 1200 : t + 800;

	if ((rq >> 12) % 5 == 0)
		q[1] = 0;
	call(w, ST_EV_sys_enter_pwritev, t, tid, 0);
	issue(w, t + 5000, tid, rq, rq, nb, b, g, q, ST_OP_WRITE);
	complete(w, t + 60000, rq, 4096 * nb);
	call(w, ST_EV_sys_exit_pwritev, t + 61000, tid, 4096 * nb);
}

/* Without queue events: queued and allocated 300 ms before the issue, 5 I/Os in between. */
static void unqueued_late(struct st_writer *w, uint64_t t, uint64_t bio, uint64_t rq)
{
	uint64_t a[1] = { bio }, q[1] = { t };

	for (uint64_t k = 1; k <= 5; k++)
		unqueued(w, t + k * 50000000ull, bio + k * 0x1000, rq + k * 0x1000);
	issue(w, t + 300000000ull, 0, rq, rq, 1, a, t + 10000, q, ST_OP_WRITE);
	complete(w, t + 300100000ull, rq, 4096);
}

typedef void (*scenario_fn)(struct st_writer *w, uint64_t t, uint64_t bio, uint64_t rq);

/* Correlate path with the cursor's flags: the I/Os in *k, the counts in *st. */
static int correlate(const char *path, unsigned flags, struct ios *k, struct an_corr_stats *st)
{
	struct st_reader *r = NULL;
	struct st_cursor *cur = NULL;
	struct an_corr *c = NULL;
	const struct st_event_header *ev;
	int ret = -1;

	k->n = 0;
	if (!st_reader_open(&r, path, 0) && !st_cursor_open(r, 0, UINT64_MAX, flags, &cur) &&
	    !an_corr_new(&c, 0, keep, k)) {
		while ((ret = st_cursor_next(cur, &ev)) > 0)
			an_corr_event(c, ev);
		an_corr_finish(c);
		*st = *an_corr_stats(c);
	}
	an_corr_free(c);
	st_cursor_close(cur);
	st_reader_close(r);
	return ret;
}

/*
 * The file of `count` scenarios `fn` `gap` ns apart (with fn NULL, those
 * with queue events in turn) correlated both ways: the same I/Os, merges
 * and counts; `late_ones` the out-of-order events the whole events have
 * more.
 */
static void same_both_ways(const char *name, scenario_fn fn, uint64_t count, uint64_t gap,
			   uint64_t late_ones)
{
	static struct ios whole, stamped;
	static const scenario_fn all[] = { hand_off, plug_cache, stamped_early, merged };
	char path[] = "/tmp/an-stamped.XXXXXX", n[96];
	struct an_corr_stats ws = { 0 }, ss = { 0 };
	struct st_writer *w;
	int fd = mkstemp(path), rw, rs, diff = -1;

	if (fd >= 0)
		close(fd);
	w = builtin_writer(path, NULL);
	for (uint64_t k = 0; w && k < count; k++)
		(fn ? fn : all[k % 4])(w, T0 + k * gap, 0xa0000 + (k % 7) * 0x1000,
				       0x100000 + k * 0x1000);
	if (w)
		st_writer_close(w, NULL, 0);
	rw = correlate(path, 0, &whole, &ws);
	rs = correlate(path, ST_CURSOR_STAMPED, &stamped, &ss);
	unlink(path);
	for (int i = 0; rw == 0 && rs == 0 && whole.n == stamped.n && i < whole.n && i < MAX_IOS; i++)
		if (memcmp(&whole.io[i], &stamped.io[i], sizeof(whole.io[i]))) {
			diff = i;
			break;
		}
	snprintf(n, sizeof(n), "stamped.%s.same_ios", name);
	check(rw == 0 && rs == 0 && whole.n == stamped.n && whole.n > 0 && diff < 0, n,
	      "read %d/%d, %d I/Os from whole events, %d from stamped issues, first differing %d",
	      rw, rs, whole.n, stamped.n, diff);
	snprintf(n, sizeof(n), "stamped.%s.same_counts", name);
	check(ws.merges == ss.merges && ws.ios == ss.ios && ws.incomplete == ss.incomplete &&
	      ws.out_of_order == ss.out_of_order + late_ones, n,
	      "merges %" PRIu64 "/%" PRIu64 ", I/Os %" PRIu64 "/%" PRIu64 ", out of order %" PRIu64
	      "/%" PRIu64, ws.merges, ss.merges, ws.ios, ss.ios, ws.out_of_order, ss.out_of_order);
}

/*
 * What the cases must show for the comparison to mean something: the
 * handed-off bio's I/O has its allocation; bios stamped before their
 * queue records merge and have their allocation (dated no earlier than
 * the record), as does the request from a plug's cache: four I/Os with
 * an allocation, three merges.
 */
static void cases_hold(void)
{
	static struct ios k;
	struct an_corr_stats st = { 0 };
	char path[] = "/tmp/an-stamped.XXXXXX";
	struct st_writer *w;
	int fd = mkstemp(path), heir_g = 0, with_g = 0;

	if (fd >= 0)
		close(fd);
	w = builtin_writer(path, NULL);
	if (w) {
		hand_off(w, T0, 0xa000, 0x100000);
		merged(w, T0 + 400000, 0xb000, 0x200000);
		stamped_early(w, T0 + 800000, 0xc000, 0x300000);
		plug_cache(w, T0 + 1200000, 0xd000, 0x400000);
		st_writer_close(w, NULL, 0);
	}
	correlate(path, ST_CURSOR_STAMPED, &k, &st);
	unlink(path);
	for (int i = 0; i < k.n && i < MAX_IOS; i++) {
		heir_g += k.io[i].ts[AN_TS_GETRQ] == T0 + 200;
		with_g += k.io[i].ts[AN_TS_GETRQ] >= k.io[i].ts[AN_TS_QUEUE] && k.io[i].ts[AN_TS_GETRQ];
	}
	check(heir_g == 1 && with_g == 4 && st.merges == 3, "stamped.cases_hold",
	      "%d I/Os with the handed-off allocation, %d with one, %" PRIu64 " merges", heir_g,
	      with_g, st.merges);
}

int main(void)
{
	same_both_ways("hand_off", hand_off, 1, 0, 0);
	same_both_ways("plug_cache", plug_cache, 1, 0, 0);
	same_both_ways("stamped_early", stamped_early, 1, 0, 0);
	same_both_ways("merged", merged, 1, 0, 0);
	same_both_ways("late", late, 1, 0, 1);
	same_both_ways("mixed", NULL, 200, 400000, 0);
	same_both_ways("unqueued", unqueued, 1, 0, 0);
	same_both_ways("unqueued_late", unqueued_late, 1, 0, 1);
	/* 40 us apart: a request is issued while the next is queued, some complete out of order */
	same_both_ways("unqueued_many", unqueued, 3000, 40000, 0);
	cases_hold();
	return check_failures != 0;
}
