/*
 * sweep.h - kvbench's sweeps as libkv runs them: what a sweep asks for
 * (benches, and lists of contexts, users, K/V heads, latent ranks,
 * threads, cache formats, layouts and block sizes), the points it expands
 * to in the order they run, the bytes each would allocate, and one point
 * measured: its engine built, timed, and the machine's reference
 * (bandwidth or sgemm rate) taken right beside it.
 */
#ifndef KV_SWEEP_H
#define KV_SWEEP_H

#include <stdbool.h>
#include <time.h>

#include "bench.h"
#include "engine.h"
#include "gpu.h"
#include "quality.h"

/* The cache's layouts: one run attended whole, one run attended in
 * blocks, blocks from a pool through block tables. */
enum kv_sweep_layout { KV_SWEEP_CONTIGUOUS, KV_SWEEP_BLOCKED, KV_SWEEP_PAGED,
		       KV_SWEEP_LAYOUTS };

/* "contiguous", "blocked", "paged"; and the reverse: 0 or KV_EINVAL. */
const char *kv_sweep_layout_name(enum kv_sweep_layout l);
int kv_sweep_layout_parse(const char *s, enum kv_sweep_layout *out);

/* What a sweep asks for. A NULL list takes its default (kvbench(1)):
 * contexts per bench, users 1 (batch: 1, 2, 4, 8), the model's K/V heads
 * (attn: H, H/4, 1), its own attention, every online CPU, f32, the
 * contiguous layout, blocks of 16. */
struct kv_sweep {
	bool bench[KV_BENCH_COUNT], any_bench; /* none: all but quality */
	uint64_t *ctx, *kv_heads, *users, *threads, *block_size, *mla;
	size_t nctx, nkv_heads, nusers, nthreads, nblock_size, nmla;
	bool layout[KV_SWEEP_LAYOUTS], any_layout;
	int *dtypes; /* enum kv_dtype of the cached benches */
	size_t ndtypes;
	int *wdtypes; /* the weights' types (f32, bf16, f16); NULL: each
		       * model's own (model_wt), else f32 */
	size_t nwdtypes;
	const enum kv_dtype *model_wt; /* per model, or NULL */
	const struct kv_st *const *model_ckpt; /* per model, or NULL: the
						* checkpoint whose weights
						* its quality points run
						* (NULL: random ones) */
	/* what every point shares */
	uint64_t layers, vocab, seed, mla_rope; /* 0: the model's */
	uint64_t reps, warmup, warmup_ns;       /* as kv_bench_time() */
	uint64_t membw, sgemm_n;                /* the references' sizes */
	uint64_t gen;                           /* quality: steps */
	double logit_scale;
};

/* One point of a sweep. */
struct kv_sweep_point {
	enum kv_bench bench;
	size_t model;       /* index into the sweep's models */
	uint64_t ctx;       /* 0 for membw and sgemm */
	uint64_t users;
	uint64_t kv_heads;  /* 0: the model's */
	uint64_t mla;       /* latent rank, 0: the model's own attention */
	uint64_t threads;
	double baseline_ms; /* 0: none */
	enum kv_sweep_layout layout;
	uint64_t block_size; /* 0 with contiguous */
	enum kv_dtype dtype; /* of K and V */
	enum kv_dtype wt;    /* of the weights */
};

/* A growing list of points. */
struct kv_sweep_points {
	struct kv_sweep_point *p;
	size_t n, cap;
};

/* Appends p: 0 or KV_ENOMEM. */
int kv_sweep_add(struct kv_sweep_points *s, struct kv_sweep_point p);

/* Appends the points of sweep w over models[0 .. nmodels] in the order
 * they run: membw, sgemm, attn, decode, nocache, batch, quality; within
 * each, threads, model, latent rank, K/V heads, users, context, format,
 * weights' type, layout, block size. ncpu is the thread count of an unlisted --threads.
 * Returns 0 or KV_ENOMEM. */
int kv_sweep_expand(const struct kv_sweep *w, struct kv_model *const *models,
		    size_t nmodels, uint64_t ncpu, struct kv_sweep_points *s);

/* The columns of a saved run (kvbench's TSV) that kv_sweep_row()
 * reads: cell[i] the index of each in its header, -1 for an optional one
 * absent (layout, block_size, kv_dtype), max the largest needed. */
struct kv_sweep_cols {
	int bench, model, ctx, users, kv_heads, threads, ms;
	int layout, block_size, kv_dtype, weights_dtype; /* optional */
	int max;
};

/* Finds the columns in the header names[0 .. n]. Returns 0, or KV_EINVAL
 * with err ("no column 'ctx'; not a kvbench TSV with its header"). */
int kv_sweep_cols(char *const *names, size_t n, struct kv_sweep_cols *c,
		  char *err);

/* Reads the point of a saved row of nc cells: its bench, threads, and the
 * time as baseline_ms; an engine point's context, users, K/V heads,
 * format, layout and block size, and *model its model's name (a
 * "+mlaRANK" suffix cut off into p->mla: the cell is changed). p->model
 * is left for the caller. Returns 0, or KV_EINVAL with err saying what
 * is malformed. */
int kv_sweep_row(const struct kv_sweep_cols *c, char **cells, size_t nc,
		 struct kv_sweep_point *p, char **model, char *err);

/* The engine options of a point of w (ctx positions, one token a step,
 * or the whole text for nocache; a quality point's model's checkpoint,
 * when w has one for it). */
struct kv_engine_opts kv_sweep_engine_opts(const struct kv_sweep *w,
					   const struct kv_sweep_point *p);

/* Bytes point p of w on model m would allocate (an engine point's
 * engine, a quality point's two runs); 0 for membw and sgemm, whose
 * sizes are w's. Returns 0 or as kv_engine_estimate(). */
int kv_sweep_bytes(const struct kv_sweep *w, const struct kv_model *m,
		   const struct kv_sweep_point *p, uint64_t *bytes,
		   char *err);

/* Whether every point of s fits in the memory a run may take
 * (kv_run_memory, kv_run_fits): 0, or KV_EINVAL with err naming the
 * first that does not ("decode gpt2-small at ctx 8192, 4
 * users: ..."), or a bandwidth probe larger than it. */
int kv_sweep_fits(const struct kv_sweep *w, struct kv_model *const *models,
		  const struct kv_sweep_points *s, char *err);

/* Frees the lists of w. */
void kv_sweep_free(struct kv_sweep *w);


/* The references kept between points, one bandwidth probe and one sgemm
 * rate per thread count, so each is measured beside its points. */
struct kv_sweep_refs;
int kv_sweep_refs_new(struct kv_sweep_refs **out);
void kv_sweep_refs_free(struct kv_sweep_refs *r);

/* What measuring a point gives. */
struct kv_sweep_out {
	struct kv_bench_result r;
	struct kv_quality q; /* quality points */
	uint64_t kv_heads;   /* the engine's (its model's when p says 0) */
	char model[256];     /* the effective model's name ("+mla256"), ""
			      * for membw and sgemm */
};

/*
 * Measures point p of w: builds its engine over models[p->model], times
 * the bench (batch: and the same step at ctx 1, the weights' time), and
 * derives its rates against the reference measured beside it; a quality
 * point compares its format with f32 (its ms are the compact run's decode
 * steps); membw and sgemm measure the reference itself. Returns 0, or
 * KV_EINVAL / KV_ENOMEM with err said ("" when *stop ended it).
 */
int kv_sweep_run(const struct kv_sweep *w, struct kv_model *const *models,
		 struct kv_sweep_refs *refs, const struct kv_sweep_point *p,
		 const volatile int *stop, struct kv_sweep_out *out,
		 char *err);

/* --- a profile of this machine (kvbench --profile) --- */

/* Its steps: a decode step of one user reading this many positions, a
 * prefill (nocache) of this many tokens, and batched steps of a few and
 * of many users at the decode step's context. */
#define KV_PROFILE_DECODE_CTX 160
#define KV_PROFILE_PREFILL_CTX 256
#define KV_PROFILE_BATCH_FEW 4
#define KV_PROFILE_BATCH_MANY 32

/* Appends a profile's points on models[0], per thread count of w (each
 * once; ncpu when w lists none): membw, sgemm, a decode step (1 user, an
 * f32 cache, contiguous), a prefill and two batched steps, with the weights
 * in w's first type, else the model's own. Returns 0 or KV_ENOMEM. */
int kv_sweep_profile(const struct kv_sweep *w, struct kv_model *const *models,
		     uint64_t ncpu, struct kv_sweep_points *s);

/* What a profile of model m ran, in words for its entries' source
 * ("gpt2-small, decode of 1 user at 160 tokens, prefill of 256, f32
 * weights, 512.00 MiB probe, sgemm n=1024, 5 reps"), into buf. Returns
 * buf. */
char *kv_sweep_profile_how(const struct kv_sweep *w, const struct kv_model *m,
			   const struct kv_sweep_points *s, char *buf,
			   size_t n);

/* The device entries of a profile's measured points (outs[i] measured
 * of s->p[i], i < nout, on models[s->p[i].model]): one per thread count,
 * in their order, from its decode step and prefill (kv_gpu_profile) and,
 * where they ran, its batched steps: the serial fraction and decode FLOP
 * rate with which kvfit's times of both (kv_serve_fit_decode, with the
 * entry's rates) are the times measured. The one of the most threads is
 * also named "local". *out is allocated (kv_gpus_free). Returns 0,
 * KV_ENOMEM, or KV_EINVAL with err when there is no decode step, or one
 * lacks its prefill or a reference. */
int kv_sweep_profile_gpus(const struct kv_sweep_points *s,
			  struct kv_model *const *models,
			  const struct kv_sweep_out *outs, size_t nout,
			  const struct kv_gpu *local, time_t when,
			  const char *how, struct kv_gpus **out, char *err);

/* --- a profile of this machine (run/profile.c) --- */

/*
 * The entry of a profile of this machine on `threads` threads, from the
 * decode step and the prefill (nocache) measured on them (their
 * references derived beside them, kv_bench_derive): name "local-jN",
 * label and memory_bytes of `local`; bandwidth_gbps the bandwidth probe
 * beside the decode step (decode->ref_gbps), bf16_tflops the sgemm rate
 * the prefill was held to (prefill->ref_gflops / 1000: on a CPU a float32
 * rate, the one the engine's products run at); no fp8 rate, no links;
 * bandwidth_efficiency and flops_efficiency those steps' efficiencies,
 * above 1 where a step outran its probe (the engine's reads faster than
 * the probe's, or from cache), at most KV_GPU_EFF_MAX;
 * figures to 4 significant digits, efficiencies to 3; source "kvbench
 * --profile, <date of when, UTC>, N threads, <how>". Returns 0, or
 * KV_EINVAL with err when a step or its reference is missing.
 */
int kv_gpu_profile(const struct kv_gpu *local, uint32_t threads,
		   const struct kv_bench_result *decode,
		   const struct kv_bench_result *prefill, time_t when,
		   const char *how, struct kv_gpu *out, char *err);

/* What every profile entry's "note" says: what its figures are. */
extern const char kv_gpu_profile_note[];

#endif
