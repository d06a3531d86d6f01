/*
 * plan.h - the rows kvfit plans: the options every row shares and each
 * model to plan (a config, or a row of kvsize's TSV that brings its own
 * format, context, users, --tp and --block-size) make one kv_fit_in per
 * model x KV format x block size x context x users x engine. Which weights a row
 * counts, which engines a row is for and how a row is solved are decided
 * here, so that a unit test covers them; kvfit parses, loops and prints.
 */
#ifndef KV_PLAN_H
#define KV_PLAN_H

#include "ckpt.h"
#include "fit.h"
#include "gpu.h"
#include "params.h"
#include "serve.h"
#include "spec.h"
#include "tsv.h"

/* What a row solves for (kvfit --solve). */
enum kv_plan_solve {
	KV_PLAN_USERS, /* how many sequences fit */
	KV_PLAN_CTX,   /* the longest context at which `users` fit */
	KV_PLAN_TP,    /* the smallest --tp at which `users` fit */
	KV_PLAN_LAYERS, /* llama.cpp: the most layers on the GPU (an MoE
			   model: every layer, the fewest layers' experts
			   in host memory) at which `users` (1 where none
			   is given) fit */
	KV_PLAN_GPUS,   /* the fewest GPUs (replicas x shape, aggregated
			   or disaggregated: fleet.h) that serve a request
			   rate within the latency targets */
};

/* --cpu-moe: every layer's experts in host memory (kv_plan_opts.n_cpu_moe). */
#define KV_CPU_MOE_ALL UINT32_MAX

/* What llama.cpp's --fit leaves free on the GPU for -ngl auto
 * (common/arg.cpp, --fit-target: 1024 MiB by default). */
#define KV_FIT_MARGIN (1024ULL << 20)

/* The options every row shares. Sizes are bytes per GPU; 0 is "not
 * given" (the engine's or the config's) unless said otherwise. */
struct kv_plan_opts {
	const struct kv_gpu *gpu; /* the --gpu entry, or NULL */
	uint64_t mem;             /* memory of one GPU */
	uint64_t weights;         /* whole-model weight bytes */
	uint64_t reserve;         /* kept back; with reserve_given */
	bool reserve_given;       /* --reserve, in place of the engine's
				     own runtime memory */
	uint64_t prefix, batched, seqs, kv_memory;
	uint64_t tp, pp;          /* ranks, >= 1 */
	bool tp_given;
	double bandwidth, util;   /* 10^9 B/s; fraction of memory */
	int wdtype;               /* weights' enum kv_dtype; -1: what the
				     engine runs the config's in */
	bool wquant;              /* --weights-dtype named wq */
	struct kv_quant wq;
	const struct kv_server *server; /* the engine's rules; NULL: every
				     engine's newest that keeps the row's
				     format */
	enum kv_plan_solve solve;
	uint64_t *users;          /* nusers sequences; NULL: as many as
				     fit (the lists are the caller's) */
	size_t nusers;
	uint64_t *ctx;            /* nctx contexts; NULL: the config's
				     maximum (4096 when it has none) */
	size_t nctx;
	int *dtypes;              /* ndtypes KV formats, -1 the engine's;
				     NULL: the engine's */
	size_t ndtypes;
	uint64_t *blocks;         /* nblocks tokens per page, each >= 1;
				     NULL: the engine's */
	size_t nblocks;
	bool kv_unified, swa_full;
	uint64_t *windows;        /* nwindows attention windows (TensorRT-LLM's
				     max_attention_window); NULL: none */
	size_t nwindows;
	double tflops;            /* 10^12 FLOP/s of the weights' products;
				     0: the GPU's (kv_gpu_tflops) */
	struct kv_serve_in work;  /* the workload to time (isl 0: none;
				     users: each row's), efficiencies and
				     link */
	double max_ttft, max_tpot; /* targets, ms; 0: none */
	double usd_per_hour;      /* a GPU's cost; 0: none */
	const struct kv_lora *lora; /* LoRA slots (lora.h); NULL: none */
	const struct kv_offload *offload; /* a host tier of KV, prompt hits
				     (offload.h); NULL: none */
	struct kv_spec spec;      /* speculative decoding; method NONE:
				     none */
	/* llama.cpp's split between the GPU and host memory: its rows only */
	bool split;               /* asked: -ngl, -ot, --cpu-moe,
				     --n-cpu-moe, -nkvo, --solve layers, or
				     an Ollama model's num_gpu */
	int32_t ngl;              /* -ngl N, KV_NGL_ALL, KV_NGL_AUTO, or
				     KV_NGL_UNSET */
	uint32_t n_cpu_moe;       /* --n-cpu-moe N; KV_CPU_MOE_ALL:
				     --cpu-moe; 0 none */
	bool nkvo;                /* -nkvo */
	struct kv_ot ot[KV_OT_MAX]; /* -ot rules, in order */
	size_t not;
	uint64_t host_mem;        /* host memory; 0 unknown */
	double host_gbps;         /* host bandwidth, 10^9 B/s (> 0 with
				     split) */
	double host_tflops;       /* host FLOP rate; 0 unknown */
	double link_gbps;         /* the GPU's link to the host (> 0 with
				     split) */
	uint64_t images;          /* images a request carries (vision.h),
				     their tokens added to work.isl's
				     prompt; 0: none */
	/* expert parallelism and data-parallel attention (ep.h) */
	uint64_t dp;              /* --dp: groups; 0: none (1), or with
				     dp_attention every rank of tp */
	bool dp_attention;        /* --dp-attention: the groups within the
				     tp ranks (SGLang's and TensorRT-LLM's
				     form), tp / dp each; else dp groups
				     of tp (vLLM's) */
	bool dp_one;              /* as SGLang's --enable-dp-attention:
				     without --dp, one group (its dp_size
				     1 turns DP attention off) */
	uint64_t ep;              /* --ep: expert-parallel ranks; 0: none */
	bool ep_all;              /* --enable-expert-parallel: ep over every
				     rank of a stage */
	double ep_imbalance;      /* --ep-imbalance; 0: 1 */
	uint32_t image_w, image_h; /* their pixels (--image-size); 0, 0:
				     the largest the processor keeps */
	double audio_s;           /* seconds of audio a request carries, one
				     clip (audio.h), its tokens added to
				     work.isl's prompt; 0: none */
};

/* Option values, as kvfit reads them; each returns 0 or KV_EINVAL.
 * An engine by name (name@release for an older release's rules: KV_EUNSUP
 * where they are not kept), or "all" (NULL). */
int kv_plan_engine_parse(const char *s, const struct kv_server **out);
/* "steady" or "burst". */
int kv_plan_arrivals_parse(const char *s, enum kv_arrivals *out);
/* The arrivals' name (the arrivals column): steady, burst or rate. */
const char *kv_plan_arrivals_name(enum kv_arrivals a);
/* "users", "ctx", "tp", "layers" or "gpus". */
int kv_plan_solve_parse(const char *s, enum kv_plan_solve *out);
/* The weights' format: a storage format (o->wdtype), or a quantization
 * (o->wq, its matrices, with bf16 around them; o->wquant set). */
int kv_plan_weights_parse(const char *s, struct kv_plan_opts *o);

/* A kv_plan's dtype when its rows are the options' (a config). */
#define KV_PLAN_OPTIONS (-2)

/* One model to plan. */
struct kv_plan {
	struct kv_model *m;
	int dtype;           /* KV_PLAN_OPTIONS, or a kvsize row's one
				format (-1: the engine's) */
	uint64_t ctx;        /* a kvsize row's context; else 0 */
	enum kv_ckpt_source ckpt; /* a checkpoint beside the config */
	uint64_t ckpt_bytes;      /* its weights' bytes, as stored */
	uint64_t users, tp, block; /* a kvsize row's (users > 1), or 0 */
	struct kv_place place; /* the -ot rules on the model (with split:
				kv_plan_place; kv_place_free) */
	bool placed;
};

/* With o->split, reads o's -ot rules against p's model into p->place,
 * once before its rows. Returns 0 or kv_place_init's KV_E*, err filled. */
int kv_plan_place(const struct kv_plan_opts *o, struct kv_plan *p, char *err);

/* One row: what is asked of kv_fit_solve and what it answered. */
struct kv_plan_row {
	struct kv_fit_in in;
	const char *wsrc;    /* the weights_source column's word */
	struct kv_fit f;     /* after kv_plan_solve */
	bool none;           /* --solve ctx or tp found no answer (f and the
				solved field not set) */
	uint64_t held;       /* --solve ctx: tokens memory holds, past the
				model's positions, where in.ctx stops at
				them; else 0 */
	bool timed;          /* s holds the workload's times (after
				kv_plan_time) */
	struct kv_serve s;
	bool meets;          /* within the targets, or none given */
	bool unserved;       /* at a request rate: the rate cannot be
				served (kv_plan_time's err says why) */
	double usd_per_mtok; /* dollars per million output tokens; NAN
				without a cost */
	char why[KV_ERRLEN]; /* kv_plan_run: why it failed, or why the
				rate is unserved */
	uint64_t hit_tokens; /* of a timed row's prompt, tokens found in a
				cache tier (kv_offload_hit) */
	double load_ms;      /* their load from the host tier */
	double recompute_ms; /* the prefill they would take computed */
};

/* A walk over one plan's rows, in the order kvfit prints them. ctx and
 * nctx are the contexts it walks (to warn of those beyond the model's
 * positions). It may point into the struct: do not copy one. */
struct kv_plan_iter {
	const struct kv_plan_opts *o;
	const struct kv_plan *p;
	const int *dtypes;
	size_t ndtypes;
	const uint64_t *ctx;
	size_t nctx;
	const uint64_t *blocks; /* the block sizes it walks (0: the
				   engine's) */
	size_t nblocks;
	uint64_t defctx;     /* where no context is given */
	uint64_t noblock;    /* 0, where no block size is given */
	int auto_dtype;      /* -1, where no format is given */
	size_t next;         /* rows walked, skipped ones included */
	char left_out[KV_SERVER_KINDS][256]; /* --engine all: why rows of
					      each engine were left out
					      ("" where none was) */
};

/* Starts a walk over p's rows under o; both must outlive it. */
void kv_plan_begin(struct kv_plan_iter *it, const struct kv_plan_opts *o,
		   const struct kv_plan *p);

/* The next row into r (in and wsrc set): false past the last. With
 * no engine given, leaves out the engines that do not keep the row's format,
 * and llama.cpp above --tp 1. */
bool kv_plan_next(struct kv_plan_iter *it, struct kv_plan_row *r);

/* Checks a row's input only, what o's solve varies left valid (tp 1 for
 * --solve tp, a context of at least the prefix for --solve ctx), and that
 * its workload can be timed: 0 or
 * kv_fit_solve's KV_E* with err filled. */
int kv_plan_check(const struct kv_plan_opts *o, struct kv_plan_row *r,
		  char *err);

/* Solves a row as `s` asks, then kv_fit_solve: --solve ctx sets in.ctx,
 * --solve tp in.tp (up to kv_plan_max_tp). Returns 0 with f, none and
 * held set (where --solve ctx finds none, f is the row at its shortest
 * context, to say why), or KV_E* with err filled (held may be set). */
int kv_plan_solve(enum kv_plan_solve s, struct kv_plan_row *r, char *err);

/* A row checked, solved as o's solve asks and timed, once:
 * kv_plan_check (whose solve is the answer for --solve users), then
 * kv_plan_solve for --solve ctx or tp, then kv_plan_time unless no
 * answer was found (r->none). Returns 0 or as those, err filled. */
int kv_plan_run(const struct kv_plan_opts *o, struct kv_plan_row *r,
		char *err);

/*
 * Times a solved row's workload (o->work; nothing where its isl is 0) at
 * the row's users, or with none given at those that fit; with a target
 * and no users given, at the most users that meet it (in.users set and
 * the row solved again). A row where no user fits is not timed. With a
 * target no user meets, the row is one user's point (in.users 1, its
 * step and its times), meets false.
 * Returns 0, or KV_E* with err filled.
 */
int kv_plan_time(const struct kv_plan_opts *o, struct kv_plan_row *r,
		 char *err);

/* The users a timed row serves at once within every target given: those
 * that fit (users_whole) without a target; with one, none where the row
 * misses it, else its users (the most that meet it, or --users', as many
 * as fit). What a --min-users gate counts. */
uint64_t kv_plan_served(const struct kv_plan_opts *o,
			const struct kv_plan_row *r);

/* The most tensor-parallel ranks tried for m: its heads, at most 1024. */
uint32_t kv_plan_max_tp(const struct kv_model *m);

/* What stops one more sequence, the bound column: "weights",
 * "max_num_seqs" or "kv_memory". */
const char *kv_plan_bound(const struct kv_fit *f);

/* Why a row serves no sequence, and what to say of it. */
struct kv_plan_refusal {
	enum kv_plan_why {
		KV_PLAN_SERVES,  /* it does, or nothing to say */
		KV_PLAN_WEIGHTS, /* the weights miss */
		KV_PLAN_VLLM,    /* vLLM's start check refuses the context */
	} why;
	uint64_t need; /* WEIGHTS: bytes the weights, --reserve or the
			  engine's runtime need per GPU; VLLM: KV bytes of
			  one request of the whole context */
	uint32_t tp;   /* WEIGHTS: the smallest --tp at which one sequence
			  fits; 0 none up to kv_plan_max_tp (or llama.cpp) */
	uint32_t pp;   /* WEIGHTS, llama.cpp (which splits layers, not
			  heads): the smallest --pp at which one fits; 0
			  none up to the layers */
	bool layers;   /* WEIGHTS, a split row: ngl and moe hold the
			  most layers on the GPU (and the fewest layers'
			  experts in host memory) at which one fits */
	uint32_t ngl, moe;
	uint64_t ctx;  /* VLLM: the longest context it would take (its
			  estimated maximum model length), 0 none */
};

/* The refusal of a solved row (vLLM's _check_enough_kv_cache_memory:
 * one request of the whole context must fit or it does not start). */
struct kv_plan_refusal kv_plan_refusal(const struct kv_fit_in *in,
				       const struct kv_fit *f);

/* Where a kvsize row's users (above 1), --tp or --block-size differ from
 * the options': the option's name ("--tp"), with the row's value and the
 * option's (a list's first); NULL when they agree. A list of users
 * disagrees with any row's; a row's block size must be among the
 * option's. */
const char *kv_plan_disagrees(const struct kv_plan_opts *o,
			      const struct kv_plan *p, uint64_t *row,
			      uint64_t *given);

/* kvfit --params for p: the parameters, the weights' bytes as the ideal
 * engine runs them, and the weights_source word. Returns 0, or KV_EINVAL
 * or KV_ERANGE with err filled. */
int kv_plan_params(const struct kv_plan_opts *o, const struct kv_plan *p,
		   struct kv_params *out, uint64_t *bytes, const char **src,
		   char *err);


/* --- kvfit's columns (plan_cols.c) --- */

/* Every column of kvfit's rows, in the order written: the memory's,
 * from KV_PROW_GPU_LAYERS a split's (llama.cpp's GPU and host memory),
 * then from KV_PROW_ISL a timed row's (--isl and --osl). */
enum kv_prow_col {
	KV_PROW_MODEL,
	KV_PROW_GPU,
	KV_PROW_GPUS,
	KV_PROW_TP,
	KV_PROW_PP,
	KV_PROW_ENGINE,
	KV_PROW_ENGINE_RULES,
	KV_PROW_BLOCK,
	KV_PROW_KV_DTYPE,
	KV_PROW_CTX,
	KV_PROW_WEIGHTS_BYTES,
	KV_PROW_WEIGHTS_SOURCE,
	KV_PROW_RUNTIME_BYTES,
	KV_PROW_ACTIVATION_BYTES,
	KV_PROW_SAMPLER_BYTES,
	KV_PROW_GRAPH_BYTES,
	KV_PROW_NONTORCH_BYTES,
	KV_PROW_FREE_KV_BYTES,
	KV_PROW_BYTES_PER_TOKEN,
	KV_PROW_DUP_BYTES_PER_TOKEN,
	KV_PROW_KV_TOKENS,
	KV_PROW_NUM_BLOCKS,
	KV_PROW_MAX_CONCURRENCY,
	KV_PROW_MAX_NUM_SEQS,
	KV_PROW_BATCHED_TOKENS,
	KV_PROW_USERS,
	KV_PROW_USERS_WHOLE,
	KV_PROW_KV_BYTES,
	KV_PROW_DUP_BYTES,
	KV_PROW_STEP_USERS,
	KV_PROW_STEP_FITS,
	KV_PROW_STEP_WEIGHT_BYTES,
	KV_PROW_STEP_KV_BYTES,
	KV_PROW_KV_WEIGHT_RATIO,
	KV_PROW_KV_SHARE,
	KV_PROW_STEP_MS,
	KV_PROW_TOKENS_PER_S,
	KV_PROW_COMPUTE_MS,
	KV_PROW_BOUND,
	KV_PROW_GPU_LAYERS,
	KV_PROW_CPU_MOE_LAYERS,
	KV_PROW_GPU_WEIGHTS_BYTES,
	KV_PROW_GPU_KV_BYTES,
	KV_PROW_GPU_COMPUTE_BYTES,
	KV_PROW_HOST_WEIGHTS_BYTES,
	KV_PROW_HOST_KV_BYTES,
	KV_PROW_HOST_COMPUTE_BYTES,
	KV_PROW_HOST_MEM_BYTES,
	KV_PROW_HOST_FITS,
	KV_PROW_STEP_GPU_MS,
	KV_PROW_STEP_HOST_MS,
	KV_PROW_STEP_LINK_MS,
	KV_PROW_ISL,
	KV_PROW_OSL,
	KV_PROW_PREFILL_CHUNK,
	KV_PROW_PREFILL_MS,
	KV_PROW_DECODE_MS,
	KV_PROW_TTFT_MS,
	KV_PROW_TPOT_MS,
	KV_PROW_LATENCY_MS,
	KV_PROW_OUT_TOKENS_PER_S,
	KV_PROW_OUT_TOKENS_PER_S_GPU,
	KV_PROW_PREFILL_BOUND,
	KV_PROW_DECODE_BOUND,
	KV_PROW_MEETS_TARGET,
	KV_PROW_USD_PER_MTOK,
	KV_PROW_ARRIVALS,
	KV_PROW_TIME_SOURCE,
	/* with --max-loras or --max-lora-rank, after the memory's */
	KV_PROW_MAX_LORAS,
	KV_PROW_LORA_RANK,
	KV_PROW_LORA_BYTES,
	KV_PROW_LORA_HOST_BYTES,
	KV_PROW_LORA_STEP_BYTES,
	KV_PROW_LORA_STEP_FLOPS,
	/* with a host tier (--kv-offload), likewise */
	KV_PROW_OFFLOAD_KV_TOKENS,
	KV_PROW_OFFLOAD_KV_BYTES,
	/* with --images, after the memory's (LoRA's, the host tier's) */
	KV_PROW_IMAGES,
	KV_PROW_IMAGE_TOKENS,
	KV_PROW_VISION_WEIGHTS_BYTES,
	KV_PROW_ENCODER_ITEMS,
	KV_PROW_ENCODER_BYTES,
	KV_PROW_ENCODER_PEAK_BYTES,
	/* with --prefix-hit or a host tier, after the time's */
	KV_PROW_HIT_TOKENS,
	KV_PROW_LOAD_MS,
	KV_PROW_RECOMPUTE_MS,
	/* speculative decoding's, with --spec-method only */
	KV_PROW_SPEC_METHOD,
	KV_PROW_SPEC_TOKENS,
	KV_PROW_DRAFT_WEIGHTS_BYTES,
	KV_PROW_DRAFT_BYTES_PER_TOKEN,
	KV_PROW_ACCEPTANCE,
	KV_PROW_TOKENS_PER_STEP,
	/* with --dp or --ep, after the memory's (and the images') */
	KV_PROW_EP,
	KV_PROW_DP,
	KV_PROW_EXPERTS_PER_RANK,
	KV_PROW_A2A,
	KV_PROW_A2A_BYTES,
	KV_PROW_A2A_MS,
	/* with --images, after all others: the image as the tower sees
	 * it, its FLOPs, and with a workload its time */
	KV_PROW_IMAGE_SIZE,
	KV_PROW_ENCODER_FLOPS,
	KV_PROW_ENCODER_MS,
	/* with --audio-seconds, after the images': the clip, its tokens,
	 * the audio tower's weights */
	KV_PROW_AUDIO_SECONDS,
	KV_PROW_AUDIO_TOKENS,
	KV_PROW_AUDIO_WEIGHTS_BYTES,
	KV_PROW_NCOLS
};

extern const char *const kv_prow_names[KV_PROW_NCOLS];

/* The columns o's rows have, in order, into out (KV_PROW_NCOLS of room;
 * NULL: only counted): the memory's (before KV_PROW_ISL), a split's where
 * one is asked (o->split), LoRA's with o->lora, the host tier's with one,
 * the images' with o->images; then with a workload (o->work.isl) the
 * time's (KV_PROW_ISL to KV_PROW_TIME_SOURCE), the hits' with
 * o->offload, and with speculative decoding (o->spec) its own from
 * KV_PROW_SPEC_METHOD; last, with o->images, the tower's from
 * KV_PROW_IMAGE_SIZE (KV_PROW_ENCODER_MS with a workload). With
 * o->audio_s, the audio's after the images' memory columns (and
 * KV_PROW_ENCODER_ITEMS, KV_PROW_ENCODER_BYTES without images), and
 * KV_PROW_ENCODER_FLOPS (KV_PROW_ENCODER_MS) last without images.
 * Returns how many. */
size_t kv_prow_cols(const struct kv_plan_opts *o, enum kv_prow_col *out);

/* How many columns o's rows have (kv_prow_cols). */
size_t kv_prow_ncols(const struct kv_plan_opts *o);

/* The tokens o->images of m take in a request's prompt (kv_vision_tokens
 * each); 0 without images. */
uint64_t kv_plan_image_tokens(const struct kv_plan_opts *o,
			      const struct kv_model *m);

/* The tokens o->audio_s of audio takes in m's prompt (kv_audio_tokens);
 * 0 without audio. */
uint64_t kv_plan_audio_tokens(const struct kv_plan_opts *o,
			      const struct kv_model *m);

/* The tokens a request's images and audio take in m's prompt, added to
 * its --isl (UINT64_MAX past 64 bits). */
uint64_t kv_plan_mm_tokens(const struct kv_plan_opts *o,
			   const struct kv_model *m);

/* Row r's cell of column c, on the GPU named gpu; the time's cells empty
 * where the row was not timed (isl and osl still given). s may point
 * into out->buf. */
void kv_prow_cell(const struct kv_plan_row *r, const struct kv_plan_opts *o,
		  const char *gpu, enum kv_prow_col c, struct kv_cell *out);

/* Whether o asks for expert parallelism or data-parallel attention. */
bool kv_plan_ep(const struct kv_plan_opts *o);

/* Whether o gives a latency target to time rows against (a workload and
 * --max-ttft or --max-tpot). */
bool kv_plan_target(const struct kv_plan_opts *o);

#endif
