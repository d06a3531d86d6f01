/*
 * fit.c - capacity and decode-step arithmetic of kvfit. The model is cut
 * into pipeline stages (layers) and tensor-parallel ranks (heads, as
 * layout.c splits them); on each stage the engine's rule says what memory
 * is free and how many tokens every layer keeps per sequence; the stage
 * where the fewest sequences fit decides.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kv/fit.h"
#include "kv/params.h"

#define F(t) (1u << KV_DTYPE_##t)
#define FLOATS (F(F32) | F(F16) | F(BF16))

/* Policies, from the engines' public sources (see kvfit(1), ENGINES):
 * vLLM's kv_cache_dtype (auto, fp8, fp8_e5m2, and a per-token-head int8),
 * SGLang's (auto, fp8_e4m3, fp8_e5m2), TensorRT-LLM's (the model's, fp8),
 * llama.cpp's -ctk/-ctv types (default f16). */
static const struct kv_policy_info engines[KV_POLICY_COUNT] = {
	[KV_POLICY_IDEAL] = {"ideal", 0, false, 1, 1, 1, KV_SWA_WINDOW, 0,
			     (1u << KV_DTYPE_INT4) - 1, KV_DTYPE_COUNT, false,
			     false},
	[KV_POLICY_VLLM] = {"vllm", 0.92, false, 16, 16, 1, KV_SWA_VLLM, 0,
			    FLOATS | F(FP8) | F(FP8_E5M2) | F(INT8),
			    KV_DTYPE_COUNT, false, false},
	[KV_POLICY_SGLANG] = {"sglang", 0.88, false, 1, 1, 1, KV_SWA_FULL, 0,
			      FLOATS | F(FP8) | F(FP8_E5M2), KV_DTYPE_COUNT,
			      true, false},
	/* TensorRT-LLM's V1 cache manager, its default for every model whose
	 * class does not ask for V2 (Gemma 2/3, gpt-oss and Mistral do
	 * not): one pool, every layer the whole sequence, unless
	 * max_attention_window is set (llmapi/llm_args.py KvCacheConfig,
	 * max_attention_window None; _torch/pyexecutor/resource_manager
	 * KVCacheManager: one window, max_seq_len); a model's own window
	 * reaches its attention kernel only */
	[KV_POLICY_TRTLLM] = {"trtllm", 0.9, true, 32, 32, 1, KV_SWA_FULL,
			      0, FLOATS | F(FP8), KV_DTYPE_COUNT, false,
			      true},
	[KV_POLICY_LLAMACPP] = {"llamacpp", 0, false, 1, 1, 256,
				KV_SWA_LLAMACPP, 512,
				FLOATS | F(Q8_0) | F(Q4_0) | F(Q4_1) |
					F(Q5_0) | F(Q5_1) | F(IQ4_NL),
				KV_DTYPE_F16, false, false},
};

bool kv_policy_stores(enum kv_policy e, enum kv_dtype t)
{
	return (unsigned)e < KV_POLICY_COUNT && (unsigned)t < KV_DTYPE_COUNT &&
	       (engines[e].formats >> t & 1);
}

char *kv_policy_formats(enum kv_policy e, char *buf, size_t n)
{
	size_t at = 0;
	buf[0] = '\0';
	for (int t = 0; t < KV_DTYPE_COUNT && at < n; t++)
		if (kv_policy_stores(e, (enum kv_dtype)t))
			at += (size_t)snprintf(buf + at, n - at, "%s%s",
					       at ? ", " : "",
					       kv_dtype_name((enum kv_dtype)t));
	return buf;
}

enum kv_dtype kv_policy_weights_dtype(enum kv_policy e, enum kv_dtype model)
{
	if (e == KV_POLICY_IDEAL || model != KV_DTYPE_F32)
		return model;
	return e == KV_POLICY_LLAMACPP ? KV_DTYPE_F16 : KV_DTYPE_BF16;
}

enum kv_dtype kv_policy_kv_dtype(enum kv_policy e, enum kv_dtype model)
{
	const struct kv_policy_info *p = kv_policy_info(e);
	if (p && p->kv_auto != KV_DTYPE_COUNT)
		return p->kv_auto;
	return kv_policy_weights_dtype(e, model);
}

const struct kv_policy_info *kv_policy_info(enum kv_policy e)
{
	if ((unsigned)e >= KV_POLICY_COUNT)
		return NULL;
	return &engines[e];
}

int kv_policy_parse(const char *s, enum kv_policy *out)
{
	static const struct {
		const char *name;
		enum kv_policy e;
	} alias[] = {
		{"trt-llm", KV_POLICY_TRTLLM}, {"tensorrt-llm", KV_POLICY_TRTLLM},
		{"tensorrt_llm", KV_POLICY_TRTLLM},
		{"llama.cpp", KV_POLICY_LLAMACPP},
		{"llama-cpp", KV_POLICY_LLAMACPP},
	};
	for (int e = 0; e < KV_POLICY_COUNT; e++)
		if (!strcasecmp(s, engines[e].name)) {
			*out = (enum kv_policy)e;
			return 0;
		}
	for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
		if (!strcasecmp(s, alias[i].name)) {
			*out = alias[i].e;
			return 0;
		}
	return KV_EINVAL;
}

void kv_vllm_batch_defaults(uint64_t mem, const char *gpu, uint64_t *tokens,
			    uint64_t *seqs)
{
	const uint64_t gib = 1ULL << 30;
	bool a100 = gpu && strcasestr(gpu, "a100");
	*tokens = mem >= 160 * gib ? 16384 : mem >= 70 * gib && !a100 ? 8192
									: 2048;
	*seqs = mem >= 70 * gib && (!a100 || mem >= 160 * gib) ? 1024 : 256;
}

/* A Blackwell data-centre GPU (SM100 family), told by its name. */
static bool sm100(const char *gpu)
{
	static const char *const names[] = {"b200", "b300", "gb200", "gb300",
					    NULL};
	for (const char *const *g = names; gpu && *g; g++)
		if (strcasestr(gpu, *g))
			return true;
	return false;
}

/* vLLM's MLA page by the back end it picks (vllm/platforms/cuda.py,
 * _get_backend_priorities): on Hopper FlashAttention-MLA (16) for a
 * 16-bit cache, FlashMLA (64) for fp8; on Blackwell FlashInfer-MLA (32);
 * elsewhere Triton MLA (16). The GPU is told by its name. */
static uint64_t vllm_mla_block(const char *gpu, enum kv_dtype kv)
{
	static const char *const hopper[] = {"h100", "h200", "h800", "h20",
					     "gh200", NULL};
	for (const char *const *g = hopper; gpu && *g; g++)
		if (strcasestr(gpu, *g))
			return kv == KV_DTYPE_FP8 || kv == KV_DTYPE_FP8_E5M2 ? 64
									     : 16;
	return sm100(gpu) ? 32 : 16;
}

/* SGLang's chunked_prefill_size by the GPU's memory
 * (python/sglang/srt/arg_groups/memory_hook.py, handle_gpu_memory_settings,
 * commit 031ed82d): 2,048 tokens below 20 GiB, 4,096 below 60, 8,192
 * below 160, 16,384 from there. */
static uint64_t sglang_chunk(uint64_t mem)
{
	double mib = (double)mem / (1 << 20), g = 1024;
	return mib < 20 * g    ? 2048
	       : mib < 60 * g  ? 4096
	       : mib < 160 * g ? 8192
			       : 16384;
}

/* The sizes SGLang captures prefill CUDA graphs of, up to max tokens
 * (cuda_graph_hook.py, generate_prefill_cuda_graph_batch_sizes): every 4
 * to 32, 16 to 256, 32 to 512, 64 to 1,024, 256 to 4,096, then every 512
 * from 4,608. */
static uint64_t sglang_prefill_graphs(uint64_t max)
{
	static const uint64_t steps[][3] = {{4, 32, 4},	    {48, 256, 16},
					    {288, 512, 32},   {576, 1024, 64},
					    {1280, 4096, 256}};
	uint64_t n = 0;
	for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
		for (uint64_t v = steps[i][0]; v <= steps[i][1] && v <= max;
		     v += steps[i][2])
			n++;
	return n + (max >= 4608 ? (max - 4608) / 512 + 1 : 0);
}

/*
 * SGLang's mem_fraction_static (memory_hook.py, handle_gpu_memory_settings
 * and reserve_for_graph_mb, commit 031ed82d), from the GPU's memory in MiB:
 * a reserve of 512 MiB, 1.5 MiB per token of the chunked prefill (its
 * default by memory, at least 2,048), tp x pp / 8 GiB, 2 MiB per decode
 * CUDA-graph batch size (max_bs by memory and tp), and the prefill CUDA
 * graphs (on by default): 8 MiB for each size up to the chunk (8,192 at
 * most under pp), 1.5 GiB with latent attention (MLA); at least 10 GiB on
 * a GPU above 60 GiB. The fraction is what is left, to three decimals.
 */
static double sglang_frac(uint64_t mem, uint32_t tp, uint32_t pp, bool mla)
{
	double mib = (double)mem / (1 << 20), g = 1024;
	uint64_t chunk = sglang_chunk(mem);
	double bs = mib < 20 * g    ? 8
		    : mib < 35 * g  ? (tp < 4 ? 48 : 160)
		    : mib < 60 * g  ? (tp < 4 ? 32 : 160)
		    : mib < 160 * g ? (tp < 4 ? 256 : 512)
				    : 512;
	uint64_t pre = pp > 1 && chunk > 8192 ? 8192 : chunk;
	double r = 512 + (double)(chunk > 2048 ? chunk : 2048) * 1.5 +
		   (double)tp * pp / 8 * 1024 + bs * 2 +
		   (mla ? 1.5 * 1024 : 8.0 * (double)sglang_prefill_graphs(pre));
	if (mib > 60 * g && r < 10 * g)
		r = 10 * g;
	return mib > r ? round((mib - r) / mib * 1000) / 1000 : 0;
}

double kv_policy_frac(enum kv_policy e, uint64_t mem, uint32_t tp,
		      uint32_t pp, bool mla)
{
	if (e == KV_POLICY_SGLANG)
		return sglang_frac(mem, tp, pp, mla);
	const struct kv_policy_info *i = kv_policy_info(e);
	return i ? i->frac : 0;
}


static uint64_t round_up(uint64_t v, uint64_t to)
{
	return to > 1 && v % to ? v + (to - v % to) : v;
}

/* a * b / c without overflow for c > 0 and a * b / c < 2^64. */
static uint64_t muldiv(uint64_t a, uint64_t b, uint64_t c)
{
	return (uint64_t)((unsigned __int128)a * b / c);
}

/* What one pipeline stage holds and reads, on one tensor-parallel rank. */
struct stage {
	uint32_t first, n;     /* layers [first, first + n) */
	uint64_t params;       /* parameters of the stage, whole (not / tp) */
	uint64_t stored;       /* their bytes as the checkpoint stores them */
	uint64_t routed;       /* of params: routed experts */
	uint32_t experts, experts_active;
	uint64_t weights;      /* weight bytes on one rank */
	uint64_t routed_bytes; /* of weights: routed experts */
	uint64_t lookup_bytes; /* of weights: tables a step reads rows of */
	uint64_t bpt, dup;     /* KV bytes per token; of them, copies */
	uint64_t seq, shared;  /* bytes kept per sequence, and once */
	uint64_t seq_dup, shared_dup; /* of them, copies other ranks hold */
	uint64_t rseq, rshared; /* bytes a step reads per sequence, once */
	uint64_t free_kv, missing, budget;
	struct kv_runtime rt;  /* the engine's own memory, modelled */
	double flops;          /* FLOPs one token costs on one rank */
	double attn_flops;     /* of flops, attention over the tokens read */
	double head_flops;     /* of flops, the output head's logits */
	double users;          /* INFINITY when the stage keeps nothing */
	uint64_t whole;        /* whole sequences that fit */
	uint64_t tokens;       /* KV tokens, as the engine reports them */
	uint64_t blocks;       /* vLLM: blocks of its pool */
	uint64_t block;        /* vLLM: tokens per page of full attention,
				* raised for a Mamba page; else 0 */
	double concurrency;    /* vLLM: num_blocks / blocks a request needs */
};

struct ctx {
	const struct kv_fit_in *in;
	const struct kv_policy_info *ei;
	struct kv_opts o;
	uint64_t block;        /* tokens per page */
	uint64_t batched;      /* tokens a step schedules */
	uint64_t seqs;         /* sequences that may run; 0: no cap */
	uint64_t ctx;          /* padded context */
	uint64_t total_params;
	uint64_t state;        /* Mamba state bytes per sequence, all layers */
	uint32_t ssm_layers;   /* layers that keep that state */
	bool mla;              /* a latent (MLA) cache, not expanded */
};

/*
 * Whether llama.cpp runs a model's sliding window: only where the loader
 * of the architectures its converter makes sets one (src/models/<arch>.cpp
 * load_arch_hparams, build b11118): Gemma 2, 3 and 3n, gpt-oss, Command
 * R7B (cohere2), OLMo 3 (olmo2), AFMoE, MiMo-V2, Llama 4's chunks, and
 * EXAONE 4 at 32B (64 layers) only. Mistral and Mixtral convert as
 * `llama`, Qwen2 as `qwen2`, and Phi-3's loader turns its window off
 * ("Phi SWA is currently disabled"): they keep the whole context.
 */
static bool llamacpp_swa(const struct kv_model *m)
{
	static const char *const swa[] = {
		"gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text",
		"gpt_oss", "cohere2", "olmo3", "afmoe", "mimo_v2_flash",
		"llama4", "llama4_text", NULL};
	for (const char *const *t = swa; *t; t++)
		if (!strcmp(m->model_type, *t))
			return true;
	return !strcmp(m->model_type, "exaone4") && m->n_layers == 64;
}

/* Tokens layer g keeps: per sequence (`priv`, in pages) and once
 * (`shared`: whole pages of the shared prefix), and the tokens a step
 * reads (`rpriv`, `rshared`: exact, no padding). */
static void layer_tokens(const struct ctx *c, const struct kv_geom *g,
			 uint64_t *priv, uint64_t *shared, uint64_t *rpriv,
			 uint64_t *rshared)
{
	const struct kv_fit_in *in = c->in;
	struct kv_geom w = *g;
	uint64_t b = c->block, p = in->prefix;
	if (g->window && c->ei->swa == KV_SWA_VLLM) {
		/* SlidingWindowSpec.max_memory_usage_bytes: the window and
		 * the tokens of the steps in flight (two, with async
		 * scheduling), in pages, and one page more as the window
		 * straddles one */
		uint64_t t = g->window - 1 + 2 * c->batched;
		w.window = round_up(t < c->ctx ? t : c->ctx, b) + b;
	} else if (g->window && g->window < c->ctx &&
		   (c->ei->swa == KV_SWA_FULL ||
		    (c->ei->swa == KV_SWA_LLAMACPP &&
		     (!llamacpp_swa(in->m) || in->swa_full)))) {
		w.window = 0;
	} else if (g->window && g->window < c->ctx &&
		   c->ei->swa == KV_SWA_LLAMACPP && !in->kv_unified) {
		/* a stream per sequence, each with its own SWA cache of
		 * pad256(min(n_ctx_seq, n_swa + n_ubatch)) cells
		 * (llama-kv-cache-iswa.cpp) */
		uint64_t t = g->window + c->batched;
		w.window = round_up(t < c->ctx ? t : c->ctx, 256);
	}
	/* a layer keeps the last `kept` tokens; the prefix is the first p;
	 * the token a sequence is generating is its own, so at least one
	 * token (one page) of every layer stays private */
	uint64_t kept = kv_geom_tokens(&w, c->ctx, 1);
	uint64_t sh = p > c->ctx - kept ? p - (c->ctx - kept) : 0;
	if (sh >= kept)
		sh = kept - 1;
	sh = b > 1 ? sh / b * b : sh; /* engines share whole pages */
	*shared = sh;
	*priv = sh ? round_up(kept - sh, b) : kv_geom_tokens(&w, c->ctx, b);
	if (c->ei->swa == KV_SWA_LLAMACPP && in->kv_unified && w.window &&
	    w.window < c->ctx)
		*shared += c->batched; /* one stream: n_ubatch cells, once */
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

static uint64_t cdiv(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* Layers of one KV cache spec, as vLLM groups them. */
struct spec {
	enum kv_attn kind;  /* full (MLA too), sliding, chunked, none:
			     * Mamba */
	uint64_t window;
	uint64_t tb;        /* bytes a token takes in one layer; Mamba:
			     * the state's page */
	uint64_t block;     /* tokens per page */
	uint64_t page;      /* bytes per page of one layer */
	uint32_t n;         /* layers */
};

/*
 * vLLM's KV cache manager (v1; vllm/v1/core/kv_cache_utils.py, upstream
 * main of August 2026, after v0.27): every layer of the stage has a spec
 * (full attention, a sliding window, a Mamba state); the page sizes are
 * made one (a Mamba page raises the attention block until a page covers
 * it, Platform._align_hybrid_block_size, then is padded to it; a smaller
 * attention page takes a larger block, unify_kv_cache_spec_page_size);
 * layers of each spec go in groups of group_size (the fewest layers of a
 * spec, or the most when that is below 1.5 times the fewest), the last
 * group of a spec padded (_get_kv_cache_groups_uniform_page_size); the
 * pool holds num_blocks = free // page // group_size pages per group
 * slot (get_num_blocks); a request needs, per group, ceil(ctx / block)
 * pages, a window's ceil(min(window - 1 + 2 x batched, ctx) / block) + 1,
 * a chunk's ceil(min(chunk + 2 x batched, ctx) / block)
 * (ChunkedLocalAttentionSpec: the hybrid manager is on for Llama 4's
 * chunked local attention by default since
 * VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE defaults to 1,
 * vllm/envs.py, vllm/config/vllm.py), a Mamba state's 2 (prefix caching
 * aligns it); max concurrency is num_blocks over their sum, and "GPU KV
 * cache size" that times ctx (get_max_concurrency_for_kv_cache_config,
 * get_kv_cache_capacity). A shared prefix's whole pages of full layers
 * are held once.
 */
static int vllm_capacity(const struct ctx *c, struct stage *s, char *err)
{
	const struct kv_model *m = c->in->m;
	struct spec sp[64];
	uint32_t ns = 0;
	uint64_t state = c->ssm_layers ? c->state / c->ssm_layers : 0;
	int e;
	/* only full attention: one group whose page is every layer's page
	 * together (UniformTypeKVCacheSpecs; for layers of one size the
	 * same count, floor(floor(F / page) / n) = floor(F / (n page))) */
	bool uniform = true;
	for (uint32_t i = s->first; i < s->first + s->n && uniform; i++) {
		struct kv_geom g;
		if ((e = kv_layer_geom(m, i, &c->o, &g, err)))
			return e;
		uniform = g.attn == KV_ATTN_NONE
				  ? !(m->layers[i].ssm && state)
				  : !((g.attn == KV_ATTN_SLIDING ||
				       g.attn == KV_ATTN_CHUNKED) &&
				      g.window);
	}
	for (uint32_t i = s->first; i < s->first + s->n; i++) {
		struct kv_geom g;
		struct spec x = {0};
		if ((e = kv_layer_geom(m, i, &c->o, &g, err)))
			return e;
		if (g.attn == KV_ATTN_NONE) {
			if (!m->layers[i].ssm || !state)
				continue;
			x.kind = KV_ATTN_NONE;
			x.tb = state;
		} else {
			if ((e = kv_geom_token_bytes(&g, &c->o, &x.tb, err)))
				return e;
			x.kind = (g.attn == KV_ATTN_SLIDING ||
				  g.attn == KV_ATTN_CHUNKED) && g.window
					 ? g.attn
					 : KV_ATTN_FULL;
			x.window = x.kind != KV_ATTN_FULL ? g.window : 0;
		}
		if (uniform && ns) {
			sp[0].tb += x.tb;
			continue;
		}
		uint32_t k = 0;
		while (k < ns && !(sp[k].kind == x.kind &&
				   sp[k].window == x.window && sp[k].tb == x.tb))
			k++;
		if (k == ns && ns == 64) { /* not grouped: the generic count */
			s->concurrency = s->users;
			return 0;
		}
		if (k == ns)
			sp[ns++] = x;
		sp[k].n++;
	}
	if (!ns)
		return 0;
	/* the attention block a Mamba page asks for: a multiple of the
	 * kernel's block (16; 128 for MLA) whose page covers the state */
	uint64_t block = c->block, tb1 = 0, mpage = 0;
	for (uint32_t k = 0; k < ns; k++) {
		if (sp[k].kind == KV_ATTN_NONE)
			mpage = sp[k].tb;
		else if (!tb1)
			tb1 = sp[k].tb;
	}
	if (mpage && tb1) {
		uint64_t align = block > 16 ? block : 16;
		if (m->kv_lora_rank && !m->mla_expanded && align < 128)
			align = 128;
		uint64_t ab = align * cdiv(mpage, align * tb1);
		if (block < ab)
			block = ab;
	}
	uint64_t page = 0;
	for (uint32_t k = 0; k < ns; k++) {
		sp[k].block = block;
		sp[k].page = sp[k].kind == KV_ATTN_NONE ? sp[k].tb
							: block * sp[k].tb;
		if (sp[k].page > page)
			page = sp[k].page;
	}
	if (mpage && tb1)
		page = block * tb1 > mpage ? block * tb1 : mpage;
	uint32_t lo = UINT32_MAX, hi = 0;
	for (uint32_t k = 0; k < ns; k++) {
		/* a smaller attention page takes more tokens per page */
		if (sp[k].kind != KV_ATTN_NONE && sp[k].page < page &&
		    page % sp[k].page == 0)
			sp[k].block *= page / sp[k].page;
		sp[k].page = page; /* a Mamba page is padded to it */
		lo = sp[k].n < lo ? sp[k].n : lo;
		hi = sp[k].n > hi ? sp[k].n : hi;
	}
	uint64_t gs = ns == 1 || hi * 2 < lo * 3 ? hi : lo;
	uint64_t per = 0, held = 0, pfx = c->in->prefix;
	for (uint32_t k = 0; k < ns; k++) {
		const struct spec *x = &sp[k];
		uint64_t groups = cdiv(x->n, gs), need, sh = 0;
		if (x->kind == KV_ATTN_NONE) {
			need = ns > 1 ? 2 : 1;
		} else if (x->kind == KV_ATTN_SLIDING) {
			uint64_t t = x->window - 1 + 2 * c->batched;
			need = cdiv(t < c->ctx ? t : c->ctx, x->block) + 1;
		} else if (x->kind == KV_ATTN_CHUNKED) {
			/* ChunkedLocalAttentionSpec: the chunk and the tokens
			 * in flight, no page more (a chunk starts at a page) */
			uint64_t t = x->window + 2 * c->batched;
			need = cdiv(t < c->ctx ? t : c->ctx, x->block);
		} else {
			need = cdiv(c->ctx, x->block);
			sh = pfx / x->block;
			if (sh >= need)
				sh = need - 1;
		}
		per += groups * need;
		held += groups * sh;
		if (x->kind == KV_ATTN_FULL && x->block > s->block)
			s->block = x->block;
	}
	uint64_t bytes_per_block = page * gs;
	s->blocks = s->free_kv / page / gs;
	s->concurrency = (double)s->blocks / (double)per;
	s->tokens = (uint64_t)(s->concurrency * (double)c->ctx);
	s->seq = (per - held) * bytes_per_block;
	s->shared = held * bytes_per_block;
	s->seq_dup = s->shared_dup = 0;
	if (s->dup && s->bpt) { /* replicated heads (MLA, tp > heads) */
		s->seq_dup = muldiv(s->seq, s->dup, s->bpt);
		s->shared_dup = muldiv(s->shared, s->dup, s->bpt);
	}
	s->whole = s->blocks > held ? (s->blocks - held) / (per - held) : 0;
	s->users = s->blocks > held ? (double)(s->blocks - held) /
					      (double)(per - held)
				    : 0;
	return 0;
}

/*
 * SGLang's split of a Mamba hybrid's memory (v0.5, model_runner.py,
 * handle_max_mamba_cache): of the bytes left, 0.9 / 1.9 go to a pool of
 * Mamba states (mamba_full_memory_ratio 0.9), floor(that / one request's
 * state) of them, and the rest to a token pool of the attention layers
 * alone; with the radix cache on, a third of the states may run (the
 * others hold cached prefixes: MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO
 * 3). A request holds ctx tokens and one state.
 */
static void sglang_mamba(const struct ctx *c, struct stage *s)
{
	uint32_t ssm = 0;
	for (uint32_t i = s->first; i < s->first + s->n; i++)
		ssm += c->in->m->layers[i].ssm;
	uint64_t st = ssm && c->ssm_layers ? c->state / c->ssm_layers * ssm
					   : 0;
	if (!st || !s->bpt || s->shared)
		return;
	uint64_t slots = (uint64_t)((double)s->free_kv * 0.9 / 1.9) / st;
	uint64_t rest = s->free_kv - slots * st;
	s->tokens = rest / s->bpt;
	double by_tokens = (double)s->tokens / (double)c->ctx;
	double by_states = (double)(slots / 3);
	s->users = by_tokens < by_states ? by_tokens : by_states;
	s->whole = (uint64_t)s->users;
	s->seq = c->ctx * s->bpt + st;
}

/*
 * Whether SGLang splits a model's full and sliding layers into two pools:
 * only for the architectures configs/model_config.py's
 * is_hybrid_swa_model lists (gpt-oss, Llama 4, MiMo-V2-Flash, Step-3.5,
 * Gemma 4), told here by their model_type; every other model with a
 * window (Gemma 2 and 3, whose model override turns the split off too,
 * Mistral, Phi-3) keeps every layer for every token in one pool.
 */
static bool sglang_hybrid_swa(const struct kv_model *m)
{
	static const char *const swa[] = {"gpt_oss", "llama4",
					  "mimo_v2_flash", "step3p5",
					  "gemma4", "gemma4_text", NULL};
	for (const char *const *t = swa; *t; t++)
		if (!strcmp(m->model_type, *t))
			return true;
	return false;
}

/*
 * SGLang's hybrid SWA memory (v0.5, model_runner_kv_cache_mixin.py,
 * set_num_tokens_hybrid_swa), for a stage with both full and sliding
 * layers of a model sglang_hybrid_swa() names: T0 = free // (F + S)
 * tokens of every layer (F, S: the bytes a token takes in all full, all
 * sliding layers), then a full pool of
 * T0 (F + S) / (F + r S) tokens and a sliding pool of r times that
 * (swa_full_tokens_ratio r = 0.8); a request holds ctx tokens of the
 * first and min(ctx, window) of the second. Returns false where it does
 * not apply (the one pool of every layer then).
 */
static bool sglang_swa(const struct ctx *c, struct stage *s, char *err)
{
	const struct kv_model *m = c->in->m;
	uint64_t f = 0, sw = 0, win = 0;
	for (uint32_t i = s->first; i < s->first + s->n; i++) {
		struct kv_geom g;
		uint64_t tb;
		if (kv_layer_geom(m, i, &c->o, &g, err) ||
		    g.attn == KV_ATTN_NONE ||
		    kv_geom_token_bytes(&g, &c->o, &tb, err))
			continue;
		if (g.attn == KV_ATTN_SLIDING && g.window) {
			sw += tb;
			win = g.window > win ? g.window : win;
		} else {
			f += tb;
		}
	}
	if (!f || !sw || s->shared || c->ssm_layers ||
	    !sglang_hybrid_swa(m))
		return false;
	const double r = 0.8;
	uint64_t t0 = s->free_kv / (f + sw);
	double full = floor((double)t0 * (double)(f + sw) /
			    ((double)f + r * (double)sw));
	double swa = floor(full * r);
	double kept = (double)(win < c->ctx ? win : c->ctx);
	double a = full / (double)c->ctx, b = swa / kept;
	s->users = a < b ? a : b;
	s->whole = (uint64_t)s->users;
	s->tokens = (uint64_t)full;
	s->seq = c->ctx * f + (uint64_t)kept * sw;
	return true;
}

/* A forward pass of `tokens` tokens at its peak, on one rank: at the MLP
 * the residual and its norm (2 x hidden) and the gate, up and activation
 * (3 x its width / tp; MoE: the top-k experts' and the shared ones'), in
 * 16 bits. An absurd shape is capped (a float past 2^64 has no cast). */
static uint64_t forward_bytes(const struct ctx *c, uint64_t tokens)
{
	const struct kv_model *m = c->in->m;
	uint64_t width = m->intermediate;
	if (m->n_experts)
		width = m->layers[m->n_layers - 1].ffn_dim * m->n_experts_active +
			m->shared_ffn_dim;
	double tok = 2.0 * (double)m->hidden + 3.0 * (double)width / c->in->tp;
	double b = (double)tokens * tok * 2;
	return b < 0x1p62 ? (uint64_t)b : (uint64_t)0x1p62;
}

/* vLLM's CUDA-graph capture sizes up to `max` (config/vllm.py,
 * _set_cudagraph_sizes): 1, 2, 4, then every 8 below 256, then every 16. */
static uint64_t vllm_graph_sizes(uint64_t max)
{
	uint64_t n = (max >= 1) + (max >= 2) + (max >= 4);
	n += (max < 255 ? max : 255) / 8;
	if (max >= 256)
		n += (max - 256) / 16 + 1;
	return n;
}

/*
 * What an engine keeps on each GPU for its own work, outside weights and
 * cache, term by term (kvfit(1), RUNTIME MEMORY):
 *   vLLM (gpu_worker.py, determine_available_memory): the peak of its
 *     profile run, a forward pass of max_num_batched_tokens tokens or the
 *     sampler's pass over min(tokens, max_num_seqs) rows of logits (the
 *     model's 16 bits, a float32 copy, the probabilities and the
 *     exponential noise: 14 bytes a logit), whichever is larger; its CUDA
 *     graph estimate (gpu_model_runner.py, profile_cudagraph_memory): the
 *     first capture's pool, a forward pass of the largest capture size
 *     (2 x max_num_seqs, at most 512, 1024 on SM100 or for gpt-oss, and
 *     at most the step's tokens), then 1 MiB (its floor) for each further
 *     size, in PIECEWISE mode and in FULL mode (sizes up to
 *     max_num_seqs); and the non-torch memory that grows after its
 *     snapshot (cuBLAS workspaces): the 0.16 GiB it logs on one H100 (its
 *     CUDA context and NCCL predate the snapshot and are not counted).
 *   TensorRT-LLM (_util.py, KvCacheCreator): the forward pass of
 *     max_num_tokens (8192); the CUDA graphs of its 34 batch sizes up to
 *     128 (CudaGraphConfig); and all memory used outside torch, which it
 *     measures from the device's free memory: CUDA context, cuBLAS and
 *     NCCL, 1.79 GiB on one H100 and 3.58 GiB with NCCL (the figures
 *     vLLM 0.6.5 logged for Llama 3 8B at tp 1 and 2, counted the same
 *     way). Its fraction applies to what is left.
 *   llama.cpp: its compute buffer: n_ubatch rows of float32 logits and of
 *     the hidden state (512 x (vocab + hidden) x 4: Llama 3 8B's logged
 *     258.50 MiB); no graphs or workspace beyond it.
 *   SGLang: none here; mem_fraction_static leaves room for all of it.
 */
static struct kv_runtime runtime_of(const struct ctx *c)
{
	const struct kv_model *m = c->in->m;
	const uint64_t mib = 1ULL << 20;
	struct kv_runtime r = {0};
	uint64_t peak;
	switch (c->in->engine) {
	case KV_POLICY_VLLM: {
		uint64_t rows = c->seqs && c->seqs < c->batched ? c->seqs
								: c->batched;
		double logits = (double)rows * (double)m->vocab * 14;
		r.activation = forward_bytes(c, c->batched);
		r.sampler = logits < 0x1p62 ? (uint64_t)logits
					    : (uint64_t)0x1p62;
		uint64_t top = sm100(c->in->gpu) ||
					       !strcmp(m->model_type, "gpt_oss")
				       ? 1024
				       : 512;
		uint64_t largest = c->seqs && 2 * c->seqs < top ? 2 * c->seqs
								: top;
		if (largest > c->batched)
			largest = c->batched;
		uint64_t full = c->seqs && c->seqs < largest ? c->seqs
							     : largest;
		r.graphs = forward_bytes(c, largest) +
			   (vllm_graph_sizes(largest) - 1 +
			    vllm_graph_sizes(full) - 1) * mib;
		r.nontorch = 160 * mib;
		break;
	}
	case KV_POLICY_TRTLLM:
		r.activation = forward_bytes(c, c->batched);
		r.graphs = forward_bytes(c, 128) + 33 * mib;
		r.nontorch = (uint64_t)c->in->tp * c->in->pp > 1 ? 3666 * mib
								 : 1833 * mib;
		break;
	case KV_POLICY_LLAMACPP:
		r.activation = c->batched * (m->vocab + m->hidden) * 4;
		break;
	default:
		return r;
	}
	peak = r.activation > r.sampler ? r.activation : r.sampler;
	r.total = peak + r.graphs + r.nontorch;
	return r;
}

static int stage_size(const struct ctx *c, struct stage *s, bool first,
		      bool last, char *err)
{
	const struct kv_fit_in *in = c->in;
	const struct kv_model *m = in->m;
	uint64_t f, l, fb, lb;
	uint32_t ssm = 0;
	int e;
	if ((e = kv_model_edge_bytes(m, in->quant, &f, &l, &fb, &lb)))
		return e;
	s->params = (first ? f : 0) + (last ? l : 0);
	s->stored = (first ? fb : 0) + (last ? lb : 0);
	for (uint32_t i = s->first; i < s->first + s->n; i++) {
		struct kv_params lp;
		struct kv_geom g;
		uint64_t tb, pv, sh, rp, rs;
		if ((e = kv_layer_params_as(m, in->quant ? in->quant : &m->quant,
					    i, &lp)) ||
		    (e = kv_add(s->params, lp.total, &s->params)) ||
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
		w = c->total_params ? muldiv(in->weights, s->params,
					     c->total_params)
				    : 0;
	else if (in->stored)
		w = s->stored;
	else if ((e = kv_weight_bytes(s->params, in->w_dtype, &w)))
		return e;
	s->weights = w / in->tp + (w % in->tp != 0);
	s->routed_bytes = s->params ? muldiv(s->weights, s->routed, s->params)
				    : 0;
	if (first) { /* the same rule for the lookup tables' bytes */
		uint64_t np, nb;
		if ((e = kv_model_lookup_bytes(m, in->quant, &np, &nb)))
			return e;
		if (in->weights)
			nb = c->total_params ? muldiv(in->weights, np,
						      c->total_params)
					     : 0;
		else if (!in->stored && (e = kv_weight_bytes(np, in->w_dtype,
							     &nb)))
			return e;
		s->lookup_bytes = nb / in->tp;
	}

	/* the engine's budget */
	double frac = in->util > 0 ? in->util
				   : kv_policy_frac(in->engine, in->mem, in->tp,
						    in->pp, c->mla);
	uint64_t need;
	if (in->runtime && !in->reserve)
		s->rt = runtime_of(c);
	if ((e = kv_add(s->weights, in->reserve + s->rt.total, &need)))
		return e;
	if (in->kv_memory) { /* what the engine's log said it has */
		s->free_kv = in->kv_memory;
		s->budget = need + in->kv_memory;
	} else if (c->ei->of_free) {
		uint64_t avail = in->mem > need ? in->mem - need : 0;
		s->missing = in->mem < need ? need - in->mem : 0;
		s->free_kv = (uint64_t)floorl((long double)avail * frac);
		s->budget = s->missing ? in->mem : need + s->free_kv;
	} else {
		s->budget = frac > 0 ? (uint64_t)floorl((long double)in->mem *
							frac)
				     : in->mem;
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
	if (in->engine == KV_POLICY_VLLM && s->seq)
		return vllm_capacity(c, s, err);
	if (in->engine == KV_POLICY_SGLANG && s->seq &&
	    !sglang_swa(c, s, err))
		sglang_mamba(c, s);
	return 0;
}

/* Stage sizes as vLLM's get_pp_indices splits the layers: evenly, the
 * remainder to the stages before the last (which holds the head). */
static uint32_t stage_layers(uint32_t layers, uint32_t pp, uint32_t s)
{
	uint32_t n = layers / pp, rem = layers % pp;
	return n + (s + 1 < pp && s + 1 + rem >= pp);
}

/* Sizes stage s, whose layers start at `first`. */
static int stage_at(const struct ctx *c, uint32_t s, uint32_t first,
		    struct stage *x, char *err)
{
	const struct kv_fit_in *in = c->in;
	*x = (struct stage){0};
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

bool kv_policy_refuses(const struct kv_fit_in *in, char *err)
{
	char list[160];
	if (in->engine == KV_POLICY_LLAMACPP && in->tp > 1) {
		snprintf(err, KV_ERRLEN,
			 "llamacpp: tensor parallel %u: llama.cpp splits a "
			 "model over GPUs by layers (-sm layer), as --pp does, "
			 "not by heads",
			 in->tp);
		return true;
	}
	enum kv_dtype v = kv_fit_v_dtype(in);
	for (int i = 0; i < 2 && kv_policy_info(in->engine); i++) {
		enum kv_dtype t = i ? v : in->kv_dtype;
		if (kv_policy_stores(in->engine, t))
			continue;
		snprintf(err, KV_ERRLEN, "%s keeps no %s cache; it keeps %s",
			 kv_policy_info(in->engine)->name, kv_dtype_name(t),
			 kv_policy_formats(in->engine, list, sizeof list));
		return true;
	}
	/* one cache tensor per layer of one dtype (vLLM, SGLang,
	 * TensorRT-LLM); llama.cpp's K and V are tensors of their own */
	if (v != in->kv_dtype && in->engine != KV_POLICY_LLAMACPP &&
	    in->engine != KV_POLICY_IDEAL) {
		snprintf(err, KV_ERRLEN, "%s keeps K and V in one format, got "
			 "K %s and V %s (llama.cpp keeps them apart)",
			 kv_policy_info(in->engine)->name,
			 kv_dtype_name(in->kv_dtype), kv_dtype_name(v));
		return true;
	}
	return false;
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
	if (kv_policy_refuses(in, err))
		return KV_EINVAL;
	if (in->ctx == 0 || in->mem == 0 || !(in->util >= 0 && in->util <= 1)
	    || kv_policy_info(in->engine) == NULL) {
		snprintf(err, KV_ERRLEN, "%s: context, memory, utilization or "
			 "engine out of range", m->name);
		return KV_EINVAL;
	}
	return 0;
}

/* The decode step of b sequences on stage s, added to f. */
static int step(const struct stage *s, uint64_t b, struct kv_fit *f)
{
	long double keep = 1; /* share of routed experts b tokens touch */
	if (s->experts && b)
		keep = 1 - powl(1 - (long double)s->experts_active /
					    s->experts,
				(long double)b);
	uint64_t w = s->weights -
		     (uint64_t)llroundl((long double)s->routed_bytes *
					(1 - keep));
	uint64_t kv = 0;
	if (b && (mac(&kv, b, s->rseq) || kv_add(kv, s->rshared, &kv)))
		return KV_ERANGE;
	f->step_flops += s->flops * (double)b;
	f->step_attn_flops += s->attn_flops * (double)b;
	f->step_lookup_bytes += s->lookup_bytes;
	f->step_head_flops += s->head_flops * (double)b;
	if (kv_add(f->step_token_bytes, s->bpt, &f->step_token_bytes))
		return KV_ERANGE;
	if (kv_add(f->step_weight_bytes, w, &f->step_weight_bytes) ||
	    kv_add(f->step_kv_bytes, kv, &f->step_kv_bytes))
		return KV_ERANGE;
	return 0;
}

int kv_fit_solve(const struct kv_fit_in *in, struct kv_fit *f, char *err)
{
	const struct kv_model *m = in->m;
	struct ctx c = {.in = in, .ei = kv_policy_info(in->engine)};
	struct kv_params p;
	struct stage best = {0};
	int e;
	*f = (struct kv_fit){0};
	if ((e = check(in, err)))
		return e;
	c.o = kv_opts_default(m);
	c.o.k_dtype = in->kv_dtype;
	c.o.v_dtype = kv_fit_v_dtype(in);
	c.o.tp = in->tp;
	c.o.state = in->engine == KV_POLICY_IDEAL      ? KV_STATE_REF
		    : in->engine == KV_POLICY_LLAMACPP ? KV_STATE_F32
		    : in->engine == KV_POLICY_SGLANG   ? KV_STATE_SSM_F32
						       : KV_STATE_ENGINE;
	bool mla = false;
	for (uint32_t i = 0; i < m->n_layers; i++) {
		mla |= m->layers[i].attn == KV_ATTN_MLA && !m->mla_expanded;
		c.ssm_layers += m->layers[i].ssm;
	}
	c.mla = mla;
	c.block = in->block ? in->block : mla ? c.ei->block_mla : c.ei->block;
	if (in->engine == KV_POLICY_VLLM) {
		kv_vllm_batch_defaults(in->mem, in->gpu, &c.batched, &c.seqs);
		if (mla && !in->block)
			c.block = vllm_mla_block(in->gpu, in->kv_dtype);
	} else if (in->engine == KV_POLICY_SGLANG) {
		c.batched = sglang_chunk(in->mem); /* chunked_prefill_size */
	} else if (in->engine == KV_POLICY_LLAMACPP) {
		c.batched = 512; /* n_ubatch */
	} else if (in->engine == KV_POLICY_TRTLLM) {
		c.batched = 8192; /* max_num_tokens (llmapi/llm_args.py) */
		c.seqs = 2048;    /* max_batch_size */
	}
	if (in->batched_tokens)
		c.batched = in->batched_tokens;
	if (in->max_seqs)
		c.seqs = in->max_seqs;
	c.ctx = round_up(in->ctx, c.ei->ctx_pad);
	if ((e = kv_model_params(m, &p, err)))
		return e;
	c.total_params = p.total;
	if (kv_model_state_bytes(m, &c.o, 1, &c.state))
		return KV_ERANGE;

	uint32_t first = 0;
	for (uint32_t s = 0; s < in->pp; s++) {
		struct stage x;
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
	f->max_seqs = c.seqs;
	f->num_blocks = best.blocks;
	f->max_concurrency = in->engine == KV_POLICY_VLLM ? best.concurrency
							  : best.users;
	f->seq_bytes = best.seq;
	f->shared_bytes = best.shared;
	f->users = best.users;
	f->users_whole = best.whole;
	if (c.seqs && f->users > (double)c.seqs) { /* the scheduler's cap */
		f->users = (double)c.seqs;
		f->users_whole = c.seqs;
	}

	if (f->users_whole) { /* <= free_kv: cannot overflow */
		f->kv_bytes = best.shared + best.seq * f->users_whole;
		f->dup_bytes = best.shared_dup + best.seq_dup * f->users_whole;
	}

	f->step_users = in->users ? in->users : f->users_whole;
	/* the step runs through every stage: sized again, it is cheap */
	first = 0;
	for (uint32_t s = 0; s < in->pp; s++) {
		struct stage x;
		if ((e = stage_at(&c, s, first, &x, err)))
			return e;
		first += x.n;
		if ((e = step(&x, f->step_users, f))) {
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

int kv_fit_solve_ctx(const struct kv_fit_in *in, uint64_t users,
		     uint64_t *ctx, char *err)
{
	struct kv_fit_in x = *in;
	uint64_t lo = in->prefix ? in->prefix : 1, hi = 1ULL << 40;
	bool ok;
	int e;
	*ctx = 0;
	x.ctx = lo;
	if ((e = fits(&x, users, &ok, err)) || !ok)
		return e;
	while (lo < hi) {
		x.ctx = lo + (hi - lo + 1) / 2;
		if ((e = fits(&x, users, &ok, err)))
			return e;
		if (ok)
			lo = x.ctx;
		else
			hi = x.ctx - 1;
	}
	*ctx = lo;
	return 0;
}

int kv_fit_solve_tp(const struct kv_fit_in *in, uint64_t users,
		    uint32_t max_tp, uint32_t *tp, char *err)
{
	struct kv_fit_in x = *in;
	char scratch[KV_ERRLEN];
	*tp = 0;
	for (uint32_t t = 1; t <= max_tp; t++) {
		struct kv_fit f;
		x.tp = t;
		int e = kv_fit_solve(&x, &f, scratch);
		if (e == KV_EINVAL && t > 1)
			continue; /* this tp splits no head evenly */
		if (e) {
			memcpy(err, scratch, KV_ERRLEN);
			return e;
		}
		if (f.users_whole >= users) {
			*tp = t;
			return 0;
		}
	}
	return 0;
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
