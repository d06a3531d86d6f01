/*
 * test_offload.c - a host tier of KV and the prompt's hits against
 * hand-worked counts from the engines' code: vLLM's CPUOffloadingSpec
 * (cpu bytes // (page x layers x world size) blocks), SGLang's
 * HostKVCache (size // page + 1 pages, or a ratio of its GPU pool),
 * TensorRT-LLM's secondary pool of whole blocks; hits in whole pages,
 * never the last token, loaded over the host link; what they do to a
 * request's time to first token.
 */
#include <math.h>

#include "kv/fit.h"
#include "kv/offload.h"
#include "kv/serve.h"
#include "test.h"
#include "fit_solve.h"

#define IDEAL kv_server_get(KV_SERVER_IDEAL)
#define VLLM kv_server_get(KV_SERVER_VLLM)
#define SGLANG kv_server_get(KV_SERVER_SGLANG)
#define TRTLLM kv_server_get(KV_SERVER_TRTLLM)
#define LLAMACPP kv_server_get(KV_SERVER_LLAMACPP)
#define GIB (1ULL << 30)

/* Llama 3.1 8B on an H100 SXM: 131,072 B a token (bf16). */
static struct kv_fit_in row(const struct kv_model *m,
			    const struct kv_server *sv,
			    const struct kv_offload *o)
{
	return (struct kv_fit_in){.m = m, .kv_dtype = KV_DTYPE_BF16,
				  .w_dtype = KV_DTYPE_BF16,
				  .mem = 85520809984ULL, .runtime = true,
				  .tp = 1, .pp = 1, .ctx = 8192, .server = sv,
				  .gpu = "h100-sxm", .bandwidth_gbps = 3350,
				  .tflops = 989.4, .offload = o};
}

static uint64_t tokens(const struct kv_fit_in *in)
{
	struct kv_fit f = solve(in);
	uint64_t t, b;
	kv_offload_tier(in, &f, &t, &b);
	CHECK_U64(b, t * f.bytes_per_token);
	return t;
}

/*
 * 64 GiB of host memory a GPU: 68,719,476,736 / 131,072 = 524,288 tokens
 * in every engine (a whole number of 16- and 32-token pages), SGLang's a
 * page more. 10 GB: 76,293.9 tokens: vLLM 4,768 blocks of 16 (76,288),
 * TensorRT-LLM 2,384 of 32 (76,288), SGLang 76,293 + 1, the ideal
 * engine 76,293. vLLM's --kv-offloading-size is over every rank: 64 GiB
 * at tp 2 is 32 GiB a rank of 65,536 B a token, 524,288 tokens.
 */
static void tiers(const struct kv_model *m)
{
	struct kv_offload o = {.bytes = 64 * GIB};
	struct kv_fit_in in = row(m, VLLM, &o);
	CHECK_U64(tokens(&in), 524288);
	in.server = SGLANG;
	CHECK_U64(tokens(&in), 524289);
	in.server = TRTLLM;
	CHECK_U64(tokens(&in), 524288);
	o.bytes = 10000000000ULL;
	in.server = VLLM;
	CHECK_U64(tokens(&in), 76288);
	in.server = TRTLLM;
	CHECK_U64(tokens(&in), 76288);
	in.server = SGLANG;
	CHECK_U64(tokens(&in), 76294);
	in.server = IDEAL;
	CHECK_U64(tokens(&in), 76293);
	o = (struct kv_offload){.bytes = 64 * GIB, .total = true};
	in.server = VLLM;
	in.tp = 2;
	CHECK_U64(tokens(&in), 524288);
	/* SGLang's --hicache-ratio 2: twice its GPU pool, a page more */
	o = (struct kv_offload){.ratio = 2};
	in = row(m, SGLANG, &o);
	struct kv_fit f = solve(&in);
	CHECK_U64(tokens(&in), 2 * f.kv_tokens + 1);
	/* none asked: none */
	in.offload = NULL;
	CHECK_U64(tokens(&in), 0);
}

/*
 * Hits: half of a 4,096-token prompt is 2,048 in every engine; 30% of
 * 1,000 is 300, 288 in vLLM's 16-token blocks and TensorRT-LLM's 32; all
 * of it is 999 (the last token is computed), 992 in blocks of 16. A tier
 * of 1 MiB holds 8 tokens: no vLLM block, SGLang's 8 + 1. 2,048 tokens
 * of 131,072 B over an H100's PCIe 5.0 (64 GB/s) load in 4.194304 ms.
 */
static void hits(const struct kv_model *m)
{
	struct kv_offload o = {.hit = 0.5, .hit_given = true,
			       .link_gbps = 64};
	struct kv_fit_in in = row(m, VLLM, &o);
	struct kv_fit f = solve(&in);
	CHECK_U64(kv_offload_hit(&in, &f, 4096), 2048);
	CHECK_NEAR(kv_offload_load_ms(&in, &f, 2048), 0, 0); /* no tier */
	o.hit = 0.3;
	CHECK_U64(kv_offload_hit(&in, &f, 1000), 288);
	o.hit = 1;
	CHECK_U64(kv_offload_hit(&in, &f, 1000), 992);
	CHECK_U64(kv_offload_hit(&in, &f, 1), 0);
	in.server = TRTLLM;
	f = solve(&in);
	o.hit = 0.3;
	CHECK_U64(kv_offload_hit(&in, &f, 1000), 288);
	in.server = SGLANG;
	f = solve(&in);
	CHECK_U64(kv_offload_hit(&in, &f, 1000), 300);
	o.hit = 0.5;
	o.bytes = 1ULL << 20;
	CHECK_U64(kv_offload_hit(&in, &f, 4096), 9);
	in.server = VLLM;
	f = solve(&in);
	CHECK_U64(kv_offload_hit(&in, &f, 4096), 0);
	o.bytes = 64 * GIB;
	CHECK_U64(kv_offload_hit(&in, &f, 4096), 2048);
	CHECK_NEAR(kv_offload_load_ms(&in, &f, 2048), 4.194304, 1e-9);
	o.link_gbps = 0;
	CHECK(isnan(kv_offload_load_ms(&in, &f, 2048)));
	o.hit_given = false;
	CHECK_U64(kv_offload_hit(&in, &f, 4096), 0);
}

/*
 * The time: a prompt of 4,096 with 2,048 cached prefills its other
 * 2,048, reading the cached ones. vLLM waits for the load before the
 * prefill (ttft grows by it); SGLang loads layer by layer beside it
 * (nothing more where the load is the shorter).
 */
static void times(const struct kv_model *m)
{
	char err[KV_ERRLEN];
	struct kv_serve_in w = {.isl = 4096, .osl = 256, .users = 16};
	struct kv_serve a, b, c;
	struct kv_fit_in in = row(m, VLLM, NULL);
	CHECK(kv_serve_solve(&in, &w, &a, err) == 0);
	w.cached = 2048;
	CHECK(kv_serve_solve(&in, &w, &b, err) == 0);
	CHECK(b.prefill.ms < a.prefill.ms);
	CHECK_U64(b.chunks, 1);
	CHECK_NEAR(b.load_wait_ms, 0, 0);
	w.load_ms = 4.194304;
	CHECK(kv_serve_solve(&in, &w, &c, err) == 0);
	CHECK_NEAR(c.load_wait_ms, 4.194304, 1e-12);
	CHECK_NEAR(c.ttft_ms - b.ttft_ms, 4.194304, 1e-9);
	CHECK_NEAR(c.latency_ms - b.latency_ms, 4.194304, 1e-9);
	CHECK_NEAR(c.prefill.ms, b.prefill.ms, 0);
	w.load_overlaps = true;
	in.server = SGLANG;
	CHECK(kv_serve_solve(&in, &w, &c, err) == 0);
	CHECK_NEAR(c.load_wait_ms, 0, 0); /* under a prefill of ~45 ms */
	w.load_ms = 1000;
	CHECK(kv_serve_solve(&in, &w, &c, err) == 0);
	CHECK_NEAR(c.load_wait_ms, 1000 - c.prefill.ms, 1e-9);
	/* a burst's requests each wait for theirs */
	w.arrivals = KV_ARRIVE_BURST;
	w.prompts = 32;
	w.load_overlaps = false;
	w.load_ms = 0;
	in.server = VLLM;
	CHECK(kv_serve_solve(&in, &w, &b, err) == 0);
	w.load_ms = 5;
	CHECK(kv_serve_solve(&in, &w, &c, err) == 0);
	CHECK_NEAR(c.ttft_ms - b.ttft_ms, 5, 1e-9);
}

static void refusals(const struct kv_model *m)
{
	char err[KV_ERRLEN];
	struct kv_offload o = {.bytes = GIB};
	struct kv_fit_in in = row(m, LLAMACPP, &o);
	CHECK(kv_offload_refuses(&in, err));
	CHECK_STR(err, "llamacpp: --kv-offload: llama.cpp keeps no host "
		       "tier of KV cache");
	o = (struct kv_offload){.ratio = 2};
	in.server = VLLM;
	CHECK(kv_offload_refuses(&in, err));
	CHECK_STR(err, "vllm: --hicache-ratio: SGLang's, a host tier the "
		       "ratio of its GPU pool; vLLM takes a size "
		       "(--kv-offloading-size, its OffloadingConnector): give "
		       "--kv-offload SIZE");
	in.server = SGLANG;
	CHECK(!kv_offload_refuses(&in, err));
	/* hits alone ask no tier: every engine's own prefix cache */
	o = (struct kv_offload){.hit = 0.5, .hit_given = true};
	in.server = LLAMACPP;
	CHECK(!kv_offload_refuses(&in, err));

	struct kv_model *g = test_load("gemma-2-9b");
	if (!g)
		return;
	o = (struct kv_offload){.bytes = GIB};
	in = row(g, VLLM, &o);
	CHECK(kv_offload_refuses(&in, err));
	CHECK_STR(err, "vllm: --kv-offload: vLLM offloads one KV cache group "
		       "(CPUOffloadingSpec: one block size), and gemma-2-9b "
		       "has sliding-window layers");
	in.server = SGLANG;
	CHECK(kv_offload_refuses(&in, err));
	CHECK_STR(err, "sglang: --kv-offload: SGLang's host tier of "
		       "sliding-window layers (gemma-2-9b's) is not modelled");
	in.server = IDEAL;
	CHECK(!kv_offload_refuses(&in, err));
	kv_model_free(g);
}

int main(void)
{
	struct kv_model *m = test_load("llama-3.1-8b");
	if (!m)
		return 1;
	tiers(m);
	hits(m);
	times(m);
	refusals(m);
	kv_model_free(m);
	return test_done("offload");
}
