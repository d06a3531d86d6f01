/*
 * ep.c - expert parallelism and data-parallel attention: each engine's
 * rule, read from its code, and the arithmetic of what a rank holds and
 * what the experts' tokens cost on the links. stage.c asks it how each
 * part of a layer is split; serve.c what a step sends.
 */
#include <math.h>
#include <stdio.h>

#include "kv/ep.h"

/*
 * vLLM (vllm/config/parallel.py @840e7972: all2all_backend defaults to
 * "allgather_reducescatter"; model_executor/layers/fused_moe/config.py
 * @00c1c6a2, FusedMoEParallelConfig.make: with enable_expert_parallel
 * the EP size is TP x DP, the experts whole on each rank; without, the
 * experts split over TP x DP). Each DP rank is a TP group of its own:
 * the dense layers, shared experts, embedding and head split over its
 * tp ranks (models/deepseek_v2.py). The all-gather sends the hidden
 * states in 16 bits and reduce-scatters the outputs in 16 bits.
 */
static const struct kv_ep_rule vllm = {
	.ep_all = true,
	.dense = KV_EP_BY_GROUP,
	.shared = KV_EP_BY_GROUP,
	.embed = KV_EP_BY_GROUP,
	.head = KV_EP_BY_GROUP,
	.a2a = KV_A2A_ALLGATHER,
	.dispatch_bytes = 2,
	.combine_bytes = 2,
	.a2a_name = "allgather_reducescatter",
};

/*
 * SGLang (python/sglang/srt/layers/dp_attention.py,
 * compute_dp_attention_world_info: attn_tp_size = tp_size // dp_size;
 * server_args.py @469c63e5). Under DP attention the embedding is whole on
 * every rank (VocabParallelEmbedding(enable_tp=not
 * is_dp_attention_enabled())), the dense layers' MLP and the head split
 * over every rank of tp_size, the groups' tokens gathered to them
 * (moe_dense_tp_size and enable_dp_lm_head unset); with its expert
 * parallelism (moe_a2a_backend deepep, the DP-attention recipe) the
 * shared experts are whole on each rank (models/deepseek_v2.py:
 * tp_size=1 when the backend is DeepEP) and the tokens go by DeepEP's
 * low-latency kernels in decode: dispatched in fp8, combined in bf16.
 * Its --max-running-requests is all the groups' (model_executor/
 * pool_configurator.py, _resolve_max_num_reqs: max_running_requests //
 * dp_size a worker), and so is its chunked prefill
 * (server_args.py, _handle_data_parallelism: chunked_prefill_size //
 * dp_size under DP attention; with dp_size 1 it turns DP attention off).
 */
static const struct kv_ep_rule sglang = {
	.seqs_shared = true,
	.batched_shared = true,
	.dense = KV_EP_BY_STAGE,
	.shared = KV_EP_WHOLE,
	.embed = KV_EP_WHOLE,
	.head = KV_EP_BY_STAGE,
	.a2a = KV_A2A_ALLTOALL,
	.dispatch_bytes = 1,
	.combine_bytes = 2,
	.a2a_name = "DeepEP low-latency",
};

/*
 * TensorRT-LLM (tensorrt_llm/mapping.py @05ebebb2: tp_size = moe_tp_size x
 * moe_ep_size, ep_experts: num_experts // moe_ep_size a rank;
 * _torch/models/modeling_deepseekv3.py @a43cf9e3: with enable_attention_dp
 * every rank runs its own attention, and _compute_mlp_tp_size and
 * _compute_shared_expert_tp_size give the dense MLP and the shared
 * experts a TP size of 1; the head is whole on each rank unless
 * enable_lm_head_tp_in_adp). Its CUTLASS MoE under attention DP
 * all-gathers the tokens (in 16 bits for fp8 block-scaled weights) and
 * reduce-scatters the outputs (fused_moe_cutlass.py).
 */
static const struct kv_ep_rule trtllm = {
	.attn_whole = true,
	.dense = KV_EP_WHOLE,
	.shared = KV_EP_WHOLE,
	.embed = KV_EP_WHOLE,
	.head = KV_EP_WHOLE,
	.a2a = KV_A2A_ALLGATHER,
	.dispatch_bytes = 2,
	.combine_bytes = 2,
	.a2a_name = "allgather/reducescatter",
};

/* The ideal engine: each part split as attention is, the tokens sent to
 * their experts alone, in 16 bits. */
static const struct kv_ep_rule ideal = {
	.dense = KV_EP_BY_GROUP,
	.shared = KV_EP_BY_GROUP,
	.embed = KV_EP_BY_GROUP,
	.head = KV_EP_BY_GROUP,
	.a2a = KV_A2A_ALLTOALL,
	.dispatch_bytes = 2,
	.combine_bytes = 2,
	.a2a_name = "all-to-all",
};

const struct kv_ep_rule *kv_ep_rule(const struct kv_server *s)
{
	switch (s ? s->kind : KV_SERVER_KINDS) {
	case KV_SERVER_IDEAL: return &ideal;
	case KV_SERVER_VLLM: return &vllm;
	case KV_SERVER_SGLANG: return &sglang;
	case KV_SERVER_TRTLLM: return &trtllm;
	default: return NULL;
	}
}

uint32_t kv_ep_dp(const struct kv_fit_in *in)
{
	return in->dp > 1 ? in->dp : 1;
}

uint32_t kv_ep_size(const struct kv_fit_in *in)
{
	return in->ep > 1 ? in->ep : 1;
}

double kv_ep_imbalance(const struct kv_fit_in *in)
{
	return in->ep_imbalance > 1 ? in->ep_imbalance : 1;
}

uint64_t kv_ep_batched(const struct kv_fit_in *in, uint64_t batched)
{
	const struct kv_ep_rule *r = kv_ep_rule(in->server);
	if (!r || !r->batched_shared || kv_ep_dp(in) < 2)
		return batched;
	batched /= kv_ep_dp(in);
	return batched ? batched : 1;
}

bool kv_ep_on(const struct kv_fit_in *in)
{
	return in->dp > 1 || in->ep > 1;
}

uint32_t kv_ep_moe_tp(const struct kv_fit_in *in)
{
	return in->tp * kv_ep_dp(in) / kv_ep_size(in);
}

uint32_t kv_ep_experts(const struct kv_fit_in *in)
{
	return in->m->n_experts / kv_ep_size(in);
}

bool kv_ep_refuses(const struct kv_fit_in *in, char *err)
{
	const struct kv_server *sv = in->server;
	const struct kv_ep_rule *r = kv_ep_rule(sv);
	if (!sv || !kv_ep_on(in))
		return false;
	if (!r) {
		snprintf(err, KV_ERRLEN,
			 "%s: %s: %s has no data-parallel attention or expert "
			 "parallelism",
			 sv->name, in->dp > 1 ? "--dp" : "--ep", sv->label);
		return true;
	}
	if (r->ep_all && in->ep > 1 && in->ep != in->tp * kv_ep_dp(in)) {
		snprintf(err, KV_ERRLEN,
			 "%s: --ep %u: %s's expert parallelism spans every "
			 "rank (--enable-expert-parallel: TP x DP = %u)",
			 sv->name, in->ep, sv->label, in->tp * kv_ep_dp(in));
		return true;
	}
	if (r->attn_whole && in->dp > 1 && in->tp > 1) {
		snprintf(err, KV_ERRLEN,
			 "%s: --dp %u of %u ranks each: %s's "
			 "enable_attention_dp gives every rank its own "
			 "attention (--dp-attention with --dp the --tp ranks)",
			 sv->name, in->dp, in->tp, sv->label);
		return true;
	}
	return false;
}

int kv_ep_check(const struct kv_fit_in *in, char *err)
{
	const struct kv_model *m = in->m;
	uint32_t ranks = in->tp * kv_ep_dp(in), ep = kv_ep_size(in);
	if (!kv_ep_on(in))
		return 0;
	if (!m->n_experts) {
		snprintf(err, KV_ERRLEN,
			 in->ep > 1 ? "%s: --ep %u: a dense model has no "
				      "experts to split"
				    : "%s: --dp %u: a dense model's data-"
				      "parallel ranks are replicas; plan one "
				      "(the users divided among them)",
			 m->name, in->ep > 1 ? in->ep : in->dp);
		return KV_EINVAL;
	}
	if (m->n_experts % ep) {
		snprintf(err, KV_ERRLEN,
			 "%s: --ep %u: must divide the %u routed experts",
			 m->name, ep, m->n_experts);
		return KV_EINVAL;
	}
	if (ep > ranks || ranks % ep) {
		snprintf(err, KV_ERRLEN,
			 "%s: --ep %u: must divide the %u GPUs of a stage "
			 "(--tp %u x --dp %u)",
			 m->name, ep, ranks, in->tp, kv_ep_dp(in));
		return KV_EINVAL;
	}
	return 0;
}

void kv_ep_div(const struct kv_fit_in *in, enum kv_ep_split how,
	       uint32_t *ranks, uint32_t *tokens)
{
	*ranks = how == KV_EP_WHOLE ? 1
		 : how == KV_EP_BY_STAGE ? in->tp * kv_ep_dp(in)
					 : in->tp;
	*tokens = how == KV_EP_BY_STAGE ? kv_ep_dp(in) : 1;
}

/* MoE layers of in's model. */
static uint32_t moe_layers(const struct kv_model *m)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < m->n_layers; i++)
		n += m->layers[i].mlp == KV_MLP_MOE;
	return n;
}

uint32_t kv_ep_a2a_calls(const struct kv_fit_in *in)
{
	const struct kv_ep_rule *r = kv_ep_rule(in->server);
	if (!r || !kv_ep_on(in) || !in->m->n_experts)
		return 0;
	return 2 * moe_layers(in->m);
}

/* The ranks one call spans: the experts' (ep) all-to-all, or the groups
 * an all-gather joins. */
static uint32_t a2a_ranks(const struct kv_fit_in *in,
			  const struct kv_ep_rule *r)
{
	return in->ep > 1 && r->a2a == KV_A2A_ALLTOALL ? kv_ep_size(in)
						       : kv_ep_dp(in);
}

double kv_ep_a2a_bytes(const struct kv_fit_in *in, double tokens)
{
	const struct kv_model *m = in->m;
	const struct kv_ep_rule *r = kv_ep_rule(in->server);
	uint32_t calls = kv_ep_a2a_calls(in);
	if (!calls)
		return 0;
	double each = (double)(r->dispatch_bytes + r->combine_bytes) *
		      (double)m->hidden * (calls / 2);
	uint32_t n = a2a_ranks(in, r);
	if (in->ep > 1 && r->a2a == KV_A2A_ALLTOALL)
		/* a group's tokens split over its tp ranks, each sent to
		 * its top_k experts, those on other ranks */
		return tokens / in->tp * m->n_experts_active * (n - 1) / n *
		       kv_ep_imbalance(in) * each;
	return tokens * (n - 1) * each; /* every other group's tokens */
}

double kv_ep_a2a_us(const struct kv_fit_in *in, double base_us,
		    double step_us)
{
	uint32_t calls = kv_ep_a2a_calls(in);
	if (!calls)
		return 0;
	uint32_t n = a2a_ranks(in, kv_ep_rule(in->server));
	return calls * (base_us + (n - 1) * step_us);
}

double kv_ep_a2a_ms(const struct kv_fit_in *in, double tokens,
		    double link_gbps, double base_us, double step_us)
{
	if (!kv_ep_a2a_calls(in))
		return 0;
	if (!(link_gbps > 0))
		return NAN;
	return kv_ep_a2a_bytes(in, tokens) / (link_gbps * 1e6) +
	       kv_ep_a2a_us(in, base_us, step_us) * 1e-3;
}

uint32_t kv_ep_allreduces(const struct kv_fit_in *in)
{
	const struct kv_model *m = in->m;
	const struct kv_ep_rule *r = kv_ep_rule(in->server);
	uint32_t n = 0;
	if (in->tp < 2 || !r)
		return 0;
	/* an all-gather brings every group's tokens to each rank, the same
	 * on a group's tp ranks: their experts' outputs are reduced over
	 * them as well */
	for (uint32_t i = 0; i < m->n_layers; i++) {
		const struct kv_layer *l = &m->layers[i];
		n += 1 + (l->mlp == KV_MLP_DENSE && r->dense == KV_EP_BY_GROUP) +
		     (l->mlp == KV_MLP_MOE && r->a2a == KV_A2A_ALLGATHER);
	}
	return n;
}
