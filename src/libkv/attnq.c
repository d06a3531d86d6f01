/*
 * attnq.c - attention over a cache kept in a compact format: the scores
 * q k^T read K's encoded rows and the weighted sum of V reads V's, each
 * row decoded in registers as it is used, never into a copy of the cache.
 * The pass has the shape of the f32 kernels (attn.c): all scores of the
 * range, the exact softmax shared with them, then V, so m, l and o mean
 * what they mean there and parts over ranges of positions merge alike.
 *
 * Each format has a portable C kernel, the reference, and an AVX-512 one
 * (with F16C for the f16 scales) for head sizes that are a multiple of
 * 32: a row is decoded 32 values at a time into two registers, f16 by
 * vcvtph2ps, bf16 by a shift, fp8 e4m3 through f16 (its bits shifted into
 * an f16's, which is the value / 256 exactly, subnormals included; the
 * 256 is applied to the scores and the output), int8 and q8_0 by sign
 * extension, q4_0 and q4_1 by a 16-entry table lookup (vpermps) of each
 * nibble. Scores take eight positions at a time, one register of partial
 * sums each, added across lanes together at the end.
 */
#include <math.h>
#include <string.h>

#include "kvquant.h"

/* Positions per block: a block of rows stays in L1 while every query row
 * of a group reads it. */
#define QBLOCK 64
/* Most blocks of 32 in a row of the AVX-512 kernels (head size 512). */
#define ZMAXB 16

/* --- portable C --- */

/* Values c0 .. c0 + 32 (fewer at the end of a row of an element format)
 * of a row of hd values, into x; returns how many. */
static uint32_t chunk_c(enum kv_dtype t, const uint8_t *row, uint32_t hd,
			uint32_t c0, float *x)
{
	uint32_t cnt = hd - c0 < 32 ? hd - c0 : 32;
	switch (t) {
	case KV_DTYPE_F32: kv_quant_decode(t, row + 4 * c0, cnt, x); break;
	case KV_DTYPE_F16:
	case KV_DTYPE_BF16: kv_quant_decode(t, row + 2 * c0, cnt, x); break;
	case KV_DTYPE_FP8: kv_quant_decode(t, row + c0, cnt, x); break;
	case KV_DTYPE_INT8: {
		float s;
		memcpy(&s, row + hd, sizeof s);
		for (uint32_t i = 0; i < cnt; i++)
			x[i] = (float)(int8_t)row[c0 + i] * s;
		break;
	}
	case KV_DTYPE_Q8_0: kv_quant_decode(t, row + c0 / 32 * 34, 32, x); break;
	case KV_DTYPE_Q4_0: kv_quant_decode(t, row + c0 / 32 * 18, 32, x); break;
	case KV_DTYPE_Q4_1: kv_quant_decode(t, row + c0 / 32 * 20, 32, x); break;
	default: memset(x, 0, sizeof *x * cnt); break;
	}
	return cnt;
}

static void scores_c(const float *q, uint32_t g, const uint8_t *k,
		     const struct kv_rowfmt *f, uint64_t n, uint32_t hd,
		     float scale, float *s)
{
	float x[32];
	for (uint64_t p = 0; p < n; p++) {
		const uint8_t *row = k + p * f->krow;
		for (uint32_t i = 0; i < g; i++)
			s[i * n + p] = 0;
		for (uint32_t c0 = 0; c0 < hd; c0 += 32) {
			uint32_t cnt = chunk_c(f->k, row, hd, c0, x);
			for (uint32_t i = 0; i < g; i++) {
				const float *qi = q + (uint64_t)i * hd + c0;
				float acc = 0;
				for (uint32_t d = 0; d < cnt; d++)
					acc += qi[d] * x[d];
				s[i * n + p] += acc;
			}
		}
		for (uint32_t i = 0; i < g; i++)
			s[i * n + p] *= scale;
	}
}

static void values_c(const float *s, uint32_t g, const uint8_t *v,
		     const struct kv_rowfmt *f, uint64_t n, uint32_t hd,
		     float *o)
{
	float x[32];
	memset(o, 0, sizeof *o * g * hd);
	for (uint64_t p = 0; p < n; p++) {
		const uint8_t *row = v + p * f->vrow;
		for (uint32_t c0 = 0; c0 < hd; c0 += 32) {
			uint32_t cnt = chunk_c(f->v, row, hd, c0, x);
			for (uint32_t i = 0; i < g; i++) {
				float w = s[i * n + p];
				float *oi = o + (uint64_t)i * hd + c0;
				for (uint32_t d = 0; d < cnt; d++)
					oi[d] += w * x[d];
			}
		}
	}
}

/* --- AVX-512 --- */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_AVX512Q 1
#define AVX512Q __attribute__((target("avx512f,avx512bw,f16c,avx2,fma")))
#define INLINE __attribute__((always_inline)) static inline

/* Decoders: values 32b .. 32b + 32 of a row of hd values into lo, hi,
 * before the scales: a block format's d (and q4_1's m) are applied by
 * the kernels once per block (SC, MN), int8's per-row scale once per row
 * (RS), fp8's 256 once per call. */
AVX512Q INLINE void dec_f32(const uint8_t *r, uint32_t b, __m512 *lo,
			    __m512 *hi)
{
	*lo = _mm512_loadu_ps(r + 128 * b);
	*hi = _mm512_loadu_ps(r + 128 * b + 64);
}

AVX512Q INLINE void dec_f16(const uint8_t *r, uint32_t b, __m512 *lo,
			    __m512 *hi)
{
	*lo = _mm512_cvtph_ps(_mm256_loadu_si256((const void *)(r + 64 * b)));
	*hi = _mm512_cvtph_ps(
		_mm256_loadu_si256((const void *)(r + 64 * b + 32)));
}

AVX512Q INLINE void dec_bf16(const uint8_t *r, uint32_t b, __m512 *lo,
			     __m512 *hi)
{
	__m512i a = _mm512_cvtepu16_epi32(
		_mm256_loadu_si256((const void *)(r + 64 * b)));
	__m512i c = _mm512_cvtepu16_epi32(
		_mm256_loadu_si256((const void *)(r + 64 * b + 32)));
	*lo = _mm512_castsi512_ps(_mm512_slli_epi32(a, 16));
	*hi = _mm512_castsi512_ps(_mm512_slli_epi32(c, 16));
}

/* e4m3 s.eeee.mmm as the f16 s.0eeee.mmm0000000: the same value / 256 */
AVX512Q INLINE void dec_fp8(const uint8_t *r, uint32_t b, __m512 *lo,
			    __m512 *hi)
{
	__m512i w = _mm512_cvtepi8_epi16(
		_mm256_loadu_si256((const void *)(r + 32 * b)));
	w = _mm512_and_si512(_mm512_slli_epi16(w, 7),
			     _mm512_set1_epi16((short)0xbfff));
	*lo = _mm512_cvtph_ps(_mm512_castsi512_si256(w));
	*hi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(w, 1));
}

AVX512Q INLINE void dec_int8(const uint8_t *r, uint32_t b, __m512 *lo,
			     __m512 *hi)
{
	*lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
		_mm_loadu_si128((const void *)(r + 32 * b))));
	*hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
		_mm_loadu_si128((const void *)(r + 32 * b + 16))));
}

AVX512Q INLINE void dec_q8_0(const uint8_t *r, uint32_t b, __m512 *lo,
			     __m512 *hi)
{
	const uint8_t *blk = r + 34 * b;
	*lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
		_mm_loadu_si128((const void *)(blk + 2))));
	*hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
		_mm_loadu_si128((const void *)(blk + 18))));
}

/* A nibble through a 16-entry table: vpermps reads the low four bits of
 * each index, so the high nibble needs only a shift. */
AVX512Q INLINE void dec_nib(const uint8_t *qs, __m512 t, __m512 *lo,
			    __m512 *hi)
{
	__m512i x = _mm512_cvtepu8_epi32(_mm_loadu_si128((const void *)qs));
	*lo = _mm512_permutexvar_ps(x, t);
	*hi = _mm512_permutexvar_ps(_mm512_srli_epi32(x, 4), t);
}

AVX512Q INLINE void dec_q4_0(const uint8_t *r, uint32_t b, __m512 *lo,
			     __m512 *hi)
{
	dec_nib(r + 18 * b + 2,
		_mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4,
			       5, 6, 7),
		lo, hi);
}

AVX512Q INLINE void dec_q4_1(const uint8_t *r, uint32_t b, __m512 *lo,
			     __m512 *hi)
{
	dec_nib(r + 20 * b + 4,
		_mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
			       14, 15),
		lo, hi);
}

/* An f16 at p as a float (F16C). */
AVX512Q INLINE float half_at(const uint8_t *p)
{
	uint16_t h;
	memcpy(&h, p, 2);
	return _cvtsh_ss(h);
}

/* Block scale d (SC) and minimum m (MN) of block b; int8's row scale
 * (RS). Formats without one use 1 and 0, which fold away. */
#define SC_NONE(r, b) 1.0f
#define SC_Q8_0(r, b) half_at((r) + 34 * (b))
#define SC_Q4_0(r, b) half_at((r) + 18 * (b))
#define SC_Q4_1(r, b) half_at((r) + 20 * (b))
#define MN_NONE(r, b) 0.0f
#define MN_Q4_1(r, b) half_at((r) + 20 * (b) + 2)
#define RS_NONE(r, hd) 1.0f
#define RS_INT8(r, hd) row_scale((r), (hd))

INLINE float row_scale(const uint8_t *r, uint32_t hd)
{
	float s;
	memcpy(&s, r + hd, sizeof s);
	return s;
}

/* Sums of the lanes of eight registers, as eight lanes. */
AVX512Q INLINE __m256 sum8(const __m512 *a)
{
	__m256 h[8];
	for (int j = 0; j < 8; j++)
		h[j] = _mm256_add_ps(
			_mm512_castps512_ps256(a[j]),
			_mm256_castpd_ps(_mm512_extractf64x4_pd(
				_mm512_castps_pd(a[j]), 1)));
	__m256 t0 = _mm256_hadd_ps(h[0], h[1]), t1 = _mm256_hadd_ps(h[2], h[3]);
	__m256 t2 = _mm256_hadd_ps(h[4], h[5]), t3 = _mm256_hadd_ps(h[6], h[7]);
	t0 = _mm256_hadd_ps(t0, t1);
	t2 = _mm256_hadd_ps(t2, t3);
	return _mm256_add_ps(_mm256_permute2f128_ps(t0, t2, 0x20),
			     _mm256_permute2f128_ps(t0, t2, 0x31));
}

/* A row's dot product with query qi, before RS and the scale: per block,
 * the two halves' products, times d; with a minimum, m times the sum of
 * the block's query values (qsum) into *bias. */
#define DOT(FMT, SC, MN, BS, r, qi, qsum, nb, acc, bias)                     \
	do {                                                                 \
		for (uint32_t b_ = 0; b_ < (nb); b_++) {                     \
			__m512 lo_, hi_;                                     \
			__m512 q0_ = _mm512_loadu_ps((qi) + 32 * b_);        \
			__m512 q1_ = _mm512_loadu_ps((qi) + 32 * b_ + 16);   \
			dec_##FMT((r), b_, &lo_, &hi_);                      \
			if (BS) {                                            \
				__m512 t_ = _mm512_mul_ps(q0_, lo_);         \
				t_ = _mm512_fmadd_ps(q1_, hi_, t_);          \
				(acc) = _mm512_fmadd_ps(                     \
					_mm512_set1_ps(SC((r), b_)), t_,     \
					(acc));                              \
				(bias) += MN((r), b_) * (qsum)[b_];          \
			} else {                                             \
				(acc) = _mm512_fmadd_ps(q0_, lo_, (acc));    \
				(acc) = _mm512_fmadd_ps(q1_, hi_, (acc));    \
			}                                                    \
		}                                                            \
	} while (0)

/* s = q k^T x scale x KSCALE for one format, eight positions at a time. */
#define SCORES(FMT, SC, MN, BS, RS, KSCALE)                                 \
	AVX512Q static void scores_##FMT(const float *q, uint32_t g,         \
					 const uint8_t *k, uint32_t krow,    \
					 uint64_t n, uint32_t hd, float scale, \
					 float *s)                           \
	{                                                                    \
		uint32_t nb = hd / 32;                                       \
		float sc = scale * (KSCALE), qsum[ZMAXB] = {0};              \
		__m256 vs = _mm256_set1_ps(sc);                              \
		for (uint64_t p0 = 0; p0 < n; p0 += QBLOCK) {                \
			uint64_t p1 = p0 + QBLOCK < n ? p0 + QBLOCK : n, p;  \
			for (uint32_t i = 0; i < g; i++) {                   \
				const float *qi = q + (uint64_t)i * hd;      \
				float *si = s + i * n;                       \
				for (uint32_t b = 0; b < nb && BS; b++) {    \
					qsum[b] = 0;                         \
					for (uint32_t d = 0; d < 32; d++)    \
						qsum[b] += qi[32 * b + d];   \
				}                                            \
				for (p = p0; p + 8 <= p1; p += 8) {          \
					const uint8_t *r = k + p * krow;     \
					__m512 a[8];                         \
					float bias[8];                       \
					for (int j = 0; j < 8; j++) {        \
						a[j] = _mm512_setzero_ps();  \
						bias[j] = 0;                 \
						DOT(FMT, SC, MN, BS,         \
						    r + j * krow, qi, qsum,  \
						    nb, a[j], bias[j]);      \
						a[j] = _mm512_mul_ps(        \
							a[j],                \
							_mm512_set1_ps(RS(   \
								r + j * krow, \
								hd)));       \
					}                                    \
					_mm256_storeu_ps(                    \
						si + p,                      \
						_mm256_mul_ps(sum8(a), vs)); \
					for (int j = 0; j < 8 && BS == 2; \
					     j++)                            \
						si[p + j] += bias[j] * sc;   \
				}                                            \
				for (; p < p1; p++) {                        \
					const uint8_t *r = k + p * krow;     \
					__m512 a = _mm512_setzero_ps();      \
					float bias = 0;                      \
					DOT(FMT, SC, MN, BS, r, qi, qsum, nb, \
					    a, bias);                        \
					si[p] = (_mm512_reduce_add_ps(a) *   \
							 RS(r, hd) +         \
						 bias) *                     \
						sc;                          \
				}                                            \
			}                                                    \
		}                                                            \
	}

/* o += w v of position p on blocks b0 .. b0 + NB (NB 1 or 2) into the
 * accumulators a (2 NB registers); a block's minimum into msum[b]. */
#define AXPY(FMT, SC, MN, BS, r, w, b0, NB, a, msum)                         \
	do {                                                                 \
		for (uint32_t c_ = 0; c_ < (NB); c_++) {                     \
			__m512 lo_, hi_, w_;                                 \
			dec_##FMT((r), (b0) + c_, &lo_, &hi_);               \
			w_ = _mm512_set1_ps(BS ? (w) * SC((r), (b0) + c_)    \
					       : (w));                       \
			(a)[2 * c_] = _mm512_fmadd_ps(w_, lo_, (a)[2 * c_]); \
			(a)[2 * c_ + 1] =                                    \
				_mm512_fmadd_ps(w_, hi_, (a)[2 * c_ + 1]);   \
			if (BS)                                              \
				(msum)[(b0) + c_] += (w) * MN((r), (b0) + c_); \
		}                                                            \
	} while (0)

/* o = s v for one format: 64 values of the head (two blocks, four
 * registers) at a time across a block of positions, two positions at a
 * time into two sets of registers so that no chain of FMAs waits on the
 * last; then a last 32. */
#define VALUES(FMT, SC, MN, BS, RS, VSCALE)                                 \
	AVX512Q static void values_##FMT(const float *s, uint32_t g,         \
					 const uint8_t *v, uint32_t vrow,    \
					 uint64_t n, uint32_t hd, float *o)  \
	{                                                                    \
		uint32_t nb = hd / 32;                                       \
		memset(o, 0, sizeof *o * g * hd);                            \
		for (uint64_t p0 = 0; p0 < n; p0 += QBLOCK) {                \
			uint64_t p1 = p0 + QBLOCK < n ? p0 + QBLOCK : n;     \
			for (uint32_t i = 0; i < g; i++) {                   \
				const float *si = s + i * n;                 \
				float *oi = o + (uint64_t)i * hd;            \
				float msum[ZMAXB] = {0};                     \
				for (uint32_t b = 0; b < nb; b += 2) {       \
					uint32_t nc = nb - b < 2 ? 1 : 2;    \
					float *ob = oi + 32 * b;             \
					__m512 a[4], c[4];                   \
					for (uint32_t j = 0; j < 2 * nc; j++) { \
						a[j] = _mm512_loadu_ps(      \
							ob + 16 * j);        \
						c[j] = _mm512_setzero_ps();  \
					}                                    \
					uint64_t p = p0;                     \
					for (; nc == 2 && p + 2 <= p1;       \
					     p += 2) {                       \
						const uint8_t *r =           \
							v + p * vrow;        \
						float w0 = si[p] * RS(r, hd); \
						float w1 = si[p + 1] *       \
							   RS(r + vrow, hd); \
						AXPY(FMT, SC, MN, BS, r, w0, \
						     b, 2, a, msum);         \
						AXPY(FMT, SC, MN, BS,        \
						     r + vrow, w1, b, 2, c,  \
						     msum);                  \
					}                                    \
					for (; p < p1; p++) {                \
						const uint8_t *r =           \
							v + p * vrow;        \
						float w0 = si[p] * RS(r, hd); \
						if (nc == 2)                 \
							AXPY(FMT, SC, MN, BS, \
							     r, w0, b, 2, a, \
							     msum);          \
						else                         \
							AXPY(FMT, SC, MN, BS, \
							     r, w0, b, 1, a, \
							     msum);          \
					}                                    \
					for (uint32_t j = 0; j < 2 * nc; j++) \
						_mm512_storeu_ps(            \
							ob + 16 * j,         \
							_mm512_add_ps(a[j],  \
								      c[j])); \
				}                                            \
				for (uint32_t b = 0; b < nb && BS; b++)      \
					for (uint32_t d = 0; d < 32 &&       \
							     msum[b] != 0;   \
					     d++)                            \
						oi[32 * b + d] += msum[b];   \
			}                                                    \
		}                                                            \
		if ((VSCALE) != 1.0f)                                        \
			for (uint64_t i = 0; i < (uint64_t)g * hd; i++)      \
				o[i] *= (VSCALE);                            \
	}

#define KERNELS(FMT, SC, MN, BS, RS, X)                                     \
	SCORES(FMT, SC, MN, BS, RS, X) VALUES(FMT, SC, MN, BS, RS, X)
KERNELS(f32, SC_NONE, MN_NONE, 0, RS_NONE, 1.0f)
KERNELS(f16, SC_NONE, MN_NONE, 0, RS_NONE, 1.0f)
KERNELS(bf16, SC_NONE, MN_NONE, 0, RS_NONE, 1.0f)
KERNELS(fp8, SC_NONE, MN_NONE, 0, RS_NONE, 256.0f)
KERNELS(int8, SC_NONE, MN_NONE, 0, RS_INT8, 1.0f)
KERNELS(q8_0, SC_Q8_0, MN_NONE, 1, RS_NONE, 1.0f)
KERNELS(q4_0, SC_Q4_0, MN_NONE, 1, RS_NONE, 1.0f)
KERNELS(q4_1, SC_Q4_1, MN_Q4_1, 2, RS_NONE, 1.0f)

typedef void scores_fn(const float *q, uint32_t g, const uint8_t *k,
		       uint32_t krow, uint64_t n, uint32_t hd, float scale,
		       float *s);
typedef void values_fn(const float *s, uint32_t g, const uint8_t *v,
		       uint32_t vrow, uint64_t n, uint32_t hd, float *o);

static scores_fn *const zscores[KV_DTYPE_COUNT] = {
	[KV_DTYPE_F32] = scores_f32,   [KV_DTYPE_F16] = scores_f16,
	[KV_DTYPE_BF16] = scores_bf16, [KV_DTYPE_FP8] = scores_fp8,
	[KV_DTYPE_INT8] = scores_int8, [KV_DTYPE_Q8_0] = scores_q8_0,
	[KV_DTYPE_Q4_0] = scores_q4_0, [KV_DTYPE_Q4_1] = scores_q4_1,
};
static values_fn *const zvalues[KV_DTYPE_COUNT] = {
	[KV_DTYPE_F32] = values_f32,   [KV_DTYPE_F16] = values_f16,
	[KV_DTYPE_BF16] = values_bf16, [KV_DTYPE_FP8] = values_fp8,
	[KV_DTYPE_INT8] = values_int8, [KV_DTYPE_Q8_0] = values_q8_0,
	[KV_DTYPE_Q4_0] = values_q4_0, [KV_DTYPE_Q4_1] = values_q4_1,
};
#endif

bool kv_attnq_has_simd(uint32_t hd)
{
#ifdef HAVE_AVX512Q
	static int have = -1;
	if (have < 0) {
		__builtin_cpu_init();
		have = __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512bw") &&
		       __builtin_cpu_supports("f16c");
	}
	return have && hd % 32 == 0 && hd / 32 <= ZMAXB;
#else
	(void)hd;
	return false;
#endif
}

void kv_attnq_part(const float *q, uint32_t g, uint32_t per,
		   const uint8_t *k, const uint8_t *v,
		   const struct kv_rowfmt *f, uint64_t n, uint32_t hd,
		   float scale, float *s, float *o, float *m, float *l,
		   enum kv_isa isa)
{
#ifdef HAVE_AVX512Q
	if (isa == KV_ISA_AVX512 && kv_attnq_has_simd(hd) &&
	    zscores[f->k] && zvalues[f->v]) {
		zscores[f->k](q, g, k, f->krow, n, hd, scale, s);
		kv_attn_softmax(s, g, per, n, m, l, true);
		zvalues[f->v](s, g, v, f->vrow, n, hd, o);
		return;
	}
#endif
	(void)isa;
	scores_c(q, g, k, f, n, hd, scale, s);
	kv_attn_softmax(s, g, per, n, m, l, false);
	values_c(s, g, v, f, n, hd, o);
}
