/*
 * kvsize - KV-cache bytes per token and per context of a model, read from
 * its own config.json. Parses options, asks libkv, prints one row per
 * config x KV format x context (x users).
 */
#include <dirent.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kv/layout.h"
#include "kv/units.h"

static const char usage_head[] =
	"Usage: kvsize [OPTIONS] CONFIG...\n"
	"KV-cache bytes per token and per context of each model, from its\n"
	"Hugging Face config.json (a path, a name from --list, or - for stdin).\n"
	"\n";
/* between the two, the options of options.c's table */
static const char usage_foot[] =
	"\n"
	"Formats: auto, f32, f16, bf16, fp8 (e4m3), fp8_e5m2, int8, q8_0,\n"
	"q4_0, q4_1, q5_0, q5_1, iq4_nl. Exit status: 0 success, 2 bad usage\n"
	"or input. See kvsize(1) and kvtools(7).\n";


struct args {
	uint64_t *ctx;
	size_t nctx;
	int *dtypes;
	size_t ndtypes;
	uint64_t *users;
	size_t nusers;
	uint64_t tp;
	uint64_t *blocks; /* --block-size LIST; NULL: none */
	size_t nblocks;
	bool mha, per_layer, json, header, human, list;
	struct cli_kv kv;   /* --cache-type-k and -v, until joined */
};

/* printed order: model kv_dtype layers kv_heads head_dim_k head_dim_v ctx
 * users bytes_per_token kv_bytes kv_dtype_asked [state_bytes]; the
 * format asked ("auto", resolved from the config's torch_dtype into
 * kv_dtype) goes down a pipe, so that kvfit resolves auto by its engine's
 * rule as it does for a config */
static const char *const row_cols[] = {
	"model", "kv_dtype", "layers", "kv_heads", "head_dim_k",
	"head_dim_v", "ctx", "users", "bytes_per_token", "kv_bytes",
	"kv_dtype_asked"};
static const char *const layer_cols[] = {
	"model", "kv_dtype", "layer", "kind", "kv_heads", "head_dim_k",
	"head_dim_v", "window", "ctx", "tokens", "users", "bytes_per_token",
	"kv_bytes"};

/* A min..max pair as one cell: the number when both agree. */
static void put_range(struct cli_table *t, uint32_t lo, uint32_t hi)
{
	char buf[32];
	if (lo == hi) {
		cli_put_u64(t, lo);
		return;
	}
	snprintf(buf, sizeof buf, "%u..%u", lo, hi);
	cli_put_str(t, buf);
}

/* One row per layer of model m for one format, context and user count;
 * with t == NULL it only checks that every row can be computed. */
static int per_layer(struct cli_table *t, const struct kv_model *m,
		     const struct kv_opts *o, uint64_t ctx, uint64_t users)
{
	char err[KV_ERRLEN];
	for (uint32_t i = 0; i < m->n_layers; i++) {
		struct kv_geom g;
		uint64_t per, total;
		if (kv_layer_geom(m, i, o, &g, err) ||
		    kv_geom_token_bytes(&g, o, &per, err)) {
			cli_error("%s", err);
			return CLI_USAGE;
		}
		uint64_t tokens = kv_geom_tokens(&g, ctx, o->block);
		if (kv_mul(per, tokens, &total) ||
		    kv_mul(total, users, &total)) {
			cli_error("%s: %llu tokens x %llu users overflows 64 "
				  "bits of bytes",
				  m->name, (unsigned long long)ctx,
				  (unsigned long long)users);
			return CLI_USAGE;
		}
		if (!t)
			continue;
		char kv[40];
		cli_put_str(t, m->name);
		cli_put_str(t, kv_dtype_kv_name(o->k_dtype, o->v_dtype, kv,
						sizeof kv));
		cli_put_u64(t, i);
		cli_put_str(t, kv_attn_name(g.attn));
		cli_put_u64(t, g.heads);
		cli_put_u64(t, g.dim_k);
		cli_put_u64(t, g.dim_v);
		if (g.window)
			cli_put_u64(t, g.window);
		else
			cli_put_empty(t);
		cli_put_u64(t, ctx);
		cli_put_u64(t, tokens);
		cli_put_u64(t, users);
		cli_put_bytes(t, per);
		cli_put_bytes(t, total);
		cli_row_end(t);
	}
	return 0;
}

/* One summary row of model m; with t == NULL only the check. */
static int row(struct cli_table *t, const struct kv_model *m,
	       const struct kv_opts *o, bool asked_auto, uint64_t ctx,
	       uint64_t users, bool state, bool plan)
{
	char err[KV_ERRLEN], kv[40];
	struct kv_summary s;
	uint64_t per, total, st = 0;
	int e;
	if ((e = kv_model_summary(m, o, &s, err)) ||
	    (e = kv_model_token_bytes(m, o, &per, err)) ||
	    (e = kv_model_bytes(m, o, ctx, users, &total, err))) {
		if (e == KV_ERANGE && !strstr(err, "overflow"))
			snprintf(err, sizeof err, "%s: bytes overflow 64 bits",
				 m->name);
		cli_error("%s", err);
		return CLI_USAGE;
	}
	if (state && kv_model_state_bytes(m, o, users, &st)) {
		cli_error("%s: state bytes overflow 64 bits", m->name);
		return CLI_USAGE;
	}
	if (!t)
		return 0;
	kv_dtype_kv_name(o->k_dtype, o->v_dtype, kv, sizeof kv);
	cli_put_str(t, m->name);
	cli_put_str(t, kv);
	cli_put_u64(t, s.layers);
	put_range(t, s.heads_min, s.heads_max);
	put_range(t, s.dim_k_min, s.dim_k_max);
	put_range(t, s.dim_v_min, s.dim_v_max);
	cli_put_u64(t, ctx);
	cli_put_u64(t, users);
	cli_put_bytes(t, per);
	cli_put_bytes(t, total);
	cli_put_str(t, asked_auto ? "auto" : kv);
	if (state)
		cli_put_bytes(t, st);
	if (plan) { /* what kvfit continues the plan with */
		cli_put_u64(t, o->tp);
		cli_put_u64(t, o->block);
	}
	if (t->cell < t->ncols) /* the last column left: config */
		cli_put_str(t, m->json ? m->json : "");
	cli_row_end(t);
	return 0;
}

/* Every row of the matrix config x format x context x users: printed into
 * t, or only checked when t is NULL (warnings are given on the check). */
static int rows(struct kv_model **models, size_t nmodels, const struct args *a,
		struct cli_table *t, bool state)
{
	static const uint64_t one = 1, none = 0;
	static const int auto_dtype = -1;
	const uint64_t *blocks = a->blocks ? a->blocks : &none;
	size_t nblocks = a->blocks ? a->nblocks : 1;
	const int *dts = a->dtypes ? a->dtypes : &auto_dtype;
	size_t ndts = a->dtypes ? a->ndtypes : 1;
	const uint64_t *users = a->users ? a->users : &one;
	size_t nusers = a->users ? a->nusers : 1;
	int status = 0;
	for (size_t mi = 0; mi < nmodels && !status; mi++) {
		const struct kv_model *m = models[mi];
		uint64_t defctx[2] = {1, m->max_pos};
		const uint64_t *ctx = a->ctx ? a->ctx : defctx;
		size_t nctx = a->ctx ? a->nctx : (m->max_pos > 1 ? 2 : 1);
		if (!t)
			cli_warn_beyond(m->name, ctx, nctx, m->max_pos);
		for (size_t d = 0; d < ndts && !status; d++)
		for (size_t b = 0; b < nblocks && !status; b++) {
			struct kv_opts o = kv_opts_default(m);
			if (dts[d] >= 0)
				kv_dtype_unpack(dts[d], &o.k_dtype, &o.v_dtype);
			o.mha = a->mha;
			o.tp = (uint32_t)a->tp;
			o.block = blocks[b];
			for (size_t c = 0; c < nctx && !status; c++)
				for (size_t u = 0; u < nusers && !status; u++)
					status = a->per_layer
						? per_layer(t, m, &o, ctx[c],
							    users[u])
						: row(t, m, &o, dts[d] < 0,
						      ctx[c],
						      users[u], state,
						      a->tp > 1 || a->blocks);
		}
	}
	return status;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* --list: every config in the search path that loads, first one wins. */
static int list_configs(const struct args *a)
{
	static const char *const lcols[] = {"model", "model_type", "layers",
					    "path"};
	struct cli_table t;
	char **seen = NULL;
	size_t nseen = 0;
	int status = 0;
	cli_table_begin(&t, lcols, CLI_NCOLS(lcols), a->json, a->header, false);
	const char *d;
	for (size_t i = 0; (d = kv_config_dir(i)); i++) {
		char dir[4096];
		snprintf(dir, sizeof dir, "%s", d);
		struct dirent **names;
		int n = scandir(dir, &names, NULL, alphasort);
		for (int k = 0; k < n; k++) {
			char *nm = names[k]->d_name;
			size_t len = strlen(nm);
			if (len > 5 && !strcmp(nm + len - 5, ".json")) {
				nm[len - 5] = '\0';
				char path[8192], err[KV_ERRLEN];
				snprintf(path, sizeof path, "%s/%s.json", dir,
					 nm);
				struct kv_model *m;
				bool dup = nseen &&
					   bsearch(&nm, seen, nseen,
						   sizeof *seen, cmp_str);
				if (!dup && kv_model_load(path, &m, err) == 0) {
					cli_put_str(&t, nm);
					cli_put_str(&t, m->model_type);
					cli_put_u64(&t, m->n_layers);
					cli_put_str(&t, path);
					cli_row_end(&t);
					kv_model_free(m);
					char **p = realloc(
						seen, (nseen + 1) * sizeof *p);
					char *c = strdup(nm);
					if (p)
						seen = p;
					if (p && c) {
						seen[nseen++] = c;
						qsort(seen, nseen, sizeof *seen,
						      cmp_str);
					} else {
						free(c);
					}
				}
			}
			free(names[k]);
		}
		if (n >= 0)
			free(names);
	}
	cli_table_end(&t);
	for (size_t i = 0; i < nseen; i++)
		free(seen[i]);
	free(seen);
	return status;
}

static int parse(int argc, char **argv, struct args *a, bool *done)
{
	int c, e;
	uint64_t v;
	a->header = true;
	a->tp = 1;
	while ((c = cli_getopt(argc, argv)) != -1) {
		switch (c) {
		case 'b':
			if ((e = cli_list("--block-size", optarg, 1ULL << 32,
					  &a->blocks, &a->nblocks)))
				return e;
			break;
		case 'c':
			free(a->ctx);
			if ((e = cli_sweep(cli_opt_as(), optarg, &a->ctx,
					     &a->nctx)))
				return e;
			break;
		case 'h':
			cli_help(stdout, usage_head, usage_foot);
			*done = true;
			return 0;
		case 'H': a->human = true; break;
		case 't':
			free(a->dtypes);
			if ((e = cli_dtypes(cli_opt_as(), optarg, &a->dtypes,
					    &a->ndtypes)))
				return e;
			break;
		case 'u':
			free(a->users);
			if ((e = cli_sweep("--users", optarg, &a->users,
					   &a->nusers)))
				return e;
			break;
		case OPT_MHA: a->mha = true; break;
		case OPT_CTK:
		case OPT_CTV:
			if ((e = cli_cache_type(c == OPT_CTK, optarg, &a->kv)))
				return e;
			break;
		case OPT_TP:
			if ((e = cli_u64(cli_opt_as(), optarg, 1, CLI_MAX_RANKS, &v)))
				return e;
			a->tp = v;
			break;
		case OPT_PER_LAYER: a->per_layer = true; break;
		case OPT_JSON: a->json = true; break;
		case 'o':
			if ((e = cli_output(optarg, &a->json)))
				return e;
			break;
		case 'v': cli_verbose(); break;
		case OPT_NO_HEADER: a->header = false; break;
		case OPT_LIST: a->list = true; break;
		case OPT_VERSION:
			printf("kvsize %s\n", KV_VERSION);
			*done = true;
			return 0;
		default: /* said by cli_getopt */
			return CLI_USAGE;
		}
	}
	if ((e = cli_kv_join(&a->kv, &a->dtypes, &a->ndtypes)))
		return e;
	if (a->list) {
		*done = true;
		return list_configs(a);
	}
	if (optind >= argc)
		return cli_usage("no config given");
	if (a->json && a->human)
		return cli_usage("--json keeps numbers plain; give it or "
				 "--human, not both");
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = {0};
	struct kv_model **models = NULL;
	size_t nmodels = 0;
	bool done = false, state = false;
	int status;

	cli_init("kvsize");
	status = parse(argc, argv, &a, &done);
	if (status || done)
		goto out;

	/* load every config first: bad input fails before any row */
	models = calloc((size_t)(argc - optind), sizeof *models);
	if (!models) {
		cli_error("out of memory");
		status = CLI_FAIL;
		goto out;
	}
	for (int i = optind; i < argc; i++) {
		if ((status = cli_load_model(argv[i], &models[nmodels])))
			goto out;
		if (models[nmodels]->note[0])
			cli_warn("%s: %s", models[nmodels]->name,
				 models[nmodels]->note);
		state |= models[nmodels]->ssm_version > 0;
		nmodels++;
	}

	/* every row is computed once before any is printed, so that bad
	 * input (a tp that splits no head, an overflow) leaves stdout empty */
	if ((status = rows(models, nmodels, &a, NULL, state)))
		goto out;
	struct cli_table t;
	/* rows with --tp or --block-size carry them, for kvfit to go on */
	const char *cols[CLI_NCOLS(row_cols) + 4];
	size_t ncols = CLI_NCOLS(row_cols);
	memcpy(cols, row_cols, sizeof row_cols);
	if (state)
		cols[ncols++] = "state_bytes";
	if (a.tp > 1 || a.blocks) {
		cols[ncols++] = "tp";
		cols[ncols++] = "block_size";
	}
	/* a config from stdin goes on down a pipe (not to a terminal), on
	 * its row */
	for (size_t i = 0; i < nmodels && !isatty(fileno(stdout)); i++)
		if (models[i]->json) {
			cols[ncols++] = "config";
			break;
		}
	if (a.per_layer)
		cli_table_begin(&t, layer_cols, CLI_NCOLS(layer_cols), a.json,
				a.header, a.human);
	else
		cli_table_begin(&t, cols, ncols, a.json, a.header, a.human);
	status = rows(models, nmodels, &a, &t, state);
	cli_table_end(&t);
out:
	for (size_t i = 0; i < nmodels; i++)
		kv_model_free(models[i]);
	free(models);
	free(a.ctx);
	free(a.dtypes);
	free(a.kv.k);
	free(a.kv.v);
	free(a.users);
	free(a.blocks);
	return cli_finish(status);
}
