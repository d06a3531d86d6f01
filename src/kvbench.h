/*
 * kvbench.h - what kvbench's files share: its options, the models and
 * checkpoints it reads (kvbench_input.c), a point's row and the progress
 * line (kvbench_rows.c), and --profile (kvbench_profile.c).
 */
#ifndef KVBENCH_H
#define KVBENCH_H

#include <stdbool.h>

#include "cli.h"
#include "kv/gpu.h"
#include "kv/sweep.h"

/* The options: the sweep, and what the tool keeps of each model. */
struct args {
	struct kv_sweep sw; /* what the sweep asks for */
	struct cli_kv kv;   /* --cache-type-k and -v, until joined */
	double max_regress; /* < 0: no gate */
	enum kv_dtype *wt;  /* each model's own weights' type */
	struct kv_st **ck;  /* each model's checkpoint, mapped for its quality
			     * points, or NULL */
	const char *baseline;
	const char *profile;     /* --profile FILE */
	const char *not_profile; /* an option a profile does not take */
	bool json, header;
	bool random;        /* --random-weights */
};

/* The configs named (none: GPT-2 small), each one's weights' type and
 * checkpoint (where one lies beside it; kept for the quality points), and
 * the sweep's points over them. Returns 0, CLI_USAGE or CLI_FAIL
 * (said). */
int kvbench_load(int argc, char **argv, struct kv_model ***models,
		 size_t *nmodels, struct kv_sweep_points *s, struct args *a);

/* --baseline FILE: the points of a saved run (its header names the
 * columns), the models they name and their checkpoints. Returns 0,
 * CLI_USAGE or CLI_FAIL (said). */
int kvbench_baseline(struct args *a, const char *path,
		     struct kv_model ***models, size_t *nmodels,
		     struct kv_sweep_points *s);

/* Point p's row into t, as measured in o; ratio and the baseline's time
 * with baseline (its two columns). */
void kvbench_row(struct cli_table *t, const struct kv_sweep_point *p,
		 const struct kv_sweep_out *o, double ratio, bool baseline);

/* The progress line on a terminal: the point's place, every dimension
 * the sweep varies, and the time left at the pace so far. */
void kvbench_progress(const struct kv_sweep_point *p,
		      struct kv_model *const *models, size_t i, size_t n,
		      uint64_t t0);

/* --profile FILE, before anything runs: this machine into *local, and
 * whether FILE can be written. Returns 0, or CLI_USAGE / CLI_FAIL said. */
int kvbench_profile_begin(const char *path, struct kv_gpu *local);

/* --profile FILE, once every point of s ran (outs[i] of s->p[i]): the
 * entries of this machine written to FILE, a warning for a step that ran
 * past its reference. Returns 0 or CLI_FAIL said. */
int kvbench_profile_end(const char *path, const struct kv_sweep *w,
			struct kv_model *const *models,
			const struct kv_sweep_points *s,
			const struct kv_sweep_out *outs,
			const struct kv_gpu *local);

#endif
