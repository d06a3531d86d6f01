/*
 * rows.c - kvsize's rows: the columns declared once, each row's numbers
 * from layout.c, the cells a writer prints, and the reader kvfit plans
 * from down a pipe, both ends held to the same limits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/rows.h"
#include "kv/tsv.h"
#include "kv/units.h"

const char *const kv_srow_names[KV_SROW_NCOLS] = {
	[KV_SROW_MODEL] = "model",
	[KV_SROW_KV_DTYPE] = "kv_dtype",
	[KV_SROW_LAYERS] = "layers",
	[KV_SROW_KV_HEADS] = "kv_heads",
	[KV_SROW_HEAD_DIM_K] = "head_dim_k",
	[KV_SROW_HEAD_DIM_V] = "head_dim_v",
	[KV_SROW_CTX] = "ctx",
	[KV_SROW_USERS] = "users",
	[KV_SROW_BYTES_PER_TOKEN] = "bytes_per_token",
	[KV_SROW_KV_BYTES] = "kv_bytes",
	[KV_SROW_KV_DTYPE_ASKED] = "kv_dtype_asked",
	[KV_SROW_STATE_BYTES] = "state_bytes",
	[KV_SROW_TP] = "tp",
	[KV_SROW_BLOCK_SIZE] = "block_size",
	[KV_SROW_CONFIG] = "config",
};

const char *const kv_lrow_names[KV_LROW_NCOLS] = {
	[KV_LROW_MODEL] = "model",
	[KV_LROW_KV_DTYPE] = "kv_dtype",
	[KV_LROW_LAYER] = "layer",
	[KV_LROW_KIND] = "kind",
	[KV_LROW_KV_HEADS] = "kv_heads",
	[KV_LROW_HEAD_DIM_K] = "head_dim_k",
	[KV_LROW_HEAD_DIM_V] = "head_dim_v",
	[KV_LROW_WINDOW] = "window",
	[KV_LROW_CTX] = "ctx",
	[KV_LROW_TOKENS] = "tokens",
	[KV_LROW_USERS] = "users",
	[KV_LROW_BYTES_PER_TOKEN] = "bytes_per_token",
	[KV_LROW_KV_BYTES] = "kv_bytes",
};

size_t kv_srow_cols(bool state, bool plan, bool config,
		    enum kv_srow_col *cols)
{
	size_t n = 0;
	for (int c = KV_SROW_MODEL; c <= KV_SROW_KV_DTYPE_ASKED; c++)
		cols[n++] = (enum kv_srow_col)c;
	if (state)
		cols[n++] = KV_SROW_STATE_BYTES;
	if (plan) {
		cols[n++] = KV_SROW_TP;
		cols[n++] = KV_SROW_BLOCK_SIZE;
	}
	if (config)
		cols[n++] = KV_SROW_CONFIG;
	return n;
}

int kv_srow_size(const struct kv_model *m, const struct kv_opts *o,
		 bool asked_auto, uint64_t ctx, uint64_t users, bool state,
		 struct kv_srow *r, char *err)
{
	int e;
	*r = (struct kv_srow){.model = m->name, .k = o->k_dtype,
			      .v = o->v_dtype, .asked_auto = asked_auto,
			      .ctx = ctx, .users = users, .tp = o->tp,
			      .block = o->block, .config = m->json};
	if ((e = kv_model_summary(m, o, &r->s, err)) ||
	    (e = kv_model_token_bytes(m, o, &r->bytes_per_token, err)) ||
	    (e = kv_model_bytes(m, o, ctx, users, &r->kv_bytes, err))) {
		if (e == KV_ERANGE && !strstr(err, "overflow"))
			snprintf(err, KV_ERRLEN, "%s: bytes overflow 64 bits",
				 m->name);
		return e;
	}
	if (state && kv_model_state_bytes(m, o, users, &r->state_bytes)) {
		snprintf(err, KV_ERRLEN, "%s: state bytes overflow 64 bits",
			 m->name);
		return KV_ERANGE;
	}
	return 0;
}

/* A min..max pair as one cell: the number when both agree. */
static void range(struct kv_cell *out, uint32_t lo, uint32_t hi)
{
	kv_cell_num(out, KV_CELL_U64, lo);
	if (lo != hi) {
		out->kind = KV_CELL_STR;
		snprintf(out->buf, sizeof out->buf, "%u..%u", lo, hi);
		out->s = out->buf;
	}
}

static void formats(struct kv_cell *out, enum kv_dtype k, enum kv_dtype v)
{
	kv_cell_str(out, NULL);
	out->s = kv_dtype_kv_name(k, v, out->buf, sizeof out->buf);
}

void kv_srow_cell(const struct kv_srow *r, enum kv_srow_col c,
		  struct kv_cell *out)
{
	switch (c) {
	case KV_SROW_MODEL: kv_cell_str(out, r->model); break;
	case KV_SROW_KV_DTYPE: formats(out, r->k, r->v); break;
	case KV_SROW_LAYERS: kv_cell_num(out, KV_CELL_U64, r->s.layers); break;
	case KV_SROW_KV_HEADS: range(out, r->s.heads_min, r->s.heads_max); break;
	case KV_SROW_HEAD_DIM_K: range(out, r->s.dim_k_min, r->s.dim_k_max); break;
	case KV_SROW_HEAD_DIM_V: range(out, r->s.dim_v_min, r->s.dim_v_max); break;
	case KV_SROW_CTX: kv_cell_num(out, KV_CELL_U64, r->ctx); break;
	case KV_SROW_USERS: kv_cell_num(out, KV_CELL_U64, r->users); break;
	case KV_SROW_BYTES_PER_TOKEN:
		kv_cell_num(out, KV_CELL_BYTES, r->bytes_per_token);
		break;
	case KV_SROW_KV_BYTES: kv_cell_num(out, KV_CELL_BYTES, r->kv_bytes); break;
	case KV_SROW_KV_DTYPE_ASKED:
		if (r->asked_auto)
			kv_cell_str(out, "auto");
		else
			formats(out, r->k, r->v);
		break;
	case KV_SROW_STATE_BYTES: kv_cell_num(out, KV_CELL_BYTES, r->state_bytes); break;
	case KV_SROW_TP: kv_cell_num(out, KV_CELL_U64, r->tp); break;
	case KV_SROW_BLOCK_SIZE: kv_cell_num(out, KV_CELL_U64, r->block); break;
	case KV_SROW_CONFIG: kv_cell_str(out, r->config ? r->config : ""); break;
	default: kv_cell_str(out, ""); break;
	}
}

/* The count in s within [lo, hi]. */
static bool count(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	return s && !kv_parse_u64(s, v) && *v >= lo && *v <= hi;
}

int kv_srows_read(char *text, struct kv_srow **rows, size_t *n, char *err)
{
	struct kv_tsv t;
	int e = kv_tsv_split(text, &t, err);
	*rows = NULL;
	*n = 0;
	if (e)
		return e;
	int col[KV_SROW_NCOLS];
	for (int c = 0; c < KV_SROW_NCOLS; c++)
		col[c] = kv_tsv_col(&t, kv_srow_names[c]);
	if (!t.ncol) {
		snprintf(err, KV_ERRLEN,
			 "empty input, expected a config or kvsize's rows");
		e = KV_EINVAL;
	} else if (col[KV_SROW_MODEL] < 0 || col[KV_SROW_KV_DTYPE] < 0 ||
		   col[KV_SROW_CTX] < 0 ||
		   kv_tsv_col(&t, kv_lrow_names[KV_LROW_LAYER]) >= 0) {
		snprintf(err, KV_ERRLEN,
			 "line %zu: not kvsize's header (model, kv_dtype, "
			 "ctx; no --per-layer)",
			 t.line[0]);
		e = KV_EINVAL;
	} else if (!t.nrow) {
		snprintf(err, KV_ERRLEN, "kvsize's header and no rows");
		e = KV_EINVAL;
	} else if (!(*rows = calloc(t.nrow, sizeof **rows))) {
		e = KV_ENOMEM;
	}
	for (size_t i = 1; !e && i <= t.nrow; i++) {
		struct kv_srow r = {.users = 1, .line = t.line[i]};
#define CELL(c) kv_tsv_get(&t, i, col[c])
		const char *asked = CELL(KV_SROW_KV_DTYPE_ASKED);
		const char *json = CELL(KV_SROW_CONFIG);
		if (t.width[i] != t.ncol ||
		    kv_dtype_kv_parse(CELL(KV_SROW_KV_DTYPE), &r.k, &r.v) ||
		    !count(CELL(KV_SROW_CTX), 1, UINT64_MAX, &r.ctx) ||
		    (col[KV_SROW_USERS] >= 0 &&
		     !count(CELL(KV_SROW_USERS), 1, KV_MAX_USERS, &r.users)) ||
		    (col[KV_SROW_TP] >= 0 &&
		     !count(CELL(KV_SROW_TP), 1, KV_MAX_RANKS, &r.tp)) ||
		    (col[KV_SROW_BLOCK_SIZE] >= 0 &&
		     !count(CELL(KV_SROW_BLOCK_SIZE), 0, KV_MAX_BLOCK,
			    &r.block))) {
			snprintf(err, KV_ERRLEN, "line %zu: not a kvsize row",
				 t.line[i]);
			e = KV_EINVAL;
			break;
		}
		r.model = CELL(KV_SROW_MODEL);
#undef CELL
		r.asked_auto = asked && !strcmp(asked, "auto");
		r.config = json && *json ? json : NULL;
		(*rows)[(*n)++] = r;
	}
	if (e) {
		free(*rows);
		*rows = NULL;
		*n = 0;
	}
	kv_tsv_free(&t);
	return e;
}

int kv_lrow_size(const struct kv_model *m, const struct kv_opts *o,
		 uint32_t layer, uint64_t ctx, uint64_t users,
		 struct kv_lrow *r, char *err)
{
	int e;
	*r = (struct kv_lrow){.model = m->name, .k = o->k_dtype,
			      .v = o->v_dtype, .layer = layer, .ctx = ctx,
			      .users = users};
	if ((e = kv_layer_geom(m, layer, o, &r->g, err)) ||
	    (e = kv_geom_token_bytes(&r->g, o, &r->bytes_per_token, err)))
		return e;
	return kv_geom_ctx_bytes(m, &r->g, r->bytes_per_token, ctx, users,
				 o->block, &r->tokens, &r->kv_bytes, err);
}

void kv_lrow_cell(const struct kv_lrow *r, enum kv_lrow_col c,
		  struct kv_cell *out)
{
	switch (c) {
	case KV_LROW_MODEL: kv_cell_str(out, r->model); break;
	case KV_LROW_KV_DTYPE: formats(out, r->k, r->v); break;
	case KV_LROW_LAYER: kv_cell_num(out, KV_CELL_U64, r->layer); break;
	case KV_LROW_KIND: kv_cell_str(out, kv_attn_name(r->g.attn)); break;
	case KV_LROW_KV_HEADS: kv_cell_num(out, KV_CELL_U64, r->g.heads); break;
	case KV_LROW_HEAD_DIM_K: kv_cell_num(out, KV_CELL_U64, r->g.dim_k); break;
	case KV_LROW_HEAD_DIM_V: kv_cell_num(out, KV_CELL_U64, r->g.dim_v); break;
	case KV_LROW_WINDOW:
		if (r->g.window)
			kv_cell_num(out, KV_CELL_U64, r->g.window);
		else
			kv_cell_empty(out);
		break;
	case KV_LROW_CTX: kv_cell_num(out, KV_CELL_U64, r->ctx); break;
	case KV_LROW_TOKENS: kv_cell_num(out, KV_CELL_U64, r->tokens); break;
	case KV_LROW_USERS: kv_cell_num(out, KV_CELL_U64, r->users); break;
	case KV_LROW_BYTES_PER_TOKEN:
		kv_cell_num(out, KV_CELL_BYTES, r->bytes_per_token);
		break;
	case KV_LROW_KV_BYTES: kv_cell_num(out, KV_CELL_BYTES, r->kv_bytes); break;
	default: kv_cell_str(out, ""); break;
	}
}
