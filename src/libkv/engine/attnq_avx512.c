/*
 * attnq_avx512.c - the AVX-512 kernels of attention over a compact cache
 * (see attnq.c for the formats and how each is read): scores and
 * weighted sums of V by format, for head sizes that are a multiple of
 * 32, exported as one table (struct kvq_avx512) that attnq.c picks from
 * by format and by what the CPU has. Every kernel computes what its
 * portable twin in attnq.c computes, up to the order of its sums; the
 * tests compare them (unit/test_kvquant_avx512).
 */
#include <math.h>
#include <string.h>

#include "attnq_int.h"

#ifdef HAVE_AVX512Q
#include <immintrin.h>

#define AVX512Q __attribute__((target("avx512f,avx512bw,f16c,avx2,fma")))
#define INLINE __attribute__((always_inline)) static inline

/* Software prefetch for the len bytes at address p of a stream read run
 * by run (run: a run's bytes): into L1 from the next run, into L2 from
 * three runs on. The q4_0 kernels call it for each stream (K's rows,
 * V's) spread over a run. With the hardware's prefetch alone a core
 * waited on most of a run's lines: the two threads of a step over 8,192
 * positions pulled about 29 GB/s of a probe's 50. The L1 prefetch made
 * that step about 5% faster, the L2 one about 4% more (one run ahead
 * into L2, or two into L1, gained less; a burst of a whole run's
 * prefetches at once lost). As an address, p may lie past the stream's
 * end: a prefetch never faults. */
INLINE void ahead(uintptr_t p, uint32_t len, uint32_t run)
{
	for (uint32_t t = 0; t < len; t += 64) {
		_mm_prefetch((const char *)(p + run + t), _MM_HINT_T0);
		_mm_prefetch((const char *)(p + 3 * run + t), _MM_HINT_T1);
	}
}

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

/* e4m3 s.eeee.mmm as the f32 s.0000eeee.mmm0...: the same value / 2^120
 * exactly (e4m3's subnormals as f32 subnormals) */
AVX512Q INLINE void dec_fp8(const uint8_t *r, uint32_t b, __m512 *lo,
			    __m512 *hi)
{
	const __m512i m = _mm512_set1_epi32((int)0x87f00000);
	__m512i a = _mm512_cvtepi8_epi32(
		_mm_loadu_si128((const void *)(r + 32 * b)));
	__m512i c = _mm512_cvtepi8_epi32(
		_mm_loadu_si128((const void *)(r + 32 * b + 16)));
	*lo = _mm512_castsi512_ps(_mm512_and_si512(_mm512_slli_epi32(a, 20), m));
	*hi = _mm512_castsi512_ps(_mm512_and_si512(_mm512_slli_epi32(c, 20), m));
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
				if (BS == 2)                                 \
					(bias) += MN((r), b_) * (qsum)[b_];  \
			} else {                                             \
				(acc) = _mm512_fmadd_ps(q0_, lo_, (acc));    \
				(acc) = _mm512_fmadd_ps(q1_, hi_, (acc));    \
			}                                                    \
		}                                                            \
	} while (0)

/* CALL with HD_ the head size hd, a constant for the common sizes (64,
 * 128), so the inlined kernel's loops over blocks unroll and keep the
 * query in registers (fp8's scores at 64: 3.1 ns a position on one core
 * from cache, 4.1 with hd a variable). */
#define BY_HD(hd, CALL)                                                      \
	do {                                                                 \
		if ((hd) == 64) {                                            \
			const uint32_t HD_ = 64;                             \
			CALL;                                                \
		} else if ((hd) == 128) {                                    \
			const uint32_t HD_ = 128;                            \
			CALL;                                                \
		} else {                                                     \
			const uint32_t HD_ = (hd);                           \
			CALL;                                                \
		}                                                            \
	} while (0)

/* A scores kernel NAME (compiled for TARGET) calling its inlined body
 * NAME##_hd through BY_HD. */
#define SCORES_BY_HD(TARGET, NAME)                                           \
	TARGET static void NAME(const float *q, uint32_t g,                  \
				const uint8_t *k, uint32_t krow, uint64_t n, \
				uint32_t hd, float scale, float *s)          \
	{                                                                    \
		BY_HD(hd, NAME##_hd(q, g, k, krow, n, HD_, scale, s));       \
	}

/* s = q k^T x scale x KSCALE for one format, eight positions at a time. */
#define SCORES(FMT, SC, MN, BS, RS, KSCALE)                                 \
	AVX512Q INLINE void scores_##FMT##_hd(const float *q, uint32_t g,    \
					const uint8_t *k, uint32_t krow,     \
					uint64_t n, uint32_t hd, float scale, \
					float *s)                            \
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
			if (BS == 2) /* a minimum: q4_1 */                   \
				(msum)[(b0) + c_] += (w) * MN((r), (b0) + c_); \
		}                                                            \
	} while (0)

/* o = s v for one format: 64 values of the head (two blocks, four
 * registers) at a time across a block of positions, two positions at a
 * time into two sets of registers so that no chain of FMAs waits on the
 * last; then a last 32. */
#define VALUES(FMT, SC, MN, BS, RS, VSCALE)                                 \
	AVX512Q INLINE void values_##FMT##_hd(const float *s, uint32_t g,      \
					const uint8_t *v, uint32_t vrow,     \
					uint64_t n, uint32_t hd, float *o)   \
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
	}                                                                    \
	AVX512Q static void values_##FMT(const float *s, uint32_t g,         \
				     const uint8_t *v, uint32_t vrow,        \
				     uint64_t n, uint32_t hd, float *o)      \
	{                                                                    \
		BY_HD(hd, values_##FMT##_hd(s, g, v, vrow, n, HD_, o));      \
	}

#define KERNELS(FMT, SC, MN, BS, RS, X)                                     \
	SCORES(FMT, SC, MN, BS, RS, X)                                       \
	SCORES_BY_HD(AVX512Q, scores_##FMT)                                  \
	VALUES(FMT, SC, MN, BS, RS, X)
KERNELS(f32, SC_NONE, MN_NONE, 0, RS_NONE, 1.0f)
KERNELS(f16, SC_NONE, MN_NONE, 0, RS_NONE, 1.0f)
KERNELS(bf16, SC_NONE, MN_NONE, 0, RS_NONE, 1.0f)
SCORES(fp8, SC_NONE, MN_NONE, 0, RS_NONE, 0x1p120f)
VALUES(fp8, SC_NONE, MN_NONE, 0, RS_NONE, 0x1p120f)

/* Float bits u to bf16 by integer adds, to nearest even, as float bits;
 * zero where u is subnormal (bf16_daz()). */
AVX512Q INLINE __m512i rne16(__m512i u)
{
	__m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16),
				       _mm512_set1_epi32(1));
	__m512i r = _mm512_add_epi32(
		u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), odd));
	__mmask16 nz = _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x7f800000));
	return _mm512_maskz_and_epi32(nz, r,
				      _mm512_set1_epi32((int)0xffff0000u));
}

/* cnt floats x to 16 bits (round16_c()) into y (which may be x), for
 * CPUs without AVX-512 BF16. */
AVX512Q static void round16_rows(const float *x, uint64_t cnt, float *y)
{
	for (uint64_t i = 0; i < cnt; i += 16) {
		uint32_t left = cnt - i < 16 ? (uint32_t)(cnt - i) : 16;
		__mmask16 m = (__mmask16)((1u << left) - 1);
		__m512 v = _mm512_maskz_loadu_ps(m, x + i);
		__m512 h = _mm512_castsi512_ps(rne16(_mm512_castps_si512(v)));
		__m512 l = _mm512_castsi512_ps(
			rne16(_mm512_castps_si512(_mm512_sub_ps(v, h))));
		_mm512_mask_storeu_ps(y + i, m, _mm512_add_ps(h, l));
	}
}

/* fp8's float kernel takes the query to 16 bits, as fp8's bf16 kernel
 * (scores_fp8b()) and the portable one do. */
AVX512Q static void scores_fp8(const float *q, uint32_t g, const uint8_t *k,
			       uint32_t krow, uint64_t n, uint32_t hd,
			       float scale, float *s)
{
	_Alignas(64) float qr[8 * ZMAXB * 32];
	for (uint32_t i0 = 0; i0 < g; i0 += 8) {
		uint32_t gi = g - i0 < 8 ? g - i0 : 8;
		round16_rows(q + (uint64_t)i0 * hd, (uint64_t)gi * hd, qr);
		BY_HD(hd, scores_fp8_hd(qr, gi, k, krow, n, HD_, scale,
					s + (uint64_t)i0 * n));
	}
}
VALUES(int8, SC_NONE, MN_NONE, 0, RS_INT8, 1.0f)
VALUES(q8_0, SC_Q8_0, MN_NONE, 1, RS_NONE, 1.0f)

/*
 * int8 and q8_0 K with AVX-512 VNNI: 64 values of a row (a pair of
 * blocks) as 64 unsigned bytes, multiplied with the query quantized per
 * block (kvq_quant_q8(), its bytes in the same order) by one vpdpbusd. The
 * bytes are biased by 128 (x ^ 0x80); each lane's sum of four products
 * then starts from -128 times its four query bytes. Lanes 8h .. 8h + 7
 * belong to block h of the pair; each lane's sum is scaled by its
 * block's d dq (int8: dq, then the row's scale) before the eight
 * positions' lanes are added together. (q4_0 K: vscores_q4_0() below.)
 */
#define AVX512V                                                              \
	__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c,"   \
			      "avx2,fma")))

/* The query row's pairs of blocks: bytes, -bias x the lane sums, dq. */
struct qpairs {
	_Alignas(64) int8_t q8[ZMAXB / 2][64];
	_Alignas(64) int32_t c8[ZMAXB / 2][16];
	_Alignas(64) float dq[ZMAXB / 2][16];
};

static void make_qpairs(const float *qi, uint32_t nb, struct qpairs *qp)
{
	const int32_t bias = 128;
	for (uint32_t b = 0; b < nb; b++) {
		int8_t q8[32];
		float dq = kvq_quant_q8(qi + 32 * b, q8);
		uint32_t pr = b / 2, h = b % 2;
		/* where bytes 0..15 and 16..31 of the block go */
		uint32_t at0 = 32 * h, at1 = 32 * h + 16;
		memcpy(&qp->q8[pr][at0], q8, 16);
		memcpy(&qp->q8[pr][at1], q8 + 16, 16);
		for (uint32_t l = 0; l < 4; l++) {
			int32_t a = 0, c = 0;
			for (uint32_t t = 0; t < 4; t++) {
				a += q8[4 * l + t];
				c += q8[16 + 4 * l + t];
			}
			qp->c8[pr][at0 / 4 + l] = -bias * a;
			qp->c8[pr][at1 / 4 + l] = -bias * c;
			qp->dq[pr][at0 / 4 + l] = qp->dq[pr][at1 / 4 + l] = dq;
		}
	}
}

AVX512V INLINE __m512i pair_q8_0(const uint8_t *r, uint32_t pr, __m512 *d)
{
	const uint8_t *b0 = r + 68 * pr;
	__m512i z = _mm512_inserti64x4(
		_mm512_castsi256_si512(
			_mm256_loadu_si256((const void *)(b0 + 2))),
		_mm256_loadu_si256((const void *)(b0 + 36)), 1);
	uint16_t h0, h1;
	memcpy(&h0, b0, 2);
	memcpy(&h1, b0 + 34, 2);
	*d = _mm512_cvtph_ps(_mm256_mask_set1_epi16(
		_mm256_set1_epi16((short)h0), 0xff00, (short)h1));
	return _mm512_xor_si512(z, _mm512_set1_epi8((char)0x80));
}

AVX512V INLINE __m512i pair_int8(const uint8_t *r, uint32_t pr, __m512 *d)
{
	*d = _mm512_set1_ps(1.0f); /* the row's scale comes after */
	return _mm512_xor_si512(_mm512_loadu_si512(r + 64 * pr),
				_mm512_set1_epi8((char)0x80));
}

#define VNNI_SCORES(FMT, RS)                                                 \
	AVX512V INLINE __m512 dot_##FMT(const uint8_t *r,                    \
					const struct qpairs *qp, uint32_t np, \
					uint32_t hd)                         \
	{                                                                    \
		__m512 a = _mm512_setzero_ps(), d;                           \
		(void)hd;                                                    \
		for (uint32_t pr = 0; pr < np; pr++) {                       \
			__m512i z = pair_##FMT(r, pr, &d);                   \
			__m512i t = _mm512_dpbusd_epi32(                     \
				_mm512_load_si512(qp->c8[pr]), z,            \
				_mm512_load_si512(qp->q8[pr]));              \
			a = _mm512_fmadd_ps(                                 \
				_mm512_cvtepi32_ps(t),                       \
				_mm512_mul_ps(d, _mm512_load_ps(qp->dq[pr])), \
				a);                                          \
		}                                                            \
		return _mm512_mul_ps(a, _mm512_set1_ps(RS(r, hd)));          \
	}                                                                    \
	AVX512V INLINE void vscores_##FMT##_hd(const float *q, uint32_t g,   \
					     const uint8_t *k, uint32_t krow, \
					     uint64_t n, uint32_t hd,        \
					     float scale, float *s)          \
	{                                                                    \
		uint32_t nb = hd / 32;                                       \
		struct qpairs qp[QROWS];                                     \
		__m256 vs = _mm256_set1_ps(scale);                           \
		for (uint32_t i0 = 0; i0 < g; i0 += QROWS) {                 \
			uint32_t i1 = i0 + QROWS < g ? i0 + QROWS : g;       \
			for (uint32_t i = i0; i < i1; i++)                   \
				make_qpairs(q + (uint64_t)i * hd, nb,        \
					    &qp[i - i0]);                    \
			for (uint64_t p0 = 0; p0 < n; p0 += QBLOCK) {        \
				uint64_t p1 = p0 + QBLOCK < n ? p0 + QBLOCK  \
							      : n,           \
					 p;                                  \
				for (uint32_t i = i0; i < i1; i++) {         \
					const struct qpairs *qi = &qp[i - i0]; \
					float *si = s + i * n;               \
					for (p = p0; p + 8 <= p1; p += 8) {  \
						__m512 a[8];                 \
						for (int j = 0; j < 8; j++)  \
							a[j] = dot_##FMT(    \
								k + (p + j) * krow, \
								qi, nb / 2, hd); \
						_mm256_storeu_ps(            \
							si + p,              \
							_mm256_mul_ps(sum8(a), \
								      vs));  \
					}                                    \
					for (; p < p1; p++)                  \
						si[p] = _mm512_reduce_add_ps( \
								dot_##FMT(   \
									k + p * krow, \
									qi, nb / 2, \
									hd)) * \
							scale;               \
				}                                            \
			}                                                    \
		}                                                            \
	}                                                                    \
	SCORES_BY_HD(AVX512V, vscores_##FMT)

/* Query rows quantized together, so each K block of positions is read
 * once for all of them. */
#define QROWS 8

VNNI_SCORES(q8_0, RS_NONE)

/*
 * q4_0 K with AVX-512 VNNI and VBMI, read as a stream of blocks: block m
 * of the range (row m / nb, block m % nb of the head) lies at k + 18 m,
 * and four of them (a unit, 72 bytes) go together. One vpermt2b gathers
 * a unit's 64 bytes of nibbles from two loads; their low nibbles (x & 15)
 * and their high ones (shifted down by one GFNI affine map) go through
 * two vpdpbusd with the query's bytes for those values, starting from -8
 * times the sums of those bytes (a nibble holds its value + 8). Four
 * units' lanes fold into one register of 16 blocks' sums (lane 4j + u:
 * block j of unit u), scaled by the blocks' d (vpermw picks them from the
 * loads) and the query's dq. A row's score is the sum of its nb blocks:
 * with nb dividing 16 a butterfly of adds over the register, else a short
 * loop. Each unit of K is unpacked once for every query row of a group.
 */
#define AVX512W                                                              \
	__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,"        \
			      "avx512vbmi,f16c,avx2,fma")))
#define AVX512G                                                              \
	__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,"        \
			      "avx512vbmi,gfni,f16c,avx2,fma")))

/* The bytes at p of a stream with `left` of them from p: 64, or those
 * left (zero past them), or none. */
AVX512W INLINE __m512i load_left(const uint8_t *p, int64_t left)
{
	if (left >= 64)
		return _mm512_loadu_si512(p);
	if (left <= 0)
		return _mm512_setzero_si512();
	return _mm512_maskz_loadu_epi8((1ull << left) - 1, p);
}

/* A query row for vscores_q4_0(): for each unit's blocks (4u .. 4u + 3
 * mod nb, a pattern that repeats every nb / gcd(nb, 4) units) the query
 * bytes of the low and the high nibbles and, per lane, -8 x the sum of
 * its query bytes (the nibbles hold value + 8); per 16 blocks in fold
 * order (every nb / gcd(nb, 16) groups) dq x the scale. */
struct q4row {
	_Alignas(64) int8_t lo[ZMAXB][64], hi[ZMAXB][64];
	_Alignas(64) int32_t bias[ZMAXB][16];
	_Alignas(64) float dq[ZMAXB][16];
};

/* gcd(nb, m) for m a power of two, in a form a constant nb folds. */
static inline uint32_t gcd2(uint32_t nb, uint32_t m)
{
	uint32_t low = nb & -nb; /* nb's largest power-of-two factor */
	return low < m ? low : m;
}

static void make_q4row(const float *qi, uint32_t nb, float scale,
		       struct q4row *r)
{
	int8_t q8[ZMAXB][32];
	float dq[ZMAXB];
	for (uint32_t b = 0; b < nb; b++)
		dq[b] = kvq_quant_q8(qi + 32 * b, q8[b]);
	for (uint32_t u = 0; u < nb / gcd2(nb, 4); u++)
		for (uint32_t j = 0; j < 4; j++) {
			uint32_t b = (4 * u + j) % nb;
			memcpy(&r->lo[u][16 * j], q8[b], 16);
			memcpy(&r->hi[u][16 * j], q8[b] + 16, 16);
			for (uint32_t l = 0; l < 4; l++) {
				int32_t t = 0;
				for (uint32_t e = 0; e < 4; e++)
					t += q8[b][4 * l + e] +
					     q8[b][16 + 4 * l + e];
				r->bias[u][4 * j + l] = -8 * t;
			}
		}
	for (uint32_t gp = 0; gp < nb / gcd2(nb, 16); gp++)
		for (uint32_t l = 0; l < 16; l++)
			r->dq[gp][l] = dq[(16 * gp + 4 * (l % 4) + l / 4) % nb] *
				       scale;
}

/* The unit at byte off of k: its nibble bytes as low and high nibbles
 * (the high ones shifted down by a GFNI affine map, one instruction),
 * its blocks' d into lanes 4j + at of *d. With `left` (the bytes of the
 * range from off) under 72, loads stop there. */
AVX512G INLINE void q4_unit(const uint8_t *k, int64_t off, int64_t left,
			    uint32_t at, __m512i *lo, __m512i *hi,
			    __m512i *d)
{
	const __m512i dw = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					    0, 0, 0, 0, 0, 27, 27, 27, 27, 18,
					    18, 18, 18, 9, 9, 9, 9, 0, 0, 0,
					    0);
	const __m512i ix = _mm512_set_epi8(
		127, 126, 125, 124, 123, 122, 121, 120, 119, 118, 117, 116,
		115, 114, 113, 112, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43,
		42, 41, 40, 39, 38, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25,
		24, 23, 22, 21, 20, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6,
		5, 4, 3, 2);
	__m512i z0 = load_left(k + off, left);
	__m512i z1 = load_left(k + off + 8, left - 8);
	__m512i x = _mm512_permutex2var_epi8(z0, ix, z1);
	*lo = _mm512_and_si512(x, _mm512_set1_epi8(15));
	*hi = _mm512_gf2p8affine_epi64_epi8(
		x, _mm512_set1_epi64(0x1020408000000000ll), 0);
	*d = _mm512_mask_permutexvar_epi16(*d, 0x1111u << at, dw, z0);
}

/* The group of 16 blocks at byte off of k (bytes in all; full: all its
 * 288 bytes lie in them): four units' nibbles, and the blocks' d in fold
 * order (lane 4j + u: block 4u + j). */
AVX512G INLINE __m512 q4_group(const uint8_t *k, int64_t off, int64_t bytes,
			       bool full, __m512i *lo, __m512i *hi)
{
	__m512i dh = _mm512_setzero_si512();
	for (uint32_t u = 0; u < 4; u++)
		q4_unit(k, off + 72 * u, full ? 72 : bytes - off - 72 * u, u,
			&lo[u], &hi[u], &dh);
	return _mm512_cvtph_ps(_mm512_castsi512_si256(dh));
}

/* A group's 16 blocks against query row r, group pattern c, unit pattern
 * u0: their scores times d dq x scale, in fold order. */
AVX512G INLINE __m512 q4_sums(const __m512i *lo, const __m512i *hi,
			      __m512 d, const struct q4row *r, uint32_t c,
			      uint32_t u0, uint32_t up)
{
	__m512i t[4];
	for (uint32_t u = 0, pu = u0; u < 4; u++, pu = pu + 1 < up ? pu + 1 : 0)
		t[u] = _mm512_dpbusd_epi32(
			_mm512_dpbusd_epi32(_mm512_load_si512(r->bias[pu]),
					    lo[u], _mm512_load_si512(r->lo[pu])),
			hi[u], _mm512_load_si512(r->hi[pu]));
	__m512i a = _mm512_add_epi32(_mm512_unpacklo_epi32(t[0], t[1]),
				     _mm512_unpackhi_epi32(t[0], t[1]));
	__m512i b = _mm512_add_epi32(_mm512_unpacklo_epi32(t[2], t[3]),
				     _mm512_unpackhi_epi32(t[2], t[3]));
	__m512i sum = _mm512_add_epi32(_mm512_unpacklo_epi64(a, b),
				       _mm512_unpackhi_epi64(a, b));
	return _mm512_mul_ps(_mm512_cvtepi32_ps(sum),
			     _mm512_mul_ps(d, _mm512_load_ps(r->dq[c])));
}

/* Lanes b R + r of x summed over b into lanes 0 .. R (R a power of two
 * <= 16): halves added until R lanes are left. */
AVX512G INLINE __m512 fold_rows(__m512 x, uint32_t R)
{
	if (R <= 8)
		x = _mm512_add_ps(x, _mm512_shuffle_f32x4(x, x, 0x4e));
	if (R <= 4)
		x = _mm512_add_ps(x, _mm512_shuffle_f32x4(x, x, 0xb1));
	if (R <= 2)
		x = _mm512_add_ps(x, _mm512_permute_ps(x, 0x4e));
	if (R <= 1)
		x = _mm512_add_ps(x, _mm512_permute_ps(x, 0xb1));
	return x;
}

/* Lanes 0 .. cnt of x to s, by the widest plain store that fits. */
AVX512G INLINE void put_rows(__m512 x, uint32_t cnt, float *s)
{
	if (cnt == 16) {
		_mm512_storeu_ps(s, x);
	} else if (cnt == 8) {
		_mm256_storeu_ps(s, _mm512_castps512_ps256(x));
	} else if (cnt == 4) {
		_mm_storeu_ps(s, _mm512_castps512_ps128(x));
	} else if (cnt == 2) {
		_mm_storel_pi((__m64 *)(void *)s, _mm512_castps512_ps128(x));
	} else if (cnt == 1) {
		_mm_store_ss(s, _mm512_castps512_ps128(x));
	} else {
		_Alignas(64) float t[16];
		_mm512_store_ps(t, x);
		memcpy(s, t, cnt * sizeof *t);
	}
}

/* Rows p .. p + cnt (R rows: gp groups from byte off) for query rows
 * qr[0 .. nr], into s: row i's at s + i sn. */
AVX512G INLINE void q4_rows(const uint8_t *k, int64_t off, int64_t bytes,
			    bool full, const struct q4row *qr, uint32_t nr,
			    uint32_t nb, uint32_t up, uint32_t gp, uint32_t R,
			    uint32_t u0, __m512i perm, uint32_t cnt, float *s,
			    uint64_t sn)
{
	_Alignas(64) float bv[QROWS][16 * ZMAXB];
	for (uint32_t c = 0; c < gp; c++, off += 288) {
		__m512i lo[4], hi[4];
		ahead((uintptr_t)k + (uintptr_t)off, 288, QBLOCK * 18 * nb);
		__m512 d = q4_group(k, off, bytes, full, lo, hi);
		for (uint32_t i = 0; i < nr; i++) {
			__m512 x = _mm512_permutexvar_ps(
				perm, q4_sums(lo, hi, d, &qr[i], c, u0, up));
			if (gp == 1)
				put_rows(fold_rows(x, R), cnt, s + i * sn);
			else
				_mm512_store_ps(&bv[i][16 * c], x);
		}
		u0 = (u0 + 4) % up;
	}
	for (uint32_t i = 0; i < nr && gp > 1; i++)
		for (uint32_t r = 0; r < cnt; r++) {
			float a = 0;
			for (uint32_t b = 0; b < nb; b++)
				a += bv[i][r * nb + b];
			s[i * sn + r] = a;
		}
}

/* From fold order (lane 4j + u: block 4u + j) to lane b R + r for
 * block r nb + b (nb dividing 16), else to block order. */
AVX512G INLINE __m512i q4_perm(uint32_t nb)
{
	uint32_t gp = nb / gcd2(nb, 16), R = 16 * gp / nb;
	_Alignas(64) int32_t ord[16];
	for (uint32_t l = 0; l < 16; l++) {
		uint32_t m = gp == 1 ? l % R * nb + l / R : l;
		ord[l] = (int32_t)(4 * (m % 4) + m / 4);
	}
	return _mm512_load_si512(ord);
}

/* Scores of rows [p0, p1) of the n at k (p0 a multiple of 16) for query
 * rows qr[0 .. nr] into s: row i's position p at s[i sn + p - p0]. */
AVX512G INLINE void q4_range(const uint8_t *k, uint64_t n,
			     const struct q4row *qr, uint32_t nr, uint32_t nb,
			     __m512i perm, uint64_t p0, uint64_t p1, float *s,
			     uint64_t sn)
{
	uint32_t up = nb / gcd2(nb, 4), gp = nb / gcd2(nb, 16);
	uint32_t R = 16 * gp / nb; /* rows per gp groups */
	int64_t bytes = (int64_t)(n * nb * 18);
	for (uint64_t p = p0; p < p1; p += R) {
		uint64_t ch = p / R;
		int64_t off = (int64_t)(ch * 288 * gp);
		uint32_t cnt = (uint32_t)(p1 - p < R ? p1 - p : R);
		uint32_t u0 = (uint32_t)(4 * gp * ch % up); /* unit's pattern */
		if (bytes - off >= 288 * gp)
			q4_rows(k, off, bytes, true, qr, nr, nb, up, gp, R, u0,
				perm, cnt, s + (p - p0), sn);
		else
			q4_rows(k, off, bytes, false, qr, nr, nb, up, gp, R,
				u0, perm, cnt, s + (p - p0), sn);
	}
}

/* vscores_q4_0() for nb blocks a row; inlined with nb a constant for
 * the common head sizes. */
AVX512G INLINE void q4_scores(const float *q, uint32_t g, const uint8_t *k,
			      uint64_t n, uint32_t nb, float scale, float *s)
{
	struct q4row qr[QROWS];
	__m512i perm = q4_perm(nb);
	for (uint32_t i0 = 0; i0 < g; i0 += QROWS) {
		uint32_t nr = g - i0 < QROWS ? g - i0 : QROWS;
		for (uint32_t i = 0; i < nr; i++)
			make_q4row(q + (uint64_t)(i0 + i) * 32 * nb, nb, scale,
				   &qr[i]);
		q4_range(k, n, qr, nr, nb, perm, 0, n, s + (uint64_t)i0 * n,
			 n);
	}
}

AVX512G static void vscores_q4_0(const float *q, uint32_t g,
				 const uint8_t *k, uint32_t krow, uint64_t n,
				 uint32_t hd, float scale, float *s)
{
	(void)krow; /* 18 hd / 32: the rows are one stream of blocks */
	switch (hd / 32) {
	case 2: q4_scores(q, g, k, n, 2, scale, s); break;
	case 4: q4_scores(q, g, k, n, 4, scale, s); break;
	case 8: q4_scores(q, g, k, n, 8, scale, s); break;
	default: q4_scores(q, g, k, n, hd / 32, scale, s); break;
	}
}

/*
 * q4_0 V with AVX-512 VNNI and VBMI (without them, the portable
 * kernel): values_c_q4_0()'s integers. Two positions' 16 bytes of a
 * block are interleaved by one vpermb into 16 lanes of two words
 * (position p low, p + 1 high), zero-extended; vpdpwssd multiplies the
 * bytes, and the high nibbles (a shift), by the pair of 16-bit weights
 * and adds both products into the lane: 32 products an instruction. The
 * low nibbles' sums, the -8 and the scale come once per run.
 */
/* wquant_c() for 16 positions at a time (cnt <= QVRUN); wq has room for
 * QVRUN + 4 weights, those past cnt set to 0. */
AVX512W static float wquant_z(const float *si, const uint16_t *dh,
			      uint32_t cnt, int16_t *wq, int32_t *qsum)
{
	__m512 w[QVRUN / 16], mx = _mm512_setzero_ps();
	uint32_t nc = (cnt + 15) / 16;
	for (uint32_t c = 0; c < nc; c++) {
		uint32_t m = cnt - 16 * c < 16 ? cnt - 16 * c : 16;
		__mmask16 k = (__mmask16)((1u << m) - 1);
		__m256i h;
		__m512 x;
		if (m == 16) { /* plain loads: dh was just stored, and a
				* masked load waits for the store to retire */
			h = _mm256_loadu_si256((const void *)(dh + 16 * c));
			x = _mm512_loadu_ps(si + 16 * c);
		} else {
			h = _mm256_maskz_loadu_epi16(k, dh + 16 * c);
			x = _mm512_maskz_loadu_ps(k, si + 16 * c);
		}
		w[c] = _mm512_mul_ps(x, _mm512_cvtph_ps(h));
		mx = _mm512_max_ps(mx, _mm512_abs_ps(w[c]));
	}
	float wmax = _mm512_reduce_max_ps(mx);
	__m512 inv = _mm512_set1_ps(wmax > 0 ? 32767.0f / wmax : 0);
	__m512i qs = _mm512_setzero_si512();
	for (uint32_t c = 0; c < nc; c++) {
		__m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(w[c], inv));
		qs = _mm512_add_epi32(qs, q);
		_mm256_storeu_si256((void *)(wq + 16 * c),
				    _mm512_cvtsepi32_epi16(q));
	}
	memset(wq + 16 * nc, 0, 4 * sizeof *wq); /* a pair past the end */
	*qsum = _mm512_reduce_add_epi32(qs);
	return wmax / 32767.0f;
}

/* Lanes of (nibble byte j of position p, of p + 1) as two words, from
 * y = (16 bytes of p, 16 of p + 1). */
AVX512W INLINE __m512i pair_nib(__m256i y)
{
	const __m512i ix = _mm512_set_epi32(
		0x1f000f, 0x1e000e, 0x1d000d, 0x1c000c, 0x1b000b, 0x1a000a,
		0x190009, 0x180008, 0x170007, 0x160006, 0x150005, 0x140004,
		0x130003, 0x120002, 0x110001, 0x100000);
	return _mm512_maskz_permutexvar_epi8(0x5555555555555555ull, ix,
					     _mm512_castsi256_si512(y));
}

/* Block b of rows r0, r1 with the pair of weights w: the whole bytes
 * (lo + 16 hi) into a[0], the high nibbles (values 16..31) into a[1];
 * values 0..15 are a[0] - 16 a[1], which saves a mask. At most 64 x 255
 * x 32767 < 2^31 in a lane. */
#define NIBDOT(r0, r1, b, w, a)                                              \
	do {                                                                 \
		__m512i z_ = pair_nib(_mm256_loadu2_m128i(                   \
			(const void *)((r1) + 18 * (b) + 2),                 \
			(const void *)((r0) + 18 * (b) + 2)));               \
		(a)[0] = _mm512_dpwssd_epi32((a)[0], z_, (w));               \
		(a)[1] = _mm512_dpwssd_epi32((a)[1],                        \
					     _mm512_srli_epi16(z_, 4), (w)); \
	} while (0)

/* o += the weighted sum of NC blocks from b (NC 1 or 2) over the run of
 * cnt positions at vb, four positions (two pairs into two sets of sums)
 * at a time; a pair past the end repeats the last row, weight 0. */
AVX512W INLINE void nib_run(const uint8_t *vb, uint32_t vrow, uint32_t cnt,
			    uint32_t b, uint32_t NC,
			    int16_t (*wq)[QVRUN + 4], const float *sc,
			    const int32_t *qsum, float *oi, bool pf)
{
	const uint8_t *last = vb + (cnt - 1) * vrow;
	__m512i a[2][2], e[2][2]; /* block, half: sets a and e */
	for (uint32_t c = 0; c < NC; c++)
		a[c][0] = a[c][1] = e[c][0] = e[c][1] = _mm512_setzero_si512();
	uint32_t j = 0;
	for (; j + 4 <= cnt; j += 4) {
		const uint8_t *r = vb + j * vrow;
		if (pf) /* 64 rows on into L1, 192 into L2 */
			ahead((uintptr_t)r, 4 * vrow, QBLOCK * vrow);
		for (uint32_t c = 0; c < NC; c++) {
			int32_t t0, t1;
			memcpy(&t0, &wq[b + c][j], 4);
			memcpy(&t1, &wq[b + c][j + 2], 4);
			__m512i w0 = _mm512_set1_epi32(t0);
			__m512i w1 = _mm512_set1_epi32(t1);
			NIBDOT(r, r + vrow, b + c, w0, a[c]);
			NIBDOT(r + 2 * vrow, r + 3 * vrow, b + c, w1, e[c]);
		}
	}
	for (; j < cnt; j += 2) {
		const uint8_t *r0 = vb + j * vrow;
		const uint8_t *r1 = j + 1 < cnt ? r0 + vrow : last;
		for (uint32_t c = 0; c < NC; c++) {
			int32_t t0;
			memcpy(&t0, &wq[b + c][j], 4);
			__m512i w0 = _mm512_set1_epi32(t0);
			NIBDOT(r0, r1, b + c, w0, a[c]);
		}
	}
	for (uint32_t c = 0; c < NC; c++) {
		__m512i m8 = _mm512_set1_epi32(8 * qsum[b + c]);
		__m512 S = _mm512_set1_ps(sc[b + c]);
		__m512i hi = _mm512_add_epi32(a[c][1], e[c][1]);
		__m512i lo = _mm512_sub_epi32(_mm512_add_epi32(a[c][0], e[c][0]),
					      _mm512_slli_epi32(hi, 4));
		for (uint32_t h = 0; h < 2; h++) {
			float *od = oi + 32 * (b + c) + 16 * h;
			__m512i t = _mm512_sub_epi32(h ? hi : lo, m8);
			_mm512_storeu_ps(od, _mm512_fmadd_ps(
						     S, _mm512_cvtepi32_ps(t),
						     _mm512_loadu_ps(od)));
		}
	}
}

/* The d of every block of cnt rows of nb (2 or 4) blocks at vb into
 * dh[b][j], 32 / nb rows at a time. Their 576 bytes are eight units of
 * four blocks (72 bytes, d at words 0 9 18 27); one vpermt2w takes two
 * units' d straight to their lanes b per + j (row j's block b), four of
 * them fill the register. */
AVX512W INLINE void d_rows(const uint8_t *vb, uint32_t cnt, uint32_t nb,
			   uint16_t (*dh)[QVRUN])
{
	/* lane L of pair pr: nb 2, rows 4 pr .. 4 pr + 3, block L / 16;
	 * nb 4, rows 2 pr, 2 pr + 1, block L / 8 (the second unit's
	 * words from 32) */
	const __m512i ix2 = _mm512_set_epi16(
		59, 41, 27, 9, 59, 41, 27, 9, 59, 41, 27, 9, 59, 41, 27, 9, 50,
		32, 18, 0, 50, 32, 18, 0, 50, 32, 18, 0, 50, 32, 18, 0);
	const __m512i ix4 = _mm512_set_epi16(
		59, 27, 59, 27, 59, 27, 59, 27, 50, 18, 50, 18, 50, 18, 50, 18,
		41, 9, 41, 9, 41, 9, 41, 9, 32, 0, 32, 0, 32, 0, 32, 0);
	__m512i ix = nb == 2 ? ix2 : ix4;
	uint32_t k0 = nb == 2 ? 0x000f000fu : 0x03030303u;
	uint32_t sh = nb == 2 ? 4 : 2, per = 32 / nb; /* rows a register */
	int64_t bytes = (int64_t)cnt * nb * 18;
	for (uint32_t j0 = 0; j0 < cnt; j0 += per) {
		const uint8_t *g = vb + j0 * nb * 18;
		int64_t left = bytes - (int64_t)j0 * nb * 18;
		__m512i y[4];
		for (uint32_t pr = 0; pr < 4; pr++)
			y[pr] = _mm512_maskz_permutex2var_epi16(
				k0 << (sh * pr), load_left(g + 144 * pr,
							   left - 144 * pr),
				ix,
				load_left(g + 144 * pr + 72,
					  left - 144 * pr - 72));
		__m512i x = _mm512_or_si512(_mm512_or_si512(y[0], y[1]),
					    _mm512_or_si512(y[2], y[3]));
		if (nb == 2) {
			_mm256_storeu_si256((void *)&dh[0][j0],
					    _mm512_castsi512_si256(x));
			_mm256_storeu_si256((void *)&dh[1][j0],
					    _mm512_extracti64x4_epi64(x, 1));
		} else {
			_mm_storeu_si128((void *)&dh[0][j0],
					 _mm512_castsi512_si128(x));
			_mm_storeu_si128((void *)&dh[1][j0],
					 _mm512_extracti32x4_epi32(x, 1));
			_mm_storeu_si128((void *)&dh[2][j0],
					 _mm512_extracti32x4_epi32(x, 2));
			_mm_storeu_si128((void *)&dh[3][j0],
					 _mm512_extracti32x4_epi32(x, 3));
		}
	}
}

/* One query row's weights over a run of positions, rounded to 16 bits
 * per block of the head (wquant_z()): the words, their sum, the scale. */
struct q4w {
	_Alignas(64) int16_t wq[ZMAXB][QVRUN + 4];
	float sc[ZMAXB];
	int32_t qsum[ZMAXB];
};

/* The d of every block of the cnt rows of nb blocks at vb into dh. */
AVX512W INLINE void q4v_d(const uint8_t *vb, uint32_t cnt, uint32_t nb,
			  uint16_t (*dh)[QVRUN])
{
	if (nb == 2 || nb == 4)
		d_rows(vb, cnt, nb, dh);
	else
		for (uint32_t j = 0; j < cnt; j++)
			for (uint32_t b = 0; b < nb; b++)
				memcpy(&dh[b][j], vb + j * 18 * nb + 18 * b, 2);
}

/* The weights si[0 .. cnt] of a run times its blocks' d (dh), rounded,
 * into *w. */
AVX512W INLINE void q4v_prep(const float *si, uint16_t (*dh)[QVRUN],
			     uint32_t nb, uint32_t cnt, struct q4w *w)
{
	for (uint32_t b = 0; b < nb; b++)
		w->sc[b] = wquant_z(si, dh[b], cnt, w->wq[b], &w->qsum[b]);
}

/* oi += the weighted sum of the cnt rows at vb by the weights of *w; two
 * blocks of the head at a time (one at the end of an odd count). With
 * pf, the first blocks prefetch the rows ahead (ahead(), in steps of
 * QBLOCK rows, the distance measured best for V as for K). */
AVX512W INLINE void q4v_sum(struct q4w *w, const uint8_t *vb, uint32_t nb,
			    uint32_t cnt, float *oi, bool pf)
{
	uint32_t vrow = 18 * nb, b = 0;
	for (; b + 2 <= nb; b += 2)
		nib_run(vb, vrow, cnt, b, 2, w->wq, w->sc, w->qsum, oi,
			pf && b == 0);
	if (b < nb)
		nib_run(vb, vrow, cnt, b, 1, w->wq, w->sc, w->qsum, oi,
			pf && b == 0);
}

/* One run of the weighted sum: rows p0 .. p0 + cnt (cnt <= QVRUN) of
 * the rows of nb blocks at v, row i's weights at s + i sn, added into o;
 * the first row's sums prefetch. */
AVX512W INLINE void q4v_run(const float *s, uint64_t sn, uint32_t g,
			    const uint8_t *v, uint32_t nb, uint64_t p0,
			    uint32_t cnt, float *o)
{
	_Alignas(64) uint16_t dh[ZMAXB][QVRUN]; /* the blocks' d */
	struct q4w w;
	const uint8_t *vb = v + p0 * 18 * nb;
	q4v_d(vb, cnt, nb, dh);
	for (uint32_t i = 0; i < g; i++) {
		q4v_prep(s + i * sn, dh, nb, cnt, &w);
		q4v_sum(&w, vb, nb, cnt, o + (uint64_t)i * 32 * nb, i == 0);
	}
}

/* values_q4_0i() for nb blocks a row; inlined with nb a constant for
 * the common head sizes (BY_HD). */
AVX512W INLINE void q4_values(const float *s, uint32_t g, const uint8_t *v,
			      uint64_t n, uint32_t nb, float *o)
{
	memset(o, 0, sizeof *o * g * 32 * nb);
	for (uint64_t p0 = 0; p0 < n; p0 += QVRUN)
		q4v_run(s + p0, n, g, v, nb, p0,
			(uint32_t)(n - p0 < QVRUN ? n - p0 : QVRUN), o);
}

AVX512W static void values_q4_0i(const float *s, uint32_t g,
				 const uint8_t *v, uint32_t vrow, uint64_t n,
				 uint32_t hd, float *o)
{
	(void)vrow; /* 18 hd / 32 */
	BY_HD(hd, q4_values(s, g, v, n, HD_ / 32, o));
}

/*
 * q4_0 K and V, one token's rows over a long range: the chunks of QCHUNK
 * positions go through a pipeline. The scores of a compact K are quicker
 * to compute than K is to read, and V's sums slower than V: one pass over
 * all of K, then one over all of V, would leave a core waiting on memory
 * in the first and memory idle in the second. So while chunk c's V is
 * summed, run by run, chunk c + 1's scores are computed between the
 * runs, and both streams move together; each chunk's softmax and sum
 * merge into o, m and l as the engine merges parts. A V run's weights are
 * rounded (q4v_prep()) before the K run that precedes its sums: rounding
 * is a chain of dependent steps (a max, a division, a sum) that stalled
 * the sums right after it, and beside K's arithmetic it runs in K's
 * shadow (the step about 7% faster with a head in L2 on the Zen 5). The
 * scratch s holds two chunks' scores, then a chunk's o, m and l.
 */
#define QCHUNK 1024

AVX512G INLINE void q4_piped(const float *q, uint32_t g, const uint8_t *k,
			     const uint8_t *v, uint64_t n, uint32_t nb,
			     float scale, float *s, float *o, float *m,
			     float *l)
{
	uint32_t hd = 32 * nb;
	struct q4row qr[QROWS];
	struct q4w w[QROWS];
	_Alignas(64) uint16_t dh[ZMAXB][QVRUN];
	for (uint32_t i = 0; i < g; i++)
		make_q4row(q + (uint64_t)i * hd, nb, scale, &qr[i]);
	__m512i perm = q4_perm(nb);
	float *buf[2] = {s, s + (uint64_t)g * QCHUNK};
	float *co = s + 2ull * g * QCHUNK, *cm = co + (uint64_t)g * hd,
	      *cl = cm + g;
	uint64_t nch = (n + QCHUNK - 1) / QCHUNK;
	q4_range(k, n, qr, g, nb, perm, 0, QCHUNK, buf[0], QCHUNK);
	for (uint64_t c = 0; c < nch; c++) {
		float *cur = buf[c % 2], *nxt = buf[(c + 1) % 2];
		uint64_t p = c * QCHUNK, len = n - p < QCHUNK ? n - p : QCHUNK;
		uint64_t p1 = p + len, len1 = n - p1 < QCHUNK ? n - p1 : QCHUNK;
		float *oc = c ? co : o;
		kv_attn_softmax(cur, g, g, len, c ? cm : m, c ? cl : l, true);
		memset(oc, 0, sizeof *oc * g * hd);
		for (uint64_t r = 0; r < len; r += QVRUN) {
			uint32_t cnt = (uint32_t)(len - r < QVRUN ? len - r
								  : QVRUN);
			const uint8_t *vb = v + (p + r) * 18 * nb;
			q4v_d(vb, cnt, nb, dh);
			for (uint32_t i = 0; i < g; i++)
				q4v_prep(cur + i * len + r, dh, nb, cnt,
					 &w[i]);
			if (r < len1)
				q4_range(k, n, qr, g, nb, perm, p1 + r,
					 p1 + (len1 - r < QVRUN ? len1
								: r + QVRUN),
					 nxt + r, len1);
			for (uint32_t i = 0; i < g; i++)
				q4v_sum(&w[i], vb, nb, cnt, oc + i * hd,
					i == 0);
		}
		if (c)
			kv_attn_merge(o, m, l, co, cm, cl, g, hd);
	}
}

/* Whether q4_piped() takes this call: one token (every row sees all n),
 * few enough rows, several chunks, and room in s. */
static bool q4_pipes(uint32_t g, uint32_t per, uint64_t n, uint32_t hd)
{
	return per == g && g <= QROWS && n >= 4 * QCHUNK &&
	       n >= 2 * QCHUNK + hd + 2;
}

AVX512G static void part_q4_0(const float *q, uint32_t g, const uint8_t *k,
			      const uint8_t *v, uint64_t n, uint32_t hd,
			      float scale, float *s, float *o, float *m,
			      float *l)
{
	switch (hd / 32) {
	case 2: q4_piped(q, g, k, v, n, 2, scale, s, o, m, l); break;
	case 4: q4_piped(q, g, k, v, n, 4, scale, s, o, m, l); break;
	case 8: q4_piped(q, g, k, v, n, 8, scale, s, o, m, l); break;
	default: q4_piped(q, g, k, v, n, hd / 32, scale, s, o, m, l); break;
	}
}

VNNI_SCORES(int8, RS_INT8)

KERNELS(q4_1, SC_Q4_1, MN_Q4_1, 2, RS_NONE, 1.0f)

/*
 * fp8 with AVX-512 BF16 and VBMI: e4m3 is exact in bf16 (its 4-bit
 * significands and exponents fit), so two vpermi2b through 128-entry
 * tables (which read a byte's low seven bits) give each byte's low and
 * high byte as a bf16, the sign or-ed back in, and vpunpck{l,h}bw pair
 * them into 32 bf16 a register, in each 16 bytes' lane values 0 .. 7
 * (lo) and 8 .. 15 (hi). vdpbf16ps then multiplies pairs of those with
 * pairs of the query's values (scores) or of two positions' weights (V,
 * each pair of rows' bytes interleaved first) and adds them in float.
 * The query and the weights take 16 bits, as two bf16 each
 * (split16()): one vdpbf16ps for each part.
 */
#define AVX512B                                                              \
	__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi,"        \
			      "avx512bf16,f16c,avx2,fma")))

/* e4m3's magnitudes x = 0 .. 127 as bf16, low bytes and high bytes: a
 * normal one (x >= 8) is 0x3c00 + 16 x, a subnormal m 2^-9 normalised,
 * 127 a NaN. */
#define LO16 0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, \
	0x80, 0x90, 0xa0, 0xb0, 0xc0, 0xd0, 0xe0, 0xf0
#define HI16(h) h, h, h, h, h, h, h, h, h, h, h, h, h, h, h, h
static const uint8_t fp8_lo[128] = {
	0x00, 0x00, 0x80, 0xc0, 0x00, 0x20, 0x40, 0x60, /* subnormals */
	0x80, 0x90, 0xa0, 0xb0, 0xc0, 0xd0, 0xe0, 0xf0, /* 8 .. 15 */
	LO16, LO16, LO16, LO16, LO16, LO16,		/* 16 .. 111 */
	0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, /* 112 .. 119 */
	0x80, 0x90, 0xa0, 0xb0, 0xc0, 0xd0, 0xe0, 0xc0, /* 120 .. 127 */
};
static const uint8_t fp8_hi[128] = {
	0x00, 0x3b, 0x3b, 0x3b, 0x3c, 0x3c, 0x3c, 0x3c, /* subnormals */
	0x3c, 0x3c, 0x3c, 0x3c, 0x3c, 0x3c, 0x3c, 0x3c, /* 8 .. 15 */
	HI16(0x3d), HI16(0x3e), HI16(0x3f), HI16(0x40), HI16(0x41),
	HI16(0x42),					/* 16 .. 111 */
	0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43, /* 112 .. 119 */
	0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x43, 0x7f, /* 120 .. 127 */
};

AVX512B INLINE void fp8_tables(__m512i *t)
{
	t[0] = _mm512_loadu_si512(fp8_lo);
	t[1] = _mm512_loadu_si512(fp8_lo + 64);
	t[2] = _mm512_loadu_si512(fp8_hi);
	t[3] = _mm512_loadu_si512(fp8_hi + 64);
}

/* 64 e4m3 bytes x as bf16: lo, hi as above */
AVX512B INLINE void dec_fp8b(__m512i x, const __m512i *t, __m512i *lo,
			     __m512i *hi)
{
	__m512i l = _mm512_permutex2var_epi8(t[0], x, t[1]);
	__m512i h = _mm512_permutex2var_epi8(t[2], x, t[3]);
	h = _mm512_ternarylogic_epi32(h, x, _mm512_set1_epi8((char)0x80),
				      0xf8); /* h | (x & 0x80) */
	*lo = _mm512_unpacklo_epi8(l, h);
	*hi = _mm512_unpackhi_epi8(l, h);
}

/* Bytes c .. c + 64 of a row of hd (a multiple of 32) */
AVX512B INLINE __m512i row64(const uint8_t *r, uint32_t c, uint32_t hd)
{
	if (c + 64 <= hd)
		return _mm512_loadu_si512(r + c);
	return _mm512_maskz_loadu_epi8(0xffffffffull, r + c);
}

#define DPBF(a, x, y) _mm512_dpbf16_ps((a), (__m512bh)(x), (__m512bh)(y))

/* bf16 b as floats */
AVX512B INLINE __m512 bf16_ps(__m256i b)
{
	return _mm512_castsi512_ps(
		_mm512_slli_epi32(_mm512_cvtepu16_epi32(b), 16));
}

/* 16 floats x to 16 bits (split16(), as vcvtneps2bf16 rounds: to nearest
 * even, subnormals as zero): the bf16 of x into *h, of the rest into *l;
 * returns h + l. */
AVX512B INLINE __m512 split16_bf(__m512 x, __m256i *h, __m256i *l)
{
	*h = (__m256i)_mm512_cvtneps_pbh(x);
	__m512 hf = bf16_ps(*h);
	*l = (__m256i)_mm512_cvtneps_pbh(_mm512_sub_ps(x, hf));
	return _mm512_add_ps(hf, bf16_ps(*l));
}

/* Query row qi to 16 bits in dec_fp8b()'s order: per 64 values c four
 * registers of 32 bf16, lo's values' high parts, their low parts, then
 * hi's (word x of lo: value c + 16 (x / 8) + x % 8; of hi: 8 more); zero
 * past hd. */
AVX512B INLINE void fp8_query(const float *qi, uint32_t hd,
			      uint16_t (*qv)[32])
{
	for (uint32_t c = 0; c < hd; c += 64) {
		_Alignas(32) uint16_t h[64], l[64];
		for (uint32_t j = 0; j < 64; j += 16) {
			__m256i vh, vl;
			__mmask16 in = c + j < hd ? 0xffff : 0;
			split16_bf(_mm512_maskz_loadu_ps(in, qi + c + j), &vh,
				   &vl);
			_mm256_store_si256((void *)(h + j), vh);
			_mm256_store_si256((void *)(l + j), vl);
		}
		for (uint32_t x = 0; x < 32; x++) {
			uint32_t e = 16 * (x / 8) + x % 8;
			qv[c / 16][x] = h[e];
			qv[c / 16 + 1][x] = l[e];
			qv[c / 16 + 2][x] = h[e + 8];
			qv[c / 16 + 3][x] = l[e + 8];
		}
	}
}

AVX512B INLINE __m512 dot_fp8b(const uint8_t *r, const __m512i *qv, uint32_t hd,
			       const __m512i *t)
{
	__m512 a = _mm512_setzero_ps(), b = _mm512_setzero_ps();
	for (uint32_t c = 0; c < hd; c += 64) {
		__m512i lo, hi;
		const __m512i *qc = qv + c / 16;
		dec_fp8b(row64(r, c, hd), t, &lo, &hi);
		a = DPBF(a, lo, qc[0]);
		b = DPBF(b, lo, qc[1]);
		a = DPBF(a, hi, qc[2]);
		b = DPBF(b, hi, qc[3]);
	}
	return _mm512_add_ps(a, b);
}

/* Scores of rows p0 .. p1 of k for one query row (qv: fp8_query()) into
 * s, eight rows at a time, their lanes added together at the end. */
AVX512B INLINE void fp8_rows(const uint8_t *k, uint32_t krow, uint64_t p0,
			     uint64_t p1, const __m512i *qv, uint32_t hd,
			     const __m512i *t, float scale, float *s)
{
	uint64_t p = p0;
	for (; p + 8 <= p1; p += 8) {
		const uint8_t *r = k + p * krow;
		__m512 a[8];
		for (int j = 0; j < 8; j++)
			a[j] = dot_fp8b(r + j * krow, qv, hd, t);
		_mm256_storeu_ps(s + p, _mm256_mul_ps(sum8(a),
						      _mm256_set1_ps(scale)));
	}
	for (; p < p1; p++)
		s[p] = _mm512_reduce_add_ps(dot_fp8b(k + p * krow, qv, hd, t)) *
		       scale;
}

/* s = q k^T x scale for an fp8 K: per group of up to eight query rows,
 * per block of positions (which stays in L1 while each row reads it). */
AVX512B INLINE void scores_fp8b_hd(const float *q, uint32_t g, const uint8_t *k,
				   uint32_t krow, uint64_t n, uint32_t hd,
				   float scale, float *s)
{
	_Alignas(64) uint16_t qv[8][ZMAXB / 2 * 4][32];
	__m512i t[4];
	fp8_tables(t);
	for (uint32_t i0 = 0; i0 < g; i0 += 8) {
		uint32_t gi = g - i0 < 8 ? g - i0 : 8;
		for (uint32_t i = 0; i < gi; i++)
			fp8_query(q + (uint64_t)(i0 + i) * hd, hd, qv[i]);
		for (uint64_t p0 = 0; p0 < n; p0 += QBLOCK) {
			uint64_t p1 = p0 + QBLOCK < n ? p0 + QBLOCK : n;
			for (uint32_t i = 0; i < gi; i++)
				fp8_rows(k, krow, p0, p1,
					 (const __m512i *)qv[i], hd, t, scale,
					 s + (i0 + i) * n);
		}
	}
}
SCORES_BY_HD(AVX512B, scores_fp8b)

/* Weights si[p0 .. p1) (p1 - p0 <= QBLOCK) to 16 bits: as pairs of
 * positions' bf16, the high parts into wh, the low into wl (zero past
 * p1), and hi + lo back into si, the weights V was summed with, as the
 * other kernels leave them. */
AVX512B INLINE void fp8_weights(float *si, uint64_t p0, uint64_t p1,
				uint32_t *wh, uint32_t *wl)
{
	for (uint64_t p = p0; p < p1; p += 16) {
		uint32_t cnt = p1 - p < 16 ? (uint32_t)(p1 - p) : 16;
		__mmask16 m = (__mmask16)((1u << cnt) - 1);
		__m256i h, l;
		__m512 x = split16_bf(_mm512_maskz_loadu_ps(m, si + p), &h,
				      &l);
		_mm256_storeu_si256((void *)(wh + (p - p0) / 2), h);
		_mm256_storeu_si256((void *)(wl + (p - p0) / 2), l);
		_mm512_mask_storeu_ps(si + p, m, x);
	}
}

/* acc (64 values c .. c + 64 of one query row, in pairs' order: value
 * c + 16 (m / 4) + 4 j + m % 4 at acc[16 j + m]) += the weights times
 * rows 0 .. cnt of v, two at a time: their bytes interleaved, in each 16
 * bytes' lane the two rows' values 0 .. 7 (then 8 .. 15), become a
 * position pair's two bf16 for four values (dec_fp8b()'s lo), then four
 * more (hi), multiplied with the pair's weights (wh, wl: see
 * fp8_weights()). An odd last row pairs with itself at weight 0. */
AVX512B INLINE void fp8_pairs(const uint8_t *v, uint32_t vrow, uint64_t cnt,
			      uint32_t c, uint32_t hd, const uint32_t *wh,
			      const uint32_t *wl, const __m512i *t,
			      float *acc)
{
	__m512 a[8];
	for (int j = 0; j < 8; j++)
		a[j] = _mm512_setzero_ps();
	for (uint64_t p = 0; p < cnt; p += 2) {
		const uint8_t *r0 = v + p * vrow;
		const uint8_t *r1 = p + 1 < cnt ? r0 + vrow : r0;
		__m512i x0 = row64(r0, c, hd), x1 = row64(r1, c, hd);
		__m512i h = _mm512_set1_epi32((int)wh[p / 2]);
		__m512i l = _mm512_set1_epi32((int)wl[p / 2]);
		__m512i z[4];
		dec_fp8b(_mm512_unpacklo_epi8(x0, x1), t, &z[0], &z[1]);
		dec_fp8b(_mm512_unpackhi_epi8(x0, x1), t, &z[2], &z[3]);
		for (int j = 0; j < 4; j++) {
			a[2 * j] = DPBF(a[2 * j], z[j], h);
			a[2 * j + 1] = DPBF(a[2 * j + 1], z[j], l);
		}
	}
	for (int j = 0; j < 4; j++) {
		__m512 sum = _mm512_add_ps(a[2 * j], a[2 * j + 1]);
		_mm512_storeu_ps(acc + 16 * j,
				 _mm512_add_ps(_mm512_loadu_ps(acc + 16 * j),
					       sum));
	}
}

/* o = s v for an fp8 V: per group of up to eight query rows, per block
 * of positions, each row's weights to 16 bits and then fp8_pairs() for
 * each 64 values of the head, into acc; then acc to o in value order. */
AVX512B INLINE void values_fp8b_hd(float *s, uint32_t g, const uint8_t *v,
				   uint32_t vrow, uint64_t n, uint32_t hd,
				   float *o)
{
	_Alignas(64) float acc[8][ZMAXB * 32];
	_Alignas(64) uint32_t wh[QBLOCK / 2 + 8], wl[QBLOCK / 2 + 8];
	uint32_t hp = (hd + 63) / 64 * 64;
	__m512i t[4];
	fp8_tables(t);
	for (uint32_t i0 = 0; i0 < g; i0 += 8) {
		uint32_t gi = g - i0 < 8 ? g - i0 : 8;
		for (uint32_t i = 0; i < gi; i++)
			memset(acc[i], 0, sizeof(float) * hp);
		for (uint64_t p0 = 0; p0 < n; p0 += QBLOCK) {
			uint64_t p1 = p0 + QBLOCK < n ? p0 + QBLOCK : n;
			for (uint32_t i = 0; i < gi; i++) {
				fp8_weights(s + (i0 + i) * n, p0, p1, wh, wl);
				for (uint32_t c = 0; c < hp; c += 64)
					fp8_pairs(v + p0 * vrow, vrow, p1 - p0,
						  c, hd, wh, wl, t, acc[i] + c);
			}
		}
		for (uint32_t i = 0; i < gi; i++) {
			float *oi = o + (uint64_t)(i0 + i) * hd;
			for (uint32_t e = 0; e < hd; e++) {
				uint32_t c = e / 64 * 64, r = e % 64;
				uint32_t m = r / 16 * 4 + r % 4, j = r % 16 / 4;
				oi[e] = acc[i][c + 16 * j + m];
			}
		}
	}
}

AVX512B static void values_fp8b(float *s, uint32_t g, const uint8_t *v,
				uint32_t vrow, uint64_t n, uint32_t hd,
				float *o)
{
	BY_HD(hd, values_fp8b_hd(s, g, v, vrow, n, HD_, o));
}

const struct kvq_avx512 kvq_avx512 = {
	.scores = {
		[KV_DTYPE_F32] = scores_f32,   [KV_DTYPE_F16] = scores_f16,
		[KV_DTYPE_BF16] = scores_bf16, [KV_DTYPE_FP8] = scores_fp8,
		[KV_DTYPE_Q4_1] = scores_q4_1,
	},
	.values = {
		[KV_DTYPE_F32] = values_f32,   [KV_DTYPE_F16] = values_f16,
		[KV_DTYPE_BF16] = values_bf16, [KV_DTYPE_FP8] = values_fp8,
		[KV_DTYPE_INT8] = values_int8, [KV_DTYPE_Q8_0] = values_q8_0,
		[KV_DTYPE_Q4_1] = values_q4_1,
	},
	.scores_vnni = {
		[KV_DTYPE_INT8] = vscores_int8, [KV_DTYPE_Q8_0] = vscores_q8_0,
		[KV_DTYPE_Q4_0] = vscores_q4_0,
	},
	.values_vnni = {[KV_DTYPE_Q4_0] = values_q4_0i},
	.scores_bf16 = {[KV_DTYPE_FP8] = scores_fp8b},
	.values_fp8 = values_fp8b,
	.round16 = round16_rows,
	.q4_pipes = q4_pipes,
	.q4_part = part_q4_0,
};
#endif
