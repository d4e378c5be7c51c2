/* SPDX-License-Identifier: MIT */
/*
 * st_format_anonymize.c - `st-format anonymize`: a copy of a trace that can
 * be shared, with every identifying string replaced by a token and every
 * number kept.
 *
 * A token is a prefix naming what the string was and the first bytes of
 * HMAC-SHA256(salt, string) in hex, so one string always becomes one token
 * within a file (and across files anonymized with the same --salt), and
 * grouping by command or file gives the same numbers as before. Without a
 * salt from the user a random one is used and forgotten: the tokens of two
 * files then cannot be linked, and no dictionary of likely names can be
 * hashed to undo them.
 *
 * What becomes a token: in the metadata, host.name, every word of
 * command_line, every string of options, the names of pid.*, the paths of
 * fd.* and inode.*, the model of dev.*, and the value of any key this build
 * does not know that is not a number; in the events, every string field
 * (types unknown to this build too, from the file's schema): `comm` fields
 * as command names, the others as paths. Device names, versions, the CPU
 * count, clocks and every event number stay as they are. The events are
 * copied chunk by chunk, in file order.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "format/st-format/st_format.h"

enum anon_kind { AK_COMM, AK_PATH, AK_HOST, AK_ARG, AK_OTHER, AK_COUNT };

static const struct {
	const char *prefix;
	unsigned hex;		/* hex digits of the HMAC: 48 bits fit a 16-byte comm */
	const char *keep_name;	/* --keep NAME, NULL: never kept */
} kinds[AK_COUNT] = {
	[AK_COMM] = { "c", 12, "comm" },
	[AK_PATH] = { "/anon/", 16, "path" },
	[AK_HOST] = { "host-", 16, "host" },
	[AK_ARG] = { "arg-", 12, NULL },
	[AK_OTHER] = { "s-", 16, NULL },
};

struct anon {
	unsigned char salt[64];
	size_t salt_len;
	unsigned keep;		/* bit per enum anon_kind */
	char *scratch;		/* a record being rewritten */
};

/* The token of s[0..len) into out (at most cap bytes with the NUL). */
static void token(const struct anon *a, enum anon_kind k, const char *s, size_t len, char *out,
		  size_t cap)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	size_t n;

	if (a->keep & 1u << k || !len) {
		n = len < cap - 1 ? len : cap - 1;
		memcpy(out, s, n);
		out[n] = 0;
		return;
	}
	HMAC(EVP_sha256(), a->salt, (int)a->salt_len, (const unsigned char *)s, len, md, &mdlen);
	n = (size_t)snprintf(out, cap, "%s", kinds[k].prefix);
	for (unsigned i = 0; i < kinds[k].hex / 2 && n + 2 < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, "%02x", md[i]);
}

/* ---- Metadata ---------------------------------------------------------------------- */

/* The token of a JSON string under key (a command name under "comm", else a path). */
static struct json_object *anon_json_string(const struct anon *a, struct json_object *v,
					    const char *key)
{
	const char *s = json_object_get_string(v);
	char tok[64];

	token(a, !strcmp(key, "comm") ? AK_COMM : AK_PATH, s, strlen(s), tok, sizeof(tok));
	return json_object_new_string(tok);
}

/* Every string of a JSON value a token, in place; key is the value's own key. */
static void anon_json(const struct anon *a, struct json_object *o, const char *key)
{
	switch (json_object_get_type(o)) {
	case json_type_object:
		json_object_object_foreach(o, k, v) {
			if (json_object_is_type(v, json_type_string))
				json_object_object_add(o, k, anon_json_string(a, v, k));
			else
				anon_json(a, v, k);
		}
		break;
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			struct json_object *v = json_object_array_get_idx(o, i);

			if (json_object_is_type(v, json_type_string))
				json_object_array_put_idx(o, i, anon_json_string(a, v, key));
			else
				anon_json(a, v, key);
		}
		break;
	default:
		break;
	}
}

static int is_number(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!isdigit((unsigned char)*s))
		return 0;
	while (isdigit((unsigned char)*s))
		s++;
	return !*s;
}

/* Every space-separated word of s a token of kind k, into out (cap bytes). */
static void anon_words(const struct anon *a, enum anon_kind k, const char *s, char *out, size_t cap)
{
	size_t n = 0;

	out[0] = 0;
	while (*s && n + 1 < cap) {
		size_t len = strcspn(s, " ");

		if (len) {
			token(a, k, s, len, out + n, cap - n);
			n += strlen(out + n);
		}
		s += len;
		if (*s && n + 1 < cap) {
			out[n++] = *s++;
			out[n] = 0;
		}
	}
}

/* dev.M:N = name=...;model=...: the model a token, the rest kept. */
static void anon_dev(const struct anon *a, const char *v, char *out, size_t cap)
{
	const char *m = strstr(v, "model=");
	size_t head, len;

	if (!m) {
		snprintf(out, cap, "%s", v);
		return;
	}
	head = (size_t)(m - v) + 6;
	len = strcspn(m + 6, ";");
	snprintf(out, cap, "%.*s", (int)head, v);
	if (head < cap)
		token(a, AK_OTHER, m + 6, len, out + head, cap - head);
	snprintf(out + strlen(out), cap - strlen(out), "%s", m + 6 + len);
}

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The anonymized value of one metadata key into out; NULL: keep it as is. */
static const char *anon_meta(const struct anon *a, const char *key, const char *v, char *out,
			     size_t cap)
{
	static const char *const kept[] = { "tool", "kernel.release", "cpu.count",
					    "clock.", "record.", "format." };
	struct json_object *o;

	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (starts(key, kept[i]))
			return NULL;
	if (!strcmp(key, "host.name"))
		token(a, AK_HOST, v, strlen(v), out, cap);
	else if (!strcmp(key, "command_line"))
		anon_words(a, AK_ARG, v, out, cap);
	else if (starts(key, "pid."))
		token(a, AK_COMM, v, strlen(v), out, cap);
	else if (starts(key, "fd.") || starts(key, "inode."))
		token(a, AK_PATH, v, strlen(v), out, cap);
	else if (starts(key, "dev."))
		anon_dev(a, v, out, cap);
	else if (!strcmp(key, "options") && (o = json_tokener_parse(v))) {
		anon_json(a, o, "");
		snprintf(out, cap, "%s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else if (is_number(v))
		return NULL;
	else
		token(a, AK_OTHER, v, strlen(v), out, cap);
	return out;
}

static void anon_all_meta(const struct anon *a, struct st_reader *r, struct st_writer *w)
{
	const char *key, *value;
	char *out = malloc(1 << 20);

	for (size_t i = 0; out && st_meta_at(r, i, &key, &value) == 0; i++)
		if (anon_meta(a, key, value, out, 1 << 20))
			st_writer_set_meta(w, key, out);
	free(out);
}

/* ---- Events ------------------------------------------------------------------------ */

/* The string fields of each type of the file; NULL for a type without any. */
struct str_fields {
	unsigned n;
	const struct st_field *f[];
};

static int type_strings(const struct st_reader *r, struct str_fields **by_id)
{
	for (size_t i = 0; i < st_type_count(r); i++) {
		const struct st_type *t = st_type_at(r, i);
		struct str_fields *sf;
		unsigned n = 0;

		for (unsigned k = 0; k < t->nfields; k++)
			n += t->fields[k].type == ST_FT_STR;
		if (!n)
			continue;
		sf = malloc(sizeof(*sf) + n * sizeof(sf->f[0]));
		if (!sf)
			return -1;
		sf->n = 0;
		for (unsigned k = 0; k < t->nfields; k++)
			if (t->fields[k].type == ST_FT_STR)
				sf->f[sf->n++] = &t->fields[k];
		by_id[t->id] = sf;
	}
	return 0;
}

/* A copy of rec in a->scratch with its string fields tokens. */
static const void *anon_record(const struct anon *a, const struct st_event_header *rec,
			       const struct str_fields *sf)
{
	char tok[64];

	memcpy(a->scratch, rec, rec->size);
	for (unsigned i = 0; i < sf->n; i++) {
		const struct st_field *f = sf->f[i];
		char *dst = a->scratch + f->offset;

		if ((size_t)f->offset + f->size > rec->size)
			continue;
		token(a, !strcmp(f->name, "comm") ? AK_COMM : AK_PATH, dst, strnlen(dst, f->size),
		      tok, f->size < sizeof(tok) ? f->size : sizeof(tok));
		memset(dst, 0, f->size);
		memcpy(dst, tok, strlen(tok));
	}
	return a->scratch;
}

static int anon_events(const struct anon *a, const char *in, struct st_reader *r,
		       struct st_writer *w)
{
	struct str_fields **by_id = calloc(1u << 16, sizeof(*by_id));
	struct st_chunk_buf buf = { 0 };
	int rc = SF_OK;

	if (!by_id || type_strings(r, by_id))
		rc = sf_error(in, "out of memory");
	for (size_t i = 0; i < st_chunk_count(r) && !rc; i++) {
		const struct st_event_header *ev;
		size_t pos = 0;

		if (st_chunk_at(r, i)->kind != ST_CHUNK_EVENTS)
			continue;
		if (st_chunk_decode(r, i, &buf)) {
			rc = sf_error(in, "%s", st_reader_errmsg(r));
			break;
		}
		while (st_chunk_next(&buf, &pos, &ev) > 0) {
			const struct str_fields *sf = by_id[ev->type];

			st_writer_append(w, sf ? anon_record(a, ev, sf) : ev, ev->size);
		}
	}
	st_chunk_buf_free(&buf);
	for (size_t id = 0; by_id && id < (1u << 16); id++)
		free(by_id[id]);
	free(by_id);
	return rc;
}

/* ---- Command ----------------------------------------------------------------------- */

static int parse_keep(struct anon *a, char *list)
{
	for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		unsigned k;

		for (k = 0; k < AK_COUNT; k++)
			if (kinds[k].keep_name && !strcmp(name, kinds[k].keep_name))
				break;
		if (k == AK_COUNT)
			return sf_usage(&sf_cmd_anonymize, "unknown '%s' for --keep (comm, path, host)",
					name);
		a->keep |= 1u << k;
	}
	return SF_OK;
}

static int anonymize_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "keep", required_argument, NULL, 'k' },
		{ "salt", required_argument, NULL, 's' },
		{ "level", required_argument, NULL, 'z' },
		{ "force", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct sf_args args = { 0 };
	struct anon a = { 0 };
	const char *salt = NULL;
	struct st_reader *r;
	struct st_writer *w;
	int c, rc;

	while ((c = sf_getopt(&sf_cmd_anonymize, argc, argv, ":ho:k:s:z:", longopts)) != -1) {
		switch (c) {
		case 'o':
			args.out = optarg;
			break;
		case 'k':
			if (parse_keep(&a, optarg))
				return SF_USAGE;
			break;
		case 's':
			salt = optarg;
			break;
		case 'z':
			if (sf_parse_level(&sf_cmd_anonymize, optarg, &args.level))
				return SF_USAGE;
			break;
		case 'F':
			args.force = 1;
			break;
		case 'h':
			return SF_OK;
		default:
			return SF_USAGE;
		}
	}
	if (sf_positional(&sf_cmd_anonymize, argc, argv, 1, "FILE"))
		return SF_USAGE;
	args.in = argv[optind];
	if (!args.out)
		return sf_usage(&sf_cmd_anonymize, "missing -o OUT");
	if (salt && !*salt)
		return sf_usage(&sf_cmd_anonymize, "empty --salt");
	if (salt) {
		a.salt_len = strlen(salt) < sizeof(a.salt) ? strlen(salt) : sizeof(a.salt);
		memcpy(a.salt, salt, a.salt_len);
	} else {
		a.salt_len = 32;
		if (getrandom(a.salt, a.salt_len, 0) != (ssize_t)a.salt_len)
			return sf_error("getrandom", "no random salt: %m");
	}
	a.scratch = malloc(UINT16_MAX + 1);
	if (!a.scratch)
		return sf_error(args.out, "out of memory");
	rc = sf_open(args.in, 0, &r);
	if (!rc) {
		rc = sf_copy_open(&args, r, &w);
		if (!rc) {
			anon_all_meta(&a, r, w);
			rc = anon_events(&a, args.in, r, w);
			if (sf_copy_close(w, args.out) && !rc)
				rc = SF_BAD;
		}
		st_reader_close(r);
	}
	free(a.scratch);
	return rc;
}

const struct sf_cmd sf_cmd_anonymize = {
	.name = "anonymize",
	.summary = "a copy to share: names, paths, host and arguments as salted tokens",
	.help =
	"Usage: st-format anonymize FILE -o OUT [--keep comm,path,host] [--salt S] [-z LEVEL] [--force]\n"
	"Write a copy of a trace in which every identifying string is a stable\n"
	"token and every number is kept, so the copy verifies and analyzes like\n"
	"the original (--by comm and --by file group the same I/Os).\n\n"
	"  Tokens: host.name, the words of command_line, the strings of options,\n"
	"  command names (pid.* and comm fields: cXXXXXXXXXXXX), paths (fd.*,\n"
	"  inode.* and other string fields: /anon/XXXXXXXXXXXXXXXX), device\n"
	"  models, and unknown keys whose value is not a number. XXX is the hex of\n"
	"  HMAC-SHA256(salt, string): one string, one token.\n\n"
	"  -o, --output OUT   the copy\n"
	"  --keep KINDS       leave these kinds of strings as they are: comm, path,\n"
	"                     host, comma-separated\n"
	"  --salt S           the HMAC key, so files anonymized with the same S share\n"
	"                     tokens; default: a random salt, not stored\n"
	"  -z, --level LEVEL  zstd level of the copy (default 1)\n"
	SF_FORCE_HELP
	"  -h, --help         this text\n\n"
	"Exit status: 0 written, 1 unreadable or damaged trace, 2 bad arguments.\n",
	.run = anonymize_run,
};
