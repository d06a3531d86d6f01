/*
 * kvfit_calib.c - kvfit --calibrate FILE: the runs of serving benchmarks'
 * result files read (libkv's result module), fitted (its calib module),
 * each measurement printed beside its prediction, and the fit written as
 * a GPU entry for --gpu-file. The reading and the fit are libkv's; here
 * the files are named, the table printed and the entry written.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kv/calib.h"
#include "kvfit.h"

#define MAX_RUNS 256

static const char *const cal_cols[] = {
	"run", "tool", "isl", "osl", "users", "prompts", "metric",
	"measured", "predicted", "error"};

static const char *const metric[KV_CAL_N] = {"ttft_ms", "tpot_ms",
					     "latency_ms", "out_tokens_per_s"};

/* Each file's runs into runs (at most MAX_RUNS), the file and run of
 * each into names. */
static int read_runs(const struct args *a, struct kv_result *runs,
		     char (*names)[80], size_t *n)
{
	char err[KV_ERRLEN];
	*n = 0;
	for (size_t f = 0; f < a->ncalib; f++) {
		struct kv_result got[MAX_RUNS];
		size_t k;
		int e = kv_results_load(a->calib[f], got, MAX_RUNS, &k, err);
		if (e) {
			cli_error("--calibrate: %s", err);
			return cli_exit(e);
		}
		for (size_t i = 0; i < k; i++) {
			if (*n == MAX_RUNS)
				return cli_usage("--calibrate: more than %d "
						 "runs",
						 MAX_RUNS);
			snprintf(names[*n], sizeof names[0], "%.60s:%zu",
				 a->calib[f], i + 1);
			runs[(*n)++] = got[i];
		}
	}
	return 0;
}

static void put_runs(const struct args *a, const struct kv_result *runs,
		     char (*names)[80], size_t n, const struct kv_calib *c)
{
	struct cli_table t;
	cli_table_begin(&t, cal_cols, CLI_NCOLS(cal_cols), a->json, a->header,
			a->human);
	for (size_t i = 0; i < n; i++) {
		const struct kv_result *r = &runs[i];
		double m[KV_CAL_N] = {r->ttft_ms, r->tpot_ms, r->latency_ms,
				      r->out_tps};
		for (int k = 0; k < KV_CAL_N; k++) {
			if (isnan(m[k]) || isnan(c->pred[i][k]))
				continue;
			cli_put_str(&t, names[i]);
			cli_put_str(&t, r->tool);
			cli_put_f(&t, r->isl, 0);
			cli_put_f(&t, r->osl, 0);
			cli_put_f(&t, r->users, 0);
			cli_put_f(&t, r->prompts, 0);
			cli_put_str(&t, metric[k]);
			cli_put_f(&t, m[k], 3);
			cli_put_f(&t, c->pred[i][k], 3);
			cli_put_f(&t, c->pred[i][k] / m[k] - 1, 3);
			cli_row_end(&t);
		}
	}
	cli_table_end(&t);
}

/* The GPU's datasheet entry with the fit, named NAME-fitted, into
 * --save-gpu. */
static int save(const struct args *a, const struct kv_gpu *gpu,
		const struct kv_calib *c, size_t n)
{
	char err[KV_ERRLEN];
	struct kv_gpu g = *gpu;
	snprintf(g.name, sizeof g.name, "%.24s-fitted", gpu->name);
	memset(g.aliases, 0, sizeof g.aliases);
	g.bandwidth_efficiency = kv_gpu_sig(c->bw_eff, 3);
	g.flops_efficiency = kv_gpu_sig(c->flops_eff, 3);
	g.decode_tflops = 0;
	g.serial_fraction = 0;
	g.threads = 0;
	g.fitted = true;
	int k = snprintf(g.source, sizeof g.source,
			 "fitted by kvfit --calibrate to %zu run%s of", n,
			 n == 1 ? "" : "s");
	for (size_t f = 0; f < a->ncalib && k > 0 &&
			   (size_t)k < sizeof g.source;
	     f++)
		k += snprintf(g.source + k, sizeof g.source - (size_t)k,
			      " %s", a->calib[f]);
	if (kv_gpus_writable(a->save_gpu, err))
		return cli_usage("--save-gpu: %s", err);
	char *text = kv_gpus_json(&g, 1,
				  "A GPU as serving benchmarks measured it: "
				  "the fractions of its datasheet's bandwidth "
				  "and FLOP rate that kvfit --calibrate fitted "
				  "to them. Read it with kvfit --gpu-file FILE "
				  "--gpu NAME.",
				  NULL);
	if (!text) {
		cli_error("%s: out of memory", a->save_gpu);
		return CLI_FAIL;
	}
	int e = kv_gpus_save(a->save_gpu, text, err);
	free(text);
	if (e) {
		cli_error("%s", err);
		return CLI_FAIL;
	}
	fprintf(stderr, "%s: wrote %s (kvfit --gpu-file %s --gpu %s)\n",
		cli_prog(), a->save_gpu, a->save_gpu, g.name);
	return 0;
}

int kvfit_calibrate(const struct args *a, const struct kv_plan *pl,
		    const struct kv_gpus *gpus, const char *gpu_name)
{
	char err[KV_ERRLEN];
	static struct kv_result runs[MAX_RUNS];
	static char names[MAX_RUNS][80];
	static double pred[MAX_RUNS][KV_CAL_N];
	size_t n;
	int status = read_runs(a, runs, names, &n);
	if (status)
		return status;
	const struct kv_gpu *gpu = kv_gpus_lookup(gpus, a->gpu);
	struct kv_plan_iter it;
	struct kv_plan_row r;
	kv_plan_begin(&it, &a->o, &pl[0]);
	if (!kv_plan_next(&it, &r))
		return cli_usage("--calibrate: no row to fit on");
	struct kv_calib c = {.pred = pred};
	int e = kv_calib_fit(&r.in, &a->o.work, runs, n, &c, err);
	if (e && !c.terms) {
		cli_error("--calibrate: %s", err);
		return cli_exit(e);
	}
	put_runs(a, runs, names, n, &c);
	if (e) {
		cli_error("--calibrate: %s; nothing written", err);
		return cli_exit(e);
	}
	fprintf(stderr,
		"%s: %s, %s: bandwidth_efficiency %.3g, flops_efficiency "
		"%.3g of the datasheet, over %zu measurements of %zu run%s "
		"(rms %.1f%%)\n",
		cli_prog(), pl[0].m->name, gpu_name, c.bw_eff, c.flops_eff,
		c.terms, n, n == 1 ? "" : "s", (exp(c.rms) - 1) * 100);
	return a->save_gpu && gpu ? save(a, gpu, &c, n) : 0;
}
