/*
 * test_ep.c - expert parallelism and data-parallel attention against
 * hand-worked counts from the engines' code: DeepSeek-V3's weights on one
 * of 8 H200s as TensorRT-LLM (DEP8: tensorrt_llm/mapping.py, experts
 * num_experts // moe_ep_size a rank; modeling_deepseekv3.py, the dense
 * MLP, shared experts and head whole under attention DP), SGLang (the
 * dense MLP and head over every rank, dp_attention.py) and vLLM
 * (--data-parallel-size 8 --enable-expert-parallel) keep them; the
 * latent each rank keeps; the tokens each MoE layer sends (DeepEP's
 * all-to-all, the engines' all-gather); the refusals.
 *
 * DeepSeek-V3 (configs/deepseek-v3.json): hidden 7168, 61 layers, the
 * first 3 dense (intermediate 18432), 58 MoE of 256 routed experts of
 * 2048 (8 a token) and one shared; vocabulary 129,280, untied. Routed
 * parameters: 58 x 256 x 3 x 7168 x 2048 = 653,908,770,816.
 */
#include <math.h>

#include "kv/ep.h"
#include "kv/fit.h"
#include "kv/params.h"
#include "kv/serve.h"
#include "test.h"
#include "fit_solve.h"

#define VLLM kv_server_get(KV_SERVER_VLLM)
#define SGLANG kv_server_get(KV_SERVER_SGLANG)
#define TRTLLM kv_server_get(KV_SERVER_TRTLLM)
#define LLAMACPP kv_server_get(KV_SERVER_LLAMACPP)
#define ROUTED 653908770816ULL

/* DeepSeek-V3 on H200s, fp8 weights (1 byte a parameter) and latent. */
static struct kv_fit_in row(const struct kv_model *m,
			    const struct kv_server *sv, uint32_t tp,
			    uint32_t dp, uint32_t ep)
{
	return (struct kv_fit_in){.m = m, .kv_dtype = KV_DTYPE_FP8,
				  .w_dtype = KV_DTYPE_FP8,
				  .mem = 150754820096ULL, .runtime = true,
				  .tp = tp, .pp = 1, .ctx = 8192, .server = sv,
				  .gpu = "h200", .bandwidth_gbps = 4800,
				  .tflops = 1979, .dp = dp, .ep = ep};
}

/*
 * Weights on one rank. TensorRT-LLM's DEP8 (tp 8 with attention DP: one
 * group of one rank each, the experts over 8): every part whole but the
 * routed experts, 32 a rank: total - 7/8 of the routed, 671,026,419,200 -
 * 572,170,174,464 = 98,856,244,736 bytes (TP8: 671,026,419,200 / 8 =
 * 83,878,302,400). vLLM's DP8 + EP (one rank a group) the same. SGLang's
 * splits the 3 dense MLPs (3 x 3 x 7168 x 18432 = 1,189,085,184) and the
 * head and final norm (129,280 x 7168 + 7168 = 926,686,208) over the 8:
 * 7/8 of their 2,115,771,392, 1,851,299,968 bytes fewer.
 */
static void weights(const struct kv_model *m)
{
	struct kv_params p;
	char err[KV_ERRLEN];
	CHECK(kv_model_params(m, &p, err) == 0);
	CHECK_U64(p.total, 671026419200ULL);
	CHECK_U64(p.routed, ROUTED);
	/* the MLP apart from attention: a dense layer's 3 x 7168 x 18432,
	 * a MoE layer's shared expert 3 x 7168 x 2048 */
	struct kv_params lp;
	CHECK(kv_layer_params(m, 0, &lp) == 0);
	CHECK_U64(lp.mlp, 396361728);
	CHECK(kv_layer_params(m, 3, &lp) == 0);
	CHECK_U64(lp.mlp, 44040192);
	CHECK_U64(lp.routed, ROUTED / 58);
	struct kv_fit_in in = row(m, TRTLLM, 1, 8, 8);
	struct kv_fit t = solve(&in);
	CHECK_U64(t.weights, 98856244736ULL);
	CHECK_U64(kv_ep_experts(&in), 32);
	in.server = VLLM;
	CHECK_U64(solve(&in).weights, 98856244736ULL);
	in.server = SGLANG;
	CHECK_U64(solve(&in).weights, 98856244736ULL - 1851299968ULL);
	in = row(m, TRTLLM, 8, 1, 1); /* TP8 */
	CHECK_U64(solve(&in).weights, 83878302400ULL);
}

/*
 * The latent: 576 values a layer, 61 layers, fp8: 35,136 bytes a token on
 * every rank either way; under TP8 each rank keeps every sequence's (7/8
 * of it a copy, the dup column), under DEP8 its own, and the 8 groups
 * hold 8 times the sequences one rank holds.
 */
static void latent(const struct kv_model *m)
{
	struct kv_fit_in in = row(m, TRTLLM, 1, 8, 8);
	struct kv_fit d = solve(&in);
	CHECK_U64(d.bytes_per_token, 35136);
	CHECK_U64(d.dup_per_token, 0);
	in = row(m, TRTLLM, 8, 1, 1);
	struct kv_fit t = solve(&in);
	CHECK_U64(t.bytes_per_token, 35136);
	CHECK(t.dup_per_token > 0);
	/* a sequence of 8,192 tokens: 35,136 x 8,192 = 287,834,112 bytes
	 * on each rank. DEP8's rank, 14,977,942,336 bytes more weights
	 * (less TP8's all-reduce workspace), holds fewer than TP8's: 152
	 * of 43,904,930,457 free against 195 of 56,379,841,516; its 8
	 * groups 1,216, 6.2 times as many */
	CHECK_U64(d.users_whole, d.free_kv / 287834112ULL);
	CHECK_U64(t.users_whole, t.free_kv / 287834112ULL);
	CHECK(d.users_whole < t.users_whole);
	CHECK(8 * d.users_whole > 6 * t.users_whole);
}

/*
 * The routed experts' FLOPs a token of a group costs the busiest rank:
 * 58 x 8 active experts x 3 x 7168 x 2048 = 20,434,649,088 parameters,
 * 2 FLOPs each, every group's tokens spread over the 8 ranks: a token's
 * whole 40,869,298,176 (TP8: 1/8 of it), times the imbalance.
 */
static void flops(const struct kv_model *m)
{
	struct kv_fit_in in = row(m, TRTLLM, 1, 8, 8);
	in.users = 1;
	CHECK_NEAR(solve(&in).step_routed_flops, 40869298176.0, 1);
	in.ep_imbalance = 1.25;
	CHECK_NEAR(solve(&in).step_routed_flops, 1.25 * 40869298176.0, 1);
	in = row(m, TRTLLM, 8, 1, 1);
	in.users = 1;
	CHECK_NEAR(solve(&in).step_routed_flops, 40869298176.0 / 8, 1);
}

/*
 * A step of 128 tokens a rank, 58 MoE layers. SGLang's DeepEP (low
 * latency: fp8 out, bf16 back) sends each token to its 8 experts, 7/8 of
 * them on other ranks: 128 x 8 x 7/8 x 7168 x (1 + 2) x 58 =
 * 1,117,519,872 bytes; the busiest rank at 1.5, 1,676,279,808. vLLM's
 * and TensorRT-LLM's all-gather bring every other rank's 128 tokens,
 * bf16 both ways: 128 x 7 x 7168 x 4 x 58 = 1,490,026,496. Over 450 GB/s
 * (NVLink 4, one way) with 116 collectives of 6.6 + 7 x 0.6 us: SGLang's
 * 2.483377 + 1.2528 = 3.736177 ms.
 */
static void a2a(const struct kv_model *m)
{
	struct kv_fit_in in = row(m, SGLANG, 1, 8, 8);
	CHECK_U64(kv_ep_a2a_calls(&in), 116);
	CHECK_NEAR(kv_ep_a2a_bytes(&in, 128), 1117519872.0, 1e-3);
	CHECK_NEAR(kv_ep_a2a_ms(&in, 128, 450, 6.6, 0.6), 3.736177, 1e-6);
	CHECK(isnan(kv_ep_a2a_ms(&in, 128, 0, 6.6, 0.6)));
	in.ep_imbalance = 1.5;
	CHECK_NEAR(kv_ep_a2a_bytes(&in, 128), 1676279808.0, 1e-3);
	in = row(m, VLLM, 1, 8, 8);
	CHECK_NEAR(kv_ep_a2a_bytes(&in, 128), 1490026496.0, 1e-3);
	in.server = TRTLLM;
	CHECK_NEAR(kv_ep_a2a_bytes(&in, 128), 1490026496.0, 1e-3);
	in = row(m, TRTLLM, 8, 1, 1); /* no groups, no experts split */
	CHECK_NEAR(kv_ep_a2a_bytes(&in, 128), 0, 0);
	CHECK_U64(kv_ep_a2a_calls(&in), 0);
}

/*
 * The decode step's link under SGLang's DEP8 at the datasheet's rates: a
 * group's 16 users, tp 1 (no all-reduce), the all-to-all alone: 16 x 8 x
 * 7/8 x 7168 x 3 x 58 = 139,689,984 bytes, over 450 GB/s 0.310422 ms,
 * and 116 collectives' latency 1.2528 ms. The tokens a second are the
 * 8 groups', over 8 GPUs.
 */
static void times(const struct kv_model *m)
{
	char err[KV_ERRLEN];
	struct kv_fit_in in = row(m, SGLANG, 1, 8, 8);
	struct kv_serve_in w = {.isl = 1000, .osl = 100, .users = 16,
				.link_gbps = 450, .ar_base_us = 6.6,
				.ar_step_us = 0.6};
	struct kv_serve s;
	CHECK(kv_serve_solve(&in, &w, &s, err) == 0);
	CHECK_NEAR(s.decode.link_bytes, 139689984.0, 1e-3);
	CHECK_NEAR(s.decode.link_ms, 0.310422 + 1.2528, 1e-6);
	CHECK_NEAR(s.tokens_per_s,
		   8 * 16 * (double)w.osl / s.latency_ms * 1e3, 1e-6);
	CHECK_NEAR(s.tokens_per_s_gpu, s.tokens_per_s / 8, 1e-9);
}

static void refusals(const struct kv_model *m)
{
	char err[KV_ERRLEN];
	struct kv_fit f;
	struct kv_fit_in in = row(m, TRTLLM, 6, 1, 6);
	CHECK(kv_fit_solve(&in, &f, err) == KV_EINVAL);
	CHECK_STR(err, "deepseek-v3: --ep 6: must divide the 256 routed "
		       "experts");
	in = row(m, VLLM, 8, 1, 4);
	CHECK(kv_fit_solve(&in, &f, err) == KV_EINVAL);
	CHECK_STR(err, "vllm: --ep 4: vLLM's expert parallelism spans every "
		       "rank (--enable-expert-parallel: TP x DP = 8)");
	in = row(m, TRTLLM, 4, 2, 8);
	CHECK(kv_fit_refuses(&in, err));
	CHECK_STR(err, "trtllm: --dp 2 of 4 ranks each: TensorRT-LLM's "
		       "enable_attention_dp gives every rank its own attention "
		       "(--dp-attention with --dp the --tp ranks)");
	in = row(m, LLAMACPP, 1, 2, 1);
	in.kv_dtype = KV_DTYPE_F16;
	CHECK(kv_fit_refuses(&in, err));
	CHECK_STR(err, "llamacpp: --dp: llama.cpp has no data-parallel "
		       "attention or expert parallelism");
	struct kv_model *d = test_load("llama-3.1-8b");
	if (!d)
		return;
	in = row(d, VLLM, 1, 2, 1);
	CHECK(kv_fit_solve(&in, &f, err) == KV_EINVAL);
	CHECK_STR(err, "llama-3.1-8b: --dp 2: a dense model's data-parallel "
		       "ranks are replicas; plan one (the users divided among "
		       "them)");
	kv_model_free(d);
}

int main(void)
{
	struct kv_model *m = test_load("deepseek-v3");
	if (!m)
		return 1;
	weights(m);
	latent(m);
	flops(m);
	a2a(m);
	times(m);
	refusals(m);
	kv_model_free(m);
	return test_done("ep");
}
