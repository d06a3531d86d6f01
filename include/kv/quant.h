/*
 * quant.h - weights as a quantized checkpoint stores them: the bytes of one
 * linear layer's matrix under the checkpoint's quantization_config (or
 * MLX's quantization, or ModelOpt's hf_quant_config.json), its scales,
 * zero points and indices counted to the byte, as the serving engines'
 * loaders create them (vLLM's create_weights of each method; mlx's
 * QuantizedLinear; see kvfit(1), WEIGHTS). Pure arithmetic; model_quant.c
 * reads the config into struct kv_quant, params.c walks the matrices.
 */
#ifndef KV_QUANT_H
#define KV_QUANT_H

#include <stdbool.h>
#include <stdint.h>

#include "dtype.h"

/* How the quantized matrices are stored. */
enum kv_quant_fmt {
	KV_QUANT_NONE,    /* no quantization_config: the checkpoint's dtype */
	KV_QUANT_FP8,     /* fp8 e4m3, float32 scales per tensor or block */
	KV_QUANT_MXFP4,   /* 4-bit e2m1, an e8m0 scale per 32 (gpt-oss) */
	KV_QUANT_NVFP4,   /* 4-bit e2m1, an fp8 scale per 16, one fp32 */
	KV_QUANT_AWQ,     /* ints packed in int32 along N, fp16 scales and
			   * packed zeros per group */
	KV_QUANT_GPTQ,    /* ints packed in int32 along K, fp16 scales,
			   * packed zeros per group, an int32 g_idx */
	KV_QUANT_CT_INT,  /* compressed-tensors pack-quantized ints */
	KV_QUANT_CT_FP8,  /* compressed-tensors float-quantized fp8 */
	KV_QUANT_BNB4,    /* bitsandbytes nf4/fp4: two per byte, absmax
			   * per 64 */
	KV_QUANT_BNB8,    /* bitsandbytes int8: a float32 scale per row */
	KV_QUANT_MLX,     /* mlx-lm: every Linear and Embedding, ints or
			   * floats packed in uint32 words, a scale (and
			   * an affine bias) per group */
	KV_QUANT_UNKNOWN, /* a quant_method not modelled: counted as the
			   * checkpoint's dtype, and said */
};

/* One module MLX stores its own way: an entry of config.json's
 * "quantization" keyed by the module's path ("lm_head": false, or
 * "model.layers.0.mlp.gate": {"group_size": 64, "bits": 8}). */
struct kv_quant_rule {
	char *name;           /* the module as params.c names it (Transformers'
			       * path; see kv_quant_rule_add); owned */
	bool off;             /* left in the dtype */
	uint32_t bits;        /* bits per value */
	uint64_t group;       /* values of a row per scale */
	uint32_t scale_bytes; /* bytes of a scale; 0: the dtype's */
	bool bias;            /* a bias per group beside the scale (affine) */
};

struct kv_quant {
	enum kv_quant_fmt fmt;
	char method[32];      /* quant_method as the config names it ("mlx"
			       * for MLX's quantization) */
	const char *from;     /* where it was read, the weights_source word:
			       * "quantization_config", "quantization" (MLX),
			       * "hf_quant_config"; NULL: not read */
	uint32_t bits;        /* bits per value (4, 8) */
	uint64_t group;       /* values of a row per scale; 0: one per row
			       * (channel); UINT64_MAX: one per tensor */
	uint32_t block_n, block_k; /* fp8 block scales; 0: none */
	uint32_t scale_bytes; /* bytes of a scale (MLX: 0, the dtype's) */
	bool zeros;           /* zero points stored (asymmetric; MLX: the
			       * affine mode's bias per group) */
	bool g_idx;           /* a K-long int32 permutation stored */
	bool input_scale;     /* a float32 activation scale per matrix */
	bool double_quant;    /* bitsandbytes' absmax quantized again */
	bool experts_only;    /* only routed experts are quantized (mxfp4) */
	bool packed;          /* ints packed in int32 words (compressed-
			       * tensors' pack-quantized) */
	bool kv_fp8;          /* the checkpoint declares an fp8 (e4m3) KV
			       * cache (ModelOpt's kv_cache_quant_algo or
			       * kv_cache_scheme): what auto keeps */
	uint32_t n_ignore;
	char **ignore;        /* modules left unquantized, as the config
			       * lists them; owned by the model */
	void *re;             /* each "re:" entry compiled once (regex_t
			       * per entry; kv_quant_ignore_add) */
	bool tables;          /* the embeddings, output head and routers are
			       * matrices it quantizes too (MLX), not kept
			       * in the dtype */
	uint32_t n_rules;
	struct kv_quant_rule *rules; /* MLX's modules of their own format;
				      * owned by the model */
};

/* Bytes of one matrix of k inputs and n outputs stored under q (which is
 * not NONE or UNKNOWN), or in `dtype` when q says to leave the module
 * `name` ("model.layers.3.mlp.experts.down_proj") as it is. `expert`: a
 * routed expert's matrix. MLX: the module's rule where it has one, else
 * q's format where q's group divides k, else the dtype (mlx-lm leaves
 * such a matrix as it is). Returns 0 or KV_ERANGE. */
int kv_quant_matrix_bytes(const struct kv_quant *q, const char *name,
			  bool expert, uint64_t k, uint64_t n,
			  enum kv_dtype dtype, uint64_t *out);

/* Whether q leaves the module `name` unquantized: an entry of its list
 * that is a substring of the name, a glob with '*' matching a prefix of
 * it, or "re:REGEX" found in it (as Transformers' and compressed-tensors'
 * ignore lists match). */
bool kv_quant_ignores(const struct kv_quant *q, const char *name);

/* Adds `entry` to q's list of modules left unquantized, compiling a
 * "re:REGEX" entry once. Returns 0, KV_ENOMEM, or KV_EINVAL for a regular
 * expression that does not compile. */
int kv_quant_ignore_add(struct kv_quant *q, const char *entry);

/* Adds a copy of r to q's rules for the module mlx-lm calls `key`, named
 * as params.c names it (r->name is not read): a wrapper's prefix dropped
 * ("language_model.model.layers.3..." is "model.layers.3..."), mlx-lm's
 * own module names put back as Transformers' (switch_mlp: experts,
 * block_sparse_moe: mlp, shared_expert: shared_experts, router: gate),
 * "model.embed_tokens" and "lm_head" as they are; a path into another
 * tower (vision_tower...) is kept as given and names no module counted.
 * Returns 0 or KV_ENOMEM. */
int kv_quant_rule_add(struct kv_quant *q, const char *key,
		      const struct kv_quant_rule *r);

/* Frees q's lists (q itself is the caller's). */
void kv_quant_free(struct kv_quant *q);

/* A format typed for the weights (kvfit --weights-dtype): "mxfp4" and
 * "nvfp4" on every linear layer, "int4-g128" (or int8, int2, any group
 * size) as symmetric ints packed in int32 words with a 16-bit scale per
 * group. Returns 0 or KV_EINVAL. */
int kv_quant_parse(const char *s, struct kv_quant *q);

/* "fp8", "mxfp4", ... for a weights_source column: the method's name. */
const char *kv_quant_fmt_name(enum kv_quant_fmt f);

#endif
