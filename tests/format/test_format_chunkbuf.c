/* SPDX-License-Identifier: MIT */
/*
 * test_format_chunkbuf - a chunk buffer as large as a decoded chunk (st-record
 * writes 1 MiB by default) is filled with one page fault where the system
 * gives transparent huge pages, not with one a 4 KiB page (a fault costs
 * about 2 us on the guests measured: the analyzer's seven such buffers were
 * 2 % of a 4 s recording's summary). Where huge pages are off, or the kernel
 * had none free for this test, SKIP says so. The records decode the same
 * into such a buffer.
 */
#include <sys/resource.h>

#include "tests/format/unit_util.h"

#define EVENTS	40000	/* 32-byte sys_exit records: 1.25 MiB raw, one chunk */

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* A /proc/vmstat counter, -1 when it cannot be read. */
static long vmstat(const char *name)
{
	char key[64];
	long v, found = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (found < 0 && fscanf(f, "%63s %ld", key, &v) == 2)
		if (!strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

/* Why this system gives a madvise()d mapping no huge page, NULL when it may. */
static const char *no_huge_pages(void)
{
	char mode[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (!f)
		return "no transparent huge pages in this kernel";
	if (!fgets(mode, sizeof(mode), f))
		mode[0] = 0;
	fclose(f);
	return strstr(mode, "[never]") ? "transparent huge pages are off (never)" : NULL;
}

static int write_file(const char *test, struct mem_sink *m)
{
	struct st_writer *w = mem_writer(test, m, 2u << 20, 1);
	int err = !w;

	for (uint64_t i = 0; i < EVENTS && !err; i++) {
		struct st_ev_sys_exit e = exit_event(1000 + i, 0, (int64_t)i);

		err = st_writer_append(w, &e, sizeof(e));
	}
	return expectf(w && !st_writer_close(w, NULL, 0) && !err, test, "writing the file");
}

/* The index of the file's one events chunk, or SIZE_MAX. */
static size_t events_chunk(const struct st_reader *r)
{
	for (size_t i = 0; i < st_chunk_count(r); i++)
		if (st_chunk_at(r, i)->kind == ST_CHUNK_EVENTS)
			return i;
	return SIZE_MAX;
}

/* Every record of buf is the i-th sys_exit the file was written with. */
static int records_match(const char *test, const struct st_chunk_buf *buf)
{
	const struct st_event_header *h;
	size_t pos = 0, n = 0;

	while (st_chunk_next(buf, &pos, &h) == 1) {
		const struct st_ev_sys_exit *e = (const void *)h;

		if (expectf(e->h.ts == 1000 + n && e->p.ret == (int64_t)n, test, "record %zu differs", n))
			return 1;
		n++;
	}
	return expectf(n == EVENTS, test, "%zu records, not %d", n, EVENTS);
}

static void huge_faults(void)
{
	const char *test = "chunkbuf.huge_faults", *why = no_huge_pages();
	struct st_chunk_buf warm = { 0 }, buf = { 0 };
	struct mem_sink m = { 0 };
	struct st_reader *r = NULL;
	long before, faults, fallback;
	size_t i;

	if (write_file(test, &m) || open_mem(test, &r, m.data, m.len, 0))
		goto out;
	i = events_chunk(r);
	/* the decoder's own memory first touched here, not in the count below */
	if (expectf(i != SIZE_MAX && !st_chunk_decode(r, i, &warm), test, "decoding: %s",
		    st_reader_errmsg(r)))
		goto out;
	fallback = vmstat("thp_fault_fallback");
	before = minor_faults();
	if (expectf(!st_chunk_decode(r, i, &buf), test, "decoding: %s", st_reader_errmsg(r)) ||
	    records_match(test, &buf))
		goto out;
	faults = minor_faults() - before;
	if (!why && vmstat("thp_fault_fallback") > fallback)
		why = "the kernel had no huge page free";
	if (why && faults > 64)
		printf("SKIP: %s: %s (%ld page faults for %zu bytes)\n", test, why, faults, buf.len);
	else
		check(faults <= 64, test, "%ld page faults for %zu bytes", faults, buf.len);
out:
	st_chunk_buf_free(&warm);
	st_chunk_buf_free(&buf);
	st_reader_close(r);
	free(m.data);
}

int main(void)
{
	huge_faults();
	return check_failures != 0;
}
