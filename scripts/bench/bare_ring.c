/*
 * bare-ring - the reference tracer of scripts/bench/overhead.sh (see
 * bare_ring.bpf.c): attaches, says so, drains the ring buffer every 50 ms
 * (st-record's drain period) and drops what it reads, until SIGINT or
 * SIGTERM. Then one line in st-record's summary words: events read, events
 * dropped, seconds and CPU seconds since attaching, and its programs' runs
 * and run time (0 unless the kernel's BPF statistics are on).
 * `bare-ring --empty` loads the programs that do nothing instead (the floor
 * of a probe run at st-record's two `block` tracepoints).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bare_ring.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int count_record(void *ctx, void *data, size_t size)
{
	(void)data;
	(void)size;
	++*(unsigned long long *)ctx;
	return 0;
}

/* Runs and run time of every program of the object, summed. */
static void program_runs(struct bpf_object *obj, unsigned long long *runs, unsigned long long *ns)
{
	struct bpf_program *prog;

	*runs = *ns = 0;
	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);

		if (!bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len)) {
			*runs += info.run_cnt;
			*ns += info.run_time_ns;
		}
	}
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* --empty: the programs named empty_* and no others; otherwise the others. */
static void choose_programs(struct bpf_object *obj, bool empty)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, !strncmp(bpf_program__name(prog), "empty_", 6) == empty);
}

int main(int argc, char **argv)
{
	const struct timespec period = { .tv_nsec = 50 * 1000 * 1000 };
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned long long events = 0, runs, run_ns;
	struct bare_ring_bpf *skel;
	struct ring_buffer *rb;
	double start, cpu_start;

	bool help = argc == 2 && !strcmp(argv[1], "--help");
	bool empty = argc == 2 && !strcmp(argv[1], "--empty");

	if (argc > 2 || (argc == 2 && !help && !empty))
		fprintf(stderr, "bare-ring: unknown argument %s\n", argv[argc - 1]);
	if (argc > 1 && !empty) {
		fprintf(help ? stdout : stderr, "usage: %s [--empty]   (until SIGINT/SIGTERM; the "
			"reference tracer of scripts/bench/overhead.sh;\n  --empty: programs that do "
			"nothing at block_rq_issue and block_rq_complete)\n", argv[0]);
		return help ? 0 : 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	skel = bare_ring_bpf__open();
	if (skel)
		choose_programs(skel->obj, empty);
	if (!skel || bare_ring_bpf__load(skel) || bare_ring_bpf__attach(skel)) {
		fprintf(stderr, "bare-ring: cannot load or attach the probes (root and kernel BTF needed)\n");
		bare_ring_bpf__destroy(skel);
		return 1;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.records), count_record, &events, NULL);
	if (!rb) {
		fprintf(stderr, "bare-ring: cannot map the ring buffer\n");
		bare_ring_bpf__destroy(skel);
		return 1;
	}
	fprintf(stderr, "bare-ring: attached\n");
	start = now();
	cpu_start = cpu_seconds();
	while (!stop) {
		nanosleep(&period, NULL);
		ring_buffer__consume(rb);
	}
	ring_buffer__consume(rb);
	program_runs(skel->obj, &runs, &run_ns);
	fprintf(stderr, "bare-ring: %llu events, %llu lost, %.1f s, %.2f s CPU, %llu probe runs, "
		"%llu ns of probe run time\n", events, (unsigned long long)skel->bss->dropped,
		now() - start, cpu_seconds() - cpu_start, runs, run_ns);
	ring_buffer__free(rb);
	bare_ring_bpf__destroy(skel);
	return 0;
}
