/*
 * dtype.h - the storage formats a KV cache (or a weight) can be kept in, and
 * their exact sizes, block scales included.
 *
 * Element formats store each value alone: f32 4 bytes, f16 and bf16 2,
 * fp8 (e4m3, the default fp8 of serving engines) and fp8_e5m2 1 byte with a
 * per-tensor scale kept outside the cache. int8 stores one byte per value
 * plus one f32 scale per token per head (K and V each), as serving engines'
 * per-token-head int8 caches do. The llama.cpp block formats pack 32 values
 * with their scales: q8_0 34 bytes, q4_0 18, q4_1 20, q5_0 22, q5_1 24,
 * iq4_nl 18. A row of n values in a block format needs n % 32 == 0.
 */
#ifndef KV_DTYPE_H
#define KV_DTYPE_H

#include "kv.h"

enum kv_dtype {
	KV_DTYPE_F32,
	KV_DTYPE_F16,
	KV_DTYPE_BF16,
	KV_DTYPE_FP8,      /* fp8 e4m3 */
	KV_DTYPE_FP8_E5M2,
	KV_DTYPE_INT8,     /* int8 + one f32 scale per token per head */
	KV_DTYPE_Q8_0,
	KV_DTYPE_Q4_0,
	KV_DTYPE_Q4_1,
	KV_DTYPE_Q5_0,
	KV_DTYPE_Q5_1,
	KV_DTYPE_IQ4_NL,
	KV_DTYPE_INT4,     /* weights only: 4-bit with a 16-bit scale per 32 */
	KV_DTYPE_COUNT
};

struct kv_dtype_info {
	const char *name;    /* canonical name, as printed */
	uint32_t block;      /* values per block (1 for element formats) */
	uint32_t block_bytes; /* bytes per block, scales included */
	uint32_t row_extra;  /* bytes added per row (a head of one token) */
	int kv;              /* usable as a KV cache format */
};

/* The table entry of a format; NULL for a value out of range. */
const struct kv_dtype_info *kv_dtype_info(enum kv_dtype t);

/* Canonical name of a format ("bf16"). */
const char *kv_dtype_name(enum kv_dtype t);

/* K's and V's formats as one name: "fp8" when they are the same, else
 * "K q4_0, V f16", into buf. Returns buf. */
char *kv_dtype_pair_name(enum kv_dtype k, enum kv_dtype v, char *buf,
			 size_t n);

/* K's and V's formats in one int, as the tools' lists of formats keep
 * them (llama.cpp's --cache-type-k q8_0 --cache-type-v q4_0): the format
 * itself where the two are alike, else k + KV_DTYPE_COUNT x (v + 1). -1
 * (auto, the engine's) is neither, and stays -1. */
int kv_dtype_pack(enum kv_dtype k, enum kv_dtype v);
/* A packed pair (>= 0) back into K's and V's formats. */
void kv_dtype_unpack(int packed, enum kv_dtype *k, enum kv_dtype *v);

/* K's and V's formats as a table cell: "q8_0", or "q8_0/q4_0" (K/V)
 * where they differ, into buf; and that cell read back (0 or
 * KV_EINVAL). */
char *kv_dtype_kv_name(enum kv_dtype k, enum kv_dtype v, char *buf, size_t n);
int kv_dtype_kv_parse(const char *s, enum kv_dtype *k, enum kv_dtype *v);

/* Looks a format up by name or alias, case-insensitively: "bf16",
 * "bfloat16", "fp8", "fp8_e4m3", "float16", "q4_0", ... Returns 0 or
 * KV_EINVAL. */
int kv_dtype_parse(const char *s, enum kv_dtype *out);

/* Maps a config's torch_dtype string ("bfloat16", "float32", "float16",
 * ...) to a format. Returns 0 or KV_EINVAL. */
int kv_dtype_from_torch(const char *s, enum kv_dtype *out);

/* The names a user may give as a KV format, comma-separated, into buf. */
char *kv_dtype_list(char *buf, size_t n, int kv_only);

/* Whether the decode engine can keep its cache in format t (1) or only
 * sizes it (0): f32, f16, bf16, fp8 (e4m3), int8, q8_0, q4_0 and q4_1
 * are stored; the encoders live with the engine (kvquant.c), this list
 * here, for the front ends' checks and the readers below the engine. */
int kv_dtype_stored(enum kv_dtype t);
/* The names of the stored formats, "f32, f16, ..., q4_1", into buf. */
char *kv_dtype_stored_list(char *buf, size_t n);

/* Bytes of one row of n values in format t (a K or V head of one token,
 * scales included). Returns 0, KV_EINVAL when a block format cannot tile n
 * (n % 32 != 0), or KV_ERANGE. */
int kv_dtype_row_bytes(enum kv_dtype t, uint64_t n, uint64_t *out);

/* What a model's products compute in: the tensor cores' format
 * (kv_gpu_compute). */
enum kv_compute { KV_COMPUTE_BF16, KV_COMPUTE_FP8, KV_COMPUTE_FP4 };

#endif
