/*
 * paged.h - the paged KV cache's bookkeeping: a pool of blocks of
 * block_size token positions shared by every sequence, a free list, a
 * block table per sequence, reference counts, and prefix caching.
 *
 * The pool holds no K/V values: it says which block of the engine's cache
 * holds which positions of which sequence. Block ids index the engine's
 * block array.
 *
 * Prefix caching: when a block of a sequence is full, it is keyed by
 * key = kv_paged_key(key of the block before it (0 for the first), its
 * block_size tokens), a hash chained over every token before it, and put
 * in a hash map. A new sequence attaches the blocks of the longest run of
 * whole leading blocks whose key, parent key and tokens all match, so a
 * block is reused only when the whole prefix up to its end matches. At
 * least one token of a prompt is always left to compute (its logits are
 * needed), so a prompt of n tokens attaches at most (n - 1) / block_size
 * blocks.
 *
 * Lifetime of a block: free (on the free list) -> held (reference count
 * >= 1: in the tables of that many sequences) -> on release, cached (count
 * 0, keyed: kept for reuse, on the LRU list) or free (unkeyed). A new
 * block comes from the free list first, then by evicting the least
 * recently released cached block. A sequence releases its blocks last to
 * first, so its later blocks (worthless without the earlier ones) are
 * evicted before its first ones.
 *
 * Ownership as in kv.h: kv_paged_new() allocates everything the pool will
 * ever need; nothing allocates after it. kv_paged_free() frees.
 */
#ifndef KV_PAGED_H
#define KV_PAGED_H

#include <stdbool.h>

#include "kv.h"

struct kv_paged_opts {
	uint32_t block_size; /* token positions per block, >= 1 */
	uint64_t blocks;     /* blocks in the pool */
	uint32_t seqs;       /* sequences (block tables), >= 1 */
	uint64_t max_len;    /* positions a sequence may reach, >= 1 */
	bool prefix;         /* key full blocks for reuse */
};

/* Counters since kv_paged_new() and the blocks in each state now. */
struct kv_paged_stats {
	uint64_t hits;      /* leading full blocks attached by a match */
	uint64_t misses;    /* full blocks a match looked up and lacked */
	uint64_t evictions; /* cached blocks taken for new positions */
	uint64_t held;      /* blocks in some sequence's table */
	uint64_t cached;    /* unheld, keyed, reusable */
	uint64_t free;      /* on the free list */
};

struct kv_paged;

/* The key of a full block: chained over prev (the key of the block before
 * it, 0 for the first block) and its n tokens. */
uint64_t kv_paged_key(uint64_t prev, const uint32_t *tokens, uint32_t n);

/* Blocks a sequence of len positions holds: ceil(len / block_size). */
uint64_t kv_paged_blocks_for(uint64_t len, uint32_t block_size);

/* Bytes kv_paged_new() allocates for opts. Returns 0, KV_EINVAL (zero
 * block size, sequences or length; a pool too small for one sequence of
 * max_len; more than 2^32 - 1 blocks) or KV_ERANGE. */
int kv_paged_bytes(const struct kv_paged_opts *o, uint64_t *bytes);

/* Allocates a pool with every block free. Returns 0 and *out (free with
 * kv_paged_free()), or as kv_paged_bytes(), or KV_ENOMEM. */
int kv_paged_new(const struct kv_paged_opts *o, struct kv_paged **out);
void kv_paged_free(struct kv_paged *p);

/* Positions sequence seq holds. */
uint64_t kv_paged_len(const struct kv_paged *p, uint32_t seq);

/* The block table of seq: block ids of its positions [i B, (i + 1) B) at
 * index i; valid until the next call that changes seq. */
const uint32_t *kv_paged_table(const struct kv_paged *p, uint32_t seq);

/* Releases every block of seq (last to first); seq holds nothing after. */
void kv_paged_release(struct kv_paged *p, uint32_t seq);

/*
 * Starts seq over a prompt of n tokens: releases what it held, then
 * attaches the cached blocks of the prompt's longest matching run of
 * leading full blocks (at most (n - 1) / block_size of them), counting
 * hits and, for the blocks looked up after the first miss, misses.
 * Returns the positions now held (a multiple of block_size, < n); 0 when
 * prefix caching is off.
 */
uint64_t kv_paged_match(struct kv_paged *p, uint32_t seq,
			const uint32_t *tokens, uint64_t n);

/*
 * Cuts seq back to its first len positions (len <= its length): blocks
 * past them are released, and a partly kept block loses its key, its
 * later positions being about to be rewritten. Returns 0, or KV_EINVAL
 * when len is beyond the sequence or the partly kept block is held by
 * another sequence too.
 */
int kv_paged_truncate(struct kv_paged *p, uint32_t seq, uint64_t len);

/*
 * Extends seq by n positions, taking blocks as it crosses into new ones,
 * and with prefix caching keys each block the tokens fill. tokens NULL
 * (positions filled otherwise): no block of seq is keyed from then on
 * until it is released. Returns 0, KV_EINVAL (beyond max_len) or
 * KV_ENOMEM (no free block and none to evict; seq unchanged).
 */
int kv_paged_append(struct kv_paged *p, uint32_t seq, const uint32_t *tokens,
		    uint64_t n);

void kv_paged_get_stats(const struct kv_paged *p, struct kv_paged_stats *s);

/* --- what paging saves: memory of sequences of given lengths --- */

struct kv_paged_usage {
	uint64_t tokens;        /* sum of the lengths */
	uint64_t blocks;        /* sum of ceil(length / block_size) */
	uint64_t token_bytes;   /* the data of the tokens: tokens x bpt */
	uint64_t paged_bytes;   /* blocks x block_size x bpt */
	uint64_t reserved_bytes; /* n x max_len x bpt: each reserves max */
	double paged_waste;     /* 1 - token_bytes / paged_bytes */
	double reserved_waste;  /* 1 - token_bytes / reserved_bytes */
};

/*
 * Memory of n sequences of lens[i] positions (each <= max_len) at bpt
 * bytes per position: in blocks of block_size, against a contiguous
 * reservation of max_len for each. Returns 0, KV_EINVAL (n, block_size or
 * bpt zero, a length zero or beyond max_len) or KV_ERANGE.
 */
/* The length of sequence `user` drawn uniform on [lo, hi] (lo <= hi)
 * from the seeded generator. */
uint64_t kv_paged_draw_length(uint64_t seed, uint64_t user, uint64_t lo,
			      uint64_t hi);

int kv_paged_usage(const uint64_t *lens, uint64_t n, uint64_t max_len,
		   uint32_t block_size, uint64_t bpt,
		   struct kv_paged_usage *u);

/* A distribution of text lengths, as "uniform:LO:HI" or "L1,L2,...". */
struct kv_lengths {
	uint64_t *lens, n; /* the list (malloc'd), n long; NULL: uniform */
	uint64_t lo, hi;   /* uniform on [lo, hi] */
};

/* The most lengths a list gives. */
#define KV_LENGTHS_MAX 65536

/*
 * Parses s into l, lengths in 1..max. A list replaces l's list; the
 * uniform form sets lo and hi only, so a list parsed before stays the
 * one in effect. Returns 0, KV_ENOMEM, or KV_EINVAL with err saying what
 * is valid (without s).
 */
int kv_lengths_parse(const char *s, uint64_t max, struct kv_lengths *l,
		     char *err);

/* Frees l's list; l is uniform after. */
void kv_lengths_free(struct kv_lengths *l);

#endif
