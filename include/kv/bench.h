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

/* Best read bandwidth of a probe, in bytes per second: a warm pass, then
 * the fastest of `passes`; 0 when a pass fails. */
double kv_membw_best(struct kv_membw *b, uint32_t passes);

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

/* --- benchmarks of the decode engine --- */

enum kv_bench {
	KV_BENCH_DECODE,  /* one cached step at ctx: weights + every cache */
	KV_BENCH_NOCACHE, /* one step recomputing the whole text of ctx */
	KV_BENCH_ATTN,    /* one token attending over ctx cached tokens */
	KV_BENCH_BATCH,   /* a cached step, its cache's share of bytes, time */
	KV_BENCH_MEMBW,   /* the read-bandwidth reference */
	KV_BENCH_SGEMM,   /* the sgemm-rate reference */
	KV_BENCH_QUALITY, /* a cache format's answers against f32's */
	KV_BENCH_COUNT
};

/* Name of a benchmark ("decode"), and the reverse; 0 or KV_EINVAL. */
const char *kv_bench_name(enum kv_bench b);
int kv_bench_parse(const char *s, enum kv_bench *out);

/* One measured point. */
struct kv_bench_result {
	uint64_t bytes;     /* bytes the point must move (read) */
	uint64_t kv_bytes;  /* of those, bytes of the KV cache */
	double flops;       /* floating-point operations of the point */
	struct kv_stats ms; /* milliseconds per repetition */
	uint32_t reps;      /* timed repetitions */
	double weights_ms;  /* batch: median ms of the same step at ctx 1 */
	/* derived by kv_bench_derive() */
	double gbps;        /* bytes / median, 10^9 B/s */
	double gflops;      /* flops / median, 10^9 /s */
	double roofline_ms; /* bytes / reference bandwidth, or flops / rate */
	double efficiency;  /* roofline_ms / median (1 = at the limit) */
	double kv_share;    /* kv_bytes / bytes */
	double kv_time_share; /* batch: 1 - weights_ms / median */
	double ref_gbps;    /* the reference used, 10^9 B/s (0: none) */
	double ref_gflops;  /* the reference used, 10^9 FLOP/s (0: none) */
};

struct kv_engine;

/* The warm-up a timing gets by default: the first steps after a cache is
 * filled run slower than the steady ones (the caches, the TLB and the
 * core's clock still settling), and a single untimed step leaves that
 * ramp in the median. A fifth of a second is some hundred attention
 * steps over 8,192 tokens. */
#define KV_BENCH_WARMUP_NS 200000000ULL

/*
 * Times bench b (decode, nocache, attn or batch) at context ctx on engine
 * e: prepares the cache (a stand-in prefill of ctx - 1 or ctx positions),
 * runs `warmup` untimed repetitions, and more until warmup_ns nanoseconds
 * have passed since the first, then `reps` timed ones, and fills bytes,
 * kv_bytes, flops, ms and reps of *r from the engine's own counts. A
 * decode step is one new token per sequence at position ctx - 1, reading
 * ctx positions; attn reads the same ctx positions on every layer; nocache
 * recomputes ctx tokens per sequence. Stops early, returning KV_EINVAL with
 * reps == 0, when *stop becomes non-zero. Allocates only its token and
 * logit buffers. Returns 0, KV_EINVAL (ctx beyond the engine's sizes, no
 * cache for a cached bench) or KV_ENOMEM.
 */
int kv_bench_time(struct kv_engine *e, enum kv_bench b, uint64_t ctx,
		  uint32_t reps, uint32_t warmup, uint64_t warmup_ns,
		  const volatile int *stop, struct kv_bench_result *r);

/* The reference points themselves: `reps` passes of the bandwidth probe
 * (bytes read per pass), or `reps` n x n x n sgemm products on `threads`
 * threads (2 n^3 FLOPs each, the rate of the best one as ref_gflops).
 * Fill and derive *r; KV_EINVAL (reps == 0) or KV_ENOMEM, or KV_EINVAL
 * with reps == 0 in *r when *stop becomes non-zero. */
int kv_bench_membw(struct kv_membw *probe, uint32_t reps,
		   const volatile int *stop, struct kv_bench_result *r);
int kv_bench_sgemm(uint32_t n, uint32_t threads, uint32_t reps,
		   const volatile int *stop, struct kv_bench_result *r);

/* Fills the derived fields of r: rates from the median, the roofline
 * against ref_bps (bytes per second; bandwidth-bound benches) or ref_flops
 * (FLOP/s; nocache, sgemm), efficiency = roofline / median, the cache's
 * share of the bytes and (batch) of the time. */
void kv_bench_derive(enum kv_bench b, struct kv_bench_result *r,
		     double ref_bps, double ref_flops);

#endif
