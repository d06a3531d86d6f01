/*
 * fuzz_rows.c - any bytes as kvsize's TSV rows on kvfit's stdin: the
 * reader must answer with rows or a message, never crash, leak or read
 * past a cell; rows it accepts each name a model, a KV format and a
 * context of at least one token. mutate_tsv.c makes its inputs from
 * kvsize's own rows with fields dropped, added, emptied, huge, negative.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct cli_kvsize_row *rows;
	size_t n;
	int status = cli_kvsize_rows(text, "-", &rows, &n);
	if (status) {
		if (rows || n || (status != CLI_USAGE && status != CLI_FAIL))
			abort(); /* refused rows own nothing */
	} else {
		if (!rows || !n)
			abort(); /* an answer has a row */
		for (size_t i = 0; i < n; i++)
			if (!rows[i].model || !rows[i].ctx ||
			    rows[i].dtype < 0 || rows[i].dtype >= KV_DTYPE_COUNT ||
			    rows[i].model < text || rows[i].model > text + size)
				abort();
	}
	free(rows);
	free(text);
	return 0;
}
