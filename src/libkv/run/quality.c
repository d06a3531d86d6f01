/*
 * quality.c - the comparison of a compact cache with the f32 one: the
 * arithmetic of the metrics and the teacher-forced pair of runs that
 * kvdecode and kvbench report.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/decode.h"
#include "kv/bench.h"
#include "kv/quality.h"
#include "kv/units.h"

uint64_t kv_argmax(const float *x, uint64_t n)
{
	uint64_t best = 0;
	for (uint64_t i = 1; i < n; i++)
		if (x[i] > x[best])
			best = i;
	return best;
}

/* log sum exp of n values, in double. */
static double lse(const float *x, uint64_t n)
{
	double mx = x[kv_argmax(x, n)], sum = 0;
	for (uint64_t i = 0; i < n; i++)
		sum += exp((double)x[i] - mx);
	return mx + log(sum);
}

double kv_kl_div(const float *ref, const float *test, uint64_t n)
{
	double lr = lse(ref, n), lt = lse(test, n), kl = 0;
	for (uint64_t i = 0; i < n; i++) {
		double a = (double)ref[i] - lr, b = (double)test[i] - lt;
		kl += exp(a) * (a - b);
	}
	return kl > 0 ? kl : 0; /* rounding may leave -1e-17 */
}

void kv_quality_add(struct kv_quality *q, const float *ref,
		    const float *test, uint64_t n)
{
	q->steps++;
	q->agree += kv_argmax(ref, n) == kv_argmax(test, n);
	for (uint64_t i = 0; i < n; i++) {
		double d = fabs((double)ref[i] - (double)test[i]);
		q->sum_abs += d;
		q->max_abs = d > q->max_abs ? d : q->max_abs;
	}
	q->logits += n;
	q->sum_kl += kv_kl_div(ref, test, n);
}

double kv_quality_top1(const struct kv_quality *q)
{
	return q->steps ? (double)q->agree / (double)q->steps : 0;
}

double kv_quality_mean_abs(const struct kv_quality *q)
{
	return q->logits ? q->sum_abs / (double)q->logits : 0;
}

double kv_quality_mean_kl(const struct kv_quality *q)
{
	return q->steps ? q->sum_kl / (double)q->steps : 0;
}

/* One run over the prompt and gen steps: the reference (ref == NULL on
 * entry to tokens: it chooses them and keeps its logits in keep) or the
 * test (fed tokens, compared with keep). */
struct pass {
	const struct kv_model *m;
	struct kv_engine_opts o;
	uint64_t prompt, gen, users, seed, top_k;
	double temperature;
	uint32_t *text;  /* (users, prompt + gen) */
	float *keep;     /* (gen, users, vocab): the reference's logits */
};

static int one_pass(struct pass *p, bool test, struct kv_quality *q,
		    struct kv_quality_step *steps, double *ms, char *err)
{
	struct kv_engine *e;
	struct kv_decode *d;
	struct kv_decode_step st;
	uint64_t U = p->users, cap = p->prompt + p->gen;
	int rc = kv_engine_new(p->m, &p->o, &e, err);
	if (rc)
		return rc;
	/* the reference draws its own text; the test is fed it */
	struct kv_decode_opts dop = {p->prompt, p->gen, true, false,
				     p->temperature, p->top_k, p->seed,
				     test ? p->text : NULL, NULL};
	if ((rc = kv_decode_open(e, &dop, &d))) {
		kv_engine_free(e);
		snprintf(err, KV_ERRLEN, "out of memory");
		return rc;
	}
	uint64_t v = kv_engine_vocab(e);
	while ((rc = kv_decode_next(d, &st)) == 1) {
		uint64_t step = st.step, len = st.ctx;
		if (step > 1 && ms)
			*ms += st.ms[1];
		const float *lgs = kv_decode_logits(d, true);
		float *keep = p->keep + (step - 1) * U * v;
		for (uint64_t u = 0; u < U; u++) {
			const float *lg = lgs + u * v;
			uint32_t tok = st.next[1][u];
			if (!test) {
				memcpy(keep + u * v, lg, v * sizeof *lg);
				p->text[u * cap + len] = tok;
				continue;
			}
			kv_quality_add(q, keep + u * v, lg, v);
			if (steps) {
				struct kv_quality_step *x =
					&steps[(step - 1) * U + u];
				x->token_ref = p->text[u * cap + len];
				x->token_test = tok;
				x->max_abs = kv_max_abs_diff(keep + u * v, lg,
							     v);
				x->kl = kv_kl_div(keep + u * v, lg, v);
			}
		}
	}
	if (rc < 0)
		snprintf(err, KV_ERRLEN, "a forward pass failed");
	kv_decode_close(d);
	kv_engine_free(e);
	return rc < 0 ? rc : 0;
}

int kv_quality_run(const struct kv_model *m, const struct kv_engine_opts *o,
		   uint64_t prompt, uint64_t gen, double temperature,
		   uint64_t top_k, uint64_t seed, struct kv_quality *q,
		   struct kv_quality_step *steps, double *ms_test, char *err)
{
	struct pass p = {m, kv_decode_compare_opts(o, prompt, gen, true), prompt, gen,
			 o->users, seed, top_k, temperature, NULL, NULL};
	uint64_t vocab = o->vocab ? o->vocab : m->vocab, cap = prompt + gen;
	int rc;
	memset(q, 0, sizeof *q);
	if (ms_test)
		*ms_test = 0;
	if (prompt == 0 || gen == 0 || o->users == 0) {
		snprintf(err, KV_ERRLEN, "prompt, new and users: at least 1");
		return KV_EINVAL;
	}
	p.text = calloc(o->users * cap, sizeof *p.text);
	p.keep = malloc(o->users * gen * vocab * sizeof *p.keep);
	if (!p.text || !p.keep) {
		snprintf(err, KV_ERRLEN, "out of memory");
		rc = KV_ENOMEM;
		goto out;
	}
	for (uint64_t u = 0; u < o->users; u++)
		for (uint64_t i = 0; i < prompt; i++)
			p.text[u * cap + i] = kv_rand_token(seed, u, i, vocab);
	if ((rc = one_pass(&p, false, q, steps, NULL, err)))
		goto out;
	p.o = kv_decode_compare_opts(o, prompt, gen, false);
	rc = one_pass(&p, true, q, steps, ms_test, err);
out:
	free(p.text);
	free(p.keep);
	return rc;
}

double kv_ppl_value(const struct kv_ppl *p)
{
	return p->tokens ? exp(p->nll / (double)p->tokens) : 0;
}

struct kv_engine_opts kv_ppl_opts(const struct kv_engine_opts *o, uint64_t n)
{
	struct kv_engine_opts e = *o;
	e.users = 1;
	e.max_ctx = n;
	e.max_chunk = 1;
	e.cache = true;
	return e;
}

int kv_ppl_estimate(const struct kv_model *m, const struct kv_engine_opts *o,
		    uint64_t n, bool keep, uint64_t *bytes, char *err)
{
	struct kv_engine_opts e = kv_ppl_opts(o, n);
	struct kv_engine_size sz;
	struct kv_model *eff;
	int rc = kv_engine_estimate(m, &e, &sz, err);
	if (rc || (rc = kv_engine_model(m, &e, &eff, err)))
		return rc;
	uint64_t v = eff->vocab, kept = 0;
	kv_model_free(eff);
	if (keep && (kv_mul(n - 1, v, &kept) ||
		     kv_mul(kept, sizeof(float), &kept))) {
		snprintf(err, KV_ERRLEN, "%s: the text's logits overflow 64 "
			 "bits", m->name);
		return KV_ERANGE;
	}
	return kv_add(sz.total, kept, bytes);
}

int kv_ppl_run(const struct kv_model *m, const struct kv_engine_opts *o,
	       const uint32_t *ids, uint64_t n, const float *ref, float *keep,
	       struct kv_ppl *out, char *err)
{
	struct kv_engine_opts e = kv_ppl_opts(o, n);
	struct kv_engine *eng;
	memset(out, 0, sizeof *out);
	if (n < 2) {
		snprintf(err, KV_ERRLEN, "a text of %llu token%s scores "
			 "nothing; perplexity needs 2 at least",
			 (unsigned long long)n, n == 1 ? "" : "s");
		return KV_EINVAL;
	}
	int rc = kv_engine_new(m, &e, &eng, err);
	if (rc)
		return rc;
	uint64_t v = kv_engine_vocab(eng);
	for (uint64_t i = 0; i < n; i++)
		if (ids[i] >= v) { /* the last is only read, as lg[ids[n-1]] */
			kv_engine_free(eng);
			snprintf(err, KV_ERRLEN, "the text's token %llu is id %u, "
				 "not below the model's %llu",
				 (unsigned long long)i, ids[i],
				 (unsigned long long)v);
			return KV_EINVAL;
		}
	float *lg = malloc(v * sizeof *lg);
	if (!lg) {
		kv_engine_free(eng);
		snprintf(err, KV_ERRLEN, "out of memory");
		return KV_ENOMEM;
	}
	for (uint64_t i = 0; i + 1 < n && !rc; i++) {
		uint64_t t0 = kv_now_ns();
		if ((rc = kv_engine_forward(eng, ids + i, 1, i, true, lg))) {
			snprintf(err, KV_ERRLEN, "the forward pass at position "
				 "%llu failed: %s",
				 (unsigned long long)i, kv_strerror(rc));
			break;
		}
		out->ms += (double)(kv_now_ns() - t0) / 1e6;
		out->nll += lse(lg, v) - (double)lg[ids[i + 1]];
		out->tokens++;
		if (ref)
			kv_quality_add(&out->q, ref + i * v, lg, v);
		if (keep)
			memcpy(keep + i * v, lg, v * sizeof *lg);
	}
	free(lg);
	kv_engine_free(eng);
	return rc;
}
