/*
 * offload.c - a host tier of KV cache and the prompt tokens found in a
 * cache tier. The tier holds tokens of every layer of a GPU's share, in
 * the engine's pages (its rule, on its row of server_*.c: vLLM's
 * CPUOffloadingSpec, SGLang's HostKVCache, TensorRT-LLM's secondary
 * pool); a hit is a whole page not computed again, loaded back over the
 * GPU's host link where it came from the host tier.
 */
#include <math.h>
#include <stdio.h>

#include "kv/offload.h"
#include "server_int.h"

/* Whether o asks for a host tier (a size or a ratio). */
static bool tier(const struct kv_offload *o)
{
	return o && (o->bytes || o->ratio > 0);
}

/* The layers a tier of the model holds other than full attention's:
 * "sliding-window", "chunked-attention" or "state-space" (NULL: none). */
static const char *other_layers(const struct kv_model *m)
{
	for (uint32_t i = 0; i < m->n_layers; i++) {
		const struct kv_layer *ly = &m->layers[i];
		if (ly->ssm)
			return "state-space";
		if (ly->attn == KV_ATTN_SLIDING && ly->window)
			return "sliding-window";
		if (ly->attn == KV_ATTN_CHUNKED && ly->window)
			return "chunked-attention";
	}
	return NULL;
}

bool kv_offload_refuses(const struct kv_fit_in *in, char *err)
{
	const struct kv_server *sv = in->server;
	const struct kv_offload *o = in->offload;
	if (!sv || !tier(o))
		return false;
	const struct kv_offload_rules *rl = sv->offload;
	if (!rl) {
		snprintf(err, KV_ERRLEN,
			 "%s: --kv-offload: %s keeps no host tier of KV cache",
			 sv->name, sv->label);
		return true;
	}
	if (o->ratio > 0 && !rl->ratio) {
		snprintf(err, KV_ERRLEN,
			 "%s: --hicache-ratio: SGLang's, a host tier the ratio "
			 "of its GPU pool; %s takes a size (%s): give "
			 "--kv-offload SIZE",
			 sv->name, sv->label, rl->how);
		return true;
	}
	const char *other = other_layers(in->m);
	if (other && rl->one_group) {
		snprintf(err, KV_ERRLEN,
			 "%s: --kv-offload: %s offloads one KV cache group "
			 "(CPUOffloadingSpec: one block size), and %s has "
			 "%s layers",
			 sv->name, sv->label, in->m->name, other);
		return true;
	}
	if (other && rl->plain_only) {
		snprintf(err, KV_ERRLEN,
			 "%s: --kv-offload: %s's host tier of %s layers "
			 "(%s's) is not modelled",
			 sv->name, sv->label, other, in->m->name);
		return true;
	}
	return false;
}

void kv_offload_tier(const struct kv_fit_in *in, const struct kv_fit *f,
		     uint64_t *tokens, uint64_t *bytes)
{
	const struct kv_offload *o = in->offload;
	const struct kv_offload_rules *rl = in->server->offload;
	uint64_t bpt = f->bytes_per_token, page = f->block ? f->block : 1;
	*tokens = *bytes = 0;
	if (!tier(o) || !rl || !bpt)
		return;
	uint64_t t;
	if (o->ratio > 0) { /* of the GPU pool's tokens */
		double x = o->ratio * (double)f->kv_tokens;
		t = x < 0x1p62 ? (uint64_t)x : (uint64_t)0x1p62;
	} else {
		uint64_t ranks = (uint64_t)in->tp * in->pp;
		t = (o->total ? o->bytes / ranks : o->bytes) / bpt;
	}
	/* whole pages; SGLang's pool one page more (size // page + 1) */
	t = rl->extra_page ? (t / page + 1) * page : t / page * page;
	*tokens = t;
	*bytes = kv_mul(t, bpt, bytes) ? UINT64_MAX : *bytes;
}

uint64_t kv_offload_hit(const struct kv_fit_in *in, const struct kv_fit *f,
			uint64_t isl)
{
	const struct kv_offload *o = in->offload;
	uint64_t page = f->block ? f->block : 1;
	if (!o || !o->hit_given || isl < 2)
		return 0;
	uint64_t h = (uint64_t)floor(o->hit * (double)isl + 1e-9);
	if (h > isl - 1) /* the last token's logits are computed */
		h = isl - 1;
	if (tier(o)) {
		uint64_t t, b;
		kv_offload_tier(in, f, &t, &b);
		h = h < t ? h : t;
	}
	return h / page * page;
}

double kv_offload_load_ms(const struct kv_fit_in *in, const struct kv_fit *f,
			  uint64_t hit)
{
	const struct kv_offload *o = in->offload;
	if (!tier(o) || !hit)
		return 0;
	if (!(o->link_gbps > 0))
		return NAN;
	return (double)hit * (double)f->bytes_per_token /
	       (o->link_gbps * 1e9) * 1e3;
}

bool kv_offload_overlaps(const struct kv_fit_in *in)
{
	return in->server && in->server->offload && in->server->offload->overlap;
}
