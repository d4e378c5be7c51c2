/* SPDX-License-Identifier: MIT */
/*
 * test_format_lost.c - lost counts as spec/sttrace-format.md section 5.4
 * defines them: cumulative per CPU, in LOST chunks written during the file
 * and in the index's lost section. A reader takes, for each CPU, the count
 * of the last of those (in file order) that lists the CPU, the same with
 * the footer and when scanning; a file cut anywhere reports the counts of
 * its last LOST chunk; huge lost chunks cost n log n.
 */
#include "unit_util.h"

/*
 * Losses of two CPUs that grow while events are written: 1 and 4, then CPU
 * 0 reaches 3. Chunks of 512 bytes, so each count goes out in a LOST chunk
 * after the next events chunk.
 */
static int write_lossy_file(const char *test, struct mem_sink *m)
{
	struct st_writer *w = mem_writer(test, m, 512, 1);
	int err = !w;

	for (uint64_t i = 0; i < 200 && !err; i++) {
		struct st_ev_sys_exit e = exit_event(1000 + i, 0, 0);

		if (i == 10)
			err = st_writer_set_lost(w, 0, 1) || st_writer_set_lost(w, 1, 4);
		if (i == 100)
			err = st_writer_set_lost(w, 0, 3);
		err = err || st_writer_append(w, &e, sizeof(e));
	}
	return expectf(w && !st_writer_close(w, NULL, 0) && !err, test, "writing the file");
}

/* The reader's lost counts are exactly cpu 0: lost0, cpu 1: lost1. */
static int lost_is(const char *test, struct st_reader *r, uint64_t lost0, uint64_t lost1,
		   const char *how)
{
	uint64_t got[2] = { 0, 0 }, lost;
	uint32_t cpu;
	size_t n = 0;

	for (size_t i = 0; !st_lost_at(r, i, &cpu, &lost); i++, n++)
		if (cpu < 2)
			got[cpu] = lost;
	return expectf(n == 2 && got[0] == lost0 && got[1] == lost1 &&
		       st_reader_info(r)->lost_events == lost0 + lost1, test,
		       "%s: %zu CPUs, cpu 0: %llu (want %llu), cpu 1: %llu (want %llu), total %llu",
		       how, n, (unsigned long long)got[0], (unsigned long long)lost0,
		       (unsigned long long)got[1], (unsigned long long)lost1,
		       (unsigned long long)st_reader_info(r)->lost_events);
}

/* A file cut right after each LOST chunk reports that chunk's counts. */
static int test_cut_after_each_lost_chunk(void)
{
	static const uint64_t want[][2] = { { 1, 4 }, { 3, 4 } };
	struct mem_sink m = { 0 };
	struct st_reader *full = NULL, *r = NULL;
	size_t seen = 0;
	int bad = write_lossy_file(__func__, &m) || open_mem(__func__, &full, m.data, m.len, 0) ||
		  lost_is(__func__, full, 3, 4, "whole file");

	for (size_t i = 0; !bad && i < st_chunk_count(full); i++) {
		const struct st_chunk_info *ci = st_chunk_at(full, i);

		if (ci->kind != ST_CHUNK_LOST)
			continue;
		bad = expectf(seen < 2, __func__, "more than two lost chunks") ||
		      open_mem(__func__, &r, m.data, ci->offset + ci->stored_size, 0) ||
		      lost_is(__func__, r, want[seen][0], want[seen][1], "cut after a lost chunk");
		st_reader_close(r);
		r = NULL;
		seen++;
	}
	bad = bad || expectf(seen == 2, __func__, "%zu lost chunks, want 2", seen);
	st_reader_close(full);
	free(m.data);
	return bad;
}

/*
 * The file's index replaced by one whose lost section lists only CPU 0,
 * with 5: CPU 1 keeps the 4 of the last LOST chunk, CPU 0 takes the
 * index's 5, with the footer and in a scan alike.
 */
static int test_index_after_lost_chunks(void)
{
	struct mem_sink m = { 0 };
	struct st_chunk_buf idx = { 0 };
	struct st_reader *r = NULL;
	const struct st_chunk_info *ci;
	unsigned char *out = NULL, *lost;
	size_t at;
	int bad = write_lossy_file(__func__, &m) || open_mem(__func__, &r, m.data, m.len, 0);

	ci = bad ? NULL : st_chunk_at(r, st_chunk_count(r) - 1);
	bad = bad || expectf(ci->kind == ST_CHUNK_INDEX && !st_chunk_decode(r, st_chunk_count(r) - 1, &idx),
			     __func__, "no index to rebuild");
	if (!bad) {
		/* the lost section is the index's last 16-byte entries: keep one, CPU 0's */
		lost = (unsigned char *)idx.data + idx.len - 2 * 16;
		bad = expectf(!memcmp(idx.data + 8, &(uint32_t){ 2 }, 4) && lost[0] == 0, __func__,
			      "index lost section is not cpu 0, cpu 1");
		put32(idx.data + 8, 1);
		put64(lost + 8, 5);
		out = malloc(m.len + idx.len + 64);	/* the index goes out raw, maybe larger */
		at = ci->offset;
		memcpy(out, m.data, at);
		at += spec_chunk(out + at, ST_CHUNK_INDEX, ci->seq, idx.data, (uint32_t)idx.len - 16);
		at += spec_trailer(out + at, ci->offset, at - ci->offset);
	}
	st_reader_close(r);
	r = NULL;
	bad = bad || open_mem(__func__, &r, out, at, 0) ||
	      expectf(st_reader_info(r)->footer_present && !st_reader_info(r)->recovered, __func__,
		      "the rebuilt footer was not used") ||
	      lost_is(__func__, r, 5, 4, "with the footer");
	st_reader_close(r);
	r = NULL;
	bad = bad || open_mem(__func__, &r, out, at, ST_READ_SCAN) || lost_is(__func__, r, 5, 4, "scanning");
	st_reader_close(r);
	st_chunk_buf_free(&idx);
	free(out);
	free(m.data);
	return bad;
}

/*
 * A footerless file ending in two LOST chunks of a million entries each,
 * every entry a different CPU, the second chunk listing the CPUs again in
 * reverse with new counts: each CPU gets its second count, and the reader
 * does it in n log n (a linear search per entry would not finish).
 */
static int test_huge_lost_chunks(void)
{
	const uint32_t n = 1u << 20;
	struct mem_sink m = { 0 };
	struct st_reader *r = NULL;
	unsigned char *lost = malloc((size_t)n * 16), *file = NULL;
	const struct st_chunk_info *ci;
	uint64_t count, want_total = 0;
	uint32_t cpu, seq;
	size_t at = 0;
	int bad = write_lossy_file(__func__, &m) || open_mem(__func__, &r, m.data, m.len, 0);

	if (!bad) {
		ci = st_chunk_at(r, st_chunk_count(r) - 1);	/* the index: cut there */
		at = ci->offset;
		seq = ci->seq;
		file = malloc(at + 2 * (64 + (size_t)n * 16));
		memcpy(file, m.data, at);
		for (uint32_t i = 0; i < n; i++) {
			put32(lost + 16 * (size_t)i, i);
			put32(lost + 16 * (size_t)i + 4, 0);
			put64(lost + 16 * (size_t)i + 8, 1);
		}
		at += spec_chunk(file + at, ST_CHUNK_LOST, seq, lost, n * 16);
		for (uint32_t i = 0; i < n; i++) {
			put32(lost + 16 * (size_t)i, n - 1 - i);
			put64(lost + 16 * (size_t)i + 8, 2 + i % 3);
			want_total += 2 + i % 3;
		}
		at += spec_chunk(file + at, ST_CHUNK_LOST, seq + 1, lost, n * 16);
	}
	st_reader_close(r);
	r = NULL;
	bad = bad || open_mem(__func__, &r, file, at, 0) ||
	      expectf(st_lost_count(r) == n && st_reader_info(r)->lost_events == want_total &&
		      !st_lost_at(r, 0, &cpu, &count) && cpu == 0 && count == 2 + (n - 1) % 3, __func__,
		      "%zu CPUs, %llu lost (want %u, %llu); cpu %u: %llu", st_lost_count(r),
		      (unsigned long long)st_reader_info(r)->lost_events, n,
		      (unsigned long long)want_total, cpu, (unsigned long long)count);
	st_reader_close(r);
	free(file);
	free(lost);
	free(m.data);
	return bad;
}

int main(void)
{
	RUN(test_cut_after_each_lost_chunk);
	RUN(test_index_after_lost_chunks);
	RUN(test_huge_lost_chunks);
	return check_failures != 0;
}
