/*
 * test_fit.c - capacity and decode-step numbers of the fit module against
 * hand-worked values: the seed article's Llama 3.1 8B figures, each
 * engine's budget and page rule, TP/PP splits, prefixes, windows, MoE.
 */
#include <math.h>

#include "kv/fit.h"
#include "kv/params.h"
#include "test.h"
#include "fit_solve.h"

#define GB 1000000000ULL
#define SEQ8K (131072ULL * 8192) /* Llama 3.1 8B bf16, one 8K sequence */
/* the newest rules of each engine */
#define IDEAL kv_server_get(KV_SERVER_IDEAL)
#define VLLM kv_server_get(KV_SERVER_VLLM)
#define SGLANG kv_server_get(KV_SERVER_SGLANG)
#define TRTLLM kv_server_get(KV_SERVER_TRTLLM)
#define LLAMACPP kv_server_get(KV_SERVER_LLAMACPP)

/* The article's setting: 80 GB GPU, 16 GB of weights, 6 GB kept back. */
static struct kv_fit_in seed(const struct kv_model *m, uint64_t ctx)
{
	return (struct kv_fit_in){.m = m, .kv_dtype = KV_DTYPE_BF16,
				  .w_dtype = KV_DTYPE_BF16, .weights = 16 * GB,
				  .mem = 80 * GB, .reserve = 6 * GB, .tp = 1,
				  .pp = 1, .ctx = ctx,
				  .server = IDEAL};
}

static void test_seed(const struct kv_model *m)
{
	struct kv_fit_in in = seed(m, 8192);
	struct kv_fit f = solve(&in);
	CHECK_U64(f.free_kv, 58 * GB);
	CHECK_U64(f.bytes_per_token, 131072);
	CHECK_U64(f.kv_tokens, 442504);
	CHECK_U64(f.seq_bytes, SEQ8K);
	CHECK_NEAR(f.users, 54.02, 0.005);
	CHECK_U64(f.users_whole, 54);
	CHECK_U64(f.kv_bytes, 54 * SEQ8K);
	CHECK_U64(f.dup_bytes, 0);
	in.ctx = 131072;
	CHECK_NEAR(solve(&in).users, 3.38, 0.005);
	in.kv_dtype = KV_DTYPE_FP8;
	f = solve(&in);
	CHECK_U64(f.kv_tokens, 885009);
	CHECK_NEAR(f.users, 6.75, 0.005);
	in.ctx = 8192;
	CHECK_NEAR(solve(&in).users, 108.03, 0.005);

	/* one decode step of 48 users at 8K */
	in = seed(m, 8192);
	in.users = 48;
	in.bandwidth_gbps = 3350;
	f = solve(&in);
	CHECK_U64(f.step_users, 48);
	CHECK_U64(f.step_kv_bytes, 51539607552ULL);
	CHECK_U64(f.step_weight_bytes, 16 * GB);
	CHECK_NEAR(f.kv_weight_ratio, 3.22, 0.005);
	CHECK_NEAR(f.kv_share, 0.76, 0.005);
	CHECK_NEAR(f.step_ms, 67539607552.0 / 3.35e9, 1e-9);
	CHECK_NEAR(f.tokens_per_s, 48 / (67539607552.0 / 3.35e12), 1e-6);
	/* FLOPs per token: 2 x layer params 6,979,584,000, 2 x the head
	 * 128256 x 4096, and attention 2 x 32 heads x (128 + 128) x 8192
	 * tokens x 32 layers: 19,304,808,448; x 48 users */
	CHECK(isnan(f.compute_ms));
	in.tflops = 989.5;
	f = solve(&in);
	CHECK_NEAR(f.step_flops, 48 * 19304808448.0, 1);
	CHECK_NEAR(f.compute_ms, 48 * 19304808448.0 / 989.5e9, 1e-9);
	in.tflops = 0;
	/* with no --users the step is sized for the users that fit */
	in.users = 0;
	CHECK_U64(solve(&in).step_users, 54);
	in.bandwidth_gbps = 0;
	CHECK(isnan(solve(&in).step_ms));

	/* the inverse: longest context for 48 users, 58e9 / 48 / 131072 */
	uint64_t ctx;
	char err[KV_ERRLEN];
	CHECK(kv_fit_solve_ctx(&in, 48, &ctx, err) == 0);
	CHECK_U64(ctx, 9218);
	CHECK(kv_fit_solve_ctx(&in, 500000, &ctx, err) == 0);
	CHECK_U64(ctx, 0);

	/* the bar: 2 cells of weights, 7 of KV, 1 of reserve */
	char bar[11];
	f = solve(&in);
	CHECK_STR(kv_fit_bar(&in, &f, 10, bar), "WWKKKKKKKR");
}

static void test_engines(const struct kv_model *m)
{
	struct kv_fit_in in = seed(m, 8192);
	in.reserve = 0;
	in.server = VLLM; /* 0.92 of total memory */
	struct kv_fit f = solve(&in);
	CHECK_U64(f.budget, 73.6 * GB);
	CHECK_U64(f.free_kv, 57.6 * GB);
	CHECK_U64(f.block, 16);
	/* 57.6e9 // 65536 (a layer's page) // 32 layers = 27465 blocks,
	 * 512 a request: 53.64x, 27465 x 16 tokens */
	CHECK_U64(f.num_blocks, 27465);
	CHECK_U64(f.kv_tokens, 27465ULL * 16);
	in.ctx = 8193; /* a 16-token page more */
	CHECK_U64(solve(&in).seq_bytes, 131072ULL * 8208);
	in.ctx = 8192;
	in.util = 0.5; /* --util replaces the default */
	CHECK_U64(solve(&in).free_kv, 24 * GB);
	in.util = 0;
	/* SGLang's mem_fraction_static from the GPU's MiB
	 * (arg_groups/memory_hook.py, handle_gpu_memory_settings and
	 * reserve_for_graph_mb, commit 031ed82d): 80e9 bytes are 76293.9
	 * MiB; reserve 512 + 8192 x 1.5 + 1/8 x 1024 + 256 x 2 and 8 MiB for
	 * each of the 58 prefill graphs up to 8192 tokens, 13904: 0.818 of
	 * the memory free when it measures, after its CUDA context's 1195
	 * MiB (pre_model_load_memory) */
	in.server = SGLANG;
	CHECK_NEAR(solve(&in).free_kv,
		   floor((80 * GB - 1195.0 * (1 << 20)) * 0.818) - 16 * GB, 1);
	/* H100 (81559 MiB): 0.830; at tp 8, max_bs 512 and 1 GiB: 15312,
	 * 0.812; latent attention's 1.5 GiB in place of the 464 MiB of
	 * graphs: 14976, 0.816; A100 40 GB (40960 MiB): 512 + 4096 x 1.5 +
	 * 128 + 32 x 2 + 50 x 8 = 7248, no 10 GiB floor, 0.823; 24 GiB
	 * (24576 MiB): the same chunk, 48 decode sizes, 7280: 0.704 */
	CHECK_NEAR(kv_server_frac(SGLANG, 81559ULL << 20, 1, 1,
				  false), 0.830, 0);
	CHECK_NEAR(kv_server_frac(SGLANG, 81559ULL << 20, 8, 1,
				  false), 0.812, 0);
	CHECK_NEAR(kv_server_frac(SGLANG, 81559ULL << 20, 1, 1,
				  true), 0.816, 0);
	CHECK_NEAR(kv_server_frac(SGLANG, 40960ULL << 20, 1, 1,
				  false), 0.823, 0);
	CHECK_NEAR(kv_server_frac(SGLANG, 24576ULL << 20, 1, 1,
				  false), 0.704, 0);
	CHECK_NEAR(kv_server_frac(VLLM, 1, 1, 1, false), 0.92, 0);
	in.server = TRTLLM; /* 0.9 of what the weights leave */
	f = solve(&in);
	CHECK_U64(f.free_kv, (uint64_t)(64 * 0.9 * GB));
	CHECK_U64(f.block, 32);
	in.server = LLAMACPP; /* context padded to 256 cells */
	in.ctx = 8000;
	f = solve(&in);
	CHECK_U64(f.ctx_kept, 8192);
	CHECK_U64(f.seq_bytes, SEQ8K);
	CHECK_U64(f.free_kv, 64 * GB);

	const struct kv_server *e;
	CHECK(kv_server_parse("TRT-LLM", &e) == 0 && e == TRTLLM);
	CHECK(kv_server_parse("llama.cpp", &e) == 0 && e == LLAMACPP);
	CHECK(kv_server_parse("tgi", &e) == KV_EINVAL);
	CHECK_STR(VLLM->name, "vllm");
	CHECK(kv_server_get(KV_SERVER_KINDS) == NULL);

	/* the formats each keeps, and what "auto" is under each */
	CHECK(kv_server_stores(IDEAL, KV_DTYPE_IQ4_NL));
	CHECK(!kv_server_stores(IDEAL, KV_DTYPE_INT4));
	CHECK(kv_server_stores(VLLM, KV_DTYPE_INT8));
	CHECK(!kv_server_stores(VLLM, KV_DTYPE_Q5_1));
	CHECK(!kv_server_stores(TRTLLM, KV_DTYPE_INT8));
	CHECK(kv_server_stores(LLAMACPP, KV_DTYPE_Q4_0));
	CHECK(!kv_server_stores(LLAMACPP, KV_DTYPE_FP8));
	char list[160];
	CHECK_STR(kv_server_formats(SGLANG, list, sizeof list),
		  "f32, f16, bf16, fp8, fp8_e5m2");
	struct kv_model dm = {.dtype = KV_DTYPE_F32};
	CHECK(kv_server_kv_dtype(IDEAL, &dm) == KV_DTYPE_F32);
	CHECK(kv_server_kv_dtype(VLLM, &dm) == KV_DTYPE_BF16);
	dm.dtype = KV_DTYPE_F16;
	CHECK(kv_server_kv_dtype(VLLM, &dm) == KV_DTYPE_F16);
	dm.dtype = KV_DTYPE_BF16;
	CHECK(kv_server_kv_dtype(LLAMACPP, &dm) == KV_DTYPE_F16);
	/* a checkpoint that declares an fp8 cache: auto keeps it, but in
	 * llama.cpp (vllm/utils/torch_utils.py resolve_kv_cache_dtype_string,
	 * SGLang's configure_kv_cache_dtype) */
	dm.quant.kv_fp8 = true;
	CHECK(kv_server_kv_dtype(VLLM, &dm) == KV_DTYPE_FP8);
	CHECK(kv_server_kv_dtype(SGLANG, &dm) == KV_DTYPE_FP8);
	CHECK(kv_server_kv_dtype(TRTLLM, &dm) == KV_DTYPE_FP8);
	CHECK(kv_server_kv_dtype(IDEAL, &dm) == KV_DTYPE_FP8);
	CHECK(kv_server_kv_dtype(LLAMACPP, &dm) == KV_DTYPE_F16);
	CHECK(kv_server_weights_dtype(LLAMACPP, KV_DTYPE_BF16) ==
	      KV_DTYPE_BF16);
	CHECK(kv_server_weights_dtype(TRTLLM, KV_DTYPE_F32) ==
	      KV_DTYPE_BF16);
	in = seed(m, 8192);
	in.server = VLLM;
	in.kv_dtype = KV_DTYPE_Q5_1;
	char err[KV_ERRLEN];
	struct kv_fit g;
	CHECK(kv_fit_solve(&in, &g, err) == KV_EINVAL);
	CHECK_STR(err, "vllm keeps no q5_1 cache; it keeps f32, f16, bf16, "
		       "fp8, fp8_e5m2, int8");
}

static void test_parallel(const struct kv_model *m)
{
	struct kv_fit_in in = seed(m, 8192);
	in.tp = 8;
	struct kv_fit f = solve(&in);
	CHECK_U64(f.bytes_per_token, 16384);
	CHECK_U64(f.dup_per_token, 0);
	CHECK_U64(f.weights, 2 * GB);
	in.tp = 16; /* 8 KV heads on 16 ranks: every head on two */
	f = solve(&in);
	CHECK_U64(f.bytes_per_token, 16384);
	CHECK_U64(f.dup_per_token, 16384);
	CHECK_U64(f.weights, 1 * GB);
	CHECK_U64(f.users_whole, (73 * GB) / (16384ULL * 8192));
	CHECK_U64(f.kv_bytes, f.users_whole * 16384ULL * 8192);
	CHECK_U64(f.dup_bytes, f.kv_bytes); /* every byte also elsewhere */

	/* pp 2: the last stage holds the head and final norm and decides */
	in = seed(m, 8192);
	in.weights = 0;
	in.pp = 2;
	f = solve(&in);
	CHECK_U64(f.stage, 1);
	CHECK_U64(f.stage_layers, 16);
	CHECK_U64(f.bytes_per_token, 65536);
	CHECK_U64(f.weights, 2 * (16 * 218112000ULL + 525336576ULL + 4096));
	in.pp = 3; /* 11, 11, 10 layers: a first stage decides */
	f = solve(&in);
	CHECK_U64(f.stage_layers, 11);
	CHECK(f.stage < 2);

	/* errors */
	char err[KV_ERRLEN];
	in = seed(m, 8192);
	in.tp = 3;
	CHECK(kv_fit_solve(&in, &f, err) == KV_EINVAL);
	CHECK_HAS(err, "tensor parallel 3 does not divide the 32 attention");
	in = seed(m, 8192);
	in.pp = 33;
	CHECK(kv_fit_solve(&in, &f, err) == KV_EINVAL);
	in = seed(m, 8192);
	in.reserve = 81 * GB;
	CHECK(kv_fit_solve(&in, &f, err) == KV_EINVAL);
	CHECK_HAS(err, "larger than the GPU's memory");
	in = seed(m, 8192);
	in.prefix = 8193;
	CHECK(kv_fit_solve(&in, &f, err) == KV_EINVAL);
	CHECK_HAS(err, "prefix of 8193 tokens is longer than the context");
}

static void test_prefix(const struct kv_model *m)
{
	struct kv_fit_in in = seed(m, 8192);
	in.prefix = 4096;
	struct kv_fit f = solve(&in);
	CHECK_U64(f.shared_bytes, 131072ULL * 4096);
	CHECK_U64(f.seq_bytes, 131072ULL * 4096);
	CHECK_U64(f.kv_bytes, 131072ULL * 4096 * (1 + f.users_whole));
	CHECK_NEAR(f.users, (58e9 - 131072.0 * 4096) / (131072.0 * 4096),
		   1e-9);
	in.prefix = 8192; /* the whole chat shared: one token stays private */
	f = solve(&in);
	CHECK_U64(f.shared_bytes, 131072ULL * 8191);
	CHECK_U64(f.seq_bytes, 131072ULL);
	in.server = VLLM; /* a page of it */
	f = solve(&in);
	CHECK_U64(f.shared_bytes, 131072ULL * 8176);
	CHECK_U64(f.seq_bytes, 131072ULL * 16);
	in.server = VLLM; /* only whole pages are shared */
	in.prefix = 4100;
	f = solve(&in);
	CHECK_U64(f.shared_bytes, 131072ULL * 4096);
	CHECK_U64(f.seq_bytes, 131072ULL * 4096);
}

/* Llama 4 Scout under vLLM: 12 full and 36 chunked layers (chunks of
 * 8,192), 2 KV heads a rank at tp 4, 1,024 bytes a token a layer, pages
 * of 16 (16,384 bytes). The hybrid manager is on for chunked local
 * attention (vllm/envs.py VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE
 * defaults to 1): groups of 12 layers, one full and three chunked; 0.92 of
 * 80 GB less a quarter of 16 GB and the 6 GB kept back, 63.6 GB, is
 * 3,881,835 pages, 323,486 for each group slot; a request of 131,072
 * tokens needs 8,192 full pages and, per chunked group, ceil(min(8192 + 2 x
 * 8192, ctx) / 16) = 1,536 (ChunkedLocalAttentionSpec): 12,800 pages, 25
 * users (as full attention, 32,768 pages: 9). */
static void test_chunked(void)
{
	struct kv_model *m = test_load("llama-4-scout");
	if (!m)
		return;
	struct kv_fit_in in = seed(m, 131072);
	in.server = VLLM;
	in.tp = 4;
	struct kv_fit f = solve(&in);
	CHECK_U64(f.free_kv, 63600000000ULL);
	CHECK_U64(f.num_blocks, 323486);
	CHECK_NEAR(f.max_concurrency, 323486.0 / 12800, 1e-12);
	CHECK_U64(f.users_whole, 25);
	in.ctx = 4096; /* shorter than a chunk: 256 pages each group */
	f = solve(&in);
	CHECK_NEAR(f.max_concurrency, 323486.0 / 1024, 1e-12);
	kv_model_free(m);
}

/* Mistral 7B: 32 layers, window 4096, 4,096 KV bytes per token a layer */
static void test_window(void)
{
	struct kv_model *m = test_load("mistral-7b-v0.1");
	if (!m)
		return;
	struct kv_fit_in in = seed(m, 32768);
	struct kv_fit f;
	CHECK_U64(solve(&in).seq_bytes, 32ULL * 4096 * 4096);
	/* vLLM: window - 1 + 2 x max_num_batched_tokens (8192: 80 GB is
	 * above 70 GiB), in pages, + 1: ceil(20479 / 16) + 1 = 1281 pages */
	in.server = VLLM;
	CHECK_U64(solve(&in).seq_bytes, 32ULL * 4096 * 1281 * 16);
	in.batched_tokens = 2048; /* 4095 + 4096: 512 pages + 1 */
	CHECK_U64(solve(&in).seq_bytes, 32ULL * 4096 * 513 * 16);
	in.batched_tokens = 0;
	in.server = SGLANG; /* one pool: every layer full */
	CHECK_U64(solve(&in).seq_bytes, 32ULL * 4096 * 32768);
	/* TensorRT-LLM's V1 cache manager: max_attention_window unset,
	 * every layer max_seq_len (llmapi/llm_args.py KvCacheConfig;
	 * _torch/pyexecutor/resource_manager KVCacheManager), in pages of
	 * 32: 0.9 of the 58 GB the weights and the 6 GB kept back leave,
	 * 52.2 GB, hold 398,240 tokens (12,445 pages of 131,072 bytes a
	 * token), 12 users of 32,768, not the 97 of the window's 4,096 */
	in.server = TRTLLM;
	f = solve(&in);
	CHECK_U64(f.seq_bytes, 32ULL * 4096 * 32768);
	CHECK_U64(f.free_kv, 52200000000ULL);
	CHECK_U64(f.kv_tokens, 398240);
	CHECK_U64(f.users_whole, 12);
	/* llama.cpp converts Mistral as `llama`, whose loader reads no
	 * window: the whole context */
	in.server = LLAMACPP;
	f = solve(&in);
	CHECK_U64(f.seq_bytes, 32ULL * 4096 * 32768);
	CHECK_U64(f.shared_bytes, 0);
	in.ctx = 1000; /* padded to 256 cells */
	CHECK_U64(solve(&in).seq_bytes, 32ULL * 4096 * 1024);
	in.server = IDEAL;
	CHECK_U64(solve(&in).seq_bytes, 32ULL * 4096 * 1000);
	kv_model_free(m);
}

/* llama.cpp's window where its loader sets one (Gemma 2: every other
 * layer, 4096) and its --tp refused; vLLM's rules worked by hand from
 * vllm/v1/core/kv_cache_utils.py and vllm/engine/arg_utils.py. */
static void test_engine_rules(void)
{
	char err[KV_ERRLEN];
	struct kv_fit g;
	struct kv_model *m = test_load("gemma-2-9b");
	if (m) { /* 42 layers of 8 KV heads x 256 x 2 x 2 bytes = 8192 */
		struct kv_fit_in in = seed(m, 32768);
		in.server = LLAMACPP;
		/* a stream per sequence: its sliding cache pad256(min(n_ctx,
		 * n_swa + n_ubatch)) = 4608 cells */
		struct kv_fit f = solve(&in);
		CHECK_U64(f.seq_bytes, 21ULL * 8192 * 32768 + 21ULL * 8192 * 4608);
		CHECK_U64(f.shared_bytes, 0);
		in.kv_unified = true; /* one stream: n_ubatch cells once */
		f = solve(&in);
		CHECK_U64(f.seq_bytes, 21ULL * 8192 * 32768 + 21ULL * 8192 * 4096);
		CHECK_U64(f.shared_bytes, 21ULL * 8192 * 512);
		in.kv_unified = false;
		in.swa_full = true; /* every layer the whole context */
		CHECK_U64(solve(&in).seq_bytes, 42ULL * 8192 * 32768);
		in.swa_full = false;
		/* SGLang splits full and sliding pools only for the
		 * architectures is_hybrid_swa_model lists
		 * (configs/model_config.py), and Gemma 2's override turns it
		 * off too (arg_groups/model_overrides/gemma2_gemma3.py): one
		 * pool, every layer every token */
		in.server = SGLANG;
		CHECK_U64(solve(&in).seq_bytes, 42ULL * 8192 * 32768);
		in.server = LLAMACPP;
		in.tp = 2;
		CHECK(kv_fit_solve(&in, &g, err) == KV_EINVAL);
		CHECK_HAS(err, "by layers");
		kv_model_free(m);
	}

	/* llama.cpp runs at most LLAMA_MAX_SEQ = 256 sequences
	 * (src/llama-cparams.h; llama_context refuses n_seq_max beyond) */
	if ((m = test_load("llama-3.1-8b"))) {
		struct kv_fit_in in = seed(m, 256);
		in.server = LLAMACPP;
		struct kv_fit f = solve(&in);
		/* 58 GB beside 16 GB of weights and 6 kept back */
		CHECK_NEAR(f.max_concurrency, 58.0 * GB / (131072.0 * 256),
			   1e-9);
		CHECK_U64(f.max_seqs, 256);
		CHECK_U64(f.users_whole, 256);
		in.max_seqs = 257;
		CHECK(kv_fit_solve(&in, &g, err) == KV_EINVAL);
		CHECK_STR(err, "llamacpp: --max-num-seqs 257: it runs at most "
			       "256 sequences at once");
		kv_model_free(m);
	}

	/* scheduler defaults by GPU: (max_num_batched_tokens, max_num_seqs) */
	uint64_t t, n;
	kv_server_batch(VLLM, 85520809984ULL, "h100-sxm", &t, &n);
	CHECK(t == 8192 && n == 1024);
	kv_server_batch(VLLM, 85899345920ULL, "a100-80gb", &t, &n);
	CHECK(t == 2048 && n == 256);
	kv_server_batch(VLLM, 48305799168ULL, "l40s", &t, &n);
	CHECK(t == 2048 && n == 256);
	kv_server_batch(VLLM, 192ULL << 30, "b200", &t, &n);
	CHECK(t == 16384 && n == 1024);
	/* v0.27 had no tier from 160 GiB: the 70 GiB tier's */
	const struct kv_server *old;
	CHECK(kv_server_parse("vllm@0.27", &old) == 0);
	kv_server_batch(old, 192ULL << 30, "b200", &t, &n);
	CHECK(t == 8192 && n == 1024);
	kv_server_batch(old, 85899345920ULL, "a100-80gb", &t, &n);
	CHECK(t == 2048 && n == 256);
	char rel[64];
	CHECK_STR(kv_server_releases(KV_SERVER_VLLM, rel, sizeof rel),
		  "0.28 (newest), 0.27");
	CHECK_STR(kv_server_rules(old, rel, sizeof rel), "vllm 0.27");
	CHECK_STR(kv_server_rules(IDEAL, rel, sizeof rel), "ideal");

	/* Llama 3.1 8B with 60 GiB for KV: 60 GiB // 65536 // 32 = 30720
	 * blocks; 8192 a request of 131072 tokens: 3.75x, 491520 tokens */
	if ((m = test_load("llama-3.1-8b"))) {
		struct kv_fit_in in = seed(m, 131072);
		in.server = VLLM;
		in.gpu = "h100-sxm";
		in.kv_memory = 60ULL << 30;
		struct kv_fit f = solve(&in);
		CHECK_U64(f.num_blocks, 30720);
		CHECK_NEAR(f.max_concurrency, 3.75, 1e-12);
		CHECK_U64(f.kv_tokens, 491520);
		CHECK_U64(f.users_whole, 3);
		in.ctx = 128; /* 8 blocks a request: 3840x, capped at 1024 */
		f = solve(&in);
		CHECK_NEAR(f.max_concurrency, 3840, 1e-9);
		CHECK_U64(f.users_whole, 1024);
		in.max_seqs = 100;
		CHECK_U64(solve(&in).users_whole, 100);
		kv_model_free(m);
	}
	/* gpt-oss-20b: 12 sliding (128) and 12 full layers, pages of
	 * 16 x 8 x 128 x 2 = 32768 bytes, one group of each: 60 GiB // 32768
	 * // 12 = 163840 blocks; a request of 131072 tokens needs 8192 full
	 * and ceil(min(127 + 16384, 131072) / 16) + 1 = 1033 sliding */
	if ((m = test_load("gpt-oss-20b"))) {
		struct kv_fit_in in = seed(m, 131072);
		in.server = VLLM;
		in.gpu = "h100-sxm";
		in.kv_memory = 60ULL << 30;
		struct kv_fit f = solve(&in);
		CHECK_U64(f.num_blocks, 163840);
		CHECK_NEAR(f.max_concurrency, 163840.0 / 9225, 1e-12);
		CHECK_U64(f.kv_tokens, (uint64_t)(163840.0 / 9225 * 131072));
		kv_model_free(m);
	}
	/* SGLang's hybrid SWA pools, gpt-oss-20b (12 full and 12 sliding
	 * layers of 2048 bytes a token): T0 = 60 GiB / 49152 = 1310720;
	 * full = floor(T0 x 49152 / (24576 + 0.8 x 24576)) = 1456355 tokens,
	 * sliding 0.8 of it; 32768-token requests are bound by the first */
	if ((m = test_load("gpt-oss-20b"))) {
		struct kv_fit_in in = seed(m, 32768);
		in.server = SGLANG;
		in.kv_memory = 60ULL << 30;
		struct kv_fit f = solve(&in);
		CHECK_U64(f.kv_tokens, 1456355);
		CHECK_NEAR(f.users, 1456355.0 / 32768, 1e-9);
		CHECK_U64(f.users_whole, 44);
		kv_model_free(m);
	}
	/* SGLang's Mamba split (kv_cache_configurator.py,
	 * _handle_max_mamba_cache), Jamba at tp 2: a request's state is 28
	 * layers of a convolution of 4096 channels x 3 columns in bf16 and an
	 * SSM state of 4096 x 16 in float32 (mamba_ssm_dtype): 28 x (24576 +
	 * 262144) = 8028160 bytes. Of 20 GiB, floor(21474836480 x 0.9 / 1.9)
	 * / 8028160 = 1267 slots, one of them padding, the rest to tokens of
	 * 4 attention layers (4 x 4 heads x 256 x 2 = 8192 bytes each):
	 * (21474836480 - 1267 x 8028160) / 8192 = 1379780 tokens; at 32768
	 * tokens 42.11 requests, below the 1266 // 3 = 422 states that may
	 * run (no extra buffer for Jamba) */
	if ((m = test_load("jamba-v0.1"))) {
		struct kv_fit_in in = seed(m, 32768);
		in.server = SGLANG;
		in.tp = 2;
		in.kv_memory = 20ULL << 30;
		struct kv_fit f = solve(&in);
		CHECK_U64(f.bytes_per_token, 8192);
		CHECK_U64(f.kv_tokens, 1379780);
		CHECK_NEAR(f.users, 1379780.0 / 32768, 1e-9);
		CHECK_U64(f.seq_bytes, 32768ULL * 8192 + 8028160);
		/* at 1024 tokens the states bind: 422 */
		in.ctx = 1024;
		CHECK_NEAR(solve(&in).users, 422, 1e-12);
		kv_model_free(m);
	}
	/* Gemma 3 27B: 52 sliding and 10 full layers, 131072-byte pages;
	 * groups of 10 (52 >= 1.5 x 10): 6 sliding groups, one padded, and
	 * 1 full; at 8192 tokens each needs 512 pages, a sliding one 513
	 * (the window and twice 8192 exceed the context) */
	if ((m = test_load("gemma-3-27b"))) {
		struct kv_fit_in in = seed(m, 8192);
		in.server = VLLM;
		in.gpu = "h100-sxm";
		in.kv_memory = 24660452577ULL;
		struct kv_fit f = solve(&in);
		CHECK_U64(f.num_blocks, 24660452577ULL / 131072 / 10);
		CHECK_NEAR(f.max_concurrency, 18814.0 / (6 * 513 + 512), 1e-12);
		kv_model_free(m);
	}
	/* Jamba: 4 attention layers (8 KV heads of 128: 4096 bytes a token)
	 * and 28 Mamba layers of (4 - 1) x 8192 x 2 + 8192 x 16 x 2 = 311296
	 * bytes; the block rises to 16 x ceil(311296 / 65536) = 80 tokens,
	 * pages of 327680; groups of 4: 1 attention, 7 Mamba (2 pages a
	 * request each, prefix caching's align mode) */
	if ((m = test_load("jamba-v0.1"))) {
		struct kv_fit_in in = seed(m, 262144);
		in.server = VLLM;
		in.gpu = "h200";
		in.kv_memory = 35553787832ULL;
		struct kv_fit f = solve(&in);
		CHECK_U64(f.block, 80);
		CHECK_U64(f.num_blocks, 35553787832ULL / 327680 / 4);
		CHECK_NEAR(f.max_concurrency, 27125.0 / (3277 + 14), 1e-12);
		/* vllm@0.27: prefix caching off for hybrids by default
		 * (mamba_cache_mode none), a state's one page a request;
		 * the same block and pool (_align_hybrid_block_size) */
		const struct kv_server *v27;
		CHECK(kv_server_parse("vllm@0.27", &v27) == 0);
		in.server = v27;
		f = solve(&in);
		CHECK_U64(f.block, 80);
		CHECK_U64(f.num_blocks, 27125);
		CHECK_NEAR(f.max_concurrency, 27125.0 / (3277 + 7), 1e-12);
		kv_model_free(m);
	}
	/* DeepSeek-V3's latent: FlashAttention-MLA's 16 on Hopper, FlashMLA's
	 * 64 for fp8, FlashInfer-MLA's 32 on Blackwell */
	if ((m = test_load("deepseek-v3"))) {
		struct kv_fit_in in = seed(m, 8192);
		in.server = VLLM;
		in.tp = 8;
		in.mem = 150ULL * GB;
		in.gpu = "h200";
		CHECK_U64(solve(&in).block, 16);
		in.kv_dtype = KV_DTYPE_FP8;
		CHECK_U64(solve(&in).block, 64);
		in.gpu = "b200";
		CHECK_U64(solve(&in).block, 32);
		kv_model_free(m);
	}
}

/* SGLang's rules worked by hand from its code (python/sglang/srt):
 * kv_cache_configurator.py resolve_max_num_reqs and _handle_max_mamba_cache,
 * model_executor/pool_configurator.py HybridSWAPoolConfigurator,
 * arg_groups/overrides.py (the page of its attention back end). */
static void test_sglang_rules(void)
{
	struct kv_model *m = test_load("llama-3.1-8b");
	if (m) { /* 131072 bytes a token */
		struct kv_fit_in in = seed(m, 16);
		in.server = SGLANG;
		in.gpu = "h100-sxm";
		/* 16 GiB: T = 131072 tokens; at 16 a request 8192 fit, but
		 * max_running_requests = min(clamp(int(T / 16 x 512), 2048,
		 * 4096), T // 2) = 4096 */
		in.kv_memory = 16ULL << 30;
		struct kv_fit f = solve(&in);
		CHECK_U64(f.kv_tokens, 131072);
		CHECK_NEAR(f.max_concurrency, 8192, 1e-9);
		CHECK_U64(f.max_seqs, 4096);
		CHECK_U64(f.users_whole, 4096);
		/* --max-running-requests replaces the estimate, not T // 2 */
		in.max_seqs = 5000;
		CHECK_U64(solve(&in).users_whole, 5000);
		in.max_seqs = 0;
		/* 1000 tokens of cache, requests of one: T // 2 = 500 */
		in.kv_memory = 1000 * 131072ULL;
		in.ctx = 1;
		f = solve(&in);
		CHECK_U64(f.max_seqs, 500);
		CHECK_U64(f.users_whole, 500);
		/* at 32768 tokens: int(131072 / 32768 x 512) = 2048 */
		in.kv_memory = 16ULL << 30;
		in.ctx = 32768;
		f = solve(&in);
		CHECK_U64(f.max_seqs, 2048);
		CHECK_NEAR(f.users, 4, 1e-12);
		/* on a B200 its MHA back end, trtllm_mha, pages by 64: T
		 * floored to 64 tokens, a request of 1000 takes 1024 */
		in.gpu = "b200";
		in.ctx = 1000;
		in.kv_memory = 64ULL << 30;
		f = solve(&in);
		CHECK_U64(f.block, 64);
		CHECK_U64(f.kv_tokens, 524288);
		CHECK_NEAR(f.users, 512, 1e-12);
		in.kv_memory = (64ULL << 30) + 131072ULL * 63;
		CHECK_U64(solve(&in).kv_tokens, 524288);
		kv_model_free(m);
	}
	/* DeepSeek's latent on a B200: flashinfer, pages of 1 */
	if ((m = test_load("deepseek-v2-lite"))) {
		struct kv_fit_in in = seed(m, 1000);
		in.server = SGLANG;
		in.gpu = "b200";
		in.kv_memory = 8ULL << 30;
		CHECK_U64(solve(&in).block, 1);
		kv_model_free(m);
	}
	/* Llama 4 Scout with its vision tower is hybrid SWA, its chunked
	 * layers in the sliding pool: 12 full and 36 chunked layers of
	 * 4096 bytes a token; of 60 GiB, full = floor(64424509440 / (49152
	 * + 0.8 x 147456)) = 385505 tokens and swa int(0.8 x that) =
	 * 308404; a request holds its context in the first and at most the
	 * chunk, 128 decode steps and two pages (8322) in the second */
	if ((m = test_load("llama-4-scout"))) {
		struct kv_fit_in in = seed(m, 32768);
		in.server = SGLANG;
		in.kv_memory = 60ULL << 30;
		struct kv_fit f = solve(&in);
		CHECK_U64(f.kv_tokens, 385505);
		CHECK_NEAR(f.users, 385505.0 / 32768, 1e-9);
		CHECK_U64(f.seq_bytes, 32768ULL * 49152 + 8322ULL * 147456);
		in.ctx = 8192; /* the sliding pool binds */
		CHECK_NEAR(solve(&in).users, 308404.0 / 8192, 1e-9);
		in.ctx = 8300; /* the chunk and the steps between evictions */
		CHECK_NEAR(solve(&in).users, 308404.0 / 8300, 1e-9);
		/* its text model alone (Llama4ForCausalLM) is not hybrid
		 * SWA: one pool, every layer every token */
		snprintf(m->arch, sizeof m->arch, "Llama4ForCausalLM");
		in.ctx = 32768;
		CHECK_U64(solve(&in).kv_tokens, (60ULL << 30) / 196608);
		kv_model_free(m);
	}
	/* NemotronH keeps an extra buffer per running request
	 * (_MAMBA_EXTRA_BUFFER_ARCHS), 5 states each: 27 Mamba layers of a
	 * convolution of 3 x (10240 + 2 x 8 x 128) bf16 values and an SSM
	 * state of 128 x 80 x 128 float32, 143548416 bytes a request; of 20
	 * GiB, floor(20 GiB x 0.9 / 1.9 / that) - 1 = 69 states (a slot is
	 * padding), the other 21474836480 - 70 x 143548416 bytes 697415
	 * tokens of its 4 attention layers (16384 bytes a token); at 16
	 * tokens 69 // 5 = 13 run */
	if ((m = test_load("../tests/configs/nemotron-nano-9b-v2"))) {
		struct kv_fit_in in = seed(m, 16);
		in.server = SGLANG;
		in.kv_memory = 20ULL << 30;
		struct kv_fit f = solve(&in);
		CHECK_U64(f.kv_tokens, 697415);
		CHECK_U64(f.seq_bytes, 16 * 16384 + 143548416ULL);
		CHECK_U64(f.max_seqs, 13);
		CHECK_NEAR(f.users, 13, 1e-12);
		kv_model_free(m);
	}
	/* a vision tower cuts the default fraction (memory_hook.py,
	 * adjust_mem_fraction_for_vlm): Gemma 3 27B's 27 layers of 1152,
	 * 1.4238 times a ViT-L/14's 24 x 1024^2, leave 0.95 x (1 - 0.1 x
	 * 0.4238) of the H200's 0.903; and 100 MiB of its budget go to the
	 * embedding cache (mm_runtime_reservation_gb) */
	if ((m = test_load("gemma-3-27b"))) {
		struct kv_fit_in in = seed(m, 32768);
		in.server = SGLANG;
		in.mem = 150754820096ULL;
		in.reserve = 0;
		in.runtime = true;
		in.weights = 54018692608ULL;
		double ratio = 27 * 1152.0 * 1152 / (24 * 1024.0 * 1024);
		double frac = 0.903 * 0.95 * (1 - 0.1 * (ratio - 1));
		struct kv_fit f = solve(&in);
		CHECK_U64(f.rt.nontorch, 100 << 20);
		CHECK_U64(f.free_kv,
			  (uint64_t)floor((150754820096.0 - (1195 << 20)) *
					  frac) -
				  54018692608ULL - (100 << 20));
		CHECK_U64(f.free_kv, 68690944984ULL);
		/* --mem-fraction-static given: no cut, the reserve kept */
		in.util = 0.9;
		CHECK_U64(solve(&in).free_kv,
			  (uint64_t)floor((150754820096.0 - (1195 << 20)) *
					  0.9) -
				  54018692608ULL - (100 << 20));
		kv_model_free(m);
	}
	/* the budget from the memory free before the weights load: a
	 * launch log of Qwen3-30B-A3B-FP8 on one H100 (SGLang, 2026-08-27)
	 * reads "Load weight begin. avail mem=78.48 GB", weights "mem
	 * usage=29.15 GB", and "#tokens: 392920": 0.830 x (85520809984 -
	 * 1195 MiB) - 29.15 GiB over 98304 bytes a token is 393093, the log's
	 * within the rounding of its figures */
	if ((m = test_load("qwen3-30b-a3b"))) {
		struct kv_fit_in in = seed(m, 40960);
		in.server = SGLANG;
		in.mem = 85520809984ULL;
		in.reserve = 0;
		in.weights = (uint64_t)(29.15 * (1 << 30));
		struct kv_fit f = solve(&in);
		CHECK_U64(f.kv_tokens, 393093);
		CHECK_NEAR((double)f.kv_tokens / 392920, 1, 0.001);
		kv_model_free(m);
	}
}

/* TensorRT-LLM with max_attention_window given: a pool per window
 * (resource_manager/vswa.py, calculate_max_num_blocks_for_vswa; blocks a
 * request needs from kvCacheManager.cpp, getRemainingBlocksToCompletion).
 * Gemma 3 27B, 62 layers of 8192 bytes a token, windows 1024 x 5 and
 * 131072 in turn: 52 layers of 1024 and 10 of the context (32768). */
static void test_trtllm_windows(void)
{
	static const uint64_t gemma[] = {1024, 1024, 1024, 1024, 1024, 131072};
	static const uint64_t one[] = {4096};
	struct kv_model *m = test_load("gemma-3-27b");
	if (!m)
		return;
	struct kv_fit_in in = seed(m, 32768);
	in.server = TRTLLM;
	in.kv_memory = 25463773440ULL;
	/* unset: one pool, every layer the whole context: 1.53 */
	struct kv_fit f = solve(&in);
	CHECK_NEAR(f.users, 25463773440.0 / (62 * 8192.0 * 32768), 1e-9);
	/* half the budget to each window: the 1024 pool's
	 * floor(12731886720 / 425984 / 32) = 934 blocks, a request
	 * ceil(min(32768, 1024 + 8192) / 32) + 1 = 289 of them (T =
	 * min(max_num_tokens, 32767 - 1024)); the context's pool
	 * floor(12731886720 / 81920 / 32) = 4856, 1024 a request */
	in.windows = gemma;
	in.nwindows = 6;
	f = solve(&in);
	CHECK_NEAR(f.users, 934.0 / 289, 1e-12);
	CHECK_U64(f.users_whole, 3);
	CHECK_U64(f.kv_tokens, 4856 * 32);
	CHECK_U64(f.seq_bytes, 289ULL * 32 * 425984 + 1024ULL * 32 * 81920);
	/* at 128K the context's pool binds: 4856 / 4096 */
	in.ctx = 131072;
	CHECK_NEAR(solve(&in).users, 4856.0 / 4096, 1e-12);
	/* one window for every layer: one pool, 1566 blocks, 384 + 1 a
	 * request whatever the context */
	in.windows = one;
	in.nwindows = 1;
	CHECK_NEAR(solve(&in).users, 1566.0 / 385, 1e-12);
	in.ctx = 32768;
	CHECK_NEAR(solve(&in).users, 1566.0 / 385, 1e-12);
	/* a window of the whole context: as unset */
	in.ctx = 4096;
	CHECK_NEAR(solve(&in).users,
		   floor(25463773440.0 / 507904 / 32) / 128, 1e-12);
	/* another engine ignores them */
	in.server = VLLM;
	in.gpu = "h100-sxm";
	CHECK_U64(solve(&in).num_blocks, 25463773440ULL / (16 * 8192) / 10);
	kv_model_free(m);
}

/* Each engine's own memory, modelled term by term (its runtime hook,
 * src/libkv/server_*.c):
 * Llama 3.1 8B (hidden 4096, MLP 14336, vocabulary 128256). A token of
 * the forward pass is 2 x 4096 + 3 x 14336 = 51200 16-bit values. */
static void test_runtime(const struct kv_model *m)
{
	const uint64_t mib = 1 << 20;
	struct kv_fit_in in = seed(m, 8192);
	in.reserve = 0;
	in.runtime = true;
	in.gpu = "h100-sxm";
	/* vLLM on an 80 GB H100: 8192 tokens and 1024 sequences a step
	 * (get_batch_defaults). The forward pass, 8192 x 51200 x 2 =
	 * 838,860,800, is below the sampler's 1024 x 128256 x 14 =
	 * 1,838,678,016. CUDA graphs (profile_cudagraph_memory): capture
	 * sizes up to min(2 x 1024, 512) = 512, that is 1, 2, 4, 31 of 8 to
	 * 248 and 17 of 256 to 512: 51 in each of PIECEWISE and FULL; the
	 * largest's pool 512 x 51200 x 2 = 52,428,800 and 1 MiB for each of
	 * the 2 x 50 others. Non-torch: 160 MiB. */
	in.server = VLLM;
	struct kv_fit f = solve(&in);
	CHECK_U64(f.rt.activation, 838860800ULL);
	CHECK_U64(f.rt.sampler, 1838678016ULL);
	CHECK_U64(f.rt.graphs, 52428800ULL + 100 * mib);
	CHECK_U64(f.rt.nontorch, 160 * mib);
	CHECK_U64(f.runtime, 1838678016ULL + 52428800ULL + 260 * mib);
	CHECK_U64(f.runtime, f.rt.total);
	/* 64 sequences: 64 rows of logits, and the forward pass decides;
	 * graphs up to 128 (19 sizes) in PIECEWISE, up to 64 (11) in FULL:
	 * 128 x 51200 x 2 = 13,107,200 and 18 + 10 MiB */
	in.max_seqs = 64;
	f = solve(&in);
	CHECK_U64(f.rt.sampler, 64ULL * 128256 * 14);
	CHECK_U64(f.rt.graphs, 13107200ULL + 28 * mib);
	CHECK_U64(f.runtime, 838860800ULL + 13107200ULL + 188 * mib);
	in.tp = 2; /* the MLP's width split: 2 x 4096 + 3 x 7168 */
	CHECK_U64(solve(&in).rt.activation, 8192ULL * (8192 + 21504) * 2);
	in.tp = 1;
	in.max_seqs = 0;
	/* on a B200 the graphs go to 1024: 3 + 31 + 49 = 83 sizes; the
	 * step there is 16384 tokens (180 GB, past 160 GiB) */
	in.gpu = "b200";
	in.mem = 180 * GB;
	f = solve(&in);
	CHECK_U64(f.rt.graphs, 1024ULL * 51200 * 2 + 2 * 82 * mib);
	CHECK_U64(f.rt.activation, 16384ULL * 51200 * 2);
	in.gpu = "h100-sxm";
	in.mem = 80 * GB;
	/* TensorRT-LLM: the forward pass of max_num_tokens 8192, graphs of
	 * 34 batch sizes to 128 (128 x 51200 x 2 and 33 MiB), 1833 MiB
	 * outside torch on one GPU; then 0.9 of what is free */
	in.server = TRTLLM;
	in.batched_tokens = 8192;
	f = solve(&in);
	CHECK_U64(f.rt.activation, 838860800ULL);
	CHECK_U64(f.rt.graphs, 13107200ULL + 33 * mib);
	CHECK_U64(f.rt.nontorch, 1833 * mib);
	uint64_t trt = 838860800ULL + 13107200ULL + 1866 * mib;
	CHECK_U64(f.runtime, trt);
	CHECK_U64(f.free_kv, (uint64_t)((80 * GB - 16 * GB - trt) * 0.9));
	in.tp = 2; /* NCCL: 3666 MiB */
	CHECK_U64(solve(&in).rt.nontorch, 3666 * mib);
	in.tp = 1;
	in.batched_tokens = 0;
	/* llama.cpp's compute buffer: its head, 512 x (128256 + 2 x 4096)
	 * x 4 bytes, the 266.50 MiB llama.cpp v0.5.0 logs for this shape
	 * (279,447,552 bytes by its memory breakdown, 2 KiB of positions
	 * more; tests/scripts/vs-node-llama-cpp.sh); nothing else */
	in.server = LLAMACPP;
	f = solve(&in);
	CHECK_U64(f.runtime, 279445504ULL);
	CHECK_U64(f.rt.activation, 279445504ULL);
	CHECK_U64(f.rt.graphs + f.rt.nontorch + f.rt.sampler, 0);
	CHECK_U64(279445504ULL, 266.5 * (1 << 20));
	/* SGLang's fraction leaves room for its own */
	in.server = SGLANG;
	CHECK_U64(solve(&in).runtime, 0);
	/* a --reserve replaces the model; the ideal engine keeps none */
	in.server = LLAMACPP;
	in.reserve = GB;
	CHECK_U64(solve(&in).runtime, 0);
	in.reserve = 0;
	in.server = IDEAL;
	CHECK_U64(solve(&in).runtime, 0);
}

/* llama.cpp's compute buffer where a layer, not the head, peaks: T x
 * (the widest layer's values per token x 4 + each cache's f16 mask row of
 * its cells x 2), against what llama.cpp v0.5.0's CPU build reserves for
 * the same shapes (tests/scripts/vs-node-llama-cpp.sh, n_ubatch T = 512,
 * flash attention). */
static struct kv_fit_in llamacpp_at(const struct kv_model *m, uint64_t ctx)
{
	struct kv_fit_in in = seed(m, ctx);
	in.weights = GB;
	in.reserve = 0;
	in.runtime = true;
	in.server = LLAMACPP;
	return in;
}

static void test_llamacpp_compute(void)
{
	struct kv_model *m = test_load("mistral-7b-v0.1");
	if (m) { /* vocab 32000: the head, 512 x (32000 + 8192) x 4 =
		  * 82,313,216, is below its MLP's 512 x (4 x 14336 + 4096) x
		  * 4 = 125,829,120; one mask, of every cell (llama.cpp keeps
		  * no window for it): 512 x 4096 x 2 = 4,194,304. llama.cpp:
		  * 120.01 MiB at 4K, 148.01 at 32K (this rule 3% above) */
		struct kv_fit_in in = llamacpp_at(m, 4096);
		CHECK_U64(solve(&in).rt.activation, 125829120ULL + 4194304);
		in.ctx = 32768;
		CHECK_U64(solve(&in).rt.activation, 125829120ULL + 33554432);
		kv_model_free(m);
	}
	/* tiny-gemma3 of tests/scripts/gguf_models.py: width 192, 4 heads of
	 * 64 over 2, MLP 384, a window of 512 on five layers of six. A layer:
	 * max(4 x 384 + 192, 4 x 256 + 2 x 128) = 1728 values a token, 512 x
	 * 1728 x 4 = 3,538,944; the masks of the full cache (4096 cells) and
	 * the sliding one (pad256(512 + 512) = 1024), 512 x 5120 x 2 =
	 * 5,242,880. llama.cpp: 8,935,424 (8.52 MiB; 1.7% more) */
	m = test_parse("{\"model_type\": \"gemma3_text\", \"hidden_size\": 192,"
		       "\"num_attention_heads\": 4, \"num_key_value_heads\": 2,"
		       "\"head_dim\": 64, \"intermediate_size\": 384,"
		       "\"num_hidden_layers\": 6, \"vocab_size\": 512,"
		       "\"sliding_window\": 512, \"sliding_window_pattern\": 6,"
		       "\"max_position_embeddings\": 32768}");
	struct kv_fit_in in = llamacpp_at(m, 4096);
	CHECK_U64(solve(&in).rt.activation, 3538944ULL + 5242880);
	/* --swa-full: the sliding cache as large as the full one, and its
	 * mask: 512 x 8192 x 2. llama.cpp (gemma2's shape, 2048 x 3
	 * streams): within 2% */
	in.swa_full = true;
	CHECK_U64(solve(&in).rt.activation, 3538944ULL + 8388608);
	kv_model_free(m);
	/* tiny-qwen3: heads of 128 on a width of 256 (4 over 4), MLP 512:
	 * the attention is the wider, 4 x 512 + 2 x 512 = 3072 values, 512 x
	 * 3072 x 4 = 6,291,456, and one mask of 4,194,304. llama.cpp:
	 * 10,500,096 (14,336 bytes of token ids, positions and cache indexes
	 * more) */
	m = test_parse("{\"model_type\": \"qwen3\", \"hidden_size\": 256,"
		       "\"num_attention_heads\": 4, \"num_key_value_heads\": 4,"
		       "\"head_dim\": 128, \"intermediate_size\": 512,"
		       "\"num_hidden_layers\": 3, \"vocab_size\": 512,"
		       "\"max_position_embeddings\": 8192}");
	in = llamacpp_at(m, 4096);
	CHECK_U64(solve(&in).rt.activation, 6291456ULL + 4194304);
	kv_model_free(m);
	/* tiny-qwen3moe: 8 experts of 128, 2 a token: 4 x 256 + 256 = 1280
	 * values, as its attention (4 x 256 + 2 x 128); 512 x 1280 x 4 =
	 * 2,621,440 and the mask. llama.cpp: 7,354,368 (7% more: ggml's
	 * layout of the experts' products) */
	m = test_parse("{\"model_type\": \"qwen3_moe\", \"hidden_size\": 256,"
		       "\"num_attention_heads\": 4, \"num_key_value_heads\": 2,"
		       "\"head_dim\": 64, \"intermediate_size\": 512,"
		       "\"moe_intermediate_size\": 128, \"num_experts\": 8,"
		       "\"num_experts_per_tok\": 2, \"num_hidden_layers\": 2,"
		       "\"vocab_size\": 512,"
		       "\"max_position_embeddings\": 8192}");
	in = llamacpp_at(m, 4096);
	CHECK_U64(solve(&in).rt.activation, 2621440ULL + 4194304);
	kv_model_free(m);
}

/* The ideal per-sequence bytes are layout's kv_model_bytes plus state. */
static void test_layout_agrees(void)
{
	static const char *const names[] = {"gemma-2-9b", "gpt-oss-20b",
					    "deepseek-v3", "jamba-v0.1",
					    "llama-4-scout", "openelm-270m",
					    NULL};
	for (const char *const *n = names; *n; n++) {
		struct kv_model *m = test_load(*n);
		if (!m)
			continue;
		char err[KV_ERRLEN];
		struct kv_fit_in in = seed(m, 100000);
		in.kv_dtype = m->dtype;
		in.mem = 10000 * GB;
		struct kv_opts o = kv_opts_default(m);
		uint64_t kv, st;
		CHECK(kv_model_bytes(m, &o, 100000, 1, &kv, err) == 0);
		CHECK(kv_model_state_bytes(m, &o, 1, &st) == 0);
		CHECK_U64(solve(&in).seq_bytes, kv + st);
		kv_model_free(m);
	}
}

static void test_moe(void)
{
	struct kv_model *m = test_load("mixtral-8x7b");
	if (!m)
		return;
	struct kv_params p;
	char err[KV_ERRLEN];
	CHECK(kv_model_params(m, &p, err) == 0);
	struct kv_fit_in in = seed(m, 4096);
	in.weights = 0;
	in.mem = 200 * GB;
	in.reserve = 0;
	in.users = 1; /* one token reads 2 of 8 experts: the active params */
	struct kv_fit f = solve(&in);
	CHECK_U64(f.step_weight_bytes, 2 * p.active);
	in.users = 64; /* 64 tokens touch nearly every expert */
	f = solve(&in);
	CHECK_NEAR((double)f.step_weight_bytes / (2.0 * p.total), 1, 1e-6);

	/* weights that miss: an answer, not an error */
	in = seed(m, 4096);
	in.weights = 0;
	f = solve(&in);
	CHECK_U64(f.users_whole, 0);
	CHECK_NEAR(f.users, 0, 0);
	CHECK_U64(f.missing, 2 * p.total + 6 * GB - 80 * GB);
	CHECK_U64(f.free_kv, 0);
	uint32_t tp;
	CHECK(kv_fit_solve_tp(&in, 1, 32, &tp, err) == 0);
	CHECK_U64(tp, 2);
	CHECK(kv_fit_solve_tp(&in, 1000000, 32, &tp, err) == 0);
	CHECK_U64(tp, 0);
	kv_model_free(m);
}

/* DeepSeek V3.2's sparse attention: a sequence keeps every latent and
 * indexer key, but a step reads all the keys and only index_topk latents.
 * Two layers, latent 32 + 8 (80 B in bf16), key of 64 (68 B), top 16. */
static void test_sparse(void)
{
	static const char json[] =
		"{\"model_type\":\"deepseek_v32\",\"num_hidden_layers\":2,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"kv_lora_rank\":32,\"qk_rope_head_dim\":8,"
		"\"index_head_dim\":64,\"index_n_heads\":2,"
		"\"index_topk\":16,\"torch_dtype\":\"bfloat16\"}";
	struct kv_model *m = NULL;
	char err[KV_ERRLEN];
	if (kv_model_parse(json, sizeof json - 1, "t.json", &m, err)) {
		CHECK_STR(err, "");
		return;
	}
	struct kv_fit_in in = seed(m, 100);
	in.weights = GB;
	in.users = 3;
	struct kv_fit f = solve(&in);
	CHECK_U64(f.seq_bytes, 2 * (80 + 68) * 100);
	CHECK_U64(f.step_kv_bytes, 3 * 2 * (68 * 100 + 80 * 16));
	in.ctx = 10; /* under index_topk: every row read */
	f = solve(&in);
	CHECK_U64(f.step_kv_bytes, 3 * 2 * (80 + 68) * 10);
	kv_model_free(m);
}

/* users as kvfit shows them: rounded to 0.01 (the seed's 54.0167 is
 * 54.02), but never up to a sequence that does not fit */
/*
 * A workload's requests hold isl + osl tokens, fewer than the engine's
 * limit (max_model_len 32,768): vLLM pages its cache and admits a request
 * by the pages it holds (vllm/v1/core/sched/scheduler.py: allocate_slots
 * for the tokens computed, not max_model_len), so as many fit as pages of
 * 1,200 tokens: 27,465 blocks (test_engines' pool) over 75 pages,
 * 366.2; the pool's tokens stay 27,465 x 16. vLLM will not start where a
 * request of the whole limit does not fit (_check_enough_kv_cache_memory):
 * at 500,000 tokens (31,250 pages) none is served, though 1,200 would fit.
 * llama.cpp's slots are its context over --parallel whatever a request
 * holds: its count is the context's.
 */
static void test_seq_ctx(const struct kv_model *m)
{
	struct kv_fit_in in = seed(m, 32768);
	in.reserve = 0;
	in.server = VLLM;
	in.seq_ctx = 1200;
	struct kv_fit f = solve(&in);
	CHECK_U64(f.num_blocks, 27465);
	CHECK_U64(f.kv_tokens, 27465ULL * 16);
	CHECK_NEAR(f.users, 27465.0 / 75, 1e-9);
	CHECK_U64(f.users_whole, 366);
	CHECK_U64(kv_fit_seq(&in), 1200);
	in.seq_ctx = 0;
	CHECK_U64(solve(&in).users_whole, 13); /* 27,465 / 2,048 pages */
	in.ctx = 500000;
	in.seq_ctx = 1200;
	CHECK_U64(solve(&in).users_whole, 0);
	in.ctx = 1000; /* seq_ctx beyond the limit: the limit */
	CHECK_U64(kv_fit_seq(&in), 1000);
}

static void test_users_shown(void)
{
	CHECK_NEAR(kv_fit_users_shown(58e9 / (131072.0 * 8192)), 54.02, 1e-9);
	CHECK_NEAR(kv_fit_users_shown(17.999), 17.99, 1e-9);
	CHECK_NEAR(kv_fit_users_shown(17.995), 17.99, 1e-9);
	CHECK_NEAR(kv_fit_users_shown(0.996), 0.99, 1e-9);
	CHECK_NEAR(kv_fit_users_shown(3), 3, 1e-9);
	CHECK_NEAR(kv_fit_users_shown(2.994), 2.99, 1e-9);
}

int main(void)
{
	test_users_shown();
	test_engine_rules();
	test_sglang_rules();
	test_trtllm_windows();
	struct kv_model *m = test_load("llama-3.1-8b");
	if (!m)
		return 1;
	test_seed(m);
	test_engines(m);
	test_runtime(m);
	test_llamacpp_compute();
	test_parallel(m);
	test_prefix(m);
	test_seq_ctx(m);
	kv_model_free(m);
	test_window();
	test_chunked();
	test_layout_agrees();
	test_moe();
	test_sparse();
	return test_done("fit");
}
