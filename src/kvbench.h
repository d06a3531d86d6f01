/*
 * kvbench.h - what kvbench's two files share: a point's row and the
 * progress line (kvbench_rows.c).
 */
#ifndef KVBENCH_H
#define KVBENCH_H

#include <stdbool.h>

#include "cli.h"
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

#endif
