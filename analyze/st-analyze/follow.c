/* SPDX-License-Identifier: MIT */
/*
 * follow.c - st-analyze --follow: read a recording while st-record writes
 * it, and show every --interval what the last interval and the run so far
 * look like (analyze.h, an_follow()).
 *
 * The file is read as it grows (st_reader ST_READ_LIVE: each intact chunk
 * once it has landed); standard input is copied by a thread of its own into
 * an unlinked file in $TMPDIR as fast as it comes, so the recorder never
 * waits on the analysis, and that file is followed the same way. Events are
 * handed to the correlator only once they are older than the newest one by
 * the recorder's --flush-interval and a margin (HOLD_MARGIN_NS): every chunk
 * that can still hold an older event has landed by then, so the events come
 * in the order a reading of the whole file gives them. A file that stopped
 * growing for that long has no older events to come: all of it is handed out.
 *
 * The final report is the offline report of the same files (the caller runs
 * it once an_follow() returns), so it equals `st-analyze FILE` by design.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "analyze/st-analyze/analyze.h"
#include "analyze/st-analyze/metrics.h"
#include "common/number.h"
#include "common/text.h"

#define POLL_NS		100000000ull	/* how often the file is looked at */
#define HOLD_MARGIN_NS	500000000ull	/* drains, metadata held back, a busy recorder */
#define DEFAULT_FLUSH_NS 1000000000ull	/* recorders before --flush-interval sealed once a second */
#define STDIN_GRACE_NS	2000000000ull	/* after SIGINT: for the recorder to end its stream */
#define TAIL_SLOTS	64		/* processes and files tracked for the top lists */
#define TAIL_SHOWN	5
#define GROUPS_SHOWN	20

/* Time in the tail per process or file, heavy hitters kept in a fixed table. */
struct tail_slot {
	char key[96];
	uint64_t ns, ios;
};

struct tail_table {
	struct tail_slot slot[TAIL_SLOTS];
	unsigned n;
};

/* Standard input copied into an unlinked file by a thread. */
struct spool {
	int fd;
	pthread_t thread;
	int running;
	int eof;		/* atomic: the stream ended */
	int error;		/* atomic: errno of a failed read or write */
};

struct follower {
	const struct an_opts *o;
	const char *prog;
	const char *arg;	/* FILE, "-", or a rotating set's pattern */
	int pattern;
	char path[4096];	/* the file being read */
	unsigned part;		/* of a rotating set: parts done */
	char **parts;		/* the files read, for the final report */
	int nparts;
	struct spool spool;
	struct an_names *names;
	struct an_input *in;
	struct an_corr *corr;
	struct an_spans *spans;
	struct an_filter filter;
	uint32_t dev;		/* --dev resolved, 0 any */
	char host[128];
	uint64_t hold_ns;
	uint64_t size;		/* of the file at the last look, and since when */
	uint64_t size_since;
	/* consumers */
	struct an_stats run, last;
	struct tail_table procs, files;
	uint64_t tail_threshold;	/* total latency of an I/O counted in the tail */
	struct an_metrics *metrics;
	/* view */
	int tty;
	uint64_t view_start, run_start;	/* monotonic */
	uint64_t first_ts, clock, view_clock;	/* event clock: first event, released up to, at the last view */
	uint64_t events_before, lost_before;	/* the recording's counts at the last view */
	uint64_t base_events, base_lost, base_bytes;	/* of the parts done (rotating set) */
};

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void nap(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull) };

	nanosleep(&ts, NULL);
}

/* ---- standard input -------------------------------------------------------- */

static void *spool_copy(void *arg)
{
	struct spool *s = arg;
	static char buf[1 << 20];
	ssize_t n;

	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write(s->fd, buf, (size_t)n) != n) {
			__atomic_store_n(&s->error, errno ? errno : EIO, __ATOMIC_RELEASE);
			break;
		}
	}
	__atomic_store_n(&s->eof, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int spool_start(struct follower *f)
{
	const char *dir = getenv("TMPDIR");
	struct stat st;

	if (isatty(STDIN_FILENO)) {
		fprintf(stderr, "%s: -: standard input is a terminal; pipe st-record -o - into it\n", f->prog);
		return 2;
	}
	/* a regular file on standard input is followed in place */
	if (!fstat(STDIN_FILENO, &st) && S_ISREG(st.st_mode)) {
		snprintf(f->path, sizeof(f->path), "/dev/fd/%d", STDIN_FILENO);
		return 0;
	}
	f->spool.fd = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (f->spool.fd < 0) {
		fprintf(stderr, "%s: -: cannot make a file in $TMPDIR for standard input: %s\n", f->prog,
			strerror(errno));
		return 2;
	}
	if (pthread_create(&f->spool.thread, NULL, spool_copy, &f->spool)) {
		fprintf(stderr, "%s: -: cannot start the thread that reads standard input\n", f->prog);
		return 2;
	}
	f->spool.running = 1;
	snprintf(f->path, sizeof(f->path), "/dev/fd/%d", f->spool.fd);
	return 0;
}

/* Has the writer stopped: standard input ended, or SIGINT and its grace passed? */
static int writer_done(struct follower *f, uint64_t stop_at)
{
	if (f->spool.running && __atomic_load_n(&f->spool.eof, __ATOMIC_ACQUIRE))
		return 1;
	if (!stop_signal)
		return 0;
	return !f->spool.running || mono_ns() - stop_at >= STDIN_GRACE_NS;
}

static void spool_stop(struct follower *f)
{
	if (!f->spool.running)
		return;
	if (!__atomic_load_n(&f->spool.eof, __ATOMIC_ACQUIRE))
		pthread_cancel(f->spool.thread);
	pthread_join(f->spool.thread, NULL);
	f->spool.running = 0;
}

/* ---- the files ------------------------------------------------------------- */

/* The file being read as messages name it. */
static const char *shown(const struct follower *f)
{
	return f->spool.running ? "standard input" : f->path;
}

/* A rotating set's part after the ones done, "" while there is none. */
static void next_part(struct follower *f)
{
	glob_t g;

	f->path[0] = 0;
	if (glob(f->arg, 0, NULL, &g))
		return;
	if (g.gl_pathc > f->part)
		snprintf(f->path, sizeof(f->path), "%s", g.gl_pathv[f->part]);
	globfree(&g);
}

static int keep_part(struct follower *f)
{
	char **p = realloc(f->parts, (size_t)(f->nparts + 1) * sizeof(*p));

	if (!p || !(p[f->nparts] = strdup(f->path))) {
		if (p)
			f->parts = p;
		return -1;
	}
	f->parts = p;
	f->nparts++;
	return 0;
}

/*
 * Open the file to follow, waiting (with a message, once) while it does
 * not exist or has not its header and schema yet. 0, 1 when a signal ended
 * the wait, 2 after an error.
 */
static int open_file(struct follower *f)
{
	/* standard input's first bytes and a set's next part come at once: tell only a long wait */
	int said = 0, quiet = f->spool.running || f->part ? 10 : 0;
	char err[512];

	for (;;) {
		int ret;

		if (f->pattern)
			next_part(f);
		if (f->path[0] && !access(f->path, F_OK)) {
			struct an_input *in;

			ret = an_input_open_live(&in, f->path, f->names, err, sizeof(err));
			if (!ret) {
				an_input_close(f->in);
				f->in = in;
				break;
			}
			an_input_close(in);
			if (ret != ST_ETRUNCATED) {
				fprintf(stderr, "%s: %s\n", f->prog, err);
				return 2;
			}
		}
		if (stop_signal)
			return 1;
		if (said++ == quiet)
			fprintf(stderr, "%s: waiting for %s to %s\n", f->prog,
				f->pattern || !f->path[0] ? f->arg : shown(f),
				f->path[0] && !access(f->path, F_OK) ? "hold a trace header" : "appear");
		nap(POLL_NS);
	}
	if (said > quiet)
		fprintf(stderr, "%s: following %s\n", f->prog, shown(f));
	return keep_part(f) ? (fprintf(stderr, "%s: out of memory\n", f->prog), 2) : 0;
}

/* What the recorder's options say about how long a record may wait in an open chunk. */
static uint64_t hold_of(const struct an_input *in)
{
	const char *text = an_input_meta(in, "options");
	json_object *opts = text ? json_tokener_parse(text) : NULL, *v;
	uint64_t flush = 0;

	if (opts && json_object_object_get_ex(opts, "flush_interval_ns", &v))
		flush = json_object_get_uint64(v);
	json_object_put(opts);
	return (flush ? flush : DEFAULT_FLUSH_NS) + HOLD_MARGIN_NS;
}

/* ---- consumers ------------------------------------------------------------- */

static void tail_add(struct tail_table *t, const char *key, uint64_t ns)
{
	struct tail_slot *s = NULL, *min = NULL;
	unsigned i;

	for (i = 0; i < t->n && !s; i++)
		if (!strcmp(t->slot[i].key, key))
			s = &t->slot[i];
	if (!s && t->n < TAIL_SLOTS) {
		s = &t->slot[t->n++];
		snprintf(s->key, sizeof(s->key), "%s", key);
	}
	if (!s) {
		/* space-saving: the smallest gives way, its count kept as the newcomer's error */
		for (i = 0; i < t->n; i++)
			if (!min || t->slot[i].ns < min->ns)
				min = &t->slot[i];
		s = min;
		snprintf(s->key, sizeof(s->key), "%s", key);
	}
	s->ns += ns;
	s->ios++;
}

static void on_io(void *ctx, const struct an_io *io)
{
	struct follower *f = ctx;
	struct an_filter own = f->filter;
	char dev[64], file[256];
	uint64_t ns;

	own.dev = f->dev;
	if (!an_filter_match(&own, f->names, io))
		return;
	an_stats_add(&f->run, io);
	an_stats_add(&f->last, io);
	if (f->metrics)
		an_metrics_io(f->metrics, f->host, an_names_dev(f->names, io->dev, dev, sizeof(dev)), io);
	if (io->flags & AN_IO_INCOMPLETE || !an_io_stage(io, AN_ST_TOTAL, &ns) || ns < f->tail_threshold)
		return;
	snprintf(file, sizeof(file), "%s[%" PRIu32 "]", an_names_comm(f->names, io->pid), io->pid);
	tail_add(&f->procs, file, ns);
	tail_add(&f->files, an_names_file(f->names, io, file, sizeof(file)), ns);
}

/* Hand the events up to what the input lets out to the correlator. */
static int drain(struct follower *f)
{
	const struct st_event_header *ev;
	char err[512];
	int ret;

	while ((ret = an_input_next(f->in, &ev, err, sizeof(err))) > 0) {
		if (an_names_wants(ev->type))
			an_names_event(f->names, ev);
		an_corr_event(f->corr, ev);
		if (f->spans)
			an_spans_event(f->spans, ev, on_io, f);
	}
	if (ret < 0)
		fprintf(stderr, "%s: %s\n", f->prog, err);
	return ret < 0 ? 2 : 0;
}

/* ---- the view -------------------------------------------------------------- */

static const enum an_stage tail_stages[] = {
	AN_ST_SYS2FS, AN_ST_FS2Q, AN_ST_Q2G, AN_ST_G2I, AN_ST_I2D, AN_ST_D2C, AN_ST_C2RET,
	AN_ST_WB, AN_ST_JNL, AN_ST_FLUSH, AN_ST_REAP,
};

static double per_sec(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0;
}

/* p50, p99 and p99.9 of e in us, dashes without one. */
static void print_quantiles(FILE *out, struct an_qest *e)
{
	if (!e) {
		fprintf(out, " %7s %7s %7s", "-", "-", "-");
		return;
	}
	fprintf(out, " %7.1f %7.1f %7.1f", an_us(an_qest_quantile(e, 0.5)), an_us(an_qest_quantile(e, 0.99)),
		an_us(an_qest_quantile(e, 0.999)));
}

/*
 * One row: rates over secs of the trace, total's quantiles, and those of the
 * stage with the longest p99 of the ones that do not overlap.
 */
static void print_row(FILE *out, const char *window, struct an_group *g, double secs)
{
	enum an_stage worst = AN_ST_TOTAL;
	uint64_t worst_p99 = 0;

	if (!g || !g->count) {
		fprintf(out, "  %-14s %9s\n", window, "-");
		return;
	}
	for (size_t i = 0; i < sizeof(tail_stages) / sizeof(*tail_stages); i++) {
		struct an_qest *e = &g->st[tail_stages[i]];
		uint64_t p99 = e->n ? an_qest_quantile(e, 0.99) : 0;

		if (e->n && p99 >= worst_p99) {
			worst = tail_stages[i];
			worst_p99 = p99;
		}
	}
	fprintf(out, "  %-14s %9.0f %9.2f", window, per_sec(g->count, secs), per_sec(g->bytes, secs) / 1e6);
	print_quantiles(out, &g->st[AN_ST_TOTAL]);
	fprintf(out, "  %-6s", worst != AN_ST_TOTAL ? an_stage_name(NULL, worst) : "-");
	print_quantiles(out, worst != AN_ST_TOTAL ? &g->st[worst] : NULL);
	fprintf(out, " %7" PRIu64 "\n", g->errors);
}

static struct an_group *group_named(struct an_stats *s, const char *label)
{
	for (uint32_t i = 0; i < s->ngroups; i++)
		if (!strcmp(s->groups[i].label, label))
			return &s->groups[i];
	return NULL;
}

static int slot_cmp(const void *a, const void *b)
{
	const struct tail_slot *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : strcmp(x->key, y->key);
}

static void print_tail(FILE *out, const char *what, struct tail_table *t)
{
	char shown[TEXT_SHOWN_MAX];

	qsort(t->slot, t->n, sizeof(*t->slot), slot_cmp);
	fprintf(out, "top %s by tail time:", what);
	for (unsigned i = 0; i < t->n && i < TAIL_SHOWN; i++)
		fprintf(out, "%s %s %.3f ms (%" PRIu64 " I/Os)", i ? "," : "",
			text_shown(t->slot[i].key, shown, sizeof(shown)), t->slot[i].ns / 1e6, t->slot[i].ios);
	fputs(t->n ? "\n" : " -\n", out);
}

/* Groups of the run, most I/Os first. */
static int group_cmp(const void *a, const void *b)
{
	const struct an_group *x = *(struct an_group *const *)a, *y = *(struct an_group *const *)b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->label, y->label);
}

/*
 * Seconds of the trace from `from` to the event clock, within --from/--to
 * as the offline report counts them: a follower catching up shows the
 * trace's rates, not its own.
 */
static double trace_secs(const struct follower *f, uint64_t from)
{
	uint64_t to = f->filter.to && f->filter.to < f->clock ? f->filter.to : f->clock;

	from = from > f->first_ts ? from : f->first_ts;
	from = from > f->filter.from ? from : f->filter.from;
	return to > from ? (double)(to - from) / 1e9 : 0;
}

/* The recorder's ring buffer: its size and the most it held, when the file says. */
static int ring_fill(const struct an_input *in, uint64_t *size, uint64_t *used)
{
	const char *s = an_input_meta(in, "record.ringbuf_bytes");
	const char *u = an_input_meta(in, "record.ringbuf_used_max_bytes");

	return s && u && !parse_count(s, 1, UINT64_MAX, size) && !parse_count(u, 0, UINT64_MAX, used);
}

static void print_view(struct follower *f, uint64_t now)
{
	const struct an_input_info *info = an_input_info(f->in);
	uint64_t events = f->base_events + info->events, lost = f->base_lost + info->lost_events;
	double secs = trace_secs(f, f->view_clock), run = trace_secs(f, 0);
	struct an_health health = { .events = events, .lost = lost, .file_bytes = f->base_bytes + f->size };
	struct an_group **order = calloc(f->run.ngroups ? f->run.ngroups : 1, sizeof(*order));
	uint64_t incomplete = 0, p99 = 0;
	struct an_qest all;
	char stamp[32];
	struct timespec wall;
	struct tm tm;
	FILE *out = stdout;

	an_stats_settle(&f->run);
	an_stats_settle(&f->last);
	clock_gettime(CLOCK_REALTIME, &wall);
	localtime_r(&wall.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
	/* on a terminal the view replaces the last one: cursor home, clear to the end */
	if (f->tty)
		fputs("\033[H\033[J", out);
	for (uint32_t i = 0; i < f->run.ngroups; i++)
		incomplete += f->run.groups[i].incomplete;
	fprintf(out, "--- live %s.%03ld: %s, %.1f s followed, %" PRIu64 " events (%.0f/s), lost events: %"
		PRIu64 " (+%" PRIu64 ")", stamp, wall.tv_nsec / 1000000, shown(f),
		(double)(now - f->run_start) / 1e9, events, per_sec(events - f->events_before, secs), lost,
		lost - f->lost_before);
	if (ring_fill(f->in, &health.ring_bytes, &health.ring_used_max))
		fprintf(out, ", ring buffer: at most %" PRIu64 " of %" PRIu64 " bytes used (%.1f%%)",
			health.ring_used_max, health.ring_bytes,
			100.0 * (double)health.ring_used_max / (double)health.ring_bytes);
	fprintf(out, ", incomplete I/Os: %" PRIu64 "\n", incomplete);
	/* rates over the trace's time; quantiles in us of total and of the stage that dominates the tail */
	fprintf(out, "%36s %23s  %s\n", "", "latency of total, us", "the tail's longest stage, us");
	fprintf(out, "%-16s %9s %9s %7s %7s %7s  %-6s %7s %7s %7s %7s\n", an_by_name(f->o->by), "IOPS", "MB/s",
		"p50", "p99", "p99.9", "stage", "p50", "p99", "p99.9", "errors");
	if (order) {
		char label[32], shown[TEXT_SHOWN_MAX];

		for (uint32_t i = 0; i < f->run.ngroups; i++)
			order[i] = &f->run.groups[i];
		qsort(order, f->run.ngroups, sizeof(*order), group_cmp);
		snprintf(label, sizeof(label), "last %.3g s", secs);
		for (uint32_t i = 0; i < f->run.ngroups && i < GROUPS_SHOWN; i++) {
			fprintf(out, "%s\n", text_shown(order[i]->label, shown, sizeof(shown)));
			print_row(out, label, group_named(&f->last, order[i]->label), secs);
			print_row(out, "run so far", order[i], run);
		}
		if (f->run.ngroups > GROUPS_SHOWN)
			fprintf(out, "(%u more groups)\n", f->run.ngroups - GROUPS_SHOWN);
	}
	free(order);
	/* The next interval's tail: I/Os at or above this one's p99 of total. */
	an_qest_init(&all, f->o->exact_limit);
	if (!an_stats_merge_stage(&f->last, AN_ST_TOTAL, &all) && all.n)
		p99 = an_qest_quantile(&all, 0.99);
	an_qest_free(&all);
	fprintf(out, "tail: I/Os at or above %.1f us (p99 of total before), last %.3g s\n",
		an_us(f->tail_threshold), secs);
	print_tail(out, "processes", &f->procs);
	print_tail(out, "files", &f->files);
	fputc('\n', out);
	fflush(out);
	f->tail_threshold = p99;
	memset(&f->procs, 0, sizeof(f->procs));
	memset(&f->files, 0, sizeof(f->files));
	an_stats_free(&f->last);
	an_stats_init(&f->last, f->o->by, f->o->exact_limit, f->names);
	f->last.host = f->host;
	f->view_start = now;
	f->view_clock = f->clock;
	f->events_before = events;
	f->lost_before = lost;
	if (f->metrics)
		an_metrics_health(f->metrics, f->host, &health);
}

/* ---- the loop -------------------------------------------------------------- */

/* The pipeline over the first file: names, filters, correlator. 0 or 2. */
static int setup(struct follower *f)
{
	const char *host = an_input_meta(f->in, "host.name");
	uint64_t start = an_input_info(f->in)->start_ts;

	snprintf(f->host, sizeof(f->host), "%s", host ? host : "?");
	f->filter.pid = f->o->pid;
	f->filter.comm = f->o->comm;
	if (f->o->from)
		st_parse_time(f->o->from, start, &f->filter.from);
	if (f->o->to)
		st_parse_time(f->o->to, start, &f->filter.to);
	if (f->o->dev && !(f->dev = an_names_dev_by_name(f->names, f->o->dev))) {
		fprintf(stderr, "%s: --dev %s: no such device in the trace's metadata\n", f->prog, f->o->dev);
		return 2;
	}
	f->filter.dev = f->dev;
	if (an_corr_new(&f->corr, f->o->stale, on_io, f)) {
		fprintf(stderr, "%s: out of memory\n", f->prog);
		return 2;
	}
	an_stats_init(&f->run, f->o->by, f->o->exact_limit, f->names);
	an_stats_init(&f->last, f->o->by, f->o->exact_limit, f->names);
	f->run.host = f->last.host = f->host;
	return 0;
}

/*
 * Start reading the file just opened. --span pairs within one input (it
 * reads the events' types through it): a part's unpaired starts end with it.
 * 0 or 2.
 */
static int start_file(struct follower *f)
{
	char err[512];

	an_spans_finish(f->spans, on_io, f);
	an_spans_free(f->spans);
	if (an_spans_new(&f->spans, &f->o->spans, f->in, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", f->prog, err);
		return 2;
	}
	f->hold_ns = hold_of(f->in);
	f->size = 0;
	f->size_since = mono_ns();
	if (an_input_start(f->in, 0, UINT64_MAX, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", f->prog, err);
		return 2;
	}
	return 0;
}

/*
 * How far the input may go: events older than the newest by the hold; all
 * of them once the file stopped growing for that long.
 */
static uint64_t release_until(struct follower *f, uint64_t now)
{
	const struct an_input_info *info = an_input_info(f->in);
	struct stat st;

	if (!stat(f->path, &st) && (uint64_t)st.st_size != f->size) {
		f->size = (uint64_t)st.st_size;
		f->size_since = now;
	}
	if (now - f->size_since >= f->hold_ns)
		return info->last_ts;
	return info->last_ts > f->hold_ns ? info->last_ts - f->hold_ns : 0;
}

/* A rotated part names the one after it (record.next_file); the last one does not. */
static int has_next_part(const struct follower *f)
{
	return f->pattern && an_input_meta(f->in, "record.next_file");
}

static int follow_loop(struct follower *f)
{
	uint64_t interval = f->o->interval ? f->o->interval : 1000000000ull, stop_at = 0;
	char err[512];
	int ret, err_no;

	f->run_start = f->view_start = mono_ns();
	for (;;) {
		uint64_t now = mono_ns(), until;
		const struct an_input_info *info;
		int done;

		if (stop_signal && !stop_at)
			stop_at = now;
		done = writer_done(f, stop_at);
		until = release_until(f, now);
		ret = an_input_refresh(f->in, done, until, err, sizeof(err));
		if (ret < 0) {
			fprintf(stderr, "%s: %s\n", f->prog, err);
			return 2;
		}
		info = an_input_info(f->in);
		f->first_ts = f->first_ts ? f->first_ts : info->first_ts;
		until = ret && until < info->last_ts ? until : info->last_ts;
		/* a rotating set's next part holds its newest events back again */
		f->clock = until > f->clock ? until : f->clock;
		if (drain(f))
			return 2;
		now = mono_ns();
		if (now - f->view_start >= interval)
			print_view(f, now);
		if (!ret && has_next_part(f) && !stop_signal) {
			f->base_events += an_input_info(f->in)->events;
			f->base_lost += an_input_info(f->in)->lost_events;
			f->base_bytes += f->size;
			f->part++;
			ret = open_file(f);
			if (ret == 2 || (!ret && start_file(f)))
				return 2;
			if (!ret)
				continue;
			break;	/* a signal while waiting for the next part */
		}
		if (!ret)
			break;
		nap(POLL_NS);
	}
	if ((err_no = __atomic_load_n(&f->spool.error, __ATOMIC_ACQUIRE)))
		fprintf(stderr, "%s: -: standard input stopped being copied to $TMPDIR (%s): what was "
			"copied is read as a cut file\n", f->prog, strerror(err_no));
	an_corr_finish(f->corr);
	an_spans_finish(f->spans, on_io, f);
	if (an_corr_failed(f->corr) || an_spans_failed(f->spans) || f->run.failed) {
		fprintf(stderr, "%s: out of memory while correlating\n", f->prog);
		return 2;
	}
	print_view(f, mono_ns());
	return 0;
}

static void follower_free(struct follower *f)
{
	spool_stop(f);
	an_metrics_stop(f->metrics);
	an_stats_free(&f->run);
	an_stats_free(&f->last);
	an_spans_free(f->spans);
	an_corr_free(f->corr);
	an_input_close(f->in);
	an_names_free(f->names);
}

int an_follow(const struct an_opts *o, const char *arg, const char *prog, char ***files, int *nfiles)
{
	struct follower f = { .o = o, .prog = prog, .arg = arg, .spool = { .fd = -1 } };
	struct sigaction sa = { .sa_handler = on_stop };
	char err[512];
	int ret;

	*files = NULL;
	*nfiles = 0;
	f.pattern = strpbrk(arg, "*?[") != NULL;
	f.tty = isatty(STDOUT_FILENO);
	if (o->metrics && an_metrics_start(&f.metrics, o->metrics, &o->spans, err, sizeof(err))) {
		fprintf(stderr, "%s: --metrics %s\n", prog, err);
		return 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(arg, "-"))
		ret = spool_start(&f);
	else
		ret = (snprintf(f.path, sizeof(f.path), "%s", arg), 0);
	if (!ret && an_names_new(&f.names))
		ret = (fprintf(stderr, "%s: out of memory\n", prog), 2);
	if (!ret && (ret = open_file(&f)) == 1)
		ret = (fprintf(stderr, "%s: %s: interrupted before there was a trace to follow\n", prog,
			       arg), 2);
	if (!ret)
		ret = setup(&f);
	if (!ret)
		ret = start_file(&f);
	if (!ret)
		ret = follow_loop(&f);
	if (!ret)
		fprintf(stdout, "--- end of the recording (%s): the report of %s follows\n",
			stop_signal ? "interrupted" : "its end", f.nparts > 1 ? "its files" : "its file");
	fflush(stdout);
	/* standard input's copy (spool.fd) stays open for the report: the path names it */
	follower_free(&f);
	if (ret) {
		while (f.nparts)
			free(f.parts[--f.nparts]);
		free(f.parts);
		return ret;
	}
	*files = f.parts;
	*nfiles = f.nparts;
	return 0;
}
