/*
 * kvdecode.h - what kvdecode's files share: its options, the runs its
 * lists make (kvdecode_runs.c), the reports kvdecode_report.c prints (the
 * summary for people and for scripts, the dry run's plan, --lengths and
 * --prefix-reuse) and --ppl's (kvdecode_ppl.c).
 */
#ifndef KVDECODE_H
#define KVDECODE_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "kv/decode.h"
#include "kv/engine.h"
#include "kv/paged.h"
#include "kv/quality.h"
#include "kv/safetensors.h"
#include "kv/tokenizer.h"

/* The options that take a list, a run per combination: users, then
 * block size, then threads (the last varying fastest). */
enum kvd_list { KVD_USERS, KVD_BLOCK, KVD_THREADS, KVD_LISTS };

/* What kvdecode writes across its runs: one table on stdout (led by a
 * column for each option given as a list that the rows lack), and the
 * rows of --summary FILE. */
struct kvdecode_out {
	struct cli_table t;
	bool open;                  /* t begun and not yet ended */
	bool lead[KVD_LISTS];       /* the lists whose columns lead t */
	const char *cols[24];       /* t's columns */
	size_t summary_rows;        /* rows written to --summary FILE */
};

struct args {
	uint64_t prompt, gen, users, layers, vocab, kv_heads, seed, top_k;
	uint64_t threads, mla, mla_rope;
	double temperature, tol, logit_scale;
	enum kv_dtype k_dtype, v_dtype;
	bool with, without; /* modes run */
	bool mode_given;    /* --cache was given */
	bool json, header, dry_run;
	const char *summary, *config;
	FILE *summary_f; /* opened before the run, so a bad path fails first */
	uint64_t block_size, pool_blocks;
	bool block_set, users_set;
	int layout; /* -1 unset, 0 contiguous, 1 paged */
	bool prefix;
	struct kv_lengths len; /* --lengths */
	bool lengths;
	uint32_t *ids;     /* --prompt-ids, a prompt of their count */
	int wdtype;        /* --weights-dtype; -1: the checkpoint's or f32 */
	bool random;       /* --random-weights */
	bool ids_given, prompt_given;
	enum kv_dtype wt;       /* the weights' type the run keeps */
	uint64_t weight_bytes;  /* and their bytes, from the estimate */
	struct kv_st *ckpt; /* the checkpoint beside the config, run */
	const char *text;   /* --prompt TEXT, read by the tokenizer */
	const char *ppl;    /* --ppl FILE */
	int *fmts;          /* --kv-dtype's list (one but with --ppl) */
	size_t nfmts;
	struct kv_tok *tok; /* the tokenizer beside the config, or NULL */
	/* --users, --block-size and --threads given as lists of more than
	 * one value (else NULL, the value in users, block_size or threads,
	 * which kvdecode_at sets to run's) */
	uint64_t *list[KVD_LISTS];
	size_t nlist[KVD_LISTS];
	size_t run, nruns;        /* the run under way, from 0, of nruns */
	struct kvdecode_out *out; /* main's */
};

/* Whether the run keeps a cache format other than f32. */
static inline bool compact(const struct args *a)
{
	return a->k_dtype != KV_DTYPE_F32 || a->v_dtype != KV_DTYPE_F32;
}

/* --- the runs of the lists (kvdecode_runs.c) --- */

/* --users, --block-size or --threads (c its key): one value, or a list
 * of them. Returns 0, CLI_USAGE or CLI_FAIL (said), or -1 for another
 * option. */
int kvdecode_list(int c, const char *s, struct args *a);
/* How many runs the lists make (1 without any). */
size_t kvdecode_count(const struct args *a);
/* Sets users, block_size and threads to run k's, and a->run. */
void kvdecode_at(struct args *a, size_t k);
/* What names the run under way: "--users 2 --threads 4: " (the options
 * given as lists), or "" when there is one run. */
const char *kvdecode_about(const struct args *a, char *buf, size_t n);
/* With several runs, "kvdecode: run 2 of 4: --users 2 --threads 4" on
 * stderr, before what the run says. */
void kvdecode_say_run(const struct args *a);
/* The table on stdout of rows of cols, begun unless it is open. */
struct cli_table *kvdecode_table(const struct args *a,
				 const char *const *cols, size_t ncols);
/* The cells of the leading columns, the run's values; first in a row. */
void kvdecode_lead(const struct args *a, struct cli_table *t);
/* A run's rows are done: ends the table after the last run, or after
 * each on a terminal (a table per run, its summary below it). */
void kvdecode_table_done(const struct args *a);
/* Ends the table if it is still open (a run that failed). */
void kvdecode_table_close(struct kvdecode_out *o);
/* Every run of the lists, each checked before any runs: the dry run's
 * plans, or the decode loop (or --prefix-reuse's requests) on an engine
 * of its own. Returns the worst status of the runs; bad input stops
 * them. */
int kvdecode_runs(struct args *a, const struct kv_model *m);

/* The engine's options for the run under way. */
struct kv_engine_opts kvdecode_engine_opts(const struct args *a);

/* The decode loop (kv_decode_run): a row per step, each way; with a
 * tokenizer the first sequence's text after the rows, on stderr. */
int kvdecode_run(const struct args *a, struct kv_engine *e,
		 struct kv_decode_result *r);
/* The summary for people, on stderr; q: the comparison with an f32
 * cache (compact formats). */
void kvdecode_say(const struct args *a, const struct kv_model *m,
		  const struct kv_decode_result *r, const struct kv_quality *q);
/* The summary for scripts: a row in --summary FILE (the header before
 * the first). */
void kvdecode_summary(const struct args *a, const struct kv_model *m,
		      const struct kv_decode_result *r,
		      const struct kv_quality *q);
/* --dry-run: what the run would allocate and do, without running it. */
int kvdecode_plan(const struct args *a, const struct kv_model *m,
		  const struct kv_engine_opts *o,
		  const struct kv_engine_size *sz);
/* --lengths: paged blocks against reserved sequences, a row a run. */
int kvdecode_lengths(struct args *a, const struct kv_model *m);
/* --ppl (kvdecode_ppl.c): the text's perplexity with an f32 cache, then
 * each format, in every run. */
int kvdecode_ppl(struct args *a, const struct kv_model *m);
/* --prefix-reuse: a script of requests over one pool. */
int kvdecode_prefix(const struct args *a, struct kv_engine *e);

#endif
