/* SPDX-License-Identifier: MIT */
/*
 * config.c - st-analyze --config FILE: a JSON module (a file of modules/) or a
 * stortrace config, applied as options before the command line's, which win.
 *
 * Every key becomes an option through an_parse_option(), so a key cannot
 * mean something its option does not:
 *   spans                      one --span per entry
 *   analyze.{OPTION}           any long option (stage, quantile, by, ...)
 *   filter.enable              true: the --quantile list (of filter.quantile)
 *   filter.quantile            --quantile, when filter.enable
 *   filter.stage               --stage; stortrace's stage names are mapped
 *   statistical_params.pmc_inv --interval, in milliseconds
 *   statistical_params.heatmap_row  --heatmap-rows
 *   filter.filter_accuracy     no equivalent: a note (quantiles are exact up
 *                              to --exact-limit, then within 0.39 %)
 * The recorder's keys (name, event_type, events, select_target, ...) are
 * st-record's and ignored here; any other key is an error.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "analyze/st-analyze/analyze.h"

/* Keys st-record reads from the same file. */
static const char *const recorder_keys[] = {
	"name", "event_type", "events", "trace_level", "logger_io_uring_depth", "select_target",
	"show_bpf_internal", "description", "output", "duration", "max_size", "pid", "comm",
	"cgroup", "device", "qd", "ringbuf_size", "zstd_level", "chunk_size",
};

/* stortrace's stages (filter.stage) and the sttrace stage each means. */
static const struct { const char *stortrace, *sttrace; } stage_names[] = {
	{ "sum", "total" }, { "block_io", "Q2C" }, { "file_system", "fs" },
	{ "kernel_crossing", "sys2fs" },
};

struct config {
	struct an_opts *o;
	const char *path, *prog;
};

static int bad(const struct config *c, const char *key, const char *why)
{
	fprintf(stderr, "%s: %s: %s: %s\n", c->prog, c->path, key, why);
	return 2;
}

/* One long option, by name; value NULL for a flag. */
static int apply_str(const struct config *c, const char *name, const char *value)
{
	for (const struct option *lo = an_long_opts(); lo->name; lo++)
		if (!strcmp(lo->name, name) && strcmp(name, "help") && strcmp(name, "config"))
			return an_parse_option(c->o, lo->val, value, c->prog);
	return bad(c, name, "unknown option");
}

/* The same with a JSON value: a string, a number, or a boolean for a flag. */
static int apply(const struct config *c, const char *name, json_object *val)
{
	for (const struct option *lo = an_long_opts(); lo->name; lo++)
		if (!strcmp(lo->name, name) && lo->has_arg == no_argument)
			return json_object_get_boolean(val) ? apply_str(c, name, NULL) : 0;
	return apply_str(c, name, json_object_get_string(val));
}

static int apply_analyze(const struct config *c, json_object *obj)
{
	if (!json_object_is_type(obj, json_type_object))
		return bad(c, "analyze", "not an object of option names");
	json_object_object_foreach(obj, key, val) {
		char name[64];
		size_t i;
		int ret;

		for (i = 0; key[i] && i < sizeof(name) - 1; i++)
			name[i] = key[i] == '_' ? '-' : key[i];
		name[i] = 0;
		ret = apply(c, name, val);
		if (ret)
			return ret;
	}
	return 0;
}

static int apply_spans(const struct config *c, json_object *arr)
{
	size_t n;

	if (!json_object_is_type(arr, json_type_array))
		return bad(c, "spans", "not an array of \"NAME=START..END[:KEY]\"");
	n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		int ret = apply(c, "span", json_object_array_get_idx(arr, i));

		if (ret)
			return ret;
	}
	return 0;
}

static int apply_filter(const struct config *c, json_object *obj)
{
	json_object *enable = NULL, *quantile = NULL;

	if (!json_object_is_type(obj, json_type_object))
		return bad(c, "filter", "not an object");
	json_object_object_foreach(obj, key, val) {
		if (!strcmp(key, "enable")) {
			enable = val;
		} else if (!strcmp(key, "quantile")) {
			quantile = val;
		} else if (!strcmp(key, "stage")) {
			const char *stage = json_object_get_string(val);
			int ret;

			for (size_t i = 0; i < sizeof(stage_names) / sizeof(stage_names[0]); i++)
				if (!strcmp(stage, stage_names[i].stortrace))
					stage = stage_names[i].sttrace;
			ret = apply_str(c, "stage", stage);
			if (ret)
				return ret;
		} else if (!strcmp(key, "filter_accuracy") || !strcmp(key, "cold_start_iter")) {
			fprintf(stderr, "%s: %s: filter.%s has no sttrace equivalent (quantiles are exact "
				"up to --exact-limit samples, then within 0.39%%); ignored\n", c->prog,
				c->path, key);
		} else {
			return bad(c, key, "unknown key of filter");
		}
	}
	/* stortrace's filter keeps the I/Os above the quantile: sttrace's --quantile list */
	if (enable && json_object_get_boolean(enable))
		return quantile ? apply(c, "quantile", quantile) : apply_str(c, "quantile", "99");
	return 0;
}

static int apply_statistical(const struct config *c, json_object *obj)
{
	if (!json_object_is_type(obj, json_type_object))
		return bad(c, "statistical_params", "not an object");
	json_object_object_foreach(obj, key, val) {
		char ms[64];
		int ret;

		if (!strcmp(key, "pmc_inv")) {
			snprintf(ms, sizeof(ms), "%sms", json_object_get_string(val));
			ret = apply_str(c, "interval", ms);
		} else if (!strcmp(key, "heatmap_row")) {
			ret = apply(c, "heatmap-rows", val);
		} else {
			ret = bad(c, key, "unknown key of statistical_params");
		}
		if (ret)
			return ret;
	}
	return 0;
}

static int apply_key(const struct config *c, const char *key, json_object *val)
{
	if (!strcmp(key, "spans"))
		return apply_spans(c, val);
	if (!strcmp(key, "analyze"))
		return apply_analyze(c, val);
	if (!strcmp(key, "filter"))
		return apply_filter(c, val);
	if (!strcmp(key, "statistical_params"))
		return apply_statistical(c, val);
	for (size_t i = 0; i < sizeof(recorder_keys) / sizeof(recorder_keys[0]); i++)
		if (!strcmp(key, recorder_keys[i]))
			return 0;
	return bad(c, key, "unknown key");
}

static int load(struct an_opts *o, const char *path, const char *prog)
{
	struct config c = { .o = o, .path = path, .prog = prog };
	json_object *root;
	struct stat st;
	int ret = 0;

	if (stat(path, &st)) {
		fprintf(stderr, "%s: --config %s: %s\n", prog, path, strerror(errno));
		return 2;
	}
	/* a device or a pipe could feed the parser forever */
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: --config %s: not a regular file\n", prog, path);
		return 2;
	}
	root = json_object_from_file(path);
	if (!root || !json_object_is_type(root, json_type_object)) {
		fprintf(stderr, "%s: --config %s: not a JSON object\n", prog, path);
		json_object_put(root);
		return 2;
	}
	json_object_object_foreach(root, key, val) {
		ret = apply_key(&c, key, val);
		if (ret)
			break;
	}
	/* kept, like argv: the options point into it */
	return ret;
}

int an_config_apply(struct an_opts *o, int argc, char **argv, const char *prog)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--config"))
			return i + 1 < argc ? load(o, argv[i + 1], prog) : 0;
		if (!strncmp(argv[i], "--config=", 9))
			return load(o, argv[i] + 9, prog);
	}
	return 0;
}
