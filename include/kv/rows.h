/*
 * rows.h - kvsize's rows: the columns it writes, declared once, the
 * numbers in them, and their reading back (kvfit plans from them down a
 * pipe), with the limits both ends hold.
 */
#ifndef KV_ROWS_H
#define KV_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"
#include "model.h"
#include "tsv.h"

/* What a row, and every tool's option of the same name, may say. */
#define KV_MAX_RANKS (1 << 16)    /* --tp and --pp */
#define KV_MAX_USERS (1ULL << 40) /* sequences sized at once */
#define KV_MAX_BLOCK (1 << 20)    /* tokens a page (--block-size) */

/* kvsize's summary columns, in the order they are written. */
enum kv_srow_col {
	KV_SROW_MODEL,
	KV_SROW_KV_DTYPE,
	KV_SROW_LAYERS,
	KV_SROW_KV_HEADS,
	KV_SROW_HEAD_DIM_K,
	KV_SROW_HEAD_DIM_V,
	KV_SROW_CTX,
	KV_SROW_USERS,
	KV_SROW_BYTES_PER_TOKEN,
	KV_SROW_KV_BYTES,
	KV_SROW_KV_DTYPE_ASKED, /* "auto" where kvsize was asked auto */
	KV_SROW_STATE_BYTES,    /* models that keep a state */
	KV_SROW_TP,             /* rows that carry a plan: --tp */
	KV_SROW_BLOCK_SIZE,     /* and --block-size */
	KV_SROW_CONFIG,         /* a config read from stdin, down a pipe */
	KV_SROW_NCOLS
};

/* Each column's name in the header. */
extern const char *const kv_srow_names[KV_SROW_NCOLS];

/* The columns of a table of summary rows, in order, into cols (room for
 * KV_SROW_NCOLS): the first eleven always; state_bytes with state; tp and
 * block_size with plan; config with config. Returns their count. */
size_t kv_srow_cols(bool state, bool plan, bool config,
		    enum kv_srow_col *cols);

/* One summary row: a model in one format, at one context, for a count of
 * sequences. */
struct kv_srow {
	const char *model;    /* m->name; read: into the text */
	enum kv_dtype k, v;   /* the formats sized */
	bool asked_auto;      /* kvsize was asked auto (which kvfit resolves
				 by its engine's rule, as for a config) */
	struct kv_summary s;  /* layers that keep KV, heads and dims */
	uint64_t ctx, users;  /* >= 1 */
	uint64_t bytes_per_token, kv_bytes, state_bytes;
	uint64_t tp, block;   /* the plan kvfit goes on with (0: none) */
	const char *config;   /* the config's JSON, read from stdin; NULL */
	size_t line;          /* read: its line in the text */
};

/* Fills *r for m under o (its formats, --mha, --tp, page) at ctx tokens
 * for users sequences; state_bytes with state. Returns 0, or KV_E* with
 * err ("NAME: bytes overflow 64 bits" where a sum overflows). */
int kv_srow_size(const struct kv_model *m, const struct kv_opts *o,
		 bool asked_auto, uint64_t ctx, uint64_t users, bool state,
		 struct kv_srow *r, char *err);

/* Row r's cell of column c. s may point into out->buf: read it there. */
void kv_srow_cell(const struct kv_srow *r, enum kv_srow_col c,
		  struct kv_cell *out);

/* kvsize's rows in text (cut in place): model, kv_dtype and ctx required;
 * users (default 1), tp, block_size (default 0: not said), config and
 * kv_dtype_asked read where the header has them, each within the limits
 * above. *rows from malloc, at least one. Returns 0, KV_ENOMEM, or
 * KV_EINVAL with err: "empty input, expected a config or kvsize's rows",
 * "line N: not kvsize's header (...)", "kvsize's header and no rows",
 * "line N: not a kvsize row"; then *rows is NULL and *n 0. */
int kv_srows_read(char *text, struct kv_srow **rows, size_t *n, char *err);

/* kvsize's rows a layer each (--per-layer), in the order written. */
enum kv_lrow_col {
	KV_LROW_MODEL,
	KV_LROW_KV_DTYPE,
	KV_LROW_LAYER,
	KV_LROW_KIND,
	KV_LROW_KV_HEADS,
	KV_LROW_HEAD_DIM_K,
	KV_LROW_HEAD_DIM_V,
	KV_LROW_WINDOW,
	KV_LROW_CTX,
	KV_LROW_TOKENS,
	KV_LROW_USERS,
	KV_LROW_BYTES_PER_TOKEN,
	KV_LROW_KV_BYTES,
	KV_LROW_NCOLS
};

extern const char *const kv_lrow_names[KV_LROW_NCOLS];

/* Layer `layer` of m under o at ctx tokens for users sequences: what it
 * keeps (tokens, after its window and pages) and its bytes. */
struct kv_lrow {
	const char *model;
	enum kv_dtype k, v;
	uint32_t layer;
	struct kv_geom g;
	uint64_t ctx, tokens, users, bytes_per_token, kv_bytes;
};

/* Returns 0, or KV_E* with err ("NAME: N tokens x U users overflows 64
 * bits of bytes"). */
int kv_lrow_size(const struct kv_model *m, const struct kv_opts *o,
		 uint32_t layer, uint64_t ctx, uint64_t users,
		 struct kv_lrow *r, char *err);

void kv_lrow_cell(const struct kv_lrow *r, enum kv_lrow_col c,
		  struct kv_cell *out);

#endif
