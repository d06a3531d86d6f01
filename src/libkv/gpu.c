/*
 * gpu.c - reads configs/gpus.json. Each entry is checked field by field,
 * so a typo in the table is one line naming the entry and the field, not a
 * wrong answer later.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "kv/gpu.h"
#include "kv/model.h"

#define MAX_GPUS_BYTES (4u << 20)

static int fail(char *err, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(err, KV_ERRLEN, "%.400s: %s", path, msg);
	return KV_EINVAL;
}

/* A string field into buf; required fields must be non-empty. */
static int get_str(const cJSON *e, const char *f, bool required, char *buf,
		   size_t n, const char *path, size_t i, char *err)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(e, f);
	buf[0] = '\0';
	if (!it || cJSON_IsNull(it)) {
		if (required)
			return fail(err, path, "gpus[%zu].%s: missing", i, f);
		return 0;
	}
	if (!cJSON_IsString(it) || !it->valuestring[0] ||
	    strlen(it->valuestring) >= n)
		return fail(err, path,
			    "gpus[%zu].%s: must be a string of 1 to %zu "
			    "characters",
			    i, f, n - 1);
	snprintf(buf, n, "%s", it->valuestring);
	return 0;
}

/* A positive finite number; null or absent gives 0 when optional. */
static int get_num(const cJSON *e, const char *f, bool required, double *out,
		   const char *path, size_t i, char *err)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(e, f);
	*out = 0;
	if (!it || cJSON_IsNull(it)) {
		if (required)
			return fail(err, path, "gpus[%zu].%s: missing", i, f);
		return 0;
	}
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) ||
	    it->valuedouble <= 0 || it->valuedouble > 1e15)
		return fail(err, path,
			    "gpus[%zu].%s: must be a positive number", i, f);
	*out = it->valuedouble;
	return 0;
}

/* A fraction in (0, 1]; null or absent gives 0. */
static int get_frac(const cJSON *e, const char *f, double *out,
		    const char *path, size_t i, char *err)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(e, f);
	*out = 0;
	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsNumber(it) || !(it->valuedouble > 0) ||
	    !(it->valuedouble <= 1))
		return fail(err, path,
			    "gpus[%zu].%s: must be a fraction in (0, 1]", i,
			    f);
	*out = it->valuedouble;
	return 0;
}

/* A CPU profile's thread count; null or absent gives 0. */
static int get_threads(const cJSON *e, uint32_t *out, const char *path,
		       size_t i, char *err)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(e, "threads");
	*out = 0;
	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsNumber(it) || !(it->valuedouble >= 1) ||
	    it->valuedouble > KV_GPU_MAX_THREADS ||
	    it->valuedouble != floor(it->valuedouble))
		return fail(err, path,
			    "gpus[%zu].threads: must be a whole number from "
			    "1 to %d",
			    i, KV_GPU_MAX_THREADS);
	*out = (uint32_t)it->valuedouble;
	return 0;
}

/* The optional fields: the links between GPUs, and what a profile
 * measured. */
static int entry_more(const cJSON *e, struct kv_gpu *g, const char *path,
		      size_t i, char *err)
{
	int r;
	if ((r = get_num(e, "interconnect_gbps", false, &g->interconnect_gbps,
			 path, i, err)) ||
	    (r = get_str(e, "interconnect", false, g->interconnect,
			 sizeof g->interconnect, path, i, err)) ||
	    (r = get_frac(e, "bandwidth_efficiency",
			  &g->bandwidth_efficiency, path, i, err)) ||
	    (r = get_frac(e, "flops_efficiency", &g->flops_efficiency, path,
			  i, err)))
		return r;
	return get_threads(e, &g->threads, path, i, err);
}

static int entry(const cJSON *e, struct kv_gpu *g, const char *path,
		 size_t i, char *err)
{
	int r;
	double mem;
	if (!cJSON_IsObject(e))
		return fail(err, path, "gpus[%zu]: must be an object", i);
	if ((r = get_str(e, "name", true, g->name, sizeof g->name, path, i,
			 err)) ||
	    (r = get_str(e, "label", false, g->label, sizeof g->label, path,
			 i, err)) ||
	    (r = get_str(e, "source", true, g->source, sizeof g->source, path,
			 i, err)) ||
	    (r = get_num(e, "memory_bytes", true, &mem, path, i, err)) ||
	    (r = get_num(e, "bandwidth_gbps", true, &g->bandwidth_gbps, path,
			 i, err)) ||
	    (r = get_num(e, "bf16_tflops", false, &g->bf16_tflops, path, i,
			 err)) ||
	    (r = get_num(e, "fp8_tflops", false, &g->fp8_tflops, path, i,
			 err)) ||
	    (r = entry_more(e, g, path, i, err)))
		return r;
	if (mem != floor(mem) || mem >= 18446744073709551616.0)
		return fail(err, path,
			    "gpus[%zu].memory_bytes: must be a whole number "
			    "of bytes",
			    i);
	g->memory_bytes = (uint64_t)mem;
	const cJSON *al = cJSON_GetObjectItemCaseSensitive(e, "aliases");
	if (al && !cJSON_IsNull(al)) {
		if (!cJSON_IsArray(al) ||
		    cJSON_GetArraySize(al) > KV_GPU_ALIASES)
			return fail(err, path,
				    "gpus[%zu].aliases: must be a list of at "
				    "most %d names",
				    i, KV_GPU_ALIASES);
		size_t k = 0;
		const cJSON *a;
		cJSON_ArrayForEach(a, al)
		{
			if (!cJSON_IsString(a) || !a->valuestring[0] ||
			    strlen(a->valuestring) >= sizeof g->aliases[0])
				return fail(err, path,
					    "gpus[%zu].aliases[%zu]: must be "
					    "a name of 1 to 31 characters",
					    i, k);
			snprintf(g->aliases[k], sizeof g->aliases[k], "%s",
				 a->valuestring);
			k++;
		}
	}
	return 0;
}

int kv_gpus_parse(const char *json, size_t len, const char *path,
		  struct kv_gpus **out, char *err)
{
	*out = NULL;
	cJSON *root = NULL;
	int r = kv_json_read(json, len, path, &root, err);
	if (r)
		return r;
	struct kv_gpus *g = NULL;
	const cJSON *arr = cJSON_IsObject(root)
				   ? cJSON_GetObjectItemCaseSensitive(root,
								      "gpus")
				   : root;
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0) {
		r = fail(err, path, "gpus: must be a non-empty list of GPUs");
		goto done;
	}
	size_t n = (size_t)cJSON_GetArraySize(arr);
	g = calloc(1, sizeof *g);
	if (!g || !(g->gpu = calloc(n, sizeof *g->gpu))) {
		r = KV_ENOMEM;
		snprintf(err, KV_ERRLEN, "%s: out of memory", path);
		goto done;
	}
	const cJSON *e;
	cJSON_ArrayForEach(e, arr)
	{
		if ((r = entry(e, &g->gpu[g->n], path, g->n, err)))
			goto done;
		g->n++;
	}
	/* a name must not mean two GPUs */
	for (size_t i = 0; i < g->n; i++) {
		const struct kv_gpu *x = &g->gpu[i];
		for (int a = -1; a < KV_GPU_ALIASES; a++) {
			const char *nm = a < 0 ? x->name : x->aliases[a];
			if (!nm[0])
				continue;
			const struct kv_gpu *y = kv_gpus_lookup(g, nm);
			if (y != x) {
				r = fail(err, path,
					 "gpus[%zu]: name '%s' is already "
					 "used by '%s'",
					 i, nm, y->name);
				goto done;
			}
		}
	}
done:
	cJSON_Delete(root);
	if (r) {
		kv_gpus_free(g);
		return r;
	}
	*out = g;
	return 0;
}

int kv_gpus_load(const char *path, struct kv_gpus **out, char *err)
{
	*out = NULL;
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, KV_ERRLEN, "%s: %s", path, strerror(errno));
		return KV_EIO;
	}
	char *buf = malloc(MAX_GPUS_BYTES);
	if (!buf) {
		fclose(f);
		snprintf(err, KV_ERRLEN, "%s: out of memory", path);
		return KV_ENOMEM;
	}
	size_t len = fread(buf, 1, MAX_GPUS_BYTES, f);
	int r = 0;
	if (ferror(f)) {
		r = KV_EIO;
		snprintf(err, KV_ERRLEN, "%s: %s", path, strerror(errno));
	} else if (len == MAX_GPUS_BYTES) {
		r = fail(err, path, "larger than %u MiB", MAX_GPUS_BYTES >> 20);
	}
	fclose(f);
	if (!r)
		r = kv_gpus_parse(buf, len, path, out, err);
	free(buf);
	return r;
}

int kv_gpus_find(char *out, size_t n)
{
	const char *dir;
	for (size_t i = 0; (dir = kv_config_dir(i)); i++) {
		struct stat st;
		snprintf(out, n, "%s/gpus.json", dir);
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
	}
	snprintf(out, n, "gpus.json");
	return KV_EIO;
}

/* Names compare case-insensitively, with '_' and ' ' read as '-'. */
static bool same(const char *a, const char *b)
{
	for (;; a++, b++) {
		int x = tolower((unsigned char)*a), y = tolower((unsigned char)*b);
		if (x == '_' || x == ' ')
			x = '-';
		if (y == '_' || y == ' ')
			y = '-';
		if (x != y)
			return false;
		if (!x)
			return true;
	}
}

const struct kv_gpu *kv_gpus_lookup(const struct kv_gpus *g,
				    const char *name)
{
	for (size_t i = 0; g && i < g->n; i++) {
		if (same(g->gpu[i].name, name))
			return &g->gpu[i];
		for (int a = 0; a < KV_GPU_ALIASES; a++)
			if (g->gpu[i].aliases[a][0] &&
			    same(g->gpu[i].aliases[a], name))
				return &g->gpu[i];
	}
	return NULL;
}

char *kv_gpus_list(const struct kv_gpus *g, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; g && i < g->n; i++) {
		int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
				 g->gpu[i].name);
		if (w < 0 || (size_t)w >= n - len)
			break;
		len += (size_t)w;
	}
	return buf;
}

double kv_gpu_tflops(const struct kv_gpu *g, enum kv_dtype w)
{
	const struct kv_dtype_info *d = kv_dtype_info(w);
	if (!g || !d)
		return 0;
	/* bits per value below 16: 8-bit and block-quantized formats */
	bool small = (uint64_t)d->block_bytes * 8 < (uint64_t)d->block * 16;
	return small && g->fp8_tflops > 0 ? g->fp8_tflops : g->bf16_tflops;
}

void kv_gpus_free(struct kv_gpus *g)
{
	if (!g)
		return;
	free(g->gpu);
	free(g);
}
