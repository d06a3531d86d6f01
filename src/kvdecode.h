/*
 * kvdecode.h - what kvdecode's two files share: its options, and the
 * reports kvdecode_report.c prints (the summary for people and for
 * scripts, the dry run's plan, --lengths and --prefix-reuse).
 */
#ifndef KVDECODE_H
#define KVDECODE_H

#include <stdbool.h>
#include <stdio.h>

#include "kv/decode.h"
#include "kv/engine.h"
#include "kv/paged.h"
#include "kv/quality.h"
#include "kv/safetensors.h"
#include "kv/tokenizer.h"

struct args {
	uint64_t prompt, gen, users, layers, vocab, kv_heads, seed, top_k;
	uint64_t threads, mla, mla_rope;
	double temperature, tol, logit_scale;
	enum kv_dtype k_dtype, v_dtype;
	bool with, without; /* modes run */
	bool mode_given;    /* --cache was given */
	bool json, header, dry_run;
	const char *summary, *config;
	FILE *summary_f; /* opened before the run, so a bad path fails first */
	uint64_t block_size, pool_blocks;
	bool block_set, users_set;
	int layout; /* -1 unset, 0 contiguous, 1 paged */
	bool prefix;
	struct kv_lengths len; /* --lengths */
	bool lengths;
	uint32_t *ids;     /* --prompt-ids, a prompt of their count */
	int wdtype;        /* --weights-dtype; -1: the checkpoint's or f32 */
	bool random;       /* --random-weights */
	bool ids_given, prompt_given;
	enum kv_dtype wt;       /* the weights' type the run keeps */
	uint64_t weight_bytes;  /* and their bytes, from the estimate */
	struct kv_st *ckpt; /* the checkpoint beside the config, run */
	const char *text;   /* --prompt TEXT, read by the tokenizer */
	const char *ppl;    /* --ppl FILE */
	int *fmts;          /* --kv-dtype's list (one but with --ppl) */
	size_t nfmts;
	struct kv_tok *tok; /* the tokenizer beside the config, or NULL */
};

/* Whether the run keeps a cache format other than f32. */
static inline bool compact(const struct args *a)
{
	return a->k_dtype != KV_DTYPE_F32 || a->v_dtype != KV_DTYPE_F32;
}

/* The decode loop (kv_decode_run): a row per step, each way; with a
 * tokenizer the first sequence's text after the rows, on stderr. */
int kvdecode_run(const struct args *a, struct kv_engine *e,
		 struct kv_decode_result *r);
/* The summary for people, on stderr; q: the comparison with an f32
 * cache (compact formats). */
void kvdecode_say(const struct args *a, const struct kv_model *m,
		  const struct kv_decode_result *r, const struct kv_quality *q);
/* The summary for scripts: a header and a row in --summary FILE, which
 * this closes. */
int kvdecode_summary(const struct args *a, const struct kv_model *m,
		     const struct kv_decode_result *r,
		     const struct kv_quality *q);
/* --dry-run: what the run would allocate and do, without running it. */
int kvdecode_plan(const struct args *a, const struct kv_model *m,
		  const struct kv_engine_opts *o,
		  const struct kv_engine_size *sz);
/* --lengths: paged blocks against reserved sequences. */
int kvdecode_lengths(const struct args *a, const struct kv_model *m,
		     struct kv_engine_opts *o);
/* --ppl: the text's perplexity with an f32 cache, then each format. */
int kvdecode_ppl(const struct args *a, const struct kv_model *m,
		 const struct kv_engine_opts *o);
/* --prefix-reuse: a script of requests over one pool. */
int kvdecode_prefix(const struct args *a, struct kv_engine *e);

#endif
