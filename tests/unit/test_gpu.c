/*
 * test_gpu.c - the shipped configs/gpus.json loads and says what the
 * reference table says; bad entries give one line naming the field.
 */
#include <stdlib.h>

#include "kv/gpu.h"
#include "test.h"

/* One entry "x" with the required fields and `more` after them. */
#define ONE(more)                                                       \
	"[{\"name\":\"x\",\"source\":\"s\",\"memory_bytes\":1,"     \
	"\"bandwidth_gbps\":1" more "}]"

static int parse_err(const char *json, char *err)
{
	struct kv_gpus *g = NULL;
	int e = kv_gpus_parse(json, strlen(json), "t.json", &g, err);
	kv_gpus_free(g);
	return e;
}

int main(void)
{
	char err[KV_ERRLEN], list[1024];
	struct kv_gpus *g = NULL;
	CHECK(kv_gpus_load("configs/gpus.json", &g, err) == 0);
	if (!g) {
		fprintf(stderr, "%s\n", err);
		return test_done("gpu");
	}
	CHECK(g->n >= 12);
	const struct kv_gpu *h = kv_gpus_lookup(g, "h100-sxm");
	CHECK(h != NULL);
	if (h) {
		CHECK_U64(h->memory_bytes, 81559ULL << 20); /* nvidia-smi */
		CHECK_NEAR(h->bandwidth_gbps, 3350, 0);
		CHECK_NEAR(h->bf16_tflops, 989.5, 0);
		CHECK_NEAR(h->fp8_tflops, 1979, 0);
		/* NVLink 4's 900 GB/s counts both directions */
		CHECK_NEAR(h->interconnect_gbps, 450, 0);
		CHECK_STR(h->interconnect, "NVLink 4, 18 links");
		CHECK(h->bandwidth_efficiency == 0 && h->threads == 0);
	}
	CHECK_NEAR(kv_gpu_tflops(h, KV_DTYPE_BF16), 989.5, 0);
	CHECK_NEAR(kv_gpu_tflops(h, KV_DTYPE_F32), 989.5, 0);
	CHECK_NEAR(kv_gpu_tflops(h, KV_DTYPE_FP8), 1979, 0);
	CHECK_NEAR(kv_gpu_tflops(h, KV_DTYPE_INT4), 1979, 0);
	CHECK_NEAR(kv_gpu_tflops(NULL, KV_DTYPE_BF16), 0, 0);
	CHECK(kv_gpus_lookup(g, "H100") == h);      /* alias, any case */
	CHECK(kv_gpus_lookup(g, "h100_sxm5") == h); /* '_' reads as '-' */
	const struct kv_gpu *a = kv_gpus_lookup(g, "a100-80gb");
	CHECK(a && a->memory_bytes == 80ULL << 30 && a->fp8_tflops == 0);
	CHECK_NEAR(kv_gpu_tflops(a, KV_DTYPE_FP8), 312, 0); /* no fp8 */
	const struct kv_gpu *m = kv_gpus_lookup(g, "mi300x");
	CHECK(m && m->memory_bytes == 206141652992ULL);
	CHECK(kv_gpus_lookup(g, "h200") &&
	      kv_gpus_lookup(g, "h200")->memory_bytes == 143771ULL << 20);
	static const char *const need[] = {"a10g", "l4", "l40s", "a100-40gb",
					   "h100-pcie", "b200", "rtx-4090",
					   NULL};
	for (const char *const *n = need; *n; n++)
		CHECK(kv_gpus_lookup(g, *n) != NULL);
	CHECK(kv_gpus_lookup(g, "tpu-v5") == NULL);
	for (size_t i = 0; i < g->n; i++) {
		CHECK(g->gpu[i].source[0] != '\0');
		/* every datasheet entry says its links */
		CHECK(g->gpu[i].interconnect_gbps > 0);
		CHECK(g->gpu[i].interconnect[0] != '\0');
	}
	/* a PCIe card as it comes: PCIe 4.0 x16, 32 GB/s each way */
	CHECK_NEAR(kv_gpus_lookup(g, "a100-80gb-pcie")->interconnect_gbps, 32,
		   0);
	CHECK_NEAR(a ? a->interconnect_gbps : 0, 300, 0); /* NVLink 3 */
	CHECK_NEAR(m ? m->interconnect_gbps : 0, 448, 0); /* 7 x 64 */
	CHECK_HAS(kv_gpus_list(g, list, sizeof list), "h100-sxm, ");
	kv_gpus_free(g);
	kv_gpus_free(NULL);

	/* bad tables */
	CHECK(parse_err("{", err) == KV_EINVAL);
	CHECK_STR(err, "t.json: not JSON: syntax error at line 1, column 1, "
		       "near '{'");
	CHECK(parse_err("[{\"name\":\"x\",\"source\":\"s\","
			"\"memory_bytes\":080,\"bandwidth_gbps\":1}]",
			err) == KV_EINVAL);
	CHECK_STR(err, "t.json: not JSON: malformed number at line 1, column "
		       "42, near '080,\"bandwidth_gbps\":1}'");
	CHECK(parse_err("{\"gpus\":[]}", err) == KV_EINVAL);
	CHECK_HAS(err, "gpus: must be a non-empty list");
	CHECK(parse_err("[{\"name\":\"x\",\"source\":\"s\","
			"\"memory_bytes\":-1,\"bandwidth_gbps\":1}]",
			err) == KV_EINVAL);
	CHECK_STR(err, "t.json: gpus[0].memory_bytes: must be a positive "
		       "number");
	CHECK(parse_err("[{\"name\":\"x\",\"source\":\"s\","
			"\"memory_bytes\":1.5,\"bandwidth_gbps\":1}]",
			err) == KV_EINVAL);
	CHECK_HAS(err, "whole number of bytes");
	CHECK(parse_err("[{\"name\":\"x\",\"source\":\"s\","
			"\"memory_bytes\":1}]",
			err) == KV_EINVAL);
	CHECK_STR(err, "t.json: gpus[0].bandwidth_gbps: missing");
	CHECK(parse_err("[{\"name\":\"x\",\"source\":\"s\",\"memory_bytes\":1,"
			"\"bandwidth_gbps\":1},{\"name\":\"y\",\"aliases\":"
			"[\"X\"],\"source\":\"s\",\"memory_bytes\":1,"
			"\"bandwidth_gbps\":1}]",
			err) == KV_EINVAL);
	CHECK_HAS(err, "gpus[1]: name 'X' is already used by 'x'");
	CHECK(parse_err("[{\"name\":7}]", err) == KV_EINVAL);
	CHECK_HAS(err, "gpus[0].name: must be a string");

	/* the optional fields: read when given, 0 or "" when not */
	const char *full = ONE(",\"interconnect_gbps\":450,\"interconnect\":"
			       "\"NVLink 4, 18 links\",\"bandwidth_efficiency\":"
			       "0.75,\"flops_efficiency\":1,\"threads\":8");
	CHECK(kv_gpus_parse(full, strlen(full), "t.json", &g, err) == 0);
	if (g) {
		CHECK_NEAR(g->gpu[0].interconnect_gbps, 450, 0);
		CHECK_STR(g->gpu[0].interconnect, "NVLink 4, 18 links");
		CHECK_NEAR(g->gpu[0].bandwidth_efficiency, 0.75, 0);
		CHECK_NEAR(g->gpu[0].flops_efficiency, 1, 0);
		CHECK_U64(g->gpu[0].threads, 8);
	}
	kv_gpus_free(g);
	const char *nulls = ONE(",\"interconnect_gbps\":null,\"interconnect\":"
				"null,\"bandwidth_efficiency\":null,"
				"\"flops_efficiency\":null,\"threads\":null");
	CHECK(kv_gpus_parse(nulls, strlen(nulls), "t.json", &g, err) == 0);
	if (g) {
		CHECK(g->gpu[0].interconnect_gbps == 0 &&
		      !g->gpu[0].interconnect[0] &&
		      g->gpu[0].bandwidth_efficiency == 0 &&
		      g->gpu[0].flops_efficiency == 0 && g->gpu[0].threads == 0);
	}
	kv_gpus_free(g);
	static const struct {
		const char *json, *msg;
	} bad[] = {
		{ONE(",\"interconnect_gbps\":0"),
		 "t.json: gpus[0].interconnect_gbps: must be a positive number"},
		{ONE(",\"interconnect_gbps\":\"900\""),
		 "t.json: gpus[0].interconnect_gbps: must be a positive number"},
		{ONE(",\"interconnect\":18"),
		 "t.json: gpus[0].interconnect: must be a string of 1 to 63 "
		 "characters"},
		{ONE(",\"interconnect\":\"\""),
		 "t.json: gpus[0].interconnect: must be a string of 1 to 63 "
		 "characters"},
		{ONE(",\"bandwidth_efficiency\":1.2"),
		 "t.json: gpus[0].bandwidth_efficiency: must be a fraction in "
		 "(0, 1]"},
		{ONE(",\"bandwidth_efficiency\":0"),
		 "t.json: gpus[0].bandwidth_efficiency: must be a fraction in "
		 "(0, 1]"},
		{ONE(",\"flops_efficiency\":-0.5"),
		 "t.json: gpus[0].flops_efficiency: must be a fraction in "
		 "(0, 1]"},
		{ONE(",\"flops_efficiency\":\"high\""),
		 "t.json: gpus[0].flops_efficiency: must be a fraction in "
		 "(0, 1]"},
		{ONE(",\"threads\":0"),
		 "t.json: gpus[0].threads: must be a whole number from 1 to "
		 "65536"},
		{ONE(",\"threads\":2.5"),
		 "t.json: gpus[0].threads: must be a whole number from 1 to "
		 "65536"},
		{ONE(",\"threads\":65537"),
		 "t.json: gpus[0].threads: must be a whole number from 1 to "
		 "65536"},
		{ONE(",\"threads\":\"8\""),
		 "t.json: gpus[0].threads: must be a whole number from 1 to "
		 "65536"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		CHECK(parse_err(bad[i].json, err) == KV_EINVAL);
		CHECK_STR(err, bad[i].msg);
	}

	CHECK(kv_gpus_load("/nonexistent/gpus.json", &g, err) == KV_EIO);
	CHECK(g == NULL);
	return test_done("gpu");
}
