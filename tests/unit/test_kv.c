/*
 * test_kv.c - what base/kv.c gives every module: checked products and
 * sums, an exact floor of a count times a fraction, an enum's names.
 */
#include "kv/kv.h"
#include "test.h"

int main(void)
{
	uint64_t v;
	CHECK(kv_mul(1ULL << 32, 1ULL << 31, &v) == 0 && v == 1ULL << 63);
	CHECK(kv_mul(1ULL << 32, 1ULL << 32, &v) == KV_ERANGE);
	CHECK(kv_add(UINT64_MAX - 1, 1, &v) == 0 && v == UINT64_MAX);
	CHECK(kv_add(UINT64_MAX, 1, &v) == KV_ERANGE);
	/* 0.9 is 0.900000000000000022...: 10 x it is 9.0000000000000002 */
	CHECK_U64(kv_floor_frac(10, 0.9), 9);
	/* 0.1 is 0.1000000000000000055...: 10^17 x it is 10^16 + 0.55 */
	CHECK_U64(kv_floor_frac(100000000000000000ULL, 0.1),
		  10000000000000000ULL);
	/* 0.3 is 0.299999999999999988...: 10 x it is 2.99999999999999988 */
	CHECK_U64(kv_floor_frac(10, 0.3), 2);
	CHECK_U64(kv_floor_frac(UINT64_MAX, 0.5), (1ULL << 63) - 1);
	CHECK_U64(kv_floor_frac(1ULL << 63, 0x1p-60), 8);
	CHECK_U64(kv_floor_frac(7, 0x1p-1000), 0);
	CHECK_U64(kv_floor_frac(12345, 1), 12345);
	CHECK_U64(kv_floor_frac(12345, 2.5), 12345);
	CHECK_U64(kv_floor_frac(12345, 0), 0);
	CHECK_U64(kv_floor_frac(12345, -0.5), 0);
	CHECK_U64(kv_floor_frac(12345, NAN), 0);
	static const char *const names[] = {"a", NULL, "c"};
	CHECK(kv_name_find(names, 3, "c") == 2);
	CHECK(kv_name_find(names, 3, "b") == -1);
	CHECK(kv_name_find(names, 3, NULL) == -1);
	CHECK_STR(kv_name_of(names, 3, 0), "a");
	CHECK_STR(kv_name_of(names, 3, 1), "?");
	CHECK_STR(kv_name_of(names, 3, 3), "?");
	CHECK_STR(kv_name_of(names, 3, -1), "?");
	return test_done("test_kv");
}
