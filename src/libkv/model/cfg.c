/*
 * cfg.c - the readers every field of a config goes through (struct cfg,
 * model_int.h): each checks the field's type, sign, wholeness and range
 * and writes the message a person reads when it is wrong. A wrapper's
 * text_config is read before its root; a nested object (DBRX's
 * attn_config) is named in front of its fields.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/json.h"
#include "model_int.h"

int cfg_fail(struct cfg *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(c->err, KV_ERRLEN, "%.400s: %s", c->path, msg);
	return KV_EINVAL;
}

/* The item of a field, or NULL; *where gets its printable name. */
const cJSON *cfg_find(const struct cfg *c, const char *field, char *where,
		      size_t n)
{
	const cJSON *it = NULL;
	if (c->text != c->root) {
		it = cJSON_GetObjectItemCaseSensitive(c->text, field);
		if (it) {
			snprintf(where, n, "%s.%s", c->text_name, field);
			return it;
		}
	}
	it = cJSON_GetObjectItemCaseSensitive(c->root, field);
	snprintf(where, n, "%s%s%s", c->prefix ? c->prefix : "",
		 c->prefix ? "." : "", field);
	return it;
}

/* The field's name as a message should print it when it is absent. */
void cfg_absent(const struct cfg *c, const char *field, char *where, size_t n)
{
	if (c->text != c->root)
		snprintf(where, n, "%s.%s", c->text_name, field);
	else
		snprintf(where, n, "%s%s%s", c->prefix ? c->prefix : "",
			 c->prefix ? "." : "", field);
}

/* A JSON value as a message shows it after "got". */
void cfg_show(const cJSON *it, char *buf, size_t n)
{
	if (cJSON_IsNumber(it))
		snprintf(buf, n, "%.17g", it->valuedouble);
	else if (cJSON_IsString(it))
		snprintf(buf, n, "\"%.60s\"", it->valuestring);
	else if (cJSON_IsBool(it))
		snprintf(buf, n, "%s", cJSON_IsTrue(it) ? "true" : "false");
	else if (cJSON_IsNull(it))
		snprintf(buf, n, "null");
	else if (cJSON_IsArray(it))
		snprintf(buf, n, "an array");
	else
		snprintf(buf, n, "an object");
}

/*
 * The item of a field that must be of one of `kinds` (K_* or'ed): *out is
 * NULL when the field is absent or null. A field of another kind is
 * KV_EINVAL, the message naming the field, the kinds it may take and what
 * it found. Every object or list a config holds is read through here; the
 * scalar readers below (cfg_uint, cfg_str, cfg_bool, ...) check theirs the
 * same way.
 */
int cfg_kind(struct cfg *c, const char *field, unsigned kinds,
	     const cJSON **out)
{
	static const struct {
		unsigned kind;
		const char *name;
		cJSON_bool (*is)(const cJSON *);
	} K[] = {{K_OBJ, "an object", cJSON_IsObject},
		 {K_LIST, "a list", cJSON_IsArray},
		 {K_STR, "a string", cJSON_IsString},
		 {K_NUM, "a number", cJSON_IsNumber},
		 {K_BOOL, "true or false", cJSON_IsBool}};
	char where[128], want[96] = "", got[96];
	const cJSON *it = cfg_find(c, field, where, sizeof where);
	*out = NULL;
	if (!it || cJSON_IsNull(it))
		return 0;
	size_t len = 0;
	for (size_t i = 0; i < sizeof K / sizeof *K; i++) {
		if (!(kinds & K[i].kind))
			continue;
		if (K[i].is(it)) {
			*out = it;
			return 0;
		}
		len += (size_t)snprintf(want + len, sizeof want - len, "%s%s",
					len ? " or " : "", K[i].name);
	}
	cfg_show(it, got, sizeof got);
	return cfg_fail(c, "%s: must be %s, got %s", where, want, got);
}

/* A view of a nested object (DBRX's attn_config): *has says whether the
 * field is there. Returns 0, or KV_EINVAL when it is not an object. */
int cfg_nested(struct cfg *c, const char *name, struct cfg *sub, bool *has)
{
	const cJSON *it;
	int e = cfg_kind(c, name, K_OBJ, &it);
	*has = it != NULL;
	if (e || !it)
		return e;
	*sub = *c;
	sub->root = sub->text = it;
	sub->text_name = NULL;
	sub->prefix = name;
	return 0;
}

bool cfg_has(const struct cfg *c, const char *field)
{
	char where[128];
	const cJSON *it = cfg_find(c, field, where, sizeof where);
	return it && !cJSON_IsNull(it);
}

/* First of several names that is present (not null), or NULL. */
const char *cfg_first(const struct cfg *c, const char *const *names)
{
	for (; *names; names++)
		if (cfg_has(c, *names))
			return *names;
	return NULL;
}

/*
 * Reads a whole number in [lo, hi] from a JSON item. `what` names it in
 * messages. Returns 0 or KV_EINVAL with the message written.
 */
int cfg_check_uint(struct cfg *c, const cJSON *it, const char *what,
		   uint64_t lo, uint64_t hi, uint64_t *out)
{
	char got[96];
	cfg_show(it, got, sizeof got);
	if (!cJSON_IsNumber(it))
		return cfg_fail(c, "%s: must be a number, got %s", what, got);
	double v = it->valuedouble;
	if (!isfinite(v) || v != floor(v))
		return cfg_fail(c, "%s: must be a whole number, got %s", what,
				got);
	if (v < 0)
		return cfg_fail(c, "%s: must not be negative, got %s", what,
				got);
	if (v < (double)lo)
		return cfg_fail(c, "%s: must be at least %llu, got %s", what,
				(unsigned long long)lo, got);
	if (v > (double)hi)
		return cfg_fail(c, "%s: absurd value, at most %llu, got %s",
				what, (unsigned long long)hi, got);
	*out = (uint64_t)v;
	return 0;
}

/*
 * Reads an unsigned field. Absent or null: KV_EINVAL ("missing") when
 * `required`, else *out = def and *given = false.
 */
int cfg_uint(struct cfg *c, const char *field, bool required, uint64_t def,
	     uint64_t lo, uint64_t hi, uint64_t *out)
{
	char where[128];
	const cJSON *it = cfg_find(c, field, where, sizeof where);
	if (!it || cJSON_IsNull(it)) {
		if (required) {
			cfg_absent(c, field, where, sizeof where);
			return cfg_fail(c,
					"%s: missing; a field that defines the "
					"model's shape is never guessed",
					where);
		}
		*out = def;
		return 0;
	}
	return cfg_check_uint(c, it, where, lo, hi, out);
}

int cfg_u32(struct cfg *c, const char *field, bool required, uint64_t def,
	    uint64_t lo, uint64_t hi, uint32_t *out)
{
	uint64_t v;
	int e = cfg_uint(c, field, required, def, lo, hi, &v);
	if (!e)
		*out = (uint32_t)v;
	return e;
}

/* Like cfg_uint, for the first present of several names (aliases). */
int cfg_uint_any(struct cfg *c, const char *const *names, bool required,
		 uint64_t def, uint64_t lo, uint64_t hi, uint64_t *out)
{
	const char *f = cfg_first(c, names);
	return cfg_uint(c, f ? f : names[0], required, def, lo, hi, out);
}

/* Like cfg_uint, where a config may also give one value per layer
 * (Hunyuan's moe_topk, moe_intermediate_size): a list must repeat one
 * value, which is what the model keeps. */
int cfg_uint_same(struct cfg *c, const char *field, uint64_t def, uint64_t lo,
		  uint64_t hi, uint64_t *out)
{
	char where[128], what[160];
	const cJSON *it = cfg_find(c, field, where, sizeof where), *el;
	if (!it || !cJSON_IsArray(it) || cJSON_GetArraySize(it) == 0)
		return cfg_uint(c, field, false, def, lo, hi, out);
	uint32_t i = 0;
	cJSON_ArrayForEach(el, it)
	{
		uint64_t v = 0;
		snprintf(what, sizeof what, "%s[%u]", where, i);
		int e = cfg_check_uint(c, el, what, lo, hi, &v);
		if (e)
			return e;
		if (i++ == 0)
			*out = v;
		else if (v != *out)
			return cfg_fail(c,
					"%s: layers that differ here are not "
					"read, got %llu after %llu",
					what, (unsigned long long)v,
					(unsigned long long)*out);
	}
	return 0;
}

int cfg_bool(struct cfg *c, const char *field, bool def, bool *out)
{
	char where[128], got[96];
	const cJSON *it = cfg_find(c, field, where, sizeof where);
	if (!it || cJSON_IsNull(it)) {
		*out = def;
		return 0;
	}
	if (!cJSON_IsBool(it)) {
		cfg_show(it, got, sizeof got);
		return cfg_fail(c, "%s: must be true or false, got %s", where,
				got);
	}
	*out = cJSON_IsTrue(it);
	return 0;
}

int cfg_double(struct cfg *c, const char *field, double def, double *out)
{
	char where[128], got[96];
	const cJSON *it = cfg_find(c, field, where, sizeof where);
	if (!it || cJSON_IsNull(it)) {
		*out = def;
		return 0;
	}
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) ||
	    it->valuedouble < 0) {
		cfg_show(it, got, sizeof got);
		return cfg_fail(c, "%s: must be a non-negative number, got %s",
				where, got);
	}
	*out = it->valuedouble;
	return 0;
}

/* A string field, or NULL when absent or null; KV_EINVAL for another type. */
int cfg_str(struct cfg *c, const char *field, const char **out)
{
	char where[128], got[96];
	const cJSON *it = cfg_find(c, field, where, sizeof where);
	*out = NULL;
	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsString(it)) {
		cfg_show(it, got, sizeof got);
		return cfg_fail(c, "%s: must be a string, got %s", where, got);
	}
	*out = it->valuestring;
	return 0;
}

/*
 * A per-layer list of whole numbers (OpenELM's num_kv_heads) or one number
 * for every layer. Fills vals[n_layers].
 */
int cfg_uint_list(struct cfg *c, const char *field, uint32_t n_layers,
		  uint64_t lo, uint64_t hi, uint32_t *vals)
{
	char where[128], what[160], got[96];
	const cJSON *it = cfg_find(c, field, where, sizeof where);
	if (!it || cJSON_IsNull(it)) {
		cfg_absent(c, field, where, sizeof where);
		return cfg_fail(c,
				"%s: missing; the model's heads cannot be "
				"guessed",
				where);
	}
	if (cJSON_IsNumber(it)) {
		uint64_t v;
		int e = cfg_check_uint(c, it, where, lo, hi, &v);
		for (uint32_t i = 0; !e && i < n_layers; i++)
			vals[i] = (uint32_t)v;
		return e;
	}
	if (!cJSON_IsArray(it)) {
		cfg_show(it, got, sizeof got);
		return cfg_fail(c, "%s: must be a list of numbers, got %s",
				where, got);
	}
	int len = cJSON_GetArraySize(it);
	if (len != (int)n_layers)
		return cfg_fail(c, "%s: must list one value per layer (%u), "
				"got %d", where, n_layers, len);
	uint32_t i = 0;
	const cJSON *el;
	cJSON_ArrayForEach(el, it)
	{
		uint64_t v;
		snprintf(what, sizeof what, "%s[%u]", where, i);
		int e = cfg_check_uint(c, el, what, lo, hi, &v);
		if (e)
			return e;
		vals[i++] = (uint32_t)v;
	}
	return 0;
}

/*
 * A list of layer indices (Bamba's attn_layer_indices, Llama 4's moe_layers,
 * Qwen's mlp_only_layers, Mllama's cross_attention_layers), counted from
 * `base` (Kimi Linear's from 1): sets mark[i] for each layer listed.
 * Returns 1 when the field is absent, 0 when read, or KV_EINVAL for a
 * field that is not a list or an index that is not a layer.
 */
int cfg_layer_list(struct cfg *c, const char *field, uint32_t n, uint32_t base,
		   bool *mark)
{
	char where[128];
	const cJSON *it, *el;
	int e = cfg_kind(c, field, K_LIST, &it);
	if (e || !it)
		return e ? e : 1;
	cfg_find(c, field, where, sizeof where);
	cJSON_ArrayForEach(el, it)
	{
		uint64_t li = 0;
		if ((e = cfg_check_uint(c, el, where, base, n - 1 + base, &li)))
			return e;
		mark[li - base] = true;
	}
	return 0;
}

bool cfg_one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/*
 * The kind of layer a layer_types / layers_block_type entry names. Kinds
 * that keep a fixed state and no KV (Mamba, linear attention) map to NONE;
 * anything unknown is an error rather than a guess.
 */
int cfg_layer_kind(const char *s, enum kv_attn *out)
{
	static const char *const full[] = {"full_attention", "attention",
					   "global", "global_attention",
					   "full", "hybrid", NULL};
	static const char *const sliding[] = {"sliding_attention", "sliding",
					      "local", "local_attention",
					      "sliding_window", NULL};
	static const char *const chunked[] = {"chunked_attention", "chunked",
					      NULL};
	static const char *const none[] = {
		"mamba", "mamba2", "linear_attention", "linear", "ssm",
		"conv", "short_conv", "recurrent", "rwkv", "deltanet",
		"gated_deltanet", "retention", "hybrid_ssm", "moe", "mlp",
		NULL};
	if (cfg_one_of(s, full))
		*out = KV_ATTN_FULL;
	else if (cfg_one_of(s, sliding))
		*out = KV_ATTN_SLIDING;
	else if (cfg_one_of(s, chunked))
		*out = KV_ATTN_CHUNKED;
	else if (cfg_one_of(s, none))
		*out = KV_ATTN_NONE;
	else
		return KV_EINVAL;
	return 0;
}

/* Reads a layer_types-style list into kinds[]; 1 when the field is absent. */
int cfg_kinds(struct cfg *c, const char *field, uint32_t n, enum kv_attn *kinds)
{
	char where[128], got[96];
	const cJSON *it = cfg_find(c, field, where, sizeof where);
	if (!it || cJSON_IsNull(it))
		return 1;
	if (!cJSON_IsArray(it)) {
		cfg_show(it, got, sizeof got);
		return cfg_fail(c, "%s: must be a list of layer kinds, got %s",
				where, got);
	}
	int len = cJSON_GetArraySize(it);
	/* Step 3.5 lists its multi-token-prediction layers too, after the
	 * model's own */
	uint64_t mtp = 0;
	int e = len > (int)n ? cfg_uint(c, "num_nextn_predict_layers", false, 0,
					0, MAX_LAYERS, &mtp)
			     : 0;
	if (e)
		return e;
	if (len != (int)n && (uint64_t)len != n + mtp)
		return cfg_fail(c,
				"%s: must list one kind per layer (%u), got %d",
				where, n, len);
	uint32_t i = 0;
	const cJSON *el;
	cJSON_ArrayForEach(el, it)
	{
		if (i == n)
			break;
		if (!cJSON_IsString(el) ||
		    cfg_layer_kind(el->valuestring, &kinds[i])) {
			cfg_show(el, got, sizeof got);
			return cfg_fail(c, "%s[%u]: unknown layer kind, got %s",
					where, i, got);
		}
		i++;
	}
	return 0;
}

int cfg_read_beside(const char *config_path, const char *name,
		    size_t max_bytes,
		    int (*read)(struct cfg *c, struct kv_model *m),
		    struct kv_model *m, char *err)
{
	char path[4200], *text;
	const char *base = strrchr(config_path, '/');
	struct stat st;
	cJSON *root = NULL;
	size_t len;
	if (strcmp(base ? base + 1 : config_path, "config.json") ||
	    !kv_config_beside(config_path, name, path, sizeof path) ||
	    stat(path, &st))
		return 0;
	int e = kv_file_read(path, max_bytes, &text, &len, err);
	if (e)
		return e;
	e = kv_json_read(text, len, path, &root, err);
	free(text);
	if (!e) {
		struct cfg c = {root, root, NULL, path, err, NULL};
		char got[96];
		cfg_show(root, got, sizeof got);
		e = cJSON_IsObject(root)
			    ? read(&c, m)
			    : cfg_fail(&c, "not a JSON object, got %s", got);
	}
	cJSON_Delete(root);
	return e;
}
