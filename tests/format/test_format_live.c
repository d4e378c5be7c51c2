/* SPDX-License-Identifier: MIT */
/*
 * test_format_live.c - reading a file while it is written (ST_READ_LIVE,
 * st_reader_refresh, st_cursor_extend). The bytes of a finished file (four
 * lanes whose chunks overlap in time, metadata written along) land in a
 * real file piece by piece, cut anywhere, even inside a chunk header, and
 * with a later chunk landing before the one before it (an io_uring writer
 * at a queue depth above 1). Events handed out up to the newest less a
 * hold come in exactly the order a cursor over the whole file gives; a
 * half-written chunk is not damage; the trailer ends the live reading, with
 * the footer's counts. A file cut for good reads, once its writer is said
 * to be done, as a cursor reads the cut file. A cursor asked to decode
 * ahead (ST_CURSOR_AHEAD), opened half way, reads the live file the same.
 */
#include <fcntl.h>
#include <unistd.h>

#include "unit_util.h"

#define LANES 4
#define NEVENTS 20000
#define HOLD 5000	/* event-clock ns: more than any lane lags behind another */

/* Four CPUs, each in time order, sealed in turn: chunks overlap by up to a batch. */
static int write_file(const char *test, struct mem_sink *m)
{
	struct st_writer *w = mem_writer_opts(test, m, (struct st_writer_opts){ .chunk_size = 4096,
										 .lanes = LANES });
	int err = 0;

	if (!w)
		return 1;
	for (size_t i = 0; i < NEVENTS && !err; i++) {
		size_t batch = i / 40;
		struct st_ev_sys_exit e = exit_event(1000 + (batch / LANES) * 400 + (i % 40) * 10,
						     (uint32_t)(batch % LANES), (int64_t)i);

		err = st_writer_append(w, &e, sizeof(e));
		if (!err && i % 3000 == 2999) {
			char v[16];

			snprintf(v, sizeof(v), "%zu", i);
			err = st_writer_set_meta(w, "test.progress", v) || st_writer_flush(w);
		}
	}
	return expectf(!st_writer_close(w, NULL, 0) && !err, test, "write");
}

/* The `ret` field (the write order) of every event a cursor over the first len bytes gives. */
static int64_t *reference(const char *test, const struct mem_sink *m, size_t len, size_t *n)
{
	int64_t *seq = malloc(NEVENTS * 2 * sizeof(*seq));
	const struct st_event_header *e;
	struct st_reader *r = NULL;
	struct st_cursor *c;

	*n = 0;
	if (!seq || open_mem(test, &r, m->data, len, 0) ||
	    st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c)) {
		st_reader_close(r);
		free(seq);
		return NULL;
	}
	while (st_cursor_next(c, &e) > 0 && *n < NEVENTS * 2)
		seq[(*n)++] = ((const struct st_ev_sys_exit *)e)->p.ret;
	st_cursor_close(c);
	st_reader_close(r);
	return seq;
}

/* Hand out what the cursor lets out up to `until`, checking it against ref. */
static int take(const char *test, struct st_cursor *c, uint64_t until, const int64_t *ref, size_t nref,
		size_t *got)
{
	const struct st_event_header *e;
	int ret;

	if (expectf(!st_cursor_extend(c, until), test, "extend"))
		return 1;
	while ((ret = st_cursor_next(c, &e)) > 0) {
		int64_t seq = ((const struct st_ev_sys_exit *)e)->p.ret;

		if (expectf(*got < nref && seq == ref[*got] && e->ts <= until, test,
			    "event %zu: seq %lld ts %llu, the whole file's is seq %lld (until %llu)", *got,
			    (long long)seq, (unsigned long long)e->ts,
			    (long long)(*got < nref ? ref[*got] : -1), (unsigned long long)until))
			return 1;
		(*got)++;
	}
	return expectf(ret == 0, test, "cursor: %d", ret);
}

static int put(int fd, const struct mem_sink *m, size_t from, size_t to)
{
	return pwrite(fd, m->data + from, to - from, (off_t)from) != (ssize_t)(to - from);
}

static uint64_t newest(const struct st_reader *r)
{
	return st_reader_info(r)->last_ts;
}

/*
 * The file grows in `steps` pieces; at step `swap`, the piece after the next
 * lands first. `cut`: the file stops short of its last `cut` bytes for good.
 */
static int live_case(const char *test, size_t steps, size_t swap, size_t cut)
{
	char path[] = "/tmp/sttrace-live-unit.XXXXXX";
	struct mem_sink m = { 0 };
	struct st_reader *r = NULL;
	struct st_cursor *c = NULL, *ahead = NULL;	/* ahead: ST_CURSOR_AHEAD, from half way */
	size_t nref = 0, got = 0, got_ahead = 0, written = 0;
	int64_t *ref = NULL;
	int fd = mkstemp(path), bad = fd < 0;

	bad = bad || write_file(test, &m) || !(ref = reference(test, &m, m.len - cut, &nref));
	/* the header and the first metadata and schema chunks, then the reader */
	for (size_t len = 4096; !bad && !r; len += 4096) {
		bad = put(fd, &m, written, len);
		written = len;
		if (st_reader_open(&r, path, ST_READ_LIVE)) {
			st_reader_close(r);
			r = NULL;
		}
	}
	bad = bad || expectf(st_reader_live(r), test, "not live") ||
	      expectf(!st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c), test, "cursor");
	for (size_t k = 1; k <= steps && !bad; k++) {
		size_t end = m.len - cut, to = written + (end - written) / (steps - k + 1);

		if (k == swap && k + 1 < steps) {
			size_t later = to + (end - to) / (steps - k);

			bad = put(fd, &m, to, later) || st_reader_refresh(r, 0) < 0 ||
			      take(test, c, newest(r) > HOLD ? newest(r) - HOLD : 0, ref, nref, &got);
		}
		bad = bad || put(fd, &m, written, to);
		written = to;
		bad = bad || expectf(st_reader_refresh(r, 0) >= 0, test, "refresh") ||
		      expectf(!st_reader_info(r)->damaged_ranges, test, "damage at %zu bytes: %s", written,
			      st_reader_info(r)->damage) ||
		      take(test, c, newest(r) > HOLD ? newest(r) - HOLD : 0, ref, nref, &got);
		/* opened with events chunks to visit (80 or so), extended as the file grows */
		if (!bad && k == steps / 2)
			bad = expectf(!st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW | ST_CURSOR_AHEAD, &ahead),
				      test, "cursor ahead");
		if (!bad && ahead)
			bad = take(test, ahead, newest(r) > HOLD ? newest(r) - HOLD : 0, ref, nref, &got_ahead);
	}
	if (!bad && cut) {
		bad = expectf(st_reader_live(r), test, "no trailer, yet not live") ||
		      expectf(st_reader_refresh(r, 1) >= 0 && !st_reader_live(r), test, "done, yet live") ||
		      expectf(st_reader_info(r)->recovered && !st_reader_info(r)->footer_present, test,
			      "a cut file: recovered %d footer %d", st_reader_info(r)->recovered,
			      st_reader_info(r)->footer_present);
	} else if (!bad) {
		bad = expectf(!st_reader_live(r) && st_reader_info(r)->footer_present, test,
			      "trailer read, live %d", st_reader_live(r)) ||
		      expectf(st_reader_info(r)->events == NEVENTS, test, "%llu events",
			      (unsigned long long)st_reader_info(r)->events) ||
		      expectf(st_meta_get(r, "test.progress") &&
			      !strcmp(st_meta_get(r, "test.progress"), "17999"), test, "metadata %s",
			      st_meta_get(r, "test.progress"));
	}
	bad = bad || take(test, c, UINT64_MAX, ref, nref, &got) ||
	      expectf(got == nref && nref < NEVENTS + !cut, test, "%zu of %zu events", got, nref) ||
	      take(test, ahead, UINT64_MAX, ref, nref, &got_ahead) ||
	      expectf(got_ahead == nref, test, "ahead: %zu of %zu events", got_ahead, nref);
	st_cursor_close(c);
	st_cursor_close(ahead);
	st_reader_close(r);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	free(ref);
	free(m.data);
	return bad;
}

static int test_grows_in_order(void)
{
	return live_case("live.grows", 37, 0, 0);
}

static int test_later_chunk_first(void)
{
	return live_case("live.later_chunk_first", 23, 9, 0);
}

static int test_cut_for_good(void)
{
	return live_case("live.cut", 11, 0, 3000);
}

int main(void)
{
	RUN(test_grows_in_order);
	RUN(test_later_chunk_first);
	RUN(test_cut_for_good);
	return check_failures != 0;
}
