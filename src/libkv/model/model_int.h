/*
 * model_int.h - what the config reader's files share and nothing else
 * sees: the view of a config its fields are read through (struct cfg) and
 * the readers that check them (cfg.c), the model families as data
 * (family.c), and the parts of a model read apart: its Mamba and linear
 * mixers (model_ssm.c), its weights' dtype and quantization
 * (model_quant.c), a GGUF's metadata made a config (gguf_cfg.c).
 */
#ifndef KV_MODEL_INT_H
#define KV_MODEL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kv/model.h"

/* The largest value each field accepts: far above any published model,
 * small enough that no per-token product can overflow 64 bits. */
#define MAX_LAYERS 10000
#define MAX_HIDDEN (1ULL << 20)
#define MAX_HEADS (1ULL << 16)
#define MAX_HEAD_DIM (1ULL << 16)
#define MAX_FFN (1ULL << 24)
#define MAX_VOCAB (1ULL << 26)
#define MAX_POS (1ULL << 40)
#define MAX_EXPERTS (1ULL << 20)

/* Where fields are read: the wrapper's text_config first, then the root. */
struct cfg {
	const cJSON *root;
	const cJSON *text;     /* == root when the config is not a wrapper */
	const char *text_name; /* "text_config", or NULL */
	const char *path;
	char *err;
	const char *prefix;    /* a nested object's name ("attn_config"), or
				* NULL: printed before the fields read */
};

/* cfg.c: every field goes through one of these, which check type, sign,
 * wholeness and range and write the message a person reads when a field
 * is wrong ("path: field: problem, got X"); each returns 0 or KV_EINVAL
 * (KV_ENOMEM where it allocates). */

/* The kinds a field may take, for cfg_kind(). */
enum { K_OBJ = 1, K_LIST = 2, K_STR = 4, K_NUM = 8, K_BOOL = 16 };

int cfg_fail(struct cfg *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const cJSON *cfg_find(const struct cfg *c, const char *field, char *where,
		      size_t n);
void cfg_absent(const struct cfg *c, const char *field, char *where,
		size_t n);
void cfg_show(const cJSON *it, char *buf, size_t n);
/* The JSON object NAME beside a config.json (not another file name, nor
 * standard input) through read(), its messages naming that file: 0 where
 * there is none, else read()'s (a file past max_bytes, not JSON or not an
 * object refused). */
int cfg_read_beside(const char *config_path, const char *name,
		    size_t max_bytes,
		    int (*read)(struct cfg *c, struct kv_model *m),
		    struct kv_model *m, char *err);
int cfg_kind(struct cfg *c, const char *field, unsigned kinds,
	     const cJSON **out);
int cfg_nested(struct cfg *c, const char *name, struct cfg *sub, bool *has);
bool cfg_has(const struct cfg *c, const char *field);
const char *cfg_first(const struct cfg *c, const char *const *names);
int cfg_check_uint(struct cfg *c, const cJSON *it, const char *what,
		   uint64_t lo, uint64_t hi, uint64_t *out);
int cfg_uint(struct cfg *c, const char *field, bool required, uint64_t def,
	     uint64_t lo, uint64_t hi, uint64_t *out);
int cfg_u32(struct cfg *c, const char *field, bool required, uint64_t def,
	    uint64_t lo, uint64_t hi, uint32_t *out);
int cfg_uint_any(struct cfg *c, const char *const *names, bool required,
		 uint64_t def, uint64_t lo, uint64_t hi, uint64_t *out);
int cfg_uint_same(struct cfg *c, const char *field, uint64_t def,
		  uint64_t lo, uint64_t hi, uint64_t *out);
int cfg_bool(struct cfg *c, const char *field, bool def, bool *out);
int cfg_double(struct cfg *c, const char *field, double def, double *out);
int cfg_str(struct cfg *c, const char *field, const char **out);
int cfg_uint_list(struct cfg *c, const char *field, uint32_t n_layers,
		  uint64_t lo, uint64_t hi, uint32_t *vals);
int cfg_layer_list(struct cfg *c, const char *field, uint32_t n,
		   uint32_t base, bool *mark);
bool cfg_one_of(const char *s, const char *const *list);
int cfg_layer_kind(const char *s, enum kv_attn *out);
int cfg_kinds(struct cfg *c, const char *field, uint32_t n,
	      enum kv_attn *kinds);

/* Per-family defaults of Transformers' config classes, for absent fields. */
struct defaults {
	uint64_t vocab;
	uint64_t max_pos;
	uint64_t window;     /* the window when absent (0: none) */
	uint32_t head_dim;   /* 0: hidden / heads */
	bool tie;
	bool swa_flag;       /* windows gated by use_sliding_window (Qwen) */
	uint64_t ffn;        /* intermediate_size when absent (0: 4 x hidden) */
};

/* Layout facts of a family, or'ed into its entry's traits. */
enum {
	T_QKV_BIAS = 1 << 0,  /* q, k and v biased, o not (Qwen2, Qwen) */
	T_QK_NORM = 1 << 1,   /* per-head norms of q and k (Qwen3, Gemma 3) */
	T_ATTN_GATE = 1 << 2, /* attn_output_gate true when absent */
	T_PLAIN_MLP = 1 << 3, /* an MLP of up and down, no gate (GPT-NeoX's
			       * lineage; NemotronH's relu^2) */
	T_MLP_BIAS = 1 << 4,  /* mlp_bias true when absent */
	T_HALF_FFN = 1 << 5,  /* intermediate_size counts gate and up: half */
	T_HEADS_8_4 = 1 << 6, /* heads absent: 8, and 4 KV heads (Gemma 3) */
	T_PAIRS = 1 << 7,     /* num_layers counts pairs of layers, the first
			       * of each with the MoE (LongCat-Flash) */
	T_ZAMBA = 1 << 8,     /* attention over the embedding and the hidden
			       * state (head_dim 2 hidden / heads) in shared
			       * blocks, no MLP of a layer's own */
	T_BESIDE = 1 << 9,    /* a Mamba mixer beside every layer's
			       * attention (Falcon-H1, Zamba) */
	T_MLA = 1 << 10,      /* latent attention unless the config says
			       * not (DeepSeek V2 and after) */
	T_MLA_FULL = 1 << 11, /* the cache keeps each head's K and V made
			       * from the latent (MiniCPM3) */
	T_INDEXER = 1 << 12,  /* a sparse attention's indexer key beside the
			       * latent (DeepSeek V3.2) */
	T_MIXED = 1 << 13,    /* shared experts only with use_mixed_mlp_moe
			       * (Hunyuan) */
	T_MOE_RANGE = 1 << 14, /* MoE layers from moe_layer_start_index to
				* moe_layer_end_index (Ernie 4.5) */
	T_LIGHTNING = 1 << 15, /* linear attention's layers keep a fixed
				* state (MiniMax, Ling) */
	T_RESIDUAL = 1 << 16, /* a dense MLP beside the experts (Arctic) */
	T_NOTED = 1 << 17,    /* its config class's defaults are not here:
			       * read as Llama-style, and said */
};

/* Every n-th layer of one kind, the others of another, n from field
 * (n itself when absent; always n when field is NULL). n 0: no rule. */
struct every {
	const char *field;
	uint32_t n;
};

/* Which layers slide, when the config names a window and no list. */
enum swa_rule {
	SWA_LAYERS,    /* all, from max_window_layers (Mistral, Qwen) */
	SWA_NONE,      /* none (Gemma) */
	SWA_ALTERNATE, /* sliding and full in turn (Gemma 2, gpt-oss) */
};

/* The MoE defaults of a family's config class, for absent fields. */
struct moe_defaults {
	uint32_t experts;     /* routed experts */
	uint32_t active;      /* experts per token (0: 2) */
	uint32_t expert_ffn;  /* moe_intermediate_size, read whenever this
			       * is not 0 */
	uint32_t shared;      /* shared experts, read whenever this is not
			       * 0 */
	uint32_t shared_ffn;  /* shared_expert_intermediate_size, read
			       * whenever this is not 0 (Qwen2-MoE) */
	uint32_t first_dense; /* first_k_dense_replace (DeepSeek V3) */
	bool one_shared;      /* one shared expert as wide as a routed one
			       * (Llama 4) */
};

/*
 * The Mamba mixers' fields, by family: names (NULL: not read) and the
 * defaults of the family's config class. Mamba-1 keeps a state of d_inner
 * x (d_conv + d_state) values; Mamba-2 one of (d_inner + 2 groups d_state)
 * x d_conv + d_inner x d_state.
 */
struct mamba_fields {
	uint32_t version;
	const char *heads, *head_dim, *groups, *state, *conv, *expand;
	const char *inner; /* d_inner given outright */
	uint32_t d_heads, d_head_dim, d_groups, d_state, d_conv;
	bool inner_heads; /* d_inner = heads x head_dim, not expand x hidden */
};

/*
 * The LayerNorm families of GPT-2's and GPT-NeoX's lineage: the biases
 * their config classes fix, or take from a field of their own (attention,
 * MLP; NULL: none), a block of one norm (attention and MLP side by side),
 * learned positions (OPT's two rows past max_position_embeddings), a norm
 * of the embedding, q and k LayerNorms over a head (qk_layernorm). MPT's
 * LayerNorms drop their bias, and it takes no_bias: it is not one of them.
 */
struct ln_family {
	const char *attn, *mlp; /* fields */
	bool o, qkv, mlp_def, head, parallel, embed_norm;
	uint32_t pos;  /* 1: max_pos rows, 3: max_pos + 2 */
	uint32_t qkln; /* qk_layernorm: 0 not read, 1 default false,
			  2 default true */
};

/*
 * The shape of a text model class, for a wrapper's text_config: Transformers
 * saves a nested config as its difference from the class's defaults, so
 * LLaVA 1.5 7B's text_config names no layers, width or heads (LlamaConfig's
 * 32, 4096 and 32 are what its reference builds). Only in a wrapper; at the
 * top level the shape fields are never guessed.
 */
struct class_shape {
	const char *cls;                  /* NULL: none */
	uint32_t layers, heads, kv_heads; /* kv_heads 0: as many as heads */
	uint64_t hidden;
};

struct family;

/*
 * What a family's config holds beyond its class's defaults: data the
 * generic reading takes, and hooks it calls where the family needs code
 * of its own. Each is zero (NULL) where the generic reading serves; each
 * hook returns 0 or an error, with the message written.
 */
struct family_ops {
	const char *window_field; /* the window's own name (defaults.window
				   * when absent), not sliding_window */
	const char *kv_field;     /* KV heads' field, as a message names it */
	struct every attn_every;  /* hybrids: every n-th layer attends, the
				   * others keep a fixed state */
	struct every full_every;  /* every n-th layer full, the others slide */
	enum swa_rule swa;
	struct moe_defaults moe;
	const struct mamba_fields *mamba;
	const struct ln_family *ln;
	struct class_shape cls;   /* its class's shape, for a wrapper */

	/* the whole model, read another way (OpenELM, Mamba) */
	int (*build)(struct cfg *c, struct kv_model *m,
		     const struct family *f);
	/* query heads, when the config names none */
	int (*heads)(struct cfg *c, uint64_t *heads);
	/* KV heads, from fields of the family's own */
	int (*kv_heads)(struct cfg *c, const struct kv_model *m,
			uint64_t *kv);
	/* a list of layer kinds under a name of the family's own, read as
	 * layer_types is; 1 when absent */
	int (*own_kinds)(struct cfg *c, uint32_t n, enum kv_attn *k);
	/* the family's rule for the kinds, the config naming none */
	int (*kinds)(struct cfg *c, const struct kv_model *m, uint64_t window,
		     uint64_t chunk, enum kv_attn *k);
	/* per-layer heads, after the kinds */
	int (*layer_heads)(struct cfg *c, struct kv_model *m);
	/* the dense MLP's width, after intermediate_size */
	int (*ffn)(struct cfg *c, struct kv_model *m);
	/* which layers are MoE (dense[i] false) */
	int (*moe_layers)(struct cfg *c, struct kv_model *m, bool *dense);
	/* what the layers hold, after their mixers are read */
	int (*layers)(struct cfg *c, struct kv_model *m);
	/* a fixed state in place of a Mamba mixer's */
	int (*linear)(struct cfg *c, struct kv_model *m);
	/* the block's fields past the norms' */
	int (*block)(struct cfg *c, struct kv_model *m);
	/* the dtype, when no field names it */
	int (*dtype)(struct cfg *c, struct kv_model *m);
};

/* A model family as the configs name it: its model_type, the block it is
 * read as, its config class's defaults (Transformers'
 * configuration_<type>.py), its layout's traits (T_*) and what more it
 * holds (ops). A type not in FAMILIES is read as a Llama-style config,
 * and said. */
struct family {
	const char *type;
	enum kv_family family;
	struct defaults d;
	unsigned traits;
	const struct family_ops *ops; /* never NULL from family_of() */
};

/* family.c: the table. family_of() gives the family of model_type t
 * (known: t is one, or a descendant); kv_family_at() each entry of the
 * table in turn, NULL after the last. */
struct family family_of(const char *t, bool *known);
const struct family *kv_family_at(size_t i);

/* model_ssm.c */
int read_mamba(struct cfg *c, struct kv_model *m,
	       const struct mamba_fields *f);
int read_linear(struct cfg *c, struct kv_model *m, const struct family *f);
int build_ssm(struct cfg *c, struct kv_model *m, const struct family *f);

/* model_quant.c */
int read_dtype(struct cfg *c, struct kv_model *m, const struct family *f);
int read_quant(struct cfg *c, struct kv_model *m);
/* ModelOpt's hf_quant_config.json beside config_path, a config.json whose
 * m has no quantization: m's quantization as vLLM reads it from there.
 * Returns 0 (no file: nothing read), or KV_EINVAL, KV_EIO, KV_ENOMEM
 * with err naming that file. */
int read_quant_beside(struct kv_model *m, const char *config_path,
		      char *err);

/* model_vision.c: vision_config v of config c, its tower as vision.h
 * models it: its kind (by c's own model_type, or Gemma 3's
 * mm_tokens_per_image), depth and the fields of its kind; after
 * read_vision's common ones. Returns 0 or KV_EINVAL. */
int model_vision_read(struct cfg *c, struct cfg *v, struct kv_model *m);

/* model_audio.c: config c's audio_config (or its thinker_config's), its
 * tower as audio.h models it: its kind by c's own model_type (Qwen2-Audio,
 * Voxtral, Qwen2.5-Omni; another left KV_AUD_NONE) and its encoder's
 * shape. Returns 0 or KV_EINVAL. */
int model_audio_read(struct cfg *c, struct kv_model *m);

/* preprocessor_config.json beside config_path, a config.json of a model
 * whose tower's processor is modelled: its sizes over the processor's
 * defaults. Returns 0 (no file: nothing read), or KV_EINVAL, KV_EIO,
 * KV_ENOMEM with err naming that file. */
int read_preprocessor_beside(struct kv_model *m, const char *config_path,
			     char *err);

/* gguf_cfg.c: a GGUF's metadata as the config.json its family reads
 * (*out freed by the caller with cJSON_Delete); 0, or KV_EINVAL with err
 * naming path and the key, or KV_ENOMEM. */
struct kv_gguf;
int kv_gguf_config(const struct kv_gguf *g, const char *path, cJSON **out,
		   char *err);

#endif
