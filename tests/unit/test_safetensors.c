/*
 * test_safetensors - checkpoints read strictly: a single file and shards
 * under an index, tensors found by name with their data mapped, and each
 * malformed header refused in one message naming the file and tensor.
 */
#include <stdlib.h>
#include <unistd.h>

#include "kv/safetensors.h"
#include "st_write.h"
#include "test.h"

static char dir[] = "/tmp/kvtest-st-XXXXXX";

static char *at(const char *name)
{
	static char p[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
	return p[k];
}

static void clean(void)
{
	const char *f[] = {"model.safetensors", "model.safetensors.index.json",
			   "a.safetensors", "b.safetensors"};
	for (size_t i = 0; i < 4; i++)
		unlink(at(f[i]));
}

static void single(void)
{
	float w[6] = {1, 2, 3, 4, 5, 6};
	uint16_t b[2] = {0x3f80, 0xc000}; /* bf16 1 and -2 */
	struct st_w t[] = {{"w", "F32", {2, 3}, 2, w, sizeof w},
			   {"b", "BF16", {2}, 1, b, sizeof b}};
	struct kv_st *st;
	char err[KV_ERRLEN];
	clean();
	CHECK(st_write(at("model.safetensors"), t, 2) == 0);
	CHECK(kv_st_open(dir, 1, &st, err) == 0);
	CHECK_U64(st->n, 2);
	CHECK_U64(st->bytes, 28);
	const struct kv_st_tensor *x = kv_st_get(st, "w");
	CHECK(x && x->dtype == KV_ST_F32 && x->ndim == 2 && x->elems == 6);
	CHECK(x && x->shape[0] == 2 && x->shape[1] == 3);
	CHECK(x && !memcmp(x->data, w, sizeof w));
	x = kv_st_get(st, "b");
	CHECK(x && x->dtype == KV_ST_BF16 && !memcmp(x->data, b, sizeof b));
	CHECK(kv_st_get(st, "c") == NULL);
	kv_st_close(st);
	CHECK_STR(kv_st_dtype_name(KV_ST_F8_E4M3), "F8_E4M3");
	CHECK_U64(kv_st_dtype_bytes(KV_ST_BF16), 2);
}

/* Two shards under an index; the index must name every tensor where it
 * is. */
static void sharded(void)
{
	float a[2] = {1, 2}, b[3] = {3, 4, 5};
	struct st_w ta[] = {{"x.a", "F32", {2}, 1, a, sizeof a}};
	struct st_w tb[] = {{"x.b", "F32", {3}, 1, b, sizeof b}};
	struct kv_st *st;
	char err[KV_ERRLEN];
	FILE *f;
	clean();
	CHECK(st_write(at("a.safetensors"), ta, 1) == 0);
	CHECK(st_write(at("b.safetensors"), tb, 1) == 0);
	f = fopen(at("model.safetensors.index.json"), "w");
	fputs("{\"metadata\":{\"total_size\":20},\"weight_map\":{\"x.b\":"
	      "\"b.safetensors\",\"x.a\":\"a.safetensors\"}}", f);
	fclose(f);
	CHECK(kv_st_open(dir, 1, &st, err) == 0);
	CHECK(st->n == 2 && st->nf == 2 && st->bytes == 20);
	const struct kv_st_tensor *x = kv_st_get(st, "x.a");
	CHECK(x && x->file == 1 && ((const float *)x->data)[1] == 2);
	kv_st_close(st);
	f = fopen(at("model.safetensors.index.json"), "w");
	fputs("{\"weight_map\":{\"x.b\":\"a.safetensors\",\"x.a\":"
	      "\"a.safetensors\"}}", f);
	fclose(f);
	CHECK(kv_st_open(dir, 0, &st, err) == KV_EINVAL && !st);
	CHECK_HAS(err, "x.b: not in a.safetensors, where weight_map names it");
	f = fopen(at("model.safetensors.index.json"), "w");
	fputs("{\"weight_map\":{\"x.a\":\"../a.safetensors\"}}", f);
	fclose(f);
	CHECK(kv_st_open(dir, 0, &st, err) == KV_EINVAL);
	CHECK_HAS(err, "weight_map: x.a: not a file name beside the index");
	f = fopen(at("model.safetensors.index.json"), "w");
	fputs("{\"weight_map\":{\"x.a\":\"a.safetensors\"}}", f);
	fclose(f);
	CHECK(kv_st_open(dir, 0, &st, err) == 0);
	kv_st_close(st);
	/* a tensor the index leaves out of a shard it names */
	struct st_w two[] = {{"x.a", "F32", {2}, 1, a, sizeof a},
			     {"x.z", "F32", {2}, 1, a, sizeof a}};
	CHECK(st_write(at("a.safetensors"), two, 2) == 0);
	CHECK(kv_st_open(dir, 0, &st, err) == KV_EINVAL);
	CHECK_HAS(err, "the shards hold 2 tensors, weight_map names 1");
}

/* Each malformed header, refused with the file and tensor named. */
static void bad(void)
{
	static const struct {
		const char *header;
		size_t data;
		const char *want;
	} cases[] = {
		{"[1, 2]", 0, "the header is not a JSON object"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
		 "\"data_offsets\":[0,8]},", 8, "model.safetensors: "},
		{"{\"a\":{\"dtype\":\"Q4\",\"shape\":[2],"
		 "\"data_offsets\":[0,8]}}", 8, "a: unknown dtype 'Q4'"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
		 "\"data_offsets\":[0,6]}}", 6,
		 "a: data_offsets [0, 6] hold 6 bytes; its shape in F32 is 8"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
		 "\"data_offsets\":[0,8]}}", 4,
		 "a: data_offsets [0, 8] run past the 4 bytes of data"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
		 "\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F32\","
		 "\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
		 "b: data_offsets begin at 4, where another tensor's bytes "
		 "are"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],"
		 "\"data_offsets\":[4,8]}}", 8,
		 "a: data_offsets begin at 4, where the data before is no "
		 "tensor's"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],"
		 "\"data_offsets\":[0,4]}}", 8,
		 "the tensors end at byte 4 of 8 bytes of data"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],"
		 "\"data_offsets\":[0,4]}}", 4,
		 "a: shape: not a list of integers (no fraction, no exponent)"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],"
		 "\"data_offsets\":[4,0]}}", 4,
		 "a: data_offsets: not [begin, end], two integers"},
		/* integers as the reference reads them: not 1.0 or 4e0 */
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[1.0],"
		 "\"data_offsets\":[0,4]}}", 4,
		 "a: shape: not a list of integers"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],"
		 "\"data_offsets\":[0,4e0]}}", 4,
		 "a: data_offsets: not [begin, end], two integers"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],"
		 "\"data_offsets\":[0E0,4]}}", 4,
		 "a: data_offsets: not [begin, end], two integers"},
		/* what would cut a name short, or sit before the JSON */
		{"{\"a\\u0000b\":{\"dtype\":\"F32\",\"shape\":[1],"
		 "\"data_offsets\":[0,4]}}", 4,
		 "not JSON: a NUL (\\u0000) in a string at line 1, column 4"},
		{"\xEF\xBB\xBF{\"a\":{\"dtype\":\"F32\",\"shape\":[1],"
		 "\"data_offsets\":[0,4]}}", 4,
		 "not JSON: a UTF-8 byte-order mark"},
		{"{\"__metadata__\":{\"format\":1}}", 0,
		 "__metadata__: not an object of strings"},
		/* no tensors: a checkpoint of no weights */
		{"{\"__metadata__\":{\"format\":\"pt\"}}", 0,
		 "model.safetensors: holds no tensors"},
		{"{}", 0, "model.safetensors: holds no tensors"},
		{"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":"
		 "[0,4]},\"a\":{\"dtype\":\"F32\",\"shape\":[1],"
		 "\"data_offsets\":[4,8]}}", 8, "given twice"},
	};
	struct kv_st *st;
	char err[KV_ERRLEN];
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		clean();
		CHECK(st_write_raw(at("model.safetensors"), cases[i].header,
				   cases[i].data) == 0);
		CHECK(kv_st_open(dir, 1, &st, err) == KV_EINVAL);
		CHECK(st == NULL);
		if (!strstr(err, cases[i].want))
			fprintf(stderr, "case %zu: %s\n", i, err);
		CHECK_HAS(err, cases[i].want);
	}
	/* a length that claims more than the file holds; a short file */
	clean();
	FILE *f = fopen(at("model.safetensors"), "wb");
	fwrite("\x40\0\0\0\0\0\0\0{}", 1, 10, f);
	fclose(f);
	CHECK(kv_st_open(dir, 1, &st, err) == KV_EINVAL);
	CHECK_HAS(err, "a header of 64 bytes, in a file of 10");
	f = fopen(at("model.safetensors"), "wb");
	fwrite("\x40\0\0", 1, 3, f);
	fclose(f);
	CHECK(kv_st_open(dir, 1, &st, err) == KV_EINVAL);
	CHECK_HAS(err, "shorter than a safetensors header's 8-byte length");
	clean();
	CHECK(kv_st_open(dir, 1, &st, err) == KV_EIO);
	CHECK_HAS(err, "no model.safetensors or model.safetensors.index.json");
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	single();
	sharded();
	bad();
	clean();
	rmdir(dir);
	return test_done("test_safetensors");
}
