/*
 * test_layout.c - every formula of layout.c on shapes small enough to work
 * by hand, then the articles' figures on the shipped configs.
 */
#include <stdlib.h>

#include "kv/layout.h"
#include "test.h"

static struct kv_model *parse(const char *json)
{
	struct kv_model *m = NULL;
	char err[KV_ERRLEN];
	if (kv_model_parse(json, strlen(json), "t.json", &m, err)) {
		fprintf(stderr, "parse: %s\n", err);
		test_failures++;
	}
	return m;
}

static uint64_t per_token(const struct kv_model *m, const struct kv_opts *o)
{
	uint64_t b = 0;
	char err[KV_ERRLEN];
	CHECK(kv_model_token_bytes(m, o, &b, err) == 0);
	return b;
}

static uint64_t total(const struct kv_model *m, const struct kv_opts *o,
		      uint64_t ctx, uint64_t users)
{
	uint64_t b = 0;
	char err[KV_ERRLEN];
	CHECK(kv_model_bytes(m, o, ctx, users, &b, err) == 0);
	return b;
}

/* 4 layers, 8 query heads, 2 KV heads of 16: 2 x 2 x 16 x 2 B = 128 B per
 * layer per token in bf16, 512 B for the model. */
static void test_gqa(void)
{
	struct kv_model *m = parse(
		"{\"model_type\":\"llama\",\"num_hidden_layers\":4,"
		"\"hidden_size\":128,\"num_attention_heads\":8,"
		"\"num_key_value_heads\":2,\"torch_dtype\":\"bfloat16\"}");
	if (!m)
		return;
	struct kv_opts o = kv_opts_default(m);
	CHECK_U64(per_token(m, &o), 512);
	CHECK_U64(total(m, &o, 1000, 3), 512ULL * 1000 * 3);
	o.mha = true; /* 8 heads: 4x */
	CHECK_U64(per_token(m, &o), 2048);
	o.mha = false;
	o.k_dtype = o.v_dtype = KV_DTYPE_INT8; /* 2 x 2 x (16 + 4) x 4 */
	CHECK_U64(per_token(m, &o), 320);
	o.k_dtype = o.v_dtype = KV_DTYPE_Q8_0; /* 16 values: no whole block */
	uint64_t b;
	char err[KV_ERRLEN];
	CHECK(kv_model_token_bytes(m, &o, &b, err) == KV_EINVAL);
	CHECK_HAS(err, "q8_0 packs 32 values per block");
	CHECK_HAS(err, "head of 16 values");
	/* K and V may differ */
	o.k_dtype = KV_DTYPE_F32;
	o.v_dtype = KV_DTYPE_FP8; /* 2 x (64 + 16) x 4 layers */
	CHECK_U64(per_token(m, &o), 640);
	kv_model_free(m);
}

/* tensor parallel: heads split, replicated past the KV head count */
static void test_tp(void)
{
	struct kv_model *m = parse(
		"{\"num_hidden_layers\":2,\"hidden_size\":256,"
		"\"num_attention_heads\":16,\"num_key_value_heads\":4,"
		"\"head_dim\":32,\"torch_dtype\":\"float16\"}");
	if (!m)
		return;
	struct kv_opts o = kv_opts_default(m);
	uint64_t one = per_token(m, &o); /* 2 x 4 x 2 x 32 x 2 = 1024 */
	CHECK_U64(one, 1024);
	o.tp = 2;
	CHECK_U64(per_token(m, &o), 512);
	o.tp = 4;
	CHECK_U64(per_token(m, &o), 256);
	o.tp = 8; /* each rank keeps one head: 2 ranks per head */
	CHECK_U64(per_token(m, &o), 256);
	struct kv_geom g;
	char err[KV_ERRLEN];
	CHECK(kv_layer_geom(m, 0, &o, &g, err) == 0 && g.replicated &&
	      g.heads == 1);
	o.tp = 16;
	CHECK_U64(per_token(m, &o), 256);
	o.tp = 3;
	uint64_t b;
	CHECK(kv_model_token_bytes(m, &o, &b, err) == KV_EINVAL);
	CHECK_HAS(err, "does not divide the 16 attention heads");
	kv_model_free(m);

	/* 8 query heads, 4 KV heads, tp 8: q splits, KV replicated */
	m = parse("{\"num_hidden_layers\":1,\"hidden_size\":96,"
		  "\"num_attention_heads\":24,\"num_key_value_heads\":6}");
	if (!m)
		return;
	o = kv_opts_default(m);
	o.tp = 4; /* 6 KV heads, 4 ranks: neither divides */
	CHECK(kv_model_token_bytes(m, &o, &b, err) == KV_EINVAL);
	CHECK_HAS(err, "does not divide the 6 KV heads");
	o.tp = 12;
	CHECK(kv_model_token_bytes(m, &o, &b, err) == 0);
	o.tp = 8; /* 24 % 8 == 0, but 8 is not a multiple of 6 */
	CHECK(kv_model_token_bytes(m, &o, &b, err) == KV_EINVAL);
	CHECK_HAS(err, "not a multiple");
	kv_model_free(m);
}

/* Mistral-style window on every layer; Gemma-2 alternation; pages */
static void test_windows(void)
{
	struct kv_model *m = parse(
		"{\"model_type\":\"mistral\",\"num_hidden_layers\":2,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"num_key_value_heads\":1,\"sliding_window\":100,"
		"\"torch_dtype\":\"float32\"}");
	if (!m)
		return;
	struct kv_opts o = kv_opts_default(m);
	/* per layer per token: 2 x 16 x 4 = 128 B */
	CHECK_U64(per_token(m, &o), 256);
	CHECK_U64(total(m, &o, 50, 1), 50 * 256);
	CHECK_U64(total(m, &o, 1000, 1), 100 * 256); /* window full */
	o.block = 16; /* 50 -> 64 tokens, window 100 -> 112 */
	CHECK_U64(total(m, &o, 50, 1), 64 * 256);
	CHECK_U64(total(m, &o, 1000, 2), 2 * 112 * 256);
	kv_model_free(m);

	/* Mistral without the field takes its reference's 4096 window */
	m = parse("{\"model_type\":\"mistral\",\"num_hidden_layers\":1,"
		  "\"hidden_size\":64,\"num_attention_heads\":4}");
	if (m) {
		CHECK_U64(m->layers[0].window, 4096);
		kv_model_free(m);
	}
	/* ... and null says: no window */
	m = parse("{\"model_type\":\"mistral\",\"num_hidden_layers\":1,"
		  "\"hidden_size\":64,\"num_attention_heads\":4,"
		  "\"sliding_window\":null}");
	if (m) {
		CHECK(m->layers[0].attn == KV_ATTN_FULL);
		kv_model_free(m);
	}

	/* Gemma 2: even layers slide, odd layers keep all */
	m = parse("{\"model_type\":\"gemma2\",\"num_hidden_layers\":4,"
		  "\"hidden_size\":64,\"num_attention_heads\":2,"
		  "\"num_key_value_heads\":1,\"head_dim\":32,"
		  "\"sliding_window\":10,\"torch_dtype\":\"bfloat16\"}");
	if (!m)
		return;
	o = kv_opts_default(m);
	CHECK(m->layers[0].attn == KV_ATTN_SLIDING);
	CHECK(m->layers[1].attn == KV_ATTN_FULL);
	/* 128 B per layer per token: 2 full x 1000 + 2 sliding x 10 */
	CHECK_U64(total(m, &o, 1000, 1), 128 * (2 * 1000 + 2 * 10));
	CHECK_U64(per_token(m, &o), 512);
	kv_model_free(m);

	/* Qwen: windows only with use_sliding_window, from layer
	 * max_window_layers up */
	m = parse("{\"model_type\":\"qwen2\",\"num_hidden_layers\":4,"
		  "\"hidden_size\":64,\"num_attention_heads\":4,"
		  "\"sliding_window\":8,\"use_sliding_window\":true,"
		  "\"max_window_layers\":3}");
	if (m) {
		CHECK(m->layers[2].attn == KV_ATTN_FULL);
		CHECK(m->layers[3].attn == KV_ATTN_SLIDING);
		kv_model_free(m);
	}
	m = parse("{\"model_type\":\"qwen2\",\"num_hidden_layers\":4,"
		  "\"hidden_size\":64,\"num_attention_heads\":4,"
		  "\"sliding_window\":8}");
	if (m) {
		CHECK(m->layers[3].attn == KV_ATTN_FULL);
		kv_model_free(m);
	}
}

/* MLA keeps one latent, no x2; --mha gives per-head K and V */
static void test_mla(void)
{
	struct kv_model *m = parse(
		"{\"model_type\":\"deepseek_v3\",\"num_hidden_layers\":2,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"kv_lora_rank\":32,\"qk_rope_head_dim\":8,"
		"\"qk_nope_head_dim\":16,\"v_head_dim\":12,"
		"\"q_lora_rank\":null,\"torch_dtype\":\"bfloat16\"}");
	if (!m)
		return;
	struct kv_opts o = kv_opts_default(m);
	CHECK_U64(per_token(m, &o), 2 * (32 + 8) * 2);
	o.mha = true; /* 4 heads x (24 + 12) x 2 B x 2 layers */
	CHECK_U64(per_token(m, &o), 4 * (24 + 12) * 2 * 2);
	o.mha = false;
	o.tp = 4; /* the latent is copied on every rank */
	CHECK_U64(per_token(m, &o), 2 * (32 + 8) * 2);
	o.k_dtype = o.v_dtype = KV_DTYPE_INT8; /* one scale per latent */
	CHECK_U64(per_token(m, &o), 2 * (40 + 4));
	kv_model_free(m);

	/* MiniCPM3 caches the heads its latent makes: 4 heads x (K 16 + 8,
	 * V 64 / 4 = 16, its class's default) x 2 B x 2 layers; split, not
	 * copied, over tensor-parallel ranks */
	m = parse("{\"model_type\":\"minicpm3\",\"num_hidden_layers\":2,"
		  "\"hidden_size\":64,\"num_attention_heads\":4,"
		  "\"kv_lora_rank\":32,\"qk_rope_head_dim\":8,"
		  "\"qk_nope_head_dim\":16,\"torch_dtype\":\"bfloat16\"}");
	if (!m)
		return;
	o = kv_opts_default(m);
	CHECK_U64(per_token(m, &o), 4 * (24 + 16) * 2 * 2);
	o.tp = 4;
	CHECK_U64(per_token(m, &o), (24 + 16) * 2 * 2);
	kv_model_free(m);
}

/* DeepSeek V3.2: beside each latent, the indexer's key of index_head_dim
 * values in fp8 with an f32 scale per 128 (here 64 + 4 = 68 B), whatever
 * the cache's format, and on every rank. */
static void test_indexer(void)
{
	struct kv_model *m = parse(
		"{\"model_type\":\"deepseek_v32\",\"num_hidden_layers\":2,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"kv_lora_rank\":32,\"qk_rope_head_dim\":8,"
		"\"index_head_dim\":64,\"torch_dtype\":\"bfloat16\"}");
	if (!m)
		return;
	struct kv_opts o = kv_opts_default(m);
	CHECK_U64(per_token(m, &o), 2 * ((32 + 8) * 2 + 68));
	CHECK_U64(total(m, &o, 10, 3), 2 * ((32 + 8) * 2 + 68) * 10 * 3);
	o.k_dtype = o.v_dtype = KV_DTYPE_FP8;
	CHECK_U64(per_token(m, &o), 2 * (40 + 68));
	o.tp = 4;
	CHECK_U64(per_token(m, &o), 2 * (40 + 68));
	kv_model_free(m);
	/* the default key, 128 values and one scale: 132 B; V3 has none */
	static const char v3[] =
		"{\"model_type\":\"deepseek_v3\",\"num_hidden_layers\":1,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"torch_dtype\":\"bfloat16\"%s}";
	char json[256];
	for (int topk = 0; topk < 2; topk++) {
		snprintf(json, sizeof json, v3,
			 topk ? ",\"index_topk\":2048" : "");
		if (!(m = parse(json)))
			continue;
		o = kv_opts_default(m);
		CHECK_U64(per_token(m, &o), (512 + 64) * 2 + (topk ? 132 : 0));
		kv_model_free(m);
	}
}

/* The state of `users` sequences over tp ranks, the model's own dtype. */
static uint64_t state_of(const struct kv_model *m, uint32_t tp,
			 uint64_t users)
{
	struct kv_opts o = kv_opts_default(m);
	uint64_t st = 0;
	o.tp = tp;
	CHECK(kv_model_state_bytes(m, &o, users, &st) == 0);
	return st;
}

/* Mamba-2's state: conv over d_inner + 2 groups x d_state channels, SSM
 * d_inner x d_state; 2 layers of 128 channels, 2 groups of 16, kernel 4,
 * bf16: 2 x ((128 + 64) x 4 + 128 x 16) x 2 B = 11,264 B a sequence. */
static void test_mamba2_state(void)
{
	struct kv_model *m = parse(
		"{\"model_type\":\"mamba2\",\"num_hidden_layers\":2,"
		"\"hidden_size\":64,\"num_heads\":4,\"head_dim\":32,"
		"\"n_groups\":2,\"state_size\":16,"
		"\"torch_dtype\":\"bfloat16\"}");
	if (!m)
		return;
	struct kv_opts o = kv_opts_default(m);
	CHECK_U64(state_of(m, 1, 3), 3 * 2 * ((128 + 64) * 4 + 128 * 16) * 2);
	CHECK_U64(per_token(m, &o), 0);
	/* channels split over 2 ranks */
	CHECK_U64(state_of(m, 2, 1), 2 * ((64 + 32) * 4 + 64 * 16) * 2);
	kv_model_free(m);
}

/* A gated DeltaNet (Qwen3-Next): conv over 2 key heads x 8 + 4 value
 * heads x 16 channels, kernel 4, in bf16; recurrent state of 4 heads of
 * 8 x 16 in mamba_ssm_dtype f32; layers 0..2 linear: 3 x (96 x 4 x 2 +
 * 64 x 8 x 4) = 4,608 B a sequence. */
static void test_deltanet_state(void)
{
	struct kv_model *m = parse(
		"{\"model_type\":\"qwen3_next\",\"num_hidden_layers\":4,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"linear_num_key_heads\":2,\"linear_key_head_dim\":8,"
		"\"linear_num_value_heads\":4,\"linear_value_head_dim\":16,"
		"\"mamba_ssm_dtype\":\"float32\","
		"\"torch_dtype\":\"bfloat16\"}");
	if (!m)
		return;
	CHECK_U64(state_of(m, 1, 1), 3 * (96 * 4 * 2 + 64 * 8 * 4));
	kv_model_free(m);
}

/* MiniMax's lightning attention: layers 0 and 2 linear, each a state of
 * 4 heads x 16 x 16 in bf16: 2 x 2,048 B a sequence; over 2 ranks, 2
 * heads each. The 2 softmax layers keep 2 KV heads of 16: 256 B a
 * token. */
static void test_lightning_state(void)
{
	struct kv_model *m = parse(
		"{\"model_type\":\"minimax\",\"num_hidden_layers\":4,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"num_key_value_heads\":2,\"head_dim\":16,"
		"\"attn_type_list\":[0,1,0,1],\"torch_dtype\":\"bfloat16\"}");
	if (!m)
		return;
	struct kv_opts o = kv_opts_default(m);
	CHECK_U64(state_of(m, 1, 1), 2 * 4 * 16 * 16 * 2);
	CHECK_U64(state_of(m, 2, 3), 3 * 2 * 2 * 16 * 16 * 2);
	CHECK_U64(per_token(m, &o), 2 * 2 * 16 * 2 * 2);
	kv_model_free(m);
}

/* The states of published configs, a sequence each, worked by hand:
 * - Kimi Linear's KDA: 20 layers, each a convolution of kernel 4 over q,
 *   k and v of 32 heads x 128 in bf16 and a float32 state of 32 heads x
 *   128 x 128 (43,909,120 B);
 * - RecurrentGemma 2B: 18 recurrent layers, each the convolution's last 3
 *   inputs of 2,560 channels and a float32 value per channel, in f32 (the
 *   config names no dtype);
 * - Zamba2 2.7B: a Mamba-2 mixer in all 54 layers, the attention ones
 *   too, (5120 + 2 x 64) x 4 + 5120 x 64 values in bf16 each;
 * - Zamba 7B: a Mamba-1 mixer in all 76 layers, 7424 channels x (4 + 16)
 *   values in bf16 each;
 * - LFM2.5-VL 1.6B: 10 short-convolution layers, each the last 3 inputs
 *   of 2048 channels in bf16. */
static void test_published_states(void)
{
	static const struct {
		const char *config;
		uint32_t version;
		uint64_t state;
	} cases[] = {
		{"../tests/configs/kimi-linear-48b-a3b", 5,
		 20ULL * (12288 * 4 * 2 + 4096ULL * 128 * 4)},
		{"../tests/configs/recurrentgemma-2b", 6,
		 18ULL * (2560 * 3 * 4 + 2560 * 4)},
		{"../tests/configs/zamba2-2.7b", 2,
		 54ULL * ((5248 * 4 + 5120 * 64) * 2)},
		{"../tests/configs/zamba-7b", 1, 76ULL * 7424 * (4 + 16) * 2},
		{"../tests/configs/lfm2.5-vl-1.6b", 7, 10ULL * 2048 * 3 * 2},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct kv_model *m = test_load(cases[i].config);
		if (!m)
			continue;
		CHECK_U64(m->ssm_version, cases[i].version);
		CHECK_U64(state_of(m, 1, 1), cases[i].state);
		kv_model_free(m);
	}
}

/* Jamba: attention every period-th layer; Mamba state separately */
static void test_hybrid(void)
{
	struct kv_model *m = parse(
		"{\"model_type\":\"jamba\",\"num_hidden_layers\":8,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"num_key_value_heads\":2,\"attn_layer_period\":4,"
		"\"attn_layer_offset\":1,\"mamba_d_state\":16,"
		"\"mamba_d_conv\":4,\"mamba_expand\":2,"
		"\"torch_dtype\":\"bfloat16\"}");
	if (!m)
		return;
	struct kv_opts o = kv_opts_default(m);
	CHECK(m->layers[1].attn == KV_ATTN_FULL);
	CHECK(m->layers[5].attn == KV_ATTN_FULL);
	CHECK(m->layers[0].attn == KV_ATTN_NONE);
	/* 2 layers x 2 heads x 16 x 2 x 2 B */
	CHECK_U64(per_token(m, &o), 256);
	uint64_t st;
	/* 6 Mamba layers x 128 channels x (4 + 16) x 2 B x 3 users */
	CHECK(kv_model_state_bytes(m, &o, 3, &st) == 0);
	CHECK_U64(st, 6ULL * 128 * 20 * 2 * 3);
	o.tp = 2;
	CHECK(kv_model_state_bytes(m, &o, 1, &st) == 0);
	CHECK_U64(st, 6ULL * 64 * 20 * 2);
	struct kv_summary s;
	char err[KV_ERRLEN];
	o.tp = 1;
	CHECK(kv_model_summary(m, &o, &s, err) == 0);
	CHECK_U64(s.layers, 2);
	kv_model_free(m);

	/* explicit layer_types with a linear-attention kind */
	m = parse("{\"num_hidden_layers\":3,\"hidden_size\":64,"
		  "\"num_attention_heads\":4,\"layer_types\":"
		  "[\"linear_attention\",\"full_attention\","
		  "\"sliding_attention\"],\"sliding_window\":5}");
	if (m) {
		CHECK(m->layers[0].attn == KV_ATTN_NONE);
		CHECK(m->layers[2].attn == KV_ATTN_SLIDING);
		CHECK_U64(m->layers[2].window, 5);
		kv_model_free(m);
	}
}

static void test_overflow(void)
{
	struct kv_model *m = parse(
		"{\"num_hidden_layers\":10000,\"hidden_size\":1048576,"
		"\"num_attention_heads\":65536,\"head_dim\":65536}");
	if (!m)
		return;
	struct kv_opts o = kv_opts_default(m);
	/* the largest accepted fields still fit per token... */
	CHECK_U64(per_token(m, &o), 10000ULL * 65536 * 65536 * 2 * 4);
	/* ...and a context that would overflow is refused */
	uint64_t b;
	char err[KV_ERRLEN];
	CHECK(kv_model_bytes(m, &o, 1ULL << 20, 1, &b, err) == KV_ERANGE);
	CHECK_HAS(err, "overflows 64 bits");
	kv_model_free(m);
}

/* the articles' figures, from the shipped configs */
static void test_articles(void)
{
	struct kv_model *m = test_load("gpt2");
	if (m) {
		struct kv_opts o = kv_opts_default(m);
		CHECK_U64(per_token(m, &o), 73728);
		CHECK_U64(total(m, &o, 8192, 1), 603979776ULL);
		CHECK_U64(total(m, &o, 1000, 1), 73728000ULL);
		CHECK_U64(total(m, &o, 32000, 1), 2359296000ULL);
		kv_model_free(m);
	}
	m = test_load("llama-3.1-8b");
	if (m) {
		struct kv_opts o = kv_opts_default(m);
		CHECK_U64(per_token(m, &o), 131072);
		CHECK_U64(total(m, &o, 8192, 1), 1073741824ULL);
		CHECK_U64(total(m, &o, 30000, 1), 3932160000ULL);
		CHECK_U64(total(m, &o, 30000, 20), 78643200000ULL);
		o.mha = true;
		CHECK_U64(per_token(m, &o), 524288);
		CHECK_U64(total(m, &o, 30000, 1), 15728640000ULL);
		o.mha = false;
		o.k_dtype = o.v_dtype = KV_DTYPE_FP8;
		CHECK_U64(total(m, &o, 8192, 1), 536870912ULL);
		o.k_dtype = o.v_dtype = KV_DTYPE_Q8_0;
		CHECK_U64(per_token(m, &o), 69632);
		o.k_dtype = o.v_dtype = KV_DTYPE_Q5_1;
		CHECK_U64(per_token(m, &o), 49152);
		o.k_dtype = o.v_dtype = KV_DTYPE_Q4_0;
		CHECK_U64(per_token(m, &o), 36864);
		o.k_dtype = o.v_dtype = KV_DTYPE_IQ4_NL;
		CHECK_U64(per_token(m, &o), 36864);
		o = kv_opts_default(m);
		o.tp = 8;
		CHECK_U64(per_token(m, &o), 16384);
		kv_model_free(m);
	}
	m = test_load("llama-3.1-70b");
	if (m) {
		struct kv_opts o = kv_opts_default(m);
		CHECK_U64(total(m, &o, 8192, 1), 2684354560ULL);
		kv_model_free(m);
	}
	m = test_load("deepseek-v3");
	if (m) {
		struct kv_opts o = kv_opts_default(m);
		CHECK_U64(per_token(m, &o), 70272);
		CHECK_U64(total(m, &o, 8192, 1), 575668224ULL);
		o.mha = true;
		CHECK_U64(per_token(m, &o), 4997120);
		CHECK_U64(total(m, &o, 8192, 1), 40936407040ULL);
		kv_model_free(m);
	}
	/* Gemma 3 27B: 10 of 62 layers global, 52 slide over 1024 */
	m = test_load("gemma-3-27b");
	if (m) {
		struct kv_opts o = kv_opts_default(m);
		CHECK_U64(total(m, &o, 32768, 1),
			  8192ULL * (10 * 32768 + 52 * 1024));
		kv_model_free(m);
	}
	/* Llama 4 Scout: 36 chunked layers (8192), 12 global */
	m = test_load("llama-4-scout");
	if (m) {
		struct kv_opts o = kv_opts_default(m);
		CHECK_U64(total(m, &o, 32768, 1),
			  4096ULL * (12 * 32768 + 36 * 8192));
		kv_model_free(m);
	}
}

int main(void)
{
	test_gqa();
	test_tp();
	test_windows();
	test_mla();
	test_indexer();
	test_mamba2_state();
	test_deltanet_state();
	test_lightning_state();
	test_published_states();
	test_hybrid();
	test_overflow();
	test_articles();
	return test_done("test_layout");
}
