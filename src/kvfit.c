/*
 * kvfit - how many sequences of a model fit beside its weights on a GPU,
 * and what one decode step of them costs. Parses options, reads configs
 * (or kvsize's rows on stdin), asks libkv's plan module for each row of
 * model x KV format x context (x block size x users x engine) and its
 * solve, prints.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kvfit.h"
#include "kv/eff.h"
#include "kv/fit.h"
#include "kv/spec.h"
#include "kv/units.h"
#include "kv/vision.h"

static const char usage_head[] =
	"Usage: kvfit [OPTIONS] CONFIG...\n"
	"       kvfit --params CONFIG...\n"
	"How many sequences of each model fit beside its weights on a GPU,\n"
	"and the bytes and time of one decode step. CONFIG is a path (a\n"
	"config.json, a snapshot, or a GGUF file: llama.cpp's rules by\n"
	"default), a config name, or - for stdin (a config, or kvsize's TSV\n"
	"rows).\n"
	"\n";
/* between the two, the options of options.c's table */
static const char usage_foot[] =
	"\n"
	"Exit status: 0 success, 1 fewer than --min-users fit (or a solve\n"
	"found nothing), 2 bad usage or input. See kvfit(1).\n";


/* A size that must be above 0 (--gpu-mem, --weights, --kv-memory). */
static int size_above0(const char *opt, const char *s, uint64_t *out)
{
	int e = cli_size(opt, s, out);
	if (!e && !*out)
		return cli_usage("%s: must be above 0", opt);
	return e;
}

/* A token count of at least 1 (8k, 128K). */
static int tokens_above0(const char *opt, const char *s, uint64_t *out)
{
	int e = cli_tokens(opt, s, out);
	if (!e && !*out)
		return cli_usage("%s: must be at least 1, got '%s'", opt, s);
	return e;
}

/* A fraction in (0, 1] (--util, the efficiencies). */
static int fraction(const char *opt, const char *s, double *out)
{
	int e = cli_double(opt, s, -1e300, 1e300, out);
	if (!e && !(*out > 0 && *out <= 1))
		return cli_usage("%s: must be in (0, 1], got '%s'", opt, s);
	return e;
}

/* The GPU's options and how the engine spends its memory. Returns 0,
 * CLI_USAGE (said) or CLI_NOT_MINE. */
static int opt_gpu(int c, const char *s, struct args *a)
{
	struct kv_plan_opts *o = &a->o;
	char list[256];
	switch (c) {
	case 'b':
		return cli_u64s("--block-size", s, 1, KV_MAX_BLOCK, &o->blocks,
				&o->nblocks);
	case 'g': a->gpu = s; return 0;
	case OPT_GPU_FILE: a->gpu_file = s; return 0;
	case 'm':
		a->mem_text = s;
		return size_above0("--gpu-mem", s, &o->mem);
	case OPT_WIRED:
		a->wired_given = true;
		return cli_u64("--wired-limit-mb", s, 0, KV_GPU_WIRED_MAX_MB,
			       &a->wired_mb);
	case 'r':
		o->reserve_given = true;
		return cli_size("--reserve", s, &o->reserve);
	case 'w': return size_above0("--weights", s, &o->weights);
	case OPT_BANDWIDTH:
		return cli_double("--bandwidth", s, 1e-3, 1e9, &o->bandwidth);
	case OPT_TFLOPS:
		return cli_double("--tflops", s, 1e-6, 1e9, &o->tflops);
	case OPT_LINK:
		a->link_given = true;
		return cli_double("--interconnect", s, 1e-3, 1e9,
				  &o->work.link_gbps);
	case OPT_AR_LATENCY:
		a->ar_given = true;
		o->work.ar_step_us = 0;
		return cli_double("--allreduce-latency", s, 0, 1e9,
				  &o->work.ar_base_us);
	case OPT_DEC_TFLOPS:
		return cli_double("--decode-tflops", s, 1e-6, 1e9,
				  &o->work.dec_tflops);
	case OPT_SERIAL:
		a->serial_given = true;
		return cli_double("--serial-fraction", s, 0, 1,
				  &o->work.serial);
	case OPT_BW_EFF:
		return fraction("--bw-efficiency", s, &o->work.bw_eff);
	case OPT_FLOPS_EFF:
		return fraction("--flops-efficiency", s, &o->work.flops_eff);
	case OPT_COST:
		return cli_double("--cost-per-hour", s, 1e-9, 1e9,
				  &o->usd_per_hour);
	case OPT_BATCHED:
		return cli_u64(cli_opt_as(), s, 1, 1ULL << 30,
			       &o->batched);
	case OPT_SEQS:
		return cli_u64(cli_opt_as(), s, 1, 1ULL << 30, &o->seqs);
	case OPT_KV_UNIFIED: o->kv_unified = true; return 0;
	case OPT_SWA_FULL: o->swa_full = true; return 0;
	case OPT_ATTN_WINDOW: /* token counts of at least 1, in turn */
		return cli_list(cli_opt_as(), s, 1ULL << 40, &o->windows,
				&o->nwindows);
	case OPT_KV_MEMORY: /* vLLM's --kv-cache-memory-bytes: bytes */
		if (!strcmp(cli_opt_as(), "--kv-cache-memory-bytes"))
			return cli_u64(cli_opt_as(), s, 1, UINT64_MAX,
				       &o->kv_memory);
		return size_above0(cli_opt_as(), s, &o->kv_memory);
	case OPT_WDTYPE:
		if (kv_plan_weights_parse(s, o))
			return cli_usage("--weights-dtype: unknown format "
					 "'%s'; valid: %s, mxfp4, nvfp4, "
					 "int4-gN (int2, int8; N values a "
					 "scale)",
					 s, kv_dtype_list(list, sizeof list,
							  0));
		return 0;
	case OPT_UTIL: return fraction(cli_opt_as(), s, &o->util);
	case OPT_TP:
		o->tp_given = true;
		return cli_u64(cli_opt_as(), s, 1, KV_MAX_RANKS, &o->tp);
	case OPT_PP: return cli_u64(cli_opt_as(), s, 1, KV_MAX_RANKS, &o->pp);
	default: return CLI_NOT_MINE;
	}
}

/* Expert parallelism and data-parallel attention (ep.h). Returns 0,
 * CLI_USAGE (said) or CLI_NOT_MINE. */
static int opt_ep(int c, const char *s, struct args *a)
{
	struct kv_plan_opts *o = &a->o;
	switch (c) {
	case OPT_DP:
		return cli_u64(cli_opt_as(), s, 1, KV_MAX_RANKS, &o->dp);
	case OPT_DP_ATTN: o->dp_attention = true; return 0;
	case OPT_DP_ATTN_ONE: /* SGLang's: dp_size 1 turns it off */
		o->dp_attention = o->dp_one = true;
		return 0;
	case OPT_EP:
		return cli_u64(cli_opt_as(), s, 1, KV_MAX_RANKS, &o->ep);
	case OPT_EP_ALL: o->ep_all = true; return 0;
	case OPT_EP_IMBALANCE:
		return cli_double("--ep-imbalance", s, 1, 1e6,
				  &o->ep_imbalance);
	default: return CLI_NOT_MINE;
	}
}

/* What the groups and experts asked say together: the groups within the
 * --tp GPUs (--dp-attention) divide them, --ep one way. */
static int check_ep(const struct args *a)
{
	const struct kv_plan_opts *o = &a->o;
	if (o->solve == KV_PLAN_GPUS &&
	    (o->dp || o->dp_attention || o->ep || o->ep_all ||
	     o->ep_imbalance > 0))
		return cli_usage("--solve gpus: finds the groups and expert "
				 "ranks itself (DEP beside TP for a MoE "
				 "model); give no --ep/--dp");
	if (o->ep_all && o->ep)
		return cli_usage("--enable-expert-parallel and --ep: give one "
				 "(the flag spans every GPU of a stage)");
	if (o->dp_attention && o->dp && (o->dp > o->tp || o->tp % o->dp))
		return cli_usage("--dp %llu: must divide the %llu GPUs of --tp "
				 "with --dp-attention (the groups within them)",
				 (unsigned long long)o->dp,
				 (unsigned long long)o->tp);
	uint64_t gpus = o->dp_attention ? o->tp : o->tp * (o->dp ? o->dp : 1);
	if (o->ep > gpus && o->dp_attention)
		return cli_usage("--ep %llu: more than the %llu GPUs of --tp "
				 "(--dp-attention's groups are within them)",
				 (unsigned long long)o->ep,
				 (unsigned long long)gpus);
	if (o->ep > gpus)
		return cli_usage("--ep %llu: more than the %llu GPUs of a stage "
				 "(--tp %llu x --dp %llu)",
				 (unsigned long long)o->ep,
				 (unsigned long long)gpus,
				 (unsigned long long)o->tp,
				 (unsigned long long)(o->dp ? o->dp : 1));
	if (o->ep_imbalance > 0 && !o->ep && !o->ep_all)
		return cli_usage("--ep-imbalance: the expert ranks' load; give "
				 "--ep N");
	if (kv_plan_ep(o) && (o->split || o->solve == KV_PLAN_TP))
		return cli_usage("--dp and --ep: %s is not modelled beside "
				 "them",
				 o->split ? "llama.cpp's split" : "--solve tp");
	return 0;
}

/* --images, --image-size, --audio-seconds (above 0, at most a day).
 * Returns 0, CLI_USAGE (said) or CLI_NOT_MINE. */
static int opt_images(int c, const char *s, struct args *a)
{
	if (c == OPT_AUDIO_SECONDS) {
		int e = cli_double("--audio-seconds", s, 0, 86400,
				   &a->o.audio_s);
		if (!e && !(a->o.audio_s > 0))
			return cli_usage("--audio-seconds: must be above 0, "
					 "got '%s'", s);
		return e;
	}
	if (c == OPT_IMAGE_SIZE) {
		if (kv_vision_size_parse(s, &a->o.image_w, &a->o.image_h))
			return cli_usage("--image-size: must be WxH in pixels, "
					 "each 1 to 65536 (1280x720), got "
					 "'%s'", s);
		return 0;
	}
	if (c != OPT_IMAGES)
		return CLI_NOT_MINE;
	return cli_u64("--images", s, 0, 1ULL << 20, &a->o.images);
}

/* LoRA's options. Returns 0, CLI_USAGE (said) or CLI_NOT_MINE. */
static int opt_lora(int c, const char *s, struct args *a)
{
	struct kv_lora *l = &a->lora;
	uint64_t r;
	char bad[64];
	switch (c) {
	case OPT_MAX_LORAS:
		a->lora_given = true;
		return cli_u64(cli_opt_as(), s, 1, 1ULL << 20, &l->max_loras);
	case OPT_LORA_RANK:
		a->lora_given = true;
		if (cli_u64("--max-lora-rank", s, 1, 1ULL << 16, &r))
			return CLI_USAGE;
		l->rank = (uint32_t)r;
		return 0;
	case OPT_CPU_LORAS:
		a->lora_given = true;
		return cli_u64(cli_opt_as(), s, 1, 1ULL << 20, &l->cpu_loras);
	case OPT_LORA_MODULES:
		a->lora_given = true;
		if (kv_lora_modules_parse(s, &l->modules, bad, sizeof bad))
			return cli_usage("--lora-target-modules: unknown module "
					 "'%s'; valid: q_proj, k_proj, v_proj, "
					 "qkv_proj, o_proj, gate_proj, up_proj, "
					 "gate_up_proj, down_proj, experts, gate, "
					 "embed_tokens, lm_head, all",
					 bad);
		return 0;
	default: return CLI_NOT_MINE;
	}
}

/* The host tier, given once under one of its names, each in its unit:
 * ours a size with a unit; vLLM's GiB over every rank, SGLang's GB of
 * each rank or a ratio of its GPU pool, TensorRT-LLM's bytes. */
static int tier(int c, const char *s, struct args *a)
{
	struct kv_offload *t = &a->off;
	const char *opt = cli_opt_as();
	double v;
	uint64_t u;
	int e;
	if (a->tier_opt && strcmp(a->tier_opt, opt))
		return cli_usage("%s and %s: one host tier; give one",
				 a->tier_opt, opt);
	a->tier_opt = c == OPT_KV_OFFLOAD	? "--kv-offload"
		      : c == OPT_KV_OFFLOAD_GIB ? "--kv-offloading-size"
		      : c == OPT_HICACHE_SIZE	? "--hicache-size"
		      : c == OPT_HICACHE_RATIO	? "--hicache-ratio"
						: "--host_cache_size";
	*t = (struct kv_offload){.hit = t->hit, .hit_given = t->hit_given,
				 .link_gbps = t->link_gbps};
	switch (c) {
	case OPT_KV_OFFLOAD: return size_above0(opt, s, &t->bytes);
	case OPT_KV_OFFLOAD_GIB: /* vLLM's: GiB, over every rank */
		if ((e = cli_double(opt, s, 1e-9, 1e9, &v)))
			return e;
		t->bytes = (uint64_t)(v * (double)(1ULL << 30));
		t->total = true;
		return t->bytes ? 0 : cli_usage("%s: must be above 0", opt);
	case OPT_HICACHE_SIZE: /* SGLang's: whole GB of each rank */
		if ((e = cli_u64(opt, s, 1, 1ULL << 24, &u)))
			return e;
		t->bytes = u * 1000000000ULL;
		return 0;
	case OPT_HICACHE_RATIO:
		if ((e = cli_double(opt, s, -1e300, 1e6, &t->ratio)))
			return e;
		return t->ratio > 0 ? 0
				    : cli_usage("%s: must be above 0, got '%s'",
						opt, s);
	default: /* TensorRT-LLM's: bytes */
		return cli_u64(opt, s, 1, UINT64_MAX, &t->bytes);
	}
}

/* The host tier of KV and the prompt's hits. Returns 0, CLI_USAGE (said)
 * or CLI_NOT_MINE. */
static int opt_offload(int c, const char *s, struct args *a)
{
	switch (c) {
	case OPT_KV_OFFLOAD:
	case OPT_KV_OFFLOAD_GIB:
	case OPT_HICACHE_SIZE:
	case OPT_HICACHE_RATIO:
	case OPT_HOST_CACHE_SIZE:
		return tier(c, s, a);
	case OPT_PREFIX_HIT:
		a->off.hit_given = true;
		return cli_double("--prefix-hit", s, 0, 1, &a->off.hit);
	case OPT_HOST_LINK: /* the host tier's, and a split's from it */
		a->link_host_given = true;
		return cli_double("--host-link", s, 1e-3, 1e9,
				  &a->off.link_gbps);
	default: return CLI_NOT_MINE;
	}
}

/* -ngl: a count (above the layers: all of them and the head), all, or
 * auto. */
static int ngl(const char *s, int32_t *out)
{
	char *end;
	if (!strcmp(s, "all") || !strcmp(s, "auto")) {
		*out = s[1] == 'l' ? KV_NGL_ALL : KV_NGL_AUTO;
		return 0;
	}
	errno = 0;
	unsigned long long n = strtoull(s, &end, 10);
	if (!isdigit((unsigned char)s[0]) || *end || errno || n > INT32_MAX)
		return cli_usage("--n-gpu-layers: must be a count of layers, "
				 "all or auto, got '%s'",
				 s);
	*out = (int32_t)n;
	return 0;
}

/* llama.cpp's split between the GPU and host memory. Returns 0,
 * CLI_USAGE (said) or CLI_NOT_MINE. */
static int opt_split(int c, const char *s, struct args *a)
{
	struct kv_plan_opts *o = &a->o;
	char err[KV_ERRLEN];
	uint64_t n;
	int e;
	switch (c) {
	case OPT_NGL: e = ngl(s, &o->ngl); break;
	case OPT_OT:
		e = kv_ot_parse(s, o->ot, &o->not, err) ? cli_usage("%s", err)
							 : 0;
		break;
	case OPT_CPU_MOE: o->n_cpu_moe = KV_CPU_MOE_ALL; e = 0; break;
	case OPT_N_CPU_MOE:
		if ((e = cli_u64("--n-cpu-moe", s, 0, 1u << 20, &n)))
			return e;
		o->n_cpu_moe = (uint32_t)n;
		break;
	case OPT_NKVO: o->nkvo = true; e = 0; break;
	case OPT_HOST_MEM:
		a->host_given = a->host_given ? a->host_given : "--host-mem";
		return size_above0("--host-mem", s, &o->host_mem);
	case OPT_HOST_BW:
		a->host_given = a->host_given ? a->host_given
					      : "--host-bandwidth";
		return cli_double("--host-bandwidth", s, 1e-3, 1e9,
				  &o->host_gbps);
	case OPT_HOST_PROFILE:
		a->host_given = a->host_given ? a->host_given
					      : "--host-profile";
		a->host_profile = s;
		return 0;
	default: return CLI_NOT_MINE;
	}
	if (!e && !a->split_opt[0])
		snprintf(a->split_opt, sizeof a->split_opt, "%s", cli_opt_as());
	o->split = true;
	return e;
}

/* --engine NAME[@RELEASE] or all. */
static int engine(const char *s, struct kv_plan_opts *o)
{
	char rel[128];
	int e = kv_plan_engine_parse(s, &o->server);
	if (e == KV_EUNSUP)
		return cli_usage("--engine: %s: no rules of release '%s' are "
				 "kept; %s's: %s",
				 s, strchr(s, '@') + 1, o->server->name,
				 kv_server_releases(o->server->kind, rel,
						    sizeof rel));
	if (e)
		return cli_usage("--engine: unknown engine '%s'; valid: "
				 "ideal, vllm, sglang, trtllm, llamacpp, all "
				 "(NAME@RELEASE: an older release's rules, "
				 "vllm@0.27)",
				 s);
	return 0;
}

/* Speculative decoding's options (spec.h). Returns 0, CLI_USAGE (said)
 * or CLI_NOT_MINE. */
static int opt_spec(int c, const char *s, struct args *a)
{
	struct kv_spec *sp = &a->o.spec;
	uint64_t k;
	int e;
	switch (c) {
	case OPT_DRAFT: a->draft = s; return 0;
	case OPT_SPEC_METHOD:
		if (kv_spec_method_parse(s, &sp->method))
			return cli_usage("--spec-method: must be draft, eagle, "
					 "eagle3, mtp or ngram, got '%s'",
					 s);
		return 0;
	case OPT_SPEC_TOKENS:
		a->spec_opts = true;
		e = cli_u64(cli_opt_as(), s, 1, KV_SPEC_MAX_TOKENS, &k);
		sp->k = (uint32_t)k;
		return e;
	case OPT_ACCEPT:
		a->spec_opts = true;
		return fraction("--acceptance", s, &sp->accept);
	case OPT_ACCEPT_LEN:
		a->spec_opts = true;
		return cli_double("--acceptance-length", s, 1,
				  KV_SPEC_MAX_TOKENS + 1, &sp->accept_len);
	default: return CLI_NOT_MINE;
	}
}

/* What the speculative decoding options say together, once all are
 * read (the drafter's config is checked once loaded: kv_spec_check). */
static int check_spec(const struct args *a)
{
	const struct kv_spec *sp = &a->o.spec;
	const char *name = kv_spec_method_name(sp->method);
	if (!kv_spec_on(sp))
		return a->spec_opts ? cli_usage("--spec-tokens, --acceptance "
						"and --acceptance-length: need "
						"--spec-method (or --draft)")
				    : 0;
	if (!sp->k)
		return cli_usage("--spec-method %s: needs --spec-tokens K, the "
				 "tokens drafted a round",
				 name);
	if (sp->accept > 0 && sp->accept_len > 0)
		return cli_usage("--acceptance and --acceptance-length: give "
				 "one, not both");
	if (a->o.work.isl && !(sp->accept > 0) && !(sp->accept_len > 0))
		return cli_usage("--spec-method %s: timing it needs "
				 "--acceptance A or --acceptance-length L",
				 name);
	if (a->ncalib)
		return cli_usage("--calibrate: fits runs without speculative "
				 "decoding; give no --spec-method");
	return 0;
}

/* What the rows are: formats, contexts, users, engines, the solve.
 * Returns 0, CLI_USAGE (said) or CLI_NOT_MINE. */
static int opt_rows(int c, const char *s, struct args *a)
{
	struct kv_plan_opts *o = &a->o;
	switch (c) {
	case 'c':
		free(o->ctx);
		return cli_sweep(cli_opt_as(), s, &o->ctx, &o->nctx);
	case 'e':
		a->engine_given = true;
		return engine(s, o);
	case 't':
		free(o->dtypes);
		return cli_dtypes(cli_opt_as(), s, &o->dtypes, &o->ndtypes);
	case 'u':
		return cli_users(s, &o->users, &o->nusers);
	case OPT_CTK:
	case OPT_CTV:
		return cli_cache_type(c == OPT_CTK, s, &a->kv);
	case OPT_PREFIX: return cli_tokens("--prefix", s, &o->prefix);
	case OPT_SOLVE:
		if (kv_plan_solve_parse(s, &o->solve))
			return cli_usage("--solve: must be users, ctx, tp, "
					 "layers or gpus, got '%s'",
					 s);
		o->split |= o->solve == KV_PLAN_LAYERS;
		return 0;
	case OPT_MIN_USERS:
		return cli_u64("--min-users", s, 1, KV_MAX_USERS, &a->min_users);
	case OPT_ISL: return tokens_above0("--isl", s, &o->work.isl);
	case OPT_OSL: return tokens_above0("--osl", s, &o->work.osl);
	case OPT_NUM_PROMPTS:
		a->prompts_given = true;
		return cli_u64("--num-prompts", s, 1, 1ULL << 30,
			       &o->work.prompts);
	case OPT_RATE:
		a->rate_given = true;
		o->work.arrivals = KV_ARRIVE_RATE;
		if (cli_double("--request-rate", s, -1e300, 1e9,
			       &o->work.rate))
			return CLI_USAGE;
		return o->work.rate > 0
			       ? 0
			       : cli_usage("--request-rate: must be above 0 "
					   "requests a second, got '%s'",
					   s);
	case OPT_CALIBRATE:
		if (a->ncalib == sizeof a->calib / sizeof a->calib[0])
			return cli_usage("--calibrate: at most %zu files",
					 a->ncalib);
		a->calib[a->ncalib++] = s;
		return 0;
	case OPT_SAVE_GPU:
		a->save_gpu = s;
		return 0;
	case OPT_STEP_US:
		o->work.step_given = true;
		return cli_double("--step-us", s, 0, 1e9, &o->work.step_us);
	case OPT_LAYER_US:
		o->work.layer_given = true;
		return cli_double("--layer-us", s, 0, 1e9, &o->work.layer_us);
	case OPT_REQUEST_US:
		o->work.request_given = true;
		return cli_double("--request-us", s, 0, 1e9,
				  &o->work.request_us);
	case OPT_ARRIVALS:
		if (kv_plan_arrivals_parse(s, &o->work.arrivals))
			return cli_usage("--arrivals: must be steady or burst, "
					 "got '%s'",
					 s);
		a->arrivals_given = true;
		return 0;
	case OPT_MAX_TTFT:
		return cli_double("--max-ttft", s, 1e-9, 1e12, &o->max_ttft);
	case OPT_MAX_TPOT:
		return cli_double("--max-tpot", s, 1e-9, 1e12, &o->max_tpot);
	default: return opt_spec(c, s, a);
	}
}

/* What the options say together, once all are read. */
static int check(int argc, const struct args *a)
{
	if (a->gpu_file && !a->gpu && !a->list_gpus)
		return cli_usage("--gpu-file: needs --gpu NAME or --list-gpus");
	if (a->list_gpus)
		return 0;
	if (optind >= argc)
		return cli_usage("no config given");
	if (a->params)
		return 0;
	if (a->save_gpu && !a->ncalib)
		return cli_usage("--save-gpu: writes a fit; give --calibrate "
				 "FILE");
	if (a->ncalib && !a->gpu)
		return cli_usage("--calibrate: needs --gpu NAME, the GPU the "
				 "runs ran on");
	if (a->ncalib && a->o.work.isl)
		return cli_usage("--calibrate: the runs give their lengths; "
				 "give no --isl or --osl");
	if (!a->gpu && !a->o.mem)
		return cli_usage("no GPU: give --gpu NAME or --gpu-mem SIZE");
	if (a->wired_given && !a->gpu)
		return cli_usage("--wired-limit-mb: a Mac's; give --gpu NAME "
				 "of one (m4-max-128gb)");
	if (a->wired_given && a->mem_text)
		return cli_usage("--wired-limit-mb and --gpu-mem both say the "
				 "GPU's memory; give one");
	if (a->o.solve != KV_PLAN_USERS && a->o.solve != KV_PLAN_LAYERS &&
	    a->o.solve != KV_PLAN_GPUS && !a->o.nusers)
		return cli_usage("--solve %s: needs --users N",
				 a->o.solve == KV_PLAN_CTX ? "ctx" : "tp");
	if (a->o.solve == KV_PLAN_TP && a->o.tp_given)
		return cli_usage("--solve tp finds the tensor-parallel degree; "
				 "give it or --tp, not both");
	if (a->json && a->human)
		return cli_usage("--json keeps numbers plain; give it or "
				 "--human, not both");
	const struct kv_plan_opts *o = &a->o;
	if (o->windows && o->server && !o->server->window_list)
		return cli_usage("--max-attention-window: TensorRT-LLM's "
				 "setting (KvCacheConfig.max_attention_window); "
				 "give --engine trtllm, or all");
	if (!o->work.isl != !o->work.osl)
		return cli_usage("%s: needs %s too (a request's prompt and "
				 "output)",
				 o->work.isl ? "--isl" : "--osl",
				 o->work.isl ? "--osl" : "--isl");
	if (!o->work.isl && a->arrivals_given)
		return cli_usage("--arrivals: needs --isl and --osl, the "
				 "requests that arrive");
	if (a->rate_given && (a->arrivals_given || o->nusers))
		return cli_usage("--request-rate: the rate makes the "
				 "concurrency; give no %s",
				 a->arrivals_given ? "--arrivals" : "--users");
	if (a->rate_given && !o->work.isl)
		return cli_usage("--request-rate: needs --isl and --osl, the "
				 "requests sent");
	if (a->prompts_given && o->work.arrivals != KV_ARRIVE_BURST)
		return cli_usage("--num-prompts: a burst's requests; give "
				 "--arrivals burst");
	if (a->off.hit_given && !o->work.isl)
		return cli_usage("--prefix-hit: needs --isl and --osl, the "
				 "prompt it is a share of");
	if (!o->work.isl && (o->max_ttft || o->max_tpot || o->usd_per_hour))
		return cli_usage("%s: needs --isl and --osl, the request it "
				 "times",
				 o->max_ttft     ? "--max-ttft"
				 : o->max_tpot ? "--max-tpot"
					       : "--cost-per-hour");
	if (check_spec(a))
		return CLI_USAGE;
	int e = check_ep(a);
	return e ? e : kvfit_check_fleet(a);
}

static int parse(int argc, char **argv, struct args *a, bool *done)
{
	int c, e;
	*a = (struct args){.o = {.tp = 1, .pp = 1, .wdtype = -1,
				 .server = kv_server_get(KV_SERVER_VLLM),
				 .work = {.prompts = 1000},
				 .ngl = KV_NGL_UNSET},
			   .header = true};
	while ((c = cli_getopt(argc, argv)) != -1) {
		switch (c) {
		case 'H': a->human = true; break;
		case OPT_PARAMS: a->params = true; break;
		case OPT_LIST_GPUS: a->list_gpus = true; break;
		case 'o': /* an engine's command, else a table's format */
			a->launch = kvfit_launch_format(optarg);
			if (!a->launch && cli_output_find(optarg) < 0)
				return cli_usage("--output: tsv, csv, json, md, "
						 "table, vllm, sglang, "
						 "llama-server or trtllm, got "
						 "'%s'",
						 optarg);
			if (!a->launch && (e = cli_output(optarg, &a->json)))
				return e;
			break;
		default:
			e = cli_common(c, optarg, usage_head, usage_foot,
				       &a->json, &a->header, done);
			if (e == CLI_NOT_MINE &&
			    (e = opt_gpu(c, optarg, a)) == CLI_NOT_MINE &&
			    (e = opt_rows(c, optarg, a)) == CLI_NOT_MINE &&
			    (e = opt_lora(c, optarg, a)) == CLI_NOT_MINE &&
			    (e = opt_images(c, optarg, a)) == CLI_NOT_MINE &&
			    (e = opt_ep(c, optarg, a)) == CLI_NOT_MINE &&
			    (e = opt_offload(c, optarg, a)) == CLI_NOT_MINE &&
			    (e = opt_split(c, optarg, a)) == CLI_NOT_MINE &&
			    (e = kvfit_launch_opt(c, optarg, a)) ==
				    CLI_NOT_MINE)
				e = kvfit_opt_fleet(c, optarg, a);
			if (e == CLI_NOT_MINE) /* said by cli_getopt */
				return CLI_USAGE;
			if (e || *done)
				return e;
		}
	}
	if ((e = kvfit_launch_after(a)) ||
	    (e = cli_kv_join(&a->kv, &a->o.dtypes, &a->o.ndtypes)))
		return e;
	if (a->o.image_w && !a->o.images)
		return cli_usage("--image-size: sizes the images of --images, "
				 "and none is given");
	a->o.lora = a->lora_given ? &a->lora : NULL;
	a->o.offload = a->tier_opt || a->off.hit_given ? &a->off : NULL;
	if (a->draft && !kv_spec_on(&a->o.spec)) /* a draft model's */
		a->o.spec.method = KV_SPEC_DRAFT;
	return check(argc, a);
}

/* --draft's config, then speculative decoding held to each model
 * planned: the drafter it needs or refuses, its vocabulary. */
static int load_draft(struct args *a, const struct kv_plan *pl, size_t np,
		      struct kv_model **draft)
{
	char err[KV_ERRLEN];
	int status;
	if (a->draft && (status = cli_load_model(a->draft, draft)))
		return status;
	a->o.spec.draft = *draft;
	for (size_t i = 0; i < np; i++) {
		int e = kv_spec_check(&a->o.spec, pl[i].m, err);
		if (e)
			return cli_kv_error(e, err);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct args a;
	struct kv_plan *pl = NULL;
	size_t np = 0;
	struct kv_gpus *gpus = NULL;
	struct kv_model *draft = NULL;
	bool done = false;
	char gpu_name[64];
	int status;

	cli_init("kvfit");
	status = parse(argc, argv, &a, &done);
	if (status || done)
		goto out;
	if (a.list_gpus) {
		status = kvfit_list_gpus(&a);
		goto out;
	}
	if ((status = kvfit_gpu_of(&a, &gpus, gpu_name,
				   sizeof gpu_name)) ||
	    (status = kvfit_load(argc, argv, &a, &pl, &np)) ||
	    (status = load_draft(&a, pl, np, &draft)))
		goto out;
	/* GGUFs alone, or a Mac's unified memory (what Ollama and LM Studio
	 * run there): llama.cpp's rules, unless --engine names others */
	bool gguf = np > 0;
	for (size_t i = 0; i < np; i++)
		gguf = gguf && pl[i].m->gguf;
	if ((gguf || (a.o.gpu && a.o.gpu->unified)) && !a.engine_given)
		a.o.server = kv_server_get(KV_SERVER_LLAMACPP);
	if ((status = kvfit_split(&a, pl, np)))
		goto out;
	if (a.ncalib)
		status = kvfit_calibrate(&a, pl, gpus, gpu_name);
	else if (a.params)
		status = kvfit_params(&a, pl, np);
	else if (a.disagg || a.o.solve == KV_PLAN_GPUS)
		status = kvfit_fleet(&a, pl, np, gpu_name);
	else
		status = kvfit_rows(&a, pl, np, gpu_name);
out:
	for (size_t i = 0; i < np; i++) {
		kv_place_free(&pl[i].place);
		kv_model_free(pl[i].m);
	}
	free(pl);
	kv_gpus_free(gpus);
	kv_model_free(draft);
	kv_gpus_free(a.host);
	kv_effs_free(a.effs);
	free(a.o.ctx);
	free(a.o.dtypes);
	free(a.kv.k);
	free(a.kv.v);
	free(a.o.users);
	free(a.o.blocks);
	free(a.o.windows);
	free(a.ctx_sizes);
	return cli_finish(status);
}
