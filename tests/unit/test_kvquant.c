/*
 * test_kvquant.c - the cache's storage formats: hand-checked encodings,
 * round-trip error bounds per format, llama.cpp's block layouts byte for
 * byte, every vectorised attention kernel against the portable one, the
 * engine's cache bytes equal to kvsize's for every stored format, and
 * the quality metrics on small hand-worked distributions.
 */
#include <stdlib.h>
#include <string.h>

#include "kv/engine.h"
#include "kv/layout.h"
#include "kv/quality.h"
#include "engine/kvquant.h"
#include "test.h"

static const enum kv_dtype stored[] = {
	KV_DTYPE_F32,  KV_DTYPE_F16,  KV_DTYPE_BF16, KV_DTYPE_FP8,
	KV_DTYPE_INT8, KV_DTYPE_Q8_0, KV_DTYPE_Q4_0, KV_DTYPE_Q4_1};
#define NSTORED 8

/* f16 by its definition: (-1)^s 2^(e - 15) 1.m, 2^-14 0.m for e = 0;
 * e = 31 infinity or NaN. */
static float f16_by_definition(uint16_t h)
{
	int e = h >> 10 & 0x1f, m = h & 0x3ff;
	double v = e == 0    ? ldexp(m, -24)
		   : e == 31 ? (m ? NAN : INFINITY)
			     : ldexp(1024 + m, e - 25);
	return (float)(h & 0x8000 ? -v : v);
}

/* Every one of the 65,536 f16 values widens to its exact float, the
 * sign of zero and NaN kept, and narrows back to itself. */
static void test_f16_all(void)
{
	int exact = 1, back = 1;
	for (uint32_t h = 0; h < 0x10000; h++) {
		float got = kv_f16_to_f32((uint16_t)h);
		float want = f16_by_definition((uint16_t)h);
		bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
		if (nan ? !isnan(got) || signbit(got) != signbit(want)
			: memcmp(&got, &want, sizeof got))
			exact = 0;
		if (!nan && kv_f32_to_f16(got) != h)
			back = 0;
	}
	CHECK(exact);
	CHECK(back);
}

static void test_scalars(void)
{
	CHECK_U64(kv_f32_to_f16(1.0f), 0x3c00);
	CHECK_U64(kv_f32_to_f16(-2.0f), 0xc000);
	CHECK_U64(kv_f32_to_f16(65504.0f), 0x7bff);
	CHECK_U64(kv_f32_to_f16(65520.0f), 0x7c00); /* rounds to infinity */
	CHECK_U64(kv_f32_to_f16(0x1p-24f), 0x0001); /* smallest subnormal */
	CHECK_U64(kv_f32_to_f16(0x1p-14f), 0x0400); /* smallest normal */
	CHECK_U64(kv_f32_to_f16(1.0f + 0x1p-11f), 0x3c00); /* tie: even */
	CHECK_U64(kv_f32_to_f16(1.0f + 0x1.8p-11f), 0x3c01);
	CHECK_NEAR(kv_f16_to_f32(0x3555), 0.33325195, 1e-8);
	CHECK_U64(kv_f32_to_bf16(1.0f), 0x3f80);
	CHECK_U64(kv_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80); /* tie: even */
	CHECK_U64(kv_f32_to_bf16(-3.0f), 0xc040);
	CHECK_NEAR(kv_bf16_to_f32(0x4049), 3.140625, 0);
	/* e4m3: bias 7, three mantissa bits, 448 the largest */
	CHECK_U64(kv_f32_to_fp8(1.0f), 0x38);
	CHECK_U64(kv_f32_to_fp8(-2.0f), 0xc0);
	CHECK_U64(kv_f32_to_fp8(448.0f), 0x7e);
	CHECK_U64(kv_f32_to_fp8(1000.0f), 0x7e); /* saturates */
	CHECK_U64(kv_f32_to_fp8(0x1p-9f), 0x01);  /* smallest subnormal */
	CHECK_U64(kv_f32_to_fp8(0x1p-6f), 0x08);  /* smallest normal */
	CHECK_U64(kv_f32_to_fp8(1.0625f), 0x38);  /* tie 1, 1.125: even */
	CHECK_U64(kv_f32_to_fp8(0.3f), 0x2a);     /* 0.3125 = 1.25 x 2^-2 */
	CHECK_NEAR(kv_fp8_to_f32(0x2a), 0.3125, 0);
	CHECK_NEAR(kv_fp8_to_f32(0x7e), 448, 0);
	CHECK_NEAR(kv_fp8_to_f32(0x83), -3 * 0x1p-9, 0);
	CHECK(isnan(kv_fp8_to_f32(0x7f)));
	/* every fp8 code but NaN decodes and encodes back to itself */
	int same = 1;
	for (int b = 0; b < 256; b++)
		if ((b & 0x7f) != 0x7f && b != 0x80 &&
		    kv_f32_to_fp8(kv_fp8_to_f32((uint8_t)b)) != b)
			same = 0;
	CHECK(same);
	test_f16_all();
}

/* llama.cpp's q4_0 and q8_0 blocks for a hand-made row. */
static void test_layouts(void)
{
	float x[32];
	uint8_t b[34];
	/* values -8..7 twice: the largest magnitude -8 gives d = 1, so
	 * each nibble is the value + 8; low nibbles 0..15, high 16..31 */
	for (int i = 0; i < 32; i++)
		x[i] = (float)(i % 16 - 8);
	kv_quant_encode(KV_DTYPE_Q4_0, x, 32, b);
	CHECK_U64(b[0] | b[1] << 8, 0x3c00);
	CHECK_U64(b[2], 0x00);
	CHECK_U64(b[3], 0x11);
	CHECK_U64(b[17], 0xff);
	x[20] = 0.5f; /* element 20: high nibble of byte 4, 8.5 -> 9 */
	kv_quant_encode(KV_DTYPE_Q4_0, x, 32, b);
	CHECK_U64(b[2 + 4], 0x94);
	/* q4_1: min -8, max 7: d = 1, m = -8, q = x + 8 */
	uint8_t c[20];
	for (int i = 0; i < 32; i++)
		x[i] = (float)(i % 16 - 8);
	kv_quant_encode(KV_DTYPE_Q4_1, x, 32, c);
	CHECK_U64(c[0] | c[1] << 8, 0x3c00);
	CHECK_U64(c[2] | c[3] << 8, 0xc800); /* -8 */
	CHECK_U64(c[4 + 3], 0x33);
	/* q8_0: largest 127 gives d = 1, the values themselves */
	for (int i = 0; i < 32; i++)
		x[i] = (float)(i * 8 - 127);
	x[31] = 127;
	kv_quant_encode(KV_DTYPE_Q8_0, x, 32, b);
	CHECK_U64(b[0] | b[1] << 8, 0x3c00);
	CHECK_U64(b[2], (uint8_t)-127);
	CHECK_U64(b[3], (uint8_t)-119);
	CHECK_U64(b[33], 127);
	/* int8: hd bytes then the f32 scale max / 127 */
	uint8_t r[68];
	float y[64], s;
	for (int i = 0; i < 64; i++)
		y[i] = i == 5 ? -2.54f : 0.01f * (float)i;
	kv_quant_encode(KV_DTYPE_INT8, y, 64, r);
	memcpy(&s, r + 64, 4);
	CHECK_NEAR(s, 0.02, 1e-8);
	CHECK_U64(r[5], (uint8_t)-127);
	CHECK_U64(r[10], 5); /* 0.1 / 0.02 */
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* Round trips of random rows: each value within the bound its format
 * promises (see kvquant.c). */
static void test_round_trip(void)
{
	enum { N = 128 };
	float x[N], y[N];
	uint8_t row[4 * N + 4];
	uint64_t key = 12345;
	for (int rep = 0; rep < 200; rep++) {
		float amp = rep % 3 == 0 ? 0.01f : rep % 3 == 1 ? 1 : 40;
		for (int i = 0; i < N; i++)
			x[i] = amp * (float)(kv_rand_bits(key, rep * N + i) >>
					     40) * 0x1p-24f * 2 -
			       amp;
		for (int f = 0; f < NSTORED; f++) {
			enum kv_dtype t = stored[f];
			double worst = 0; /* err / bound, at most 1 */
			kv_quant_encode(t, x, N, row);
			kv_quant_decode(t, row, N, y);
			for (int i = 0; i < N; i++) {
				double err = fabs((double)x[i] - y[i]), bound;
				double ax = fabs(x[i]);
				const uint8_t *blk;
				float s;
				switch (t) {
				case KV_DTYPE_F32: bound = 0; break;
				case KV_DTYPE_F16: /* half an ulp */
					bound = ax < 0x1p-14 ? 0x1p-25
							     : ax * 0x1p-11;
					break;
				case KV_DTYPE_BF16: bound = ax * 0x1p-8; break;
				case KV_DTYPE_FP8:
					bound = ax < 0x1p-6 ? 0x1p-10
							    : ax * 0x1p-4;
					break;
				case KV_DTYPE_INT8:
					memcpy(&s, row + N, 4);
					bound = s / 2 * (1 + 1e-6);
					break;
				case KV_DTYPE_Q8_0:
					blk = row + i / 32 * 34;
					bound = fabs(kv_f16_to_f32(get16(blk))) /
						2 * (1 + 1e-6);
					break;
				case KV_DTYPE_Q4_0: {
					blk = row + i / 32 * 18;
					double d = fabs(kv_f16_to_f32(get16(blk)));
					/* where +7 clamps, up to a step
					 * (more by the scale's rounding) */
					bound = d / 2 * (1 + 1e-6);
					if (ax > 7.5 * d)
						bound = (ax - 7 * d) *
							(1 + 1e-6);
					break;
				}
				default: /* q4_1 */
					blk = row + i / 32 * 20;
					bound = kv_f16_to_f32(get16(blk)) / 2 *
							(1 + 1e-5) +
						1e-7 * amp;
					break;
				}
				if (bound == 0)
					worst = err > 0 ? INFINITY : worst;
				else if (err / bound > worst)
					worst = err / bound;
			}
			if (!(worst <= 1))
				fprintf(stderr, "%s: error %.3g of its bound\n",
					kv_dtype_name(t), worst);
			CHECK(worst <= 1);
		}
	}
}

/* The AVX-512 kernels of every pair of formats against the portable
 * ones, at head sizes of 32 (one block), 64 (one pair of blocks: q4_0's
 * integer scores), 96 (an odd block of 32 at the end), 128 (two pairs),
 * 160, 256 and 512 (q4_0 K's groups of 16 blocks span 16 / nb rows, or
 * several groups one row's), over 77 positions (a group of eight and a
 * block of 64 end part-way) and over 5 (less than a group), for ten query
 * rows of two tokens (more than a group of eight rows). */
static void kernels(uint32_t hd, int N)
{
	enum { MAXN = 77, G = 10, PER = 5, MAXHD = 512 };
	static float q[G * MAXHD], x[MAXHD], s[G * MAXN], o[2][G * MAXHD],
		m[2][G], l[2][G];
	static uint8_t k[MAXN * (4 * MAXHD + 4)], v[MAXN * (4 * MAXHD + 4)];
	for (uint32_t i = 0; i < G * hd; i++)
		q[i] = kv_rand_sym(1, i);
	for (int fk = 0; fk < NSTORED; fk++)
		for (int fv = 0; fv < NSTORED; fv += fk == 0 ? 1 : NSTORED - 1) {
			struct kv_rowfmt f = {stored[fk], stored[fv], 0, 0};
			uint64_t kr, vr;
			kv_dtype_row_bytes(f.k, hd, &kr);
			kv_dtype_row_bytes(f.v, hd, &vr);
			f.krow = (uint32_t)kr;
			f.vrow = (uint32_t)vr;
			for (int p = 0; p < N; p++) {
				for (uint32_t d = 0; d < hd; d++)
					x[d] = kv_rand_sym(2, p * hd + d);
				kv_quant_encode(f.k, x, hd, k + p * kr);
				for (uint32_t d = 0; d < hd; d++)
					x[d] = kv_rand_sym(3, p * hd + d);
				kv_quant_encode(f.v, x, hd, v + p * vr);
			}
			/* the sums' order apart, the kernels compute the same
			 * (6e-7 at most here); fp8's float kernel with the
			 * query in full is 5e-6 off, the bf16 one without the
			 * weights' low parts 1.8e-6. q4_0 V: 3.7e-6. */
			double worst = 0,
			       tol = f.v == KV_DTYPE_Q4_0 ? 1e-5 : 1.2e-6;
			for (int isa = 0; isa < 2; isa++)
				kv_attnq_part(q, G, PER, k, v, &f, N, hd, 0.125f,
					      s, o[isa], m[isa], l[isa],
					      isa ? KV_ISA_AVX512 : KV_ISA_C);
			for (int i = 0; i < G; i++) {
				worst = fmax(worst, fabs(m[0][i] - m[1][i]));
				worst = fmax(worst,
					     fabs(l[0][i] - l[1][i]) / l[0][i]);
				for (uint32_t d = 0; d < hd; d++)
					worst = fmax(worst,
						     fabs(o[0][i * hd + d] -
							  o[1][i * hd + d]) /
							     l[0][i]);
			}
			if (!(worst < tol))
				fprintf(stderr, "kernel %s/%s at %u, %d: %.3g\n",
					kv_dtype_name(f.k), kv_dtype_name(f.v),
					hd, N, worst);
			CHECK(worst < tol);
		}
}

static void test_kernels(void)
{
	static const uint32_t hds[] = {32, 64, 96, 128, 160, 256, 512};
	for (int basic = 0; basic < 2; basic++) {
		kv_attnq_set_basic(basic);
		for (int n = 5; n <= 77; n += 72)
			for (int i = 0; i < 7; i++)
				kernels(hds[i], n);
	}
	kv_attnq_set_basic(false);
}

/* A token's q4_0 K and V over more than four chunks of 1,024 positions,
 * which the AVX-512 kernel pipelines (chunk c's V summed while chunk
 * c + 1's scores are computed, each chunk's softmax merged into the
 * running one), against the portable kernel in one pass: the same m, l
 * and o within 1e-5 of l, for one query row and for a group of eight. */
static void q4_0_long(uint32_t hd, uint32_t g, uint32_t n)
{
	enum { MAXN = 4200, MAXG = 8, MAXHD = 128 };
	static float q[MAXG * MAXHD], x[MAXHD], s[MAXG * MAXN],
		o[2][MAXG * MAXHD], m[2][MAXG], l[2][MAXG];
	static uint8_t k[MAXN * 4 * 18], v[MAXN * 4 * 18];
	uint32_t row = hd / 32 * 18;
	for (uint32_t i = 0; i < g * hd; i++)
		q[i] = 4 * kv_rand_sym(11, i);
	for (uint32_t p = 0; p < n; p++) {
		for (uint32_t d = 0; d < hd; d++)
			x[d] = kv_rand_sym(12, p * hd + d);
		kv_quant_encode(KV_DTYPE_Q4_0, x, hd, k + p * row);
		for (uint32_t d = 0; d < hd; d++)
			x[d] = kv_rand_sym(13, p * hd + d);
		kv_quant_encode(KV_DTYPE_Q4_0, x, hd, v + p * row);
	}
	struct kv_rowfmt f = {KV_DTYPE_Q4_0, KV_DTYPE_Q4_0, row, row};
	for (int isa = 0; isa < 2; isa++)
		kv_attnq_part(q, g, g, k, v, &f, n, hd, 0.125f, s, o[isa],
			      m[isa], l[isa], isa ? KV_ISA_AVX512 : KV_ISA_C);
	double worst = 0;
	for (uint32_t i = 0; i < g; i++) {
		worst = fmax(worst, fabs(m[0][i] - m[1][i]));
		worst = fmax(worst, fabs(l[0][i] - l[1][i]) / l[0][i]);
		for (uint32_t d = 0; d < hd; d++)
			worst = fmax(worst, fabs(o[0][i * hd + d] -
						 o[1][i * hd + d]) /
						    l[0][i]);
	}
	if (!(worst < 1e-5))
		fprintf(stderr, "q4_0 over %u at %u, %u rows: %.3g\n", n, hd,
			g, worst);
	CHECK(worst < 1e-5);
}

static void test_q4_0_long(void)
{
	q4_0_long(64, 1, 4173);
	q4_0_long(64, 8, 4096);
	q4_0_long(96, 3, 4200);
	q4_0_long(128, 2, 4173);
}

/* The portable q4_0 scores against a float dot product: the query's
 * 8-bit blocks cost at most half a step of each (|q| / 254) times the
 * K values. */
static void test_q4_0_scores(void)
{
	enum { HD = 64 };
	float q[HD], x[HD], s, o[HD], m, l;
	uint8_t k[36];
	double dot = 0, bound = 0;
	float qmax = 0;
	for (int d = 0; d < HD; d++) {
		q[d] = kv_rand_sym(4, d);
		x[d] = kv_rand_sym(5, d);
		qmax = fabsf(q[d]) > qmax ? fabsf(q[d]) : qmax;
	}
	kv_quant_encode(KV_DTYPE_Q4_0, x, HD, k);
	kv_quant_decode(KV_DTYPE_Q4_0, k, HD, x);
	for (int d = 0; d < HD; d++) {
		dot += (double)q[d] * x[d];
		bound += qmax / 254.0 * fabs(x[d]);
	}
	struct kv_rowfmt f = {KV_DTYPE_Q4_0, KV_DTYPE_F32, 36, 4 * HD};
	kv_attnq_part(q, 1, 1, k, (const uint8_t *)x, &f, 1, HD, 1.0f, &s, o,
		      &m, &l, KV_ISA_C);
	CHECK(fabs(m - dot) <= bound);
	CHECK(fabs(m - dot) > 0); /* the query was rounded */
}

/* The weighted sum of a q4_0 V, in 16-bit weights per run of 128
 * positions, against the float sum of the decoded rows (the weights s
 * the kernel leaves): within 4 S per position, S = the run's largest
 * |s d| / 32767 for the block (see attnq.c), plus float rounding. Heads
 * of one to four blocks, runs that end part-way and pairs cut at the end,
 * two query rows, both kernels. */
static void q4_0_values(uint32_t hd, uint32_t n, enum kv_isa isa)
{
	enum { G = 2, MAXN = 255, MAXHD = 128, RUN = 128 };
	static float q[G * MAXHD], kf[MAXN * MAXHD], x[MAXN * MAXHD],
		s[G * MAXN], o[G * MAXHD], m[G], l[G];
	static uint8_t v[MAXN * 4 * 18];
	uint32_t vrow = hd / 32 * 18;
	for (uint32_t i = 0; i < G * hd; i++)
		q[i] = 2 * kv_rand_sym(6, i);
	for (uint32_t p = 0; p < n; p++) {
		for (uint32_t d = 0; d < hd; d++) {
			kf[p * hd + d] = kv_rand_sym(7, p * hd + d);
			/* blocks of quite different scales */
			x[p * hd + d] = kv_rand_sym(8, p * hd + d) *
					(float)(1 + d / 32 + p % 7);
		}
		kv_quant_encode(KV_DTYPE_Q4_0, x + p * hd, hd, v + p * vrow);
		kv_quant_decode(KV_DTYPE_Q4_0, v + p * vrow, hd, x + p * hd);
	}
	struct kv_rowfmt f = {KV_DTYPE_F32, KV_DTYPE_Q4_0, 4 * hd, vrow};
	kv_attnq_part(q, G, G, (const uint8_t *)kf, v, &f, n, hd, 0.5f, s, o,
		      m, l, isa);
	double worst = 0; /* error / bound */
	for (uint32_t i = 0; i < G; i++)
		for (uint32_t d = 0; d < hd; d++) {
			double ref = 0, bound = 0, mag = 0;
			for (uint32_t p0 = 0; p0 < n; p0 += RUN) {
				uint32_t p1 = p0 + RUN < n ? p0 + RUN : n;
				double wmax = 0;
				for (uint32_t p = p0; p < p1; p++) {
					double w = s[i * n + p];
					float dd = kv_f16_to_f32(get16(
						v + p * vrow + d / 32 * 18));
					ref += w * x[p * hd + d];
					mag += fabs(w * x[p * hd + d]);
					wmax = fmax(wmax, fabs(w * dd));
				}
				bound += (p1 - p0) * 4 * wmax / 32767;
			}
			bound += 1e-6 * mag + 1e-30;
			worst = fmax(worst, fabs(o[i * hd + d] - ref) / bound);
		}
	if (!(worst <= 1))
		fprintf(stderr, "q4_0 V at %u, %u (%s): %.3g of the bound\n",
			hd, n, isa == KV_ISA_C ? "C" : "AVX-512", worst);
	CHECK(worst <= 1);
}

static void test_q4_0_values(enum kv_isa isa)
{
	static const uint32_t ns[] = {1, 2, 5, 64, 77, 130, 200, 255};
	for (uint32_t hd = 32; hd <= 128; hd += 32)
		for (int j = 0; j < 8; j++)
			q4_0_values(hd, ns[j], isa);
}

/* x to 16 bits as fp8's kernels take it: its bf16 plus the bf16 of the
 * rest */
static float bf16x2(float x)
{
	float h = kv_bf16_to_f32(kv_f32_to_bf16(x));
	return h + kv_bf16_to_f32(kv_f32_to_bf16(x - h));
}

/* An fp8 K takes the query to 16 bits: 1 + 3 2^-10 + 2^-20 is 1 (its
 * bf16) plus 3 2^-10 (the rest's; the 2^-20 is under that part's last
 * bit, 2^-16), so K rows 1 and 0.5 score exactly 1 + 3 2^-10 and half
 * that. An fp8 V takes the weights alike, and leaves them so in s:
 * rows of ones sum them. Both kernels. */
static void test_fp8_16bits(enum kv_isa isa)
{
	enum { HD = 32 };
	float q[HD] = {1 + 0x3p-10f + 0x1p-20f}, x[HD] = {1}, s[2], o[HD], m,
	      l;
	uint8_t k[2 * HD], v[2 * HD];
	kv_quant_encode(KV_DTYPE_FP8, x, HD, k);
	x[0] = 0.5f;
	kv_quant_encode(KV_DTYPE_FP8, x, HD, k + HD);
	for (int d = 0; d < HD; d++)
		x[d] = 1;
	kv_quant_encode(KV_DTYPE_FP8, x, HD, v);
	kv_quant_encode(KV_DTYPE_FP8, x, HD, v + HD);
	struct kv_rowfmt f = {KV_DTYPE_FP8, KV_DTYPE_FP8, HD, HD};
	{
		kv_attnq_part(q, 1, 1, k, v, &f, 2, HD, 1.0f, s, o, &m, &l,
			      isa);
		CHECK(m == 1 + 0x3p-10f);
		/* the weights used: 1 and e^-(m / 2), whose float has bits
		 * past 16 (4.2e-7 of it) */
		float w1 = expf(-0.5f * m), sum = 1 + s[1];
		CHECK(bf16x2(w1) != w1);
		CHECK(s[0] == 1);
		CHECK(s[1] == bf16x2(s[1]));
		CHECK_NEAR(s[1], w1, 0x1p-16 * w1);
		for (int d = 0; d < HD; d++)
			CHECK_NEAR(o[d], sum, 0x1p-23 * sum);
	}
}

static const char gpt2_json[] =
	"{\"model_type\":\"gpt2\",\"n_layer\":2,\"n_embd\":128,"
	"\"n_head\":2,\"n_inner\":256,\"vocab_size\":97,"
	"\"n_positions\":64}";

/* The cache's allocation is kvsize's bytes, per token and in all, for
 * every stored format of K and V; the bytes a step reads count them. */
static void test_bytes(void)
{
	struct kv_model *m = test_parse(gpt2_json);
	char err[KV_ERRLEN];
	for (int fk = 0; fk < NSTORED; fk++)
		for (int fv = 0; fv < NSTORED; fv++) {
			/* memcheck's quick run: each format as K and as V,
			 * alone and beside the next */
			if (test_quick() && fv != fk && fv != (fk + 1) % NSTORED)
				continue;
			struct kv_engine_opts o = kv_engine_opts_default();
			struct kv_engine *e;
			o.k_dtype = stored[fk];
			o.v_dtype = stored[fv];
			o.users = 2;
			o.max_ctx = 40;
			if (kv_engine_new(m, &o, &e, err)) {
				fprintf(stderr, "engine: %s\n", err);
				test_failures++;
				continue;
			}
			struct kv_opts ko = kv_opts_default(
				kv_engine_get_model(e));
			uint64_t per, all;
			ko.k_dtype = o.k_dtype;
			ko.v_dtype = o.v_dtype;
			CHECK(kv_model_token_bytes(kv_engine_get_model(e), &ko,
						   &per, err) == 0);
			CHECK(kv_model_bytes(kv_engine_get_model(e), &ko, 40, 2,
					     &all, err) == 0);
			CHECK_U64(kv_engine_cache_token_bytes(e), per);
			CHECK_U64(kv_engine_cache_bytes(e), all);
			CHECK_U64(kv_engine_cache_read_bytes(e, 9), 2 * 10 * per);
			kv_engine_free(e);
		}
	/* by hand: 2 layers x 2 heads x (K + V) of 64 values */
	struct kv_engine_opts o = kv_engine_opts_default();
	struct kv_engine *e;
	o.k_dtype = KV_DTYPE_Q4_0;
	o.v_dtype = KV_DTYPE_INT8;
	CHECK(kv_engine_new(m, &o, &e, err) == 0);
	CHECK_U64(kv_engine_cache_token_bytes(e), 2 * 2 * (36 + 68));
	kv_engine_free(e);
	kv_model_free(m);
}

/* Formats the engine sizes but does not store, and a head no block
 * tiles, are refused with a message. */
static void test_refusals(void)
{
	static const char odd_json[] =
		"{\"model_type\":\"gpt2\",\"n_layer\":1,\"n_embd\":96,"
		"\"n_head\":2,\"vocab_size\":50,\"n_positions\":16}";
	struct kv_model *m = test_parse(gpt2_json), *odd = test_parse(odd_json);
	struct kv_engine_opts o = kv_engine_opts_default();
	struct kv_engine_size sz;
	char err[KV_ERRLEN];
	o.v_dtype = KV_DTYPE_Q5_0;
	CHECK(kv_engine_estimate(m, &o, &sz, err) == KV_EUNSUP);
	CHECK_HAS(err, "q5_0: the engine sizes this cache format but does "
		       "not store it; it stores f32, f16, bf16, fp8, int8, "
		       "q8_0, q4_0, q4_1");
	o.v_dtype = KV_DTYPE_INT4;
	CHECK(kv_engine_estimate(m, &o, &sz, err) == KV_EUNSUP);
	o.v_dtype = KV_DTYPE_F32;
	o.k_dtype = KV_DTYPE_Q4_1;
	CHECK(kv_engine_estimate(odd, &o, &sz, err) == KV_EINVAL);
	CHECK_HAS(err, "q4_1 packs 32 values per block; a head of 48 values "
		       "is not a multiple of 32");
	o.k_dtype = KV_DTYPE_INT8; /* element formats take any head */
	CHECK(kv_engine_estimate(odd, &o, &sz, err) == 0);
	kv_model_free(m);
	kv_model_free(odd);
}

/*
 * The engine over compact caches: a decode step split over positions
 * (one KV head of 64 values, two threads, past 1,024 positions) gives
 * the logits of the whole text recomputed, whose K and V are kept in the
 * same format; and the vectorised kernels give the portable ones'.
 */
static void test_engine_formats(void)
{
	static const char one_json[] =
		"{\"model_type\":\"gpt2\",\"n_layer\":1,\"n_embd\":128,"
		"\"n_head\":2,\"n_inner\":64,\"vocab_size\":50,"
		"\"n_positions\":2048}";
	static const enum kv_dtype fmts[] = {KV_DTYPE_F16, KV_DTYPE_BF16,
					     KV_DTYPE_INT8, KV_DTYPE_Q4_0};
	struct kv_model *m = test_parse(one_json);
	char err[KV_ERRLEN];
	enum { P = 1100 };
	static uint32_t tok[P + 1];
	static float lc[50], ln[50], ls[50];
	for (int i = 0; i <= P; i++)
		tok[i] = kv_rand_token(3, 0, i, 50);
	for (int f = 0; f < 4; f++) {
		if (test_quick() && f < 2) /* memcheck: the integer ones */
			continue;
		struct kv_engine_opts o = kv_engine_opts_default();
		struct kv_engine *e;
		o.kv_heads = 1;
		o.threads = 2;
		o.max_ctx = P + 1;
		o.k_dtype = o.v_dtype = fmts[f];
		if (kv_engine_new(m, &o, &e, err)) {
			fprintf(stderr, "engine: %s\n", err);
			test_failures++;
			continue;
		}
		/* the prompt, then one step at position P (split in four) */
		CHECK(kv_engine_forward(e, tok, P, 0, true, lc) == 0);
		CHECK(kv_engine_forward(e, tok + P, 1, P, true, lc) == 0);
		CHECK(kv_engine_forward(e, tok, P + 1, 0, false, ln) == 0);
		double d = kv_max_abs_diff(lc, ln, 50);
		if (!(d < 1e-3))
			fprintf(stderr, "%s: split step differs by %.3g\n",
				kv_dtype_name(fmts[f]), d);
		CHECK(d < 1e-3);
		/* the portable kernels, the same step again */
		kv_engine_set_simd(e, false);
		CHECK(kv_engine_forward(e, tok + P, 1, P, true, ls) == 0);
		CHECK(kv_max_abs_diff(lc, ls, 50) < 1e-4);
		kv_engine_free(e);
	}
	kv_model_free(m);
}

/* Hand-worked metrics. */
static void test_metrics(void)
{
	/* p = softmax(0, ln 3) = (1/4, 3/4), q = (1/2, 1/2):
	 * KL = 1/4 ln(1/2) + 3/4 ln(3/2) = 0.130812035 */
	float a[2] = {0, logf(3)}, b[2] = {5, 5};
	CHECK_NEAR(kv_kl_div(a, b, 2), 0.130812035, 1e-7);
	CHECK_NEAR(kv_kl_div(a, a, 2), 0, 1e-12);
	/* shifting every logit changes no distribution */
	float c[3] = {1, 2, 3}, d[3] = {11, 12, 13};
	CHECK_NEAR(kv_kl_div(c, d, 3), 0, 1e-9);
	CHECK_U64(kv_argmax(c, 3), 2);
	float t[3] = {2, 2, 1};
	CHECK_U64(kv_argmax(t, 3), 0); /* lowest index on ties */
	struct kv_quality q = {0};
	kv_quality_add(&q, c, d, 3);   /* disagree? no: both argmax 2 */
	kv_quality_add(&q, c, t, 3);   /* argmax 2 vs 0 */
	CHECK_U64(q.steps, 2);
	CHECK_U64(q.agree, 1);
	CHECK_NEAR(kv_quality_top1(&q), 0.5, 0);
	CHECK_NEAR(q.max_abs, 10, 0);
	/* |diffs|: 10, 10, 10 then 1, 0, 2: 33 over 6 logits */
	CHECK_NEAR(kv_quality_mean_abs(&q), 5.5, 1e-12);
	/* KL(softmax(1,2,3) || softmax(2,2,1)) by hand: p = (0.09003057,
	 * 0.24472847, 0.66524096), log p = (-2.40760596, -1.40760596,
	 * -0.40760596), log q = 2 - ln(2 e^2 + e) = (-0.86199482,
	 * -0.86199482, -1.86199482): sum p (log p - log q) = 0.69484013,
	 * and the first pair's 0
	 */
	CHECK_NEAR(kv_quality_mean_kl(&q), 0.69484013 / 2, 1e-7);
}

/* The AVX-512 kernels against the portable ones (test_skip where the CPU
 * lacks them); the portable kernels' own checks run in the plain test. */
static int simd(const char *set)
{
	if (strcmp(set, "avx512")) {
		fprintf(stderr, "test_kvquant: unknown instruction set '%s'\n",
			set);
		return 2;
	}
	if (!kv_attnq_has_simd(32))
		return test_skip("test_kvquant", set);
	test_kernels();
	test_fp8_16bits(KV_ISA_AVX512);
	test_q4_0_values(KV_ISA_AVX512);
	test_q4_0_long();
	printf("test_kvquant avx512: compared with the portable kernels: "
	       "attention over every pair of stored K and V formats (head "
	       "sizes 32 to 512, plain and basic), fp8's 16-bit query and "
	       "weights, q4_0 V's bounds, q4_0 over 4,200 positions\n");
	return test_done("test_kvquant");
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return simd(argv[1]);
	test_scalars();
	test_layouts();
	test_round_trip();
	test_q4_0_scores();
	test_fp8_16bits(KV_ISA_C);
	test_q4_0_values(KV_ISA_C);
	test_bytes();
	test_refusals();
	test_engine_formats();
	test_metrics();
	return test_done("test_kvquant");
}
