/*
 * kvdecode.h - what kvdecode's files share: its options, what its runs
 * share (main's), one run of the lists as the loop over them holds it,
 * and what each file gives the one above it. The calls go one way:
 * kvdecode.c (main) calls kvdecode_runs.c and kvdecode_ppl.c;
 * kvdecode_runs.c calls kvdecode_report.c, what a run prints; each of
 * them calls kvdecode_each.c (the lists, the walk over the runs, the
 * table on stdout), which calls none of them.
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

/* The options, as parsed and checked; main completes them from what is
 * beside the config (--prompt TEXT's ids and length, the block size that
 * length implies) before any run, and no run changes them. */
struct kvd_opts {
	struct kv_decode_ask e; /* the engine's: users, block_size and
				   threads the first of their lists;
				   weights_dtype -1 unless given; ckpt NULL
				   (each run's is main's, kvd_state) */
	uint64_t prompt, gen, top_k;
	double temperature, tol;
	bool with, without; /* modes run */
	bool mode_given;    /* --cache was given */
	bool json, header, dry_run;
	const char *summary, *config;
	bool block_set, users_set;
	bool layout_set;       /* --layout; else paged when blocks are asked */
	struct kv_lengths len; /* --lengths */
	bool lengths;
	uint32_t *ids;     /* --prompt-ids, a prompt of their count */
	bool random;       /* --random-weights */
	bool ids_given, prompt_given;
	const char *text;  /* --prompt TEXT, read by the tokenizer */
	const char *ppl;   /* --ppl FILE */
	int *fmts;         /* --kv-dtype's list (one but with --ppl) */
	size_t nfmts;
	/* --users, --block-size and --threads given as lists of more than
	 * one value (else NULL, the value in e) */
	uint64_t *list[KVD_LISTS];
	size_t nlist[KVD_LISTS];
	size_t nruns; /* the runs the lists make, 1 without any */
};

/* What the runs share, main's, which frees it: what was read beside the
 * config, and where the runs write (one table on stdout, led by a
 * column for each option given as a list that the rows lack, and the
 * rows of --summary FILE). */
struct kvd_state {
	struct kv_st *ckpt;  /* the checkpoint beside the config, run */
	struct kv_tok *tok;  /* the tokenizer beside the config, or NULL */
	FILE *summary_f;     /* opened before the runs, a bad path first */
	size_t summary_rows; /* rows written to it */
	struct cli_table t;
	bool open;             /* t begun and not yet ended */
	bool lead[KVD_LISTS];  /* the lists whose columns lead t */
	const char *cols[24];  /* t's columns */
};

/* One run of the lists, set up by kvd_run_first and kvd_run_next; the
 * loop that walks the runs owns it. */
struct kvd_run {
	const struct kvd_opts *a;
	struct kvd_state *s;
	size_t k;               /* the run, from 0, of a->nruns */
	struct kv_decode_ask e; /* a->e with the run's values of the lists
				   and s's checkpoint */
	struct kv_engine_opts o; /* e's engine, for a session of prompt +
				    gen tokens (kv_decode_engine_opts) */
};

/* Whether the runs keep a cache format other than f32. */
static inline bool compact(const struct kvd_opts *a)
{
	return a->e.k_dtype != KV_DTYPE_F32 || a->e.v_dtype != KV_DTYPE_F32;
}

/* --- the lists, the runs' walk and the table (kvdecode_each.c) --- */

/* --users, --block-size or --threads (c its key): one value, or a list
 * of them. Returns 0, CLI_USAGE or CLI_FAIL (said), or -1 for another
 * option. */
int kvd_list(int c, const char *s, struct kvd_opts *a);
/* How many runs the lists make (1 without any). */
size_t kvd_count(const struct kvd_opts *a);
/* The runs in order: for (kvd_run_first(&r, a, s); kvd_run_more(&r);
 * kvd_run_next(&r)), r set up as run r.k's inside the loop. */
void kvd_run_first(struct kvd_run *r, const struct kvd_opts *a,
		   struct kvd_state *s);
bool kvd_run_more(const struct kvd_run *r);
void kvd_run_next(struct kvd_run *r);
/* What names the run: "--users 2 --threads 4: " (the options given as
 * lists), or "" when there is one run. */
const char *kvd_about(const struct kvd_run *r, char *buf, size_t n);
/* With several runs, "kvdecode: run 2 of 4: --users 2 --threads 4" on
 * stderr, before what the run says. */
void kvd_say_run(const struct kvd_run *r);
/* The table on stdout of rows of cols, begun unless it is open. */
struct cli_table *kvd_table(const struct kvd_run *r,
			    const char *const *cols, size_t ncols);
/* The cells of the leading columns, the run's values; first in a row. */
void kvd_lead(const struct kvd_run *r, struct cli_table *t);
/* A run's rows are done: ends the table after the last run, or after
 * each on a terminal (a table per run, its summary below it). */
void kvd_table_done(const struct kvd_run *r);
/* Ends the table if it is still open (a run that failed). */
void kvd_table_close(struct kvd_state *s);

/* --- what main calls --- */

/* Every run of the lists, each estimated and checked before any runs:
 * the dry run's plans, or the decode loop (or --prefix-reuse's requests)
 * on an engine of its own (kvdecode_runs.c). Returns the worst status
 * of the runs; bad input stops them. */
int kvdecode_runs(const struct kvd_opts *a, struct kvd_state *s,
		  const struct kv_model *m);
/* --lengths: paged blocks against reserved sequences, a row a run, each
 * counted before any prints (kvdecode_runs.c). */
int kvdecode_lengths(const struct kvd_opts *a, struct kvd_state *s,
		     const struct kv_model *m);
/* --ppl (kvdecode_ppl.c): the text's perplexity with an f32 cache, then
 * each format, in every run. */
int kvdecode_ppl(const struct kvd_opts *a, struct kvd_state *s,
		 const struct kv_model *m);

/* --- what kvdecode_runs.c calls (kvdecode_report.c) --- */

/* The decode loop (kv_decode_run) of run r on e: a row per step, each
 * way; with a tokenizer the first sequence's text after the rows, on
 * stderr. */
int kvdecode_run(const struct kvd_run *r, struct kv_engine *e,
		 struct kv_decode_result *res);
/* The summary for people, on stderr: m the effective model, sz the
 * run's estimate, q the comparison with an f32 cache (compact
 * formats). */
void kvdecode_say(const struct kvd_run *r, const struct kv_model *m,
		  const struct kv_decode_size *sz,
		  const struct kv_decode_result *res,
		  const struct kv_quality *q);
/* The summary for scripts: a row in --summary FILE (the header before
 * the first). */
void kvdecode_summary(const struct kvd_run *r, const struct kv_model *m,
		      const struct kv_decode_result *res,
		      const struct kv_quality *q);
/* --dry-run: what run r would allocate (sz, its estimate) and do,
 * without running it. */
int kvdecode_plan(const struct kvd_run *r, const struct kv_model *m,
		  const struct kv_engine_size *sz);
/* --prefix-reuse: a script of requests over one pool, e. */
int kvdecode_prefix(const struct kvd_run *r, struct kv_engine *e);
/* --lengths: run r's row of its report x, then (after every run's row)
 * what it says on stderr. */
void kvdecode_lengths_row(const struct kvd_run *r,
			  const struct kv_lengths_report *x);
void kvdecode_lengths_say(const struct kvd_run *r, const struct kv_model *m,
			  const struct kv_lengths_report *x);

#endif
