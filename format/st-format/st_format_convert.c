/* SPDX-License-Identifier: MIT */
/*
 * st_format_convert.c - `st-format convert`: one trace into the format of
 * another tool, streaming, through one table of writers
 * (st_format_convert.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "analyze/lib/input.h"
#include "common/input.h"
#include "format/st-format/st_format_convert.h"

static const struct sf_convert_writer *const writers[] = {
	&sf_convert_blktrace, &sf_convert_blkparse, &sf_convert_fio_iolog, &sf_convert_csv,
	&sf_convert_jsonl, &sf_convert_perfetto,
};

static const struct sf_convert_writer *writer_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++)
		if (!strcmp(writers[i]->name, name))
			return writers[i];
	return NULL;
}

FILE *sf_convert_output(const struct sf_convert *cv, const char *path)
{
	char why[160];
	int fd = st_output_open(path, cv->force ? ST_OUTPUT_FORCE : 0, why, sizeof(why));
	FILE *f;

	if (fd < 0) {
		sf_error(path, "%s", why);
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		sf_error(path, "%s", strerror(errno));
		close(fd);
	}
	return f;
}

static int convert_events(struct sf_convert *cv, const struct sf_convert_writer *wr,
			  struct an_input *in)
{
	struct sf_progress prog;
	const struct st_event_header *ev;
	char err[256];
	int rc = SF_OK, got;

	if (an_input_start(in, 0, UINT64_MAX, err, sizeof(err)))
		return sf_error(cv->in, "%s", err);
	sf_progress_start(&prog, sf_cmd_convert.name, an_input_info(in)->events);
	while (!rc && (got = an_input_next(in, &ev, err, sizeof(err))) > 0) {
		if (an_names_wants(ev->type))
			an_names_event(cv->names, ev);
		rc = wr->event(cv, ev);
		sf_progress_tick(&prog);
	}
	sf_progress_end(&prog);
	if (!rc && got < 0)
		rc = sf_error(cv->in, "%s", err);
	return rc;
}

static int convert_file(struct sf_convert *cv, const struct sf_convert_writer *wr)
{
	struct an_input *in = NULL;
	char real[4096], err[256];
	char *paths[] = { real };
	int rc;

	/* "-" is spooled once; the reader and the analyzer's input share the copy */
	if (input_path(cv->in, real, sizeof(real), err, sizeof(err)))
		return sf_error(cv->in, "%s", err);
	if (an_names_new(&cv->names))
		return sf_error(cv->in, "out of memory");
	if (sf_open(real, 0, &cv->r)) {
		an_names_free(cv->names);
		return SF_BAD;
	}
	cv->first_ts = st_reader_info(cv->r)->first_ts;
	if (an_input_open(&in, paths, 1, cv->names, err, sizeof(err))) {
		rc = sf_error(cv->in, "%s", err);
		goto out;
	}
	cv->text = stdout;
	if (wr->text && cv->out && !(cv->text = sf_convert_output(cv, cv->out))) {
		rc = SF_BAD;
		goto out;
	}
	rc = wr->begin(cv);
	if (!rc)
		rc = convert_events(cv, wr, in);
	cv->failed = rc != SF_OK;
	if (wr->end(cv) && !rc)
		rc = SF_BAD;
	if (wr->text && (fflush(cv->text) || ferror(cv->text)) && !rc)
		rc = sf_error(cv->out ? cv->out : "stdout", "write failed");
	if (cv->text != stdout && fclose(cv->text) && !rc)
		rc = sf_error(cv->out, "write failed: %m");
	if (rc && cv->text != stdout)	/* no half-written output left behind */
		unlink(cv->out);
out:
	an_input_close(in);
	st_reader_close(cv->r);
	an_names_free(cv->names);
	return rc;
}

/* Every event, every field: cat's rows, written to OUT when given. */
static int convert_by_cat(const struct sf_convert *cv, const struct sf_convert_writer *wr)
{
	int saved = -1, fd, rc;

	if (cv->out) {
		char why[160];

		fd = st_output_open(cv->out, cv->force ? ST_OUTPUT_FORCE : 0, why, sizeof(why));
		if (fd < 0)
			return sf_error(cv->out, "%s", why);
		fflush(stdout);
		saved = dup(STDOUT_FILENO);
		if (saved < 0 || dup2(fd, STDOUT_FILENO) < 0) {
			close(fd);
			return sf_error(cv->out, "cannot redirect output: %s", strerror(errno));
		}
		close(fd);
	}
	rc = sf_cat_events(cv->in, wr->cat_style, sf_cmd_convert.name);
	if (saved >= 0) {
		fflush(stdout);
		dup2(saved, STDOUT_FILENO);
		close(saved);
	}
	return rc;
}

static int convert_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "records", no_argument, NULL, 'r' },
		{ "force", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const struct sf_convert_writer *wr = NULL;
	struct sf_convert cv = { 0 };
	int c;

	while ((c = sf_getopt(&sf_cmd_convert, argc, argv, ":ho:t:", longopts)) != -1) {
		switch (c) {
		case 't':
			wr = writer_by_name(optarg);
			if (!wr)
				return sf_usage(&sf_cmd_convert, "unknown format '%s' for --to", optarg);
			break;
		case 'o':
			cv.out = optarg;
			break;
		case 'r':
			cv.records = 1;
			break;
		case 'F':
			cv.force = 1;
			break;
		case 'h':
			return SF_OK;
		default:
			return SF_USAGE;
		}
	}
	if (sf_positional(&sf_cmd_convert, argc, argv, 1, "FILE"))
		return SF_USAGE;
	cv.in = argv[optind];
	if (!wr)
		return sf_usage(&sf_cmd_convert, "missing --to FORMAT");
	if (!wr->text && !cv.out)
		return sf_usage(&sf_cmd_convert, "--to %s needs -o PREFIX", wr->name);
	if (cv.records && !wr->cat_style)
		return sf_usage(&sf_cmd_convert, "--records is for --to csv and jsonl");
	if (wr->cat_style && !cv.records)
		return convert_by_cat(&cv, wr);
	return convert_file(&cv, wr);
}

const struct sf_cmd sf_cmd_convert = {
	.name = "convert",
	.summary = "write a trace for other tools: blktrace, blkparse, fio iolog, CSV, JSON, Perfetto",
	.help =
	"Usage: st-format convert FILE --to FORMAT [--records] [-o OUT] [--force]\n"
	"Write the events of a trace in the format of another tool, in one pass,\n"
	"memory bounded by the chunks that overlap in time. On a terminal a\n"
	"progress line counts the events.\n\n"
	"  -t, --to FORMAT    one of:\n"
	"      blktrace       blktrace's binary per-CPU files OUT.blktrace.CPU (struct\n"
	"                     blk_io_trace, host byte order): actions Q M F X G I D C R\n"
	"                     with their PDUs, and a process-name notify record before\n"
	"                     each thread's first event on a device; for blkparse -i,\n"
	"                     btt, iowatcher, btrecord. -o OUT is required.\n"
	"                     A recording of the block preset (one stamped issue\n"
	"                     per request) has the actions its stamps stand for:\n"
	"                     Q of each bio at its stamped queue time (where the\n"
	"                     kernel stamps none, at the request's allocation:\n"
	"                     Q2G is 0; the recorded Q where st-record took them,\n"
	"                     as with -- CMD), G at the allocation, M for each\n"
	"                     other bio of the request, D, C; no I (no insert\n"
	"                     time is stamped)\n"
	"      blkparse       the text blkparse prints for those files, its closing\n"
	"                     statistics included; blkparse names those after its\n"
	"                     input files, this after the trace's first device, so\n"
	"                     the two agree for files named after it (-o DIR/loop0)\n"
	"      fio-iolog      fio's iolog version 3 for fio --read_iolog: one line\n"
	"                     per bio queued to a device (Q, before merges): TIME\n"
	"                     (us since the first) /dev/NAME read|write|trim|sync\n"
	"                     OFFSET LENGTH (bytes); an empty flush is a sync\n"
	"      csv, jsonl     every field of every event, as st-format cat --csv and\n"
	"                     --json print them; with --records one row (object)\n"
	"                     per I/O that st-analyze correlates: start_ns, op,\n"
	"                     dev, sector, bytes, blk_bytes, offset, ret, pid,\n"
	"                     tid, comm, file, flags, bios, merges, requeues,\n"
	"                     each stage's timestamp (ts_*, event clock ns) and\n"
	"                     each stage's latency (*_ns); empty (null) when the\n"
	"                     I/O has none\n"
	"      perfetto       Chrome trace-event JSON for ui.perfetto.dev and\n"
	"                     chrome://tracing: a process per device with its\n"
	"                     requests (issue to completion) and queue times (Q to\n"
	"                     D) as slices and counters of requests in flight and\n"
	"                     IOPS (100 ms intervals); a track per thread with its\n"
	"                     data syscalls as slices; names from the trace\n"
	"  --records          csv and jsonl: correlated I/Os instead of events\n"
	"  -o, --output OUT   the output (text formats: default stdout)\n"
	SF_FORCE_HELP
	"  -h, --help         this text\n\n"
	"Exit status: 0 written, 1 unreadable trace or output error, 2 bad arguments.\n",
	.run = convert_run,
};
