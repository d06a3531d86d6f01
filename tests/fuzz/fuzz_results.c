/*
 * fuzz_results.c - any bytes as a serving benchmark's result file, and as
 * an efficiency.json: runs or a message, a table or a message, never a
 * crash or a leak; what is accepted holds its promises (lengths at least
 * 1, every metric a positive number or NAN; curves answer in range).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "kv/eff.h"
#include "kv/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[KV_ERRLEN];
	struct kv_result r[8];
	size_t n = 0;
	if (kv_results_parse((const char *)data, size, "fuzz.json", r, 8, &n,
			     err)) {
		if (!err[0] || n > 8)
			abort();
	} else {
		for (size_t i = 0; i < n; i++) {
			const double m[4] = {r[i].ttft_ms, r[i].tpot_ms,
					     r[i].latency_ms, r[i].out_tps};
			if (!(r[i].isl >= 1) || !(r[i].osl >= 1) ||
			    !(r[i].prompts >= 1) || r[i].users < 0 ||
			    r[i].rate < 0)
				abort();
			for (int k = 0; k < 4; k++)
				if (!isnan(m[k]) && !(m[k] > 0))
					abort();
		}
	}
	struct kv_effs *e = NULL;
	if (kv_effs_parse((const char *)data, size, "fuzz.json", &e, err)) {
		if (!err[0] || e)
			abort();
		return 0;
	}
	for (size_t i = 0; i < e->n; i++) {
		const struct kv_eff *g = &e->eff[i];
		double y = kv_curve_at(&g->gemm[0], 37);
		if (!(y > 0 && y <= 1) || kv_effs_lookup(e, g->gpu) == NULL)
			abort();
	}
	kv_effs_free(e);
	return 0;
}
