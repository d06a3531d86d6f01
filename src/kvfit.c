/*
 * kvfit - how many sequences of a model fit beside its weights on a GPU,
 * and what one decode step of them costs. Parses options, reads configs
 * (or kvsize's rows on stdin), asks libkv's plan module for each row of
 * model x KV format x context (x block size x users x engine) and its
 * solve, prints.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kvfit.h"
#include "kv/eff.h"
#include "kv/fit.h"
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


/* the columns of a timed row (--isl and --osl), after the others */
#define TIME_COLS                                                        \
	"isl", "osl", "prefill_chunk", "prefill_ms", "decode_ms", "ttft_ms", \
		"tpot_ms", "latency_ms", "out_tokens_per_s",                 \
		"out_tokens_per_s_gpu", "prefill_bound", "decode_bound",     \
		"meets_target", "usd_per_mtok", "arrivals", "time_source"
#define N_TIME_COLS CLI_NCOLS(((const char *[]){TIME_COLS}))
static const char *const fit_cols[] = {
	"model", "gpu", "gpus", "tp", "pp", "engine", "engine_rules", "block",
	"kv_dtype",
	"ctx", "weights_bytes", "weights_source", "runtime_bytes",
	"activation_bytes", "sampler_bytes", "graph_bytes", "nontorch_bytes",
	"free_kv_bytes", "bytes_per_token",
	"dup_bytes_per_token", "kv_tokens", "num_blocks", "max_concurrency",
	"max_num_seqs", "batched_tokens", "users", "users_whole",
	"kv_bytes", "dup_bytes",
	"step_users", "step_fits", "step_weight_bytes", "step_kv_bytes",
	"kv_weight_ratio", "kv_share", "step_ms", "tokens_per_s",
	"compute_ms", "bound", TIME_COLS};
#define FIT_NCOLS (CLI_NCOLS(fit_cols) - N_TIME_COLS)
/* a table on a terminal: the answer first */
static const char *const brief_cols[] = {
	"model", "engine", "gpus", "kv_dtype", "ctx", "users_whole", "bound",
	"weights_bytes", "runtime_bytes", "free_kv_bytes", "kv_bytes",
	"step_users", "step_fits", "step_ms", "tokens_per_s"};
static const char *const brief_time_cols[] = {
	"model", "engine", "gpus", "kv_dtype", "ctx", "users_whole",
	"step_users", "step_fits", "ttft_ms", "tpot_ms",
	"out_tokens_per_s_gpu",
	"decode_bound", "meets_target", "usd_per_mtok"};
static const char *const param_cols[] = {"model", "params", "params_active",
					 "weights_bytes", "weights_source"};

/* What an option group's reader returns for another group's option. */
#define NOT_MINE (-1)

/* A size that must be above 0 (--gpu-mem, --weights, --kv-memory). */
static int size_above0(const char *opt, const char *s, uint64_t *out)
{
	int e = cli_size(opt, s, out);
	if (!e && !*out)
		return cli_usage("%s: must be above 0", opt);
	return e;
}

/* A token count of at least 1 (8k, 128K). */
static int tokens_above0(const char *opt, const char *s, uint64_t *out)
{
	int e = cli_tokens(opt, s, out);
	if (!e && !*out)
		return cli_usage("%s: must be at least 1, got '%s'", opt, s);
	return e;
}

/* A fraction in (0, 1] (--util, the efficiencies). */
static int fraction(const char *opt, const char *s, double *out)
{
	int e = cli_double(opt, s, -1e300, 1e300, out);
	if (!e && !(*out > 0 && *out <= 1))
		return cli_usage("%s: must be in (0, 1], got '%s'", opt, s);
	return e;
}

/* The GPU's options and how the engine spends its memory. Returns 0,
 * CLI_USAGE (said) or NOT_MINE. */
static int opt_gpu(int c, const char *s, struct args *a)
{
	struct kv_plan_opts *o = &a->o;
	char list[256];
	switch (c) {
	case 'b':
		return cli_u64s("--block-size", s, 1, KV_MAX_BLOCK, &o->blocks,
				&o->nblocks);
	case 'g': a->gpu = s; return 0;
	case OPT_GPU_FILE: a->gpu_file = s; return 0;
	case 'm':
		a->mem_text = s;
		return size_above0("--gpu-mem", s, &o->mem);
	case 'r':
		o->reserve_given = true;
		return cli_size("--reserve", s, &o->reserve);
	case 'w': return size_above0("--weights", s, &o->weights);
	case OPT_BANDWIDTH:
		return cli_double("--bandwidth", s, 1e-3, 1e9, &o->bandwidth);
	case OPT_TFLOPS:
		return cli_double("--tflops", s, 1e-6, 1e9, &o->tflops);
	case OPT_LINK:
		a->link_given = true;
		return cli_double("--interconnect", s, 1e-3, 1e9,
				  &o->work.link_gbps);
	case OPT_AR_LATENCY:
		a->ar_given = true;
		o->work.ar_step_us = 0;
		return cli_double("--allreduce-latency", s, 0, 1e9,
				  &o->work.ar_base_us);
	case OPT_DEC_TFLOPS:
		return cli_double("--decode-tflops", s, 1e-6, 1e9,
				  &o->work.dec_tflops);
	case OPT_SERIAL:
		a->serial_given = true;
		return cli_double("--serial-fraction", s, 0, 1,
				  &o->work.serial);
	case OPT_BW_EFF:
		return fraction("--bw-efficiency", s, &o->work.bw_eff);
	case OPT_FLOPS_EFF:
		return fraction("--flops-efficiency", s, &o->work.flops_eff);
	case OPT_COST:
		return cli_double("--cost-per-hour", s, 1e-9, 1e9,
				  &o->usd_per_hour);
	case OPT_BATCHED:
		return cli_u64(cli_opt_as(), s, 1, 1ULL << 30,
			       &o->batched);
	case OPT_SEQS:
		return cli_u64(cli_opt_as(), s, 1, 1ULL << 30, &o->seqs);
	case OPT_KV_UNIFIED: o->kv_unified = true; return 0;
	case OPT_SWA_FULL: o->swa_full = true; return 0;
	case OPT_ATTN_WINDOW: /* token counts of at least 1, in turn */
		return cli_list(cli_opt_as(), s, 1ULL << 40, &o->windows,
				&o->nwindows);
	case OPT_KV_MEMORY:
		return size_above0(cli_opt_as(), s, &o->kv_memory);
	case OPT_WDTYPE:
		if (kv_plan_weights_parse(s, o))
			return cli_usage("--weights-dtype: unknown format "
					 "'%s'; valid: %s, mxfp4, nvfp4, "
					 "int4-gN (int2, int8; N values a "
					 "scale)",
					 s, kv_dtype_list(list, sizeof list,
							  0));
		return 0;
	case OPT_UTIL: return fraction(cli_opt_as(), s, &o->util);
	case OPT_TP:
		o->tp_given = true;
		return cli_u64(cli_opt_as(), s, 1, KV_MAX_RANKS, &o->tp);
	case OPT_PP: return cli_u64(cli_opt_as(), s, 1, KV_MAX_RANKS, &o->pp);
	default: return NOT_MINE;
	}
}

/* --engine NAME[@RELEASE] or all. */
static int engine(const char *s, struct kv_plan_opts *o)
{
	char rel[128];
	int e = kv_plan_engine_parse(s, &o->server);
	if (e == KV_EUNSUP)
		return cli_usage("--engine: %s: no rules of release '%s' are "
				 "kept; %s's: %s",
				 s, strchr(s, '@') + 1, o->server->name,
				 kv_server_releases(o->server->kind, rel,
						    sizeof rel));
	if (e)
		return cli_usage("--engine: unknown engine '%s'; valid: "
				 "ideal, vllm, sglang, trtllm, llamacpp, all "
				 "(NAME@RELEASE: an older release's rules, "
				 "vllm@0.27)",
				 s);
	return 0;
}

/* What the rows are: formats, contexts, users, engines, the solve.
 * Returns 0, CLI_USAGE (said) or NOT_MINE. */
static int opt_rows(int c, const char *s, struct args *a)
{
	struct kv_plan_opts *o = &a->o;
	switch (c) {
	case 'c':
		free(o->ctx);
		return cli_sweep(cli_opt_as(), s, &o->ctx, &o->nctx);
	case 'e':
		return engine(s, o);
	case 't':
		free(o->dtypes);
		return cli_dtypes(cli_opt_as(), s, &o->dtypes, &o->ndtypes);
	case 'u':
		return cli_users(s, &o->users, &o->nusers);
	case OPT_CTK:
	case OPT_CTV:
		return cli_cache_type(c == OPT_CTK, s, &a->kv);
	case OPT_PREFIX: return cli_tokens("--prefix", s, &o->prefix);
	case OPT_SOLVE:
		if (kv_plan_solve_parse(s, &o->solve))
			return cli_usage("--solve: must be users, ctx or tp, "
					 "got '%s'",
					 s);
		return 0;
	case OPT_MIN_USERS:
		return cli_u64("--min-users", s, 1, KV_MAX_USERS, &a->min_users);
	case OPT_ISL: return tokens_above0("--isl", s, &o->work.isl);
	case OPT_OSL: return tokens_above0("--osl", s, &o->work.osl);
	case OPT_NUM_PROMPTS:
		a->prompts_given = true;
		return cli_u64("--num-prompts", s, 1, 1ULL << 30,
			       &o->work.prompts);
	case OPT_RATE:
		a->rate_given = true;
		o->work.arrivals = KV_ARRIVE_RATE;
		return cli_double("--request-rate", s, 1e-9, 1e9,
				  &o->work.rate);
	case OPT_CALIBRATE:
		if (a->ncalib == sizeof a->calib / sizeof a->calib[0])
			return cli_usage("--calibrate: at most %zu files",
					 a->ncalib);
		a->calib[a->ncalib++] = s;
		return 0;
	case OPT_SAVE_GPU:
		a->save_gpu = s;
		return 0;
	case OPT_STEP_US:
		o->work.step_given = true;
		return cli_double("--step-us", s, 0, 1e9, &o->work.step_us);
	case OPT_LAYER_US:
		o->work.layer_given = true;
		return cli_double("--layer-us", s, 0, 1e9, &o->work.layer_us);
	case OPT_ARRIVALS:
		if (kv_plan_arrivals_parse(s, &o->work.arrivals))
			return cli_usage("--arrivals: must be steady or burst, "
					 "got '%s'",
					 s);
		a->arrivals_given = true;
		return 0;
	case OPT_MAX_TTFT:
		return cli_double("--max-ttft", s, 1e-9, 1e12, &o->max_ttft);
	case OPT_MAX_TPOT:
		return cli_double("--max-tpot", s, 1e-9, 1e12, &o->max_tpot);
	default: return NOT_MINE;
	}
}

/* What the options say together, once all are read. */
static int check(int argc, const struct args *a)
{
	if (a->gpu_file && !a->gpu && !a->list_gpus)
		return cli_usage("--gpu-file: needs --gpu NAME or --list-gpus");
	if (a->list_gpus)
		return 0;
	if (optind >= argc)
		return cli_usage("no config given");
	if (a->params)
		return 0;
	if (a->save_gpu && !a->ncalib)
		return cli_usage("--save-gpu: writes a fit; give --calibrate "
				 "FILE");
	if (a->ncalib && !a->gpu)
		return cli_usage("--calibrate: needs --gpu NAME, the GPU the "
				 "runs ran on");
	if (a->ncalib && a->o.work.isl)
		return cli_usage("--calibrate: the runs give their lengths; "
				 "give no --isl or --osl");
	if (!a->gpu && !a->o.mem)
		return cli_usage("no GPU: give --gpu NAME or --gpu-mem SIZE");
	if (a->o.solve != KV_PLAN_USERS && !a->o.nusers)
		return cli_usage("--solve %s: needs --users N",
				 a->o.solve == KV_PLAN_CTX ? "ctx" : "tp");
	if (a->o.solve == KV_PLAN_TP && a->o.tp_given)
		return cli_usage("--solve tp finds the tensor-parallel degree; "
				 "give it or --tp, not both");
	if (a->json && a->human)
		return cli_usage("--json keeps numbers plain; give it or "
				 "--human, not both");
	const struct kv_plan_opts *o = &a->o;
	if (o->windows && o->server && !o->server->window_list)
		return cli_usage("--max-attention-window: TensorRT-LLM's "
				 "setting (KvCacheConfig.max_attention_window); "
				 "give --engine trtllm, or all");
	if (!o->work.isl != !o->work.osl)
		return cli_usage("%s: needs %s too (a request's prompt and "
				 "output)",
				 o->work.isl ? "--isl" : "--osl",
				 o->work.isl ? "--osl" : "--isl");
	if (!o->work.isl && a->arrivals_given)
		return cli_usage("--arrivals: needs --isl and --osl, the "
				 "requests that arrive");
	if (a->rate_given && (a->arrivals_given || o->nusers))
		return cli_usage("--request-rate: the rate makes the "
				 "concurrency; give no %s",
				 a->arrivals_given ? "--arrivals" : "--users");
	if (a->rate_given && !o->work.isl)
		return cli_usage("--request-rate: needs --isl and --osl, the "
				 "requests sent");
	if (a->prompts_given && o->work.arrivals != KV_ARRIVE_BURST)
		return cli_usage("--num-prompts: a burst's requests; give "
				 "--arrivals burst");
	if (!o->work.isl && (o->max_ttft || o->max_tpot || o->usd_per_hour))
		return cli_usage("%s: needs --isl and --osl, the request it "
				 "times",
				 o->max_ttft     ? "--max-ttft"
				 : o->max_tpot ? "--max-tpot"
					       : "--cost-per-hour");
	return 0;
}

static int parse(int argc, char **argv, struct args *a, bool *done)
{
	int c, e;
	*a = (struct args){.o = {.tp = 1, .pp = 1, .wdtype = -1,
				 .server = kv_server_get(KV_SERVER_VLLM),
				 .work = {.prompts = 1000}},
			   .header = true};
	while ((c = cli_getopt(argc, argv)) != -1) {
		switch (c) {
		case 'h':
			cli_help(stdout, usage_head, usage_foot);
			*done = true;
			return 0;
		case OPT_VERSION:
			printf("kvfit %s\n", KV_VERSION);
			*done = true;
			return 0;
		case 'H': a->human = true; break;
		case OPT_PARAMS: a->params = true; break;
		case OPT_LIST_GPUS: a->list_gpus = true; break;
		case OPT_JSON: a->json = true; break;
		case 'o':
			if ((e = cli_output(optarg, &a->json)))
				return e;
			break;
		case 'v': cli_verbose(); break;
		case OPT_NO_HEADER: a->header = false; break;
		default:
			if ((e = opt_gpu(c, optarg, a)) == NOT_MINE)
				e = opt_rows(c, optarg, a);
			if (e == NOT_MINE) /* said by cli_getopt */
				return CLI_USAGE;
			if (e)
				return e;
		}
	}
	if ((e = cli_kv_join(&a->kv, &a->o.dtypes, &a->o.ndtypes)))
		return e;
	return check(argc, a);
}

static int params_row(struct cli_table *t, const struct args *a,
		      const struct kv_plan *pl)
{
	char err[KV_ERRLEN];
	struct kv_params p;
	uint64_t bytes;
	const char *src;
	int e = kv_plan_params(&a->o, pl, &p, &bytes, &src, err);
	if (e)
		return cli_kv_error(e, err);
	cli_put_str(t, pl->m->name);
	cli_put_u64(t, p.total);
	cli_put_u64(t, p.active);
	cli_put_bytes(t, bytes);
	cli_put_str(t, src);
	cli_row_end(t);
	if (p.mtp)
		cli_warn("%s: %llu parameters of multi-token-prediction "
			 "layers are not counted",
			 pl->m->name, (unsigned long long)p.mtp);
	return 0;
}

/* Why a row's weights miss, into buf: what they need and what the
 * engine may use, and which --tp (llama.cpp: --pp) would fit them. */
static const char *weights_why(const struct kv_fit_in *in,
			       const struct kv_fit *f,
			       const struct kv_plan_refusal *r, char *buf,
			       size_t n)
{
	char hint[96], need[32], miss[32], budget[32];
	bool lcpp = in->server->by_layers;
	if (r->tp || r->pp)
		snprintf(hint, sizeof hint, "--%s %u would fit",
			 r->pp ? "pp" : "tp", r->pp ? r->pp : r->tp);
	else
		snprintf(hint, sizeof hint, "no --%s up to the %s count fits "
			 "one sequence", lcpp ? "pp" : "tp",
			 lcpp ? "layer" : "head");
	snprintf(buf, n, "weights%s need %s per GPU, %s more than the %s the "
		 "engine may use; %s",
		 in->reserve   ? " and --reserve"
		 : f->runtime ? " and the engine's own memory"
			      : "",
		 kv_format_iec(r->need, need, sizeof need),
		 kv_format_iec(f->missing, miss, sizeof miss),
		 kv_format_iec(f->budget, budget, sizeof budget), hint);
	return buf;
}

/* What a row that serves no sequence says: which --tp would fit weights
 * that miss, or that vLLM would not start. */
static void refusal(const struct kv_fit_in *in, const struct kv_fit *f)
{
	struct kv_plan_refusal r = kv_plan_refusal(in, f);
	char why[512];
	if (r.why == KV_PLAN_VLLM)
		cli_warn("%s: vllm would not start: one request of %llu "
			 "tokens needs %.2f GiB of KV cache, more than the "
			 "%.2f GiB it has; the longest that fits is %llu "
			 "tokens (its estimated maximum model length)",
			 in->m->name, (unsigned long long)in->ctx,
			 (double)r.need / (1 << 30),
			 (double)f->free_kv / (1 << 30),
			 (unsigned long long)r.ctx);
	if (r.why == KV_PLAN_WEIGHTS)
		cli_error("%s: %s", in->m->name,
			  weights_why(in, f, &r, why, sizeof why));
}

/* Why --solve ctx found no context for a row's users: f is the row at
 * its shortest context. */
static void no_context(const struct kv_fit_in *in, const struct kv_fit *f)
{
	struct kv_plan_refusal r = kv_plan_refusal(in, f);
	char why[512];
	uint64_t u = in->users;
	if (r.why == KV_PLAN_WEIGHTS)
		weights_why(in, f, &r, why, sizeof why);
	else if (f->max_seqs && u > f->max_seqs)
		snprintf(why, sizeof why, "%s runs at most %llu at once "
			 "(max_num_seqs)", in->server->name,
			 (unsigned long long)f->max_seqs);
	else
		snprintf(why, sizeof why, "at %llu token%s each, %llu fit",
			 (unsigned long long)in->ctx, in->ctx == 1 ? "" : "s",
			 (unsigned long long)f->users_whole);
	cli_error("%s: %llu user%s at no context: %s", in->m->name,
		  (unsigned long long)u, u == 1 ? " fits" : "s fit", why);
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

/* Whether the options give a latency target to time rows against. */
static bool target(const struct kv_plan_opts *o)
{
	return o->work.isl && (o->max_ttft > 0 || o->max_tpot > 0);
}

/* A count, or an empty cell where the engine has none. */
static void put_some(struct cli_table *t, uint64_t v)
{
	if (v)
		cli_put_u64(t, v);
	else
		cli_put_empty(t);
}

/* The time's cells of a row (fit_cols after FIT_NCOLS); empty where
 * the row is not timed. */
static void put_time(struct cli_table *t, const struct kv_plan_opts *o,
		     const struct kv_plan_row *r)
{
	const struct kv_serve *s = &r->s;
	cli_put_u64(t, o->work.isl);
	cli_put_u64(t, o->work.osl);
	if (!r->timed) {
		for (size_t i = 2; i < N_TIME_COLS; i++)
			cli_put_empty(t);
		return;
	}
	cli_put_u64(t, s->chunk);
	cli_put_f(t, s->prefill.ms, 3);
	cli_put_f(t, s->decode.ms, 3);
	cli_put_f(t, s->ttft_ms, 3);
	cli_put_f(t, s->tpot_ms, 3);
	cli_put_f(t, s->latency_ms, 1);
	cli_put_f(t, s->tokens_per_s, 1);
	cli_put_f(t, s->tokens_per_s_gpu, 1);
	cli_put_str(t, s->prefill.bound);
	cli_put_str(t, s->decode.bound);
	if (target(o))
		cli_put_str(t, r->meets ? "yes" : "no");
	else
		cli_put_empty(t);
	cli_put_f(t, r->usd_per_mtok, 4);
	cli_put_str(t, o->work.arrivals == KV_ARRIVE_BURST  ? "burst"
		       : o->work.arrivals == KV_ARRIVE_RATE ? "rate"
							    : "steady");
	cli_put_str(t, s->source);
}

/* The cells of a solved row, in fit_cols' order. */
static void put_row(struct cli_table *t, const char *gpu_name,
		    const struct kv_plan_opts *o, const struct kv_plan_row *r)
{
	const struct kv_fit_in *in = &r->in;
	const struct kv_fit *f = &r->f;
	cli_put_str(t, in->m->name);
	cli_put_str(t, gpu_name);
	cli_put_u64(t, (uint64_t)in->tp * in->pp);
	cli_put_u64(t, in->tp);
	cli_put_u64(t, in->pp);
	char rules[64];
	cli_put_str(t, in->server->name);
	cli_put_str(t, kv_server_rules(in->server, rules, sizeof rules));
	cli_put_u64(t, f->block);
	char kv[40];
	cli_put_str(t, kv_dtype_kv_name(in->kv_dtype, kv_fit_v_dtype(in), kv,
					sizeof kv));
	cli_put_u64(t, in->ctx);
	cli_put_bytes(t, f->weights);
	cli_put_str(t, r->wsrc);
	cli_put_bytes(t, f->runtime);
	cli_put_bytes(t, f->rt.activation);
	cli_put_bytes(t, f->rt.sampler);
	cli_put_bytes(t, f->rt.graphs);
	cli_put_bytes(t, f->rt.nontorch);
	cli_put_bytes(t, f->free_kv);
	cli_put_bytes(t, f->bytes_per_token);
	cli_put_bytes(t, f->dup_per_token);
	cli_put_u64(t, f->kv_tokens);
	put_some(t, f->num_blocks);
	cli_put_f(t, kv_fit_users_shown(f->max_concurrency), 2);
	put_some(t, f->max_seqs);
	put_some(t, f->batched_tokens);
	cli_put_f(t, kv_fit_users_shown(f->users), 2);
	cli_put_u64(t, f->users_whole);
	cli_put_bytes(t, f->kv_bytes);
	cli_put_bytes(t, f->dup_bytes);
	cli_put_u64(t, f->step_users);
	cli_put_str(t, kv_fit_step_fits(f) ? "yes" : "no");
	cli_put_bytes(t, f->step_weight_bytes);
	cli_put_bytes(t, f->step_kv_bytes);
	cli_put_f(t, f->kv_weight_ratio, 2);
	cli_put_f(t, f->kv_share, 2);
	cli_put_f(t, f->step_ms, 3);
	cli_put_f(t, f->tokens_per_s, 1);
	cli_put_f(t, f->compute_ms, 3);
	cli_put_str(t, kv_plan_bound(f));
	if (o->work.isl)
		put_time(t, o, r);
	cli_row_end(t);
}

/* With --users and a latency target: the most users of a row that met
 * it, and the first row's times where none did. */
static struct {
	uint64_t best;
	bool any;
	struct kv_serve first;
	const char *model;
} listed;

/* What a row that misses a latency target says: the closest point. */
static void missed(const struct args *a, const struct kv_plan_row *r,
		   bool *below)
{
	const struct kv_plan_opts *o = &a->o;
	const struct kv_fit_in *in = &r->in;
	if (!target(o))
		return;
	if (in->users && o->users) { /* a --users row: said at the end */
		if (r->timed && !listed.any) {
			listed.first = r->s;
			listed.model = in->m->name;
		}
		listed.any |= r->timed;
		uint64_t served = kv_plan_served(o, r);
		if (served > listed.best)
			listed.best = served;
		return;
	}
	if (r->meets)
		return;
	*below = true;
	if (!r->timed) {
		cli_error("%s: no user fits at %llu tokens, so none meets "
			  "the latency target",
			  in->m->name, (unsigned long long)in->ctx);
		return;
	}
	cli_error("%s: no concurrency meets %s%s%s: one user has a time to "
		  "first token of %.1f ms and %.2f ms per output token",
		  in->m->name, o->max_ttft > 0 ? "--max-ttft" : "",
		  o->max_ttft > 0 && o->max_tpot > 0 ? " and " : "",
		  o->max_tpot > 0 ? "--max-tpot" : "", r->s.ttft_ms,
		  r->s.tpot_ms);
}

/* The targets given, as "--max-ttft 500 and --max-tpot 15". */
static const char *targets(const struct kv_plan_opts *o, char *buf, size_t n)
{
	int k = 0;
	buf[0] = '\0';
	if (o->max_ttft > 0)
		k = snprintf(buf, n, "--max-ttft %g", o->max_ttft);
	if (o->max_tpot > 0 && k >= 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, "%s--max-tpot %g",
			 k ? " and " : "", o->max_tpot);
	return buf;
}

/* --min-users on one row: the users it serves within every target given
 * (those that fit, without one). A --users list with a target is held
 * to the best of its rows, at the end. */
static void gate(const struct args *a, const struct kv_plan_row *r,
		 const char *gpu_name, bool *below)
{
	const struct kv_fit_in *in = &r->in;
	uint64_t served = kv_plan_served(&a->o, r), g = in->tp * in->pp;
	char tg[96], of[64] = "";
	if (!a->min_users || served >= a->min_users ||
	    (target(&a->o) && a->o.users))
		return;
	if (target(&a->o))
		snprintf(of, sizeof of, ", of the %llu that fit",
			 (unsigned long long)r->f.users_whole);
	cli_error("%s: %llu user%s %s%s at %llu tokens (%s, %llu GPU%s, %s)%s"
		  ", below --min-users %llu",
		  in->m->name, (unsigned long long)served,
		  served == 1 ? "" : "s",
		  !target(&a->o) ? (served == 1 ? "fits" : "fit")
		  : served == 1  ? "meets "
				 : "meet ",
		  target(&a->o) ? targets(&a->o, tg, sizeof tg) : "",
		  (unsigned long long)in->ctx, gpu_name,
		  (unsigned long long)g, g > 1 ? "s" : "",
		  in->server->name, of,
		  (unsigned long long)a->min_users);
	*below = true;
}

/* One row: solve as asked (dry: check the input only), print, check
 * --min-users. */
static int row(struct cli_table *t, const struct args *a,
	       const char *gpu_name, struct kv_plan_row *r, bool dry,
	       bool *below)
{
	char err[KV_ERRLEN];
	const struct kv_fit_in *in = &r->in;
	const struct kv_fit *f = &r->f;
	int e = dry ? kv_plan_check(&a->o, r, err)
		    : kv_plan_solve(a->o.solve, r, err);
	if (r->held)
		cli_warn("%s: memory holds %llu tokens for %llu users; the "
			 "config's %llu positions are the longest context",
			 in->m->name, (unsigned long long)r->held,
			 (unsigned long long)in->users,
			 (unsigned long long)in->m->max_pos);
	if (e) {
		cli_error("%s", err);
		return CLI_USAGE;
	}
	if (dry)
		return 0;
	if (r->none && a->o.solve == KV_PLAN_CTX)
		no_context(in, f);
	else if (r->none)
		cli_error("%s: no tensor-parallel degree up to %u fits %llu "
			  "user%s at %llu tokens",
			  in->m->name, kv_plan_max_tp(in->m),
			  (unsigned long long)in->users,
			  in->users == 1 ? "" : "s",
			  (unsigned long long)in->ctx);
	if (r->none) {
		*below = true;
		return 0;
	}
	if ((e = kv_plan_time(&a->o, r, err)))
		return cli_kv_error(e, err);
	if (r->unserved) { /* the rate is more than the engine serves */
		cli_error("%s", err);
		*below = true;
		return 0;
	}
	put_row(t, gpu_name, &a->o, r);
	missed(a, r, below);
	if (a->human && isatty(fileno(stderr)))
		bar(in, f);
	refusal(in, f);
	bool queued = a->o.work.isl && a->o.work.arrivals == KV_ARRIVE_BURST;
	if (in->users && f->users_whole < in->users &&
	    a->o.solve == KV_PLAN_USERS)
		cli_warn("%s: --users %llu: only %llu fit at %llu tokens; %s",
			 in->m->name, (unsigned long long)in->users,
			 (unsigned long long)f->users_whole,
			 (unsigned long long)in->ctx,
			 queued ? "the engine runs those, the others wait in "
				  "its queue"
				: "the step is sized for them all anyway");
	gate(a, r, gpu_name, below);
	return 0;
}

/* Every row of every plan: model x KV format x block size x context x
 * users x engine. */
static int each(struct cli_table *t, const struct args *a,
		const struct kv_plan *pl, size_t np, const char *gpu_name,
		bool dry, bool *below)
{
	int status = 0;
	for (size_t i = 0; i < np && !status; i++) {
		const struct kv_model *m = pl[i].m;
		struct kv_plan_iter it;
		struct kv_plan_row r;
		kv_plan_begin(&it, &a->o, &pl[i]);
		/* kvsize's rows: kvsize said it of them */
		if (!dry && a->o.solve != KV_PLAN_CTX &&
		    pl[i].dtype == KV_PLAN_OPTIONS)
			cli_warn_beyond(m->name, it.ctx, it.nctx, m->max_pos);
		/* a reader that went away (| head) ends the rows: each row
		 * is flushed, so its write error shows at once */
		while (!status && !ferror(stdout) && kv_plan_next(&it, &r))
			status = row(t, a, gpu_name, &r, dry, below);
		for (int e = 0; !dry && !status && e < KV_SERVER_KINDS; e++)
			if (it.left_out[e][0])
				cli_warn("%s: --engine all: %s; its rows are "
					 "left out",
					 m->name, it.left_out[e]);
	}
	return status;
}

int main(int argc, char **argv)
{
	struct args a;
	struct kv_plan *pl = NULL;
	size_t np = 0;
	struct kv_gpus *gpus = NULL;
	bool done = false, below = false;
	struct cli_table t;
	char gpu_name[64];
	int status;

	cli_init("kvfit");
	status = parse(argc, argv, &a, &done);
	if (status || done)
		goto out;
	if (a.list_gpus) {
		status = kvfit_list_gpus(&a);
		goto out;
	}
	if ((status = kvfit_gpu_of(&a, &gpus, gpu_name,
				   sizeof gpu_name)) ||
	    (status = kvfit_load(argc, argv, &a, &pl, &np)))
		goto out;
	if (a.ncalib) {
		status = kvfit_calibrate(&a, pl, gpus, gpu_name);
	} else if (a.params) {
		cli_table_begin(&t, param_cols, CLI_NCOLS(param_cols), a.json,
				a.header, a.human);
		for (size_t i = 0; i < np && !status; i++)
			status = params_row(&t, &a, &pl[i]);
		cli_table_end(&t);
	} else if (!(status = each(NULL, &a, pl, np, gpu_name, true,
				   &below))) {
		/* the first pass checked every row: bad input failed before
		 * any was printed */
		bool timed = a.o.work.isl;
		cli_table_begin(&t, fit_cols,
				timed ? CLI_NCOLS(fit_cols) : FIT_NCOLS,
				a.json, a.header, a.human);
		if (timed)
			cli_table_brief(&t, brief_time_cols,
					CLI_NCOLS(brief_time_cols));
		else
			cli_table_brief(&t, brief_cols, CLI_NCOLS(brief_cols));
		status = each(&t, &a, pl, np, gpu_name, false, &below);
		cli_table_end(&t);
	}
	if (!status && listed.any && !listed.best) {
		cli_error("%s: no --users meets the latency target: the first "
			  "has a time to first token of %.1f ms and %.2f ms per "
			  "output token",
			  listed.model, listed.first.ttft_ms,
			  listed.first.tpot_ms);
		below = true;
	} else if (!status && listed.best) {
		fprintf(stderr, "%s: %llu user%s the most of --users that "
			"meets the latency target\n",
			cli_prog(), (unsigned long long)listed.best,
			listed.best == 1 ? " is" : "s is");
	}
	if (!status && listed.any && a.min_users && listed.best < a.min_users) {
		char tg[96];
		cli_error("%s: %llu user%s %s %s among --users, below "
			  "--min-users %llu",
			  listed.model, (unsigned long long)listed.best,
			  listed.best == 1 ? "" : "s",
			  listed.best == 1 ? "meets" : "meet",
			  targets(&a.o, tg, sizeof tg),
			  (unsigned long long)a.min_users);
		below = true;
	}
	if (!status && below)
		status = CLI_FAIL;
out:
	for (size_t i = 0; i < np; i++)
		kv_model_free(pl[i].m);
	free(pl);
	kv_gpus_free(gpus);
	kv_effs_free(a.effs);
	free(a.o.ctx);
	free(a.o.dtypes);
	free(a.kv.k);
	free(a.kv.v);
	free(a.o.users);
	free(a.o.blocks);
	free(a.o.windows);
	return cli_finish(status);
}
