/*
 * server_trtllm.c - TensorRT-LLM's KV rules, its PyTorch back end
 * (trtllm-serve, the LLM API) as of 2026: free_gpu_memory_fraction of what
 * its warm-up leaves, pages of 32 tokens, max_batch_size and
 * max_num_tokens, every layer the whole sequence unless
 * max_attention_window is set, and then a pool per window size.
 */
#include <math.h>

#include "kv/offload.h"
#include "server_int.h"

#define MIB (1ULL << 20)
#define F(t) (1u << KV_DTYPE_##t)
#define FLOATS (F(F32) | F(F16) | F(BF16))

/*
 * What TensorRT-LLM keeps beside weights and cache (_util.py,
 * KvCacheCreator): the forward pass of max_num_tokens (8192); the CUDA
 * graphs of its 34 batch sizes up to 128 (CudaGraphConfig); and all
 * memory used outside torch, which it measures from the device's free
 * memory: CUDA context, cuBLAS and NCCL, 1.79 GiB on one H100 and 3.58
 * GiB with NCCL (the figures vLLM 0.6.5 logged for Llama 3 8B at tp 1 and
 * 2, counted the same way). Its fraction applies to what is left.
 */
static struct kv_runtime runtime(const struct fit_ctx *c)
{
	struct kv_runtime r = {0};
	r.activation = fit_forward_bytes(c, c->batched);
	r.graphs = fit_forward_bytes(c, 128) + 33 * MIB;
	r.nontorch = (uint64_t)c->in->tp * c->in->pp > 1 ? 3666 * MIB
							 : 1833 * MIB;
	r.total = r.activation + r.graphs + r.nontorch;
	return r;
}

/* Without max_attention_window every layer keeps the whole sequence: the
 * V1 cache manager gives every layer max_seq_len
 * (_torch/pyexecutor/resource_manager, KVCacheManager); a model's own
 * window reaches its attention kernel only. */
static uint64_t window(const struct fit_ctx *c, const struct kv_geom *g,
		       uint64_t *once)
{
	(void)once;
	return g->window < c->ctx ? 0 : g->window;
}

/* The windows of a stage, each with the bytes a token takes in all its
 * layers. */
struct pool {
	uint64_t window, tb;
};

/*
 * With max_attention_window given (KvCacheConfig), a pool per distinct
 * window (_torch/pyexecutor/resource_manager/vswa.py,
 * calculate_max_num_blocks_for_vswa): the list is each attention layer's
 * window in turn, repeating over the stage's layers, each clamped to
 * max_seq_len (here the context); the budget is split equally between the
 * distinct windows, floor(budget / n / (bytes a token takes in the
 * window's layers) / tokens_per_block) blocks each; a request needs, in a
 * window W's pool (cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp,
 * getRemainingBlocksToCompletion), ceil(min(ctx, W + T) / 32) blocks, T =
 * min(max_num_tokens, ctx - 1 - W) the temporary window a chunk of context
 * needs when W < ctx - 1 (calculateTemporaryAttentionWindow), and one block
 * more when the sequence passes beyond that (a new block is taken before
 * the one that left the window is freed). Users are the fewest any pool
 * holds. A shared prefix is not held once.
 */
static int pools(const struct fit_ctx *c, struct fit_stage *s, char *err)
{
	const struct kv_fit_in *in = c->in;
	struct pool p[64];
	size_t np = 0, k = 0;
	uint64_t b = c->block, ctx = c->ctx;
	(void)err;
	if (!in->windows || !in->nwindows || !s->seq)
		return 0;
	for (uint32_t i = s->first; i < s->first + s->n; i++) {
		struct kv_geom g;
		uint64_t tb, w = in->windows[k++ % in->nwindows];
		size_t j = 0;
		if (!fit_layer_bytes(c, i, &g, &tb)) {
			k--; /* the list is over attention layers */
			continue;
		}
		w = w < ctx ? w : ctx;
		while (j < np && p[j].window != w)
			j++;
		if (j == np) {
			if (np == 64)
				return 0; /* beyond any model: one pool */
			p[np++] = (struct pool){w, 0};
		}
		p[j].tb += tb;
	}
	double users = INFINITY;
	uint64_t whole = UINT64_MAX, seq = 0, tokens = 0;
	for (size_t j = 0; j < np; j++) {
		uint64_t w = p[j].window;
		uint64_t t = w + 1 < ctx ? ctx - 1 - w : 0;
		t = t < c->batched ? t : c->batched;
		uint64_t kept = w + t < ctx ? w + t : ctx;
		uint64_t need = fit_cdiv(kept, b) +
				(fit_cdiv(ctx, b) > fit_cdiv(w + t, b));
		uint64_t blocks = s->free_kv / np / p[j].tb / b;
		double u = (double)blocks / (double)need;
		users = u < users ? u : users;
		whole = blocks / need < whole ? blocks / need : whole;
		seq += need * b * p[j].tb;
		if (w == ctx || j == 0)
			tokens = blocks * b;
	}
	s->users = users;
	s->whole = whole;
	s->seq = seq;
	s->shared = 0;
	s->tokens = tokens;
	return 0;
}

static const struct kv_server_ops ops = {
	.runtime = runtime,
	.window = window,
	.pools = pools,
};

/* A host tier: KvCacheConfig.host_cache_size, bytes of each rank's
 * secondary pool of whole blocks (llmapi/llm_args.py); its blocks are
 * onboarded before the step that reuses them (onboard_blocks). Its tier
 * of window and Mamba layers is not modelled here. */
static const struct kv_offload_rules offload = {
	.plain_only = true,
	.how = "host_cache_size, KvCacheConfig",
};

/* free_gpu_memory_fraction 0.9, tokens_per_block 32, max_num_tokens 8192,
 * max_batch_size 2048 (llmapi/llm_args.py, KvCacheConfig and
 * BaseLlmArgs); its cache is the model's dtype or fp8; a float32
 * checkpoint runs in bfloat16; enable_chunked_prefill is off. */
const struct kv_server kv_server_trtllm = {
	.kind = KV_SERVER_TRTLLM,
	.name = "trtllm",
	.label = "TensorRT-LLM",
	.release = "1.3",
	.frac = 0.9,
	.of_free = true,
	.block = 32,
	.block_mla = 32,
	.ctx_pad = 1,
	.batched = 8192,
	.seqs = 2048,
	.formats = FLOATS | F(FP8),
	.kv_auto = KV_DTYPE_COUNT,
	.w_f32 = KV_DTYPE_BF16,
	.state = KV_STATE_TAIL,
	.kernels = KV_KERNELS_TRTLLM,
	.window_list = true,
	.whole_prompt = true,
	.ops = &ops,
	.offload = &offload,
};
