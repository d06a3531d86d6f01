/*
 * fuzz_index.c - any bytes as a model.safetensors.index.json, read with
 * kv_st_index_parse() against one fixed folder of shards
 * (tests/ckpt/tiny-sharded, whose path CMake gives as KV_SHARDED_DIR:
 * the replay runs from the build folder, libFuzzer from the source top).
 * Read or refused, never a crash, a leak or a file outside the folder; a
 * refusal says why. An index accepted holds exactly the tensors its
 * weight_map names, each in the shard it names, and no name twice.
 * Linked alone it mutates bytes; with mutate_index.c, the index's tree.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kv/safetensors.h"

#ifndef KV_SHARDED_DIR
#error "KV_SHARDED_DIR: the folder of shards the indexes name"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What an accepted index must keep, or NULL. */
static const char *check(const struct kv_st *st, const char *text,
			 size_t len)
{
	static const char dir[] = KV_SHARDED_DIR "/";
	cJSON *root = cJSON_ParseWithLength(text, len);
	const cJSON *wm = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
	const cJSON *w;
	const char *why = NULL;
	if (!cJSON_IsObject(wm))
		why = "accepted without a weight_map object";
	cJSON_ArrayForEach(w, wm)
	{
		if (why)
			break;
		const struct kv_st_tensor *t = kv_st_get(st, w->string);
		const char *p = t && t->file < st->nf ? st->f[t->file].path
						      : "";
		if (!t || !cJSON_IsString(w))
			why = "a tensor weight_map names is not there";
		else if (strncmp(p, dir, sizeof dir - 1) ||
			 strcmp(p + sizeof dir - 1, w->valuestring))
			why = "a tensor is not in the shard weight_map names";
		if (why)
			break;
	}
	for (size_t i = 0; !why && i < st->n; i++) {
		if (!cJSON_GetObjectItemCaseSensitive(wm, st->t[i].name))
			why = "a tensor weight_map does not name";
		else if (i && strcmp(st->t[i - 1].name, st->t[i].name) >= 0)
			why = "tensors not sorted by name, or one twice";
	}
	if (!why && (size_t)cJSON_GetArraySize(wm) != st->n)
		why = "weight_map names more tensors than there are";
	cJSON_Delete(root);
	return why;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[KV_ERRLEN] = "";
	/* the text alone, in a buffer of its size: a read past it is caught */
	char *text = malloc(size ? size : 1);
	struct kv_st *st = calloc(1, sizeof *st);
	if (!text || !st) {
		free(text);
		free(st);
		return 0;
	}
	memcpy(text, data, size);
	if (kv_st_index_parse(text, size, KV_SHARDED_DIR, "fuzz.index.json",
			      st, err) == 0) {
		const char *why = check(st, text, size);
		if (why) {
			fprintf(stderr, "fuzz_index: accepted, but %s\n", why);
			abort();
		}
	} else if (!err[0]) {
		abort(); /* a refusal always says why */
	}
	/* accepted or not, no file was read but the folder's own */
	for (size_t i = 0; i < st->nf; i++) {
		const char *p = st->f[i].path;
		size_t n = strlen(KV_SHARDED_DIR);
		if (strncmp(p, KV_SHARDED_DIR, n) || p[n] != '/' ||
		    strchr(p + n + 1, '/') || !strcmp(p + n + 1, "..")) {
			fprintf(stderr, "fuzz_index: read %s\n", p);
			abort();
		}
	}
	kv_st_close(st);
	free(text);
	return 0;
}
