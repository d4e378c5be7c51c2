/* SPDX-License-Identifier: MIT */
/*
 * metrics.c - the Prometheus endpoint of st-analyze --follow (metrics.h).
 *
 * The follower's thread adds I/Os under a mutex; libmicrohttpd's thread
 * renders the page under the same mutex into a buffer it then sends, so a
 * slow or vanished scraper holds the lock only while the page is printed.
 *
 * libmicrohttpd is loaded by the first an_metrics_start(), not linked: it
 * and the TLS libraries it brings cost every st-analyze run 1.3 ms of
 * start-up and 170 page faults, 2 % of a 4 s recording's summary
 * (scripts/bench/RESULTS.md, 2026-12-03 05:35).
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "analyze/lib/span.h"
#include "analyze/st-analyze/metrics.h"
#include "common/number.h"
#include "common/text.h"

#define LABEL_MAX 64

struct series {
	char host[LABEL_MAX], dev[LABEL_MAX];
	uint8_t op;
	uint64_t ios, bytes, errors, incomplete;
	uint32_t stages;	/* bit per stage with a sample */
	uint64_t n[AN_ST_COUNT], sum_ns[AN_ST_COUNT];
	uint64_t buckets[AN_ST_COUNT][AN_METRICS_BUCKETS];	/* not cumulative; +Inf is n */
};

struct health {
	char host[LABEL_MAX];
	struct an_health h;
};

struct an_metrics {
	pthread_mutex_t lock;
	struct MHD_Daemon *daemon;
	struct series series[AN_METRICS_SERIES];
	unsigned nseries;
	struct health health[AN_METRICS_SERIES];
	unsigned nhealth;
	uint64_t bound_ns[AN_METRICS_BUCKETS];
	const struct an_span_defs *spans;	/* the run's, for the span stages' names */
};

/* libmicrohttpd's functions this file calls, from the library once loaded. */
static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
} mhd;

/*
 * Load libmicrohttpd (MHD_SONAME: the one the build found, module.mk) into
 * mhd; 0, or -1 with why in err. It stays loaded: the daemon's thread runs
 * its code until an_metrics_stop().
 */
static int mhd_load(char *err, size_t cap)
{
	void *lib;

	if (mhd.start_daemon)
		return 0;
	if (!(lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(err, cap, "cannot load %s (Debian: apt-get install libmicrohttpd12): %s",
			 MHD_SONAME, dlerror());
		return -1;
	}
#define MHD_SYM(f) (*(void **)&mhd.f = dlsym(lib, "MHD_" #f))
	if (!MHD_SYM(stop_daemon) || !MHD_SYM(lookup_connection_value) ||
	    !MHD_SYM(create_response_from_buffer) || !MHD_SYM(add_response_header) ||
	    !MHD_SYM(queue_response) || !MHD_SYM(destroy_response) || !MHD_SYM(start_daemon)) {
		snprintf(err, cap, "%s: %s", MHD_SONAME, dlerror());
		mhd.start_daemon = NULL;
		dlclose(lib);
		return -1;
	}
#undef MHD_SYM
	return 0;
}

/* Bucket k's bound: 10^(3 + k/5) ns to three digits, so that its le label is exactly it. */
static uint64_t bound_ns(unsigned k)
{
	char text[32];

	snprintf(text, sizeof(text), "%.3g", pow(10.0, 3.0 + k / 5.0));
	return (uint64_t)strtod(text, NULL);
}

double an_metrics_bound(unsigned k)
{
	return k < AN_METRICS_BUCKETS ? (double)bound_ns(k) / 1e9 : INFINITY;
}

static const char *const op_names[AN_OP_COUNT] = {
	[AN_OP_READ] = "read", [AN_OP_WRITE] = "write", [AN_OP_FLUSH] = "flush",
	[AN_OP_DISCARD] = "discard", [AN_OP_FSYNC] = "fsync", [AN_OP_OTHER] = "other",
	[AN_OP_SPAN] = "span",
};

/*
 * The series of host, dev, op. The last AN_OP_COUNT places are kept for
 * device "other", which takes the devices past the limit, per op; should
 * those run out too (many hosts), the last series takes the rest.
 */
static struct series *series_of(struct an_metrics *m, const char *host, const char *dev, uint8_t op)
{
	struct series *s;

	for (unsigned i = 0; i < m->nseries; i++) {
		s = &m->series[i];
		if (s->op == op && !strcmp(s->dev, dev) && !strcmp(s->host, host))
			return s;
	}
	if (m->nseries >= AN_METRICS_SERIES - AN_OP_COUNT && strcmp(dev, "other"))
		return series_of(m, host, "other", op);
	if (m->nseries == AN_METRICS_SERIES)
		return &m->series[AN_METRICS_SERIES - 1];
	s = &m->series[m->nseries++];
	snprintf(s->host, sizeof(s->host), "%s", host);
	snprintf(s->dev, sizeof(s->dev), "%s", dev);
	s->op = op;
	return s;
}

static unsigned bucket_of(const struct an_metrics *m, uint64_t ns)
{
	unsigned lo = 0, hi = AN_METRICS_BUCKETS;

	/* first bound >= ns (le is inclusive) */
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (m->bound_ns[mid] >= ns)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

void an_metrics_io(struct an_metrics *m, const char *host, const char *dev, const struct an_io *io)
{
	uint64_t ns[AN_ST_COUNT];
	unsigned defined;
	struct series *s;

	pthread_mutex_lock(&m->lock);
	s = series_of(m, host, dev, io->op < AN_OP_COUNT ? io->op : AN_OP_OTHER);
	if (io->flags & AN_IO_INCOMPLETE) {
		s->incomplete++;
		pthread_mutex_unlock(&m->lock);
		return;
	}
	s->ios++;
	s->bytes += io->bytes;
	s->errors += !!(io->flags & AN_IO_ERROR);
	for (defined = an_io_stages(io, ns); defined; defined &= defined - 1) {
		unsigned k = (unsigned)__builtin_ctz(defined), b = bucket_of(m, ns[k]);

		s->stages |= 1u << k;
		s->n[k]++;
		s->sum_ns[k] += ns[k];
		if (b < AN_METRICS_BUCKETS)
			s->buckets[k][b]++;
	}
	pthread_mutex_unlock(&m->lock);
}

void an_metrics_health(struct an_metrics *m, const char *host, const struct an_health *health)
{
	struct health *h = NULL;

	pthread_mutex_lock(&m->lock);
	for (unsigned i = 0; i < m->nhealth && !h; i++)
		if (!strcmp(m->health[i].host, host))
			h = &m->health[i];
	if (!h && m->nhealth < AN_METRICS_SERIES) {
		h = &m->health[m->nhealth++];
		snprintf(h->host, sizeof(h->host), "%s", host);
	}
	if (h)
		h->h = *health;
	pthread_mutex_unlock(&m->lock);
}

/*
 * A label value with \, " and newline escaped, as both formats want, and
 * UTF-8, which they require: a byte of an ill-formed sequence, or another
 * control byte, is the text \xNN (common/text.h), so that a crafted device
 * or host name never makes Prometheus refuse the whole scrape.
 */
static void put_label(FILE *out, const char *v)
{
	const unsigned char *p = (const unsigned char *)v;
	size_t n;
	int bad;

	for (; *p; p += n) {
		n = text_utf8(p, &bad);
		if (*p == '\\' || *p == '"')
			fprintf(out, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", out);
		else if (bad || *p < 0x20 || *p == 0x7f)
			fprintf(out, "\\\\x%02x", *p);
		else
			fwrite(p, 1, n, out);
		n = bad ? 1 : n;
	}
}

static void put_labels(FILE *out, const struct series *s)
{
	fputs("{host=\"", out);
	put_label(out, s->host);
	fputs("\",dev=\"", out);
	put_label(out, s->dev);
	fprintf(out, "\",op=\"%s\"", op_names[s->op]);
}

/*
 * A family's header. OpenMetrics names a counter family without its _total
 * suffix; the text format names the sample.
 */
static void family(FILE *out, int openmetrics, const char *name, const char *type, const char *unit,
		   const char *help)
{
	char fam[96];
	size_t len = strlen(name);

	snprintf(fam, sizeof(fam), "%.*s", (int)(openmetrics && !strcmp(type, "counter") ? len - 6 : len),
		 name);
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", fam, help, fam, type);
	if (openmetrics && unit)
		fprintf(out, "# UNIT %s %s\n", fam, unit);
}

static void counter(FILE *out, const struct an_metrics *m, int om, const char *name, const char *help,
		    size_t field)
{
	family(out, om, name, "counter", NULL, help);
	for (unsigned i = 0; i < m->nseries; i++) {
		const struct series *s = &m->series[i];

		fputs(name, out);
		put_labels(out, s);
		fprintf(out, "} %llu\n", (unsigned long long)*(const uint64_t *)((const char *)s + field));
	}
}

/* A health field per host; the ring's (the fields from ring_bytes on) only of hosts whose recording has them. */
static void health_metric(FILE *out, const struct an_metrics *m, int om, const char *name,
			  const char *type, const char *help, size_t field)
{
	int ring = field >= offsetof(struct health, h.ring_bytes);

	family(out, om, name, type, !strcmp(type, "gauge") ? "bytes" : NULL, help);
	for (unsigned i = 0; i < m->nhealth; i++) {
		const struct health *h = &m->health[i];

		if (ring && !h->h.ring_bytes)
			continue;
		fprintf(out, "%s{host=\"", name);
		put_label(out, h->host);
		fprintf(out, "\"} %llu\n", (unsigned long long)*(const uint64_t *)((const char *)h + field));
	}
}

static void render(FILE *out, const struct an_metrics *m, int om)
{
	static const char hist[] = "sttrace_io_latency_seconds";

	family(out, om, hist, "histogram", "seconds",
	       "Latency of each stage of the I/Os st-analyze correlated (stages: st-analyze --help).");
	for (unsigned i = 0; i < m->nseries; i++) {
		const struct series *s = &m->series[i];

		for (unsigned k = 0; k < AN_ST_COUNT; k++) {
			uint64_t cum = 0;

			if (!(s->stages & (1u << k)))
				continue;
			for (unsigned b = 0; b <= AN_METRICS_BUCKETS; b++) {
				cum += b < AN_METRICS_BUCKETS ? s->buckets[k][b] : 0;
				fprintf(out, "%s_bucket", hist);
				put_labels(out, s);
				fputs(",stage=\"", out);
				put_label(out, an_stage_name(m->spans, (enum an_stage)k));
				if (b < AN_METRICS_BUCKETS)
					fprintf(out, "\",le=\"%.9g\"} %llu\n", m->bound_ns[b] / 1e9,
						(unsigned long long)cum);
				else
					fprintf(out, "\",le=\"+Inf\"} %llu\n", (unsigned long long)s->n[k]);
			}
			fprintf(out, "%s_sum", hist);
			put_labels(out, s);
			fputs(",stage=\"", out);
			put_label(out, an_stage_name(m->spans, (enum an_stage)k));
			fprintf(out, "\"} %.9f\n", s->sum_ns[k] / 1e9);
			fprintf(out, "%s_count", hist);
			put_labels(out, s);
			fputs(",stage=\"", out);
			put_label(out, an_stage_name(m->spans, (enum an_stage)k));
			fprintf(out, "\"} %llu\n", (unsigned long long)s->n[k]);
		}
	}
	counter(out, m, om, "sttrace_io_total", "Complete I/Os.", offsetof(struct series, ios));
	counter(out, m, om, "sttrace_io_bytes_total", "Bytes of the complete I/Os.",
		offsetof(struct series, bytes));
	counter(out, m, om, "sttrace_io_errors_total", "Complete I/Os that failed.",
		offsetof(struct series, errors));
	counter(out, m, om, "sttrace_io_incomplete_total",
		"I/Os without their end (open at the end, stale, or missing a completion).",
		offsetof(struct series, incomplete));
	health_metric(out, m, om, "sttrace_events_total", "counter",
		      "Events read from the recording (rate(): the recorder's events/s).",
		      offsetof(struct health, h.events));
	health_metric(out, m, om, "sttrace_lost_events_total", "counter",
		      "Events the kernel side could not record (ring buffer full).",
		      offsetof(struct health, h.lost));
	health_metric(out, m, om, "sttrace_recording_bytes", "gauge",
		      "Size of the recording read so far.", offsetof(struct health, h.file_bytes));
	health_metric(out, m, om, "sttrace_recorder_ring_buffer_bytes", "gauge",
		      "Size of st-record's BPF ring buffer.", offsetof(struct health, h.ring_bytes));
	health_metric(out, m, om, "sttrace_recorder_ring_buffer_used_max_bytes", "gauge",
		      "The most st-record's BPF ring buffer held at a drain since the recording began "
		      "(events are lost when it is full).", offsetof(struct health, h.ring_used_max));
	if (om)
		fputs("# EOF\n", out);
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **state)
{
	struct an_metrics *m = cls;
	const char *accept = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	int om = accept && strstr(accept, "application/openmetrics-text");
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char *page = NULL;
	size_t len = 0;
	FILE *out;

	(void)version, (void)upload, (void)upload_size, (void)state;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return MHD_NO;
	if (strcmp(url, "/metrics")) {
		static char missing[] = "st-analyze serves /metrics\n";

		resp = mhd.create_response_from_buffer(sizeof(missing) - 1, missing, MHD_RESPMEM_PERSISTENT);
		ret = resp ? mhd.queue_response(conn, MHD_HTTP_NOT_FOUND, resp) : MHD_NO;
		mhd.destroy_response(resp);
		return ret;
	}
	if (!(out = open_memstream(&page, &len)))
		return MHD_NO;
	pthread_mutex_lock(&m->lock);
	render(out, m, om);
	pthread_mutex_unlock(&m->lock);
	if (fclose(out)) {
		free(page);
		return MHD_NO;
	}
	resp = mhd.create_response_from_buffer(len, page, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(page);
		return MHD_NO;
	}
	mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				om ? "application/openmetrics-text; version=1.0.0; charset=utf-8" :
				     "text/plain; version=0.0.4; charset=utf-8");
	ret = mhd.queue_response(conn, MHD_HTTP_OK, resp);
	mhd.destroy_response(resp);
	return ret;
}

/* "PORT", ":PORT", "HOST:PORT", "[V6]:PORT" into a bound, listening socket; -1 with err. */
static int listen_on(const char *addr, char *err, size_t cap)
{
	char host[128] = "127.0.0.1";
	const char *colon = strrchr(addr, ':'), *port = colon ? colon + 1 : addr;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV },
			*ai;
	size_t hl = colon ? (size_t)(colon - addr) : 0;
	uint64_t port_no;
	int fd, one = 1, rc;

	if (hl >= 2 && addr[0] == '[' && addr[hl - 1] == ']') {
		addr++;
		hl -= 2;
	}
	if (hl >= sizeof(host) || parse_count(port, 1, 65535, &port_no)) {
		snprintf(err, cap, "%s: not PORT, ADDR:PORT or [ADDR]:PORT (a port in 1..65535)", addr);
		return -1;
	}
	if (hl)
		snprintf(host, sizeof(host), "%.*s", (int)hl, addr);
	if ((rc = getaddrinfo(host, port, &hints, &ai))) {
		snprintf(err, cap, "%s: not a numeric address: %s", host, gai_strerror(rc));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16)) {
		snprintf(err, cap, "%s:%s: cannot listen: %s", host, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

int an_metrics_start(struct an_metrics **mp, const char *addr, const struct an_span_defs *spans,
		     char *err, size_t cap)
{
	struct an_metrics *m = calloc(1, sizeof(*m));
	int fd;

	*mp = NULL;
	if (!m) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	for (unsigned k = 0; k < AN_METRICS_BUCKETS; k++)
		m->bound_ns[k] = bound_ns(k);
	m->spans = spans;
	pthread_mutex_init(&m->lock, NULL);
	if (mhd_load(err, cap) || (fd = listen_on(addr, err, cap)) < 0) {
		an_metrics_stop(m);
		return -1;
	}
	/* Few scrapers: one thread, a handful of connections, idle ones dropped after 10 s. */
	m->daemon = mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
				     answer, m, MHD_OPTION_LISTEN_SOCKET, fd,
				     MHD_OPTION_CONNECTION_LIMIT, 32u, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				     MHD_OPTION_END);
	if (!m->daemon) {
		snprintf(err, cap, "%s: libmicrohttpd could not start", addr);
		close(fd);
		an_metrics_stop(m);
		return -1;
	}
	*mp = m;
	return 0;
}

void an_metrics_stop(struct an_metrics *m)
{
	if (!m)
		return;
	if (m->daemon)
		mhd.stop_daemon(m->daemon);
	pthread_mutex_destroy(&m->lock);
	free(m);
}
