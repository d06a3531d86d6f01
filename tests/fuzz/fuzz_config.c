/*
 * fuzz_config.c - any bytes as a config.json: the reader must answer with a
 * model or a message, never crash, leak or overflow; a model it accepts must
 * size without overflow for a modest context in every format, and keep the
 * properties every sizing must keep (props.h). Linked alone it is the
 * byte-level target; with mutate_config.c (and mutate_json.c, the tree
 * mutator it shares) it is the structure-aware one, fuzz_shape.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kv/layout.h"
#include "kv/params.h"
#include "props.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kv_model *m = NULL;
	char err[KV_ERRLEN];
	int e = kv_model_parse((const char *)data, size, "fuzz.json", &m, err);
	if (e) {
		if (!err[0] || m)
			abort(); /* an error always says why, and owns nothing */
		return 0;
	}
	for (int t = 0; t < KV_DTYPE_COUNT; t++) {
		struct kv_opts o = kv_opts_default(m);
		o.k_dtype = o.v_dtype = (enum kv_dtype)t;
		uint64_t per, total, st;
		struct kv_summary s;
		if (kv_model_token_bytes(m, &o, &per, err) == 0 &&
		    kv_model_bytes(m, &o, 4096, 3, &total, err) == 0 &&
		    total < per)
			abort();
		kv_model_summary(m, &o, &s, err);
		kv_model_state_bytes(m, &o, 2, &st);
		o.tp = 8;
		o.block = 16;
		o.mha = true;
		kv_model_bytes(m, &o, UINT64_MAX - 3, 1, &total, err);
	}
	/* the weights as the checkpoint stores them (its quantization's
	 * entries matched module by module): an answer or an overflow */
	struct kv_params p;
	if (kv_model_params(m, &p, err) == 0 && p.total && !p.bytes)
		abort();
	const char *why = kv_props_check(m);
	if (why) {
		props_report(m, why);
		abort();
	}
	kv_model_free(m);
	return 0;
}
