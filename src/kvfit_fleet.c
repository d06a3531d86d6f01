/*
 * kvfit_fleet.c - kvfit's plans of more than one replica (fleet.h): the
 * options of --disagg and --solve gpus and what they say together, the
 * disaggregated plan beside the aggregated one on as many GPUs, and the
 * search of the fewest GPUs for a request rate with its Pareto rows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvfit.h"
#include "kv/ep.h"
#include "kv/fleet.h"

#define DEFAULT_MAX_GPUS 64

/* The columns; those of groups and expert ranks (EP_COLS) only where a
 * plan has either, each after its tp. */
static const char *const cols[] = {
	"model", "gpu", "engine", "kv_dtype", "isl", "osl", "mode", "gpus",
	"replicas", "tp", "dp", "ep", "prefill_workers", "prefill_tp",
	"prefill_dp", "prefill_ep", "decode_workers", "decode_tp",
	"decode_dp", "decode_ep", "requests_per_s", "prefill_batch",
	"prefill_requests_per_s", "decode_users", "decode_requests_per_s",
	"kv_transfer_bytes", "kv_transfer_ms", "prefill_load", "concurrency",
	"queue_ms", "ttft_ms", "tpot_ms", "out_tokens_per_s",
	"out_tokens_per_s_gpu", "meets_target", "time_source", "best"};
#define NCOLS (sizeof cols / sizeof *cols)
static const char *const brief[] = {
	"model", "mode", "gpus", "replicas", "tp", "dp", "ep",
	"prefill_workers", "prefill_tp", "prefill_dp", "prefill_ep",
	"decode_workers", "decode_tp", "decode_dp", "decode_ep",
	"requests_per_s", "kv_transfer_ms", "ttft_ms", "tpot_ms",
	"out_tokens_per_s_gpu", "meets_target", "best"};

/* Whether column `name` is one of the groups' and expert ranks'. */
static bool ep_col(const char *name)
{
	size_t n = strlen(name);
	return n >= 2 && (!strcmp(name + n - 2, "dp") ||
			  !strcmp(name + n - 2, "ep"));
}

/* names[0..n) less the groups' and expert ranks' columns where ep is
 * off, into out; returns how many. */
static size_t pick(const char *const *names, size_t n, bool ep,
		   const char **out)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (ep || !ep_col(names[i]))
			out[k++] = names[i];
	return k;
}

int kvfit_opt_fleet(int c, const char *s, struct args *a)
{
	const char *opt = cli_opt_as();
	if (c != OPT_DISAGG && c != OPT_MAX_GPUS && c != OPT_PREFILL_TP &&
	    c != OPT_DECODE_TP && c != OPT_PREFILL_WORKERS &&
	    c != OPT_DECODE_WORKERS && c != OPT_KV_LINK)
		return CLI_NOT_MINE;
	if (c == OPT_DISAGG) {
		a->disagg = true;
		return 0;
	}
	if (c == OPT_MAX_GPUS)
		return cli_u64(opt, s, 1, 1u << 20, &a->max_gpus);
	if (!a->fleet_opt && c != OPT_KV_LINK)
		a->fleet_opt = c == OPT_PREFILL_TP	    ? "--prefill-tp"
			       : c == OPT_DECODE_TP	    ? "--decode-tp"
			       : c == OPT_PREFILL_WORKERS ? "--prefill-workers"
							  : "--decode-workers";
	switch (c) {
	case OPT_PREFILL_TP:
		return cli_u64(opt, s, 1, KV_MAX_RANKS, &a->prefill_tp);
	case OPT_DECODE_TP:
		return cli_u64(opt, s, 1, KV_MAX_RANKS, &a->decode_tp);
	case OPT_PREFILL_WORKERS:
		return cli_u64(opt, s, 1, 1u << 16, &a->prefill_workers);
	case OPT_DECODE_WORKERS:
		return cli_u64(opt, s, 1, 1u << 16, &a->decode_workers);
	default:
		return cli_double("--kv-link", s, 1e-3, 1e9, &a->kv_link);
	}
}

/* The option of the fleet's that another refuses, as "--disagg". */
static const char *asked(const struct args *a)
{
	return a->o.solve == KV_PLAN_GPUS ? "--solve gpus" : "--disagg";
}

/* What one-replica options a fleet plan does not model. */
static int refused(const struct args *a)
{
	const struct kv_plan_opts *o = &a->o;
	if (kv_plan_ep(o) && a->decode_tp)
		return cli_usage("--decode-tp: with --ep/--dp the decode "
				 "workers are --tp's groups and expert ranks; "
				 "give --tp");
	const char *what = o->nusers ? "--users"
			   : a->arrivals_given ? "--arrivals"
			   : o->pp > 1 ? "--pp"
			   : kv_spec_on(&o->spec) ? "--spec-method"
			   : o->split ? a->split_opt
			   : o->offload ? "--kv-offload and --prefix-hit"
			   : a->launch ? "-o ENGINE (one replica's command)"
			   : o->solve == KV_PLAN_GPUS && o->tp_given ? "--tp"
								       : NULL;
	if (!what)
		return 0;
	if (!strcmp(what, "--users") || !strcmp(what, "--tp"))
		return cli_usage("%s: finds the %s itself; give no %s",
				 asked(a), what + 2, what);
	return cli_usage("%s: %s is not modelled beside it; give one or "
			 "the other",
			 asked(a), what);
}

int kvfit_check_fleet(const struct args *a)
{
	const struct kv_plan_opts *o = &a->o;
	bool gpus = o->solve == KV_PLAN_GPUS;
	if (gpus && a->fleet_opt)
		return cli_usage("%s: --solve gpus finds the workers' shapes "
				 "and counts; give no %s",
				 a->fleet_opt, a->fleet_opt);
	if (a->fleet_opt && !a->disagg)
		return cli_usage("%s: a disaggregated worker's; give --disagg",
				 a->fleet_opt);
	if ((a->max_gpus || a->kv_link > 0) && !a->disagg && !gpus)
		return cli_usage("%s: a fleet's (%s); give --disagg or "
				 "--solve gpus",
				 a->max_gpus ? "--max-gpus" : "--kv-link",
				 a->max_gpus ? "the most GPUs it may take"
					     : "the link between its workers");
	if (!a->disagg && !gpus)
		return 0;
	if (gpus && !a->rate_given)
		return cli_usage("--solve gpus: needs --request-rate QPS, the "
				 "rate to serve");
	if (!o->work.isl)
		return cli_usage("%s: needs --isl and --osl, the requests it "
				 "plans for",
				 asked(a));
	if (!a->prefill_workers != !a->decode_workers)
		return cli_usage("%s: give --prefill-workers and "
				 "--decode-workers together, or neither",
				 a->prefill_workers ? "--prefill-workers"
						    : "--decode-workers");
	return refused(a);
}

/* A row's input as a worker of shape s runs it. */
static struct kv_fit_in shaped(const struct kv_fit_in *in,
			       struct kv_shape s)
{
	struct kv_fit_in x = *in;
	kv_shape_apply(&s, &x);
	return x;
}

/* ... of tp GPUs, one stage, no groups nor expert ranks. */
static struct kv_fit_in at_tp(const struct kv_fit_in *in, uint64_t tp)
{
	return shaped(in, (struct kv_shape){.tp = (uint32_t)tp, .pp = 1,
					    .dp = 1, .ep = 1});
}

/* Whether a plan's workers have groups or expert ranks. */
static bool has_ep(const struct kv_fleet *p)
{
	const struct kv_shape *s[] = {&p->shape, &p->p.shape, &p->d.shape};
	for (size_t i = 0; i < 3; i++)
		if (s[i]->dp > 1 || s[i]->ep > 1)
			return true;
	return false;
}

static void put_opt_u(struct cli_table *t, bool on, uint64_t v)
{
	if (on)
		cli_put_u64(t, v);
	else
		cli_put_empty(t);
}

/* A shape's groups and expert ranks' cells, where shown. */
static void put_ep(struct cli_table *t, bool ep, bool on,
		   const struct kv_shape *s)
{
	if (!ep)
		return;
	put_opt_u(t, on, kv_shape_dp(s));
	put_opt_u(t, on, s->ep > 1 ? s->ep : 1);
}

static void put_opt_f(struct cli_table *t, bool on, double v, int prec)
{
	cli_put_f(t, on ? v : NAN, prec);
}

/* The rows, kept until every plan is made: bad input prints none. */
struct rows {
	struct row {
		struct kv_plan_row r;
		struct kv_fleet p;
		const char *best;
	} *v;
	size_t n, cap;
};

static int keep(struct rows *o, const struct kv_plan_row *r,
		const struct kv_fleet *p, const char *best)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 8;
		struct row *v = realloc(o->v, cap * sizeof *v);
		if (!v)
			return cli_kv_error(KV_ENOMEM, "");
		o->v = v;
		o->cap = cap;
	}
	o->v[o->n++] = (struct row){*r, *p, best};
	return 0;
}

/* One plan's row. */
static void put_plan(struct cli_table *t, const struct args *a,
		     const struct kv_plan_row *r, const char *gpu_name,
		     const struct kv_fleet *p, const char *best, bool ep)
{
	bool dis = p->mode == KV_FLEET_DISAGG, ok = p->served;
	static const enum kv_prow_col same[] = {
		KV_PROW_MODEL, KV_PROW_GPU, KV_PROW_ENGINE, KV_PROW_KV_DTYPE};
	struct kv_cell cell;
	for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
		kv_prow_cell(r, &a->o, gpu_name, same[i], &cell);
		cli_put_cell(t, &cell);
	}
	cli_put_u64(t, a->o.work.isl);
	cli_put_u64(t, a->o.work.osl);
	cli_put_str(t, dis ? "disagg" : "agg");
	cli_put_u64(t, p->gpus);
	put_opt_u(t, !dis, p->replicas);
	put_opt_u(t, !dis, p->shape.tp);
	put_ep(t, ep, !dis, &p->shape);
	put_opt_u(t, dis, p->x);
	put_opt_u(t, dis, p->p.shape.tp);
	put_ep(t, ep, dis, &p->p.shape);
	put_opt_u(t, dis, p->y);
	put_opt_u(t, dis, p->d.shape.tp);
	put_ep(t, ep, dis, &p->d.shape);
	put_opt_f(t, ok, p->rate, 3);
	put_opt_u(t, dis, p->p.batch);
	put_opt_f(t, dis, p->p.rps, 3);
	put_opt_u(t, dis, p->d.users);
	put_opt_f(t, dis, p->d.rps, 3);
	if (dis)
		cli_put_bytes(t, p->transfer_bytes);
	else
		cli_put_empty(t);
	put_opt_f(t, dis, p->transfer_ms, 3);
	put_opt_f(t, dis && ok, p->load, 3);
	put_opt_f(t, ok, p->concurrency, 2);
	put_opt_f(t, ok && p->open, p->queue_ms, 3);
	put_opt_f(t, ok, p->ttft_ms, 3);
	put_opt_f(t, ok, p->tpot_ms, 3);
	put_opt_f(t, ok, p->tokens_per_s, 1);
	put_opt_f(t, ok, p->tokens_per_s_gpu, 1);
	if (a->o.max_ttft > 0 || a->o.max_tpot > 0)
		cli_put_str(t, p->meets ? "yes" : "no");
	else
		cli_put_empty(t);
	cli_put_str(t, p->source ? p->source : "");
	if (a->o.solve == KV_PLAN_GPUS)
		cli_put_str(t, best);
	cli_row_end(t);
}

/* A shape, as people say it: "tp 8", "dp 8 ep 8", "tp 2 dp 4 ep 8". */
static const char *shape_name(const struct kv_shape *s, char *buf, size_t n)
{
	if (kv_shape_dp(s) == 1 && s->ep <= 1)
		snprintf(buf, n, "tp %u", s->tp);
	else if (s->tp == 1)
		snprintf(buf, n, "dp %u ep %u", kv_shape_dp(s),
			 s->ep > 1 ? s->ep : 1);
	else
		snprintf(buf, n, "tp %u dp %u ep %u", s->tp, kv_shape_dp(s),
			 s->ep > 1 ? s->ep : 1);
	return buf;
}

/* The plan, as people say it: "2 prefill (tp 4) + 1 decode (dp 8 ep 8)
 * workers", "8 replicas of tp 2". */
static const char *shape_text(const struct kv_fleet *p, char *buf, size_t n)
{
	char ps[40], ds[40];
	if (p->mode == KV_FLEET_DISAGG)
		snprintf(buf, n, "%u prefill (%s) + %u decode (%s) workers",
			 p->x, shape_name(&p->p.shape, ps, sizeof ps), p->y,
			 shape_name(&p->d.shape, ds, sizeof ds));
	else
		snprintf(buf, n, "%u replica%s of %s", p->replicas,
			 p->replicas == 1 ? "" : "s",
			 shape_name(&p->shape, ps, sizeof ps));
	return buf;
}

/* The goal the options set. */
static struct kv_fleet_goal goal_of(const struct args *a)
{
	return (struct kv_fleet_goal){
		.rate = a->rate_given ? a->o.work.rate : 0,
		.max_ttft = a->o.max_ttft,
		.max_tpot = a->o.max_tpot,
		.link_gbps = a->kv_link > 0 ? a->kv_link : a->o.work.link_gbps,
		.max_gpus = a->max_gpus ? (uint32_t)a->max_gpus
					: DEFAULT_MAX_GPUS};
}

/* The workload each worker is timed at: the options', the images'
 * tokens in the prompt. */
static struct kv_serve_in work_of(const struct args *a,
				  const struct kv_plan_row *r)
{
	struct kv_serve_in w = a->o.work;
	w.isl += kv_plan_mm_tokens(&a->o, r->in.m);
	w.arrivals = KV_ARRIVE_STEADY;
	return w;
}

/* --disagg on one row: the plan and the aggregated one on as many
 * GPUs. Returns 0, 1 (said: the plan does not keep up or misses a
 * target) or 2 (said). */
static int disagg_row(struct rows *out, const struct args *a,
		      const struct kv_plan_row *r)
{
	struct kv_fleet_goal g = goal_of(a);
	struct kv_serve_in w = work_of(a, r);
	uint64_t tp = a->o.tp;
	bool ep = kv_plan_ep(&a->o); /* the decode workers' and replicas' */
	struct kv_shape rs = kv_shape_of(&r->in);
	/* the prefill workers in tp: --prefill-tp, else --tp, or with
	 * --ep/--dp as many GPUs as a decode worker's */
	struct kv_fit_in pin = at_tp(&r->in, a->prefill_tp ? a->prefill_tp
					     : ep	    ? kv_shape_gpus(&rs)
							    : tp);
	struct kv_fit_in din = ep ? r->in
				  : at_tp(&r->in, a->decode_tp ? a->decode_tp
							       : tp);
	struct kv_prefill p;
	struct kv_decode d;
	struct kv_fleet plan, agg;
	char err[KV_ERRLEN], s[96], tg[96];
	int e;
	if ((e = kv_fleet_prefill(&pin, &w, &p, err)) ||
	    (e = kv_fleet_decode(&din, &w, a->o.max_tpot, &d, err)) ||
	    (e = kv_fleet_disagg(&din, &w, &p, &d,
				 (uint32_t)a->prefill_workers,
				 (uint32_t)a->decode_workers, &g, &plan, err)))
		return cli_kv_error(e, err);
	if (!plan.gpus) { /* no split will do */
		cli_error("%s", plan.why);
		return CLI_FAIL;
	}
	/* the aggregated engine on as many GPUs, at the decode worker's
	 * shape (or --tp's) */
	struct kv_fit_in ain = ep ? r->in
				  : at_tp(&r->in, a->o.tp_given ? tp : din.tp);
	struct kv_shape as = kv_shape_of(&ain);
	uint32_t reps = plan.gpus / kv_shape_gpus(&as)
				? plan.gpus / kv_shape_gpus(&as)
				: 1;
	if ((e = kv_fleet_agg(&ain, &w, reps, &g, &agg, err)))
		return cli_kv_error(e, err);
	if ((e = keep(out, r, &plan, "")) || (e = keep(out, r, &agg, "")))
		return e;
	if (!agg.served)
		cli_warn("aggregated, %s: %s", shape_text(&agg, s, sizeof s),
			 agg.why);
	if (!plan.served) {
		cli_error("%s", plan.why);
		return CLI_FAIL;
	}
	if (!plan.meets) {
		kvfit_targets(&a->o, tg, sizeof tg);
		cli_error("%s: %s miss%s%s: time to first token %.1f ms, "
			  "%.2f ms per output token",
			  r->in.m->name, shape_text(&plan, s, sizeof s),
			  tg[0] ? " " : "", tg, plan.ttft_ms, plan.tpot_ms);
		return CLI_FAIL;
	}
	return 0;
}

/* Every shape's plan at the rate, into ps (room for the shapes' agg and
 * disagg plans); returns how many. Shapes whose tp splits no head
 * evenly, or that hold no prompt or user, are left out. */
static size_t search(const struct args *a, const struct kv_plan_row *r,
		     const struct kv_serve_in *w,
		     const struct kv_fleet_goal *g, struct kv_fleet *ps,
		     int *status)
{
	struct kv_shape sh[KV_FLEET_SHAPES];
	struct kv_prefill p[KV_FLEET_SHAPES];
	struct kv_decode d[KV_FLEET_SHAPES];
	bool pok[KV_FLEET_SHAPES], dok[KV_FLEET_SHAPES];
	size_t ns = kv_fleet_shapes(r->in.m->n_experts > 0, sh), n = 0;
	uint32_t max_tp = kv_plan_max_tp(r->in.m);
	char err[KV_ERRLEN];
	int e;
	*status = 0;
	for (size_t i = 0; i < ns; i++) {
		struct kv_fit_in in = shaped(&r->in, sh[i]);
		pok[i] = dok[i] = false;
		if (sh[i].tp > max_tp)
			continue;
		if (kv_ep_on(&in) && (kv_ep_refuses(&in, err) ||
				      kv_ep_check(&in, err)))
			continue; /* the engine or the experts take no DEP */
		e = kv_fleet_prefill(&in, w, &p[i], err);
		if (e == KV_EINVAL) /* the heads do not split so */
			continue;
		if (e && e != KV_ERANGE) {
			*status = cli_kv_error(e, err);
			return 0;
		}
		pok[i] = !e;
		e = kv_fleet_decode(&in, w, a->o.max_tpot, &d[i], err);
		if (e && e != KV_ERANGE) {
			*status = cli_kv_error(e, err);
			return 0;
		}
		dok[i] = !e;
		if (!a->disagg && dok[i]) {
			if ((e = kv_fleet_agg(&in, w, 0, g, &ps[n], err))) {
				*status = cli_kv_error(e, err);
				return 0;
			}
			n++;
		}
	}
	for (size_t i = 0; i < ns; i++)
		for (size_t j = 0; j < ns; j++) {
			if (!pok[i] || !dok[j])
				continue;
			struct kv_fit_in din = shaped(&r->in, sh[j]);
			if ((e = kv_fleet_disagg(&din, w, &p[i], &d[j], 0, 0, g,
						 &ps[n], err))) {
				*status = cli_kv_error(e, err);
				return 0;
			}
			n++;
		}
	return n;
}

static int by_gpus(const void *x, const void *y)
{
	const struct kv_fleet *a = x, *b = y;
	if (a->gpus != b->gpus)
		return a->gpus < b->gpus ? -1 : 1;
	return a->tpot_ms < b->tpot_ms ? -1 : a->tpot_ms > b->tpot_ms;
}

/* What was closest where no plan within --max-gpus meets the targets:
 * the fewest GPUs of those that meet them beyond it, else the plan
 * nearest the tpot target of those that keep up. */
static void closest(const struct args *a, const struct kv_plan_row *r,
		    const struct kv_fleet *ps, size_t n,
		    const struct kv_fleet_goal *g)
{
	const struct kv_fleet *c = NULL;
	char s[96], tg[96], why[160];
	for (size_t i = 0; i < n; i++)
		if (ps[i].meets && (!c || by_gpus(&ps[i], c) < 0))
			c = &ps[i];
	if (c) {
		snprintf(why, sizeof why, "%s need %u GPUs",
			 shape_text(c, s, sizeof s), c->gpus);
	} else {
		for (size_t i = 0; i < n; i++)
			if (ps[i].served &&
			    (!c || ps[i].tpot_ms + ps[i].ttft_ms / 1e3 <
					   c->tpot_ms + c->ttft_ms / 1e3))
				c = &ps[i];
		if (c)
			snprintf(why, sizeof why, "%s on %u GPUs: time to "
				 "first token %.1f ms, %.2f ms per output "
				 "token",
				 shape_text(c, s, sizeof s), c->gpus,
				 c->ttft_ms, c->tpot_ms);
		else
			snprintf(why, sizeof why, "none keeps up: %.100s",
				 n ? ps[0].why : "no shape holds a user");
	}
	kvfit_targets(&a->o, tg, sizeof tg);
	cli_error("%s: no plan within --max-gpus %u serves %g requests a "
		  "second%s%s; closest: %s",
		  r->in.m->name, g->max_gpus, g->rate, tg[0] ? " within " : "",
		  tg, why);
}

/* --solve gpus on one row: the Pareto rows of tokens a second per GPU
 * against tpot among the plans within --max-gpus and the targets, the
 * fewest GPUs first. Returns 0, 1 (said: none) or 2 (said). */
static int gpus_row(struct rows *out, const struct args *a,
		    const struct kv_plan_row *r)
{
	struct kv_fleet ps[KV_FLEET_SHAPES * (KV_FLEET_SHAPES + 1)];
	struct kv_fleet ok[sizeof ps / sizeof *ps];
	struct kv_fleet_goal g = goal_of(a);
	struct kv_serve_in w = work_of(a, r);
	int status;
	size_t n = search(a, r, &w, &g, ps, &status), k = 0, m = 0;
	if (status)
		return status;
	for (size_t i = 0; i < n; i++)
		if (ps[i].meets && ps[i].gpus <= g.max_gpus)
			ok[k++] = ps[i];
	if (!k) {
		closest(a, r, ps, n, &g);
		return CLI_FAIL;
	}
	qsort(ok, k, sizeof *ok, by_gpus);
	for (size_t i = 0; i < k; i++) { /* the Pareto front */
		bool dominated = false;
		for (size_t j = 0; j < k && !dominated; j++)
			dominated = kv_fleet_dominates(&ok[j], &ok[i]);
		if (!dominated)
			ok[m++] = ok[i];
	}
	for (size_t i = 0; i < m; i++)
		if ((status = keep(out, r, &ok[i],
				   i == 0	? "fewest_gpus"
				   : i == m - 1 ? "lowest_tpot"
						: "")))
			return status;
	return 0;
}

int kvfit_fleet(const struct args *a, const struct kv_plan *pl, size_t np,
		const char *gpu_name)
{
	struct rows out = {0};
	struct cli_table t;
	int status = 0, worst = 0;
	bool gpus = a->o.solve == KV_PLAN_GPUS, ep = kv_plan_ep(&a->o);
	for (size_t i = 0; i < np && worst != CLI_USAGE; i++) {
		struct kv_plan_iter it;
		struct kv_plan_row r;
		kv_plan_begin(&it, &a->o, &pl[i]);
		while (worst != CLI_USAGE && kv_plan_next(&it, &r)) {
			if ((status = kv_plan_check(&a->o, &r, r.why)))
				status = cli_kv_error(status, r.why);
			else
				status = gpus ? gpus_row(&out, a, &r)
					      : disagg_row(&out, a, &r);
			worst = status > worst ? status : worst;
		}
	}
	for (size_t i = 0; i < out.n; i++)
		ep = ep || has_ep(&out.v[i].p);
	if (worst != CLI_USAGE) {
		const char *c[NCOLS], *b[sizeof brief / sizeof *brief];
		size_t nc = pick(cols, NCOLS - !gpus, ep, c);
		size_t nb = pick(brief, sizeof brief / sizeof *brief - !gpus,
				 ep, b);
		cli_table_begin(&t, c, nc, a->json, a->header, a->human);
		cli_table_brief(&t, b, nb);
		for (size_t i = 0; i < out.n && !ferror(stdout); i++)
			put_plan(&t, a, &out.v[i].r, gpu_name, &out.v[i].p,
				 out.v[i].best, ep);
		cli_table_end(&t);
	}
	free(out.v);
	return worst;
}
