/*
 * test_eff.c - configs/efficiency.json's reader: a table read whole, the
 * shipped file read, each malformed field named in one line, and the
 * curves interpolated in the logarithm of x.
 */
#include <math.h>

#include "kv/eff.h"
#include "test.h"

static const char good[] =
	"{\"elementwise\": {\"us\": 3, \"bw\": 0.8},"
	" \"engines\": [{\"engine\": \"vllm\", \"step_us\": 2750,"
	"   \"layer_us\": 20, \"request_us\": 12500, \"harmony_us\": 2000,"
	"   \"source\": \"fit\"},"
	"  {\"engine\": \"trtllm\", \"step_us\": 0}],"
	" \"gpus\": [{\"gpu\": \"h100-sxm\", \"source\": \"aic\","
	"   \"gemm\": {\"m\": [1, 100], \"bf16\": [0.9, 0.5],"
	"              \"fp8\": [0.6, 0.4]},"
	"   \"gemm_floor_us\": 5.7,"
	"   \"attn\": {\"trtllm\": {\"floor_us\": 11.2, \"bw\": 0.866}},"
	"   \"prefill\": {\"vllm\": {\"seq\": [1024, 4096],"
	"                            \"eff\": [0.25, 0.5],"
	"                            \"hd64\": [0.6, 0.8],"
	"                            \"hd256\": [1.2, 1.1]}},"
	"   \"moe\": {\"floor_us\": 22, \"tpe\": [1, 64],"
	"            \"bf16\": [0.8, 0.6], \"mxfp4\": [0.4, 0.3]},"
	"   \"allreduce_us\": {\"bytes\": [512, 4096], \"2\": [2.5, 3],"
	"                     \"8\": [3, 4]}}]}";

static void test_read(void)
{
	char err[KV_ERRLEN];
	struct kv_effs *e;
	CHECK(kv_effs_parse(good, sizeof good - 1, "t.json", &e, err) == 0);
	CHECK_U64(e->n, 1);
	const struct kv_eff *h = kv_effs_lookup(e, "h100-sxm");
	CHECK(h == &e->eff[0]);
	CHECK(kv_effs_lookup(e, "h200") == NULL);
	CHECK_U64(h->gemm[KV_COMPUTE_BF16].n, 2);
	CHECK_NEAR(h->gemm[KV_COMPUTE_FP8].y[1], 0.4, 0);
	CHECK_U64(h->gemm[KV_COMPUTE_FP4].n, 0);
	CHECK_NEAR(h->gemm_floor_us, 5.7, 0);
	CHECK_NEAR(h->attn_floor_us[KV_KERNELS_TRTLLM], 11.2, 0);
	CHECK_NEAR(h->attn_bw[KV_KERNELS_TRTLLM], 0.866, 0);
	CHECK_NEAR(h->attn_bw[KV_KERNELS_VLLM], 0, 0);
	CHECK_U64(h->prefill[KV_KERNELS_VLLM].n, 2);
	CHECK_U64(h->prefill[KV_KERNELS_TRTLLM].n, 0);
	/* heads of 128 the curve; 64 and 256 its ratios at the lengths;
	 * 2,048 halfway in the logarithm: 0.375, 0.7 for 64; heads of 90.5
	 * (2^6.5) halfway between 64 and 128: 0.375 x 0.85; 512 as 256;
	 * TensorRT-LLM's kernels without a curve take vLLM's */
	CHECK_NEAR(kv_eff_prefill_at(h, KV_KERNELS_VLLM, 2048, 128), 0.375,
		   1e-12);
	CHECK_NEAR(kv_eff_prefill_at(h, KV_KERNELS_VLLM, 2048, 64),
		   0.375 * 0.7, 1e-12);
	CHECK_NEAR(kv_eff_prefill_at(h, KV_KERNELS_VLLM, 1024, 256), 0.3,
		   1e-12);
	CHECK_NEAR(kv_eff_prefill_at(h, KV_KERNELS_VLLM, 2048, pow(2, 6.5)),
		   0.375 * 0.85, 1e-12);
	CHECK_NEAR(kv_eff_prefill_at(h, KV_KERNELS_VLLM, 4096, 512), 0.55,
		   1e-12);
	CHECK_NEAR(kv_eff_prefill_at(h, KV_KERNELS_TRTLLM, 4096, 64), 0.4,
		   1e-12);
	CHECK_NEAR(h->moe_floor_us, 22, 0);
	CHECK_NEAR(h->moe[KV_COMPUTE_BF16].y[1], 0.6, 0);
	CHECK_U64(h->moe[KV_COMPUTE_FP8].n, 0);
	CHECK_NEAR(h->moe[KV_MOE_MXFP4].y[1], 0.3, 0);
	CHECK_NEAR(h->moe[KV_MOE_MXFP4].x[1], 64, 0);
	CHECK_U64(h->allreduce[0].n, 2);
	CHECK_U64(h->allreduce[1].n, 0);
	CHECK_NEAR(h->allreduce[2].x[1], 4096, 0);
	CHECK_NEAR(e->elem_us, 3, 0);
	CHECK_NEAR(e->elem_bw, 0.8, 0);
	struct kv_engine_cost c = kv_effs_engine(e, "vllm");
	CHECK_NEAR(c.step_us, 2750, 0);
	CHECK_NEAR(c.layer_us, 20, 0);
	CHECK_NEAR(c.request_us, 12500, 0);
	CHECK_NEAR(c.harmony_us, 2000, 0);
	c = kv_effs_engine(e, "trtllm"); /* layer_us and the others: 0 */
	CHECK_NEAR(c.step_us + c.layer_us + c.request_us + c.harmony_us, 0, 0);
	c = kv_effs_engine(e, "sglang"); /* none: no cost */
	CHECK_NEAR(c.step_us + c.layer_us + c.request_us + c.harmony_us, 0, 0);
	/* the nearest measured GPU by (bandwidth, bf16 peak) */
	const double rates[1][2] = {{3350, 989.5}};
	CHECK(kv_effs_nearest(e, rates, 4800, 989.5) == h);
	kv_effs_free(e);
}

/* The shipped table reads, and holds the nine GPUs aiconfigurator
 * measured that it was made for (commit 095f58a5: systems/data/<gpu>/
 * with gemm, attention, comm and moe tables). */
static void test_shipped(void)
{
	char err[KV_ERRLEN];
	struct kv_effs *e;
	CHECK(kv_effs_load("configs/efficiency.json", &e, err) == 0);
	static const char *const gpus[] = {
		"h100-sxm", "h200", "a100-80gb", "b200", "gb200", "l40s",
		"rtx-pro-6000-server", "b300", "gb300"};
	CHECK_U64(e->n, sizeof gpus / sizeof gpus[0]);
	for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
		const struct kv_eff *g = kv_effs_lookup(e, gpus[i]);
		CHECK(g != NULL);
		CHECK(g && g->gemm[KV_COMPUTE_BF16].n > 0);
		CHECK(g && g->moe[KV_COMPUTE_BF16].n > 0);
	}
	/* gpt-oss's mxfp4 experts measured where aiconfigurator has them:
	 * Hopper's and Blackwell's, not A100's */
	CHECK(kv_effs_lookup(e, "h200")->moe[KV_MOE_MXFP4].n > 0);
	CHECK(kv_effs_lookup(e, "b200")->moe[KV_MOE_MXFP4].n > 0);
	CHECK_U64(kv_effs_lookup(e, "a100-80gb")->moe[KV_MOE_MXFP4].n, 0);
	CHECK(kv_effs_lookup(e, "b300")->moe[KV_MOE_MXFP4].n > 0);
	CHECK(kv_effs_lookup(e, "rtx-pro-6000-server")->moe[KV_MOE_MXFP4].n >
	      0);
	/* an all-reduce table where the comm one is a measurement of the
	 * release: not L40S's (a copy of an older one), GB300's at 2 and 4
	 * GPUs only (its tables' largest count) */
	CHECK_U64(kv_effs_lookup(e, "l40s")->allreduce[0].n, 0);
	CHECK(kv_effs_lookup(e, "gb300")->allreduce[1].n > 0);
	CHECK_U64(kv_effs_lookup(e, "gb300")->allreduce[2].n, 0);
	kv_effs_free(e);
}

/* A field that is there but wrong: one line, the entry and the field. */
static void bad(const char *json, const char *want)
{
	char err[KV_ERRLEN];
	struct kv_effs *e = (struct kv_effs *)1;
	CHECK(kv_effs_parse(json, strlen(json), "t.json", &e, err) ==
	      KV_EINVAL);
	CHECK(e == NULL);
	CHECK_STR(err, want);
}

#define GPU(x) "{\"gpus\": [{\"gpu\": \"g\", \"source\": \"s\", " x "}]}"
#define GEMM "\"gemm\": {\"m\": [1, 2], \"bf16\": [0.5, 0.6]}"

static void test_bad(void)
{
	bad("{\"gpus\": []}", "t.json: gpus: must be a non-empty list");
	bad(GPU("\"x\": 1"), "t.json: gpus[0].gemm: missing");
	bad(GPU("\"gemm\": {\"m\": [1, 2]}"), "t.json: gpus[0].gemm.bf16: "
					      "missing");
	bad(GPU("\"gemm\": {\"m\": [2, 1], \"bf16\": [0.5, 0.6]}"),
	    "t.json: gpus[0].gemm.m[1]: must be above the one before");
	bad(GPU("\"gemm\": {\"m\": [1, 2], \"bf16\": [0.5]}"),
	    "t.json: gpus[0].gemm.bf16: must have 2 numbers, as its x has, "
	    "got 1");
	bad(GPU("\"gemm\": {\"m\": [1, 2], \"bf16\": [0.5, 1.5]}"),
	    "t.json: gpus[0].gemm.bf16[1]: must be at most 1");
	bad(GPU("\"gemm\": {\"m\": [1, 2], \"bf16\": [0.5, -1]}"),
	    "t.json: gpus[0].gemm.bf16[1]: must be a positive number");
	bad(GPU(GEMM ", \"gemm_floor_us\": \"5\""),
	    "t.json: gpus[0].gemm_floor_us: must be a non-negative number");
	bad(GPU(GEMM ", \"prefill\": {\"trtllm\": {\"seq\": [1, 2], "
		"\"eff\": [0.1, 0.2], \"hd64\": [0.5]}}"),
	    "t.json: gpus[0].prefill.trtllm.hd64: must have 2 numbers, as its "
	    "x has, got 1");
	bad(GPU(GEMM ", \"attn\": {\"vllm\": {\"floor_us\": 1}}"),
	    "t.json: gpus[0].attn.vllm.bw: missing");
	bad(GPU(GEMM ", \"attn\": {\"vllm\": {\"floor_us\": 1, \"bw\": 2}}"),
	    "t.json: gpus[0].attn.vllm.bw: must be at most 1");
	bad(GPU(GEMM ", \"moe\": {\"tpe\": [1], \"bf16\": [0.5]}"),
	    "t.json: gpus[0].moe.floor_us: missing");
	bad(GPU(GEMM ", \"moe\": {\"floor_us\": 1, \"tpe\": [1]}"),
	    "t.json: gpus[0].moe.bf16: missing");
	bad(GPU(GEMM ", \"moe\": {\"floor_us\": 1, \"tpe\": [1], "
		     "\"bf16\": [0.5], \"mxfp4\": [0.5, 0.4]}"),
	    "t.json: gpus[0].moe.mxfp4: must have 1 numbers, as its x has, "
	    "got 2");
	bad(GPU(GEMM ", \"allreduce_us\": {\"bytes\": [1], \"2\": [1, 2]}"),
	    "t.json: gpus[0].allreduce_us.2: must have 1 numbers, as its x "
	    "has, got 2");
	bad("{\"engines\": [{\"engine\": \"vllm\"}], \"gpus\": [{\"gpu\": "
	    "\"g\", \"source\": \"s\", " GEMM "}]}",
	    "t.json: engines[0].step_us: missing");
	bad("{\"engines\": [{\"engine\": \"vllm\", \"step_us\": 1, "
	    "\"request_us\": -1}], \"gpus\": [{\"gpu\": \"g\", "
	    "\"source\": \"s\", " GEMM "}]}",
	    "t.json: engines[0].request_us: must be a non-negative number");
	bad("{\"elementwise\": {\"us\": 3, \"bw\": 1.5}, \"gpus\": [{\"gpu\": "
	    "\"g\", \"source\": \"s\", " GEMM "}]}",
	    "t.json: elementwise.bw: must be at most 1");
}

/* Linear in log x: halfway between 1 and 100 in the logarithm is 10. */
static void test_curve(void)
{
	struct kv_curve c = {2, {1, 100}, {0.2, 0.8}};
	CHECK_NEAR(kv_curve_at(&c, 10), 0.5, 1e-12);
	CHECK_NEAR(kv_curve_at(&c, 1), 0.2, 0);
	CHECK_NEAR(kv_curve_at(&c, 0.5), 0.2, 0);   /* its end values */
	CHECK_NEAR(kv_curve_at(&c, 1000), 0.8, 0);
	struct kv_curve none = {0};
	CHECK_NEAR(kv_curve_at(&none, 5), 1, 0);
}

int main(void)
{
	test_read();
	test_shipped();
	test_bad();
	test_curve();
	return test_done("eff");
}
