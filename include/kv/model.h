/*
 * model.h - a model as the KV cache sees it: a list of layers, each with its
 * own attention kind, heads, head sizes and window, read from the model's own
 * Hugging Face config.json.
 *
 * Shape fields (layer count, hidden size, attention heads) must be in the
 * config; every other field, when absent, takes the default of the family's
 * reference implementation (Transformers' config class for that
 * model_type), documented in kvtools(7).
 */
#ifndef KV_MODEL_H
#define KV_MODEL_H

#include <stdbool.h>

#include "dtype.h"
#include "quant.h"
#include "kv.h"

enum kv_attn {
	KV_ATTN_NONE,    /* keeps no KV: a state-space or linear-attention layer */
	KV_ATTN_FULL,    /* keeps every token */
	KV_ATTN_SLIDING, /* keeps the last `window` tokens */
	KV_ATTN_CHUNKED, /* keeps the tokens of the current chunk, <= `window` */
	KV_ATTN_MLA,     /* keeps one latent of kv_lora_rank + qk_rope_dim */
};

enum kv_family {
	KV_FAMILY_LLAMA,   /* llama, mistral, mixtral, qwen2/3, phi3, ... */
	KV_FAMILY_GPT2,
	KV_FAMILY_GEMMA,   /* gemma, gemma2, gemma3 */
	KV_FAMILY_FALCON,
	KV_FAMILY_DEEPSEEK, /* deepseek_v2, deepseek_v3 (MLA) */
	KV_FAMILY_GPT_OSS,
	KV_FAMILY_LLAMA4,
	KV_FAMILY_OPENELM,
	KV_FAMILY_JAMBA,
};

enum kv_mlp {
	KV_MLP_DENSE, /* one MLP of ffn_dim */
	KV_MLP_MOE,   /* routed experts of ffn_dim each (+ shared experts) */
	KV_MLP_NONE,  /* no MLP (a Mamba or NemotronH mixer-only layer) */
};

struct kv_layer {
	enum kv_attn attn;
	uint32_t q_heads;    /* query heads (0 on a layer with no attention) */
	uint32_t kv_heads;   /* K/V heads kept per token; 1 for an MLA latent */
	uint32_t head_dim_k; /* values per K head; MLA: kv_lora_rank + rope */
	uint32_t head_dim_v; /* values per V head; MLA: 0 (the latent is both) */
	uint64_t window;     /* most tokens kept, 0 = every token */
	uint32_t index_dim;  /* sparse attention's indexer key per token
			      * (DeepSeek V3.2), 0 for none */
	uint32_t index_heads; /* its query heads */
	uint64_t index_topk; /* tokens the attention then reads */
	bool ssm;            /* holds a Mamba mixer, and its fixed state */
	bool cross;          /* attends over an image's states, no cache of
			      * its own (Llama 3.2 Vision) */
	enum kv_mlp mlp;
	uint64_t ffn_dim;    /* MLP width, per expert for MoE */
};

/* The vision towers whose image tokens and FLOPs are modelled
 * (vision.h). */
enum kv_vit {
	KV_VIT_NONE,   /* none, or one not modelled */
	KV_VIT_SIGLIP, /* Gemma 3: a SigLIP ViT at a fixed size, pooled to
			  mm_tokens_per_image */
	KV_VIT_QWEN25, /* Qwen2.5-VL: patches of any size, 2 x 2 merged,
			  windowed attention, a gated MLP */
	KV_VIT_QWEN3,  /* Qwen3-VL, Qwen3.5: the same grid, learned
			  positions, a plain MLP, deepstack mergers */
	KV_VIT_LLAMA4, /* Llama 4: 336-pixel tiles, pixel shuffle */
};

/* The audio towers whose tokens and FLOPs are modelled (audio.h): each
 * a Whisper encoder over 30-second chunks of 128 mel bins. */
enum kv_aud {
	KV_AUD_NONE,    /* none, or one not modelled */
	KV_AUD_QWEN2,   /* Qwen2-Audio: one clip of at most 30 s, pooled
			   2 to 1, a linear projector */
	KV_AUD_VOXTRAL, /* Voxtral: any length in 30-s chunks, 4 frames
			   stacked a token, a two-layer adapter */
	KV_AUD_OMNI,    /* Qwen2.5-Omni's thinker: Qwen2-Audio's tokens, the
			   clip's own frames in windows of n_window, a
			   projector of its own */
};

struct kv_model {
	char name[256];        /* how tools name it: config name or path */
	char path[4096];       /* the file read, "-" for stdin */
	char model_type[64];   /* the config's model_type, "" if absent */
	char arch[96];         /* its architectures[0] (the wrapper's class,
				  Llama4ForConditionalGeneration), "" if
				  absent */
	bool gguf;             /* read from a GGUF file (llama.cpp's) */
	uint64_t run_ctx;      /* the context its runner is set to (an
				  Ollama model's num_ctx), the tools'
				  default; 0: none */
	bool run_ngl_given;    /* its runner sets the layers on the GPU
				  (an Ollama model's num_gpu): run_ngl */
	uint32_t run_ngl;
	bool vision;           /* it has a vision tower (vision_config) */
	uint32_t vit_layers;   /* its layers (num_hidden_layers, 24 if
				  not given) */
	uint64_t vit_hidden;   /* its width (hidden_size, 1024 if not
				  given) */
	uint64_t vit_ffn;      /* its MLP width (intermediate_size); 0:
				  not given */
	uint32_t vit_patch;    /* pixels a patch's side (patch_size); 0:
				  not given */
	uint32_t vit_image;    /* pixels an image's side (image_size); 0:
				  not given */
	uint32_t vit_channels; /* colour channels (num_channels, 3) */
	uint32_t mm_tokens;    /* tokens an image takes in the prompt
				  (Gemma 3's mm_tokens_per_image); 0: not
				  given */
	/* how the tower turns an image into tokens and how it is built
	 * (model_vision.c; vision.h derives its weights, tokens, FLOPs) */
	enum kv_vit vit_kind;
	uint32_t vit_depth;    /* its layers as built (num_hidden_layers,
				  Qwen's depth); 0: not given */
	uint32_t vit_merge;    /* Qwen: patches a side merged into one
				  token (spatial_merge_size) */
	uint32_t vit_temporal; /* Qwen: frames a patch spans
				  (temporal_patch_size); an image is
				  repeated over them */
	uint64_t vit_out;      /* Qwen: the merger's output width
				  (out_hidden_size; 0: the text model's
				  hidden); Llama 4: the adapter's
				  (projector_output_dim) */
	uint32_t vit_window;   /* Qwen2.5: pixels a side of a window of
				  windowed attention (window_size); 0:
				  none */
	uint32_t vit_full;     /* Qwen2.5: layers of full attention among
				  them (fullatt_block_indexes) */
	uint32_t vit_pos;      /* Qwen3: learned positions
				  (num_position_embeddings); 0: none */
	uint32_t vit_deepstack; /* Qwen3: extra mergers
				  (deepstack_visual_indexes) */
	double vit_shuffle;    /* Llama 4: pixel_shuffle_ratio */
	uint64_t vit_proj_in;  /* Llama 4: projector_input_dim */
	/* its image processor (preprocessor_config.json beside a
	 * config.json, else the processor's defaults) */
	uint64_t px_min, px_max; /* Qwen: pixels an image keeps at least
				  and at most (min_pixels, max_pixels) */
	uint32_t px_tile;      /* Llama 4: pixels a tile's side (size) */
	uint32_t px_tiles;     /* Llama 4: tiles an image at most
				  (max_patches) */
	bool audio;            /* it has an audio tower (audio_config) */
	enum kv_aud aud_kind;  /* which (model_audio.c), by the wrapper's
				  model_type */
	uint32_t aud_layers;   /* its layers (encoder_layers or
				  num_hidden_layers, 32) */
	uint64_t aud_hidden;   /* its width (d_model or hidden_size,
				  1280) */
	uint64_t aud_ffn;      /* its MLP width (encoder_ffn_dim or
				  intermediate_size, 5120) */
	uint32_t aud_mels;     /* mel bins a frame (num_mel_bins, 128) */
	uint32_t aud_pos;      /* positions a chunk (max_source_positions,
				  1500: 30 s of 100 frames, halved by
				  its second convolution) */
	uint32_t aud_window;   /* Qwen2.5-Omni: positions a window of
				  attention (n_window, 100); 0: a chunk */
	uint64_t aud_out;      /* Qwen2.5-Omni: its projector's width
				  (output_dim, 3584); 0: the text
				  model's */
	enum kv_family family;
	bool gated_mlp;        /* SwiGLU/GeGLU (3 matrices) vs plain (2) */
	bool layernorm;        /* LayerNorm (weight+bias) vs RMSNorm (weight) */
	bool qkv_bias;         /* biases on q, k, v projections */
	bool o_bias;           /* bias on the output projection */
	bool mlp_bias;         /* biases on MLP matrices */
	bool qk_norm;          /* per-head RMSNorm on q and k (Qwen3, Gemma 3) */
	bool tie_embeddings;   /* output head shares the input embedding */
	bool parallel_block;   /* attention and MLP read one norm (Falcon) */
	bool attn_gate;        /* q_proj also makes an output gate (Qwen3-Next) */
	bool head_bias;        /* the output head has a bias (GPT-J, Phi) */
	bool embed_norm;       /* a norm after the embedding (BLOOM) */
	uint32_t embed_extra;  /* embedding rows past the vocabulary (Llama
				* 3.2 Vision's 8) */
	uint64_t embed_dim;    /* the embedding's width, projected in and out
				* when not hidden (OPT-350m); 0: hidden */
	bool no_final_norm;    /* no norm before the head (OPT-350m) */
	uint64_t learned_pos;  /* rows of learned positions (GPT-2, OPT) */

	uint32_t n_layers;     /* decoder layers */
	uint64_t hidden;       /* residual width */
	uint32_t n_heads;      /* query heads (of the first layer for lists) */
	uint32_t n_kv_heads;   /* K/V heads (of the first attention layer) */
	uint32_t head_dim;     /* values per query/K head */
	uint32_t head_dim_v;   /* values per V head */
	uint64_t intermediate; /* dense MLP width */
	uint64_t vocab;        /* vocabulary size */
	uint64_t max_pos;      /* maximum positions, 0 if the config has none */
	enum kv_dtype dtype;   /* torch_dtype, or f32 when absent */
	bool dtype_given;      /* dtype came from the config */
	double norm_eps;
	double rope_theta;     /* 0 for learned positions */
	struct {               /* rope_scaling, as the config gives it */
		char type[16];    /* "" none; "linear", "llama3", ... */
		double factor;    /* default 1 */
		double low_freq, high_freq; /* llama3's factors (1, 4) */
		uint64_t original_max; /* llama3's original positions */
	} rope_scaling;

	/* multi-head latent attention (DeepSeek V2/V3); 0 when not MLA */
	uint32_t q_lora_rank;  /* 0: plain q projection (Step3's share_q_dim
				* too: its q through a normed low rank) */
	uint32_t kv_lora_rank;
	uint32_t qk_rope_dim;
	uint32_t qk_nope_dim;
	uint32_t v_head_dim;
	bool mla_expanded;     /* the cache keeps each head's K and V made
				* from the latent (MiniCPM3's reference) */

	/* mixture of experts; n_experts == 0 for dense models */
	uint32_t n_experts;        /* routed experts per MoE layer */
	uint32_t n_experts_active; /* routed experts per token */
	uint32_t n_shared_experts; /* always-on experts per MoE layer */
	uint64_t shared_ffn_dim;   /* width of the shared expert(s) in total */
	bool expert_bias;          /* experts carry biases (gpt-oss) */
	uint32_t n_mtp_layers;     /* extra next-token prediction layers */
	uint64_t draft_vocab;      /* an EAGLE-3 head's own output rows
				      (draft_vocab_size); 0: none */
	uint32_t n_mem_blocks;     /* Zamba2: attention blocks whose weights
				      its attention layers share in turn
				      (num_mem_blocks); 0 none shared */
	uint32_t adapter_rank;     /* Zamba2: rank of each such layer's own
				      MLP adapter */

	/* state-space mixers: Mamba-1 (Jamba, Mamba, Falcon Mamba), Mamba-2
	 * (Mamba2, Bamba, Granite 4.0 H, NemotronH, Falcon-H1), 3: gated
	 * DeltaNet (Qwen3-Next, Qwen3.5: groups key heads of d_state, heads
	 * value heads of d_inner / heads), 4: MiniMax's lightning attention,
	 * 5: Kimi Linear's KDA (both: heads of d_state = head_dim channels;
	 * KDA's groups are its key heads, d_conv its short convolution), 6:
	 * RecurrentGemma's RG-LRU (d_inner = lru_width in heads' blocks,
	 * d_state 1, d_conv conv1d_width), 7: LFM2's short convolution
	 * (d_inner = hidden, d_state 0, d_conv conv_L_cache) */
	uint32_t ssm_version;  /* 1 to 7; 0 without */
	enum kv_dtype ssm_dtype; /* of the recurrent state (mamba_ssm_dtype) */
	uint32_t ssm_d_state;  /* SSM state per channel */
	uint32_t ssm_d_conv;   /* convolution kernel */
	uint64_t ssm_d_inner;  /* channels: mamba_expand x hidden */
	uint32_t ssm_dt_rank;  /* Mamba-1's step projection */
	bool ssm_bias;         /* LFM2's convolution blocks are biased */
	uint32_t ssm_heads;    /* Mamba-2 heads of d_inner / heads channels */
	uint32_t ssm_groups;   /* Mamba-2 groups sharing B and C */

	struct kv_quant quant;   /* the checkpoint's quantization_config */
	char *json;              /* a config read from stdin, its text on one
				  * line (for a pipe to carry); else NULL */

	struct kv_layer *layers; /* n_layers entries */
	char note[512];          /* something a person should know, or "" */
};

/* Reads a config from a file (or stdin when path is "-"), or the header
 * of a GGUF file (kv_model_from_gguf), and builds the model. On success returns 0 and *out must be freed with kv_model_free().
 * On failure returns KV_EINVAL, KV_EIO or KV_ENOMEM and writes one line into
 * err (KV_ERRLEN bytes): "path: field: problem, got X". */
int kv_model_load(const char *path, struct kv_model **out, char *err);

/* Builds a model from JSON text already in memory; `path` only names it in
 * messages. Same contract as kv_model_load(). */
int kv_model_parse(const char *json, size_t len, const char *path,
		   struct kv_model **out, char *err);

/* Builds the model a GGUF's header describes (struct kv_gguf, from
 * gguf.h): its metadata read as the config.json its architecture's family
 * reads, its layers as llama.cpp's loader makes them; `path` names it
 * (the name is its last part, less ".gguf"). Same contract as
 * kv_model_load(); an architecture not mapped is KV_EINVAL naming it. */
struct kv_gguf;
int kv_model_from_gguf(const struct kv_gguf *g, const char *path,
		       struct kv_model **out, char *err);

/* The built-in shape of the articles' model: GPT-2 small (12 layers, width
 * 768, 12 heads of 64, MLP 3072, vocabulary 50257, 1024 positions, f32).
 * Free with kv_model_free(). Returns 0 or KV_ENOMEM. */
int kv_model_gpt2_small(struct kv_model **out);

void kv_model_free(struct kv_model *m);

/* Name of an attention kind: "full", "sliding", "chunked", "mla", "none". */
const char *kv_attn_name(enum kv_attn a);

/* The model's class as its config names it: architectures[0], else its
 * model_type, else "(none)". */
const char *kv_model_class(const struct kv_model *m);

/*
 * Finds a config by what a user typed: an existing file; a folder (a
 * snapshot) holding config.json; an "org/name" a Hugging Face hub cache
 * holds (its newest snapshot's config.json: $HF_HUB_CACHE, $HF_HOME/hub,
 * ~/.cache/huggingface/hub, offline); else NAME or
 * NAME.json in each directory of $KV_CONFIG_PATH (colon-separated), then the
 * data directory beside the binary (<prefix>/share/kvtools/configs when it
 * runs from <prefix>/bin), the installed data directory, then the source
 * tree's configs/. Writes the path
 * into out (n bytes). Returns 0, or KV_EIO when nothing matches.
 */
int kv_config_find(const char *arg, char *out, size_t n);

/* The file `name` in the folder of config_path ("" names the folder
 * itself, "." when the path has none) into out; false when the config has no folder of its own
 * (stdin, "-") or the path does not fit. */
bool kv_config_beside(const char *config_path, const char *name, char *out,
		      size_t n);

/* The directories searched, in order, one per call: i = 0, 1, ...; NULL
 * after the last. The string lives until the next call. */
const char *kv_config_dir(size_t i);

/* The first file `name` of those directories (gpus.json, efficiency.json)
 * into out: 0; else out is name and KV_EIO. */
int kv_config_file(const char *name, char *out, size_t n);

#endif
