/* SPDX-License-Identifier: MIT */
/*
 * spec_encode.h - bytes of a .sttrace file encoded by hand from
 * spec/sttrace-format.md, not with the library's encoder, so that a test
 * built on them also checks that the spec and the code agree: chunks with
 * their checksums (section 4.1) and the trailer (section 6).
 */
#ifndef STTRACE_SPEC_ENCODE_H
#define STTRACE_SPEC_ENCODE_H

#include <stdint.h>
#include <string.h>

#include <xxhash.h>

/* Little-endian stores: the tests run on little-endian hosts. */
static inline __attribute__((unused)) void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline __attribute__((unused)) void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* A chunk header's fields, as section 4.1 lists them. */
struct spec_hdr {
	uint32_t kind, seq, flags, payload_size, raw_size, events;
	uint64_t first_ts, last_ts;
};

/* A chunk: header with its checksums + payload; returns its size. */
static inline __attribute__((unused)) size_t
spec_chunk_hdr(unsigned char *out, const struct spec_hdr *h, const void *payload)
{
	memset(out, 0, 64);
	put32(out, 0x4b435453);	/* "STCK" */
	put32(out + 4, h->kind);
	put32(out + 8, h->seq);
	put32(out + 12, h->flags);
	put32(out + 16, h->payload_size);
	put32(out + 20, h->raw_size);
	put32(out + 24, h->events);
	put64(out + 32, h->first_ts);
	put64(out + 40, h->last_ts);
	put64(out + 48, XXH64(payload, h->payload_size, 0));
	put64(out + 56, XXH64(out, 56, 0));
	memcpy(out + 64, payload, h->payload_size);
	return 64 + (size_t)h->payload_size;
}

/* A chunk stored raw (flags 0), not an events chunk: header + payload; returns its size. */
static inline __attribute__((unused)) size_t
spec_chunk(unsigned char *out, uint32_t kind, uint32_t seq, const void *payload, uint32_t len)
{
	return spec_chunk_hdr(out, &(struct spec_hdr){ .kind = kind, .seq = seq, .payload_size = len,
						      .raw_size = len }, payload);
}

/* Trailer: index offset, index size, checksum of those 16 bytes, magic. */
static inline __attribute__((unused)) size_t
spec_trailer(unsigned char *out, uint64_t index_off, uint64_t index_size)
{
	put64(out, index_off);
	put64(out + 8, index_size);
	put64(out + 16, XXH64(out, 16, 0));
	memcpy(out + 24, "STTRAILR", 8);
	return 32;
}

#endif /* STTRACE_SPEC_ENCODE_H */
