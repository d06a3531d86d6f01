/*
 * mla.c - multi-head latent attention, as DeepSeek V2/V3 define it in
 * their Hugging Face reference: q straight from the residual (q_proj) or
 * through q_a_proj, an RMSNorm and q_b_proj; kv_a_proj_with_mqa giving the
 * latent and one rotary key shared by every head; an RMSNorm on the
 * latent; kv_b_proj up to each head's key (nope part) and value; scores
 * scaled by 1 / sqrt(nope + rope). Yarn's frequency correction and its
 * mscale are left out: the rotary part turns with rope_theta alone.
 *
 * Rotary layout: the reference reads q_pe and k_pe as interleaved pairs,
 * moves the even elements before the odd ones, then rotates halves. Here
 * the pairs (x[2i], x[2i+1]) turn in place by p theta^(-2i/rope): the
 * same values, in a fixed other order of the rope elements, the same for
 * queries and keys, so every score is the reference's.
 *
 * The cache keeps the latent and the rotated key (rank + rope floats per
 * token and layer). With the cache the attention is absorbed: q_nope of
 * head h times W_UK_h gives a query in latent space, a score is
 * q_lat . c + q_rope . k_rope, the weighted sum of latents times W_UV_h is
 * the head's output; the latent rows are read once for all heads.
 * Without the cache every position's K and V are up-projected and each
 * head attends the plain way, so the two forms check each other.
 */
#include <cblas.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "engine_int.h"
#include "simd.h"
#include "kv/layout.h"
#include "kvquant.h"
#include "mla.h"

enum { Q_W, QA_W, QA_G, QB_W, KVA_W, KVA_G, KVB_W };

/* --- shape --- */

bool kv_mla_wanted(const struct kv_model *m, const struct kv_engine_opts *o)
{
	return m->kv_lora_rank != 0 || o->mla_rank != 0;
}

int kv_mla_model(const struct kv_model *m, const struct kv_engine_opts *o,
		 struct kv_model *c, char *err)
{
	const struct kv_layer *l0 = &m->layers[0];
	bool cfg = m->kv_lora_rank != 0; /* the config is MLA itself */
	uint32_t hs = cfg ? m->qk_nope_dim + m->qk_rope_dim : l0->head_dim_k;
	uint32_t rank = o->mla_rank ? o->mla_rank : m->kv_lora_rank;
	uint32_t rope = o->mla_rope ? o->mla_rope
			: cfg	    ? m->qk_rope_dim
				    : hs / 2 & ~1u;
	if (o->kv_heads) {
		snprintf(err, KV_ERRLEN,
			 "%s: kv-heads: an MLA layer keeps one latent for all "
			 "%u heads, got %u",
			 m->name, l0->q_heads, o->kv_heads);
		return KV_EINVAL;
	}
	if (rank == 0 || rank > m->hidden) {
		snprintf(err, KV_ERRLEN,
			 "%s: mla: the latent rank must be in 1..%llu (the "
			 "hidden size), got %u",
			 m->name, (unsigned long long)m->hidden, rank);
		return KV_EINVAL;
	}
	if (rope < 2 || rope % 2 || rope > hs) {
		snprintf(err, KV_ERRLEN,
			 "%s: %s: the rotary key needs an even size in 2..%u "
			 "(the head size), got %u",
			 m->name, cfg && !o->mla_rope ? "qk_rope_head_dim"
						       : "mla-rope",
			 hs, rope);
		return KV_EINVAL;
	}
	c->kv_lora_rank = rank;
	c->qk_rope_dim = rope;
	c->qk_nope_dim = cfg ? m->qk_nope_dim : hs;
	c->v_head_dim = cfg ? m->v_head_dim : l0->head_dim_v;
	c->q_lora_rank = cfg ? m->q_lora_rank : 0;
	c->head_dim = c->qk_nope_dim + rope;
	c->head_dim_v = c->v_head_dim;
	c->n_kv_heads = 1;
	/* every MLP dense, of the dense layers' width */
	c->n_experts = c->n_experts_active = c->n_shared_experts = 0;
	c->shared_ffn_dim = 0;
	c->n_mtp_layers = 0;
	if (o->mla_rank) {
		size_t len = strlen(c->name);
		if (len < sizeof c->name - 16)
			snprintf(c->name + len, sizeof c->name - len, "+mla%u",
				 rank);
	}
	for (uint32_t i = 0; i < c->n_layers; i++) {
		struct kv_layer *l = &c->layers[i];
		l->attn = KV_ATTN_MLA;
		l->q_heads = l0->q_heads;
		l->kv_heads = 1;
		l->head_dim_k = rank + rope;
		l->head_dim_v = 0;
		l->window = 0;
		l->mlp = KV_MLP_DENSE;
		l->ffn_dim = cfg ? m->intermediate : l0->ffn_dim;
	}
	return 0;
}

void kv_mla_dims_of(const struct kv_model *eff, uint64_t users, uint64_t ctx,
		    uint64_t chunk, uint32_t threads, uint32_t nsplit,
		    struct kv_mla_dims *d)
{
	*d = (struct kv_mla_dims){
		.dim = eff->hidden,
		.layers = eff->n_layers,
		.heads = eff->layers[0].q_heads,
		.rank = eff->kv_lora_rank,
		.rope = eff->qk_rope_dim,
		.nope = eff->qk_nope_dim,
		.vdim = eff->v_head_dim,
		.qrank = eff->q_lora_rank,
		.users = users,
		.ctx = ctx,
		.chunk = chunk,
		.threads = threads,
		.nsplit = nsplit,
		.eps = (float)eff->norm_eps,
	};
}

size_t kv_mla_tensors(const struct kv_mla_dims *d, struct kv_mla_w *w,
		      struct kv_mla_tensor *t)
{
	uint64_t qw = (uint64_t)d->heads * (d->nope + d->rope);
	uint64_t kw = (uint64_t)d->heads * (d->nope + d->vdim);
	size_t n = 0;
#define ADD(s, g, lin, r, c, dst)                                        \
	do {                                                             \
		if (t)                                                   \
			t[n] = (struct kv_mla_tensor){(s), (g), (lin), (r), \
						      (c), w ? (dst) : NULL}; \
		n++;                                                     \
	} while (0)
	if (d->qrank) {
		ADD(QA_W, false, true, d->dim, d->qrank, &w->w_qa);
		ADD(QA_G, true, false, 1, d->qrank, &w->qa_g);
		ADD(QB_W, false, true, d->qrank, qw, &w->w_qb);
	} else {
		ADD(Q_W, false, true, d->dim, qw, &w->w_q);
	}
	ADD(KVA_W, false, true, d->dim, (uint64_t)d->rank + d->rope,
	    &w->w_kva);
	ADD(KVA_G, true, false, 1, d->rank, &w->kva_g);
	/* (rank, heads (nope + vdim)), read by the heads' own products */
	ADD(KVB_W, false, false, d->rank, kw, &w->w_kvb);
#undef ADD
	return n;
}

uint64_t kv_mla_layer_floats(const struct kv_mla_dims *d)
{
	struct kv_mla_tensor t[KV_MLA_TENSORS];
	size_t n = kv_mla_tensors(d, NULL, t);
	uint64_t f = 0;
	for (size_t i = 0; i < n; i++)
		f += t[i].rows * t[i].cols;
	return f;
}

/* Floats per thread of the work buffer: scores, then m and l. */
static uint64_t work_floats(const struct kv_mla_dims *d)
{
	uint64_t s = (uint64_t)d->heads * (KV_MLA_BLOCK + 1);
	if (KV_MLA_QROWS * d->chunk > s)
		s = KV_MLA_QROWS * d->chunk;
	return (s + 2ULL * d->heads + 15) / 16 * 16;
}

/* a x b, setting *over when it does not fit in 64 bits. */
static uint64_t mul(uint64_t a, uint64_t b, bool *over)
{
	uint64_t r = 0;
	if (kv_mul(a, b, &r))
		*over = true;
	return r;
}

/* The scratch pieces: floats of each, where they go (m NULL: sizes).
 * Sets *over when a size overflows. */
static size_t pieces(const struct kv_mla_dims *d, struct kv_mla *m,
		     uint64_t *f, float ***dst, bool *over)
{
	uint64_t D = (uint64_t)d->rank + d->rope, h = d->heads;
	uint64_t rows = mul(d->users, d->chunk, over);
	uint64_t rh = mul(rows, h, over);
	size_t n = 0;
#define PUT(x, p)                            \
	do {                                 \
		f[n] = (x);                  \
		dst[n] = m ? (p) : NULL;     \
		n++;                         \
	} while (0)
	PUT(mul(rows, d->qrank, over), &m->qa);
	PUT(mul(rows, D, over), &m->ckv);
	PUT(mul(rows, d->rank, over), &m->lat);
	PUT(mul(rh, (uint64_t)d->nope + d->vdim, over), &m->kvb);
	PUT(mul(rh, D, over), &m->qc);
	PUT(mul(rh, d->rank, over), &m->olat);
	PUT(mul(mul(d->users, (uint64_t)d->nsplit * h, over), d->rank + 2ULL,
		over),
	    &m->part);
	PUT(mul(d->threads, work_floats(d), over), &m->work);
#undef PUT
	return n;
}

int kv_mla_scratch_floats(const struct kv_mla_dims *d, uint64_t *out)
{
	uint64_t f[8];
	float **dst[8];
	bool over = false;
	size_t n = pieces(d, NULL, f, dst, &over);
	*out = 0;
	for (size_t i = 0; i < n && !over; i++)
		if (f[i] > UINT64_MAX - 16 ||
		    kv_add(*out, (f[i] + 15) / 16 * 16, out))
			over = true;
	return over ? KV_ERANGE : 0;
}

void kv_mla_init(struct kv_mla *m, const struct kv_mla_dims *d,
		 float *scratch, const struct kv_ops *ops, const float *rope,
		 float *cache)
{
	uint64_t f[8];
	float **dst[8];
	m->d = *d;
	m->ops = ops;
	m->rope = rope;
	m->cache = cache;
	bool over = false; /* ruled out by kv_mla_scratch_floats() */
	size_t n = pieces(d, m, f, dst, &over);
	for (size_t i = 0; i < n; i++) {
		*dst[i] = scratch;
		scratch += (f[i] + 15) / 16 * 16;
	}
}

double kv_mla_row_macs(const struct kv_mla_dims *d)
{
	double qw = (double)d->heads * (d->nope + d->rope);
	double q = d->qrank ? (double)d->dim * d->qrank + (double)d->qrank * qw
			    : (double)d->dim * qw;
	return q + (double)d->dim * (d->rank + d->rope) +
	       (double)d->rank * d->heads * (d->nope + d->vdim);
}

double kv_mla_pos_macs(const struct kv_mla_dims *d, bool absorbed)
{
	return absorbed ? 2.0 * d->rank + d->rope
			: (double)d->nope + d->rope + d->vdim;
}

/* --- the latent kernel --- */

/* One block of nb rows: the scores s (h, KV_MLA_BLOCK) are in; turns them
 * into weights under the running max and adds the block's latents. */
static void block_c(uint32_t h, const float *cb, uint32_t nb, uint32_t D,
		    uint32_t rank, float *s, float *o, float *m, float *l)
{
	for (uint32_t i = 0; i < h; i++) {
		float *si = s + i * KV_MLA_BLOCK, *oi = o + (uint64_t)i * rank;
		float mx = m[i];
		for (uint32_t b = 0; b < nb; b++)
			mx = si[b] > mx ? si[b] : mx;
		float alpha = expf(m[i] - mx); /* 0 on the first block */
		l[i] *= alpha;
		for (uint32_t d = 0; d < rank; d++)
			oi[d] *= alpha;
		m[i] = mx;
		for (uint32_t b = 0; b < nb; b++) {
			float w = expf(si[b] - mx);
			const float *cr = cb + (uint64_t)b * D;
			l[i] += w;
			for (uint32_t d = 0; d < rank; d++)
				oi[d] += w * cr[d];
		}
	}
}

static void part_c(const float *q, uint32_t h, const float *c, uint64_t n,
		   uint32_t rank, uint32_t rope, float *s, float *o, float *m,
		   float *l)
{
	uint32_t D = rank + rope;
	for (uint32_t i = 0; i < h; i++) {
		m[i] = -INFINITY;
		l[i] = 0;
	}
	memset(o, 0, sizeof *o * h * rank);
	for (uint64_t p0 = 0; p0 < n; p0 += KV_MLA_BLOCK) {
		uint32_t nb = n - p0 < KV_MLA_BLOCK ? (uint32_t)(n - p0)
						    : KV_MLA_BLOCK;
		const float *cb = c + p0 * D;
		for (uint32_t i = 0; i < h; i++)
			for (uint32_t b = 0; b < nb; b++) {
				const float *qi = q + (uint64_t)i * D;
				const float *cr = cb + (uint64_t)b * D;
				float acc = 0;
				for (uint32_t d = 0; d < D; d++)
					acc += qi[d] * cr[d];
				s[i * KV_MLA_BLOCK + b] = acc;
			}
		block_c(h, cb, nb, D, rank, s, o, m, l);
	}
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_MLA_AVX2 1
#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static float dot_avx2(const float *a, const float *b, uint32_t D)
{
	__m256 acc = _mm256_setzero_ps();
	for (uint32_t d = 0; d < D; d += 8)
		acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + d),
				      _mm256_loadu_ps(b + d), acc);
	return kv_hsum(acc);
}

/* Scores of two heads against four rows: eight sums in flight, each
 * load of a row serving both heads. */
AVX2 static void scores_2x4(const float *q0, const float *q1, const float *r,
			    uint32_t D, float *s0, float *s1)
{
	const float *r1 = r + D, *r2 = r1 + D, *r3 = r2 + D;
	__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
	__m256 a4 = a0, a5 = a0, a6 = a0, a7 = a0;
	for (uint32_t d = 0; d < D; d += 8) {
		__m256 x0 = _mm256_loadu_ps(q0 + d), x1 = _mm256_loadu_ps(q1 + d);
		__m256 c = _mm256_loadu_ps(r + d);
		a0 = _mm256_fmadd_ps(x0, c, a0);
		a4 = _mm256_fmadd_ps(x1, c, a4);
		c = _mm256_loadu_ps(r1 + d);
		a1 = _mm256_fmadd_ps(x0, c, a1);
		a5 = _mm256_fmadd_ps(x1, c, a5);
		c = _mm256_loadu_ps(r2 + d);
		a2 = _mm256_fmadd_ps(x0, c, a2);
		a6 = _mm256_fmadd_ps(x1, c, a6);
		c = _mm256_loadu_ps(r3 + d);
		a3 = _mm256_fmadd_ps(x0, c, a3);
		a7 = _mm256_fmadd_ps(x1, c, a7);
	}
	__m256 t = kv_hsum8(a0, a1, a2, a3, a4, a5, a6, a7);
	_mm_storeu_ps(s0, _mm256_castps256_ps128(t));
	_mm_storeu_ps(s1, _mm256_extractf128_ps(t, 1));
}

/* Scores of every head against the block's nb rows into s. */
AVX2 static void scores_avx2(const float *q, uint32_t h, const float *cb,
			     uint32_t nb, uint32_t D, float *s)
{
	uint32_t i = 0;
	for (; i + 2 <= h; i += 2) {
		const float *q0 = q + (uint64_t)i * D, *q1 = q0 + D;
		float *s0 = s + i * KV_MLA_BLOCK, *s1 = s0 + KV_MLA_BLOCK;
		uint32_t b = 0;
		for (; b + 4 <= nb; b += 4)
			scores_2x4(q0, q1, cb + (uint64_t)b * D, D, s0 + b,
				   s1 + b);
		for (; b < nb; b++) {
			s0[b] = dot_avx2(q0, cb + (uint64_t)b * D, D);
			s1[b] = dot_avx2(q1, cb + (uint64_t)b * D, D);
		}
	}
	for (; i < h; i++)
		for (uint32_t b = 0; b < nb; b++)
			s[i * KV_MLA_BLOCK + b] = dot_avx2(
				q + (uint64_t)i * D, cb + (uint64_t)b * D, D);
}

/* Eight values of one head's sum: o = alpha o + w c[:, d..d+7]. */
AVX2 static void sum_1x8(float *o, float alpha, const float *w,
			 const float *cb, uint32_t nb, uint32_t D)
{
	__m256 acc = _mm256_mul_ps(_mm256_loadu_ps(o), _mm256_set1_ps(alpha));
	for (uint32_t b = 0; b < nb; b++)
		acc = _mm256_fmadd_ps(_mm256_set1_ps(w[b]),
				      _mm256_loadu_ps(cb + (uint64_t)b * D),
				      acc);
	_mm256_storeu_ps(o, acc);
}

/* Sixteen values of four heads' sums: each load of a latent serves the
 * four heads. o rows rank apart, w rows KV_MLA_BLOCK apart. */
AVX2 static void sum_4x16(float *o, uint32_t rank, const float *al,
			  const float *w, const float *cb, uint32_t nb,
			  uint32_t D)
{
	float *o1 = o + rank, *o2 = o1 + rank, *o3 = o2 + rank;
	const float *w1 = w + KV_MLA_BLOCK, *w2 = w1 + KV_MLA_BLOCK,
		    *w3 = w2 + KV_MLA_BLOCK;
	__m256 x0 = _mm256_set1_ps(al[0]), x1 = _mm256_set1_ps(al[1]);
	__m256 x2 = _mm256_set1_ps(al[2]), x3 = _mm256_set1_ps(al[3]);
	__m256 a0 = _mm256_mul_ps(_mm256_loadu_ps(o), x0);
	__m256 b0 = _mm256_mul_ps(_mm256_loadu_ps(o + 8), x0);
	__m256 a1 = _mm256_mul_ps(_mm256_loadu_ps(o1), x1);
	__m256 b1 = _mm256_mul_ps(_mm256_loadu_ps(o1 + 8), x1);
	__m256 a2 = _mm256_mul_ps(_mm256_loadu_ps(o2), x2);
	__m256 b2 = _mm256_mul_ps(_mm256_loadu_ps(o2 + 8), x2);
	__m256 a3 = _mm256_mul_ps(_mm256_loadu_ps(o3), x3);
	__m256 b3 = _mm256_mul_ps(_mm256_loadu_ps(o3 + 8), x3);
	for (uint32_t b = 0; b < nb; b++) {
		const float *r = cb + (uint64_t)b * D;
		__m256 c0 = _mm256_loadu_ps(r), c1 = _mm256_loadu_ps(r + 8);
		__m256 v = _mm256_set1_ps(w[b]);
		a0 = _mm256_fmadd_ps(v, c0, a0);
		b0 = _mm256_fmadd_ps(v, c1, b0);
		v = _mm256_set1_ps(w1[b]);
		a1 = _mm256_fmadd_ps(v, c0, a1);
		b1 = _mm256_fmadd_ps(v, c1, b1);
		v = _mm256_set1_ps(w2[b]);
		a2 = _mm256_fmadd_ps(v, c0, a2);
		b2 = _mm256_fmadd_ps(v, c1, b2);
		v = _mm256_set1_ps(w3[b]);
		a3 = _mm256_fmadd_ps(v, c0, a3);
		b3 = _mm256_fmadd_ps(v, c1, b3);
	}
	_mm256_storeu_ps(o, a0);
	_mm256_storeu_ps(o + 8, b0);
	_mm256_storeu_ps(o1, a1);
	_mm256_storeu_ps(o1 + 8, b1);
	_mm256_storeu_ps(o2, a2);
	_mm256_storeu_ps(o2 + 8, b2);
	_mm256_storeu_ps(o3, a3);
	_mm256_storeu_ps(o3 + 8, b3);
}

/* Every head's o = alpha o + w c[:, :rank] over the block. */
AVX2 static void sums_avx2(float *o, uint32_t h, uint32_t rank,
			   const float *al, const float *s, const float *cb,
			   uint32_t nb, uint32_t D)
{
	uint32_t i = 0;
	for (; i + 4 <= h; i += 4) {
		float *oi = o + (uint64_t)i * rank;
		const float *wi = s + i * KV_MLA_BLOCK;
		uint32_t d = 0;
		for (; d + 16 <= rank; d += 16)
			sum_4x16(oi + d, rank, al + i, wi, cb + d, nb, D);
		for (; d < rank; d += 8)
			for (uint32_t k = 0; k < 4; k++)
				sum_1x8(oi + (uint64_t)k * rank + d, al[i + k],
					wi + k * KV_MLA_BLOCK, cb + d, nb, D);
	}
	for (; i < h; i++)
		for (uint32_t d = 0; d < rank; d += 8)
			sum_1x8(o + (uint64_t)i * rank + d, al[i],
				s + i * KV_MLA_BLOCK, cb + d, nb, D);
}

#define HAVE_MLA_AVX512 1
#define AVX512 __attribute__((target("avx512f,avx2,fma")))

/* Half of a 512-bit register added to the other half. */
AVX512 static inline __m256 fold(__m512 a)
{
	__m256 hi = _mm256_castpd_ps(
		_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1));
	return _mm256_add_ps(_mm512_castps512_ps256(a), hi);
}

/* Scores of four heads against four rows, sixteen sums in flight; each
 * load of a row serves the four heads. s rows KV_MLA_BLOCK apart. */
AVX512 static void scores_4x4(const float *q, const float *r, uint32_t D,
			      float *s)
{
	const float *q1 = q + D, *q2 = q1 + D, *q3 = q2 + D;
	const float *r1 = r + D, *r2 = r1 + D, *r3 = r2 + D;
	__m512 a00 = _mm512_setzero_ps(), a01 = a00, a02 = a00, a03 = a00;
	__m512 a10 = a00, a11 = a00, a12 = a00, a13 = a00;
	__m512 a20 = a00, a21 = a00, a22 = a00, a23 = a00;
	__m512 a30 = a00, a31 = a00, a32 = a00, a33 = a00;
	for (uint32_t d = 0; d < D; d += 16) {
		__m512 x0 = _mm512_loadu_ps(q + d), x1 = _mm512_loadu_ps(q1 + d);
		__m512 x2 = _mm512_loadu_ps(q2 + d), x3 = _mm512_loadu_ps(q3 + d);
		__m512 c = _mm512_loadu_ps(r + d);
		a00 = _mm512_fmadd_ps(x0, c, a00);
		a10 = _mm512_fmadd_ps(x1, c, a10);
		a20 = _mm512_fmadd_ps(x2, c, a20);
		a30 = _mm512_fmadd_ps(x3, c, a30);
		c = _mm512_loadu_ps(r1 + d);
		a01 = _mm512_fmadd_ps(x0, c, a01);
		a11 = _mm512_fmadd_ps(x1, c, a11);
		a21 = _mm512_fmadd_ps(x2, c, a21);
		a31 = _mm512_fmadd_ps(x3, c, a31);
		c = _mm512_loadu_ps(r2 + d);
		a02 = _mm512_fmadd_ps(x0, c, a02);
		a12 = _mm512_fmadd_ps(x1, c, a12);
		a22 = _mm512_fmadd_ps(x2, c, a22);
		a32 = _mm512_fmadd_ps(x3, c, a32);
		c = _mm512_loadu_ps(r3 + d);
		a03 = _mm512_fmadd_ps(x0, c, a03);
		a13 = _mm512_fmadd_ps(x1, c, a13);
		a23 = _mm512_fmadd_ps(x2, c, a23);
		a33 = _mm512_fmadd_ps(x3, c, a33);
	}
	__m256 t = kv_hsum8(fold(a00), fold(a01), fold(a02), fold(a03),
			 fold(a10), fold(a11), fold(a12), fold(a13));
	_mm_storeu_ps(s, _mm256_castps256_ps128(t));
	_mm_storeu_ps(s + KV_MLA_BLOCK, _mm256_extractf128_ps(t, 1));
	t = kv_hsum8(fold(a20), fold(a21), fold(a22), fold(a23), fold(a30),
		  fold(a31), fold(a32), fold(a33));
	_mm_storeu_ps(s + 2 * KV_MLA_BLOCK, _mm256_castps256_ps128(t));
	_mm_storeu_ps(s + 3 * KV_MLA_BLOCK, _mm256_extractf128_ps(t, 1));
}

AVX512 static void scores_avx512(const float *q, uint32_t h, const float *cb,
				 uint32_t nb, uint32_t D, float *s)
{
	uint32_t i = 0;
	for (; i + 4 <= h; i += 4) {
		const float *qi = q + (uint64_t)i * D;
		float *si = s + i * KV_MLA_BLOCK;
		uint32_t b = 0;
		for (; b + 4 <= nb; b += 4)
			scores_4x4(qi, cb + (uint64_t)b * D, D, si + b);
		for (; b < nb; b++)
			for (uint32_t k = 0; k < 4; k++)
				si[k * KV_MLA_BLOCK + b] =
					dot_avx2(qi + (uint64_t)k * D,
						 cb + (uint64_t)b * D, D);
	}
	if (i < h)
		scores_avx2(q + (uint64_t)i * D, h - i, cb, nb, D,
			    s + i * KV_MLA_BLOCK);
}

/* Sixty-four values of four heads' sums: each load of a latent serves
 * the four heads. o rows rank apart, w rows KV_MLA_BLOCK apart. */
AVX512 static void sum_4x64(float *o, uint32_t rank, const float *al,
			    const float *w, const float *cb, uint32_t nb,
			    uint32_t D)
{
	__m512 acc[4][4];
	for (int k = 0; k < 4; k++) {
		__m512 x = _mm512_set1_ps(al[k]);
		for (int c = 0; c < 4; c++)
			acc[k][c] = _mm512_mul_ps(
				_mm512_loadu_ps(o + (uint64_t)k * rank + 16 * c),
				x);
	}
	for (uint32_t b = 0; b < nb; b++) {
		const float *r = cb + (uint64_t)b * D;
		__m512 c0 = _mm512_loadu_ps(r), c1 = _mm512_loadu_ps(r + 16);
		__m512 c2 = _mm512_loadu_ps(r + 32), c3 = _mm512_loadu_ps(r + 48);
		for (int k = 0; k < 4; k++) {
			__m512 v = _mm512_set1_ps(w[k * KV_MLA_BLOCK + b]);
			acc[k][0] = _mm512_fmadd_ps(v, c0, acc[k][0]);
			acc[k][1] = _mm512_fmadd_ps(v, c1, acc[k][1]);
			acc[k][2] = _mm512_fmadd_ps(v, c2, acc[k][2]);
			acc[k][3] = _mm512_fmadd_ps(v, c3, acc[k][3]);
		}
	}
	for (int k = 0; k < 4; k++)
		for (int c = 0; c < 4; c++)
			_mm512_storeu_ps(o + (uint64_t)k * rank + 16 * c,
					 acc[k][c]);
}

AVX512 static void sums_avx512(float *o, uint32_t h, uint32_t rank,
			       const float *al, const float *s,
			       const float *cb, uint32_t nb, uint32_t D)
{
	uint32_t i = 0;
	for (; i + 4 <= h; i += 4) {
		float *oi = o + (uint64_t)i * rank;
		const float *wi = s + i * KV_MLA_BLOCK;
		uint32_t d = 0;
		for (; d + 64 <= rank; d += 64)
			sum_4x64(oi + d, rank, al + i, wi, cb + d, nb, D);
		for (; d < rank; d += 8)
			for (uint32_t k = 0; k < 4; k++)
				sum_1x8(oi + (uint64_t)k * rank + d, al[i + k],
					wi + k * KV_MLA_BLOCK, cb + d, nb, D);
	}
	if (i < h)
		sums_avx2(o + (uint64_t)i * rank, h - i, rank, al + i,
			  s + i * KV_MLA_BLOCK, cb, nb, D);
}

/* The kernel a block at a time: the scores of every head, the online
 * softmax, then the weighted latents, while the block is in L1. al
 * holds h rescaling factors. */
typedef void scores_fn(const float *q, uint32_t h, const float *cb,
		       uint32_t nb, uint32_t D, float *s);
typedef void sums_fn(float *o, uint32_t h, uint32_t rank, const float *al,
		     const float *s, const float *cb, uint32_t nb, uint32_t D);

static void part_simd(const float *q, uint32_t h, const float *c,
		      uint64_t n, uint32_t rank, uint32_t rope, float *s,
		      float *al, float *o, float *m, float *l,
		      scores_fn *scores, sums_fn *sums)
{
	uint32_t D = rank + rope;
	for (uint32_t i = 0; i < h; i++) {
		m[i] = -INFINITY;
		l[i] = 0;
	}
	memset(o, 0, sizeof *o * h * rank);
	for (uint64_t p0 = 0; p0 < n; p0 += KV_MLA_BLOCK) {
		uint32_t nb = n - p0 < KV_MLA_BLOCK ? (uint32_t)(n - p0)
						    : KV_MLA_BLOCK;
		const float *cb = c + p0 * D;
		scores(q, h, cb, nb, D, s);
		for (uint32_t i = 0; i < h; i++) {
			float *si = s + i * KV_MLA_BLOCK, mx = m[i];
			for (uint32_t b = 0; b < nb; b++)
				mx = si[b] > mx ? si[b] : mx;
			al[i] = expf(m[i] - mx);
			l[i] = l[i] * al[i] + kv_exp_shift(si, nb, mx, true);
			m[i] = mx;
		}
		sums(o, h, rank, al, s, cb, nb, D);
	}
}
#endif

bool kv_mla_has_isa(enum kv_isa isa, uint32_t rank, uint32_t rope)
{
	switch (isa) {
	case KV_ISA_C:
		return true;
#ifdef HAVE_MLA_AVX2
	case KV_ISA_AVX2:
		return kv_attn_has_isa(KV_ISA_AVX2, 8) && rank % 8 == 0 &&
		       rope % 8 == 0;
	case KV_ISA_AVX512:
		return kv_attn_has_isa(KV_ISA_AVX512, 16) && rank % 16 == 0 &&
		       rope % 16 == 0;
#endif
	default:
		return false;
	}
}

bool kv_mla_has_simd(uint32_t rank, uint32_t rope)
{
	return kv_mla_has_isa(KV_ISA_AVX2, rank, rope);
}

void kv_mla_attn_part_isa(const float *q, uint32_t h, const float *c,
			  uint64_t n, uint32_t rank, uint32_t rope, float *s,
			  float *o, float *m, float *l, enum kv_isa isa)
{
	if (!kv_mla_has_isa(isa, rank, rope))
		isa = KV_ISA_C;
	switch (isa) {
#ifdef HAVE_MLA_AVX2
	case KV_ISA_AVX512:
		part_simd(q, h, c, n, rank, rope, s,
			  s + (uint64_t)h * KV_MLA_BLOCK, o, m, l,
			  scores_avx512, sums_avx512);
		return;
	case KV_ISA_AVX2:
		part_simd(q, h, c, n, rank, rope, s,
			  s + (uint64_t)h * KV_MLA_BLOCK, o, m, l,
			  scores_avx2, sums_avx2);
		return;
#endif
	default:
		part_c(q, h, c, n, rank, rope, s, o, m, l);
	}
}

void kv_mla_attn_part(const float *q, uint32_t h, const float *c,
		      uint64_t n, uint32_t rank, uint32_t rope, float *s,
		      float *o, float *m, float *l, bool simd)
{
	enum kv_isa isa = KV_ISA_C;
	if (simd && kv_mla_has_isa(KV_ISA_AVX512, rank, rope))
		isa = KV_ISA_AVX512;
	else if (simd)
		isa = KV_ISA_AVX2;
	kv_mla_attn_part_isa(q, h, c, n, rank, rope, s, o, m, l, isa);
}

/* --- the block --- */

float *kv_mla_rows(const struct kv_mla *m, uint32_t l, uint64_t u,
		   uint64_t n, bool cache)
{
	uint64_t D = (uint64_t)m->d.rank + m->d.rope;
	if (cache)
		return m->cache + ((uint64_t)l * m->d.users + u) * m->d.ctx * D;
	return m->ckv + u * n * D;
}

/* x = x / rms(x) * g over d values of each of `rows` rows `stride` apart,
 * the gains g in the weights' type wt. */
static void rms_rows(float *x, uint64_t rows, uint64_t stride, uint64_t d,
		     const void *g, enum kv_dtype wt, float eps)
{
	for (uint64_t r = 0; r < rows; r++) {
		float *xr = x + r * stride, ss = 0;
		for (uint64_t i = 0; i < d; i++)
			ss += xr[i] * xr[i];
		float inv = 1.0f / sqrtf(ss / (float)d + eps);
		for (uint64_t i = 0; i < d; i++)
			xr[i] = xr[i] * inv * kv_wval(g, i, wt);
	}
}

/* Turns the pairs (x[2i], x[2i+1]) of a rope-sized vector to position p. */
static void rotate(const struct kv_mla *m, float *x, uint64_t p)
{
	const float *cs = m->rope + p * m->d.rope;
	for (uint32_t i = 0; i < m->d.rope / 2; i++) {
		float c = cs[2 * i], sn = cs[2 * i + 1];
		float a = x[2 * i], b = x[2 * i + 1];
		x[2 * i] = a * c - b * sn;
		x[2 * i + 1] = b * c + a * sn;
	}
}

static float scale_of(const struct kv_mla_dims *d)
{
	return 1.0f / sqrtf((float)(d->nope + d->rope));
}

/* Per-head products with kv_b_proj, heads split over threads: the
 * absorbed form's queries to latent space and latent sums to values, or
 * the plain form's keys and values. */
enum head_what { HEAD_ABSORB, HEAD_OUT, HEAD_UP };

struct head_job {
	struct kv_mla *m;
	const struct kv_mla_w *w;
	const float *q;
	float *att;
	uint64_t rows;
	enum head_what what;
};

static void absorb_head(const struct head_job *j, uint32_t h)
{
	const struct kv_mla_dims *d = &j->m->d;
	uint64_t D = (uint64_t)d->rank + d->rope;
	uint64_t qw = (uint64_t)d->heads * (d->nope + d->rope);
	blasint ldw = (blasint)((uint64_t)d->heads * (d->nope + d->vdim));
	const float *uk = j->w->w_kvb + (uint64_t)h * (d->nope + d->vdim);
	const float *qh = j->q + (uint64_t)h * (d->nope + d->rope);
	float *qc = j->m->qc + h * D, sc = scale_of(d);
	if (d->nope == 0) {
		for (uint64_t r = 0; r < j->rows; r++)
			memset(qc + r * d->heads * D, 0,
			       d->rank * sizeof *qc);
	} else if (j->rows == 1) {
		cblas_sgemv(CblasRowMajor, CblasNoTrans, (blasint)d->rank,
			    (blasint)d->nope, sc, uk, ldw, qh, 1, 0, qc, 1);
	} else {
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans,
			    (blasint)j->rows, (blasint)d->rank,
			    (blasint)d->nope, sc, qh, (blasint)qw, uk, ldw, 0,
			    qc, (blasint)(d->heads * D));
	}
	for (uint64_t r = 0; r < j->rows; r++)
		for (uint32_t i = 0; i < d->rope; i++)
			qc[r * d->heads * D + d->rank + i] =
				sc * qh[r * qw + d->nope + i];
}

static void output_head(const struct head_job *j, uint32_t h)
{
	const struct kv_mla_dims *d = &j->m->d;
	blasint ldw = (blasint)((uint64_t)d->heads * (d->nope + d->vdim));
	const float *uv = j->w->w_kvb + (uint64_t)h * (d->nope + d->vdim) +
			  d->nope;
	const float *ol = j->m->olat + (uint64_t)h * d->rank;
	float *a = j->att + (uint64_t)h * d->vdim;
	if (j->rows == 1)
		cblas_sgemv(CblasRowMajor, CblasTrans, (blasint)d->rank,
			    (blasint)d->vdim, 1, uv, ldw, ol, 1, 0, a, 1);
	else
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
			    (blasint)j->rows, (blasint)d->vdim,
			    (blasint)d->rank, 1, ol,
			    (blasint)((uint64_t)d->heads * d->rank), uv, ldw,
			    0, a, (blasint)((uint64_t)d->heads * d->vdim));
}

/* The plain form's keys (nope) and values of head h for every row. */
static void up_head(const struct head_job *j, uint32_t h)
{
	const struct kv_mla_dims *d = &j->m->d;
	uint64_t off = (uint64_t)h * (d->nope + d->vdim);
	blasint ldw = (blasint)((uint64_t)d->heads * (d->nope + d->vdim));
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
		    (blasint)j->rows, (blasint)(d->nope + d->vdim),
		    (blasint)d->rank, 1, j->m->lat, (blasint)d->rank,
		    j->w->w_kvb + off, ldw, 0, j->m->kvb + off, ldw);
}

static void head_task(void *arg, unsigned tid, unsigned nth)
{
	const struct head_job *j = arg;
	uint32_t H = j->m->d.heads;
	uint32_t h0 = (uint32_t)((uint64_t)H * tid / nth);
	uint32_t h1 = (uint32_t)((uint64_t)H * (tid + 1) / nth);
	for (uint32_t h = h0; h < h1; h++) {
		if (j->what == HEAD_ABSORB)
			absorb_head(j, h);
		else if (j->what == HEAD_OUT)
			output_head(j, h);
		else
			up_head(j, h);
	}
}

/* The latent attention of one layer: a token per task (a chunk), or a
 * range of positions of one token per task (a decode step, split). */
struct lat_job {
	struct kv_mla *m;
	uint32_t layer;
	uint64_t n, pos;
	uint32_t parts; /* ranges per sequence, n == 1 */
	uint64_t tasks;
	_Atomic uint64_t next;
};

static void normalise(float *o, const float *l, uint32_t h, uint32_t rank)
{
	for (uint32_t i = 0; i < h; i++)
		for (uint32_t d = 0; d < rank; d++)
			o[(uint64_t)i * rank + d] /= l[i];
}

static void lat_task(void *arg, unsigned tid, unsigned nth)
{
	struct lat_job *j = arg;
	struct kv_mla *m = j->m;
	const struct kv_mla_dims *d = &m->d;
	uint32_t H = d->heads, rank = d->rank;
	uint64_t D = (uint64_t)rank + d->rope, wf = work_floats(d);
	float *s = m->work + tid * wf, *mm = s + wf - 2 * H, *ll = mm + H;
	(void)nth;
	for (;;) {
		uint64_t i = atomic_fetch_add(&j->next, 1);
		if (i >= j->tasks)
			break;
		uint64_t u = j->n == 1 ? i / j->parts : i / j->n;
		uint64_t t = j->n == 1 ? 0 : i % j->n, row = u * j->n + t;
		const float *c = kv_mla_rows(m, j->layer, u, 0, true);
		const float *q = m->qc + row * H * D;
		uint64_t len = j->pos + t + 1;
		if (j->parts == 1) {
			float *o = m->olat + row * H * rank;
			kv_mla_attn_part(q, H, c, len, rank, d->rope, s, o, mm,
					 ll, m->ops->simd);
			normalise(o, ll, H, rank);
			continue;
		}
		uint64_t p = i % j->parts;
		uint64_t a = len * p / j->parts, b = len * (p + 1) / j->parts;
		float *o = m->part + i * H * (rank + 2ULL);
		float *pm = o + (uint64_t)H * rank, *pl = pm + H;
		if (b > a) {
			kv_mla_attn_part(q, H, c + a * D, b - a, rank, d->rope,
					 s, o, pm, pl, m->ops->simd);
		} else { /* an empty range weighs nothing */
			kv_attn_part_empty(pm, pl, H);
		}
	}
}

/* Merges the ranges of a split step into olat, normalised. */
static void merge(struct kv_mla *m, uint32_t parts)
{
	const struct kv_mla_dims *d = &m->d;
	uint32_t H = d->heads, rank = d->rank;
	uint64_t stride = (uint64_t)H * (rank + 2); /* of a part */
	for (uint64_t u = 0; u < d->users; u++)
		kv_attn_merge_parts(m->olat + u * H * rank,
				    m->part + u * parts * stride, parts, H,
				    rank);
}

/* The latent attention of a chunk over the cache, into olat. */
static void latent_attention(struct kv_mla *m, uint32_t layer, uint64_t n,
			     uint64_t pos)
{
	const struct kv_mla_dims *d = &m->d;
	struct lat_job j = {m, layer, n, pos, 1, d->users * n, 0};
	/* split a single token over positions when there are few
	 * sequences and enough positions for each range to be worth it */
	if (n == 1 && d->nsplit > 1) {
		uint64_t most = (pos + 1) / 256;
		j.parts = most < d->nsplit ? (uint32_t)most : d->nsplit;
		if (j.parts < 1)
			j.parts = 1;
		j.tasks = d->users * j.parts;
	}
	atomic_init(&j.next, 0);
	kv_pool_run(m->ops->pool, lat_task, &j);
	if (j.parts > 1)
		merge(m, j.parts);
}

/* The plain form: per sequence and head, K and V up-projected. */
struct plain_job {
	struct kv_mla *m;
	const float *q;
	float *att;
	uint64_t n;
	_Atomic uint64_t next;
};

/* Rows r of s (rows, len) for the queries t0 + r: the softmax of their
 * first t0 + r + 1 scores, the rest weighing nothing. */
static void causal_softmax(float *s, uint64_t rows, uint64_t len,
			   uint64_t t0, bool simd)
{
	for (uint64_t r = 0; r < rows; r++) {
		float *sr = s + r * len, mx = -INFINITY;
		uint64_t seen = t0 + r + 1;
		for (uint64_t p = 0; p < seen; p++)
			mx = sr[p] > mx ? sr[p] : mx;
		float inv = 1.0f / kv_exp_shift(sr, seen, mx, simd);
		for (uint64_t p = 0; p < seen; p++)
			sr[p] *= inv;
		memset(sr + seen, 0, (len - seen) * sizeof *sr);
	}
}

static void plain_task(void *arg, unsigned tid, unsigned nth)
{
	struct plain_job *j = arg;
	struct kv_mla *m = j->m;
	const struct kv_mla_dims *d = &m->d;
	uint32_t H = d->heads, nope = d->nope, rope = d->rope, vd = d->vdim;
	uint64_t D = (uint64_t)d->rank + rope, n = j->n;
	blasint qw = (blasint)((uint64_t)H * (nope + rope));
	blasint kw = (blasint)((uint64_t)H * (nope + vd));
	float *s = m->work + tid * work_floats(d), sc = scale_of(d);
	(void)nth;
	for (;;) {
		uint64_t i = atomic_fetch_add(&j->next, 1);
		if (i >= d->users * H)
			break;
		uint64_t u = i / H;
		uint32_t h = (uint32_t)(i % H);
		/* head h's keys: its nope columns of kvb, then the shared
		 * rotary key; its values: the vdim columns after */
		const float *kn = m->kvb + u * n * kw + (uint64_t)h * (nope + vd);
		const float *kr = m->ckv + u * n * D + d->rank;
		const float *q = j->q + u * n * qw + (uint64_t)h * (nope + rope);
		float *o = j->att + u * n * H * vd + (uint64_t)h * vd;
		for (uint64_t t0 = 0; t0 < n; t0 += KV_MLA_QROWS) {
			uint64_t rows = n - t0 < KV_MLA_QROWS ? n - t0
							      : KV_MLA_QROWS;
			blasint len = (blasint)(t0 + rows), br = (blasint)rows;
			const float *qt = q + t0 * qw;
			if (nope)
				cblas_sgemm(CblasRowMajor, CblasNoTrans,
					    CblasTrans, br, len, (blasint)nope,
					    sc, qt, qw, kn, kw, 0, s, len);
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, br,
				    len, (blasint)rope, sc, qt + nope, qw, kr,
				    (blasint)D, nope ? 1 : 0, s, len);
			causal_softmax(s, rows, (uint64_t)len, t0,
				       m->ops->simd);
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
				    br, (blasint)vd, len, 1, s, len, kn + nope,
				    kw, 0, o + t0 * H * vd,
				    (blasint)((uint64_t)H * vd));
		}
	}
}

void kv_mla_attention(struct kv_mla *m, const struct kv_mla_w *w,
		      uint32_t layer, const float *xn, float *q, float *att,
		      uint64_t n, uint64_t pos, bool cache)
{
	const struct kv_mla_dims *d = &m->d;
	uint64_t rows = d->users * n, D = (uint64_t)d->rank + d->rope;
	uint64_t qw = (uint64_t)d->heads * (d->nope + d->rope);
	/* queries, latents and the rotary key */
	if (d->qrank) {
		kv_linear(m->ops, xn, rows, d->dim, w->w_qa, NULL, m->qa,
			  d->qrank, 0, KV_ACT_NONE, NULL, NULL);
		rms_rows(m->qa, rows, d->qrank, d->qrank, w->qa_g,
			 m->ops->wt, d->eps);
		kv_linear(m->ops, m->qa, rows, d->qrank, w->w_qb, NULL, q, qw,
			  0, KV_ACT_NONE, NULL, NULL);
	} else {
		kv_linear(m->ops, xn, rows, d->dim, w->w_q, NULL, q, qw, 0,
			  KV_ACT_NONE, NULL, NULL);
	}
	kv_linear(m->ops, xn, rows, d->dim, w->w_kva, NULL, m->ckv, D, 0,
		  KV_ACT_NONE, NULL, NULL);
	rms_rows(m->ckv, rows, D, d->rank, w->kva_g, m->ops->wt, d->eps);
	for (uint64_t r = 0; r < rows; r++) {
		uint64_t p = pos + r % n;
		rotate(m, m->ckv + r * D + d->rank, p);
		for (uint32_t h = 0; h < d->heads; h++)
			rotate(m, q + r * qw + (uint64_t)h * (d->nope + d->rope) +
					  d->nope,
			       p);
	}
	if (cache) {
		for (uint64_t u = 0; u < d->users; u++)
			memcpy(kv_mla_rows(m, layer, u, 0, true) + pos * D,
			       kv_mla_rows(m, layer, u, n, false),
			       n * D * sizeof(float));
		struct head_job hj = {m, w, q, att, rows, HEAD_ABSORB};
		kv_pool_run(m->ops->pool, head_task, &hj);
		latent_attention(m, layer, n, pos);
		hj.what = HEAD_OUT;
		kv_pool_run(m->ops->pool, head_task, &hj);
		return;
	}
	for (uint64_t r = 0; r < rows; r++)
		memcpy(m->lat + r * d->rank, m->ckv + r * D,
		       d->rank * sizeof(float));
	struct head_job hj = {m, w, q, att, rows, HEAD_UP};
	kv_pool_run(m->ops->pool, head_task, &hj);
	struct plain_job pj = {m, q, att, n, 0};
	atomic_init(&pj.next, 0);
	kv_pool_run(m->ops->pool, plain_task, &pj);
}

void kv_mla_attend(struct kv_mla *m, uint64_t pos)
{
	for (uint32_t l = 0; l < m->d.layers; l++)
		latent_attention(m, l, 1, pos);
}
