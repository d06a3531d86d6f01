/*
 * engine_ckpt.c - the engine's tensors filled from a checkpoint instead
 * of drawn: each tensor of the shape (engine_plan.c's list) found under
 * its family's names, its shape checked, its values converted from the
 * checkpoint's F32, F16 or BF16 into the engine's weights' type, norms
 * and biases as matrices (a 16-bit tensor of the same type is copied as
 * stored, so a bf16 checkpoint's values are the engine's, bit for bit).
 *
 * GPT-2 (Transformers' GPT2LMHeadModel, with or without "transformer."):
 * wte, wpe, h.L.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
 * mlp.c_proj}, ln_f. Its Conv1D weights are stored [in][out] and are
 * transposed into the engine's [out][in]; c_attn's columns are q, k, v.
 * The head is the embedding, tied.
 * Llama family (LlamaForCausalLM's names, shared by Mistral, Qwen2,
 * SmolLM, TinyLlama): model.embed_tokens, model.layers.L.{input_layernorm,
 * self_attn.{q,k,v,o}_proj, post_attention_layernorm,
 * mlp.{gate,up,down}_proj}, model.norm, lm_head unless tied. Their
 * weights are [out][in] as the engine's; q, k and v are stacked into the
 * engine's one product, their biases (Qwen2) likewise. Qwen3 adds
 * self_attn.{q,k}_norm, a [head_dim] gain each that every head shares.
 * A checkpoint's other tensors (GPT-2's attention masks, an old Llama's
 * rotary tables) are not read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"
#include "kv/safetensors.h"
#include "kvquant.h"

/* Up to three checkpoint tensors stacked into one of the engine's. */
struct source {
	char name[3][128];
	uint64_t rows[3]; /* the engine rows (or values) each fills */
	int n;
	bool conv1d; /* stored [in][out]: transposed into [out][in] */
	bool prefix; /* the first rows of a larger table (positions) */
};

/* The checkpoint tensor of name n: GPT-2's may carry "transformer.". */
static const struct kv_st_tensor *lookup(const struct kv_st *ck,
					 const char *n, bool gpt2)
{
	char full[160];
	const struct kv_st_tensor *t = kv_st_get(ck, n);
	if (!t && gpt2) {
		snprintf(full, sizeof full, "transformer.%s", n);
		t = kv_st_get(ck, full);
	}
	return t;
}

static void one(struct source *src, uint64_t rows, const char *fmt,
		uint32_t l)
{
	snprintf(src->name[src->n], sizeof src->name[0], fmt, l);
	src->rows[src->n++] = rows;
}

/* The names of tensor t in a GPT-2 checkpoint. */
static void gpt2_source(const struct tensor *t, struct source *src)
{
	uint32_t l = t->id >= 16 ? (uint32_t)(t->id / 16 - 1) : 0;
	static const char *const slot[S_COUNT] = {
		[S_LN1_G] = "h.%u.ln_1.weight", [S_LN1_B] = "h.%u.ln_1.bias",
		[S_QKV_W] = "h.%u.attn.c_attn.weight",
		[S_QKV_B] = "h.%u.attn.c_attn.bias",
		[S_O_W] = "h.%u.attn.c_proj.weight",
		[S_O_B] = "h.%u.attn.c_proj.bias",
		[S_LN2_G] = "h.%u.ln_2.weight", [S_LN2_B] = "h.%u.ln_2.bias",
		[S_UP_W] = "h.%u.mlp.c_fc.weight",
		[S_UP_B] = "h.%u.mlp.c_fc.bias",
		[S_DOWN_W] = "h.%u.mlp.c_proj.weight",
		[S_DOWN_B] = "h.%u.mlp.c_proj.bias"};
	static const char *const global[] = {
		[T_WTE] = "wte.weight", [T_WPE] = "wpe.weight",
		[T_LNF_G] = "ln_f.weight", [T_LNF_B] = "ln_f.bias"};
	uint64_t rows = t->transpose ? t->cols : t->rows * t->cols;
	if (t->kind == K_MAT && !t->transpose)
		rows = t->rows;
	one(src, rows, t->id < 16 ? global[t->id] : slot[t->id % 16], l);
	src->conv1d = t->transpose;
	src->prefix = t->id == T_WPE;
}

static void llama_source(const struct shape *s, const struct tensor *t,
			 struct source *src)
{
	uint32_t l = t->id >= 16 ? (uint32_t)(t->id / 16 - 1) : 0;
	uint64_t q = s->att, kv = (uint64_t)s->kv_heads * s->hd;
	const char *p = "model.layers.%u.";
	char f[128];
	switch (t->id < 16 ? t->id : 16 + t->id % 16) {
	case T_WTE: one(src, t->rows, "model.embed_tokens.weight", 0); return;
	case T_LNF_G: one(src, t->cols, "model.norm.weight", 0); return;
	case T_HEAD: one(src, t->cols, "lm_head.weight", 0); return;
	case 16 + S_QKV_W:
	case 16 + S_QKV_B: {
		const char *end = t->id % 16 == S_QKV_W ? "weight" : "bias";
		static const char *const proj[3] = {"q", "k", "v"};
		for (int i = 0; i < 3; i++) {
			snprintf(f, sizeof f, "%sself_attn.%s_proj.%s", p,
				 proj[i], end);
			one(src, i ? kv : q, f, l);
		}
		return;
	}
	}
	static const char *const slot[S_COUNT] = {
		[S_LN1_G] = "input_layernorm.weight",
		[S_O_W] = "self_attn.o_proj.weight",
		[S_O_B] = "self_attn.o_proj.bias",
		[S_LN2_G] = "post_attention_layernorm.weight",
		[S_UP_W] = "mlp.up_proj.weight", [S_UP_B] = "mlp.up_proj.bias",
		[S_GATE_W] = "mlp.gate_proj.weight",
		[S_GATE_B] = "mlp.gate_proj.bias",
		[S_DOWN_W] = "mlp.down_proj.weight",
		[S_DOWN_B] = "mlp.down_proj.bias",
		[S_Q_NORM] = "self_attn.q_norm.weight",
		[S_K_NORM] = "self_attn.k_norm.weight"};
	snprintf(f, sizeof f, "%s%s", p, slot[t->id % 16]);
	one(src, t->transpose ? t->cols : t->rows * t->cols, f, l);
}

/* Element i of a checkpoint tensor, as float. */
static float value(const struct kv_st_tensor *c, uint64_t i)
{
	const unsigned char *b = c->data;
	uint16_t h;
	float f;
	switch (c->dtype) {
	case KV_ST_F32:
		memcpy(&f, b + 4 * i, 4);
		return f;
	case KV_ST_BF16:
		memcpy(&h, b + 2 * i, 2);
		return kv_bf16_to_f32(h);
	default: /* F16: the only other kind checked in */
		memcpy(&h, b + 2 * i, 2);
		return kv_f16_to_f32(h);
	}
}

/* Copies source tensor c, rows x cols of the engine's stored layout,
 * into dst of type wt: 16-bit values of the same type as they are, others
 * through float (rounded to nearest even). */
static void copy(void *dst, enum kv_dtype wt, const struct kv_st_tensor *c,
		 uint64_t rows, uint64_t cols, bool conv1d)
{
	bool raw = (wt == KV_DTYPE_BF16 && c->dtype == KV_ST_BF16) ||
		   (wt == KV_DTYPE_F16 && c->dtype == KV_ST_F16);
	float *f = dst;
	uint16_t *h = dst;
	for (uint64_t r = 0; r < rows; r++)
		for (uint64_t k = 0; k < cols; k++) {
			uint64_t i = conv1d ? k * rows + r : r * cols + k;
			uint64_t o = r * cols + k;
			if (wt == KV_DTYPE_F32)
				f[o] = value(c, i);
			else if (raw)
				memcpy(h + o, (const uint16_t *)c->data + i,
				       sizeof *h);
			else
				h[o] = wt == KV_DTYPE_BF16
					       ? kv_f32_to_bf16(value(c, i))
					       : kv_f32_to_f16(value(c, i));
		}
}

/* The file a refusal of tensor c names: its own, or, for one missing
 * (c NULL), the checkpoint's one file or the index beside its shards. */
static void where(const struct kv_st *ck, const struct kv_st_tensor *c,
		  char *out, size_t n)
{
	const char *p = ck->f[c ? c->file : 0].path;
	const char *slash = strrchr(p, '/');
	if (c || ck->nf == 1)
		snprintf(out, n, "%s", p);
	else
		snprintf(out, n, "%.*smodel.safetensors.index.json",
			 slash ? (int)(slash - p + 1) : 0, p);
}

/* Finds, checks and converts one of the engine's tensors (checks only,
 * when t has no place to fill); a shape that is not the one config (the
 * config's path) gives says so. */
static int fill(const struct shape *s, const struct tensor *t,
		const struct kv_st *ck, const char *config, char *err)
{
	struct source src = {0};
	bool vec = t->kind != K_MAT;
	/* the engine's stored matrix: (out, in) when transposed */
	uint64_t cols = vec ? 1 : t->transpose ? t->rows : t->cols;
	if (s->gpt2)
		gpt2_source(t, &src);
	else
		llama_source(s, t, &src);
	enum kv_dtype wt = s->wt; /* every tensor's, vectors' too */
	char *dst = t->dst ? (char *)*t->dst : NULL;
	for (int i = 0; i < src.n; i++) {
		const struct kv_st_tensor *c = lookup(ck, src.name[i], s->gpt2);
		uint64_t r = src.rows[i];
		char file[512];
		where(ck, c, file, sizeof file);
		if (!c) {
			snprintf(err, KV_ERRLEN, "%s: no tensor %s", file,
				 src.name[i]);
			return KV_EINVAL;
		}
		if (c->dtype != KV_ST_F32 && c->dtype != KV_ST_BF16 &&
		    c->dtype != KV_ST_F16) {
			snprintf(err, KV_ERRLEN, "%s: %s: %s, a dtype the "
				 "engine does not run (F32, F16, BF16)",
				 file, src.name[i], kv_st_dtype_name(c->dtype));
			return KV_EUNSUP;
		}
		/* its shape as the checkpoint must store it */
		uint64_t want0 = vec ? r : src.conv1d ? cols : r;
		uint64_t want1 = src.conv1d ? r : cols;
		bool ok = vec ? c->ndim == 1 && c->shape[0] == want0
			      : c->ndim == 2 && c->shape[1] == want1 &&
					(src.prefix ? c->shape[0] >= want0
						    : c->shape[0] == want0);
		if (!ok) {
			char got[64] = "";
			for (uint32_t d = 0; d < c->ndim && d < 4; d++)
				snprintf(got + strlen(got),
					 sizeof got - strlen(got), "%s%llu",
					 d ? ", " : "",
					 (unsigned long long)c->shape[d]);
			if (vec)
				snprintf(err, KV_ERRLEN, "%s: %s: shape [%s], "
					 "where %.400s gives [%llu]", file,
					 src.name[i], got, config,
					 (unsigned long long)want0);
			else
				snprintf(err, KV_ERRLEN, "%s: %s: shape [%s], "
					 "where %.400s gives [%s%llu, %llu]",
					 file, src.name[i], got, config,
					 src.prefix ? "at least " : "",
					 (unsigned long long)want0,
					 (unsigned long long)want1);
			return KV_EINVAL;
		}
		if (!dst)
			continue;
		if (src.conv1d)
			copy(dst, wt, c, r, cols, true);
		else
			copy(dst, wt, c, vec ? 1 : r, vec ? r : cols, false);
		dst += r * cols * (wt == KV_DTYPE_F32 ? 4 : 2);
	}
	return 0;
}

int kvp_load(const struct shape *s, const struct tensor *t, size_t n,
	     const struct kv_st *ck, const char *config, char *err)
{
	int e = 0;
	for (size_t i = 0; i < n && !e; i++)
		e = fill(s, &t[i], ck, config, err);
	return e;
}

int kv_engine_ckpt_check(const struct kv_model *m, const struct kv_st *ck,
			 char *err)
{
	struct kv_engine_opts o = kv_engine_opts_default();
	struct kv_engine_size sz;
	struct kv_model *eff = NULL;
	struct shape s;
	struct tensor *t = NULL;
	o.ckpt = ck;
	o.max_ctx = 1; /* the shape does not depend on the run */
	int e = kv_engine_model(m, &o, &eff, err);
	if (!e)
		e = kvp_estimate(eff, &o, &s, &sz, err);
	size_t n = e ? 0 : kvp_tensors(&s, NULL, NULL);
	if (!e && !(t = malloc(n * sizeof *t))) {
		snprintf(err, KV_ERRLEN, "out of memory");
		e = KV_ENOMEM;
	}
	if (!e) {
		kvp_tensors(&s, NULL, t);
		e = kvp_load(&s, t, n, ck, m->path, err);
	}
	free(t);
	kv_model_free(eff);
	return e;
}
