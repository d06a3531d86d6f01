/*
 * fit.h - how many sequences fit beside the weights on a GPU, and what one
 * decode step of those sequences costs in bytes and time: the arithmetic of
 * kvfit, kept here so that a unit test covers every number it prints.
 *
 * Every KV byte comes from layout.h (kv_layer_geom, kv_geom_token_bytes,
 * kv_geom_tokens) and every engine's own rule from its row of server.h;
 * this module cuts the model into stages, asks the engine's rules what
 * each layer keeps and what memory is free, and finds the stage that
 * decides.
 */
#ifndef KV_FIT_H
#define KV_FIT_H

#include "layout.h"
#include "place.h"
#include "params.h"
#include "server.h"

struct kv_lora;    /* lora.h */
struct kv_offload; /* offload.h */
struct kv_spec; /* spec.h */

/* What is asked. Sizes are bytes per GPU unless said otherwise. */
struct kv_fit_in {
	const struct kv_model *m;
	enum kv_dtype kv_dtype;  /* storage of K (and of V, unless v_own) */
	bool v_own;              /* V in v_dtype, its own (llama.cpp's
				    --cache-type-v); else in kv_dtype */
	enum kv_dtype v_dtype;
	enum kv_dtype w_dtype;   /* storage of the weights */
	uint64_t weights;        /* whole-model weight bytes, shared out by
				    parameters; 0: from the config */
	const struct kv_quant *quant; /* with stored: the matrices in this
				    format, not the config's; NULL: its
				    own */
	bool stored;             /* from the config as the checkpoint stores
				    it (kv_params.bytes: its
				    quantization_config), not parameters x
				    w_dtype */
	uint64_t mem;            /* memory of one GPU */
	uint64_t reserve;        /* kept back for activations and runtime */
	bool runtime;            /* model the engine's own runtime memory
				    (activations, logits, compute buffers),
				    where reserve is not given */
	double util;             /* fraction of memory the engine may use;
				    0: the engine's default */
	uint32_t tp, pp;         /* tensor- and pipeline-parallel ranks */
	uint64_t block;          /* tokens per page; 0: the engine's */
	uint64_t ctx;            /* tokens per sequence */
	uint64_t seq_ctx;        /* tokens a request holds, where a workload
				    says (its isl + osl) and fewer than ctx,
				    the engine's limit (max_model_len): an
				    engine that pages its cache fits as many
				    as pages of seq_ctx hold, what it sizes
				    by its limit (the profile's encoder
				    items, vLLM's start check) at ctx; 0:
				    ctx */
	uint64_t prefix;         /* tokens of a prompt shared by all, <= ctx */
	const struct kv_server *server; /* the engine and release whose
				    rules apply */
	uint64_t users;          /* sequences of the decode step; 0: as many
				    as fit */
	const char *gpu;         /* the GPU's name or label, for rules that
				    depend on it ("a100"); NULL: unknown */
	uint64_t batched_tokens; /* tokens a step may schedule (vLLM's
				    max_num_batched_tokens, llama.cpp's
				    n_ubatch); 0: the engine's default */
	uint64_t max_seqs;       /* sequences that may run at once (vLLM's
				    max_num_seqs, llama.cpp's --parallel);
				    0: the engine's default */
	bool kv_unified;         /* llama.cpp: one stream for all sequences
				    (--kv-unified), not one each */
	const uint64_t *windows; /* TensorRT-LLM's max_attention_window: the
				    window of each attention layer in turn,
				    repeating, in tokens (nwindows of them);
				    NULL: unset (an engine whose row takes
				    none ignores them) */
	size_t nwindows;
	bool swa_full;           /* llama.cpp: sliding layers keep the whole
				    context (--swa-full) */
	uint64_t kv_memory;      /* KV bytes per GPU as an engine's log
				    gave them; 0: from memory, weights and
				    the engine's fraction */
	double bandwidth_gbps;   /* per GPU, 10^9 B/s; 0: unknown */
	double tflops;           /* per GPU dense peak, 10^12 FLOP/s; 0:
				    unknown (kv_gpu_peak picks it) */
	enum kv_compute compute; /* the format the products compute in
				    (kv_gpu_compute) */
	bool mx_experts;         /* the experts stored in mxfp4: their
				    kernels' own measured efficiency */
	const struct kv_params_memo *counts; /* m's parameter counts with
				    quant, derived once (kv_fit_memo); NULL,
				    or those of another model or format:
				    derived on each solve */
	const struct kv_lora *lora; /* LoRA adapters the engine makes room
				    for (lora.h); NULL: none */
	const struct kv_offload *offload; /* a host tier of KV and the
				    prompt hits (offload.h); NULL: none */
	const struct kv_spec *spec; /* speculative decoding (spec.h): its
				    drafter's weights and cache beside the
				    model's; NULL: none */
	struct kv_ngl off;   /* llama.cpp's split between the GPU and
				    host memory (off.on; pp 1); else every
				    weight on the GPU */
	uint64_t images;         /* images a request carries (vision.h); 0:
				    none, the vision tower not counted */
	uint32_t dp;             /* attention's data-parallel groups of tp
				    ranks each, every group its own
				    sequences and KV (ep.h); users,
				    max_seqs and the step are one group's;
				    0 or 1: one */
	uint32_t ep;             /* expert-parallel ranks of a stage's
				    dp x tp, n_experts / ep experts each
				    (ep.h); 0 or 1: the experts split as
				    the rest */
	double ep_imbalance;     /* the busiest expert rank's tokens over
				    the mean, >= 1; 0: 1 (balanced) */
	uint32_t image_w, image_h; /* each image's pixels, as given
				    (--image-size); 0, 0: the largest its
				    processor keeps (kv_vision_image) */
	double audio_s;          /* seconds of audio a request carries, one
				    clip (audio.h); 0: none, the audio
				    tower not counted */
};

/* What an engine keeps on one GPU for its own work, outside weights and
 * cache, term by term as kvfit(1) (RUNTIME MEMORY) derives each from the
 * engine's code. Each is 0 where the engine does not set it aside. */
struct kv_runtime {
	uint64_t activation; /* the forward pass of one step of
				batched_tokens tokens, at its peak */
	uint64_t sampler;    /* the sampler's pass over max_seqs rows of
				logits (vLLM's profile run) */
	uint64_t graphs;     /* CUDA graphs: the pool of the largest capture
				and each further graph */
	uint64_t nontorch;   /* memory outside the tensors the engine counts
				against its budget: CUDA context, library
				and NCCL workspaces */
	uint64_t total;      /* max(activation, sampler) + graphs +
				nontorch: the two passes peak apart */
};

/* Where a split row's parts land (kv_fit_in.off.on), and what its step
 * costs on each side; zeros without a split. The GPU's weights, compute
 * buffer and KV are kv_fit's weights, runtime and kv_bytes. */
struct kv_split {
	uint32_t gpu_layers;    /* decoder layers on the GPU */
	bool head_gpu;          /* the output head on the GPU */
	uint32_t moe_host;      /* of the GPU's layers, those whose routed
				   experts are all in host memory */
	uint64_t host_weights;  /* weight bytes in host memory */
	uint64_t host_compute;  /* llama.cpp's host compute buffer */
	uint64_t host_seq;      /* KV and state bytes one more sequence
				   takes in host memory */
	uint64_t host_shared;   /* and those held once */
	uint64_t host_kv;       /* KV of the users that fit, in host
				   memory: host_shared + users_whole x
				   host_seq */
	uint64_t host_mem;      /* the host's memory (0: unknown) */
	uint64_t host_missing;  /* bytes host weights and compute miss it
				   by, or 0 */
	double host_users;      /* sequences host memory holds; INFINITY
				   where unknown or none kept there */
	/* the step of step_users sequences */
	uint64_t step_host_weight_bytes; /* host weights it reads (lookups
				   aside) */
	uint64_t step_host_kv_bytes; /* host KV and state it reads */
	double step_host_flops; /* FLOPs of the host's layers and head */
	double kv_host_share;   /* of the KV a token reads, host memory's
				   (for steps put together, serve.h) */
	double lin_host_share;  /* of the products' FLOPs, the host's */
	double attn_host_share; /* of attention's FLOPs, the host's */
	uint32_t crossings;     /* times a token's hidden state crosses the
				   link in a step */
	double link_token;      /* bytes a token sends across it so */
	double logit_bytes;     /* bytes of a sampled row's logits sent back
				   (the head on the GPU), else 0 */
	double gpu_ms;          /* of step_ms: the GPU's bytes */
	double host_ms;         /* the host's (kv_ngl_ms) */
	double link_ms;         /* the link's */
};

/* The answer, for the GPU that decides (the pipeline stage where the
 * fewest sequences fit). */
struct kv_fit {
	uint32_t stage;            /* deciding pipeline stage, 0-based */
	uint32_t stage_layers;     /* decoder layers on that stage */
	uint64_t block;            /* tokens per page used */
	uint64_t ctx_kept;         /* context after the engine's padding */
	uint64_t budget;           /* bytes the engine may use on the GPU */
	uint64_t weights;          /* weight bytes on the GPU */
	uint64_t runtime;          /* bytes the engine keeps for its own
				      work, modelled: rt.total (0 under
				      ideal, or with in->runtime false) */
	struct kv_runtime rt;      /* those bytes, term by term */
	uint64_t free_kv;          /* bytes left for KV; 0 if weights miss */
	uint64_t missing;          /* bytes the weights miss by, or 0 */
	uint64_t bytes_per_token;  /* KV bytes one token adds on the GPU */
	uint64_t dup_per_token;    /* of those, bytes other ranks also hold */
	uint64_t kv_tokens;        /* free_kv / bytes_per_token, in whole
				      pages; vLLM: its log's "GPU KV cache
				      size" (max_concurrency x ctx) */
	uint64_t batched_tokens;   /* the engine's step (its default or
				      in->batched_tokens) */
	uint64_t max_seqs;         /* the engine's cap on running
				      sequences; 0: none */
	uint64_t num_blocks;       /* vLLM: blocks of the pool (its layer
				      groups' pages); else 0 */
	double max_concurrency;    /* sequences of ctx tokens the cache
				      holds, before the max_seqs cap (vLLM's
				      "Maximum concurrency") */
	uint64_t seq_bytes;        /* bytes one more sequence takes, pages
				      and state included */
	uint64_t shared_bytes;     /* bytes held once: shared prefix, fixed
				      engine cells */
	double users;              /* sequences that fit, fractional, at
				      most max_seqs */
	uint64_t users_whole;      /* sequences that fit, whole */
	uint64_t kv_bytes;         /* KV the whole sequences hold on the GPU:
				      shared_bytes + users_whole x seq_bytes */
	uint64_t dup_bytes;        /* of kv_bytes, copies other ranks hold */
	/* the decode step of step_users sequences, one rank, all stages */
	uint64_t step_users;       /* sequences in the step */
	uint64_t step_weight_bytes; /* weights read (MoE: experts touched;
				       all of them when step_users is 0) */
	uint64_t step_kv_bytes;    /* KV and state read */
	double kv_weight_ratio;    /* step_kv_bytes / step_weight_bytes */
	double kv_share;           /* step_kv / (step_weight + step_kv) */
	double step_ms;            /* bytes read / bandwidth, ms; NAN unknown */
	double tokens_per_s;       /* step_users / step time; NAN unknown */
	double step_flops;         /* FLOPs of the step on one rank, all
				      stages: 2 x active params (+ head) and
				      attention over the tokens read */
	double compute_ms;         /* step_flops / peak, ms; NAN unknown */
	double step_attn_flops;    /* of step_flops, attention's (and a
				      sparse indexer's) */
	double step_head_flops;    /* of step_flops, the output head's */
	double step_routed_flops;  /* of step_flops, the routed experts' */
	uint64_t step_routed_bytes; /* of step_weight_bytes, the routed
				       experts' the step touches */
	uint64_t step_lookup_bytes; /* of step_weight_bytes, the tables a
				      step only looks rows up in (input
				      embedding, learned positions): the
				      article's roofline counts them, the
				      time model (serve.h) does not */
	uint64_t step_token_bytes; /* KV bytes one token adds on one rank,
				      all stages (what a step writes per
				      token) */
	/* images (in->images), on the first stage's GPU, 0 without */
	uint64_t vision_weights;   /* the vision tower's weight bytes,
				      derived (vision.h), beside `weights`;
				      0 where a checkpoint's bytes or
				      --weights hold them */
	uint64_t encoder_bytes;    /* the encoder outputs the engine holds
				      while it measures its memory (vLLM's
				      profile run), before its KV budget */
	uint64_t encoder_items;    /* of those, images (or audio clips) */
	uint64_t encoder_peak;     /* the vision tower's activation peak
				      while the profile encodes them
				      (kv_vision_peak); where it passes the
				      text model's pass and the outputs
				      held, the budget takes the rest too */
	/* audio (in->audio_s), on the first stage's GPU, 0 without */
	uint64_t audio_weights;    /* the audio tower's weight bytes,
				      derived (audio.h), beside `weights`;
				      0 where a checkpoint's bytes or
				      --weights hold them */
	/* LoRA (in->lora), on the GPU that decides */
	uint64_t lora_bytes;       /* the slots the engine preallocates,
				      taken before its KV budget (in
				      weights' place: not in weights) */
	uint64_t lora_host_bytes;  /* whole adapters cached in host memory
				      for this GPU's worker */
	uint64_t step_lora_bytes;  /* of step_weight_bytes, the slots of
				      the adapters the step runs */
	double step_lora_flops;    /* of step_flops, the adapters'
				      shrink and expand products */
	/* speculative decoding (in->spec), 0 without: */
	uint64_t draft_weights;    /* the drafter's weight bytes on the GPU,
				      beside `weights` */
	uint64_t draft_per_token;  /* of bytes_per_token, the drafter's
				      layers' */
	uint64_t lookahead;        /* tokens each sequence holds past its
				      context for the drafts in flight */
	struct kv_split split;     /* a split row's host part */
};

/* V's storage format of in: its own where v_own, else K's. */
enum kv_dtype kv_fit_v_dtype(const struct kv_fit_in *in);

/* Whether f's decode step holds only users that fit at once (at least
 * one, no more than users_whole): a --users step beyond them is sized
 * and timed all the same, as if memory held them. */
bool kv_fit_step_fits(const struct kv_fit *f);

/* Whether in's engine refuses it outright (llama.cpp split by heads; a
 * cache format the engine does not keep): true with the reason in err.
 * kv_fit_solve() refuses those with it; --engine all leaves them out. */
bool kv_fit_refuses(const struct kv_fit_in *in, char *err);

/* Where in carries no counts of its model and format, derives them into
 * c and points in at them, for the many solves of one row to come;
 * where that fails in goes without (each solve derives them, and says
 * what failed). Either way kv_params_memo_free(c) once in is done with
 * them (in->counts then dangles: set it back). */
void kv_fit_memo(struct kv_fit_in *in, struct kv_params_memo *c);

/* The tokens a request of in is counted at: seq_ctx where given and
 * below ctx, else ctx. */
uint64_t kv_fit_seq(const struct kv_fit_in *in);

/* Sizes one configuration. Returns 0, or KV_EINVAL with err filled (tp
 * that splits no head evenly, pp above the layers, reserve above memory,
 * prefix above ctx, a block format that cannot tile a head), or KV_ERANGE.
 * Weights that do not fit are an answer: users 0, `missing` set. */
int kv_fit_solve(const struct kv_fit_in *in, struct kv_fit *out, char *err);

/* users to two decimals as shown: rounded, except where that would reach
 * the next whole sequence, which does not fit (17.999 is 17.99, not
 * 18.00). */
double kv_fit_users_shown(double users);

/* The longest context (tokens, from max(1, prefix) to 2^40) at which
 * `users` sequences fit; 0 when none does. Returns 0 or KV_E*. */
int kv_fit_solve_ctx(const struct kv_fit_in *in, uint64_t users,
		     uint64_t *ctx, char *err);

/* The smallest tensor-parallel degree, up to max_tp, at which `users`
 * sequences fit (the model's layout must allow it); 0 when none does. */
int kv_fit_solve_tp(const struct kv_fit_in *in, uint64_t users,
		    uint32_t max_tp, uint32_t *tp, char *err);

/*
 * The GPU's memory as a line of `width` cells into buf (width + 1 bytes):
 * 'W' weights, 'K' KV of the users that fit, 'R' reserve and what the
 * engine leaves unused, '.' KV room no whole user fills. Returns buf.
 */
char *kv_fit_bar(const struct kv_fit_in *in, const struct kv_fit *f,
		 size_t width, char *buf);

#endif
