/*
 * params.c - parameter counts from a config, module by module as the
 * reference implementations (Transformers' modeling files) build them, so
 * that the count of a shipped config can be checked against the published
 * size of the model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/params.h"

/* An accumulator of parameters, and of the bytes the checkpoint stores
 * them in, that remembers an overflow. */
struct acc {
	uint64_t n;
	int err;
	const struct kv_model *m; /* NULL: parameters only */
	const struct kv_quant *q; /* how the matrices are stored */
	uint32_t layer;           /* of the modules named */
	bool expert;              /* a routed expert's matrices */
	uint64_t bytes;           /* as stored (rest_dtype, quantization) */
};

/* What a checkpoint keeps its unquantized parts in: its dtype; a
 * quantized one that names none, or names float32, keeps them in bf16,
 * but MLX's, which mlx-lm's convert casts to the torch_dtype named,
 * float32 too (mlx_lm/convert.py, since commit 5c04f07f; before it,
 * float16, as many bytes as bf16). */
static enum kv_dtype rest_dtype(const struct acc *a)
{
	bool quant = a->q->fmt != KV_QUANT_NONE &&
		     a->q->fmt != KV_QUANT_UNKNOWN;
	bool f32 = !a->m->dtype_given ||
		   (a->m->dtype == KV_DTYPE_F32 && a->q->fmt != KV_QUANT_MLX);
	return quant && f32 ? KV_DTYPE_BF16 : a->m->dtype;
}

/* a->n += x * y: parameters stored in t */
static void mac_in(struct acc *a, uint64_t x, uint64_t y, enum kv_dtype t)
{
	uint64_t p, b;
	if (kv_mul(x, y, &p) || kv_add(a->n, p, &a->n))
		a->err = KV_ERANGE;
	else if (a->m && (kv_weight_bytes(p, t, &b) ||
			  kv_add(a->bytes, b, &a->bytes)))
		a->err = KV_ERANGE;
}

/* a->n += x * y: parameters kept as the checkpoint's dtype (norms,
 * biases, routers, convolutions, embeddings) */
static void mac(struct acc *a, uint64_t x, uint64_t y)
{
	mac_in(a, x, y, a->m ? rest_dtype(a) : KV_DTYPE_F32);
}

/* The matrix of the module `name`, k inputs to n outputs, stored as the
 * quantization says. */
static void matrix(struct acc *a, const char *name, uint64_t k, uint64_t n)
{
	uint64_t p, b;
	if (kv_mul(k, n, &p) || kv_add(a->n, p, &a->n)) {
		a->err = KV_ERANGE;
		return;
	}
	if (a->m && (kv_quant_matrix_bytes(a->q, name, a->expert, k, n,
					   rest_dtype(a), &b) ||
		     kv_add(a->bytes, b, &a->bytes)))
		a->err = KV_ERANGE;
}

/* The matrix of a linear layer, k inputs to n outputs, named as the
 * checkpoint names the module ("self_attn.q_proj", or "mlp" and
 * "gate_proj" apart): what a quantization_config quantizes. The name is
 * only written out where a list of modules (left as they are, or MLX's
 * of their own format) needs it. */
static void lin2(struct acc *a, const char *mod, const char *module,
		 uint64_t k, uint64_t n)
{
	char name[160] = "";
	if (a->m && (a->q->n_ignore || a->q->n_rules))
		snprintf(name, sizeof name, "model.layers.%u.%s%s%s", a->layer,
			 mod ? mod : "", mod ? "." : "", module);
	matrix(a, name, k, n);
}

static void lin(struct acc *a, const char *module, uint64_t k, uint64_t n)
{
	lin2(a, NULL, module, k, n);
}

/* A matrix that the engines' quantizations keep in the dtype (a router,
 * a gate of one output) but MLX quantizes as every other nn.Linear. */
static void kept_lin(struct acc *a, const char *module, uint64_t k,
		     uint64_t n)
{
	if (a->m && a->q->tables)
		lin(a, module, k, n);
	else
		mac(a, k, n);
}

/* A table of `rows` vectors of `width` (the token embedding, learned
 * positions, the output head), the module `name`: in the dtype, or a
 * matrix of `width` inputs where the format quantizes it (MLX's
 * QuantizedEmbedding, its lm_head an nn.Linear). */
static void table(struct acc *a, const char *name, uint64_t rows,
		  uint64_t width)
{
	if (a->m && a->q->tables)
		matrix(a, name, width, rows);
	else
		mac(a, rows, width);
}

/* Parameters of one norm over `width` values. */
static uint64_t norm(const struct kv_model *m, uint64_t width)
{
	return m->layernorm ? 2 * width : width;
}

/* Norms around each decoder layer: Gemma 2 and 3 norm both sides of the
 * attention and of the MLP; Falcon's parallel block reads one norm. */
static uint64_t layer_norms(const struct kv_model *m)
{
	if (!strncmp(m->model_type, "gemma2", 6) ||
	    !strncmp(m->model_type, "gemma3", 6))
		return 4;
	if (m->parallel_block)
		return 1;
	return 2;
}

/* DeepSeek's router and its kin's (GLM-4.5's glm4_moe, GLM-4.7-Flash's
 * glm4_moe_lite): mlx-lm's MoEGate, a bare weight it does not quantize
 * (mlx_lm/models/deepseek_v3.py, glm4_moe.py). */
static bool moe_gate(const struct kv_model *m)
{
	return m->family == KV_FAMILY_DEEPSEEK ||
	       !strncmp(m->model_type, "glm4_moe", 8);
}

/* The router, hidden to a logit per expert, and what it adds: gpt-oss's
 * bias; DeepSeek-V3's and GLM's e_score_correction_bias, which mlx-lm's
 * convert leaves in float32 (their cast_predicate). */
static void router(struct acc *a, const struct kv_model *m)
{
	bool mlx = a->q->fmt == KV_QUANT_MLX;
	if (moe_gate(m))
		mac(a, m->hidden, m->n_experts);
	else
		kept_lin(a, "mlp.gate", m->hidden, m->n_experts);
	if (m->family == KV_FAMILY_GPT_OSS)
		mac(a, 1, m->n_experts);
	else if (!strcmp(m->model_type, "deepseek_v3") ||
		 !strncmp(m->model_type, "glm4_moe", 8))
		mac_in(a, 1, m->n_experts,
		       mlx ? KV_DTYPE_F32 : rest_dtype(a));
}

/* One MLP of width ffn: gated (gate, up, down) or plain (up, down);
 * `mod` names it ("mlp", "mlp.shared_experts"). */
static void mlp(struct acc *a, const struct kv_model *m, const char *mod,
		uint64_t ffn, bool bias)
{
	if (m->gated_mlp)
		lin2(a, mod, "gate_proj", m->hidden, ffn);
	lin2(a, mod, "up_proj", m->hidden, ffn);
	lin2(a, mod, "down_proj", ffn, m->hidden);
	if (bias)
		mac(a, 1, ffn * (m->gated_mlp ? 2 : 1) + m->hidden);
}

/* Multi-head latent attention (DeepSeek V2/V3). */
static void mla(struct acc *a, const struct kv_model *m, uint64_t heads)
{
	uint64_t qk = (uint64_t)m->qk_nope_dim + m->qk_rope_dim;
	if (m->q_lora_rank) {
		lin(a, "self_attn.q_a_proj", m->hidden, m->q_lora_rank);
		mac(a, 1, m->q_lora_rank);              /* q_a_layernorm */
		lin(a, "self_attn.q_b_proj", m->q_lora_rank, heads * qk);
	} else {
		lin(a, "self_attn.q_proj", m->hidden, heads * qk);
	}
	lin(a, "self_attn.kv_a_proj_with_mqa", m->hidden,
	    (uint64_t)m->kv_lora_rank + m->qk_rope_dim);
	mac(a, 1, m->kv_lora_rank);                     /* kv_a_layernorm */
	lin(a, "self_attn.kv_b_proj", m->kv_lora_rank,
	    heads * (m->qk_nope_dim + m->v_head_dim));
	lin(a, "self_attn.o_proj", heads * m->v_head_dim, m->hidden);
}

/* Attention with GQA: q (through a low rank where q_lora_rank says), k,
 * v, o, their biases and the q/k norms. */
static void attention(struct acc *a, const struct kv_model *m,
		      const struct kv_layer *l)
{
	uint64_t q = (uint64_t)l->q_heads * m->head_dim;
	uint64_t k = (uint64_t)l->kv_heads * l->head_dim_k;
	uint64_t v = (uint64_t)l->kv_heads * l->head_dim_v;
	if (m->q_lora_rank) { /* Step3: q_proj, inter_norm, wq */
		lin(a, "self_attn.q_proj", m->hidden, m->q_lora_rank);
		mac(a, 1, m->q_lora_rank);
		lin(a, "self_attn.wq", m->q_lora_rank, q);
	} else { /* with an output gate, q_proj makes it too */
		lin(a, "self_attn.q_proj", m->hidden, m->attn_gate ? 2 * q : q);
	}
	lin(a, "self_attn.k_proj", m->hidden, k);
	lin(a, "self_attn.v_proj", m->hidden, v);
	lin(a, "self_attn.o_proj", (uint64_t)l->q_heads * l->head_dim_v,
	    m->hidden);
	if (m->qkv_bias)
		mac(a, 1, q + k + v);
	if (m->o_bias)
		mac(a, 1, m->hidden);
	if (m->qk_norm)
		mac(a, 2, norm(m, m->head_dim));
	if (m->family == KV_FAMILY_GPT_OSS)
		mac(a, 1, l->q_heads); /* attention sinks, one per head */
}

/* A Mamba-1 mixer (Transformers' MambaMixer and JambaMambaMixer, with
 * the configs' defaults: a biased convolution, unbiased projections);
 * Jamba's adds norms of dt, B and C. */
static void mamba(struct acc *a, const struct kv_model *m)
{
	uint64_t in = m->ssm_d_inner, st = m->ssm_d_state, r = m->ssm_dt_rank;
	lin(a, "mamba.in_proj", m->hidden, 2 * in);
	mac(a, in, m->ssm_d_conv + 1);      /* conv1d weight and bias */
	lin(a, "mamba.x_proj", in, r + 2 * st);
	lin(a, "mamba.dt_proj", r, in);
	mac(a, 1, in);                      /* dt_proj bias */
	mac(a, in, st + 1);                 /* A_log, D */
	lin(a, "mamba.out_proj", in, m->hidden);
	if (m->family == KV_FAMILY_JAMBA)
		mac(a, 1, r + 2 * st);      /* dt, B, C layernorms */
}

/* A gated DeltaNet (Qwen3-Next's, Qwen3.5's): one projection to q, k, v
 * and the gate z, one to each value head's b and a, an unbiased
 * convolution over q, k and v, per-head dt bias and A, a gated norm over
 * a head. */
static void deltanet(struct acc *a, const struct kv_model *m)
{
	uint64_t v = m->ssm_d_inner, h = m->ssm_heads;
	uint64_t k = (uint64_t)m->ssm_groups * m->ssm_d_state;
	lin(a, "linear_attn.in_proj_qkvz", m->hidden, 2 * k + 2 * v);
	lin(a, "linear_attn.in_proj_ba", m->hidden, 2 * h);
	mac(a, 2 * k + v, m->ssm_d_conv);         /* conv1d */
	mac(a, 2, h);                             /* dt_bias, A_log */
	mac(a, 1, v / h);                         /* the gated norm */
	lin(a, "linear_attn.out_proj", v, m->hidden);
}

/* A Mamba-2 mixer (Mamba2Mixer and its Bamba, NemotronH, Granite and
 * Falcon-H1 kin): one projection to z, x, B, C and dt, a biased
 * convolution over x, B and C, per-head dt bias, A and D, a gated norm. */
static void mamba2(struct acc *a, const struct kv_model *m)
{
	uint64_t in = m->ssm_d_inner, h = m->ssm_heads;
	uint64_t bc = 2ULL * m->ssm_groups * m->ssm_d_state;
	lin(a, "mixer.in_proj", m->hidden, 2 * in + bc + h);
	mac(a, in + bc, m->ssm_d_conv + 1); /* conv1d weight and bias */
	mac(a, 3, h);                       /* dt_bias, A_log, D */
	mac(a, 1, in);                      /* the gated RMSNorm */
	lin(a, "mixer.out_proj", in, m->hidden);
}

/* MiniMax's lightning attention: one unbiased projection to q, k and v of
 * every head, an output gate, a norm over all heads, out_proj. */
static void lightning(struct acc *a, const struct kv_model *m)
{
	uint64_t in = m->ssm_d_inner;
	lin(a, "self_attn.qkv_proj", m->hidden, 3 * in);
	lin(a, "self_attn.output_gate", m->hidden, in);
	mac(a, 1, in);             /* norm */
	lin(a, "self_attn.out_proj", in, m->hidden);
}

/* Kimi Linear's KDA: unbiased q, k, v projections, each with a short
 * convolution; the decay's and the output gate's low-rank projections
 * (hidden to a head, a head to all heads), dt bias, beta's projection,
 * A per head, a gated norm over a head, o_proj. */
static void kda(struct acc *a, const struct kv_model *m)
{
	uint64_t in = m->ssm_d_inner, h = m->ssm_heads, d = m->ssm_d_state;
	lin(a, "self_attn.q_proj", m->hidden, in);
	lin(a, "self_attn.k_proj", m->hidden, in);
	lin(a, "self_attn.v_proj", m->hidden, in);
	mac(a, 3 * in, m->ssm_d_conv);    /* q, k, v conv1d */
	lin(a, "self_attn.f_a_proj", m->hidden, d);
	lin(a, "self_attn.f_b_proj", d, in);
	lin(a, "self_attn.g_a_proj", m->hidden, d);
	lin(a, "self_attn.g_b_proj", d, in);
	mac(a, 1, in);                    /* dt_bias */
	lin(a, "self_attn.b_proj", m->hidden, h);
	mac(a, 1, h);                     /* A_log */
	mac(a, 1, d);                     /* o_norm */
	lin(a, "self_attn.o_proj", in, m->hidden);
}

/* RecurrentGemma's recurrent block: biased x and y projections to the
 * LRU's width, a biased depthwise convolution, the RG-LRU's input and
 * recurrence gates (a block-diagonal matrix and a bias per head's block)
 * and its recurrence parameter, a biased out projection. */
static void rglru(struct acc *a, const struct kv_model *m)
{
	uint64_t w = m->ssm_d_inner, bw = w / m->ssm_heads;
	lin(a, "temporal_block.linear_x", m->hidden, w);
	lin(a, "temporal_block.linear_y", m->hidden, w);
	mac(a, 1, 2 * w);                 /* their biases */
	mac(a, w, m->ssm_d_conv + 1);     /* conv_1d */
	mac(a, 2 * w, bw + 1);            /* input and recurrence gates */
	mac(a, 1, w);                     /* recurrent_param */
	lin(a, "temporal_block.linear_out", w, m->hidden);
	mac(a, 1, m->hidden);
}

/* LFM2's short convolution: in_proj to B, C and x, a depthwise
 * convolution, out_proj; biased with conv_bias. */
static void short_conv(struct acc *a, const struct kv_model *m)
{
	uint64_t h = m->hidden, b = m->ssm_bias;
	lin(a, "conv.in_proj", h, 3 * h);
	mac(a, b, 3 * h);              /* its bias */
	mac(a, h, m->ssm_d_conv + b);  /* conv */
	lin(a, "conv.out_proj", h, h);
	mac(a, b, h);
}

/* A Zamba2 attention layer: the shared block it takes in turn, counted
 * at the first n_mem_blocks such layers (attention over the hidden state
 * and the embedding side by side, 2 hidden in; the MLP; a norm of 2
 * hidden and one of hidden), then its own linear and MLP adapter. */
static void zamba2_shared(struct acc *a, const struct kv_model *m,
			  uint32_t i)
{
	const struct kv_layer *l = &m->layers[i];
	uint32_t turn = 0;
	for (uint32_t j = 0; j < i; j++)
		turn += m->layers[j].attn != KV_ATTN_NONE;
	uint64_t q = (uint64_t)l->q_heads * l->head_dim_k;
	uint64_t kv = (uint64_t)l->kv_heads * (l->head_dim_k + l->head_dim_v);
	uint64_t ffn = m->intermediate;
	if (turn < m->n_mem_blocks) {
		lin(a, "shared_transformer.self_attn.qkv", 2 * m->hidden,
		    q + kv);
		lin(a, "shared_transformer.self_attn.o_proj",
		    (uint64_t)l->q_heads * l->head_dim_v, m->hidden);
		mlp(a, m, "shared_transformer.feed_forward", ffn, false);
		mac(a, 3, m->hidden); /* the two norms */
	}
	lin(a, "linear", m->hidden, m->hidden);
	mac(a, m->hidden + 2 * ffn, m->adapter_rank); /* MLP adapter */
}

int kv_layer_params(const struct kv_model *m, uint32_t i,
		    struct kv_params *p)
{
	return kv_layer_params_as(m, &m->quant, i, p);
}

/* The count of layer i. What it reads of i beyond m->layers[i] (the
 * modules' names, Zamba2's turn) kv_params_memo_init() must know of. */
int kv_layer_params_as(const struct kv_model *m, const struct kv_quant *q,
		       uint32_t i, struct kv_params *p)
{
	const struct kv_layer *l = &m->layers[i];
	struct acc a = {.m = m, .q = q, .layer = i};
	*p = (struct kv_params){0};

	switch (l->ssm ? m->ssm_version : 0) {
	case 0: break;
	case 1: mamba(&a, m); break;
	case 2: mamba2(&a, m); break;
	case 3: deltanet(&a, m); break;
	case 4: lightning(&a, m); break;
	case 5: kda(&a, m); break;
	case 6: rglru(&a, m); break;
	default: short_conv(&a, m); break;
	}
	if (l->cross) {
		/* Llama 3.2 Vision's: attention of the model's heads, its q
		 * and k normed, and a gate each on it and on its MLP */
		struct kv_layer x = *l;
		x.q_heads = m->n_heads;
		x.kv_heads = m->n_kv_heads;
		x.head_dim_k = m->head_dim;
		x.head_dim_v = m->head_dim_v;
		attention(&a, m, &x);
		mac(&a, 2, m->head_dim + 1);
	}
	if (l->attn == KV_ATTN_MLA)
		mla(&a, m, l->q_heads);
	else if (l->attn != KV_ATTN_NONE && m->n_mem_blocks)
		zamba2_shared(&a, m, i);
	else if (l->attn != KV_ATTN_NONE)
		attention(&a, m, l);
	/* a layer of one part (a mixer or an MLP alone) has one norm */
	bool mixer = l->ssm || l->cross || l->attn != KV_ATTN_NONE;
	mac(&a, mixer && l->mlp != KV_MLP_NONE ? layer_norms(m) : 1,
	    norm(m, m->hidden));

	uint64_t n0 = a.n, b0 = a.bytes; /* before the MLP */
	if (l->mlp == KV_MLP_DENSE)
		mlp(&a, m, "mlp", l->ffn_dim, m->mlp_bias);
	p->mlp = a.n - n0;
	p->mlp_bytes = a.bytes - b0;
	if (l->mlp != KV_MLP_MOE) {
		p->total = p->active = a.n;
		p->bytes = a.bytes;
		return a.err;
	}
	/* router, shared experts: every token reads them; Qwen's shared
	 * expert is gated (Qwen2-MoE, Qwen3-Next, Qwen3.5: hidden -> 1) */
	router(&a, m);
	n0 = a.n;
	b0 = a.bytes;
	if (m->shared_ffn_dim)
		mlp(&a, m, "mlp.shared_experts", m->shared_ffn_dim, false);
	p->mlp = a.n - n0;
	p->mlp_bytes = a.bytes - b0;
	if (m->shared_ffn_dim && !strncmp(m->model_type, "qwen", 4))
		kept_lin(&a, "mlp.shared_expert_gate", m->hidden, 1);
	struct acc e = {.m = m, .q = q, .layer = i, .expert = true};
	mlp(&e, m, "mlp.experts", l->ffn_dim, m->expert_bias);
	p->experts = m->n_experts;
	p->experts_active = m->n_experts_active;
	if (kv_mul(e.n, m->n_experts, &p->routed) ||
	    kv_add(a.n, p->routed, &p->total) ||
	    kv_mul(e.bytes, m->n_experts, &p->routed_bytes) ||
	    kv_add(p->routed_bytes, a.bytes, &p->bytes))
		return KV_ERANGE;
	p->active = a.n + e.n * m->n_experts_active; /* <= total */
	return a.err ? a.err : e.err;
}

int kv_model_edge_params(const struct kv_model *m, uint64_t *first,
			 uint64_t *last)
{
	uint64_t fb, lb;
	return kv_model_edge_bytes(m, NULL, first, last, &fb, &lb);
}

int kv_model_edge_bytes(const struct kv_model *m, const struct kv_quant *q,
			uint64_t *first, uint64_t *last, uint64_t *first_bytes,
			uint64_t *last_bytes)
{
	if (!q)
		q = &m->quant;
	struct acc f = {.m = m, .q = q}, l = {.m = m, .q = q};
	uint64_t ed = m->embed_dim ? m->embed_dim : m->hidden;
	table(&f, "model.embed_tokens", m->vocab + m->embed_extra, ed);
	if (ed != m->hidden)
		mac(&f, 2 * ed, m->hidden);  /* project_in, project_out */
	table(&f, "model.embed_positions", m->learned_pos, m->hidden);
	if (m->embed_norm)
		mac(&f, 1, norm(m, m->hidden));
	if (!m->no_final_norm)
		mac(&l, 1, norm(m, m->hidden));
	if (!m->tie_embeddings)
		table(&l, "lm_head", m->vocab, ed);
	if (m->head_bias)
		mac(&l, 1, m->vocab);
	*first = f.n;
	*last = l.n;
	*first_bytes = f.bytes;
	*last_bytes = l.bytes;
	return f.err ? f.err : l.err;
}

int kv_model_lookup_bytes(const struct kv_model *m, const struct kv_quant *q,
			  uint64_t *params, uint64_t *bytes)
{
	struct acc a = {.m = m, .q = q ? q : &m->quant};
	uint64_t ed = m->embed_dim ? m->embed_dim : m->hidden;
	if (!m->tie_embeddings)
		table(&a, "model.embed_tokens", m->vocab + m->embed_extra, ed);
	table(&a, "model.embed_positions", m->learned_pos, m->hidden);
	*params = a.n;
	*bytes = a.bytes;
	return a.err;
}

/* One DeepSeek MTP module: two norms and a 2h -> h projection before a
 * decoder layer like the last one, and a norm before the shared head. */
static int mtp_params(const struct kv_model *m, uint64_t *out)
{
	struct kv_params lp;
	struct acc a = {0};
	int e = kv_layer_params(m, m->n_layers - 1, &lp);
	if (e)
		return e;
	mac(&a, 3, norm(m, m->hidden));
	mac(&a, 2 * m->hidden, m->hidden);
	mac(&a, 1, lp.total);
	return kv_mul(a.n, m->n_mtp_layers, out) ? KV_ERANGE : a.err;
}

int kv_model_params(const struct kv_model *m, struct kv_params *p,
		    char *err)
{
	return kv_model_params_as(m, &m->quant, p, err);
}

/* kv_model_params_as, each layer's count from layers (NULL: derived) */
static int model_params(const struct kv_model *m, const struct kv_quant *q,
			const struct kv_params *layers, struct kv_params *p,
			char *err)
{
	uint64_t first, last, fb, lb;
	int e = kv_model_edge_bytes(m, q, &first, &last, &fb, &lb);
	*p = (struct kv_params){0};
	p->embed = first;
	p->head = last - (m->no_final_norm ? 0 : norm(m, m->hidden));
	if (!e && (e = kv_add(first, last, &p->total)) == 0 &&
	    (e = kv_add(fb, lb, &p->bytes)) == 0)
		p->active = p->total;
	for (uint32_t i = 0; !e && i < m->n_layers; i++) {
		struct kv_params lp;
		if (layers)
			lp = layers[i];
		else if ((e = kv_layer_params_as(m, q, i, &lp)))
			break;
		if ((e = kv_add(p->total, lp.total, &p->total)) ||
		    (e = kv_add(p->bytes, lp.bytes, &p->bytes)) ||
		    (e = kv_add(p->active, lp.active, &p->active)) ||
		    (e = kv_add(p->routed, lp.routed, &p->routed)))
			break;
		if (lp.experts) {
			p->experts = lp.experts;
			p->experts_active = lp.experts_active;
		}
	}
	if (!e && m->n_mtp_layers)
		e = mtp_params(m, &p->mtp);
	if (e)
		snprintf(err, KV_ERRLEN,
			 "%s: parameter count overflows 64 bits", m->name);
	return e;
}

int kv_model_params_as(const struct kv_model *m, const struct kv_quant *q,
		       struct kv_params *p, char *err)
{
	return model_params(m, q, NULL, p, err);
}

int kv_params_memo_init(struct kv_params_memo *c, const struct kv_model *m,
			const struct kv_quant *q)
{
	char err[KV_ERRLEN];
	int e;
	*c = (struct kv_params_memo){0};
	if (!q)
		q = &m->quant;
	c->layers = calloc(m->n_layers ? m->n_layers : 1, sizeof *c->layers);
	if (!c->layers)
		return KV_ENOMEM;
	e = kv_model_edge_bytes(m, q, &c->first, &c->last, &c->first_bytes,
				&c->last_bytes);
	if (!e)
		e = kv_model_lookup_bytes(m, q, &c->lookup, &c->lookup_bytes);
	/* a layer counts from its fields and the model's, its index only
	 * naming its modules for an ignore list or MLX's rules and taking
	 * its turn at Zamba2's shared block: one alike byte for byte with
	 * the layer before counts as it does (most models: every layer) */
	bool by_index = q->n_ignore || q->n_rules || m->n_mem_blocks;
	for (uint32_t i = 0; !e && i < m->n_layers; i++)
		if (i && !by_index &&
		    !memcmp(&m->layers[i], &m->layers[i - 1],
			    sizeof m->layers[i]))
			c->layers[i] = c->layers[i - 1];
		else
			e = kv_layer_params_as(m, q, i, &c->layers[i]);
	/* the model's own format: the layers just counted, where q is it */
	if (!e)
		e = model_params(m, &m->quant, q == &m->quant ? c->layers : NULL,
				 &c->model, err);
	if (e) {
		kv_params_memo_free(c);
		return e;
	}
	c->m = m;
	c->q = q;
	return 0;
}

bool kv_params_memo_of(const struct kv_params_memo *c,
		       const struct kv_model *m, const struct kv_quant *q)
{
	return c && c->m && c->m == m && c->q == (q ? q : &m->quant);
}

void kv_params_memo_free(struct kv_params_memo *c)
{
	if (!c)
		return;
	free(c->layers);
	*c = (struct kv_params_memo){0};
}

int kv_weight_bytes(uint64_t n, enum kv_dtype t, uint64_t *out)
{
	const struct kv_dtype_info *d = kv_dtype_info(t);
	if (!d)
		return KV_EINVAL;
	uint64_t blocks = n / d->block + (n % d->block != 0);
	return kv_mul(blocks, d->block_bytes, out);
}
