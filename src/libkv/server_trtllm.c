/*
 * server_trtllm.c - TensorRT-LLM's KV rules, its PyTorch back end
 * (trtllm-serve, the LLM API) as of 2026: free_gpu_memory_fraction of what
 * its warm-up leaves, pages of 32 tokens, max_batch_size and
 * max_num_tokens, every layer the whole sequence unless
 * max_attention_window is set, and then a pool per window size.
 */
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

static const struct kv_server_ops ops = {
	.runtime = runtime,
	.window = window,
};

/* free_gpu_memory_fraction 0.9, tokens_per_block 32, max_num_tokens 8192,
 * max_batch_size 2048 (llmapi/llm_args.py, KvCacheConfig and
 * BaseLlmArgs); its cache is the model's dtype or fp8; a float32
 * checkpoint runs in bfloat16; enable_chunked_prefill is off. */
const struct kv_server kv_server_trtllm = {
	.kind = KV_SERVER_TRTLLM,
	.name = "trtllm",
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
	.whole_prompt = true,
	.ops = &ops,
};
