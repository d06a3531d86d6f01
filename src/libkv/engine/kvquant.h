/*
 * kvquant.h - the KV cache as bytes: each row (one K or V head of one
 * token, hd values) is encoded once, when the engine writes it, in one of
 * the storage formats of dtype.h, and the attention kernels read the
 * encoded rows directly. Shared by the engine's files and the tests, with
 * the scalar conversions the 16-bit weights go through too.
 *
 * Row layouts (bytes of kv_dtype_row_bytes()):
 *   f32, f16, bf16  the values, little-endian IEEE (bf16: f32's top half)
 *   fp8             e4m3 (4 exponent bits, bias 7, 3 mantissa bits; no
 *                   infinities, largest 448), per-tensor scale 1.0
 *   int8            hd signed bytes, then one f32 scale: x = q * scale,
 *                   scale = max |x| / 127 (symmetric)
 *   q8_0            blocks of 32: f16 d, 32 signed bytes; x = q d
 *   q4_0            blocks of 32: f16 d, 16 bytes whose low nibbles hold
 *                   values 0..15 of the block and high nibbles 16..31;
 *                   x = (q - 8) d
 *   q4_1            blocks of 32: f16 d, f16 m, 16 bytes as q4_0;
 *                   x = q d + m
 * The block formats are llama.cpp's (ggml's block_q8_0, block_q4_0,
 * block_q4_1), byte for byte.
 */
#ifndef KV_KVQUANT_H
#define KV_KVQUANT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "engine_int.h"
#include "kv/dtype.h"

/* Scalar conversions, round to nearest even (fp8 saturates at 448). */
uint16_t kv_f32_to_f16(float x);
uint8_t kv_f32_to_fp8(float x);
float kv_fp8_to_f32(uint8_t b);

/* f16 widened exactly, inline and without libm, as the engine reads its
 * 16-bit norms and biases a value at a time: a normal value's exponent
 * rebiased (15 to 127) under its 10 mantissa bits, a subnormal one's
 * mantissa times 2^-24 (exact in a float); infinities stay, a NaN is the
 * quiet one, its sign kept. */
static inline float kv_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, a = h & 0x7fffu, u;
	float f;
	if (a >= 0x7c00) {
		u = sign | (a > 0x7c00 ? 0x7fc00000u : 0x7f800000u);
	} else if (a >= 0x400) {
		u = sign | ((a << 13) + (112u << 23));
	} else {
		f = (float)a * 0x1p-24f;
		memcpy(&u, &f, sizeof u);
		u |= sign;
	}
	memcpy(&f, &u, sizeof f);
	return f;
}

/* bf16 is float's top half; inline, as the fp8 kernels round every query
 * value and weight through it. A NaN stays a NaN. */
static inline uint16_t kv_f32_to_bf16(float x)
{
	uint32_t u;
	memcpy(&u, &x, sizeof u);
	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)(u >> 16 | 0x40);
	return (uint16_t)((u + 0x7fff + (u >> 16 & 1)) >> 16);
}

static inline float kv_bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float x;
	memcpy(&x, &u, sizeof x);
	return x;
}

/* Element i of the engine's weights at w, of type wt (f32, bf16 or f16),
 * as a float: a 16-bit one widened exactly. Every weight is kept in the
 * run's one type, norm gains and biases too; those vectors are read
 * through this, a value at a time. */
static inline float kv_wval(const void *w, uint64_t i, enum kv_dtype wt)
{
	uint16_t h;
	float f;
	if (wt == KV_DTYPE_F32) {
		memcpy(&f, (const float *)w + i, sizeof f);
		return f;
	}
	memcpy(&h, (const uint16_t *)w + i, sizeof h);
	return wt == KV_DTYPE_BF16 ? kv_bf16_to_f32(h) : kv_f16_to_f32(h);
}

/* Encodes n values of x into row (kv_dtype_row_bytes(t, n) bytes); t must
 * be stored (kv_dtype_stored()) and n tile its blocks. */
void kv_quant_encode(enum kv_dtype t, const float *x, uint32_t n, void *row);
/* Decodes a row of n values into x. */
void kv_quant_decode(enum kv_dtype t, const void *row, uint32_t n, float *x);

/* How the cache keeps K and V: formats and bytes per row. */
struct kv_rowfmt {
	enum kv_dtype k, v;
	uint32_t krow, vrow; /* bytes of a row of hd values */
};

/*
 * kv_attn_part() over encoded rows: g query rows (tokens of `per` rows,
 * causal as there) against positions [0, n) whose K and V rows are kept
 * at k and v in the formats of f (row p at k + p krow). The same s, o, m,
 * l as kv_attn_part(); s is used by every kernel. isa: KV_ISA_C or
 * KV_ISA_AVX512 (the portable kernel where that one does not run).
 */
void kv_attnq_part(const float *q, uint32_t g, uint32_t per,
		   const uint8_t *k, const uint8_t *v,
		   const struct kv_rowfmt *f, uint64_t n, uint32_t hd,
		   float scale, float *s, float *o, float *m, float *l,
		   enum kv_isa isa);

/* Whether the vectorised kernel runs for head size hd on this CPU. */
bool kv_attnq_has_simd(uint32_t hd);

/* With on, the vectorised kernels take only what every AVX-512 CPU has
 * (F, BW), leaving the ones for VNNI, VBMI, GFNI and BF16 aside: for
 * tests of those that CPUs without them run. Not for use while another
 * thread attends. */
void kv_attnq_set_basic(bool on);

/* A block of 32 query values for the integer dot products with an int8,
 * q8_0 or q4_0 K, as llama.cpp quantizes its activations to q8_0 for
 * them: dq = max |q| / 127 (kept in float), q8 = round(q / dq). Returns
 * dq. */
float kvq_quant_q8(const float *q, int8_t *q8);

#endif
