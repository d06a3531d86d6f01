/*
 * attnq.c - attention over a cache kept in a compact format: the scores
 * q k^T read K's encoded rows and the weighted sum of V reads V's, each
 * row decoded in registers as it is used, never into a copy of the cache.
 * The pass has the shape of the f32 kernels (attn.c): all scores of the
 * range, the exact softmax shared with them, then V, so m, l and o mean
 * what they mean there and parts over ranges of positions merge alike.
 *
 * Each format has a portable C kernel here, the reference, and an
 * AVX-512 one in attnq_avx512.c (with F16C for the f16 scales) for head
 * sizes that are a multiple of 32; part_one() picks from that file's
 * table by format and by the features this CPU has (pick_scores(),
 * pick_values()). Float formats are decoded 32 values at a time into
 * two registers: f16 by vcvtph2ps, bf16 by a shift, fp8 e4m3 (where the CPU lacks
 * AVX-512 BF16 or VBMI) by moving its bits into a float's (the value /
 * 2^120 exactly, e4m3's subnormals as float subnormals; the 2^120 is
 * applied to the scores and the output), int8 and q8_0 by sign
 * extension, q4_1 by a 16-entry table lookup (vpermps) of each nibble.
 * Scores take eight positions at a time, one register of partial sums
 * each, added across lanes together at the end.
 *
 * An fp8 K takes the query, and an fp8 V the weights, to 16 bits: each
 * value as the sum of two bf16 (split16()). With AVX-512 BF16 and VBMI,
 * e4m3 values become bf16 exactly through two byte tables, and one
 * vdpbf16ps multiplies 32 of them with one part (scores_fp8b(),
 * values_fp8b()).
 *
 * The scores of int8 (heads a multiple of 32), q8_0 and q4_0 K are
 * integer dot products, as llama.cpp computes them: the query is
 * quantized per block of 32 values to 8 bits (max |q| / 127), the sums
 * of products are exact integers, scaled by the blocks' scales; with
 * AVX-512 VNNI one vpdpbusd multiplies 64 values (int8 and q8_0: heads a
 * multiple of 64; q4_0, which also takes VBMI and GFNI, reads K as one
 * stream of blocks, any head). The portable kernel computes the same
 * sums. The weighted sum of a q4_0 V is integer too: the weights are
 * rounded to 16 bits per run of positions and multiply the nibbles
 * exactly (values_c_q4_0()). A token over a long q4_0 cache goes through
 * a pipeline of chunks (q4_piped()), so that K and V stream together, and
 * the q4_0 kernels prefetch each stream ahead of its use (ahead()).
 */
#include <math.h>
#include <string.h>

#include "attnq_int.h"

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

/*
 * fp8's kernels take the query (scores) and the weights (V) to 16 bits,
 * as two bf16: hi the bf16 of x (to nearest even), lo the bf16 of
 * x - hi, each zero where what it rounds is subnormal, as vdpbf16ps
 * takes its inputs. hi + lo is exact in float and within 2^-16 of x,
 * relative: far under e4m3's own rounding (2^-4), and the AVX-512 BF16
 * kernel multiplies each part with the e4m3 values, exact in bf16, in
 * one vdpbf16ps (see scores_fp8b()).
 */
static float bf16_daz(float x)
{
	return fabsf(x) < 0x1p-126f ? 0 : kv_bf16_to_f32(kv_f32_to_bf16(x));
}

static void split16(float x, float *hi, float *lo)
{
	*hi = bf16_daz(x);
	*lo = bf16_daz(x - *hi);
}

/* x[0 .. cnt) to 16 bits, hi + lo */
static void round16_c(float *x, uint64_t cnt)
{
	for (uint64_t i = 0; i < cnt; i++) {
		float h, l;
		split16(x[i], &h, &l);
		x[i] = h + l;
	}
}

/* Whether K's scores take the query in 8-bit blocks of 32 (integer
 * products): q8_0 and q4_0, and int8 where 32 divides the head. */
static bool int_scores(enum kv_dtype t, uint32_t hd)
{
	return (t == KV_DTYPE_INT8 && hd % 32 == 0) || t == KV_DTYPE_Q8_0 ||
	       t == KV_DTYPE_Q4_0;
}

/* Value j of block b of a row of an integer format, and the block's
 * scale (int8: the row's). */
static int int_value(enum kv_dtype t, const uint8_t *row, uint32_t hd,
		     uint32_t b, uint32_t j, float *d)
{
	uint16_t h;
	const uint8_t *blk;
	switch (t) {
	case KV_DTYPE_INT8:
		memcpy(d, row + hd, sizeof *d);
		return (int8_t)row[32 * b + j];
	case KV_DTYPE_Q8_0:
		blk = row + 34 * b;
		memcpy(&h, blk, 2);
		*d = kv_f16_to_f32(h);
		return (int8_t)blk[2 + j];
	default: /* q4_0 */
		blk = row + 18 * b;
		memcpy(&h, blk, 2);
		*d = kv_f16_to_f32(h);
		return (j < 16 ? blk[2 + j] & 15 : blk[2 + j - 16] >> 4) - 8;
	}
}

/* int8, q8_0 and q4_0 K: per block d dq sum k q8, the sum exact in
 * integers. */
static void scores_c_int(enum kv_dtype t, const float *q, uint32_t g,
			 const uint8_t *k, uint32_t krow, uint64_t n,
			 uint32_t hd, float scale, float *s)
{
	int8_t q8[32];
	memset(s, 0, sizeof *s * g * n);
	for (uint32_t i = 0; i < g; i++)
		for (uint32_t b = 0; b < hd / 32; b++) {
			float dq =
				kvq_quant_q8(q + (uint64_t)i * hd + 32 * b, q8);
			for (uint64_t p = 0; p < n; p++) {
				const uint8_t *row = k + p * krow;
				int32_t isum = 0;
				float d = 0;
				for (uint32_t j = 0; j < 32; j++)
					isum += int_value(t, row, hd, b, j, &d) *
						q8[j];
				s[i * n + p] += d * dq * (float)isum;
			}
		}
	for (uint64_t i = 0; i < (uint64_t)g * n; i++)
		s[i] *= scale;
}

static void scores_c(const float *q, uint32_t g, const uint8_t *k,
		     const struct kv_rowfmt *f, uint64_t n, uint32_t hd,
		     float scale, float *s)
{
	float x[32], qr[32];
	if (int_scores(f->k, hd)) {
		scores_c_int(f->k, q, g, k, f->krow, n, hd, scale, s);
		return;
	}
	for (uint64_t p = 0; p < n; p++) {
		const uint8_t *row = k + p * f->krow;
		for (uint32_t i = 0; i < g; i++)
			s[i * n + p] = 0;
		for (uint32_t c0 = 0; c0 < hd; c0 += 32) {
			uint32_t cnt = chunk_c(f->k, row, hd, c0, x);
			for (uint32_t i = 0; i < g; i++) {
				const float *qi = q + (uint64_t)i * hd + c0;
				float acc = 0;
				if (f->k == KV_DTYPE_FP8) { /* to 16 bits */
					memcpy(qr, qi, sizeof *qr * cnt);
					round16_c(qr, cnt);
					qi = qr;
				}
				for (uint32_t d = 0; d < cnt; d++)
					acc += qi[d] * x[d];
				s[i * n + p] += acc;
			}
		}
		for (uint32_t i = 0; i < g; i++)
			s[i * n + p] *= scale;
	}
}

/*
 * The weighted sum of a q4_0 V in integers: o = sum_p w_p (nib_p - 8)
 * with w_p = s_p d_p, for each block of 32 values of the head, over
 * QVRUN positions at a time. The weights of such a run are rounded to
 * 16 bits against their largest magnitude (w = q S, S = max |w| / 32767,
 * |q| <= 32767); sum q nib is an exact integer, the -8 one more (8 sum q),
 * and S scales the difference once. Each weight is within S / 2 of its
 * value, so a position adds at most 4 S = max |w| / 8192 of error
 * (|nib - 8| <= 8): over a run, at most 128 / 8192 of its largest
 * weight, under 4% of the half step q4_0 itself may be off by for that
 * one position (|w| / 2). The AVX-512 kernel (values_q4_0i) computes the
 * same integers and the same S.
 */

/* Weights of positions p0 .. p0 + cnt of block b for query row si into
 * wq (as 16-bit integers); returns their scale S, *qsum their sum. */
static float wquant_c(const float *si, const uint8_t *v, uint32_t vrow,
		      uint64_t p0, uint32_t cnt, uint32_t b, int32_t *wq,
		      int32_t *qsum)
{
	float w[QVRUN], wmax = 0;
	for (uint32_t j = 0; j < cnt; j++) {
		const uint8_t *blk = v + (p0 + j) * vrow + 18 * b;
		uint16_t h;
		memcpy(&h, blk, 2);
		w[j] = si[p0 + j] * kv_f16_to_f32(h);
		wmax = fabsf(w[j]) > wmax ? fabsf(w[j]) : wmax;
	}
	float inv = wmax > 0 ? 32767.0f / wmax : 0;
	*qsum = 0;
	for (uint32_t j = 0; j < cnt; j++) {
		wq[j] = (int32_t)rintf(w[j] * inv);
		*qsum += wq[j];
	}
	return wmax / 32767.0f;
}

static void values_c_q4_0(const float *s, uint32_t g, const uint8_t *v,
			  uint32_t vrow, uint64_t n, uint32_t hd, float *o)
{
	int32_t wq[QVRUN], qsum, acc[32];
	memset(o, 0, sizeof *o * g * hd);
	for (uint64_t p0 = 0; p0 < n; p0 += QVRUN) {
		uint32_t cnt = (uint32_t)(n - p0 < QVRUN ? n - p0 : QVRUN);
		for (uint32_t i = 0; i < g; i++)
			for (uint32_t b = 0; b < hd / 32; b++) {
				float sc = wquant_c(s + i * n, v, vrow, p0, cnt,
						    b, wq, &qsum);
				float *ob = o + (uint64_t)i * hd + 32 * b;
				const uint8_t *vb = v + p0 * vrow + 18 * b + 2;
				memset(acc, 0, sizeof acc);
				for (uint32_t j = 0; j < cnt; j++)
					for (uint32_t d = 0; d < 16; d++) {
						int32_t x = vb[j * vrow + d];
						acc[d] += wq[j] * (x & 15);
						acc[16 + d] += wq[j] * (x >> 4);
					}
				for (uint32_t d = 0; d < 32; d++)
					ob[d] += sc *
						 (float)(acc[d] - 8 * qsum);
			}
	}
}

static void values_c(const float *s, uint32_t g, const uint8_t *v,
		     const struct kv_rowfmt *f, uint64_t n, uint32_t hd,
		     float *o)
{
	float x[32];
	if (f->v == KV_DTYPE_Q4_0) {
		values_c_q4_0(s, g, v, f->vrow, n, hd, o);
		return;
	}
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

/* Whether the AVX-512 kernels keep to AVX-512 F and BW (with F16C), as
 * on a CPU without VNNI, VBMI or BF16 (kv_attnq_set_basic(), for tests) */
static bool basic;

void kv_attnq_set_basic(bool on)
{
	basic = on;
}

#ifdef HAVE_AVX512Q
/* The body of a have_*(): whether this CPU has features A and B (asked
 * once) and the kernels that take them are not set aside (basic). */
#define HAVE_BOTH(A, B)                                                      \
	static int have = -1;                                                \
	if (have < 0) {                                                      \
		__builtin_cpu_init();                                        \
		have = __builtin_cpu_supports(A) && __builtin_cpu_supports(B); \
	}                                                                    \
	return have && !basic

static bool have_vnni(void)
{
	HAVE_BOTH("avx512vl", "avx512vnni");
}

/* What the q4_0 kernels take beyond VNNI: VBMI's byte permutes and GFNI
 * (a shift of every byte's high nibble). */
static bool have_q4(void)
{
	HAVE_BOTH("avx512vbmi", "gfni");
}

/* What fp8's bf16 kernels take: VBMI's two-table byte permutes, BF16. */
static bool have_fp8b(void)
{
	HAVE_BOTH("avx512vbmi", "avx512bf16");
}
#endif

bool kv_attnq_has_simd(uint32_t hd)
{
#ifdef HAVE_AVX512Q
	static int have = -1;
	if (have < 0) {
		__builtin_cpu_init();
		/* F16C comes with every AVX-512 CPU (and not every
		 * compiler's builtin names it) */
		have = __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512bw");
	}
	(void)have_vnni(); /* probed here, before any thread asks */
	(void)have_q4();
	(void)have_fp8b();
	return have && hd % 32 == 0 && hd / 32 <= ZMAXB;
#else
	(void)hd;
	return false;
#endif
}

#ifdef HAVE_AVX512Q
/* The AVX-512 kernel of the scores over a K of format t, by the most
 * capable level this CPU has that names one (NULL: the portable one). */
static kvq_scores_fn *pick_scores(enum kv_dtype t, uint32_t hd)
{
	const struct kvq_avx512 *z = &kvq_avx512;
	if (t == KV_DTYPE_FP8 && have_fp8b())
		return z->scores_bf16[t];
	if (t == KV_DTYPE_Q4_0) /* any hd, krow 18 hd / 32 */
		return have_vnni() && have_q4() ? z->scores_vnni[t] : NULL;
	if (int_scores(t, hd))
		return hd % 64 == 0 && have_vnni() ? z->scores_vnni[t] : NULL;
	return z->scores[t];
}

/* The same for the weighted sum of a V of format t (fp8 with VBMI and
 * BF16 aside: part_one() calls it, as it rounds the weights itself). */
static kvq_values_fn *pick_values(enum kv_dtype t)
{
	const struct kvq_avx512 *z = &kvq_avx512;
	if (t == KV_DTYPE_Q4_0)
		return have_vnni() && have_q4() ? z->values_vnni[t] : NULL;
	return z->values[t];
}
#endif

/* One pass over [0, n): every score, the softmax, then V. */
static void part_one(const float *q, uint32_t g, uint32_t per,
		     const uint8_t *k, const uint8_t *v,
		     const struct kv_rowfmt *f, uint64_t n, uint32_t hd,
		     float scale, float *s, float *o, float *m, float *l,
		     enum kv_isa isa)
{
	bool simd = isa == KV_ISA_AVX512 && kv_attnq_has_simd(hd);
	kvq_scores_fn *sf = NULL;
	kvq_values_fn *vf = NULL;
#ifdef HAVE_AVX512Q
	if (simd) {
		sf = pick_scores(f->k, hd);
		vf = pick_values(f->v);
	}
#endif
	if (sf)
		sf(q, g, k, f->krow, n, hd, scale, s);
	else
		scores_c(q, g, k, f, n, hd, scale, s);
	kv_attn_softmax(s, g, per, n, m, l, simd);
#ifdef HAVE_AVX512Q
	if (simd && f->v == KV_DTYPE_FP8 && have_fp8b()) {
		kvq_avx512.values_fp8(s, g, v, f->vrow, n, hd, o);
		return;
	}
	if (f->v == KV_DTYPE_FP8 && vf) /* the weights to 16 bits */
		kvq_avx512.round16(s, (uint64_t)g * n, s);
	else
#endif
	if (f->v == KV_DTYPE_FP8)
		round16_c(s, (uint64_t)g * n);
	if (vf)
		vf(s, g, v, f->vrow, n, hd, o);
	else
		values_c(s, g, v, f, n, hd, o);
}

void kv_attnq_part(const float *q, uint32_t g, uint32_t per,
		   const uint8_t *k, const uint8_t *v,
		   const struct kv_rowfmt *f, uint64_t n, uint32_t hd,
		   float scale, float *s, float *o, float *m, float *l,
		   enum kv_isa isa)
{
#ifdef HAVE_AVX512Q
	if (isa == KV_ISA_AVX512 && kv_attnq_has_simd(hd) &&
	    f->k == KV_DTYPE_Q4_0 && f->v == KV_DTYPE_Q4_0 && have_vnni() &&
	    have_q4() && kvq_avx512.q4_pipes(g, per, n, hd)) {
		kvq_avx512.q4_part(q, g, k, v, n, hd, scale, s, o, m, l);
		return;
	}
#endif
	part_one(q, g, per, k, v, f, n, hd, scale, s, o, m, l, isa);
}
