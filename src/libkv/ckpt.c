/*
 * ckpt.c - the bytes a checkpoint stores, read from its own files: the
 * index of a sharded safetensors checkpoint, or the header of a single
 * file (an 8-byte little-endian length, then a JSON table of each
 * tensor's dtype, shape and [begin, end) byte offsets into the data that
 * follows).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include "kv/ckpt.h"
#include "kv/kv.h"

#define MAX_INDEX_BYTES (64u << 20)  /* an index of a few MiB at most */
#define MAX_HEADER_BYTES (100u << 20) /* safetensors' own limit */

const char *kv_ckpt_source_name(enum kv_ckpt_source s)
{
	return s == KV_CKPT_INDEX ? "index"
	       : s == KV_CKPT_SAFETENSORS ? "safetensors"
					  : "";
}

/* The file `name` in the folder of config_path into out; false when the
 * config has no folder of its own (stdin) or the name does not fit. */
static bool beside(const char *config_path, const char *name, char *out,
		   size_t n)
{
	if (!strcmp(config_path, "-"))
		return false;
	const char *slash = strrchr(config_path, '/');
	int dir = slash ? (int)(slash - config_path) : 0;
	int w = slash ? snprintf(out, n, "%.*s/%s", dir, config_path, name)
		      : snprintf(out, n, "%s", name);
	return w > 0 && (size_t)w < n;
}

/* The whole of a file of at most max bytes, NUL-terminated, from malloc;
 * NULL with err filled. */
static char *slurp(const char *path, size_t max, size_t *len, char *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	struct stat st;
	if (!f || fstat(fileno(f), &st)) {
		snprintf(err, KV_ERRLEN, "%.400s: %s", path, strerror(errno));
	} else if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		snprintf(err, KV_ERRLEN, "%.400s: not a file of at most %zu bytes",
			 path, max);
	} else if (!(buf = malloc((size_t)st.st_size + 1))) {
		snprintf(err, KV_ERRLEN, "%.400s: out of memory", path);
	} else if (fread(buf, 1, (size_t)st.st_size, f) !=
		   (size_t)st.st_size) {
		snprintf(err, KV_ERRLEN, "%.400s: %s", path, strerror(EIO));
		free(buf);
		buf = NULL;
	} else {
		buf[st.st_size] = '\0';
		*len = (size_t)st.st_size;
	}
	if (f)
		fclose(f);
	return buf;
}

/* A JSON number that is a whole number in [lo, 2^53]. */
static bool whole(const cJSON *it, double lo)
{
	return cJSON_IsNumber(it) && isfinite(it->valuedouble) &&
	       it->valuedouble == floor(it->valuedouble) &&
	       it->valuedouble >= lo && it->valuedouble <= 9007199254740992.0;
}

static int read_index(const char *path, uint64_t *bytes, char *err)
{
	size_t len = 0;
	char *text = slurp(path, MAX_INDEX_BYTES, &len, err);
	if (!text)
		return KV_EIO;
	cJSON *root = NULL;
	int e = kv_json_read(text, len, path, &root, err);
	free(text);
	if (e)
		return e;
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(root, "metadata");
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(md, "total_size");
	if (whole(ts, 1)) {
		*bytes = (uint64_t)ts->valuedouble;
	} else {
		char got[64];
		if (cJSON_IsNumber(ts))
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

static int read_header(const char *path, uint64_t *bytes, char *err)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	unsigned char n8[8];
	int e = KV_EINVAL;
	if (!f || fstat(fileno(f), &st)) {
		snprintf(err, KV_ERRLEN, "%.400s: %s", path, strerror(errno));
		if (f)
			fclose(f);
		return KV_EIO;
	}
	uint64_t n = 0, size = (uint64_t)st.st_size;
	if (fread(n8, 1, 8, f) != 8) {
		snprintf(err, KV_ERRLEN, "%.400s: shorter than a safetensors "
			 "header's 8-byte length", path);
		fclose(f);
		return KV_EINVAL;
	}
	for (int i = 7; i >= 0; i--)
		n = n << 8 | n8[i];
	if (n < 2 || n > MAX_HEADER_BYTES || n > size - 8) {
		snprintf(err, KV_ERRLEN, "%.400s: a header of %llu bytes, in a "
			 "file of %llu", path, (unsigned long long)n,
			 (unsigned long long)size);
		fclose(f);
		return KV_EINVAL;
	}
	char *text = malloc(n + 1);
	if (!text || fread(text, 1, n, f) != n) {
		snprintf(err, KV_ERRLEN, "%.400s: %s", path,
			 text ? "truncated header" : "out of memory");
		free(text);
		fclose(f);
		return text ? KV_EINVAL : KV_ENOMEM;
	}
	fclose(f);
	text[n] = '\0';
	cJSON *root = NULL, *t;
	if ((e = kv_json_read(text, n, path, &root, err))) {
		free(text);
		return e;
	}
	free(text);
	uint64_t data = size - 8 - n, sum = 0;
	e = cJSON_IsObject(root) ? 0 : KV_EINVAL;
	cJSON_ArrayForEach(t, root)
	{
		if (e || !strcmp(t->string, "__metadata__"))
			continue;
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(
			t, "data_offsets");
		const cJSON *b = cJSON_GetArrayItem(o, 0);
		const cJSON *x = cJSON_GetArrayItem(o, 1);
		if (!cJSON_IsArray(o) || cJSON_GetArraySize(o) != 2 ||
		    !whole(b, 0) || !whole(x, 0) ||
		    b->valuedouble > x->valuedouble || x->valuedouble > data) {
			snprintf(err, KV_ERRLEN, "%.400s: %.100s: data_offsets "
				 "must be [begin, end] within the %llu bytes "
				 "of data", path, t->string,
				 (unsigned long long)data);
			e = KV_EINVAL;
			continue;
		}
		sum += (uint64_t)(x->valuedouble - b->valuedouble);
	}
	if (e == KV_EINVAL && !cJSON_IsObject(root))
		snprintf(err, KV_ERRLEN, "%.400s: the header is not a JSON "
			 "object", path);
	cJSON_Delete(root);
	*bytes = sum;
	return e;
}

int kv_ckpt_bytes(const char *config_path, enum kv_ckpt_source *src,
		  uint64_t *bytes, char *err)
{
	char path[4200];
	struct stat st;
	*src = KV_CKPT_NONE;
	*bytes = 0;
	if (beside(config_path, "model.safetensors.index.json", path,
		   sizeof path) && stat(path, &st) == 0) {
		*src = KV_CKPT_INDEX;
		return read_index(path, bytes, err);
	}
	if (beside(config_path, "model.safetensors", path, sizeof path) &&
	    stat(path, &st) == 0) {
		*src = KV_CKPT_SAFETENSORS;
		return read_header(path, bytes, err);
	}
	return 0;
}
