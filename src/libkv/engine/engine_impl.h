/*
 * engine_impl.h - the engine's own structures, shared by engine_plan.c
 * (its shape, what it allocates and whether a model runs: arithmetic
 * only, nothing allocated) and engine.c (drawing the weights and the
 * forward pass). Nothing outside those two files includes it.
 */
#ifndef KV_ENGINE_IMPL_H
#define KV_ENGINE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine_int.h"
#include "kv/engine.h"
#include "kv/layout.h"
#include "kv/paged.h"
#include "kvquant.h"
#include "mla.h"

enum slot {
	S_LN1_G, S_LN1_B, S_QKV_W, S_QKV_B, S_O_W, S_O_B, S_LN2_G, S_LN2_B,
	S_UP_W, S_UP_B, S_GATE_W, S_GATE_B, S_DOWN_W, S_DOWN_B, S_Q_NORM,
	S_K_NORM, S_COUNT /* at most 16: a layer's ids are 16 (l + 1) + slot */
};
enum { T_WTE, T_WPE, T_LNF_G, T_LNF_B, T_HEAD };
enum kind { K_MAT, K_BIAS, K_GAIN };

#define W_SCALE 0.034641016f /* 0.02 sqrt(3) */
#define B_SCALE 0.02f
#define G_SCALE 0.1f

/* Positions per attention tile with blocks: enough rows per kernel call
 * that the call's overhead and the merge stay small. */
#define ATTN_TILE 256

/* Floats per aligned piece: every tensor starts on 64 bytes. */
#define ALIGN_F 16

/* Every pointer holds s->wt values, matrices and vectors (norm gains,
 * biases) alike: floats, or 16-bit words, as a checkpoint and serving
 * engines keep them. The ops read a matrix by type, the rest read a
 * vector's values through kv_wval(). */
struct layer_w {
	float *ln1_g, *ln1_b; /* (dim) */
	float *w_qkv;  /* (dim, (heads + 2 kv_heads) head_dim) */
	float *b_qkv;  /* ((heads + 2 kv_heads) head_dim) or NULL */
	float *q_norm, *k_norm; /* (head_dim): every head's gain, Qwen3's
				 * per-head RMSNorm; NULL without */
	float *w_o;    /* (heads head_dim, dim) */
	float *b_o;    /* (dim) or NULL */
	float *ln2_g, *ln2_b; /* (dim) */
	float *w_up;   /* (dim, ffn): GPT-2's c_fc, Llama's up */
	float *b_up;   /* (ffn) or NULL */
	float *w_gate; /* (dim, ffn), Llama only */
	float *b_gate; /* (ffn) or NULL */
	float *w_down; /* (ffn, dim): GPT-2's c_proj, Llama's down */
	float *b_down; /* (dim) or NULL */
	struct kv_mla_w mla; /* an MLA layer's attention tensors */
};

/* The shape of a run, everything derived once. */
struct shape {
	bool gpt2;       /* GPT-2 block, else Llama-style */
	uint64_t dim, ffn, vocab;
	uint32_t layers, heads, kv_heads, hd, group; /* group = heads/kv */
	uint64_t qkv;    /* (heads + 2 kv_heads) hd */
	uint64_t att;    /* heads hd */
	uint64_t users, ctx, chunk, rows; /* rows = users chunk */
	uint64_t pos_rows; /* learned positions kept (GPT-2) */
	bool tied, qkv_bias, o_bias, mlp_bias;
	bool qk_norm;    /* per-head RMSNorm of q and k before rotation */
	uint32_t threads, nsplit; /* nsplit: most parts of a decode */
	uint32_t qblock; /* tokens of a chunk attending together */
	struct kv_rowfmt f; /* K and V formats, bytes per row */
	uint64_t tmprow; /* bytes of a row of kvtmp: the larger of the two */
	bool cache;
	uint32_t bs;     /* positions per cache block, 0: none */
	uint64_t tile;   /* positions per attention tile: whole blocks,
			  * about ATTN_TILE of them; 0 without blocks */
	bool paged;      /* the cache is a pool of blocks */
	bool prefix;     /* full blocks kept for prefix reuse */
	uint64_t pool;   /* blocks of the pool, when paged */
	double eps, theta;
	int rope_kind;   /* 0 plain, 1 linear, 2 llama3: rope_scaling's */
	double rope_factor, rope_low, rope_high;
	uint64_t rope_orig;
	enum kv_dtype wt; /* the weights' type, every tensor's: f32, bf16
			   * or f16 */
	uint64_t conv_k;  /* the widest input of a product: 16-bit weights'
			   * rows widened for sgemm are this long */
	bool mla;        /* multi-head latent attention: hd is its rotary
			  * key's size, qkv the queries, att heads x vdim */
	struct kv_mla_dims md;
	uint64_t mla_floats; /* its scratch */
};

/* One tensor to allocate and draw. */
struct tensor {
	uint64_t id;
	enum kind kind;
	uint64_t rows, cols; /* logical shape */
	bool transpose;      /* stored (cols, rows) */
	float **dst;
};

struct kv_engine {
	struct kv_model *model; /* effective model */
	struct shape s;
	struct kv_pool *pool;
	struct kv_ops ops;   /* the products' threads, the kernels' switch
			      * (ops.simd, every block's) and the gate */
	float logit_scale; /* the head's output times this */

	float *weights;       /* one allocation, every tensor */
	uint64_t weight_bytes;
	float *wte;   /* (vocab, dim) */
	float *wpe;   /* (pos_rows, dim), GPT-2 */
	float *lnf_g, *lnf_b; /* (dim) */
	float *head;  /* stored (vocab, dim): wte itself when tied */
	struct layer_w *lw; /* (layers) */

	uint8_t *cache; /* per layer: K rows, then V rows, krow or vrow bytes
			 * each: (user, kv_head, ctx) rows; paged: (kv_head,
			 * block, bs) rows, so a head's blocks taken in order
			 * are one run, as in the contiguous layout */
	uint64_t cache_bytes; /* what was allocated */
	struct kv_paged *pages; /* the block tables, when paged */
	uint32_t *tokbuf;     /* (users, chunk): a prefill's chunk */

	float *scratch;       /* one allocation, below */
	uint64_t scratch_bytes;
	float *x;     /* (rows, dim) residual stream */
	float *xn;    /* (rows, dim) normed */
	float *qkv;   /* (rows, qkv) */
	float *att;   /* (rows, att) */
	float *h;     /* (rows, ffn) */
	float *g;     /* (rows, ffn) gate, Llama */
	float *kvtmp; /* (2, user, kv_head, chunk, tmprow bytes): K and V of
		       * one layer without the cache, encoded */
	float *scores; /* (threads, qblock group, ctx + 2 + 2 hd [+ hd + 2]):
			* scores, m, l, then the block's queries and
			* outputs [and one attention block's o, m, l] */
	float *part;  /* (user, kv_head, nsplit, group, hd + 2) */
	float *rope;  /* (ctx, hd / 2, 2) cos, sin; Llama and MLA */
	float *tiles; /* (threads, tile_bytes): a tile's K and V rows
		       * gathered from blocks apart; paged, tile > bs */
	float *conv;  /* (threads, KV_CONV_ROWS, conv_k): 16-bit weights
		       * widened for sgemm */
	float *mla_scratch; /* (mla_floats) carved by kv_mla_init() */
	struct kv_mla mla;

	uint64_t passes[2]; /* token passes without, with the cache */
};

/* The scratch pieces in order: rows of each, and where they go. */
struct piece {
	uint64_t a, b;
	float **dst;
};

/* --- engine_plan.c --- */

/* Every tensor of the shape, in order; with e, placed in e's weights and
 * written to t (when not NULL). Returns their count. */
size_t kvp_tensors(const struct shape *s, struct kv_engine *e,
		   struct tensor *t);
/* n floats rounded up to ALIGN_F. Returns 0 or KV_ERANGE. */
int kvp_padded(uint64_t n, uint64_t *out);
/* Floats tensor t takes in the weights' allocation: its s->wt values
 * (two 16-bit ones a float, an odd count rounded up), a matrix's padded
 * to ALIGN_F. Returns 0 or KV_ERANGE. */
int kvp_tensor_floats(const struct shape *s, const struct tensor *t,
		      uint64_t *out);
/* Points the n tensors t into w, the weights' allocation: the matrices
 * first, each on 64 bytes (the kernels stream them), then the vectors
 * (norm gains, biases), read a value at a time, packed without padding,
 * so the allocation is the parameters' bytes whenever each matrix fills
 * whole 64-byte lines. */
void kvp_place(const struct shape *s, const struct tensor *t, size_t n,
	       float *w);
/* Bytes of a thread's gathered tile: its K rows, then its V rows, in
 * whole cache lines. */
uint64_t kvp_tile_bytes(const struct shape *s);
/* Floats per query row of a thread's attention scratch. */
uint64_t kvp_score_width(const struct shape *s);
/* The scratch pieces of the shape into p (16 at most), their
 * destinations in e when not NULL. Returns their count. */
size_t kvp_pieces(const struct shape *s, struct kv_engine *e,
		  struct piece *p);
/* The paged cache's options for the shape. */
struct kv_paged_opts kvp_paged_opts(const struct shape *s);
/* The shape and the bytes of the effective model eff under o. Returns 0
 * or KV_E* with err filled. */
int kvp_estimate(const struct kv_model *eff, const struct kv_engine_opts *o,
		 struct shape *s, struct kv_engine_size *sz, char *err);

/* --- engine_ckpt.c --- */

/* Fills the n tensors t of shape s from checkpoint ck, by the family's
 * names. Returns 0, KV_EINVAL (a tensor missing or of another shape) or
 * KV_EUNSUP (a dtype other than F32, F16, BF16), err naming the file and
 * the tensor. */
int kvp_load(const struct shape *s, const struct tensor *t, size_t n,
	     const struct kv_st *ck, const char *config, char *err);

#endif
