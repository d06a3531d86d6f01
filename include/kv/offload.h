/*
 * offload.h - a host tier of KV cache beside the GPU's pool (vLLM's
 * offloading connector, SGLang's hierarchical cache, TensorRT-LLM's
 * secondary pool), and the prompt tokens a request finds in a cache tier:
 * the tokens each tier holds, the hits not computed again, and what
 * loading them back over the GPU's host link costs. Each engine's rule
 * (struct kv_offload_rules, on its row of server.h) is read from its
 * code; kvfit(1), KV OFFLOAD, derives each term.
 */
#ifndef KV_OFFLOAD_H
#define KV_OFFLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "fit.h"

/* What kvfit is asked (--kv-offload and the engines' names for it,
 * --prefix-hit, --host-link). */
struct kv_offload {
	uint64_t bytes;   /* host memory for KV: of each GPU, or of all
			     where total; 0: no host tier (unless ratio) */
	bool total;       /* bytes summed over every tp x pp rank (vLLM's
			     --kv-offloading-size) */
	double ratio;     /* the host tier as a ratio of the GPU pool's
			     tokens (SGLang's --hicache-ratio); 0: bytes */
	double hit;       /* share of a prompt's tokens found in a cache
			     tier, [0, 1] */
	bool hit_given;
	double link_gbps; /* the GPU's link to host memory, one direction,
			     10^9 B/s; 0: unknown */
};

/* An engine's host tier, read from its code (on its row of server.h;
 * NULL there: it keeps none). */
struct kv_offload_rules {
	bool one_group;  /* offloads one KV cache group only: no window or
			    state layers (vLLM's CPUOffloadingSpec) */
	bool plain_only; /* its tier of window or state layers is not
			    modelled */
	bool extra_page; /* the tier is size // page + 1 pages (SGLang's
			    HostKVCache) */
	bool ratio;      /* takes a ratio of its GPU pool (SGLang) */
	bool overlap;    /* loads a hit back layer by layer beside the
			    prompt's prefill (SGLang's
			    load_to_device_per_layer); else before it,
			    the request waiting */
	const char *how; /* its setting, for messages */
};

/* Whether in's engine refuses the host tier asked (in->offload with
 * bytes or a ratio): it keeps none, a ratio where it takes bytes, or the
 * model has layers it does not offload or that are not modelled. True
 * with the reason in err (KV_ERRLEN bytes). */
bool kv_offload_refuses(const struct kv_fit_in *in, char *err);

/* The host tier of a solved row on each GPU: the tokens it holds and the
 * bytes it takes (0, 0 without one). */
void kv_offload_tier(const struct kv_fit_in *in, const struct kv_fit *f,
		     uint64_t *tokens, uint64_t *bytes);

/* Of a prompt of isl tokens, those found in a cache tier and not
 * computed again: in->offload's hit share, in whole pages of the row,
 * never the prompt's last token (its logits are computed), and no more
 * than the host tier holds where there is one; 0 without a hit share. */
uint64_t kv_offload_hit(const struct kv_fit_in *in, const struct kv_fit *f,
			uint64_t isl);

/* Milliseconds to load hit tokens back from the host tier over the
 * GPU's host link (their bytes on each GPU at link_gbps); 0 where the
 * row has no host tier (the hits are the GPU's own prefix cache), NAN
 * where the link is unknown. */
double kv_offload_load_ms(const struct kv_fit_in *in, const struct kv_fit *f,
			  uint64_t hit);

/* Whether in's engine loads hits back beside the prefill (overlap). */
bool kv_offload_overlaps(const struct kv_fit_in *in);

#endif
