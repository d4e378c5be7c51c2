/* SPDX-License-Identifier: MIT */
/*
 * reader.c - opens a .sttrace file: header, then the index footer found from
 * the trailer, or (footer missing or bad, or ST_READ_SCAN) a scan of every
 * chunk that skips damaged bytes. Also metadata, schema and lost counts.
 *
 * Everything read from the file is checked before use: offsets and sizes
 * against the file size and the format's limits, checksums before
 * decompression, every record's size and type before a caller sees it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "internal.h"

struct meta_kv {
	char *key;
	char *value;
	size_t order;	/* position of arrival: later settings win */
};

struct st_reader {
	int fd;			/* -1 for a memory buffer */
	const uint8_t *mem;
	uint64_t size;
	pthread_mutex_t msg_lock;	/* st_chunk_decode may fail in several threads */
	char msg[256];
	struct st_file_info info;

	struct st_chunk_info *chunks;
	size_t nchunks;

	struct st_type *types;
	size_t ntypes;
	uint16_t *type_size;	/* by id, 0 = not in the schema */
	uint16_t *type_slot;	/* by id, index + 1 into types */
	uint64_t *type_events;	/* by index into types */

	struct meta_kv *meta;
	size_t nmeta, meta_cap;
	size_t meta_order;	/* entries read so far */

	/* Lost entries as read; lost_compact() keeps each CPU's last. */
	struct st_lost_kv {
		uint32_t cpu;
		uint64_t lost;
		size_t order;	/* position of arrival: later entries win */
	} *lost;
	size_t nlost, lost_cap;
	size_t lost_compacted;	/* entries after the last compaction */
	size_t lost_order;	/* entries read so far */

	struct st_damage *damage;	/* ranges a scan skipped */
	size_t ndamage;

	struct st_chunk_buf scratch;	/* used while opening */
	uint8_t *window;	/* a scan's search for the next chunk header in a file */
	/* ST_READ_LIVE: where the scan stopped, for st_reader_refresh() */
	int live, live_done;
	uint64_t live_off, live_seq;
};

/* Bytes a scan reads at once while searching a damaged file for the next chunk. */
#define SCAN_WINDOW	(64u << 10)

#define fail st_reader_fail

int st_reader_fail(struct st_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&r->msg_lock);
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&r->msg_lock);
	return err;
}

const char *st_reader_errmsg(const struct st_reader *r)
{
	return r->msg;
}

const struct st_file_info *st_reader_info(const struct st_reader *r)
{
	return &r->info;
}

/* `len` bytes at `off`: a pointer into the memory buffer, or read into dst. */
static int read_at(const struct st_reader *r, uint64_t off, size_t len, uint8_t *dst,
		   const uint8_t **out)
{
	if (off > r->size || len > r->size - off)
		return ST_ETRUNCATED;
	if (r->mem) {
		*out = r->mem + off;
		return 0;
	}
	*out = dst;
	while (len) {
		ssize_t n = pread(r->fd, dst, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? ST_EIO : ST_ETRUNCATED;
		dst += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * A decoded chunk is about a megabyte (st-record's default chunk size), and
 * a page fault costs about 2 us on the guests measured (2.0-2.1 us a 4 KiB
 * page touched first): a buffer that large is mapped on a 2 MiB boundary
 * and asked for transparent huge pages, so that filling it is one fault,
 * not three hundred. The summary of a 4 s `-e all` recording took 3,535
 * faults with two threads (seven such buffers) and took 1,475 so
 * (scripts/bench/RESULTS.md, 2026-12-03 03:10). Where huge pages are off
 * or none is free, the mapping's pages come small, as malloc's would.
 */
#define HUGE_PAGE	(2u << 20)
#define HUGE_FROM	(HUGE_PAGE / 4)	/* buffers below it come from malloc */

/* size bytes (a multiple of HUGE_PAGE) mapped on a HUGE_PAGE boundary, NULL when out of memory. */
static void *huge_map(size_t size)
{
	uint8_t *m = mmap(NULL, size + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	uintptr_t at, end;

	if (m == MAP_FAILED)
		return NULL;
	at = ((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	end = (uintptr_t)m + size + HUGE_PAGE;
	if (at > (uintptr_t)m)
		munmap(m, at - (uintptr_t)m);
	munmap((void *)(at + size), end - (at + size));
	madvise((void *)at, size, MADV_HUGEPAGE);	/* a hint: refused, the pages come small */
	return (void *)at;
}

static void buf_release(struct st_chunk_buf *buf)
{
	if (buf->cap >= HUGE_FROM)
		munmap(buf->data, buf->cap);
	else
		free(buf->data);
}

int st_chunk_buf_reserve(struct st_chunk_buf *buf, size_t cap)
{
	size_t size;
	void *p;

	if (cap <= buf->cap)
		return 0;
	if (cap < HUGE_FROM) {
		if (!(p = realloc(buf->data, cap)))
			return ST_ENOMEM;
		buf->data = p;
		buf->cap = cap;
		return 0;
	}
	size = (cap + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
	if (size < cap || !(p = huge_map(size)))
		return ST_ENOMEM;
	if (buf->cap)
		memcpy(p, buf->data, buf->cap);
	buf_release(buf);
	buf->data = p;
	buf->cap = size;
	return 0;
}

void st_chunk_buf_free(struct st_chunk_buf *buf)
{
	buf_release(buf);
	ZSTD_freeDCtx(buf->dctx);
	memset(buf, 0, sizeof(*buf));
}

static int read_chunk_header(const struct st_reader *r, uint64_t off, struct st_chunk_hdr *h,
			     const char **why)
{
	uint8_t raw[ST_CHUNK_HEADER_SIZE];
	const uint8_t *p;

	if (read_at(r, off, sizeof(raw), raw, &p))
		return *why = "file ends inside the chunk header", ST_ETRUNCATED;
	return st_chunk_hdr_decode(p, h, why);
}

/*
 * Checks every record of a decoded events chunk against the header and
 * schema; *in_order 1 when their timestamps never go back (the cursor
 * then walks them without a pass of its own).
 */
static int check_records(const struct st_reader *r, const struct st_chunk_hdr *h,
			 const uint8_t *data, int *in_order, const char **why)
{
	uint32_t events = 0;
	uint64_t newest = h->first_ts;	/* of the records so far */
	size_t pos = 0;
	int ordered = 1;

	while (pos < h->raw_size) {
		const struct st_event_header *e = (const void *)(data + pos);

		if (h->raw_size - pos < ST_EVENT_HEADER_SIZE)
			return *why = "record cut by the chunk end", ST_EFORMAT;
		if (e->size < ST_EVENT_HEADER_SIZE || e->size % 8 || e->size > h->raw_size - pos)
			return *why = "record with a bad size", ST_EFORMAT;
		if (r->type_size[e->type] != e->size)
			return *why = "record type not in the schema or of the wrong size", ST_EFORMAT;
		/* one compare for both the range's start and the order, while in order */
		if (e->ts < newest) {
			if (e->ts < h->first_ts)
				return *why = "record timestamp outside the chunk's range", ST_EFORMAT;
			ordered = 0;
		} else {
			newest = e->ts;
		}
		if (e->ts > h->last_ts)
			return *why = "record timestamp outside the chunk's range", ST_EFORMAT;
		pos += e->size;
		events++;
	}
	if (events != h->events)
		return *why = "record count differs from the chunk header", ST_EFORMAT;
	*in_order = ordered;
	return 0;
}

static int decompress(struct st_chunk_buf *buf, const struct st_chunk_hdr *h, const uint8_t *src,
		      const char **why)
{
	size_t n;

	if (!(h->flags & ST_CHUNK_F_ZSTD)) {
		memcpy(buf->data, src, h->raw_size);
		return 0;
	}
	if (!buf->dctx && !(buf->dctx = ZSTD_createDCtx()))
		return *why = "out of memory", ST_ENOMEM;
	n = ZSTD_decompressDCtx(buf->dctx, buf->data, h->raw_size, src, h->payload_size);
	if (ZSTD_isError(n))
		return *why = ZSTD_getErrorName(n), ST_ECOMPRESS;
	if (n != h->raw_size)
		return *why = "decompressed size differs from the chunk header", ST_EFORMAT;
	return 0;
}

/*
 * A zstd payload is one regular frame (not a skippable one) that fills it
 * exactly, needs no dictionary, and claims the raw size the header gives
 * when it states one (spec section 1): zstd itself would also decode a
 * run of frames, or a frame after a skippable one.
 */
static const char *frame_problem(const struct st_chunk_hdr *h, const uint8_t *src)
{
	unsigned long long n;
	size_t len;

	if (!(h->flags & ST_CHUNK_F_ZSTD))
		return NULL;
	if (h->payload_size >= 4 && (st_ld32(src) & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START)
		return "skippable zstd frame";
	len = ZSTD_findFrameCompressedSize(src, h->payload_size);
	if (ZSTD_isError(len))
		return ZSTD_getErrorName(len);
	if (len != h->payload_size)
		return "bytes after the zstd frame";
	if (ZSTD_getDictID_fromFrame(src, h->payload_size))
		return "zstd frame needs a dictionary";
	n = ZSTD_getFrameContentSize(src, h->payload_size);
	if (n != ZSTD_CONTENTSIZE_UNKNOWN && n != h->raw_size)
		return "zstd frame size differs from the chunk header";
	return NULL;
}

/*
 * Payload of the chunk whose header h was read at `off`, checked and
 * decompressed into buf. The compressed bytes of a file are read into buf
 * behind the room for the raw bytes, so one buffer serves both; room for the
 * raw bytes of a memory buffer is made only once the checksum matched, so a
 * hostile header alone cannot make the reader allocate. For an events
 * chunk, *in_order as check_records() says.
 */
static int load_payload(const struct st_reader *r, uint64_t off, const struct st_chunk_hdr *h,
			struct st_chunk_buf *buf, int *in_order, const char **why)
{
	size_t raw_room = ((size_t)h->raw_size + 15) & ~(size_t)15;
	uint64_t start = off + ST_CHUNK_HEADER_SIZE;
	const char *problem;
	const uint8_t *src;
	int err;

	if (start > r->size || h->payload_size > r->size - start)
		return *why = "file ends inside the chunk", ST_ETRUNCATED;
	if (!r->mem && st_chunk_buf_reserve(buf, raw_room + h->payload_size + 16))
		return *why = "out of memory", ST_ENOMEM;
	err = read_at(r, start, h->payload_size, r->mem ? NULL : (uint8_t *)buf->data + raw_room, &src);
	if (err)
		return *why = err == ST_EIO ? strerror(errno) : "file ends inside the chunk", err;
	if (!st_xxh_ok(h->payload_xxh, src, h->payload_size))
		return *why = "payload checksum mismatch", ST_ECHECKSUM;
	if ((problem = frame_problem(h, src)))
		return *why = problem, ST_EFORMAT;
	if (st_chunk_buf_reserve(buf, raw_room + 16))
		return *why = "out of memory", ST_ENOMEM;
	err = decompress(buf, h, src, why);
	if (err)
		return err;
	buf->len = h->raw_size;
	*in_order = 0;
	if (h->kind == ST_CHUNK_EVENTS)
		return check_records(r, h, buf->data, in_order, why);
	return 0;
}

static int same_as_index(const struct st_chunk_hdr *h, const struct st_chunk_info *ci)
{
	return h->kind == ci->kind && h->seq == ci->seq && h->raw_size == ci->raw_size &&
	       h->payload_size + ST_CHUNK_HEADER_SIZE == ci->stored_size &&
	       h->events == ci->events && h->first_ts == ci->first_ts && h->last_ts == ci->last_ts;
}

int st_chunk_load(const struct st_reader *r, size_t i, struct st_chunk_buf *buf, int *in_order,
		  const char **why)
{
	const struct st_chunk_info *ci = &r->chunks[i];
	struct st_chunk_hdr h;
	int err;

	*why = "";
	err = read_chunk_header(r, ci->offset, &h, why);
	if (!err && !same_as_index(&h, ci))
		err = (*why = "chunk header differs from the index", ST_EFORMAT);
	if (!err)
		err = load_payload(r, ci->offset, &h, buf, in_order, why);
	return err;
}

int st_chunk_fail(struct st_reader *r, size_t i, int err, const char *why)
{
	return fail(r, err, "chunk %zu at offset %llu: %s", i,
		    (unsigned long long)r->chunks[i].offset, why);
}

int st_chunk_decode(struct st_reader *r, size_t i, struct st_chunk_buf *buf)
{
	const char *why;
	int err, in_order;

	if (i >= r->nchunks)
		return fail(r, ST_ENOTFOUND, "no chunk %zu (the file has %zu)", i, r->nchunks);
	err = st_chunk_load(r, i, buf, &in_order, &why);
	return err ? st_chunk_fail(r, i, err, why) : 0;
}

int st_chunk_next(const struct st_chunk_buf *buf, size_t *pos, const struct st_event_header **rec)
{
	const struct st_event_header *e;

	if (*pos >= buf->len)
		return 0;
	e = (const void *)((const uint8_t *)buf->data + *pos);
	if (buf->len - *pos < ST_EVENT_HEADER_SIZE || e->size < ST_EVENT_HEADER_SIZE ||
	    e->size % 8 || e->size > buf->len - *pos)
		return ST_EFORMAT;
	*rec = e;
	*pos += e->size;
	return 1;
}

/* ---- Metadata ------------------------------------------------------- */

static int meta_add(struct st_reader *r, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	struct meta_kv *m;

	if (r->nmeta == r->meta_cap) {
		m = realloc(r->meta, (r->meta_cap * 2 + 16) * sizeof(*m));
		if (!m)
			return ST_ENOMEM;
		r->meta = m;
		r->meta_cap = r->meta_cap * 2 + 16;
	}
	m = &r->meta[r->nmeta];
	m->key = st_str_dup(k, kl);
	m->value = st_str_dup(v, vl);
	m->order = r->meta_order++;
	if (!m->key || !m->value || !kl) {
		free(m->key);
		free(m->value);
		return ST_EFORMAT;
	}
	r->nmeta++;
	return 0;
}

static int parse_meta(struct st_reader *r, const uint8_t *p, size_t len, const char **why)
{
	struct st_span s = { p, len };

	while (s.left) {
		const uint8_t *head = st_take(&s, 8), *k, *v;
		uint32_t kl, vl;

		if (!head)
			return *why = "metadata entry cut short", ST_EFORMAT;
		kl = st_ld32(head);
		vl = st_ld32(head + 4);
		k = st_take(&s, kl);
		v = k ? st_take(&s, vl) : NULL;
		if (!v)
			return *why = "metadata entry longer than its chunk", ST_EFORMAT;
		if (meta_add(r, k, kl, v, vl))
			return *why = "empty metadata key or a NUL byte in metadata", ST_EFORMAT;
	}
	return 0;
}

static int meta_cmp(const void *a, const void *b)
{
	const struct meta_kv *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Sorts by key and keeps the last setting of each key. */
static void meta_finish(struct st_reader *r)
{
	size_t out = 0;

	if (!r->nmeta)
		return;
	qsort(r->meta, r->nmeta, sizeof(*r->meta), meta_cmp);
	for (size_t i = 0; i < r->nmeta; i++) {
		if (i + 1 < r->nmeta && !strcmp(r->meta[i].key, r->meta[i + 1].key)) {
			free(r->meta[i].key);
			free(r->meta[i].value);
			continue;
		}
		r->meta[out++] = r->meta[i];
	}
	r->nmeta = out;
}

const char *st_meta_get(const struct st_reader *r, const char *key)
{
	size_t lo = 0, hi = r->nmeta;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(r->meta[mid].key, key);

		if (!c)
			return r->meta[mid].value;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

size_t st_meta_count(const struct st_reader *r)
{
	return r->nmeta;
}

int st_meta_at(const struct st_reader *r, size_t i, const char **key, const char **value)
{
	if (i >= r->nmeta)
		return ST_ENOTFOUND;
	*key = r->meta[i].key;
	*value = r->meta[i].value;
	return 0;
}

/* ---- Schema and lost counts ------------------------------------------ */

static int set_schema(struct st_reader *r, const uint8_t *p, size_t len, const char **why)
{
	int err;

	if (r->types)
		return *why = "a second schema chunk", ST_EFORMAT;
	err = st_schema_decode(p, len, &r->types, &r->ntypes, why);
	if (err)
		return err;
	r->type_events = calloc(r->ntypes ? r->ntypes : 1, sizeof(*r->type_events));
	if (!r->type_events)
		return *why = "out of memory", ST_ENOMEM;
	for (size_t i = 0; i < r->ntypes; i++) {
		r->type_size[r->types[i].id] = r->types[i].size;
		r->type_slot[r->types[i].id] = (uint16_t)(i + 1);
	}
	return 0;
}

size_t st_type_count(const struct st_reader *r)
{
	return r->ntypes;
}

const struct st_type *st_type_at(const struct st_reader *r, size_t i)
{
	return i < r->ntypes ? &r->types[i] : NULL;
}

const struct st_type *st_type_by_id(const struct st_reader *r, uint16_t id)
{
	return r->type_slot[id] ? &r->types[r->type_slot[id] - 1] : NULL;
}

const struct st_type *st_type_by_name(const struct st_reader *r, const char *name)
{
	for (size_t i = 0; i < r->ntypes; i++)
		if (!strcmp(r->types[i].name, name))
			return &r->types[i];
	return NULL;
}

uint64_t st_type_events(const struct st_reader *r, uint16_t id)
{
	return r->type_slot[id] ? r->type_events[r->type_slot[id] - 1] : 0;
}

static int lost_cmp(const void *a, const void *b)
{
	const struct st_lost_kv *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Sorts the entries by CPU and keeps each CPU's last one (spec 5.4). */
static void lost_compact(struct st_reader *r)
{
	size_t out = 0;

	if (!r->nlost)
		return;
	qsort(r->lost, r->nlost, sizeof(*r->lost), lost_cmp);
	for (size_t i = 0; i < r->nlost; i++)
		if (i + 1 == r->nlost || r->lost[i].cpu != r->lost[i + 1].cpu)
			r->lost[out++] = r->lost[i];
	r->nlost = r->lost_compacted = out;
}

/*
 * Entries of a lost chunk or of the index's lost section, over the earlier
 * ones. They are appended and compacted once they doubled, so a file of
 * many or huge lost chunks costs n log n, never n squared.
 */
static int parse_lost(struct st_reader *r, const uint8_t *p, size_t n, const char **why)
{
	struct st_lost_kv *l;

	if (r->nlost + n > r->lost_cap) {
		size_t cap = (r->nlost + n) * 2;

		l = realloc(r->lost, cap * sizeof(*l));
		if (!l)
			return *why = "out of memory", ST_ENOMEM;
		r->lost = l;
		r->lost_cap = cap;
	}
	for (size_t i = 0; i < n; i++, p += ST_LOST_ENTRY_SIZE)
		r->lost[r->nlost++] = (struct st_lost_kv){ st_ld32(p), st_ld64(p + 8), r->lost_order++ };
	if (r->nlost > 2 * r->lost_compacted + 1024)
		lost_compact(r);
	return 0;
}

size_t st_lost_count(const struct st_reader *r)
{
	return r->nlost;
}

int st_lost_at(const struct st_reader *r, size_t i, uint32_t *cpu, uint64_t *lost)
{
	if (i >= r->nlost)
		return ST_ENOTFOUND;
	*cpu = r->lost[i].cpu;
	*lost = r->lost[i].lost;
	return 0;
}

size_t st_chunk_count(const struct st_reader *r)
{
	return r->nchunks;
}

const struct st_chunk_info *st_chunk_at(const struct st_reader *r, size_t i)
{
	return i < r->nchunks ? &r->chunks[i] : NULL;
}

/* ---- Opening: chunk list from the footer or from a scan ---------------- */

static int chunk_add(struct st_reader *r, const struct st_chunk_info *ci)
{
	struct st_chunk_info *c;

	if (!(r->nchunks & (r->nchunks - 1))) {
		c = realloc(r->chunks, (r->nchunks ? r->nchunks * 2 : 16) * sizeof(*c));
		if (!c)
			return ST_ENOMEM;
		r->chunks = c;
	}
	r->chunks[r->nchunks++] = *ci;
	return 0;
}

static void info_add_chunk(struct st_file_info *info, const struct st_chunk_info *ci)
{
	info->chunks++;
	if (ci->kind != ST_CHUNK_EVENTS)
		return;
	/* the timestamps of a chunk without records bound nothing (spec 5.3) */
	if (ci->events && (!info->events || ci->first_ts < info->first_ts))
		info->first_ts = ci->first_ts;
	if (ci->events && ci->last_ts > info->last_ts)
		info->last_ts = ci->last_ts;
	info->event_chunks++;
	info->events += ci->events;
	info->raw_bytes += ci->raw_size;
	info->stored_bytes += ci->stored_size;
}

static void count_types(struct st_reader *r, const struct st_chunk_buf *buf)
{
	size_t pos = 0;
	const struct st_event_header *e;

	while (st_chunk_next(buf, &pos, &e) > 0)
		r->type_events[r->type_slot[e->type] - 1]++;
}

/* The head of an index payload, checked against the payload's size (section 5.5). */
struct index_head {
	uint32_t nchunks, ntypes, nlost;
};

static int index_head(const uint8_t *p, size_t len, struct index_head *ih)
{
	if (len < ST_INDEX_HEAD_SIZE)
		return ST_EFORMAT;
	ih->nchunks = st_ld32(p);
	ih->ntypes = st_ld32(p + 4);
	ih->nlost = st_ld32(p + 8);
	if (len != ST_INDEX_HEAD_SIZE + (uint64_t)ih->nchunks * ST_INDEX_CHUNK_SIZE +
		   ((uint64_t)ih->ntypes + ih->nlost) * ST_INDEX_COUNT_SIZE)
		return ST_EFORMAT;
	return 0;
}

/*
 * An index chunk met by a scan must be well formed, and its lost section
 * is the latest lost counts. The chunk list and type counts are the scan's
 * own, so its other entries are not used.
 */
static int scan_index(struct st_reader *r, const uint8_t *p, size_t len, const char **why)
{
	struct index_head ih;

	if (index_head(p, len, &ih))
		return *why = "index size differs from its counts", ST_EFORMAT;
	return parse_lost(r, p + len - (size_t)ih.nlost * ST_LOST_ENTRY_SIZE, ih.nlost, why);
}

/* A lost chunk's payload: entries over earlier counts of the same CPUs. */
static int use_lost_chunk(struct st_reader *r, const uint8_t *p, size_t len, const char **why)
{
	if (len % ST_LOST_ENTRY_SIZE)
		return *why = "lost chunk size is not a multiple of 16", ST_EFORMAT;
	return parse_lost(r, p, len / ST_LOST_ENTRY_SIZE, why);
}

/* What a scan does with the payload of an intact chunk. */
static int scan_use_chunk(struct st_reader *r, const struct st_chunk_hdr *h, const char **why)
{
	const uint8_t *p = r->scratch.data;
	size_t len = r->scratch.len;

	switch (h->kind) {
	case ST_CHUNK_META:
		return parse_meta(r, p, len, why);
	case ST_CHUNK_SCHEMA:
		return set_schema(r, p, len, why);
	case ST_CHUNK_LOST:
		return use_lost_chunk(r, p, len, why);
	case ST_CHUNK_EVENTS:
		count_types(r, &r->scratch);
		return 0;
	case ST_CHUNK_INDEX:
		return scan_index(r, p, len, why);
	default:
		return 0;	/* unknown kinds */
	}
}

/* ---- Scan: every chunk in file order, damaged bytes skipped -------------- */

/* Where a scan stands. */
struct scan_state {
	uint64_t off;		/* where the next chunk should start */
	uint64_t valid_end;	/* end of the last intact chunk */
	uint64_t next_seq;	/* sequence number the next chunk should have */
	int after_skip;		/* bytes were skipped since the last intact chunk */
};

/*
 * One chunk at s->off: 0 and its info when intact. Otherwise *extent is its
 * stored size when its header is intact (the header's checksum vouches for
 * where the next chunk starts), 0 when the header itself is bad.
 */
static int scan_chunk(struct st_reader *r, const struct scan_state *s, struct st_chunk_info *ci,
		      uint64_t *extent, const char **why)
{
	struct st_chunk_hdr h;
	int err = read_chunk_header(r, s->off, &h, why), in_order;

	*extent = 0;
	if (err)
		return err;
	*extent = ST_CHUNK_HEADER_SIZE + (uint64_t)h.payload_size;
	if (h.seq < s->next_seq)
		return *why = "chunk sequence number out of order", ST_EFORMAT;
	if (h.kind == ST_CHUNK_EVENTS && !r->types)
		return *why = "events chunk before the schema", ST_EFORMAT;
	err = load_payload(r, s->off, &h, &r->scratch, &in_order, why);
	if (!err)
		err = scan_use_chunk(r, &h, why);
	if (err)
		return err;
	*ci = (struct st_chunk_info){
		.offset = s->off, .kind = h.kind, .seq = h.seq,
		.stored_size = ST_CHUNK_HEADER_SIZE + h.payload_size, .raw_size = h.raw_size,
		.events = h.events, .first_ts = h.first_ts, .last_ts = h.last_ts,
	};
	return 0;
}

/*
 * Takes an intact chunk. Its sequence number says how many chunks are
 * missing before it: in the bytes skipped since the last intact chunk, or,
 * when it follows that chunk directly, cut out of the file whole. A cut
 * skipped no bytes, so it is no damaged range: the chunk list shows it, as
 * a chunk whose seq jumps from the one before it, and it can be the damage.
 */
static int scan_accept(struct st_reader *r, struct scan_state *s, const struct st_chunk_info *ci)
{
	if (chunk_add(r, ci))
		return ST_ENOMEM;
	info_add_chunk(&r->info, ci);
	r->info.missing_chunks += ci->seq - s->next_seq;
	if (s->after_skip)
		r->damage[r->ndamage - 1].chunks = (uint32_t)(ci->seq - s->next_seq);
	else if (ci->seq > s->next_seq && !r->info.damage[0])
		snprintf(r->info.damage, sizeof(r->info.damage),
			 "chunk %llu at offset %llu: absent, chunk %u comes next",
			 (unsigned long long)s->next_seq, (unsigned long long)s->off, ci->seq);
	s->off += ci->stored_size;
	s->valid_end = s->off;
	s->next_seq = (uint64_t)ci->seq + 1;
	s->after_skip = 0;
	return 0;
}

/*
 * Skips [s->off, end), never empty, for the reason given; a range that
 * starts where the previous one ends extends it. The first reason is also
 * info.damage.
 */
static int damage_add(struct st_reader *r, struct scan_state *s, uint64_t end, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int damage_add(struct st_reader *r, struct scan_state *s, uint64_t end, const char *fmt, ...)
{
	struct st_damage *d = r->ndamage ? &r->damage[r->ndamage - 1] : NULL;
	va_list ap;

	if (!d || d->offset + d->size != s->off) {
		if (!(r->ndamage & (r->ndamage - 1))) {
			d = realloc(r->damage, (r->ndamage ? r->ndamage * 2 : 4) * sizeof(*d));
			if (!d)
				return ST_ENOMEM;
			r->damage = d;
		}
		d = &r->damage[r->ndamage++];
		*d = (struct st_damage){ .offset = s->off, .first_seq = (uint32_t)s->next_seq };
		va_start(ap, fmt);
		vsnprintf(d->why, sizeof(d->why), fmt, ap);
		va_end(ap);
		if (!r->info.damage[0])
			memcpy(r->info.damage, d->why, sizeof(r->info.damage));
	}
	d->size += end - s->off;
	r->info.skipped_bytes += end - s->off;
	s->off = end;
	s->after_skip = 1;
	return 0;
}

/* A chunk header that decodes (magic, checksum, limits) and may come next. */
static int header_candidate(const uint8_t *p, uint64_t min_seq)
{
	struct st_chunk_hdr h;
	const char *why;

	return !st_chunk_hdr_decode(p, &h, &why) && h.seq >= min_seq;
}

/*
 * First offset >= from holding a chunk header that may come next (seq at
 * least min_seq); r->size when there is none (or the rest cannot be read).
 * The file is read in windows and a header checked only where the magic
 * matches, so the work stays linear in the bytes searched, whatever they hold.
 */
static int find_chunk_header(struct st_reader *r, uint64_t from, uint64_t min_seq, uint64_t *found)
{
	uint8_t magic[4];
	const uint8_t *p;

	st_st32(magic, ST_CHUNK_MAGIC);
	*found = r->size;
	if (!r->mem && !r->window && !(r->window = malloc(SCAN_WINDOW)))
		return ST_ENOMEM;
	while (from < r->size && r->size - from >= ST_CHUNK_HEADER_SIZE) {
		size_t len = r->size - from < SCAN_WINDOW ? (size_t)(r->size - from) : SCAN_WINDOW;
		size_t last = len - ST_CHUNK_HEADER_SIZE;	/* last position a whole header fits */

		if (read_at(r, from, len, r->window, &p))
			return 0;
		for (size_t i = 0; i <= last; i++) {
			const uint8_t *q = memmem(p + i, last + sizeof(magic) - i, magic, sizeof(magic));

			if (!q)
				break;
			i = (size_t)(q - p);
			if (header_candidate(q, min_seq)) {
				*found = from + i;
				return 0;
			}
		}
		from += last + 1;
	}
	return 0;
}

/* The 32 bytes at `off` are the file's last: a trailer pointing at the chunk just before? */
static int scan_trailer(struct st_reader *r, uint64_t off)
{
	uint8_t raw[ST_TRAILER_SIZE];
	const struct st_chunk_info *last = r->nchunks ? &r->chunks[r->nchunks - 1] : NULL;
	uint64_t index_off, index_size;
	const uint8_t *p;

	if (!last || last->kind != ST_CHUNK_INDEX || last->offset + last->stored_size != off ||
	    read_at(r, off, sizeof(raw), raw, &p))
		return ST_ETRUNCATED;
	if (st_trailer_check(p, &index_off, &index_size) || index_off != last->offset ||
	    index_size != last->stored_size)
		return ST_EFORMAT;
	return 0;
}

/*
 * One step of the scan at s->off: the trailer, an intact chunk, or a skipped
 * range. A chunk that is not intact is skipped up to where its intact header
 * says it ends, or, when the header is bad, up to the next offset holding a
 * plausible chunk header; the step after checks that chunk in full.
 */
static int scan_step(struct st_reader *r, struct scan_state *s)
{
	struct st_chunk_info ci;
	uint64_t extent, next;
	const char *why;
	int err;

	if (r->size - s->off == ST_TRAILER_SIZE) {
		err = scan_trailer(r, s->off);
		if (!err) {
			r->info.footer_present = 1;
			s->valid_end = s->off = r->size;
			return 0;
		}
		if (err == ST_EFORMAT)
			return damage_add(r, s, r->size,
					  "trailer at offset %llu: bad magic, checksum or index location",
					  (unsigned long long)s->off);
	}
	err = scan_chunk(r, s, &ci, &extent, &why);
	if (!err)
		return scan_accept(r, s, &ci);
	if (err == ST_ENOMEM)
		return err;
	if (extent)
		next = extent < r->size - s->off ? s->off + extent : r->size;
	else if (find_chunk_header(r, s->off + 1, s->next_seq, &next))
		return ST_ENOMEM;
	return damage_add(r, s, next, "chunk %llu at offset %llu: %s",
			  (unsigned long long)s->next_seq, (unsigned long long)s->off, why);
}

/*
 * A file being written (ST_READ_LIVE) ends, for now, at the first chunk that
 * is not intact: its writer may not have written all of it yet (an io_uring
 * writer at a queue depth above 1 may even finish a later chunk first).
 * That is not damage; st_reader_refresh() tries it again.
 */
static int scan_live(struct st_reader *r, struct scan_state *s)
{
	struct st_chunk_info ci;
	uint64_t extent;
	const char *why;
	int err;

	while (r->size - s->off >= ST_CHUNK_HEADER_SIZE) {
		err = scan_chunk(r, s, &ci, &extent, &why);
		if (err == ST_ENOMEM || (!err && scan_accept(r, s, &ci)))
			return ST_ENOMEM;
		if (err)
			break;
	}
	return 0;
}

/* Does the file end with a trailer (its writer closed it)? */
static int ends_with_trailer(const struct st_reader *r)
{
	uint8_t raw[ST_TRAILER_SIZE];
	uint64_t index_off, index_size;
	const uint8_t *p;

	return r->size >= ST_FILE_HEADER_SIZE + ST_TRAILER_SIZE &&
	       !read_at(r, r->size - ST_TRAILER_SIZE, sizeof(raw), raw, &p) &&
	       !st_trailer_check(p, &index_off, &index_size);
}

static int scan(struct st_reader *r)
{
	struct scan_state s = { .off = ST_FILE_HEADER_SIZE, .valid_end = ST_FILE_HEADER_SIZE,
				.next_seq = r->live_seq };

	if (r->live) {
		s.off = s.valid_end = r->live_off;
		if (!r->live_done && !ends_with_trailer(r)) {
			if (scan_live(r, &s))
				return fail(r, ST_ENOMEM, "out of memory");
			r->live_off = s.off;
			r->live_seq = s.next_seq;
			r->info.valid_size = s.valid_end;
			return 0;
		}
		r->live = 0;
	}
	while (s.off < r->size)
		if (scan_step(r, &s))
			return fail(r, ST_ENOMEM, "out of memory");
	r->info.valid_size = s.valid_end;
	r->info.damaged_ranges = r->ndamage;
	if (!r->info.footer_present && !r->info.damage[0])
		snprintf(r->info.damage, sizeof(r->info.damage),
			 "no trailer: the file ends after chunk %u (cut, or never closed)",
			 r->nchunks ? r->chunks[r->nchunks - 1].seq : 0);
	return 0;
}

size_t st_damage_count(const struct st_reader *r)
{
	return r->ndamage;
}

const struct st_damage *st_damage_at(const struct st_reader *r, size_t i)
{
	return i < r->ndamage ? &r->damage[i] : NULL;
}

/* ---- Footer ----------------------------------------------------------- */

static int index_entry(const uint8_t *p, uint64_t expect_off, uint32_t seq, struct st_chunk_info *ci)
{
	ci->offset = st_ld64(p);
	ci->kind = st_ld32(p + 8);
	ci->seq = st_ld32(p + 12);
	ci->stored_size = st_ld32(p + 16);
	ci->raw_size = st_ld32(p + 20);
	ci->events = st_ld32(p + 24);
	ci->first_ts = st_ld64(p + 32);
	ci->last_ts = st_ld64(p + 40);
	if (ci->offset != expect_off || ci->seq != seq || ci->stored_size < ST_CHUNK_HEADER_SIZE ||
	    ci->stored_size - ST_CHUNK_HEADER_SIZE > ST_MAX_CHUNK_STORED ||
	    ci->raw_size > ST_MAX_CHUNK_RAW || ci->first_ts > ci->last_ts)
		return ST_EFORMAT;
	return 0;
}

static int footer_chunks(struct st_reader *r, const uint8_t *p, uint32_t n, uint64_t index_off)
{
	uint64_t off = ST_FILE_HEADER_SIZE;
	struct st_chunk_info ci;

	for (uint32_t i = 0; i < n; i++, p += ST_INDEX_CHUNK_SIZE) {
		if (index_entry(p, off, i, &ci) || chunk_add(r, &ci))
			return ST_EFORMAT;
		off += ci.stored_size;
		if (off > index_off)
			return ST_EFORMAT;
	}
	return off == index_off ? 0 : ST_EFORMAT;
}

static int footer_counts(struct st_reader *r, const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++, p += ST_INDEX_COUNT_SIZE) {
		uint16_t slot = r->type_slot[st_ld16(p)];

		if (!slot)
			return ST_EFORMAT;
		r->type_events[slot - 1] = st_ld64(p + 8);
	}
	return 0;
}

/*
 * Index payload (in r->scratch) into the chunk list; its per-type counts and
 * lost entries are copied to *tail, used once the chunks it lists are read:
 * the counts need the schema, and the lost entries come after every lost
 * chunk.
 */
static int parse_index(struct st_reader *r, uint64_t index_off, struct st_bytes *tail,
		       struct index_head *ih)
{
	const uint8_t *p = r->scratch.data;
	size_t tail_len;
	uint8_t *dst;

	if (index_head(p, r->scratch.len, ih) ||
	    footer_chunks(r, p + ST_INDEX_HEAD_SIZE, ih->nchunks, index_off))
		return ST_EFORMAT;
	tail_len = ((size_t)ih->ntypes + ih->nlost) * ST_INDEX_COUNT_SIZE;
	dst = st_bytes_put(tail, tail_len);
	if (!dst && tail_len)
		return ST_ENOMEM;
	if (tail_len)
		memcpy(dst, p + r->scratch.len - tail_len, tail_len);
	return 0;
}

/* Reads the index chunk the trailer points at into r->scratch. */
static int load_index(struct st_reader *r, struct st_chunk_info *ci)
{
	uint8_t raw[ST_TRAILER_SIZE];
	uint64_t index_off, index_size;
	struct st_chunk_hdr h;
	const uint8_t *p;
	const char *why;
	int in_order;

	if (r->size < ST_FILE_HEADER_SIZE + ST_CHUNK_HEADER_SIZE + ST_TRAILER_SIZE ||
	    read_at(r, r->size - ST_TRAILER_SIZE, sizeof(raw), raw, &p) ||
	    st_trailer_check(p, &index_off, &index_size))
		return ST_EFORMAT;
	if (index_off < ST_FILE_HEADER_SIZE || index_off > r->size - ST_TRAILER_SIZE ||
	    index_size != r->size - ST_TRAILER_SIZE - index_off ||
	    read_chunk_header(r, index_off, &h, &why) || h.kind != ST_CHUNK_INDEX ||
	    h.payload_size + (uint64_t)ST_CHUNK_HEADER_SIZE != index_size ||
	    load_payload(r, index_off, &h, &r->scratch, &in_order, &why))
		return ST_EFORMAT;
	*ci = (struct st_chunk_info){
		.offset = index_off, .kind = h.kind, .seq = h.seq,
		.stored_size = (uint32_t)index_size, .raw_size = h.raw_size,
	};
	return 0;
}

/* Metadata, schema and lost chunks listed by the index, in file order. */
static int footer_descriptors(struct st_reader *r)
{
	const char *why;

	for (size_t i = 0; i < r->nchunks; i++) {
		uint32_t kind = r->chunks[i].kind;
		const uint8_t *p;
		int err;

		if (kind != ST_CHUNK_META && kind != ST_CHUNK_SCHEMA && kind != ST_CHUNK_LOST)
			continue;
		if (st_chunk_decode(r, i, &r->scratch))
			return ST_EFORMAT;
		p = r->scratch.data;
		if (kind == ST_CHUNK_META)
			err = parse_meta(r, p, r->scratch.len, &why);
		else if (kind == ST_CHUNK_SCHEMA)
			err = set_schema(r, p, r->scratch.len, &why);
		else
			err = use_lost_chunk(r, p, r->scratch.len, &why);
		if (err)
			return ST_EFORMAT;
	}
	return r->types ? 0 : ST_EFORMAT;
}

static int read_footer(struct st_reader *r)
{
	struct st_bytes tail = { 0 };
	struct st_chunk_info index_ci;
	struct index_head ih;
	const char *why;
	int err = load_index(r, &index_ci);

	if (!err)
		err = parse_index(r, index_ci.offset, &tail, &ih);
	if (!err)
		err = footer_descriptors(r);
	if (!err)
		err = footer_counts(r, tail.data, ih.ntypes);
	if (!err && ih.nlost)
		err = parse_lost(r, tail.data + (size_t)ih.ntypes * ST_INDEX_COUNT_SIZE, ih.nlost, &why);
	if (!err && index_ci.seq != r->nchunks)
		err = ST_EFORMAT;
	if (!err)
		err = chunk_add(r, &index_ci);
	st_bytes_free(&tail);
	if (err)
		return err;
	for (size_t i = 0; i < r->nchunks; i++)
		info_add_chunk(&r->info, &r->chunks[i]);
	r->info.footer_present = 1;
	r->info.valid_size = r->size;
	return 0;
}

/* Forgets what a failed footer read left behind, before scanning. */
static void reset_contents(struct st_reader *r)
{
	for (size_t i = 0; i < r->ntypes; i++) {
		r->type_size[r->types[i].id] = 0;
		r->type_slot[r->types[i].id] = 0;
		st_type_free(&r->types[i]);
	}
	for (size_t i = 0; i < r->nmeta; i++) {
		free(r->meta[i].key);
		free(r->meta[i].value);
	}
	free(r->types);
	free(r->type_events);
	r->types = NULL;
	r->type_events = NULL;
	r->ntypes = r->nmeta = r->nlost = r->nchunks = r->ndamage = 0;
	r->lost_compacted = r->lost_order = r->meta_order = 0;
	r->info = (struct st_file_info){ .major = r->info.major, .minor = r->info.minor };
}

/*
 * The times of events chunk i's records, *first and *last, when its header's
 * range is wider than a recording can be (ST_PLAUSIBLE_SPAN_NS): the spec
 * lets a header's range be wider than its records', and a range of
 * 0..2^64-1 would make the file's span 584 years and every rate 0. A chunk
 * that does not decode keeps its header's range (the cursor reports it).
 */
static int records_span(const struct st_reader *r, size_t i, uint64_t *first, uint64_t *last)
{
	const struct st_chunk_info *ci = &r->chunks[i];
	struct st_chunk_buf buf = { 0 };
	const struct st_event_header *e;
	const char *why;
	size_t pos = 0;
	int in_order;

	if (ci->kind != ST_CHUNK_EVENTS || !ci->events || ci->last_ts - ci->first_ts < ST_PLAUSIBLE_SPAN_NS ||
	    st_chunk_load(r, i, &buf, &in_order, &why)) {
		st_chunk_buf_free(&buf);
		return 0;
	}
	*first = UINT64_MAX;
	*last = 0;
	while (st_chunk_next(&buf, &pos, &e) > 0) {
		*first = e->ts < *first ? e->ts : *first;
		*last = e->ts > *last ? e->ts : *last;
	}
	st_chunk_buf_free(&buf);
	return 1;
}

/* The file's time span from its records where a chunk header's range is implausible. */
static void span_from_records(struct st_reader *r)
{
	uint64_t first, last;
	size_t i;

	for (i = 0; i < r->nchunks && !records_span(r, i, &first, &last); i++)
		;
	if (i == r->nchunks)
		return;
	r->info.first_ts = r->info.last_ts = 0;
	r->info.wide_chunks = 0;
	for (i = 0; i < r->nchunks; i++) {
		const struct st_chunk_info *ci = &r->chunks[i];

		if (ci->kind != ST_CHUNK_EVENTS || !ci->events)
			continue;
		first = ci->first_ts;
		last = ci->last_ts;
		r->info.wide_chunks += records_span(r, i, &first, &last);
		if (!r->info.first_ts || first < r->info.first_ts)
			r->info.first_ts = first;
		if (last > r->info.last_ts)
			r->info.last_ts = last;
	}
}

/* Totals, and the lost counts in CPU order whatever order the file lists them in. */
static void info_finish(struct st_reader *r)
{
	r->info.file_size = r->size;
	r->info.lost_tail_bytes = r->size - r->info.valid_size;
	r->info.lost_events = 0;
	lost_compact(r);
	for (size_t i = 0; i < r->nlost; i++)
		r->info.lost_events = st_add_count(r->info.lost_events, r->lost[i].lost);
	span_from_records(r);
}

static int open_contents(struct st_reader *r, unsigned flags)
{
	uint8_t raw[ST_FILE_HEADER_SIZE];
	const uint8_t *p;
	int err;

	if (read_at(r, 0, sizeof(raw), raw, &p))
		return fail(r, ST_ETRUNCATED, "shorter than a file header (%llu bytes)",
			    (unsigned long long)r->size);
	err = st_file_header_check(p, &r->info.major, &r->info.minor);
	if (err == ST_EVERSION)
		return fail(r, err, "format version %u.%u; this library reads %u.x",
			    r->info.major, r->info.minor, ST_FORMAT_MAJOR);
	if (err)
		return fail(r, err, "not a .sttrace file (bad file header)");
	if (!(flags & (ST_READ_SCAN | ST_READ_LIVE)) && !read_footer(r))
		goto done;
	reset_contents(r);
	r->info.recovered = !(flags & (ST_READ_SCAN | ST_READ_LIVE));
	r->live = (flags & ST_READ_LIVE) != 0;
	r->live_off = ST_FILE_HEADER_SIZE;
	err = scan(r);
	if (err)
		return err;
	if (!r->types)
		return fail(r, ST_ETRUNCATED, "no schema: %s", r->info.damage);
done:
	meta_finish(r);
	info_finish(r);
	return 0;
}

static struct st_reader *reader_new(void)
{
	struct st_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fd = -1;
	pthread_mutex_init(&r->msg_lock, NULL);
	r->type_size = calloc(ST_NUM_TYPE_IDS, sizeof(*r->type_size));
	r->type_slot = calloc(ST_NUM_TYPE_IDS, sizeof(*r->type_slot));
	if (!r->type_size || !r->type_slot) {
		st_reader_close(r);
		return NULL;
	}
	return r;
}

int st_reader_open_mem(struct st_reader **rp, const void *buf, size_t len, unsigned flags)
{
	struct st_reader *r = reader_new();

	*rp = r;
	if (!r)
		return ST_ENOMEM;
	r->mem = buf;
	r->size = len;
	if (!buf)
		return fail(r, ST_EINVAL, "no buffer");
	return open_contents(r, flags);
}

int st_reader_open(struct st_reader **rp, const char *path, unsigned flags)
{
	struct st_reader *r = reader_new();
	struct stat st;

	*rp = r;
	if (!r)
		return ST_ENOMEM;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		return fail(r, ST_EIO, "cannot open: %s", strerror(errno));
	if (fstat(r->fd, &st))
		return fail(r, ST_EIO, "cannot stat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(r, ST_EINVAL, "not a regular file");
	r->size = (uint64_t)st.st_size;
	return open_contents(r, flags);
}

int st_reader_refresh(struct st_reader *r, int done)
{
	struct stat st;
	size_t before = r->nchunks;
	int err;

	if (!r->live)
		return 0;
	if (fstat(r->fd, &st))
		return fail(r, ST_EIO, "cannot stat: %s", strerror(errno));
	r->size = (uint64_t)st.st_size;
	r->live_done = done;
	err = scan(r);
	if (err)
		return err;
	if (!r->live && !r->info.footer_present)
		r->info.recovered = 1;
	meta_finish(r);
	info_finish(r);
	return (int)(r->nchunks - before);
}

int st_reader_live(const struct st_reader *r)
{
	return r->live;
}

void st_reader_close(struct st_reader *r)
{
	if (!r)
		return;
	reset_contents(r);
	if (r->fd >= 0)
		close(r->fd);
	st_chunk_buf_free(&r->scratch);
	pthread_mutex_destroy(&r->msg_lock);
	free(r->type_size);
	free(r->type_slot);
	free(r->chunks);
	free(r->meta);
	free(r->lost);
	free(r->damage);
	free(r->window);
	free(r);
}
