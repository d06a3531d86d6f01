/*
 * attnq_int.h - what attnq.c (the portable kernels and the choice of
 * kernel) and attnq_avx512.c (the AVX-512 kernels) share: the blocking
 * constants, the query's 8-bit blocks, and the table of AVX-512 kernels
 * keyed by format and by the CPU features each takes.
 */
#ifndef KV_ATTNQ_INT_H
#define KV_ATTNQ_INT_H

#include "kvquant.h"

/* Positions per block: a block of rows stays in L1 while every query row
 * of a group reads it. */
#define QBLOCK 64
/* Positions a run of q4_0's weighted sum of V rounds its weights against
 * (see values_c_q4_0()): longer runs spread each run's reductions, its
 * d, scale and sum of weights, over more positions. */
#define QVRUN 128
/* Most blocks of 32 in a row of the AVX-512 kernels (head size 512). */
#define ZMAXB 16

typedef void kvq_scores_fn(const float *q, uint32_t g, const uint8_t *k,
			   uint32_t krow, uint64_t n, uint32_t hd,
			   float scale, float *s);
typedef void kvq_values_fn(const float *s, uint32_t g, const uint8_t *v,
			   uint32_t vrow, uint64_t n, uint32_t hd, float *o);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX512Q 1

/* The AVX-512 kernels, by format, in three levels of CPU: F and BW (with
 * F16C); with VNNI (int8 and q8_0 scores, heads a multiple of 64), and
 * with VNNI, VBMI and GFNI (q4_0, K and V); with VBMI and BF16 (fp8's
 * exact bf16 kernels, which round the weights themselves). */
struct kvq_avx512 {
	kvq_scores_fn *scores[KV_DTYPE_COUNT];
	kvq_values_fn *values[KV_DTYPE_COUNT];
	kvq_scores_fn *scores_vnni[KV_DTYPE_COUNT];
	kvq_values_fn *values_vnni[KV_DTYPE_COUNT];
	kvq_scores_fn *scores_bf16[KV_DTYPE_COUNT];
	/* fp8 V with VBMI and BF16: takes the weights s to 16 bits itself */
	void (*values_fp8)(float *s, uint32_t g, const uint8_t *v,
			   uint32_t vrow, uint64_t n, uint32_t hd, float *o);
	/* cnt floats x to 16 bits, hi + lo, into y (which may be x) */
	void (*round16)(const float *x, uint64_t cnt, float *y);
	/* whether q4_0's pipeline takes a call, and the pipeline */
	bool (*q4_pipes)(uint32_t g, uint32_t per, uint64_t n, uint32_t hd);
	void (*q4_part)(const float *q, uint32_t g, const uint8_t *k,
			const uint8_t *v, uint64_t n, uint32_t hd, float scale,
			float *s, float *o, float *m, float *l);
};

extern const struct kvq_avx512 kvq_avx512;
#endif

#endif
