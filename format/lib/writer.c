/* SPDX-License-Identifier: MIT */
/*
 * writer.c - builds a .sttrace file chunk by chunk.
 *
 * Records are copied into an in-memory events chunk, the open chunk of their
 * lane (cpu % lanes: the recorder hands over per-CPU batches, and one chunk
 * per CPU keeps each chunk in time order, which the cursor walks in place
 * instead of sorting). Sealing a chunk compresses it into one zstd frame (a
 * single reused context), puts the chunk header in front and hands header
 * and payload to the sink in one write, so the file only ever grows by whole
 * chunks. The schema goes out just before the first events chunk; metadata
 * and lost counts that changed go out after each sealed chunk; close adds
 * the index chunk and the trailer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

#include "internal.h"

#define ST_DEFAULT_CHUNK_SIZE	(1u << 20)
/*
 * Level 1: on traces (synth, 161 MB raw) it compresses 5.52:1 against 5.55:1
 * for level 3 at 1.7 times the speed, and the recorder runs on the host
 * being measured.
 */
#define ST_DEFAULT_ZSTD_LEVEL	1
/*
 * Hash table of the fast levels (1 and below): 2^10 entries instead of
 * zstd's 2^13-2^14. A record's best match is the previous record of its
 * type, a few records back, which a small table still finds, and it stays
 * in the L1 cache: on st-record's `block` recordings 1.18 times the speed
 * and 7 % fewer bytes, on `all` 1.13 times and 1 % fewer (RESULTS.md).
 */
#define ST_FAST_HASH_LOG	10
#define ST_MIN_CHUNK_SIZE	64u
#define ST_MAX_RECORD		65535u

struct meta_entry {
	char *key;
	char *value;
	int pending;	/* set since the last metadata chunk */
};

struct lost_entry {
	uint32_t cpu;
	uint64_t lost;
};

/*
 * Where each metadata key and each lost CPU sits in its array, kept in the
 * order first set: open addressing on the key's hash, at most half full, so
 * n keys cost n steps, not n squared (slice or anonymize copying a file's
 * four million lost entries, section 9 of the spec).
 */
struct pos_slot {
	uint64_t hash;
	size_t pos;		/* position + 1; 0 an empty slot */
};

struct pos_table {
	struct pos_slot *slot;
	size_t cap;		/* a power of two; 0 before the first key */
};

/* An open events chunk. */
struct lane {
	uint8_t *buf;		/* NULL until the lane's first record: an idle CPU costs nothing */
	size_t len;
	size_t room;		/* seal when the next record would pass this; 0 while buf is NULL */
	uint32_t events;
	uint64_t first_ts, last_ts;
};

struct st_writer {
	struct st_sink sink;
	int fd;			/* default sink's file, -1 with a caller's sink */
	uint64_t offset;	/* bytes handed to the sink so far */
	int err;
	char msg[256];

	/* Schema: types[type_slot[id] - 1] is type id; type_size[id] 0 if undeclared. */
	struct st_type *types;
	size_t ntypes;
	uint16_t *type_size;
	uint16_t *type_slot;
	uint64_t *type_events;	/* per slot */
	int schema_written;

	/* The open events chunks: record h goes to lanes[h->cpu % nlanes]. */
	struct lane *lanes;
	unsigned nlanes;
	size_t chunk_size;	/* raw bytes per events chunk */

	/* Compression: one context, one output buffer holding header + frame. */
	ZSTD_CCtx *cctx;
	int level;
	uint8_t *out;
	size_t out_cap;

	struct meta_entry *meta;
	size_t nmeta, meta_cap;
	struct pos_table meta_at;
	int meta_pending;

	struct lost_entry *lost;
	size_t nlost, lost_cap;
	struct pos_table lost_at;
	int lost_pending;

	struct st_chunk_info *index;
	size_t nindex;

	struct st_writer_stats stats;
};

static int fail(struct st_writer *w, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Records the first error; later calls return it and write nothing. */
static int fail(struct st_writer *w, int err, const char *fmt, ...)
{
	va_list ap;

	if (w->err)
		return w->err;
	va_start(ap, fmt);
	vsnprintf(w->msg, sizeof(w->msg), fmt, ap);
	va_end(ap);
	w->err = err;
	return err;
}

int st_pwrite_all(int fd, const void *buf, size_t len, uint64_t offset)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)offset);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOSPC;
		p += n;
		len -= (size_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

static int file_sink_write(void *ctx, const void *buf, size_t len, uint64_t offset)
{
	return st_pwrite_all(*(int *)ctx, buf, len, offset);
}

/* A file that cannot be synced (a pipe, /dev/null: EINVAL) has nothing to make durable. */
static int file_sink_sync(void *ctx)
{
	return fsync(*(int *)ctx) && errno != EINVAL ? -errno : 0;
}

/* Hands bytes to the sink at the current end of the file. */
static int emit(struct st_writer *w, const void *buf, size_t len)
{
	int ret;

	if (w->err)
		return w->err;
	ret = w->sink.write(w->sink.ctx, buf, len, w->offset);
	if (ret == -ENOSPC)
		return fail(w, ST_ENOSPC, "write of %zu bytes at offset %llu: %s", len,
			    (unsigned long long)w->offset, strerror(ENOSPC));
	if (ret)
		return fail(w, ST_EIO, "write of %zu bytes at offset %llu: %s", len,
			    (unsigned long long)w->offset, strerror(ret < 0 ? -ret : EIO));
	w->offset += len;
	w->stats.file_bytes = w->offset;
	return 0;
}

static int index_add(struct st_writer *w, const struct st_chunk_hdr *h)
{
	struct st_chunk_info *ci;

	if (!(w->nindex & (w->nindex - 1))) {
		ci = realloc(w->index, (w->nindex ? w->nindex * 2 : 16) * sizeof(*ci));
		if (!ci)
			return fail(w, ST_ENOMEM, "out of memory for the chunk index");
		w->index = ci;
	}
	ci = &w->index[w->nindex++];
	ci->offset = w->offset;
	ci->kind = h->kind;
	ci->seq = h->seq;
	ci->stored_size = ST_CHUNK_HEADER_SIZE + h->payload_size;
	ci->raw_size = h->raw_size;
	ci->events = h->events;
	ci->first_ts = h->first_ts;
	ci->last_ts = h->last_ts;
	return 0;
}

static int out_reserve(struct st_writer *w, size_t len)
{
	uint8_t *p;

	if (len <= w->out_cap)
		return 0;
	p = realloc(w->out, len);
	if (!p)
		return fail(w, ST_ENOMEM, "out of memory for a %zu-byte chunk", len);
	w->out = p;
	w->out_cap = len;
	return 0;
}

/* Compresses `raw` (stored as is when that is not smaller) into w->out after the header. */
static int compress_payload(struct st_writer *w, const void *raw, size_t len, struct st_chunk_hdr *h)
{
	size_t bound = ZSTD_compressBound(len), n;

	if (out_reserve(w, ST_CHUNK_HEADER_SIZE + (bound > len ? bound : len)))
		return w->err;
	n = ZSTD_compress2(w->cctx, w->out + ST_CHUNK_HEADER_SIZE, bound, raw, len);
	if (ZSTD_isError(n))
		return fail(w, ST_ECOMPRESS, "zstd: %s", ZSTD_getErrorName(n));
	h->flags = ST_CHUNK_F_ZSTD;
	if (n >= len) {
		memcpy(w->out + ST_CHUNK_HEADER_SIZE, raw, len);
		n = len;
		h->flags = 0;
	}
	h->payload_size = (uint32_t)n;
	h->raw_size = (uint32_t)len;
	return 0;
}

/* Writes one chunk of any kind; h carries kind, events and timestamps. */
static int write_chunk(struct st_writer *w, struct st_chunk_hdr *h, const void *raw, size_t len)
{
	size_t total;

	if (w->err)
		return w->err;
	if (len > ST_MAX_CHUNK_RAW)
		return fail(w, ST_EINVAL, "chunk payload of %zu bytes exceeds the format's limit", len);
	if (compress_payload(w, raw, len, h))
		return w->err;
	h->seq = (uint32_t)w->nindex;
	h->payload_xxh = st_xxh(w->out + ST_CHUNK_HEADER_SIZE, h->payload_size);
	st_chunk_hdr_encode(w->out, h);
	total = ST_CHUNK_HEADER_SIZE + h->payload_size;
	if (index_add(w, h))
		return w->err;
	if (emit(w, w->out, total)) {
		w->nindex--;
		return w->err;
	}
	w->stats.chunks++;
	return 0;
}

static int write_plain_chunk(struct st_writer *w, uint32_t kind, const struct st_bytes *b)
{
	struct st_chunk_hdr h = { .kind = kind };

	return write_chunk(w, &h, b->data, b->len);
}

static int write_schema(struct st_writer *w)
{
	struct st_bytes b = { 0 };
	int err = st_schema_encode(&b, w->types, w->ntypes);

	if (err)
		err = fail(w, err, "cannot encode the schema: %s", st_strerror(err));
	else
		err = write_plain_chunk(w, ST_CHUNK_SCHEMA, &b);
	st_bytes_free(&b);
	w->schema_written = !err;
	return err;
}

/* Metadata payload: per entry key_len:u32 value_len:u32 key value. */
static int write_meta(struct st_writer *w)
{
	struct st_bytes b = { 0 };
	int err = 0;

	for (size_t i = 0; i < w->nmeta && !err; i++) {
		struct meta_entry *m = &w->meta[i];
		size_t kl = strlen(m->key), vl = strlen(m->value);
		uint8_t *p;

		if (!m->pending)
			continue;
		p = st_bytes_put(&b, 8 + kl + vl);
		if (!p) {
			err = fail(w, ST_ENOMEM, "out of memory for metadata");
			break;
		}
		st_st32(p, (uint32_t)kl);
		st_st32(p + 4, (uint32_t)vl);
		memcpy(p + 8, m->key, kl);
		memcpy(p + 8 + kl, m->value, vl);
	}
	if (!err)
		err = write_plain_chunk(w, ST_CHUNK_META, &b);
	st_bytes_free(&b);
	for (size_t i = 0; i < w->nmeta && !err; i++)
		w->meta[i].pending = 0;
	w->meta_pending = w->meta_pending && err;
	return err;
}

/* Lost entries, in a lost chunk or the index: cpu:u32 reserved:u32 lost:u64. */
static void encode_lost(uint8_t *p, const struct lost_entry *lost, size_t n)
{
	for (size_t i = 0; i < n; i++, p += ST_LOST_ENTRY_SIZE) {
		st_st32(p, lost[i].cpu);
		st_st32(p + 4, 0);
		st_st64(p + 8, lost[i].lost);
	}
}

/* Lost payload: one entry per CPU with its absolute count. */
static int write_lost(struct st_writer *w)
{
	struct st_bytes b = { 0 };
	uint8_t *p = st_bytes_put(&b, w->nlost * ST_LOST_ENTRY_SIZE);
	int err;

	if (!p && w->nlost)
		return fail(w, ST_ENOMEM, "out of memory for lost counts");
	encode_lost(p, w->lost, w->nlost);
	err = write_plain_chunk(w, ST_CHUNK_LOST, &b);
	st_bytes_free(&b);
	w->lost_pending = w->lost_pending && err;
	return err;
}

/* Metadata first (readers want it before events), then the schema, once. */
static int write_preamble(struct st_writer *w)
{
	if (w->meta_pending && write_meta(w))
		return w->err;
	if (!w->schema_written && write_schema(w))
		return w->err;
	return 0;
}

static void lane_empty(struct lane *l)
{
	l->len = 0;
	l->events = 0;
	l->first_ts = UINT64_MAX;
	l->last_ts = 0;
}

/*
 * The sink is congested: the lane's records go, whole, counted as lost
 * (ST_LOST_DROPPED) and taken out of the per-type counts, which describe the
 * file's chunks.
 */
static int drop_events(struct st_writer *w, struct lane *l)
{
	for (size_t off = 0; off < l->len;) {
		const struct st_event_header *h = (const void *)(l->buf + off);

		w->type_events[w->type_slot[h->type] - 1]--;
		off += h->size;
	}
	w->stats.dropped_events += l->events;
	w->stats.dropped_chunks++;
	lane_empty(l);
	return st_writer_set_lost(w, ST_LOST_DROPPED, w->stats.dropped_events);
}

static int seal_events(struct st_writer *w, struct lane *l)
{
	struct st_chunk_hdr h = {
		.kind = ST_CHUNK_EVENTS,
		.events = l->events,
		.first_ts = l->first_ts,
		.last_ts = l->last_ts,
	};

	/* the file's beginning always goes out: a reader needs it to read anything */
	if (w->schema_written && w->sink.congested && w->sink.congested(w->sink.ctx))
		return l->len ? drop_events(w, l) : 0;
	if (write_preamble(w))
		return w->err;
	if (!l->len)
		return 0;
	if (write_chunk(w, &h, l->buf, l->len))
		return w->err;
	lane_empty(l);
	if (w->meta_pending && write_meta(w))
		return w->err;
	if (w->lost_pending && write_lost(w))
		return w->err;
	return 0;
}

/* Every lane, in lane order; the preamble goes out even when all are empty. */
static int seal_all(struct st_writer *w)
{
	for (unsigned i = 0; i < w->nlanes; i++)
		if (seal_events(w, &w->lanes[i]))
			return w->err;
	return 0;
}

int st_writer_flush(struct st_writer *w)
{
	if (w->err)
		return w->err;
	return seal_all(w);
}

/*
 * The slow path of an append: a lane's first record allocates its buffer
 * (a record may be larger than chunk_size: it then fills a chunk alone);
 * a lane that is full is sealed alone, the others stay open. Out of line:
 * inlined, it made every append save more registers.
 */
static __attribute__((noinline, cold)) int lane_make_room(struct st_writer *w, struct lane *l)
{
	size_t cap = w->chunk_size > ST_MAX_RECORD ? w->chunk_size : ST_MAX_RECORD;

	if (l->buf)
		return l->len ? seal_events(w, l) : 0;
	l->buf = malloc(cap);
	if (!l->buf)
		return fail(w, ST_ENOMEM, "out of memory for a %zu-byte events chunk", cap);
	l->room = w->chunk_size;
	return 0;
}

/* A record the writer refuses: say which rule it broke. */
static int bad_record(struct st_writer *w, const struct st_event_header *h, size_t len)
{
	if (len < ST_EVENT_HEADER_SIZE)
		return fail(w, ST_EINVAL, "record of %zu bytes is shorter than its header", len);
	if (!w->type_size[h->type])
		return fail(w, ST_EINVAL, "record of undeclared type %u", h->type);
	return fail(w, ST_EINVAL, "record of type %u: length %zu, header size %u, declared size %u",
		    h->type, len, h->size, w->type_size[h->type]);
}

int st_writer_append(struct st_writer *w, const void *rec, size_t len)
{
	const struct st_event_header *h = rec;
	struct lane *l;

	if (__builtin_expect(w->err != 0, 0))
		return w->err;
	if (__builtin_expect(len < ST_EVENT_HEADER_SIZE || len != h->size ||
			     len != w->type_size[h->type], 0))
		return bad_record(w, h, len);
	l = w->lanes;
	if (w->nlanes > 1)	/* spares lanes == 1 the division */
		l += h->cpu % w->nlanes;
	if (__builtin_expect(l->len + len > l->room, 0) && lane_make_room(w, l))
		return w->err;
	memcpy(l->buf + l->len, rec, len);
	l->len += len;
	l->events++;
	if (h->ts < l->first_ts)
		l->first_ts = h->ts;
	if (h->ts > l->last_ts)
		l->last_ts = h->ts;
	w->type_events[w->type_slot[h->type] - 1]++;
	w->stats.events++;
	w->stats.raw_bytes += len;
	return 0;
}

int st_writer_add_type(struct st_writer *w, const struct st_type *t)
{
	const char *why;
	struct st_type *types;
	int err;

	if (w->err)
		return w->err;
	if (w->schema_written)
		return fail(w, ST_EINVAL, "type %u declared after the schema was written", t->id);
	if (st_type_check(t, &why))
		return fail(w, ST_EINVAL, "type %u (%s): %s", t->id, t->name ? t->name : "?", why);
	if (w->type_size[t->id])
		return fail(w, ST_EINVAL, "type %u declared twice", t->id);
	for (size_t i = 0; i < w->ntypes; i++)
		if (!strcmp(w->types[i].name, t->name))
			return fail(w, ST_EINVAL, "type name %s declared twice", t->name);
	types = realloc(w->types, (w->ntypes + 1) * sizeof(*types));
	if (!types)
		return fail(w, ST_ENOMEM, "out of memory for the schema");
	w->types = types;
	err = st_type_copy(&types[w->ntypes], t);
	if (err)
		return fail(w, err, "out of memory for the schema");
	w->ntypes++;
	w->type_size[t->id] = t->size;
	w->type_slot[t->id] = (uint16_t)w->ntypes;
	return 0;
}

int st_writer_add_builtin_types(struct st_writer *w)
{
	size_t n;
	const struct st_type *t = st_builtin_types(&n);

	for (size_t i = 0; i < n; i++)
		if (st_writer_add_type(w, &t[i]))
			return w->err;
	return 0;
}

/*
 * The slot of the key with this hash for which same(w, position, key) holds,
 * or the empty slot where it goes. The table has room for one more key.
 */
static struct pos_slot *pos_find(const struct pos_table *t, uint64_t hash, const struct st_writer *w,
				 int (*same)(const struct st_writer *, size_t, const void *), const void *key)
{
	size_t i = (size_t)hash & (t->cap - 1);

	while (t->slot[i].pos && (t->slot[i].hash != hash || !same(w, t->slot[i].pos - 1, key)))
		i = (i + 1) & (t->cap - 1);
	return &t->slot[i];
}

/* Room in t for key number n + 1 (doubled when half full); -1 out of memory. */
static int pos_room(struct pos_table *t, size_t n)
{
	struct pos_slot *slot;
	size_t cap = t->cap ? t->cap : 64;

	while ((n + 1) * 2 > cap)
		cap *= 2;
	if (cap == t->cap)
		return 0;
	slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j = (size_t)t->slot[i].hash & (cap - 1);

		if (!t->slot[i].pos)
			continue;
		while (slot[j].pos)
			j = (j + 1) & (cap - 1);
		slot[j] = t->slot[i];
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

/*
 * Array a of *cap items of size size with room for item number n + 1: a
 * itself or a larger copy (twice the items); NULL out of memory, a kept.
 */
static void *array_room(void *a, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap * 2 : 64;

	if (n < *cap)
		return a;
	a = realloc(a, c * size);
	if (a)
		*cap = c;
	return a;
}

static int meta_same(const struct st_writer *w, size_t pos, const void *key)
{
	return !strcmp(w->meta[pos].key, key);
}

static struct meta_entry *meta_slot(struct st_writer *w, const char *key)
{
	uint64_t hash = st_xxh(key, strlen(key));
	struct pos_slot *at;
	struct meta_entry *m;

	if (pos_room(&w->meta_at, w->nmeta) ||
	    !(m = array_room(w->meta, &w->meta_cap, w->nmeta, sizeof(*m))))
		return NULL;
	w->meta = m;
	at = pos_find(&w->meta_at, hash, w, meta_same, key);
	if (at->pos)
		return &w->meta[at->pos - 1];
	m = &w->meta[w->nmeta];
	m->key = strdup(key);
	m->value = NULL;
	if (!m->key)
		return NULL;
	*at = (struct pos_slot){ hash, ++w->nmeta };
	return m;
}

int st_writer_set_meta(struct st_writer *w, const char *key, const char *value)
{
	struct meta_entry *m;
	char *v;

	if (w->err)
		return w->err;
	if (!key || !key[0] || !value || strlen(key) > ST_MAX_NAME)
		return fail(w, ST_EINVAL, "metadata key must be 1 to %u bytes with a value", ST_MAX_NAME);
	if (strlen(value) > ST_MAX_CHUNK_RAW / 2)
		return fail(w, ST_EINVAL, "metadata value of %s is too long", key);
	v = strdup(value);
	m = v ? meta_slot(w, key) : NULL;
	if (!m) {
		free(v);
		return fail(w, ST_ENOMEM, "out of memory for metadata");
	}
	free(m->value);
	m->value = v;
	m->pending = 1;
	w->meta_pending = 1;
	return 0;
}

int st_writer_meta_at(const struct st_writer *w, size_t i, const char **key, const char **value)
{
	if (i >= w->nmeta)
		return ST_ENOTFOUND;
	*key = w->meta[i].key;
	*value = w->meta[i].value;
	return 0;
}

static int lost_same(const struct st_writer *w, size_t pos, const void *cpu)
{
	return w->lost[pos].cpu == *(const uint32_t *)cpu;
}

int st_writer_set_lost(struct st_writer *w, uint32_t cpu, uint64_t lost)
{
	uint64_t hash = st_xxh(&cpu, sizeof(cpu));
	struct pos_slot *at;
	struct lost_entry *l;

	if (w->err)
		return w->err;
	if (pos_room(&w->lost_at, w->nlost) ||
	    !(l = array_room(w->lost, &w->lost_cap, w->nlost, sizeof(*l))))
		return fail(w, ST_ENOMEM, "out of memory for lost counts");
	w->lost = l;
	at = pos_find(&w->lost_at, hash, w, lost_same, &cpu);
	if (at->pos) {
		w->lost_pending |= w->lost[at->pos - 1].lost != lost;
		w->lost[at->pos - 1].lost = lost;
		return 0;
	}
	w->lost[w->nlost] = (struct lost_entry){ cpu, lost };
	*at = (struct pos_slot){ hash, ++w->nlost };
	w->lost_pending = 1;
	return 0;
}

void st_writer_stats(const struct st_writer *w, struct st_writer_stats *st)
{
	*st = w->stats;
}

const char *st_writer_errmsg(const struct st_writer *w)
{
	return w->msg;
}

/*
 * Index payload: nchunks:u32 ntypes:u32 nlost:u32 reserved:u32, then
 * nchunks entries (offset:u64 kind:u32 seq:u32 stored_size:u32 raw_size:u32
 * events:u32 reserved:u32 first_ts:u64 last_ts:u64), ntypes entries
 * (id:u16 reserved:u16 reserved:u32 events:u64), nlost entries as in a lost chunk.
 */
static void encode_index_chunks(uint8_t *p, const struct st_chunk_info *ci, size_t n)
{
	for (size_t i = 0; i < n; i++, p += ST_INDEX_CHUNK_SIZE) {
		memset(p, 0, ST_INDEX_CHUNK_SIZE);
		st_st64(p, ci[i].offset);
		st_st32(p + 8, ci[i].kind);
		st_st32(p + 12, ci[i].seq);
		st_st32(p + 16, ci[i].stored_size);
		st_st32(p + 20, ci[i].raw_size);
		st_st32(p + 24, ci[i].events);
		st_st64(p + 32, ci[i].first_ts);
		st_st64(p + 40, ci[i].last_ts);
	}
}

static int write_index(struct st_writer *w, uint64_t *index_offset)
{
	size_t len = ST_INDEX_HEAD_SIZE + w->nindex * ST_INDEX_CHUNK_SIZE +
		     (w->ntypes + w->nlost) * ST_INDEX_COUNT_SIZE;
	struct st_bytes b = { 0 };
	uint8_t *p = st_bytes_put(&b, len);
	int err;

	if (!p)
		return fail(w, ST_ENOMEM, "out of memory for the index");
	st_st32(p, (uint32_t)w->nindex);
	st_st32(p + 4, (uint32_t)w->ntypes);
	st_st32(p + 8, (uint32_t)w->nlost);
	st_st32(p + 12, 0);
	p += ST_INDEX_HEAD_SIZE;
	encode_index_chunks(p, w->index, w->nindex);
	p += w->nindex * ST_INDEX_CHUNK_SIZE;
	for (size_t i = 0; i < w->ntypes; i++, p += ST_INDEX_COUNT_SIZE) {
		memset(p, 0, ST_INDEX_COUNT_SIZE);
		st_st16(p, w->types[i].id);
		st_st64(p + 8, w->type_events[i]);
	}
	encode_lost(p, w->lost, w->nlost);
	*index_offset = w->offset;
	err = write_plain_chunk(w, ST_CHUNK_INDEX, &b);
	st_bytes_free(&b);
	return err;
}

static int finish(struct st_writer *w)
{
	uint8_t trailer[ST_TRAILER_SIZE];
	uint64_t index_offset = 0;
	int ret;

	if (seal_all(w))
		return w->err;
	/* what a congested sink held back (seal_events) */
	if (w->meta_pending && write_meta(w))
		return w->err;
	if (w->lost_pending && write_lost(w))
		return w->err;
	if (write_index(w, &index_offset))
		return w->err;
	st_trailer_encode(trailer, index_offset, w->offset - index_offset);
	if (emit(w, trailer, sizeof(trailer)))
		return w->err;
	ret = w->sink.sync ? w->sink.sync(w->sink.ctx) : 0;
	if (ret)
		return fail(w, ret == -ENOSPC ? ST_ENOSPC : ST_EIO, "sync: %s",
			    strerror(ret < 0 ? -ret : EIO));
	return 0;
}

static void writer_free(struct st_writer *w)
{
	for (size_t i = 0; i < w->ntypes; i++)
		st_type_free(&w->types[i]);
	for (size_t i = 0; i < w->nmeta; i++) {
		free(w->meta[i].key);
		free(w->meta[i].value);
	}
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->cctx);
	free(w->types);
	free(w->type_size);
	free(w->type_slot);
	free(w->type_events);
	for (unsigned i = 0; w->lanes && i < w->nlanes; i++)
		free(w->lanes[i].buf);
	free(w->lanes);
	free(w->out);
	free(w->meta);
	free(w->meta_at.slot);
	free(w->lost);
	free(w->lost_at.slot);
	free(w->index);
	free(w);
}

int st_writer_close(struct st_writer *w, char *errmsg, size_t cap)
{
	int err;

	if (!w->err)
		finish(w);
	if (w->fd >= 0 && close(w->fd) && !w->err)
		fail(w, ST_EIO, "close: %s", strerror(errno));
	w->fd = -1;
	err = w->err;
	if (errmsg && cap)
		snprintf(errmsg, cap, "%s", w->msg);
	writer_free(w);
	return err;
}

/* Takes the options, defaults filled in, or fails naming the first bad one. */
static int check_opts(struct st_writer *w, const struct st_writer_opts *o)
{
	w->chunk_size = o && o->chunk_size ? o->chunk_size : ST_DEFAULT_CHUNK_SIZE;
	w->level = o && o->zstd_level ? o->zstd_level : ST_DEFAULT_ZSTD_LEVEL;
	w->nlanes = o && o->lanes ? o->lanes : 1;
	if (w->chunk_size < ST_MIN_CHUNK_SIZE || w->chunk_size > ST_MAX_CHUNK_RAW)
		return fail(w, ST_EINVAL, "chunk size %zu: must be %u..%u bytes", w->chunk_size,
			    ST_MIN_CHUNK_SIZE, ST_MAX_CHUNK_RAW);
	if (w->level < ZSTD_minCLevel() || w->level > ZSTD_maxCLevel())
		return fail(w, ST_EINVAL, "zstd level %d: must be %d..%d", w->level,
			    ZSTD_minCLevel(), ZSTD_maxCLevel());
	if (w->nlanes > ST_MAX_LANES)
		return fail(w, ST_EINVAL, "%u lanes: must be 0..%u (0 = 1)", w->nlanes, ST_MAX_LANES);
	return 0;
}

/* Lanes get their chunk buffer on their first record (lane_make_room). */
static int alloc_buffers(struct st_writer *w)
{
	w->type_size = calloc(ST_NUM_TYPE_IDS, sizeof(*w->type_size));
	w->type_slot = calloc(ST_NUM_TYPE_IDS, sizeof(*w->type_slot));
	w->type_events = calloc(ST_NUM_TYPE_IDS, sizeof(*w->type_events));
	w->lanes = calloc(w->nlanes, sizeof(*w->lanes));
	w->cctx = ZSTD_createCCtx();
	if (!w->type_size || !w->type_slot || !w->type_events || !w->lanes || !w->cctx)
		return ST_ENOMEM;
	for (unsigned i = 0; i < w->nlanes; i++)
		w->lanes[i].first_ts = UINT64_MAX;
	return 0;
}

/* The level, and the fast levels' small hash table, kept by w->cctx for every chunk. */
static int set_compression(struct st_writer *w)
{
	size_t r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->level);

	if (!ZSTD_isError(r) && w->level <= 1)
		r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_hashLog, ST_FAST_HASH_LOG);
	return ZSTD_isError(r) ? fail(w, ST_ECOMPRESS, "zstd: %s", ZSTD_getErrorName(r)) : 0;
}

static int open_file_sink(struct st_writer *w, const char *path, unsigned flags)
{
	char why[160];
	int fd = st_output_open(path, flags, why, sizeof(why));

	if (fd < 0)
		return fail(w, fd, "%s", why);
	w->fd = fd;
	w->sink.write = file_sink_write;
	w->sink.sync = file_sink_sync;
	w->sink.ctx = &w->fd;
	return 0;
}

int st_writer_open(struct st_writer **wp, const char *path, const struct st_writer_opts *opts)
{
	struct st_writer *w = calloc(1, sizeof(*w));
	uint8_t header[ST_FILE_HEADER_SIZE];

	*wp = w;
	if (!w)
		return ST_ENOMEM;
	w->fd = -1;
	if (check_opts(w, opts))
		return w->err;
	if (alloc_buffers(w))
		return fail(w, ST_ENOMEM, "out of memory");
	if (set_compression(w))
		return w->err;
	if (opts && opts->sink)
		w->sink = *opts->sink;
	else if (!path)
		return fail(w, ST_EINVAL, "neither a path nor a sink");
	else if (open_file_sink(w, path, opts ? opts->output_flags : 0))
		return w->err;
	st_file_header_encode(header);
	return emit(w, header, sizeof(header));
}
