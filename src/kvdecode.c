/*
 * kvdecode - the first article's experiment as a tool: generate tokens from
 * a model (its checkpoint's weights, or random ones) with and without the
 * KV cache, show the tokens are the same, time both, and weigh the cache
 * from its allocation. With a compact cache format, also compare its
 * answers with an f32 cache's.
 * With blocks the cache is paged; --prefix-reuse runs a short script of
 * requests over one pool (prompt caching), --lengths weighs paged blocks
 * against reserved sequences, --ppl scores a text's perplexity per cache
 * format. --users, --block-size and --threads take lists: a run each.
 * Parses options, finds the checkpoint and tokenizer beside the config,
 * and hands the runs to kvdecode_runs.c (or kvdecode_ppl.c), which ask
 * libkv's engine.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kvdecode.h"
#include "kv/units.h"

static const char usage_head[] =
	"Usage: kvdecode [OPTIONS] [CONFIG]\n"
	"Generates tokens from a model, with and without the KV cache; prints\n"
	"a row per token and a summary that says whether both ways agree, how\n"
	"long each took and what the cache weighs.\n"
	"CONFIG is a Hugging Face config.json or a model folder (path or\n"
	"name); its checkpoint's weights run where one is beside it, else\n"
	"random ones. Default: the GPT-2 small shape of the articles.\n"
	"\n";
/* between the two, the options of options.c's table */
static const char usage_foot[] =
	"\n"
	"Lists of --users, --block-size and --threads run once per\n"
	"combination, their rows led by a column each.\n"
	"Exit status: 0 success, 1 tokens or logits differ (or a runtime\n"
	"failure; with lists, in any run), 2 bad usage or input. See\n"
	"kvdecode(1).\n";

/* --lengths: "uniform:LO:HI" or "L1,L2,...", token counts >= 1. */
static int parse_lengths(const char *s, struct kvd_opts *a)
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

/* --prompt-ids: a list of token ids, the prompt's length. */
static int parse_ids(const char *s, struct kvd_opts *a)
{
	size_t n = 1;
	char tok[32];
	free(a->ids);
	for (const char *p = s; *p; p++)
		n += *p == ',';
	if (!(a->ids = calloc(n, sizeof *a->ids)))
		return CLI_FAIL;
	a->prompt = n;
	a->ids_given = true;
	for (size_t i = 0; i < n; i++, s += strcspn(s, ",") + 1) {
		uint64_t id;
		size_t len = strcspn(s, ",");
		snprintf(tok, sizeof tok, "%.*s", (int)(len < 31 ? len : 31), s);
		if (!len)
			return cli_usage("--prompt-ids: an empty item in a list "
					 "of token ids (1,5,9)");
		if (len > 31)
			return cli_usage("--prompt-ids: not a token id: "
					 "'%s...'",
					 tok);
		if (cli_u64("--prompt-ids", tok, 0, UINT32_MAX - 1, &id))
			return CLI_USAGE;
		a->ids[i] = (uint32_t)id;
	}
	return 0;
}

/* --weights-dtype: the types the engine keeps weights in. */
static int parse_wdtype(const char *s, struct kvd_opts *a)
{
	enum kv_dtype t;
	if (kv_dtype_parse(s, &t) || !kv_engine_weights_type(t))
		return cli_usage("--weights-dtype: f32, bf16 or f16, got '%s'",
				 s);
	a->e.weights_dtype = (int)t;
	return 0;
}

/* A cache format the engine stores, by name. */
static int parse_format(const char *opt, const char *s, enum kv_dtype *out)
{
	char list[256];
	if (kv_dtype_parse(s, out) || !kv_dtype_info(*out)->kv)
		return cli_usage("%s: unknown KV format '%s'; valid: %s", opt,
				 s, kv_dtype_list(list, sizeof list, 1));
	return cli_stored(opt, *out);
}

/* An option that takes a whole number: its range, and where it goes
 * (--users, --block-size and --threads: or a list, kvd_list). */
static int count(int c, struct kvd_opts *a)
{
	const struct {
		int key;
		const char *name;
		uint64_t lo, hi, *v;
	} n[] = {
		{'k', "--top-k", 0, UINT32_MAX, &a->top_k},
		{'s', "--seed", 0, UINT64_MAX, &a->e.seed},
		{OPT_POOL_BLOCKS, "--pool-blocks", 1, UINT32_MAX - 1,
		 &a->e.pool_blocks},
		{OPT_LAYERS, "--layers", 1, 4096, &a->e.layers},
		{OPT_VOCAB, "--vocab", 1, 2147483647, &a->e.vocab},
		{OPT_KV_HEADS, "--kv-heads", 1, 1 << 16, &a->e.kv_heads},
		{OPT_MLA, "--mla", 1, 1 << 20, &a->e.mla},
		{OPT_MLA_ROPE, "--mla-rope", 1, 1 << 16, &a->e.mla_rope},
	};
	int e;
	a->users_set |= c == 'u';
	a->block_set |= c == 'b';
	if ((e = kvd_list(c, optarg, a)) >= 0)
		return e;
	for (size_t i = 0; i < CLI_NCOLS(n); i++)
		if (n[i].key == c)
			return cli_u64(n[i].name, optarg, n[i].lo, n[i].hi,
				       n[i].v);
	return -1;
}

/* One option of the command line (not a whole number's). */
static int option(int c, struct kvd_opts *a, bool *done)
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
	case 'n': return cli_tokens("--new", optarg, &a->gen);
	case 'p':
		/* a token count, else text for the tokenizer */
		a->prompt_given = true;
		a->text = NULL;
		if (kv_parse_tokens(optarg, &a->prompt) != KV_EINVAL)
			return cli_tokens("--prompt", optarg, &a->prompt);
		a->text = optarg;
		a->prompt = 1; /* until the text is read */
		return 0;
	case 'T':
		return cli_double("--temperature", optarg, 0, 1e6,
				  &a->temperature);
	case 't':
		free(a->fmts);
		a->fmts = NULL;
		if ((e = cli_dtypes("--kv-dtype", optarg, &a->fmts,
				    &a->nfmts)))
			return e;
		for (size_t i = 0; i < a->nfmts && !e; i++) {
			if (a->fmts[i] < 0) /* auto: the engine's f32 */
				a->fmts[i] = KV_DTYPE_F32;
			e = cli_stored("--kv-dtype",
				       (enum kv_dtype)a->fmts[i]);
		}
		a->e.k_dtype = a->e.v_dtype = (enum kv_dtype)a->fmts[0];
		return e;
	case OPT_PPL: a->ppl = optarg; return 0;
	case OPT_K_DTYPE:
		return parse_format("--k-dtype", optarg, &a->e.k_dtype);
	case OPT_V_DTYPE:
		return parse_format("--v-dtype", optarg, &a->e.v_dtype);
	case OPT_LOGIT_SCALE:
		return cli_double("--logit-scale", optarg, 1e-6, 1e6,
				  &a->e.logit_scale);
	case OPT_LAYOUT:
		if (strcmp(optarg, "paged") && strcmp(optarg, "contiguous"))
			return cli_usage("--layout: paged or contiguous, got "
					 "'%s'",
					 optarg);
		a->e.paged = !strcmp(optarg, "paged");
		a->layout_set = true;
		return 0;
	case OPT_PREFIX_REUSE: a->e.prefix = true; return 0;
	case OPT_PROMPT_IDS: return parse_ids(optarg, a);
	case OPT_WDTYPE: return parse_wdtype(optarg, a);
	case OPT_RANDOM_WEIGHTS: a->random = true; return 0;
	case OPT_LENGTHS: return parse_lengths(optarg, a);
	case OPT_TOL: return cli_double("--tol", optarg, 0, 1e30, &a->tol);
	case OPT_SUMMARY: a->summary = optarg; return 0;
	case OPT_DRY_RUN: a->dry_run = true; return 0;
	default:
		e = cli_common(c, optarg, usage_head, usage_foot, &a->json,
			       &a->header, done);
		return e == CLI_NOT_MINE ? CLI_USAGE : e; /* said by getopt */
	}
}

/* The first of --users' values (its list's, or the one) that is not
 * want (above it, when `above`); 0 when there is none. */
static uint64_t users_but(const struct kvd_opts *a, uint64_t want,
			  bool above)
{
	const uint64_t *u = a->list[KVD_USERS] ? a->list[KVD_USERS]
					       : &a->e.users;
	size_t n = a->list[KVD_USERS] ? a->nlist[KVD_USERS] : 1;
	for (size_t i = 0; i < n; i++)
		if (above ? u[i] > want : u[i] != want)
			return u[i];
	return 0;
}

/* The options together: what one refuses of another, and what one
 * implies for another. */
static int check(struct kvd_opts *a)
{
	uint64_t u;
	a->nruns = kvd_count(a);
	if (a->ppl && a->list[KVD_USERS])
		return cli_usage("--ppl scores one sequence; --users takes "
				 "one value with it");
	if (a->nfmts > 1 && !a->ppl)
		return cli_usage("--kv-dtype: one format, or a list with "
				 "--ppl");
	if (a->ppl && (a->e.prefix || a->lengths || a->dry_run))
		return cli_usage("--ppl is a run of its own; not with "
				 "--prefix-reuse, --lengths or --dry-run");
	if (a->ids_given && a->prompt_given)
		return cli_usage("--prompt-ids gives the prompt; give it or "
				 "--prompt N, not both");
	if (compact(a) && !a->mode_given)
		a->without = false; /* the f32 cache is the reference */
	if (compact(a) && !a->with)
		return cli_usage("--cache off keeps no cache for the format "
				 "%s to store",
				 kv_dtype_name(a->e.k_dtype != KV_DTYPE_F32
						       ? a->e.k_dtype
						       : a->e.v_dtype));
	if (a->prompt > KV_DECODE_MAX_POS ||
	    a->gen > KV_DECODE_MAX_POS - a->prompt)
		return cli_usage("--prompt + --new: at most %llu positions, "
				 "got %llu + %llu",
				 KV_DECODE_MAX_POS,
				 (unsigned long long)a->prompt,
				 (unsigned long long)a->gen);
	if (a->summary && !a->summary[0])
		return cli_usage("--summary: needs a file name, got ''");
	if (a->e.prefix && a->summary)
		return cli_usage("--summary: --prefix-reuse reports its runs "
				 "on stderr, not as a summary row");
	if (a->e.prefix && a->lengths)
		return cli_usage("--prefix-reuse and --lengths are two runs; "
				 "choose one");
	if (a->e.prefix && !a->with)
		return cli_usage("--prefix-reuse reuses cached prompts; --cache "
				 "off keeps none");
	if (a->e.prefix && (u = users_but(a, 1, true)))
		return cli_usage("--prefix-reuse: requests run one at a time, "
				 "got --users %llu",
				 (unsigned long long)u);
	if (a->len.lens && a->users_set && (u = users_but(a, a->len.n, false)))
		return cli_usage("--lengths: %llu lengths for --users %llu",
				 (unsigned long long)a->len.n,
				 (unsigned long long)u);
	if (a->len.lens)
		a->e.users = a->len.n;
	if (!a->layout_set)
		a->e.paged = a->block_set || a->e.pool_blocks ||
			     a->e.prefix || a->lengths;
	if (!a->block_set && a->e.paged)
		a->e.block_size = kv_decode_block_size(a->prompt, a->gen,
						       a->lengths);
	return 0;
}

static int parse(int argc, char **argv, struct kvd_opts *a, bool *done)
{
	int c, e;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	*a = (struct kvd_opts){
		.prompt = 128, .gen = 32, .tol = 1e-4, .with = true,
		.without = true, .header = true,
		.e = {.users = 1, .logit_scale = 1, .weights_dtype = -1,
		      .k_dtype = KV_DTYPE_F32, .v_dtype = KV_DTYPE_F32}};
	a->e.threads = cpus < 1 ? 1 : cpus > 256 ? 256 : (uint64_t)cpus;
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

/* --prompt TEXT as ids, through the tokenizer beside the config. */
static int read_text(struct kvd_opts *a, const struct kv_tok *tok,
		     const struct kv_model *m)
{
	size_t n;
	if (!tok)
		return cli_usage("--prompt: '%.60s' is not a token count, and "
				 "%s has no tokenizer.json to read it as text",
				 a->text, m->name);
	free(a->ids);
	a->ids = NULL;
	if (kv_tok_encode(tok, a->text, strlen(a->text), true, &a->ids,
			  &n)) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	if (!n || n > KV_DECODE_MAX_POS)
		return cli_usage("--prompt: the text is %zu tokens", n);
	a->prompt = n;
	return 0;
}

/* The checkpoint and the tokenizer beside the config (the checkpoint
 * unless --random-weights): the checkpoint's tensors held to the config,
 * then the tokenizer's ids to the vocabulary, then the prompt's ids. */
static int weights(struct kvd_opts *a, struct kvd_state *s,
		   const struct kv_model *m)
{
	char err[KV_ERRLEN], whose[4200];
	uint64_t vocab = a->e.vocab ? a->e.vocab : m->vocab;
	int rc = 0;
	if (a->e.vocab)
		snprintf(whose, sizeof whose, "--vocab");
	else
		snprintf(whose, sizeof whose, "%s's vocab_size", m->path);
	if ((!a->random && a->config &&
	     ((rc = kv_st_beside(m->path, 1, &s->ckpt, err)) ||
	      (s->ckpt && (rc = kv_engine_ckpt_check(m, s->ckpt, err))))) ||
	    (a->config && (rc = kv_tok_beside(m->path, &s->tok, err))) ||
	    (s->tok && (rc = kv_tok_check(s->tok, vocab, whose, err)))) {
		cli_error("%s", err);
		return cli_exit(rc);
	}
	if (a->text && (rc = read_text(a, s->tok, m)))
		return rc;
	if (a->text && !a->block_set && a->e.paged)
		a->e.block_size = kv_decode_block_size(a->prompt, a->gen,
						       a->lengths);
	for (uint64_t i = 0; a->ids && !a->text && i < a->prompt; i++)
		if (a->ids[i] >= vocab)
			return cli_usage("--prompt-ids: %u is not below the "
					 "vocabulary's %llu tokens",
					 a->ids[i], (unsigned long long)vocab);
	return 0;
}

int main(int argc, char **argv)
{
	struct kvd_opts a;
	struct kvd_state s = {0};
	struct kv_model *m = NULL;
	bool done = false;
	int status;

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
	if ((status = weights(&a, &s, m)))
		goto out;
	status = a.ppl       ? kvdecode_ppl(&a, &s, m)
		 : a.lengths ? kvdecode_lengths(&a, &s, m)
			     : kvdecode_runs(&a, &s, m);
out:
	/* the rows of a run that failed, and of those before it, intact */
	kvd_table_close(&s);
	if (s.summary_f && (ferror(s.summary_f) | fclose(s.summary_f))) {
		cli_error("%s: write error", a.summary);
		status = status ? status : CLI_FAIL;
	}
	kv_model_free(m);
	kv_st_close(s.ckpt);
	kv_tok_free(s.tok);
	kv_lengths_free(&a.len);
	free(a.ids);
	free(a.fmts);
	for (int i = 0; i < KVD_LISTS; i++)
		free(a.list[i]);
	return cli_finish(status);
}
