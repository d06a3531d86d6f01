/* test_units.c - sizes, token counts and sweeps, each against a number
 * worked by hand from DESIGN.md's rules. */
#include <stdlib.h>

#include "kv/units.h"
#include "test.h"

static uint64_t size(const char *s)
{
	uint64_t v = 0;
	CHECK(kv_parse_size(s, &v) == 0);
	return v;
}

static uint64_t tokens(const char *s)
{
	uint64_t v = 0;
	CHECK(kv_parse_tokens(s, &v) == 0);
	return v;
}

int main(void)
{
	uint64_t v;
	/* decimal with B, binary with iB or bare letters */
	CHECK_U64(size("80GB"), 80000000000ULL);
	CHECK_U64(size("80GiB"), 85899345920ULL);
	CHECK_U64(size("80G"), 85899345920ULL);
	CHECK_U64(size("16gb"), 16000000000ULL);
	CHECK_U64(size("4096"), 4096);
	CHECK_U64(size("4096B"), 4096);
	CHECK_U64(size("1K"), 1024);
	CHECK_U64(size("1KB"), 1000);
	CHECK_U64(size("1.5GiB"), 1610612736ULL);
	CHECK_U64(size("0.5KiB"), 512);
	CHECK_U64(size("2T"), 2199023255552ULL);
	CHECK_U64(size("18446744073709551615"), UINT64_MAX);
	CHECK(kv_parse_size("18446744073709551616", &v) == KV_ERANGE);
	CHECK(kv_parse_size("17EB", &v) == KV_EINVAL);
	CHECK(kv_parse_size("16777216T", &v) == KV_ERANGE);
	CHECK(kv_parse_size("", &v) == KV_EINVAL);
	CHECK(kv_parse_size("-1GB", &v) == KV_EINVAL);
	CHECK(kv_parse_size("GB", &v) == KV_EINVAL);
	CHECK(kv_parse_size("1.GB", &v) == KV_EINVAL);
	CHECK(kv_parse_size("10 GB", &v) == KV_EINVAL);
	CHECK(kv_parse_size("10XB", &v) == KV_EINVAL);

	/* token counts: k = 1024 */
	CHECK_U64(tokens("8192"), 8192);
	CHECK_U64(tokens("8k"), 8192);
	CHECK_U64(tokens("128K"), 131072);
	CHECK_U64(tokens("1M"), 1048576);
	CHECK_U64(tokens("1.5k"), 1536);
	CHECK(kv_parse_tokens("1.3k", &v) == KV_EINVAL); /* 1331.2 tokens */
	CHECK(kv_parse_tokens("8kb", &v) == KV_EINVAL);
	CHECK(kv_parse_tokens("x", &v) == KV_EINVAL);
	CHECK(kv_parse_tokens("99999999999999999999", &v) == KV_ERANGE);

	/* plain integers */
	CHECK(kv_parse_u64("12", &v) == 0 && v == 12);
	CHECK(kv_parse_u64("+12", &v) == KV_EINVAL);
	CHECK(kv_parse_u64("12x", &v) == KV_EINVAL);

	/* sweeps */
	uint64_t *vals;
	size_t n;
	CHECK(kv_parse_sweep("128:8192:x2", &vals, &n) == 0);
	CHECK_U64(n, 7);
	CHECK_U64(vals[0], 128);
	CHECK_U64(vals[6], 8192);
	free(vals);
	CHECK(kv_parse_sweep("1k:4k:+1k,8k", &vals, &n) == 0);
	CHECK_U64(n, 5);
	CHECK_U64(vals[3], 4096);
	CHECK_U64(vals[4], 8192);
	free(vals);
	CHECK(kv_parse_sweep("100:1000:x3", &vals, &n) == 0);
	CHECK_U64(n, 3); /* 100 300 900 */
	CHECK_U64(vals[2], 900);
	free(vals);
	CHECK(kv_parse_sweep("8k,,16k", &vals, &n) == KV_EINVAL);
	CHECK(vals == NULL && n == 0);
	CHECK(kv_parse_sweep("8k:4k:x2", &vals, &n) == KV_EINVAL);
	CHECK(kv_parse_sweep("1:8:x1", &vals, &n) == KV_EINVAL);
	CHECK(kv_parse_sweep("1:8:+0", &vals, &n) == KV_EINVAL);
	CHECK(kv_parse_sweep("1:8", &vals, &n) == KV_EINVAL);
	CHECK(kv_parse_sweep("1:8:y2", &vals, &n) == KV_EINVAL);
	CHECK(kv_parse_sweep("1:1000000:+1", &vals, &n) == KV_ERANGE);
	CHECK(kv_parse_sweep("", &vals, &n) == KV_EINVAL);
	/* the last step stops before overflowing */
	CHECK(kv_parse_sweep("4611686018427387904:18446744073709551615:x2",
			     &vals, &n) == 0);
	CHECK_U64(n, 2);
	free(vals);

	/* printing */
	char buf[32];
	CHECK_STR(kv_format_iec(512, buf, sizeof buf), "512 B");
	CHECK_STR(kv_format_iec(131072, buf, sizeof buf), "128.00 KiB");
	CHECK_STR(kv_format_iec(1073741824ULL, buf, sizeof buf), "1.00 GiB");
	CHECK_STR(kv_format_iec(603979776ULL, buf, sizeof buf), "576.00 MiB");
	CHECK_STR(kv_format_iec(UINT64_MAX, buf, sizeof buf), "16.00 EiB");
	return test_done("test_units");
}
