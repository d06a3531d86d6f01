/*
 * calib.h - the time model fitted to a user's own benchmark: the runs of
 * serving benchmarks' result files (result.h) replayed as bursts (the
 * benchmark's requests, its concurrency, its lengths) on the GPU's
 * datasheet rates, and the two fractions of them that explain the
 * measurements best: of the bandwidth (what decode steps wait on) and of
 * the FLOP rate (what prompts wait on). kvfit --calibrate writes them as
 * a GPU entry (bandwidth_efficiency, flops_efficiency) that later runs
 * read with --gpu-file (time_source "fitted").
 */
#ifndef KV_CALIB_H
#define KV_CALIB_H

#include <stdbool.h>
#include <stddef.h>

#include "fit.h"
#include "result.h"
#include "serve.h"

/* The metrics of a run: time to first token, time per output token,
 * latency (ms), output tokens a second. */
enum { KV_CAL_TTFT, KV_CAL_TPOT, KV_CAL_LATENCY, KV_CAL_TPS, KV_CAL_N };

struct kv_calib {
	double bw_eff, flops_eff;  /* the fit, each in [KV_CAL_MIN, 1] */
	double rms;                /* root mean square of the log residuals */
	size_t terms;              /* measurements fitted */
	double (*pred)[KV_CAL_N];  /* each run's predictions (the caller's
				      array of n), NAN where not measured */
};

#define KV_CAL_MIN 0.01

/* One run r predicted on in's device with w's rates (efficiencies
 * bw_eff and flops_eff of the datasheet): in->ctx becomes isl + osl, the
 * burst the benchmark's requests at its concurrency (no limit: all at
 * once), the engine holding what fits; a run at a request rate an open
 * loop at it (kv_serve_rate: KV_ERANGE where it is not served). Into pred
 * (KV_CAL_N). */
int kv_calib_predict(const struct kv_fit_in *in, const struct kv_serve_in *w,
		     const struct kv_result *r, double bw_eff,
		     double flops_eff, double *pred, char *err);

/*
 * Fits bw_eff and flops_eff to the n runs (minimising the sum of the
 * squared logarithms of predicted over measured, each measured mean a
 * term; a rate the fractions leave unserved counts as a miss of 10x on
 * each), each in turn by golden section over [KV_CAL_MIN, 1] in its
 * logarithm until neither moves. Returns 0 with *out (out->pred filled);
 * KV_EINVAL with err for a run that cannot be timed, or a fit that does
 * not converge: a fraction pinned at 1 (the measurements are faster than
 * the datasheet allows) or at KV_CAL_MIN, or residuals above 50% rms.
 */
int kv_calib_fit(const struct kv_fit_in *in, const struct kv_serve_in *w,
		 const struct kv_result *runs, size_t n, struct kv_calib *out,
		 char *err);

#endif
