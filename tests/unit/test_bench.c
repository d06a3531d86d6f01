/* test_bench.c - statistics by hand, and the probes run and return sane,
 * positive figures on a tiny size (times are never asserted). */
#include <stdlib.h>

#include "kv/bench.h"
#include "test.h"

int main(void)
{
	double s[] = {5, 1, 4, 2, 3};
	struct kv_stats st;
	kv_stats_of(s, 5, &st);
	CHECK_NEAR(st.median, 3, 0);
	CHECK_NEAR(st.min, 1, 0);
	CHECK_NEAR(st.max, 5, 0);
	CHECK_NEAR(st.mean, 3, 0);
	double e[] = {4, 1, 3, 2};
	kv_stats_of(e, 4, &st);
	CHECK_NEAR(st.median, 2.5, 0);
	CHECK_U64(st.n, 4);

	uint64_t t0 = kv_now_ns(), t1 = kv_now_ns();
	CHECK(t1 >= t0);

	struct kv_membw *b;
	CHECK(kv_membw_new(1 << 20, 2, &b) == 0);
	if (b) {
		CHECK_U64(kv_membw_bytes(b), 1 << 20);
		CHECK(kv_membw_read(b) > 0);
		kv_membw_free(b);
	}
	kv_membw_free(NULL);
	CHECK(kv_membw_new(1 << 20, 0, &b) == KV_EINVAL);
	CHECK(kv_membw_new(16, 1, &b) == KV_EINVAL);
	double bps = 0, flops = 0;
	CHECK(kv_membw_measure(4 << 20, 1, 2, &bps) == 0 && bps > 0);
	CHECK(kv_sgemm_measure(64, 1, 2, &flops) == 0 && flops > 0);
	CHECK(kv_sgemm_measure(0, 1, 1, &flops) == KV_EINVAL);
	return test_done("test_bench");
}
