/* test_bench.c - statistics by hand, and the probes run and return sane,
 * positive figures on a tiny size (times are never asserted). */
#include <stdlib.h>

#include "kv/bench.h"
#include "kv/engine.h"
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

	/* derived figures, by hand: 10^9 bytes in a 100 ms median against a
	 * 20 GB/s reference: 10 GB/s, a 50 ms roofline, efficiency 0.5 */
	struct kv_bench_result r = {0};
	r.bytes = 1000000000;
	r.kv_bytes = 250000000;
	r.flops = 4e9;
	r.ms.median = 100;
	kv_bench_derive(KV_BENCH_DECODE, &r, 20e9, 0);
	CHECK_NEAR(r.gbps, 10, 1e-9);
	CHECK_NEAR(r.gflops, 40, 1e-9);
	CHECK_NEAR(r.roofline_ms, 50, 1e-9);
	CHECK_NEAR(r.efficiency, 0.5, 1e-12);
	CHECK_NEAR(r.kv_share, 0.25, 1e-12);
	CHECK_NEAR(r.ref_gbps, 20, 1e-12);
	/* nocache against the sgemm rate: 4e9 FLOPs at 80 GFLOP/s = 50 ms */
	kv_bench_derive(KV_BENCH_NOCACHE, &r, 20e9, 80e9);
	CHECK_NEAR(r.roofline_ms, 50, 1e-9);
	CHECK_NEAR(r.efficiency, 0.5, 1e-12);
	/* batch: the step at ctx 1 took 60 of the 100 ms */
	r.weights_ms = 60;
	kv_bench_derive(KV_BENCH_BATCH, &r, 20e9, 0);
	CHECK_NEAR(r.kv_time_share, 0.4, 1e-12);
	/* references have no roofline */
	kv_bench_derive(KV_BENCH_MEMBW, &r, 20e9, 0);
	CHECK_NEAR(r.roofline_ms, 0, 0);
	CHECK_NEAR(r.efficiency, 0, 0);

	enum kv_bench bk;
	CHECK(kv_bench_parse("attn", &bk) == 0 && bk == KV_BENCH_ATTN);
	CHECK(kv_bench_parse("warp", &bk) == KV_EINVAL);
	CHECK_STR(kv_bench_name(KV_BENCH_NOCACHE), "nocache");
	CHECK_STR(kv_bench_name(KV_BENCH_COUNT), "?");

	/* the reference points */
	CHECK(kv_membw_new(1 << 20, 1, &b) == 0);
	if (b) {
		CHECK(kv_membw_best(b, 2) > 0);
		CHECK(kv_bench_membw(b, 3, NULL, &r) == 0);
		CHECK_U64(r.bytes, 1 << 20);
		CHECK_U64(r.reps, 3);
		CHECK(r.gbps > 0 && r.ms.min <= r.ms.median);
		volatile int stop = 1;
		CHECK(kv_bench_membw(b, 3, &stop, &r) == KV_EINVAL);
		CHECK(kv_bench_membw(b, 0, NULL, &r) == KV_EINVAL);
		kv_membw_free(b);
	}
	CHECK(kv_bench_sgemm(32, 1, 2, NULL, &r) == 0);
	CHECK_NEAR(r.flops, 65536, 0);
	CHECK(r.ref_gflops > 0 && r.gflops > 0);

	/* an engine point: bytes and FLOPs from the engine's shape */
	struct kv_model *m = NULL;
	static const char json[] =
		"{\"model_type\":\"gpt2\",\"n_layer\":2,\"n_embd\":64,"
		"\"n_head\":4,\"vocab_size\":100,\"n_positions\":64}";
	char err[KV_ERRLEN];
	CHECK(kv_model_parse(json, sizeof json - 1, "tiny", &m, err) == 0);
	struct kv_engine_opts o = kv_engine_opts_default();
	o.max_ctx = 32;
	o.max_chunk = 1;
	struct kv_engine *eng = NULL;
	if (m && kv_engine_new(m, &o, &eng, err) == 0) {
		/* one token over 32 positions: 2 layers x 2 (K, V) x 64
		 * values x 4 bytes x 32 */
		CHECK(kv_bench_time(eng, KV_BENCH_ATTN, 32, 2, 1, 0, NULL,
				    &r) == 0);
		CHECK_U64(r.bytes, 2 * 2 * 64 * 4 * 32);
		CHECK_U64(r.kv_bytes, r.bytes);
		CHECK_NEAR(r.flops, 2.0 * 2 * 4 * 16 * 32 * 2, 0);
		CHECK(kv_bench_time(eng, KV_BENCH_DECODE, 32, 2, 0, 0, NULL,
				    &r) == 0);
		CHECK_U64(r.kv_bytes, 2 * 2 * 64 * 4 * 32);
		CHECK(r.bytes > r.kv_bytes);
		CHECK(kv_bench_time(eng, KV_BENCH_DECODE, 33, 1, 0, 0, NULL,
				    &r) == KV_EINVAL);
		CHECK(kv_bench_time(eng, KV_BENCH_NOCACHE, 8, 1, 0, 0, NULL,
				    &r) != 0); /* sized for one token a pass */
		/* a warm-up by time: no reps asked, 20 ms spent all the
		 * same before the timed one */
		uint64_t w0 = kv_now_ns();
		CHECK(kv_bench_time(eng, KV_BENCH_ATTN, 32, 1, 0, 20000000,
				    NULL, &r) == 0);
		CHECK(kv_now_ns() - w0 >= 20000000);
		CHECK_U64(r.reps, 1);
		kv_engine_free(eng);
	} else {
		CHECK(!"engine");
	}
	kv_model_free(m);
	return test_done("test_bench");
}
