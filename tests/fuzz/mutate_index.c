/*
 * mutate_index.c - libFuzzer's custom mutator for a safetensors index
 * (fuzz_index): the generic tree operations of mutate_json.c, and what an
 * index gets wrong, in one that otherwise names tiny-sharded's shards:
 *
 *   - weight_map entries removed, added (a tensor of the other shard, one
 *     of no shard, a name with an escaped NUL), renamed;
 *   - an entry pointed at the other shard, at a file not there, at "..",
 *     ".", "", a name with a slash or an escaped NUL, at a file of the
 *     folder that is no shard (config.json, the index itself), at a value
 *     that is not a string; every entry at one shard;
 *   - metadata.total_size edited (0, negative, 1.0e3, a string, 2^64) or
 *     metadata of the wrong kind;
 *   - weight_map of the wrong kind (a list, a string, empty, null), or
 *     missing;
 *   - a UTF-8 byte-order mark before the JSON.
 *
 * Crossover puts a member of another index into this one. Input that is
 * not JSON falls back to libFuzzer's byte mutations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mutate_json.h"

static const char *const SHARDS[] = {"model-00001-of-00002.safetensors",
				     "model-00002-of-00002.safetensors"};
static const char *const FILES[] = {
	"model-00003-of-00002.safetensors", "model.safetensors", "..", ".",
	"", "config.json", "model.safetensors.index.json",
	"sub/model-00001-of-00002.safetensors",
	"../tiny-gpt2/model.safetensors", "/etc/passwd",
	("model-00001-of-00002.safetensors" MJ_NUL),
	("model-00001-of-00002.safetensors" MJ_NUL "x"),
	(MJ_NUL "model-00002-of-00002.safetensors"),
	"model-00001-of-00002.safetensors/",
	"model-00001-of-00002.safetensors ",
	"MODEL-00001-OF-00002.SAFETENSORS"};
/* tensors of the shards, and names that are none */
static const char *const NAMES[] = {
	"wte.weight", "wpe.weight", "h.0.ln_1.weight", "h.1.ln_1.weight",
	"h.1.mlp.c_proj.bias", "ln_f.weight", "ln_f.bias", "lm_head.weight",
	"", ("wte.weight" MJ_NUL), MJ_NUL, "__metadata__", "h.2.ln_1.weight",
	"wte.weight ", "WTE.WEIGHT"};

static cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* Where an entry points. */
static cJSON *a_file(void)
{
	switch (rnd(6)) {
	case 0: case 1: return cJSON_CreateString(PICK(SHARDS));
	case 2: return mj_any_value();
	default: return cJSON_CreateString(PICK(FILES));
	}
}

static void op_entry(cJSON *root)
{
	cJSON *wm = get(root, "weight_map"), *w = mj_member(wm), *it;
	if (!cJSON_IsObject(wm)) {
		wm = cJSON_CreateObject();
		mj_set(wm, PICK(NAMES), cJSON_CreateString(PICK(SHARDS)));
		mj_set(root, "weight_map", wm);
		return;
	}
	switch (rnd(7)) {
	case 0: /* removed */
		if (w)
			cJSON_Delete(cJSON_DetachItemViaPointer(wm, w));
		break;
	case 1: /* added */
		mj_set(wm, PICK(NAMES),
		       rnd(3) ? cJSON_CreateString(PICK(SHARDS)) : a_file());
		break;
	case 2: /* at the other shard */
		if (cJSON_IsString(w))
			mj_replace(wm, w,
				   cJSON_CreateString(strcmp(w->valuestring,
							     SHARDS[0])
							      ? SHARDS[0]
							      : SHARDS[1]));
		break;
	case 3: case 4: /* at somewhere else */
		if (w)
			mj_replace(wm, w, a_file());
		break;
	case 5: { /* renamed */
		char name[300];
		if (!w)
			break;
		snprintf(name, sizeof name, "%s", PICK(NAMES));
		cJSON *v = cJSON_Duplicate(w, true);
		cJSON_Delete(cJSON_DetachItemViaPointer(wm, w));
		mj_set(wm, name, v);
		break;
	}
	default: { /* every entry at one shard */
		const char *s = PICK(SHARDS);
		cJSON_ArrayForEach(it, wm)
			if (cJSON_IsString(it))
				cJSON_SetValuestring(it, s);
	}
	}
}

static void op_total(cJSON *root)
{
	static const double TOTALS[] = {0, -1, 73472, 73471, 1,
					18446744073709551616.0, 1e300, 0.5};
	cJSON *md = get(root, "metadata"), *v;
	if (!cJSON_IsObject(md) || rnd(6) == 0) {
		mj_set(root, "metadata",
		       rnd(2) ? mj_any_value() : cJSON_CreateObject());
		return;
	}
	switch (rnd(5)) {
	case 0: v = cJSON_CreateNumber(PICK(TOTALS)); break;
	case 1: v = mj_raw(rnd(2) ? "1.0e3" : "73472.0"); break;
	case 2: v = cJSON_CreateString("73472"); break;
	case 3:
		cJSON_DeleteItemFromObjectCaseSensitive(md, "total_size");
		return;
	default: v = mj_any_value();
	}
	mj_set(md, "total_size", v);
}

static void op_map_kind(cJSON *root)
{
	cJSON *v;
	switch (rnd(5)) {
	case 0: /* a list of what it held */
		v = cJSON_CreateArray();
		if (cJSON_IsObject(get(root, "weight_map"))) {
			const cJSON *it;
			cJSON_ArrayForEach(it, get(root, "weight_map"))
				cJSON_AddItemToArray(v, cJSON_Duplicate(it,
									true));
		}
		break;
	case 1: v = cJSON_CreateString(SHARDS[0]); break;
	case 2: v = cJSON_CreateObject(); break;
	case 3:
		cJSON_DeleteItemFromObjectCaseSensitive(root, "weight_map");
		return;
	default: v = mj_any_value();
	}
	mj_set(root, "weight_map", v);
}

static void mutate(cJSON *root)
{
	if (!cJSON_IsObject(root)) {
		mj_mutate(root);
		return;
	}
	switch (rnd(10)) {
	case 0: case 1: case 2: case 3: op_entry(root); break;
	case 4: case 5: op_total(root); break;
	case 6: op_map_kind(root); break;
	default: mj_mutate(root);
	}
}

MJ_ENTRY_POINTS(mutate)
