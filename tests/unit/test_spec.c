/*
 * test_spec.c - speculative decoding against figures worked by hand: the
 * tokens a round gives, the checks and refusals, the drafter's weights and
 * its bytes a token per engine, the tokens held ahead, a row's users, and
 * a round's time (the drafter's passes and the verify step).
 *
 * Hand figures. Llama 3.2 1B (tests/configs/llama-3.2-1b-instruct.json):
 * 1,235,814,400 parameters (embedding 128,256 x 2,048 tied, 16 layers of
 * 60,821,504, a norm), 2 bytes each; 16 layers x 8 KV heads x 64 x 2 x 2
 * = 32,768 B a token. Llama 3.1 70B: 80 layers x 8 x 128 x 2 x 2 =
 * 327,680 B a token. The EAGLE-3 head (tests/configs/SOURCES.md): one
 * layer of Llama 3.1 8B's shape, 218,112,000 parameters.
 */
#include <math.h>

#include "kv/serve.h"
#include "kv/spec.h"
#include "test.h"

#define GB 1000000000ULL
#define IDEAL kv_server_get(KV_SERVER_IDEAL)
#define VLLM kv_server_get(KV_SERVER_VLLM)
#define SGLANG kv_server_get(KV_SERVER_SGLANG)
#define TRTLLM kv_server_get(KV_SERVER_TRTLLM)
#define LLAMACPP kv_server_get(KV_SERVER_LLAMACPP)
#define CHECK_REL(a, b) CHECK_NEAR((a), (b), fabs((double)(b)) * 1e-12)

/* A row of m on sv: 80 GB, 16-bit weights and cache. */
static struct kv_fit_in row(const struct kv_model *m,
			    const struct kv_server *sv, uint32_t tp,
			    const struct kv_spec *s)
{
	return (struct kv_fit_in){.m = m, .kv_dtype = KV_DTYPE_BF16,
				  .w_dtype = KV_DTYPE_BF16, .mem = 80 * GB,
				  .tp = tp, .pp = 1, .ctx = 8192, .server = sv,
				  .gpu = "h100-sxm", .spec = s,
				  .bandwidth_gbps = 3350, .tflops = 989.5};
}

/* 1 + A + ... + A^k, or the length measured. */
static void test_tokens(void)
{
	struct kv_spec s = {.method = KV_SPEC_MTP, .k = 3, .accept = 0.8};
	CHECK_REL(kv_spec_tokens(&s), 1 + 0.8 + 0.64 + 0.512); /* 2.952 */
	s.k = 4;
	s.accept = 0.7;
	CHECK_REL(kv_spec_tokens(&s), 1 + 0.7 + 0.49 + 0.343 + 0.2401);
	s.accept = 1; /* every draft taken: k + 1 */
	CHECK_REL(kv_spec_tokens(&s), 5);
	s.accept = 0;
	CHECK(isnan(kv_spec_tokens(&s)));
	s.accept_len = 2.85; /* vLLM's "Mean acceptance length" */
	CHECK_REL(kv_spec_tokens(&s), 2.85);
	CHECK_REL(kv_spec_tokens(NULL), 1);
	enum kv_spec_method m = KV_SPEC_NONE;
	CHECK(kv_spec_method_parse("eagle3", &m) == 0 && m == KV_SPEC_EAGLE3);
	CHECK(kv_spec_method_parse("medusa", &m) == KV_EINVAL);
	CHECK(kv_spec_method_parse("", &m) == KV_EINVAL);
	CHECK_STR(kv_spec_method_name(KV_SPEC_NGRAM), "ngram");
}

static void test_check(void)
{
	struct kv_model *q72 = test_load_path("configs/qwen2.5-72b.json");
	struct kv_model *q3 = test_load_path("tests/configs/qwen2.5-3b-instruct.json");
	struct kv_model *l8 = test_load_path("configs/llama-3.1-8b.json");
	struct kv_model *ds = test_load_path("configs/deepseek-v3.json");
	char err[KV_ERRLEN];
	struct kv_spec s = {.method = KV_SPEC_DRAFT, .draft = q3, .k = 4};
	/* Qwen2.5 72B pads its vocabulary to 152,064, the 3B to 151,936 */
	CHECK(kv_spec_check(&s, q72, err) == KV_EINVAL);
	CHECK_HAS(err, "vocab_size 151936, the target's 152064");
	s = (struct kv_spec){.method = KV_SPEC_MTP, .k = 1};
	CHECK(kv_spec_check(&s, l8, err) == KV_EINVAL);
	CHECK_HAS(err, "no multi-token-prediction layers");
	CHECK(kv_spec_check(&s, ds, err) == 0);
	s.draft = q3;
	CHECK(kv_spec_check(&s, ds, err) == KV_EINVAL);
	CHECK_HAS(err, "takes no --draft");
	s = (struct kv_spec){.method = KV_SPEC_EAGLE, .k = 3};
	CHECK(kv_spec_check(&s, l8, err) == KV_EINVAL);
	CHECK_HAS(err, "needs --draft");
	s = (struct kv_spec){.method = KV_SPEC_NGRAM, .k = 3, .accept_len = 4};
	CHECK(kv_spec_check(&s, l8, err) == 0); /* k + 1 at most */
	s.accept_len = 4.5;
	CHECK(kv_spec_check(&s, l8, err) == KV_EINVAL);
	CHECK_HAS(err, "--acceptance-length");
	s = (struct kv_spec){.method = KV_SPEC_NGRAM, .k = 65};
	CHECK(kv_spec_check(&s, l8, err) == KV_EINVAL);
	s.k = 3;
	s.accept = 1.5;
	CHECK(kv_spec_check(&s, l8, err) == KV_EINVAL);
	/* what each engine runs */
	s = (struct kv_spec){.method = KV_SPEC_EAGLE, .draft = l8, .k = 3};
	struct kv_fit_in in = row(l8, TRTLLM, 1, &s);
	CHECK(kv_spec_refuses(&in, err));
	CHECK_HAS(err, "give eagle3");
	s.method = KV_SPEC_EAGLE3;
	CHECK(!kv_spec_refuses(&in, err));
	in = row(l8, LLAMACPP, 1, &s);
	CHECK(kv_spec_refuses(&in, err));
	s.method = KV_SPEC_DRAFT;
	CHECK(!kv_spec_refuses(&in, err));
	in = row(l8, VLLM, 1, &s);
	in.pp = 2;
	CHECK(kv_spec_refuses(&in, err));
	CHECK_HAS(err, "--pp 2");
	/* a row that names no drafter for one (a caller of libkv's) */
	s.draft = NULL;
	in.pp = 1;
	CHECK(kv_spec_refuses(&in, err));
	CHECK_HAS(err, "needs --draft");
	kv_model_free(q72);
	kv_model_free(q3);
	kv_model_free(l8);
	kv_model_free(ds);
}

static uint64_t weights(const struct kv_fit_in *in)
{
	char err[KV_ERRLEN];
	uint64_t b = 0;
	CHECK(kv_spec_weights(in, &b, err) == 0);
	return b;
}

static void test_weights(void)
{
	struct kv_model *l70 = test_load_path("configs/llama-3.1-70b.json");
	struct kv_model *l8 = test_load_path("configs/llama-3.1-8b.json");
	struct kv_model *l1 = test_load_path("tests/configs/llama-3.2-1b-instruct.json");
	struct kv_model *e3 = test_load_path("tests/configs/eagle3-llama3.1-instruct-8b.json");
	struct kv_model *glm = test_load_path("tests/configs/glm-4.7-flash.json");
	struct kv_params p;
	char err[KV_ERRLEN];
	/* a draft model whole, split as the target: 2 x 1,235,814,400 / 4 */
	struct kv_spec s = {.method = KV_SPEC_DRAFT, .draft = l1, .k = 4};
	struct kv_fit_in in = row(l70, VLLM, 4, &s);
	CHECK_U64(weights(&in), 617907200);
	/* EAGLE-3: 374,358,016 f16 split; fc 50,331,648 f16 and 32,000
	 * int64 whole: 849,635,328 at tp 1 (810.3 MiB) */
	s = (struct kv_spec){.method = KV_SPEC_EAGLE3, .draft = e3, .k = 3};
	in = row(l8, VLLM, 1, &s);
	CHECK_U64(weights(&in), 748716032ULL + 100663296 + 256000);
	in.tp = 2;
	CHECK_U64(weights(&in), 374358016ULL + 100663296 + 256000);
	/* the same head as EAGLE(-1)'s rule: the layer less its input norm,
	 * a 2h x h fc whole, the target's head */
	s.method = KV_SPEC_EAGLE;
	in.tp = 1;
	CHECK_U64(weights(&in), 2 * (218112000ULL - 4096) + 2 * 33554432ULL);
	/* MTP: GLM-4.7-Flash's one layer, all bf16: at tp 1 what kvfit
	 * --params counts apart (2 x 643,706,176, its router's 64-expert
	 * score-correction bias among them); at tp 4 the layer split
	 * (635,311,424 of them), eh_proj 2 x 2,048^2 and 3 norms whole */
	CHECK(kv_model_params(glm, &p, err) == 0);
	CHECK_U64(p.mtp, 643706176);
	s = (struct kv_spec){.method = KV_SPEC_MTP, .k = 2};
	in = row(glm, VLLM, 1, &s);
	CHECK_U64(weights(&in), 2 * 643706176ULL);
	in.tp = 4;
	CHECK_U64(weights(&in), 2 * 635311424ULL / 4 + 2 * 8394752ULL);
	/* n-gram lookup: nothing */
	s.method = KV_SPEC_NGRAM;
	CHECK_U64(weights(&in), 0);
	kv_model_free(l70);
	kv_model_free(l8);
	kv_model_free(l1);
	kv_model_free(e3);
	kv_model_free(glm);
}

static uint64_t token_bytes(const struct kv_fit_in *in, uint64_t cell,
			    uint32_t n)
{
	char err[KV_ERRLEN];
	struct kv_opts o = kv_opts_default(in->m);
	uint64_t b = 0;
	o.k_dtype = o.v_dtype = KV_DTYPE_BF16;
	o.tp = in->tp;
	CHECK(kv_spec_token_bytes(in, &o, cell, n, &b, err) == 0);
	return b;
}

static void test_cache(void)
{
	struct kv_model *l70 = test_load_path("configs/llama-3.1-70b.json");
	struct kv_model *l8 = test_load_path("configs/llama-3.1-8b.json");
	struct kv_model *l1 = test_load_path("tests/configs/llama-3.2-1b-instruct.json");
	struct kv_model *e3 = test_load_path("tests/configs/eagle3-llama3.1-instruct-8b.json");
	struct kv_model *ds = test_load_path("configs/deepseek-v3.json");
	struct kv_spec s = {.method = KV_SPEC_DRAFT, .draft = l1, .k = 4};
	/* vLLM: the draft's own 16 layers, 2 of its 8 heads a rank */
	struct kv_fit_in in = row(l70, VLLM, 4, &s);
	CHECK_U64(kv_spec_layers(&in), 16);
	CHECK_U64(token_bytes(&in, 81920, 80), 32768 / 4);
	/* SGLang: its pool as if the 16 draft layers were the target's,
	 * int(81,920 x (1 + 16 / 80)) - 81,920: twice the draft's own */
	in.server = SGLANG;
	CHECK_U64(token_bytes(&in, 81920, 80), 16384);
	/* an EAGLE-3 head: one layer, 8 x 128 x 2 x 2 */
	s = (struct kv_spec){.method = KV_SPEC_EAGLE3, .draft = e3, .k = 3};
	in = row(l8, VLLM, 1, &s);
	CHECK_U64(token_bytes(&in, 131072, 32), 4096);
	in.server = SGLANG; /* 131,072 x 33 / 32 */
	CHECK_U64(token_bytes(&in, 131072, 32), 4096);
	/* DeepSeek V3's MTP layer: a latent of 512 + 64, copied on every
	 * rank */
	s = (struct kv_spec){.method = KV_SPEC_MTP, .k = 3};
	in = row(ds, TRTLLM, 8, &s);
	CHECK_U64(kv_spec_layers(&in), 1);
	CHECK_U64(token_bytes(&in, 61 * 1152, 61), 1152);
	/* the tokens held ahead of the context, and SGLang's cap */
	in.server = VLLM;
	CHECK_U64(kv_spec_lookahead(&in), 3);
	CHECK_U64(kv_spec_max_seqs(&in), 0);
	in.server = SGLANG;
	CHECK_U64(kv_spec_lookahead(&in), 8);
	CHECK_U64(kv_spec_max_seqs(&in), 48);
	in.server = TRTLLM;
	CHECK_U64(kv_spec_lookahead(&in), 2);
	in.server = LLAMACPP;
	CHECK_U64(kv_spec_lookahead(&in), 0);
	s.method = KV_SPEC_NGRAM;
	in.server = VLLM;
	CHECK_U64(kv_spec_lookahead(&in), 0);
	CHECK_U64(kv_spec_layers(&in), 0);
	kv_model_free(l70);
	kv_model_free(l8);
	kv_model_free(l1);
	kv_model_free(e3);
	kv_model_free(ds);
}

static struct kv_fit solve(const struct kv_fit_in *in)
{
	char err[KV_ERRLEN];
	struct kv_fit f;
	int e = kv_fit_solve(in, &f, err);
	if (e)
		fprintf(stderr, "fit: %s\n", err);
	CHECK(e == 0);
	return f;
}

/* A row's users: the ideal engine's exact bytes; vLLM's pool of the
 * target's and the draft's layers; SGLang's cap. */
static void test_fit(void)
{
	struct kv_model *l8 = test_load_path("configs/llama-3.1-8b.json");
	struct kv_model *l70 = test_load_path("configs/llama-3.1-70b.json");
	struct kv_model *l1 = test_load_path("tests/configs/llama-3.2-1b-instruct.json");
	struct kv_model *e3 = test_load_path("tests/configs/eagle3-llama3.1-instruct-8b.json");
	struct kv_spec s = {.method = KV_SPEC_EAGLE3, .draft = e3, .k = 3};
	struct kv_fit_in in = row(l8, IDEAL, 1, &s);
	in.weights = 16 * GB;
	struct kv_fit f = solve(&in);
	/* 80 GB - 16 GB - 849,635,328 B of head, over 8,192 tokens of
	 * 131,072 + 4,096 B: 57 users (59 without the head) */
	CHECK_U64(f.draft_weights, 849635328);
	CHECK_U64(f.draft_per_token, 4096);
	CHECK_U64(f.bytes_per_token, 135168);
	CHECK_U64(f.free_kv, 80 * GB - 16 * GB - 849635328);
	CHECK_U64(f.seq_bytes, 8192ULL * 135168);
	CHECK_U64(f.users_whole, 57);
	CHECK_U64(f.step_token_bytes, 131072); /* the verify writes the
						  target's */
	in.spec = NULL;
	CHECK_U64(solve(&in).users_whole, 59);
	/* vLLM, 70B at tp 4 with the 1B draft: one page of every layer,
	 * 16 x (81,920 + 8,192) B; 8,192 + 4 tokens held, 513 pages */
	s = (struct kv_spec){.method = KV_SPEC_DRAFT, .draft = l1, .k = 4};
	in = row(l70, VLLM, 4, &s);
	f = solve(&in);
	CHECK_U64(f.lookahead, 4);
	CHECK_U64(f.draft_weights, 617907200);
	CHECK_U64(f.bytes_per_token, 81920 + 8192);
	CHECK_U64(f.num_blocks, f.free_kv / (16 * 90112));
	CHECK_U64(f.users_whole, f.num_blocks / 513);
	/* SGLang caps the running requests at 48 while it drafts */
	in.server = SGLANG;
	in.ctx = 1024;
	f = solve(&in);
	CHECK_U64(f.max_seqs, 48);
	CHECK_U64(f.users_whole, 48);
	CHECK_U64(f.bytes_per_token, 81920 + 16384);
	kv_model_free(l8);
	kv_model_free(l70);
	kv_model_free(l1);
	kv_model_free(e3);
}

static struct kv_serve serve_of(const struct kv_fit_in *in, uint64_t users,
				 uint64_t isl, uint64_t osl)
{
	char err[KV_ERRLEN];
	struct kv_serve_in w = {.isl = isl, .osl = osl, .users = users};
	struct kv_serve s;
	int e = kv_serve_solve(in, &w, &s, err);
	if (e)
		fprintf(stderr, "serve: %s\n", err);
	CHECK(e == 0);
	return s;
}

static struct kv_serve serve(const struct kv_fit_in *in, uint64_t users)
{
	return serve_of(in, users, 1024, 256);
}

/*
 * A round of one user of Llama 3.1 8B with the EAGLE-3 head, k 3, A 0.8,
 * the ideal engine (test_serve's figures: 14,953,286,207 B of weights a
 * step reads, 131,072 KV bytes a token), each step held by its bytes at
 * 3,350 GB/s. The verify step reads the weights once, the 1,152 tokens of
 * context and writes 4. Each of the head's 3 passes reads its layer, norm
 * and 32,000-row head (349,188,096 parameters), its fc and wider q/k/v
 * (75,497,472), all f16, its one layer's 4,096 B a token of context, and
 * writes 4 tokens, then 1 and 1. A round gives 2.952 tokens.
 */
static void test_round(void)
{
	struct kv_model *l8 = test_load_path("configs/llama-3.1-8b.json");
	struct kv_model *e3 = test_load_path("tests/configs/eagle3-llama3.1-instruct-8b.json");
	struct kv_spec s = {.method = KV_SPEC_EAGLE3, .draft = e3, .k = 3,
			    .accept = 0.8};
	struct kv_fit_in in = row(l8, IDEAL, 1, &s);
	in.weights = 16 * GB;
	struct kv_serve r = serve(&in, 1);
	double verify = 14953286207.0 + 131072.0 * 1152 + 4 * 131072.0;
	double pass = 2 * (349188096.0 + 75497472.0) + 4096.0 * 1152;
	double draft = 3 * pass + 4096.0 * (4 + 1 + 1);
	CHECK_U64(r.decode_ctx, 1152);
	CHECK_REL(r.spec_tokens, 2.952);
	CHECK_REL(r.draft.bytes, draft);
	CHECK_REL(r.decode.bytes, verify + draft);
	CHECK_REL(r.decode.ms, (verify + draft) / 3.35e12 * 1e3);
	CHECK(strcmp(r.decode.bound, "memory") == 0);
	/* one user: each output token a round's share */
	CHECK_REL(r.tpot_ms, r.decode.ms / 2.952);
	/* the verify's FLOPs: 4 tokens' products and logits, each attending
	 * over the context (test_serve's LIN, HEAD, ATT) */
	double lin = 2 * 6979584000.0, head = 2 * 128256.0 * 4096;
	CHECK_REL(r.decode.flops - r.draft.flops,
		  4 * (lin + head + 524288.0 * 1152));
	/* where it stops paying: at one user a round of ~3 tokens costs
	 * little more than a step; at 512 users of short requests the
	 * verify's 2,048 tokens are compute-bound and cost more than the
	 * tokens they give (the cache, read once a round, is small) */
	struct kv_fit_in plain = in;
	plain.spec = NULL;
	CHECK(r.tpot_ms < serve(&plain, 1).tpot_ms / 2);
	in.ctx = plain.ctx = 128;
	CHECK(serve_of(&in, 1, 64, 64).tpot_ms <
	      serve_of(&plain, 1, 64, 64).tpot_ms);
	CHECK(serve_of(&in, 512, 64, 64).tpot_ms >
	      serve_of(&plain, 512, 64, 64).tpot_ms);
	/* n-gram lookup: the verify alone */
	s = (struct kv_spec){.method = KV_SPEC_NGRAM, .k = 3, .accept = 0.5};
	in = row(l8, IDEAL, 1, &s);
	in.weights = 16 * GB;
	r = serve(&in, 1);
	CHECK_REL(r.draft.bytes, 0);
	CHECK_REL(r.decode.bytes, verify);
	kv_model_free(l8);
	kv_model_free(e3);
}

/*
 * The engine's cost a step, 100 us given (--step-us), on test_round's
 * round: the verify pays it and so does each of the head's 3 passes, a
 * forward the engine prepares and samples from (vLLM's propose, SGLang's
 * draft_forward): 0.4 ms more a round than at none, 0.3 of it the
 * drafter's. TensorRT-LLM runs EAGLE-3's passes inside the model's
 * forward (its one-model worker): the same bytes, no step cost of their
 * own; its draft model's passes pay it.
 */
static void test_draft_steps(void)
{
	struct kv_model *l8 = test_load_path("configs/llama-3.1-8b.json");
	struct kv_model *e3 = test_load_path("tests/configs/eagle3-llama3.1-instruct-8b.json");
	struct kv_model *l1 = test_load_path("tests/configs/llama-3.2-1b-instruct.json");
	struct kv_spec s = {.method = KV_SPEC_EAGLE3, .draft = e3, .k = 3,
			    .accept = 0.8};
	char err[KV_ERRLEN];
	struct kv_serve r0, r1, t1;
	struct kv_serve_in w = {.isl = 1024, .osl = 256, .users = 1,
				.step_given = true};
	struct kv_fit_in in = row(l8, IDEAL, 1, &s);
	in.weights = 16 * GB;
	CHECK(kv_serve_solve(&in, &w, &r0, err) == 0);
	w.step_us = 100;
	CHECK(kv_serve_solve(&in, &w, &r1, err) == 0);
	CHECK_NEAR(r1.decode.ms - r0.decode.ms, 0.4, 1e-9);
	CHECK_NEAR(r1.draft.ms - r0.draft.ms, 0.3, 1e-9);
	in.server = TRTLLM;
	CHECK(kv_serve_solve(&in, &w, &t1, err) == 0);
	CHECK_REL(t1.draft.bytes, r1.draft.bytes);
	CHECK_NEAR(t1.draft.ms, r0.draft.ms, 1e-9);
	s = (struct kv_spec){.method = KV_SPEC_DRAFT, .draft = l1, .k = 3,
			     .accept = 0.8};
	in = row(l8, TRTLLM, 1, &s);
	in.weights = 16 * GB;
	CHECK(kv_serve_solve(&in, &w, &t1, err) == 0);
	w.step_us = 0;
	CHECK(kv_serve_solve(&in, &w, &r0, err) == 0);
	CHECK_NEAR(t1.draft.ms - r0.draft.ms, 0.3, 1e-9);
	kv_model_free(l8);
	kv_model_free(e3);
	kv_model_free(l1);
}

/* What the configs say of their drafters: the MTP layers by each
 * family's name for them, an EAGLE-3 head's own vocabulary. */
static void test_configs(void)
{
	struct kv_model *m = test_load_path("tests/configs/qwen3-next-80b-a3b-instruct.json");
	CHECK_U64(m->n_mtp_layers, 1); /* none named: vLLM's default */
	kv_model_free(m);
	m = test_load_path("tests/configs/qwen3.5-9b.json"); /* mtp_num_hidden_layers */
	CHECK_U64(m->n_mtp_layers, 1);
	kv_model_free(m);
	m = test_load_path("configs/deepseek-v3.json");
	CHECK_U64(m->n_mtp_layers, 1);
	kv_model_free(m);
	m = test_load_path("configs/llama-3.1-8b.json");
	CHECK_U64(m->n_mtp_layers, 0);
	CHECK_U64(m->draft_vocab, 0);
	kv_model_free(m);
	m = test_load_path("tests/configs/eagle3-llama3.1-instruct-8b.json");
	CHECK_U64(m->draft_vocab, 32000);
	CHECK_U64(m->n_layers, 1);
	kv_model_free(m);
}

/* The engines' names of the methods, and vLLM's JSON of them
 * (vllm/config/speculative.py, f19b16d9; SGLang's speculative_hook.py,
 * 004c82e0). */
static void test_engine_names(void)
{
	enum kv_spec_method m = KV_SPEC_NONE;
	struct kv_spec s = {0};
	char model[64], err[KV_ERRLEN];
	CHECK(kv_spec_method_parse("draft_model", &m) == 0 &&
	      m == KV_SPEC_DRAFT);
	CHECK(kv_spec_method_parse("NEXTN", &m) == 0 && m == KV_SPEC_MTP);
	CHECK(kv_spec_method_parse("STANDALONE", &m) == 0 &&
	      m == KV_SPEC_DRAFT);
	CHECK(kv_spec_method_parse("deepseek_mtp", &m) == 0 &&
	      m == KV_SPEC_MTP);
	CHECK(kv_spec_method_parse("_mtp", &m) == KV_EINVAL);
	CHECK_STR(kv_spec_engine_method(KV_SERVER_VLLM, KV_SPEC_EAGLE3),
		  "eagle3");
	CHECK_STR(kv_spec_engine_method(KV_SERVER_SGLANG, KV_SPEC_MTP),
		  "NEXTN");
	CHECK(kv_spec_engine_method(KV_SERVER_LLAMACPP, KV_SPEC_DRAFT) ==
	      NULL);
	CHECK(kv_spec_vllm_parse("{\"method\": \"eagle3\", \"model\": "
				 "\"org/head\", \"num_speculative_tokens\": 3}",
				 &s, model, sizeof model, err) == 0);
	CHECK(s.method == KV_SPEC_EAGLE3 && s.k == 3);
	CHECK_STR(model, "org/head");
	CHECK(kv_spec_vllm_parse("{\"model\": \"d\", "
				 "\"num_speculative_tokens\": 5}",
				 &s, model, sizeof model, err) == 0);
	CHECK(s.method == KV_SPEC_DRAFT && s.k == 5); /* a model alone */
	CHECK(kv_spec_vllm_parse("{\"method\": \"ngram\", "
				 "\"num_speculative_tokens\": 4}",
				 &s, model, sizeof model, err) == 0);
	CHECK(s.method == KV_SPEC_NGRAM && !model[0]);
	CHECK(kv_spec_vllm_parse("{\"method\": \"mtp\"}", &s, model,
				 sizeof model, err) == KV_EINVAL);
	CHECK(strstr(err, "num_speculative_tokens") != NULL);
	CHECK(kv_spec_vllm_parse("{\"method\": \"medusa\", "
				 "\"num_speculative_tokens\": 2}",
				 &s, model, sizeof model, err) == KV_EINVAL);
	CHECK(kv_spec_vllm_parse("[3]", &s, model, sizeof model, err) ==
	      KV_EINVAL);
}

int main(void)
{
	test_configs();
	test_engine_names();
	test_tokens();
	test_check();
	test_weights();
	test_cache();
	test_fit();
	test_round();
	test_draft_steps();
	printf("test_spec: %d checks, %d failed\n", test_checks,
	       test_failures);
	return test_failures != 0;
}
