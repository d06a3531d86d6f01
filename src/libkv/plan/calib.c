/*
 * calib.c - fitting the time model's two fractions of a datasheet to a
 * user's benchmark runs (calib.h). Each run is a burst as its benchmark
 * sent it; the fit is a coordinate descent in the logarithms, each
 * fraction by golden section with the other held.
 */
#include <math.h>
#include <stdio.h>

#include "kv/calib.h"
#include "kv/model.h"

/* Golden-section steps a fraction: its bracket, ln 100 wide, shrinks to
 * 0.618^16 of that, 0.01 (a fraction known to 0.1%: more than the
 * runs say). */
#define SECTIONS 16
#define ROUNDS 6

int kv_calib_predict(const struct kv_fit_in *in, const struct kv_serve_in *w,
		     const struct kv_result *r, double bw_eff,
		     double flops_eff, double *pred, char *err)
{
	struct kv_fit_in x = *in;
	struct kv_fit f;
	uint64_t isl = (uint64_t)llround(r->isl);
	uint64_t osl = (uint64_t)llround(r->osl);
	x.ctx = isl + osl;
	x.users = 0;
	int e = kv_fit_solve(&x, &f, err);
	if (e)
		return e;
	if (!f.users_whole) {
		snprintf(err, KV_ERRLEN, "%s: no request of %llu tokens fits "
			 "to time the run",
			 in->m->name, (unsigned long long)x.ctx);
		return KV_EINVAL;
	}
	struct kv_serve_in v = *w;
	v.isl = isl;
	v.osl = osl;
	v.arrivals = KV_ARRIVE_BURST;
	v.prompts = (uint64_t)llround(r->prompts);
	v.users = r->users > 0 ? (uint64_t)llround(r->users) : v.prompts;
	if (v.prompts < v.users)
		v.prompts = v.users;
	v.slots = f.users_whole;
	v.bw_eff = bw_eff;
	v.flops_eff = flops_eff;
	v.eff = NULL; /* the datasheet's rates, these fractions of them */
	v.effs = NULL;
	struct kv_serve s;
	if (r->rate > 0) { /* an open loop at its rate */
		v.arrivals = KV_ARRIVE_RATE;
		v.rate = r->rate;
		v.users = 1;
		e = kv_serve_rate(&x, &v, f.users_whole, &s, err);
	} else {
		e = kv_serve_solve(&x, &v, &s, err);
	}
	if (e)
		return e;
	pred[KV_CAL_TTFT] = s.ttft_ms;
	pred[KV_CAL_TPOT] = s.tpot_ms;
	pred[KV_CAL_LATENCY] = s.latency_ms;
	pred[KV_CAL_TPS] = s.tokens_per_s;
	return 0;
}

static void measured(const struct kv_result *r, double *m)
{
	m[KV_CAL_TTFT] = r->ttft_ms;
	m[KV_CAL_TPOT] = r->osl > 1.5 ? r->tpot_ms : NAN;
	m[KV_CAL_LATENCY] = r->latency_ms;
	m[KV_CAL_TPS] = r->out_tps;
}

/* The sum of squared log residuals at (bw, fl), each run's predictions
 * into pred; *terms counted. */
static int cost(const struct kv_fit_in *in, const struct kv_serve_in *w,
		const struct kv_result *runs, size_t n, double bw, double fl,
		double (*pred)[KV_CAL_N], double *sum, size_t *terms,
		char *err)
{
	*sum = 0;
	*terms = 0;
	for (size_t i = 0; i < n; i++) {
		double m[KV_CAL_N];
		int e = kv_calib_predict(in, w, &runs[i], bw, fl, pred[i], err);
		if (e == KV_ERANGE) { /* the rate unserved at these fractions:
					 a miss of 10x on each measurement */
			measured(&runs[i], m);
			for (int k = 0; k < KV_CAL_N; k++)
				if (!isnan(m[k])) {
					pred[i][k] = NAN;
					*sum += log(10.0) * log(10.0);
					(*terms)++;
				}
			continue;
		}
		if (e)
			return e;
		measured(&runs[i], m);
		for (int k = 0; k < KV_CAL_N; k++) {
			if (isnan(m[k])) {
				pred[i][k] = NAN;
				continue;
			}
			double d = log(pred[i][k] / m[k]);
			*sum += d * d;
			(*terms)++;
		}
	}
	return 0;
}

/* The x in [lo, 0] (a log fraction) that minimises the cost with the
 * other fraction held, by golden section. */
static int section(const struct kv_fit_in *in, const struct kv_serve_in *w,
		   const struct kv_result *runs, size_t n, double *xs,
		   int which, double (*pred)[KV_CAL_N], char *err)
{
	const double g = (sqrt(5.0) - 1) / 2;
	double a = log(KV_CAL_MIN), b = 0, fc, fd;
	double x[2] = {xs[0], xs[1]};
	size_t t;
	int e;
	double c = b - g * (b - a), d = a + g * (b - a);
	x[which] = c;
	if ((e = cost(in, w, runs, n, exp(x[0]), exp(x[1]), pred, &fc, &t,
		      err)))
		return e;
	x[which] = d;
	if ((e = cost(in, w, runs, n, exp(x[0]), exp(x[1]), pred, &fd, &t,
		      err)))
		return e;
	for (int i = 0; i < SECTIONS; i++) {
		if (fc <= fd) {
			b = d;
			d = c;
			fd = fc;
			c = b - g * (b - a);
			x[which] = c;
			e = cost(in, w, runs, n, exp(x[0]), exp(x[1]), pred,
				 &fc, &t, err);
		} else {
			a = c;
			c = d;
			fc = fd;
			d = a + g * (b - a);
			x[which] = d;
			e = cost(in, w, runs, n, exp(x[0]), exp(x[1]), pred,
				 &fd, &t, err);
		}
		if (e)
			return e;
	}
	xs[which] = (a + b) / 2;
	return 0;
}

/* kv_calib_fit's search, in's counts derived */
static int calib_fit(const struct kv_fit_in *in, const struct kv_serve_in *w,
		     const struct kv_result *runs, size_t n,
		     struct kv_calib *out, char *err)
{
	double x[2] = {log(0.5), log(0.5)}, sum;
	int e;
	for (int r = 0; r < ROUNDS; r++) {
		double was[2] = {x[0], x[1]};
		if ((e = section(in, w, runs, n, x, 0, out->pred, err)) ||
		    (e = section(in, w, runs, n, x, 1, out->pred, err)))
			return e;
		if (fabs(x[0] - was[0]) < 1e-3 && fabs(x[1] - was[1]) < 1e-3)
			break;
	}
	out->bw_eff = exp(x[0]);
	out->flops_eff = exp(x[1]);
	if ((e = cost(in, w, runs, n, out->bw_eff, out->flops_eff, out->pred,
		      &sum, &out->terms, err)))
		return e;
	if (!out->terms) {
		snprintf(err, KV_ERRLEN, "%s: the runs measured nothing to fit",
			 in->m->name);
		return KV_EINVAL;
	}
	out->rms = sqrt(sum / (double)out->terms);
	const char *names[2] = {"bandwidth", "FLOP rate"};
	for (int k = 0; k < 2; k++) {
		double v = k ? out->flops_eff : out->bw_eff;
		if (v > 0.995 || v < KV_CAL_MIN * 1.01) {
			snprintf(err, KV_ERRLEN, "%s: the fit does not converge: "
				 "the runs want %s the %s's %s (its fraction "
				 "pinned at %.2f); check the GPU, --tp, the "
				 "engine and the model's formats",
				 in->m->name,
				 v > 0.995 ? "more than" : "under 1% of",
				 in->gpu ? in->gpu : "GPU", names[k], v);
			return KV_EINVAL;
		}
	}
	if (out->rms > log(1.5)) {
		snprintf(err, KV_ERRLEN, "%s: the fit does not converge: it "
			 "still misses the runs by %.0f%% (rms of the log "
			 "residuals %.2f); they do not follow one bandwidth "
			 "and FLOP rate (another GPU, engine or setting?)",
			 in->m->name, (exp(out->rms) - 1) * 100, out->rms);
		return KV_EINVAL;
	}
	return 0;
}

int kv_calib_fit(const struct kv_fit_in *in, const struct kv_serve_in *w,
		 const struct kv_result *runs, size_t n, struct kv_calib *out,
		 char *err)
{
	/* the same model solved at each of the fit's thousands of points */
	struct kv_fit_in x = *in;
	struct kv_params_memo c;
	kv_fit_memo(&x, &c);
	int e = calib_fit(&x, w, runs, n, out, err);
	kv_params_memo_free(&c);
	return e;
}
