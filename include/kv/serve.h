/*
 * serve.h - the time a request takes: its prompt's prefill (time to first
 * token), each decode step after it (time per output token) and the
 * output tokens a GPU gives per second at a concurrency, from the bytes
 * and FLOPs kv_fit_solve() counts for a step and the device's rates.
 *
 * A step runs two kernels one after the other, each a roofline of its
 * own (the bytes it moves at the memory bandwidth reached against the
 * FLOPs it does at the FLOP rate reached, whichever is longer): the
 * weights' products, then attention over the caches. A step is their
 * sum plus what tensor parallelism sends between GPUs. The users form a
 * closed loop, so a request's decodes share the engine with the other
 * users' prompts. kvfit(1), TIME, names every term.
 */
#ifndef KV_SERVE_H
#define KV_SERVE_H

#include "eff.h"
#include "fit.h"

/* How requests arrive (kvfit --arrivals). */
enum kv_arrivals {
	KV_ARRIVE_STEADY, /* a closed loop, each user's next request sent as
			     its last ends, spread evenly over the cycle */
	KV_ARRIVE_BURST,  /* as a benchmark sends requests of fixed lengths
			     at a concurrency: the first users' together,
			     each other as one ends; or offline */
	KV_ARRIVE_RATE,   /* an open loop: requests sent at random
			     (Poisson) at a rate, as many at once as the
			     rate and their latency make */
};

/* A workload and the device's rates beyond kv_fit_in's bandwidth_gbps
 * and tflops (which must be set, > 0). */
struct kv_serve_in {
	uint64_t isl, osl;  /* prompt and output tokens per request, >= 1 */
	uint64_t users;     /* requests running at once, >= 1 */
	enum kv_arrivals arrivals;
	uint64_t prompts;   /* a burst's requests in all (a benchmark's
			       num_prompts); at least users */
	double rate;        /* requests a second sent (KV_ARRIVE_RATE) */
	bool step_given;    /* step_us given, not the table's */
	double step_us;     /* the serving engine's own cost a step
			       (scheduling, sampling, launches), us;
			       else efficiency.json's for the engine
			       with measured efficiencies, 0 without */
	bool layer_given;   /* layer_us given */
	double layer_us;    /* and of each layer of a step, us; alike */
	bool request_given; /* request_us given */
	double request_us;  /* the engine's frontend's serial work a
			       request before its engine sees it (chat
			       template, tokenizer, the request's set-up on
			       one event loop), us; alike */
	bool chunked;       /* TensorRT-LLM's enable_chunked_prefill: its
			       prompts in chunks of a step's tokens, as the
			       other engines always run them */
	uint64_t slots;     /* a burst's requests the engine runs at once
			       (those its cache holds), the others queued
			       in it; 0: users */
	double bw_eff;      /* fraction of bandwidth_gbps a step's reads
			       reach, (0, 1]; 0: 1 */
	double flops_eff;   /* fraction of tflops a step's products
			       reach, (0, 1]; 0: 1 */
	double link_gbps;   /* GPU-to-GPU bandwidth of one GPU, one
			       direction, 10^9 B/s; 0: unknown (the
			       transfers are then counted, not timed) */
	uint32_t act_bytes; /* bytes of an activation sent between GPUs;
			       0: 2 (16-bit) */
	double serial;      /* of a decode step of several users, the
			       share of its products' shorter side (the
			       weights' reads or the FLOPs) that does not
			       overlap the longer, [0, 1]; 0: all of it
			       does */
	double dec_tflops;  /* FLOP rate those products reach, 10^12/s;
			       0: tflops x flops_eff */
	bool eff_scaled;    /* eff is another GPU's, scaled to this one: its
			       all-reduce table (that machine's link) is
			       not used, the link's datasheet times it */
	const struct kv_eff *eff; /* measured efficiencies of the GPU (or of
			       the nearest one measured), or NULL: the
			       datasheet's rates at bw_eff and flops_eff
			       (the ideal engine keeps those) */
	double attn_tflops; /* attention's peak (16 bits), 10^12 FLOP/s;
			       0: kv_fit_in's tflops */
	const char *source; /* where the rates come from: "measured",
			       "scaled", "profile", "given", "datasheet"
			       (the time_source column) */
	const struct kv_effs *effs; /* the table eff is of: its
			       elementwise kernels' costs and the engines'
			       own a step */
	double ar_base_us;  /* an all-reduce over tp ranks takes
			       ar_base_us + 2 (tp - 1) ar_step_us
			       beside its bytes (NCCL's ring: see
			       kv_allreduce_latency); 0, 0: none */
	double ar_step_us;
	uint64_t cached;    /* of isl, tokens found in a cache tier: not
			       computed, their KV read by the rest
			       (offload.h); below isl */
	double load_ms;     /* the time to load them back; 0: none (the
			       GPU's own cache) */
	bool load_overlaps; /* the load runs beside the prompt's steps
			       (layer by layer); else before them */
};

/* What a machine's decode steps of several users reach, from two of
 * them measured (users_a and users_b users, ms_a and ms_b ms, w's isl
 * and osl): the serial share and the products' FLOP rate (10^12/s) with
 * which kvfit's times of both are the times measured. The rate that fits
 * the first is found for each share (a step shrinks with the rate), and
 * the share that then fits the second, each by bisection; where no share
 * in [0, 1] fits, the nearer end. A rate at either end of 10^-3 to 10^3
 * times in->tflops means the steps do not show the FLOPs: both are then
 * 0, not measured. Returns 0 or as kv_serve_solve(). */
int kv_serve_fit_decode(const struct kv_fit_in *in,
			const struct kv_serve_in *w, uint64_t users_a,
			double ms_a, uint64_t users_b, double ms_b,
			double *serial, double *tflops, char *err);

/* NCCL's latency of a small all-reduce (its ring algorithm, LL protocol:
 * src/graph/tuning.cc, baseLat and hwLat) over the links a GPU table
 * names (its "interconnect"): 6.6 us, and for each of its 2 (ranks - 1)
 * steps 1.0 us over PCIe (a name that begins "PCIe"), else NVLink's
 * 0.6. */
void kv_allreduce_latency(const char *interconnect, double *base_us,
			  double *step_us);

/* One phase: a prefill (all its chunks) or one decode step. */
struct kv_phase {
	double bytes;      /* read and written on one GPU */
	double flops;      /* on one GPU */
	double link_bytes; /* sent by one GPU: all-reduces and stage hops */
	double mem_ms;     /* bytes at the bandwidth reached */
	double compute_ms; /* flops at the rate reached */
	double link_ms;    /* link_bytes at the interconnect's bandwidth,
			      and each all-reduce's latency */
	double ms;         /* the phase: per step, max(mem, compute) of
			      the products + the same of attention +
			      link, summed over its steps */
	const char *bound; /* "memory", "compute" or "link": what holds
			      the larger share of its longest step */
};

struct kv_serve {
	uint64_t chunk;          /* prompt tokens per prefill step */
	uint64_t chunks;         /* prefill steps */
	uint64_t decode_ctx;     /* the context a decode step is timed at:
				    isl + osl / 2, the mean over the output */
	struct kv_phase prefill; /* the whole prompt */
	struct kv_phase decode;  /* one step of `users` sequences */
	double steps;            /* the engine's steps over a request's
				    life, its wait aside (kvfit(1), TIME,
				    Steady state); in a burst, the wave's */
	double share;            /* prompts a step of the mix carries,
				    where prompts share steps; else 0 */
	struct kv_phase mix;     /* one step of that mix: its prompts'
				    share and, beside vLLM's, the mean
				    decodes; zeros where unused */
	double wait_ms;          /* a request's wait for the step running
				    when it arrives: half a decode step
				    with other users, else 0 */
	double ttft_ms;          /* time to first token: wait + the
				    prompt's own steps */
	double tpot_ms;          /* time per output token after the
				    first, (latency - ttft) / (osl - 1):
				    the decode steps and, between them,
				    the other users' prompts; a decode
				    step where osl is 1 */
	double latency_ms;       /* the request, wait to last token */
	double tokens_per_s;     /* output tokens per second, all GPUs:
				    users x osl / latency */
	double tokens_per_s_gpu; /* of them, per GPU (tp x pp) */
	const char *source;      /* where its rates came from: w's, but
				    "datasheet" for the ideal engine */
	double concurrency;      /* at a request rate: the requests in the
				    engine at once (Little's law), else 0 */
	double queue_ms;         /* of ttft, at a rate: the wait for the
				    prompts ahead (M/D/1), else 0 */
	double front_ms;         /* of ttft, the frontend's work on the
				    request and on those sent before it
				    (request_us each, one at a time) */
	double load_wait_ms;     /* of ttft, the wait for cached tokens to
				    load: load_ms, or what of it outlasts
				    the prompt's steps where they overlap */
	/* speculative decoding (kv_fit_in.spec): decode is then one round,
	 * the drafter's passes and the verify step */
	double spec_tokens;      /* output tokens a round gives, each
				    sequence (kv_spec_tokens); 1 without */
	struct kv_phase draft;   /* of a decode round, the drafter's
				    passes; zeros without */
	/* images (kv_fit_in.images): the vision tower's passes over a
	 * request's images, before its prompt's steps (vision.h) */
	struct kv_phase encoder; /* all of them, on one GPU; of prefill
				    (and so of ttft); zeros without */
};

/*
 * Times workload w on the engine, model and GPU of in (its ctx is the
 * longest a sequence reaches, at least isl + osl; users as w's). A
 * prompt is prefilled in steps of the engine's batched tokens, less the
 * users - 1 decode tokens each step carries (vLLM's chunked prefill puts
 * the running decodes first); the ideal engine takes the prompt in one
 * step, TensorRT-LLM too, refusing one beyond its batched tokens; the
 * prompt's first w->cached tokens are not computed, but read, and their
 * load (w->load_ms) is waited for. Then
 * the steady state: the other users' prompts among a request's steps;
 * or, for a burst, the wave step by step under the engine's scheduling
 * rule (ttft, tpot and latency the means over its requests, tokens a
 * second its users' over its span). Returns 0, or KV_EINVAL / KV_ERANGE
 * with err filled.
 */
int kv_serve_solve(const struct kv_fit_in *in, const struct kv_serve_in *w,
		   struct kv_serve *out, char *err);

/* US dollars per million output tokens at tokens_per_s (all GPUs) on
 * gpus GPUs at usd_per_hour each; NAN when tokens_per_s is not > 0. */
double kv_serve_cost(double usd_per_hour, uint32_t gpus, double tokens_per_s);

/*
 * An open loop at w->rate requests a second (Poisson arrivals): the
 * concurrency N the engine settles at is the fixed point of Little's law,
 * N = rate x latency(N), latency from the steady state of N users
 * (fractional N between whole ones, linearly); then each prompt also
 * waits for the prompts ahead of it, an M/D/1 queue whose server is one
 * prompt's prefill s at load rho = rate x s: rho s / (2 (1 - rho)),
 * added to ttft and latency. *out is that state, out->concurrency N.
 * Returns 0; KV_ERANGE with err when the rate cannot be served: no N up
 * to max_users keeps up (rate x latency(max_users) > max_users), or the
 * prompts alone load the engine fully (rho >= 1).
 */
int kv_serve_rate(const struct kv_fit_in *in, const struct kv_serve_in *w,
		  uint64_t max_users, struct kv_serve *out, char *err);

/* The mean wait of an M/D/1 queue at load rho whose server takes s_ms:
 * rho s / (2 (1 - rho)), ms; INFINITY where rho >= 1. A prompt's wait
 * for those ahead of it at a request rate (kv_serve_rate, fleet.h). */
double kv_serve_queue_ms(double rho, double s_ms);

/* What latency targets ask: the most users, at most max_users, whose
 * ttft and tpot are within max_ttft_ms and max_tpot_ms (0: no target).
 * Both grow with users, so the answer is found by bisection. *users is
 * 0 when even one user misses; *closest then holds the one user's times.
 * Returns 0 or as kv_serve_solve(). */
int kv_serve_best(const struct kv_fit_in *in, const struct kv_serve_in *w,
		  uint64_t max_users, double max_ttft_ms, double max_tpot_ms,
		  uint64_t *users, struct kv_serve *closest, char *err);

#endif
