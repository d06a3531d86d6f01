/*
 * kvbench_input.c - what kvbench reads: the configs named, the checkpoint
 * beside each (its weights' type, mapped for the quality points), a
 * baseline run's rows, and the sweep's points over them.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvbench.h"
#include "kv/safetensors.h"

/* --- checkpoints --- */

/* Model i's checkpoint, where one lies beside its config: the type of
 * its weights, and, with map (unless --random-weights), the checkpoint
 * itself, its tensors held to the config, kept for its quality points. */
static int open_ckpt(struct args *a, size_t i, const struct kv_model *m,
		     bool map)
{
	char err[KV_ERRLEN];
	struct kv_st *ck = NULL;
	int rc = kv_st_beside(m->path, map && !a->random, &ck, err);
	if (!rc && ck && map && !a->random)
		rc = kv_engine_ckpt_check(m, ck, err);
	if (rc) {
		kv_st_close(ck);
		cli_error("%s", err);
		return cli_exit(rc);
	}
	a->wt[i] = ck ? kv_st_weights_dtype(ck) : KV_DTYPE_F32;
	if (map && !a->random)
		a->ck[i] = ck;
	else
		kv_st_close(ck);
	return 0;
}

/* Room for n models' weights' types and checkpoints, the last none yet. */
static int grow(struct args *a, size_t n)
{
	enum kv_dtype *wt = realloc(a->wt, n * sizeof *wt);
	if (wt)
		a->wt = wt;
	struct kv_st **ck = realloc(a->ck, n * sizeof *ck);
	if (ck)
		a->ck = ck;
	if (!wt || !ck)
		return CLI_FAIL;
	a->ck[n - 1] = NULL;
	a->sw.model_ckpt = (const struct kv_st *const *)a->ck;
	return 0;
}

/* --- baseline --- */

/* The model of that name among *models, loaded (with its checkpoint)
 * when it is not; its index in *k. */
static int find_model(struct args *a, const char *name,
		      struct kv_model ***models, size_t *nmodels, size_t *k)
{
	for (*k = 0; *k < *nmodels; (*k)++)
		if (!strcmp((*models)[*k]->name, name))
			return 0;
	struct kv_model **mm = realloc(*models, (*k + 1) * sizeof *mm);
	if (!mm)
		return CLI_FAIL;
	*models = mm;
	if (grow(a, *k + 1))
		return CLI_FAIL;
	int status = !strcmp(name, "gpt2-small")
			     ? (kv_model_gpt2_small(&mm[*k]) ? CLI_FAIL : 0)
			     : cli_load_model(name, &mm[*k]);
	if (!status)
		(*nmodels)++;
	if (!status && strcmp(name, "gpt2-small"))
		status = open_ckpt(a, *k, mm[*k], true);
	return status;
}

int kvbench_baseline(struct args *a, const char *path,
		     struct kv_model ***models, size_t *nmodels,
		     struct kv_sweep_points *s)
{
	char *text, err[KV_ERRLEN];
	size_t len;
	struct kv_tsv t = {0};
	struct kv_sweep_cols c;
	int status = cli_read_text(path, &text, &len);
	if (status)
		return status;
	if ((status = cli_tsv_split(text, path, &t))) {
		free(text);
		return status;
	}
	if (!t.ncol)
		status = cli_usage("%s: empty; not a kvbench TSV", path);
	else if (kv_sweep_cols(t.cell, t.ncol, &c, err))
		status = cli_usage("%s: line %zu: %s", path, t.line[0], err);
	else if (!t.nrow)
		status = cli_usage("%s: no rows", path);
	for (size_t r = 1; !status && r <= t.nrow; r++) {
		struct kv_sweep_point p;
		char *name;
		size_t nc = t.width[r] < t.ncol ? t.width[r] : t.ncol;
		if (kv_sweep_row(&c, t.cell + r * t.ncol, nc, &p, &name, err))
			status = cli_usage("%s: line %zu: %s", path, t.line[r],
					   err);
		else if (name &&
			 !(status = find_model(a, name, models, nmodels,
					       &p.model)) &&
			 (p.mla || (*models)[p.model]->kv_lora_rank))
			p.kv_heads = 0; /* one latent, every head */
		if (!status && kv_sweep_add(s, p))
			status = CLI_FAIL;
	}
	kv_tsv_free(&t);
	free(text);
	return status;
}

int kvbench_load(int argc, char **argv, struct kv_model ***models,
		 size_t *nmodels, struct kv_sweep_points *s, struct args *a)
{
	size_t n = argc > optind ? (size_t)(argc - optind) : 1;
	bool quality = a->sw.bench[KV_BENCH_QUALITY];
	int status = 0;
	if (!(*models = calloc(n, sizeof **models)) ||
	    !(a->wt = calloc(n, sizeof *a->wt)) ||
	    !(a->ck = calloc(n, sizeof *a->ck)))
		return CLI_FAIL;
	a->sw.model_ckpt = (const struct kv_st *const *)a->ck;
	if (argc == optind) {
		if (kv_model_gpt2_small(&(*models)[0]))
			return CLI_FAIL;
		*nmodels = 1;
	}
	for (int i = optind; i < argc && !status; i++) {
		struct kv_model **m = &(*models)[*nmodels];
		if ((status = cli_load_model(argv[i], m)))
			break;
		(*nmodels)++;
		status = open_ckpt(a, *nmodels - 1, *m, quality);
	}
	a->sw.model_wt = a->wt;
	uint64_t ncpu = (uint64_t)sysconf(_SC_NPROCESSORS_ONLN);
	if (!status && a->profile && *nmodels > 1)
		status = cli_usage("--profile measures one model (default: "
				   "GPT-2 small), got %zu",
				   *nmodels);
	if (!status && (a->profile ? kv_sweep_profile(&a->sw, *models, ncpu, s)
				   : kv_sweep_expand(&a->sw, *models, *nmodels,
						     ncpu, s)))
		status = CLI_FAIL;
	return status;
}
