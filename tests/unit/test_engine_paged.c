/*
 * test_engine_paged.c - the engine's paged cache and prefix caching on
 * tiny shapes: paged logits are bitwise those of the contiguous layout
 * with the same blocks (GPT-2 and Llama-style blocks, 1, 3 and 12 KV
 * heads, one and three users, one and two threads, a block of one
 * position and one of the whole context, prompts across attention tiles,
 * blocks apart in the pool, a decode step split over positions) and agree with recomputation; a warm prompt whose leading
 * blocks are reused gives bitwise the cold logits; a changed first token
 * reuses nothing; the cache is exactly pool x block bytes; bad block
 * sizes and pools are refused, and an exhausted pool fails the pass.
 */
#include <stdlib.h>

#include "engine/engine_int.h"
#include "kv/engine.h"
#include "kv/layout.h"
#include "kv/paged.h"
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

/* Heads of 64 values, which every block format tiles. */
static const char llama64_json[] =
	"{\"model_type\":\"llama\",\"num_hidden_layers\":2,"
	"\"hidden_size\":256,\"num_attention_heads\":4,"
	"\"num_key_value_heads\":2,\"intermediate_size\":256,"
	"\"vocab_size\":101,\"max_position_embeddings\":64}";

/*
 * Decodes `gen` tokens after a prompt of `prompt` with a contiguous and a
 * paged engine of blocks of bs, greedily, and also without the cache:
 * every step's logits must be bitwise equal between the two layouts and
 * close to the recomputed ones.
 */
static void layouts_in(const struct kv_model *m, uint32_t kvh,
		       uint32_t users, uint32_t threads, uint32_t bs,
		       uint64_t prompt, uint64_t gen, enum kv_dtype f,
		       enum kv_dtype fv)
{
	struct kv_engine_opts o = kv_engine_opts_default();
	o.k_dtype = f;
	o.v_dtype = fv;
	o.kv_heads = kvh;
	o.users = users;
	o.threads = threads;
	o.max_ctx = prompt + gen;
	o.seed = 3;
	o.block_size = bs;
	struct kv_engine *c = test_engine(m, &o);
	o.paged = true;
	struct kv_engine *p = test_engine(m, &o);
	uint64_t v = kv_engine_vocab(c), ctx = prompt + gen;
	uint32_t *text = calloc(users * ctx, sizeof *text);
	uint32_t *chunk = calloc(users * ctx, sizeof *chunk);
	float *lc = calloc(users * v, sizeof *lc);
	float *lp = calloc(users * v, sizeof *lp);
	float *ln = calloc(users * v, sizeof *ln);
	int same = 1;
	double worst = 0;
	for (uint32_t u = 0; u < users; u++)
		for (uint64_t i = 0; i < prompt; i++)
			text[u * ctx + i] = kv_rand_token(3, u, i, v);
	uint64_t len = prompt;
	for (uint64_t step = 0; step < gen; step++, len++) {
		uint64_t n = step ? 1 : prompt, pos = len - n;
		for (uint32_t u = 0; u < users; u++)
			memcpy(chunk + u * n, text + u * ctx + pos,
			       n * sizeof *chunk);
		CHECK(kv_engine_forward(c, chunk, n, pos, true, lc) == 0);
		CHECK(kv_engine_forward(p, chunk, n, pos, true, lp) == 0);
		same &= !memcmp(lc, lp, users * v * sizeof *lc);
		for (uint32_t u = 0; u < users; u++)
			memcpy(chunk + u * len, text + u * ctx,
			       len * sizeof *chunk);
		CHECK(kv_engine_forward(p, chunk, len, 0, false, ln) == 0);
		double d = kv_max_abs_diff(lp, ln, users * v);
		worst = d > worst ? d : worst;
		for (uint32_t u = 0; u < users; u++)
			text[u * ctx + len] =
				kv_sample(lp + u * v, v, 0, 0, 3, u, step, NULL);
	}
	if (!same)
		fprintf(stderr, "layouts differ: kvh %u users %u threads %u "
				"bs %u\n",
			kvh, users, threads, bs);
	CHECK(same);
	/* a compact format's rounding may fall the other way in the
	 * recomputed text: the identity between layouts is what is held */
	if (f == KV_DTYPE_F32 && fv == KV_DTYPE_F32)
		CHECK_NEAR(worst, 0, 1e-5);
	free(text);
	free(chunk);
	free(lc);
	free(lp);
	free(ln);
	kv_engine_free(c);
	kv_engine_free(p);
}

static void layouts(const struct kv_model *m, uint32_t kvh, uint32_t users,
		    uint32_t threads, uint32_t bs, uint64_t prompt,
		    uint64_t gen)
{
	layouts_in(m, kvh, users, threads, bs, prompt, gen, KV_DTYPE_F32,
		   KV_DTYPE_F32);
}

static void test_layouts(void)
{
	const char *jsons[] = {gpt2_json, llama_json};
	const uint32_t kvs[] = {1, 3, 12}, users[] = {1, 3},
		       threads[] = {1, 2};
	for (int f = 0; f < 2; f++) {
		struct kv_model *m = test_parse(jsons[f]);
		for (int k = 0; k < 3; k++)
			for (int u = 0; u < 2; u++)
				for (int t = 0; t < 2; t++)
					if (test_grid_case(4 * k + 2 * u + t))
						layouts(m, kvs[k], users[u],
							threads[t], 4, 10, 4);
		layouts(m, 3, 2, 2, 1, 9, 3);   /* a block per position */
		layouts(m, 3, 2, 2, 12, 9, 3);  /* one block: the context */
		layouts(m, 12, 1, 1, 16, 40, 3); /* chunk across blocks */
		/* a prompt across tiles of 256 (blocks of 1) and of 200
		 * (blocks of 100): its tokens see all, part or none of a
		 * tile */
		if (!test_quick()) {
			layouts(m, 3, 2, 2, 1, 280, 2);
			layouts(m, 3, 1, 1, 100, 450, 2);
		}
		kv_model_free(m);
	}
	/* one KV head, one user, two threads: decode steps past 1,024
	 * positions are split over whole blocks and merged */
	struct kv_model *m = test_parse(llama_json);
	if (!test_quick())
		layouts(m, 1, 1, 2, 16, 1100, 3);
	/* the cache's compact formats, K's and V's apart, blocks
	 * interleaved between users (gathered tiles) and tiles split
	 * between tokens */
	const enum kv_dtype fmts[] = {KV_DTYPE_F16, KV_DTYPE_FP8,
				      KV_DTYPE_INT8, KV_DTYPE_Q4_0,
				      KV_DTYPE_Q4_1};
	kv_model_free(m);
	m = test_parse(llama64_json);
	for (int i = 0; i < 5; i++) {
		layouts_in(m, 2, 3, 2, 4, 10, 4, fmts[i], fmts[i]);
		if (!test_quick())
			layouts_in(m, 2, 2, 2, 1, 280, 2, fmts[i],
				   fmts[(i + 1) % 5]);
	}
	kv_model_free(m);
}

/* A stand-in prefill then one step, as kvbench does, in both layouts. */
static void test_fill(void)
{
	struct kv_model *m = test_parse(llama_json);
	struct kv_engine_opts o = kv_engine_opts_default();
	o.kv_heads = 3;
	o.users = 2;
	o.max_ctx = 40;
	o.block_size = 8;
	struct kv_engine *c = test_engine(m, &o);
	o.paged = true;
	struct kv_engine *p = test_engine(m, &o);
	uint32_t tok[2] = {5, 7};
	float a[202], b[202];
	CHECK(kv_engine_fill_cache(c, 40, 1) == 0);
	CHECK(kv_engine_fill_cache(p, 40, 1) == 0);
	CHECK(kv_engine_forward(c, tok, 1, 39, true, a) == 0);
	CHECK(kv_engine_forward(p, tok, 1, 39, true, b) == 0);
	CHECK(!memcmp(a, b, sizeof a));
	CHECK(kv_engine_attend(p, 39) == 0);
	/* a step again at the same position rewrites it */
	CHECK(kv_engine_forward(p, tok, 1, 39, true, b) == 0);
	CHECK(!memcmp(a, b, sizeof a));
	/* beyond what the sequences hold */
	CHECK(kv_engine_fill_cache(p, 20, 1) == 0);
	CHECK(kv_engine_attend(p, 20) == KV_EINVAL);
	CHECK(kv_engine_forward(p, tok, 1, 21, true, b) == KV_EINVAL);
	kv_engine_free(c);
	kv_engine_free(p);
	kv_model_free(m);
}

/*
 * Runs a request on sequence 0: attaches the prompt's cached blocks,
 * prefills the rest in block-aligned chunks, decodes `gen` greedy tokens;
 * keeps every step's logits in out (gen, vocab). Returns the positions
 * reused.
 */
static uint64_t request(struct kv_engine *e, const uint32_t *prompt,
			uint64_t n, uint64_t gen, float *out)
{
	uint64_t v = kv_engine_vocab(e), cached = 0;
	CHECK(kv_engine_prefix_match(e, 0, prompt, n, &cached) == 0);
	CHECK(kv_engine_prefill(e, prompt + cached, n - cached, cached,
				out) == 0);
	for (uint64_t i = 1; i < gen; i++) {
		uint32_t t = kv_sample(out + (i - 1) * v, v, 0, 0, 0, 0, i,
				       NULL);
		CHECK(kv_engine_forward(e, &t, 1, n + i - 1, true,
					out + i * v) == 0);
	}
	return cached;
}

static void test_prefix(const char *json)
{
	struct kv_model *m = test_parse(json);
	struct kv_engine_opts o = kv_engine_opts_default();
	struct kv_paged_stats st;
	o.kv_heads = 3;
	o.max_ctx = 24;
	o.block_size = 4;
	o.threads = 2;
	o.paged = true;
	o.prefix = true;
	struct kv_engine *e = test_engine(m, &o);
	uint64_t v = kv_engine_vocab(e);
	uint32_t prompt[18], other[18];
	float *cold = calloc(4 * v, sizeof *cold);
	float *warm = calloc(4 * v, sizeof *warm);
	float *ref = calloc(4 * v, sizeof *ref);
	for (int i = 0; i < 18; i++)
		prompt[i] = kv_rand_token(9, 0, (uint64_t)i, v);
	CHECK_U64(request(e, prompt, 18, 4, cold), 0);
	kv_engine_paged_stats(e, &st);
	CHECK_U64(st.hits, 0);
	CHECK_U64(st.misses, 4); /* (18 - 1) / 4 blocks looked up */
	/* the same prompt: four blocks reused, two tokens computed */
	CHECK_U64(request(e, prompt, 18, 4, warm), 16);
	CHECK(!memcmp(cold, warm, 4 * v * sizeof *cold));
	kv_engine_paged_stats(e, &st);
	CHECK_U64(st.hits, 4);
	/* the prompt from token 9 on changed: two blocks reused */
	memcpy(other, prompt, sizeof other);
	for (int i = 9; i < 18; i++)
		other[i] = (prompt[i] + 1) % (uint32_t)v;
	CHECK_U64(request(e, other, 18, 4, warm), 8);
	/* the first token changed: nothing reused */
	memcpy(other, prompt, sizeof other);
	other[0] = (prompt[0] + 1) % (uint32_t)v;
	CHECK_U64(request(e, other, 18, 4, warm), 0);
	kv_engine_paged_stats(e, &st);
	CHECK_U64(st.hits, 6);
	CHECK_U64(st.misses, 4 + 2 + 4);
	/* and a contiguous engine of the same blocks prefilled in the same
	 * chunks gives the same logits as the cold and warm runs */
	o.paged = o.prefix = false;
	struct kv_engine *c = test_engine(m, &o);
	CHECK(kv_engine_prefill(c, prompt, 18, 0, ref) == 0);
	CHECK(!memcmp(cold, ref, v * sizeof *ref));
	CHECK(kv_engine_prefix_match(c, 0, prompt, 18, &(uint64_t){0}) ==
	      KV_EINVAL);
	kv_engine_free(c);
	kv_engine_free(e);
	free(cold);
	free(warm);
	free(ref);
	kv_model_free(m);
}

/* A pool of 3 blocks of 4: a second request evicts the first's blocks,
 * least recently used first, and the first then misses. */
static void test_evict(void)
{
	struct kv_model *m = test_parse(llama_json);
	struct kv_engine_opts o = kv_engine_opts_default();
	struct kv_paged_stats st;
	o.max_ctx = 12;
	o.block_size = 4;
	o.paged = o.prefix = true;
	o.pool_blocks = 3;
	struct kv_engine *e = test_engine(m, &o);
	uint64_t v = kv_engine_vocab(e);
	uint32_t a[9], b[9];
	float *out = calloc(2 * v, sizeof *out);
	for (int i = 0; i < 9; i++) {
		a[i] = (uint32_t)i;
		b[i] = (uint32_t)i + 50;
	}
	CHECK_U64(request(e, a, 9, 2, out), 0); /* holds 3 blocks */
	CHECK_U64(request(e, a, 9, 2, out), 8);
	CHECK_U64(request(e, b, 9, 2, out), 0); /* evicts a's two */
	kv_engine_paged_stats(e, &st);
	CHECK_U64(st.evictions, 2);
	CHECK_U64(request(e, a, 9, 2, out), 0);
	kv_engine_free(e);
	free(out);
	kv_model_free(m);
}

static void test_sizes(void)
{
	struct kv_model *m = test_parse(llama_json);
	struct kv_engine_opts o = kv_engine_opts_default();
	struct kv_engine_size sz;
	char err[KV_ERRLEN];
	uint64_t per;
	o.kv_heads = 3;
	o.users = 2;
	o.max_ctx = 30;
	o.block_size = 8;
	o.paged = true;
	struct kv_engine *e = test_engine(m, &o);
	struct kv_model *eff;
	CHECK(kv_engine_model(m, &o, &eff, err) == 0);
	struct kv_opts ko = kv_opts_default(eff);
	ko.k_dtype = ko.v_dtype = KV_DTYPE_F32;
	CHECK(kv_model_token_bytes(eff, &ko, &per, err) == 0);
	/* 2 layers x (K + V) x 3 heads x 16 values x 4 bytes */
	CHECK_U64(per, 2 * 2 * 3 * 16 * 4);
	/* the default pool: 2 users x ceil(30 / 8) blocks of 8 */
	CHECK_U64(kv_engine_cache_bytes(e), 2 * 4 * 8 * per);
	CHECK_U64(kv_engine_block_bytes(e), 8 * per);
	CHECK_U64(kv_engine_cache_token_bytes(e), per);
	kv_model_free(eff);
	kv_engine_free(e);
	o.pool_blocks = 5;
	CHECK(kv_engine_estimate(m, &o, &sz, err) == 0);
	CHECK_U64(sz.cache, 5 * 8 * per);

	/* refusals */
	o.pool_blocks = 3; /* one sequence of 30 needs 4 */
	CHECK(kv_engine_estimate(m, &o, &sz, err) == KV_EINVAL);
	CHECK_HAS(err, "needs 4 blocks of 8, got 3");
	o.pool_blocks = 0;
	o.block_size = 31;
	CHECK(kv_engine_estimate(m, &o, &sz, err) == KV_EINVAL);
	CHECK_HAS(err, "block-size: must be in 1..30");
	o.block_size = 0;
	CHECK(kv_engine_estimate(m, &o, &sz, err) == KV_EINVAL);
	CHECK_HAS(err, "at least one position, got 0");
	o.block_size = 8;
	o.paged = false;
	o.prefix = true;
	CHECK(kv_engine_estimate(m, &o, &sz, err) == KV_EINVAL);

	/* two users and a pool of one sequence: the second has no block */
	o.prefix = false;
	o.paged = true;
	o.pool_blocks = 4;
	e = test_engine(m, &o);
	uint32_t tok[60] = {0};
	float lg[202];
	CHECK(kv_engine_forward(e, tok, 20, 0, true, lg) == KV_ENOMEM);
	kv_engine_free(e);
	kv_model_free(m);
}

int main(void)
{
	test_layouts();
	test_fill();
	test_prefix(gpt2_json);
	test_prefix(llama_json);
	test_evict();
	test_sizes();
	return test_done("test_engine_paged");
}
