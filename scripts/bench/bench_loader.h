/*
 * bench_loader.h - what the bench tracers (bare-ring, bpf-steps) share: after
 * attaching, drain the ring buffer every 50 ms (st-record's drain period)
 * until SIGINT or SIGTERM, then one line in st-record's summary words:
 * events read, events lost, seconds and CPU seconds since attaching, and
 * the object's programs' runs and run time (0 unless the kernel's BPF
 * statistics are on), which scripts/bench/overhead.sh and bpf_steps.sh read.
 */
#ifndef BENCH_LOADER_H
#define BENCH_LOADER_H

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

static volatile sig_atomic_t bench_stop;

static void bench_on_signal(int sig)
{
	(void)sig;
	bench_stop = 1;
}

static int bench_count_record(void *ctx, void *data, size_t size)
{
	(void)data;
	(void)size;
	++*(unsigned long long *)ctx;
	return 0;
}

/* Runs and run time of every loaded program of the object, summed. */
static void bench_program_runs(struct bpf_object *obj, unsigned long long *runs, unsigned long long *ns)
{
	struct bpf_program *prog;

	*runs = *ns = 0;
	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);

		if (bpf_program__fd(prog) >= 0 && !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len)) {
			*runs += info.run_cnt;
			*ns += info.run_time_ns;
		}
	}
}

static double bench_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static double bench_cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/*
 * Says "NAME: attached", drains the ring buffer map ring until a signal,
 * then prints the summary line; *lost is read at the end (the object's
 * count of records that found no room). 1 when the ring cannot be mapped.
 */
static int bench_drain(const char *name, struct bpf_object *obj, int ring, const unsigned long long *lost)
{
	const struct timespec period = { .tv_nsec = 50 * 1000 * 1000 };
	struct sigaction sa = { .sa_handler = bench_on_signal };
	unsigned long long events = 0, runs, run_ns;
	struct ring_buffer *rb = ring_buffer__new(ring, bench_count_record, &events, NULL);
	double start, cpu_start;

	if (!rb) {
		fprintf(stderr, "%s: cannot map the ring buffer\n", name);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "%s: attached\n", name);
	start = bench_now();
	cpu_start = bench_cpu_seconds();
	while (!bench_stop) {
		nanosleep(&period, NULL);
		ring_buffer__consume(rb);
	}
	ring_buffer__consume(rb);
	bench_program_runs(obj, &runs, &run_ns);
	fprintf(stderr, "%s: %llu events, %llu lost, %.1f s, %.2f s CPU, %llu probe runs, "
		"%llu ns of probe run time\n", name, events, *lost, bench_now() - start,
		bench_cpu_seconds() - cpu_start, runs, run_ns);
	ring_buffer__free(rb);
	return 0;
}

#endif /* BENCH_LOADER_H */
