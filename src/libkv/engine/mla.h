/*
 * mla.h - multi-head latent attention (DeepSeek V2/V3) inside the decode
 * engine: the shape it is checked and built from, its tensors, its
 * scratch, and the attention of one layer. Shared by engine.c and mla.c
 * only.
 *
 * Per token and layer the cache keeps one row of rank + rope floats: the
 * RMS-normed latent c (kv_lora_rank) and the rotated key k_rope
 * (qk_rope_head_dim), shared by every head. Head h's key is
 * [c W_UK_h, k_rope] and its value c W_UV_h, W_UK_h and W_UV_h being that
 * head's columns of kv_b_proj. The cached path never forms them: it folds
 * W_UK_h into the query and W_UV_h into the output (the absorbed form) and
 * reads the latent rows once for all heads. The uncached path up-projects
 * K and V for every position (the plain form), so the two check each
 * other.
 */
#ifndef KV_MLA_H
#define KV_MLA_H

#include <stdbool.h>
#include <stdint.h>

#include "engine_int.h"
#include "kv/engine.h"

/* The shape of the block, everything derived once. */
struct kv_mla_dims {
	uint64_t dim;       /* residual width */
	uint32_t layers;
	uint32_t heads;     /* query heads */
	uint32_t rank;      /* kv_lora_rank: latent values per token */
	uint32_t rope;      /* qk_rope_head_dim: the shared rotary key */
	uint32_t nope;      /* qk_nope_head_dim: key values from the latent */
	uint32_t vdim;      /* v_head_dim */
	uint32_t qrank;     /* q_lora_rank; 0: q straight from the residual */
	uint64_t users, ctx, chunk; /* chunk: most tokens per sequence */
	uint32_t threads;
	uint32_t nsplit;    /* most parts of a decode step over positions */
	float eps;          /* of the latent's (and q's) RMSNorm */
};

/* One layer's tensors, stored [out][in] as the engine's others and, as
 * they, in the weights' type (f32 so far: kv_engine_model() refuses 16-bit
 * weights with latent attention, for kv_b_proj is read as floats); the
 * gains are read through kv_wval(). */
struct kv_mla_w {
	float *w_q;   /* (dim, heads (nope + rope)), when qrank == 0 */
	float *w_qa;  /* (dim, qrank) q_a_proj */
	float *qa_g;  /* (qrank) q_a_layernorm's gain */
	float *w_qb;  /* (qrank, heads (nope + rope)) q_b_proj */
	float *w_kva; /* (dim, rank + rope) kv_a_proj_with_mqa: c, k_rope */
	float *kva_g; /* (rank) kv_a_layernorm's gain */
	float *w_kvb; /* (rank, heads (nope + vdim)) kv_b_proj: per head
		       * the nope columns of W_UK, then the vdim of W_UV */
};

/* A tensor of one layer for the engine to place and draw: a matrix of
 * rows inputs by cols outputs, or a norm gain. Its id is
 * KV_MLA_ID(layer, slot). A linear one is read only through
 * kv_linear() and is stored as the engine stores its own
 * projections; the others (kv_b_proj, the gains) as written here, for
 * mla.c reads them itself. */
struct kv_mla_tensor {
	uint32_t slot;
	bool gain;
	bool linear;
	uint64_t rows, cols;
	float **dst;
};
#define KV_MLA_TENSORS 6
/* Ids of MLA tensors: above every plain one, below 2^32. */
#define KV_MLA_ID(layer, slot) ((1ULL << 31) + 8 * ((uint64_t)(layer) + 1) + \
				(slot))

/*
 * Checks an MLA run of model m under o and writes the MLA fields of the
 * effective model c (a copy of m, its layers allocated, every layer's
 * other fields set): the rank, rope, nope and value sizes, one latent
 * "KV head" of rank + rope per layer. An MLA config gives its own sizes
 * (o->mla_rank and o->mla_rope override them); a plain one takes
 * o->mla_rank with a rotary key of o->mla_rope (default: half the head
 * size, made even) and keys and values of the head size. Returns 0, or
 * KV_EINVAL / KV_EUNSUP with err filled.
 */
int kv_mla_model(const struct kv_model *m, const struct kv_engine_opts *o,
		 struct kv_model *c, char *err);

/* Whether the engine runs model m with MLA under o. */
bool kv_mla_wanted(const struct kv_model *m, const struct kv_engine_opts *o);

/* The dims of an effective MLA model for a run. */
void kv_mla_dims_of(const struct kv_model *eff, uint64_t users, uint64_t ctx,
		    uint64_t chunk, uint32_t threads, uint32_t nsplit,
		    struct kv_mla_dims *d);

/* The tensors of one layer in order, dst into w (w NULL: sizes only).
 * Returns how many, at most KV_MLA_TENSORS. */
size_t kv_mla_tensors(const struct kv_mla_dims *d, struct kv_mla_w *w,
		      struct kv_mla_tensor *t);
/* Floats of one layer's MLA tensors (unpadded). */
uint64_t kv_mla_layer_floats(const struct kv_mla_dims *d);
/* Floats of the block's scratch, in one piece. 0 or KV_ERANGE. */
int kv_mla_scratch_floats(const struct kv_mla_dims *d, uint64_t *out);

/* Multiply-adds per token row of the block's projections (q, kv_a, kv_b;
 * not o_proj, which the engine counts as its own). */
double kv_mla_row_macs(const struct kv_mla_dims *d);
/* Multiply-adds per head and attended position: absorbed, a score over
 * rank + rope and a weighted sum of the rank latent values; plain, a
 * score over nope + rope and a sum of vdim values. */
double kv_mla_pos_macs(const struct kv_mla_dims *d, bool absorbed);

/* The block's state: shape, scratch (carved by kv_mla_init()), the rope
 * table and the cache it reads, all owned by the engine. */
struct kv_mla {
	struct kv_mla_dims d;
	const struct kv_ops *ops; /* the engine's products, its threads'
				     pool and its kernels' switch */
	const float *rope; /* (ctx, rope / 2, 2) cos, sin */
	float *cache;      /* (layer, user, ctx, rank + rope), or NULL */
	float *qa;    /* (rows, qrank) q after q_a_proj */
	float *ckv;   /* (rows, rank + rope) the chunk's latent rows */
	float *lat;   /* (rows, rank) the same latents, contiguous */
	float *kvb;   /* (rows, heads (nope + vdim)) plain form's K and V */
	float *qc;    /* (rows, heads, rank + rope) absorbed queries */
	float *olat;  /* (rows, heads, rank) weighted sums of latents */
	float *part;  /* (users, nsplit, heads, rank + 2) split decode */
	float *work;  /* (threads, max(KV_MLA_QROWS chunk, heads
		       * (KV_MLA_BLOCK + 1)) + 2 heads) scores, m, l */
};

/* Positions the latent kernel takes per block. */
#define KV_MLA_BLOCK 16
/* Queries per block of the plain form (its scores: rows x positions). */
#define KV_MLA_QROWS 64

/* Carves scratch (kv_mla_scratch_floats() floats, 64-byte aligned) into
 * m's buffers and records the rest. Allocates nothing. */
void kv_mla_init(struct kv_mla *m, const struct kv_mla_dims *d,
		 float *scratch, const struct kv_ops *ops, const float *rope,
		 float *cache);

/*
 * The attention of one MLA layer for a chunk of n tokens per sequence at
 * positions pos .. pos + n - 1: xn (users n, dim) the normed residual, q
 * (users n, heads (nope + rope)) scratch for the queries, att (users n,
 * heads vdim) the heads' outputs, to go through o_proj. With cache, the
 * chunk's latent rows are written into the cache and the absorbed form
 * reads every row up to pos + n - 1; without, pos is 0 and the plain form
 * runs over the chunk.
 */
void kv_mla_attention(struct kv_mla *m, const struct kv_mla_w *w,
		      uint32_t layer, const float *xn, float *q, float *att,
		      uint64_t n, uint64_t pos, bool cache);

/* The latent kernel alone over the cache, one token per sequence at pos
 * on every layer, with the absorbed queries left in the scratch (for
 * benchmarks of the cache read). */
void kv_mla_attend(struct kv_mla *m, uint64_t pos);

/* Latent rows (positions, rank + rope) of sequence u on layer l: in the
 * cache, or the chunk's own (n rows) without it. */
float *kv_mla_rows(const struct kv_mla *m, uint32_t l, uint64_t u,
		   uint64_t n, bool cache);

/*
 * The latent kernel: h absorbed queries q (h, rank + rope, scale folded
 * in) against n latent rows c (n, rank + rope): s = q c^T, m = row max,
 * s = exp(s - m), l = row sums, o (h, rank) = s c[:, :rank], not divided
 * by l, so parts over ranges of positions merge exactly. Reads each row
 * once for all heads, KV_MLA_BLOCK rows at a time. s scratch (h,
 * KV_MLA_BLOCK + 1). simd: AVX-512 when the CPU has it and rank and rope
 * are multiples of 16, else AVX2/FMA when they are multiples of 8.
 */
void kv_mla_attn_part(const float *q, uint32_t h, const float *c,
		      uint64_t n, uint32_t rank, uint32_t rope, float *s,
		      float *o, float *m, float *l, bool simd);
/* Whether kv_mla_attn_part() has a vectorised kernel for these sizes. */
bool kv_mla_has_simd(uint32_t rank, uint32_t rope);
/* The kernel by name (the portable one where the named one does not run
 * on this CPU for these sizes), so tests can run each; and whether it
 * runs. */
void kv_mla_attn_part_isa(const float *q, uint32_t h, const float *c,
			  uint64_t n, uint32_t rank, uint32_t rope, float *s,
			  float *o, float *m, float *l, enum kv_isa isa);
bool kv_mla_has_isa(enum kv_isa isa, uint32_t rank, uint32_t rope);

#endif
