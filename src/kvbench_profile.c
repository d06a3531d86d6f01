/*
 * kvbench_profile.c - kvbench --profile FILE: this machine as a device
 * for kvfit --gpu-file. What a profile measures and how an entry is made
 * of it is libkv's (kv_sweep_profile, kv_gpu_profile); here the file is
 * checked before the run and written after it.
 */
#include <stdlib.h>
#include <time.h>

#include "kvbench.h"

static const char comment[] =
	"This machine, as kvbench --profile measured it: an entry per thread "
	"count, local-jN, the fastest (its decode step's bytes a second) "
	"also named local. Read it with "
	"kvfit --gpu-file FILE --gpu local. Each entry's note says what its "
	"figures are; measure again after the machine changes.";

int kvbench_profile_begin(const char *path, struct kv_gpu *local)
{
	char err[KV_ERRLEN];
	if (kv_gpus_writable(path, err))
		return cli_usage("--profile: %s", err);
	if (kv_gpu_local(local, err)) {
		cli_error("%s", err);
		return CLI_FAIL;
	}
	return 0;
}

int kvbench_profile_end(const char *path, const struct kv_sweep *w,
			struct kv_model *const *models,
			const struct kv_sweep_points *s,
			const struct kv_sweep_out *outs,
			const struct kv_gpu *local)
{
	char how[256], err[KV_ERRLEN];
	struct kv_gpus *g;
	for (size_t i = 0; i < s->n; i++)
		if (outs[i].r.efficiency > KV_GPU_EFF_MAX)
			cli_warn("%s at %llu tokens on %llu thread%s: %.2f of "
				 "its reference (it ran from cache); %s keeps "
				 "2",
				 kv_bench_name(s->p[i].bench),
				 (unsigned long long)s->p[i].ctx,
				 (unsigned long long)s->p[i].threads,
				 s->p[i].threads == 1 ? "" : "s",
				 outs[i].r.efficiency, path);
	kv_sweep_profile_how(w, models[0], s, how, sizeof how);
	if (kv_sweep_profile_gpus(s, models, outs, s->n, local, time(NULL),
				  how, &g, err)) {
		cli_error("%s", err);
		return CLI_FAIL;
	}
	char *text = kv_gpus_json(g->gpu, g->n, comment, kv_gpu_profile_note);
	int status = 0;
	if (!text) {
		cli_error("%s: out of memory", path);
		status = CLI_FAIL;
	} else if (kv_gpus_save(path, text, err)) {
		cli_error("%s", err);
		status = CLI_FAIL;
	}
	free(text);
	kv_gpus_free(g);
	return status;
}
