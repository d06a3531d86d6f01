/*
 * test_rows.c - kvsize's rows (rows.c): the columns in order, a row's
 * numbers worked by hand, its cells, and the reader kvfit uses, held to
 * the limits kvsize writes under.
 */
#include "kv/rows.h"
#include "test.h"

/* The cell of column c as text. */
static const char *cell_text(const struct kv_srow *r, enum kv_srow_col c,
			     char *buf, size_t n)
{
	struct kv_cell cell;
	kv_srow_cell(r, c, &cell);
	if (cell.kind == KV_CELL_STR)
		snprintf(buf, n, "%s", cell.s);
	else if (cell.kind == KV_CELL_EMPTY)
		snprintf(buf, n, "(empty)");
	else
		snprintf(buf, n, "%" PRIu64 "%s", cell.u,
			 cell.kind == KV_CELL_BYTES ? " B" : "");
	return buf;
}

static void test_cols(void)
{
	enum kv_srow_col c[KV_SROW_NCOLS];
	CHECK_U64(kv_srow_cols(false, false, false, c), 11);
	CHECK_STR(kv_srow_names[c[0]], "model");
	CHECK_STR(kv_srow_names[c[10]], "kv_dtype_asked");
	CHECK_U64(kv_srow_cols(true, true, true, c), 15);
	CHECK_STR(kv_srow_names[c[11]], "state_bytes");
	CHECK_STR(kv_srow_names[c[12]], "tp");
	CHECK_STR(kv_srow_names[c[13]], "block_size");
	CHECK_STR(kv_srow_names[c[14]], "config");
	CHECK_U64(kv_srow_cols(false, true, false, c), 13);
	CHECK_STR(kv_srow_names[c[11]], "tp");
}

/* Llama 3.1 8B in bf16 at 8,192 tokens, on 2 ranks in pages of 16:
 * 32 layers x 2 (K, V) x 4 heads a rank x 128 x 2 bytes = 65,536 bytes
 * a token, x 8,192 = 536,870,912. */
static void test_size(void)
{
	struct kv_model *m = test_load("llama-3.1-8b");
	struct kv_opts o = kv_opts_default(m);
	struct kv_srow r;
	char err[KV_ERRLEN], buf[64];
	o.tp = 2;
	o.block = 16;
	CHECK(kv_srow_size(m, &o, true, 8192, 1, false, &r, err) == 0);
	CHECK_U64(r.bytes_per_token, 65536);
	CHECK_U64(r.kv_bytes, 536870912);
	CHECK_STR(cell_text(&r, KV_SROW_KV_DTYPE, buf, sizeof buf), "bf16");
	CHECK_STR(cell_text(&r, KV_SROW_KV_DTYPE_ASKED, buf, sizeof buf),
		  "auto");
	CHECK_STR(cell_text(&r, KV_SROW_KV_HEADS, buf, sizeof buf), "4");
	CHECK_STR(cell_text(&r, KV_SROW_KV_BYTES, buf, sizeof buf),
		  "536870912 B");
	CHECK_STR(cell_text(&r, KV_SROW_TP, buf, sizeof buf), "2");
	CHECK_STR(cell_text(&r, KV_SROW_CONFIG, buf, sizeof buf), "");
	o.k_dtype = KV_DTYPE_FP8;
	CHECK(kv_srow_size(m, &o, false, 8192, 1, false, &r, err) == 0);
	CHECK_U64(r.bytes_per_token, 49152); /* K 1 byte, V 2: 3/4 */
	CHECK_STR(cell_text(&r, KV_SROW_KV_DTYPE_ASKED, buf, sizeof buf),
		  "fp8/bf16");
	/* 2^17 tokens x 2^40 users x 2^16 bytes: past 64 bits */
	CHECK(kv_srow_size(m, &o, false, 131072, KV_MAX_USERS, false, &r,
			   err) == KV_ERANGE);
	CHECK_HAS(err, "overflow");
	kv_model_free(m);
}

/* Gemma 2 9B (float32), layer 0 slides over 4,096 of 8,192 tokens:
 * 2 x 8 heads x 256 x 4 bytes = 16,384 a token, 67,108,864 kept. */
static void test_layer(void)
{
	struct kv_model *m = test_load("gemma-2-9b");
	struct kv_opts o = kv_opts_default(m);
	struct kv_lrow r;
	struct kv_cell c;
	char err[KV_ERRLEN];
	CHECK(kv_lrow_size(m, &o, 0, 8192, 1, &r, err) == 0);
	CHECK_U64(r.tokens, 4096);
	CHECK_U64(r.bytes_per_token, 16384);
	CHECK_U64(r.kv_bytes, 67108864);
	kv_lrow_cell(&r, KV_LROW_KIND, &c);
	CHECK_STR(c.s, "sliding");
	kv_lrow_cell(&r, KV_LROW_WINDOW, &c);
	CHECK_U64(c.u, 4096);
	CHECK(kv_lrow_size(m, &o, 1, 8192, 3, &r, err) == 0);
	CHECK_U64(r.kv_bytes, 3ULL * 8192 * 16384);
	kv_lrow_cell(&r, KV_LROW_WINDOW, &c);
	CHECK(c.kind == KV_CELL_EMPTY);
	CHECK_STR(kv_lrow_names[KV_LROW_TOKENS], "tokens");
	kv_model_free(m);
}

/* Reads text (copied: the reader cuts it); returns the error or 0. */
static int read_text(const char *text, struct kv_srow **rows, size_t *n,
		char *err, char **keep)
{
	*keep = strdup(text);
	return kv_srows_read(*keep, rows, n, err);
}

static void test_read(void)
{
	struct kv_srow *rows;
	size_t n;
	char err[KV_ERRLEN], *t;
	static const char head[] =
		"model\tkv_dtype\tctx\tusers\tkv_dtype_asked\ttp\tblock_size\n";
	char text[512];
	snprintf(text, sizeof text,
		 "%sa\tbf16\t8192\t2\tauto\t65536\t1048576\r\n\n"
		 "b\tfp8/bf16\t1\t1099511627776\tfp8/bf16\t1\t0\n",
		 head);
	CHECK(read_text(text, &rows, &n, err, &t) == 0);
	CHECK_U64(n, 2);
	CHECK_STR(rows[0].model, "a");
	CHECK(rows[0].asked_auto && !rows[1].asked_auto);
	CHECK_U64(rows[0].users, 2);
	CHECK_U64(rows[0].tp, KV_MAX_RANKS);
	CHECK_U64(rows[0].block, KV_MAX_BLOCK);
	CHECK_U64(rows[1].line, 4);
	CHECK(rows[1].k == KV_DTYPE_FP8 && rows[1].v == KV_DTYPE_BF16);
	CHECK_U64(rows[1].users, KV_MAX_USERS);
	CHECK(rows[1].config == NULL);
	free(rows);
	free(t);
	/* one past each limit, a zero context, a short row */
	static const char *const bad[] = {
		"a\tbf16\t8192\t1099511627777\tauto\t1\t16\n",
		"a\tbf16\t8192\t1\tauto\t65537\t16\n",
		"a\tbf16\t8192\t1\tauto\t1\t1048577\n",
		"a\tbf16\t0\t1\tauto\t1\t16\n",
		"a\tbf16\t8192\t1\tauto\t0\t16\n",
		"a\tbf16\t8192\n",
		"a\tbf17\t8192\t1\tauto\t1\t16\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		snprintf(text, sizeof text, "%s%s", head, bad[i]);
		CHECK(read_text(text, &rows, &n, err, &t) == KV_EINVAL);
		CHECK_STR(err, "line 2: not a kvsize row");
		CHECK(rows == NULL && n == 0);
		free(t);
	}
	CHECK(read_text("\n\n", &rows, &n, err, &t) == KV_EINVAL);
	CHECK_STR(err, "empty input, expected a config or kvsize's rows");
	free(t);
	CHECK(read_text(head, &rows, &n, err, &t) == KV_EINVAL);
	CHECK_STR(err, "kvsize's header and no rows");
	free(t);
	CHECK(read_text("\nmodel\tkv_dtype\tlayer\tctx\n", &rows, &n, err, &t) ==
	      KV_EINVAL);
	CHECK_STR(err, "line 2: not kvsize's header (model, kv_dtype, ctx; "
		       "no --per-layer)");
	free(t);
	/* a config carried on its row */
	CHECK(read_text("model\tkv_dtype\tctx\tconfig\nm\tf16\t4\t{\"x\": 1}\n",
		   &rows, &n, err, &t) == 0);
	CHECK_STR(rows[0].config, "{\"x\": 1}");
	CHECK_U64(rows[0].users, 1);
	CHECK_U64(rows[0].tp, 0);
	free(rows);
	free(t);
}

int main(void)
{
	test_cols();
	test_size();
	test_layer();
	test_read();
	return test_done("test_rows");
}
