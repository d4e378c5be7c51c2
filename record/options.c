/* SPDX-License-Identifier: MIT */
/*
 * options.c - st-record's command line and --config file.
 *
 * Both go through one setter keyed by the long option name, so a config key
 * and its command-line option cannot mean different things. The config file
 * is applied first and the command line overrides it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "common/number.h"
#include "common/usage.h"
#include "record/record.h"

static const char usage_text[] =
"usage: st-record -o FILE [options] [-- CMD ARGS...]\n"
"\n"
"Record kernel I/O events (block, syscalls, file systems, io_uring) into a\n"
".sttrace file. Needs root, kernel BTF and tracefs.\n"
"\n"
"  -o, --output FILE        output file (created 0600, or truncated when it is a\n"
"                           regular file of yours; never through a symlink);\n"
"                           - streams it to standard output (| ssh host 'cat > f')\n"
"      --force              write FILE even if it is a symlink (followed) or not\n"
"                           a regular file\n"
"  -t, --duration TIME      stop after TIME (10, 500ms, 2m, 1h; default: until\n"
"                           SIGINT/SIGTERM or the command's exit)\n"
"      --max-size SIZE      stop when the file reaches SIZE (K, M, G suffixes)\n"
"      --rotate SIZE|TIME   a new file each SIZE (100M) or TIME (10m, 1h): FILE\n"
"                           run.sttrace becomes run.0001.sttrace, run.0002...,\n"
"                           each complete; st-analyze reads the set as one\n"
"      --keep N             with --rotate, remove all but the N newest files\n"
"      --ring SIZE          flight recorder: keep the last SIZE (>= 256K) of compressed\n"
"                           chunks in memory (memory: SIZE, plus a chunk per CPU\n"
"                           being filled and 48 bytes of index per chunk) and\n"
"                           write nothing until a trigger: SIGUSR1 or --trigger;\n"
"                           then write the ring and --after into\n"
"                           run.trigger-0001.sttrace, and go back to the ring\n"
"      --after TIME         recorded after a trigger (default 5s)\n"
"      --trigger STAGE>TIME also trigger on a request slower than TIME, STAGE\n"
"                           D2C or Q2C: --trigger 'D2C>20ms'\n"
"      --trigger-gap TIME   triggers within TIME of a dump's end are ignored\n"
"                           (default 10s)\n"
"      --max-triggers N     stop after N dumps (default: no limit)\n"
"  -e, --events LIST        presets and tracepoints, comma separated (default\n"
"                           all); presets: block block-queue block-all dio fsync\n"
"                           uring why sched all (record/README.md: what each\n"
"                           records and costs; why: what traced calls waited\n"
"                           for, CPU, locks, dirty pauses, reclaim, page cache,\n"
"                           cgroup limits: with a syscall preset, all has it;\n"
"                           sched: who held the CPU meanwhile, not in all);\n"
"                           built-in event names; any tracepoint as\n"
"                           SUBSYS:NAME, globs allowed ('xfs:*'), or NAME alone\n"
"      --no-stamps          take every block stage from its own probe, not from\n"
"                           the times the kernel stamps on requests and bios\n"
"  -p, --pid PID            only this process, its threads and its descendants\n"
"  -c, --comm NAME          only tasks with this command name\n"
"      --cgroup PATH        only tasks in this cgroup (v2, or v1 blkio; relative to\n"
"                           /sys/fs/cgroup)\n"
"  -d, --device DEV         only this disk (/dev/sdb, sdb, 8:16; a partition\n"
"                           selects its disk)\n"
"      --qd N               output writes in flight (1-256, default 4)\n"
"      --ringbuf-size SIZE  kernel ring buffer (default 4M, at least 16K; rounded up\n"
"                           to a power of 2)\n"
"  -z, --zstd-level N       compression level (-7..19, default 1: the recorder\n"
"                           competes with the workload for CPU)\n"
"      --chunk-size SIZE    raw bytes per chunk (default 1M)\n"
"      --flush-interval TIME  seal a chunk that has waited TIME (default 250ms,\n"
"                           10ms..10s): a follower (st-analyze --follow) sees an\n"
"                           event at most TIME plus a drain period (50 ms) late\n"
"      --config FILE        JSON: a module (modules/*.json) or a stortrace config\n"
"                           (name, event_type, logger_io_uring_depth,\n"
"                           select_target.{pid,common,files}; trace_level noted),\n"
"                           and the long option names; the command line wins\n"
"  -v, --verbose            show libbpf's messages\n"
"  -h, --help               this text\n"
"      --version            the version (as the trace's `tool` metadata records it)\n"
"\n"
"With -- CMD, st-record starts CMD once the probes are attached, traces it and\n"
"its children, stops when it exits and returns its exit status.\n"
"Exit status: 0 ok, 1 runtime failure (e.g. output device full), 2 bad usage.\n";

enum { OPT_MAX_SIZE = 256, OPT_CGROUP, OPT_QD, OPT_RINGBUF, OPT_CHUNK, OPT_CONFIG, OPT_FORCE,
       OPT_VERSION, OPT_ROTATE, OPT_KEEP, OPT_RING, OPT_AFTER, OPT_TRIGGER, OPT_TRIGGER_GAP,
       OPT_MAX_TRIGGERS, OPT_NO_STAMPS, OPT_FLUSH_INTERVAL };

static const struct option long_opts[] = {
	{ "output",       required_argument, NULL, 'o' },
	{ "force",        no_argument,       NULL, OPT_FORCE },
	{ "duration",     required_argument, NULL, 't' },
	{ "max-size",     required_argument, NULL, OPT_MAX_SIZE },
	{ "rotate",       required_argument, NULL, OPT_ROTATE },
	{ "keep",         required_argument, NULL, OPT_KEEP },
	{ "ring",         required_argument, NULL, OPT_RING },
	{ "after",        required_argument, NULL, OPT_AFTER },
	{ "trigger",      required_argument, NULL, OPT_TRIGGER },
	{ "trigger-gap",  required_argument, NULL, OPT_TRIGGER_GAP },
	{ "max-triggers", required_argument, NULL, OPT_MAX_TRIGGERS },
	{ "events",       required_argument, NULL, 'e' },
	{ "pid",          required_argument, NULL, 'p' },
	{ "comm",         required_argument, NULL, 'c' },
	{ "cgroup",       required_argument, NULL, OPT_CGROUP },
	{ "device",       required_argument, NULL, 'd' },
	{ "qd",           required_argument, NULL, OPT_QD },
	{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF },
	{ "zstd-level",   required_argument, NULL, 'z' },
	{ "chunk-size",   required_argument, NULL, OPT_CHUNK },
	{ "flush-interval", required_argument, NULL, OPT_FLUSH_INTERVAL },
	{ "config",       required_argument, NULL, OPT_CONFIG },
	{ "no-stamps",    no_argument,       NULL, OPT_NO_STAMPS },
	{ "verbose",      no_argument,       NULL, 'v' },
	{ "help",         no_argument,       NULL, 'h' },
	{ "version",      no_argument,       NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/*
 * --rotate: a duration when it ends in a time unit (s, ms, m, h: "m" is
 * minutes), a size when it ends in a size unit (K, M, G, T, with an optional
 * iB or B); a bare number is neither.
 */
static int parse_rotate(const char *s, struct rec_opts *o)
{
	size_t n = strlen(s);
	char last = n ? s[n - 1] : 0;

	o->rotate_ns = o->rotate_bytes = 0;
	if (last == 's' || last == 'm' || last == 'h')
		return st_parse_duration(s, &o->rotate_ns) || !o->rotate_ns ? -1 : 0;
	if (last >= 'A' && last <= 'Z')
		return parse_size(s, &o->rotate_bytes) || o->rotate_bytes < 4096 ? -1 : 0;
	return -1;
}

/*
 * The smallest ring buffer holding two batches of the probes (a CPU's stage
 * and its last record, behind the ring's 8-byte header), so that one CPU can
 * submit while the one before is read: 16K. A ring that holds less keeps
 * almost nothing (4K: 113 events kept, 13.7 M lost).
 */
#define RINGBUF_MIN 16384u
_Static_assert(RINGBUF_MIN >= 2 * (ST_STAGE_BYTES + ST_MAX_RECORD_BYTES + 8), "two batches");

static uint64_t round_up_pow2(uint64_t v)
{
	uint64_t p = 4096;

	while (p < v && p < (1ull << 40))
		p <<= 1;
	return p;
}

/* Replace a string option, freeing what an earlier source (the config file) set. */
static void set_str(const char **dst, const char *val)
{
	free((char *)*dst);
	*dst = strdup(val);
}

/* Apply one option by its long name; 0, or -1 with a message in err. */
static int set_option(struct rec_opts *o, const char *name, const char *val, char *err, size_t cap)
{
	uint64_t u;
	long long l;

	if (!strcmp(name, "output")) {
		set_str(&o->output, val);
	} else if (!strcmp(name, "duration")) {
		if (st_parse_duration(val, &o->duration_ns) || !o->duration_ns)
			goto bad;
	} else if (!strcmp(name, "max-size")) {
		if (parse_size(val, &o->max_size))
			goto bad;
	} else if (!strcmp(name, "rotate")) {
		if (parse_rotate(val, o))
			goto bad;
	} else if (!strcmp(name, "keep")) {
		if (parse_integer(val, 1, 1000000, &l))
			goto bad;
		o->keep = (unsigned)l;
	} else if (!strcmp(name, "ring")) {
		if (parse_size(val, &o->ring_bytes) || o->ring_bytes < (256u << 10))
			goto bad;
	} else if (!strcmp(name, "after")) {
		if (st_parse_duration(val, &o->after_ns))
			goto bad;
	} else if (!strcmp(name, "trigger")) {
		struct rec_flight_trigger t;

		if (rec_flight_trigger_parse(val, &t))
			goto bad;
		set_str(&o->trigger, val);
	} else if (!strcmp(name, "trigger-gap")) {
		if (st_parse_duration(val, &o->trigger_gap_ns))
			goto bad;
	} else if (!strcmp(name, "max-triggers")) {
		if (parse_integer(val, 1, 1000000, &l))
			goto bad;
		o->max_triggers = (unsigned)l;
	} else if (!strcmp(name, "events")) {
		set_str(&o->events, val);
	} else if (!strcmp(name, "pid")) {
		if (parse_integer(val, 1, 0x3fffffff, &l))
			goto bad;
		o->pid = (pid_t)l;
	} else if (!strcmp(name, "comm")) {
		if (strlen(val) >= ST_COMM_LEN) {
			snprintf(err, cap, "--comm: '%s' is longer than %d bytes, the kernel's limit",
				 val, ST_COMM_LEN - 1);
			return -1;
		}
		set_str(&o->comm, val);
	} else if (!strcmp(name, "cgroup")) {
		set_str(&o->cgroup, val);
	} else if (!strcmp(name, "device")) {
		set_str(&o->device, val);
	} else if (!strcmp(name, "qd")) {
		if (parse_integer(val, 1, 256, &l))
			goto bad;
		o->qd = (unsigned)l;
	} else if (!strcmp(name, "ringbuf-size")) {
		if (parse_size(val, &u) || u > (1ull << 32))
			goto bad;
		o->ringbuf_size = round_up_pow2(u);
		if (o->ringbuf_size < RINGBUF_MIN) {
			snprintf(err, cap, "--ringbuf-size %s: less than two of the probes' batches "
				 "(at least %uK)", val, RINGBUF_MIN >> 10);
			return -1;
		}
	} else if (!strcmp(name, "zstd-level")) {
		if (parse_integer(val, -7, 19, &l))
			goto bad;
		o->zstd_level = (int)l;
	} else if (!strcmp(name, "chunk-size")) {
		if (parse_size(val, &o->chunk_size) || o->chunk_size < 4096 ||
		    o->chunk_size > (64u << 20))
			goto bad;
	} else if (!strcmp(name, "flush-interval")) {
		if (st_parse_duration(val, &o->flush_ns) || o->flush_ns < 10000000ull ||
		    o->flush_ns > 10000000000ull)
			goto bad;
	} else {
		snprintf(err, cap, "unknown option '%s'", name);
		return -1;
	}
	return 0;
bad:
	snprintf(err, cap, "--%s: bad value '%s'", name, val);
	return -1;
}

static int config_files(struct rec_opts *o, json_object *files, char *err, size_t cap)
{
	size_t n;

	if (!json_object_is_type(files, json_type_array)) {
		snprintf(err, cap, "select_target.files: not an array of paths");
		return -1;
	}
	n = json_object_array_length(files);
	o->files = calloc(n ? n : 1, sizeof(*o->files));
	for (size_t i = 0; i < n; i++) {
		json_object *f = json_object_array_get_idx(files, i);

		if (!json_object_is_type(f, json_type_string)) {
			snprintf(err, cap, "select_target.files[%zu]: not a string", i);
			return -1;
		}
		o->files[o->nfiles++] = strdup(json_object_get_string(f));
	}
	return 0;
}

static int config_select_target(struct rec_opts *o, json_object *sel, char *err, size_t cap)
{
	if (!json_object_is_type(sel, json_type_object)) {
		snprintf(err, cap, "select_target: not an object");
		return -1;
	}
	json_object_object_foreach(sel, key, val) {
		int ret;

		if (!strcmp(key, "files"))
			ret = config_files(o, val, err, cap);
		/* stortrace's "any process" and "any command" */
		else if (!strcmp(key, "pid"))
			ret = json_object_get_int64(val) == -1 ? 0 :
			      set_option(o, "pid", json_object_get_string(val), err, cap);
		else if (!strcmp(key, "common"))
			ret = !*json_object_get_string(val) ? 0 :
			      set_option(o, "comm", json_object_get_string(val), err, cap);
		else {
			snprintf(err, cap, "select_target.%s: unknown key", key);
			ret = -1;
		}
		if (ret)
			return ret;
	}
	return 0;
}

/* event_type is a string or an array of strings; either way a comma list. */
static int config_events(struct rec_opts *o, json_object *val, char *err, size_t cap)
{
	char list[1024] = "";
	size_t n;

	if (!json_object_is_type(val, json_type_array))
		return set_option(o, "events", json_object_get_string(val), err, cap);
	n = json_object_array_length(val);
	for (size_t i = 0; i < n; i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(val, i));
		size_t used = strlen(list);

		if ((size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? "," : "", s) >=
		    sizeof(list) - used) {
			snprintf(err, cap, "event_type: list too long");
			return -1;
		}
	}
	return set_option(o, "events", list, err, cap);
}

static int config_key(struct rec_opts *o, const char *key, json_object *val, char *err, size_t cap)
{
	char name[64];
	size_t i;

	if (!strcmp(key, "select_target"))
		return config_select_target(o, val, err, cap);
	if (!strcmp(key, "event_type") || !strcmp(key, "events"))
		return config_events(o, val, err, cap);
	if (!strcmp(key, "logger_io_uring_depth"))
		return set_option(o, "qd", json_object_get_string(val), err, cap);
	if (!strcmp(key, "name")) {
		/* stortrace's trace name: the output file unless -o says otherwise */
		char path[4096];

		snprintf(path, sizeof(path), "%.4000s.sttrace", json_object_get_string(val));
		return set_option(o, "output", path, err, cap);
	}
	/* The analyzer's keys share the file (a module's too); st-record has no use for them. */
	if (!strcmp(key, "filter") || !strcmp(key, "statistical_params") ||
	    !strcmp(key, "spans") || !strcmp(key, "analyze") || !strcmp(key, "description"))
		return 0;
	/* stortrace's log level and BPF debug output: sttrace logs nothing to tune */
	if (!strcmp(key, "trace_level") || !strcmp(key, "show_bpf_internal")) {
		fprintf(stderr, "%s: %s: %s has no st-record equivalent; ignored\n", REC_NAME,
			o->config, key);
		return 0;
	}
	for (i = 0; key[i] && i < sizeof(name) - 1; i++)
		name[i] = key[i] == '_' ? '-' : key[i];
	name[i] = 0;
	if (!strcmp(name, "config") || !strcmp(name, "help") || !strcmp(name, "verbose")) {
		snprintf(err, cap, "unknown key '%s'", key);
		return -1;
	}
	if (set_option(o, name, json_object_get_string(val), err, cap)) {
		if (!strncmp(err, "unknown option", 14))
			snprintf(err, cap, "unknown key '%s'", key);
		return -1;
	}
	return 0;
}

static int load_config(struct rec_opts *o, const char *path)
{
	char err[256];
	struct stat st;
	json_object *root;
	const char *why;

	/* a device or a pipe could feed the parser forever */
	if (stat(path, &st)) {
		fprintf(stderr, "%s: %s: %s\n", REC_NAME, path, strerror(errno));
		return REC_EXIT_USAGE;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: %s: not a regular file\n", REC_NAME, path);
		return REC_EXIT_USAGE;
	}
	root = json_object_from_file(path);
	why = json_util_get_last_err();
	if (!root) {
		/* json-c's message ends with a newline of its own */
		fprintf(stderr, "%s: %s: cannot read JSON: %.*s\n", REC_NAME, path,
			why ? (int)strcspn(why, "\n") : 11, why ? why : "parse error");
		return REC_EXIT_USAGE;
	}
	if (!json_object_is_type(root, json_type_object)) {
		fprintf(stderr, "%s: %s: not a JSON object\n", REC_NAME, path);
		json_object_put(root);
		return REC_EXIT_USAGE;
	}
	json_object_object_foreach(root, key, val) {
		if (config_key(o, key, val, err, sizeof(err))) {
			fprintf(stderr, "%s: %s: %s\n", REC_NAME, path, err);
			json_object_put(root);
			return REC_EXIT_USAGE;
		}
	}
	json_object_put(root);
	return 0;
}

/* The --config argument, looked for before the other options so that they override it. */
static const char *find_config(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			return argv[i + 1];
		if (!strncmp(argv[i], "--config=", 9))
			return argv[i] + 9;
	}
	return NULL;
}

static const char *long_name(int c)
{
	for (const struct option *lo = long_opts; lo->name; lo++)
		if (lo->val == c)
			return lo->name;
	return NULL;
}

static int check_combination(struct rec_opts *o)
{
	if (!o->output)
		return usage_error(REC_NAME, "no output file: give -o FILE");
	if ((o->rotate_ns || o->rotate_bytes || o->ring_bytes) && !strcmp(o->output, "-"))
		return usage_error(REC_NAME, "--rotate and --ring write files: -o - streams one");
	if ((o->rotate_ns || o->rotate_bytes) && o->ring_bytes)
		return usage_error(REC_NAME, "--rotate and --ring exclude each other");
	if (o->keep && !o->rotate_ns && !o->rotate_bytes)
		return usage_error(REC_NAME, "--keep needs --rotate");
	if (!o->ring_bytes && (o->trigger || o->max_triggers))
		return usage_error(REC_NAME, "--trigger and --max-triggers need --ring");
	if (o->cmd && o->pid)
		return usage_error(REC_NAME, "-p and -- CMD both choose the process to trace; give one");
	return 0;
}

int rec_opts_parse(struct rec_opts *o, int argc, char **argv)
{
	char err[256];
	const char *config = find_config(argc, argv);
	int c, ret;

	memset(o, 0, sizeof(*o));
	o->qd = 4;
	/*
	 * 4 MiB, not 16: the probes write each batch into the ring's next
	 * bytes, which in a ring larger than the cache have left it since the
	 * ring last went round. `block`'s probe runs took 354 ns each with
	 * 16 MiB, 193 with 4 MiB and 186 with 1 MiB (scripts/bench/bpf_steps.sh,
	 * record/README.md); a quarter of 4 MiB, the wakeup threshold, still
	 * holds 15-20 ms of records at the rates overhead.sh drives.
	 */
	o->ringbuf_size = 4u << 20;
	o->zstd_level = 1;
	o->chunk_size = 1u << 20;
	o->flush_ns = 250000000ull;
	o->after_ns = 5000000000ull;
	o->trigger_gap_ns = 10000000000ull;
	set_str(&o->events, "all");
	if (config) {
		o->config = config;
		ret = load_config(o, config);
		if (ret)
			return ret;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:t:e:p:c:d:z:vh", long_opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return -1;
		}
		if (c == OPT_VERSION) {
			printf("%s (format %d.%d)\n", REC_TOOL, ST_FORMAT_MAJOR, ST_FORMAT_MINOR);
			return -1;
		}
		if (c == 'v') {
			o->verbose = true;
			continue;
		}
		if (c == OPT_FORCE) {
			o->force = true;
			continue;
		}
		if (c == OPT_NO_STAMPS) {
			o->no_stamps = true;
			continue;
		}
		if (c == OPT_CONFIG)
			continue;
		if (c == '?') {
			snprintf(err, sizeof(err), "bad option '%s' (unknown, or missing its value)",
				 argv[optind - 1]);
			return usage_error(REC_NAME, "%s", err);
		}
		if (set_option(o, long_name(c), optarg, err, sizeof(err)))
			return usage_error(REC_NAME, "%s", err);
	}
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--"))
			return usage_error(REC_NAME, "unexpected argument; put the command after --");
		o->cmd = &argv[optind];
	}
	return check_combination(o);
}

char *rec_opts_json(const struct rec_opts *o)
{
	json_object *j = json_object_new_object();
	json_object *files = json_object_new_array();
	char *out;

	json_object_object_add(j, "output", json_object_new_string(o->output));
	json_object_object_add(j, "duration_ns", json_object_new_uint64(o->duration_ns));
	json_object_object_add(j, "max_size", json_object_new_uint64(o->max_size));
	json_object_object_add(j, "events", json_object_new_string(o->events));
	json_object_object_add(j, "pid", json_object_new_int(o->pid));
	json_object_object_add(j, "comm", o->comm ? json_object_new_string(o->comm) : NULL);
	json_object_object_add(j, "cgroup", o->cgroup ? json_object_new_string(o->cgroup) : NULL);
	json_object_object_add(j, "device", o->device ? json_object_new_string(o->device) : NULL);
	json_object_object_add(j, "qd", json_object_new_int((int)o->qd));
	json_object_object_add(j, "ringbuf_size", json_object_new_uint64(o->ringbuf_size));
	json_object_object_add(j, "zstd_level", json_object_new_int(o->zstd_level));
	json_object_object_add(j, "chunk_size", json_object_new_uint64(o->chunk_size));
	json_object_object_add(j, "flush_interval_ns", json_object_new_uint64(o->flush_ns));
	json_object_object_add(j, "no_stamps", json_object_new_boolean(o->no_stamps));
	for (size_t i = 0; i < o->nfiles; i++)
		json_object_array_add(files, json_object_new_string(o->files[i]));
	json_object_object_add(j, "files", files);
	json_object_object_add(j, "command", json_object_new_boolean(o->cmd != NULL));
	out = strdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
	json_object_put(j);
	return out;
}

void rec_opts_free(struct rec_opts *o)
{
	free((char *)o->output);
	free((char *)o->events);
	free((char *)o->comm);
	free((char *)o->cgroup);
	free((char *)o->device);
	free((char *)o->trigger);
	for (size_t i = 0; i < o->nfiles; i++)
		free((char *)o->files[i]);
	free(o->files);
}
