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
#include "kv/rows.h"
#include "kv/units.h"

static const char usage_head[] =
	"Usage: kvsize [OPTIONS] CONFIG...\n"
	"KV-cache bytes per token and per context of each model, from its\n"
	"Hugging Face config.json (a path, a name from --list, or - for stdin)\n"
	"or its GGUF file (llama.cpp's, a path).\n"
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

/* One row per layer of model m for one format, context and user count;
 * with t == NULL it only checks that every row can be computed. */
static int per_layer(struct cli_table *t, const struct kv_model *m,
		     const struct kv_opts *o, uint64_t ctx, uint64_t users)
{
	char err[KV_ERRLEN];
	for (uint32_t i = 0; i < m->n_layers; i++) {
		struct kv_lrow r;
		struct kv_cell cell;
		int e = kv_lrow_size(m, o, i, ctx, users, &r, err);
		if (e) {
			cli_error("%s", err);
			return cli_exit(e);
		}
		for (int c = 0; t && c < KV_LROW_NCOLS; c++) {
			kv_lrow_cell(&r, (enum kv_lrow_col)c, &cell);
			cli_put_cell(t, &cell);
		}
		if (t)
			cli_row_end(t);
	}
	return 0;
}

/* One summary row of model m, its columns cols; with t == NULL only the
 * check. */
static int row(struct cli_table *t, const enum kv_srow_col *cols,
	       const struct kv_model *m, const struct kv_opts *o,
	       bool asked_auto, uint64_t ctx, uint64_t users, bool state)
{
	char err[KV_ERRLEN];
	struct kv_srow r;
	struct kv_cell cell;
	int e = kv_srow_size(m, o, asked_auto, ctx, users, state, &r, err);
	if (e) {
		cli_error("%s", err);
		return cli_exit(e);
	}
	if (!t)
		return 0;
	for (size_t c = 0; c < t->ncols; c++) {
		kv_srow_cell(&r, cols[c], &cell);
		cli_put_cell(t, &cell);
	}
	cli_row_end(t);
	return 0;
}

/* Every row of the matrix config x format x context x users: printed into
 * t, or only checked when t is NULL (warnings are given on the check). */
static int rows(struct kv_model **models, size_t nmodels, const struct args *a,
		struct cli_table *t, const enum kv_srow_col *cols, bool state)
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
		/* by default 1 and the longest context: the one its runner
		 * is set to (an Ollama model's num_ctx), else the config's */
		uint64_t top = m->run_ctx ? m->run_ctx : m->max_pos;
		uint64_t defctx[2] = {1, top};
		const uint64_t *ctx = a->ctx ? a->ctx : defctx;
		size_t nctx = a->ctx ? a->nctx : (top > 1 ? 2 : 1);
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
						: row(t, cols, m, &o,
						      dts[d] < 0, ctx[c],
						      users[u], state);
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
			if ((e = cli_list("--block-size", optarg, KV_MAX_BLOCK,
					  &a->blocks, &a->nblocks)))
				return e;
			break;
		case 'c':
			free(a->ctx);
			if ((e = cli_sweep(cli_opt_as(), optarg, &a->ctx,
					     &a->nctx)))
				return e;
			break;
		case 'H': a->human = true; break;
		case 't':
			free(a->dtypes);
			if ((e = cli_dtypes(cli_opt_as(), optarg, &a->dtypes,
					    &a->ndtypes)))
				return e;
			break;
		case 'u':
			if ((e = cli_users(optarg, &a->users, &a->nusers)))
				return e;
			break;
		case OPT_MHA: a->mha = true; break;
		case OPT_CTK:
		case OPT_CTV:
			if ((e = cli_cache_type(c == OPT_CTK, optarg, &a->kv)))
				return e;
			break;
		case OPT_TP:
			if ((e = cli_u64(cli_opt_as(), optarg, 1, KV_MAX_RANKS, &v)))
				return e;
			a->tp = v;
			break;
		case OPT_PER_LAYER: a->per_layer = true; break;
		case OPT_LIST: a->list = true; break;
		default:
			e = cli_common(c, optarg, usage_head, usage_foot,
				       &a->json, &a->header, done);
			if (e == CLI_NOT_MINE) /* said by cli_getopt */
				return CLI_USAGE;
			if (e || *done)
				return e;
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
	if ((status = rows(models, nmodels, &a, NULL, NULL, state)))
		goto out;
	/* rows with --tp or --block-size carry them, for kvfit to go on; a
	 * config from stdin goes on down a pipe (not to a terminal), on its
	 * row */
	bool json = false;
	for (size_t i = 0; i < nmodels && !isatty(fileno(stdout)); i++)
		json |= models[i]->json != NULL;
	enum kv_srow_col cols[KV_SROW_NCOLS];
	const char *names[KV_SROW_NCOLS];
	size_t ncols = kv_srow_cols(state, a.tp > 1 || a.blocks, json, cols);
	for (size_t c = 0; c < ncols; c++)
		names[c] = kv_srow_names[cols[c]];
	struct cli_table t;
	if (a.per_layer)
		cli_table_begin(&t, kv_lrow_names, KV_LROW_NCOLS, a.json,
				a.header, a.human);
	else
		cli_table_begin(&t, names, ncols, a.json, a.header, a.human);
	status = rows(models, nmodels, &a, &t, cols, state);
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
