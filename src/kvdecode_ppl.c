/*
 * kvdecode_ppl.c - kvdecode --ppl FILE: the text's perplexity through the
 * model's tokenizer, teacher forced a token at a time with an f32 cache
 * and then each --kv-dtype of the list, in every run of the lists; rows on
 * stdout, the f32 perplexity of each run on stderr.
 */
#include <stdlib.h>

#include "cli.h"
#include "kvdecode.h"

/* The text of FILE as ids, the first of them the template's; at most
 * the model's positions and 1,024, said when cut. */
static int ppl_ids(const struct kvd_opts *a, const struct kv_tok *tok,
		   const struct kv_model *m, uint32_t **ids, size_t *n)
{
	char *text;
	size_t len;
	int status = cli_read_text(a->ppl, &text, &len);
	if (status)
		return status;
	if (!tok) {
		free(text);
		return cli_usage("--ppl: %s has no tokenizer.json to read "
				 "%s with",
				 m->name, a->ppl);
	}
	if (kv_tok_encode(tok, text, len, true, ids, n)) {
		free(text);
		cli_error("out of memory");
		return CLI_FAIL;
	}
	free(text);
	uint64_t most = m->max_pos && m->max_pos < 1024 ? m->max_pos : 1024;
	if (*n > most) {
		cli_warn("%s: %zu tokens; the first %llu are scored", a->ppl,
			 *n, (unsigned long long)most);
		*n = (size_t)most;
	}
	if (*n < 2)
		return cli_usage("--ppl: %s is %zu token%s; perplexity needs "
				 "2 at least",
				 a->ppl, *n, *n == 1 ? "" : "s");
	return 0;
}

/* Run r's f32 engine for the n tokens. */
static struct kv_engine_opts ppl_opts(const struct kvd_run *r, size_t n)
{
	struct kv_engine_opts e = kv_ppl_opts(&r->o, n);
	e.k_dtype = e.v_dtype = KV_DTYPE_F32;
	return e;
}

/* Run r's f32 engine into *e, checked (and every format's) before any
 * runs: 0, or CLI_USAGE naming the run (said). */
static int ppl_check(const struct kvd_run *r, const struct kv_model *m,
		     size_t n, struct kv_engine_opts *e)
{
	const struct kvd_opts *a = r->a;
	char err[KV_ERRLEN], about[128];
	uint64_t avail, usable, need;
	*e = ppl_opts(r, n);
	kvd_about(r, about, sizeof about);
	int rc;
	if ((rc = kv_run_memory(&avail, &usable, err)) ||
	    (rc = kv_ppl_estimate(m, e, n, true, &need, err)) ||
	    (rc = kv_run_fits(m, e, need, 0, avail, usable, err))) {
		char msg[2 * KV_ERRLEN];
		snprintf(msg, sizeof msg, "%s%s: %s", about, m->name, err);
		return cli_kv_error(rc, msg);
	}
	for (size_t i = 0; i < a->nfmts; i++) {
		struct kv_engine_opts f = *e;
		f.k_dtype = f.v_dtype = (enum kv_dtype)a->fmts[i];
		if ((rc = kv_ppl_estimate(m, &f, n, false, &need, err))) {
			char msg[2 * KV_ERRLEN];
			snprintf(msg, sizeof msg, "%s%s", about, err);
			return cli_kv_error(rc, msg);
		}
	}
	return 0;
}

/* Run r: the f32 reference (its logits into ref) and its row, then
 * each format's row, then the perplexity on stderr. */
static int ppl_run(const struct kvd_run *r, const struct kv_model *m,
		   const uint32_t *ids, size_t n, float *ref)
{
	static const char *const pcols[] = {
		"kv_dtype", "tokens", "nll", "ppl", "top1_agree", "mean_kl",
		"max_abs_logit_diff", "ms"};
	const struct kvd_opts *a = r->a;
	struct kv_engine_opts e = ppl_opts(r, n);
	char err[KV_ERRLEN];
	struct kv_ppl base;
	kvd_say_run(r);
	int rc = kv_ppl_run(m, &e, ids, n, NULL, ref, &base, err);
	if (rc) {
		cli_error("%s", err);
		return cli_exit(rc);
	}
	struct cli_table *t = kvd_table(r, pcols, CLI_NCOLS(pcols));
	for (size_t i = 0; i <= a->nfmts; i++) {
		struct kv_ppl p = base;
		enum kv_dtype f = i ? (enum kv_dtype)a->fmts[i - 1]
				    : KV_DTYPE_F32;
		if (i && f == KV_DTYPE_F32)
			continue; /* the reference, already its row */
		e.k_dtype = e.v_dtype = f;
		if (i && (rc = kv_ppl_run(m, &e, ids, n, ref, NULL, &p, err))) {
			cli_error("%s", err);
			return cli_exit(rc);
		}
		kvd_lead(r, t);
		cli_put_str(t, kv_dtype_name(f));
		cli_put_u64(t, p.tokens);
		cli_put_f(t, p.nll, 4);
		cli_put_f(t, kv_ppl_value(&p), 4);
		if (i) {
			cli_put_f(t, kv_quality_top1(&p.q), 4);
			cli_put_f(t, kv_quality_mean_kl(&p.q), 9);
			cli_put_f(t, p.q.max_abs, 6);
		} else {
			cli_put_empty(t);
			cli_put_empty(t);
			cli_put_empty(t);
		}
		cli_put_f(t, p.ms, 3);
		cli_row_end(t);
	}
	kvd_table_done(r);
	fflush(stdout);
	fprintf(stderr, "kvdecode: %s, perplexity over %zu tokens of "
		"%s: %.4f with an f32 cache\n",
		m->name, n, a->ppl, kv_ppl_value(&base));
	return 0;
}

int kvdecode_ppl(const struct kvd_opts *a, struct kvd_state *s,
		 const struct kv_model *m)
{
	char err[KV_ERRLEN];
	uint32_t *ids = NULL;
	size_t n;
	float *ref = NULL;
	struct kv_engine_opts e;
	struct kv_model *eff = NULL;
	struct kvd_run r;
	int status = ppl_ids(a, s->tok, m, &ids, &n);
	for (kvd_run_first(&r, a, s); kvd_run_more(&r) && !status;
	     kvd_run_next(&r))
		status = ppl_check(&r, m, n, &e);
	/* the vocabulary does not vary with the lists */
	if (!status)
		status = cli_kv_error(kv_engine_model(m, &e, &eff, err), err);
	if (!status && !(ref = malloc((n - 1) * eff->vocab * sizeof *ref))) {
		cli_error("out of memory");
		status = CLI_FAIL;
	}
	kv_model_free(eff);
	/* a run that fails leaves the others to run: the worst status */
	for (kvd_run_first(&r, a, s); kvd_run_more(&r) && ref;
	     kvd_run_next(&r)) {
		int st = ppl_run(&r, m, ids, n, ref);
		if (st > status)
			status = st;
	}
	free(ref);
	free(ids);
	return status;
}
