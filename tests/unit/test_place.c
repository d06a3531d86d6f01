/*
 * test_place.c - llama.cpp's split between the GPU and host memory
 * against hand-worked values: where -ngl puts each slot, the -ot rules
 * read against a GGUF's tensors and against a config's names, both
 * compute buffers and the KV on each side (a Mistral 7B log), the host's
 * budget, the step's host and link times, and --solve layers.
 */
#include <math.h>

#include "kv/fit.h"
#include "kv/model.h"
#include "kv/place.h"
#include "kv/params.h"
#include "kv/plan.h"
#include "kv/serve.h"
#include "plan/server_int.h"
#include "test.h"
#include "fit_solve.h"

#define MIB (1ULL << 20)
#define LLAMACPP kv_server_get(KV_SERVER_LLAMACPP)

/* tests/gguf/tiny-q4_k_m.gguf (tests/scripts/gguf_write.py, tiny()):
 * hidden 256, 2 layers, 2 K/V heads of 64, vocab 256, context 4096. Its
 * tensors' bytes, ggml's rows (Q4_K 144 bytes a 256 values, Q6_K 210,
 * F32 4): token_embd [256, 256] Q4_K 256 x 144; a layer: two norms 2 x
 * 1024, q and o 2 x 36864, k [256, 128] Q4_K 18432, v Q6_K 128 x 210 =
 * 26880, gate and up [256, 512] Q4_K 2 x 73728, down [512, 256] Q6_K
 * 256 x 420 = 107520; the output norm 1024 and head [256, 256] Q6_K
 * 53760. */
#define TINY_EMBD 36864ULL
#define TINY_LAYER 376064ULL
#define TINY_OUT 54784ULL
#define TINY_ALL (TINY_EMBD + 2 * TINY_LAYER + TINY_OUT) /* 843776 */

/* src/llama-model.cpp, load_tensors: the last N layers; the output at
 * N > n_layer; the input never. */
static void test_slots(void)
{
	for (uint32_t k = 0; k <= 33; k++) {
		bool want = k >= 13 && k <= 32; /* layers 12 .. 31 */
		CHECK(llamacpp_slot_gpu(k, 32, 20) == want);
	}
	CHECK(!llamacpp_slot_gpu(33, 32, 32)); /* -ngl 32: the head stays */
	CHECK(llamacpp_slot_gpu(1, 32, 32));
	CHECK(llamacpp_slot_gpu(33, 32, 33));
	CHECK(llamacpp_slot_gpu(33, 32, 999));
	CHECK(!llamacpp_slot_gpu(0, 32, 999));
	CHECK(!llamacpp_slot_gpu(1, 32, 0) && !llamacpp_slot_gpu(33, 32, 0));
}

static void test_ot_parse(void)
{
	struct kv_ot r[KV_OT_MAX];
	size_t n = 0;
	char err[KV_ERRLEN];
	CHECK(kv_ot_parse("exps=CPU", r, &n, err) == 0);
	CHECK(n == 1 && r[0].host && !strcmp(r[0].pattern, "exps"));
	CHECK(kv_ot_parse("blk\\.(1|2)\\.ffn_up_exps=CUDA0,attn=Vulkan0", r,
			  &n, err) == 0);
	CHECK(n == 3 && !r[1].host && !r[2].host);
	CHECK_STR(r[1].pattern, "blk\\.(1|2)\\.ffn_up_exps");
	CHECK(kv_ot_parse("exps", r, &n, err) == KV_EINVAL);
	CHECK_STR(err, "--override-tensor 'exps': must be PATTERN=BUFFER "
		       "(exps=CPU)");
	CHECK(kv_ot_parse("exps=FOO", r, &n, err) == KV_EINVAL);
	CHECK_HAS(err, "unknown buffer type 'FOO'; known: CPU");
	CHECK(kv_ot_parse("=CPU", r, &n, err) == KV_EINVAL);
	CHECK(kv_ot_parse("blk.(=CPU", r, &n, err) == KV_EINVAL);
	CHECK_HAS(err, "--override-tensor 'blk.(': not a regular expression");
	CHECK(n == 3);
	for (n = 0; n < KV_OT_MAX;)
		CHECK(kv_ot_parse("a=CPU", r, &n, err) == 0);
	CHECK(kv_ot_parse("a=CPU", r, &n, err) == KV_EINVAL);
}

/* No tensors listed (a config): the rules' shares of each layer's
 * experts; any other tensor refused. Qwen3-30B-A3B: 48 layers, each of
 * 128 experts, gated (gate, up, down). */
static void test_counts(void)
{
	struct kv_model *m = test_load_path("configs/qwen3-30b-a3b.json");
	struct kv_ot r[KV_OT_MAX];
	struct kv_place p;
	char err[KV_ERRLEN];
	size_t n = 0;
	CHECK(kv_ot_parse("exps=CPU", r, &n, err) == 0);
	CHECK(kv_place_init(&p, m, r, n, err) == 0);
	CHECK(!p.exact && p.n_layers == 48);
	CHECK_NEAR(p.slot[1].host_share, 1, 0);
	CHECK_NEAR(p.slot[48].host_share, 1, 0);
	CHECK_U64(p.matched[0], 48 * 3);
	kv_place_free(&p);
	/* ECMAScript's \d; one of three experts' tensors, of layers 0-9 */
	n = 0;
	CHECK(kv_ot_parse("blk\\.\\d\\.ffn_down_exps=CPU,ffn_up_exps=CUDA0", r,
			  &n, err) == 0);
	CHECK(kv_place_init(&p, m, r, n, err) == 0);
	CHECK_NEAR(p.slot[1 + 9].host_share, 1.0 / 3, 1e-12);
	CHECK_NEAR(p.slot[1 + 10].host_share, 0, 0);
	CHECK_NEAR(p.slot[1 + 10].gpu_share, 1.0 / 3, 1e-12);
	kv_place_free(&p);
	n = 0;
	CHECK(kv_ot_parse("attn=CPU", r, &n, err) == 0);
	CHECK(kv_place_init(&p, m, r, n, err) == KV_EINVAL);
	CHECK_STR(err, "--override-tensor 'attn=CPU': finds "
		       "blk.0.attn_norm.weight; qwen3-30b-a3b "
		       "lists no tensors (a config, or a GGUF header alone), "
		       "so only the experts' (ffn_*_exps) can be placed");
	n = 0;
	CHECK(kv_ot_parse("shexp=CPU", r, &n, err) == 0);
	CHECK(kv_place_init(&p, m, r, n, err) == KV_EINVAL);
	CHECK_HAS(err, "--override-tensor 'shexp=CPU': finds "
		       "blk.0.ffn_gate_shexp");
	n = 0;
	CHECK(kv_ot_parse("nothing=CPU", r, &n, err) == 0);
	CHECK(kv_place_init(&p, m, r, n, err) == KV_EINVAL);
	CHECK_HAS(err, "finds none of the experts' tensors");
	kv_model_free(m);
}

/* A GGUF's own tensors: each slot's bytes, the rules' exact bytes. */
static void test_exact(void)
{
	struct kv_model *m = test_load_path("tests/gguf/tiny-q4_k_m.gguf");
	struct kv_ot r[KV_OT_MAX];
	struct kv_place p;
	char err[KV_ERRLEN];
	size_t n = 0;
	/* "output" alone would find blk.N.attn_output too */
	CHECK(kv_ot_parse("blk\\.0\\.attn_v=CPU,^output=CUDA0", r, &n, err) ==
	      0);
	CHECK(kv_place_init(&p, m, r, n, err) == 0);
	CHECK(p.exact && !p.tied);
	CHECK_U64(p.slot[0].bytes, TINY_EMBD);
	CHECK_U64(p.slot[1].bytes, TINY_LAYER);
	CHECK_U64(p.slot[2].bytes, TINY_LAYER);
	CHECK_U64(p.slot[3].bytes, TINY_OUT);
	CHECK_U64(p.slot[1].largest, 107520); /* ffn_down */
	CHECK_U64(p.slot[3].largest, 53760);  /* the head */
	CHECK_U64(p.slot[1].host, 26880);     /* blk.0.attn_v */
	CHECK_U64(p.slot[1].largest_host, 26880);
	CHECK_U64(p.slot[2].host, 0);
	CHECK_U64(p.slot[3].gpu, TINY_OUT); /* output and output_norm */
	CHECK_U64(p.matched[0], 1);
	CHECK_U64(p.matched[1], 2);
	CHECK_U64(p.slot[1].routed, 0);
	kv_place_free(&p);
	kv_model_free(m);
}

/* The tiny GGUF as kvfit plans it under llama.cpp: its own bytes. */
static struct kv_fit_in tiny_in(const struct kv_model *m,
				const struct kv_place *p)
{
	return (struct kv_fit_in){
		.m = m, .kv_dtype = KV_DTYPE_F16, .w_dtype = KV_DTYPE_F16,
		.weights = TINY_ALL, .mem = 64 * MIB, .runtime = true,
		.tp = 1, .pp = 1, .ctx = 4096, .server = LLAMACPP,
		.bandwidth_gbps = 1000, .tflops = 100,
		.off = {.on = true, .gpu_layers = 1, .place = p, .exact = true,
			.host_mem = 32 * MIB, .host_gbps = 50,
			.link_gbps = 32}};
}

/*
 * -ngl 1 on the tiny GGUF: layer 1 on the GPU, layer 0, the embedding
 * and the head in host memory. GPU: its layer's 376064 bytes; its
 * compute buffer as llama.cpp v0.5.0 reserves it (server_llamacpp.c,
 * 8912896 here) and the largest host weight a product copies in, layer
 * 0's ffn_down (107520): 9020416; a sequence of 4096 tokens, 2 x 64 x 2
 * values of f16 a layer each, 2097152 bytes on each side. Host: 36864 +
 * 376064 + 54784 = 467712 of weights; compute 512 x (256 + 4096) x 4 =
 * 8912896; 32 MiB - both = 24173824 free, 11.527 sequences (the GPU's
 * 64 MiB holds 27.52): host memory decides.
 */
static void test_split(void)
{
	struct kv_model *m = test_load_path("tests/gguf/tiny-q4_k_m.gguf");
	struct kv_place p;
	char err[KV_ERRLEN];
	CHECK(kv_place_init(&p, m, NULL, 0, err) == 0);
	struct kv_fit_in in = tiny_in(m, &p);
	struct kv_fit f = solve(&in);
	const struct kv_split *sp = &f.split;
	CHECK_U64(sp->gpu_layers, 1);
	CHECK(!sp->head_gpu);
	CHECK_U64(f.weights, TINY_LAYER);
	CHECK_U64(sp->host_weights, TINY_EMBD + TINY_LAYER + TINY_OUT);
	/* the compute buffer as llama.cpp v0.5.0 reserves it
	 * (server_llamacpp.c: a layer's peak and its caches' masks, 8.5
	 * MiB here), and the head copied in for the GPU's products */
	CHECK_U64(f.runtime, 8912896 + 107520);
	CHECK_U64(sp->host_compute, 8912896);
	CHECK_U64(f.seq_bytes, 2097152);
	CHECK_U64(sp->host_seq, 2097152);
	CHECK_U64(f.bytes_per_token, 512);
	CHECK_NEAR(sp->host_users, 24173824.0 / 2097152, 1e-9);
	CHECK_NEAR(f.users, 24173824.0 / 2097152, 1e-9);
	CHECK_U64(f.users_whole, 11);
	CHECK_U64(f.kv_bytes, 11 * 2097152ULL);
	CHECK_U64(sp->host_kv, 11 * 2097152ULL);
	CHECK_STR(kv_plan_bound(&f), "host_memory");
	/* embedding (host) -> layer 0 (host) -> layer 1 (GPU) -> head (host):
	 * two crossings of 256 float32 values a token */
	CHECK_U64(sp->crossings, 2);
	CHECK_NEAR(sp->link_token, 2048, 0);
	CHECK_NEAR(sp->logit_bytes, 0, 0);
	/* one user's step at 4096: the GPU reads 376064 + 2097152, the host
	 * 467712 - the embedding looked up (36864) + 2097152 */
	in.users = 1;
	f = solve(&in);
	CHECK_U64(sp->step_host_weight_bytes, 430848);
	CHECK_U64(sp->step_host_kv_bytes, 2097152);
	CHECK_NEAR(sp->gpu_ms, 2473216 / 1e9, 1e-12);
	CHECK_NEAR(sp->host_ms, 2528000 / 50e6, 1e-12);
	CHECK_NEAR(sp->link_ms, 2048 / 32e6, 1e-12);
	CHECK_NEAR(f.step_ms, sp->gpu_ms + sp->host_ms + sp->link_ms, 1e-15);
	CHECK_NEAR(f.tokens_per_s, 1e3 / f.step_ms, 1e-9);
	CHECK_NEAR(sp->kv_host_share, 0.5, 1e-12);

	/* every layer and the head: 1 crossing in, the logits back; the
	 * host compute buffer copies nothing in */
	in.off.gpu_layers = 3;
	f = solve(&in);
	CHECK(sp->head_gpu && sp->gpu_layers == 2);
	CHECK_U64(f.weights, 2 * TINY_LAYER + TINY_OUT);
	CHECK_U64(f.runtime, 8912896);
	CHECK_U64(sp->host_weights, TINY_EMBD);
	CHECK_U64(sp->crossings, 1);
	CHECK_NEAR(sp->logit_bytes, 256 * 4, 0);
	CHECK_NEAR(sp->host_ms, 0, 0);
	CHECK_NEAR(sp->link_ms, (1024 + 1024) / 32e6, 1e-12);
	/* -nkvo: both layers' KV and attention in host memory, two more
	 * crossings a layer */
	in.off.no_kv_offload = true;
	f = solve(&in);
	CHECK_U64(f.seq_bytes, 0);
	CHECK_U64(sp->host_seq, 2 * 2097152ULL);
	CHECK_U64(sp->crossings, 5);
	CHECK_U64(sp->step_host_kv_bytes, 2 * 2097152ULL);
	CHECK_NEAR(sp->host_ms, 2 * 2097152 / 50e6, 1e-12);
	/* host memory unknown, all KV kept there: refused */
	in.off.host_mem = 0;
	CHECK(kv_fit_solve(&in, &f, err) == KV_EINVAL);
	CHECK_HAS(err, "whose size is unknown: give --host-mem");
	in.off.no_kv_offload = false;
	f = solve(&in);
	CHECK(isinf(sp->host_users) && !sp->host_mem);
	/* --pp above 1 */
	in.pp = 2;
	CHECK(kv_fit_solve(&in, &f, err) == KV_EINVAL);
	CHECK_HAS(err, "on one GPU (--pp 1)");
	kv_place_free(&p);
	kv_model_free(m);
}

/*
 * Mistral 7B v0.1 Q4_K_M at -ngl 20, n_ubatch 256, n_ctx 768, one
 * sequence, as llama.cpp logs it (llama-cpp-python, an EduHPC'25 paper's
 * appendix): "CUDA0 KV buffer size = 60.00 MiB", "CPU KV buffer size =
 * 36.00 MiB", "CUDA0 compute buffer size = 137.79 MiB", "CUDA_Host
 * compute buffer size = 4.76 MiB". The head in host memory, Q6_K [4096,
 * 32000]: 32000 x 16 x 210 = 107520000 bytes, copied into the GPU's
 * buffer beside 256 x (32000 + 4096) x 4 = 36962304: 144482304 bytes,
 * 137.79 MiB. The host's 256 x (4096 + 768) x 4 = 4980736 is 4.75 MiB
 * (its token ids and positions, a few KiB, left out). The layers' bytes
 * are made up (the log gives their sum).
 */
static void test_mistral_log(void)
{
	struct kv_model *m = test_load_path("configs/mistral-7b-v0.1.json");
	struct kv_slot slot[34] = {0};
	struct kv_place p = {.exact = true, .n_layers = 32, .slot = slot};
	slot[0].bytes = 73728000; /* token_embd Q4_K */
	for (int i = 1; i <= 32; i++)
		slot[i] = (struct kv_slot){.bytes = 130000000,
					   .largest = 48168960};
	slot[33] = (struct kv_slot){.bytes = 107520000 + 16384,
				    .largest = 107520000};
	struct kv_fit_in in = {
		.m = m, .kv_dtype = KV_DTYPE_F16, .w_dtype = KV_DTYPE_F16,
		.weights = 73728000 + 32 * 130000000ULL + 107536384,
		.mem = 8ULL << 30, .runtime = true, .tp = 1, .pp = 1,
		.ctx = 768, .server = LLAMACPP, .batched_tokens = 256,
		.max_seqs = 1,
		.off = {.on = true, .gpu_layers = 20, .place = &p,
			.exact = true, .host_mem = 64ULL << 30,
			.host_gbps = 50, .link_gbps = 32}};
	struct kv_fit f = solve(&in);
	CHECK_U64(f.kv_bytes, 60 * MIB);
	CHECK_U64(f.split.host_kv, 36 * MIB);
	/* the log's GPU compute buffer, 137.79 MiB, is an older build's
	 * 35.25 MiB of activations beside the Q6_K head copied in; v0.5.0
	 * reserves 60.38 (server_llamacpp.c, held to it by
	 * vs-node-llama-cpp.sh): 63,307,776 + 107,520,000 */
	CHECK_U64(f.runtime, 63307776 + 107520000ULL);
	CHECK_U64(f.split.host_compute, 4980736);
	CHECK_U64(f.weights, 20 * 130000000ULL);
	kv_model_free(m);
}

/* The host's part and the link's: below llama.cpp's op offload batch the
 * host reads its bytes (or computes, where longer); from it, they cross
 * the link. */
static void test_ngl_ms(void)
{
	struct kv_ngl o = {.on = true, .host_gbps = 50, .link_gbps = 32};
	struct kv_ngl_step s = {.tokens = 1, .host_bytes = 2528000,
				    .host_flops = 1e9, .link_bytes = 2048};
	double h, l;
	bool gpu;
	kv_ngl_ms(&o, &s, &h, &l, &gpu);
	CHECK(!gpu);
	CHECK_NEAR(h, 0.05056, 1e-12);
	CHECK_NEAR(l, 0.000064, 1e-12);
	o.host_tflops = 0.01; /* 1e9 FLOPs at 10^10/s: 100 ms */
	kv_ngl_ms(&o, &s, &h, &l, &gpu);
	CHECK_NEAR(h, 100, 1e-9);
	s.tokens = KV_NGL_BATCH; /* 32 tokens: the bytes cross */
	s.link_bytes = 32 * 2048;
	kv_ngl_ms(&o, &s, &h, &l, &gpu);
	CHECK(gpu);
	CHECK_NEAR(h, 0, 0);
	CHECK_NEAR(l, (2528000 + 65536) / 32e6, 1e-12);
}

/* Solving the layers of the tiny GGUF at 4096 tokens, one user: every
 * layer and the head take 806912 + 8912896 (the compute buffer) + 2 x
 * 2097152 = 13914112 bytes; both layers without the head 752128 +
 * (8912896 + 53760, the head copied in) + 4194304 = 13913088; one layer
 * 376064 + (8912896 + 107520) + 2097152 = 11493632. */
static void test_solve_layers(void)
{
	struct kv_model *m = test_load_path("tests/gguf/tiny-q4_k_m.gguf");
	struct kv_place p;
	char err[KV_ERRLEN];
	CHECK(kv_place_init(&p, m, NULL, 0, err) == 0);
	struct kv_plan_row r = {.in = tiny_in(m, &p)};
	r.in.off.gpu_layers = 3;
	r.in.users = 1;
	r.in.mem = 13914112;
	CHECK(kv_plan_solve(KV_PLAN_LAYERS, &r, err) == 0);
	CHECK(!r.none && r.in.off.gpu_layers == 3);
	r.in.mem = 13914111;
	CHECK(kv_plan_solve(KV_PLAN_LAYERS, &r, err) == 0);
	CHECK(!r.none && r.in.off.gpu_layers == 2);
	CHECK_U64(r.f.weights, 2 * TINY_LAYER);
	r.in.mem = 13913087;
	CHECK(kv_plan_solve(KV_PLAN_LAYERS, &r, err) == 0);
	CHECK(!r.none && r.in.off.gpu_layers == 1);
	/* -ngl 0 leaves the GPU its compute buffer and the head's copy,
	 * 9020416 */
	r.in.mem = 9020416;
	CHECK(kv_plan_solve(KV_PLAN_LAYERS, &r, err) == 0);
	CHECK(!r.none && r.in.off.gpu_layers == 0);
	r.in.mem = 9020415;
	CHECK(kv_plan_solve(KV_PLAN_LAYERS, &r, err) == 0);
	CHECK(r.none);
	kv_place_free(&p);
	kv_model_free(m);
}

/* An MoE model whose experts may go to host memory: --n-cpu-moe's bytes
 * (1 byte a parameter: Qwen3-30B-A3B's layer of 128 experts of 3 x 2048
 * x 768), and the solve's answer the fewest such layers. */
static void test_moe(void)
{
	struct kv_model *m = test_load_path("configs/qwen3-30b-a3b.json");
	struct kv_params pm;
	char err[KV_ERRLEN];
	CHECK(kv_model_params(m, &pm, err) == 0);
	uint64_t routed = 128ULL * 3 * 2048 * 768; /* 603979776 */
	struct kv_fit_in in = {
		.m = m, .kv_dtype = KV_DTYPE_F16, .w_dtype = KV_DTYPE_F16,
		.weights = pm.total, .mem = 24ULL << 30, .runtime = true,
		.tp = 1, .pp = 1, .ctx = 32768, .server = LLAMACPP,
		.bandwidth_gbps = 1000, .tflops = 100, .users = 1,
		.off = {.on = true, .gpu_layers = 49, .host_mem = 64ULL << 30,
			.host_gbps = 50, .link_gbps = 32}};
	struct kv_fit all = solve(&in);
	CHECK(all.split.head_gpu && all.split.moe_host == 0);
	in.off.moe_host = 2;
	struct kv_fit two = solve(&in);
	CHECK_U64(two.split.moe_host, 2);
	CHECK_U64(all.weights - two.weights, 2 * routed);
	CHECK_U64(two.split.host_weights - all.split.host_weights,
		  2 * routed);
	/* the GPU's buffer copies one experts tensor in, 128 x 2048 x 768 */
	CHECK_U64(two.runtime - all.runtime, routed / 3);
	/* two crossings more a layer whose experts are in host memory */
	CHECK_U64(two.split.crossings, all.split.crossings + 4);
	struct kv_plan_row r = {.in = in};
	r.in.off.moe_host = 0;
	r.in.mem = 19ULL << 30;
	CHECK(kv_plan_solve(KV_PLAN_LAYERS, &r, err) == 0);
	CHECK(!r.none && r.in.off.gpu_layers == 49);
	uint32_t k = r.in.off.moe_host;
	CHECK(k > 0 && k < 48);
	CHECK(r.f.users_whole >= 1);
	in.mem = r.in.mem;
	in.off.moe_host = k - 1; /* one fewer does not fit */
	CHECK(solve(&in).users_whole == 0);
	kv_model_free(m);
}

/* tests/gguf/tiny-moe.gguf (gguf_write.py, tiny_moe()): hidden 128, 4
 * layers of 4 experts of 128, each of gate, up (Q4_0, 128 x 4 rows of 72
 * bytes: 36864) and down (Q8_0, rows of 136: 69632) one tensor; a
 * layer's other tensors 35328 bytes, the embedding 18432, the output
 * 35328. --n-cpu-moe 2: the first two layers' experts (2 x 143360) in
 * host memory, every layer and the head on the GPU, whose compute buffer
 * copies the largest of them in (ffn_down_exps, 69632) beside 512 x (256
 * + 128) x 4. */
static void test_moe_exact(void)
{
	struct kv_model *m = test_load_path("tests/gguf/tiny-moe.gguf");
	struct kv_place p;
	char err[KV_ERRLEN];
	CHECK(kv_place_init(&p, m, NULL, 0, err) == 0);
	CHECK_U64(p.slot[1].routed, 143360);
	CHECK_U64(p.slot[1].largest_routed, 69632);
	struct kv_fit_in in = tiny_in(m, &p);
	in.weights = 768512;
	in.off.gpu_layers = 5;
	in.off.moe_host = 2;
	in.off.host_mem = 64ULL << 30;
	struct kv_fit f = solve(&in);
	CHECK_U64(f.weights, 768512 - 18432 - 2 * 143360ULL);
	CHECK_U64(f.split.host_weights, 18432 + 2 * 143360ULL);
	CHECK_U64(f.runtime, 6553600 + 69632);
	CHECK_U64(f.split.moe_host, 2);
	/* in, then out and back at each of the two layers */
	CHECK_U64(f.split.crossings, 5);
	kv_place_free(&p);
	kv_model_free(m);
}

/*
 * The time model's decode step with a split (serve.c): the tiny GGUF at
 * -ngl 1, one user, isl 1000 and osl 100, timed at the mean context 1050.
 * The GPU reads its layer (376064) and its KV, 1050 x 512 and the new
 * token's 512, at 1000 GB/s; the host its weights less the embedding
 * looked up (430848) and as much KV at 50 GB/s; the link carries one
 * token's two crossings, 2048 bytes at 32 GB/s. The FLOPs, a few
 * million, hide under the bytes.
 */
static void test_serve(void)
{
	struct kv_model *m = test_load_path("tests/gguf/tiny-q4_k_m.gguf");
	struct kv_place p;
	struct kv_serve out;
	char err[KV_ERRLEN];
	CHECK(kv_place_init(&p, m, NULL, 0, err) == 0);
	struct kv_fit_in in = tiny_in(m, &p);
	in.users = 1;
	struct kv_serve_in w = {.isl = 1000, .osl = 100, .users = 1,
				.prompts = 1};
	CHECK(kv_serve_solve(&in, &w, &out, err) == 0);
	double gpu = (376064 + 1050 * 512 + 512) / 1e9;
	double host = (430848 + 1050 * 512 + 512) / 50e6;
	CHECK_NEAR(out.decode.ms, gpu + host + 2048 / 32e6, 1e-12);
	CHECK_NEAR(out.decode.bytes, 376064 + 1050 * 512 + 512, 1e-6);
	CHECK_STR(out.decode.bound, "memory");
	/* a prefill chunk of 512 tokens runs the host's layers on the GPU:
	 * their weights and KV cross the link, longer than the rest */
	CHECK_STR(out.prefill.bound, "link");
	kv_place_free(&p);
	kv_model_free(m);
}

int main(void)
{
	test_slots();
	test_ot_parse();
	test_counts();
	test_exact();
	test_split();
	test_mistral_log();
	test_ngl_ms();
	test_solve_layers();
	test_moe();
	test_moe_exact();
	test_serve();
	printf("test_place: %d checks, %d failed\n", test_checks,
	       test_failures);
	return test_failures ? 1 : 0;
}
