/*
 * fit_solve.h - kv_fit_solve as the plan's tests call it: the fit, which
 * must succeed, saying why where it does not.
 */
#ifndef FIT_SOLVE_H
#define FIT_SOLVE_H

#include <stdio.h>

#include "kv/fit.h"
#include "test.h"

static struct kv_fit solve(const struct kv_fit_in *in)
{
	char err[KV_ERRLEN];
	struct kv_fit f = {0};
	int e = kv_fit_solve(in, &f, err);
	if (e)
		fprintf(stderr, "solve: %s\n", err);
	CHECK(e == 0);
	return f;
}

#endif
