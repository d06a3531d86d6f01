/*
 * pool.c - the engine's threads. One pool runs both the matrix products
 * (each thread calling single-threaded OpenBLAS on its slice) and the
 * attention, so on a small machine no idle library thread spins against
 * the threads doing the work. Workers spin briefly between jobs (a decode
 * step hands out about sixty) and sleep on a condition variable after.
 * Also the allocation of the buffers the threads stream through.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "engine_int.h"
#include "kv/kv.h"

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* Spins before sleeping: long enough to bridge the gap between two jobs
 * of one step, short enough not to burn a core between runs. */
#define SPINS 20000

struct worker {
	struct kv_pool *pool;
	unsigned id;
	pthread_t thread;
};

struct kv_pool {
	unsigned n;              /* threads, the caller included */
	struct worker *workers;  /* (n - 1) */
	pthread_mutex_t mu;
	pthread_cond_t go;       /* gen moved */
	pthread_cond_t done;     /* pending reached 0 */
	_Atomic uint64_t gen;    /* jobs handed out */
	_Atomic unsigned pending; /* workers still on the current job */
	_Atomic bool quit;
	kv_pool_fn *fn;
	void *arg;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct kv_pool *p = w->pool;
	uint64_t seen = 0;
	for (;;) {
		uint64_t g = atomic_load_explicit(&p->gen,
						  memory_order_acquire);
		for (int i = 0; g == seen && i < SPINS; i++) {
			cpu_relax();
			g = atomic_load_explicit(&p->gen,
						 memory_order_acquire);
		}
		if (g == seen) {
			pthread_mutex_lock(&p->mu);
			while ((g = atomic_load(&p->gen)) == seen)
				pthread_cond_wait(&p->go, &p->mu);
			pthread_mutex_unlock(&p->mu);
		}
		seen = g;
		if (atomic_load(&p->quit))
			return NULL;
		p->fn(p->arg, w->id, p->n);
		if (atomic_fetch_sub_explicit(&p->pending, 1,
					      memory_order_acq_rel) == 1) {
			pthread_mutex_lock(&p->mu);
			pthread_cond_signal(&p->done);
			pthread_mutex_unlock(&p->mu);
		}
	}
}

int kv_pool_new(unsigned n, struct kv_pool **out)
{
	struct kv_pool *p = calloc(1, sizeof *p);
	if (!p)
		return KV_ENOMEM;
	p->n = n ? n : 1;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	atomic_init(&p->gen, 0);
	atomic_init(&p->pending, 0);
	atomic_init(&p->quit, false);
	if (p->n > 1) {
		p->workers = calloc(p->n - 1, sizeof *p->workers);
		if (!p->workers) {
			p->n = 1;
			kv_pool_free(p);
			return KV_ENOMEM;
		}
	}
	for (unsigned i = 1; i < p->n; i++) {
		struct worker *w = &p->workers[i - 1];
		w->pool = p;
		w->id = i;
		if (pthread_create(&w->thread, NULL, worker_main, w)) {
			p->n = i; /* the ones started are joined */
			kv_pool_free(p);
			return KV_ENOMEM;
		}
	}
	*out = p;
	return 0;
}

void kv_pool_free(struct kv_pool *p)
{
	if (!p)
		return;
	if (p->n > 1) {
		pthread_mutex_lock(&p->mu);
		atomic_store(&p->quit, true);
		atomic_fetch_add(&p->gen, 1);
		pthread_cond_broadcast(&p->go);
		pthread_mutex_unlock(&p->mu);
		for (unsigned i = 1; i < p->n; i++)
			pthread_join(p->workers[i - 1].thread, NULL);
	}
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->mu);
	free(p->workers);
	free(p);
}

void kv_pool_run(struct kv_pool *p, kv_pool_fn *fn, void *arg)
{
	if (p->n == 1) {
		fn(arg, 0, 1);
		return;
	}
	p->fn = fn;
	p->arg = arg;
	atomic_store_explicit(&p->pending, p->n - 1, memory_order_relaxed);
	pthread_mutex_lock(&p->mu);
	atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	fn(arg, 0, p->n);
	for (int i = 0; i < SPINS; i++) {
		if (!atomic_load_explicit(&p->pending, memory_order_acquire))
			return;
		cpu_relax();
	}
	pthread_mutex_lock(&p->mu);
	while (atomic_load(&p->pending))
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

unsigned kv_pool_size(const struct kv_pool *p)
{
	return p->n;
}

/* Huge pages: on x86-64 a 2 MiB page covers what 512 small ones do. A
 * pass over the 85 MB cache of a long context otherwise misses the TLB
 * every 4 KiB; on a Zen 5 (THP set to madvise) the q4_0 attention step
 * over 8,192 tokens took about 10% less time with them. Where the kernel
 * has no transparent huge pages madvise() fails and changes nothing. */
#define HUGE_PAGE (2u << 20)

void *kv_alloc_big(uint64_t bytes)
{
	void *p = NULL;
	size_t align = bytes >= HUGE_PAGE ? HUGE_PAGE : 64;
	if (bytes > SIZE_MAX ||
	    posix_memalign(&p, align, bytes ? (size_t)bytes : 64))
		return NULL;
#ifdef MADV_HUGEPAGE
	if (align == HUGE_PAGE)
		(void)madvise(p, (size_t)bytes, MADV_HUGEPAGE);
#endif
	return p;
}
