/*
 * plan.c - kvfit's rows: the kv_fit_in each option and plan make, the
 * weights each row counts and where they come from, the walk over models
 * x formats x block sizes x contexts x users x engines, and the solve of one row, so
 * that the tool only parses and prints.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kv/ep.h"
#include "kv/offload.h"
#include "kv/plan.h"
#include "kv/audio.h"
#include "kv/vision.h"

int kv_plan_engine_parse(const char *s, const struct kv_server **out)
{
	if (strcmp(s, "all"))
		return kv_server_parse(s, out);
	*out = NULL;
	return 0;
}

static const char *const arrivals_names[] = {
	[KV_ARRIVE_STEADY] = "steady", [KV_ARRIVE_BURST] = "burst",
	[KV_ARRIVE_RATE] = "rate"};
#define N_ARRIVALS (int)(sizeof arrivals_names / sizeof *arrivals_names)

int kv_plan_arrivals_parse(const char *s, enum kv_arrivals *out)
{
	int i = kv_name_find(arrivals_names, N_ARRIVALS, s);
	*out = i < 0 ? *out : (enum kv_arrivals)i;
	return i < 0 ? KV_EINVAL : 0;
}

const char *kv_plan_arrivals_name(enum kv_arrivals a)
{
	return kv_name_of(arrivals_names, N_ARRIVALS, (int)a);
}

int kv_plan_solve_parse(const char *s, enum kv_plan_solve *out)
{
	static const char *const names[] = {
		[KV_PLAN_USERS] = "users", [KV_PLAN_CTX] = "ctx",
		[KV_PLAN_TP] = "tp", [KV_PLAN_LAYERS] = "layers",
		[KV_PLAN_GPUS] = "gpus"};
	int i = kv_name_find(names, 5, s);
	*out = i < 0 ? *out : (enum kv_plan_solve)i;
	return i < 0 ? KV_EINVAL : 0;
}

int kv_plan_weights_parse(const char *s, struct kv_plan_opts *o)
{
	enum kv_dtype t;
	o->wquant = false;
	if (kv_quant_parse(s, &o->wq) == 0) {
		o->wquant = true;
		o->wdtype = (int)KV_DTYPE_BF16;
	} else if (kv_dtype_parse(s, &t)) {
		return KV_EINVAL;
	} else {
		o->wdtype = (int)t;
	}
	return 0;
}

/* The weights' format: --weights-dtype, or what the engine runs the
 * config's dtype in. */
static enum kv_dtype weights_dtype(const struct kv_plan_opts *o,
				   const struct kv_model *m,
				   const struct kv_server *sv)
{
	return o->wdtype >= 0 ? (enum kv_dtype)o->wdtype
			      : kv_server_weights_dtype(sv, m->dtype);
}

/* Where a plan's weights come from under engine sv, in the order that
 * wins: --weights, --weights-dtype (parameters x that format), the
 * checkpoint's own index or header (when the engine runs it as stored:
 * not a float32 checkpoint it runs in 16 bits) or a GGUF's tensors, its
 * quantization (quantization_config, MLX's quantization, ModelOpt's
 * hf_quant_config.json: the word names which), the config (parameters x
 * the dtype the engine runs). Sets in->weights or
 * in->stored; returns the weights_source column's word. */
static const char *weights_from(const struct kv_plan_opts *o,
				const struct kv_plan *p,
				const struct kv_server *sv,
				struct kv_fit_in *in)
{
	const struct kv_model *m = p->m;
	enum kv_quant_fmt q = m->quant.fmt;
	if (o->weights)
		return "--weights";
	if (o->wquant) {
		in->stored = true;
		in->quant = &o->wq;
	}
	if (o->wdtype >= 0)
		return "--weights-dtype";
	/* a GGUF's tensors are what every engine that reads it loads */
	if (p->ckpt == KV_CKPT_GGUF ||
	    (p->ckpt != KV_CKPT_NONE &&
	     kv_server_weights_dtype(sv, m->dtype) == m->dtype)) {
		in->weights = p->ckpt_bytes;
		return kv_ckpt_source_name(p->ckpt);
	}
	if (q != KV_QUANT_NONE && q != KV_QUANT_UNKNOWN) {
		in->stored = true;
		return m->quant.from ? m->quant.from : "quantization_config";
	}
	return "config";
}

/* What a llama.cpp row asks of the split: -ngl (else the model's own,
 * an Ollama model's num_gpu, else every layer and the head; auto and
 * --solve layers start there),
 * the experts --cpu-moe and --n-cpu-moe keep in host memory, the -ot
 * rules read against p's model, the host's memory and rates. Other
 * engines' rows, and rows where none is asked, have none. */
static struct kv_ngl offload_of(const struct kv_plan_opts *o,
				    const struct kv_plan *p,
				    const struct kv_server *sv)
{
	uint32_t n = p->m->n_layers;
	const struct kv_model *m = p->m;
	int32_t ngl = o->ngl != KV_NGL_UNSET ? o->ngl
		      : m->run_ngl_given && m->run_ngl <= INT32_MAX
			      ? (int32_t)m->run_ngl
			      : KV_NGL_ALL;
	if (!o->split || !sv->by_layers)
		return (struct kv_ngl){0};
	return (struct kv_ngl){
		.on = true,
		.gpu_layers = ngl >= 0 && (uint32_t)ngl <= n ? (uint32_t)ngl
							      : n + 1,
		.moe_host = o->n_cpu_moe > n ? n : o->n_cpu_moe,
		.no_kv_offload = o->nkvo,
		.place = p->placed ? &p->place : NULL,
		.host_mem = o->host_mem,
		.host_gbps = o->host_gbps,
		.host_tflops = o->host_tflops,
		.link_gbps = o->link_gbps,
	};
}

int kv_plan_place(const struct kv_plan_opts *o, struct kv_plan *p, char *err)
{
	int e;
	if (!o->split || p->placed)
		return 0;
	if ((e = kv_place_init(&p->place, p->m, o->ot, o->not, err)))
		return e;
	p->placed = true;
	return 0;
}

/* The tokens a request of the workload holds (its prompt, its images and
 * audio, its output), counted where the engine pages its cache and
 * admits a request by the tokens it holds, not by its limit: vLLM,
 * SGLang and TensorRT-LLM (whose capacity scheduler reserves a request's
 * prompt and output, GUARANTEED_NO_EVICT); llama.cpp's slots are its
 * context over --parallel whatever a request holds, and the ideal
 * engine's the article's, a context each; 0 (the context) there, without
 * a workload, and where the context is what is solved for. */
static uint64_t seq_ctx(const struct kv_plan_opts *o, const struct kv_model *m,
			const struct kv_server *sv)
{
	const struct kv_serve_in *w = &o->work;
	uint64_t mm = kv_plan_mm_tokens(o, m);
	if (!w->isl || o->solve == KV_PLAN_CTX || mm == UINT64_MAX ||
	    (sv->kind != KV_SERVER_VLLM && sv->kind != KV_SERVER_SGLANG &&
	     sv->kind != KV_SERVER_TRTLLM))
		return 0;
	return w->isl + mm + w->osl;
}

/* What one row asks of libkv. dtype -1: the engine's KV format; block
 * 0: the engine's page. */
static struct kv_fit_in fit_in(const struct kv_plan_opts *o,
			       const struct kv_plan *p, int dtype,
			       uint64_t block, uint64_t ctx, uint64_t users,
			       const struct kv_server *sv)
{
	const struct kv_model *m = p->m;
	enum kv_dtype w = weights_dtype(o, m, sv);
	enum kv_dtype k = kv_server_kv_dtype(sv, m), v = k;
	/* the products' format: a --weights-dtype's (its quantization, or
	 * the plain format), else the checkpoint's quantization */
	const struct kv_quant *q = o->wquant	  ? &o->wq
				   : o->wdtype >= 0 ? NULL
						    : &m->quant;
	enum kv_compute c = kv_gpu_compute(o->gpu, w, q);
	/* the groups: --dp-attention's within the tp ranks, tp / dp each
	 * (every rank its own without --dp), else --dp groups of tp */
	uint64_t tp = p->tp ? p->tp : o->tp;
	uint64_t dp = o->dp		       ? o->dp
		      : o->dp_attention && !o->dp_one ? tp
						      : 1;
	if (o->dp_attention && tp % dp == 0)
		tp /= dp;
	uint64_t ep = o->ep_all ? tp * dp : o->ep;
	if (users) /* the users of one group, the busiest */
		users = users / dp + (users % dp != 0);
	uint64_t seqs = o->seqs; /* a group's cap, where the engine shares
				    one among the groups */
	const struct kv_ep_rule *rl = kv_ep_rule(sv);
	if (seqs && rl && rl->seqs_shared && seqs / dp)
		seqs /= dp;
	if (dtype >= 0)
		kv_dtype_unpack(dtype, &k, &v);
	return (struct kv_fit_in){
		.m = m,
		.kv_dtype = k,
		.v_own = v != k,
		.v_dtype = v,
		.w_dtype = w,
		.weights = o->weights,
		.mem = o->mem,
		.reserve = o->reserve,
		.runtime = !o->reserve_given,
		.util = o->util,
		.tp = (uint32_t)tp,
		.pp = (uint32_t)o->pp,
		.block = block,
		.gpu = o->gpu ? o->gpu->name : NULL,
		.batched_tokens = o->batched,
		.max_seqs = seqs,
		.kv_memory = o->kv_memory,
		.kv_unified = o->kv_unified,
		.swa_full = o->swa_full,
		.windows = sv->window_list ? o->windows : NULL,
		.nwindows = sv->window_list ? o->nwindows : 0,
		.ctx = ctx,
		.seq_ctx = seq_ctx(o, m, sv),
		.prefix = o->prefix,
		.server = sv,
		.users = p->users ? p->users : users,
		.bandwidth_gbps = o->bandwidth,
		.tflops = o->tflops > 0 ? o->tflops : kv_gpu_peak(o->gpu, c),
		.compute = c,
		.mx_experts = q && q->fmt == KV_QUANT_MXFP4,
		.lora = o->lora,
		.offload = o->offload,
		.spec = kv_spec_on(&o->spec) ? &o->spec : NULL,
		.off = offload_of(o, p, sv),
		.images = o->images,
		.dp = (uint32_t)dp,
		.ep = (uint32_t)ep,
		.ep_imbalance = o->ep_imbalance,
		.image_w = o->image_w,
		.image_h = o->image_h,
		.audio_s = o->audio_s,
	};
}

uint64_t kv_plan_image_tokens(const struct kv_plan_opts *o,
			      const struct kv_model *m)
{
	uint64_t n;
	if (kv_mul(o->images, kv_vision_tokens(m, o->image_w, o->image_h),
		   &n))
		return UINT64_MAX;
	return n;
}

uint64_t kv_plan_audio_tokens(const struct kv_plan_opts *o,
			      const struct kv_model *m)
{
	return o->audio_s > 0 ? kv_audio_tokens(m, o->audio_s) : 0;
}

uint64_t kv_plan_mm_tokens(const struct kv_plan_opts *o,
			   const struct kv_model *m)
{
	uint64_t img = kv_plan_image_tokens(o, m);
	uint64_t n = img + kv_plan_audio_tokens(o, m);
	return n < img ? UINT64_MAX : n;
}

void kv_plan_begin(struct kv_plan_iter *it, const struct kv_plan_opts *o,
		   const struct kv_plan *p)
{
	bool row = p->dtype != KV_PLAN_OPTIONS; /* kvsize's: one row each */
	*it = (struct kv_plan_iter){
		.o = o, .p = p, .auto_dtype = -1,
		.defctx = o->work.isl ? o->work.isl + o->work.osl +
						kv_plan_mm_tokens(o, p->m)
		: p->m->run_ctx ? p->m->run_ctx
		: p->m->max_pos ? p->m->max_pos : 4096};
	it->dtypes = row ? &p->dtype : o->dtypes ? o->dtypes : &it->auto_dtype;
	it->ndtypes = row || !o->dtypes ? 1 : o->ndtypes;
	it->ctx = row ? &p->ctx : o->ctx ? o->ctx : &it->defctx;
	it->nctx = row || !o->ctx ? 1 : o->nctx;
	/* a kvsize row that brings its block size keeps it (the options'
	 * list holds it: kv_plan_disagrees); one without walks the list */
	it->blocks = p->block ? &p->block : o->blocks ? o->blocks
						     : &it->noblock;
	it->nblocks = p->block || !o->blocks ? 1 : o->nblocks;
}

/* Whether the row's engine refuses it as o asks it (kv_fit_refuses,
 * --solve tp of llama.cpp, which has no tensor parallelism, and a clip
 * whose audio tokens pass the context): true with the reason in why. */
static bool refuses(const struct kv_plan_opts *o, const struct kv_fit_in *in,
		    char *why)
{
	if ((o->solve == KV_PLAN_LAYERS || o->split) &&
	    !in->server->by_layers) {
		snprintf(why, KV_ERRLEN, "%s: %s is llama.cpp's (-ngl); give "
			 "--engine llamacpp",
			 in->server->name,
			 o->solve == KV_PLAN_LAYERS
				 ? "--solve layers"
				 : "a split between the GPU and host memory");
		return true;
	}
	if (o->solve == KV_PLAN_TP && in->server->by_layers) {
		snprintf(why, KV_ERRLEN, "%s: --solve tp: %s splits a "
			 "model over GPUs by layers (-sm layer), as --pp does, "
			 "not by heads", in->server->name, in->server->label);
		return true;
	}
	uint64_t at = kv_plan_audio_tokens(o, in->m);
	if (at > in->ctx) { /* Voxtral's clip of any length */
		snprintf(why, KV_ERRLEN, "%s: --audio-seconds: %g s take %llu "
			 "tokens, more than the context of %llu", in->m->name,
			 o->audio_s, (unsigned long long)at,
			 (unsigned long long)in->ctx);
		return true;
	}
	return kv_fit_refuses(in, why);
}

bool kv_plan_next(struct kv_plan_iter *it, struct kv_plan_row *r)
{
	const struct kv_plan_opts *o = it->o;
	size_t ne = o->server ? 1 : KV_SERVER_KINDS;
	size_t nus = o->users ? o->nusers : 1;
	size_t nb = it->nblocks;
	/* the last index varies fastest: engines, users, contexts, block
	 * sizes, formats (kvsize's order) */
	while (it->next < it->ndtypes * nb * it->nctx * nus * ne) {
		size_t k = it->next++;
		const struct kv_server *sv =
			o->server ? o->server
				  : kv_server_get((enum kv_server_kind)(k % ne));
		uint64_t users = o->users ? o->users[k / ne % nus] : 0;
		uint64_t ctx = it->ctx[k / ne / nus % it->nctx];
		uint64_t block = it->blocks[k / ne / nus / it->nctx % nb];
		int dtype = it->dtypes[k / ne / nus / it->nctx / nb];
		*r = (struct kv_plan_row){
			.in = fit_in(o, it->p, dtype, block, ctx, users, sv)};
		r->wsrc = weights_from(o, it->p, sv, &r->in);
		/* a GGUF's own tensors are the weights only as it stores
		 * them */
		r->in.off.exact = r->in.off.place && r->in.off.place->exact &&
				  !strcmp(r->wsrc, "gguf");
		/* --engine all: the engines that would run the row, the
		 * first reason each other one gives kept to be said */
		char why[KV_ERRLEN];
		if (!o->server && refuses(o, &r->in, why)) {
			char *left = it->left_out[sv->kind];
			if (!left[0])
				snprintf(left, sizeof it->left_out[0], "%.255s",
					 why);
			continue;
		}
		return true;
	}
	return false;
}

/* Whether a row's workload can be timed: its rates known, and its
 * prompt and output within the context (a --solve ctx row's context is
 * the answer). */
static int time_check(const struct kv_plan_opts *o, enum kv_plan_solve s,
		      const struct kv_fit_in *in, char *err)
{
	const struct kv_serve_in *w = &o->work;
	uint64_t img = kv_plan_mm_tokens(o, in->m);
	const char *media = !o->images ? "audio" : o->audio_s > 0
		? "image and audio" : "image";
	if (!w->isl)
		return 0;
	if (!(in->bandwidth_gbps > 0) || !(in->tflops > 0)) {
		const char *what = in->bandwidth_gbps > 0
					   ? "FLOP rate (--tflops)"
					   : "memory bandwidth (--bandwidth)";
		if (o->gpu) /* a GPU of the table without the rate */
			snprintf(err, KV_ERRLEN,
				 "%s: timing needs the GPU's %s: %s's entry "
				 "has none",
				 in->m->name, what, o->gpu->name);
		else
			snprintf(err, KV_ERRLEN,
				 "%s: timing needs the GPU's %s: give --gpu, "
				 "or --bandwidth and --tflops",
				 in->m->name, what);
		return KV_EINVAL;
	}
	if (s != KV_PLAN_CTX && img && w->isl + img + w->osl > in->ctx) {
		snprintf(err, KV_ERRLEN,
			 "%s: --isl %llu + %llu %s tokens + --osl %llu is "
			 "%llu tokens, more than the context of %llu",
			 in->m->name, (unsigned long long)w->isl,
			 (unsigned long long)img, media, (unsigned long long)w->osl,
			 (unsigned long long)(w->isl + img + w->osl),
			 (unsigned long long)in->ctx);
		return KV_EINVAL;
	}
	if (s != KV_PLAN_CTX && w->isl + w->osl > in->ctx) {
		snprintf(err, KV_ERRLEN,
			 "%s: --isl %llu + --osl %llu is %llu tokens, more "
			 "than the context of %llu",
			 in->m->name, (unsigned long long)w->isl,
			 (unsigned long long)w->osl,
			 (unsigned long long)(w->isl + w->osl),
			 (unsigned long long)in->ctx);
		return KV_EINVAL;
	}
	return 0;
}

int kv_plan_check(const struct kv_plan_opts *o, struct kv_plan_row *r,
		  char *err)
{
	struct kv_fit_in *in = &r->in;
	enum kv_plan_solve s = o->solve;
	int e;
	if (refuses(o, in, err))
		return KV_EINVAL;
	if (s == KV_PLAN_TP)
		in->tp = 1;
	if (s == KV_PLAN_LAYERS && !in->users)
		in->users = 1; /* one user's chat, and its step */
	if (s == KV_PLAN_CTX && in->ctx < in->prefix)
		in->ctx = in->prefix;
	if ((e = time_check(o, s, in, err)))
		return e;
	return kv_fit_solve(in, &r->f, err);
}

/* The prompt's tokens found in a cache tier, into w and r: not computed,
 * their load from a host tier waited for. KV_EINVAL where that load
 * cannot be timed (no host link known). */
static int hits(struct kv_plan_row *r, struct kv_serve_in *w, char *err)
{
	const struct kv_fit_in *in = &r->in;
	r->hit_tokens = kv_offload_hit(in, &r->f, w->isl);
	r->load_ms = kv_offload_load_ms(in, &r->f, r->hit_tokens);
	r->recompute_ms = 0;
	if (isnan(r->load_ms)) {
		snprintf(err, KV_ERRLEN,
			 "%s: --prefix-hit: timing the hits' load from host "
			 "memory needs the GPU's host link: give --gpu, or "
			 "--host-link",
			 in->m->name);
		return KV_EINVAL;
	}
	w->cached = r->hit_tokens;
	w->load_ms = r->load_ms;
	w->load_overlaps = kv_offload_overlaps(in);
	return 0;
}

/* What computing a timed row's hits would take instead: its prefill
 * with none cached, less its prefill. */
static int recompute(const struct kv_plan_row *r, const struct kv_serve_in *w,
		     double *ms, char *err)
{
	struct kv_serve_in x = *w;
	struct kv_serve s;
	*ms = 0;
	if (!r->hit_tokens)
		return 0;
	x.cached = 0;
	x.load_ms = 0;
	x.arrivals = KV_ARRIVE_STEADY; /* the prompt's steps alone */
	x.users = r->in.users ? r->in.users : r->f.users_whole;
	if (!x.users)
		x.users = 1;
	int e = kv_serve_solve(&r->in, &x, &s, err);
	if (!e)
		*ms = s.prefill.ms - r->s.prefill.ms;
	return e;
}

/* kv_plan_time, the hits set in w */
static int plan_time(const struct kv_plan_opts *o, struct kv_plan_row *r,
		     struct kv_serve_in w, char *err)
{
	struct kv_fit_in *in = &r->in;
	bool target = o->max_ttft > 0 || o->max_tpot > 0;
	int e;
	if (target && !in->users && w.arrivals != KV_ARRIVE_RATE) {
		uint64_t best;
		if (!r->f.users_whole)
			return 0;
		if ((e = kv_serve_best(in, &w, r->f.users_whole, o->max_ttft,
				       o->max_tpot, &best, &r->s, err)))
			return e;
		r->timed = true;
		if (!best) { /* the row is the one user's point, whole */
			r->meets = false;
			in->users = 1;
			return kv_fit_solve(in, &r->f, err);
		}
		in->users = best; /* the step's columns for them */
		if ((e = kv_fit_solve(in, &r->f, err)))
			return e;
	}
	w.users = in->users ? in->users : r->f.users_whole;
	if (!w.users)
		return 0;
	/* each data-parallel group its share of the requests (ep.h) */
	w.rate /= kv_ep_dp(in);
	w.prompts = w.prompts / kv_ep_dp(in) + (w.prompts % kv_ep_dp(in) != 0);
	if (w.arrivals == KV_ARRIVE_RATE) {
		/* the concurrency the rate makes, the step's columns for it */
		int e2 = kv_serve_rate(in, &w, r->f.users_whole, &r->s, err);
		if (e2 == KV_ERANGE) {
			r->unserved = true;
			r->meets = false;
			return 0;
		}
		if (e2)
			return e2;
		in->users = (uint64_t)ceil(r->s.concurrency);
		struct kv_serve s = r->s;
		if ((e = kv_fit_solve(in, &r->f, err)))
			return e;
		r->s = s;
		r->timed = true;
		r->meets = (!(o->max_ttft > 0) || s.ttft_ms <= o->max_ttft) &&
			   (!(o->max_tpot > 0) || s.tpot_ms <= o->max_tpot);
		if (o->usd_per_hour > 0)
			r->usd_per_mtok = kv_serve_cost(o->usd_per_hour,
							in->tp * in->pp *
								kv_ep_dp(in),
							s.tokens_per_s);
		return 0;
	}
	if (w.arrivals == KV_ARRIVE_BURST) {
		/* users requests sent at once, of num_prompts (at least
		 * them); the engine runs at most those that fit, the others
		 * wait */
		if (w.prompts < w.users)
			w.prompts = w.users;
		w.slots = r->f.users_whole;
	}
	if ((e = kv_serve_solve(in, &w, &r->s, err)))
		return e;
	r->timed = true;
	r->meets = (!(o->max_ttft > 0) || r->s.ttft_ms <= o->max_ttft) &&
		   (!(o->max_tpot > 0) || r->s.tpot_ms <= o->max_tpot);
	if (o->usd_per_hour > 0)
		r->usd_per_mtok = kv_serve_cost(o->usd_per_hour,
						in->tp * in->pp * kv_ep_dp(in),
						r->s.tokens_per_s);
	return 0;
}

int kv_plan_time(const struct kv_plan_opts *o, struct kv_plan_row *r,
		 char *err)
{
	struct kv_serve_in w = o->work;
	int e;
	r->timed = false;
	r->unserved = false;
	r->meets = true;
	r->usd_per_mtok = NAN;
	if (!w.isl)
		return 0;
	w.isl += kv_plan_mm_tokens(o, r->in.m); /* its images and audio */
	if ((e = time_check(o, o->solve, &r->in, err)) ||
	    (e = hits(r, &w, err)) || (e = plan_time(o, r, w, err)))
		return e;
	return r->timed ? recompute(r, &w, &r->recompute_ms, err) : 0;
}

uint64_t kv_plan_served(const struct kv_plan_opts *o,
			const struct kv_plan_row *r)
{
	uint64_t fit = r->f.users_whole, g = kv_ep_dp(&r->in);
	if (!(o->max_ttft > 0 || o->max_tpot > 0) || !o->work.isl)
		return fit * g;
	if (!r->timed || !r->meets)
		return 0;
	return (r->in.users && r->in.users < fit ? r->in.users : fit) * g;
}

uint32_t kv_plan_max_tp(const struct kv_model *m)
{
	return m->n_heads > 1024 ? 1024 : m->n_heads ? m->n_heads : 1;
}

/* Whether x fits `need` users; a split that keeps every layer's KV in a
 * host memory of unknown size says nothing (no). */
static int layers_fit(const struct kv_fit_in *x, uint64_t need, bool *ok,
		      struct kv_fit *f, char *err)
{
	int e = kv_fit_solve(x, f, err);
	*ok = e == 0 && f->users_whole >= need;
	if (e == KV_ERANGE ||
	    (e == KV_EINVAL && !x->off.host_mem &&
	     (x->off.no_kv_offload || !x->off.gpu_layers)))
		return 0;
	return e;
}

/*
 * The most layers on the GPU at which in's users (at least 1) fit, into
 * in->off: on an MoE model whose experts no --cpu-moe or --n-cpu-moe
 * places, as llama.cpp's --fit does (src/llama.cpp,
 * llama_params_fit_impl, step 3a), every layer on the GPU and the fewest
 * first layers' experts in host memory (--n-cpu-moe N); where none such
 * fits, or the model is dense, the most -ngl (its step 4), the experts
 * of every layer in host memory (fit: as llama.cpp's fit, none). fit:
 * -ngl auto, llama.cpp's own choice, KV_FIT_MARGIN of the GPU left free.
 * *found false where not even -ngl 0 fits.
 */
static int solve_layers(struct kv_fit_in *in, bool fit, bool *found,
			char *err)
{
	uint64_t margin = fit ? KV_FIT_MARGIN : 0;
	struct kv_fit_in x = *in;
	struct kv_fit f;
	uint32_t n = in->m->n_layers;
	uint64_t need = in->users ? in->users : 1;
	bool ok = false;
	int e;
	*found = false;
	if (in->mem <= margin)
		return 0;
	x.mem = in->mem - margin;
	if (in->m->n_experts && !in->off.moe_host) {
		x.off.gpu_layers = n + 1;
		for (uint32_t k = 0; k <= n && !ok; k++) {
			x.off.moe_host = k;
			if ((e = layers_fit(&x, need, &ok, &f, err)))
				return e;
		}
		if (!ok)
			x.off.moe_host = fit ? 0 : n;
	}
	for (uint32_t g = n + 2; !ok && g-- > 0;) {
		x.off.gpu_layers = g;
		if ((e = layers_fit(&x, need, &ok, &f, err)))
			return e;
	}
	if (ok) {
		in->off.gpu_layers = x.off.gpu_layers;
		in->off.moe_host = x.off.moe_host;
	}
	*found = ok;
	return 0;
}

/* kv_plan_solve, r->in's counts derived */
static int plan_solve(enum kv_plan_solve s, struct kv_plan_row *r, char *err)
{
	struct kv_fit_in *in = &r->in;
	int e;
	r->none = false;
	r->held = 0;
	if (s == KV_PLAN_CTX) {
		uint64_t ctx;
		if ((e = kv_fit_solve_ctx(in, in->users, &ctx, err)))
			return e;
		if (!ctx) { /* f: the shortest context, to say why */
			r->none = true;
			in->ctx = in->prefix ? in->prefix : 1;
			return kv_fit_solve(in, &r->f, err);
		}
		/* no engine serves past the model's positions (vLLM refuses
		 * a max_model_len beyond them): the answer stops there */
		if (in->m->max_pos && ctx > in->m->max_pos) {
			r->held = ctx;
			ctx = in->m->max_pos;
		}
		in->ctx = ctx;
	} else if (s == KV_PLAN_TP) {
		uint32_t tp;
		if ((e = kv_fit_solve_tp(in, in->users, kv_plan_max_tp(in->m),
					 &tp, err)))
			return e;
		if (!tp) {
			r->none = true;
			return 0;
		}
		in->tp = tp;
	} else if (s == KV_PLAN_LAYERS) {
		bool found;
		if ((e = solve_layers(in, false, &found, err)))
			return e;
		if (!found) { /* f: every layer in host memory, to say why */
			r->none = true;
			in->off.gpu_layers = 0;
			int e2 = kv_fit_solve(in, &r->f, err);
			return e2 == KV_EINVAL && !in->off.host_mem ? 0 : e2;
		}
	}
	return kv_fit_solve(in, &r->f, err);
}

/* -ngl auto: the layers llama.cpp's --fit picks, into r->in.off (none:
 * r->none, f at -ngl 0). */
static int fit_auto(struct kv_plan_row *r, char *err)
{
	const struct kv_params_memo *was = r->in.counts;
	struct kv_params_memo c;
	bool found;
	kv_fit_memo(&r->in, &c);
	int e = solve_layers(&r->in, true, &found, err);
	r->in.counts = was;
	kv_params_memo_free(&c);
	if (!e && !found) {
		r->none = true;
		r->in.off.gpu_layers = 0;
		e = kv_fit_solve(&r->in, &r->f, err);
		return e == KV_EINVAL && !r->in.off.host_mem ? 0 : e;
	}
	return e;
}

int kv_plan_run(const struct kv_plan_opts *o, struct kv_plan_row *r,
		char *err)
{
	int e;
	r->none = false;
	r->held = 0;
	if (r->in.off.on && o->ngl == KV_NGL_AUTO &&
	    o->solve != KV_PLAN_LAYERS && !refuses(o, &r->in, err) &&
	    ((e = fit_auto(r, err)) || r->none))
		return e;
	if ((e = kv_plan_check(o, r, err)) ||
	    (o->solve != KV_PLAN_USERS &&
	     (e = kv_plan_solve(o->solve, r, err))))
		return e;
	return r->none ? 0 : kv_plan_time(o, r, err);
}

int kv_plan_solve(enum kv_plan_solve s, struct kv_plan_row *r, char *err)
{
	/* the search and the row's own solve count the model once */
	const struct kv_params_memo *was = r->in.counts;
	struct kv_params_memo c;
	kv_fit_memo(&r->in, &c);
	int e = plan_solve(s, r, err);
	r->in.counts = was;
	kv_params_memo_free(&c);
	return e;
}

const char *kv_plan_bound(const struct kv_fit *f)
{
	if (f->missing)
		return "weights";
	/* a split's host memory (known), where it holds the fewest */
	const struct kv_split *sp = &f->split;
	if (sp->host_missing ||
	    (sp->host_mem && isfinite(sp->host_users) &&
	     f->max_concurrency >= sp->host_users &&
	     !(f->max_seqs && sp->host_users > (double)f->max_seqs)))
		return "host_memory";
	if (f->max_seqs && f->max_concurrency > (double)f->max_seqs &&
	    f->users >= (double)f->max_seqs)
		return "max_num_seqs";
	return "kv_memory";
}

/* What a row that does not hold its weights needs on a GPU: the
 * weights, the drafter's, the reserve, the engine's own, LoRA's slots,
 * the towers and their encoder outputs. */
static uint64_t weights_need(const struct kv_fit_in *in,
			     const struct kv_fit *f)
{
	return f->weights + f->draft_weights + in->reserve + f->runtime +
	       f->lora_bytes + f->vision_weights + f->audio_weights +
	       f->encoder_bytes;
}

struct kv_plan_refusal kv_plan_refusal(const struct kv_fit_in *in,
				       const struct kv_fit *f)
{
	char err[KV_ERRLEN];
	struct kv_plan_refusal r = {.why = KV_PLAN_SERVES};
	if (f->missing && in->off.on) {
		/* fewer layers on the GPU (the solve that --solve layers
		 * runs) */
		struct kv_fit_in x = *in;
		struct kv_params_memo c;
		bool found;
		r.why = KV_PLAN_WEIGHTS;
		r.need = f->weights + in->reserve + f->runtime;
		kv_fit_memo(&x, &c);
		x.users = 1;
		if (!solve_layers(&x, false, &found, err) && found) {
			r.layers = true;
			r.ngl = x.off.gpu_layers;
			r.moe = x.off.moe_host;
		}
		kv_params_memo_free(&c);
	} else if (f->missing && in->server->by_layers) {
		/* llama.cpp splits layers over GPUs, not heads */
		struct kv_fit_in x = *in;
		struct kv_params_memo c;
		struct kv_fit g;
		r.why = KV_PLAN_WEIGHTS;
		r.need = weights_need(in, f);
		kv_fit_memo(&x, &c);
		for (x.pp = in->pp + 1; x.pp <= in->m->n_layers && !r.pp;
		     x.pp++)
			if (!kv_fit_solve(&x, &g, err) && g.users_whole)
				r.pp = x.pp;
		kv_params_memo_free(&c);
	} else if (f->missing) {
		r.why = KV_PLAN_WEIGHTS;
		r.need = weights_need(in, f);
		/* an error leaves tp 0: no --tp to suggest */
		kv_fit_solve_tp(in, 1, kv_plan_max_tp(in->m), &r.tp, err);
	} else if (in->server->start_check && !f->users_whole) {
		struct kv_fit_in one = *in;
		one.max_seqs = 0;
		r.why = KV_PLAN_VLLM;
		r.need = f->seq_bytes + f->shared_bytes;
		kv_fit_solve_ctx(&one, 1, &r.ctx, err);
	}
	return r;
}

const char *kv_plan_disagrees(const struct kv_plan_opts *o,
			      const struct kv_plan *p, uint64_t *row,
			      uint64_t *given)
{
	if (p->users && o->nusers &&
	    (o->nusers > 1 || o->users[0] != p->users)) {
		*row = p->users;
		*given = o->users[0];
		return "--users";
	}
	if (p->tp && o->tp_given && o->tp != p->tp) {
		*row = p->tp;
		*given = o->tp;
		return "--tp";
	}
	if (p->block && o->blocks) {
		for (size_t i = 0; i < o->nblocks; i++)
			if (o->blocks[i] == p->block)
				return NULL;
		*row = p->block;
		*given = o->blocks[0];
		return "--block-size";
	}
	return NULL;
}

int kv_plan_params(const struct kv_plan_opts *o, const struct kv_plan *p,
		   struct kv_params *out, uint64_t *bytes, const char **src,
		   char *err)
{
	const struct kv_model *m = p->m;
	struct kv_fit_in in = {0};
	uint64_t b;
	int e;
	const struct kv_server *ideal = kv_server_get(KV_SERVER_IDEAL);
	*src = weights_from(o, p, ideal, &in);
	if ((e = kv_model_params_as(m, in.quant ? in.quant : &m->quant, out,
				    err)))
		return e;
	if (kv_weight_bytes(out->total, weights_dtype(o, m, ideal),
			    &b)) {
		snprintf(err, KV_ERRLEN, "%s: weight bytes overflow 64 bits",
			 m->name);
		return KV_ERANGE;
	}
	*bytes = o->weights ? o->weights
		 : in.weights ? in.weights
		 : in.stored  ? out->bytes
			      : b;
	return 0;
}
