/* SPDX-License-Identifier: MIT */
/*
 * test_idmap.c - the correlator's identity map against a plain array model:
 * random puts, replacements, deletions and conditional deletions (del_if)
 * of keys that share their low bits (as kernel addresses do) and of keys that
 * collide in the table outright, through growth, with every key checked after
 * every step.
 */
#include <stdint.h>
#include <stdlib.h>

#include "analyze/lib/idmap.h"
#include "tests/check.h"

#define KEYS 512

struct model {
	uint64_t key[KEYS];
	uint32_t val[KEYS];	/* AN_NONE: absent */
};

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Every model key maps to its value (or is absent), and the count agrees. */
static int agrees(const struct an_idmap *m, const struct model *md)
{
	size_t present = 0;

	for (int i = 0; i < KEYS; i++) {
		if (an_idmap_get(m, md->key[i]) != md->val[i])
			return 0;
		present += md->val[i] != AN_NONE;
	}
	return present == m->count;
}

/* Keys whose home slot in a table of `cap` entries is the same: one long probe run. */
static void colliding_keys(struct model *md, size_t cap)
{
	struct an_idmap probe = { .mask = cap - 1 };
	size_t home = an_idmap_slot(&probe, 0x1000), n = 0;

	for (uint64_t k = 0x1000; n < KEYS; k += 0x40)
		if (an_idmap_slot(&probe, k) == home)
			md->key[n++] = k;
}

static int random_ops(struct model *md, int steps, const char **why)
{
	struct an_idmap m;
	int ok = 1;

	if (an_idmap_init(&m, 4)) {
		*why = "init failed";
		return 0;
	}
	for (int i = 0; i < KEYS; i++)
		md->val[i] = AN_NONE;
	for (int s = 0; s < steps && ok; s++) {
		int i = (int)(next() % KEYS);

		if (next() % 3) {
			md->val[i] = (uint32_t)(next() % 1000000);
			if (an_idmap_put(&m, md->key[i], md->val[i])) {
				*why = "put failed";
				ok = 0;
			}
		} else if (next() % 2) {
			md->val[i] = AN_NONE;
			an_idmap_del(&m, md->key[i]);
		} else {
			/* del_if removes the key only when it maps to the value named */
			uint32_t v = next() % 2 ? md->val[i] : (uint32_t)(next() % 1000000);

			if (md->val[i] == v)
				md->val[i] = AN_NONE;
			an_idmap_del_if(&m, md->key[i], v);
		}
		if (ok && !agrees(&m, md)) {
			*why = "map and model disagree";
			ok = 0;
		}
	}
	an_idmap_free(&m);
	return ok;
}

/* Each kind of key through random_ops(), its result as one check. */
static void run(struct model *md, const char *name)
{
	const char *why = "";
	int ok = random_ops(md, 20000, &why);

	check(ok, name, "%s", why);
}

/* Key 0 marks an empty slot: puts of it store and count nothing, however many. */
static void test_key_zero(void)
{
	struct an_idmap m;
	int i;

	check(!an_idmap_init(&m, 16), "idmap.key_zero.init", "out of memory");
	for (i = 0; i < 1000; i++)
		an_idmap_put(&m, 0, (uint32_t)i);
	an_idmap_put(&m, 7, 1);
	check(m.count == 1 && m.mask < 64 && an_idmap_get(&m, 0) == AN_NONE && an_idmap_get(&m, 7) == 1,
	      "idmap.key_zero", "count %zu, capacity %zu after 1000 puts of key 0 and one of key 7",
	      m.count, m.mask + 1);
	an_idmap_free(&m);
}

int main(void)
{
	static struct model md;

	/* Kernel addresses: 64-byte aligned, high bits alike. */
	for (int i = 0; i < KEYS; i++)
		md.key[i] = 0xffff888100000000ull + (uint64_t)i * 64;
	run(&md, "idmap.aligned_addresses");
	/* Thread ids: small consecutive integers. */
	for (int i = 0; i < KEYS; i++)
		md.key[i] = (uint64_t)i + 1;
	run(&md, "idmap.small_integers");
	/* One home slot for every key of a 1024-entry table: deletion must shift
	 * the rest of the run back, including across the table's end. */
	colliding_keys(&md, 1024);
	run(&md, "idmap.colliding_run");
	test_key_zero();
	return check_failures != 0;
}
