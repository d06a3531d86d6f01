/*
 * gemm.c - a few rows (a batch of users, one token each) times a weight
 * matrix kept [out][in], streaming the matrix once with no packing. Each
 * output is a dot product along one contiguous row of W, and a thread's
 * outputs are a contiguous run of rows, so a thread reads one sequential
 * stream: the pattern that reaches the machine's read bandwidth. (sgemv over
 * the [in][out] form reads several rows at once in slices of each; on the
 * two-core machine of the README it stayed near 30 GB/s where a plain read
 * reached 45-50.) OpenBLAS's sgemm would copy W into panels first, which for
 * a handful of rows costs as much as reading it.
 */
#include <stdbool.h>

#include "engine_int.h"

/* y[r][c] = beta y[r][c] + sum over i of x[r][i] w[c][i] for rows r < m
 * and columns c0 <= c < c1; x (m, k), w (n, k), y (m, n). */
static void small_c(const float *x, uint64_t m, uint64_t k, const float *w,
		    uint64_t n, uint64_t c0, uint64_t c1, float beta, float *y)
{
	for (uint64_t c = c0; c < c1; c++)
		for (uint64_t r = 0; r < m; r++) {
			float acc = 0;
			for (uint64_t i = 0; i < k; i++)
				acc += x[r * k + i] * w[c * k + i];
			/* beta 0 never reads y, as in BLAS: it may be
			 * uninitialised, and 0 x NaN is NaN */
			y[r * n + c] = beta != 0 ? beta * y[r * n + c] + acc
						 : acc;
		}
}

static inline void put(float *y, float beta, float acc)
{
	*y = beta != 0 ? beta * *y + acc : acc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_SIMD_GEMM 1
#define AVX2 __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx512f")))

/* Rows a and b of x (b == NULL: a alone) against row wc of W, two chains
 * each; a tail of k % 16 through a masked load. */
AVX512 static void dots_avx512(const float *xa, const float *xb,
			       const float *wc, uint64_t k, float *sa,
			       float *sb)
{
	__m512 a0 = _mm512_setzero_ps(), a1 = a0, b0 = a0, b1 = a0;
	uint64_t i = 0;
	for (; i + 32 <= k; i += 32) {
		__m512 w0 = _mm512_loadu_ps(wc + i);
		__m512 w1 = _mm512_loadu_ps(wc + i + 16);
		a0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(xa + i), a0);
		a1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(xa + i + 16), a1);
		if (xb) {
			b0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(xb + i), b0);
			b1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(xb + i + 16),
					     b1);
		}
	}
	for (; i < k; i += 16) {
		__mmask16 mk = k - i >= 16 ? 0xFFFF
					   : (__mmask16)((1u << (k - i)) - 1);
		__m512 w0 = _mm512_maskz_loadu_ps(mk, wc + i);
		a0 = _mm512_fmadd_ps(w0, _mm512_maskz_loadu_ps(mk, xa + i), a0);
		if (xb)
			b0 = _mm512_fmadd_ps(w0,
					     _mm512_maskz_loadu_ps(mk, xb + i),
					     b0);
	}
	*sa = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
	if (xb)
		*sb = _mm512_reduce_add_ps(_mm512_add_ps(b0, b1));
}

AVX2 static inline float hsum8(__m256 a)
{
	__m128 x = _mm_add_ps(_mm256_castps256_ps128(a),
			      _mm256_extractf128_ps(a, 1));
	x = _mm_add_ps(x, _mm_movehl_ps(x, x));
	x = _mm_add_ss(x, _mm_movehdup_ps(x));
	return _mm_cvtss_f32(x);
}

AVX2 static void dots_avx2(const float *xa, const float *xb, const float *wc,
			   uint64_t k, float *sa, float *sb)
{
	__m256 a0 = _mm256_setzero_ps(), a1 = a0, b0 = a0, b1 = a0;
	uint64_t i = 0;
	for (; i + 16 <= k; i += 16) {
		__m256 w0 = _mm256_loadu_ps(wc + i);
		__m256 w1 = _mm256_loadu_ps(wc + i + 8);
		a0 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(xa + i), a0);
		a1 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(xa + i + 8), a1);
		if (xb) {
			b0 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(xb + i), b0);
			b1 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(xb + i + 8),
					     b1);
		}
	}
	float ta = 0, tb = 0;
	for (; i < k; i++) {
		ta += wc[i] * xa[i];
		if (xb)
			tb += wc[i] * xb[i];
	}
	*sa = hsum8(_mm256_add_ps(a0, a1)) + ta;
	if (xb)
		*sb = hsum8(_mm256_add_ps(b0, b1)) + tb;
}

/* 2 AVX-512, 1 AVX2 with FMA, 0 neither */
static int simd_isa(void)
{
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		return 2;
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

void kv_gemm_small(const float *x, uint64_t m, uint64_t k, const float *w,
		   uint64_t n, uint64_t c0, uint64_t c1, float beta, float *y,
		   bool simd)
{
#ifdef HAVE_SIMD_GEMM
	int isa = simd_isa();
	if (simd && isa) {
		for (uint64_t c = c0; c < c1; c++) {
			const float *wc = w + c * k;
			for (uint64_t r = 0; r < m; r += 2) {
				const float *xb = r + 1 < m ? x + (r + 1) * k
							    : NULL;
				float sa, sb = 0;
				if (isa == 2)
					dots_avx512(x + r * k, xb, wc, k, &sa,
						    &sb);
				else
					dots_avx2(x + r * k, xb, wc, k, &sa,
						  &sb);
				put(y + r * n + c, beta, sa);
				if (xb)
					put(y + (r + 1) * n + c, beta, sb);
			}
		}
		return;
	}
#endif
	(void)simd;
	small_c(x, m, k, w, n, c0, c1, beta, y);
}
