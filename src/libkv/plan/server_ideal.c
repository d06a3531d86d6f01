/*
 * server_ideal.c - the ideal engine: the exact bytes of layout.c, no
 * pages, no fraction, no memory of its own, every format, a window kept
 * as the model keeps it. What the articles count.
 */
#include "server_int.h"

static const struct kv_server_ops ops = {0};

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
};
