/*
 * kvquant.c - encoding and decoding a row of the KV cache in each stored
 * format. A row is encoded once, when its token is written; these decoders
 * serve the tests and the portable attention kernel, the vectorised ones
 * read the bytes themselves (attnq.c).
 *
 * Scales are rounded to their stored precision (f16 for the block
 * formats) before the values are quantized against them, so a value's
 * error is bounded by the stored scale: half a step (|d| / 2 for q8_0 and
 * q4_0, d / 2 for q4_1 and scale / 2 for int8), up to a whole step for a
 * value that q4_0 clamps at +7 (its scale is set by the value of largest
 * magnitude, mapped to -8, as llama.cpp does), and for q4_1 the rounding
 * of its minimum to f16 more for a value below the stored minimum.
 */
#include <math.h>
#include <string.h>

#include "kvquant.h"

static uint32_t bits_of(float x)
{
	uint32_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

static float float_of(uint32_t u)
{
	float x;
	memcpy(&x, &u, sizeof x);
	return x;
}

uint16_t kv_f32_to_f16(float x)
{
	uint32_t u = bits_of(x), a = u & 0x7fffffff;
	uint16_t sign = (uint16_t)(u >> 16 & 0x8000);
	if (a > 0x7f800000) /* NaN stays NaN */
		return sign | 0x7e00;
	if (a >= 0x477ff000) /* 65520 and up round to infinity */
		return sign | 0x7c00;
	if (a < 0x38800000) /* below 2^-14: a multiple of 2^-24 */
		return sign | (uint16_t)rintf(float_of(a) * 0x1p24f);
	/* rebias the exponent (127 to 15), round 23 mantissa bits to 10 */
	uint32_t r = a - (112u << 23);
	r += 0xfff + (r >> 13 & 1);
	return sign | (uint16_t)(r >> 13);
}

uint8_t kv_f32_to_fp8(float x)
{
	uint8_t sign = signbit(x) ? 0x80 : 0;
	float a = fabsf(x);
	if (isnan(x))
		return 0x7f;
	if (a >= 448.0f) /* saturate, as serving engines' casts do */
		return sign | 0x7e;
	if (a < 0x1p-6f) /* subnormal: a multiple of 2^-9 (8 is 2^-6) */
		return sign | (uint8_t)rintf(a * 0x1p9f);
	int e = ilogbf(a); /* -6 .. 8 */
	/* 8 .. 16 eighths of 2^e; 16 carries into the next exponent */
	int q = (int)rintf(ldexpf(a, 3 - e));
	int code = ((e + 7) << 3) + (q - 8);
	return sign | (uint8_t)(code > 0x7e ? 0x7e : code);
}

float kv_fp8_to_f32(uint8_t b)
{
	int e = b >> 3 & 15, m = b & 7;
	float v = e ? ldexpf((float)(8 + m), e - 10) : ldexpf((float)m, -9);
	if ((b & 0x7f) == 0x7f)
		v = NAN;
	return b & 0x80 ? -v : v;
}

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

static float absmax(const float *x, uint32_t n)
{
	float a = 0;
	for (uint32_t i = 0; i < n; i++)
		a = fabsf(x[i]) > a ? fabsf(x[i]) : a;
	return a;
}

/* One block of 32 values, llama.cpp's layouts, the scale rounded to f16
 * first (see the top of the file). */
static void enc_q8_0(const float *x, uint8_t *b)
{
	uint16_t dh = kv_f32_to_f16(absmax(x, 32) / 127.0f);
	float d = kv_f16_to_f32(dh), id = d ? 1.0f / d : 0;
	put16(b, dh);
	for (int i = 0; i < 32; i++) {
		float q = roundf(x[i] * id);
		q = q > 127 ? 127 : q < -127 ? -127 : q;
		b[2 + i] = (uint8_t)(int8_t)q;
	}
}

static void enc_q4_0(const float *x, uint8_t *b)
{
	float amax = 0, max = 0;
	for (int i = 0; i < 32; i++)
		if (fabsf(x[i]) > amax) {
			amax = fabsf(x[i]);
			max = x[i];
		}
	uint16_t dh = kv_f32_to_f16(max / -8.0f);
	float d = kv_f16_to_f32(dh), id = d ? 1.0f / d : 0;
	put16(b, dh);
	for (int i = 0; i < 16; i++) {
		int lo = (int)(x[i] * id + 8.5f), hi = (int)(x[i + 16] * id + 8.5f);
		lo = lo < 0 ? 0 : lo > 15 ? 15 : lo;
		hi = hi < 0 ? 0 : hi > 15 ? 15 : hi;
		b[2 + i] = (uint8_t)(lo | hi << 4);
	}
}

static void enc_q4_1(const float *x, uint8_t *b)
{
	float lo = x[0], hi = x[0];
	for (int i = 1; i < 32; i++) {
		lo = x[i] < lo ? x[i] : lo;
		hi = x[i] > hi ? x[i] : hi;
	}
	uint16_t dh = kv_f32_to_f16((hi - lo) / 15.0f), mh = kv_f32_to_f16(lo);
	float d = kv_f16_to_f32(dh), m = kv_f16_to_f32(mh);
	float id = d ? 1.0f / d : 0;
	put16(b, dh);
	put16(b + 2, mh);
	for (int i = 0; i < 16; i++) {
		int a = (int)((x[i] - m) * id + 0.5f);
		int c = (int)((x[i + 16] - m) * id + 0.5f);
		a = a < 0 ? 0 : a > 15 ? 15 : a;
		c = c < 0 ? 0 : c > 15 ? 15 : c;
		b[4 + i] = (uint8_t)(a | c << 4);
	}
}

void kv_quant_encode(enum kv_dtype t, const float *x, uint32_t n, void *row)
{
	uint8_t *b = row;
	switch (t) {
	case KV_DTYPE_F32:
		memcpy(b, x, (size_t)n * sizeof *x);
		break;
	case KV_DTYPE_F16:
		for (uint32_t i = 0; i < n; i++)
			put16(b + 2 * i, kv_f32_to_f16(x[i]));
		break;
	case KV_DTYPE_BF16:
		for (uint32_t i = 0; i < n; i++)
			put16(b + 2 * i, kv_f32_to_bf16(x[i]));
		break;
	case KV_DTYPE_FP8:
		for (uint32_t i = 0; i < n; i++)
			b[i] = kv_f32_to_fp8(x[i]);
		break;
	case KV_DTYPE_INT8: {
		float s = absmax(x, n) / 127.0f, is = s ? 1.0f / s : 0;
		for (uint32_t i = 0; i < n; i++) {
			float q = rintf(x[i] * is);
			q = q > 127 ? 127 : q < -127 ? -127 : q;
			b[i] = (uint8_t)(int8_t)q;
		}
		memcpy(b + n, &s, sizeof s);
		break;
	}
	case KV_DTYPE_Q8_0:
		for (uint32_t i = 0; i < n; i += 32)
			enc_q8_0(x + i, b + i / 32 * 34);
		break;
	case KV_DTYPE_Q4_0:
		for (uint32_t i = 0; i < n; i += 32)
			enc_q4_0(x + i, b + i / 32 * 18);
		break;
	case KV_DTYPE_Q4_1:
		for (uint32_t i = 0; i < n; i += 32)
			enc_q4_1(x + i, b + i / 32 * 20);
		break;
	default:
		break;
	}
}

void kv_quant_decode(enum kv_dtype t, const void *row, uint32_t n, float *x)
{
	const uint8_t *b = row;
	switch (t) {
	case KV_DTYPE_F32:
		memcpy(x, b, (size_t)n * sizeof *x);
		break;
	case KV_DTYPE_F16:
		for (uint32_t i = 0; i < n; i++)
			x[i] = kv_f16_to_f32(get16(b + 2 * i));
		break;
	case KV_DTYPE_BF16:
		for (uint32_t i = 0; i < n; i++)
			x[i] = kv_bf16_to_f32(get16(b + 2 * i));
		break;
	case KV_DTYPE_FP8:
		for (uint32_t i = 0; i < n; i++)
			x[i] = kv_fp8_to_f32(b[i]);
		break;
	case KV_DTYPE_INT8: {
		float s;
		memcpy(&s, b + n, sizeof s);
		for (uint32_t i = 0; i < n; i++)
			x[i] = (float)(int8_t)b[i] * s;
		break;
	}
	case KV_DTYPE_Q8_0:
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *blk = b + i / 32 * 34;
			x[i] = (float)(int8_t)blk[2 + i % 32] *
			       kv_f16_to_f32(get16(blk));
		}
		break;
	case KV_DTYPE_Q4_0:
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *blk = b + i / 32 * 18;
			uint32_t j = i % 32;
			int q = j < 16 ? blk[2 + j] & 15 : blk[2 + j - 16] >> 4;
			x[i] = (float)(q - 8) * kv_f16_to_f32(get16(blk));
		}
		break;
	case KV_DTYPE_Q4_1:
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *blk = b + i / 32 * 20;
			uint32_t j = i % 32;
			int q = j < 16 ? blk[4 + j] & 15 : blk[4 + j - 16] >> 4;
			x[i] = (float)q * kv_f16_to_f32(get16(blk)) +
			       kv_f16_to_f32(get16(blk + 2));
		}
		break;
	default:
		break;
	}
}

float kvq_quant_q8(const float *q, int8_t *q8)
{
	float amax = 0;
	for (int i = 0; i < 32; i++)
		amax = fabsf(q[i]) > amax ? fabsf(q[i]) : amax;
	float dq = amax / 127, id = dq ? 1 / dq : 0;
	for (int i = 0; i < 32; i++)
		q8[i] = (int8_t)roundf(q[i] * id);
	return dq;
}
