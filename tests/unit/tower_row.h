/*
 * tower_row.h - the row the towers' tests (test_vision.c, test_audio.c)
 * fit on: an 80 GB H100, bf16 weights and cache, 8,192 tokens, one GPU,
 * the engine's runtime modelled, with images images and audio_s seconds
 * of audio a request; the ideal engine's row and prompt they time the
 * towers at; and the engines' rules they name.
 */
#ifndef TOWER_ROW_H
#define TOWER_ROW_H

#include "kv/fit.h"
#include "kv/serve.h"
#include "kv/server.h"

#define VLLM kv_server_get(KV_SERVER_VLLM)
#define SGLANG kv_server_get(KV_SERVER_SGLANG)
#define TRTLLM kv_server_get(KV_SERVER_TRTLLM)
#define IDEAL kv_server_get(KV_SERVER_IDEAL)

static inline struct kv_fit_in row(const struct kv_model *m,
				   const struct kv_server *sv,
				   uint64_t images, double audio_s)
{
	return (struct kv_fit_in){.m = m, .kv_dtype = KV_DTYPE_BF16,
				  .w_dtype = KV_DTYPE_BF16,
				  .mem = 80000000000ULL, .runtime = true,
				  .tp = 1, .pp = 1, .ctx = 8192, .server = sv,
				  .gpu = "h100", .images = images,
				  .audio_s = audio_s};
}

/* The ideal engine's row of m at the datasheet's 3,350 GB/s and 1,000
 * TFLOP/s, with no images or audio yet. */
static inline struct kv_fit_in timed_row(const struct kv_model *m)
{
	struct kv_fit_in in = row(m, IDEAL, 0, 0);
	in.bandwidth_gbps = 3350;
	in.tflops = 1000;
	return in;
}

/* One user's 1,000-token prompt and 100 tokens out, at half the FLOP
 * rate's peak. */
static inline struct kv_serve_in tower_work(void)
{
	return (struct kv_serve_in){.isl = 1000, .osl = 100, .users = 1,
				    .flops_eff = 0.5};
}

#endif
