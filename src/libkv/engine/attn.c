/*
 * attn.c - the attention kernel, written for the cache's layout: a KV head
 * keeps its positions as contiguous rows of head_dim values, so one query
 * group reads K once, then V once, straight from the cache with nothing
 * copied. The portable C and AVX2/FMA versions keep the scores of the
 * whole range (g x n floats, in L1/L2) with an exact softmax (max first);
 * the AVX-512 one, for groups of several heads, reads K and V together
 * block by block with an online softmax, equal to rounding. m, l and o
 * are the same in all three, so parts over ranges of positions merge
 * without approximation. The SIMD versions are chosen at run time and all
 * are tested against each other. The MLP's activations live here too,
 * for the same vectorised exp.
 */
#include <math.h>
#include <string.h>

#include "engine_int.h"
#include "simd.h"

/* Positions per block of the V pass: a block of V rows stays in L1 while
 * every query of the group reads it. */
#define VBLOCK 64
/* Largest head size of the AVX-512 kernel: its transposed queries are on
 * the stack (16 KiB). */
#define ZMAX_HD 256

/* Positions row i of a group sees: rows come in tokens of `per` rows (the
 * query heads of one token), the last token seeing all n positions and
 * each earlier one a position fewer (causal). */
static inline uint64_t row_len(uint64_t n, uint32_t g, uint32_t per,
			       uint32_t i)
{
	return n - (g / per - 1 - i / per);
}

/* One row's softmax over its len positions, in place: exp(x - max), the
 * max into *m; returns the sum. One for each instruction set. */
typedef float softmax_row_fn(float *x, uint64_t len, float *m);

/* Each row of s over the positions it sees, through row: its max into m,
 * exp(s - max) in place, the sum into l; the masked positions set to 0. */
static void softmax_rows(float *s, uint32_t g, uint32_t per, uint64_t n,
			 float *m, float *l, softmax_row_fn *row)
{
	for (uint32_t i = 0; i < g; i++) {
		float *si = s + i * n;
		uint64_t len = row_len(n, g, per, i);
		l[i] = row(si, len, &m[i]);
		for (uint64_t p = len; p < n; p++) /* masked: weighs 0 */
			si[p] = 0;
	}
}

static float softmax_row_c(float *x, uint64_t len, float *m)
{
	float mx = -INFINITY, sum = 0;
	for (uint64_t p = 0; p < len; p++)
		mx = x[p] > mx ? x[p] : mx;
	for (uint64_t p = 0; p < len; p++) {
		x[p] = expf(x[p] - mx);
		sum += x[p];
	}
	*m = mx;
	return sum;
}

static void part_c(const float *q, uint32_t g, uint32_t per, const float *k,
		   const float *v, uint64_t n, uint32_t hd, float scale,
		   float *s, float *o, float *m, float *l)
{
	for (uint64_t p = 0; p < n; p++) {
		const float *kp = k + p * hd;
		for (uint32_t i = 0; i < g; i++) {
			const float *qi = q + (uint64_t)i * hd;
			float acc = 0;
			for (uint32_t d = 0; d < hd; d++)
				acc += qi[d] * kp[d];
			s[i * n + p] = acc * scale;
		}
	}
	softmax_rows(s, g, per, n, m, l, softmax_row_c);
	memset(o, 0, sizeof *o * g * hd);
	for (uint64_t p = 0; p < n; p++) {
		const float *vp = v + p * hd;
		for (uint32_t i = 0; i < g; i++) {
			float w = s[i * n + p], *oi = o + (uint64_t)i * hd;
			for (uint32_t d = 0; d < hd; d++)
				oi[d] += w * vp[d];
		}
	}
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_AVX2_KERNEL 1
#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static inline float hmax(__m256 a)
{
	__m128 x = _mm_max_ps(_mm256_castps256_ps128(a),
			      _mm256_extractf128_ps(a, 1));
	x = _mm_max_ps(x, _mm_movehl_ps(x, x));
	x = _mm_max_ss(x, _mm_movehdup_ps(x));
	return _mm_cvtss_f32(x);
}

/* exp of eight values, clamped to [-87, 88]: Cephes' expf polynomial on
 * x - n ln 2, scaled by 2^n; relative error about 2e-7. */
AVX2 static inline __m256 exp8(__m256 x)
{
	x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
	x = _mm256_min_ps(x, _mm256_set1_ps(88.0f));
	__m256 n = _mm256_round_ps(
		_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
		_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
	r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
	__m256 y = _mm256_set1_ps(1.9875691500e-4f);
	y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
	y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
	y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
	y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
	y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
	y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), r);
	y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
	__m256i e = _mm256_slli_epi32(
		_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)),
		23);
	return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

/* s = q k^T x scale, eight positions at a time. Inlined with hd a
 * constant for the common head sizes, so the eight rows' offsets are
 * immediates rather than values the loop reloads. */
__attribute__((always_inline)) AVX2 static inline void
scores_hd(const float *q, uint32_t g, const float *k, uint64_t n,
	  uint32_t hd, float scale, float *s)
{
	__m256 vs = _mm256_set1_ps(scale);
	uint64_t p = 0;
	for (; p + 8 <= n; p += 8) {
		const float *kp = k + p * hd;
		for (uint32_t i = 0; i < g; i++) {
			const float *qi = q + (uint64_t)i * hd;
			__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0,
			       a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
			for (uint32_t d = 0; d < hd; d += 8) {
				__m256 qv = _mm256_loadu_ps(qi + d);
				const float *kd = kp + d;
				a0 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(kd),
						     a0);
				a1 = _mm256_fmadd_ps(
					qv, _mm256_loadu_ps(kd + hd), a1);
				a2 = _mm256_fmadd_ps(
					qv, _mm256_loadu_ps(kd + 2 * hd), a2);
				a3 = _mm256_fmadd_ps(
					qv, _mm256_loadu_ps(kd + 3 * hd), a3);
				a4 = _mm256_fmadd_ps(
					qv, _mm256_loadu_ps(kd + 4 * hd), a4);
				a5 = _mm256_fmadd_ps(
					qv, _mm256_loadu_ps(kd + 5 * hd), a5);
				a6 = _mm256_fmadd_ps(
					qv, _mm256_loadu_ps(kd + 6 * hd), a6);
				a7 = _mm256_fmadd_ps(
					qv, _mm256_loadu_ps(kd + 7 * hd), a7);
			}
			_mm256_storeu_ps(s + i * n + p,
					 _mm256_mul_ps(kv_hsum8(a0, a1, a2, a3, a4,
							     a5, a6, a7),
						       vs));
		}
	}
	for (; p < n; p++) {
		const float *kp = k + p * hd;
		for (uint32_t i = 0; i < g; i++) {
			const float *qi = q + (uint64_t)i * hd;
			__m256 a = _mm256_setzero_ps();
			for (uint32_t d = 0; d < hd; d += 8)
				a = _mm256_fmadd_ps(_mm256_loadu_ps(qi + d),
						    _mm256_loadu_ps(kp + d), a);
			s[i * n + p] = kv_hsum(a) * scale;
		}
	}
}

AVX2 static void scores_avx2(const float *q, uint32_t g, const float *k,
			     uint64_t n, uint32_t hd, float scale, float *s)
{
	if (hd == 64)
		scores_hd(q, g, k, n, 64, scale, s);
	else if (hd == 128)
		scores_hd(q, g, k, n, 128, scale, s);
	else
		scores_hd(q, g, k, n, hd, scale, s);
}

/* softmax_row_c() eight positions at a time through exp8. */
AVX2 static float softmax_row_avx2(float *x, uint64_t len, float *m)
{
	uint64_t n8 = len & ~(uint64_t)7, p;
	__m256 vm = _mm256_set1_ps(-INFINITY);
	for (p = 0; p < n8; p += 8)
		vm = _mm256_max_ps(vm, _mm256_loadu_ps(x + p));
	float mx = hmax(vm);
	for (; p < len; p++)
		mx = x[p] > mx ? x[p] : mx;
	__m256 vmx = _mm256_set1_ps(mx), sum = _mm256_setzero_ps();
	for (p = 0; p < n8; p += 8) {
		__m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + p), vmx));
		_mm256_storeu_ps(x + p, e);
		sum = _mm256_add_ps(sum, e);
	}
	if (p < len) { /* the tail through the same exp */
		float t[8];
		uint64_t r = len - p;
		for (uint64_t j = 0; j < 8; j++)
			t[j] = j < r ? x[p + j] - mx : -INFINITY;
		_mm256_storeu_ps(t, exp8(_mm256_loadu_ps(t)));
		for (uint64_t j = 0; j < 8; j++) {
			if (j < r)
				x[p + j] = t[j];
			else
				t[j] = 0;
		}
		sum = _mm256_add_ps(sum, _mm256_loadu_ps(t));
	}
	*m = mx;
	return kv_hsum(sum);
}

/* o[i][d0 .. d0 + 8W) += sum over p in [p0, p1) of s[i][p] v[p][..],
 * W registers of accumulators held across the block. */
#define VACC(W)                                                              \
	AVX2 static inline void vacc##W(const float *srow, const float *v,   \
					uint64_t p0, uint64_t p1, uint32_t hd, \
					float *o)                            \
	{                                                                    \
		__m256 a[W];                                                 \
		for (int j = 0; j < W; j++)                                  \
			a[j] = _mm256_loadu_ps(o + 8 * j);                   \
		for (uint64_t p = p0; p < p1; p++) {                         \
			__m256 w = _mm256_broadcast_ss(srow + p);            \
			const float *vp = v + p * hd;                        \
			for (int j = 0; j < W; j++)                          \
				a[j] = _mm256_fmadd_ps(                      \
					w, _mm256_loadu_ps(vp + 8 * j), a[j]); \
		}                                                            \
		for (int j = 0; j < W; j++)                                  \
			_mm256_storeu_ps(o + 8 * j, a[j]);                   \
	}
VACC(8)
VACC(4)
VACC(1)

AVX2 static void values_avx2(const float *s, uint32_t g, const float *v,
			     uint64_t n, uint32_t hd, float *o)
{
	memset(o, 0, sizeof *o * g * hd);
	for (uint64_t p0 = 0; p0 < n; p0 += VBLOCK) {
		uint64_t p1 = p0 + VBLOCK < n ? p0 + VBLOCK : n;
		for (uint32_t i = 0; i < g; i++) {
			const float *si = s + i * n;
			float *oi = o + (uint64_t)i * hd;
			uint32_t d = 0;
			for (; d + 64 <= hd; d += 64)
				vacc8(si, v + d, p0, p1, hd, oi + d);
			for (; d + 32 <= hd; d += 32)
				vacc4(si, v + d, p0, p1, hd, oi + d);
			for (; d < hd; d += 8)
				vacc1(si, v + d, p0, p1, hd, oi + d);
		}
	}
}

AVX2 static void part_avx2(const float *q, uint32_t g, uint32_t per,
			   const float *k, const float *v, uint64_t n,
			   uint32_t hd, float scale, float *s, float *o,
			   float *m, float *l)
{
	scores_avx2(q, g, k, n, hd, scale, s);
	softmax_rows(s, g, per, n, m, l, softmax_row_avx2);
	values_avx2(s, g, v, n, hd, o);
}

/* GPT-2's GELU, tanh(u) written as 1 - 2 / (exp(2u) + 1). */
AVX2 static void gelu_avx2(float *x, uint64_t n)
{
	const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f);
	const __m256 half = _mm256_set1_ps(0.5f), lim = _mm256_set1_ps(9.0f);
	uint64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 v = _mm256_loadu_ps(x + i);
		__m256 u = _mm256_mul_ps(
			_mm256_set1_ps(0.7978845608f),
			_mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(0.044715f),
						      _mm256_mul_ps(v, v)),
					v, v));
		u = _mm256_max_ps(_mm256_min_ps(u, lim),
				  _mm256_sub_ps(_mm256_setzero_ps(), lim));
		__m256 e = exp8(_mm256_mul_ps(two, u));
		__m256 t = _mm256_sub_ps(
			one, _mm256_div_ps(two, _mm256_add_ps(e, one)));
		_mm256_storeu_ps(x + i,
				 _mm256_mul_ps(_mm256_mul_ps(half, v),
					       _mm256_add_ps(one, t)));
	}
	for (; i < n; i++)
		x[i] = 0.5f * x[i] *
		       (1.0f + tanhf(0.7978845608f *
				     (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}

/* h *= silu(g) = g / (1 + exp(-g)). */
AVX2 static void silu_mul_avx2(float *h, const float *g, uint64_t n)
{
	const __m256 one = _mm256_set1_ps(1.0f);
	uint64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 gv = _mm256_loadu_ps(g + i);
		__m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), gv));
		__m256 s = _mm256_div_ps(gv, _mm256_add_ps(one, e));
		_mm256_storeu_ps(h + i,
				 _mm256_mul_ps(_mm256_loadu_ps(h + i), s));
	}
	for (; i < n; i++)
		h[i] *= g[i] / (1.0f + expf(-g[i]));
}
/*
 * The AVX-512 kernel, for groups of several query heads (grouped-query
 * decode). The AVX2 kernel's dot products put the head dimension in the
 * lanes and pay a horizontal sum per score, and its V pass has too few
 * registers to share a V row between heads. Here a register of scores
 * holds four heads, a 128-bit lane each, and four values of the head
 * dimension per lane: four K values broadcast to the four lanes meet four
 * heads' queries, every product useful for any group of a multiple of
 * four heads, and the partial sums of four positions are added together
 * at the end of the row (a few shuffles per four positions and heads).
 * The softmax's exp and max then work on sixteen scores at once. The V
 * pass keeps the head dimension in the lanes, with 32 registers enough
 * for six heads by 64 values, each V row loaded once for six heads.
 *
 * K and V are read block by block, a block's rows used by every head
 * while they are in L1, so one pass over the positions reads the cache
 * once and the hardware prefetcher's two sequential streams run beside
 * the arithmetic (software prefetch measured slower here: it competes
 * with the demand loads). The softmax is online over blocks: each block's
 * scores are shifted by the running max and earlier sums rescaled when it
 * grows, so m, l and o mean what they do in the two-pass kernels, equal
 * to float rounding.
 */
#define HAVE_AVX512_KERNEL 1
#define AVX512 __attribute__((target("avx512f")))

/* Positions per block: its K and V rows (4 KiB each at hd 64) stay in
 * L1 between the scores and the V pass. From DRAM 16 measured best of 8
 * to 256 (larger ones win from L3, but leave the V stream idle too long
 * while the scores run, and software prefetch did not help). */
#define ZBLOCK 16
/* Floats per register; heads per pass, four groups of four. */
#define ZLANES 16
/* Quads of positions per block. */
#define ZQUADS (ZBLOCK / 4)
/* Heads and 16-value chunks of o held in registers by the V pass. */
#define ZHEADS 6
#define ZCHUNKS 4

/* exp8's steps in sixteen lanes for x <= 0 (all the softmax asks): no
 * upper clamp, and 2^n applied by scalef in one step, the same product
 * as exp8's built power of two. */
AVX512 static inline __m512 exp16(__m512 x)
{
	x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
	__m512 n = _mm512_roundscale_ps(
		_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
		_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
	r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
	__m512 y = _mm512_set1_ps(1.9875691500e-4f);
	y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
	y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
	y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
	y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
	y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
	y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), r);
	y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
	return _mm512_scalef_ps(y, n);
}

/* Scores of P positions from kp on (rows of hd), P a multiple of 4,
 * against NG groups of four heads. A register's 128-bit lane h holds head
 * h of its group and its four floats four consecutive values of the head
 * dimension: the group's queries so (qg, (NG, hd / 4, 16)), and the same
 * four K values broadcast to every lane, so each FMA does 16 useful
 * products whatever the group size (a multiple of 4). The four partial
 * sums of a lane are added at the end, four positions at once, into
 * lanes 4h + p of one register per group and quad of positions:
 * sb[group][quad]. Rows past `last` repeat it (a quad's tail, masked by
 * the caller). */
__attribute__((always_inline)) AVX512 static inline void
zscores(const float *qg, const float *kp, uint32_t hd, int last, __m512 vs,
	float *sb, int P, int NG)
{
	__m512 a[24];
	for (int i = 0; i < P * NG; i++)
		a[i] = _mm512_setzero_ps();
	for (uint32_t d = 0; d < hd; d += 4) {
		/* NG query registers, one K at a time: 24 sums + 4 fit */
		__m512 qv[4];
		for (int gi = 0; gi < NG; gi++)
			qv[gi] = _mm512_load_ps(qg +
						((uint64_t)gi * hd + d) * 4);
		for (int p = 0; p < P; p++) {
			__m512 kb = _mm512_broadcast_f32x4(_mm_loadu_ps(
				kp + (uint64_t)(p < last ? p : last) * hd + d));
			for (int gi = 0; gi < NG; gi++)
				a[gi * P + p] = _mm512_fmadd_ps(qv[gi], kb,
								a[gi * P + p]);
		}
	}
	for (int gi = 0; gi < NG; gi++)
		for (int j = 0; j < P; j += 4) {
			__m512 *x = a + gi * P + j;
			__m512 t0 = _mm512_add_ps(_mm512_unpacklo_ps(x[0], x[1]),
						  _mm512_unpackhi_ps(x[0], x[1]));
			__m512 t1 = _mm512_add_ps(_mm512_unpacklo_ps(x[2], x[3]),
						  _mm512_unpackhi_ps(x[2], x[3]));
			__m512d u0 = _mm512_castps_pd(t0);
			__m512d u1 = _mm512_castps_pd(t1);
			__m512 s = _mm512_add_ps(
				_mm512_castpd_ps(_mm512_unpacklo_pd(u0, u1)),
				_mm512_castpd_ps(_mm512_unpackhi_pd(u0, u1)));
			_mm512_store_ps(sb + (gi * ZQUADS + j / 4) * ZLANES,
					_mm512_mul_ps(s, vs));
		}
}

/* The block's nb positions: eight at a time while NG <= 3 leaves the
 * registers for it, then by quads, the last one perhaps partial. */
__attribute__((always_inline)) AVX512 static inline void
zscores_blk(const float *qg, const float *kp, uint64_t nb, uint32_t hd,
	    __m512 vs, float *sb, int NG)
{
	uint64_t j = 0;
	if (NG <= 3)
		for (; j + 8 <= nb; j += 8)
			zscores(qg, kp + j * hd, hd, 7, vs, sb + j / 4 * ZLANES,
				8, NG);
	for (; j + 4 <= nb; j += 4)
		zscores(qg, kp + j * hd, hd, 3, vs, sb + j / 4 * ZLANES, 4,
			NG);
	if (j < nb)
		zscores(qg, kp + j * hd, hd, (int)(nb - j - 1), vs,
			sb + j / 4 * ZLANES, 4, NG);
}

#define ZS(HD, NG) zscores_blk(qg, kp, nb, HD, vs, sb, NG)
#define ZS_NG(HD)                                                            \
	do {                                                                 \
		switch (ng) {                                                \
		case 1: ZS(HD, 1); break;                                    \
		case 2: ZS(HD, 2); break;                                    \
		case 3: ZS(HD, 3); break;                                    \
		default: ZS(HD, 4); break;                                   \
		}                                                            \
	} while (0)
AVX512 static void zscores_any(const float *qg, uint32_t ng, const float *kp,
			       uint64_t nb, uint32_t hd, __m512 vs, float *sb)
{
	if (hd == 64)
		ZS_NG(64);
	else if (hd == 128)
		ZS_NG(128);
	else
		ZS_NG(hd);
}
#undef ZS_NG
#undef ZS

/* o[h][0 .. 16C) += sum over the block's positions j of w(h, j) v[j][..]
 * for H heads, H x C registers of o held across the block and each chunk
 * of a V row loaded once for all H heads. Head h's weight of position j
 * is sb[off[h] + j / 4 * 16 + j % 4] (lanes 4h + p of its group). */
__attribute__((always_inline)) AVX512 static inline void
zvacc(const float *sb, const uint32_t *off, uint64_t nb, const float *vp,
      uint32_t hd, float *o, int H, int C)
{
	__m512 a[ZHEADS * ZCHUNKS], r[ZCHUNKS];
	for (int h = 0; h < H; h++)
		for (int c = 0; c < C; c++)
			a[h * C + c] = _mm512_loadu_ps(o + (uint64_t)h * hd +
						       16 * c);
	for (uint64_t j = 0; j < nb; j++) {
		const float *w = sb + j / 4 * ZLANES + j % 4;
		for (int c = 0; c < C; c++)
			r[c] = _mm512_loadu_ps(vp + j * hd + 16 * c);
		for (int h = 0; h < H; h++) {
			__m512 wv = _mm512_set1_ps(w[off[h]]);
			for (int c = 0; c < C; c++)
				a[h * C + c] =
					_mm512_fmadd_ps(wv, r[c], a[h * C + c]);
		}
	}
	for (int h = 0; h < H; h++)
		for (int c = 0; c < C; c++)
			_mm512_storeu_ps(o + (uint64_t)h * hd + 16 * c,
					 a[h * C + c]);
}

#define ZV(H, C) zvacc(sb, off, nb, vp, hd, o, H, C)
AVX512 static void zvacc4(const float *sb, const uint32_t *off, uint64_t nb,
			  const float *vp, uint32_t hd, float *o, uint32_t h)
{
	switch (h) {
	case 1: ZV(1, 4); break;
	case 2: ZV(2, 4); break;
	case 3: ZV(3, 4); break;
	case 4: ZV(4, 4); break;
	case 5: ZV(5, 4); break;
	default: ZV(6, 4); break;
	}
}

AVX512 static void zvacc1(const float *sb, const uint32_t *off, uint64_t nb,
			  const float *vp, uint32_t hd, float *o, uint32_t h)
{
	switch (h) {
	case 1: ZV(1, 1); break;
	case 2: ZV(2, 1); break;
	case 3: ZV(3, 1); break;
	case 4: ZV(4, 1); break;
	case 5: ZV(5, 1); break;
	default: ZV(6, 1); break;
	}
}
#undef ZV

/* The block's weights into o: heads ZHEADS at a time, the head dimension
 * in chunks of 64 values, then of 16. */
AVX512 static void zvalues(const float *sb, uint64_t nb, const float *vp,
			   uint32_t hd, uint32_t t, float *o)
{
	for (uint32_t h = 0; h < t; h += ZHEADS) {
		uint32_t nh = t - h < ZHEADS ? t - h : ZHEADS, off[ZHEADS];
		for (uint32_t i = 0; i < nh; i++)
			off[i] = (h + i) / 4 * ZQUADS * ZLANES + (h + i) % 4 * 4;
		float *oh = o + (uint64_t)h * hd;
		uint32_t d = 0;
		for (; d + 16 * ZCHUNKS <= hd; d += 16 * ZCHUNKS)
			zvacc4(sb, off, nb, vp + d, hd, oh + d, nh);
		for (; d < hd; d += 16)
			zvacc1(sb, off, nb, vp + d, hd, oh + d, nh);
	}
}

/* Largest of each 128-bit lane's four floats, in all four. */
AVX512 static inline __m512 zmax4(__m512 x)
{
	x = _mm512_max_ps(x, _mm512_permute_ps(x, _MM_SHUFFLE(2, 3, 0, 1)));
	return _mm512_max_ps(x, _mm512_permute_ps(x, _MM_SHUFFLE(1, 0, 3, 2)));
}

/* Which lanes 4h + p of a group's register for positions p0 .. p0 + 4
 * hold a score its row sees: heads h0 .. h0 + t of the group (rows past
 * t, padding, count as seen), positions below n and the row's length. */
static inline __mmask16 zlive(uint64_t n, uint32_t g, uint32_t per,
			      uint32_t h0, uint32_t t, uint64_t p0)
{
	unsigned lv = 0;
	for (uint32_t i = 0; i < ZLANES; i++) {
		uint32_t h = i / 4;
		uint64_t p = p0 + i % 4;
		if (h >= t || (p < n && p < row_len(n, g, per, h0 + h)))
			lv |= 1u << i;
	}
	return (__mmask16)lv;
}

/* Rows h0 .. h0 + t (t <= 16) of the group over all n positions. */
AVX512 static void ztile(const float *q, uint32_t t, uint32_t h0, uint32_t g,
			 uint32_t per, const float *k, const float *v,
			 uint64_t n, uint32_t hd, float scale, float *o,
			 float *m, float *l)
{
	_Alignas(64) float qg[ZMAX_HD * ZLANES];
	_Alignas(64) float sb[ZBLOCK * ZLANES], ml[2 * ZLANES];
	__mmask16 live[4 * ZQUADS]; /* (group, quad) */
	__m512 vm[4], vl[4];
	uint32_t ng = (t + 3) / 4;
	/* heads past t score 0 against everything and are never read */
	for (uint32_t gi = 0; gi < ng; gi++)
		for (uint32_t d = 0; d < hd; d += 4)
			for (uint32_t i = 0; i < ZLANES; i++) {
				uint32_t h = gi * 4 + i / 4;
				qg[(gi * hd + d) * 4 + i] =
					h < t ? q[(uint64_t)h * hd + d + i % 4]
					      : 0;
			}
	memset(o, 0, sizeof *o * t * hd);
	for (uint32_t gi = 0; gi < ng; gi++) {
		vm[gi] = _mm512_set1_ps(-INFINITY);
		vl[gi] = _mm512_setzero_ps();
	}
	/* positions from nall on are masked for some rows (causal), as are
	 * those of a last quad past n */
	uint64_t nall = n - (g / per - 1);
	__m512 vs = _mm512_set1_ps(scale);
	for (uint64_t p0 = 0; p0 < n; p0 += ZBLOCK) {
		uint64_t nb = n - p0 < ZBLOCK ? n - p0 : ZBLOCK;
		uint64_t nq = (nb + 3) / 4;
		zscores_any(qg, ng, k + p0 * hd, nb, hd, vs, sb);
		bool mask = p0 + 4 * nq > nall;
		for (uint32_t gi = 0; gi < ng; gi++) {
			float *sg = sb + gi * ZQUADS * ZLANES;
			__mmask16 *lg = live + gi * ZQUADS;
			for (uint64_t j = 0; j < nq && mask; j++) {
				lg[j] = zlive(n, g, per, h0 + gi * 4, t - gi * 4,
					      p0 + 4 * j);
				_mm512_store_ps(
					sg + j * ZLANES,
					_mm512_mask_mov_ps(
						_mm512_set1_ps(-INFINITY), lg[j],
						_mm512_load_ps(sg + j * ZLANES)));
			}
			__m512 bm = vm[gi];
			for (uint64_t j = 0; j < nq; j++)
				bm = _mm512_max_ps(
					bm, _mm512_load_ps(sg + j * ZLANES));
			bm = zmax4(bm);
			__mmask16 up = _mm512_cmp_ps_mask(bm, vm[gi],
							  _CMP_GT_OQ);
			if (up) {
				/* a larger max: what was summed so far
				 * shrinks by exp(old - new); 0 stays 0 on
				 * the first block */
				__m512 f = exp16(_mm512_sub_ps(vm[gi], bm));
				vl[gi] = _mm512_mul_ps(vl[gi], f);
				_mm512_store_ps(ml, f);
				for (uint32_t i = 0; i < 4 && p0; i++) {
					uint32_t h = gi * 4 + i;
					if (h >= t || !(up >> 4 * i & 1))
						continue;
					float *oh = o + (uint64_t)h * hd;
					__m512 fh = _mm512_set1_ps(ml[4 * i]);
					for (uint32_t d = 0; d < hd; d += 16)
						_mm512_storeu_ps(
							oh + d,
							_mm512_mul_ps(
								_mm512_loadu_ps(
									oh + d),
								fh));
				}
				vm[gi] = bm;
			}
			for (uint64_t j = 0; j < nq; j++) {
				__m512 e = exp16(_mm512_sub_ps(
					_mm512_load_ps(sg + j * ZLANES),
					vm[gi]));
				if (mask) /* masked positions weigh 0 */
					e = _mm512_maskz_mov_ps(lg[j], e);
				_mm512_store_ps(sg + j * ZLANES, e);
				vl[gi] = _mm512_add_ps(vl[gi], e);
			}
		}
		zvalues(sb, nb, v + p0 * hd, hd, t, o);
	}
	for (uint32_t gi = 0; gi < ng; gi++) {
		_mm512_store_ps(ml, vm[gi]);
		_mm512_store_ps(ml + ZLANES, vl[gi]);
		for (uint32_t i = 0; i < 4 && gi * 4 + i < t; i++) {
			const float *s4 = ml + ZLANES + 4 * i;
			m[gi * 4 + i] = ml[4 * i];
			l[gi * 4 + i] = (s4[0] + s4[1]) + (s4[2] + s4[3]);
		}
	}
}

/* softmax_row_avx2() in sixteen lanes through exp16 (the same value of
 * each exp); the sum's order differs, so it may differ in its last bits. */
AVX512 static float softmax_row_avx512(float *x, uint64_t len, float *m)
{
	uint64_t n16 = len & ~(uint64_t)15, p;
	__mmask16 tail = (__mmask16)((1u << (len - n16)) - 1);
	__m512 vm = _mm512_set1_ps(-INFINITY);
	for (p = 0; p < n16; p += 16)
		vm = _mm512_max_ps(vm, _mm512_loadu_ps(x + p));
	vm = _mm512_mask_max_ps(vm, tail, vm,
				_mm512_maskz_loadu_ps(tail, x + p));
	float mx = _mm512_reduce_max_ps(vm);
	__m512 vmx = _mm512_set1_ps(mx), sum = _mm512_setzero_ps();
	for (p = 0; p < n16; p += 16) {
		__m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + p), vmx));
		_mm512_storeu_ps(x + p, e);
		sum = _mm512_add_ps(sum, e);
	}
	if (tail) { /* the tail through the same exp */
		__m512 e = _mm512_maskz_mov_ps(
			tail, exp16(_mm512_sub_ps(
				      _mm512_maskz_loadu_ps(tail, x + p), vmx)));
		_mm512_mask_storeu_ps(x + p, tail, e);
		sum = _mm512_add_ps(sum, e);
	}
	*m = mx;
	return _mm512_reduce_add_ps(sum);
}

AVX512 static void part_avx512(const float *q, uint32_t g, uint32_t per,
			       const float *k, const float *v, uint64_t n,
			       uint32_t hd, float scale, float *o, float *m,
			       float *l)
{
	for (uint32_t h = 0; h < g; h += ZLANES) {
		uint32_t t = g - h < ZLANES ? g - h : ZLANES;
		ztile(q + (uint64_t)h * hd, t, h, g, per, k, v, n, hd, scale,
		      o + (uint64_t)h * hd, m + h, l + h);
	}
}
#endif

static bool have_avx2(void)
{
#ifdef HAVE_AVX2_KERNEL
	static int have = -1;
	if (have < 0) {
		__builtin_cpu_init();
		have = __builtin_cpu_supports("avx2") &&
		       __builtin_cpu_supports("fma");
	}
	return have;
#else
	return false;
#endif
}

void kv_gelu(float *x, uint64_t n, bool simd)
{
#ifdef HAVE_AVX2_KERNEL
	if (simd && have_avx2()) {
		gelu_avx2(x, n);
		return;
	}
#endif
	for (uint64_t i = 0; i < n; i++)
		x[i] = 0.5f * x[i] *
		       (1.0f + tanhf(0.7978845608f *
				     (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}

void kv_silu_mul(float *h, const float *g, uint64_t n, bool simd)
{
#ifdef HAVE_AVX2_KERNEL
	if (simd && have_avx2()) {
		silu_mul_avx2(h, g, n);
		return;
	}
#endif
	for (uint64_t i = 0; i < n; i++)
		h[i] *= g[i] / (1.0f + expf(-g[i]));
}

static bool have_avx512(void)
{
#ifdef HAVE_AVX512_KERNEL
	static int have = -1;
	if (have < 0) {
		__builtin_cpu_init();
		/* also says whether the OS saves the zmm registers */
		have = __builtin_cpu_supports("avx512f");
	}
	return have;
#else
	return false;
#endif
}

bool kv_attn_has_isa(enum kv_isa isa, uint32_t hd)
{
	switch (isa) {
	case KV_ISA_C:
		return true;
	case KV_ISA_AVX2:
		return have_avx2() && hd % 8 == 0;
	case KV_ISA_AVX512:
		return have_avx512() && hd % 16 == 0 && hd <= ZMAX_HD;
	}
	return false;
}

bool kv_attn_has_simd(uint32_t hd)
{
	return kv_attn_has_isa(KV_ISA_AVX2, hd);
}

void kv_attn_part_isa(const float *q, uint32_t g, uint32_t per,
		      const float *k, const float *v, uint64_t n, uint32_t hd,
		      float scale, float *s, float *o, float *m, float *l,
		      enum kv_isa isa)
{
	if (!kv_attn_has_isa(isa, hd))
		isa = KV_ISA_C;
	switch (isa) {
#ifdef HAVE_AVX512_KERNEL
	case KV_ISA_AVX512:
		part_avx512(q, g, per, k, v, n, hd, scale, o, m, l);
		return;
#endif
#ifdef HAVE_AVX2_KERNEL
	case KV_ISA_AVX2:
		part_avx2(q, g, per, k, v, n, hd, scale, s, o, m, l);
		return;
#endif
	default:
		part_c(q, g, per, k, v, n, hd, scale, s, o, m, l);
	}
}

void kv_attn_part(const float *q, uint32_t g, uint32_t per, const float *k,
		  const float *v, uint64_t n, uint32_t hd, float scale,
		  float *s, float *o, float *m, float *l, bool simd)
{
	enum kv_isa isa = KV_ISA_C;
	/* AVX-512 shares each K and V row between the rows of a group */
	if (simd && g >= KV_ATTN_WIDE_G &&
	    kv_attn_has_isa(KV_ISA_AVX512, hd))
		isa = KV_ISA_AVX512;
	else if (simd)
		isa = KV_ISA_AVX2;
	kv_attn_part_isa(q, g, per, k, v, n, hd, scale, s, o, m, l, isa);
}

#ifdef HAVE_AVX2_KERNEL
AVX2 static float exp_shift_avx2(float *x, uint64_t n, float m)
{
	__m256 mv = _mm256_set1_ps(m), acc = _mm256_setzero_ps();
	uint64_t i = 0;
	float sum = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 v = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
		_mm256_storeu_ps(x + i, v);
		acc = _mm256_add_ps(acc, v);
	}
	for (; i < n; i++) {
		x[i] = expf(x[i] - m);
		sum += x[i];
	}
	return sum + kv_hsum(acc);
}
#endif

float kv_exp_shift(float *x, uint64_t n, float m, bool simd)
{
#ifdef HAVE_AVX2_KERNEL
	if (simd && have_avx2())
		return exp_shift_avx2(x, n, m);
#endif
	float sum = 0;
	for (uint64_t i = 0; i < n; i++) {
		x[i] = expf(x[i] - m);
		sum += x[i];
	}
	return sum;
}

void kv_attn_softmax(float *s, uint32_t g, uint32_t per, uint64_t n,
		     float *m, float *l, bool simd)
{
	softmax_row_fn *row = softmax_row_c;
	(void)simd;
#ifdef HAVE_AVX2_KERNEL
	if (simd && have_avx2())
		row = softmax_row_avx2;
#endif
#ifdef HAVE_AVX512_KERNEL
	if (simd && have_avx512())
		row = softmax_row_avx512;
#endif
	softmax_rows(s, g, per, n, m, l, row);
}

void kv_attn_merge(float *o, float *m, float *l, const float *po,
		   const float *pm, const float *pl, uint32_t g, uint32_t hd)
{
	for (uint32_t i = 0; i < g; i++) {
		if (pl[i] == 0) /* saw nothing */
			continue;
		float mx = m[i] > pm[i] ? m[i] : pm[i];
		float wa = expf(m[i] - mx), wb = expf(pm[i] - mx);
		float *oi = o + (uint64_t)i * hd;
		const float *pi = po + (uint64_t)i * hd;
		l[i] = l[i] * wa + pl[i] * wb;
		for (uint32_t d = 0; d < hd; d++)
			oi[d] = oi[d] * wa + pi[d] * wb;
		m[i] = mx;
	}
}

void kv_attn_part_empty(float *pm, float *pl, uint32_t g)
{
	for (uint32_t i = 0; i < g; i++) {
		pm[i] = -INFINITY;
		pl[i] = 0;
	}
}

void kv_attn_merge_parts(float *out, const float *part, uint32_t parts,
			 uint32_t g, uint32_t hd)
{
	uint64_t stride = (uint64_t)g * (hd + 2); /* of a part */
	for (uint32_t i = 0; i < g; i++) {
		float *o = out + (uint64_t)i * hd;
		float mx = -INFINITY, sum = 0;
		for (uint32_t p = 0; p < parts; p++) {
			float pm = part[p * stride + (uint64_t)g * hd + i];
			mx = pm > mx ? pm : mx;
		}
		for (uint32_t d = 0; d < hd; d++)
			o[d] = 0;
		for (uint32_t p = 0; p < parts; p++) {
			const float *po = part + p * stride;
			const float *pm = po + (uint64_t)g * hd;
			if (pm[g + i] == 0)
				continue;
			float w = expf(pm[i] - mx);
			sum += w * pm[g + i];
			for (uint32_t d = 0; d < hd; d++)
				o[d] += w * po[(uint64_t)i * hd + d];
		}
		for (uint32_t d = 0; d < hd; d++)
			o[d] /= sum;
	}
}
