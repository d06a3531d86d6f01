/*
 * tsv.h - tab-separated text cut into cells in place: a header row, then
 * rows, each cell a pointer into the caller's text.
 */
#ifndef KV_TSV_H
#define KV_TSV_H

#include <stddef.h>
#include <stdint.h>

#include "kv.h"

/* The most columns a header may have. */
#define KV_TSV_MAX_COLS 256

/*
 * A text split by kv_tsv_split(): the first non-blank line the header,
 * each later one a row (blank lines skipped, a CR before the newline
 * dropped). kv_tsv_get(t, r, c) is row r's cell of column c (row 0 the
 * header), or NULL past the row's own cells.
 */
struct kv_tsv {
	char **cell;   /* (1 + nrow) x ncol cells, into the caller's text */
	size_t *line;  /* each row's line number in the text, from 1 */
	size_t *width; /* cells each row had (more than ncol when too many) */
	size_t ncol;   /* the header's columns; 0 when the text has none */
	size_t nrow;   /* rows after the header */
};

/* Splits buf (NUL-terminated; the caller keeps it while t is read).
 * Returns 0, KV_EINVAL with err for a header of more than
 * KV_TSV_MAX_COLS columns ("line N: ..."), or KV_ENOMEM; on an error t
 * holds nothing. */
int kv_tsv_split(char *buf, struct kv_tsv *t, char *err);
/* The header's column of that name, or -1. */
int kv_tsv_col(const struct kv_tsv *t, const char *name);
const char *kv_tsv_get(const struct kv_tsv *t, size_t row, int col);
void kv_tsv_free(struct kv_tsv *t);

/* What a table's cell holds: text, a count, a byte count (which a table
 * for people writes in units), a real to prec decimals (empty where it is
 * not finite), or nothing. */
enum kv_cell_kind {
	KV_CELL_STR,
	KV_CELL_U64,
	KV_CELL_BYTES,
	KV_CELL_REAL,
	KV_CELL_EMPTY
};

struct kv_cell {
	enum kv_cell_kind kind;
	const char *s; /* KV_CELL_STR: the row's own text, or buf */
	uint64_t u;    /* KV_CELL_U64, KV_CELL_BYTES */
	double d;      /* KV_CELL_REAL, to prec decimals */
	int prec;
	char buf[64];  /* text made for the cell ("lo..hi", "k/v") */
};

/* A cell of each kind. */
void kv_cell_str(struct kv_cell *out, const char *s);
void kv_cell_num(struct kv_cell *out, enum kv_cell_kind kind, uint64_t u);
void kv_cell_real(struct kv_cell *out, double d, int prec);
void kv_cell_empty(struct kv_cell *out);

#endif
