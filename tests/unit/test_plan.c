/*
 * test_plan.c - kvfit's rows: the walk over formats x block sizes x
 * contexts x users x engines and the engines --engine all leaves out,
 * where each row's weights come from, a kvsize row's own values, the
 * solves of a row against the seed article's Llama 3.1 8B numbers, and
 * what a refused row says.
 */
#include <math.h>

#include "kv/plan.h"
#include "test.h"

#define GB 1000000000ULL

/* The article's setting: 80 GB GPU, 16 GB of weights, 6 GB kept back. */
static struct kv_plan_opts seed(void)
{
	return (struct kv_plan_opts){.mem = 80 * GB, .weights = 16 * GB,
				     .reserve = 6 * GB, .reserve_given = true,
				     .tp = 1, .pp = 1, .wdtype = -1,
				     .server = kv_server_get(KV_SERVER_IDEAL)};
}

/* The rows of one plan, in order, into r (at most n); returns how many. */
static size_t walk(const struct kv_plan_opts *o, const struct kv_plan *p,
		   struct kv_plan_row *r, size_t n)
{
	struct kv_plan_iter it;
	size_t k = 0;
	kv_plan_begin(&it, o, p);
	while (k < n && kv_plan_next(&it, &r[k]))
		k++;
	return k;
}

static void test_walk(struct kv_model *m)
{
	struct kv_plan_opts o = seed();
	struct kv_plan p = {.m = m, .dtype = KV_PLAN_OPTIONS};
	struct kv_plan_row r[40];
	int dt[] = {KV_DTYPE_FP8, KV_DTYPE_Q8_0};
	uint64_t ctx[] = {4096, 8192}, users[] = {1, 8, 64};

	/* nothing given: one row, the engine's format, the config's 128K */
	CHECK_U64(walk(&o, &p, r, 40), 1);
	CHECK_U64(r[0].in.ctx, 131072);
	CHECK(r[0].in.kv_dtype == KV_DTYPE_BF16);
	CHECK_U64(r[0].in.users, 0);
	CHECK_STR(r[0].wsrc, "--weights");

	/* fp8 is kept by all but llama.cpp, q8_0 by ideal and llama.cpp:
	 * 4 + 2 engines x 2 contexts x 3 user counts */
	o.server = NULL;
	o.dtypes = dt;
	o.ndtypes = 2;
	o.ctx = ctx;
	o.nctx = 2;
	o.users = users;
	o.nusers = 3;
	CHECK_U64(walk(&o, &p, r, 40), 36);
	CHECK(r[0].in.server->kind == KV_SERVER_IDEAL);
	CHECK(r[3].in.server->kind == KV_SERVER_TRTLLM);
	CHECK_U64(r[3].in.users, 1);
	CHECK_U64(r[4].in.users, 8);   /* engines vary fastest */
	CHECK_U64(r[12].in.ctx, 8192); /* then users, then contexts */
	CHECK(r[24].in.kv_dtype == KV_DTYPE_Q8_0);
	CHECK(r[25].in.server->kind == KV_SERVER_LLAMACPP);

	/* no llama.cpp above --tp 1: each engine's own format, 4 rows */
	o.dtypes = NULL;
	o.ctx = NULL;
	o.users = NULL;
	o.tp = 2;
	CHECK_U64(walk(&o, &p, r, 40), 4);
	CHECK(r[0].in.kv_dtype == KV_DTYPE_BF16);
	CHECK_U64(r[3].in.tp, 2);

	/* a kvsize row keeps its format, context, users, tp and block,
	 * over the options' */
	o.dtypes = dt;
	o.ndtypes = 2;
	o.users = users;
	o.nusers = 1;
	o.server = kv_server_get(KV_SERVER_VLLM);
	p = (struct kv_plan){.m = m, .dtype = KV_DTYPE_FP8_E5M2, .ctx = 2048,
			     .users = 4, .tp = 8, .block = 32};
	CHECK_U64(walk(&o, &p, r, 40), 1);
	CHECK(r[0].in.kv_dtype == KV_DTYPE_FP8_E5M2);
	CHECK_U64(r[0].in.ctx, 2048);
	CHECK_U64(r[0].in.users, 4);
	CHECK_U64(r[0].in.tp, 8);
	CHECK_U64(r[0].in.block, 32);
}

/* Block sizes walk between formats and contexts, as kvsize's rows do.
 * vLLM's pool of 64 GiB (--kv-memory) for Llama 3.1 8B in bf16: 32
 * layers x 8 heads x 128 x 2 (K, V) x 2 bytes = 128 KiB a token; pages
 * of 16 tokens, 2 MiB, 32768 of them, a request of 1000 tokens needing
 * ceil(1000 / 16) = 63: 520 users; pages of 256 tokens, 2048, 4 a
 * request: 512 users. */
static void test_blocks(struct kv_model *m)
{
	struct kv_plan_opts o = seed();
	struct kv_plan p = {.m = m, .dtype = KV_PLAN_OPTIONS};
	struct kv_plan_row r[16];
	char err[KV_ERRLEN];
	int dt[] = {KV_DTYPE_BF16, KV_DTYPE_FP8};
	uint64_t ctx[] = {1000, 2000}, blocks[] = {16, 256};
	o.server = kv_server_get(KV_SERVER_VLLM);
	o.kv_memory = 64ULL << 30;
	o.dtypes = dt;
	o.ndtypes = 2;
	o.ctx = ctx;
	o.nctx = 2;
	o.blocks = blocks;
	o.nblocks = 2;
	CHECK_U64(walk(&o, &p, r, 16), 8);
	CHECK_U64(r[0].in.block, 16); /* contexts vary fastest */
	CHECK_U64(r[0].in.ctx, 1000);
	CHECK_U64(r[1].in.block, 16);
	CHECK_U64(r[1].in.ctx, 2000);
	CHECK_U64(r[2].in.block, 256); /* then block sizes */
	CHECK_U64(r[2].in.ctx, 1000);
	CHECK(r[3].in.kv_dtype == KV_DTYPE_BF16);
	CHECK(r[4].in.kv_dtype == KV_DTYPE_FP8); /* then formats */
	CHECK_U64(r[4].in.block, 16);
	CHECK(kv_plan_solve(KV_PLAN_USERS, &r[0], err) == 0);
	CHECK_U64(r[0].f.block, 16);
	CHECK_U64(r[0].f.num_blocks, 32768);
	CHECK_U64(r[0].f.users_whole, 520);
	CHECK(kv_plan_solve(KV_PLAN_USERS, &r[2], err) == 0);
	CHECK_U64(r[2].f.block, 256);
	CHECK_U64(r[2].f.num_blocks, 2048);
	CHECK_U64(r[2].f.users_whole, 512);

	/* a kvsize row with its own block size: that one row, the list
	 * holding it; a row without one walks the list */
	p = (struct kv_plan){.m = m, .dtype = KV_DTYPE_BF16, .ctx = 1000,
			     .block = 256};
	CHECK_U64(walk(&o, &p, r, 16), 1);
	CHECK_U64(r[0].in.block, 256);
	CHECK_U64(r[0].in.ctx, 1000);
	p.block = 0;
	CHECK_U64(walk(&o, &p, r, 16), 2);
	CHECK_U64(r[0].in.block, 16);
	CHECK_U64(r[1].in.block, 256);
	/* none given: the engine's page (0 asks for it) */
	o.blocks = NULL;
	CHECK_U64(walk(&o, &p, r, 16), 1);
	CHECK_U64(r[0].in.block, 0);
	CHECK(kv_plan_solve(KV_PLAN_USERS, &r[0], err) == 0);
	CHECK_U64(r[0].f.block, 16);
}

static void test_weights(struct kv_model *m)
{
	struct kv_plan_opts o = seed();
	struct kv_plan p = {.m = m, .dtype = KV_PLAN_OPTIONS,
			    .ckpt = KV_CKPT_INDEX, .ckpt_bytes = 16060522496};
	struct kv_plan_row r[1];
	struct kv_params par;
	uint64_t b;
	const char *src;
	char err[KV_ERRLEN];

	/* --weights wins over the checkpoint */
	walk(&o, &p, r, 1);
	CHECK_STR(r[0].wsrc, "--weights");
	CHECK_U64(r[0].in.weights, 16 * GB);
	/* the index, as the bf16 checkpoint runs as stored */
	o.weights = 0;
	walk(&o, &p, r, 1);
	CHECK_STR(r[0].wsrc, "index");
	CHECK_U64(r[0].in.weights, 16060522496ULL);
	CHECK(r[0].in.w_dtype == KV_DTYPE_BF16);
	/* --weights-dtype: parameters x that format, peak of fp8 */
	o.wdtype = KV_DTYPE_FP8;
	walk(&o, &p, r, 1);
	CHECK_STR(r[0].wsrc, "--weights-dtype");
	CHECK_U64(r[0].in.weights, 0);
	CHECK(r[0].in.w_dtype == KV_DTYPE_FP8);
	CHECK(kv_plan_params(&o, &p, &par, &b, &src, err) == 0);
	CHECK_U64(par.total, 8030261248ULL);
	CHECK_U64(b, 8030261248ULL); /* a byte each */
	CHECK_STR(src, "--weights-dtype");
	/* none: the config's parameters x bf16 */
	o.wdtype = -1;
	p.ckpt = KV_CKPT_NONE;
	CHECK(kv_plan_params(&o, &p, &par, &b, &src, err) == 0);
	CHECK_U64(b, 2 * 8030261248ULL);
	CHECK_STR(src, "config");
	o.weights = 5 * GB;
	CHECK(kv_plan_params(&o, &p, &par, &b, &src, err) == 0);
	CHECK_U64(b, 5 * GB);
	CHECK_STR(src, "--weights");
}

static void test_solve(struct kv_model *m)
{
	struct kv_plan_opts o = seed();
	uint64_t users = 54;
	struct kv_plan p = {.m = m, .dtype = KV_PLAN_OPTIONS};
	struct kv_plan_row r;
	char err[KV_ERRLEN];

	/* 58 GB of 131072-byte tokens: 54 users of 8194 tokens (54 x 8195
	 * x 131072 is 58.003 GB) */
	o.users = &users;
	o.nusers = 1;
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_solve(KV_PLAN_CTX, &r, err) == 0);
	CHECK(!r.none);
	CHECK_U64(r.in.ctx, 8194);
	CHECK_U64(r.held, 0);
	CHECK_U64(r.f.users_whole, 54);
	/* one user: 442504 tokens, past the 131072 positions */
	users = 1;
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_solve(KV_PLAN_CTX, &r, err) == 0);
	CHECK_U64(r.held, 442504);
	CHECK_U64(r.in.ctx, 131072);
	/* at 128K a sequence is 17.2 GB: 3 fit on one GPU (58 GB), 7 on
	 * two (8 GB of weights each, 66 GB free, half the KV heads) */
	users = 5;
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_solve(KV_PLAN_TP, &r, err) == 0);
	CHECK_U64(r.in.tp, 2);
	CHECK_U64(r.f.users_whole, 7);
	users = 1000000;
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_solve(KV_PLAN_TP, &r, err) == 0);
	CHECK(r.none);
	CHECK_U64(r.in.tp, 1);
	/* the check leaves what a solve varies valid: tp 1 for --solve tp,
	 * a context of the prefix for --solve ctx, and no more */
	o.prefix = 1000;
	walk(&o, &p, &r, 1);
	r.in.ctx = 10;
	r.in.tp = 3; /* splits no head */
	o.solve = KV_PLAN_TP;
	CHECK(kv_plan_check(&o, &r, err) != 0); /* ctx < prefix */
	CHECK_U64(r.in.tp, 1);
	r.in.tp = 3;
	o.solve = KV_PLAN_CTX;
	CHECK(kv_plan_check(&o, &r, err) != 0);
	CHECK_U64(r.in.ctx, 1000);
	r.in.tp = 3;
	o.solve = KV_PLAN_TP;
	CHECK(kv_plan_check(&o, &r, err) == 0);
	CHECK_U64(r.in.ctx, 1000);
}

static void test_bound(void)
{
	struct kv_model m = {.n_heads = 4096};
	struct kv_fit f = {.missing = 1};
	CHECK_U64(kv_plan_max_tp(&m), 1024);
	m.n_heads = 40;
	CHECK_U64(kv_plan_max_tp(&m), 40);
	CHECK_STR(kv_plan_bound(&f), "weights");
	f = (struct kv_fit){.max_seqs = 256, .max_concurrency = 300.5,
			    .users = 256};
	CHECK_STR(kv_plan_bound(&f), "max_num_seqs");
	f.max_concurrency = 256; /* the cache stops it as well */
	CHECK_STR(kv_plan_bound(&f), "kv_memory");
	f = (struct kv_fit){.max_concurrency = 300.5, .users = 300.5};
	CHECK_STR(kv_plan_bound(&f), "kv_memory");
}

static void test_refusal(struct kv_model *m)
{
	struct kv_plan_opts o = seed();
	struct kv_plan p = {.m = m, .dtype = KV_PLAN_OPTIONS};
	struct kv_plan_row r;
	struct kv_plan_refusal x;
	char err[KV_ERRLEN];

	walk(&o, &p, &r, 1);
	CHECK(kv_plan_solve(KV_PLAN_USERS, &r, err) == 0);
	x = kv_plan_refusal(&r.in, &r.f);
	CHECK(x.why == KV_PLAN_SERVES);
	/* 100 GB of weights and 6 GB kept back miss 80 GB by 26 GB; on two
	 * GPUs 50 + 6 leave room for a sequence */
	o.weights = 100 * GB;
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_solve(KV_PLAN_USERS, &r, err) == 0);
	CHECK_U64(r.f.missing, 26 * GB);
	x = kv_plan_refusal(&r.in, &r.f);
	CHECK(x.why == KV_PLAN_WEIGHTS);
	CHECK_U64(x.need, 106 * GB);
	CHECK_U64(x.tp, 2);
	CHECK_U64(x.pp, 0);
	/* llama.cpp splits layers, not heads: two stages of 50 GB and the
	 * 6 GB kept back fit, and no --tp is named */
	o.server = kv_server_get(KV_SERVER_LLAMACPP);
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_solve(KV_PLAN_USERS, &r, err) == 0);
	x = kv_plan_refusal(&r.in, &r.f);
	CHECK(x.why == KV_PLAN_WEIGHTS);
	CHECK_U64(x.tp, 0);
	CHECK_U64(x.pp, 2);
	o.server = kv_server_get(KV_SERVER_IDEAL);
	/* vLLM: one request of 1M tokens (137 GB) does not fit; the
	 * longest that does fits one and no more */
	uint64_t ctx = 1048576;
	o.weights = 16 * GB;
	o.server = kv_server_get(KV_SERVER_VLLM);
	o.ctx = &ctx;
	o.nctx = 1;
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_solve(KV_PLAN_USERS, &r, err) == 0);
	CHECK_U64(r.f.users_whole, 0);
	x = kv_plan_refusal(&r.in, &r.f);
	CHECK(x.why == KV_PLAN_VLLM);
	CHECK_U64(x.need, r.f.seq_bytes + r.f.shared_bytes);
	CHECK(x.need >= 1048576ULL * 131072);
	CHECK(x.ctx > 0 && x.ctx < ctx);
	ctx = x.ctx;
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_solve(KV_PLAN_USERS, &r, err) == 0);
	CHECK_U64(r.f.users_whole, 1);
	ctx = x.ctx + 1;
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_solve(KV_PLAN_USERS, &r, err) == 0);
	CHECK_U64(r.f.users_whole, 0);
}

/* What an engine refuses outright, and --engine all leaves out saying
 * why; --solve ctx that finds nothing keeps the row at its shortest
 * context, to say why. */
static void test_refuses(struct kv_model *m)
{
	struct kv_plan_opts o = seed();
	struct kv_plan p = {.m = m, .dtype = KV_PLAN_OPTIONS};
	struct kv_plan_row r[KV_SERVER_KINDS];
	struct kv_plan_iter it;
	char err[KV_ERRLEN];
	int mixed = kv_dtype_pack(KV_DTYPE_Q8_0, KV_DTYPE_Q4_0);
	o.tp = 2;
	o.server = NULL;
	kv_plan_begin(&it, &o, &p);
	size_t n = 0;
	while (n < KV_SERVER_KINDS && kv_plan_next(&it, &r[n]))
		n++;
	CHECK_U64(n, KV_SERVER_KINDS - 1);
	CHECK_STR(it.left_out[KV_SERVER_LLAMACPP],
		  "llamacpp: tensor parallel 2: llama.cpp splits a model over "
		  "GPUs by layers (-sm layer), as --pp does, not by heads");
	CHECK(!it.left_out[KV_SERVER_VLLM][0]);
	/* K q8_0, V q4_0: llama.cpp's and the ideal engine's alone */
	o.tp = 1;
	o.dtypes = &mixed;
	o.ndtypes = 1;
	kv_plan_begin(&it, &o, &p);
	n = 0;
	while (n < KV_SERVER_KINDS && kv_plan_next(&it, &r[n]))
		n++;
	CHECK_U64(n, 2);
	CHECK(r[0].in.server->kind == KV_SERVER_IDEAL &&
	      r[1].in.server->kind == KV_SERVER_LLAMACPP);
	CHECK(r[1].in.kv_dtype == KV_DTYPE_Q8_0 && r[1].in.v_own &&
	      r[1].in.v_dtype == KV_DTYPE_Q4_0);
	CHECK_STR(it.left_out[KV_SERVER_VLLM], "vllm keeps no q8_0 cache; it "
		  "keeps f32, f16, bf16, fp8, fp8_e5m2, int8");
	CHECK(kv_plan_solve(KV_PLAN_USERS, &r[1], err) == 0);
	/* (1,088 + 576) bytes a layer of K and V, 32 layers */
	CHECK_U64(r[1].f.bytes_per_token, 32 * (1088 + 576));
	int fb = kv_dtype_pack(KV_DTYPE_FP8, KV_DTYPE_BF16);
	o.dtypes = &fb;
	o.server = kv_server_get(KV_SERVER_VLLM);
	walk(&o, &p, r, 1);
	CHECK(kv_fit_refuses(&r[0].in, err));
	CHECK_STR(err, "vllm keeps K and V in one format, got K fp8 and V bf16 "
		       "(llama.cpp keeps them apart)");
	o.dtypes = NULL;
	o.ndtypes = 0;
	/* --solve tp of llama.cpp: no tensor parallelism to find */
	uint64_t one = 1;
	o.users = &one;
	o.nusers = 1;
	o.solve = KV_PLAN_TP;
	o.server = kv_server_get(KV_SERVER_LLAMACPP);
	walk(&o, &p, r, 1);
	CHECK(kv_plan_check(&o, &r[0], err) == KV_EINVAL);
	CHECK_HAS(err, "llamacpp: --solve tp: llama.cpp splits a model");
	/* --solve ctx that finds none: 58 GB hold 442,504 tokens, not
	 * 500,000 users of one token; f is the row at one token */
	uint64_t lots = 500000;
	o.users = &lots;
	o.solve = KV_PLAN_CTX;
	o.server = kv_server_get(KV_SERVER_IDEAL);
	walk(&o, &p, r, 1);
	CHECK(kv_plan_check(&o, &r[0], err) == 0);
	CHECK(kv_plan_solve(KV_PLAN_CTX, &r[0], err) == 0);
	CHECK(r[0].none);
	CHECK_U64(r[0].in.ctx, 1);
	CHECK_U64(r[0].f.users_whole, 442504);
}

static void test_disagrees(void)
{
	struct kv_plan_opts o = seed();
	struct kv_plan p = {.dtype = KV_DTYPE_BF16, .ctx = 8192, .users = 8,
			    .tp = 2, .block = 16};
	uint64_t users[] = {8, 16}, blocks[] = {16, 32, 64}, row = 0,
		 given = 0;
	/* nothing asked: the row's own go on */
	CHECK(kv_plan_disagrees(&o, &p, &row, &given) == NULL);
	o.users = users;
	o.nusers = 1;
	o.tp = 2;
	o.tp_given = true;
	o.blocks = blocks;
	o.nblocks = 1;
	CHECK(kv_plan_disagrees(&o, &p, &row, &given) == NULL);
	o.nusers = 2; /* a list, even one that starts with the row's */
	CHECK_STR(kv_plan_disagrees(&o, &p, &row, &given), "--users");
	CHECK_U64(row, 8);
	CHECK_U64(given, 8);
	o.nusers = 1;
	o.tp = 4;
	CHECK_STR(kv_plan_disagrees(&o, &p, &row, &given), "--tp");
	CHECK_U64(row, 2);
	CHECK_U64(given, 4);
	o.tp_given = false; /* the default 1 is no answer */
	o.blocks = blocks + 1;
	CHECK_STR(kv_plan_disagrees(&o, &p, &row, &given), "--block-size");
	CHECK_U64(row, 16);
	CHECK_U64(given, 32);
	o.blocks = blocks + 1; /* a list must hold the row's */
	o.nblocks = 2;
	CHECK_STR(kv_plan_disagrees(&o, &p, &row, &given), "--block-size");
	CHECK_U64(row, 16);
	CHECK_U64(given, 32);
	o.blocks = blocks;
	o.nblocks = 3;
	CHECK(kv_plan_disagrees(&o, &p, &row, &given) == NULL);
	p.block = 0; /* a row without one takes the option's */
	o.blocks = blocks + 1;
	o.nblocks = 1;
	CHECK(kv_plan_disagrees(&o, &p, &row, &given) == NULL);
}

static void test_values(void)
{
	struct kv_plan_opts o = seed();
	enum kv_plan_solve s = KV_PLAN_USERS;
	const struct kv_server *e = NULL;
	const struct kv_server *lcpp = kv_server_get(KV_SERVER_LLAMACPP);
	CHECK(kv_plan_engine_parse("all", &e) == 0 && e == NULL);
	CHECK(kv_plan_engine_parse("llama.cpp", &e) == 0 && e == lcpp);
	CHECK(kv_plan_engine_parse("every", &e) == KV_EINVAL);
	CHECK(e == lcpp);
	/* an older release's rules by name@release; one not kept */
	CHECK(kv_plan_engine_parse("vllm@0.27", &e) == 0 &&
	      e->kind == KV_SERVER_VLLM && e->older &&
	      !strcmp(e->release, "0.27"));
	CHECK(kv_plan_engine_parse("VLLM@0.28", &e) == 0 &&
	      e == kv_server_get(KV_SERVER_VLLM));
	CHECK(kv_plan_engine_parse("vllm@0.20", &e) == KV_EUNSUP &&
	      e == kv_server_get(KV_SERVER_VLLM));
	CHECK(kv_plan_engine_parse("vllm@", &e) == KV_EUNSUP);
	CHECK(kv_plan_engine_parse("@0.27", &e) == KV_EINVAL);
	CHECK(kv_plan_solve_parse("tp", &s) == 0 && s == KV_PLAN_TP);
	CHECK(kv_plan_solve_parse("ctx", &s) == 0 && s == KV_PLAN_CTX);
	CHECK(kv_plan_solve_parse("users", &s) == 0 && s == KV_PLAN_USERS);
	CHECK(kv_plan_solve_parse("Users", &s) == KV_EINVAL);
	CHECK(kv_plan_weights_parse("fp8", &o) == 0);
	CHECK(o.wdtype == KV_DTYPE_FP8 && !o.wquant);
	CHECK(kv_plan_weights_parse("int4-g128", &o) == 0);
	CHECK(o.wdtype == KV_DTYPE_BF16 && o.wquant);
	CHECK_U64(o.wq.group, 128);
	CHECK(kv_plan_weights_parse("fp7", &o) == KV_EINVAL);
	CHECK(!o.wquant); /* a bad value leaves no quantization behind */
}

/* A row's workload: the context it sets, the users it is timed at (those
 * that fit, or the most that meet a target), the cost, the refusals. */
static void test_time(struct kv_model *m)
{
	struct kv_plan_opts o = seed();
	struct kv_plan p = {.m = m, .dtype = KV_PLAN_OPTIONS};
	struct kv_plan_row r;
	struct kv_serve s;
	char err[KV_ERRLEN];
	o.bandwidth = 3350;
	o.tflops = 989.5;
	o.work = (struct kv_serve_in){.isl = 1024, .osl = 256};
	/* no --ctx: isl + osl; 58 GB hold 345 sequences of 1,280 tokens */
	walk(&o, &p, &r, 1);
	CHECK_U64(r.in.ctx, 1280);
	CHECK(kv_plan_check(&o, &r, err) == 0);
	CHECK(kv_plan_solve(o.solve, &r, err) == 0);
	CHECK_U64(r.f.users_whole, 345);
	CHECK(kv_plan_time(&o, &r, err) == 0);
	CHECK(r.timed && r.meets && isnan(r.usd_per_mtok));
	CHECK_U64(kv_plan_served(&o, &r), 345); /* no target: those that fit */
	struct kv_serve_in w = o.work;
	w.users = 345;
	CHECK(kv_serve_solve(&r.in, &w, &s, err) == 0);
	CHECK_NEAR(r.s.tpot_ms, s.tpot_ms, 0);
	CHECK_NEAR(r.s.ttft_ms, s.ttft_ms, 0);

	/* a target: the most users within 6 ms a token, the row's step
	 * solved again for them */
	o.max_tpot = 6;
	o.usd_per_hour = 2;
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_solve(o.solve, &r, err) == 0);
	CHECK(kv_plan_time(&o, &r, err) == 0);
	CHECK(r.timed && r.meets);
	CHECK(r.in.users > 1 && r.in.users < 345);
	CHECK_U64(r.f.step_users, r.in.users);
	CHECK(r.s.tpot_ms <= 6);
	w.users = r.in.users + 1;
	CHECK(kv_serve_solve(&r.in, &w, &s, err) == 0);
	CHECK(s.tpot_ms > 6);
	CHECK_NEAR(r.usd_per_mtok, 2 / (r.s.tokens_per_s * 3600) * 1e6,
		   1e-12);
	/* the users a --min-users gate counts: those within the target */
	CHECK_U64(kv_plan_served(&o, &r), r.in.users);
	/* one no user meets: the one user's point, whole, not met */
	o.max_tpot = 1;
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_solve(o.solve, &r, err) == 0);
	CHECK(kv_plan_time(&o, &r, err) == 0);
	CHECK(r.timed && !r.meets);
	CHECK_NEAR(r.s.tpot_ms, 4.508779768059702, 1e-9);
	CHECK_U64(r.in.users, 1);
	CHECK_U64(r.f.step_users, 1);
	CHECK(kv_fit_step_fits(&r.f));
	CHECK_U64(r.f.users_whole, 345);
	CHECK_U64(kv_plan_served(&o, &r), 0);
	/* --users past what fits, within the target: as many as fit */
	uint64_t many = 400;
	o.max_tpot = 1000;
	o.users = &many;
	o.nusers = 1;
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_solve(o.solve, &r, err) == 0);
	CHECK(kv_plan_time(&o, &r, err) == 0);
	CHECK(r.timed && r.meets);
	CHECK_U64(r.f.step_users, 400);
	CHECK(!kv_fit_step_fits(&r.f));
	CHECK_U64(kv_plan_served(&o, &r), 345);
	o.users = NULL;
	o.nusers = 0;
	o.max_tpot = 0;
	o.usd_per_hour = 0;

	/* nothing fits: not timed */
	o.weights = 75 * GB;
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_solve(o.solve, &r, err) == 0);
	CHECK_U64(r.f.users_whole, 0);
	CHECK(kv_plan_time(&o, &r, err) == 0);
	CHECK(!r.timed);
	o.weights = 16 * GB;

	/* refused: a context too short for the request, no FLOP rate */
	uint64_t ctx = 1024;
	o.ctx = &ctx;
	o.nctx = 1;
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_check(&o, &r, err) == KV_EINVAL);
	CHECK_STR(err, "llama-3.1-8b: --isl 1024 + --osl 256 is 1280 tokens, "
		       "more than the context of 1024");
	o.ctx = NULL;
	o.tflops = 0;
	walk(&o, &p, &r, 1);
	CHECK(kv_plan_check(&o, &r, err) == KV_EINVAL);
	CHECK_STR(err, "llama-3.1-8b: timing needs the GPU's FLOP rate "
		       "(--tflops): give --gpu, or --bandwidth and --tflops");
}

int main(void)
{
	struct kv_model *m = test_load("llama-3.1-8b");
	if (m) {
		test_walk(m);
		test_blocks(m);
		test_weights(m);
		test_solve(m);
		test_refusal(m);
		test_refuses(m);
		test_time(m);
	}
	test_values();
	test_bound();
	test_disagrees();
	kv_model_free(m);
	return test_done("test_plan");
}
