/*
 * sweep.c - a kvbench sweep: its points expanded in the order they run,
 * the bytes each would take, and one point measured with the machine's
 * reference beside it (sweep.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/decode.h"
#include "kv/serve.h"
#include "kv/sweep.h"
#include "kv/units.h"

/* Thread counts run from 1 to 256 (kvbench's --threads). */
#define MAX_THREADS 256

static const char *const layout_names[KV_SWEEP_LAYOUTS] = {
	"contiguous", "blocked", "paged"};

const char *kv_sweep_layout_name(enum kv_sweep_layout l)
{
	return kv_name_of(layout_names, KV_SWEEP_LAYOUTS, (int)l);
}

int kv_sweep_layout_parse(const char *s, enum kv_sweep_layout *out)
{
	int l = kv_name_find(layout_names, KV_SWEEP_LAYOUTS, s);
	*out = l < 0 ? *out : (enum kv_sweep_layout)l;
	return l < 0 ? KV_EINVAL : 0;
}

int kv_sweep_add(struct kv_sweep_points *s, struct kv_sweep_point p)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 64;
		struct kv_sweep_point *q = realloc(s->p, nc * sizeof *q);
		if (!q)
			return KV_ENOMEM;
		s->p = q;
		s->cap = nc;
	}
	s->p[s->n++] = p;
	return 0;
}

/* Adds point p once per layout and block size asked for (nocache, which
 * keeps no cache, once). */
static int add_layouts(const struct kv_sweep *w, struct kv_sweep_points *s,
		       struct kv_sweep_point p)
{
	static const uint64_t bs16 = 16;
	const uint64_t *bs = w->block_size ? w->block_size : &bs16;
	size_t nbs = w->block_size ? w->nblock_size : 1;
	p.layout = KV_SWEEP_CONTIGUOUS;
	p.block_size = 0;
	if (p.bench == KV_BENCH_NOCACHE)
		return kv_sweep_add(s, p);
	for (int l = 0; l < KV_SWEEP_LAYOUTS; l++) {
		bool contiguous = l == KV_SWEEP_CONTIGUOUS;
		if (w->any_layout ? !w->layout[l] : !contiguous)
			continue;
		p.layout = (enum kv_sweep_layout)l;
		for (size_t i = 0; i < (contiguous ? 1 : nbs); i++) {
			p.block_size = contiguous ? 0 : bs[i];
			if (kv_sweep_add(s, p))
				return KV_ENOMEM;
		}
	}
	return 0;
}

/* The default contexts of a bench when the sweep lists none. */
static const uint64_t *default_ctx(enum kv_bench b, size_t *n)
{
	static const uint64_t decode[] = {160, 1024, 8192};
	static const uint64_t nocache[] = {160, 512};
	static const uint64_t attn[] = {1024, 8192};
	static const uint64_t batch[] = {1024};
	static const uint64_t quality[] = {128};
	switch (b) {
	case KV_BENCH_QUALITY: *n = 1; return quality;
	case KV_BENCH_DECODE: *n = 3; return decode;
	case KV_BENCH_NOCACHE: *n = 2; return nocache;
	case KV_BENCH_ATTN: *n = 2; return attn;
	default: *n = 1; return batch;
	}
}

/* The K/V head counts to sweep for model m at latent rank mla: the
 * listed ones, else the model's (attn: H, H/4 and 1); a latent is shared
 * by every head, so it has none to sweep (0, the model's). dflt holds 3. */
static const uint64_t *heads_of(const struct kv_sweep *w, enum kv_bench b,
				const struct kv_model *m, uint64_t mla,
				uint64_t *dflt, size_t *n)
{
	uint64_t h = m->n_kv_heads;
	if (mla || m->kv_lora_rank) {
		dflt[0] = 0;
		*n = 1;
		return dflt;
	}
	if (w->kv_heads) {
		*n = w->nkv_heads;
		return w->kv_heads;
	}
	dflt[0] = h;
	dflt[1] = h / 4;
	dflt[2] = 1;
	*n = b == KV_BENCH_ATTN && h >= 4 && h % 4 == 0 ? 3 : 1;
	if (*n == 3 && h == 4)
		*n = 2; /* 4, 1 */
	return dflt;
}

/* The engine points of bench b on one thread count: model, latent rank,
 * K/V heads, users, context, format, then layouts. */
static int expand_engine(const struct kv_sweep *w, enum kv_bench b,
			 struct kv_model *const *models, size_t nmodels,
			 struct kv_sweep_point p, struct kv_sweep_points *s)
{
	static const int f32[] = {KV_DTYPE_F32};
	static const uint64_t batch_users[] = {1, 2, 4, 8};
	const int *wts = w->wdtypes ? w->wdtypes : f32;
	size_t nwts = w->wdtypes ? w->nwdtypes : 1;
	static const uint64_t one = 1, own = 0;
	/* nocache keeps no cache: its K/V stay f32 */
	bool fmt = b != KV_BENCH_NOCACHE && w->dtypes;
	const int *dts = fmt ? w->dtypes : f32;
	size_t ndts = fmt ? w->ndtypes : 1, nctx;
	const uint64_t *ctx = w->ctx ? w->ctx : default_ctx(b, &nctx);
	if (w->ctx)
		nctx = w->nctx;
	bool batch = b == KV_BENCH_BATCH;
	const uint64_t *users = w->users ? w->users
				: batch  ? batch_users
					 : &one;
	size_t nusers = w->users ? w->nusers : batch ? 4 : 1;
	const uint64_t *mla = w->mla ? w->mla : &own;
	size_t nmla = w->mla ? w->nmla : 1;
	for (size_t mi = 0; mi < nmodels; mi++)
	for (size_t ai = 0; ai < nmla; ai++) {
		uint64_t dflt[3];
		size_t nkvh;
		const uint64_t *kvh = heads_of(w, b, models[mi], mla[ai], dflt,
					       &nkvh);
		p.model = mi;
		p.mla = mla[ai];
		for (size_t k = 0; k < nkvh; k++)
		for (size_t u = 0; u < nusers; u++)
		for (size_t c = 0; c < nctx; c++)
		for (size_t d = 0; d < ndts; d++)
		for (size_t t = 0; t < nwts; t++) {
			p.kv_heads = kvh[k];
			p.users = users[u];
			p.ctx = ctx[c];
			p.dtype = (enum kv_dtype)dts[d];
			p.wt = w->wdtypes || !w->model_wt
				       ? (enum kv_dtype)wts[t]
				       : w->model_wt[mi];
			if (add_layouts(w, s, p))
				return KV_ENOMEM;
		}
	}
	return 0;
}

int kv_sweep_expand(const struct kv_sweep *w, struct kv_model *const *models,
		    size_t nmodels, uint64_t ncpu, struct kv_sweep_points *s)
{
	static const enum kv_bench order[] = {
		KV_BENCH_MEMBW,  KV_BENCH_SGEMM, KV_BENCH_ATTN,
		KV_BENCH_DECODE, KV_BENCH_NOCACHE, KV_BENCH_BATCH,
		KV_BENCH_QUALITY};
	if (ncpu < 1)
		ncpu = 1;
	const uint64_t *threads = w->threads ? w->threads : &ncpu;
	size_t nthreads = w->threads ? w->nthreads : 1;
	for (size_t oi = 0; oi < sizeof order / sizeof *order; oi++) {
		enum kv_bench b = order[oi];
		if (w->any_bench ? !w->bench[b] : b == KV_BENCH_QUALITY)
			continue;
		for (size_t ti = 0; ti < nthreads; ti++) {
			struct kv_sweep_point p = {
				.bench = b, .users = 1, .threads = threads[ti],
				.layout = KV_SWEEP_CONTIGUOUS,
				.dtype = KV_DTYPE_F32};
			int e = b == KV_BENCH_MEMBW || b == KV_BENCH_SGEMM
					? kv_sweep_add(s, p)
					: expand_engine(w, b, models, nmodels,
							p, s);
			if (e)
				return e;
		}
	}
	return 0;
}

int kv_sweep_cols(char *const *names, size_t n, struct kv_sweep_cols *c,
		  char *err)
{
	static const char *const need[] = {"bench", "model", "ctx", "users",
					   "kv_heads", "threads", "ms_median",
					   "layout", "block_size", "kv_dtype",
					   "weights_dtype"};
	int *cell[] = {&c->bench, &c->model, &c->ctx, &c->users,
		       &c->kv_heads, &c->threads, &c->ms, &c->layout,
		       &c->block_size, &c->kv_dtype, &c->weights_dtype};
	c->max = 0;
	for (size_t i = 0; i < sizeof need / sizeof *need; i++) {
		*cell[i] = -1;
		for (size_t k = 0; k < n && *cell[i] < 0; k++)
			if (!strcmp(names[k], need[i]))
				*cell[i] = (int)k;
		if (i >= 7)
			continue; /* optional */
		if (*cell[i] < 0) {
			snprintf(err, KV_ERRLEN,
				 "no column '%s'; not a kvbench TSV with its "
				 "header",
				 need[i]);
			return KV_EINVAL;
		}
		c->max = *cell[i] > c->max ? *cell[i] : c->max;
	}
	return 0;
}

/* The cell of column i, or "" where the row has none. */
static const char *cell(char **cells, size_t nc, int i)
{
	return i >= 0 && (size_t)i < nc ? cells[i] : "";
}

/* An engine row's layout and block size (contiguous when absent). */
static int row_layout(const struct kv_sweep_cols *c, char **cells,
		      size_t nc, struct kv_sweep_point *p)
{
	const char *l = cell(cells, nc, c->layout);
	if (!*l)
		return 0;
	if (kv_sweep_layout_parse(l, &p->layout))
		return KV_EINVAL;
	if (p->layout == KV_SWEEP_CONTIGUOUS)
		return 0;
	return c->block_size < 0 || (size_t)c->block_size >= nc ||
			       kv_parse_u64(cells[c->block_size],
					    &p->block_size) ||
			       !p->block_size || p->block_size > UINT32_MAX
		       ? KV_EINVAL
		       : 0;
}

int kv_sweep_row(const struct kv_sweep_cols *c, char **cells, size_t nc,
		 struct kv_sweep_point *p, char **model, char *err)
{
	const char *dt = cell(cells, nc, c->kv_dtype);
	const char *wt = cell(cells, nc, c->weights_dtype);
	char *end;
	*p = (struct kv_sweep_point){0};
	*model = NULL;
	if (nc <= (size_t)c->max) {
		snprintf(err, KV_ERRLEN, "%zu cells, expected at least %d", nc,
			 c->max + 1);
		return KV_EINVAL;
	}
	if (*dt && (kv_dtype_parse(dt, &p->dtype) ||
		    !kv_dtype_stored(p->dtype))) {
		snprintf(err, KV_ERRLEN,
			 "kv_dtype '%.200s' is not a format the engine stores",
			 dt);
		return KV_EINVAL;
	}
	if (*wt && (kv_dtype_parse(wt, &p->wt) ||
		    !kv_engine_weights_type(p->wt))) {
		snprintf(err, KV_ERRLEN,
			 "weights_dtype '%.200s' is not f32, bf16 or f16", wt);
		return KV_EINVAL;
	}
	if (kv_bench_parse(cells[c->bench], &p->bench)) {
		snprintf(err, KV_ERRLEN, "unknown bench '%.200s'",
			 cells[c->bench]);
		return KV_EINVAL;
	}
	bool engine = p->bench != KV_BENCH_MEMBW && p->bench != KV_BENCH_SGEMM;
	p->baseline_ms = strtod(cells[c->ms], &end);
	if (*end || !(p->baseline_ms > 0) ||
	    kv_parse_u64(cells[c->threads], &p->threads) || !p->threads ||
	    p->threads > MAX_THREADS ||
	    (engine && (kv_parse_u64(cells[c->ctx], &p->ctx) ||
			kv_parse_u64(cells[c->users], &p->users) ||
			kv_parse_u64(cells[c->kv_heads], &p->kv_heads) ||
			!p->ctx || !p->users || !p->kv_heads))) {
		snprintf(err, KV_ERRLEN, "a number is missing or malformed");
		return KV_EINVAL;
	}
	if (!engine)
		return 0;
	if (row_layout(c, cells, nc, p)) {
		snprintf(err, KV_ERRLEN,
			 "a layout or block size is malformed");
		return KV_EINVAL;
	}
	/* "gpt2-small+mla256": the model and a latent rank */
	char *name = cells[c->model], *plus = strstr(name, "+mla");
	if (plus && (!plus[4] || kv_parse_u64(plus + 4, &p->mla) ||
		     !p->mla)) {
		snprintf(err, KV_ERRLEN, "a model '%.200s' with no latent rank",
			 name);
		return KV_EINVAL;
	}
	if (plus)
		*plus = '\0';
	*model = name;
	return 0;
}

struct kv_engine_opts kv_sweep_engine_opts(const struct kv_sweep *w,
					   const struct kv_sweep_point *p)
{
	struct kv_decode_ask a = {
		.layers = w->layers, .vocab = w->vocab,
		.kv_heads = p->kv_heads, .mla = p->mla,
		.mla_rope = w->mla_rope, .users = p->users,
		.threads = p->threads, .seed = w->seed,
		.block_size = p->block_size,
		.paged = p->layout == KV_SWEEP_PAGED,
		.k_dtype = p->dtype, .v_dtype = p->dtype,
		.weights_dtype = (int)p->wt, .logit_scale = w->logit_scale};
	/* the timed benches read weights whatever their values; quality's
	 * answers are the checkpoint's own */
	if (p->bench == KV_BENCH_QUALITY && w->model_ckpt)
		a.ckpt = w->model_ckpt[p->model];
	struct kv_engine_opts o = kv_decode_ask_opts(&a);
	o.max_ctx = p->ctx;
	o.max_chunk = p->bench == KV_BENCH_NOCACHE ? p->ctx : 1;
	o.cache = p->bench != KV_BENCH_NOCACHE;
	return o;
}

int kv_sweep_bytes(const struct kv_sweep *w, const struct kv_model *m,
		   const struct kv_sweep_point *p, uint64_t *bytes,
		   char *err)
{
	struct kv_engine_size sz;
	*bytes = 0;
	if (p->bench == KV_BENCH_MEMBW || p->bench == KV_BENCH_SGEMM)
		return 0;
	struct kv_engine_opts o = kv_sweep_engine_opts(w, p);
	/* quality's runs are ctx + gen - 1 positions long, not ctx: a
	 * refusal (a checkpoint's learned positions) names their length */
	if (p->bench == KV_BENCH_QUALITY)
		return kv_decode_compare_bytes(m, &o, p->ctx, w->gen, bytes, err);
	int e = kv_engine_estimate(m, &o, &sz, err);
	*bytes = sz.total;
	return e;
}

int kv_sweep_fits(const struct kv_sweep *w, struct kv_model *const *models,
		  const struct kv_sweep_points *s, char *err)
{
	char b1[32], b2[32], b3[32], why[KV_ERRLEN];
	uint64_t avail, usable, bytes;
	int e = kv_run_memory(&avail, &usable, err);
	for (size_t i = 0; i < s->n && !e; i++) {
		const struct kv_sweep_point *p = &s->p[i];
		const struct kv_model *m = models[p->model];
		if (p->bench == KV_BENCH_MEMBW && usable && w->membw > usable) {
			snprintf(err, KV_ERRLEN,
				 "--membw-size %s: more than the %s a run may "
				 "take of the %s available",
				 kv_format_iec(w->membw, b1, sizeof b1),
				 kv_format_iec(usable, b2, sizeof b2),
				 kv_format_iec(avail, b3, sizeof b3));
			return KV_EINVAL;
		}
		if (p->bench == KV_BENCH_MEMBW || p->bench == KV_BENCH_SGEMM)
			continue;
		struct kv_engine_opts o = kv_sweep_engine_opts(w, p);
		if ((e = kv_sweep_bytes(w, m, p, &bytes, err)))
			return e;
		if ((e = kv_run_fits(m, &o, bytes, 0, avail, usable, why)))
			snprintf(err, KV_ERRLEN, "%s %s at ctx %llu, %llu users: "
				 "%.700s",
				 kv_bench_name(p->bench), m->name,
				 (unsigned long long)p->ctx,
				 (unsigned long long)p->users, why);
	}
	return e;
}

void kv_sweep_free(struct kv_sweep *w)
{
	free(w->ctx);
	free(w->kv_heads);
	free(w->users);
	free(w->threads);
	free(w->block_size);
	free(w->mla);
	free(w->dtypes);
	free(w->wdtypes);
}

struct kv_sweep_refs {
	struct kv_membw *probe[MAX_THREADS + 1];
	double sgemm[MAX_THREADS + 1];
};

int kv_sweep_refs_new(struct kv_sweep_refs **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? 0 : KV_ENOMEM;
}

void kv_sweep_refs_free(struct kv_sweep_refs *r)
{
	if (!r)
		return;
	for (int i = 0; i <= MAX_THREADS; i++)
		kv_membw_free(r->probe[i]);
	free(r);
}

/* The bandwidth probe of t threads, made on first use; NULL out of
 * memory. */
static struct kv_membw *probe(const struct kv_sweep *w,
			      struct kv_sweep_refs *r, uint64_t t)
{
	if (!r->probe[t])
		kv_membw_new(w->membw, (uint32_t)t, &r->probe[t]);
	return r->probe[t];
}

static double sgemm_rate(const struct kv_sweep *w, struct kv_sweep_refs *r,
			 uint64_t t)
{
	if (r->sgemm[t] == 0)
		kv_sgemm_measure((uint32_t)w->sgemm_n, (uint32_t)t, 3,
				 &r->sgemm[t]);
	return r->sgemm[t];
}

/* membw and sgemm: the reference itself. */
static int run_reference(const struct kv_sweep *w, struct kv_sweep_refs *refs,
			 const struct kv_sweep_point *p,
			 const volatile int *stop, struct kv_bench_result *r,
			 char *err)
{
	*err = '\0';
	if (p->bench == KV_BENCH_SGEMM)
		return kv_bench_sgemm((uint32_t)w->sgemm_n,
				      (uint32_t)p->threads, (uint32_t)w->reps,
				      stop, r);
	struct kv_membw *b = probe(w, refs, p->threads);
	if (!b) {
		snprintf(err, KV_ERRLEN,
			 "out of memory for a %llu-byte bandwidth probe",
			 (unsigned long long)w->membw);
		return KV_ENOMEM;
	}
	return kv_bench_membw(b, (uint32_t)w->reps, stop, r);
}

/* A quality point: the comparison of its format with f32, the
 * milliseconds of the compact run's decode steps as the timing. */
static int run_quality(const struct kv_sweep *w, const struct kv_model *m,
		       const struct kv_sweep_point *p, struct kv_sweep_out *out,
		       char *err)
{
	struct kv_engine_opts o = kv_sweep_engine_opts(w, p);
	struct kv_bench_result *r = &out->r;
	struct kv_model *eff;
	double ms;
	int e = kv_engine_model(m, &o, &eff, err);
	if (e)
		return e;
	out->kv_heads = eff->n_kv_heads;
	kv_model_free(eff);
	if ((e = kv_quality_run(m, &o, p->ctx, w->gen, 0, 0, w->seed, &out->q,
				NULL, &ms, err)))
		return e;
	r->reps = (uint32_t)(w->gen - 1);
	if (r->reps)
		r->ms.median = r->ms.min = r->ms.max = ms / r->reps;
	return 0;
}

/* An engine point: builds the engine, times the bench (and for batch
 * the same step at ctx 1), measures the reference beside it. */
static int run_engine(const struct kv_sweep *w, const struct kv_model *m,
		      struct kv_sweep_refs *refs,
		      const struct kv_sweep_point *p, const volatile int *stop,
		      struct kv_sweep_out *out, char *err)
{
	struct kv_bench_result *r = &out->r;
	struct kv_engine_opts o = kv_sweep_engine_opts(w, p);
	struct kv_engine *e;
	int st = kv_engine_new(m, &o, &e, err);
	if (st)
		return st;
	out->kv_heads = kv_engine_get_model(e)->n_kv_heads;
	/* the effective model's name: "+mla256" with a latent rank */
	snprintf(out->model, sizeof out->model, "%s",
		 kv_engine_get_model(e)->name);
	st = kv_bench_time(e, p->bench, p->ctx, (uint32_t)w->reps,
			   (uint32_t)w->warmup, w->warmup_ns, stop, r);
	if (!st && p->bench == KV_BENCH_BATCH) {
		struct kv_bench_result wt;
		st = kv_bench_time(e, KV_BENCH_DECODE, 1, (uint32_t)w->reps,
				   (uint32_t)w->warmup, w->warmup_ns, stop,
				   &wt);
		r->weights_ms = wt.ms.median;
	}
	kv_engine_free(e);
	if (st) {
		if (*stop)
			*err = '\0';
		else
			snprintf(err, KV_ERRLEN, "%s at ctx %llu failed",
				 kv_bench_name(p->bench),
				 (unsigned long long)p->ctx);
		return st;
	}
	bool nocache = p->bench == KV_BENCH_NOCACHE;
	struct kv_membw *b = nocache ? NULL : probe(w, refs, p->threads);
	double bps = b ? kv_membw_best(b, 3) : 0;
	double fl = nocache ? sgemm_rate(w, refs, p->threads) : 0;
	kv_bench_derive(p->bench, r, bps, fl);
	return 0;
}

int kv_sweep_run(const struct kv_sweep *w, struct kv_model *const *models,
		 struct kv_sweep_refs *refs, const struct kv_sweep_point *p,
		 const volatile int *stop, struct kv_sweep_out *out,
		 char *err)
{
	bool ref = p->bench == KV_BENCH_MEMBW || p->bench == KV_BENCH_SGEMM;
	memset(out, 0, sizeof *out);
	out->kv_heads = p->kv_heads;
	if (p->threads < 1 || p->threads > MAX_THREADS) {
		snprintf(err, KV_ERRLEN, "threads: from 1 to %d, got %llu",
			 MAX_THREADS, (unsigned long long)p->threads);
		return KV_EINVAL;
	}
	if (ref)
		return run_reference(w, refs, p, stop, &out->r, err);
	snprintf(out->model, sizeof out->model, "%s", models[p->model]->name);
	if (p->bench == KV_BENCH_QUALITY)
		return run_quality(w, models[p->model], p, out, err);
	return run_engine(w, models[p->model], refs, p, stop, out, err);
}

int kv_sweep_profile(const struct kv_sweep *w, struct kv_model *const *models,
		     uint64_t ncpu, struct kv_sweep_points *s)
{
	static const enum kv_bench order[] = {
		KV_BENCH_MEMBW, KV_BENCH_SGEMM, KV_BENCH_DECODE,
		KV_BENCH_NOCACHE, KV_BENCH_BATCH, KV_BENCH_BATCH};
	const struct kv_model *m = models[0];
	const uint64_t *threads = w->threads ? w->threads : &ncpu;
	size_t nthreads = w->threads ? w->nthreads : 1;
	enum kv_dtype wt = w->wdtypes	     ? (enum kv_dtype)w->wdtypes[0]
			   : w->model_wt ? w->model_wt[0]
					 : KV_DTYPE_F32;
	for (size_t ti = 0; ti < nthreads; ti++) {
		bool seen = false;
		for (size_t tj = 0; tj < ti; tj++)
			seen = seen || threads[tj] == threads[ti];
		for (size_t b = 0; !seen && b < 6; b++) {
			bool step = order[b] != KV_BENCH_MEMBW &&
				    order[b] != KV_BENCH_SGEMM;
			struct kv_sweep_point p = {
				.bench = order[b], .users = 1,
				.threads = threads[ti] ? threads[ti] : 1,
				.layout = KV_SWEEP_CONTIGUOUS,
				.dtype = KV_DTYPE_F32, .wt = wt};
			if (step)
				p.kv_heads = m->kv_lora_rank ? 0
							     : m->n_kv_heads;
			if (order[b] == KV_BENCH_DECODE)
				p.ctx = KV_PROFILE_DECODE_CTX;
			if (order[b] == KV_BENCH_BATCH) {
				p.ctx = KV_PROFILE_DECODE_CTX;
				p.users = b == 4 ? KV_PROFILE_BATCH_FEW
						 : KV_PROFILE_BATCH_MANY;
			}
			if (order[b] == KV_BENCH_NOCACHE)
				p.ctx = KV_PROFILE_PREFILL_CTX;
			if (kv_sweep_add(s, p))
				return KV_ENOMEM;
		}
	}
	return 0;
}

char *kv_sweep_profile_how(const struct kv_sweep *w, const struct kv_model *m,
			   const struct kv_sweep_points *s, char *buf,
			   size_t n)
{
	char shape[96] = "", probe[32];
	enum kv_dtype wt = KV_DTYPE_F32;
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i].bench == KV_BENCH_DECODE)
			wt = s->p[i].wt;
	unsigned long long layers = w->layers, vocab = w->vocab;
	if (layers && vocab)
		snprintf(shape, sizeof shape, " (%llu layer%s, vocab %llu)",
			 layers, layers == 1 ? "" : "s", vocab);
	else if (layers)
		snprintf(shape, sizeof shape, " (%llu layer%s)", layers,
			 layers == 1 ? "" : "s");
	else if (vocab)
		snprintf(shape, sizeof shape, " (vocab %llu)", vocab);
	snprintf(buf, n,
		 "%s%s, decode of 1 user at %d tokens, of %d and %d users, "
		 "prefill of %d, %s weights, %s probe, sgemm n=%llu, %llu "
		 "rep%s",
		 m->name, shape, KV_PROFILE_DECODE_CTX, KV_PROFILE_BATCH_FEW,
		 KV_PROFILE_BATCH_MANY, KV_PROFILE_PREFILL_CTX,
		 kv_dtype_name(wt),
		 kv_format_iec(w->membw, probe, sizeof probe),
		 (unsigned long long)w->sgemm_n, (unsigned long long)w->reps,
		 w->reps == 1 ? "" : "s");
	return buf;
}

/* The first point of bench b with `users` on t threads among the nout
 * measured; NULL when none. */
static const struct kv_sweep_out *measured(const struct kv_sweep_points *s,
					   const struct kv_sweep_out *outs,
					   size_t nout, enum kv_bench b,
					   uint64_t users, uint64_t t)
{
	for (size_t i = 0; i < nout && i < s->n; i++)
		if (s->p[i].bench == b && s->p[i].users == users &&
		    s->p[i].threads == t)
			return &outs[i];
	return NULL;
}

/* Entry g's serial fraction and decode rate from its batched steps a and
 * b, measured at the decode step's context on model m, weights wt:
 * kvfit's times of them (the ideal engine, an f32 cache) made to match. */
static int profile_decode(const struct kv_model *m, enum kv_dtype wt,
			  const struct kv_sweep_out *a,
			  const struct kv_sweep_out *b, struct kv_gpu *g,
			  char *err)
{
	struct kv_fit_in in = {
		.m = m, .kv_dtype = KV_DTYPE_F32, .w_dtype = wt,
		.mem = g->memory_bytes, .tp = 1, .pp = 1,
		.ctx = KV_PROFILE_DECODE_CTX + 1, .server = kv_server_get(KV_SERVER_IDEAL),
		.bandwidth_gbps = g->bandwidth_gbps, .tflops = g->bf16_tflops,
		.batched_tokens = KV_PROFILE_DECODE_CTX};
	struct kv_serve_in w = {
		.isl = KV_PROFILE_DECODE_CTX, .osl = 1,
		.bw_eff = g->bandwidth_efficiency,
		.flops_eff = g->flops_efficiency};
	double serial, tflops;
	int e = kv_serve_fit_decode(&in, &w, KV_PROFILE_BATCH_FEW,
				    a->r.ms.median, KV_PROFILE_BATCH_MANY,
				    b->r.ms.median, &serial, &tflops, err);
	if (!e) {
		g->serial_fraction = round(serial * 1e3) / 1e3;
		g->decode_tflops = kv_gpu_sig(tflops, 4); /* 0: not shown */
	}
	return e;
}

int kv_sweep_profile_gpus(const struct kv_sweep_points *s,
			  struct kv_model *const *models,
			  const struct kv_sweep_out *outs, size_t nout,
			  const struct kv_gpu *local, time_t when,
			  const char *how, struct kv_gpus **out, char *err)
{
	struct kv_gpus *g = calloc(1, sizeof *g);
	*out = NULL;
	if (!g || !(g->gpu = calloc(s->n ? s->n : 1, sizeof *g->gpu))) {
		free(g);
		snprintf(err, KV_ERRLEN, "out of memory");
		return KV_ENOMEM;
	}
	int e = 0;
	for (size_t i = 0; !e && i < nout && i < s->n; i++) {
		const struct kv_sweep_point *p = &s->p[i];
		if (p->bench != KV_BENCH_DECODE ||
		    measured(s, outs, nout, KV_BENCH_DECODE, 1, p->threads) !=
			    &outs[i])
			continue;
		const struct kv_sweep_out
			*pre = measured(s, outs, nout, KV_BENCH_NOCACHE, 1,
					p->threads),
			*few = measured(s, outs, nout, KV_BENCH_BATCH,
					KV_PROFILE_BATCH_FEW, p->threads),
			*many = measured(s, outs, nout, KV_BENCH_BATCH,
					 KV_PROFILE_BATCH_MANY, p->threads);
		e = kv_gpu_profile(local, (uint32_t)p->threads, &outs[i].r,
				   pre ? &pre->r : NULL, when, how,
				   &g->gpu[g->n], err);
		if (!e && few && many && few->r.ms.median > 0 &&
		    many->r.ms.median > 0)
			e = profile_decode(models[p->model], p->wt, few, many,
					   &g->gpu[g->n], err);
		g->n += !e;
	}
	if (!e && !g->n) {
		snprintf(err, KV_ERRLEN, "a profile without a decode step");
		e = KV_EINVAL;
	}
	if (e) {
		kv_gpus_free(g);
		return e;
	}
	kv_gpus_alias_local(g->gpu, g->n);
	*out = g;
	return 0;
}
