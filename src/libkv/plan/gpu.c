/*
 * gpu.c - reads configs/gpus.json. Each entry is checked field by field,
 * so a typo in the table is one line naming the entry and the field, not a
 * wrong answer later. Also this machine as such an entry: what /proc says
 * of it, what kvbench --profile measured, written as a table kvfit reads.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/json.h"
#include "kv/machine.h"
#include "kv/gpu.h"
#include "kv/model.h"

#define MAX_GPUS_BYTES (4u << 20)

/* A string field into buf; required fields must be non-empty. */
static int get_str(const cJSON *e, const char *f, bool required, char *buf,
		   size_t n, const char *path, size_t i, char *err)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(e, f);
	buf[0] = '\0';
	if (!it || cJSON_IsNull(it)) {
		if (required)
			return kv_fail(err, path, "gpus[%zu].%s: missing", i, f);
		return 0;
	}
	if (!cJSON_IsString(it) || !it->valuestring[0] ||
	    strlen(it->valuestring) >= n)
		return kv_fail(err, path,
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
			return kv_fail(err, path, "gpus[%zu].%s: missing", i, f);
		return 0;
	}
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) ||
	    it->valuedouble <= 0 || it->valuedouble > 1e15)
		return kv_fail(err, path,
			    "gpus[%zu].%s: must be a positive number", i, f);
	*out = it->valuedouble;
	return 0;
}

/* A fraction in (0, 1], or with zero_ok a share in [0, 1]; null or
 * absent gives 0. */
/* A share in [0, 1] (zero_ok), or a measured efficiency in (0,
 * KV_GPU_EFF_MAX]. */
static int get_unit(const cJSON *e, const char *f, bool zero_ok,
		    double *out, const char *path, size_t i, char *err)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(e, f);
	*out = 0;
	if (!it || cJSON_IsNull(it))
		return 0;
	double v = cJSON_IsNumber(it) ? it->valuedouble : NAN;
	if (zero_ok ? !(v >= 0 && v <= 1) : !(v > 0 && v <= KV_GPU_EFF_MAX))
		return kv_fail(err, path, "gpus[%zu].%s: must be %s", i, f,
			       zero_ok ? "a share in [0, 1]"
				       : "an efficiency in (0, 2]");
	*out = v;
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
		return kv_fail(err, path,
			    "gpus[%zu].threads: must be a whole number from "
			    "1 to %d",
			    i, KV_GPU_MAX_THREADS);
	*out = (uint32_t)it->valuedouble;
	return 0;
}

/* true or false; absent gives false. */
static int get_bool(const cJSON *e, const char *f, bool *out,
		    const char *path, size_t i, char *err)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(e, f);
	if (it && !cJSON_IsBool(it))
		return kv_fail(err, path, "gpus[%zu].%s: must be true or false",
			       i, f);
	*out = cJSON_IsTrue(it);
	return 0;
}

/* The optional fields: the links between GPUs, what a profile measured,
 * unified memory, and whose efficiencies the GPU borrows. */
static int entry_more(const cJSON *e, struct kv_gpu *g, const char *path,
		      size_t i, char *err)
{
	int r;
	if ((r = get_num(e, "interconnect_gbps", false, &g->interconnect_gbps,
			 path, i, err)) ||
	    (r = get_str(e, "interconnect", false, g->interconnect,
			 sizeof g->interconnect, path, i, err)) ||
	    (r = get_unit(e, "bandwidth_efficiency", false,
			  &g->bandwidth_efficiency, path, i, err)) ||
	    (r = get_unit(e, "flops_efficiency", false, &g->flops_efficiency,
			  path, i, err)) ||
	    (r = get_num(e, "decode_tflops", false, &g->decode_tflops, path,
			 i, err)) ||
	    (r = get_unit(e, "serial_fraction", true, &g->serial_fraction,
			  path, i, err)) ||
	    (r = get_num(e, "host_link_gbps", false, &g->host_link_gbps, path,
			 i, err)))
		return r;
	if ((r = get_bool(e, "fitted", &g->fitted, path, i, err)) ||
	    (r = get_bool(e, "unified_memory", &g->unified, path, i, err)) ||
	    (r = get_str(e, "efficiency_like", false, g->efficiency_like,
			 sizeof g->efficiency_like, path, i, err)))
		return r;
	return get_threads(e, &g->threads, path, i, err);
}

static int entry(const cJSON *e, struct kv_gpu *g, const char *path,
		 size_t i, char *err)
{
	int r;
	double mem;
	if (!cJSON_IsObject(e))
		return kv_fail(err, path, "gpus[%zu]: must be an object", i);
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
	    (r = get_num(e, "fp4_tflops", false, &g->fp4_tflops, path, i,
			 err)) ||
	    (r = entry_more(e, g, path, i, err)))
		return r;
	if (mem != floor(mem) || mem >= 18446744073709551616.0)
		return kv_fail(err, path,
			    "gpus[%zu].memory_bytes: must be a whole number "
			    "of bytes",
			    i);
	g->memory_bytes = (uint64_t)mem;
	const cJSON *al = cJSON_GetObjectItemCaseSensitive(e, "aliases");
	if (al && !cJSON_IsNull(al)) {
		if (!cJSON_IsArray(al) ||
		    cJSON_GetArraySize(al) > KV_GPU_ALIASES)
			return kv_fail(err, path,
				    "gpus[%zu].aliases: must be a list of at "
				    "most %d names",
				    i, KV_GPU_ALIASES);
		size_t k = 0;
		const cJSON *a;
		cJSON_ArrayForEach(a, al)
		{
			if (!cJSON_IsString(a) || !a->valuestring[0] ||
			    strlen(a->valuestring) >= sizeof g->aliases[0])
				return kv_fail(err, path,
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
		r = kv_fail(err, path, "gpus: must be a non-empty list of GPUs");
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
	/* a name must not mean two GPUs; a borrowed GPU's name, one */
	for (size_t i = 0; i < g->n; i++) {
		const struct kv_gpu *x = &g->gpu[i];
		if (x->efficiency_like[0] &&
		    !kv_gpus_lookup(g, x->efficiency_like)) {
			r = kv_fail(err, path,
				    "gpus[%zu].efficiency_like: '%s' is no "
				    "GPU of this table",
				    i, x->efficiency_like);
			goto done;
		}
		for (int a = -1; a < KV_GPU_ALIASES; a++) {
			const char *nm = a < 0 ? x->name : x->aliases[a];
			if (!nm[0])
				continue;
			const struct kv_gpu *y = kv_gpus_lookup(g, nm);
			if (y != x) {
				r = kv_fail(err, path,
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
		r = kv_fail(err, path, "larger than %u MiB", MAX_GPUS_BYTES >> 20);
	}
	fclose(f);
	if (!r)
		r = kv_gpus_parse(buf, len, path, out, err);
	free(buf);
	return r;
}

int kv_gpus_find(char *out, size_t n)
{
	return kv_config_file("gpus.json", out, n);
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

enum kv_compute kv_gpu_compute(const struct kv_gpu *g, enum kv_dtype w,
			       const struct kv_quant *q)
{
	bool fp8 = !g || g->fp8_tflops > 0, fp4 = !g || g->fp4_tflops > 0;
	enum kv_quant_fmt f = q ? q->fmt : KV_QUANT_NONE;
	switch (f) {
	case KV_QUANT_FP8:
	case KV_QUANT_CT_FP8:
		return fp8 ? KV_COMPUTE_FP8 : KV_COMPUTE_BF16;
	case KV_QUANT_NVFP4:
		return fp4 ? KV_COMPUTE_FP4 : KV_COMPUTE_BF16;
	case KV_QUANT_MXFP4:
		return fp4 && fp8 ? KV_COMPUTE_FP8 : KV_COMPUTE_BF16;
	case KV_QUANT_NONE:
	case KV_QUANT_UNKNOWN:
		break;
	default: /* weight-only: widened to 16 bits */
		return KV_COMPUTE_BF16;
	}
	bool w8 = w == KV_DTYPE_FP8 || w == KV_DTYPE_FP8_E5M2 ||
		  w == KV_DTYPE_INT8;
	return w8 && fp8 ? KV_COMPUTE_FP8 : KV_COMPUTE_BF16;
}

double kv_gpu_peak(const struct kv_gpu *g, enum kv_compute c)
{
	if (!g)
		return 0;
	double t = c == KV_COMPUTE_FP4   ? g->fp4_tflops
		   : c == KV_COMPUTE_FP8 ? g->fp8_tflops
					 : 0;
	return t > 0 ? t : g->bf16_tflops;
}

double kv_gpu_tflops(const struct kv_gpu *g, enum kv_dtype w)
{
	return kv_gpu_peak(g, kv_gpu_compute(g, w, NULL));
}

void kv_gpus_free(struct kv_gpus *g)
{
	if (!g)
		return;
	free(g->gpu);
	free(g);
}

/* --- this machine as a device --- */

/* The value of the first "model name" line of cpuinfo into buf, or
 * nothing. */
static void cpu_model(const char *cpuinfo, char *buf, size_t n)
{
	static const char key[] = "model name";
	for (const char *p = cpuinfo; p && (p = strstr(p, key));
	     p += sizeof key - 1) {
		if (p != cpuinfo && p[-1] != '\n')
			continue;
		const char *q = p + sizeof key - 1;
		q += strspn(q, " \t");
		if (*q != ':')
			continue;
		q++;
		q += strspn(q, " \t");
		size_t len = strcspn(q, "\n");
		while (len && isspace((unsigned char)q[len - 1]))
			len--;
		if (!len)
			continue;
		snprintf(buf, n, "%.*s", (int)len, q);
		return;
	}
}

int kv_gpu_local_parse(const char *cpuinfo, const char *meminfo,
		       struct kv_gpu *g)
{
	uint64_t mem;
	memset(g, 0, sizeof *g);
	snprintf(g->label, sizeof g->label, "this machine");
	cpu_model(cpuinfo, g->label, sizeof g->label);
	if (!meminfo || kv_meminfo_field(meminfo, "MemTotal", &mem) || !mem)
		return KV_EINVAL;
	g->memory_bytes = mem;
	return 0;
}

/* The first n - 1 bytes of a /proc file into buf; "" when unreadable. */
static void read_proc(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	size_t len = f ? fread(buf, 1, n - 1, f) : 0;
	buf[len] = '\0';
	if (f)
		fclose(f);
}

int kv_gpu_local(struct kv_gpu *g, char *err)
{
	/* the first processor's lines hold its model name */
	static char cpu[1 << 16];
	char mem[1 << 13];
	read_proc("/proc/cpuinfo", cpu, sizeof cpu);
	read_proc("/proc/meminfo", mem, sizeof mem);
	if (kv_gpu_local_parse(cpu, mem, g)) {
		snprintf(err, KV_ERRLEN,
			 "/proc/meminfo: no MemTotal; this machine's memory "
			 "is unknown");
		return KV_EIO;
	}
	return 0;
}

uint64_t kv_gpu_wired_default(uint64_t ram)
{
	/* Metal's recommendedMaxWorkingSetSize as llama.cpp logs it
	 * (ggml-metal, "recommendedMaxWorkingSetSize = %8.2f MB", in MiB
	 * before 2024 and in 10^6 B after), macOS 13 to 15: 16 GiB
	 * 10922.67 (abetlen/llama-cpp-python#687, M1 Pro), 32 GiB 21845.34
	 * (ollama/ollama#434, M2 Max; ggml-org/llama.cpp#2011, M1 Max), 64
	 * GiB 49152.00 (llama.cpp#1870, M1 Max), 96 GiB 73728.00
	 * (llama.cpp#3213, M2 Max); in 10^6 B, 36 GiB 28991.03 (an M4 Max,
	 * llama.cpp b7690) and 128 GiB 103079.22 (an M3 Max). Two thirds of
	 * 32 GiB is 21845.33 MiB: the logged .34 is the third rounded up to
	 * a page (16 KiB on Apple silicon; 4 KiB gives the same logs). No
	 * Mac has between 32 and 36 GiB, so where two thirds turn to three
	 * quarters in between is unobserved. */
	const uint64_t page = 16384;
	bool big = ram > 32ULL << 30;
	uint64_t num = big ? 3 : 2, den = big ? 4 : 3;
	/* ram x num / den rounded up, without overflow; then to the page */
	uint64_t w = ram / den * num + (ram % den * num + den - 1) / den;
	return (w + page - 1) / page * page;
}

int kv_gpu_usable(const struct kv_gpu *g, uint64_t wired_mb, uint64_t *out)
{
	*out = g->memory_bytes;
	if (!g->unified)
		return wired_mb ? KV_EINVAL : 0;
	if (!wired_mb) {
		*out = kv_gpu_wired_default(g->memory_bytes);
		return 0;
	}
	if (wired_mb > KV_GPU_WIRED_MAX_MB ||
	    wired_mb << 20 > g->memory_bytes)
		return KV_ERANGE;
	*out = wired_mb << 20;
	return 0;
}

double kv_gpu_sig(double x, int digits)
{
	if (!(x > 0) || !isfinite(x))
		return 0;
	int e = (int)floor(log10(x)) + 1 - digits;
	if (e >= 0) {
		double q = pow(10, e);
		return round(x / q) * q;
	}
	double p = pow(10, -e); /* exact below 10^22 */
	return round(x * p) / p;
}

/* The bytes a decode step of the entry reads per second: the probe's
 * rate times the share a step reaches. */
static double decode_rate(const struct kv_gpu *g)
{
	return g->bandwidth_gbps *
	       (g->bandwidth_efficiency > 0 ? g->bandwidth_efficiency : 1);
}

void kv_gpus_alias_local(struct kv_gpu *g, size_t n)
{
	size_t best = 0;
	for (size_t i = 1; i < n; i++)
		if (decode_rate(&g[i]) > decode_rate(&g[best]))
			best = i;
	for (int a = 0; n && a < KV_GPU_ALIASES; a++)
		if (!g[best].aliases[a][0]) {
			snprintf(g[best].aliases[a], sizeof g[best].aliases[a],
				 "local");
			return;
		}
}

/* Adds v as a number, or null when v is 0 (`zero_null`) or absent (not
 * added) when not. Returns false out of memory. */
static bool add_num(cJSON *o, const char *k, double v, bool zero_null)
{
	if (v > 0)
		return cJSON_AddNumberToObject(o, k, v) != NULL;
	return !zero_null || cJSON_AddNullToObject(o, k) != NULL;
}

/* Adds s as a string, null when empty. Returns false out of memory. */
static bool add_str(cJSON *o, const char *k, const char *s)
{
	return (*s ? cJSON_AddStringToObject(o, k, s)
		   : cJSON_AddNullToObject(o, k)) != NULL;
}

/* One entry's object into arr. Returns false out of memory. */
static bool add_entry(cJSON *arr, const struct kv_gpu *g, const char *note)
{
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddItemToArray(arr, o)) {
		cJSON_Delete(o);
		return false;
	}
	bool ok = cJSON_AddStringToObject(o, "name", g->name) != NULL;
	cJSON *al = g->aliases[0][0] ? cJSON_AddArrayToObject(o, "aliases")
				     : NULL;
	ok = ok && (al || !g->aliases[0][0]);
	for (int a = 0; ok && al && a < KV_GPU_ALIASES; a++) {
		if (!g->aliases[a][0])
			continue;
		cJSON *s = cJSON_CreateString(g->aliases[a]);
		if (!s || !cJSON_AddItemToArray(al, s)) {
			cJSON_Delete(s);
			ok = false;
		}
	}
	ok = ok && add_str(o, "label", g->label) &&
	     add_num(o, "memory_bytes", (double)g->memory_bytes, true) &&
	     add_num(o, "bandwidth_gbps", g->bandwidth_gbps, true) &&
	     add_num(o, "bf16_tflops", g->bf16_tflops, true) &&
	     add_num(o, "fp8_tflops", g->fp8_tflops, true) &&
	     add_num(o, "fp4_tflops", g->fp4_tflops, true) &&
	     add_num(o, "interconnect_gbps", g->interconnect_gbps, true) &&
	     add_str(o, "interconnect", g->interconnect) &&
	     add_num(o, "host_link_gbps", g->host_link_gbps, false) &&
	     add_num(o, "bandwidth_efficiency", g->bandwidth_efficiency,
		     false) &&
	     add_num(o, "flops_efficiency", g->flops_efficiency, false) &&
	     add_num(o, "decode_tflops", g->decode_tflops, false) &&
	     add_num(o, "serial_fraction", g->serial_fraction, false) &&
	     add_num(o, "threads", g->threads, false) &&
	     (!g->fitted || cJSON_AddTrueToObject(o, "fitted")) &&
	     (!g->unified || cJSON_AddTrueToObject(o, "unified_memory")) &&
	     (!g->efficiency_like[0] ||
	      cJSON_AddStringToObject(o, "efficiency_like",
				      g->efficiency_like)) &&
	     add_str(o, "source", g->source);
	if (ok && note)
		ok = cJSON_AddStringToObject(o, "note", note) != NULL;
	return ok;
}

char *kv_gpus_json(const struct kv_gpu *g, size_t n, const char *comment,
		   const char *note)
{
	cJSON *root = cJSON_CreateObject();
	bool ok = root && (!comment || cJSON_AddStringToObject(
					       root, "_comment", comment));
	cJSON *arr = ok ? cJSON_AddArrayToObject(root, "gpus") : NULL;
	ok = arr != NULL;
	for (size_t i = 0; ok && i < n; i++)
		ok = add_entry(arr, &g[i], note);
	char *text = ok ? cJSON_Print(root) : NULL, *out = NULL;
	cJSON_Delete(root);
	if (text && (out = malloc(strlen(text) + 2)))
		sprintf(out, "%s\n", text);
	cJSON_free(text);
	return out;
}

/* A temporary file beside path, opened: its name into *tmp (free()), its
 * descriptor returned; -1 with err said. */
static int tmp_beside(const char *path, char **tmp, char *err)
{
	struct stat st;
	*tmp = NULL;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, KV_ERRLEN, "%s: %s", path, strerror(EISDIR));
		return -1;
	}
	if (!(*tmp = malloc(strlen(path) + 8))) {
		snprintf(err, KV_ERRLEN, "%s: out of memory", path);
		return -1;
	}
	sprintf(*tmp, "%s.XXXXXX", path);
	int fd = mkstemp(*tmp);
	if (fd < 0) {
		snprintf(err, KV_ERRLEN, "%s: %s", path, strerror(errno));
		free(*tmp);
		*tmp = NULL;
	}
	return fd;
}

int kv_gpus_writable(const char *path, char *err)
{
	char *tmp;
	int fd = tmp_beside(path, &tmp, err);
	if (fd < 0)
		return KV_EIO;
	close(fd);
	unlink(tmp);
	free(tmp);
	return 0;
}

int kv_gpus_save(const char *path, const char *text, char *err)
{
	char *tmp;
	int fd = tmp_beside(path, &tmp, err);
	if (fd < 0)
		return KV_EIO;
	/* mkstemp's 0600, widened as the umask allows a new file */
	mode_t mask = umask(0);
	umask(mask);
	FILE *f = fdopen(fd, "w");
	int e = 0;
	errno = 0;
	if (!f || fchmod(fd, 0666 & ~mask) ||
	    fwrite(text, 1, strlen(text), f) != strlen(text) || fflush(f) ||
	    fsync(fd))
		e = errno ? errno : EIO;
	if (f ? fclose(f) : close(fd))
		e = e ? e : errno;
	if (!e && rename(tmp, path))
		e = errno;
	if (e) {
		unlink(tmp);
		snprintf(err, KV_ERRLEN, "%s: %s", path, strerror(e));
	}
	free(tmp);
	return e ? KV_EIO : 0;
}
