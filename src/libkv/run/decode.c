/*
 * decode.c - the decode session (decode.h): two copies of each
 * sequence's text, one per way, so that each way goes on from its own
 * draws; the chunk a pass reads is copied out of the text, and each way's
 * logits kept for the comparison. Its buffers are kv_decode_loop_bytes()'s;
 * the articles' token passes (kv_decode_passes()) and the prefix-reuse
 * script (kv_prefix_reuse()) are here too. So is what kvdecode prints
 * beside the steps, that a tool should not work out: a whole run's sums
 * and verdict (kv_decode_run), the engine and bytes a run takes, a dry
 * run's numbers, and the --lengths report over drawn lengths.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/bench.h"
#include "kv/decode.h"
#include "kv/layout.h"
#include "kv/paged.h"
#include "kv/quality.h"
#include "kv/safetensors.h"

struct kv_decode {
	struct kv_engine *e;
	struct kv_decode_opts o;
	uint64_t vocab, users, cap; /* cap: text per sequence */
	uint64_t step;              /* steps done */
	uint32_t *text[2], *chunk, *next[2];
	float *logits[2], *work;
};

int kv_decode_passes(uint64_t prompt, uint64_t gen, bool cache,
		     uint64_t *out)
{
	int e;
	if (gen == 0) {
		*out = 0;
		return 0;
	}
	if (cache) /* the prompt once, then each new token but the last */
		return kv_add(prompt, gen - 1, out);
	/* sum of prompt + i for i < gen = gen prompt + gen (gen - 1) / 2 */
	uint64_t a, b, half = gen % 2 ? (gen - 1) / 2 : gen / 2;
	uint64_t other = gen % 2 ? gen : gen - 1;
	if ((e = kv_mul(gen, prompt, &a)) || (e = kv_mul(half, other, &b)))
		return e;
	return kv_add(a, b, out);
}

int kv_decode_loop_bytes(uint64_t users, uint64_t prompt, uint64_t gen,
			 uint64_t vocab, bool prefix, uint64_t *out)
{
	uint64_t cells, rows, logits;
	int e;
	/* rows of logits: two a user and a work row, and with prefix reuse
	 * the cold and current logits of every step */
	if ((e = kv_mul(users, 2, &rows)) || (e = kv_add(rows, 1, &rows)) ||
	    (prefix && (e = kv_add(rows, 2 * gen, &rows))) ||
	    (e = kv_mul(rows, vocab, &logits)) ||
	    (e = kv_mul(logits, sizeof(float), &logits)))
		return e;
	/* two texts and a chunk of tokens a user, and the token cells */
	if ((e = kv_add(prompt, gen, &cells)) ||
	    (e = kv_mul(cells, users, &cells)) ||
	    (e = kv_mul(cells, 3 * sizeof(uint32_t), &cells)) ||
	    (e = kv_add(cells, logits, out)))
		return e;
	return kv_add(*out, users * 11 + 1, out);
}

int kv_decode_open(struct kv_engine *e, const struct kv_decode_opts *o,
		   struct kv_decode **out)
{
	*out = NULL;
	if ((!o->cache && !o->nocache) || !o->prompt || !o->gen ||
	    o->prompt > UINT64_MAX / 2 || o->gen > UINT64_MAX / 2)
		return KV_EINVAL;
	struct kv_decode *d = calloc(1, sizeof *d);
	if (!d)
		return KV_ENOMEM;
	d->e = e;
	d->o = *o;
	d->vocab = kv_engine_vocab(e);
	d->users = kv_engine_users(e);
	d->cap = o->prompt + o->gen;
	uint64_t U = d->users, v = d->vocab;
	for (int c = 0; c < 2; c++) {
		d->text[c] = calloc(U * d->cap, sizeof(uint32_t));
		d->logits[c] = calloc(U * v, sizeof(float));
		d->next[c] = calloc(U, sizeof(uint32_t));
	}
	d->chunk = calloc(U * d->cap, sizeof(uint32_t));
	d->work = calloc(v, sizeof(float));
	if (!d->text[0] || !d->text[1] || !d->logits[0] || !d->logits[1] ||
	    !d->next[0] || !d->next[1] || !d->chunk || !d->work) {
		kv_decode_close(d);
		return KV_ENOMEM;
	}
	for (uint64_t u = 0; u < U; u++)
		for (uint64_t i = 0; i < o->prompt; i++)
			d->text[0][u * d->cap + i] =
				d->text[1][u * d->cap + i] =
					o->forced ? o->forced[u * d->cap + i]
					: o->prompt_ids
						? o->prompt_ids[i]
						: kv_rand_token(o->seed, u, i,
								v);
	*out = d;
	return 0;
}

int kv_decode_next(struct kv_decode *d, struct kv_decode_step *st)
{
	uint64_t U = d->users, v = d->vocab, cap = d->cap;
	uint64_t step = d->step + 1, len = d->o.prompt + step - 1;
	*st = (struct kv_decode_step){step, len, {NAN, NAN}, {NULL, NULL},
				      NAN, true};
	if (d->step >= d->o.gen)
		return 0;
	for (int c = 0; c < 2; c++) {
		if (!(c ? d->o.cache : d->o.nocache))
			continue;
		/* with the cache: the prompt, then the newest token;
		 * without: the whole text */
		uint64_t n = c ? (step == 1 ? len : 1) : len;
		uint64_t pos = len - n;
		for (uint64_t u = 0; u < U; u++)
			memcpy(d->chunk + u * n, d->text[c] + u * cap + pos,
			       n * sizeof *d->chunk);
		uint64_t t0 = kv_now_ns();
		int rc = kv_engine_forward(d->e, d->chunk, n, pos, c,
					   d->logits[c]);
		if (rc)
			return rc;
		st->ms[c] = (double)(kv_now_ns() - t0) / 1e6;
		for (uint64_t u = 0; u < U; u++) {
			d->next[c][u] = kv_sample(d->logits[c] + u * v, v,
						  d->o.temperature, d->o.top_k,
						  d->o.seed, u, step, d->work);
			d->text[c][u * cap + len] =
				d->o.forced ? d->o.forced[u * cap + len]
					    : d->next[c][u];
		}
		st->next[c] = d->next[c];
	}
	if (d->o.cache && d->o.nocache) {
		st->max_diff = kv_max_abs_diff(d->logits[0], d->logits[1],
					       U * v);
		st->same = !memcmp(d->next[0], d->next[1],
				   U * sizeof *d->next[0]);
	}
	d->step = step;
	return 1;
}

const float *kv_decode_logits(const struct kv_decode *d, bool cache)
{
	return (cache ? d->o.cache : d->o.nocache) && d->step
		       ? d->logits[cache]
		       : NULL;
}

void kv_decode_close(struct kv_decode *d)
{
	if (!d)
		return;
	for (int c = 0; c < 2; c++) {
		free(d->text[c]);
		free(d->logits[c]);
		free(d->next[c]);
	}
	free(d->chunk);
	free(d->work);
	free(d);
}

int kv_decode_run(struct kv_decode *d,
		  void (*each)(const struct kv_decode_step *st, void *arg),
		  void *arg, struct kv_decode_result *r)
{
	struct kv_decode_step st;
	struct kv_engine *e = d->e;
	int rc;
	*r = (struct kv_decode_result){
		.positions = d->o.prompt + d->o.gen - 1,
		.compared = d->o.cache && d->o.nocache};
	while ((rc = kv_decode_next(d, &st)) == 1) {
		for (int c = 0; c < 2; c++)
			if (st.next[c])
				r->ms[c] += st.ms[c];
		if (r->compared) {
			r->max_diff = st.max_diff > r->max_diff ? st.max_diff
								: r->max_diff;
			if (!r->first_diff && !st.same)
				r->first_diff = st.step;
		}
		r->steps = st.step;
		if (each)
			each(&st, arg);
	}
	r->passes[0] = kv_engine_passes(e, false);
	r->passes[1] = kv_engine_passes(e, true);
	r->kv_per_token = kv_engine_cache_token_bytes(e);
	r->kv_bytes = kv_engine_cache_bytes(e);
	if (kv_engine_block_bytes(e)) {
		struct kv_paged_stats ps;
		kv_engine_paged_stats(e, &ps);
		r->pool = r->kv_bytes / kv_engine_block_bytes(e);
		r->held = ps.held;
	}
	return rc < 0 ? rc : 0;
}

bool kv_decode_differ(const struct kv_decode_result *r, double tol)
{
	return r->compared && (r->first_diff || !(r->max_diff <= tol));
}

double kv_decode_speedup(const struct kv_decode_result *r)
{
	return r->compared && r->ms[1] > 0 ? r->ms[0] / r->ms[1] : NAN;
}

struct kv_engine_opts kv_decode_ask_opts(const struct kv_decode_ask *a)
{
	struct kv_engine_opts o = kv_engine_opts_default();
	o.layers = (uint32_t)a->layers;
	o.vocab = a->vocab;
	o.kv_heads = (uint32_t)a->kv_heads;
	o.mla_rank = (uint32_t)a->mla;
	o.mla_rope = (uint32_t)a->mla_rope;
	o.users = (uint32_t)a->users;
	o.threads = (uint32_t)a->threads;
	o.seed = a->seed;
	o.block_size = (uint32_t)a->block_size;
	o.paged = a->paged;
	o.pool_blocks = a->pool_blocks;
	o.prefix = a->prefix;
	o.k_dtype = a->k_dtype;
	o.v_dtype = a->v_dtype;
	o.logit_scale = (float)a->logit_scale;
	o.ckpt = a->ckpt;
	o.weights_dtype = a->weights_dtype >= 0
				  ? (enum kv_dtype)a->weights_dtype
			  : a->ckpt ? kv_st_weights_dtype(a->ckpt)
				    : KV_DTYPE_F32;
	return o;
}

void kv_decode_engine_opts(struct kv_engine_opts *o, uint64_t prompt,
			   uint64_t gen, bool cache, bool nocache)
{
	o->max_ctx = prompt + gen - 1;
	o->max_chunk = nocache ? o->max_ctx : prompt;
	o->cache = cache || o->prefix;
	if (o->prefix) /* one sequence, prefilled a block at a time */
		o->max_chunk = o->block_size < o->max_ctx ? o->block_size
							  : o->max_ctx;
}

uint32_t kv_decode_block_size(uint64_t prompt, uint64_t gen, bool drawn)
{
	uint64_t fed = prompt + gen - 1;
	return drawn || fed >= 16 ? 16 : fed ? (uint32_t)fed : 1;
}

struct kv_engine_opts kv_decode_compare_opts(const struct kv_engine_opts *o,
					     uint64_t prompt, uint64_t gen,
					     bool f32)
{
	struct kv_engine_opts r = *o;
	r.max_ctx = prompt + gen - 1; /* the last token is not fed */
	r.max_chunk = prompt;
	r.cache = true;
	if (f32)
		r.k_dtype = r.v_dtype = KV_DTYPE_F32;
	return r;
}

int kv_decode_compare_bytes(const struct kv_model *m,
			    const struct kv_engine_opts *o, uint64_t prompt,
			    uint64_t gen, uint64_t *bytes, char *err)
{
	struct kv_engine_size a, b;
	struct kv_engine_opts oa = kv_decode_compare_opts(o, prompt, gen, true);
	struct kv_engine_opts ob = kv_decode_compare_opts(o, prompt, gen, false);
	uint64_t vocab = o->vocab ? o->vocab : m->vocab, ref;
	int e;
	if ((e = kv_engine_estimate(m, &oa, &a, err)) ||
	    (e = kv_engine_estimate(m, &ob, &b, err)))
		return e;
	if (kv_mul(o->users, gen, &ref) || kv_mul(ref, vocab, &ref) ||
	    kv_mul(ref + vocab, sizeof(float), &ref) ||
	    kv_add(a.total > b.total ? a.total : b.total, ref, bytes)) {
		snprintf(err, KV_ERRLEN, "the run's bytes overflow 64 bits");
		return KV_ERANGE;
	}
	return 0;
}

int kv_decode_estimate(const struct kv_model *m,
		       const struct kv_engine_opts *o, uint64_t prompt,
		       uint64_t gen, bool quality, struct kv_decode_size *s,
		       char *err)
{
	uint64_t vocab = o->vocab ? o->vocab : m->vocab;
	int e;
	*s = (struct kv_decode_size){0};
	if ((e = kv_engine_estimate(m, o, &s->engine, err)) ||
	    (quality && (e = kv_decode_compare_bytes(m, o, prompt, gen,
						     &s->quality, err))))
		return e;
	uint64_t run = s->engine.total > s->quality ? s->engine.total
						     : s->quality;
	if (kv_decode_loop_bytes(o->users, prompt, gen, vocab, o->prefix,
				 &s->loop) ||
	    kv_add(run, s->loop, &s->need)) {
		snprintf(err, KV_ERRLEN, "the run's bytes overflow 64 bits");
		return KV_ERANGE;
	}
	return 0;
}

int kv_decode_plan(const struct kv_model *m, const struct kv_engine_opts *o,
		   uint64_t prompt, uint64_t gen, struct kv_decode_plan *p,
		   char *err)
{
	struct kv_model *eff;
	int e;
	*p = (struct kv_decode_plan){0};
	if ((e = kv_engine_model(m, o, &eff, err)))
		return e;
	struct kv_opts ko = kv_opts_default(eff);
	ko.k_dtype = o->k_dtype;
	ko.v_dtype = o->v_dtype;
	e = kv_model_token_bytes(eff, &ko, &p->kv_per_token, err);
	kv_model_free(eff);
	if (e)
		return e;
	for (int c = 0; c < 2; c++)
		if (kv_decode_passes(prompt, gen, c, &p->passes[c]) ||
		    kv_mul(p->passes[c], o->users, &p->passes[c])) {
			snprintf(err, KV_ERRLEN,
				 "token passes overflow 64 bits");
			return KV_ERANGE;
		}
	return 0;
}

int kv_decode_lengths(const struct kv_model *m, struct kv_engine_opts o,
		      const struct kv_lengths *l, uint64_t n, uint64_t seed,
		      bool block_fixed, uint64_t pool_blocks,
		      struct kv_lengths_report *r, char *err)
{
	uint64_t *lens = l->lens;
	if (!lens) {
		if (!(lens = calloc(n ? n : 1, sizeof *lens))) {
			snprintf(err, KV_ERRLEN, "out of memory");
			return KV_ENOMEM;
		}
		for (uint64_t i = 0; i < n; i++)
			lens[i] = kv_paged_draw_length(seed, i, l->lo, l->hi);
	}
	int e = kv_engine_lengths(m, o, lens, n, l->lens ? 0 : l->hi,
				  block_fixed, pool_blocks, r, err);
	if (lens != l->lens)
		free(lens);
	return e;
}

const char *const kv_prefix_names[KV_PREFIX_REQUESTS] = {
	"cold", "warm", "tail", "first", "again"};

/* The prompt of request r: the cold prompt; from its middle on new
 * tokens (tail); its first token changed (first). */
static void prefix_prompt(int r, uint64_t prompt, uint64_t seed, uint64_t v,
			  uint32_t *tok)
{
	for (uint64_t i = 0; i < prompt; i++)
		tok[i] = r == 2 && i >= prompt / 2
				 ? kv_rand_token(seed, 1, i, v)
				 : kv_rand_token(seed, 0, i, v);
	if (r == 3)
		tok[0] = (uint32_t)((tok[0] + 1) % v);
}

int kv_prefix_reuse(struct kv_engine *e, uint64_t prompt, uint64_t gen,
		    double temperature, uint64_t top_k, uint64_t seed,
		    struct kv_prefix_request r[KV_PREFIX_REQUESTS],
		    int *failed)
{
	uint64_t v = kv_engine_vocab(e), P = prompt, G = gen;
	uint32_t *tok = calloc(P, sizeof *tok);
	float *ref = calloc(G * v, sizeof *ref);
	float *lg = calloc(G * v, sizeof *lg);
	float *work = calloc(v, sizeof *work);
	int rc = tok && ref && lg && work ? 0 : KV_ENOMEM;
	*failed = -1;
	for (int q = 0; !rc && q < KV_PREFIX_REQUESTS; q++) {
		struct kv_paged_stats s0, s1;
		struct kv_prefix_request *x = &r[q];
		uint32_t next;
		*x = (struct kv_prefix_request){.identical = -1};
		prefix_prompt(q, P, seed, v, tok);
		kv_engine_paged_stats(e, &s0);
		uint64_t t0 = kv_now_ns();
		rc = kv_engine_prefix_match(e, 0, tok, P, &x->cached);
		if (!rc)
			rc = kv_engine_prefill(e, tok + x->cached,
					       P - x->cached, x->cached, lg);
		uint64_t t1 = kv_now_ns();
		for (uint64_t i = 0; !rc && i < G; i++) {
			next = kv_sample(lg + i * v, v, temperature, top_k,
					 seed, 0, i + 1, work);
			if (i == 0)
				x->first = next;
			if (i + 1 < G)
				rc = kv_engine_forward(e, &next, 1, P + i,
						       true, lg + (i + 1) * v);
		}
		uint64_t t2 = kv_now_ns();
		if (rc) {
			*failed = q;
			break;
		}
		kv_engine_paged_stats(e, &s1);
		x->ms_first = (double)(t1 - t0) / 1e6;
		x->ms_decode = (double)(t2 - t1) / 1e6;
		x->hits = s1.hits - s0.hits;
		x->misses = s1.misses - s0.misses;
		x->evictions = s1.evictions - s0.evictions;
		x->blocks_held = s1.held;
		x->computed = P - x->cached;
		if (q == 0)
			memcpy(ref, lg, G * v * sizeof *ref);
		else if (q == 1 || q == 4)
			x->identical = !memcmp(ref, lg, G * v * sizeof *ref);
	}
	free(tok);
	free(ref);
	free(lg);
	free(work);
	return rc;
}

bool kv_prefix_same(const struct kv_prefix_request r[KV_PREFIX_REQUESTS])
{
	for (int q = 0; q < KV_PREFIX_REQUESTS; q++)
		if (!r[q].identical)
			return false;
	return true;
}
