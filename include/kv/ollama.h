/*
 * ollama.h - an Ollama model named as Ollama names it (qwen3:30b,
 * namespace/name:tag, host/namespace/name:tag), found offline in its
 * store: the manifest, the blob of its model layer (a GGUF) and what its
 * params layer sets.
 */
#ifndef KV_OLLAMA_H
#define KV_OLLAMA_H

#include <stdbool.h>
#include <stdint.h>

#include "kv.h"

struct kv_ollama {
	char manifest[4096]; /* manifests/HOST/NAMESPACE/NAME/TAG */
	char blob[4096];     /* blobs/sha256-HEX of the model layer */
	uint64_t num_ctx;    /* the params layer's num_ctx; 0: not set */
	int64_t num_gpu;     /* its num_gpu (layers on the GPU); -1: not
				set */
};

/* Whether s reads as an Ollama name: one to three parts of
 * [A-Za-z0-9._-] joined by '/', none starting with '.', then an optional
 * ":TAG" of the same characters; not a path ("./x", "/x", "x.json",
 * "x.gguf"). */
bool kv_ollama_name(const char *s);

/* The store Ollama keeps its models in: $OLLAMA_MODELS, else
 * $HOME/.ollama/models, into buf; NULL when neither is set. */
const char *kv_ollama_store(char *buf, size_t n);

/* Finds name (kv_ollama_name) in the store: host registry.ollama.ai,
 * namespace library and tag latest where it gives none. Returns 0,
 * KV_EIO when the store has no manifest of that name (err says which),
 * or KV_EINVAL with err naming the file and what is wrong: a manifest
 * that is not JSON or has
 * no layers or no model layer, a digest that is not sha256:HEX, a missing
 * blob, a params layer that is not a JSON object or whose num_ctx or
 * num_gpu is not a count. */
int kv_ollama_find(const char *name, const char *store, struct kv_ollama *o,
		   char *err);

#endif
