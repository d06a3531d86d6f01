/*
 * sample.c - what a decode loop needs around the engine: prompt tokens and
 * draws from the seeded generator, the choice of the next token, the
 * comparison of two sets of logits, and whether a run fits the memory it
 * may take (kv_run_memory, machine.c; the token-pass arithmetic of the
 * articles is decode.c's).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"
#include "kv/engine.h"
#include "kv/units.h"

uint32_t kv_rand_token(uint64_t seed, uint64_t user, uint64_t i,
		       uint64_t vocab)
{
	uint64_t key = kv_rand_key(seed, KV_STREAM_PROMPT + user);
	return (uint32_t)(kv_rand_bits(key, i) % (vocab ? vocab : 1));
}

/* The k-th largest of a[0 .. n) (1 <= k <= n), reordering a: Hoare's
 * selection, in descending order. */
static float kth_largest(float *a, int64_t n, int64_t k)
{
	int64_t lo = 0, hi = n - 1, want = k - 1;
	while (lo < hi) {
		float pivot = a[lo + (hi - lo) / 2];
		int64_t i = lo, j = hi;
		while (i <= j) {
			while (a[i] > pivot)
				i++;
			while (a[j] < pivot)
				j--;
			if (i <= j) {
				float t = a[i];
				a[i++] = a[j];
				a[j--] = t;
			}
		}
		/* [lo, j] >= pivot, [i, hi] <= pivot, between equal */
		if (want <= j)
			hi = j;
		else if (want >= i)
			lo = i;
		else
			return a[want];
	}
	return a[want];
}

uint32_t kv_sample(const float *logits, uint64_t vocab, double temperature,
		   uint64_t top_k, uint64_t seed, uint64_t user, uint64_t step,
		   float *work)
{
	uint64_t best = 0;
	for (uint64_t i = 1; i < vocab; i++)
		if (logits[i] > logits[best])
			best = i;
	if (temperature <= 0 || top_k == 1)
		return (uint32_t)best;
	/* the candidates: above the k-th largest, then those equal to it in
	 * index order until there are k */
	float thr = -INFINITY;
	uint64_t equal = vocab;
	if (top_k && top_k < vocab) {
		memcpy(work, logits, vocab * sizeof *work);
		thr = kth_largest(work, (int64_t)vocab, (int64_t)top_k);
		uint64_t above = 0;
		for (uint64_t i = 0; i < vocab; i++)
			above += logits[i] > thr;
		equal = top_k - above;
	}
	double mx = logits[best], total = 0;
	uint64_t eq = 0;
	for (uint64_t i = 0; i < vocab; i++)
		if (logits[i] > thr || (logits[i] == thr && eq++ < equal))
			total += exp((logits[i] - mx) / temperature);
	uint64_t key = kv_rand_key(seed, KV_STREAM_SAMPLE + user);
	double u = (double)(kv_rand_bits(key, step) >> 11) * 0x1p-53;
	double target = u * total, cum = 0;
	uint64_t last = best;
	eq = 0;
	for (uint64_t i = 0; i < vocab; i++)
		if (logits[i] > thr || (logits[i] == thr && eq++ < equal)) {
			cum += exp((logits[i] - mx) / temperature);
			last = i;
			if (cum > target)
				return (uint32_t)i;
		}
	return (uint32_t)last;
}

double kv_max_abs_diff(const float *a, const float *b, uint64_t n)
{
	double mx = 0;
	for (uint64_t i = 0; i < n; i++) {
		double d = fabs((double)a[i] - (double)b[i]);
		if (isnan(d))
			return INFINITY;
		mx = d > mx ? d : mx;
	}
	return mx;
}

int kv_run_fits(const struct kv_model *m, const struct kv_engine_opts *o,
		uint64_t need, uint64_t mine, uint64_t avail, uint64_t usable,
		char *err)
{
	if (!usable || need <= usable)
		return 0;
	uint64_t left = usable > mine ? usable - mine : 0; /* the engine's */
	struct kv_engine_opts one = *o;
	one.layers = 1;
	uint32_t layers = kv_engine_fit_layers(m, o, left);
	uint64_t vocab = layers ? 0 : kv_engine_fit_vocab(m, o, left);
	uint64_t vocab1 = layers || vocab ? 0
					  : kv_engine_fit_vocab(m, &one, left);
	char hint[96], b1[32], b2[32], b3[32];
	if (layers)
		snprintf(hint, sizeof hint, "--layers %u would fit", layers);
	else if (vocab)
		snprintf(hint, sizeof hint, "--vocab %llu would fit",
			 (unsigned long long)vocab);
	else if (vocab1)
		snprintf(hint, sizeof hint, "--layers 1 --vocab %llu would fit",
			 (unsigned long long)vocab1);
	else
		snprintf(hint, sizeof hint,
			 "fewer users or positions are needed");
	snprintf(err, KV_ERRLEN,
		 "the run needs %s (weights, cache and scratch) but %s is "
		 "available, %s of it to use; %s",
		 kv_format_iec(need, b1, sizeof b1),
		 kv_format_iec(avail, b2, sizeof b2),
		 kv_format_iec(usable, b3, sizeof b3), hint);
	return KV_EINVAL;
}
