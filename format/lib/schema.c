/* SPDX-License-Identifier: MIT */
/*
 * schema.c - the built-in event types (expanded from format/lib/sttrace_events.h),
 * generic field access, and the schema chunk encoding.
 */
#include <stddef.h>
#include <stdlib.h>

#include "internal.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The common header, first in every type's field list. */
#define ST_HEADER_FIELD(name, ftype, doc) \
	{ #name, offsetof(struct st_event_header, name), \
	  sizeof(((struct st_event_header *)0)->name), \
	  sizeof(((struct st_event_header *)0)->name), ftype, doc },
#define ST_HEADER_FIELDS \
	ST_HEADER_FIELD(type, ST_FT_UINT, "event type id") \
	ST_HEADER_FIELD(size, ST_FT_UINT, "record size in bytes, header included") \
	ST_HEADER_FIELD(cpu, ST_FT_UINT, "CPU the event fired on") \
	ST_HEADER_FIELD(ts, ST_FT_NS, "event clock (CLOCK_MONOTONIC) nanoseconds") \
	ST_HEADER_FIELD(pid, ST_FT_UINT, "thread group id") \
	ST_HEADER_FIELD(tid, ST_FT_UINT, "thread id")

/*
 * Payload fields of the record struct named by ST_REC (defined around each
 * table below, since the field list macros do not carry the payload name).
 */
#define ST_SCALAR(ctype, name, ftype, doc) \
	{ #name, offsetof(ST_REC, p.name), sizeof(ctype), sizeof(ctype), ftype, doc },
#define ST_ARRAY(ctype, name, n, ftype, doc) \
	{ #name, offsetof(ST_REC, p.name), sizeof(ctype) * (n), sizeof(ctype), ftype, doc },

/* Sum of the declared field sizes: equal to the struct size means no padding. */
#define ST_SUM_SCALAR(ctype, name, ftype, doc) + sizeof(ctype)
#define ST_SUM_ARRAY(ctype, name, n, ftype, doc) + sizeof(ctype) * (n)

#define ST_FIELD_TABLE(payload)							\
	_Static_assert(sizeof(struct st_ev_##payload) % 8 == 0,			\
		       "record size of " #payload " is not a multiple of 8");	\
	_Static_assert(sizeof(struct st_##payload) ==				\
		       0 st_fields_##payload(ST_SUM_SCALAR, ST_SUM_ARRAY),	\
		       "payload " #payload " has implicit padding");		\
	static const struct st_field fields_##payload[] = {			\
		ST_HEADER_FIELDS st_fields_##payload(ST_SCALAR, ST_ARRAY)	\
	}

#define ST_REC struct st_ev_block_bio
ST_FIELD_TABLE(block_bio);
#undef ST_REC
#define ST_REC struct st_ev_block_split
ST_FIELD_TABLE(block_split);
#undef ST_REC
#define ST_REC struct st_ev_block_rq
ST_FIELD_TABLE(block_rq);
#undef ST_REC
#define ST_REC struct st_ev_block_rq_issue
ST_FIELD_TABLE(block_rq_issue);
#undef ST_REC
#define ST_REC struct st_ev_block_rq_complete
ST_FIELD_TABLE(block_rq_complete);
#undef ST_REC
#define ST_REC struct st_ev_block_rq_complete_compact
ST_FIELD_TABLE(block_rq_complete_compact);
#undef ST_REC
#define ST_REC struct st_ev_block_rq_issue_stamped
ST_FIELD_TABLE(block_rq_issue_stamped);
#undef ST_REC
#define ST_REC struct st_ev_block_rq_inode
ST_FIELD_TABLE(block_rq_inode);
#undef ST_REC
#define ST_REC struct st_ev_sys_enter
ST_FIELD_TABLE(sys_enter);
#undef ST_REC
#define ST_REC struct st_ev_sys_enter_io_uring_enter
ST_FIELD_TABLE(sys_enter_io_uring_enter);
#undef ST_REC
#define ST_REC struct st_ev_sys_enter_openat
ST_FIELD_TABLE(sys_enter_openat);
#undef ST_REC
#define ST_REC struct st_ev_sys_exit
ST_FIELD_TABLE(sys_exit);
#undef ST_REC
#define ST_REC struct st_ev_sys_exit_openat
ST_FIELD_TABLE(sys_exit_openat);
#undef ST_REC
#define ST_REC struct st_ev_fs_io
ST_FIELD_TABLE(fs_io);
#undef ST_REC
#define ST_REC struct st_ev_uring
ST_FIELD_TABLE(uring);
#undef ST_REC
#define ST_REC struct st_ev_task
ST_FIELD_TABLE(task);
#undef ST_REC
#define ST_REC struct st_ev_sched_switch
ST_FIELD_TABLE(sched_switch);
#undef ST_REC
#define ST_REC struct st_ev_sched_wakeup
ST_FIELD_TABLE(sched_wakeup);
#undef ST_REC
#define ST_REC struct st_ev_lock_contention
ST_FIELD_TABLE(lock_contention);
#undef ST_REC
#define ST_REC struct st_ev_dirty_pause
ST_FIELD_TABLE(dirty_pause);
#undef ST_REC
#define ST_REC struct st_ev_reclaim
ST_FIELD_TABLE(reclaim);
#undef ST_REC
#define ST_REC struct st_ev_page_cache
ST_FIELD_TABLE(page_cache);
#undef ST_REC
#define ST_REC struct st_ev_block_bio_held
ST_FIELD_TABLE(block_bio_held);
#undef ST_REC
#define ST_REC struct st_ev_svc_run_delay
ST_FIELD_TABLE(svc_run_delay);
#undef ST_REC
#define ST_REC struct st_ev_block_rq_cgroup
ST_FIELD_TABLE(block_rq_cgroup);
#undef ST_REC

_Static_assert(sizeof(struct st_event_header) == 24, "event header is 24 bytes");

#define ST_BUILTIN_TYPE(id, name, payload) \
	{ id, sizeof(struct st_ev_##payload), #name, ARRAY_SIZE(fields_##payload), fields_##payload },

/* In ascending id order (ST_EVENT_TYPES lists them so), for binary search. */
static const struct st_type builtin_types[] = { ST_EVENT_TYPES(ST_BUILTIN_TYPE) };

const struct st_type *st_builtin_types(size_t *count)
{
	*count = ARRAY_SIZE(builtin_types);
	return builtin_types;
}

const struct st_type *st_builtin_type(uint16_t id)
{
	size_t lo = 0, hi = ARRAY_SIZE(builtin_types);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (builtin_types[mid].id == id)
			return &builtin_types[mid];
		if (builtin_types[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct st_field *st_field_find(const struct st_type *t, const char *name)
{
	for (uint16_t i = 0; i < t->nfields; i++)
		if (!strcmp(t->fields[i].name, name))
			return &t->fields[i];
	return NULL;
}

/* Element i of a field as raw unsigned bits; 0 past the end of an array. */
static uint64_t field_bits(const void *rec, const struct st_field *f, unsigned i)
{
	const uint8_t *p = (const uint8_t *)rec + f->offset + (size_t)i * f->elem_size;

	if ((size_t)(i + 1) * f->elem_size > f->size)
		return 0;
	switch (f->elem_size) {
	case 1: return *p;
	case 2: return st_ld16(p);
	case 4: return st_ld32(p);
	case 8: return st_ld64(p);
	default: return 0;
	}
}

uint64_t st_field_u64(const void *rec, const struct st_field *f, unsigned i)
{
	return field_bits(rec, f, i);
}

int64_t st_field_i64(const void *rec, const struct st_field *f, unsigned i)
{
	uint64_t v = field_bits(rec, f, i);
	unsigned shift = 64 - 8 * (f->elem_size ? f->elem_size : 8);

	if (f->elem_size >= 8 || f->elem_size == 0)
		return (int64_t)v;
	return (int64_t)(v << shift) >> shift;
}

size_t st_field_str(const void *rec, const struct st_field *f, char *dst, size_t cap)
{
	const char *src = (const char *)rec + f->offset;
	size_t n = 0;

	if (!cap)
		return 0;
	while (n < f->size && n + 1 < cap && src[n])
		n++;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return n;
}

static int field_check(const struct st_field *f, uint16_t rec_size, const char **why)
{
	if (!f->name || !f->name[0])
		return *why = "field without a name", ST_EFORMAT;
	if (f->elem_size != 1 && f->elem_size != 2 && f->elem_size != 4 && f->elem_size != 8)
		return *why = "field element size is not 1, 2, 4 or 8", ST_EFORMAT;
	if (!f->size || f->size % f->elem_size)
		return *why = "field size is not a multiple of its element size", ST_EFORMAT;
	if (f->type == ST_FT_STR && f->elem_size != 1)
		return *why = "string field with elements of more than one byte", ST_EFORMAT;
	if ((uint32_t)f->offset + f->size > rec_size)
		return *why = "field extends past the record", ST_EFORMAT;
	return 0;
}

/* The first six fields describe the common record header, as it is (spec 5.2). */
static int header_check(const struct st_type *t, const char **why)
{
	static const struct st_field header[] = { ST_HEADER_FIELDS };

	if (t->nfields < ARRAY_SIZE(header))
		return *why = "fewer fields than the six of the record header", ST_EFORMAT;
	for (size_t i = 0; i < ARRAY_SIZE(header); i++) {
		const struct st_field *f = &t->fields[i];

		if (strcmp(f->name, header[i].name) || f->offset != header[i].offset ||
		    f->size != header[i].size || f->elem_size != header[i].elem_size)
			return *why = "first six fields are not the record header (type size cpu ts pid tid)",
			       ST_EFORMAT;
	}
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether n names (sorted in place) hold one twice. */
static int names_repeat(const char **names, size_t n)
{
	qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(names[i - 1], names[i]))
			return 1;
	return 0;
}

int st_type_check(const struct st_type *t, const char **why)
{
	int err;

	if (!t->id)
		return *why = "type id 0", ST_EFORMAT;
	if (!t->name || !t->name[0])
		return *why = "type without a name", ST_EFORMAT;
	if (t->size < ST_EVENT_HEADER_SIZE || t->size % 8)
		return *why = "record size is not a multiple of 8 of at least 24", ST_EFORMAT;
	if (t->nfields > ST_MAX_FIELDS || (t->nfields && !t->fields))
		return *why = "bad field count", ST_EFORMAT;
	const char *names[ST_MAX_FIELDS];

	for (uint16_t i = 0; i < t->nfields; i++) {
		err = field_check(&t->fields[i], t->size, why);
		if (err)
			return err;
		names[i] = t->fields[i].name;
	}
	if (names_repeat(names, t->nfields))
		return *why = "two fields of the same name", ST_EFORMAT;
	return header_check(t, why);
}

static char *dup_str(const char *s)
{
	return strdup(s ? s : "");
}

void st_type_free(struct st_type *t)
{
	struct st_field *fields = (struct st_field *)t->fields;

	for (uint16_t i = 0; fields && i < t->nfields; i++) {
		free((char *)fields[i].name);
		free((char *)fields[i].doc);
	}
	free(fields);
	free((char *)t->name);
	memset(t, 0, sizeof(*t));
}

int st_type_copy(struct st_type *dst, const struct st_type *src)
{
	struct st_field *fields = calloc(src->nfields ? src->nfields : 1, sizeof(*fields));

	*dst = *src;
	dst->fields = fields;
	dst->name = dup_str(src->name);
	if (!fields || !dst->name)
		goto oom;
	for (uint16_t i = 0; i < src->nfields; i++) {
		fields[i] = src->fields[i];
		fields[i].name = dup_str(src->fields[i].name);
		fields[i].doc = dup_str(src->fields[i].doc);
		if (!fields[i].name || !fields[i].doc) {
			dst->nfields = i + 1;
			goto oom;
		}
	}
	return 0;
oom:
	st_type_free(dst);
	return ST_ENOMEM;
}

/*
 * Schema payload: ntypes:u32 reserved:u32, then per type
 * id:u16 size:u16 nfields:u16 name_len:u16 name, then per field
 * offset:u16 size:u16 elem_size:u8 type:u8 name_len:u16 doc_len:u16 name doc.
 */
static int put_str(struct st_bytes *out, const char *s, size_t len)
{
	uint8_t *p = st_bytes_put(out, len);

	if (!p)
		return ST_ENOMEM;
	memcpy(p, s, len);
	return 0;
}

static int encode_field(struct st_bytes *out, const struct st_field *f)
{
	size_t nlen = strlen(f->name), dlen = f->doc ? strlen(f->doc) : 0;
	uint8_t *p = st_bytes_put(out, ST_SCHEMA_FIELD_SIZE);

	if (!p || nlen > ST_MAX_NAME || dlen > ST_MAX_NAME)
		return p ? ST_EINVAL : ST_ENOMEM;
	st_st16(p, f->offset);
	st_st16(p + 2, f->size);
	p[4] = f->elem_size;
	p[5] = f->type;
	st_st16(p + 6, (uint16_t)nlen);
	st_st16(p + 8, (uint16_t)dlen);
	if (put_str(out, f->name, nlen))
		return ST_ENOMEM;
	return put_str(out, f->doc ? f->doc : "", dlen);
}

static int encode_type(struct st_bytes *out, const struct st_type *t)
{
	size_t nlen = strlen(t->name);
	uint8_t *p = st_bytes_put(out, ST_SCHEMA_TYPE_SIZE);
	int err;

	if (!p || nlen > ST_MAX_NAME)
		return p ? ST_EINVAL : ST_ENOMEM;
	st_st16(p, t->id);
	st_st16(p + 2, t->size);
	st_st16(p + 4, t->nfields);
	st_st16(p + 6, (uint16_t)nlen);
	err = put_str(out, t->name, nlen);
	for (uint16_t i = 0; !err && i < t->nfields; i++)
		err = encode_field(out, &t->fields[i]);
	return err;
}

int st_schema_encode(struct st_bytes *out, const struct st_type *types, size_t n)
{
	uint8_t *p = st_bytes_put(out, 8);
	int err = 0;

	if (!p)
		return ST_ENOMEM;
	st_st32(p, (uint32_t)n);
	st_st32(p + 4, 0);
	for (size_t i = 0; !err && i < n; i++)
		err = encode_type(out, &types[i]);
	return err;
}

/* A length-prefixed string of the payload as a new NUL-terminated string. */
static char *take_str(struct st_span *s, size_t len)
{
	const uint8_t *p = st_take(s, len);

	return p ? st_str_dup(p, len) : NULL;
}

static int decode_field(struct st_span *s, struct st_field *f)
{
	const uint8_t *p = st_take(s, ST_SCHEMA_FIELD_SIZE);

	if (!p)
		return ST_EFORMAT;
	f->offset = st_ld16(p);
	f->size = st_ld16(p + 2);
	f->elem_size = p[4];
	f->type = p[5];
	f->name = take_str(s, st_ld16(p + 6));
	if (!f->name)
		return ST_EFORMAT;
	f->doc = take_str(s, st_ld16(p + 8));
	return f->doc ? 0 : ST_EFORMAT;
}

static int decode_type(struct st_span *s, struct st_type *t, const char **why)
{
	const uint8_t *p = st_take(s, ST_SCHEMA_TYPE_SIZE);
	struct st_field *fields;
	uint16_t nfields;
	int err = 0;

	*why = "schema entry cut short";
	if (!p)
		return ST_EFORMAT;
	t->id = st_ld16(p);
	t->size = st_ld16(p + 2);
	nfields = st_ld16(p + 4);
	t->name = take_str(s, st_ld16(p + 6));
	if (!t->name || nfields > ST_MAX_FIELDS || nfields > s->left / ST_SCHEMA_FIELD_SIZE)
		return ST_EFORMAT;
	fields = calloc(nfields ? nfields : 1, sizeof(*fields));
	if (!fields)
		return ST_ENOMEM;
	t->fields = fields;
	for (uint16_t i = 0; !err && i < nfields; i++) {
		t->nfields = i + 1;
		err = decode_field(s, &fields[i]);
	}
	t->nfields = nfields;
	return err ? err : st_type_check(t, why);
}

/* ST_EFORMAT when two types share a name, ST_ENOMEM, or 0. */
static int duplicate_name(const struct st_type *types, size_t n)
{
	const char **names = malloc((n ? n : 1) * sizeof(*names));
	int dup;

	if (!names)
		return ST_ENOMEM;
	for (size_t i = 0; i < n; i++)
		names[i] = types[i].name;
	dup = names_repeat(names, n);
	free(names);
	return dup ? ST_EFORMAT : 0;
}

static int duplicate_id(const struct st_type *types, size_t n)
{
	uint8_t *seen = calloc(ST_NUM_TYPE_IDS / 8, 1);
	int dup = 0;

	if (!seen)
		return ST_ENOMEM;
	for (size_t i = 0; i < n && !dup; i++) {
		dup = seen[types[i].id / 8] & (1u << (types[i].id % 8));
		seen[types[i].id / 8] |= (uint8_t)(1u << (types[i].id % 8));
	}
	free(seen);
	return dup ? ST_EFORMAT : 0;
}

int st_schema_decode(const uint8_t *p, size_t len, struct st_type **types, size_t *n,
		     const char **why)
{
	struct st_span s = { p, len };
	const uint8_t *head = st_take(&s, 8);
	struct st_type *t;
	uint32_t count;
	int err = 0;

	*why = "schema cut short";
	if (!head)
		return ST_EFORMAT;
	count = st_ld32(head);
	if (count > s.left / ST_SCHEMA_TYPE_SIZE)
		return ST_EFORMAT;
	t = calloc(count ? count : 1, sizeof(*t));
	if (!t)
		return ST_ENOMEM;
	for (uint32_t i = 0; !err && i < count; i++)
		err = decode_type(&s, &t[i], why);
	if (!err && s.left)
		err = (*why = "bytes after the last schema entry", ST_EFORMAT);
	if (!err && (err = duplicate_id(t, count)) == ST_EFORMAT)
		*why = "type id declared twice";
	if (!err && (err = duplicate_name(t, count)) == ST_EFORMAT)
		*why = "type name declared twice";
	if (err) {
		for (uint32_t i = 0; i < count; i++)
			st_type_free(&t[i]);
		free(t);
		return err;
	}
	*types = t;
	*n = count;
	return 0;
}
