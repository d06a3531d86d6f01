/*
 * server_sglang.c - SGLang's KV rules (python/sglang/srt, main of August
 * 2026, after v0.5): mem_fraction_static by GPU, the chunked prefill, one
 * token pool or its hybrid SWA and Mamba pools.
 */
#include <math.h>
#include <string.h>

#include "server_int.h"

#define MIB (1ULL << 20)
#define F(t) (1u << KV_DTYPE_##t)
#define FLOATS (F(F32) | F(F16) | F(BF16))

/* chunked_prefill_size by the GPU's memory (arg_groups/memory_hook.py,
 * handle_gpu_memory_settings, commit 031ed82d): 2,048 tokens below 20
 * GiB, 4,096 below 60, 8,192 below 160, 16,384 from there. */
static uint64_t chunk(uint64_t mem)
{
	double mib = (double)mem / MIB, g = 1024;
	return mib < 20 * g    ? 2048
	       : mib < 60 * g  ? 4096
	       : mib < 160 * g ? 8192
			       : 16384;
}

/* The sizes SGLang captures prefill CUDA graphs of, up to max tokens
 * (cuda_graph_hook.py, generate_prefill_cuda_graph_batch_sizes): every 4
 * to 32, 16 to 256, 32 to 512, 64 to 1,024, 256 to 4,096, then every 512
 * from 4,608. */
static uint64_t prefill_graphs(uint64_t max)
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
 * mem_fraction_static (memory_hook.py, handle_gpu_memory_settings and
 * reserve_for_graph_mb, commit 031ed82d), from the GPU's memory in MiB:
 * a reserve of 512 MiB, 1.5 MiB per token of the chunked prefill (its
 * default by memory, at least 2,048), tp x pp / 8 GiB, 2 MiB per decode
 * CUDA-graph batch size (max_bs by memory and tp), and the prefill CUDA
 * graphs (on by default): 8 MiB for each size up to the chunk (8,192 at
 * most under pp), 1.5 GiB with latent attention (MLA); at least 10 GiB on
 * a GPU above 60 GiB. The fraction is what is left, to three decimals.
 */
static double frac(const struct kv_server *sv, uint64_t mem, uint32_t tp,
		   uint32_t pp, bool mla)
{
	double mib = (double)mem / MIB, g = 1024;
	uint64_t ch = chunk(mem);
	double bs = mib < 20 * g    ? 8
		    : mib < 35 * g  ? (tp < 4 ? 48 : 160)
		    : mib < 60 * g  ? (tp < 4 ? 32 : 160)
		    : mib < 160 * g ? (tp < 4 ? 256 : 512)
				    : 512;
	uint64_t pre = pp > 1 && ch > 8192 ? 8192 : ch;
	double r = 512 + (double)(ch > 2048 ? ch : 2048) * 1.5 +
		   (double)tp * pp / 8 * 1024 + bs * 2 +
		   (mla ? 1.5 * 1024 : 8.0 * (double)prefill_graphs(pre));
	(void)sv;
	if (mib > 60 * g && r < 10 * g)
		r = 10 * g;
	return mib > r ? round((mib - r) / mib * 1000) / 1000 : 0;
}

/* The chunked prefill by memory. */
static void sched(struct fit_ctx *c)
{
	c->batched = chunk(c->in->mem);
}

/* One pool in which every layer keeps every token: a window the engine
 * does not split into a pool of its own is the whole context. */
static uint64_t window(const struct fit_ctx *c, const struct kv_geom *g,
		       uint64_t *once)
{
	(void)once;
	return g->window < c->ctx ? 0 : g->window;
}

/*
 * Whether SGLang splits a model's full and sliding layers into two pools:
 * only for the architectures configs/model_config.py's
 * is_hybrid_swa_model lists (gpt-oss, Llama 4 with its vision tower,
 * MiMo-V2, Step-3.5, Gemma 4), told here by their model_type; every other
 * model with a window (Gemma 2 and 3, whose model override turns the split
 * off too, Mistral, Phi-3, Llama 4's text model alone) keeps every layer
 * for every token in one pool.
 */
static bool hybrid_swa(const struct kv_model *m)
{
	static const char *const swa[] = {"gpt_oss", "llama4",
					  "mimo_v2_flash", "step3p5",
					  "gemma4", "gemma4_text", NULL};
	return server_type_is(m, swa);
}

/*
 * SGLang's hybrid SWA memory (v0.5, model_runner_kv_cache_mixin.py,
 * set_num_tokens_hybrid_swa), for a stage with both full and sliding
 * layers of a model hybrid_swa() names: T0 = free // (F + S) tokens of
 * every layer (F, S: the bytes a token takes in all full, all sliding
 * layers), then a full pool of T0 (F + S) / (F + r S) tokens and a sliding
 * pool of r times that (swa_full_tokens_ratio r = 0.8); a request holds
 * ctx tokens of the first and min(ctx, window) of the second. Returns
 * false where it does not apply (the one pool of every layer then).
 */
static bool swa_pools(const struct fit_ctx *c, struct fit_stage *s)
{
	uint64_t f = 0, sw = 0, win = 0;
	for (uint32_t i = s->first; i < s->first + s->n; i++) {
		struct kv_geom g;
		uint64_t tb;
		if (!fit_layer_bytes(c, i, &g, &tb))
			continue;
		if (g.attn == KV_ATTN_SLIDING && g.window) {
			sw += tb;
			win = g.window > win ? g.window : win;
		} else {
			f += tb;
		}
	}
	if (!f || !sw || s->shared || c->ssm_layers || !hybrid_swa(c->in->m))
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

/*
 * SGLang's split of a Mamba hybrid's memory (v0.5, model_runner.py,
 * handle_max_mamba_cache): of the bytes left, 0.9 / 1.9 go to a pool of
 * Mamba states (mamba_full_memory_ratio 0.9), floor(that / one request's
 * state) of them, and the rest to a token pool of the attention layers
 * alone; with the radix cache on, a third of the states may run (the
 * others hold cached prefixes: MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO
 * 3). A request holds ctx tokens and one state.
 */
static void mamba_pools(const struct fit_ctx *c, struct fit_stage *s)
{
	uint64_t st = fit_stage_state(c, s);
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

/* SGLang's pools: one of every layer, or its hybrid SWA or Mamba pools. */
static int pools(const struct fit_ctx *c, struct fit_stage *s, char *err)
{
	(void)err;
	if (s->seq && !swa_pools(c, s))
		mamba_pools(c, s);
	return 0;
}

static const struct kv_server_ops ops = {
	.sched = sched,
	.frac = frac,
	.window = window,
	.pools = pools,
};

/*
 * Page size 1; kv_cache_dtype auto, fp8_e4m3, fp8_e5m2; a float32
 * checkpoint runs in bfloat16. A Mamba layer keeps its
 * convolution in the model's dtype and its SSM state in float32
 * (mamba_ssm_dtype). A prompt's chunks run alone (enable_mixed_chunk off).
 */
const struct kv_server kv_server_sglang = {
	.kind = KV_SERVER_SGLANG,
	.name = "sglang",
	.release = "0.5",
	.block = 1,
	.block_mla = 1,
	.ctx_pad = 1,
	.formats = FLOATS | F(FP8) | F(FP8_E5M2),
	.kv_auto = KV_DTYPE_COUNT,
	.w_f32 = KV_DTYPE_BF16,
	.state = KV_STATE_SSM_F32,
	.prefill_alone = true,
	.ops = &ops,
};
