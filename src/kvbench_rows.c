/*
 * kvbench_rows.c - what kvbench writes: a row per point, cells empty
 * where a bench has no such figure, and the progress line on a terminal.
 */
#include <stdio.h>

#include "kvbench.h"
#include "kv/bench.h"

static void put_opt_f(struct cli_table *t, double v, int prec)
{
	if (v > 0)
		cli_put_f(t, v, prec);
	else
		cli_put_empty(t);
}

static void put_empty(struct cli_table *t, int n)
{
	while (n-- > 0)
		cli_put_empty(t);
}

void kvbench_row(struct cli_table *t, const struct kv_sweep_point *p,
		 const struct kv_sweep_out *o, double ratio, bool baseline)
{
	const struct kv_bench_result *r = &o->r;
	const struct kv_quality *q = &o->q;
	bool engine = p->bench != KV_BENCH_MEMBW && p->bench != KV_BENCH_SGEMM;
	bool qual = p->bench == KV_BENCH_QUALITY;
	cli_put_str(t, kv_bench_name(p->bench));
	if (engine) {
		cli_put_str(t, o->model);
		cli_put_u64(t, p->ctx);
		cli_put_u64(t, p->users);
		cli_put_u64(t, o->kv_heads);
		cli_put_str(t, kv_dtype_name(p->dtype));
	} else {
		put_empty(t, 5);
	}
	cli_put_u64(t, p->threads);
	cli_put_u64(t, r->reps);
	if (r->bytes)
		cli_put_u64(t, r->bytes);
	else
		cli_put_empty(t);
	put_opt_f(t, r->flops, 0);
	if (!qual || r->ms.median > 0) {
		cli_put_f(t, r->ms.median, 3);
		cli_put_f(t, r->ms.min, 3);
		cli_put_f(t, r->ms.max, 3);
	} else { /* a quality run of one token times no decode step */
		put_empty(t, 3);
	}
	put_opt_f(t, r->bytes ? r->gbps : 0, 2);
	put_opt_f(t, r->flops > 0 ? r->gflops : 0, 2);
	put_opt_f(t, r->roofline_ms, 3);
	put_opt_f(t, r->efficiency, 3);
	if (engine && p->bench != KV_BENCH_NOCACHE && !qual) {
		cli_put_u64(t, r->kv_bytes);
		cli_put_f(t, r->kv_share, 3);
	} else {
		put_empty(t, 2);
	}
	if (p->bench == KV_BENCH_BATCH)
		cli_put_f(t, r->kv_time_share, 3);
	else
		cli_put_empty(t);
	put_opt_f(t, r->ref_gbps, 2);
	put_opt_f(t, r->ref_gflops, 2);
	if (engine)
		cli_put_str(t, kv_sweep_layout_name(p->layout));
	else
		cli_put_empty(t);
	if (engine && p->block_size)
		cli_put_u64(t, p->block_size);
	else
		cli_put_empty(t);
	if (qual) {
		cli_put_u64(t, q->steps);
		cli_put_f(t, kv_quality_top1(q), 4);
		cli_put_f(t, q->max_abs, 6);
		cli_put_f(t, kv_quality_mean_abs(q), 6);
		cli_put_f(t, kv_quality_mean_kl(q), 12);
	} else {
		put_empty(t, 5);
	}
	if (engine)
		cli_put_str(t, kv_dtype_name(p->wt));
	else
		cli_put_empty(t);
	if (baseline) {
		put_opt_f(t, p->baseline_ms, 3);
		put_opt_f(t, ratio, 3);
	}
	cli_row_end(t);
}

/* The progress line on a terminal: the point's place, every dimension
 * the sweep varies, and the time left at the pace so far. */
void kvbench_progress(const struct kv_sweep_point *p,
		      struct kv_model *const *models, size_t i, size_t n,
		      uint64_t t0)
{
	bool engine = p->bench != KV_BENCH_MEMBW && p->bench != KV_BENCH_SGEMM;
	const char *name = engine ? models[p->model]->name : "";
	char eta[64] = "";
	if (i) {
		double left = (double)(kv_now_ns() - t0) / 1e9 / (double)i *
			      (double)(n - i);
		unsigned long long sec = (unsigned long long)(left + 0.5);
		snprintf(eta, sizeof eta, ", about %llum%02llus left", sec / 60,
			 sec % 60);
	}
	fprintf(stderr, "\r\033[Kkvbench: [%zu/%zu] %s", i + 1, n,
		kv_bench_name(p->bench));
	if (*name)
		fprintf(stderr, " %s ctx %llu users %llu %s", name,
			(unsigned long long)p->ctx,
			(unsigned long long)p->users, kv_dtype_name(p->dtype));
	if (*name && p->kv_heads)
		fprintf(stderr, " kv_heads %llu",
			(unsigned long long)p->kv_heads);
	if (p->mla)
		fprintf(stderr, " mla %llu", (unsigned long long)p->mla);
	if (p->layout != KV_SWEEP_CONTIGUOUS)
		fprintf(stderr, " %s %llu", kv_sweep_layout_name(p->layout),
			(unsigned long long)p->block_size);
	fprintf(stderr, " threads %llu%s", (unsigned long long)p->threads, eta);
}

