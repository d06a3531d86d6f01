/*
 * test_sweep - kvbench's sweeps in libkv: the points a sweep expands to,
 * in order, with each default worked by hand; a saved row read back; the
 * memory check; one small point measured; a checkpoint's quality points
 * on its own weights.
 */
#include <stdlib.h>

#include "kv/safetensors.h"
#include "kv/serve.h"
#include "kv/sweep.h"
#include "test.h"

static void layouts(void)
{
	enum kv_sweep_layout l;
	CHECK_STR(kv_sweep_layout_name(KV_SWEEP_BLOCKED), "blocked");
	CHECK(kv_sweep_layout_parse("paged", &l) == 0 &&
	      l == KV_SWEEP_PAGED);
	CHECK(kv_sweep_layout_parse("page", &l) == KV_EINVAL);
}

/* The default sweep over GPT-2 small (12 K/V heads) on 2 CPUs: membw,
 * sgemm; attn at 1,024 and 8,192 x heads 12, 3, 1 (6); decode at 160,
 * 1,024, 8,192 (3); nocache at 160, 512 (2); batch at 1,024 x users 1,
 * 2, 4, 8 (4): 17 points. */
static void defaults(struct kv_model *m)
{
	struct kv_sweep w = {0};
	struct kv_sweep_points s = {0};
	CHECK(kv_sweep_expand(&w, &m, 1, 2, &s) == 0);
	CHECK_U64(s.n, 17);
	CHECK(s.p[0].bench == KV_BENCH_MEMBW && s.p[0].threads == 2);
	CHECK(s.p[1].bench == KV_BENCH_SGEMM);
	/* attn: heads outer, contexts inner */
	CHECK(s.p[2].bench == KV_BENCH_ATTN);
	CHECK_U64(s.p[2].kv_heads, 12);
	CHECK_U64(s.p[2].ctx, 1024);
	CHECK_U64(s.p[3].ctx, 8192);
	CHECK_U64(s.p[4].kv_heads, 3);
	CHECK_U64(s.p[7].kv_heads, 1);
	CHECK(s.p[8].bench == KV_BENCH_DECODE && s.p[8].ctx == 160);
	CHECK(s.p[11].bench == KV_BENCH_NOCACHE && s.p[12].ctx == 512);
	CHECK(s.p[13].bench == KV_BENCH_BATCH && s.p[13].users == 1);
	CHECK_U64(s.p[16].users, 8);
	CHECK(s.p[16].layout == KV_SWEEP_CONTIGUOUS &&
	      s.p[16].block_size == 0 && s.p[16].dtype == KV_DTYPE_F32);
	free(s.p);
}

/* decode at 160 over contiguous and paged with blocks of 16 and 32, in
 * f32 and q8_0: 2 formats x (1 + 2) = 6 points; nocache keeps no cache,
 * so one point, in f32. A latent rank has no heads to sweep (0). */
static void axes(struct kv_model *m)
{
	uint64_t ctx[] = {160}, bs[] = {16, 32}, heads[] = {4}, mla[] = {64};
	int dts[] = {KV_DTYPE_F32, KV_DTYPE_Q8_0};
	struct kv_sweep w = {.ctx = ctx, .nctx = 1, .block_size = bs,
			     .nblock_size = 2, .dtypes = dts, .ndtypes = 2,
			     .any_layout = true, .any_bench = true};
	struct kv_sweep_points s = {0};
	w.bench[KV_BENCH_DECODE] = w.bench[KV_BENCH_NOCACHE] = true;
	w.layout[KV_SWEEP_CONTIGUOUS] = w.layout[KV_SWEEP_PAGED] = true;
	CHECK(kv_sweep_expand(&w, &m, 1, 1, &s) == 0);
	CHECK_U64(s.n, 7);
	CHECK(s.p[0].dtype == KV_DTYPE_F32 &&
	      s.p[0].layout == KV_SWEEP_CONTIGUOUS);
	CHECK(s.p[1].layout == KV_SWEEP_PAGED && s.p[1].block_size == 16);
	CHECK_U64(s.p[2].block_size, 32);
	CHECK(s.p[3].dtype == KV_DTYPE_Q8_0);
	CHECK(s.p[6].bench == KV_BENCH_NOCACHE &&
	      s.p[6].dtype == KV_DTYPE_F32 && s.p[6].block_size == 0);
	struct kv_engine_opts o = kv_sweep_engine_opts(&w, &s.p[6]);
	CHECK(!o.cache && o.max_chunk == 160 && o.max_ctx == 160);
	o = kv_sweep_engine_opts(&w, &s.p[2]);
	CHECK(o.cache && o.paged && o.max_chunk == 1 && o.block_size == 32);
	CHECK(o.k_dtype == KV_DTYPE_F32 && o.v_dtype == KV_DTYPE_F32);
	free(s.p);
	s = (struct kv_sweep_points){0};
	w = (struct kv_sweep){.kv_heads = heads, .nkv_heads = 1, .mla = mla,
			      .nmla = 1, .ctx = ctx, .nctx = 1,
			      .any_bench = true};
	w.bench[KV_BENCH_ATTN] = true;
	CHECK(kv_sweep_expand(&w, &m, 1, 1, &s) == 0);
	CHECK(s.n == 1 && s.p[0].mla == 64 && s.p[0].kv_heads == 0);
	free(s.p);
}

/* A saved run read back: columns found by name, in any order. */
static void rows(void)
{
	char err[KV_ERRLEN], *model;
	char *head[] = {"ms_median", "bench", "model", "ctx", "users",
			"kv_heads", "threads", "layout", "block_size",
			"kv_dtype"};
	char name[] = "gpt2-small+mla256", bad[] = "gpt2-small+mla";
	char *row[] = {"2.5", "decode", name, "1024", "2", "12", "1",
		       "paged", "32", "q4_0"};
	struct kv_sweep_cols c;
	struct kv_sweep_point p;
	CHECK(kv_sweep_cols(head, 10, &c, err) == 0);
	CHECK(c.ms == 0 && c.bench == 1 && c.max == 6 && c.kv_dtype == 9);
	CHECK(kv_sweep_row(&c, row, 10, &p, &model, err) == 0);
	CHECK(p.bench == KV_BENCH_DECODE && p.ctx == 1024 && p.users == 2);
	CHECK(p.layout == KV_SWEEP_PAGED && p.block_size == 32);
	CHECK(p.dtype == KV_DTYPE_Q4_0 && p.baseline_ms == 2.5);
	CHECK_STR(model, "gpt2-small");
	CHECK_U64(p.mla, 256);
	row[2] = bad;
	CHECK(kv_sweep_row(&c, row, 10, &p, &model, err) == KV_EINVAL);
	CHECK_STR(err, "a model 'gpt2-small+mla' with no latent rank");
	row[1] = "decod";
	CHECK(kv_sweep_row(&c, row, 10, &p, &model, err) == KV_EINVAL);
	CHECK_STR(err, "unknown bench 'decod'");
	row[1] = "membw"; /* no model, no context needed */
	row[3] = "";
	CHECK(kv_sweep_row(&c, row, 7, &p, &model, err) == 0);
	CHECK(model == NULL && p.bench == KV_BENCH_MEMBW);
	row[0] = "0";
	CHECK(kv_sweep_row(&c, row, 7, &p, &model, err) == KV_EINVAL);
	CHECK_STR(err, "a number is missing or malformed");
	CHECK(kv_sweep_row(&c, row, 6, &p, &model, err) == KV_EINVAL);
	CHECK_STR(err, "6 cells, expected at least 7");
	CHECK(kv_sweep_cols(head + 1, 9, &c, err) == KV_EINVAL);
	CHECK_STR(err, "no column 'ms_median'; not a kvbench TSV with its "
		       "header");
}

/* The memory a run may take: 9/10 of KV_MEM_AVAILABLE. */
static void fits(struct kv_model *m)
{
	char err[KV_ERRLEN];
	uint64_t ctx[] = {1024};
	struct kv_sweep w = {.ctx = ctx, .nctx = 1, .any_bench = true,
			     .membw = 512ULL << 20};
	struct kv_sweep_points s = {0};
	w.bench[KV_BENCH_DECODE] = w.bench[KV_BENCH_MEMBW] = true;
	CHECK(kv_sweep_expand(&w, &m, 1, 1, &s) == 0 && s.n == 2);
	uint64_t bytes;
	CHECK(kv_sweep_bytes(&w, m, &s.p[0], &bytes, err) == 0 && !bytes);
	CHECK(kv_sweep_bytes(&w, m, &s.p[1], &bytes, err) == 0);
	CHECK(bytes > 497759232); /* the f32 weights, and more */
	setenv("KV_MEM_AVAILABLE", "1GiB", 1);
	CHECK(kv_sweep_fits(&w, &m, &s, err) == 0);
	setenv("KV_MEM_AVAILABLE", "512MiB", 1);
	CHECK(kv_sweep_fits(&w, &m, &s, err) == KV_EINVAL);
	CHECK_HAS(err, "--membw-size 512.00 MiB: more than the 460.80 MiB");
	w.membw = 1 << 20;
	CHECK(kv_sweep_fits(&w, &m, &s, err) == KV_EINVAL);
	CHECK_HAS(err, "decode gpt2-small at ctx 1024, 1 users: ");
	unsetenv("KV_MEM_AVAILABLE");
	free(s.p);
}

/* One small point measured: a decode step of a 1-layer model over 16
 * positions, one repetition, no warm-up time. */
static void run(struct kv_model *m)
{
	char err[KV_ERRLEN];
	struct kv_sweep w = {.layers = 1, .vocab = 64, .reps = 1};
	struct kv_sweep_point p = {.bench = KV_BENCH_DECODE, .ctx = 16,
				   .users = 1, .threads = 1};
	struct kv_sweep_refs *refs;
	struct kv_sweep_out o;
	volatile int stop = 0;
	CHECK(kv_sweep_refs_new(&refs) == 0);
	w.membw = 1 << 20;
	CHECK(kv_sweep_run(&w, &m, refs, &p, &stop, &o, err) == 0);
	CHECK(o.r.reps == 1 && o.r.ms.median > 0 && o.r.bytes > 0);
	CHECK(o.kv_heads == 12 && o.r.ref_gbps > 0);
	CHECK_STR(o.model, "gpt2-small");
	p.threads = 0;
	CHECK(kv_sweep_run(&w, &m, refs, &p, &stop, &o, err) == KV_EINVAL);
	CHECK_STR(err, "threads: from 1 to 256, got 0");
	kv_sweep_refs_free(refs);
}

/* A profile: per thread count (4 listed twice runs once) membw, sgemm,
 * decode at 160, nocache at 256 and batches of 4 and 32 at 160 with the
 * model's 12 heads; its entries made from hand-filled results, one per thread
 * count, the most threads also "local". */
static void profile(struct kv_model *m)
{
	uint64_t threads[] = {4, 1, 4};
	int wt[] = {KV_DTYPE_BF16};
	struct kv_sweep w = {.threads = threads, .nthreads = 3, .reps = 5,
			     .membw = 512ULL << 20, .sgemm_n = 1024};
	struct kv_sweep_points s = {0};
	char how[256], err[KV_ERRLEN];
	CHECK(kv_sweep_profile(&w, &m, 16, &s) == 0);
	CHECK_U64(s.n, 12);
	static const enum kv_bench order[] = {KV_BENCH_MEMBW, KV_BENCH_SGEMM,
					      KV_BENCH_DECODE,
					      KV_BENCH_NOCACHE,
					      KV_BENCH_BATCH, KV_BENCH_BATCH};
	for (size_t i = 0; i < s.n; i++) {
		CHECK(s.p[i].bench == order[i % 6]);
		CHECK_U64(s.p[i].threads, i < 6 ? 4 : 1);
		CHECK(s.p[i].users == (i % 6 == 4	? 4
				       : i % 6 == 5 ? 32
						    : 1) &&
		      s.p[i].wt == KV_DTYPE_F32 &&
		      s.p[i].layout == KV_SWEEP_CONTIGUOUS);
	}
	CHECK(s.p[2].ctx == KV_PROFILE_DECODE_CTX && s.p[2].kv_heads == 12);
	CHECK(s.p[3].ctx == KV_PROFILE_PREFILL_CTX);
	CHECK(s.p[4].ctx == KV_PROFILE_DECODE_CTX && s.p[4].kv_heads == 12);
	CHECK(s.p[5].ctx == KV_PROFILE_DECODE_CTX);
	CHECK(s.p[0].ctx == 0 && s.p[0].kv_heads == 0);
	CHECK_STR(kv_sweep_profile_how(&w, m, &s, how, sizeof how),
		  "gpt2-small, decode of 1 user at 160 tokens, of 4 and 32 "
		  "users, prefill of 256, f32 weights, 512.00 MiB probe, "
		  "sgemm n=1024, 5 reps");
	w.layers = 1;
	w.vocab = 256;
	w.reps = 1;
	CHECK_HAS(kv_sweep_profile_how(&w, m, &s, how, sizeof how),
		  "gpt2-small (1 layer, vocab 256), decode");
	CHECK_HAS(how, ", 1 rep");

	/* the measurements, by hand: 4 threads reached 0.5 of 20 GB/s and
	 * 0.25 of 400 GFLOP/s; 1 thread 0.9 of 10 and 0.8 of 100 */
	struct kv_sweep_out out[12] = {0};
	out[2].r = (struct kv_bench_result){.ref_gbps = 20, .efficiency = 0.5};
	out[3].r = (struct kv_bench_result){.ref_gflops = 400,
					    .efficiency = 0.25};
	out[8].r = (struct kv_bench_result){.ref_gbps = 10, .efficiency = 0.9};
	out[9].r = (struct kv_bench_result){.ref_gflops = 100,
					    .efficiency = 0.8};
	struct kv_gpu local = {.memory_bytes = 1ULL << 34};
	snprintf(local.label, sizeof local.label, "this machine");
	struct kv_gpus *g = NULL;
	CHECK(kv_sweep_profile_gpus(&s, &m, out, 12, &local, 0, "how", &g,
				    err) == 0);
	if (g) {
		CHECK_U64(g->n, 2);
		CHECK_STR(g->gpu[0].name, "local-j4");
		CHECK_STR(g->gpu[0].aliases[0], "local");
		CHECK_STR(g->gpu[1].name, "local-j1");
		CHECK(g->gpu[0].bandwidth_gbps == 20 &&
		      g->gpu[0].bf16_tflops == 0.4 &&
		      g->gpu[0].bandwidth_efficiency == 0.5 &&
		      g->gpu[0].flops_efficiency == 0.25);
		CHECK(g->gpu[1].bandwidth_gbps == 10 &&
		      g->gpu[1].flops_efficiency == 0.8 &&
		      g->gpu[1].threads == 1);
		/* no batched step measured: no decode terms */
		CHECK(g->gpu[0].serial_fraction == 0 &&
		      g->gpu[0].decode_tflops == 0);
		CHECK(kv_gpus_lookup(g, "local") == &g->gpu[0]);
	}
	/* the batched steps on 1 thread took what kvfit says of them with
	 * a serial fraction of 0.25 and a decode rate of 0.1 TFLOP/s (the
	 * fit's own case is test_serve's): both found again, as the step of
	 * 32 is past the ridge (its FLOPs, 80 ms, beyond the reads', 55) */
	struct kv_fit_in in = {
		.m = m, .kv_dtype = KV_DTYPE_F32, .w_dtype = KV_DTYPE_F32,
		.mem = 1ULL << 34, .tp = 1, .pp = 1, .ctx = 161,
		.server = kv_server_get(KV_SERVER_IDEAL), .bandwidth_gbps = 10, .tflops = 0.1,
		.batched_tokens = 160};
	struct kv_serve_in sw = {.isl = 160, .osl = 1, .users = 4,
				 .bw_eff = 0.9, .flops_eff = 0.8,
				 .serial = 0.25, .dec_tflops = 0.1};
	struct kv_serve at;
	CHECK(kv_serve_solve(&in, &sw, &at, err) == 0);
	out[10].r.ms.median = at.decode.ms;
	sw.users = 32;
	CHECK(kv_serve_solve(&in, &sw, &at, err) == 0);
	out[11].r.ms.median = at.decode.ms;
	kv_gpus_free(g);
	CHECK(kv_sweep_profile_gpus(&s, &m, out, 12, &local, 0, "how", &g,
				    err) == 0);
	if (g) {
		CHECK_NEAR(g->gpu[1].serial_fraction, 0.25, 0);
		CHECK_NEAR(g->gpu[1].decode_tflops, 0.1, 0);
		CHECK(g->gpu[0].serial_fraction == 0);
	}
	kv_gpus_free(g);
	/* a run cut short after the first thread count: its entry only */
	CHECK(kv_sweep_profile_gpus(&s, &m, out, 6, &local, 0, "", &g, err) ==
	      0);
	CHECK(g && g->n == 1);
	kv_gpus_free(g);
	/* the prefill missing its reference */
	out[9].r.ref_gflops = 0;
	CHECK(kv_sweep_profile_gpus(&s, &m, out, 12, &local, 0, "", &g, err) ==
	      KV_EINVAL);
	CHECK(g == NULL);
	CHECK_STR(err, "profile on 1 thread: no prefill and its sgemm rate");
	CHECK(kv_sweep_profile_gpus(&s, &m, out, 2, &local, 0, "", &g, err) ==
	      KV_EINVAL);
	CHECK_STR(err, "a profile without a decode step");
	/* the weights' type: the first listed */
	free(s.p);
	s = (struct kv_sweep_points){0};
	w.wdtypes = wt;
	w.nwdtypes = 1;
	w.threads = NULL;
	CHECK(kv_sweep_profile(&w, &m, 3, &s) == 0);
	CHECK(s.n == 6 && s.p[2].wt == KV_DTYPE_BF16 && s.p[0].threads == 3);
	free(s.p);
}

/* A checkpoint's quality points run its weights, its timed ones do not:
 * tests/ckpt/tiny's weights are all zero, so every logit is 0 whatever
 * the cache keeps, and an fp8 cache changes nothing; the same point on
 * random weights does. Their runs are ctx + gen - 1 positions long,
 * which a GPT-2 checkpoint's learned table must cover. */
static void checkpoint(void)
{
	char err[KV_ERRLEN];
	struct kv_model *m;
	struct kv_st *ck;
	uint64_t ctx[] = {16}, bytes;
	int fp8[] = {KV_DTYPE_FP8};
	struct kv_sweep w = {.ctx = ctx, .nctx = 1, .dtypes = fp8,
			     .ndtypes = 1, .any_bench = true, .gen = 8};
	struct kv_sweep_points s = {0};
	struct kv_sweep_refs *refs;
	struct kv_sweep_out o;
	volatile int stop = 0;
	CHECK(kv_model_load("tests/ckpt/tiny/config.json", &m, err) == 0);
	CHECK(kv_st_beside(m->path, 1, &ck, err) == 0 && ck);
	const struct kv_st *cks[] = {ck};
	w.bench[KV_BENCH_DECODE] = w.bench[KV_BENCH_QUALITY] = true;
	w.model_ckpt = cks;
	CHECK(kv_sweep_expand(&w, &m, 1, 1, &s) == 0 && s.n == 2);
	CHECK(s.p[0].bench == KV_BENCH_DECODE &&
	      s.p[1].bench == KV_BENCH_QUALITY);
	CHECK(kv_sweep_engine_opts(&w, &s.p[0]).ckpt == NULL);
	CHECK(kv_sweep_engine_opts(&w, &s.p[1]).ckpt == ck);
	CHECK(kv_sweep_refs_new(&refs) == 0);
	CHECK(kv_sweep_run(&w, &m, refs, &s.p[1], &stop, &o, err) == 0);
	CHECK(o.q.steps == 8 && o.q.agree == 8 && o.q.max_abs == 0);
	w.model_ckpt = NULL;
	CHECK(kv_sweep_run(&w, &m, refs, &s.p[1], &stop, &o, err) == 0);
	CHECK(o.q.steps == 8 && o.q.max_abs > 0);
	kv_sweep_refs_free(refs);
	kv_st_close(ck);
	kv_model_free(m);

	CHECK(kv_model_load("tests/ckpt/tiny-gpt2/config.json", &m, err) ==
	      0);
	CHECK(kv_st_beside(m->path, 1, &ck, err) == 0 && ck);
	cks[0] = ck;
	w.model_ckpt = cks;
	s.p[1].kv_heads = 0; /* the model's own */
	s.p[1].ctx = 30;
	CHECK(kv_sweep_bytes(&w, m, &s.p[1], &bytes, err) == KV_EINVAL);
	CHECK_HAS(err, "37 positions, beyond the 32 the checkpoint's "
		       "learned positions cover");
	s.p[1].ctx = 25; /* 32 positions: as many as it has */
	CHECK(kv_sweep_bytes(&w, m, &s.p[1], &bytes, err) == 0 && bytes);
	kv_st_close(ck);
	kv_model_free(m);
	free(s.p);
}

int main(void)
{
	struct kv_model *m;
	CHECK(kv_model_gpt2_small(&m) == 0);
	layouts();
	defaults(m);
	axes(m);
	rows();
	fits(m);
	run(m);
	profile(m);
	kv_model_free(m);
	checkpoint();
	return test_done("test_sweep");
}
