/*
 * ckpt.h - what a checkpoint beside a config says of itself: the bytes of
 * its weights as stored. A Hugging Face snapshot keeps config.json beside
 * model.safetensors.index.json (whose metadata.total_size is the exact
 * bytes of every tensor of every shard) or a single model.safetensors
 * (whose header lists each tensor's byte range). A GGUF holds its own
 * tensors: their sizes from their ggml types. That figure is exact where
 * a count from the config is a model of it.
 */
#ifndef KV_CKPT_H
#define KV_CKPT_H

#include <stdint.h>

/* Where the bytes of a checkpoint came from. */
enum kv_ckpt_source {
	KV_CKPT_NONE,        /* no checkpoint beside the config */
	KV_CKPT_INDEX,       /* model.safetensors.index.json's total_size */
	KV_CKPT_SAFETENSORS, /* model.safetensors' header */
	KV_CKPT_GGUF,        /* the GGUF's own tensors (every part's) */
};

/* "index", "safetensors", "gguf" or "" */
const char *kv_ckpt_source_name(enum kv_ckpt_source s);

/*
 * A GGUF at config_path: the bytes of its tensors (NONE for one that has
 * none, a vocabulary-only file). Else looks beside config_path (a file;
 * "-" has no folder) for the index, then a single model.safetensors.
 * Returns 0 with *src (NONE when there is neither) and *bytes; KV_EINVAL
 * with err filled for an index or header that is malformed (a total_size
 * that is not a positive whole number, a header that is not JSON or
 * claims more than the file holds, byte ranges that are not ranges);
 * KV_EIO for one that cannot be read.
 */
int kv_ckpt_bytes(const char *config_path, enum kv_ckpt_source *src,
		  uint64_t *bytes, char *err);

#endif
