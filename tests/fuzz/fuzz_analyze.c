/* SPDX-License-Identifier: MIT */
/*
 * fuzz_analyze.c - libFuzzer entry point for libanalyze.
 *
 * fuzz_reader.c feeds the reader whole files, whose events chunks are
 * compressed and checksummed: a mutation seldom reaches an event intact.
 * Here the input is the events themselves, records as a file stores them
 * (st_event_header, then the payload), so that every mutation is an event
 * sequence the correlator must take: a record of a built-in type is made
 * that type's size (its bytes from the input, zeros past its end), any
 * other type id ends the record at the next 8 bytes. They are written into
 * a trace with a small host's metadata (devices, processes, files), read
 * from a memfd, and analyzed as st-analyze does: the summary with its time
 * series, sizes, seeks and depth, --why, then --quantile, grouped as the
 * input's length says. libanalyze must answer or
 * refuse, never crash, hang or grow without bound.
 *
 * Seeds (tests/fuzz/corpus-analyze): the first records of real and
 * synthetic recordings, made by gen_analyze_seeds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analyze/lib/run.h"
#include "analyze/lib/why.h"
#include "format/lib/sttrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Most records one input makes: the analysis of each costs far more than its bytes. */
#define MAX_RECORDS 4096

static const char *const host_meta[][2] = {
	{ "host.name", "fuzz" },
	{ "cpu.count", "4" },
	{ "kernel.release", "6.18.0-fuzz" },
	{ "clock.realtime_offset_ns", "1767224600000000000" },
	{ "dev.254:0", "name=vda;sector_size=512;scheduler=mq-deadline;rotational=0" },
	{ "dev.7:0", "name=loop0;sector_size=512;scheduler=none;rotational=0" },
	{ "pid.1200", "fio" },
	{ "pid.1250", "postgres" },
	{ "fd.1200.5", "/srv/vda/fio.0.dat" },
	{ "fd.1250.5", "/srv/vda/postgres.1.dat" },
	{ "inode.254:0.12", "/srv/vda/fio.0.dat" },
};

/* The trace, written into a memfd that the analyzer opens by its /proc path. */
struct trace_file {
	int fd;
	char path[64];
};

static int sink_write(void *ctx, const void *buf, size_t len, uint64_t offset)
{
	return st_pwrite_all(((struct trace_file *)ctx)->fd, buf, len, offset);
}

static int sink_sync(void *ctx)
{
	(void)ctx;
	return 0;
}

/*
 * The next record of the input: its bytes consumed (0 at the end), and in
 * rec, zeroed first, a record of a built-in type made its size, or none
 * (rec's size 0) for another type id, whose record ends 8 bytes on.
 */
static size_t next_record(const uint8_t *p, size_t left, uint8_t *rec, size_t cap)
{
	struct st_event_header *h = (struct st_event_header *)rec;
	const struct st_type *t;
	size_t take;

	if (left < sizeof(*h))
		return 0;
	memcpy(h, p, sizeof(*h));
	t = st_builtin_type(h->type);
	if (!t || t->size > cap) {
		h->size = 0;
		return 8;
	}
	take = left < t->size ? left : t->size;
	memset(rec, 0, t->size);
	memcpy(rec, p, take);
	h->size = (uint16_t)t->size;
	return take;
}

static int write_trace(struct trace_file *f, const uint8_t *data, size_t size)
{
	static uint8_t rec[65536] __attribute__((aligned(8)));
	const struct st_sink sink = { .write = sink_write, .sync = sink_sync, .ctx = f };
	/* small chunks and two lanes: several chunks whose times overlap, as st-record writes them */
	const struct st_writer_opts opts = { .chunk_size = 4096, .sink = &sink, .lanes = 2 };
	struct st_writer *w;
	size_t n, used = 0, records = 0;
	int ret;

	if (ftruncate(f->fd, 0))
		return -1;
	ret = st_writer_open(&w, NULL, &opts) || st_writer_add_builtin_types(w);
	for (size_t i = 0; !ret && i < sizeof(host_meta) / sizeof(host_meta[0]); i++)
		ret = st_writer_set_meta(w, host_meta[i][0], host_meta[i][1]);
	while (!ret && records++ < MAX_RECORDS && (n = next_record(data + used, size - used, rec, sizeof(rec)))) {
		const struct st_event_header *h = (const struct st_event_header *)rec;

		used += n;
		if (h->size)
			ret = st_writer_append(w, rec, h->size) < 0;
	}
	return st_writer_close(w, NULL, 0) || ret ? -1 : 0;
}

/* --why's pass over the I/Os the summary's pass counted (st-analyze --why). */
static void why(struct an_run *r, FILE *out)
{
	char err[512];
	struct an_why w;

	if (an_why_init(&w, &r->stats, AN_ST_TOTAL, 0.9, r->origins))
		return;
	r->emit = an_why_add;
	r->emit_ctx = &w;
	if (!an_run_pass(r, AN_WANT_EMIT, err, sizeof(err)))
		an_why_print(&w, &r->spans, NULL, out, 0);
	an_why_free(&w);
}

/* The summary with its time series, sizes, seeks and depth, --why, then --quantile: grouped by `by`. */
static void analyze(struct trace_file *f, enum an_by by, FILE *out)
{
	char *files[] = { f->path };
	char err[512];
	struct an_run r;

	if (an_run_open(&r, files, 1, NULL, err, sizeof(err))) {
		an_run_close(&r);
		return;
	}
	r.stale_ns = 60000000000ull;
	r.threads = 1;
	r.stage = AN_ST_TOTAL;
	an_stats_init(&r.stats, by, 100, NULL);
	an_dist_init(&r.dist, AN_DIST_SIZE | AN_DIST_SEEK | AN_DIST_DEPTH, by, AN_ST_TOTAL, NULL);
	if (!an_series_init(&r.series, an_run_t0(&r), an_run_t0(&r) + an_run_duration(&r),
			    an_run_duration(&r) / 16 + 1, AN_ST_TOTAL)) {
		if (!an_run_pass(&r, AN_WANT_STATS | AN_WANT_SERIES | AN_WANT_DIST, err, sizeof(err)) &&
		    !an_dist_finish(&r.dist, an_run_t0(&r), an_run_t0(&r) + an_run_duration(&r))) {
			an_run_print_header(&r, out);
			an_dist_print_sizes(&r.dist, out, 0);
			an_dist_print_seeks(&r.dist, r.origins, out, 1);
			an_dist_print_depth(&r.dist, r.origins, out, 0);
			an_series_print(&r.series, &r.spans, out, 1);
			why(&r, out);
			an_stats_sort(&r.stats);
			an_stats_print(&r.stats, &r.spans, NULL, out, 0, an_run_duration(&r));
		}
		an_series_free(&r.series);
	}
	an_dist_free(&r.dist);
	an_stats_free(&r.stats);
	if (!an_run_quantile(&r, 0.9, 100, 20, 64, err, sizeof(err)))
		an_top_print(&r.top, &r.spans, r.origins, 0, NULL, out, 1, r.info.first_ts);
	an_top_free(&r.top);
	an_qest_free(&r.stage_samples);
	an_run_close(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct trace_file f = { .fd = -1 };
	static FILE *out;

	if (f.fd < 0) {
		if ((f.fd = memfd_create("fuzz_analyze", MFD_CLOEXEC)) < 0 ||
		    !(out = fopen("/dev/null", "w")))
			__builtin_trap();
		snprintf(f.path, sizeof(f.path), "/proc/self/fd/%d", f.fd);
	}
	/* the input's length picks the grouping: every one is tried without a byte of the events */
	if (!write_trace(&f, data, size))
		analyze(&f, (enum an_by)(size % (AN_BY_CACHE + 1)), out);
	return 0;
}
