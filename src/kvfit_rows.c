/*
 * kvfit_rows.c - kvfit's rows: each checked, solved and timed once before
 * any is printed, then written with what it says on stderr (a refusal,
 * the bar, a target missed), and the verdict the exit status gives; and
 * --params's rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kvfit.h"
#include "kv/audio.h"
#include "kv/ep.h"
#include "kv/units.h"

/* a table on a terminal: the answer first (a column the rows lack, as
 * LoRA's, the images', a host tier's, a prompt's hits or speculative
 * decoding's without them, is left out) */
static const char *const brief_cols[] = {
	"model", "engine", "gpus", "dp", "ep", "kv_dtype", "ctx",
	"users_whole", "bound",
	"weights_bytes", "runtime_bytes", "lora_bytes",
	"image_tokens", "vision_weights_bytes", "audio_tokens",
	"audio_weights_bytes", "encoder_bytes",
	"free_kv_bytes",
	"kv_bytes", "offload_kv_tokens", "step_users", "step_fits", "step_ms",
	"tokens_per_s", "a2a_ms", "draft_weights_bytes",
	"draft_bytes_per_token"};
static const char *const brief_split_cols[] = {
	"model", "engine", "kv_dtype", "ctx", "gpu_layers", "cpu_moe_layers",
	"users_whole", "bound", "gpu_weights_bytes", "gpu_kv_bytes",
	"host_weights_bytes", "host_kv_bytes", "host_fits", "step_ms",
	"tokens_per_s"};
static const char *const brief_time_cols[] = {
	"model", "engine", "gpus", "dp", "ep", "kv_dtype", "ctx", "users_whole",
	"step_users", "step_fits", "hit_tokens", "load_ms", "encoder_ms",
	"ttft_ms",
	"tpot_ms", "out_tokens_per_s_gpu", "tokens_per_step",
	"decode_bound", "meets_target", "usd_per_mtok"};

/* What the rows come to: whether one fell below a target or
 * --min-users (exit 1); with --users and a latency target, the most
 * users of a row that met it, and the first row's times where none
 * did. */
struct verdict {
	bool below;
	uint64_t best;
	bool any;
	struct kv_serve first;
	const char *model;
};

static int params_row(struct cli_table *t, const struct args *a,
		      const struct kv_plan *pl)
{
	char err[KV_ERRLEN];
	struct kv_params p;
	uint64_t bytes;
	const char *src;
	int e = kv_plan_params(&a->o, pl, &p, &bytes, &src, err);
	if (e)
		return cli_kv_error(e, err);
	cli_put_str(t, pl->m->name);
	cli_put_u64(t, p.total);
	cli_put_u64(t, p.active);
	cli_put_bytes(t, bytes);
	cli_put_str(t, src);
	cli_row_end(t);
	if (p.mtp)
		cli_warn("%s: %llu parameters of multi-token-prediction "
			 "layers are not counted",
			 pl->m->name, (unsigned long long)p.mtp);
	return 0;
}

int kvfit_params(const struct args *a, const struct kv_plan *pl, size_t np)
{
	static const char *const cols[] = {"model", "params", "params_active",
					   "weights_bytes", "weights_source"};
	struct cli_table t;
	int status = 0;
	cli_table_begin(&t, cols, CLI_NCOLS(cols), a->json, a->header,
			a->human);
	for (size_t i = 0; i < np && !status; i++)
		status = params_row(&t, a, &pl[i]);
	cli_table_end(&t);
	return status;
}

/* -ngl N (and --n-cpu-moe K) of a split row, as a user gives them. */
static const char *layers_text(const struct kv_fit_in *in, uint32_t ngl,
			       uint32_t moe, char *buf, size_t n)
{
	int k = snprintf(buf, n, "--n-gpu-layers %u", ngl);
	if (moe && k >= 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, " --n-cpu-moe %u", moe);
	(void)in;
	return buf;
}

/* Why a row's weights miss, into buf: what they need and what the
 * engine may use, and which --tp (llama.cpp: --pp; a split: fewer
 * layers on the GPU) would fit them. */
static const char *weights_why(const struct kv_fit_in *in,
			       const struct kv_fit *f,
			       const struct kv_plan_refusal *r, char *buf,
			       size_t n)
{
	char hint[96], need[32], miss[32], budget[32];
	bool lcpp = in->server->by_layers;
	char ls[64];
	if (in->off.on && r->layers)
		snprintf(hint, sizeof hint, "%s would fit one sequence",
			 layers_text(in, r->ngl, r->moe, ls, sizeof ls));
	else if (in->off.on)
		snprintf(hint, sizeof hint, "no --n-gpu-layers fits one "
			 "sequence");
	else if (r->tp || r->pp)
		snprintf(hint, sizeof hint, "--%s %u would fit",
			 r->pp ? "pp" : "tp", r->pp ? r->pp : r->tp);
	else
		snprintf(hint, sizeof hint, "no --%s up to the %s count fits "
			 "one sequence", lcpp ? "pp" : "tp",
			 lcpp ? "layer" : "head");
	snprintf(buf, n, "weights%s%s need %s per GPU, %s more than the %s "
		 "the engine may use; %s",
		 f->draft_weights ? ", the drafter's" : "",
		 in->reserve   ? " and --reserve"
		 : f->runtime ? " and the engine's own memory"
			      : "",
		 kv_format_iec(r->need, need, sizeof need),
		 kv_format_iec(f->missing, miss, sizeof miss),
		 kv_format_iec(f->budget, budget, sizeof budget), hint);
	return buf;
}

/* What a row that serves no sequence says: which --tp would fit weights
 * that miss, or that vLLM would not start. */
static void refusal(const struct kv_fit_in *in, const struct kv_fit *f)
{
	struct kv_plan_refusal r = kv_plan_refusal(in, f);
	char why[512];
	if (r.why == KV_PLAN_VLLM)
		cli_warn("%s: vllm would not start: one request of %llu "
			 "tokens needs %.2f GiB of KV cache, more than the "
			 "%.2f GiB it has; the longest that fits is %llu "
			 "tokens (its estimated maximum model length)",
			 in->m->name, (unsigned long long)in->ctx,
			 (double)r.need / (1 << 30),
			 (double)f->free_kv / (1 << 30),
			 (unsigned long long)r.ctx);
	if (r.why == KV_PLAN_WEIGHTS)
		cli_error("%s: %s", in->m->name,
			  weights_why(in, f, &r, why, sizeof why));
}

/* What a clip longer than the tower hears comes to: its first seconds
 * (Qwen2-Audio's, Qwen2.5-Omni's feature extractor truncates it). */
static void truncated(const struct kv_fit_in *in)
{
	struct kv_audio_clip c;
	char err[KV_ERRLEN];
	if (in->audio_s > 0 && !kv_audio_clip(in->m, in->audio_s, &c, err) &&
	    c.kept_s < in->audio_s)
		cli_warn("%s: --audio-seconds %g: the feature extractor keeps "
			 "a clip's first %g s (%llu tokens)",
			 in->m->name, in->audio_s, c.kept_s,
			 (unsigned long long)c.tokens);
}

/* Why --solve layers (or -ngl auto) found no layers for a row's users: f
 * is the row with every layer in host memory. */
static void no_layers(const struct args *a, const struct kv_fit_in *in,
		      const struct kv_fit *f)
{
	const struct kv_split *sp = &f->split;
	char why[256], x[32], y[32];
	uint64_t u = in->users ? in->users : 1;
	if (f->missing)
		snprintf(why, sizeof why, "the GPU's compute buffer alone needs "
			 "%s, more than the %s it has",
			 kv_format_iec(f->runtime + in->reserve, x, sizeof x),
			 kv_format_iec(f->budget, y, sizeof y));
	else if (sp->host_missing)
		snprintf(why, sizeof why, "host memory needs %s for its "
			 "weights and compute buffer, more than its %s "
			 "(--host-mem)",
			 kv_format_iec(sp->host_weights + sp->host_compute, x,
				       sizeof x),
			 kv_format_iec(sp->host_mem, y, sizeof y));
	else
		snprintf(why, sizeof why, "with every layer in host memory %llu "
			 "fit%s",
			 (unsigned long long)f->users_whole,
			 sp->host_mem ? " (--host-mem)" : "");
	cli_error("%s: %s: no layers on the GPU fit %llu user%s at %llu "
		  "tokens: %s",
		  in->m->name,
		  a->o.solve == KV_PLAN_LAYERS ? "--solve layers"
					       : "--n-gpu-layers auto",
		  (unsigned long long)u, u == 1 ? "" : "s",
		  (unsigned long long)in->ctx, why);
}

/* What --solve layers (or -ngl auto) found, for people: the options
 * that give it, the bytes on each side, the decode it gives. */
static void layers_found(const struct kv_fit_in *in, const struct kv_fit *f)
{
	const struct kv_split *sp = &f->split;
	char ls[64], g[32], h[32], step[96] = "";
	if (f->step_ms > 0) /* a bandwidth to time it by */
		snprintf(step, sizeof step, "; a decode step of %llu "
			 "user%s %.3f ms, %.1f tokens/s",
			 (unsigned long long)f->step_users,
			 f->step_users == 1 ? "" : "s", f->step_ms,
			 f->tokens_per_s);
	fprintf(stderr, "%s: %s: %s (%u of %u layers%s) fits %llu user%s at "
		"%llu tokens: %s on the GPU, %s in host memory%s\n",
		cli_prog(), in->m->name,
		layers_text(in, sp->gpu_layers + sp->head_gpu, sp->moe_host, ls,
			    sizeof ls),
		sp->gpu_layers, in->m->n_layers,
		sp->head_gpu ? " and the head" : "",
		(unsigned long long)f->users_whole,
		f->users_whole == 1 ? "" : "s", (unsigned long long)in->ctx,
		kv_format_iec(f->weights + f->kv_bytes + f->runtime, g,
			      sizeof g),
		kv_format_iec(sp->host_weights + sp->host_kv + sp->host_compute,
			      h, sizeof h),
		step);
}

/* Why --solve ctx found no context for a row's users: f is the row at
 * its shortest context. */
static void no_context(const struct kv_fit_in *in, const struct kv_fit *f)
{
	struct kv_plan_refusal r = kv_plan_refusal(in, f);
	char why[512];
	uint64_t u = in->users;
	if (r.why == KV_PLAN_WEIGHTS)
		weights_why(in, f, &r, why, sizeof why);
	else if (f->max_seqs && u > f->max_seqs)
		snprintf(why, sizeof why, "%s runs at most %llu at once "
			 "(max_num_seqs)", in->server->name,
			 (unsigned long long)f->max_seqs);
	else
		snprintf(why, sizeof why, "at %llu token%s each, %llu fit",
			 (unsigned long long)in->ctx, in->ctx == 1 ? "" : "s",
			 (unsigned long long)f->users_whole);
	cli_error("%s: %llu user%s at no context: %s", in->m->name,
		  (unsigned long long)u, u == 1 ? " fits" : "s fit", why);
}

static void bar(const struct kv_fit_in *in, const struct kv_fit *f)
{
	char cells[61], w[32], k[32], fr[32], r[32];
	uint64_t kv = f->kv_bytes;
	uint64_t used = f->weights + f->free_kv;
	fprintf(stderr, "%s %llu [%s] W %s  K %llu users %s  . %s  R %s\n",
		in->m->name, (unsigned long long)in->ctx,
		kv_fit_bar(in, f, 60, cells),
		kv_format_iec(f->weights, w, sizeof w),
		(unsigned long long)f->users_whole,
		kv_format_iec(kv, k, sizeof k),
		kv_format_iec(f->free_kv - (kv < f->free_kv ? kv : f->free_kv),
			      fr, sizeof fr),
		kv_format_iec(in->mem > used ? in->mem - used : 0, r, sizeof r));
}

/* What a row that misses a latency target says: the closest point. */
static void missed(const struct args *a, const struct kv_plan_row *r,
		   struct verdict *v)
{
	const struct kv_plan_opts *o = &a->o;
	const struct kv_fit_in *in = &r->in;
	if (!kv_plan_target(o))
		return;
	if (in->users && o->users) { /* a --users row: said at the end */
		if (r->timed && !v->any) {
			v->first = r->s;
			v->model = in->m->name;
		}
		v->any |= r->timed;
		uint64_t served = kv_plan_served(o, r);
		if (served > v->best)
			v->best = served;
		return;
	}
	if (r->meets)
		return;
	v->below = true;
	if (!r->timed) {
		cli_error("%s: no user fits at %llu tokens, so none meets "
			  "the latency target",
			  in->m->name, (unsigned long long)kv_fit_seq(in));
		return;
	}
	cli_error("%s: no concurrency meets %s%s%s: one user has a time to "
		  "first token of %.1f ms and %.2f ms per output token",
		  in->m->name, o->max_ttft > 0 ? "--max-ttft" : "",
		  o->max_ttft > 0 && o->max_tpot > 0 ? " and " : "",
		  o->max_tpot > 0 ? "--max-tpot" : "", r->s.ttft_ms,
		  r->s.tpot_ms);
}

const char *kvfit_targets(const struct kv_plan_opts *o, char *buf, size_t n)
{
	int k = 0;
	buf[0] = '\0';
	if (o->max_ttft > 0)
		k = snprintf(buf, n, "--max-ttft %g", o->max_ttft);
	if (o->max_tpot > 0 && k >= 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, "%s--max-tpot %g",
			 k ? " and " : "", o->max_tpot);
	return buf;
}

/* --min-users on one row: the users it serves within every target given
 * (those that fit, without one). A --users list with a target is held
 * to the best of its rows, at the end. */
static void gate(const struct args *a, const struct kv_plan_row *r,
		 const char *gpu_name, struct verdict *v)
{
	const struct kv_fit_in *in = &r->in;
	uint64_t dp = kv_ep_dp(in); /* groups: every one's users */
	uint64_t served = kv_plan_served(&a->o, r), g = in->tp * in->pp * dp;
	char tg[96], of[64] = "";
	if (!a->min_users || served >= a->min_users ||
	    (kv_plan_target(&a->o) && a->o.users))
		return;
	if (kv_plan_target(&a->o))
		snprintf(of, sizeof of, ", of the %llu that fit",
			 (unsigned long long)(r->f.users_whole * dp));
	cli_error("%s: %llu user%s %s%s at %llu tokens (%s, %llu GPU%s, %s)%s"
		  ", below --min-users %llu",
		  in->m->name, (unsigned long long)served,
		  served == 1 ? "" : "s",
		  !kv_plan_target(&a->o) ? (served == 1 ? "fits" : "fit")
		  : served == 1  ? "meets "
				 : "meet ",
		  kv_plan_target(&a->o) ? kvfit_targets(&a->o, tg, sizeof tg) : "",
		  (unsigned long long)kv_fit_seq(in), gpu_name,
		  (unsigned long long)g, g > 1 ? "s" : "",
		  in->server->name, of,
		  (unsigned long long)a->min_users);
	v->below = true;
}

/* The columns o's rows have (kv_prow_cols), and their names. */
struct cols {
	enum kv_prow_col c[KV_PROW_NCOLS];
	const char *name[KV_PROW_NCOLS];
	size_t n;
};

static void cols_of(const struct kv_plan_opts *o, struct cols *k)
{
	k->n = kv_prow_cols(o, k->c);
	for (size_t i = 0; i < k->n; i++)
		k->name[i] = kv_prow_names[k->c[i]];
}

/* The cells of a solved row, every column o's rows have. */
static void put_row(struct cli_table *t, const char *gpu_name,
		    const struct kv_plan_opts *o, const struct kv_plan_row *r)
{
	struct kv_cell cell;
	struct cols k;
	cols_of(o, &k);
	for (size_t c = 0; c < k.n; c++) {
		kv_prow_cell(r, o, gpu_name, k.c[c], &cell);
		cli_put_cell(t, &cell);
	}
	cli_row_end(t);
}

/* One solved row: what it says on stderr, its cells, the targets. */
static void row(struct cli_table *t, const struct args *a,
		const char *gpu_name, const struct kv_plan_row *r,
		struct verdict *v)
{
	const struct kv_fit_in *in = &r->in;
	const struct kv_fit *f = &r->f;
	if (r->held)
		cli_warn("%s: memory holds %llu tokens for %llu users; the "
			 "config's %llu positions are the longest context",
			 in->m->name, (unsigned long long)r->held,
			 (unsigned long long)(in->users * kv_ep_dp(in)),
			 (unsigned long long)in->m->max_pos);
	bool layers = in->off.on && (a->o.solve == KV_PLAN_LAYERS ||
				     a->o.ngl == KV_NGL_AUTO);
	if (r->none && a->o.solve == KV_PLAN_CTX)
		no_context(in, f);
	else if (r->none && layers)
		no_layers(a, in, f);
	else if (r->none)
		cli_error("%s: no tensor-parallel degree up to %u fits %llu "
			  "user%s at %llu tokens",
			  in->m->name, kv_plan_max_tp(in->m),
			  (unsigned long long)in->users,
			  in->users == 1 ? "" : "s",
			  (unsigned long long)in->ctx);
	if (r->none) {
		v->below = true;
		return;
	}
	if (r->unserved) { /* the rate is more than the engine serves */
		cli_error("%s", r->why);
		v->below = true;
		return;
	}
	if (!a->launch)
		put_row(t, gpu_name, &a->o, r);
	else if (f->users_whole)
		kvfit_launch_row(a, r);
	else { /* a row that serves none runs nothing */
		cli_error("%s: no sequence fits at %llu tokens: no command",
			  in->m->name, (unsigned long long)in->ctx);
		v->below = true;
	}
	if (layers)
		layers_found(in, f);
	missed(a, r, v);
	if (a->human && isatty(fileno(stderr)))
		bar(in, f);
	refusal(in, f);
	truncated(in);
	bool queued = a->o.work.isl && a->o.work.arrivals == KV_ARRIVE_BURST;
	if (in->users && f->users_whole < in->users &&
	    a->o.solve == KV_PLAN_USERS)
		cli_warn("%s: --users %llu: only %llu fit at %llu tokens; %s",
			 in->m->name, (unsigned long long)in->users,
			 (unsigned long long)f->users_whole,
			 (unsigned long long)kv_fit_seq(in),
			 queued ? "the engine runs those, the others wait in "
				  "its queue"
				: "the step is sized for them all anyway");
	gate(a, r, gpu_name, v);
}

/* What a --users list with a latency target comes to, at the end: the
 * most users that met it, or the first row's times where none did. */
static void say_verdict(const struct args *a, struct verdict *v)
{
	if (v->any && !v->best) {
		cli_error("%s: no --users meets the latency target: the first "
			  "has a time to first token of %.1f ms and %.2f ms per "
			  "output token",
			  v->model, v->first.ttft_ms,
			  v->first.tpot_ms);
		v->below = true;
	} else if (v->best) {
		fprintf(stderr, "%s: %llu user%s the most of --users that "
			"meets the latency target\n",
			cli_prog(), (unsigned long long)v->best,
			v->best == 1 ? " is" : "s is");
	}
	if (v->any && a->min_users && v->best < a->min_users) {
		char tg[96];
		cli_error("%s: %llu user%s %s %s among --users, below "
			  "--min-users %llu",
			  v->model, (unsigned long long)v->best,
			  v->best == 1 ? "" : "s",
			  v->best == 1 ? "meets" : "meet",
			  kvfit_targets(&a->o, tg, sizeof tg),
			  (unsigned long long)a->min_users);
		v->below = true;
	}
}

/* Every row of every plan (model x KV format x block size x context x
 * users x engine) checked, solved and timed into *out, before any is
 * printed: bad input fails with nothing on stdout. */
static int solve(const struct args *a, const struct kv_plan *pl, size_t np,
		 struct kv_plan_row **out, size_t *n)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < np; i++) {
		struct kv_plan_iter it;
		struct kv_plan_row r;
		kv_plan_begin(&it, &a->o, &pl[i]);
		while (kv_plan_next(&it, &r)) {
			int e = kv_plan_run(&a->o, &r, r.why);
			if (e)
				return cli_kv_error(e, r.why);
			if (*n == cap) {
				struct kv_plan_row *p = realloc(
					*out, (cap = cap ? 2 * cap : 16) *
						      sizeof *p);
				if (!p)
					return cli_kv_error(KV_ENOMEM, "");
				*out = p;
			}
			(*out)[(*n)++] = r;
		}
	}
	return 0;
}

/* The rows solved, printed plan by plan in the order solved, with what
 * each plan says around them. */
static void print(struct cli_table *t, const struct args *a,
		  const struct kv_plan *pl, size_t np, const char *gpu_name,
		  const struct kv_plan_row *rows, struct verdict *v)
{
	size_t k = 0;
	for (size_t i = 0; i < np; i++) {
		const struct kv_model *m = pl[i].m;
		struct kv_plan_iter it;
		struct kv_plan_row r;
		kv_plan_begin(&it, &a->o, &pl[i]);
		/* kvsize's rows: kvsize said it of them */
		if (a->o.solve != KV_PLAN_CTX &&
		    pl[i].dtype == KV_PLAN_OPTIONS)
			cli_warn_beyond(m->name, it.ctx, it.nctx, m->max_pos);
		/* a reader that went away (| head) ends the rows: each row
		 * is flushed, so its write error shows at once */
		while (!ferror(stdout) && kv_plan_next(&it, &r))
			row(t, a, gpu_name, &rows[k++], v);
		for (int e = 0; e < KV_SERVER_KINDS; e++)
			if (it.left_out[e][0])
				cli_warn("%s: --engine all: %s; its rows are "
					 "left out",
					 m->name, it.left_out[e]);
	}
}

int kvfit_rows(const struct args *a, const struct kv_plan *pl, size_t np,
	       const char *gpu_name)
{
	struct kv_plan_row *rows;
	struct cli_table t;
	struct verdict v = {0};
	size_t n;
	int status = solve(a, pl, np, &rows, &n);
	for (size_t i = 0; a->launch && !status && i < n; i++)
		if (!rows[i].none && !rows[i].unserved)
			status = kvfit_launch_check(a, &rows[i]);
	if (!status && a->mem_note[0])
		fprintf(stderr, "%s\n", a->mem_note);
	if (!status) {
		struct cols k;
		cols_of(&a->o, &k);
		/* -o ENGINE: no table, a command a row */
		cli_table_begin(&t, k.name, k.n, a->json,
				a->header && !a->launch, a->human);
		if (a->o.work.isl)
			cli_table_brief(&t, brief_time_cols,
					CLI_NCOLS(brief_time_cols));
		else if (a->o.split)
			cli_table_brief(&t, brief_split_cols,
					CLI_NCOLS(brief_split_cols));
		else
			cli_table_brief(&t, brief_cols, CLI_NCOLS(brief_cols));
		print(&t, a, pl, np, gpu_name, rows, &v);
		cli_table_end(&t);
		say_verdict(a, &v);
	}
	free(rows);
	return status ? status : v.below ? CLI_FAIL : 0;
}
