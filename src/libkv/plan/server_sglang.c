/*
 * server_sglang.c - SGLang's KV rules (python/sglang/srt, main of August
 * 2026, after v0.5): mem_fraction_static by GPU, the chunked prefill, the
 * page its attention back end asks for, one token pool or its hybrid SWA
 * and Mamba pools, and the cap on running requests it derives from them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kv/lora.h"
#include "kv/offload.h"
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
static double static_frac(uint64_t mem, uint32_t tp, uint32_t pp, bool mla)
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
	if (mib > 60 * g && r < 10 * g)
		r = 10 * g;
	return mib > r ? round((mib - r) / mib * 1000) / 1000 : 0;
}

/* Its default fraction, cut for a model with a vision tower
 * (memory_hook.py, adjust_mem_fraction_for_vlm): by 0.95, and by 10% for
 * each time the tower's layers x width^2 doubles a ViT-L/14's (24 x
 * 1024^2), the second factor kept in [0.8, 1.05]. */
static double frac(const struct fit_ctx *c)
{
	const struct kv_fit_in *in = c->in;
	const struct kv_model *m = in->m;
	double f = static_frac(in->mem, in->tp, in->pp, c->mla);
	if (!m || !m->vision)
		return f;
	double ratio = (double)m->vit_layers * (double)m->vit_hidden *
		       (double)m->vit_hidden / (24.0 * 1024 * 1024);
	double adj = 1 - 0.1 * (ratio - 1);
	adj = adj < 0.8 ? 0.8 : adj > 1.05 ? 1.05 : adj;
	return f * 0.95 * adj;
}

/* What a multimodal model's budget keeps for the embeddings it caches
 * (kv_cache_configurator.py, mm_runtime_reservation_gb:
 * SGLANG_VLM_CACHE_SIZE_MB, 100), allocated after the pool is sized. */
static struct kv_runtime runtime(const struct fit_ctx *c)
{
	struct kv_runtime r = {0};
	if (c->in->m->vision)
		r.nontorch = r.total = 100 * MIB;
	return r;
}

/* The chunked prefill by memory, and the page the default attention back
 * end asks for (arg_groups/overrides.py): trtllm_mha's 64 on Blackwell
 * (SM100) for a model without latent attention, else 1 (fa3 on Hopper,
 * flashinfer elsewhere and for MLA on Blackwell). */
static void sched(struct fit_ctx *c)
{
	c->batched = chunk(c->in->mem);
	if (!c->mla && server_sm100(c->in->gpu))
		c->block = 64;
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
 * is_hybrid_swa_model lists (gpt-oss, Llama 4 with its vision tower, but
 * not its text model alone, MiMo-V2, Step-3.5 and 3.7, Gemma 4, DeepSeek
 * V4, Laguna), told by the config's architectures (by its model_type where
 * it names none); every other model with a window (Gemma 2 and 3, whose
 * model override turns the split off too, Mistral, Phi-3) keeps every
 * layer for every token in one pool.
 */
static bool hybrid_swa(const struct kv_model *m)
{
	static const char *const archs[] = {
		"Llama4ForConditionalGeneration", "DeepseekV4ForCausalLM",
		"DeepseekV4ForCausalLMNextN", "GptOssForCausalLM",
		"MiMoV2FlashForCausalLM", "MiMoV2MTP", "Step3p5ForCausalLM",
		"Step3p5MTP", "Step3p7ForConditionalGeneration",
		"Gemma4ForCausalLM", "Gemma4ForConditionalGeneration",
		"Gemma4UnifiedForConditionalGeneration", "LagunaForCausalLM",
		NULL};
	static const char *const types[] = {"gpt_oss", "mimo_v2_flash",
					    "step3p5", "gemma4", "gemma4_text",
					    NULL};
	return server_arch_is(m, archs, types);
}

/* Pages of p tokens that hold t tokens, in tokens. */
static uint64_t paged(uint64_t t, uint64_t p)
{
	return fit_round_up(t, p);
}

/*
 * SGLang's hybrid SWA pools (model_executor/pool_configurator.py,
 * HybridSWAPoolConfigurator), for a stage with both full and windowed
 * layers of a model hybrid_swa() names: with F and S the bytes a token
 * takes in all full and in all sliding layers and r =
 * swa_full_tokens_ratio (0.8), a full pool of floor(free / (F + r S))
 * tokens, floored to a page, and a sliding pool of int(full x r), floored
 * to a page. Llama 4's chunked layers go to the sliding pool with their
 * chunk as the window (resolve_sliding_window_size falls back to
 * attention_chunk_size). A request holds its context in the first and,
 * in the second, at most what the scheduler keeps live of a window
 * (compute_swa_request_cap): the window, the 128 decode steps between
 * evictions (SGLANG_SWA_EVICTION_INTERVAL), a page of padding and a page
 * being decoded. Returns false where it does not apply.
 */
static bool swa_pools(const struct fit_ctx *c, struct fit_stage *s)
{
	uint64_t f = 0, sw = 0, win = 0, p = c->block;
	for (uint32_t i = s->first; i < s->first + s->n; i++) {
		struct kv_geom g;
		uint64_t tb;
		if (!fit_layer_bytes(c, i, &g, &tb))
			continue;
		if ((g.attn == KV_ATTN_SLIDING || g.attn == KV_ATTN_CHUNKED) &&
		    g.window) {
			sw += tb;
			win = g.window > win ? g.window : win;
		} else {
			f += tb;
		}
	}
	if (!f || !sw || s->shared || c->ssm_layers || !hybrid_swa(c->in->m))
		return false;
	const double r = 0.8;
	uint64_t full = (uint64_t)floor((double)s->free_kv /
					((double)f + r * (double)sw));
	full = full / p * p;
	uint64_t swa = (uint64_t)((double)full * r) / p * p;
	uint64_t live = win + 128 + 2 * p;
	uint64_t kept = paged(live < c->ctx ? live : c->ctx, p);
	uint64_t ctx = paged(c->ctx, p);
	double a = (double)full / (double)ctx, b = (double)swa / (double)kept;
	s->users = a < b ? a : b;
	s->whole = (uint64_t)s->users;
	s->tokens = full;
	s->seq = ctx * f + kept * sw;
	return true;
}

/*
 * Whether the Mamba state pool keeps room for an extra buffer per running
 * request (arg_groups/overrides.py, _mamba_radix_cache_resolution): with
 * the radix cache and overlap scheduling on (the defaults) for the
 * architectures of _MAMBA_EXTRA_BUFFER_ARCHS (Kimi Linear and K3, Qwen3.5,
 * Qwen3-Next, InternS2, MiniCPM-V 4.6, Bailing 2.5 and 3, Falcon-H1,
 * Granite 4.0 H, NemotronH), told by the config's architectures (its
 * model_type where it names none).
 */
static bool extra_buffer(const struct kv_model *m)
{
	static const char *const archs[] = {
		"KimiLinearForCausalLM", "KimiK3ForConditionalGeneration",
		"Qwen3_5ForConditionalGeneration",
		"Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForCausalLM",
		"Qwen3_5MoeForCausalLM", "Qwen3NextForCausalLM",
		"InternS2PreviewForConditionalGeneration",
		"MiniCPMV4_6ForConditionalGeneration",
		"BailingMoeV2_5ForCausalLM", "BailingMoeV3ForCausalLM",
		"FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM",
		"NemotronHForCausalLM", "NemotronHPuzzleForCausalLM", NULL};
	static const char *const types[] = {
		"kimi_linear", "qwen3_5_text", "qwen3_5_moe_text", "qwen3_next",
		"falcon_h1", "granitemoehybrid", "nemotron_h", NULL};
	return server_arch_is(m, archs, types);
}

/* States per running request (kv_cache_configurator.py,
 * _calculate_mamba_ratio): MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO 3,
 * and 2 more with the extra buffer under overlap scheduling. */
static uint64_t mamba_ratio(const struct kv_model *m)
{
	return extra_buffer(m) ? 5 : 3;
}

/*
 * SGLang's split of a Mamba hybrid's memory (kv_cache_configurator.py,
 * _handle_max_mamba_cache): of the bytes left, r / (1 + r) go to a pool
 * of Mamba states (mamba_full_memory_ratio r = 0.9), floor(that / one
 * request's state) - 1 of them (a slot is padding), and the rest to a
 * token pool of the attention layers alone, floored to a page; a request
 * holds ctx tokens and one state, and a ratio-th of the states may run
 * (the others hold cached prefixes and buffers: mamba_ratio).
 */
static bool mamba_pools(const struct fit_ctx *c, struct fit_stage *s,
			uint64_t *states)
{
	uint64_t st = fit_stage_state(c, s), p = c->block;
	if (!st || !s->bpt || s->shared)
		return false;
	uint64_t k = (uint64_t)((double)s->free_kv * 0.9 / 1.9) / st;
	k = k ? k - 1 : 0;
	uint64_t rest = s->free_kv - (k + 1) * st;
	s->tokens = rest / s->bpt / p * p;
	double by_tokens = (double)s->tokens / (double)paged(c->ctx, p);
	double by_states = (double)(k / mamba_ratio(c->in->m));
	s->users = by_tokens < by_states ? by_tokens : by_states;
	s->whole = (uint64_t)s->users;
	s->seq = paged(c->ctx, p) * s->bpt + st;
	*states = k;
	return true;
}

/*
 * SGLang's pools and its cap on running requests (kv_cache_configurator.py,
 * resolve_max_num_reqs): T tokens of the (full) pool allow
 * min(clamp(int(T / context_len x 512), 2048, 4096), T // 2) requests, or
 * with --max-running-requests M, min(M, T // 2); a Mamba hybrid's no more
 * than its states over mamba_ratio. One pool of every layer holds T =
 * floor(free / bytes a token) tokens, floored to a page.
 */
static int pools(const struct fit_ctx *c, struct fit_stage *s, char *err)
{
	uint64_t states = 0, p = c->block;
	bool swa;
	if (!s->seq)
		return 0;
	/* a drafter's cache (speculative decoding) is in s->bpt as SGLang
	 * counts it (spec.h); its SWA configurator's own rule is not kept */
	if ((swa = swa_pools(c, s)) && s->draft_bpt) {
		snprintf(err, KV_ERRLEN, "%s: sglang: speculative decoding "
			 "beside its hybrid sliding-window pools: not modelled",
			 c->in->m->name);
		return KV_EINVAL;
	}
	if (!swa && !mamba_pools(c, s, &states) && !s->shared && s->bpt) {
		s->tokens = s->free_kv / s->bpt / p * p;
		s->users = (double)s->tokens / (double)paged(c->ctx, p);
		s->whole = (uint64_t)s->users;
	}
	uint64_t t = s->tokens;
	uint64_t est = (uint64_t)((double)t / (double)c->in->ctx * 512);
	est = est < 2048 ? 2048 : est > 4096 ? 4096 : est;
	uint64_t cap = c->seqs ? c->seqs : est;
	if (cap > t / 2)
		cap = t / 2;
	if (states && cap > states / mamba_ratio(c->in->m))
		cap = states / mamba_ratio(c->in->m);
	s->seqs = cap ? cap : 1;
	return 0;
}

static const struct kv_server_ops ops = {
	.sched = sched,
	.frac = frac,
	.runtime = runtime,
	.window = window,
	.pools = pools,
};

/*
 * LoRA: --max-loras-per-batch 8 (server_args.py); the rank has no
 * default (the largest of the adapters it loads). Its LoRAMemoryPool
 * (python/sglang/srt/lora/mem_pool.py, commit 00639c4d) keeps, for every
 * target module of every layer, max_loras_per_batch slots in the model's
 * dtype: A of (stacked x rank) x input, B of output x rank, q, k and v
 * stacked in qkv_proj, gate and up in gate_up_proj; a row-parallel
 * module's (o_proj, down_proj) A split over tp, a column-parallel one's
 * B; in a MoE model gate_up_proj and down_proj take every expert's slots
 * (4D, num_experts) on every layer, and a 3D pair beside them where it
 * has shared experts; the embedding's A (rank x vocabulary) and B whole,
 * the head's B split over tp (get_lm_head_lora_b_shard_size). Without
 * adapters to read the modules from, the default here is what
 * --lora-target-modules all finds (auto_detect_lora_target_modules,
 * python/sglang/srt/lora/utils.py, commit 01235a16): qkv_proj, o_proj,
 * gate_up_proj, down_proj, embed_tokens, lm_head (no router).
 */
static const struct kv_lora_rules lora = {
	.max_loras = 8,
	.modules = KV_LORA_QKV | KV_LORA_O | KV_LORA_GATE_UP | KV_LORA_DOWN |
		   KV_LORA_EMBED | KV_LORA_HEAD,
	.names = KV_LORA_QKV | KV_LORA_O | KV_LORA_GATE_UP | KV_LORA_DOWN |
		 KV_LORA_EMBED | KV_LORA_HEAD,
	.experts_by_mlp = true,
	.head_split = true,
};

/*
 * Its hierarchical cache (--enable-hierarchical-cache; HostKVCache,
 * python/sglang/srt/mem_cache/pool_host/base.py, commit 049f8e64): each
 * rank's host pool holds --hicache-size GB (x 10^9) // its bytes a token,
 * or --hicache-ratio (2.0) x its GPU pool's tokens, then size // page + 1
 * pages. A hit loads back layer by layer beside the prefill
 * (load_to_device_per_layer). Its tier of window and Mamba layers is not
 * modelled here.
 */
static const struct kv_offload_rules offload = {
	.plain_only = true,
	.extra_page = true,
	.ratio = true,
	.overlap = true,
	.how = "--hicache-size or --hicache-ratio",
};

/*
 * Page size 1; kv_cache_dtype auto, fp8_e4m3, fp8_e5m2; a float32
 * checkpoint runs in bfloat16. Its budget is the fraction of the memory
 * free before the weights load (pre_model_load_memory), after its CUDA
 * context and distributed set-up: 1,195 MiB of an H100's 81,559, where a
 * launch log of 2026-08-27 reads "Load weight begin. avail mem=78.48 GB"
 * (Qwen3-30B-A3B-FP8 on one H100 80GB HBM3). A Mamba layer keeps its
 * convolution in the model's dtype and its SSM state in float32
 * (mamba_ssm_dtype). A prompt's chunks run alone (enable_mixed_chunk off).
 * A request's images (vision.h): the tower loaded with the model, its
 * tokens in the prompt, its time in the prompt's prefill; SGLang holds
 * no profile run's encoder outputs, but caches the embeddings it makes
 * (managers/mm_utils.py, embedding_cache, of SGLANG_VLM_CACHE_SIZE_MB:
 * runtime above) within a fraction cut for the tower (frac above).
 */
const struct kv_server kv_server_sglang = {
	.kind = KV_SERVER_SGLANG,
	.name = "sglang",
	.label = "SGLang",
	.release = "0.5",
	.startup = 1195 * MIB,
	.block = 1,
	.block_mla = 1,
	.ctx_pad = 1,
	.formats = FLOATS | F(FP8) | F(FP8_E5M2),
	.kv_auto = KV_DTYPE_COUNT,
	.w_f32 = KV_DTYPE_BF16,
	.state = KV_STATE_SSM_F32,
	.prefill_alone = true,
	.ops = &ops,
	.lora = &lora,
	.offload = &offload,
	.vision = true,
};
