/*
 * kvfit_launch.c - -o vllm, sglang, llama-server, trtllm: each planned row
 * as the one command line that runs it, in the engine's own flags, so that
 * the plan and the deployment cannot drift. One table per engine names,
 * for each of the plan's settings, the engine's flag and the form of its
 * value; a setting the engine has no flag for is refused in one line.
 *
 * The flags are read from each engine's argument parser:
 *   vLLM: vllm/engine/arg_utils.py (EngineArgs, commit 99d7eb5d) and
 *     vllm/config/cache.py (CacheDType, kv_offloading_size in GiB over
 *     every rank, commit 002f10e0);
 *   SGLang: python/sglang/srt/server_args.py (ServerArgs, commit
 *     001067ff): kv_cache_dtype auto, fp8_e4m3, fp8_e5m2, bf16, ...;
 *   llama.cpp: common/arg.cpp (commit 145b6280) and src/llama-context.cpp:
 *     n_ctx is padded to 256 and, without --kv-unified, split over the
 *     --parallel slots (n_ctx_seq = pad256(n_ctx / n_seq_max)), so N
 *     slots of C tokens are --ctx-size N x C; with it, one pool of n_ctx
 *     cells, so the same;
 *   TensorRT-LLM: tensorrt_llm/commands/serve.py (commit 4c05a748) and
 *     llmapi/llm_args.py (KvCacheConfig: dtype, tokens_per_block,
 *     host_cache_size, max_attention_window have no flag of trtllm-serve:
 *     they go to the YAML file of --extra_llm_api_options).
 * Expert and data parallelism as each engine counts its ranks (ep.h):
 * vLLM's --tensor-parallel-size is a group's and --data-parallel-size the
 * groups, --enable-expert-parallel the experts over all of them, and
 * --max-num-seqs each group's (a scheduler a group); SGLang's --tp-size
 * is every GPU with --enable-dp-attention (attn_tp_size = tp_size //
 * dp_size), its --max-running-requests and --chunked-prefill-size all the
 * groups' (each gets its share); TensorRT-LLM's --tp_size is every GPU,
 * enable_attention_dp (a key of the YAML file) makes each its own group,
 * --ep_size the experts' ranks, --max_batch_size a rank's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvfit.h"
#include "kv/ep.h"
#include "kv/vision.h"

/* The plan's settings a command carries, each written one way. */
enum lf {
	LF_TP,          /* tensor-parallel ranks */
	LF_PP,          /* pipeline stages */
	LF_SEQS,        /* the plan's users: sequences run at once */
	LF_CTX,         /* tokens of one sequence */
	LF_CTX_ALL,     /* llama.cpp's n_ctx: the users' tokens together */
	LF_KV,          /* the cache's format, the engine's name ("auto"
			   where it is the engine's own for the model) */
	LF_K, LF_V,     /* llama.cpp's K and V formats */
	LF_UTIL,        /* the fraction of memory, as the plan used it */
	LF_KV_BYTES,    /* KV bytes of a GPU (--kv-memory) */
	LF_BATCHED,     /* tokens a step schedules */
	LF_BLOCK,       /* tokens a page, where one was given */
	LF_LORA_ON,     /* the switch that turns adapters on */
	LF_MAX_LORAS, LF_LORA_RANK, LF_CPU_LORAS,
	LF_TIER_GIB_ALL, /* the host tier in GiB over every rank (vLLM) */
	LF_TIER_GB,     /* in whole GB of each rank (SGLang) */
	LF_TIER_RATIO,  /* as a ratio of the GPU pool (SGLang) */
	LF_TIER_BYTES,  /* in bytes of each rank (TensorRT-LLM) */
	LF_TIER_ON,     /* the switch that turns the tier on */
	LF_NGL,         /* a split's layers on the GPU (and the head) */
	LF_N_CPU_MOE,   /* the first N layers' experts in host memory */
	LF_CPU_MOE,     /* every layer's */
	LF_OT,          /* each -ot rule as given */
	LF_NKVO,        /* KV in host memory */
	LF_KV_UNIFIED, LF_SWA_FULL,
	LF_FLASH_ATTN,  /* on: what the compute buffer is modelled with */
	LF_WINDOWS,     /* TensorRT-LLM's max_attention_window list */
	LF_SPEC_JSON,   /* vLLM's speculative config, one JSON object */
	LF_SPEC_ALGO,   /* the method, as the engine names it */
	LF_SPEC_DRAFT,  /* the drafter's model (a draft model, a head) */
	LF_SPEC_K,      /* tokens drafted a round */
	LF_LORA_MODULES, /* the modules adapted, where given */
	LF_N_BATCH,     /* llama.cpp's n_batch, where n_ubatch is above its
			   default (n_ubatch is at most it) */
	LF_IMAGES,      /* images a request carries, as a JSON limit */
	LF_PREFIX_CACHING, /* the switch that shares a prompt's prefix,
			      where --prefix plans on it */
	LF_DP,          /* attention's data-parallel groups (ep.h) */
	LF_DP_ATTN,     /* the switch that puts the groups within --tp's
			   GPUs (SGLang, TensorRT-LLM) */
	LF_EP,          /* expert-parallel ranks */
	LF_EP_ON,       /* the switch that spreads the experts over every
			   rank of a stage (vLLM) */
	LF_CHUNKED,     /* TensorRT-LLM's switch of chunked prefill */
};

/* llama.cpp's n_batch by default (common/common.h, commit 145b6280);
 * llama_context takes n_ubatch = min(n_batch, n_ubatch). */
#define LLAMACPP_N_BATCH 2048

/* One setting of an engine: its flag (a YAML key, "section.key", where
 * yaml), and for a switch no value. */
struct launch_flag {
	enum lf field;
	const char *flag;
	bool yaml;
};

struct launch_engine {
	const char *format;      /* -o's word */
	enum kv_server_kind kind;
	const char *command;     /* what runs it */
	const char *model_flag;  /* before the model; NULL: positional */
	const char *yaml_flag;   /* the flag of the YAML file, or NULL */
	const char *const *dtypes; /* the cache formats' names, by enum
				      kv_dtype; NULL: none */
	const struct launch_flag *flags;
	size_t nflags;
};

#define N(a) (sizeof(a) / sizeof *(a))

/* vLLM's CacheDType (vllm/config/cache.py): no float32 cache. */
static const char *const vllm_dtypes[KV_DTYPE_COUNT] = {
	[KV_DTYPE_F16] = "float16", [KV_DTYPE_BF16] = "bfloat16",
	[KV_DTYPE_FP8] = "fp8", [KV_DTYPE_FP8_E5M2] = "fp8_e5m2",
	[KV_DTYPE_INT8] = "int8_per_token_head"};
/* SGLang's --kv-cache-dtype choices: no float16 or float32 of its own. */
static const char *const sglang_dtypes[KV_DTYPE_COUNT] = {
	[KV_DTYPE_BF16] = "bf16", [KV_DTYPE_FP8] = "fp8_e4m3",
	[KV_DTYPE_FP8_E5M2] = "fp8_e5m2"};
/* llama.cpp's kv_cache_types (common/arg.cpp): ggml's names. */
static const char *const llamacpp_dtypes[KV_DTYPE_COUNT] = {
	[KV_DTYPE_F32] = "f32", [KV_DTYPE_F16] = "f16",
	[KV_DTYPE_BF16] = "bf16", [KV_DTYPE_Q8_0] = "q8_0",
	[KV_DTYPE_Q4_0] = "q4_0", [KV_DTYPE_Q4_1] = "q4_1",
	[KV_DTYPE_IQ4_NL] = "iq4_nl", [KV_DTYPE_Q5_0] = "q5_0",
	[KV_DTYPE_Q5_1] = "q5_1"};
/* TensorRT-LLM's KvCacheConfig.dtype: auto (the model's) or fp8. */
static const char *const trtllm_dtypes[KV_DTYPE_COUNT] = {
	[KV_DTYPE_FP8] = "fp8"};

static const struct launch_flag vllm_flags[] = {
	{LF_TP, "--tensor-parallel-size", false},
	{LF_PP, "--pipeline-parallel-size", false},
	{LF_SEQS, "--max-num-seqs", false},
	{LF_CTX, "--max-model-len", false},
	{LF_KV, "--kv-cache-dtype", false},
	{LF_UTIL, "--gpu-memory-utilization", false},
	{LF_KV_BYTES, "--kv-cache-memory-bytes", false},
	{LF_BATCHED, "--max-num-batched-tokens", false},
	{LF_BLOCK, "--block-size", false},
	{LF_LORA_ON, "--enable-lora", false},
	{LF_MAX_LORAS, "--max-loras", false},
	{LF_LORA_RANK, "--max-lora-rank", false},
	{LF_CPU_LORAS, "--max-cpu-loras", false},
	{LF_TIER_GIB_ALL, "--kv-offloading-size", false},
	{LF_SPEC_JSON, "--speculative-config", false},
	{LF_IMAGES, "--limit-mm-per-prompt", false},
	{LF_PREFIX_CACHING, "--enable-prefix-caching", false},
	{LF_DP, "--data-parallel-size", false},
	{LF_EP_ON, "--enable-expert-parallel", false},
};

static const struct launch_flag sglang_flags[] = {
	{LF_TP, "--tp-size", false},
	{LF_PP, "--pp-size", false},
	{LF_UTIL, "--mem-fraction-static", false},
	{LF_SEQS, "--max-running-requests", false},
	{LF_CTX, "--context-length", false},
	{LF_KV, "--kv-cache-dtype", false},
	{LF_BATCHED, "--chunked-prefill-size", false},
	{LF_BLOCK, "--page-size", false},
	{LF_LORA_ON, "--enable-lora", false},
	{LF_MAX_LORAS, "--max-loras-per-batch", false},
	{LF_LORA_RANK, "--max-lora-rank", false},
	{LF_CPU_LORAS, "--max-loaded-loras", false},
	{LF_TIER_ON, "--enable-hierarchical-cache", false},
	{LF_TIER_GB, "--hicache-size", false},
	{LF_TIER_RATIO, "--hicache-ratio", false},
	{LF_LORA_MODULES, "--lora-target-modules", false},
	{LF_SPEC_ALGO, "--speculative-algorithm", false},
	{LF_SPEC_DRAFT, "--speculative-draft-model-path", false},
	{LF_SPEC_K, "--speculative-num-steps", false},
	{LF_DP, "--dp-size", false},
	{LF_DP_ATTN, "--enable-dp-attention", false},
	{LF_EP, "--ep-size", false},
};

static const struct launch_flag llamacpp_flags[] = {
	{LF_CTX_ALL, "--ctx-size", false},
	{LF_SEQS, "--parallel", false},
	{LF_K, "--cache-type-k", false},
	{LF_V, "--cache-type-v", false},
	{LF_FLASH_ATTN, "--flash-attn", false},
	{LF_BATCHED, "--ubatch-size", false},
	{LF_N_BATCH, "--batch-size", false},
	{LF_KV_UNIFIED, "--kv-unified", false},
	{LF_SWA_FULL, "--swa-full", false},
	{LF_NGL, "--n-gpu-layers", false},
	{LF_CPU_MOE, "--cpu-moe", false},
	{LF_N_CPU_MOE, "--n-cpu-moe", false},
	{LF_OT, "--override-tensor", false},
	{LF_NKVO, "--no-kv-offload", false},
	{LF_SPEC_DRAFT, "--model-draft", false},
	{LF_SPEC_K, "--draft-max", false},
};

static const struct launch_flag trtllm_flags[] = {
	{LF_TP, "--tp_size", false},
	{LF_PP, "--pp_size", false},
	{LF_SEQS, "--max_batch_size", false},
	{LF_BATCHED, "--max_num_tokens", false},
	{LF_CTX, "--max_seq_len", false},
	{LF_UTIL, "--kv_cache_free_gpu_memory_fraction", false},
	{LF_KV, "kv_cache_config.dtype", true},
	{LF_BLOCK, "kv_cache_config.tokens_per_block", true},
	{LF_TIER_BYTES, "kv_cache_config.host_cache_size", true},
	{LF_WINDOWS, "kv_cache_config.max_attention_window", true},
	{LF_EP, "--ep_size", false},
	{LF_DP_ATTN, "enable_attention_dp", true},
	{LF_CHUNKED, "--enable_chunked_prefill", false},
};

static const struct launch_engine engines[] = {
	{"vllm", KV_SERVER_VLLM, "vllm serve", NULL, NULL, vllm_dtypes,
	 vllm_flags, N(vllm_flags)},
	{"sglang", KV_SERVER_SGLANG, "python -m sglang.launch_server",
	 "--model-path", NULL, sglang_dtypes, sglang_flags, N(sglang_flags)},
	{"llama-server", KV_SERVER_LLAMACPP, "llama-server", "--model", NULL,
	 llamacpp_dtypes, llamacpp_flags, N(llamacpp_flags)},
	{"trtllm", KV_SERVER_TRTLLM, "trtllm-serve", NULL,
	 "--extra_llm_api_options", trtllm_dtypes, trtllm_flags,
	 N(trtllm_flags)},
};

/* The YAML file a TensorRT-LLM line writes before it runs. */
#define YAML_FILE "extra_llm_api_options.yaml"

int kvfit_launch_format(const char *s)
{
	for (size_t i = 0; i < N(engines); i++)
		if (!strcmp(s, engines[i].format))
			return (int)i + 1;
	return 0;
}

static const struct launch_engine *engine_of(const struct args *a)
{
	return &engines[a->launch - 1];
}

/* The engine's flag of field f, or NULL where it has none. */
static const struct launch_flag *flag_of(const struct launch_engine *e,
					 enum lf f)
{
	for (size_t i = 0; i < e->nflags; i++)
		if (e->flags[i].field == f)
			return &e->flags[i];
	return NULL;
}

int kvfit_launch_opts(struct args *a)
{
	const struct launch_engine *e = engine_of(a);
	const struct kv_server *sv = a->o.server;
	const struct kv_server *want = kv_server_get(e->kind);
	if (!a->engine_given) { /* -o names the engine */
		a->o.server = want;
		a->engine_given = true;
		return 0;
	}
	if (!sv)
		return cli_usage("-o %s: one engine's command; give --engine %s, "
				 "not all",
				 e->format, want->name);
	if (sv->kind != e->kind)
		return cli_usage("-o %s: the rows are %s's (--engine %s); give "
				 "--engine %s",
				 e->format, sv->label, sv->name, want->name);
	return 0;
}

/* The plan's users: those that fit, or of --users as many as fit. */
static uint64_t users_of(const struct kv_plan_row *r)
{
	uint64_t u = r->f.users_whole;
	return r->in.users && r->in.users < u ? r->in.users : u;
}

/* The fraction of memory the row was planned with: --util, else the
 * engine's own for this GPU and model. */
static double util_of(const struct kv_fit_in *in)
{
	bool mla = false;
	for (uint32_t i = 0; i < in->m->n_layers; i++)
		mla |= in->m->layers[i].attn == KV_ATTN_MLA &&
		       !in->m->mla_expanded;
	return in->util > 0 ? in->util
			    : kv_server_frac(in->server, in->mem, in->tp,
					     in->pp, mla);
}

/* v as the shortest text that reads back as v. */
static const char *shortest(double v, char *buf, size_t n)
{
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, n, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

/* The cache format of K (v false) or V as the engine names it: "auto"
 * where it is the engine's own for the model and K and V agree (not
 * llama.cpp's, whose flags always name theirs); NULL where it has no
 * name for it. */
static const char *dtype_of(const struct launch_engine *e,
			    const struct kv_fit_in *in, bool v)
{
	enum kv_dtype t = v ? kv_fit_v_dtype(in) : in->kv_dtype;
	if (e->kind != KV_SERVER_LLAMACPP && !in->v_own &&
	    t == kv_server_kv_dtype(in->server, in->m))
		return "auto";
	return t < KV_DTYPE_COUNT ? e->dtypes[t] : NULL;
}

/* The host tier's bytes of each GPU (off->total: vLLM's form, over
 * every rank). */
static double tier_rank_bytes(const struct kv_fit_in *in)
{
	const struct kv_offload *t = in->offload;
	double b = (double)t->bytes;
	return t->total ? b / ((double)in->tp * in->pp) : b;
}

/* Whether the row has a host tier of KV of bytes (not a ratio). */
static bool tier_bytes(const struct kv_fit_in *in)
{
	return in->offload && in->offload->bytes;
}

static const char *model_of(const struct kv_model *m, char *buf, size_t n);

/* LoRA's values (in->lora set): adapters a batch, rank, adapters in
 * host memory where given. */
static bool lora_value(const struct kv_fit_in *in, enum lf f, char *buf,
		       size_t n)
{
	if (f == LF_MAX_LORAS)
		snprintf(buf, n, "%llu",
			 (unsigned long long)kv_lora_max_loras(in));
	else if (f == LF_LORA_RANK)
		snprintf(buf, n, "%u", kv_lora_rank(in));
	else
		snprintf(buf, n, "%llu",
			 (unsigned long long)kv_lora_cpu_loras(in));
	return f != LF_CPU_LORAS || in->lora->cpu_loras;
}

/* The host tier's values, each in its engine's unit; *bad where SGLang's
 * whole GB cannot hold it. */
static bool tier_value(const struct kv_fit_in *in, enum lf f, char *buf,
		       size_t n, const char **bad)
{
	const struct kv_offload *t = in->offload;
	double b = tier_bytes(in) ? tier_rank_bytes(in) : 0;
	switch (f) {
	case LF_TIER_ON: return t && (t->bytes || t->ratio > 0);
	case LF_TIER_GIB_ALL:
		shortest(b * in->tp * in->pp / (double)(1ULL << 30), buf, n);
		return b > 0;
	case LF_TIER_GB:
		if (b / 1e9 != (double)(uint64_t)(b / 1e9))
			*bad = "--kv-offload of other than whole GB a GPU "
			       "(--hicache-size)";
		snprintf(buf, n, "%llu", (unsigned long long)(b / 1e9));
		return b > 0;
	case LF_TIER_RATIO:
		shortest(t ? t->ratio : 0, buf, n);
		return t && t->ratio > 0;
	case LF_TIER_BYTES:
		snprintf(buf, n, "%.0f", b);
		return b > 0;
	default: return false;
	}
}

/* llama.cpp's split and its cache's switches. */
static bool split_value(const struct args *a, const struct kv_plan_row *r,
			enum lf f, char *buf, size_t n)
{
	const struct kv_fit_in *in = &r->in;
	const struct kv_split *sp = &r->f.split;
	const struct kv_plan_opts *o = &a->o;
	bool all_moe = o->n_cpu_moe == KV_CPU_MOE_ALL;
	switch (f) {
	case LF_NGL:
		snprintf(buf, n, "%u", sp->gpu_layers + sp->head_gpu);
		return in->off.on;
	case LF_CPU_MOE: return in->off.on && all_moe;
	case LF_N_CPU_MOE:
		snprintf(buf, n, "%u", sp->moe_host);
		return in->off.on && sp->moe_host && !all_moe;
	case LF_OT: return in->off.on && o->not; /* a flag a rule: line() */
	case LF_NKVO: return in->off.on && o->nkvo;
	case LF_KV_UNIFIED: return in->kv_unified;
	case LF_SWA_FULL: return in->swa_full;
	case LF_FLASH_ATTN: snprintf(buf, n, "on"); return true;
	default: return false;
	}
}

/* TensorRT-LLM's windows as a YAML list, "[4096, 32768]". */
static bool windows_value(const struct kv_fit_in *in, char *buf, size_t n)
{
	size_t k = (size_t)snprintf(buf, n, "[");
	for (size_t i = 0; i < in->nwindows && k < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%llu", i ? ", " : "",
				      (unsigned long long)in->windows[i]);
	if (k < n)
		snprintf(buf + k, n - k, "]");
	return in->nwindows > 0;
}

/* The drafter's model as the engine takes it, or NULL without one. */
static const char *draft_of(const struct kv_spec *sp, char *buf, size_t n)
{
	return sp->draft ? model_of(sp->draft, buf, n) : NULL;
}

/* s as a JSON string, quotes and backslashes escaped. */
static size_t json_string(const char *s, char *buf, size_t n)
{
	size_t k = 0;
	if (k + 1 < n)
		buf[k++] = '"';
	for (; *s && k + 3 < n; s++) {
		if (*s == '"' || *s == '\\')
			buf[k++] = '\\';
		buf[k++] = *s;
	}
	if (k + 1 < n)
		buf[k++] = '"';
	buf[k < n ? k : n - 1] = '\0';
	return k;
}

/* Speculative decoding's values (o->spec on). */
static bool spec_value(const struct launch_engine *e, const struct args *a,
		       enum lf f, char *buf, size_t n)
{
	const struct kv_spec *sp = &a->o.spec;
	const char *method = kv_spec_engine_method(e->kind, sp->method);
	char m[sizeof ((struct kv_model *)0)->name];
	const char *draft = draft_of(sp, m, sizeof m);
	size_t k;
	switch (f) {
	case LF_SPEC_JSON:
		k = (size_t)snprintf(buf, n, "{\"method\": \"%s\", ",
				     method ? method : "");
		if (draft && k < n) {
			k += (size_t)snprintf(buf + k, n - k, "\"model\": ");
			k += k < n ? json_string(draft, buf + k, n - k) : 0;
			k += k < n ? (size_t)snprintf(buf + k, n - k, ", ") : 0;
		}
		if (k < n)
			snprintf(buf + k, n - k,
				 "\"num_speculative_tokens\": %u}", sp->k);
		return true;
	case LF_SPEC_ALGO: snprintf(buf, n, "%s", method); return true;
	case LF_SPEC_DRAFT:
		snprintf(buf, n, "%s", draft ? draft : "");
		return draft != NULL;
	case LF_SPEC_K: snprintf(buf, n, "%u", sp->k); return true;
	default: return false;
	}
}

/*
 * The value of field f for row r into buf, "" for a switch: true where
 * the row has the setting, false where it has none (the flag is left
 * out). A setting the row has and the engine cannot write sets *bad.
 */
static bool value(const struct launch_engine *e, const struct args *a,
		  const struct kv_plan_row *r, enum lf f, char *buf, size_t n,
		  const char **bad)
{
	const struct kv_fit_in *in = &r->in;
	const struct kv_plan_opts *o = &a->o;
	const char *s;
	uint32_t dp = kv_ep_dp(in);
	/* SGLang's and TensorRT-LLM's rank counts are every group's where
	 * the groups are within --tp's GPUs; a cap the engine shares among
	 * the groups (ep.h's rule) is written as all of theirs */
	bool within = dp > 1 && o->dp_attention && e->kind != KV_SERVER_VLLM;
	const struct kv_ep_rule *rl = kv_ep_rule(in->server);
	uint64_t seqs_x = rl && rl->seqs_shared ? dp : 1;
	uint64_t batched_x = rl && rl->batched_shared ? dp : 1;
	buf[0] = '\0';
	switch (f) {
	case LF_TP:
		snprintf(buf, n, "%u", within ? in->tp * dp : in->tp);
		return true;
	case LF_DP:
		snprintf(buf, n, "%u", dp);
		return dp > 1;
	case LF_DP_ATTN:
		if (flag_of(e, LF_DP_ATTN)->yaml) /* a YAML key's value */
			snprintf(buf, n, "true");
		return within;
	case LF_EP:
		snprintf(buf, n, "%u", in->ep);
		return in->ep > 1;
	case LF_EP_ON: return in->ep > 1;
	case LF_PP: snprintf(buf, n, "%u", in->pp); return true;
	case LF_SEQS:
		snprintf(buf, n, "%llu",
			 (unsigned long long)(users_of(r) * seqs_x));
		return true;
	case LF_CTX:
		snprintf(buf, n, "%llu", (unsigned long long)in->ctx);
		return true;
	case LF_CTX_ALL:
		snprintf(buf, n, "%llu",
			 (unsigned long long)(in->ctx * users_of(r)));
		return true;
	case LF_KV:
	case LF_K:
	case LF_V:
		if (!(s = dtype_of(e, in, f == LF_V))) {
			static char why[64]; /* the format named */
			snprintf(why, sizeof why, "--kv-dtype %s",
				 kv_dtype_name(f == LF_V ? kv_fit_v_dtype(in)
							 : in->kv_dtype));
			*bad = why;
		}
		snprintf(buf, n, "%s", s ? s : "");
		return s != NULL;
	case LF_UTIL:
		if (o->kv_memory && flag_of(e, LF_KV_BYTES))
			return false;
		shortest(util_of(in), buf, n);
		return true;
	case LF_KV_BYTES:
		snprintf(buf, n, "%llu", (unsigned long long)o->kv_memory);
		return o->kv_memory > 0;
	case LF_BATCHED:
		snprintf(buf, n, "%llu",
			 (unsigned long long)(r->f.batched_tokens *
					      batched_x));
		return true;
	case LF_PREFIX_CACHING: return o->prefix > 0;
	case LF_CHUNKED: return o->work.chunked;
	case LF_IMAGES:
		snprintf(buf, n, "{\"image\": %llu}",
			 (unsigned long long)o->images);
		return o->images > 0;
	case LF_N_BATCH:
		snprintf(buf, n, "%llu",
			 (unsigned long long)r->f.batched_tokens);
		return r->f.batched_tokens > LLAMACPP_N_BATCH;
	case LF_BLOCK:
		snprintf(buf, n, "%llu", (unsigned long long)in->block);
		return in->block > 0;
	case LF_WINDOWS: return windows_value(in, buf, n);
	case LF_SPEC_JSON:
	case LF_SPEC_ALGO:
	case LF_SPEC_DRAFT:
	case LF_SPEC_K:
		return kv_spec_on(&o->spec) && spec_value(e, a, f, buf, n);
	case LF_LORA_MODULES:
		if (!in->lora || !in->lora->modules)
			return false;
		kv_lora_modules_name(in->lora->modules, buf, n);
		return true;
	case LF_LORA_ON: return in->lora != NULL;
	case LF_MAX_LORAS:
	case LF_LORA_RANK:
	case LF_CPU_LORAS:
		return in->lora && lora_value(in, f, buf, n);
	default: break;
	}
	return tier_value(in, f, buf, n, bad) || split_value(a, r, f, buf, n);
}

/* What a row asks that its command cannot carry: the option, and why
 * where it is not that the engine has no flag or value for it. */
struct why {
	const char *opt;
	const char *note;
};

/* What the row asks that the engine has no flag for, or kvfit does not
 * write yet: opt NULL where there is none. */
static struct why unwritable(const struct launch_engine *e,
			     const struct args *a,
			     const struct kv_plan_row *r)
{
	const struct kv_fit_in *in = &r->in;
	const struct kv_plan_opts *o = &a->o;
	static char spec[64]; /* "--spec-method eagle3" */
	if (o->kv_memory && !flag_of(e, LF_KV_BYTES))
		return (struct why){"--kv-memory", NULL};
	if (in->block && !flag_of(e, LF_BLOCK))
		return (struct why){"--block-size", NULL};
	if (in->pp > 1 && !flag_of(e, LF_PP))
		return (struct why){"--pp", "llama-server splits layers over "
					    "every GPU it sees; no flag counts "
					    "them"};
	if (o->util > 0 && !flag_of(e, LF_UTIL))
		return (struct why){"--util", NULL};
	if (in->lora && in->lora->modules && !flag_of(e, LF_LORA_MODULES))
		return (struct why){"--lora-target-modules",
				    "vLLM reads them from the adapters"};
	if (o->split && !flag_of(e, LF_NGL))
		return (struct why){"a split between the GPU and host memory",
				    NULL};
	if (in->offload && in->offload->ratio > 0 &&
	    !flag_of(e, LF_TIER_RATIO))
		return (struct why){"--hicache-ratio", NULL};
	if (kv_spec_on(&o->spec) && !flag_of(e, LF_SPEC_JSON) &&
	    !flag_of(e, LF_SPEC_ALGO) &&
	    (o->spec.method != KV_SPEC_DRAFT || !flag_of(e, LF_SPEC_DRAFT))) {
		/* TensorRT-LLM's speculative_config, llama.cpp's n-gram
		 * maps (--spec-type): settings kvfit does not read back */
		snprintf(spec, sizeof spec, "--spec-method %s",
			 kv_spec_method_name(o->spec.method));
		return (struct why){spec, "not written for this engine yet"};
	}
	if (o->images && !flag_of(e, LF_IMAGES))
		return (struct why){"--images", NULL};
	if (o->audio_s > 0)
		return (struct why){"--audio-seconds", "not written for any "
					    "engine yet"};
	if (kv_ep_dp(in) > 1 && !o->dp_attention && !flag_of(e, LF_DP))
		return (struct why){"--dp", "trtllm-serve runs one group of "
					    "ranks (enable_attention_dp: "
					    "--dp-attention)"};
	return (struct why){NULL, NULL};
}

int kvfit_launch_check(const struct args *a, const struct kv_plan_row *r)
{
	const struct launch_engine *e = engine_of(a);
	struct why w = unwritable(e, a, r);
	const char *bad = NULL;
	char buf[1024];
	for (size_t i = 0; !w.opt && !bad && i < e->nflags; i++)
		value(e, a, r, e->flags[i].field, buf, sizeof buf, &bad);
	if (bad)
		w.opt = bad;
	if (w.opt && w.note)
		return cli_usage("-o %s: %s: %s", e->format, w.opt, w.note);
	if (w.opt)
		return cli_usage("-o %s: %s: %s has no flag or value for it",
				 e->format, w.opt,
				 kv_server_get(e->kind)->label);
	return 0;
}

/* A word of a shell line: quoted where it holds more than letters,
 * digits and . _ / : = @ % + , - */
static void word(const char *s)
{
	bool plain = *s != '\0';
	for (const char *p = s; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789._/:=@%+,-",
			    *p))
			plain = false;
	putchar(' ');
	if (plain) {
		fputs(s, stdout);
		return;
	}
	putchar('\'');
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*s);
	putchar('\'');
}

/* The model as the engine takes it: what the user gave (a name, a hub
 * id, a folder), a config file's folder where it named one, and a GGUF's
 * file (an Ollama model's blob) where one was read. */
static const char *model_of(const struct kv_model *m, char *buf, size_t n)
{
	const char *s = m->gguf ? m->path : m->name, *slash = strrchr(s, '/');
	size_t len = strlen(s);
	if (len < 5 || strcmp(s + len - 5, ".json"))
		return s;
	if (!slash)
		return ".";
	snprintf(buf, n, "%.*s", (int)(slash - s), s);
	return buf;
}

/* The row's settings that go to the engine's YAML file, one line each
 * into lines[] (at most n of size sz): a top-level key as "key: value",
 * a section's keys together as "section: {key: value, ...}". Returns the
 * lines written. */
static size_t yaml_of(const struct launch_engine *e, const struct args *a,
		      const struct kv_plan_row *r, char lines[][256], size_t n)
{
	char v[200];
	const char *bad = NULL;
	size_t k = 0;
	for (size_t i = 0; i < e->nflags && k < n; i++) {
		const struct launch_flag *fl = &e->flags[i];
		const char *dot = strchr(fl->flag, '.');
		if (!fl->yaml || !value(e, a, r, fl->field, v, sizeof v, &bad))
			continue;
		if (fl->field == LF_KV && !strcmp(v, "auto"))
			continue;
		if (!dot) {
			snprintf(lines[k++], 256, "%s: %s", fl->flag, v);
			continue;
		}
		int len = (int)(dot - fl->flag);
		char *l = k ? lines[k - 1] : NULL;
		size_t m = l ? strlen(l) : 0;
		if (l && !strncmp(l, fl->flag, (size_t)len) && l[len] == ':' &&
		    l[m - 1] == '}') { /* the section goes on */
			snprintf(l + m - 1, 256 - (m - 1), ", %s: %s}", dot + 1,
				 v);
		} else {
			snprintf(lines[k++], 256, "%.*s: {%s: %s}", len,
				 fl->flag, dot + 1, v);
		}
	}
	return k;
}

void kvfit_launch_row(const struct args *a, const struct kv_plan_row *r)
{
	const struct launch_engine *e = engine_of(a);
	const struct kv_plan_opts *o = &a->o;
	char v[1024], yaml[8][256], m[sizeof ((struct kv_model *)0)->name];
	const char *bad = NULL;
	size_t ny = yaml_of(e, a, r, yaml, 8);
	if (ny) {
		fputs("printf '%s\\n'", stdout);
		for (size_t i = 0; i < ny; i++)
			word(yaml[i]);
		printf(" > %s && ", YAML_FILE);
	}
	fputs(e->command, stdout);
	if (e->model_flag)
		word(e->model_flag);
	word(model_of(r->in.m, m, sizeof m));
	for (size_t i = 0; i < e->nflags; i++) {
		const struct launch_flag *fl = &e->flags[i];
		if (fl->yaml || !value(e, a, r, fl->field, v, sizeof v, &bad))
			continue;
		if (fl->field == LF_OT) {
			for (size_t k = 0; k < o->not; k++) {
				char rule[300];
				snprintf(rule, sizeof rule, "%s=%s",
					 o->ot[k].pattern, o->ot[k].buft);
				word(fl->flag);
				word(rule);
			}
			continue;
		}
		word(fl->flag);
		if (v[0])
			word(v);
	}
	if (ny) {
		word(e->yaml_flag);
		word(YAML_FILE);
	}
	putchar('\n');
	fflush(stdout);
}

int kvfit_launch_opt(int c, const char *s, struct args *a)
{
	uint64_t *v = NULL;
	size_t n = 0;
	int e;
	switch (c) {
	case OPT_CTX_SIZE: /* divided by the slots once all are read */
		if ((e = cli_sweep("--ctx-size", s, &v, &n)))
			return e;
		free(a->ctx_sizes);
		a->ctx_sizes = v;
		a->nctx_sizes = n;
		return 0;
	case OPT_FLASH_ATTN:
		if (!strcmp(s, "on") || !strcmp(s, "auto"))
			return 0;
		return cli_usage("--flash-attn: on or auto (llama.cpp's compute "
				 "buffer is modelled with flash attention), got "
				 "'%s'",
				 s);
	case OPT_SPEC_CONFIG: { /* vLLM's: method, model, tokens */
		char err[KV_ERRLEN];
		if (kv_spec_vllm_parse(s, &a->o.spec, a->spec_model,
				       sizeof a->spec_model, err))
			return cli_usage("%s", err);
		a->draft = a->spec_model[0] ? a->spec_model : NULL;
		return 0;
	}
	case OPT_LIMIT_MM: { /* vLLM's: the images a prompt carries */
		char err[KV_ERRLEN];
		if (kv_vision_vllm_limit_parse(s, &a->o.images, err))
			return cli_usage("%s", err);
		return 0;
	}
	case OPT_N_BATCH:
		return cli_u64("--batch-size", s, 1, 1ULL << 30, &a->n_batch);
	case OPT_ENABLE_LORA: a->lora_given = true; return 0;
	case OPT_PREFIX_CACHING: return 0; /* --prefix plans the sharing */
	case OPT_HICACHE: a->hicache = true; return 0;
	case OPT_CHUNKED: a->o.work.chunked = true; return 0;
	default: return CLI_NOT_MINE;
	}
}

int kvfit_launch_after(struct args *a)
{
	struct kv_plan_opts *o = &a->o;
	if (a->ctx_sizes) {
		uint64_t slots = o->seqs ? o->seqs : 1;
		if (o->ctx)
			return cli_usage("--ctx and --ctx-size: one context; "
					 "give one");
		for (size_t i = 0; i < a->nctx_sizes; i++) {
			if (a->ctx_sizes[i] < slots)
				return cli_usage("--ctx-size %llu: fewer tokens "
						 "than the %llu slots of "
						 "--parallel",
						 (unsigned long long)
							 a->ctx_sizes[i],
						 (unsigned long long)slots);
			a->ctx_sizes[i] /= slots;
		}
		o->ctx = a->ctx_sizes;
		o->nctx = a->nctx_sizes;
		a->ctx_sizes = NULL;
	}
	if (a->n_batch) { /* llama.cpp's n_ubatch is at most n_batch */
		uint64_t ub = o->batched ? o->batched
				: kv_server_get(KV_SERVER_LLAMACPP)->batched;
		o->batched = ub < a->n_batch ? o->batched : a->n_batch;
	}
	if (a->hicache && !a->tier_opt) { /* SGLang's default ratio */
		a->tier_opt = "--enable-hierarchical-cache";
		a->off.ratio = 2.0;
	}
	if (a->launch && a->json)
		return cli_usage("-o %s writes commands; give it or --json, "
				 "not both",
				 engine_of(a)->format);
	return a->launch ? kvfit_launch_opts(a) : 0;
}
