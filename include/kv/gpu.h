/*
 * gpu.h - the GPUs kvfit knows: memory as the driver reports it, memory
 * bandwidth and dense peak FLOP/s, read from configs/gpus.json so that a
 * new card is a data change, not a code change.
 *
 * The file is an object with a "gpus" array; each entry has "name",
 * optional "aliases" (strings), "label", "memory_bytes" (whole bytes),
 * "bandwidth_gbps" (10^9 B/s), "bf16_tflops", "fp8_tflops" (dense, null
 * when the chip has none) and "source" (where the figures come from).
 */
#ifndef KV_GPU_H
#define KV_GPU_H

#include "dtype.h"

#define KV_GPU_ALIASES 8

struct kv_gpu {
	char name[32];            /* canonical name, "h100-sxm" */
	char aliases[KV_GPU_ALIASES][32]; /* other names, "" when unused */
	char label[96];           /* the vendor's name */
	uint64_t memory_bytes;    /* total memory, bytes, as the driver says */
	double bandwidth_gbps;    /* memory bandwidth, 10^9 bytes/s */
	double bf16_tflops;       /* dense bf16 peak, 10^12 FLOP/s */
	double fp8_tflops;        /* dense fp8 peak, 10^12 FLOP/s; 0: none */
	char source[512];         /* where the figures come from */
};

/* A table of GPUs; free with kv_gpus_free(). */
struct kv_gpus {
	struct kv_gpu *gpu; /* n entries */
	size_t n;
};

/* Parses a gpus.json text; `path` names it in messages. On success *out
 * is allocated (kv_gpus_free). On failure returns KV_EINVAL or KV_ENOMEM
 * with one line in err: "path: gpus[3].memory_bytes: must be ...". */
int kv_gpus_parse(const char *json, size_t len, const char *path,
		  struct kv_gpus **out, char *err);

/* Reads a gpus.json file. Same contract as kv_gpus_parse(), plus KV_EIO. */
int kv_gpus_load(const char *path, struct kv_gpus **out, char *err);

/* Finds gpus.json where configs are found (kv_config_dir order) and
 * writes its path into out (n bytes). Returns 0 or KV_EIO. */
int kv_gpus_find(char *out, size_t n);

/* The entry named `name` or one of its aliases, case-insensitively, with
 * "_" and " " read as "-"; NULL when none. The pointer lives as long as
 * the table. */
const struct kv_gpu *kv_gpus_lookup(const struct kv_gpus *g,
				    const char *name);

/* The canonical names, comma-separated, into buf. Returns buf. */
char *kv_gpus_list(const struct kv_gpus *g, char *buf, size_t n);

/* The dense peak (10^12 FLOP/s) a decode step with weights in format w
 * runs at: the fp8 rate for 8-bit and smaller weights on a GPU that has
 * one, the bf16 rate otherwise; 0 when unknown. */
double kv_gpu_tflops(const struct kv_gpu *g, enum kv_dtype w);

void kv_gpus_free(struct kv_gpus *g);

#endif
