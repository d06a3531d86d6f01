/*
 * model_quant.c - how a checkpoint stores its weights: the dtype a config
 * names, and its quantization (which matrices are stored how, and which
 * modules are left as they are): a quantization_config, MLX's
 * quantization block, or ModelOpt's hf_quant_config.json beside it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/json.h"
#include "kv/quant.h"
#include "model_int.h"

#define MAX_QUANT_FILE_BYTES (16u << 20) /* hf_quant_config.json: a few KiB */

/* The dtype: torch_dtype (or the newer "dtype"), f32 when absent. A
 * wrapper's own comes first, its text_config's only when it has none:
 * Transformers loads the whole model in the root's dtype, and vLLM falls
 * back to the text config's only without one. A family may name it
 * another way (f->ops->dtype). */
int read_dtype(struct cfg *wc, struct kv_model *m, const struct family *f)
{
	const char *s;
	struct cfg top = *wc, *c = wc;
	top.text = top.root;
	if (cfg_has(&top, "torch_dtype") || cfg_has(&top, "dtype"))
		c = &top;
	const char *field = cfg_has(c, "torch_dtype") ? "torch_dtype" : "dtype";
	int e = cfg_str(c, field, &s);
	if (e)
		return e;
	/* Transformers loads a config without a dtype in float32; gpt-oss's
	 * reference implementation runs in bfloat16 and its config has none */
	m->dtype =
	    m->family == KV_FAMILY_GPT_OSS ? KV_DTYPE_BF16 : KV_DTYPE_F32;
	m->dtype_given = s != NULL;
	if (!s && f->ops->dtype && (e = f->ops->dtype(c, m)))
		return e;
	if (s && kv_dtype_from_torch(s, &m->dtype)) {
		char where[128];
		cfg_find(c, field, where, sizeof where);
		return cfg_fail(c, "%s: unknown dtype, expected float32, "
				"float16 or bfloat16, got \"%.60s\"", where, s);
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
		int e = cfg_kind(q, *l, K_LIST, &it);
		if (e)
			return e;
		uint32_t i = 0;
		cJSON_ArrayForEach(el, it)
		{
			char where[160], got[96];
			if (!cJSON_IsString(el)) {
				cfg_find(q, *l, where, sizeof where);
				cfg_show(el, got, sizeof got);
				return cfg_fail(q, "%s[%u]: must be a module "
						"name, got %s", where, i, got);
			}
			if ((e = kv_quant_ignore_add(k, el->valuestring)) ==
			    KV_EINVAL) {
				cfg_find(q, *l, where, sizeof where);
				return cfg_fail(q,
						"%s[%u]: '%s': not a regular "
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

/* A group size g, the field `where`, that must divide the hidden size
 * (every matrix's rows are made of it). */
static int divides_hidden(struct cfg *q, const struct kv_model *m,
			  const char *where, uint64_t g)
{
	if (g && m->hidden % g == 0)
		return 0;
	return cfg_fail(q, "%s: must divide the hidden size (%llu), got %llu",
			where, (unsigned long long)m->hidden,
			(unsigned long long)g);
}

/* A group size: -1 (or absent: def) for one scale per row, else a size
 * that divides the hidden size. */
static int quant_group(struct cfg *q, const struct kv_model *m,
		       const char *field, uint64_t def, uint64_t *out)
{
	char where[128];
	const cJSON *it = cfg_find(q, field, where, sizeof where);
	*out = def;
	if (!it || cJSON_IsNull(it) ||
	    (cJSON_IsNumber(it) && it->valuedouble == -1)) {
		if (it && !cJSON_IsNull(it))
			*out = 0;
		return 0;
	}
	int e = cfg_check_uint(q, it, where, 1, MAX_HIDDEN, out);
	return e ? e : divides_hidden(q, m, where, *out);
}

/* fp8's weight_block_size, [n, k]: into k->block_n and block_k. */
static int quant_block(struct cfg *q, const char *field, struct kv_quant *k)
{
	const cJSON *it;
	int e = cfg_kind(q, field, K_LIST, &it);
	if (e || !it)
		return e;
	char where[160];
	cfg_find(q, field, where, sizeof where);
	if (cJSON_GetArraySize(it) != 2)
		return cfg_fail(q, "%s: must be [rows, columns] of a scale's "
				"block, got a list of %d", where,
				cJSON_GetArraySize(it));
	uint64_t v[2];
	for (int i = 0; i < 2; i++)
		if ((e = cfg_check_uint(q, cJSON_GetArrayItem(it, i), where, 1,
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
	if ((e = cfg_str(q, "format", &format)) ||
	    (e = cfg_nested(q, "config_groups", &groups, &has)))
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
		return cfg_fail(q,
				"quantization_config.config_groups: no group "
				"quantizes weights");
	struct cfg gc = groups;
	char prefix[160];
	snprintf(prefix, sizeof prefix, "quantization_config.config_groups.%s",
		 g->string);
	gc.root = gc.text = g;
	gc.prefix = prefix;
	if ((e = cfg_nested(&gc, "weights", &w, &has)))
		return e;
	snprintf(prefix + strlen(prefix), sizeof prefix - strlen(prefix),
		 ".weights");
	w.prefix = prefix;
	uint64_t bits;
	bool sym;
	const cJSON *order;
	if ((e = cfg_uint(&w, "num_bits", true, 0, 1, 16, &bits)) ||
	    (e = cfg_str(&w, "type", &type)) ||
	    (e = cfg_str(&w, "strategy", &strategy)) ||
	    (e = cfg_bool(&w, "symmetric", true, &sym)) ||
	    (e = cfg_kind(&w, "actorder", K_STR | K_BOOL, &order)) ||
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
	if ((e = cfg_nested(&gc, "input_activations", &in, &has)) ||
	    (has && (e = cfg_bool(&in, "dynamic", false, &dyn))))
		return e;
	k->input_scale = !dyn;
	if (strategy && !strcmp(strategy, "tensor"))
		k->group = UINT64_MAX;
	else if (strategy && !strcmp(strategy, "group"))
		return quant_group(&w, m, "group_size", 128, &k->group);
	return 0;
}

/* Whether a ModelOpt quantization_config declares an fp8 KV cache, as
 * vLLM reads it (get_kv_cache_quant_algo_string in vllm/utils/
 * torch_utils.py): the first of kv_cache_scheme and kv_cache_quant_algo
 * found, in its "quantization" object and then at its top, "FP8" in any
 * case, or a scheme {"dynamic": false, "num_bits": 8, "type": "float"};
 * anything else leaves the cache to the model's dtype. */
static bool declares_fp8_cache(const cJSON *q)
{
	static const char *const keys[] = {"kv_cache_scheme",
					   "kv_cache_quant_algo"};
	const cJSON *in = cJSON_GetObjectItemCaseSensitive(q, "quantization");
	const cJSON *v = NULL;
	if (!cJSON_IsObject(in))
		in = q;
	for (int k = 0; k < 2 && (!v || cJSON_IsNull(v)); k++) {
		v = cJSON_GetObjectItemCaseSensitive(in, keys[k]);
		if (!v || cJSON_IsNull(v))
			v = cJSON_GetObjectItemCaseSensitive(q, keys[k]);
	}
	if (cJSON_IsString(v))
		return !strcasecmp(v->valuestring, "fp8");
	if (!cJSON_IsObject(v))
		return false;
	const cJSON *dyn = cJSON_GetObjectItemCaseSensitive(v, "dynamic");
	const cJSON *bits = cJSON_GetObjectItemCaseSensitive(v, "num_bits");
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(v, "type");
	return cJSON_IsFalse(dyn) && cJSON_IsNumber(bits) &&
	       bits->valuedouble == 8 && cJSON_IsString(type) &&
	       !strcmp(type->valuestring, "float");
}

/*
 * ModelOpt's quantization (q: the quantization_config, or the whole of
 * hf_quant_config.json): its quant_algo, in its "quantization" object or
 * at its top, FP8 (per tensor, with input scales) or NVFP4 (another is
 * left KV_QUANT_UNKNOWN); the modules that object excludes; the fp8 cache
 * it declares (declares_fp8_cache).
 */
static int quant_modelopt(struct cfg *q, struct kv_quant *k)
{
	struct cfg in;
	bool has;
	const char *s = NULL;
	char prefix[64];
	int e = cfg_nested(q, "quantization", &in, &has);
	if (e)
		return e;
	if (has) {
		snprintf(prefix, sizeof prefix, "%s%squantization",
			 q->prefix ? q->prefix : "", q->prefix ? "." : "");
		in.prefix = prefix;
		if ((e = quant_ignore(&in, k)) ||
		    (e = cfg_str(&in, "quant_algo", &s)))
			return e;
	}
	if (!s && (e = cfg_str(q, "quant_algo", &s)))
		return e;
	if (s && !strcmp(s, "FP8")) {
		k->fmt = KV_QUANT_FP8;
		k->input_scale = true;
	} else if (s && !strcmp(s, "NVFP4")) {
		k->fmt = KV_QUANT_NVFP4;
	}
	k->kv_fp8 = declares_fp8_cache(q->root);
	return 0;
}

/* MLX's modes (mlx/nn/layers/quantized.py _defaults_for_mode; mlx/ops.cpp
 * affine_quantize and fp_quantize, commit 846d1762): the group and bits a
 * module that names none takes, whether they are the only ones the mode
 * takes (its floats), and a scale's bytes (0: the model's dtype, with a
 * bias as large beside it). */
static const struct mlx_mode {
	const char *name;
	uint32_t group, bits;
	bool fixed;
	uint32_t scale;
} mlx_modes[] = {{"affine", 64, 4, false, 0},
		 {"mxfp4", 32, 4, true, 1},
		 {"nvfp4", 16, 4, true, 1},
		 {"mxfp8", 32, 8, true, 1}};

/* The mode a format names (affine when it names none) into *out. */
static int mlx_mode(struct cfg *q, const struct mlx_mode **out)
{
	const char *s = NULL;
	char where[320];
	int e = cfg_str(q, "mode", &s);
	*out = &mlx_modes[0];
	if (e || !s)
		return e;
	for (size_t i = 0; i < sizeof mlx_modes / sizeof *mlx_modes; i++)
		if (!strcmp(s, mlx_modes[i].name)) {
			*out = &mlx_modes[i];
			return 0;
		}
	cfg_find(q, "mode", where, sizeof where);
	return cfg_fail(q,
			"%s: unknown mode, expected affine, mxfp4, nvfp4 or "
			"mxfp8, got \"%.60s\"",
			where, s);
}

/* Whether v is one of mode md's: its own where it fixes one, else one of
 * the list affine takes (0-terminated). */
/* Whether mode md takes v for `field`: a fixed mode only its own value,
 * affine one of list (named `names` in the message); else refused. */
static int mlx_takes(struct cfg *q, const struct mlx_mode *md,
		     const char *field, uint64_t own, uint64_t v,
		     const uint64_t *list, const char *names)
{
	char where[320];
	bool ok = md->fixed && v == own;
	for (; !md->fixed && !ok && *list; list++)
		ok = v == *list;
	if (ok)
		return 0;
	cfg_find(q, field, where, sizeof where);
	return md->fixed ? cfg_fail(q, "%s: must be %u for mode %s, got %llu",
				    where, (unsigned)own, md->name,
				    (unsigned long long)v)
			 : cfg_fail(q, "%s: must be %s for mode affine, got "
				    "%llu", where, names,
				    (unsigned long long)v);
}

/*
 * One MLX format into r: the block's own ({"group_size": 64, "bits": 4},
 * both required, as mlx-lm's load_model reads them) or a module's, whose
 * fields left out take its mode's defaults and whose mode is affine
 * unless it names one (to_quantized() of mlx's Linear). Affine takes 2 to
 * 8 bits but 7 in groups of 32, 64 or 128; a float mode its own alone.
 */
static int mlx_format(struct cfg *q, bool top, struct kv_quant_rule *r)
{
	static const uint64_t bits_ok[] = {2, 3, 4, 5, 6, 8, 0};
	static const uint64_t groups_ok[] = {32, 64, 128, 0};
	const struct mlx_mode *md;
	uint64_t bits, group;
	int e;
	if ((e = mlx_mode(q, &md)) ||
	    (e = cfg_uint(q, "bits", top, md->bits, 0, 64, &bits)) ||
	    (e = cfg_uint(q, "group_size", top, md->group, 0, MAX_HIDDEN,
			  &group)))
		return e;
	if ((e = mlx_takes(q, md, "bits", md->bits, bits, bits_ok,
			   "2, 3, 4, 5, 6 or 8")) ||
	    (e = mlx_takes(q, md, "group_size", md->group, group, groups_ok,
			   "32, 64 or 128")))
		return e;
	*r = (struct kv_quant_rule){.bits = (uint32_t)bits,
				    .group = group,
				    .scale_bytes = md->scale,
				    .bias = !md->fixed};
	return 0;
}

/* The entries of MLX's block that name modules (all but its own bits,
 * group_size and mode): false leaves the module in the dtype, true gives
 * it the block's format (nn.quantize's class_predicate), an object its
 * own; anything else is refused. */
static int mlx_rules(struct cfg *q, const struct kv_quant_rule *top,
		     struct kv_quant *k)
{
	static const char *const own[] = {"bits", "group_size", "mode", NULL};
	const cJSON *it;
	cJSON_ArrayForEach(it, q->root)
	{
		struct kv_quant_rule r = *top;
		char prefix[320], got[96];
		int e = 0;
		if (cfg_one_of(it->string, own))
			continue;
		snprintf(prefix, sizeof prefix, "quantization.%.280s",
			 it->string);
		if (cJSON_IsObject(it)) {
			struct cfg sub = *q;
			sub.root = sub.text = it;
			sub.prefix = prefix;
			e = mlx_format(&sub, false, &r);
		} else if (cJSON_IsFalse(it)) {
			r.off = true;
		} else if (!cJSON_IsTrue(it)) {
			cfg_show(it, got, sizeof got);
			return cfg_fail(q,
					"%s: must be false or an object of the "
					"module's bits, group_size and mode, "
					"got %s",
					prefix, got);
		}
		if (e || (e = kv_quant_rule_add(k, it->string, &r)))
			return e;
	}
	return 0;
}

/*
 * An MLX checkpoint's "quantization" block, which mlx-lm's load_model
 * reads before any quantization_config (the copy it writes there has no
 * quant_method): every nn.Linear, Embedding and experts' SwitchLinear
 * whose inputs its group divides in its format, routers, the embedding
 * and the output head too, the modules its entries name each in their
 * own (mlx_lm/utils.py load_model and quantize_model, commit d78bf58e).
 */
static int read_mlx(struct cfg *q, struct kv_model *m)
{
	struct kv_quant *k = &m->quant;
	struct kv_quant_rule top;
	char where[128];
	int e = mlx_format(q, true, &top);
	if (e)
		return e;
	cfg_find(q, "group_size", where, sizeof where);
	if ((e = divides_hidden(q, m, where, top.group)))
		return e;
	k->fmt = KV_QUANT_MLX;
	k->from = "quantization";
	snprintf(k->method, sizeof k->method, "mlx");
	k->bits = top.bits;
	k->group = top.group;
	k->scale_bytes = top.scale_bytes;
	k->zeros = top.bias;
	k->tables = true;
	return mlx_rules(q, &top, k);
}

/*
 * The checkpoint's quantization: MLX's block where the config has one,
 * else its quantization_config (at the top level or in the text model's):
 * which matrices are stored how, and which modules are left as they are.
 * A quant_method not modelled is kept as KV_QUANT_UNKNOWN (the tools say
 * so and count the parameters in the config's dtype); a malformed one
 * (bits 0, a group size that does not divide, a string where a number
 * belongs) is refused.
 */
int read_quant(struct cfg *c, struct kv_model *m)
{
	struct cfg q;
	bool has;
	const char *method = NULL, *s = NULL;
	struct kv_quant *k = &m->quant;
	int e = cfg_nested(c, "quantization", &q, &has);
	if (e || has)
		return e ? e : read_mlx(&q, m);
	if ((e = cfg_nested(c, "quantization_config", &q, &has)) || !has)
		return e;
	q.prefix = "quantization_config";
	k->from = "quantization_config";
	if ((e = cfg_str(&q, "quant_method", &method)) ||
	    (e = quant_ignore(&q, k)))
		return e;
	snprintf(k->method, sizeof k->method, "%s", method ? method : "");
	uint64_t bits = 4;
	bool b;
	k->fmt = KV_QUANT_UNKNOWN;
	if (!method) {
		return cfg_fail(&q,
				"quantization_config.quant_method: missing; "
				"the format of the weights cannot be guessed");
	} else if (!strcmp(method, "fp8")) {
		k->fmt = KV_QUANT_FP8;
		k->bits = 8;
		if ((e = quant_block(&q, "weight_block_size", k)) ||
		    (e = cfg_str(&q, "activation_scheme", &s)))
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
		if ((e = cfg_uint(&q, cfg_has(&q, "w_bit") ? "w_bit" : "bits",
				  false, 4, 1, 8, &bits)) ||
		    (e = quant_group(&q, m,
				     cfg_has(&q, "q_group_size")
					 ? "q_group_size"
					 : "group_size",
				     128, &k->group)) ||
		    (e = cfg_bool(&q, "zero_point", true, &b)))
			return e;
		k->bits = (uint32_t)bits;
		k->zeros = true; /* both store qzeros, symmetric or not */
	} else if (!strcmp(method, "compressed-tensors")) {
		if ((e = quant_ct(&q, m, k)))
			return e;
	} else if (!strcmp(method, "bitsandbytes")) {
		bool four, eight;
		if ((e = cfg_bool(&q, "load_in_4bit", false, &four)) ||
		    (e = cfg_bool(&q, "load_in_8bit", false, &eight)) ||
		    (e = cfg_bool(&q, "bnb_4bit_use_double_quant", false,
				  &k->double_quant)))
			return e;
		if (four == eight)
			return cfg_fail(&q,
					"quantization_config: load_in_4bit or "
					"load_in_8bit, one of them, got %s",
					four ? "both" : "neither");
		k->fmt = four ? KV_QUANT_BNB4 : KV_QUANT_BNB8;
		k->bits = four ? 4 : 8;
	} else if (!strncmp(method, "modelopt", 8)) {
		return quant_modelopt(&q, k);
	}
	return 0;
}

/* ModelOpt's hf_quant_config.json (c: its view), as vLLM makes it the
 * modelopt method: its producer "modelopt", a quant_algo in its
 * "quantization" object (null: nothing quantized, no cache declared). */
static int modelopt_file(struct cfg *c, struct kv_quant *k)
{
	struct cfg p, q;
	bool has_p, has_q;
	const char *name = NULL, *algo = NULL;
	char got[96];
	int e;
	if ((e = cfg_nested(c, "producer", &p, &has_p)) ||
	    (has_p && (e = cfg_str(&p, "name", &name))) ||
	    (e = cfg_nested(c, "quantization", &q, &has_q)))
		return e;
	if (name)
		snprintf(got, sizeof got, "\"%.60s\"", name);
	else
		snprintf(got, sizeof got, "nothing");
	if (!name || strcmp(name, "modelopt"))
		return cfg_fail(c,
				"producer.name: must be \"modelopt\" (vLLM "
				"reads this file as ModelOpt's alone), got %s",
				got);
	if (!has_q)
		return cfg_fail(c, "quantization: missing; ModelOpt writes "
				"its quant_algo there");
	if ((e = cfg_str(&q, "quant_algo", &algo)) || !algo)
		return e;
	k->fmt = KV_QUANT_UNKNOWN;
	k->from = "hf_quant_config";
	snprintf(k->method, sizeof k->method, "modelopt");
	return quant_modelopt(c, k);
}

/* modelopt_file over a model's quantization, as cfg_read_beside calls. */
static int modelopt_file_of(struct cfg *c, struct kv_model *m)
{
	return modelopt_file(c, &m->quant);
}

/*
 * ModelOpt's hf_quant_config.json beside a checkpoint's config.json that
 * has no quantization (ModelOpt 0.29 and before wrote it there), read as
 * vLLM reads it: only where config.json has no quantization_config
 * (get_config in vllm/transformers_utils/config.py, commit 0036026e), as
 * the modelopt method where its producer is "modelopt"
 * (_parse_quant_hf_config in vllm/config/model.py, commit 0052a5b8).
 */
int read_quant_beside(struct kv_model *m, const char *config_path,
		      char *err)
{
	if (m->quant.fmt != KV_QUANT_NONE)
		return 0;
	return cfg_read_beside(config_path, "hf_quant_config.json",
			       MAX_QUANT_FILE_BYTES, modelopt_file_of, m, err);
}
