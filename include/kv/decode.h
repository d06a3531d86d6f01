/*
 * decode.h - a decode session on one engine: a seeded prompt, then tokens
 * one at a time, with the cache (the prompt in one pass, then only the
 * newest token) and without it (the whole text again at every step), the
 * token of each way drawn from its own logits, each way timed, and the
 * two compared. kvdecode prints its steps; the tests drive it.
 */
#ifndef KV_DECODE_H
#define KV_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"

struct kv_decode_opts {
	uint64_t prompt;     /* prompt tokens per sequence, >= 1, drawn from
				the seed (kv_rand_token) */
	uint64_t gen;        /* tokens to generate, >= 1 */
	bool cache, nocache; /* the ways that run (one at least) */
	double temperature;  /* of the draw (kv_sample); 0: the likeliest */
	uint64_t top_k;      /* 0: every token */
	uint64_t seed;
	const uint32_t *forced; /* a text to go on with, (users, prompt +
				   gen), instead of each way's own draws
				   (teacher forcing: the quality bench);
				   NULL: the draws */
};

/* One step, every sequence of the engine at once. Index 0 is the way
 * without the cache, 1 the way with it. */
struct kv_decode_step {
	uint64_t step;           /* 1 .. gen */
	uint64_t ctx;            /* tokens each sequence had before it */
	double ms[2];            /* each way's forward pass; NAN: not run */
	const uint32_t *next[2]; /* each sequence's token drawn each way;
				    NULL: not run */
	double max_diff;         /* largest logit difference of the ways;
				    NAN unless both run */
	bool same;               /* both ways drew the same tokens */
};

struct kv_decode;

/* Token passes of generating `gen` tokens after a prompt of `prompt`: with
 * the cache prompt + gen - 1, without sum of (prompt + i) for i < gen.
 * Returns 0 or KV_ERANGE. */
int kv_decode_passes(uint64_t prompt, uint64_t gen, bool cache,
		     uint64_t *out);

/* Bytes a decode session keeps beside the engine for `users` sequences
 * of prompt + gen tokens over a vocabulary: per user two texts and a
 * chunk of tokens (uint32) and two rows of logits, one work row, and the
 * 11 bytes a user (and one) kvdecode prints its tokens through; with
 * prefix reuse (kv_prefix_reuse) also the cold and current logits of
 * every step (2 gen rows). Returns 0 or KV_ERANGE. */
int kv_decode_loop_bytes(uint64_t users, uint64_t prompt, uint64_t gen,
			 uint64_t vocab, bool prefix, uint64_t *out);

/* Opens a session on e (which it does not own; its cache empty). Returns
 * 0, KV_EINVAL (no way to run, a prompt or gen of 0) or KV_ENOMEM. A text
 * longer than the engine's context fails at its step (the forward pass's
 * KV_EINVAL). */
int kv_decode_open(struct kv_engine *e, const struct kv_decode_opts *o,
		   struct kv_decode **out);

/* Runs the next step into *st: returns 1, or 0 once gen steps are done,
 * or the forward pass's KV_E* (KV_ENOMEM: a paged cache out of blocks),
 * st->step naming the step that failed. */
int kv_decode_next(struct kv_decode *d, struct kv_decode_step *st);

/* The last step's logits of one way, (users, vocab); NULL if not run. */
const float *kv_decode_logits(const struct kv_decode *d, bool cache);

void kv_decode_close(struct kv_decode *d);

/* --- prefix reuse: a script of requests over one paged pool --- */

/* The requests, in order: the prompt cold; the same again (warm); from
 * its middle on new tokens (tail); its first token changed (first); the
 * prompt once more after those (again). Warm and again must give the
 * cold logits. */
enum { KV_PREFIX_REQUESTS = 5 };
extern const char *const kv_prefix_names[KV_PREFIX_REQUESTS];

struct kv_prefix_request {
	uint64_t cached;     /* prompt tokens found in the pool */
	uint64_t hits, misses, evictions; /* the pool's, during it */
	uint64_t blocks_held;             /* after it */
	uint32_t first;      /* the first token generated */
	int identical;       /* its logits equal the cold ones: 1 or 0;
				-1 where not asked */
	double ms_first;     /* prefix match and prefill: time to first
				token */
	double ms_decode;    /* the other gen - 1 tokens */
};

/* Runs the script on e (paged, one user, its pool empty): each request's
 * prompt of `prompt` tokens matched against the pool, the rest
 * prefilled, then gen tokens decoded (drawn as kv_sample with
 * temperature, top_k and seed). Returns 0, KV_ENOMEM (out of memory, or
 * a request found no free block: *failed names it) or another KV_E*. */
int kv_prefix_reuse(struct kv_engine *e, uint64_t prompt, uint64_t gen,
		    double temperature, uint64_t top_k, uint64_t seed,
		    struct kv_prefix_request r[KV_PREFIX_REQUESTS],
		    int *failed);

#endif
