/*
 * fit.c - capacity and decode-step arithmetic of kvfit. The model is cut
 * into pipeline stages (layers) and tensor-parallel ranks (heads, as
 * layout.c splits them); on each stage the engine's rules (its row of
 * server.h and its hooks) say what memory is free and how many tokens
 * every layer keeps per sequence; the stage where the fewest sequences fit
 * decides; or for llama.cpp's split between the GPU and host memory,
 * its two parts (split.c). Each stage is counted by stage.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kv/ep.h"
#include "kv/offload.h"
#include "kv/params.h"
#include "kv/spec.h"
#include "kv/audio.h"
#include "kv/vision.h"
#include "server_int.h"


void kv_fit_memo(struct kv_fit_in *in, struct kv_params_memo *c)
{
	*c = (struct kv_params_memo){0};
	if (!fit_counted(in) && !kv_params_memo_init(c, in->m, in->quant))
		in->counts = c;
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
	int e = fit_stage_count(c, x, s == 0, s + 1 == in->pp, err);
	if (!e)
		e = fit_stage_budget(c, x, err);
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
	if (kv_ep_refuses(in, err)) /* before its tp: the groups asked */
		return true;
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
	return kv_vision_refuses(in, err) || kv_audio_refuses(in, err) ||
	       kv_lora_refuses(in, err) ||
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
	if (kv_ep_check(in, err))
		return KV_EINVAL;
	if (in->off.on && (in->pp > 1 || !in->server ||
			   !in->server->by_layers)) {
		snprintf(err, KV_ERRLEN,
			 "%s: a split between the GPU and host memory is "
			 "llama.cpp's, on one GPU (--pp 1)",
			 m->name);
		return KV_EINVAL;
	}
	if (in->off.on && in->spec) {
		snprintf(err, KV_ERRLEN,
			 "%s: speculative decoding beside a split between the "
			 "GPU and host memory is not modelled; give the split "
			 "or the drafter",
			 m->name);
		return KV_EINVAL;
	}
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
	if (s->experts && b) /* (every group's b, with groups) */
		keep = 1 - powl(1 - (long double)s->experts_active /
					    s->experts,
				(long double)b * (s->groups ? s->groups : 1));
	uint64_t cut = (uint64_t)llroundl((long double)s->routed_bytes *
					  (1 - keep));
	uint64_t w = s->weights - cut;
	uint64_t kv = 0, act = b && b < loras ? b : loras, lw, ll;
	if (fit_mac(&w, act, s->lora.adapter) ||
	    kv_mul(act, s->lora.adapter, &lw) ||
	    kv_mul(act, s->lora.lookup, &ll) ||
	    kv_add(f->step_lora_bytes, lw, &f->step_lora_bytes) ||
	    kv_add(f->step_lookup_bytes, ll, &f->step_lookup_bytes))
		return KV_ERANGE;
	f->step_flops += (s->lora.flops + s->lora.head_flops) * (double)b;
	f->step_head_flops += s->lora.head_flops * (double)b;
	f->step_lora_flops += (s->lora.flops + s->lora.head_flops) * (double)b;
	if (b && (fit_mac(&kv, b, s->rseq) || kv_add(kv, s->rshared, &kv)))
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
	c.batched = kv_ep_batched(in, c.batched); /* a group's share */
	if (in->max_seqs)
		c.seqs = in->max_seqs;
	/* a sequence holds its drafts in flight past its context */
	c.max_ctx = fit_round_up(in->ctx + kv_spec_lookahead(in), sv->ctx_pad);
	c.ctx = fit_round_up(kv_fit_seq(in) + kv_spec_lookahead(in),
			     sv->ctx_pad);
	if (fit_counted(in))
		p = in->counts->model;
	else if ((e = kv_model_params(m, &p, err)))
		return e;
	c.total_params = p.total;
	if (kv_model_state_bytes(m, &c.o, 1, &c.state))
		return KV_ERANGE;

	uint32_t first = 0;
	struct fit_stage host = {0}; /* a split's host part */
	if (in->off.on && (e = fit_split(&c, &host, &best, &f->split, err)))
		return e;
	for (uint32_t s = 0; s < in->pp && !in->off.on; s++) {
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
	if (in->off.on && f->split.host_users < best.users) {
		/* host memory holds fewer */
		best.users = f->split.host_users;
		best.whole = (uint64_t)f->split.host_users;
	}
	if (isinf(best.users)) {
		snprintf(err, KV_ERRLEN,
			 in->off.on && host.seq
				 ? "%s: every layer's KV is in host memory, "
				   "whose size is unknown: give --host-mem"
				 : "%s: keeps no KV and no state per sequence",
			 m->name);
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
	f->audio_weights = best.audio_w;
	f->encoder_bytes = best.encoder;
	f->encoder_items = best.encoder_items;
	f->encoder_peak = best.encoder_peak;
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
		f->split.host_kv = f->split.host_shared +
				   f->split.host_seq * f->users_whole;
	}

	f->step_users = in->users ? in->users : f->users_whole;
	if (in->off.on) { /* the host's step apart, then the GPU's */
		struct kv_fit fh = {0};
		if ((e = step(&host, f->step_users, kv_lora_max_loras(in),
			      &fh)) ||
		    (e = step(&best, f->step_users, kv_lora_max_loras(in),
			      f))) {
			snprintf(err, KV_ERRLEN,
				 "%s: %llu users: step bytes overflow 64 bits",
				 m->name, (unsigned long long)f->step_users);
			return e;
		}
		fit_split_step(&c, &fh, f);
		return 0;
	}
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

uint64_t kv_fit_seq(const struct kv_fit_in *in)
{
	return in->seq_ctx && in->seq_ctx < in->ctx ? in->seq_ctx : in->ctx;
}

int kv_fit_solve(const struct kv_fit_in *in, struct kv_fit *f, char *err)
{
	/* an engine that will not start unless a request of its whole
	 * context fits (vLLM) serves none where one does not */
	if (kv_fit_seq(in) < in->ctx && in->server &&
	    in->server->start_check) {
		struct kv_fit_in whole = *in;
		whole.seq_ctx = 0;
		int e = kv_fit_solve(&whole, f, err);
		if (e || !f->users_whole)
			return e;
	}
	/* the model's total, then each stage twice (its users, then the
	 * step), from counts derived once: the caller's, kept for many
	 * solves, or these */
	if (fit_counted(in))
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
