/*
 * kvfit - how many sequences of a model fit beside its weights on a GPU,
 * and what one decode step of them costs. Parses options, reads configs
 * (or kvsize's rows on stdin), asks libkv's fit module, prints one row per
 * model x KV format x context (x engine).
 */
#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kv/ckpt.h"
#include "kv/fit.h"
#include "kv/gpu.h"
#include "kv/params.h"
#include "kv/units.h"

static const char usage_head[] =
	"Usage: kvfit [OPTIONS] CONFIG...\n"
	"       kvfit --params CONFIG...\n"
	"How many sequences of each model fit beside its weights on a GPU,\n"
	"and the bytes and time of one decode step. CONFIG is a path, a\n"
	"config name, or - for stdin (a config, or kvsize's TSV rows).\n"
	"\n";
/* between the two, the options of options.c's table */
static const char usage_foot[] =
	"\n"
	"Exit status: 0 success, 1 fewer than --min-users fit (or a solve\n"
	"found nothing), 2 bad usage or input. See kvfit(1).\n";


enum solve { SOLVE_USERS, SOLVE_CTX, SOLVE_TP };

struct args {
	const char *gpu, *mem_text;
	const struct kv_gpu *gpu_spec; /* the --gpu entry, or NULL */
	uint64_t mem, weights, reserve, block, prefix, min_users;
	uint64_t *users;    /* --users LIST; NULL: as many as fit */
	size_t nusers;
	uint64_t batched, seqs, kv_memory;
	uint64_t tp, pp;
	double bandwidth, util;
	int wdtype;         /* -1: the config's */
	bool wquant;        /* --weights-dtype named a quantization, wq */
	struct kv_quant wq;
	int engine;         /* -1: all */
	enum solve solve;
	uint64_t *ctx;
	size_t nctx;
	int *dtypes;
	size_t ndtypes;
	bool params, list_gpus, json, header, human;
	bool reserve_given, kv_unified, swa_full, tp_given;
	const char *ctkv;   /* --cache-type-k or -v, as given */
};

/* One row to plan: a model, a KV format (-1: auto) and a context. */
struct plan {
	struct kv_model *m; /* owned when `own` */
	bool own;
	int dtype;
	uint64_t ctx;       /* 0: from --ctx, or the config's maximum */
	enum kv_ckpt_source ckpt; /* a checkpoint beside the config */
	uint64_t ckpt_bytes;      /* its weights' bytes, as stored */
	uint64_t users, tp, block; /* kvsize's row's, or 0 */
};

static const char *const fit_cols[] = {
	"model", "gpu", "gpus", "tp", "pp", "engine", "block", "kv_dtype",
	"ctx", "weights_bytes", "weights_source", "runtime_bytes",
	"activation_bytes", "sampler_bytes", "graph_bytes", "nontorch_bytes",
	"free_kv_bytes", "bytes_per_token",
	"dup_bytes_per_token", "kv_tokens", "num_blocks", "max_concurrency",
	"max_num_seqs", "batched_tokens", "users", "users_whole",
	"kv_bytes", "dup_bytes",
	"step_users", "step_weight_bytes", "step_kv_bytes",
	"kv_weight_ratio", "kv_share", "step_ms", "tokens_per_s",
	"compute_ms", "bound"};
/* a table on a terminal: the answer first */
static const char *const brief_cols[] = {
	"model", "engine", "gpus", "kv_dtype", "ctx", "users_whole", "bound",
	"weights_bytes", "runtime_bytes", "free_kv_bytes", "kv_bytes",
	"step_ms", "tokens_per_s"};
static const char *const param_cols[] = {"model", "params", "params_active",
					 "weights_bytes", "weights_source"};
static const char *const gpu_cols[] = {"gpu", "memory_bytes",
				       "bandwidth_gbps", "bf16_tflops",
				       "fp8_tflops", "label"};

static int parse(int argc, char **argv, struct args *a, bool *done)
{
	int c, e;
	enum kv_dtype t;
	enum kv_policy en;
	bool tp_given = false;
	*a = (struct args){.tp = 1, .pp = 1, .wdtype = -1, .header = true,
			   .engine = KV_POLICY_VLLM};
	while ((c = cli_getopt(argc, argv)) != -1) {
		switch (c) {
		case 'b':
			if ((e = cli_u64("--block-size", optarg, 1, 1 << 20,
					 &a->block)))
				return e;
			break;
		case 'c':
			free(a->ctx);
			if ((e = cli_sweep("--ctx", optarg, &a->ctx, &a->nctx)))
				return e;
			break;
		case 'e':
			if (!strcmp(optarg, "all"))
				a->engine = -1;
			else if (kv_policy_parse(optarg, &en) == 0)
				a->engine = (int)en;
			else
				return cli_usage("--engine: unknown engine '%s'; "
						 "valid: ideal, vllm, sglang, "
						 "trtllm, llamacpp, all",
						 optarg);
			break;
		case 'g': a->gpu = optarg; break;
		case 'h':
			cli_help(stdout, usage_head, usage_foot);
			*done = true;
			return 0;
		case 'H': a->human = true; break;
		case 'm':
			if ((e = cli_size("--gpu-mem", optarg, &a->mem)))
				return e;
			if (!a->mem)
				return cli_usage("--gpu-mem: must be above 0");
			a->mem_text = optarg;
			break;
		case 'r':
			if ((e = cli_size("--reserve", optarg, &a->reserve)))
				return e;
			a->reserve_given = true;
			break;
		case 't':
			free(a->dtypes);
			if ((e = cli_dtypes("--kv-dtype", optarg, &a->dtypes,
					    &a->ndtypes)))
				return e;
			break;
		case 'u':
			free(a->users);
			if ((e = cli_sweep("--users", optarg, &a->users,
					   &a->nusers)))
				return e;
			for (size_t i = 0; i < a->nusers; i++)
				if (!a->users[i] || a->users[i] > 1ULL << 40)
					return cli_usage("--users: each from 1 "
							 "to 2^40, got '%s'",
							 optarg);
			break;
		case 'w':
			if ((e = cli_size("--weights", optarg, &a->weights)))
				return e;
			if (!a->weights)
				return cli_usage("--weights: must be above 0");
			break;
		case OPT_BANDWIDTH:
			if ((e = cli_double("--bandwidth", optarg, 1e-3, 1e9,
					    &a->bandwidth)))
				return e;
			break;
		case OPT_BATCHED:
			if ((e = cli_u64("--max-num-batched-tokens", optarg, 1,
					 1ULL << 30, &a->batched)))
				return e;
			break;
		case OPT_SEQS:
			if ((e = cli_u64("--max-num-seqs", optarg, 1, 1ULL << 30,
					 &a->seqs)))
				return e;
			break;
		case OPT_CTK:
		case OPT_CTV:
			if ((e = cli_cache_type(c == OPT_CTK, optarg, &a->ctkv,
						&a->dtypes, &a->ndtypes)))
				return e;
			break;
		case OPT_KV_UNIFIED: a->kv_unified = true; break;
		case OPT_SWA_FULL: a->swa_full = true; break;
		case OPT_KV_MEMORY:
			if ((e = cli_size("--kv-memory", optarg, &a->kv_memory)))
				return e;
			if (!a->kv_memory)
				return cli_usage("--kv-memory: must be above 0");
			break;
		case OPT_WDTYPE:
			a->wquant = false;
			if (kv_quant_parse(optarg, &a->wq) == 0) {
				a->wquant = true;
				a->wdtype = (int)KV_DTYPE_BF16;
			} else if (kv_dtype_parse(optarg, &t)) {
				char list[256];
				return cli_usage("--weights-dtype: unknown "
						 "format '%s'; valid: %s, "
						 "mxfp4, nvfp4, int4-gN "
						 "(int2, int8; N values a "
						 "scale)",
						 optarg,
						 kv_dtype_list(list, sizeof list,
							       0));
			} else {
				a->wdtype = (int)t;
			}
			break;
		case OPT_UTIL:
			if ((e = cli_double("--util", optarg, -1e300, 1e300,
					    &a->util)))
				return e;
			if (!(a->util > 0 && a->util <= 1))
				return cli_usage("--util: must be in (0, 1], got "
						 "'%s'",
						 optarg);
			break;
		case OPT_TP:
			if ((e = cli_u64("--tp", optarg, 1, 1 << 16, &a->tp)))
				return e;
			tp_given = a->tp_given = true;
			break;
		case OPT_PP:
			if ((e = cli_u64("--pp", optarg, 1, 1 << 16, &a->pp)))
				return e;
			break;
		case OPT_PREFIX:
			if ((e = cli_tokens("--prefix", optarg, &a->prefix)))
				return e;
			break;
		case OPT_SOLVE:
			if (!strcmp(optarg, "users"))
				a->solve = SOLVE_USERS;
			else if (!strcmp(optarg, "ctx"))
				a->solve = SOLVE_CTX;
			else if (!strcmp(optarg, "tp"))
				a->solve = SOLVE_TP;
			else
				return cli_usage("--solve: must be users, ctx or "
						 "tp, got '%s'",
						 optarg);
			break;
		case OPT_MIN_USERS:
			if ((e = cli_u64("--min-users", optarg, 1, 1ULL << 40,
					 &a->min_users)))
				return e;
			break;
		case OPT_PARAMS: a->params = true; break;
		case OPT_LIST_GPUS: a->list_gpus = true; break;
		case OPT_JSON: a->json = true; break;
		case 'o':
			if ((e = cli_output(optarg, &a->json)))
				return e;
			break;
		case 'v': cli_verbose(); break;
		case OPT_NO_HEADER: a->header = false; break;
		case OPT_VERSION:
			printf("kvfit %s\n", KV_VERSION);
			*done = true;
			return 0;
		default: /* said by cli_getopt */
			return CLI_USAGE;
		}
	}
	if (a->list_gpus)
		return 0;
	if (optind >= argc)
		return cli_usage("no config given");
	if (a->params)
		return 0;
	if (!a->gpu && !a->mem)
		return cli_usage("no GPU: give --gpu NAME or --gpu-mem SIZE");
	if (a->solve != SOLVE_USERS && !a->nusers)
		return cli_usage("--solve %s: needs --users N",
				 a->solve == SOLVE_CTX ? "ctx" : "tp");
	if (a->solve == SOLVE_TP && tp_given)
		return cli_usage("--solve tp finds the tensor-parallel degree; "
				 "give it or --tp, not both");
	if (a->json && a->human)
		return cli_usage("--json keeps numbers plain; give it or "
				 "--human, not both");
	return 0;
}

/* Loads gpus.json; prints the error and returns CLI_USAGE on failure. */
static int load_gpus(struct kv_gpus **g)
{
	char path[4200], err[KV_ERRLEN];
	if (kv_gpus_find(path, sizeof path)) {
		cli_error("gpus.json: not found in $KV_CONFIG_PATH or the "
			  "data directories; give --gpu-mem SIZE");
		return CLI_USAGE;
	}
	if (kv_gpus_load(path, g, err)) {
		cli_error("%s", err);
		return CLI_USAGE;
	}
	return 0;
}

static int list_gpus(const struct args *a)
{
	struct kv_gpus *g;
	struct cli_table t;
	int status = load_gpus(&g);
	if (status)
		return status;
	cli_table_begin(&t, gpu_cols, CLI_NCOLS(gpu_cols), a->json, a->header,
			a->human);
	for (size_t i = 0; i < g->n; i++) {
		cli_put_str(&t, g->gpu[i].name);
		cli_put_bytes(&t, g->gpu[i].memory_bytes);
		cli_put_f(&t, g->gpu[i].bandwidth_gbps, 1);
		cli_put_f(&t, g->gpu[i].bf16_tflops, 1);
		cli_put_f(&t, g->gpu[i].fp8_tflops > 0 ? g->gpu[i].fp8_tflops
						       : NAN,
			  1);
		cli_put_str(&t, g->gpu[i].label);
		cli_row_end(&t);
	}
	cli_table_end(&t);
	kv_gpus_free(g);
	return 0;
}

/* The weights' format: --weights-dtype, or what the engine runs the
 * config's dtype in (--params: the config's own, as the ideal engine). */
static enum kv_dtype weight_dtype(const struct args *a,
				  const struct kv_model *m, enum kv_policy e)
{
	return a->wdtype >= 0 ? (enum kv_dtype)a->wdtype
			      : kv_policy_weights_dtype(e, m->dtype);
}

/* Where a plan's weights come from under engine e, in the order that
 * wins: --weights, --weights-dtype (parameters x that format), the
 * checkpoint's own index or header (when the engine runs it as stored:
 * not a float32 checkpoint it runs in 16 bits), its quantization_config,
 * the config (parameters x the dtype the engine runs). Sets in->weights or
 * in->stored; returns the weights_source column's word. */
static const char *weights_from(const struct args *a, const struct plan *p,
				enum kv_policy e, struct kv_fit_in *in)
{
	const struct kv_model *m = p->m;
	enum kv_quant_fmt q = m->quant.fmt;
	if (a->weights)
		return "--weights";
	if (a->wquant) {
		in->stored = true;
		in->quant = &a->wq;
	}
	if (a->wdtype >= 0)
		return "--weights-dtype";
	if (p->ckpt != KV_CKPT_NONE &&
	    kv_policy_weights_dtype(e, m->dtype) == m->dtype) {
		in->weights = p->ckpt_bytes;
		return kv_ckpt_source_name(p->ckpt);
	}
	if (q != KV_QUANT_NONE && q != KV_QUANT_UNKNOWN) {
		in->stored = true;
		return "quantization_config";
	}
	return "config";
}

static int params_row(struct cli_table *t, const struct args *a,
		      const struct plan *pl)
{
	char err[KV_ERRLEN];
	const struct kv_model *m = pl->m;
	struct kv_params p;
	struct kv_fit_in in = {0};
	uint64_t b;
	const char *src = weights_from(a, pl, KV_POLICY_IDEAL, &in);
	if (kv_model_params_as(m, in.quant ? in.quant : &m->quant, &p, err)) {
		cli_error("%s", err);
		return CLI_USAGE;
	}
	if (kv_weight_bytes(p.total, weight_dtype(a, m, KV_POLICY_IDEAL), &b)) {
		cli_error("%s: weight bytes overflow 64 bits", m->name);
		return CLI_USAGE;
	}
	cli_put_str(t, m->name);
	cli_put_u64(t, p.total);
	cli_put_u64(t, p.active);
	cli_put_bytes(t, a->weights ? a->weights
			 : in.weights ? in.weights
			 : in.stored ? p.bytes : b);
	cli_put_str(t, src);
	cli_row_end(t);
	if (p.mtp)
		cli_warn("%s: %llu parameters of multi-token-prediction "
			 "layers are not counted",
			 m->name, (unsigned long long)p.mtp);
	return 0;
}

/* kvsize's rows carry its --users, --tp and --block-size: kvfit goes on
 * with them, and refuses its own options where they say otherwise. */
static const struct args *opts; /* the options, for row_agrees() */

static int row_agrees(const struct cli_kvsize_row *r)
{
	if (r->users > 1 && opts->nusers &&
	    (opts->nusers > 1 || opts->users[0] != r->users))
		return cli_usage("-: line %zu: kvsize's rows are for --users "
				 "%llu, and kvfit was given --users %llu%s",
				 r->line, (unsigned long long)r->users,
				 (unsigned long long)opts->users[0],
				 opts->nusers > 1 ? ",..." : "");
	if (r->tp && opts->tp_given && opts->tp != r->tp)
		return cli_usage("-: line %zu: kvsize's rows are for --tp %llu, "
				 "and kvfit was given --tp %llu",
				 r->line, (unsigned long long)r->tp,
				 (unsigned long long)opts->tp);
	if (r->block && opts->block && opts->block != r->block)
		return cli_usage("-: line %zu: kvsize's rows are for "
				 "--block-size %llu, and kvfit was given "
				 "--block-size %llu",
				 r->line, (unsigned long long)r->block,
				 (unsigned long long)opts->block);
	return 0;
}

/* kvsize's rows on stdin: one plan per row (model, kv_dtype, ctx). */
static int read_rows(char *buf, struct plan **pl, size_t *np)
{
	struct cli_kvsize_row *rows;
	size_t n;
	int status = cli_kvsize_rows(buf, "-", &rows, &n);
	for (size_t i = 0; !status && i < n; i++) {
		struct kv_model *m;
		char err[KV_ERRLEN];
		if (rows[i].config) { /* the config came down the pipe */
			if (kv_model_parse(rows[i].config, strlen(rows[i].config),
					   "-", &m, err)) {
				status = cli_usage("%s", err);
				break;
			}
		} else if ((status = cli_load_model(rows[i].model, &m))) {
			break;
		}
		struct plan *p = realloc(*pl, (*np + 1) * sizeof *p);
		if (!p) {
			kv_model_free(m);
			cli_error("out of memory");
			status = CLI_FAIL;
			break;
		}
		*pl = p;
		p[(*np)++] = (struct plan){m, true, rows[i].dtype, rows[i].ctx,
					   KV_CKPT_NONE, 0,
					   rows[i].users > 1 ? rows[i].users : 0,
					   rows[i].tp, rows[i].block};
		if ((status = row_agrees(&rows[i]))) {
			free(rows);
			return status;
		}
	}
	free(rows);
	return status;
}

/* stdin: a JSON config (first non-blank byte '{') or kvsize's TSV. */
static int read_stdin(struct plan **pl, size_t *np)
{
	size_t len;
	char *buf;
	int status = cli_read_text("-", &buf, &len);
	if (status)
		return status;
	const char *s = buf;
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '[') {
		cli_error("-: a JSON array; kvfit reads a config or kvsize's "
			  "TSV rows (not --json)");
		status = CLI_USAGE;
	} else if (*s == '{') {
		char err[KV_ERRLEN];
		struct kv_model *m;
		if (kv_model_parse(buf, len, "-", &m, err)) {
			cli_error("%s", err);
			status = CLI_USAGE;
		} else {
			struct plan *p = realloc(*pl, (*np + 1) * sizeof *p);
			if (p) {
				*pl = p;
				p[(*np)++] = (struct plan){m, true, -2, 0, KV_CKPT_NONE, 0, 0, 0, 0};
			} else {
				kv_model_free(m);
				status = CLI_FAIL;
			}
		}
	} else {
		status = read_rows(buf, pl, np);
	}
	free(buf);
	return status;
}

/* "which --tp would fit" for a model whose weights miss. */
static void weights_note(const struct kv_fit_in *in, const struct kv_fit *f)
{
	char err[KV_ERRLEN];
	uint32_t tp = 0;
	uint32_t max = in->m->n_heads ? in->m->n_heads : 1;
	kv_fit_solve_tp(in, 1, max > 1024 ? 1024 : max, &tp, err);
	char hint[96] = "no --tp up to the head count fits one sequence";
	if (tp)
		snprintf(hint, sizeof hint, "--tp %u would fit", tp);
	char need[32], miss[32], budget[32];
	cli_error("%s: weights%s need %s per GPU, %s more than the %s the "
		  "engine may use; %s",
		  in->m->name,
		  in->reserve   ? " and --reserve"
		  : f->runtime ? " and the engine's own memory"
				: "",
		  kv_format_iec(f->weights + in->reserve + f->runtime, need,
				sizeof need),
		  kv_format_iec(f->missing, miss, sizeof miss),
		  kv_format_iec(f->budget, budget, sizeof budget), hint);
}

/* vLLM's own check (_check_enough_kv_cache_memory): one request of the
 * whole context must fit, or it does not start; it names the longest that
 * would. */
static void vllm_refuses(const struct kv_fit_in *in, const struct kv_fit *f)
{
	char err[KV_ERRLEN];
	uint64_t ctx = 0;
	struct kv_fit_in one = *in;
	one.max_seqs = 0;
	kv_fit_solve_ctx(&one, 1, &ctx, err);
	cli_warn("%s: vllm would not start: one request of %llu tokens needs "
		 "%.2f GiB of KV cache, more than the %.2f GiB it has; the "
		 "longest that fits is %llu tokens (its estimated maximum model "
		 "length)",
		 in->m->name, (unsigned long long)in->ctx,
		 (double)(f->seq_bytes + f->shared_bytes) / (1 << 30),
		 (double)f->free_kv / (1 << 30), (unsigned long long)ctx);
}

static void bar(const struct kv_fit_in *in, const struct kv_fit *f)
{
	char cells[61], w[32], k[32], fr[32], r[32];
	uint64_t kv = f->kv_bytes;
	uint64_t used = f->weights + f->free_kv;
	fprintf(stderr, "%s %llu [%s] W %s  K %llu users %s  . %s  R %s\n",
		in->m->name, (unsigned long long)in->ctx,
		kv_fit_bar(in, f, 60, cells),
		kv_format_iec(f->weights, w, sizeof w),
		(unsigned long long)f->users_whole,
		kv_format_iec(kv, k, sizeof k),
		kv_format_iec(f->free_kv - (kv < f->free_kv ? kv : f->free_kv),
			      fr, sizeof fr),
		kv_format_iec(in->mem > used ? in->mem - used : 0, r, sizeof r));
}

/* One row: solve as asked, print, check --min-users. */
static int row(struct cli_table *t, const struct args *a,
	       const char *gpu_name, struct kv_fit_in *in, const char *wsrc,
	       bool dry, bool *below)
{
	char err[KV_ERRLEN];
	struct kv_fit f;
	int e = 0;
	if (dry) {
		/* checks the input only: what a solve varies is left valid */
		if (a->solve == SOLVE_TP)
			in->tp = 1;
		if (a->solve == SOLVE_CTX && in->ctx < in->prefix)
			in->ctx = in->prefix;
		if ((e = kv_fit_solve(in, &f, err)))
			cli_error("%s", err);
		return e ? CLI_USAGE : 0;
	}
	if (a->solve == SOLVE_CTX) {
		uint64_t ctx;
		if (!(e = kv_fit_solve_ctx(in, in->users, &ctx, err)) && !ctx) {
			cli_error("%s: %llu users do not fit at any context",
				  in->m->name, (unsigned long long)in->users);
			*below = true;
			return 0;
		}
		/* no engine serves past the model's positions (vLLM refuses
		 * a max_model_len beyond them): the answer stops there */
		if (in->m->max_pos && ctx > in->m->max_pos) {
			cli_warn("%s: memory holds %llu tokens for %llu users; "
				 "the config's %llu positions are the longest "
				 "context",
				 in->m->name, (unsigned long long)ctx,
				 (unsigned long long)in->users,
				 (unsigned long long)in->m->max_pos);
			ctx = in->m->max_pos;
		}
		in->ctx = ctx;
	} else if (a->solve == SOLVE_TP) {
		uint32_t tp, max = in->m->n_heads > 1024 ? 1024
							 : in->m->n_heads;
		if (!(e = kv_fit_solve_tp(in, in->users, max, &tp, err)) &&
		    !tp) {
			cli_error("%s: %llu users at %llu tokens fit at no "
				  "tensor-parallel degree up to %u",
				  in->m->name, (unsigned long long)in->users,
				  (unsigned long long)in->ctx, max);
			*below = true;
			return 0;
		}
		in->tp = tp;
	}
	if (e || (e = kv_fit_solve(in, &f, err))) {
		cli_error("%s", err);
		return CLI_USAGE;
	}
	cli_put_str(t, in->m->name);
	cli_put_str(t, gpu_name);
	cli_put_u64(t, (uint64_t)in->tp * in->pp);
	cli_put_u64(t, in->tp);
	cli_put_u64(t, in->pp);
	cli_put_str(t, kv_policy_info(in->engine)->name);
	cli_put_u64(t, f.block);
	cli_put_str(t, kv_dtype_name(in->kv_dtype));
	cli_put_u64(t, in->ctx);
	cli_put_bytes(t, f.weights);
	cli_put_str(t, wsrc);
	cli_put_bytes(t, f.runtime);
	cli_put_bytes(t, f.rt.activation);
	cli_put_bytes(t, f.rt.sampler);
	cli_put_bytes(t, f.rt.graphs);
	cli_put_bytes(t, f.rt.nontorch);
	cli_put_bytes(t, f.free_kv);
	cli_put_bytes(t, f.bytes_per_token);
	cli_put_bytes(t, f.dup_per_token);
	cli_put_u64(t, f.kv_tokens);
	if (f.num_blocks)
		cli_put_u64(t, f.num_blocks);
	else
		cli_put_empty(t);
	cli_put_f(t, kv_fit_users_shown(f.max_concurrency), 2);
	if (f.max_seqs)
		cli_put_u64(t, f.max_seqs);
	else
		cli_put_empty(t);
	if (f.batched_tokens)
		cli_put_u64(t, f.batched_tokens);
	else
		cli_put_empty(t);
	cli_put_f(t, kv_fit_users_shown(f.users), 2);
	cli_put_u64(t, f.users_whole);
	cli_put_bytes(t, f.kv_bytes);
	cli_put_bytes(t, f.dup_bytes);
	cli_put_u64(t, f.step_users);
	cli_put_bytes(t, f.step_weight_bytes);
	cli_put_bytes(t, f.step_kv_bytes);
	cli_put_f(t, f.kv_weight_ratio, 2);
	cli_put_f(t, f.kv_share, 2);
	cli_put_f(t, f.step_ms, 3);
	cli_put_f(t, f.tokens_per_s, 1);
	cli_put_f(t, f.compute_ms, 3);
	/* what stops one more sequence */
	cli_put_str(t, f.missing ? "weights"
		       : f.max_seqs && f.max_concurrency > (double)f.max_seqs &&
				 f.users >= (double)f.max_seqs
			       ? "max_num_seqs"
			       : "kv_memory");
	cli_row_end(t);
	if (a->human && isatty(fileno(stderr)))
		bar(in, &f);
	if (f.missing)
		weights_note(in, &f);
	else if (in->engine == KV_POLICY_VLLM && !f.users_whole)
		vllm_refuses(in, &f);
	if (in->users && f.users_whole < in->users && a->solve == SOLVE_USERS)
		cli_warn("%s: --users %llu: only %llu fit at %llu tokens; the "
			 "step is sized for %llu anyway",
			 in->m->name, (unsigned long long)in->users,
			 (unsigned long long)f.users_whole,
			 (unsigned long long)in->ctx,
			 (unsigned long long)in->users);
	if (a->min_users && f.users_whole < a->min_users) {
		cli_error("%s: %llu user%s at %llu tokens (%s, %llu GPU%s, "
			  "%s), below --min-users %llu",
			  in->m->name, (unsigned long long)f.users_whole,
			  f.users_whole == 1 ? " fits" : "s fit",
			  (unsigned long long)in->ctx, gpu_name,
			  (unsigned long long)in->tp * in->pp,
			  in->tp * in->pp > 1 ? "s" : "",
			  kv_policy_info(in->engine)->name,
			  (unsigned long long)a->min_users);
		*below = true;
	}
	return 0;
}

/* What one row asks of libkv. dtype -1: the config's KV format. */
static struct kv_fit_in fit_in(const struct args *a, const struct plan *p,
			       int dtype, uint64_t ctx, uint64_t users,
			       enum kv_policy engine)
{
	const struct kv_model *m = p->m;
	enum kv_dtype w = weight_dtype(a, m, engine);
	return (struct kv_fit_in){
		.m = m,
		.kv_dtype = dtype >= 0 ? (enum kv_dtype)dtype
				       : kv_policy_kv_dtype(engine, m->dtype),
		.w_dtype = w,
		.weights = a->weights,
		.mem = a->mem,
		.reserve = a->reserve,
		.runtime = !a->reserve_given,
		.util = a->util,
		.tp = (uint32_t)(p->tp ? p->tp : a->tp),
		.pp = (uint32_t)a->pp,
		.block = p->block ? p->block : a->block,
		.gpu = a->gpu_spec ? a->gpu_spec->name : NULL,
		.batched_tokens = a->batched,
		.max_seqs = a->seqs,
		.kv_memory = a->kv_memory,
		.kv_unified = a->kv_unified,
		.swa_full = a->swa_full,
		.ctx = ctx,
		.prefix = a->prefix,
		.engine = engine,
		.users = p->users ? p->users : users,
		.bandwidth_gbps = a->bandwidth,
		.tflops = kv_gpu_tflops(a->gpu_spec, w),
	};
}

/* Every row of every plan: model x KV format x context x engine. */
static int each(struct cli_table *t, const struct args *a,
		const struct plan *pl, size_t np, const char *gpu_name,
		bool dry, bool *below)
{
	static const int auto_dtype = -1;
	int status = 0;
	for (size_t i = 0; i < np && !status; i++) {
		const struct kv_model *m = pl[i].m;
		bool from_rows = pl[i].dtype != -2;
		uint64_t defctx = m->max_pos ? m->max_pos : 4096;
		const int *dts = from_rows ? &pl[i].dtype
				 : a->dtypes ? a->dtypes : &auto_dtype;
		size_t ndts = from_rows || !a->dtypes ? 1 : a->ndtypes;
		const uint64_t *ctx = from_rows ? &pl[i].ctx
				      : a->ctx ? a->ctx : &defctx;
		size_t nctx = from_rows || !a->ctx ? 1 : a->nctx;
		if (!dry && a->solve != SOLVE_CTX)
			cli_warn_beyond(m->name, ctx, nctx, m->max_pos);
		int e0 = a->engine < 0 ? 0 : a->engine;
		int e1 = a->engine < 0 ? KV_POLICY_COUNT - 1 : a->engine;
		static const uint64_t no_users = 0;
		const uint64_t *us = a->users ? a->users : &no_users;
		size_t nus = a->users ? a->nusers : 1;
		/* a reader that went away (| head) ends the rows: each row
		 * is flushed, so its write error shows at once */
		for (size_t d = 0; d < ndts && !status; d++)
			for (size_t c = 0; c < nctx && !status &&
					    !ferror(stdout);
			     c++)
			for (size_t u = 0; u < nus && !status; u++)
				for (int en = e0; en <= e1 && !status &&
						  !ferror(stdout);
				     en++) {
					struct kv_fit_in in = fit_in(
						a, &pl[i], dts[d], ctx[c],
						us[u], (enum kv_policy)en);
					const char *ws = weights_from(
						a, &pl[i], in.engine, &in);
					/* --engine all: the engines that
					 * keep the format */
					if (a->engine < 0 &&
					    (!kv_policy_stores(in.engine,
							       in.kv_dtype) ||
					     (in.engine == KV_POLICY_LLAMACPP &&
					      in.tp > 1)))
						continue;
					status = row(t, a, gpu_name, &in, ws,
						     dry, below);
				}
	}
	return status;
}

int main(int argc, char **argv)
{
	struct args a;
	struct plan *pl = NULL;
	size_t np = 0;
	struct kv_gpus *gpus = NULL;
	bool done = false, below = false, table = false;
	struct cli_table t;
	int status;

	cli_init("kvfit");
	status = parse(argc, argv, &a, &done);
	opts = &a;
	if (status || done)
		goto out;
	if (a.list_gpus) {
		status = list_gpus(&a);
		goto out;
	}

	/* the GPU first: an unknown name fails before any config is read */
	const struct kv_gpu *gpu = NULL;
	char gpu_name[64];
	snprintf(gpu_name, sizeof gpu_name, "%s", a.mem_text ? a.mem_text : "");
	if (a.gpu && !a.params) {
		if ((status = load_gpus(&gpus)))
			goto out;
		if (!(gpu = kv_gpus_lookup(gpus, a.gpu))) {
			char list[2048];
			status = cli_usage("--gpu: unknown GPU '%s'; known: %s",
					   a.gpu,
					   kv_gpus_list(gpus, list, sizeof list));
			goto out;
		}
		snprintf(gpu_name, sizeof gpu_name, "%s", gpu->name);
		a.gpu_spec = gpu;
		if (!a.mem)
			a.mem = gpu->memory_bytes;
		if (!a.bandwidth)
			a.bandwidth = gpu->bandwidth_gbps;
	}
	if (!a.params && a.reserve > a.mem) {
		char r[32], g[32];
		status = cli_usage("--reserve: %s is larger than the GPU's "
				   "memory of %s",
				   kv_format_iec(a.reserve, r, sizeof r),
				   kv_format_iec(a.mem, g, sizeof g));
		goto out;
	}

	/* every config loads before any row: bad input fails early */
	bool stdin_read = false;
	for (int i = optind; i < argc; i++) {
		if (!strcmp(argv[i], "-")) {
			if (stdin_read) {
				status = cli_usage("- given twice");
				goto out;
			}
			stdin_read = true;
			if ((status = read_stdin(&pl, &np)))
				goto out;
			continue;
		}
		struct kv_model *m;
		if ((status = cli_load_model(argv[i], &m)))
			goto out;
		struct plan *p = realloc(pl, (np + 1) * sizeof *p);
		if (!p) {
			kv_model_free(m);
			cli_error("out of memory");
			status = CLI_FAIL;
			goto out;
		}
		pl = p;
		pl[np++] = (struct plan){m, true, -2, 0, KV_CKPT_NONE, 0, 0, 0, 0};
	}
	for (size_t i = 0; i < np; i++)
		if (pl[i].dtype != -2 && (a.ctx || a.dtypes) && !a.params) {
			cli_warn("--ctx and --kv-dtype do not apply to kvsize's "
				 "rows: each keeps its own");
			break;
		}
	for (size_t i = 0; i < np; i++)
		if (pl[i].own && pl[i].m->note[0])
			cli_warn("%s: %s", pl[i].m->name, pl[i].m->note);
	/* each config's checkpoint, read once; its quantization */
	for (size_t i = 0; i < np && !status; i++) {
		const struct kv_model *m = pl[i].m;
		char err[KV_ERRLEN];
		if (kv_ckpt_bytes(m->path, &pl[i].ckpt, &pl[i].ckpt_bytes,
				  err)) {
			status = cli_usage("%s", err);
			goto out;
		}
		if (pl[i].own && m->quant.fmt == KV_QUANT_UNKNOWN &&
		    !a.weights && a.wdtype < 0)
			cli_warn("%s: quantization_config: quant_method \"%s\" "
				 "is not modelled; its weights are counted as "
				 "parameters x %s (weights_source config)",
				 m->name, m->quant.method,
				 kv_dtype_name(m->dtype));
	}

	if (a.params) {
		cli_table_begin(&t, param_cols, CLI_NCOLS(param_cols), a.json,
				a.header, a.human);
		table = true;
		for (size_t i = 0; i < np && !status; i++)
			if (i == 0 || pl[i].m != pl[i - 1].m)
				status = params_row(&t, &a, &pl[i]);
		goto end;
	}

	/* a first pass checks every row, so bad input fails before any */
	if ((status = each(NULL, &a, pl, np, gpu_name, true, &below)))
		goto out;
	cli_table_begin(&t, fit_cols, CLI_NCOLS(fit_cols),
			a.json, a.header, a.human);
	cli_table_brief(&t, brief_cols, CLI_NCOLS(brief_cols));
	table = true;
	status = each(&t, &a, pl, np, gpu_name, false, &below);
end:
	if (table)
		cli_table_end(&t);
	if (!status && below)
		status = CLI_FAIL;
out:
	for (size_t i = 0; i < np; i++)
		if (pl[i].own)
			kv_model_free(pl[i].m);
	free(pl);
	kv_gpus_free(gpus);
	free(a.ctx);
	free(a.dtypes);
	free(a.users);
	return cli_finish(status);
}
