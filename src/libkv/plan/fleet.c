/*
 * fleet.c - plans of more than one replica: disaggregated prefill and
 * decode workers and the KV moved between them, replicas of an
 * aggregated engine at a request rate, and the rules a search of the
 * fewest GPUs picks by. Every time is kv_serve_solve()'s for one worker;
 * what is added here is queueing (M/D/1, as kv_serve_rate's), Little's
 * law, the transfer's bytes over a link, and the counts of workers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kv/ep.h"
#include "kv/fleet.h"

uint32_t kv_shape_dp(const struct kv_shape *s)
{
	return s->dp > 1 ? s->dp : 1;
}

uint32_t kv_shape_gpus(const struct kv_shape *s)
{
	return s->tp * s->pp * kv_shape_dp(s);
}

struct kv_shape kv_shape_of(const struct kv_fit_in *in)
{
	return (struct kv_shape){.tp = in->tp, .pp = in->pp,
				 .dp = kv_ep_dp(in), .ep = kv_ep_size(in)};
}

void kv_shape_apply(const struct kv_shape *s, struct kv_fit_in *in)
{
	in->tp = s->tp;
	in->pp = s->pp;
	in->dp = kv_shape_dp(s);
	in->ep = s->ep > 1 ? s->ep : 1;
}

size_t kv_fleet_shapes(bool moe, struct kv_shape *out)
{
	static const uint32_t tps[] = {1, 2, 4, 8};
	size_t n = 0;
	for (size_t i = 0; i < sizeof tps / sizeof *tps; i++) {
		out[n++] = (struct kv_shape){.tp = tps[i], .pp = 1,
					     .dp = 1, .ep = 1};
		if (moe && tps[i] > 1) /* DEP: a group and an expert rank
					  a GPU */
			out[n++] = (struct kv_shape){.tp = 1, .pp = 1,
						     .dp = tps[i],
						     .ep = tps[i]};
	}
	return n;
}

uint64_t kv_fleet_transfer_bytes(uint64_t isl, uint64_t bytes_per_token)
{
	uint64_t b;
	return kv_mul(isl, bytes_per_token, &b) ? UINT64_MAX : b;
}

double kv_fleet_transfer_ms(uint64_t bytes, double gbps)
{
	return gbps > 0 ? (double)bytes / (gbps * 1e9) * 1e3 : NAN;
}

uint32_t kv_fleet_workers(double rate, double each)
{
	if (!(each > 0) || !(rate > 0))
		return 0;
	/* a count within a part in 10^9 of a whole one is that one */
	double n = ceil(rate / each * (1 - 1e-9));
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)(n < 1 ? 1 : n);
}

double kv_fleet_max_load(double s_ms, double wait_ms)
{
	return wait_ms > 0 ? 2 * wait_ms / (s_ms + 2 * wait_ms) : 0;
}

/* Requests a second per GPU of x prefill and y decode workers. */
static double per_gpu(double rp, uint32_t gp, double rd, uint32_t gd,
		      uint32_t x, uint32_t y)
{
	return fmin(x * rp, y * rd) / ((double)x * gp + (double)y * gd);
}

bool kv_fleet_balance(double rp, uint32_t gp, double rd, uint32_t gd,
		      uint32_t max_gpus, uint32_t *x, uint32_t *y)
{
	double best = 0;
	uint64_t bg = UINT64_MAX;
	*x = *y = 0;
	for (uint32_t i = 1; (uint64_t)i * gp + gd <= max_gpus; i++)
		for (uint32_t j = 1;
		     (uint64_t)i * gp + (uint64_t)j * gd <= max_gpus; j++)
			best = fmax(best, per_gpu(rp, gp, rd, gd, i, j));
	/* the fewest GPUs within KV_FLEET_BALANCE of the most (the loops
	 * meet fewer prefill workers first) */
	for (uint32_t i = 1; (uint64_t)i * gp + gd <= max_gpus; i++)
		for (uint32_t j = 1;
		     (uint64_t)i * gp + (uint64_t)j * gd <= max_gpus; j++) {
			uint64_t g = (uint64_t)i * gp + (uint64_t)j * gd;
			if (g < bg && per_gpu(rp, gp, rd, gd, i, j) >=
					      best * (1 - KV_FLEET_BALANCE)) {
				bg = g;
				*x = i;
				*y = j;
			}
		}
	return *x > 0;
}

/* in at context ctx, solved: the users that fit. */
static int fit_at(const struct kv_fit_in *in, uint64_t ctx, struct kv_fit *f,
		  char *err)
{
	struct kv_fit_in x = *in;
	x.ctx = ctx;
	x.users = 0;
	return kv_fit_solve(&x, f, err);
}

int kv_fleet_prefill(const struct kv_fit_in *in, const struct kv_serve_in *w,
		     struct kv_prefill *out, char *err)
{
	struct kv_fit_in x = *in;
	struct kv_serve_in v = *w;
	struct kv_serve s;
	struct kv_fit f;
	int e;
	*out = (struct kv_prefill){.shape = kv_shape_of(in)};
	/* it keeps a prompt and its first token until sent */
	x.ctx = w->isl + 1;
	if ((e = fit_at(&x, x.ctx, &f, err)))
		return e;
	if (!f.users_whole) {
		snprintf(err, KV_ERRLEN, "%s: a prefill worker of tp %u "
			 "holds no prompt of %llu tokens beside its weights",
			 in->m->name, in->tp, (unsigned long long)w->isl);
		return KV_ERANGE;
	}
	uint64_t b = f.batched_tokens ? f.batched_tokens / w->isl : 1;
	b = b < 1 ? 1 : b > f.users_whole ? f.users_whole : b;
	/* b prompts of one output token each, in a closed loop: the steps
	 * of one batch, the wait for a step running aside */
	v.osl = 1;
	v.users = b;
	v.arrivals = KV_ARRIVE_STEADY;
	v.cached = 0;
	v.load_ms = 0;
	if ((e = kv_serve_solve(&x, &v, &s, err)))
		return e;
	out->batch = b;
	out->batch_ms = s.latency_ms - s.wait_ms;
	/* every group its own prompts (ep.h) */
	out->rps = (double)b * kv_ep_dp(in) / out->batch_ms * 1e3;
	out->one_ms = out->batch_ms;
	out->source = s.source;
	if (b > 1) { /* and one prompt alone */
		v.users = 1;
		if ((e = kv_serve_solve(&x, &v, &s, err)))
			return e;
		out->one_ms = s.latency_ms;
	}
	return 0;
}

/* A decode step of n users of w on in, ms. */
static int step_ms(const struct kv_fit_in *in, const struct kv_serve_in *w,
		   uint64_t n, double *ms, char *err)
{
	struct kv_serve_in v = *w;
	struct kv_serve s;
	v.users = n;
	v.arrivals = KV_ARRIVE_STEADY;
	v.cached = 0;
	v.load_ms = 0;
	int e = kv_serve_solve(in, &v, &s, err);
	*ms = s.decode.ms;
	return e;
}

/* A request's decode steps: osl - 1, the first token being the prefill
 * worker's (one, where osl is 1). */
static double decode_steps(const struct kv_serve_in *w)
{
	return w->osl > 1 ? (double)(w->osl - 1) : 1;
}

int kv_fleet_decode(const struct kv_fit_in *in, const struct kv_serve_in *w,
		    double max_tpot_ms, struct kv_decode *out, char *err)
{
	struct kv_fit_in x = *in;
	struct kv_fit f;
	double ms;
	int e;
	uint32_t dp = kv_ep_dp(in); /* the groups, each its own users */
	*out = (struct kv_decode){.shape = kv_shape_of(in)};
	if (x.ctx < w->isl + w->osl)
		x.ctx = w->isl + w->osl;
	if ((e = fit_at(&x, x.ctx, &f, err)))
		return e;
	out->bytes_per_token = f.bytes_per_token;
	out->users_fit = f.users_whole * dp;
	if (!f.users_whole) {
		snprintf(err, KV_ERRLEN, "%s: a decode worker of tp %u has "
			 "no room for one user of %llu tokens",
			 in->m->name, in->tp, (unsigned long long)x.ctx);
		return KV_ERANGE;
	}
	uint64_t lo = 1, hi = f.users_whole; /* the most within the target */
	if ((e = step_ms(&x, w, 1, &out->step_ms, err)))
		return e;
	if (max_tpot_ms > 0 && out->step_ms > max_tpot_ms)
		return 0; /* one user misses: users 0 */
	if (!(max_tpot_ms > 0))
		lo = hi;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;
		if ((e = step_ms(&x, w, mid, &ms, err)))
			return e;
		if (ms <= max_tpot_ms)
			lo = mid;
		else
			hi = mid - 1;
	}
	if (lo > 1 && (e = step_ms(&x, w, lo, &out->step_ms, err)))
		return e;
	out->users = lo * dp;
	out->rps = (double)out->users / (decode_steps(w) * out->step_ms) * 1e3;
	return 0;
}

/* kv_fleet_decode_load for one group: rate its share, users_fit its. */
static int decode_load(const struct kv_fit_in *in,
		       const struct kv_serve_in *w, double rate,
		       uint64_t users_fit, double *n, double *tpot_ms,
		       char *err)
{
	const double k = rate / 1e3 * decode_steps(w); /* n = k step(n) */
	double a, b;
	int e;
	if ((e = step_ms(in, w, users_fit, &b, err)))
		return e;
	/* (a rate of exactly the users' own, as a balanced split asks, is
	 * kept up with, whatever the rounding) */
	if (k * b > (double)users_fit * (1 + 1e-9)) {
		snprintf(err, KV_ERRLEN, "%s: %g requests a second cannot be "
			 "decoded: the %llu users a decode worker holds finish "
			 "at most %.3g a second",
			 in->m->name, rate * kv_ep_dp(in),
			 (unsigned long long)users_fit * kv_ep_dp(in),
			 (double)users_fit * kv_ep_dp(in) /
				 (decode_steps(w) * b) * 1e3);
		return KV_ERANGE;
	}
	uint64_t lo = 1, hi = users_fit; /* the least m that keeps up */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		double ms;
		if ((e = step_ms(in, w, mid, &ms, err)))
			return e;
		if (k * ms <= (double)mid * (1 + 1e-9)) {
			hi = mid;
			b = ms;
		} else {
			lo = mid + 1;
		}
	}
	if (hi == 1) { /* below one user at a time */
		if ((e = step_ms(in, w, 1, &b, err)))
			return e;
		*n = k * b;
		*tpot_ms = b;
		return 0;
	}
	if ((e = step_ms(in, w, hi, &b, err)) ||
	    (e = step_ms(in, w, hi - 1, &a, err)))
		return e;
	/* g(m) = m - k step(m): behind at hi - 1, keeping up at hi */
	double ga = (double)(hi - 1) - k * a, gb = (double)hi - k * b;
	double t = gb > ga ? -ga / (gb - ga) : 1;
	*n = (double)(hi - 1) + t;
	*tpot_ms = a + t * (b - a);
	return 0;
}

int kv_fleet_decode_load(const struct kv_fit_in *in,
			 const struct kv_serve_in *w, double rate,
			 uint64_t users_fit, double *n, double *tpot_ms,
			 char *err)
{
	uint32_t dp = kv_ep_dp(in);
	int e = decode_load(in, w, rate / dp, users_fit / dp, n, tpot_ms,
			    err);
	if (!e)
		*n *= dp;
	return e;
}

/* The rate a plan is at: the given one, with its totals. */
static void totals(struct kv_fleet *out, const struct kv_serve_in *w)
{
	out->tokens_per_s = out->rate * (double)w->osl;
	out->tokens_per_s_gpu = out->gpus ? out->tokens_per_s / out->gpus : 0;
}

static bool within(const struct kv_fleet *p, const struct kv_fleet_goal *g)
{
	return p->served && (!(g->max_ttft > 0) || p->ttft_ms <= g->max_ttft) &&
	       (!(g->max_tpot > 0) || p->tpot_ms <= g->max_tpot);
}

/* x and y where none are given: with a rate the fewest of each that
 * serve it (the prefill workers at the load their ttft allows), else
 * the balanced split. False with why where none will do. */
static bool counts(const struct kv_prefill *p, const struct kv_decode *d,
		   const struct kv_fleet_goal *g, double fixed_ms,
		   const char *name, struct kv_fleet *out)
{
	uint32_t gp = kv_shape_gpus(&p->shape), gd = kv_shape_gpus(&d->shape);
	double rho = 1;
	if (g->max_ttft > 0) { /* what is left of it for the queue */
		rho = g->rate > 0 ? kv_fleet_max_load(1e3 / p->rps,
						      g->max_ttft - fixed_ms)
				  : fixed_ms <= g->max_ttft;
		if (!(rho > 0)) {
			snprintf(out->why, KV_ERRLEN, "%s: a prompt's prefill "
				 "(%.1f ms) and its KV's transfer (%.1f ms) "
				 "alone exceed --max-ttft %g",
				 name, p->one_ms, out->transfer_ms,
				 g->max_ttft);
			return false;
		}
	}
	if (!d->users) {
		snprintf(out->why, KV_ERRLEN, "%s: one user's decode step "
			 "(%.2f ms) exceeds --max-tpot %g",
			 name, d->step_ms, g->max_tpot);
		return false;
	}
	if (!(g->rate > 0)) {
		if (!kv_fleet_balance(p->rps * rho, gp, d->rps, gd,
				      g->max_gpus, &out->x, &out->y)) {
			snprintf(out->why, KV_ERRLEN, "%s: one prefill and one "
				 "decode worker take %u GPUs, more than "
				 "--max-gpus %u",
				 name, gp + gd, g->max_gpus);
			return false;
		}
		return true;
	}
	out->x = kv_fleet_workers(g->rate, p->rps * rho);
	if (g->rate / (out->x * p->rps) >= 1) /* the queue would not end */
		out->x++;
	out->y = kv_fleet_workers(g->rate, d->rps);
	return true;
}

int kv_fleet_disagg(const struct kv_fit_in *dec, const struct kv_serve_in *w,
		    const struct kv_prefill *p, const struct kv_decode *d,
		    uint32_t x, uint32_t y, const struct kv_fleet_goal *g,
		    struct kv_fleet *out, char *err)
{
	const char *name = dec->m->name;
	struct kv_fit_in din = *dec;
	*out = (struct kv_fleet){.mode = KV_FLEET_DISAGG, .x = x, .y = y,
				 .p = *p, .d = *d, .open = g->rate > 0,
				 .link_gbps = g->link_gbps,
				 .source = p->source};
	if (!(g->link_gbps > 0)) {
		snprintf(err, KV_ERRLEN, "%s: the KV's transfer from prefill "
			 "to decode needs the link between them: give "
			 "--kv-link",
			 name);
		return KV_EINVAL;
	}
	out->transfer_bytes = kv_fleet_transfer_bytes(w->isl,
						      d->bytes_per_token);
	out->transfer_ms = kv_fleet_transfer_ms(out->transfer_bytes,
						g->link_gbps);
	double fixed = p->one_ms + out->transfer_ms;
	if (!x || !y) {
		if (!counts(p, d, g, fixed, name, out))
			return 0;
	}
	out->gpus = out->x * kv_shape_gpus(&p->shape) +
		    out->y * kv_shape_gpus(&d->shape);
	out->rate = g->rate > 0 ? g->rate
				: fmin(out->x * p->rps, out->y * d->rps);
	totals(out, w);
	if (din.ctx < w->isl + w->osl)
		din.ctx = w->isl + w->osl;
	int e = kv_fleet_decode_load(&din, w, out->rate / out->y, d->users_fit,
				     &out->concurrency, &out->tpot_ms,
				     out->why);
	if (e == KV_ERANGE)
		return 0;
	if (e) {
		memcpy(err, out->why, KV_ERRLEN);
		return e;
	}
	out->load = out->rate / (out->x * p->rps);
	if (out->open && out->load >= 1) {
		snprintf(out->why, KV_ERRLEN, "%s: %g requests a second "
			 "cannot be prefilled: %u prefill worker%s take at "
			 "most %.3g a second",
			 name, out->rate, out->x, out->x == 1 ? "" : "s",
			 out->x * p->rps);
		return 0;
	}
	out->queue_ms = out->open ? kv_serve_queue_ms(out->load, 1e3 / p->rps)
				  : 0;
	out->ttft_ms = fixed + out->queue_ms;
	out->served = true;
	out->meets = within(out, g);
	return 0;
}

/* replicas r of in at g's rate (each its share, and each of its dp
 * groups theirs), into out; users_fit a group's. */
static int agg_at(const struct kv_fit_in *in, const struct kv_serve_in *w,
		  uint64_t users_fit, uint32_t r, const struct kv_fleet_goal *g,
		  struct kv_fleet *out, char *err)
{
	struct kv_serve_in v = *w;
	struct kv_serve s;
	uint32_t dp = kv_ep_dp(in);
	int e;
	out->replicas = r;
	out->gpus = r * kv_shape_gpus(&out->shape);
	out->served = out->meets = false;
	out->why[0] = '\0';
	if (g->rate > 0) {
		v.rate = g->rate / r / dp;
		v.arrivals = KV_ARRIVE_RATE;
		e = kv_serve_rate(in, &v, users_fit, &s, out->why);
		if (e == KV_ERANGE)
			return 0;
		if (e) {
			memcpy(err, out->why, KV_ERRLEN);
			return e;
		}
		out->rate = g->rate;
		out->concurrency = s.concurrency * dp;
		out->queue_ms = s.queue_ms;
	} else {
		uint64_t best = users_fit;
		v.arrivals = KV_ARRIVE_STEADY;
		if ((g->max_ttft > 0 || g->max_tpot > 0) &&
		    (e = kv_serve_best(in, &v, users_fit, g->max_ttft,
				       g->max_tpot, &best, &s, err)))
			return e;
		v.users = best ? best : 1;
		if ((e = kv_serve_solve(in, &v, &s, err)))
			return e;
		out->rate = (double)r * dp * (double)v.users / s.latency_ms *
			    1e3;
		out->concurrency = (double)v.users * dp;
	}
	out->load = NAN;
	out->source = s.source;
	out->ttft_ms = s.ttft_ms;
	out->tpot_ms = s.tpot_ms;
	totals(out, w);
	out->served = true;
	out->meets = within(out, g);
	return 0;
}

int kv_fleet_agg(const struct kv_fit_in *in, const struct kv_serve_in *w,
		 uint32_t replicas, const struct kv_fleet_goal *g,
		 struct kv_fleet *out, char *err)
{
	struct kv_fit_in x = *in;
	struct kv_fit f;
	int e;
	*out = (struct kv_fleet){.mode = KV_FLEET_AGG, .open = g->rate > 0,
				 .shape = kv_shape_of(in)};
	if (x.ctx < w->isl + w->osl)
		x.ctx = w->isl + w->osl;
	if ((e = fit_at(&x, x.ctx, &f, err)))
		return e;
	if (!f.users_whole) {
		snprintf(out->why, KV_ERRLEN, "%s: no user of %llu tokens fits "
			 "a replica of tp %u", in->m->name,
			 (unsigned long long)x.ctx, in->tp);
		out->replicas = replicas ? replicas : 1;
		out->gpus = out->replicas * kv_shape_gpus(&out->shape);
		return 0;
	}
	if (replicas || !(g->rate > 0))
		return agg_at(&x, w, f.users_whole, replicas ? replicas : 1, g,
			      out, err);
	/* the fewest replicas within the targets: more replicas, each a
	 * smaller share of the rate, are never slower */
	uint32_t lo = 1, hi = g->max_gpus / kv_shape_gpus(&out->shape);
	if (!hi)
		hi = 1;
	if ((e = agg_at(&x, w, f.users_whole, hi, g, out, err)))
		return e;
	if (!out->meets)
		return 0; /* the most replicas, to say how near */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if ((e = agg_at(&x, w, f.users_whole, mid, g, out, err)))
			return e;
		if (out->meets)
			hi = mid;
		else
			lo = mid + 1;
	}
	return agg_at(&x, w, f.users_whole, lo, g, out, err);
}

bool kv_fleet_dominates(const struct kv_fleet *a, const struct kv_fleet *b)
{
	if (a->gpus == b->gpus && a->tpot_ms == b->tpot_ms)
		return a->ttft_ms < b->ttft_ms; /* one decode worker, two
						   prefill shapes */
	return a->gpus <= b->gpus && a->tpot_ms <= b->tpot_ms;
}
