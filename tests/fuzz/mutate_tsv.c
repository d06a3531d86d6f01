/*
 * mutate_tsv.c - libFuzzer's custom mutator for TSV rows: mutates cells
 * and lines, not bytes, so that a row stays a row with one field wrong: a
 * cell dropped, added, emptied, made huge or negative, a header name
 * changed, a line dropped or repeated. Linked into fuzz_rows only.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mutate.h"

uint64_t rng_state; /* the generator's (mutate.h) */

#define MAX_CELLS 4096

static const char *const VALUES[] = {
	"", "0", "-1", "1", "18446744073709551615", "18446744073709551616",
	"99999999999999999999999", "1e308", "nan", "-0", "8k", "0x10", " 1",
	"fp8", "bf16", "q4_0", "f7", "model", "kv_dtype", "ctx", "layer",
	"llama-3.1-8b", "gpt2", "no-such-model", "../configs/gpt2.json",
	"\r", "a\tb"};

/* A cell: [start, end) of data, and the character after it. */
struct cell {
	size_t start, end;
	char after; /* '\t', '\n' or 0 at the end */
};

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	static struct cell c[MAX_CELLS];
	static char out[1 << 16];
	rng_state = seed;
	if (rnd(16) == 0 || size == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	size_t n = 0, s = 0;
	for (size_t i = 0; i <= size && n < MAX_CELLS; i++)
		if (i == size || data[i] == '\t' || data[i] == '\n') {
			c[n++] = (struct cell){s, i,
					       i == size ? 0 : (char)data[i]};
			s = i + 1;
		}
	size_t pick = rnd((uint32_t)n), len = 0;
	uint32_t op = rnd(6);
	for (size_t i = 0; i < n; i++) {
		const char *v = (const char *)data + c[i].start;
		size_t vl = c[i].end - c[i].start;
		char after = c[i].after;
		if (i == pick) {
			switch (op) {
			case 0: /* dropped, with its separator */
				vl = 0;
				after = after == '\t' ? 0 : after;
				break;
			case 1: /* another value */
			case 2:
				v = VALUES[rnd(sizeof VALUES / sizeof *VALUES)];
				vl = strlen(v);
				break;
			case 3: /* a cell added after it */
				if (len + vl + 1 < sizeof out) {
					memcpy(out + len, v, vl);
					len += vl;
					out[len++] = '\t';
				}
				break;
			case 4: /* its line repeated: the cell and a newline */
				if (len + vl + 1 < sizeof out) {
					memcpy(out + len, v, vl);
					len += vl;
					out[len++] = '\n';
				}
				break;
			default: /* the line ends here */
				after = '\n';
			}
		}
		if (len + vl + 1 >= sizeof out)
			break;
		memcpy(out + len, v, vl);
		len += vl;
		if (after)
			out[len++] = after;
	}
	if (len > max_size)
		return LLVMFuzzerMutate(data, size, max_size);
	memcpy(data, out, len);
	return len;
}
