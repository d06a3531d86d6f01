/* test_dtype.c - bytes of every storage format, blocks and scales
 * included, against llama.cpp's block sizes and the reference figures. */
#include "kv/dtype.h"
#include "test.h"

static uint64_t row(enum kv_dtype t, uint64_t n)
{
	uint64_t b = 0;
	CHECK(kv_dtype_row_bytes(t, n, &b) == 0);
	return b;
}

int main(void)
{
	/* a 128-value head of one token */
	CHECK_U64(row(KV_DTYPE_F32, 128), 512);
	CHECK_U64(row(KV_DTYPE_F16, 128), 256);
	CHECK_U64(row(KV_DTYPE_BF16, 128), 256);
	CHECK_U64(row(KV_DTYPE_FP8, 128), 128);
	CHECK_U64(row(KV_DTYPE_FP8_E5M2, 128), 128);
	CHECK_U64(row(KV_DTYPE_INT8, 128), 132);  /* + f32 scale */
	CHECK_U64(row(KV_DTYPE_Q8_0, 128), 136);  /* 4 blocks x 34 */
	CHECK_U64(row(KV_DTYPE_Q4_0, 128), 72);   /* 4 x 18 */
	CHECK_U64(row(KV_DTYPE_Q4_1, 128), 80);   /* 4 x 20 */
	CHECK_U64(row(KV_DTYPE_Q5_0, 128), 88);   /* 4 x 22 */
	CHECK_U64(row(KV_DTYPE_Q5_1, 128), 96);   /* 4 x 24 */
	CHECK_U64(row(KV_DTYPE_IQ4_NL, 128), 72); /* 4 x 18 */
	CHECK_U64(row(KV_DTYPE_INT8, 0), 0);      /* no head, no scale */

	uint64_t b;
	CHECK(kv_dtype_row_bytes(KV_DTYPE_Q4_0, 80, &b) == KV_EINVAL);
	CHECK(kv_dtype_row_bytes(KV_DTYPE_F32, 80, &b) == 0 && b == 320);
	CHECK(kv_dtype_row_bytes(KV_DTYPE_F32, UINT64_MAX / 2, &b) ==
	      KV_ERANGE);
	CHECK(kv_dtype_row_bytes(KV_DTYPE_COUNT, 1, &b) == KV_EINVAL);

	/* K and V apart, one int for the tools' lists and one cell */
	enum kv_dtype k, v;
	char cell[40];
	CHECK(kv_dtype_pack(KV_DTYPE_FP8, KV_DTYPE_FP8) == KV_DTYPE_FP8);
	int kv = kv_dtype_pack(KV_DTYPE_Q8_0, KV_DTYPE_Q4_0);
	CHECK(kv >= KV_DTYPE_COUNT);
	kv_dtype_unpack(kv, &k, &v);
	CHECK(k == KV_DTYPE_Q8_0 && v == KV_DTYPE_Q4_0);
	kv_dtype_unpack(KV_DTYPE_BF16, &k, &v);
	CHECK(k == KV_DTYPE_BF16 && v == KV_DTYPE_BF16);
	kv_dtype_unpack(kv_dtype_pack(KV_DTYPE_F32, KV_DTYPE_IQ4_NL), &k, &v);
	CHECK(k == KV_DTYPE_F32 && v == KV_DTYPE_IQ4_NL);
	CHECK_STR(kv_dtype_kv_name(KV_DTYPE_Q8_0, KV_DTYPE_Q4_0, cell,
				   sizeof cell), "q8_0/q4_0");
	CHECK_STR(kv_dtype_kv_name(KV_DTYPE_F16, KV_DTYPE_F16, cell,
				   sizeof cell), "f16");
	CHECK(kv_dtype_kv_parse("q8_0/q4_0", &k, &v) == 0 &&
	      k == KV_DTYPE_Q8_0 && v == KV_DTYPE_Q4_0);
	CHECK(kv_dtype_kv_parse("fp8", &k, &v) == 0 && k == KV_DTYPE_FP8 &&
	      v == KV_DTYPE_FP8);
	CHECK(kv_dtype_kv_parse("fp8/fp8", &k, &v) == KV_EINVAL);
	CHECK(kv_dtype_kv_parse("q8_0/", &k, &v) == KV_EINVAL);
	CHECK(kv_dtype_kv_parse("/q4_0", &k, &v) == KV_EINVAL);
	CHECK(kv_dtype_kv_parse("q8_0/q4_0/f16", &k, &v) == KV_EINVAL);

	enum kv_dtype t;
	CHECK(kv_dtype_parse("bf16", &t) == 0 && t == KV_DTYPE_BF16);
	CHECK(kv_dtype_parse("BFloat16", &t) == 0 && t == KV_DTYPE_BF16);
	CHECK(kv_dtype_parse("fp8", &t) == 0 && t == KV_DTYPE_FP8);
	CHECK(kv_dtype_parse("fp8_e4m3", &t) == 0 && t == KV_DTYPE_FP8);
	CHECK(kv_dtype_parse("fp8_e5m2", &t) == 0 && t == KV_DTYPE_FP8_E5M2);
	CHECK(kv_dtype_parse("Q4_0", &t) == 0 && t == KV_DTYPE_Q4_0);
	CHECK(kv_dtype_parse("fp16", &t) == 0 && t == KV_DTYPE_F16);
	CHECK(kv_dtype_parse("q3_k", &t) == KV_EINVAL);
	CHECK(kv_dtype_from_torch("bfloat16", &t) == 0 && t == KV_DTYPE_BF16);
	CHECK(kv_dtype_from_torch("torch.float16", &t) == 0 &&
	      t == KV_DTYPE_F16);
	CHECK(kv_dtype_from_torch("float32", &t) == 0 && t == KV_DTYPE_F32);
	CHECK(kv_dtype_from_torch("bf16", &t) == KV_EINVAL);
	CHECK_STR(kv_dtype_name(KV_DTYPE_IQ4_NL), "iq4_nl");
	CHECK_STR(kv_dtype_name(KV_DTYPE_COUNT), "?");

	char list[256];
	CHECK_STR(kv_dtype_list(list, sizeof list, 1),
		  "f32, f16, bf16, fp8, fp8_e5m2, int8, q8_0, q4_0, q4_1, "
		  "q5_0, q5_1, iq4_nl");
	CHECK_HAS(kv_dtype_list(list, sizeof list, 0), "int4");
	return test_done("test_dtype");
}
