/*
 * bench.c - the machine's limits, measured honestly: a read-bandwidth
 * probe in the manner of STREAM (arrays far beyond the cache, all threads,
 * first touch by the reading thread, best of several passes) and a sgemm
 * rate, plus the clock and statistics every benchmark shares.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "engine/engine_int.h"
#include "kv/bench.h"
#include "kv/engine.h"

uint64_t kv_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void kv_stats_of(double *s, size_t n, struct kv_stats *out)
{
	double sum = 0;
	qsort(s, n, sizeof *s, cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	out->n = n;
	out->min = s[0];
	out->max = s[n - 1];
	out->mean = sum / (double)n;
	out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

struct slice {
	uint64_t *p;     /* this thread's words */
	size_t words;
	uint64_t sum;    /* kept so the reads cannot be optimised away */
	struct kv_membw *b;
	uint32_t id;
	uint64_t done_ns;
};

struct kv_membw {
	uint64_t *buf;          /* (threads, words per thread) */
	size_t words;           /* per thread */
	uint32_t threads;
	struct slice *slices;   /* (threads) */
	pthread_barrier_t start;
	uint64_t sink;
};

/* Eight independent lanes: an integer sum the compiler turns into vector
 * adds, so the loop is bound by memory, not by the adder. */
static uint64_t read_words(const uint64_t *p, size_t n)
{
	uint64_t a[8] = {0};
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		for (int k = 0; k < 8; k++)
			a[k] += p[i + k];
	for (; i < n; i++)
		a[0] += p[i];
	return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
}

static void *touch(void *arg)
{
	struct slice *s = arg;
	for (size_t i = 0; i < s->words; i++)
		s->p[i] = i ^ s->id;
	return NULL;
}

static void *reader(void *arg)
{
	struct slice *s = arg;
	pthread_barrier_wait(&s->b->start);
	s->sum = read_words(s->p, s->words);
	s->done_ns = kv_now_ns();
	return NULL;
}

int kv_membw_new(uint64_t bytes, uint32_t threads, struct kv_membw **out)
{
	*out = NULL;
	if (threads == 0 || threads > 1024 || bytes < 64ULL * threads)
		return KV_EINVAL;
	struct kv_membw *b = calloc(1, sizeof *b);
	if (!b)
		return KV_ENOMEM;
	b->threads = threads;
	b->words = (size_t)(bytes / threads / 64 * 8);
	b->slices = calloc(threads, sizeof *b->slices);
	if (b->slices)
		b->buf = kv_alloc_big(b->words * threads * sizeof *b->buf);
	if (!b->buf) {
		free(b->slices);
		free(b);
		return KV_ENOMEM;
	}
	pthread_t *t = calloc(threads, sizeof *t);
	if (!t) {
		kv_membw_free(b);
		return KV_ENOMEM;
	}
	for (uint32_t i = 0; i < threads; i++) {
		b->slices[i] = (struct slice){b->buf + i * b->words, b->words,
					      0, b, i, 0};
		if (pthread_create(&t[i], NULL, touch, &b->slices[i]))
			touch(&b->slices[i]), t[i] = 0;
	}
	for (uint32_t i = 0; i < threads; i++)
		if (t[i])
			pthread_join(t[i], NULL);
	free(t);
	pthread_barrier_init(&b->start, NULL, threads + 1);
	*out = b;
	return 0;
}

double kv_membw_read(struct kv_membw *b)
{
	pthread_t *t = calloc(b->threads, sizeof *t);
	if (!t)
		return -1;
	uint32_t started = 0;
	for (; started < b->threads; started++)
		if (pthread_create(&t[started], NULL, reader,
				   &b->slices[started]))
			break;
	if (started < b->threads) { /* release the barrier, then fail */
		for (uint32_t i = started; i < b->threads; i++)
			b->slices[i].done_ns = 0;
	}
	uint64_t t0 = kv_now_ns();
	if (started == b->threads)
		pthread_barrier_wait(&b->start);
	uint64_t last = t0;
	for (uint32_t i = 0; i < started; i++) {
		pthread_join(t[i], NULL);
		b->sink += b->slices[i].sum;
		if (b->slices[i].done_ns > last)
			last = b->slices[i].done_ns;
	}
	free(t);
	if (started < b->threads)
		return -1;
	return (double)(last - t0) / 1e9;
}

uint64_t kv_membw_bytes(const struct kv_membw *b)
{
	return (uint64_t)b->words * b->threads * sizeof *b->buf;
}

void kv_membw_free(struct kv_membw *b)
{
	if (!b)
		return;
	if (b->buf)
		pthread_barrier_destroy(&b->start);
	free(b->buf);
	free(b->slices);
	free(b);
}

double kv_membw_best(struct kv_membw *b, uint32_t passes)
{
	double best = 0;
	kv_membw_read(b); /* warm the page tables */
	for (uint32_t i = 0; i < passes; i++) {
		double s = kv_membw_read(b);
		if (s > 0 && (best == 0 || s < best))
			best = s;
	}
	return best > 0 ? (double)kv_membw_bytes(b) / best : 0;
}

int kv_membw_measure(uint64_t bytes, uint32_t threads, uint32_t passes,
		     double *bps)
{
	struct kv_membw *b;
	int e = kv_membw_new(bytes, threads, &b);
	if (e)
		return e;
	*bps = kv_membw_best(b, passes);
	kv_membw_free(b);
	return *bps > 0 ? 0 : KV_ENOMEM;
}

int kv_sgemm_measure(uint32_t n, uint32_t threads, uint32_t reps,
		     double *flops)
{
	if (n == 0 || n > 16384 || threads == 0 || reps == 0)
		return KV_EINVAL;
	size_t nn = (size_t)n * n;
	float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b),
	      *c = malloc(nn * sizeof *c);
	if (!a || !b || !c) {
		free(a);
		free(b);
		free(c);
		return KV_ENOMEM;
	}
	for (size_t i = 0; i < nn; i++) {
		a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
		b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
		c[i] = 0;
	}
	int before = openblas_get_num_threads();
	openblas_set_num_threads((int)threads);
	double best = 0;
	for (uint32_t r = 0; r <= reps; r++) { /* the first warms up */
		uint64_t t0 = kv_now_ns();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n,
			    (int)n, (int)n, 1.0f, a, (int)n, b, (int)n, 0.0f, c,
			    (int)n);
		double s = (double)(kv_now_ns() - t0) / 1e9;
		if (r > 0 && (best == 0 || s < best))
			best = s;
	}
	openblas_set_num_threads(before);
	*flops = best > 0 ? 2.0 * (double)n * n * n / best : 0;
	free(a);
	free(b);
	free(c);
	return 0;
}

static const char *const bench_names[KV_BENCH_COUNT] = {
	[KV_BENCH_DECODE] = "decode", [KV_BENCH_NOCACHE] = "nocache",
	[KV_BENCH_ATTN] = "attn",     [KV_BENCH_BATCH] = "batch",
	[KV_BENCH_MEMBW] = "membw",   [KV_BENCH_SGEMM] = "sgemm",
	[KV_BENCH_QUALITY] = "quality",
};

const char *kv_bench_name(enum kv_bench b)
{
	return kv_name_of(bench_names, KV_BENCH_COUNT, (int)b);
}

int kv_bench_parse(const char *s, enum kv_bench *out)
{
	int b = kv_name_find(bench_names, KV_BENCH_COUNT, s);
	*out = b < 0 ? *out : (enum kv_bench)b;
	return b < 0 ? KV_EINVAL : 0;
}

/* One repetition of a bench on the engine, already prepared. */
static int bench_once(struct kv_engine *e, enum kv_bench b, uint64_t ctx,
		      const uint32_t *tokens, float *logits)
{
	switch (b) {
	case KV_BENCH_ATTN:
		return kv_engine_attend(e, ctx - 1);
	case KV_BENCH_NOCACHE:
		return kv_engine_forward(e, tokens, ctx, 0, false, logits);
	default:
		return kv_engine_forward(e, tokens, 1, ctx - 1, true, logits);
	}
}

int kv_bench_time(struct kv_engine *e, enum kv_bench b, uint64_t ctx,
		  uint32_t reps, uint32_t warmup, uint64_t warmup_ns,
		  const volatile int *stop, struct kv_bench_result *r)
{
	const struct kv_model *m = kv_engine_get_model(e);
	uint64_t users = kv_engine_users(e), vocab = kv_engine_vocab(e);
	bool cached = b != KV_BENCH_NOCACHE;
	uint64_t n = cached ? 1 : ctx;
	memset(r, 0, sizeof *r);
	if (ctx == 0 || reps == 0 || !m)
		return KV_EINVAL;
	if (cached && kv_engine_fill_cache(e, ctx, 1))
		return KV_EINVAL;
	uint32_t *tokens = malloc(users * n * sizeof *tokens);
	float *logits = malloc(users * vocab * sizeof *logits);
	double *ms = malloc(reps * sizeof *ms);
	int err = 0;
	if (!tokens || !logits || !ms) {
		err = KV_ENOMEM;
		goto out;
	}
	for (uint64_t u = 0; u < users; u++)
		for (uint64_t i = 0; i < n; i++)
			tokens[u * n + i] = kv_rand_token(1, u, i, vocab);
	uint64_t w0 = kv_now_ns();
	for (uint32_t i = 0; !err; i++) {
		if (i >= warmup && kv_now_ns() - w0 >= warmup_ns)
			break;
		err = stop && *stop ? KV_EINVAL
				    : bench_once(e, b, ctx, tokens, logits);
	}
	for (uint32_t i = 0; i < reps && !err; i++) {
		if (stop && *stop) {
			err = KV_EINVAL;
			break;
		}
		uint64_t t0 = kv_now_ns();
		err = bench_once(e, b, ctx, tokens, logits);
		ms[i] = (double)(kv_now_ns() - t0) / 1e6;
	}
	if (err)
		goto out;
	kv_stats_of(ms, reps, &r->ms);
	r->reps = reps;
	r->kv_bytes = cached ? kv_engine_cache_read_bytes(e, ctx - 1) : 0;
	r->bytes = r->kv_bytes +
		   (b == KV_BENCH_ATTN ? 0 : kv_engine_weight_read_bytes(e));
	r->flops = b == KV_BENCH_ATTN ? kv_engine_attend_flops(e, ctx - 1)
				      : kv_engine_flops(e, n, cached ? ctx - 1
								     : 0);
out:
	free(tokens);
	free(logits);
	free(ms);
	return err;
}

void kv_bench_derive(enum kv_bench b, struct kv_bench_result *r,
		     double ref_bps, double ref_flops)
{
	double s = r->ms.median / 1e3;
	r->gbps = s > 0 ? (double)r->bytes / s / 1e9 : 0;
	r->gflops = s > 0 ? r->flops / s / 1e9 : 0;
	r->kv_share = r->bytes ? (double)r->kv_bytes / (double)r->bytes : 0;
	r->kv_time_share = 0;
	if (b == KV_BENCH_BATCH && r->ms.median > 0 && r->weights_ms > 0) {
		double share = 1 - r->weights_ms / r->ms.median;
		r->kv_time_share = share < 0 ? 0 : share;
	}
	r->ref_gbps = ref_bps / 1e9;
	r->ref_gflops = ref_flops / 1e9;
	r->roofline_ms = 0;
	if (b == KV_BENCH_NOCACHE && ref_flops > 0)
		r->roofline_ms = r->flops / ref_flops * 1e3;
	else if (b != KV_BENCH_SGEMM && b != KV_BENCH_MEMBW && ref_bps > 0)
		r->roofline_ms = (double)r->bytes / ref_bps * 1e3;
	r->efficiency = r->ms.median > 0 && r->roofline_ms > 0
				? r->roofline_ms / r->ms.median
				: 0;
}

int kv_bench_membw(struct kv_membw *probe, uint32_t reps,
		   const volatile int *stop, struct kv_bench_result *r)
{
	memset(r, 0, sizeof *r);
	double *ms = reps ? malloc(reps * sizeof *ms) : NULL;
	if (!ms)
		return reps ? KV_ENOMEM : KV_EINVAL;
	kv_membw_read(probe); /* a warm pass */
	int err = 0;
	for (uint32_t i = 0; i < reps && !err; i++) {
		double s = stop && *stop ? -1 : kv_membw_read(probe);
		if (s < 0)
			err = KV_EINVAL;
		else
			ms[i] = s * 1e3;
	}
	if (!err) {
		kv_stats_of(ms, reps, &r->ms);
		r->reps = reps;
		r->bytes = kv_membw_bytes(probe);
		kv_bench_derive(KV_BENCH_MEMBW, r, 0, 0);
	}
	free(ms);
	return err;
}

int kv_bench_sgemm(uint32_t n, uint32_t threads, uint32_t reps,
		   const volatile int *stop, struct kv_bench_result *r)
{
	memset(r, 0, sizeof *r);
	double *ms = reps ? malloc(reps * sizeof *ms) : NULL;
	if (!ms)
		return reps ? KV_ENOMEM : KV_EINVAL;
	double flops = 2.0 * n * n * n, best = 0;
	int err = 0;
	for (uint32_t i = 0; i < reps && !err; i++) {
		double rate = 0;
		if (stop && *stop)
			err = KV_EINVAL;
		else
			err = kv_sgemm_measure(n, threads, 1, &rate);
		if (!err && rate <= 0)
			err = KV_EINVAL;
		if (!err) {
			ms[i] = flops / rate * 1e3;
			best = rate > best ? rate : best;
		}
	}
	if (!err) {
		kv_stats_of(ms, reps, &r->ms);
		r->reps = reps;
		r->flops = flops;
		kv_bench_derive(KV_BENCH_SGEMM, r, 0, best);
	}
	free(ms);
	return err;
}
