/*
 * engine_int.h - what the engine's files share and nothing else sees: the
 * seeded generator every weight, prompt and draw comes from, the thread
 * pool, and the attention kernel.
 */
#ifndef KV_ENGINE_INT_H
#define KV_ENGINE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "kv/dtype.h"

/* splitmix64's constants: the golden-ratio increment and its finaliser. */
#define KV_GOLDEN 0x9E3779B97F4A7C15ULL

static inline uint64_t kv_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* The key of stream t under seed: what element j of stream t mixes. */
static inline uint64_t kv_rand_key(uint64_t seed, uint64_t t)
{
	return kv_mix64(seed + KV_GOLDEN * (t + 1));
}

/* Element j of the stream with key k, as 64 random bits. */
static inline uint64_t kv_rand_bits(uint64_t key, uint64_t j)
{
	return kv_mix64(key + KV_GOLDEN * (j + 1));
}

/* The same, as a float uniform on [-1, 1), a multiple of 2^-23. */
static inline float kv_rand_sym(uint64_t key, uint64_t j)
{
	return (float)(kv_rand_bits(key, j) >> 40) * 0x1p-23f - 1.0f;
}

/* Streams beyond the weights' tensor ids (which stay below 2^32). */
#define KV_STREAM_PROMPT (1ULL << 40) /* + user */
#define KV_STREAM_SAMPLE (2ULL << 40) /* + user */
#define KV_STREAM_CACHE (3ULL << 40)

/* --- thread pool: n threads, the caller being thread 0 --- */

struct kv_pool;
typedef void kv_pool_fn(void *arg, unsigned tid, unsigned nth);

/* Starts n - 1 worker threads. Returns 0 or KV_ENOMEM. */
int kv_pool_new(unsigned n, struct kv_pool **out);
void kv_pool_free(struct kv_pool *p);
/* Runs fn(arg, tid, n) on every thread, tid 0 on the caller, and returns
 * when all have returned. */
void kv_pool_run(struct kv_pool *p, kv_pool_fn *fn, void *arg);
unsigned kv_pool_size(const struct kv_pool *p);

/* Memory for a large buffer that is streamed (the cache, the weights,
 * the bandwidth probe's): aligned to 64 bytes, and from 2 MiB on to
 * 2 MiB with the kernel asked for huge pages, so a pass over it walks
 * one page table entry per 2 MiB instead of per 4 KiB. NULL if out of
 * memory; freed by free(). */
void *kv_alloc_big(uint64_t bytes);

/* --- attention --- */

/*
 * g query rows of one KV head against its positions [0, n): s = q k^T x
 * scale, m = max of each row of s, s = exp(s - m), l = row sums of s,
 * o = s v, not divided by l (so parts over ranges of positions can be
 * merged). The rows are tokens of `per` rows each (the query heads that
 * share the KV head); the last token sees all n positions, each earlier
 * one a position fewer (causal), so several tokens of a chunk read K and V
 * once. per == g: one token. q (g, hd); k, v (n, hd) rows of hd; s scratch
 * (g, n); o (g, hd); m, l (g). simd: the vectorised kernel when the CPU
 * has one.
 */
void kv_attn_part(const float *q, uint32_t g, uint32_t per, const float *k,
		  const float *v, uint64_t n, uint32_t hd, float scale,
		  float *s, float *o, float *m, float *l, bool simd);

/* Merges a part over other positions (po, pm, pl of g rows, as
 * kv_attn_part() leaves them) into the running o, m, l of those rows: the
 * larger maximum, both sums rescaled to it. A part that saw nothing
 * (pl 0) leaves a row as it is. */
void kv_attn_merge(float *o, float *m, float *l, const float *po,
		   const float *pm, const float *pl, uint32_t g, uint32_t hd);

/* The softmax step of kv_attn_part() alone, for kernels that compute the
 * scores s (g, n) themselves: each row's max over the positions it sees
 * into m, exp(s - max) in place (masked positions 0), the sums into l. */
void kv_attn_softmax(float *s, uint32_t g, uint32_t per, uint64_t n,
		     float *m, float *l, bool simd);

/* GPT-2's GELU (tanh form) of n values in place; h *= silu(g). */
void kv_gelu(float *x, uint64_t n, bool simd);
void kv_silu_mul(float *h, const float *g, uint64_t n, bool simd);
/* x[i] = exp(x[i] - m) for n values in place; returns their sum. */
float kv_exp_shift(float *x, uint64_t n, float m, bool simd);


/* Whether a vectorised kernel runs on this CPU for head size hd. */
bool kv_attn_has_simd(uint32_t hd);

/* The attention kernels by name, so tests can run each: portable C, AVX2
 * with FMA (hd a multiple of 8), AVX-512 (hd a multiple of 16, at most
 * 256). kv_attn_part() with simd takes AVX-512 for groups of at least
 * KV_ATTN_WIDE_G rows, AVX2 otherwise: with one row (no grouping) AVX2's
 * dot products waste no lanes and win from cache, while from two rows
 * AVX-512 is as fast from cache and faster from DRAM (one pass). */
enum kv_isa { KV_ISA_C, KV_ISA_AVX2, KV_ISA_AVX512 };
#define KV_ATTN_WIDE_G 2
/* Whether the kernel runs on this CPU for head size hd. */
bool kv_attn_has_isa(enum kv_isa isa, uint32_t hd);
/* kv_attn_part() through the named kernel, or the portable one where
 * that one does not run. s is not used by AVX-512. */
void kv_attn_part_isa(const float *q, uint32_t g, uint32_t per,
		      const float *k, const float *v, uint64_t n, uint32_t hd,
		      float scale, float *s, float *o, float *m, float *l,
		      enum kv_isa isa);

/* y[r][c] = beta y[r][c] + sum over i of x[r][i] w[c][i] for rows r < m
 * and columns c0 <= c < c1; x (m, k), w (n, k) as the engine keeps its
 * weights ([out][in]) in type wt (f32, bf16 or f16, read as stored and
 * widened to float, products summed in float), y (m, n): a few rows by a
 * weight matrix, streaming it once without packing. beta 0 never reads
 * y. simd: the vectorised kernel when the CPU has one; _isa: through the
 * named one (the portable one where that does not run), for tests. xp
 * (xp_n floats, or NULL): scratch where bf16 weights against one or two
 * rows take x's rows rearranged, the faster kernel on AVX-512. */
void kv_gemm_small(const float *x, uint64_t m, uint64_t k, const void *w,
		   enum kv_dtype wt, uint64_t n, uint64_t c0, uint64_t c1,
		   float beta, float *y, bool simd, float *xp, uint64_t xp_n);
void kv_gemm_small_isa(const float *x, uint64_t m, uint64_t k,
		       const void *w, enum kv_dtype wt, uint64_t n,
		       uint64_t c0, uint64_t c1, float beta, float *y,
		       enum kv_isa isa, float *xp, uint64_t xp_n);
/* n weights of type wt as floats into out. */
void kv_weights_to_f32(const void *w, enum kv_dtype wt, uint64_t n,
		       float *out);
/* Rows up to which kv_gemm_small() runs instead of sgemm: a decode step
 * of up to 64 users. On the README's two-core machine it beat OpenBLAS's
 * sgemm at every count tried from 9 to 256 rows (1.2-3x in f32, 2-4x with
 * 16-bit weights, which sgemm needs widened first), but it holds x's rows
 * in cache only so far; prefill's longer runs stay with sgemm. */
#define KV_SMALL_ROWS 64

/* --- the products every block runs (ops.c) --- */

enum kv_act { KV_ACT_NONE, KV_ACT_GELU, KV_ACT_SWIGLU };

struct kv_pool;

/* What a product runs on: the engine's threads, its kernels' switch and
 * the gate's scratch; filled by the engine, read by its blocks and MLA's. */
struct kv_ops {
	struct kv_pool *pool;
	uint32_t threads;
	bool simd;
	float *g; /* SWIGLU's gate product, (rows, n) */
	enum kv_dtype wt; /* the weights' type: f32, bf16 or f16 */
	float *conv;      /* 16-bit weights through sgemm: each thread's
			   * KV_CONV_ROWS x conv_k floats, the rows it
			   * widens at a time */
	uint64_t conv_k;
};

/* Weight rows a thread widens to float at a time for sgemm. */
#define KV_CONV_ROWS 64

/* y (m, n) = x (m, k) w + beta y + b, w of n outputs stored [out][in]
 * and b (n, or NULL) in the ops' weight type, then the activation; with
 * SWIGLU, y = silu(x w2 + b2) * (x w + b). The outputs are handed to the
 * pool's threads in runs. */
void kv_linear(const struct kv_ops *o, const float *x, uint64_t m,
	       uint64_t k, const void *w, const void *b, float *y,
	       uint64_t n, float beta, enum kv_act act, const void *w2,
	       const void *b2);

/* A part of a split step that saw no position: its g maxima -inf and
 * its g sums 0, so that kv_attn_merge_parts counts it for nothing. */
void kv_attn_part_empty(float *pm, float *pl, uint32_t g);

/* Merges `parts` results of a step split over positions, each g rows of
 * hd weighted sums, then g maxima, then g sums (g (hd + 2) floats apart),
 * into out (g rows of hd), normalised. A part that saw nothing (sum 0)
 * counts for nothing. */
void kv_attn_merge_parts(float *out, const float *part, uint32_t parts,
			 uint32_t g, uint32_t hd);

#endif
