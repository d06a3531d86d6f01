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

/* Exit status of every tool, documented in each man page. */
enum cli_exit {
	CLI_OK = 0,    /* success */
	CLI_FAIL = 1,  /* a check or requirement failed; a runtime failure */
	CLI_USAGE = 2, /* bad usage or bad input */
};

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

/* What getopt_long returned for a bad option ('?', or ':' with an option
 * string that starts with ':'), as one message in the tool's own name
 * (opterr must be 0). Returns CLI_USAGE. */
int cli_bad_option(char **argv, int c);

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
/* A list of KV formats ("bf16,fp8"); "auto" gives -1 (the model's own).
 * *vals from malloc. */
int cli_dtypes(const char *opt, const char *s, int **vals, size_t *n);

/* Finds and loads a config by what the user typed; names the model by
 * that (a name found in the search path keeps its bare name, a path stays
 * a path). Prints the error and returns CLI_USAGE on failure. */
int cli_load_model(const char *arg, struct kv_model **m);

/* The TSV / JSON writer: one header row, one record per line, flushed. */
struct cli_table {
	const char *const *cols; /* column names */
	size_t ncols;
	bool json;   /* a JSON array of objects instead of TSV */
	bool header; /* print the header row (TSV) */
	bool human;  /* byte cells as IEC text (TSV only) */
	size_t rows; /* rows finished */
	size_t cell; /* cells written in the current row */
};

void cli_table_begin(struct cli_table *t, const char *const *cols,
		     size_t ncols, bool json, bool header, bool human);
void cli_put_str(struct cli_table *t, const char *s);
void cli_put_u64(struct cli_table *t, uint64_t v);
void cli_put_bytes(struct cli_table *t, uint64_t v);
void cli_put_f(struct cli_table *t, double v, int prec);
void cli_put_empty(struct cli_table *t);
void cli_row_end(struct cli_table *t);
void cli_table_end(struct cli_table *t);

/* The one door: checks that stdout was written (a closed pipe is quiet),
 * returns the status to exit with. */
int cli_finish(int status);

#endif
