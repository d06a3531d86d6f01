/*
 * stage.c - one stage of a fit: the layers it holds counted on one rank
 * (parameters, weights, the tokens and bytes each layer keeps and a step
 * reads, FLOPs), then its budget under the engine's rules and the
 * sequences it holds. fit.c cuts a model into pipeline stages, split.c
 * into llama.cpp's host and GPU parts; both count each with these.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kv/ep.h"
#include "kv/params.h"
#include "kv/spec.h"
#include "kv/audio.h"
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

/* in's counts, where it carries those of its model and format; else
 * NULL (derived here) */
const struct kv_params_memo *fit_counted(const struct kv_fit_in *in)
{
	return kv_params_memo_of(in->counts, in->m, in->quant) ? in->counts
							      : NULL;
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
	if ((e = kv_add(s->bpt, tb, &s->bpt)) || (e = fit_mac(&s->seq, tb, pv)) ||
	    (e = fit_mac(&s->shared, tb, sh)))
		return e;
	return 0;
}

/* A tower's weights of params parameters on one rank: split over tp as
 * its linear layers are (vLLM's SiglipVisionModel, its Whisper encoder),
 * in the model's dtype (kept as given, not quantized), unless the
 * weights came as bytes (a checkpoint's tensors, --weights: the tower
 * among them). */
static int tower_weights(const struct fit_ctx *c, uint64_t params,
			 enum kv_dtype t, uint64_t *out)
{
	const struct kv_fit_in *in = c->in;
	uint64_t w;
	int e;
	*out = 0;
	if (in->weights)
		return 0;
	if ((e = kv_weight_bytes(params, t, &w)))
		return e;
	*out = w / in->tp + (w % in->tp != 0);
	return 0;
}

/* The towers on the first stage: the vision tower's weights with
 * in->images, the audio tower's with in->audio_s; and with the engine's
 * profile run, the encoder outputs it holds, of the images where a
 * request carries them, else of the audio (kv_vision_encoder,
 * kv_audio_encoder: vLLM profiles one modality), and the vision tower's
 * activation peak while it encodes them (kv_vision_peak). */
static int tower_stage(const struct fit_ctx *c, struct fit_stage *s)
{
	const struct kv_fit_in *in = c->in;
	const struct kv_model *m = in->m;
	bool audio = in->audio_s > 0;
	if (!in->images && !audio)
		return 0;
	int e;
	enum kv_dtype t = m->dtype;
	if (t == KV_DTYPE_F32 && c->sv->w_f32 != KV_DTYPE_COUNT)
		t = c->sv->w_f32;
	if ((in->images && (e = tower_weights(c, kv_vision_params(m), t,
					      &s->vision_w))) ||
	    (audio && (e = tower_weights(c, kv_audio_params(m), t,
					 &s->audio_w))))
		return e;
	if (!c->sv->encoder_profile || !in->runtime || in->reserve)
		return 0;
	uint64_t seqs = c->seqs ? c->seqs : UINT64_MAX;
	if (in->images) {
		e = kv_vision_encoder(m, t, in->images, c->batched, seqs,
				      c->max_ctx, &s->encoder_items,
				      &s->encoder);
		s->encoder_peak = kv_vision_peak(m, s->encoder_items, in->tp);
		return e;
	}
	return kv_audio_encoder(m, t, c->batched, seqs, c->max_ctx,
				&s->encoder_items, &s->encoder);
}

/* What the profile's peak gains from the vision tower: its activations
 * while it encodes (s->encoder_peak) past the larger of the text model's
 * forward pass and its sampler's, with the encoder outputs held through
 * both (vLLM's profile_run: the tower first, then the text model). */
static uint64_t tower_over(const struct fit_stage *s)
{
	uint64_t lm = s->rt.activation > s->rt.sampler ? s->rt.activation
							: s->rt.sampler;
	return s->encoder_peak > lm + s->encoder
		       ? s->encoder_peak - lm - s->encoder
		       : 0;
}

int fit_layer_params(const struct fit_ctx *c, uint32_t i, struct kv_params *p)
{
	const struct kv_fit_in *in = c->in;
	const struct kv_params_memo *cn = fit_counted(in);
	if (cn) {
		*p = cn->layers[i];
		return 0;
	}
	return kv_layer_params_as(in->m, in->quant ? in->quant : &in->m->quant,
				  i, p);
}

/* Bytes of `params` parameters (`stored` as the checkpoint stores
 * them) on every rank together: fit_part_bytes before its split. */
static int whole_bytes(const struct fit_ctx *c, uint64_t params,
		       uint64_t stored, uint64_t *w)
{
	const struct kv_fit_in *in = c->in;
	if (in->weights)
		*w = c->total_params ? fit_muldiv(in->weights, params,
					      c->total_params)
				     : 0;
	else if (in->stored)
		*w = stored;
	else
		return kv_weight_bytes(params, in->w_dtype, w);
	return 0;
}

int fit_part_bytes(const struct fit_ctx *c, uint64_t params, uint64_t stored,
		   uint64_t *out)
{
	const struct kv_fit_in *in = c->in;
	uint64_t w;
	int e;
	if ((e = whole_bytes(c, params, stored, &w)))
		return e;
	*out = w / in->tp + (w % in->tp != 0);
	return 0;
}

/* With groups or experts split (ep.h): a stage's weights on one rank,
 * each part over the ranks its engine splits it over, the routed
 * experts over every rank of the stage (n_experts / ep whole experts,
 * each over the stage's dp x tp / ep). */
static int ep_weights(const struct fit_ctx *c, struct fit_stage *s)
{
	const struct kv_fit_in *in = c->in;
	uint64_t w, sum = 0;
	uint32_t ranks, tokens;
	int e;
	for (int k = 0; k < 3; k++) {
		kv_ep_div(in, (enum kv_ep_split)k, &ranks, &tokens);
		if ((e = whole_bytes(c, s->ep_params[k], s->ep_stored[k],
				     &w)) ||
		    (e = kv_add(sum, fit_cdiv(w, ranks), &sum)))
			return e;
	}
	if ((e = whole_bytes(c, s->routed, s->routed_stored, &w)))
		return e;
	s->routed_bytes = fit_cdiv(w, in->tp * kv_ep_dp(in));
	return kv_add(sum, s->routed_bytes, &s->weights);
}

/* With groups or experts split: layer lp's parts by how its engine
 * splits them into s, and the FLOPs a token of one group costs a rank in
 * its products (*routed of them the routed experts': the stage's tokens
 * over every rank, the busiest's at the imbalance). */
static double ep_layer(const struct fit_ctx *c, const struct kv_layer *ly,
		       const struct kv_params *lp, struct fit_stage *s,
		       double *routed)
{
	const struct kv_fit_in *in = c->in;
	const struct kv_ep_rule *r = kv_ep_rule(c->sv);
	enum kv_ep_split mh = ly->mlp == KV_MLP_MOE && in->ep > 1 ? r->shared
								  : r->dense;
	uint32_t ranks, tokens;
	double ra = lp->experts ? (double)lp->routed * lp->experts_active /
					  lp->experts
				: 0;
	s->ep_params[KV_EP_BY_GROUP] += lp->total - lp->routed - lp->mlp;
	s->ep_stored[KV_EP_BY_GROUP] += lp->bytes - lp->routed_bytes -
					lp->mlp_bytes;
	s->ep_params[mh] += lp->mlp;
	s->ep_stored[mh] += lp->mlp_bytes;
	s->routed_stored += lp->routed_bytes;
	kv_ep_div(in, mh, &ranks, &tokens);
	*routed = 2.0 * ra * kv_ep_imbalance(in) / in->tp;
	return 2.0 * ((double)lp->active - ra - (double)lp->mlp) / in->tp +
	       2.0 * (double)lp->mlp * tokens / ranks + *routed;
}

/* With groups or experts split: the embedding's (first) and the final
 * norm's and head's (last) parameters and bytes into s, as its engine
 * splits them. */
static void ep_edges(const struct fit_ctx *c, struct fit_stage *s,
		     uint64_t f, uint64_t fb, uint64_t l, uint64_t lb)
{
	const struct kv_ep_rule *r = kv_ep_rule(c->sv);
	s->ep_params[r->embed] += f;
	s->ep_stored[r->embed] += fb;
	s->ep_params[r->head] += l;
	s->ep_stored[r->head] += lb;
}

int fit_stage_count(const struct fit_ctx *c, struct fit_stage *s, bool first,
		    bool last, char *err)
{
	const struct kv_fit_in *in = c->in;
	const struct kv_model *m = in->m;
	const struct kv_params_memo *cn = fit_counted(in);
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
	bool ep = kv_ep_on(in);
	s->groups = kv_ep_dp(in);
	if (ep)
		ep_edges(c, s, first ? f : 0, first ? fb : 0, last ? l : 0,
			 last ? lb : 0);
	for (uint32_t i = s->first; i < s->first + s->n; i++) {
		struct kv_params lp;
		struct kv_geom g;
		uint64_t tb, pv, sh, rp, rs;
		if ((e = fit_layer_params(c, i, &lp)))
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
		double rf;
		if (ep) {
			s->flops += ep_layer(c, &m->layers[i], &lp, s, &rf);
			s->routed_flops += rf;
		} else {
			s->flops += 2.0 * (double)lp.active / in->tp;
		}
		if (lp.experts && !ep)
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
			if ((e = fit_mac(&s->rseq, ib, rp)) ||
			    (e = fit_mac(&s->rshared, ib, rs)))
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
		    (e = fit_mac(&s->seq, tb, pv)) ||
		    (e = fit_mac(&s->shared, tb, sh)) ||
		    (g.replicated && ((e = fit_mac(&s->seq_dup, tb, pv)) ||
				      (e = fit_mac(&s->shared_dup, tb, sh)))) ||
		    (e = fit_mac(&s->rseq, rb, rp)) ||
		    (e = fit_mac(&s->rshared, rb, rs)))
			return e;
	}
	if (last && in->spec && (e = draft_size(c, s, err)))
		return e;
	if (last) { /* the output head's logits; the embedding is a lookup */
		uint32_t ranks = in->tp, tokens = 1;
		if (ep)
			kv_ep_div(in, kv_ep_rule(c->sv)->head, &ranks, &tokens);
		s->head_flops = 2.0 * (double)m->vocab * (double)m->hidden *
				tokens / ranks;
		s->flops += s->head_flops;
	}
	/* LoRA slots, allocated with the model, before the KV budget */
	if ((e = kv_lora_stage(in, s->first, s->n, first, last, &s->lora)))
		return e;
	/* the vision tower and its profile run's outputs, the first
	 * stage's, before the KV budget */
	if (first && (e = tower_stage(c, s)))
		return e;
	if (ssm && c->ssm_layers) {
		uint64_t st = c->state / c->ssm_layers * ssm;
		if ((e = kv_add(s->seq, st, &s->seq)) ||
		    (e = kv_add(s->rseq, st, &s->rseq)))
			return e;
	}

	/* weights on one rank: the stage's share, split over tp (or as its
	 * engine splits each part over groups and experts) */
	if (ep && (e = ep_weights(c, s)))
		return e;
	if (!ep && (e = fit_part_bytes(c, s->params, s->stored, &s->weights)))
		return e;
	if (!ep)
		s->routed_bytes = s->params ? fit_muldiv(s->weights, s->routed,
							 s->params)
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
		uint32_t ranks = in->tp, tokens = 1;
		if (ep)
			kv_ep_div(in, kv_ep_rule(c->sv)->embed, &ranks, &tokens);
		s->lookup_bytes = nb / ranks;
	}
	return 0;
}

int fit_stage_budget(const struct fit_ctx *c, struct fit_stage *s, char *err)
{
	const struct kv_fit_in *in = c->in;
	const struct kv_server *sv = c->sv;
	double frac = in->util > 0 ? in->util
		      : sv->ops->frac ? sv->ops->frac(c)
				      : sv->frac;
	uint64_t need;
	int e;
	if (in->runtime && !in->reserve && sv->ops->runtime) {
		s->rt = sv->ops->runtime(c);
		s->rt.activation += s->copy;
		s->rt.total += s->copy;
	}
	if ((e = kv_add(s->weights, in->reserve + s->rt.total, &need)) ||
	    (e = kv_add(need, s->draft_w, &need)) ||
	    (e = kv_add(need, s->lora.slots, &need)) ||
	    (e = kv_add(need, s->vision_w, &need)) ||
	    (e = kv_add(need, s->audio_w, &need)) ||
	    (e = kv_add(need, s->encoder, &need)) ||
	    (e = kv_add(need, tower_over(s), &need)))
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
