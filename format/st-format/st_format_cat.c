/* SPDX-License-Identifier: MIT */
/*
 * st_format_cat.c - `st-format cat`: every field of every event, by name.
 *
 * Everything printed comes from the schema stored in the file, never from
 * this build's event definitions, so a trace written by a newer recorder
 * with event types this build has never seen prints completely.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/csv.h"
#include "common/text.h"
#include "format/st-format/st_format.h"
#include "format/st-format/st_format_json.h"

struct cat {
	enum sf_cat_style style;
	const char *path;
	struct st_reader *r;
	uint8_t *wanted;	/* per type id; NULL: every type */
	/* CSV: the union of the field names of the printed types */
	const char **columns;
	size_t ncolumns;
	const struct st_field ***field_at;	/* per type id: field of each column or NULL */
	uint8_t *unlisted;	/* per type id: records met that the per-type counts leave out */
	struct sf_json_writer json;	/* JSON: onto stdout */
	const char *progress_cmd;	/* a progress line naming this command; NULL: none */
	struct sf_progress progress;
};

static unsigned elements(const struct st_field *f)
{
	return f->elem_size ? f->size / f->elem_size : 0;
}

static int is_header_field(const struct st_field *f)
{
	return !strcmp(f->name, "type") || !strcmp(f->name, "size") || !strcmp(f->name, "ts");
}

/* ---- Values ---------------------------------------------------------------- */

static void put_scalar(const void *rec, const struct st_field *f, unsigned i)
{
	uint64_t v;

	switch (f->type) {
	case ST_FT_INT:
		printf("%" PRId64, st_field_i64(rec, f, i));
		break;
	case ST_FT_HEX:
		printf("0x%" PRIx64, st_field_u64(rec, f, i));
		break;
	case ST_FT_DEV:
		v = st_field_u64(rec, f, i);
		printf("%u:%u", (unsigned)(v >> 20), (unsigned)(v & 0xfffff));
		break;
	default:	/* unsigned, ns, and display types newer than this build */
		printf("%" PRIu64, st_field_u64(rec, f, i));
		break;
	}
}

/* A string field up to its NUL padding (fields are at most 65535 bytes). */
static const char *field_string(const void *rec, const struct st_field *f)
{
	static char buf[UINT16_MAX + 1];

	st_field_str(rec, f, buf, sizeof(buf));
	return buf;
}

/*
 * A string field: text quotes it with C escapes (a backslash doubled, bytes
 * outside printable ASCII as \xHH, so every byte can be told back); CSV as an
 * RFC 4180 field with the same escapes (csv.h).
 */
static void put_string(const void *rec, const struct st_field *f, enum sf_cat_style style)
{
	const char *buf = field_string(rec, f);

	if (style == SF_CAT_CSV) {
		csv_field(stdout, buf);
		return;
	}
	putchar('"');
	text_quoted(stdout, buf, '"', "\\\"");
	putchar('"');
}

static void put_value(const void *rec, const struct st_field *f, enum sf_cat_style style)
{
	unsigned n = elements(f);

	if (f->type == ST_FT_STR) {
		put_string(rec, f, style);
		return;
	}
	if (n == 1) {
		put_scalar(rec, f, 0);
		return;
	}
	if (style == SF_CAT_TEXT)
		putchar('[');
	for (unsigned i = 0; i < n; i++) {
		if (i)
			putchar(style == SF_CAT_TEXT ? ',' : ';');
		put_scalar(rec, f, i);
	}
	if (style == SF_CAT_TEXT)
		putchar(']');
}

static void json_scalar(struct sf_json_writer *w, const void *rec, const struct st_field *f,
			unsigned i)
{
	char buf[32];
	uint64_t v;

	switch (f->type) {
	case ST_FT_INT:
		sf_jw_i64(w, st_field_i64(rec, f, i));
		break;
	case ST_FT_HEX:
		snprintf(buf, sizeof(buf), "0x%" PRIx64, st_field_u64(rec, f, i));
		sf_jw_string(w, buf);
		break;
	case ST_FT_DEV:
		v = st_field_u64(rec, f, i);
		snprintf(buf, sizeof(buf), "%u:%u", (unsigned)(v >> 20), (unsigned)(v & 0xfffff));
		sf_jw_string(w, buf);
		break;
	default:
		sf_jw_u64(w, st_field_u64(rec, f, i));
		break;
	}
}

static void json_value(struct sf_json_writer *w, const void *rec, const struct st_field *f)
{
	unsigned n = elements(f);

	if (f->type == ST_FT_STR) {
		sf_jw_string(w, field_string(rec, f));
		return;
	}
	if (n == 1) {
		json_scalar(w, rec, f, 0);
		return;
	}
	sf_jw_array(w);
	for (unsigned i = 0; i < n; i++)
		json_scalar(w, rec, f, i);
	sf_jw_end(w);
}

/* ---- Records ------------------------------------------------------------- */

static void print_text(const struct st_type *t, const struct st_event_header *ev)
{
	printf("%" PRIu64 " %s", (uint64_t)ev->ts, t->name);
	for (unsigned i = 0; i < t->nfields; i++) {
		const struct st_field *f = &t->fields[i];

		if (is_header_field(f))
			continue;
		printf(" %s=", f->name);
		put_value(ev, f, SF_CAT_TEXT);
	}
	putchar('\n');
}

static void print_json(struct cat *cat, const struct st_type *t, const struct st_event_header *ev)
{
	sf_jw_object(&cat->json);
	for (unsigned i = 0; i < t->nfields; i++) {
		const struct st_field *f = &t->fields[i];

		sf_jw_key(&cat->json, f->name);
		if (!strcmp(f->name, "type"))
			sf_jw_string(&cat->json, t->name);
		else
			json_value(&cat->json, ev, f);
	}
	sf_jw_end(&cat->json);
	sf_jw_newline(&cat->json);
}

static void print_csv(const struct cat *cat, const struct st_type *t,
		      const struct st_event_header *ev)
{
	const struct st_field **at = cat->field_at[t->id];

	for (size_t c = 0; c < cat->ncolumns; c++) {
		if (c)
			putchar(',');
		if (!at[c])
			continue;
		if (!strcmp(at[c]->name, "type"))
			fputs(t->name, stdout);
		else
			put_value(ev, at[c], SF_CAT_CSV);
	}
	putchar('\n');
}

/* ---- Selection and CSV columns ------------------------------------------------ */

static int type_printed(const struct cat *cat, const struct st_type *t)
{
	return (cat->wanted ? cat->wanted[t->id] : 1) && st_type_events(cat->r, t->id);
}

static int column_of(struct cat *cat, const char *name)
{
	for (size_t c = 0; c < cat->ncolumns; c++)
		if (!strcmp(cat->columns[c], name))
			return (int)c;
	cat->columns[cat->ncolumns] = name;
	return (int)cat->ncolumns++;
}

/* Columns: the fields of every printed type in schema order, each name once. */
static int csv_setup(struct cat *cat)
{
	size_t maxcols = 0;

	for (size_t i = 0; i < st_type_count(cat->r); i++)
		maxcols += st_type_at(cat->r, i)->nfields;
	cat->columns = calloc(maxcols + 1, sizeof(*cat->columns));
	cat->field_at = calloc(1u << 16, sizeof(*cat->field_at));
	cat->unlisted = calloc(1u << 16, 1);
	if (!cat->columns || !cat->field_at || !cat->unlisted)
		return -1;
	for (size_t i = 0; i < st_type_count(cat->r); i++) {
		const struct st_type *t = st_type_at(cat->r, i);

		if (!type_printed(cat, t))
			continue;
		cat->field_at[t->id] = calloc(maxcols + 1, sizeof(**cat->field_at));
		if (!cat->field_at[t->id])
			return -1;
		for (unsigned k = 0; k < t->nfields; k++)
			cat->field_at[t->id][column_of(cat, t->fields[k].name)] = &t->fields[k];
	}
	for (size_t c = 0; c < cat->ncolumns; c++)
		printf("%s%s", c ? "," : "", cat->columns[c]);
	putchar('\n');
	return 0;
}

static void csv_free(struct cat *cat)
{
	for (size_t id = 0; cat->field_at && id < (1u << 16); id++)
		free(cat->field_at[id]);
	free(cat->field_at);
	free(cat->columns);
	free(cat->unlisted);
}

/* --type NAME[,NAME...] into cat->wanted; a usage error names an unknown type. */
static int select_types(struct cat *cat, char *list)
{
	cat->wanted = calloc(1u << 16, 1);
	if (!cat->wanted)
		return sf_error(cat->path, "out of memory");
	for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		const struct st_type *t = st_type_by_name(cat->r, name);

		if (!t)
			return sf_usage(&sf_cmd_cat, "%s: no event type '%s' in the file's schema",
					cat->path, name);
		cat->wanted[t->id] = 1;
	}
	return SF_OK;
}

/*
 * CSV columns come from the types the per-type counts list: a record of a
 * type they leave out (a wrong index) has none, so it is reported, once per
 * type, instead of printed. 1 when ev was such a record.
 */
static int csv_unlisted(struct cat *cat, const struct st_type *t)
{
	if (cat->style != SF_CAT_CSV || cat->field_at[t->id])
		return 0;
	if (!cat->unlisted[t->id])
		sf_error(cat->path, "%s records, which the file's per-type counts leave out: "
			 "not printed (no CSV columns)", t->name);
	cat->unlisted[t->id] = 1;
	return 1;
}

/*
 * Every event in [from, to]. An events chunk that turns out damaged is
 * reported and skipped, and the others still print (a damaged chunk costs
 * only its own events, as in a scan); the exit status then says the output
 * is incomplete.
 */
static int print_events(struct cat *cat, uint64_t from, uint64_t to)
{
	const struct st_event_header *ev;
	struct st_cursor *c;
	int rc = st_cursor_open(cat->r, from, to, ST_CURSOR_RAW, &c), incomplete = 0;

	if (rc)
		return sf_error(cat->path, "%s", st_reader_errmsg(cat->r));
	while ((rc = st_cursor_next(c, &ev)) != 0) {
		const struct st_type *t;

		if (rc == ST_ENOMEM)
			break;
		if (rc < 0) {
			sf_error(cat->path, "%s; its events are skipped", st_reader_errmsg(cat->r));
			incomplete = 1;
			continue;
		}
		sf_progress_tick(&cat->progress);
		t = st_type_by_id(cat->r, ev->type);
		if (!t || (cat->wanted && !cat->wanted[ev->type]))
			continue;
		if (csv_unlisted(cat, t)) {
			incomplete = 1;
			continue;
		}
		if (cat->style == SF_CAT_TEXT)
			print_text(t, ev);
		else if (cat->style == SF_CAT_JSON)
			print_json(cat, t, ev);
		else
			print_csv(cat, t, ev);
	}
	st_cursor_close(c);
	sf_progress_end(&cat->progress);
	if (fflush(stdout) || ferror(stdout))
		return sf_error("stdout", "write failed");
	if (rc == ST_ENOMEM)
		return sf_error(cat->path, "out of memory");
	return incomplete ? SF_BAD : SF_OK;
}

static int cat_file(struct cat *cat, char *types, const struct sf_range *range)
{
	uint64_t from, to;
	int rc;

	if (sf_open(cat->path, 0, &cat->r))
		return SF_BAD;
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	sf_jw_init(&cat->json, stdout);
	if (cat->progress_cmd)
		sf_progress_start(&cat->progress, cat->progress_cmd, st_reader_info(cat->r)->events);
	rc = sf_resolve_range(&sf_cmd_cat, cat->r, range, &from, &to);
	if (!rc && types)
		rc = select_types(cat, types);
	if (!rc && cat->style == SF_CAT_CSV && csv_setup(cat))
		rc = sf_error(cat->path, "out of memory");
	if (!rc)
		rc = print_events(cat, from, to);
	csv_free(cat);
	free(cat->wanted);
	st_reader_close(cat->r);
	return rc;
}

static int cat_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "csv", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "type", required_argument, NULL, 't' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cat cat = { .style = SF_CAT_TEXT };
	struct sf_range range = { 0 };
	char *types = NULL;
	int c;

	while ((c = sf_getopt(&sf_cmd_cat, argc, argv, ":ht:", longopts)) != -1) {
		switch (c) {
		case 'c':
		case 'j':
			if (cat.style != SF_CAT_TEXT)
				return sf_usage(&sf_cmd_cat, "--csv and --json exclude each other");
			cat.style = c == 'c' ? SF_CAT_CSV : SF_CAT_JSON;
			break;
		case 't':
			types = optarg;
			break;
		case 'f':
			range.from = optarg;
			break;
		case 'T':
			range.to = optarg;
			break;
		case 'h':
			return SF_OK;
		default:
			return SF_USAGE;
		}
	}
	if (sf_positional(&sf_cmd_cat, argc, argv, 1, "FILE"))
		return SF_USAGE;
	cat.path = argv[optind];
	return cat_file(&cat, types, &range);
}

int sf_cat_events(const char *path, enum sf_cat_style style, const char *progress_cmd)
{
	struct cat cat = { .style = style, .path = path, .progress_cmd = progress_cmd };

	return cat_file(&cat, NULL, &(const struct sf_range){ 0 });
}

const struct sf_cmd sf_cmd_cat = {
	.name = "cat",
	.summary = "print every field of every event, by name (text, CSV or JSON)",
	.help =
	"Usage: st-format cat [--csv|--json] [-t NAME[,NAME...]] [--from T] [--to T] FILE\n"
	"Print the events of a trace in timestamp order, every field by name, as\n"
	"described by the schema stored in the file (types unknown to this build\n"
	"print completely too).\n\n"
	"  (default)          one line per event: TS TYPE field=value ...; every\n"
	"                     field but type, size and ts, which the line starts with\n"
	"  --csv              a header row, then one row per event; the columns are\n"
	"                     every field name of the printed types (type holds the\n"
	"                     type's name), empty where a type has no such field\n"
	"  --json             one JSON object per line (JSON Lines), every field\n"
	"  -t, --type NAMES   only these event types (comma-separated schema names)\n"
	"  --from T, --to T   only events with FROM <= ts <= TO\n"
	"  -h, --help         this text\n\n"
	SF_TIME_HELP "\n"
	"Values: unsigned and signed decimals; hex fields (kernel addresses, flags)\n"
	"as 0x...; devices as major:minor; strings quoted with C escapes (CSV:\n"
	"quoted when needed); arrays as [a,b] (CSV: a;b, JSON: arrays). JSON\n"
	"prints hex fields and devices as strings.\n\n"
	"A damaged events chunk is named on stderr and its events are skipped; the\n"
	"events of every other chunk still print, and the exit status is 1. So with\n"
	"--csv for records of a type the file's per-type counts leave out (no\n"
	"columns were made for it). The output forms are defined in\n"
	"spec/sttrace-format.md, section 14.\n\n"
	"Exit status: 0 printed, 1 unreadable file or damaged chunk, 2 bad arguments.\n",
	.run = cat_run,
};
