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
	const uint32_t *prompt_ids; /* the prompt of every sequence (prompt
				       ids, each below the vocabulary);
				       NULL: drawn from the seed */
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

/* Positions a run takes at most (prompt + gen, or one of kv_lengths'):
 * more are refused as absurd. */
#define KV_DECODE_MAX_POS (1ULL << 24)

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

/* What a session found over its steps, and the cache it ran over. Index
 * 0 is the way without the cache, 1 the way with it. */
struct kv_decode_result {
	uint64_t steps;      /* steps done */
	uint64_t positions;  /* each sequence's cache: prompt + gen - 1 */
	bool compared;       /* both ways ran */
	uint64_t first_diff; /* first step whose tokens differ; 0: none */
	double max_diff;     /* largest logit difference; 0 unless compared */
	double ms[2];        /* each way's forward passes, summed */
	uint64_t passes[2];  /* token passes the engine ran each way */
	uint64_t kv_per_token, kv_bytes; /* the cache, from its allocation */
	uint64_t pool, held; /* paged: blocks in the pool and held at the
				end; 0 when contiguous */
};

/* Runs d's remaining steps, calling each(st, arg) after every one (NULL:
 * none), and fills *r, also when a step fails. Returns 0, or the failed
 * step's KV_E* as kv_decode_next(); that step is r->steps + 1. */
int kv_decode_run(struct kv_decode *d,
		  void (*each)(const struct kv_decode_step *st, void *arg),
		  void *arg, struct kv_decode_result *r);

/* Whether the ways disagree: both ran, and their tokens differ at some
 * step or their logits by more than tol (or by NaN). */
bool kv_decode_differ(const struct kv_decode_result *r, double tol);

/* How many times faster the way with the cache ran: ms[0] / ms[1]; NAN
 * unless both ran and ms[1] > 0. */
double kv_decode_speedup(const struct kv_decode_result *r);

/* --- before a run: the engine it takes and the bytes it needs --- */

/* A run's engine as a tool's options (kvdecode's) or a sweep's point
 * (kv_sweep_engine_opts) ask for it, each count in 64 bits as parsed and
 * the weights' type left to the checkpoint; kv_decode_ask_opts() makes
 * it the engine's options, in one place for both. */
struct kv_decode_ask {
	uint64_t layers, vocab, kv_heads; /* 0: the model's */
	uint64_t mla;         /* latent rank; 0: the model's attention */
	uint64_t mla_rope;    /* MLA's rotary key; 0: the default */
	uint64_t users;       /* sequences decoded together, >= 1 */
	uint64_t threads;     /* engine threads, >= 1 */
	uint64_t seed;        /* the weights' */
	uint64_t block_size;  /* positions a block; 0: one contiguous run */
	bool paged;           /* the blocks from a pool */
	uint64_t pool_blocks; /* blocks of the pool; 0: what users need */
	bool prefix;          /* paged: full blocks kept for prefix reuse */
	enum kv_dtype k_dtype, v_dtype; /* the cache's formats */
	int weights_dtype;    /* enum kv_dtype, as kept in memory; -1: the
				 checkpoint's, else f32 */
	double logit_scale;   /* the head's output multiplied by this */
	const struct kv_st *ckpt; /* the weights read; NULL: drawn */
};

/* The engine options of a: kv_engine_opts_default()'s with a's values,
 * each count narrowed to the engine's field (the caller keeps it in
 * range) and the weights' type resolved; context, chunk and cache left
 * at the defaults, for kv_decode_engine_opts() or a bench to set. */
struct kv_engine_opts kv_decode_ask_opts(const struct kv_decode_ask *a);

/* Sets o's context, chunk and cache for a session of prompt + gen tokens
 * (the last token is not fed) run with the cache if cache, without it if
 * nocache; with o->prefix (kv_prefix_reuse), with the cache, prefilling
 * a block at a time. */
void kv_decode_engine_opts(struct kv_engine_opts *o, uint64_t prompt,
			   uint64_t gen, bool cache, bool nocache);

/* The default block size of a paged session of prompt + gen tokens:
 * vLLM's 16, or a shorter text's fed length (1 at least); drawn: texts
 * of a kv_lengths instead (kv_engine_lengths shortens it to theirs), 16. */
uint32_t kv_decode_block_size(uint64_t prompt, uint64_t gen, bool drawn);

/* The options of each run of a comparison of o's cache formats with f32
 * (kv_quality_run): a cache, max_ctx prompt + gen - 1 (the last token is
 * not fed), prompt tokens a chunk; with f32 both formats f32. */
struct kv_engine_opts kv_decode_compare_opts(const struct kv_engine_opts *o,
					     uint64_t prompt, uint64_t gen,
					     bool f32);

/* Bytes such a comparison needs at most: the larger of its two engines
 * and the reference logits. Returns 0, as kv_engine_estimate(), or
 * KV_ERANGE with err when the sum overflows 64 bits. */
int kv_decode_compare_bytes(const struct kv_model *m,
			    const struct kv_engine_opts *o, uint64_t prompt,
			    uint64_t gen, uint64_t *bytes, char *err);

/* What a session of prompt + gen tokens on m under o allocates. */
struct kv_decode_size {
	struct kv_engine_size engine; /* kv_engine_estimate's */
	uint64_t quality; /* kv_decode_compare_bytes when compared; else 0 */
	uint64_t loop;    /* the session's own (kv_decode_loop_bytes) */
	uint64_t need;    /* the larger of engine and quality, and loop */
};

/* Fills *s for o (users, vocabulary and prefix reuse from o and m), with
 * quality: the comparison of o's cache formats with f32 (kv_quality_run)
 * that runs after the session. Returns 0, or the estimates' KV_E* with
 * err, or KV_ERANGE with err when the sum overflows 64 bits. */
int kv_decode_estimate(const struct kv_model *m,
		       const struct kv_engine_opts *o, uint64_t prompt,
		       uint64_t gen, bool quality, struct kv_decode_size *s,
		       char *err);

/* The numbers of a dry run: cache bytes a token in o's formats and the
 * token passes of all o->users (kv_decode_passes), index as above. */
struct kv_decode_plan {
	uint64_t kv_per_token;
	uint64_t passes[2];
};

/* Fills *p. Returns 0, or the effective model's or the token bytes' KV_E*
 * with err, or KV_ERANGE with err when the passes overflow 64 bits. */
int kv_decode_plan(const struct kv_model *m, const struct kv_engine_opts *o,
		   uint64_t prompt, uint64_t gen, struct kv_decode_plan *p,
		   char *err);

/* kv_engine_lengths() over n lengths of l: its list (n long), or n drawn
 * from seed by kv_paged_draw_length(), each sequence able to reach hi.
 * Returns 0, or as kv_engine_lengths(), or KV_ENOMEM with err. */
int kv_decode_lengths(const struct kv_model *m, struct kv_engine_opts o,
		      const struct kv_lengths *l, uint64_t n, uint64_t seed,
		      bool block_fixed, uint64_t pool_blocks,
		      struct kv_lengths_report *r, char *err);

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
	uint64_t computed;   /* prompt tokens prefilled: prompt - cached */
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

/* Whether every request asked gave the cold logits (identical != 0). */
bool kv_prefix_same(const struct kv_prefix_request r[KV_PREFIX_REQUESTS]);

#endif
