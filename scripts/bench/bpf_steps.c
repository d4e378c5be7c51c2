/*
 * bpf-steps - loads step STEP of bpf_steps.bpf.c (the `block` preset's
 * programs built up part by part) at block_rq_issue and block_rq_complete,
 * with the disk filter set to DEV (MAJOR:MINOR), drains and reports as
 * bare-ring does (bench_loader.h). For scripts/bench/bpf_steps.sh.
 */
#include <string.h>
#include <unistd.h>

#include "bench_loader.h"
#include "bpf_steps.skel.h"

/* The programs of one step (stepSTEP_*) and no others; how many there are. */
static int choose_step(struct bpf_object *obj, const char *step)
{
	struct bpf_program *prog;
	char prefix[32];
	int n = 0;

	snprintf(prefix, sizeof(prefix), "step%s_", step);
	bpf_object__for_each_program(prog, obj) {
		bool ours = !strncmp(bpf_program__name(prog), prefix, strlen(prefix));

		bpf_program__set_autoload(prog, ours);
		n += ours;
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned int major, minor;
	struct bpf_steps_bpf *skel;
	int err;

	if (argc != 3) {
		fprintf(argc == 2 && !strcmp(argv[1], "--help") ? stdout : stderr,
			"usage: %s STEP MAJOR:MINOR   (until SIGINT/SIGTERM; a step (0..7, 3r) of the "
			"`block` preset's programs,\n  see scripts/bench/bpf_steps.bpf.c)\n", argv[0]);
		return argc == 2 && !strcmp(argv[1], "--help") ? 0 : 2;
	}
	if (sscanf(argv[2], "%u:%u%n", &major, &minor, &err) != 2 || argv[2][err]) {
		fprintf(stderr, "bpf-steps: device %s: not MAJOR:MINOR\n", argv[2]);
		return 2;
	}
	skel = bpf_steps_bpf__open();
	if (skel && !choose_step(skel->obj, argv[1])) {
		fprintf(stderr, "bpf-steps: step %s: no such step (0..7, 3r)\n", argv[1]);
		bpf_steps_bpf__destroy(skel);
		return 2;
	}
	if (skel) {
		skel->rodata->filter_dev = major << 20 | minor;
		skel->rodata->self_tgid = getpid();
	}
	if (!skel || bpf_steps_bpf__load(skel) || bpf_steps_bpf__attach(skel)) {
		fprintf(stderr, "bpf-steps: cannot load or attach the probes (root and kernel BTF needed)\n");
		bpf_steps_bpf__destroy(skel);
		return 1;
	}
	err = bench_drain("bpf-steps", skel->obj, bpf_map__fd(skel->maps.events),
			  (const unsigned long long *)&skel->bss->lost);
	bpf_steps_bpf__destroy(skel);
	return err;
}
