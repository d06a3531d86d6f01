/*
 * layout.c - bytes of the KV cache. The one formula of the project lives
 * here: per layer, heads x (row(K) + row(V)) x tokens kept, summed over the
 * layers that keep KV, times the sequences; every product checked.
 */
#include <stdio.h>

#include "kv/layout.h"

struct kv_opts kv_opts_default(const struct kv_model *m)
{
	enum kv_dtype t = m->quant.kv_fp8 ? KV_DTYPE_FP8 : m->dtype;
	struct kv_opts o = {t, t, false, 1, 0, KV_STATE_REF};
	return o;
}

int kv_layer_geom(const struct kv_model *m, uint32_t i,
		  const struct kv_opts *o, struct kv_geom *g, char *err)
{
	const struct kv_layer *l = &m->layers[i];
	uint32_t tp = o->tp ? o->tp : 1;
	/* DeepSeek V3.2's indexer keeps one key of index_dim values a token
	 * in fp8, with an f32 scale per 128 values, copied on every rank */
	uint32_t ix = l->index_dim + 4 * ((l->index_dim + 127) / 128);
	*g = (struct kv_geom){l->attn, l->kv_heads, l->head_dim_k,
			      l->head_dim_v, l->window, false, ix};
	if (l->attn == KV_ATTN_NONE) {
		g->heads = g->dim_k = g->dim_v = g->index_bytes = 0;
		return 0;
	}
	/* MiniCPM3's reference keeps the heads its latent makes */
	if (o->mha || (l->attn == KV_ATTN_MLA && m->mla_expanded)) {
		g->heads = l->q_heads;
		if (l->attn == KV_ATTN_MLA) {
			g->attn = KV_ATTN_FULL;
			g->dim_k = m->qk_nope_dim + m->qk_rope_dim;
			g->dim_v = m->v_head_dim;
		}
	}
	if (tp == 1)
		return 0;
	if (l->q_heads % tp) {
		snprintf(err, KV_ERRLEN,
			 "%s: tensor parallel %u does not divide the %u "
			 "attention heads of layer %u",
			 m->name, tp, l->q_heads, i);
		return KV_EINVAL;
	}
	if (g->attn == KV_ATTN_MLA) {
		g->replicated = true; /* one latent, copied on every rank */
		return 0;
	}
	if (g->heads >= tp) {
		if (g->heads % tp) {
			snprintf(err, KV_ERRLEN,
				 "%s: tensor parallel %u does not divide the "
				 "%u KV heads of layer %u",
				 m->name, tp, g->heads, i);
			return KV_EINVAL;
		}
		g->heads /= tp;
	} else {
		if (tp % g->heads) {
			snprintf(err, KV_ERRLEN,
				 "%s: tensor parallel %u is above the %u KV "
				 "heads of layer %u and not a multiple of them",
				 m->name, tp, g->heads, i);
			return KV_EINVAL;
		}
		g->heads = 1; /* each head copied on tp / heads ranks */
		g->replicated = true;
	}
	return 0;
}

static int row(enum kv_dtype t, uint32_t dim, const char *what, uint64_t *out,
	       char *err)
{
	int e = kv_dtype_row_bytes(t, dim, out);
	if (e == KV_EINVAL) {
		const struct kv_dtype_info *d = kv_dtype_info(t);
		snprintf(err, KV_ERRLEN,
			 "%s packs %u values per block; a %s head of %u "
			 "values is not a multiple of %u",
			 d ? d->name : "?", d ? d->block : 0, what, dim,
			 d ? d->block : 0);
	}
	return e;
}

int kv_geom_token_bytes(const struct kv_geom *g, const struct kv_opts *o,
			uint64_t *out, char *err)
{
	uint64_t k, v, sum;
	int e;
	*out = 0;
	if (g->attn == KV_ATTN_NONE)
		return 0;
	if ((e = row(o->k_dtype, g->dim_k, "K", &k, err)) ||
	    (e = row(o->v_dtype, g->dim_v, "V", &v, err)))
		return e;
	if (kv_add(k, v, &sum) || kv_mul(sum, g->heads, &sum) ||
	    kv_add(sum, g->index_bytes, out))
		return KV_ERANGE;
	return 0;
}

uint64_t kv_geom_tokens(const struct kv_geom *g, uint64_t ctx, uint64_t block)
{
	if (g->attn == KV_ATTN_NONE)
		return 0;
	uint64_t t = g->window && g->window < ctx ? g->window : ctx;
	if (block > 1 && t % block) {
		uint64_t pad = block - t % block;
		t = t > UINT64_MAX - pad ? UINT64_MAX : t + pad;
	}
	return t;
}

/* Geometry and per-token bytes of layer i, with the model named in err. */
static int layer_bytes(const struct kv_model *m, uint32_t i,
		       const struct kv_opts *o, struct kv_geom *g, uint64_t *b,
		       char *err)
{
	int e = kv_layer_geom(m, i, o, g, err);
	if (e)
		return e;
	char msg[KV_ERRLEN / 2];
	e = kv_geom_token_bytes(g, o, b, msg);
	if (e == KV_EINVAL)
		snprintf(err, KV_ERRLEN, "%.300s: layer %u: %s", m->name, i,
			 msg);
	else if (e)
		snprintf(err, KV_ERRLEN, "%.300s: layer %u: bytes per token "
			 "overflow 64 bits", m->name, i);
	return e;
}

int kv_model_token_bytes(const struct kv_model *m, const struct kv_opts *o,
			 uint64_t *out, char *err)
{
	uint64_t total = 0;
	for (uint32_t i = 0; i < m->n_layers; i++) {
		struct kv_geom g;
		uint64_t b;
		int e = layer_bytes(m, i, o, &g, &b, err);
		if (e)
			return e;
		if (kv_add(total, b, &total)) {
			snprintf(err, KV_ERRLEN, "%.300s: bytes per token "
				 "overflow 64 bits", m->name);
			return KV_ERANGE;
		}
	}
	*out = total;
	return 0;
}

/* The error of a count of bytes past 64 bits at ctx tokens x users. */
static int too_many(const struct kv_model *m, uint64_t ctx, uint64_t users,
		    char *err)
{
	snprintf(err, KV_ERRLEN,
		 "%s: %llu tokens x %llu users overflows 64 bits of bytes",
		 m->name, (unsigned long long)ctx, (unsigned long long)users);
	return KV_ERANGE;
}

int kv_geom_ctx_bytes(const struct kv_model *m, const struct kv_geom *g,
		      uint64_t b, uint64_t ctx, uint64_t users, uint64_t block,
		      uint64_t *tokens, uint64_t *bytes, char *err)
{
	*tokens = kv_geom_tokens(g, ctx, block);
	if (kv_mul(b, *tokens, bytes) || kv_mul(*bytes, users, bytes))
		return too_many(m, ctx, users, err);
	return 0;
}

int kv_model_bytes(const struct kv_model *m, const struct kv_opts *o,
		   uint64_t ctx, uint64_t users, uint64_t *out, char *err)
{
	uint64_t total = 0;
	if (o->block > 1 && ctx > UINT64_MAX - o->block) {
		snprintf(err, KV_ERRLEN, "%.300s: %llu tokens in pages of %llu "
			 "overflow 64 bits", m->name, (unsigned long long)ctx,
			 (unsigned long long)o->block);
		return KV_ERANGE;
	}
	for (uint32_t i = 0; i < m->n_layers; i++) {
		struct kv_geom g;
		uint64_t b, t;
		int e = layer_bytes(m, i, o, &g, &b, err);
		if (e)
			return e;
		uint64_t tokens;
		if ((e = kv_geom_ctx_bytes(m, &g, b, ctx, users, o->block,
					   &tokens, &t, err)))
			return e;
		if (kv_add(total, t, &total))
			return too_many(m, ctx, users, err);
	}
	*out = total;
	return 0;
}

int kv_model_state_bytes(const struct kv_model *m, const struct kv_opts *o,
			 uint64_t users, uint64_t *out)
{
	uint64_t per = 0, n = 0, b;
	uint32_t tp = o->tp ? o->tp : 1;
	*out = 0;
	if (!m->ssm_version)
		return 0;
	for (uint32_t i = 0; i < m->n_layers; i++)
		n += m->layers[i].ssm;
	bool f32 = o->state == KV_STATE_F32;
	uint64_t bc = f32 ? 4 : kv_dtype_info(m->dtype)->block_bytes;
	uint64_t bs = f32 || o->state == KV_STATE_SSM_F32
			      ? 4
			      : kv_dtype_info(m->ssm_dtype)->block_bytes;
	/* the convolution's window over its channels (Mamba-2's also carry
	 * B and C of each group; a gated DeltaNet's, its queries and keys),
	 * and the SSM state of the inner ones */
	uint64_t conv = m->ssm_d_inner;
	if (m->ssm_version >= 2)
		conv += 2ULL * m->ssm_groups * m->ssm_d_state;
	uint64_t inner = (m->ssm_d_inner + tp - 1) / tp;
	conv = (conv + tp - 1) / tp;
	/* RecurrentGemma's reference keeps the convolution's last width - 1
	 * inputs; the others' keep a whole window (Transformers' caches) */
	uint64_t taps = m->ssm_version == 6 || o->state != KV_STATE_REF
				? m->ssm_d_conv - 1
				: m->ssm_d_conv;
	per = conv * taps * bc + inner * m->ssm_d_state * bs;
	if (kv_mul(per, n, &b) || kv_mul(b, users, out))
		return KV_ERANGE;
	return 0;
}

int kv_model_summary(const struct kv_model *m, const struct kv_opts *o,
		     struct kv_summary *s, char *err)
{
	*s = (struct kv_summary){0, UINT32_MAX, 0, UINT32_MAX, 0, UINT32_MAX,
				 0};
	for (uint32_t i = 0; i < m->n_layers; i++) {
		struct kv_geom g;
		int e = kv_layer_geom(m, i, o, &g, err);
		if (e)
			return e;
		if (g.attn == KV_ATTN_NONE)
			continue;
		s->layers++;
#define MINMAX(lo, hi, v)          \
	do {                       \
		if ((v) < (lo))    \
			(lo) = (v); \
		if ((v) > (hi))    \
			(hi) = (v); \
	} while (0)
		MINMAX(s->heads_min, s->heads_max, g.heads);
		MINMAX(s->dim_k_min, s->dim_k_max, g.dim_k);
		MINMAX(s->dim_v_min, s->dim_v_max, g.dim_v);
#undef MINMAX
	}
	if (!s->layers)
		s->heads_min = s->dim_k_min = s->dim_v_min = 0;
	return 0;
}
