/*
 * test_ollama.c - Ollama names as Ollama parses them, and their models
 * found in the made-up store of tests/ollama (ollama.c): the manifest's
 * path, the model layer's blob, the params layer's num_ctx.
 */
#include "kv/ollama.h"
#include "test.h"

#define STORE "tests/ollama/models"

static void names(void)
{
	static const char *const ok[] = {
		"llama3.2", "qwen3:30b", "qwen3:30b-a3b-q4_K_M", "team/model",
		"team/model:v1", "example.com/team/model:latest", "a_b-c.d"};
	static const char *const bad[] = {
		"", "./x", "/abs/path", "x.json", "dir/x.gguf", "a/b/c/d",
		"a//b", ".hidden", "a:b:", "qwen3:", "a/b:c/d", "sp ace",
		"a/.b"};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
		CHECK(kv_ollama_name(ok[i]));
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		CHECK(!kv_ollama_name(bad[i]));
}

static void find(void)
{
	struct kv_ollama o;
	char err[KV_ERRLEN];
	CHECK(kv_ollama_find("qwen3:30b", STORE, &o, err) == 0);
	CHECK_STR(o.manifest,
		  STORE "/manifests/registry.ollama.ai/library/qwen3/30b");
	CHECK_STR(o.blob, STORE "/blobs/sha256-9e1c18863bd7a37958b32d2b24c02d"
			  "f8414f184dde01dfc5c331eb8cdcac42ac");
	CHECK_U64(o.num_ctx, 32768);
	CHECK(o.num_gpu == -1);
	CHECK(kv_ollama_find("qwen3:30b-gpu30", STORE, &o, err) == 0);
	CHECK(o.num_gpu == 30);
	/* a host and a namespace; the tag latest; no params layer */
	CHECK(kv_ollama_find("example.com/team/gemma2", STORE, &o, err) == 0);
	CHECK_STR(o.manifest,
		  STORE "/manifests/example.com/team/gemma2/latest");
	CHECK_U64(o.num_ctx, 0);
	CHECK(kv_ollama_find("qwen3", STORE, &o, err) == KV_EIO);
	CHECK_HAS(err, "has no manifest manifests/registry.ollama.ai/library/"
		       "qwen3/latest");
	CHECK(kv_ollama_find("broken:nolayer", STORE, &o, err) == KV_EINVAL);
	CHECK_HAS(err, "no model layer");
	CHECK(kv_ollama_find("broken:noblob", STORE, &o, err) == KV_EINVAL);
	CHECK_HAS(err, "is missing");
	CHECK(kv_ollama_find("broken:json", STORE, &o, err) == KV_EINVAL);
	CHECK_HAS(err, "not JSON");
	CHECK(kv_ollama_find("../x", STORE, &o, err) == KV_EINVAL);
	CHECK_HAS(err, "not an Ollama model name");
}

int main(void)
{
	names();
	find();
	return test_done("test_ollama");
}
