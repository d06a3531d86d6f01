/*
 * result.c - serving benchmarks' result files (result.h): each tool's
 * keys found, its run read into one struct of means. Keys differ between
 * releases, so every one is optional and a run is refused only where it
 * lacks its lengths or every metric.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "kv/model.h"
#include "kv/result.h"

#define MAX_RESULT_BYTES (64u << 20)

static const char NOT_MINE[] =
	"not a result of vllm bench serve, SGLang's bench_serving, "
	"genai-perf, aiperf or trtllm-bench";

/* The number at the dotted path under o ("a.b.c"), a string "inf" as
 * INFINITY; NAN when absent, null or not a number. */
static double at(const cJSON *o, const char *path)
{
	char key[64];
	while (o && *path) {
		size_t k = strcspn(path, ".");
		if (k >= sizeof key)
			return NAN;
		memcpy(key, path, k);
		key[k] = 0;
		o = cJSON_GetObjectItemCaseSensitive(o, key);
		path += k + (path[k] == '.');
	}
	if (cJSON_IsNumber(o))
		return o->valuedouble;
	if (cJSON_IsString(o) && (!strcmp(o->valuestring, "inf") ||
				  !strcmp(o->valuestring, "Infinity")))
		return INFINITY;
	return NAN;
}

static bool has(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key) != NULL;
}

/* A rate of requests: none, null or infinite is 0 (unlimited). */
static double rate_of(double r)
{
	return isfinite(r) && r > 0 ? r : 0;
}

/* A concurrency: none or null is 0 (unlimited). */
static double users_of(double c)
{
	return isfinite(c) && c > 0 ? c : 0;
}

/* vLLM and SGLang: the same shape, latency under its own name. */
static void serving(const cJSON *o, const char *latency, struct kv_result *r)
{
	double done = at(o, "completed");
	if (!(done > 0))
		done = at(o, "num_prompts");
	r->prompts = done;
	r->isl = at(o, "total_input_tokens") / done;
	r->osl = at(o, "total_output_tokens") / done;
	r->users = users_of(at(o, "max_concurrency"));
	r->rate = rate_of(at(o, "request_rate"));
	/* the means, else the medians */
	static const char *const keys[3][2] = {
		{"mean_ttft_ms", "median_ttft_ms"},
		{"mean_tpot_ms", "median_tpot_ms"},
		{"mean_e2el_ms", "median_e2el_ms"}};
	double *m[3] = {&r->ttft_ms, &r->tpot_ms, &r->latency_ms};
	for (int k = 0; k < 3; k++)
		for (int j = 0; j < 2 && isnan(*m[k]); j++)
			*m[k] = at(o, keys[k][j]);
	if (isnan(r->latency_ms))
		r->latency_ms = at(o, latency);
	if (isnan(r->latency_ms))
		r->latency_ms = at(o, "median_e2e_latency_ms");
	r->out_tps = at(o, "output_throughput");
}

/* A genai-perf or aiperf statistic's mean (else its median) in
 * milliseconds (its unit read), or as is for counts and rates. */
static double stat(const cJSON *m, const char *name, bool time)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(m, name);
	double v = at(s, "avg");
	if (isnan(v)) /* a median where no mean was kept */
		v = at(s, "p50");
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(s, "unit");
	if (!time || !cJSON_IsString(u))
		return v;
	const char *x = u->valuestring;
	return !strcmp(x, "ns") ? v * 1e-6
	       : !strcmp(x, "us") ? v * 1e-3
	       : !strcmp(x, "s") ? v * 1e3
	       : !strcmp(x, "ms") ? v
				     : NAN;
}

static void perf(const cJSON *m, const cJSON *cfg, bool aiperf,
		 struct kv_result *r)
{
	r->isl = stat(m, "input_sequence_length", false);
	r->osl = stat(m, "output_sequence_length", false);
	r->ttft_ms = stat(m, "time_to_first_token", true);
	r->tpot_ms = stat(m, "inter_token_latency", true);
	r->latency_ms = stat(m, "request_latency", true);
	r->out_tps = stat(m, "output_token_throughput", false);
	r->prompts = stat(m, "request_count", false);
	if (!aiperf) {
		r->users = users_of(at(cfg, "concurrency"));
		r->rate = rate_of(at(cfg, "request_rate"));
		return;
	}
	/* aiperf's configuration by release: its profiling phase, its load
	 * generator, or flat */
	static const char *const c[] = {"phases.profiling.concurrency",
					"loadgen.concurrency", "concurrency"};
	static const char *const q[] = {"phases.profiling.rate",
					"loadgen.request_rate", "request_rate"};
	for (int i = 0; i < 3 && !r->users; i++)
		r->users = users_of(at(cfg, c[i]));
	for (int i = 0; i < 3 && !r->rate; i++)
		r->rate = rate_of(at(cfg, q[i]));
}

static void trtllm(const cJSON *o, struct kv_result *r)
{
	r->tool = "trtllm-bench";
	r->isl = at(o, "request_info.avg_input_length");
	if (isnan(r->isl))
		r->isl = at(o, "dataset.avg_isl");
	r->osl = at(o, "request_info.avg_output_length");
	if (isnan(r->osl))
		r->osl = at(o, "dataset.avg_osl");
	r->prompts = at(o, "request_info.num_requests");
	r->ttft_ms = at(o, "streaming_metrics.avg_ttft_ms");
	r->tpot_ms = at(o, "streaming_metrics.avg_tpot_ms");
	r->latency_ms = at(o, "performance.avg_request_latency_ms");
	r->out_tps = at(o, "performance.system_output_throughput_tok_s");
	r->users = users_of(at(o, "world_info.concurrency"));
}

/* One run from object o into r; NULL, or why it is not one. */
static const char *run(const cJSON *o, struct kv_result *r)
{
	*r = (struct kv_result){.ttft_ms = NAN, .tpot_ms = NAN,
				.latency_ms = NAN, .out_tps = NAN};
	if (!cJSON_IsObject(o))
		return NOT_MINE;
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(o, "input_config");
	const cJSON *rec = cJSON_GetObjectItemCaseSensitive(o, "records");
	if (cJSON_IsObject(rec) && cfg) {
		r->tool = "aiperf";
		perf(rec, cfg, true, r);
	} else if (has(o, "schema_version") || has(o, "aiperf_version") ||
		   has(o, "was_cancelled")) {
		r->tool = "aiperf";
		perf(o, cfg, true, r);
	} else if (cfg && (has(o, "time_to_first_token") ||
			   has(o, "request_latency"))) {
		r->tool = "genai-perf";
		perf(o, cfg, false, r);
	} else if (has(o, "engine") && has(o, "world_info") &&
		   has(o, "performance")) {
		trtllm(o, r);
	} else if (has(o, "mean_e2e_latency_ms") ||
		   (has(o, "input_throughput") && has(o, "concurrency"))) {
		r->tool = "sglang";
		serving(o, "mean_e2e_latency_ms", r);
	} else if (has(o, "mean_e2el_ms") ||
		   (has(o, "mean_ttft_ms") &&
		    (has(o, "burstiness") || has(o, "model_id")))) {
		r->tool = "vllm";
		serving(o, "mean_e2el_ms", r);
	} else {
		return NOT_MINE;
	}
	if (!(r->isl >= 1) || !(r->osl >= 1) || !isfinite(r->isl) ||
	    !isfinite(r->osl))
		return "its prompt and output lengths are missing or below 1";
	if (isnan(r->ttft_ms) && isnan(r->tpot_ms) && isnan(r->latency_ms) &&
	    isnan(r->out_tps))
		return "it measured none of ttft, tpot, latency, output "
		       "throughput";
	if (!(r->prompts >= 1) || !isfinite(r->prompts))
		r->prompts = r->users > 0 ? r->users : 1;
	double *m[4] = {&r->ttft_ms, &r->tpot_ms, &r->latency_ms, &r->out_tps};
	for (int i = 0; i < 4; i++)
		if (!isnan(*m[i]) && !(*m[i] > 0 && isfinite(*m[i])))
			return "a measured mean is not a positive number";
	return NULL;
}

/* Python's json writes Infinity, -Infinity and NaN bare (SGLang's
 * default rate): outside strings each becomes null, so that a strict
 * reader takes the text. Into out (room for 2 len + 1), *n its length. */
static void bare_words(const char *s, size_t len, char *out, size_t *n)
{
	static const char *const words[] = {"-Infinity", "Infinity", "NaN"};
	bool str = false;
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		int w = 3;
		if (str) {
			if (s[i] == '\\' && i + 1 < len)
				out[o++] = s[i++];
			else if (s[i] == '"')
				str = false;
		} else if (s[i] == '"') {
			str = true;
		} else {
			for (w = 0; w < 3; w++)
				if (len - i >= strlen(words[w]) &&
				    !memcmp(s + i, words[w], strlen(words[w])))
					break;
		}
		if (w < 3) {
			memcpy(out + o, "null", 4);
			o += 4;
			i += strlen(words[w]) - 1;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = 0;
	*n = o;
}

int kv_results_parse(const char *text, size_t len, const char *path,
		     struct kv_result *out, size_t max, size_t *n, char *err)
{
	char *s = len < SIZE_MAX / 2 ? malloc(2 * len + 1) : NULL;
	cJSON *root = NULL;
	int e = 0;
	*n = 0;
	if (!s) {
		snprintf(err, KV_ERRLEN, "%s: out of memory", path);
		return KV_ENOMEM;
	}
	bare_words(text, len, s, &len);
	/* one JSON value, else JSON Lines: an object a line */
	char why[KV_ERRLEN];
	if (!kv_json_read(s, len, path, &root, why)) {
		const char *no = run(root, &out[0]);
		e = no ? kv_fail(err, path, "%s", no) : 0;
		*n = !no;
		goto done;
	}
	size_t line = 0;
	for (char *p = s; *p && !e;) {
		char *end = strchr(p, '\n');
		size_t k = end ? (size_t)(end - p) : strlen(p);
		line++;
		if (strspn(p, " \t\r") < k) {
			cJSON *o = NULL;
			if (*n == max)
				e = kv_fail(err, path, "more than %zu runs", max);
			else if ((e = kv_json_read(p, k, path, &o, why)))
				e = *n || line > 1 ? kv_fail(err, path, "line %zu: %s",
							  line, NOT_MINE)
						   : kv_fail(err, path, "%s",
							  NOT_MINE);
			else {
				const char *no = run(o, &out[*n]);
				if (no)
					e = kv_fail(err, path, "line %zu: %s", line,
						 no);
				else
					(*n)++;
			}
			cJSON_Delete(o);
		}
		p += k + (end != NULL);
	}
	if (!e && !*n)
		e = kv_fail(err, path, "%s", NOT_MINE);
done:
	cJSON_Delete(root);
	free(s);
	return e;
}

int kv_results_load(const char *path, struct kv_result *out, size_t max,
		    size_t *n, char *err)
{
	char *text;
	size_t len;
	*n = 0;
	int e = kv_file_read(path, MAX_RESULT_BYTES, &text, &len, err);
	if (e)
		return e;
	e = kv_results_parse(text, len, path, out, max, n, err);
	free(text);
	return e;
}
