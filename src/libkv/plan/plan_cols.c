/*
 * plan_cols.c - kvfit's columns, declared once: their names, and each
 * solved row's cells, the memory's first, then a timed row's.
 */
#include <math.h>
#include <stdio.h>

#include "kv/ep.h"
#include "kv/lora.h"
#include "kv/offload.h"
#include "kv/plan.h"
#include "kv/audio.h"
#include "kv/vision.h"

const char *const kv_prow_names[KV_PROW_NCOLS] = {
	[KV_PROW_MODEL] = "model",
	[KV_PROW_GPU] = "gpu",
	[KV_PROW_GPUS] = "gpus",
	[KV_PROW_TP] = "tp",
	[KV_PROW_PP] = "pp",
	[KV_PROW_ENGINE] = "engine",
	[KV_PROW_ENGINE_RULES] = "engine_rules",
	[KV_PROW_BLOCK] = "block",
	[KV_PROW_KV_DTYPE] = "kv_dtype",
	[KV_PROW_CTX] = "ctx",
	[KV_PROW_WEIGHTS_BYTES] = "weights_bytes",
	[KV_PROW_WEIGHTS_SOURCE] = "weights_source",
	[KV_PROW_RUNTIME_BYTES] = "runtime_bytes",
	[KV_PROW_ACTIVATION_BYTES] = "activation_bytes",
	[KV_PROW_SAMPLER_BYTES] = "sampler_bytes",
	[KV_PROW_GRAPH_BYTES] = "graph_bytes",
	[KV_PROW_NONTORCH_BYTES] = "nontorch_bytes",
	[KV_PROW_FREE_KV_BYTES] = "free_kv_bytes",
	[KV_PROW_BYTES_PER_TOKEN] = "bytes_per_token",
	[KV_PROW_DUP_BYTES_PER_TOKEN] = "dup_bytes_per_token",
	[KV_PROW_KV_TOKENS] = "kv_tokens",
	[KV_PROW_NUM_BLOCKS] = "num_blocks",
	[KV_PROW_MAX_CONCURRENCY] = "max_concurrency",
	[KV_PROW_MAX_NUM_SEQS] = "max_num_seqs",
	[KV_PROW_BATCHED_TOKENS] = "batched_tokens",
	[KV_PROW_USERS] = "users",
	[KV_PROW_USERS_WHOLE] = "users_whole",
	[KV_PROW_KV_BYTES] = "kv_bytes",
	[KV_PROW_DUP_BYTES] = "dup_bytes",
	[KV_PROW_STEP_USERS] = "step_users",
	[KV_PROW_STEP_FITS] = "step_fits",
	[KV_PROW_STEP_WEIGHT_BYTES] = "step_weight_bytes",
	[KV_PROW_STEP_KV_BYTES] = "step_kv_bytes",
	[KV_PROW_KV_WEIGHT_RATIO] = "kv_weight_ratio",
	[KV_PROW_KV_SHARE] = "kv_share",
	[KV_PROW_STEP_MS] = "step_ms",
	[KV_PROW_TOKENS_PER_S] = "tokens_per_s",
	[KV_PROW_COMPUTE_MS] = "compute_ms",
	[KV_PROW_BOUND] = "bound",
	[KV_PROW_GPU_LAYERS] = "gpu_layers",
	[KV_PROW_CPU_MOE_LAYERS] = "cpu_moe_layers",
	[KV_PROW_GPU_WEIGHTS_BYTES] = "gpu_weights_bytes",
	[KV_PROW_GPU_KV_BYTES] = "gpu_kv_bytes",
	[KV_PROW_GPU_COMPUTE_BYTES] = "gpu_compute_bytes",
	[KV_PROW_HOST_WEIGHTS_BYTES] = "host_weights_bytes",
	[KV_PROW_HOST_KV_BYTES] = "host_kv_bytes",
	[KV_PROW_HOST_COMPUTE_BYTES] = "host_compute_bytes",
	[KV_PROW_HOST_MEM_BYTES] = "host_mem_bytes",
	[KV_PROW_HOST_FITS] = "host_fits",
	[KV_PROW_STEP_GPU_MS] = "step_gpu_ms",
	[KV_PROW_STEP_HOST_MS] = "step_host_ms",
	[KV_PROW_STEP_LINK_MS] = "step_link_ms",
	[KV_PROW_ISL] = "isl",
	[KV_PROW_OSL] = "osl",
	[KV_PROW_PREFILL_CHUNK] = "prefill_chunk",
	[KV_PROW_PREFILL_MS] = "prefill_ms",
	[KV_PROW_DECODE_MS] = "decode_ms",
	[KV_PROW_TTFT_MS] = "ttft_ms",
	[KV_PROW_TPOT_MS] = "tpot_ms",
	[KV_PROW_LATENCY_MS] = "latency_ms",
	[KV_PROW_OUT_TOKENS_PER_S] = "out_tokens_per_s",
	[KV_PROW_OUT_TOKENS_PER_S_GPU] = "out_tokens_per_s_gpu",
	[KV_PROW_PREFILL_BOUND] = "prefill_bound",
	[KV_PROW_DECODE_BOUND] = "decode_bound",
	[KV_PROW_MEETS_TARGET] = "meets_target",
	[KV_PROW_USD_PER_MTOK] = "usd_per_mtok",
	[KV_PROW_ARRIVALS] = "arrivals",
	[KV_PROW_TIME_SOURCE] = "time_source",
	[KV_PROW_IMAGES] = "images",
	[KV_PROW_IMAGE_TOKENS] = "image_tokens",
	[KV_PROW_VISION_WEIGHTS_BYTES] = "vision_weights_bytes",
	[KV_PROW_ENCODER_ITEMS] = "encoder_items",
	[KV_PROW_ENCODER_BYTES] = "encoder_bytes",
	[KV_PROW_ENCODER_PEAK_BYTES] = "encoder_peak_bytes",
	[KV_PROW_MAX_LORAS] = "max_loras",
	[KV_PROW_LORA_RANK] = "lora_rank",
	[KV_PROW_LORA_BYTES] = "lora_bytes",
	[KV_PROW_LORA_HOST_BYTES] = "lora_host_bytes",
	[KV_PROW_LORA_STEP_BYTES] = "lora_step_bytes",
	[KV_PROW_LORA_STEP_FLOPS] = "lora_step_flops",
	[KV_PROW_OFFLOAD_KV_TOKENS] = "offload_kv_tokens",
	[KV_PROW_OFFLOAD_KV_BYTES] = "offload_kv_bytes",
	[KV_PROW_HIT_TOKENS] = "hit_tokens",
	[KV_PROW_LOAD_MS] = "load_ms",
	[KV_PROW_RECOMPUTE_MS] = "recompute_ms",
	[KV_PROW_SPEC_METHOD] = "spec_method",
	[KV_PROW_SPEC_TOKENS] = "spec_tokens",
	[KV_PROW_DRAFT_WEIGHTS_BYTES] = "draft_weights_bytes",
	[KV_PROW_DRAFT_BYTES_PER_TOKEN] = "draft_bytes_per_token",
	[KV_PROW_ACCEPTANCE] = "acceptance",
	[KV_PROW_TOKENS_PER_STEP] = "tokens_per_step",
	[KV_PROW_EP] = "ep",
	[KV_PROW_DP] = "dp",
	[KV_PROW_EXPERTS_PER_RANK] = "experts_per_rank",
	[KV_PROW_A2A] = "a2a",
	[KV_PROW_A2A_BYTES] = "a2a_bytes",
	[KV_PROW_A2A_MS] = "a2a_ms",
	[KV_PROW_IMAGE_SIZE] = "image_size",
	[KV_PROW_ENCODER_FLOPS] = "encoder_flops",
	[KV_PROW_ENCODER_MS] = "encoder_ms",
	[KV_PROW_AUDIO_SECONDS] = "audio_seconds",
	[KV_PROW_AUDIO_TOKENS] = "audio_tokens",
	[KV_PROW_AUDIO_WEIGHTS_BYTES] = "audio_weights_bytes",
};

/* A count, or an empty cell where the engine has none. */
static void some(struct kv_cell *out, uint64_t u)
{
	if (u)
		kv_cell_num(out, KV_CELL_U64, u);
	else
		kv_cell_empty(out);
}

bool kv_plan_target(const struct kv_plan_opts *o)
{
	return o->work.isl && (o->max_ttft > 0 || o->max_tpot > 0);
}

/* Whether o asks for a host tier of KV. */
static bool host_tier(const struct kv_plan_opts *o)
{
	return o->offload && (o->offload->bytes || o->offload->ratio > 0);
}

/* Appends columns [from, to] to out at *n (out NULL: counts them). */
static void span(enum kv_prow_col *out, size_t *n, enum kv_prow_col from,
		 enum kv_prow_col to)
{
	for (int c = from; c <= (int)to; c++) {
		if (out)
			out[*n] = (enum kv_prow_col)c;
		(*n)++;
	}
}

size_t kv_prow_cols(const struct kv_plan_opts *o, enum kv_prow_col *out)
{
	size_t n = 0;
	span(out, &n, KV_PROW_MODEL, KV_PROW_BOUND);
	if (o->split)
		span(out, &n, KV_PROW_GPU_LAYERS, KV_PROW_STEP_LINK_MS);
	if (o->lora)
		span(out, &n, KV_PROW_MAX_LORAS, KV_PROW_LORA_STEP_FLOPS);
	if (host_tier(o))
		span(out, &n, KV_PROW_OFFLOAD_KV_TOKENS, KV_PROW_OFFLOAD_KV_BYTES);
	if (o->images)
		span(out, &n, KV_PROW_IMAGES, KV_PROW_ENCODER_PEAK_BYTES);
	if (o->audio_s > 0)
		span(out, &n, KV_PROW_AUDIO_SECONDS,
		     KV_PROW_AUDIO_WEIGHTS_BYTES);
	if (o->audio_s > 0 && !o->images)
		span(out, &n, KV_PROW_ENCODER_ITEMS, KV_PROW_ENCODER_BYTES);
	if (kv_plan_ep(o))
		span(out, &n, KV_PROW_EP, KV_PROW_A2A_MS);
	if (o->work.isl)
		span(out, &n, KV_PROW_ISL, KV_PROW_TIME_SOURCE);
	if (o->work.isl && o->offload)
		span(out, &n, KV_PROW_HIT_TOKENS, KV_PROW_RECOMPUTE_MS);
	if (kv_spec_on(&o->spec))
		span(out, &n, KV_PROW_SPEC_METHOD, KV_PROW_TOKENS_PER_STEP);
	if (o->images || o->audio_s > 0)
		span(out, &n, o->images ? KV_PROW_IMAGE_SIZE
					: KV_PROW_ENCODER_FLOPS,
		     o->work.isl ? KV_PROW_ENCODER_MS : KV_PROW_ENCODER_FLOPS);
	return n;
}

size_t kv_prow_ncols(const struct kv_plan_opts *o)
{
	return kv_prow_cols(o, NULL);
}

/* Whether c is a timed row's (empty where the row was not timed; isl and
 * osl aside). */
static bool timed_col(enum kv_prow_col c)
{
	return (c > KV_PROW_OSL && c <= KV_PROW_TIME_SOURCE) ||
	       (c >= KV_PROW_HIT_TOKENS && c <= KV_PROW_RECOMPUTE_MS);
}

/* Speculative decoding's cells (KV_PROW_SPEC_METHOD on). */
static void spec_cell(const struct kv_plan_row *r, const struct kv_plan_opts *o,
		      enum kv_prow_col c, struct kv_cell *out)
{
	const struct kv_spec *s = &o->spec;
	double e = kv_spec_tokens(s);
	switch (c) {
	case KV_PROW_SPEC_METHOD: kv_cell_str(out, kv_spec_method_name(s->method)); break;
	case KV_PROW_SPEC_TOKENS: kv_cell_num(out, KV_CELL_U64, s->k); break;
	case KV_PROW_DRAFT_WEIGHTS_BYTES: kv_cell_num(out, KV_CELL_BYTES, r->f.draft_weights); break;
	case KV_PROW_DRAFT_BYTES_PER_TOKEN: kv_cell_num(out, KV_CELL_BYTES, r->f.draft_per_token); break;
	case KV_PROW_ACCEPTANCE:
		if (s->accept > 0)
			kv_cell_real(out, s->accept, 3);
		break;
	case KV_PROW_TOKENS_PER_STEP:
		if (!isnan(e))
			kv_cell_real(out, e, 3);
		break;
	default: break;
	}
}

bool kv_plan_ep(const struct kv_plan_opts *o)
{
	return o->dp > 1 || o->ep > 1 || o->ep_all ||
	       (o->dp_attention && !o->dp_one && o->tp > 1);
}

/* Expert parallelism's and data-parallel attention's cells
 * (KV_PROW_EP on): the decode step's collectives, of its step_users. */
static void ep_cell(const struct kv_plan_row *r, const struct kv_plan_opts *o,
		    enum kv_prow_col c, struct kv_cell *out)
{
	const struct kv_fit_in *in = &r->in;
	const struct kv_serve_in *w = &o->work;
	const struct kv_ep_rule *rl = kv_ep_rule(in->server);
	double t = (double)r->f.step_users;
	switch (c) {
	case KV_PROW_EP: kv_cell_num(out, KV_CELL_U64, kv_ep_size(in)); break;
	case KV_PROW_DP: kv_cell_num(out, KV_CELL_U64, kv_ep_dp(in)); break;
	case KV_PROW_EXPERTS_PER_RANK: some(out, kv_ep_experts(in)); break;
	case KV_PROW_A2A:
		if (rl && kv_ep_a2a_calls(in))
			kv_cell_str(out, in->ep > 1 ? rl->a2a_name
						    : "allgather");
		break;
	case KV_PROW_A2A_BYTES:
		kv_cell_num(out, KV_CELL_BYTES,
			    (uint64_t)llround(kv_ep_a2a_bytes(in, t)));
		break;
	case KV_PROW_A2A_MS:
		kv_cell_real(out, kv_ep_a2a_ms(in, t, w->link_gbps,
					       w->ar_base_us, w->ar_step_us),
			     3);
		break;
	default: break;
	}
}

/* The towers' cells (KV_PROW_IMAGE_SIZE or KV_PROW_ENCODER_FLOPS on):
 * the image as the vision tower sees it (WxH pixels), the towers' FLOPs
 * on a request's images and audio on one GPU (kv_towers_flops), their
 * time where the row was timed. */
static void tower_cell(const struct kv_plan_row *r, enum kv_prow_col c,
		       struct kv_cell *out)
{
	const struct kv_fit_in *in = &r->in;
	struct kv_vision_image im;
	struct kv_vision_flops fl[2];
	uint64_t params[2];
	char err[KV_ERRLEN];
	switch (c) {
	case KV_PROW_IMAGE_SIZE:
		if (kv_vision_image(in->m, in->image_w, in->image_h, &im, err))
			break;
		kv_cell_str(out, NULL);
		snprintf(out->buf, sizeof out->buf, "%ux%u", im.width,
			 im.height);
		out->s = out->buf;
		break;
	case KV_PROW_ENCODER_FLOPS:
		kv_towers_flops(in, fl, params);
		kv_cell_num(out, KV_CELL_U64,
			    (uint64_t)llround(fl[0].linear + fl[0].attn +
					      fl[1].linear + fl[1].attn));
		break;
	case KV_PROW_ENCODER_MS:
		if (r->timed)
			kv_cell_real(out, r->s.encoder.ms, 3);
		break;
	default: break;
	}
}

/* The audio's cells (KV_PROW_AUDIO_SECONDS on): the clip's seconds, its
 * tokens in the prompt, the audio tower's weights on one GPU. */
static void audio_cell(const struct kv_plan_row *r,
		       const struct kv_plan_opts *o, enum kv_prow_col c,
		       struct kv_cell *out)
{
	switch (c) {
	case KV_PROW_AUDIO_SECONDS: kv_cell_real(out, o->audio_s, 3); break;
	case KV_PROW_AUDIO_TOKENS:
		kv_cell_num(out, KV_CELL_U64,
			    kv_plan_audio_tokens(o, r->in.m));
		break;
	case KV_PROW_AUDIO_WEIGHTS_BYTES:
		kv_cell_num(out, KV_CELL_BYTES, r->f.audio_weights);
		break;
	default: break;
	}
}

/* A split row's cell of column c (empty for a row of another engine). */
static void split_cell(const struct kv_plan_row *r, enum kv_prow_col c,
		       struct kv_cell *out)
{
	const struct kv_fit *f = &r->f;
	const struct kv_split *sp = &f->split;
	if (!r->in.off.on)
		return;
	switch (c) {
	case KV_PROW_GPU_LAYERS: /* as llama.cpp counts them, the head one */
		kv_cell_num(out, KV_CELL_U64, sp->gpu_layers + sp->head_gpu);
		break;
	case KV_PROW_CPU_MOE_LAYERS: kv_cell_num(out, KV_CELL_U64, sp->moe_host); break;
	case KV_PROW_GPU_WEIGHTS_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->weights); break;
	case KV_PROW_GPU_KV_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->kv_bytes); break;
	case KV_PROW_GPU_COMPUTE_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->runtime); break;
	case KV_PROW_HOST_WEIGHTS_BYTES: kv_cell_num(out, KV_CELL_BYTES, sp->host_weights); break;
	case KV_PROW_HOST_KV_BYTES: kv_cell_num(out, KV_CELL_BYTES, sp->host_kv); break;
	case KV_PROW_HOST_COMPUTE_BYTES: kv_cell_num(out, KV_CELL_BYTES, sp->host_compute); break;
	case KV_PROW_HOST_MEM_BYTES:
		if (sp->host_mem)
			kv_cell_num(out, KV_CELL_BYTES, sp->host_mem);
		break;
	case KV_PROW_HOST_FITS: /* its weights and compute, and a user */
		if (sp->host_mem)
			kv_cell_str(out, sp->host_missing || !(sp->host_users >= 1)
						 ? "no" : "yes");
		break;
	case KV_PROW_STEP_GPU_MS: kv_cell_real(out, sp->gpu_ms, 3); break;
	case KV_PROW_STEP_HOST_MS: kv_cell_real(out, sp->host_ms, 3); break;
	case KV_PROW_STEP_LINK_MS: kv_cell_real(out, sp->link_ms, 3); break;
	default: break;
	}
}

void kv_prow_cell(const struct kv_plan_row *r, const struct kv_plan_opts *o,
		  const char *gpu, enum kv_prow_col c, struct kv_cell *out)
{
	const struct kv_fit_in *in = &r->in;
	const struct kv_fit *f = &r->f;
	const struct kv_serve *s = &r->s;
	uint64_t tier_tokens, tier_bytes;
	uint32_t g = kv_ep_dp(in); /* the groups: users are all of theirs */
	kv_cell_empty(out);
	if (c >= KV_PROW_AUDIO_SECONDS) {
		audio_cell(r, o, c, out);
		return;
	}
	if (c >= KV_PROW_IMAGE_SIZE) {
		tower_cell(r, c, out);
		return;
	}
	if (c >= KV_PROW_EP) {
		ep_cell(r, o, c, out);
		return;
	}
	if (c >= KV_PROW_SPEC_METHOD) {
		spec_cell(r, o, c, out);
		return;
	}
	if (timed_col(c) && !r->timed)
		return; /* a row not timed: only isl and osl */
	switch (c) {
	case KV_PROW_MODEL: kv_cell_str(out, in->m->name); break;
	case KV_PROW_GPU: kv_cell_str(out, gpu); break;
	case KV_PROW_GPUS: kv_cell_num(out, KV_CELL_U64, (uint64_t)in->tp * in->pp * g); break;
	case KV_PROW_TP: kv_cell_num(out, KV_CELL_U64, in->tp); break;
	case KV_PROW_PP: kv_cell_num(out, KV_CELL_U64, in->pp); break;
	case KV_PROW_ENGINE: kv_cell_str(out, in->server->name); break;
	case KV_PROW_ENGINE_RULES:
		kv_cell_str(out, NULL);
		out->s = kv_server_rules(in->server, out->buf, sizeof out->buf);
		break;
	case KV_PROW_BLOCK: kv_cell_num(out, KV_CELL_U64, f->block); break;
	case KV_PROW_KV_DTYPE:
		kv_cell_str(out, NULL);
		out->s = kv_dtype_kv_name(in->kv_dtype, kv_fit_v_dtype(in), out->buf, sizeof out->buf);
		break;
	case KV_PROW_CTX: kv_cell_num(out, KV_CELL_U64, in->ctx); break;
	case KV_PROW_WEIGHTS_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->weights); break;
	case KV_PROW_WEIGHTS_SOURCE: kv_cell_str(out, r->wsrc); break;
	case KV_PROW_RUNTIME_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->runtime); break;
	case KV_PROW_ACTIVATION_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->rt.activation); break;
	case KV_PROW_SAMPLER_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->rt.sampler); break;
	case KV_PROW_GRAPH_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->rt.graphs); break;
	case KV_PROW_NONTORCH_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->rt.nontorch); break;
	case KV_PROW_FREE_KV_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->free_kv); break;
	case KV_PROW_BYTES_PER_TOKEN: kv_cell_num(out, KV_CELL_BYTES, f->bytes_per_token); break;
	case KV_PROW_DUP_BYTES_PER_TOKEN: kv_cell_num(out, KV_CELL_BYTES, f->dup_per_token); break;
	case KV_PROW_KV_TOKENS: kv_cell_num(out, KV_CELL_U64, f->kv_tokens); break;
	case KV_PROW_NUM_BLOCKS: some(out, f->num_blocks); break;
	case KV_PROW_MAX_CONCURRENCY: kv_cell_real(out, kv_fit_users_shown(f->max_concurrency) * g, 2); break;
	case KV_PROW_MAX_NUM_SEQS: some(out, f->max_seqs * g); break;
	case KV_PROW_BATCHED_TOKENS: some(out, f->batched_tokens); break;
	case KV_PROW_USERS: kv_cell_real(out, kv_fit_users_shown(f->users) * g, 2); break;
	case KV_PROW_USERS_WHOLE: kv_cell_num(out, KV_CELL_U64, f->users_whole * g); break;
	case KV_PROW_KV_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->kv_bytes); break;
	case KV_PROW_DUP_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->dup_bytes); break;
	case KV_PROW_STEP_USERS: kv_cell_num(out, KV_CELL_U64, f->step_users * g); break;
	case KV_PROW_STEP_FITS: kv_cell_str(out, kv_fit_step_fits(f) ? "yes" : "no"); break;
	case KV_PROW_STEP_WEIGHT_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->step_weight_bytes); break;
	case KV_PROW_STEP_KV_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->step_kv_bytes); break;
	case KV_PROW_KV_WEIGHT_RATIO: kv_cell_real(out, f->kv_weight_ratio, 2); break;
	case KV_PROW_KV_SHARE: kv_cell_real(out, f->kv_share, 2); break;
	case KV_PROW_STEP_MS: kv_cell_real(out, f->step_ms, 3); break;
	case KV_PROW_TOKENS_PER_S: kv_cell_real(out, f->tokens_per_s * g, 1); break;
	case KV_PROW_COMPUTE_MS: kv_cell_real(out, f->compute_ms, 3); break;
	case KV_PROW_BOUND: kv_cell_str(out, kv_plan_bound(f)); break;
	case KV_PROW_GPU_LAYERS:
	case KV_PROW_CPU_MOE_LAYERS:
	case KV_PROW_GPU_WEIGHTS_BYTES:
	case KV_PROW_GPU_KV_BYTES:
	case KV_PROW_GPU_COMPUTE_BYTES:
	case KV_PROW_HOST_WEIGHTS_BYTES:
	case KV_PROW_HOST_KV_BYTES:
	case KV_PROW_HOST_COMPUTE_BYTES:
	case KV_PROW_HOST_MEM_BYTES:
	case KV_PROW_HOST_FITS:
	case KV_PROW_STEP_GPU_MS:
	case KV_PROW_STEP_HOST_MS:
	case KV_PROW_STEP_LINK_MS: split_cell(r, c, out); break;
	case KV_PROW_ISL: kv_cell_num(out, KV_CELL_U64, o->work.isl); break;
	case KV_PROW_OSL: kv_cell_num(out, KV_CELL_U64, o->work.osl); break;
	case KV_PROW_PREFILL_CHUNK: kv_cell_num(out, KV_CELL_U64, s->chunk); break;
	case KV_PROW_PREFILL_MS: kv_cell_real(out, s->prefill.ms, 3); break;
	case KV_PROW_DECODE_MS: kv_cell_real(out, s->decode.ms, 3); break;
	case KV_PROW_TTFT_MS: kv_cell_real(out, s->ttft_ms, 3); break;
	case KV_PROW_TPOT_MS: kv_cell_real(out, s->tpot_ms, 3); break;
	case KV_PROW_LATENCY_MS: kv_cell_real(out, s->latency_ms, 1); break;
	case KV_PROW_OUT_TOKENS_PER_S: kv_cell_real(out, s->tokens_per_s, 1); break;
	case KV_PROW_OUT_TOKENS_PER_S_GPU: kv_cell_real(out, s->tokens_per_s_gpu, 1); break;
	case KV_PROW_PREFILL_BOUND: kv_cell_str(out, s->prefill.bound); break;
	case KV_PROW_DECODE_BOUND: kv_cell_str(out, s->decode.bound); break;
	case KV_PROW_MEETS_TARGET:
		if (kv_plan_target(o))
			kv_cell_str(out, r->meets ? "yes" : "no");
		break;
	case KV_PROW_USD_PER_MTOK: kv_cell_real(out, r->usd_per_mtok, 4); break;
	case KV_PROW_ARRIVALS: kv_cell_str(out, kv_plan_arrivals_name(o->work.arrivals)); break;
	case KV_PROW_TIME_SOURCE: kv_cell_str(out, s->source); break;
	case KV_PROW_IMAGES: kv_cell_num(out, KV_CELL_U64, o->images); break;
	case KV_PROW_IMAGE_TOKENS: kv_cell_num(out, KV_CELL_U64, kv_plan_image_tokens(o, in->m)); break;
	case KV_PROW_VISION_WEIGHTS_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->vision_weights); break;
	case KV_PROW_ENCODER_ITEMS: kv_cell_num(out, KV_CELL_U64, f->encoder_items); break;
	case KV_PROW_ENCODER_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->encoder_bytes); break;
	case KV_PROW_ENCODER_PEAK_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->encoder_peak); break;
	case KV_PROW_MAX_LORAS: kv_cell_num(out, KV_CELL_U64, kv_lora_max_loras(in)); break;
	case KV_PROW_LORA_RANK: kv_cell_num(out, KV_CELL_U64, kv_lora_rank(in)); break;
	case KV_PROW_LORA_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->lora_bytes); break;
	case KV_PROW_LORA_HOST_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->lora_host_bytes); break;
	case KV_PROW_LORA_STEP_BYTES: kv_cell_num(out, KV_CELL_BYTES, f->step_lora_bytes); break;
	case KV_PROW_LORA_STEP_FLOPS: kv_cell_real(out, f->step_lora_flops, 0); break;
	case KV_PROW_OFFLOAD_KV_TOKENS:
	case KV_PROW_OFFLOAD_KV_BYTES:
		kv_offload_tier(in, f, &tier_tokens, &tier_bytes);
		if (c == KV_PROW_OFFLOAD_KV_TOKENS)
			kv_cell_num(out, KV_CELL_U64, tier_tokens);
		else
			kv_cell_num(out, KV_CELL_BYTES, tier_bytes);
		break;
	case KV_PROW_HIT_TOKENS: kv_cell_num(out, KV_CELL_U64, r->hit_tokens); break;
	case KV_PROW_LOAD_MS: kv_cell_real(out, r->load_ms, 3); break;
	case KV_PROW_RECOMPUTE_MS: kv_cell_real(out, r->recompute_ms, 3); break;
	default: break;
	}
}
