/*
 * fuzz_gpus.c - any bytes as a gpus.json: a table or a message, never a
 * crash or a leak; a table it accepts answers look-ups and lists.
 */
#include <stdint.h>
#include <stdlib.h>

#include "kv/gpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kv_gpus *g = NULL;
	char err[KV_ERRLEN], list[4096];
	if (kv_gpus_parse((const char *)data, size, "fuzz.json", &g, err)) {
		if (!err[0] || g)
			abort();
		return 0;
	}
	for (size_t i = 0; i < g->n; i++) {
		if (kv_gpus_lookup(g, g->gpu[i].name) == NULL)
			abort();
		kv_gpu_tflops(&g->gpu[i], KV_DTYPE_FP8);
		kv_gpu_tflops(&g->gpu[i], KV_DTYPE_BF16);
	}
	kv_gpus_lookup(g, "h100");
	kv_gpus_list(g, list, sizeof list);
	kv_gpus_free(g);
	return 0;
}
