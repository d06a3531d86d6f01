/*
 * kvdecode - the first article's experiment as a tool: generate tokens from
 * a random-weight model with and without the KV cache, show the tokens are
 * the same, time both, and weigh the cache from its allocation. With a
 * compact cache format, also compare its answers with an f32 cache's.
 * With blocks the cache is paged; --prefix-reuse runs a short script of
 * requests over one pool (prompt caching), --lengths weighs paged blocks
 * against reserved sequences. Parses options, asks libkv's engine, prints
 * one row per generated token.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kv/decode.h"
#include "kv/engine.h"
#include "kv/paged.h"
#include "kv/quality.h"
#include "kv/units.h"

static const char usage_head[] =
	"Usage: kvdecode [OPTIONS] [CONFIG]\n"
	"Generates tokens from a model with random float32 weights, with and\n"
	"without the KV cache; prints a row per token and a summary that says\n"
	"whether both ways agree, how long each took and what the cache\n"
	"weighs.\n"
	"CONFIG is a Hugging Face config.json (path or name); default: the\n"
	"GPT-2 small shape of the articles.\n"
	"\n";
/* between the two, the options of options.c's table */
static const char usage_foot[] =
	"\n"
	"Exit status: 0 success, 1 tokens or logits differ (or a runtime\n"
	"failure), 2 bad usage or input. See kvdecode(1).\n";


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
};

/* --lengths: "uniform:LO:HI" or "L1,L2,...", token counts >= 1. */
static int parse_lengths(const char *s, struct args *a)
{
	char err[KV_ERRLEN];
	int rc = kv_lengths_parse(s, KV_DECODE_MAX_POS, &a->len, err);
	a->lengths = true;
	if (rc == KV_ENOMEM) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	return rc ? cli_usage("--lengths: %s, got '%s'", err, s) : 0;
}

/* A cache format the engine stores, by name. */
static int parse_format(const char *opt, const char *s, enum kv_dtype *out)
{
	char list[256];
	if (kv_dtype_parse(s, out) || !kv_dtype_info(*out)->kv)
		return cli_usage("%s: unknown KV format '%s'; valid: %s", opt,
				 s, kv_dtype_list(list, sizeof list, 1));
	if (!kv_dtype_stored(*out))
		return cli_usage("%s: %s: the engine sizes this format but "
				 "does not store it; it stores %s",
				 opt, kv_dtype_name(*out),
				 kv_dtype_stored_list(list, sizeof list));
	return 0;
}

/* Whether the run keeps a cache format other than f32. */
static bool compact(const struct args *a)
{
	return a->k_dtype != KV_DTYPE_F32 || a->v_dtype != KV_DTYPE_F32;
}

static const char *const cols[] = {"step", "ctx", "ms_cache", "ms_nocache",
				   "token_cache", "token_nocache",
				   "max_abs_diff"};

/* An option that takes a whole number: its range, and where it goes. */
static int count(int c, struct args *a)
{
	const struct {
		int key;
		const char *name;
		uint64_t lo, hi, *v;
	} n[] = {
		{'j', "--threads", 1, 256, &a->threads},
		{'k', "--top-k", 0, UINT32_MAX, &a->top_k},
		{'s', "--seed", 0, UINT64_MAX, &a->seed},
		{'u', "--users", 1, 65536, &a->users},
		{'b', "--block-size", 0, UINT32_MAX, &a->block_size},
		{OPT_POOL_BLOCKS, "--pool-blocks", 1, UINT32_MAX - 1,
		 &a->pool_blocks},
		{OPT_LAYERS, "--layers", 1, 4096, &a->layers},
		{OPT_VOCAB, "--vocab", 1, 2147483647, &a->vocab},
		{OPT_KV_HEADS, "--kv-heads", 1, 1 << 16, &a->kv_heads},
		{OPT_MLA, "--mla", 1, 1 << 20, &a->mla},
		{OPT_MLA_ROPE, "--mla-rope", 1, 1 << 16, &a->mla_rope},
	};
	a->users_set |= c == 'u';
	a->block_set |= c == 'b';
	for (size_t i = 0; i < CLI_NCOLS(n); i++)
		if (n[i].key == c)
			return cli_u64(n[i].name, optarg, n[i].lo, n[i].hi,
				       n[i].v);
	return -1;
}

/* One option of the command line (not a whole number's). */
static int option(int c, struct args *a, bool *done)
{
	int e = 0;
	switch (c) {
	case OPT_CACHE:
		if (strcmp(optarg, "on") && strcmp(optarg, "off") &&
		    strcmp(optarg, "both"))
			return cli_usage("--cache: on, off or both, got '%s'",
					 optarg);
		a->with = strcmp(optarg, "off") != 0;
		a->without = strcmp(optarg, "on") != 0;
		a->mode_given = true;
		return 0;
	case 'h':
		cli_help(stdout, usage_head, usage_foot);
		*done = true;
		return 0;
	case 'n': return cli_tokens("--new", optarg, &a->gen);
	case 'p': return cli_tokens("--prompt", optarg, &a->prompt);
	case 'T':
		return cli_double("--temperature", optarg, 0, 1e6,
				  &a->temperature);
	case 't':
		if (!(e = parse_format("--kv-dtype", optarg, &a->k_dtype)))
			a->v_dtype = a->k_dtype;
		return e;
	case OPT_K_DTYPE:
		return parse_format("--k-dtype", optarg, &a->k_dtype);
	case OPT_V_DTYPE:
		return parse_format("--v-dtype", optarg, &a->v_dtype);
	case OPT_LOGIT_SCALE:
		return cli_double("--logit-scale", optarg, 1e-6, 1e6,
				  &a->logit_scale);
	case OPT_LAYOUT:
		if (strcmp(optarg, "paged") && strcmp(optarg, "contiguous"))
			return cli_usage("--layout: paged or contiguous, got "
					 "'%s'",
					 optarg);
		a->layout = !strcmp(optarg, "paged");
		return 0;
	case OPT_PREFIX_REUSE: a->prefix = true; return 0;
	case OPT_LENGTHS: return parse_lengths(optarg, a);
	case OPT_TOL: return cli_double("--tol", optarg, 0, 1e30, &a->tol);
	case OPT_SUMMARY: a->summary = optarg; return 0;
	case OPT_DRY_RUN: a->dry_run = true; return 0;
	case OPT_JSON: a->json = true; return 0;
	case 'o': return cli_output(optarg, &a->json);
	case 'v': cli_verbose(); return 0;
	case OPT_NO_HEADER: a->header = false; return 0;
	case OPT_VERSION:
		printf("kvdecode %s\n", KV_VERSION);
		*done = true;
		return 0;
	default: /* said by cli_getopt */
		return CLI_USAGE;
	}
}

/* The options together: what one refuses of another, and what one
 * implies for another. */
static int check(struct args *a)
{
	if (compact(a) && !a->mode_given)
		a->without = false; /* the f32 cache is the reference */
	if (compact(a) && !a->with)
		return cli_usage("--cache off keeps no cache for the format "
				 "%s to store",
				 kv_dtype_name(a->k_dtype != KV_DTYPE_F32
						       ? a->k_dtype
						       : a->v_dtype));
	if (a->prompt > KV_DECODE_MAX_POS ||
	    a->gen > KV_DECODE_MAX_POS - a->prompt)
		return cli_usage("--prompt + --new: at most %llu positions, "
				 "got %llu + %llu",
				 KV_DECODE_MAX_POS,
				 (unsigned long long)a->prompt,
				 (unsigned long long)a->gen);
	if (a->summary && !a->summary[0])
		return cli_usage("--summary: needs a file name, got ''");
	if (a->prefix && a->summary)
		return cli_usage("--summary: --prefix-reuse reports its runs "
				 "on stderr, not as a summary row");
	if (a->prefix && a->lengths)
		return cli_usage("--prefix-reuse and --lengths are two runs; "
				 "choose one");
	if (a->prefix && !a->with)
		return cli_usage("--prefix-reuse reuses cached prompts; --cache "
				 "off keeps none");
	if (a->prefix && a->users > 1)
		return cli_usage("--prefix-reuse: requests run one at a time, "
				 "got --users %llu",
				 (unsigned long long)a->users);
	if (a->len.lens && a->users_set && a->users != a->len.n)
		return cli_usage("--lengths: %llu lengths for --users %llu",
				 (unsigned long long)a->len.n,
				 (unsigned long long)a->users);
	if (a->len.lens)
		a->users = a->len.n;
	if (a->layout < 0)
		a->layout = a->block_set || a->pool_blocks || a->prefix ||
			    a->lengths;
	if (!a->block_set && a->layout == 1)
		a->block_size = kv_decode_block_size(a->prompt, a->gen,
						     a->lengths);
	return 0;
}

static int parse(int argc, char **argv, struct args *a, bool *done)
{
	int c, e;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	*a = (struct args){.prompt = 128, .gen = 32, .users = 1, .tol = 1e-4,
			   .with = true, .without = true, .header = true,
			   .layout = -1, .logit_scale = 1,
			   .k_dtype = KV_DTYPE_F32, .v_dtype = KV_DTYPE_F32};
	a->threads = cpus < 1 ? 1 : cpus > 256 ? 256 : (uint64_t)cpus;
	while ((c = cli_getopt(argc, argv)) != -1) {
		if ((e = count(c, a)) < 0)
			e = option(c, a, done);
		if (e || *done)
			return e;
	}
	if (optind + 1 < argc)
		return cli_usage("one config at most, got '%s' and '%s'",
				 argv[optind], argv[optind + 1]);
	if (optind < argc)
		a->config = argv[optind];
	return check(a);
}

/* A cell of one or several users' tokens: "17" or "17,4,99"; buf holds
 * 11 bytes a user. */
static void put_tokens(struct cli_table *t, const uint32_t *tok,
		       uint64_t users, bool run, char *buf)
{
	size_t len = 0;
	if (!run) {
		cli_put_empty(t);
		return;
	}
	if (users == 1) {
		cli_put_u64(t, tok[0]);
		return;
	}
	for (uint64_t u = 0; u < users; u++)
		len += (size_t)sprintf(buf + len, "%s%u", u ? "," : "",
				       tok[u]);
	cli_put_str(t, buf);
}

/* A step's row, as kv_decode_run() runs it: the table and a cell of
 * 11 bytes a user (and one) for the tokens. */
struct rows {
	const struct args *a;
	struct cli_table t;
	char *cell;
};

static void row(const struct kv_decode_step *st, void *arg)
{
	struct rows *w = arg;
	const struct args *a = w->a;
	cli_put_u64(&w->t, st->step);
	cli_put_u64(&w->t, st->ctx);
	cli_put_f(&w->t, st->ms[1], 3);
	cli_put_f(&w->t, st->ms[0], 3);
	put_tokens(&w->t, st->next[1], a->users, a->with, w->cell);
	put_tokens(&w->t, st->next[0], a->users, a->without, w->cell);
	if (a->with && a->without)
		cli_put_f(&w->t, st->max_diff, 9);
	else
		cli_put_empty(&w->t);
	cli_row_end(&w->t);
}

/* The decode loop (kv_decode_run): a row per step, each way. */
static int run(const struct args *a, struct kv_engine *e,
	       struct kv_decode_result *r)
{
	struct kv_decode_opts o = {a->prompt, a->gen, a->with, a->without,
				   a->temperature, a->top_k, a->seed, NULL};
	struct kv_decode *d;
	struct rows w = {.a = a, .cell = malloc(a->users * 11 + 1)};
	int rc = w.cell ? kv_decode_open(e, &o, &d) : KV_ENOMEM;
	if (rc) {
		free(w.cell);
		cli_error("out of memory");
		return CLI_FAIL;
	}
	cli_table_begin(&w.t, cols, CLI_NCOLS(cols), a->json, a->header,
			false);
	if ((rc = kv_decode_run(d, row, &w, r)))
		cli_error("forward pass failed at step %llu%s",
			  (unsigned long long)(r->steps + 1),
			  rc == KV_ENOMEM ? ": no free block in the pool" : "");
	else
		cli_table_end(&w.t);
	kv_decode_close(d);
	free(w.cell);
	return rc ? CLI_FAIL : 0;
}

/* The summary for people, on stderr; q: the comparison with an f32
 * cache (compact formats). */
static void say(const struct args *a, const struct kv_model *m,
		const struct kv_decode_result *r, const struct kv_quality *q)
{
	char b1[32], b2[32], b3[32], fm[40];
	bool both = r->compared;
	double speedup = kv_decode_speedup(r);
	fflush(stdout);
	fprintf(stderr,
		"kvdecode: %s, %u layers, %llu user%s, prompt %llu, %llu "
		"new, %llu threads\n",
		m->name, m->n_layers, (unsigned long long)a->users,
		a->users == 1 ? "" : "s",
		(unsigned long long)a->prompt, (unsigned long long)a->gen,
		(unsigned long long)a->threads);
	if (both) {
		if (r->first_diff)
			fprintf(stderr,
				"tokens: differ with and without the cache "
				"from step %llu\n",
				(unsigned long long)r->first_diff);
		else
			fprintf(stderr,
				"tokens: identical with and without the cache "
				"(%llu of %llu)\n",
				(unsigned long long)a->gen,
				(unsigned long long)a->gen);
		fprintf(stderr,
			"largest logit difference: %.3g (tolerance %.3g)%s\n",
			r->max_diff, a->tol,
			r->max_diff > a->tol ? ": too large" : "");
	}
	fprintf(stderr, "time:");
	if (a->with)
		fprintf(stderr, " %.3f s with the cache", r->ms[1] / 1e3);
	if (a->without)
		fprintf(stderr, "%s %.3f s without", a->with ? "," : "",
			r->ms[0] / 1e3);
	if (!isnan(speedup))
		fprintf(stderr, ": a speed-up of %.1fx", speedup);
	fputc('\n', stderr);
	if (a->with)
		fprintf(stderr,
			"kv cache: %s bytes per token (%s, measured from the "
			"allocation), %s bytes ",
			kv_format_grouped(r->kv_per_token, b1, sizeof b1),
			kv_dtype_pair_name(a->k_dtype, a->v_dtype, fm,
					   sizeof fm),
			kv_format_grouped(r->kv_bytes, b2, sizeof b2));
	if (a->with && r->pool)
		fprintf(stderr,
			"in a pool of %llu blocks of %llu positions, %llu "
			"held at the end\n",
			(unsigned long long)r->pool,
			(unsigned long long)a->block_size,
			(unsigned long long)r->held);
	else if (a->with)
		fprintf(stderr, "for %llu positions x %llu user%s\n",
			(unsigned long long)r->positions,
			(unsigned long long)a->users, a->users == 1 ? "" : "s");
	fprintf(stderr, "token passes:");
	if (a->with)
		fprintf(stderr, " %s with the cache",
			kv_format_grouped(r->passes[1], b3, sizeof b3));
	if (a->without)
		fprintf(stderr, "%s %s without", a->with ? "," : "",
			kv_format_grouped(r->passes[0], b1, sizeof b1));
	fputc('\n', stderr);
	if (compact(a))
		fprintf(stderr,
			"against an f32 cache (fed its %llu tokens): top-1 "
			"agreement %.4f (%llu of %llu), logit difference "
			"largest %.4g, mean %.4g; mean KL divergence %.4g "
			"nats\n",
			(unsigned long long)a->gen, kv_quality_top1(q),
			(unsigned long long)q->agree,
			(unsigned long long)q->steps, q->max_abs,
			kv_quality_mean_abs(q), kv_quality_mean_kl(q));
}

/* The summary for scripts: a header and a row in --summary FILE, which
 * this closes. */
static int write_summary(const struct args *a, const struct kv_model *m,
			 const struct kv_decode_result *r,
			 const struct kv_quality *q)
{
	FILE *f = a->summary_f;
	bool both = r->compared;
	double speedup = kv_decode_speedup(r);
	fprintf(f, "model\tlayers\tusers\tprompt\tnew\tthreads\t"
		   "tokens_identical\tfirst_diff_step\tmax_abs_diff\t"
		   "s_cache\ts_nocache\tspeedup\tkv_bytes_per_token\t"
		   "kv_bytes\tpasses_cache\tpasses_nocache\tk_dtype\t"
		   "v_dtype\tlogit_scale\ttop1_agree\tmax_abs_logit_diff\t"
		   "mean_abs_logit_diff\tmean_kl\n");
	fprintf(f, "%s\t%u\t%llu\t%llu\t%llu\t%llu\t", m->name, m->n_layers,
		(unsigned long long)a->users, (unsigned long long)a->prompt,
		(unsigned long long)a->gen, (unsigned long long)a->threads);
	if (both)
		fprintf(f, "%d\t%llu\t%.9f\t", !r->first_diff,
			(unsigned long long)r->first_diff, r->max_diff);
	else
		fprintf(f, "\t\t\t");
	if (a->with)
		fprintf(f, "%.6f", r->ms[1] / 1e3);
	fputc('\t', f);
	if (a->without)
		fprintf(f, "%.6f", r->ms[0] / 1e3);
	fputc('\t', f);
	if (!isnan(speedup))
		fprintf(f, "%.3f", speedup);
	fputc('\t', f);
	if (a->with)
		fprintf(f, "%llu\t%llu\t%llu\t",
			(unsigned long long)r->kv_per_token,
			(unsigned long long)r->kv_bytes,
			(unsigned long long)r->passes[1]);
	else
		fprintf(f, "\t\t\t");
	if (a->without)
		fprintf(f, "%llu", (unsigned long long)r->passes[0]);
	fprintf(f, "\t%s\t%s\t%g\t", kv_dtype_name(a->k_dtype),
		kv_dtype_name(a->v_dtype), a->logit_scale);
	if (compact(a))
		fprintf(f, "%.6f\t%.9f\t%.9f\t%.12f", kv_quality_top1(q),
			q->max_abs, kv_quality_mean_abs(q),
			kv_quality_mean_kl(q));
	else
		fprintf(f, "\t\t\t");
	fputc('\n', f);
	if (ferror(f) | fclose(f)) {
		cli_error("%s: write error", a->summary);
		return CLI_FAIL;
	}
	return 0;
}

/* Refuses a run larger than the memory it may take (kv_run_memory),
 * naming what fits: need is the engine's bytes plus `mine`, the loop's
 * own. */
static int check_memory(const struct kv_model *m,
			const struct kv_engine_opts *o, uint64_t need,
			uint64_t mine)
{
	char err[KV_ERRLEN];
	uint64_t avail, usable;
	if (kv_run_memory(&avail, &usable, err))
		return cli_usage("%s", err);
	if (kv_run_fits(m, o, need, mine, avail, usable, err))
		return cli_usage("%s: %s", m->name, err);
	return 0;
}

/* --dry-run: what the run would allocate and do, without running it. */
static int plan(const struct args *a, const struct kv_model *m,
		const struct kv_engine_opts *o, const struct kv_engine_size *sz)
{
	static const char *const pcols[] = {
		"prompt", "new", "users", "weights_bytes", "cache_bytes",
		"scratch_bytes", "kv_bytes_per_token", "passes_cache",
		"passes_nocache"};
	char err[KV_ERRLEN];
	struct kv_decode_plan p;
	if (kv_decode_plan(m, o, a->prompt, a->gen, &p, err)) {
		cli_error("%s", err);
		return CLI_USAGE;
	}
	struct cli_table t;
	cli_table_begin(&t, pcols, CLI_NCOLS(pcols), a->json, a->header, false);
	cli_put_u64(&t, a->prompt);
	cli_put_u64(&t, a->gen);
	cli_put_u64(&t, a->users);
	cli_put_u64(&t, sz->weights);
	cli_put_u64(&t, sz->cache);
	cli_put_u64(&t, sz->scratch);
	cli_put_u64(&t, p.kv_per_token);
	cli_put_u64(&t, p.passes[1]);
	cli_put_u64(&t, p.passes[0]);
	cli_row_end(&t);
	cli_table_end(&t);
	return 0;
}

/* --- --lengths: paged blocks against reserved sequences --- */

static int run_lengths(const struct args *a, const struct kv_model *m,
		       struct kv_engine_opts *o)
{
	static const char *const lcols[] = {
		"users", "block_size", "max_len", "tokens", "blocks",
		"blocks_held", "token_bytes", "paged_bytes", "reserved_bytes",
		"paged_waste", "reserved_waste"};
	char err[KV_ERRLEN], b1[64], b2[64];
	struct kv_lengths_report r;
	uint64_t U = a->users;
	int rc = kv_decode_lengths(m, *o, &a->len, U, a->seed, a->block_set,
				   a->pool_blocks, &r, err);
	if (rc) {
		cli_error("%s", err);
		return rc == KV_ENOMEM || rc == KV_ERANGE ? CLI_FAIL
							   : CLI_USAGE;
	}
	const struct kv_paged_usage *u = &r.u;
	struct cli_table t;
	cli_table_begin(&t, lcols, CLI_NCOLS(lcols), a->json, a->header, false);
	cli_put_u64(&t, U);
	cli_put_u64(&t, r.block_size);
	cli_put_u64(&t, r.max_len);
	cli_put_u64(&t, u->tokens);
	cli_put_u64(&t, u->blocks);
	cli_put_u64(&t, r.blocks_held);
	cli_put_u64(&t, u->token_bytes);
	cli_put_u64(&t, u->paged_bytes);
	cli_put_u64(&t, u->reserved_bytes);
	cli_put_f(&t, u->paged_waste, 4);
	cli_put_f(&t, u->reserved_waste, 4);
	cli_row_end(&t);
	cli_table_end(&t);
	fflush(stdout);
	fprintf(stderr,
		"kvdecode: %s, %u layers, %llu users, %llu tokens in all, "
		"blocks of %llu\n",
		m->name, r.layers, (unsigned long long)U,
		(unsigned long long)u->tokens,
		(unsigned long long)r.block_size);
	fprintf(stderr, "paged: %s in %llu blocks, %.1f%% of it unused\n",
		kv_format_iec(u->paged_bytes, b1, sizeof b1),
		(unsigned long long)u->blocks, 100 * u->paged_waste);
	fprintf(stderr,
		"reserved: %s for %llu x %llu positions, %.1f%% of it "
		"unused\n",
		kv_format_iec(u->reserved_bytes, b2, sizeof b2),
		(unsigned long long)U, (unsigned long long)r.max_len,
		100 * u->reserved_waste);
	return 0;
}

/* --- --prefix-reuse: a script of requests over one pool --- */

static int run_prefix(const struct args *a, struct kv_engine *e)
{
	static const char *const rcols[] = {
		"request", "prompt", "cached_tokens", "computed_tokens",
		"hits", "misses", "evictions", "blocks_held", "first_token",
		"identical", "ms_first_token", "ms_decode"};
	struct kv_prefix_request r[KV_PREFIX_REQUESTS];
	int failed, rc = kv_prefix_reuse(e, a->prompt, a->gen, a->temperature,
					 a->top_k, a->seed, r, &failed);
	struct cli_table t;
	cli_table_begin(&t, rcols, CLI_NCOLS(rcols), a->json, a->header, false);
	for (int q = 0; q < (failed < 0 ? KV_PREFIX_REQUESTS : failed); q++) {
		const struct kv_prefix_request *x = &r[q];
		cli_put_str(&t, kv_prefix_names[q]);
		cli_put_u64(&t, a->prompt);
		cli_put_u64(&t, x->cached);
		cli_put_u64(&t, x->computed);
		cli_put_u64(&t, x->hits);
		cli_put_u64(&t, x->misses);
		cli_put_u64(&t, x->evictions);
		cli_put_u64(&t, x->blocks_held);
		cli_put_u64(&t, x->first);
		if (x->identical < 0)
			cli_put_empty(&t);
		else
			cli_put_u64(&t, (uint64_t)x->identical);
		cli_put_f(&t, x->ms_first, 3);
		cli_put_f(&t, x->ms_decode, 3);
		cli_row_end(&t);
	}
	if (rc) {
		if (failed < 0)
			cli_error("out of memory");
		else
			cli_error("request %s failed: %s",
				  kv_prefix_names[failed],
				  rc == KV_ENOMEM ? "no free block in the pool"
						  : kv_strerror(rc));
		return CLI_FAIL;
	}
	cli_table_end(&t);
	fflush(stdout);
	fprintf(stderr,
		"kvdecode: prefix reuse, prompt %llu, %llu new, blocks of "
		"%llu, %llu threads\n",
		(unsigned long long)a->prompt, (unsigned long long)a->gen,
		(unsigned long long)a->block_size,
		(unsigned long long)a->threads);
	fprintf(stderr,
		"time to first token: %.3f ms cold, %.3f ms warm (%llu of "
		"%llu blocks reused)\n",
		r[0].ms_first, r[1].ms_first, (unsigned long long)r[1].hits,
		(unsigned long long)(r[1].hits + r[1].misses));
	bool same = kv_prefix_same(r);
	fprintf(stderr, "logits: %s warm and cold\n",
		same ? "identical" : "differ");
	return same ? 0 : CLI_FAIL;
}

/* The engine's options from the command line's. */
static struct kv_engine_opts engine_opts(const struct args *a)
{
	struct kv_engine_opts o = kv_engine_opts_default();
	o.layers = (uint32_t)a->layers;
	o.vocab = a->vocab;
	o.kv_heads = (uint32_t)a->kv_heads;
	o.mla_rank = (uint32_t)a->mla;
	o.mla_rope = (uint32_t)a->mla_rope;
	o.users = (uint32_t)a->users;
	o.seed = a->seed;
	o.threads = (uint32_t)a->threads;
	o.k_dtype = a->k_dtype;
	o.v_dtype = a->v_dtype;
	o.logit_scale = (float)a->logit_scale;
	o.block_size = (uint32_t)a->block_size;
	o.paged = a->layout == 1;
	o.pool_blocks = a->pool_blocks;
	o.prefix = a->prefix;
	kv_decode_engine_opts(&o, a->prompt, a->gen, a->with, a->without);
	return o;
}

/* The decode loop on e (freed here, before the comparison's own
 * engines), the comparison with an f32 cache, and the summary (which
 * closes a->summary_f when it is written). */
static int decode(struct args *a, const struct kv_model *m,
		  const struct kv_engine_opts *o, struct kv_engine **e)
{
	char err[KV_ERRLEN];
	struct kv_decode_result r;
	struct kv_quality q = {0};
	struct kv_model *eff = NULL;
	int status = run(a, *e, &r);
	if (!status && kv_engine_model(m, o, &eff, err)) {
		cli_error("%s", err);
		status = CLI_FAIL;
	}
	kv_engine_free(*e);
	*e = NULL;
	if (!status && compact(a) &&
	    kv_quality_run(m, o, a->prompt, a->gen, a->temperature, a->top_k,
			   a->seed, &q, NULL, NULL, err)) {
		cli_error("%s", err);
		status = CLI_FAIL;
	}
	if (!status)
		say(a, eff, &r, &q);
	if (!status && a->summary_f) {
		status = write_summary(a, eff, &r, &q);
		a->summary_f = NULL;
	}
	if (!status && kv_decode_differ(&r, a->tol))
		status = CLI_FAIL;
	kv_model_free(eff);
	return status;
}

int main(int argc, char **argv)
{
	struct args a;
	struct kv_model *m = NULL;
	struct kv_engine *e = NULL;
	struct kv_decode_size sz;
	bool done = false;
	char err[KV_ERRLEN];
	int status, rc;

	cli_init("kvdecode");
	status = parse(argc, argv, &a, &done);
	if (status || done)
		goto out;
	if (a.config) {
		if ((status = cli_load_model(a.config, &m)))
			goto out;
	} else if (kv_model_gpt2_small(&m)) {
		cli_error("out of memory");
		status = CLI_FAIL;
		goto out;
	}
	struct kv_engine_opts o = engine_opts(&a);
	if (a.lengths) {
		status = run_lengths(&a, m, &o);
		goto out;
	}
	if ((rc = kv_decode_estimate(m, &o, a.prompt, a.gen, compact(&a), &sz,
				     err))) {
		cli_error("%s", err);
		status = rc == KV_ENOMEM ? CLI_FAIL : CLI_USAGE;
		goto out;
	}
	if (m->max_pos && o.max_ctx > m->max_pos)
		cli_warn("%s: %llu positions are beyond the config's %llu; "
			 "run anyway, the weights being random",
			 m->name, (unsigned long long)o.max_ctx,
			 (unsigned long long)m->max_pos);
	if (a.dry_run) {
		status = plan(&a, m, &o, &sz.engine);
		goto out;
	}
	if ((status = check_memory(m, &o, sz.need, sz.loop)))
		goto out;
	if (a.summary && !a.prefix &&
	    !(a.summary_f = fopen(a.summary, "w"))) {
		cli_error("%s: %s", a.summary, strerror(errno));
		status = CLI_USAGE;
		goto out;
	}
	if ((rc = kv_engine_new(m, &o, &e, err))) {
		cli_error("%s", err);
		status = rc == KV_ENOMEM ? CLI_FAIL : CLI_USAGE;
		goto out;
	}
	status = a.prefix ? run_prefix(&a, e) : decode(&a, m, &o, &e);
out:
	if (a.summary_f)
		fclose(a.summary_f);
	kv_engine_free(e);
	kv_model_free(m);
	kv_lengths_free(&a.len);
	return cli_finish(status);
}
