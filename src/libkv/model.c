/*
 * model.c - reads a Hugging Face config.json into a list of layers.
 *
 * One walk over the JSON, family by family. Every field goes through one of
 * the get_* readers below, which check type, sign, wholeness and range and
 * write the message a person reads when a field is wrong. The defaults of
 * absent fields are those of Transformers' config class for the model_type
 * (see kvtools(7)); the fields that define the shape never get one.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "kv/model.h"

#define MAX_CONFIG_BYTES (64u << 20)

/* The largest value each field accepts: far above any published model,
 * small enough that no per-token product can overflow 64 bits. */
#define MAX_LAYERS 10000
#define MAX_HIDDEN (1ULL << 20)
#define MAX_HEADS (1ULL << 16)
#define MAX_HEAD_DIM (1ULL << 16)
#define MAX_FFN (1ULL << 24)
#define MAX_VOCAB (1ULL << 26)
#define MAX_POS (1ULL << 40)
#define MAX_EXPERTS (1ULL << 20)

/* Where fields are read: the wrapper's text_config first, then the root. */
struct cfg {
	const cJSON *root;
	const cJSON *text;     /* == root when the config is not a wrapper */
	const char *text_name; /* "text_config", or NULL */
	const char *path;
	char *err;
	const char *prefix;    /* a nested object's name ("attn_config"), or
				* NULL: printed before the fields read */
};

static int fail(struct cfg *c, const char *fmt, ...)
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
static const cJSON *find(const struct cfg *c, const char *field, char *where,
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
static void absent_name(const struct cfg *c, const char *field, char *where,
			size_t n)
{
	if (c->text != c->root)
		snprintf(where, n, "%s.%s", c->text_name, field);
	else
		snprintf(where, n, "%s%s%s", c->prefix ? c->prefix : "",
			 c->prefix ? "." : "", field);
}

/* A JSON value as a message shows it after "got". */
static void show(const cJSON *it, char *buf, size_t n)
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

/* The kinds a field may take, for get_kind(). */
enum { K_OBJ = 1, K_LIST = 2, K_STR = 4, K_NUM = 8, K_BOOL = 16 };

/*
 * The item of a field that must be of one of `kinds` (K_* or'ed): *out is
 * NULL when the field is absent or null. A field of another kind is
 * KV_EINVAL, the message naming the field, the kinds it may take and what
 * it found. Every object or list a config holds is read through here; the
 * scalar readers below (get_uint, get_str, get_bool, ...) check theirs the
 * same way.
 */
static int get_kind(struct cfg *c, const char *field, unsigned kinds,
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
	const cJSON *it = find(c, field, where, sizeof where);
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
	show(it, got, sizeof got);
	return fail(c, "%s: must be %s, got %s", where, want, got);
}

/* A view of a nested object (DBRX's attn_config): *has says whether the
 * field is there. Returns 0, or KV_EINVAL when it is not an object. */
static int nested(struct cfg *c, const char *name, struct cfg *sub,
		  bool *has)
{
	const cJSON *it;
	int e = get_kind(c, name, K_OBJ, &it);
	*has = it != NULL;
	if (e || !it)
		return e;
	*sub = *c;
	sub->root = sub->text = it;
	sub->text_name = NULL;
	sub->prefix = name;
	return 0;
}

static bool present(const struct cfg *c, const char *field)
{
	char where[128];
	const cJSON *it = find(c, field, where, sizeof where);
	return it && !cJSON_IsNull(it);
}

/* First of several names that is present (not null), or NULL. */
static const char *first_of(const struct cfg *c, const char *const *names)
{
	for (; *names; names++)
		if (present(c, *names))
			return *names;
	return NULL;
}

/*
 * Reads a whole number in [lo, hi] from a JSON item. `what` names it in
 * messages. Returns 0 or KV_EINVAL with the message written.
 */
static int check_uint(struct cfg *c, const cJSON *it, const char *what,
		      uint64_t lo, uint64_t hi, uint64_t *out)
{
	char got[96];
	show(it, got, sizeof got);
	if (!cJSON_IsNumber(it))
		return fail(c, "%s: must be a number, got %s", what, got);
	double v = it->valuedouble;
	if (!isfinite(v) || v != floor(v))
		return fail(c, "%s: must be a whole number, got %s", what, got);
	if (v < 0)
		return fail(c, "%s: must not be negative, got %s", what, got);
	if (v < (double)lo)
		return fail(c, "%s: must be at least %llu, got %s", what,
			    (unsigned long long)lo, got);
	if (v > (double)hi)
		return fail(c, "%s: absurd value, at most %llu, got %s", what,
			    (unsigned long long)hi, got);
	*out = (uint64_t)v;
	return 0;
}

/*
 * Reads an unsigned field. Absent or null: KV_EINVAL ("missing") when
 * `required`, else *out = def and *given = false.
 */
static int get_uint(struct cfg *c, const char *field, bool required,
		    uint64_t def, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char where[128];
	const cJSON *it = find(c, field, where, sizeof where);
	if (!it || cJSON_IsNull(it)) {
		if (required) {
			absent_name(c, field, where, sizeof where);
			return fail(c, "%s: missing; a field that defines the "
				    "model's shape is never guessed",
				    where);
		}
		*out = def;
		return 0;
	}
	return check_uint(c, it, where, lo, hi, out);
}

static int get_u32(struct cfg *c, const char *field, bool required,
		   uint64_t def, uint64_t lo, uint64_t hi, uint32_t *out)
{
	uint64_t v;
	int e = get_uint(c, field, required, def, lo, hi, &v);
	if (!e)
		*out = (uint32_t)v;
	return e;
}

/* Like get_uint, for the first present of several names (aliases). */
static int get_uint_any(struct cfg *c, const char *const *names, bool required,
			uint64_t def, uint64_t lo, uint64_t hi, uint64_t *out)
{
	const char *f = first_of(c, names);
	return get_uint(c, f ? f : names[0], required, def, lo, hi, out);
}

/* Like get_uint, where a config may also give one value per layer
 * (Hunyuan's moe_topk, moe_intermediate_size): a list must repeat one
 * value, which is what the model keeps. */
static int get_uint_same(struct cfg *c, const char *field, uint64_t def,
			 uint64_t lo, uint64_t hi, uint64_t *out)
{
	char where[128], what[160];
	const cJSON *it = find(c, field, where, sizeof where), *el;
	if (!it || !cJSON_IsArray(it) || cJSON_GetArraySize(it) == 0)
		return get_uint(c, field, false, def, lo, hi, out);
	uint32_t i = 0;
	cJSON_ArrayForEach(el, it)
	{
		uint64_t v = 0;
		snprintf(what, sizeof what, "%s[%u]", where, i);
		int e = check_uint(c, el, what, lo, hi, &v);
		if (e)
			return e;
		if (i++ == 0)
			*out = v;
		else if (v != *out)
			return fail(c,
				    "%s: layers that differ here are not "
				    "read, got %llu after %llu",
				    what, (unsigned long long)v,
				    (unsigned long long)*out);
	}
	return 0;
}

static int get_bool(struct cfg *c, const char *field, bool def, bool *out)
{
	char where[128], got[96];
	const cJSON *it = find(c, field, where, sizeof where);
	if (!it || cJSON_IsNull(it)) {
		*out = def;
		return 0;
	}
	if (!cJSON_IsBool(it)) {
		show(it, got, sizeof got);
		return fail(c, "%s: must be true or false, got %s", where, got);
	}
	*out = cJSON_IsTrue(it);
	return 0;
}

static int get_double(struct cfg *c, const char *field, double def,
		      double *out)
{
	char where[128], got[96];
	const cJSON *it = find(c, field, where, sizeof where);
	if (!it || cJSON_IsNull(it)) {
		*out = def;
		return 0;
	}
	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) ||
	    it->valuedouble < 0) {
		show(it, got, sizeof got);
		return fail(c, "%s: must be a non-negative number, got %s",
			    where, got);
	}
	*out = it->valuedouble;
	return 0;
}

/* A string field, or NULL when absent or null; KV_EINVAL for another type. */
static int get_str(struct cfg *c, const char *field, const char **out)
{
	char where[128], got[96];
	const cJSON *it = find(c, field, where, sizeof where);
	*out = NULL;
	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsString(it)) {
		show(it, got, sizeof got);
		return fail(c, "%s: must be a string, got %s", where, got);
	}
	*out = it->valuestring;
	return 0;
}

/*
 * A per-layer list of whole numbers (OpenELM's num_kv_heads) or one number
 * for every layer. Fills vals[n_layers].
 */
static int get_uint_list(struct cfg *c, const char *field, uint32_t n_layers,
			 uint64_t lo, uint64_t hi, uint32_t *vals)
{
	char where[128], what[160], got[96];
	const cJSON *it = find(c, field, where, sizeof where);
	if (!it || cJSON_IsNull(it)) {
		absent_name(c, field, where, sizeof where);
		return fail(c, "%s: missing; the model's heads cannot be "
			    "guessed",
			    where);
	}
	if (cJSON_IsNumber(it)) {
		uint64_t v;
		int e = check_uint(c, it, where, lo, hi, &v);
		for (uint32_t i = 0; !e && i < n_layers; i++)
			vals[i] = (uint32_t)v;
		return e;
	}
	if (!cJSON_IsArray(it)) {
		show(it, got, sizeof got);
		return fail(c, "%s: must be a list of numbers, got %s", where,
			    got);
	}
	int len = cJSON_GetArraySize(it);
	if (len != (int)n_layers)
		return fail(c, "%s: must list one value per layer (%u), got %d",
			    where, n_layers, len);
	uint32_t i = 0;
	const cJSON *el;
	cJSON_ArrayForEach(el, it)
	{
		uint64_t v;
		snprintf(what, sizeof what, "%s[%u]", where, i);
		int e = check_uint(c, el, what, lo, hi, &v);
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
static int layer_list(struct cfg *c, const char *field, uint32_t n,
		      uint32_t base, bool *mark)
{
	char where[128];
	const cJSON *it, *el;
	int e = get_kind(c, field, K_LIST, &it);
	if (e || !it)
		return e ? e : 1;
	find(c, field, where, sizeof where);
	cJSON_ArrayForEach(el, it)
	{
		uint64_t li = 0;
		if ((e = check_uint(c, el, where, base, n - 1 + base, &li)))
			return e;
		mark[li - base] = true;
	}
	return 0;
}

/* OpenELM's make_divisible(v, divisor): nearest multiple, not below 90%. */
static uint64_t make_divisible(double v, uint64_t d)
{
	double r = floor((v + (double)d / 2) / (double)d) * (double)d;
	if (r < (double)d)
		r = (double)d;
	if (r < 0.9 * v)
		r += (double)d;
	return (uint64_t)r;
}

const char *kv_attn_name(enum kv_attn a)
{
	switch (a) {
	case KV_ATTN_NONE: return "none";
	case KV_ATTN_FULL: return "full";
	case KV_ATTN_SLIDING: return "sliding";
	case KV_ATTN_CHUNKED: return "chunked";
	case KV_ATTN_MLA: return "mla";
	}
	return "?";
}

static bool is(const char *s, const char *const *list)
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
static int layer_kind(const char *s, enum kv_attn *out)
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
	if (is(s, full))
		*out = KV_ATTN_FULL;
	else if (is(s, sliding))
		*out = KV_ATTN_SLIDING;
	else if (is(s, chunked))
		*out = KV_ATTN_CHUNKED;
	else if (is(s, none))
		*out = KV_ATTN_NONE;
	else
		return KV_EINVAL;
	return 0;
}

/* Reads a layer_types-style list into kinds[]; 1 when the field is absent. */
static int get_kinds(struct cfg *c, const char *field, uint32_t n,
		     enum kv_attn *kinds)
{
	char where[128], got[96];
	const cJSON *it = find(c, field, where, sizeof where);
	if (!it || cJSON_IsNull(it))
		return 1;
	if (!cJSON_IsArray(it)) {
		show(it, got, sizeof got);
		return fail(c, "%s: must be a list of layer kinds, got %s",
			    where, got);
	}
	int len = cJSON_GetArraySize(it);
	/* Step 3.5 lists its multi-token-prediction layers too, after the
	 * model's own */
	uint64_t mtp = 0;
	int e = len > (int)n ? get_uint(c, "num_nextn_predict_layers", false,
					0, 0, MAX_LAYERS, &mtp)
			     : 0;
	if (e)
		return e;
	if (len != (int)n && (uint64_t)len != n + mtp)
		return fail(c, "%s: must list one kind per layer (%u), got %d",
			    where, n, len);
	uint32_t i = 0;
	const cJSON *el;
	cJSON_ArrayForEach(el, it)
	{
		if (i == n)
			break;
		if (!cJSON_IsString(el) ||
		    layer_kind(el->valuestring, &kinds[i])) {
			show(el, got, sizeof got);
			return fail(c, "%s[%u]: unknown layer kind, got %s",
				    where, i, got);
		}
		i++;
	}
	return 0;
}

/* Per-family defaults of Transformers' config classes, for absent fields. */
struct defaults {
	uint64_t vocab;
	uint64_t max_pos;
	uint64_t window;     /* sliding_window when absent (0: none) */
	uint32_t head_dim;   /* 0: hidden / heads */
	bool tie;
	bool swa_flag;       /* windows gated by use_sliding_window (Qwen) */
	uint64_t ffn;        /* intermediate_size when absent (0: 4 x hidden) */
};

/* A model family as the configs name it: its model_type, the block it is
 * read as, and its config class's defaults (Transformers'
 * configuration_<type>.py). How its layers are laid out is read from the
 * config's own fields (read_kinds(), read_mlp()); a type not here is read
 * as a Llama-style config, and said. */
struct family {
	const char *type;
	enum kv_family family;
	struct defaults d;
};

#define F(t, fam, vocab, pos, win, hd, tie, swa, ffn)                        \
	{t, KV_FAMILY_##fam, {vocab, pos, win, hd, tie, swa, ffn}}

static const struct family FAMILIES[] = {
	/* model_type           family      vocab max_pos  win   hd  tied
	 *                                            swa_flag   ffn */
	F("gpt2",                GPT2,      50257,   1024,    0,   0, true , false,     0),
	F("gpt_bigcode",         GPT2,      50257,   1024,    0,   0, true , false,     0),
	F("llama",               LLAMA,     32000,   2048,    0,   0, false, false, 11008),
	F("mistral",             LLAMA,     32000, 131072, 4096,   0, false, false, 14336),
	F("mixtral",             LLAMA,     32000, 131072,    0,   0, false, false, 14336),
	F("qwen2",               LLAMA,    151936,  32768, 4096,   0, false, true , 22016),
	F("qwen2_moe",           LLAMA,    151936,  32768, 4096,   0, false, true , 22016),
	F("qwen3",               LLAMA,    151936,  32768, 4096, 128, false, true , 22016),
	F("qwen3_moe",           LLAMA,    151936,  32768, 4096, 128, false, true , 22016),
	F("phi3",                LLAMA,     32064,   4096,    0,   0, false, false,  8192),
	F("chatglm",             LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("glm",                 LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("glm4",                LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("cohere",              LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("cohere2",             LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("starcoder2",          LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("qwen3_next",          LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("dbrx",                LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("nemotron_h",          LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("bamba",               LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("minimax",             LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("gemma3n",             LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("gemma3n_text",        LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("mllama",              LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("mllama_text_model",   LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("exaone4",             LLAMA,     32000,      0, 4096,   0, false, false,     0),
	F("granitemoehybrid",    LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("falcon_h1",           LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("olmo",                LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("olmo2",               LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("granite",             LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("internlm2",           LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("phi",                 LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("stablelm",            LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("gpt_neox",            LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("opt",                 LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("mpt",                 LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("bloom",               LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("gptj",                LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("minicpm",             LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("minicpm3",            LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("exaone",              LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("qwen2_vl",            LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("qwen2_5_vl",          LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("mistral3",            LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("zamba",               LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("zamba2",              LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("recurrent_gemma",     LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("longcat_flash",       LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("nemotron-nas",        LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("hunyuan",             LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("hunyuan_v1_dense",    LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("hunyuan_v1_moe",      LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("baichuan",            LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("glm4_moe",            LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("ernie4_5",            LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("ernie4_5_moe",        LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("internlm3",           LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("minimax_m1",          LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("olmoe",               LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("phimoe",              LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("phi3small",           LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("seed_oss",            LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("smollm3",             LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("ministral3",          LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("lfm2",                LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("olmo3",               LLAMA,     32000,      0, 4096,   0, false, false,     0),
	F("qwen3_5_text",        LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("qwen3_5_moe_text",    LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("mamba",               LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("mamba2",              LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("falcon_mamba",        LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("step3_text",          LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("qwen2_5_omni_text",   LLAMA,     32000,      0,    0,   0, false, true ,     0),
	F("qwen3_omni_moe_text", LLAMA,     32000,      0,    0,   0, false, true ,     0),
	F("dots1",               LLAMA,     32000,      0,    0,   0, false, true ,     0),
	F("qwen",                LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("gpt_neo",             LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("codegen",             LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("persimmon",           LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("nemotron",            LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("arcee",               LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("apertus",             LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("glm4_moe_lite",       LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("xglm",                LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("jetmoe",              LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("qwen3_vl_text",       LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("qwen3_vl_moe_text",   LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("mimo_v2_flash",       LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("bailing_moe_linear",  LLAMA,     32000,      0,    0,   0, false, false,     0),
	F("lfm2_moe",            LLAMA,     32000,      0,    0,   0, true , false,     0),
	F("gemma",               GEMMA,    256000,   8192,    0, 256, true , false, 24576),
	F("gemma2",              GEMMA,    256000,   8192, 4096, 256, true , false,  9216),
	F("gemma3",              GEMMA,    262208, 131072, 4096, 256, true , false,  9216),
	F("gemma3_text",         GEMMA,    262208, 131072, 4096, 256, true , false,  9216),
	F("falcon",              FALCON,    65024,   2048,    0,   0, true , false,     0),
	F("RefinedWeb",          FALCON,    65024,   2048,    0,   0, true , false,     0),
	F("RefinedWebModel",     FALCON,    65024,   2048,    0,   0, true , false,     0),
	F("deepseek_v2",         DEEPSEEK, 102400,   2048,    0,   0, false, false, 11008),
	F("deepseek_v3",         DEEPSEEK, 129280,   4096,    0,   0, false, false, 18432),
	F("gpt_oss",             GPT_OSS,  201088, 131072,  128,  64, false, false,  2880),
	F("llama4",              LLAMA4,   202048, 131072,    0, 128, false, false,  8192),
	F("llama4_text",         LLAMA4,   202048, 131072,    0, 128, false, false,  8192),
	F("openelm",             OPENELM,   32000,   2048,    0,   0, false, false,     0),
	F("jamba",               JAMBA,     65536, 262144,    0,   0, false, false, 14336),
};

/* Types named by their prefix, read as the family type named beside:
 * DeepSeek's descendants keep its names (deepseek_v32, kimi_k2); Qwen's
 * omni models gate their windows as Qwen does, without being a type
 * known as such. */
static const struct {
	const char *prefix, *as;
	bool known;
} FAMILY_PREFIXES[] = {
	{"deepseek", "deepseek_v3", true},
	{"kimi", "deepseek_v3", true},
	{"qwen2_5_omni", "qwen2_5_omni_text", false},
	{"qwen3_omni", "qwen3_omni_moe_text", false},
};
#undef F

/* The entry of FAMILIES for model_type t, or NULL. */
static const struct family *family_named(const char *t)
{
	for (size_t i = 0; i < sizeof FAMILIES / sizeof *FAMILIES; i++)
		if (!strcmp(t, FAMILIES[i].type))
			return &FAMILIES[i];
	return NULL;
}

/* The family of model_type t; *known: t is one (or a descendant). The
 * unknown read as Llama-style with the generic defaults. */
static struct family family_of(const char *t, bool *known)
{
	const struct family *f = family_named(t);
	*known = f != NULL;
	for (size_t i = 0; !f && i < sizeof FAMILY_PREFIXES /
					    sizeof *FAMILY_PREFIXES;
	     i++)
		if (!strncmp(t, FAMILY_PREFIXES[i].prefix,
			     strlen(FAMILY_PREFIXES[i].prefix))) {
			f = family_named(FAMILY_PREFIXES[i].as);
			*known = FAMILY_PREFIXES[i].known;
		}
	if (f)
		return *f;
	return (struct family){t, KV_FAMILY_LLAMA,
			       {32000, 0, 0, 0, false, false, 0}};
}

static const char *const NAMES_LAYERS[] = {"num_hidden_layers", "n_layer",
					   "n_layers", "num_layers", NULL};
static const char *const NAMES_HIDDEN[] = {"hidden_size", "n_embd", "d_model",
					   NULL};
/* GPT-Neo's num_heads, XGLM's attention_heads (their attribute_map) */
static const char *const NAMES_HEADS[] = {"num_attention_heads", "n_head",
					  "n_heads", "num_heads",
					  "attention_heads", NULL};
static const char *const NAMES_KV[] = {"num_key_value_heads", "num_kv_heads",
				       "n_head_kv", "num_attention_groups",
				       NULL};
static const char *const NAMES_GPT2_LAYERS[] = {"n_layer", "num_hidden_layers",
						NULL};
static const char *const NAMES_GPT2_HIDDEN[] = {"n_embd", "hidden_size", NULL};
static const char *const NAMES_GPT2_HEADS[] = {"n_head", "num_attention_heads",
					       NULL};

/*
 * The shape of a text model class, for a wrapper's text_config: Transformers
 * saves a nested config as its difference from the class's defaults, so
 * LLaVA 1.5 7B's text_config names no layers, width or heads (LlamaConfig's
 * 32, 4096 and 32 are what its reference builds). Only in a wrapper; at the
 * top level the shape fields are never guessed.
 */
struct class_shape {
	const char *type, *cls;
	uint32_t layers, heads, kv_heads; /* kv_heads 0: as many as heads */
	uint64_t hidden;
};

static const struct class_shape *class_shape(const struct cfg *c,
					     const char *type)
{
	static const struct class_shape shapes[] = {
		{"llama", "LlamaConfig", 32, 32, 0, 4096},
		{"mistral", "MistralConfig", 32, 32, 8, 4096},
		{"qwen2", "Qwen2Config", 32, 32, 0, 4096},
		/* PaliGemma's text models */
		{"gemma", "GemmaConfig", 28, 16, 0, 3072},
		{"gemma2", "Gemma2Config", 26, 8, 4, 2304},
	};
	if (c->text == c->root)
		return NULL;
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
		if (!strcmp(type, shapes[i].type))
			return &shapes[i];
	return NULL;
}

/* Whether a field is a list. */
static bool list_field(const struct cfg *c, const char *field)
{
	char where[128];
	return cJSON_IsArray(find(c, field, where, sizeof where));
}

/* Whether the config names a latent rank, kv_lora_rank not null and
 * use_mla not false: MLA, whatever its family. */
static bool latent_named(struct cfg *c)
{
	char where[128];
	const cJSON *k = find(c, "kv_lora_rank", where, sizeof where);
	const cJSON *u = find(c, "use_mla", where, sizeof where);
	return k && !cJSON_IsNull(k) && !cJSON_IsFalse(u);
}

/* The shape every family shares: layers, width, heads, KV heads, head_dim. */
static int read_shape(struct cfg *c, struct kv_model *m,
		      const struct defaults *d)
{
	bool gpt2 = m->family == KV_FAMILY_GPT2;
	uint64_t v;
	int e;
	const struct class_shape *cs = class_shape(c, m->model_type);
	bool no_l = !first_of(c, NAMES_LAYERS);
	bool no_h = !first_of(c, NAMES_HIDDEN), no_q = !first_of(c, NAMES_HEADS);
	if (cs && (no_l || no_h || no_q)) {
		char took[96] = "";
		size_t at = 0;
		if (no_l)
			at += (size_t)snprintf(took + at, sizeof took - at,
					       "%u layers", cs->layers);
		if (no_h)
			at += (size_t)snprintf(took + at, sizeof took - at,
					       "%shidden %llu", at ? ", " : "",
					       (unsigned long long)cs->hidden);
		if (no_q)
			snprintf(took + at, sizeof took - at, "%s%u heads",
				 at ? ", " : "", cs->heads);
		snprintf(m->note, sizeof m->note,
			 "%s leaves out fields of the shape: %s's defaults "
			 "taken (%s), as Transformers reads it",
			 c->text_name, cs->cls, took);
	}
	if ((e = get_uint_any(c, gpt2 ? NAMES_GPT2_LAYERS : NAMES_LAYERS, !cs,
			      cs ? cs->layers : 0, 1, MAX_LAYERS, &v)))
		return e;
	/* LongCat-Flash's num_layers count layers of two attention blocks,
	 * each with its own cache (LongcatFlashConfig: 2 x num_layers) */
	if (!strcmp(m->model_type, "longcat_flash") &&
	    !present(c, "num_hidden_layers"))
		v *= 2;
	m->n_layers = (uint32_t)v;
	if ((e = get_uint_any(c, gpt2 ? NAMES_GPT2_HIDDEN : NAMES_HIDDEN, !cs,
			      cs ? cs->hidden : 0, 1, MAX_HIDDEN, &m->hidden)))
		return e;
	/* Gemma 3's published text configs may leave the heads to the class
	 * (Gemma3TextConfig: 8 heads, 4 KV heads): its reference reads them
	 * so, and the note says so */
	bool gemma3 = !strncmp(m->model_type, "gemma3", 6) &&
		      strncmp(m->model_type, "gemma3n", 7);
	const char *hf = first_of(c, gpt2 ? NAMES_GPT2_HEADS : NAMES_HEADS);
	if (gemma3 && !hf) {
		v = 8;
		snprintf(m->note, sizeof m->note,
			 "num_attention_heads absent: Gemma3TextConfig's "
			 "defaults taken (8 heads, 4 KV heads)");
	} else if (!hf && !strcmp(m->model_type, "jetmoe")) {
		/* JetMoeConfig: a query head per KV head and chosen expert */
		uint64_t kvh, k;
		if ((e = get_uint(c, "num_key_value_heads", false, 16, 1,
				  MAX_HEADS, &kvh)) ||
		    (e = get_uint(c, "num_experts_per_tok", false, 2, 1,
				  MAX_HEADS, &k)))
			return e;
		v = kvh * k; /* each at most 2^16 */
		if (v > MAX_HEADS)
			return fail(c, "num_key_value_heads: times "
				    "num_experts_per_tok must be at most %u "
				    "heads, got %llu x %llu", MAX_HEADS,
				    (unsigned long long)kvh,
				    (unsigned long long)k);
	} else if ((e = get_uint_any(c, gpt2 ? NAMES_GPT2_HEADS : NAMES_HEADS,
				     !cs, cs ? cs->heads : 0, 1, MAX_HEADS,
				     &v))) {
		return e;
	}
	m->n_heads = (uint32_t)v;

	/* KV heads: Falcon's flags, GPT-BigCode's multi_query, or the field */
	struct cfg sub;
	bool dbrx = false;
	if (!strcmp(m->model_type, "dbrx") &&
	    (e = nested(c, "attn_config", &sub, &dbrx)))
		return e;
	if (m->family == KV_FAMILY_FALCON) {
		bool newarch, mq;
		/* the old RefinedWeb form (Falcon-40B) names n_head_kv */
		bool rw = !strcmp(m->model_type, "RefinedWeb") &&
			  present(c, "n_head_kv");
		if ((e = get_bool(c, "new_decoder_architecture", rw,
				  &newarch)) ||
		    (e = get_bool(c, "multi_query", true, &mq)))
			return e;
		if (newarch) {
			if ((e = get_uint_any(c, NAMES_KV, false, m->n_heads,
					      1, MAX_HEADS, &v)))
				return e;
		} else {
			v = mq ? 1 : m->n_heads;
		}
	} else if (dbrx) {
		if ((e = get_uint(&sub, "kv_n_heads", false, m->n_heads, 1,
				  MAX_HEADS, &v)))
			return e;
	} else if (gemma3 && !hf && !first_of(c, NAMES_KV)) {
		v = 4;
	} else if (!strcmp(m->model_type, "chatglm")) {
		bool mq;
		if ((e = get_bool(c, "multi_query_attention", false, &mq)) ||
		    (e = get_uint(c, "multi_query_group_num", false, m->n_heads,
				  1, MAX_HEADS, &v)))
			return e;
		if (!mq)
			v = m->n_heads;
	} else if (!strcmp(m->model_type, "gpt_bigcode")) {
		bool mq;
		if ((e = get_bool(c, "multi_query", true, &mq)))
			return e;
		v = mq ? 1 : m->n_heads;
	} else if (cs && cs->kv_heads && !first_of(c, NAMES_KV)) {
		v = cs->kv_heads;
	} else if ((e = get_uint_any(c, NAMES_KV, false, m->n_heads, 1,
				     MAX_HEADS, &v))) {
		return e;
	}
	m->n_kv_heads = (uint32_t)v;
	if (m->n_heads % m->n_kv_heads) {
		char where[128];
		const char *f = first_of(c, NAMES_KV);
		if (!strcmp(m->model_type, "dbrx"))
			snprintf(where, sizeof where, "attn_config.kv_n_heads");
		else
			find(c, f ? f : NAMES_KV[0], where, sizeof where);
		return fail(c,
			    "%s: must divide num_attention_heads (%u), got %u",
			    where, m->n_heads, m->n_kv_heads);
	}

	/* head_dim: the field, the family's fixed default, or hidden/heads
	 * (Zamba's attention runs on the embedding and the hidden state side
	 * by side: 2 hidden / heads, unless attention_head_dim says) */
	static const char *const hd_names[] = {"kv_channels",
					       "attention_head_dim", NULL};
	const char *hd = present(c, "head_dim") ? NULL : first_of(c, hd_names);
	bool zamba = !strncmp(m->model_type, "zamba", 5);
	if (hd) {
		if ((e = get_uint(c, hd, false, 0, 1, MAX_HEAD_DIM, &v)))
			return e;
	} else if (zamba && !present(c, "head_dim")) {
		if (2 * m->hidden % m->n_heads) {
			char where[128];
			absent_name(c, "attention_head_dim", where,
				    sizeof where);
			return fail(c,
				    "%s: missing, and twice the hidden size, "
				    "%llu, is not a multiple of %u attention "
				    "heads",
				    where, (unsigned long long)(2 * m->hidden),
				    m->n_heads);
		}
		v = 2 * m->hidden / m->n_heads;
	} else if (present(c, "head_dim") || d->head_dim) {
		if ((e = get_uint(c, "head_dim", false, d->head_dim, 1,
				  MAX_HEAD_DIM, &v)))
			return e;
	} else if (m->hidden % m->n_heads && latent_named(c)) {
		/* MLA's heads are qk_nope + qk_rope wide, set with its latent
		 * (GLM-4.7-Flash: hidden 2048, 20 heads) */
		v = 1;
	} else {
		if (m->hidden % m->n_heads) {
			char where[128];
			absent_name(c, "head_dim", where, sizeof where);
			return fail(c,
				    "%s: missing, and hidden size %llu is not "
				    "a multiple of %u attention heads",
				    where, (unsigned long long)m->hidden,
				    m->n_heads);
		}
		v = m->hidden / m->n_heads;
	}
	m->head_dim = m->head_dim_v = (uint32_t)v;
	return 0;
}

/* The window of sliding layers: the field, or the family's default. */
static int read_window(struct cfg *c, const struct defaults *d, uint64_t *win)
{
	char where[128];
	const cJSON *it = find(c, "sliding_window", where, sizeof where);
	if (!it) {
		*win = d->window;
		return 0;
	}
	if (cJSON_IsNull(it) || cJSON_IsFalse(it)) {
		*win = 0;
		return 0;
	}
	return check_uint(c, it, where, 1, MAX_POS, win);
}

/* Every n-th layer full, the others of kind `other`, n from field
 * (def when absent; def itself when field is NULL). */
static int nth_full(struct cfg *c, const char *field, uint64_t def,
		    uint32_t n, enum kv_attn other, enum kv_attn *k)
{
	uint64_t every = def;
	int e = field ? get_uint(c, field, false, def, 1, MAX_LAYERS, &every)
		      : 0;
	for (uint32_t i = 0; !e && i < n; i++)
		k[i] = (i + 1) % every ? other : KV_ATTN_FULL;
	return e;
}

/* A list of 0 and 1 over the layers into their kinds: 1 on, 0 off. */
static int flag_kinds(struct cfg *c, const char *field, uint32_t n,
		      enum kv_attn on, enum kv_attn off, enum kv_attn *k)
{
	uint32_t *v = calloc(n, sizeof *v);
	if (!v)
		return KV_ENOMEM;
	int e = get_uint_list(c, field, n, 0, 1, v);
	for (uint32_t i = 0; !e && i < n; i++)
		k[i] = v[i] ? on : off;
	free(v);
	return e;
}

/*
 * Hybrids that name their attention layers other ways than layer_types:
 * NemotronH's hybrid_override_pattern ("M-M*...": '*' attention, one
 * character a layer), Bamba's attn_layer_indices (LFM2's full_attn_idxs),
 * MiniMax's attn_type_list (1 softmax attention, 0 linear), Qwen3-Next's
 * full_attention_interval (every interval-th layer; the others linear
 * attention, no KV), Kimi
 * Linear's linear_attn_config (full_attn_layers, or the complement of
 * kda_layers, counted from 1; its KDA layers keep a fixed state). Returns 0
 * when one applied, 1 when none is there, or an error.
 */
static int hybrid_pattern(struct cfg *c, const struct kv_model *m,
			  enum kv_attn *k)
{
	uint32_t n = m->n_layers;
	char where[128], got[96];
	const cJSON *it = find(c, "hybrid_override_pattern", where, sizeof where);
	if (it && !cJSON_IsNull(it)) {
		if (!cJSON_IsString(it)) {
			show(it, got, sizeof got);
			return fail(c, "%s: must be a string, got %s", where,
				    got);
		}
		if (strlen(it->valuestring) != n)
			return fail(c,
				    "%s: must have one character per layer "
				    "(%u), got %zu",
				    where, n, strlen(it->valuestring));
		for (uint32_t i = 0; i < n; i++)
			k[i] = it->valuestring[i] == '*' ? KV_ATTN_FULL
							 : KV_ATTN_NONE;
		return 0;
	}
	bool *mark = calloc(n, sizeof *mark);
	if (!mark)
		return KV_ENOMEM;
	int e = layer_list(c, "attn_layer_indices", n, 0, mark);
	if (e == 1) /* LFM2's older name, without layer_types */
		e = layer_list(c, "full_attn_idxs", n, 0, mark);
	struct cfg lin;
	bool kda = false, has = false;
	if (e == 1 && (e = nested(c, "linear_attn_config", &lin, &has)) == 0)
		e = has ? layer_list(&lin, "full_attn_layers", n, 1, mark) : 1;
	if (e == 1 && has &&
	    (e = layer_list(&lin, "kda_layers", n, 1, mark)) == 0)
		kda = true;
	for (uint32_t i = 0; e == 0 && i < n; i++)
		k[i] = mark[i] != kda ? KV_ATTN_FULL : KV_ATTN_NONE;
	free(mark);
	if (e <= 0)
		return e;
	if ((e = get_kind(c, "attn_type_list", K_LIST, &it)))
		return e;
	if (it)
		return flag_kinds(c, "attn_type_list", n, KV_ATTN_FULL,
				  KV_ATTN_NONE, k);
	/* Ring linear: every layer_group_size-th layer attends, the
	 * others are linear attention */
	if (!strcmp(m->model_type, "bailing_moe_linear"))
		return nth_full(c, "layer_group_size", 5, n, KV_ATTN_NONE, k);
	if (present(c, "full_attention_interval") ||
	    !strcmp(m->model_type, "qwen3_next"))
		return nth_full(c, "full_attention_interval", 4, n,
				KV_ATTN_NONE, k);
	return 1;
}

/*
 * Layers that attend but keep no KV of their own: Gemma 3n's last
 * num_kv_shared_layers reuse an earlier layer's cache; Hunyuan's
 * cross-layer attention (use_cla) computes K and V on every
 * cla_share_factor-th layer from 0 and the layers after it reuse them;
 * Llama 3.2 Vision's cross_attention_layers attend over the image's states,
 * a fixed size per image that does not grow with the text.
 */
static int kv_less_layers(struct cfg *c, struct kv_model *m,
			  enum kv_attn *k)
{
	uint32_t n = m->n_layers;
	uint64_t shared;
	int e = get_uint(c, "num_kv_shared_layers", false, 0, 0, MAX_LAYERS,
			 &shared);
	if (e)
		return e;
	if (shared >= n) {
		char where[128];
		find(c, "num_kv_shared_layers", where, sizeof where);
		return fail(c,
			    "%s: must leave a layer whose K and V the others "
			    "share (of %u), got %llu",
			    where, n, (unsigned long long)shared);
	}
	for (uint64_t i = n - shared; i < n; i++)
		k[i] = KV_ATTN_NONE;
	bool cla;
	uint64_t every;
	if ((e = get_bool(c, "use_cla", false, &cla)) ||
	    (e = get_uint(c, "cla_share_factor", false, 1, 1, MAX_LAYERS,
			  &every)))
		return e;
	for (uint32_t i = 0; cla && i < n; i++)
		if (i % every)
			k[i] = KV_ATTN_NONE;
	bool *cross = calloc(n, sizeof *cross);
	if (!cross)
		return KV_ENOMEM;
	e = layer_list(c, "cross_attention_layers", n, 0, cross);
	for (uint32_t i = 0; e == 0 && i < n; i++)
		if (cross[i]) {
			k[i] = KV_ATTN_NONE;
			m->layers[i].cross = true;
		}
	free(cross);
	/* its embedding has 8 rows more than the vocabulary */
	if (e == 0)
		m->embed_extra = 8;
	return e < 0 ? e : 0;
}

/*
 * RecurrentGemma's _block_types (by default recurrent, recurrent,
 * attention), repeated over the layers: its attention layers keep the last
 * attention_window_size tokens, its recurrent ones a fixed state.
 */
static int block_types(struct cfg *c, const struct kv_model *m,
		       enum kv_attn *k)
{
	static const enum kv_attn def[] = {KV_ATTN_NONE, KV_ATTN_NONE,
					   KV_ATTN_SLIDING};
	enum kv_attn pat[64];
	uint32_t len = 3;
	memcpy(pat, def, sizeof def);
	char where[128], got[96];
	const char *f = present(c, "_block_types") ? "_block_types"
						   : "block_types";
	const cJSON *it = find(c, f, where, sizeof where), *el;
	if (it && !cJSON_IsNull(it)) {
		int cnt = cJSON_IsArray(it) ? cJSON_GetArraySize(it) : 0;
		if (cnt < 1 || cnt > 64) {
			show(it, got, sizeof got);
			return fail(c, "%s: must be a list of 1 to 64 block "
				    "kinds, got %s", where, got);
		}
		len = 0;
		cJSON_ArrayForEach(el, it)
		{
			enum kv_attn a;
			if (!cJSON_IsString(el) ||
			    layer_kind(el->valuestring, &a)) {
				show(el, got, sizeof got);
				return fail(c, "%s[%u]: unknown block kind, "
					    "got %s", where, len, got);
			}
			pat[len++] = a == KV_ATTN_NONE ? a : KV_ATTN_SLIDING;
		}
	}
	for (uint32_t i = 0; i < m->n_layers; i++)
		k[i] = pat[i % len];
	return 0;
}

/* GPT-Neo's layers: attention_layers, one kind a layer, or its source,
 * attention_types, a list of [kinds, times] (the kinds repeated times
 * over); global attends to all, local to window_size tokens. Neither:
 * global and local in turn, as the class's default. */
static int neo_kinds(struct cfg *c, uint32_t n, enum kv_attn *k)
{
	int e = get_kinds(c, "attention_layers", n, k);
	char where[128], got[96];
	const cJSON *it = find(c, "attention_types", where, sizeof where);
	if (e != 1)
		return e;
	if (!it) { /* GPTNeoConfig's default: global and local in turn */
		for (uint32_t i = 0; i < n; i++)
			k[i] = i % 2 ? KV_ATTN_SLIDING : KV_ATTN_FULL;
		return 0;
	}
	if (!cJSON_IsArray(it)) {
		show(it, got, sizeof got);
		return fail(c, "%s: must be a list of [kinds, times], got %s",
			    where, got);
	}
	uint32_t i = 0, at = 0;
	const cJSON *el;
	cJSON_ArrayForEach(el, it)
	{
		const cJSON *kinds = cJSON_GetArrayItem(el, 0);
		const cJSON *times = cJSON_GetArrayItem(el, 1);
		bool ok = cJSON_IsArray(el) && cJSON_GetArraySize(el) == 2 &&
			  cJSON_IsArray(kinds) &&
			  cJSON_GetArraySize(kinds) > 0 &&
			  cJSON_IsNumber(times) && times->valuedouble >= 1 &&
			  times->valuedouble <= MAX_LAYERS &&
			  times->valuedouble == (int)times->valuedouble;
		for (int t = 0; ok && t < (int)times->valuedouble && i <= n;
		     t++) {
			const cJSON *s;
			cJSON_ArrayForEach(s, kinds)
			{
				ok = ok && cJSON_IsString(s) &&
				     !layer_kind(s->valuestring, &k[i % n]);
				i++;
			}
		}
		if (!ok) {
			show(el, got, sizeof got);
			return fail(c,
				    "%s[%u]: must be [[kinds], times] of "
				    "global and local layers, got %s",
				    where, at, got);
		}
		at++;
	}
	if (i != n)
		return fail(c, "%s: must give one kind per layer (%u), got %u",
			    where, n, i);
	return 0;
}

/* Zamba's layers without a layers_block_type list, as its config class
 * makes one: layer 2, then every attn_layer_period-th from
 * attn_layer_offset past it, attend (a "hybrid" layer), the rest are
 * Mamba layers alone. */
static int zamba_kinds(struct cfg *c, const struct kv_model *m,
		       enum kv_attn *k)
{
	uint64_t period, offset;
	int e;
	if ((e = get_uint(c, "attn_layer_period", false, 6, 1, MAX_LAYERS,
			  &period)) ||
	    (e = get_uint(c, "attn_layer_offset", false, 4, 0, MAX_LAYERS,
			  &offset)))
		return e;
	for (uint32_t i = 0; i < m->n_layers; i++)
		k[i] = i == 2 || (i > 2 && (i - 3) % period == offset)
			       ? KV_ATTN_FULL
			       : KV_ATTN_NONE;
	return 0;
}

/*
 * The attention kind of every layer: an explicit layer_types list wins;
 * otherwise the family's rule (Gemma's alternation, Jamba's period, Llama 4's
 * chunked layers, Qwen's max_window_layers, Mistral's window on every layer).
 */
static int read_kinds(struct cfg *c, struct kv_model *m,
		      const struct defaults *d, uint64_t window,
		      uint64_t chunk, enum kv_attn *k)
{
	uint32_t n = m->n_layers;
	int e = get_kinds(c, "layer_types", n, k);
	if (e == 1)
		e = get_kinds(c, "layers_block_type", n, k);
	if (e == 1 && !strcmp(m->model_type, "gpt_neo"))
		e = neo_kinds(c, n, k);
	if (e == 1 && present(c, "hybrid_layer_pattern")) /* MiMo-V2 */
		e = flag_kinds(c, "hybrid_layer_pattern", n, KV_ATTN_SLIDING,
			       KV_ATTN_FULL, k);
	if (e <= 0)
		return e;

	for (uint32_t i = 0; i < n; i++)
		k[i] = KV_ATTN_FULL;
	const char *t = m->model_type;
	if ((e = hybrid_pattern(c, m, k)) <= 0)
		return e;
	if (!strcmp(t, "recurrent_gemma"))
		return block_types(c, m, k);
	if (!strcmp(t, "zamba"))
		return zamba_kinds(c, m, k);
	if (m->family == KV_FAMILY_JAMBA) {
		uint64_t period, offset;
		if ((e = get_uint(c, "attn_layer_period", false, 8, 1, MAX_LAYERS,
				  &period)) ||
		    (e = get_uint(c, "attn_layer_offset", false, 4, 0,
				  MAX_LAYERS, &offset)))
			return e;
		if (offset >= period)
			return fail(c,
				    "attn_layer_offset: must be below "
				    "attn_layer_period (%llu), got %llu",
				    (unsigned long long)period,
				    (unsigned long long)offset);
		for (uint32_t i = 0; i < n; i++)
			k[i] = i % period == offset ? KV_ATTN_FULL
						    : KV_ATTN_NONE;
		if (!window)
			return 0;
		for (uint32_t i = 0; i < n; i++)
			if (k[i] == KV_ATTN_FULL)
				k[i] = KV_ATTN_SLIDING;
		return 0;
	}
	if (m->family == KV_FAMILY_LLAMA4) {
		if (!chunk)
			return 0;
		uint32_t *rope = calloc(n, sizeof *rope);
		if (!rope)
			return KV_ENOMEM;
		const cJSON *it;
		e = get_kind(c, "no_rope_layers", K_LIST, &it);
		if (!e && it && cJSON_GetArraySize(it) > 0) {
			e = get_uint_list(c, "no_rope_layers", n, 0, 1, rope);
		} else if (!e) {
			uint64_t every;
			e = get_uint(c, "no_rope_layer_interval", false, 4, 1,
				     MAX_LAYERS, &every);
			for (uint32_t i = 0; !e && i < n; i++)
				rope[i] = (i + 1) % every != 0;
		}
		for (uint32_t i = 0; !e && i < n; i++)
			k[i] = rope[i] ? KV_ATTN_CHUNKED : KV_ATTN_FULL;
		free(rope);
		return e;
	}
	if (!window)
		return 0;
	if (!strcmp(t, "gemma2") || m->family == KV_FAMILY_GPT_OSS) {
		for (uint32_t i = 0; i < n; i++)
			k[i] = i % 2 == 0 ? KV_ATTN_SLIDING : KV_ATTN_FULL;
		return 0;
	}
	char where[128];
	const cJSON *pat = find(c, "sliding_window_pattern", where, sizeof where);
	if (pat && cJSON_IsString(pat)) { /* EXAONE 4: "LLLG", L local */
		size_t len = strlen(pat->valuestring);
		if (!len || strspn(pat->valuestring, "LG") != len)
			return fail(c, "%s: a pattern of L and G, got \"%.40s\"",
				    where, pat->valuestring);
		for (uint32_t i = 0; i < n; i++)
			k[i] = pat->valuestring[i % len] == 'L' ? KV_ATTN_SLIDING
								 : KV_ATTN_FULL;
		return 0;
	}
	/* every n-th layer full, the others sliding, as these config
	 * classes make layer_types when a config has none */
	static const struct {
		const char *type, *field; /* field: n, default 4 */
	} nth[] = {
		{"exaone4", "sliding_window_pattern"},
		{"olmo3", NULL},
		{"afmoe", "global_attn_every_n_layers"},
	};
	for (size_t j = 0; j < sizeof nth / sizeof nth[0]; j++)
		if (!strcmp(t, nth[j].type))
			return nth_full(c, nth[j].field, 4, n, KV_ATTN_SLIDING,
					k);
	if (m->family == KV_FAMILY_GEMMA || present(c, "sliding_window_pattern")) {
		if (!strcmp(t, "gemma"))
			return 0;
		return nth_full(c, "sliding_window_pattern", 6, n,
				KV_ATTN_SLIDING, k);
	}
	bool swa = !d->swa_flag;
	uint64_t from = 0;
	if (present(c, "use_sliding_window") || d->swa_flag) {
		if ((e = get_bool(c, "use_sliding_window", !d->swa_flag, &swa)))
			return e;
		if ((e = get_uint(c, "max_window_layers", false,
				  d->swa_flag ? 28 : 0, 0, MAX_LAYERS, &from)))
			return e;
	}
	if (!swa)
		return 0;
	for (uint32_t i = (uint32_t)(from < n ? from : n); i < n; i++)
		k[i] = KV_ATTN_SLIDING;
	return 0;
}

/* Step3's moe_layers_enum, the MoE layers as a string of indices
 * ("4,5,6"): sets moe[i] for each; 1 when absent. */
static int layer_enum(struct cfg *c, const char *field, uint32_t n,
		      bool *moe)
{
	const char *str = NULL;
	int e = get_str(c, field, &str);
	if (e || !str)
		return e ? e : 1;
	for (const char *p = str; *p;) {
		char *end;
		errno = 0;
		unsigned long long li = strtoull(p, &end, 10);
		if (end == p || errno || li >= n || (*end && *end != ',') ||
		    (*end == ',' && !end[1])) {
			char where[128];
			find(c, field, where, sizeof where);
			return fail(c, "%s: must list layer indices below %u "
				    "separated by commas, got \"%.60s\"",
				    where, n, str);
		}
		moe[li] = true;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* Ernie 4.5's MoE layers: from moe_layer_start_index to
 * moe_layer_end_index (-1: the last), every moe_layer_interval-th. */
static int ernie_moe(struct cfg *c, uint32_t n, bool *dense)
{
	uint64_t start, every, end = n - 1;
	char where[128];
	const cJSON *it = find(c, "moe_layer_end_index", where, sizeof where);
	int e;
	if ((e = get_uint(c, "moe_layer_start_index", false, 1, 0, MAX_LAYERS,
			  &start)) ||
	    (e = get_uint(c, "moe_layer_interval", false, 1, 1, MAX_LAYERS,
			  &every)) ||
	    (it && !(cJSON_IsNumber(it) && it->valuedouble == -1) &&
	     (e = get_uint(c, "moe_layer_end_index", false, n - 1, 0,
			   MAX_LAYERS, &end))))
		return e;
	for (uint32_t i = 0; i < n; i++)
		dense[i] = (i + 1) % every != 0 || i < start || i > end;
	return 0;
}

/* LFM2's MLP width: block_ff_dim (or intermediate_size) made 2/3 as wide
 * under block_auto_adjust_ff_dim, times block_ffn_dim_multiplier, rounded
 * up to block_multiple_of, as Lfm2MLP builds it. */
static int lfm2_width(struct cfg *c, struct kv_model *m)
{
	bool adjust;
	double mult = 1;
	uint64_t of, w = m->intermediate;
	char where[128];
	const cJSON *mu = find(c, "block_ffn_dim_multiplier", where,
			       sizeof where);
	int e;
	if ((present(c, "block_ff_dim") &&
	     (e = get_uint(c, "block_ff_dim", false, 0, 1, MAX_FFN, &w))) ||
	    (e = get_bool(c, "block_auto_adjust_ff_dim", true, &adjust)) ||
	    (e = get_uint(c, "block_multiple_of", false, 256, 1, MAX_FFN,
			  &of)))
		return e;
	if (!adjust) {
		m->intermediate = w;
		return 0;
	}
	if (mu && !cJSON_IsNull(mu) &&
	    (e = get_double(c, "block_ffn_dim_multiplier", 1, &mult)))
		return e;
	w = (uint64_t)(2 * (double)w / 3);
	w = (uint64_t)(mult * (double)w);
	w = (w + of - 1) / of * of;
	if (w < 1 || w > MAX_FFN)
		return fail(c, "block_ffn_dim_multiplier: makes an MLP %llu "
			    "wide, got %g", (unsigned long long)w, mult);
	m->intermediate = w;
	return 0;
}

/*
 * MLP kind and width of each layer: dense, or MoE by the family's rule.
 * DBRX keeps its MLP's fields in ffn_config. LongCat-Flash's layers
 * (two per num_layers) each hold a dense MLP, and the first of each pair
 * also the shortcut MoE: counted as a MoE layer whose shared expert is
 * that dense MLP, the same weights, read by every token.
 */
static int read_mlp(struct cfg *c, struct kv_model *m, const struct defaults *d)
{
	uint64_t v;
	int e;
	const char *t = m->model_type;
	uint32_t n = m->n_layers;
	bool longcat = !strcmp(t, "longcat_flash");
	struct cfg ffn;
	bool has_ffn;
	if ((e = nested(c, "ffn_config", &ffn, &has_ffn)))
		return e;
	if (has_ffn)
		c = &ffn;
	static const char *const ffn_names[] = {
		"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim",
		"ff_intermediate_size", NULL};
	uint64_t ffn_def = d->ffn ? d->ffn : 4 * m->hidden;
	if ((e = get_uint_any(c, ffn_names, false, ffn_def, 1, MAX_FFN,
			      &m->intermediate)))
		return e;
	/* Molmo's and Qwen's (the first) intermediate_size is their gate
	 * and up fused, and RecurrentGemma's MLP halves its own: twice the
	 * width */
	if (!strcmp(t, "molmo") || !strcmp(t, "recurrent_gemma") ||
	    !strcmp(t, "qwen"))
		m->intermediate = m->intermediate / 2 ? m->intermediate / 2 : 1;
	if (!strcmp(t, "lfm2") && (e = lfm2_width(c, m)))
		return e;
	for (uint32_t i = 0; i < n; i++) {
		m->layers[i].mlp = KV_MLP_DENSE;
		m->layers[i].ffn_dim = m->intermediate;
	}

	/* routed experts: the field name differs by family */
	static const char *const expert_names[] = {
		"num_local_experts", "num_experts", "n_routed_experts",
		"moe_num_experts", NULL};
	static const char *const active_names[] = {
		"num_experts_per_tok", "experts_per_token",
		"num_experts_per_token", "moe_topk", "moe_top_k", "moe_k",
		NULL};
	uint64_t ne = 0, na = 0;
	uint64_t ne_def = 0;
	if (!strcmp(t, "mixtral"))
		ne_def = 8;
	else if (!strcmp(t, "qwen2_moe"))
		ne_def = 60;
	else if (!strcmp(t, "qwen3_moe"))
		ne_def = 128;
	else if (!strcmp(t, "ernie4_5_moe"))
		ne_def = 64;
	else if (m->family == KV_FAMILY_GPT_OSS)
		ne_def = 32;
	else if (m->family == KV_FAMILY_LLAMA4 || m->family == KV_FAMILY_JAMBA)
		ne_def = 16;
	const char *ef = first_of(c, expert_names);
	if ((e = get_uint_same(c, ef ? ef : expert_names[0], ne_def, 0,
			       MAX_EXPERTS, &ne)))
		return e;
	if (ne <= 1)
		return 0;
	uint64_t na_def = !strcmp(t, "qwen3_moe")      ? 8
			  : !strcmp(t, "ernie4_5_moe") ? 6
			  : !strcmp(t, "qwen2_moe") || m->family ==
							       KV_FAMILY_GPT_OSS
			      ? 4
			  : m->family == KV_FAMILY_LLAMA4 ? 1
							  : 2;
	const char *af = first_of(c, active_names);
	if ((e = get_uint_same(c, af ? af : active_names[0], na_def, 1, ne,
			       &na)))
		return e;
	m->n_experts = (uint32_t)ne;
	m->n_experts_active = (uint32_t)na;

	uint64_t expert_ffn = m->intermediate;
	if (present(c, "moe_intermediate_size") || !strcmp(t, "qwen2_moe") ||
	    !strcmp(t, "qwen3_moe") || m->family == KV_FAMILY_DEEPSEEK) {
		uint64_t def = !strcmp(t, "qwen2_moe")   ? 1408
			       : !strcmp(t, "qwen3_moe") ? 768
			       : !strcmp(t, "deepseek_v2") ? 1407
							   : 2048;
		if ((e = get_uint_same(c, "moe_intermediate_size", def, 1,
				       MAX_FFN, &expert_ffn)))
			return e;
	} else if (present(c, "expert_ffn_hidden_size")) { /* LongCat */
		if ((e = get_uint(c, "expert_ffn_hidden_size", false, 0, 1,
				  MAX_FFN, &expert_ffn)))
			return e;
	}
	/* shared experts: a count of experts' width (Ling's width apart),
	 * or one width in all */
	static const char *const shared_names[] = {
		"n_shared_experts", "num_shared_experts",
		"moe_num_shared_experts", "num_shared_expert", NULL};
	const char *sn = first_of(c, shared_names);
	bool mixed = true; /* Hunyuan's only with use_mixed_mlp_moe */
	if (!strncmp(t, "hunyuan", 7) &&
	    (e = get_bool(c, "use_mixed_mlp_moe", false, &mixed)))
		return e;
	if (m->family == KV_FAMILY_DEEPSEEK || sn ||
	    !strcmp(t, "ernie4_5_moe")) {
		uint64_t w = expert_ffn;
		if ((e = get_uint_same(c, sn ? sn : shared_names[0],
				       m->family == KV_FAMILY_DEEPSEEK ? 1
				       : sn			    ? 0
								    : 2,
				       0, MAX_EXPERTS, &v)) ||
		    (e = get_uint(c, "moe_shared_expert_intermediate_size",
				  false, expert_ffn, 1, MAX_FFN, &w)))
			return e;
		v = mixed ? v : 0;
		m->n_shared_experts = (uint32_t)v;
		m->shared_ffn_dim = v * w;
	} else if (!strcmp(t, "arctic")) {
		/* a dense MLP beside the experts (the residual one) */
		bool res;
		if ((e = get_bool(c, "parallel_attn_mlp_res", false, &res)))
			return e;
		m->n_shared_experts = res;
		m->shared_ffn_dim = res ? m->intermediate : 0;
	} else if (present(c, "share_expert_dim")) { /* Step3 */
		if ((e = get_uint(c, "share_expert_dim", false, 0, 0, MAX_FFN,
				  &v)))
			return e;
		m->n_shared_experts = v ? 1 : 0;
		m->shared_ffn_dim = v;
	} else if (longcat) {
		m->n_shared_experts = 1;
		m->shared_ffn_dim = m->intermediate;
	} else if (present(c, "shared_expert_intermediate_size") ||
		   present(c, "shared_intermediate_size") ||
		   !strcmp(t, "qwen2_moe")) {
		/* Granite's shared MLP is named shared_intermediate_size */
		const char *sf = present(c, "shared_intermediate_size")
					 ? "shared_intermediate_size"
					 : "shared_expert_intermediate_size";
		if ((e = get_uint(c, sf, false, 5632, 0, MAX_FFN, &v)))
			return e;
		m->n_shared_experts = v ? 1 : 0;
		m->shared_ffn_dim = v;
	} else if (m->family == KV_FAMILY_LLAMA4) {
		m->n_shared_experts = 1;
		m->shared_ffn_dim = expert_ffn;
	}
	m->expert_bias = m->family == KV_FAMILY_GPT_OSS;

	/* which layers are MoE */
	uint64_t first = 0, every = 1, offset = 0;
	bool *dense = calloc(n, sizeof *dense);
	if (!dense)
		return KV_ENOMEM;
	if (list_field(c, "moe_layer_freq")) {
		/* MiMo-V2-Flash's: 1 a MoE layer, 0 a dense one */
		uint32_t *moe = calloc(n, sizeof *moe);
		e = moe ? get_uint_list(c, "moe_layer_freq", n, 0, 1, moe)
			: KV_ENOMEM;
		for (uint32_t i = 0; !e && i < n; i++)
			dense[i] = !moe[i];
		free(moe);
	} else if (m->family == KV_FAMILY_DEEPSEEK ||
		   present(c, "first_k_dense_replace") ||
		   present(c, "num_dense_layers")) { /* LFM2-MoE's name */
		e = get_uint(c,
			     present(c, "num_dense_layers")
				     ? "num_dense_layers"
				     : "first_k_dense_replace",
			     false,
			     !strcmp(t, "deepseek_v3") ? 3 : 0, 0, MAX_LAYERS,
			     &first);
		if (!e)
			e = get_uint(c, "moe_layer_freq", false, 1, 1,
				     MAX_LAYERS, &every);
		for (uint32_t i = 0; !e && i < n; i++)
			dense[i] = i < first || i % every != 0;
	} else if (!strcmp(t, "ernie4_5_moe")) {
		e = ernie_moe(c, n, dense);
	} else if (present(c, "moe_layers_enum")) {
		e = layer_enum(c, "moe_layers_enum", n, dense);
		for (uint32_t i = 0; !e && i < n; i++)
			dense[i] = !dense[i];
	} else if (longcat) {
		for (uint32_t i = 0; i < n; i++)
			dense[i] = i % 2 != 0;
	} else if (m->family == KV_FAMILY_JAMBA) {
		e = get_uint(c, "expert_layer_period", false, 2, 1, MAX_LAYERS,
			     &every);
		if (!e)
			e = get_uint(c, "expert_layer_offset", false, 1, 0,
				     MAX_LAYERS, &offset);
		for (uint32_t i = 0; !e && i < n; i++)
			dense[i] = i % every != offset;
	} else if (m->family == KV_FAMILY_LLAMA4) {
		/* moe_layers lists the MoE layers: the others are dense */
		e = layer_list(c, "moe_layers", n, 0, dense);
		for (uint32_t i = 0; e == 0 && i < n; i++)
			dense[i] = !dense[i];
		if (e == 1) {
			e = 0;
			e = get_uint(c, "interleave_moe_layer_step", false, 1,
				     1, MAX_LAYERS, &every);
			for (uint32_t i = 0; !e && i < n; i++)
				dense[i] = (i + 1) % every != 0;
		}
		if (!e)
			e = get_uint(c, "intermediate_size_mlp", false, 16384,
				     1, MAX_FFN, &m->intermediate);
	} else if (present(c, "decoder_sparse_step") ||
		   present(c, "mlp_only_layers")) {
		e = get_uint(c, "decoder_sparse_step", false, 1, 1, MAX_LAYERS,
			     &every);
		for (uint32_t i = 0; !e && i < n; i++)
			dense[i] = (i + 1) % every != 0;
		if (!e &&
		    (e = layer_list(c, "mlp_only_layers", n, 0, dense)) == 1)
			e = 0;
	}
	for (uint32_t i = 0; !e && i < n; i++) {
		m->layers[i].mlp = dense[i] ? KV_MLP_DENSE : KV_MLP_MOE;
		m->layers[i].ffn_dim = dense[i] ? m->intermediate : expert_ffn;
	}
	free(dense);
	return e;
}

/* OpenELM: per-layer head lists and MLP multipliers. */
static int read_openelm(struct cfg *c, struct kv_model *m)
{
	uint64_t v, divisor;
	int e;
	uint32_t n;
	if ((e = get_uint(c, "num_transformer_layers", true, 0, 1, MAX_LAYERS,
			  &v)))
		return e;
	m->n_layers = n = (uint32_t)v;
	if ((e = get_uint(c, "model_dim", true, 0, 1, MAX_HIDDEN, &m->hidden)) ||
	    (e = get_uint(c, "head_dim", true, 0, 1, MAX_HEAD_DIM, &v)))
		return e;
	m->head_dim = m->head_dim_v = (uint32_t)v;
	m->layers = calloc(n, sizeof *m->layers);
	uint32_t *q = calloc(n, sizeof *q), *kv = calloc(n, sizeof *kv);
	if (!m->layers || !q || !kv) {
		free(q);
		free(kv);
		return KV_ENOMEM;
	}
	e = get_uint_list(c, "num_query_heads", n, 1, MAX_HEADS, q);
	if (!e)
		e = get_uint_list(c, "num_kv_heads", n, 1, MAX_HEADS, kv);
	for (uint32_t i = 0; !e && i < n; i++) {
		if (q[i] % kv[i]) {
			e = fail(c,
				 "num_kv_heads[%u]: must divide "
				 "num_query_heads[%u] (%u), got %u",
				 i, i, q[i], kv[i]);
			break;
		}
		m->layers[i] = (struct kv_layer){
			.attn = KV_ATTN_FULL, .q_heads = q[i],
			.kv_heads = kv[i], .head_dim_k = m->head_dim,
			.head_dim_v = m->head_dim};
	}
	if (!e) {
		m->n_heads = q[0];
		m->n_kv_heads = kv[0];
	}
	free(q);
	free(kv);
	if (e)
		return e;
	/* MLP widths: ffn_multipliers (a list or one number) x model_dim */
	if ((e = get_uint(c, "ffn_dim_divisor", false, 256, 1, MAX_FFN,
			  &divisor)))
		return e;
	char where[128], got[96];
	const cJSON *it = find(c, "ffn_multipliers", where, sizeof where);
	for (uint32_t i = 0; i < n; i++) {
		const cJSON *x = it;
		if (it && cJSON_IsArray(it)) {
			if (cJSON_GetArraySize(it) != (int)n)
				return fail(c,
					    "%s: must list one value per layer "
					    "(%u), got %d",
					    where, n, cJSON_GetArraySize(it));
			x = cJSON_GetArrayItem(it, (int)i);
		}
		double mult = 4.0;
		if (x && !cJSON_IsNull(x)) {
			if (!cJSON_IsNumber(x) || !(x->valuedouble > 0) ||
			    x->valuedouble > 1000) {
				show(x, got, sizeof got);
				return fail(c,
					    "%s: must be positive numbers, got "
					    "%s",
					    where, got);
			}
			mult = x->valuedouble;
		}
		m->layers[i].mlp = KV_MLP_DENSE;
		m->layers[i].ffn_dim =
			make_divisible(mult * (double)m->hidden, divisor);
	}
	m->intermediate = m->layers[0].ffn_dim;
	if ((e = get_uint(c, "vocab_size", false, 32000, 1, MAX_VOCAB,
			  &m->vocab)) ||
	    (e = get_uint(c, "max_context_length", false, 2048, 1, MAX_POS,
			  &m->max_pos)) ||
	    (e = get_bool(c, "share_input_output_layers", false,
			  &m->tie_embeddings)) ||
	    (e = get_bool(c, "normalize_qk_projections", false, &m->qk_norm)) ||
	    (e = get_double(c, "rope_freq_constant", 10000, &m->rope_theta)))
		return e;
	m->gated_mlp = true;
	return 0;
}

/* The dtype: torch_dtype (or the newer "dtype"), f32 when absent. A
 * wrapper's own comes first, its text_config's only when it has none:
 * Transformers loads the whole model in the root's dtype, and vLLM falls
 * back to the text config's only without one. */
static int read_dtype(struct cfg *wc, struct kv_model *m)
{
	const char *s;
	struct cfg top = *wc, *c = wc;
	top.text = top.root;
	if (present(&top, "torch_dtype") || present(&top, "dtype"))
		c = &top;
	const char *field = present(c, "torch_dtype") ? "torch_dtype" : "dtype";
	int e = get_str(c, field, &s);
	if (e)
		return e;
	/* Transformers loads a config without a dtype in float32; gpt-oss's
	 * reference implementation runs in bfloat16 and its config has none */
	m->dtype = m->family == KV_FAMILY_GPT_OSS ? KV_DTYPE_BF16 : KV_DTYPE_F32;
	m->dtype_given = s != NULL;
	/* Qwen (the first) names its dtype by flags, bf16, fp16 or fp32;
	 * with none set its code takes bf16 (on a GPU that has it) */
	bool bf16 = false, fp16 = false, fp32 = false;
	if (!s && !strcmp(m->model_type, "qwen")) {
		if ((e = get_bool(c, "bf16", false, &bf16)) ||
		    (e = get_bool(c, "fp16", false, &fp16)) ||
		    (e = get_bool(c, "fp32", false, &fp32)))
			return e;
		m->dtype = KV_DTYPE_BF16;
		if (!bf16 && fp16)
			m->dtype = KV_DTYPE_F16;
		else if (!bf16 && fp32)
			m->dtype = KV_DTYPE_F32;
	}
	if (s && kv_dtype_from_torch(s, &m->dtype)) {
		char where[128];
		find(c, field, where, sizeof where);
		return fail(c,
			    "%s: unknown dtype, expected float32, float16 or "
			    "bfloat16, got \"%.60s\"",
			    where, s);
	}
	return 0;
}

/* The modules a quantization_config leaves as they are, from every list
 * the methods name them in. */
static int quant_ignore(struct cfg *q, struct kv_quant *k)
{
	static const char *const lists[] = {
		"modules_to_not_convert", "ignore", "llm_int8_skip_modules",
		"ignored_layers", "exclude_modules", NULL};
	for (const char *const *l = lists; *l; l++) {
		const cJSON *it, *el;
		int e = get_kind(q, *l, K_LIST, &it);
		if (e)
			return e;
		uint32_t i = 0;
		cJSON_ArrayForEach(el, it)
		{
			char where[160], got[96];
			if (!cJSON_IsString(el)) {
				find(q, *l, where, sizeof where);
				show(el, got, sizeof got);
				return fail(q, "%s[%u]: must be a module name, "
					    "got %s", where, i, got);
			}
			if ((e = kv_quant_ignore_add(k, el->valuestring)) ==
			    KV_EINVAL) {
				find(q, *l, where, sizeof where);
				return fail(q, "%s[%u]: '%s': not a regular "
					    "expression",
					    where, i, el->valuestring);
			}
			if (e)
				return e;
			i++;
		}
	}
	return 0;
}

/* A group size: -1 (or absent: def) for one scale per row, else a size
 * that divides the hidden size (every matrix's rows are made of it). */
static int quant_group(struct cfg *q, const struct kv_model *m,
		       const char *field, uint64_t def, uint64_t *out)
{
	char where[128];
	const cJSON *it = find(q, field, where, sizeof where);
	*out = def;
	if (!it || cJSON_IsNull(it) ||
	    (cJSON_IsNumber(it) && it->valuedouble == -1)) {
		if (it && !cJSON_IsNull(it))
			*out = 0;
		return 0;
	}
	int e = check_uint(q, it, where, 1, MAX_HIDDEN, out);
	if (!e && m->hidden % *out)
		return fail(q, "%s: must divide the hidden size (%llu), got "
			    "%llu", where, (unsigned long long)m->hidden,
			    (unsigned long long)*out);
	return e;
}

/* fp8's weight_block_size, [n, k]: into k->block_n and block_k. */
static int quant_block(struct cfg *q, const char *field, struct kv_quant *k)
{
	const cJSON *it;
	int e = get_kind(q, field, K_LIST, &it);
	if (e || !it)
		return e;
	char where[160];
	find(q, field, where, sizeof where);
	if (cJSON_GetArraySize(it) != 2)
		return fail(q, "%s: must be [rows, columns] of a scale's block, "
			    "got a list of %d", where, cJSON_GetArraySize(it));
	uint64_t v[2];
	for (int i = 0; i < 2; i++)
		if ((e = check_uint(q, cJSON_GetArrayItem(it, i), where, 1,
				    1 << 16, &v[i])))
			return e;
	k->block_n = (uint32_t)v[0];
	k->block_k = (uint32_t)v[1];
	return 0;
}

/* compressed-tensors: the first of config_groups that quantizes weights,
 * its num_bits, type, strategy, group or block, symmetry and order. */
static int quant_ct(struct cfg *q, const struct kv_model *m,
		    struct kv_quant *k)
{
	struct cfg groups, w;
	bool has;
	const char *format = NULL, *type = NULL, *strategy = NULL;
	int e;
	if ((e = get_str(q, "format", &format)) ||
	    (e = nested(q, "config_groups", &groups, &has)))
		return e;
	const cJSON *g = NULL, *it;
	if (has)
		cJSON_ArrayForEach(it, groups.root)
		{
			if (cJSON_IsObject(it) &&
			    cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(
				    it, "weights"))) {
				g = it;
				break;
			}
		}
	if (!g)
		return fail(q, "quantization_config.config_groups: no group "
			    "quantizes weights");
	struct cfg gc = groups;
	char prefix[160];
	snprintf(prefix, sizeof prefix, "quantization_config.config_groups.%s",
		 g->string);
	gc.root = gc.text = g;
	gc.prefix = prefix;
	if ((e = nested(&gc, "weights", &w, &has)))
		return e;
	snprintf(prefix + strlen(prefix), sizeof prefix - strlen(prefix),
		 ".weights");
	w.prefix = prefix;
	uint64_t bits;
	bool sym;
	const cJSON *order;
	if ((e = get_uint(&w, "num_bits", true, 0, 1, 16, &bits)) ||
	    (e = get_str(&w, "type", &type)) ||
	    (e = get_str(&w, "strategy", &strategy)) ||
	    (e = get_bool(&w, "symmetric", true, &sym)) ||
	    (e = get_kind(&w, "actorder", K_STR | K_BOOL, &order)) ||
	    (e = quant_block(&w, "block_structure", k)))
		return e;
	k->bits = (uint32_t)bits;
	k->zeros = !sym;
	k->g_idx = order && !cJSON_IsFalse(order);
	/* scales in the checkpoint's dtype */
	k->scale_bytes = kv_dtype_info(m->dtype)->block_bytes /
			 kv_dtype_info(m->dtype)->block;
	bool fl = type && !strcmp(type, "float");
	if (fl && bits == 4) {
		k->fmt = KV_QUANT_NVFP4;
		return 0;
	}
	k->fmt = fl ? KV_QUANT_CT_FP8 : KV_QUANT_CT_INT;
	k->packed = format && strstr(format, "pack");
	struct cfg in;
	bool dyn = true;
	if ((e = nested(&gc, "input_activations", &in, &has)) ||
	    (has && (e = get_bool(&in, "dynamic", false, &dyn))))
		return e;
	k->input_scale = !dyn;
	if (strategy && !strcmp(strategy, "tensor"))
		k->group = UINT64_MAX;
	else if (strategy && !strcmp(strategy, "group"))
		return quant_group(&w, m, "group_size", 128, &k->group);
	return 0;
}

/*
 * The checkpoint's quantization_config (at the top level or in the text
 * model's): which matrices are stored how, and which modules are left as
 * they are. A quant_method not modelled is kept as KV_QUANT_UNKNOWN (the
 * tools say so and count the parameters in the config's dtype); a
 * malformed one (bits 0, a group size that does not divide, a string where
 * a number belongs) is refused.
 */
static int read_quant(struct cfg *c, struct kv_model *m)
{
	struct cfg q;
	bool has;
	const char *method = NULL, *s = NULL;
	struct kv_quant *k = &m->quant;
	int e = nested(c, "quantization_config", &q, &has);
	if (e || !has)
		return e;
	q.prefix = "quantization_config";
	if ((e = get_str(&q, "quant_method", &method)) ||
	    (e = quant_ignore(&q, k)))
		return e;
	snprintf(k->method, sizeof k->method, "%s", method ? method : "");
	uint64_t bits = 4;
	bool b;
	k->fmt = KV_QUANT_UNKNOWN;
	if (!method) {
		return fail(&q, "quantization_config.quant_method: missing; "
			    "the format of the weights cannot be guessed");
	} else if (!strcmp(method, "fp8")) {
		k->fmt = KV_QUANT_FP8;
		k->bits = 8;
		if ((e = quant_block(&q, "weight_block_size", k)) ||
		    (e = get_str(&q, "activation_scheme", &s)))
			return e;
		k->input_scale = s && !strcmp(s, "static");
	} else if (!strcmp(method, "mxfp4")) {
		k->fmt = KV_QUANT_MXFP4;
		k->bits = 4;
		k->experts_only = true;
	} else if (!strcmp(method, "awq") || !strcmp(method, "gptq")) {
		bool awq = method[0] == 'a';
		k->fmt = awq ? KV_QUANT_AWQ : KV_QUANT_GPTQ;
		k->g_idx = !awq;
		if ((e = get_uint(&q, present(&q, "w_bit") ? "w_bit" : "bits",
				  false, 4, 1, 8, &bits)) ||
		    (e = quant_group(&q, m,
				     present(&q, "q_group_size")
					     ? "q_group_size"
					     : "group_size",
				     128, &k->group)) ||
		    (e = get_bool(&q, "zero_point", true, &b)))
			return e;
		k->bits = (uint32_t)bits;
		k->zeros = true; /* both store qzeros, symmetric or not */
	} else if (!strcmp(method, "compressed-tensors")) {
		if ((e = quant_ct(&q, m, k)))
			return e;
	} else if (!strcmp(method, "bitsandbytes")) {
		bool four, eight;
		if ((e = get_bool(&q, "load_in_4bit", false, &four)) ||
		    (e = get_bool(&q, "load_in_8bit", false, &eight)) ||
		    (e = get_bool(&q, "bnb_4bit_use_double_quant", false,
				  &k->double_quant)))
			return e;
		if (four == eight)
			return fail(&q, "quantization_config: load_in_4bit or "
				    "load_in_8bit, one of them, got %s",
				    four ? "both" : "neither");
		k->fmt = four ? KV_QUANT_BNB4 : KV_QUANT_BNB8;
		k->bits = four ? 4 : 8;
	} else if (!strcmp(method, "modelopt")) {
		if ((e = get_str(&q, "quant_algo", &s)))
			return e;
		if (s && !strcmp(s, "FP8")) {
			k->fmt = KV_QUANT_FP8;
			k->input_scale = true;
		} else if (s && !strcmp(s, "NVFP4")) {
			k->fmt = KV_QUANT_NVFP4;
		}
	}
	return 0;
}

/*
 * The Mamba mixers' fields, by family: names (NULL: not read) and the
 * defaults of the family's config class. Mamba-1 keeps a state of d_inner
 * x (d_conv + d_state) values; Mamba-2 one of (d_inner + 2 groups d_state)
 * x d_conv + d_inner x d_state.
 */
struct mamba_fields {
	const char *types; /* model_types, space-separated */
	uint32_t version;
	const char *heads, *head_dim, *groups, *state, *conv, *expand;
	const char *inner; /* d_inner given outright */
	uint32_t d_heads, d_head_dim, d_groups, d_state, d_conv;
	bool inner_heads; /* d_inner = heads x head_dim, not expand x hidden */
};

static const struct mamba_fields MAMBA[] = {
	{" jamba zamba ", 1, NULL, NULL, NULL, "mamba_d_state", "mamba_d_conv",
	 "mamba_expand", NULL, 0, 0, 0, 16, 4, false},
	{" mamba falcon_mamba ", 1, NULL, NULL, NULL, "state_size",
	 "conv_kernel", "expand", "intermediate_size", 0, 0, 0, 16, 4, false},
	{" mamba2 ", 2, "num_heads", "head_dim", "n_groups", "state_size",
	 "conv_kernel", "expand", NULL, 128, 64, 1, 128, 4, false},
	{" bamba granitemoehybrid ", 2, "mamba_n_heads", "mamba_d_head",
	 "mamba_n_groups", "mamba_d_state", "mamba_d_conv", "mamba_expand",
	 NULL, 128, 0, 1, 256, 4, false},
	{" falcon_h1 ", 2, "mamba_n_heads", "mamba_d_head", "mamba_n_groups",
	 "mamba_d_state", "mamba_d_conv", "mamba_expand", "mamba_d_ssm", 128,
	 0, 1, 256, 4, false},
	{" nemotron_h ", 2, "mamba_num_heads", "mamba_head_dim", "n_groups",
	 "ssm_state_size", "conv_kernel", "expand", NULL, 128, 64, 8, 128, 4,
	 true},
	/* Zamba2: heads of mamba_headdim over mamba_expand x hidden */
	{" zamba2 ", 2, NULL, "mamba_headdim", "mamba_ngroups", "mamba_d_state",
	 "mamba_d_conv", "mamba_expand", NULL, 0, 64, 1, 64, 4, false},
	/* gated DeltaNet: value heads, key heads (groups) of d_state */
	{" qwen3_next qwen3_5_text qwen3_5_moe_text ", 3,
	 "linear_num_value_heads", "linear_value_head_dim",
	 "linear_num_key_heads", "linear_key_head_dim",
	 "linear_conv_kernel_dim", NULL, NULL, 32, 128, 16, 128, 4, true},
	/* state-spaces' own configs: ssm_cfg of mamba_ssm's Mamba, Mamba2 */
	{" ssm_cfg ", 1, NULL, NULL, NULL, "d_state", "d_conv", "expand", NULL,
	 0, 0, 0, 16, 4, false},
	{" ssm_cfg2 ", 2, NULL, "headdim", "ngroups", "d_state", "d_conv",
	 "expand", NULL, 0, 64, 1, 128, 4, false},
};

static const struct mamba_fields *mamba_fields(const char *type)
{
	char key[80];
	snprintf(key, sizeof key, " %s ", type);
	for (size_t i = 0; i < sizeof MAMBA / sizeof MAMBA[0]; i++)
		if (strstr(MAMBA[i].types, key))
			return &MAMBA[i];
	return NULL;
}

/* A field that may be "auto" (or null, or absent): 0 then. */
static int get_auto(struct cfg *c, const char *field, uint64_t hi,
		    uint64_t *out)
{
	char where[128];
	const cJSON *it = find(c, field, where, sizeof where);
	*out = 0;
	if (!it || cJSON_IsNull(it) ||
	    (cJSON_IsString(it) && !strcmp(it->valuestring, "auto")))
		return 0;
	return check_uint(c, it, where, 1, hi, out);
}

/* The Mamba mixers of a model with fields f: what each keeps per sequence,
 * whatever its length, and what its weights are. */
static int read_mamba(struct cfg *c, struct kv_model *m,
		      const struct mamba_fields *f)
{
	uint64_t expand, v, heads = 0, hd = 0, inner = 0;
	int e;
	m->ssm_version = f->version;
	m->ssm_dtype = m->dtype;
	const char *sd = NULL;
	if ((e = get_u32(c, f->state, false, f->d_state, 1, 1 << 16,
			 &m->ssm_d_state)) ||
	    (e = get_u32(c, f->conv, false, f->d_conv, 1, 1 << 10,
			 &m->ssm_d_conv)) ||
	    (e = get_str(c, "mamba_ssm_dtype", &sd)))
		return e;
	expand = 2;
	if ((f->expand &&
	     (e = get_uint(c, f->expand, false, 2, 1, 1 << 10, &expand))) ||
	    (f->inner && (e = get_auto(c, f->inner, MAX_FFN, &inner))))
		return e;
	if (sd && kv_dtype_from_torch(sd, &m->ssm_dtype))
		return fail(c, "mamba_ssm_dtype: unknown dtype, expected "
			    "float32, float16 or bfloat16, got \"%.60s\"", sd);
	m->ssm_d_inner = inner ? inner : expand * m->hidden;
	if (f->version == 1) {
		const char *dt = !strcmp(f->state, "mamba_d_state")
					 ? "mamba_dt_rank"
					 : "time_step_rank";
		if ((e = get_auto(c, dt, MAX_HIDDEN, &v)))
			return e;
		m->ssm_dt_rank = (uint32_t)(v ? v : (m->hidden + 15) / 16);
		return 0;
	}
	if ((f->heads && (e = get_uint(c, f->heads, false, f->d_heads, 1,
				       MAX_HEADS, &heads))) ||
	    (e = get_auto(c, f->head_dim, MAX_HEAD_DIM, &hd)))
		return e;
	if (!hd)
		hd = f->d_head_dim;
	if (!f->heads) /* heads of head_dim channels */
		heads = m->ssm_d_inner / hd ? m->ssm_d_inner / hd : 1;
	/* NemotronH's older copies spell the groups mamba_num_groups */
	const char *g = present(c, f->groups) || !present(c, "mamba_num_groups")
				? f->groups
				: "mamba_num_groups";
	if ((e = get_u32(c, g, false, f->d_groups, 1, 1 << 16,
			 &m->ssm_groups)))
		return e;
	if (f->inner_heads && hd)
		m->ssm_d_inner = heads * hd;
	m->ssm_heads = (uint32_t)heads;
	if (m->ssm_d_inner % heads || (hd && m->ssm_d_inner != heads * hd)) {
		char where[128];
		find(c, f->heads, where, sizeof where);
		return fail(c,
			    "%s: %llu heads%s do not make the %llu channels "
			    "of the Mamba mixer",
			    where, (unsigned long long)heads,
			    hd ? " of their head size" : "",
			    (unsigned long long)m->ssm_d_inner);
	}
	return 0;
}

/*
 * Linear attention that keeps a fixed state per sequence in place of KV:
 * MiniMax's lightning attention (attn_type_list's 0 layers, or layer_types'
 * linear_attention), a num_attention_heads x head_dim x head_dim state in
 * the model's dtype; Kimi Linear's KDA (linear_attn_config), a state of
 * num_heads x head_dim x head_dim in float32 and a short convolution of
 * short_conv_kernel_size over its q, k and v. Both go in the Mamba-2
 * terms kv_model_state_bytes() reads: heads x head_dim channels of
 * head_dim state each, and for KDA one group per head (its keys).
 * RecurrentGemma's recurrent blocks (RG-LRU) keep a float32 value per
 * channel of lru_width and the convolution's last conv1d_width - 1
 * inputs. Returns 0, with m untouched where none applies (a KDA without
 * its heads and head size is not sized).
 */
static int read_linear(struct cfg *c, struct kv_model *m)
{
	static const char *const lightning[] = {
		"minimax", "minimax_m1", "minimax_text_01", "bailing_moe_linear",
		NULL};
	struct cfg lin;
	uint32_t heads = m->n_heads, hd = m->head_dim, conv = 0;
	uint64_t inner;
	bool has_lin;
	int e = nested(c, "linear_attn_config", &lin, &has_lin);
	if (e)
		return e;
	if (!strcmp(m->model_type, "recurrent_gemma")) {
		m->ssm_version = 6;
		m->ssm_dtype = KV_DTYPE_F32;
		if ((e = get_uint(c, "lru_width", false, m->hidden, 1,
				  MAX_HIDDEN, &inner)) ||
		    (e = get_u32(c, "conv1d_width", false, 4, 1, 1 << 10,
				 &conv)))
			return e;
		if (inner % heads)
			return fail(c, "lru_width: must split into the %u "
				    "heads' blocks, got %llu",
				    heads, (unsigned long long)inner);
		hd = 1; /* the state: one value a channel */
	} else if (!strcmp(m->model_type, "lfm2") ||
		   !strcmp(m->model_type, "lfm2_moe")) {
		/* a gated convolution over the hidden state: its cache the
		 * last conv_L_cache inputs, in the model's dtype */
		m->ssm_version = 7;
		m->ssm_dtype = m->dtype;
		inner = m->hidden;
		heads = 1;
		hd = 0;
		if ((e = get_u32(c, "conv_L_cache", false, 3, 1, 1 << 10,
				 &conv)) ||
		    (e = get_bool(c, "conv_bias", false, &m->ssm_bias)))
			return e;
	} else if (present(c, "attn_type_list") ||
		   is(m->model_type, lightning)) {
		m->ssm_version = 4;
		m->ssm_dtype = m->dtype;
		inner = (uint64_t)heads * hd;
	} else if (has_lin && present(&lin, "num_heads") && present(&lin, "head_dim")) {
		m->ssm_version = 5;
		m->ssm_dtype = KV_DTYPE_F32;
		if ((e = get_u32(&lin, "num_heads", true, 0, 1, MAX_HEADS,
				 &heads)) ||
		    (e = get_u32(&lin, "head_dim", true, 0, 1, MAX_HEAD_DIM,
				 &hd)) ||
		    (e = get_u32(&lin, "short_conv_kernel_size", false, 4, 1,
				 1 << 10, &conv)))
			return e;
		m->ssm_groups = heads;
		inner = (uint64_t)heads * hd;
	} else {
		return 0;
	}
	m->ssm_heads = heads;
	m->ssm_d_inner = inner;
	m->ssm_d_state = hd;
	m->ssm_d_conv = conv;
	for (uint32_t i = 0; i < m->n_layers; i++)
		m->layers[i].ssm = m->layers[i].attn == KV_ATTN_NONE;
	return 0;
}

/*
 * Nemotron-NAS (DeciLM) block_configs, one per layer: an attention of
 * num_attention_heads / n_heads_in_group KV heads (sliding when it names
 * a window_length), or none where it is no_op or replace_with_linear (a
 * matrix, no cache); an MLP of ffn_mult
 * (DeciLM's width: 2 ffn_mult hidden / 3, rounded up to 256), or none.
 * With ffn, the MLP widths (after read_mlp()); without, the attention
 * into kinds[], kvh[] and win[].
 */
static int read_blocks(struct cfg *c, struct kv_model *m, bool ffn,
		       enum kv_attn *kinds, uint32_t *kvh, uint64_t *win)
{
	char where[32], what[48], got[96];
	const cJSON *it = find(c, "block_configs", where, sizeof where), *el;
	if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != (int)m->n_layers) {
		show(it, got, sizeof got);
		return fail(c, "%s: must list one block per layer (%u), got %s",
			    where, m->n_layers, got);
	}
	uint32_t i = 0;
	cJSON_ArrayForEach(el, it)
	{
		struct cfg b = *c, sub;
		b.root = b.text = el;
		b.text_name = NULL;
		snprintf(what, sizeof what, "%s[%u]", where, i);
		b.prefix = what;
		bool has = false;
		int e = cJSON_IsObject(el)
				? nested(&b, ffn ? "ffn" : "attention", &sub, &has)
				: 0;
		if (e)
			return e;
		if (!has) {
			show(el, got, sizeof got);
			return fail(c, "%s: must be an object with attention "
				    "and ffn, got %s", what, got);
		}
		char name[64];
		snprintf(name, sizeof name, "%s.%s", what,
			 ffn ? "ffn" : "attention");
		sub.prefix = name;
		bool no_op, linear;
		if ((e = get_bool(&sub, "no_op", false, &no_op)) ||
		    (e = get_bool(&sub, "replace_with_linear", false, &linear)))
			return e;
		if (ffn) {
			double mult = 0;
			if (!no_op && !linear &&
			    (e = get_double(&sub, "ffn_mult", 0, &mult)))
				return e;
			double h = (double)m->hidden;
			uint64_t w = (uint64_t)(2 * mult * h / 3);
			m->layers[i].mlp = KV_MLP_DENSE;
			m->layers[i].ffn_dim = (w + 255) / 256 * 256;
			if (m->layers[i].ffn_dim > MAX_FFN)
				return fail(c, "%s.ffn_mult: absurd value, got "
					    "%g", name, mult);
		} else if (no_op || linear) {
			kinds[i] = KV_ATTN_NONE;
		} else {
			uint64_t g;
			if ((e = get_uint(&sub, "n_heads_in_group", true, 0, 1,
					  m->n_heads, &g)))
				return e;
			if (m->n_heads % g)
				return fail(c, "%s.n_heads_in_group: must "
					    "divide the %u attention heads, "
					    "got %llu", name, m->n_heads,
					    (unsigned long long)g);
			kvh[i] = (uint32_t)(m->n_heads / g);
			if ((e = get_uint(&sub, "window_length", false, 0, 1,
					  MAX_POS, &win[i])))
				return e;
			if (win[i])
				kinds[i] = KV_ATTN_SLIDING;
		}
		i++;
	}
	return 0;
}

/*
 * The LayerNorm families of GPT-2's and GPT-NeoX's lineage: the biases
 * their config classes fix, or take from a field of their own (attention,
 * MLP; NULL: none), a block of one norm (attention and MLP side by side),
 * learned positions (OPT's two rows past max_position_embeddings), a norm
 * of the embedding, q and k LayerNorms over a head (qk_layernorm). MPT's
 * LayerNorms drop their bias, and it takes no_bias: it is not one of them.
 */
static int read_ln_family(struct cfg *c, struct kv_model *m)
{
	static const struct {
		const char *type, *attn, *mlp; /* fields */
		bool o, qkv, mlp_def, head, parallel, embed_norm;
		uint32_t pos;  /* 1: max_pos rows, 3: max_pos + 2 */
		uint32_t qkln; /* qk_layernorm: 0 not read, 1 default false,
				  2 default true */
	} F[] = {
		{"gpt_neox", "attention_bias", NULL, 1, 1, 1, 0, 0, 0, 0, 0},
		{"gptj", NULL, NULL, 0, 0, 1, 1, 1, 0, 0, 0},
		{"codegen", NULL, NULL, 0, 0, 1, 1, 1, 0, 0, 0},
		{"gpt_neo", NULL, NULL, 1, 0, 1, 0, 0, 0, 1, 0},
		{"bloom", NULL, NULL, 1, 1, 1, 0, 0, 1, 0, 0},
		{"opt", "enable_bias", "enable_bias", 1, 1, 1, 0, 0, 0, 3, 0},
		{"starcoder2", "use_bias", "use_bias", 1, 1, 1, 0, 0, 0, 0, 0},
		{"phi", NULL, NULL, 1, 1, 1, 1, 1, 0, 0, 1},
		{"persimmon", NULL, NULL, 1, 1, 1, 0, 0, 0, 0, 2},
		{"nemotron", "attention_bias", "mlp_bias", 0, 0, 0, 0, 0, 0, 0,
		 0},
		{"xglm", NULL, NULL, 1, 1, 1, 0, 0, 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof F / sizeof F[0]; i++) {
		if (strcmp(m->model_type, F[i].type))
			continue;
		bool o = F[i].o, mlp = F[i].mlp_def;
		int e = 0;
		if ((F[i].attn && (e = get_bool(c, F[i].attn, o, &o))) ||
		    (F[i].mlp && (e = get_bool(c, F[i].mlp, mlp, &mlp))) ||
		    (F[i].qkln && (e = get_bool(c, "qk_layernorm",
						F[i].qkln == 2, &m->qk_norm))))
			return e;
		m->layernorm = true;
		m->o_bias = o;
		m->qkv_bias = F[i].attn ? o : F[i].qkv;
		m->mlp_bias = mlp;
		m->head_bias = F[i].head;
		m->parallel_block = F[i].parallel;
		m->embed_norm = F[i].embed_norm;
		if (F[i].pos)
			m->learned_pos = m->max_pos + F[i].pos - 1;
		if (strcmp(F[i].type, "opt"))
			return 0;
		/* OPT's embedding may be narrower than the model, projected
		 * in and out; without do_layer_norm_before, no final norm */
		bool before, removed;
		if ((e = get_uint(c, "word_embed_proj_dim", false, m->hidden, 1,
				  MAX_HIDDEN, &m->embed_dim)) ||
		    (e = get_bool(c, "do_layer_norm_before", true, &before)) ||
		    (e = get_bool(c, "_remove_final_layer_norm", false,
				  &removed)))
			return e;
		m->no_final_norm = !before || removed;
		return 0;
	}
	return 0;
}

/* LFM2's configs may name the head's tie tie_embedding. */
static const char *tie_name(struct cfg *c)
{
	return !present(c, "tie_word_embeddings") && present(c, "tie_embedding")
		       ? "tie_embedding"
		       : "tie_word_embeddings";
}

/* MiMo-V2-Flash's two attentions: its full layers' V heads of v_head_dim,
 * its sliding ones' K/V heads of their own (swa_num_key_value_heads,
 * swa_head_dim, swa_v_head_dim), each defaulting to the full layers'. */
static int mimo_heads(struct cfg *c, struct kv_model *m)
{
	uint32_t v, kvh, hk, hv;
	int e;
	if ((e = get_u32(c, "v_head_dim", false, m->head_dim, 1, MAX_HEAD_DIM,
			 &v)) ||
	    (e = get_u32(c, "swa_num_key_value_heads", false, m->n_kv_heads, 1,
			 m->n_heads, &kvh)) ||
	    (e = get_u32(c, "swa_head_dim", false, m->head_dim, 1,
			 MAX_HEAD_DIM, &hk)) ||
	    (e = get_u32(c, "swa_v_head_dim", false, v, 1, MAX_HEAD_DIM, &hv)))
		return e;
	if (m->n_heads % kvh)
		return fail(c, "swa_num_key_value_heads: must divide "
			    "num_attention_heads (%u), got %u", m->n_heads, kvh);
	m->head_dim_v = v;
	for (uint32_t i = 0; i < m->n_layers; i++) {
		struct kv_layer *l = &m->layers[i];
		if (l->attn == KV_ATTN_SLIDING) {
			l->kv_heads = kvh;
			l->head_dim_k = hk;
			l->head_dim_v = hv;
		} else if (l->attn != KV_ATTN_NONE) {
			l->head_dim_v = v;
		}
	}
	return 0;
}

/*
 * A model of Mamba layers only (Mamba, Falcon Mamba, Mamba2, or
 * state-spaces' own configs, whose ssm_cfg names the layer): no attention,
 * so no KV cache; each layer keeps a fixed state, and is a norm and a
 * mixer, no MLP.
 */
static int build_ssm(struct cfg *c, struct kv_model *m)
{
	static const char *const layers[] = {"num_hidden_layers", "n_layer",
					     "n_layers", NULL};
	static const char *const hidden[] = {"hidden_size", "d_model", NULL};
	uint64_t v;
	int e;
	if ((e = get_uint_any(c, layers, true, 0, 1, MAX_LAYERS, &v)) ||
	    (e = get_uint_any(c, hidden, true, 0, 1, MAX_HIDDEN, &m->hidden)))
		return e;
	m->n_layers = (uint32_t)v;
	m->layers = calloc(m->n_layers, sizeof *m->layers);
	if (!m->layers)
		return KV_ENOMEM;
	for (uint32_t i = 0; i < m->n_layers; i++)
		m->layers[i] = (struct kv_layer){.attn = KV_ATTN_NONE,
						 .mlp = KV_MLP_NONE,
						 .ssm = true};
	struct cfg sub, *mc = c;
	const char *layer = NULL;
	const char *type = m->model_type;
	bool has = false;
	if (!type[0] && (e = nested(c, "ssm_cfg", &sub, &has)))
		return e;
	if (has) {
		/* mamba_ssm's hybrids: attention layers and MLPs it names */
		static const char *const extra[] = {"attn_layer_idx",
						    "d_intermediate", NULL};
		for (const char *const *x = extra; *x; x++) {
			char where[128];
			const cJSON *it;
			if ((e = get_kind(c, *x, K_LIST | K_NUM, &it)))
				return e;
			find(c, *x, where, sizeof where);
			if ((cJSON_IsArray(it) && cJSON_GetArraySize(it)) ||
			    (cJSON_IsNumber(it) && it->valuedouble != 0))
				return fail(c, "%s: attention layers or MLPs "
					    "in a state-spaces config are not "
					    "read", where);
		}
		if ((e = get_str(&sub, "layer", &layer)))
			return e;
		type = layer && !strcmp(layer, "Mamba2") ? "ssm_cfg2"
							 : "ssm_cfg";
		mc = &sub;
	}
	if ((e = read_mamba(mc, m, mamba_fields(type))))
		return e;
	static const char *const eps_names[] = {"layer_norm_epsilon",
						"rms_norm_eps", NULL};
	const char *eps = first_of(c, eps_names);
	uint64_t pad;
	if ((e = get_uint(c, "vocab_size", false, 50280, 1, MAX_VOCAB,
			  &m->vocab)) ||
	    (e = get_uint(c, "pad_vocab_size_multiple", false, 1, 1, 1 << 16,
			  &pad)) ||
	    (e = get_bool(c, present(c, "tie_embeddings")
				     ? "tie_embeddings"
				     : "tie_word_embeddings",
			  true, &m->tie_embeddings)) ||
	    (e = get_double(c, eps ? eps : eps_names[0], 1e-5,
			    &m->norm_eps)))
		return e;
	m->vocab = (m->vocab + pad - 1) / pad * pad; /* mamba_ssm pads */
	return 0;
}

/* The config's model_type (GPT-2's for a config with its names and no
 * type, Persimmon's for Fuyu), refused where its cache does not grow with
 * the tokens (an encoder-decoder, a recurrent model), and its family;
 * *type is the field as given (NULL: absent), m->note set for a type not
 * known. */
static int identify(struct cfg *c, struct kv_model *m, const char **type,
		    struct family *fam)
{
	int e;
	if ((e = get_str(c, "model_type", type)))
		return e;
	if (!*type && (present(c, "n_layer") || present(c, "n_embd")) &&
	    !present(c, "ssm_cfg"))
		*type = "gpt2";
	/* Fuyu's text model is Persimmon's, its shape at the top level */
	if (*type && !strcmp(*type, "fuyu"))
		*type = "persimmon";
	snprintf(m->model_type, sizeof m->model_type, "%s",
		 *type ? *type : "");
	static const char *const enc_dec[] = {
		"t5", "mt5", "umt5", "longt5", "bart", "mbart", "whisper",
		"marian", "pegasus", "pegasus_x", "led", "blenderbot",
		"blenderbot-small", "m2m_100", "nllb-moe", "plbart", "fsmt",
		"prophetnet", "switch_transformers", "bigbird_pegasus",
		"seamless_m4t", "seamless_m4t_v2", "t5gemma", "encoder-decoder",
		"speech-encoder-decoder", "vision-encoder-decoder", NULL};
	bool ed;
	if ((e = get_bool(c, "is_encoder_decoder", false, &ed)))
		return e;
	if (ed || is(m->model_type, enc_dec))
		return fail(c, "model_type \"%s\": an encoder-decoder: only "
			    "decoder-only models are sized here, whose cache "
			    "grows with the tokens they generate",
			    m->model_type);
	static const char *const recurrent[] = {"rwkv", "rwkv5", "rwkv6",
						"rwkv7", "xlstm", NULL};
	if (is(m->model_type, recurrent))
		return fail(c, "model_type \"%s\": a recurrent model with no "
			    "attention layer, so no KV cache: what it keeps "
			    "per sequence is a fixed state, whatever the "
			    "context",
			    m->model_type);
	bool known;
	*fam = family_of(m->model_type, &known);
	m->family = fam->family;
	if (!known && !(!*type && present(c, "ssm_cfg")))
		snprintf(m->note, sizeof m->note,
			 "model_type \"%s\" is not a known family; read as a "
			 "Llama-style config",
			 m->model_type);
	return 0;
}

/* The rest of a decoder block's fields: vocabulary, positions, the tied
 * head, biases, the MLP's gate, the norms, the rotary base. */
static int read_block(struct cfg *c, struct kv_model *m,
		      const struct defaults *d, bool nemotron)
{
	int e;
	static const char *const pos_names[] = {"max_position_embeddings",
						"n_positions", "n_ctx",
						"max_sequence_length",
						"seq_length", "max_seq_len",
						"model_max_length", NULL};
	static const char *const vocab_names[] = {"vocab_size",
						  "padded_vocab_size", NULL};
	bool bias_def = m->family == KV_FAMILY_GPT2 ||
			m->family == KV_FAMILY_GPT_OSS;
	/* Qwen2's and the first Qwen's q, k and v are biased */
	bool qwen2 = !strncmp(m->model_type, "qwen2", 5) ||
		     !strcmp(m->model_type, "qwen");
	if ((e = get_uint_any(c, vocab_names, false, d->vocab, 1, MAX_VOCAB,
			      &m->vocab)) ||
	    (e = get_uint_any(c, pos_names, false, d->max_pos, 1, MAX_POS,
			      &m->max_pos)) ||
	    (e = get_bool(c, tie_name(c), d->tie, &m->tie_embeddings)))
		return e;
	if (m->family == KV_FAMILY_FALCON) {
		bool b;
		if ((e = get_bool(c, "bias", false, &b)) ||
		    (e = get_bool(c, "parallel_attn", true, &m->parallel_block)))
			return e;
		m->qkv_bias = m->o_bias = m->mlp_bias = b;
	} else {
		if ((e = get_bool(c, "attention_bias", bias_def, &m->o_bias)) ||
		    (e = get_bool(c, "mlp_bias",
				  m->family == KV_FAMILY_GPT2 ||
					  !strcmp(m->model_type,
						  "recurrent_gemma"),
				  &m->mlp_bias)))
			return e;
		m->qkv_bias = m->o_bias || qwen2;
		if (qwen2)
			m->o_bias = false;
	}
	/* MLPs of two matrices (up, down), no gate */
	static const char *const plain_mlp[] = {
		"gpt_neox",   "gptj", "gpt_neo",   "codegen",  "bloom",
		"mpt",	      "opt",  "starcoder2", "phi",	"persimmon",
		"nemotron",   "arcee", "apertus",   "xglm", NULL};
	m->gated_mlp = m->family != KV_FAMILY_GPT2 &&
		       m->family != KV_FAMILY_FALCON &&
		       !nemotron && /* relu^2 */
		       !is(m->model_type, plain_mlp);
	m->layernorm = m->family == KV_FAMILY_GPT2 ||
		       m->family == KV_FAMILY_FALCON;
	if (m->family == KV_FAMILY_GPT2)
		m->learned_pos = m->max_pos;
	m->attn_gate = !strcmp(m->model_type, "qwen3_next");
	if ((e = get_bool(c, "attn_output_gate", m->attn_gate, &m->attn_gate)))
		return e;
	m->qk_norm = !strncmp(m->model_type, "qwen3", 5) || /* VL, Omni */
		     !strcmp(m->model_type, "gemma3_text") ||
		     !strcmp(m->model_type, "gemma3") ||
		     !strncmp(m->model_type, "lfm2", 4) ||
		     m->ssm_version == 3; /* Qwen3-Next's, Qwen3.5's */
	if ((e = read_ln_family(c, m)))
		return e;
	static const char *const eps_names[] = {
		"rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps",
		"norm_epsilon", NULL};
	const char *eps = first_of(c, eps_names);
	if ((e = get_double(c, eps ? eps : eps_names[0],
			    m->layernorm ? 1e-5 : 1e-6, &m->norm_eps)) ||
	    (e = get_double(c, "rope_theta",
			    m->family == KV_FAMILY_GPT2 ? 0 : 10000,
			    &m->rope_theta)))
		return e;
	return 0;
}

/* Multi-head latent attention's fields, where the config has it (*is_mla):
 * the latent's rank and the rotary part, the low-rank query, DeepSeek
 * V3.2's indexer (its key's size, heads and top-k) and the MTP layers. */
static int read_mla(struct cfg *c, struct kv_model *m, bool *is_mla,
		    uint32_t *index_dim, uint32_t *index_heads,
		    uint64_t *index_topk)
{
	/* MLA: DeepSeek V2 and later (their classes default the rank); any
	 * config that names a latent rank; not DeepSeek-MoE ("deepseek"),
	 * nor one that says use_mla false or kv_lora_rank null (DeepSeek-OCR's
	 * plain heads; vLLM's is_deepseek_mla) */
	bool use_mla;
	char kw[128];
	const cJSON *klr = find(c, "kv_lora_rank", kw, sizeof kw);
	int e = get_bool(c, "use_mla", true, &use_mla);
	*index_dim = *index_heads = 0;
	*index_topk = 0;
	bool mla = !e && use_mla && !(klr && cJSON_IsNull(klr)) &&
		   ((m->family == KV_FAMILY_DEEPSEEK &&
		     strcmp(m->model_type, "deepseek") != 0) ||
		    present(c, "kv_lora_rank"));
	*is_mla = mla;
	if (e)
		return e;
	/* Step3's queries go through a normed low rank, share_q_dim */
	if (!mla &&
	    (e = get_u32(c, "share_q_dim", false, 0, 0, MAX_HEAD_DIM,
			 &m->q_lora_rank)))
		return e;
	/* MiniCPM3: its class's v_head_dim is hidden / heads, and its
	 * reference (Transformers' MiniCPM3Attention) caches every head's K
	 * and V as the latent makes them, not the latent */
	bool minicpm3 = !strcmp(m->model_type, "minicpm3");
	if (mla) {
		uint64_t q;
		if ((e = get_u32(c, "kv_lora_rank", false, 512, 1, MAX_HEAD_DIM,
				 &m->kv_lora_rank)) ||
		    (e = get_u32(c, "qk_rope_head_dim", false, 64, 1,
				 MAX_HEAD_DIM, &m->qk_rope_dim)) ||
		    (e = get_u32(c, "qk_nope_head_dim", false, 128, 0,
				 MAX_HEAD_DIM, &m->qk_nope_dim)) ||
		    (e = get_u32(c, "v_head_dim", false,
				 minicpm3 ? (uint32_t)(m->hidden / m->n_heads)
					  : 128,
				 1, MAX_HEAD_DIM, &m->v_head_dim)))
			return e;
		m->mla_expanded = minicpm3;
		const cJSON *ql;
		char where[128];
		ql = find(c, "q_lora_rank", where, sizeof where);
		if (ql && cJSON_IsNull(ql))
			q = 0;
		else if ((e = get_uint(c, "q_lora_rank", false, 1536, 1,
				       MAX_HEAD_DIM, &q)))
			return e;
		m->q_lora_rank = (uint32_t)q;
		/* DeepSeek V3.2's sparse attention: an indexer key per token
		 * beside the latent (its reference keeps both) */
		if ((!strcmp(m->model_type, "deepseek_v32") ||
		     present(c, "index_topk")) &&
		    ((e = get_u32(c, "index_head_dim", false, 128, 1,
				  MAX_HEAD_DIM, index_dim)) ||
		     (e = get_u32(c, "index_n_heads", false, 64, 1, MAX_HEADS,
				  index_heads)) ||
		     (e = get_uint(c, "index_topk", false, 2048, 1, MAX_POS,
				   index_topk))))
			return e;
		m->head_dim = m->qk_nope_dim + m->qk_rope_dim;
		m->head_dim_v = m->v_head_dim;
		if ((e = get_u32(c, "num_nextn_predict_layers", false, 0, 0,
				 MAX_LAYERS, &m->n_mtp_layers)))
			return e;
	}
	return 0;
}

static int build(struct cfg *c, struct kv_model *m)
{
	int e;
	const char *type;
	struct family fam;
	if ((e = identify(c, m, &type, &fam)))
		return e;
	if ((e = read_dtype(c, m)))
		return e;

	if (m->family == KV_FAMILY_OPENELM)
		return read_openelm(c, m);
	static const char *const ssm[] = {"mamba", "mamba2", "falcon_mamba",
					  NULL};
	if (is(m->model_type, ssm) || (!type && present(c, "ssm_cfg")))
		return build_ssm(c, m);

	struct defaults d = fam.d;
	if ((e = read_shape(c, m, &d)))
		return e;
	uint32_t n = m->n_layers;
	m->layers = calloc(n, sizeof *m->layers);
	enum kv_attn *kinds = calloc(n, sizeof *kinds);
	uint32_t *kvh = calloc(n, sizeof *kvh); /* per layer, 0: n_kv_heads */
	uint64_t *win = calloc(n, sizeof *win); /* per layer, 0: window */
	if (!m->layers || !kinds || !kvh || !win) {
		free(kinds);
		free(kvh);
		free(win);
		return KV_ENOMEM;
	}
	bool blocks = present(c, "block_configs");

	uint64_t window = 0, chunk = 0;
	if (!strcmp(m->model_type, "recurrent_gemma"))
		e = get_uint(c, "attention_window_size", false, 2048, 1,
			     MAX_POS, &window);
	else if (!strcmp(m->model_type, "gpt_neo"))
		e = get_uint(c, "window_size", false, 256, 1, MAX_POS,
			     &window);
	else
		e = read_window(c, &d, &window);
	if (!e && m->family == KV_FAMILY_LLAMA4)
		e = get_uint(c, "attention_chunk_size", false, 8192, 1, MAX_POS,
			     &chunk);
	if (!e)
		e = read_kinds(c, m, &d, window, chunk, kinds);
	if (!e && blocks)
		e = read_blocks(c, m, false, kinds, kvh, win);
	if (!e)
		e = kv_less_layers(c, m, kinds);

	bool mla = false;
	uint32_t index_dim = 0, index_heads = 0;
	uint64_t index_topk = 0;
	if (!e)
		e = read_mla(c, m, &mla, &index_dim, &index_heads,
			     &index_topk);

	for (uint32_t i = 0; !e && i < n; i++) {
		struct kv_layer *l = &m->layers[i];
		l->attn = kinds[i];
		if (mla && l->attn != KV_ATTN_NONE) {
			l->attn = KV_ATTN_MLA;
			l->kv_heads = 1;
			l->head_dim_k = m->kv_lora_rank + m->qk_rope_dim;
			l->head_dim_v = 0;
			l->index_dim = index_dim;
			l->index_heads = index_heads;
			l->index_topk = index_topk;
		} else if (l->attn != KV_ATTN_NONE) {
			l->kv_heads = kvh[i] ? kvh[i] : m->n_kv_heads;
			l->head_dim_k = m->head_dim;
			l->head_dim_v = m->head_dim_v;
		}
		l->q_heads = l->attn == KV_ATTN_NONE ? 0 : m->n_heads;
		if (l->attn == KV_ATTN_SLIDING && win[i]) {
			l->window = win[i];
		} else if (l->attn == KV_ATTN_SLIDING) {
			if (!window) {
				e = fail(c,
					 "sliding_window: layer %u slides but "
					 "no window is given",
					 i);
				break;
			}
			l->window = window;
		} else if (l->attn == KV_ATTN_CHUNKED) {
			if (!chunk && (e = get_uint(c, "attention_chunk_size",
						    true, 0, 1, MAX_POS,
						    &chunk)))
				break;
			l->window = chunk;
		}
	}
	if (!e && !strcmp(m->model_type, "mimo_v2_flash"))
		e = mimo_heads(c, m);
	if (!e)
		e = read_mlp(c, m, &d);
	if (!e && blocks)
		e = read_blocks(c, m, true, kinds, kvh, win);
	for (uint32_t i = 0; !e && blocks && i < n; i++)
		if (kvh[i]) { /* the first attention layer's, as for lists */
			m->n_kv_heads = kvh[i];
			break;
		}
	/* NemotronH's layers are one thing each: 'M' a Mamba mixer, '*'
	 * attention, '-' an MLP, 'E' a mixture of experts */
	const char *pattern = NULL;
	bool nemotron = !strcmp(m->model_type, "nemotron_h");
	if (!e && nemotron)
		e = get_str(c, "hybrid_override_pattern", &pattern);
	for (uint32_t i = 0; !e && pattern && i < n; i++) {
		struct kv_layer *l = &m->layers[i];
		if (pattern[i] == '-') {
			l->mlp = KV_MLP_DENSE;
			l->ffn_dim = m->intermediate;
		} else if (pattern[i] != 'E') {
			l->mlp = KV_MLP_NONE;
			l->ffn_dim = 0;
		}
	}
	const struct mamba_fields *mf = mamba_fields(m->model_type);
	if (!e && mf)
		e = read_mamba(c, m, mf);
	/* the Mamba layers: Jamba's, Bamba's and Granite's that do not
	 * attend, NemotronH's 'M', every Falcon-H1, Zamba and Zamba2 layer
	 * beside its attention */
	bool zamba = !strncmp(m->model_type, "zamba", 5);
	bool beside = !strcmp(m->model_type, "falcon_h1") || zamba;
	/* Zamba2's attention layers share num_mem_blocks blocks' weights
	 * (attention and MLP) in turn, each with an MLP adapter of its own;
	 * Zamba's share one block and have no adapters. Their layers hold no
	 * MLP of their own */
	uint64_t mem = 1, rank = 0;
	bool two = !strcmp(m->model_type, "zamba2");
	if (!e && two &&
	    !(e = get_uint(c, "num_mem_blocks", false, 1, 1, MAX_LAYERS,
			   &mem)))
		e = get_uint(c, "adapter_rank", false, 128, 0, MAX_HIDDEN,
			     &rank);
	if (!e && zamba) {
		m->n_mem_blocks = (uint32_t)mem;
		m->adapter_rank = (uint32_t)rank;
		for (uint32_t i = 0; i < n; i++)
			m->layers[i].mlp = KV_MLP_NONE;
	}
	for (uint32_t i = 0; !e && mf && i < n; i++) {
		struct kv_layer *l = &m->layers[i];
		l->ssm = nemotron ? pattern && pattern[i] == 'M'
				  : beside || l->attn == KV_ATTN_NONE;
	}
	if (!e && !mf)
		e = read_linear(c, m);
	if (e)
		goto out;

	e = read_block(c, m, &d, nemotron);
out:
	free(kinds);
	free(kvh);
	free(win);
	return e;
}

int kv_model_parse(const char *json, size_t len, const char *path,
		   struct kv_model **out, char *err)
{
	*out = NULL;
	err[0] = '\0';
	cJSON *root = NULL;
	int e = kv_json_read(json, len, path, &root, err);
	if (e)
		return e;
	struct cfg c = {root, root, NULL, path, err, NULL};
	struct kv_model *m = NULL;
	if (!cJSON_IsObject(root)) {
		char got[96];
		show(root, got, sizeof got);
		e = fail(&c, "not a JSON object, got %s", got);
		goto done;
	}
	static const char *const wrappers[] = {"text_config", "llm_config",
					       "language_config", NULL};
	/* Qwen2.5-Omni and Qwen3-Omni: the thinker's text model answers */
	struct cfg thinker;
	const cJSON *th = NULL;
	bool has;
	if ((e = nested(&c, "thinker_config", &thinker, &has)) ||
	    (has && (e = get_kind(&thinker, "text_config", K_OBJ, &th))))
		goto done;
	if (th) {
		c.text = th;
		c.text_name = "thinker_config.text_config";
	}
	for (const char *const *w = wrappers; *w && !th; w++) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, *w);
		if (t && cJSON_IsObject(t)) {
			c.text = t;
			c.text_name = *w;
			break;
		}
		if (t && !cJSON_IsNull(t)) {
			char got[96];
			show(t, got, sizeof got);
			e = fail(&c, "%s: must be an object (the text model's "
				     "config), got %s",
				 *w, got);
			goto done;
		}
	}
	m = calloc(1, sizeof *m);
	if (!m) {
		e = KV_ENOMEM;
		goto done;
	}
	snprintf(m->path, sizeof m->path, "%s", path);
	const char *base = strrchr(path, '/');
	snprintf(m->name, sizeof m->name, "%s", base ? base + 1 : path);
	size_t nl = strlen(m->name);
	if (nl > 5 && !strcmp(m->name + nl - 5, ".json"))
		m->name[nl - 5] = '\0';
	e = build(&c, m);
	if (!e)
		e = read_quant(&c, m);
done:
	cJSON_Delete(root);
	if (e) {
		if (e == KV_ENOMEM && !err[0])
			snprintf(err, KV_ERRLEN, "%s: out of memory", path);
		kv_model_free(m);
		return e;
	}
	*out = m;
	return 0;
}

int kv_model_load(const char *path, struct kv_model **out, char *err)
{
	*out = NULL;
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	const char *shown = f == stdin ? "stdin" : path;
	if (!f) {
		snprintf(err, KV_ERRLEN, "%s: %s", path, strerror(errno));
		return KV_EIO;
	}
	struct stat st;
	if (f != stdin && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		snprintf(err, KV_ERRLEN, "%s: %s", path, strerror(EISDIR));
		return KV_EIO;
	}
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	int e = 0;
	while (buf) {
		if (len == cap) {
			if (cap >= MAX_CONFIG_BYTES) {
				snprintf(err, KV_ERRLEN,
					 "%s: larger than %u MiB; not a config",
					 shown, MAX_CONFIG_BYTES >> 20);
				e = KV_EINVAL;
				break;
			}
			char *p = realloc(buf, cap * 2);
			if (!p) {
				e = KV_ENOMEM;
				snprintf(err, KV_ERRLEN, "%s: out of memory",
					 shown);
				break;
			}
			buf = p;
			cap *= 2;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	if (!buf) {
		e = KV_ENOMEM;
		snprintf(err, KV_ERRLEN, "%s: out of memory", path);
	} else if (!e && ferror(f)) {
		e = KV_EIO;
		snprintf(err, KV_ERRLEN, "%s: %s", shown, strerror(errno));
	}
	if (f != stdin)
		fclose(f);
	if (!e && len == 0) {
		e = KV_EINVAL;
		snprintf(err, KV_ERRLEN, "%s: empty, not JSON", shown);
	}
	if (!e)
		e = kv_model_parse(buf, len, shown, out, err);
	if (!e && f == stdin) {
		/* kept, on one line, for a pipe to carry on: tabs, newlines
		 * and returns are blanks here (a string holds none raw) */
		for (size_t i = 0; i < len; i++)
			if (buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t')
				buf[i] = ' ';
		(*out)->json = buf;
		buf = NULL;
		char *p = realloc((*out)->json, len + 1);
		if (p) {
			p[len] = '\0';
			(*out)->json = p;
		} else {
			free((*out)->json);
			(*out)->json = NULL;
		}
	}
	free(buf);
	return e;
}

int kv_model_gpt2_small(struct kv_model **out)
{
	static const char json[] =
		"{\"model_type\":\"gpt2\",\"n_layer\":12,\"n_embd\":768,"
		"\"n_head\":12,\"n_inner\":3072,\"vocab_size\":50257,"
		"\"n_positions\":1024}";
	char err[KV_ERRLEN];
	int e = kv_model_parse(json, sizeof json - 1, "gpt2-small", out, err);
	return e;
}

void kv_model_free(struct kv_model *m)
{
	if (!m)
		return;
	kv_quant_free(&m->quant);
	free(m->json);
	free(m->layers);
	free(m);
}

#ifndef KV_DATADIR
#define KV_DATADIR "/usr/local/share/kvtools/configs"
#endif
#ifndef KV_SOURCE_TEST_CONFIGS
#define KV_SOURCE_TEST_CONFIGS "tests/configs"
#endif
#ifndef KV_SOURCE_CONFIGS
#define KV_SOURCE_CONFIGS "configs"
#endif

/* The installed data directory beside the running binary
 * (<prefix>/bin/../share/kvtools/configs), so an installed tree can move. */
static const char *exe_datadir(void)
{
	static char dir[4096];
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	slash = strrchr(exe, '/');
	if (!slash || strcmp(slash, "/bin") != 0)
		return NULL;
	*slash = '\0';
	snprintf(dir, sizeof dir, "%.4000s/share/kvtools/configs", exe);
	return dir;
}

/* The directories after KV_CONFIG_PATH's: beside an installed binary,
 * then the install's own, each with its more/ (published configs the
 * tests read, installed with the shipped ones), then the source tree's
 * configs/ and tests/configs/. */
const char *kv_config_dir(size_t i)
{
	static char dir[4096];
	const char *env = getenv("KV_CONFIG_PATH");
	size_t k = 0;
	if (env && *env) {
		const char *p = env;
		for (;;) {
			const char *colon = strchr(p, ':');
			size_t len = colon ? (size_t)(colon - p) : strlen(p);
			if (len > 0 && len < sizeof dir) {
				if (k == i) {
					memcpy(dir, p, len);
					dir[len] = '\0';
					return dir;
				}
				k++;
			}
			if (!colon)
				break;
			p = colon + 1;
		}
	}
	const char *base[3] = {NULL, KV_DATADIR, NULL};
	const char *rel = exe_datadir();
	if (rel && strcmp(rel, KV_DATADIR) != 0)
		base[0] = rel;
	for (int b = 0; b < 2; b++) {
		if (!base[b])
			continue;
		if (i == k)
			return base[b];
		if (i == k + 1) {
			snprintf(dir, sizeof dir, "%.4000s/more", base[b]);
			return dir;
		}
		k += 2;
	}
	if (i == k)
		return KV_SOURCE_CONFIGS;
	if (i == k + 1)
		return KV_SOURCE_TEST_CONFIGS;
	return NULL;
}

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * A model a Hugging Face hub cache holds, "org/name", as its newest
 * snapshot's config.json: the cache's models--org--name/snapshots/REV,
 * REV the commit refs/main names, or else the snapshot changed last. The
 * caches, in the order huggingface_hub reads them: $HF_HUB_CACHE,
 * $HF_HOME/hub, ~/.cache/huggingface/hub. Returns true with out filled.
 */
static bool hub_snapshot(const char *arg, char *out, size_t n)
{
	const char *slash = strchr(arg, '/');
	if (!slash || strchr(slash + 1, '/') || slash == arg || !slash[1] ||
	    arg[0] == '.')
		return false;
	char roots[3][4096];
	const char *e;
	size_t nr = 0;
	if ((e = getenv("HF_HUB_CACHE")) && *e)
		snprintf(roots[nr++], sizeof roots[0], "%s", e);
	if ((e = getenv("HF_HOME")) && *e)
		snprintf(roots[nr++], sizeof roots[0], "%s/hub", e);
	if ((e = getenv("HOME")) && *e)
		snprintf(roots[nr++], sizeof roots[0],
			 "%s/.cache/huggingface/hub", e);
	for (size_t r = 0; r < nr; r++) {
		char repo[4400], p[8800], rev[128] = "";
		snprintf(repo, sizeof repo, "%s/models--%.*s--%s", roots[r],
			 (int)(slash - arg), arg, slash + 1);
		if (!is_dir(repo))
			continue;
		snprintf(p, sizeof p, "%s/refs/main", repo);
		FILE *f = fopen(p, "r");
		if (f) {
			if (!fgets(rev, sizeof rev, f))
				rev[0] = '\0';
			rev[strcspn(rev, " \r\n")] = '\0';
			fclose(f);
		}
		snprintf(p, sizeof p, "%s/snapshots/%s/config.json", repo, rev);
		if (rev[0] && !strchr(rev, '/') && is_file(p)) {
			snprintf(out, n, "%s", p);
			return true;
		}
		/* no ref: the snapshot changed last */
		snprintf(p, sizeof p, "%s/snapshots", repo);
		DIR *d = opendir(p);
		struct dirent *de;
		time_t best = 0;
		bool found = false;
		while (d && (de = readdir(d))) {
			char c[9400];
			struct stat st;
			if (de->d_name[0] == '.')
				continue;
			snprintf(c, sizeof c, "%s/%s/config.json", p, de->d_name);
			if (stat(c, &st) == 0 && S_ISREG(st.st_mode) &&
			    (!found || st.st_mtime > best)) {
				best = st.st_mtime;
				snprintf(out, n, "%s", c);
				found = true;
			}
		}
		if (d)
			closedir(d);
		if (found)
			return true;
	}
	return false;
}

int kv_config_find(const char *arg, char *out, size_t n)
{
	if (!strcmp(arg, "-") || is_file(arg)) {
		snprintf(out, n, "%s", arg);
		return 0;
	}
	if (is_dir(arg)) { /* a snapshot: its config.json */
		size_t l = strlen(arg);
		snprintf(out, n, "%s%sconfig.json", arg,
			 l && arg[l - 1] == '/' ? "" : "/");
		return is_file(out) ? 0 : KV_EIO;
	}
	if (strchr(arg, '/')) {
		if (hub_snapshot(arg, out, n))
			return 0;
		snprintf(out, n, "%s", arg);
		/* a path is left for the loader to say what is wrong; a
		 * hub name (org/name, one slash) that no cache holds is an
		 * error here */
		const char *sl = strchr(arg, '/');
		size_t l = strlen(arg);
		bool path = arg[0] == '.' || arg[0] == '/' || strchr(sl + 1, '/') ||
			    (l > 5 && !strcmp(arg + l - 5, ".json"));
		return path ? 0 : KV_EIO;
	}
	const char *dir;
	for (size_t i = 0; (dir = kv_config_dir(i)); i++) {
		char p[8192];
		snprintf(p, sizeof p, "%s/%s", dir, arg);
		if (is_file(p)) {
			snprintf(out, n, "%s", p);
			return 0;
		}
		snprintf(p, sizeof p, "%s/%s.json", dir, arg);
		if (is_file(p)) {
			snprintf(out, n, "%s", p);
			return 0;
		}
	}
	snprintf(out, n, "%s", arg);
	return KV_EIO;
}
