/* SPDX-License-Identifier: MIT */
/*
 * common.c - error strings, byte buffers, counts that do not wrap, checksums
 * and the fixed structures (file header, chunk header, trailer) shared by the
 * writer and the reader.
 */
#include <stdlib.h>
#include <xxhash.h>

#include "internal.h"

const char *st_strerror(int err)
{
	switch (err) {
	case ST_OK:		return "success";
	case ST_EIO:		return "I/O error";
	case ST_ENOMEM:		return "out of memory";
	case ST_EINVAL:		return "invalid argument";
	case ST_EFORMAT:	return "malformed file";
	case ST_EVERSION:	return "unsupported format version";
	case ST_ECHECKSUM:	return "checksum mismatch";
	case ST_ETRUNCATED:	return "file truncated";
	case ST_ENOSPC:		return "no space left on device";
	case ST_ENOTFOUND:	return "not found";
	case ST_ECOMPRESS:	return "compression error";
	default:		return "unknown error";
	}
}

int st_bytes_reserve(struct st_bytes *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 256;
	uint8_t *p;

	if (more <= b->cap - b->len)
		return 0;
	while (cap - b->len < more)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p)
		return ST_ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

uint8_t *st_bytes_put(struct st_bytes *b, size_t n)
{
	uint8_t *p;

	if (st_bytes_reserve(b, n))
		return NULL;
	p = b->data + b->len;
	b->len += n;
	return p;
}

void st_bytes_free(struct st_bytes *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

char *st_str_dup(const uint8_t *p, size_t len)
{
	char *s;

	if (memchr(p, '\0', len))
		return NULL;
	s = malloc(len + 1);
	if (s) {
		memcpy(s, p, len);
		s[len] = '\0';
	}
	return s;
}

uint64_t st_add_count(uint64_t a, uint64_t b)
{
	return a > ST_COUNT_SATURATED - b ? ST_COUNT_SATURATED : a + b;
}

uint64_t st_xxh(const void *p, size_t len)
{
	return XXH64(p, len, ST_XXH_SEED);
}

/*
 * A fuzzing build accepts any checksum, so the fuzzer's mutations reach the
 * parsers behind the checks instead of stopping at them (the convention
 * zstd and libpng follow). Never defined in a normal build.
 */
int st_xxh_ok(uint64_t stored, const void *p, size_t len)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	(void)stored, (void)p, (void)len;
	return 1;
#else
	return stored == st_xxh(p, len);
#endif
}

/*
 * File header: magic[8] major:u16 minor:u16 header_size:u32 flags:u32
 * reserved:u32 xxh64(bytes 0..23):u64.
 */
void st_file_header_encode(uint8_t out[ST_FILE_HEADER_SIZE])
{
	memset(out, 0, ST_FILE_HEADER_SIZE);
	memcpy(out, ST_FILE_MAGIC, 8);
	st_st16(out + 8, ST_FORMAT_MAJOR);
	st_st16(out + 10, ST_FORMAT_MINOR);
	st_st32(out + 12, ST_FILE_HEADER_SIZE);
	st_st64(out + 24, st_xxh(out, 24));
}

int st_file_header_check(const uint8_t *in, uint16_t *major, uint16_t *minor)
{
	if (memcmp(in, ST_FILE_MAGIC, 8))
		return ST_EFORMAT;
	if (!st_xxh_ok(st_ld64(in + 24), in, 24))
		return ST_ECHECKSUM;
	*major = st_ld16(in + 8);
	*minor = st_ld16(in + 10);
	if (*major != ST_FORMAT_MAJOR)
		return ST_EVERSION;
	if (st_ld32(in + 12) != ST_FILE_HEADER_SIZE)
		return ST_EFORMAT;
	return 0;
}

/* Trailer: index_offset:u64 index_size:u64 xxh64(bytes 0..15):u64 magic[8]. */
void st_trailer_encode(uint8_t out[ST_TRAILER_SIZE], uint64_t index_offset, uint64_t index_size)
{
	st_st64(out, index_offset);
	st_st64(out + 8, index_size);
	st_st64(out + 16, st_xxh(out, 16));
	memcpy(out + 24, ST_TRAILER_MAGIC, 8);
}

int st_trailer_check(const uint8_t *in, uint64_t *index_offset, uint64_t *index_size)
{
	if (memcmp(in + 24, ST_TRAILER_MAGIC, 8))
		return ST_EFORMAT;
	if (!st_xxh_ok(st_ld64(in + 16), in, 16))
		return ST_ECHECKSUM;
	*index_offset = st_ld64(in);
	*index_size = st_ld64(in + 8);
	return 0;
}

/*
 * Chunk header: magic:u32 kind:u32 seq:u32 flags:u32 payload_size:u32
 * raw_size:u32 events:u32 reserved:u32 first_ts:u64 last_ts:u64
 * payload_xxh:u64 header_xxh(bytes 0..55):u64.
 */
void st_chunk_hdr_encode(uint8_t out[ST_CHUNK_HEADER_SIZE], const struct st_chunk_hdr *h)
{
	memset(out, 0, ST_CHUNK_HEADER_SIZE);
	st_st32(out, ST_CHUNK_MAGIC);
	st_st32(out + 4, h->kind);
	st_st32(out + 8, h->seq);
	st_st32(out + 12, h->flags);
	st_st32(out + 16, h->payload_size);
	st_st32(out + 20, h->raw_size);
	st_st32(out + 24, h->events);
	st_st64(out + 32, h->first_ts);
	st_st64(out + 40, h->last_ts);
	st_st64(out + 48, h->payload_xxh);
	st_st64(out + 56, st_xxh(out, 56));
}

int st_chunk_hdr_decode(const uint8_t *in, struct st_chunk_hdr *h, const char **why)
{
	if (st_ld32(in) != ST_CHUNK_MAGIC)
		return *why = "bad chunk magic", ST_EFORMAT;
	if (!st_xxh_ok(st_ld64(in + 56), in, 56))
		return *why = "chunk header checksum mismatch", ST_ECHECKSUM;
	h->kind = st_ld32(in + 4);
	h->seq = st_ld32(in + 8);
	h->flags = st_ld32(in + 12);
	h->payload_size = st_ld32(in + 16);
	h->raw_size = st_ld32(in + 20);
	h->events = st_ld32(in + 24);
	h->first_ts = st_ld64(in + 32);
	h->last_ts = st_ld64(in + 40);
	h->payload_xxh = st_ld64(in + 48);
	if (h->flags & ~ST_CHUNK_F_ZSTD)
		return *why = "unknown chunk flags", ST_EFORMAT;
	if (h->raw_size > ST_MAX_CHUNK_RAW || h->payload_size > ST_MAX_CHUNK_STORED)
		return *why = "chunk larger than the format allows", ST_EFORMAT;
	if (!(h->flags & ST_CHUNK_F_ZSTD) && h->payload_size != h->raw_size)
		return *why = "stored chunk with raw size != payload size", ST_EFORMAT;
	if (h->first_ts > h->last_ts)
		return *why = "chunk first timestamp after last", ST_EFORMAT;
	return 0;
}

int st_chunk_peek(const void *buf, size_t len, struct st_chunk_info *ci)
{
	struct st_chunk_hdr h;
	const char *why;

	if (len < ST_CHUNK_HEADER_SIZE || st_chunk_hdr_decode(buf, &h, &why))
		return ST_EFORMAT;
	*ci = (struct st_chunk_info){
		.kind = h.kind, .seq = h.seq, .stored_size = ST_CHUNK_HEADER_SIZE + h.payload_size,
		.raw_size = h.raw_size, .events = h.events, .first_ts = h.first_ts, .last_ts = h.last_ts,
	};
	return 0;
}
