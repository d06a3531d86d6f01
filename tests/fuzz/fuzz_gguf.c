/*
 * fuzz_gguf.c - any bytes as a whole GGUF file: the header reader
 * (kv_gguf_parse) answers with a header or a message, never a crash, a
 * leak or a read past the bytes; an accepted header keeps what the
 * reader promises (each tensor's bytes its shape in its ggml type, at a
 * multiple of the alignment, the sum its total; keys found by name), and
 * its model, where one is built, sizes without overflow.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kv/gguf.h"
#include "kv/layout.h"
#include "kv/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether an accepted header keeps the reader's promises. */
static bool kept(const struct kv_gguf *g, size_t size)
{
	uint64_t sum = 0, b;
	if (!g->alignment || g->alignment & (g->alignment - 1) ||
	    (g->version != 2 && g->version != 3) || g->parts != 1)
		return false;
	for (size_t i = 0; i < g->n_t; i++) {
		const struct kv_gguf_tensor *t = &g->t[i];
		if (!t->name[0] || t->n_dims > KV_GGUF_MAX_DIMS ||
		    t->offset % g->alignment ||
		    kv_gguf_tensor_bytes(t->type, t->n_dims, t->ne, &b) ||
		    b != t->bytes || t->bytes > size ||
		    t->offset > size - t->bytes)
			return false;
		sum += t->bytes;
	}
	for (size_t i = 0; i < g->n_kv; i++)
		if (kv_gguf_find(g, g->kv[i].key) != &g->kv[i])
			return false; /* keys are unique */
	return sum == g->bytes;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kv_gguf *g = NULL;
	struct kv_model *m = NULL;
	char err[KV_ERRLEN];
	if (kv_gguf_parse(data, size, "fuzz.gguf", &g, err)) {
		if (!err[0] || g)
			abort(); /* an error says why, and owns nothing */
		return 0;
	}
	if (!kept(g, size))
		abort();
	if (kv_model_from_gguf(g, "fuzz.gguf", &m, err) == 0) {
		struct kv_opts o = kv_opts_default(m);
		uint64_t per, total;
		if (kv_model_token_bytes(m, &o, &per, err) == 0 &&
		    kv_model_bytes(m, &o, 4096, 2, &total, err) == 0 &&
		    total < per)
			abort();
	} else if (!err[0] || m) {
		abort();
	}
	kv_model_free(m);
	kv_gguf_free(g);
	return 0;
}
