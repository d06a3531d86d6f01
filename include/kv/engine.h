/*
 * engine.h - the decode engine: a transformer, its weights drawn from a
 * seed or read from a checkpoint (float32, or kept in bf16 or f16), run
 * over a real KV cache in any stored format, so the cache's exactness,
 * its bytes and its speed are measured rather than asserted.
 *
 * Two blocks, chosen from the model's family: GPT-2 (LayerNorm, GELU MLP,
 * learned positions, output head tied to the embedding, biases) and
 * Llama-style (RMSNorm, SwiGLU MLP, rotary positions in the Hugging Face
 * rotate-half form, grouped KV heads, untied head unless the config ties
 * it). Every layer keeps full attention and a dense MLP. Multi-head latent
 * attention (DeepSeek V2/V3) replaces the attention of every layer for a
 * DeepSeek config (its other layers run Llama-style, every MLP dense of
 * intermediate_size) or, with mla_rank, for any of the two blocks; the
 * cache then keeps one latent row per token and layer. Sliding windows,
 * state-space layers, Gemma, Falcon and the other families are refused
 * with KV_EUNSUP and a message.
 *
 * Weights: every tensor has an id and a logical shape; element j of tensor
 * t is u(t, j) = mix(mix(seed + G * (t + 1)) + G * (j + 1)) with splitmix64's
 * mix() and G = 0x9E3779B97F4A7C15, turned into r = (u >> 40) * 2^-23 - 1,
 * uniform on [-1, 1) and exact in float32, then scaled (see engine.c). Any
 * element is a function of (seed, t, j) alone, so the weights are the same
 * for any thread count, and tests/ref/ref_forward.py rebuilds them.
 *
 * The cache keeps K and V in any format kv_dtype_stored() names (f32,
 * f16, bf16, fp8 e4m3, int8 with a scale per token and head, llama.cpp's
 * q8_0, q4_0, q4_1), each row encoded once when written and read in
 * place by attention; its allocation is kvsize's bytes for those formats.
 *
 * Threads: the engine runs its own pool of `threads` threads and splits
 * every product over them, calling OpenBLAS single-threaded inside each
 * (kv_engine_new() sets openblas_set_num_threads(1)): one set of threads
 * for BLAS and attention, so nothing spins against anything else.
 *
 * Ownership as in kv.h: kv_engine_new() allocates, kv_engine_free() frees.
 * Nothing allocates after kv_engine_new(): a forward pass uses the scratch
 * sized for the run.
 */
#ifndef KV_ENGINE_H
#define KV_ENGINE_H

#include <stdbool.h>

#include "machine.h"
#include "model.h"
#include "paged.h"

struct kv_st;

/* What a run needs beyond the model. */
struct kv_engine_opts {
	uint32_t layers;   /* 0: the model's decoder layers */
	uint64_t vocab;    /* 0: the model's vocabulary */
	uint32_t kv_heads; /* 0: the model's K/V heads; must divide heads */
	uint32_t users;    /* sequences decoded together, >= 1 */
	uint64_t max_ctx;  /* positions each sequence reaches, >= 1 */
	uint64_t max_chunk; /* most tokens per sequence in one forward pass:
			     * the prompt with the cache, the whole text
			     * without; 0 means max_ctx */
	bool cache;        /* allocate a KV cache of max_ctx per sequence */
	uint64_t seed;     /* weights' seed */
	uint32_t threads;  /* engine threads, >= 1 */
	uint32_t block_size; /* 0: one contiguous run of max_ctx positions
			      * per sequence, attended as one range; else
			      * attention walks blocks of this many
			      * positions (see "Paged cache" below) */
	bool paged;          /* the cache is a pool of blocks (block_size
			      * >= 1) addressed through block tables;
			      * else contiguous */
	uint64_t pool_blocks; /* blocks of the pool; 0: users x
			       * ceil(max_ctx / block_size) */
	bool prefix;         /* paged: keep full blocks for prefix reuse */
	uint32_t mla_rank; /* 0: the model's attention; else multi-head
			    * latent attention with a latent of this rank
			    * (an MLA config: its kv_lora_rank instead) */
	uint32_t mla_rope; /* 0: the default rotary key of MLA (the
			    * config's, else half the head size); else its
			    * size, even */
	enum kv_dtype k_dtype, v_dtype; /* the cache's formats of K and V:
					 * any that kv_dtype_stored() says */
	float logit_scale; /* the head's output multiplied by this (0 or 1:
			    * unscaled), to make random weights' flat
			    * next-token distributions as peaked as a
			    * trained model's */
	enum kv_dtype weights_dtype; /* every weight's type in memory,
				      * norms and biases included: f32 (the
				      * default), bf16 or f16, read as
				      * stored */
	const struct kv_st *ckpt; /* the weights of this checkpoint
				   * (safetensors.h) instead of drawn ones:
				   * GPT-2 and Llama-family layouts; the
				   * model's own shape (no overrides but
				   * its own layers, vocab, K/V heads) */
};

/* Bytes a run needs, computed before anything is allocated. */
struct kv_engine_size {
	uint64_t weights; /* every tensor in weights_dtype, norms and
			   * biases too: the bytes kv_weight_bytes() gives
			   * for the effective model's kv_model_params()
			   * total, exactly, when each matrix fills whole
			   * 64-byte lines (it is padded to them) and no
			   * 16-bit vector is of odd length, as in every
			   * shipped config */
	uint64_t cache;   /* the KV cache: kv_model_bytes() of the effective
			   * model in the K and V formats for max_ctx x
			   * users, or 0 */
	uint64_t scratch; /* activations, logits, tables, per-thread buffers */
	uint64_t total;
};

struct kv_engine;

/* Whether the engine keeps weights in type t: f32, bf16, f16. */
bool kv_engine_weights_type(enum kv_dtype t);

/* Options for a model with the defaults: 1 user, cache on, seed 0,
 * 1 thread, max_ctx 160 (the article's 128 + 32), an f32 cache, logits
 * unscaled. */
struct kv_engine_opts kv_engine_opts_default(void);

/*
 * Checks that the engine can run model m under opts and fills *eff with
 * the effective model (overrides applied; f32; every layer full attention
 * with the same shape), the one kvsize would size. Returns 0; KV_EUNSUP
 * (a family or layer kind the engine does not run; err says which are
 * supported, a cache format the engine sizes but does not store) or
 * KV_EINVAL (zero or absurd values, kv_heads not dividing heads, a head
 * size a block format cannot tile); err filled. On success free eff's layers with kv_model_free().
 */
int kv_engine_model(const struct kv_model *m, const struct kv_engine_opts *o,
		    struct kv_model **eff, char *err);

/* Bytes of weights, cache and scratch for model m under opts. Returns 0,
 * or as kv_engine_model(), or KV_ERANGE when a size overflows 64 bits. */
int kv_engine_estimate(const struct kv_model *m,
		       const struct kv_engine_opts *o, struct kv_engine_size *s,
		       char *err);

/* Largest layer count (>= 1) and vocabulary (>= 256) with which the run
 * fits in `avail` bytes, the other values unchanged; 0 when none does. */
uint32_t kv_engine_fit_layers(const struct kv_model *m,
			      const struct kv_engine_opts *o, uint64_t avail);
uint64_t kv_engine_fit_vocab(const struct kv_model *m,
			     const struct kv_engine_opts *o, uint64_t avail);

/* The tensors of checkpoint ck checked against model m, its config, as
 * kv_engine_new() would load them, before anything is allocated: each
 * one found, of a dtype the engine reads and the shape m's fields give.
 * Returns 0, or as kv_engine_model() and KV_EINVAL "file: tensor: shape
 * [..], where config gives [..]", err filled. Run it where a checkpoint
 * is opened, so that a config at odds with its tensors is named before
 * a prompt or a tokenizer is held to the config's vocabulary. */
int kv_engine_ckpt_check(const struct kv_model *m, const struct kv_st *ck,
			 char *err);

/* Allocates the engine, draws its weights and starts its threads. Returns
 * 0 and *out (free with kv_engine_free()), or a KV_E* code with err. */
int kv_engine_new(const struct kv_model *m, const struct kv_engine_opts *o,
		  struct kv_engine **out, char *err);
void kv_engine_free(struct kv_engine *e);

/*
 * One forward pass of n tokens per sequence: tokens is (users, n), the
 * chunk of each sequence at positions pos .. pos + n - 1. With cache, K/V
 * of the chunk are written into the cache and every position up to pos +
 * n - 1 is read from it. Without, pos must be 0: the tokens are the whole
 * text, recomputed. Writes the logits of each sequence's last token into
 * logits (users, vocab). Returns 0 or KV_EINVAL (n == 0, pos + n beyond
 * max_ctx, n beyond max_chunk, no cache, a token >= vocab).
 */
int kv_engine_forward(struct kv_engine *e, const uint32_t *tokens,
		      uint64_t n, uint64_t pos, bool cache, float *logits);

/* Token passes (one token through every layer, per sequence) run so far
 * with and without the cache. */
uint64_t kv_engine_passes(const struct kv_engine *e, bool cache);

/* The effective model the engine runs (free nothing). */
const struct kv_model *kv_engine_get_model(const struct kv_engine *e);
/* Vocabulary size of the engine. */
uint64_t kv_engine_vocab(const struct kv_engine *e);
/* Bytes the cache allocation has, and bytes per token per sequence read
 * from it (allocation / (users x max_ctx), paged: allocation / (blocks x
 * block_size)), scales included; 0 without a cache. */
uint64_t kv_engine_cache_bytes(const struct kv_engine *e);
uint64_t kv_engine_cache_token_bytes(const struct kv_engine *e);

/* What a pass must move and compute, for benchmarks' rooflines (pure
 * arithmetic on the engine's shape):
 * - weight bytes one forward pass reads: every layer's tensors, the final
 *   norm and the output head, all in the weights' type (the embedding
 *   table only through the rows gathered, which are not counted);
 * - cache bytes a pass of one new token per sequence at position pos reads:
 *   users x (pos + 1) x bytes per token (K and V of every layer, in their
 *   stored formats, scales included; with MLA the latent and the rotary
 *   key, f32);
 * - FLOPs of a pass of n tokens per sequence at pos: 2 per multiply-add of
 *   the projections and MLP for users x n rows, of attention (q k and the
 *   weighted sum of v, every head, causal; with MLA the absorbed form's
 *   q c and sum of latents when the engine has a cache, the plain form's
 *   otherwise) and of the head for the last token of each sequence; norms
 *   and activations not counted. */
uint64_t kv_engine_weight_read_bytes(const struct kv_engine *e);
uint64_t kv_engine_cache_read_bytes(const struct kv_engine *e, uint64_t pos);
double kv_engine_flops(const struct kv_engine *e, uint64_t n, uint64_t pos);
/* FLOPs of kv_engine_attend() at pos: q k and the weighted sum of v over
 * pos + 1 positions, every head, layer and sequence (MLA: q c over rank +
 * rope values and the sum of rank-value latents). */
double kv_engine_attend_flops(const struct kv_engine *e, uint64_t pos);
/* Sequences the engine decodes together. */
uint64_t kv_engine_users(const struct kv_engine *e);

/* Fills positions 0 .. ctx - 1 of every sequence's cache with random values
 * of a model's scale, standing in for a prefill (for benchmarks); the same
 * values in every layout. Paged, the sequences take their blocks in turn,
 * as when decoded together, so with several users each one's blocks lie
 * apart in the pool. Returns 0, KV_EINVAL (ctx beyond max_ctx or no
 * cache) or KV_ENOMEM (a pool too small for every user). */
int kv_engine_fill_cache(struct kv_engine *e, uint64_t ctx, uint64_t seed);

/* Attention alone: one new token per sequence at position pos attends over
 * positions 0 .. pos on every layer, with the queries left in the scratch
 * (for benchmarks of the cache read; MLA: the latent kernel, the queries
 * already absorbed). Returns 0 or KV_EINVAL. */
int kv_engine_attend(struct kv_engine *e, uint64_t pos);

/* Uses the portable C attention kernel instead of the vectorised one (for
 * tests that compare the two); returns whether a vectorised one exists
 * for the cache's formats. */
bool kv_engine_set_simd(struct kv_engine *e, bool on);

/*
 * --- Paged cache ---
 *
 * With block_size B, the cached attention of every layout walks the
 * positions in tiles of whole blocks (about 256 positions, at most the
 * context's blocks): the kernel runs on each tile's rows and the tiles'
 * partial results are merged in order (max, then rescaled sums). The
 * contiguous layout with the same B runs exactly the same kernels on the
 * same rows in the same order, only reading them from one run instead of
 * through a block table (a tile whose blocks lie apart in the pool is
 * first gathered into one run), so its logits are bitwise those of the
 * paged layout.
 *
 * The paged layout keeps the cache as pool_blocks blocks, each holding B
 * rows of head_dim floats per (layer, K/V, KV head), and a block table per
 * sequence (see paged.h). Block b's rows of (layer, K/V, head) follow
 * block b - 1's, so a sequence whose blocks were taken in order from a
 * fresh pool reads one run per head, as the contiguous layout does. kv_engine_forward() at pos cuts each sequence
 * back to pos positions (pos 0: a new text, every block released) and
 * takes blocks for the new ones; it fails with KV_ENOMEM when the pool
 * has no block left, and KV_EINVAL when pos is beyond what a sequence
 * holds.
 *
 * Prefix caching (prefix): every full block is keyed by the tokens up to
 * its end; kv_engine_prefix_match() attaches a prompt's cached leading
 * blocks to a sequence, and kv_engine_prefill() computes the rest. Both a
 * cold and a warm prompt are prefilled in chunks that end at block
 * boundaries, so a block computed once holds exactly what recomputing it
 * would, and warm logits are bitwise the cold ones.
 */

/* Starts sequence `user` on a prompt of n tokens: releases its blocks and
 * attaches the cached ones of the prompt's longest matching prefix of
 * whole blocks, leaving at least one token to compute. Sets *cached to the
 * positions attached (0 without prefix caching). Returns 0 or KV_EINVAL
 * (not paged, user out of range, n beyond max_ctx). */
int kv_engine_prefix_match(struct kv_engine *e, uint32_t user,
			   const uint32_t *tokens, uint64_t n,
			   uint64_t *cached);

/* kv_engine_forward() of n tokens per sequence at pos in chunks that end
 * at block boundaries (of max_chunk tokens at most; without blocks, of
 * max_chunk), with the cache: the logits are those of the last chunk.
 * Returns as kv_engine_forward(). */
int kv_engine_prefill(struct kv_engine *e, const uint32_t *tokens,
		      uint64_t n, uint64_t pos, float *logits);

/* The pool's counters and block states (all zero when not paged). */
struct kv_paged_stats;
void kv_engine_paged_stats(const struct kv_engine *e,
			   struct kv_paged_stats *s);
/* Bytes of one block of the paged cache (B positions of every layer's K
 * and V), 0 when not paged. */
uint64_t kv_engine_block_bytes(const struct kv_engine *e);

/* --- the paging of texts of given lengths (kvdecode --lengths) --- */

struct kv_lengths_report {
	uint32_t block_size;      /* used: o's, or the longest text where
				     o's is longer and block_fixed is false */
	uint64_t max_len;         /* what each text could reach */
	uint32_t layers;          /* of the effective model */
	struct kv_paged_usage u;  /* paged against reserved, by arithmetic */
	uint64_t blocks_held;     /* the pool's own count for the texts */
	uint64_t pool_blocks;     /* the pool's size */
	uint64_t placed;          /* texts the pool took (all unless full) */
};

/* n texts of lens[i] positions on model m under o (its cache f32, one
 * position a step, each sequence able to reach max_len; 0: the longest
 * text), in a pool of pool_blocks blocks (0: enough for all at the
 * longest): the bytes paged and reserved, and what the pool itself holds
 * after placing each text. Returns 0, KV_ENOMEM (the pool full: r->placed says where), or
 * KV_E* with err filled. */
int kv_engine_lengths(const struct kv_model *m, struct kv_engine_opts o,
		      const uint64_t *lens, uint64_t n, uint64_t max_len,
		      bool block_fixed, uint64_t pool_blocks,
		      struct kv_lengths_report *r, char *err);

/* --- helpers of a decode loop --- */

/* A token drawn from the seeded generator, uniform below vocab: the i-th
 * prompt token of sequence `user`. */
uint32_t kv_rand_token(uint64_t seed, uint64_t user, uint64_t i,
		       uint64_t vocab);

/*
 * Chooses the next token from logits (vocab values): the largest (lowest
 * index on ties) when temperature is 0; else a draw from softmax(logits /
 * temperature) over the top_k largest (all when top_k is 0), using the
 * generator's value for (seed, user, step), so two runs with nearly equal
 * logits draw alike. work holds vocab floats.
 */
uint32_t kv_sample(const float *logits, uint64_t vocab, double temperature,
		   uint64_t top_k, uint64_t seed, uint64_t user, uint64_t step,
		   float *work);

/* Largest |a[i] - b[i]| over n values (infinity when either is NaN). */
double kv_max_abs_diff(const float *a, const float *b, uint64_t n);

/* Whether a run of m under o fits: `need` bytes (the engine's and the
 * caller's), `mine` of them the caller's own, against kv_run_memory's
 * figures. Returns 0 when it fits (or usable is 0), else KV_EINVAL (a run
 * too large for the machine is bad input; nothing was allocated) with
 * err saying what it needs, what is available and what would fit:
 * --layers N, else --vocab N, else both, else fewer users or positions. */
int kv_run_fits(const struct kv_model *m, const struct kv_engine_opts *o,
		uint64_t need, uint64_t mine, uint64_t avail, uint64_t usable,
		char *err);

#endif
