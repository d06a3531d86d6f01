/*
 * test_serve.c - the time model against hand-worked shapes: a dense
 * model at tensor parallelism 1 and 8, a prompt in chunks beside running
 * decodes, a mixture of experts, a latent-attention model; the cost per
 * token, the latency targets and the refusals.
 *
 * Llama 3.1 8B on one rank, per token (test_fit's figures): products
 * 2 x 6,979,584,000 FLOPs, the head 2 x 128,256 x 4,096, attention
 * 2 x 32 heads x (128 + 128) x 32 layers = 524,288 FLOPs per token read,
 * 131,072 KV bytes per token; 16 GB of weights; an H100 SXM's
 * 3,350 GB/s and 989.5 TFLOP/s. A step looks its tokens up in the input
 * embedding (128,256 x 4,096 of the 8,030,261,248 parameters, so
 * 1,046,713,793 of the 16 GB) and reads the other 14,953,286,207 B.
 */
#include <math.h>

#include "kv/eff.h"
#include "kv/params.h"
#include "kv/serve.h"
#include "test.h"

#define GB 1000000000ULL
#define LIN (2 * 6979584000.0)
#define HEAD (2 * 128256.0 * 4096)
#define ATT(L) (524288.0 * (L))
#define KVT 131072.0
#define W 14953286207.0
#define BW 3.35e12
#define PEAK 989.5e12

static struct kv_fit_in llama(const struct kv_model *m)
{
	return (struct kv_fit_in){.m = m, .kv_dtype = KV_DTYPE_BF16,
				  .w_dtype = KV_DTYPE_BF16, .weights = 16 * GB,
				  .mem = 80 * GB, .tp = 1, .pp = 1,
				  .ctx = 8192, .server = kv_server_get(KV_SERVER_IDEAL),
				  .bandwidth_gbps = 3350, .tflops = 989.5};
}

static struct kv_serve run(const struct kv_fit_in *in,
			   const struct kv_serve_in *w)
{
	char err[KV_ERRLEN];
	struct kv_serve s;
	int e = kv_serve_solve(in, w, &s, err);
	if (e)
		fprintf(stderr, "serve: %s\n", err);
	CHECK(e == 0);
	return s;
}

#define CHECK_REL(a, b) CHECK_NEAR((a), (b), fabs((double)(b)) * 1e-12)

/* One user, 1,024 prompt tokens, 256 out, the ideal engine: the prompt
 * in one step, each decode step at 1,024 + 128 tokens. */
static void test_dense(const struct kv_model *m)
{
	struct kv_fit_in in = llama(m);
	struct kv_serve_in w = {.isl = 1024, .osl = 256, .users = 1};
	struct kv_serve s = run(&in, &w);
	CHECK_U64(s.decode_ctx, 1152);
	/* decode: weights, 1,152 tokens read, one written */
	CHECK_REL(s.decode.bytes, W + KVT * 1152 + KVT);
	CHECK_REL(s.decode.flops, LIN + HEAD + ATT(1152));
	CHECK_REL(s.decode.mem_ms, 15104412223.0 / BW * 1e3);
	CHECK_REL(s.tpot_ms, 4.508779768059702);
	CHECK(strcmp(s.decode.bound, "memory") == 0);
	CHECK_NEAR(s.decode.link_ms, 0, 0);
	/* prefill: 1,024 tokens' products, the head once, each token's
	 * attention at the mean position 512, 1,024 tokens written */
	CHECK_U64(s.chunk, 1024);
	CHECK_U64(s.chunks, 1);
	CHECK_REL(s.prefill.bytes, W + 1024 * KVT);
	CHECK_REL(s.prefill.flops, 1024 * LIN + HEAD + 1024 * ATT(512));
	CHECK_REL(s.ttft_ms, 14570116612096.0 / PEAK * 1e3); /* 14.72 ms */
	CHECK(strcmp(s.prefill.bound, "compute") == 0);
	CHECK_REL(s.latency_ms, s.ttft_ms + 255 * s.tpot_ms); /* 1,244 */
	CHECK_REL(s.tokens_per_s, 256 / s.latency_ms * 1e3); /* 205.8 */
	CHECK_REL(s.tokens_per_s_gpu, s.tokens_per_s);

	/* efficiencies scale their term only */
	w.bw_eff = 0.5;
	w.flops_eff = 0.25;
	s = run(&in, &w);
	CHECK_REL(s.tpot_ms, 2 * 4.508779768059702);
	CHECK_REL(s.ttft_ms, 4 * 14570116612096.0 / PEAK * 1e3);

	/* 300 users at a quarter of the FLOP rate: the products wait on
	 * their 300 x (LIN + HEAD) = 4,502,952,345,600 FLOPs (18.203 ms),
	 * then attention on the caches, 300 x 1,153 tokens' 45,337,804,800
	 * B (13.534 ms); one roofline over the whole step would say
	 * 18.935 ms, the FLOPs' */
	w.users = 300;
	w.bw_eff = 1;
	s = run(&in, &w);
	CHECK_REL(s.decode.flops, 300 * (LIN + HEAD + ATT(1152)));
	CHECK_REL(s.decode.ms, 4502952345600.0 / (PEAK / 4) * 1e3 +
				       300 * 1153 * KVT / BW * 1e3);
	CHECK_NEAR(s.decode.ms, 31.736, 1e-3);
	CHECK(strcmp(s.decode.bound, "compute") == 0);

	/* a serial fraction of 0.5: the products' reads, 4.4637 ms, half
	 * of them after the FLOPs, 2.2318 ms more */
	double full = s.decode.ms;
	w.serial = 0.5;
	s = run(&in, &w);
	CHECK_REL(s.decode.ms, full + 0.5 * W / BW * 1e3);
	/* a decode rate of its own: at a fifth of the peak (197.9 TFLOP/s)
	 * the products take 22.754 ms; the prompt keeps a quarter */
	w.dec_tflops = 197.9;
	struct kv_serve own = run(&in, &w);
	CHECK_REL(own.decode.ms, 4502952345600.0 / 197.9e12 * 1e3 +
					 0.5 * W / BW * 1e3 +
					 300 * 1153 * KVT / BW * 1e3);
	CHECK_REL(own.prefill.ms, s.prefill.ms);
	/* both found again from the times of 4 and of 300 users */
	w.users = 4;
	double ms4 = run(&in, &w).decode.ms;
	w.serial = w.dec_tflops = 0;
	double serial, tflops;
	char err[KV_ERRLEN];
	CHECK(kv_serve_fit_decode(&in, &w, 4, ms4, 300, own.decode.ms,
				  &serial, &tflops, err) == 0);
	CHECK_NEAR(serial, 0.5, 1e-6);
	CHECK_NEAR(tflops, 197.9, 197.9 * 1e-6);
	/* a larger share means a faster rate for the step of 4, and a
	 * faster step of 300: one faster than any share allows takes 1,
	 * one slower 0 */
	CHECK(kv_serve_fit_decode(&in, &w, 4, ms4, 300, 10, &serial,
				  &tflops, err) == 0);
	CHECK_NEAR(serial, 1, 0);
	CHECK(kv_serve_fit_decode(&in, &w, 4, ms4, 300, 1000, &serial,
				  &tflops, err) == 0);
	CHECK_NEAR(serial, 0, 0);
	/* a step of 4 faster than its reads and caches alone (4.5 ms
	 * against 4.4637 + 0.1804): its FLOPs do not show, neither term
	 * is measured */
	double bare = 4.5;
	CHECK(kv_serve_fit_decode(&in, &w, 4, bare, 300, own.decode.ms,
				  &serial, &tflops, err) == 0);
	CHECK_NEAR(serial, 0, 0);
	CHECK_NEAR(tflops, 0, 0);
	w.users = 300;
	/* one token's FLOPs hide under its reads: one user's step is as
	 * without it */
	w.users = 1;
	full = run(&in, &w).decode.ms;
	w.serial = 1;
	w.dec_tflops = 1e-3;
	CHECK_REL(run(&in, &w).decode.ms, full);
}

/*
 * Three users, a prompt of 1,200, --max-num-batched-tokens 512: each
 * prefill step carries the two other users' decode tokens, so the prompt
 * goes in chunks of 510, 510 and 180. Decodes at 1,200 + 1 = 1,201.
 * Each step is the products, then attention, each its own roofline.
 * Chunk 1: the products of 512 tokens and the head for 3,
 * 7,150,246,035,456 FLOPs (7.226 ms) against the weights (4.464 ms);
 * attention of 510 tokens at 255 and of 2 at 1,201, 69,442,994,176
 * FLOPs (0.070 ms) against two caches of 1,201 and 512 tokens written,
 * 381,943,808 B (0.114 ms): 7.340 ms. Chunk 2 also reads the first 510
 * tokens' cache and attends at 765: 205,810,302,976 FLOPs (0.208 ms)
 * against 448,790,528 B (0.134 ms), 7.434 ms. Chunk 3 (182 tokens,
 * attention at 1,110, 1,020 tokens read): the weights (4.464 ms) against
 * 2,543,720,595,456 FLOPs (2.571 ms), then 472,383,488 B (0.141 ms)
 * against 106,012,082,176 FLOPs (0.107 ms): 4.605 ms, memory-bound.
 */
static void test_chunks(const struct kv_model *m)
{
	struct kv_fit_in in = llama(m);
	in.batched_tokens = 512;
	struct kv_serve_in w = {.isl = 1200, .osl = 2, .users = 3};
	struct kv_serve s = run(&in, &w);
	CHECK_U64(s.chunk, 510);
	CHECK_U64(s.chunks, 3);
	CHECK_U64(s.decode_ctx, 1201);
	double f1 = 512 * LIN + 3 * HEAD + 510 * ATT(255) + 2 * ATT(1201);
	CHECK_REL(f1, 7219689029632.0);
	double b3 = W + 2 * KVT * 1201 + KVT * 1020 + 182 * KVT;
	CHECK_REL(b3, 15425669695.0);
	CHECK_NEAR(s.prefill.ms, 7.226120298591208 + 0.11401307701492537 +
					 7.226120298591208 + 0.2079942425224861 +
					 4.463667524477612 + 0.14100999641791043,
		   1e-9);
	CHECK_NEAR(s.prefill.ms, 19.378925437615347, 1e-9);
	/* and it waits half a step of the others */
	CHECK_REL(s.wait_ms, s.decode.ms / 2);
	CHECK(strcmp(s.prefill.bound, "compute") == 0);
	/* the decode step of three */
	CHECK_REL(s.decode.bytes, W + 3 * KVT * 1201 + 3 * KVT);
	CHECK_REL(s.decode.flops, 3 * (LIN + HEAD + ATT(1201)));
	CHECK_NEAR(s.decode.ms, 4.604755772835821, 1e-9);
}

/*
 * SGLang chunks a prompt by its chunked_prefill_size, 8,192 tokens on an
 * 80 GB GPU (arg_groups/memory_hook.py, handle_gpu_memory_settings:
 * below 160 GiB),
 * and runs each chunk in a step of its own (--enable-mixed-chunk is off
 * by default): a prompt of 10,000 beside two running users goes in 8,192
 * and 1,808, each with the head once and no decode, where vLLM's steps
 * of 8,192 carry the two decodes (8,190, then 1,810).
 */
static void test_sglang(const struct kv_model *m)
{
	struct kv_fit_in in = llama(m);
	in.ctx = 10240;
	in.server = kv_server_get(KV_SERVER_SGLANG);
	struct kv_serve_in w = {.isl = 10000, .osl = 2, .users = 3};
	struct kv_serve s = run(&in, &w);
	CHECK_U64(s.chunk, 8192);
	CHECK_U64(s.chunks, 2);
	/* chunk 1 attends at 4,096, chunk 2 (after 8,192) at 9,096 */
	CHECK_REL(s.prefill.flops, 10000 * LIN + 2 * HEAD + 8192 * ATT(4096) +
					   1808 * ATT(9096));
	/* the weights twice, 10,000 tokens written, the first 8,192 read
	 * again by the second chunk */
	CHECK_REL(s.prefill.bytes, 2 * W + 10000 * KVT + 8192 * KVT);
	in.server = kv_server_get(KV_SERVER_VLLM);
	s = run(&in, &w);
	CHECK_U64(s.chunk, 8190);
	CHECK_U64(s.chunks, 2);
	/* a B200's 180 GB: 16,384, the prompt in one step */
	in.server = kv_server_get(KV_SERVER_SGLANG);
	in.mem = 180 * GB;
	s = run(&in, &w);
	CHECK_U64(s.chunk, 10000);
	CHECK_U64(s.chunks, 1);
}

/*
 * TensorRT-LLM runs a prompt in one step and refuses one above its
 * max_num_tokens (8,192); with enable_chunked_prefill it cuts it in
 * multiples of tokens_per_block, 32, its chunk unit
 * (_torch/pyexecutor/py_executor_creator.py, ContextChunkingConfig): a
 * prompt of 10,000 beside two running users takes 8,190 - 8,190 % 32 =
 * 8,160 tokens a step, then the 1,840 left.
 */
static void test_trtllm_chunked(const struct kv_model *m)
{
	struct kv_fit_in in = llama(m);
	in.ctx = 10240;
	in.server = kv_server_get(KV_SERVER_TRTLLM);
	struct kv_serve_in w = {.isl = 10000, .osl = 2, .users = 3};
	w.chunked = true;
	struct kv_serve s = run(&in, &w);
	CHECK_U64(s.chunk, 8160);
	CHECK_U64(s.chunks, 2);
	/* 64 tokens a block: 8,128 */
	in.block = 64;
	s = run(&in, &w);
	CHECK_U64(s.chunk, 8128);
	/* vLLM chunks anyway, the switch changes nothing */
	in.block = 0;
	in.server = kv_server_get(KV_SERVER_VLLM);
	s = run(&in, &w);
	CHECK_U64(s.chunk, 8190);
}

/*
 * TensorRT-LLM's chunk unit is 256 where a layer's window is shorter than
 * the context (py_executor_creator.py: max(256, tokens_per_block) when
 * max_seq_len passes the least max_attention_window): Gemma 2's windows
 * of 4,096 at a context of 10,240 cut 8,190 to 31 x 256 = 7,936, the
 * 2,064 left after it a chunk of their own; at a context of 4,096 the
 * window holds it all and 32 is the unit again: a step of 2,048 beside
 * two decodes takes 2,016 of a prompt there, 1,792 at 10,240.
 */
static void test_trtllm_chunk_window(void)
{
	struct kv_model *g = test_load("gemma-2-9b");
	if (!g)
		return;
	struct kv_fit_in in = llama(g);
	in.weights = 18 * GB;
	in.ctx = 10240;
	in.server = kv_server_get(KV_SERVER_TRTLLM);
	struct kv_serve_in w = {.isl = 10000, .osl = 2, .users = 3,
				.chunked = true};
	struct kv_serve s = run(&in, &w);
	CHECK_U64(s.chunk, 7936);
	CHECK_U64(s.chunks, 2);
	in.ctx = 4096;
	w.isl = 4000;
	CHECK_U64(run(&in, &w).chunk, 4000); /* under the budget: whole */
	w.isl = 4090;
	in.batched_tokens = 2048;
	CHECK_U64(run(&in, &w).chunk, 2016); /* 2,046 cut to 63 x 32 */
	in.ctx = 10240;
	CHECK_U64(run(&in, &w).chunk, 1792); /* and to 7 x 256 */
	kv_model_free(g);
}

/*
 * The steady state of a closed loop, each user sending its next request
 * as the last ends: the other users' prompts run during a request's
 * decodes.
 *
 * Two users, 1,024 in, 256 out, the ideal engine: a prompt fits in one
 * step, beside the other user's decode. A decode step of two at 1,152:
 * the weights, 4.4637 ms, then two caches of 1,153 tokens, 0.0902 ms;
 * 4.5539 ms. The prompt's step: 1,025 tokens' products and two heads,
 * 14,310,248,546,304 FLOPs (14.4621 ms), then attention of 1,024 tokens
 * at 512 and one at 1,152, 275,481,886,720 FLOPs (0.2784 ms) against
 * 285,343,744 B; 14.7405 ms. Over a request's 256 steps (its prompt, 255
 * decodes) the engine runs both prompts, and 254 plain decode steps:
 * tpot = (14.7405 + 254 x 4.5539) / 255 = 4.5938 ms, not 4.5539.
 */
static void test_steady(const struct kv_model *m)
{
	struct kv_fit_in in = llama(m);
	struct kv_serve_in w = {.isl = 1024, .osl = 256, .users = 2};
	struct kv_serve s = run(&in, &w);
	CHECK_NEAR(s.decode.ms, 4.553892011641791, 1e-9);
	CHECK_REL(s.prefill.flops, 14310248546304.0 + 275481886720.0);
	CHECK_NEAR(s.prefill.ms, 14.740505743328955, 1e-9);
	CHECK_REL(s.steps, 256);
	CHECK_NEAR(s.share, 0, 0);
	CHECK_REL(s.ttft_ms, s.decode.ms / 2 + s.prefill.ms); /* 17.02 */
	CHECK_NEAR(s.tpot_ms, 4.593839516471936, 1e-9);
	CHECK_NEAR(s.latency_ms, 1188.4465284494938, 1e-7);
	CHECK_REL(s.tokens_per_s, 2 * 256 / s.latency_ms * 1e3);

	/*
	 * 200 users, 1,000 in, 101 out, 2,048 batched tokens: the prompt
	 * fits in a step beside 199 decodes, but 200 prompts are more than
	 * a request's 101 steps, and the cycle's 200 x 1,100 tokens need
	 * 107.42 steps of 2,048: each step carries 1.8618 prompts and
	 * 186.18 decodes at 1,050. Its products: 2,048 tokens and 188.04
	 * heads, 28,785,948,464,131.7 FLOPs (29.091 ms); then attention,
	 * 186.18 caches of 1,051 tokens and 1,861.8 written, 25,891,819,892
	 * B (7.729 ms) against 590,558,003,200 FLOPs: 36.820 ms a step.
	 * The request waits 7.42 of them in the queue before its prompt's.
	 */
	in.batched_tokens = 2048;
	w = (struct kv_serve_in){.isl = 1000, .osl = 101, .users = 200};
	s = run(&in, &w);
	CHECK_U64(s.chunk, 1000);
	CHECK_REL(s.steps, 200 * 1100 / 2048.0);
	CHECK_REL(s.share, 2048 / 1100.0);
	double x = 2048 / 1100.0, d = 100 * x;
	CHECK_REL(s.mix.flops, 2048 * LIN + (d + x) * HEAD +
				       x * 1000 * ATT(500) + d * ATT(1050));
	CHECK_REL(s.mix.bytes, W + d * 1051 * KVT + x * 1000 * KVT);
	CHECK_NEAR(s.mix.ms, 36.8203097111718, 1e-9);
	CHECK_REL(s.tpot_ms, s.mix.ms);
	CHECK_REL(s.ttft_ms, s.decode.ms / 2 + (s.steps - 100) * s.mix.ms);
	CHECK_NEAR(s.ttft_ms, 279.6197093625286, 1e-8);
	CHECK_NEAR(s.tokens_per_s, 5098.884689539064, 1e-6);

	/*
	 * SGLang runs each prompt alone, the decodes paused: three users'
	 * requests span their 3 prompts and 100 decode steps, so
	 * tpot = decode + 2 prompts / 100. With 200 users, more than the
	 * 100 decode steps, the prompts that arrive together share a
	 * prefill step: 2 prompts, 2,000 tokens' products and 2 heads
	 * (28.2451 ms), then 2,000 tokens' attention at 500 (0.5299 ms),
	 * 28.7466 ms; tpot = (99 x 28.7466 + 100 x 12.6879) / 100.
	 */
	in.server = kv_server_get(KV_SERVER_SGLANG);
	in.batched_tokens = 0;
	w.users = 3;
	s = run(&in, &w);
	CHECK_U64(s.chunk, 1000);
	CHECK_REL(s.steps, 103);
	CHECK_REL(s.ttft_ms, s.decode.ms / 2 + s.prefill.ms);
	CHECK_REL(s.tpot_ms, s.decode.ms + 2 * s.prefill.ms / 100);
	w.users = 200;
	s = run(&in, &w);
	CHECK_REL(s.steps, 200);
	CHECK_REL(s.share, 2);
	CHECK_REL(s.mix.flops, 2000 * LIN + 2 * HEAD + 2000 * ATT(500));
	CHECK_NEAR(s.mix.ms, 28.746564271151087, 1e-9);
	CHECK_NEAR(s.decode.ms, 12.687946449850745, 1e-9);
	CHECK_REL(s.ttft_ms, s.decode.ms / 2 + s.mix.ms);
	CHECK_NEAR(s.tpot_ms, 41.14704507829032, 1e-9);

	/* TensorRT-LLM runs a prompt whole (enable_chunked_prefill is off
	 * by default, llmapi/llm_args.py), even where the decodes leave
	 * less room; one longer than its max_num_tokens, 8,192, it refuses
	 * (llmapi/llm.py, _check_arguments), and so does kvfit */
	in.server = kv_server_get(KV_SERVER_TRTLLM);
	in.batched_tokens = 1024;
	s = run(&in, &w);
	CHECK_U64(s.chunk, 1000);
	CHECK_U64(s.chunks, 1);
	in.batched_tokens = 0;
	in.ctx = 10240;
	w.isl = 10000;
	char err[KV_ERRLEN];
	CHECK(kv_serve_solve(&in, &w, &s, err) == KV_EINVAL);
	CHECK_STR(err, "llama-3.1-8b: trtllm runs a prompt in one step "
		       "(chunked prefill is off by default) and refuses one "
		       "of 10000 tokens, more than its max_num_tokens of "
		       "8192 (--max-num-batched-tokens, or "
		       "--enable-chunked-prefill)");
}

/*
 * Tensor parallelism 8 over NVLink at 450 GB/s a direction: each rank
 * holds 2 GB (reads all but its 130,839,224 B of the embedding), 4 query
 * heads and one K/V head (16,384 B a token), and
 * sends, a token, two all-reduces a layer of 4,096 16-bit activations,
 * 2 x 7/8 of each: 2 x 32 x 8,192 x 1.75 = 917,504 B (2.04 us).
 */
static void test_tp8(const struct kv_model *m)
{
	struct kv_fit_in in = llama(m);
	in.tp = 8;
	struct kv_serve_in w = {.isl = 1024, .osl = 256, .users = 1,
				.link_gbps = 450};
	struct kv_serve s = run(&in, &w);
	CHECK_REL(s.decode.bytes, 2e9 - 130839224 + 16384.0 * 1152 + 16384);
	CHECK_REL(s.decode.flops, (LIN + HEAD) / 8 + 65536.0 * 1152);
	CHECK_REL(s.decode.link_bytes, 917504);
	CHECK_REL(s.tpot_ms, 1888051528.0 / BW * 1e3 + 917504 / 450e9 * 1e3);
	CHECK_NEAR(s.tpot_ms, 0.5656363688225539, 1e-12);
	/* the prompt: 1,024 tokens' all-reduces, 939 MB, 2.09 ms */
	CHECK_REL(s.prefill.link_bytes, 1024 * 917504.0);
	CHECK_NEAR(s.ttft_ms, 3.9284221041432827, 1e-9);
	CHECK_REL(s.tokens_per_s_gpu, s.tokens_per_s / 8);
	/* NCCL's latency of each all-reduce (src/graph/tuning.cc: ring, LL
	 * protocol, baseLat 6.6 us and hwLat 0.6 us over NVLink, 1.0 over
	 * PCIe, for each of its 2 (tp - 1) steps): at tp 8 over NVLink,
	 * 6.6 + 14 x 0.6 = 15 us, 64 of them a step, 0.96 ms */
	kv_allreduce_latency("NVLink 4, 18 links", &w.ar_base_us,
			     &w.ar_step_us);
	CHECK_REL(w.ar_base_us, 6.6);
	CHECK_REL(w.ar_step_us, 0.6);
	struct kv_serve lat = run(&in, &w);
	CHECK_REL(lat.decode.link_ms, 917504 / 450e9 * 1e3 + 0.96);
	CHECK_REL(lat.decode.ms, s.decode.ms + 0.96);
	/* the prompt's one step too */
	CHECK_REL(lat.prefill.ms, s.prefill.ms + 0.96);
	/* over PCIe at tp 2: 6.6 + 2 x 1.0 = 8.6 us, 0.5504 ms a step */
	kv_allreduce_latency("PCIe 4.0 x16", &w.ar_base_us, &w.ar_step_us);
	in.tp = 2;
	s = run(&in, &w);
	CHECK_REL(s.decode.link_ms,
		  (2 * 32 * 8192.0 * 2 * 0.5) / 450e9 * 1e3 + 0.5504);
	in.tp = 8;
	w.ar_base_us = w.ar_step_us = 0;
	/* with no link given the bytes are counted, not timed */
	w.link_gbps = 0;
	s = run(&in, &w);
	CHECK_REL(s.decode.link_bytes, 917504);
	CHECK_NEAR(s.decode.link_ms, 0, 0);
	/* two pipeline stages: one hop of 8,192 B a token between them */
	in.tp = 1;
	in.pp = 2;
	w.link_gbps = 100;
	s = run(&in, &w);
	CHECK_REL(s.decode.link_bytes, 8192);
	CHECK_REL(s.tokens_per_s_gpu, s.tokens_per_s / 2);
}

/*
 * A small mixture of experts: 2 layers, hidden 64, 4 heads of 16, 2 K/V
 * heads, 4 experts of 3 x 64 x 128, one a token, vocabulary 100, bf16.
 * A layer: attention 4,096 + 2,048 + 2,048 + 4,096, norms 128, router
 * 256, experts 98,304 (24,576 active); 234,816 parameters in all, 87,360
 * active. Weights 469,632 B, of them the experts' 393,216. t tokens touch
 * 1 - (3/4)^t of the experts: 174,720 B for one, 248,448 for two, and
 * 430,266 for a prompt of 8 (393,216 x 6,561 / 65,536 = 39,366 left
 * unread); less the input embedding's 12,800, looked up. Per token: products 2 x 2 x 37,248, head 2 x 100 x 64,
 * attention 2 x 4 x 32 x 2 = 512 FLOPs a token read, 256 KV bytes. At
 * 1 GB/s and 1 GFLOP/s.
 */
/* The MoE of test_moe and test_measured_moe. */
static struct kv_model *tiny_moe(void)
{
	static const char json[] =
		"{\"model_type\":\"mixtral\",\"num_hidden_layers\":2,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"num_key_value_heads\":2,\"intermediate_size\":128,"
		"\"num_local_experts\":4,\"num_experts_per_tok\":1,"
		"\"vocab_size\":100,\"tie_word_embeddings\":false,"
		"\"torch_dtype\":\"bfloat16\"}";
	char err[KV_ERRLEN];
	struct kv_model *m = NULL;
	CHECK(kv_model_parse(json, sizeof json - 1, "moe", &m, err) == 0);
	return m;
}

static void test_moe(void)
{
	char err[KV_ERRLEN];
	struct kv_model *m = tiny_moe();
	struct kv_params p;
	CHECK(kv_model_params(m, &p, err) == 0);
	CHECK_U64(p.total, 234816);
	CHECK_U64(p.active, 87360);
	struct kv_fit_in in = {.m = m, .kv_dtype = KV_DTYPE_BF16,
			       .w_dtype = KV_DTYPE_BF16, .mem = 80 * GB,
			       .tp = 1, .pp = 1, .ctx = 16,
			       .server = kv_server_get(KV_SERVER_IDEAL),
			       .bandwidth_gbps = 1, .tflops = 0.001};
	struct kv_serve_in w = {.isl = 8, .osl = 8, .users = 1};
	struct kv_serve s = run(&in, &w);
	double lin = 4 * 37248.0, head = 12800;
	CHECK_REL(s.decode.bytes, 174720 - 12800 + 256 * 12 + 256);
	CHECK_REL(s.decode.flops, lin + head + 512 * 12);
	/* the products wait on the weights, 161,920 B against 161,792
	 * FLOPs; attention on its FLOPs, 6,144 against 3,328 B */
	CHECK_REL(s.tpot_ms, 0.16192 + 0.006144);
	CHECK(strcmp(s.decode.bound, "memory") == 0);
	CHECK_REL(s.prefill.bytes, 430266 - 12800 + 8 * 256);
	CHECK_REL(s.prefill.flops, 8 * lin + head + 8 * 512 * 4);
	CHECK_REL(s.ttft_ms, 1.22112);
	CHECK(strcmp(s.prefill.bound, "compute") == 0);
	w.users = 2;
	s = run(&in, &w);
	CHECK_REL(s.decode.bytes, 248448 - 12800 + 2 * (256 * 12 + 256));
	CHECK_REL(s.decode.ms, 0.335872); /* compute: 2 x 167,936 FLOPs */
	kv_model_free(m);
}

/*
 * The same MoE on measured efficiencies, vLLM's rules (kvfit(1), TIME,
 * Efficiencies): products at 0.8 of their roofline with a 1 us floor a
 * call (4 a layer), the one expert a token touches at 0.5 of its
 * roofline with a 10 us floor a MoE layer, attention's reads at half
 * the bandwidth with a 2 us floor a layer, four 1 us elementwise kernels
 * a layer at 0.8 of the bandwidth, the engine 100 us a step and 5 a
 * layer. One user's decode step, at 1 GB/s and 1 GFLOP/s:
 *   products   the 63,616 B beside the expert's 98,304 (the lookup
 *              aside) against 63,488 FLOPs: 63,616 / 0.8 = 79.52 us
 *   expert     98,304 B (= FLOPs) / 0.5 = 196.608 us, its activations
 *              2 layers x (2 x 64 + 3 x 128) x 2 B = 2,048 B / 0.5 =
 *              4.096 us, the floors 2 x 10 us
 *   attention  3,328 B / 0.5 = 6.656 us (above its 6,144 FLOPs)
 *   elementwise (2 x 64 x 2 B x 8 x 2 layers + 100 logits x 8) / 0.8 =
 *              3.56 us
 *   fixed      2 layers x (4 x 1 + 4 x 1) + 2 x 2 = 20 us
 *   engine     100 + 2 x 5 = 110 us
 * 440.44 us in all. Experts stored in mxfp4 (gpt-oss's) at their own
 * measured 0.25: the expert's 196.608 us and its activations' 4.096
 * twice over, where the table has that curve, else as before.
 */
static void test_measured_moe(void)
{
	struct kv_model *m = tiny_moe();
	struct kv_eff g = {
		.gemm = {{2, {1, 1000}, {0.8, 0.8}}},
		.gemm_floor_us = 1,
		.attn_floor_us = {2},
		.attn_bw = {0.5},
		.prefill = {{1, {1}, {0.5}}},
		.moe = {{1, {1}, {0.5}}},
		.moe_floor_us = 10,
	};
	struct kv_effs t = {.eff = &g, .n = 1, .elem_us = 1, .elem_bw = 0.8,
			    .engines = {{"vllm", 100, 5, 0, 0}},
			    .nengines = 1};
	struct kv_fit_in in = {.m = m, .kv_dtype = KV_DTYPE_BF16,
			       .w_dtype = KV_DTYPE_BF16, .mem = 80 * GB,
			       .tp = 1, .pp = 1, .ctx = 16,
			       .server = kv_server_get(KV_SERVER_VLLM),
			       .bandwidth_gbps = 1, .tflops = 0.001};
	struct kv_serve_in w = {.isl = 8, .osl = 8, .users = 1, .eff = &g,
				.effs = &t, .source = "measured"};
	struct kv_serve s = run(&in, &w);
	CHECK_REL(s.decode.ms, 0.44044);
	CHECK_REL(s.tpot_ms, 0.44044);
	CHECK_STR(s.source, "measured");
	/* the engine's costs given replace the table's */
	w.step_given = w.layer_given = true;
	w.step_us = 0;
	w.layer_us = 0;
	s = run(&in, &w);
	CHECK_REL(s.decode.ms, 0.44044 - 0.11);
	in.mx_experts = true; /* no mxfp4 curve: the format's */
	s = run(&in, &w);
	CHECK_REL(s.decode.ms, 0.33044);
	g.moe[KV_MOE_MXFP4] = (struct kv_curve){1, {1}, {0.25}};
	s = run(&in, &w);
	CHECK_REL(s.decode.ms, 0.33044 + 0.196608 + 0.004096);
	in.mx_experts = false; /* the curve is for mxfp4 experts alone */
	s = run(&in, &w);
	CHECK_REL(s.decode.ms, 0.33044);
	/* under tp 2 the table's all-reduce times the link, 50 us each, two
	 * a layer: 0.2 ms; a borrowed entry's (another machine's link) does
	 * not: the step as with no table */
	in.tp = 2;
	g.allreduce[0] = (struct kv_curve){1, {1}, {50}};
	struct kv_serve own = run(&in, &w);
	w.eff_scaled = true;
	struct kv_serve lent = run(&in, &w);
	g.allreduce[0].n = 0;
	w.eff_scaled = false;
	struct kv_serve none = run(&in, &w);
	CHECK_NEAR(own.decode.ms - none.decode.ms, 0.2, 1e-9);
	CHECK_REL(lent.decode.ms, none.decode.ms);
	kv_model_free(m);
}

/*
 * Latent attention: 2 layers, 4 heads, a latent of 32 and a rotary key
 * of 8 (80 B a token a layer in bf16). Attention runs in the latent:
 * scores over 32 + 8 and the sum over 32, 2 x 4 x 72 = 576 FLOPs a token
 * read a layer. Weights given as 1 MB, of which the input embedding's
 * share (6,400 of the parameters) is looked up, not read.
 */
static void test_mla(void)
{
	static const char json[] =
		"{\"model_type\":\"deepseek_v3\",\"num_hidden_layers\":2,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"num_key_value_heads\":4,\"intermediate_size\":128,"
		"\"kv_lora_rank\":32,\"qk_rope_head_dim\":8,"
		"\"qk_nope_head_dim\":16,\"v_head_dim\":16,"
		"\"q_lora_rank\":null,\"n_routed_experts\":null,"
		"\"vocab_size\":100,\"torch_dtype\":\"bfloat16\"}";
	char err[KV_ERRLEN];
	struct kv_model *m;
	struct kv_params p;
	CHECK(kv_model_parse(json, sizeof json - 1, "mla", &m, err) == 0);
	CHECK(kv_model_params(m, &p, err) == 0);
	struct kv_fit_in in = {.m = m, .kv_dtype = KV_DTYPE_BF16,
			       .w_dtype = KV_DTYPE_BF16, .weights = 1000000,
			       .mem = 80 * GB, .tp = 1, .pp = 1, .ctx = 4096,
			       .server = kv_server_get(KV_SERVER_IDEAL),
			       .bandwidth_gbps = 1, .tflops = 1};
	struct kv_serve_in w = {.isl = 1000, .osl = 1000, .users = 4};
	struct kv_serve s = run(&in, &w);
	double head = 2 * 100 * 64, embed = 100 * 64;
	/* the layers' active parameters: not the embedding's, the head's
	 * (untied) or the final norm's 64 */
	double lin = 2 * ((double)p.active - 2 * embed - 64);
	double rd = 1e6 - (double)(1000000ULL * 6400 / p.total);
	CHECK_U64(s.decode_ctx, 1500);
	CHECK_REL(s.decode.bytes, rd + 4 * 160 * 1501.0);
	CHECK_REL(s.decode.flops, 4 * (lin + head + 2 * 576 * 1500.0));
	CHECK_REL(s.decode.ms, (rd + 4 * 160 * 1501.0) / 1e9 * 1e3);
	kv_model_free(m);
}

static void test_cost_and_targets(const struct kv_model *m)
{
	/* $2 an hour on 8 GPUs at 1,000 tokens/s: $16 for 3.6 M tokens */
	CHECK_REL(kv_serve_cost(2, 8, 1000), 16 / 3.6);
	CHECK(isnan(kv_serve_cost(2, 8, 0)));

	struct kv_fit_in in = llama(m);
	struct kv_serve_in w = {.isl = 1024, .osl = 256};
	struct kv_serve s, at;
	uint64_t users;
	char err[KV_ERRLEN];
	/* tpot grows with users: the most within 6 ms, then one more
	 * misses */
	CHECK(kv_serve_best(&in, &w, 1000, 0, 6, &users, &s, err) == 0);
	CHECK(users > 1 && users < 1000);
	w.users = users;
	CHECK(run(&in, &w).tpot_ms <= 6);
	w.users = users + 1;
	CHECK(run(&in, &w).tpot_ms > 6);
	/* capped by memory's users */
	CHECK(kv_serve_best(&in, &w, 3, 0, 6, &users, &s, err) == 0);
	CHECK_U64(users, 3);
	/* a target one user misses: none, and the one user's times */
	CHECK(kv_serve_best(&in, &w, 1000, 1, 0, &users, &at, err) == 0);
	CHECK_U64(users, 0);
	CHECK_NEAR(at.ttft_ms, 14.724726237590703, 1e-9); /* FLOPs' */
}

static void test_refusals(const struct kv_model *m)
{
	struct kv_fit_in in = llama(m);
	struct kv_serve_in w = {.isl = 0, .osl = 1, .users = 1};
	struct kv_serve s;
	char err[KV_ERRLEN];
	CHECK(kv_serve_solve(&in, &w, &s, err) == KV_EINVAL);
	CHECK_STR(err, "llama-3.1-8b: prompt, output and users must be at "
		       "least 1");
	w.isl = 1;
	in.tflops = 0;
	CHECK(kv_serve_solve(&in, &w, &s, err) == KV_EINVAL);
	CHECK_STR(err, "llama-3.1-8b: timing needs the GPU's bandwidth and "
		       "FLOP rate");
}

/* An open loop at a rate: the concurrency is the rate times the latency
 * (Little's law, before the queue), the throughput the rate's, and each
 * prompt waits rho s / (2 (1 - rho)) for those ahead (M/D/1), s one
 * prompt's prefill alone (14.570 ms for 1,024 tokens: test_dense). */
static void test_rate(const struct kv_model *m)
{
	char err[KV_ERRLEN];
	struct kv_fit_in in = llama(m);
	struct kv_serve_in w = {.isl = 1024, .osl = 256, .users = 1,
				.arrivals = KV_ARRIVE_RATE, .rate = 10};
	struct kv_serve s;
	CHECK(kv_serve_rate(&in, &w, 300, &s, err) == 0);
	double pre = 14570116612096.0 / PEAK * 1e3, rho = 0.01 * pre;
	CHECK_REL(s.queue_ms, rho * pre / (2 * (1 - rho)));
	CHECK_NEAR(s.concurrency, 0.01 * (s.latency_ms - s.queue_ms), 1e-9);
	CHECK(s.concurrency > 12 && s.concurrency < 16);
	CHECK_REL(s.tokens_per_s, 2560.0);
	/* the 300 users that fit finish at most so many a second */
	w.rate = 1000;
	CHECK(kv_serve_rate(&in, &w, 300, &s, err) == KV_ERANGE);
	CHECK_HAS(err, "llama-3.1-8b: 1000 requests a second cannot be "
		       "served: the 300 users that fit finish at most");
}

/* The frontend's work a request (--request-us): in the steady state each
 * request's own, in ttft and latency; in a burst of N sent together the
 * frontend takes c on each, one at a time, and hands the N over when done
 * with the last, so the engine's whole run starts N c later (ttft and
 * latency N c more each, the tokens over a run N c longer); at a rate, an
 * M/D/1 server of c in front of the engine, refused where rate x c >= 1. */
static void test_frontend(const struct kv_model *m)
{
	char err[KV_ERRLEN];
	struct kv_fit_in in = llama(m);
	struct kv_serve_in w = {.isl = 128, .osl = 4, .users = 8};
	struct kv_serve a, b;
	CHECK(kv_serve_solve(&in, &w, &a, err) == 0);
	w.request_given = true;
	w.request_us = 12000;
	CHECK(kv_serve_solve(&in, &w, &b, err) == 0);
	CHECK_NEAR(b.front_ms, 12, 1e-12);
	CHECK_NEAR(b.ttft_ms - a.ttft_ms, 12, 1e-9);
	CHECK_NEAR(b.latency_ms - a.latency_ms, 12, 1e-9);
	CHECK_NEAR(b.tpot_ms, a.tpot_ms, 1e-12);
	/* 1,000 sent at once: the engine sees them 12 s later */
	w.arrivals = KV_ARRIVE_BURST;
	w.users = w.prompts = 1000;
	w.request_us = 0;
	CHECK(kv_serve_solve(&in, &w, &a, err) == 0);
	w.request_us = 12000;
	CHECK(kv_serve_solve(&in, &w, &b, err) == 0);
	CHECK_NEAR(a.front_ms, 0, 0);
	CHECK_NEAR(b.front_ms, 12000, 1e-6);
	CHECK_NEAR(b.ttft_ms - a.ttft_ms, 12000, 1e-6);
	CHECK_NEAR(b.latency_ms - a.latency_ms, 12000, 1e-6);
	CHECK_NEAR(b.tpot_ms, a.tpot_ms, 1e-9);
	double run = 1000 * 4 / a.tokens_per_s; /* seconds */
	CHECK_REL(b.tokens_per_s, 1000 * 4 / (run + 12));
	/* a closed loop of 10 users, 20 prompts: the first ten wait 10 c,
	 * the second ten, sent as the first end, c each: (10 x 120 + 10 x
	 * 12) / 20 = 66 ms */
	w.users = 10;
	w.prompts = 20;
	CHECK(kv_serve_solve(&in, &w, &b, err) == 0);
	CHECK_NEAR(b.front_ms, 66, 1e-9);
	/* at 50 requests a second: rho 0.6 on the frontend, a wait of
	 * 0.6 x 12 / (2 x 0.4) = 9 ms beside its own 12 */
	w = (struct kv_serve_in){.isl = 128, .osl = 4, .users = 1,
				 .arrivals = KV_ARRIVE_RATE, .rate = 50,
				 .request_given = true, .request_us = 12000};
	CHECK(kv_serve_rate(&in, &w, 300, &b, err) == 0);
	CHECK_NEAR(b.front_ms, 12 + 9, 1e-9);
	w.request_us = 0;
	CHECK(kv_serve_rate(&in, &w, 300, &a, err) == 0);
	/* and a little more: longer lives keep more requests at once */
	CHECK(b.ttft_ms - a.ttft_ms > 21 && b.ttft_ms - a.ttft_ms < 23);
	/* 100 a second: the frontend alone is full */
	w.request_us = 10000;
	w.rate = 100;
	CHECK(kv_serve_rate(&in, &w, 300, &b, err) == KV_ERANGE);
	CHECK_STR(err, "llama-3.1-8b: 100 requests a second cannot be served: "
		       "the engine's frontend takes 10 ms a request, at most "
		       "100 a second (--request-us)");
}

int main(void)
{
	struct kv_model *m = test_load("llama-3.1-8b");
	if (!m)
		return 1;
	test_dense(m);
	test_chunks(m);
	test_sglang(m);
	test_trtllm_chunked(m);
	test_steady(m);
	test_tp8(m);
	test_cost_and_targets(m);
	test_refusals(m);
	test_rate(m);
	test_frontend(m);
	kv_model_free(m);
	test_moe();
	test_measured_moe();
	test_mla();
	test_trtllm_chunk_window();
	return test_done("serve");
}
