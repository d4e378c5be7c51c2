/* SPDX-License-Identifier: MIT */
/*
 * test_metrics.c - the --metrics endpoint over a real socket: label values
 * escaped as the exposition format says (backslash, double quote, newline),
 * bytes that are not UTF-8 and control bytes as the text \xNN,
 * cumulative buckets whose le bounds are the ones counted against, +Inf and
 * _count equal, the text format by default and OpenMetrics (# EOF) when the
 * Accept header asks, and a fixed number of series whatever the number of
 * devices (the rest as device "other", per op); the recorder's ring buffer
 * use as gauges of the hosts whose recording tells it, and of no other.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "analyze/st-analyze/metrics.h"
#include "tests/check.h"

static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* GET /metrics with an Accept header; the whole answer (headers and body), malloc'd. */
static char *get(int port, const char *accept)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char req[256], *buf = NULL;
	size_t len = 0, cap = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ssize_t n;

	snprintf(req, sizeof(req), "GET /metrics HTTP/1.0\r\nAccept: %s\r\n\r\n", accept);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	do {
		if (len + 4096 + 1 > cap && !(buf = realloc(buf, cap = cap * 2 + 8192)))
			break;
		n = read(fd, buf + len, 4096);
		len += n > 0 ? (size_t)n : 0;
	} while (n > 0);
	close(fd);
	if (buf)
		buf[len] = 0;
	return buf;
}

static struct an_io read_io(uint64_t d2c_ns)
{
	struct an_io io;

	memset(&io, 0, sizeof(io));
	io.op = AN_OP_READ;
	io.bytes = 4096;
	io.ts[AN_TS_ISSUE] = 1000;
	io.ts[AN_TS_COMPLETE] = 1000 + d2c_ns;
	return io;
}

static int count_lines(const char *page, const char *prefix)
{
	int n = 0;

	for (const char *p = page; (p = strstr(p, prefix)); p++)
		n += p == page || p[-1] == '\n';
	return n;
}

int main(void)
{
	int port = free_port();
	char addr[32], err[256], *text, *om;
	struct an_metrics *m;
	struct an_io io;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	if (port < 0 || an_metrics_start(&m, addr, NULL, err, sizeof(err))) {
		check(0, "metrics.start", "%s", port < 0 ? "no free port" : err);
		return 1;
	}
	/* 1.58 us falls in le=1.58e-06 (the bound itself), 1.59 us in the next */
	io = read_io(1580);
	an_metrics_io(m, "h\"o\\st\nx", "loop0", &io);
	io = read_io(1590);
	an_metrics_io(m, "h\"o\\st\nx", "loop0", &io);
	/* a crafted device name: bytes that are not UTF-8, an escape sequence; é is UTF-8 */
	an_metrics_io(m, "h\"o\\st\nx", "\xff\xc3(\x1b[31m\xc3\xa9\r", &io);
	for (int d = 0; d < 200; d++) {
		char dev[16];

		snprintf(dev, sizeof(dev), "sd%d", d);
		io = read_io(1000000);
		io.op = (uint8_t)(d % 2 ? AN_OP_WRITE : AN_OP_READ);
		an_metrics_io(m, "other-host", dev, &io);
	}
	an_metrics_health(m, "h\"o\\st\nx", &(struct an_health){ .events = 12345, .lost = 6, .file_bytes = 789,
							   .ring_bytes = 1 << 24, .ring_used_max = 204800 });
	an_metrics_health(m, "older-recorder", &(struct an_health){ .events = 1 });
	text = get(port, "text/plain");
	om = get(port, "application/openmetrics-text; version=1.0.0");
	check(text && strstr(text, "Content-Type: text/plain; version=0.0.4"), "metrics.text_type", "%.200s",
	      text ? text : "no answer");
	check(text && strstr(text, "sttrace_io_total{host=\"h\\\"o\\\\st\\nx\",dev=\"loop0\",op=\"read\"} 2\n"),
	      "metrics.escaped", "no escaped host label");
	check(text && strstr(text, "sttrace_io_total{host=\"h\\\"o\\\\st\\nx\",dev=\"\\\\xff\\\\xc3(\\\\x1b[31m\xc3\xa9\\\\x0d\",op=\"read\"} 1\n"),
	      "metrics.utf8", "no device label in UTF-8 without control bytes");
	check(text && strstr(text, "stage=\"D2C\",le=\"1.58e-06\"} 1\n") &&
	      strstr(text, "stage=\"D2C\",le=\"2.51e-06\"} 2\n") &&
	      strstr(text, "stage=\"D2C\",le=\"+Inf\"} 2\n") && strstr(text, "stage=\"D2C\"} 2\n"),
	      "metrics.buckets", "cumulative buckets, +Inf and _count");
	/* 201 devices: those that fit, and "other" for the reads and the writes past them */
	check(text && count_lines(text, "sttrace_io_total{") == AN_METRICS_SERIES - AN_OP_COUNT + 2 &&
	      strstr(text, "dev=\"other\",op=\"read\"}") && strstr(text, "dev=\"other\",op=\"write\"}"),
	      "metrics.bounded", "%d series of sttrace_io_total", text ? count_lines(text, "sttrace_io_total{") : -1);
	check(text && strstr(text, "sttrace_lost_events_total{host=\"h\\\"o\\\\st\\nx\"} 6\n") &&
	      !strstr(text, "# EOF"), "metrics.health", "lost events of the host");
	check(text && strstr(text, "sttrace_recorder_ring_buffer_bytes{host=\"h\\\"o\\\\st\\nx\"} 16777216\n") &&
	      strstr(text, "sttrace_recorder_ring_buffer_used_max_bytes{host=\"h\\\"o\\\\st\\nx\"} 204800\n") &&
	      strstr(text, "# TYPE sttrace_recorder_ring_buffer_used_max_bytes gauge\n") &&
	      !strstr(text, "ring_buffer_bytes{host=\"older-recorder\"}") &&
	      !strstr(text, "used_max_bytes{host=\"older-recorder\"}"), "metrics.ring", "ring buffer gauges");
	check(om && strstr(om, "Content-Type: application/openmetrics-text; version=1.0.0") &&
	      strstr(om, "# TYPE sttrace_io counter\n") && strstr(om, "# UNIT sttrace_io_latency_seconds seconds\n") &&
	      strstr(om, "# UNIT sttrace_recorder_ring_buffer_bytes bytes\n") &&
	      strlen(om) > 6 && !strcmp(om + strlen(om) - 6, "# EOF\n"), "metrics.openmetrics",
	      "%.200s", om ? om : "no answer");
	free(text);
	free(om);
	an_metrics_stop(m);
	return check_failures != 0;
}
