/*
 * test_paged.c - the block pool of the paged cache on hand-built
 * sequences: chained keys, hits and misses (a changed first token misses
 * every block, a changed later token every block from its own), shared
 * blocks, the order of eviction, an exhausted pool, refused sizes, and
 * the memory arithmetic of paged against reserved sequences.
 */
#include <stdlib.h>

#include "kv/paged.h"
#include "test.h"

static struct kv_paged *pool(uint32_t bs, uint64_t blocks, uint32_t seqs,
			     uint64_t max_len, bool prefix)
{
	struct kv_paged_opts o = {bs, blocks, seqs, max_len, prefix};
	struct kv_paged *p = NULL;
	if (kv_paged_new(&o, &p)) {
		fprintf(stderr, "kv_paged_new failed\n");
		exit(1);
	}
	return p;
}

static void check_counts(const struct kv_paged *p, uint64_t held,
			 uint64_t cached, uint64_t free_)
{
	struct kv_paged_stats s;
	kv_paged_get_stats(p, &s);
	CHECK_U64(s.held, held);
	CHECK_U64(s.cached, cached);
	CHECK_U64(s.free, free_);
}

static void test_keys(void)
{
	uint32_t a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 5};
	uint64_t k = kv_paged_key(0, a, 4);
	CHECK(k == kv_paged_key(0, a, 4));
	CHECK(k != kv_paged_key(0, b, 4));
	CHECK(k != kv_paged_key(1, a, 4)); /* the prefix before counts */
	CHECK(kv_paged_key(k, a, 4) != k);
	CHECK_U64(kv_paged_blocks_for(0, 4), 0);
	CHECK_U64(kv_paged_blocks_for(1, 4), 1);
	CHECK_U64(kv_paged_blocks_for(4, 4), 1);
	CHECK_U64(kv_paged_blocks_for(5, 4), 2);
}

static void test_hits(void)
{
	/* blocks of 4, 8 of them, two sequences of up to 16 positions */
	struct kv_paged *p = pool(4, 8, 2, 16, true);
	struct kv_paged_stats s;
	uint32_t a[10] = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
	uint32_t x[10];
	CHECK(kv_paged_append(p, 0, a, 10) == 0); /* blocks 0, 1, 2 */
	CHECK_U64(kv_paged_len(p, 0), 10);
	CHECK_U64(kv_paged_table(p, 0)[0], 0);
	CHECK_U64(kv_paged_table(p, 0)[2], 2);
	check_counts(p, 3, 0, 5);
	/* released: the two full blocks are cached, the partial one freed */
	kv_paged_release(p, 0);
	check_counts(p, 0, 2, 6);

	/* the same 10 tokens: both full blocks attach, 8 positions held */
	CHECK_U64(kv_paged_match(p, 1, a, 10), 8);
	CHECK_U64(kv_paged_table(p, 1)[0], 0);
	CHECK_U64(kv_paged_table(p, 1)[1], 1);
	kv_paged_get_stats(p, &s);
	CHECK_U64(s.hits, 2);
	CHECK_U64(s.misses, 0);
	check_counts(p, 2, 0, 6);

	/* 8 tokens: one token is left to compute, so one block attaches and
	 * the second is neither hit nor missed */
	CHECK_U64(kv_paged_match(p, 1, a, 8), 4);
	kv_paged_get_stats(p, &s);
	CHECK_U64(s.hits, 3);
	CHECK_U64(s.misses, 0);

	/* the first token changed: every block misses */
	memcpy(x, a, sizeof x);
	x[0] = 99;
	CHECK_U64(kv_paged_match(p, 1, x, 10), 0);
	kv_paged_get_stats(p, &s);
	CHECK_U64(s.hits, 3);
	CHECK_U64(s.misses, 2);

	/* token 5 changed: the first block hits, the second misses */
	memcpy(x, a, sizeof x);
	x[5] = 99;
	CHECK_U64(kv_paged_match(p, 1, x, 10), 4);
	kv_paged_get_stats(p, &s);
	CHECK_U64(s.hits, 4);
	CHECK_U64(s.misses, 3);
	/* the changed text goes on from there and keys its own block */
	CHECK(kv_paged_append(p, 1, x + 4, 6) == 0);
	CHECK_U64(kv_paged_len(p, 1), 10);
	kv_paged_release(p, 1);
	check_counts(p, 0, 3, 5);
	CHECK_U64(kv_paged_match(p, 0, x, 10), 8);
	CHECK_U64(kv_paged_match(p, 1, a, 10), 8); /* both kept */
	check_counts(p, 3, 0, 5); /* the first block is shared */
	CHECK_U64(kv_paged_table(p, 0)[0], kv_paged_table(p, 1)[0]);
	CHECK(kv_paged_table(p, 0)[1] != kv_paged_table(p, 1)[1]);
	kv_paged_free(p);
}

static void test_shared(void)
{
	struct kv_paged *p = pool(4, 6, 2, 12, true);
	uint32_t a[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
	CHECK(kv_paged_append(p, 0, a, 9) == 0);
	/* a live sequence's full blocks are shared with a new one */
	CHECK_U64(kv_paged_match(p, 1, a, 9), 8);
	check_counts(p, 3, 0, 3);
	/* a shared block cannot be cut into and rewritten */
	CHECK(kv_paged_truncate(p, 1, 6) == KV_EINVAL);
	CHECK(kv_paged_truncate(p, 1, 9) == KV_EINVAL); /* beyond */
	kv_paged_release(p, 1);
	check_counts(p, 3, 0, 3); /* still held by sequence 0 */
	/* sequence 0 cut to 6: its partial block is no longer keyed */
	CHECK(kv_paged_truncate(p, 0, 6) == 0);
	check_counts(p, 2, 0, 4);
	CHECK_U64(kv_paged_match(p, 1, a, 9), 4);
	kv_paged_free(p);
}

static void test_eviction(void)
{
	/* 4 blocks of 2, one sequence of up to 8 positions */
	struct kv_paged *p = pool(2, 4, 1, 8, true);
	struct kv_paged_stats s;
	uint32_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
	uint32_t c[6] = {9, 10, 11, 12, 13, 14};
	CHECK(kv_paged_append(p, 0, a, 4) == 0); /* blocks 0, 1 */
	kv_paged_release(p, 0); /* LRU: 1, 0 */
	CHECK(kv_paged_append(p, 0, b, 4) == 0); /* free 2, 3 first */
	CHECK_U64(kv_paged_table(p, 0)[0], 2);
	kv_paged_get_stats(p, &s);
	CHECK_U64(s.evictions, 0);
	kv_paged_release(p, 0); /* LRU: 1, 0, 3, 2 */
	check_counts(p, 0, 4, 0);
	/* three blocks: evicts a's second, a's first, b's second */
	CHECK(kv_paged_append(p, 0, c, 6) == 0);
	CHECK_U64(kv_paged_table(p, 0)[0], 1);
	CHECK_U64(kv_paged_table(p, 0)[1], 0);
	CHECK_U64(kv_paged_table(p, 0)[2], 3);
	kv_paged_get_stats(p, &s);
	CHECK_U64(s.evictions, 3);
	/* b's first block survived: b hits once, then misses */
	CHECK_U64(kv_paged_match(p, 0, b, 4), 2);
	kv_paged_get_stats(p, &s);
	CHECK_U64(s.hits, 1);
	CHECK_U64(s.misses, 0);
	/* a is gone */
	CHECK_U64(kv_paged_match(p, 0, a, 4), 0);
	kv_paged_get_stats(p, &s);
	CHECK_U64(s.misses, 1);
	kv_paged_free(p);
}

static void test_exhausted(void)
{
	struct kv_paged *p = pool(2, 2, 2, 4, true);
	uint32_t a[4] = {1, 2, 3, 4};
	CHECK(kv_paged_append(p, 0, a, 4) == 0);
	CHECK(kv_paged_append(p, 1, a, 1) == KV_ENOMEM);
	CHECK_U64(kv_paged_len(p, 1), 0);
	CHECK(kv_paged_append(p, 0, a, 1) == KV_EINVAL); /* beyond 4 */
	kv_paged_release(p, 0);
	CHECK(kv_paged_append(p, 1, a, 3) == 0); /* evicts */
	kv_paged_free(p);

	/* without prefix caching nothing is kept or matched */
	p = pool(2, 2, 1, 4, false);
	CHECK(kv_paged_append(p, 0, a, 4) == 0);
	kv_paged_release(p, 0);
	check_counts(p, 0, 0, 2);
	CHECK_U64(kv_paged_match(p, 0, a, 4), 0);
	kv_paged_free(p);

	/* positions filled without tokens are never keyed */
	p = pool(2, 2, 1, 4, true);
	CHECK(kv_paged_append(p, 0, NULL, 4) == 0);
	kv_paged_release(p, 0);
	check_counts(p, 0, 0, 2);
	kv_paged_free(p);
}

static void test_sizes(void)
{
	struct kv_paged_opts o = {16, 4, 1, 64, true};
	struct kv_paged *p = NULL;
	uint64_t bytes;
	CHECK(kv_paged_bytes(&o, &bytes) == 0);
	CHECK(bytes > 4 * 16 * sizeof(uint32_t));
	o.blocks = 3; /* 64 positions need 4 blocks of 16 */
	CHECK(kv_paged_new(&o, &p) == KV_EINVAL);
	o.blocks = 4;
	o.block_size = 0;
	CHECK(kv_paged_new(&o, &p) == KV_EINVAL);
	o.block_size = 16;
	o.seqs = 0;
	CHECK(kv_paged_new(&o, &p) == KV_EINVAL);
	CHECK(p == NULL);
}

static void test_usage(void)
{
	struct kv_paged_usage u;
	const uint64_t lens[3] = {1, 16, 17};
	/* blocks of 16 at 100 bytes a position, each reserving 32 */
	CHECK(kv_paged_usage(lens, 3, 32, 16, 100, &u) == 0);
	CHECK_U64(u.tokens, 34);
	CHECK_U64(u.blocks, 4); /* 1 + 1 + 2 */
	CHECK_U64(u.token_bytes, 3400);
	CHECK_U64(u.paged_bytes, 6400);    /* 4 x 16 x 100 */
	CHECK_U64(u.reserved_bytes, 9600); /* 3 x 32 x 100 */
	CHECK_NEAR(u.paged_waste, 0.46875, 1e-12);          /* 3000/6400 */
	CHECK_NEAR(u.reserved_waste, 0.6458333333, 1e-9);   /* 6200/9600 */
	const uint64_t bad[2] = {5, 0};
	CHECK(kv_paged_usage(bad, 2, 32, 16, 100, &u) == KV_EINVAL);
	const uint64_t big[1] = {33};
	CHECK(kv_paged_usage(big, 1, 32, 16, 100, &u) == KV_EINVAL);
	CHECK(kv_paged_usage(lens, 3, 32, 0, 100, &u) == KV_EINVAL);
	/* drawn lengths stay in range and are the same for the same seed */
	bool spread = false;
	for (uint64_t i = 0; i < 100; i++) {
		uint64_t d = kv_paged_draw_length(5, i, 10, 20);
		CHECK(d >= 10 && d <= 20);
		CHECK_U64(kv_paged_draw_length(5, i, 10, 20), d);
		spread |= d != kv_paged_draw_length(5, 0, 10, 20);
	}
	CHECK(spread);
	CHECK_U64(kv_paged_draw_length(5, 3, 7, 7), 7);
	const uint64_t huge[1] = {UINT64_MAX / 2};
	CHECK(kv_paged_usage(huge, 1, UINT64_MAX, 16, 100, &u) == KV_ERANGE);
}

int main(void)
{
	test_keys();
	test_hits();
	test_shared();
	test_eviction();
	test_exhausted();
	test_sizes();
	test_usage();
	return test_done("test_paged");
}
