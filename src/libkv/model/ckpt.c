/*
 * ckpt.c - the bytes a checkpoint stores, read from its own files: the
 * index of a sharded safetensors checkpoint, or the header of a single
 * file (an 8-byte little-endian length, then a JSON table of each
 * tensor's dtype, shape and [begin, end) byte offsets into the data that
 * follows), or a GGUF's own tensors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/json.h"
#include "kv/ckpt.h"
#include "kv/gguf.h"
#include "kv/kv.h"
#include "kv/model.h"
#include "kv/safetensors.h"

#define MAX_INDEX_BYTES (64u << 20)  /* an index of a few MiB at most */

const char *kv_ckpt_source_name(enum kv_ckpt_source s)
{
	return s == KV_CKPT_INDEX	  ? "index"
	       : s == KV_CKPT_SAFETENSORS ? "safetensors"
	       : s == KV_CKPT_GGUF	  ? "gguf"
					  : "";
}

static int read_index(const char *path, uint64_t *bytes, char *err)
{
	size_t len = 0;
	char *text;
	cJSON *root = NULL;
	int e = kv_file_read(path, MAX_INDEX_BYTES, &text, &len, err);
	if (e)
		return e;
	e = kv_json_read(text, len, path, &root, err);
	free(text);
	if (e)
		return e;
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(root, "metadata");
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(md, "total_size");
	if (!kv_json_whole(ts, 9007199254740992ULL, bytes) || !*bytes) {
		char got[64];
		if (cJSON_IsNumber(ts) && (ts->type & KV_JSON_NOTINT))
			snprintf(got, sizeof got, "%.17g, not written as an "
				 "integer", ts->valuedouble);
		else if (cJSON_IsNumber(ts))
			snprintf(got, sizeof got, "%.17g", ts->valuedouble);
		else
			snprintf(got, sizeof got, "%s",
				 !ts ? "nothing" : cJSON_IsString(ts)
							   ? "a string"
							   : "another kind");
		snprintf(err, KV_ERRLEN, "%.400s: metadata.total_size: must be a "
			 "positive whole number of bytes, got %s", path, got);
		e = KV_EINVAL;
	}
	cJSON_Delete(root);
	return e;
}

/* Whether path is a file that begins as a GGUF does. */
static bool is_gguf(const char *path)
{
	unsigned char b[4];
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : NULL;
	size_t got = f ? fread(b, 1, sizeof b, f) : 0;
	if (f)
		fclose(f);
	return kv_gguf_magic(b, got);
}

int kv_ckpt_bytes(const char *config_path, enum kv_ckpt_source *src,
		  uint64_t *bytes, char *err)
{
	char path[4200];
	struct stat st;
	*src = KV_CKPT_NONE;
	*bytes = 0;
	if (is_gguf(config_path)) {
		struct kv_gguf *g;
		int e = kv_gguf_open(config_path, &g, err);
		if (!e && g->bytes) {
			*src = KV_CKPT_GGUF;
			*bytes = g->bytes;
		}
		kv_gguf_free(g);
		return e;
	}
	if (kv_config_beside(config_path, "model.safetensors.index.json", path,
		   sizeof path) && stat(path, &st) == 0) {
		*src = KV_CKPT_INDEX;
		return read_index(path, bytes, err);
	}
	if (kv_config_beside(config_path, "model.safetensors", path, sizeof path) &&
	    stat(path, &st) == 0) {
		struct kv_st *ck;
		kv_config_beside(config_path, "", path, sizeof path);
		*src = KV_CKPT_SAFETENSORS;
		int e = kv_st_open(path, 0, &ck, err);
		if (!e)
			*bytes = ck->bytes;
		kv_st_close(ck);
		return e;
	}
	return 0;
}
