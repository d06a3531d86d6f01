/*
 * kvfit.h - what kvfit's two files share: its options, and what it reads
 * (kvfit_input.c): the GPU table, the configs named and kvsize's rows on
 * stdin, each as a plan of libkv's plan module.
 */
#ifndef KVFIT_H
#define KVFIT_H

#include <stdbool.h>

#include "cli.h"
#include "kv/gpu.h"
#include "kv/lora.h"
#include "kv/offload.h"
#include "kv/plan.h"

/* The options: what every row shares, and the tool's own. */
struct args {
	struct kv_plan_opts o;
	const char *gpu, *mem_text;
	uint64_t wired_mb;  /* --wired-limit-mb: a Mac's GPU wired limit,
			     * MiB; 0: macOS's default */
	bool wired_given;
	char mem_note[256]; /* what memory a Mac's GPU is planned with, said
			     * on stderr before the rows; "" */
	const char *gpu_file; /* --gpu-file: instead of gpus.json */
	uint64_t min_users;
	bool params, list_gpus, json, header, human;
	bool link_given;    /* --interconnect */
	bool ar_given;      /* --allreduce-latency */
	bool serial_given;  /* --serial-fraction */
	bool arrivals_given; /* --arrivals */
	bool prompts_given;  /* --num-prompts */
	bool rate_given;     /* --request-rate */
	bool engine_given;   /* --engine (else vllm, or llamacpp for GGUFs) */
	struct cli_kv kv;   /* --cache-type-k and -v, until joined */
	struct kv_effs *effs; /* efficiency.json, owned */
	const char *calib[16]; /* --calibrate: result files */
	size_t ncalib;
	const char *save_gpu;  /* --save-gpu: where the fit is written */
	struct kv_lora lora;   /* --max-loras and the rest (o.lora) */
	bool lora_given;
	struct kv_offload off; /* --kv-offload, --prefix-hit (o.offload) */
	const char *tier_opt;  /* the option that gave the host tier */
	bool link_host_given;  /* --host-link */
	const char *draft;     /* --draft: the drafter's config */
	bool spec_opts;        /* --spec-tokens or an acceptance given */
	/* llama.cpp's split */
	char split_opt[40];    /* the first option of the split given
				  ("--n-gpu-layers"), for what is said */
	const char *host_given; /* the first host option given, or NULL */
	const char *host_profile; /* --host-profile FILE */
	struct kv_gpus *host;  /* its table, owned */
	/* -o vllm, sglang, llama-server, trtllm: the command of each row */
	int launch;            /* kvfit_launch_format's; 0: a table */
	uint64_t *ctx_sizes;   /* llama.cpp's --ctx-size: every --parallel
				  slot's tokens together (a list); NULL:
				  not given */
	size_t nctx_sizes;
	bool hicache;          /* SGLang's --enable-hierarchical-cache */
	char spec_model[4096]; /* vLLM's --speculative-config's model */
	uint64_t n_batch;      /* llama.cpp's --batch-size; 0: not given */
	/* the fleet (kvfit_fleet.c) */
	bool disagg;           /* --disagg */
	uint64_t prefill_tp, decode_tp; /* 0: --tp */
	uint64_t prefill_workers, decode_workers; /* 0: found */
	double kv_link;        /* --kv-link, 10^9 B/s; 0: --interconnect's */
	uint64_t max_gpus;     /* --max-gpus; 0: 64 */
	const char *fleet_opt; /* the first worker's option given
				  (--prefill-tp ... --decode-workers) */
};

/* The latency targets given, as "--max-ttft 500 and --max-tpot 15" ("":
 * none) into buf. Returns buf. */
const char *kvfit_targets(const struct kv_plan_opts *o, char *buf, size_t n);

/* The fleet's options (--disagg, --prefill-tp, ..., --max-gpus): 0,
 * CLI_USAGE (said) or CLI_NOT_MINE. */
int kvfit_opt_fleet(int c, const char *s, struct args *a);

/* What they say together, and what they refuse, once all are read: 0 or
 * CLI_USAGE (said). */
int kvfit_check_fleet(const struct args *a);

/* --disagg and --solve gpus: the plans of each row, printed: 0, 1 where
 * one does not keep up, misses a target or (--solve gpus) none is found
 * within --max-gpus, or 2 for bad input (said). */
int kvfit_fleet(const struct args *a, const struct kv_plan *pl, size_t np,
		const char *gpu_name);

/* What the split's options say together once the configs are read (an
 * Ollama model's num_gpu asks one too), and the host's figures where the
 * options give none. Returns 0 or CLI_USAGE (said). */
int kvfit_split(struct args *a, struct kv_plan *pl, size_t np);

/* --list-gpus: the table of gpus.json. */
int kvfit_list_gpus(const struct args *a);

/* The GPU, before any config is read, so that an unknown name fails
 * first: its name (for the gpu column) into name, its memory and
 * bandwidth where the options give none. */
int kvfit_gpu_of(struct args *a, struct kv_gpus **gpus, char *name,
		 size_t n);

/* Every config named (and stdin) as plans *pl, before any row, so bad
 * input fails early; then each plan's checkpoint is read, once. */
int kvfit_load(int argc, char **argv, const struct args *a,
	       struct kv_plan **pl, size_t *np);

/* --calibrate: the result files' runs replayed on the first plan's
 * first row, the fit and each measurement's residual printed, the entry
 * written to --save-gpu. */
int kvfit_calibrate(const struct args *a, const struct kv_plan *pl,
		    const struct kv_gpus *gpus, const char *gpu_name);

/* The rows of every plan, solved, printed and held to the targets
 * (kvfit_rows.c): 0, 1 where a row fell below a target or --min-users,
 * or 2 for bad input (said, nothing printed). */
int kvfit_rows(const struct args *a, const struct kv_plan *pl, size_t np,
	       const char *gpu_name);

/* -o's engines (kvfit_launch.c): the format's number (1 up), or 0 for
 * a word that names none. */
int kvfit_launch_format(const char *s);

/* The options of kvfit_launch.c: --ctx-size, --batch-size,
 * --limit-mm-per-prompt, --flash-attn, --enable-lora,
 * --enable-hierarchical-cache, --enable-prefix-caching,
 * --speculative-config. Returns 0, CLI_USAGE (said) or CLI_NOT_MINE. */
int kvfit_launch_opt(int c, const char *s, struct args *a);

/* Once every option is read: --ctx-size over the slots of --parallel,
 * the host tier --enable-hierarchical-cache turns on, and what -o ENGINE
 * asks (kvfit_launch_opts). Returns 0 or CLI_USAGE (said). */
int kvfit_launch_after(struct args *a);

/* What -o ENGINE asks of the other options once all are read: without
 * --engine, that engine's rules; with another, or all, a refusal.
 * Returns 0 or CLI_USAGE (said). */
int kvfit_launch_opts(struct args *a);

/* Whether row r can be written as a command: 0, or CLI_USAGE where it
 * asks what the engine has no flag for (said). */
int kvfit_launch_check(const struct args *a, const struct kv_plan_row *r);

/* Row r's command, one line on stdout. */
void kvfit_launch_row(const struct args *a, const struct kv_plan_row *r);

/* --params: each plan's parameters and weight bytes. */
int kvfit_params(const struct args *a, const struct kv_plan *pl, size_t np);

#endif
