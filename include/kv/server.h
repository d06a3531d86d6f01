/*
 * server.h - the serving engines whose KV rules kvfit follows, as a table:
 * one row per engine and release of its rules (vLLM 0.28, and 0.27 where a
 * user runs it), with hooks where an engine sizes something its own way.
 * Here an engine that serves is a "server"; the decode loop of engine.h is
 * the engine.
 */
#ifndef KV_SERVER_H
#define KV_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "dtype.h"
#include "eff.h"
#include "layout.h"

/* The serving engines kvfit knows (kvfit(1), ENGINES). */
enum kv_server_kind {
	KV_SERVER_IDEAL,    /* exact bytes, no pages, no engine fraction */
	KV_SERVER_VLLM,     /* gpu_memory_utilization of total memory */
	KV_SERVER_SGLANG,   /* mem_fraction_static of the memory free at
			       start */
	KV_SERVER_TRTLLM,   /* free_gpu_memory_fraction of what is free */
	KV_SERVER_LLAMACPP, /* n_ctx cells padded to 256, no fraction */
	KV_SERVER_KINDS
};

struct kv_server_ops; /* the hooks, in libkv (server_int.h) */
struct kv_lora_rules;    /* lora.h */
struct kv_offload_rules; /* offload.h */

/* One engine's rules as one release of it has them. */
struct kv_server {
	enum kv_server_kind kind;
	const char *name;     /* "vllm": --engine's word, the engine column */
	const char *label;    /* what its users call it, "vLLM" */
	const char *release;  /* the release its rules are read from ("0.28");
				 NULL: none (ideal) */
	bool older;           /* an earlier release's rules, named
				 name@release; --engine NAME and all take
				 the newest */
	double frac;          /* default fraction of memory (0: none) */
	bool of_free;         /* frac of the memory free after weights,
				 not of the total */
	uint64_t startup;     /* bytes taken before the engine measures
				 the memory its fraction applies to (a
				 CUDA context), 0 none */
	uint64_t block;       /* tokens per page */
	uint64_t block_mla;   /* tokens per page for an MLA model */
	uint64_t ctx_pad;     /* context rounded up to this many tokens */
	uint64_t batched;     /* tokens a step schedules by default */
	uint64_t seqs;        /* sequences that may run at once by default;
				 0 no cap */
	uint64_t seqs_max;    /* the most it can run at all (a
				 --max-num-seqs beyond is refused); 0 none */
	uint32_t formats;     /* KV formats it keeps: bit 1 << kv_dtype */
	enum kv_dtype kv_auto; /* its cache when none is asked, for a 16-bit
				* model (KV_DTYPE_COUNT: the weights') */
	enum kv_dtype w_f32;  /* what it runs a float32 checkpoint in
				 (KV_DTYPE_COUNT: float32) */
	enum kv_state state;  /* how it keeps a recurrent layer's state */
	bool kv_apart;        /* K and V may be kept in formats of their
				 own (else one cache tensor of one dtype) */
	bool by_layers;       /* splits a model over GPUs by layers only:
				 no tensor parallelism */
	bool start_check;     /* will not start unless one request of the
				 whole context fits (vLLM's
				 _check_enough_kv_cache_memory) */
	bool prefill_alone;   /* a prompt's chunk runs in a step of its own,
				 the running decodes paused (SGLang, whose
				 --enable-mixed-chunk is off by default);
				 else the step carries them */
	enum kv_kernels kernels; /* its attention's kernels, for their
				   measured efficiencies */
	bool window_list;     /* sizes its pools by a list of attention
				 windows when one is given (TensorRT-LLM's
				 max_attention_window) */
	bool whole_prompt;    /* a prompt runs in one step and one longer
				 than the batched tokens is refused
				 (TensorRT-LLM, whose enable_chunked_prefill
				 is off by default); else it is chunked */
	const struct kv_server_ops *ops; /* never NULL */
	const void *own;      /* what its hooks read of this release (a
				 struct of the engine's file), or NULL */
	const struct kv_lora_rules *lora; /* its LoRA slots; NULL: not
				 modelled */
	const struct kv_offload_rules *offload; /* its host tier of KV;
				 NULL: none */
	bool vision;          /* models a request's images (vision.h): the
				 tower's weights, the image tokens */
	bool audio;           /* models a request's audio (audio.h): the
				 tower's weights, the audio tokens */
	bool encoder_profile; /* holds the encoder outputs of its profile
				 run when it measures its memory (vLLM's
				 profile_run) */
};

/* The newest rules of engine k; NULL out of range. */
const struct kv_server *kv_server_get(enum kv_server_kind k);

/* The i-th row of the table (the newest rules first, then older
 * releases); NULL past the last. */
const struct kv_server *kv_server_at(size_t i);

/* Looks an engine up by name ("vllm", "trt-llm", "llama.cpp", ...), with
 * "@RELEASE" for an older release's rules ("vllm@0.27"). Returns 0,
 * KV_EINVAL for an unknown name, or KV_EUNSUP for a known name at a
 * release whose rules are not kept (*out: its newest rules then). */
int kv_server_parse(const char *s, const struct kv_server **out);

/* The releases of k's rules, "0.28 (newest), 0.27", into buf (n bytes);
 * returns buf. */
char *kv_server_releases(enum kv_server_kind k, char *buf, size_t n);

/* The rules a row follows, "vllm 0.28" ("ideal" alone), into buf (n
 * bytes); returns buf. */
char *kv_server_rules(const struct kv_server *s, char *buf, size_t n);

/* Whether s keeps a cache in format t. */
bool kv_server_stores(const struct kv_server *s, enum kv_dtype t);

/* The formats s keeps, "f32, f16, ...", into buf (n bytes); returns buf. */
char *kv_server_formats(const struct kv_server *s, char *buf, size_t n);

/* What s runs a model of dtype `model` in when no format is asked: for
 * its weights, a float32 checkpoint in 16 bits (vLLM, SGLang and
 * TensorRT-LLM in bf16, a GGUF in f16); for m's cache, llama.cpp's f16
 * whatever the model, else fp8 where m's checkpoint declares an fp8 cache
 * (vLLM's resolve_kv_cache_dtype_string, SGLang's
 * configure_kv_cache_dtype and TensorRT-LLM's kv_cache_quant_algo all
 * take it for auto), else the weights'. The ideal engine keeps the
 * model's. */
enum kv_dtype kv_server_weights_dtype(const struct kv_server *s,
				      enum kv_dtype model);
enum kv_dtype kv_server_kv_dtype(const struct kv_server *s,
				 const struct kv_model *m);

/* s's default fraction of a GPU of `mem` bytes under tp x pp ranks for a
 * model whose attention is latent (mla) or not: vLLM's
 * gpu_memory_utilization, TensorRT-LLM's free_gpu_memory_fraction,
 * SGLang's mem_fraction_static (derived from the GPU's memory); 0 none. */
double kv_server_frac(const struct kv_server *s, uint64_t mem, uint32_t tp,
		      uint32_t pp, bool mla);

/* s's scheduler defaults on a GPU of `mem` bytes named `gpu` (NULL
 * unknown): the tokens a step schedules and the sequences that may run
 * at once (0: no cap of its own before its pool is sized). */
void kv_server_batch(const struct kv_server *s, uint64_t mem, const char *gpu,
		     uint64_t *tokens, uint64_t *seqs);

#endif
