/*
 * test_mla.c - multi-head latent attention in the decode engine: the
 * latent kernel on a case worked by hand and against its portable form,
 * the absorbed (cached) and plain (uncached) forms giving the same tokens
 * and logits on GPT-2, Llama-style and DeepSeek blocks, the cache's bytes
 * being kvsize's MLA figure, the byte and FLOP counts of a pass, and the
 * refusals of options that do not fit the shape.
 *
 * Tolerance of the logits: the two forms sum the same products in other
 * orders (a score is q_nope W_UK c + q_rope k_rope either way, an output
 * (p c) W_UV or p (c W_UV)). To first order a float32 sum of K products
 * is off by at most K u times the sum of their magnitudes (u = 2^-24);
 * with K = rank + nope + rope <= 56 here that is below 3.4e-6 of each
 * score's magnitude, which stays below one at these weights' scale, and
 * the same for every value. A few layers and the head add errors of the
 * same size, so 1e-5 on logits of order one bounds them, as for the plain
 * engine's two paths; dropping a term or a rotation moves the logits by
 * 1e-2 or more, and a changed first token moves the last logits by more
 * than 1e-3 (checked below), so the bound tells the forms apart.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "kv/decode.h"
#include "kv/engine.h"
#include "kv/layout.h"
#include "engine/mla.h"
#include "test.h"

#define TOL 1e-5

static const char gpt2_json[] =
	"{\"model_type\":\"gpt2\",\"n_layer\":2,\"n_embd\":192,"
	"\"n_head\":12,\"n_inner\":256,\"vocab_size\":101,"
	"\"n_positions\":64}";
static const char llama_json[] =
	"{\"model_type\":\"llama\",\"num_hidden_layers\":2,"
	"\"hidden_size\":192,\"num_attention_heads\":12,"
	"\"num_key_value_heads\":12,\"intermediate_size\":256,"
	"\"vocab_size\":101,\"max_position_embeddings\":64}";
/* DeepSeek-V2's shape in small: q through a low rank, MoE layers from
 * the second (run dense), a value head that is not a multiple of 8 */
static const char ds_json[] =
	"{\"model_type\":\"deepseek_v2\",\"num_hidden_layers\":3,"
	"\"hidden_size\":64,\"num_attention_heads\":4,"
	"\"num_key_value_heads\":4,\"intermediate_size\":96,"
	"\"moe_intermediate_size\":32,\"n_routed_experts\":4,"
	"\"num_experts_per_tok\":2,\"n_shared_experts\":1,"
	"\"first_k_dense_replace\":1,\"kv_lora_rank\":32,"
	"\"q_lora_rank\":24,\"qk_nope_head_dim\":16,"
	"\"qk_rope_head_dim\":8,\"v_head_dim\":12,\"vocab_size\":101,"
	"\"max_position_embeddings\":64}";
/* V2-Lite's way: q straight from the residual; a rope of 4 (the
 * portable kernel) */
static const char ds_lite_json[] =
	"{\"model_type\":\"deepseek_v2\",\"num_hidden_layers\":2,"
	"\"hidden_size\":64,\"num_attention_heads\":4,"
	"\"intermediate_size\":96,\"n_routed_experts\":4,"
	"\"kv_lora_rank\":20,\"q_lora_rank\":null,"
	"\"qk_nope_head_dim\":16,\"qk_rope_head_dim\":4,"
	"\"v_head_dim\":16,\"vocab_size\":101}";

/* keys from the rotary part alone: no nope columns in kv_b_proj */
static const char ds_nope0_json[] =
	"{\"model_type\":\"deepseek_v2\",\"num_hidden_layers\":2,"
	"\"hidden_size\":64,\"num_attention_heads\":4,"
	"\"intermediate_size\":96,\"kv_lora_rank\":16,"
	"\"q_lora_rank\":null,\"qk_nope_head_dim\":0,"
	"\"qk_rope_head_dim\":8,\"v_head_dim\":8,\"vocab_size\":101}";

/* The kernel on two rows worked by hand: q sees only the rotary part;
 * scores 0 and ln 3, so the weights are 1/4 and 3/4. */
static void test_kernel_hand(void)
{
	const float q[4] = {0, 0, 0, 1};
	const float c[8] = {1, 2, 7, 0, 4, 8, 9, 1.0986122887f};
	float s[KV_MLA_BLOCK + 1], o[2], m, l;
	for (int simd = 0; simd < 2; simd++) {
		kv_mla_attn_part(q, 1, c, 2, 2, 2, s, o, &m, &l, simd);
		CHECK_NEAR(m, 1.0986123, 1e-6);
		CHECK_NEAR(l, 4.0 / 3, 1e-6);
		CHECK_NEAR(o[0] / l, 3.25, 1e-6);
		CHECK_NEAR(o[1] / l, 6.5, 1e-6);
	}
}

/* Each vectorised kernel the CPU runs against the portable one, and two
 * ranges merged against the whole, over head counts on both sides of the
 * register tiles (4), ranks on both sides of 64 and lengths on both sides
 * of a block. Scores grow along the positions so the running max rises. */
static void test_kernel_simd(enum kv_isa isa)
{
	enum { MAXH = 16, MAXD = 576, MAXN = 70 };
	static float q[MAXH * MAXD], c[MAXN * MAXD];
	static float o0[MAXH * MAXD], o1[MAXH * MAXD], oa[MAXH * MAXD],
		ob[MAXH * MAXD];
	float s[MAXH * (KV_MLA_BLOCK + 1)];
	float m0[MAXH], l0[MAXH], m1[MAXH], l1[MAXH];
	float ma[MAXH], la[MAXH], mb[MAXH], lb[MAXH];
	const uint32_t hs[] = {1, 4, 5, 12, 16};
	const uint32_t rr[][2] = {{8, 8},    {32, 8},   {48, 16},
				  {256, 32}, {512, 64}};
	const uint64_t ns[] = {1, 7, 15, 16, 17, 33, 70};
	for (size_t x = 0; x < 5; x++)
		for (size_t y = 0; y < 5; y++)
			for (size_t z = 0; z < 7; z++) {
				uint32_t h = hs[x], rank = rr[y][0];
				uint32_t rope = rr[y][1], D = rank + rope;
				uint64_t n = ns[z];
				if (!kv_mla_has_isa(isa, rank, rope))
					continue;
				for (uint64_t i = 0; i < h * D; i++)
					q[i] = (float)((i * 7) % 11) / 11.0f -
					       0.3f;
				for (uint64_t i = 0; i < n * D; i++)
					c[i] = ((float)((i * 5) % 13) / 13.0f -
						0.3f) *
					       (1 + (float)(i / D) / 10.0f);
				kv_mla_attn_part(q, h, c, n, rank, rope, s, o0,
						 m0, l0, false);
				kv_mla_attn_part_isa(q, h, c, n, rank, rope, s,
						     o1, m1, l1, isa);
				uint64_t a = n / 2;
				for (uint32_t i = 0; i < h; i++)
					ma[i] = la[i] = NAN;
				if (a)
					kv_mla_attn_part_isa(q, h, c, a, rank,
							     rope, s, oa, ma,
							     la, isa);
				kv_mla_attn_part_isa(q, h, c + a * D, n - a,
						     rank, rope, s, ob, mb, lb,
						     isa);
				for (uint32_t i = 0; i < h; i++) {
					/* sums in another order: the scores'
					 * errors grow with their size */
					double tol = 1e-6 * (1 + fabs(m0[i]));
					CHECK_NEAR(m1[i], m0[i], tol);
					CHECK_NEAR(l1[i] / l0[i], 1, 4 * tol);
					/* the merge of two ranges */
					double mx = a && ma[i] > mb[i] ? ma[i]
								      : mb[i];
					double wa = a ? exp(ma[i] - mx) : 0;
					double wb = exp(mb[i] - mx);
					double l = wa * (a ? la[i] : 0) +
						   wb * lb[i];
					for (uint32_t d = 0; d < rank; d++) {
						uint64_t k = (uint64_t)i * rank +
							     d;
						double want = o0[k] / l0[i];
						CHECK_NEAR(o1[k] / l1[i], want,
							   tol * (1 + fabs(want)));
						double mg = (wa * (a ? oa[k]
								     : 0) +
							     wb * ob[k]) /
							    l;
						CHECK_NEAR(mg, want,
							   tol * (1 + fabs(want)));
					}
				}
			}
}

/*
 * Prefills `prompt` tokens with the cache, decodes `gen` more one at a
 * time and recomputes the whole text without the cache at each step: the
 * tokens must agree; returns the largest logit difference.
 */
static double agree(const struct kv_model *m, uint32_t rank, uint32_t rope,
		    uint32_t users, uint32_t threads, uint64_t prompt,
		    uint64_t gen, bool simd)
{
	char err[KV_ERRLEN];
	struct kv_engine_opts o = kv_engine_opts_default();
	struct kv_engine *e;
	o.mla_rank = rank;
	o.mla_rope = rope;
	o.users = users;
	o.threads = threads;
	o.max_ctx = prompt + gen;
	o.seed = 7;
	if (kv_engine_new(m, &o, &e, err)) {
		fprintf(stderr, "engine: %s\n", err);
		test_failures++;
		return INFINITY;
	}
	kv_engine_set_simd(e, simd);
	/* the session: cached and recomputed, each step compared */
	struct kv_decode_opts dop = {prompt, gen, true, true, 0, 0, 7, NULL, NULL};
	struct kv_decode *d;
	struct kv_decode_result r = {0};
	CHECK(kv_decode_open(e, &dop, &d) == 0);
	if (d) {
		/* every step: the same tokens both ways */
		CHECK(kv_decode_run(d, NULL, NULL, &r) == 0);
		CHECK(r.steps == gen && r.first_diff == 0);
	}
	double worst = r.max_diff;
	kv_decode_close(d);
	kv_engine_free(e);
	return worst;
}

static void test_agreement(void)
{
	struct {
		const char *json;
		uint32_t rank, rope;
	} runs[] = {
		{gpt2_json, 32, 0},  /* rope 8 by default: AVX2 */
		{llama_json, 48, 4}, /* rope 4: the portable kernel */
		{llama_json, 192, 16},
		{ds_json, 0, 0},
		{ds_lite_json, 0, 0},
		{ds_nope0_json, 0, 0},
	};
	const uint32_t users[] = {1, 3}, threads[] = {1, 2};
	for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
		struct kv_model *m = test_parse(runs[r].json);
		for (int u = 0; u < 2; u++)
			for (int t = 0; t < 2; t++)
				CHECK_NEAR(agree(m, runs[r].rank, runs[r].rope,
						 users[u], threads[t], 9, 4,
						 true),
					   0, TOL);
		/* the portable kernel too */
		CHECK_NEAR(agree(m, runs[r].rank, runs[r].rope, 2, 2, 9, 3,
				 false),
			   0, TOL);
		kv_model_free(m);
	}
	/* one user, two threads: a step past 1,024 positions is split over
	 * four ranges of positions and merged */
	if (!test_quick()) {
		struct kv_model *m = test_parse(llama_json);
		CHECK_NEAR(agree(m, 32, 8, 1, 2, 1100, 3, true), 0, TOL);
		kv_model_free(m);
	}
}

/* The latents carry the text: a changed first token moves the last
 * token's logits by far more than the tolerance. */
static void test_sensitive(void)
{
	struct kv_model *m = test_parse(ds_json);
	char err[KV_ERRLEN];
	struct kv_engine_opts o = kv_engine_opts_default();
	struct kv_engine *e;
	o.max_ctx = 12;
	CHECK(kv_engine_new(m, &o, &e, err) == 0);
	uint32_t tok[12];
	float a[101], b[101];
	for (int i = 0; i < 12; i++)
		tok[i] = kv_rand_token(3, 0, (uint64_t)i, 101);
	CHECK(kv_engine_forward(e, tok, 12, 0, true, a) == 0);
	tok[0] = (tok[0] + 1) % 101;
	CHECK(kv_engine_forward(e, tok, 12, 0, true, b) == 0);
	CHECK(kv_max_abs_diff(a, b, 101) > 1e-3);
	kv_engine_free(e);
	kv_model_free(m);
}

/* Bytes per token of the allocation = kvsize's MLA figure in f32. */
static void test_bytes(void)
{
	char err[KV_ERRLEN];
	struct kv_model *m = test_parse(gpt2_json), *eff;
	struct kv_engine_opts o = kv_engine_opts_default();
	struct kv_engine *e;
	o.mla_rank = 32;
	o.users = 2;
	o.max_ctx = 10;
	CHECK(kv_engine_new(m, &o, &e, err) == 0);
	CHECK(kv_engine_model(m, &o, &eff, err) == 0);
	struct kv_opts ko = kv_opts_default(eff);
	uint64_t per;
	CHECK(kv_model_token_bytes(eff, &ko, &per, err) == 0);
	/* 2 layers x (32 latent + 8 rotary) x 4 bytes */
	CHECK_U64(per, 2 * (32 + 8) * 4);
	CHECK_U64(kv_engine_cache_token_bytes(e), per);
	CHECK_U64(kv_engine_cache_bytes(e), per * 2 * 10);
	CHECK_STR(kv_engine_get_model(e)->name, "tiny+mla32");
	CHECK_U64(eff->layers[1].attn, KV_ATTN_MLA);
	/* a step at position 9 reads 10 rows per layer and user */
	CHECK_U64(kv_engine_cache_read_bytes(e, 9), 2 * 10 * per);
	/* 12 heads x (2 x 32 + 8) multiply-adds per position, 2 layers, 2
	 * users, 10 positions, 2 FLOPs each */
	CHECK_NEAR(kv_engine_attend_flops(e, 9), 2.0 * 12 * 72 * 10 * 2 * 2,
		   1e-6);
	/* weights a pass reads, per layer: q 192 x 12 x 24, kv_a 192 x 40,
	 * its norm 32, kv_b 32 x 12 x 32, o 12 x 16 x 192 and its bias, the
	 * MLP 192 x 256 x 2 with its biases 256 + 192, two LayerNorms 4 x
	 * 192; then the final norm 2 x 192 and the tied head 192 x 101 */
	uint64_t layer = 192 * 288 + 192 * 40 + 32 + 32 * 384 + 192 * 192 +
			 192 + 2 * 192 * 256 + 256 + 192 + 4 * 192;
	CHECK_U64(kv_engine_weight_read_bytes(e),
		  (2 * layer + 2 * 192 + 192 * 101) * 4);
	/* FLOPs of one token at 9: matrices (q, kv_a, kv_b, o, MLP) per row,
	 * the absorbed attention over 10 positions, the head */
	double mat = 192.0 * 288 + 192 * 40 + 32 * 384 + 192 * 192 +
		     2 * 192 * 256;
	double want = 2.0 * (mat * 2 * 2 + 2.0 * 12 * 36 * 10 * 2 * 2 +
			     192.0 * 101 * 2);
	CHECK_NEAR(kv_engine_flops(e, 1, 9), want, 1);
	kv_model_free(eff);
	kv_engine_free(e);
	/* without a cache the plain form's attention: 16 + 8 + 16 per
	 * position and head */
	o.cache = false;
	CHECK(kv_engine_new(m, &o, &e, err) == 0);
	want = 2.0 * (mat * 6 * 2 + 2.0 * 12 * 20 * 6 * 2 * 2 +
		      192.0 * 101 * 2);
	CHECK_NEAR(kv_engine_flops(e, 3, 0), want, 1);
	CHECK_U64(kv_engine_cache_bytes(e), 0);
	kv_engine_free(e);
	kv_model_free(m);

	/* DeepSeek-V3 at full size, estimated: 61 layers x 576 f32, twice
	 * kvsize's 70,272 bf16 bytes per token */
	m = test_load("deepseek-v3");
	o = kv_engine_opts_default();
	o.max_ctx = 1000;
	o.vocab = 256;
	struct kv_engine_size sz;
	CHECK(kv_engine_estimate(m, &o, &sz, err) == 0);
	CHECK_U64(sz.cache, 2ULL * 70272 * 1000);
	kv_model_free(m);
	/* DeepSeek-V2-Lite, shrunk to 2 layers: 2 x 576 x 4 */
	m = test_load("deepseek-v2-lite");
	o.layers = 2;
	CHECK(kv_engine_model(m, &o, &eff, err) == 0);
	ko = kv_opts_default(eff);
	CHECK(kv_model_token_bytes(eff, &ko, &per, err) == 0);
	CHECK_U64(per, 4608);
	CHECK_U64(eff->layers[1].ffn_dim, 10944); /* MoE run dense */
	CHECK_U64(eff->n_experts, 0);
	kv_model_free(eff);
	kv_model_free(m);
}

/* The block's scratch by hand, and sizes past 64 bits refused. */
static void test_scratch(void)
{
	struct kv_mla_dims d = {.dim = 16, .layers = 1, .heads = 2,
				.rank = 8, .rope = 8, .nope = 4, .vdim = 4,
				.users = 1, .ctx = 2, .chunk = 2, .threads = 1,
				.nsplit = 1};
	uint64_t f;
	/* in floats, each piece padded to 16: latent rows 2 x 16, their
	 * contiguous latents 2 x 8, K and V 2 x 2 x 8, absorbed queries
	 * 2 x 2 x 16, latent sums 2 x 2 x 8, split parts 2 x 10 -> 32,
	 * scores 64 x 2 + m and l 4 -> 144 */
	CHECK(kv_mla_scratch_floats(&d, &f) == 0);
	CHECK_U64(f, 32 + 16 + 32 + 64 + 32 + 32 + 144);
	/* 2^48 rows of DeepSeek-V3's 128 absorbed queries of 576 floats */
	d.heads = 128;
	d.rank = 512;
	d.rope = 64;
	d.users = 65536;
	d.chunk = 1ULL << 32;
	CHECK(kv_mla_scratch_floats(&d, &f) == KV_ERANGE);
}

/* Options that do not fit the shape: one message each. */
static void test_refusals(void)
{
	char err[KV_ERRLEN];
	struct kv_model *m = test_parse(gpt2_json), *eff = NULL;
	struct kv_engine_opts o = kv_engine_opts_default();
	o.mla_rank = 193;
	CHECK(kv_engine_model(m, &o, &eff, err) == KV_EINVAL);
	CHECK_HAS(err, "mla: the latent rank must be in 1..192 (the hidden "
		       "size), got 193");
	o.mla_rank = 32;
	o.mla_rope = 7;
	CHECK(kv_engine_model(m, &o, &eff, err) == KV_EINVAL);
	CHECK_HAS(err, "mla-rope: the rotary key needs an even size in "
		       "2..16 (the head size), got 7");
	o.mla_rope = 18;
	CHECK(kv_engine_model(m, &o, &eff, err) == KV_EINVAL);
	o.mla_rope = 16;
	CHECK(kv_engine_model(m, &o, &eff, err) == 0);
	kv_model_free(eff);
	o.kv_heads = 4;
	CHECK(kv_engine_model(m, &o, &eff, err) == KV_EINVAL);
	CHECK_HAS(err, "kv-heads: an MLA layer keeps one latent for all 12 "
		       "heads, got 4");
	o.kv_heads = 0;
	o.mla_rank = 0;
	CHECK(kv_engine_model(m, &o, &eff, err) == KV_EINVAL);
	CHECK_HAS(err, "mla-rope: the model has no latent attention");
	kv_model_free(m);
	/* a config's own odd rotary size is named by its field */
	m = test_parse("{\"model_type\":\"deepseek_v2\",\"num_hidden_layers\":2,"
		 "\"hidden_size\":64,\"num_attention_heads\":4,"
		 "\"kv_lora_rank\":16,\"qk_rope_head_dim\":5}");
	o = kv_engine_opts_default();
	CHECK(kv_engine_model(m, &o, &eff, err) == KV_EINVAL);
	CHECK_HAS(err, "qk_rope_head_dim: the rotary key needs an even size");
	kv_model_free(m);
}

/* The vectorised kernels of one instruction set against the portable
 * ones (test_skip where the CPU lacks the set). */
static int simd(const char *set)
{
	enum kv_isa isa = test_isa("test_mla", set);
	if (isa == KV_ISA_C)
		return 2;
	if (!kv_mla_has_isa(isa, 512, 64))
		return test_skip("test_mla", set);
	test_kernel_simd(isa);
	printf("test_mla %s: compared with the portable kernel: latent "
	       "attention (ranks 8 to 512, 1 to 16 heads, whole and split "
	       "ranges)\n",
	       set);
	return test_done("test_mla");
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return simd(argv[1]);
	test_kernel_hand();
	test_refusals();
	test_scratch();
	test_bytes();
	test_sensitive();
	test_agreement();
	return test_done("test_mla");
}
