/*
 * kvbench - benchmark sweeps of the decode engine against the machine's own
 * limits, as TSV for pipes, plotting scripts and CI. Parses options,
 * expands the sweep, asks libkv to build engines and time each point, and
 * prints a row as each point finishes. The cache's layout (contiguous,
 * attended in blocks, paged) is a sweep axis, so paging's cost per step
 * is measured beside the contiguous step.
 */
#include <ctype.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kvbench.h"
#include "kv/bench.h"
#include "kv/engine.h"
#include "kv/quality.h"
#include "kv/safetensors.h"
#include "kv/sweep.h"
#include "kv/units.h"

static const char usage_head[] =
	"Usage: kvbench [OPTIONS] [CONFIG...]\n"
	"Benchmarks the decode engine (random weights; default the articles'\n"
	"GPT-2 small shape) against this machine's measured memory bandwidth\n"
	"and sgemm rate; quality compares cache formats on a checkpoint's own\n"
	"weights where one is beside the config. One TSV row per point, as it\n"
	"finishes.\n"
	"\n";
/* between the two, the options of options.c's table */
static const char usage_foot[] =
	"\n"
	"Exit status: 0 success, 1 a regression past --max-regress (or a\n"
	"runtime failure), 2 bad usage or input, 130 interrupted. See\n"
	"kvbench(1).\n";

static const char *const cols[] = {
	"bench", "model", "ctx", "users", "kv_heads", "kv_dtype", "threads",
	"reps", "bytes", "flops", "ms_median", "ms_min", "ms_max", "gbps",
	"gflops", "roofline_ms", "efficiency", "kv_bytes", "kv_share",
	"kv_time_share", "ref_gbps", "ref_gflops", "layout", "block_size",
	"new_tokens", "top1_agree", "max_abs_logit_diff",
	"mean_abs_logit_diff", "mean_kl", "weights_dtype", "baseline_ms",
	"ratio"};
/* the last two only with --baseline */
#define NCOLS_BASELINE CLI_NCOLS(cols)
#define NCOLS_PLAIN (NCOLS_BASELINE - 2)

static volatile int stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* --- parsing --- */

static int bench_item(const char *tok, void *ctx)
{
	struct kv_sweep *w = ctx;
	enum kv_bench b;
	if (kv_bench_parse(tok, &b))
		return cli_usage("--bench: unknown benchmark '%s'; valid: "
				 "decode, nocache, attn, batch, membw, sgemm, "
				 "quality",
				 tok);
	w->bench[b] = w->any_bench = true;
	return 0;
}

static int layout_item(const char *tok, void *ctx)
{
	struct kv_sweep *w = ctx;
	enum kv_sweep_layout l;
	if (kv_sweep_layout_parse(tok, &l))
		return cli_usage("--layout: unknown layout '%s'; valid: "
				 "contiguous, blocked, paged",
				 tok);
	w->layout[l] = w->any_layout = true;
	return 0;
}

/* --mla: latent ranks or "off" (0). */
static int mla_item(const char *tok, void *ctx)
{
	struct kv_sweep *w = ctx;
	uint64_t v = 0;
	int status = 0;
	if (strcmp(tok, "off") != 0)
		status = cli_u64("--mla", tok, 1, 1 << 20, &v);
	w->mla[w->nmla++] = v;
	return status;
}

static int parse_mla(const char *s, struct kv_sweep *w)
{
	free(w->mla);
	w->nmla = 0;
	w->mla = calloc(strlen(s) / 2 + 1, sizeof *w->mla);
	if (!w->mla) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	return cli_each("--mla", s, mla_item, w, false);
}

/* --weights-dtype: the types the engine keeps weights in. */
static int parse_wdtypes(const char *s, struct kv_sweep *w)
{
	free(w->wdtypes);
	w->wdtypes = NULL;
	int e = cli_dtypes("--weights-dtype", s, &w->wdtypes, &w->nwdtypes);
	for (size_t i = 0; !e && i < w->nwdtypes; i++)
		if (w->wdtypes[i] < 0 ||
		    !kv_engine_weights_type((enum kv_dtype)w->wdtypes[i]))
			e = cli_usage("--weights-dtype: f32, bf16 or f16, got "
				      "'%s'",
				      s);
	return e;
}

/* --kv-dtype's formats: auto is the engine's f32; each one the engine
 * stores. */
static int stored_only(struct kv_sweep *w)
{
	int e = 0;
	for (size_t i = 0; i < w->ndtypes && !e; i++) {
		if (w->dtypes[i] < 0) /* auto: the engine's */
			w->dtypes[i] = KV_DTYPE_F32;
		e = cli_stored("--kv-dtype", (enum kv_dtype)w->dtypes[i]);
	}
	return e;
}

/* The options that choose a sweep's points, which a profile chooses
 * itself: the name of c's, or NULL. */
static const char *sweep_option(int c)
{
	switch (c) {
	case 'B': return "--bench";
	case 'c': return "--ctx";
	case 'u': return "--users";
	case 't': return "--kv-dtype";
	case OPT_CTK: return "--cache-type-k";
	case OPT_CTV: return "--cache-type-v";
	case OPT_KV_HEADS: return "--kv-heads";
	case OPT_MLA: return "--mla";
	case OPT_MLA_ROPE: return "--mla-rope";
	case OPT_LAYOUT: return "--layout";
	case 'b': return "--block-size";
	case 'n': return "--new";
	case OPT_LOGIT_SCALE: return "--logit-scale";
	case OPT_BASELINE: return "--baseline";
	case OPT_MAX_REGRESS: return "--max-regress";
	default: return NULL;
	}
}

static int parse(int argc, char **argv, struct args *a, bool *done)
{
	struct kv_sweep *w = &a->sw;
	int c, e = 0;
	*a = (struct args){.sw = {.reps = 5, .warmup = 1,
				  .warmup_ns = KV_BENCH_WARMUP_NS,
				  .membw = 512ULL << 20, .sgemm_n = 1024,
				  .gen = 32, .logit_scale = 1},
			   .max_regress = -1, .header = true};
	while (!e && (c = cli_getopt(argc, argv)) != -1) {
		const char *name = sweep_option(c);
		if (name)
			a->not_profile = name;
		switch (c) {
		case 'B':
			e = cli_each("--bench", optarg, bench_item, w,
				     w->any_bench);
			break;
		case 'c':
			e = cli_list(cli_opt_as(), optarg, UINT64_MAX, &w->ctx,
				     &w->nctx);
			break;
		case 'j':
			e = cli_list("--threads", optarg, 256, &w->threads,
				     &w->nthreads);
			break;
		case 'R':
			e = cli_u64("--reps", optarg, 1, 100000, &w->reps);
			break;
		case 's':
			e = cli_u64("--seed", optarg, 0, UINT64_MAX, &w->seed);
			break;
		case 't':
			free(w->dtypes);
			w->dtypes = NULL;
			if (!(e = cli_dtypes(cli_opt_as(), optarg, &w->dtypes,
					     &w->ndtypes)))
				e = stored_only(w);
			break;
		case OPT_CTK:
		case OPT_CTV:
			e = cli_cache_type(c == OPT_CTK, optarg, &a->kv);
			break;
		case 'n':
			if (!(e = cli_tokens("--new", optarg, &w->gen)) &&
			    w->gen > 65536)
				e = cli_usage("--new: at most 65536, got '%s'",
					      optarg);
			break;
		case OPT_WDTYPE:
			e = parse_wdtypes(optarg, w);
			break;
		case OPT_LOGIT_SCALE:
			e = cli_double("--logit-scale", optarg, 1e-6, 1e6,
				       &w->logit_scale);
			break;
		case 'u':
			e = cli_list("--users", optarg, 65536, &w->users,
				     &w->nusers);
			break;
		case OPT_KV_HEADS:
			e = cli_list("--kv-heads", optarg, 65536, &w->kv_heads,
				     &w->nkv_heads);
			break;
		case OPT_MLA: e = parse_mla(optarg, w); break;
		case OPT_MLA_ROPE:
			e = cli_u64("--mla-rope", optarg, 1, 1 << 16,
				    &w->mla_rope);
			break;
		case OPT_LAYERS:
			e = cli_u64("--layers", optarg, 1, 10000, &w->layers);
			break;
		case OPT_VOCAB:
			e = cli_u64("--vocab", optarg, 1, 1ULL << 30,
				    &w->vocab);
			break;
		case OPT_LAYOUT:
			e = cli_each("--layout", optarg, layout_item, w,
				     w->any_layout);
			break;
		case 'b':
			if (!isdigit((unsigned char)*optarg))
				return cli_usage("-b is --block-size, as in "
						 "kvsize and kvfit ('%s'); the "
						 "benches are -B, --bench",
						 optarg);
			e = cli_list("--block-size", optarg, UINT32_MAX,
				     &w->block_size, &w->nblock_size);
			break;
		case OPT_WARMUP:
			e = cli_u64("--warmup", optarg, 0, 100000, &w->warmup);
			w->warmup_ns = 0;
			break;
		case OPT_MEMBW:
			if (!(e = cli_size("--membw-size", optarg,
					   &w->membw)) &&
			    w->membw < (1 << 20))
				e = cli_usage("--membw-size: at least 1MiB, "
					      "got '%s'",
					      optarg);
			break;
		case OPT_SGEMM_N:
			e = cli_u64("--sgemm-n", optarg, 16, 16384,
				    &w->sgemm_n);
			break;
		case OPT_BASELINE: a->baseline = optarg; break;
		case OPT_PROFILE:
			a->profile = optarg;
			if (!*optarg)
				e = cli_usage("--profile: needs a file name, "
					      "got ''");
			break;
		case OPT_RANDOM_WEIGHTS: a->random = true; break;
		case OPT_MAX_REGRESS:
			e = cli_double("--max-regress", optarg, 0, 1e6,
				       &a->max_regress);
			break;
		default:
			e = cli_common(c, optarg, usage_head, usage_foot,
				       &a->json, &a->header, done);
			if (e == CLI_NOT_MINE) /* said by cli_getopt */
				return CLI_USAGE;
			if (*done)
				return e;
		}
	}
	bool ctkv = a->kv.k || a->kv.v;
	if (!e)
		e = cli_kv_join(&a->kv, &w->dtypes, &w->ndtypes);
	for (size_t i = 0; !e && i < w->ndtypes; i++)
		if (w->dtypes[i] >= KV_DTYPE_COUNT)
			e = cli_usage("--cache-type-k and --cache-type-v: "
				      "kvbench keeps K and V in one format "
				      "(kvdecode --k-dtype and --v-dtype run "
				      "them apart)");
	if (!e && ctkv)
		e = stored_only(w);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	for (size_t i = 0; !e && cores > 0 && i < w->nthreads; i++)
		if (w->threads[i] > (uint64_t)cores) {
			cli_warn("--threads %llu: this machine has %ld core%s "
				 "online, so threads share them",
				 (unsigned long long)w->threads[i], cores,
				 cores == 1 ? "" : "s");
			break;
		}
	if (!e && a->max_regress >= 0 && !a->baseline)
		return cli_usage("--max-regress needs --baseline");
	if (!e && a->profile && a->not_profile)
		return cli_usage("--profile runs its own points (membw, sgemm, "
				 "a decode step and a prefill per --threads); "
				 "it takes no %s",
				 a->not_profile);
	if (!e && a->profile && w->nwdtypes > 1)
		return cli_usage("--profile: one --weights-dtype, got %zu",
				 w->nwdtypes);
	return e;
}

/* Measures point p; on a failure says why (unless interrupted). */
static int measure(const struct args *a, struct kv_model **models,
		   struct kv_sweep_refs *refs, const struct kv_sweep_point *p,
		   struct kv_sweep_out *out)
{
	char err[KV_ERRLEN];
	if (!kv_sweep_run(&a->sw, models, refs, p, &stop, out, err))
		return 0;
	if (*err)
		cli_error("%s", err);
	return CLI_FAIL;
}

/* A point of a baseline run: its ratio to the saved time, measured once
 * more before a ratio past --max-regress is called a regression. */
static int gate(const struct args *a, struct kv_model **models,
		struct kv_sweep_refs *refs, const struct kv_sweep_point *p,
		struct kv_sweep_out *o, double *ratio, int *regressions)
{
	struct kv_sweep_out again;
	int status = 0;
	*ratio = o->r.ms.median > 0 ? o->r.ms.median / p->baseline_ms : 0;
	if (a->max_regress < 0 || *ratio <= 1 + a->max_regress)
		return 0;
	status = measure(a, models, refs, p, &again);
	if (!status && again.r.ms.median < o->r.ms.median) {
		*o = again;
		*ratio = o->r.ms.median / p->baseline_ms;
	}
	if (!status && *ratio > 1 + a->max_regress) {
		(*regressions)++;
		if (isatty(STDERR_FILENO))
			fputc('\n', stderr);
		cli_error("%s %s ctx %llu users %llu: %.3f ms, %.2fx the "
			  "baseline's %.3f ms",
			  kv_bench_name(p->bench), o->model,
			  (unsigned long long)p->ctx,
			  (unsigned long long)p->users, o->r.ms.median, *ratio,
			  p->baseline_ms);
	}
	return status;
}

int main(int argc, char **argv)
{
	struct args a;
	struct kv_model **models = NULL;
	size_t nmodels = 0;
	struct kv_sweep_points s = {0};
	struct kv_sweep_refs *refs = NULL;
	struct kv_sweep_out *outs = NULL; /* --profile: each point's */
	struct kv_gpu local;
	char err[KV_ERRLEN];
	bool done = false;
	int status, regressions = 0;
	size_t ran = 0;

	cli_init("kvbench");
	status = parse(argc, argv, &a, &done);
	if (status || done)
		goto out;
	/* a profile's file and this machine, before anything runs */
	if (a.profile && (status = kvbench_profile_begin(a.profile, &local)))
		goto out;
	if (a.baseline && optind < argc)
		status = cli_usage("--baseline runs the points of its file; "
				   "give no config");
	else if (a.baseline)
		status = kvbench_baseline(&a, a.baseline, &models, &nmodels,
					  &s);
	else
		status = kvbench_load(argc, argv, &models, &nmodels, &s, &a);
	if (!status) /* see kvbench(1), MEMORY */
		status = cli_kv_error(kv_sweep_fits(&a.sw, models, &s, err),
				      err);
	if (status)
		goto out;
	if (kv_sweep_refs_new(&refs) ||
	    (a.profile && !(outs = calloc(s.n, sizeof *outs)))) {
		status = CLI_FAIL;
		goto out;
	}

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	bool tty = isatty(STDERR_FILENO);
	uint64_t t0 = kv_now_ns();
	struct cli_table t;
	cli_table_begin(&t, cols, a.baseline ? NCOLS_BASELINE : NCOLS_PLAIN,
			a.json, a.header, false);
	/* on a terminal, the point's columns; the weights' type where
	 * --weights-dtype names one, or rows would differ in times alone */
	const char *brief[] = {
		"bench", "model", "ctx", "users", "kv_heads", "kv_dtype",
		"threads", "ms_median", "gbps", "gflops", "efficiency",
		"kv_share", "layout", "top1_agree", "ratio", "weights_dtype"};
	cli_table_brief(&t, brief,
			CLI_NCOLS(brief) - (a.sw.nwdtypes ? 0 : 1));
	for (size_t i = 0; i < s.n && !stop && !status; i++) {
		const struct kv_sweep_point *p = &s.p[i];
		struct kv_sweep_out o;
		double ratio = 0;
		if (tty)
			kvbench_progress(p, models, i, s.n, t0);
		status = measure(&a, models, refs, p, &o);
		if (!status && p->baseline_ms > 0)
			status = gate(&a, models, refs, p, &o, &ratio,
				      &regressions);
		if (tty) /* the line goes before a row can follow it */
			fputs("\r\033[K", stderr);
		if (!status)
			kvbench_row(&t, p, &o, ratio, a.baseline != NULL);
		if (!status && outs)
			outs[i] = o;
		ran += !status;
		if (stop || ferror(stdout))
			break;
	}
	if (tty)
		fputs("\r\033[K", stderr);
	cli_table_end(&t);
	if (stop) {
		cli_error("interrupted; the rows printed are complete");
		status = 130;
	} else if (!status && regressions) {
		status = CLI_FAIL;
	} else if (!status && a.profile && ran == s.n) {
		status = kvbench_profile_end(a.profile, &a.sw, models, &s, outs,
					     &local);
	}
out:
	free(outs);
	kv_sweep_refs_free(refs);
	for (size_t i = 0; i < nmodels; i++) {
		kv_model_free(models[i]);
		kv_st_close(a.ck ? a.ck[i] : NULL);
	}
	free(models);
	free(s.p);
	free(a.wt);
	free(a.ck);
	kv_sweep_free(&a.sw);
	free(a.kv.k);
	free(a.kv.v);
	return cli_finish(status);
}
