/*
 * kvdecode_runs.c - kvdecode's walks over the runs of its lists (but
 * --ppl's, kvdecode_ppl.c): the decode loop's, each run estimated once
 * and checked before any runs, then each on an engine of its own; and
 * --lengths', each run counted before any row prints. What a run prints
 * is kvdecode_report.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kvdecode.h"

/* Refuses run r when it is larger than the memory it may take
 * (kv_run_memory), naming what fits (and the run, of several): sz its
 * estimate, the engine's bytes and the loop's own. */
static int check_memory(const struct kvd_run *r, const struct kv_model *m,
			const struct kv_decode_size *sz)
{
	char err[KV_ERRLEN], about[128];
	uint64_t avail, usable;
	int e = kv_run_memory(&avail, &usable, err);
	if (e)
		return cli_kv_error(e, err);
	if ((e = kv_run_fits(m, &r->o, sz->need, sz->loop, avail, usable,
			     err))) {
		char msg[2 * KV_ERRLEN];
		snprintf(msg, sizeof msg, "%s%s: %s",
			 kvd_about(r, about, sizeof about), m->name, err);
		return cli_kv_error(e, msg);
	}
	return 0;
}

/* The decode loop of run r on e (freed here, before the comparison's
 * own engines), the comparison with an f32 cache, and the summary; sz
 * the run's estimate. */
static int decode(const struct kvd_run *r, const struct kv_model *m,
		  const struct kv_decode_size *sz, struct kv_engine **e)
{
	const struct kvd_opts *a = r->a;
	char err[KV_ERRLEN];
	struct kv_decode_result res;
	struct kv_quality q = {0};
	struct kv_model *eff = NULL;
	int status = kvdecode_run(r, *e, &res);
	if (!status && kv_engine_model(m, &r->o, &eff, err)) {
		cli_error("%s", err);
		status = CLI_FAIL;
	}
	kv_engine_free(*e);
	*e = NULL;
	if (!status && compact(a) &&
	    kv_quality_run(m, &r->o, a->prompt, a->gen, a->temperature,
			   a->top_k, a->e.seed, &q, NULL, NULL, err)) {
		cli_error("%s", err);
		status = CLI_FAIL;
	}
	if (!status)
		kvdecode_say(r, eff, sz, &res, &q);
	if (!status && r->s->summary_f)
		kvdecode_summary(r, eff, &res, &q);
	if (!status && kv_decode_differ(&res, a->tol))
		status = CLI_FAIL;
	kv_model_free(eff);
	return status;
}

/* What run r allocates, into *sz; a refusal names the run. */
static int estimate(const struct kvd_run *r, const struct kv_model *m,
		    struct kv_decode_size *sz)
{
	char err[KV_ERRLEN], about[128];
	int rc = kv_decode_estimate(m, &r->o, r->a->prompt, r->a->gen,
				    compact(r->a), sz, err);
	if (rc) {
		cli_error("%s%s", kvd_about(r, about, sizeof about), err);
		return cli_exit(rc);
	}
	return 0;
}

/* Run r on an engine of its own: the decode loop, or --prefix-reuse's
 * requests; sz its estimate. */
static int run(const struct kvd_run *r, const struct kv_model *m,
	       const struct kv_decode_size *sz)
{
	char err[KV_ERRLEN];
	struct kv_engine *e = NULL;
	int st, rc;
	kvd_say_run(r);
	if ((rc = kv_engine_new(m, &r->o, &e, err))) {
		cli_error("%s", err);
		st = cli_exit(rc);
	} else {
		st = r->a->e.prefix ? kvdecode_prefix(r, e)
				    : decode(r, m, sz, &e);
	}
	kv_engine_free(e);
	return st;
}

int kvdecode_runs(const struct kvd_opts *a, struct kvd_state *s,
		  const struct kv_model *m)
{
	struct kv_decode_size *sz = calloc(a->nruns, sizeof *sz);
	struct kvd_run r;
	uint64_t ctx = 0;
	int status = 0;
	if (!sz) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	for (kvd_run_first(&r, a, s); kvd_run_more(&r) && !status;
	     kvd_run_next(&r)) {
		status = estimate(&r, m, &sz[r.k]);
		ctx = r.o.max_ctx;
	}
	/* the context does not vary with the lists: one warning */
	if (!status && m->max_pos && ctx > m->max_pos && !s->ckpt)
		cli_warn("%s: %llu positions are beyond the config's %llu; "
			 "run anyway, the weights being random",
			 m->name, (unsigned long long)ctx,
			 (unsigned long long)m->max_pos);
	for (kvd_run_first(&r, a, s); kvd_run_more(&r) && !status;
	     kvd_run_next(&r))
		status = a->dry_run ? kvdecode_plan(&r, m, &sz[r.k].engine)
				    : check_memory(&r, m, &sz[r.k]);
	if (!status && !a->dry_run && a->summary && !a->e.prefix &&
	    !(s->summary_f = fopen(a->summary, "w"))) {
		cli_error("%s: %s", a->summary, strerror(errno));
		status = CLI_USAGE;
	}
	if (status || a->dry_run) {
		free(sz);
		return status;
	}
	for (kvd_run_first(&r, a, s); kvd_run_more(&r) && status != CLI_USAGE;
	     kvd_run_next(&r)) {
		int st = run(&r, m, &sz[r.k]);
		if (st > status)
			status = st;
	}
	free(sz);
	return status;
}

int kvdecode_lengths(const struct kvd_opts *a, struct kvd_state *s,
		     const struct kv_model *m)
{
	char err[KV_ERRLEN], about[128];
	struct kv_lengths_report *x = calloc(a->nruns, sizeof *x);
	struct kvd_run r;
	if (!x) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	/* every run counted before any row: bad input prints none */
	for (kvd_run_first(&r, a, s); kvd_run_more(&r); kvd_run_next(&r)) {
		int rc = kv_decode_lengths(m, r.o, &a->len, r.e.users,
					   a->e.seed, a->block_set,
					   a->e.pool_blocks, &x[r.k], err);
		if (rc) {
			cli_error("%s%s", kvd_about(&r, about, sizeof about),
				  err);
			free(x);
			return cli_exit(rc);
		}
	}
	for (kvd_run_first(&r, a, s); kvd_run_more(&r); kvd_run_next(&r))
		kvdecode_lengths_row(&r, &x[r.k]);
	kvd_table_close(s);
	fflush(stdout);
	for (kvd_run_first(&r, a, s); kvd_run_more(&r); kvd_run_next(&r))
		kvdecode_lengths_say(&r, m, &x[r.k]);
	free(x);
	return 0;
}
