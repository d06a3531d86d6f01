/*
 * quality.h - what a compact cache format costs in answers: the next-token
 * distributions of an engine whose cache keeps K and V in some format,
 * compared step by step with those of the same engine over an f32 cache,
 * on the same seed and prompt. The compact run is teacher-forced: it is
 * fed the f32 run's tokens, so both see the same text at every step and
 * the comparison stays aligned after a first disagreement.
 *
 * Metrics per compared distribution (one per sequence per step):
 * top-1 agreement (the same largest logit), the largest and the mean
 * absolute logit difference, and the KL divergence KL(P_f32 || P_test) of
 * the softmax distributions, in nats.
 */
#ifndef KV_QUALITY_H
#define KV_QUALITY_H

#include "engine.h"

/* Sums over the compared distributions. */
struct kv_quality {
	uint64_t steps;  /* distributions compared */
	uint64_t agree;  /* of those, with the same top-1 token */
	uint64_t logits; /* logits compared (steps x vocab) */
	double max_abs;  /* largest |logit difference| */
	double sum_abs;  /* sum of |logit differences| */
	double sum_kl;   /* sum of KL divergences, nats */
};

/* Index of the largest of n values (the lowest on ties). */
uint64_t kv_argmax(const float *x, uint64_t n);

/* KL(softmax(ref) || softmax(test)) over n logits, in nats (>= 0),
 * computed in double. */
double kv_kl_div(const float *ref, const float *test, uint64_t n);

/* Adds the comparison of one distribution (n logits each) to q. */
void kv_quality_add(struct kv_quality *q, const float *ref,
		    const float *test, uint64_t n);

/* The figures: fraction agreeing, mean |difference| per logit, mean KL
 * per distribution (0 when nothing was compared). */
double kv_quality_top1(const struct kv_quality *q);
double kv_quality_mean_abs(const struct kv_quality *q);
double kv_quality_mean_kl(const struct kv_quality *q);

/* One step of a comparison run, per sequence. */
struct kv_quality_step {
	uint32_t token_ref;  /* the f32 run's token, fed to both */
	uint32_t token_test; /* the token the test run would pick */
	double max_abs;      /* largest |logit difference| of the step */
	double kl;           /* KL divergence of the step */
};

/*
 * Runs the comparison: engine options o (with its cache formats, logit
 * scale, users, threads; max_ctx and max_chunk are set here) over an f32
 * cache and then over o's formats, one engine at a time, `prompt` random
 * tokens of `seed` then `gen` steps; tokens are chosen from the f32 run's
 * logits by kv_sample() with temperature and top_k. Fills *q and, when
 * steps is not NULL, steps[(step, user)] for gen x users entries;
 * *ms_test gets the test run's milliseconds of its decode steps (prompt
 * excluded). Allocates the reference logits (users x gen x vocab floats)
 * and frees all before returning. Returns 0 or a KV_E* code with err.
 */
int kv_quality_run(const struct kv_model *m, const struct kv_engine_opts *o,
		   uint64_t prompt, uint64_t gen, double temperature,
		   uint64_t top_k, uint64_t seed, struct kv_quality *q,
		   struct kv_quality_step *steps, double *ms_test, char *err);

/* --- perplexity over a text --- */

/* What one run over a text found. */
struct kv_ppl {
	uint64_t tokens;     /* predictions scored: n - 1 */
	double nll;          /* sum of -ln p(the next token), nats */
	struct kv_quality q; /* against the reference run's logits; empty
			      * without one */
	double ms;           /* the run's forward passes */
};

/* exp(nll / tokens): the text's perplexity (0 when nothing scored). */
double kv_ppl_value(const struct kv_ppl *p);

/* o as a perplexity run over n tokens has it: one sequence of n
 * positions, a token at a time, with the cache. */
struct kv_engine_opts kv_ppl_opts(const struct kv_engine_opts *o, uint64_t n);

/* Bytes kv_ppl_run() allocates for a text of n tokens on m under o:
 * the engine's, and the reference logits it keeps when asked to. */
int kv_ppl_estimate(const struct kv_model *m, const struct kv_engine_opts *o,
		    uint64_t n, bool keep, uint64_t *bytes, char *err);

/*
 * Runs m under o (users, context and chunk set here: one sequence, n
 * positions, a token at a time with the cache) over ids[0 .. n), n >= 2,
 * teacher forced: each position's logits score the next token. With ref
 * ((n - 1) x vocab, a reference run's kept logits), each step is also
 * compared with the reference's; with keep ((n - 1) x vocab), this run's
 * logits are kept there. Returns 0, KV_EINVAL for an id not below the
 * model's vocabulary (the last one too, which is only scored), or the
 * engine's KV_E* with err.
 */
int kv_ppl_run(const struct kv_model *m, const struct kv_engine_opts *o,
	       const uint32_t *ids, uint64_t n, const float *ref, float *keep,
	       struct kv_ppl *out, char *err);

#endif
