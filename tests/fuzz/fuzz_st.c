/*
 * fuzz_st.c - any bytes as a whole safetensors file (an 8-byte
 * little-endian header length, the header's JSON, the data), read as the
 * file reader reads one: kv_st_header_len() on the first 8 bytes, then
 * kv_st_parse() on the header, the rest being the data. Parsed or
 * refused, never a crash or a leak; a refusal says why, and an accepted
 * header's tensors each hold their shape times their element size and
 * together tile the data exactly. Linked alone it mutates bytes; with
 * mutate_st.c, the header's tree and the file's layout.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int by_offset(const void *a, const void *b)
{
	const struct kv_st_tensor *x = *(struct kv_st_tensor *const *)a;
	const struct kv_st_tensor *y = *(struct kv_st_tensor *const *)b;
	return x->begin != y->begin ? (x->begin < y->begin ? -1 : 1)
	       : x->end != y->end   ? (x->end < y->end ? -1 : 1)
				    : 0;
}

/* What an accepted header must keep, or NULL. */
static const char *check(const struct kv_st *st, uint64_t bytes)
{
	uint64_t sum = 0, at = 0;
	for (size_t i = 0; i < st->n; i++) {
		const struct kv_st_tensor *t = &st->t[i];
		uint64_t elems = 1;
		if (!t->name || t->file || t->ndim > KV_ST_MAX_DIMS ||
		    !kv_st_dtype_bytes(t->dtype))
			return "a tensor without a name, dtype or shape";
		for (uint32_t d = 0; d < t->ndim; d++)
			elems *= t->shape[d];
		if (elems != t->elems)
			return "elements are not the shape's product";
		if (t->begin > t->end || t->end > bytes ||
		    t->end - t->begin != t->elems * kv_st_dtype_bytes(t->dtype))
			return "bytes are not shape x element size";
		sum += t->end - t->begin;
	}
	if (sum != bytes || st->bytes != bytes)
		return "the tensors' bytes are not the data's";
	/* tiled: in offset order each begins where the one before ends */
	const struct kv_st_tensor **s = malloc((st->n + 1) * sizeof *s);
	if (!s)
		return NULL;
	for (size_t i = 0; i < st->n; i++)
		s[i] = &st->t[i];
	if (st->n)
		qsort(s, st->n, sizeof *s, by_offset);
	for (size_t i = 0; i < st->n && at != UINT64_MAX; i++)
		at = s[i]->begin == at ? s[i]->end : UINT64_MAX;
	free(s);
	return at == bytes ? NULL : "the tensors do not tile the data";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[KV_ERRLEN] = "";
	uint64_t n;
	if (size < 8) /* the reader refuses it before reading a length */
		return 0;
	if (kv_st_header_len(data, size, "fuzz", &n, err)) {
		if (!err[0])
			abort();
		return 0;
	}
	if (n < 2 || n > size - 8)
		abort(); /* a length the file does not hold */
	/* the header alone, in a buffer of its size: a read past it is
	 * caught, where the file's data would hide it */
	char *text = malloc(n);
	struct kv_st *st = calloc(1, sizeof *st);
	uint64_t bytes = size - 8 - n;
	if (!text || !st) {
		free(text);
		free(st);
		return 0;
	}
	memcpy(text, data + 8, n);
	if (kv_st_parse(text, n, bytes, "fuzz", 0, st, err) == 0) {
		const char *why = check(st, bytes);
		if (why) {
			fprintf(stderr, "fuzz_st: accepted, but %s\n", why);
			abort();
		}
	} else if (!err[0]) {
		abort(); /* a refusal always says why */
	}
	kv_st_close(st);
	free(text);
	return 0;
}
