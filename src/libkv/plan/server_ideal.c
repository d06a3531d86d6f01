/*
 * server_ideal.c - the ideal engine: the exact bytes of layout.c, no
 * pages, no fraction, no memory of its own, every format, a window kept
 * as the model keeps it. What the articles count.
 */
#include "kv/lora.h"
#include "kv/offload.h"
#include "server_int.h"

static const struct kv_server_ops ops = {0};

/* LoRA: the exact slots of max_loras adapters (1 by default) at the rank
 * given, on every linear matrix of the layers (q, k, v, o, gate, up,
 * down, the experts'), split as the matrix is; no router, embedding or
 * head unless asked. */
static const struct kv_lora_rules lora = {
	.max_loras = 1,
	.modules = KV_LORA_QKV | KV_LORA_O | KV_LORA_GATE_UP | KV_LORA_DOWN |
		   KV_LORA_EXPERTS,
	.names = 0xff,
};

/* A host tier of the exact bytes a token takes, loaded back layer by
 * layer beside the prefill. */
static const struct kv_offload_rules offload = {
	.overlap = true,
	.how = "--kv-offload",
};

const struct kv_server kv_server_ideal = {
	.kind = KV_SERVER_IDEAL,
	.name = "ideal",
	.label = "the ideal engine",
	.block = 1,
	.block_mla = 1,
	.ctx_pad = 1,
	.formats = (1u << KV_DTYPE_INT4) - 1,
	.kv_auto = KV_DTYPE_COUNT,
	.w_f32 = KV_DTYPE_COUNT,
	.state = KV_STATE_REF,
	.kv_apart = true,
	.ops = &ops,
	.lora = &lora,
	.offload = &offload,
	.vision = true,
	.audio = true,
};
