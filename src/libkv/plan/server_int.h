/*
 * server_int.h - what fit.c and the serving engines' files share and
 * nothing else sees: a fit in progress (its context and one pipeline
 * stage), the hooks an engine sizes its own way with, and the small
 * helpers both sides use.
 */
#ifndef KV_SERVER_INT_H
#define KV_SERVER_INT_H

#include "kv/fit.h"
#include "kv/lora.h"

/* What fit.c knows of the row it sizes, before any stage. */
struct fit_ctx {
	const struct kv_fit_in *in;
	const struct kv_server *sv; /* in->server */
	struct kv_opts o;
	uint64_t block;        /* tokens per page */
	uint64_t batched;      /* tokens a step schedules */
	uint64_t seqs;         /* sequences that may run; 0: no cap */
	uint64_t ctx;          /* padded context a sequence holds (seq_ctx
				  where given) */
	uint64_t max_ctx;      /* padded context of the engine's limit */
	uint64_t total_params;
	uint64_t state;        /* Mamba state bytes per sequence, all layers */
	uint32_t ssm_layers;   /* layers that keep that state */
	bool mla;              /* a latent (MLA) cache, not expanded */
};

/* What one pipeline stage holds and reads, on one tensor-parallel rank. */
struct fit_stage {
	uint32_t first, n;     /* layers [first, first + n) */
	uint64_t params;       /* parameters of the stage, whole (not / tp) */
	uint64_t stored;       /* their bytes as the checkpoint stores them */
	uint64_t routed;       /* of params: routed experts */
	uint32_t experts, experts_active;
	uint64_t weights;      /* weight bytes on one rank */
	uint64_t routed_bytes; /* of weights: routed experts */
	uint64_t lookup_bytes; /* of weights: tables a step reads rows of */
	uint64_t bpt, dup;     /* KV bytes per token; of them, copies */
	uint64_t seq, shared;  /* bytes kept per sequence, and once */
	uint64_t seq_dup, shared_dup; /* of them, copies other ranks hold */
	uint64_t rseq, rshared; /* bytes a step reads per sequence, once */
	uint64_t free_kv, missing, budget;
	struct kv_runtime rt;  /* the engine's own memory, modelled */
	double flops;          /* FLOPs one token costs on one rank */
	double attn_flops;     /* of flops, attention over the tokens read */
	double head_flops;     /* of flops, the output head's logits */
	double routed_flops;   /* of flops, the routed experts' */
	double users;          /* INFINITY when the stage keeps nothing */
	uint64_t whole;        /* whole sequences that fit */
	uint64_t tokens;       /* KV tokens, as the engine reports them */
	uint64_t blocks;       /* vLLM: blocks of its pool; else 0 */
	uint64_t block;        /* vLLM: tokens per page of full attention,
				* raised for a Mamba page; else 0 */
	uint64_t seqs;         /* the cap on running sequences the engine
				  derives from its pool (SGLang's
				  max_running_requests); 0: the context's */
	double concurrency;    /* sequences of ctx tokens the cache holds
				  before any cap (vLLM's "Maximum
				  concurrency"); else users */
	struct kv_lora_stage lora; /* LoRA slots, taken before the KV
				  budget, and what one adapter costs */
	uint64_t draft_w;      /* speculative decoding, the last stage: the
				  drafter's weight bytes on one rank */
	uint64_t draft_bpt;    /* of bpt, its layers' (spec.h) */
	uint32_t draft_layers; /* those layers */
	uint64_t copy;         /* llama.cpp split: what its compute buffer
				  adds to hold a host weight it copies in
				  (fit_split); else 0 */
	uint64_t vision_w;     /* the first stage with in->images: the
				  vision tower's weight bytes on one rank
				  (vision.h); 0 where `weights` holds them */
	uint64_t encoder;      /* the encoder outputs the engine holds
				  while it measures its memory */
	uint64_t encoder_items; /* of those, images (or audio clips) */
	uint64_t encoder_peak; /* the vision tower's activation peak while
				  the profile encodes them (kv_vision_peak) */
	uint64_t audio_w;      /* the first stage with in->audio_s: the
				  audio tower's weight bytes on one rank
				  (audio.h); 0 where `weights` holds them */
	uint32_t groups;       /* data-parallel groups whose tokens reach
				  this rank's experts (ep.h); 0: 1 */
	/* with groups or experts split (kv_ep_on), the stage's parameters
	 * and stored bytes by how they are split (kv_ep_split: by group, by
	 * stage, whole), and its routed experts' */
	uint64_t ep_params[3], ep_stored[3];
	uint64_t routed_stored;
};

/*
 * What an engine sizes its own way; a NULL hook is the generic rule.
 * Those called before a model is known (kv_server_batch, kv_server_frac)
 * see c->in->m NULL.
 *   sched:   the step's defaults on the GPU, into c->batched, c->seqs and
 *            c->block (set beforehand from the row; the options given
 *            replace them after)
 *   frac:    the default fraction of c->in->mem under c->in's ranks
 *            (NULL: the row's frac)
 *   runtime: the memory the engine keeps for its own work (NULL: none)
 *   window:  the tokens a layer of window g->window keeps per sequence
 *            (0: the whole context) and adds once to the stage (*once;
 *            NULL hook: the window itself)
 *   pools:   after the stage's memory is known, the engine's pools:
 *            users, whole, tokens, seq, shared (and the rest it knows)
 *            of s; NULL: one pool of every layer
 */
struct kv_server_ops {
	void (*sched)(struct fit_ctx *c);
	double (*frac)(const struct fit_ctx *c);
	struct kv_runtime (*runtime)(const struct fit_ctx *c);
	uint64_t (*window)(const struct fit_ctx *c, const struct kv_geom *g,
			   uint64_t *once);
	int (*pools)(const struct fit_ctx *c, struct fit_stage *s, char *err);
};

/* The rows, each in its engine's file. */
extern const struct kv_server kv_server_ideal, kv_server_vllm,
	kv_server_vllm_0_27, kv_server_sglang, kv_server_trtllm,
	kv_server_llamacpp;

/* Whether the GPU's name holds one of the NULL-ended names (case aside). */
bool server_gpu_is(const char *gpu, const char *const *names);

/* A Blackwell data-centre GPU (SM100 family), told by its name. */
bool server_sm100(const char *gpu);

/* Whether the model's model_type is one of the NULL-ended types. */
bool server_type_is(const struct kv_model *m, const char *const *types);

/* Whether the config's architectures[0] is one of the NULL-ended class
 * names; where it names none, whether its model_type is one of types. */
bool server_arch_is(const struct kv_model *m, const char *const *archs,
		    const char *const *types);

/* in's counts, where it carries those of its model and format; else
 * NULL (each use derives them) (stage.c). */
const struct kv_params_memo *fit_counted(const struct kv_fit_in *in);

/* acc += a * b, checked: 0 or KV_ERANGE. */
static inline int fit_mac(uint64_t *acc, uint64_t a, uint64_t b)
{
	uint64_t t;
	return kv_mul(a, b, &t) || kv_add(*acc, t, acc) ? KV_ERANGE : 0;
}

/* Counts stage s's layers [s->first, s->first + s->n) on one rank: their
 * parameters, weights, KV and FLOPs, with the embedding where `first`
 * and the head where `last` (stage.c). Returns 0 or KV_E* (err filled for
 * a layout that cannot be kept). */
int fit_stage_count(const struct fit_ctx *c, struct fit_stage *s, bool first,
		    bool last, char *err);

/* Stage s's budget under the engine's rules (its runtime memory and
 * s->copy, weights, fraction), then the sequences it holds (stage.c). */
int fit_stage_budget(const struct fit_ctx *c, struct fit_stage *s, char *err);

/* Bytes of `params` parameters of the model as a stage's weights count
 * them (shared out of --weights, as stored, or params x the weights'
 * format), `stored` being their bytes as the checkpoint stores them; on
 * one rank (stage.c). Returns 0 or KV_E*. */
int fit_part_bytes(const struct fit_ctx *c, uint64_t params, uint64_t stored,
		   uint64_t *out);

/* Layer i's parameter counts, from in's memo where it has one (stage.c). */
int fit_layer_params(const struct fit_ctx *c, uint32_t i, struct kv_params *p);

/* llama.cpp's split (split.c): its host stage h (the embedding, the
 * layers -ngl leaves in host memory, the head unless -ngl passes the
 * layers) and GPU stage g, what the rules move between them, and g's
 * budget; *sp's placement and host budget. Returns 0 or KV_E*. */
int fit_split(const struct fit_ctx *c, struct fit_stage *h,
	      struct fit_stage *g, struct kv_split *sp, char *err);

/* The split's step (split.c): fh, the host stage's step as step() counts
 * it, into sp's step fields and then added into f (the GPU stage's
 * step), and the step's time. */
void fit_split_step(const struct fit_ctx *c, const struct kv_fit *fh,
		    struct kv_fit *f);

/* llama.cpp's placement (server_llamacpp.c): whether slot runs on the GPU
 * under -ngl gpu_layers (0 the input, 1 + i layer i, n_layers + 1 the
 * output); its host compute buffer; and what its GPU compute buffer
 * adds to copy a host weight of `largest` bytes in. */
bool llamacpp_slot_gpu(uint32_t slot, uint32_t n_layers, uint32_t gpu_layers);
uint64_t llamacpp_host_compute(const struct fit_ctx *c);
uint64_t llamacpp_gpu_copy(const struct fit_ctx *c, uint64_t largest);

/* A forward pass of `tokens` tokens at its peak, on one rank (fit.c). */
uint64_t fit_forward_bytes(const struct fit_ctx *c, uint64_t tokens);

/* Layer i's geometry and the bytes a token takes in it on one rank;
 * false where it keeps nothing (no attention, or an error). */
bool fit_layer_bytes(const struct fit_ctx *c, uint32_t i, struct kv_geom *g,
		     uint64_t *tb);

/* The Mamba state bytes of stage s's layers, per sequence. */
uint64_t fit_stage_state(const struct fit_ctx *c, const struct fit_stage *s);

static inline uint64_t fit_round_up(uint64_t v, uint64_t to)
{
	return to > 1 && v % to ? v + (to - v % to) : v;
}

static inline uint64_t fit_cdiv(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* a * b / c without overflow for c > 0 and a * b / c < 2^64. */
static inline uint64_t fit_muldiv(uint64_t a, uint64_t b, uint64_t c)
{
	return (uint64_t)((unsigned __int128)a * b / c);
}

#endif
