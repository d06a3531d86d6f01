/*
 * test_decode.c - what kvdecode asks of libkv beside the steps: a whole
 * session's sums and verdict (kv_decode_run), the engine options (of a
 * run as asked, and its context), block size, bytes and dry-run numbers
 * of a run, the --lengths distribution and report, the prefix script's
 * per-request counts, and the two formatters of its summary. Tiny
 * shapes, numbers worked by hand.
 */
#include <stdlib.h>
#include <string.h>

#include "kv/decode.h"
#include "kv/dtype.h"
#include "kv/engine.h"
#include "kv/quality.h"
#include "kv/safetensors.h"
#include "kv/units.h"
#include "test.h"

static const char tiny_json[] =
	"{\"model_type\":\"gpt2\",\"n_layer\":2,\"n_embd\":64,"
	"\"n_head\":4,\"n_inner\":128,\"vocab_size\":50,"
	"\"n_positions\":64}";

struct seen {
	uint64_t rows, last;
	double ms[2];
};

static void count(const struct kv_decode_step *st, void *arg)
{
	struct seen *s = arg;
	s->rows++;
	s->last = st->step;
	for (int c = 0; c < 2; c++)
		s->ms[c] += st->ms[c];
}

/* Two users, prompt 5, 3 new, both ways: the tokens agree, the passes
 * are the articles' (7 and 18; a pass feeds every user), the cache is
 * the engine's. */
static void test_run(bool paged)
{
	struct kv_model *m = test_parse(tiny_json);
	struct kv_engine_opts o = kv_engine_opts_default();
	o.users = 2;
	o.threads = 1;
	o.seed = 3;
	o.block_size = 4;
	o.paged = paged;
	kv_decode_engine_opts(&o, 5, 3, true, true);
	struct kv_engine *e = test_engine(m, &o);
	struct kv_decode_opts dop = {5, 3, true, true, 0, 0, 3, NULL, NULL};
	struct kv_decode *d;
	struct kv_decode_result r;
	struct seen s = {0};
	CHECK(kv_decode_open(e, &dop, &d) == 0);
	CHECK(kv_decode_run(d, count, &s, &r) == 0);
	CHECK_U64(s.rows, 3);
	CHECK_U64(s.last, 3);
	CHECK_U64(r.steps, 3);
	CHECK_U64(r.positions, 7);
	CHECK(r.compared);
	CHECK_U64(r.first_diff, 0);
	CHECK_NEAR(r.max_diff, 0, 1e-4);
	CHECK_NEAR(r.ms[0], s.ms[0], 1e-9);
	CHECK_NEAR(r.ms[1], s.ms[1], 1e-9);
	CHECK_U64(r.passes[1], 7);
	CHECK_U64(r.passes[0], 18);
	/* 2 layers x (K + V) x 64 floats */
	CHECK_U64(r.kv_per_token, 2 * 2 * 64 * 4);
	CHECK_U64(r.kv_bytes, kv_engine_cache_bytes(e));
	/* 7 positions in blocks of 4: two blocks a user, all held */
	CHECK_U64(r.pool, paged ? 4 : 0);
	CHECK_U64(r.held, paged ? 4 : 0);
	CHECK(!kv_decode_differ(&r, 1e-4));
	CHECK(kv_decode_next(d, &(struct kv_decode_step){0}) == 0);
	kv_decode_close(d);
	kv_engine_free(e);

	/* one way, no callback: nothing compared, the other way's passes 0 */
	o = kv_engine_opts_default();
	o.threads = 1;
	kv_decode_engine_opts(&o, 5, 3, true, false);
	e = test_engine(m, &o);
	dop.nocache = false;
	CHECK(kv_decode_open(e, &dop, &d) == 0);
	CHECK(kv_decode_run(d, NULL, NULL, &r) == 0);
	CHECK(!r.compared);
	CHECK_U64(r.passes[1], 7);
	CHECK_U64(r.passes[0], 0);
	CHECK(isnan(kv_decode_speedup(&r)));
	kv_decode_close(d);
	kv_engine_free(e);
	kv_model_free(m);
}

/* A step past the engine's context fails; the failed step is steps + 1. */
static void test_run_fails(void)
{
	struct kv_model *m = test_parse(tiny_json);
	struct kv_engine_opts o = kv_engine_opts_default();
	o.threads = 1;
	kv_decode_engine_opts(&o, 4, 2, true, false); /* 5 positions */
	struct kv_engine *e = test_engine(m, &o);
	struct kv_decode_opts dop = {4, 4, true, false, 0, 0, 1, NULL, NULL};
	struct kv_decode *d;
	struct kv_decode_result r;
	struct seen s = {0};
	CHECK(kv_decode_open(e, &dop, &d) == 0);
	/* steps 1 and 2 feed positions up to 5; step 3 the sixth */
	CHECK(kv_decode_run(d, count, &s, &r) == KV_EINVAL);
	CHECK_U64(r.steps, 2);
	CHECK_U64(s.rows, 2);
	kv_decode_close(d);
	kv_engine_free(e);
	kv_model_free(m);
}

static void test_verdict(void)
{
	struct kv_decode_result r = {.compared = true, .ms = {30, 10}};
	CHECK_NEAR(kv_decode_speedup(&r), 3, 0);
	CHECK(!kv_decode_differ(&r, 0));
	r.max_diff = 2e-4;
	CHECK(kv_decode_differ(&r, 1e-4));
	CHECK(!kv_decode_differ(&r, 1e-3));
	r.max_diff = NAN;
	CHECK(kv_decode_differ(&r, 1e-3));
	r.max_diff = 0;
	r.first_diff = 2;
	CHECK(kv_decode_differ(&r, 1));
	r.ms[1] = 0;
	CHECK(isnan(kv_decode_speedup(&r)));
	r = (struct kv_decode_result){.first_diff = 2, .ms = {30, 10}};
	CHECK(!kv_decode_differ(&r, 0)); /* one way: nothing to differ */
	CHECK(isnan(kv_decode_speedup(&r)));
}

static void test_engine_opts(void)
{
	struct kv_engine_opts o = kv_engine_opts_default();
	kv_decode_engine_opts(&o, 5, 3, true, true);
	CHECK_U64(o.max_ctx, 7); /* the last token is not fed */
	CHECK_U64(o.max_chunk, 7);
	CHECK(o.cache);
	kv_decode_engine_opts(&o, 5, 3, true, false);
	CHECK_U64(o.max_chunk, 5); /* the prompt in one pass */
	kv_decode_engine_opts(&o, 5, 3, false, true);
	CHECK(!o.cache);
	o.prefix = true;
	o.block_size = 4;
	kv_decode_engine_opts(&o, 5, 3, false, true);
	CHECK(o.cache);
	CHECK_U64(o.max_chunk, 4);
	o.block_size = 16;
	kv_decode_engine_opts(&o, 5, 3, true, false);
	CHECK_U64(o.max_chunk, 7);

	CHECK_U64(kv_decode_block_size(5, 3, false), 7);
	CHECK_U64(kv_decode_block_size(16, 1, false), 16);
	CHECK_U64(kv_decode_block_size(16, 2, false), 16);
	CHECK_U64(kv_decode_block_size(1, 1, false), 1);
	CHECK_U64(kv_decode_block_size(1, 1, true), 16);
}

/* A run as asked, made the engine's options: each value where the
 * engine keeps it, the context left at the default's 160; the weights'
 * type as given, else tests/ckpt/tiny's own (its tensors are F16), else
 * f32. */
static void test_ask_opts(void)
{
	char err[KV_ERRLEN];
	struct kv_model *m;
	struct kv_st *ck = NULL;
	struct kv_decode_ask a = {
		.layers = 2, .vocab = 50, .kv_heads = 2, .mla = 16,
		.mla_rope = 8, .users = 3, .threads = 4, .seed = 7,
		.block_size = 5, .paged = true, .pool_blocks = 12,
		.prefix = true, .k_dtype = KV_DTYPE_F16,
		.v_dtype = KV_DTYPE_Q8_0, .weights_dtype = -1,
		.logit_scale = 2.5};
	struct kv_engine_opts o = kv_decode_ask_opts(&a);
	CHECK_U64(o.layers, 2);
	CHECK_U64(o.vocab, 50);
	CHECK_U64(o.kv_heads, 2);
	CHECK_U64(o.mla_rank, 16);
	CHECK_U64(o.mla_rope, 8);
	CHECK_U64(o.users, 3);
	CHECK_U64(o.threads, 4);
	CHECK_U64(o.seed, 7);
	CHECK_U64(o.block_size, 5);
	CHECK(o.paged && o.prefix);
	CHECK_U64(o.pool_blocks, 12);
	CHECK(o.k_dtype == KV_DTYPE_F16 && o.v_dtype == KV_DTYPE_Q8_0);
	CHECK(o.logit_scale == 2.5f);
	CHECK(o.weights_dtype == KV_DTYPE_F32 && !o.ckpt);
	CHECK_U64(o.max_ctx, 160);
	CHECK_U64(o.max_chunk, 0);
	CHECK(o.cache);
	CHECK(kv_model_load("tests/ckpt/tiny/config.json", &m, err) == 0);
	CHECK(kv_st_beside(m->path, 1, &ck, err) == 0 && ck);
	a.ckpt = ck;
	o = kv_decode_ask_opts(&a);
	CHECK(o.ckpt == ck && o.weights_dtype == KV_DTYPE_F16);
	a.weights_dtype = KV_DTYPE_BF16;
	CHECK(kv_decode_ask_opts(&a).weights_dtype == KV_DTYPE_BF16);
	kv_st_close(ck);
	kv_model_free(m);
}

static void test_estimate_plan(void)
{
	char err[KV_ERRLEN];
	struct kv_model *m = test_parse(tiny_json);
	struct kv_engine_opts o = kv_engine_opts_default();
	struct kv_engine_size es;
	struct kv_decode_size s;
	uint64_t loop, q;
	o.users = 2;
	kv_decode_engine_opts(&o, 5, 3, true, true);
	CHECK(kv_decode_estimate(m, &o, 5, 3, false, &s, err) == 0);
	CHECK(kv_engine_estimate(m, &o, &es, err) == 0);
	CHECK_U64(s.engine.total, es.total);
	CHECK_U64(s.quality, 0);
	/* 2 users: 5 logit rows of 50 floats (1,000 bytes), 3 x 8 x 2
	 * tokens (192), 23 token cells */
	CHECK(kv_decode_loop_bytes(2, 5, 3, 50, false, &loop) == 0);
	CHECK_U64(loop, 1000 + 192 + 23);
	CHECK_U64(s.loop, loop);
	CHECK_U64(s.need, es.total + loop);
	o.k_dtype = o.v_dtype = KV_DTYPE_F16;
	CHECK(kv_decode_estimate(m, &o, 5, 3, true, &s, err) == 0);
	CHECK(kv_decode_compare_bytes(m, &o, 5, 3, &q, err) == 0);
	CHECK_U64(s.quality, q);
	CHECK_U64(s.need, (q > s.engine.total ? q : s.engine.total) + loop);
	o.vocab = 1ULL << 40;
	CHECK(kv_decode_estimate(m, &o, 5, 3, false, &s, err) != 0);

	/* the dry run: f16, 2 layers x (K + V) x 64 x 2 bytes; 2 users of
	 * 7 and 18 passes */
	struct kv_decode_plan p;
	o.vocab = 0;
	CHECK(kv_decode_plan(m, &o, 5, 3, &p, err) == 0);
	CHECK_U64(p.kv_per_token, 512);
	CHECK_U64(p.passes[1], 14);
	CHECK_U64(p.passes[0], 36);
	o.kv_heads = 3; /* does not divide the 4 heads */
	CHECK(kv_decode_plan(m, &o, 5, 3, &p, err) != 0);
	o.kv_heads = 0;
	CHECK(kv_decode_plan(m, &o, UINT64_MAX / 2, 3, &p, err) ==
	      KV_ERANGE);
	CHECK_STR(err, "token passes overflow 64 bits");
	kv_model_free(m);
}

static void test_lengths_parse(void)
{
	char err[KV_ERRLEN];
	struct kv_lengths l = {0};
	CHECK(kv_lengths_parse("uniform:10:300", 1000, &l, err) == 0);
	CHECK(!l.lens);
	CHECK_U64(l.lo, 10);
	CHECK_U64(l.hi, 300);
	CHECK(kv_lengths_parse("10,200,033", 1000, &l, err) == 0);
	CHECK_U64(l.n, 3);
	CHECK_U64(l.lens[0], 10);
	CHECK_U64(l.lens[2], 33); /* a leading zero in a list is read */
	/* a uniform form after a list leaves the list in effect */
	CHECK(kv_lengths_parse("uniform:1:2", 1000, &l, err) == 0);
	CHECK_U64(l.n, 3);
	CHECK(kv_lengths_parse("7", 1000, &l, err) == 0);
	CHECK_U64(l.n, 1);
	CHECK_U64(l.lens[0], 7);
	CHECK(kv_lengths_parse("1000", 1000, &l, err) == 0);

	const char *bad[] = {"10,,20", "0", "1001", "10,", ",1", "-1",
			     " 1", "1x", "99999999999999999999999"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		CHECK(kv_lengths_parse(bad[i], 1000, &l, err) == KV_EINVAL);
		CHECK_STR(err, "uniform:LO:HI or a list of 1 to 65536 "
			       "lengths in 1..1000");
	}
	const char *ubad[] = {"uniform:300:10", "uniform:5", "uniform:0:5",
			      "uniform:01:5", "uniform:1:05", "uniform:1:1001",
			      "uniform:1:2:", "uniform:"};
	for (size_t i = 0; i < sizeof ubad / sizeof *ubad; i++) {
		CHECK(kv_lengths_parse(ubad[i], 1000, &l, err) == KV_EINVAL);
		CHECK_STR(err, "uniform:LO:HI with 1 <= LO <= HI <= 1000");
	}
	/* 65,536 lengths and no more */
	char *many = malloc(2 * 65537);
	for (int i = 0; i < 65537; i++)
		memcpy(many + 2 * i, "1,", 2);
	many[2 * 65536 - 1] = '\0';
	CHECK(kv_lengths_parse(many, 1000, &l, err) == 0);
	CHECK_U64(l.n, 65536);
	many[2 * 65536 - 1] = ',';
	many[2 * 65537 - 1] = '\0';
	CHECK(kv_lengths_parse(many, 1000, &l, err) == KV_EINVAL);
	free(many);
	kv_lengths_free(&l);
	CHECK(!l.lens);
	CHECK_U64(l.n, 0);
	kv_lengths_free(&l); /* twice is fine */
}

/* Lengths 1, 16 and 17 in blocks of 16: 1 + 1 + 2 blocks; drawn lengths
 * are kv_paged_draw_length()'s. */
static void test_lengths_report(void)
{
	char err[KV_ERRLEN];
	struct kv_model *m = test_parse(tiny_json);
	struct kv_engine_opts o = kv_engine_opts_default();
	struct kv_lengths l = {0};
	struct kv_lengths_report r;
	o.block_size = 16;
	CHECK(kv_lengths_parse("1,16,17", 64, &l, err) == 0);
	CHECK(kv_decode_lengths(m, o, &l, 3, 0, true, 0, &r, err) == 0);
	CHECK_U64(r.max_len, 17);
	CHECK_U64(r.u.tokens, 34);
	CHECK_U64(r.u.blocks, 4);
	CHECK_U64(r.blocks_held, 4);
	CHECK(kv_lengths_parse("uniform:3:40", 64, &l, err) == 0);
	kv_lengths_free(&l); /* the uniform form alone */
	CHECK(kv_decode_lengths(m, o, &l, 5, 9, true, 0, &r, err) == 0);
	uint64_t tokens = 0;
	for (uint64_t i = 0; i < 5; i++)
		tokens += kv_paged_draw_length(9, i, 3, 40);
	CHECK_U64(r.u.tokens, tokens);
	CHECK_U64(r.max_len, 40);
	/* a pool of 3 blocks (one text of 40) does not hold them all */
	CHECK(kv_decode_lengths(m, o, &l, 5, 9, true, 3, &r, err) ==
	      KV_ENOMEM);
	CHECK_HAS(err, "a pool of 3 blocks holds the texts of");
	kv_model_free(m);
}

/* The script on a pool of blocks of 4, prompt 18: cold computes all 18,
 * warm reuses four blocks and computes 2, with the cold logits. */
static void test_prefix(void)
{
	struct kv_model *m = test_parse(tiny_json);
	struct kv_engine_opts o = kv_engine_opts_default();
	struct kv_prefix_request r[KV_PREFIX_REQUESTS];
	int failed;
	o.threads = 1;
	o.block_size = 4;
	o.paged = true;
	o.prefix = true;
	kv_decode_engine_opts(&o, 18, 3, true, false);
	struct kv_engine *e = test_engine(m, &o);
	CHECK(kv_prefix_reuse(e, 18, 3, 0, 0, 5, r, &failed) == 0);
	CHECK(failed < 0);
	CHECK_U64(r[0].cached, 0);
	CHECK_U64(r[0].computed, 18);
	CHECK_U64(r[1].cached, 16);
	CHECK_U64(r[1].computed, 2);
	for (int q = 0; q < KV_PREFIX_REQUESTS; q++)
		CHECK_U64(r[q].computed, 18 - r[q].cached);
	CHECK(r[1].identical == 1);
	CHECK(kv_prefix_same(r));
	r[4].identical = 0;
	CHECK(!kv_prefix_same(r));
	r[4].identical = -1; /* not asked */
	CHECK(kv_prefix_same(r));
	kv_engine_free(e);
	kv_model_free(m);
}

static void test_formats(void)
{
	char b[32];
	CHECK_STR(kv_format_grouped(0, b, sizeof b), "0");
	CHECK_STR(kv_format_grouped(999, b, sizeof b), "999");
	CHECK_STR(kv_format_grouped(1000, b, sizeof b), "1,000");
	CHECK_STR(kv_format_grouped(1234567, b, sizeof b), "1,234,567");
	CHECK_STR(kv_format_grouped(UINT64_MAX, b, sizeof b),
		  "18,446,744,073,709,551,615");
	CHECK_STR(kv_format_grouped(1234567, b, 5), "1,2"); /* cut short */
	CHECK_STR(kv_dtype_pair_name(KV_DTYPE_FP8, KV_DTYPE_FP8, b, sizeof b),
		  "fp8");
	CHECK_STR(kv_dtype_pair_name(KV_DTYPE_Q4_0, KV_DTYPE_F16, b,
				     sizeof b),
		  "K q4_0, V f16");
}

int main(void)
{
	test_run(false);
	test_run(true);
	test_run_fails();
	test_verdict();
	test_engine_opts();
	test_ask_opts();
	test_estimate_plan();
	test_lengths_parse();
	test_lengths_report();
	test_prefix();
	test_formats();
	return test_done("test_decode");
}
