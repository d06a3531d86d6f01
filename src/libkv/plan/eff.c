/*
 * eff.c - reads configs/efficiency.json, the measured efficiencies the
 * time model takes its rates from. Each field is checked, so a typo in the
 * table is one line naming the entry and the field, not a wrong time
 * later.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/json.h"
#include "kv/eff.h"
#include "kv/model.h"

#define MAX_EFF_BYTES (4u << 20)

/* A positive finite number (zero too where zero_ok) at o.f, "where.f" in
 * messages; absent: 0 where optional. */
static int num(const cJSON *o, const char *f, bool required, bool zero_ok,
	       double *out, const char *path, const char *where, char *err)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, f);
	*out = 0;
	if (!it)
		return required ? kv_fail(err, path, "%s.%s: missing", where, f)
				: 0;
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) ||
	    it->valuedouble < 0 || (!zero_ok && it->valuedouble == 0))
		return kv_fail(err, path, "%s.%s: must be a %s number", where, f,
			    zero_ok ? "non-negative" : "positive");
	*out = it->valuedouble;
	return 0;
}

/* A list of positive numbers, at most KV_CURVE_POINTS, into v; *n its
 * length (must be nx where nx > 0). */
static int list(const cJSON *it, double *v, unsigned *n, unsigned nx,
		bool increasing, const char *path, const char *where,
		char *err)
{
	const cJSON *x;
	unsigned k = 0;
	if (!cJSON_IsArray(it) || !cJSON_GetArraySize(it) ||
	    cJSON_GetArraySize(it) > KV_CURVE_POINTS)
		return kv_fail(err, path, "%s: must be a list of 1 to %d numbers",
			    where, KV_CURVE_POINTS);
	cJSON_ArrayForEach(x, it)
	{
		if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) ||
		    !(x->valuedouble > 0))
			return kv_fail(err, path, "%s[%u]: must be a positive "
				    "number", where, k);
		if (increasing && k && !(x->valuedouble > v[k - 1]))
			return kv_fail(err, path, "%s[%u]: must be above the one "
				    "before", where, k);
		v[k++] = x->valuedouble;
	}
	if (nx && k != nx)
		return kv_fail(err, path, "%s: must have %u numbers, as its x "
			    "has, got %u", where, nx, k);
	*n = k;
	return 0;
}

/* A curve whose x is `xs` and y `ys` of object o (both required). */
static int curve(const cJSON *o, const char *xs, const char *ys,
		 struct kv_curve *c, const char *path, const char *where,
		 char *err)
{
	char w[160];
	unsigned ny;
	snprintf(w, sizeof w, "%.100s.%.40s", where, xs);
	int e = list(cJSON_GetObjectItemCaseSensitive(o, xs), c->x, &c->n, 0,
		     true, path, w, err);
	snprintf(w, sizeof w, "%.100s.%.40s", where, ys);
	return e ? e
		 : list(cJSON_GetObjectItemCaseSensitive(o, ys), c->y, &ny,
			c->n, false, path, w, err);
}

static const char *const KERNELS[KV_KERNELS_COUNT] = {"vllm", "trtllm"};
static const char *const FORMATS[4] = {"bf16", "fp8", "fp4", "mxfp4"};

/* A GPU's curves per format by x (its "gemm" by "m" in the first three
 * FORMATS, its "moe" by "tpe" in all four), the name's object o: bf16's
 * required, each at most 1. */
static int formats(const cJSON *o, const char *name, const char *xs,
		   struct kv_curve *c, int nc, const char *path,
		   const char *where, char *err)
{
	char w[160];
	double x[KV_CURVE_POINTS];
	unsigned nx;
	snprintf(w, sizeof w, "%s.%s.%s", where, name, xs);
	if (!cJSON_IsObject(o))
		return kv_fail(err, path, "%s.%s: must be an object", where,
			    name);
	int e = list(cJSON_GetObjectItemCaseSensitive(o, xs), x, &nx, 0, true,
		     path, w, err);
	for (int k = 0; !e && k < nc; k++) {
		const cJSON *y = cJSON_GetObjectItemCaseSensitive(o, FORMATS[k]);
		if (!y && k)
			continue;
		snprintf(w, sizeof w, "%s.%s.%s", where, name, FORMATS[k]);
		if (!y)
			return kv_fail(err, path, "%s: missing", w);
		e = list(y, c[k].y, &c[k].n, nx, false, path, w, err);
		memcpy(c[k].x, x, sizeof x);
		for (unsigned i = 0; !e && i < nx; i++)
			if (c[k].y[i] > 1)
				e = kv_fail(err, path, "%s[%u]: must be at most 1",
					 w, i);
	}
	return e;
}

/* "moe", optional: its floor and curves by tokens per expert. */
static int moe(const cJSON *g, struct kv_eff *f, const char *path,
	       const char *where, char *err)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(g, "moe");
	char w[160];
	if (!o)
		return 0;
	int e = formats(o, "moe", "tpe", f->moe, 4, path, where, err);
	snprintf(w, sizeof w, "%s.moe", where);
	return e ? e
		 : num(o, "floor_us", true, true, &f->moe_floor_us, path, w,
		       err);
}

/* A prefill curve's optional ratio by its lengths, o.name, into r. */
static int head_ratio(const cJSON *o, const char *name,
		      const struct kv_curve *by, struct kv_curve *r,
		      const char *path, const char *where, char *err)
{
	const cJSON *y = cJSON_GetObjectItemCaseSensitive(o, name);
	char w[160];
	if (!y)
		return 0;
	snprintf(w, sizeof w, "%.100s.%s", where, name);
	memcpy(r->x, by->x, sizeof r->x);
	return list(y, r->y, &r->n, by->n, false, path, w, err);
}

/* "attn" and "prefill": per kernel family, each optional. */
static int kernels(const cJSON *g, struct kv_eff *f, const char *path,
		   const char *where, char *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(g, "attn");
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(g, "prefill");
	char w[160];
	int e = 0;
	if ((a && !cJSON_IsObject(a)) || (p && !cJSON_IsObject(p)))
		return kv_fail(err, path, "%s.%s: must be an object", where,
			    a && !cJSON_IsObject(a) ? "attn" : "prefill");
	for (int k = 0; !e && k < KV_KERNELS_COUNT; k++) {
		const cJSON *x = a ? cJSON_GetObjectItemCaseSensitive(
					     a, KERNELS[k])
				   : NULL;
		snprintf(w, sizeof w, "%s.attn.%s", where, KERNELS[k]);
		if (x && (e = num(x, "floor_us", true, true,
				  &f->attn_floor_us[k], path, w, err)))
			return e;
		if (x && (e = num(x, "bw", true, false, &f->attn_bw[k], path,
				  w, err)))
			return e;
		if (f->attn_bw[k] > 1)
			return kv_fail(err, path, "%s.bw: must be at most 1", w);
		x = p ? cJSON_GetObjectItemCaseSensitive(p, KERNELS[k]) : NULL;
		snprintf(w, sizeof w, "%s.prefill.%s", where, KERNELS[k]);
		if (x)
			e = curve(x, "seq", "eff", &f->prefill[k], path, w,
				  err);
		for (int h = 0; x && !e && h < 2; h++)
			e = head_ratio(x, h ? "hd256" : "hd64", &f->prefill[k],
				       &f->prefill_hd[k][h], path, w, err);
	}
	return e;
}

/* "allreduce_us": bytes, and a time for each of tp 2, 4 and 8 given. */
static int allreduce(const cJSON *g, struct kv_eff *f, const char *path,
		     const char *where, char *err)
{
	static const char *const tps[3] = {"2", "4", "8"};
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(g, "allreduce_us");
	char w[160];
	double b[KV_CURVE_POINTS];
	unsigned nb;
	if (!a)
		return 0;
	snprintf(w, sizeof w, "%s.allreduce_us.bytes", where);
	if (!cJSON_IsObject(a))
		return kv_fail(err, path, "%s.allreduce_us: must be an object",
			    where);
	int e = list(cJSON_GetObjectItemCaseSensitive(a, "bytes"), b, &nb, 0,
		     true, path, w, err);
	for (int k = 0; !e && k < 3; k++) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(a, tps[k]);
		if (!t)
			continue;
		snprintf(w, sizeof w, "%s.allreduce_us.%s", where, tps[k]);
		e = list(t, f->allreduce[k].y, &f->allreduce[k].n, nb, false,
			 path, w, err);
		memcpy(f->allreduce[k].x, b, sizeof b);
	}
	return e;
}

static int entry(const cJSON *g, struct kv_eff *f, const char *path,
		 size_t i, char *err)
{
	char where[32];
	const cJSON *it;
	snprintf(where, sizeof where, "gpus[%zu]", i);
	if (!cJSON_IsObject(g))
		return kv_fail(err, path, "%s: must be an object", where);
	const char *strs[2] = {"gpu", "source"};
	char *bufs[2] = {f->gpu, f->source};
	size_t lens[2] = {sizeof f->gpu, sizeof f->source};
	for (int k = 0; k < 2; k++) {
		it = cJSON_GetObjectItemCaseSensitive(g, strs[k]);
		if (!cJSON_IsString(it) || !it->valuestring[0] ||
		    strlen(it->valuestring) >= lens[k])
			return kv_fail(err, path, "%s.%s: must be a string of 1 "
				    "to %zu characters", where, strs[k],
				    lens[k] - 1);
		snprintf(bufs[k], lens[k], "%s", it->valuestring);
	}
	it = cJSON_GetObjectItemCaseSensitive(g, "gemm");
	if (!it)
		return kv_fail(err, path, "%s.gemm: missing", where);
	int e = formats(it, "gemm", "m", f->gemm, 3, path, where, err);
	if (!e)
		e = num(g, "gemm_floor_us", false, true, &f->gemm_floor_us,
			path, where, err);
	if (!e)
		e = kernels(g, f, path, where, err);
	if (!e)
		e = moe(g, f, path, where, err);
	return e ? e : allreduce(g, f, path, where, err);
}

/* "elementwise" and "engines". */
static int globals(const cJSON *root, struct kv_effs *e, const char *path,
		   char *err)
{
	const cJSON *el = cJSON_GetObjectItemCaseSensitive(root, "elementwise");
	const cJSON *en = cJSON_GetObjectItemCaseSensitive(root, "engines");
	const cJSON *x;
	int r;
	if (el && ((r = num(el, "us", true, true, &e->elem_us, path,
			    "elementwise", err)) ||
		   (r = num(el, "bw", true, false, &e->elem_bw, path,
			    "elementwise", err))))
		return r;
	if (e->elem_bw > 1)
		return kv_fail(err, path, "elementwise.bw: must be at most 1");
	if (en && (!cJSON_IsArray(en) || cJSON_GetArraySize(en) > 8))
		return kv_fail(err, path, "engines: must be a list of at most 8");
	cJSON_ArrayForEach(x, en)
	{
		char where[32];
		size_t k = e->nengines;
		snprintf(where, sizeof where, "engines[%zu]", k);
		struct kv_engine_cost *c = &e->engines[k];
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(x, "engine");
		if (!cJSON_IsString(n) || !n->valuestring[0] ||
		    strlen(n->valuestring) >= sizeof c->engine)
			return kv_fail(err, path, "%s.engine: must be a name of 1 "
				    "to 15 characters", where);
		snprintf(c->engine, sizeof c->engine, "%s", n->valuestring);
		if ((r = num(x, "step_us", true, true, &c->step_us, path,
			     where, err)) ||
		    (r = num(x, "layer_us", false, true, &c->layer_us, path,
			     where, err)) ||
		    (r = num(x, "request_us", false, true, &c->request_us,
			     path, where, err)) ||
		    (r = num(x, "harmony_us", false, true, &c->harmony_us,
			     path, where, err)))
			return r;
		e->nengines++;
	}
	return 0;
}

int kv_effs_parse(const char *json, size_t len, const char *path,
		  struct kv_effs **out, char *err)
{
	cJSON *root = NULL;
	struct kv_effs *e = NULL;
	*out = NULL;
	int r = kv_json_read(json, len, path, &root, err);
	if (r)
		return r;
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "gpus");
	if (!cJSON_IsObject(root) || !cJSON_IsArray(arr) ||
	    !cJSON_GetArraySize(arr)) {
		r = kv_fail(err, path, "gpus: must be a non-empty list");
		goto done;
	}
	size_t n = (size_t)cJSON_GetArraySize(arr);
	if (!(e = calloc(1, sizeof *e)) || !(e->eff = calloc(n, sizeof *e->eff))) {
		r = KV_ENOMEM;
		snprintf(err, KV_ERRLEN, "%s: out of memory", path);
		goto done;
	}
	const cJSON *g;
	cJSON_ArrayForEach(g, arr)
	{
		if ((r = entry(g, &e->eff[e->n], path, e->n, err)))
			goto done;
		e->n++;
	}
	r = globals(root, e, path, err);
done:
	cJSON_Delete(root);
	if (r) {
		kv_effs_free(e);
		return r;
	}
	*out = e;
	return 0;
}

int kv_effs_load(const char *path, struct kv_effs **out, char *err)
{
	char *text;
	size_t len;
	*out = NULL;
	int r = kv_file_read(path, MAX_EFF_BYTES, &text, &len, err);
	if (r)
		return r;
	r = kv_effs_parse(text, len, path, out, err);
	free(text);
	return r;
}

int kv_effs_find(char *out, size_t n)
{
	return kv_config_file("efficiency.json", out, n);
}

const struct kv_eff *kv_effs_lookup(const struct kv_effs *e, const char *gpu)
{
	for (size_t i = 0; e && gpu && i < e->n; i++)
		if (!strcmp(e->eff[i].gpu, gpu))
			return &e->eff[i];
	return NULL;
}

const struct kv_eff *kv_effs_nearest(const struct kv_effs *e,
				     const double (*rates)[2],
				     double bandwidth_gbps, double bf16_tflops)
{
	const struct kv_eff *best = NULL;
	double d0 = INFINITY;
	if (!(bandwidth_gbps > 0) || !(bf16_tflops > 0))
		return NULL;
	for (size_t i = 0; e && i < e->n; i++) {
		if (!(rates[i][0] > 0) || !(rates[i][1] > 0))
			continue;
		double a = log(rates[i][0] / bandwidth_gbps);
		double b = log(rates[i][1] / bf16_tflops);
		if (a * a + b * b < d0) {
			d0 = a * a + b * b;
			best = &e->eff[i];
		}
	}
	return best;
}

struct kv_engine_cost kv_effs_engine(const struct kv_effs *e,
				     const char *engine)
{
	for (size_t i = 0; e && engine && i < e->nengines; i++)
		if (!strcmp(e->engines[i].engine, engine))
			return e->engines[i];
	return (struct kv_engine_cost){0};
}

double kv_eff_prefill_at(const struct kv_eff *e, enum kv_kernels k,
			 double seq, double head_dim)
{
	if (!e->prefill[k].n)
		k = KV_KERNELS_COUNT - 1 - k;
	double eff = kv_curve_at(&e->prefill[k], seq);
	if (!(head_dim > 0) || head_dim == 128)
		return eff;
	const struct kv_curve *hd = &e->prefill_hd[k][head_dim > 128];
	double t = fabs(log2(head_dim / 128));
	return hd->n ? eff * (1 + (t < 1 ? t : 1) * (kv_curve_at(hd, seq) - 1))
		     : eff;
}

double kv_curve_at(const struct kv_curve *c, double x)
{
	unsigned i = 0;
	if (!c->n)
		return 1;
	if (x <= c->x[0] || c->n == 1)
		return c->y[0];
	if (x >= c->x[c->n - 1])
		return c->y[c->n - 1];
	while (c->x[i + 1] < x)
		i++;
	double f = log(x / c->x[i]) / log(c->x[i + 1] / c->x[i]);
	return c->y[i] + f * (c->y[i + 1] - c->y[i]);
}

void kv_effs_free(struct kv_effs *e)
{
	if (!e)
		return;
	free(e->eff);
	free(e);
}
