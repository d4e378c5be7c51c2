/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/sketch.h"

/* Bucket count: 2^(bits+1) exact ones, then 2^bits per remaining octave. */
static uint32_t bucket_count(unsigned bits)
{
	return (2u << bits) + (uint32_t)(63 - bits) * (1u << bits);
}

int an_sketch_init(struct an_sketch *s, unsigned bits)
{
	s->bits = bits;
	s->nbuckets = bucket_count(bits);
	s->counts = calloc(s->nbuckets, sizeof(*s->counts));
	s->n = 0;
	return s->counts ? 0 : -1;
}

void an_sketch_free(struct an_sketch *s)
{
	free(s->counts);
	s->counts = NULL;
	s->n = 0;
}

uint64_t an_sketch_value(unsigned bits, uint32_t idx)
{
	uint32_t octave, sub;
	unsigned e;
	uint64_t lo, width;

	if (idx < (2u << bits))
		return idx;
	octave = (idx - (2u << bits)) >> bits;
	sub = (idx - (2u << bits)) & ((1u << bits) - 1);
	e = octave + bits + 1;
	width = 1ull << (e - bits);
	lo = (1ull << e) + sub * width;
	return lo + width / 2;
}

void an_sketch_merge(struct an_sketch *dst, const struct an_sketch *src)
{
	uint32_t i;

	for (i = 0; i < dst->nbuckets; i++)
		dst->counts[i] += src->counts[i];
	dst->n += src->n;
}

/* an_sketch_rank() of a sketch with samples, whatever its n says (an an_qest's is not kept). */
static uint64_t rank_value(const struct an_sketch *s, uint64_t r)
{
	uint64_t seen = 0;
	uint32_t i;

	if (r < 1)
		r = 1;
	for (i = 0; i < s->nbuckets; i++) {
		seen += s->counts[i];
		if (seen >= r)
			return an_sketch_value(s->bits, i);
	}
	return an_sketch_value(s->bits, s->nbuckets - 1);
}

uint64_t an_sketch_rank(const struct an_sketch *s, uint64_t r)
{
	return s->n ? rank_value(s, r) : 0;
}

static uint64_t nearest_rank(uint64_t n, double q)
{
	double r = ceil(q * (double)n);

	if (r < 1)
		return 1;
	return r > (double)n ? n : (uint64_t)r;
}

uint64_t an_sketch_quantile(const struct an_sketch *s, double q)
{
	return an_sketch_rank(s, nearest_rank(s->n, q));
}

void an_qest_init(struct an_qest *e, size_t exact_limit)
{
	memset(e, 0, sizeof(*e));
	e->limit = exact_limit;
	e->min = UINT64_MAX;
}

void an_qest_free(struct an_qest *e)
{
	free(e->samples);
	an_sketch_free(&e->sk);
	an_qest_init(e, e->limit);
}

int an_qest_is_exact(const struct an_qest *e)
{
	return e->sk.counts == NULL;
}

/* Leave exact mode: every sample goes into a sketch, the array is freed. */
static int to_sketch(struct an_qest *e)
{
	size_t i;

	if (an_sketch_init(&e->sk, AN_SKETCH_BITS))
		return -1;
	for (i = 0; i < e->nsamples; i++)
		an_sketch_add(&e->sk, e->samples[i]);
	free(e->samples);
	e->samples = NULL;
	e->nsamples = e->cap = 0;
	return 0;
}

/* Room in the array for `need` samples (need <= limit), doubling it. */
static int reserve(struct an_qest *e, size_t need)
{
	size_t cap = e->cap ? e->cap : 64;
	uint64_t *p;

	if (need <= e->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > e->limit)
		cap = e->limit;
	p = realloc(e->samples, cap * sizeof(*p));
	if (!p)
		return -1;
	e->samples = p;
	e->cap = cap;
	return 0;
}

static int add_sample(struct an_qest *e, uint64_t v)
{
	if (reserve(e, e->nsamples + 1))
		return -1;
	e->samples[e->nsamples++] = v;
	e->sorted = 0;
	return 0;
}

/* Exact mode, the array full (an_qest_add() handles the rest inline). */
int an_qest_add_slow(struct an_qest *e, uint64_t v)
{
	an_qest_note(e, v);
	if (e->nsamples >= e->limit && to_sketch(e))
		return -1;
	if (e->sk.counts) {
		an_sketch_add(&e->sk, v);
		return 0;
	}
	return add_sample(e, v);
}

int an_qest_add_zeros(struct an_qest *e, uint64_t count)
{
	if (!count)
		return 0;
	/* a sketch past the limit, as the count-th single add would have made it */
	if (!e->sk.counts && e->nsamples + count > e->limit && to_sketch(e))
		return -1;
	if (e->sk.counts) {
		e->sk.counts[0] += count;
	} else {
		if (reserve(e, e->nsamples + count))
			return -1;
		memset(e->samples + e->nsamples, 0, count * sizeof(*e->samples));
		e->nsamples += count;
		e->sorted = 0;
	}
	e->n += count;
	e->min = 0;
	return 0;
}

int an_qest_merge(struct an_qest *dst, struct an_qest *src)
{
	size_t i;

	if (!src->n)
		return 0;
	if (src->sk.counts || dst->nsamples + src->nsamples > dst->limit) {
		if (!dst->sk.counts && to_sketch(dst))
			return -1;
	}
	if (dst->sk.counts) {
		if (src->sk.counts)
			an_sketch_merge(&dst->sk, &src->sk);
		for (i = 0; i < src->nsamples; i++)
			an_sketch_add(&dst->sk, src->samples[i]);
	} else {
		for (i = 0; i < src->nsamples; i++)
			if (add_sample(dst, src->samples[i]))
				return -1;
	}
	dst->n += src->n;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	return 0;
}

/*
 * an_qest_merge() for a src freed after: an empty dst takes src's samples or
 * sketch as they are, no copy and no sketch of its own to fill (nor its
 * pages to touch), and src is left empty.
 */
int an_qest_take(struct an_qest *dst, struct an_qest *src)
{
	size_t limit = dst->limit;

	if (dst->n || dst->samples || dst->sk.counts || (!src->sk.counts && src->cap > limit))
		return an_qest_merge(dst, src);
	*dst = *src;
	dst->limit = limit;
	an_qest_init(src, src->limit);
	return 0;
}

/*
 * LSD radix sort, a byte per pass, skipping bytes every sample shares (the
 * high bytes of nanosecond latencies): quantiles of the exact samples are
 * read at report time, for every group and stage, so this is on the path.
 */
static int radix_sort(uint64_t *v, size_t n)
{
	uint64_t *tmp = malloc(n * sizeof(*tmp)), *src = v, *dst = tmp, *swap;
	size_t count[256], i;
	unsigned shift;

	if (!tmp)
		return -1;
	for (shift = 0; shift < 64; shift += 8) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(src[i] >> shift) & 0xff]++;
		if (count[(src[0] >> shift) & 0xff] == n)
			continue;
		for (i = 1; i < 256; i++)
			count[i] += count[i - 1];
		for (i = n; i-- > 0;)
			dst[--count[(src[i] >> shift) & 0xff]] = src[i];
		swap = src;
		src = dst;
		dst = swap;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	return 0;
}

uint64_t an_qest_rank(struct an_qest *e, uint64_t r)
{
	if (e->sk.counts) {
		uint64_t v = e->n ? rank_value(&e->sk, r) : 0;

		/* A bucket's middle may lie past the extremes, which are exact. */
		return v < e->min ? e->min : v > e->max ? e->max : v;
	}
	if (!e->nsamples)
		return 0;
	if (!e->sorted) {
		/* Out of memory for the sort buffer: answer from a sketch instead. */
		if (radix_sort(e->samples, e->nsamples)) {
			if (to_sketch(e))
				return 0;
			return an_qest_rank(e, r);
		}
		e->sorted = 1;
	}
	if (r < 1)
		r = 1;
	if (r > e->nsamples)
		r = e->nsamples;
	return e->samples[r - 1];
}

uint64_t an_qest_quantile(struct an_qest *e, double q)
{
	return an_qest_rank(e, nearest_rank(e->n, q));
}

struct an_ci an_quantile_ci(struct an_qest *e, double q)
{
	double n = (double)e->n, half = 1.96 * sqrt(n * q * (1 - q)), r = n * q;
	struct an_ci c;

	c.value = an_qest_quantile(e, q);
	c.lo = an_qest_rank(e, (uint64_t)fmax(1, floor(r - half)));
	c.hi = an_qest_rank(e, (uint64_t)fmin(n, ceil(r + half) + 1));
	c.enough = n * (1 - q) >= 5;
	return c;
}

int an_qest_save(const struct an_qest *e, FILE *out)
{
	struct an_sketch own;
	const struct an_sketch *sk = &e->sk;
	uint32_t i;
	size_t k;

	if (!e->sk.counts) {
		if (an_sketch_init(&own, AN_SKETCH_BITS))
			return -1;
		for (k = 0; k < e->nsamples; k++)
			an_sketch_add(&own, e->samples[k]);
		sk = &own;
	}
	fprintf(out, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, e->n, e->sum, e->n ? e->min : 0,
		e->max);
	for (i = 0; i < sk->nbuckets; i++)
		if (sk->counts[i])
			fprintf(out, " %" PRIu32 ":%" PRIu64, i, sk->counts[i]);
	if (sk == &own)
		an_sketch_free(&own);
	return 0;
}

/* One decimal u64 at *p, moved past it; -1 when none or out of range. */
static int parse_u64(const char **p, uint64_t *v)
{
	char *end;

	if (**p < '0' || **p > '9')
		return -1;
	errno = 0;
	*v = strtoull(*p, &end, 10);
	if (errno)
		return -1;
	*p = end;
	return 0;
}

int an_qest_load(struct an_qest *e, const char *p)
{
	uint64_t idx, count, total = 0;

	if (an_sketch_init(&e->sk, AN_SKETCH_BITS))
		return -1;
	if (parse_u64(&p, &e->n) || *p++ != ' ' || parse_u64(&p, &e->sum) || *p++ != ' ' ||
	    parse_u64(&p, &e->min) || *p++ != ' ' || parse_u64(&p, &e->max))
		return -1;
	while (*p == ' ') {
		p++;
		if (parse_u64(&p, &idx) || *p++ != ':' || parse_u64(&p, &count) ||
		    idx >= e->sk.nbuckets || !count || total + count < total)
			return -1;
		e->sk.counts[idx] += count;
		total += count;
	}
	/* The counts must add up to n, and the extremes lie in order. */
	if (*p || total != e->n || (e->n && e->min > e->max))
		return -1;
	if (!e->n) {
		e->min = UINT64_MAX;
		e->max = 0;
	}
	return 0;
}
