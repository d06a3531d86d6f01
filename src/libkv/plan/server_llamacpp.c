/*
 * server_llamacpp.c - llama.cpp's KV rules (build b11118, September
 * 2026): n_ctx cells padded to 256, a sliding window only where its
 * loader sets one, a stream per sequence unless --kv-unified, its compute
 * buffer, and at most LLAMA_MAX_SEQ sequences; and where -ngl puts each
 * part of a model that the GPU holds only some of (split.c counts it).
 * tests/scripts/vs-node-llama-cpp.sh holds them to llama.cpp v0.5.0
 * itself (the build node-llama-cpp 3.22.1 ships, its source of 28
 * September 2026).
 */
#include "server_int.h"

#define F(t) (1u << KV_DTYPE_##t)
#define FLOATS (F(F32) | F(F16) | F(BF16))

/*
 * Whether llama.cpp runs a model's sliding window: only where the loader
 * of the architectures its converter makes sets one (src/models/<arch>.cpp
 * load_arch_hparams, build b11118): Gemma 2, 3 and 3n, gpt-oss, Command
 * R7B (cohere2), OLMo 3 (olmo2), AFMoE, MiMo-V2, Llama 4's chunks, and
 * EXAONE 4 at 32B (64 layers) only. Mistral and Mixtral convert as
 * `llama`, Qwen2 as `qwen2`, and Phi-3's loader turns its window off
 * ("Phi SWA is currently disabled"): they keep the whole context.
 */
static bool swa(const struct kv_model *m)
{
	static const char *const types[] = {
		"gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text",
		"gpt_oss", "cohere2", "olmo3", "afmoe", "mimo_v2_flash",
		"llama4", "llama4_text", NULL};
	static const char *const exaone[] = {"exaone4", NULL};
	return server_type_is(m, types) ||
	       (server_type_is(m, exaone) && m->n_layers == 64);
}

/* The cells of a stream of the sliding cache for window w
 * (llama-kv-cache-iswa.cpp): pad256(min(n_ctx_seq, n_swa + n_ubatch)). */
static uint64_t swa_cells(const struct fit_ctx *c, uint64_t w)
{
	uint64_t t = w + c->batched;
	return fit_round_up(t < c->ctx ? t : c->ctx, 256);
}

/* A sliding layer's cells (llama-kv-cache-iswa.cpp): with a stream per
 * sequence (-np N), swa_cells each; with one stream (--kv-unified),
 * pad256(min(n_ctx, n_swa x n_seq + n_ubatch)), the window per sequence
 * and n_ubatch cells once; --swa-full, or an architecture without a
 * window, the whole context. */
static uint64_t window(const struct fit_ctx *c, const struct kv_geom *g,
		       uint64_t *once)
{
	const struct kv_fit_in *in = c->in;
	if (g->window >= c->ctx)
		return g->window;
	if (!swa(in->m) || in->swa_full)
		return 0;
	if (in->kv_unified) {
		*once = c->batched;
		return g->window;
	}
	return swa_cells(c, g->window);
}

/* Values per token a layer's activations peak at: four widths of its MLP
 * (the experts a token runs and the shared ones) beside the hidden state,
 * or four of its attention's queries beside one row of K and one of V. */
static uint64_t layer_width(const struct kv_model *m, const struct kv_layer *l)
{
	uint64_t f = l->mlp == KV_MLP_DENSE ? l->ffn_dim : 0, a = 0;
	if (l->mlp == KV_MLP_MOE)
		f = l->ffn_dim * m->n_experts_active + m->shared_ffn_dim;
	if (l->attn != KV_ATTN_NONE)
		a = 4ULL * l->q_heads * l->head_dim_k +
		    (uint64_t)l->kv_heads * (l->head_dim_k + l->head_dim_v);
	return 4 * f + m->hidden > a ? 4 * f + m->hidden : a;
}

/*
 * Its compute buffer: what ggml's allocator reserves for the graph of
 * n_ubatch tokens (T), with flash attention (llama-server's default where
 * the backend has it), at the larger of two peaks:
 *   the head:  T x (vocab + 2 x hidden) float32: the logits beside two
 *              rows of hidden state;
 *   a layer:   T x the widest layer_width float32, beside each cache's
 *              f16 mask of T x its cells in a stream (the full cache's
 *              n_ctx_seq, the sliding one's swa_cells, or n_ctx_seq
 *              too under --swa-full).
 * Read from llama.cpp v0.5.0's CPU build (node-llama-cpp 3.22.1,
 * tests/scripts/vs-node-llama-cpp.sh), T = 512: Llama 3.1 8B's shape
 * 266.50 MiB at every context (the head: 512 x (128256 + 8192) x 4, and
 * 2 KiB of positions), Gemma 3 27B's 533.13, Qwen3 30B-A3B's 304.75;
 * Mistral 7B's shape (vocab 32000) 120.01 MiB at 4K, 148.01 at 32K: the
 * layer, 512 x (4 x 14336 + 4096) x 4 = 120 MiB, and its mask, 4 and
 * 32 MiB, within 4%. Builds of 2024 printed 258.50 MiB for Llama 3 8B,
 * one row of hidden state less. The rest of the graph's layout is the
 * allocator's (ggml-alloc.c): within 15% on the models that test
 * writes. No graphs or workspace beyond it.
 */
static struct kv_runtime runtime(const struct fit_ctx *c)
{
	struct kv_runtime r = {0};
	const struct kv_fit_in *in = c->in;
	const struct kv_model *m = in->m;
	uint64_t width = 0, full = 0, slide = 0;
	for (uint32_t i = 0; i < m->n_layers; i++) {
		const struct kv_layer *l = &m->layers[i];
		uint64_t w = layer_width(m, l);
		width = w > width ? w : width;
		if (l->attn == KV_ATTN_NONE)
			continue;
		if (l->window && swa(m)) {
			uint64_t s =
			    in->swa_full ? c->ctx : swa_cells(c, l->window);
			slide = s > slide ? s : slide;
		} else {
			full = c->ctx;
		}
	}
	uint64_t head = c->batched * (m->vocab + 2 * m->hidden) * 4;
	uint64_t layer = c->batched * (width * 4 + (full + slide) * 2);
	r.activation = head > layer ? head : layer;
	r.total = r.activation;
	return r;
}

/*
 * Where -ngl N puts a slot (src/llama-model.cpp, load_tensors, commit
 * 00342301): i_gpu_start = max(n_layer - N, 0) and act_gpu_layers =
 * min(N, n_layer + 1); layer il runs on the GPU when il >= i_gpu_start
 * and il - i_gpu_start < act_gpu_layers, so the last N layers do; the
 * output layer is asked as layer n_layer (dev_output =
 * get_layer_buft_list(n_layer)), on the GPU only where N > n_layer; the
 * input layer stays on the CPU ("there is very little benefit to
 * offloading the input layer"). A layer's KV follows its layer
 * (llama-kv-cache.cpp: dev_layer(il), unless offload_kqv is off, -nkvo).
 */
bool llamacpp_slot_gpu(uint32_t slot, uint32_t n_layers, uint32_t gpu_layers)
{
	if (slot == 0)
		return false;
	uint32_t il = slot - 1; /* n_layers: the output */
	uint32_t start = gpu_layers < n_layers ? n_layers - gpu_layers : 0;
	uint64_t act = gpu_layers < n_layers + 1ULL ? gpu_layers
						    : n_layers + 1ULL;
	return il >= start && il - start < act;
}

/* Its host compute buffer (llama-context.cpp, graph_reserve: the
 * graph's inputs, on the host): n_ubatch rows of the embeddings looked up
 * (float32) and the attention mask, n_ubatch x n_kv float32. Mistral 7B
 * Q4_K_M at -ngl 20, n_ubatch 256, n_ctx 768 logs "CUDA_Host compute
 * buffer size = 4.76 MiB": 256 x (4096 + 768) x 4 is 4.75 MiB; Llama 3 8B
 * at 512 and 8192 logs 24.01 MiB, 512 x (4096 + 8192) x 4 = 24 MiB; the
 * token ids and positions (a few KiB) are left out. */
uint64_t llamacpp_host_compute(const struct fit_ctx *c)
{
	return c->batched * (c->in->m->hidden + c->ctx) * 4;
}

/* A batch of at least KV_NGL_BATCH tokens runs the products of host
 * weights on the GPU (ggml-backend.cpp's op offload), each weight copied
 * into its compute buffer first: the buffer holds the largest of them
 * beside the activations. The Mistral 7B log above: "CUDA0 compute buffer
 * size = 137.79 MiB", its head in host memory, is 256 x (32000 + 4096) x
 * 4 (runtime() below) and the head's 107,520,000 bytes (32000 x 4096 in
 * Q6_K). */
uint64_t llamacpp_gpu_copy(const struct fit_ctx *c, uint64_t largest)
{
	return c->batched >= KV_NGL_BATCH ? largest : 0;
}

static const struct kv_server_ops ops = {
	.runtime = runtime,
	.window = window,
};

/* No fraction; n_ubatch 512; n_seq_max at most LLAMA_MAX_SEQ, 256
 * (src/llama-cparams.h; llama_context refuses more); the context padded
 * to 256 cells (src/llama-context.cpp); -ctk/-ctv f16 by default, K and V
 * in formats of their own; a GGUF of a float32 checkpoint is f16; a Mamba
 * layer's state is float32 (llama-memory-recurrent.cpp); layers split
 * over GPUs (-sm layer), not heads. */
const struct kv_server kv_server_llamacpp = {
	.kind = KV_SERVER_LLAMACPP,
	.name = "llamacpp",
	.label = "llama.cpp",
	.release = "b11118",
	.block = 1,
	.block_mla = 1,
	.ctx_pad = 256,
	.batched = 512,
	.seqs = 256,
	.seqs_max = 256,
	.formats = FLOATS | F(Q8_0) | F(Q4_0) | F(Q4_1) | F(Q5_0) | F(Q5_1) |
		   F(IQ4_NL),
	.kv_auto = KV_DTYPE_F16,
	.w_f32 = KV_DTYPE_F16,
	.state = KV_STATE_F32,
	.kv_apart = true,
	.by_layers = true,
	.ops = &ops,
};
