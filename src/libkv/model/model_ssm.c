/*
 * model_ssm.c - the layers that keep a fixed state per sequence in place
 * of a KV cache: Mamba mixers (the fields each family names them by are
 * on its FAMILIES entry, family.c), linear attention, and the models of
 * Mamba layers only.
 */
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

/* state-spaces' own configs: ssm_cfg of mamba_ssm's Mamba, Mamba2 */
static const struct mamba_fields SSM_CFG = {
	1, NULL, NULL, NULL, "d_state", "d_conv", "expand", NULL,
	0, 0, 0, 16, 4, false};
static const struct mamba_fields SSM_CFG2 = {
	2, NULL, "headdim", "ngroups", "d_state", "d_conv", "expand", NULL,
	0, 64, 1, 128, 4, false};

/* A field that may be "auto" (or null, or absent): 0 then. */
static int get_auto(struct cfg *c, const char *field, uint64_t hi,
		    uint64_t *out)
{
	char where[128];
	const cJSON *it = cfg_find(c, field, where, sizeof where);
	*out = 0;
	if (!it || cJSON_IsNull(it) ||
	    (cJSON_IsString(it) && !strcmp(it->valuestring, "auto")))
		return 0;
	return cfg_check_uint(c, it, where, 1, hi, out);
}

/* The Mamba mixers of a model with fields f: what each keeps per sequence,
 * whatever its length, and what its weights are. */
int read_mamba(struct cfg *c, struct kv_model *m,
		      const struct mamba_fields *f)
{
	uint64_t expand, v, heads = 0, hd = 0, inner = 0;
	int e;
	m->ssm_version = f->version;
	m->ssm_dtype = m->dtype;
	const char *sd = NULL;
	if ((e = cfg_u32(c, f->state, false, f->d_state, 1, 1 << 16,
			 &m->ssm_d_state)) ||
	    (e = cfg_u32(c, f->conv, false, f->d_conv, 1, 1 << 10,
			 &m->ssm_d_conv)) ||
	    (e = cfg_str(c, "mamba_ssm_dtype", &sd)))
		return e;
	expand = 2;
	if ((f->expand &&
	     (e = cfg_uint(c, f->expand, false, 2, 1, 1 << 10, &expand))) ||
	    (f->inner && (e = get_auto(c, f->inner, MAX_FFN, &inner))))
		return e;
	if (sd && kv_dtype_from_torch(sd, &m->ssm_dtype))
		return cfg_fail(c,
				"mamba_ssm_dtype: unknown dtype, expected "
				"float32, float16 or bfloat16, got \"%.60s\"",
				sd);
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
	if ((f->heads && (e = cfg_uint(c, f->heads, false, f->d_heads, 1,
				       MAX_HEADS, &heads))) ||
	    (e = get_auto(c, f->head_dim, MAX_HEAD_DIM, &hd)))
		return e;
	if (!hd)
		hd = f->d_head_dim;
	if (!f->heads) /* heads of head_dim channels */
		heads = m->ssm_d_inner / hd ? m->ssm_d_inner / hd : 1;
	/* NemotronH's older copies spell the groups mamba_num_groups */
	const char *g = cfg_has(c, f->groups) || !cfg_has(c, "mamba_num_groups")
			    ? f->groups
			    : "mamba_num_groups";
	if ((e = cfg_u32(c, g, false, f->d_groups, 1, 1 << 16, &m->ssm_groups)))
		return e;
	if (f->inner_heads && hd)
		m->ssm_d_inner = heads * hd;
	m->ssm_heads = (uint32_t)heads;
	if (m->ssm_d_inner % heads || (hd && m->ssm_d_inner != heads * hd)) {
		char where[128];
		cfg_find(c, f->heads, where, sizeof where);
		return cfg_fail(c, "%s: %llu heads%s do not make the %llu "
				"channels of the Mamba mixer", where,
				(unsigned long long)heads,
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
 * head_dim state each, and for KDA one group per head (its keys). A
 * family may keep a state of its own (f->ops->linear: RecurrentGemma's,
 * LFM2's). Returns 0, with m untouched where none applies (a KDA without
 * its heads and head size is not sized).
 */
int read_linear(struct cfg *c, struct kv_model *m, const struct family *f)
{
	struct cfg lin;
	bool has_lin;
	int e = cfg_nested(c, "linear_attn_config", &lin, &has_lin);
	if (e)
		return e;
	if (f->ops->linear) {
		e = f->ops->linear(c, m);
	} else if (cfg_has(c, "attn_type_list") || f->traits & T_LIGHTNING) {
		m->ssm_version = 4;
		m->ssm_dtype = m->dtype;
		m->ssm_heads = m->n_heads;
		m->ssm_d_state = m->head_dim;
		m->ssm_d_inner = (uint64_t)m->n_heads * m->head_dim;
	} else if (has_lin && cfg_has(&lin, "num_heads") &&
		   cfg_has(&lin, "head_dim")) {
		m->ssm_version = 5;
		m->ssm_dtype = KV_DTYPE_F32;
		if ((e = cfg_u32(&lin, "num_heads", true, 0, 1, MAX_HEADS,
				 &m->ssm_heads)) ||
		    (e = cfg_u32(&lin, "head_dim", true, 0, 1, MAX_HEAD_DIM,
				 &m->ssm_d_state)) ||
		    (e = cfg_u32(&lin, "short_conv_kernel_size", false, 4, 1,
				 1 << 10, &m->ssm_d_conv)))
			return e;
		m->ssm_groups = m->ssm_heads;
		m->ssm_d_inner = (uint64_t)m->ssm_heads * m->ssm_d_state;
	} else {
		return 0;
	}
	if (e)
		return e;
	for (uint32_t i = 0; i < m->n_layers; i++)
		m->layers[i].ssm = m->layers[i].attn == KV_ATTN_NONE;
	return 0;
}

/*
 * A model of Mamba layers only (Mamba, Falcon Mamba, Mamba2, or
 * state-spaces' own configs, whose ssm_cfg names the layer): no attention,
 * so no KV cache; each layer keeps a fixed state, and is a norm and a
 * mixer, no MLP.
 */
int build_ssm(struct cfg *c, struct kv_model *m, const struct family *f)
{
	static const char *const layers[] = {"num_hidden_layers", "n_layer",
					     "n_layers", NULL};
	static const char *const hidden[] = {"hidden_size", "d_model", NULL};
	uint64_t v;
	int e;
	if ((e = cfg_uint_any(c, layers, true, 0, 1, MAX_LAYERS, &v)) ||
	    (e = cfg_uint_any(c, hidden, true, 0, 1, MAX_HIDDEN, &m->hidden)))
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
	const struct mamba_fields *mf = f->ops->mamba;
	bool has = false;
	if (!m->model_type[0] && (e = cfg_nested(c, "ssm_cfg", &sub, &has)))
		return e;
	if (has) {
		/* mamba_ssm's hybrids: attention layers and MLPs it names */
		static const char *const extra[] = {"attn_layer_idx",
						    "d_intermediate", NULL};
		for (const char *const *x = extra; *x; x++) {
			char where[128];
			const cJSON *it;
			if ((e = cfg_kind(c, *x, K_LIST | K_NUM, &it)))
				return e;
			cfg_find(c, *x, where, sizeof where);
			if ((cJSON_IsArray(it) && cJSON_GetArraySize(it)) ||
			    (cJSON_IsNumber(it) && it->valuedouble != 0))
				return cfg_fail(c, "%s: attention layers or "
						"MLPs in a state-spaces config "
						"are not read", where);
		}
		if ((e = cfg_str(&sub, "layer", &layer)))
			return e;
		mf = layer && !strcmp(layer, "Mamba2") ? &SSM_CFG2 : &SSM_CFG;
		mc = &sub;
	}
	if ((e = read_mamba(mc, m, mf)))
		return e;
	static const char *const eps_names[] = {"layer_norm_epsilon",
						"rms_norm_eps", NULL};
	const char *eps = cfg_first(c, eps_names);
	uint64_t pad;
	if ((e = cfg_uint(c, "vocab_size", false, 50280, 1, MAX_VOCAB,
			  &m->vocab)) ||
	    (e = cfg_uint(c, "pad_vocab_size_multiple", false, 1, 1, 1 << 16,
			  &pad)) ||
	    (e = cfg_bool(c,
			  cfg_has(c, "tie_embeddings") ? "tie_embeddings"
						       : "tie_word_embeddings",
			  true, &m->tie_embeddings)) ||
	    (e = cfg_double(c, eps ? eps : eps_names[0], 1e-5, &m->norm_eps)))
		return e;
	m->vocab = (m->vocab + pad - 1) / pad * pad; /* mamba_ssm pads */
	return 0;
}
