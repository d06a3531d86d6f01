/*
 * kvdecode_report.c - what a run of kvdecode prints: a row per token as
 * the decode loop runs (with a tokenizer, its text), the summary (for
 * people on stderr, for scripts in --summary FILE), the dry run's plan,
 * the --lengths report and the --prefix-reuse requests (--ppl's rows are
 * kvdecode_ppl.c's).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kvdecode.h"
#include "kv/units.h"

static const char *const cols[] = {"step", "ctx", "ms_cache", "ms_nocache",
				   "token_cache", "token_nocache",
				   "max_abs_diff", "text"};
/* the text column only with a tokenizer */
#define NCOLS_TEXT CLI_NCOLS(cols)
#define NCOLS_IDS (NCOLS_TEXT - 1)

/* A cell of one or several users' tokens: "17" or "17,4,99"; buf holds
 * 11 bytes a user. */
static void put_tokens(struct cli_table *t, const uint32_t *tok,
		       uint64_t users, bool run, char *buf)
{
	size_t len = 0;
	if (!run) {
		cli_put_empty(t);
		return;
	}
	if (users == 1) {
		cli_put_u64(t, tok[0]);
		return;
	}
	for (uint64_t u = 0; u < users; u++)
		len += (size_t)sprintf(buf + len, "%s%u", u ? "," : "",
				       tok[u]);
	cli_put_str(t, buf);
}

/* A step's row, as kv_decode_run() runs it: the table and a cell of
 * 11 bytes a user (and one) for the tokens; with a tokenizer, the first
 * sequence's tokens kept for its text. */
struct rows {
	const struct kvd_run *r;
	struct cli_table *t;
	char *cell;
	uint32_t *gen;
	size_t ngen;
};

/* The text of token id as a TSV-safe cell: \n, \t, \\ escaped. */
static void put_piece(struct cli_table *t, const struct kv_tok *tok,
		      uint32_t id)
{
	char piece[256], cell[1024];
	size_t n, k = 0;
	kv_tok_piece(tok, id, false, piece, sizeof piece, &n);
	for (size_t i = 0; i < n && k + 3 < sizeof cell; i++) {
		char c = piece[i];
		if (c == '\n' || c == '\t' || c == '\\' || c == '\r') {
			cell[k++] = '\\';
			cell[k++] = c == '\n' ? 'n' : c == '\t' ? 't'
				    : c == '\r' ? 'r'
						: '\\';
		} else {
			cell[k++] = c;
		}
	}
	cell[k] = '\0';
	cli_put_str(t, cell);
}

static void row(const struct kv_decode_step *st, void *arg)
{
	struct rows *w = arg;
	const struct kvd_opts *a = w->r->a;
	const struct kv_tok *tok = w->r->s->tok;
	struct cli_table *t = w->t;
	kvd_lead(w->r, t);
	cli_put_u64(t, st->step);
	cli_put_u64(t, st->ctx);
	cli_put_f(t, st->ms[1], 3);
	cli_put_f(t, st->ms[0], 3);
	put_tokens(t, st->next[1], w->r->e.users, a->with, w->cell);
	put_tokens(t, st->next[0], w->r->e.users, a->without, w->cell);
	if (a->with && a->without)
		cli_put_f(t, st->max_diff, 9);
	else
		cli_put_empty(t);
	if (tok) {
		uint32_t id = st->next[a->with ? 1 : 0][0];
		put_piece(t, tok, id);
		w->gen[w->ngen++] = id;
	}
	cli_row_end(t);
}

/* With a tokenizer: the first sequence's text, prompt and all, on
 * stderr. */
static void say_text(const struct rows *w)
{
	const struct kvd_opts *a = w->r->a;
	uint32_t *all = malloc((a->prompt + w->ngen) * sizeof *all);
	char *text = NULL;
	size_t len;
	for (uint64_t i = 0; all && a->ids && i < a->prompt; i++)
		all[i] = a->ids[i];
	if (all && a->ids && w->ngen)
		memcpy(all + a->prompt, w->gen, w->ngen * sizeof *all);
	if (all && a->ids &&
	    !kv_tok_decode(w->r->s->tok, all, a->prompt + w->ngen, &text,
			   &len)) {
		fflush(stdout);
		fprintf(stderr, "text: %s\n", text);
	}
	free(text);
	free(all);
}

int kvdecode_run(const struct kvd_run *r, struct kv_engine *e,
		 struct kv_decode_result *res)
{
	const struct kvd_opts *a = r->a;
	const struct kv_tok *tok = r->s->tok;
	struct kv_decode_opts o = {a->prompt, a->gen, a->with, a->without,
				   a->temperature, a->top_k, a->e.seed, NULL,
				   a->ids};
	struct kv_decode *d;
	struct rows w = {.r = r, .cell = malloc(r->e.users * 11 + 1),
			 .gen = malloc((a->gen + 1) * sizeof *w.gen)};
	int rc = w.cell && w.gen ? kv_decode_open(e, &o, &d) : KV_ENOMEM;
	if (rc) {
		free(w.cell);
		free(w.gen);
		cli_error("out of memory");
		return CLI_FAIL;
	}
	w.t = kvd_table(r, cols, tok ? NCOLS_TEXT : NCOLS_IDS);
	if ((rc = kv_decode_run(d, row, &w, res)))
		cli_error("forward pass failed at step %llu%s",
			  (unsigned long long)(res->steps + 1),
			  rc == KV_ENOMEM ? ": no free block in the pool" : "");
	else
		kvd_table_done(r);
	if (!rc && tok)
		say_text(&w);
	kv_decode_close(d);
	free(w.cell);
	free(w.gen);
	return rc ? CLI_FAIL : 0;
}

/* The summary for people, on stderr: the weights' bytes from sz, the
 * run's estimate; q: the comparison with an f32 cache (compact
 * formats). */
void kvdecode_say(const struct kvd_run *r, const struct kv_model *m,
		  const struct kv_decode_size *sz,
		  const struct kv_decode_result *res,
		  const struct kv_quality *q)
{
	const struct kvd_opts *a = r->a;
	char b1[32], b2[32], b3[32], fm[40];
	bool both = res->compared;
	double speedup = kv_decode_speedup(res);
	fflush(stdout);
	fprintf(stderr,
		"kvdecode: %s, %u layers, %llu user%s, prompt %llu, %llu "
		"new, %llu threads\n",
		m->name, m->n_layers, (unsigned long long)r->e.users,
		r->e.users == 1 ? "" : "s",
		(unsigned long long)a->prompt, (unsigned long long)a->gen,
		(unsigned long long)r->e.threads);
	if (r->s->ckpt || r->o.weights_dtype != KV_DTYPE_F32)
		fprintf(stderr, "weights: %s, %s in memory (%s)\n",
			r->s->ckpt ? "the checkpoint's" : "random",
			kv_dtype_name(r->o.weights_dtype),
			kv_format_iec(sz->engine.weights, b1, sizeof b1));
	if (both) {
		if (res->first_diff)
			fprintf(stderr,
				"tokens: differ with and without the cache "
				"from step %llu\n",
				(unsigned long long)res->first_diff);
		else
			fprintf(stderr,
				"tokens: identical with and without the cache "
				"(%llu of %llu)\n",
				(unsigned long long)a->gen,
				(unsigned long long)a->gen);
		fprintf(stderr,
			"largest logit difference: %.3g (tolerance %.3g)%s\n",
			res->max_diff, a->tol,
			res->max_diff > a->tol ? ": too large" : "");
	}
	fprintf(stderr, "time:");
	if (a->with)
		fprintf(stderr, " %.3f s with the cache", res->ms[1] / 1e3);
	if (a->without)
		fprintf(stderr, "%s %.3f s without", a->with ? "," : "",
			res->ms[0] / 1e3);
	if (!isnan(speedup))
		fprintf(stderr, ": a speed-up of %.1fx", speedup);
	fputc('\n', stderr);
	if (a->with)
		fprintf(stderr,
			"kv cache: %s bytes per token (%s, measured from the "
			"allocation), %s bytes ",
			kv_format_grouped(res->kv_per_token, b1, sizeof b1),
			kv_dtype_pair_name(a->e.k_dtype, a->e.v_dtype, fm,
					   sizeof fm),
			kv_format_grouped(res->kv_bytes, b2, sizeof b2));
	if (a->with && res->pool)
		fprintf(stderr,
			"in a pool of %llu blocks of %llu positions, %llu "
			"held at the end\n",
			(unsigned long long)res->pool,
			(unsigned long long)r->e.block_size,
			(unsigned long long)res->held);
	else if (a->with)
		fprintf(stderr, "for %llu positions x %llu user%s\n",
			(unsigned long long)res->positions,
			(unsigned long long)r->e.users,
			r->e.users == 1 ? "" : "s");
	fprintf(stderr, "token passes:");
	if (a->with)
		fprintf(stderr, " %s with the cache",
			kv_format_grouped(res->passes[1], b3, sizeof b3));
	if (a->without)
		fprintf(stderr, "%s %s without", a->with ? "," : "",
			kv_format_grouped(res->passes[0], b1, sizeof b1));
	fputc('\n', stderr);
	if (compact(a))
		fprintf(stderr,
			"against an f32 cache (fed its %llu tokens): top-1 "
			"agreement %.4f (%llu of %llu), logit difference "
			"largest %.4g, mean %.4g; mean KL divergence %.4g "
			"nats\n",
			(unsigned long long)a->gen, kv_quality_top1(q),
			(unsigned long long)q->agree,
			(unsigned long long)q->steps, q->max_abs,
			kv_quality_mean_abs(q), kv_quality_mean_kl(q));
}

/* The summary for scripts: a row in --summary FILE (the header before
 * the first), led by block_size with a list of them (users and threads
 * are columns of their own). */
void kvdecode_summary(const struct kvd_run *r, const struct kv_model *m,
		      const struct kv_decode_result *res,
		      const struct kv_quality *q)
{
	const struct kvd_opts *a = r->a;
	FILE *f = r->s->summary_f;
	bool both = res->compared, block = a->list[KVD_BLOCK] != NULL;
	double speedup = kv_decode_speedup(res);
	if (!r->s->summary_rows++)
		fprintf(f, "%smodel\tlayers\tusers\tprompt\tnew\tthreads\t"
			   "tokens_identical\tfirst_diff_step\tmax_abs_diff\t"
			   "s_cache\ts_nocache\tspeedup\tkv_bytes_per_token\t"
			   "kv_bytes\tpasses_cache\tpasses_nocache\tk_dtype\t"
			   "v_dtype\tlogit_scale\ttop1_agree\t"
			   "max_abs_logit_diff\tmean_abs_logit_diff\tmean_kl\n",
			block ? "block_size\t" : "");
	if (block)
		fprintf(f, "%llu\t", (unsigned long long)r->e.block_size);
	fprintf(f, "%s\t%u\t%llu\t%llu\t%llu\t%llu\t", m->name, m->n_layers,
		(unsigned long long)r->e.users, (unsigned long long)a->prompt,
		(unsigned long long)a->gen, (unsigned long long)r->e.threads);
	if (both)
		fprintf(f, "%d\t%llu\t%.9f\t", !res->first_diff,
			(unsigned long long)res->first_diff, res->max_diff);
	else
		fprintf(f, "\t\t\t");
	if (a->with)
		fprintf(f, "%.6f", res->ms[1] / 1e3);
	fputc('\t', f);
	if (a->without)
		fprintf(f, "%.6f", res->ms[0] / 1e3);
	fputc('\t', f);
	if (!isnan(speedup))
		fprintf(f, "%.3f", speedup);
	fputc('\t', f);
	if (a->with)
		fprintf(f, "%llu\t%llu\t%llu\t",
			(unsigned long long)res->kv_per_token,
			(unsigned long long)res->kv_bytes,
			(unsigned long long)res->passes[1]);
	else
		fprintf(f, "\t\t\t");
	if (a->without)
		fprintf(f, "%llu", (unsigned long long)res->passes[0]);
	fprintf(f, "\t%s\t%s\t%g\t", kv_dtype_name(a->e.k_dtype),
		kv_dtype_name(a->e.v_dtype), a->e.logit_scale);
	if (compact(a))
		fprintf(f, "%.6f\t%.9f\t%.9f\t%.12f", kv_quality_top1(q),
			q->max_abs, kv_quality_mean_abs(q),
			kv_quality_mean_kl(q));
	else
		fprintf(f, "\t\t\t");
	fputc('\n', f);
	fflush(f);
}

/* --dry-run: what the run would allocate and do, without running it. */
int kvdecode_plan(const struct kvd_run *r, const struct kv_model *m,
		  const struct kv_engine_size *sz)
{
	static const char *const pcols[] = {
		"prompt", "new", "users", "weights_bytes", "cache_bytes",
		"scratch_bytes", "kv_bytes_per_token", "passes_cache",
		"passes_nocache"};
	const struct kvd_opts *a = r->a;
	char err[KV_ERRLEN];
	struct kv_decode_plan p;
	int e = kv_decode_plan(m, &r->o, a->prompt, a->gen, &p, err);
	if (e)
		return cli_kv_error(e, err);
	struct cli_table *t = kvd_table(r, pcols, CLI_NCOLS(pcols));
	kvd_lead(r, t);
	cli_put_u64(t, a->prompt);
	cli_put_u64(t, a->gen);
	cli_put_u64(t, r->e.users);
	cli_put_u64(t, sz->weights);
	cli_put_u64(t, sz->cache);
	cli_put_u64(t, sz->scratch);
	cli_put_u64(t, p.kv_per_token);
	cli_put_u64(t, p.passes[1]);
	cli_put_u64(t, p.passes[0]);
	cli_row_end(t);
	return 0; /* main ends the table, after every run's plan */
}

/* --- --lengths: paged blocks against reserved sequences --- */

void kvdecode_lengths_row(const struct kvd_run *r,
			  const struct kv_lengths_report *x)
{
	static const char *const lcols[] = {
		"users", "block_size", "max_len", "tokens", "blocks",
		"blocks_held", "token_bytes", "paged_bytes", "reserved_bytes",
		"paged_waste", "reserved_waste"};
	const struct kv_paged_usage *u = &x->u;
	struct cli_table *t = kvd_table(r, lcols, CLI_NCOLS(lcols));
	kvd_lead(r, t);
	cli_put_u64(t, r->e.users);
	cli_put_u64(t, x->block_size);
	cli_put_u64(t, x->max_len);
	cli_put_u64(t, u->tokens);
	cli_put_u64(t, u->blocks);
	cli_put_u64(t, x->blocks_held);
	cli_put_u64(t, u->token_bytes);
	cli_put_u64(t, u->paged_bytes);
	cli_put_u64(t, u->reserved_bytes);
	cli_put_f(t, u->paged_waste, 4);
	cli_put_f(t, u->reserved_waste, 4);
	cli_row_end(t);
}

void kvdecode_lengths_say(const struct kvd_run *r, const struct kv_model *m,
			  const struct kv_lengths_report *x)
{
	const struct kv_paged_usage *u = &x->u;
	char b1[64], b2[64];
	kvd_say_run(r);
	fprintf(stderr,
		"kvdecode: %s, %u layers, %llu users, %llu tokens in all, "
		"blocks of %llu\n",
		m->name, x->layers, (unsigned long long)r->e.users,
		(unsigned long long)u->tokens,
		(unsigned long long)x->block_size);
	fprintf(stderr, "paged: %s in %llu blocks, %.1f%% of it unused\n",
		kv_format_iec(u->paged_bytes, b1, sizeof b1),
		(unsigned long long)u->blocks, 100 * u->paged_waste);
	fprintf(stderr,
		"reserved: %s for %llu x %llu positions, %.1f%% of it "
		"unused\n",
		kv_format_iec(u->reserved_bytes, b2, sizeof b2),
		(unsigned long long)r->e.users, (unsigned long long)x->max_len,
		100 * u->reserved_waste);
}

/* --- --prefix-reuse: a script of requests over one pool --- */

int kvdecode_prefix(const struct kvd_run *r, struct kv_engine *e)
{
	static const char *const rcols[] = {
		"request", "prompt", "cached_tokens", "computed_tokens",
		"hits", "misses", "evictions", "blocks_held", "first_token",
		"identical", "ms_first_token", "ms_decode"};
	const struct kvd_opts *a = r->a;
	struct kv_prefix_request req[KV_PREFIX_REQUESTS];
	int failed, rc = kv_prefix_reuse(e, a->prompt, a->gen, a->temperature,
					 a->top_k, a->e.seed, req, &failed);
	/* the requests done: every one, or those before the one that
	 * failed (none when the run failed before any) */
	int done = !rc ? KV_PREFIX_REQUESTS : failed < 0 ? 0 : failed;
	struct cli_table *t = kvd_table(r, rcols, CLI_NCOLS(rcols));
	for (int q = 0; q < done; q++) {
		const struct kv_prefix_request *x = &req[q];
		kvd_lead(r, t);
		cli_put_str(t, kv_prefix_names[q]);
		cli_put_u64(t, a->prompt);
		cli_put_u64(t, x->cached);
		cli_put_u64(t, x->computed);
		cli_put_u64(t, x->hits);
		cli_put_u64(t, x->misses);
		cli_put_u64(t, x->evictions);
		cli_put_u64(t, x->blocks_held);
		cli_put_u64(t, x->first);
		if (x->identical < 0)
			cli_put_empty(t);
		else
			cli_put_u64(t, (uint64_t)x->identical);
		cli_put_f(t, x->ms_first, 3);
		cli_put_f(t, x->ms_decode, 3);
		cli_row_end(t);
	}
	if (rc) {
		if (failed < 0)
			cli_error("out of memory");
		else
			cli_error("request %s failed: %s",
				  kv_prefix_names[failed],
				  rc == KV_ENOMEM ? "no free block in the pool"
						  : kv_strerror(rc));
		return CLI_FAIL;
	}
	kvd_table_done(r);
	fflush(stdout);
	fprintf(stderr,
		"kvdecode: prefix reuse, prompt %llu, %llu new, blocks of "
		"%llu, %llu threads\n",
		(unsigned long long)a->prompt, (unsigned long long)a->gen,
		(unsigned long long)r->e.block_size,
		(unsigned long long)r->e.threads);
	fprintf(stderr,
		"time to first token: %.3f ms cold, %.3f ms warm (%llu of "
		"%llu blocks reused)\n",
		req[0].ms_first, req[1].ms_first,
		(unsigned long long)req[1].hits,
		(unsigned long long)(req[1].hits + req[1].misses));
	bool same = kv_prefix_same(req);
	fprintf(stderr, "logits: %s warm and cold\n",
		same ? "identical" : "differ");
	return same ? 0 : CLI_FAIL;
}
