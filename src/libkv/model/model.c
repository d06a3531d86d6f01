/*
 * model.c - reads a Hugging Face config.json into a list of layers.
 *
 * One walk over the JSON: the shape, the layers' kinds, the MLPs, the
 * block's fields, each read the same way for every family, from its
 * entry in FAMILIES (family.c: its defaults, traits and hooks). Every
 * field goes through one of the cfg_* readers (cfg.c). The defaults of
 * absent fields are those of Transformers' config class for the
 * model_type (see kvtools(7)); the fields that define the shape never get
 * one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/json.h"
#include "kv/gguf.h"
#include "model_int.h"

#define MAX_CONFIG_BYTES (64u << 20)


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

const char *kv_model_class(const struct kv_model *m)
{
	return m->arch[0] ? m->arch : m->model_type[0] ? m->model_type
						      : "(none)";
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

/* The shape of the text model class a wrapper's text_config leaves to
 * its defaults (struct class_shape), or NULL. */
static const struct class_shape *class_shape(const struct cfg *c,
					     const struct family *f)
{
	if (c->text == c->root || !f->ops->cls.cls)
		return NULL;
	return &f->ops->cls;
}

/* Whether a field is a list. */
static bool list_field(const struct cfg *c, const char *field)
{
	char where[128];
	return cJSON_IsArray(cfg_find(c, field, where, sizeof where));
}

/* Whether the config names a latent rank, kv_lora_rank not null and
 * use_mla not false: MLA, whatever its family. */
static bool latent_named(struct cfg *c)
{
	char where[128];
	const cJSON *k = cfg_find(c, "kv_lora_rank", where, sizeof where);
	const cJSON *u = cfg_find(c, "use_mla", where, sizeof where);
	return k && !cJSON_IsNull(k) && !cJSON_IsFalse(u);
}

/* head_dim: the field, the family's fixed default, or hidden/heads
 * (Zamba's attention runs on the embedding and the hidden state side by
 * side: 2 hidden / heads, unless attention_head_dim says). */
static int read_head_dim(struct cfg *c, struct kv_model *m,
			 const struct family *f)
{
	const struct defaults *d = &f->d;
	uint64_t v;
	int e;
	static const char *const hd_names[] = {"kv_channels",
					       "attention_head_dim", NULL};
	const char *hd = cfg_has(c, "head_dim") ? NULL : cfg_first(c, hd_names);
	bool zamba = f->traits & T_ZAMBA;
	if (hd) {
		if ((e = cfg_uint(c, hd, false, 0, 1, MAX_HEAD_DIM, &v)))
			return e;
	} else if (zamba && !cfg_has(c, "head_dim")) {
		if (2 * m->hidden % m->n_heads) {
			char where[128];
			cfg_absent(c, "attention_head_dim", where,
				   sizeof where);
			return cfg_fail(c, "%s: missing, and twice the hidden "
					"size, %llu, is not a multiple of %u "
					"attention heads", where,
					(unsigned long long)(2 * m->hidden),
					m->n_heads);
		}
		v = 2 * m->hidden / m->n_heads;
	} else if (cfg_has(c, "head_dim") || d->head_dim) {
		if ((e = cfg_uint(c, "head_dim", false, d->head_dim, 1,
				  MAX_HEAD_DIM, &v)))
			return e;
	} else if (m->hidden % m->n_heads && latent_named(c)) {
		/* MLA's heads are qk_nope + qk_rope wide, set with its latent
		 * (GLM-4.7-Flash: hidden 2048, 20 heads) */
		v = 1;
	} else {
		if (m->hidden % m->n_heads) {
			char where[128];
			cfg_absent(c, "head_dim", where, sizeof where);
			return cfg_fail(c, "%s: missing, and hidden size %llu "
					"is not a multiple of %u attention "
					"heads", where,
					(unsigned long long)m->hidden,
					m->n_heads);
		}
		v = m->hidden / m->n_heads;
	}
	m->head_dim = m->head_dim_v = (uint32_t)v;
	return 0;
}

/* The note for a wrapper's text_config that leaves fields of the shape
 * to its class (cs): which were taken. */
static void class_note(const struct cfg *c, struct kv_model *m,
		       const struct class_shape *cs)
{
	bool no_l = !cfg_first(c, NAMES_LAYERS);
	bool no_h = !cfg_first(c, NAMES_HIDDEN),
	     no_q = !cfg_first(c, NAMES_HEADS);
	if (no_l || no_h || no_q) {
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
}

/* The shape every family shares: layers, width, heads, KV heads, head_dim. */
static int read_shape(struct cfg *c, struct kv_model *m,
		      const struct family *f)
{
	bool gpt2 = m->family == KV_FAMILY_GPT2;
	uint64_t v;
	int e;
	const struct class_shape *cs = class_shape(c, f);
	if (cs)
		class_note(c, m, cs);
	if ((e = cfg_uint_any(c, gpt2 ? NAMES_GPT2_LAYERS : NAMES_LAYERS, !cs,
			      cs ? cs->layers : 0, 1, MAX_LAYERS, &v)))
		return e;
	/* LongCat-Flash's num_layers count layers of two attention blocks,
	 * each with its own cache (LongcatFlashConfig: 2 x num_layers) */
	if (f->traits & T_PAIRS && !cfg_has(c, "num_hidden_layers"))
		v *= 2;
	m->n_layers = (uint32_t)v;
	if ((e = cfg_uint_any(c, gpt2 ? NAMES_GPT2_HIDDEN : NAMES_HIDDEN, !cs,
			      cs ? cs->hidden : 0, 1, MAX_HIDDEN, &m->hidden)))
		return e;
	/* Gemma 3's published text configs may leave the heads to the class
	 * (Gemma3TextConfig: 8 heads, 4 KV heads): its reference reads them
	 * so, and the note says so */
	bool gemma3 = f->traits & T_HEADS_8_4;
	const char *hf = cfg_first(c, gpt2 ? NAMES_GPT2_HEADS : NAMES_HEADS);
	if (gemma3 && !hf) {
		v = 8;
		snprintf(m->note, sizeof m->note,
			 "num_attention_heads absent: Gemma3TextConfig's "
			 "defaults taken (8 heads, 4 KV heads)");
	} else if (!hf && f->ops->heads) {
		if ((e = f->ops->heads(c, &v)))
			return e;
	} else if ((e = cfg_uint_any(c, gpt2 ? NAMES_GPT2_HEADS : NAMES_HEADS,
				     !cs, cs ? cs->heads : 0, 1, MAX_HEADS,
				     &v))) {
		return e;
	}
	m->n_heads = (uint32_t)v;

	/* KV heads: the family's own fields (Falcon's flags, DBRX's
	 * attn_config, ...), or the field */
	e = f->ops->kv_heads ? f->ops->kv_heads(c, m, &v) : 1;
	if (e == 1) {
		const char *kf = cfg_first(c, NAMES_KV);
		e = 0;
		if (gemma3 && !hf && !kf)
			v = 4;
		else if (cs && cs->kv_heads && !kf)
			v = cs->kv_heads;
		else
			e = cfg_uint_any(c, NAMES_KV, false, m->n_heads, 1,
					 MAX_HEADS, &v);
	}
	if (e)
		return e;
	m->n_kv_heads = (uint32_t)v;
	if (m->n_heads % m->n_kv_heads) {
		char where[128];
		const char *kf = cfg_first(c, NAMES_KV);
		if (f->ops->kv_field)
			snprintf(where, sizeof where, "%s", f->ops->kv_field);
		else
			cfg_find(c, kf ? kf : NAMES_KV[0], where, sizeof where);
		return cfg_fail(c, "%s: must divide num_attention_heads (%u), "
				"got %u", where, m->n_heads, m->n_kv_heads);
	}

	return read_head_dim(c, m, f);
}

/* The window of sliding layers: the field (or the family's own name for
 * it), or the family's default. */
static int read_window(struct cfg *c, const struct family *f, uint64_t *win)
{
	char where[128];
	if (f->ops->window_field)
		return cfg_uint(c, f->ops->window_field, false, f->d.window, 1,
				MAX_POS, win);
	const cJSON *it = cfg_find(c, "sliding_window", where, sizeof where);
	if (!it) {
		*win = f->d.window;
		return 0;
	}
	if (cJSON_IsNull(it) || cJSON_IsFalse(it)) {
		*win = 0;
		return 0;
	}
	return cfg_check_uint(c, it, where, 1, MAX_POS, win);
}

/* Every n-th layer full, the others of kind `other`, n from field
 * (def when absent; def itself when field is NULL). */
static int nth_full(struct cfg *c, const char *field, uint64_t def,
		    uint32_t n, enum kv_attn other, enum kv_attn *k)
{
	uint64_t every = def;
	int e =
	    field ? cfg_uint(c, field, false, def, 1, MAX_LAYERS, &every) : 0;
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
	int e = cfg_uint_list(c, field, n, 0, 1, v);
	for (uint32_t i = 0; !e && i < n; i++)
		k[i] = v[i] ? on : off;
	free(v);
	return e;
}

/*
 * Hybrids that name their attention layers other ways than layer_types:
 * NemotronH's hybrid_override_pattern ("M-M*...": '*' attention, one
 * character a layer), Bamba's attn_layer_indices (LFM2's full_attn_idxs),
 * MiniMax's attn_type_list (1 softmax attention, 0 linear), the family's
 * own period (Ling's layer_group_size) or full_attention_interval (every
 * interval-th layer; the others linear attention, no KV), Kimi
 * Linear's linear_attn_config (full_attn_layers, or the complement of
 * kda_layers, counted from 1; its KDA layers keep a fixed state). Returns 0
 * when one applied, 1 when none is there, or an error.
 */
static int hybrid_pattern(struct cfg *c, const struct kv_model *m,
			  const struct family *f, enum kv_attn *k)
{
	uint32_t n = m->n_layers;
	char where[128], got[96];
	const cJSON *it =
	    cfg_find(c, "hybrid_override_pattern", where, sizeof where);
	if (it && !cJSON_IsNull(it)) {
		if (!cJSON_IsString(it)) {
			cfg_show(it, got, sizeof got);
			return cfg_fail(c, "%s: must be a string, got %s",
					where, got);
		}
		if (strlen(it->valuestring) != n)
			return cfg_fail(c,
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
	int e = cfg_layer_list(c, "attn_layer_indices", n, 0, mark);
	if (e == 1) /* LFM2's older name, without layer_types */
		e = cfg_layer_list(c, "full_attn_idxs", n, 0, mark);
	struct cfg lin;
	bool kda = false, has = false;
	if (e == 1 &&
	    (e = cfg_nested(c, "linear_attn_config", &lin, &has)) == 0)
		e = has ? cfg_layer_list(&lin, "full_attn_layers", n, 1, mark)
			: 1;
	if (e == 1 && has &&
	    (e = cfg_layer_list(&lin, "kda_layers", n, 1, mark)) == 0)
		kda = true;
	for (uint32_t i = 0; e == 0 && i < n; i++)
		k[i] = mark[i] != kda ? KV_ATTN_FULL : KV_ATTN_NONE;
	free(mark);
	if (e <= 0)
		return e;
	if ((e = cfg_kind(c, "attn_type_list", K_LIST, &it)))
		return e;
	if (it)
		return flag_kinds(c, "attn_type_list", n, KV_ATTN_FULL,
				  KV_ATTN_NONE, k);
	const struct every *a = &f->ops->attn_every;
	if (a->n)
		return nth_full(c, a->field, a->n, n, KV_ATTN_NONE, k);
	if (cfg_has(c, "full_attention_interval"))
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
	int e = cfg_uint(c, "num_kv_shared_layers", false, 0, 0, MAX_LAYERS,
			 &shared);
	if (e)
		return e;
	if (shared >= n) {
		char where[128];
		cfg_find(c, "num_kv_shared_layers", where, sizeof where);
		return cfg_fail(c, "%s: must leave a layer whose K and V the "
				"others share (of %u), got %llu", where, n,
				(unsigned long long)shared);
	}
	for (uint64_t i = n - shared; i < n; i++)
		k[i] = KV_ATTN_NONE;
	bool cla;
	uint64_t every;
	if ((e = cfg_bool(c, "use_cla", false, &cla)) ||
	    (e = cfg_uint(c, "cla_share_factor", false, 1, 1, MAX_LAYERS,
			  &every)))
		return e;
	for (uint32_t i = 0; cla && i < n; i++)
		if (i % every)
			k[i] = KV_ATTN_NONE;
	bool *cross = calloc(n, sizeof *cross);
	if (!cross)
		return KV_ENOMEM;
	e = cfg_layer_list(c, "cross_attention_layers", n, 0, cross);
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
 * The attention kind of every layer: an explicit layer_types list wins;
 * otherwise the family's rule (its kinds hook: Jamba's period, Llama 4's
 * chunked layers, ...; Gemma 2's alternation, EXAONE 4's pattern, every
 * n-th layer full, Qwen's max_window_layers, Mistral's window on every
 * layer).
 */
static int read_kinds(struct cfg *c, struct kv_model *m,
		      const struct family *f, uint64_t window,
		      uint64_t chunk, enum kv_attn *k)
{
	const struct defaults *d = &f->d;
	uint32_t n = m->n_layers;
	int e = cfg_kinds(c, "layer_types", n, k);
	if (e == 1)
		e = cfg_kinds(c, "layers_block_type", n, k);
	if (e == 1 && f->ops->own_kinds)
		e = f->ops->own_kinds(c, n, k);
	if (e == 1 && cfg_has(c, "hybrid_layer_pattern")) /* MiMo-V2 */
		e = flag_kinds(c, "hybrid_layer_pattern", n, KV_ATTN_SLIDING,
			       KV_ATTN_FULL, k);
	if (e <= 0)
		return e;

	for (uint32_t i = 0; i < n; i++)
		k[i] = KV_ATTN_FULL;
	if ((e = hybrid_pattern(c, m, f, k)) <= 0)
		return e;
	if (f->ops->kinds)
		return f->ops->kinds(c, m, window, chunk, k);
	if (!window)
		return 0;
	if (f->ops->swa == SWA_ALTERNATE) {
		for (uint32_t i = 0; i < n; i++)
			k[i] = i % 2 == 0 ? KV_ATTN_SLIDING : KV_ATTN_FULL;
		return 0;
	}
	char where[128];
	const cJSON *pat =
	    cfg_find(c, "sliding_window_pattern", where, sizeof where);
	if (pat && cJSON_IsString(pat)) { /* EXAONE 4: "LLLG", L local */
		size_t len = strlen(pat->valuestring);
		if (!len || strspn(pat->valuestring, "LG") != len)
			return cfg_fail(c, "%s: a pattern of L and G, got "
					"\"%.40s\"", where, pat->valuestring);
		for (uint32_t i = 0; i < n; i++)
			k[i] = pat->valuestring[i % len] == 'L'
				   ? KV_ATTN_SLIDING
				   : KV_ATTN_FULL;
		return 0;
	}
	/* every n-th layer full, the others sliding, as these config
	 * classes make layer_types when a config has none */
	const struct every *full = &f->ops->full_every;
	if (full->n)
		return nth_full(c, full->field, full->n, n, KV_ATTN_SLIDING, k);
	if (f->ops->swa == SWA_NONE)
		return 0;
	if (cfg_has(c, "sliding_window_pattern"))
		return nth_full(c, "sliding_window_pattern", 6, n,
				KV_ATTN_SLIDING, k);
	bool swa = !d->swa_flag;
	uint64_t from = 0;
	if (cfg_has(c, "use_sliding_window") || d->swa_flag) {
		if ((e = cfg_bool(c, "use_sliding_window", !d->swa_flag, &swa)))
			return e;
		if ((e = cfg_uint(c, "max_window_layers", false,
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
	int e = cfg_str(c, field, &str);
	if (e || !str)
		return e ? e : 1;
	for (const char *p = str; *p;) {
		char *end;
		errno = 0;
		unsigned long long li = strtoull(p, &end, 10);
		if (end == p || errno || li >= n || (*end && *end != ',') ||
		    (*end == ',' && !end[1])) {
			char where[128];
			cfg_find(c, field, where, sizeof where);
			return cfg_fail(c,
					"%s: must list layer indices below %u "
					"separated by commas, got \"%.60s\"",
					where, n, str);
		}
		moe[li] = true;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* MoE layers from moe_layer_start_index to moe_layer_end_index (-1: the
 * last), every moe_layer_interval-th (Ernie 4.5's). */
static int moe_range(struct cfg *c, uint32_t n, bool *dense)
{
	uint64_t start, every, end = n - 1;
	char where[128];
	const cJSON *it =
	    cfg_find(c, "moe_layer_end_index", where, sizeof where);
	int e;
	if ((e = cfg_uint(c, "moe_layer_start_index", false, 1, 0, MAX_LAYERS,
			  &start)) ||
	    (e = cfg_uint(c, "moe_layer_interval", false, 1, 1, MAX_LAYERS,
			  &every)) ||
	    (it && !(cJSON_IsNumber(it) && it->valuedouble == -1) &&
	     (e = cfg_uint(c, "moe_layer_end_index", false, n - 1, 0,
			   MAX_LAYERS, &end))))
		return e;
	for (uint32_t i = 0; i < n; i++)
		dense[i] = (i + 1) % every != 0 || i < start || i > end;
	return 0;
}

/* The routed experts: how many, how many a token reads and how wide each
 * is (*expert_ffn); 1 when the model has at most one. */
static int read_experts(struct cfg *c, struct kv_model *m,
			const struct moe_defaults *mo, uint64_t *expert_ffn)
{
	/* the field name differs by family */
	static const char *const expert_names[] = {
		"num_local_experts", "num_experts", "n_routed_experts",
		"moe_num_experts", NULL};
	static const char *const active_names[] = {
		"num_experts_per_tok", "experts_per_token",
		"num_experts_per_token", "moe_topk", "moe_top_k", "moe_k",
		NULL};
	uint64_t ne = 0, na = 0;
	const char *ef = cfg_first(c, expert_names);
	const char *af = cfg_first(c, active_names);
	int e;
	if ((e = cfg_uint_same(c, ef ? ef : expert_names[0], mo->experts, 0,
			       MAX_EXPERTS, &ne)))
		return e;
	if (ne <= 1)
		return 1;
	if ((e = cfg_uint_same(c, af ? af : active_names[0],
			       mo->active ? mo->active : 2, 1, ne, &na)))
		return e;
	m->n_experts = (uint32_t)ne;
	m->n_experts_active = (uint32_t)na;
	*expert_ffn = m->intermediate;
	if (cfg_has(c, "moe_intermediate_size") || mo->expert_ffn)
		return cfg_uint_same(c, "moe_intermediate_size", mo->expert_ffn,
				     1, MAX_FFN, expert_ffn);
	if (cfg_has(c, "expert_ffn_hidden_size")) /* LongCat */
		return cfg_uint(c, "expert_ffn_hidden_size", false, 0, 1,
				MAX_FFN, expert_ffn);
	return 0;
}

/* The shared experts: a count of experts' width (Ling's width apart),
 * or one width in all. */
static int read_shared(struct cfg *c, struct kv_model *m,
		       const struct family *f, uint64_t expert_ffn)
{
	static const char *const shared_names[] = {
		"n_shared_experts", "num_shared_experts",
		"moe_num_shared_experts", "num_shared_expert", NULL};
	const struct moe_defaults *mo = &f->ops->moe;
	const char *sn = cfg_first(c, shared_names);
	bool mixed = true;
	uint64_t v;
	int e;
	if (f->traits & T_MIXED &&
	    (e = cfg_bool(c, "use_mixed_mlp_moe", false, &mixed)))
		return e;
	if (mo->shared || sn) {
		uint64_t w = expert_ffn;
		if ((e = cfg_uint_same(c, sn ? sn : shared_names[0], mo->shared,
				       0, MAX_EXPERTS, &v)) ||
		    (e = cfg_uint(c, "moe_shared_expert_intermediate_size",
				  false, expert_ffn, 1, MAX_FFN, &w)))
			return e;
		v = mixed ? v : 0;
		m->n_shared_experts = (uint32_t)v;
		m->shared_ffn_dim = v * w;
	} else if (f->traits & T_RESIDUAL) {
		/* a dense MLP beside the experts (the residual one) */
		bool res;
		if ((e = cfg_bool(c, "parallel_attn_mlp_res", false, &res)))
			return e;
		m->n_shared_experts = res;
		m->shared_ffn_dim = res ? m->intermediate : 0;
	} else if (cfg_has(c, "share_expert_dim")) { /* Step3 */
		if ((e = cfg_uint(c, "share_expert_dim", false, 0, 0, MAX_FFN,
				  &v)))
			return e;
		m->n_shared_experts = v ? 1 : 0;
		m->shared_ffn_dim = v;
	} else if (f->traits & T_PAIRS) {
		m->n_shared_experts = 1;
		m->shared_ffn_dim = m->intermediate;
	} else if (cfg_has(c, "shared_expert_intermediate_size") ||
		   cfg_has(c, "shared_intermediate_size") || mo->shared_ffn) {
		/* Granite's shared MLP is named shared_intermediate_size */
		const char *sf = cfg_has(c, "shared_intermediate_size")
				     ? "shared_intermediate_size"
				     : "shared_expert_intermediate_size";
		if ((e = cfg_uint(c, sf, false, mo->shared_ffn, 0, MAX_FFN,
				  &v)))
			return e;
		m->n_shared_experts = v ? 1 : 0;
		m->shared_ffn_dim = v;
	} else if (mo->one_shared) {
		m->n_shared_experts = 1;
		m->shared_ffn_dim = expert_ffn;
	}
	return 0;
}

/* Which layers are MoE (routed experts of expert_ffn each), the others
 * dense: by the config's fields, or the family's rule. */
static int moe_layers(struct cfg *c, struct kv_model *m,
		      const struct family *f, uint64_t expert_ffn)
{
	uint32_t n = m->n_layers;
	uint64_t first = 0, every = 1;
	int e = 0;
	bool *dense = calloc(n, sizeof *dense);
	if (!dense)
		return KV_ENOMEM;
	if (list_field(c, "moe_layer_freq")) {
		/* MiMo-V2-Flash's: 1 a MoE layer, 0 a dense one */
		uint32_t *moe = calloc(n, sizeof *moe);
		e = moe ? cfg_uint_list(c, "moe_layer_freq", n, 0, 1, moe)
			: KV_ENOMEM;
		for (uint32_t i = 0; !e && i < n; i++)
			dense[i] = !moe[i];
		free(moe);
	} else if (m->family == KV_FAMILY_DEEPSEEK ||
		   cfg_has(c, "first_k_dense_replace") ||
		   cfg_has(c, "num_dense_layers")) { /* LFM2-MoE's name */
		e = cfg_uint(c,
			     cfg_has(c, "num_dense_layers")
				 ? "num_dense_layers"
				 : "first_k_dense_replace",
			     false, f->ops->moe.first_dense, 0, MAX_LAYERS,
			     &first);
		if (!e)
			e = cfg_uint(c, "moe_layer_freq", false, 1, 1,
				     MAX_LAYERS, &every);
		for (uint32_t i = 0; !e && i < n; i++)
			dense[i] = i < first || i % every != 0;
	} else if (f->traits & T_MOE_RANGE) {
		e = moe_range(c, n, dense);
	} else if (cfg_has(c, "moe_layers_enum")) {
		e = layer_enum(c, "moe_layers_enum", n, dense);
		for (uint32_t i = 0; !e && i < n; i++)
			dense[i] = !dense[i];
	} else if (f->traits & T_PAIRS) {
		for (uint32_t i = 0; i < n; i++)
			dense[i] = i % 2 != 0;
	} else if (f->ops->moe_layers) {
		e = f->ops->moe_layers(c, m, dense);
	} else if (cfg_has(c, "decoder_sparse_step") ||
		   cfg_has(c, "mlp_only_layers")) {
		e = cfg_uint(c, "decoder_sparse_step", false, 1, 1, MAX_LAYERS,
			     &every);
		for (uint32_t i = 0; !e && i < n; i++)
			dense[i] = (i + 1) % every != 0;
		if (!e && (e = cfg_layer_list(c, "mlp_only_layers", n, 0,
					      dense)) == 1)
			e = 0;
	}
	for (uint32_t i = 0; !e && i < n; i++) {
		m->layers[i].mlp = dense[i] ? KV_MLP_DENSE : KV_MLP_MOE;
		m->layers[i].ffn_dim = dense[i] ? m->intermediate : expert_ffn;
	}
	free(dense);
	return e;
}

/*
 * MLP kind and width of each layer: dense, or MoE by the family's rule.
 * DBRX keeps its MLP's fields in ffn_config. LongCat-Flash's layers
 * (two per num_layers) each hold a dense MLP, and the first of each pair
 * also the shortcut MoE: counted as a MoE layer whose shared expert is
 * that dense MLP, the same weights, read by every token.
 */
static int read_mlp(struct cfg *c, struct kv_model *m,
		    const struct family *f)
{
	static const char *const ffn_names[] = {
		"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim",
		"ff_intermediate_size", NULL};
	uint64_t ffn_def = f->d.ffn ? f->d.ffn : 4 * m->hidden, expert_ffn;
	struct cfg ffn;
	bool has_ffn;
	int e;
	if ((e = cfg_nested(c, "ffn_config", &ffn, &has_ffn)))
		return e;
	if (has_ffn)
		c = &ffn;
	if ((e = cfg_uint_any(c, ffn_names, false, ffn_def, 1, MAX_FFN,
			      &m->intermediate)))
		return e;
	/* Molmo's and Qwen's (the first) intermediate_size is their gate
	 * and up fused, and RecurrentGemma's MLP halves its own: twice the
	 * width */
	if (f->traits & T_HALF_FFN)
		m->intermediate = m->intermediate / 2 ? m->intermediate / 2 : 1;
	if (f->ops->ffn && (e = f->ops->ffn(c, m)))
		return e;
	for (uint32_t i = 0; i < m->n_layers; i++) {
		m->layers[i].mlp = KV_MLP_DENSE;
		m->layers[i].ffn_dim = m->intermediate;
	}
	if ((e = read_experts(c, m, &f->ops->moe, &expert_ffn)))
		return e == 1 ? 0 : e;
	if ((e = read_shared(c, m, f, expert_ffn)))
		return e;
	m->expert_bias = m->family == KV_FAMILY_GPT_OSS;
	return moe_layers(c, m, f, expert_ffn);
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
	const cJSON *it = cfg_find(c, "block_configs", where, sizeof where),
		    *el;
	if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != (int)m->n_layers) {
		cfg_show(it, got, sizeof got);
		return cfg_fail(c, "%s: must list one block per layer (%u), "
				"got %s", where, m->n_layers, got);
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
		int e =
		    cJSON_IsObject(el)
			? cfg_nested(&b, ffn ? "ffn" : "attention", &sub, &has)
			: 0;
		if (e)
			return e;
		if (!has) {
			cfg_show(el, got, sizeof got);
			return cfg_fail(c,
					"%s: must be an object with attention "
					"and ffn, got %s",
					what, got);
		}
		char name[64];
		snprintf(name, sizeof name, "%s.%s", what,
			 ffn ? "ffn" : "attention");
		sub.prefix = name;
		bool no_op, linear;
		if ((e = cfg_bool(&sub, "no_op", false, &no_op)) ||
		    (e = cfg_bool(&sub, "replace_with_linear", false, &linear)))
			return e;
		if (ffn) {
			double mult = 0;
			if (!no_op && !linear &&
			    (e = cfg_double(&sub, "ffn_mult", 0, &mult)))
				return e;
			double h = (double)m->hidden;
			uint64_t w = (uint64_t)(2 * mult * h / 3);
			m->layers[i].mlp = KV_MLP_DENSE;
			m->layers[i].ffn_dim = (w + 255) / 256 * 256;
			if (m->layers[i].ffn_dim > MAX_FFN)
				return cfg_fail(c, "%s.ffn_mult: absurd value, "
						"got %g", name, mult);
		} else if (no_op || linear) {
			kinds[i] = KV_ATTN_NONE;
		} else {
			uint64_t g;
			if ((e = cfg_uint(&sub, "n_heads_in_group", true, 0, 1,
					  m->n_heads, &g)))
				return e;
			if (m->n_heads % g)
				return cfg_fail(c, "%s.n_heads_in_group: must "
						"divide the %u attention "
						"heads, got %llu", name,
						m->n_heads,
						(unsigned long long)g);
			kvh[i] = (uint32_t)(m->n_heads / g);
			if ((e = cfg_uint(&sub, "window_length", false, 0, 1,
					  MAX_POS, &win[i])))
				return e;
			if (win[i])
				kinds[i] = KV_ATTN_SLIDING;
		}
		i++;
	}
	return 0;
}

/* The LayerNorm families' norms and biases (struct ln_family), and the
 * block's fields past them a family reads (OPT's). */
static int read_ln_family(struct cfg *c, struct kv_model *m,
			  const struct family *f)
{
	const struct ln_family *ln = f->ops->ln;
	if (!ln)
		return 0;
	bool o = ln->o, mlp = ln->mlp_def;
	int e = 0;
	if ((ln->attn && (e = cfg_bool(c, ln->attn, o, &o))) ||
	    (ln->mlp && (e = cfg_bool(c, ln->mlp, mlp, &mlp))) ||
	    (ln->qkln &&
	     (e = cfg_bool(c, "qk_layernorm", ln->qkln == 2, &m->qk_norm))))
		return e;
	m->layernorm = true;
	m->o_bias = o;
	m->qkv_bias = ln->attn ? o : ln->qkv;
	m->mlp_bias = mlp;
	m->head_bias = ln->head;
	m->parallel_block = ln->parallel;
	m->embed_norm = ln->embed_norm;
	if (ln->pos)
		m->learned_pos = m->max_pos + ln->pos - 1;
	return f->ops->block ? f->ops->block(c, m) : 0;
}

/* LFM2's configs may name the head's tie tie_embedding. */
static const char *tie_name(struct cfg *c)
{
	return !cfg_has(c, "tie_word_embeddings") && cfg_has(c, "tie_embedding")
		   ? "tie_embedding"
		   : "tie_word_embeddings";
}

/* The wrapper's architectures[0] (a wrapper's own class, not its text
 * model's: Llama4ForConditionalGeneration), a list of names or null. */
static int read_arch(struct cfg *c, struct kv_model *m)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(c->root,
							   "architectures");
	const cJSON *first = cJSON_IsArray(a) ? a->child : NULL;
	if (!a || cJSON_IsNull(a) || (cJSON_IsArray(a) && !first))
		return 0;
	if (!first || !cJSON_IsString(first)) {
		char got[64];
		cfg_show(a, got, sizeof got);
		return cfg_fail(c, "architectures: must be a list of class "
				"names, got %s", got);
	}
	snprintf(m->arch, sizeof m->arch, "%s", first->valuestring);
	return 0;
}

/* A vision tower's depth and width (vision_config), what a serving
 * engine sets memory aside by; the ViT-L/14's 24 and 1024 where not
 * given (SGLang's defaults). */
static int read_vision(struct cfg *c, struct kv_model *m)
{
	struct cfg v;
	int e = cfg_nested(c, "vision_config", &v, &m->vision);
	if (e || !m->vision)
		return e;
	if ((e = cfg_u32(&v, "num_hidden_layers", false, 24, 1, MAX_LAYERS,
			 &m->vit_layers)))
		return e;
	if ((e = cfg_uint(&v, "hidden_size", false, 1024, 1, MAX_HIDDEN,
			  &m->vit_hidden)) ||
	    (e = cfg_uint(&v, "intermediate_size", false, 0, 1,
			  MAX_HIDDEN * 64, &m->vit_ffn)) ||
	    (e = cfg_u32(&v, "patch_size", false, 0, 1, 4096,
			 &m->vit_patch)) ||
	    (e = cfg_u32(&v, "image_size", false, 0, 1, 1u << 16,
			 &m->vit_image)) ||
	    (e = cfg_u32(&v, "num_channels", false, 3, 1, 64,
			 &m->vit_channels)))
		return e;
	/* Gemma 3: the tokens of one image, beside vision_config */
	if ((e = cfg_u32(c, "mm_tokens_per_image", false, 0, 1, 1u << 20,
			 &m->mm_tokens)))
		return e;
	return model_vision_read(c, &v, m);
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
	if ((e = cfg_str(c, "model_type", type)))
		return e;
	if (!*type && (cfg_has(c, "n_layer") || cfg_has(c, "n_embd")) &&
	    !cfg_has(c, "ssm_cfg"))
		*type = "gpt2";
	/* Fuyu's text model is Persimmon's, its shape at the top level */
	if (*type && !strcmp(*type, "fuyu"))
		*type = "persimmon";
	snprintf(m->model_type, sizeof m->model_type, "%s",
		 *type ? *type : "");
	if ((e = read_arch(c, m)) || (e = read_vision(c, m)) ||
	    (e = model_audio_read(c, m)))
		return e;
	static const char *const enc_dec[] = {
		"t5", "mt5", "umt5", "longt5", "bart", "mbart", "whisper",
		"marian", "pegasus", "pegasus_x", "led", "blenderbot",
		"blenderbot-small", "m2m_100", "nllb-moe", "plbart", "fsmt",
		"prophetnet", "switch_transformers", "bigbird_pegasus",
		"seamless_m4t", "seamless_m4t_v2", "t5gemma", "encoder-decoder",
		"speech-encoder-decoder", "vision-encoder-decoder", NULL};
	bool ed;
	if ((e = cfg_bool(c, "is_encoder_decoder", false, &ed)))
		return e;
	if (ed || cfg_one_of(m->model_type, enc_dec))
		return cfg_fail(c, "model_type \"%s\": an encoder-decoder: "
				"only decoder-only models are sized here, "
				"whose cache grows with the tokens they "
				"generate", m->model_type);
	static const char *const recurrent[] = {"rwkv", "rwkv5", "rwkv6",
						"rwkv7", "xlstm", NULL};
	if (cfg_one_of(m->model_type, recurrent))
		return cfg_fail(c, "model_type \"%s\": a recurrent model with "
				"no attention layer, so no KV cache: what it "
				"keeps per sequence is a fixed state, whatever "
				"the context", m->model_type);
	bool known;
	*fam = family_of(m->model_type, &known);
	m->family = fam->family;
	if (!known && !(!*type && cfg_has(c, "ssm_cfg")))
		snprintf(m->note, sizeof m->note,
			 "model_type \"%s\" is not a known family; read as a "
			 "Llama-style config",
			 m->model_type);
	return 0;
}

/* rope_scaling, an object or null: its type (rope_type, or the older
 * type) and the factors of the kinds the engine turns (linear, llama3). */
static int read_rope_scaling(struct cfg *c, struct kv_model *m)
{
	char where[128];
	struct cfg sub;
	bool has = false;
	const char *type = NULL;
	const cJSON *it = cfg_find(c, "rope_scaling", where, sizeof where);
	int e;
	m->rope_scaling.factor = 1;
	if (!cJSON_IsObject(it))
		return 0;
	if ((e = cfg_nested(c, "rope_scaling", &sub, &has)) || !has)
		return e;
	if ((e = cfg_str(&sub, "rope_type", &type)) ||
	    (!type && (e = cfg_str(&sub, "type", &type))))
		return e;
	snprintf(m->rope_scaling.type, sizeof m->rope_scaling.type, "%s",
		 type ? type : "");
	uint64_t orig;
	if ((e = cfg_double(&sub, "factor", 1, &m->rope_scaling.factor)) ||
	    (e = cfg_double(&sub, "low_freq_factor", 1,
			    &m->rope_scaling.low_freq)) ||
	    (e = cfg_double(&sub, "high_freq_factor", 4,
			    &m->rope_scaling.high_freq)) ||
	    (e = cfg_uint(&sub, "original_max_position_embeddings", false,
			  8192, 1, MAX_POS, &orig)))
		return e;
	m->rope_scaling.original_max = orig;
	return 0;
}

/*
 * What speculative decoding reads of a config (kvfit --spec-method): the
 * multi-token-prediction layers it ships beside its own, by any family's
 * name for them (DeepSeek's and GLM-4.5's num_nextn_predict_layers,
 * Qwen3.5's mtp_num_hidden_layers; Qwen3-Next names none and ships one, as
 * vLLM's qwen3_next_mtp.py reads it: getattr(config,
 * "num_nextn_predict_layers", 1)), and an EAGLE-3 head's draft_vocab_size,
 * the rows of its own output head (0: none given).
 */
static int read_spec_fields(struct cfg *c, struct kv_model *m)
{
	static const char *const next[] = {"qwen3_next", NULL};
	int e;
	if (!m->n_mtp_layers &&
	    ((e = cfg_u32(c, "num_nextn_predict_layers", false, 0, 0,
			  MAX_LAYERS, &m->n_mtp_layers)) ||
	     (!m->n_mtp_layers &&
	      (e = cfg_u32(c, "mtp_num_hidden_layers", false, 0, 0,
			   MAX_LAYERS, &m->n_mtp_layers)))))
		return e;
	for (const char *const *t = next; !m->n_mtp_layers && *t; t++)
		if (!strcmp(m->model_type, *t))
			m->n_mtp_layers = 1;
	return cfg_uint(c, "draft_vocab_size", false, 0, 1, MAX_VOCAB,
			&m->draft_vocab);
}

/* The rest of a decoder block's fields: vocabulary, positions, the tied
 * head, biases, the MLP's gate, the norms, the rotary base. */
static int read_block(struct cfg *c, struct kv_model *m,
		      const struct family *f)
{
	const struct defaults *d = &f->d;
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
	bool qwen2 = f->traits & T_QKV_BIAS;
	if ((e = cfg_uint_any(c, vocab_names, false, d->vocab, 1, MAX_VOCAB,
			      &m->vocab)) ||
	    (e = cfg_uint_any(c, pos_names, false, d->max_pos, 1, MAX_POS,
			      &m->max_pos)) ||
	    (e = cfg_bool(c, tie_name(c), d->tie, &m->tie_embeddings)))
		return e;
	if (m->family == KV_FAMILY_FALCON) {
		bool b;
		if ((e = cfg_bool(c, "bias", false, &b)) ||
		    (e = cfg_bool(c, "parallel_attn", true,
				  &m->parallel_block)))
			return e;
		m->qkv_bias = m->o_bias = m->mlp_bias = b;
	} else {
		if ((e = cfg_bool(c, "attention_bias", bias_def, &m->o_bias)) ||
		    (e = cfg_bool(c, "mlp_bias",
				  m->family == KV_FAMILY_GPT2 ||
				      f->traits & T_MLP_BIAS,
				  &m->mlp_bias)))
			return e;
		m->qkv_bias = m->o_bias || qwen2;
		if (qwen2)
			m->o_bias = false;
	}
	m->gated_mlp = m->family != KV_FAMILY_GPT2 &&
		       m->family != KV_FAMILY_FALCON &&
		       !(f->traits & T_PLAIN_MLP);
	m->layernorm = m->family == KV_FAMILY_GPT2 ||
		       m->family == KV_FAMILY_FALCON;
	if (m->family == KV_FAMILY_GPT2)
		m->learned_pos = m->max_pos;
	m->attn_gate = f->traits & T_ATTN_GATE;
	if ((e = cfg_bool(c, "attn_output_gate", m->attn_gate, &m->attn_gate)))
		return e;
	m->qk_norm = f->traits & T_QK_NORM ||
		     m->ssm_version == 3; /* Qwen3-Next's, Qwen3.5's */
	if ((e = read_ln_family(c, m, f)))
		return e;
	static const char *const eps_names[] = {
		"rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps",
		"norm_epsilon", NULL};
	const char *eps = cfg_first(c, eps_names);
	if ((e = cfg_double(c, eps ? eps : eps_names[0],
			    m->layernorm ? 1e-5 : 1e-6, &m->norm_eps)) ||
	    (e = cfg_double(c, "rope_theta",
			    m->family == KV_FAMILY_GPT2 ? 0 : 10000,
			    &m->rope_theta)))
		return e;
	if ((e = read_spec_fields(c, m)))
		return e;
	return read_rope_scaling(c, m);
}

/* Multi-head latent attention's fields, where the config has it (*is_mla):
 * the latent's rank and the rotary part, the low-rank query, DeepSeek
 * V3.2's indexer (its key's size, heads and top-k) and the MTP layers. */
static int read_mla(struct cfg *c, struct kv_model *m,
		    const struct family *f, bool *is_mla,
		    uint32_t *index_dim, uint32_t *index_heads,
		    uint64_t *index_topk)
{
	/* MLA: DeepSeek V2 and later (T_MLA: their classes default the
	 * rank); any config that names a latent rank; not one that says
	 * use_mla false or kv_lora_rank null (DeepSeek-OCR's plain heads;
	 * vLLM's is_deepseek_mla) */
	bool use_mla;
	char kw[128];
	const cJSON *klr = cfg_find(c, "kv_lora_rank", kw, sizeof kw);
	int e = cfg_bool(c, "use_mla", true, &use_mla);
	*index_dim = *index_heads = 0;
	*index_topk = 0;
	bool mla = !e && use_mla && !(klr && cJSON_IsNull(klr)) &&
		   (f->traits & T_MLA || cfg_has(c, "kv_lora_rank"));
	*is_mla = mla;
	if (e)
		return e;
	/* Step3's queries go through a normed low rank, share_q_dim */
	if (!mla && (e = cfg_u32(c, "share_q_dim", false, 0, 0, MAX_HEAD_DIM,
				 &m->q_lora_rank)))
		return e;
	/* MiniCPM3: its class's v_head_dim is hidden / heads, and its
	 * reference (Transformers' MiniCPM3Attention) caches every head's K
	 * and V as the latent makes them, not the latent */
	bool minicpm3 = f->traits & T_MLA_FULL;
	if (mla) {
		uint64_t q;
		if ((e = cfg_u32(c, "kv_lora_rank", false, 512, 1, MAX_HEAD_DIM,
				 &m->kv_lora_rank)) ||
		    (e = cfg_u32(c, "qk_rope_head_dim", false, 64, 1,
				 MAX_HEAD_DIM, &m->qk_rope_dim)) ||
		    (e = cfg_u32(c, "qk_nope_head_dim", false, 128, 0,
				 MAX_HEAD_DIM, &m->qk_nope_dim)) ||
		    (e = cfg_u32(c, "v_head_dim", false,
				 minicpm3 ? (uint32_t)(m->hidden / m->n_heads)
					  : 128,
				 1, MAX_HEAD_DIM, &m->v_head_dim)))
			return e;
		m->mla_expanded = minicpm3;
		const cJSON *ql;
		char where[128];
		ql = cfg_find(c, "q_lora_rank", where, sizeof where);
		if (ql && cJSON_IsNull(ql))
			q = 0;
		else if ((e = cfg_uint(c, "q_lora_rank", false, 1536, 1,
				       MAX_HEAD_DIM, &q)))
			return e;
		m->q_lora_rank = (uint32_t)q;
		/* DeepSeek V3.2's sparse attention: an indexer key per token
		 * beside the latent (its reference keeps both) */
		if ((f->traits & T_INDEXER || cfg_has(c, "index_topk")) &&
		    ((e = cfg_u32(c, "index_head_dim", false, 128, 1,
				  MAX_HEAD_DIM, index_dim)) ||
		     (e = cfg_u32(c, "index_n_heads", false, 64, 1, MAX_HEADS,
				  index_heads)) ||
		     (e = cfg_uint(c, "index_topk", false, 2048, 1, MAX_POS,
				   index_topk))))
			return e;
		m->head_dim = m->qk_nope_dim + m->qk_rope_dim;
		m->head_dim_v = m->v_head_dim;
		if ((e = cfg_u32(c, "num_nextn_predict_layers", false, 0, 0,
				 MAX_LAYERS, &m->n_mtp_layers)))
			return e;
	}
	return 0;
}

/*
 * Each layer's attention: its kind (read_kinds(), Nemotron-NAS's
 * block_configs, the layers that keep no KV of their own), its heads, the
 * widths of its K and V (the latent's, under MLA) and its window. kvh[]
 * and win[] take the blocks' own KV heads and windows (0: the model's).
 */
static int read_attention(struct cfg *c, struct kv_model *m,
			  const struct family *f, enum kv_attn *kinds,
			  uint32_t *kvh, uint64_t *win)
{
	uint64_t window = 0, chunk = 0, index_topk = 0;
	uint32_t index_dim = 0, index_heads = 0;
	bool mla = false;
	int e = read_window(c, f, &window);
	if (!e && m->family == KV_FAMILY_LLAMA4)
		e = cfg_uint(c, "attention_chunk_size", false, 8192, 1, MAX_POS,
			     &chunk);
	if (!e)
		e = read_kinds(c, m, f, window, chunk, kinds);
	if (!e && cfg_has(c, "block_configs"))
		e = read_blocks(c, m, false, kinds, kvh, win);
	if (!e)
		e = kv_less_layers(c, m, kinds);
	if (!e)
		e = read_mla(c, m, f, &mla, &index_dim, &index_heads,
			     &index_topk);
	for (uint32_t i = 0; !e && i < m->n_layers; i++) {
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
			if (!window)
				return cfg_fail(c,
						"sliding_window: layer %u "
						"slides but no window is given",
						i);
			l->window = window;
		} else if (l->attn == KV_ATTN_CHUNKED) {
			if (!chunk &&
			    (e = cfg_uint(c, "attention_chunk_size", true, 0, 1,
					  MAX_POS, &chunk)))
				return e;
			l->window = chunk;
		}
	}
	if (!e && f->ops->layer_heads)
		e = f->ops->layer_heads(c, m);
	return e;
}

/*
 * The fixed state the layers keep: the family's Mamba mixers, in the
 * layers that do not attend or beside every attention (Falcon-H1, Zamba),
 * or linear attention's (read_linear()). Zamba's layers share their
 * attention blocks and hold no MLP of their own.
 */
static int read_mixers(struct cfg *c, struct kv_model *m,
		       const struct family *f)
{
	const struct mamba_fields *mf = f->ops->mamba;
	int e = mf ? read_mamba(c, m, mf) : 0;
	if (e)
		return e;
	if (f->traits & T_ZAMBA) {
		m->n_mem_blocks = 1;
		for (uint32_t i = 0; i < m->n_layers; i++)
			m->layers[i].mlp = KV_MLP_NONE;
	}
	for (uint32_t i = 0; mf && i < m->n_layers; i++)
		m->layers[i].ssm = f->traits & T_BESIDE ||
				   m->layers[i].attn == KV_ATTN_NONE;
	if (f->ops->layers && (e = f->ops->layers(c, m)))
		return e;
	return mf ? 0 : read_linear(c, m, f);
}

static int build(struct cfg *c, struct kv_model *m)
{
	int e;
	const char *type;
	struct family f;
	if ((e = identify(c, m, &type, &f)) || (e = read_dtype(c, m, &f)))
		return e;
	if (f.ops->build)
		return f.ops->build(c, m, &f);
	if (!type && cfg_has(c, "ssm_cfg"))
		return build_ssm(c, m, &f);
	if ((e = read_shape(c, m, &f)))
		return e;
	uint32_t n = m->n_layers;
	m->layers = calloc(n, sizeof *m->layers);
	enum kv_attn *kinds = calloc(n, sizeof *kinds);
	uint32_t *kvh = calloc(n, sizeof *kvh); /* per layer, 0: n_kv_heads */
	uint64_t *win = calloc(n, sizeof *win); /* per layer, 0: window */
	bool blocks = cfg_has(c, "block_configs");
	if (!m->layers || !kinds || !kvh || !win)
		e = KV_ENOMEM;
	if (!e)
		e = read_attention(c, m, &f, kinds, kvh, win);
	if (!e)
		e = read_mlp(c, m, &f);
	if (!e && blocks)
		e = read_blocks(c, m, true, kinds, kvh, win);
	for (uint32_t i = 0; !e && blocks && i < n; i++)
		if (kvh[i]) { /* the first attention layer's, as for lists */
			m->n_kv_heads = kvh[i];
			break;
		}
	if (!e)
		e = read_mixers(c, m, &f);
	if (!e)
		e = read_block(c, m, &f);
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
		cfg_show(root, got, sizeof got);
		e = cfg_fail(&c, "not a JSON object, got %s", got);
		goto done;
	}
	static const char *const wrappers[] = {"text_config", "llm_config",
					       "language_config", NULL};
	/* Qwen2.5-Omni and Qwen3-Omni: the thinker's text model answers */
	struct cfg thinker;
	const cJSON *th = NULL;
	bool has;
	if ((e = cfg_nested(&c, "thinker_config", &thinker, &has)) ||
	    (has && (e = cfg_kind(&thinker, "text_config", K_OBJ, &th))))
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
			cfg_show(t, got, sizeof got);
			e = cfg_fail(&c,
				     "%s: must be an object (the text model's "
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

/* What a file that is not a config is, from its first bytes, for the
 * message: a GGUF (llama.cpp's models), a safetensors file (8 bytes of
 * length, then its JSON header), other binary data; NULL for text. */
static const char *not_config(const unsigned char *b, size_t len)
{
	if (kv_gguf_magic(b, len)) /* a file's is read by load_gguf() */
		return "a GGUF file (llama.cpp's model format), which kvtools "
		       "reads by its path, not from stdin";
	if (len >= 9 && b[8] == '{' && !b[6] && !b[7])
		return "a safetensors file (a checkpoint's tensors): give the "
		       "config.json beside it, or their folder";
	size_t i = 0;
	while (i < len && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' ||
			   b[i] == '\r'))
		i++;
	/* JSON with a NUL in it is the parser's to place */
	if ((i == len || (b[i] != '{' && b[i] != '[')) &&
	    memchr(b, 0, len < 4096 ? len : 4096))
		return "binary data, not a JSON config";
	return NULL;
}

int kv_model_from_gguf(const struct kv_gguf *g, const char *path,
		       struct kv_model **out, char *err)
{
	cJSON *cfg = NULL;
	*out = NULL;
	err[0] = '\0';
	int e = kv_gguf_config(g, path, &cfg, err);
	if (e)
		return e;
	char *text = cJSON_PrintUnformatted(cfg);
	cJSON_Delete(cfg);
	if (!text) {
		snprintf(err, KV_ERRLEN, "%.300s: out of memory", path);
		return KV_ENOMEM;
	}
	e = kv_model_parse(text, strlen(text), path, out, err);
	cJSON_free(text);
	if (e)
		return e;
	(*out)->gguf = true;
	size_t nl = strlen((*out)->name);
	if (nl > 5 && !strcmp((*out)->name + nl - 5, ".gguf"))
		(*out)->name[nl - 5] = '\0';
	return 0;
}

/* A GGUF file: its header, then its model. */
static int load_gguf(const char *path, struct kv_model **out, char *err)
{
	struct kv_gguf *g;
	int e = kv_gguf_open(path, &g, err);
	if (!e)
		e = kv_model_from_gguf(g, path, out, err);
	kv_gguf_free(g);
	return e;
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
	if (f != stdin) {
		unsigned char magic[4];
		size_t got = fread(magic, 1, sizeof magic, f);
		if (kv_gguf_magic(magic, got)) {
			fclose(f);
			return load_gguf(path, out, err);
		}
		rewind(f);
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
		const char *what = len ? NULL
				       : not_config((unsigned char *)buf, got);
		len += got;
		if (what) {
			snprintf(err, KV_ERRLEN, "%s: %s", shown, what);
			e = KV_EINVAL;
			break;
		}
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
	if (!e && f != stdin && ((e = read_quant_beside(*out, path, err)) ||
				 (e = read_preprocessor_beside(*out, path,
							       err)))) {
		kv_model_free(*out);
		*out = NULL;
	}
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
