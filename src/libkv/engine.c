/*
 * engine.c - the decode engine: weights drawn from the seeded generator, a
 * KV cache of exactly kv_model_bytes(), and a forward pass whose products
 * are split over the engine's threads by outputs, so a decode step reads
 * each weight once: chunks through OpenBLAS's sgemm, a few rows through
 * gemm.c's dot products.
 *
 * Weights are stored [out][in] (as torch's nn.Linear keeps them; y = x
 * W^T): a thread's share of a product is a contiguous run of W's rows, so
 * one token reads each thread's weights as one sequential stream (gemm.c),
 * and a chunk is sgemm with W transposed. The tied head is the embedding
 * table itself, (vocab, dim).
 *
 * The cache is bytes: each K or V row (one head of one token) is encoded
 * in its format once, by store_kv(), and found by kv_rows() alone; an f32
 * cache goes to the f32 attention kernels (attn.c), any other format to
 * the kernels that read the encoded rows (attnq.c). The K/V of a pass
 * without the cache are kept in the same formats, so both paths run the
 * same model.
 *
 * Tensor ids and scales (tests/ref/ref_forward.py rebuilds them):
 *   global: 0 embedding (vocab, dim), 1 positions (rows, dim), 2 final
 *   norm gain (dim), 3 final norm bias (dim), 4 head (dim, vocab) untied;
 *   layer l: 16 (l + 1) + slot, slots as enum slot below.
 *   matrices: 0.02 sqrt(3) r (standard deviation 0.02, as GPT-2's init);
 *   biases: 0.02 r; norm gains: 1 + 0.1 r.
 * An MLA layer (mla.c) has no S_QKV tensors; its own have the ids
 * KV_MLA_ID(l, slot) of mla.h, drawn the same way.
 */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"
#include "kv/engine.h"
#include "kv/layout.h"
#include "kv/paged.h"
#include "mla.h"
#include "kvquant.h"

enum slot {
	S_LN1_G, S_LN1_B, S_QKV_W, S_QKV_B, S_O_W, S_O_B, S_LN2_G, S_LN2_B,
	S_UP_W, S_UP_B, S_GATE_W, S_GATE_B, S_DOWN_W, S_DOWN_B, S_COUNT
};
enum { T_WTE, T_WPE, T_LNF_G, T_LNF_B, T_HEAD };
enum kind { K_MAT, K_BIAS, K_GAIN };

#define W_SCALE 0.034641016f /* 0.02 sqrt(3) */
#define B_SCALE 0.02f
#define G_SCALE 0.1f

/* Positions per attention tile with blocks: enough rows per kernel call
 * that the call's overhead and the merge stay small. */
#define ATTN_TILE 256

/* Floats per aligned piece: every tensor starts on 64 bytes. */
#define ALIGN_F 16

struct layer_w {
	float *ln1_g, *ln1_b; /* (dim) */
	float *w_qkv;  /* (dim, (heads + 2 kv_heads) head_dim) */
	float *b_qkv;  /* ((heads + 2 kv_heads) head_dim) or NULL */
	float *w_o;    /* (heads head_dim, dim) */
	float *b_o;    /* (dim) or NULL */
	float *ln2_g, *ln2_b; /* (dim) */
	float *w_up;   /* (dim, ffn): GPT-2's c_fc, Llama's up */
	float *b_up;   /* (ffn) or NULL */
	float *w_gate; /* (dim, ffn), Llama only */
	float *b_gate; /* (ffn) or NULL */
	float *w_down; /* (ffn, dim): GPT-2's c_proj, Llama's down */
	float *b_down; /* (dim) or NULL */
	struct kv_mla_w mla; /* an MLA layer's attention tensors */
};

/* The shape of a run, everything derived once. */
struct shape {
	bool gpt2;       /* GPT-2 block, else Llama-style */
	uint64_t dim, ffn, vocab;
	uint32_t layers, heads, kv_heads, hd, group; /* group = heads/kv */
	uint64_t qkv;    /* (heads + 2 kv_heads) hd */
	uint64_t att;    /* heads hd */
	uint64_t users, ctx, chunk, rows; /* rows = users chunk */
	uint64_t pos_rows; /* learned positions kept (GPT-2) */
	bool tied, qkv_bias, o_bias, mlp_bias;
	uint32_t threads, nsplit; /* nsplit: most parts of a decode */
	uint32_t qblock; /* tokens of a chunk attending together */
	struct kv_rowfmt f; /* K and V formats, bytes per row */
	uint64_t tmprow; /* bytes of a row of kvtmp: the larger of the two */
	bool cache;
	uint32_t bs;     /* positions per cache block, 0: none */
	uint64_t tile;   /* positions per attention tile: whole blocks,
			  * about ATTN_TILE of them; 0 without blocks */
	bool paged;      /* the cache is a pool of blocks */
	bool prefix;     /* full blocks kept for prefix reuse */
	uint64_t pool;   /* blocks of the pool, when paged */
	double eps, theta;
	bool mla;        /* multi-head latent attention: hd is its rotary
			  * key's size, qkv the queries, att heads x vdim */
	struct kv_mla_dims md;
	uint64_t mla_floats; /* its scratch */
};

/* One tensor to allocate and draw. */
struct tensor {
	uint64_t id;
	enum kind kind;
	uint64_t rows, cols; /* logical shape */
	bool transpose;      /* stored (cols, rows) */
	float **dst;
};

struct kv_engine {
	struct kv_model *model; /* effective model */
	struct shape s;
	struct kv_pool *pool;
	struct kv_ops ops;   /* the products' threads, switch and gate */
	bool simd;
	float logit_scale; /* the head's output times this */

	float *weights;       /* one allocation, every tensor */
	uint64_t weight_bytes;
	float *wte;   /* (vocab, dim) */
	float *wpe;   /* (pos_rows, dim), GPT-2 */
	float *lnf_g, *lnf_b; /* (dim) */
	float *head;  /* stored (vocab, dim): wte itself when tied */
	struct layer_w *lw; /* (layers) */

	uint8_t *cache; /* per layer: K rows, then V rows, krow or vrow bytes
			 * each: (user, kv_head, ctx) rows; paged: (kv_head,
			 * block, bs) rows, so a head's blocks taken in order
			 * are one run, as in the contiguous layout */
	uint64_t cache_bytes; /* what was allocated */
	struct kv_paged *pages; /* the block tables, when paged */
	uint32_t *tokbuf;     /* (users, chunk): a prefill's chunk */

	float *scratch;       /* one allocation, below */
	uint64_t scratch_bytes;
	float *x;     /* (rows, dim) residual stream */
	float *xn;    /* (rows, dim) normed */
	float *qkv;   /* (rows, qkv) */
	float *att;   /* (rows, att) */
	float *h;     /* (rows, ffn) */
	float *g;     /* (rows, ffn) gate, Llama */
	float *kvtmp; /* (2, user, kv_head, chunk, tmprow bytes): K and V of
		       * one layer without the cache, encoded */
	float *scores; /* (threads, qblock group, ctx + 2 + 2 hd [+ hd + 2]):
			* scores, m, l, then the block's queries and
			* outputs [and one attention block's o, m, l] */
	float *part;  /* (user, kv_head, nsplit, group, hd + 2) */
	float *rope;  /* (ctx, hd / 2, 2) cos, sin; Llama and MLA */
	float *tiles; /* (threads, tile_bytes): a tile's K and V rows
		       * gathered from blocks apart; paged, tile > bs */
	float *mla_scratch; /* (mla_floats) carved by kv_mla_init() */
	struct kv_mla mla;

	uint64_t passes[2]; /* token passes without, with the cache */
};

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
static size_t tensors(const struct shape *s, struct kv_engine *e,
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
static int padded(uint64_t n, uint64_t *out)
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
	if ((e = kv_mul(a, b, &n)) || (e = padded(n, &n)))
		return e;
	return kv_add(*acc, n, acc);
}

static int weight_floats(const struct shape *s, uint64_t *out)
{
	size_t n = tensors(s, NULL, NULL);
	struct tensor *t = malloc(n * sizeof *t);
	int e = 0;
	if (!t)
		return KV_ENOMEM;
	tensors(s, NULL, t);
	*out = 0;
	for (size_t i = 0; i < n && !e; i++)
		e = add_floats(out, t[i].rows, t[i].cols);
	free(t);
	return e;
}

/* The scratch pieces in order: rows of each, and where they go. */
struct piece {
	uint64_t a, b;
	float **dst;
};

/* Bytes of a thread's gathered tile: its K rows, then its V rows, in
 * whole cache lines. */
static uint64_t tile_bytes(const struct shape *s)
{
	return (s->tile * (s->f.krow + s->f.vrow) + 63) / 64 * 64;
}

/* Floats per query row of a thread's attention scratch. */
static uint64_t score_width(const struct shape *s)
{
	return s->ctx + 2 + 2ULL * s->hd + (s->bs ? s->hd + 2ULL : 0);
}

static size_t pieces(const struct shape *s, struct kv_engine *e,
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
		    score_width(s), &e->scores);
		PUT(s->users * s->kv_heads * s->nsplit * s->group, s->hd + 2,
		    &e->part);
	}
	if (!s->gpt2 || s->mla)
		PUT(s->ctx, s->hd, &e->rope);
	if (s->paged && s->tile > s->bs)
		PUT(s->threads, tile_bytes(s) / sizeof(float), &e->tiles);
#undef PUT
	return n;
}

static int scratch_floats(const struct shape *s, uint64_t *out)
{
	struct piece p[16];
	size_t n = pieces(s, NULL, p);
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
	"blocks (llama, mistral, qwen2, phi3) with full attention and a "   \
	"dense MLP on every layer, and DeepSeek's latent attention "        \
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
	else if (m->qk_norm)
		why = "per-head q/k norms";
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
static struct kv_paged_opts paged_opts(const struct shape *s)
{
	struct kv_paged_opts po = {s->bs, s->pool, (uint32_t)s->users,
				   s->ctx, s->prefix};
	return po;
}

/* Bytes of the pool's bookkeeping and, with blocks, of a prefill's
 * chunk of tokens. */
static int table_bytes(const struct shape *s, uint64_t *out)
{
	struct kv_paged_opts po = paged_opts(s);
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

static int estimate(const struct kv_model *eff, const struct kv_engine_opts *o,
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
	e = estimate(eff, o, &s, sz, err);
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

uint32_t kv_engine_fit_layers(const struct kv_model *m,
			      const struct kv_engine_opts *o, uint64_t avail)
{
	struct kv_engine_opts t = *o;
	uint32_t lo = 0, hi = o->layers ? o->layers : m->n_layers;
	while (lo < hi) { /* largest fitting in (lo, hi] */
		uint32_t mid = lo + (hi - lo + 1) / 2;
		t.layers = mid;
		if (fits(m, &t, avail))
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

uint64_t kv_engine_fit_vocab(const struct kv_model *m,
			     const struct kv_engine_opts *o, uint64_t avail)
{
	struct kv_engine_opts t = *o;
	uint64_t lo = 255, hi = o->vocab ? o->vocab : m->vocab;
	if (hi < 256)
		return 0;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;
		t.vocab = mid;
		if (fits(m, &t, avail))
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo < 256 ? 0 : lo;
}

/* --- drawing the weights --- */

struct draw_job {
	const struct tensor *t;
	uint64_t seed;
};

static void draw_task(void *arg, unsigned tid, unsigned nth)
{
	const struct draw_job *j = arg;
	const struct tensor *t = j->t;
	uint64_t n = t->rows * t->cols;
	uint64_t a = n * tid / nth, b = n * (tid + 1) / nth;
	uint64_t key = kv_rand_key(j->seed, t->id);
	float *dst = *t->dst;
	for (uint64_t i = a; i < b; i++) {
		/* i is the stored index; the draw follows the logical one */
		uint64_t li = t->transpose ? (i % t->rows) * t->cols +
						     i / t->rows
					   : i;
		float r = kv_rand_sym(key, li);
		dst[i] = t->kind == K_MAT    ? W_SCALE * r
			 : t->kind == K_BIAS ? B_SCALE * r
					     : 1.0f + G_SCALE * r;
	}
}

static void rope_table(struct kv_engine *e)
{
	uint32_t half = e->s.hd / 2;
	for (uint64_t p = 0; p < e->s.ctx; p++)
		for (uint32_t i = 0; i < half; i++) {
			double f = pow(e->s.theta, -2.0 * i / e->s.hd);
			double a = (double)p * f;
			e->rope[(p * half + i) * 2] = (float)cos(a);
			e->rope[(p * half + i) * 2 + 1] = (float)sin(a);
		}
}

int kv_engine_new(const struct kv_model *m, const struct kv_engine_opts *o,
		  struct kv_engine **out, char *err)
{
	struct kv_engine_size sz;
	struct kv_engine *e = calloc(1, sizeof *e);
	struct tensor *t = NULL;
	int rc;
	if (!e) {
		snprintf(err, KV_ERRLEN, "out of memory");
		return KV_ENOMEM;
	}
	if ((rc = kv_engine_model(m, o, &e->model, err)))
		goto fail;
	if ((rc = estimate(e->model, o, &e->s, &sz, err)))
		goto fail;
	rc = KV_ENOMEM;
	snprintf(err, KV_ERRLEN, "out of memory (%llu bytes)",
		 (unsigned long long)sz.total);
	e->lw = calloc(e->s.layers, sizeof *e->lw);
	e->weights = kv_alloc_big(sz.weights);
	e->weight_bytes = sz.weights;
	e->scratch = kv_alloc_big(sz.scratch);
	e->scratch_bytes = sz.scratch;
	if (!e->lw || !e->weights || !e->scratch)
		goto fail;
	memset(e->scratch, 0, (size_t)sz.scratch);
	if (e->s.cache) {
		e->cache = kv_alloc_big(sz.cache);
		e->cache_bytes = sz.cache;
		if (!e->cache)
			goto fail;
		/* a cache never written reads as zeros, not garbage */
		memset(e->cache, 0, (size_t)sz.cache);
	}
	if (e->s.paged) {
		struct kv_paged_opts po = paged_opts(&e->s);
		if (kv_paged_new(&po, &e->pages))
			goto fail;
	}
	if (e->s.bs) {
		e->tokbuf = calloc(e->s.rows, sizeof *e->tokbuf);
		if (!e->tokbuf)
			goto fail;
	}
	/* the CPU's features are probed once, here, before any thread asks */
	(void)kv_attn_has_simd(8);
	(void)kv_attnq_has_simd(32);
	if (kv_pool_new(e->s.threads, &e->pool))
		goto fail;
	openblas_set_num_threads(1);
	e->simd = true;
	e->logit_scale = o->logit_scale > 0 ? o->logit_scale : 1;

	/* carve the allocations, then draw every tensor */
	size_t nt = tensors(&e->s, NULL, NULL);
	t = malloc(nt * sizeof *t);
	if (!t)
		goto fail;
	tensors(&e->s, e, t);
	float *w = e->weights;
	for (size_t i = 0; i < nt; i++) {
		uint64_t n = 0;
		*t[i].dst = w;
		padded(t[i].rows * t[i].cols, &n);
		w += n;
	}
	for (size_t i = 0; i < nt; i++) {
		struct draw_job j = {&t[i], o->seed};
		kv_pool_run(e->pool, draw_task, &j);
	}
	if (e->s.tied)
		e->head = e->wte;
	struct piece pc[16];
	size_t np = pieces(&e->s, e, pc);
	float *sp = e->scratch;
	for (size_t i = 0; i < np; i++) {
		uint64_t n = 0;
		*pc[i].dst = sp;
		padded(pc[i].a * pc[i].b, &n);
		sp += n;
	}
	if (!e->s.gpt2 || e->s.mla)
		rope_table(e);
	e->ops = (struct kv_ops){e->pool, e->s.threads, true, e->g};
	if (e->s.mla)
		kv_mla_init(&e->mla, &e->s.md, e->mla_scratch, &e->ops,
			    e->pool, e->rope, (float *)(void *)e->cache);
	free(t);
	*out = e;
	return 0;
fail:
	free(t);
	kv_engine_free(e);
	return rc;
}

void kv_engine_free(struct kv_engine *e)
{
	if (!e)
		return;
	kv_pool_free(e->pool);
	free(e->weights);
	free(e->scratch);
	free(e->cache);
	kv_paged_free(e->pages);
	free(e->tokbuf);
	free(e->lw);
	kv_model_free(e->model);
	free(e);
}

/* --- the pieces of a block --- */

static void norm_rows(const struct shape *s, const float *x, float *y,
		      uint64_t rows, uint64_t stride, const float *g,
		      const float *b)
{
	uint64_t d = s->dim;
	for (uint64_t r = 0; r < rows; r++) {
		const float *xr = x + r * stride * d;
		float *yr = y + r * d;
		if (s->gpt2) {
			float mean = 0, var = 0;
			for (uint64_t i = 0; i < d; i++)
				mean += xr[i];
			mean /= (float)d;
			for (uint64_t i = 0; i < d; i++)
				var += (xr[i] - mean) * (xr[i] - mean);
			var /= (float)d;
			float inv = 1.0f / sqrtf(var + (float)s->eps);
			for (uint64_t i = 0; i < d; i++)
				yr[i] = (xr[i] - mean) * inv * g[i] + b[i];
		} else {
			float ss = 0;
			for (uint64_t i = 0; i < d; i++)
				ss += xr[i] * xr[i];
			float inv = 1.0f / sqrtf(ss / (float)d + (float)s->eps);
			for (uint64_t i = 0; i < d; i++)
				yr[i] = xr[i] * inv * g[i];
		}
	}
}

/* Rotates n heads of hd values at position p (Hugging Face rotate-half). */
static void rope(const struct kv_engine *e, float *x, uint32_t n, uint64_t p)
{
	uint32_t hd = e->s.hd, half = hd / 2;
	const float *cs = e->rope + p * half * 2;
	for (uint32_t h = 0; h < n; h++, x += hd)
		for (uint32_t i = 0; i < half; i++) {
			float c = cs[2 * i], sn = cs[2 * i + 1];
			float a = x[i], b = x[i + half];
			x[i] = a * c - b * sn;
			x[i + half] = b * c + a * sn;
		}
}

/* The encoded K (or V, kv = 1) row of position p of KV head j of
 * sequence u on layer l, in the cache or (no cache) the chunk's own: the
 * rows from p to the end of p's block (of the whole context when not
 * paged) follow it, krow or vrow bytes apart. The one place that knows
 * the cache's layout. */
static uint8_t *kv_rows(const struct kv_engine *e, uint32_t l, uint64_t u,
			uint32_t j, int kv, bool cache, uint64_t p)
{
	const struct shape *s = &e->s;
	uint64_t per = s->users * s->kv_heads, head = u * s->kv_heads + j;
	uint64_t row = kv ? s->f.vrow : s->f.krow;
	if (!cache)
		return (uint8_t *)e->kvtmp +
		       (uint64_t)kv * per * s->chunk * s->tmprow +
		       (head * s->chunk + p) * row;
	/* rows per head: the context, or the pool's blocks */
	uint64_t slots = s->paged ? s->pool * s->bs : s->ctx;
	if (s->paged) {
		per = s->kv_heads;
		head = j;
		p = (uint64_t)kv_paged_table(e->pages, (uint32_t)u)[p / s->bs] *
			    s->bs +
		    p % s->bs;
	}
	uint64_t krows = per * slots * s->f.krow;
	uint64_t layer = krows + per * slots * s->f.vrow;
	return e->cache + l * layer + (kv ? krows : 0) +
	       (head * slots + p) * row;
}

/* kv_attn_part() over rows in the engine's formats. */
static void attend(const struct kv_engine *e, const float *q, uint32_t g,
		   uint32_t per, const uint8_t *k, const uint8_t *v,
		   uint64_t n, float scale, float *sc, float *o, float *m,
		   float *l)
{
	const struct shape *s = &e->s;
	if (s->f.k == KV_DTYPE_F32 && s->f.v == KV_DTYPE_F32)
		kv_attn_part(q, g, per, (const float *)(const void *)k,
			     (const float *)(const void *)v, n, s->hd, scale,
			     sc, o, m, l, e->simd);
	else
		kv_attnq_part(q, g, per, k, v, &s->f, n, s->hd, scale, sc, o,
			      m, l, e->simd ? KV_ISA_AVX512 : KV_ISA_C);
}

struct attn_job {
	struct kv_engine *e;
	uint32_t layer;
	uint64_t n, pos; /* chunk of n queries per sequence at pos */
	bool cache;
	uint32_t nsplit; /* parts of each (sequence, KV head); n == 1 */
	uint32_t qb;     /* tokens per task */
	uint64_t blocks; /* tasks per (sequence, KV head, part) */
	uint64_t tasks;
	_Atomic uint64_t next;
};

/* The kernel on g query rows (from row r0 of q) over n rows of k and v,
 * its result merged into rows r0.. of o, m, l: the running maximum, then
 * both sums rescaled to it. po holds the kernel's own o, m and l. */
static void merge_block(const struct kv_engine *e, const uint8_t *k,
			const uint8_t *v, const float *q, uint32_t r0,
			uint32_t g, uint32_t per, uint64_t n, float *sc,
			float *o, float *m, float *l, float *po)
{
	uint32_t hd = e->s.hd;
	float *pm = po + (uint64_t)g * hd, *pl = pm + g;
	attend(e, q + (uint64_t)r0 * hd, g, per, k, v, n,
	       1.0f / sqrtf((float)hd), sc, po, pm, pl);
	kv_attn_merge(o + (uint64_t)r0 * hd, m + r0, l + r0, po, pm, pl, g, hd);
}

/* K and V rows [b0, b1) (within one tile) of KV head kh of sequence u
 * on layer l, as one run each: in place when contiguous or when the
 * tile's blocks lie one after another in the pool, else gathered block by
 * block into buf (tile K rows, then tile V rows, as stored). */
static void tile_rows(const struct kv_engine *e, uint32_t l, uint64_t u,
		      uint32_t kh, uint64_t b0, uint64_t b1, uint8_t *buf,
		      const uint8_t **k, const uint8_t **v)
{
	const struct shape *s = &e->s;
	*k = kv_rows(e, l, u, kh, 0, true, b0);
	*v = kv_rows(e, l, u, kh, 1, true, b0);
	if (!s->paged)
		return;
	const uint32_t *t = kv_paged_table(e->pages, (uint32_t)u);
	uint64_t i = b0 / s->bs, last = (b1 - 1) / s->bs;
	while (i < last && t[i + 1] == t[i] + 1)
		i++;
	if (i == last)
		return;
	uint8_t *kb = buf, *vb = buf + s->tile * s->f.krow;
	for (uint64_t p = b0; p < b1;) {
		uint64_t end = (p / s->bs + 1) * s->bs;
		end = end < b1 ? end : b1;
		memcpy(kb + (p - b0) * s->f.krow,
		       kv_rows(e, l, u, kh, 0, true, p),
		       (end - p) * s->f.krow);
		memcpy(vb + (p - b0) * s->f.vrow,
		       kv_rows(e, l, u, kh, 1, true, p),
		       (end - p) * s->f.vrow);
		p = end;
	}
	*k = kb;
	*v = vb;
}

/*
 * g query rows q (tokens of `per` rows; the last token sees positions
 * [a, len), each earlier one a position fewer) of KV head kh of sequence
 * u against those positions: o, m, l as kv_attn_part(). Without blocks,
 * one kernel call over the range. With blocks, the range is walked in
 * tiles of whole blocks (s->tile positions, from position 0), in order;
 * in each, the tokens that see the whole tile attend to it in one call
 * and those that see part of it (their causal edge falls inside it) in
 * another, and each call is merged into o, m, l. The same calls run on
 * the same rows whatever the layout (paged rows gathered when their
 * blocks lie apart), so paged and contiguous agree bitwise.
 */
static void attend_range(const struct kv_engine *e, const struct attn_job *j,
			 uint64_t u, uint32_t kh, const float *q, uint32_t g,
			 uint32_t per, uint64_t a, uint64_t len, float *sc,
			 float *o, float *m, float *l, float *po, uint8_t *tb)
{
	const struct shape *s = &e->s;
	uint32_t hd = s->hd, nt = g / per;
	if (!s->bs || !j->cache) {
		attend(e, q, g, per, kv_rows(e, j->layer, u, kh, 0, j->cache, a),
		       kv_rows(e, j->layer, u, kh, 1, j->cache, a), len - a,
		       1.0f / sqrtf((float)hd), sc, o, m, l);
		return;
	}
	for (uint32_t i = 0; i < g; i++) {
		m[i] = -INFINITY;
		l[i] = 0;
	}
	memset(o, 0, sizeof *o * g * hd);
	for (uint64_t b0 = a; b0 < len;) {
		uint64_t b1 = (b0 / s->tile + 1) * s->tile;
		const uint8_t *k, *v;
		b1 = b1 < len ? b1 : len;
		tile_rows(e, j->layer, u, kh, b0, b1, tb, &k, &v);
		/* token t sees positions below len - (nt - 1 - t): all of
		 * the tile from t = full on, part of it from t = part */
		uint64_t after = len - b1, from = len - b0;
		uint32_t full = after >= nt - 1 ? 0
						: nt - 1 - (uint32_t)after;
		uint32_t part = from >= nt ? 0 : nt - (uint32_t)from;
		if (full < nt)
			merge_block(e, k, v, q, full * per, (nt - full) * per,
				    (nt - full) * per, b1 - b0, sc, o, m, l,
				    po);
		if (part < full)
			merge_block(e, k, v, q, part * per, (full - part) * per,
				    per, len - (nt - full) - b0, sc, o, m, l,
				    po);
		b0 = b1;
	}
}

static void attn_task(void *arg, unsigned tid, unsigned nth)
{
	struct attn_job *j = arg;
	struct kv_engine *e = j->e;
	const struct shape *s = &e->s;
	uint32_t G = s->group, hd = s->hd;
	uint64_t rows = (uint64_t)s->qblock * G; /* most rows of a task */
	float *sc = e->scores + tid * rows * score_width(s);
	float *m = sc + rows * s->ctx, *l = m + rows;
	float *qb = l + rows, *ob = qb + rows * hd; /* (rows, hd) each */
	float *po = ob + rows * hd; /* (rows, hd + 2), with blocks */
	uint8_t *tb = e->tiles ? (uint8_t *)e->tiles + tid * tile_bytes(s)
			       : NULL;
	(void)nth;
	for (;;) {
		uint64_t i = atomic_fetch_add(&j->next, 1);
		if (i >= j->tasks)
			break;
		uint64_t part = i % j->nsplit, r = i / j->nsplit;
		uint64_t t0 = r % j->blocks * j->qb;
		uint64_t t1 = t0 + j->qb < j->n ? t0 + j->qb : j->n;
		r /= j->blocks;
		uint32_t kh = (uint32_t)(r % s->kv_heads);
		uint64_t u = r / s->kv_heads, row = u * j->n + t0;
		uint64_t len = j->pos + t1; /* the last token's positions */
		const float *q = e->qkv + row * s->qkv + (uint64_t)kh * G * hd;
		if (j->nsplit == 1) {
			/* the block's tokens in one group: queries gathered,
			 * K and V read once for all of them */
			uint32_t nt = (uint32_t)(t1 - t0), g = nt * G;
			const float *qq = q;
			if (nt > 1)
				for (uint32_t t = 0; t < nt; t++)
					memcpy(qb + (uint64_t)t * G * hd,
					       q + t * s->qkv,
					       (size_t)G * hd * sizeof *qb);
			qq = nt > 1 ? qb : q;
			float *o = nt > 1 ? ob
					  : e->att + row * s->att +
						    (uint64_t)kh * G * hd;
			attend_range(e, j, u, kh, qq, g, G, 0, len, sc, o, m,
				     l, po, tb);
			for (uint32_t t = 0; t < nt; t++) {
				float *dst = e->att + (row + t) * s->att +
					     (uint64_t)kh * G * hd;
				const float *src = o + (uint64_t)t * G * hd;
				for (uint32_t h = 0; h < G; h++)
					for (uint32_t d = 0; d < hd; d++)
						dst[h * hd + d] =
							src[h * hd + d] /
							l[t * G + h];
			}
			continue;
		}
		uint64_t a = len * part / j->nsplit;
		uint64_t b = len * (part + 1) / j->nsplit;
		if (s->bs && j->cache) { /* parts of whole tiles */
			uint64_t nb = (len + s->tile - 1) / s->tile;
			a = nb * part / j->nsplit * s->tile;
			b = nb * (part + 1) / j->nsplit * s->tile;
			b = b < len ? b : len;
		}
		float *o = e->part + i * G * (hd + 2);
		float *pm = o + (uint64_t)G * hd, *pl = pm + G;
		if (b > a) {
			attend_range(e, j, u, kh, q, G, G, a, b, sc, o, pm, pl,
				     po, tb);
		} else { /* an empty part weighs nothing */
			for (uint32_t g = 0; g < G; g++) {
				pm[g] = -INFINITY;
				pl[g] = 0;
			}
		}
	}
}

/* Merges the parts of a split decode step into att. */
static void merge_parts(struct kv_engine *e, uint32_t nsplit)
{
	const struct shape *s = &e->s;
	uint32_t G = s->group, hd = s->hd;
	for (uint64_t r = 0; r < s->users * s->kv_heads; r++) {
		uint64_t u = r / s->kv_heads;
		uint32_t kh = (uint32_t)(r % s->kv_heads);
		kv_attn_merge_parts(e->att + u * s->att +
					    (uint64_t)kh * G * hd,
				    e->part + r * nsplit * (uint64_t)G *
						      (hd + 2),
				    nsplit, G, hd);
	}
}

static void attention(struct kv_engine *e, uint32_t layer, uint64_t n,
		      uint64_t pos, bool cache)
{
	const struct shape *s = &e->s;
	struct attn_job j = {e, layer, n, pos, cache, 1, 1, n, 0, 0};
	/* split a single query over positions when there are few heads and
	 * enough positions for each part to be worth a thread */
	if (n == 1 && s->nsplit > 1 && pos + 1 >= 256ULL * s->nsplit)
		j.nsplit = s->nsplit;
	if (n > 1) {
		j.qb = s->qblock;
		j.blocks = (n + j.qb - 1) / j.qb;
	}
	j.tasks = s->users * s->kv_heads * j.blocks * j.nsplit;
	atomic_init(&j.next, 0);
	kv_pool_run(e->pool, attn_task, &j);
	if (j.nsplit > 1)
		merge_parts(e, j.nsplit);
}

/* Writes the chunk's K and V (after rotation) where attention reads them. */
static void store_kv(struct kv_engine *e, uint32_t layer, uint64_t n,
		     uint64_t pos, bool cache)
{
	const struct shape *s = &e->s;
	uint64_t hd = s->hd;
	for (uint64_t u = 0; u < s->users; u++)
		for (uint64_t t = 0; t < n; t++) {
			float *row = e->qkv + (u * n + t) * s->qkv;
			if (!s->gpt2)
				rope(e, row, s->heads + s->kv_heads, pos + t);
			const float *kk = row + s->att;
			const float *vv = kk + (uint64_t)s->kv_heads * hd;
			uint64_t p = cache ? pos + t : t;
			for (uint32_t j = 0; j < s->kv_heads; j++) {
				kv_quant_encode(s->f.k, kk + j * hd,
						(uint32_t)hd,
						kv_rows(e, layer, u, j, 0,
							cache, p));
				kv_quant_encode(s->f.v, vv + j * hd,
						(uint32_t)hd,
						kv_rows(e, layer, u, j, 1,
							cache, p));
			}
		}
}

/* Cuts every sequence back to pos positions and gives it blocks for n
 * more, paged. */
static int take_blocks(struct kv_engine *e, const uint32_t *tokens,
		       uint64_t n, uint64_t pos)
{
	int rc;
	for (uint32_t u = 0; u < e->s.users; u++)
		if (pos > kv_paged_len(e->pages, u))
			return KV_EINVAL;
	for (uint32_t u = 0; u < e->s.users; u++)
		if ((rc = kv_paged_truncate(e->pages, u, pos)) ||
		    (rc = kv_paged_append(e->pages, u,
					  tokens ? tokens + u * n : NULL, n)))
			return rc;
	return 0;
}

int kv_engine_forward(struct kv_engine *e, const uint32_t *tokens,
		      uint64_t n, uint64_t pos, bool cache, float *logits)
{
	const struct shape *s = &e->s;
	if (n == 0 || n > s->chunk || pos > s->ctx - n ||
	    (cache && !e->cache) || (!cache && pos != 0))
		return KV_EINVAL;
	for (uint64_t i = 0; i < s->users * n; i++)
		if (tokens[i] >= s->vocab)
			return KV_EINVAL;
	int rc;
	if (cache && s->paged && (rc = take_blocks(e, tokens, n, pos)))
		return rc;
	uint64_t rows = s->users * n, d = s->dim;
	/* embeddings */
	for (uint64_t r = 0; r < rows; r++) {
		uint64_t tok = tokens[r];
		float *x = e->x + r * d;
		memcpy(x, e->wte + tok * d, d * sizeof *x);
		if (s->gpt2) {
			const float *p = e->wpe + (pos + r % n) * d;
			for (uint64_t i = 0; i < d; i++)
				x[i] += p[i];
		}
	}
	for (uint32_t l = 0; l < s->layers; l++) {
		const struct layer_w *w = &e->lw[l];
		norm_rows(s, e->x, e->xn, rows, 1, w->ln1_g, w->ln1_b);
		if (s->mla) {
			kv_mla_attention(&e->mla, &w->mla, l, e->xn, e->qkv,
					 e->att, n, pos, cache);
		} else {
			kv_linear(&e->ops, e->xn, rows, d, w->w_qkv, w->b_qkv, e->qkv,
			       s->qkv, 0, KV_ACT_NONE, NULL, NULL);
			store_kv(e, l, n, pos, cache);
			attention(e, l, n, pos, cache);
		}
		kv_linear(&e->ops, e->att, rows, s->att, w->w_o, w->b_o, e->x, d, 1,
		       KV_ACT_NONE, NULL, NULL);
		norm_rows(s, e->x, e->xn, rows, 1, w->ln2_g, w->ln2_b);
		if (s->gpt2)
			kv_linear(&e->ops, e->xn, rows, d, w->w_up, w->b_up, e->h,
			       s->ffn, 0, KV_ACT_GELU, NULL, NULL);
		else
			kv_linear(&e->ops, e->xn, rows, d, w->w_up, w->b_up, e->h,
			       s->ffn, 0, KV_ACT_SWIGLU, w->w_gate, w->b_gate);
		kv_linear(&e->ops, e->h, rows, s->ffn, w->w_down, w->b_down, e->x, d,
		       1, KV_ACT_NONE, NULL, NULL);
	}
	/* the last token of each sequence through the final norm and head */
	norm_rows(s, e->x + (n - 1) * d, e->xn, s->users, n, e->lnf_g,
		  e->lnf_b);
	kv_linear(&e->ops, e->xn, s->users, d, e->head, NULL, logits, s->vocab, 0,
	       KV_ACT_NONE, NULL, NULL);
	if (e->logit_scale != 1)
		for (uint64_t i = 0; i < s->users * s->vocab; i++)
			logits[i] *= e->logit_scale;
	e->passes[cache] += n;
	return 0;
}

int kv_engine_attend(struct kv_engine *e, uint64_t pos)
{
	if (!e->cache || pos >= e->s.ctx)
		return KV_EINVAL;
	for (uint32_t u = 0; e->s.paged && u < e->s.users; u++)
		if (pos >= kv_paged_len(e->pages, u))
			return KV_EINVAL;
	if (e->s.mla) {
		kv_mla_attend(&e->mla, pos);
		return 0;
	}
	for (uint32_t l = 0; l < e->s.layers; l++)
		attention(e, l, 1, pos, true);
	return 0;
}

struct fill_job {
	struct kv_engine *e;
	uint64_t ctx, key;
};

/* Head h of (layer, K or V, user, KV head) gets the values of stream
 * indices h ctx hd + t hd + d, encoded a row at a time through a row of
 * the thread's scratch. */
static void fill_task(void *arg, unsigned tid, unsigned nth)
{
	const struct fill_job *j = arg;
	const struct kv_engine *e = j->e;
	const struct shape *s = &e->s;
	/* runs of ctx rows: a KV head's K or V, or an MLA layer's latents */
	uint64_t per = s->users * s->kv_heads;
	uint64_t heads = (uint64_t)s->layers * 2 * per;
	uint64_t hd = s->hd;
	if (s->mla) {
		heads = (uint64_t)s->layers * s->users;
		hd = (uint64_t)s->md.rank + s->md.rope;
	}
	uint64_t a = heads * tid / nth, b = heads * (tid + 1) / nth;
	/* a row of values, in the thread's attention scratch */
	float *x = s->mla ? NULL
			  : e->scores + tid * (uint64_t)s->qblock * s->group *
						score_width(s);
	for (uint64_t h = a; h < b; h++) {
		if (s->mla) { /* a layer's latents, contiguous f32 */
			float *p = (float *)(void *)e->cache + h * s->ctx * hd;
			for (uint64_t i = 0; i < j->ctx * hd; i++)
				p[i] = kv_rand_sym(j->key, h * s->ctx * hd + i);
			continue;
		}
		/* h is (layer, K/V, user, KV head): the same values in
		 * every layout and format */
		uint32_t l = (uint32_t)(h / (2 * per));
		int kv = (int)(h / per % 2);
		uint64_t r = h % per;
		for (uint64_t t = 0; t < j->ctx; t++) {
			uint64_t i0 = (h * s->ctx + t) * s->hd;
			for (uint32_t d = 0; d < s->hd; d++)
				x[d] = kv_rand_sym(j->key, i0 + d);
			kv_quant_encode(kv ? s->f.v : s->f.k, x, s->hd,
					kv_rows(e, l, r / s->kv_heads,
						(uint32_t)(r % s->kv_heads),
						kv, true, t));
		}
	}
}

/* Gives every sequence blocks for ctx positions, a block per sequence in
 * turn, as sequences decoded together take them: with several users the
 * blocks of each interleave in the pool. */
static int take_blocks_in_turn(struct kv_engine *e, uint64_t ctx)
{
	int rc;
	for (uint32_t u = 0; u < e->s.users; u++)
		kv_paged_release(e->pages, u);
	for (uint64_t p = 0; p < ctx; p += e->s.bs)
		for (uint32_t u = 0; u < e->s.users; u++) {
			uint64_t n = ctx - p < e->s.bs ? ctx - p : e->s.bs;
			if ((rc = kv_paged_append(e->pages, u, NULL, n)))
				return rc;
		}
	return 0;
}

int kv_engine_fill_cache(struct kv_engine *e, uint64_t ctx, uint64_t seed)
{
	if (!e->cache || ctx > e->s.ctx)
		return KV_EINVAL;
	int rc;
	if (e->s.paged && (rc = take_blocks_in_turn(e, ctx)))
		return rc;
	struct fill_job j = {e, ctx, kv_rand_key(seed, KV_STREAM_CACHE)};
	kv_pool_run(e->pool, fill_task, &j);
	return 0;
}

uint64_t kv_engine_weight_read_bytes(const struct kv_engine *e)
{
	const struct shape *s = &e->s;
	/* nothing here overflows: the engine's allocation, which holds all
	 * of it, was computed with checks */
	uint64_t layer = (s->mla ? kv_mla_layer_floats(&s->md)
				 : s->dim * s->qkv) +
			 s->att * s->dim +
			 s->dim * s->ffn * (s->gpt2 ? 1 : 2) + s->ffn * s->dim;
	layer += s->dim * (s->gpt2 ? 4 : 2); /* norms */
	if (s->qkv_bias)
		layer += s->qkv;
	if (s->o_bias)
		layer += s->dim;
	if (s->mlp_bias)
		layer += s->ffn * (s->gpt2 ? 1 : 2) + s->dim;
	uint64_t total = layer * s->layers + s->dim * (s->gpt2 ? 2 : 1) +
			 s->dim * s->vocab;
	return total * sizeof(float);
}

uint64_t kv_engine_cache_read_bytes(const struct kv_engine *e, uint64_t pos)
{
	uint64_t per = e->s.mla ? (uint64_t)e->s.layers *
					  (e->s.md.rank + e->s.md.rope) *
					  sizeof(float)
				: (uint64_t)e->s.layers * e->s.kv_heads *
					  (e->s.f.krow + e->s.f.vrow);
	return per * e->s.users * (pos + 1);
}

double kv_engine_flops(const struct kv_engine *e, uint64_t n, uint64_t pos)
{
	const struct shape *s = &e->s;
	double rows = (double)s->users * (double)n;
	double mat = (s->mla ? kv_mla_row_macs(&s->md)
			     : (double)s->dim * (double)s->qkv) +
		     (double)s->att * (double)s->dim +
		     (double)s->dim * (double)s->ffn * (s->gpt2 ? 1 : 2) +
		     (double)s->ffn * (double)s->dim;
	/* query t attends to pos + t + 1 positions: sum over the chunk */
	double seen = (double)n * (double)pos + (double)n * (double)(n + 1) / 2;
	/* MLA: the absorbed form with a cache, the plain one without */
	double head = s->mla ? kv_mla_pos_macs(&s->md, s->cache) / 2
			     : (double)s->hd;
	double attn = 2.0 * s->heads * head * seen * s->users;
	return 2.0 * (mat * rows * s->layers + attn * s->layers +
		      (double)s->dim * (double)s->vocab * s->users);
}

double kv_engine_attend_flops(const struct kv_engine *e, uint64_t pos)
{
	const struct shape *s = &e->s;
	/* q k and the weighted sum of v over pos + 1 positions, every head;
	 * MLA: q c and the weighted sum of latents */
	double head = s->mla ? kv_mla_pos_macs(&s->md, true)
			     : 2.0 * (double)s->hd;
	return 2.0 * s->heads * head * (double)(pos + 1) * s->users *
	       s->layers;
}

uint64_t kv_engine_users(const struct kv_engine *e)
{
	return e->s.users;
}

uint64_t kv_engine_passes(const struct kv_engine *e, bool cache)
{
	return e->passes[cache];
}

const struct kv_model *kv_engine_get_model(const struct kv_engine *e)
{
	return e->model;
}

uint64_t kv_engine_vocab(const struct kv_engine *e)
{
	return e->s.vocab;
}

uint64_t kv_engine_cache_bytes(const struct kv_engine *e)
{
	return e->cache ? e->cache_bytes : 0;
}

uint64_t kv_engine_cache_token_bytes(const struct kv_engine *e)
{
	if (e->s.paged)
		return e->cache_bytes / (e->s.pool * e->s.bs);
	return e->cache ? e->cache_bytes / (e->s.users * e->s.ctx) : 0;
}

uint64_t kv_engine_block_bytes(const struct kv_engine *e)
{
	return e->s.paged ? e->cache_bytes / e->s.pool : 0;
}

void kv_engine_paged_stats(const struct kv_engine *e,
			   struct kv_paged_stats *st)
{
	memset(st, 0, sizeof *st);
	if (e->pages)
		kv_paged_get_stats(e->pages, st);
}

int kv_engine_prefix_match(struct kv_engine *e, uint32_t user,
			   const uint32_t *tokens, uint64_t n,
			   uint64_t *cached)
{
	*cached = 0;
	if (!e->s.paged || user >= e->s.users || n > e->s.ctx)
		return KV_EINVAL;
	*cached = kv_paged_match(e->pages, user, tokens, n);
	return 0;
}

int kv_engine_prefill(struct kv_engine *e, const uint32_t *tokens,
		      uint64_t n, uint64_t pos, float *logits)
{
	const struct shape *s = &e->s;
	uint64_t U = s->users;
	if (n == 0)
		return KV_EINVAL;
	if (!s->bs && (U == 1 || n <= s->chunk)) {
		/* contiguous text: chunks of max_chunk in place */
		for (uint64_t done = 0; done < n;) {
			uint64_t c = n - done < s->chunk ? n - done : s->chunk;
			int rc = U == 1 ? kv_engine_forward(e, tokens + done, c,
							    pos + done, true,
							    logits)
					: kv_engine_forward(e, tokens, c, pos,
							    true, logits);
			if (rc)
				return rc;
			done += c;
		}
		return 0;
	}
	if (!s->bs)
		return KV_EINVAL;
	for (uint64_t done = 0; done < n;) {
		uint64_t p = pos + done, c = n - done;
		uint64_t edge = (p / s->bs + 1) * s->bs - p;
		c = c < edge ? c : edge;
		c = c < s->chunk ? c : s->chunk;
		for (uint64_t u = 0; u < U; u++)
			memcpy(e->tokbuf + u * c, tokens + u * n + done,
			       c * sizeof *tokens);
		int rc = kv_engine_forward(e, e->tokbuf, c, p, true, logits);
		if (rc)
			return rc;
		done += c;
	}
	return 0;
}

bool kv_engine_set_simd(struct kv_engine *e, bool on)
{
	e->simd = on;
	e->ops.simd = on;
	e->mla.simd = on;
	if (e->s.mla)
		return kv_mla_has_simd(e->s.md.rank, e->s.md.rope);
	if (e->s.f.k == KV_DTYPE_F32 && e->s.f.v == KV_DTYPE_F32)
		return kv_attn_has_simd(e->s.hd);
	return kv_attnq_has_simd(e->s.hd);
}
