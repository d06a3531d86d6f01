/*
 * params.h - how many parameters a model has, derived from its config, and
 * how many bytes its weights take in a storage format. kvfit needs the
 * weights to know what is left for the KV cache, and a count a user can
 * check against the published size is worth more than a typed-in guess.
 *
 * What is counted, per layer: the attention projections (q, k, v, o with
 * GQA, or MLA's q_a/q_b, kv_a_proj_with_mqa, kv_b_proj and o, with their
 * norms), biases where the family has them, the MLP (gated: 3 matrices,
 * plain: 2), MoE routers, routed and shared experts, a Mamba mixer on
 * Jamba's attention-free layers, and the norms (RMSNorm: a weight;
 * LayerNorm: a weight and a bias). Outside the layers: the token embedding,
 * learned positions (GPT-2), the final norm and the output head when it is
 * not tied. DeepSeek's multi-token-prediction layers are reported apart
 * (`mtp`) and are not in `total`, as they are not in the published 671B.
 */
#ifndef KV_PARAMS_H
#define KV_PARAMS_H

#include "model.h"

/* Parameters of a model, or of one layer. Counts, not bytes. */
struct kv_params {
	uint64_t total;   /* parameters stored */
	uint64_t active;  /* parameters one token uses (MoE: top-k experts) */
	uint64_t routed;  /* of total: routed experts, all of them */
	uint64_t embed;   /* token embedding + learned positions (model) */
	uint64_t head;    /* untied output head, 0 when tied (model) */
	uint64_t mtp;     /* multi-token-prediction layers, not in total */
	uint64_t bytes;   /* of total, as the checkpoint stores them: its
			   * quantization_config's formats, scales
			   * included, the rest in its dtype */
	uint32_t experts; /* routed experts per MoE layer (layer) */
	uint32_t experts_active; /* routed experts per token (layer) */
	uint64_t mlp;     /* of total: the dense MLP, or a MoE layer's shared
			   * experts, those an engine may split apart from
			   * attention (layer) */
	uint64_t mlp_bytes, routed_bytes; /* of bytes: the mlp's and the
			   * routed experts', as stored (layer) */
};

/* Parameters of decoder layer i (embed, head and mtp stay 0). Returns 0 or
 * KV_ERANGE. */
int kv_layer_params(const struct kv_model *m, uint32_t i,
		    struct kv_params *p);

/* The same, the matrices stored as q says rather than the config's own
 * quantization (bytes only differ). */
int kv_layer_params_as(const struct kv_model *m, const struct kv_quant *q,
		       uint32_t i, struct kv_params *p);

/* Parameters outside the decoder layers that the first pipeline stage
 * holds (embeddings) and the last one holds (final norm, output head). */
int kv_model_edge_params(const struct kv_model *m, uint64_t *first,
			 uint64_t *last);

/* The same, with the bytes the checkpoint stores each part in (see
 * kv_params.bytes), its matrices as q says (NULL: its own). */
int kv_model_edge_bytes(const struct kv_model *m, const struct kv_quant *q,
			uint64_t *first, uint64_t *last, uint64_t *first_bytes,
			uint64_t *last_bytes);

/* Of the first stage's, the tables a decode step looks one row a token
 * up in rather than reads whole: the input embedding where the head is
 * its own matrix (a tied one is read whole, as the head), and learned
 * positions. Parameters and bytes as kv_model_edge_bytes() counts them. */
int kv_model_lookup_bytes(const struct kv_model *m, const struct kv_quant *q,
			  uint64_t *params, uint64_t *bytes);

/* Parameters of the whole model. Returns 0, or KV_ERANGE with err filled. */
int kv_model_params(const struct kv_model *m, struct kv_params *p,
		    char *err);

/* The same, the matrices stored as q says. */
int kv_model_params_as(const struct kv_model *m, const struct kv_quant *q,
		       struct kv_params *p, char *err);

/*
 * The counts above for one model, its matrices stored as one format says,
 * derived once. kv_fit_solve() asks every layer's count on each call, and
 * a caller that solves one model many times (a --calibrate fit, the time
 * model's probes, --solve ctx and tp) spent most of its time deriving
 * them again, each matrix named and matched against the quantization's
 * list of modules left as they are. The memo points at m and q, which
 * must outlive it and not change; it owns `layers`.
 */
struct kv_params_memo {
	const struct kv_model *m; /* counted (not owned); NULL: empty */
	const struct kv_quant *q; /* the matrices' format (not owned) */
	struct kv_params model;   /* kv_model_params(m): m's own format */
	uint64_t first, last;     /* kv_model_edge_bytes(m, q): parameters */
	uint64_t first_bytes, last_bytes; /* and bytes */
	uint64_t lookup, lookup_bytes; /* kv_model_lookup_bytes(m, q) */
	struct kv_params *layers; /* (m->n_layers) kv_layer_params_as(m, q,
				     i) */
};

/* Derives m's counts, its matrices as q says (NULL: its own), into c:
 * each equal to what the function named beside its field returns.
 * Returns 0; or KV_ENOMEM, or the KV_ERANGE of a count that overflows,
 * with c empty (those functions, called directly, say which). */
int kv_params_memo_init(struct kv_params_memo *c, const struct kv_model *m,
			const struct kv_quant *q);

/* Whether c holds the counts of m with its matrices as q says (NULL: its
 * own). */
bool kv_params_memo_of(const struct kv_params_memo *c,
		       const struct kv_model *m, const struct kv_quant *q);

/* Frees c's layers and empties it; an empty memo, or NULL, is a no-op. */
void kv_params_memo_free(struct kv_params_memo *c);

/* Bytes of n parameters stored in format t: n x bytes per value, block
 * formats counted in whole blocks of 32 (int4 and q4_0: 18 bytes per 32
 * values, q8_0 34). Per-row or per-tensor scales of int8/fp8 weights are
 * not counted (a few bytes per row). Returns 0, KV_EINVAL or KV_ERANGE. */
int kv_weight_bytes(uint64_t n, enum kv_dtype t, uint64_t *out);

#endif
