/*
 * ops.c - the products every block of the engine runs, its own and MLA's:
 * a few token rows by a weight matrix through the small-rows kernel,
 * more through OpenBLAS, the outputs split over the pool's threads in
 * runs, with the bias and the activation (GELU, SwiGLU's gate) applied
 * to each run as it is done. engine.c and mla.c both call it; it calls
 * neither.
 */
#include <cblas.h>
#include <stdatomic.h>

#include "engine_int.h"
#include "kvquant.h"

/* Tasks per thread of a product: contiguous runs of W's rows handed out
 * in turn, so a thread that gets less bandwidth takes fewer of them. */
#define LINEAR_TASKS 4

/* y (m, n) = x (m, k) w (k, n) + beta y + b, then the activation; with
 * SWIGLU, y = silu(x w2 + b2) * (x w + b), the gate product into g. */
struct linear_job {
	const float *x;
	const void *w, *w2, *b, *b2; /* in the ops' weight type */
	float *y, *g;
	uint64_t m, k, n;
	float beta;
	enum kv_act act;
	const struct kv_ops *o;
	uint64_t chunk; /* outputs per task, a multiple of 16 */
	_Atomic uint64_t next;
};

/* Columns c0 .. c1 - 1 of y = x W^T through BLAS, W (n, k) f32. */
static void blas(const float *x, const float *wc, float *y, uint64_t m,
		 uint64_t k, uint64_t n, uint64_t c0, uint64_t c1, float beta)
{
	blasint cols = (blasint)(c1 - c0);
	if (m == 1)
		cblas_sgemv(CblasRowMajor, CblasNoTrans, cols, (blasint)k,
			    1.0f, wc, (blasint)k, x, 1, beta, y + c0, 1);
	else
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans,
			    (blasint)m, cols, (blasint)k, 1.0f, x, (blasint)k,
			    wc, (blasint)k, beta, y + c0, (blasint)n);
}

/* Bias values widened per run: one conversion per column of a product,
 * not one per row and column. */
#define BIAS_RUN 256

/* y[r][c] += b[c] for rows r < m, columns c0 .. c1 - 1 of n, the bias
 * in type wt. */
static void add_bias(const void *b, enum kv_dtype wt, float *y, uint64_t m,
		     uint64_t n, uint64_t c0, uint64_t c1)
{
	float v[BIAS_RUN];
	for (uint64_t c = c0; c < c1; c += BIAS_RUN) {
		uint64_t e = c1 - c < BIAS_RUN ? c1 : c + BIAS_RUN;
		for (uint64_t i = c; i < e; i++)
			v[i - c] = kv_wval(b, i, wt);
		for (uint64_t r = 0; r < m; r++)
			for (uint64_t i = c; i < e; i++)
				y[r * n + i] += v[i - c];
	}
}

static void product(const struct kv_ops *o, unsigned tid, const float *x,
		    const void *w, const void *b, float *y, uint64_t m,
		    uint64_t k, uint64_t n, uint64_t c0, uint64_t c1,
		    float beta)
{
	/* each thread's rows for sgemm's widening, free here: the small
	 * product's scratch */
	float *f = o->conv ? o->conv + (uint64_t)tid * KV_CONV_ROWS * o->conv_k
			   : NULL;
	if (m <= KV_SMALL_ROWS && o->simd) {
		kv_gemm_small(x, m, k, w, o->wt, n, c0, c1, beta, y, o->simd, f,
			      f ? KV_CONV_ROWS * o->conv_k : 0);
	} else if (o->wt == KV_DTYPE_F32) {
		/* rows c0 .. c1 - 1 of W (n, k) */
		blas(x, (const float *)w + c0 * k, y, m, k, n, c0, c1, beta);
	} else {
		/* 16-bit weights: a few rows widened at a time, each
		 * block an sgemm of its own */
		for (uint64_t c = c0; c < c1; c += KV_CONV_ROWS) {
			uint64_t e = c + KV_CONV_ROWS < c1 ? c + KV_CONV_ROWS
							   : c1;
			kv_weights_to_f32((const uint16_t *)w + c * k, o->wt,
					  (e - c) * k, f);
			blas(x, f, y, m, k, n, c, e, beta);
		}
	}
	if (b)
		add_bias(b, o->wt, y, m, n, c0, c1);
}

/* Outputs c0 .. c1 - 1 of a product, with its activation. */
static void linear_cols(const struct linear_job *j, unsigned tid,
			uint64_t c0, uint64_t c1)
{
	bool simd = j->o->simd;
	product(j->o, tid, j->x, j->w, j->b, j->y, j->m, j->k, j->n, c0, c1,
		j->beta);
	if (j->act == KV_ACT_GELU) {
		for (uint64_t r = 0; r < j->m; r++)
			kv_gelu(j->y + r * j->n + c0, c1 - c0, simd);
	} else if (j->act == KV_ACT_SWIGLU) {
		product(j->o, tid, j->x, j->w2, j->b2, j->g, j->m, j->k, j->n,
			c0, c1, 0);
		for (uint64_t r = 0; r < j->m; r++)
			kv_silu_mul(j->y + r * j->n + c0, j->g + r * j->n + c0,
				    c1 - c0, simd);
	}
}

static void linear_task(void *arg, unsigned tid, unsigned nth)
{
	struct linear_job *j = arg;
	(void)nth;
	for (;;) {
		uint64_t c0 = atomic_fetch_add(&j->next, 1) * j->chunk;
		if (c0 >= j->n)
			return;
		linear_cols(j, tid, c0,
			    c0 + j->chunk < j->n ? c0 + j->chunk : j->n);
	}
}

void kv_linear(const struct kv_ops *o, const float *x, uint64_t m,
	       uint64_t k, const void *w, const void *b, float *y,
	       uint64_t n, float beta, enum kv_act act, const void *w2,
	       const void *b2)
{
	struct linear_job j = {.x = x, .w = w, .b = b, .w2 = w2, .b2 = b2,
			       .y = y, .g = o->g, .m = m, .k = k, .n = n,
			       .beta = beta, .act = act, .o = o};
	uint64_t tasks = (uint64_t)o->threads * LINEAR_TASKS;
	j.chunk = ((n + tasks - 1) / tasks + 15) / 16 * 16;
	atomic_init(&j.next, 0);
	kv_pool_run(o->pool, linear_task, &j);
}
