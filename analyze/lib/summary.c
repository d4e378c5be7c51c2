/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/lib/summary.h"

/* The correlation counts a report shows, by their names in the file. */
#define CORR_FIELDS(X) X(ios) X(incomplete) X(stale) X(orphan_exits) X(orphan_requests) \
	X(orphan_completions) X(out_of_order)

/* A label as one line: control bytes, DEL and backslash as \xNN (as st-format cat prints them). */
static void put_label(FILE *f, const char *label)
{
	const unsigned char *p;

	for (p = (const unsigned char *)label; *p; p++)
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			fprintf(f, "\\x%02x", *p);
		else
			putc(*p, f);
}

/*
 * Run-clock time t on the wall clock; where a hostile file's times or offset
 * put it outside 0..INT64_MAX, held at the nearer end, so that the span's
 * end never comes before its start.
 */
static int64_t wall_held(uint64_t t, int64_t off)
{
	int64_t wall;

	if (!st_wall_time(t, off, &wall))
		return wall;
	return t <= INT64_MAX && off < 0 ? 0 : INT64_MAX;
}

int an_summary_save(struct an_run *r, const char *path, unsigned output_flags, char *err,
		    size_t cap)
{
	const struct an_stats *s = &r->stats;
	uint64_t from = r->filter.from > r->info.first_ts ? r->filter.from : r->info.first_ts;
	char why[160];
	int fd = st_output_open(path, output_flags, why, sizeof(why));
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	uint32_t g;
	int k, ret = 0;

	if (!f) {
		snprintf(err, cap, "%s: %s", path, fd < 0 ? why : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fprintf(f, "%s %d\n", AN_SUMMARY_MAGIC, AN_SUMMARY_VERSION);
	fprintf(f, "by %s\n", an_by_name(s->by));
	fprintf(f, "files %u\nrecovered %u\nevents %" PRIu64 "\nlost_events %" PRIu64 "\n",
		r->info.files, r->info.recovered, r->info.events, r->info.lost_events);
	/* The span the rates cover, on the wall clock. */
	fprintf(f, "wall_clock %" PRId64 " %" PRId64 "\n", wall_held(from, r->wall_offset),
		wall_held(from + an_run_duration(r), r->wall_offset));
#define PUT(name) fprintf(f, "corr.%s %" PRIu64 "\n", #name, r->corr.name);
	CORR_FIELDS(PUT)
#undef PUT
	for (g = 0; g < s->ngroups && !ret; g++) {
		struct an_group *gr = &s->groups[g];

		fprintf(f, "group %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			" %" PRIu64 " ", gr->count, gr->bytes, gr->incomplete, gr->errors, gr->merged,
			gr->split, gr->requeues);
		put_label(f, gr->label);
		putc('\n', f);
		if (gr->first)
			fprintf(f, "busy %" PRId64 " %" PRId64 "\n", (int64_t)gr->first + r->wall_offset,
				(int64_t)gr->last + r->wall_offset);
		for (k = 0; k < AN_ST_COUNT && !ret; k++) {
			if (!gr->st[k].n)
				continue;
			fprintf(f, "stage %s ", an_stage_name(&r->spans, k));
			ret = an_qest_save(&gr->st[k], f);
			fputc('\n', f);
		}
	}
	fprintf(f, "end\n");
	if (ret)
		snprintf(err, cap, "%s: out of memory", path);
	if (fclose(f) && !ret) {
		snprintf(err, cap, "%s: %s", path, strerror(errno));
		ret = -1;
	}
	return ret;
}

int an_summary_is(const char *path)
{
	char head[sizeof(AN_SUMMARY_MAGIC)] = "";
	FILE *f = fopen(path, "r");
	int is;

	if (!f)
		return 0;
	is = fread(head, 1, sizeof(head) - 1, f) == sizeof(head) - 1 &&
	     !memcmp(head, AN_SUMMARY_MAGIC, sizeof(head) - 1);
	fclose(f);
	return is;
}

/*
 * Far above a summary's longest line (a stage with every bucket of its
 * sketch, 8192 of " INDEX:COUNT"), and a bound on what a line of a file that
 * is no summary (/dev/zero, a trace) may cost.
 */
#define SUMMARY_LINE_MAX (1u << 20)

/* A parse of one summary file. */
struct reader {
	FILE *f;
	const char *path;
	char *line;		/* SUMMARY_LINE_MAX bytes */
	unsigned lineno;
	const char *broken;	/* why the last line was not read, NULL at the end */
	char *err;
	size_t errcap;
};

/* The next line without its newline; NULL at the end, on a NUL byte or past SUMMARY_LINE_MAX. */
static char *next_line(struct reader *rd)
{
	size_t n = 0;
	int c;

	rd->lineno++;
	while ((c = getc_unlocked(rd->f)) != EOF && c != '\n') {
		if (!c || n + 1 == SUMMARY_LINE_MAX) {
			rd->broken = c ? "longer than a summary's lines (1 MiB)" : "a NUL byte";
			return NULL;
		}
		rd->line[n++] = (char)c;
	}
	if (c == EOF && !n)
		return NULL;
	rd->line[n] = 0;
	return rd->line;
}

static int bad(struct reader *rd, const char *what)
{
	snprintf(rd->err, rd->errcap, "%s: line %u: %s", rd->path, rd->lineno,
		 rd->broken ? rd->broken : what);
	return -1;
}

/* "KEY VALUE" with an unsigned decimal value. */
static int keyed_u64(struct reader *rd, const char *key, uint64_t *v)
{
	size_t n = strlen(key);
	char *line = next_line(rd), *end;

	if (!line || strncmp(line, key, n) || line[n] != ' ' || line[n + 1] < '0' || line[n + 1] > '9')
		return bad(rd, key);
	errno = 0;
	*v = strtoull(line + n + 1, &end, 10);
	return errno || *end ? bad(rd, key) : 0;
}

static int read_header(struct reader *rd, struct an_run *r)
{
	char *line = next_line(rd), *end;
	uint64_t files, recovered, events, lost;
	long long from, to;
	unsigned long version;
	int by;

	if (!line || strncmp(line, AN_SUMMARY_MAGIC " ", sizeof(AN_SUMMARY_MAGIC)))
		return bad(rd, "not an st-analyze summary");
	errno = 0;
	version = strtoul(line + sizeof(AN_SUMMARY_MAGIC), &end, 10);
	if (errno || *end || !version)
		return bad(rd, "not an st-analyze summary");
	if (version > AN_SUMMARY_VERSION) {
		snprintf(rd->err, rd->errcap, "%s: summary format version %lu is newer than this "
			 "st-analyze reads (%d)", rd->path, version, AN_SUMMARY_VERSION);
		return -1;
	}
	line = next_line(rd);
	if (!line || strncmp(line, "by ", 3) || (by = an_by_by_name(line + 3)) < 0)
		return bad(rd, "by: not a grouping st-analyze knows");
	if (!r->info.files)
		an_stats_init(&r->stats, (enum an_by)by, r->stats.exact_limit, NULL);
	else if (r->stats.by != (enum an_by)by)
		return bad(rd, "grouped otherwise than the summaries before it (save them with one --by)");
	if (keyed_u64(rd, "files", &files) || keyed_u64(rd, "recovered", &recovered) ||
	    keyed_u64(rd, "events", &events) || keyed_u64(rd, "lost_events", &lost))
		return -1;
	line = next_line(rd);
	if (!line || sscanf(line, "wall_clock %lld %lld", &from, &to) != 2 || to < from)
		return bad(rd, "wall_clock: not a span");
#define GET(name) { uint64_t v; if (keyed_u64(rd, "corr." #name, &v)) return -1; r->corr.name += v; }
	CORR_FIELDS(GET)
#undef GET
	/* Spans on the wall clock (ns since 1970 fit in 63 bits); runs start at the earliest. */
	if (!r->info.files || (uint64_t)from < r->info.first_ts)
		r->info.first_ts = (uint64_t)from;
	if ((uint64_t)to > r->info.last_ts)
		r->info.last_ts = (uint64_t)to;
	r->info.files += (unsigned)files;
	r->info.recovered += (unsigned)recovered;
	r->info.events += events;
	r->info.lost_events = st_add_count(r->info.lost_events, lost);
	return 0;
}

/* put_label()'s text back into label; -1 when malformed or too long. */
static int get_label(const char *s, char *label, size_t cap)
{
	char hex[3] = "";
	size_t n = 0;

	for (; *s; s++) {
		if (n + 1 >= cap)
			return -1;
		if (*s != '\\') {
			label[n++] = *s;
			continue;
		}
		if (s[1] != 'x' || !isxdigit((unsigned char)s[2]) || !isxdigit((unsigned char)s[3]))
			return -1;
		memcpy(hex, s + 2, 2);
		label[n] = (char)strtoul(hex, NULL, 16);
		if (!label[n++])
			return -1;
		s += 3;
	}
	label[n] = 0;
	return 0;
}

/*
 * "group COUNT BYTES INCOMPLETE ERRORS MERGED SPLIT REQUEUES LABEL": the
 * group `one` holds next (its only one).
 */
static int read_group(struct reader *rd, const char *line, struct an_stats *one)
{
	struct an_group *g = &one->groups[0];
	int used = 0, k;

	memset(g, 0, sizeof(*g));
	if (sscanf(line, "group %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		   " %" SCNu64 " %n", &g->count, &g->bytes, &g->incomplete, &g->errors, &g->merged,
		   &g->split, &g->requeues, &used) != 7 || !used || !line[used] ||
	    get_label(line + used, g->label, sizeof(g->label)))
		return bad(rd, "group: malformed");
	for (k = 0; k < AN_ST_COUNT; k++)
		an_qest_init(&g->st[k], one->exact_limit);
	one->ngroups = 1;
	return 0;
}

/* "busy FIRST LAST" (wall-clock ns), once in a group: when it was busy. */
static int read_busy(struct reader *rd, const char *line, struct an_stats *one)
{
	struct an_group *g = &one->groups[0];
	long long first, last;
	int used = 0;

	if (!one->ngroups || g->first || sscanf(line, "busy %lld %lld%n", &first, &last, &used) != 2 ||
	    line[used] || first <= 0 || last < first)
		return bad(rd, "busy: not one span in its group");
	g->first = (uint64_t)first;
	g->last = (uint64_t)last;
	return 0;
}

/* "stage NAME N SUM MIN MAX INDEX:COUNT...": a stage of the group being read. */
static int read_stage(struct reader *rd, char *line, struct an_stats *one,
		      const struct an_span_defs *spans)
{
	char *name_end = strncmp(line, "stage ", 6) ? NULL : strchr(line + 6, ' ');
	struct an_qest *e;
	int k;

	if (!one->ngroups || !name_end)
		return bad(rd, "expected a group or stage line");
	*name_end = 0;
	k = an_stage_by_name(spans, line + 6);
	if (k < 0)
		return bad(rd, "stage: unknown");
	e = &one->groups[0].st[k];
	if (e->n || e->sk.counts || an_qest_load(e, name_end + 1))
		return bad(rd, "stage: repeated or malformed");
	return 0;
}

/* Merge the group read into r->stats, and empty `one` for the next. */
static int flush_group(struct reader *rd, struct an_run *r, struct an_stats *one)
{
	int k, ret = 0;

	if (!one->ngroups)
		return 0;
	if (an_stats_merge(&r->stats, one))
		ret = bad(rd, "out of memory");
	for (k = 0; k < AN_ST_COUNT; k++)
		an_qest_free(&one->groups[0].st[k]);
	one->ngroups = 0;
	return ret;
}

static int read_groups(struct reader *rd, struct an_run *r)
{
	struct an_stats one;	/* the group being read, merged into r->stats once whole */
	char *line = NULL;
	int ret = 0;

	an_stats_init(&one, r->stats.by, r->stats.exact_limit, NULL);
	one.groups = calloc(1, sizeof(*one.groups));
	one.cap = 1;
	if (!one.groups || one.failed)
		ret = bad(rd, "out of memory");
	while (!ret && (line = next_line(rd)) && strcmp(line, "end")) {
		if (!strncmp(line, "group ", 6))
			ret = flush_group(rd, r, &one) || read_group(rd, line, &one) ? -1 : 0;
		else if (!strncmp(line, "busy ", 5))
			ret = read_busy(rd, line, &one);
		else
			ret = read_stage(rd, line, &one, &r->spans);
	}
	if (!ret && !line)
		ret = bad(rd, "cut short: no end line");
	if (!ret)
		ret = flush_group(rd, r, &one);
	an_stats_free(&one);
	return ret;
}

/*
 * A summary is read once, front to back, a line at a time: "-" and a FIFO
 * are read as they come (a copy first would let an endless stream fill
 * $TMPDIR), a FIFO opened without blocking, so one without a writer reads
 * empty at once. A device or a directory carries no summary.
 */
static FILE *open_summary(const char *path, char *err, size_t cap)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) :
				     fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	struct stat st;
	FILE *f;

	if (fd < 0) {
		snprintf(err, cap, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) {
		snprintf(err, cap, "%s: not an st-analyze summary (not a file)", path);
		close(fd);
		return NULL;
	}
	/* a writer that comes is waited for like a pipe's */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) || !(f = fdopen(fd, "r"))) {
		snprintf(err, cap, "%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	return f;
}

int an_summary_load(struct an_run *r, const char *path, char *err, size_t cap)
{
	struct reader rd = { .path = path, .err = err, .errcap = cap };
	int ret;

	if (!(rd.f = open_summary(path, err, cap)))
		return -1;
	rd.line = malloc(SUMMARY_LINE_MAX);
	if (!rd.line) {
		snprintf(err, cap, "%s: out of memory", path);
		fclose(rd.f);
		return -1;
	}
	ret = read_header(&rd, r);
	if (!ret)
		ret = read_groups(&rd, r);
	free(rd.line);
	fclose(rd.f);
	return ret;
}
