/*
 * test_alloc.c - every allocation of config loading fails in turn: each
 * failure must give a clear error and free what was taken. malloc and its
 * kin are replaced here (glibc allows it) by versions that fail the Nth call
 * and count what is outstanding. Under the sanitizers, which own malloc,
 * the test is skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "kv/engine.h"
#include "kv/layout.h"
#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#define KV_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KV_ASAN 1
#endif
#endif

#ifndef KV_ASAN
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t n);

static long fail_at = -1; /* the call that fails, -1: none */
static long calls;        /* allocation calls since the last reset */
static long live;         /* blocks allocated and not freed */

static int fail_now(void)
{
	if (fail_at >= 0 && calls++ == fail_at) {
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

void *malloc(size_t n)
{
	void *p = fail_now() ? NULL : __libc_malloc(n);
	live += p != NULL;
	return p;
}

void *calloc(size_t n, size_t size)
{
	void *p = fail_now() ? NULL : __libc_calloc(n, size);
	live += p != NULL;
	return p;
}

void *realloc(void *old, size_t n)
{
	if (fail_now())
		return NULL;
	void *p = __libc_realloc(old, n);
	live += old == NULL && p != NULL;
	return p;
}

void free(void *p)
{
	live -= p != NULL;
	__libc_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = fail_now() ? NULL : __libc_memalign(align, n);
	live += p != NULL;
	*out = p;
	return p ? 0 : 12; /* ENOMEM */
}

/* Loads path with the Nth allocation failing, for N = 0, 1, ... until a
 * load succeeds; every failure must say why and leave nothing behind. */
static void sweep(const char *path)
{
	long n;
	for (n = 0; n < 100000; n++) {
		struct kv_model *m = NULL;
		char err[KV_ERRLEN] = "";
		long before = live;
		fail_at = n;
		calls = 0;
		int e = kv_model_load(path, &m, err);
		long reached = calls;
		fail_at = -1;
		if (e == 0) { /* a failure absorbed (stdio goes unbuffered) */
			kv_model_free(m);
			CHECK(live == before);
			if (reached <= n)
				break; /* no allocation failed: all swept */
			continue;
		}
		CHECK(m == NULL);
		CHECK(live == before);
		CHECK(e == KV_ENOMEM || e == KV_EIO);
		if (e == KV_ENOMEM)
			CHECK_HAS(err, "out of memory");
		else
			CHECK_HAS(err, path);
		if (test_failures) {
			fprintf(stderr, "%s: allocation %ld: %s\n", path, n,
				err);
			return;
		}
	}
	printf("%s: %ld allocations, each failed in turn\n", path, n);
	CHECK(n > 3);
}

/* Engine set-up (model, weights, cache, scratch, thread pool; plain or
 * latent attention) with the Nth allocation failing, for every N: an
 * error, nothing left behind.
 * Once a worker thread has run, glibc keeps its thread bookkeeping (made
 * with our malloc) until a later thread reuses it, so the count of live
 * blocks is exact only with one thread; with two the test checks the
 * errors, and valgrind (scripts/valgrind) the memory. */
static void sweep_engine(uint32_t threads, bool paged, uint32_t mla)
{
	static const char json[] =
		"{\"model_type\":\"llama\",\"num_hidden_layers\":2,"
		"\"hidden_size\":64,\"num_attention_heads\":4,"
		"\"num_key_value_heads\":2,\"intermediate_size\":128,"
		"\"vocab_size\":100}";
	struct kv_model *m = NULL;
	char err[KV_ERRLEN];
	CHECK(kv_model_parse(json, sizeof json - 1, "tiny", &m, err) == 0);
	if (!m)
		return;
	struct kv_engine_opts o = kv_engine_opts_default();
	o.max_ctx = 16;
	o.users = 2;
	o.threads = threads;
	if (paged) { /* the block pool and its tables too */
		o.block_size = 4;
		o.paged = o.prefix = true;
	}
	o.mla_rank = mla; /* 0, or latent attention of this rank */
	long n;
	for (n = 0; n < 100000; n++) {
		struct kv_engine *e = NULL;
		long before = live;
		err[0] = '\0';
		fail_at = n;
		calls = 0;
		int rc = kv_engine_new(m, &o, &e, err);
		long reached = calls;
		fail_at = -1;
		if (rc == 0) {
			kv_engine_free(e);
			CHECK(threads > 1 || live == before);
			if (reached <= n)
				break;
			continue;
		}
		CHECK(e == NULL);
		CHECK(threads > 1 || live == before);
		CHECK(rc == KV_ENOMEM || rc == KV_EIO);
		CHECK(err[0] != '\0');
		if (test_failures) {
			fprintf(stderr, "engine: allocation %ld: %s\n", n, err);
			break;
		}
	}
	printf("engine set-up, %u threads%s: %ld allocations, each failed in "
	       "turn\n",
	       threads, paged ? ", paged" : mla ? ", latent attention" : "",
	       n);
	kv_model_free(m);
}
#endif

int main(void)
{
#ifdef KV_ASAN
	puts("test_alloc: skipped under AddressSanitizer");
	return 77;
#else
	sweep("configs/gpt2.json");
	sweep("configs/deepseek-v3.json");
	sweep("configs/gemma-3-27b.json");
	sweep("configs/openelm-270m.json");
	sweep("configs/jamba-v0.1.json");
	sweep("configs/llama-4-scout.json");
	/* a config past the first 64 KiB read buffer: its growth fails too */
	char big[] = "/tmp/kv-alloc-XXXXXX";
	int fd = mkstemp(big);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	CHECK(f != NULL);
	if (f) {
		fputs("{\"padding\": \"", f);
		for (int i = 0; i < 200000; i++)
			fputc('x', f);
		fputs("\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
		      "\"num_attention_heads\": 4}", f);
		fclose(f);
		sweep(big);
		remove(big);
	}
	sweep_engine(1, false, 0);
	sweep_engine(2, false, 0);
	sweep_engine(1, true, 0);
	sweep_engine(1, false, 16);
	return test_done("test_alloc");
#endif
}
