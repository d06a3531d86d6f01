/*
 * kvfit_input.c - what kvfit reads before it plans: the GPU table, the
 * configs named, and stdin (a config, or kvsize's TSV rows, which carry
 * their --users, --tp and --block-size down the pipe).
 */
#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kvfit.h"
#include "kv/ckpt.h"
#include "kv/eff.h"
#include "kv/units.h"

static const char *const gpu_cols[] = {
	"gpu", "memory_bytes", "wired_limit_bytes", "bandwidth_gbps",
	"bf16_tflops", "fp8_tflops", "fp4_tflops", "interconnect_gbps",
	"bandwidth_efficiency", "flops_efficiency", "decode_tflops",
	"serial_fraction", "threads", "label", "interconnect"};
/* a table on a terminal: the datasheet's figures */
static const char *const gpu_brief[] = {
	"gpu", "memory_bytes", "wired_limit_bytes", "bandwidth_gbps",
	"bf16_tflops", "fp8_tflops", "fp4_tflops", "interconnect_gbps",
	"label"};

/* A figure, or an empty cell where the table has none; prec 0: as many
 * decimals as keep 4 digits (a CPU's 0.0615 TFLOP/s), at least one. */
static void put_some_f(struct cli_table *t, double v, int prec)
{
	if (!prec)
		prec = v >= 100 ? 1 : v >= 10 ? 2 : v >= 1 ? 3 : 4;
	cli_put_f(t, v > 0 ? v : NAN, prec);
}

/* Loads --gpu-file, else gpus.json; prints the error and returns
 * CLI_USAGE on failure. */
static int load_gpus(const struct args *a, struct kv_gpus **g)
{
	char path[4200], err[KV_ERRLEN];
	if (a->gpu_file) {
		return cli_kv_error(kv_gpus_load(a->gpu_file, g, err), err);
	}
	if (kv_gpus_find(path, sizeof path)) {
		cli_error("gpus.json: not found in $KV_CONFIG_PATH or the "
			  "data directories; give --gpu-mem SIZE");
		return CLI_USAGE;
	}
	return cli_kv_error(kv_gpus_load(path, g, err), err);
}

int kvfit_list_gpus(const struct args *a)
{
	struct kv_gpus *g;
	struct cli_table t;
	int status = load_gpus(a, &g);
	if (status)
		return status;
	cli_table_begin(&t, gpu_cols, CLI_NCOLS(gpu_cols), a->json, a->header,
			a->human);
	cli_table_brief(&t, gpu_brief, CLI_NCOLS(gpu_brief));
	for (size_t i = 0; i < g->n; i++) {
		const struct kv_gpu *x = &g->gpu[i];
		cli_put_str(&t, x->name);
		cli_put_bytes(&t, x->memory_bytes);
		if (x->unified) /* macOS's default */
			cli_put_bytes(&t,
				      kv_gpu_wired_default(x->memory_bytes));
		else
			cli_put_empty(&t);
		put_some_f(&t, x->bandwidth_gbps, 0);
		put_some_f(&t, x->bf16_tflops, 0);
		put_some_f(&t, x->fp8_tflops, 0);
		put_some_f(&t, x->fp4_tflops, 0);
		put_some_f(&t, x->interconnect_gbps, 0);
		put_some_f(&t, x->bandwidth_efficiency, 3);
		put_some_f(&t, x->flops_efficiency, 3);
		put_some_f(&t, x->decode_tflops, 0);
		put_some_f(&t, x->serial_fraction, 3);
		if (x->threads)
			cli_put_u64(&t, x->threads);
		else
			cli_put_empty(&t);
		cli_put_str(&t, x->label);
		cli_put_str(&t, x->interconnect);
		cli_row_end(&t);
	}
	cli_table_end(&t);
	kv_gpus_free(g);
	return 0;
}

/* Adds a plan, which owns its model (freed here on failure). */
static int push(struct kv_plan **pl, size_t *np, struct kv_plan p)
{
	struct kv_plan *q = realloc(*pl, (*np + 1) * sizeof *q);
	if (!q) {
		kv_model_free(p.m);
		cli_error("out of memory");
		return CLI_FAIL;
	}
	*pl = q;
	q[(*np)++] = p;
	return 0;
}

/* The plan of a config: its rows are the options'. */
static struct kv_plan config(struct kv_model *m)
{
	return (struct kv_plan){.m = m, .dtype = KV_PLAN_OPTIONS};
}

/* An option's value as kvfit was given it: the number, or a list's
 * values (a long one cut after its eighth: ",..."). */
static const char *given_text(const char *opt, const struct kv_plan_opts *o,
			      uint64_t given, char *buf, size_t n)
{
	const uint64_t *v = &given;
	size_t nv = 1, len = 0;
	if (!strcmp(opt, "--users")) {
		v = o->users;
		nv = o->nusers;
	} else if (!strcmp(opt, "--block-size")) {
		v = o->blocks;
		nv = o->nblocks;
	}
	buf[0] = '\0';
	for (size_t i = 0; i < nv && i < 8 && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%llu",
					i ? "," : "",
					(unsigned long long)v[i]);
	if (nv > 8 && len < n)
		snprintf(buf + len, n - len, ",...");
	return buf;
}

/* kvsize's rows on stdin: one plan per row (model, kv_dtype, ctx). Its
 * rows carry its --users, --tp and --block-size: kvfit goes on with them,
 * and refuses its own options where they say otherwise (a block size
 * must be among the option's list; a row without one walks the list). */
static int read_rows(char *buf, const struct kv_plan_opts *o,
		     struct kv_plan **pl, size_t *np)
{
	struct kv_srow *rows;
	size_t n;
	char err[KV_ERRLEN];
	int status = kv_srows_read(buf, &rows, &n, err);
	if (status) {
		char msg[KV_ERRLEN + 8];
		snprintf(msg, sizeof msg, "-: %s", err);
		status = cli_kv_error(status, msg);
	}
	for (size_t i = 0; !status && i < n; i++) {
		const struct kv_srow *r = &rows[i];
		struct kv_model *m;
		char text[200];
		uint64_t row, given;
		const char *opt;
		if (r->config) { /* the config came down the pipe */
			if (kv_model_parse(r->config, strlen(r->config), "-",
					   &m, err)) {
				status = cli_usage("%s", err);
				break;
			}
		} else if ((status = cli_load_model(r->model, &m))) {
			break;
		}
		if ((status = push(pl, np,
				   (struct kv_plan){
					   .m = m,
					   .dtype = r->asked_auto
							    ? -1
							    : kv_dtype_pack(
								      r->k,
								      r->v),
					   .ctx = r->ctx,
					   .users = r->users > 1 ? r->users : 0,
					   .tp = r->tp,
					   .block = r->block})))
			break;
		if ((opt = kv_plan_disagrees(o, &(*pl)[*np - 1], &row, &given)))
			status = cli_usage("-: line %zu: kvsize's rows are for "
					   "%s %llu, and kvfit was given %s "
					   "%s",
					   r->line, opt,
					   (unsigned long long)row, opt,
					   given_text(opt, o, given, text,
						      sizeof text));
	}
	free(rows);
	return status;
}

/* stdin: a JSON config (first non-blank byte '{') or kvsize's TSV. */
static int read_stdin(const struct kv_plan_opts *o, struct kv_plan **pl,
		      size_t *np)
{
	size_t len;
	char *buf, err[KV_ERRLEN];
	struct kv_model *m;
	int status = cli_read_text("-", &buf, &len);
	if (status)
		return status;
	const char *s = buf;
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '[') {
		cli_error("-: a JSON array; kvfit reads a config or kvsize's "
			  "TSV rows (not --json)");
		status = CLI_USAGE;
	} else if (*s != '{') {
		status = read_rows(buf, o, pl, np);
	} else if ((status = kv_model_parse(buf, len, "-", &m, err))) {
		status = cli_kv_error(status, err);
	} else {
		status = push(pl, np, config(m));
	}
	free(buf);
	return status;
}

/* The measured GPU nearest gpu in bandwidth and bf16 rate into *out
 * (NULL: none). Returns 0, or CLI_FAIL out of memory (said). */
static int nearest(const struct kv_effs *effs, const struct kv_gpus *gpus,
		   const struct kv_gpu *gpu, const struct kv_eff **out)
{
	double (*rates)[2] = calloc(effs->n, sizeof *rates);
	if (!rates) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	for (size_t i = 0; i < effs->n; i++) {
		const struct kv_gpu *x = kv_gpus_lookup(gpus, effs->eff[i].gpu);
		if (x) {
			rates[i][0] = x->bandwidth_gbps;
			rates[i][1] = x->bf16_tflops;
		}
	}
	*out = kv_effs_nearest(effs, (const double(*)[2])rates,
			       gpu->bandwidth_gbps, gpu->bf16_tflops);
	free(rates);
	return 0;
}

/* The measured efficiencies of gpu (efficiency.json where gpus.json is
 * found), or of the measured GPU its entry names (efficiency_like), or of
 * the one nearest it in rates, scaled to its datasheet (a note says
 * which): into a->o.work, where a row is timed. None found: its
 * datasheet's rates. */
static int efficiencies(struct args *a, const struct kv_gpus *gpus,
			const struct kv_gpu *gpu)
{
	char path[4200], err[KV_ERRLEN];
	struct kv_serve_in *w = &a->o.work;
	if (a->gpu_file || !w->isl || kv_effs_find(path, sizeof path))
		return 0; /* nothing timed, or no table */
	int e = kv_effs_load(path, &a->effs, err);
	if (e)
		return cli_kv_error(e, err);
	w->effs = a->effs;
	if ((w->eff = kv_effs_lookup(a->effs, gpu->name))) {
		w->source = "measured";
		return 0;
	}
	/* the GPU its entry says it is like, else the nearest */
	const char *nm = gpu->efficiency_like;
	const struct kv_gpu *like = nm[0] ? kv_gpus_lookup(gpus, nm) : NULL;
	if (!(w->eff = like ? kv_effs_lookup(a->effs, like->name) : NULL) &&
	    (e = nearest(a->effs, gpus, gpu, &w->eff)))
		return e;
	if (w->eff) {
		w->source = "scaled";
		w->eff_scaled = true;
		cli_warn("%s: no measured efficiencies; those of %s, scaled "
			 "to its datasheet",
			 gpu->name, w->eff->gpu);
	}
	return 0;
}

/* The memory the GPU may use, where --gpu-mem gives none: its own, or on
 * a Mac's unified memory its wired limit (--wired-limit-mb, else macOS's
 * default), which a->mem_note says for the rows. */
static int usable_memory(struct args *a, const struct kv_gpu *gpu)
{
	char w[32], r[32];
	uint64_t bytes;
	int e = a->wired_given && !gpu->unified /* 0 too */
			? KV_EINVAL
			: kv_gpu_usable(gpu, a->wired_mb, &bytes);
	if (e == KV_EINVAL)
		return cli_usage("--wired-limit-mb: %s has no unified memory "
				 "(a Mac's); give --gpu-mem SIZE",
				 gpu->name);
	if (e)
		return cli_usage("--wired-limit-mb: %llu MiB is more than "
				 "%s's %s of memory",
				 (unsigned long long)a->wired_mb, gpu->name,
				 kv_format_iec(gpu->memory_bytes, r, sizeof r));
	if (a->o.mem)
		return 0; /* --gpu-mem */
	a->o.mem = bytes;
	if (!gpu->unified)
		return 0;
	kv_format_iec(bytes, w, sizeof w);
	kv_format_iec(gpu->memory_bytes, r, sizeof r);
	if (a->wired_mb)
		snprintf(a->mem_note, sizeof a->mem_note,
			 "%s: %s: unified memory: planned with "
			 "--wired-limit-mb %llu, %s of its %s",
			 cli_prog(), gpu->name,
			 (unsigned long long)a->wired_mb, w, r);
	else
		snprintf(a->mem_note, sizeof a->mem_note,
			 "%s: %s: unified memory: planned with macOS's GPU "
			 "wired limit, %s of its %s (sudo sysctl "
			 "iogpu.wired_limit_mb=N raises it: give "
			 "--wired-limit-mb N)",
			 cli_prog(), gpu->name, w, r);
	return 0;
}

/* The GPU, before any config is read, so that an unknown name fails
 * first: its name for the gpu column, and its memory and bandwidth where
 * the options give none. */
int kvfit_gpu_of(struct args *a, struct kv_gpus **gpus, char *name,
		  size_t n)
{
	const struct kv_gpu *gpu;
	char list[2048], r[32], g[32];
	int status;
	snprintf(name, n, "%s", a->mem_text ? a->mem_text : "");
	if (a->gpu && !a->params) {
		if ((status = load_gpus(a, gpus)))
			return status;
		if (!(gpu = kv_gpus_lookup(*gpus, a->gpu)))
			return cli_usage("--gpu: unknown GPU '%s'; known: %s",
					 a->gpu,
					 kv_gpus_list(*gpus, list,
						      sizeof list));
		snprintf(name, n, "%s", gpu->name);
		a->o.gpu = gpu;
		if ((status = usable_memory(a, gpu)))
			return status;
		if (!a->o.bandwidth)
			a->o.bandwidth = gpu->bandwidth_gbps;
		/* the time's: its links, and what a profile measured */
		struct kv_serve_in *w = &a->o.work;
		bool given = w->bw_eff > 0 || w->flops_eff > 0;
		w->attn_tflops = gpu->bf16_tflops;
		w->source = given ? "given"
			    : gpu->fitted ? "fitted"
			    : gpu->bandwidth_efficiency > 0 ? "profile"
							    : "datasheet";
		if (!given && !(gpu->bandwidth_efficiency > 0) &&
		    (status = efficiencies(a, *gpus, gpu)))
			return status;
		if (!a->link_given)
			w->link_gbps = gpu->interconnect_gbps;
		if (!a->link_host_given)
			a->off.link_gbps = gpu->host_link_gbps;
		if (!a->ar_given && gpu->interconnect_gbps > 0)
			kv_allreduce_latency(gpu->interconnect,
					     &w->ar_base_us, &w->ar_step_us);
		if (!w->bw_eff)
			w->bw_eff = gpu->bandwidth_efficiency;
		if (!w->flops_eff)
			w->flops_eff = gpu->flops_efficiency;
		if (!a->serial_given)
			w->serial = gpu->serial_fraction;
		if (!w->dec_tflops)
			w->dec_tflops = gpu->decode_tflops;
	}
	if (!a->params && a->o.reserve > a->o.mem)
		return cli_usage("--reserve: %s is larger than the GPU's "
				 "memory of %s",
				 kv_format_iec(a->o.reserve, r, sizeof r),
				 kv_format_iec(a->o.mem, g, sizeof g));
	return 0;
}

/* Every config (and stdin) loads before any row, so bad input fails
 * early; then each plan's checkpoint is read, once. */
int kvfit_load(int argc, char **argv, const struct args *a,
		struct kv_plan **pl, size_t *np)
{
	bool stdin_read = false;
	int status = 0;
	for (int i = optind; i < argc && !status; i++) {
		struct kv_model *m;
		if (!strcmp(argv[i], "-")) {
			if (stdin_read)
				return cli_usage("- given twice");
			stdin_read = true;
			status = read_stdin(&a->o, pl, np);
		} else if (!(status = cli_load_model(argv[i], &m))) {
			status = push(pl, np, config(m));
		}
	}
	if (status)
		return status;
	for (size_t i = 0; i < *np; i++)
		if ((*pl)[i].dtype != KV_PLAN_OPTIONS &&
		    (a->o.ctx || a->o.dtypes) && !a->params) {
			cli_warn("--ctx and --kv-dtype do not apply to "
				 "kvsize's rows: each keeps its own");
			break;
		}
	for (size_t i = 0; i < *np; i++) /* kvsize's rows: said there */
		if ((*pl)[i].m->note[0] && (*pl)[i].dtype == KV_PLAN_OPTIONS)
			cli_warn("%s: %s", (*pl)[i].m->name, (*pl)[i].m->note);
	for (size_t i = 0; i < *np; i++) {
		struct kv_plan *p = &(*pl)[i];
		char err[KV_ERRLEN];
		int e = kv_ckpt_bytes(p->m->path, &p->ckpt, &p->ckpt_bytes,
				      err);
		if (e)
			return cli_kv_error(e, err);
		if (p->m->quant.fmt == KV_QUANT_UNKNOWN && !a->o.weights &&
		    a->o.wdtype < 0)
			cli_warn("%s: %s: quant_method \"%s\" is not "
				 "modelled; its weights are counted as "
				 "parameters x %s (weights_source config)",
				 p->m->name,
				 p->m->quant.from ? p->m->quant.from
						  : "quantization_config",
				 p->m->quant.method,
				 kv_dtype_name(p->m->dtype));
	}
	return 0;
}

