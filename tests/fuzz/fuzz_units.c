/*
 * fuzz_units.c - any bytes as a size, a token count, a KV format name or a
 * sweep: parsed or refused, never a crash, a leak or an endless sweep.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kv/dtype.h"
#include "kv/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	uint64_t v, *vals;
	size_t n;
	enum kv_dtype t;
	kv_parse_size(s, &v);
	kv_parse_tokens(s, &v);
	kv_parse_u64(s, &v);
	kv_dtype_parse(s, &t);
	kv_dtype_from_torch(s, &t);
	if (kv_parse_sweep(s, &vals, &n) == 0) {
		if (n == 0 || n > KV_SWEEP_MAX)
			abort();
		free(vals);
	} else if (vals) {
		abort();
	}
	free(s);
	return 0;
}
