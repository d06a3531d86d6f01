/*
 * server_util.c - what fit.c and the engines' hooks both ask of a row in
 * progress: a stage's forward pass and its layers' bytes, its Mamba state,
 * and which GPU and model family it is. Below fit.c and every engine's
 * file, so neither calls back into the other.
 */
#include <string.h>

#include "server_int.h"

/* A forward pass of `tokens` tokens at its peak, on one rank: at the MLP
 * the residual and its norm (2 x hidden) and the gate, up and activation
 * (3 x its width / tp; MoE: the top-k experts' and the shared ones'), in
 * 16 bits. An absurd shape is capped (a float past 2^64 has no cast). */
uint64_t fit_forward_bytes(const struct fit_ctx *c, uint64_t tokens)
{
	const struct kv_model *m = c->in->m;
	uint64_t width = m->intermediate;
	if (m->n_experts)
		width = m->layers[m->n_layers - 1].ffn_dim * m->n_experts_active +
			m->shared_ffn_dim;
	double tok = 2.0 * (double)m->hidden + 3.0 * (double)width / c->in->tp;
	double b = (double)tokens * tok * 2;
	return b < 0x1p62 ? (uint64_t)b : (uint64_t)0x1p62;
}

bool fit_layer_bytes(const struct fit_ctx *c, uint32_t i, struct kv_geom *g,
		     uint64_t *tb)
{
	char err[KV_ERRLEN];
	return !kv_layer_geom(c->in->m, i, &c->o, g, err) &&
	       g->attn != KV_ATTN_NONE &&
	       !kv_geom_token_bytes(g, &c->o, tb, err);
}

uint64_t fit_stage_state(const struct fit_ctx *c, const struct fit_stage *s)
{
	uint32_t ssm = 0;
	for (uint32_t i = s->first; i < s->first + s->n; i++)
		ssm += c->in->m->layers[i].ssm;
	return ssm && c->ssm_layers ? c->state / c->ssm_layers * ssm : 0;
}

bool server_gpu_is(const char *gpu, const char *const *names)
{
	for (const char *const *g = names; gpu && *g; g++)
		if (strcasestr(gpu, *g))
			return true;
	return false;
}

bool server_sm100(const char *gpu)
{
	static const char *const names[] = {"b200", "b300", "gb200", "gb300",
					    NULL};
	return server_gpu_is(gpu, names);
}

bool server_type_is(const struct kv_model *m, const char *const *types)
{
	for (const char *const *t = types; *t; t++)
		if (!strcmp(m->model_type, *t))
			return true;
	return false;
}

bool server_arch_is(const struct kv_model *m, const char *const *archs,
		    const char *const *types)
{
	if (!m->arch[0])
		return server_type_is(m, types);
	for (const char *const *a = archs; *a; a++)
		if (!strcmp(m->arch, *a))
			return true;
	return false;
}
