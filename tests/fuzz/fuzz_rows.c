/*
 * fuzz_rows.c - any bytes as kvsize's TSV rows on kvfit's stdin: libkv's
 * reader (kv_srows_read) must answer with rows or a message, never crash,
 * leak or read past a cell; rows it accepts each name a model, a pair of
 * KV formats and a context of at least one token, within the limits
 * kvsize writes them under. mutate_tsv.c makes its inputs from kvsize's
 * own rows with fields dropped, added, emptied, huge, negative.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kv/rows.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether p points into the text. */
static int within(const char *p, const char *text, size_t size)
{
	return p >= text && p <= text + size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[KV_ERRLEN] = "";
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct kv_srow *rows;
	size_t n;
	int e = kv_srows_read(text, &rows, &n, err);
	if (e) {
		if (rows || n || (e != KV_EINVAL && e != KV_ENOMEM) ||
		    (e == KV_EINVAL && !err[0]))
			abort(); /* refused rows own nothing, and say why */
	} else {
		if (!rows || !n)
			abort(); /* an answer has a row */
		for (size_t i = 0; i < n; i++) {
			const struct kv_srow *r = &rows[i];
			if (!r->model || !within(r->model, text, size) ||
			    (r->config && !within(r->config, text, size)) ||
			    !r->ctx || !r->users || r->users > KV_MAX_USERS ||
			    r->tp > KV_MAX_RANKS || r->block > KV_MAX_BLOCK ||
			    (unsigned)r->k >= KV_DTYPE_COUNT ||
			    (unsigned)r->v >= KV_DTYPE_COUNT || !r->line)
				abort();
		}
	}
	free(rows);
	free(text);
	return 0;
}
