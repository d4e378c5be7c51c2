/* SPDX-License-Identifier: MIT */
/*
 * test_format_cursor.c - the cursor returns events in timestamp order
 * (stable for equal timestamps) when records are in order, nearly in order
 * or not in order at all within a chunk, and across chunks whose time
 * ranges overlap or not, all in one file; [from, to] windows return exactly
 * the events inside; seeking never decompresses chunks wholly before
 * `from` (proved by corrupting one and seeking past it); a damaged chunk
 * costs its own events and an error, then the cursor goes on; st_chunk_decode
 * from several threads at once gives what one thread gets; a cursor decoding
 * ahead (ST_CURSOR_AHEAD) hands out what one without it does, errors
 * included, and can be closed at any point.
 */
#include <pthread.h>
#include <unistd.h>

#include "unit_util.h"

/* Events carry their write position in `ret`, to check stability. */
struct written {
	uint64_t ts;
	int64_t seq;
};

static int cmp_written(const void *a, const void *b)
{
	const struct written *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Writes n events whose timestamps come from ts_of(i), sorted copies into
 * *sorted (by ts, then write order), the file into m.
 */
static int write_events(const char *test, struct mem_sink *m, size_t chunk, size_t n,
			uint64_t (*ts_of)(size_t i), struct written *sorted)
{
	struct st_writer *w = mem_writer(test, m, chunk, 1);
	int err = 0;

	if (!w)
		return 1;
	for (size_t i = 0; i < n && !err; i++) {
		struct st_ev_sys_exit e = exit_event(ts_of(i), (uint32_t)(i % 4), (int64_t)i);

		err = st_writer_append(w, &e, sizeof(e));
		sorted[i] = (struct written){ e.h.ts, (int64_t)i };
	}
	qsort(sorted, n, sizeof(*sorted), cmp_written);
	return expectf(!st_writer_close(w, NULL, 0) && !err, test, "write");
}

/* The cursor over [from, to] returns exactly the sorted events inside, in order. */
static int check_window(const char *test, struct st_reader *r, const struct written *sorted,
			size_t n, uint64_t from, uint64_t to)
{
	const struct st_field *ret_field = st_field_find(st_type_by_id(r, ST_EV_sys_exit_pread64), "ret");
	const struct st_event_header *e;
	struct st_cursor *c;
	size_t i = 0;
	int ret, bad = 0;

	while (i < n && sorted[i].ts < from)
		i++;
	if (expectf(!st_cursor_open(r, from, to, ST_CURSOR_RAW, &c), test, "cursor"))
		return 1;
	while (!bad && (ret = st_cursor_next(c, &e)) > 0) {
		bad = expectf(i < n && sorted[i].ts <= to && e->ts == sorted[i].ts &&
			      st_field_i64(e, ret_field, 0) == sorted[i].seq, test,
			      "[%llu, %llu] event %zu: ts %llu seq %lld, expected ts %llu seq %lld",
			      (unsigned long long)from, (unsigned long long)to, i,
			      (unsigned long long)e->ts, (long long)st_field_i64(e, ret_field, 0),
			      (unsigned long long)sorted[i].ts, (long long)sorted[i].seq);
		i++;
	}
	st_cursor_close(c);
	return bad || expectf(ret == 0 && (i == n || sorted[i].ts > to), test,
			      "[%llu, %llu]: stopped at %zu of %zu (ret %d)", (unsigned long long)from,
			      (unsigned long long)to, i, n, ret);
}

/* Shuffled within small windows, with many equal timestamps. */
static uint64_t ts_jittered(size_t i)
{
	return 1000 + (i / 4) * 10 + (rnd_below(4) ? rnd_below(30) : 0);
}

/* Four CPUs flushed in turn: batches of 50 events whose time ranges overlap. */
static uint64_t ts_per_cpu_batches(size_t i)
{
	size_t batch = i / 50, cpu = batch % 4, round = batch / 4;

	return round * 500 + (i % 50) * 10 + cpu;
}

static int cursor_case(const char *test, uint64_t (*ts_of)(size_t), size_t n, size_t chunk)
{
	struct written *sorted = malloc(n * sizeof(*sorted));
	struct mem_sink m = { 0 };
	struct st_reader *r = NULL;
	int bad;

	rnd_seed(3);
	bad = write_events(test, &m, chunk, n, ts_of, sorted) || open_mem(test, &r, m.data, m.len, 0);
	bad = bad || expectf(st_chunk_count(r) > 10, test, "%zu chunks", st_chunk_count(r)) ||
	      check_window(test, r, sorted, n, 0, UINT64_MAX);
	for (int k = 0; k < 40 && !bad; k++) {
		uint64_t a = sorted[rnd_below(n)].ts + rnd_below(3) - 1, b = sorted[rnd_below(n)].ts;

		bad = check_window(test, r, sorted, n, a < b ? a : b, a < b ? b : a);
	}
	st_reader_close(r);
	free(m.data);
	free(sorted);
	return bad;
}

static int test_out_of_order_within_chunks(void)
{
	return cursor_case(__func__, ts_jittered, 5000, 4096);
}

static int test_overlapping_chunks(void)
{
	return cursor_case(__func__, ts_per_cpu_batches, 4000, 1600);
}

/* No order at all, many equal timestamps: past the insertion sort's budget. */
static uint64_t ts_shuffled(size_t i)
{
	return 1000 + i % 7 + rnd_below(800);
}

static int test_shuffled_chunks(void)
{
	return cursor_case(__func__, ts_shuffled, 5000, 8192);
}

static uint64_t ts_linear(size_t i)
{
	return 100 + i * 10;
}

/*
 * Batches of 50 in order, each starting 200 before the previous one: chunks
 * written later begin earlier and share timestamps with earlier ones.
 */
static uint64_t ts_descending_batches(size_t i)
{
	return 10000 - (i / 50) * 200 + (i % 50) * 10;
}

/*
 * One file for both ways the cursor reads chunks: in-order chunks that do not
 * overlap (returned straight from the buffer), then in-order chunks that
 * overlap (the first starting at the last timestamp before it), then
 * shuffled ones (merged through sorted keys), then in order again from inside
 * the shuffled ones' range, then in-order chunks that begin
 * earlier than the ones written before them.
 */
static uint64_t ts_mixed(size_t i)
{
	const size_t part = 1200;

	switch (i / part) {
	case 0:
		return ts_linear(i);
	case 1:
		return ts_linear(part - 1) + ts_per_cpu_batches(i - part);
	case 2:
		return ts_linear(part - 1) + 2000 + ts_jittered(i - 2 * part);
	case 3:
		return ts_linear(part - 1) + 5900 + ts_linear(i - 3 * part);
	default:
		return ts_linear(part - 1) + 20000 + ts_descending_batches(i - 4 * part);
	}
}

static int test_in_order_then_overlapping_chunks(void)
{
	return cursor_case(__func__, ts_mixed, 6000, 1600);
}

/*
 * Corrupts the payload of the second events chunk (the footer still lists
 * it): a cursor from 0 fails on it, a cursor starting after its last event
 * never touches it and returns every later event.
 */
static int test_seek_skips_earlier_chunks(void)
{
	const size_t n = 3000;
	struct written *sorted = malloc(n * sizeof(*sorted));
	struct mem_sink m = { 0 };
	struct st_reader *r = NULL;
	const struct st_chunk_info *victim = NULL;
	const struct st_event_header *e;
	struct st_cursor *c;
	int bad, ret, seen = 0;

	bad = write_events(__func__, &m, 2048, n, ts_linear, sorted) ||
	      open_mem(__func__, &r, m.data, m.len, 0);
	for (size_t i = 0; !bad && i < st_chunk_count(r); i++)
		if (st_chunk_at(r, i)->kind == ST_CHUNK_EVENTS && ++seen == 2)
			victim = st_chunk_at(r, i);
	bad = bad || expectf(victim != NULL, __func__, "no second events chunk");
	if (!bad) {
		m.data[victim->offset + victim->stored_size - 3] ^= 0x40;
		bad = expectf(!st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c), __func__, "cursor");
	}
	if (!bad) {
		while ((ret = st_cursor_next(c, &e)) > 0)
			;
		st_cursor_close(c);
		bad = expectf(ret == ST_ECHECKSUM && strstr(st_reader_errmsg(r), "checksum"), __func__,
			      "reading through the corrupt chunk gave %d (%s)", ret, st_reader_errmsg(r));
	}
	bad = bad || check_window(__func__, r, sorted, n, victim->last_ts + 1, UINT64_MAX);
	st_reader_close(r);
	free(m.data);
	free(sorted);
	return bad;
}

/*
 * A listed events chunk whose payload turns out damaged, among chunks that
 * overlap it in time: the cursor returns its error once, naming the chunk,
 * and the next calls go on with every other event, in order.
 */
static int test_damaged_chunk_skipped(void)
{
	const size_t n = 3000;
	struct written *sorted = malloc(n * sizeof(*sorted));
	char *in_victim = calloc(n, 1), where[64];
	struct mem_sink m = { 0 };
	struct st_reader *r = NULL;
	struct st_chunk_buf buf = { 0 };
	const struct st_chunk_info *victim = NULL;
	const struct st_event_header *e;
	const struct st_field *ret_field;
	struct st_cursor *c = NULL;
	size_t i = 0, errors = 0, at = 0, seen = 0;
	int bad, ret;

	bad = write_events(__func__, &m, 2048, n, ts_per_cpu_batches, sorted) ||
	      open_mem(__func__, &r, m.data, m.len, 0);
	for (size_t k = 0; !bad && k < st_chunk_count(r) && !victim; k++)
		if (st_chunk_at(r, k)->kind == ST_CHUNK_EVENTS && ++seen == 3 && !st_chunk_decode(r, k, &buf))
			victim = st_chunk_at(r, k);
	bad = bad || expectf(victim != NULL, __func__, "no third events chunk");
	if (bad)
		goto out;
	ret_field = st_field_find(st_type_by_id(r, ST_EV_sys_exit_pread64), "ret");
	for (size_t pos = 0; st_chunk_next(&buf, &pos, &e) > 0;)
		in_victim[st_field_i64(e, ret_field, 0)] = 1;
	m.data[victim->offset + victim->stored_size - 3] ^= 0x40;
	snprintf(where, sizeof(where), "at offset %llu:", (unsigned long long)victim->offset);
	bad = expectf(!st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c), __func__, "cursor");
	while (!bad && (ret = st_cursor_next(c, &e)) != 0) {
		if (ret < 0) {
			bad = expectf(ret == ST_ECHECKSUM && strstr(st_reader_errmsg(r), where), __func__,
				      "error %d (%s), want the checksum of the chunk %s", ret,
				      st_reader_errmsg(r), where);
			errors++;
			continue;
		}
		while (at < n && in_victim[sorted[at].seq])
			at++;
		bad = expectf(at < n && e->ts == sorted[at].ts &&
			      st_field_i64(e, ret_field, 0) == sorted[at].seq, __func__,
			      "event %zu: ts %llu seq %lld, want the sorted event %zu", i,
			      (unsigned long long)e->ts, (long long)st_field_i64(e, ret_field, 0), at);
		at++;
		i++;
	}
	while (at < n && in_victim[sorted[at].seq])
		at++;
	bad = bad || expectf(errors == 1 && at == n && i == n - victim->events, __func__,
			     "%zu errors, %zu of %zu events (the damaged chunk held %u)", errors, i, n,
			     victim->events);
out:
	st_cursor_close(c);
	st_chunk_buf_free(&buf);
	st_reader_close(r);
	free(m.data);
	free(sorted);
	free(in_victim);
	return bad;
}

/* Two cursors and a chunk decode on one reader do not disturb each other. */
static int test_independent_cursors(void)
{
	const size_t n = 2000;
	struct written *sorted = malloc(n * sizeof(*sorted));
	struct mem_sink m = { 0 };
	struct st_reader *r = NULL;
	const struct st_event_header *a, *b;
	struct st_cursor *c1 = NULL, *c2 = NULL;
	size_t count = 0;
	int bad;

	bad = write_events(__func__, &m, 1024, n, ts_linear, sorted) ||
	      open_mem(__func__, &r, m.data, m.len, 0) ||
	      expectf(!st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c1) &&
		      !st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c2),
		      __func__, "cursors");
	while (!bad && st_cursor_next(c1, &a) > 0) {
		bad = expectf(st_cursor_next(c2, &b) > 0 && a != b && !memcmp(a, b, a->size), __func__,
			      "cursors differ at %zu", count);
		count++;
	}
	bad = bad || expectf(count == n && st_cursor_next(c2, &b) == 0, __func__, "%zu events", count);
	st_cursor_close(c1);
	st_cursor_close(c2);
	st_reader_close(r);
	free(m.data);
	free(sorted);
	return bad;
}

struct decoder {
	struct st_reader *r;
	uint64_t sum;	/* XXH64 of every decoded chunk, chained */
	int err;
};

static void *decode_all(void *arg)
{
	struct decoder *d = arg;
	struct st_chunk_buf buf = { 0 };

	for (int pass = 0; pass < 3 && !d->err; pass++) {
		d->sum = 0;
		for (size_t i = 0; i < st_chunk_count(d->r) && !d->err; i++) {
			d->err = st_chunk_decode(d->r, i, &buf);
			d->sum = XXH64(buf.data, buf.len, d->sum);
		}
	}
	st_chunk_buf_free(&buf);
	return NULL;
}

static int test_parallel_decode(void)
{
	const size_t n = 20000;
	struct written *sorted = malloc(n * sizeof(*sorted));
	struct mem_sink m = { 0 };
	struct st_reader *r = NULL;
	struct decoder one, many[4];
	pthread_t tid[4];
	char path[] = "/tmp/test_format_cursor.XXXXXX";
	int fd = mkstemp(path), bad;

	/* Through a file, so the threads share the reader's descriptor (pread). */
	bad = expectf(fd >= 0, __func__, "mkstemp") ||
	      write_events(__func__, &m, 4096, n, ts_linear, sorted) ||
	      expectf(write(fd, m.data, m.len) == (ssize_t)m.len, __func__, "write") ||
	      expectf(!st_reader_open(&r, path, 0), __func__, "open");
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	if (!bad) {
		one = (struct decoder){ r, 0, 0 };
		decode_all(&one);
		for (int i = 0; i < 4; i++) {
			many[i] = (struct decoder){ r, 0, 0 };
			pthread_create(&tid[i], NULL, decode_all, &many[i]);
		}
		for (int i = 0; i < 4; i++)
			pthread_join(tid[i], NULL);
		for (int i = 0; i < 4 && !bad; i++)
			bad = expectf(!one.err && !many[i].err && many[i].sum == one.sum, __func__,
				      "thread %d: err %d, sum %llx vs %llx", i, many[i].err,
				      (unsigned long long)many[i].sum, (unsigned long long)one.sum);
	}
	st_reader_close(r);
	free(m.data);
	free(sorted);
	return bad;
}

/*
 * Cursors over [from, to] without and with ST_CURSOR_AHEAD, side by side, on
 * readers of the same bytes: the same answers call by call, the same bytes
 * for each event, the same message for each error. Stops after `stop_after`
 * events (0: at the end), closing the cursors there.
 */
static int same_ahead(const char *test, struct st_reader *r1, struct st_reader *r2, unsigned flags,
		      uint64_t from, uint64_t to, size_t stop_after, size_t *events, size_t *errors)
{
	const struct st_event_header *a, *b;
	struct st_cursor *c1 = NULL, *c2 = NULL;
	int bad, ret1, ret2;

	*events = *errors = 0;
	bad = expectf(!st_cursor_open(r1, from, to, flags, &c1) &&
		      !st_cursor_open(r2, from, to, flags | ST_CURSOR_AHEAD, &c2), test, "cursors");
	while (!bad && (!stop_after || *events < stop_after)) {
		ret1 = st_cursor_next(c1, &a);
		ret2 = st_cursor_next(c2, &b);
		bad = expectf(ret1 == ret2, test, "[%llu, %llu] after %zu events: %d without, %d ahead (%s)",
			      (unsigned long long)from, (unsigned long long)to, *events, ret1, ret2,
			      st_reader_errmsg(r2));
		if (bad || !ret1)
			break;
		if (ret1 < 0) {
			bad = expectf(!strcmp(st_reader_errmsg(r1), st_reader_errmsg(r2)), test,
				      "error %d after %zu events: \"%s\" without, \"%s\" ahead", ret1,
				      *events, st_reader_errmsg(r1), st_reader_errmsg(r2));
			++*errors;
			continue;
		}
		bad = expectf(a->size == b->size && !memcmp(a, b, a->size), test,
			      "[%llu, %llu] event %zu differs", (unsigned long long)from,
			      (unsigned long long)to, *events);
		++*events;
	}
	st_cursor_close(c1);
	st_cursor_close(c2);
	return bad;
}

/*
 * Decoding ahead changes where chunks are decoded, never what comes out: on
 * a file of many overlapping chunks (through a file: the thread reads with
 * pread), whole and raw, whole file and windows, closed midway; then with two
 * damaged chunks, whose errors come at the same event with the same message.
 */
/*
 * The a-th and b-th events chunks (from 1) of the file in data, which r
 * reads, damaged in place; the count damaged, and their events added to *lost.
 */
static size_t damage_events_chunks(struct st_reader *r, uint8_t *data, size_t a, size_t b, size_t *lost)
{
	size_t seen = 0, damaged = 0;

	for (size_t i = 0; i < st_chunk_count(r); i++) {
		const struct st_chunk_info *ci = st_chunk_at(r, i);

		if (ci->kind == ST_CHUNK_EVENTS && (++seen == a || seen == b)) {
			data[ci->offset + ci->stored_size - 3] ^= 0x40;
			damaged++;
			*lost += ci->events;
		}
	}
	return damaged;
}

static int test_decode_ahead_same(void)
{
	const size_t n = 30000;
	struct written *sorted = malloc(n * sizeof(*sorted));
	struct mem_sink m = { 0 };
	struct st_reader *r1 = NULL, *r2 = NULL;
	char path[] = "/tmp/test_format_cursor.XXXXXX";
	int fd = mkstemp(path), bad;
	size_t events, errors, damaged = 0, lost = 0;

	rnd_seed(7);
	bad = expectf(fd >= 0, __func__, "mkstemp") ||
	      write_events(__func__, &m, 2048, n, ts_mixed, sorted) ||
	      expectf(write(fd, m.data, m.len) == (ssize_t)m.len, __func__, "write") ||
	      expectf(!st_reader_open(&r1, path, 0) && !st_reader_open(&r2, path, 0), __func__, "open");
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	bad = bad || expectf(st_chunk_count(r1) > 40, __func__, "%zu chunks", st_chunk_count(r1));
	for (unsigned flags = 0; flags <= ST_CURSOR_RAW && !bad; flags += ST_CURSOR_RAW)
		bad = same_ahead(__func__, r1, r2, flags, 0, UINT64_MAX, 0, &events, &errors) ||
		      expectf(events == n && !errors, __func__, "%zu events, %zu errors", events, errors);
	for (int k = 0; k < 20 && !bad; k++) {
		uint64_t x = sorted[rnd_below(n)].ts, y = sorted[rnd_below(n)].ts;

		bad = same_ahead(__func__, r1, r2, ST_CURSOR_RAW, x < y ? x : y, x < y ? y : x,
				 k % 2 ? rnd_below(n) + 1 : 0, &events, &errors);
	}
	st_reader_close(r1);
	st_reader_close(r2);
	r1 = r2 = NULL;
	/* the 3rd and 9th events chunks damaged, in memory: both readers see the same bytes */
	bad = bad || open_mem(__func__, &r1, m.data, m.len, 0);
	if (!bad)
		damaged = damage_events_chunks(r1, m.data, 3, 9, &lost);
	bad = bad || open_mem(__func__, &r2, m.data, m.len, 0) ||
	      same_ahead(__func__, r1, r2, ST_CURSOR_RAW, 0, UINT64_MAX, 0, &events, &errors) ||
	      expectf(damaged == 2 && errors == 2 && events == n - lost, __func__,
		      "%zu errors, %zu events of %zu (%zu in the damaged chunks)", errors, events, n, lost);
	st_reader_close(r1);
	st_reader_close(r2);
	free(m.data);
	free(sorted);
	return bad;
}

/*
 * The events st_cursor_fill() copies are those st_cursor_next() hands out,
 * in the same order, each at an 8-byte boundary, an error at the same event
 * with the same message; the event that did not fit comes first at the next
 * call, of either.
 */
static int same_filled(const char *test, struct st_reader *r1, struct st_reader *r2, unsigned flags,
		       size_t *events, size_t *errors)
{
	uint64_t *buf = malloc(ST_CURSOR_FILL_MIN);
	const struct st_event_header *a, *b;
	struct st_cursor *c1 = NULL, *c2 = NULL;
	int bad, ret1, filled = 0, calls = 0;
	size_t off = 0;

	*events = *errors = 0;
	bad = expectf(buf && !st_cursor_open(r1, 0, UINT64_MAX, flags, &c1) &&
		      !st_cursor_open(r2, 0, UINT64_MAX, flags, &c2), test, "cursors") ||
	      expectf(st_cursor_fill(c2, buf, ST_CURSOR_FILL_MIN - 8) == ST_EINVAL, test,
		      "a buffer below ST_CURSOR_FILL_MIN");
	while (!bad) {
		ret1 = st_cursor_next(c1, &a);
		/* every 7th fill, the next event through st_cursor_next(): the one left comes first */
		if (off == (size_t)filled && ++calls % 7 == 0) {
			int ret2 = st_cursor_next(c2, &b);

			bad = expectf(ret1 == ret2, test, "after %zu events: %d next, %d next after a fill",
				      *events, ret1, ret2) ||
			      expectf(ret1 <= 0 || !memcmp(a, b, a->size), test, "event %zu differs", *events);
			if (ret1 < 0)
				++*errors;
			else if (ret1 > 0)
				++*events;
			if (bad || !ret1)
				break;
			continue;
		}
		if (off == (size_t)filled) {
			filled = st_cursor_fill(c2, buf, ST_CURSOR_FILL_MIN);
			off = 0;
			if (filled <= 0) {
				bad = expectf(ret1 == filled, test, "after %zu events: %d next, %d filled",
					      *events, ret1, filled) ||
				      expectf(filled == 0 || !strcmp(st_reader_errmsg(r1), st_reader_errmsg(r2)),
					      test, "error after %zu events: \"%s\" next, \"%s\" filled",
					      *events, st_reader_errmsg(r1), st_reader_errmsg(r2));
				if (filled < 0)
					++*errors;
				filled = 0;
				if (bad || !ret1)
					break;
				continue;
			}
		}
		b = (const void *)((const uint8_t *)buf + off);
		bad = expectf(ret1 == 1, test, "after %zu events: %d next, an event filled", *events, ret1) ||
		      expectf(a->size == b->size && !memcmp(a, b, a->size), test, "event %zu differs",
			      *events);
		off += (b->size + 7u) & ~7u;
		++*events;
	}
	st_cursor_close(c1);
	st_cursor_close(c2);
	free(buf);
	return bad;
}

static int test_fill_same(void)
{
	const size_t n = 30000;
	struct written *sorted = malloc(n * sizeof(*sorted));
	struct mem_sink m = { 0 };
	struct st_reader *r1 = NULL, *r2 = NULL;
	size_t events, errors, damaged = 0, lost = 0;
	int bad;

	rnd_seed(11);
	bad = write_events(__func__, &m, 2048, n, ts_mixed, sorted) ||
	      open_mem(__func__, &r1, m.data, m.len, 0) || open_mem(__func__, &r2, m.data, m.len, 0);
	for (unsigned flags = 0; flags <= ST_CURSOR_RAW && !bad; flags += ST_CURSOR_RAW)
		bad = same_filled(__func__, r1, r2, flags, &events, &errors) ||
		      expectf(events == n && !errors, __func__, "%zu events, %zu errors", events, errors);
	st_reader_close(r1);
	st_reader_close(r2);
	r1 = r2 = NULL;
	/* the 2nd and 5th events chunks damaged: their errors come at the same events */
	bad = bad || open_mem(__func__, &r1, m.data, m.len, 0);
	if (!bad)
		damaged = damage_events_chunks(r1, m.data, 2, 5, &lost);
	bad = bad || open_mem(__func__, &r2, m.data, m.len, 0) ||
	      same_filled(__func__, r1, r2, 0, &events, &errors) ||
	      expectf(damaged == 2 && errors == 2 && events == n - lost, __func__,
		      "%zu errors, %zu events of %zu (%zu in the damaged chunks)", errors, events, n, lost);
	st_reader_close(r1);
	st_reader_close(r2);
	free(m.data);
	free(sorted);
	return bad;
}

/*
 * A `block` recording's records from `start`, 30 us apart over 1.2 s:
 * stamped issues whose stamps are mostly microseconds old and one in 16 up
 * to 400 ms old (older than the whole events' 100 ms window, so their
 * queue and allocation events come after events already due), their
 * compact completions, and calls in between, 1 to `calls` of them 1 us
 * apart (records whole events take as stored, a run at a time); some
 * issues stamp nothing.
 */
static int write_stamped(const char *test, struct mem_sink *m, uint64_t start, uint32_t calls)
{
	struct st_writer *w = mem_writer(test, m, 4096, 1);
	uint64_t ts = start;
	int err = 0;

	if (!w)
		return 1;
	for (uint64_t i = 0; i < 40000 && !err; i++, ts += 30000) {
		struct st_ev_block_rq_issue_stamped is = { 0 };
		struct st_ev_block_rq_complete_compact co = { 0 };
		struct st_ev_sys_exit ex = exit_event(ts, (uint32_t)(i % 2), (int64_t)i);
		uint32_t late = rnd_below(16) ? 0 : (uint32_t)rnd_below(400000000);

		switch (i % 3) {
		case 0:
			is.h = (struct st_event_header){ .ts = ts, .type = ST_EV_block_rq_issue_stamped,
							 .size = sizeof(is), .cpu = (uint16_t)(i % 2) };
			is.p.rq = 0x1000 + (i % 64) * 0x100;
			is.p.sector = i * 8;
			is.p.dev = 7 << 20;
			is.p.nr_sector = 8;
			is.p.bytes = 4096;
			is.p.nr_bios = 1;
			is.p.bios[0] = 0x9000 + (i % 50) * 0x100;
			is.p.bio_sectors[0] = 8;
			is.p.stamped = rnd_below(8) ? ST_STAMPED_GETRQ | ST_STAMPED_QUEUE(0) : 0;
			is.p.getrq_ago = late ? late / 2 : (uint32_t)rnd_below(3000);
			is.p.queue_ago[0] = late ? late : is.p.getrq_ago + (uint32_t)rnd_below(3000);
			err = st_writer_append(w, &is, sizeof(is));
			break;
		case 1:
			co.h = (struct st_event_header){ .ts = ts, .type = ST_EV_block_rq_complete_compact,
							 .size = sizeof(co), .cpu = (uint16_t)(i % 2) };
			co.p.rq = 0x1000 + ((i - 1) % 64) * 0x100;
			co.p.dev = 7 << 20;
			co.p.bytes = 4096;
			err = st_writer_append(w, &co, sizeof(co));
			break;
		default:
			for (uint32_t k = 1 + (uint32_t)rnd_below(calls); k-- && !err; ex.h.ts += 1000)
				err = st_writer_append(w, &ex, sizeof(ex));
			break;
		}
	}
	return expectf(!st_writer_close(w, NULL, 0) && !err, test, "write");
}

/*
 * The stamped issues' whole events filled in runs (st_whole_fill() lets
 * due records wait while what it reads comes after them, not while a stamp
 * older than them is read) are those st_cursor_next() hands out one by one;
 * from 1 ms, the old stamps of the first issues lie before the clock's
 * start (their times wrap to its end, where the window's arithmetic does).
 * Calls up to 6 in a row: the window copies them into its FIFO together,
 * up to the next issue or completion.
 */
static int test_fill_same_stamped(void)
{
	const uint64_t starts[] = { 1000000000, 1000000, 1000000000 };
	const uint32_t calls[] = { 1, 1, 6 };
	int bad = 0;

	rnd_seed(13);
	for (size_t k = 0; k < sizeof(starts) / sizeof(starts[0]) && !bad; k++) {
		struct mem_sink m = { 0 };
		struct st_reader *r1 = NULL, *r2 = NULL;
		size_t events, errors;

		bad = write_stamped(__func__, &m, starts[k], calls[k]) ||
		      open_mem(__func__, &r1, m.data, m.len, 0) ||
		      open_mem(__func__, &r2, m.data, m.len, 0) ||
		      same_filled(__func__, r1, r2, 0, &events, &errors) ||
		      expectf(events > 40000 && !errors, __func__, "from %llu: %zu events, %zu errors",
			      (unsigned long long)starts[k], events, errors);
		st_reader_close(r1);
		st_reader_close(r2);
		free(m.data);
	}
	return bad;
}

/*
 * Within REORDER_NS of the clock's end every record held is due (the
 * window's arithmetic wraps), so the window empties before each event:
 * its FIFO's ring fills up to the end of its buffer empty and starts again
 * at its front, and st_cursor_fill() still gives what st_cursor_next()
 * does.
 */
static int test_fill_same_clock_end(void)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = mem_writer(__func__, &m, 1 << 20, 1);
	struct st_reader *r1 = NULL, *r2 = NULL;
	struct st_ev_block_rq_issue_stamped is = { 0 };
	uint64_t ts = UINT64_MAX - 50000000;
	size_t events, errors;
	int err, bad;

	if (!w)
		return 1;
	is.h = (struct st_event_header){ .ts = ts, .type = ST_EV_block_rq_issue_stamped,
					 .size = sizeof(is) };
	is.p.rq = 0x1000;
	err = st_writer_append(w, &is, sizeof(is));
	for (int64_t i = 0; i < 5000 && !err; i++) {
		struct st_ev_sys_exit ex = exit_event(ts += 1000, 0, i);

		err = st_writer_append(w, &ex, sizeof(ex));
	}
	bad = expectf(!st_writer_close(w, NULL, 0) && !err, __func__, "write") ||
	      open_mem(__func__, &r1, m.data, m.len, 0) || open_mem(__func__, &r2, m.data, m.len, 0) ||
	      same_filled(__func__, r1, r2, 0, &events, &errors) ||
	      expectf(events == 5001 && !errors, __func__, "%zu events, %zu errors", events, errors);
	st_reader_close(r1);
	st_reader_close(r2);
	free(m.data);
	return bad;
}

/*
 * Records ten times as dense after 0.6 s: the window's FIFO holds ten
 * times as many, so its ring grows while it has wrapped, its entries
 * kept in order; st_cursor_fill() gives what st_cursor_next() does.
 */
static int test_fill_same_denser(void)
{
	struct mem_sink m = { 0 };
	struct st_writer *w = mem_writer(__func__, &m, 1 << 16, 1);
	struct st_reader *r1 = NULL, *r2 = NULL;
	uint64_t ts = 1000000000;
	size_t events, errors;
	int err = 0, bad;

	if (!w)
		return 1;
	for (int64_t i = 0; i < 80000 && !err; i++) {
		struct st_ev_sys_exit ex = exit_event(ts += i < 20000 ? 30000 : 3000, 0, i);
		struct st_ev_block_rq_issue_stamped is = { 0 };

		if (i % 10) {
			err = st_writer_append(w, &ex, sizeof(ex));
			continue;
		}
		is.h = (struct st_event_header){ .ts = ts, .type = ST_EV_block_rq_issue_stamped,
						 .size = sizeof(is) };
		is.p.rq = 0x1000 + (uint64_t)(i % 64) * 0x100;
		is.p.nr_bios = 1;
		is.p.bios[0] = 0x9000 + (uint64_t)(i % 50) * 0x100;
		is.p.stamped = ST_STAMPED_GETRQ | ST_STAMPED_QUEUE(0);
		is.p.getrq_ago = 1000;
		is.p.queue_ago[0] = 2000;
		err = st_writer_append(w, &is, sizeof(is));
	}
	bad = expectf(!st_writer_close(w, NULL, 0) && !err, __func__, "write") ||
	      open_mem(__func__, &r1, m.data, m.len, 0) || open_mem(__func__, &r2, m.data, m.len, 0) ||
	      same_filled(__func__, r1, r2, 0, &events, &errors) ||
	      expectf(events > 80000 && !errors, __func__, "%zu events, %zu errors", events, errors);
	st_reader_close(r1);
	st_reader_close(r2);
	free(m.data);
	return bad;
}

/*
 * A `block` recording with its queue events (-e block under a task filter,
 * block-queue), or without them (`queued` 0: system-wide, the stamps alone
 * date the queueings): I/Os 30 us apart of 1 to 3 bios, each queued 2-5 us
 * before its stamped issue, some bios unstamped, some allocations stamped
 * before their first bio's queueing (a plug's cached clock), one bio in 8
 * at the address the previous I/O's first bio completed at and stamped
 * before that, one request in 16 requeued and issued again; compact
 * completions 10 us after the issue, a call between I/Os.
 */
static int write_queued(const char *test, struct mem_sink *m, int queued)
{
	struct st_writer *w = mem_writer(test, m, 4096, 1);
	uint64_t ts = 1000000000, prev_bio = 0;
	int err = 0;

	if (!w)
		return 1;
	for (uint64_t i = 0; i < 20000 && !err; i++, ts += 30000) {
		struct st_ev_block_rq_issue_stamped is = { 0 };
		struct st_ev_block_rq_complete_compact co = { 0 };
		struct st_ev_block_rq rq = { 0 };
		struct st_ev_sys_exit ex = exit_event(ts + 20000, 0, (int64_t)i);
		uint32_t nb = 1 + (uint32_t)rnd_below(3), first_ago = 0;

		is.h = (struct st_event_header){ .ts = ts, .type = ST_EV_block_rq_issue_stamped,
						 .size = sizeof(is) };
		is.p.rq = 0x1000 + (i % 64) * 0x100;
		is.p.sector = i * 64;
		is.p.dev = 7 << 20;
		is.p.nr_bios = nb;
		for (uint32_t k = 0; k < nb && !err; k++) {
			struct st_ev_block_bio q = { 0 };
			uint32_t ago = 2000 + (uint32_t)rnd_below(3000);

			is.p.bios[k] = 0x9000 + ((i * 3 + k) % 150) * 0x100;
			if (k == 0 && prev_bio && !rnd_below(8)) {
				is.p.bios[k] = prev_bio;
				ago = 25000;
			}
			is.p.bio_sectors[k] = 8;
			is.p.nr_sector += 8;
			if (rnd_below(8)) {
				is.p.stamped |= ST_STAMPED_QUEUE(k);
				is.p.queue_ago[k] = ago;
			}
			first_ago = ago > first_ago ? ago : first_ago;
			q.h = (struct st_event_header){ .ts = ts - ago, .type = ST_EV_block_bio_queue,
							.size = sizeof(q) };
			q.p.bio = is.p.bios[k];
			q.p.sector = is.p.sector + 8 * k;
			q.p.dev = is.p.dev;
			q.p.nr_sector = 8;
			err = queued && st_writer_append(w, &q, sizeof(q));
		}
		prev_bio = is.p.bios[0];
		is.p.bytes = is.p.nr_sector * 512;
		if (rnd_below(8)) {
			is.p.stamped |= ST_STAMPED_GETRQ;
			is.p.getrq_ago = rnd_below(4) ? first_ago - 1000 : first_ago + 1000;
		}
		err = err || st_writer_append(w, &is, sizeof(is));
		if (!err && !rnd_below(16)) {
			rq.h = (struct st_event_header){ .ts = ts + 1000, .type = ST_EV_block_rq_requeue,
							 .size = sizeof(rq) };
			rq.p.rq = is.p.rq;
			is.h.ts = ts + 2000;
			err = st_writer_append(w, &rq, sizeof(rq)) || st_writer_append(w, &is, sizeof(is));
		}
		co.h = (struct st_event_header){ .ts = ts + 10000, .type = ST_EV_block_rq_complete_compact,
						 .size = sizeof(co) };
		co.p.rq = is.p.rq;
		co.p.dev = is.p.dev;
		co.p.bytes = is.p.bytes;
		err = err || st_writer_append(w, &co, sizeof(co)) || st_writer_append(w, &ex, sizeof(ex));
	}
	return expectf(!st_writer_close(w, NULL, 0) && !err, test, "write");
}

/* What whole events say of one issue: the allocation (its bio, ts 0 none) and the bios merged, when. */
struct issue_stages {
	uint64_t rq, getrq_bio, getrq_ts, merged[ST_RQ_BIOS], merged_ts[ST_RQ_BIOS];
	uint32_t nmerged;
};

static int is_stage_type(uint16_t type)
{
	return type == ST_EV_block_getrq || type == ST_EV_block_bio_backmerge ||
	       type == ST_EV_block_bio_frontmerge || type == ST_EV_block_rq_issue ||
	       type == ST_EV_block_rq_issue_stamped;
}

/*
 * The next issue and the events of its stages from the whole events (a
 * stage event's bio is one of its issue's bios, which are not issued again
 * before it); *other the next event of another type (NULL at the end).
 */
static int whole_issue(struct st_cursor *c, struct issue_stages *st,
		       const struct st_event_header **other)
{
	static struct st_ev_block_bio held[4096];
	static size_t nheld;
	const struct st_event_header *h;
	int ret;

	*other = NULL;
	while ((ret = st_cursor_next(c, &h)) > 0) {
		const struct st_ev_block_rq_issue *e = (const void *)h;

		if (!is_stage_type(h->type)) {
			*other = h;
			return 1;
		}
		if (h->type != ST_EV_block_rq_issue) {
			if (nheld < 4096)
				memcpy(&held[nheld++], h, sizeof(held[0]));
			continue;
		}
		*st = (struct issue_stages){ .rq = e->p.rq };
		for (size_t k = 0; k < nheld;) {
			int mine = 0;

			for (uint32_t b = 0; b < e->p.nr_bios && b < ST_RQ_BIOS; b++)
				mine |= held[k].p.bio == e->p.bios[b];
			if (!mine) {
				k++;
				continue;
			}
			if (held[k].h.type == ST_EV_block_getrq) {
				st->getrq_bio = held[k].p.bio;
				st->getrq_ts = held[k].h.ts;
			} else if (st->nmerged < ST_RQ_BIOS) {
				st->merged_ts[st->nmerged] = held[k].h.ts;
				st->merged[st->nmerged++] = held[k].p.bio;
			}
			held[k] = held[--nheld];
		}
		return 2;
	}
	return ret;
}

/*
 * ST_CURSOR_STAMPED: each stamped issue comes as itself in time order, and
 * its resolved `stamped` word names the allocation (bio and time) and the
 * merges that the whole events made of it; every other event comes as from
 * the whole events, in their order: in a file with queue events, as
 * stored; in one without, the queue events made of the stamped issues,
 * through the window; st_cursor_fill() gives what st_cursor_next() does.
 */
static int stamped_resolved(const char *test, int queued)
{
	struct mem_sink m = { 0 };
	struct st_reader *r1 = NULL, *r2 = NULL;
	struct st_cursor *whole = NULL, *kept = NULL;
	size_t issues = 0, others = 0, events, errors, getrqs = 0, merges = 0, requeued = 0;
	uint64_t last = 0;
	int bad;

	rnd_seed(17);
	bad = write_queued(test, &m, queued) || open_mem(test, &r1, m.data, m.len, 0) ||
	      open_mem(test, &r2, m.data, m.len, 0) ||
	      expectf(!st_cursor_open(r1, 0, UINT64_MAX, 0, &whole) &&
		      !st_cursor_open(r2, 0, UINT64_MAX, ST_CURSOR_STAMPED, &kept), test, "cursors");
	while (!bad) {
		const struct st_event_header *h, *other;
		struct issue_stages st;
		int ret = st_cursor_next(kept, &h), wret;

		if (ret <= 0) {
			wret = whole_issue(whole, &st, &other);
			bad = expectf(ret == 0 && wret == 0, test, "end: %d kept, %d whole", ret, wret);
			break;
		}
		bad = expectf(h->ts >= last, test, "event %zu before the one before it",
			      issues + others) ||
		      expectf(!is_stage_type(h->type) || h->type == ST_EV_block_rq_issue_stamped,
			      test, "a stage event (type %u) with ST_CURSOR_STAMPED", h->type);
		last = h->ts;
		wret = whole_issue(whole, &st, &other);
		if (bad)
			break;
		if (h->type != ST_EV_block_rq_issue_stamped) {
			bad = expectf(wret == 1 && other->size == h->size && !memcmp(other, h, h->size),
				      test, "event %zu differs from the whole events'", issues + others);
			others++;
			continue;
		}
		{
			const struct st_ev_block_rq_issue_stamped *e = (const void *)h;
			uint32_t s = e->p.stamped, nmerged = 0;

			bad = expectf(wret == 2 && st.rq == e->p.rq, test,
				      "issue %zu: not the whole events' next issue", issues);
			for (uint32_t b = 0; !bad && b < ST_RQ_BIOS; b++) {
				int listed = 0;
				uint64_t when = 0;

				for (uint32_t k = 0; k < st.nmerged; k++)
					if (st.merged[k] == e->p.bios[b]) {
						listed = 1;
						when = st.merged_ts[k];
					}
				if (s & ST_STAMPED_MERGED(b))
					nmerged++;
				bad = expectf(!(s & ST_STAMPED_MERGED(b)) == !listed, test,
					      "issue %zu: bio %u merged %d, whole events %d", issues, b,
					      !!(s & ST_STAMPED_MERGED(b)), listed) ||
				      expectf(!listed || e->h.ts - e->p.queue_ago[b] == when, test,
					      "issue %zu: bio %u merged at %llu, whole events at %llu",
					      issues, b, (unsigned long long)(e->h.ts - e->p.queue_ago[b]),
					      (unsigned long long)when);
			}
			bad = bad || expectf(nmerged == st.nmerged, test, "issue %zu: %u merges, %u",
					     issues, nmerged, st.nmerged) ||
			      expectf(!(s & ST_STAMPED_GETRQ) == !st.getrq_ts, test,
				      "issue %zu: allocation %d, whole events %d", issues,
				      !!(s & ST_STAMPED_GETRQ), !!st.getrq_ts) ||
			      expectf(!(s & ST_STAMPED_GETRQ) ||
				      (e->p.bios[ST_STAMPED_FIRST(s)] == st.getrq_bio &&
				       e->h.ts - e->p.getrq_ago == st.getrq_ts), test,
				      "issue %zu: allocation of bio %llx at %llu, whole events %llx at %llu",
				      issues, (unsigned long long)e->p.bios[ST_STAMPED_FIRST(s)],
				      (unsigned long long)(e->h.ts - e->p.getrq_ago),
				      (unsigned long long)st.getrq_bio, (unsigned long long)st.getrq_ts);
			getrqs += !!st.getrq_ts;
			merges += st.nmerged;
			requeued += !st.getrq_ts && !st.nmerged && e->p.nr_bios > 1;
			issues++;
		}
	}
	/* the cases the file has: allocations, merges, issues after a requeue (no stage event) */
	bad = bad || expectf(issues > 20000 && others > 60000 && getrqs > 10000 && merges > 10000 &&
			     requeued > 100, test, "%zu issues, %zu others, %zu allocations, "
			     "%zu merges, %zu issued again", issues, others, getrqs, merges, requeued);
	st_cursor_close(whole);
	st_cursor_close(kept);
	bad = bad || same_filled(test, r1, r2, ST_CURSOR_STAMPED, &events, &errors) ||
	      expectf(events == issues + others && !errors, test, "filled: %zu events, %zu errors",
		      events, errors);
	st_reader_close(r1);
	st_reader_close(r2);
	free(m.data);
	return bad;
}

static int test_stamped_resolved(void)
{
	return stamped_resolved(__func__, 1);
}

static int test_stamped_resolved_unqueued(void)
{
	return stamped_resolved(__func__, 0);
}

/*
 * A `block` recording with its queue events from two CPUs, st-record's two
 * lanes overlapping in time: runs of 1 to 3 records of one CPU between the
 * other's, one record in 8 at the time of the one before it (across CPUs,
 * a tie the merge orders by chunk): a bio's queueing, its stamped issue,
 * its compact completion, a call.
 */
static int write_two_cpus(const char *test, struct mem_sink *m)
{
	struct st_writer *w = mem_writer_opts(test, m, (struct st_writer_opts){
		.chunk_size = 4096, .zstd_level = 1, .lanes = 2 });
	uint64_t ts = 1000000000;
	uint32_t cpu = 0, left = 1;
	int err = 0;

	if (!w)
		return 1;
	for (uint64_t i = 0; i < 40000 && !err; i++) {
		union {
			struct st_event_header h;
			struct st_ev_block_bio q;
			struct st_ev_block_rq_issue_stamped is;
			struct st_ev_block_rq_complete_compact co;
			struct st_ev_sys_exit ex;
		} e;
		uint64_t io = i / 4, bio = 0x9000 + (io % 150) * 0x100, rq = 0x1000 + (io % 64) * 0x100;

		if (!--left) {
			cpu ^= 1;
			left = 1 + (uint32_t)rnd_below(3);
		}
		ts += rnd_below(8) ? 1000 : 0;
		memset(&e, 0, sizeof(e));
		switch (i % 4) {
		case 0:
			e.h = (struct st_event_header){ .type = ST_EV_block_bio_queue, .size = sizeof(e.q) };
			e.q.p = (struct st_block_bio){ .bio = bio, .sector = io * 8, .dev = 7 << 20,
						       .nr_sector = 8 };
			break;
		case 1:
			e.h = (struct st_event_header){ .type = ST_EV_block_rq_issue_stamped,
							.size = sizeof(e.is) };
			e.is.p.rq = rq;
			e.is.p.sector = io * 8;
			e.is.p.dev = 7 << 20;
			e.is.p.nr_sector = 8;
			e.is.p.bytes = 4096;
			e.is.p.nr_bios = 1;
			e.is.p.bios[0] = bio;
			e.is.p.bio_sectors[0] = 8;
			e.is.p.stamped = ST_STAMPED_GETRQ | ST_STAMPED_QUEUE(0);
			e.is.p.getrq_ago = 500;
			e.is.p.queue_ago[0] = 1000;
			break;
		case 2:
			e.h = (struct st_event_header){ .type = ST_EV_block_rq_complete_compact,
							.size = sizeof(e.co) };
			e.co.p.rq = rq;
			e.co.p.dev = 7 << 20;
			e.co.p.bytes = 4096;
			break;
		default:
			e.ex = exit_event(0, 0, (int64_t)i);
			break;
		}
		e.h.ts = ts;
		e.h.cpu = cpu;
		e.h.pid = 100 + cpu;
		e.h.tid = 200 + cpu;
		err = st_writer_append(w, &e, e.h.size);
	}
	return expectf(!st_writer_close(w, NULL, 0) && !err, test, "write");
}

/* Where the merge put each record: its time and CPU. */
struct placed {
	uint64_t ts;
	uint32_t cpu;
};

/*
 * The records as stored, in the merge's order one at a time
 * (st_cursor_next() of a raw cursor), into *out: their number.
 */
static size_t placed_raw(struct st_reader *r, struct placed *out, size_t max)
{
	const struct st_event_header *h;
	struct st_cursor *c;
	size_t n = 0;

	if (st_cursor_open(r, 0, UINT64_MAX, ST_CURSOR_RAW, &c))
		return 0;
	while (n < max && st_cursor_next(c, &h) > 0)
		out[n++] = (struct placed){ h->ts, h->cpu };
	st_cursor_close(c);
	return n;
}

/*
 * Two CPUs' chunks merged in short runs of one of them, the way whole
 * events read them (st_cursor_fill() with stamped issues resolved): every
 * record where the merge puts it record by record, ties included; and
 * st_cursor_fill() gives what st_cursor_next() does, resolved and through
 * the whole events' window.
 */
static int test_two_cpus_runs(void)
{
	const size_t max = 50000;
	struct placed *raw = malloc(max * sizeof(*raw));
	uint64_t *buf = malloc(ST_CURSOR_FILL_MIN);
	struct mem_sink m = { 0 };
	struct st_reader *r1 = NULL, *r2 = NULL;
	struct st_cursor *c = NULL;
	size_t n = 0, k = 0, events, errors;
	int bad, filled;

	rnd_seed(19);
	bad = expectf(raw && buf, __func__, "memory") || write_two_cpus(__func__, &m) ||
	      open_mem(__func__, &r1, m.data, m.len, 0) || open_mem(__func__, &r2, m.data, m.len, 0);
	if (!bad)
		n = placed_raw(r1, raw, max);
	bad = bad || expectf(n == 40000 && st_chunk_count(r1) > 40, __func__, "%zu records, %zu chunks",
			     n, st_chunk_count(r1)) ||
	      expectf(!st_cursor_open(r1, 0, UINT64_MAX, ST_CURSOR_STAMPED, &c), __func__, "cursor");
	while (!bad && (filled = st_cursor_fill(c, buf, ST_CURSOR_FILL_MIN)) > 0)
		for (int off = 0; !bad && off < filled; k++) {
			const struct st_event_header *h = (const void *)((const uint8_t *)buf + off);

			bad = expectf(k < n && h->ts == raw[k].ts && h->cpu == raw[k].cpu, __func__,
				      "event %zu: ts %llu cpu %u, merged one by one ts %llu cpu %u", k,
				      (unsigned long long)h->ts, h->cpu,
				      (unsigned long long)(k < n ? raw[k].ts : 0), k < n ? raw[k].cpu : 0);
			off += (int)st_record_span(h);
		}
	bad = bad || expectf(!filled && k == n, __func__, "%zu events of %zu, then %d", k, n, filled);
	st_cursor_close(c);
	for (unsigned flags = 0; flags <= ST_CURSOR_STAMPED && !bad; flags += ST_CURSOR_STAMPED)
		bad = same_filled(__func__, r1, r2, flags, &events, &errors) ||
		      expectf(events >= n && !errors, __func__, "flags %u: %zu events, %zu errors", flags,
			      events, errors);
	st_reader_close(r1);
	st_reader_close(r2);
	free(m.data);
	free(buf);
	free(raw);
	return bad;
}

/*
 * Stamped issues 10 us apart whose stamps are mostly up to 40 us old and
 * one in 8 up to 20 ms old: the window holds their dated-back queue and
 * allocation events as late records, the near ones a few places from the
 * end of those held (kept in order by insertion), the far ones thousands
 * (in the heap). Every event comes in time order, each issue's queueing
 * and allocation at the time its stamps give, none lost; st_cursor_fill()
 * gives what st_cursor_next() does.
 */
static int test_late_records_in_order(void)
{
	const uint64_t n = 30000, start = 1000000000;
	struct st_writer *w;
	struct mem_sink m = { 0 };
	struct st_reader *r1 = NULL, *r2 = NULL;
	struct st_cursor *c = NULL;
	const struct st_event_header *h;
	uint64_t want_q = 0, want_g = 0, got_q = 0, got_g = 0, last = 0, count[3] = { 0 };
	size_t events, errors;
	int err = 0, bad, ret = 0;

	rnd_seed(23);
	if (!(w = mem_writer(__func__, &m, 4096, 1)))
		return 1;
	for (uint64_t i = 0; i < n && !err; i++) {
		struct st_ev_block_rq_issue_stamped is = { 0 };

		is.h = (struct st_event_header){ .ts = start + i * 10000, .type = ST_EV_block_rq_issue_stamped,
						 .size = sizeof(is) };
		is.p.rq = 0x1000 + i * 0x100;
		is.p.dev = 7 << 20;
		is.p.nr_sector = 8;
		is.p.nr_bios = 1;
		is.p.bios[0] = 0x100000 + i * 0x100;
		is.p.bio_sectors[0] = 8;
		is.p.stamped = ST_STAMPED_GETRQ | ST_STAMPED_QUEUE(0);
		is.p.queue_ago[0] = (uint32_t)(i % 8 ? rnd_below(40000) : rnd_below(20000000));
		is.p.getrq_ago = is.p.queue_ago[0] / 2;
		want_q += is.h.ts - is.p.queue_ago[0];
		want_g += is.h.ts - is.p.getrq_ago;
		err = st_writer_append(w, &is, sizeof(is));
	}
	bad = expectf(!st_writer_close(w, NULL, 0) && !err, __func__, "write") ||
	      open_mem(__func__, &r1, m.data, m.len, 0) || open_mem(__func__, &r2, m.data, m.len, 0) ||
	      expectf(!st_cursor_open(r1, 0, UINT64_MAX, 0, &c), __func__, "cursor");
	while (!bad && (ret = st_cursor_next(c, &h)) > 0) {
		bad = expectf(h->ts >= last, __func__, "event %llu at %llu, after one at %llu",
			      (unsigned long long)(count[0] + count[1] + count[2]),
			      (unsigned long long)h->ts, (unsigned long long)last);
		last = h->ts;
		if (h->type == ST_EV_block_bio_queue) {
			got_q += h->ts;
			count[0]++;
		} else if (h->type == ST_EV_block_getrq) {
			got_g += h->ts;
			count[1]++;
		} else {
			bad = bad || expectf(h->type == ST_EV_block_rq_issue, __func__, "type %u", h->type);
			count[2]++;
		}
	}
	bad = bad || expectf(!ret && count[0] == n && count[1] == n && count[2] == n, __func__,
			     "%llu queueings, %llu allocations, %llu issues of %llu, then %d",
			     (unsigned long long)count[0], (unsigned long long)count[1],
			     (unsigned long long)count[2], (unsigned long long)n, ret) ||
	      expectf(got_q == want_q && got_g == want_g, __func__,
		      "queueings' times sum to %llu (stamps: %llu), allocations' %llu (%llu)",
		      (unsigned long long)got_q, (unsigned long long)want_q,
		      (unsigned long long)got_g, (unsigned long long)want_g) ||
	      same_filled(__func__, r1, r2, 0, &events, &errors) ||
	      expectf(events == 3 * n && !errors, __func__, "filled: %zu events, %zu errors", events, errors);
	st_cursor_close(c);
	st_reader_close(r1);
	st_reader_close(r2);
	free(m.data);
	return bad;
}

int main(void)
{
	RUN(test_out_of_order_within_chunks);
	RUN(test_overlapping_chunks);
	RUN(test_shuffled_chunks);
	RUN(test_in_order_then_overlapping_chunks);
	RUN(test_seek_skips_earlier_chunks);
	RUN(test_damaged_chunk_skipped);
	RUN(test_independent_cursors);
	RUN(test_parallel_decode);
	RUN(test_decode_ahead_same);
	RUN(test_fill_same);
	RUN(test_fill_same_stamped);
	RUN(test_fill_same_clock_end);
	RUN(test_fill_same_denser);
	RUN(test_stamped_resolved);
	RUN(test_stamped_resolved_unqueued);
	RUN(test_two_cpus_runs);
	RUN(test_late_records_in_order);
	return check_failures != 0;
}
