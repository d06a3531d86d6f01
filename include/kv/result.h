/*
 * result.h - a serving benchmark's result, as its tool writes it: what
 * was sent (prompt and output tokens a request, the concurrency or the
 * rate, the requests) and what was measured (the means of time to first
 * token, time per output token and latency, output tokens a second).
 * Five tools' files are read, each found by its own keys:
 *   vllm          `vllm bench serve --save-result` (and
 *                 benchmark_serving.py): a JSON object, or one a line
 *                 with --append-result
 *   sglang        `python -m sglang.bench_serving --output-file`: one
 *                 object a line, its rate a bare Infinity where unlimited
 *   genai-perf    profile_export_genai_perf.json
 *   aiperf        profile_export_aiperf.json (metrics at the top level,
 *                 or under "records" in early releases)
 *   trtllm-bench  `trtllm-bench throughput --report_json`
 */
#ifndef KV_RESULT_H
#define KV_RESULT_H

#include <stddef.h>

/* One run of a benchmark. A metric the file does not give is NAN. */
struct kv_result {
	const char *tool;   /* "vllm", "sglang", "genai-perf", "aiperf",
			       "trtllm-bench" */
	double isl, osl;    /* mean prompt and output tokens a request */
	double users;       /* requests at once (its max concurrency); 0:
			       no limit (every request sent at once, or at
			       the rate) */
	double rate;        /* requests a second sent; 0: as fast as the
			       concurrency allows */
	double prompts;     /* requests completed */
	double ttft_ms, tpot_ms, latency_ms; /* means */
	double out_tps;     /* output tokens a second, all requests */
};

/* The runs of a result file's text into out (at most max), *n of them;
 * `path` names it in messages. Returns 0; KV_EINVAL with one line in err
 * ("path: not a result of vllm bench serve, ..." for a file of another
 * schema; "path: line 3: ..." for a bad run of several); KV_ENOMEM. */
int kv_results_parse(const char *text, size_t len, const char *path,
		     struct kv_result *out, size_t max, size_t *n, char *err);

/* Reads the file. Same contract, plus KV_EIO. */
int kv_results_load(const char *path, struct kv_result *out, size_t max,
		    size_t *n, char *err);

#endif
