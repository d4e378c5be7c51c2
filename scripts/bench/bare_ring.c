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
#include <string.h>

#include "bench_loader.h"
#include "bare_ring.skel.h"

/* --empty: the programs named empty_* and no others; otherwise the others. */
static void choose_programs(struct bpf_object *obj, bool empty)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, !strncmp(bpf_program__name(prog), "empty_", 6) == empty);
}

int main(int argc, char **argv)
{
	struct bare_ring_bpf *skel;
	int err;

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
	skel = bare_ring_bpf__open();
	if (skel)
		choose_programs(skel->obj, empty);
	if (!skel || bare_ring_bpf__load(skel) || bare_ring_bpf__attach(skel)) {
		fprintf(stderr, "bare-ring: cannot load or attach the probes (root and kernel BTF needed)\n");
		bare_ring_bpf__destroy(skel);
		return 1;
	}
	err = bench_drain("bare-ring", skel->obj, bpf_map__fd(skel->maps.records),
			  (const unsigned long long *)&skel->bss->dropped);
	bare_ring_bpf__destroy(skel);
	return err;
}
