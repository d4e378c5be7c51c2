/* SPDX-License-Identifier: MIT */
/*
 * test_events.c - every built-in event has all its pieces (bpf/README.md,
 * "Adding a typed event"): its entry in format/lib/sttrace_events.h, a probe named
 * after it in a bpf/ .bpf.c file (or the one rec_event_program() names), a tracepoint category and a preset in
 * record/probes.c, and its row in spec/sttrace-format.md; and no probe
 * exists without an entry. Run from the top of the source tree (the spec).
 */
#include "tests/format/unit_util.h"
#include "record/record.h"
#include "sttrace.skel.h"

#define SPEC "spec/sttrace-format.md"

static const char *const presets[] = { "block", "block-all", "dio", "fsync", "uring", "why", "sched" };
#define NPRESETS (sizeof(presets) / sizeof(presets[0]))

/* Whether the spec's event table has the row "| id | `name` |". */
static int spec_has_row(const char *spec, const struct st_type *t)
{
	char row[160];

	snprintf(row, sizeof(row), "\n| %u | `%s` |", t->id, t->name);
	return strstr(spec, row) != NULL;
}

static char *read_spec(void)
{
	FILE *f = fopen(SPEC, "re");
	char *buf = calloc(1, 1 << 20);
	size_t n = 0;

	if (f && buf)
		n = fread(buf, 1, (1 << 20) - 1, f);
	if (f)
		fclose(f);
	if (!n) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int test_every_event_has_its_pieces(void)
{
	struct rec_selection sel[NPRESETS];
	struct sttrace_bpf *skel = sttrace_bpf__open();
	char *spec = read_spec(), tp[128], err[256];
	size_t n;
	const struct st_type *types = st_builtin_types(&n);
	int bad = 0;

	if (expectf(skel != NULL, __func__, "cannot open the BPF object") ||
	    expectf(spec != NULL, __func__, "cannot read " SPEC " (run from the source tree)"))
		return 1;
	for (size_t p = 0; p < NPRESETS; p++)
		bad |= expectf(!rec_events_select(presets[p], &sel[p], err, sizeof(err)), __func__,
			       "preset %s: %s", presets[p], err);
	for (size_t i = 0; i < n && !bad; i++) {
		const struct st_type *t = &types[i];
		size_t in = 0;

		for (size_t p = 0; p < NPRESETS; p++)
			in += sel[p].on[t->id];
		bad |= expectf(bpf_object__find_program_by_name(skel->obj, rec_event_program(t->id)) != NULL,
			       __func__, "%s: no probe %s in bpf/*.bpf.c", t->name,
			       rec_event_program(t->id));
		bad |= expectf(rec_event_tracepoint(t->id, tp, sizeof(tp)) != NULL, __func__,
			       "%s: no tracepoint category for its prefix in record/probes.c", t->name);
		bad |= expectf(in > 0, __func__, "%s: in no preset (%s %s %s %s %s %s) of record/probes.c",
			       t->name, presets[0], presets[1], presets[2], presets[3], presets[4],
			       presets[5]);
		bad |= expectf(spec_has_row(spec, t), __func__, "%s: no row for id %u in " SPEC
			       " (make spec-table)", t->name, t->id);
	}
	for (size_t p = 0; p < NPRESETS; p++)
		rec_selection_free(&sel[p]);
	sttrace_bpf__destroy(skel);
	free(spec);
	return bad;
}

/*
 * A probe is an event's: no program emits a type the header lacks (the
 * stage's flush, the generic tracepoint's, and softirq_raise, which keeps
 * the raiser for svc_run_delay, record no type of their own).
 */
static int test_every_probe_has_an_entry(void)
{
	struct sttrace_bpf *skel = sttrace_bpf__open();
	struct bpf_program *prog;
	int bad = 0;

	if (expectf(skel != NULL, __func__, "cannot open the BPF object"))
		return 1;
	bpf_object__for_each_program(prog, skel->obj) {
		const char *name = bpf_program__name(prog);
		/* EVENT___FORM: the event's program for another form of its tracepoint */
		const char *form = strstr(name, "___");
		size_t len = form ? (size_t)(form - name) : strlen(name), n, i;
		const struct st_type *types = st_builtin_types(&n);

		if (prog == skel->progs.flush_stage || prog == skel->progs.generic_tracepoint ||
		    prog == skel->progs.softirq_raise)
			continue;
		for (i = 0; i < n && (strlen(types[i].name) != len || strncmp(types[i].name, name, len)); i++)
			;
		bad |= expectf(i < n, __func__, "probe %s: no ST_EVENT_TYPES entry in "
			       "format/lib/sttrace_events.h", name);
	}
	sttrace_bpf__destroy(skel);
	return bad;
}

int main(void)
{
	RUN(test_every_event_has_its_pieces);
	RUN(test_every_probe_has_an_entry);
	return check_failures != 0;
}
