/*
 * mutate_config.c - libFuzzer's custom mutator for configs (fuzz_shape):
 * the generic tree operations of mutate_json.c, and what configs alone
 * get wrong, text_config nested wrongly (the whole config inside it, a
 * text_config that is not an object, one inside another, a field moved
 * into it). Crossover puts a member of another config of the corpus into
 * this one, so the fields and model types of every family meet every
 * other. Input that is not JSON falls back to libFuzzer's byte mutations.
 */
#include <stdlib.h>
#include <string.h>

#include "mutate_json.h"

/* text_config where it should not be. Returns the new root. */
static cJSON *misnest(cJSON *root)
{
	cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "text_config");
	switch (rnd(4)) {
	case 0: { /* the whole config inside text_config */
		cJSON *w = cJSON_CreateObject();
		if (!w)
			return root;
		cJSON_AddItemToObject(w, "text_config", root);
		if (rnd(2))
			cJSON_AddStringToObject(w, "model_type", "llava");
		return w;
	}
	case 1: /* a text_config of another kind */
		if (t)
			mj_replace(root, t, mj_any_value());
		else
			cJSON_AddItemToObject(root, "text_config",
					      mj_any_value());
		return root;
	case 2: /* text_config inside text_config */
		if (cJSON_IsObject(t))
			cJSON_AddItemToObject(t, "text_config",
					      cJSON_Duplicate(t, true));
		return root;
	default: { /* a root field moved into text_config */
		int n = cJSON_GetArraySize(root);
		if (!n)
			return root;
		cJSON *f = cJSON_DetachItemFromArray(root,
						     (int)rnd((uint32_t)n));
		if (f == t) { /* text_config itself: back where it was */
			cJSON_AddItemToArray(root, f);
			return root;
		}
		if (!cJSON_IsObject(t)) {
			t = cJSON_CreateObject();
			cJSON_AddItemToObject(root, "text_config", t);
		}
		if (t && f && f->string) {
			cJSON_DeleteItemFromObjectCaseSensitive(t, f->string);
			cJSON_AddItemToObject(t, f->string, f);
		} else {
			cJSON_Delete(f);
		}
		return root;
	}
	}
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	rng_state = seed;
	cJSON *root = mj_parse(data, size, NULL);
	if (!root || rnd(20) == 0) { /* now and then, bytes */
		cJSON_Delete(root);
		return LLVMFuzzerMutate(data, size, max_size);
	}
	/* one time in eight, or when there is nothing to change, misnest */
	for (uint32_t k = 0, n = 1 + rnd(3); k < n; k++)
		if (rnd(8) == 7 || !mj_mutate(root))
			root = misnest(root);
	size_t out = mj_emit(root, data, max_size, false);
	cJSON_Delete(root);
	return out ? out : LLVMFuzzerMutate(data, size, max_size);
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1,
				 const uint8_t *d2, size_t s2, uint8_t *out,
				 size_t max_out, unsigned int seed)
{
	return mj_crossover(d1, s1, d2, s2, out, max_out, seed);
}
