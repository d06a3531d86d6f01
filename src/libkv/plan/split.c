/*
 * split.c - llama.cpp's split of one model between the GPU and host
 * memory (kv_fit_in.off). What -ngl leaves in host memory (the embedding,
 * the first layers, the head unless -ngl passes the layers) is one stage
 * and what it puts on the GPU another, each counted as fit.c counts a
 * pipeline stage; then the rules (-ot, --cpu-moe, --n-cpu-moe) move
 * tensors between them, -nkvo moves the GPU layers' KV to the host, each
 * side gets its compute buffer, and the host's memory its own budget.
 * The placement rules are server_llamacpp.c's.
 */
#include <math.h>
#include <stdio.h>

#include "kv/params.h"
#include "server_int.h"

/* The larger of two. */
static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Parameters of layer i's largest matrix a product reads: an MoE layer's
 * experts tensor (llama.cpp keeps each of gate, up and down for all
 * experts as one 3-D tensor), a dense MLP's, or the query projection;
 * experts_only: the experts tensor alone (0 without). */
static uint64_t largest_matrix(const struct kv_model *m, uint32_t i,
			       bool experts_only)
{
	const struct kv_layer *l = &m->layers[i];
	uint64_t h = m->hidden, best = 0;
	if (l->mlp == KV_MLP_MOE)
		best = (uint64_t)m->n_experts * h * l->ffn_dim;
	if (experts_only)
		return best;
	if (l->mlp == KV_MLP_DENSE)
		best = max64(best, h * l->ffn_dim);
	return max64(best, h * l->q_heads * (uint64_t)l->head_dim_k);
}

/* Bytes of `params` of layer i's parameters lp, as its stage counts them
 * (a share of the layer's own bytes where stored). */
static int layer_part(const struct fit_ctx *c, const struct kv_params *lp,
		      uint64_t params, uint64_t *out)
{
	uint64_t stored = lp->total ? fit_muldiv(lp->bytes, params, lp->total)
				    : 0;
	return fit_part_bytes(c, params, stored, out);
}

/* Moves `bytes` of weights (of them `routed` the routed experts', and
 * `flops` of FLOPs a token, of experts of that many) from stage a to b. */
static void move(struct fit_stage *a, struct fit_stage *b, uint64_t bytes,
		 uint64_t routed, double flops, const struct kv_params *lp)
{
	bytes = bytes < a->weights ? bytes : a->weights;
	routed = routed < a->routed_bytes ? routed : a->routed_bytes;
	a->weights -= bytes;
	b->weights += bytes;
	a->routed_bytes -= routed;
	b->routed_bytes += routed;
	a->flops -= flops;
	a->routed_flops -= flops;
	b->flops += flops;
	b->routed_flops += flops;
	if (lp->experts && !b->experts) {
		b->experts = lp->experts;
		b->experts_active = lp->experts_active;
	}
}

/* What the rules move of layer i, on the GPU or not: the share of its
 * routed experts (--n-cpu-moe's layers all of them, to host memory), and
 * from a GGUF's tensors the bytes. */
static double layer_share(const struct kv_ngl *o, uint32_t i, bool gpu)
{
	const struct kv_place *p = o->place;
	if (i < o->moe_host)
		return gpu ? 1 : 0;
	if (!p)
		return 0;
	const struct kv_slot *s = &p->slot[1 + i];
	if (p->exact)
		return !s->routed ? 0
		       : gpu	   ? (double)s->host_routed / (double)s->routed
				   : (double)s->gpu_routed / (double)s->routed;
	return gpu ? s->host_share : s->gpu_share;
}

/* The bytes a slot has on the GPU under o, from a GGUF's tensors:
 * everything but what the rules keep in host memory where the slot is
 * on the GPU, else what they put there (--n-cpu-moe's experts in host
 * memory first). *routed: of them, the experts'. */
static uint64_t slot_gpu(const struct kv_ngl *o, uint32_t k, bool gpu,
			 uint64_t *routed)
{
	const struct kv_slot *s = &o->place->slot[k];
	uint32_t n = o->place->n_layers;
	bool moe = k >= 1 && k <= n && k - 1 < o->moe_host;
	if (!gpu) {
		*routed = moe ? 0 : s->gpu_routed;
		return moe ? s->gpu - s->gpu_routed : s->gpu;
	}
	if (moe) {
		*routed = 0;
		return s->bytes - s->routed - (s->host - s->host_routed);
	}
	*routed = s->routed - s->host_routed;
	return s->bytes - s->host;
}

/* A GGUF's own bytes for both stages: each slot's part on each side, the
 * head's copy of a tied embedding on the GPU. */
static void exact_weights(const struct fit_ctx *c, struct fit_stage *h,
			  struct fit_stage *g, bool head)
{
	const struct kv_ngl *o = &c->in->off;
	const struct kv_place *p = o->place;
	uint32_t n = p->n_layers;
	uint64_t gw = 0, gr = 0, all = 0, routed = 0;
	for (uint32_t k = 0; k < n + 2; k++) {
		uint64_t r;
		bool gpu = llamacpp_slot_gpu(k, n, o->gpu_layers);
		gw += slot_gpu(o, k, gpu, &r);
		gr += r;
		all += p->slot[k].bytes;
		routed += p->slot[k].routed;
	}
	g->weights = gw + (head ? p->tied : 0);
	g->routed_bytes = gr;
	h->weights = all - gw;
	h->routed_bytes = routed - gr;
	/* the embedding is looked up a row a token; a tied one is read whole
	 * where the head in host memory is it */
	uint64_t r0;
	h->lookup_bytes = p->tied && !head ? 0
			  : p->slot[0].bytes - slot_gpu(o, 0, false, &r0);
}

/* Layer i's hidden state and its parts: where the rules move some of a
 * layer, a token crosses to the other side and back. */
static uint32_t crossings(const struct fit_ctx *c, bool head)
{
	const struct kv_ngl *o = &c->in->off;
	const struct kv_model *m = c->in->m;
	uint32_t n = m->n_layers, x = 0;
	bool at = false; /* the embedding, in host memory */
	for (uint32_t i = 0; i < n; i++) {
		bool gpu = llamacpp_slot_gpu(1 + i, n, o->gpu_layers);
		x += gpu != at;
		at = gpu;
		bool moved = layer_share(o, i, gpu) > 0;
		if (o->place && o->place->exact) {
			const struct kv_slot *s = &o->place->slot[1 + i];
			moved |= gpu ? s->host > 0 : s->gpu > 0;
		}
		/* attention over KV -nkvo keeps in host memory */
		moved |= gpu && o->no_kv_offload &&
			 m->layers[i].attn != KV_ATTN_NONE;
		x += 2 * moved;
	}
	return x + (head != at);
}

/* The largest weight a product reads in host memory: a GGUF's own, else
 * from the counts (the head, a host layer's largest matrix, a GPU
 * layer's experts tensor kept in host memory). */
static int largest_host(const struct fit_ctx *c, bool head, uint64_t *out)
{
	const struct kv_fit_in *in = c->in;
	const struct kv_ngl *o = &in->off;
	const struct kv_model *m = in->m;
	uint32_t n = m->n_layers;
	uint64_t big = 0, b;
	int e;
	if (o->exact) {
		const struct kv_place *p = o->place;
		for (uint32_t k = 1; k < n + 2; k++) {
			const struct kv_slot *s = &p->slot[k];
			bool gpu = llamacpp_slot_gpu(k, n, o->gpu_layers);
			bool moe = k <= n && k - 1 < o->moe_host;
			big = max64(big, !gpu ? s->largest
					 : moe ? max64(s->largest_host,
						       s->largest_routed)
					       : s->largest_host);
		}
		*out = head ? big : max64(big, p->tied);
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct kv_params lp;
		bool gpu = llamacpp_slot_gpu(1 + i, n, o->gpu_layers);
		if (gpu && !(layer_share(o, i, true) > 0))
			continue;
		if ((e = fit_layer_params(c, i, &lp)) ||
		    (e = layer_part(c, &lp, largest_matrix(m, i, gpu), &b)))
			return e;
		big = max64(big, b);
	}
	if (!head) { /* the head's matrix, of the last stage's counts */
		uint64_t f, l, fb, lb, hp = m->vocab * m->hidden;
		struct kv_params edge = {0};
		if ((e = kv_model_edge_bytes(m, in->quant, &f, &l, &fb, &lb)))
			return e;
		edge.total = m->tie_embeddings ? f : l;
		edge.bytes = m->tie_embeddings ? fb : lb;
		if (hp > edge.total)
			hp = edge.total;
		if ((e = layer_part(c, &edge, hp, &b)))
			return e;
		big = max64(big, b);
	}
	*out = big;
	return 0;
}

/* The bytes of a tied embedding, which llama.cpp copies to the GPU as
 * the head (TENSOR_DUPLICATED), from the counts. */
static int tied_bytes(const struct fit_ctx *c, uint64_t *out)
{
	const struct kv_model *m = c->in->m;
	uint64_t f, l, fb, lb;
	int e;
	*out = 0;
	if (!m->tie_embeddings)
		return 0;
	if ((e = kv_model_edge_bytes(m, c->in->quant, &f, &l, &fb, &lb)))
		return e;
	return fit_part_bytes(c, f, fb, out);
}

/* The rules' moves: each layer's share of its routed experts to the
 * other side, their FLOPs by the same share, and their bytes from the
 * counts (bytes true) or not (in exact mode the weights are the GGUF's,
 * placed already). */
static int expert_moves(const struct fit_ctx *c, struct fit_stage *h,
			struct fit_stage *g, bool bytes)
{
	const struct kv_fit_in *in = c->in;
	uint32_t n = in->m->n_layers;
	for (uint32_t i = 0; i < n; i++) {
		bool gpu = llamacpp_slot_gpu(1 + i, n, in->off.gpu_layers);
		double share = layer_share(&in->off, i, gpu);
		struct kv_params lp;
		uint64_t b = 0;
		int e;
		if (!(share > 0))
			continue;
		if ((e = fit_layer_params(c, i, &lp)))
			return e;
		uint64_t moved = (uint64_t)llround((double)lp.routed * share);
		if (bytes && (e = layer_part(c, &lp, moved, &b)))
			return e;
		double fl = lp.experts ? 2.0 * (double)lp.routed * share *
						 lp.experts_active / lp.experts
				       : 0;
		move(gpu ? g : h, gpu ? h : g, b, b, fl, &lp);
	}
	return 0;
}

/* -nkvo: the GPU layers' KV, state and attention in host memory. */
static void kv_to_host(struct fit_stage *h, struct fit_stage *g)
{
	h->bpt += g->bpt;
	h->dup += g->dup;
	h->seq += g->seq;
	h->shared += g->shared;
	h->seq_dup += g->seq_dup;
	h->shared_dup += g->shared_dup;
	h->rseq += g->rseq;
	h->rshared += g->rshared;
	h->flops += g->attn_flops;
	h->attn_flops += g->attn_flops;
	g->flops -= g->attn_flops;
	g->attn_flops = 0;
	g->bpt = g->dup = g->seq = g->shared = 0;
	g->seq_dup = g->shared_dup = g->rseq = g->rshared = 0;
}

/* The host's budget: its weights and compute buffer, then the KV its
 * memory holds (unknown memory holds any). */
static void host_budget(const struct fit_ctx *c, const struct fit_stage *h,
			struct kv_split *sp)
{
	uint64_t mem = c->in->off.host_mem;
	uint64_t need = h->weights + sp->host_compute;
	sp->host_mem = mem;
	sp->host_seq = h->seq;
	sp->host_shared = h->shared;
	sp->host_weights = h->weights;
	sp->host_users = INFINITY;
	if (!mem)
		return;
	sp->host_missing = need > mem ? need - mem : 0;
	uint64_t free = mem > need ? mem - need : 0;
	if (sp->host_missing || (h->seq && free <= h->shared))
		sp->host_users = 0;
	else if (h->seq)
		sp->host_users = (double)(free - h->shared) / (double)h->seq;
}

int fit_split(const struct fit_ctx *c, struct fit_stage *h,
	      struct fit_stage *g, struct kv_split *sp, char *err)
{
	const struct kv_fit_in *in = c->in;
	const struct kv_ngl *o = &in->off;
	const struct kv_model *m = in->m;
	uint32_t n = m->n_layers;
	uint32_t on = o->gpu_layers < n ? o->gpu_layers : n;
	bool head = llamacpp_slot_gpu(n + 1, n, o->gpu_layers);
	uint64_t tied = 0, big;
	int e;
	*h = (struct fit_stage){.first = 0, .n = n - on};
	*g = (struct fit_stage){.first = n - on, .n = on};
	if ((e = fit_stage_count(c, h, true, !head, err)) ||
	    (e = fit_stage_count(c, g, false, head, err)))
		return e;
	if (o->exact) {
		exact_weights(c, h, g, head);
		e = expert_moves(c, h, g, false);
	} else if (!(e = expert_moves(c, h, g, true)) && head &&
		   !(e = tied_bytes(c, &tied)) && tied) {
		/* the GPU's copy of a tied head; the host's is looked up */
		g->weights += tied;
		h->lookup_bytes += tied;
	}
	if (e || (e = largest_host(c, head, &big)))
		return e;
	if (o->no_kv_offload)
		kv_to_host(h, g);
	for (uint32_t i = n - on; i < n; i++)
		sp->moe_host += layer_share(o, i, true) >= 1;
	sp->gpu_layers = on;
	sp->head_gpu = head;
	sp->crossings = crossings(c, head);
	sp->link_token = (double)sp->crossings * (double)m->hidden *
			 KV_NGL_ACT;
	sp->logit_bytes = head ? (double)m->vocab * 4 : 0; /* float32 */
	sp->host_compute = llamacpp_host_compute(c);
	/* the GPU holds no host weight where no product reads one */
	g->copy = llamacpp_gpu_copy(c, big);
	if ((e = fit_stage_budget(c, g, err)))
		return e;
	if (g->missing) /* a GPU that keeps no KV holds none all the same */
		g->users = 0;
	host_budget(c, h, sp);
	return 0;
}

void fit_split_step(const struct fit_ctx *c, const struct kv_fit *fh,
		    struct kv_fit *f)
{
	const struct kv_fit_in *in = c->in;
	struct kv_split *sp = &f->split;
	double b = (double)f->step_users;
	/* the GPU's reads before the host's join the sums */
	double gpu = (double)f->step_weight_bytes + (double)f->step_kv_bytes;
	double lin = f->step_flops - f->step_attn_flops;
	double hlin = fh->step_flops - fh->step_attn_flops;
	double kv = (double)f->step_kv_bytes + (double)fh->step_kv_bytes;
	sp->step_host_weight_bytes = fh->step_weight_bytes -
				     fh->step_lookup_bytes;
	sp->step_host_kv_bytes = fh->step_kv_bytes;
	sp->step_host_flops = fh->step_flops;
	sp->kv_host_share = kv > 0 ? (double)fh->step_kv_bytes / kv : 0;
	sp->lin_host_share = lin + hlin > 0 ? hlin / (lin + hlin) : 0;
	sp->attn_host_share = f->step_attn_flops + fh->step_attn_flops > 0
				      ? fh->step_attn_flops /
						(f->step_attn_flops +
						 fh->step_attn_flops)
				      : 0;
	f->step_flops += fh->step_flops;
	f->step_attn_flops += fh->step_attn_flops;
	f->step_head_flops += fh->step_head_flops;
	f->step_routed_flops += fh->step_routed_flops;
	f->step_lookup_bytes += fh->step_lookup_bytes;
	f->step_routed_bytes += fh->step_routed_bytes;
	f->step_token_bytes += fh->step_token_bytes;
	f->step_weight_bytes += fh->step_weight_bytes;
	f->step_kv_bytes += fh->step_kv_bytes;

	double w = (double)f->step_weight_bytes, k = (double)f->step_kv_bytes;
	f->kv_weight_ratio = w > 0 ? k / w : NAN;
	f->kv_share = w + k > 0 ? k / (w + k) : NAN;
	struct kv_ngl_step st = {
		.tokens = b,
		.host_bytes = (double)(sp->step_host_weight_bytes +
				       sp->step_host_kv_bytes),
		.host_flops = sp->step_host_flops,
		.link_bytes = b * (sp->link_token + sp->logit_bytes),
	};
	bool on_gpu;
	kv_ngl_ms(&in->off, &st, &sp->host_ms, &sp->link_ms, &on_gpu);
	double gflops = on_gpu ? f->step_flops
			       : f->step_flops - sp->step_host_flops;
	if (in->bandwidth_gbps > 0) {
		sp->gpu_ms = gpu / (in->bandwidth_gbps * 1e6);
		f->step_ms = sp->gpu_ms + sp->host_ms + sp->link_ms;
	} else {
		sp->gpu_ms = f->step_ms = NAN;
	}
	f->tokens_per_s = f->step_ms > 0 ? b * 1e3 / f->step_ms : NAN;
	f->compute_ms = in->tflops > 0 ? gflops / (in->tflops * 1e9) : NAN;
}
