/* SPDX-License-Identifier: MIT */
/*
 * tracepoint.c - tracepoints named at record time: `-e SUBSYS:NAME`, globs
 * (`-e 'xfs:*'`) and names that are not built in (`-e ext4_da_write_begin`).
 *
 * Each is resolved against tracefs once the environment is checked; a built-in
 * event keeps its typed probe, any other tracepoint gets the generic probe
 * (bpf/generic.bpf.c). Its schema type is built from the tracepoint's own
 * format file (/sys/kernel/tracing/events/S/N/format) and stored in the file,
 * so every reader prints it field by field; its layout tells the probe what
 * to copy. Generic type ids start at ST_GENERIC_TYPE_FIRST, in the order
 * the tracepoints were resolved.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record/record.h"
#include "sttrace.skel.h"

#define TRACEFS_EVENTS "/sys/kernel/tracing/events"
#define MAX_TP_FIELDS	128	/* fields of one tracepoint (the largest here has 27) */
#define CLOSEST		3	/* names suggested for a name the kernel lacks */

static int tp_error(char *err, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, cap, fmt, ap);
	va_end(ap);
	return -1;
}

/* One `field:DECL; offset:O; size:S; signed:X;` line of a format file. */
struct tp_field {
	char decl[160];		/* "unsigned int len", "__data_loc char[] name", "char comm[16]" */
	char name[160];
	unsigned offset, size, count;	/* count: array elements, 0 for a scalar */
	bool is_signed;
};

static int parse_field(const char *line, struct tp_field *f)
{
	const char *decl = strstr(line, "field:");
	char *end, *name, *bracket;
	int is_signed = 0;

	if (!decl)
		return -1;
	decl += 6;
	end = strchr(decl, ';');
	if (!end || (size_t)(end - decl) >= sizeof(f->decl) ||
	    sscanf(end, "; offset:%u; size:%u; signed:%d;", &f->offset, &f->size, &is_signed) < 2)
		return -1;
	memcpy(f->decl, decl, (size_t)(end - decl));
	f->decl[end - decl] = 0;
	f->is_signed = is_signed;
	f->count = 0;
	/* the name is the last word, an array's `[N]` after it */
	name = strrchr(f->decl, ' ');
	name = name ? name + 1 : f->decl;
	snprintf(f->name, sizeof(f->name), "%s", name);
	bracket = strchr(f->name, '[');
	if (bracket) {
		f->count = (unsigned)strtoul(bracket + 1, NULL, 10);
		*bracket = 0;
	}
	return f->name[0] ? 0 : -1;
}

static bool decl_has(const struct tp_field *f, const char *word)
{
	return strstr(f->decl, word) != NULL;
}

/* How the schema shows a copied field, from its C declaration. */
static void field_display(const struct tp_field *f, struct st_field *out)
{
	unsigned elem = f->count && f->size % f->count == 0 ? f->size / f->count : f->size;

	if (elem != 1 && elem != 2 && elem != 4 && elem != 8)
		elem = 1;	/* arrays of structs, 128-bit values: bytes */
	out->size = (uint16_t)f->size;
	out->elem_size = (uint8_t)elem;
	if (f->count && elem == 1 && decl_has(f, "char"))
		out->type = ST_FT_STR;
	else if (decl_has(f, "*") || elem != f->size / (f->count ? f->count : 1))
		out->type = ST_FT_HEX;
	else if (!f->count && f->size == 4 && !strncmp(f->decl, "dev_t ", 6))
		out->type = ST_FT_DEV;
	else
		out->type = f->is_signed ? ST_FT_INT : ST_FT_UINT;
}

/* The six header fields every type starts with (spec/sttrace-format.md, 11.1): a built-in type's. */
static size_t header_fields(struct st_field *out)
{
	const struct st_type *any = st_builtin_type(ST_EV_block_bio_queue);

	memcpy(out, any->fields, 6 * sizeof(*out));
	return 6;
}

/*
 * Parse one tracepoint's format file into its schema type and the generic
 * probe's layout. Fields the probe cannot copy (__rel_loc, __data_loc arrays
 * other than strings, strings past ST_GENERIC_MAX_STRINGS) are left out.
 */
/*
 * A field name not yet used in fields[0..n): some tracepoints name two
 * fields alike, and a schema's names are unique (spec 5.2): the later one
 * becomes NAME_2, NAME_3...
 */
static char *unique_name(const struct st_field *fields, size_t n, const char *name)
{
	char buf[192];

	snprintf(buf, sizeof(buf), "%s", name);
	for (unsigned k = 2;; k++) {
		size_t i;

		for (i = 0; i < n && strcmp(fields[i].name, buf); i++)
			;
		if (i == n)
			return strdup(buf);
		snprintf(buf, sizeof(buf), "%s_%u", name, k);
	}
}

/* The bytes of the record the n schema fields cover, for the probe to keep (the rest it zeroes). */
static void keep_fields(struct st_generic_event *l, const struct st_field *fields, size_t n)
{
	uint8_t *keep = (uint8_t *)l->keep;

	memset(l->keep, 0, sizeof(l->keep));
	for (size_t i = 0; i < n; i++)
		if ((size_t)fields[i].offset + fields[i].size <= sizeof(l->keep))
			memset(keep + fields[i].offset, 0xff, fields[i].size);
}

static int build_tracepoint(struct rec_tracepoint *tp, const char *subsys, const char *event,
			    uint16_t id, char *err, size_t cap)
{
	char path[512], line[512], full[256];
	struct tp_field f;
	struct st_field *fields = calloc(MAX_TP_FIELDS + 6, sizeof(*fields));
	struct st_generic_event *l = &tp->layout;
	size_t n, nstr = 0;
	unsigned copy_end = ST_GENERIC_ENTRY_SKIP, slot;
	FILE *fp;

	memset(tp, 0, sizeof(*tp));
	snprintf(full, sizeof(full), "%.127s:%.127s", subsys, event);
	snprintf(path, sizeof(path), TRACEFS_EVENTS "/%.127s/%.127s/format", subsys, event);
	fp = fopen(path, "re");
	if (!fields || !fp) {
		free(fields);
		if (fp)
			fclose(fp);
		return tp_error(err, cap, "tracepoint %s: cannot read its format: %s", full,
				strerror(errno));
	}
	n = header_fields(fields);
	while (fgets(line, sizeof(line), fp)) {
		struct st_field *out = &fields[n];

		if (parse_field(line, &f) || !strncmp(f.name, "common_", 7))
			continue;
		if (f.offset + f.size > copy_end)
			copy_end = f.offset + f.size;
		if (decl_has(&f, "__rel_loc") || (decl_has(&f, "__data_loc") &&
		    (!decl_has(&f, "char") || nstr == ST_GENERIC_MAX_STRINGS)))
			continue;
		if (n == MAX_TP_FIELDS + 6)
			break;
		out->name = unique_name(fields, n, f.name);
		out->doc = strdup(f.decl);
		if (decl_has(&f, "__data_loc")) {
			l->strings[nstr++].loc_offset = (uint16_t)f.offset;
			out->type = ST_FT_STR;
			out->elem_size = 1;
			out->size = ST_GENERIC_STR_LEN;
		} else {
			out->offset = (uint16_t)(f.offset + sizeof(struct st_event_header) -
						 ST_GENERIC_ENTRY_SKIP);
			field_display(&f, out);
			if (!strcmp(f.name, "dev") && out->type == ST_FT_DEV)
				l->dev_offset = (uint16_t)f.offset;
		}
		n++;
	}
	fclose(fp);
	/* string slots follow the copied entry, 8-aligned */
	slot = (unsigned)(sizeof(struct st_event_header) + copy_end - ST_GENERIC_ENTRY_SKIP + 7) & ~7u;
	for (size_t i = 0, s = 0; i < n; i++)
		if (fields[i].type == ST_FT_STR && fields[i].offset == 0 && i >= 6) {
			l->strings[s++].slot_offset = (uint16_t)slot;
			fields[i].offset = (uint16_t)slot;
			slot += ST_GENERIC_STR_LEN;
		}
	l->nstrings = (uint32_t)nstr;
	l->copy_len = (uint16_t)(copy_end - ST_GENERIC_ENTRY_SKIP);
	l->size = (uint16_t)((slot + 7) & ~7u);
	keep_fields(l, fields, n);
	l->type = id;
	tp->name = strdup(full);
	tp->type = (struct st_type){ .id = id, .size = l->size, .name = tp->name,
				     .nfields = (uint16_t)n, .fields = fields };
	if (l->size > ST_MAX_RECORD_BYTES)
		return tp_error(err, cap, "tracepoint %s: its record needs %u bytes, more than the "
				"%u a probe writes", full, l->size, ST_MAX_RECORD_BYTES);
	return 0;
}

static void free_tracepoint(struct rec_tracepoint *tp)
{
	struct st_field *fields = (struct st_field *)tp->type.fields;

	for (size_t i = 6; fields && i < tp->type.nfields; i++) {
		free((char *)fields[i].name);
		free((char *)fields[i].doc);
	}
	free(fields);
	free(tp->name);
}

/* The built-in type of tracepoint subsys/event, 0 when it has none. */
static uint16_t builtin_of(const char *subsys, const char *event)
{
	size_t n;
	const struct st_type *t = st_builtin_types(&n);
	char want[256], tp[128];

	snprintf(want, sizeof(want), "%.127s/%.127s", subsys, event);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, event) && rec_event_tracepoint(t[i].id, tp, sizeof(tp)) &&
		    !strcmp(tp, want))
			return t[i].id;
	return 0;
}

static bool already_selected(const struct rec_selection *sel, const char *subsys, const char *event)
{
	char full[256];

	snprintf(full, sizeof(full), "%.127s:%.127s", subsys, event);
	for (size_t i = 0; i < sel->ntps; i++)
		if (!strcmp(sel->tps[i].name, full))
			return true;
	return false;
}

static int add_tracepoint(struct rec_selection *sel, const char *subsys, const char *event,
			  char *err, size_t cap)
{
	uint16_t builtin = builtin_of(subsys, event);
	struct rec_tracepoint *tps;

	if (builtin) {
		sel->on[builtin] = sel->required[builtin] = true;
		return 0;
	}
	if (already_selected(sel, subsys, event))
		return 0;
	if (sel->ntps == ST_GENERIC_MAX_EVENTS)
		return tp_error(err, cap, "--events: more than %d tracepoints (at %s:%s)",
				ST_GENERIC_MAX_EVENTS, subsys, event);
	tps = realloc(sel->tps, (sel->ntps + 1) * sizeof(*tps));
	if (!tps)
		return tp_error(err, cap, "%s", strerror(ENOMEM));
	sel->tps = tps;
	if (build_tracepoint(&tps[sel->ntps], subsys, event,
			     (uint16_t)(ST_GENERIC_TYPE_FIRST + sel->ntps), err, cap)) {
		free_tracepoint(&tps[sel->ntps]);
		return -1;
	}
	sel->ntps++;
	return 0;
}

/* Edit distance, for suggesting the names closest to one the kernel lacks. */
static unsigned distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[256];

	if (lb >= sizeof(row) / sizeof(row[0]))
		return ~0u;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0], up;

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			up = row[j];
			row[j] = a[i - 1] == b[j - 1] ? diag :
				 1 + (diag < up ? (diag < row[j - 1] ? diag : row[j - 1]) :
					       (up < row[j - 1] ? up : row[j - 1]));
			diag = up;
		}
	}
	return row[lb];
}

struct closest {
	char name[CLOSEST][256];
	unsigned dist[CLOSEST];
};

static void consider(struct closest *c, const char *want, const char *subsys, const char *event)
{
	char full[256];
	unsigned d;
	int i;

	snprintf(full, sizeof(full), "%.127s:%.127s", subsys, event);
	/* a pattern without a subsystem is compared with the event name alone */
	d = distance(want, strchr(want, ':') ? full : event);
	for (i = CLOSEST - 1; i >= 0 && d < c->dist[i]; i--)
		if (i + 1 < CLOSEST) {
			c->dist[i + 1] = c->dist[i];
			memcpy(c->name[i + 1], c->name[i], sizeof(c->name[i]));
		}
	if (i + 1 < CLOSEST) {
		c->dist[i + 1] = d;
		memcpy(c->name[i + 1], full, sizeof(c->name[i + 1]));
	}
}

/*
 * Every tracepoint matching `pattern`: SUBSYS:NAME with shell globs in either
 * part, or NAME alone for any subsystem. None: an error with the closest names.
 */
static int resolve_pattern(struct rec_selection *sel, const char *pattern, char *err, size_t cap)
{
	char subsys_pat[128] = "*", event_pat[128];
	const char *colon = strchr(pattern, ':');
	struct closest close = { .dist = { ~0u, ~0u, ~0u } };
	struct dirent *s, *e;
	size_t matched = 0;
	int ret = 0;
	DIR *top = opendir(TRACEFS_EVENTS), *dir;

	if (colon)
		snprintf(subsys_pat, sizeof(subsys_pat), "%.*s", (int)(colon - pattern), pattern);
	snprintf(event_pat, sizeof(event_pat), "%s", colon ? colon + 1 : pattern);
	while (top && !ret && (s = readdir(top))) {
		char path[512];

		if (s->d_name[0] == '.' || s->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), TRACEFS_EVENTS "/%.255s", s->d_name);
		dir = opendir(path);
		while (dir && !ret && (e = readdir(dir))) {
			if (e->d_name[0] == '.' || e->d_type != DT_DIR)
				continue;
			if (fnmatch(subsys_pat, s->d_name, 0) || fnmatch(event_pat, e->d_name, 0)) {
				consider(&close, pattern, s->d_name, e->d_name);
				continue;
			}
			matched++;
			ret = add_tracepoint(sel, s->d_name, e->d_name, err, cap);
		}
		if (dir)
			closedir(dir);
	}
	if (top)
		closedir(top);
	if (ret || matched)
		return ret;
	snprintf(err, cap, "--events: no tracepoint '%s' on this kernel; closest: %s, %s, %s",
		 pattern, close.name[0], close.name[1], close.name[2]);
	return -1;
}

int rec_tracepoints_resolve(struct rec_selection *sel, char *err, size_t cap)
{
	for (size_t i = 0; i < sel->npatterns; i++)
		if (resolve_pattern(sel, sel->patterns[i], err, cap))
			return -1;
	return 0;
}

int rec_tracepoints_add_types(struct st_writer *w, const struct rec_selection *sel)
{
	for (size_t i = 0; i < sel->ntps; i++) {
		int ret = st_writer_add_type(w, &sel->tps[i].type);

		if (ret)
			return ret;
	}
	return 0;
}

int rec_tracepoints_attach(struct rec_probes *p, const struct rec_selection *sel, char *err, size_t cap)
{
	int map_fd = bpf_map__fd(p->skel->maps.generic_events);

	for (size_t i = 0; i < sel->ntps; i++) {
		LIBBPF_OPTS(bpf_tracepoint_opts, opts, .bpf_cookie = i);
		const struct rec_tracepoint *tp = &sel->tps[i];
		char subsys[128];
		const char *event = strchr(tp->name, ':') + 1;
		uint32_t key = (uint32_t)i;
		struct bpf_link *link;

		snprintf(subsys, sizeof(subsys), "%.*s", (int)(event - 1 - tp->name), tp->name);
		if (bpf_map_update_elem(map_fd, &key, &tp->layout, BPF_ANY))
			return tp_error(err, cap, "cannot configure the probe of %s: %s", tp->name,
					strerror(errno));
		link = bpf_program__attach_tracepoint_opts(p->skel->progs.generic_tracepoint, subsys,
							   event, &opts);
		if (!link)
			return tp_error(err, cap, "cannot attach %s: %s", tp->name, strerror(errno));
		p->links[p->nlinks++] = link;
		rec_ring_drain(&p->ring);
	}
	return 0;
}

void rec_selection_free(struct rec_selection *sel)
{
	for (size_t i = 0; i < sel->ntps; i++)
		free_tracepoint(&sel->tps[i]);
	for (size_t i = 0; i < sel->npatterns; i++)
		free(sel->patterns[i]);
	for (size_t i = 0; i < REC_MAX_TYPE; i++)
		free(sel->missing[i]), sel->missing[i] = NULL;
	free(sel->tps);
	free(sel->patterns);
	sel->tps = NULL;
	sel->patterns = NULL;
	sel->ntps = sel->npatterns = 0;
}
