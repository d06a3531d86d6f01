/*
 * gguf_cfg.c - a GGUF's metadata as the Hugging Face config.json that the
 * families read (model.c), so that a GGUF is sized by the same rules as
 * the checkpoint it was converted from. One entry per architecture that
 * llama.cpp names (general.architecture) and a family here covers: its
 * model_type, and how llama.cpp's loader (src/llama-model.cpp,
 * load_hparams) reads its keys into layers: which slide and by what
 * pattern (set_swa_pattern), which keep no KV (a hybrid's head_count_kv
 * of 0), what its Mamba mixers hold. An architecture not in the table is refused
 * by name; a key of the wrong type, or of a shape the family cannot hold,
 * is refused naming the key.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "kv/gguf.h"
#include "model_int.h"

/* What one translation works on. */
struct tr {
	const struct kv_gguf *g;
	const char *path; /* for messages */
	const char *arch; /* general.architecture */
	char *err;
	cJSON *root;      /* the config being made */
	uint32_t n;       /* block_count */
	uint64_t *heads, *kvh, *ffn; /* per layer, n each */
	bool kvh_list;    /* head_count_kv was a per-layer array */
};

static int fail(struct tr *t, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(t->err, KV_ERRLEN, "%.300s: ", t->path);
	va_start(ap, fmt);
	vsnprintf(t->err + n, KV_ERRLEN - (size_t)n, fmt, ap);
	va_end(ap);
	return KV_EINVAL;
}

/* "<arch>.<suffix>" into buf. */
static const char *name(const struct tr *t, const char *suffix, char *buf,
			size_t n)
{
	snprintf(buf, n, "%s.%s", t->arch, suffix);
	return buf;
}

static bool is_int(enum kv_gguf_type ty)
{
	return ty == KV_GGUF_U8 || ty == KV_GGUF_I8 || ty == KV_GGUF_U16 ||
	       ty == KV_GGUF_I16 || ty == KV_GGUF_U32 || ty == KV_GGUF_I32 ||
	       ty == KV_GGUF_U64 || ty == KV_GGUF_I64;
}

static bool is_signed(enum kv_gguf_type ty)
{
	return ty == KV_GGUF_I8 || ty == KV_GGUF_I16 || ty == KV_GGUF_I32 ||
	       ty == KV_GGUF_I64;
}

/* What a value is, for a message: "a string", "an array of float32s". */
static const char *what(const struct kv_gguf_kv *x, char *buf, size_t n)
{
	const char *tn = kv_gguf_type_name(x->type);
	if (x->type == KV_GGUF_ARRAY)
		snprintf(buf, n, "an array of %ss", kv_gguf_type_name(x->elem));
	else if (x->type == KV_GGUF_STRING)
		snprintf(buf, n, "a string");
	else if (is_signed(x->type))
		snprintf(buf, n, "an %s of %lld", tn, (long long)x->v.i);
	else if (x->type == KV_GGUF_F32 || x->type == KV_GGUF_F64)
		snprintf(buf, n, "a %s of %g", tn, x->v.f);
	else
		snprintf(buf, n, "a %s of %llu", tn,
			 (unsigned long long)x->v.u);
	return buf;
}

/* One integer in [lo, hi] from a scalar key (full name); *has false and
 * *v = def when absent (an error when need). */
static int key_uint(struct tr *t, const char *key, bool need, uint64_t def,
		    uint64_t lo, uint64_t hi, uint64_t *v, bool *has)
{
	const struct kv_gguf_kv *x = kv_gguf_find(t->g, key);
	char got[96];
	*v = def;
	if (has)
		*has = x != NULL;
	if (!x)
		return need ? fail(t, "%s: missing", key) : 0;
	if (!is_int(x->type) || (is_signed(x->type) && x->v.i < 0))
		return fail(t, "%s: must be a whole number, got %s", key,
			    what(x, got, sizeof got));
	if (x->v.u < lo || x->v.u > hi)
		return fail(t, "%s: must be %llu to %llu, got %llu", key,
			    (unsigned long long)lo, (unsigned long long)hi,
			    (unsigned long long)x->v.u);
	*v = x->v.u;
	return 0;
}

/* The same for "<arch>.<suffix>". */
static int arch_uint(struct tr *t, const char *suffix, bool need,
		     uint64_t def, uint64_t lo, uint64_t hi, uint64_t *v,
		     bool *has)
{
	char k[160];
	return key_uint(t, name(t, suffix, k, sizeof k), need, def, lo, hi, v,
			has);
}

/* A number (any numeric type) from "<arch>.<suffix>"; *has false when
 * absent. */
static int arch_num(struct tr *t, const char *suffix, double *v, bool *has)
{
	char k[160], got[96];
	const struct kv_gguf_kv *x =
	    kv_gguf_find(t->g, name(t, suffix, k, sizeof k));
	*has = x != NULL;
	if (!x)
		return 0;
	if (x->type == KV_GGUF_F32 || x->type == KV_GGUF_F64)
		*v = x->v.f;
	else if (is_int(x->type))
		*v = is_signed(x->type) ? (double)x->v.i : (double)x->v.u;
	else
		return fail(t, "%s: must be a number, got %s", k,
			    what(x, got, sizeof got));
	return 0;
}

/*
 * A per-layer value from "<arch>.<suffix>": one whole number for every
 * layer, or an array of one per layer (llama.cpp's get_key_or_arr). v[]
 * gets n values (def when absent; an error when need). *list: it was an
 * array.
 */
static int arch_layers(struct tr *t, const char *suffix, bool need,
		       uint64_t def, uint64_t hi, uint64_t *v, bool *list)
{
	char k[160], got[96];
	const struct kv_gguf_kv *x =
	    kv_gguf_find(t->g, name(t, suffix, k, sizeof k));
	uint64_t one;
	int e;
	if (list)
		*list = false;
	if (!x || x->type != KV_GGUF_ARRAY) {
		e = key_uint(t, k, need, def, 0, hi, &one, NULL);
		for (uint32_t i = 0; !e && i < t->n; i++)
			v[i] = one;
		return e;
	}
	if (!is_int(x->elem))
		return fail(t, "%s: must be whole numbers, one per layer, got "
			    "%s", k, what(x, got, sizeof got));
	if (x->n != t->n || !x->arr)
		return fail(t, "%s: must list one value per layer (%u), got "
			    "%llu", k, t->n, (unsigned long long)x->n);
	for (uint32_t i = 0; i < t->n; i++) {
		if (x->arr[i] < 0 || x->arr[i] > (double)hi)
			return fail(t, "%s[%u]: must be 0 to %llu, got %g", k,
				    i, (unsigned long long)hi, x->arr[i]);
		v[i] = (uint64_t)x->arr[i];
	}
	if (list)
		*list = true;
	return 0;
}

/* --- the config being made --- */

/* field: v (replacing what an earlier step set). */
static int put_num(struct tr *t, const char *field, double v)
{
	cJSON *x = cJSON_CreateNumber(v);
	if (!x)
		return KV_ENOMEM;
	if (cJSON_GetObjectItemCaseSensitive(t->root, field))
		return cJSON_ReplaceItemInObjectCaseSensitive(t->root, field, x)
			   ? 0
			   : (cJSON_Delete(x), KV_ENOMEM);
	return cJSON_AddItemToObject(t->root, field, x)
		   ? 0
		   : (cJSON_Delete(x), KV_ENOMEM);
}

static int put_str(struct tr *t, const char *field, const char *v)
{
	return cJSON_AddStringToObject(t->root, field, v) ? 0 : KV_ENOMEM;
}

static int put_bool(struct tr *t, const char *field, bool v)
{
	return cJSON_AddBoolToObject(t->root, field, v) ? 0 : KV_ENOMEM;
}

/* field: a list of layer kinds, kind[i] of each. */
static int put_kinds(struct tr *t, const char *field,
		     const char *const *kind)
{
	cJSON *a = cJSON_AddArrayToObject(t->root, field);
	for (uint32_t i = 0; a && i < t->n; i++) {
		cJSON *s = cJSON_CreateString(kind[i]);
		if (!s || !cJSON_AddItemToArray(a, s)) {
			cJSON_Delete(s);
			return KV_ENOMEM;
		}
	}
	return a ? 0 : KV_ENOMEM;
}

/* llama.cpp's set_swa_pattern(p): layer i slides unless it is the last of
 * each p (i % p == p - 1); as layer_types, `slide` the sliding kind. */
static int put_pattern(struct tr *t, uint32_t p, const char *slide)
{
	const char **k = calloc(t->n, sizeof *k);
	if (!k)
		return KV_ENOMEM;
	for (uint32_t i = 0; i < t->n; i++)
		k[i] = i % p < p - 1 ? slide : "full_attention";
	int e = put_kinds(t, "layer_types", k);
	free(k);
	return e;
}

/* The sliding window (required, or def when absent and def != 0), and
 * layer_types by pattern p. */
static int sliding(struct tr *t, uint64_t def, uint32_t p)
{
	uint64_t w;
	int e = arch_uint(t, "attention.sliding_window", !def, def, 1,
			  MAX_POS, &w, NULL);
	if (!e)
		e = put_num(t, "sliding_window", (double)w);
	return e ? e : put_pattern(t, p, "sliding_attention");
}

/* The routed experts: expert_count (> 1) and expert_used_count under the
 * family's names; 0 with *n = 0 when the model has none. */
static int experts(struct tr *t, const char *count_field, uint64_t *n)
{
	uint64_t used;
	bool has;
	int e = arch_uint(t, "expert_count", false, 0, 0, MAX_EXPERTS, n,
			  &has);
	if (e || *n <= 1) {
		*n = 0;
		return e;
	}
	if ((e = arch_uint(t, "expert_used_count", true, 0, 1, *n, &used,
			   NULL)) ||
	    (e = put_num(t, count_field, (double)*n)))
		return e;
	return put_num(t, "num_experts_per_tok", (double)used);
}

/* expert_feed_forward_length as field (required). */
static int expert_ffn(struct tr *t, const char *field)
{
	uint64_t v;
	int e = arch_uint(t, "expert_feed_forward_length", true, 0, 1, MAX_FFN,
			  &v, NULL);
	return e ? e : put_num(t, field, (double)v);
}

/* Qwen's MoE layers: every layer (decoder_sparse_step 1, no dense). */
static int qwen_moe_layers(struct tr *t)
{
	int e = put_num(t, "decoder_sparse_step", 1);
	if (!e && !cJSON_AddArrayToObject(t->root, "mlp_only_layers"))
		e = KV_ENOMEM;
	return e ? e : put_bool(t, "use_sliding_window", false);
}

/* --- the architectures --- */

/* Phi-3's, StarCoder 2's and Mixtral's windows: llama.cpp keeps the whole
 * context ("Phi SWA is currently disabled"; starcoder2 and llama set
 * none). */
static int window_off(struct tr *t)
{
	return cJSON_AddNullToObject(t->root, "sliding_window") ? 0
							       : KV_ENOMEM;
}

static int arch_llama(struct tr *t)
{
	uint64_t n;
	int e = experts(t, "num_local_experts", &n);
	if (!e && n) { /* Mixtral's class; llama.cpp keeps no window */
		cJSON_ReplaceItemInObject(t->root, "model_type",
					  cJSON_CreateString("mixtral"));
		e = window_off(t);
	}
	return e;
}

static int arch_qwen2moe(struct tr *t)
{
	uint64_t n, sh;
	int e = experts(t, "num_experts", &n);
	if (!e)
		e = expert_ffn(t, "moe_intermediate_size");
	if (!e)
		e = arch_uint(t, "expert_shared_feed_forward_length", false, 0,
			      0, MAX_FFN, &sh, NULL);
	if (!e)
		e = put_num(t, "shared_expert_intermediate_size", (double)sh);
	return e ? e : qwen_moe_layers(t);
}

static int arch_qwen3moe(struct tr *t)
{
	uint64_t n;
	int e = experts(t, "num_experts", &n);
	if (!e)
		e = expert_ffn(t, "moe_intermediate_size");
	return e ? e : qwen_moe_layers(t);
}

static int no_window(struct tr *t)
{
	return put_bool(t, "use_sliding_window", false);
}


static int arch_gemma2(struct tr *t)
{
	return sliding(t, 4096, 2);
}

static int arch_gemma3(struct tr *t)
{
	return sliding(t, 0, 6);
}

static int arch_cohere2(struct tr *t)
{
	return sliding(t, 0, 4);
}

static int arch_gpt_oss(struct tr *t)
{
	uint64_t n;
	int e = sliding(t, 0, 2);
	if (!e)
		e = experts(t, "num_local_experts", &n);
	return e ? e : expert_ffn(t, "intermediate_size");
}

/* OLMo 2's loader; OLMo 3 converts as olmo2 with a window, 3 sliding
 * layers and 1 full. */
static int arch_olmo2(struct tr *t)
{
	char k[160];
	if (!kv_gguf_find(t->g, name(t, "attention.sliding_window", k,
				     sizeof k)))
		return 0;
	cJSON_ReplaceItemInObject(t->root, "model_type",
				  cJSON_CreateString("olmo3"));
	return sliding(t, 0, 4);
}

/* Falcon: one K/V head (multi-query, 7B) or groups of them (the new
 * decoder architecture, 40B and 180B). */
static int arch_falcon(struct tr *t)
{
	uint64_t kv = t->kvh[0], h = t->heads[0];
	int e = put_bool(t, "multi_query", kv == 1);
	if (!e)
		e = put_bool(t, "new_decoder_architecture", kv != 1 && kv != h);
	if (!e)
		e = put_num(t, "num_kv_heads", (double)kv);
	return e ? e : put_bool(t, "parallel_attn", true);
}

/* GPT-2's names. */
static int arch_gpt2(struct tr *t)
{
	int e = put_num(t, "n_layer", t->n);
	cJSON *mp = cJSON_GetObjectItemCaseSensitive(t->root,
						     "max_position_embeddings");
	if (!e)
		e = put_num(t, "n_positions", mp ? mp->valuedouble : 1024);
	return e ? e : put_num(t, "n_inner", (double)t->ffn[0]);
}

/* DeepSeek V2, V3 (and the MLA models converted as deepseek2): the latent
 * of kv_lora_rank + the rope dimensions; a head's K of key_length_mla
 * (older files: key_length) less the rope part, its V of
 * value_length_mla (value_length). V3's sigmoid gate (expert_gating_func
 * 2) names V3. */
static int arch_deepseek2(struct tr *t)
{
	uint64_t kvr, qr, rope, kl, vl, gate, n, dense, shared, nextn;
	bool has_q, has_kl;
	char k[160];
	int e;
	if ((e = arch_uint(t, "attention.kv_lora_rank", true, 0, 1,
			   MAX_HEAD_DIM, &kvr, NULL)) ||
	    (e = arch_uint(t, "attention.q_lora_rank", false, 0, 0,
			   MAX_HIDDEN, &qr, &has_q)) ||
	    (e = arch_uint(t, "rope.dimension_count", true, 0, 1,
			   MAX_HEAD_DIM, &rope, NULL)) ||
	    (e = arch_uint(t, "attention.key_length_mla", false, 0, 1,
			   MAX_HEAD_DIM, &kl, &has_kl)))
		return e;
	bool mla = has_kl;
	const char *ks = mla ? "attention.key_length_mla"
			     : "attention.key_length";
	const char *vs = mla ? "attention.value_length_mla"
			     : "attention.value_length";
	if ((e = arch_uint(t, ks, true, 0, 1, MAX_HEAD_DIM, &kl, NULL)) ||
	    (e = arch_uint(t, vs, true, 0, 1, MAX_HEAD_DIM, &vl, NULL)) ||
	    (e = arch_uint(t, "expert_gating_func", false, 1, 0, 3, &gate,
			   NULL)) ||
	    (e = arch_uint(t, "leading_dense_block_count", false, 0, 0,
			   t->n, &dense, NULL)) ||
	    (e = arch_uint(t, "expert_shared_count", false, 0, 0, MAX_EXPERTS,
			   &shared, NULL)) ||
	    (e = arch_uint(t, "nextn_predict_layers", false, 0, 0, t->n,
			   &nextn, NULL)))
		return e;
	if (kl <= rope)
		return fail(t, "%s: %llu, must exceed rope.dimension_count "
			    "(%llu)", name(t, ks, k, sizeof k),
			    (unsigned long long)kl, (unsigned long long)rope);
	if (gate == 2)
		cJSON_ReplaceItemInObject(t->root, "model_type",
					  cJSON_CreateString("deepseek_v3"));
	/* a head's sizes are the latent's fields; its K/V heads, as the
	 * checkpoint's config gives them, every query head's */
	cJSON_DeleteItemFromObject(t->root, "head_dim");
	cJSON_ReplaceItemInObject(t->root, "num_key_value_heads",
				  cJSON_CreateNumber((double)t->heads[0]));
	if ((e = put_num(t, "kv_lora_rank", (double)kvr)) ||
	    (e = has_q ? put_num(t, "q_lora_rank", (double)qr)
		       : (cJSON_AddNullToObject(t->root, "q_lora_rank")
			      ? 0
			      : KV_ENOMEM)) ||
	    (e = put_num(t, "qk_rope_head_dim", (double)rope)) ||
	    (e = put_num(t, "qk_nope_head_dim", (double)(kl - rope))) ||
	    (e = put_num(t, "v_head_dim", (double)vl)) ||
	    (e = put_num(t, "first_k_dense_replace", (double)dense)) ||
	    (e = put_num(t, "n_shared_experts", (double)shared)) ||
	    (e = put_num(t, "num_nextn_predict_layers", (double)nextn)) ||
	    (e = experts(t, "n_routed_experts", &n)))
		return e;
	if (!n)
		return fail(t, "%s: missing; the architecture's layers past "
			    "the leading dense ones are experts",
			    name(t, "expert_count", k, sizeof k));
	return expert_ffn(t, "moe_intermediate_size");
}

/* Llama 4: chunks of 8192 tokens on three layers of four, the fourth
 * full (llama.cpp's n_swa and set_swa_pattern(4)); its experts each
 * expert_feed_forward_length wide, every interleave_moe_layer_step-th
 * layer, the dense layers feed_forward_length. */
static int arch_llama4(struct tr *t)
{
	uint64_t n, step;
	int e = put_num(t, "attention_chunk_size", 8192);
	if (!e)
		e = put_pattern(t, 4, "chunked_attention");
	if (!e)
		e = experts(t, "num_local_experts", &n);
	if (!e)
		e = expert_ffn(t, "intermediate_size");
	if (!e)
		e = put_num(t, "intermediate_size_mlp", (double)t->ffn[0]);
	if (!e)
		e = arch_uint(t, "interleave_moe_layer_step", false, 1, 1,
			      MAX_LAYERS, &step, NULL);
	return e ? e : put_num(t, "interleave_moe_layer_step", (double)step);
}

/* Mamba: no attention, a mixer of ssm.inner_size channels a layer. */
static int arch_mamba(struct tr *t)
{
	uint64_t inner, state, conv, dt;
	int e;
	if ((e = arch_uint(t, "ssm.inner_size", true, 0, 1, MAX_FFN, &inner,
			   NULL)) ||
	    (e = arch_uint(t, "ssm.state_size", true, 0, 1, 1 << 16, &state,
			   NULL)) ||
	    (e = arch_uint(t, "ssm.conv_kernel", true, 0, 1, 1 << 10, &conv,
			   NULL)) ||
	    (e = arch_uint(t, "ssm.time_step_rank", true, 0, 1, MAX_HIDDEN,
			   &dt, NULL)))
		return e;
	if ((e = put_num(t, "intermediate_size", (double)inner)) ||
	    (e = put_num(t, "state_size", (double)state)) ||
	    (e = put_num(t, "conv_kernel", (double)conv)) ||
	    (e = put_num(t, "time_step_rank", (double)dt)))
		return e;
	/* llama.cpp keeps both states, the convolution's and the scan's, in
	 * float32 (llama-memory-recurrent.cpp) */
	cJSON_ReplaceItemInObject(t->root, "torch_dtype",
				  cJSON_CreateString("float32"));
	return 0;
}

/* A Mamba mixer's sizes (ssm.*), its channels a whole number of heads
 * (Mamba-2: ssm.time_step_rank of them) or of the embedding (expand). */
struct ssm {
	uint64_t inner, state, conv, dt, groups, expand;
};

static int ssm_keys(struct tr *t, bool v2, struct ssm *x)
{
	char k[160];
	uint64_t hidden = 0;
	int e;
	cJSON *h = cJSON_GetObjectItemCaseSensitive(t->root, "hidden_size");
	if (h)
		hidden = (uint64_t)h->valuedouble;
	if ((e = arch_uint(t, "ssm.inner_size", true, 0, 1, MAX_FFN,
			   &x->inner, NULL)) ||
	    (e = arch_uint(t, "ssm.state_size", true, 0, 1, 1 << 16, &x->state,
			   NULL)) ||
	    (e = arch_uint(t, "ssm.conv_kernel", true, 0, 1, 1 << 10, &x->conv,
			   NULL)) ||
	    (e = arch_uint(t, "ssm.time_step_rank", true, 0, 1, MAX_HIDDEN,
			   &x->dt, NULL)) ||
	    (e = arch_uint(t, "ssm.group_count", false, 1, 1, 1 << 16,
			   &x->groups, NULL)))
		return e;
	if (v2 && x->inner % x->dt)
		return fail(t, "%s: %llu channels are not %llu heads (its "
			    "time_step_rank) of a whole size",
			    name(t, "ssm.inner_size", k, sizeof k),
			    (unsigned long long)x->inner,
			    (unsigned long long)x->dt);
	x->expand = hidden && x->inner % hidden == 0 ? x->inner / hidden : 0;
	/* llama.cpp keeps the scan's state in float32 */
	return put_str(t, "mamba_ssm_dtype", "float32");
}

/* The expand a family without a field for the channels needs. */
static int whole_expand(struct tr *t, const struct ssm *x)
{
	char k[160];
	if (x->expand)
		return 0;
	return fail(t, "%s: %llu channels, not a whole multiple of the "
		    "embedding length",
		    name(t, "ssm.inner_size", k, sizeof k),
		    (unsigned long long)x->inner);
}

/* Mamba-2: heads of inner / time_step_rank channels. */
static int arch_mamba2(struct tr *t)
{
	struct ssm x;
	int e;
	if ((e = ssm_keys(t, true, &x)) || (e = whole_expand(t, &x)) ||
	    (e = put_num(t, "num_heads", (double)x.dt)) ||
	    (e = put_num(t, "head_dim", (double)(x.inner / x.dt))) ||
	    (e = put_num(t, "n_groups", (double)x.groups)) ||
	    (e = put_num(t, "state_size", (double)x.state)) ||
	    (e = put_num(t, "conv_kernel", (double)x.conv)))
		return e;
	return put_num(t, "expand", (double)x.expand);
}

/* Falcon-H1: attention and a Mamba-2 mixer side by side in every
 * layer. */
static int arch_falcon_h1(struct tr *t)
{
	struct ssm x;
	int e;
	if ((e = ssm_keys(t, true, &x)) ||
	    (e = put_num(t, "mamba_d_ssm", (double)x.inner)) ||
	    (e = put_num(t, "mamba_n_heads", (double)x.dt)) ||
	    (e = put_num(t, "mamba_d_head", (double)(x.inner / x.dt))) ||
	    (e = put_num(t, "mamba_n_groups", (double)x.groups)) ||
	    (e = put_num(t, "mamba_d_state", (double)x.state)))
		return e;
	return put_num(t, "mamba_d_conv", (double)x.conv);
}

/* The layers whose tensors name a router (blk.N.ffn_gate_inp.weight):
 * Jamba's MoE layers as expert_layer_period and _offset; none when the
 * file has no tensors (the family's own layout stands). */
static int jamba_experts(struct tr *t)
{
	uint32_t first = UINT32_MAX, period = 0, count = 0, last = 0;
	char want[64];
	for (uint32_t i = 0; i < t->n; i++) {
		snprintf(want, sizeof want, "blk.%u.ffn_gate_inp.weight", i);
		bool moe = false;
		for (size_t j = 0; j < t->g->n_t && !moe; j++)
			moe = !strcmp(t->g->t[j].name, want);
		if (!moe)
			continue;
		if (first == UINT32_MAX)
			first = i;
		else if (!period)
			period = i - first;
		else if (i - last != period)
			return fail(t, "blk.%u.ffn_gate_inp.weight: its experts' "
				    "layers are not every %u-th", i, period);
		last = i;
		count++;
	}
	if (!count)
		return 0;
	if (!period)
		period = t->n;
	int e = put_num(t, "expert_layer_period", period);
	return e ? e : put_num(t, "expert_layer_offset", first % period);
}

/* Jamba: attention on the layers with K/V heads, a Mamba mixer on the
 * others (head_count_kv 0, as llama.cpp marks them). */
static int arch_jamba(struct tr *t)
{
	struct ssm x;
	uint64_t n;
	const char **k = calloc(t->n, sizeof *k);
	if (!k)
		return KV_ENOMEM;
	for (uint32_t i = 0; i < t->n; i++)
		k[i] = t->kvh[i] ? "attention" : "mamba";
	int e = put_kinds(t, "layer_types", k);
	free(k);
	if (e || (e = ssm_keys(t, false, &x)) || (e = whole_expand(t, &x)) ||
	    (e = put_num(t, "mamba_d_state", (double)x.state)) ||
	    (e = put_num(t, "mamba_d_conv", (double)x.conv)) ||
	    (e = put_num(t, "mamba_expand", (double)x.expand)) ||
	    (e = put_num(t, "mamba_dt_rank", (double)x.dt)) ||
	    (e = experts(t, "num_experts", &n)))
		return e;
	return jamba_experts(t);
}

/* The architectures mapped: llama.cpp's name, the model_type and class
 * the families know it by, whether its layers attend, and what it reads
 * past the shape every one shares. */
static const struct gguf_arch {
	const char *arch, *model_type, *cls;
	enum { NONE, ALL, SOME } attends; /* SOME: head_count_kv 0 marks a
					     layer without */
	int (*more)(struct tr *t);
} ARCHS[] = {
	{"llama", "llama", "LlamaForCausalLM", ALL, arch_llama},
	{"llama4", "llama4_text", "Llama4ForCausalLM", ALL, arch_llama4},
	{"mistral3", "mistral3", "Mistral3ForConditionalGeneration", ALL,
	 NULL},
	{"qwen2", "qwen2", "Qwen2ForCausalLM", ALL, no_window},
	{"qwen2moe", "qwen2_moe", "Qwen2MoeForCausalLM", ALL, arch_qwen2moe},
	{"qwen3", "qwen3", "Qwen3ForCausalLM", ALL, no_window},
	{"qwen3moe", "qwen3_moe", "Qwen3MoeForCausalLM", ALL, arch_qwen3moe},
	{"gemma", "gemma", "GemmaForCausalLM", ALL, NULL},
	{"gemma2", "gemma2", "Gemma2ForCausalLM", ALL, arch_gemma2},
	{"gemma3", "gemma3_text", "Gemma3ForCausalLM", ALL, arch_gemma3},
	{"phi3", "phi3", "Phi3ForCausalLM", ALL, window_off},
	{"deepseek2", "deepseek_v2", "DeepseekV2ForCausalLM", ALL,
	 arch_deepseek2},
	{"gpt-oss", "gpt_oss", "GptOssForCausalLM", ALL, arch_gpt_oss},
	{"falcon", "falcon", "FalconForCausalLM", ALL, arch_falcon},
	{"gpt2", "gpt2", "GPT2LMHeadModel", ALL, arch_gpt2},
	{"starcoder2", "starcoder2", "Starcoder2ForCausalLM", ALL,
	 window_off},
	{"command-r", "cohere", "CohereForCausalLM", ALL, NULL},
	{"cohere2", "cohere2", "Cohere2ForCausalLM", ALL, arch_cohere2},
	{"olmo", "olmo", "OlmoForCausalLM", ALL, NULL},
	{"olmo2", "olmo2", "Olmo2ForCausalLM", ALL, arch_olmo2},
	{"granite", "granite", "GraniteForCausalLM", ALL, NULL},
	{"glm4", "glm4", "Glm4ForCausalLM", ALL, NULL},
	{"mamba", "mamba", "MambaForCausalLM", NONE, arch_mamba},
	{"mamba2", "mamba2", "Mamba2ForCausalLM", NONE, arch_mamba2},
	{"jamba", "jamba", "JambaForCausalLM", SOME, arch_jamba},
	{"falcon-h1", "falcon_h1", "FalconH1ForCausalLM", ALL, arch_falcon_h1},
};

static const struct gguf_arch *arch_named(const char *a)
{
	for (size_t i = 0; i < sizeof ARCHS / sizeof *ARCHS; i++)
		if (!strcmp(ARCHS[i].arch, a))
			return &ARCHS[i];
	return NULL;
}

/* The names mapped, for a refusal. */
static const char *arch_list(char *buf, size_t n)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof ARCHS / sizeof *ARCHS && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? ", " : "",
				       ARCHS[i].arch);
	return buf;
}

/* The vocabulary: <arch>.vocab_size, else tokenizer.ggml.tokens' count. */
static int vocab(struct tr *t, uint64_t *v)
{
	bool has;
	char got[96];
	int e = arch_uint(t, "vocab_size", false, 0, 1, MAX_VOCAB, v, &has);
	if (e || has)
		return e;
	const struct kv_gguf_kv *x =
	    kv_gguf_find(t->g, "tokenizer.ggml.tokens");
	if (!x)
		return fail(t, "tokenizer.ggml.tokens: missing, and no "
			    "%s.vocab_size: the vocabulary's size is unknown",
			    t->arch);
	if (x->type != KV_GGUF_ARRAY || x->elem != KV_GGUF_STRING)
		return fail(t, "tokenizer.ggml.tokens: must be an array of "
			    "strings, got %s", what(x, got, sizeof got));
	if (!x->n || x->n > MAX_VOCAB)
		return fail(t, "tokenizer.ggml.tokens: %llu tokens, must be 1 "
			    "to %llu", (unsigned long long)x->n,
			    (unsigned long long)MAX_VOCAB);
	*v = x->n;
	return 0;
}

/* A per-layer list's value where it is not 0 (all alike); *v 0 when every
 * entry is 0. Error when they differ. */
static int uniform(struct tr *t, const char *suffix, const uint64_t *a,
		   uint64_t *v)
{
	char k[160];
	*v = 0;
	for (uint32_t i = 0; i < t->n; i++) {
		if (!a[i])
			continue;
		if (*v && a[i] != *v)
			return fail(t, "%s: layers of %llu and of %llu; "
				    "per-layer sizes that differ are not "
				    "mapped for %s", name(t, suffix, k,
							  sizeof k),
				    (unsigned long long)*v,
				    (unsigned long long)a[i], t->arch);
		*v = a[i];
	}
	return 0;
}

/* rope.scaling.*: its type (linear, yarn, longrope; none or absent: no
 * scaling), factor and original context, as rope_scaling. */
static int rope_scaling(struct tr *t)
{
	char k[160], got[96];
	double f = 1;
	bool has;
	uint64_t orig;
	const struct kv_gguf_kv *x =
	    kv_gguf_find(t->g, name(t, "rope.scaling.type", k, sizeof k));
	if (!x)
		return 0;
	if (x->type != KV_GGUF_STRING || !x->str)
		return fail(t, "%s: must be a string, got %s", k,
			    what(x, got, sizeof got));
	if (!strcmp(x->str, "none"))
		return 0;
	int e = arch_num(t, "rope.scaling.factor", &f, &has);
	if (!e)
		e = arch_uint(t, "rope.scaling.original_context_length", false,
			      0, 1, MAX_POS, &orig, &has);
	if (e)
		return e;
	cJSON *r = cJSON_AddObjectToObject(t->root, "rope_scaling");
	if (!r || !cJSON_AddStringToObject(r, "rope_type", x->str) ||
	    !cJSON_AddNumberToObject(r, "factor", f) ||
	    (has && !cJSON_AddNumberToObject(
			r, "original_max_position_embeddings", (double)orig)))
		return KV_ENOMEM;
	return 0;
}

/* The shape every architecture shares, as the config's fields. */
static int shape(struct tr *t, const struct gguf_arch *a)
{
	uint64_t n, hidden, ctx, h, kv, ffn, kl, vl, voc;
	bool has_kl, has_vl, has;
	double d;
	char k[160];
	int e;
	if ((e = arch_uint(t, "block_count", true, 0, 1, MAX_LAYERS, &n,
			   NULL)) ||
	    (e = arch_uint(t, "embedding_length", true, 0, 1, MAX_HIDDEN,
			   &hidden, NULL)) ||
	    (e = arch_uint(t, "context_length", true, 0, 1, MAX_POS, &ctx,
			   NULL)))
		return e;
	t->n = (uint32_t)n;
	t->heads = calloc(n, sizeof *t->heads);
	t->kvh = calloc(n, sizeof *t->kvh);
	t->ffn = calloc(n, sizeof *t->ffn);
	if (!t->heads || !t->kvh || !t->ffn)
		return KV_ENOMEM;
	if ((e = arch_layers(t, "attention.head_count", a->attends, 0,
			     MAX_HEADS, t->heads, NULL)) ||
	    (e = uniform(t, "attention.head_count", t->heads, &h)) ||
	    (e = arch_layers(t, "feed_forward_length", false, 0, MAX_FFN,
			     t->ffn, NULL)) ||
	    (e = uniform(t, "feed_forward_length", t->ffn, &ffn)) ||
	    (e = vocab(t, &voc)))
		return e;
	/* head_count_kv defaults to head_count, layer by layer */
	memcpy(t->kvh, t->heads, n * sizeof *t->kvh);
	if ((e = arch_layers(t, "attention.head_count_kv", false, h,
			     MAX_HEADS, t->kvh, &t->kvh_list)) ||
	    (e = uniform(t, "attention.head_count_kv", t->kvh, &kv)))
		return e;
	if (a->attends && !h)
		return fail(t, "%s: no layer has attention heads",
			    name(t, "attention.head_count", k, sizeof k));
	for (uint32_t i = 0; a->attends && i < n; i++) {
		if (a->attends == SOME && (!t->kvh[i] || !t->heads[i]))
			continue;
		if (!t->kvh[i] || !t->heads[i])
			return fail(t, "%s: layer %u keeps no K and V, which "
				    "%s's layers all do",
				    name(t, "attention.head_count_kv", k,
					 sizeof k),
				    i, t->arch);
		if (t->heads[i] % t->kvh[i])
			return fail(t, "%s: %llu K/V heads must divide the "
				    "%llu attention heads (layer %u)",
				    name(t, "attention.head_count_kv", k,
					 sizeof k),
				    (unsigned long long)t->kvh[i],
				    (unsigned long long)t->heads[i], i);
	}
	uint64_t hd = h ? hidden / h : 0;
	if ((e = arch_uint(t, "attention.key_length", false, hd, 1,
			   MAX_HEAD_DIM, &kl, &has_kl)) ||
	    (e = arch_uint(t, "attention.value_length", false, kl, 1,
			   MAX_HEAD_DIM, &vl, &has_vl)))
		return e;
	if (a->attends && !has_kl && hidden % h)
		return fail(t, "%s: missing, and the embedding length %llu is "
			    "not a multiple of %llu heads",
			    name(t, "attention.key_length", k, sizeof k),
			    (unsigned long long)hidden,
			    (unsigned long long)h);
	if (a->attends && vl != kl && a->more != arch_deepseek2)
		return fail(t, "%s: %llu, and key_length %llu: K and V heads "
			    "of different sizes are not mapped for %s",
			    name(t, "attention.value_length", k, sizeof k),
			    (unsigned long long)vl, (unsigned long long)kl,
			    t->arch);
	cJSON *arr = cJSON_AddArrayToObject(t->root, "architectures");
	cJSON *cls = cJSON_CreateString(a->cls);
	if (!arr || !cls || !cJSON_AddItemToArray(arr, cls)) {
		cJSON_Delete(cls);
		return KV_ENOMEM;
	}
	if ((e = put_str(t, "model_type", a->model_type)) ||
	    (e = put_str(t, "torch_dtype", "float16")) ||
	    (e = put_num(t, "num_hidden_layers", (double)n)) ||
	    (e = put_num(t, "hidden_size", (double)hidden)) ||
	    (e = put_num(t, "max_position_embeddings", (double)ctx)) ||
	    (e = put_num(t, "vocab_size", (double)voc)) ||
	    (ffn && (e = put_num(t, "intermediate_size", (double)ffn))))
		return e;
	if (a->attends &&
	    ((e = put_num(t, "num_attention_heads", (double)h)) ||
	     (e = put_num(t, "num_key_value_heads", (double)kv)) ||
	     (e = put_num(t, "head_dim", (double)kl))))
		return e;
	if ((e = arch_num(t, "rope.freq_base", &d, &has)) ||
	    (has && (e = put_num(t, "rope_theta", d))) ||
	    (e = arch_num(t, "attention.layer_norm_rms_epsilon", &d, &has)) ||
	    (has && (e = put_num(t, "rms_norm_eps", d))) ||
	    (e = arch_num(t, "attention.layer_norm_epsilon", &d, &has)) ||
	    (has && (e = put_num(t, "layer_norm_epsilon", d))))
		return e;
	if ((e = rope_scaling(t)))
		return e;
	/* the head: its own matrix, or the embedding's (no output.weight) */
	bool out = false;
	for (size_t i = 0; i < t->g->n_t && !out; i++)
		out = !strcmp(t->g->t[i].name, "output.weight");
	if (t->g->n_t && (e = put_bool(t, "tie_word_embeddings", !out)))
		return e;
	return 0;
}

int kv_gguf_config(const struct kv_gguf *g, const char *path, cJSON **out,
		   char *err)
{
	struct tr t = {.g = g, .path = path, .err = err};
	char got[96], list[512];
	int e;
	*out = NULL;
	const struct kv_gguf_kv *x = kv_gguf_find(g, "general.architecture");
	if (!x)
		return fail(&t, "general.architecture: missing");
	if (x->type != KV_GGUF_STRING || !x->str)
		return fail(&t, "general.architecture: must be a string, got "
			    "%s", what(x, got, sizeof got));
	t.arch = x->str;
	const struct gguf_arch *a = arch_named(t.arch);
	if (!a)
		return fail(&t, "general.architecture: \"%.60s\" is not an "
			    "architecture kvtools maps (it maps %s)", t.arch,
			    arch_list(list, sizeof list));
	if (!(t.root = cJSON_CreateObject()))
		return KV_ENOMEM;
	e = shape(&t, a);
	if (!e && a->more)
		e = a->more(&t);
	free(t.heads);
	free(t.kvh);
	free(t.ffn);
	if (e) {
		cJSON_Delete(t.root);
		if (e == KV_ENOMEM && !err[0])
			snprintf(err, KV_ERRLEN, "%.300s: out of memory", path);
		return e;
	}
	*out = t.root;
	return 0;
}
