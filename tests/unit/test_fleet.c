/*
 * test_fleet.c - plans beyond one replica against hand-worked numbers:
 * the KV a request moves from prefill to decode (vLLM's NixlConnector:
 * each decode rank reads its own share; an MLA latent, which every rank
 * holds, whole), its time over a link, the workers a rate needs, the
 * load a ttft target leaves a prefill queue (M/D/1), the xPyD split that
 * balances two kinds of worker (aiconfigurator's _match_workers), the
 * replicas a rate needs, and the decode worker's concurrency at a rate
 * (Little's law); a MoE model's DEP workers (data-parallel attention,
 * expert parallelism) beside TP's.
 */
#include <math.h>

#include "kv/fit.h"
#include "kv/fleet.h"
#include "kv/serve.h"
#include "test.h"

#define IDEAL kv_server_get(KV_SERVER_IDEAL)

/* The transfer: Llama 3.1 8B keeps 32 layers x 8 KV heads x 128 x 2 (K
 * and V) x 2 B = 131,072 B a token in bf16; a prompt of 1000 tokens is
 * 131,072,000 B; over NVLink 4, 450 GB/s each way (gpus.json, h200),
 * 131,072,000 / 450e9 s = 0.291271 ms; over one 400 Gb/s NIC, 50 GB/s,
 * 2.62144 ms. */
static void transfer(void)
{
	CHECK_U64(kv_fleet_transfer_bytes(1000, 131072), 131072000);
	CHECK_NEAR(kv_fleet_transfer_ms(131072000, 450), 0.291271111, 1e-9);
	CHECK_NEAR(kv_fleet_transfer_ms(131072000, 50), 2.62144, 1e-12);
	CHECK(isnan(kv_fleet_transfer_ms(1, 0)));
	CHECK_U64(kv_fleet_transfer_bytes(UINT64_MAX / 2, 3), UINT64_MAX);
}

/* Workers for a rate: 10 requests a second at 4 each is 2.5, so 3; 12
 * at 4 is 3 exactly; a hair above it, 4; half a request, 1; none where a
 * worker serves none. */
static void workers(void)
{
	CHECK_U64(kv_fleet_workers(10, 4), 3);
	CHECK_U64(kv_fleet_workers(12, 4), 3);
	CHECK_U64(kv_fleet_workers(12.0001, 4), 4);
	CHECK_U64(kv_fleet_workers(0.5, 4), 1);
	CHECK_U64(kv_fleet_workers(10, 0), 0);
}

/* The queue: at load 0.5 a server of 100 ms keeps a prompt waiting
 * 0.5 x 100 / (2 x 0.5) = 50 ms; so a wait of 50 ms allows a load of
 * 2 x 50 / (100 + 2 x 50) = 0.5; at 0.75, 150 ms; none at load 1. */
static void queue(void)
{
	CHECK_NEAR(kv_serve_queue_ms(0.5, 100), 50, 1e-12);
	CHECK_NEAR(kv_serve_queue_ms(0.75, 100), 150, 1e-12);
	CHECK(isinf(kv_serve_queue_ms(1, 100)));
	CHECK_NEAR(kv_fleet_max_load(100, 50), 0.5, 1e-12);
	CHECK_NEAR(kv_fleet_max_load(100, 150), 0.75, 1e-12);
	CHECK_NEAR(kv_fleet_max_load(100, -1), 0, 0);
}

/*
 * The xPyD split: prefill workers of 10 requests a second on 8 GPUs,
 * decode workers of 4 on 8, at most 64 GPUs. Requests a second per GPU,
 * min(10 x, 4 y) / (8 x + 8 y): 1P2D 8/24 = 0.333, 1P3D 10/32 = 0.3125,
 * 2P4D 16/48 = 0.333, 2P5D 20/56 = 0.357, 2P6D 20/64 = 0.3125, 3P5D
 * 20/64; 3P7D takes 80 GPUs. So 2P5D. Workers of equal rates on one GPU
 * each: every xPxD gives 2 a GPU, and the fewest GPUs win, 1P1D. Two
 * workers of 8 GPUs do not fit 8.
 */
static void balance(void)
{
	uint32_t x, y;
	CHECK(kv_fleet_balance(10, 8, 4, 8, 64, &x, &y));
	CHECK_U64(x, 2);
	CHECK_U64(y, 5);
	CHECK(kv_fleet_balance(4, 1, 4, 1, 8, &x, &y));
	CHECK_U64(x, 1);
	CHECK_U64(y, 1);
	CHECK(!kv_fleet_balance(10, 8, 4, 8, 8, &x, &y));
	CHECK_U64(x, 0);
	/* prefill four times the faster: 1P4D on one GPU each, 8 a GPU */
	CHECK(kv_fleet_balance(40, 1, 10, 1, 64, &x, &y));
	CHECK_U64(x, 1);
	CHECK_U64(y, 4);
	/* 49.869 and 65.573 a second on one GPU each: 25P19D gives
	 * min(1246.7, 1245.9) / 44 = 28.316 a GPU, the most; 4P3D
	 * min(199.48, 196.72) / 7 = 28.103, within 2% of it on 7 GPUs, and
	 * none on fewer is (3P2D 131.15 / 5 = 26.23) */
	CHECK(kv_fleet_balance(49.869, 1, 65.573, 1, 64, &x, &y));
	CHECK_U64(x, 4);
	CHECK_U64(y, 3);
}

static void pareto(void)
{
	struct kv_fleet a = {.gpus = 8, .tpot_ms = 10};
	struct kv_fleet b = {.gpus = 16, .tpot_ms = 10};
	struct kv_fleet c = {.gpus = 16, .tpot_ms = 8};
	CHECK(kv_fleet_dominates(&a, &b));
	CHECK(!kv_fleet_dominates(&b, &a));
	CHECK(!kv_fleet_dominates(&a, &c));
	CHECK(!kv_fleet_dominates(&c, &a));
	CHECK(kv_fleet_dominates(&c, &b));
	CHECK(!kv_fleet_dominates(&a, &a));
}

/* The shapes: a dense model's tp 1, 2, 4, 8; a MoE model's also DEP 2,
 * 4, 8 (dp = ep = the GPUs, tp 1) after the tp of as many GPUs. */
static void shapes(void)
{
	struct kv_shape s[KV_FLEET_SHAPES];
	CHECK_U64(kv_fleet_shapes(false, s), 4);
	CHECK_U64(s[3].tp, 8);
	CHECK_U64(s[3].dp, 1);
	CHECK_U64(kv_shape_gpus(&s[3]), 8);
	CHECK_U64(kv_fleet_shapes(true, s), 7);
	CHECK_U64(s[0].tp, 1);
	CHECK_U64(s[1].tp, 2);
	CHECK_U64(s[2].tp, 1);
	CHECK_U64(s[2].dp, 2);
	CHECK_U64(s[2].ep, 2);
	CHECK_U64(s[6].tp, 1);
	CHECK_U64(s[6].dp, 8);
	CHECK_U64(s[6].ep, 8);
	CHECK_U64(kv_shape_gpus(&s[6]), 8);
	struct kv_fit_in in = {.tp = 4, .pp = 1};
	kv_shape_apply(&s[6], &in);
	CHECK_U64(in.tp, 1);
	CHECK_U64(in.dp, 8);
	CHECK_U64(in.ep, 8);
	struct kv_shape back = kv_shape_of(&in);
	CHECK_U64(kv_shape_gpus(&back), 8);
	CHECK_U64(back.ep, 8);
	CHECK_U64(s[5].tp, 8);
	kv_shape_apply(&s[5], &in);
	CHECK_U64(in.tp, 8);
	CHECK_U64(in.dp, 1);
	CHECK_U64(in.ep, 1);
}

/* Llama 3.1 8B on an H100 SXM under the ideal engine, at the
 * datasheet's rates. */
static struct kv_fit_in row(const struct kv_model *m, uint32_t tp)
{
	return (struct kv_fit_in){.m = m, .kv_dtype = KV_DTYPE_BF16,
				  .w_dtype = KV_DTYPE_BF16,
				  .mem = 85520809984ULL, .tp = tp, .pp = 1,
				  .ctx = 1100, .server = IDEAL,
				  .gpu = "h100-sxm", .bandwidth_gbps = 3350,
				  .tflops = 989.4};
}

static struct kv_serve_in work(void)
{
	return (struct kv_serve_in){.isl = 1000, .osl = 100, .users = 1,
				    .link_gbps = 450};
}

/* The workers: the prefill worker's rate is its batch over the batch's
 * time (the ideal engine takes a prompt in one step: a batch of one, its
 * prefill alone); the decode worker's, its users over osl - 1 steps;
 * at tp 2 each decode GPU keeps half the heads, 65,536 B a token. */
static void worker_rates(const struct kv_model *m)
{
	char err[KV_ERRLEN];
	struct kv_fit_in in = row(m, 1);
	struct kv_serve_in w = work(), one = work();
	struct kv_prefill p;
	struct kv_decode d, d2;
	struct kv_serve s;
	CHECK(kv_fleet_prefill(&in, &w, &p, err) == 0);
	CHECK_U64(p.batch, 1);
	one.osl = 1;
	in.ctx = 1001;
	CHECK(kv_serve_solve(&in, &one, &s, err) == 0);
	CHECK_NEAR(p.batch_ms, s.prefill.ms, 1e-9);
	CHECK_NEAR(p.rps, 1e3 / s.prefill.ms, 1e-9);
	CHECK_STR(p.source, "datasheet"); /* the ideal engine's */
	in.ctx = 1100;
	CHECK(kv_fleet_decode(&in, &w, 0, &d, err) == 0);
	CHECK_U64(d.bytes_per_token, 131072);
	CHECK(d.users == d.users_fit && d.users > 100);
	CHECK_NEAR(d.rps, (double)d.users / (99 * d.step_ms) * 1e3, 1e-9);
	/* a tpot target below the full batch's step: fewer users, each
	 * step within it */
	double target = d.step_ms * 0.75;
	struct kv_fit_in in2 = row(m, 2);
	CHECK(kv_fleet_decode(&in2, &w, 0, &d2, err) == 0);
	CHECK_U64(d2.bytes_per_token, 65536);
	struct kv_decode dt;
	CHECK(kv_fleet_decode(&in, &w, target, &dt, err) == 0);
	CHECK(dt.users < d.users);
	CHECK(dt.step_ms <= target);
	/* no user below one user's step */
	CHECK(kv_fleet_decode(&in, &w, 1e-6, &dt, err) == 0);
	CHECK_U64(dt.users, 0);
	CHECK_NEAR(dt.rps, 0, 0);
}

/* The decode worker's concurrency at a rate: Little's law, n = rate x
 * 99 steps x step(n), holds at the n found. At its own rate, at most its
 * users (fewer where, its steps bound by the caches, users past some
 * number add steps as fast as they add tokens: 296 of 481 here keep up
 * as well); at a tenth of it fewer, each step quicker; above it, not
 * kept up. */
static void decode_load(const struct kv_model *m)
{
	char err[KV_ERRLEN];
	struct kv_fit_in in = row(m, 1);
	struct kv_serve_in w = work();
	struct kv_decode d;
	double n, tpot;
	CHECK(kv_fleet_decode(&in, &w, 0, &d, err) == 0);
	CHECK(kv_fleet_decode_load(&in, &w, d.rps, d.users_fit, &n, &tpot,
				   err) == 0);
	CHECK(n <= (double)d.users + 1e-9);
	CHECK_NEAR(n, d.rps / 1e3 * 99 * tpot, 1e-9);
	CHECK(kv_fleet_decode_load(&in, &w, d.rps / 10, d.users_fit, &n,
				   &tpot, err) == 0);
	CHECK(n < d.users / 5.0 && tpot < d.step_ms);
	CHECK_NEAR(n, d.rps / 1e4 * 99 * tpot, 1e-9);
	CHECK(kv_fleet_decode_load(&in, &w, d.rps * 1.01, d.users_fit, &n,
				   &tpot, err) == KV_ERANGE);
	CHECK_HAS(err, "cannot be decoded");
}

/*
 * A disaggregated plan, worked by hand on a prefill worker of 100 ms a
 * prompt (10 a second) and the decode worker above, at 30 requests a
 * second within a ttft of 300 ms, its KV over 50 GB/s: 2.62144 ms (as
 * transfer()). The queue may take 300 - 100 - 2.62144 = 197.37856 ms,
 * a load of 2 x 197.37856 / (100 + 2 x 197.37856) = 0.797882; 30 / (10
 * x 0.797882) = 3.76 so 4 prefill workers, each at 30 / 40 = 0.75, its
 * prompts waiting 0.75 x 100 / (2 x 0.25) = 150 ms: ttft 100 + 2.62144
 * + 150 = 252.62144 ms. Decode workers: 30 over each one's rate, whole.
 */
static void disagg(const struct kv_model *m)
{
	char err[KV_ERRLEN];
	struct kv_fit_in in = row(m, 1);
	struct kv_serve_in w = work();
	struct kv_prefill p = {.shape = {.tp = 1, .pp = 1}, .batch = 1,
			       .batch_ms = 100, .one_ms = 100, .rps = 10};
	struct kv_decode d;
	struct kv_fleet f;
	struct kv_fleet_goal g = {.rate = 30, .max_ttft = 300,
				  .link_gbps = 50, .max_gpus = 64};
	CHECK(kv_fleet_decode(&in, &w, 0, &d, err) == 0);
	CHECK(kv_fleet_disagg(&in, &w, &p, &d, 0, 0, &g, &f, err) == 0);
	CHECK(f.served && f.meets);
	CHECK_U64(f.x, 4);
	CHECK_U64(f.y, kv_fleet_workers(30, d.rps));
	CHECK_U64(f.gpus, f.x + f.y);
	CHECK_U64(f.transfer_bytes, 131072000);
	CHECK_NEAR(f.transfer_ms, 2.62144, 1e-12);
	CHECK_NEAR(f.load, 0.75, 1e-12);
	CHECK_NEAR(f.queue_ms, 150, 1e-9);
	CHECK_NEAR(f.ttft_ms, 252.62144, 1e-9);
	CHECK_NEAR(f.tokens_per_s, 3000, 1e-9);
	CHECK_NEAR(f.tokens_per_s_gpu, 3000.0 / f.gpus, 1e-9);
	/* three prefill workers given: each at load 1, never done */
	CHECK(kv_fleet_disagg(&in, &w, &p, &d, 3, f.y, &g, &f, err) == 0);
	CHECK(!f.served);
	CHECK_HAS(f.why, "cannot be prefilled");
	/* a ttft the prompt alone exceeds */
	g.max_ttft = 90;
	CHECK(kv_fleet_disagg(&in, &w, &p, &d, 0, 0, &g, &f, err) == 0);
	CHECK(!f.served && !f.gpus);
	CHECK_HAS(f.why, "alone exceed --max-ttft 90");
	/* no rate: the balanced split, closed (no queue); 10 a second
	 * against the decode worker's rate on one GPU each */
	g = (struct kv_fleet_goal){.link_gbps = 50, .max_gpus = 64};
	CHECK(kv_fleet_disagg(&in, &w, &p, &d, 0, 0, &g, &f, err) == 0);
	uint32_t x, y;
	CHECK(kv_fleet_balance(10, 1, d.rps, 1, 64, &x, &y));
	CHECK_U64(f.x, x);
	CHECK_U64(f.y, y);
	CHECK_NEAR(f.rate, fmin(10.0 * x, d.rps * y), 1e-9);
	CHECK_NEAR(f.ttft_ms, 102.62144, 1e-9);
	CHECK_NEAR(f.queue_ms, 0, 0);
	/* no link known */
	g.link_gbps = 0;
	CHECK(kv_fleet_disagg(&in, &w, &p, &d, 0, 0, &g, &f, err) ==
	      KV_EINVAL);
	CHECK_HAS(err, "--kv-link");
}

/* The replicas a rate needs: the fewest that meet the targets, one
 * fewer missing them, each replica at its share of the rate. */
static void replicas(const struct kv_model *m)
{
	char err[KV_ERRLEN];
	struct kv_fit_in in = row(m, 1);
	struct kv_serve_in w = work();
	struct kv_fleet f, fewer;
	struct kv_fleet_goal g = {.rate = 80, .max_tpot = 10, .max_gpus = 64};
	CHECK(kv_fleet_agg(&in, &w, 0, &g, &f, err) == 0);
	CHECK(f.meets && f.replicas > 1);
	CHECK_U64(f.gpus, f.replicas);
	CHECK(f.tpot_ms <= 10);
	CHECK_NEAR(f.tokens_per_s, 8000, 1e-9);
	CHECK(kv_fleet_agg(&in, &w, f.replicas - 1, &g, &fewer, err) == 0);
	CHECK(!fewer.meets);
	/* with too few GPUs to meet it: not met, at the most replicas */
	g.max_gpus = 1;
	CHECK(kv_fleet_agg(&in, &w, 0, &g, &fewer, err) == 0);
	CHECK(!fewer.meets);
	CHECK_U64(fewer.replicas, 1);
}

/* An MLA model's transfer: DeepSeek-V3 keeps one latent of 512 + 64
 * values a layer, 61 layers x 576 x 2 B = 70,272 B a token in bf16, and
 * every rank of a tp 8 decode worker holds all of it (vLLM reads it once
 * a rank): 2000 tokens are 140,544,000 B to each decode GPU, 2.81088 ms
 * over 50 GB/s. Its fp8 weights, 671 GB over 8 H200s of 141 GB. */
static void mla(void)
{
	char err[KV_ERRLEN];
	struct kv_model *m = test_load("deepseek-v3");
	if (!m)
		return;
	struct kv_fit_in in = {.m = m, .kv_dtype = KV_DTYPE_BF16,
			       .w_dtype = KV_DTYPE_BF16, .stored = true,
			       .mem = 150754820096ULL, .tp = 8, .pp = 1,
			       .ctx = 2500, .server = IDEAL, .gpu = "h200",
			       .bandwidth_gbps = 4800, .tflops = 1979};
	struct kv_serve_in w = {.isl = 2000, .osl = 500, .users = 1};
	struct kv_decode d;
	CHECK(kv_fleet_decode(&in, &w, 0, &d, err) == 0);
	CHECK_U64(d.bytes_per_token, 70272);
	CHECK(d.users_fit > 0);
	uint64_t b = kv_fleet_transfer_bytes(2000, d.bytes_per_token);
	CHECK_U64(b, 140544000);
	CHECK_NEAR(kv_fleet_transfer_ms(b, 50), 2.81088, 1e-12);
	/* at tp 4 the weights miss: no room for one user, said */
	in.tp = 4;
	CHECK(kv_fleet_decode(&in, &w, 0, &d, err) == KV_ERANGE);
	CHECK_HAS(err, "a decode worker of tp 4 has no room for one user");
	kv_model_free(m);
}

/*
 * DeepSeek-V3's decode worker on 8 H200s as DEP8 (dp 8 groups of one GPU,
 * the 256 routed experts over 8 ranks, 32 each) beside TP8, as mla()'s
 * (ideal engine, its stored fp8 weights, 2000 + 500 tokens, 2500 x
 * 70,272 = 175,680,000 B a user on a GPU either way: TP8 holds every
 * user's latent on every GPU, DEP8 each group its own users').
 * TP8 holds an eighth of every weight; DEP8 the routed experts' eighth
 * and the rest whole, 7/8 of it more: the attention (61 layers of q_a
 * 7168 x 1536, q_b 1536 x 128 x 192, kv_a 7168 x 576, kv_b 512 x 128 x
 * 256, o 128 x 128 x 7168: 187.1 M), the 3 dense MLPs (3 x 7168 x 18432)
 * and the 58 shared experts (3 x 7168 x 2048), 15.157 G in fp8 (and its
 * scales, 4 B a 128 x 128 block, 3.7 MB), with the embedding and head
 * (129280 x 7168 each) and the 58 routers (256 x 7168) in bf16,
 * 3.920 GB: 19.081 GB, 7/8 of it 16.696 GB. So TP8's
 * 66,610,997,332 B free hold 379 users and DEP8's 49,914,102,432 B 284
 * a group, 2272 a worker; its rate is 2272 / (499 steps of a group's
 * step of 284 users).
 */
static void dep(void)
{
	char err[KV_ERRLEN];
	struct kv_model *m = test_load("deepseek-v3");
	if (!m)
		return;
	struct kv_fit_in tp8 = {.m = m, .kv_dtype = KV_DTYPE_BF16,
				.w_dtype = KV_DTYPE_BF16, .stored = true,
				.mem = 150754820096ULL, .tp = 8, .pp = 1,
				.ctx = 2500, .server = IDEAL, .gpu = "h200",
				.bandwidth_gbps = 4800, .tflops = 1979};
	struct kv_fit_in dep8 = tp8;
	struct kv_shape s = {.tp = 1, .pp = 1, .dp = 8, .ep = 8};
	kv_shape_apply(&s, &dep8);
	struct kv_serve_in w = {.isl = 2000, .osl = 500, .users = 1};
	struct kv_fit ft, fd;
	CHECK(kv_fit_solve(&tp8, &ft, err) == 0);
	CHECK(kv_fit_solve(&dep8, &fd, err) == 0);
	CHECK_NEAR((double)(fd.weights - ft.weights), 16.696e9, 0.002e9);
	CHECK_U64(ft.free_kv / 175680000, 379);
	CHECK_U64(fd.free_kv / 175680000, 284);
	struct kv_decode dt, dd;
	CHECK(kv_fleet_decode(&tp8, &w, 0, &dt, err) == 0);
	CHECK(kv_fleet_decode(&dep8, &w, 0, &dd, err) == 0);
	CHECK_U64(dt.users_fit, 379);
	CHECK_U64(dd.users_fit, 2272);
	CHECK_U64(dd.users, 2272);
	CHECK_U64(dd.shape.dp, 8);
	CHECK_U64(kv_shape_gpus(&dd.shape), 8);
	CHECK_U64(dd.bytes_per_token, 70272); /* the transfer's, as TP8's */
	struct kv_serve_in v = w;
	struct kv_serve sv;
	v.users = 284;
	CHECK(kv_serve_solve(&dep8, &v, &sv, err) == 0);
	CHECK_NEAR(dd.step_ms, sv.decode.ms, 1e-12);
	CHECK_NEAR(dd.rps, 2272 / (499 * sv.decode.ms) * 1e3, 1e-9);
	CHECK(dd.rps > 5 * dt.rps); /* at much the same step */
	/* at 80 a second each group takes 10: Little's law over the worker,
	 * n = 80 / 1000 x 499 x tpot, its tpot a group's step at n / 8
	 * users (between those of the whole users either side) */
	double n, t, lo, hi;
	CHECK(kv_fleet_decode_load(&dep8, &w, 80, dd.users_fit, &n, &t,
				   err) == 0);
	CHECK_NEAR(n, 80e-3 * 499 * t, 1e-6);
	CHECK(n / 8 > 1 && n / 8 < 284);
	v.users = (uint64_t)floor(n / 8);
	CHECK(kv_serve_solve(&dep8, &v, &sv, err) == 0);
	lo = sv.decode.ms;
	v.users++;
	CHECK(kv_serve_solve(&dep8, &v, &sv, err) == 0);
	hi = sv.decode.ms;
	CHECK(t >= lo - 1e-9 && t <= hi + 1e-9);
	/* a DEP8 replica in a closed loop, all that fit: 2272 at once, its
	 * rate eight groups' of 284, each 284 over a request's latency */
	struct kv_fleet_goal g = {.max_gpus = 8};
	struct kv_fleet a;
	CHECK(kv_fleet_agg(&dep8, &w, 1, &g, &a, err) == 0);
	CHECK(a.served);
	CHECK_U64(a.gpus, 8);
	CHECK_NEAR(a.concurrency, 2272, 0);
	v.users = 284;
	CHECK(kv_serve_solve(&dep8, &v, &sv, err) == 0);
	CHECK_NEAR(a.rate, 8 * 284 / sv.latency_ms * 1e3, 1e-9);
	CHECK_NEAR(a.tpot_ms, sv.tpot_ms, 1e-12);
	kv_model_free(m);
}

int main(void)
{
	transfer();
	workers();
	queue();
	balance();
	pareto();
	shapes();
	struct kv_model *m = test_load("llama-3.1-8b");
	if (!m)
		return 1;
	worker_rates(m);
	decode_load(m);
	disagg(m);
	replicas(m);
	kv_model_free(m);
	mla();
	dep();
	return test_done("fleet");
}
