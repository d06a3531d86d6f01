/*
 * engine.c - the decode engine: weights drawn from the seeded generator, a
 * KV cache of exactly kv_model_bytes(), and a forward pass whose products
 * are split over the engine's threads by outputs, so a decode step reads
 * each weight once: chunks through OpenBLAS's sgemm, a few rows through
 * gemm.c's dot products.
 *
 * Weights are stored [out][in] (as torch's nn.Linear keeps them; y = x
 * W^T): a thread's share of a product is a contiguous run of W's rows, so
 * one token reads each thread's weights as one sequential stream (gemm.c),
 * and a chunk is sgemm with W transposed. The tied head is the embedding
 * table itself, (vocab, dim).
 *
 * The cache is bytes: each K or V row (one head of one token) is encoded
 * in its format once, by store_kv(), and found by kv_rows() alone; an f32
 * cache goes to the f32 attention kernels (attn.c), any other format to
 * the kernels that read the encoded rows (attnq.c). The K/V of a pass
 * without the cache are kept in the same formats, so both paths run the
 * same model.
 *
 * Tensor ids and scales (tests/ref/ref_forward.py rebuilds them):
 *   global: 0 embedding (vocab, dim), 1 positions (rows, dim), 2 final
 *   norm gain (dim), 3 final norm bias (dim), 4 head (dim, vocab) untied;
 *   layer l: 16 (l + 1) + slot, slots as enum slot below.
 *   matrices: 0.02 sqrt(3) r (standard deviation 0.02, as GPT-2's init);
 *   biases: 0.02 r; norm gains: 1 + 0.1 r (Qwen3's per-head q and k
 *   norms too: slots S_Q_NORM and S_K_NORM, head_dim gains each). Each
 *   value is drawn as a float, then rounded to the weights' type (to
 *   nearest even), vectors as matrices.
 * An MLA layer (mla.c) has no S_QKV tensors; its own have the ids
 * KV_MLA_ID(l, slot) of mla.h, drawn the same way.
 *
 * The shape, the layout of tensors and scratch, the checks of a model and
 * the bytes of a run are engine_plan.c's (engine_impl.h holds the
 * structures both files share); the products are ops.c's.
 */
#include <cblas.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"

/* --- drawing the weights --- */

struct draw_job {
	const struct tensor *t;
	uint64_t seed;
	enum kv_dtype wt; /* the weights' type: every draw rounded to it */
};

static void draw_task(void *arg, unsigned tid, unsigned nth)
{
	const struct draw_job *j = arg;
	const struct tensor *t = j->t;
	uint64_t n = t->rows * t->cols;
	uint64_t a = n * tid / nth, b = n * (tid + 1) / nth;
	uint64_t key = kv_rand_key(j->seed, t->id);
	float *dst = *t->dst;
	uint16_t *half = (uint16_t *)*t->dst;
	bool wide = j->wt == KV_DTYPE_F32;
	for (uint64_t i = a; i < b; i++) {
		/* i is the stored index; the draw follows the logical one */
		uint64_t li = t->transpose ? (i % t->rows) * t->cols +
						     i / t->rows
					   : i;
		float r = kv_rand_sym(key, li);
		float v = t->kind == K_MAT    ? W_SCALE * r
			  : t->kind == K_BIAS ? B_SCALE * r
					      : 1.0f + G_SCALE * r;
		if (wide)
			dst[i] = v;
		else
			half[i] = j->wt == KV_DTYPE_BF16 ? kv_f32_to_bf16(v)
							 : kv_f32_to_f16(v);
	}
}

/* The frequency of pair i of hd, as rope_scaling turns it: linear
 * divides every one by the factor; Llama 3's divides the low ones (a
 * wavelength beyond original / low_freq), keeps the high ones (below
 * original / high_freq) and blends those between (Transformers'
 * _compute_llama3_parameters). */
static double rope_freq(const struct shape *s, uint32_t i)
{
	double f = pow(s->theta, -2.0 * i / s->hd);
	if (s->rope_kind == 1)
		return f / s->rope_factor;
	if (s->rope_kind != 2)
		return f;
	double wave = 2 * M_PI / f, orig = (double)s->rope_orig;
	if (wave < orig / s->rope_high)
		return f;
	if (wave > orig / s->rope_low)
		return f / s->rope_factor;
	double smooth = (orig / wave - s->rope_low) /
			(s->rope_high - s->rope_low);
	return (1 - smooth) * f / s->rope_factor + smooth * f;
}

static void rope_table(struct kv_engine *e)
{
	uint32_t half = e->s.hd / 2;
	for (uint64_t p = 0; p < e->s.ctx; p++)
		for (uint32_t i = 0; i < half; i++) {
			double f = rope_freq(&e->s, i);
			double a = (double)p * f;
			e->rope[(p * half + i) * 2] = (float)cos(a);
			e->rope[(p * half + i) * 2 + 1] = (float)sin(a);
		}
}

int kv_engine_new(const struct kv_model *m, const struct kv_engine_opts *o,
		  struct kv_engine **out, char *err)
{
	struct kv_engine_size sz;
	struct kv_engine *e = calloc(1, sizeof *e);
	struct tensor *t = NULL;
	int rc;
	if (!e) {
		snprintf(err, KV_ERRLEN, "out of memory");
		return KV_ENOMEM;
	}
	if ((rc = kv_engine_model(m, o, &e->model, err)))
		goto fail;
	if ((rc = kvp_estimate(e->model, o, &e->s, &sz, err)))
		goto fail;
	rc = KV_ENOMEM;
	snprintf(err, KV_ERRLEN, "out of memory (%llu bytes)",
		 (unsigned long long)sz.total);
	e->lw = calloc(e->s.layers, sizeof *e->lw);
	e->weights = kv_alloc_big(sz.weights);
	e->weight_bytes = sz.weights;
	e->scratch = kv_alloc_big(sz.scratch);
	e->scratch_bytes = sz.scratch;
	if (!e->lw || !e->weights || !e->scratch)
		goto fail;
	memset(e->scratch, 0, (size_t)sz.scratch);
	if (e->s.cache) {
		e->cache = kv_alloc_big(sz.cache);
		e->cache_bytes = sz.cache;
		if (!e->cache)
			goto fail;
		/* a cache never written reads as zeros, not garbage */
		memset(e->cache, 0, (size_t)sz.cache);
	}
	if (e->s.paged) {
		struct kv_paged_opts po = kvp_paged_opts(&e->s);
		if (kv_paged_new(&po, &e->pages))
			goto fail;
	}
	if (e->s.bs) {
		e->tokbuf = calloc(e->s.rows, sizeof *e->tokbuf);
		if (!e->tokbuf)
			goto fail;
	}
	/* the CPU's features are probed once, here, before any thread asks */
	(void)kv_attn_has_simd(8);
	(void)kv_attnq_has_simd(32);
	if (kv_pool_new(e->s.threads, &e->pool))
		goto fail;
	openblas_set_num_threads(1);
	e->ops = (struct kv_ops){e->pool, e->s.threads, true, NULL,
				 KV_DTYPE_F32, NULL, 0};
	e->logit_scale = o->logit_scale > 0 ? o->logit_scale : 1;

	/* carve the allocations, then draw every tensor */
	size_t nt = kvp_tensors(&e->s, NULL, NULL);
	t = malloc(nt * sizeof *t);
	if (!t)
		goto fail;
	kvp_tensors(&e->s, e, t);
	kvp_place(&e->s, t, nt, e->weights);
	if (o->ckpt && (rc = kvp_load(&e->s, t, nt, o->ckpt, m->path, err)))
		goto fail;
	for (size_t i = 0; i < nt && !o->ckpt; i++) {
		struct draw_job j = {&t[i], o->seed, e->s.wt};
		kv_pool_run(e->pool, draw_task, &j);
	}
	if (e->s.tied)
		e->head = e->wte;
	struct piece pc[16];
	size_t np = kvp_pieces(&e->s, e, pc);
	float *sp = e->scratch;
	for (size_t i = 0; i < np; i++) {
		uint64_t n = 0;
		*pc[i].dst = sp;
		kvp_padded(pc[i].a * pc[i].b, &n);
		sp += n;
	}
	if (!e->s.gpt2 || e->s.mla)
		rope_table(e);
	e->ops.g = e->g;
	e->ops.wt = e->s.wt;
	e->ops.conv = e->conv;
	e->ops.conv_k = e->s.conv_k;
	if (e->s.mla)
		kv_mla_init(&e->mla, &e->s.md, e->mla_scratch, &e->ops,
			    e->rope, (float *)(void *)e->cache);
	free(t);
	*out = e;
	return 0;
fail:
	free(t);
	kv_engine_free(e);
	return rc;
}

void kv_engine_free(struct kv_engine *e)
{
	if (!e)
		return;
	kv_pool_free(e->pool);
	free(e->weights);
	free(e->scratch);
	free(e->cache);
	kv_paged_free(e->pages);
	free(e->tokbuf);
	free(e->lw);
	kv_model_free(e->model);
	free(e);
}

/* --- the pieces of a block --- */

/* y = LayerNorm (GPT-2) or RMSNorm of rows of x, stride rows apart,
 * with the gains g and biases b (GPT-2's) in the weights' type. */
static void norm_rows(const struct shape *s, const float *x, float *y,
		      uint64_t rows, uint64_t stride, const void *g,
		      const void *b)
{
	uint64_t d = s->dim;
	enum kv_dtype wt = s->wt;
	for (uint64_t r = 0; r < rows; r++) {
		const float *xr = x + r * stride * d;
		float *yr = y + r * d;
		if (s->gpt2) {
			float mean = 0, var = 0;
			for (uint64_t i = 0; i < d; i++)
				mean += xr[i];
			mean /= (float)d;
			for (uint64_t i = 0; i < d; i++)
				var += (xr[i] - mean) * (xr[i] - mean);
			var /= (float)d;
			float inv = 1.0f / sqrtf(var + (float)s->eps);
			for (uint64_t i = 0; i < d; i++)
				yr[i] = (xr[i] - mean) * inv *
						kv_wval(g, i, wt) +
					kv_wval(b, i, wt);
		} else {
			float ss = 0;
			for (uint64_t i = 0; i < d; i++)
				ss += xr[i] * xr[i];
			float inv = 1.0f / sqrtf(ss / (float)d + (float)s->eps);
			for (uint64_t i = 0; i < d; i++)
				yr[i] = xr[i] * inv * kv_wval(g, i, wt);
		}
	}
}

/* Qwen3's per-head RMSNorm: each of n heads of hd values scaled to unit
 * root mean square (eps inside the root), then by the gains g (hd, in
 * the weights' type). */
static void head_norm(const struct shape *s, float *x, uint32_t n,
		      const void *g)
{
	uint32_t hd = s->hd;
	enum kv_dtype wt = s->wt;
	for (uint32_t h = 0; h < n; h++, x += hd) {
		float ss = 0;
		for (uint32_t i = 0; i < hd; i++)
			ss += x[i] * x[i];
		float inv = 1.0f / sqrtf(ss / (float)hd + (float)s->eps);
		for (uint32_t i = 0; i < hd; i++)
			x[i] = x[i] * inv * kv_wval(g, i, wt);
	}
}

/* Rotates n heads of hd values at position p (Hugging Face rotate-half). */
static void rope(const struct kv_engine *e, float *x, uint32_t n, uint64_t p)
{
	uint32_t hd = e->s.hd, half = hd / 2;
	const float *cs = e->rope + p * half * 2;
	for (uint32_t h = 0; h < n; h++, x += hd)
		for (uint32_t i = 0; i < half; i++) {
			float c = cs[2 * i], sn = cs[2 * i + 1];
			float a = x[i], b = x[i + half];
			x[i] = a * c - b * sn;
			x[i + half] = b * c + a * sn;
		}
}

/* The encoded K (or V, kv = 1) row of position p of KV head j of
 * sequence u on layer l, in the cache or (no cache) the chunk's own: the
 * rows from p to the end of p's block (of the whole context when not
 * paged) follow it, krow or vrow bytes apart. The one place that knows
 * the cache's layout. */
static uint8_t *kv_rows(const struct kv_engine *e, uint32_t l, uint64_t u,
			uint32_t j, int kv, bool cache, uint64_t p)
{
	const struct shape *s = &e->s;
	uint64_t per = s->users * s->kv_heads, head = u * s->kv_heads + j;
	uint64_t row = kv ? s->f.vrow : s->f.krow;
	if (!cache)
		return (uint8_t *)e->kvtmp +
		       (uint64_t)kv * per * s->chunk * s->tmprow +
		       (head * s->chunk + p) * row;
	/* rows per head: the context, or the pool's blocks */
	uint64_t slots = s->paged ? s->pool * s->bs : s->ctx;
	if (s->paged) {
		per = s->kv_heads;
		head = j;
		p = (uint64_t)kv_paged_table(e->pages, (uint32_t)u)[p / s->bs] *
			    s->bs +
		    p % s->bs;
	}
	uint64_t krows = per * slots * s->f.krow;
	uint64_t layer = krows + per * slots * s->f.vrow;
	return e->cache + l * layer + (kv ? krows : 0) +
	       (head * slots + p) * row;
}

/* kv_attn_part() over rows in the engine's formats. */
static void attend(const struct kv_engine *e, const float *q, uint32_t g,
		   uint32_t per, const uint8_t *k, const uint8_t *v,
		   uint64_t n, float scale, float *sc, float *o, float *m,
		   float *l)
{
	const struct shape *s = &e->s;
	if (s->f.k == KV_DTYPE_F32 && s->f.v == KV_DTYPE_F32)
		kv_attn_part(q, g, per, (const float *)(const void *)k,
			     (const float *)(const void *)v, n, s->hd, scale,
			     sc, o, m, l, e->ops.simd);
	else
		kv_attnq_part(q, g, per, k, v, &s->f, n, s->hd, scale, sc, o,
			      m, l, e->ops.simd ? KV_ISA_AVX512 : KV_ISA_C);
}

struct attn_job {
	struct kv_engine *e;
	uint32_t layer;
	uint64_t n, pos; /* chunk of n queries per sequence at pos */
	bool cache;
	uint32_t nsplit; /* parts of each (sequence, KV head); n == 1 */
	uint32_t qb;     /* tokens per task */
	uint64_t blocks; /* tasks per (sequence, KV head, part) */
	uint64_t tasks;
	_Atomic uint64_t next;
};

/* The kernel on g query rows (from row r0 of q) over n rows of k and v,
 * its result merged into rows r0.. of o, m, l: the running maximum, then
 * both sums rescaled to it. po holds the kernel's own o, m and l. */
static void merge_block(const struct kv_engine *e, const uint8_t *k,
			const uint8_t *v, const float *q, uint32_t r0,
			uint32_t g, uint32_t per, uint64_t n, float *sc,
			float *o, float *m, float *l, float *po)
{
	uint32_t hd = e->s.hd;
	float *pm = po + (uint64_t)g * hd, *pl = pm + g;
	attend(e, q + (uint64_t)r0 * hd, g, per, k, v, n,
	       1.0f / sqrtf((float)hd), sc, po, pm, pl);
	kv_attn_merge(o + (uint64_t)r0 * hd, m + r0, l + r0, po, pm, pl, g, hd);
}

/* K and V rows [b0, b1) (within one tile) of KV head kh of sequence u
 * on layer l, as one run each: in place when contiguous or when the
 * tile's blocks lie one after another in the pool, else gathered block by
 * block into buf (tile K rows, then tile V rows, as stored). */
static void tile_rows(const struct kv_engine *e, uint32_t l, uint64_t u,
		      uint32_t kh, uint64_t b0, uint64_t b1, uint8_t *buf,
		      const uint8_t **k, const uint8_t **v)
{
	const struct shape *s = &e->s;
	*k = kv_rows(e, l, u, kh, 0, true, b0);
	*v = kv_rows(e, l, u, kh, 1, true, b0);
	if (!s->paged)
		return;
	const uint32_t *t = kv_paged_table(e->pages, (uint32_t)u);
	uint64_t i = b0 / s->bs, last = (b1 - 1) / s->bs;
	while (i < last && t[i + 1] == t[i] + 1)
		i++;
	if (i == last)
		return;
	uint8_t *kb = buf, *vb = buf + s->tile * s->f.krow;
	for (uint64_t p = b0; p < b1;) {
		uint64_t end = (p / s->bs + 1) * s->bs;
		end = end < b1 ? end : b1;
		memcpy(kb + (p - b0) * s->f.krow,
		       kv_rows(e, l, u, kh, 0, true, p),
		       (end - p) * s->f.krow);
		memcpy(vb + (p - b0) * s->f.vrow,
		       kv_rows(e, l, u, kh, 1, true, p),
		       (end - p) * s->f.vrow);
		p = end;
	}
	*k = kb;
	*v = vb;
}

/*
 * g query rows q (tokens of `per` rows; the last token sees positions
 * [a, len), each earlier one a position fewer) of KV head kh of sequence
 * u against those positions: o, m, l as kv_attn_part(). Without blocks,
 * one kernel call over the range. With blocks, the range is walked in
 * tiles of whole blocks (s->tile positions, from position 0), in order;
 * in each, the tokens that see the whole tile attend to it in one call
 * and those that see part of it (their causal edge falls inside it) in
 * another, and each call is merged into o, m, l. The same calls run on
 * the same rows whatever the layout (paged rows gathered when their
 * blocks lie apart), so paged and contiguous agree bitwise.
 */
static void attend_range(const struct kv_engine *e, const struct attn_job *j,
			 uint64_t u, uint32_t kh, const float *q, uint32_t g,
			 uint32_t per, uint64_t a, uint64_t len, float *sc,
			 float *o, float *m, float *l, float *po, uint8_t *tb)
{
	const struct shape *s = &e->s;
	uint32_t hd = s->hd, nt = g / per;
	if (!s->bs || !j->cache) {
		attend(e, q, g, per, kv_rows(e, j->layer, u, kh, 0, j->cache, a),
		       kv_rows(e, j->layer, u, kh, 1, j->cache, a), len - a,
		       1.0f / sqrtf((float)hd), sc, o, m, l);
		return;
	}
	for (uint32_t i = 0; i < g; i++) {
		m[i] = -INFINITY;
		l[i] = 0;
	}
	memset(o, 0, sizeof *o * g * hd);
	for (uint64_t b0 = a; b0 < len;) {
		uint64_t b1 = (b0 / s->tile + 1) * s->tile;
		const uint8_t *k, *v;
		b1 = b1 < len ? b1 : len;
		tile_rows(e, j->layer, u, kh, b0, b1, tb, &k, &v);
		/* token t sees positions below len - (nt - 1 - t): all of
		 * the tile from t = full on, part of it from t = part */
		uint64_t after = len - b1, from = len - b0;
		uint32_t full = after >= nt - 1 ? 0
						: nt - 1 - (uint32_t)after;
		uint32_t part = from >= nt ? 0 : nt - (uint32_t)from;
		if (full < nt)
			merge_block(e, k, v, q, full * per, (nt - full) * per,
				    (nt - full) * per, b1 - b0, sc, o, m, l,
				    po);
		if (part < full)
			merge_block(e, k, v, q, part * per, (full - part) * per,
				    per, len - (nt - full) - b0, sc, o, m, l,
				    po);
		b0 = b1;
	}
}

static void attn_task(void *arg, unsigned tid, unsigned nth)
{
	struct attn_job *j = arg;
	struct kv_engine *e = j->e;
	const struct shape *s = &e->s;
	uint32_t G = s->group, hd = s->hd;
	uint64_t rows = (uint64_t)s->qblock * G; /* most rows of a task */
	float *sc = e->scores + tid * rows * kvp_score_width(s);
	float *m = sc + rows * s->ctx, *l = m + rows;
	float *qb = l + rows, *ob = qb + rows * hd; /* (rows, hd) each */
	float *po = ob + rows * hd; /* (rows, hd + 2), with blocks */
	uint8_t *tb = e->tiles ? (uint8_t *)e->tiles + tid * kvp_tile_bytes(s)
			       : NULL;
	(void)nth;
	for (;;) {
		uint64_t i = atomic_fetch_add(&j->next, 1);
		if (i >= j->tasks)
			break;
		uint64_t part = i % j->nsplit, r = i / j->nsplit;
		uint64_t t0 = r % j->blocks * j->qb;
		uint64_t t1 = t0 + j->qb < j->n ? t0 + j->qb : j->n;
		r /= j->blocks;
		uint32_t kh = (uint32_t)(r % s->kv_heads);
		uint64_t u = r / s->kv_heads, row = u * j->n + t0;
		uint64_t len = j->pos + t1; /* the last token's positions */
		const float *q = e->qkv + row * s->qkv + (uint64_t)kh * G * hd;
		if (j->nsplit == 1) {
			/* the block's tokens in one group: queries gathered,
			 * K and V read once for all of them */
			uint32_t nt = (uint32_t)(t1 - t0), g = nt * G;
			const float *qq = q;
			if (nt > 1)
				for (uint32_t t = 0; t < nt; t++)
					memcpy(qb + (uint64_t)t * G * hd,
					       q + t * s->qkv,
					       (size_t)G * hd * sizeof *qb);
			qq = nt > 1 ? qb : q;
			float *o = nt > 1 ? ob
					  : e->att + row * s->att +
						    (uint64_t)kh * G * hd;
			attend_range(e, j, u, kh, qq, g, G, 0, len, sc, o, m,
				     l, po, tb);
			for (uint32_t t = 0; t < nt; t++) {
				float *dst = e->att + (row + t) * s->att +
					     (uint64_t)kh * G * hd;
				const float *src = o + (uint64_t)t * G * hd;
				for (uint32_t h = 0; h < G; h++)
					for (uint32_t d = 0; d < hd; d++)
						dst[h * hd + d] =
							src[h * hd + d] /
							l[t * G + h];
			}
			continue;
		}
		uint64_t a = len * part / j->nsplit;
		uint64_t b = len * (part + 1) / j->nsplit;
		if (s->bs && j->cache) { /* parts of whole tiles */
			uint64_t nb = (len + s->tile - 1) / s->tile;
			a = nb * part / j->nsplit * s->tile;
			b = nb * (part + 1) / j->nsplit * s->tile;
			b = b < len ? b : len;
		}
		float *o = e->part + i * G * (hd + 2);
		float *pm = o + (uint64_t)G * hd, *pl = pm + G;
		if (b > a) {
			attend_range(e, j, u, kh, q, G, G, a, b, sc, o, pm, pl,
				     po, tb);
		} else { /* an empty part weighs nothing */
			kv_attn_part_empty(pm, pl, G);
		}
	}
}

/* Merges the parts of a split decode step into att. */
static void merge_parts(struct kv_engine *e, uint32_t nsplit)
{
	const struct shape *s = &e->s;
	uint32_t G = s->group, hd = s->hd;
	for (uint64_t r = 0; r < s->users * s->kv_heads; r++) {
		uint64_t u = r / s->kv_heads;
		uint32_t kh = (uint32_t)(r % s->kv_heads);
		kv_attn_merge_parts(e->att + u * s->att +
					    (uint64_t)kh * G * hd,
				    e->part + r * nsplit * (uint64_t)G *
						      (hd + 2),
				    nsplit, G, hd);
	}
}

static void attention(struct kv_engine *e, uint32_t layer, uint64_t n,
		      uint64_t pos, bool cache)
{
	const struct shape *s = &e->s;
	struct attn_job j = {e, layer, n, pos, cache, 1, 1, n, 0, 0};
	/* split a single query over positions when there are few heads and
	 * enough positions for each part to be worth a thread */
	if (n == 1 && s->nsplit > 1 && pos + 1 >= 256ULL * s->nsplit)
		j.nsplit = s->nsplit;
	if (n > 1) {
		j.qb = s->qblock;
		j.blocks = (n + j.qb - 1) / j.qb;
	}
	j.tasks = s->users * s->kv_heads * j.blocks * j.nsplit;
	atomic_init(&j.next, 0);
	kv_pool_run(e->pool, attn_task, &j);
	if (j.nsplit > 1)
		merge_parts(e, j.nsplit);
}

/* Writes the chunk's K and V (after the heads' norms, when the model has
 * them, and rotation) where attention reads them; the queries are normed
 * and rotated in place. */
static void store_kv(struct kv_engine *e, uint32_t layer, uint64_t n,
		     uint64_t pos, bool cache)
{
	const struct shape *s = &e->s;
	const struct layer_w *w = &e->lw[layer];
	uint64_t hd = s->hd;
	for (uint64_t u = 0; u < s->users; u++)
		for (uint64_t t = 0; t < n; t++) {
			float *row = e->qkv + (u * n + t) * s->qkv;
			if (s->qk_norm) {
				head_norm(s, row, s->heads, w->q_norm);
				head_norm(s, row + s->att, s->kv_heads,
					  w->k_norm);
			}
			if (!s->gpt2)
				rope(e, row, s->heads + s->kv_heads, pos + t);
			const float *kk = row + s->att;
			const float *vv = kk + (uint64_t)s->kv_heads * hd;
			uint64_t p = cache ? pos + t : t;
			for (uint32_t j = 0; j < s->kv_heads; j++) {
				kv_quant_encode(s->f.k, kk + j * hd,
						(uint32_t)hd,
						kv_rows(e, layer, u, j, 0,
							cache, p));
				kv_quant_encode(s->f.v, vv + j * hd,
						(uint32_t)hd,
						kv_rows(e, layer, u, j, 1,
							cache, p));
			}
		}
}

/* Cuts every sequence back to pos positions and gives it blocks for n
 * more, paged. */
static int take_blocks(struct kv_engine *e, const uint32_t *tokens,
		       uint64_t n, uint64_t pos)
{
	int rc;
	for (uint32_t u = 0; u < e->s.users; u++)
		if (pos > kv_paged_len(e->pages, u))
			return KV_EINVAL;
	for (uint32_t u = 0; u < e->s.users; u++)
		if ((rc = kv_paged_truncate(e->pages, u, pos)) ||
		    (rc = kv_paged_append(e->pages, u,
					  tokens ? tokens + u * n : NULL, n)))
			return rc;
	return 0;
}

int kv_engine_forward(struct kv_engine *e, const uint32_t *tokens,
		      uint64_t n, uint64_t pos, bool cache, float *logits)
{
	const struct shape *s = &e->s;
	if (n == 0 || n > s->chunk || pos > s->ctx - n ||
	    (cache && !e->cache) || (!cache && pos != 0))
		return KV_EINVAL;
	for (uint64_t i = 0; i < s->users * n; i++)
		if (tokens[i] >= s->vocab)
			return KV_EINVAL;
	int rc;
	if (cache && s->paged && (rc = take_blocks(e, tokens, n, pos)))
		return rc;
	uint64_t rows = s->users * n, d = s->dim;
	/* embeddings, widened from the weights' type (xn, not yet
	 * normed, holds a row of positions meanwhile) */
	uint64_t ws = s->wt == KV_DTYPE_F32 ? sizeof(float) : 2;
	for (uint64_t r = 0; r < rows; r++) {
		uint64_t tok = tokens[r];
		float *x = e->x + r * d, *p = e->xn + r * d;
		kv_weights_to_f32((const char *)e->wte + tok * d * ws, s->wt,
				  d, x);
		if (s->gpt2) {
			kv_weights_to_f32((const char *)e->wpe +
						  (pos + r % n) * d * ws,
					  s->wt, d, p);
			for (uint64_t i = 0; i < d; i++)
				x[i] += p[i];
		}
	}
	for (uint32_t l = 0; l < s->layers; l++) {
		const struct layer_w *w = &e->lw[l];
		norm_rows(s, e->x, e->xn, rows, 1, w->ln1_g, w->ln1_b);
		if (s->mla) {
			kv_mla_attention(&e->mla, &w->mla, l, e->xn, e->qkv,
					 e->att, n, pos, cache);
		} else {
			kv_linear(&e->ops, e->xn, rows, d, w->w_qkv, w->b_qkv,
				  e->qkv, s->qkv, 0, KV_ACT_NONE, NULL, NULL);
			store_kv(e, l, n, pos, cache);
			attention(e, l, n, pos, cache);
		}
		kv_linear(&e->ops, e->att, rows, s->att, w->w_o, w->b_o, e->x,
			  d, 1, KV_ACT_NONE, NULL, NULL);
		norm_rows(s, e->x, e->xn, rows, 1, w->ln2_g, w->ln2_b);
		if (s->gpt2)
			kv_linear(&e->ops, e->xn, rows, d, w->w_up, w->b_up,
				  e->h, s->ffn, 0, KV_ACT_GELU, NULL, NULL);
		else
			kv_linear(&e->ops, e->xn, rows, d, w->w_up, w->b_up,
				  e->h, s->ffn, 0, KV_ACT_SWIGLU, w->w_gate,
				  w->b_gate);
		kv_linear(&e->ops, e->h, rows, s->ffn, w->w_down, w->b_down,
			  e->x, d, 1, KV_ACT_NONE, NULL, NULL);
	}
	/* the last token of each sequence through the final norm and head */
	norm_rows(s, e->x + (n - 1) * d, e->xn, s->users, n, e->lnf_g,
		  e->lnf_b);
	kv_linear(&e->ops, e->xn, s->users, d, e->head, NULL, logits,
		  s->vocab, 0, KV_ACT_NONE, NULL, NULL);
	if (e->logit_scale != 1)
		for (uint64_t i = 0; i < s->users * s->vocab; i++)
			logits[i] *= e->logit_scale;
	e->passes[cache] += n;
	return 0;
}

int kv_engine_attend(struct kv_engine *e, uint64_t pos)
{
	if (!e->cache || pos >= e->s.ctx)
		return KV_EINVAL;
	for (uint32_t u = 0; e->s.paged && u < e->s.users; u++)
		if (pos >= kv_paged_len(e->pages, u))
			return KV_EINVAL;
	if (e->s.mla) {
		kv_mla_attend(&e->mla, pos);
		return 0;
	}
	for (uint32_t l = 0; l < e->s.layers; l++)
		attention(e, l, 1, pos, true);
	return 0;
}

struct fill_job {
	struct kv_engine *e;
	uint64_t ctx, key;
};

/* Head h of (layer, K or V, user, KV head) gets the values of stream
 * indices h ctx hd + t hd + d, encoded a row at a time through a row of
 * the thread's scratch. */
static void fill_task(void *arg, unsigned tid, unsigned nth)
{
	const struct fill_job *j = arg;
	const struct kv_engine *e = j->e;
	const struct shape *s = &e->s;
	/* runs of ctx rows: a KV head's K or V, or an MLA layer's latents */
	uint64_t per = s->users * s->kv_heads;
	uint64_t heads = (uint64_t)s->layers * 2 * per;
	uint64_t hd = s->hd;
	if (s->mla) {
		heads = (uint64_t)s->layers * s->users;
		hd = (uint64_t)s->md.rank + s->md.rope;
	}
	uint64_t a = heads * tid / nth, b = heads * (tid + 1) / nth;
	/* a row of values, in the thread's attention scratch */
	float *x = s->mla ? NULL
			  : e->scores + tid * (uint64_t)s->qblock * s->group *
						kvp_score_width(s);
	for (uint64_t h = a; h < b; h++) {
		if (s->mla) { /* a layer's latents, contiguous f32 */
			float *p = (float *)(void *)e->cache + h * s->ctx * hd;
			for (uint64_t i = 0; i < j->ctx * hd; i++)
				p[i] = kv_rand_sym(j->key, h * s->ctx * hd + i);
			continue;
		}
		/* h is (layer, K/V, user, KV head): the same values in
		 * every layout and format */
		uint32_t l = (uint32_t)(h / (2 * per));
		int kv = (int)(h / per % 2);
		uint64_t r = h % per;
		for (uint64_t t = 0; t < j->ctx; t++) {
			uint64_t i0 = (h * s->ctx + t) * s->hd;
			for (uint32_t d = 0; d < s->hd; d++)
				x[d] = kv_rand_sym(j->key, i0 + d);
			kv_quant_encode(kv ? s->f.v : s->f.k, x, s->hd,
					kv_rows(e, l, r / s->kv_heads,
						(uint32_t)(r % s->kv_heads),
						kv, true, t));
		}
	}
}

/* Gives every sequence blocks for ctx positions, a block per sequence in
 * turn, as sequences decoded together take them: with several users the
 * blocks of each interleave in the pool. */
static int take_blocks_in_turn(struct kv_engine *e, uint64_t ctx)
{
	int rc;
	for (uint32_t u = 0; u < e->s.users; u++)
		kv_paged_release(e->pages, u);
	for (uint64_t p = 0; p < ctx; p += e->s.bs)
		for (uint32_t u = 0; u < e->s.users; u++) {
			uint64_t n = ctx - p < e->s.bs ? ctx - p : e->s.bs;
			if ((rc = kv_paged_append(e->pages, u, NULL, n)))
				return rc;
		}
	return 0;
}

int kv_engine_fill_cache(struct kv_engine *e, uint64_t ctx, uint64_t seed)
{
	if (!e->cache || ctx > e->s.ctx)
		return KV_EINVAL;
	int rc;
	if (e->s.paged && (rc = take_blocks_in_turn(e, ctx)))
		return rc;
	struct fill_job j = {e, ctx, kv_rand_key(seed, KV_STREAM_CACHE)};
	kv_pool_run(e->pool, fill_task, &j);
	return 0;
}

uint64_t kv_engine_weight_read_bytes(const struct kv_engine *e)
{
	const struct shape *s = &e->s;
	/* nothing here overflows: the engine's allocation, which holds all
	 * of it, was computed with checks; every weight, matrix or vector
	 * (norms, biases), is read in the weights' type */
	uint64_t mats = (s->mla ? kv_mla_layer_floats(&s->md)
				: s->dim * s->qkv) +
			s->att * s->dim +
			s->dim * s->ffn * (s->gpt2 ? 1 : 2) + s->ffn * s->dim;
	uint64_t vecs = s->dim * (s->gpt2 ? 4 : 2); /* norms */
	if (s->qkv_bias)
		vecs += s->qkv;
	if (s->qk_norm)
		vecs += 2ULL * s->hd;
	if (s->o_bias)
		vecs += s->dim;
	if (s->mlp_bias)
		vecs += s->ffn * (s->gpt2 ? 1 : 2) + s->dim;
	uint64_t wsize = s->wt == KV_DTYPE_F32 ? sizeof(float) : 2;
	return ((mats + vecs) * s->layers + s->dim * s->vocab +
		s->dim * (s->gpt2 ? 2 : 1)) *
	       wsize;
}

uint64_t kv_engine_cache_read_bytes(const struct kv_engine *e, uint64_t pos)
{
	uint64_t per = e->s.mla ? (uint64_t)e->s.layers *
					  (e->s.md.rank + e->s.md.rope) *
					  sizeof(float)
				: (uint64_t)e->s.layers * e->s.kv_heads *
					  (e->s.f.krow + e->s.f.vrow);
	return per * e->s.users * (pos + 1);
}

double kv_engine_flops(const struct kv_engine *e, uint64_t n, uint64_t pos)
{
	const struct shape *s = &e->s;
	double rows = (double)s->users * (double)n;
	double mat = (s->mla ? kv_mla_row_macs(&s->md)
			     : (double)s->dim * (double)s->qkv) +
		     (double)s->att * (double)s->dim +
		     (double)s->dim * (double)s->ffn * (s->gpt2 ? 1 : 2) +
		     (double)s->ffn * (double)s->dim;
	/* query t attends to pos + t + 1 positions: sum over the chunk */
	double seen = (double)n * (double)pos + (double)n * (double)(n + 1) / 2;
	/* MLA: the absorbed form with a cache, the plain one without */
	double head = s->mla ? kv_mla_pos_macs(&s->md, s->cache) / 2
			     : (double)s->hd;
	double attn = 2.0 * s->heads * head * seen * s->users;
	return 2.0 * (mat * rows * s->layers + attn * s->layers +
		      (double)s->dim * (double)s->vocab * s->users);
}

double kv_engine_attend_flops(const struct kv_engine *e, uint64_t pos)
{
	const struct shape *s = &e->s;
	/* q k and the weighted sum of v over pos + 1 positions, every head;
	 * MLA: q c and the weighted sum of latents */
	double head = s->mla ? kv_mla_pos_macs(&s->md, true)
			     : 2.0 * (double)s->hd;
	return 2.0 * s->heads * head * (double)(pos + 1) * s->users *
	       s->layers;
}

uint64_t kv_engine_users(const struct kv_engine *e)
{
	return e->s.users;
}

uint64_t kv_engine_passes(const struct kv_engine *e, bool cache)
{
	return e->passes[cache];
}

const struct kv_model *kv_engine_get_model(const struct kv_engine *e)
{
	return e->model;
}

uint64_t kv_engine_vocab(const struct kv_engine *e)
{
	return e->s.vocab;
}

uint64_t kv_engine_cache_bytes(const struct kv_engine *e)
{
	return e->cache ? e->cache_bytes : 0;
}

uint64_t kv_engine_cache_token_bytes(const struct kv_engine *e)
{
	if (e->s.paged)
		return e->cache_bytes / (e->s.pool * e->s.bs);
	return e->cache ? e->cache_bytes / (e->s.users * e->s.ctx) : 0;
}

uint64_t kv_engine_block_bytes(const struct kv_engine *e)
{
	return e->s.paged ? e->cache_bytes / e->s.pool : 0;
}

void kv_engine_paged_stats(const struct kv_engine *e,
			   struct kv_paged_stats *st)
{
	memset(st, 0, sizeof *st);
	if (e->pages)
		kv_paged_get_stats(e->pages, st);
}

int kv_engine_prefix_match(struct kv_engine *e, uint32_t user,
			   const uint32_t *tokens, uint64_t n,
			   uint64_t *cached)
{
	*cached = 0;
	if (!e->s.paged || user >= e->s.users || n > e->s.ctx)
		return KV_EINVAL;
	*cached = kv_paged_match(e->pages, user, tokens, n);
	return 0;
}

int kv_engine_prefill(struct kv_engine *e, const uint32_t *tokens,
		      uint64_t n, uint64_t pos, float *logits)
{
	const struct shape *s = &e->s;
	uint64_t U = s->users;
	if (n == 0)
		return KV_EINVAL;
	if (!s->bs && (U == 1 || n <= s->chunk)) {
		/* contiguous text: chunks of max_chunk in place */
		for (uint64_t done = 0; done < n;) {
			uint64_t c = n - done < s->chunk ? n - done : s->chunk;
			int rc = U == 1 ? kv_engine_forward(e, tokens + done, c,
							    pos + done, true,
							    logits)
					: kv_engine_forward(e, tokens, c, pos,
							    true, logits);
			if (rc)
				return rc;
			done += c;
		}
		return 0;
	}
	if (!s->bs)
		return KV_EINVAL;
	for (uint64_t done = 0; done < n;) {
		uint64_t p = pos + done, c = n - done;
		uint64_t edge = (p / s->bs + 1) * s->bs - p;
		c = c < edge ? c : edge;
		c = c < s->chunk ? c : s->chunk;
		for (uint64_t u = 0; u < U; u++)
			memcpy(e->tokbuf + u * c, tokens + u * n + done,
			       c * sizeof *tokens);
		int rc = kv_engine_forward(e, e->tokbuf, c, p, true, logits);
		if (rc)
			return rc;
		done += c;
	}
	return 0;
}

bool kv_engine_set_simd(struct kv_engine *e, bool on)
{
	e->ops.simd = on; /* the MLA block reads the same */
	if (e->s.mla)
		return kv_mla_has_simd(e->s.md.rank, e->s.md.rope);
	if (e->s.f.k == KV_DTYPE_F32 && e->s.f.v == KV_DTYPE_F32)
		return kv_attn_has_simd(e->s.hd);
	return kv_attnq_has_simd(e->s.hd);
}
