/*
 * ep.h - a MoE model's experts split over ranks (expert parallelism) and
 * its attention run data-parallel (each group of ranks its own sequences
 * and its own KV), as vLLM (--data-parallel-size, --enable-expert-parallel),
 * SGLang (--dp-size, --enable-dp-attention, --ep-size) and TensorRT-LLM
 * (enable_attention_dp, moe_expert_parallel_size) run them: what each rank
 * holds, the tokens sent to the experts and back each MoE layer (the
 * all-to-all), and their time over the GPUs' links. Each engine's rule
 * (struct kv_ep_rule) is read from its code; kvfit(1), EXPERT
 * PARALLELISM, derives each term.
 *
 * A stage of dp x tp GPUs: dp groups of tp ranks each (kv_fit_in.tp, the
 * heads of attention split over them as without groups). Each group
 * schedules its own sequences; kv_fit's users, max_seqs and step are one
 * group's. The routed experts are split over every rank of the stage: ep
 * ranks hold n_experts / ep experts each, whole or split again over
 * (dp x tp) / ep ranks (TensorRT-LLM's moe_tp_size).
 */
#ifndef KV_EP_H
#define KV_EP_H

#include <stdbool.h>
#include <stdint.h>

#include "fit.h"

/* How a part of the model (the dense MLP and shared experts, the input
 * embedding, the output head) is split under attention data parallelism. */
enum kv_ep_split {
	KV_EP_BY_GROUP, /* over the tp ranks of each group, as attention */
	KV_EP_BY_STAGE, /* over every rank of the stage, the groups' tokens
			   gathered to it */
	KV_EP_WHOLE,    /* whole on every rank (replicated) */
};

/* How the tokens reach the experts of other ranks and come back. */
enum kv_a2a {
	KV_A2A_ALLGATHER, /* every group's tokens gathered to every rank,
			     the outputs reduce-scattered back */
	KV_A2A_ALLTOALL,  /* each token sent to the ranks of its top_k
			     experts and their outputs back (DeepEP) */
};

/* An engine's rule, read from its code. */
struct kv_ep_rule {
	bool ep_all;             /* experts over every rank of the stage or
				    none (vLLM: EP size = TP x DP) */
	bool seqs_shared;        /* the cap on running sequences is all the
				    groups', each its share (SGLang's
				    --max-running-requests); else each
				    group's own */
	bool batched_shared;     /* the tokens a step schedules are split
				    among the groups (SGLang's
				    chunked_prefill_size // dp_size) */
	bool attn_whole;         /* each rank its own attention under groups
				    (TensorRT-LLM's enable_attention_dp):
				    no tp within a group */
	enum kv_ep_split dense;  /* a dense layer's MLP, and without ep the
				    shared experts */
	enum kv_ep_split shared; /* the shared experts with ep > 1 */
	enum kv_ep_split embed;  /* the input embedding */
	enum kv_ep_split head;   /* the output head */
	enum kv_a2a a2a;         /* with ep > 1 */
	uint32_t dispatch_bytes; /* of a hidden value sent to the experts */
	uint32_t combine_bytes;  /* of one sent back */
	const char *a2a_name;    /* its name in the engine ("DeepEP
				    low-latency") */
};

/* The rule of s's engine; NULL where it has neither (llama.cpp, ideal's
 * is the generic one). */
const struct kv_ep_rule *kv_ep_rule(const struct kv_server *s);

/* in's groups (dp, at least 1), expert-parallel ranks (ep, at least 1)
 * and imbalance (at least 1). */
uint32_t kv_ep_dp(const struct kv_fit_in *in);
uint32_t kv_ep_size(const struct kv_fit_in *in);
double kv_ep_imbalance(const struct kv_fit_in *in);

/* The tokens a step of one group schedules, of `batched` the engine's
 * (at least 1). */
uint64_t kv_ep_batched(const struct kv_fit_in *in, uint64_t batched);

/* Whether in asks either (dp or ep above 1). */
bool kv_ep_on(const struct kv_fit_in *in);

/* The ranks each expert is split over: (dp x tp) / ep. */
uint32_t kv_ep_moe_tp(const struct kv_fit_in *in);

/* The routed experts each rank holds (n_experts / ep); 0 for a dense
 * model. */
uint32_t kv_ep_experts(const struct kv_fit_in *in);

/* Whether in's engine refuses the groups or experts asked (llama.cpp has
 * neither): true with the reason in err (KV_ERRLEN bytes). */
bool kv_ep_refuses(const struct kv_fit_in *in, char *err);

/* Whether in's model takes them: a MoE model (a dense model's groups are
 * replicas, planned one by one), ep dividing its experts and the stage's
 * dp x tp ranks. Returns 0 or KV_EINVAL with err filled. */
int kv_ep_check(const struct kv_fit_in *in, char *err);

/* The ranks a part split as `how` is divided over, for its weights, and
 * the ranks whose tokens each rank computes it for (a KV_EP_BY_STAGE part
 * runs every group's tokens): FLOPs a group's token costs a rank are the
 * part's x tokens / ranks. */
void kv_ep_div(const struct kv_fit_in *in, enum kv_ep_split how,
	       uint32_t *ranks, uint32_t *tokens);

/* Bytes the busiest GPU receives in a step of `tokens` tokens of its
 * group, every MoE layer's dispatch and combine: all-to-all, tokens / tp
 * x hidden x top_k x (ep - 1) / ep each way, times the imbalance;
 * all-gather, tokens x hidden x (dp - 1) each way. 0 without ep or dp, or
 * on a dense model. */
double kv_ep_a2a_bytes(const struct kv_fit_in *in, double tokens);

/* The collectives those take, two a MoE layer; 0 without. */
uint32_t kv_ep_a2a_calls(const struct kv_fit_in *in);

/* Their latency, us: for each call base_us + (ranks - 1) step_us
 * (NCCL's ring latency, kv_allreduce_latency's, one step a rank). */
double kv_ep_a2a_us(const struct kv_fit_in *in, double base_us,
		    double step_us);

/* Their time, ms: the bytes over link_gbps (one GPU's link, one
 * direction, 10^9 B/s; 0: unknown, NAN returned) and their latency. */
double kv_ep_a2a_ms(const struct kv_fit_in *in, double tokens,
		    double link_gbps, double base_us, double step_us);

/* The all-reduces a step runs under in's groups and experts, over a
 * group's tp ranks (none with tp 1): one a layer of attention, one a
 * dense MLP split by group, one a MoE layer whose tokens an all-gather
 * brought; what kv_ep_a2a adds is apart. */
uint32_t kv_ep_allreduces(const struct kv_fit_in *in);

#endif
