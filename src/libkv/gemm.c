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
#include "simd.h"

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

/*
 * The tile kernels: R rows of x against C consecutive rows of W, R x C
 * accumulators, so each load of W serves R products and each load of x
 * serves C (four and four: 0.5 loads per FMA). R and C are constants at
 * every call, so the accumulators stay in registers. out[r][c] = the dot
 * product of x row r with W row c.
 */
#define TILE_R 4
#define TILE_C 4

__attribute__((always_inline)) AVX512 static inline void
tile_avx512(const float *x, uint64_t k, const float *w, int R, int C,
	    float out[TILE_R][TILE_C])
{
	__m512 acc[TILE_R][TILE_C];
	_Pragma("GCC unroll 4")
	for (int r = 0; r < R; r++)
		_Pragma("GCC unroll 4")
		for (int c = 0; c < C; c++)
			acc[r][c] = _mm512_setzero_ps();
	for (uint64_t i = 0; i < k; i += 16) {
		__mmask16 mk = k - i >= 16 ? 0xFFFF
					   : (__mmask16)((1u << (k - i)) - 1);
		__m512 wv[TILE_C];
		_Pragma("GCC unroll 4")
		for (int c = 0; c < C; c++)
			wv[c] = _mm512_maskz_loadu_ps(mk, w + c * k + i);
		_Pragma("GCC unroll 4")
		for (int r = 0; r < R; r++) {
			__m512 xv = _mm512_maskz_loadu_ps(mk, x + r * k + i);
			_Pragma("GCC unroll 4")
			for (int c = 0; c < C; c++)
				acc[r][c] = _mm512_fmadd_ps(wv[c], xv,
							    acc[r][c]);
		}
	}
	_Pragma("GCC unroll 4")
	for (int r = 0; r < R; r++)
		_Pragma("GCC unroll 4")
		for (int c = 0; c < C; c++)
			out[r][c] = _mm512_reduce_add_ps(acc[r][c]);
}

__attribute__((always_inline)) AVX2 static inline void
tile_avx2(const float *x, uint64_t k, const float *w, int R, int C,
	  float out[TILE_R][TILE_C])
{
	__m256 acc[TILE_R][TILE_C];
	_Pragma("GCC unroll 4")
	for (int r = 0; r < R; r++)
		_Pragma("GCC unroll 4")
		for (int c = 0; c < C; c++)
			acc[r][c] = _mm256_setzero_ps();
	uint64_t i = 0;
	for (; i + 8 <= k; i += 8) {
		__m256 wv[TILE_C];
		_Pragma("GCC unroll 4")
		for (int c = 0; c < C; c++)
			wv[c] = _mm256_loadu_ps(w + c * k + i);
		_Pragma("GCC unroll 4")
		for (int r = 0; r < R; r++) {
			__m256 xv = _mm256_loadu_ps(x + r * k + i);
			_Pragma("GCC unroll 4")
			for (int c = 0; c < C; c++)
				acc[r][c] = _mm256_fmadd_ps(wv[c], xv,
							    acc[r][c]);
		}
	}
	_Pragma("GCC unroll 4")
	for (int r = 0; r < R; r++)
		_Pragma("GCC unroll 4")
		for (int c = 0; c < C; c++) {
			float t = 0;
			for (uint64_t j = i; j < k; j++)
				t += x[r * k + j] * w[c * k + j];
			out[r][c] = kv_hsum(acc[r][c]) + t;
		}
}

/* One instance per (R, C) and instruction set, chosen at run time. */
#define TILES(isa)                                                        \
	static void tiles_##isa(const float *x, uint64_t k, const float *w, \
				int R, int C, float out[TILE_R][TILE_C])    \
	{                                                                 \
		switch (R * 8 + C) {                                      \
		case 1 * 8 + 1: tile_##isa(x, k, w, 1, 1, out); break;    \
		case 2 * 8 + 1: tile_##isa(x, k, w, 2, 1, out); break;    \
		case 3 * 8 + 1: tile_##isa(x, k, w, 3, 1, out); break;    \
		case 4 * 8 + 1: tile_##isa(x, k, w, 4, 1, out); break;    \
		case 1 * 8 + 4: tile_##isa(x, k, w, 1, 4, out); break;    \
		case 2 * 8 + 4: tile_##isa(x, k, w, 2, 4, out); break;    \
		case 3 * 8 + 4: tile_##isa(x, k, w, 3, 4, out); break;    \
		default: tile_##isa(x, k, w, 4, 4, out); break;           \
		}                                                         \
	}
AVX512 TILES(avx512)
AVX2 TILES(avx2)
#endif

void kv_gemm_small_isa(const float *x, uint64_t m, uint64_t k,
		       const float *w, uint64_t n, uint64_t c0, uint64_t c1,
		       float beta, float *y, enum kv_isa isa)
{
	if (!kv_attn_has_isa(isa, 16))
		isa = KV_ISA_C;
	if (isa == KV_ISA_C) {
		small_c(x, m, k, w, n, c0, c1, beta, y);
		return;
	}
#ifdef HAVE_SIMD_GEMM
	float out[TILE_R][TILE_C];
	for (uint64_t c = c0; c < c1;) {
		/* one or two rows of x: one row of W at a time, one
		 * sequential stream (four rows of W interleave four
		 * streams, which read 20-30% slower from DRAM here) */
		int C = c1 - c >= TILE_C && m > 2 ? TILE_C : 1;
		for (uint64_t r = 0; r < m; r += TILE_R) {
			int R = m - r >= TILE_R ? TILE_R : (int)(m - r);
			if (isa == KV_ISA_AVX512)
				tiles_avx512(x + r * k, k, w + c * k, R, C,
					     out);
			else
				tiles_avx2(x + r * k, k, w + c * k, R, C,
					   out);
			for (int i = 0; i < R; i++)
				for (int j = 0; j < C; j++)
					put(y + (r + i) * n + c + j, beta,
					    out[i][j]);
		}
		c += C;
	}
#endif
}

void kv_gemm_small(const float *x, uint64_t m, uint64_t k, const float *w,
		   uint64_t n, uint64_t c0, uint64_t c1, float beta, float *y,
		   bool simd)
{
	enum kv_isa isa = !simd ? KV_ISA_C
			  : kv_attn_has_isa(KV_ISA_AVX512, 16) ? KV_ISA_AVX512
							       : KV_ISA_AVX2;
	kv_gemm_small_isa(x, m, k, w, n, c0, c1, beta, y, isa);
}
