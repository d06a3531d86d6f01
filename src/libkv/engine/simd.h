/*
 * simd.h - the horizontal sums the engine's AVX2 kernels share (attn.c,
 * gemm.c, mla.c). x86-64 with GCC or clang only; each function carries its
 * own target, so a file includes this without compiling for AVX2 as a
 * whole, and calls it from AVX2 code only.
 */
#ifndef KV_SIMD_H
#define KV_SIMD_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define KV_AVX2 __attribute__((target("avx2,fma")))

/* The sum of the eight lanes of a. */
KV_AVX2 static inline float kv_hsum(__m256 a)
{
	__m128 x = _mm_add_ps(_mm256_castps256_ps128(a),
			      _mm256_extractf128_ps(a, 1));
	x = _mm_add_ps(x, _mm_movehl_ps(x, x));
	x = _mm_add_ss(x, _mm_movehdup_ps(x));
	return _mm_cvtss_f32(x);
}

/* Eight sums, one per register, in the lanes of one (lane i: a_i's). */
KV_AVX2 static inline __m256 kv_hsum8(__m256 a0, __m256 a1, __m256 a2,
				      __m256 a3, __m256 a4, __m256 a5,
				      __m256 a6, __m256 a7)
{
	__m256 t0 = _mm256_hadd_ps(a0, a1), t1 = _mm256_hadd_ps(a2, a3);
	__m256 t2 = _mm256_hadd_ps(a4, a5), t3 = _mm256_hadd_ps(a6, a7);
	t0 = _mm256_hadd_ps(t0, t1);
	t2 = _mm256_hadd_ps(t2, t3);
	return _mm256_add_ps(_mm256_permute2f128_ps(t0, t2, 0x20),
			     _mm256_permute2f128_ps(t0, t2, 0x31));
}
#endif

#endif
