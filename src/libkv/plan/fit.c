/*
 * fit.c - capacity and decode-step arithmetic of kvfit. The model is cut
 * into pipeline stages (layers) and tensor-parallel ranks (heads, as
 * layout.c splits them); on each stage the engine's rules (its row of
 * server.h and its hooks) say what memory is free and how many tokens
 * every layer keeps per sequence; the stage where the fewest sequences fit
 * decides.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kv/offload.h"
#include "kv/params.h"
#include "kv/spec.h"
#include "kv/vision.h"
#include "server_int.h"


/* Tokens layer g keeps: per sequence (`priv`, in pages) and once
 * (`shared`: whole pages of the shared prefix, and what the engine keeps
 * once for the layer), and the tokens a step reads (`rpriv`, `rshared`:
 * exact, no padding). A window is as the engine keeps it (its window
 * hook). */
static void layer_tokens(const struct fit_ctx *c, const struct kv_geom *g,
			 uint64_t *priv, uint64_t *shared, uint64_t *rpriv,
			 uint64_t *rshared)
{
	const struct kv_fit_in *in = c->in;
	struct kv_geom w = *g;
	uint64_t b = c->block, p = in->prefix, once = 0;
	if (g->window && c->sv->ops->window)
		w.window = c->sv->ops->window(c, g, &once);
	/* a layer keeps the last `kept` tokens; the prefix is the first p;
	 * the token a sequence is generating is its own, so at least one
	 * token (one page) of every layer stays private */
	uint64_t kept = kv_geom_tokens(&w, c->ctx, 1);
	uint64_t sh = p > c->ctx - kept ? p - (c->ctx - kept) : 0;
	if (sh >= kept)
		sh = kept - 1;
	sh = b > 1 ? sh / b * b : sh; /* engines share whole pages */
	*shared = sh + once;
	*priv = sh ? fit_round_up(kept - sh, b) : kv_geom_tokens(&w, c->ctx, b);
	uint64_t rk = kv_geom_tokens(g, in->ctx, 1);
	*rshared = p > in->ctx - rk ? p - (in->ctx - rk) : 0;
	if (*rshared >= rk)
		*rshared = rk - 1;
	*rpriv = rk - *rshared;
}

/* acc += a * b, checked */
static int mac(uint64_t *acc, uint64_t a, uint64_t b)
{
	uint64_t t;
	return kv_mul(a, b, &t) || kv_add(*acc, t, acc) ? KV_ERANGE : 0;
}

/* The drafter's cache beside the last stage's layers (speculative
 * decoding, spec.h): its bytes a token, as the engine counts them, kept
 * for the whole context as a layer of full attention is (its pages, the
 * shared prefix's held once), and its weights. */
static int draft_size(const struct fit_ctx *c, struct fit_stage *s,
		      char *err)
{
	const struct kv_fit_in *in = c->in;
	struct kv_geom full = {.attn = KV_ATTN_FULL};
	uint64_t tb, pv, sh, rp, rs;
	uint32_t n = 0;
	int e;
	for (uint32_t i = s->first; i < s->first + s->n; i++)
		n += in->m->layers[i].attn != KV_ATTN_NONE;
	if ((e = kv_spec_weights(in, &s->draft_w, err)) ||
	    (e = kv_spec_token_bytes(in, &c->o, s->bpt, n, &tb, err)))
		return e;
	layer_tokens(c, &full, &pv, &sh, &rp, &rs);
	s->draft_bpt = tb;
	s->draft_layers = kv_spec_layers(in);
	if ((e = kv_add(s->bpt, tb, &s->bpt)) || (e = mac(&s->seq, tb, pv)) ||
	    (e = mac(&s->shared, tb, sh)))
		return e;
	return 0;
}

/* in's counts, where it carries those of its model and format; else
 * NULL (derived here) */
static const struct kv_params_memo *counted(const struct kv_fit_in *in)
{
	return kv_params_memo_of(in->counts, in->m, in->quant) ? in->counts
							      : NULL;
}

void kv_fit_memo(struct kv_fit_in *in, struct kv_params_memo *c)
{
	*c = (struct kv_params_memo){0};
	if (!counted(in) && !kv_params_memo_init(c, in->m, in->quant))
		in->counts = c;
}

/* The vision tower on the first stage with in->images: its weights,
 * split over tp as its linear layers are (vLLM's SiglipVisionModel), in
 * the model's dtype (kept as given, not quantized), unless the weights
 * came as bytes (a checkpoint's tensors, --weights: the tower among
 * them); and with the engine's profile run, the encoder outputs it
 * holds (kv_vision_encoder). */
static int vision_stage(const struct fit_ctx *c, struct fit_stage *s)
{
	const struct kv_fit_in *in = c->in;
	const struct kv_model *m = in->m;
	if (!in->images)
		return 0;
	int e;
	uint64_t w;
	enum kv_dtype t = m->dtype;
	if (t == KV_DTYPE_F32 && c->sv->w_f32 != KV_DTYPE_COUNT)
		t = c->sv->w_f32;
	if (!in->weights) {
		if ((e = kv_weight_bytes(kv_vision_params(m), t, &w)))
			return e;
		s->vision_w = w / in->tp + (w % in->tp != 0);
	}
	if (!c->sv->encoder_profile || !in->runtime || in->reserve)
		return 0;
	return kv_vision_encoder(m, t, in->images, c->batched,
				 c->seqs ? c->seqs : UINT64_MAX, c->ctx,
				 &s->encoder_items, &s->encoder);
}

static int stage_size(const struct fit_ctx *c, struct fit_stage *s, bool first,
		      bool last, char *err)
{
	const struct kv_fit_in *in = c->in;
	const struct kv_model *m = in->m;
	const struct kv_params_memo *cn = counted(in);
	uint64_t f, l, fb, lb;
	uint32_t ssm = 0;
	int e;
	if (cn) {
		f = cn->first;
		l = cn->last;
		fb = cn->first_bytes;
		lb = cn->last_bytes;
	} else if ((e = kv_model_edge_bytes(m, in->quant, &f, &l, &fb, &lb))) {
		return e;
	}
	s->params = (first ? f : 0) + (last ? l : 0);
	s->stored = (first ? fb : 0) + (last ? lb : 0);
	for (uint32_t i = s->first; i < s->first + s->n; i++) {
		struct kv_params lp;
		struct kv_geom g;
		uint64_t tb, pv, sh, rp, rs;
		if (cn)
			lp = cn->layers[i];
		else if ((e = kv_layer_params_as(m, in->quant ? in->quant
							      : &m->quant,
						 i, &lp)))
			return e;
		if ((e = kv_add(s->params, lp.total, &s->params)) ||
		    (e = kv_add(s->stored, lp.bytes, &s->stored)) ||
		    (e = kv_add(s->routed, lp.routed, &s->routed)))
			return e;
		if (lp.experts) {
			s->experts = lp.experts;
			s->experts_active = lp.experts_active;
		}
		if ((e = kv_layer_geom(m, i, &c->o, &g, err)) ||
		    (e = kv_geom_token_bytes(&g, &c->o, &tb, err)))
			return e;
		s->flops += 2.0 * (double)lp.active / in->tp;
		if (lp.experts)
			s->routed_flops += 2.0 * (double)lp.routed *
					   lp.experts_active / lp.experts /
					   in->tp;
		ssm += m->layers[i].ssm;
		if (g.attn == KV_ATTN_NONE)
			continue;
		layer_tokens(c, &g, &pv, &sh, &rp, &rs);
		/* scores and weighted sum of each query head over the tokens
		 * read; MLA attends in the latent (absorbed weights) */
		double dims = g.attn == KV_ATTN_MLA
				      ? (double)g.dim_k + m->kv_lora_rank
				      : (double)g.dim_k + g.dim_v;
		const struct kv_layer *ly = &m->layers[i];
		uint64_t att = rp + rs; /* tokens the attention reads */
		uint64_t rb = tb;       /* bytes it reads of each */
		if (ly->index_topk && att > ly->index_topk) {
			/* sparse (DeepSeek V3.2): the indexer scores every
			 * token's key, then each sequence reads the rows of
			 * its own index_topk: read per sequence, not shared */
			uint64_t ib = g.index_bytes;
			double xf = 2.0 * ly->index_heads * ly->index_dim *
				    (double)att;
			s->flops += xf;
			s->attn_flops += xf;
			att = ly->index_topk;
			if ((e = mac(&s->rseq, ib, rp)) ||
			    (e = mac(&s->rshared, ib, rs)))
				return e;
			rb = tb - ib;
			rp = att;
			rs = 0;
		}
		double af = 2.0 * ly->q_heads / in->tp * dims * (double)att;
		s->flops += af;
		s->attn_flops += af;
		if ((e = kv_add(s->bpt, tb, &s->bpt)) ||
		    (g.replicated && (e = kv_add(s->dup, tb, &s->dup))) ||
		    (e = mac(&s->seq, tb, pv)) ||
		    (e = mac(&s->shared, tb, sh)) ||
		    (g.replicated && ((e = mac(&s->seq_dup, tb, pv)) ||
				      (e = mac(&s->shared_dup, tb, sh)))) ||
		    (e = mac(&s->rseq, rb, rp)) ||
		    (e = mac(&s->rshared, rb, rs)))
			return e;
	}
	if (last && in->spec && (e = draft_size(c, s, err)))
		return e;
	if (last) { /* the output head's logits; the embedding is a lookup */
		s->head_flops = 2.0 * (double)m->vocab * (double)m->hidden /
				in->tp;
		s->flops += s->head_flops;
	}
	if (ssm && c->ssm_layers) {
		uint64_t st = c->state / c->ssm_layers * ssm;
		if ((e = kv_add(s->seq, st, &s->seq)) ||
		    (e = kv_add(s->rseq, st, &s->rseq)))
			return e;
	}

	/* weights on one rank: the stage's share, split over tp */
	uint64_t w;
	if (in->weights)
		w = c->total_params ? fit_muldiv(in->weights, s->params,
					     c->total_params)
				    : 0;
	else if (in->stored)
		w = s->stored;
	else if ((e = kv_weight_bytes(s->params, in->w_dtype, &w)))
		return e;
	s->weights = w / in->tp + (w % in->tp != 0);
	s->routed_bytes = s->params ? fit_muldiv(s->weights, s->routed, s->params)
				    : 0;
	if (first) { /* the same rule for the lookup tables' bytes */
		uint64_t np, nb;
		if (cn) {
			np = cn->lookup;
			nb = cn->lookup_bytes;
		} else if ((e = kv_model_lookup_bytes(m, in->quant, &np,
						      &nb))) {
			return e;
		}
		if (in->weights)
			nb = c->total_params ? fit_muldiv(in->weights, np,
						      c->total_params)
					     : 0;
		else if (!in->stored && (e = kv_weight_bytes(np, in->w_dtype,
							     &nb)))
			return e;
		s->lookup_bytes = nb / in->tp;
	}

	/* the engine's budget */
	const struct kv_server *sv = c->sv;
	double frac = in->util > 0 ? in->util
		      : sv->ops->frac ? sv->ops->frac(c)
				      : sv->frac;
	uint64_t need;
	if (in->runtime && !in->reserve && sv->ops->runtime)
		s->rt = sv->ops->runtime(c);
	if ((e = kv_add(s->weights, in->reserve + s->rt.total, &need)) ||
	    (e = kv_add(need, s->draft_w, &need)))
		return e;
	/* the vision tower and its profile run's outputs, the first
	 * stage's, before the KV budget */
	if (first && (e = vision_stage(c, s)))
		return e;
	if ((e = kv_add(need, s->vision_w, &need)) ||
	    (e = kv_add(need, s->encoder, &need)))
		return e;
	/* LoRA slots, allocated with the model, before the KV budget */
	if ((e = kv_lora_stage(in, s->first, s->n, first, last, &s->lora)) ||
	    (e = kv_add(need, s->lora.slots, &need)))
		return e;
	if (in->kv_memory) { /* what the engine's log said it has */
		s->free_kv = in->kv_memory;
		s->budget = need + in->kv_memory;
	} else if (sv->of_free) {
		uint64_t avail = in->mem > need ? in->mem - need : 0;
		s->missing = in->mem < need ? need - in->mem : 0;
		s->free_kv = kv_floor_frac(avail, frac);
		s->budget = s->missing ? in->mem : need + s->free_kv;
	} else {
		/* of the memory free when the engine measures it */
		uint64_t mem = in->mem > sv->startup ? in->mem - sv->startup
						     : 0;
		s->budget = frac > 0 ? kv_floor_frac(mem, frac) : mem;
		s->free_kv = s->budget > need ? s->budget - need : 0;
		s->missing = s->budget < need ? need - s->budget : 0;
	}
	if (s->seq == 0)
		s->users = INFINITY;
	else if (s->free_kv <= s->shared)
		s->users = 0;
	else
		s->users = (double)(s->free_kv - s->shared) / (double)s->seq;
	s->whole = s->seq && s->free_kv > s->shared
			   ? (s->free_kv - s->shared) / s->seq
			   : 0;
	/* in whole pages */
	s->tokens = s->bpt ? s->free_kv / s->bpt / c->block * c->block : 0;
	s->concurrency = s->users;
	return sv->ops->pools ? sv->ops->pools(c, s, err) : 0;
}

/* Stage sizes as vLLM's get_pp_indices splits the layers: evenly, the
 * remainder to the stages before the last (which holds the head). */
static uint32_t stage_layers(uint32_t layers, uint32_t pp, uint32_t s)
{
	uint32_t n = layers / pp, rem = layers % pp;
	return n + (s + 1 < pp && s + 1 + rem >= pp);
}

/* Sizes stage s, whose layers start at `first`. */
static int stage_at(const struct fit_ctx *c, uint32_t s, uint32_t first,
		    struct fit_stage *x, char *err)
{
	const struct kv_fit_in *in = c->in;
	*x = (struct fit_stage){0};
	x->first = first;
	x->n = stage_layers(in->m->n_layers, in->pp, s);
	int e = stage_size(c, x, s == 0, s + 1 == in->pp, err);
	if (e == KV_ERANGE)
		snprintf(err, KV_ERRLEN, "%s: %llu tokens: bytes overflow 64 "
			 "bits",
			 in->m->name, (unsigned long long)in->ctx);
	return e;
}

enum kv_dtype kv_fit_v_dtype(const struct kv_fit_in *in)
{
	return in->v_own ? in->v_dtype : in->kv_dtype;
}

bool kv_fit_step_fits(const struct kv_fit *f)
{
	return f->step_users && f->step_users <= f->users_whole;
}

bool kv_fit_refuses(const struct kv_fit_in *in, char *err)
{
	const struct kv_server *sv = in->server;
	char list[160];
	if (sv && sv->by_layers && in->tp > 1) {
		snprintf(err, KV_ERRLEN,
			 "%s: tensor parallel %u: %s splits a model over GPUs "
			 "by layers (-sm layer), as --pp does, not by heads",
			 sv->name, in->tp, sv->label);
		return true;
	}
	if (sv && sv->seqs_max && in->max_seqs > sv->seqs_max) {
		snprintf(err, KV_ERRLEN,
			 "%s: --max-num-seqs %llu: it runs at most %llu "
			 "sequences at once",
			 sv->name, (unsigned long long)in->max_seqs,
			 (unsigned long long)sv->seqs_max);
		return true;
	}
	enum kv_dtype v = kv_fit_v_dtype(in);
	for (int i = 0; i < 2 && sv; i++) {
		enum kv_dtype t = i ? v : in->kv_dtype;
		if (kv_server_stores(sv, t))
			continue;
		snprintf(err, KV_ERRLEN, "%s keeps no %s cache; it keeps %s",
			 sv->name, kv_dtype_name(t),
			 kv_server_formats(sv, list, sizeof list));
		return true;
	}
	/* one cache tensor per layer of one dtype (vLLM, SGLang,
	 * TensorRT-LLM); llama.cpp's K and V are tensors of their own */
	if (sv && v != in->kv_dtype && !sv->kv_apart) {
		snprintf(err, KV_ERRLEN, "%s keeps K and V in one format, got "
			 "K %s and V %s (llama.cpp keeps them apart)",
			 sv->name, kv_dtype_name(in->kv_dtype),
			 kv_dtype_name(v));
		return true;
	}
	return kv_vision_refuses(in, err) || kv_lora_refuses(in, err) ||
	       kv_offload_refuses(in, err) ||
	       kv_spec_refuses(in, err);
}

static int check(const struct kv_fit_in *in, char *err)
{
	const struct kv_model *m = in->m;
	if (!in->tp || !in->pp || in->pp > m->n_layers) {
		snprintf(err, KV_ERRLEN,
			 "%s: pipeline parallel %u: must be 1 to the %u "
			 "layers",
			 m->name, in->pp, m->n_layers);
		return KV_EINVAL;
	}
	if (in->reserve > in->mem) {
		snprintf(err, KV_ERRLEN,
			 "reserve of %llu bytes is larger than the GPU's "
			 "memory of %llu bytes",
			 (unsigned long long)in->reserve,
			 (unsigned long long)in->mem);
		return KV_EINVAL;
	}
	if (in->prefix > in->ctx) {
		snprintf(err, KV_ERRLEN,
			 "%s: shared prefix of %llu tokens is longer than "
			 "the context of %llu",
			 m->name, (unsigned long long)in->prefix,
			 (unsigned long long)in->ctx);
		return KV_EINVAL;
	}
	if (kv_fit_refuses(in, err))
		return KV_EINVAL;
	if (in->ctx == 0 || in->mem == 0 || !(in->util >= 0 && in->util <= 1)
	    || !in->server) {
		snprintf(err, KV_ERRLEN, "%s: context, memory, utilization or "
			 "engine out of range", m->name);
		return KV_EINVAL;
	}
	return 0;
}

/* The decode step of b sequences on stage s, added to f; of up to
 * `loras` adapters, those of its b sequences (each its own, at most;
 * all of them in a step of none). */
static int step(const struct fit_stage *s, uint64_t b, uint64_t loras,
		struct kv_fit *f)
{
	long double keep = 1; /* share of routed experts b tokens touch */
	if (s->experts && b)
		keep = 1 - powl(1 - (long double)s->experts_active /
					    s->experts,
				(long double)b);
	uint64_t cut = (uint64_t)llroundl((long double)s->routed_bytes *
					  (1 - keep));
	uint64_t w = s->weights - cut;
	uint64_t kv = 0, act = b && b < loras ? b : loras, lw, ll;
	if (mac(&w, act, s->lora.adapter) || kv_mul(act, s->lora.adapter, &lw) ||
	    kv_mul(act, s->lora.lookup, &ll) ||
	    kv_add(f->step_lora_bytes, lw, &f->step_lora_bytes) ||
	    kv_add(f->step_lookup_bytes, ll, &f->step_lookup_bytes))
		return KV_ERANGE;
	f->step_flops += (s->lora.flops + s->lora.head_flops) * (double)b;
	f->step_head_flops += s->lora.head_flops * (double)b;
	f->step_lora_flops += (s->lora.flops + s->lora.head_flops) * (double)b;
	if (b && (mac(&kv, b, s->rseq) || kv_add(kv, s->rshared, &kv)))
		return KV_ERANGE;
	f->step_flops += s->flops * (double)b;
	f->step_attn_flops += s->attn_flops * (double)b;
	f->step_lookup_bytes += s->lookup_bytes;
	f->step_head_flops += s->head_flops * (double)b;
	f->step_routed_flops += s->routed_flops * (double)b;
	if (kv_add(f->step_routed_bytes, s->routed_bytes - cut,
		   &f->step_routed_bytes))
		return KV_ERANGE;
	if (kv_add(f->step_token_bytes, s->bpt - s->draft_bpt,
		   &f->step_token_bytes))
		return KV_ERANGE;
	if (kv_add(f->step_weight_bytes, w, &f->step_weight_bytes) ||
	    kv_add(f->step_kv_bytes, kv, &f->step_kv_bytes))
		return KV_ERANGE;
	return 0;
}

/* kv_fit_solve, in's counts derived or not */
static int fit_solve(const struct kv_fit_in *in, struct kv_fit *f, char *err)
{
	const struct kv_model *m = in->m;
	const struct kv_server *sv = in->server;
	struct fit_ctx c = {.in = in, .sv = sv};
	struct kv_params p;
	struct fit_stage best = {0};
	int e;
	*f = (struct kv_fit){0};
	if ((e = check(in, err)))
		return e;
	c.o = kv_opts_default(m);
	c.o.k_dtype = in->kv_dtype;
	c.o.v_dtype = kv_fit_v_dtype(in);
	c.o.tp = in->tp;
	c.o.state = sv->state;
	bool mla = false;
	for (uint32_t i = 0; i < m->n_layers; i++) {
		mla |= m->layers[i].attn == KV_ATTN_MLA && !m->mla_expanded;
		c.ssm_layers += m->layers[i].ssm;
	}
	c.mla = mla;
	/* the engine's defaults, then what the options give */
	c.block = mla ? sv->block_mla : sv->block;
	c.batched = sv->batched;
	c.seqs = sv->seqs;
	if (sv->ops->sched)
		sv->ops->sched(&c);
	if (kv_spec_max_seqs(in)) /* the engine's cap while it drafts */
		c.seqs = kv_spec_max_seqs(in);
	if (in->block)
		c.block = in->block;
	if (in->batched_tokens)
		c.batched = in->batched_tokens;
	if (in->max_seqs)
		c.seqs = in->max_seqs;
	/* a sequence holds its drafts in flight past its context */
	c.ctx = fit_round_up(in->ctx + kv_spec_lookahead(in), sv->ctx_pad);
	if (counted(in))
		p = in->counts->model;
	else if ((e = kv_model_params(m, &p, err)))
		return e;
	c.total_params = p.total;
	if (kv_model_state_bytes(m, &c.o, 1, &c.state))
		return KV_ERANGE;

	uint32_t first = 0;
	for (uint32_t s = 0; s < in->pp; s++) {
		struct fit_stage x;
		if ((e = stage_at(&c, s, first, &x, err)))
			return e;
		first += x.n;
		if (s == 0 || x.users < best.users ||
		    (x.users == best.users && x.missing > best.missing)) {
			best = x;
			f->stage = s;
		}
	}
	if (isinf(best.users)) {
		snprintf(err, KV_ERRLEN,
			 "%s: keeps no KV and no state per sequence", m->name);
		return KV_EINVAL;
	}
	f->stage_layers = best.n;
	f->block = best.block ? best.block : c.block;
	f->ctx_kept = c.ctx;
	f->budget = best.budget;
	f->weights = best.weights;
	f->runtime = best.rt.total;
	f->rt = best.rt;
	f->free_kv = best.free_kv;
	f->missing = best.missing;
	f->bytes_per_token = best.bpt;
	f->dup_per_token = best.dup;
	f->kv_tokens = best.tokens;
	f->batched_tokens = c.batched;
	f->max_seqs = best.seqs ? best.seqs : c.seqs;
	f->num_blocks = best.blocks;
	f->draft_weights = best.draft_w;
	f->draft_per_token = best.draft_bpt;
	f->lookahead = kv_spec_lookahead(in);
	f->max_concurrency = best.blocks ? best.concurrency : best.users;
	f->vision_weights = best.vision_w;
	f->encoder_bytes = best.encoder;
	f->encoder_items = best.encoder_items;
	f->lora_bytes = best.lora.slots;
	f->lora_host_bytes = kv_lora_host_bytes(in);
	f->seq_bytes = best.seq;
	f->shared_bytes = best.shared;
	f->users = best.users;
	f->users_whole = best.whole;
	if (f->max_seqs && f->users > (double)f->max_seqs) { /* its cap */
		f->users = (double)f->max_seqs;
		f->users_whole = f->max_seqs;
	}

	if (f->users_whole) { /* <= free_kv: cannot overflow */
		f->kv_bytes = best.shared + best.seq * f->users_whole;
		f->dup_bytes = best.shared_dup + best.seq_dup * f->users_whole;
	}

	f->step_users = in->users ? in->users : f->users_whole;
	/* the step runs through every stage: sized again, it is cheap */
	first = 0;
	for (uint32_t s = 0; s < in->pp; s++) {
		struct fit_stage x;
		if ((e = stage_at(&c, s, first, &x, err)))
			return e;
		first += x.n;
		if ((e = step(&x, f->step_users, kv_lora_max_loras(in), f))) {
			snprintf(err, KV_ERRLEN,
				 "%s: %llu users: step bytes overflow 64 bits",
				 m->name, (unsigned long long)f->step_users);
			return e;
		}
	}
	double w = (double)f->step_weight_bytes, kv = (double)f->step_kv_bytes;
	f->kv_weight_ratio = w > 0 ? kv / w : NAN;
	f->kv_share = w + kv > 0 ? kv / (w + kv) : NAN;
	f->step_ms = in->bandwidth_gbps > 0 ? (w + kv) /
						      (in->bandwidth_gbps * 1e6)
					    : NAN;
	f->tokens_per_s = f->step_ms > 0 ? (double)f->step_users * 1e3 /
						   f->step_ms
					 : NAN;
	f->compute_ms = in->tflops > 0 ? f->step_flops / (in->tflops * 1e9)
				       : NAN;
	return 0;
}

int kv_fit_solve(const struct kv_fit_in *in, struct kv_fit *f, char *err)
{
	/* the model's total, then each stage twice (its users, then the
	 * step), from counts derived once: the caller's, kept for many
	 * solves, or these */
	if (counted(in))
		return fit_solve(in, f, err);
	struct kv_fit_in x = *in;
	struct kv_params_memo c;
	kv_fit_memo(&x, &c);
	int e = fit_solve(&x, f, err);
	kv_params_memo_free(&c);
	return e;
}

/* Whether `users` whole sequences fit; errors other than a bad layout
 * count as not fitting (a context so long its bytes overflow). */
static int fits(const struct kv_fit_in *in, uint64_t users, bool *ok,
		char *err)
{
	struct kv_fit f;
	int e = kv_fit_solve(in, &f, err);
	*ok = e == 0 && f.users_whole >= users;
	return e == KV_ERANGE ? 0 : e;
}

/* kv_fit_solve_ctx's search, x's counts derived */
static int solve_ctx(struct kv_fit_in *x, uint64_t users, uint64_t *ctx,
		     char *err)
{
	uint64_t lo = x->prefix ? x->prefix : 1, hi = 1ULL << 40;
	bool ok;
	int e;
	*ctx = 0;
	x->ctx = lo;
	if ((e = fits(x, users, &ok, err)) || !ok)
		return e;
	while (lo < hi) {
		x->ctx = lo + (hi - lo + 1) / 2;
		if ((e = fits(x, users, &ok, err)))
			return e;
		if (ok)
			lo = x->ctx;
		else
			hi = x->ctx - 1;
	}
	*ctx = lo;
	return 0;
}

int kv_fit_solve_ctx(const struct kv_fit_in *in, uint64_t users,
		     uint64_t *ctx, char *err)
{
	struct kv_fit_in x = *in;
	struct kv_params_memo c;
	kv_fit_memo(&x, &c);
	int e = solve_ctx(&x, users, ctx, err);
	kv_params_memo_free(&c);
	return e;
}

int kv_fit_solve_tp(const struct kv_fit_in *in, uint64_t users,
		    uint32_t max_tp, uint32_t *tp, char *err)
{
	struct kv_fit_in x = *in;
	struct kv_params_memo c;
	char scratch[KV_ERRLEN];
	int e = 0;
	*tp = 0;
	kv_fit_memo(&x, &c);
	for (uint32_t t = 1; t <= max_tp; t++) {
		struct kv_fit f;
		x.tp = t;
		e = kv_fit_solve(&x, &f, scratch);
		if (e == KV_EINVAL && t > 1) {
			e = 0;
			continue; /* this tp splits no head evenly */
		}
		if (e) {
			memcpy(err, scratch, KV_ERRLEN);
			break;
		}
		if (f.users_whole >= users) {
			*tp = t;
			break;
		}
	}
	kv_params_memo_free(&c);
	return e;
}

char *kv_fit_bar(const struct kv_fit_in *in, const struct kv_fit *f,
		 size_t width, char *buf)
{
	long double mem = (long double)in->mem, kv = 0;
	if (f->users_whole)
		kv = (long double)f->shared_bytes +
		     (long double)f->seq_bytes * (long double)f->users_whole;
	long double cut[3] = {(long double)f->weights,
			      (long double)f->weights + kv,
			      (long double)f->weights + (long double)f->free_kv};
	static const char sym[] = "WK.R";
	size_t at = 0;
	for (int k = 0; k < 4; k++) {
		size_t end = width;
		if (k < 3) {
			long double v = cut[k] > mem ? mem : cut[k];
			end = (size_t)llroundl(v * (long double)width / mem);
		}
		for (; at < end && at < width; at++)
			buf[at] = sym[k];
	}
	buf[width] = '\0';
	return buf;
}

double kv_fit_users_shown(double users)
{
	double r = round(users * 100) / 100;
	return floor(r) > floor(users) ? floor(users * 100) / 100 : r;
}
