/*
 * family.c - the model families as data: FAMILIES, one entry per
 * model_type with its config class's defaults, the traits of its layout
 * and what more it holds (struct family_ops: fields of its own, and the
 * hooks below where it needs code); the prefix rules that read a type not
 * in the table as a family's descendant; family_of(). A family's whole
 * story is its entry, its ops and its hooks: adding one is an entry (and
 * a golden config to hold it to its reference).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

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

/* OpenELM: per-layer head lists and MLP multipliers. */
static int read_openelm(struct cfg *c, struct kv_model *m,
			const struct family *f)
{
	(void)f;
	uint64_t v, divisor;
	int e;
	uint32_t n;
	if ((e = cfg_uint(c, "num_transformer_layers", true, 0, 1, MAX_LAYERS,
			  &v)))
		return e;
	m->n_layers = n = (uint32_t)v;
	if ((e = cfg_uint(c, "model_dim", true, 0, 1, MAX_HIDDEN,
			  &m->hidden)) ||
	    (e = cfg_uint(c, "head_dim", true, 0, 1, MAX_HEAD_DIM, &v)))
		return e;
	m->head_dim = m->head_dim_v = (uint32_t)v;
	m->layers = calloc(n, sizeof *m->layers);
	uint32_t *q = calloc(n, sizeof *q), *kv = calloc(n, sizeof *kv);
	if (!m->layers || !q || !kv) {
		free(q);
		free(kv);
		return KV_ENOMEM;
	}
	e = cfg_uint_list(c, "num_query_heads", n, 1, MAX_HEADS, q);
	if (!e)
		e = cfg_uint_list(c, "num_kv_heads", n, 1, MAX_HEADS, kv);
	for (uint32_t i = 0; !e && i < n; i++) {
		if (q[i] % kv[i]) {
			e = cfg_fail(c,
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
	if ((e = cfg_uint(c, "ffn_dim_divisor", false, 256, 1, MAX_FFN,
			  &divisor)))
		return e;
	char where[128], got[96];
	const cJSON *it = cfg_find(c, "ffn_multipliers", where, sizeof where);
	for (uint32_t i = 0; i < n; i++) {
		const cJSON *x = it;
		if (it && cJSON_IsArray(it)) {
			if (cJSON_GetArraySize(it) != (int)n)
				return cfg_fail(c, "%s: must list one value "
						"per layer (%u), got %d", where,
						n, cJSON_GetArraySize(it));
			x = cJSON_GetArrayItem(it, (int)i);
		}
		double mult = 4.0;
		if (x && !cJSON_IsNull(x)) {
			if (!cJSON_IsNumber(x) || !(x->valuedouble > 0) ||
			    x->valuedouble > 1000) {
				cfg_show(x, got, sizeof got);
				return cfg_fail(c, "%s: must be positive "
						"numbers, got %s", where, got);
			}
			mult = x->valuedouble;
		}
		m->layers[i].mlp = KV_MLP_DENSE;
		m->layers[i].ffn_dim =
			make_divisible(mult * (double)m->hidden, divisor);
	}
	m->intermediate = m->layers[0].ffn_dim;
	if ((e = cfg_uint(c, "vocab_size", false, 32000, 1, MAX_VOCAB,
			  &m->vocab)) ||
	    (e = cfg_uint(c, "max_context_length", false, 2048, 1, MAX_POS,
			  &m->max_pos)) ||
	    (e = cfg_bool(c, "share_input_output_layers", false,
			  &m->tie_embeddings)) ||
	    (e = cfg_bool(c, "normalize_qk_projections", false, &m->qk_norm)) ||
	    (e = cfg_double(c, "rope_freq_constant", 10000, &m->rope_theta)))
		return e;
	m->gated_mlp = true;
	return 0;
}

/* GPT-Neo's layers: attention_layers, one kind a layer, or its source,
 * attention_types, a list of [kinds, times] (the kinds repeated times
 * over); global attends to all, local to window_size tokens. Neither:
 * global and local in turn, as the class's default. */
static int neo_kinds(struct cfg *c, uint32_t n, enum kv_attn *k)
{
	int e = cfg_kinds(c, "attention_layers", n, k);
	char where[128], got[96];
	const cJSON *it = cfg_find(c, "attention_types", where, sizeof where);
	if (e != 1)
		return e;
	if (!it) { /* GPTNeoConfig's default: global and local in turn */
		for (uint32_t i = 0; i < n; i++)
			k[i] = i % 2 ? KV_ATTN_SLIDING : KV_ATTN_FULL;
		return 0;
	}
	if (!cJSON_IsArray(it)) {
		cfg_show(it, got, sizeof got);
		return cfg_fail(c,
				"%s: must be a list of [kinds, times], got %s",
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
				     !cfg_layer_kind(s->valuestring, &k[i % n]);
				i++;
			}
		}
		if (!ok) {
			cfg_show(el, got, sizeof got);
			return cfg_fail(c,
					"%s[%u]: must be [[kinds], times] of "
					"global and local layers, got %s",
					where, at, got);
		}
		at++;
	}
	if (i != n)
		return cfg_fail(c,
				"%s: must give one kind per layer (%u), got %u",
				where, n, i);
	return 0;
}

/*
 * RecurrentGemma's _block_types (by default recurrent, recurrent,
 * attention), repeated over the layers: its attention layers keep the last
 * attention_window_size tokens, its recurrent ones a fixed state.
 */
static int rg_kinds(struct cfg *c, const struct kv_model *m,
		    uint64_t window, uint64_t chunk, enum kv_attn *k)
{
	(void)window, (void)chunk;
	static const enum kv_attn def[] = {KV_ATTN_NONE, KV_ATTN_NONE,
					   KV_ATTN_SLIDING};
	enum kv_attn pat[64];
	uint32_t len = 3;
	memcpy(pat, def, sizeof def);
	char where[128], got[96];
	const char *f =
	    cfg_has(c, "_block_types") ? "_block_types" : "block_types";
	const cJSON *it = cfg_find(c, f, where, sizeof where), *el;
	if (it && !cJSON_IsNull(it)) {
		int cnt = cJSON_IsArray(it) ? cJSON_GetArraySize(it) : 0;
		if (cnt < 1 || cnt > 64) {
			cfg_show(it, got, sizeof got);
			return cfg_fail(c,
					"%s: must be a list of 1 to 64 block "
					"kinds, got %s",
					where, got);
		}
		len = 0;
		cJSON_ArrayForEach(el, it)
		{
			enum kv_attn a;
			if (!cJSON_IsString(el) ||
			    cfg_layer_kind(el->valuestring, &a)) {
				cfg_show(el, got, sizeof got);
				return cfg_fail(c,
						"%s[%u]: unknown block kind, "
						"got %s",
						where, len, got);
			}
			pat[len++] = a == KV_ATTN_NONE ? a : KV_ATTN_SLIDING;
		}
	}
	for (uint32_t i = 0; i < m->n_layers; i++)
		k[i] = pat[i % len];
	return 0;
}

/* One layer in every <what>_period from <what>_offset (Jamba's and
 * Zamba's attention, Jamba's experts), with their classes' defaults. */
static int period_offset(struct cfg *c, const char *what, uint64_t pdef,
			 uint64_t odef, uint64_t *period, uint64_t *offset)
{
	char pf[64], of[64];
	snprintf(pf, sizeof pf, "%s_period", what);
	snprintf(of, sizeof of, "%s_offset", what);
	int e = cfg_uint(c, pf, false, pdef, 1, MAX_LAYERS, period);
	return e ? e : cfg_uint(c, of, false, odef, 0, MAX_LAYERS, offset);
}

/* Zamba's layers without a layers_block_type list, as its config class
 * makes one: layer 2, then every attn_layer_period-th from
 * attn_layer_offset past it, attend (a "hybrid" layer), the rest are
 * Mamba layers alone. */
static int zamba_kinds(struct cfg *c, const struct kv_model *m,
		       uint64_t window, uint64_t chunk, enum kv_attn *k)
{
	(void)window, (void)chunk;
	uint64_t period, offset;
	int e = period_offset(c, "attn_layer", 6, 4, &period, &offset);
	if (e)
		return e;
	for (uint32_t i = 0; i < m->n_layers; i++)
		k[i] = i == 2 || (i > 2 && (i - 3) % period == offset)
			       ? KV_ATTN_FULL
			       : KV_ATTN_NONE;
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
	const cJSON *mu =
	    cfg_find(c, "block_ffn_dim_multiplier", where, sizeof where);
	int e;
	if ((cfg_has(c, "block_ff_dim") &&
	     (e = cfg_uint(c, "block_ff_dim", false, 0, 1, MAX_FFN, &w))) ||
	    (e = cfg_bool(c, "block_auto_adjust_ff_dim", true, &adjust)) ||
	    (e = cfg_uint(c, "block_multiple_of", false, 256, 1, MAX_FFN, &of)))
		return e;
	if (!adjust) {
		m->intermediate = w;
		return 0;
	}
	if (mu && !cJSON_IsNull(mu) &&
	    (e = cfg_double(c, "block_ffn_dim_multiplier", 1, &mult)))
		return e;
	w = (uint64_t)(2 * (double)w / 3);
	w = (uint64_t)(mult * (double)w);
	w = (w + of - 1) / of * of;
	if (w < 1 || w > MAX_FFN)
		return cfg_fail(c,
				"block_ffn_dim_multiplier: makes an MLP %llu "
				"wide, got %g",
				(unsigned long long)w, mult);
	m->intermediate = w;
	return 0;
}

/* MiMo-V2-Flash's two attentions: its full layers' V heads of v_head_dim,
 * its sliding ones' K/V heads of their own (swa_num_key_value_heads,
 * swa_head_dim, swa_v_head_dim), each defaulting to the full layers'. */
static int mimo_heads(struct cfg *c, struct kv_model *m)
{
	uint32_t v, kvh, hk, hv;
	int e;
	if ((e = cfg_u32(c, "v_head_dim", false, m->head_dim, 1, MAX_HEAD_DIM,
			 &v)) ||
	    (e = cfg_u32(c, "swa_num_key_value_heads", false, m->n_kv_heads, 1,
			 m->n_heads, &kvh)) ||
	    (e = cfg_u32(c, "swa_head_dim", false, m->head_dim, 1, MAX_HEAD_DIM,
			 &hk)) ||
	    (e = cfg_u32(c, "swa_v_head_dim", false, v, 1, MAX_HEAD_DIM, &hv)))
		return e;
	if (m->n_heads % kvh)
		return cfg_fail(c,
				"swa_num_key_value_heads: must divide "
				"num_attention_heads (%u), got %u",
				m->n_heads, kvh);
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

/* JetMoE's heads, the config naming none (JetMoeConfig): a query head per
 * KV head and chosen expert. */
static int jetmoe_heads(struct cfg *c, uint64_t *heads)
{
	uint64_t kvh, k;
	int e;
	if ((e = cfg_uint(c, "num_key_value_heads", false, 16, 1, MAX_HEADS,
			  &kvh)) ||
	    (e = cfg_uint(c, "num_experts_per_tok", false, 2, 1, MAX_HEADS,
			  &k)))
		return e;
	*heads = kvh * k; /* each at most 2^16 */
	if (*heads > MAX_HEADS)
		return cfg_fail(c,
				"num_key_value_heads: times "
				"num_experts_per_tok must be at most %llu "
				"heads, got %llu x %llu",
				MAX_HEADS, (unsigned long long)kvh,
				(unsigned long long)k);
	return 0;
}

/* Falcon's KV heads: one under multi_query, as many as the heads without;
 * the new decoder architecture names them as any config does (1 here).
 * The old RefinedWeb form (Falcon-40B) is that architecture when it names
 * n_head_kv. */
static int falcon_kv_as(struct cfg *c, const struct kv_model *m, bool rw,
			uint64_t *kv)
{
	bool newarch, mq;
	int e;
	if ((e = cfg_bool(c, "new_decoder_architecture", rw, &newarch)) ||
	    (e = cfg_bool(c, "multi_query", true, &mq)))
		return e;
	if (newarch)
		return 1;
	*kv = mq ? 1 : m->n_heads;
	return 0;
}

static int falcon_kv(struct cfg *c, const struct kv_model *m, uint64_t *kv)
{
	return falcon_kv_as(c, m, false, kv);
}

static int refinedweb_kv(struct cfg *c, const struct kv_model *m,
			 uint64_t *kv)
{
	return falcon_kv_as(c, m, cfg_has(c, "n_head_kv"), kv);
}

/* DBRX's KV heads are attn_config's kv_n_heads (1: no attn_config). */
static int dbrx_kv(struct cfg *c, const struct kv_model *m, uint64_t *kv)
{
	struct cfg sub;
	bool has;
	int e = cfg_nested(c, "attn_config", &sub, &has);
	if (e || !has)
		return e ? e : 1;
	return cfg_uint(&sub, "kv_n_heads", false, m->n_heads, 1, MAX_HEADS,
			kv);
}

/* ChatGLM's: multi_query_group_num under multi_query_attention, else as
 * many as the heads. */
static int chatglm_kv(struct cfg *c, const struct kv_model *m, uint64_t *kv)
{
	bool mq;
	int e;
	if ((e = cfg_bool(c, "multi_query_attention", false, &mq)) ||
	    (e = cfg_uint(c, "multi_query_group_num", false, m->n_heads, 1,
			  MAX_HEADS, kv)))
		return e;
	if (!mq)
		*kv = m->n_heads;
	return 0;
}

/* GPT-BigCode's: one under multi_query (its default). */
static int bigcode_kv(struct cfg *c, const struct kv_model *m, uint64_t *kv)
{
	bool mq;
	int e = cfg_bool(c, "multi_query", true, &mq);
	if (!e)
		*kv = mq ? 1 : m->n_heads;
	return e;
}

/* Jamba's attention layers: every attn_layer_period-th from
 * attn_layer_offset, sliding where the config gives a window; the others
 * are Mamba layers. */
static int jamba_kinds(struct cfg *c, const struct kv_model *m,
		       uint64_t window, uint64_t chunk, enum kv_attn *k)
{
	uint64_t period, offset;
	int e = period_offset(c, "attn_layer", 8, 4, &period, &offset);
	(void)chunk;
	if (e)
		return e;
	if (offset >= period)
		return cfg_fail(c,
				"attn_layer_offset: must be below "
				"attn_layer_period (%llu), got %llu",
				(unsigned long long)period,
				(unsigned long long)offset);
	for (uint32_t i = 0; i < m->n_layers; i++)
		k[i] = i % period != offset ? KV_ATTN_NONE
		       : window		    ? KV_ATTN_SLIDING
					    : KV_ATTN_FULL;
	return 0;
}

/* Llama 4's layers: chunked attention but on the layers without rotary
 * positions (no_rope_layers, or every no_rope_layer_interval-th), which
 * attend to all; all full without a chunk. */
static int llama4_kinds(struct cfg *c, const struct kv_model *m,
			uint64_t window, uint64_t chunk, enum kv_attn *k)
{
	uint32_t n = m->n_layers;
	(void)window;
	if (!chunk)
		return 0;
	uint32_t *rope = calloc(n, sizeof *rope);
	if (!rope)
		return KV_ENOMEM;
	const cJSON *it;
	int e = cfg_kind(c, "no_rope_layers", K_LIST, &it);
	if (!e && it && cJSON_GetArraySize(it) > 0) {
		e = cfg_uint_list(c, "no_rope_layers", n, 0, 1, rope);
	} else if (!e) {
		uint64_t every;
		e = cfg_uint(c, "no_rope_layer_interval", false, 4, 1,
			     MAX_LAYERS, &every);
		for (uint32_t i = 0; !e && i < n; i++)
			rope[i] = (i + 1) % every != 0;
	}
	for (uint32_t i = 0; !e && i < n; i++)
		k[i] = rope[i] ? KV_ATTN_CHUNKED : KV_ATTN_FULL;
	free(rope);
	return e;
}

/* Jamba's MoE layers: every expert_layer_period-th from
 * expert_layer_offset. */
static int jamba_moe(struct cfg *c, struct kv_model *m, bool *dense)
{
	uint64_t every, offset;
	int e = period_offset(c, "expert_layer", 2, 1, &every, &offset);
	for (uint32_t i = 0; !e && i < m->n_layers; i++)
		dense[i] = i % every != offset;
	return e;
}

/* Llama 4's: moe_layers lists them (the others are dense), or every
 * interleave_moe_layer_step-th; its dense layers' MLP is
 * intermediate_size_mlp wide. */
static int llama4_moe(struct cfg *c, struct kv_model *m, bool *dense)
{
	uint32_t n = m->n_layers;
	uint64_t every;
	int e = cfg_layer_list(c, "moe_layers", n, 0, dense);
	for (uint32_t i = 0; e == 0 && i < n; i++)
		dense[i] = !dense[i];
	if (e == 1) {
		e = cfg_uint(c, "interleave_moe_layer_step", false, 1, 1,
			     MAX_LAYERS, &every);
		for (uint32_t i = 0; !e && i < n; i++)
			dense[i] = (i + 1) % every != 0;
	}
	if (!e)
		e = cfg_uint(c, "intermediate_size_mlp", false, 16384, 1,
			     MAX_FFN, &m->intermediate);
	return e;
}

/* NemotronH's layers are one thing each: 'M' a Mamba mixer, '*'
 * attention, '-' an MLP, 'E' a mixture of experts (its
 * hybrid_override_pattern). */
static int nemotron_h_layers(struct cfg *c, struct kv_model *m)
{
	const char *p = NULL;
	int e = cfg_str(c, "hybrid_override_pattern", &p);
	/* read beside layer_types too, so held to its length here */
	if (!e && p && strlen(p) != m->n_layers)
		return cfg_fail(c, "hybrid_override_pattern: must have one "
				"character per layer (%u), got %zu",
				m->n_layers, strlen(p));
	for (uint32_t i = 0; !e && i < m->n_layers; i++) {
		struct kv_layer *l = &m->layers[i];
		if (p && p[i] == '-') {
			l->mlp = KV_MLP_DENSE;
			l->ffn_dim = m->intermediate;
		} else if (p && p[i] != 'E') {
			l->mlp = KV_MLP_NONE;
			l->ffn_dim = 0;
		}
		l->ssm = p && p[i] == 'M';
	}
	return e;
}

/* Zamba2's attention layers share num_mem_blocks blocks' weights
 * (attention and MLP) in turn, each with an MLP adapter of its own of
 * adapter_rank (Zamba's share one block and have no adapters). */
static int zamba2_layers(struct cfg *c, struct kv_model *m)
{
	uint64_t mem, rank;
	int e;
	if ((e = cfg_uint(c, "num_mem_blocks", false, 1, 1, MAX_LAYERS,
			  &mem)) ||
	    (e = cfg_uint(c, "adapter_rank", false, 128, 0, MAX_HIDDEN, &rank)))
		return e;
	m->n_mem_blocks = (uint32_t)mem;
	m->adapter_rank = (uint32_t)rank;
	return 0;
}

/* RecurrentGemma's recurrent blocks (RG-LRU) keep a float32 value per
 * channel of lru_width, in the heads' blocks, and the convolution's last
 * conv1d_width - 1 inputs. */
static int rg_linear(struct cfg *c, struct kv_model *m)
{
	uint64_t inner;
	int e;
	if ((e = cfg_uint(c, "lru_width", false, m->hidden, 1, MAX_HIDDEN,
			  &inner)) ||
	    (e = cfg_u32(c, "conv1d_width", false, 4, 1, 1 << 10,
			 &m->ssm_d_conv)))
		return e;
	if (inner % m->n_heads)
		return cfg_fail(c,
				"lru_width: must split into the %u "
				"heads' blocks, got %llu",
				m->n_heads, (unsigned long long)inner);
	m->ssm_version = 6;
	m->ssm_dtype = KV_DTYPE_F32;
	m->ssm_heads = m->n_heads;
	m->ssm_d_inner = inner;
	m->ssm_d_state = 1; /* the state: one value a channel */
	return 0;
}

/* LFM2's blocks: a gated convolution over the hidden state, its cache
 * the last conv_L_cache inputs, in the model's dtype. */
static int lfm2_conv(struct cfg *c, struct kv_model *m)
{
	int e;
	if ((e = cfg_u32(c, "conv_L_cache", false, 3, 1, 1 << 10,
			 &m->ssm_d_conv)) ||
	    (e = cfg_bool(c, "conv_bias", false, &m->ssm_bias)))
		return e;
	m->ssm_version = 7;
	m->ssm_dtype = m->dtype;
	m->ssm_heads = 1;
	m->ssm_d_inner = m->hidden;
	return 0;
}

/* OPT's embedding may be narrower than the model, projected in and out;
 * without do_layer_norm_before, no final norm. */
static int opt_block(struct cfg *c, struct kv_model *m)
{
	bool before, removed;
	int e;
	if ((e = cfg_uint(c, "word_embed_proj_dim", false, m->hidden, 1,
			  MAX_HIDDEN, &m->embed_dim)) ||
	    (e = cfg_bool(c, "do_layer_norm_before", true, &before)) ||
	    (e = cfg_bool(c, "_remove_final_layer_norm", false, &removed)))
		return e;
	m->no_final_norm = !before || removed;
	return 0;
}

/* Qwen (the first) names its dtype by flags, bf16, fp16 or fp32; with
 * none set its code takes bf16 (on a GPU that has it). */
static int qwen_dtype(struct cfg *c, struct kv_model *m)
{
	bool bf16, fp16, fp32;
	int e;
	if ((e = cfg_bool(c, "bf16", false, &bf16)) ||
	    (e = cfg_bool(c, "fp16", false, &fp16)) ||
	    (e = cfg_bool(c, "fp32", false, &fp32)))
		return e;
	m->dtype = KV_DTYPE_BF16;
	if (!bf16 && fp16)
		m->dtype = KV_DTYPE_F16;
	else if (!bf16 && fp32)
		m->dtype = KV_DTYPE_F32;
	return 0;
}

/* The Mamba mixers' fields by family (model_int.h) */
static const struct mamba_fields JAMBA_MAMBA = {
	1, NULL, NULL, NULL, "mamba_d_state", "mamba_d_conv", "mamba_expand",
	NULL, 0, 0, 0, 16, 4, false};
static const struct mamba_fields MAMBA1 = {
	1, NULL, NULL, NULL, "state_size", "conv_kernel", "expand",
	"intermediate_size", 0, 0, 0, 16, 4, false};
static const struct mamba_fields MAMBA2_MAMBA = {
	2, "num_heads", "head_dim", "n_groups", "state_size", "conv_kernel",
	"expand", NULL, 128, 64, 1, 128, 4, false};
static const struct mamba_fields BAMBA_MAMBA = {
	2, "mamba_n_heads", "mamba_d_head", "mamba_n_groups", "mamba_d_state",
	"mamba_d_conv", "mamba_expand", NULL, 128, 0, 1, 256, 4, false};
static const struct mamba_fields FALCON_H1_MAMBA = {
	2, "mamba_n_heads", "mamba_d_head", "mamba_n_groups", "mamba_d_state",
	"mamba_d_conv", "mamba_expand", "mamba_d_ssm", 128, 0, 1, 256, 4,
	false};
static const struct mamba_fields NEMOTRON_H_MAMBA = {
	2, "mamba_num_heads", "mamba_head_dim", "n_groups", "ssm_state_size",
	"conv_kernel", "expand", NULL, 128, 64, 8, 128, 4, true};
/* Zamba2: heads of mamba_headdim over mamba_expand x hidden */
static const struct mamba_fields ZAMBA2_MAMBA = {
	2, NULL, "mamba_headdim", "mamba_ngroups", "mamba_d_state",
	"mamba_d_conv", "mamba_expand", NULL, 0, 64, 1, 64, 4, false};
/* gated DeltaNet: value heads, key heads (groups) of d_state */
static const struct mamba_fields DELTANET = {
	3, "linear_num_value_heads", "linear_value_head_dim",
	"linear_num_key_heads", "linear_key_head_dim",
	"linear_conv_kernel_dim", NULL, NULL, 32, 128, 16, 128, 4, true};

/* The LayerNorm families (model_int.h): bias fields (attention, MLP),
 * then o, qkv, mlp_def, head, parallel, embed_norm, pos, qkln. */
#define LN(...) .ln = &(const struct ln_family){__VA_ARGS__}

/* What each family holds past its defaults and traits, by name; a family
 * needing nothing more has none. */
static const struct family_ops
	llama = {.cls = {"LlamaConfig", 32, 32, 0, 4096}},
	mistral = {.cls = {"MistralConfig", 32, 32, 8, 4096}},
	qwen2 = {.cls = {"Qwen2Config", 32, 32, 0, 4096}},
	/* PaliGemma's text models, the first two */
	gemma = {.swa = SWA_NONE, .cls = {"GemmaConfig", 28, 16, 0, 3072}},
	gemma2 = {.swa = SWA_ALTERNATE,
		  .cls = {"Gemma2Config", 26, 8, 4, 2304}},
	gemma3 = {.full_every = {"sliding_window_pattern", 6}},
	gpt_bigcode = {.kv_heads = bigcode_kv},
	mixtral = {.moe = {.experts = 8}},
	qwen2_moe = {.moe = {.experts = 60, .active = 4, .expert_ffn = 1408,
			     .shared_ffn = 5632}},
	qwen3_moe = {.moe = {.experts = 128, .active = 8, .expert_ffn = 768}},
	qwen3_next = {.attn_every = {"full_attention_interval", 4},
		      .mamba = &DELTANET},
	gated_deltanet = {.mamba = &DELTANET},
	qwen = {.dtype = qwen_dtype},
	chatglm = {.kv_heads = chatglm_kv},
	dbrx = {.kv_heads = dbrx_kv, .kv_field = "attn_config.kv_n_heads"},
	nemotron_h = {.mamba = &NEMOTRON_H_MAMBA,
		      .layers = nemotron_h_layers},
	bamba = {.mamba = &BAMBA_MAMBA},
	falcon_h1 = {.mamba = &FALCON_H1_MAMBA},
	zamba = {.mamba = &JAMBA_MAMBA, .kinds = zamba_kinds},
	zamba2 = {.mamba = &ZAMBA2_MAMBA, .layers = zamba2_layers},
	mamba = {.build = build_ssm, .mamba = &MAMBA1},
	mamba2 = {.build = build_ssm, .mamba = &MAMBA2_MAMBA},
	jamba = {.mamba = &JAMBA_MAMBA, .kinds = jamba_kinds,
		 .moe = {.experts = 16}, .moe_layers = jamba_moe},
	exaone4 = {.full_every = {"sliding_window_pattern", 4}},
	olmo3 = {.full_every = {NULL, 4}},
	afmoe = {.full_every = {"global_attn_every_n_layers", 4}},
	bailing_linear = {.attn_every = {"layer_group_size", 5}},
	recurrent_gemma = {.window_field = "attention_window_size",
			   .kinds = rg_kinds, .linear = rg_linear},
	gpt_neo = {.window_field = "window_size", .own_kinds = neo_kinds,
		   LN(NULL, NULL, 1, 0, 1, 0, 0, 0, 1, 0)},
	gpt_neox = {LN("attention_bias", NULL, 1, 1, 1, 0, 0, 0, 0, 0)},
	gptj = {LN(NULL, NULL, 0, 0, 1, 1, 1, 0, 0, 0)},
	codegen = {LN(NULL, NULL, 0, 0, 1, 1, 1, 0, 0, 0)},
	bloom = {LN(NULL, NULL, 1, 1, 1, 0, 0, 1, 0, 0)},
	opt = {LN("enable_bias", "enable_bias", 1, 1, 1, 0, 0, 0, 3, 0),
	       .block = opt_block},
	starcoder2 = {LN("use_bias", "use_bias", 1, 1, 1, 0, 0, 0, 0, 0)},
	phi = {LN(NULL, NULL, 1, 1, 1, 1, 1, 0, 0, 1)},
	persimmon = {LN(NULL, NULL, 1, 1, 1, 0, 0, 0, 0, 2)},
	nemotron = {LN("attention_bias", "mlp_bias", 0, 0, 0, 0, 0, 0, 0, 0)},
	xglm = {LN(NULL, NULL, 1, 1, 1, 0, 0, 0, 0, 0)},
	jetmoe = {.heads = jetmoe_heads},
	mimo_v2 = {.layer_heads = mimo_heads},
	lfm2 = {.ffn = lfm2_width, .linear = lfm2_conv},
	lfm2_moe = {.linear = lfm2_conv},
	ernie45_moe = {.moe = {.experts = 64, .active = 6, .shared = 2}},
	falcon = {.kv_heads = falcon_kv},
	refinedweb = {.kv_heads = refinedweb_kv},
	deepseek = {.moe = {.expert_ffn = 2048, .shared = 1}},
	deepseek_v2 = {.moe = {.expert_ffn = 1407, .shared = 1}},
	deepseek_v3 = {.moe = {.expert_ffn = 2048, .shared = 1,
			       .first_dense = 3}},
	gpt_oss = {.swa = SWA_ALTERNATE, .moe = {.experts = 32, .active = 4}},
	llama4 = {.kinds = llama4_kinds, .moe_layers = llama4_moe,
		  .moe = {.experts = 16, .active = 1, .one_shared = true}},
	openelm = {.build = read_openelm};
#undef LN

#define F(t, fam, vocab, pos, win, hd, tie, swa, ffn, traits, ops)          \
	{t, KV_FAMILY_##fam, {vocab, pos, win, hd, tie, swa, ffn}, traits, ops}

static const struct family FAMILIES[] = {
	/* model_type           family      vocab max_pos  win   hd  tied
	 *                                            swa_flag   ffn traits                  ops */
	F("gpt2",                GPT2,      50257,   1024,    0,   0, true , false,     0, 0,                       NULL),
	F("gpt_bigcode",         GPT2,      50257,   1024,    0,   0, true , false,     0, 0,                       &gpt_bigcode),
	F("llama",               LLAMA,     32000,   2048,    0,   0, false, false, 11008, 0,                       &llama),
	F("mistral",             LLAMA,     32000, 131072, 4096,   0, false, false, 14336, 0,                       &mistral),
	F("mixtral",             LLAMA,     32000, 131072,    0,   0, false, false, 14336, 0,                       &mixtral),
	F("qwen2",               LLAMA,    151936,  32768, 4096,   0, false, true , 22016, T_QKV_BIAS,              &qwen2),
	F("qwen2_moe",           LLAMA,    151936,  32768, 4096,   0, false, true , 22016, T_QKV_BIAS,              &qwen2_moe),
	F("qwen3",               LLAMA,    151936,  32768, 4096, 128, false, true , 22016, T_QK_NORM,               NULL),
	F("qwen3_moe",           LLAMA,    151936,  32768, 4096, 128, false, true , 22016, T_QK_NORM,               &qwen3_moe),
	F("phi3",                LLAMA,     32064,   4096,    0,   0, false, false,  8192, 0,                       NULL),
	F("chatglm",             LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       &chatglm),
	F("glm",                 LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("glm4",                LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("cohere",              LLAMA,     32000,      0,    0,   0, true , false,     0, 0,                       NULL),
	F("cohere2",             LLAMA,     32000,      0,    0,   0, true , false,     0, 0,                       NULL),
	F("starcoder2",          LLAMA,     32000,      0,    0,   0, true , false,     0, T_PLAIN_MLP,             &starcoder2),
	F("qwen3_next",          LLAMA,     32000,      0,    0,   0, false, false,     0, T_QK_NORM | T_ATTN_GATE, &qwen3_next),
	F("dbrx",                LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       &dbrx),
	F("nemotron_h",          LLAMA,     32000,      0,    0,   0, false, false,     0, T_PLAIN_MLP,             &nemotron_h),
	F("bamba",               LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       &bamba),
	F("minimax",             LLAMA,     32000,      0,    0,   0, false, false,     0, T_LIGHTNING,             NULL),
	F("gemma3n",             LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("gemma3n_text",        LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("mllama",              LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("mllama_text_model",   LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("exaone4",             LLAMA,     32000,      0, 4096,   0, false, false,     0, 0,                       &exaone4),
	F("granitemoehybrid",    LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       &bamba),
	F("falcon_h1",           LLAMA,     32000,      0,    0,   0, false, false,     0, T_BESIDE,                &falcon_h1),
	F("olmo",                LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("olmo2",               LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("granite",             LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("internlm2",           LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("phi",                 LLAMA,     32000,      0,    0,   0, false, false,     0, T_PLAIN_MLP,             &phi),
	F("stablelm",            LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("gpt_neox",            LLAMA,     32000,      0,    0,   0, false, false,     0, T_PLAIN_MLP,             &gpt_neox),
	F("opt",                 LLAMA,     32000,      0,    0,   0, true , false,     0, T_PLAIN_MLP,             &opt),
	F("mpt",                 LLAMA,     32000,      0,    0,   0, true , false,     0, T_PLAIN_MLP,             NULL),
	F("bloom",               LLAMA,     32000,      0,    0,   0, true , false,     0, T_PLAIN_MLP,             &bloom),
	F("gptj",                LLAMA,     32000,      0,    0,   0, false, false,     0, T_PLAIN_MLP,             &gptj),
	F("minicpm",             LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("minicpm3",            LLAMA,     32000,      0,    0,   0, true , false,     0, T_MLA_FULL,              NULL),
	F("exaone",              LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("qwen2_vl",            LLAMA,     32000,      0,    0,   0, false, false,     0, T_QKV_BIAS,              NULL),
	F("qwen2_5_vl",          LLAMA,     32000,      0,    0,   0, false, false,     0, T_QKV_BIAS,              NULL),
	F("mistral3",            LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("zamba",               LLAMA,     32000,      0,    0,   0, true , false,     0, T_ZAMBA | T_BESIDE,      &zamba),
	F("zamba2",              LLAMA,     32000,      0,    0,   0, true , false,     0, T_ZAMBA | T_BESIDE,      &zamba2),
	F("recurrent_gemma",     LLAMA,     32000,      0, 2048,   0, true , false,     0, T_HALF_FFN | T_MLP_BIAS, &recurrent_gemma),
	F("longcat_flash",       LLAMA,     32000,      0,    0,   0, false, false,     0, T_PAIRS,                 NULL),
	F("nemotron-nas",        LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("hunyuan",             LLAMA,     32000,      0,    0,   0, false, false,     0, T_MIXED,                 NULL),
	F("hunyuan_v1_dense",    LLAMA,     32000,      0,    0,   0, false, false,     0, T_MIXED,                 NULL),
	F("hunyuan_v1_moe",      LLAMA,     32000,      0,    0,   0, false, false,     0, T_MIXED,                 NULL),
	F("baichuan",            LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("glm4_moe",            LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("ernie4_5",            LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("ernie4_5_moe",        LLAMA,     32000,      0,    0,   0, false, false,     0, T_MOE_RANGE,             &ernie45_moe),
	F("internlm3",           LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("minimax_m1",          LLAMA,     32000,      0,    0,   0, false, false,     0, T_LIGHTNING,             NULL),
	F("olmoe",               LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("phimoe",              LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("phi3small",           LLAMA,     32000,      0,    0,   0, true , false,     0, 0,                       NULL),
	F("seed_oss",            LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("smollm3",             LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("ministral3",          LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("lfm2",                LLAMA,     32000,      0,    0,   0, true , false,     0, T_QK_NORM,               &lfm2),
	F("olmo3",               LLAMA,     32000,      0, 4096,   0, false, false,     0, 0,                       &olmo3),
	F("qwen3_5_text",        LLAMA,     32000,      0,    0,   0, false, false,     0, T_QK_NORM,               &gated_deltanet),
	F("qwen3_5_moe_text",    LLAMA,     32000,      0,    0,   0, false, false,     0, T_QK_NORM,               &gated_deltanet),
	F("mamba",               LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       &mamba),
	F("mamba2",              LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       &mamba2),
	F("falcon_mamba",        LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       &mamba),
	F("step3_text",          LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("qwen2_5_omni_text",   LLAMA,     32000,      0,    0,   0, false, true ,     0, T_QKV_BIAS,              NULL),
	F("qwen3_omni_moe_text", LLAMA,     32000,      0,    0,   0, false, true ,     0, T_QK_NORM,               NULL),
	F("dots1",               LLAMA,     32000,      0,    0,   0, false, true ,     0, 0,                       NULL),
	F("qwen",                LLAMA,     32000,      0,    0,   0, false, false,     0, T_QKV_BIAS | T_HALF_FFN, &qwen),
	F("gpt_neo",             LLAMA,     32000,      0,  256,   0, true , false,     0, T_PLAIN_MLP,             &gpt_neo),
	F("codegen",             LLAMA,     32000,      0,    0,   0, false, false,     0, T_PLAIN_MLP,             &codegen),
	F("persimmon",           LLAMA,     32000,      0,    0,   0, false, false,     0, T_PLAIN_MLP,             &persimmon),
	F("nemotron",            LLAMA,     32000,      0,    0,   0, false, false,     0, T_PLAIN_MLP,             &nemotron),
	F("arcee",               LLAMA,     32000,      0,    0,   0, false, false,     0, T_PLAIN_MLP,             NULL),
	F("apertus",             LLAMA,     32000,      0,    0,   0, false, false,     0, T_PLAIN_MLP,             NULL),
	F("glm4_moe_lite",       LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       NULL),
	F("xglm",                LLAMA,     32000,      0,    0,   0, true , false,     0, T_PLAIN_MLP,             &xglm),
	F("jetmoe",              LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       &jetmoe),
	F("qwen3_vl_text",       LLAMA,     32000,      0,    0,   0, false, false,     0, T_QK_NORM,               NULL),
	F("qwen3_vl_moe_text",   LLAMA,     32000,      0,    0,   0, false, false,     0, T_QK_NORM,               NULL),
	F("mimo_v2_flash",       LLAMA,     32000,      0,    0,   0, false, false,     0, 0,                       &mimo_v2),
	F("bailing_moe_linear",  LLAMA,     32000,      0,    0,   0, false, false,     0, T_LIGHTNING,             &bailing_linear),
	F("lfm2_moe",            LLAMA,     32000,      0,    0,   0, true , false,     0, T_QK_NORM,               &lfm2_moe),
	F("gemma",               GEMMA,    256000,   8192,    0, 256, true , false, 24576, 0,                       &gemma),
	F("gemma2",              GEMMA,    256000,   8192, 4096, 256, true , false,  9216, 0,                       &gemma2),
	F("gemma3",              GEMMA,    262208, 131072, 4096, 256, true , false,  9216, T_QK_NORM | T_HEADS_8_4, &gemma3),
	F("gemma3_text",         GEMMA,    262208, 131072, 4096, 256, true , false,  9216, T_QK_NORM | T_HEADS_8_4, &gemma3),
	F("falcon",              FALCON,    65024,   2048,    0,   0, true , false,     0, 0,                       &falcon),
	F("RefinedWeb",          FALCON,    65024,   2048,    0,   0, true , false,     0, 0,                       &refinedweb),
	F("RefinedWebModel",     FALCON,    65024,   2048,    0,   0, true , false,     0, 0,                       &falcon),
	F("deepseek_v2",         DEEPSEEK, 102400,   2048,    0,   0, false, false, 11008, T_MLA,                   &deepseek_v2),
	F("deepseek_v3",         DEEPSEEK, 129280,   4096,    0,   0, false, false, 18432, T_MLA,                   &deepseek_v3),
	/* DeepSeek-MoE (no latent) and V3.2 (its indexer): V3's defaults */
	F("deepseek_v32",        DEEPSEEK, 129280,   4096,    0,   0, false, false, 18432, T_MLA | T_INDEXER,       &deepseek),
	F("deepseek",            DEEPSEEK, 129280,   4096,    0,   0, false, false, 18432, 0,                       &deepseek),
	F("gpt_oss",             GPT_OSS,  201088, 131072,  128,  64, false, false,  2880, 0,                       &gpt_oss),
	F("llama4",              LLAMA4,   202048, 131072,    0, 128, false, false,  8192, 0,                       &llama4),
	F("llama4_text",         LLAMA4,   202048, 131072,    0, 128, false, false,  8192, 0,                       &llama4),
	F("openelm",             OPENELM,   32000,   2048,    0,   0, false, false,     0, 0,                       &openelm),
	F("jamba",               JAMBA,     65536, 262144,    0,   0, false, false, 14336, 0,                       &jamba),
	/* layouts known, their classes' defaults not: read as Llama-style */
	F("afmoe",               LLAMA,     32000,      0,    0,   0, false, false,     0, T_NOTED,                 &afmoe),
	F("molmo",               LLAMA,     32000,      0,    0,   0, false, false,     0, T_NOTED | T_HALF_FFN,    NULL),
	F("arctic",              LLAMA,     32000,      0,    0,   0, false, false,     0, T_NOTED | T_RESIDUAL,    NULL),
	F("minimax_text_01",     LLAMA,     32000,      0,    0,   0, false, false,     0, T_NOTED | T_LIGHTNING,   NULL),
};
#undef F

/*
 * Types not in FAMILIES, read by the first prefix they begin with:
 * DeepSeek's descendants keep its names and V3's defaults (deepseek_vl_v2,
 * kimi_k2); Qwen's omni models gate their windows as Qwen does, without
 * being a type known as such; a type of a known lineage keeps the traits
 * its name gives (qwen2's biases, qwen3's and lfm2's q and k norms, Gemma
 * 3's heads but Gemma 3n's, Zamba's blocks, Hunyuan's mixed MLP) with the
 * generic defaults, and is said to be unknown.
 */
static const struct family_prefix {
	const char *prefix, *as; /* as: whose defaults; NULL: the generic */
	bool known;
	unsigned traits;
	const struct family_ops *ops;
} FAMILY_PREFIXES[] = {
	{"deepseek", "deepseek_v3", true, T_MLA, &deepseek},
	{"kimi", "deepseek_v3", true, T_MLA, &deepseek},
	{"qwen2_5_omni", "qwen2_5_omni_text", false, T_QKV_BIAS, NULL},
	{"qwen3_omni", "qwen3_omni_moe_text", false, T_QK_NORM, NULL},
	{"qwen2", NULL, false, T_QKV_BIAS, NULL},
	{"qwen3", NULL, false, T_QK_NORM, NULL},
	{"lfm2", NULL, false, T_QK_NORM, NULL},
	{"gemma3n", NULL, false, 0, NULL},
	{"gemma3", NULL, false, T_HEADS_8_4, NULL},
	{"zamba", NULL, false, T_ZAMBA | T_BESIDE, NULL},
	{"hunyuan", NULL, false, T_MIXED, NULL},
};

/* The entry of FAMILIES for model_type t, or NULL. */
static const struct family *family_named(const char *t)
{
	for (size_t i = 0; i < sizeof FAMILIES / sizeof *FAMILIES; i++)
		if (!strcmp(t, FAMILIES[i].type))
			return &FAMILIES[i];
	return NULL;
}

struct family family_of(const char *t, bool *known)
{
	static const struct family_ops none;
	static const struct family generic = {
		NULL, KV_FAMILY_LLAMA, {32000, 0, 0, 0, false, false, 0}, 0,
		NULL};
	const struct family *f = family_named(t);
	struct family r = f ? *f : generic;
	*known = f && !(f->traits & T_NOTED);
	if (!f)
		r.type = t;
	for (size_t i = 0; !f && i < sizeof FAMILY_PREFIXES /
					    sizeof *FAMILY_PREFIXES;
	     i++) {
		const struct family_prefix *p = &FAMILY_PREFIXES[i];
		if (strncmp(t, p->prefix, strlen(p->prefix)))
			continue;
		const struct family *as = p->as ? family_named(p->as) : NULL;
		if (as) {
			r.family = as->family;
			r.d = as->d;
		}
		r.traits = p->traits;
		r.ops = p->ops;
		*known = p->known;
		break;
	}
	if (!r.ops)
		r.ops = &none;
	return r;
}

const struct family *kv_family_at(size_t i)
{
	return i < sizeof FAMILIES / sizeof *FAMILIES ? &FAMILIES[i] : NULL;
}
