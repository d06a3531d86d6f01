/*
 * test_result.c - serving benchmarks' result files (each tool's keys,
 * SGLang's bare Infinity, JSON Lines, medians where no mean was kept,
 * the refusals) and the fit of kvfit --calibrate: runs predicted at known
 * fractions of a datasheet are fitted back to those fractions.
 */
#include <math.h>

#include "kv/calib.h"
#include "kv/result.h"
#include "test.h"

static size_t parse(const char *text, struct kv_result *r, size_t max)
{
	char err[KV_ERRLEN];
	size_t n = 0;
	int e = kv_results_parse(text, strlen(text), "r.json", r, max, &n, err);
	if (e)
		fprintf(stderr, "parse: %s\n", err);
	CHECK(e == 0);
	return n;
}

static void test_tools(void)
{
	struct kv_result r[4];
	/* vLLM: lengths from the totals, no concurrency limit */
	CHECK_U64(parse("{\"date\": \"x\", \"model_id\": \"m\", \"burstiness\": 1,"
			" \"num_prompts\": 10, \"completed\": 8,"
			" \"request_rate\": \"inf\", \"max_concurrency\": null,"
			" \"total_input_tokens\": 8000, \"total_output_tokens\": 800,"
			" \"output_throughput\": 50.5, \"mean_ttft_ms\": 20,"
			" \"mean_tpot_ms\": 5, \"mean_e2el_ms\": 515}",
			r, 4),
		  1);
	CHECK_STR(r[0].tool, "vllm");
	CHECK_NEAR(r[0].isl, 1000, 0);
	CHECK_NEAR(r[0].osl, 100, 0);
	CHECK_NEAR(r[0].prompts, 8, 0);
	CHECK_NEAR(r[0].users, 0, 0);
	CHECK_NEAR(r[0].rate, 0, 0);
	CHECK_NEAR(r[0].latency_ms, 515, 0);
	CHECK_NEAR(r[0].out_tps, 50.5, 0);
	/* SGLang: a run a line, Infinity and NaN bare (not in strings), the
	 * second at a rate */
	CHECK_U64(parse("{\"backend\": \"sglang\", \"request_rate\": Infinity,"
			" \"max_concurrency\": 4, \"completed\": 2,"
			" \"total_input_tokens\": 200, \"total_output_tokens\": 20,"
			" \"input_throughput\": 1, \"mean_e2e_latency_ms\": 90,"
			" \"median_ttft_ms\": 12, \"std_ttft_ms\": NaN,"
			" \"label\": \"NaN Infinity\", \"concurrency\": 3.5}\n"
			"\n"
			"{\"request_rate\": 2.5, \"completed\": 3,"
			" \"total_input_tokens\": 30, \"total_output_tokens\": 6,"
			" \"mean_e2e_latency_ms\": 7, \"input_throughput\": 1,"
			" \"concurrency\": 1}\n",
			r, 4),
		  2);
	CHECK_STR(r[0].tool, "sglang");
	CHECK_NEAR(r[0].users, 4, 0);
	CHECK_NEAR(r[0].rate, 0, 0);
	CHECK_NEAR(r[0].ttft_ms, 12, 0); /* the median, no mean kept */
	CHECK_NEAR(r[0].latency_ms, 90, 0);
	CHECK(isnan(r[0].tpot_ms));
	CHECK_NEAR(r[1].rate, 2.5, 0);
	CHECK_NEAR(r[1].isl, 10, 0);
	/* genai-perf: stats blocks with their units */
	CHECK_U64(parse("{\"time_to_first_token\": {\"unit\": \"ns\", \"avg\": 2e7},"
			" \"inter_token_latency\": {\"unit\": \"ms\", \"avg\": 4},"
			" \"request_latency\": {\"unit\": \"s\", \"avg\": 1.5},"
			" \"input_sequence_length\": {\"avg\": 512},"
			" \"output_sequence_length\": {\"avg\": 128},"
			" \"request_count\": {\"avg\": 40},"
			" \"input_config\": {\"concurrency\": 8}}",
			r, 4),
		  1);
	CHECK_STR(r[0].tool, "genai-perf");
	CHECK_NEAR(r[0].ttft_ms, 20, 1e-9);
	CHECK_NEAR(r[0].latency_ms, 1500, 0);
	CHECK_NEAR(r[0].users, 8, 0);
	CHECK_NEAR(r[0].prompts, 40, 0);
	/* aiperf, early: metrics under records */
	CHECK_U64(parse("{\"records\": {\"time_to_first_token\": {\"unit\": \"ms\","
			" \"avg\": 30}, \"input_sequence_length\": {\"avg\": 100},"
			" \"output_sequence_length\": {\"avg\": 10}},"
			" \"input_config\": {\"loadgen\": {\"concurrency\": 2}}}",
			r, 4),
		  1);
	CHECK_STR(r[0].tool, "aiperf");
	CHECK_NEAR(r[0].ttft_ms, 30, 0);
	CHECK_NEAR(r[0].users, 2, 0);
	/* trtllm-bench: offline, all queued */
	CHECK_U64(parse("{\"engine\": {}, \"world_info\": {}, \"performance\":"
			" {\"system_output_throughput_tok_s\": 900},"
			" \"request_info\": {\"num_requests\": 30,"
			" \"avg_input_length\": 64, \"avg_output_length\": 32}}",
			r, 4),
		  1);
	CHECK_STR(r[0].tool, "trtllm-bench");
	CHECK_NEAR(r[0].out_tps, 900, 0);
	CHECK_NEAR(r[0].users, 0, 0);
	CHECK_NEAR(r[0].prompts, 30, 0);
}

static void bad(const char *text, const char *want)
{
	char err[KV_ERRLEN];
	struct kv_result r[2];
	size_t n = 9;
	CHECK(kv_results_parse(text, strlen(text), "r.json", r, 2, &n, err) ==
	      KV_EINVAL);
	CHECK_STR(err, want);
}

static void test_bad(void)
{
	bad("{\"gpus\": []}", "r.json: not a result of vllm bench serve, "
			      "SGLang's bench_serving, genai-perf, aiperf or "
			      "trtllm-bench");
	bad("", "r.json: not a result of vllm bench serve, SGLang's "
		"bench_serving, genai-perf, aiperf or trtllm-bench");
	bad("{\"mean_e2el_ms\": 5, \"completed\": 1}",
	    "r.json: its prompt and output lengths are missing or below 1");
	bad("{\"mean_e2el_ms\": null, \"completed\": 1, \"total_input_tokens\":"
	    " 5, \"total_output_tokens\": 5}",
	    "r.json: it measured none of ttft, tpot, latency, output "
	    "throughput");
	bad("{\"mean_e2el_ms\": -5, \"completed\": 1, \"total_input_tokens\":"
	    " 5, \"total_output_tokens\": 5}",
	    "r.json: a measured mean is not a positive number");
	bad("{\"mean_e2e_latency_ms\": 5, \"completed\": 1, "
	    "\"total_input_tokens\": 5, \"total_output_tokens\": 5}\n{oops\n",
	    "r.json: line 2: not a result of vllm bench serve, SGLang's "
	    "bench_serving, genai-perf, aiperf or trtllm-bench");
	const char *three = "{\"mean_e2e_latency_ms\": 5, \"completed\": 1, "
			    "\"total_input_tokens\": 5, "
			    "\"total_output_tokens\": 5}\n";
	char buf[512];
	snprintf(buf, sizeof buf, "%s%s%s", three, three, three);
	bad(buf, "r.json: more than 2 runs");
}

/* Runs predicted at bandwidth 0.6 and FLOPs 0.3 of an H100's datasheet
 * come back as those fractions. */
static void test_fit(void)
{
	struct kv_model *m = test_load("llama-3.1-8b");
	if (!m)
		return;
	char err[KV_ERRLEN];
	struct kv_fit_in in = {.m = m, .kv_dtype = KV_DTYPE_BF16,
			       .w_dtype = KV_DTYPE_BF16, .mem = 80000000000ULL,
			       .tp = 1, .pp = 1, .ctx = 4096,
			       .server = kv_server_get(KV_SERVER_VLLM),
			       .bandwidth_gbps = 3350, .tflops = 989.5,
			       .gpu = "h100-sxm"};
	struct kv_serve_in w = {0};
	struct kv_result runs[2] = {
		{.tool = "vllm", .isl = 1000, .osl = 200, .users = 16,
		 .prompts = 64},
		{.tool = "vllm", .isl = 4000, .osl = 50, .users = 4,
		 .prompts = 16},
	};
	for (int i = 0; i < 2; i++) {
		double p[KV_CAL_N];
		CHECK(kv_calib_predict(&in, &w, &runs[i], 0.6, 0.3, p, err) ==
		      0);
		runs[i].ttft_ms = p[KV_CAL_TTFT];
		runs[i].tpot_ms = p[KV_CAL_TPOT];
		runs[i].latency_ms = NAN;
		runs[i].out_tps = p[KV_CAL_TPS];
	}
	double pred[2][KV_CAL_N];
	struct kv_calib c = {.pred = pred};
	CHECK(kv_calib_fit(&in, &w, runs, 2, &c, err) == 0);
	CHECK_NEAR(c.bw_eff, 0.6, 0.01);
	CHECK_NEAR(c.flops_eff, 0.3, 0.01);
	CHECK(c.rms < 0.01);
	CHECK_U64(c.terms, 6);
	CHECK(isnan(pred[0][KV_CAL_LATENCY]));
	/* faster than the datasheet: pinned, refused */
	runs[0].tpot_ms /= 3;
	runs[1].tpot_ms /= 3;
	runs[0].out_tps *= 3;
	runs[1].out_tps *= 3;
	CHECK(kv_calib_fit(&in, &w, runs, 2, &c, err) == KV_EINVAL);
	CHECK_HAS(err, "the fit does not converge: the runs want more than "
		       "the h100-sxm's bandwidth");
	/* a run at a rate is an open loop: its tokens the rate's; one the
	 * fractions cannot serve is KV_ERANGE */
	runs[0].rate = 2;
	double p[KV_CAL_N];
	CHECK(kv_calib_predict(&in, &w, &runs[0], 0.6, 0.3, p, err) == 0);
	CHECK_NEAR(p[KV_CAL_TPS], 400, 1e-9);
	runs[0].rate = 500;
	CHECK(kv_calib_predict(&in, &w, &runs[0], 0.6, 0.3, p, err) ==
	      KV_ERANGE);
	CHECK_HAS(err, "500 requests a second cannot be served");
	kv_model_free(m);
}

int main(void)
{
	test_tools();
	test_bad();
	test_fit();
	return test_done("result");
}
