/*
 * test.h - the few checks the unit tests need. Each failed check prints
 * file:line and both values; a test program exits 1 if any failed, 77 when
 * it skips (ctest's SKIP_RETURN_CODE).
 */
#ifndef KV_TEST_H
#define KV_TEST_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;
static int test_checks;

#define CHECK(cond)                                                     \
	do {                                                            \
		test_checks++;                                          \
		if (!(cond)) {                                          \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n",    \
				__FILE__, __LINE__, #cond);             \
			test_failures++;                                \
		}                                                       \
	} while (0)

#define CHECK_U64(got, want)                                            \
	do {                                                            \
		uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);   \
		test_checks++;                                          \
		if (g_ != w_) {                                         \
			fprintf(stderr,                                 \
				"%s:%d: %s = %" PRIu64 ", want %" PRIu64 \
				"\n",                                   \
				__FILE__, __LINE__, #got, g_, w_);      \
			test_failures++;                                \
		}                                                       \
	} while (0)

#define CHECK_NEAR(got, want, tol)                                      \
	do {                                                            \
		double g_ = (double)(got), w_ = (double)(want);         \
		test_checks++;                                          \
		if (!(fabs(g_ - w_) <= (tol))) {                        \
			fprintf(stderr, "%s:%d: %s = %.9g, want %.9g\n", \
				__FILE__, __LINE__, #got, g_, w_);      \
			test_failures++;                                \
		}                                                       \
	} while (0)

#define CHECK_STR(got, want)                                            \
	do {                                                            \
		const char *g_ = (got), *w_ = (want);                   \
		test_checks++;                                          \
		if (!g_ || strcmp(g_, w_) != 0) {                       \
			fprintf(stderr, "%s:%d: %s = \"%s\", want \"%s\"\n", \
				__FILE__, __LINE__, #got,               \
				g_ ? g_ : "(null)", w_);                \
			test_failures++;                                \
		}                                                       \
	} while (0)

/* A substring check, for error messages. */
#define CHECK_HAS(got, part)                                            \
	do {                                                            \
		const char *g_ = (got), *p_ = (part);                   \
		test_checks++;                                          \
		if (!g_ || !strstr(g_, p_)) {                           \
			fprintf(stderr,                                 \
				"%s:%d: %s = \"%s\", lacks \"%s\"\n",   \
				__FILE__, __LINE__, #got,               \
				g_ ? g_ : "(null)", p_);                \
			test_failures++;                                \
		}                                                       \
	} while (0)

#ifdef KV_MODEL_H
/* A shipped config by name (tests run from the source root). */
static inline struct kv_model *test_load(const char *name)
{
	char path[512], err[KV_ERRLEN];
	struct kv_model *m = NULL;
	snprintf(path, sizeof path, "configs/%s.json", name);
	if (kv_model_load(path, &m, err)) {
		fprintf(stderr, "load: %s\n", err);
		test_failures++;
	}
	return m;
}

/* A config, checkpoint or GGUF at path; exits where it does not load. */
static inline struct kv_model *test_load_path(const char *path)
{
	char err[KV_ERRLEN];
	struct kv_model *m = NULL;
	if (kv_model_load(path, &m, err)) {
		fprintf(stderr, "load: %s\n", err);
		exit(1);
	}
	return m;
}

/* A config given as JSON text, named "tiny"; exits on a parse error. */
static inline struct kv_model *test_parse(const char *json)
{
	struct kv_model *m = NULL;
	char err[KV_ERRLEN];
	if (kv_model_parse(json, strlen(json), "tiny", &m, err)) {
		fprintf(stderr, "parse: %s\n", err);
		exit(1);
	}
	return m;
}
#endif

/* Whether the heaviest cases should be left out: KV_TEST_QUICK set (and
 * not "0"), as scripts/valgrind does, the full set running in the plain
 * and sanitized builds. */
static inline int test_quick(void)
{
	const char *q = getenv("KV_TEST_QUICK");
	return q && *q && strcmp(q, "0") != 0;
}

/* Whether the quick run (test_quick()) takes case i of a grid of KV
 * heads x users x threads (3 x 2 x 2, i = 4 k + 2 u + t): every third,
 * which still pairs every value of each with every value of the others
 * but the KV heads. The full grid runs in the plain and sanitized
 * builds. */
static inline int test_grid_case(int i)
{
	return !test_quick() || i % 3 == 0;
}

/* A test of vectorised kernels runs once per instruction set, named by
 * its argument ("avx2", "avx512"; tests/CMakeLists.txt). Where this CPU
 * lacks the set, it says so and exits 77, ctest's skip: it never passes
 * having compared nothing. */
static inline int test_skip(const char *name, const char *set)
{
	printf("%s %s: skipped: this CPU does not run the %s kernels\n",
	       name, set, set);
	return 77;
}

#ifdef KV_ENGINE_H
/* An engine of m under o; exits when there is none. */
static inline struct kv_engine *test_engine(const struct kv_model *m,
					    const struct kv_engine_opts *o)
{
	char err[KV_ERRLEN];
	struct kv_engine *e = NULL;
	if (kv_engine_new(m, o, &e, err)) {
		fprintf(stderr, "engine: %s\n", err);
		exit(1);
	}
	return e;
}
#endif

#ifdef KV_ENGINE_INT_H
/* The instruction set a run of kernel tests names ("avx2", "avx512"), or
 * KV_ISA_C, said, for another name. */
static inline enum kv_isa test_isa(const char *name, const char *set)
{
	if (!strcmp(set, "avx2"))
		return KV_ISA_AVX2;
	if (!strcmp(set, "avx512"))
		return KV_ISA_AVX512;
	fprintf(stderr, "%s: unknown instruction set '%s'\n", name, set);
	return KV_ISA_C;
}
#endif

/* The sequences' tokens (ntok of each, stride apart) and last logits
 * for a NumPy reference: a "tokens ..." and a "logits ..." line each. */
static inline void test_put_seqs(FILE *f, const uint32_t *tok, int users,
				 int stride, int ntok, const float *lg,
				 uint64_t v)
{
	for (int u = 0; u < users; u++) {
		fprintf(f, "tokens");
		for (int i = 0; i < ntok; i++)
			fprintf(f, " %u", tok[u * stride + i]);
		fprintf(f, "\nlogits");
		for (uint64_t i = 0; i < v; i++)
			fprintf(f, " %.9g", lg[u * v + i]);
		fputc('\n', f);
	}
}

/* Runs tests/ref/SCRIPT on a case file with a tolerance, through the
 * first Python that has NumPy ($KV_PYTHON, python3 on PATH, which may be
 * a virtual environment without it, then the system's): its status, 77
 * when none has it. */
static inline int test_numpy(const char *script, const char *cases,
			     const char *tol)
{
	const char *py[] = {getenv("KV_PYTHON"), "python3", "/usr/bin/python3"};
	int status = 77;
	for (size_t i = 0; i < 3 && status == 77; i++) {
		char cmd[1024];
		if (!py[i] || !*py[i])
			continue;
		snprintf(cmd, sizeof cmd, "%s tests/ref/%s %s %s", py[i],
			 script, cases, tol);
		int rc = system(cmd);
		status = rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) == 127
				 ? 77
				 : WEXITSTATUS(rc);
	}
	return status;
}

static inline int test_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, test_checks,
	       test_failures);
	return test_failures ? 1 : 0;
}

#endif
