/* SPDX-License-Identifier: MIT */
/*
 * internal.h - on-disk layout constants and helpers shared by libsttrace's
 * writer, reader and schema code. Not installed; spec/sttrace-format.md is the
 * normative description of every byte defined here.
 */
#ifndef STTRACE_INTERNAL_H
#define STTRACE_INTERNAL_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#include "sttrace.h"

/* File header: magic, version, size, flags, checksum of the bytes before it. */
#define ST_FILE_MAGIC		"\x89STT\r\n\x1a\n"
#define ST_FILE_HEADER_SIZE	32u

/* Chunk header, in front of every chunk payload. */
#define ST_CHUNK_MAGIC		0x4b435453u	/* "STCK" */
#define ST_CHUNK_HEADER_SIZE	64u
#define ST_CHUNK_F_ZSTD		1u	/* payload is one zstd frame; else stored raw */

/* Trailer: the last bytes of a complete file, locating the index chunk. */
#define ST_TRAILER_MAGIC	"STTRAILR"
#define ST_TRAILER_SIZE		32u

/* Every checksum is XXH64 with this seed. */
#define ST_XXH_SEED		0u

/* Limits a reader enforces so a hostile file cannot make it allocate absurdly. */
#define ST_MAX_CHUNK_RAW	(64u << 20)
#define ST_MAX_CHUNK_STORED	(ST_MAX_CHUNK_RAW + (ST_MAX_CHUNK_RAW >> 7) + 4096u)
#define ST_MAX_FIELDS		1024u
#define ST_MAX_NAME		4096u

/* Sizes of the fixed entries in schema, lost and index payloads. */
#define ST_SCHEMA_TYPE_SIZE	8u
#define ST_SCHEMA_FIELD_SIZE	10u
#define ST_LOST_ENTRY_SIZE	16u
#define ST_INDEX_HEAD_SIZE	16u
#define ST_INDEX_CHUNK_SIZE	48u
#define ST_INDEX_COUNT_SIZE	16u

#define ST_EVENT_HEADER_SIZE	((uint16_t)sizeof(struct st_event_header))
#define ST_NUM_TYPE_IDS		65536u

/* A chunk header as the host sees it. */
struct st_chunk_hdr {
	uint32_t kind;
	uint32_t seq;
	uint32_t flags;
	uint32_t payload_size;	/* stored payload bytes after the header */
	uint32_t raw_size;
	uint32_t events;
	uint64_t first_ts;
	uint64_t last_ts;
	uint64_t payload_xxh;
};

/* Little-endian loads and stores at any alignment. */
static inline uint16_t st_ld16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline uint32_t st_ld32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t st_ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline void st_st16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void st_st32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void st_st64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

/* A bounds-checked view for decoding payloads: every take fails past the end. */
struct st_span {
	const uint8_t *p;
	size_t left;
};

static inline const uint8_t *st_take(struct st_span *s, size_t n)
{
	const uint8_t *p = s->p;

	if (n > s->left)
		return NULL;
	s->p += n;
	s->left -= n;
	return p;
}

/* A growable byte buffer for encoding payloads. */
struct st_bytes {
	uint8_t *data;
	size_t len;
	size_t cap;
};

int st_bytes_reserve(struct st_bytes *b, size_t more);
uint8_t *st_bytes_put(struct st_bytes *b, size_t n);	/* NULL when out of memory */
void st_bytes_free(struct st_bytes *b);

/* A file's string (length given, no NUL allowed) as a C string; NULL if bad or no memory. */
char *st_str_dup(const uint8_t *p, size_t len);

/* Checksum of a byte range; whether it matches a stored one. */
uint64_t st_xxh(const void *p, size_t len);
int st_xxh_ok(uint64_t stored, const void *p, size_t len);

/* Sets the reader's message (under its lock: decoders may run in threads); returns err. */
int st_reader_fail(struct st_reader *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Room for cap bytes in buf, what it held kept; ST_ENOMEM. The one way a
 * chunk buffer grows: a large one is a mapping of its own (huge pages), which
 * realloc and free must not be given.
 */
int st_chunk_buf_reserve(struct st_chunk_buf *buf, size_t cap);
/*
 * st_chunk_decode() in two halves, for a cursor decoding chunks ahead in a
 * thread of its own: st_chunk_load() touches nothing of r but reads (chunk i
 * exists), so threads may call it at once, and says what is wrong in *why
 * (valid until the calling thread's next call), and in *in_order whether an
 * events chunk's records are in timestamp order; st_chunk_fail() makes that
 * r's message, naming the chunk.
 */
int st_chunk_load(const struct st_reader *r, size_t i, struct st_chunk_buf *buf, int *in_order,
		  const char **why);
int st_chunk_fail(struct st_reader *r, size_t i, int err, const char *why);

/* File header and trailer encode/check. */
void st_file_header_encode(uint8_t out[ST_FILE_HEADER_SIZE]);
int st_file_header_check(const uint8_t *in, uint16_t *major, uint16_t *minor);
void st_trailer_encode(uint8_t out[ST_TRAILER_SIZE], uint64_t index_offset, uint64_t index_size);
int st_trailer_check(const uint8_t *in, uint64_t *index_offset, uint64_t *index_size);

/* Chunk header encode/decode; decode checks magic, header checksum and limits. */
void st_chunk_hdr_encode(uint8_t out[ST_CHUNK_HEADER_SIZE], const struct st_chunk_hdr *h);
int st_chunk_hdr_decode(const uint8_t *in, struct st_chunk_hdr *h, const char **why);

/* Schema payload: encode types / decode into an owned array of types. */
int st_schema_encode(struct st_bytes *out, const struct st_type *types, size_t n);
int st_schema_decode(const uint8_t *p, size_t len, struct st_type **types, size_t *n,
		     const char **why);
/* Checks a type is well formed (sizes, fields inside the record). */
int st_type_check(const struct st_type *t, const char **why);
/* Deep copy of a type (names, docs, fields) / free of such a copy. */
int st_type_copy(struct st_type *dst, const struct st_type *src);
void st_type_free(struct st_type *t);

/*
 * Whole events (whole.c) over the stored records of a source handed in at
 * st_whole_open() (the cursor's): whole.c reads through it and never calls
 * back into the file that calls it. st_whole_busy() is 0 when the file's
 * records are its events as stored (the cursor then skips whole.c);
 * st_whole_refresh() plans again after a live reader took in more chunks.
 */
struct st_whole;
struct st_source {
	/* the next stored record in timestamp order: 1, 0 at the end, <0 an error */
	int (*next)(void *ctx, const struct st_event_header **ev);
	/*
	 * The next stored records in timestamp order as [*begin, *end), their
	 * bytes one after the other: a run of one chunk's records, or one
	 * record. They stay valid until the next call on the source.
	 */
	int (*run)(void *ctx, const uint8_t **begin, const uint8_t **end);
	void *ctx;
};
/*
 * Records of another layout are read into this build's a chunk at a time,
 * as the cursor decodes it (in its decoding thread when it has one):
 * st_whole_adapts() says whether the file needs it, st_whole_adapt_chunk()
 * writes the records of a decoded chunk into out in the built-in layouts,
 * those of types left out dropped (thread-safe: it reads the plan made at
 * open), or, when none needs it, swaps the two buffers' bytes (the
 * decompression context stays); an error of the chunk's bytes with *why
 * set, ST_ENOMEM without.
 */
int st_whole_adapts(const struct st_whole *w);
int st_whole_adapt_chunk(const struct st_whole *w, struct st_chunk_buf *in,
			 struct st_chunk_buf *out, const char **why);
/* flags: st_cursor_open()'s (ST_CURSOR_STAMPED); src is copied. */
int st_whole_open(struct st_reader *r, unsigned flags, const struct st_source *src,
		  struct st_whole **w);
int st_whole_next(struct st_whole *w, const struct st_event_header **ev);
/*
 * st_cursor_fill()'s loop over st_whole_next(): the events copied into buf
 * from *used on, each at an 8-byte boundary, while they fit in cap (*used
 * the bytes filled after); the last answer of st_whole_next(), 1 when buf
 * is full, with *left the event that did not fit (a file with stamped
 * issues keeps it in its window instead).
 */
int st_whole_fill(struct st_whole *w, uint8_t *buf, size_t cap, size_t *used,
		  const struct st_event_header **left);
int st_whole_busy(const struct st_whole *w);

/* st_cursor_fill()'s step: ev copied into buf at *used if it fits in cap (1), else 0. */
static inline int st_fill_append(uint8_t *buf, size_t cap, size_t *used, const struct st_event_header *ev)
{
	size_t span = st_record_span(ev);

	if (span > cap - *used)
		return 0;
	memcpy(buf + *used, ev, ev->size);
	*used += span;
	return 1;
}
void st_whole_refresh(struct st_whole *w);
void st_whole_close(struct st_whole *w);

#endif /* STTRACE_INTERNAL_H */
