/*
 * test_gguf.c - the GGUF header reader: ggml's type sizes by hand, a file
 * built here byte by byte read back, each rule of the header broken once
 * with the message it gives, a split read as one, and the metadata of a
 * few architectures read as the model llama.cpp's loader makes of it.
 */
#include <stdint.h>
#include <unistd.h>

#include "kv/gguf.h"
#include "kv/model.h"
#include "test.h"

/* --- a GGUF in memory --- */

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *x, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, x, n);
	b->n += n;
}

static void u32(struct buf *b, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			(uint8_t)(v >> 24)};
	put(b, x, 4);
}

static void u64(struct buf *b, uint64_t v)
{
	u32(b, (uint32_t)v);
	u32(b, (uint32_t)(v >> 32));
}

static void str(struct buf *b, const char *s)
{
	u64(b, strlen(s));
	put(b, s, strlen(s));
}

static void head(struct buf *b, uint64_t n_t, uint64_t n_kv)
{
	put(b, "GGUF", 4);
	u32(b, 3);
	u64(b, n_t);
	u64(b, n_kv);
}

static void kv_u32(struct buf *b, const char *k, uint32_t v)
{
	str(b, k);
	u32(b, KV_GGUF_U32);
	u32(b, v);
}

static void kv_str(struct buf *b, const char *k, const char *v)
{
	str(b, k);
	u32(b, KV_GGUF_STRING);
	str(b, v);
}

static void kv_arr_u32(struct buf *b, const char *k, const uint32_t *v,
		       size_t n)
{
	str(b, k);
	u32(b, KV_GGUF_ARRAY);
	u32(b, KV_GGUF_U32);
	u64(b, n);
	for (size_t i = 0; i < n; i++)
		u32(b, v[i]);
}

static void tensor(struct buf *b, const char *name, uint64_t ne0,
		   uint64_t ne1, uint32_t type, uint64_t offset)
{
	str(b, name);
	u32(b, 2);
	u64(b, ne0);
	u64(b, ne1);
	u32(b, type);
	u64(b, offset);
}

/* zeros up to the next multiple of 32, then n bytes of data */
static void data(struct buf *b, size_t n)
{
	static const uint8_t z[4096];
	size_t pad = (32 - b->n % 32) % 32;
	put(b, z, pad);
	while (n) {
		size_t k = n < sizeof z ? n : sizeof z;
		put(b, z, k);
		n -= k;
	}
}

/* The shape keys of a small Llama (2 layers, 256 wide, 4 heads, 2 K/V
 * heads, MLP 512, 256 tokens): 9 keys. */
static void llama_keys(struct buf *b)
{
	kv_str(b, "general.architecture", "llama");
	kv_u32(b, "llama.block_count", 2);
	kv_u32(b, "llama.context_length", 4096);
	kv_u32(b, "llama.embedding_length", 256);
	kv_u32(b, "llama.feed_forward_length", 512);
	kv_u32(b, "llama.attention.head_count", 4);
	kv_u32(b, "llama.attention.head_count_kv", 2);
	kv_u32(b, "llama.vocab_size", 256);
	kv_u32(b, "general.file_type", 15);
}

static int parse(const struct buf *b, struct kv_gguf **g, char *err)
{
	return kv_gguf_parse(b->p, b->n, "x.gguf", g, err);
}

/* parse b, expecting KV_EINVAL and msg in the message */
static void refused(struct buf *b, const char *msg)
{
	struct kv_gguf *g;
	char err[KV_ERRLEN];
	int e = parse(b, &g, err);
	CHECK(e == KV_EINVAL);
	CHECK(g == NULL);
	CHECK_HAS(err, "x.gguf: ");
	CHECK_HAS(err, msg);
	free(b->p);
	*b = (struct buf){0};
}

static void test_types(void)
{
	uint32_t block, bytes;
	const char *name;
	/* block_q4_K: d, dmin (2 + 2), 12 bytes of scales, 128 of 4-bit
	 * quants for 256 values: 144 */
	CHECK(kv_gguf_ggml_type(12, &block, &bytes, &name));
	CHECK_U64(block, 256);
	CHECK_U64(bytes, 144);
	CHECK_STR(name, "Q4_K");
	/* block_q6_K: 128 low bits + 64 high + 16 scales + d: 210 */
	CHECK(kv_gguf_ggml_type(14, &block, &bytes, NULL));
	CHECK_U64(bytes, 210);
	/* block_q8_0: d + 32 bytes; q8_1: d, s + 32 */
	CHECK(kv_gguf_ggml_type(8, &block, &bytes, NULL));
	CHECK_U64(block, 32);
	CHECK_U64(bytes, 34);
	CHECK(kv_gguf_ggml_type(9, &block, &bytes, NULL));
	CHECK_U64(bytes, 36);
	/* block_q4_0: d + 16; q5_1: d, m, 4 high-bit bytes + 16 */
	CHECK(kv_gguf_ggml_type(2, &block, &bytes, NULL));
	CHECK_U64(bytes, 18);
	CHECK(kv_gguf_ggml_type(7, &block, &bytes, NULL));
	CHECK_U64(bytes, 24);
	/* Q2_K 84, Q3_K 110, Q5_K 176, Q8_K 292 (float d, 256, 16 sums) */
	CHECK(kv_gguf_ggml_type(10, NULL, &bytes, NULL) && bytes == 84);
	CHECK(kv_gguf_ggml_type(11, NULL, &bytes, NULL) && bytes == 110);
	CHECK(kv_gguf_ggml_type(13, NULL, &bytes, NULL) && bytes == 176);
	CHECK(kv_gguf_ggml_type(15, NULL, &bytes, NULL) && bytes == 292);
	/* the i-quants: IQ2_XXS 2 + 64, IQ4_XS 2 + 2 + 4 + 128, IQ1_M
	 * 32 + 16 + 8, IQ4_NL as Q4_0 */
	CHECK(kv_gguf_ggml_type(16, NULL, &bytes, NULL) && bytes == 66);
	CHECK(kv_gguf_ggml_type(23, NULL, &bytes, NULL) && bytes == 136);
	CHECK(kv_gguf_ggml_type(29, NULL, &bytes, NULL) && bytes == 56);
	CHECK(kv_gguf_ggml_type(20, &block, &bytes, NULL) && block == 32 &&
	      bytes == 18);
	/* ternary TQ1_0: 48 + 4 + 2; MXFP4: one shared exponent + 16 */
	CHECK(kv_gguf_ggml_type(34, NULL, &bytes, NULL) && bytes == 54);
	CHECK(kv_gguf_ggml_type(39, &block, &bytes, &name) && block == 32 &&
	      bytes == 17);
	CHECK_STR(name, "MXFP4");
	CHECK(kv_gguf_ggml_type(30, &block, &bytes, &name) && bytes == 2);
	CHECK_STR(name, "BF16");
	CHECK(kv_gguf_ggml_type(28, NULL, &bytes, NULL) && bytes == 8);
	/* numbers ggml dropped or never had */
	CHECK(!kv_gguf_ggml_type(4, NULL, NULL, NULL));
	CHECK(!kv_gguf_ggml_type(31, NULL, NULL, NULL));
	CHECK(!kv_gguf_ggml_type(40, NULL, NULL, NULL));
	CHECK(!kv_gguf_ggml_type(UINT32_MAX, NULL, NULL, NULL));

	/* a 4096 x 4096 matrix in Q4_K: 16 blocks a row, 2,304 bytes,
	 * 4096 rows: 9,437,184 bytes (4.5 bits a value) */
	uint64_t ne[2] = {4096, 4096}, b;
	CHECK(kv_gguf_tensor_bytes(12, 2, ne, &b) == 0);
	CHECK_U64(b, 9437184);
	/* rows of 100 values are not whole Q4_K blocks */
	ne[0] = 100;
	CHECK(kv_gguf_tensor_bytes(12, 2, ne, &b) == KV_EINVAL);
	/* F16 vector of 100: 200 bytes; 2^62 x 4 bytes: past 2^63 */
	CHECK(kv_gguf_tensor_bytes(1, 1, ne, &b) == 0 && b == 200);
	ne[0] = 1ULL << 62;
	CHECK(kv_gguf_tensor_bytes(0, 1, ne, &b) == KV_ERANGE);
}

/* A file with two tensors read back: keys, values, shapes, bytes. */
static void test_read(void)
{
	struct buf b = {0};
	struct kv_gguf *g;
	char err[KV_ERRLEN];
	uint32_t heads[2] = {4, 4};
	head(&b, 2, 11);
	llama_keys(&b);
	kv_arr_u32(&b, "llama.some_list", heads, 2);
	str(&b, "general.flag");
	u32(&b, KV_GGUF_BOOL);
	put(&b, "\1", 1);
	/* token_embd 256 x 256 in Q4_K: 256 x 144 = 36,864 bytes, padded
	 * to 36,864 (a multiple of 32); the norm 256 floats: 1,024 */
	tensor(&b, "token_embd.weight", 256, 256, 12, 0);
	tensor(&b, "output_norm.weight", 256, 1, 0, 36864);
	data(&b, 36864 + 1024);
	CHECK(parse(&b, &g, err) == 0);
	if (!g) {
		fprintf(stderr, "%s\n", err);
		test_failures++;
		return;
	}
	CHECK_U64(g->version, 3);
	CHECK_U64(g->alignment, 32);
	CHECK_U64(g->n_kv, 11);
	CHECK_U64(g->n_t, 2);
	CHECK_U64(g->bytes, 36864 + 1024);
	CHECK_STR(g->t[0].name, "token_embd.weight");
	CHECK_U64(g->t[0].ne[1], 256);
	CHECK_U64(g->t[1].bytes, 1024);
	const struct kv_gguf_kv *x = kv_gguf_find(g, "general.architecture");
	CHECK(x && x->type == KV_GGUF_STRING);
	CHECK_STR(x ? x->str : NULL, "llama");
	x = kv_gguf_find(g, "llama.some_list");
	CHECK(x && x->type == KV_GGUF_ARRAY && x->elem == KV_GGUF_U32 &&
	      x->n == 2 && x->arr && x->arr[1] == 4);
	x = kv_gguf_find(g, "general.flag");
	CHECK(x && x->type == KV_GGUF_BOOL && x->v.u == 1);
	CHECK(kv_gguf_find(g, "nothing") == NULL);
	kv_gguf_free(g);
	free(b.p);
	kv_gguf_free(NULL);
}

/* Each rule of the header broken once. */
static void test_refused(void)
{
	struct buf b = {0};
	put(&b, "GGML", 4);
	u32(&b, 3);
	refused(&b, "not a GGUF file");
	put(&b, "GGUF", 4);
	u32(&b, 1);
	refused(&b, "GGUF version 1, which kvtools does not read");
	put(&b, "GGUF", 4);
	u32(&b, 0x03000000u);
	refused(&b, "a big-endian GGUF");
	/* the header cut inside the tensor count */
	put(&b, "GGUF", 4);
	u32(&b, 3);
	u32(&b, 0);
	refused(&b, "truncated: the file ends inside the tensor count (at "
		    "byte 12)");
	/* cut inside a value */
	head(&b, 0, 2);
	kv_str(&b, "general.architecture", "llama");
	str(&b, "llama.block_count");
	u32(&b, KV_GGUF_U32);
	put(&b, "\2\0", 2);
	refused(&b, "truncated: the file ends inside llama.block_count's "
		    "value");
	/* counts past what the file could hold */
	head(&b, 0, 1000);
	llama_keys(&b);
	refused(&b, "the metadata count: 1000 keys do not fit");
	/* a string longer than the file */
	head(&b, 0, 1);
	str(&b, "general.name");
	u32(&b, KV_GGUF_STRING);
	u64(&b, 1ULL << 40);
	put(&b, "tiny", 4);
	refused(&b, "general.name's value: a string of 1099511627776 bytes, "
		    "past the file's end (4 bytes left)");
	head(&b, 0, 1);
	u64(&b, 70000);
	data(&b, 64);
	refused(&b, "key 0's name: a string of 70000 bytes, longer than the "
		    "65535 allowed");
	/* a value type GGUF has no number for */
	head(&b, 0, 1);
	str(&b, "general.x");
	u32(&b, 13);
	u32(&b, 0);
	refused(&b, "general.x: unknown value type 13");
	/* arrays of arrays; arrays longer than the file */
	head(&b, 0, 1);
	str(&b, "tokenizer.ggml.merges");
	u32(&b, KV_GGUF_ARRAY);
	u32(&b, KV_GGUF_ARRAY);
	u64(&b, 1);
	refused(&b, "tokenizer.ggml.merges: an array of arrays, which GGUF "
		    "readers refuse");
	head(&b, 0, 1);
	str(&b, "tokenizer.ggml.scores");
	u32(&b, KV_GGUF_ARRAY);
	u32(&b, KV_GGUF_F32);
	u64(&b, 1000);
	u32(&b, 0);
	refused(&b, "tokenizer.ggml.scores: an array of 1000 float32s, past "
		    "the file's end (4 bytes left)");
	/* a bool is 0 or 1 */
	head(&b, 0, 1);
	str(&b, "general.flag");
	u32(&b, KV_GGUF_BOOL);
	put(&b, "\2", 1);
	refused(&b, "general.flag's value: a bool of 2, must be 0 or 1");
	/* a key given twice */
	head(&b, 0, 10);
	llama_keys(&b);
	kv_u32(&b, "llama.block_count", 3);
	refused(&b, "llama.block_count: a key given twice");
	/* general.alignment: a power of two, in a uint32 */
	head(&b, 0, 1);
	kv_u32(&b, "general.alignment", 48);
	refused(&b, "general.alignment: must be a power of two, got 48");
	head(&b, 0, 1);
	kv_str(&b, "general.alignment", "32");
	refused(&b, "general.alignment: must be a uint32, got a string");
	/* tensors: a type, dimensions, rows of whole blocks, offsets */
	head(&b, 1, 0);
	tensor(&b, "w", 256, 256, 4, 0);
	refused(&b, "tensor w: unknown ggml type 4");
	head(&b, 1, 0);
	str(&b, "w");
	u32(&b, 5);
	data(&b, 64);
	refused(&b, "tensor w: 5 dimensions, more than ggml's 4");
	head(&b, 1, 0);
	tensor(&b, "w", 100, 2, 12, 0);
	refused(&b, "tensor w: rows of 100 values, not whole blocks of 256 "
		    "(Q4_K)");
	head(&b, 1, 0);
	tensor(&b, "w", 256, 256, 12, 0);
	data(&b, 1000);
	refused(&b, "tensor w: 36864 bytes at offset 0 of the data do not "
		    "fit in the file (1000 bytes of data)");
	head(&b, 1, 0);
	tensor(&b, "w", 32, 1, 0, 16);
	data(&b, 256);
	refused(&b, "tensor w: offset 16 is not a multiple of the alignment "
		    "(32)");
	head(&b, 2, 0);
	tensor(&b, "a", 32, 1, 0, 128);
	tensor(&b, "b", 32, 1, 0, 0);
	data(&b, 256);
	refused(&b, "tensor a: at offset 128 of the data, where the tensors "
		    "before it end at 0");
	head(&b, 2, 0);
	tensor(&b, "a", 32, 1, 0, 0);
	tensor(&b, "a", 32, 1, 0, 128);
	data(&b, 256);
	refused(&b, "tensor a: named twice");
	head(&b, 1, 0);
	str(&b, "");
	data(&b, 64);
	refused(&b, "tensor 0: an empty name");
	head(&b, 1, 0);
	u64(&b, 64);
	data(&b, 128);
	refused(&b, "tensor 0's name: a string of 64 bytes, longer than the "
		    "63 allowed");
}

/* Writes b to path; frees b. */
static void save(struct buf *b, const char *path)
{
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	if (f) {
		CHECK(fwrite(b->p, 1, b->n, f) == b->n);
		fclose(f);
	}
	free(b->p);
	*b = (struct buf){0};
}

/* A split in two: read from either part's name, the tensors of both;
 * the second part gone, refused naming it. */
static void test_split(const char *dir)
{
	char p1[512], p2[512], err[KV_ERRLEN];
	struct buf b = {0};
	struct kv_gguf *g;
	snprintf(p1, sizeof p1, "%s/m-00001-of-00002.gguf", dir);
	snprintf(p2, sizeof p2, "%s/m-00002-of-00002.gguf", dir);
	head(&b, 1, 12);
	llama_keys(&b);
	kv_u32(&b, "split.no", 0);
	kv_u32(&b, "split.count", 2);
	kv_u32(&b, "split.tensors.count", 2);
	tensor(&b, "token_embd.weight", 256, 256, 12, 0);
	data(&b, 36864);
	save(&b, p1);
	head(&b, 1, 2);
	kv_u32(&b, "split.no", 1);
	kv_u32(&b, "split.count", 2);
	tensor(&b, "output.weight", 256, 256, 14, 0); /* Q6_K: 53,760 */
	data(&b, 53760);
	save(&b, p2);
	CHECK(kv_gguf_open(p2, &g, err) == 0);
	CHECK(g && g->parts == 2 && g->n_t == 2 && g->n_kv == 12);
	CHECK_U64(g ? g->bytes : 0, 36864 + 53760);
	CHECK_U64(g ? g->t[1].part : 0, 1);
	kv_gguf_free(g);
	unlink(p2);
	CHECK(kv_gguf_open(p1, &g, err) == KV_EINVAL);
	CHECK_HAS(err, "m-00002-of-00002.gguf: missing: part 2 of the 2 of ");
	unlink(p1);
	CHECK(kv_gguf_open(p2, &g, err) == KV_EINVAL);
	CHECK_HAS(err, "m-00001-of-00002.gguf: missing: part 1 of the 2 of ");
}

/* The GGUF of b loaded as a model (the file written to path). */
static int load(struct buf *b, const char *path, struct kv_model **m,
		char *err)
{
	save(b, path);
	int e = kv_model_load(path, m, err);
	unlink(path);
	return e;
}

static void keys(struct buf *b, const char *arch, uint32_t n_kv,
		 uint32_t layers, uint32_t hidden, uint32_t heads,
		 uint32_t kv_heads)
{
	char k[128];
	head(b, 0, n_kv);
	kv_str(b, "general.architecture", arch);
	snprintf(k, sizeof k, "%s.block_count", arch);
	kv_u32(b, k, layers);
	snprintf(k, sizeof k, "%s.context_length", arch);
	kv_u32(b, k, 32768);
	snprintf(k, sizeof k, "%s.embedding_length", arch);
	kv_u32(b, k, hidden);
	snprintf(k, sizeof k, "%s.attention.head_count", arch);
	kv_u32(b, k, heads);
	snprintf(k, sizeof k, "%s.attention.head_count_kv", arch);
	if (kv_heads) /* 0: none given */
		kv_u32(b, k, kv_heads);
	snprintf(k, sizeof k, "%s.vocab_size", arch);
	kv_u32(b, k, 1000);
}

/* The layers llama.cpp's loader makes of each architecture's keys. */
static void test_models(const char *dir)
{
	char path[512], err[KV_ERRLEN];
	struct buf b = {0};
	struct kv_model *m;
	snprintf(path, sizeof path, "%s/m.gguf", dir);

	/* gemma2: alternating, the first sliding (set_swa_pattern(2)),
	 * window 4096 when the file names none; K/V heads of key_length */
	keys(&b, "gemma2", 8, 4, 2304, 8, 4);
	kv_u32(&b, "gemma2.attention.key_length", 256);
	CHECK(load(&b, path, &m, err) == 0);
	if (m) {
		CHECK(m->gguf);
		CHECK_STR(m->name, "m");
		CHECK(m->layers[0].attn == KV_ATTN_SLIDING);
		CHECK(m->layers[1].attn == KV_ATTN_FULL);
		CHECK_U64(m->layers[2].window, 4096);
		/* per token: 4 layers x 4 heads x 256 x (K + V) = 8,192
		 * values */
		CHECK_U64(m->layers[3].kv_heads * m->layers[3].head_dim_k, 1024);
		CHECK(m->dtype == KV_DTYPE_F16);
	}
	kv_model_free(m);

	/* gemma3: five sliding, the sixth full (set_swa_pattern(6)) */
	keys(&b, "gemma3", 9, 12, 1152, 4, 1);
	kv_u32(&b, "gemma3.attention.key_length", 256);
	kv_u32(&b, "gemma3.attention.sliding_window", 512);
	CHECK(load(&b, path, &m, err) == 0);
	for (uint32_t i = 0; m && i < 12; i++)
		CHECK(m->layers[i].attn == (i % 6 == 5 ? KV_ATTN_FULL
							: KV_ATTN_SLIDING));
	CHECK_U64(m ? m->layers[0].window : 0, 512);
	kv_model_free(m);
	/* ... and its window is required */
	keys(&b, "gemma3", 8, 12, 1152, 4, 1);
	kv_u32(&b, "gemma3.attention.key_length", 256);
	CHECK(load(&b, path, &m, err) == KV_EINVAL);
	CHECK_HAS(err, "gemma3.attention.sliding_window: missing");

	/* deepseek2 (MLA as llama.cpp caches it): the latent 512 + 64 */
	keys(&b, "deepseek2", 18, 4, 2048, 16, 1);
	kv_u32(&b, "deepseek2.attention.kv_lora_rank", 512);
	kv_u32(&b, "deepseek2.rope.dimension_count", 64);
	kv_u32(&b, "deepseek2.attention.key_length", 576);
	kv_u32(&b, "deepseek2.attention.value_length", 512);
	kv_u32(&b, "deepseek2.attention.key_length_mla", 192);
	kv_u32(&b, "deepseek2.attention.value_length_mla", 128);
	kv_u32(&b, "deepseek2.expert_count", 64);
	kv_u32(&b, "deepseek2.expert_used_count", 6);
	kv_u32(&b, "deepseek2.expert_feed_forward_length", 1408);
	kv_u32(&b, "deepseek2.leading_dense_block_count", 1);
	kv_u32(&b, "deepseek2.feed_forward_length", 10944);
	CHECK(load(&b, path, &m, err) == 0);
	if (m) {
		CHECK(m->layers[0].attn == KV_ATTN_MLA);
		CHECK_U64(m->layers[0].head_dim_k, 576);
		CHECK_U64(m->kv_lora_rank, 512);
		CHECK_U64(m->qk_nope_dim, 128);
		CHECK_U64(m->v_head_dim, 128);
		CHECK_U64(m->n_experts, 64);
		CHECK(m->layers[0].mlp == KV_MLP_DENSE);
		CHECK(m->layers[1].mlp == KV_MLP_MOE);
		CHECK_STR(m->model_type, "deepseek_v2");
	}
	kv_model_free(m);

	/* qwen3moe: experts of expert_feed_forward_length on every layer;
	 * YaRN 4x over 32,768 positions */
	keys(&b, "qwen3moe", 14, 2, 2048, 32, 4);
	kv_str(&b, "qwen3moe.rope.scaling.type", "yarn");
	str(&b, "qwen3moe.rope.scaling.factor");
	u32(&b, KV_GGUF_F32);
	u32(&b, 0x40800000u); /* 4.0f */
	kv_u32(&b, "qwen3moe.rope.scaling.original_context_length", 32768);
	kv_u32(&b, "qwen3moe.attention.key_length", 128);
	kv_u32(&b, "qwen3moe.expert_count", 128);
	kv_u32(&b, "qwen3moe.expert_used_count", 8);
	kv_u32(&b, "qwen3moe.expert_feed_forward_length", 768);
	CHECK(load(&b, path, &m, err) == 0);
	if (m) {
		CHECK_U64(m->n_experts_active, 8);
		CHECK(m->layers[1].mlp == KV_MLP_MOE);
		CHECK_U64(m->layers[1].ffn_dim, 768);
		CHECK_U64(m->head_dim, 128);
		CHECK_STR(m->rope_scaling.type, "yarn");
		CHECK_NEAR(m->rope_scaling.factor, 4, 0);
		CHECK_U64(m->rope_scaling.original_max, 32768);
	}
	kv_model_free(m);

	/* falcon-h1: attention and a Mamba-2 mixer in every layer, 32
	 * heads (time_step_rank) of 64 of its 2048 channels */
	keys(&b, "falcon-h1", 11, 4, 1024, 8, 2);
	kv_u32(&b, "falcon-h1.ssm.inner_size", 2048);
	kv_u32(&b, "falcon-h1.ssm.state_size", 128);
	kv_u32(&b, "falcon-h1.ssm.conv_kernel", 4);
	kv_u32(&b, "falcon-h1.ssm.time_step_rank", 32);
	CHECK(load(&b, path, &m, err) == 0);
	if (m) {
		CHECK(m->layers[3].attn == KV_ATTN_FULL && m->layers[3].ssm);
		CHECK_U64(m->layers[3].kv_heads * m->layers[3].head_dim_k, 256);
		CHECK_U64(m->ssm_version, 2);
		CHECK_U64(m->ssm_heads, 32);
		CHECK_U64(m->ssm_d_inner, 2048);
		CHECK_U64(m->ssm_d_state, 128);
		CHECK(m->ssm_dtype == KV_DTYPE_F32);
	}
	kv_model_free(m);

	/* jamba: head_count_kv 0 marks the Mamba layers; the routers'
	 * tensors name the MoE layers (1 and 3: every 2nd from 1) */
	uint32_t jk[4] = {0, 0, 8, 0};
	keys(&b, "jamba", 13, 4, 1024, 16, 0);
	kv_arr_u32(&b, "jamba.attention.head_count_kv", jk, 4);
	kv_u32(&b, "jamba.ssm.inner_size", 2048);
	kv_u32(&b, "jamba.ssm.state_size", 16);
	kv_u32(&b, "jamba.ssm.conv_kernel", 4);
	kv_u32(&b, "jamba.ssm.time_step_rank", 64);
	kv_u32(&b, "jamba.expert_count", 4);
	kv_u32(&b, "jamba.expert_used_count", 2);
	b.p[8] = 2; /* two tensors */
	tensor(&b, "blk.1.ffn_gate_inp.weight", 1024, 4, 0, 0);
	tensor(&b, "blk.3.ffn_gate_inp.weight", 1024, 4, 0, 16384);
	data(&b, 32768);
	CHECK(load(&b, path, &m, err) == 0);
	if (m) {
		CHECK(m->layers[0].attn == KV_ATTN_NONE && m->layers[0].ssm);
		CHECK(m->layers[2].attn == KV_ATTN_FULL && !m->layers[2].ssm);
		CHECK_U64(m->layers[2].kv_heads, 8);
		CHECK(m->layers[0].mlp == KV_MLP_DENSE);
		CHECK(m->layers[1].mlp == KV_MLP_MOE);
		CHECK(m->layers[3].mlp == KV_MLP_MOE);
		CHECK_U64(m->ssm_d_inner, 2048);
	}
	kv_model_free(m);

	/* mamba2: no attention; 16 heads of 64 over 1024 channels, and
	 * channels that are not whole heads refused */
	head(&b, 0, 10);
	kv_str(&b, "general.architecture", "mamba2");
	kv_u32(&b, "mamba2.block_count", 2);
	kv_u32(&b, "mamba2.context_length", 1048576);
	kv_u32(&b, "mamba2.embedding_length", 512);
	kv_u32(&b, "mamba2.vocab_size", 1000);
	kv_u32(&b, "mamba2.ssm.inner_size", 1024);
	kv_u32(&b, "mamba2.ssm.state_size", 128);
	kv_u32(&b, "mamba2.ssm.conv_kernel", 4);
	kv_u32(&b, "mamba2.ssm.time_step_rank", 16);
	kv_u32(&b, "mamba2.ssm.group_count", 1);
	CHECK(load(&b, path, &m, err) == 0);
	if (m) {
		CHECK(m->layers[1].attn == KV_ATTN_NONE && m->layers[1].ssm);
		CHECK_U64(m->ssm_heads, 16);
		CHECK_U64(m->ssm_d_inner, 1024);
	}
	kv_model_free(m);
	head(&b, 0, 9);
	kv_str(&b, "general.architecture", "mamba2");
	kv_u32(&b, "mamba2.block_count", 2);
	kv_u32(&b, "mamba2.context_length", 1048576);
	kv_u32(&b, "mamba2.embedding_length", 512);
	kv_u32(&b, "mamba2.vocab_size", 1000);
	kv_u32(&b, "mamba2.ssm.inner_size", 1000);
	kv_u32(&b, "mamba2.ssm.state_size", 128);
	kv_u32(&b, "mamba2.ssm.conv_kernel", 4);
	kv_u32(&b, "mamba2.ssm.time_step_rank", 16);
	CHECK(load(&b, path, &m, err) == KV_EINVAL);
	CHECK_HAS(err, "mamba2.ssm.inner_size: 1000 channels are not 16 heads "
		       "(its time_step_rank) of a whole size");

	/* head_count_kv one per layer: alike, as one number; else not
	 * mapped */
	uint32_t kvh[2] = {8, 8};
	keys(&b, "llama", 7, 2, 4096, 32, 0);
	kv_arr_u32(&b, "llama.attention.head_count_kv", kvh, 2);
	CHECK(load(&b, path, &m, err) == 0);
	CHECK_U64(m ? m->layers[1].kv_heads : 0, 8);
	kv_model_free(m);
	kvh[1] = 4;
	keys(&b, "llama", 7, 2, 4096, 32, 0);
	kv_arr_u32(&b, "llama.attention.head_count_kv", kvh, 2);
	CHECK(load(&b, path, &m, err) == KV_EINVAL);
	CHECK_HAS(err, "llama.attention.head_count_kv: layers of 8 and of 4; "
		       "per-layer sizes that differ are not mapped for llama");
	kvh[1] = 8;

	/* what is refused, by key */
	keys(&b, "llama", 7, 2, 4096, 32, 5);
	CHECK(load(&b, path, &m, err) == KV_EINVAL);
	CHECK_HAS(err, "llama.attention.head_count_kv: 5 K/V heads must "
		       "divide the 32 attention heads (layer 0)");
	keys(&b, "bert", 7, 2, 4096, 32, 8);
	CHECK(load(&b, path, &m, err) == KV_EINVAL);
	CHECK_HAS(err, "general.architecture: \"bert\" is not an "
		       "architecture kvtools maps");
	head(&b, 0, 1);
	kv_str(&b, "general.architecture", "llama");
	CHECK(load(&b, path, &m, err) == KV_EINVAL);
	CHECK_HAS(err, "m.gguf: llama.block_count: missing");
	keys(&b, "llama", 8, 2, 4096, 32, 8);
	str(&b, "llama.attention.key_length");
	u32(&b, KV_GGUF_STRING);
	str(&b, "128");
	CHECK(load(&b, path, &m, err) == KV_EINVAL);
	CHECK_HAS(err, "llama.attention.key_length: must be a whole number, "
		       "got a string");
	/* tokenizer.ggml.tokens: an array of strings, or refused */
	head(&b, 0, 7);
	kv_str(&b, "general.architecture", "llama");
	kv_u32(&b, "llama.block_count", 2);
	kv_u32(&b, "llama.context_length", 4096);
	kv_u32(&b, "llama.embedding_length", 256);
	kv_u32(&b, "llama.attention.head_count", 4);
	kv_u32(&b, "llama.feed_forward_length", 512);
	kv_arr_u32(&b, "tokenizer.ggml.tokens", kvh, 2);
	CHECK(load(&b, path, &m, err) == KV_EINVAL);
	CHECK_HAS(err, "tokenizer.ggml.tokens: must be an array of strings, "
		       "got an array of uint32s");
}

int main(void)
{
	char dir[] = "/tmp/test_gguf.XXXXXX";
	test_types();
	test_read();
	test_refused();
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_split(dir);
	test_models(dir);
	rmdir(dir);
	printf("test_gguf: %d checks, %d failed\n", test_checks,
	       test_failures);
	return test_failures ? 1 : 0;
}
