/* SPDX-License-Identifier: MIT */
/*
 * craft-trace IN OUT MODE [N]: IN rewritten with valid checksums and absurd
 * contents, the kind of file a user can be sent in a bug report
 * (t_hostile_files.sh, t_stformat_scale.sh). Every chunk of IN but the index
 * is copied decoded and stored raw (flags 0), with MODE applied, and a new
 * index lists them with IN's type counts and lost section: all encoded from
 * the spec (spec_encode.h), not with the library's writer.
 *
 * Modes, on the records: ts-zero, ts-max, ts-backwards (timestamps),
 * cpu-max, cpu-random, fields-max, fields-random (every payload field),
 * strings-unterminated (string fields full, no NUL, with control bytes),
 * unknown-types (every third record of a type no schema declares). On the
 * chunks: hdr-events-plus (headers and index say 1000 records more),
 * hdr-range-wide (time ranges 0..2^64-1), swap-chunks (first and last events
 * chunks exchanged), dup-chunks (every events chunk twice), typecount-lie
 * (index counts + 1000), lost N (a lost chunk of N CPUs), meta N (a metadata
 * chunk of N keys), meta-huge (1 MiB metadata values).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/lib/sttrace.h"
#include "tests/format/spec_encode.h"

#define HDR_FIELDS 6	/* type size cpu ts pid tid */

struct chunk {
	uint32_t kind, events;
	uint64_t first_ts, last_ts;
	unsigned char *data;
	size_t len;
};

static struct chunk *chunks;
static size_t nchunks;
static unsigned long long rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static struct chunk *add_chunk(uint32_t kind, const void *data, size_t len)
{
	struct chunk *c = realloc(chunks, (nchunks + 1) * sizeof(*c));

	if (!c)
		return NULL;
	chunks = c;
	c = &chunks[nchunks];
	*c = (struct chunk){ .kind = kind, .data = malloc(len ? len : 1), .len = len };
	if (!c->data)
		return NULL;
	memcpy(c->data, data, len);
	nchunks++;
	return c;
}

static uint16_t ld16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* MODE applied to one record of type t (NULL: not in the schema). */
static void craft_record(unsigned char *p, const struct st_type *t, const char *mode, uint64_t n)
{
	static const char junk[] = "x\n\"';<&\x1b[31m%s\\`@";
	uint64_t ts;

	memcpy(&ts, p + 8, 8);
	if (!strcmp(mode, "ts-zero"))
		put64(p + 8, 0);
	else if (!strcmp(mode, "ts-max"))
		put64(p + 8, UINT64_MAX);
	else if (!strcmp(mode, "ts-backwards"))
		put64(p + 8, UINT64_MAX / 2 - ts);
	else if (!strcmp(mode, "cpu-max"))
		put32(p + 4, UINT32_MAX);
	else if (!strcmp(mode, "cpu-random"))
		put32(p + 4, (uint32_t)rnd());
	else if (!strcmp(mode, "unknown-types") && n % 3 == 0)
		p[0] = 0xf0, p[1] = 0x7f;
	for (uint16_t i = HDR_FIELDS; t && i < t->nfields; i++) {
		const struct st_field *f = &t->fields[i];

		if (f->type == ST_FT_STR && !strcmp(mode, "strings-unterminated"))
			for (uint16_t k = 0; k < f->size; k++)
				p[f->offset + k] = (unsigned char)junk[k % (sizeof(junk) - 1)];
		else if (f->type != ST_FT_STR && !strcmp(mode, "fields-max"))
			memset(p + f->offset, 0xff, f->size);
		else if (f->type != ST_FT_STR && !strcmp(mode, "fields-random"))
			for (uint16_t k = 0; k < f->size; k++)
				p[f->offset + k] = (unsigned char)rnd();
	}
}

/* An events chunk's records crafted, its header's count and range from them. */
static void craft_events(struct st_reader *r, struct chunk *c, const char *mode)
{
	size_t at = 0;
	uint64_t n = 0;

	c->first_ts = UINT64_MAX;
	c->last_ts = 0;
	while (at + 24 <= c->len) {
		uint16_t size = ld16(c->data + at + 2);
		uint64_t ts;

		if (size < 24 || at + size > c->len)
			break;
		craft_record(c->data + at, st_type_by_id(r, ld16(c->data + at)), mode, n++);
		memcpy(&ts, c->data + at + 8, 8);
		c->first_ts = ts < c->first_ts ? ts : c->first_ts;
		c->last_ts = ts > c->last_ts ? ts : c->last_ts;
		at += size;
	}
	c->events = (uint32_t)n;
	if (!n)
		c->first_ts = 0;
	if (!strcmp(mode, "hdr-events-plus"))
		c->events += 1000;
	if (!strcmp(mode, "hdr-range-wide"))
		c->first_ts = 0, c->last_ts = UINT64_MAX;
}

/* A metadata chunk of n keys, or of two keys with 1 MiB values (n 0). */
static int add_meta(uint64_t n)
{
	size_t big = 1u << 20, cap = n ? n * 40 : 2 * (big + 64), len = 0;
	unsigned char *p = malloc(cap);
	int bad = !p;

	for (uint64_t i = 0; !bad && i < (n ? n : 2); i++) {
		char key[32], *v = n ? NULL : malloc(big + 8);
		const char *value = "v";

		snprintf(key, sizeof(key), n ? "hostile.%llu" : i ? "dev.7:0" : "host.name",
			 (unsigned long long)i);
		if (!n) {
			if (!v) {
				bad = 1;
				break;
			}
			memcpy(v, "name=", 5);
			memset(v + 5, 'h', big);
			v[big + 5] = 0;
			value = v;
		}
		put32(p + len, (uint32_t)strlen(key));
		put32(p + len + 4, (uint32_t)strlen(value));
		memcpy(p + len + 8, key, strlen(key));
		memcpy(p + len + 8 + strlen(key), value, strlen(value));
		len += 8 + strlen(key) + strlen(value);
		free(v);
	}
	bad = bad || !add_chunk(ST_CHUNK_META, p, len);
	free(p);
	return bad;
}

static int add_lost(uint64_t n)
{
	unsigned char *p = malloc(n * 16 + 1);
	int bad = !p;

	for (uint64_t i = 0; !bad && i < n; i++) {
		put32(p + 16 * i, (uint32_t)i);
		put32(p + 16 * i + 4, 0);
		put64(p + 16 * i + 8, i + 1);
	}
	bad = bad || !add_chunk(ST_CHUNK_LOST, p, n * 16);
	free(p);
	return bad;
}

/* The events chunks rearranged as the chunk-level modes say. */
static int rearrange(const char *mode)
{
	size_t first = nchunks, last = nchunks, n = nchunks;

	for (size_t i = 0; i < n; i++) {
		if (chunks[i].kind != ST_CHUNK_EVENTS)
			continue;
		first = first == nchunks ? i : first;
		last = i;
		if (!strcmp(mode, "dup-chunks") && !add_chunk(ST_CHUNK_EVENTS, chunks[i].data, chunks[i].len))
			return 1;
		if (!strcmp(mode, "dup-chunks")) {
			chunks[nchunks - 1].events = chunks[i].events;
			chunks[nchunks - 1].first_ts = chunks[i].first_ts;
			chunks[nchunks - 1].last_ts = chunks[i].last_ts;
		}
	}
	if (!strcmp(mode, "swap-chunks") && first < last) {
		struct chunk t = chunks[first];

		chunks[first] = chunks[last];
		chunks[last] = t;
	}
	return 0;
}

static int craft(const char *in, const char *out, const char *mode, uint64_t n)
{
	struct st_reader *r = NULL;
	struct st_chunk_buf b = { 0 }, idx = { 0 };
	unsigned char head[32], *enc = NULL, *ip = NULL;
	uint32_t ontypes = 0, onlost = 0, onchunks = 0;
	size_t tail = 0, ilen, i;
	uint64_t off = 32;
	FILE *f = fopen(in, "rb"), *o = NULL;
	int bad = !f || fread(head, 1, 32, f) != 32 || st_reader_open(&r, in, 0);

	for (i = 0; !bad && i < st_chunk_count(r); i++) {
		const struct st_chunk_info *ci = st_chunk_at(r, i);
		struct chunk *c;

		bad = st_chunk_decode(r, i, ci->kind == ST_CHUNK_INDEX ? &idx : &b);
		if (bad || ci->kind == ST_CHUNK_INDEX)
			continue;
		bad = !(c = add_chunk(ci->kind, b.data, b.len));
		if (!bad && ci->kind == ST_CHUNK_EVENTS)
			craft_events(r, c, mode);
	}
	bad = bad || !idx.len;
	if (!bad) {
		memcpy(&onchunks, idx.data, 4);
		memcpy(&ontypes, (char *)idx.data + 4, 4);
		memcpy(&onlost, (char *)idx.data + 8, 4);
		tail = 16 + (size_t)onchunks * 48;
		bad = rearrange(mode) || (!strcmp(mode, "lost") && add_lost(n)) ||
		      (!strcmp(mode, "meta") && add_meta(n)) || (!strcmp(mode, "meta-huge") && add_meta(0));
	}
	ilen = 16 + 48 * nchunks + 16 * ((size_t)ontypes + onlost);
	bad = bad || !(ip = calloc(1, ilen)) || !(o = fopen(out, "wb")) || fwrite(head, 1, 32, o) != 32;
	for (i = 0; !bad && i < nchunks; i++) {
		struct chunk *c = &chunks[i];
		struct spec_hdr h = { .kind = c->kind, .seq = (uint32_t)i, .payload_size = (uint32_t)c->len,
				      .raw_size = (uint32_t)c->len, .events = c->events,
				      .first_ts = c->first_ts, .last_ts = c->last_ts };
		size_t len;

		bad = !(enc = realloc(enc, 64 + c->len));
		if (bad)
			break;
		len = spec_chunk_hdr(enc, &h, c->data);
		bad = fwrite(enc, 1, len, o) != len;
		put64(ip + 16 + 48 * i, off);
		put32(ip + 16 + 48 * i + 8, c->kind);
		put32(ip + 16 + 48 * i + 12, (uint32_t)i);
		put32(ip + 16 + 48 * i + 16, (uint32_t)len);
		put32(ip + 16 + 48 * i + 20, (uint32_t)c->len);
		put32(ip + 16 + 48 * i + 24, c->events);
		put64(ip + 16 + 48 * i + 32, c->first_ts);
		put64(ip + 16 + 48 * i + 40, c->last_ts);
		off += len;
	}
	if (!bad) {
		size_t counts = 16 + 48 * nchunks, len;

		put32(ip, (uint32_t)nchunks);
		put32(ip + 4, ontypes);
		put32(ip + 8, onlost);
		memcpy(ip + counts, (char *)idx.data + tail, 16 * ((size_t)ontypes + onlost));
		for (i = 0; i < ontypes && !strcmp(mode, "typecount-lie"); i++) {
			uint64_t v;

			memcpy(&v, ip + counts + 16 * i + 8, 8);
			put64(ip + counts + 16 * i + 8, v + 1000);
		}
		bad = !(enc = realloc(enc, 64 + ilen + 32));
		len = bad ? 0 : spec_chunk(enc, ST_CHUNK_INDEX, (uint32_t)nchunks, ip, (uint32_t)ilen);
		len += bad ? 0 : spec_trailer(enc + len, off, len);
		bad = bad || fwrite(enc, 1, len, o) != len;
	}
	if (o && fclose(o))
		bad = 1;
	if (f)
		fclose(f);
	if (bad)
		fprintf(stderr, "craft-trace: cannot craft %s from %s into %s\n", mode, in, out);
	for (i = 0; i < nchunks; i++)
		free(chunks[i].data);
	free(chunks);
	free(enc);
	free(ip);
	st_chunk_buf_free(&b);
	st_chunk_buf_free(&idx);
	st_reader_close(r);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: craft-trace IN OUT MODE [N]\n");
		return 2;
	}
	return craft(argv[1], argv[2], argv[3], argc == 5 ? strtoull(argv[4], NULL, 10) : 0);
}
