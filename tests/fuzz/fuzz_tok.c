/*
 * fuzz_tok.c - any bytes as a tokenizer.json: read or refused, never a
 * crash, a leak or a hang; a refusal says why. A tokenizer read passes
 * its own check (kv_tok_check against its size: every id it can give
 * has a row), encodes texts into ids below its size, decodes them, and
 * gives each id's piece into buffers of every small size. The texts
 * hold NUL bytes, and every byte 0x00..0xFF (a match of no bytes once
 * stopped the encoder on a NUL); the input's own first 4 KiB is one too,
 * a text the mutations change. Linked alone it mutates bytes; with
 * mutate_tok.c, the tokenizer's tree.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* text[0 .. len) encoded, each id below the size, and decoded; the
 * decoded text into *back (from malloc, NULL when none). */
static void round_trip(const struct kv_tok *t, const char *text, size_t len,
		       char **back, size_t *blen)
{
	uint32_t *ids;
	size_t n;
	*back = NULL;
	if (kv_tok_encode(t, text, len, true, &ids, &n))
		return;
	for (size_t k = 0; k < n; k++)
		if (ids[k] >= kv_tok_size(t)) {
			fprintf(stderr, "fuzz_tok: id %u of %u tokens\n",
				ids[k], kv_tok_size(t));
			abort();
		}
	if (kv_tok_decode(t, ids, n, back, blen))
		*back = NULL;
	free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct {
		const char *s;
		size_t len;
	} texts[] = {
#define T(s) {s, sizeof s - 1}
		T(""),
		T("the cache"),
		T("  two  spaces\n\nnew lines"),
		T("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac 123456"),
		T("\xff\xfe bad utf-8"),
		T("<s>it's</s>"),
		T("\0"),
		T("a\0b\0\0 c \0"),
		T("<|endoftext|>\0<s>\0"),
#undef T
	};
	static char all[256];
	char err[KV_ERRLEN] = "";
	struct kv_tok *t;
	for (int b = 0; b < 256; b++)
		all[b] = (char)b;
	if (kv_tok_parse((const char *)data, size, "fuzz", &t, err)) {
		if (!err[0] || t)
			abort(); /* a refusal says why, and owns nothing */
		return 0;
	}
	uint32_t n = kv_tok_size(t);
	if (kv_tok_check(t, n, "its own size", err)) {
		fprintf(stderr, "fuzz_tok: %s\n", err);
		abort();
	}
	const size_t nt = sizeof texts / sizeof *texts;
	for (size_t i = 0; i <= nt + 1; i++) {
		char *back, *again;
		size_t len, len2;
		if (i < nt)
			round_trip(t, texts[i].s, texts[i].len, &back, &len);
		else if (i == nt)
			round_trip(t, all, sizeof all, &back, &len);
		else /* the input itself: a text of its tokens, mutated */
			round_trip(t, (const char *)data,
				   size < 4096 ? size : 4096, &back, &len);
		if (back) /* and what came back, once more */
			round_trip(t, back, len, &again, &len2);
		else
			again = NULL;
		free(back);
		free(again);
	}
	/* each id's piece (the first few thousand), cut to small buffers,
	 * and ids past the vocabulary, which give nothing */
	for (uint32_t id = 0; id < n && id < 4096; id++) {
		char piece[64];
		size_t len;
		kv_tok_piece(t, id, id & 1, piece, id % 8, &len);
		if (len > id % 8)
			abort();
		kv_tok_piece(t, id, false, piece, sizeof piece, &len);
		if (len > sizeof piece)
			abort();
	}
	const uint32_t past[] = {n, n + 1, UINT32_MAX};
	for (size_t k = 0; k < 3; k++) {
		char piece[8];
		size_t len;
		kv_tok_piece(t, past[k], true, piece, sizeof piece, &len);
		if (len)
			abort();
	}
	kv_tok_free(t);
	return 0;
}
