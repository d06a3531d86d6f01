/*
 * engine_plan.c - the engine before it runs: the shape a model and its
 * options give (fill_shape), the tensors and scratch pieces that shape
 * lays out, whether the engine runs the model at all (kv_engine_model's
 * checks and the effective model it builds), and every byte a run would
 * allocate (kv_engine_estimate), with what would fit in less memory.
 * Arithmetic only: nothing here allocates an engine, so each number is
 * testable on its own.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"

/* --- sizes --- */

static int fill_shape(const struct kv_model *m, const struct kv_engine_opts *o,
		      struct shape *s)
{
	const struct kv_layer *l = &m->layers[0];
	memset(s, 0, sizeof *s);
	s->gpt2 = m->family == KV_FAMILY_GPT2;
	s->dim = m->hidden;
	s->ffn = l->ffn_dim;
	s->vocab = m->vocab;
	s->layers = m->n_layers;
	s->heads = l->q_heads;
	s->kv_heads = l->kv_heads;
	s->hd = l->head_dim_k;
	s->group = s->heads / s->kv_heads;
	s->qkv = (uint64_t)(s->heads + 2 * s->kv_heads) * s->hd;
	s->att = (uint64_t)s->heads * s->hd;
	s->users = o->users;
	s->ctx = o->max_ctx;
	s->chunk = o->max_chunk ? o->max_chunk : o->max_ctx;
	if (kv_mul(s->users, s->chunk, &s->rows))
		return KV_ERANGE;
	s->pos_rows = 0;
	if (s->gpt2)
		s->pos_rows = m->max_pos > s->ctx ? m->max_pos : s->ctx;
	s->tied = s->gpt2 || m->tie_embeddings;
	s->qkv_bias = m->qkv_bias;
	s->o_bias = m->o_bias;
	s->mlp_bias = m->mlp_bias;
	s->qk_norm = m->qk_norm;
	s->threads = o->threads ? o->threads : 1;
	/* a decode step of few KV heads is split over positions, so every
	 * thread has a part of the cache to read */
	uint64_t base = s->users * s->kv_heads;
	s->nsplit = base >= 2ULL * s->threads ? 1
			: (uint32_t)((2ULL * s->threads + base - 1) / base);
	/* about eight query rows share each K and V row a chunk reads */
	s->qblock = s->group >= 8 ? 1 : 8 / s->group;
	s->f.k = o->k_dtype;
	s->f.v = o->v_dtype;
	uint64_t kr, vr;
	if (kv_dtype_row_bytes(s->f.k, s->hd, &kr) ||
	    kv_dtype_row_bytes(s->f.v, s->hd, &vr) || kr > UINT32_MAX ||
	    vr > UINT32_MAX)
		return KV_EINVAL;
	s->f.krow = (uint32_t)kr;
	s->f.vrow = (uint32_t)vr;
	s->tmprow = kr > vr ? kr : vr;
	s->cache = o->cache;
	s->bs = o->block_size;
	s->tile = s->bs ? s->bs * (ATTN_TILE > s->bs ? ATTN_TILE / s->bs : 1)
			: 0;
	if (s->bs && s->tile > kv_paged_blocks_for(s->ctx, s->bs) * s->bs)
		s->tile = kv_paged_blocks_for(s->ctx, s->bs) * s->bs;
	s->paged = o->paged && o->cache;
	s->prefix = o->prefix && s->paged;
	s->pool = 0;
	if (s->paged)
		s->pool = o->pool_blocks
				  ? o->pool_blocks
				  : s->users * kv_paged_blocks_for(s->ctx, s->bs);
	s->eps = m->norm_eps;
	s->theta = m->rope_theta > 0 ? m->rope_theta : 10000;
	s->rope_kind = !strcmp(m->rope_scaling.type, "linear")   ? 1
		       : !strcmp(m->rope_scaling.type, "llama3") ? 2
								 : 0;
	s->rope_factor = m->rope_scaling.factor;
	s->rope_low = m->rope_scaling.low_freq;
	s->rope_high = m->rope_scaling.high_freq;
	s->rope_orig = m->rope_scaling.original_max;
	s->wt = o->weights_dtype;
	s->conv_k = s->dim > s->att ? s->dim : s->att;
	s->conv_k = s->ffn > s->conv_k ? s->ffn : s->conv_k;
	if (l->attn == KV_ATTN_MLA) {
		s->mla = true;
		s->hd = m->qk_rope_dim; /* what the rope table turns */
		s->qkv = (uint64_t)s->heads * (m->qk_nope_dim + m->qk_rope_dim);
		s->att = (uint64_t)s->heads * m->v_head_dim;
		s->qkv_bias = false; /* as DeepSeek's projections */
		kv_mla_dims_of(m, s->users, s->ctx, s->chunk, s->threads,
			       s->nsplit, &s->md);
		return kv_mla_scratch_floats(&s->md, &s->mla_floats);
	}
	return 0;
}

/* The engine's tensors in order; dst pointers into e (NULL: sizes only). */
size_t kvp_tensors(const struct shape *s, struct kv_engine *e,
		   struct tensor *t)
{
	size_t n = 0;
#define ADD(i, k, r, c, tr, d)                                         \
	do {                                                           \
		if (t)                                                 \
			t[n] = (struct tensor){(i), (k), (r), (c), (tr), \
					       e ? (d) : NULL};        \
		n++;                                                   \
	} while (0)
	ADD(T_WTE, K_MAT, s->vocab, s->dim, false, &e->wte);
	if (s->gpt2)
		ADD(T_WPE, K_MAT, s->pos_rows, s->dim, false, &e->wpe);
	ADD(T_LNF_G, K_GAIN, 1, s->dim, false, &e->lnf_g);
	if (s->gpt2)
		ADD(T_LNF_B, K_BIAS, 1, s->dim, false, &e->lnf_b);
	if (!s->tied)
		ADD(T_HEAD, K_MAT, s->dim, s->vocab, true, &e->head);
	for (uint32_t l = 0; l < s->layers; l++) {
		uint64_t b = 16 * ((uint64_t)l + 1);
		struct layer_w *w = e ? &e->lw[l] : NULL;
		ADD(b + S_LN1_G, K_GAIN, 1, s->dim, false, &w->ln1_g);
		if (s->gpt2)
			ADD(b + S_LN1_B, K_BIAS, 1, s->dim, false, &w->ln1_b);
		if (s->mla) {
			/* the ones linear() reads stored [out][in], as
			 * every projection here; kv_b_proj as written,
			 * [in][out], for the heads' own products */
			struct kv_mla_tensor mt[KV_MLA_TENSORS];
			size_t nm = kv_mla_tensors(&s->md, w ? &w->mla : NULL,
						   mt);
			for (size_t i = 0; i < nm; i++)
				ADD(KV_MLA_ID(l, mt[i].slot),
				    mt[i].gain ? K_GAIN : K_MAT, mt[i].rows,
				    mt[i].cols, mt[i].linear, mt[i].dst);
		} else {
			ADD(b + S_QKV_W, K_MAT, s->dim, s->qkv, true,
			    &w->w_qkv);
		}
		if (s->qkv_bias)
			ADD(b + S_QKV_B, K_BIAS, 1, s->qkv, false, &w->b_qkv);
		if (s->qk_norm) {
			ADD(b + S_Q_NORM, K_GAIN, 1, s->hd, false, &w->q_norm);
			ADD(b + S_K_NORM, K_GAIN, 1, s->hd, false, &w->k_norm);
		}
		ADD(b + S_O_W, K_MAT, s->att, s->dim, true, &w->w_o);
		if (s->o_bias)
			ADD(b + S_O_B, K_BIAS, 1, s->dim, false, &w->b_o);
		ADD(b + S_LN2_G, K_GAIN, 1, s->dim, false, &w->ln2_g);
		if (s->gpt2)
			ADD(b + S_LN2_B, K_BIAS, 1, s->dim, false, &w->ln2_b);
		ADD(b + S_UP_W, K_MAT, s->dim, s->ffn, true, &w->w_up);
		if (s->mlp_bias)
			ADD(b + S_UP_B, K_BIAS, 1, s->ffn, false, &w->b_up);
		if (!s->gpt2) {
			ADD(b + S_GATE_W, K_MAT, s->dim, s->ffn, true,
			    &w->w_gate);
			if (s->mlp_bias)
				ADD(b + S_GATE_B, K_BIAS, 1, s->ffn, false,
				    &w->b_gate);
		}
		ADD(b + S_DOWN_W, K_MAT, s->ffn, s->dim, true, &w->w_down);
		if (s->mlp_bias)
			ADD(b + S_DOWN_B, K_BIAS, 1, s->dim, false,
			    &w->b_down);
	}
#undef ADD
	return n;
}

/* Floats of n rounded up to the alignment; 0 or KV_ERANGE. */
int kvp_padded(uint64_t n, uint64_t *out)
{
	if (n > UINT64_MAX - ALIGN_F)
		return KV_ERANGE;
	*out = (n + ALIGN_F - 1) / ALIGN_F * ALIGN_F;
	return 0;
}

/* Adds a x b floats (padded) to *acc; 0 or KV_ERANGE. */
static int add_floats(uint64_t *acc, uint64_t a, uint64_t b)
{
	uint64_t n;
	int e;
	if ((e = kv_mul(a, b, &n)) || (e = kvp_padded(n, &n)))
		return e;
	return kv_add(*acc, n, acc);
}

int kvp_tensor_floats(const struct shape *s, const struct tensor *t,
		      uint64_t *out)
{
	int e = kv_mul(t->rows, t->cols, out);
	if (!e && s->wt != KV_DTYPE_F32)
		*out = *out / 2 + *out % 2;
	return e || t->kind != K_MAT ? e : kvp_padded(*out, out);
}

void kvp_place(const struct shape *s, const struct tensor *t, size_t n,
	       float *w)
{
	for (int vec = 0; vec < 2; vec++)
		for (size_t i = 0; i < n; i++) {
			uint64_t f = 0;
			if ((t[i].kind != K_MAT) != vec)
				continue;
			*t[i].dst = w;
			kvp_tensor_floats(s, &t[i], &f);
			w += f;
		}
}

static int weight_floats(const struct shape *s, uint64_t *out)
{
	size_t n = kvp_tensors(s, NULL, NULL);
	struct tensor *t = malloc(n * sizeof *t);
	int e = 0;
	if (!t)
		return KV_ENOMEM;
	kvp_tensors(s, NULL, t);
	*out = 0;
	for (size_t i = 0; i < n && !e; i++) {
		uint64_t f;
		if (!(e = kvp_tensor_floats(s, &t[i], &f)))
			e = kv_add(*out, f, out);
	}
	free(t);
	return e;
}

/* Bytes of a thread's gathered tile: its K rows, then its V rows, in
 * whole cache lines. */
uint64_t kvp_tile_bytes(const struct shape *s)
{
	return (s->tile * (s->f.krow + s->f.vrow) + 63) / 64 * 64;
}

/* Floats per query row of a thread's attention scratch. */
uint64_t kvp_score_width(const struct shape *s)
{
	return s->ctx + 2 + 2ULL * s->hd + (s->bs ? s->hd + 2ULL : 0);
}

size_t kvp_pieces(const struct shape *s, struct kv_engine *e,
		  struct piece *p)
{
	size_t n = 0;
	uint64_t tmp = 2 * s->users * s->kv_heads; /* small factors */
#define PUT(x, y, d)                                                     \
	do {                                                             \
		if (p)                                                   \
			p[n] = (struct piece){(x), (y), e ? (d) : NULL}; \
		n++;                                                     \
	} while (0)
	PUT(s->rows, s->dim, &e->x);
	PUT(s->rows, s->dim, &e->xn);
	PUT(s->rows, s->qkv, &e->qkv);
	PUT(s->rows, s->att, &e->att);
	PUT(s->rows, s->ffn, &e->h);
	if (!s->gpt2)
		PUT(s->rows, s->ffn, &e->g);
	if (s->mla) {
		PUT(1, s->mla_floats, &e->mla_scratch);
	} else {
		PUT(tmp * s->chunk, (s->tmprow + 3) / 4, &e->kvtmp);
		PUT((uint64_t)s->threads * s->qblock * s->group,
		    kvp_score_width(s), &e->scores);
		PUT(s->users * s->kv_heads * s->nsplit * s->group, s->hd + 2,
		    &e->part);
	}
	if (!s->gpt2 || s->mla)
		PUT(s->ctx, s->hd, &e->rope);
	if (s->paged && s->tile > s->bs)
		PUT(s->threads, kvp_tile_bytes(s) / sizeof(float), &e->tiles);
	if (s->wt != KV_DTYPE_F32)
		PUT(s->threads * (uint64_t)KV_CONV_ROWS, s->conv_k, &e->conv);
#undef PUT
	return n;
}

static int scratch_floats(const struct shape *s, uint64_t *out)
{
	struct piece p[16];
	size_t n = kvp_pieces(s, NULL, p);
	int e = 0;
	*out = 0;
	for (size_t i = 0; i < n && !e; i++)
		e = add_floats(out, p[i].a, p[i].b);
	return e;
}

/* --- the effective model --- */

struct kv_engine_opts kv_engine_opts_default(void)
{
	struct kv_engine_opts o = {0};
	o.users = 1;
	o.max_ctx = 160;
	o.cache = true;
	o.threads = 1;
	o.k_dtype = o.v_dtype = KV_DTYPE_F32;
	o.logit_scale = 1;
	return o;
}

/* Families the engine runs, for messages. */
#define SUPPORTED                                                        \
	"it runs GPT-2 blocks (gpt2, gpt_bigcode) and Llama-style "        \
	"blocks (llama, mistral, qwen2, qwen3, phi3) with full attention "  \
	"and a dense MLP on every layer, and DeepSeek's latent attention "  \
	"(deepseek_v2, deepseek_v3)"

#define ENGINE_MAX_LAYERS 4096
#define ENGINE_MAX_VOCAB 2147483647ULL /* BLAS dimensions are int */
#define ENGINE_MAX_USERS 65536
#define ENGINE_MAX_THREADS 256

/* The block size and pool of opts against its context. */
static int check_blocks(const struct kv_model *m,
			const struct kv_engine_opts *o, char *err)
{
	uint64_t need = o->block_size ? kv_paged_blocks_for(o->max_ctx,
							    o->block_size)
				      : 0;
	uint64_t pool = o->pool_blocks ? o->pool_blocks : need * o->users;
	if ((o->pool_blocks || o->prefix) && !o->paged) {
		snprintf(err, KV_ERRLEN,
			 "a pool of blocks and prefix caching need the paged "
			 "layout");
		return KV_EINVAL;
	}
	if ((o->paged || o->pool_blocks || o->prefix) && !o->block_size) {
		snprintf(err, KV_ERRLEN,
			 "block-size: the paged layout needs blocks of at "
			 "least one position, got 0");
		return KV_EINVAL;
	}
	if (o->block_size > o->max_ctx) {
		snprintf(err, KV_ERRLEN,
			 "block-size: must be in 1..%llu (the context), got "
			 "%u",
			 (unsigned long long)o->max_ctx, o->block_size);
		return KV_EINVAL;
	}
	if (o->paged && pool < need) {
		snprintf(err, KV_ERRLEN,
			 "%s: pool-blocks: one sequence of %llu positions "
			 "needs %llu blocks of %u, got %llu",
			 m->name, (unsigned long long)o->max_ctx,
			 (unsigned long long)need, o->block_size,
			 (unsigned long long)pool);
		return KV_EINVAL;
	}
	if (o->paged && pool >= UINT32_MAX) {
		snprintf(err, KV_ERRLEN,
			 "pool-blocks: at most %u, got %llu", UINT32_MAX - 1,
			 (unsigned long long)pool);
		return KV_EINVAL;
	}
	return 0;
}

bool kv_engine_weights_type(enum kv_dtype t)
{
	return t == KV_DTYPE_F32 || t == KV_DTYPE_BF16 || t == KV_DTYPE_F16;
}

/* The weights a run keeps: their type (f32, bf16, f16; latent attention
 * f32 only), and a checkpoint's, which fix the shape, the positions of
 * GPT-2's learned table and how rotary positions turn. */
static int weights_ok(const struct kv_model *m, const struct kv_engine_opts *o,
		      bool mla, char *err)
{
	if (!kv_engine_weights_type(o->weights_dtype)) {
		snprintf(err, KV_ERRLEN, "weights: the engine keeps them in "
			 "f32, bf16 or f16, not %s",
			 kv_dtype_name(o->weights_dtype));
		return KV_EUNSUP;
	}
	if (mla && o->weights_dtype != KV_DTYPE_F32) {
		snprintf(err, KV_ERRLEN, "%s: latent attention runs with f32 "
			 "weights only, not %s",
			 m->name, kv_dtype_name(o->weights_dtype));
		return KV_EUNSUP;
	}
	/* an override the checkpoint's own shape already has is no other */
	bool other = (o->layers && o->layers != m->n_layers) ||
		     (o->vocab && o->vocab != m->vocab) ||
		     (o->kv_heads && o->kv_heads != m->layers[0].kv_heads);
	if (o->ckpt && (mla || other)) {
		snprintf(err, KV_ERRLEN,
			 "%s: a checkpoint's weights fix the model's shape: "
			 "no layers, vocab, K/V heads or latent rank of "
			 "another%s",
			 m->name, mla ? "; latent attention's weights are not "
					"read from a checkpoint"
				      : "");
		return KV_EUNSUP;
	}
	const char *rs = m->rope_scaling.type;
	if (o->ckpt && *rs && strcmp(rs, "default") && strcmp(rs, "linear") &&
	    strcmp(rs, "llama3")) {
		snprintf(err, KV_ERRLEN,
			 "%s: rope_scaling: type '%s': the engine turns "
			 "positions plainly, linearly or as Llama 3 does, not "
			 "so; a checkpoint's logits would be wrong",
			 m->name, rs);
		return KV_EUNSUP;
	}
	if (o->ckpt && m->family == KV_FAMILY_GPT2 && o->max_ctx > m->max_pos) {
		snprintf(err, KV_ERRLEN,
			 "%s: %llu positions, beyond the %llu the checkpoint's "
			 "learned positions cover",
			 m->name, (unsigned long long)o->max_ctx,
			 (unsigned long long)m->max_pos);
		return KV_EINVAL;
	}
	return 0;
}

int kv_engine_model(const struct kv_model *m, const struct kv_engine_opts *o,
		    struct kv_model **eff, char *err)
{
	const char *why = NULL;
	int e;
	/* a DeepSeek config: MLA on every layer, its MoE layers run dense */
	bool ds = m->family == KV_FAMILY_DEEPSEEK && m->kv_lora_rank;
	bool mla = kv_mla_wanted(m, o);
	if (m->family != KV_FAMILY_GPT2 && m->family != KV_FAMILY_LLAMA &&
	    !ds)
		why = "this family";
	else if (m->family == KV_FAMILY_GPT2 &&
		 (!m->layernorm || m->gated_mlp))
		why = "a GPT-2 family without LayerNorm and a plain MLP";
	else if (m->family == KV_FAMILY_LLAMA &&
		 (m->layernorm || !m->gated_mlp))
		why = "a Llama family without RMSNorm and a gated MLP";
	else if (m->qk_norm && (m->family != KV_FAMILY_LLAMA || mla))
		why = "per-head q/k norms outside Llama-style attention";
	else if (m->parallel_block)
		why = "parallel attention and MLP";
	else if (m->n_experts && !ds)
		why = "mixture-of-experts layers";
	else if (m->kv_lora_rank && !ds)
		why = "multi-head latent attention outside DeepSeek's blocks";
	else if (m->ssm_version)
		why = "state-space layers";
	for (uint32_t i = 0; !why && i < m->n_layers; i++) {
		const struct kv_layer *l = &m->layers[i], *l0 = &m->layers[0];
		if (ds) {
			if (l->attn != KV_ATTN_MLA)
				why = "layers without latent attention";
			continue;
		}
		if (l->attn == KV_ATTN_SLIDING || l->attn == KV_ATTN_CHUNKED)
			why = "sliding-window or chunked attention layers";
		else if (l->attn != KV_ATTN_FULL)
			why = "layers without full attention";
		else if (l->mlp != KV_MLP_DENSE)
			why = "mixture-of-experts layers";
		else if (l->head_dim_k != l->head_dim_v)
			why = "K and V heads of different sizes";
		else if (l->q_heads != l0->q_heads ||
			 l->kv_heads != l0->kv_heads ||
			 l->head_dim_k != l0->head_dim_k ||
			 l->ffn_dim != l0->ffn_dim)
			why = "layers of different shapes";
	}
	if (why) {
		snprintf(err, KV_ERRLEN,
			 "%s: model_type \"%s\": the engine does not run %s; "
			 "%s",
			 m->name, m->model_type, why, SUPPORTED);
		return KV_EUNSUP;
	}
	if ((e = weights_ok(m, o, mla, err)))
		return e;
	const struct kv_layer *l0 = &m->layers[0];
	if (m->family != KV_FAMILY_GPT2 && !(m->rope_theta > 0)) {
		snprintf(err, KV_ERRLEN,
			 "%s: rope_theta: rotary positions need a base above "
			 "0, got %g",
			 m->name, m->rope_theta);
		return KV_EINVAL;
	}
	if (!(m->norm_eps <= FLT_MAX)) {
		snprintf(err, KV_ERRLEN,
			 "%s: the norms' epsilon is beyond a float's range, "
			 "got %g",
			 m->name, m->norm_eps);
		return KV_EINVAL;
	}
	if (!((float)m->norm_eps > 0)) { /* a row of zeros divides by it */
		snprintf(err, KV_ERRLEN,
			 "%s: the norms' epsilon must be above 0 in a float, "
			 "got %g",
			 m->name, m->norm_eps);
		return KV_EINVAL;
	}
	uint32_t layers = o->layers ? o->layers : m->n_layers;
	uint64_t vocab = o->vocab ? o->vocab : m->vocab;
	uint32_t kvh = o->kv_heads ? o->kv_heads : l0->kv_heads;
	if (layers > ENGINE_MAX_LAYERS) {
		snprintf(err, KV_ERRLEN, "layers: at most %u, got %u",
			 ENGINE_MAX_LAYERS, layers);
		return KV_EINVAL;
	}
	if (vocab > ENGINE_MAX_VOCAB) {
		snprintf(err, KV_ERRLEN, "vocab: at most %llu, got %llu",
			 (unsigned long long)ENGINE_MAX_VOCAB,
			 (unsigned long long)vocab);
		return KV_EINVAL;
	}
	if (!mla && o->mla_rope) {
		snprintf(err, KV_ERRLEN,
			 "%s: mla-rope: the model has no latent attention; "
			 "give an MLA rank too",
			 m->name);
		return KV_EINVAL;
	}
	if (!mla && (kvh == 0 || l0->q_heads % kvh)) {
		snprintf(err, KV_ERRLEN,
			 "%s: kv-heads: must divide the %u attention heads, "
			 "got %u",
			 m->name, l0->q_heads, kvh);
		return KV_EINVAL;
	}
	if (!mla && m->family == KV_FAMILY_LLAMA && l0->head_dim_k % 2) {
		snprintf(err, KV_ERRLEN,
			 "%s: head_dim: rotary positions need an even head "
			 "size, got %u",
			 m->name, l0->head_dim_k);
		return KV_EUNSUP;
	}
	if (o->users == 0 || o->users > ENGINE_MAX_USERS) {
		snprintf(err, KV_ERRLEN, "users: must be in 1..%u, got %u",
			 ENGINE_MAX_USERS, o->users);
		return KV_EINVAL;
	}
	if (o->max_ctx == 0 || o->max_ctx > (1ULL << 32) ||
	    o->max_chunk > o->max_ctx) {
		snprintf(err, KV_ERRLEN,
			 "context: must be in 1..2^32 positions with a chunk "
			 "no longer, got %llu and %llu",
			 (unsigned long long)o->max_ctx,
			 (unsigned long long)o->max_chunk);
		return KV_EINVAL;
	}
	if ((e = check_blocks(m, o, err)))
		return e;
	if (mla && (o->k_dtype != KV_DTYPE_F32 || o->v_dtype != KV_DTYPE_F32)) {
		snprintf(err, KV_ERRLEN,
			 "%s: kv-dtype: the latent cache is stored in f32; "
			 "other formats run with plain attention only",
			 m->name);
		return KV_EUNSUP;
	}
	if (mla && o->block_size) {
		snprintf(err, KV_ERRLEN,
			 "%s: block-size: the latent cache is kept contiguous; "
			 "blocks and paging run with plain attention only",
			 m->name);
		return KV_EUNSUP;
	}
	if (o->threads > ENGINE_MAX_THREADS) {
		snprintf(err, KV_ERRLEN, "threads: at most %u, got %u",
			 ENGINE_MAX_THREADS, o->threads);
		return KV_EINVAL;
	}
	const enum kv_dtype fmt[2] = {o->k_dtype, o->v_dtype};
	for (int i = 0; i < 2; i++) {
		const struct kv_dtype_info *d = kv_dtype_info(fmt[i]);
		uint64_t b;
		if (!d || !d->kv || !kv_dtype_stored(fmt[i])) {
			char list[128];
			snprintf(err, KV_ERRLEN,
				 "%s: the engine sizes this cache format but "
				 "does not store it; it stores %s",
				 kv_dtype_name(fmt[i]),
				 kv_dtype_stored_list(list, sizeof list));
			return KV_EUNSUP;
		}
		if (kv_dtype_row_bytes(fmt[i], l0->head_dim_k, &b)) {
			snprintf(err, KV_ERRLEN,
				 "%s: %s packs %u values per block; a head of "
				 "%u values is not a multiple of %u",
				 m->name, d->name, d->block, l0->head_dim_k,
				 d->block);
			return KV_EINVAL;
		}
	}
	if (!(o->logit_scale >= 0 && o->logit_scale <= 1e6)) {
		snprintf(err, KV_ERRLEN, "logit scale: must be in 0..1e6");
		return KV_EINVAL;
	}
	struct kv_model *c = malloc(sizeof *c);
	struct kv_layer *ls = calloc(layers, sizeof *ls);
	if (!c || !ls) {
		free(c);
		free(ls);
		snprintf(err, KV_ERRLEN, "out of memory");
		return KV_ENOMEM;
	}
	*c = *m;
	c->json = NULL; /* m's to free, not the copy's */
	c->quant.n_ignore = 0;
	c->quant.ignore = NULL;
	c->quant.re = NULL;
	c->layers = ls;
	c->n_layers = layers;
	c->vocab = vocab;
	c->n_kv_heads = kvh;
	c->dtype = KV_DTYPE_F32;
	for (uint32_t i = 0; i < layers; i++) {
		ls[i] = *l0;
		ls[i].kv_heads = kvh;
	}
	if (mla && (e = kv_mla_model(m, o, c, err))) {
		kv_model_free(c);
		return e;
	}
	*eff = c;
	return 0;
}

/* Bytes of the cache for the effective model, as kvsize computes them. */
static int cache_bytes(const struct kv_model *eff, const struct shape *s,
		       uint64_t *out, char *err)
{
	struct kv_opts ko = kv_opts_default(eff);
	ko.k_dtype = s->f.k;
	ko.v_dtype = s->f.v;
	if (!s->cache) {
		*out = 0;
		return 0;
	}
	if (s->paged) /* a block: bs positions of every layer */
		return kv_model_bytes(eff, &ko, s->bs, s->pool, out, err);
	return kv_model_bytes(eff, &ko, s->ctx, s->users, out, err);
}

/* The pool's bookkeeping options for shape s. */
struct kv_paged_opts kvp_paged_opts(const struct shape *s)
{
	struct kv_paged_opts po = {s->bs, s->pool, (uint32_t)s->users,
				   s->ctx, s->prefix};
	return po;
}

/* Bytes of the pool's bookkeeping and, with blocks, of a prefill's
 * chunk of tokens. */
static int table_bytes(const struct shape *s, uint64_t *out)
{
	struct kv_paged_opts po = kvp_paged_opts(s);
	uint64_t tok;
	int e;
	*out = 0;
	if (!s->bs)
		return 0;
	if (s->paged && (e = kv_paged_bytes(&po, out)))
		return e;
	if ((e = kv_mul(s->rows, sizeof(uint32_t), &tok)))
		return e;
	return kv_add(*out, tok, out);
}

int kvp_estimate(const struct kv_model *eff, const struct kv_engine_opts *o,
		 struct shape *s, struct kv_engine_size *sz, char *err)
{
	uint64_t wf, sf, tb;
	int e;
	if ((e = fill_shape(eff, o, s)) || (e = weight_floats(s, &wf)) ||
	    (e = scratch_floats(s, &sf)) ||
	    (e = kv_mul(wf, sizeof(float), &sz->weights)) ||
	    (e = kv_mul(sf, sizeof(float), &sz->scratch)) ||
	    (e = table_bytes(s, &tb)) ||
	    (e = kv_add(sz->scratch, tb, &sz->scratch))) {
		if (e == KV_ERANGE)
			snprintf(err, KV_ERRLEN,
				 "%s: the run's bytes overflow 64 bits",
				 eff->name);
		else
			snprintf(err, KV_ERRLEN, "out of memory");
		return e;
	}
	if ((e = cache_bytes(eff, s, &sz->cache, err)))
		return e;
	if ((e = kv_add(sz->weights, sz->cache, &sz->total)) ||
	    (e = kv_add(sz->total, sz->scratch, &sz->total))) {
		snprintf(err, KV_ERRLEN, "%s: the run's bytes overflow 64 bits",
			 eff->name);
		return e;
	}
	return 0;
}

int kv_engine_estimate(const struct kv_model *m,
		       const struct kv_engine_opts *o,
		       struct kv_engine_size *sz, char *err)
{
	struct kv_model *eff;
	struct shape s;
	int e = kv_engine_model(m, o, &eff, err);
	if (e)
		return e;
	e = kvp_estimate(eff, o, &s, sz, err);
	kv_model_free(eff);
	return e;
}

/* Whether a run of opts fits in avail bytes. */
static bool fits(const struct kv_model *m, const struct kv_engine_opts *o,
		 uint64_t avail)
{
	char err[KV_ERRLEN];
	struct kv_engine_size sz;
	return kv_engine_estimate(m, o, &sz, err) == 0 && sz.total <= avail;
}

/* The largest layers (or vocabulary) in (lo, hi] with which the run
 * fits in avail bytes, else lo. */
static uint64_t largest(const struct kv_model *m, struct kv_engine_opts t,
			bool vocab, uint64_t lo, uint64_t hi, uint64_t avail)
{
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;
		if (vocab)
			t.vocab = mid;
		else
			t.layers = (uint32_t)mid;
		if (fits(m, &t, avail))
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

uint32_t kv_engine_fit_layers(const struct kv_model *m,
			      const struct kv_engine_opts *o, uint64_t avail)
{
	uint32_t hi = o->layers ? o->layers : m->n_layers;
	return (uint32_t)largest(m, *o, false, 0, hi, avail);
}

uint64_t kv_engine_fit_vocab(const struct kv_model *m,
			     const struct kv_engine_opts *o, uint64_t avail)
{
	uint64_t hi = o->vocab ? o->vocab : m->vocab;
	if (hi < 256)
		return 0;
	uint64_t lo = largest(m, *o, true, 255, hi, avail);
	return lo < 256 ? 0 : lo;
}

int kv_engine_lengths(const struct kv_model *m, struct kv_engine_opts o,
		      const uint64_t *lens, uint64_t n, uint64_t max_len,
		      bool block_fixed, uint64_t pool_blocks,
		      struct kv_lengths_report *r, char *err)
{
	struct kv_model *eff = NULL;
	struct kv_paged *pool = NULL;
	struct kv_engine_size sz;
	struct kv_paged_stats st;
	uint64_t max = max_len, per;
	int e;
	*r = (struct kv_lengths_report){0};
	for (uint64_t i = 0; !max_len && i < n; i++)
		max = lens[i] > max ? lens[i] : max;
	/* each user would reserve the longest; blocks no longer than it
	 * unless asked */
	o.max_ctx = max;
	if (!block_fixed && o.block_size > max)
		o.block_size = (uint32_t)(max ? max : 1);
	o.max_chunk = 1;
	o.cache = true;
	struct shape sh; /* the estimate checks the run's sizes */
	if ((e = kv_engine_model(m, &o, &eff, err)) ||
	    (e = kvp_estimate(eff, &o, &sh, &sz, err)))
		goto out;
	struct kv_opts ko = kv_opts_default(eff);
	ko.k_dtype = ko.v_dtype = KV_DTYPE_F32;
	struct kv_paged_opts po = {o.block_size, 0, (uint32_t)n, max, false};
	po.blocks = pool_blocks ? pool_blocks
				: n * kv_paged_blocks_for(max, po.block_size);
	r->block_size = o.block_size;
	r->max_len = max;
	r->layers = eff->n_layers;
	r->pool_blocks = po.blocks;
	if ((e = kv_model_token_bytes(eff, &ko, &per, err)) ||
	    (e = kv_paged_usage(lens, n, max, po.block_size, per, &r->u)) ||
	    (e = kv_paged_new(&po, &pool))) {
		snprintf(err, KV_ERRLEN,
			 "the run's sizes overflow or are out of memory");
		e = KV_ERANGE;
		goto out;
	}
	/* the pool's own count of the blocks the texts take */
	for (r->placed = 0; r->placed < n; r->placed++)
		if ((e = kv_paged_append(pool, (uint32_t)r->placed, NULL,
					 lens[r->placed]))) {
			snprintf(err, KV_ERRLEN,
				 "a pool of %llu blocks holds the texts of "
				 "%llu of the %llu users",
				 (unsigned long long)po.blocks,
				 (unsigned long long)r->placed,
				 (unsigned long long)n);
			e = KV_ENOMEM;
			goto out;
		}
	kv_paged_get_stats(pool, &st);
	r->blocks_held = st.held;
out:
	kv_paged_free(pool);
	kv_model_free(eff);
	return e;
}
