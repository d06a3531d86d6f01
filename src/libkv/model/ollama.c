/*
 * ollama.c - an Ollama model found offline: its name parsed as Ollama
 * parses it, its manifest in the store, the blob of its model layer, and
 * what its params layer sets (num_ctx, num_gpu).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/json.h"
#include "kv/ollama.h"

/* The most bytes of a manifest or a params layer read. */
#define MAX_SMALL (1 << 20)

/* Whether s[0 .. n) is a part of a name: [A-Za-z0-9._-], not empty, not
 * starting with '.'. */
static bool part(const char *s, size_t n)
{
	if (!n || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW"
			    "XYZ0123456789._-", s[i]))
			return false;
	return true;
}

bool kv_ollama_name(const char *s)
{
	size_t len = strlen(s), parts = 0;
	if (!len || len > 512 || (len > 5 && (!strcmp(s + len - 5, ".json") ||
					      !strcmp(s + len - 5, ".gguf"))))
		return false;
	const char *colon = strrchr(s, ':'), *slash = strrchr(s, '/');
	if (colon && slash && colon < slash)
		colon = NULL;
	size_t end = colon ? (size_t)(colon - s) : len;
	if (colon && !part(colon + 1, len - end - 1))
		return false;
	for (size_t a = 0, b; a <= end; a = b + 1) {
		const char *p = memchr(s + a, '/', end - a);
		b = p ? (size_t)(p - s) : end;
		if (!part(s + a, b - a) || ++parts > 3)
			return false;
	}
	return true;
}

const char *kv_ollama_store(char *buf, size_t n)
{
	const char *e = getenv("OLLAMA_MODELS"), *home = getenv("HOME");
	if (e && *e)
		snprintf(buf, n, "%s", e);
	else if (home && *home)
		snprintf(buf, n, "%s/.ollama/models", home);
	else
		return NULL;
	return buf;
}

/* A layer's blob path from its digest "sha256:HEX" (64 hex digits). */
static int blob_of(const char *store, const char *manifest,
		   const cJSON *digest, char *out, size_t n, char *err)
{
	const char *d = cJSON_GetStringValue(digest);
	if (!d || strncmp(d, "sha256:", 7) || strlen(d) != 71 ||
	    strspn(d + 7, "0123456789abcdef") != 64)
		return kv_fail(err, manifest,
			       "layers[].digest: not sha256:HEX, got %.80s",
			       d ? d : "(none)");
	snprintf(out, n, "%s/blobs/sha256-%s", store, d + 7);
	return 0;
}

/* A count the params layer sets: absent, or a whole number. */
static int param(const cJSON *p, const char *key, const char *path,
		 uint64_t max, bool *set, uint64_t *out, char *err)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(p, key);
	*set = it != NULL;
	if (it && !kv_json_whole(it, max, out))
		return kv_fail(err, path, "%s: not a count from 0 to %llu",
			       key, (unsigned long long)max);
	return 0;
}

/* What the params layer at path sets. */
static int read_params(const char *path, struct kv_ollama *o, char *err)
{
	char *text;
	size_t len;
	cJSON *p;
	int e = kv_file_read(path, MAX_SMALL, &text, &len, err);
	if (e)
		return e;
	e = kv_json_read(text, len, path, &p, err);
	free(text);
	if (e)
		return e;
	uint64_t ctx = 0, gpu = 0;
	bool set_ctx, set_gpu;
	if (!cJSON_IsObject(p))
		e = kv_fail(err, path, "the params layer: not a JSON object");
	else if (!(e = param(p, "num_ctx", path, 1ULL << 32, &set_ctx, &ctx,
			     err)) &&
		 !(e = param(p, "num_gpu", path, 1 << 20, &set_gpu, &gpu,
			     err))) {
		o->num_ctx = set_ctx ? ctx : 0;
		o->num_gpu = set_gpu ? (int64_t)gpu : -1;
	}
	cJSON_Delete(p);
	return e;
}

int kv_ollama_find(const char *name, const char *store, struct kv_ollama *o,
		   char *err)
{
	char host[520] = "registry.ollama.ai", ns[520] = "library",
	     model[520] = "", tag[520] = "latest", parts[3][520];
	*o = (struct kv_ollama){.num_gpu = -1};
	if (!kv_ollama_name(name)) {
		snprintf(err, KV_ERRLEN, "%s: not an Ollama model name", name);
		return KV_EINVAL;
	}
	const char *colon = strrchr(name, ':'), *slash = strrchr(name, '/');
	size_t end = colon && (!slash || colon > slash) ? (size_t)(colon - name)
							: strlen(name);
	if (end < strlen(name))
		snprintf(tag, sizeof tag, "%.512s", name + end + 1);
	int np = 0;
	for (size_t a = 0, b; a <= end && np < 3; a = b + 1, np++) {
		const char *p = memchr(name + a, '/', end - a);
		b = p ? (size_t)(p - name) : end;
		snprintf(parts[np], sizeof parts[np], "%.*s",
			 (int)(b - a < 512 ? b - a : 512), name + a);
	}
	snprintf(model, sizeof model, "%.512s", parts[np - 1]);
	if (np >= 2)
		snprintf(ns, sizeof ns, "%.512s", parts[np - 2]);
	if (np == 3)
		snprintf(host, sizeof host, "%.512s", parts[0]);
	snprintf(o->manifest, sizeof o->manifest, "%.900s/manifests/%s/%s/%s/%s",
		 store, host, ns, model, tag);
	struct stat st;
	if (stat(o->manifest, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, KV_ERRLEN,
			 "%s: the Ollama store %.900s has no manifest %s",
			 name, store, o->manifest + strlen(store) + 1);
		return KV_EIO;
	}
	char *text;
	size_t len;
	cJSON *m;
	int e = kv_file_read(o->manifest, MAX_SMALL, &text, &len, err);
	if (e)
		return e == KV_EIO ? KV_EINVAL : e;
	e = kv_json_read(text, len, o->manifest, &m, err);
	free(text);
	if (e)
		return e;
	const cJSON *layers = cJSON_GetObjectItemCaseSensitive(m, "layers"), *l;
	const cJSON *model_layer = NULL, *params = NULL;
	if (!cJSON_IsArray(layers))
		e = kv_fail(err, o->manifest, "layers: missing, or not a list");
	const cJSON *list = cJSON_IsArray(layers) ? layers : NULL;
	cJSON_ArrayForEach(l, list)
	{
		const char *t = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(l, "mediaType"));
		if (t && !strcmp(t, "application/vnd.ollama.image.model") &&
		    !model_layer)
			model_layer = l;
		else if (t && !strcmp(t, "application/vnd.ollama.image.params"))
			params = l;
	}
	char path[4096];
	if (!e && !model_layer)
		e = kv_fail(err, o->manifest,
			    "layers: no model layer "
			    "(application/vnd.ollama.image.model)");
	if (!e)
		e = blob_of(store, o->manifest,
			    cJSON_GetObjectItemCaseSensitive(model_layer,
							     "digest"),
			    o->blob, sizeof o->blob, err);
	if (!e && (stat(o->blob, &st) || !S_ISREG(st.st_mode)))
		e = kv_fail(err, o->manifest,
			    "the model layer's blob %s is missing", o->blob);
	if (!e && params &&
	    !(e = blob_of(store, o->manifest,
			  cJSON_GetObjectItemCaseSensitive(params, "digest"),
			  path, sizeof path, err)))
		e = read_params(path, o, err);
	cJSON_Delete(m);
	return e;
}
