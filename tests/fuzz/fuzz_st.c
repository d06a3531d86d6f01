/*
 * fuzz_st.c - any bytes as a safetensors header: the first 8 give the
 * bytes of data after it (below 1 MiB), the rest is the header's text.
 * Parsed or refused, never a crash or a leak; an accepted header's
 * tensors tile the data exactly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kv/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[KV_ERRLEN];
	uint64_t bytes = 0;
	if (size < 8)
		return 0;
	for (int i = 7; i >= 0; i--)
		bytes = bytes << 8 | data[i];
	bytes %= 1u << 20;
	struct kv_st *st = calloc(1, sizeof *st);
	if (!st)
		return 0;
	if (kv_st_parse((const char *)data + 8, size - 8, bytes, "fuzz", 0, st,
			err) == 0) {
		uint64_t sum = 0;
		for (size_t i = 0; i < st->n; i++) {
			const struct kv_st_tensor *t = &st->t[i];
			if (t->end - t->begin !=
			    t->elems * kv_st_dtype_bytes(t->dtype))
				abort();
			sum += t->end - t->begin;
		}
		if (sum != bytes || st->bytes != bytes)
			abort();
	}
	kv_st_close(st);
	return 0;
}
