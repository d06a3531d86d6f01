/*
 * layout.h - the KV geometry of each layer and the bytes it keeps: per
 * token, per context, per user, per GPU under tensor parallelism, rounded to
 * pages. Pure arithmetic on value structs; nothing here allocates, so the
 * decode engine can allocate exactly what these functions return.
 */
#ifndef KV_LAYOUT_H
#define KV_LAYOUT_H

#include "model.h"

/* How a recurrent layer's state is kept: as the reference code keeps it
 * (Transformers': the convolution's whole window), as the serving
 * engines do (the convolution's last d_conv - 1 inputs, the model's dtype:
 * vLLM's MambaStateShapeCalculator), so and all in float32 (llama.cpp's
 * llama_memory_recurrent, whatever the model's dtype), or so with the SSM
 * state alone in float32 (SGLang's mamba_ssm_dtype). */
enum kv_state { KV_STATE_REF, KV_STATE_TAIL, KV_STATE_F32,
		KV_STATE_SSM_F32 };

/* What is being sized, beyond the model. */
struct kv_opts {
	enum kv_dtype k_dtype; /* storage of K */
	enum kv_dtype v_dtype; /* storage of V */
	bool mha;              /* every query head keeps its own K and V */
	uint32_t tp;           /* tensor-parallel ranks, >= 1 */
	uint64_t block;        /* tokens per page; 0 or 1: no rounding */
	enum kv_state state;   /* how a recurrent layer's state is kept */
};

/* Options for a model: its own dtype for K and V (fp8 where its checkpoint
 * declares an fp8 cache), no MHA, tp 1, no pages. */
struct kv_opts kv_opts_default(const struct kv_model *m);

/* One layer as one rank stores it. */
struct kv_geom {
	enum kv_attn attn;
	uint32_t heads;  /* K/V heads this rank keeps per token */
	uint32_t dim_k;  /* values per K head */
	uint32_t dim_v;  /* values per V head (0: MLA latent serves both) */
	uint64_t window; /* most tokens kept, 0 = all */
	bool replicated; /* heads copied on every rank (tp > heads, MLA) */
	uint32_t index_bytes; /* indexer key per token, fp8 and its scales */
};

/* Geometry of layer i under opts. Returns 0 or KV_EINVAL with err filled
 * (tp that splits no head evenly). */
int kv_layer_geom(const struct kv_model *m, uint32_t i,
		  const struct kv_opts *o, struct kv_geom *g, char *err);

/* Bytes one token adds to a layer of geometry g: heads x (row of dim_k in
 * k_dtype + row of dim_v in v_dtype), scales included, plus the sparse
 * attention indexer's key (whatever the formats). Returns 0, KV_EINVAL
 * with err filled when a block format cannot tile a head, or KV_ERANGE. */
int kv_geom_token_bytes(const struct kv_geom *g, const struct kv_opts *o,
			uint64_t *out, char *err);

/* Tokens a layer keeps for a sequence of ctx tokens: min(ctx, window),
 * rounded up to whole pages of `block` tokens (UINT64_MAX if that
 * overflows). */
uint64_t kv_geom_tokens(const struct kv_geom *g, uint64_t ctx, uint64_t block);

/* Bytes per token of the whole model (what one more token adds while no
 * window is full), on one rank. Returns 0, KV_EINVAL or KV_ERANGE. */
int kv_model_token_bytes(const struct kv_model *m, const struct kv_opts *o,
			 uint64_t *out, char *err);

/* The tokens a layer of geometry g keeps of ctx (in pages of block) and
 * their bytes for users sequences, b bytes a token. Returns 0, or
 * KV_ERANGE with err ("NAME: CTX tokens x USERS users overflows 64 bits
 * of bytes"). */
int kv_geom_ctx_bytes(const struct kv_model *m, const struct kv_geom *g,
		      uint64_t b, uint64_t ctx, uint64_t users, uint64_t block,
		      uint64_t *tokens, uint64_t *bytes, char *err);

/* Exact KV bytes on one rank for `users` sequences of ctx tokens each.
 * Returns 0, KV_EINVAL, or KV_ERANGE (err says the total overflows). */
int kv_model_bytes(const struct kv_model *m, const struct kv_opts *o,
		   uint64_t ctx, uint64_t users, uint64_t *out, char *err);

/* Fixed state of the Mamba layers (conv channels x d_conv, the channels
 * d_inner, and Mamba-2's 2 x groups x d_state more; SSM d_inner x d_state
 * values per layer, in the model's dtype), for `users` sequences, on one
 * rank (channels split across tp). */
int kv_model_state_bytes(const struct kv_model *m, const struct kv_opts *o,
			 uint64_t users, uint64_t *out);

/* What a row of kvsize says about the layers that keep KV. */
struct kv_summary {
	uint32_t layers;             /* layers that keep KV */
	uint32_t heads_min, heads_max; /* K/V heads per rank */
	uint32_t dim_k_min, dim_k_max;
	uint32_t dim_v_min, dim_v_max;
};

int kv_model_summary(const struct kv_model *m, const struct kv_opts *o,
		     struct kv_summary *s, char *err);

#endif
