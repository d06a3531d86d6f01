/*
 * server_vllm.c - vLLM's KV rules, as its v1 engine sizes its cache: the
 * scheduler's defaults by GPU, the page of an MLA back end, a sliding
 * window's pages, the hybrid cache manager's groups and pool, and what it
 * keeps for its own work. Two rows: the newest rules (v0.28.0 and the
 * releases after it, to upstream main of August 2026) and v0.27's, which
 * a user names as vllm@0.27.
 */
#include <string.h>

#include "kv/lora.h"
#include "kv/offload.h"
#include "server_int.h"

#define GIB (1ULL << 30)
#define F(t) (1u << KV_DTYPE_##t)
#define FLOATS (F(F32) | F(F16) | F(BF16))

/* What changed between the releases whose rules are kept. */
struct vllm_rules {
	/* pages a Mamba state takes per request in a hybrid
	 * (MambaSpec.max_memory_usage_bytes): 2 in prefix caching's align
	 * mode, on by default for hybrids since v0.28.0
	 * (EngineArgs._set_default_chunked_prefill_and_prefix_caching_args,
	 * PR #50991); 1 in its "none" mode before */
	uint32_t mamba_pages;
	/* get_batch_defaults' top tier from 160 GiB, 16,384 batched tokens
	 * for `vllm serve` (v0.28.0); before, such a GPU took the 70 GiB
	 * tier's */
	bool tier_160;
};

static const struct vllm_rules v0_28 = {.mamba_pages = 2, .tier_160 = true};
static const struct vllm_rules v0_27 = {.mamba_pages = 1, .tier_160 = false};

static const struct vllm_rules *rules(const struct fit_ctx *c)
{
	return c->sv->own;
}

/*
 * The scheduler's defaults for `vllm serve` (EngineArgs.get_batch_defaults,
 * vllm/engine/arg_utils.py): from 160 GiB 16,384 batched tokens and 1,024
 * sequences (v0.28), from 70 GiB on a GPU that is not an A100 8,192 and
 * 1,024, else 2,048 and 256. An MLA model's page by the back end vLLM
 * picks (vllm/platforms/cuda.py, _get_backend_priorities): on Hopper
 * FlashAttention-MLA (16) for a 16-bit cache, FlashMLA (64) for fp8; on
 * Blackwell FlashInfer-MLA (32); elsewhere Triton MLA (16).
 */
static void sched(struct fit_ctx *c)
{
	static const char *const a100[] = {"a100", NULL};
	static const char *const hopper[] = {"h100", "h200", "h800", "h20",
					     "gh200", NULL};
	const struct kv_fit_in *in = c->in;
	uint64_t mem = in->mem;
	bool top = rules(c)->tier_160 && mem >= 160 * GIB;
	bool big = mem >= 70 * GIB && !server_gpu_is(in->gpu, a100);
	c->batched = top ? 16384 : big ? 8192 : 2048;
	c->seqs = top || big ? 1024 : 256;
	if (!c->mla)
		return;
	if (server_gpu_is(in->gpu, hopper))
		c->block = in->kv_dtype == KV_DTYPE_FP8 ||
					   in->kv_dtype == KV_DTYPE_FP8_E5M2
				   ? 64
				   : 16;
	else
		c->block = server_sm100(in->gpu) ? 32 : 16;
}

/* SlidingWindowSpec.max_memory_usage_bytes: the window and the tokens of
 * the steps in flight (two, with async scheduling, on by default), in
 * pages, and one page more as the window straddles one. */
static uint64_t window(const struct fit_ctx *c, const struct kv_geom *g,
		       uint64_t *once)
{
	uint64_t t = g->window - 1 + 2 * c->batched;
	(void)once;
	return fit_round_up(t < c->ctx ? t : c->ctx, c->block) + c->block;
}

/* vLLM's CUDA-graph capture sizes up to `max` (config/vllm.py,
 * _set_cudagraph_sizes): 1, 2, 4, then every 8 below 256, then every 16. */
static uint64_t graph_sizes(uint64_t max)
{
	uint64_t n = (max >= 1) + (max >= 2) + (max >= 4);
	n += (max < 255 ? max : 255) / 8;
	if (max >= 256)
		n += (max - 256) / 16 + 1;
	return n;
}

/*
 * What vLLM keeps beside weights and cache (gpu_worker.py,
 * determine_available_memory): the peak of its profile run, a forward
 * pass of max_num_batched_tokens tokens or the sampler's pass over
 * min(tokens, max_num_seqs) rows of logits (the model's 16 bits, a
 * float32 copy, the probabilities and the exponential noise: 14 bytes a
 * logit), whichever is larger; its CUDA graph estimate (gpu_model_runner.py,
 * profile_cudagraph_memory, on by default since v0.21): the first
 * capture's pool, a forward pass of the largest capture size (2 x
 * max_num_seqs, at most 512, 1024 on SM100 or for gpt-oss, and at most the
 * step's tokens), then 1 MiB (its floor) for each further size, in
 * PIECEWISE mode and in FULL mode (sizes up to max_num_seqs); and the
 * non-torch memory that grows after its snapshot (cuBLAS workspaces): the
 * 0.16 GiB it logs on one H100 (its CUDA context and NCCL predate the
 * snapshot and are not counted).
 */
static struct kv_runtime runtime(const struct fit_ctx *c)
{
	static const char *const oss[] = {"gpt_oss", NULL};
	const struct kv_model *m = c->in->m;
	const uint64_t mib = 1ULL << 20;
	struct kv_runtime r = {0};
	uint64_t rows = c->seqs && c->seqs < c->batched ? c->seqs : c->batched;
	double logits = (double)rows * (double)m->vocab * 14;
	r.activation = fit_forward_bytes(c, c->batched);
	r.sampler = logits < 0x1p62 ? (uint64_t)logits : (uint64_t)0x1p62;
	uint64_t top = server_sm100(c->in->gpu) || server_type_is(m, oss)
			       ? 1024
			       : 512;
	uint64_t largest = c->seqs && 2 * c->seqs < top ? 2 * c->seqs : top;
	if (largest > c->batched)
		largest = c->batched;
	uint64_t full = c->seqs && c->seqs < largest ? c->seqs : largest;
	r.graphs = fit_forward_bytes(c, largest) +
		   (graph_sizes(largest) - 1 + graph_sizes(full) - 1) * mib;
	r.nontorch = 160 * mib;
	r.total = (r.activation > r.sampler ? r.activation : r.sampler) +
		  r.graphs + r.nontorch;
	return r;
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

/* Pages a request of ctx tokens takes of spec x's layers (one of ns
 * specs): a Mamba state's (mamba_pages beside attention), a window's and
 * the tokens in flight with a page more as it straddles one
 * (SlidingWindowSpec), a chunk's and the tokens in flight
 * (ChunkedLocalAttentionSpec: a chunk starts at a page), else the
 * context's. */
static uint64_t pages(const struct fit_ctx *c, const struct spec *x,
		      uint32_t ns, uint64_t ctx)
{
	uint64_t t;
	switch (x->kind) {
	case KV_ATTN_NONE:
		return ns > 1 ? rules(c)->mamba_pages : 1;
	case KV_ATTN_SLIDING:
		t = x->window - 1 + 2 * c->batched;
		return fit_cdiv(t < ctx ? t : ctx, x->block) + 1;
	case KV_ATTN_CHUNKED:
		t = x->window + 2 * c->batched;
		return fit_cdiv(t < ctx ? t : ctx, x->block);
	default:
		return fit_cdiv(ctx, x->block);
	}
}

/* Whether layer g keeps a window of its own (its spec is not full). */
static bool windowed(const struct kv_geom *g)
{
	return (g->attn == KV_ATTN_SLIDING || g->attn == KV_ATTN_CHUNKED) &&
	       g->window;
}

/* Puts a layer of spec x among the specs sp (ns of them, at most 64): in
 * the one page of every layer where uniform, else with the layers of its
 * own spec; false where a new spec would be the 65th. */
static bool group(struct spec *sp, uint32_t *ns, bool uniform, struct spec x)
{
	uint32_t k = 0;
	if (uniform && *ns) {
		sp[0].tb += x.tb;
		return true;
	}
	while (k < *ns && !(sp[k].kind == x.kind && sp[k].window == x.window &&
			    sp[k].tb == x.tb))
		k++;
	if (k == *ns && *ns == 64)
		return false;
	if (k == *ns)
		sp[(*ns)++] = x;
	sp[k].n++;
	return true;
}

/*
 * vLLM's KV cache manager (v1; vllm/v1/core/kv_cache_utils.py): every
 * layer of the stage has a spec (full attention, a sliding window, a
 * chunk, a Mamba state); the page sizes are made one (a Mamba page raises
 * the attention block until a page covers it,
 * Platform._align_hybrid_block_size, then is padded to it; a smaller
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
 * vllm/envs.py, vllm/config/vllm.py), a Mamba state's mamba_pages (1 for
 * a model of Mamba layers alone); max concurrency is num_blocks over
 * their sum, and "GPU KV cache size" that times ctx
 * (get_max_concurrency_for_kv_cache_config, get_kv_cache_capacity). A
 * shared prefix's whole pages of full layers are held once.
 */
static int pools(const struct fit_ctx *c, struct fit_stage *s, char *err)
{
	const struct kv_model *m = c->in->m;
	struct spec sp[64];
	uint32_t ns = 0;
	uint64_t state = c->ssm_layers ? c->state / c->ssm_layers : 0;
	(void)err;
	if (!s->seq)
		return 0;
	/* only full attention: one group whose page is every layer's page
	 * together (UniformTypeKVCacheSpecs; for layers of one size the
	 * same count, floor(floor(F / page) / n) = floor(F / (n page))) */
	bool uniform = true;
	for (uint32_t i = s->first; i < s->first + s->n && uniform; i++) {
		struct kv_geom g;
		uint64_t tb;
		uniform = fit_layer_bytes(c, i, &g, &tb)
				  ? !windowed(&g)
				  : !(m->layers[i].ssm && state);
	}
	for (uint32_t i = s->first; i < s->first + s->n; i++) {
		struct kv_geom g;
		struct spec x = {0};
		if (!fit_layer_bytes(c, i, &g, &x.tb)) {
			if (!m->layers[i].ssm || !state)
				continue;
			x.kind = KV_ATTN_NONE;
			x.tb = state;
		} else {
			x.kind = windowed(&g) ? g.attn : KV_ATTN_FULL;
			x.window = x.kind != KV_ATTN_FULL ? g.window : 0;
		}
		if (!group(sp, &ns, uniform, x))
			return 0; /* not grouped: the generic count */
	}
	/* a drafter's layers (speculative decoding) are layers of full
	 * attention in the same pool (llm_base_proposer.py, 00c4f22d,
	 * load_model: the draft's attention layers with a KV cache spec) */
	for (uint32_t j = 0; s->draft_bpt && j < s->draft_layers; j++) {
		/* each its share of the drafter's bytes (its layers alike) */
		struct spec x = {.kind = KV_ATTN_FULL,
				 .tb = s->draft_bpt / s->draft_layers};
		if (j + 1 == s->draft_layers)
			x.tb += s->draft_bpt % s->draft_layers;
		if (!group(sp, &ns, uniform, x))
			return 0;
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
		uint64_t ab = align * fit_cdiv(mpage, align * tb1);
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
	uint64_t per = 0, per_max = 0, held = 0, pfx = c->in->prefix;
	for (uint32_t k = 0; k < ns; k++) {
		const struct spec *x = &sp[k];
		uint64_t groups = fit_cdiv(x->n, gs), sh = 0;
		uint64_t need = pages(c, x, ns, c->ctx);
		if (x->kind != KV_ATTN_NONE && x->kind != KV_ATTN_SLIDING &&
		    x->kind != KV_ATTN_CHUNKED) {
			sh = pfx / x->block;
			if (sh >= need)
				sh = need - 1;
		}
		per_max += groups * pages(c, x, ns, c->max_ctx);
		per += groups * need;
		held += groups * sh;
		if (x->kind == KV_ATTN_FULL && x->block > s->block)
			s->block = x->block;
	}
	uint64_t bytes_per_block = page * gs;
	s->blocks = s->free_kv / page / gs;
	s->concurrency = (double)s->blocks / (double)per;
	/* the tokens the pool holds, at the engine's limit (a request the
	 * workload's length counts fewer, its last page part full) */
	s->tokens = (uint64_t)((double)s->blocks / (double)per_max *
			       (double)c->max_ctx);
	s->seq = (per - held) * bytes_per_block;
	s->shared = held * bytes_per_block;
	s->seq_dup = s->shared_dup = 0;
	if (s->dup && s->bpt) { /* replicated heads (MLA, tp > heads) */
		s->seq_dup = fit_muldiv(s->seq, s->dup, s->bpt);
		s->shared_dup = fit_muldiv(s->shared, s->dup, s->bpt);
	}
	s->whole = s->blocks > held ? (s->blocks - held) / (per - held) : 0;
	s->users = s->blocks > held ? (double)(s->blocks - held) /
					      (double)(per - held)
				    : 0;
	return 0;
}

static const struct kv_server_ops ops = {
	.sched = sched,
	.runtime = runtime,
	.window = window,
	.pools = pools,
};

/*
 * LoRA (vllm/config/lora.py, LoRAConfig, commit a78dc92f): max_lora_rank
 * one of 1, 8, 16, 32, 64, 128, 256, 320 and 512 (16 by default),
 * max_loras 1, max_cpu_loras max_loras by default and never fewer. Its
 * LoRAModelManager (vllm/lora/model_manager.py, commit 01533aa8) wraps,
 * where no target modules are given, every module that
 * get_supported_lora_modules finds (vllm/lora/utils.py): every linear
 * layer (qkv_proj, o_proj, gate_up_proj, down_proj, a MoE layer's
 * router gate, ReplicatedLinear, and Qwen2-MoE's shared_expert_gate
 * beside it), the fused experts (FusedMoEWithLoRA:
 * w13's A and B per expert, w2's), and the embedding_modules the model's
 * class declares, embed_tokens and lm_head for LlamaForCausalLM (which
 * Mistral's configs name too) and MixtralForCausalLM. Each keeps
 * max_loras slots at max_lora_rank in the model's dtype (lora_dtype
 * auto): a column-parallel layer's A whole (rank x input) and its B split
 * (its rows / tp x rank), a row-parallel layer's A split and B whole
 * (vllm/lora/layers/base_linear.py, commit 01235a49); the embedding's A
 * (vocabulary x rank) and B whole (vocab_parallel_embedding.py, commit
 * 0332189e), the head's A (rank x hidden) and B (vocabulary x rank)
 * whole, refused above a vocabulary of 258,048 (logits_processor.py,
 * commit 01815c62). The same in both releases kept.
 */
static const uint32_t lora_ranks[] = {1, 8, 16, 32, 64, 128, 256, 320, 512};
static const char *const lora_archs[] = {
	"LlamaForCausalLM", "MistralForCausalLM", "MixtralForCausalLM", NULL};
static const char *const lora_types[] = {"llama", "mistral", "mixtral",
					 NULL};
static const struct kv_lora_rules lora = {
	.max_loras = 1,
	.rank = 16,
	.ranks = lora_ranks,
	.nranks = sizeof lora_ranks / sizeof *lora_ranks,
	.modules = KV_LORA_QKV | KV_LORA_O | KV_LORA_GATE_UP | KV_LORA_DOWN |
		   KV_LORA_EXPERTS | KV_LORA_ROUTER,
	.arch_modules = KV_LORA_EMBED | KV_LORA_HEAD,
	.archs = lora_archs,
	.types = lora_types,
	.names = 0xff,
	.cpu_at_least = true,
	.max_vocab = 258048,
};

/*
 * A host tier (--kv-offloading-size GiB, over every rank; the native
 * backend's OffloadingConnector, vllm/config/vllm.py
 * _post_init_kv_transfer_config): CPUOffloadingSpec
 * (vllm/v1/kv_offload/cpu/spec.py, commit 0072b0b7) keeps cpu_bytes //
 * (page bytes x layers x world size) blocks of the GPU's block size, and
 * one KV cache group only (it asserts one page size and one block size:
 * no sliding-window, chunked or Mamba layers beside full attention). A
 * hit waits for its blocks to load before its prefill runs (the
 * connector's asynchronous load, the request held until it ends).
 */
static const struct kv_offload_rules offload = {
	.one_group = true,
	.how = "--kv-offloading-size, its OffloadingConnector",
};

/* A row of vLLM's rules at release `rel`, with their own. */
#define VLLM_ROW(rel, is_older, rules)                                      \
	{                                                                   \
		.kind = KV_SERVER_VLLM, .name = "vllm", .label = "vLLM",    \
		.release = rel,                                             \
		.older = is_older, .frac = 0.92, .block = 16,               \
		.block_mla = 16, .ctx_pad = 1,                              \
		.formats = FLOATS | F(FP8) | F(FP8_E5M2) | F(INT8),         \
		.kv_auto = KV_DTYPE_COUNT, .w_f32 = KV_DTYPE_BF16,          \
		.state = KV_STATE_TAIL, .start_check = true, .ops = &ops,   \
		.own = rules, .lora = &lora, .offload = &offload,           \
		.vision = true, .audio = true,                              \
		.encoder_profile = true                                     \
	}

/* gpu_memory_utilization 0.92 (vllm/config/cache.py, CacheConfig, as in
 * v0.25 to v0.30); block_size 16; kv_cache_dtype auto, fp8, fp8_e5m2
 * and a per-token-head int8; dtype auto runs a float32 checkpoint in
 * bfloat16. */
const struct kv_server kv_server_vllm = VLLM_ROW("0.28", false, &v0_28);
const struct kv_server kv_server_vllm_0_27 = VLLM_ROW("0.27", true, &v0_27);
