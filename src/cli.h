/*
 * cli.h - what the four front ends share: messages on stderr in one form,
 * option values parsed with their checks, the TSV/JSON writer, and the one
 * door every tool leaves through. libkv never includes this file.
 */
#ifndef KV_CLI_H
#define KV_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kv/model.h"
#include "kv/rows.h"
#include "kv/tsv.h"

/* Exit status of every tool, documented in each man page. */
enum cli_code {
	CLI_OK = 0,    /* success */
	CLI_FAIL = 1,  /* a check or requirement failed; a runtime failure */
	CLI_USAGE = 2, /* bad usage or bad input */
};

/* The one mapping of libkv's errors to exit statuses: CLI_OK for 0,
 * CLI_FAIL for KV_ENOMEM (an allocation failed: the input was fine),
 * CLI_USAGE for the rest (KV_EINVAL, KV_ERANGE, KV_EIO, KV_EUNSUP: input
 * that is bad, overflows, cannot be read or is not supported; a run too
 * large for the machine is KV_EINVAL). A run that fails once under way,
 * its input checked (a forward pass, a pool out of blocks, a write), is
 * CLI_FAIL whatever its code, as every tool's EXIT STATUS says. */
int cli_exit(int kv_err);

/* Says libkv's error e (err, or "out of memory" for KV_ENOMEM) and returns
 * cli_exit(e); 0 for 0, saying nothing. */
int cli_kv_error(int e, const char *err);

/* Sets the program name messages start with ("kvsize"). */
void cli_init(const char *prog);
const char *cli_prog(void);

/* "prog: message" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "prog: warning: message" on stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One warning for the contexts of ctx[0 .. n] beyond a model's max_pos
 * positions (none when max_pos is 0). */
void cli_warn_beyond(const char *name, const uint64_t *ctx, size_t n,
		     uint64_t max_pos);
/* A usage error, one line as every error; returns CLI_USAGE. */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What an option reader returns for an option that is not its own. */
#define CLI_NOT_MINE (-1)

/* The options every tool shares, c as cli_getopt() gave it: -h (the help:
 * head, the option table, foot), --version, -o, -v, --json, --no-header
 * (into *json and *header). Returns 0 (*done set after --help and
 * --version), CLI_USAGE (said), or CLI_NOT_MINE for any other option. */
int cli_common(int c, const char *arg, const char *head, const char *foot,
	       bool *json, bool *header, bool *done);

/* An engine's single-dash long flag among the arguments (-tp 4, -ctk
 * q8_0, -ngl 99), which getopt would read as letters: one line naming
 * what kvtools has for it. Returns CLI_USAGE, or 0 when there is none. */
int cli_single_dash(int argc, char **argv);

/* What getopt_long returned for a bad option ('?', or ':' with an option
 * string that starts with ':'), as one message in the tool's own name
 * (opterr must be 0). Returns CLI_USAGE. */
int cli_bad_option(char **argv, int c);

/*
 * The one option table (options.c): a row per option of the tools its
 * mask names. A long name has one key in every tool and a letter one
 * long name; a row without help is an engine's name for one of ours.
 */
enum cli_tool_mask { CLI_KVSIZE = 1, CLI_KVFIT = 2, CLI_KVDECODE = 4,
		     CLI_KVBENCH = 8 };

/* The keys of long options without a letter (a letter is its own key). */
enum cli_key {
	OPT_BANDWIDTH = 256, OPT_BATCHED, OPT_SEQS, OPT_KV_MEMORY, OPT_CTK,
	OPT_CTV, OPT_KV_UNIFIED, OPT_SWA_FULL, OPT_WDTYPE, OPT_UTIL, OPT_TP,
	OPT_PP, OPT_PREFIX, OPT_SOLVE, OPT_MIN_USERS, OPT_PARAMS,
	OPT_LIST_GPUS, OPT_JSON, OPT_NO_HEADER, OPT_VERSION, OPT_MHA,
	OPT_PER_LAYER, OPT_LIST, OPT_LAYERS, OPT_CACHE, OPT_VOCAB,
	OPT_KV_HEADS, OPT_TOL, OPT_SUMMARY, OPT_DRY_RUN, OPT_LAYOUT,
	OPT_POOL_BLOCKS, OPT_PREFIX_REUSE, OPT_LENGTHS, OPT_MLA, OPT_MLA_ROPE,
	OPT_K_DTYPE, OPT_V_DTYPE, OPT_LOGIT_SCALE, OPT_WARMUP, OPT_MEMBW,
	OPT_SGEMM_N, OPT_BASELINE, OPT_MAX_REGRESS, OPT_PROMPT_IDS,
	OPT_RANDOM_WEIGHTS, OPT_PPL, OPT_GPU_FILE, OPT_PROFILE,
	/* kvfit's time */
	OPT_ISL, OPT_OSL, OPT_TFLOPS, OPT_MAX_TTFT, OPT_MAX_TPOT, OPT_COST,
	OPT_BW_EFF, OPT_FLOPS_EFF, OPT_LINK, OPT_AR_LATENCY, OPT_SERIAL,
	OPT_DEC_TFLOPS,
	OPT_ATTN_WINDOW, OPT_ARRIVALS, OPT_NUM_PROMPTS, OPT_STEP_US,
	OPT_LAYER_US, OPT_REQUEST_US, OPT_CALIBRATE, OPT_SAVE_GPU, OPT_RATE, OPT_WIRED,
	/* kvfit's LoRA and host tier of KV */
	OPT_MAX_LORAS, OPT_LORA_RANK, OPT_CPU_LORAS, OPT_LORA_MODULES,
	OPT_KV_OFFLOAD, OPT_KV_OFFLOAD_GIB, OPT_HICACHE_SIZE,
	OPT_HICACHE_RATIO, OPT_HOST_CACHE_SIZE, OPT_PREFIX_HIT, OPT_HOST_LINK,
	/* kvfit's speculative decoding */
	OPT_DRAFT, OPT_SPEC_METHOD, OPT_SPEC_TOKENS, OPT_ACCEPT,
	OPT_ACCEPT_LEN,
	/* kvfit's llama.cpp split (--host-link above, shared with the host
	 * tier) */
	OPT_NGL, OPT_OT, OPT_CPU_MOE, OPT_N_CPU_MOE, OPT_NKVO, OPT_HOST_MEM,
	OPT_HOST_BW, OPT_HOST_PROFILE,
	/* kvfit's images and audio */
	OPT_IMAGES, OPT_IMAGE_SIZE, OPT_AUDIO_SECONDS,
	/* kvfit's engines' commands (-o ENGINE) and the flags they read */
	OPT_CTX_SIZE, OPT_FLASH_ATTN, OPT_ENABLE_LORA, OPT_HICACHE,
	OPT_SPEC_CONFIG, OPT_N_BATCH, OPT_LIMIT_MM, OPT_PREFIX_CACHING, OPT_CHUNKED,
	/* kvfit's fleet: disaggregated workers, replicas, --solve gpus */
	OPT_DISAGG, OPT_PREFILL_TP, OPT_DECODE_TP, OPT_PREFILL_WORKERS,
	OPT_DECODE_WORKERS, OPT_KV_LINK, OPT_MAX_GPUS,
	/* kvfit's expert parallelism and data-parallel attention */
	OPT_DP, OPT_DP_ATTN, OPT_EP, OPT_EP_ALL, OPT_EP_IMBALANCE,
	OPT_DP_ATTN_ONE,
};

struct cli_opt {
	unsigned tools;     /* enum cli_tool_mask bits */
	const char *name;   /* without the dashes */
	int key;            /* what cli_getopt() returns: a letter or OPT_* */
	const char *arg;    /* the value's name in --help; NULL: none taken */
	const char *help;   /* --help's text, lines split by '\n'; NULL for
			     * an engine's name */
	const char *engine; /* an engine's name: whose ("vLLM") */
	const char *of;     /* ... and the option it stands for */
};

#define CLI_MAX_OPTS 192 /* the most rows one tool has */

extern const struct cli_opt cli_opts[];
extern const size_t cli_nopts;

/* The mask of a tool by its name ("kvfit"), or 0. */
unsigned cli_tool(const char *prog);

/* getopt_long over the table's rows for cli_prog()'s tool. A bad option
 * (unknown, a value missing, another tool's letter, an engine's
 * single-dash long form) is said in one line and gives '?', and so does
 * one option given under two names with two values (--tp 4
 * --tensor-parallel-size 2): which to take would be a guess. */
int cli_getopt(int argc, char **argv);

/* The option cli_getopt() last returned, as the user named it:
 * "--gpu-memory-utilization" for vLLM's name, "--ctx" for -c or --ctx.
 * For messages about its value. */
const char *cli_opt_as(void);

/* --help: head, the tool's options from the table, the engines' names
 * for them, then foot. */
void cli_help(FILE *f, const char *head, const char *foot);

/* Option values: each prints its own message naming the option and returns
 * CLI_USAGE on bad input, 0 on success. */
int cli_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi,
	    uint64_t *out);
int cli_tokens(const char *opt, const char *s, uint64_t *out);
int cli_size(const char *opt, const char *s, uint64_t *out);
int cli_double(const char *opt, const char *s, double lo, double hi,
	       double *out);
/* A list of token counts ("8k,32k", "128:8192:x2"); *vals from malloc. */
int cli_sweep(const char *opt, const char *s, uint64_t **vals, size_t *n);
/* cli_sweep() into *vals (freeing what it held), each value at most
 * max. */
int cli_list(const char *opt, const char *s, uint64_t max, uint64_t **vals,
	     size_t *n);
/* --users LIST: a sweep of counts from 1 to KV_MAX_USERS into *vals
 * (freed first). Returns 0, CLI_USAGE or CLI_FAIL (said). */
int cli_users(const char *s, uint64_t **vals, size_t *n);

/* One whole number from lo to hi (said as cli_u64() says it), or a list
 * of them as cli_sweep() reads one (1,2,4 or lo:hi:xF or lo:hi:+S): into
 * *vals from malloc (freeing what it held), *n of them. */
int cli_u64s(const char *opt, const char *s, uint64_t lo, uint64_t hi,
	     uint64_t **vals, size_t *n);
/* Calls item(tok, ctx) on each comma-separated item of s up to the first
 * that fails; no item at all is an error of opt unless `any` (an earlier
 * use of opt gave some). */
int cli_each(const char *opt, const char *s,
	     int (*item)(const char *tok, void *ctx), void *ctx, bool any);
/* A KV format the engine stores (some are only sized), or an error of
 * opt naming those it does. */
int cli_stored(const char *opt, enum kv_dtype t);
/* A list of KV formats ("bf16,fp8"); "auto" gives -1 (the model's own).
 * *vals from malloc. */
int cli_dtypes(const char *opt, const char *s, int **vals, size_t *n);

/* llama.cpp's --cache-type-k and --cache-type-v, each a list of formats
 * as cli_dtypes() reads them, kept apart until cli_kv_join(); NULL where
 * not given. */
struct cli_kv {
	int *k, *v;
	size_t nk, nv;
};

/* --cache-type-k (k true) or --cache-type-v s into kv. */
int cli_cache_type(bool k, const char *s, struct cli_kv *kv);

/* The one list of formats of a tool from --kv-dtype's (*vals, *n; NULL
 * where not given) and kv's: each of K's formats with each of V's (one
 * given alone is both's), packed (kv_dtype_pack), into *vals. Refuses
 * --kv-dtype beside them, and auto for one of K and V. Frees kv's lists.
 * Returns 0, CLI_USAGE or CLI_FAIL (said). */
int cli_kv_join(struct cli_kv *kv, int **vals, size_t *n);

/* Finds and loads a config by what the user typed; names the model by
 * that (a name found in the search path keeps its bare name, a path stays
 * a path). Prints the error and returns CLI_USAGE on failure. */
int cli_load_model(const char *arg, struct kv_model **m);

/* The columns of a table named by an array of names. */
#define CLI_NCOLS(a) (sizeof(a) / sizeof *(a))

/* The whole text of path ("-": stdin) into *out, NUL-terminated (the
 * caller frees it), *len its bytes. Returns 0, CLI_USAGE for a path that
 * does not open or is a directory, or CLI_FAIL out of memory or past
 * 64 MiB (each said). */
int cli_read_text(const char *path, char **out, size_t *len);

/* kv_tsv_split() of buf, its errors said with src naming the text.
 * Returns 0, CLI_USAGE or CLI_FAIL. */
int cli_tsv_split(char *buf, const char *src, struct kv_tsv *t);

/* The TSV / JSON writer: one header row, one record per line, flushed. */
/* How a table is written: tab-separated (the default, for pipes),
 * comma-separated (RFC 4180 quoting), a JSON array of objects, or a
 * Markdown table. */
enum cli_format { CLI_TSV, CLI_CSV, CLI_JSON, CLI_MD, CLI_TABLE };

/* -o, --output FORMAT: tsv, csv, json, md or table, for every table the
 * process writes after it; *json set for json (the tools' --json).
 * Returns 0 or CLI_USAGE (said). Without it, a table on a terminal is
 * written for a person (CLI_TABLE: aligned, sizes in units, the tool's
 * answer columns only unless cli_verbose()), and TSV anywhere else. */
int cli_output(const char *s, bool *json);
/* The enum cli_format -o's word s names, or -1. */
int cli_output_find(const char *s);

/* -v, --verbose: a table on a terminal shows every column. */
void cli_verbose(void);

#define CLI_TABLE_COLS 96 /* the most columns a terminal's table shows */

struct cli_table {
	const char *const *cols; /* column names */
	size_t ncols;
	enum cli_format fmt;
	bool json;   /* a JSON array of objects instead of TSV */
	bool header; /* print the header row (TSV) */
	bool human;  /* byte cells as IEC text (TSV only) */
	size_t rows; /* rows finished */
	size_t cell; /* cells written in the current row */
	/* CLI_TABLE: the cells kept until the end, which are numbers, and
	 * the columns shown, in order */
	char **text;
	bool *num;
	size_t ntext, cap;
	int show[CLI_TABLE_COLS];
	size_t nshow;
};

/* The columns a table on a terminal shows, in this order (the answer
 * first); every column with -v or in any other format. */
void cli_table_brief(struct cli_table *t, const char *const *names,
		     size_t n);

void cli_table_begin(struct cli_table *t, const char *const *cols,
		     size_t ncols, bool json, bool header, bool human);
void cli_put_str(struct cli_table *t, const char *s);
void cli_put_u64(struct cli_table *t, uint64_t v);
void cli_put_bytes(struct cli_table *t, uint64_t v);
void cli_put_f(struct cli_table *t, double v, int prec);
void cli_put_empty(struct cli_table *t);
/* A cell of libkv's rows, by its kind (bytes in units with human). */
void cli_put_cell(struct cli_table *t, const struct kv_cell *c);
void cli_row_end(struct cli_table *t);
void cli_table_end(struct cli_table *t);

/* The one door: checks that stdout was written (a closed pipe is quiet),
 * returns the status to exit with. */
int cli_finish(int status);

#endif
