/*
 * kvdecode_runs.c - kvdecode's lists: --users, --block-size and --threads
 * given as lists run the decode once per combination, in order (users,
 * then block size, then threads, the last varying fastest). What the runs
 * print on stdout is one table, led by a column for each option given as
 * a list of more than one value (unless the rows have it already); one
 * value adds none, so a single run prints as it always has. Then the
 * runs themselves (but --ppl's and --lengths', which their reports
 * walk): each checked before any runs, then each on its own engine.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kvdecode.h"

static const struct {
	int key;
	const char *opt, *col;
	uint64_t lo, hi;
} lists[KVD_LISTS] = {
	[KVD_USERS] = {'u', "--users", "users", 1, 65536},
	[KVD_BLOCK] = {'b', "--block-size", "block_size", 0, UINT32_MAX},
	[KVD_THREADS] = {'j', "--threads", "threads", 1, 256},
};

/* Where list i's value of the run under way is kept. */
static uint64_t *value(struct args *a, int i)
{
	return i == KVD_USERS ? &a->users
	       : i == KVD_BLOCK ? &a->block_size
				: &a->threads;
}

static uint64_t now(const struct args *a, int i)
{
	return i == KVD_USERS ? a->users
	       : i == KVD_BLOCK ? a->block_size
				: a->threads;
}

int kvdecode_list(int c, const char *s, struct args *a)
{
	for (int i = 0; i < KVD_LISTS; i++) {
		if (lists[i].key != c)
			continue;
		int e = cli_u64s(lists[i].opt, s, lists[i].lo, lists[i].hi,
				 &a->list[i], &a->nlist[i]);
		if (e)
			return e;
		*value(a, i) = a->list[i][0];
		if (a->nlist[i] == 1) { /* one value: no list */
			free(a->list[i]);
			a->list[i] = NULL;
			a->nlist[i] = 0;
		}
		return 0;
	}
	return -1;
}

size_t kvdecode_count(const struct args *a)
{
	size_t n = 1;
	for (int i = 0; i < KVD_LISTS; i++)
		if (a->list[i])
			n *= a->nlist[i];
	return n;
}

void kvdecode_at(struct args *a, size_t k)
{
	a->run = k;
	for (int i = KVD_LISTS - 1; i >= 0; i--)
		if (a->list[i]) {
			*value(a, i) = a->list[i][k % a->nlist[i]];
			k /= a->nlist[i];
		}
}

/* "--users 2 --threads 4": the run's values of the lists. */
static const char *label(const struct args *a, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < KVD_LISTS && len < n; i++)
		if (a->list[i])
			len += (size_t)snprintf(buf + len, n - len,
						"%s%s %llu", len ? " " : "",
						lists[i].opt,
						(unsigned long long)now(a, i));
	return buf;
}

const char *kvdecode_about(const struct args *a, char *buf, size_t n)
{
	char l[96];
	if (a->nruns < 2)
		buf[0] = '\0';
	else
		snprintf(buf, n, "%s: ", label(a, l, sizeof l));
	return buf;
}

void kvdecode_say_run(const struct args *a)
{
	char l[96];
	if (a->nruns < 2)
		return;
	fflush(stdout);
	fprintf(stderr, "%s: run %zu of %zu: %s\n", cli_prog(), a->run + 1,
		a->nruns, label(a, l, sizeof l));
}

struct cli_table *kvdecode_table(const struct args *a,
				 const char *const *cols, size_t ncols)
{
	struct kvdecode_out *o = a->out;
	size_t k = 0;
	if (o->open)
		return &o->t;
	for (int i = 0; i < KVD_LISTS; i++) {
		o->lead[i] = a->list[i] != NULL;
		for (size_t j = 0; o->lead[i] && j < ncols; j++)
			o->lead[i] = strcmp(cols[j], lists[i].col) != 0;
		if (o->lead[i])
			o->cols[k++] = lists[i].col;
	}
	for (size_t j = 0; j < ncols && k < CLI_NCOLS(o->cols); j++)
		o->cols[k++] = cols[j];
	cli_table_begin(&o->t, o->cols, k, a->json, a->header, false);
	o->open = true;
	return &o->t;
}

void kvdecode_lead(const struct args *a, struct cli_table *t)
{
	for (int i = 0; i < KVD_LISTS; i++)
		if (a->out->lead[i])
			cli_put_u64(t, now(a, i));
}

void kvdecode_table_done(const struct args *a)
{
	struct kvdecode_out *o = a->out;
	if (o->open && (a->run + 1 >= a->nruns || o->t.fmt == CLI_TABLE))
		kvdecode_table_close(o);
}

void kvdecode_table_close(struct kvdecode_out *o)
{
	if (o->open)
		cli_table_end(&o->t);
	o->open = false;
}

/* --- the runs themselves --- */

/* Refuses a run larger than the memory it may take (kv_run_memory),
 * naming what fits (and the run, of several): need is the engine's bytes
 * plus `mine`, the loop's own. */
static int check_memory(const struct args *a, const struct kv_model *m,
			const struct kv_engine_opts *o, uint64_t need,
			uint64_t mine)
{
	char err[KV_ERRLEN], about[128];
	uint64_t avail, usable;
	if (kv_run_memory(&avail, &usable, err))
		return cli_usage("%s", err);
	if (kv_run_fits(m, o, need, mine, avail, usable, err))
		return cli_usage("%s%s: %s",
				 kvdecode_about(a, about, sizeof about),
				 m->name, err);
	return 0;
}

/* The decode loop on e (freed here, before the comparison's own
 * engines), the comparison with an f32 cache, and the summary. */
static int decode(struct args *a, const struct kv_model *m,
		  const struct kv_engine_opts *o, struct kv_engine **e)
{
	char err[KV_ERRLEN];
	struct kv_decode_result r;
	struct kv_quality q = {0};
	struct kv_model *eff = NULL;
	int status = kvdecode_run(a, *e, &r);
	if (!status && kv_engine_model(m, o, &eff, err)) {
		cli_error("%s", err);
		status = CLI_FAIL;
	}
	kv_engine_free(*e);
	*e = NULL;
	if (!status && compact(a) &&
	    kv_quality_run(m, o, a->prompt, a->gen, a->temperature, a->top_k,
			   a->seed, &q, NULL, NULL, err)) {
		cli_error("%s", err);
		status = CLI_FAIL;
	}
	if (!status)
		kvdecode_say(a, eff, &r, &q);
	if (!status && a->summary_f)
		kvdecode_summary(a, eff, &r, &q);
	if (!status && kv_decode_differ(&r, a->tol))
		status = CLI_FAIL;
	kv_model_free(eff);
	return status;
}

/* Run a->run's engine options into *o, and what it allocates into *sz
 * (the weights' type and bytes into a); a refusal names the run. */
static int estimate(struct args *a, const struct kv_model *m,
		    struct kv_engine_opts *o, struct kv_decode_size *sz)
{
	char err[KV_ERRLEN], about[128];
	int rc;
	*o = kvdecode_engine_opts(a);
	if ((rc = kv_decode_estimate(m, o, a->prompt, a->gen, compact(a), sz,
				     err))) {
		cli_error("%s%s", kvdecode_about(a, about, sizeof about), err);
		return cli_status(rc);
	}
	a->wt = o->weights_dtype;
	a->weight_bytes = sz->engine.weights;
	return 0;
}

int kvdecode_runs(struct args *a, const struct kv_model *m)
{
	struct kv_engine_opts o = kvdecode_engine_opts(a);
	struct kv_decode_size sz;
	struct kv_engine *e = NULL;
	char err[KV_ERRLEN];
	int status = 0, rc;
	for (size_t k = 0; k < a->nruns && !status; k++) {
		kvdecode_at(a, k);
		status = estimate(a, m, &o, &sz);
	}
	if (status)
		return status;
	/* the context does not vary with the lists: one warning */
	if (m->max_pos && o.max_ctx > m->max_pos && !a->ckpt)
		cli_warn("%s: %llu positions are beyond the config's %llu; "
			 "run anyway, the weights being random",
			 m->name, (unsigned long long)o.max_ctx,
			 (unsigned long long)m->max_pos);
	for (size_t k = 0; k < a->nruns && !status; k++) {
		kvdecode_at(a, k);
		if (!(status = estimate(a, m, &o, &sz)))
			status = a->dry_run ? kvdecode_plan(a, m, &o, &sz.engine)
					    : check_memory(a, m, &o, sz.need,
							   sz.loop);
	}
	if (status || a->dry_run)
		return status;
	if (a->summary && !a->prefix &&
	    !(a->summary_f = fopen(a->summary, "w"))) {
		cli_error("%s: %s", a->summary, strerror(errno));
		return CLI_USAGE;
	}
	for (size_t k = 0; k < a->nruns && status != CLI_USAGE; k++) {
		int st;
		kvdecode_at(a, k);
		if ((st = estimate(a, m, &o, &sz)))
			return st;
		kvdecode_say_run(a);
		if ((rc = kv_engine_new(m, &o, &e, err))) {
			cli_error("%s", err);
			st = cli_status(rc);
		} else {
			st = a->prefix ? kvdecode_prefix(a, e)
				       : decode(a, m, &o, &e);
		}
		kv_engine_free(e);
		e = NULL;
		if (st > status)
			status = st;
	}
	return status;
}
