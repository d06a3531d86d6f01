/*
 * props.h - what every sizing of an accepted config must keep, whatever the
 * config: checked on every input the config fuzzers accept and, by
 * test_props, on every config the project ships or tests.
 *
 *   - KV bytes never decrease as the context grows (pages or not);
 *   - fp8 <= bf16 <= f32 bytes;
 *   - n users hold n times one user's bytes, cache and state;
 *   - one rank's bytes under tensor parallelism, times the ranks, hold at
 *     least the whole;
 *   - kvfit's users never grow when the GPU shrinks or the weights grow,
 *     under every engine's rules (but SGLang's whole Mamba states:
 *     props_state_split).
 *
 * kv_props_check() returns NULL, or what failed (a static string).
 */
#ifndef KV_PROPS_H
#define KV_PROPS_H

#include <stdio.h>

#include "kv/fit.h"
#include "kv/layout.h"

/* bytes at ctx, or UINT64_MAX when it cannot be sized */
static uint64_t props_bytes(const struct kv_model *m, enum kv_dtype t,
			    uint32_t tp, uint64_t block, uint64_t ctx,
			    uint64_t users)
{
	char err[KV_ERRLEN];
	struct kv_opts o = kv_opts_default(m);
	uint64_t b;
	o.k_dtype = o.v_dtype = t;
	o.tp = tp;
	o.block = block;
	return kv_model_bytes(m, &o, ctx, users, &b, err) ? UINT64_MAX : b;
}

static const char *props_sizes(const struct kv_model *m)
{
	static const uint64_t ctxs[] = {1, 2, 3, 15, 16, 17, 100, 4095, 4096,
					4097, 65536, 1 << 20};
	const size_t nc = sizeof ctxs / sizeof *ctxs;
	const enum kv_dtype ts[] = {m->dtype, KV_DTYPE_F32, KV_DTYPE_BF16,
				    KV_DTYPE_FP8, KV_DTYPE_Q4_0};
	for (size_t t = 0; t < sizeof ts / sizeof *ts; t++)
		for (uint64_t block = 0; block <= 16; block += 16) {
			uint64_t prev = 0;
			for (size_t i = 0; i < nc; i++) {
				uint64_t b = props_bytes(m, ts[t], 1, block,
							 ctxs[i], 1);
				if (b < prev)
					return "bytes decrease as the context "
					       "grows";
				prev = b;
			}
		}
	uint64_t f32 = props_bytes(m, KV_DTYPE_F32, 1, 0, 4096, 1);
	uint64_t bf16 = props_bytes(m, KV_DTYPE_BF16, 1, 0, 4096, 1);
	uint64_t fp8 = props_bytes(m, KV_DTYPE_FP8, 1, 0, 4096, 1);
	if (f32 != UINT64_MAX && !(fp8 <= bf16 && bf16 <= f32))
		return "fp8 <= bf16 <= f32 does not hold";
	for (uint64_t block = 0; block <= 16; block += 16) {
		uint64_t one = props_bytes(m, m->dtype, 1, block, 1000, 1);
		uint64_t five = props_bytes(m, m->dtype, 1, block, 1000, 5);
		if (one != UINT64_MAX && one <= UINT64_MAX / 5 &&
		    five != 5 * one)
			return "5 users do not hold 5 times one user's bytes";
	}
	struct kv_opts o = kv_opts_default(m);
	uint64_t s1, s5;
	if (!kv_model_state_bytes(m, &o, 1, &s1) &&
	    !kv_model_state_bytes(m, &o, 5, &s5) && s1 <= UINT64_MAX / 5 &&
	    s5 != 5 * s1)
		return "5 users do not hold 5 times one user's state";
	uint64_t whole = props_bytes(m, m->dtype, 1, 0, 4096, 1);
	for (uint32_t tp = 2; tp <= 64 && whole != UINT64_MAX; tp *= 2) {
		uint64_t rank = props_bytes(m, m->dtype, tp, 0, 4096, 1);
		if (rank != UINT64_MAX && rank <= UINT64_MAX / tp &&
		    rank * tp < whole)
			return "tp ranks hold less than the whole";
	}
	return NULL;
}

/* users of a plan, or -1 when it cannot be planned */
static double props_users(const struct kv_model *m,
			  const struct kv_server *e, uint64_t mem,
			  uint64_t weights)
{
	char err[KV_ERRLEN];
	struct kv_fit f;
	struct kv_fit_in in = {
		.m = m,
		.kv_dtype = kv_server_kv_dtype(e, m),
		.w_dtype = kv_server_weights_dtype(e, m->dtype),
		.weights = weights,
		.mem = mem,
		.tp = 1,
		.pp = 1,
		.ctx = 4096,
		.server = e,
	};
	return kv_fit_solve(&in, &f, err) ? -1 : f.users;
}

/* Whether the engine splits m's memory between whole Mamba states and
 * KV tokens as SGLang does (_handle_max_mamba_cache subtracts the floored
 * count of states times a state's bytes): there, less memory can mean one
 * state fewer and up to a state's bytes more KV tokens, so its users may
 * grow by that much when the weights grow. */
static bool props_state_split(const struct kv_model *m,
			      const struct kv_server *e)
{
	struct kv_opts o = kv_opts_default(m);
	uint64_t st;
	return e->kind == KV_SERVER_SGLANG &&
	       !kv_model_state_bytes(m, &o, 1, &st) && st > 0;
}

static const char *props_fit(const struct kv_model *m)
{
	const struct kv_server *e;
	for (size_t i = 0; (e = kv_server_at(i)); i++) {
		uint64_t w = 2000000000;
		double big = props_users(m, e, 80000000000, w);
		double small = props_users(m, e, 40000000000, w);
		double heavy = props_users(m, e, 80000000000, 2 * w);
		if (big >= 0 && small > big)
			return "users grow when the GPU shrinks";
		if (big >= 0 && heavy > big && !props_state_split(m, e))
			return "users grow when the weights grow";
	}
	return NULL;
}

static const char *kv_props_check(const struct kv_model *m)
{
	const char *why = props_sizes(m);
	return why ? why : props_fit(m);
}

static void props_report(const struct kv_model *m, const char *why)
{
	fprintf(stderr, "property failed for %s (%s): %s\n", m->name,
		m->model_type, why);
}

#endif
