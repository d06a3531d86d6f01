/*
 * bench.h - clocks, repetition statistics, and the machine's own limits
 * that every efficiency is measured against: memory read bandwidth (a
 * STREAM-style probe over arrays far larger than the last-level cache, on
 * every thread) and the sgemm rate of the BLAS the engine uses.
 */
#ifndef KV_BENCH_H
#define KV_BENCH_H

#include "kv.h"

/* A monotonic clock, in nanoseconds. */
uint64_t kv_now_ns(void);

/* Statistics of n samples (n >= 1); sorts the samples in place. */
struct kv_stats {
	double median; /* middle value, mean of the two middles for even n */
	double min;
	double max;
	double mean;
	size_t n;
};
void kv_stats_of(double *samples, size_t n, struct kv_stats *out);

/*
 * The bandwidth probe. kv_membw_new() allocates `bytes` (rounded to whole
 * 64-byte lines per thread), split in one contiguous slice per thread and
 * first touched by the thread that reads it; kv_membw_read() has every
 * thread read its slice once (a summing loop the compiler vectorises) and
 * returns the seconds the slowest took, from a common start. Bytes read /
 * seconds is the machine's read bandwidth; take the best of several passes,
 * as STREAM does. Use at least 4x the last-level cache so that no pass is
 * served from cache. Free with kv_membw_free().
 */
struct kv_membw;
int kv_membw_new(uint64_t bytes, uint32_t threads, struct kv_membw **out);
double kv_membw_read(struct kv_membw *b);
uint64_t kv_membw_bytes(const struct kv_membw *b);
void kv_membw_free(struct kv_membw *b);

/* Best read bandwidth, in bytes per second, of `passes` passes over
 * `bytes` with `threads` threads (allocates and frees its own probe).
 * Returns 0 and *bps, or KV_ENOMEM / KV_EINVAL. */
int kv_membw_measure(uint64_t bytes, uint32_t threads, uint32_t passes,
		     double *bps);

/* Best rate, in FLOP/s, of `reps` single-precision n x n x n products
 * (2 n^3 FLOPs each) through OpenBLAS on `threads` threads. The BLAS thread
 * count in force before the call is restored after it. Returns 0, or
 * KV_ENOMEM / KV_EINVAL. */
int kv_sgemm_measure(uint32_t n, uint32_t threads, uint32_t reps,
		     double *flops);

#endif
