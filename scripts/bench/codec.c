/*
 * bench-codec - the chunk codec decision of issue 25, measured on real
 * recordings: every events chunk of each FILE is decoded with libsttrace,
 * and its raw records are compressed again, chunk by chunk as the writer
 * seals them, with zstd at the recorder's settings (level 1 with the
 * writer's small hash table, format/lib/writer.c), zstd level 3 (what an
 * archive recompression would take) and LZ4 frames (liblz4, one block per
 * chunk, and liblz4's default frame; no content checksum: the chunk header
 * has its own). For each: the
 * CPU time per event (the best of ROUNDS passes over all chunks, each codec
 * in turn in every pass) and the stored bytes per event.
 *
 * Usage: bench-codec [-r ROUNDS] FILE.sttrace...
 */
#include <errno.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "format/lib/sttrace.h"

/* The writer's hash table size at levels <= 1 (ST_FAST_HASH_LOG in format/lib/writer.c). */
#define WRITER_FAST_HASH_LOG 10

struct chunk {
	void *raw;
	size_t len;
};

struct codec {
	const char *name;
	size_t (*compress)(const struct codec *c, void *dst, size_t cap, const void *src, size_t len);
	size_t (*bound)(const struct codec *c, size_t len);
	ZSTD_CCtx *zctx;
	const LZ4F_preferences_t *lz4_prefs;
	double best_ns;		/* CPU time of the fastest pass */
	unsigned long long bytes;
};

static double cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static size_t zstd_bound(const struct codec *c, size_t len)
{
	(void)c;
	return ZSTD_compressBound(len);
}

static size_t zstd_compress(const struct codec *c, void *dst, size_t cap, const void *src, size_t len)
{
	size_t n = ZSTD_compress2(c->zctx, dst, cap, src, len);

	return ZSTD_isError(n) ? 0 : n;
}

/* One block per chunk; liblz4's default (64 KiB blocks, each linked to the one before) is the other row. */
static const LZ4F_preferences_t lz4_one_block = {
	.frameInfo = { .blockSizeID = LZ4F_max4MB, .blockMode = LZ4F_blockIndependent },
};

static size_t lz4_bound(const struct codec *c, size_t len)
{
	return LZ4F_compressFrameBound(len, c->lz4_prefs);
}

static size_t lz4_compress(const struct codec *c, void *dst, size_t cap, const void *src, size_t len)
{
	size_t n = LZ4F_compressFrame(dst, cap, src, len, c->lz4_prefs);

	return LZ4F_isError(n) ? 0 : n;
}

/* Appends the raw records of every events chunk of path to *chunks; 0, or -1 with a message. */
static int load_chunks(const char *path, struct chunk **chunks, size_t *n, unsigned long long *events)
{
	struct st_chunk_buf buf = { 0 };
	struct st_reader *r;
	int err = st_reader_open(&r, path, 0), rc = 0;

	if (err) {
		fprintf(stderr, "bench-codec: %s: %s\n", path, st_strerror(err));
		return -1;
	}
	for (size_t i = 0; i < st_chunk_count(r); i++) {
		const struct st_chunk_info *ci = st_chunk_at(r, i);
		struct chunk *grown;

		if (ci->kind != ST_CHUNK_EVENTS)
			continue;
		if (st_chunk_decode(r, i, &buf)) {
			fprintf(stderr, "bench-codec: %s\n", st_reader_errmsg(r));
			rc = -1;
			break;
		}
		grown = realloc(*chunks, (*n + 1) * sizeof(**chunks));
		if (!grown || !(grown[*n].raw = malloc(buf.len))) {
			*chunks = grown ? grown : *chunks;
			fprintf(stderr, "bench-codec: out of memory\n");
			rc = -1;
			break;
		}
		*chunks = grown;
		memcpy(grown[*n].raw, buf.data, buf.len);
		grown[(*n)++].len = buf.len;
		*events += ci->events;
	}
	st_chunk_buf_free(&buf);
	st_reader_close(r);
	return rc;
}

int main(int argc, char **argv)
{
	struct codec codecs[] = {
		{ "zstd -1 (the recorder's)", zstd_compress, zstd_bound, .zctx = ZSTD_createCCtx() },
		{ "zstd -3", zstd_compress, zstd_bound, .zctx = ZSTD_createCCtx() },
		{ "lz4 frame, one block", lz4_compress, lz4_bound, .zctx = NULL, .lz4_prefs = &lz4_one_block },
		{ "lz4 frame, 64 KiB blocks", lz4_compress, lz4_bound, .zctx = NULL, .lz4_prefs = NULL },
	};
	const size_t ncodecs = sizeof(codecs) / sizeof(codecs[0]);
	unsigned long long events = 0, raw = 0;
	struct chunk *chunks = NULL;
	size_t nchunks = 0, cap = 0;
	int rounds = 5, opt, rc = 0;
	void *out = NULL;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt != 'r' || (rounds = atoi(optarg)) < 1) {
			fprintf(stderr, "usage: bench-codec [-r ROUNDS] FILE.sttrace...\n");
			return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "usage: bench-codec [-r ROUNDS] FILE.sttrace...\n");
		return 2;
	}
	if (!codecs[0].zctx ||
	    !codecs[1].zctx || ZSTD_isError(ZSTD_CCtx_setParameter(codecs[0].zctx, ZSTD_c_compressionLevel, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(codecs[0].zctx, ZSTD_c_hashLog, WRITER_FAST_HASH_LOG)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(codecs[1].zctx, ZSTD_c_compressionLevel, 3))) {
		fprintf(stderr, "bench-codec: cannot set up the compressors\n");
		return 1;
	}
	for (int i = optind; i < argc && !rc; i++)
		rc = load_chunks(argv[i], &chunks, &nchunks, &events) ? 1 : 0;
	for (size_t k = 0; k < nchunks; k++) {
		raw += chunks[k].len;
		for (size_t c = 0; c < ncodecs; c++)
			cap = codecs[c].bound(&codecs[c], chunks[k].len) > cap ? codecs[c].bound(&codecs[c], chunks[k].len) : cap;
	}
	if (!rc && (!events || !(out = malloc(cap)))) {
		fprintf(stderr, "bench-codec: %s\n", events ? "out of memory" : "no events in the files");
		rc = 1;
	}
	for (int round = 0; round < rounds && !rc; round++) {
		for (size_t c = 0; c < ncodecs && !rc; c++) {
			double t = cpu_ns();
			unsigned long long bytes = 0;

			for (size_t k = 0; k < nchunks && !rc; k++) {
				size_t n = codecs[c].compress(&codecs[c], out, cap, chunks[k].raw, chunks[k].len);

				if (!n) {
					fprintf(stderr, "bench-codec: %s failed on a chunk\n", codecs[c].name);
					rc = 1;
				}
				bytes += n;
			}
			t = cpu_ns() - t;
			if (!round || t < codecs[c].best_ns)
				codecs[c].best_ns = t;
			codecs[c].bytes = bytes;
		}
	}
	if (!rc) {
		printf("%llu events in %zu chunks, %.1f raw bytes/event; best of %d passes, one thread\n",
		       events, nchunks, (double)raw / events, rounds);
		for (size_t c = 0; c < ncodecs; c++)
			printf("  %-26s %6.1f ns/event  %6.2f bytes/event  %5.1f:1\n", codecs[c].name,
			       codecs[c].best_ns / events, (double)codecs[c].bytes / events,
			       (double)raw / codecs[c].bytes);
	}
	for (size_t k = 0; k < nchunks; k++)
		free(chunks[k].raw);
	free(chunks);
	free(out);
	ZSTD_freeCCtx(codecs[0].zctx);
	ZSTD_freeCCtx(codecs[1].zctx);
	return rc;
}
