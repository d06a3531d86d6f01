/*
 * lora.h - the LoRA adapters a serving engine makes room for beside the
 * weights: the slots it preallocates, for every adapted matrix of every
 * layer, max_loras adapters at the largest rank (taken before its KV
 * budget, so fewer sequences fit); the cache of whole adapters it keeps in
 * host memory; and what a step reads and computes of the adapters it
 * runs. Which matrices an engine adapts, and how it shapes and splits
 * their slots, are its rules (struct kv_lora_rules, on its row of
 * server.h); the arithmetic is here. kvfit(1), LORA, derives each term.
 */
#ifndef KV_LORA_H
#define KV_LORA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fit.h"

/* The matrices an adapter may adapt, by what they do in a layer (an
 * engine's names for them: kv_lora_modules_parse). */
enum kv_lora_module {
	KV_LORA_QKV = 1 << 0,     /* q, k, v (one packed matrix) */
	KV_LORA_O = 1 << 1,       /* attention's output */
	KV_LORA_GATE_UP = 1 << 2, /* the MLP's gate and up (one packed) */
	KV_LORA_DOWN = 1 << 3,    /* the MLP's down */
	KV_LORA_EXPERTS = 1 << 4, /* a MoE layer's routed experts */
	KV_LORA_ROUTER = 1 << 5,  /* a MoE layer's router */
	KV_LORA_EMBED = 1 << 6,   /* the input embedding */
	KV_LORA_HEAD = 1 << 7,    /* the output head */
};

/* What kvfit is asked (--max-loras, --max-lora-rank, --max-cpu-loras,
 * --lora-target-modules); 0 is the engine's default. */
struct kv_lora {
	uint64_t max_loras; /* adapters one batch holds (vLLM's max_loras,
			       SGLang's max_loras_per_batch) */
	uint32_t rank;      /* the largest rank (max_lora_rank) */
	uint64_t cpu_loras; /* whole adapters kept in host memory (vLLM's
			       max_cpu_loras, SGLang's max_loaded_loras) */
	unsigned modules;   /* KV_LORA_* adapted; 0: the engine's default */
};

/* An engine's LoRA rules, read from its code (on its row of server.h;
 * NULL there: its LoRA is not modelled). */
struct kv_lora_rules {
	uint64_t max_loras;      /* its default adapters a batch */
	uint32_t rank;           /* its default rank; 0: none (the rank
				    comes from the adapters it loads) */
	const uint32_t *ranks;   /* the ranks it takes (nranks); NULL:
				    any */
	size_t nranks;
	unsigned modules;        /* what it adapts by default in every
				    model */
	unsigned arch_modules;   /* and in the models below */
	const char *const *archs, *const *types; /* NULL-ended: the
				    architectures (or model_types) whose
				    class adds arch_modules */
	unsigned names;          /* the modules it has names for (others
				    refused) */
	bool experts_by_mlp;     /* gate_up and down take a MoE layer's
				    experts too, and their slots are kept
				    on every layer of a MoE model
				    (SGLang's mem_pool) */
	bool head_split;         /* the head's B split over tp (SGLang);
				    else whole on every rank */
	bool cpu_at_least;       /* refuses fewer cached adapters than
				    max_loras (vLLM's LoRAConfig) */
	uint64_t max_vocab;      /* the largest vocabulary it adapts the
				    head of; 0: any */
};

/* One pipeline stage's adapters on one tensor-parallel rank. */
struct kv_lora_stage {
	uint64_t slots;   /* bytes of the slots: max_loras adapters */
	uint64_t adapter; /* of one adapter's slot, bytes */
	uint64_t lookup;  /* of adapter: the embedding's A, a table a step
			     looks rows up in */
	double flops;     /* FLOPs one token costs of one adapter: the
			     shrink and expand of each adapted matrix (the
			     experts its token is routed to) */
	double head_flops; /* of one sampled row, the head's */
};

/* Whether in's engine refuses its adapters (in->lora; false without
 * them): no LoRA of its modelled (TensorRT-LLM, llama.cpp), a rank it
 * does not take, no rank where it has no default, a module it has no
 * name for, fewer cached adapters than max_loras where it refuses them,
 * or layers whose matrices are not modelled (MLA, state-space mixers,
 * cross attention, fused projections of other families). True with the
 * reason in err (KV_ERRLEN bytes). */
bool kv_lora_refuses(const struct kv_fit_in *in, char *err);

/* The adapters in->lora asks, with the engine's defaults: adapters a
 * batch, rank, adapters cached in host memory. */
uint64_t kv_lora_max_loras(const struct kv_fit_in *in);
uint32_t kv_lora_rank(const struct kv_fit_in *in);
uint64_t kv_lora_cpu_loras(const struct kv_fit_in *in);

/* The slots of layers [first, first + n) on one tensor-parallel rank, the
 * input embedding's where has_first, the head's where has_last, into
 * *out (zeros without in->lora). Returns 0 or KV_ERANGE. */
int kv_lora_stage(const struct kv_fit_in *in, uint32_t first, uint32_t n,
		  bool has_first, bool has_last, struct kv_lora_stage *out);

/* The host memory of the adapters cached whole (unsplit) in each GPU's
 * worker: cpu_loras adapters at the rank, every layer; 0 without
 * in->lora. */
uint64_t kv_lora_host_bytes(const struct kv_fit_in *in);

/* A list of module names ("q_proj,v_proj", "all") as KV_LORA_* bits
 * into *out (0 for "all": the engine's every module). Names: q_proj,
 * k_proj, v_proj, qkv_proj, o_proj, gate_proj, up_proj, gate_up_proj,
 * down_proj, experts, gate (a MoE router), embed_tokens, lm_head. Returns
 * 0, or KV_EINVAL with the first unknown name into bad (n bytes). */
int kv_lora_modules_parse(const char *s, unsigned *out, char *bad, size_t n);

/* The names of modules (KV_LORA_* bits), "qkv_proj,o_proj,...", into buf
 * (n bytes); returns buf. */
char *kv_lora_modules_name(unsigned modules, char *buf, size_t n);

#endif
