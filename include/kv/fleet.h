/*
 * fleet.h - plans beyond one replica, as arithmetic over the one-replica
 * model of fit.h and serve.h: disaggregated prefill and decode (workers
 * of each kind, each with its own parallel shape, and the KV of each
 * request moved from one to the other), replicas of an aggregated
 * engine, and the fewest GPUs that serve a request rate within latency
 * targets. kvfit(1), FLEET, names every rule and its source.
 *
 * A worker's time is kv_serve_solve()'s for its shape: a prefill worker
 * runs prompts alone (a request's output of one token), as many a step
 * as the engine's batched tokens hold; a decode worker runs decode steps
 * alone, its users those its memory holds at the whole context.
 */
#ifndef KV_FLEET_H
#define KV_FLEET_H

#include "fit.h"
#include "serve.h"

/* A worker's parallel shape. The search of kv_fleet_shapes walks its
 * fields. dp and ep are kv_fit_in's (ep.h): dp groups of tp ranks each,
 * every group its own sequences and KV, the routed experts over ep ranks
 * of the dp x tp; SGLang's and TensorRT-LLM's --tp 8 --dp 8
 * --enable-dp-attention is tp 1, dp 8 here, as vLLM's --dp 8. */
struct kv_shape {
	uint32_t tp, pp; /* tensor- and pipeline-parallel ranks, >= 1 */
	uint32_t dp, ep; /* attention's groups and expert ranks; 0 or 1:
			    none */
};

/* GPUs of one worker of shape s: tp x dp x pp. */
uint32_t kv_shape_gpus(const struct kv_shape *s);

/* s's groups (dp, at least 1). */
uint32_t kv_shape_dp(const struct kv_shape *s);

/* The shape in runs at (its ranks, groups and expert ranks). */
struct kv_shape kv_shape_of(const struct kv_fit_in *in);

/* in, as one worker of shape s runs it (its ranks). */
void kv_shape_apply(const struct kv_shape *s, struct kv_fit_in *in);

/* The shapes --solve gpus tries, into out (room for KV_FLEET_SHAPES);
 * returns how many: tp 1, 2, 4, 8 (pp 1), and for a MoE model (moe)
 * beside each of 2, 4, 8 GPUs its DEP shape, the GPUs each an attention
 * group of one rank and an expert rank (dp = ep = the GPUs, tp 1: the
 * serving recipes' "DEP8", vLLM's --data-parallel-size 8
 * --enable-expert-parallel, SGLang's --tp 8 --dp 8 --enable-dp-attention
 * --ep 8). */
#define KV_FLEET_SHAPES 7
size_t kv_fleet_shapes(bool moe, struct kv_shape *out);

/* --- the arithmetic, each rule alone (hand-checked in test_fleet) --- */

/* KV bytes one request moves to a decode GPU: isl x that GPU's bytes a
 * token (its share of the heads; all of an MLA latent, which every rank
 * holds). UINT64_MAX where it overflows. */
uint64_t kv_fleet_transfer_bytes(uint64_t isl, uint64_t bytes_per_token);

/* Their time over a link of gbps (10^9 B/s, one direction, each decode
 * GPU its own), ms; NAN where gbps is not > 0. */
double kv_fleet_transfer_ms(uint64_t bytes, double gbps);

/* Workers of rate `each` (requests a second) that serve `rate`: the
 * least whole count; 0 where each is not > 0. */
uint32_t kv_fleet_workers(double rate, double each);

/* The most load (a fraction of a server's time busy) at which an M/D/1
 * queue of service s_ms keeps its wait, rho s / (2 (1 - rho)), within
 * wait_ms: 2 w / (s + 2 w); 0 where wait_ms is not > 0. */
double kv_fleet_max_load(double s_ms, double wait_ms);

/* The xPyD split that balances prefill workers of rate rp (gp GPUs each)
 * with decode workers of rate rd (gd GPUs each): of the x, y (each >= 1,
 * x gp + y gd <= max_gpus) whose requests a second per GPU,
 * min(x rp, y rd) / (x gp + y gd), is within KV_FLEET_BALANCE of the
 * most (aiconfigurator's _match_workers takes the most), the fewest
 * GPUs, then the fewest prefill workers: 25P19D may beat 4P3D by a part
 * in a hundred, finer than the times it rests on. Returns false (x, y 0)
 * where none fits max_gpus. */
#define KV_FLEET_BALANCE 0.02
bool kv_fleet_balance(double rp, uint32_t gp, double rd, uint32_t gd,
		      uint32_t max_gpus, uint32_t *x, uint32_t *y);

/* --- the workers --- */

/* A prefill worker: in at its shape (ctx the prompt and its first
 * token), w the workload (its isl). Under dp groups each group prefills
 * its own prompts: batch and batch_ms are a group's, rps all of them. */
struct kv_prefill {
	struct kv_shape shape;
	uint64_t batch;     /* prompts a step (or a prompt's chunks) runs:
			       the engine's batched tokens over isl, at
			       least 1, at most those that fit */
	double batch_ms;    /* the time of that batch */
	double one_ms;      /* one prompt's alone, a prompt's own share of
			       ttft */
	double rps;         /* requests a second it prefills, busy all the
			       time: batch / batch_ms (so a server of
			       1 / rps a prompt, for its queue) */
	const char *source; /* where its rates came from (kv_serve's) */
};

/* A decode worker: in at its shape (ctx isl + osl). Under dp groups
 * users_fit, users and rps are all the groups', step_ms a group's step
 * of its share. */
struct kv_decode {
	struct kv_shape shape;
	uint64_t users_fit;  /* sequences its memory holds */
	uint64_t users;      /* of them, the most whose step is within the
				tpot target (all, without one); 0 where one
				user misses it */
	double step_ms;      /* a decode step of `users` (one user's where
				none meets the target) */
	double rps;          /* requests a second it finishes at users:
				users / ((osl - 1) step), osl 1 as 2 */
	uint64_t bytes_per_token; /* KV a token on one of its GPUs */
};

/* Times a prefill worker of in's shape for w. Returns 0, KV_ERANGE
 * (err: no prompt fits beside its weights), or as kv_serve_solve. */
int kv_fleet_prefill(const struct kv_fit_in *in, const struct kv_serve_in *w,
		     struct kv_prefill *out, char *err);

/* Times a decode worker of in's shape for w within max_tpot_ms (0:
 * none). Returns 0, KV_ERANGE (err: no user fits at the context), or as
 * kv_serve_solve. */
int kv_fleet_decode(const struct kv_fit_in *in, const struct kv_serve_in *w,
		    double max_tpot_ms, struct kv_decode *out, char *err);

/* The concurrency n a decode worker settles at when `rate` requests a
 * second arrive at it, each for osl - 1 steps: the fixed point of
 * n = rate x (osl - 1) x step(n), between whole users linearly, and the
 * step there (*tpot_ms). Under dp groups each group takes rate / dp of
 * users_fit / dp, n all of theirs. Returns 0, or KV_ERANGE where the
 * users that fit do not keep up. */
int kv_fleet_decode_load(const struct kv_fit_in *in,
			 const struct kv_serve_in *w, double rate,
			 uint64_t users_fit, double *n, double *tpot_ms,
			 char *err);

/* --- plans --- */

enum kv_fleet_mode { KV_FLEET_AGG, KV_FLEET_DISAGG };

/* One plan: replicas of an aggregated engine, or x prefill and y decode
 * workers, at a request rate. */
struct kv_fleet {
	enum kv_fleet_mode mode;
	uint32_t gpus;          /* in all */
	/* KV_FLEET_AGG */
	uint32_t replicas;
	struct kv_shape shape;
	/* KV_FLEET_DISAGG */
	uint32_t x, y;          /* prefill and decode workers */
	struct kv_prefill p;
	struct kv_decode d;
	uint64_t transfer_bytes; /* a request's KV to one decode GPU */
	double transfer_ms;
	double link_gbps;
	/* what follows, at `rate` */
	double rate;            /* requests a second: given, or (no rate)
				   the most the plan keeps up with */
	bool open;              /* rate given: arrivals at random (the
				   prompts queue); else a closed loop */
	double load;            /* prefill workers' (or replicas') share of
				   time busy with prompts */
	double concurrency;     /* requests decoding at once on a decode
				   worker (a replica), all its groups */
	double queue_ms;        /* of ttft, the wait for prompts ahead */
	double ttft_ms, tpot_ms;
	double tokens_per_s;    /* output tokens a second, all GPUs */
	double tokens_per_s_gpu;
	bool served;            /* the rate is kept up with */
	bool meets;             /* and within the targets given */
	const char *source;     /* where the workers' rates came from (the
				   time_source column) */
	char why[KV_ERRLEN];    /* where not served: why */
};

/* The targets of a plan. */
struct kv_fleet_goal {
	double rate;            /* requests a second; 0: none (a closed loop
				   at the most the plan keeps up with) */
	double max_ttft, max_tpot; /* ms; 0: none */
	double link_gbps;       /* between prefill and decode GPUs */
	uint32_t max_gpus;      /* the most GPUs a search may take */
};

/* x prefill and y decode workers (0, 0: the split that balances them,
 * or with a rate the fewest of each that serve it) at g's rate. Returns
 * 0 (out->served false with why where the rate is not kept up with, or
 * no split fits max_gpus), or KV_E* with err. */
int kv_fleet_disagg(const struct kv_fit_in *in, const struct kv_serve_in *w,
		    const struct kv_prefill *p, const struct kv_decode *d,
		    uint32_t x, uint32_t y, const struct kv_fleet_goal *g,
		    struct kv_fleet *out, char *err);

/* `replicas` of in's shape (0: the fewest that serve g's rate within its
 * targets, up to max_gpus) at g's rate, each its share; without a rate
 * each at the most users within the targets (those that fit). Returns
 * as kv_fleet_disagg. */
int kv_fleet_agg(const struct kv_fit_in *in, const struct kv_serve_in *w,
		 uint32_t replicas, const struct kv_fleet_goal *g,
		 struct kv_fleet *out, char *err);

/* Whether plan a is no worse than b in both GPUs (so tokens a second per
 * GPU at one rate) and tpot, and better in one; where both are equal (a
 * decode shape beside two prefill shapes), whether a's ttft is less. */
bool kv_fleet_dominates(const struct kv_fleet *a, const struct kv_fleet *b);

#endif
