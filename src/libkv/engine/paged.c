/*
 * paged.c - the block pool of the paged KV cache (see paged.h): which
 * block holds which positions of which sequence, which blocks are free,
 * which are cached for prefix reuse, and in what order they are evicted.
 * Pure bookkeeping over index arrays allocated once; the engine keeps the
 * K/V values in its own block array. After it, what paging saves: the
 * memory of texts of given lengths, and the distributions (kv_lengths)
 * those lengths are given by or drawn from.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"
#include "kv/paged.h"

#define NONE UINT32_MAX

struct kv_paged {
	struct kv_paged_opts o;
	uint64_t per_seq;   /* most blocks of a sequence */
	uint32_t *ref;      /* (blocks) sequences holding the block */
	bool *keyed;        /* (blocks) in the hash map */
	uint64_t *key;      /* (blocks) chained key, when keyed */
	uint64_t *parent;   /* (blocks) key of the block before, when keyed */
	uint32_t *tokens;   /* (blocks, block_size) what filled the block */
	uint32_t *chain;    /* (blocks) next block of the same bucket */
	uint32_t *prev, *next; /* (blocks) LRU list of cached blocks */
	uint32_t *free_next;   /* (blocks) free list */
	uint32_t *bucket;   /* (nbuckets) first block of each bucket */
	uint64_t nbuckets;  /* a power of two */
	uint32_t lru_head, lru_tail, free_head;
	uint32_t *table;    /* (seqs, per_seq) block ids */
	uint64_t *keys;     /* (seqs, per_seq) chained key of each block */
	uint64_t *len;      /* (seqs) positions held */
	bool *nokey;        /* (seqs) filled without tokens: never keyed */
	struct kv_paged_stats st;
};

uint64_t kv_paged_key(uint64_t prev, const uint32_t *tokens, uint32_t n)
{
	uint64_t h = kv_mix64(prev ^ KV_GOLDEN);
	for (uint32_t i = 0; i < n; i++)
		h = kv_mix64(h + KV_GOLDEN * ((uint64_t)tokens[i] + 1));
	return h;
}

uint64_t kv_paged_blocks_for(uint64_t len, uint32_t block_size)
{
	return len / block_size + (len % block_size != 0);
}

/* Buckets of the hash map: a power of two, at least the blocks. */
static uint64_t buckets_for(uint64_t blocks)
{
	uint64_t n = 1;
	while (n < blocks)
		n <<= 1;
	return n;
}

/* Bytes of each array, in the order kv_paged_new() carves them. */
static int layout(const struct kv_paged_opts *o, uint64_t sz[12])
{
	if (!o->block_size || !o->seqs || !o->max_len ||
	    o->blocks >= NONE ||
	    o->blocks < kv_paged_blocks_for(o->max_len, o->block_size))
		return KV_EINVAL;
	uint64_t b = o->blocks, per = kv_paged_blocks_for(o->max_len,
							   o->block_size);
	uint64_t tab;
	int e;
	if ((e = kv_mul(per, o->seqs, &tab)) ||
	    (e = kv_mul(b, o->block_size, &sz[4])) ||
	    (e = kv_mul(sz[4], sizeof(uint32_t), &sz[4])) ||
	    (e = kv_mul(tab, sizeof(uint64_t), &sz[10])))
		return e;
	sz[0] = b * sizeof(uint32_t);  /* ref */
	sz[1] = b * sizeof(bool);      /* keyed */
	sz[2] = b * sizeof(uint64_t);  /* key */
	sz[3] = b * sizeof(uint64_t);  /* parent */
	sz[5] = b * 4 * sizeof(uint32_t); /* chain, prev, next, free_next */
	sz[6] = buckets_for(b) * sizeof(uint32_t);
	sz[7] = tab * sizeof(uint32_t); /* table */
	sz[8] = (uint64_t)o->seqs * sizeof(uint64_t); /* len */
	sz[9] = (uint64_t)o->seqs * sizeof(bool);
	sz[11] = sizeof(struct kv_paged);
	return 0;
}

int kv_paged_bytes(const struct kv_paged_opts *o, uint64_t *bytes)
{
	uint64_t sz[12];
	int e = layout(o, sz);
	*bytes = 0;
	for (int i = 0; i < 12 && !e; i++)
		e = kv_add(*bytes, sz[i], bytes);
	return e;
}

int kv_paged_new(const struct kv_paged_opts *o, struct kv_paged **out)
{
	uint64_t sz[12], total;
	int e = kv_paged_bytes(o, &total);
	if (e)
		return e;
	layout(o, sz);
	if (total > SIZE_MAX)
		return KV_ENOMEM;
	struct kv_paged *p = calloc(1, sizeof *p);
	if (!p)
		return KV_ENOMEM;
	p->o = *o;
	p->per_seq = kv_paged_blocks_for(o->max_len, o->block_size);
	p->nbuckets = buckets_for(o->blocks);
	p->ref = malloc(sz[0]);
	p->keyed = calloc(o->blocks, sizeof(bool));
	p->key = malloc(sz[2]);
	p->parent = malloc(sz[3]);
	p->tokens = malloc(sz[4]);
	p->chain = malloc(sz[5]);
	p->bucket = malloc(sz[6]);
	p->table = malloc(sz[7]);
	p->len = calloc(o->seqs, sizeof(uint64_t));
	p->nokey = calloc(o->seqs, sizeof(bool));
	p->keys = malloc(sz[10]);
	if (!p->ref || !p->keyed || !p->key || !p->parent || !p->tokens ||
	    !p->chain || !p->bucket || !p->table || !p->len || !p->nokey ||
	    !p->keys) {
		kv_paged_free(p);
		return KV_ENOMEM;
	}
	p->prev = p->chain + o->blocks;
	p->next = p->prev + o->blocks;
	p->free_next = p->next + o->blocks;
	for (uint64_t i = 0; i < o->blocks; i++) {
		p->ref[i] = 0;
		p->free_next[i] = i + 1 < o->blocks ? (uint32_t)(i + 1) : NONE;
	}
	for (uint64_t i = 0; i < p->nbuckets; i++)
		p->bucket[i] = NONE;
	p->free_head = o->blocks ? 0 : NONE;
	p->lru_head = p->lru_tail = NONE;
	p->st.free = o->blocks;
	*out = p;
	return 0;
}

void kv_paged_free(struct kv_paged *p)
{
	if (!p)
		return;
	free(p->ref);
	free(p->keyed);
	free(p->key);
	free(p->parent);
	free(p->tokens);
	free(p->chain);
	free(p->bucket);
	free(p->table);
	free(p->len);
	free(p->nokey);
	free(p->keys);
	free(p);
}

uint64_t kv_paged_len(const struct kv_paged *p, uint32_t seq)
{
	return p->len[seq];
}

const uint32_t *kv_paged_table(const struct kv_paged *p, uint32_t seq)
{
	return p->table + (uint64_t)seq * p->per_seq;
}

void kv_paged_get_stats(const struct kv_paged *p, struct kv_paged_stats *s)
{
	*s = p->st;
}

/* --- the hash map and the LRU list --- */

static uint64_t bucket_of(const struct kv_paged *p, uint64_t key)
{
	return key & (p->nbuckets - 1);
}

static void map_put(struct kv_paged *p, uint32_t b, uint64_t key,
		    uint64_t parent)
{
	uint64_t h = bucket_of(p, key);
	p->key[b] = key;
	p->parent[b] = parent;
	p->keyed[b] = true;
	p->chain[b] = p->bucket[h];
	p->bucket[h] = b;
}

static void map_drop(struct kv_paged *p, uint32_t b)
{
	uint32_t *at = &p->bucket[bucket_of(p, p->key[b])];
	while (*at != b)
		at = &p->chain[*at];
	*at = p->chain[b];
	p->keyed[b] = false;
}

/* The cached or held block keyed (key, parent) with these tokens, or
 * NONE: the tokens are compared too, so only a collision of both 64-bit
 * keys and the tokens could match a different prefix. */
static uint32_t map_find(const struct kv_paged *p, uint64_t key,
			 uint64_t parent, const uint32_t *tokens)
{
	size_t bytes = (size_t)p->o.block_size * sizeof *tokens;
	for (uint32_t b = p->bucket[bucket_of(p, key)]; b != NONE;
	     b = p->chain[b])
		if (p->key[b] == key && p->parent[b] == parent &&
		    !memcmp(p->tokens + (uint64_t)b * p->o.block_size, tokens,
			    bytes))
			return b;
	return NONE;
}

static void lru_push(struct kv_paged *p, uint32_t b)
{
	p->prev[b] = p->lru_tail;
	p->next[b] = NONE;
	if (p->lru_tail != NONE)
		p->next[p->lru_tail] = b;
	else
		p->lru_head = b;
	p->lru_tail = b;
}

static void lru_drop(struct kv_paged *p, uint32_t b)
{
	if (p->prev[b] != NONE)
		p->next[p->prev[b]] = p->next[b];
	else
		p->lru_head = p->next[b];
	if (p->next[b] != NONE)
		p->prev[p->next[b]] = p->prev[b];
	else
		p->lru_tail = p->prev[b];
}

/* --- taking and giving back blocks --- */

/* Drops one reference to b: unheld, it is cached (keyed) or freed. */
static void unref(struct kv_paged *p, uint32_t b)
{
	if (--p->ref[b])
		return;
	p->st.held--;
	if (p->keyed[b]) {
		lru_push(p, b);
		p->st.cached++;
	} else {
		p->free_next[b] = p->free_head;
		p->free_head = b;
		p->st.free++;
	}
}

/* Takes a block for new positions: a free one, else the least recently
 * released cached one. The caller checked that one exists. */
static uint32_t take(struct kv_paged *p)
{
	uint32_t b = p->free_head;
	if (b != NONE) {
		p->free_head = p->free_next[b];
		p->st.free--;
	} else {
		b = p->lru_head;
		lru_drop(p, b);
		map_drop(p, b);
		p->st.cached--;
		p->st.evictions++;
	}
	p->ref[b] = 1;
	p->st.held++;
	return b;
}

void kv_paged_release(struct kv_paged *p, uint32_t seq)
{
	uint32_t *t = p->table + (uint64_t)seq * p->per_seq;
	for (uint64_t i = kv_paged_blocks_for(p->len[seq], p->o.block_size);
	     i-- > 0;)
		unref(p, t[i]);
	p->len[seq] = 0;
	p->nokey[seq] = false;
}

uint64_t kv_paged_match(struct kv_paged *p, uint32_t seq,
			const uint32_t *tokens, uint64_t n)
{
	uint32_t bs = p->o.block_size;
	uint32_t *t = p->table + (uint64_t)seq * p->per_seq;
	uint64_t *k = p->keys + (uint64_t)seq * p->per_seq;
	uint64_t full = n ? (n - 1) / bs : 0, i = 0, prev = 0;
	kv_paged_release(p, seq);
	if (!p->o.prefix)
		return 0;
	for (; i < full; i++) {
		const uint32_t *tk = tokens + i * bs;
		uint64_t key = kv_paged_key(prev, tk, bs);
		uint32_t b = map_find(p, key, prev, tk);
		if (b == NONE)
			break;
		if (p->ref[b]++ == 0) {
			lru_drop(p, b);
			p->st.cached--;
			p->st.held++;
		}
		t[i] = b;
		k[i] = prev = key;
	}
	p->st.hits += i;
	p->st.misses += full - i;
	p->len[seq] = i * bs;
	return i * bs;
}

int kv_paged_truncate(struct kv_paged *p, uint32_t seq, uint64_t len)
{
	uint32_t bs = p->o.block_size;
	uint32_t *t = p->table + (uint64_t)seq * p->per_seq;
	uint64_t have = kv_paged_blocks_for(p->len[seq], bs);
	uint64_t keep = kv_paged_blocks_for(len, bs);
	if (len > p->len[seq])
		return KV_EINVAL;
	if (len == 0) {
		kv_paged_release(p, seq);
		return 0;
	}
	if (len % bs && p->ref[t[keep - 1]] > 1)
		return KV_EINVAL;
	for (uint64_t i = have; i-- > keep;)
		unref(p, t[i]);
	if (len % bs && p->keyed[t[keep - 1]])
		map_drop(p, t[keep - 1]);
	p->len[seq] = len;
	return 0;
}

int kv_paged_append(struct kv_paged *p, uint32_t seq, const uint32_t *tokens,
		    uint64_t n)
{
	uint32_t bs = p->o.block_size;
	uint32_t *t = p->table + (uint64_t)seq * p->per_seq;
	uint64_t *k = p->keys + (uint64_t)seq * p->per_seq;
	uint64_t len = p->len[seq];
	if (n > p->o.max_len - len)
		return KV_EINVAL;
	uint64_t have = kv_paged_blocks_for(len, bs);
	uint64_t need = kv_paged_blocks_for(len + n, bs) - have;
	if (need > p->st.free + p->st.cached)
		return KV_ENOMEM;
	if (!tokens)
		p->nokey[seq] = true;
	for (uint64_t i = 0; i < n; i++, len++) {
		uint64_t bi = len / bs;
		if (len % bs == 0)
			t[bi] = take(p);
		uint32_t b = t[bi];
		if (p->nokey[seq])
			continue;
		p->tokens[(uint64_t)b * bs + len % bs] = tokens[i];
		if (len % bs != bs - 1 || !p->o.prefix)
			continue;
		/* the block is full: key it, unless an equal one is kept */
		uint64_t prev = bi ? k[bi - 1] : 0;
		const uint32_t *tk = p->tokens + (uint64_t)b * bs;
		k[bi] = kv_paged_key(prev, tk, bs);
		if (map_find(p, k[bi], prev, tk) == NONE)
			map_put(p, b, k[bi], prev);
	}
	p->len[seq] = len;
	return 0;
}

/* --- what paging saves --- */

/* The generator's stream of drawn lengths, beyond engine_int.h's. */
#define STREAM_LENGTHS (4ULL << 40)

uint64_t kv_paged_draw_length(uint64_t seed, uint64_t user, uint64_t lo,
			      uint64_t hi)
{
	uint64_t span = hi - lo + 1; /* 0: the whole 64-bit range */
	uint64_t r = kv_rand_bits(kv_rand_key(seed, STREAM_LENGTHS), user);
	return span ? lo + r % span : r;
}

int kv_paged_usage(const uint64_t *lens, uint64_t n, uint64_t max_len,
		   uint32_t block_size, uint64_t bpt,
		   struct kv_paged_usage *u)
{
	uint64_t slots;
	int e;
	memset(u, 0, sizeof *u);
	if (!n || !block_size || !bpt)
		return KV_EINVAL;
	for (uint64_t i = 0; i < n; i++) {
		if (!lens[i] || lens[i] > max_len)
			return KV_EINVAL;
		if ((e = kv_add(u->tokens, lens[i], &u->tokens)) ||
		    (e = kv_add(u->blocks,
				kv_paged_blocks_for(lens[i], block_size),
				&u->blocks)))
			return e;
	}
	if ((e = kv_mul(u->tokens, bpt, &u->token_bytes)) ||
	    (e = kv_mul(u->blocks, block_size, &slots)) ||
	    (e = kv_mul(slots, bpt, &u->paged_bytes)) ||
	    (e = kv_mul(n, max_len, &slots)) ||
	    (e = kv_mul(slots, bpt, &u->reserved_bytes)))
		return e;
	u->paged_waste = 1.0 - (double)u->token_bytes / (double)u->paged_bytes;
	u->reserved_waste =
		1.0 - (double)u->token_bytes / (double)u->reserved_bytes;
	return 0;
}

/* --- kv_lengths: a distribution of text lengths --- */

/* The length at p in 1..max, its end in *end; 0 when there is none (a
 * sign or space first is none, and a zero first unless zero_first). */
static uint64_t one_length(const char *p, uint64_t max, bool zero_first,
			   char **end)
{
	uint64_t v;
	*end = (char *)p;
	if (*p < (zero_first ? '0' : '1') || *p > '9')
		return 0;
	errno = 0;
	v = strtoull(p, end, 10);
	return errno || v > max ? 0 : v;
}

int kv_lengths_parse(const char *s, uint64_t max, struct kv_lengths *l,
		     char *err)
{
	char *end;
	if (!strncmp(s, "uniform:", 8)) {
		uint64_t lo = one_length(s + 8, max, false, &end), hi = 0;
		if (lo && *end == ':')
			hi = one_length(end + 1, max, false, &end);
		if (hi && !*end && lo <= hi) {
			l->lo = lo;
			l->hi = hi;
			return 0;
		}
		snprintf(err, KV_ERRLEN,
			 "uniform:LO:HI with 1 <= LO <= HI <= %llu",
			 (unsigned long long)max);
		return KV_EINVAL;
	}
	kv_lengths_free(l);
	if (!(l->lens = calloc(KV_LENGTHS_MAX, sizeof *l->lens)))
		return KV_ENOMEM;
	for (const char *p = s;; p = end + 1) {
		uint64_t v = one_length(p, max, true, &end);
		if (!v || (*end && *end != ',') || l->n == KV_LENGTHS_MAX) {
			snprintf(err, KV_ERRLEN,
				 "uniform:LO:HI or a list of 1 to %d lengths "
				 "in 1..%llu",
				 KV_LENGTHS_MAX, (unsigned long long)max);
			return KV_EINVAL;
		}
		l->lens[l->n++] = v;
		if (!*end)
			return 0;
	}
}

void kv_lengths_free(struct kv_lengths *l)
{
	free(l->lens);
	l->lens = NULL;
	l->n = 0;
}
