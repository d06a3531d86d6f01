/*
 * spec.h - speculative decoding as kvfit plans it: a drafter (a small
 * draft model, an EAGLE or EAGLE-3 head, the target's own
 * multi-token-prediction layers, or n-gram lookup with no weights) guesses
 * K tokens, and one verify step of the target checks them all, so a round
 * gives several tokens for one pass over the target's weights.
 *
 * What it costs in memory differs by engine, and is decided here from each
 * engine's code (kvfit(1), SPECULATIVE DECODING): the drafter's weights
 * beside the target's, its layers' cache in the same pool, the tokens a
 * sequence holds ahead of its context, SGLang's cap on running requests.
 * What it costs in time is serve.h's: a round is the drafter's passes and
 * the verify step, and gives the expected tokens of kv_spec_tokens().
 */
#ifndef KV_SPEC_H
#define KV_SPEC_H

#include "fit.h"

/* How the drafts are made (kvfit --spec-method). */
enum kv_spec_method {
	KV_SPEC_NONE,
	KV_SPEC_DRAFT,  /* a draft model of the target's vocabulary */
	KV_SPEC_EAGLE,  /* an EAGLE(-2) head: decoder layers and a 2h -> h
			   fc over the target's last hidden state, the
			   target's embedding and head */
	KV_SPEC_EAGLE3, /* an EAGLE-3 head: its first layer's q/k/v over 2h,
			   a 3h -> h fc fusing three of the target's hidden
			   states, a head of its own draft_vocab_size */
	KV_SPEC_MTP,    /* the target's own multi-token-prediction layers */
	KV_SPEC_NGRAM,  /* drafts looked up in the tokens so far: no
			   weights, no cache */
};

/* The most tokens a round drafts (--spec-tokens): llama.cpp's largest
 * example drafts 64 (docs/speculative.md, --draft-max 64); no engine
 * verifies more in one step. */
#define KV_SPEC_MAX_TOKENS 64

/* One setting of speculative decoding; NULL or method NONE is none. */
struct kv_spec {
	enum kv_spec_method method;
	const struct kv_model *draft; /* DRAFT, EAGLE, EAGLE3: the --draft
					 config; else NULL */
	uint32_t k;          /* tokens drafted a round, 1 to
				KV_SPEC_MAX_TOKENS */
	double accept;       /* the chance each drafted token is accepted
				after its predecessors were, (0, 1]; 0:
				not given */
	double accept_len;   /* tokens a round gives, measured (the mean
				acceptance length engines print, the
				verified bonus token included), [1, k + 1];
				0: not given */
};

/* "draft", "eagle", "eagle3", "mtp", "ngram": 0, else KV_EINVAL. */
int kv_spec_method_parse(const char *s, enum kv_spec_method *out);

/* The method's name in engine k's flags: vLLM's speculative config's
 * method, SGLang's --speculative-algorithm; NULL where k has none (a
 * method llama.cpp runs is named by its flags alone). kv_spec_method_parse
 * reads these too. */
const char *kv_spec_engine_method(enum kv_server_kind k,
				  enum kv_spec_method m);

/* vLLM's --speculative-config JSON ({"method": "eagle3", "model": PATH,
 * "num_speculative_tokens": 3}; a model alone is a draft model) into s's
 * method and k, and its model into model (n bytes; "" without one).
 * Returns 0, or KV_EINVAL with err naming the field. */
int kv_spec_vllm_parse(const char *json, struct kv_spec *s, char *model,
		       size_t n, char *err);

/* The method's name as --spec-method takes it ("" for NONE). */
const char *kv_spec_method_name(enum kv_spec_method m);

/* Whether s drafts at all (not NULL, not NONE). */
bool kv_spec_on(const struct kv_spec *s);

/* The tokens a round gives on average: accept_len where measured, else
 * for a chain of k drafts each accepted with chance A after the ones
 * before it, and the verify step's own token,
 * 1 + A + A^2 + ... + A^k = (1 - A^(k + 1)) / (1 - A) (k + 1 at A = 1);
 * NAN where neither is given; 1 without speculation. */
double kv_spec_tokens(const struct kv_spec *s);

/* Checks s against the target model m, its options alone: a method that
 * needs --draft and has none, or has one it does not take; a draft whose
 * vocabulary differs from the target's (vLLM's
 * verify_equal_vocab_size_if_draft_model; an EAGLE head reads the
 * target's embedding); --spec-method mtp on a model without MTP layers;
 * k out of range; an acceptance out of range. 0, or KV_EINVAL with err
 * naming m and the option. */
int kv_spec_check(const struct kv_spec *s, const struct kv_model *m,
		  char *err);

/* Whether in's engine does not run in->spec's method, or kvfit does not
 * model it there, or kv_spec_check refuses it: true with the reason in
 * err (the engine named). */
bool kv_spec_refuses(const struct kv_fit_in *in, char *err);

/* The drafter's weights on each tensor-parallel rank of in (the last
 * pipeline stage), bytes, as the engine loads them beside the target's:
 * a draft model whole; an EAGLE head's layers and fc, the target's
 * embedding and head shared; an EAGLE-3 head's layers, fc and own head;
 * the target's MTP layers. 0 without a drafter. Returns 0 or KV_ERANGE
 * with err filled. */
int kv_spec_weights(const struct kv_fit_in *in, uint64_t *bytes, char *err);

/* The drafter's layers that keep a cache in in's engine's pool (0 for
 * n-gram). */
uint32_t kv_spec_layers(const struct kv_fit_in *in);

/* The bytes a token takes in drafter layer j (< kv_spec_layers) on one
 * rank under o (the row's formats and tp): the drafter's own geometry (an
 * MTP layer is the target's last attention layer). Returns 0 or as
 * kv_layer_geom with err filled. */
int kv_spec_layer_bytes(const struct kv_fit_in *in, const struct kv_opts *o,
			uint32_t j, uint64_t *tb, char *err);

/* What the drafter adds to each token's bytes on a stage whose own
 * attention layers (n of them) take cell bytes a token: the sum of its
 * layers' (vLLM, TensorRT-LLM, llama.cpp, ideal), or SGLang's
 * int(cell x (1 + layers / n)) - cell, its pool sized as if each draft
 * layer were one of the target's (pool_configurator.py). */
int kv_spec_token_bytes(const struct kv_fit_in *in, const struct kv_opts *o,
			uint64_t cell, uint32_t n, uint64_t *out, char *err);

/* Tokens each sequence holds past its context for the drafts in flight:
 * vLLM's num_lookahead_tokens, k (not for n-gram); SGLang's two
 * allocations of max(k, k + 1) outstanding under its overlap scheduler,
 * 2 (k + 1); TensorRT-LLM's one-model num_extra_kv_tokens, k - 1 (EAGLE-3,
 * MTP); else 0. */
uint64_t kv_spec_lookahead(const struct kv_fit_in *in);

/* The engine's own cap on running sequences with speculation on, where
 * none is given: SGLang's max_running_requests of 48; else 0. */
uint64_t kv_spec_max_seqs(const struct kv_fit_in *in);

/*
 * The drafter as a model the time model can run (serve.h): a draft model
 * or an EAGLE head as its config has it (an EAGLE-3 head with its own
 * draft_vocab_size rows of output head), or the target's MTP layer as a
 * one-layer model of the target's (*own, filled here, is that model: it
 * shares the target's arrays, nothing to free). Into *out a row of it on
 * in's engine and ranks, in's memory, its counts its own; *extra_bytes
 * and *extra_flops are what one token's pass adds beyond that model on one
 * rank: the fc (each rank holds it whole), EAGLE-3's wider first q/k/v,
 * MTP's 2h -> h projection. false for n-gram (no drafter).
 */
bool kv_spec_drafter(const struct kv_fit_in *in, struct kv_model *own,
		     struct kv_fit_in *out, double *extra_bytes,
		     double *extra_flops);

#endif
