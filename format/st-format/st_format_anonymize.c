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
 * as command names, the others as paths. Addresses become tokens of their
 * own size (kernel pointers such as rq, bio and skaddr, which identify
 * kernel objects and give away the kernel's layout, and network addresses
 * such as saddr; and any 64-bit number in the kernel's half of the address
 * space, kernel_address()): one value, one token in every field, so the correlation
 * that pairs a request's issue with its completion pairs them still, and 0
 * ("none") stays 0. Every byte of a record that no field of its type covers
 * is zeroed: padding inside a tracepoint's entry holds stale kernel bytes,
 * and an older recorder left an earlier record's bytes in a record's tail.
 * Device names, versions, the CPU count, clocks and every other event
 * number stay as they are. The events are copied chunk by chunk, in file
 * order.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "analyze/lib/idmap.h"
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

/* Tokens of the addresses seen, by their size in bytes (1..8): HMAC-SHA256 costs 5 us. */
struct addr_tokens {
	struct an_idmap at[9];	/* address -> index in tokens */
	uint64_t *tokens;
	uint32_t n, cap;
	int failed;		/* out of memory: addresses are tokens still, made each time */
};

struct anon {
	unsigned char salt[64];
	size_t salt_len;
	unsigned keep;		/* bit per enum anon_kind */
	char *scratch;		/* a record being rewritten */
	struct addr_tokens addrs;
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

/* The token of the len-byte address at p, computed. */
static void address_hmac(const struct anon *a, unsigned char *p, size_t len)
{
	static const char tag[] = "address:";
	unsigned char msg[sizeof(tag) + 64], md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	size_t i;

	memcpy(msg, tag, sizeof(tag));
	memcpy(msg + sizeof(tag), p, len);
	HMAC(EVP_sha256(), a->salt, (int)a->salt_len, msg, sizeof(tag) + len, md, &mdlen);
	memcpy(p, md, len);
	if (len == 8)	/* nor in the kernel's half, where only addresses are */
		p[7] &= 0x7f;
	for (i = 0; i < len && !p[i]; i++)
		;
	if (i == len)	/* a token is never 0, which means "none" */
		p[0] = 1;
}

/*
 * The len-byte address at p (at most 64 bytes) replaced by its token in
 * place; an address whose bytes are all 0 ("none") stays as it is.
 */
static void anon_address(struct anon *a, unsigned char *p, size_t len)
{
	struct addr_tokens *t = &a->addrs;
	uint64_t v = 0, tok = 0;
	uint32_t i;

	for (i = 0; i < len && !p[i]; i++)
		;
	if (i == len)
		return;
	if (len > 8 || t->failed) {
		address_hmac(a, p, len);
		return;
	}
	memcpy(&v, p, len);
	if (!t->at[len].keys && an_idmap_init(&t->at[len], 1024))
		t->failed = 1;
	i = t->failed ? AN_NONE : an_idmap_get(&t->at[len], v);
	if (i != AN_NONE) {
		memcpy(p, &t->tokens[i], len);
		return;
	}
	address_hmac(a, p, len);
	if (t->failed)
		return;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 1024;
		uint64_t *tokens = realloc(t->tokens, cap * sizeof(*tokens));

		if (!tokens) {
			t->failed = 1;
			return;
		}
		t->tokens = tokens;
		t->cap = cap;
	}
	memcpy(&tok, p, len);
	t->tokens[t->n] = tok;
	if (an_idmap_put(&t->at[len], v, t->n++))
		t->failed = 1;
}

static void addr_tokens_free(struct addr_tokens *t)
{
	for (size_t len = 0; len < sizeof(t->at) / sizeof(t->at[0]); len++)
		if (t->at[len].keys)
			an_idmap_free(&t->at[len]);
	free(t->tokens);
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
static const char *anon_meta(struct anon *a, const char *key, const char *v, char *out,
			     size_t cap)
{
	static const char *const kept[] = { "tool", "kernel.release", "cpu.count",
					    "clock.", "record.", "format." };
	struct json_object *o;

	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (starts(key, kept[i]))
			return NULL;
	if (!strcmp(key, "trigger.rq")) {	/* the request of a flight dump, as its events show it */
		uint64_t rq = strtoull(v, NULL, 16);

		anon_address(a, (unsigned char *)&rq, sizeof(rq));
		snprintf(out, cap, "0x%" PRIx64, rq);
	} else if (!strcmp(key, "host.name"))
		token(a, AK_HOST, v, strlen(v), out, cap);
	else if (!strcmp(key, "command_line"))
		anon_words(a, AK_ARG, v, out, cap);
	else if (starts(key, "pid."))
		token(a, AK_COMM, v, strlen(v), out, cap);
	else if (starts(key, "fd.") || starts(key, "inode.") || starts(key, "cgroup."))
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

static void anon_all_meta(struct anon *a, struct st_reader *r, struct st_writer *w)
{
	const char *key, *value;
	char *out = malloc(1 << 20);

	for (size_t i = 0; out && st_meta_at(r, i, &key, &value) == 0; i++)
		if (anon_meta(a, key, value, out, 1 << 20))
			st_writer_set_meta(w, key, out);
	free(out);
}

/* ---- Events ------------------------------------------------------------------------ */

/*
 * A field holding an address: a built-in type's identities of kernel objects
 * (by name), a generic tracepoint's pointer (its doc is the C declaration,
 * "const void * skaddr"), and any field named for an address (saddr,
 * daddr_v6, skaddr).
 */
static int is_address(const struct st_type *t, const struct st_field *f)
{
	static const char *const identities[] = { "rq", "bio", "bios", "parent", "ctx", "req" };

	if (f->type == ST_FT_STR)
		return 0;
	if (strstr(f->name, "addr"))
		return 1;
	if (f->type != ST_FT_HEX)
		return 0;
	if (strchr(t->name, ':'))
		return f->doc && strchr(f->doc, '*');
	for (size_t i = 0; i < sizeof(identities) / sizeof(identities[0]); i++)
		if (f->elem_size == 8 && !strcmp(f->name, identities[i]))
			return 1;
	return 0;
}

/*
 * A 64-bit number in the kernel's half of the address space is a kernel
 * address whatever its field is declared as (a generic tracepoint's
 * `unsigned long ip`, as ext4_mark_inode_dirty has, is the caller's text
 * address and gives away the kernel's base): the half starts at
 * 0xff00000000000000 on x86-64 with 5-level paging, higher with 4 levels
 * (0xffff800000000000) and on arm64. The top page, -4095 .. -1, is error
 * numbers and "none", not addresses.
 */
#define KERNEL_HALF	0xff00000000000000ull
#define ERROR_VALUES	4096u

static int kernel_address(uint64_t v)
{
	return v >= KERNEL_HALF && v <= UINT64_MAX - ERROR_VALUES;
}

/* What is rewritten in the records of one type of the file. */
struct type_plan {
	uint16_t size;		/* the type's record size */
	unsigned char *keep;	/* size bytes: 0xff where a field covers the byte, else 0 */
	unsigned nstr, naddr, nnum;
	/* strings, addresses, and the other 64-bit numbers (kernel_address()) */
	const struct st_field **str, **addr, **num;
};

static struct type_plan *type_plan(const struct st_type *t)
{
	struct type_plan *tp = calloc(1, sizeof(*tp) + t->size + 3 * t->nfields * sizeof(tp->str[0]));

	if (!tp)
		return NULL;
	tp->size = t->size;
	tp->str = (const struct st_field **)(tp + 1);
	tp->addr = tp->str + t->nfields;
	tp->num = tp->addr + t->nfields;
	tp->keep = (unsigned char *)(tp->num + t->nfields);
	for (unsigned k = 0; k < t->nfields; k++) {
		const struct st_field *f = &t->fields[k];

		if ((size_t)f->offset + f->size > t->size)
			continue;
		memset(tp->keep + f->offset, 0xff, f->size);
		if (f->type == ST_FT_STR)
			tp->str[tp->nstr++] = f;
		else if (is_address(t, f))
			tp->addr[tp->naddr++] = f;
		else if (f->elem_size == 8 && f->offset >= sizeof(struct st_event_header))
			tp->num[tp->nnum++] = f;
	}
	return tp;
}

/* A copy of rec in a->scratch: uncovered bytes 0, strings and addresses tokens. */
static const void *anon_record(struct anon *a, const struct st_event_header *rec,
			       const struct type_plan *tp)
{
	size_t covered = rec->size < tp->size ? rec->size : tp->size;
	unsigned char *rec_bytes = (unsigned char *)a->scratch;
	char tok[64];

	memcpy(a->scratch, rec, rec->size);
	for (size_t i = 0; i < covered; i++)
		rec_bytes[i] &= tp->keep[i];
	memset(rec_bytes + covered, 0, rec->size - covered);
	for (unsigned i = 0; i < tp->nstr; i++) {
		const struct st_field *f = tp->str[i];
		char *dst = a->scratch + f->offset;

		if ((size_t)f->offset + f->size > rec->size)
			continue;
		token(a, !strcmp(f->name, "comm") ? AK_COMM : AK_PATH, dst, strnlen(dst, f->size),
		      tok, f->size < sizeof(tok) ? f->size : sizeof(tok));
		memset(dst, 0, f->size);
		memcpy(dst, tok, strlen(tok));
	}
	for (unsigned i = 0; i < tp->naddr; i++) {
		const struct st_field *f = tp->addr[i];
		/*
		 * An array of bytes is one address (saddr_v6), in pieces of 64 bytes
		 * at most; wider elements are one each (bios[]).
		 */
		size_t unit = f->elem_size > 1 ? f->elem_size : f->size < 64 ? f->size : 64;

		if ((size_t)f->offset + f->size > rec->size)
			continue;
		for (size_t off = 0; off < f->size; off += unit)
			anon_address(a, rec_bytes + f->offset + off,
				     f->size - off < unit ? f->size - off : unit);
	}
	for (unsigned i = 0; i < tp->nnum; i++) {
		const struct st_field *f = tp->num[i];

		for (size_t off = 0; (size_t)f->offset + off + 8 <= rec->size && off + 8 <= f->size; off += 8) {
			uint64_t v;

			memcpy(&v, rec_bytes + f->offset + off, 8);
			if (kernel_address(v))
				anon_address(a, rec_bytes + f->offset + off, 8);
		}
	}
	return a->scratch;
}

static int anon_events(struct anon *a, const char *in, struct st_reader *r, struct st_writer *w)
{
	struct type_plan **by_id = calloc(1u << 16, sizeof(*by_id));
	struct st_chunk_buf buf = { 0 };
	int rc = SF_OK;

	for (size_t i = 0; by_id && i < st_type_count(r) && !rc; i++) {
		const struct st_type *t = st_type_at(r, i);

		if (!(by_id[t->id] = type_plan(t)))
			rc = SF_BAD;
	}
	if (!by_id || rc)
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
			const struct type_plan *tp = by_id[ev->type];

			st_writer_append(w, tp ? anon_record(a, ev, tp) : ev, ev->size);
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
	addr_tokens_free(&a.addrs);
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
	"  HMAC-SHA256(salt, string): one string, one token. Addresses (kernel\n"
	"  pointers: rq, bio, skaddr, any pointer field, and any 64-bit value in\n"
	"  the kernel's half of the address space whatever its field's type, such\n"
	"  as a tracepoint's ip; network addresses: saddr, daddr...) become tokens\n"
	"  of their size, one per value, so the I/Os correlate as before; a 64-bit\n"
	"  token is never in the kernel's half. Bytes of a record that no field describes\n"
	"  (padding, stale tails) become 0.\n\n"
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
