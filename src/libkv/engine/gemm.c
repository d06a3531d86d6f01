/*
 * gemm.c - a few rows (a batch of users, one token each) times a weight
 * matrix kept [out][in], streaming the matrix once with no packing. Each
 * output is a dot product along one contiguous row of W, and a thread's
 * outputs are a contiguous run of rows, so a thread reads one sequential
 * stream: the pattern that reaches the machine's read bandwidth. (sgemv over
 * the [in][out] form reads several rows at once in slices of each; on the
 * two-core machine of the README it stayed near 30 GB/s where a plain read
 * reached 45-50.) OpenBLAS's sgemm would copy W into panels first, which for
 * a handful of rows costs as much as reading it, and up to KV_SMALL_ROWS
 * rows this kernel also computed faster than that machine's sgemm.
 */
#include <stdbool.h>
#include <string.h>

#include "engine_int.h"
#include "kvquant.h"
#include "simd.h"

/* Bytes of one weight of type wt. */
static inline uint64_t wsize(enum kv_dtype wt)
{
	return wt == KV_DTYPE_F32 ? 4 : 2;
}

/* y[r][c] = beta y[r][c] + sum over i of x[r][i] w[c][i] for rows r < m
 * and columns c0 <= c < c1; x (m, k), w (n, k), y (m, n). */
static void small_c(const float *x, uint64_t m, uint64_t k, const void *w,
		    enum kv_dtype wt, uint64_t n, uint64_t c0, uint64_t c1,
		    float beta, float *y)
{
	for (uint64_t c = c0; c < c1; c++)
		for (uint64_t r = 0; r < m; r++) {
			float acc = 0;
			for (uint64_t i = 0; i < k; i++)
				acc += x[r * k + i] * kv_wval(w, c * k + i, wt);
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
#define AVX2 __attribute__((target("avx2,fma,f16c")))
#define AVX512 __attribute__((target("avx512f")))

/* 16 (8) weights of type wt from w + i, as floats: bf16 by a shift of
 * each into a float's top half, f16 by vcvtph2ps. */
__attribute__((always_inline)) AVX512 static inline __m512
wload512(const void *w, uint64_t i, enum kv_dtype wt)
{
	const uint16_t *h = (const uint16_t *)w + i;
	if (wt == KV_DTYPE_BF16)
		return _mm512_castsi512_ps(_mm512_slli_epi32(
			_mm512_cvtepu16_epi32(
				_mm256_loadu_si256((const __m256i *)h)),
			16));
	if (wt == KV_DTYPE_F16)
		return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)h));
	return _mm512_loadu_ps((const float *)w + i);
}

__attribute__((always_inline)) AVX2 static inline __m256
wload256(const void *w, uint64_t i, enum kv_dtype wt)
{
	const uint16_t *h = (const uint16_t *)w + i;
	if (wt == KV_DTYPE_BF16)
		return _mm256_castsi256_ps(_mm256_slli_epi32(
			_mm256_cvtepu16_epi32(
				_mm_loadu_si128((const __m128i *)h)),
			16));
	if (wt == KV_DTYPE_F16)
		return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)h));
	return _mm256_loadu_ps((const float *)w + i);
}

/*
 * The tile kernels: R rows of x against C consecutive rows of W, R x C
 * accumulators, so each load of W serves R products and each load of x
 * serves C. R and C are constants at every call, so the accumulators stay
 * in registers. out[r][c] = the dot product of x row r with W row c.
 *
 * A tile of C rows reads C places of W at once, C streams a row apart,
 * and DRAM served four such streams at half the speed of one here. So a
 * tile is also handed pf, where the next tile's C rows start (or NULL),
 * and touches those bytes in order as it goes, a line per C x 64 bytes
 * of its own: DRAM sees one sequential stream, a tile ahead, and the
 * tile's own reads come from L2.
 */
#define TILE_R 6
#define TILE_C 4

/* A one-row tile reads one stream, and the hardware's prefetcher alone
 * kept it near 10.5 GB/s on one core (the README's Xeon) where touching
 * the bytes 4 KiB ahead reached 12-13: its pf is its own row that far
 * on. */
#define STREAM_AHEAD 4096

/* Accumulator sets a 16-bit tile keeps: one FMA chain per output would
 * wait on its own latency (4 cycles for 32 bytes of bf16 weights, half
 * of what one core can stream), so a one- or few-output tile spreads its
 * products over several. f32 tiles keep one set (their sums' order, and
 * so their bits, stay as they were). */
#define NSETS(R, C, wt) \
	((wt) == KV_DTYPE_F32 ? 1 : (R) * (C) == 1 ? 4 : (R) * (C) <= 4 ? 2 : 1)

/* Brings lines n C .. n C + C - 1 of the next tile (pf, if any) into
 * cache. A tile's step reads a line from each of its C rows (16 f32
 * weights; 16-bit ones fill a line every other step), so the next tile
 * comes in order at the pace this one is read. */
#define PREFETCH(pf, n, C)                                                 \
	do {                                                               \
		if (pf)                                                    \
			_Pragma("GCC unroll 4") for (int c_ = 0; c_ < (C); \
						     c_++)                 \
				_mm_prefetch((pf) + ((n) * (C) + c_) * 64, \
					     _MM_HINT_T0);                 \
	} while (0)

__attribute__((always_inline)) AVX512 static inline void
tile_avx512(const float *x, uint64_t k, const void *w, enum kv_dtype wt,
	    int R, int C, float out[TILE_R][TILE_C], const char *pf)
{
	const int A = NSETS(R, C, wt);
	__m512 acc[4][TILE_R][TILE_C];
	/* f32 rows end in a masked load; 16-bit ones in a scalar tail */
	uint64_t kv = wt == KV_DTYPE_F32 ? k : k / 16 * 16, i = 0;
	_Pragma("GCC unroll 4")
	for (int a = 0; a < A; a++)
		_Pragma("GCC unroll 8")
		for (int r = 0; r < R; r++)
			_Pragma("GCC unroll 4")
			for (int c = 0; c < C; c++)
				acc[a][r][c] = _mm512_setzero_ps();
	if (A > 1) /* 16-bit: whole blocks of A x 16, A sets */
		for (; i + 16 * (uint64_t)A <= kv; i += 16 * (uint64_t)A)
			_Pragma("GCC unroll 4")
			for (int a = 0; a < A; a++) {
				uint64_t j = i + 16 * (uint64_t)a;
				__m512 wv[TILE_C];
				if (a % 2 == 0)
					PREFETCH(pf, j / 32, C);
				_Pragma("GCC unroll 4")
				for (int c = 0; c < C; c++)
					wv[c] = wload512(w, c * k + j, wt);
				_Pragma("GCC unroll 8")
				for (int r = 0; r < R; r++) {
					__m512 xv = _mm512_loadu_ps(x + r * k +
								    j);
					_Pragma("GCC unroll 4")
					for (int c = 0; c < C; c++)
						acc[a][r][c] = _mm512_fmadd_ps(
							wv[c], xv,
							acc[a][r][c]);
				}
			}
	for (; i + 16 <= kv; i += 16) {
		__m512 wv[TILE_C];
		if (wt == KV_DTYPE_F32)
			PREFETCH(pf, i / 16, C);
		else if (i % 32 == 0)
			PREFETCH(pf, i / 32, C);
		_Pragma("GCC unroll 4")
		for (int c = 0; c < C; c++)
			wv[c] = wload512(w, c * k + i, wt);
		_Pragma("GCC unroll 8")
		for (int r = 0; r < R; r++) {
			__m512 xv = _mm512_loadu_ps(x + r * k + i);
			_Pragma("GCC unroll 4")
			for (int c = 0; c < C; c++)
				acc[0][r][c] = _mm512_fmadd_ps(wv[c], xv,
							       acc[0][r][c]);
		}
	}
	/* f32's last 1-15 weights, masked: the same sums as a block padded
	 * with zeros. Masking only here, not in every step, is a quarter
	 * faster from cache and changes no bits. */
	if (i < kv) {
		__mmask16 mk = (__mmask16)((1u << (k - i)) - 1);
		__m512 wv[TILE_C];
		_Pragma("GCC unroll 4")
		for (int c = 0; c < C; c++)
			wv[c] = _mm512_maskz_loadu_ps(
				mk, (const float *)w + c * k + i);
		_Pragma("GCC unroll 8")
		for (int r = 0; r < R; r++) {
			__m512 xv = _mm512_maskz_loadu_ps(mk, x + r * k + i);
			_Pragma("GCC unroll 4")
			for (int c = 0; c < C; c++)
				acc[0][r][c] = _mm512_fmadd_ps(wv[c], xv,
							       acc[0][r][c]);
		}
	}
	_Pragma("GCC unroll 8")
	for (int r = 0; r < R; r++)
		_Pragma("GCC unroll 4")
		for (int c = 0; c < C; c++) {
			float t = 0;
			for (uint64_t j = kv; j < k; j++)
				t += x[r * k + j] * kv_wval(w, c * k + j, wt);
			_Pragma("GCC unroll 4")
			for (int a = 1; a < A; a++)
				acc[0][r][c] = _mm512_add_ps(acc[0][r][c],
							     acc[a][r][c]);
			out[r][c] = _mm512_reduce_add_ps(acc[0][r][c]) + t;
		}
}

/* AVX2's tiles are one row of W (C is 1) by up to TILE_R rows of x: its
 * sixteen registers hold no more accumulators. */
__attribute__((always_inline)) AVX2 static inline void
tile_avx2(const float *x, uint64_t k, const void *w, enum kv_dtype wt,
	  int R, int C, float out[TILE_R][TILE_C], const char *pf)
{
	const int A = NSETS(R, 1, wt);
	__m256 acc[4][TILE_R];
	(void)C;
	(void)pf;
	_Pragma("GCC unroll 4")
	for (int a = 0; a < A; a++)
		_Pragma("GCC unroll 8")
		for (int r = 0; r < R; r++)
			acc[a][r] = _mm256_setzero_ps();
	uint64_t i = 0;
	for (; i + 8 * (uint64_t)A <= k; i += 8 * (uint64_t)A)
		_Pragma("GCC unroll 4")
		for (int a = 0; a < A; a++) {
			uint64_t j = i + 8 * (uint64_t)a;
			__m256 wv = wload256(w, j, wt);
			_Pragma("GCC unroll 8")
			for (int r = 0; r < R; r++)
				acc[a][r] = _mm256_fmadd_ps(
					wv, _mm256_loadu_ps(x + r * k + j),
					acc[a][r]);
		}
	_Pragma("GCC unroll 8")
	for (int r = 0; r < R; r++) {
		float t = 0;
		for (uint64_t j = i; j < k; j++)
			t += x[r * k + j] * kv_wval(w, j, wt);
		_Pragma("GCC unroll 4")
		for (int a = 1; a < A; a++)
			acc[0][r] = _mm256_add_ps(acc[0][r], acc[a][r]);
		out[r][0] = kv_hsum(acc[0][r]) + t;
	}
}

/* bf16 for one or two rows of x, a line of W a load: 32 weights, the
 * even ones widened by a shift into a float's top half, the odd ones by
 * masking off their neighbour, against xp, x's rows with each 32 stored
 * as their 16 even then their 16 odd values (pairs_of_x). Widening each
 * half of a line from its own 32-byte load reached 12% less of the
 * machine's bandwidth than f16's conversion on the same bytes; this
 * reaches more. Two blocks of 32 a step, four sums a row; the last k %
 * 32 weights in a scalar tail over x. */
__attribute__((always_inline)) AVX512 static inline void
pairs_avx512(const float *xp, const float *x, uint64_t k, const void *w,
	     int R, float out[TILE_R][TILE_C], const char *pf)
{
	const uint16_t *h = w;
	const __m512i odd = _mm512_set1_epi32((int)0xffff0000);
	__m512 acc[2][2][2];
	uint64_t kv = k / 32 * 32, i = 0;
	_Pragma("GCC unroll 2")
	for (int r = 0; r < R; r++)
		for (int a = 0; a < 4; a++)
			acc[a / 2][a % 2][r] = _mm512_setzero_ps();
	for (; i < kv; i += 64)
		_Pragma("GCC unroll 2")
		for (int b = 0; b < 2; b++) {
			uint64_t j = i + 32 * (uint64_t)b;
			if (j == kv)
				break;
			__m512i u = _mm512_loadu_si512(h + j);
			__m512 we = _mm512_castsi512_ps(
				_mm512_slli_epi32(u, 16));
			__m512 wo = _mm512_castsi512_ps(
				_mm512_and_si512(u, odd));
			PREFETCH(pf, j / 32, 1);
			_Pragma("GCC unroll 2")
			for (int r = 0; r < R; r++) {
				const float *p = xp + r * k + j;
				acc[b][0][r] = _mm512_fmadd_ps(
					we, _mm512_loadu_ps(p), acc[b][0][r]);
				acc[b][1][r] = _mm512_fmadd_ps(
					wo, _mm512_loadu_ps(p + 16),
					acc[b][1][r]);
			}
		}
	_Pragma("GCC unroll 2")
	for (int r = 0; r < R; r++) {
		float t = 0;
		for (uint64_t j = kv; j < k; j++)
			t += x[r * k + j] * kv_wval(w, j, KV_DTYPE_BF16);
		__m512 s = _mm512_add_ps(
			_mm512_add_ps(acc[0][0][r], acc[0][1][r]),
			_mm512_add_ps(acc[1][0][r], acc[1][1][r]));
		out[r][0] = _mm512_reduce_add_ps(s) + t;
	}
}

AVX512 static void pairs_1(const float *xp, const float *x, uint64_t k,
			   const void *w, float out[TILE_R][TILE_C],
			   const char *pf)
{
	pairs_avx512(xp, x, k, w, 1, out, pf);
}

AVX512 static void pairs_2(const float *xp, const float *x, uint64_t k,
			   const void *w, float out[TILE_R][TILE_C],
			   const char *pf)
{
	pairs_avx512(xp, x, k, w, 2, out, pf);
}

/* x's m rows into xp as pairs_avx512 reads them: each whole 32 of a row
 * as its 16 even values, then its 16 odd ones. */
static void pairs_of_x(const float *x, uint64_t m, uint64_t k, float *xp)
{
	for (uint64_t r = 0; r < m; r++)
		for (uint64_t i = 0; i + 32 <= k; i += 32)
			for (int j = 0; j < 16; j++) {
				xp[r * k + i + j] = x[r * k + i + 2 * j];
				xp[r * k + i + 16 + j] =
					x[r * k + i + 2 * j + 1];
			}
}

/* One instance per (R, C), weight type and instruction set, chosen at
 * run time: R from 1 to TILE_R, C 1, and TILE_C for AVX-512. */
#define TILE(isa, WT, R, C)                                                \
	case R * 8 + C:                                                    \
		tile_##isa(x, k, w, WT, R, C, out, pf);                    \
		break;
#define ROWS(isa, WT, C)                                                   \
	TILE(isa, WT, 1, C) TILE(isa, WT, 2, C) TILE(isa, WT, 3, C)        \
	TILE(isa, WT, 4, C) TILE(isa, WT, 5, C) TILE(isa, WT, 6, C)
#define TILES(isa, wt, WT, wide)                                           \
	static void tiles_##isa##_##wt(const float *x, uint64_t k,         \
				       const void *w, int R, int C,        \
				       float out[TILE_R][TILE_C],          \
				       const char *pf)                     \
	{                                                                  \
		switch (R * 8 + C) {                                       \
			ROWS(isa, WT, 1)                                   \
			wide                                               \
		}                                                          \
	}
AVX512 TILES(avx512, f32, KV_DTYPE_F32, ROWS(avx512, KV_DTYPE_F32, TILE_C))
AVX512 TILES(avx512, bf16, KV_DTYPE_BF16,
	     ROWS(avx512, KV_DTYPE_BF16, TILE_C))
AVX512 TILES(avx512, f16, KV_DTYPE_F16, ROWS(avx512, KV_DTYPE_F16, TILE_C))
AVX2 TILES(avx2, f32, KV_DTYPE_F32, )
AVX2 TILES(avx2, bf16, KV_DTYPE_BF16, )
AVX2 TILES(avx2, f16, KV_DTYPE_F16, )

typedef void tiles_fn(const float *x, uint64_t k, const void *w, int R,
		      int C, float out[TILE_R][TILE_C], const char *pf);

/* The tile kernel of an instruction set and weight type. */
static tiles_fn *tiles_of(enum kv_isa isa, enum kv_dtype wt)
{
	if (isa == KV_ISA_AVX512)
		return wt == KV_DTYPE_BF16  ? tiles_avx512_bf16
		       : wt == KV_DTYPE_F16 ? tiles_avx512_f16
					    : tiles_avx512_f32;
	return wt == KV_DTYPE_BF16  ? tiles_avx2_bf16
	       : wt == KV_DTYPE_F16 ? tiles_avx2_f16
				    : tiles_avx2_f32;
}
#endif

void kv_gemm_small_isa(const float *x, uint64_t m, uint64_t k,
		       const void *w, enum kv_dtype wt, uint64_t n,
		       uint64_t c0, uint64_t c1, float beta, float *y,
		       enum kv_isa isa, float *xp, uint64_t xp_n)
{
	if (!kv_attn_has_isa(isa, 16))
		isa = KV_ISA_C;
	if (isa == KV_ISA_C) {
		small_c(x, m, k, w, wt, n, c0, c1, beta, y);
		return;
	}
#ifdef HAVE_SIMD_GEMM
	float out[TILE_R][TILE_C];
	if (isa == KV_ISA_AVX512 && wt == KV_DTYPE_BF16 && m <= 2 && xp &&
	    m * k <= xp_n) {
		uint64_t row = k * 2;
		pairs_of_x(x, m, k, xp);
		for (uint64_t c = c0; c < c1; c++) {
			const char *wc = (const char *)w + c * row;
			if (m == 1)
				pairs_1(xp, x, k, wc, out, wc + STREAM_AHEAD);
			else
				pairs_2(xp, x, k, wc, out, wc + STREAM_AHEAD);
			for (uint64_t r = 0; r < m; r++)
				put(y + r * n + c, beta, out[r][0]);
		}
		return;
	}
	tiles_fn *tiles = tiles_of(isa, wt);
	/* x's rows in passes of at most TILE_R, as even as they go (8 rows
	 * as 4 + 4, not 6 + 2) */
	uint64_t passes = (m + TILE_R - 1) / TILE_R;
	uint64_t row = k * wsize(wt);
	for (uint64_t c = c0; c < c1;) {
		/* one or two rows of x: one row of W at a time, one
		 * sequential stream, touched STREAM_AHEAD on; more rows:
		 * four (AVX-512), each load of x serving four products,
		 * the next four touched as these are read */
		int C = isa == KV_ISA_AVX512 && m > 2 && c1 - c >= TILE_C
				? TILE_C
				: 1;
		const char *wc = (const char *)w + c * row;
		const char *pf = C > 1 ? (c1 - c >= 2 * (uint64_t)C
						  ? wc + C * row
						  : NULL)
				       : wc + STREAM_AHEAD;
		for (uint64_t p = 0, r = 0; p < passes; p++) {
			int R = (int)(m * (p + 1) / passes - m * p / passes);
			/* the first pass reads the rows of W from DRAM, the
			 * others from cache */
			tiles(x + r * k, k, wc, R, C, out, p ? NULL : pf);
			for (int i = 0; i < R; i++)
				for (int j = 0; j < C; j++)
					put(y + (r + i) * n + c + j, beta,
					    out[i][j]);
			r += (uint64_t)R;
		}
		c += (uint64_t)C;
	}
#endif
}

void kv_gemm_small(const float *x, uint64_t m, uint64_t k, const void *w,
		   enum kv_dtype wt, uint64_t n, uint64_t c0, uint64_t c1,
		   float beta, float *y, bool simd, float *xp, uint64_t xp_n)
{
	enum kv_isa isa = !simd ? KV_ISA_C
			  : kv_attn_has_isa(KV_ISA_AVX512, 16) ? KV_ISA_AVX512
							       : KV_ISA_AVX2;
	kv_gemm_small_isa(x, m, k, w, wt, n, c0, c1, beta, y, isa, xp, xp_n);
}

void kv_weights_to_f32(const void *w, enum kv_dtype wt, uint64_t n,
		       float *out)
{
	if (wt == KV_DTYPE_F32) {
		memcpy(out, w, n * sizeof *out);
		return;
	}
	for (uint64_t i = 0; i < n; i++)
		out[i] = kv_wval(w, i, wt);
}
