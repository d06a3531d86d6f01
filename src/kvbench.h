/*
 * kvbench.h - what kvbench's two files share: a point's row and the
 * progress line (kvbench_rows.c).
 */
#ifndef KVBENCH_H
#define KVBENCH_H

#include <stdbool.h>

#include "cli.h"
#include "kv/gpu.h"
#include "kv/sweep.h"

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
