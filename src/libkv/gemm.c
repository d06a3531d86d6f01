/*
 * gemm.c - the product of a few rows (a batch of users, one token each) by a
 * weight matrix, streaming the matrix once with no packing. OpenBLAS's sgemm
 * copies the weights into its panels first, which for a handful of rows
 * costs as much as reading them: four users took 2.2 times one user's step.
 * Here W is read once, a tile of columns at a time, four of its rows per
 * pass, while the tile of outputs stays in L1.
 */
#include <stdbool.h>

#include "engine_int.h"

/* y[r][c] = beta y[r][c] + sum over i of x[r][i] w[i][c] for rows r < m and
 * columns c0 <= c < c1; x (m, k), w (k, n), y (m, n). */
static void small_c(const float *x, uint64_t m, uint64_t k, const float *w,
		    uint64_t n, uint64_t c0, uint64_t c1, float beta, float *y)
{
	for (uint64_t r = 0; r < m; r++)
		for (uint64_t c = c0; c < c1; c++) {
			float acc = 0;
			for (uint64_t i = 0; i < k; i++)
				acc += x[r * k + i] * w[i * n + c];
			/* beta 0 never reads y, as in BLAS: it may be
			 * uninitialised, and 0 x NaN is NaN */
			y[r * n + c] = beta != 0 ? beta * y[r * n + c] + acc
						 : acc;
		}
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_AVX2_GEMM 1
#define AVX2 __attribute__((target("avx2,fma")))

/* Floats of y per tile: the tile of outputs (m rows) stays in L1 (32 KB)
 * while every row of W passes through it; the wider the tile, the longer
 * the contiguous runs of W (a run per page keeps the prefetcher going). */
#define TILE_FLOATS 8192

/* ya (and yb) += x rows a and b times W rows i .. i + 3, over cols
 * [0, cols) of the tile, cols a multiple of 8. */
AVX2 static inline void rows4(const float *xa, const float *xb, bool two,
			      const float *w, uint64_t n, uint64_t cols,
			      float *ya, float *yb)
{
	__m256 a0 = _mm256_broadcast_ss(xa), a1 = _mm256_broadcast_ss(xa + 1);
	__m256 a2 = _mm256_broadcast_ss(xa + 2);
	__m256 a3 = _mm256_broadcast_ss(xa + 3);
	__m256 b0 = _mm256_broadcast_ss(xb), b1 = _mm256_broadcast_ss(xb + 1);
	__m256 b2 = _mm256_broadcast_ss(xb + 2);
	__m256 b3 = _mm256_broadcast_ss(xb + 3);
	for (uint64_t c = 0; c < cols; c += 8) {
		__m256 w0 = _mm256_loadu_ps(w + c);
		__m256 w1 = _mm256_loadu_ps(w + n + c);
		__m256 w2 = _mm256_loadu_ps(w + 2 * n + c);
		__m256 w3 = _mm256_loadu_ps(w + 3 * n + c);
		__m256 u = _mm256_loadu_ps(ya + c);
		u = _mm256_fmadd_ps(a0, w0, u);
		u = _mm256_fmadd_ps(a1, w1, u);
		u = _mm256_fmadd_ps(a2, w2, u);
		u = _mm256_fmadd_ps(a3, w3, u);
		_mm256_storeu_ps(ya + c, u);
		if (two) {
			__m256 v = _mm256_loadu_ps(yb + c);
			v = _mm256_fmadd_ps(b0, w0, v);
			v = _mm256_fmadd_ps(b1, w1, v);
			v = _mm256_fmadd_ps(b2, w2, v);
			v = _mm256_fmadd_ps(b3, w3, v);
			_mm256_storeu_ps(yb + c, v);
		}
	}
}

AVX2 static void small_avx2(const float *x, uint64_t m, uint64_t k,
			    const float *w, uint64_t n, uint64_t c0,
			    uint64_t c1, float beta, float *y)
{
	uint64_t c = c0, tile = TILE_FLOATS / m / 8 * 8;
	for (; c + 8 <= c1; c += tile) {
		uint64_t cols = c1 - c < tile ? (c1 - c) & ~(uint64_t)7 : tile;
		for (uint64_t r = 0; r < m; r++) /* beta 0: y is not read */
			for (uint64_t j = 0; j < cols; j++)
				y[r * n + c + j] = beta != 0
							   ? beta * y[r * n + c + j]
							   : 0;
		uint64_t i = 0;
		for (; i + 4 <= k; i += 4)
			for (uint64_t r = 0; r < m; r += 2) {
				uint64_t r2 = r + 1 < m ? r + 1 : r;
				rows4(x + r * k + i, x + r2 * k + i, r2 != r,
				      w + i * n + c, n, cols, y + r * n + c,
				      y + r2 * n + c);
			}
		for (; i < k; i++)
			for (uint64_t r = 0; r < m; r++)
				for (uint64_t j = 0; j < cols; j++)
					y[r * n + c + j] +=
						x[r * k + i] * w[i * n + c + j];
		if (cols < tile) {
			c += cols;
			break;
		}
	}
	if (c < c1)
		small_c(x, m, k, w, n, c, c1, beta, y);
}
#endif

void kv_gemm_small(const float *x, uint64_t m, uint64_t k, const float *w,
		   uint64_t n, uint64_t c0, uint64_t c1, float beta, float *y,
		   bool simd)
{
#ifdef HAVE_AVX2_GEMM
	if (simd && kv_attn_has_simd(8)) {
		small_avx2(x, m, k, w, n, c0, c1, beta, y);
		return;
	}
#endif
	(void)simd;
	small_c(x, m, k, w, n, c0, c1, beta, y);
}
