/*
 * eff.h - what each kind of work reaches of a GPU's datasheet rates, as
 * measured (configs/efficiency.json): the weights' products by the
 * tokens of the step and their format, decode attention's bandwidth and
 * floor, prefill attention by the prompt's length, all-reduce by bytes,
 * the elementwise operations around them, and each serving engine's own
 * cost a step. The time model (serve.h) composes a step from these; a GPU
 * without an entry borrows the nearest measured GPU's, scaled to its own
 * datasheet. kvfit(1), TIME, says where each figure comes from.
 *
 * The file is an object: "elementwise" {"us", "bw"}, "engines" (a list
 * of {"engine", "step_us", "layer_us", "request_us", "harmony_us",
 * "source"}: an engine's own cost a step, and a layer of the step, beyond
 * the kernels' work; and its frontend's serial work a request before the
 * engine sees it, gpt-oss's apart) and "gpus" (a list of entries):
 *   "gpu"            a name of gpus.json
 *   "source"         where the figures come from
 *   "gemm"           {"m": [tokens...], "bf16": [...], "fp8": [...],
 *                    "fp4": [...]}: a product's roofline time over its
 *                    measured time by the step's tokens, per format (at
 *                    least bf16)
 *   "gemm_floor_us"  a product call's fixed cost beyond that
 *   "attn"           {"trtllm" | "vllm": {"floor_us", "bw"}}: decode
 *                    attention per layer, floor + KV bytes / (bw x
 *                    bandwidth), by the engines' kernels
 *   "prefill"        {"trtllm" | "vllm": {"seq": [...], "eff": [...],
 *                    "hd64": [...], "hd256": [...]}}: causal attention's
 *                    share of the bf16 peak by the prompt's length, heads
 *                    of 128 values; and, optional, what heads of 64 or
 *                    256 reach over those, by the same lengths
 *   "moe"            {"floor_us", "tpe": [tokens per expert...], "bf16":
 *                    [...], "fp8": [...], "fp4": [...], "mxfp4": [...]}:
 *                    an MoE layer's grouped products, floor_us + their
 *                    roofline (the touched experts' weights against
 *                    their FLOPs, and the routed activations' traffic)
 *                    over the curve at the tokens each expert takes;
 *                    "mxfp4" for experts stored in mxfp4 (gpt-oss's),
 *                    computed in the format kv_gpu_compute gives them
 *   "allreduce_us"   {"bytes": [...], "2": [...], "4": [...], "8": [...]}
 * Every number is checked: a field that is present but wrong is one line
 * naming the file, the entry and the field.
 */
#ifndef KV_EFF_H
#define KV_EFF_H

#include <stdbool.h>
#include <stddef.h>

#include "dtype.h"

#define KV_CURVE_POINTS 32

/* y by x, at most KV_CURVE_POINTS points, x increasing. */
struct kv_curve {
	unsigned n;
	double x[KV_CURVE_POINTS], y[KV_CURVE_POINTS];
};

/* The kernels an engine's attention runs (TensorRT-LLM's, or the
 * FlashAttention and FlashInfer kernels of the others). */
enum kv_kernels { KV_KERNELS_VLLM, KV_KERNELS_TRTLLM, KV_KERNELS_COUNT };

/* kv_eff's moe[] beyond the computing formats: experts stored in
 * mxfp4, whose kernels reach their own share of the peak. */
#define KV_MOE_MXFP4 3

struct kv_eff {
	char gpu[32];
	char source[512];
	struct kv_curve gemm[3];   /* by enum kv_compute; n 0: none */
	double gemm_floor_us;
	double attn_floor_us[KV_KERNELS_COUNT]; /* 0 with bw 0: none */
	double attn_bw[KV_KERNELS_COUNT];
	struct kv_curve prefill[KV_KERNELS_COUNT];
	struct kv_curve prefill_hd[KV_KERNELS_COUNT][2]; /* heads of 64, 256
				      values over 128's; n 0: none */
	struct kv_curve moe[4];    /* by enum kv_compute, then
				      KV_MOE_MXFP4; n 0: none */
	double moe_floor_us;
	struct kv_curve allreduce[3]; /* tp 2, 4, 8: us by bytes */
};

/* A serving engine's own costs beyond its kernels' work, us. */
struct kv_engine_cost {
	char engine[16];   /* "vllm" */
	double step_us;    /* a step's (scheduling, sampling, launches) */
	double layer_us;   /* and a layer's of the step */
	double request_us; /* its frontend's serial work a request whose
			      prompt a chat template renders */
	double harmony_us; /* and one of gpt-oss, whose prompts the
			      harmony library renders instead; 0:
			      request_us */
};

struct kv_effs {
	struct kv_eff *eff;   /* n entries */
	size_t n;
	double elem_us;       /* an elementwise kernel's fixed cost */
	double elem_bw;       /* and the share of bandwidth it streams at */
	struct kv_engine_cost engines[8]; /* engines with costs */
	size_t nengines;
};

/* Parses an efficiency.json text; `path` names it in messages. On
 * success *out is allocated (kv_effs_free). On failure KV_EINVAL or
 * KV_ENOMEM with one line in err. */
int kv_effs_parse(const char *json, size_t len, const char *path,
		  struct kv_effs **out, char *err);

/* Reads the file. Same contract, plus KV_EIO. */
int kv_effs_load(const char *path, struct kv_effs **out, char *err);

/* Finds efficiency.json where gpus.json is found (kv_config_dir order)
 * and writes its path into out. Returns 0 or KV_EIO. */
int kv_effs_find(char *out, size_t n);

/* The entry of the GPU named `gpu` (its canonical name), or NULL. */
const struct kv_eff *kv_effs_lookup(const struct kv_effs *e,
				    const char *gpu);

/* The entry whose GPU is nearest a GPU of bandwidth_gbps and bf16_tflops
 * (in the logarithms of both), given each entry's own (gbps, tflops) by
 * `rates` (its n pairs in the entries' order); NULL when none. */
const struct kv_eff *kv_effs_nearest(const struct kv_effs *e,
				     const double (*rates)[2],
				     double bandwidth_gbps,
				     double bf16_tflops);

/* An engine's own costs; zeros when the table has none. */
struct kv_engine_cost kv_effs_engine(const struct kv_effs *e,
				     const char *engine);

/* Prefill attention's share of the bf16 peak under kernels k (the other
 * family's where k has none) for a prompt of seq tokens and heads of
 * head_dim values: the curve of heads of 128, times what heads of 64 or
 * 256 reach over those, linear in the logarithm of head_dim between
 * them and their end values beyond; 1 where the entry has no curve. */
double kv_eff_prefill_at(const struct kv_eff *e, enum kv_kernels k,
			 double seq, double head_dim);

/* c at x: linear between points in the logarithm of x, its end values
 * beyond them; 1 for an empty curve. */
double kv_curve_at(const struct kv_curve *c, double x);

void kv_effs_free(struct kv_effs *e);

#endif
