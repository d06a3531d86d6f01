/*
 * serve.c - the time of a request, from what kv_fit_solve() counts.
 *
 * kv_fit_solve() already knows, for one rank and every pipeline stage,
 * what a decode step of b sequences at a context reads (the weights, or
 * the experts b tokens touch; each sequence's cache) and computes (two
 * FLOPs a parameter a token, the head's logits, attention over the tokens
 * read). A step of any other mix is put together from such probes: the
 * weights a step of t tokens reads, the per-token products and head, and
 * attention's FLOPs and cache bytes at the context each token sees.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/eff.h"
#include "kv/ep.h"
#include "kv/serve.h"
#include "kv/spec.h"
#include "kv/audio.h"
#include "kv/vision.h"

/* Chunk offsets probed at most per prefill: a longer prompt in smaller
 * chunks is timed in runs of chunks, each at its middle chunk. */
#define MAX_PROBES 256

struct rates {
	double bps;   /* bytes per second reached */
	double fps;   /* FLOP/s reached */
	double dfps;  /* FLOP/s a decode step of several users' products
			 reach */
	double link;  /* bytes per second between GPUs; 0 unknown */
	double ar_ms; /* a step's all-reduces' latency */
	double step_ms; /* the serving engine's own cost a step */
	double req_ms;  /* its frontend's a request */
	double serial; /* kv_serve_in's */
	uint32_t act; /* bytes of an activation sent between GPUs */
	/* with measured efficiencies (eff set): */
	const struct kv_eff *eff;
	const struct kv_curve *gemm;    /* the products' format's */
	enum kv_kernels kernels; /* the engine's attention kernels */
	double head_dim;   /* values of the model's attention heads, whose
			      prefill efficiency goes by them (128 for
			      MLA's, as measured) */
	const struct kv_curve *ar;      /* all-reduce by bytes at this tp,
					   or NULL */
	double attn_bps;   /* decode attention's bytes per second */
	double attn_fps;   /* attention's peak FLOP/s (16 bits) */
	double elem_bps;   /* an elementwise kernel's bytes per second */
	double fixed_ms;   /* a step's fixed costs: the products' calls,
			      the attention layers' floors, the
			      elementwise kernels, the engine's own */
	double moe_div;    /* experts over experts a token: a token's
			      share of an expert's rows (1: dense) */
	const struct kv_curve *moe; /* the experts' products' format's, or
				       NULL: as the products' */
	double moe_row;    /* bytes a token's routed activations move, all
			      MoE layers of the stage */
	double moe_ms;     /* the MoE layers' floors */
	double row_bytes;  /* a token's activation (hidden x 2 bytes) */
	double vocab;      /* logits a sampled row */
	uint32_t layers, tp, pp;
	bool ep;           /* groups or experts split (ep.h): the link is
			      their collectives' bytes and latency */
	/* llama.cpp's split (kv_fit_in.off.on): the host's part of each step
	 * and the link's, beside the GPU's */
	const struct kv_ngl *off; /* NULL: no split */
	const struct kv_split *sp; /* the decode step's split, whose shares
				      a burst's steps take */
};

void kv_allreduce_latency(const char *interconnect, double *base_us,
			  double *step_us)
{
	*base_us = 6.6;
	*step_us = strncmp(interconnect, "PCIe", 4) ? 0.6 : 1.0;
}

/* A step of `users` sequences at context ctx (at least 1, and at least
 * the shared prefix), as kv_fit_solve() counts it. */
static int probe(const struct kv_fit_in *in, uint64_t ctx, uint64_t users,
		 struct kv_fit *f, char *err)
{
	struct kv_fit_in x = *in;
	x.ctx = ctx ? ctx : 1;
	x.users = users;
	if (x.prefix > x.ctx)
		x.prefix = x.ctx;
	return kv_fit_solve(&x, f, err);
}

/* Bytes one GPU sends for a step of t tokens: two all-reduces of each
 * layer's output (attention or mixer, then MLP) under tensor parallelism,
 * a ring sending 2 (tp - 1) / tp of them; and each hop between pipeline
 * stages. */
static double link_bytes(const struct kv_fit_in *in, uint32_t act,
			 uint64_t t)
{
	double x = (double)t * (double)in->m->hidden * act, b = 0;
	if (kv_ep_on(in)) /* groups and experts: their all-reduces, then
			     the experts' tokens sent and back (ep.h) */
		b += kv_ep_allreduces(in) * x * 2.0 * (in->tp - 1) / in->tp +
		     kv_ep_a2a_bytes(in, (double)t);
	else if (in->tp > 1)
		b += 2.0 * in->m->n_layers * x * 2.0 * (in->tp - 1) / in->tp;
	if (in->pp > 1)
		b += (double)(in->pp - 1) * x;
	return b;
}

/* What one kernel of a step moves and computes: the weights' products,
 * or attention over the caches. */
struct op {
	double bytes, flops;
	double rbytes, rflops; /* of them, the routed experts' */
	double hbytes, hflops; /* of them, a split's host part */
};

/* The shape of a step: its tokens, the rows of logits it samples, and
 * the longest context a prompt token of it attends over (0: none); a
 * split's bytes across the link between the host and the GPU. */
struct shape {
	double tokens, sampled, span;
	double hlink;
};

/* A split's host part of a step put together beside probe sp (all
 * zeros without one): the host's weights its probe read, its shares of
 * the KV and FLOPs, and the link's bytes. */
static void host_part(const struct kv_split *sp, double host_weights,
		      struct op ops[2], struct shape *sh)
{
	ops[0].hbytes = host_weights;
	ops[0].hflops = ops[0].flops * sp->lin_host_share;
	ops[1].hbytes = ops[1].bytes * sp->kv_host_share;
	ops[1].hflops = ops[1].flops * sp->attn_host_share;
	sh->hlink = sh->tokens * sp->link_token + sh->sampled * sp->logit_bytes;
}

/* The split's host and link ms of a step (kv_ngl_ms), its host part
 * taken off the GPU's ops: its bytes, and its FLOPs where the host runs
 * them (a batch below llama.cpp's op offload). */
static void split_ms(const struct rates *r, struct op ops[2],
		     const struct shape *sh, double *host_ms, double *link_ms)
{
	struct kv_ngl_step st = {
		.tokens = sh->tokens,
		.host_bytes = ops[0].hbytes + ops[1].hbytes,
		.host_flops = ops[0].hflops + ops[1].hflops,
		.link_bytes = sh->hlink,
	};
	bool on_gpu;
	kv_ngl_ms(r->off, &st, host_ms, link_ms, &on_gpu);
	for (int i = 0; i < 2; i++) {
		double keep = ops[i].bytes > 0 ? 1 - ops[i].hbytes / ops[i].bytes
					       : 1;
		ops[i].bytes -= ops[i].hbytes;
		ops[i].rbytes *= keep;
		if (!on_gpu) {
			ops[i].flops -= ops[i].hflops;
			ops[i].rflops *= keep;
		}
	}
}

/* One step's time on the measured efficiencies (kvfit(1), TIME,
 * Efficiencies): the products at their roofline over the efficiency of
 * their format at the step's tokens (an expert's share of them in a
 * MoE), attention at the bandwidth decode attention reaches or the rate
 * prefill attention reaches at the prompt's length, the fixed costs, the
 * elementwise kernels' and the sampler's traffic, and the all-reduces as
 * measured; into *mem, *comp and *lk. */
static void measured_step(const struct rates *r, const struct op ops[2],
			  const struct shape *sh, double link, double *mem,
			  double *comp, double *lk)
{
	double m = r->moe ? sh->tokens : sh->tokens / r->moe_div;
	double e = kv_curve_at(r->gemm, m < 1 ? 1 : m);
	double rb = r->moe ? ops[0].rbytes : 0, rf = r->moe ? ops[0].rflops : 0;
	double pm = (ops[0].bytes - rb) / r->bps * 1e3 / e;
	double pc = (ops[0].flops - rf) / r->fps * 1e3 / e;
	if (r->moe) { /* the experts' grouped products */
		double em = kv_curve_at(r->moe, sh->tokens / r->moe_div);
		double act = sh->tokens * r->moe_row / r->bps * 1e3 / em;
		double xm = rb / r->bps * 1e3 / em, xc = rf / r->fps * 1e3 / em;
		if (xm >= xc)
			pm += xm + act + r->moe_ms;
		else
			pc += xc + act + r->moe_ms;
	}
	double am = ops[1].bytes / r->attn_bps * 1e3;
	double ac = sh->span > 0
			    ? ops[1].flops /
				      (r->attn_fps *
				       kv_eff_prefill_at(r->eff, r->kernels,
							 sh->span,
							 r->head_dim)) *
				      1e3
			    : ops[1].flops / r->attn_fps * 1e3;
	double el = (sh->tokens * r->row_bytes * 8 * r->layers +
		     sh->sampled * r->vocab * 8) /
		    r->elem_bps * 1e3;
	*mem = pm >= pc ? pm : 0;
	*comp = pm >= pc ? 0 : pc;
	if (am >= ac)
		*mem += am;
	else
		*comp += ac;
	*mem += el + r->fixed_ms;
	double x = sh->tokens * r->row_bytes;
	*lk = r->pp > 1 && r->link > 0
		      ? (double)(r->pp - 1) * x / r->link * 1e3
		      : 0;
	if (r->tp > 1 && r->ar && !r->ep)
		*lk += 2.0 * r->layers * kv_curve_at(r->ar, x) * 1e-3;
	else if (r->tp > 1 || r->ep)
		*lk += (r->link > 0 ? link / r->link * 1e3 : 0) + r->ar_ms;
}

/*
 * Adds n steps, each the weights' products then attention (ops[0],
 * ops[1]), to phase p. The two run one after the other, each its own
 * roofline: the products of a large batch are compute-bound while its
 * attention still waits on the caches, and the step takes both. In a
 * decode step of several users (batch) the products run at the decode
 * FLOP rate and add the serial share of their shorter side. With
 * measured efficiencies the step is measured_step's. *longest keeps the
 * longest step's time; its bound is the resource that holds the larger
 * share of it.
 */
static void add_steps(struct kv_phase *p, const struct rates *r, double n,
		      bool batch, const struct op step[2],
		      const struct shape *sh, double link, double *longest)
{
	double lk = (r->link > 0 ? link / r->link * 1e3 : 0) + r->ar_ms;
	double on_mem = 0, on_comp = 0, host_ms = 0, hlink_ms = 0;
	struct op ops[2] = {step[0], step[1]};
	if (r->off)
		split_ms(r, ops, sh, &host_ms, &hlink_ms);
	for (int i = 0; i < 2; i++) {
		double mem = ops[i].bytes / r->bps * 1e3;
		bool rows = i == 0 && batch;
		double comp = ops[i].flops / (rows ? r->dfps : r->fps) * 1e3;
		double s = rows ? r->serial : 0;
		p->bytes += n * ops[i].bytes;
		p->flops += n * ops[i].flops;
		p->mem_ms += n * mem;
		p->compute_ms += n * comp;
		if (mem >= comp)
			on_mem += mem + s * comp;
		else
			on_comp += comp + s * mem;
	}
	if (r->eff)
		measured_step(r, ops, sh, link, &on_mem, &on_comp, &lk);
	on_mem += r->step_ms + host_ms;
	lk += hlink_ms;
	double ms = on_mem + on_comp + lk;
	p->link_bytes += n * link;
	p->link_ms += n * lk;
	p->ms += n * ms;
	if (ms >= *longest) {
		*longest = ms;
		p->bound = lk > fmax(on_mem, on_comp) ? "link"
			   : on_comp > on_mem          ? "compute"
						       : "memory";
	}
}

/* What one token costs at a context, one sequence: the products and head
 * without attention, attention, and the cache read. */
struct token {
	double lin, head, attn, kv;
	double routed; /* of lin, the routed experts' */
};

static int token_at(const struct kv_fit_in *in, uint64_t ctx,
		    struct token *t, char *err)
{
	struct kv_fit f;
	int e = probe(in, ctx, 1, &f, err);
	if (e)
		return e;
	t->head = f.step_head_flops;
	t->attn = f.step_attn_flops;
	t->lin = f.step_flops - t->attn - t->head;
	t->routed = f.step_routed_flops;
	t->kv = (double)f.step_kv_bytes;
	return 0;
}

/* A prompt's own work, summed over its chunks: what a step carrying a
 * share of it adds beside the weights and the decodes. */
struct prompt {
	double tokens; /* its tokens' products */
	double heads;  /* logits rows: one a chunk, its last token's */
	double attn;   /* attention FLOPs */
	double kv;     /* cache bytes: before each chunk read, its own
			  written */
};

/* A prompt's chunk where a step has c tokens left for it. TensorRT-LLM's
 * chunked prefill (enable_chunked_prefill) cuts a context in multiples of
 * its chunk unit, tokens_per_block (the fit's page), or 256 where a
 * layer's window is shorter than the context
 * (_torch/pyexecutor/py_executor_creator.py, ContextChunkingConfig,
 * FIRST_COME_FIRST_SERVED); a request's last chunk is what is left. The
 * other engines take c as it is. */
static uint64_t chunk_of(const struct kv_fit_in *in,
			 const struct kv_serve_in *w, uint64_t block,
			 uint64_t c)
{
	const struct kv_server *sv = in->server;
	uint64_t unit = block;
	if (!w->chunked || !sv || !sv->whole_prompt)
		return c;
	for (uint32_t i = 0; i < in->m->n_layers; i++)
		if (in->m->layers[i].attn == KV_ATTN_SLIDING &&
		    in->m->layers[i].window < in->ctx) {
			unit = unit > 256 ? unit : 256;
			break;
		}
	return c >= unit ? c - c % unit : c;
}

/*
 * Adds n prefill steps of c prompt tokens at offset o (the first of them;
 * a run of n chunks is probed at its middle) beside the d = users - 1
 * decode tokens each carries, at the decode context's costs dec: the
 * weights t = c + d tokens touch, every token's products, the head for
 * the d decodes and the chunk's last token, attention of the chunk's
 * tokens at their mean position and of the decodes at theirs, the cache
 * before the chunk read once, the decodes' caches, and the new tokens'
 * KV written. The prompt's own share goes in *pw.
 */
static int prefill_run(const struct kv_fit_in *in, const struct rates *r,
		       uint64_t o, uint64_t c, uint64_t n,
		       uint64_t d, const struct token *dec, uint64_t tok_bytes,
		       struct kv_phase *p, struct prompt *pw, double *longest,
		       char *err)
{
	uint64_t mid = o + (n - 1) * c / 2; /* the middle chunk's offset */
	struct token at, before = {0};
	struct kv_fit f;
	int e;
	if ((e = token_at(in, mid + (c + 1) / 2, &at, err)) ||
	    (mid && (e = token_at(in, mid, &before, err))) ||
	    (e = probe(in, 1, c + d, &f, err)))
		return e;
	double t = (double)(c + d);
	struct op ops[2] = {
		{(double)(f.step_weight_bytes - f.step_lookup_bytes),
		 t * at.lin + (double)(d + 1) * at.head,
		 (double)f.step_routed_bytes, t * at.routed, 0, 0},
		{(double)d * dec->kv + before.kv + t * (double)tok_bytes,
		 (double)c * at.attn + (double)d * dec->attn, 0, 0, 0, 0},
	};
	struct shape sh = {t, (double)(d + 1), (double)(mid + c), 0};
	host_part(&f.split, (double)f.split.step_host_weight_bytes, ops, &sh);
	add_steps(p, r, (double)n, false, ops, &sh,
		  link_bytes(in, r->act, c + d), longest);
	pw->tokens += (double)(n * c);
	pw->heads += (double)n;
	pw->attn += (double)(n * c) * at.attn;
	pw->kv += (double)n * (before.kv + (double)c * (double)tok_bytes);
	return 0;
}

/*
 * One step of the steady mix, into *p: x prompts' share of work pw
 * (fractions allowed: the mean over a cycle) beside d decodes at the
 * decode context's costs dec, the weights read once for all its tokens.
 */
static int mixed_step(const struct kv_fit_in *in, const struct rates *r,
		      const struct prompt *pw, double x,
		      double d, const struct token *dec, uint64_t tok_bytes,
		      struct kv_phase *p, char *err)
{
	double t = x * pw->tokens + d, longest = 0;
	uint64_t n = t < 1 ? 1 : (uint64_t)llround(t);
	struct kv_fit f;
	int e = probe(in, 1, n, &f, err);
	if (e)
		return e;
	struct op ops[2] = {
		{(double)(f.step_weight_bytes - f.step_lookup_bytes),
		 t * dec->lin + (d + x * pw->heads) * dec->head,
		 (double)f.step_routed_bytes, t * dec->routed, 0, 0},
		{d * (dec->kv + (double)tok_bytes) + x * pw->kv,
		 x * pw->attn + d * dec->attn, 0, 0, 0, 0},
	};
	struct shape sh = {t, d + x * pw->heads,
			   x > 0 ? pw->tokens : 0, 0};
	host_part(&f.split, (double)f.split.step_host_weight_bytes, ops, &sh);
	add_steps(p, r, 1, false, ops, &sh, link_bytes(in, r->act, n),
		  &longest);
	return 0;
}

static void phase_add(struct kv_phase *a, const struct kv_phase *b,
		      double n);
static int spec_draft(const struct kv_fit_in *in, const struct kv_serve_in *w,
		      uint64_t b, uint64_t ctx, uint64_t prompt,
		      struct kv_phase *p, char *err);

/* What speculative decoding's time needs: the tokens a round gives (an
 * acceptance given), and the steady state (a burst's waves step token by
 * token, not modelled with it). */
static int spec_check(const struct kv_fit_in *in, const struct kv_serve_in *w,
		      char *err)
{
	if (!kv_spec_on(in->spec))
		return 0;
	if (isnan(kv_spec_tokens(in->spec))) {
		snprintf(err, KV_ERRLEN, "%s: timing speculative decoding needs "
			 "--acceptance or --acceptance-length",
			 in->m->name);
		return KV_EINVAL;
	}
	if (w->arrivals == KV_ARRIVE_BURST) {
		snprintf(err, KV_ERRLEN, "%s: --arrivals burst with "
			 "--spec-method: not modelled (give steady, or "
			 "--request-rate)", in->m->name);
		return KV_EINVAL;
	}
	return 0;
}

/* One group's tokens a second as every data-parallel group's (ep.h:
 * each as busy), and per GPU over all of them. */
static void all_groups(const struct kv_fit_in *in, struct kv_serve *out)
{
	out->tokens_per_s *= kv_ep_dp(in);
	out->tokens_per_s_gpu = out->tokens_per_s /
				((double)in->tp * in->pp * kv_ep_dp(in));
}

/* A burst's waves step prompt by prompt without the towers' time:
 * refused with images or audio. */
static int vision_check(const struct kv_fit_in *in,
			const struct kv_serve_in *w, char *err)
{
	bool audio = in->audio_s > 0;
	if ((!in->images && !audio) || w->arrivals != KV_ARRIVE_BURST)
		return 0;
	snprintf(err, KV_ERRLEN, "%s: --arrivals burst with %s: the %s "
		 "tower's time is not modelled in a burst (give steady, or "
		 "--request-rate)", in->m->name,
		 in->images ? "--images" : "--audio-seconds",
		 in->images ? "vision" : "audio");
	return KV_EINVAL;
}

/*
 * The steady state of `users` requests served in a closed loop, each
 * sent as the last ends: over one request's life the engine also runs
 * the other users' prompts. Where they fit one to a step, each of the
 * b prompts is the prefill phase as timed (b x its chunks of the
 * cycle's steps), and the rest are decode steps. A request is active
 * for its chunks and osl - 1 decodes; where the prompts ride beside the
 * decodes (vLLM, TensorRT-LLM) those are chunks + osl - 1 steps in all,
 * where they run alone (SGLang) b x chunks more. Where the prompts are
 * more than those steps, each step carries a share: the cycle's b x isl
 * prompt tokens and b x (osl - 1) decodes spread over its steps (no
 * fewer than the batched tokens allow, the rest a wait in the queue),
 * or for SGLang over the decode steps' gaps (no fewer than its chunks
 * allow). Latency = wait + active; ttft = wait + the prompt's own steps;
 * tpot = the rest over osl - 1, as benchmarks measure them.
 */
static int steady(const struct kv_fit_in *in, const struct kv_serve_in *w,
		  const struct rates *r, const struct prompt *pw,
		  const struct token *dec, uint64_t tok_bytes, bool alone,
		  uint64_t budget, struct kv_serve *out, char *err)
{
	double b = (double)w->users, o1 = (double)(w->osl - 1);
	double np = (double)out->chunks, isl = (double)(w->isl - w->cached);
	double pre = out->prefill.ms, dms = out->decode.ms;
	double own = pre, active, x = 0, d = 0;
	/* speculative decoding: a request's decodes are rd rounds of q
	 * tokens each verified (q 1, rd osl - 1 without) */
	double q = kv_spec_on(in->spec) ? in->spec->k + 1.0 : 1;
	double rd = o1 / (out->spec_tokens > 0 ? out->spec_tokens : 1);
	int e;
	if (alone) {
		out->steps = b * np + rd;
		active = b * pre + rd * dms;
		if (np == 1 && b > rd) { /* prompts share prefill steps */
			double s = fmax(rd, 1);
			if (budget && b * isl / (double)budget > s)
				s = b * isl / (double)budget;
			x = b / s;
			out->steps = s + rd;
		}
	} else {
		double n0 = np + rd;
		out->steps = n0;
		active = b * pre + (n0 - b * np) * dms;
		if (b * np > n0) { /* more prompts than steps */
			if (budget &&
			    b * (isl + rd * q) / (double)budget > n0)
				out->steps = b * (isl + rd * q) /
					     (double)budget;
			x = b / out->steps;
			d = b * rd / out->steps;
		}
	}
	if (x > 0) {
		/* each decode of the mix verifies q tokens, its cache read
		 * once for them, and the drafter runs for those sequences */
		struct token dq = *dec;
		struct kv_phase dr = {0};
		dq.kv /= q;
		out->share = x;
		if ((e = mixed_step(in, r, pw, x, d * q, &dq, tok_bytes,
				    &out->mix, err)) ||
		    (d > 0 && kv_spec_on(in->spec) &&
		     (e = spec_draft(in, w, (uint64_t)llround(fmax(d, 1)),
				     out->decode_ctx, 0, &dr, err))))
			return e;
		phase_add(&out->mix, &dr, 1);
		if (!alone) { /* every step the mix */
			own = (out->steps - rd) * out->mix.ms;
			active = out->steps * out->mix.ms;
		} else {
			own = out->mix.ms;
			active = (out->steps - rd) * own + rd * dms;
		}
		/* each request's images and audio through the towers, its
		 * own before its prompt and the others' among its steps (in
		 * pre otherwise) */
		own += out->encoder.ms;
		active += b * out->encoder.ms;
	}
	/* a request that arrives during a step of the others waits for it
	 * to end: half a step, on average; and for its cached tokens to
	 * load (load_wait) */
	out->wait_ms = w->users > 1 ? dms / 2 : 0;
	out->front_ms = r->req_ms;
	out->ttft_ms = out->front_ms + out->wait_ms + own + out->load_wait_ms;
	out->tpot_ms = w->osl > 1 ? (active - own) / o1 : dms;
	out->latency_ms = out->front_ms + out->wait_ms + active +
			  out->load_wait_ms;
	out->tokens_per_s = b * (double)w->osl / out->latency_ms * 1e3;
	all_groups(in, out);
	return 0;
}

/* Contexts a wave's costs are probed at, and interpolated between. */
#define CURVE 33
/* Steps' weights remembered by their tokens (a power of 2: the hash's
 * top 8 bits), and the most users a burst keeps apart. */
#define NMEMO 256
#define MAX_COHORTS (1u << 20)

/* What a token costs at any context up to a request's last: token_at()
 * at CURVE contexts, linear between them (attention's FLOPs and reads
 * grow linearly with the context, and stop at a window). */
struct curve {
	double ctx[CURVE];
	struct token t[CURVE];
	size_t n;
};

static int curve_of(const struct kv_fit_in *in, uint64_t top,
		    struct curve *c, char *err)
{
	c->n = top < CURVE ? top : CURVE;
	for (size_t i = 0; i < c->n; i++) {
		uint64_t x = c->n > 1 ? 1 + (top - 1) * i / (c->n - 1) : 1;
		int e = token_at(in, x, &c->t[i], err);
		if (e)
			return e;
		c->ctx[i] = (double)x;
	}
	return 0;
}

/* A token's attention FLOPs and cache read at context x (0: nothing). */
static void curve_at(const struct curve *c, double x, double *attn,
		     double *kv)
{
	size_t i = 0;
	if (x <= 0) {
		*attn = *kv = 0;
		return;
	}
	/* the first i (up to n - 2) with ctx[i + 1] >= x: a burst asks it
	 * of every cohort in every step, so from where the contexts' even
	 * spacing puts x, then a step or two to the exact one */
	if (c->n > 2) {
		double at = (x - c->ctx[0]) / (c->ctx[c->n - 1] - c->ctx[0]) *
			    (double)(c->n - 1);
		i = c->n - 2;
		if (at < (double)i)
			i = at > 0 ? (size_t)at : 0;
		while (i > 0 && c->ctx[i] >= x)
			i--;
		while (i + 2 < c->n && c->ctx[i + 1] < x)
			i++;
	}
	if (c->n == 1 || x <= c->ctx[0]) {
		*attn = c->t[0].attn * x / c->ctx[0];
		*kv = c->t[0].kv * x / c->ctx[0];
		return;
	}
	double f = (x - c->ctx[i]) / (c->ctx[i + 1] - c->ctx[i]);
	*attn = c->t[i].attn + f * (c->t[i + 1].attn - c->t[i].attn);
	*kv = c->t[i].kv + f * (c->t[i + 1].kv - c->t[i].kv);
}

/* Requests whose prompts ended in the same step: alike from then on. */
struct cohort {
	double n;       /* requests */
	uint64_t out;   /* tokens each has given */
	double first;   /* when they gave the first, ms */
	double arrived; /* the sum of their arrival times, ms */
};

/* Requests sent at the same time, waiting for their prompts' turn. */
struct group {
	double n, at; /* requests; when they were sent, ms */
	double ready; /* when the frontend hands them to the engine, ms */
};

/* A step's work, summed as the scheduler fills it. */
struct work {
	double tokens, heads, attn, kv;
};

/* Adds `times` prompt pieces of c tokens at offset o to a step: their
 * products, attention at their tokens' mean position, the cache before
 * each read once and its own written. */
static void piece(struct work *s, const struct curve *cv, uint64_t o,
		  uint64_t c, uint64_t tok_bytes, double times)
{
	double attn, kv, a0, kv0;
	if (!c || !(times > 0))
		return;
	curve_at(cv, (double)o + (double)(c + 1) / 2, &attn, &kv);
	curve_at(cv, (double)o, &a0, &kv0);
	s->tokens += times * (double)c;
	s->attn += times * (double)c * attn;
	s->kv += times * (kv0 + (double)c * (double)tok_bytes);
}

/* Weights a step of t tokens reads (MoE: the experts they touch), the
 * lookup tables aside, and of them the routed experts'; probed once for
 * each t. */
static int weights_of(const struct kv_fit_in *in, uint64_t t,
		      double (*memo)[3], uint64_t *memo_t, double *bytes,
		      double *routed, double *host, char *err)
{
	size_t h = (size_t)(t * 0x9E3779B97F4A7C15ULL >> 56);
	struct kv_fit f;
	if (memo_t[h] != t) {
		int e = probe(in, 1, t, &f, err);
		if (e)
			return e;
		memo[h][0] = (double)(f.step_weight_bytes -
				      f.step_lookup_bytes);
		memo[h][1] = (double)f.step_routed_bytes;
		memo[h][2] = (double)f.split.step_host_weight_bytes;
		memo_t[h] = t;
	}
	*bytes = memo[h][0];
	*routed = memo[h][1];
	*host = memo[h][2];
	return 0;
}

/* A burst in progress: what waits, what decodes, and the sums kept. */
struct wave {
	struct group *q;    /* waiting groups, a ring of cap */
	struct cohort *co;  /* decoding cohorts, a ring of cap */
	size_t cap, qh, qn, ch, cn;
	uint64_t head_done; /* prompt tokens of the first waiting request
			       already run */
	double unsent;      /* requests not yet sent */
	double front;       /* the requests' waits on it, summed, ms */
	double busy;        /* requests the engine runs: prompts started,
			       decodes */
	double first, end, tpot; /* sums over requests, ms */
};

/* Takes up to `room` prompt tokens off the queue, first come first
 * served (whole prompts only where `whole`), into step s, a request
 * starting only while fewer than `slots` run and once the frontend has
 * handed it over (by `now`); the requests whose prompts end go to
 * *newly (their arrivals summed in *arrived). */
static void take(struct wave *v, const struct curve *cv, uint64_t base,
		 uint64_t isl, uint64_t room, bool whole, double slots,
		 double now, uint64_t tok_bytes, struct work *s,
		 double *newly, double *arrived)
{
	while (room && v->qn) {
		struct group *g = &v->q[v->qh];
		uint64_t left = isl - v->head_done;
		bool started = v->head_done > 0;
		if (!started && (v->busy + 1 > slots || g->ready > now))
			return; /* the engine is full, or the frontend still
				   has the head: the queue waits */
		if (left > room) { /* the head request in part, or waits */
			if (!whole) {
				piece(s, cv, base + v->head_done, room,
				      tok_bytes, 1);
				v->head_done += room;
				v->busy += !started;
			}
			return;
		}
		piece(s, cv, base + v->head_done, left, tok_bytes, 1);
		room -= left;
		v->head_done = 0;
		v->busy += !started;
		/* the head ends, and the whole prompts that follow it */
		double m = fmin(fmin(g->n - 1, (double)(room / isl)),
				floor(slots - v->busy));
		m = m > 0 ? m : 0;
		piece(s, cv, base, isl, tok_bytes, m);
		room -= (uint64_t)m * isl;
		v->busy += m;
		*newly += 1 + m;
		*arrived += (1 + m) * g->at;
		g->n -= 1 + m;
		if (g->n < 0.5) {
			v->qh = (v->qh + 1) % v->cap;
			v->qn--;
		}
	}
}

/* n requests sent to the queue at `now`: the frontend takes req_ms on
 * each, one at a time. Those the benchmark sends together at its start
 * (`start`) reach the engine together when the frontend is done with
 * the last of them (a loop that renders every waiting request's prompt
 * before any reaches the engine); one sent later, as another ends,
 * reaches it req_ms after it was sent, taken as sent req_ms before
 * `now`: the engine's schedule as without a frontend (a request arriving
 * within a step waits for the step's end either way), its ttft and
 * latency req_ms longer. */
static void send(struct wave *v, double n, double now, bool start,
		 double req_ms)
{
	double ready = start ? now + n * req_ms : now;
	double at = start ? now : now - req_ms;
	v->front += n * (ready - at);
	v->q[(v->qh + v->qn++) % v->cap] = (struct group){n, at, ready};
}

/*
 * A burst, as a serving benchmark runs one: num_prompts requests of the
 * same lengths, `users` of them at once (its max concurrency), the
 * first `users` sent together and each of the others the moment one
 * ends; num_prompts at least users. The engine runs at most `slots` of
 * them (those its cache holds), the others wait in its queue, and it
 * runs them step by step as
 * its scheduler fills a step: with a budget of batched tokens, the
 * running decodes first and then the waiting prompts first come first
 * served, the last of them in part (vLLM, llama.cpp); prompts whole, as
 * many as the budget takes beside the decodes (TensorRT-LLM); or, while
 * prompts wait, steps of prompts alone, the decodes paused (SGLang). Each
 * step is timed as the others are, its costs at each request's own
 * context. Requests whose prompts end in one step are alike after it (a
 * cohort), and those sent at one moment wait alike (a group), so a step
 * costs a sum over cohorts. ttft, tpot and latency are the means over
 * the requests (ttft from when each was sent), tokens a second all
 * their tokens over the run, as benchmarks report them.
 */
static int burst(const struct kv_fit_in *in, const struct kv_serve_in *w,
		 const struct rates *r, uint64_t budget, bool alone,
		 bool whole, uint64_t tok_bytes, const struct token *dec,
		 struct kv_serve *out, char *err)
{
	const uint64_t isl = w->isl, osl = w->osl, u = w->users;
	const double slots = (double)(w->slots && w->slots < u ? w->slots : u);
	const uint64_t total = w->prompts > u ? w->prompts : u;
	struct curve cv;
	struct kv_phase run = {0};
	double memo[NMEMO][3], longest = 0, now = 0;
	uint64_t memo_t[NMEMO], steps = 0;
	int e;
	for (size_t i = 0; i < NMEMO; i++)
		memo_t[i] = 0;
	if (u > MAX_COHORTS) {
		snprintf(err, KV_ERRLEN, "%s: a burst of %llu users: at most "
			 "%u", in->m->name, (unsigned long long)u, MAX_COHORTS);
		return KV_EINVAL;
	}
	if ((e = curve_of(in, isl + osl, &cv, err)))
		return e;
	/* at most a cohort and a group a user */
	struct wave v = {.cap = (size_t)u + 1, .unsent = (double)(total - u)};
	v.q = calloc(v.cap, sizeof *v.q);
	v.co = calloc(v.cap, sizeof *v.co);
	if (!v.q || !v.co) {
		free(v.q);
		free(v.co);
		snprintf(err, KV_ERRLEN, "%s: out of memory", in->m->name);
		return KV_ENOMEM;
	}
	send(&v, (double)u, 0, true, r->req_ms);
	double ended = 0;
	while (ended < (double)total - 0.5) {
		struct work s = {0};
		double d = 0, before = run.ms, wb, rb, hb, newly = 0;
		double arrived = 0;
		/* prompts wait that may start, or one started */
		bool prompts = v.qn > 0 &&
			       (v.head_done > 0 || (v.busy + 1 <= slots &&
						    v.q[v.qh].ready <= now));
		bool decodes = !(alone && prompts);
		for (size_t k = 0, j = v.ch; decodes && k < v.cn; k++) {
			const struct cohort *c = &v.co[j];
			double attn, kv;
			j = j + 1 < v.cap ? j + 1 : 0; /* the ring's next */
			curve_at(&cv, (double)(isl + c->out), &attn, &kv);
			d += c->n;
			s.attn += c->n * attn;
			s.kv += c->n * (kv + (double)tok_bytes);
		}
		if (!decodes)
			d = 0;
		s.tokens = s.heads = d;
		uint64_t room = !budget ? UINT64_MAX
				: alone	 ? budget
				: budget > (uint64_t)d ? budget - (uint64_t)d
							: 0;
		take(&v, &cv, w->cached, isl - w->cached, room, whole, slots,
		     now, tok_bytes, &s, &newly, &arrived);
		if (s.tokens <= 0 && v.qn) {
			/* nothing runs: the engine waits for the frontend
			 * (the queue's head is later than now) */
			now = v.q[v.qh].ready;
			continue;
		}
		s.heads += newly;
		uint64_t t = (uint64_t)llround(s.tokens);
		if ((e = weights_of(in, t ? t : 1, memo, memo_t, &wb, &rb, &hb,
				    err)))
			break;
		struct op ops[2] = {
			{wb, s.tokens * dec->lin + s.heads * dec->head, rb,
			 s.tokens * dec->routed, 0, 0},
			{s.kv, s.attn, 0, 0, 0, 0},
		};
		struct shape sh = {s.tokens, s.heads,
				   s.tokens > d ? (double)(isl - w->cached) : 0, 0};
		if (r->sp)
			host_part(r->sp, hb, ops, &sh);
		add_steps(&run, r, 1, s.tokens == d && d > 1, ops, &sh,
			  link_bytes(in, r->act, t ? t : 1), &longest);
		now += run.ms - before;
		steps++;
		/* the decodes' tokens; the cohorts that end free their
		 * users, who send their next requests now */
		double freed = 0;
		for (size_t k = 0, j = v.ch; decodes && k < v.cn; k++) {
			v.co[j].out++;
			j = j + 1 < v.cap ? j + 1 : 0;
		}
		while (v.cn && v.co[v.ch].out >= osl) {
			const struct cohort *c = &v.co[v.ch];
			v.end += c->n * now - c->arrived;
			v.tpot += c->n * (now - c->first) / (double)(osl - 1);
			ended += c->n;
			freed += c->n;
			v.busy -= c->n;
			v.ch = (v.ch + 1) % v.cap;
			v.cn--;
		}
		if (newly > 0) {
			v.first += newly * now - arrived;
			if (osl == 1) {
				v.end += newly * now - arrived;
				ended += newly;
				freed += newly;
				v.busy -= newly;
			} else {
				v.co[(v.ch + v.cn++) % v.cap] =
					(struct cohort){newly, 1, now, arrived};
			}
		}
		double sent = fmin(freed, v.unsent);
		if (sent > 0) {
			v.unsent -= sent;
			send(&v, sent, now, false, r->req_ms);
		}
	}
	free(v.q);
	free(v.co);
	if (e)
		return e;
	double nn = (double)total;
	out->steps = (double)steps;
	out->wait_ms = 0;
	out->front_ms = v.front / nn;
	out->ttft_ms = v.first / nn + out->load_wait_ms;
	out->latency_ms = v.end / nn + out->load_wait_ms;
	out->tpot_ms = osl > 1 ? v.tpot / nn : out->decode.ms;
	out->tokens_per_s = nn * (double)osl / now * 1e3;
	all_groups(in, out);
	return 0;
}

/* Products' calls a layer: attention's (q, k, v), its output, the MLP's
 * gate and up, its down; or a mixer's and its MLP's, alike. */
#define CALLS 4
/* Elementwise kernels a layer: two norms, the rotary embedding, the
 * activation (the residual adds fused into the norms). */
#define ELEMS 4

/* w's measured efficiencies into r, for in's model and engine: the
 * datasheet's peaks, each kind of work at what was measured of it. */
static void measured_rates(const struct kv_fit_in *in,
			   const struct kv_serve_in *w, struct rates *r)
{
	const struct kv_model *m = in->m;
	const struct kv_eff *e = w->eff;
	enum kv_kernels k = in->server->kernels;
	uint32_t attn = 0;
	for (uint32_t i = 0; i < m->n_layers; i++)
		attn += m->layers[i].attn != KV_ATTN_NONE;
	double bw = in->bandwidth_gbps * 1e9;
	r->eff = e;
	r->bps = bw;
	r->fps = in->tflops * 1e12;
	r->dfps = r->fps;
	r->serial = 0;
	r->gemm = e->gemm[in->compute].n ? &e->gemm[in->compute] : &e->gemm[0];
	r->kernels = k;
	r->head_dim = 128;
	for (uint32_t i = 0; i < m->n_layers; i++)
		if (m->layers[i].attn == KV_ATTN_FULL ||
		    m->layers[i].attn == KV_ATTN_SLIDING ||
		    m->layers[i].attn == KV_ATTN_CHUNKED) {
			r->head_dim = m->layers[i].head_dim_k;
			break;
		} else if (m->layers[i].attn == KV_ATTN_MLA) {
			break;
		}
	r->attn_bps = bw * (e->attn_bw[k] > 0	  ? e->attn_bw[k]
			    : e->attn_bw[1 - k] > 0 ? e->attn_bw[1 - k]
						    : 1);
	double afloor = e->attn_bw[k] > 0 ? e->attn_floor_us[k]
					  : e->attn_floor_us[1 - k];
	r->attn_fps = (w->attn_tflops > 0 ? w->attn_tflops : in->tflops) *
		      1e12;
	const struct kv_effs *t = w->effs;
	double elem_us = t ? t->elem_us : 0;
	struct kv_engine_cost ec = kv_effs_engine(t, in->server->name);
	double step_us = w->step_given ? w->step_us : ec.step_us;
	double layer_us = w->layer_given ? w->layer_us : ec.layer_us;
	/* gpt-oss's prompts: the harmony library's, not a template's
	 * (vLLM's serving_chat.py, use_harmony) */
	double request_us = w->request_given ? w->request_us
			    : m->family == KV_FAMILY_GPT_OSS && ec.harmony_us > 0
				    ? ec.harmony_us
				    : ec.request_us;
	r->step_ms = (step_us + layer_us * m->n_layers / in->pp) * 1e-3;
	r->req_ms = request_us * 1e-3;
	r->elem_bps = bw * (t && t->elem_bw > 0 ? t->elem_bw : 1);
	r->layers = m->n_layers / in->pp;
	r->tp = in->tp;
	r->pp = in->pp;
	r->ep = kv_ep_on(in);
	r->fixed_ms = ((double)r->layers * (CALLS * e->gemm_floor_us +
					    ELEMS * elem_us) +
		       (double)attn / in->pp * afloor) *
		      1e-3;
	/* with groups, every group's tokens reach the experts */
	r->moe_div = m->n_experts && m->n_experts_active
			     ? (double)m->n_experts / m->n_experts_active /
				       kv_ep_dp(in)
			     : 1;
	uint32_t moe = 0;
	uint64_t ffn = 0;
	for (uint32_t i = 0; i < m->n_layers; i++)
		if (m->layers[i].mlp == KV_MLP_MOE) {
			moe++;
			ffn = m->layers[i].ffn_dim;
		}
	if (moe && e->moe[0].n) {
		enum kv_compute c = in->compute;
		r->moe = in->mx_experts && e->moe[KV_MOE_MXFP4].n
				 ? &e->moe[KV_MOE_MXFP4]
			 : e->moe[c].n ? &e->moe[c]
				       : &e->moe[0];
		/* a routed row in, its gate, up and activation out, and
		 * back, in 16 bits */
		r->moe_row = (double)moe / in->pp * m->n_experts_active *
			     (2.0 * m->hidden + 3.0 * (double)ffn / in->tp) * 2;
		if (kv_ep_on(in)) /* a rank's rows of every group's tokens,
				     each its ffn / moe_tp, the busiest's */
			r->moe_row = (double)moe / in->pp *
				     m->n_experts_active * kv_ep_dp(in) /
				     kv_ep_size(in) * kv_ep_imbalance(in) *
				     (2.0 * m->hidden +
				      3.0 * (double)ffn / kv_ep_moe_tp(in)) *
				     2;
		r->moe_ms = (double)moe / in->pp * e->moe_floor_us * 1e-3;
	}
	r->row_bytes = (double)m->hidden * 2;
	r->vocab = (double)m->vocab;
	int a = in->tp == 2 ? 0 : in->tp == 4 ? 1 : in->tp == 8 ? 2 : -1;
	r->ar = a >= 0 && e->allreduce[a].n && !w->eff_scaled
			? &e->allreduce[a]
			: NULL;
}

/* The rates a step of w runs at on in's device, into *r; KV_EINVAL
 * with err for a workload of nothing or a device without rates. */
static int rates_of(const struct kv_fit_in *in, const struct kv_serve_in *w,
		    struct rates *r, char *err)
{
	if (!w->isl || !w->osl || !w->users) {
		snprintf(err, KV_ERRLEN, "%s: prompt, output and users must "
			 "be at least 1",
			 in->m->name);
		return KV_EINVAL;
	}
	if (!(in->bandwidth_gbps > 0) || !(in->tflops > 0)) {
		snprintf(err, KV_ERRLEN, "%s: timing needs the GPU's "
			 "bandwidth and FLOP rate",
			 in->m->name);
		return KV_EINVAL;
	}
	*r = (struct rates){
		.bps = in->bandwidth_gbps * 1e9 * (w->bw_eff > 0 ? w->bw_eff
								 : 1),
		.fps = in->tflops * 1e12 * (w->flops_eff > 0 ? w->flops_eff
							     : 1),
		.link = w->link_gbps * 1e9,
		.serial = w->serial,
		.act = w->act_bytes ? w->act_bytes : 2,
	};
	r->dfps = w->dec_tflops > 0 ? w->dec_tflops * 1e12 : r->fps;
	r->step_ms = ((w->step_given ? w->step_us : 0) +
		      (w->layer_given ? w->layer_us * in->m->n_layers / in->pp
				      : 0)) *
		     1e-3;
	r->req_ms = w->request_given ? w->request_us * 1e-3 : 0;
	/* two all-reduces a layer under tensor parallelism (groups and
	 * experts: theirs, and the experts' collectives, ep.h) */
	if (kv_ep_on(in))
		r->ar_ms = (kv_ep_allreduces(in) *
				    (w->ar_base_us +
				     2.0 * (in->tp - 1) * w->ar_step_us) +
			    kv_ep_a2a_us(in, w->ar_base_us, w->ar_step_us)) *
			   1e-3;
	else if (in->tp > 1)
		r->ar_ms = 2.0 * in->m->n_layers *
			   (w->ar_base_us + 2.0 * (in->tp - 1) * w->ar_step_us) *
			   1e-3;
	if (w->eff && in->server->kind != KV_SERVER_IDEAL)
		measured_rates(in, w, r);
	r->off = in->off.on ? &in->off : NULL;
	return 0;
}

/*
 * Speculative decoding (spec.h). A pass of a model over q tokens of each
 * of b sequences at context ctx, added to p: the weights the b q tokens
 * touch read once (and xbytes more, a drafter's matrices beyond its
 * model), every token's products (and xflops each), `rows` rows of
 * logits, each sequence's cache read once and its q tokens' written,
 * attention's FLOPs for each of the q tokens over it.
 */
static int spec_pass(const struct kv_fit_in *in, const struct rates *r,
		     uint64_t b, uint64_t q, uint64_t rows, uint64_t ctx,
		     double xbytes, double xflops, struct kv_phase *p,
		     double *longest, char *err)
{
	struct kv_fit f, fw;
	int e;
	if ((e = probe(in, ctx, b, &f, err)) ||
	    (e = probe(in, 1, b * q, &fw, err)))
		return e;
	double t = (double)(b * q), bb = (double)b;
	double lin = f.step_flops - f.step_attn_flops - f.step_head_flops;
	struct op ops[2] = {
		{(double)(fw.step_weight_bytes - fw.step_lookup_bytes) + xbytes,
		 (double)q * lin + (double)rows / bb * f.step_head_flops +
			 t * xflops,
		 (double)fw.step_routed_bytes, (double)q * f.step_routed_flops,
		 0, 0},
		{(double)f.step_kv_bytes + t * (double)f.step_token_bytes,
		 (double)q * f.step_attn_flops, 0, 0, 0, 0},
	};
	struct shape sh = {t, (double)rows, 0, 0};
	add_steps(p, r, 1, t > 1, ops, &sh, link_bytes(in, r->act, b * q),
		  longest);
	return 0;
}

/* The phase a += b x n (bound: a's, or b's where a has none). */
static void phase_add(struct kv_phase *a, const struct kv_phase *b, double n)
{
	a->bytes += n * b->bytes;
	a->flops += n * b->flops;
	a->link_bytes += n * b->link_bytes;
	a->mem_ms += n * b->mem_ms;
	a->compute_ms += n * b->compute_ms;
	a->link_ms += n * b->link_ms;
	a->ms += n * b->ms;
	if (!a->bound)
		a->bound = b->bound;
}

/* The drafter's rates (for the model of in): its own layers' costs, and
 * the engine's cost a step on each of its passes, each a forward of its
 * own that the engine prepares, launches and samples from, beside the
 * verify step's (vLLM's propose loops over num_speculative_tokens:
 * vllm/v1/spec_decode/eagle.py, commit f7eef1b6; SGLang's draft_forward
 * over speculative_num_steps: python/sglang/srt/speculative/
 * eagle_worker.py, commit 00559eac). TensorRT-LLM's EAGLE-3 and MTP run
 * their passes inside the model's own forward (tensorrt_llm/_torch/
 * speculative/eagle3.py, Eagle3OneModelWorker, commit f933a608): the
 * step's cost is paid once, by the verify. */
static int draft_rates(const struct kv_fit_in *in, const struct kv_fit_in *dx,
		       const struct kv_serve_in *w, struct rates *r,
		       char *err)
{
	struct kv_serve_in x = *w;
	if (in->server->kind == KV_SERVER_TRTLLM &&
	    in->spec->method != KV_SPEC_DRAFT) {
		x.step_given = true;
		x.step_us = 0;
	}
	return rates_of(dx, &x, r, err);
}

/*
 * The drafter's passes of one round for b sequences at ctx, into *p: k
 * passes, the first over the k + 1 tokens each sequence had verified (the
 * drafter catches up on those accepted, as vLLM's propose and SGLang's
 * draft extend run it; its logits of the last), then k - 1 of one token
 * each. Nothing for n-gram lookup, which runs on the host. With `prompt`,
 * one pass over a prompt chunk of that many tokens instead.
 */
static int spec_draft(const struct kv_fit_in *in, const struct kv_serve_in *w,
		      uint64_t b, uint64_t ctx, uint64_t prompt,
		      struct kv_phase *p, char *err)
{
	struct kv_model own;
	struct kv_fit_in dx;
	struct kv_params_memo c;
	struct rates r;
	double xb, xf, longest = 0;
	uint32_t k = in->spec->k;
	int e;
	*p = (struct kv_phase){0};
	if (!b || !kv_spec_drafter(in, &own, &dx, &xb, &xf))
		return 0;
	kv_fit_memo(&dx, &c);
	if (!(e = draft_rates(in, &dx, w, &r, err))) {
		if (prompt)
			e = spec_pass(&dx, &r, 1, prompt, 1, ctx, xb, xf, p,
				      &longest, err);
		else
			e = spec_pass(&dx, &r, b, k + 1, b, ctx, xb, xf, p,
				      &longest, err);
	}
	for (uint32_t i = 1; !e && !prompt && i < k; i++)
		e = spec_pass(&dx, &r, b, 1, b, ctx, xb, xf, p, &longest,
			      err);
	kv_params_memo_free(&c);
	return e;
}

/* One round of speculative decoding of b sequences at ctx, into *round:
 * the drafter's passes (also into *draft), then the target's verify step
 * over the k + 1 tokens of each (the k drafted and the one before them),
 * its weights read once for them all and each sequence's cache once. */
static int spec_round(const struct kv_fit_in *in, const struct kv_serve_in *w,
		      const struct rates *r, uint64_t b, uint64_t ctx,
		      struct kv_phase *round, struct kv_phase *draft,
		      char *err)
{
	uint64_t q = (uint64_t)in->spec->k + 1;
	double longest = 0;
	struct kv_phase v = {0};
	int e;
	if ((e = spec_draft(in, w, b, ctx, 0, draft, err)) ||
	    (e = spec_pass(in, r, b, q, b * q, ctx, 0, 0, &v, &longest, err)))
		return e;
	*round = v;
	phase_add(round, draft, 1);
	return 0;
}

/* One decode step of w's users, every sequence at the mean context of
 * the output (tokens isl + 1 .. isl + osl - 1 are each one step's), into
 * out->decode; *f is kv_fit_solve()'s count of it. */
static int decode_step(const struct kv_fit_in *in,
		       const struct kv_serve_in *w, const struct rates *r,
		       struct kv_serve *out, struct kv_fit *f, char *err)
{
	uint64_t b = w->users;
	double longest = 0;
	out->decode_ctx = w->isl + w->osl / 2;
	int e = probe(in, out->decode_ctx, b, f, err);
	if (e)
		return e;
	out->spec_tokens = kv_spec_tokens(in->spec);
	if (kv_spec_on(in->spec)) /* a round: the drafter's, the verify */
		return spec_round(in, w, r, b, out->decode_ctx, &out->decode,
				  &out->draft, err);
	struct op ops[2] = {
		{(double)(f->step_weight_bytes - f->step_lookup_bytes),
		 f->step_flops - f->step_attn_flops,
		 (double)f->step_routed_bytes, f->step_routed_flops, 0, 0},
		{(double)f->step_kv_bytes +
			 (double)b * (double)f->step_token_bytes,
		 f->step_attn_flops, 0, 0, 0, 0},
	};
	struct shape sh = {(double)b, (double)b, 0, 0};
	host_part(&f->split, (double)f->split.step_host_weight_bytes, ops, &sh);
	add_steps(&out->decode, r, 1, b > 1, ops, &sh,
		  link_bytes(in, r->act, b), &longest);
	return 0;
}

/*
 * One tower's work fl, of params parameters, into *p (kvfit(1), IMAGES
 * and AUDIO, Time): its products at the FLOP rate a prompt's products
 * reach, with measured efficiencies their format's at the rows of all
 * its passes (a request's images, or a clip's chunks, run in one call),
 * or the tower's 16-bit weights read once, whichever is longer; then
 * attention at the rate prefill attention reaches at a pass's sequence.
 * The engine's kernels' floors and its step cost are not counted: the
 * tower runs within the prompt's first step.
 */
static void tower_phase(const struct kv_fit_in *in, const struct rates *r,
			const struct kv_vision_flops *fl, uint64_t params,
			struct kv_phase *p)
{
	double lin = fl->linear, att = fl->attn, ge = 1, ae = 1;
	double afps = r->fps;
	*p = (struct kv_phase){0};
	if (!params)
		return;
	if (r->eff) {
		ge = kv_curve_at(r->gemm, (double)fl->rows);
		ae = kv_eff_prefill_at(r->eff, r->kernels, (double)fl->seq,
				       128);
		afps = r->attn_fps;
	}
	p->bytes = 2.0 * (double)params / in->tp;
	p->flops = lin + att;
	p->mem_ms = p->bytes / r->bps * 1e3;
	double lc = lin / (r->fps * ge) * 1e3, ac = att / (afps * ae) * 1e3;
	p->compute_ms = lc + ac;
	p->ms = fmax(p->mem_ms, lc) + ac;
	p->bound = p->mem_ms > lc ? "memory" : "compute";
}

/* A request's towers (kv_towers_flops) one after the other, into *p:
 * the vision tower on its images, the audio tower on its clip (the
 * first's bound named). */
static void encoder_phase(const struct kv_fit_in *in, const struct rates *r,
			  struct kv_phase *p)
{
	struct kv_vision_flops fl[2];
	struct kv_phase t;
	uint64_t params[2];
	*p = (struct kv_phase){0};
	kv_towers_flops(in, fl, params);
	for (int i = 0; i < 2; i++) {
		tower_phase(in, r, &fl[i], params[i], &t);
		phase_add(p, &t, 1);
	}
}

/* kv_serve_solve, in's counts derived */
static int serve_solve(const struct kv_fit_in *in, const struct kv_serve_in *w,
		       struct kv_serve *out, char *err)
{
	*out = (struct kv_serve){0};
	/* the steps as the engine runs them: at most its slots */
	struct kv_serve_in run = *w;
	if (w->arrivals == KV_ARRIVE_BURST && w->slots && w->slots < w->users)
		run.users = w->slots;
	uint64_t b = run.users;
	struct rates r;
	struct kv_fit f;
	struct token dec;
	struct prompt pw = {0};
	double longest = 0;
	int e;
	out->source = w->eff && in->server->kind == KV_SERVER_IDEAL
			      ? "datasheet"
		      : w->source ? w->source
				  : "datasheet";
	if ((e = spec_check(in, w, err)) || (e = vision_check(in, w, err)) ||
	    (e = rates_of(in, w, &r, err)) ||
	    (e = decode_step(in, &run, &r, out, &f, err)) ||
	    (e = token_at(in, out->decode_ctx, &dec, err)))
		return e;
	r.sp = r.off ? &f.split : NULL;
	uint64_t tok_bytes = f.step_token_bytes;

	/* the prompt, in chunks of what a step has left after the decodes,
	 * or of the whole step where a chunk runs alone */
	const struct kv_server *sv = in->server;
	bool alone = sv && sv->prefill_alone;
	bool whole = sv && sv->whole_prompt && !w->chunked;
	uint64_t d = alone ? 0 : b - 1;
	uint64_t todo = w->isl - w->cached; /* the prompt's tokens computed */
	uint64_t budget = f.batched_tokens, c = todo;
	/* speculative decoding: each decode beside a chunk verifies q
	 * tokens, its cache read once for them (q 1 without) */
	uint64_t q = kv_spec_on(in->spec) ? in->spec->k + 1ULL : 1;
	struct token decq = dec;
	decq.kv /= (double)q;
	d *= q;
	if (whole && budget && todo > budget) {
		snprintf(err, KV_ERRLEN,
			 "%s: %s runs a prompt in one step (chunked prefill "
			 "is off by default) and refuses one of %llu tokens, "
			 "more than its max_num_tokens of %llu "
			 "(--max-num-batched-tokens, or "
			 "--enable-chunked-prefill)",
			 in->m->name, sv->name, (unsigned long long)todo,
			 (unsigned long long)budget);
		return KV_EINVAL;
	}
	if (budget && !whole) /* else in one step */
		c = chunk_of(in, w, f.block, budget > d ? budget - d : 1);
	if (c > todo)
		c = todo;
	uint64_t full = todo / c, rem = todo % c;
	uint64_t g = (full + MAX_PROBES - 1) / MAX_PROBES;
	out->chunk = c;
	out->chunks = full + (rem != 0);
	for (uint64_t k = 0; k < full; k += g) {
		uint64_t n = full - k < g ? full - k : g;
		if ((e = prefill_run(in, &r, w->cached + k * c, c, n, d, &decq,
				     tok_bytes, &out->prefill, &pw, &longest,
				     err)))
			return e;
	}
	if (rem && (e = prefill_run(in, &r, w->cached + full * c, rem, 1, d,
				    &decq, tok_bytes, &out->prefill, &pw,
				    &longest, err)))
		return e;
	if (kv_spec_on(in->spec)) {
		/* each prefill step, the drafter's pass over the chunk and
		 * its round for the decodes beside it */
		struct kv_phase pc, pd;
		if ((e = spec_draft(in, w, 1, out->decode_ctx, c, &pc, err)) ||
		    (e = spec_draft(in, w, d / q, out->decode_ctx, 0, &pd,
				    err)))
			return e;
		phase_add(&pc, &pd, 1);
		phase_add(&out->prefill, &pc, (double)out->chunks);
	}
	/* the towers on the request's images and audio, before its steps */
	encoder_phase(in, &r, &out->encoder);
	phase_add(&out->prefill, &out->encoder, 1);
	/* the cached tokens load beside the prompt's steps, or before */
	out->load_wait_ms = w->load_overlaps
				    ? fmax(0, w->load_ms - out->prefill.ms)
				    : w->load_ms;

	if (w->arrivals == KV_ARRIVE_BURST)
		return burst(in, w, &r, budget, alone, whole, tok_bytes, &dec,
			     out, err);
	return steady(in, w, &r, &pw, &dec, tok_bytes, alone, budget, out,
		      err);
}

int kv_serve_solve(const struct kv_fit_in *in, const struct kv_serve_in *w,
		   struct kv_serve *out, char *err)
{
	/* a prompt's chunks and a burst's cohorts probe the one model */
	struct kv_fit_in x = *in;
	struct kv_params_memo c;
	kv_fit_memo(&x, &c);
	int e = serve_solve(&x, w, out, err);
	kv_params_memo_free(&c);
	return e;
}

/* w's decode step of `users` at serial share s and decode rate t
 * (10^12 FLOP/s), into *ms: the step alone, not the request. */
static int dec_ms(const struct kv_fit_in *in, const struct kv_serve_in *w,
		  uint64_t users, double s, double t, double *ms, char *err)
{
	struct kv_serve_in x = *w;
	struct kv_serve out = {0};
	struct rates r;
	struct kv_fit f;
	x.users = users;
	x.serial = s;
	x.dec_tflops = t;
	int e;
	if ((e = rates_of(in, &x, &r, err)) ||
	    (e = decode_step(in, &x, &r, &out, &f, err)))
		return e;
	*ms = out.decode.ms;
	return 0;
}

/* The decode rate that makes the step of `users` take ms at serial
 * share s: bisection over its logarithm, as the step shrinks with it,
 * from 10^-3 to 10^3 times in->tflops. */
static int fit_rate(const struct kv_fit_in *in, const struct kv_serve_in *w,
		    uint64_t users, double ms, double s, double *rate,
		    char *err)
{
	double lo = log(in->tflops * 1e-3), hi = log(in->tflops * 1e3), t;
	int e;
	for (int i = 0; i < 60; i++) {
		if ((e = dec_ms(in, w, users, s, exp((lo + hi) / 2), &t, err)))
			return e;
		if (t > ms)
			lo = (lo + hi) / 2;
		else
			hi = (lo + hi) / 2;
	}
	*rate = exp((lo + hi) / 2);
	return 0;
}

/* How far w's step of users_b is from ms_b, at share s and the rate
 * that fits the step of users_a to ms_a (into *rate). */
static int miss_b(const struct kv_fit_in *in, const struct kv_serve_in *w,
		  uint64_t users_a, double ms_a, uint64_t users_b,
		  double ms_b, double s, double *rate, double *miss,
		  char *err)
{
	double t;
	int e;
	if ((e = fit_rate(in, w, users_a, ms_a, s, rate, err)) ||
	    (e = dec_ms(in, w, users_b, s, *rate, &t, err)))
		return e;
	*miss = t - ms_b;
	return 0;
}

/* kv_serve_fit_decode's search, in's counts derived */
static int fit_decode(const struct kv_fit_in *in, const struct kv_serve_in *w,
		      uint64_t users_a, double ms_a, uint64_t users_b,
		      double ms_b, double *serial, double *tflops, char *err)
{
	double lo = 0, hi = 1, m_lo, m_hi, m;
	int e;
	if ((e = miss_b(in, w, users_a, ms_a, users_b, ms_b, lo, tflops,
			&m_lo, err)) ||
	    (e = miss_b(in, w, users_a, ms_a, users_b, ms_b, hi, tflops,
			&m_hi, err)))
		return e;
	if ((m_lo > 0) == (m_hi > 0)) /* no share fits: the nearer end */
		*serial = fabs(m_lo) <= fabs(m_hi) ? 0 : 1;
	else {
		for (int i = 0; i < 40; i++) { /* the miss changes sign */
			double s = (lo + hi) / 2;
			if ((e = miss_b(in, w, users_a, ms_a, users_b, ms_b, s,
					tflops, &m, err)))
				return e;
			if ((m > 0) == (m_lo > 0))
				lo = s;
			else
				hi = s;
		}
		*serial = (lo + hi) / 2;
	}
	if ((e = fit_rate(in, w, users_a, ms_a, *serial, tflops, err)))
		return e;
	if (*tflops > in->tflops * 999 || *tflops < in->tflops * 1.001e-3)
		*serial = *tflops = 0; /* the steps do not show the FLOPs */
	return 0;
}

int kv_serve_fit_decode(const struct kv_fit_in *in,
			const struct kv_serve_in *w, uint64_t users_a,
			double ms_a, uint64_t users_b, double ms_b,
			double *serial, double *tflops, char *err)
{
	struct kv_fit_in x = *in;
	struct kv_params_memo c;
	kv_fit_memo(&x, &c);
	int e = fit_decode(&x, w, users_a, ms_a, users_b, ms_b, serial, tflops,
			   err);
	kv_params_memo_free(&c);
	return e;
}

double kv_serve_cost(double usd_per_hour, uint32_t gpus, double tokens_per_s)
{
	if (!(tokens_per_s > 0))
		return NAN;
	return usd_per_hour * gpus / (tokens_per_s * 3600) * 1e6;
}

static bool meets(const struct kv_serve *s, double ttft, double tpot)
{
	return (!(ttft > 0) || s->ttft_ms <= ttft) &&
	       (!(tpot > 0) || s->tpot_ms <= tpot);
}

/* kv_serve_best's search, in's counts derived */
static int serve_best(const struct kv_fit_in *in, const struct kv_serve_in *w,
		      uint64_t max_users, double max_ttft_ms,
		      double max_tpot_ms, uint64_t *users,
		      struct kv_serve *closest, char *err)
{
	struct kv_serve_in x = *w;
	struct kv_serve s;
	int e;
	*users = 0;
	x.users = 1;
	if ((e = serve_solve(in, &x, closest, err)))
		return e;
	if (!max_users || !meets(closest, max_ttft_ms, max_tpot_ms))
		return 0;
	uint64_t lo = 1, hi = max_users; /* lo meets */
	while (lo < hi) {
		x.users = lo + (hi - lo + 1) / 2;
		if ((e = serve_solve(in, &x, &s, err)))
			return e;
		if (meets(&s, max_ttft_ms, max_tpot_ms))
			lo = x.users;
		else
			hi = x.users - 1;
	}
	*users = lo;
	return 0;
}

int kv_serve_best(const struct kv_fit_in *in, const struct kv_serve_in *w,
		  uint64_t max_users, double max_ttft_ms, double max_tpot_ms,
		  uint64_t *users, struct kv_serve *closest, char *err)
{
	struct kv_fit_in x = *in;
	struct kv_params_memo c;
	kv_fit_memo(&x, &c);
	int e = serve_best(&x, w, max_users, max_ttft_ms, max_tpot_ms, users,
			   closest, err);
	kv_params_memo_free(&c);
	return e;
}

/* The steady state of n users of w, into *s. */
static int steady_of(const struct kv_fit_in *in, const struct kv_serve_in *w,
		     uint64_t n, struct kv_serve *s, char *err)
{
	struct kv_serve_in x = *w;
	x.users = n;
	x.arrivals = KV_ARRIVE_STEADY;
	return serve_solve(in, &x, s, err);
}

/* kv_serve_rate's search, in's counts derived */
static int serve_rate(const struct kv_fit_in *in, const struct kv_serve_in *w,
		      uint64_t max_users, struct kv_serve *out, char *err)
{
	const double lam = w->rate / 1e3; /* requests a millisecond */
	struct kv_serve a, b, one;
	int e;
	if (!(w->rate > 0) || !isfinite(w->rate) || !max_users) {
		snprintf(err, KV_ERRLEN, "%s: a request rate needs a rate "
			 "above 0 and a user that fits",
			 in->m->name);
		return KV_EINVAL;
	}
	/* g(n) = n - rate x latency(n): the engine keeps up with n at once
	 * where g(n) >= 0 */
	if ((e = steady_of(in, w, max_users, &b, err)))
		return e;
	if (lam * b.latency_ms > (double)max_users) {
		snprintf(err, KV_ERRLEN, "%s: %g requests a second cannot be "
			 "served: the %llu users that fit finish at most %.3g "
			 "a second",
			 in->m->name, w->rate, (unsigned long long)max_users,
			 (double)max_users / b.latency_ms * 1e3);
		return KV_ERANGE;
	}
	if ((e = steady_of(in, w, 1, &one, err)))
		return e;
	uint64_t lo = 1, hi = max_users; /* the least n with g(n) >= 0 */
	if (lam * one.latency_ms <= 1) {
		hi = 1;
		b = one;
	}
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		struct kv_serve s;
		if ((e = steady_of(in, w, mid, &s, err)))
			return e;
		if (lam * s.latency_ms <= (double)mid) {
			hi = mid;
			b = s;
		} else {
			lo = mid + 1;
		}
	}
	/* N between hi - 1 (behind) and hi (keeping up), linearly */
	double n = lam * one.latency_ms, t = 1;
	if (hi > 1) {
		if ((e = steady_of(in, w, hi - 1, &a, err)))
			return e;
		double ga = (double)(hi - 1) - lam * a.latency_ms;
		double gb = (double)hi - lam * b.latency_ms;
		t = gb > ga ? -ga / (gb - ga) : 1;
		n = (double)(hi - 1) + t;
	} else {
		a = b;
	}
	*out = b;
	out->ttft_ms = a.ttft_ms + t * (b.ttft_ms - a.ttft_ms);
	out->tpot_ms = a.tpot_ms + t * (b.tpot_ms - a.tpot_ms);
	out->latency_ms = a.latency_ms + t * (b.latency_ms - a.latency_ms);
	out->tokens_per_s = w->rate * (double)w->osl;
	all_groups(in, out);
	out->concurrency = n;
	/* arrivals at random: a prompt waits for those ahead of it, the
	 * prefill an M/D/1 server of one prompt's time alone */
	double s1 = one.prefill.ms, rho = lam * s1;
	if (rho >= 1) {
		snprintf(err, KV_ERRLEN, "%s: %g requests a second cannot be "
			 "served: their prompts alone take %.3g s a second",
			 in->m->name, w->rate, rho);
		return KV_ERANGE;
	}
	out->queue_ms = kv_serve_queue_ms(rho, s1);
	out->ttft_ms += out->queue_ms;
	out->latency_ms += out->queue_ms;
	/* and the frontend, an M/D/1 server of one request's work before
	 * it (its own work is in the steady state's ttft already) */
	double c = one.front_ms, rf = lam * c;
	if (rf >= 1) {
		snprintf(err, KV_ERRLEN, "%s: %g requests a second cannot be "
			 "served: the engine's frontend takes %.3g ms a "
			 "request, at most %.4g a second (--request-us)",
			 in->m->name, w->rate, c, 1e3 / c);
		return KV_ERANGE;
	}
	double fq = kv_serve_queue_ms(rf, c);
	out->front_ms += fq;
	out->ttft_ms += fq;
	out->latency_ms += fq;
	return 0;
}

double kv_serve_queue_ms(double rho, double s_ms)
{
	return rho >= 1 ? INFINITY : rho * s_ms / (2 * (1 - rho));
}

int kv_serve_rate(const struct kv_fit_in *in, const struct kv_serve_in *w,
		  uint64_t max_users, struct kv_serve *out, char *err)
{
	struct kv_fit_in x = *in;
	struct kv_params_memo c;
	kv_fit_memo(&x, &c);
	int e = serve_rate(&x, w, max_users, out, err);
	kv_params_memo_free(&c);
	return e;
}
