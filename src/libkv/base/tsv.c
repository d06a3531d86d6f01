/*
 * tsv.c - tab-separated text cut into cells in place, the header first
 * (how kvfit reads kvsize's rows and kvbench its own), and the cells
 * libkv's tables hand a writer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/tsv.h"

int kv_tsv_split(char *buf, struct kv_tsv *t, char *err)
{
	*t = (struct kv_tsv){0};
	size_t cap = 0, lineno = 0;
	for (char *ln = buf, *next; ln; ln = next) {
		next = strchr(ln, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		size_t len = strlen(ln);
		if (len && ln[len - 1] == '\r')
			ln[--len] = '\0';
		if (!len)
			continue;
		size_t cells = 1;
		for (const char *p = ln; (p = strchr(p, '\t')); p++)
			cells++;
		size_t r = t->ncol ? t->nrow + 1 : 0;
		if (!t->ncol && cells > KV_TSV_MAX_COLS) {
			snprintf(err, KV_ERRLEN,
				 "line %zu: a header of %zu columns, more "
				 "than %d",
				 lineno, cells, KV_TSV_MAX_COLS);
			return KV_EINVAL;
		}
		if (!t->ncol)
			t->ncol = cells;
		if (r >= cap) {
			cap = cap ? 2 * cap : 16;
			char **c = realloc(t->cell, cap * t->ncol * sizeof *c);
			size_t *l = c ? realloc(t->line, cap * sizeof *l) : NULL;
			size_t *w = l ? realloc(t->width, cap * sizeof *w) : NULL;
			if (c)
				t->cell = c;
			if (l)
				t->line = l;
			if (!w) {
				kv_tsv_free(t);
				return KV_ENOMEM;
			}
			t->width = w;
		}
		char **row = t->cell + r * t->ncol;
		size_t k = 0;
		for (char *p = ln; p; k++) {
			char *tab = strchr(p, '\t');
			if (tab)
				*tab++ = '\0';
			if (k < t->ncol)
				row[k] = p;
			p = tab;
		}
		for (size_t j = k; j < t->ncol; j++)
			row[j] = NULL;
		t->line[r] = lineno;
		t->width[r] = k;
		if (r)
			t->nrow++;
	}
	return 0;
}

int kv_tsv_col(const struct kv_tsv *t, const char *name)
{
	for (size_t i = 0; i < t->ncol; i++)
		if (!strcmp(t->cell[i], name))
			return (int)i;
	return -1;
}

const char *kv_tsv_get(const struct kv_tsv *t, size_t row, int col)
{
	if (col < 0 || (size_t)col >= t->ncol || row > t->nrow)
		return NULL;
	return t->cell[row * t->ncol + (size_t)col];
}

void kv_tsv_free(struct kv_tsv *t)
{
	free(t->cell);
	free(t->line);
	free(t->width);
	*t = (struct kv_tsv){0};
}

void kv_cell_str(struct kv_cell *out, const char *s)
{
	*out = (struct kv_cell){.kind = KV_CELL_STR, .s = s};
}

void kv_cell_num(struct kv_cell *out, enum kv_cell_kind kind, uint64_t u)
{
	*out = (struct kv_cell){.kind = kind, .u = u};
}

void kv_cell_real(struct kv_cell *out, double d, int prec)
{
	*out = (struct kv_cell){.kind = KV_CELL_REAL, .d = d, .prec = prec};
}

void kv_cell_empty(struct kv_cell *out)
{
	*out = (struct kv_cell){.kind = KV_CELL_EMPTY};
}
