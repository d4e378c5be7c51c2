/* SPDX-License-Identifier: MIT */
/*
 * The quantile sketch against exact quantiles on several distributions,
 * sketch merging, and an_qest's switch from exact samples to the sketch.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/lib/sketch.h"
#include "tests/check.h"

#define N 200000

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static double uniform01(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return ((rng_state >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
	return sqrt(-2 * log(uniform01())) * cos(2 * M_PI * uniform01());
}

/* Latencies in ns: flat 1 us .. 10 ms; lognormal around 100 us; a fast mode plus a slow tail. */
static uint64_t draw(int dist)
{
	switch (dist) {
	case 0:
		return 1000 + (uint64_t)(uniform01() * 1e7);
	case 1:
		return (uint64_t)exp(log(1e5) + normal());
	default:
		if (uniform01() < 0.97)
			return (uint64_t)(20000 + 2000 * fabs(normal()));
		return (uint64_t)(5e6 * exp(1.5 * normal()));
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void test_distribution(int dist, const char *name)
{
	static const double qs[] = { 0.01, 0.5, 0.9, 0.99, 0.999, 0.9995, 1.0 };
	uint64_t *v = malloc(N * sizeof(*v));
	struct an_sketch s;
	double worst = 0;
	char n[64];
	size_t i;

	an_sketch_init(&s, AN_SKETCH_BITS);
	for (i = 0; i < N; i++) {
		v[i] = draw(dist);
		an_sketch_add(&s, v[i]);
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	for (i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t rank = (uint64_t)ceil(qs[i] * N);
		double exact = (double)v[rank - 1];
		double err = fabs((double)an_sketch_quantile(&s, qs[i]) - exact) / exact;

		if (err > worst)
			worst = err;
	}
	snprintf(n, sizeof(n), "sketch.rel_error.%s", name);
	check(worst <= 0.01, n, "worst relative error %.4f%%", worst * 100);
	an_sketch_free(&s);
	free(v);
}

static void test_merge(void)
{
	struct an_sketch a, b, all;
	size_t i;

	an_sketch_init(&a, AN_SKETCH_BITS);
	an_sketch_init(&b, AN_SKETCH_BITS);
	an_sketch_init(&all, AN_SKETCH_BITS);
	for (i = 0; i < N; i++) {
		uint64_t x = draw(1), y = draw(2);

		an_sketch_add(&a, x);
		an_sketch_add(&b, y);
		an_sketch_add(&all, x);
		an_sketch_add(&all, y);
	}
	an_sketch_merge(&a, &b);
	check(a.n == all.n && !memcmp(a.counts, all.counts, a.nbuckets * sizeof(*a.counts)),
	      "sketch.merge_equals_union", "merged sketch differs from the union's");
	an_sketch_free(&a);
	an_sketch_free(&b);
	an_sketch_free(&all);
}

static void test_qest(void)
{
	struct an_qest small, big, m;
	uint64_t i;

	an_qest_init(&small, 1000);
	an_qest_init(&big, 1000);
	for (i = 1; i <= 1000; i++)
		an_qest_add(&small, i * 1000);
	check(an_qest_is_exact(&small) && an_qest_quantile(&small, 0.99) == 990000 &&
	      an_qest_quantile(&small, 0.5) == 500000 && small.min == 1000 && small.max == 1000000,
	      "qest.exact_below_limit", "p99 %llu", (unsigned long long)an_qest_quantile(&small, 0.99));
	for (i = 1; i <= 5000; i++)
		an_qest_add(&big, i * 1000);
	check(!an_qest_is_exact(&big) &&
	      fabs((double)an_qest_quantile(&big, 0.99) - 4950000.0) / 4950000.0 <= 0.01,
	      "qest.sketch_past_limit", "p99 %llu", (unsigned long long)an_qest_quantile(&big, 0.99));
	/* 1..1000 exact, q 0.99: ranks 990 -/+ 1.96*sqrt(9.9) = 6.17, so 983 and 997 + 1. */
	struct an_ci ci = an_quantile_ci(&small, 0.99);
	check(ci.value == 990000 && ci.lo == 983000 && ci.hi == 998000 && ci.enough,
	      "qest.quantile_ci", "%llu [%llu, %llu] enough %d", (unsigned long long)ci.value,
	      (unsigned long long)ci.lo, (unsigned long long)ci.hi, ci.enough);
	check(!an_quantile_ci(&small, 0.999).enough, "qest.quantile_ci_too_few", "n*(1-q) = 1 counted as enough");
	an_qest_init(&m, 1000);
	an_qest_merge(&m, &small);
	an_qest_merge(&m, &big);
	check(m.n == 6000 && !an_qest_is_exact(&m) && m.max == 5000000 &&
	      fabs((double)an_qest_quantile(&m, 0.5) - 2000000.0) / 2000000.0 <= 0.01,
	      "qest.merge", "n %llu p50 %llu", (unsigned long long)m.n,
	      (unsigned long long)an_qest_quantile(&m, 0.5));
	an_qest_free(&small);
	an_qest_free(&big);
	an_qest_free(&m);
}

/*
 * an_qest_add_zeros(e, count) is count calls of an_qest_add(e, 0): the zeros
 * counted apart and added at checkpoints, while exact (50), across the
 * switch to the sketch (150: 85 samples and 66 zeros past the limit of 100)
 * and in the sketch (299).
 */
static void test_qest_zeros(void)
{
	struct an_qest a, z;
	uint64_t i, zeros = 0, q50a = 0, q50z = 0;
	int same = 1;

	an_qest_init(&a, 100);
	an_qest_init(&z, 100);
	for (i = 0; i < 300; i++) {
		uint64_t v = i % 3 ? 0 : 1000 + i;

		an_qest_add(&a, v);
		if (v)
			an_qest_add(&z, v);
		else
			zeros++;
		if (i == 50 || i == 150 || i == 299) {
			same &= !an_qest_add_zeros(&z, zeros) && a.n == z.n;
			zeros = 0;
			q50a = an_qest_quantile(&a, 0.5);
			q50z = an_qest_quantile(&z, 0.5);
			same &= q50a == q50z && an_qest_quantile(&a, 0.1) == an_qest_quantile(&z, 0.1) &&
				an_qest_quantile(&a, 0.9) == an_qest_quantile(&z, 0.9) &&
				an_qest_is_exact(&a) == an_qest_is_exact(&z) && an_qest_is_exact(&z) == (i == 50);
		}
	}
	check(same && !an_qest_add_zeros(&z, 0) && a.n == z.n && a.sum == z.sum && a.min == z.min &&
	      a.max == z.max && z.min == 0 && !an_qest_is_exact(&z),
	      "qest.add_zeros", "n %llu/%llu min %llu/%llu p50 %llu/%llu", (unsigned long long)a.n,
	      (unsigned long long)z.n, (unsigned long long)a.min, (unsigned long long)z.min,
	      (unsigned long long)q50a, (unsigned long long)q50z);
	an_qest_free(&a);
	an_qest_free(&z);
}

/*
 * A summary's stage saved and loaded back answers the same quantiles, alone
 * and merged into another: a sketch's quantiles come from the qest's n (its
 * sketch's own count is not kept).
 */
static void test_qest_save_load(void)
{
	struct an_qest a, loaded, merged;
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);
	int same = 1;

	an_qest_init(&a, 100);
	an_qest_init(&loaded, 100);
	an_qest_init(&merged, 100);
	for (i = 0; i < 1000; i++)
		an_qest_add(&a, i % 4 ? 5000 + i * 37 : 0);
	same &= f && !an_qest_save(&a, f) && !fclose(f) && !an_qest_load(&loaded, text) &&
		!an_qest_merge(&merged, &loaded);
	for (i = 1; same && i < 100; i++) {
		uint64_t want = an_qest_quantile(&a, i / 100.0);

		same = an_qest_quantile(&loaded, i / 100.0) == want &&
		       an_qest_quantile(&merged, i / 100.0) == want;
	}
	check(same && loaded.n == 1000 && merged.n == 1000 && !an_qest_is_exact(&loaded),
	      "qest.save_load", "p50 %llu, loaded %llu, merged %llu",
	      (unsigned long long)an_qest_quantile(&a, 0.5), (unsigned long long)an_qest_quantile(&loaded, 0.5),
	      (unsigned long long)an_qest_quantile(&merged, 0.5));
	free(text);
	an_qest_free(&a);
	an_qest_free(&loaded);
	an_qest_free(&merged);
}

/*
 * an_qest_take() into an empty qest: src's own array or sketch moves (no
 * copy), src is left empty; into one with samples, a merge.
 */
static void test_qest_take(void)
{
	struct an_qest exact, sketch, into_empty, into_empty2, full;
	uint64_t *samples, *counts, i;

	an_qest_init(&exact, 100);
	an_qest_init(&sketch, 100);
	an_qest_init(&into_empty, 100);
	an_qest_init(&into_empty2, 100);
	an_qest_init(&full, 100);
	for (i = 1; i <= 50; i++)
		an_qest_add(&exact, i * 1000);
	for (i = 1; i <= 500; i++)
		an_qest_add(&sketch, i * 1000);
	samples = exact.samples;
	counts = sketch.sk.counts;
	an_qest_add(&full, 7);
	an_qest_take(&into_empty, &exact);
	check(into_empty.samples == samples && into_empty.n == 50 && into_empty.min == 1000 &&
	      into_empty.max == 50000 && an_qest_quantile(&into_empty, 0.5) == 25000 &&
	      !exact.samples && !exact.n && exact.min == UINT64_MAX,
	      "qest.take_exact_moves", "n %llu, array %s", (unsigned long long)into_empty.n,
	      into_empty.samples == samples ? "moved" : "copied");
	an_qest_take(&into_empty2, &sketch);
	check(into_empty2.sk.counts == counts && into_empty2.n == 500 &&
	      !sketch.sk.counts && !sketch.n,
	      "qest.take_sketch_moves", "n %llu, sketch %s", (unsigned long long)into_empty2.n,
	      into_empty2.sk.counts == counts ? "moved" : "copied");
	an_qest_take(&full, &into_empty);
	check(full.n == 51 && full.min == 7 && full.samples != samples && into_empty.n == 50,
	      "qest.take_merges", "n %llu min %llu", (unsigned long long)full.n,
	      (unsigned long long)full.min);
	an_qest_free(&exact);
	an_qest_free(&sketch);
	an_qest_free(&into_empty);
	an_qest_free(&into_empty2);
	an_qest_free(&full);
}

/* The log-linear layout sketch.h describes, bucket by bucket. */
static uint32_t layout_index(unsigned bits, uint64_t v)
{
	unsigned e;

	if (v < (2ull << bits))
		return (uint32_t)v;
	e = 63 - (unsigned)__builtin_clzll(v);
	return (2u << bits) + (e - bits - 1) * (1u << bits) +
	       (uint32_t)((v >> (e - bits)) & ((1u << bits) - 1));
}

/* an_sketch_index() against the layout: every value to 2^16, each power of two and its neighbours. */
static void test_index(void)
{
	static const unsigned bits_used[] = { 4, AN_SKETCH_BITS };
	unsigned b, e, bad = 0;
	uint64_t v, worst = 0;

	for (b = 0; b < 2; b++) {
		unsigned bits = bits_used[b];

		for (v = 0; v <= 65536; v++)
			if (an_sketch_index(bits, v) != layout_index(bits, v) && !bad++)
				worst = v;
		for (e = 1; e < 64; e++)
			for (v = (1ull << e) - 2; v <= (1ull << e) + 2; v++)
				if (an_sketch_index(bits, v) != layout_index(bits, v) && !bad++)
					worst = v;
		if (an_sketch_index(bits, UINT64_MAX) != layout_index(bits, UINT64_MAX) && !bad++)
			worst = UINT64_MAX;
	}
	check(!bad, "sketch.index_layout", "%u values in another bucket, the first %llu", bad,
	      (unsigned long long)worst);
}

int main(void)
{
	test_index();
	test_distribution(0, "uniform");
	test_distribution(1, "lognormal");
	test_distribution(2, "bimodal_long_tail");
	test_merge();
	test_qest();
	test_qest_zeros();
	test_qest_save_load();
	test_qest_take();
	return check_failures != 0;
}
