/*
 * test_engine.c - the decode engine on tiny shapes: cached and recomputed
 * logits agree (GPT-2, Llama-style and Qwen3 blocks, 1, 3 and 12 KV
 * heads, one and several users, one and two threads, whole and
 * position-split attention), the vectorised and portable kernels agree,
 * the cache is exactly kvsize's bytes (Qwen3's norms counted in the
 * weights), the weights exactly kvfit --params' bytes in f32, bf16 and
 * f16 (GPT-2, Qwen2, Qwen3, MLA shapes), large buffers sit on huge-page
 * boundaries, and the helpers of a decode loop hold the articles'
 * numbers.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "engine/kvquant.h"
#include "kv/decode.h"
#include "kv/engine.h"
#include "kv/layout.h"
#include "kv/params.h"
#include "test.h"

static const char gpt2_json[] =
	"{\"model_type\":\"gpt2\",\"n_layer\":2,\"n_embd\":192,"
	"\"n_head\":12,\"n_inner\":256,\"vocab_size\":101,"
	"\"n_positions\":64}";
static const char llama_json[] =
	"{\"model_type\":\"llama\",\"num_hidden_layers\":2,"
	"\"hidden_size\":192,\"num_attention_heads\":12,"
	"\"num_key_value_heads\":12,\"intermediate_size\":256,"
	"\"vocab_size\":101,\"max_position_embeddings\":64}";
/* Qwen3: per-head q and k norms, heads of 24 where 192 / 12 is 16 */
static const char qwen3_json[] =
	"{\"model_type\":\"qwen3\",\"num_hidden_layers\":2,"
	"\"hidden_size\":192,\"num_attention_heads\":12,"
	"\"num_key_value_heads\":12,\"head_dim\":24,"
	"\"intermediate_size\":256,\"vocab_size\":101,"
	"\"max_position_embeddings\":64}";

/*
 * Prefills `prompt` tokens with the cache, then decodes `gen` more one at a
 * time, recomputing the whole text without the cache at every step; checks
 * tokens and logits agree. Returns the largest difference.
 */
static double agree(const struct kv_model *m, uint32_t kvh, uint32_t users,
		    uint32_t threads, uint64_t prompt, uint64_t gen)
{
	char err[KV_ERRLEN];
	struct kv_engine_opts o = kv_engine_opts_default();
	struct kv_engine *e;
	o.kv_heads = kvh;
	o.users = users;
	o.threads = threads;
	o.max_ctx = prompt + gen;
	o.seed = 7;
	if (kv_engine_new(m, &o, &e, err)) {
		fprintf(stderr, "engine: %s\n", err);
		test_failures++;
		return INFINITY;
	}
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
	uint64_t want;
	kv_decode_passes(prompt, gen, true, &want);
	CHECK_U64(kv_engine_passes(e, true), want);
	kv_decode_passes(prompt, gen, false, &want);
	CHECK_U64(kv_engine_passes(e, false), want);
	kv_engine_free(e);
	return worst;
}

static void test_agreement(void)
{
	const char *jsons[] = {gpt2_json, llama_json, qwen3_json};
	const uint32_t kvs[] = {1, 3, 12}, users[] = {1, 3},
		       threads[] = {1, 2};
	for (int f = 0; f < 3; f++) {
		struct kv_model *m = test_parse(jsons[f]);
		for (int k = 0; k < 3; k++)
			for (int u = 0; u < 2; u++)
				for (int t = 0; t < 2; t++) {
					if (!test_grid_case(4 * k + 2 * u + t))
						continue;
					double d = agree(m, kvs[k], users[u],
							 threads[t], 9, 4);
					CHECK_NEAR(d, 0, 1e-5);
				}
		kv_model_free(m);
	}
	/* one KV head, one user, two threads: a decode step past 1,024
	 * positions is split over positions and merged (left out of
	 * memcheck's quick run; the plain and sanitized builds run it) */
	if (test_quick())
		return;
	struct kv_model *m = test_parse(llama_json);
	CHECK_NEAR(agree(m, 1, 1, 2, 1100, 3), 0, 1e-5);
	kv_model_free(m);
}

static void kernels(const char *json)
{
	struct kv_model *m = test_parse(json);
	char err[KV_ERRLEN];
	struct kv_engine_opts o = kv_engine_opts_default();
	struct kv_engine *e1, *e2;
	o.kv_heads = 3;
	o.max_ctx = 37;
	o.users = 2;
	CHECK(kv_engine_new(m, &o, &e1, err) == 0);
	o.threads = 2;
	CHECK(kv_engine_new(m, &o, &e2, err) == 0);
	uint32_t tok[74];
	float a[202], b[202], c[202];
	/* the logits' buffers start as NaN: nothing may read them */
	for (int i = 0; i < 202; i++)
		a[i] = b[i] = c[i] = NAN;
	for (int i = 0; i < 74; i++)
		tok[i] = kv_rand_token(1, (uint64_t)i / 37, (uint64_t)i % 37,
				       101);
	CHECK(kv_engine_forward(e1, tok, 37, 0, true, a) == 0);
	CHECK(kv_engine_forward(e2, tok, 37, 0, true, c) == 0);
	kv_engine_set_simd(e1, false);
	CHECK(kv_engine_forward(e1, tok, 37, 0, true, b) == 0);
	CHECK_NEAR(kv_max_abs_diff(a, b, 202), 0, 1e-5);
	CHECK_NEAR(kv_max_abs_diff(a, c, 202), 0, 1e-5);
	CHECK(kv_max_abs_diff(a, a, 202) == 0);
	/* the bench entry points run */
	CHECK(kv_engine_fill_cache(e2, 37, 3) == 0);
	CHECK(kv_engine_attend(e2, 36) == 0);
	CHECK(kv_engine_attend(e2, 37) == KV_EINVAL);
	/* bad calls */
	CHECK(kv_engine_forward(e1, tok, 0, 0, true, a) == KV_EINVAL);
	CHECK(kv_engine_forward(e1, tok, 2, 36, true, a) == KV_EINVAL);
	CHECK(kv_engine_forward(e1, tok, 2, 1, false, a) == KV_EINVAL);
	tok[0] = 101;
	CHECK(kv_engine_forward(e1, tok, 1, 0, true, a) == KV_EINVAL);
	kv_engine_free(e1);
	kv_engine_free(e2);
	kv_engine_free(NULL);
	kv_model_free(m);
}

/* The same forward pass through the vectorised and the portable kernels
 * (attention, GELU, SiLU), and with one and two threads. */
static void test_kernels(void)
{
	kernels(gpt2_json);
	kernels(llama_json);
	kernels(qwen3_json);
}

/* Several tokens attending together (causal rows) give what each token
 * gives alone, in both kernels; lengths that are not multiples of 8. */
static void test_attn_block(void)
{
	enum { T = 3, G = 2, HD = 16, N = 21 };
	static float q[T * G * HD], k[N * HD], v[N * HD], s[T * G * N];
	float o[T * G * HD], m[T * G], l[T * G];
	float o1[G * HD], m1[G], l1[G];
	for (int i = 0; i < T * G * HD; i++)
		q[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
	for (int i = 0; i < N * HD; i++) {
		k[i] = (float)((i * 5) % 13) / 13.0f - 0.5f;
		v[i] = (float)((i * 3) % 17) / 17.0f - 0.5f;
	}
	for (int simd = 0; simd < 2; simd++) {
		kv_attn_part(q, T * G, G, k, v, N, HD, 0.25f, s, o, m, l,
			     simd);
		for (int t = 0; t < T; t++) {
			uint64_t len = N - (T - 1 - t);
			kv_attn_part(q + t * G * HD, G, G, k, v, len, HD, 0.25f,
				     s, o1, m1, l1, simd);
			for (int h = 0; h < G; h++) {
				CHECK_NEAR(m[t * G + h], m1[h], 1e-6);
				CHECK_NEAR(l[t * G + h], l1[h], 1e-5);
				for (int d = 0; d < HD; d++)
					CHECK_NEAR(o[(t * G + h) * HD + d] /
							   l[t * G + h],
						   o1[h * HD + d] / l1[h], 1e-6);
			}
		}
	}
}

/* Every kernel the CPU runs against the portable one, over group sizes
 * on both sides of the AVX-512 lanes (16), head sizes 16 to 256 (a
 * multiple of 64 or not), lengths inside one block, on a block's edge
 * and past it, single tokens and causal rows of several. Keys grow along
 * the positions so the running max of the online softmax rises block
 * after block and what was summed is rescaled. */
static void test_attn_isa(enum kv_isa isa)
{
	enum { MAXG = 40, MAXHD = 256, MAXN = 300 };
	static float q[MAXG * MAXHD], k[MAXN * MAXHD], v[MAXN * MAXHD];
	static float s[MAXG * MAXN], o0[MAXG * MAXHD], o1[MAXG * MAXHD];
	float m0[MAXG], l0[MAXG], m1[MAXG], l1[MAXG];
	const uint32_t gs[][2] = {{1, 1},  {4, 4},  {8, 8},   {8, 2},
				  {12, 12}, {12, 4}, {16, 16}, {17, 17},
				  {24, 12}, {33, 11}, {40, 40}};
	const uint32_t hds[] = {16, 48, 64, 80, 128, 256};
	const uint64_t ns[] = {1, 5, 31, 32, 33, 64, 100, 257, 300};
	for (int i = 0; i < MAXG * MAXHD; i++)
		q[i] = (float)((i * 7) % 11) / 11.0f - 0.3f;
	for (size_t x = 0; x < sizeof gs / sizeof *gs; x++)
		for (size_t y = 0; y < sizeof hds / sizeof *hds; y++)
			for (size_t z = 0; z < sizeof ns / sizeof *ns; z++) {
				uint32_t g = gs[x][0], per = gs[x][1];
				uint32_t hd = hds[y];
				uint64_t n = ns[z];
				if (g / per > n)
					continue; /* a row would see nothing */
				for (uint64_t i = 0; i < n * hd; i++) {
					float up = (float)(i / hd) / 100.0f;
					k[i] = ((float)((i * 5) % 13) / 13.0f -
						0.3f) * (1 + up);
					v[i] = (float)((i * 3) % 17) / 17.0f -
					       0.5f;
				}
				kv_attn_part_isa(q, g, per, k, v, n, hd, 0.5f,
						 s, o0, m0, l0, KV_ISA_C);
				{
					if (!kv_attn_has_isa(isa, hd))
						continue;
					for (uint32_t i = 0; i < g; i++)
						o1[i * hd] = m1[i] = l1[i] =
							NAN;
					kv_attn_part_isa(q, g, per, k, v, n,
							 hd, 0.5f, s, o1, m1,
							 l1, isa);
					/* sums in another order: errors
					 * grow with the scores' size */
					for (uint32_t i = 0; i < g; i++) {
						double tol = 1e-6 *
							     (1 + fabs(m0[i]));
						CHECK_NEAR(m1[i], m0[i], tol);
						CHECK_NEAR(l1[i] / l0[i], 1,
							   4 * tol);
						for (uint32_t d = 0; d < hd;
						     d++)
							CHECK_NEAR(
								o1[i * hd + d] /
									l1[i],
								o0[i * hd + d] /
									l0[i],
								1e-5);
					}
				}
			}
}

/* The few-rows product's cases: rows up to KV_SMALL_ROWS (x is
 * GEMM_M x GEMM_K at most), N outputs. */
enum { GEMM_M = KV_SMALL_ROWS, GEMM_K = 150, GEMM_N = 300 };

/* One case of the few-rows product: the named kernel against the plain
 * loop and one element by hand, over a column range that starts and ends
 * off the kernels' tiles (K = 37 leaves a tail of 5 in every row, 150 one
 * of 6 after blocks of 16, 32 and 64). w is in type wt, wide its values
 * as floats. f32 rows come out bit for bit as they do one at a time: a
 * row's sums keep their order whatever tile it falls in. */
static void gemm_case(const float *x, const void *w, enum kv_dtype wt,
		      const float *wide, float *y0, float *y1, uint64_t m,
		      uint64_t K, int beta, enum kv_isa isa)
{
	enum { N = GEMM_N };
	static float xp[GEMM_M * GEMM_K];
	/* with beta 0 the outputs in range start as NaN: they must not be
	 * read */
	for (uint64_t i = 0; i < GEMM_M * N; i++) {
		uint64_t r = i / N, c = i % N;
		bool in = r < m && c >= 3 && c < 297;
		y0[i] = y1[i] = in && !beta ? NAN : (float)(i % 7);
	}
	kv_gemm_small_isa(x, m, K, w, wt, N, 3, 297, (float)beta, y0, isa,
			  xp, GEMM_M * GEMM_K);
	kv_gemm_small_isa(x, m, K, w, wt, N, 3, 297, (float)beta, y1,
			  KV_ISA_C, NULL, 0);
	CHECK_NEAR(kv_max_abs_diff(y0, y1, GEMM_M * N), 0, 1e-5);
	/* columns outside the range are left alone */
	CHECK(y0[0] == 0 && y0[299] == (float)(299 % 7));
	/* one element by hand: the last row, column 150 */
	uint64_t r = m - 1, c = 150;
	double want = beta ? (double)((r * N + c) % 7) : 0;
	for (uint64_t i = 0; i < K; i++)
		want += (double)x[r * K + i] * wide[c * K + i];
	CHECK_NEAR(y0[r * N + c], want, 1e-5);
	if (wt != KV_DTYPE_F32)
		return;
	for (r = 0; r < m; r++) {
		float one[N];
		for (c = 0; c < N; c++)
			one[c] = beta ? (float)((r * N + c) % 7) : NAN;
		kv_gemm_small_isa(x + r * K, 1, K, w, wt, N, 3, 297,
				  (float)beta, one, isa, xp, GEMM_M * GEMM_K);
		CHECK(!memcmp(one + 3, y0 + r * N + 3, 294 * sizeof *one));
	}
}

/* The few-rows product through every kernel this CPU runs, from 1 row to
 * KV_SMALL_ROWS (each count of one tile, of two passes, and some past
 * them), with and without beta, over f32 weights and the same rounded to
 * bf16 and to f16, each read as stored. */
static void test_gemm_small(enum kv_isa isa)
{
	enum { M = GEMM_M, K = GEMM_K, N = GEMM_N };
	static const uint64_t rows[] = {1,  2,  3,  4,  5,  6,	7,  8,
					9,  10, 11, 12, 13, 16, 17, 24,
					31, 32, 33, M - 1, M};
	static const uint64_t ks[] = {37, K};
	static float x[M * K], w[N * K], y0[M * N], y1[M * N];
	static float wb[N * K], wh[N * K];
	static uint16_t b16[N * K], h16[N * K];
	for (int i = 0; i < M * K; i++)
		x[i] = (float)((i * 37) % 17) / 17.0f - 0.5f;
	for (int i = 0; i < N * K; i++) {
		w[i] = (float)((i * 53) % 29) / 29.0f - 0.5f;
		b16[i] = kv_f32_to_bf16(w[i]);
		h16[i] = kv_f32_to_f16(w[i]);
		wb[i] = kv_bf16_to_f32(b16[i]);
		wh[i] = kv_f16_to_f32(h16[i]);
	}
	/* the widening is exact: bf16 keeps 8 bits, f16 11 */
	CHECK(wb[1] != w[1] && fabsf(wb[1] - w[1]) < 4e-3f);
	CHECK(fabsf(wh[1] - w[1]) < 5e-4f);
	float back[4];
	kv_weights_to_f32(b16, KV_DTYPE_BF16, 4, back);
	CHECK(memcmp(back, wb, sizeof back) == 0);
	for (size_t a = 0; a < sizeof ks / sizeof *ks; a++)
		for (size_t b = 0; b < sizeof rows / sizeof *rows; b++)
			for (int beta = 0; beta < 2; beta++) {
				uint64_t m = rows[b], k = ks[a];
				if (m > M)
					continue;
				gemm_case(x, w, KV_DTYPE_F32, w, y0, y1, m, k,
					  beta, isa);
				gemm_case(x, b16, KV_DTYPE_BF16, wb, y0, y1, m,
					  k, beta, isa);
				gemm_case(x, h16, KV_DTYPE_F16, wh, y0, y1, m,
					  k, beta, isa);
			}
}

/* The cache is what kvsize says: 73,728 bytes per token for the default. */
static void test_bytes(void)
{
	struct kv_model *m, *eff;
	char err[KV_ERRLEN];
	struct kv_engine_size sz;
	CHECK(kv_model_gpt2_small(&m) == 0);
	struct kv_engine_opts o = kv_engine_opts_default();
	o.max_ctx = 1000;
	CHECK(kv_engine_estimate(m, &o, &sz, err) == 0);
	CHECK_U64(sz.cache, 73728000);
	/* weights: the layers' matrices 339,738,624 B (the article's 340
	 * MB), their biases and norms (9,984 floats a layer), wte, wpe, the
	 * final norm; every piece is a multiple of 64 bytes here */
	CHECK_U64(sz.weights, 339738624ULL + 12ULL * 9984 * 4 +
				      50257ULL * 768 * 4 +
				      1024ULL * 768 * 4 + 2 * 768 * 4);
	o.cache = false;
	CHECK(kv_engine_estimate(m, &o, &sz, err) == 0);
	CHECK_U64(sz.cache, 0);
	o.cache = true;
	/* what fits */
	o.max_ctx = 160;
	CHECK(kv_engine_estimate(m, &o, &sz, err) == 0);
	CHECK_U64(kv_engine_fit_layers(m, &o, sz.total), 12);
	CHECK(kv_engine_fit_layers(m, &o, sz.total - 1) < 12);
	CHECK_U64(kv_engine_fit_layers(m, &o, 1000), 0);
	CHECK_U64(kv_engine_fit_vocab(m, &o, sz.total), 50257);
	CHECK(kv_engine_fit_vocab(m, &o, sz.total - 100000) < 50257);
	kv_model_free(m);

	/* measured from a real allocation, with overrides */
	m = test_parse(llama_json);
	o = kv_engine_opts_default();
	o.kv_heads = 3;
	o.layers = 3;
	o.users = 2;
	o.max_ctx = 10;
	struct kv_engine *e;
	CHECK(kv_engine_new(m, &o, &e, err) == 0);
	CHECK(kv_engine_model(m, &o, &eff, err) == 0);
	struct kv_opts ko = kv_opts_default(eff);
	uint64_t per;
	CHECK(kv_model_token_bytes(eff, &ko, &per, err) == 0);
	CHECK_U64(per, 3 * 2 * 3 * 16 * 4);
	CHECK_U64(kv_engine_cache_token_bytes(e), per);
	CHECK_U64(kv_engine_cache_bytes(e), per * 2 * 10);
	CHECK_U64(kv_engine_get_model(e)->n_layers, 3);
	kv_model_free(eff);
	kv_engine_free(e);
	kv_model_free(m);

	/* bytes and FLOPs of a pass, by hand for the default shape */
	CHECK(kv_model_gpt2_small(&m) == 0);
	o = kv_engine_opts_default();
	o.max_ctx = 8;
	o.users = 2;
	o.vocab = 1000; /* a lighter test; the head is the only change */
	CHECK(kv_engine_new(m, &o, &e, err) == 0);
	/* the article's 339,738,624 B of matrices, 9,984 floats of biases and
	 * norms a layer, the final norm, the tied head */
	CHECK_U64(kv_engine_weight_read_bytes(e),
		  339738624ULL + 12ULL * 9984 * 4 + 2 * 768 * 4 +
			  768ULL * 1000 * 4);
	CHECK_U64(kv_engine_cache_read_bytes(e, 8191), 2ULL * 603979776);
	/* one token at 159: 2 x (84,934,656 matrix weights x 2 users + 12
	 * layers x 12 heads x 64 x 2 (q k, a v) x 160 positions x 2 users +
	 * 768 x 1,000 x 2 users) */
	double want = 2.0 * (84934656.0 * 2 + 12.0 * 2 * 12 * 64 * 160 * 2 +
			     768.0 * 1000 * 2);
	CHECK_NEAR(kv_engine_flops(e, 1, 159), want, 1);
	/* a 3-token chunk at 0 attends to 1 + 2 + 3 positions */
	want = 2.0 * (84934656.0 * 6 + 12.0 * 2 * 12 * 64 * 6 * 2 +
		      768.0 * 1000 * 2);
	CHECK_NEAR(kv_engine_flops(e, 3, 0), want, 1);
	kv_engine_free(e);
	kv_model_free(m);

	/* Qwen3's q and k norms: 2 gains of head_dim 16 floats a layer (64
	 * bytes each) beyond the same Llama shape's */
	struct kv_engine_size base;
	uint64_t read[2];
	o = kv_engine_opts_default();
	for (int q = 0; q < 2; q++) {
		char json[sizeof qwen3_json + 16];
		snprintf(json, sizeof json, "%s",
			 q ? qwen3_json : llama_json);
		if (q) /* heads of 16, as the Llama shape's */
			memcpy(strstr(json, "\"head_dim\":24"),
			       "\"head_dim\":16", 13);
		m = test_parse(json);
		CHECK(kv_engine_estimate(m, &o, q ? &sz : &base, err) == 0);
		CHECK(kv_engine_new(m, &o, &e, err) == 0);
		read[q] = kv_engine_weight_read_bytes(e);
		kv_engine_free(e);
		kv_model_free(m);
	}
	CHECK_U64(sz.weights - base.weights, 2 * 2 * 16 * 4);
	CHECK_U64(read[1] - read[0], 2 * 2 * 16 * 4);
}

/* The engine's weights are the bytes kvfit --params counts for the model
 * it runs (the effective one: overrides applied, DeepSeek's MoE layers
 * dense), kv_weight_bytes() of kv_model_params()' total, in weight type
 * wt, norms and biases included; ok: whether the type runs at all. */
static void params_agree(const struct kv_model *m, struct kv_engine_opts o,
			 enum kv_dtype wt, bool ok, uint64_t *bytes)
{
	char err[KV_ERRLEN];
	struct kv_model *eff;
	struct kv_params p;
	struct kv_engine_size sz;
	uint64_t want;
	o.weights_dtype = wt;
	*bytes = 0;
	if (!ok) {
		CHECK(kv_engine_estimate(m, &o, &sz, err) == KV_EUNSUP);
		return;
	}
	if (kv_engine_model(m, &o, &eff, err)) {
		fprintf(stderr, "engine: %s\n", err);
		test_failures++;
		return;
	}
	CHECK(kv_model_params(eff, &p, err) == 0);
	CHECK(kv_weight_bytes(p.total, wt, &want) == 0);
	CHECK(kv_engine_estimate(m, &o, &sz, err) == 0);
	CHECK_U64(sz.weights, want);
	*bytes = sz.weights;
	kv_model_free(eff);
}

static void test_params_bytes(void)
{
	static const enum kv_dtype wt[3] = {KV_DTYPE_F32, KV_DTYPE_BF16,
					    KV_DTYPE_F16};
	struct kv_engine_opts o = kv_engine_opts_default();
	uint64_t b[3] = {0};
	/* GPT-2 small: 124,439,808 parameters, 121,344 of them in norms
	 * and biases; kvfit --params gpt2 says 497,759,232 bytes in f32,
	 * 248,879,616 in bf16 and f16 */
	struct kv_model *m;
	CHECK(kv_model_gpt2_small(&m) == 0);
	for (int i = 0; i < 3; i++)
		params_agree(m, o, wt[i], true, &b[i]);
	CHECK_U64(b[0], 497759232);
	CHECK_U64(b[1], 248879616);
	CHECK_U64(b[2], 248879616);
	kv_model_free(m);
	/* Qwen2.5-7B's shape, 2 layers and a vocabulary of 1,024: q/k/v
	 * biases, an untied head; Qwen3-8B's: per-head q/k norms; the tiny
	 * Qwen3's heads of 24, whose norms fill no 64-byte line */
	o.layers = 2;
	o.vocab = 1024;
	const char *name[2] = {"qwen2.5-7b", "qwen3-8b"};
	for (int c = 0; c < 3; c++) {
		m = c < 2 ? test_load(name[c]) : test_parse(qwen3_json);
		for (int i = 0; i < 3 && m; i++)
			params_agree(m, o, wt[i], true, &b[i]);
		CHECK_U64(b[1], b[2]);
		CHECK_U64(2 * b[1], b[0]); /* every tensor halved */
		kv_model_free(m);
	}
	/* DeepSeek-V2-Lite's latent attention, its dense first layer: f32
	 * weights only */
	m = test_load("deepseek-v2-lite");
	o.layers = 1;
	for (int i = 0; i < 3 && m; i++)
		params_agree(m, o, wt[i], i == 0, &b[i]);
	kv_model_free(m);
}

static void test_refusals(void)
{
	char err[KV_ERRLEN];
	struct kv_model *m = test_parse(gpt2_json), *eff;
	struct kv_engine_opts o = kv_engine_opts_default();
	o.kv_heads = 5;
	CHECK(kv_engine_model(m, &o, &eff, err) == KV_EINVAL);
	CHECK_HAS(err, "must divide the 12 attention heads, got 5");
	o.kv_heads = 0;
	o.users = 0;
	CHECK(kv_engine_model(m, &o, &eff, err) == KV_EINVAL);
	kv_model_free(m);
	static const char *const bad[] = {
		"{\"model_type\":\"gemma\",\"num_hidden_layers\":2,"
		"\"hidden_size\":64,\"num_attention_heads\":4}",
		"{\"model_type\":\"mistral\",\"num_hidden_layers\":2,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"sliding_window\":16}",
		"{\"model_type\":\"qwen3_moe\",\"num_hidden_layers\":2,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"head_dim\":16}",
	};
	for (size_t i = 0; i < 3; i++) {
		m = test_parse(bad[i]);
		o = kv_engine_opts_default();
		CHECK(kv_engine_model(m, &o, &eff, err) == KV_EUNSUP);
		CHECK_HAS(err, "it runs GPT-2 blocks");
		kv_model_free(m);
	}
	/* latent attention has no heads of q and k to norm */
	m = test_parse(qwen3_json);
	o = kv_engine_opts_default();
	o.mla_rank = 64;
	CHECK(kv_engine_model(m, &o, &eff, err) == KV_EUNSUP);
	CHECK_HAS(err, "per-head q/k norms outside Llama-style attention");
	kv_model_free(m);
}

static void test_helpers(void)
{
	uint64_t n;
	/* the second article's token passes */
	CHECK(kv_decode_passes(5, 3, false, &n) == 0);
	CHECK_U64(n, 18);
	CHECK(kv_decode_passes(5, 3, true, &n) == 0);
	CHECK_U64(n, 7);
	CHECK(kv_decode_passes(1, 1000, false, &n) == 0);
	CHECK_U64(n, 500500);
	CHECK(kv_decode_passes(1, 1000, true, &n) == 0);
	CHECK_U64(n, 1000);
	CHECK(kv_decode_passes(30000, 300, false, &n) == 0);
	CHECK_U64(n, 9044850);
	CHECK(kv_decode_passes(30000, 300, true, &n) == 0);
	CHECK_U64(n, 30299); /* the article's 30,300 counts the last token */
	/* a loop's own buffers, 2 users of 128 + 32 over GPT-2's vocabulary:
	 * 5 rows of logits (5 x 50,257 x 4 = 1,005,140), 2 x 160 x 3 token
	 * ids (3,840), 2 x 11 + 1 token cells */
	CHECK(kv_decode_loop_bytes(2, 128, 32, 50257, false, &n) == 0);
	CHECK_U64(n, 1009003);
	/* prefix reuse adds 2 x 32 rows: 69 x 50,257 x 4 = 13,870,932 */
	CHECK(kv_decode_loop_bytes(2, 128, 32, 50257, true, &n) == 0);
	CHECK_U64(n, 13874795);
	CHECK(kv_decode_loop_bytes(UINT64_MAX / 2, 1, 1, 50257, false, &n) ==
	      KV_ERANGE);
	CHECK(kv_decode_passes(UINT64_MAX, 3, false, &n) == KV_ERANGE);

	/* sampling */
	float lg[10] = {0.1f, 2.0f, 1.9f, -1, 0, 2.0f, 0.5f, 1.8f, 0, 0};
	float work[10];
	CHECK_U64(kv_sample(lg, 10, 0, 0, 1, 0, 0, work), 1);
	CHECK_U64(kv_sample(lg, 10, 1.0, 1, 1, 0, 0, work), 1);
	int seen[10] = {0};
	for (uint64_t s = 0; s < 400; s++)
		seen[kv_sample(lg, 10, 1.0, 3, 1, 0, s, work)]++;
	CHECK(seen[1] > 0 && seen[5] > 0 && seen[2] > 0);
	CHECK(seen[0] + seen[3] + seen[4] + seen[6] + seen[7] + seen[8] +
		      seen[9] ==
	      0);
	CHECK_U64(kv_sample(lg, 10, 0.7, 4, 9, 2, 5, work),
		  kv_sample(lg, 10, 0.7, 4, 9, 2, 5, work));
	int all = 0;
	for (uint64_t s = 0; s < 2000; s++)
		all |= 1 << kv_sample(lg, 10, 5.0, 0, 3, 1, s, work);
	CHECK(all == 0x3ff);

	/* prompt tokens stay below the vocabulary */
	for (uint64_t i = 0; i < 100; i++)
		CHECK(kv_rand_token(3, 1, i, 7) < 7);

	uint64_t avail;
	CHECK(kv_meminfo_parse("MemTotal:  100 kB\nMemAvailable:   2048 kB\n",
			       &avail) == 0);
	CHECK_U64(avail, 2048 * 1024);
	CHECK(kv_meminfo_parse("MemTotal: 1 kB\n", &avail) == KV_EINVAL);
	CHECK(kv_mem_available(&avail) == 0 && avail > 0);

	/* one memory policy: KV_MEM_AVAILABLE or MemAvailable, 9/10 to use */
	uint64_t usable;
	char err[KV_ERRLEN];
	setenv("KV_MEM_AVAILABLE", "1000", 1);
	CHECK(kv_run_memory(&avail, &usable, err) == 0);
	CHECK_U64(avail, 1000);
	CHECK_U64(usable, 900);
	setenv("KV_MEM_AVAILABLE", "lots", 1);
	CHECK(kv_run_memory(&avail, &usable, err) == KV_EINVAL);
	CHECK(strstr(err, "KV_MEM_AVAILABLE: not a size: 'lots'") != NULL);
	unsetenv("KV_MEM_AVAILABLE");
	CHECK(kv_run_memory(&avail, &usable, err) == 0);
	CHECK(avail > 0 && usable == avail / 10 * 9);
	struct kv_model *m = test_parse(gpt2_json);
	struct kv_engine_opts o = kv_engine_opts_default();
	CHECK(kv_run_fits(m, &o, 900, 0, 1000, 900, err) == 0);
	CHECK(kv_run_fits(m, &o, 1ULL << 40, 0, 0, 0, err) == 0); /* unknown */
	CHECK(kv_run_fits(m, &o, 901, 0, 1000, 900, err) == KV_EINVAL);
	CHECK(strstr(err, "the run needs 901 B") != NULL);
	CHECK(strstr(err, "fewer users or positions are needed") != NULL);
	kv_model_free(m);
}

/* Large buffers on 2 MiB boundaries (huge pages asked for), small ones
 * on 64 bytes; either is writable to its end. */
static void test_alloc_big(void)
{
	const uint64_t sizes[] = {0, 1, 4096, (2u << 20) - 1, 2u << 20,
				  (5u << 20) + 7};
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		uint64_t n = sizes[i];
		unsigned char *p = kv_alloc_big(n);
		uintptr_t a = (uintptr_t)p;
		CHECK(p != NULL);
		CHECK(a % 64 == 0);
		CHECK(n < (2u << 20) || a % (2u << 20) == 0);
		if (p && n) {
			memset(p, 0xa5, (size_t)n);
			CHECK(p[n - 1] == 0xa5);
		}
		free(p);
	}
}

/* The vectorised kernels of one instruction set against the portable
 * ones (test_skip where the CPU lacks the set). */
static int simd(const char *set)
{
	enum kv_isa isa = test_isa("test_engine", set);
	if (isa == KV_ISA_C)
		return 2;
	if (!kv_attn_has_isa(isa, 64))
		return test_skip("test_engine", set);
	test_attn_isa(isa);
	test_gemm_small(isa);
	printf("test_engine %s: compared with the portable kernels: "
	       "attention (head sizes 16 to 256, 1 to 40 query rows), the "
	       "few-rows product\n",
	       set);
	return test_done("test_engine");
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return simd(argv[1]);
	test_alloc_big();
	test_helpers();
	test_refusals();
	test_bytes();
	test_params_bytes();
	test_kernels();
	test_attn_block();
	test_agreement();
	return test_done("test_engine");
}
