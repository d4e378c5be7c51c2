/* SPDX-License-Identifier: MIT */
/*
 * sketch.h - quantiles of latency samples (nanoseconds).
 *
 * an_sketch is a log-linear histogram (the HDR histogram layout): values
 * below 2^(bits+1) have a bucket each, above that every power of two is cut
 * into 2^bits equal buckets. A quantile is reported as the middle of its
 * bucket, so its relative error is at most 2^-(bits+1): 0.39 % with bits = 7
 * (AN_SKETCH_BITS, used for every reported quantile), 3.1 % with bits = 4
 * (the per-interval histograms of time series). Sketches with the same bits
 * merge by adding counts, exactly.
 *
 * an_qest keeps the samples themselves until it holds `limit` of them, then
 * moves them into a sketch: exact quantiles for small data sets, bounded
 * memory for large ones, and the report says which one answered.
 *
 * Quantile definition (both): nearest rank, the smallest sample whose rank
 * r satisfies r >= ceil(q * n).
 */
#ifndef AN_SKETCH_H
#define AN_SKETCH_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#define AN_SKETCH_BITS 7

struct an_sketch {
	unsigned bits;
	uint32_t nbuckets;
	uint64_t *counts;
	uint64_t n;
};

int an_sketch_init(struct an_sketch *s, unsigned bits);
void an_sketch_free(struct an_sketch *s);
/*
 * v's bucket: with e its top bit, sh = e - bits past the exact ones (v from
 * 2^(bits+1) on), whose buckets are 2^sh wide; v >> sh then has bits + 1
 * bits, its top one standing for the (2 << bits) - (1 << bits) exact
 * buckets below octave 1, so octave sh starts at sh << bits. Below, sh = 0
 * and the index is v: e taken of v | 2^bits is bits there. Without a
 * branch: it runs for every sample of every stage.
 */
static inline uint32_t an_sketch_index(unsigned bits, uint64_t v)
{
	/* 63 ^ clz (= 63 - clz) lets the compiler take bsr's answer as is */
	unsigned sh = (63 ^ (unsigned)__builtin_clzll(v | 1ull << bits)) - bits;

	return (sh << bits) + (uint32_t)(v >> sh);
}
/* Representative value of a bucket (its middle). */
uint64_t an_sketch_value(unsigned bits, uint32_t idx);
static inline void an_sketch_add(struct an_sketch *s, uint64_t v)
{
	s->counts[an_sketch_index(s->bits, v)]++;
	s->n++;
}
/* dst += src; both must have the same bits. */
void an_sketch_merge(struct an_sketch *dst, const struct an_sketch *src);
/* q in [0, 1]; 0 when empty. */
uint64_t an_sketch_quantile(const struct an_sketch *s, double q);
/* Value at 1-based rank r (clamped to [1, n]). */
uint64_t an_sketch_rank(const struct an_sketch *s, uint64_t r);

struct an_qest {
	uint64_t *samples;	/* exact mode: the samples (sorted lazily) */
	size_t nsamples, cap, limit;
	int sorted;
	struct an_sketch sk;	/* sketch mode when sk.counts != NULL; sk.n is not kept (n is) */
	uint64_t n, sum, min, max;
};

void an_qest_init(struct an_qest *e, size_t exact_limit);
void an_qest_free(struct an_qest *e);
/* What an_qest_add() leaves out of line: the array growing, or full (into the sketch). */
int an_qest_add_slow(struct an_qest *e, uint64_t v);
/* A sample's count, sum, min and max (an_qest_add's, before its bucket or slot). */
static inline void an_qest_note(struct an_qest *e, uint64_t v)
{
	e->n++;
	e->sum += v;
	if (v < e->min)
		e->min = v;
	if (v > e->max)
		e->max = v;
}

/* Add a sample; 0 or -1 (out of memory). Inline: a few per I/O and stage. */
static inline int an_qest_add(struct an_qest *e, uint64_t v)
{
	uint64_t *counts = e->sk.counts;	/* sketch mode when set */

	/* one test of the mode for both: sketch, or exact with room (cap <= limit) */
	if (counts) {
		/* e's fields before the bucket: a store through counts may alias e, which is then reloaded */
		an_qest_note(e, v);
		/* an_sketch_add() with the bits every an_qest uses, a constant, and n counted once */
		counts[an_sketch_index(AN_SKETCH_BITS, v)]++;
		return 0;
	}
	if (e->nsamples >= e->cap)
		return an_qest_add_slow(e, v);
	an_qest_note(e, v);
	e->samples[e->nsamples++] = v;
	e->sorted = 0;
	return 0;
}
/*
 * count calls of an_qest_add(e, 0) at once: the same samples, mode and
 * quantiles. For a stage that is 0 for most I/Os (the causes of a recording
 * without lock waits, reclaim or throttling), counted apart and added once.
 * 0 or -1 (out of memory).
 */
int an_qest_add_zeros(struct an_qest *e, uint64_t count);
int an_qest_merge(struct an_qest *dst, struct an_qest *src);
/* an_qest_merge() that may move src's samples or sketch into dst: src is left empty, to be freed. */
int an_qest_take(struct an_qest *dst, struct an_qest *src);
int an_qest_is_exact(const struct an_qest *e);
/*
 * Text form for summaries: "N SUM MIN MAX" and " INDEX:COUNT" for every
 * non-empty bucket of the AN_SKETCH_BITS sketch (exact samples are written
 * as the sketch they fall into). 0 or -1 (out of memory).
 */
int an_qest_save(const struct an_qest *e, FILE *out);
/* Parse that text into e (fresh from an_qest_init): sketch mode; 0 or -1 when malformed. */
int an_qest_load(struct an_qest *e, const char *text);
uint64_t an_qest_quantile(struct an_qest *e, double q);
uint64_t an_qest_rank(struct an_qest *e, uint64_t r);

/*
 * A quantile and its 95 % confidence interval from the distribution-free
 * order-statistic bound (ranks n*q -/+ 1.96*sqrt(n*q*(1-q))).
 */
struct an_ci {
	uint64_t value, lo, hi;
	int enough;		/* n*(1-q) >= 5 */
};
struct an_ci an_quantile_ci(struct an_qest *e, double q);

#endif /* AN_SKETCH_H */
