/*
 * kvbench - benchmark sweeps of the decode engine against the machine's own
 * limits, as TSV for pipes, plotting scripts and CI. Parses options,
 * expands the sweep, asks libkv to build engines and time each point, and
 * prints a row as each point finishes. The cache's layout (contiguous,
 * attended in blocks, paged) is a sweep axis, so paging's cost per step
 * is measured beside the contiguous step.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kv/bench.h"
#include "kv/engine.h"
#include "kv/quality.h"
#include "kv/units.h"

static const char usage_head[] =
	"Usage: kvbench [OPTIONS] [CONFIG...]\n"
	"Benchmarks the decode engine (random float32 weights; default the\n"
	"articles' GPT-2 small shape) against this machine's measured memory\n"
	"bandwidth and sgemm rate. One TSV row per point, as it finishes.\n"
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
	"mean_abs_logit_diff", "mean_kl", "baseline_ms", "ratio"};
/* the last two only with --baseline */
#define NCOLS_BASELINE CLI_NCOLS(cols)
#define NCOLS_PLAIN (NCOLS_BASELINE - 2)

/* The cache's layouts: one run attended whole, one run attended in
 * blocks, blocks from a pool through block tables. */
enum layout { L_CONTIGUOUS, L_BLOCKED, L_PAGED, L_COUNT };
static const char *const layout_names[L_COUNT] = {"contiguous", "blocked",
						  "paged"};

/* One point of the sweep. */
struct point {
	enum kv_bench bench;
	size_t model;      /* index into the models */
	uint64_t ctx;      /* 0 for membw and sgemm */
	uint64_t users;
	uint64_t kv_heads; /* 0: the model's */
	uint64_t mla;      /* latent rank, 0: the model's own attention */
	uint64_t threads;
	double baseline_ms; /* 0: none */
	enum layout layout;
	uint64_t block_size; /* 0 with contiguous */
	enum kv_dtype dtype; /* of K and V */
};

struct args {
	bool bench[KV_BENCH_COUNT], any_bench;
	uint64_t *ctx, *kv_heads, *users, *threads, *block_size, *mla;
	size_t nctx, nkv_heads, nusers, nthreads, nblock_size, nmla;
	bool layout[L_COUNT], any_layout;
	int *dtypes; /* formats of the cached benches */
	const char *ctkv; /* --cache-type-k or -v, as given */
	size_t ndtypes;
	uint64_t layers, vocab, reps, warmup, membw, sgemm_n, seed, mla_rope;
	uint64_t warmup_ns; /* warm-up time, 0 where --warmup gives reps */
	uint64_t gen;
	double logit_scale;
	double max_regress; /* < 0: no gate */
	const char *baseline;
	bool json, header;
};

static volatile int stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* --- parsing --- */

/* Calls item() on each comma-separated item of s, up to the first that
 * fails; a list without items is a usage error of opt, unless *any says
 * an earlier use of opt gave some (any may be NULL). */
static int each_item(const char *opt, const char *s, struct args *a,
		     int (*item)(const char *tok, struct args *a),
		     const bool *any)
{
	char *copy = strdup(s), *save = NULL;
	int status = 0, n = 0;
	if (!copy) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	for (char *tok = strtok_r(copy, ",", &save); tok && !status;
	     tok = strtok_r(NULL, ",", &save), n++)
		status = item(tok, a);
	if (!status && !n && !(any && *any))
		status = cli_usage("%s: empty list", opt);
	free(copy);
	return status;
}

static int bench_item(const char *tok, struct args *a)
{
	enum kv_bench b;
	if (kv_bench_parse(tok, &b))
		return cli_usage("--bench: unknown benchmark '%s'; valid: "
				 "decode, nocache, attn, batch, membw, sgemm, "
				 "quality",
				 tok);
	a->bench[b] = a->any_bench = true;
	return 0;
}

static int layout_item(const char *tok, struct args *a)
{
	int l = 0;
	while (l < L_COUNT && strcmp(tok, layout_names[l]))
		l++;
	if (l == L_COUNT)
		return cli_usage("--layout: unknown layout '%s'; valid: "
				 "contiguous, blocked, paged",
				 tok);
	a->layout[l] = a->any_layout = true;
	return 0;
}

/* --mla: latent ranks or "off" (0). */
static int mla_item(const char *tok, struct args *a)
{
	uint64_t v = 0;
	int status = 0;
	if (strcmp(tok, "off") != 0)
		status = cli_u64("--mla", tok, 1, 1 << 20, &v);
	a->mla[a->nmla++] = v;
	return status;
}

static int parse_mla(const char *s, struct args *a)
{
	free(a->mla);
	a->nmla = 0;
	a->mla = calloc(strlen(s) / 2 + 1, sizeof *a->mla);
	if (!a->mla) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	return each_item("--mla", s, a, mla_item, NULL);
}

/* A list of whole numbers >= 1 ("1,2,4", "1:8:x2"). */
/* A sweep list of opt whose every value is at most max. */
static int parse_list(const char *opt, const char *s, uint64_t **v, size_t *n,
		      uint64_t max)
{
	free(*v);
	*v = NULL;
	int e = cli_sweep(opt, s, v, n);
	for (size_t i = 0; !e && i < *n; i++)
		if ((*v)[i] > max)
			return cli_usage("%s: at most %llu, got '%s'", opt,
					 (unsigned long long)max, s);
	return e;
}

/* --kv-dtype's formats: auto is the engine's f32; each one the engine
 * stores (some are only sized). */
static int stored_only(struct args *a)
{
	char list[128];
	for (size_t i = 0; i < a->ndtypes; i++) {
		if (a->dtypes[i] < 0) /* auto: the engine's */
			a->dtypes[i] = KV_DTYPE_F32;
		enum kv_dtype t = (enum kv_dtype)a->dtypes[i];
		if (!kv_dtype_stored(t))
			return cli_usage("--kv-dtype: %s: the engine sizes "
					 "this format but does not store it; "
					 "it stores %s",
					 kv_dtype_name(t),
					 kv_dtype_stored_list(list,
							      sizeof list));
	}
	return 0;
}

static int parse(int argc, char **argv, struct args *a, bool *done)
{
	int c, e;
	*a = (struct args){.reps = 5, .warmup = 1,
			   .warmup_ns = KV_BENCH_WARMUP_NS,
			   .membw = 512ULL << 20, .sgemm_n = 1024,
			   .max_regress = -1, .header = true, .gen = 32,
			   .logit_scale = 1};
	while ((c = cli_getopt(argc, argv)) != -1) {
		switch (c) {
		case 'B':
			if ((e = each_item("--bench", optarg, a, bench_item,
					    &a->any_bench)))
				return e;
			break;
		case 'c':
			if ((e = parse_list("--ctx", optarg, &a->ctx, &a->nctx,
					    UINT64_MAX)))
				return e;
			break;
		case 'h':
			cli_help(stdout, usage_head, usage_foot);
			*done = true;
			return 0;
		case 'j':
			if ((e = parse_list("--threads", optarg, &a->threads,
					    &a->nthreads, 256)))
				return e;
			break;
		case 'R':
			if ((e = cli_u64("--reps", optarg, 1, 100000, &a->reps)))
				return e;
			break;
		case 's':
			if ((e = cli_u64("--seed", optarg, 0, UINT64_MAX,
					 &a->seed)))
				return e;
			break;
		case 't':
			free(a->dtypes);
			a->dtypes = NULL;
			if ((e = cli_dtypes("--kv-dtype", optarg, &a->dtypes,
					    &a->ndtypes)) ||
			    (e = stored_only(a)))
				return e;
			break;
		case OPT_CTK:
		case OPT_CTV:
			if ((e = cli_cache_type(c == OPT_CTK, optarg, &a->ctkv,
						&a->dtypes, &a->ndtypes)) ||
			    (e = stored_only(a)))
				return e;
			break;
		case 'n':
			if ((e = cli_tokens("--new", optarg, &a->gen)))
				return e;
			if (a->gen > 65536)
				return cli_usage("--new: at most 65536, got "
						 "'%s'",
						 optarg);
			break;
		case OPT_LOGIT_SCALE:
			if ((e = cli_double("--logit-scale", optarg, 1e-6, 1e6,
					    &a->logit_scale)))
				return e;
			break;
		case 'u':
			if ((e = parse_list("--users", optarg, &a->users,
					    &a->nusers, 65536)))
				return e;
			break;
		case OPT_KV_HEADS:
			if ((e = parse_list("--kv-heads", optarg, &a->kv_heads,
					    &a->nkv_heads, 65536)))
				return e;
			break;
		case OPT_MLA:
			if ((e = parse_mla(optarg, a)))
				return e;
			break;
		case OPT_MLA_ROPE:
			if ((e = cli_u64("--mla-rope", optarg, 1, 1 << 16,
					 &a->mla_rope)))
				return e;
			break;
		case OPT_LAYERS:
			if ((e = cli_u64("--layers", optarg, 1, 10000,
					 &a->layers)))
				return e;
			break;
		case OPT_VOCAB:
			if ((e = cli_u64("--vocab", optarg, 1, 1ULL << 30,
					 &a->vocab)))
				return e;
			break;
		case OPT_LAYOUT:
			if ((e = each_item("--layout", optarg, a,
					    layout_item, &a->any_layout)))
				return e;
			break;
		case 'b':
			if (!isdigit((unsigned char)*optarg))
				return cli_usage("-b is --block-size, as in "
						 "kvsize and kvfit ('%s'); the "
						 "benches are -B, --bench",
						 optarg);
			if ((e = parse_list("--block-size", optarg,
					    &a->block_size, &a->nblock_size,
					    UINT32_MAX)))
				return e;
			break;
		case OPT_WARMUP:
			if ((e = cli_u64("--warmup", optarg, 0, 100000,
					 &a->warmup)))
				return e;
			a->warmup_ns = 0;
			break;
		case OPT_MEMBW:
			if ((e = cli_size("--membw-size", optarg, &a->membw)))
				return e;
			if (a->membw < (1 << 20))
				return cli_usage("--membw-size: at least 1MiB, "
						 "got '%s'",
						 optarg);
			break;
		case OPT_SGEMM_N:
			if ((e = cli_u64("--sgemm-n", optarg, 16, 16384,
					 &a->sgemm_n)))
				return e;
			break;
		case OPT_BASELINE: a->baseline = optarg; break;
		case OPT_MAX_REGRESS:
			if ((e = cli_double("--max-regress", optarg, 0, 1e6,
					    &a->max_regress)))
				return e;
			break;
		case OPT_JSON: a->json = true; break;
		case 'o':
			if ((e = cli_output(optarg, &a->json)))
				return e;
			break;
		case 'v': cli_verbose(); break;
		case OPT_NO_HEADER: a->header = false; break;
		case OPT_VERSION:
			printf("kvbench %s\n", KV_VERSION);
			*done = true;
			return 0;
		default: /* said by cli_getopt */
			return CLI_USAGE;
		}
	}
	if (a->max_regress >= 0 && !a->baseline)
		return cli_usage("--max-regress needs --baseline");
	return 0;
}

/* --- the sweep --- */

struct sweep {
	struct point *p;
	size_t n, cap;
};

static int add(struct sweep *s, struct point p)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 64;
		struct point *q = realloc(s->p, nc * sizeof *q);
		if (!q)
			return CLI_FAIL;
		s->p = q;
		s->cap = nc;
	}
	s->p[s->n++] = p;
	return 0;
}

/* Adds point p once per layout and block size asked for (nocache, which
 * keeps no cache, once). */
static int add_layouts(const struct args *a, struct sweep *s, struct point p)
{
	static const uint64_t bs16 = 16;
	const uint64_t *bs = a->block_size ? a->block_size : &bs16;
	size_t nbs = a->block_size ? a->nblock_size : 1;
	p.layout = L_CONTIGUOUS;
	p.block_size = 0;
	if (p.bench == KV_BENCH_NOCACHE)
		return add(s, p);
	for (int l = 0; l < L_COUNT; l++) {
		if (a->any_layout ? !a->layout[l] : l != L_CONTIGUOUS)
			continue;
		p.layout = (enum layout)l;
		for (size_t i = 0; i < (l == L_CONTIGUOUS ? 1 : nbs); i++) {
			p.block_size = l == L_CONTIGUOUS ? 0 : bs[i];
			if (add(s, p))
				return CLI_FAIL;
		}
	}
	return 0;
}

/* The default contexts of a bench when --ctx is not given. */
static const uint64_t *default_ctx(enum kv_bench b, size_t *n)
{
	static const uint64_t decode[] = {160, 1024, 8192};
	static const uint64_t nocache[] = {160, 512};
	static const uint64_t attn[] = {1024, 8192};
	static const uint64_t batch[] = {1024};
	static const uint64_t quality[] = {128};
	switch (b) {
	case KV_BENCH_QUALITY: *n = 1; return quality;
	case KV_BENCH_DECODE: *n = 3; return decode;
	case KV_BENCH_NOCACHE: *n = 2; return nocache;
	case KV_BENCH_ATTN: *n = 2; return attn;
	default: *n = 1; return batch;
	}
}

static int expand(const struct args *a, struct kv_model **models,
		  size_t nmodels, struct sweep *s)
{
	static const enum kv_bench order[] = {
		KV_BENCH_MEMBW,  KV_BENCH_SGEMM, KV_BENCH_ATTN,
		KV_BENCH_DECODE, KV_BENCH_NOCACHE, KV_BENCH_BATCH,
		KV_BENCH_QUALITY};
	static const int f32[] = {KV_DTYPE_F32};
	static const uint64_t batch_users[] = {1, 2, 4, 8};
	uint64_t ncpu = (uint64_t)sysconf(_SC_NPROCESSORS_ONLN);
	const uint64_t *threads = a->threads ? a->threads : &ncpu;
	size_t nthreads = a->threads ? a->nthreads : 1;
	if (ncpu < 1)
		ncpu = 1;
	for (size_t oi = 0; oi < 7; oi++) {
		enum kv_bench b = order[oi];
		if (a->any_bench ? !a->bench[b] : b == KV_BENCH_QUALITY)
			continue;
		/* nocache keeps no cache: its K/V stay f32 */
		bool fmt = b != KV_BENCH_NOCACHE && a->dtypes;
		const int *dts = fmt ? a->dtypes : f32;
		size_t ndts = fmt ? a->ndtypes : 1;
		for (size_t ti = 0; ti < nthreads; ti++) {
			struct point p = {b, 0, 0, 1, 0, 0, threads[ti], 0,
					  L_CONTIGUOUS, 0, KV_DTYPE_F32};
			if (b == KV_BENCH_MEMBW || b == KV_BENCH_SGEMM) {
				if (add(s, p))
					return CLI_FAIL;
				continue;
			}
			size_t nctx;
			const uint64_t *ctx = a->ctx ? a->ctx
						     : default_ctx(b, &nctx);
			if (a->ctx)
				nctx = a->nctx;
			const uint64_t *users = a->users ? a->users
					  : b == KV_BENCH_BATCH ? batch_users
								: &p.users;
			size_t nusers = a->users ? a->nusers
					: b == KV_BENCH_BATCH ? 4
							      : 1;
			static const uint64_t own = 0;
			const uint64_t *mla = a->mla ? a->mla : &own;
			size_t nmla = a->mla ? a->nmla : 1;
			for (size_t mi = 0; mi < nmodels; mi++)
			for (size_t ai = 0; ai < nmla; ai++) {
				uint64_t h = models[mi]->n_kv_heads;
				uint64_t dflt[3] = {h, h / 4, 1};
				size_t ndflt = b == KV_BENCH_ATTN && h >= 4 &&
							       h % 4 == 0
						       ? 3
						       : 1;
				if (ndflt == 3 && h == 4)
					ndflt = 2; /* 4, 1 */
				const uint64_t *kvh =
					a->kv_heads ? a->kv_heads : dflt;
				size_t nkvh = a->kv_heads ? a->nkv_heads
							  : ndflt;
				/* a latent is shared by every head: no K/V
				 * head count to sweep (--kv-heads is for the
				 * plain rows) */
				if (mla[ai] || models[mi]->kv_lora_rank) {
					dflt[0] = 0;
					kvh = dflt;
					nkvh = 1;
				}
				for (size_t k = 0; k < nkvh; k++)
					for (size_t u = 0; u < nusers; u++)
						for (size_t c = 0; c < nctx;
						     c++)
							for (size_t d = 0;
							     d < ndts; d++) {
								p.model = mi;
								p.mla = mla[ai];
								p.kv_heads =
									kvh[k];
								p.users =
									users[u];
								p.ctx = ctx[c];
								p.dtype = (enum kv_dtype)
									dts[d];
								if (add_layouts(
									    a, s,
									    p))
									return CLI_FAIL;
							}
			}
		}
	}
	return 0;
}

/* --- engines and references --- */

static struct kv_engine_opts engine_opts(const struct args *a,
					 const struct point *p, uint64_t ctx)
{
	struct kv_engine_opts o = kv_engine_opts_default();
	o.layers = (uint32_t)a->layers;
	o.vocab = a->vocab;
	o.kv_heads = (uint32_t)p->kv_heads;
	o.mla_rank = (uint32_t)p->mla;
	o.mla_rope = (uint32_t)a->mla_rope;
	o.users = (uint32_t)p->users;
	o.max_ctx = ctx;
	o.max_chunk = p->bench == KV_BENCH_NOCACHE ? ctx : 1;
	o.cache = p->bench != KV_BENCH_NOCACHE;
	o.seed = a->seed;
	o.threads = (uint32_t)p->threads;
	o.block_size = (uint32_t)p->block_size;
	o.paged = p->layout == L_PAGED;
	o.k_dtype = o.v_dtype = p->dtype;
	o.logit_scale = (float)a->logit_scale;
	return o;
}

/* Refuses up front a point whose engine would not fit in the memory a
 * run may take (kv_run_memory; documented in kvbench(1)). */
static int check_memory(const struct args *a, struct kv_model **models,
			const struct sweep *s)
{
	char err[KV_ERRLEN], b1[32], b2[32], b3[32];
	uint64_t avail, usable;
	if (kv_run_memory(&avail, &usable, err))
		return cli_usage("%s", err);
	for (size_t i = 0; i < s->n; i++) {
		const struct point *p = &s->p[i];
		struct kv_engine_size sz;
		if (p->bench == KV_BENCH_MEMBW) {
			if (usable && a->membw > usable)
				return cli_usage(
					"--membw-size %s: more than the %s a "
					"run may take of the %s available",
					kv_format_iec(a->membw, b1, sizeof b1),
					kv_format_iec(usable, b2, sizeof b2),
					kv_format_iec(avail, b3, sizeof b3));
			continue;
		}
		if (p->bench == KV_BENCH_SGEMM)
			continue;
		struct kv_engine_opts o = engine_opts(a, p, p->ctx);
		const struct kv_model *m = models[p->model];
		if (kv_engine_estimate(m, &o, &sz, err) ||
		    (p->bench == KV_BENCH_QUALITY &&
		     kv_quality_estimate(m, &o, p->ctx, a->gen, &sz.total,
					 err))) {
			cli_error("%s", err);
			return CLI_USAGE;
		}
		if (kv_run_fits(m, &o, sz.total, 0, avail, usable, err))
			return cli_usage("%s %s at ctx %llu, %llu users: %s",
					 kv_bench_name(p->bench), m->name,
					 (unsigned long long)p->ctx,
					 (unsigned long long)p->users, err);
	}
	return 0;
}

/* The bandwidth probe of each thread count, kept between points so the
 * reference is measured right beside each bandwidth-bound point. */
struct refs {
	struct kv_membw *probe[257];
	double sgemm[257];
};

static double bandwidth(const struct args *a, struct refs *r, uint64_t t)
{
	if (!r->probe[t] && kv_membw_new(a->membw, (uint32_t)t, &r->probe[t]))
		return 0;
	return kv_membw_best(r->probe[t], 3);
}

static double sgemm_rate(const struct args *a, struct refs *r, uint64_t t)
{
	if (r->sgemm[t] == 0)
		kv_sgemm_measure((uint32_t)a->sgemm_n, (uint32_t)t, 3,
				 &r->sgemm[t]);
	return r->sgemm[t];
}

/* --- measuring --- */

static int run_reference(const struct args *a, struct refs *refs,
			 const struct point *p, struct kv_bench_result *r)
{
	if (p->bench == KV_BENCH_SGEMM)
		return kv_bench_sgemm((uint32_t)a->sgemm_n, (uint32_t)p->threads,
				      (uint32_t)a->reps, &stop, r)
			       ? CLI_FAIL
			       : 0;
	if (!refs->probe[p->threads] &&
	    kv_membw_new(a->membw, (uint32_t)p->threads,
			 &refs->probe[p->threads])) {
		cli_error("out of memory for a %llu-byte bandwidth probe",
			  (unsigned long long)a->membw);
		return CLI_FAIL;
	}
	return kv_bench_membw(refs->probe[p->threads], (uint32_t)a->reps,
			      &stop, r)
		       ? CLI_FAIL
		       : 0;
}

/* Runs a quality point: the comparison of its format with f32, the
 * milliseconds of the compact run's decode steps as the timing. */
static int run_quality(const struct args *a, struct kv_model **models,
		       const struct point *p, struct kv_bench_result *r,
		       struct kv_quality *q, uint64_t *kv_heads)
{
	char err[KV_ERRLEN];
	struct kv_engine_opts o = engine_opts(a, p, p->ctx);
	double ms;
	struct kv_model *eff;
	memset(r, 0, sizeof *r);
	if (kv_engine_model(models[p->model], &o, &eff, err) ||
	    kv_quality_run(models[p->model], &o, p->ctx, a->gen, 0, 0,
			   a->seed, q, NULL, &ms, err)) {
		cli_error("%s", err);
		return CLI_FAIL;
	}
	*kv_heads = eff->n_kv_heads;
	kv_model_free(eff);
	r->reps = (uint32_t)(a->gen - 1);
	if (r->reps)
		r->ms.median = r->ms.min = r->ms.max = ms / r->reps;
	return 0;
}

/* Runs one engine point: builds the engine, times the bench (and for
 * batch the same step at ctx 1), measures the reference beside it. */
static int run_engine(const struct args *a, struct kv_model **models,
		      struct refs *refs, const struct point *p,
		      struct kv_bench_result *r, uint64_t *kv_heads,
		      char *label)
{
	char err[KV_ERRLEN];
	struct kv_engine *e;
	struct kv_engine_opts o = engine_opts(a, p, p->ctx);
	if (kv_engine_new(models[p->model], &o, &e, err)) {
		cli_error("%s", err);
		return CLI_FAIL;
	}
	*kv_heads = kv_engine_get_model(e)->n_kv_heads;
	/* the effective model's name: "+mla256" with --mla */
	snprintf(label, 256, "%s", kv_engine_get_model(e)->name);
	int st = kv_bench_time(e, p->bench, p->ctx, (uint32_t)a->reps,
			       (uint32_t)a->warmup, a->warmup_ns, &stop, r);
	if (!st && p->bench == KV_BENCH_BATCH) {
		struct kv_bench_result w;
		st = kv_bench_time(e, KV_BENCH_DECODE, 1, (uint32_t)a->reps,
				   (uint32_t)a->warmup, a->warmup_ns, &stop,
				   &w);
		r->weights_ms = w.ms.median;
	}
	kv_engine_free(e);
	if (st)
		return stop ? CLI_FAIL : (cli_error("%s at ctx %llu failed",
						    kv_bench_name(p->bench),
						    (unsigned long long)p->ctx),
					  CLI_FAIL);
	double bps = p->bench == KV_BENCH_NOCACHE
			     ? 0
			     : bandwidth(a, refs, p->threads);
	double fl = p->bench == KV_BENCH_NOCACHE
			    ? sgemm_rate(a, refs, p->threads)
			    : 0;
	kv_bench_derive(p->bench, r, bps, fl);
	return 0;
}

static void put_opt_f(struct cli_table *t, double v, int prec)
{
	if (v > 0)
		cli_put_f(t, v, prec);
	else
		cli_put_empty(t);
}

static void print_row(struct cli_table *t, const struct point *p,
		      const char *model, uint64_t kv_heads,
		      const struct kv_bench_result *r,
		      const struct kv_quality *q, double ratio)
{
	bool engine = p->bench != KV_BENCH_MEMBW && p->bench != KV_BENCH_SGEMM;
	bool qual = p->bench == KV_BENCH_QUALITY;
	cli_put_str(t, kv_bench_name(p->bench));
	if (engine) {
		cli_put_str(t, model);
		cli_put_u64(t, p->ctx);
		cli_put_u64(t, p->users);
		cli_put_u64(t, kv_heads);
		cli_put_str(t, kv_dtype_name(p->dtype));
	} else {
		for (int i = 0; i < 5; i++)
			cli_put_empty(t);
	}
	cli_put_u64(t, p->threads);
	cli_put_u64(t, r->reps);
	if (r->bytes)
		cli_put_u64(t, r->bytes);
	else
		cli_put_empty(t);
	put_opt_f(t, r->flops, 0);
	if (!qual || r->ms.median > 0) {
		cli_put_f(t, r->ms.median, 3);
		cli_put_f(t, r->ms.min, 3);
		cli_put_f(t, r->ms.max, 3);
	} else { /* quality of one token: no decode step timed */
		for (int i = 0; i < 3; i++)
			cli_put_empty(t);
	}
	put_opt_f(t, r->bytes ? r->gbps : 0, 2);
	put_opt_f(t, r->flops > 0 ? r->gflops : 0, 2);
	put_opt_f(t, r->roofline_ms, 3);
	put_opt_f(t, r->efficiency, 3);
	if (engine && p->bench != KV_BENCH_NOCACHE && !qual) {
		cli_put_u64(t, r->kv_bytes);
		cli_put_f(t, r->kv_share, 3);
	} else {
		cli_put_empty(t);
		cli_put_empty(t);
	}
	if (p->bench == KV_BENCH_BATCH)
		cli_put_f(t, r->kv_time_share, 3);
	else
		cli_put_empty(t);
	put_opt_f(t, r->ref_gbps, 2);
	put_opt_f(t, r->ref_gflops, 2);
	if (engine)
		cli_put_str(t, layout_names[p->layout]);
	else
		cli_put_empty(t);
	if (engine && p->block_size)
		cli_put_u64(t, p->block_size);
	else
		cli_put_empty(t);
	if (qual) {
		cli_put_u64(t, q->steps);
		cli_put_f(t, kv_quality_top1(q), 4);
		cli_put_f(t, q->max_abs, 6);
		cli_put_f(t, kv_quality_mean_abs(q), 6);
		cli_put_f(t, kv_quality_mean_kl(q), 12);
	} else {
		for (int i = 0; i < 5; i++)
			cli_put_empty(t);
	}
	if (t->ncols == NCOLS_BASELINE) {
		put_opt_f(t, p->baseline_ms, 3);
		put_opt_f(t, ratio, 3);
	}
	cli_row_end(t);
}

/* --- baseline --- */

/* Reads the points of a saved run: its header names the columns. */
static int read_baseline(const char *path, struct kv_model ***models,
			 size_t *nmodels, struct sweep *s)
{
	static const char *const need[] = {"bench", "model", "ctx", "users",
					   "kv_heads", "threads", "ms_median"};
	char *text;
	size_t len;
	struct cli_tsv t = {0};
	int status = cli_read_text(path, &text, &len);
	if (status)
		return status;
	if ((status = cli_tsv_split(text, path, &t))) {
		free(text);
		return status;
	}
	/* optional: layout and block_size, kv_dtype */
	int idx[7], max = 0, lidx = cli_tsv_col(&t, "layout"),
		    bidx = cli_tsv_col(&t, "block_size"),
		    dt = cli_tsv_col(&t, "kv_dtype");
	if (!t.ncol)
		status = cli_usage("%s: empty; not a kvbench TSV", path);
	for (int i = 0; i < 7 && !status; i++) {
		if ((idx[i] = cli_tsv_col(&t, need[i])) < 0)
			status = cli_usage("%s: line %zu: no column '%s'; not "
					   "a kvbench TSV with its header",
					   path, t.line[0], need[i]);
		max = idx[i] > max ? idx[i] : max;
	}
	if (!status && !t.nrow)
		status = cli_usage("%s: no rows", path);
	for (size_t r = 1; !status && r <= t.nrow; r++) {
		char **cells = t.cell + r * t.ncol;
		size_t lineno = t.line[r];
		int nc = (int)(t.width[r] < t.ncol ? t.width[r] : t.ncol);
		if (nc <= max) {
			status = cli_usage("%s: line %zu: %d cells, expected "
					   "at least %d",
					   path, lineno, nc, max + 1);
			break;
		}
		struct point p = {0};
		char *end;
		if (dt >= 0 && dt < nc && *cells[dt] &&
		    (kv_dtype_parse(cells[dt], &p.dtype) ||
		     !kv_dtype_stored(p.dtype))) {
			status = cli_usage("%s: line %zu: kv_dtype '%s' is not "
					   "a format the engine stores",
					   path, lineno, cells[dt]);
			break;
		}
		if (kv_bench_parse(cells[idx[0]], &p.bench)) {
			status = cli_usage("%s: line %zu: unknown bench '%s'",
					   path, lineno, cells[idx[0]]);
			break;
		}
		bool engine = p.bench != KV_BENCH_MEMBW &&
			      p.bench != KV_BENCH_SGEMM;
		p.baseline_ms = strtod(cells[idx[6]], &end);
		if (*end || !(p.baseline_ms > 0) ||
		    kv_parse_u64(cells[idx[5]], &p.threads) || !p.threads ||
		    p.threads > 256 ||
		    (engine && (kv_parse_u64(cells[idx[2]], &p.ctx) ||
				kv_parse_u64(cells[idx[3]], &p.users) ||
				kv_parse_u64(cells[idx[4]], &p.kv_heads) ||
				!p.ctx || !p.users || !p.kv_heads))) {
			status = cli_usage("%s: line %zu: a number is missing "
					   "or malformed",
					   path, lineno);
			break;
		}
		if (engine && lidx >= 0 && lidx < nc && *cells[lidx]) {
			int l = 0;
			while (l < L_COUNT && strcmp(cells[lidx], layout_names[l]))
				l++;
			if (l == L_COUNT ||
			    (l != L_CONTIGUOUS &&
			     (bidx < 0 || bidx >= nc ||
			      kv_parse_u64(cells[bidx], &p.block_size) ||
			      !p.block_size || p.block_size > UINT32_MAX))) {
				status = cli_usage("%s: line %zu: a layout or "
						   "block size is malformed",
						   path, lineno);
				break;
			}
			p.layout = (enum layout)l;
		}
		if (engine) {
			char *name = cells[idx[1]];
			/* "gpt2-small+mla256": the model and a latent rank */
			char *plus = strstr(name, "+mla");
			if (plus && plus[4] && !kv_parse_u64(plus + 4, &p.mla) &&
			    p.mla) {
				*plus = '\0';
			} else if (plus) {
				status = cli_usage("%s: line %zu: a model "
						   "'%s' with no latent rank",
						   path, lineno, name);
				break;
			}
			size_t k = 0;
			while (k < *nmodels && strcmp((*models)[k]->name, name))
				k++;
			if (k == *nmodels) {
				struct kv_model **mm = realloc(
					*models, (k + 1) * sizeof *mm);
				if (!mm) {
					status = CLI_FAIL;
					break;
				}
				*models = mm;
				if (!strcmp(name, "gpt2-small")) {
					if (kv_model_gpt2_small(&mm[k]))
						status = CLI_FAIL;
				} else {
					status = cli_load_model(name, &mm[k]);
				}
				if (status)
					break;
				(*nmodels)++;
			}
			p.model = k;
			if (p.mla || (*models)[k]->kv_lora_rank)
				p.kv_heads = 0; /* one latent, every head */
		}
		if (add(s, p))
			status = CLI_FAIL;
	}
	cli_tsv_free(&t);
	free(text);
	return status;
}

/* The progress line on a terminal: the point's place, every dimension
 * the sweep varies, and the time left at the pace so far. */
static void progress(const struct point *p, const char *name, size_t i,
		     size_t n, uint64_t t0)
{
	char eta[64] = "";
	if (i) {
		double left = (double)(kv_now_ns() - t0) / 1e9 / (double)i *
			      (double)(n - i);
		unsigned long long sec = (unsigned long long)(left + 0.5);
		snprintf(eta, sizeof eta, ", about %llum%02llus left", sec / 60,
			 sec % 60);
	}
	fprintf(stderr, "\r\033[Kkvbench: [%zu/%zu] %s", i + 1, n,
		kv_bench_name(p->bench));
	if (*name)
		fprintf(stderr, " %s ctx %llu users %llu %s", name,
			(unsigned long long)p->ctx,
			(unsigned long long)p->users, kv_dtype_name(p->dtype));
	if (*name && p->kv_heads)
		fprintf(stderr, " kv_heads %llu",
			(unsigned long long)p->kv_heads);
	if (p->mla)
		fprintf(stderr, " mla %llu", (unsigned long long)p->mla);
	if (p->layout != L_CONTIGUOUS)
		fprintf(stderr, " %s %llu", layout_names[p->layout],
			(unsigned long long)p->block_size);
	fprintf(stderr, " threads %llu%s", (unsigned long long)p->threads, eta);
}

int main(int argc, char **argv)
{
	struct args a;
	struct kv_model **models = NULL;
	size_t nmodels = 0;
	struct sweep s = {0};
	struct refs *refs = NULL;
	bool done = false;
	int status, regressions = 0;

	cli_init("kvbench");
	status = parse(argc, argv, &a, &done);
	if (status || done)
		goto out;

	if (a.baseline) {
		if (optind < argc) {
			status = cli_usage("--baseline runs the points of its "
					   "file; give no config");
			goto out;
		}
		if ((status = read_baseline(a.baseline, &models, &nmodels, &s)))
			goto out;
	} else {
		size_t n = argc > optind ? (size_t)(argc - optind) : 1;
		models = calloc(n, sizeof *models);
		if (!models) {
			status = CLI_FAIL;
			goto out;
		}
		if (argc == optind) {
			if (kv_model_gpt2_small(&models[0])) {
				status = CLI_FAIL;
				goto out;
			}
			nmodels = 1;
		}
		for (int i = optind; i < argc; i++) {
			if ((status = cli_load_model(argv[i],
						     &models[nmodels])))
				goto out;
			nmodels++;
		}
		if ((status = expand(&a, models, nmodels, &s)))
			goto out;
	}
	if ((status = check_memory(&a, models, &s)))
		goto out;
	refs = calloc(1, sizeof *refs);
	if (!refs) {
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
	static const char *const brief[] = {
		"bench", "model", "ctx", "users", "kv_heads", "kv_dtype",
		"threads", "ms_median", "gbps", "gflops", "efficiency",
		"kv_share", "layout", "top1_agree", "ratio"};
	cli_table_brief(&t, brief, CLI_NCOLS(brief));
	for (size_t i = 0; i < s.n && !stop && !status; i++) {
		struct point *p = &s.p[i];
		struct kv_bench_result r;
		struct kv_quality q = {0};
		uint64_t kvh = p->kv_heads;
		const char *name = p->bench == KV_BENCH_MEMBW ||
					   p->bench == KV_BENCH_SGEMM
				   ? ""
				   : models[p->model]->name;
		if (tty)
			progress(p, name, i, s.n, t0);
		bool engine = *name != '\0';
		char label[256];
		snprintf(label, sizeof label, "%s", name);
		if (p->bench == KV_BENCH_QUALITY)
			status = run_quality(&a, models, p, &r, &q, &kvh);
		else
			status = engine ? run_engine(&a, models, refs, p, &r,
						     &kvh, label)
					: run_reference(&a, refs, p, &r);
		double ratio = p->baseline_ms > 0 && r.ms.median > 0
				       ? r.ms.median / p->baseline_ms
				       : 0;
		if (!status && a.max_regress >= 0 &&
		    ratio > 1 + a.max_regress) {
			/* measure once more before calling it a regression */
			struct kv_bench_result again;
			status = p->bench == KV_BENCH_QUALITY
					 ? run_quality(&a, models, p, &again,
						       &q, &kvh)
				 : engine ? run_engine(&a, models, refs, p,
						       &again, &kvh, label)
					  : run_reference(&a, refs, p, &again);
			if (!status && again.ms.median < r.ms.median) {
				r = again;
				ratio = r.ms.median / p->baseline_ms;
			}
			if (!status && ratio > 1 + a.max_regress) {
				regressions++;
				if (tty)
					fputc('\n', stderr);
				cli_error("%s %s ctx %llu users %llu: %.3f ms, "
					  "%.2fx the baseline's %.3f ms",
					  kv_bench_name(p->bench), label,
					  (unsigned long long)p->ctx,
					  (unsigned long long)p->users,
					  r.ms.median, ratio, p->baseline_ms);
			}
		}
		if (tty) /* the line goes before a row can follow it */
			fputs("\r\033[K", stderr);
		if (!status)
			print_row(&t, p, label, kvh, &r, &q, ratio);
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
	}
out:
	if (refs)
		for (int i = 0; i < 257; i++)
			kv_membw_free(refs->probe[i]);
	free(refs);
	for (size_t i = 0; i < nmodels; i++)
		kv_model_free(models[i]);
	free(models);
	free(s.p);
	free(a.ctx);
	free(a.kv_heads);
	free(a.users);
	free(a.threads);
	free(a.block_size);
	free(a.mla);
	free(a.dtypes);
	return cli_finish(status);
}
