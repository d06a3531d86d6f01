/*
 * fuzz_tok.c - any bytes as a tokenizer.json: read or refused, never a
 * crash or a leak; a tokenizer read encodes a few texts into ids below
 * its size, and decodes them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kv/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const texts[] = {
		"",
		"the cache",
		"  two  spaces\n\nnew lines",
		"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac 123456",
		"\xff\xfe bad utf-8",
		"<s>it's</s>",
	};
	char err[KV_ERRLEN];
	struct kv_tok *t;
	if (kv_tok_parse((const char *)data, size, "fuzz", &t, err))
		return 0;
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
		uint32_t *ids;
		size_t n, len;
		char *back;
		if (kv_tok_encode(t, texts[i], strlen(texts[i]), true, &ids,
				  &n))
			continue;
		for (size_t k = 0; k < n; k++)
			if (ids[k] >= kv_tok_size(t))
				abort();
		if (!kv_tok_decode(t, ids, n, &back, &len))
			free(back);
		free(ids);
	}
	kv_tok_free(t);
	return 0;
}
