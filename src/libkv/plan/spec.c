/*
 * spec.c - speculative decoding's rules, engine by engine: which methods
 * each engine runs, what the drafter's weights take beside the target's,
 * what its layers add to each token of the pool, the tokens a sequence
 * holds ahead for the drafts in flight, and the drafter as a model the
 * time model runs. Each rule cites the engine's file and the commit read.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/json.h"
#include "kv/params.h"
#include "kv/spec.h"

static const char *const method_names[] = {
	[KV_SPEC_NONE] = "",	    [KV_SPEC_DRAFT] = "draft",
	[KV_SPEC_EAGLE] = "eagle", [KV_SPEC_EAGLE3] = "eagle3",
	[KV_SPEC_MTP] = "mtp",	    [KV_SPEC_NGRAM] = "ngram"};
#define N_METHODS (int)(sizeof method_names / sizeof *method_names)

/* The engines' names of the methods: vLLM's SpeculativeConfig.method
 * (vllm/config/speculative.py, f19b16d9: draft_model; its MTP model
 * types are taken as mtp) and SGLang's --speculative-algorithm
 * (arg_groups/speculative_hook.py, 004c82e0: STANDALONE, EAGLE, EAGLE3,
 * NEXTN, NGRAM). */
static const char *const vllm_methods[] = {
	[KV_SPEC_DRAFT] = "draft_model", [KV_SPEC_EAGLE] = "eagle",
	[KV_SPEC_EAGLE3] = "eagle3", [KV_SPEC_MTP] = "mtp",
	[KV_SPEC_NGRAM] = "ngram"};
static const char *const sglang_methods[] = {
	[KV_SPEC_DRAFT] = "STANDALONE", [KV_SPEC_EAGLE] = "EAGLE",
	[KV_SPEC_EAGLE3] = "EAGLE3", [KV_SPEC_MTP] = "NEXTN",
	[KV_SPEC_NGRAM] = "NGRAM"};

int kv_spec_method_parse(const char *s, enum kv_spec_method *out)
{
	int i = s[0] ? kv_name_find(method_names, N_METHODS, s) : -1;
	if (i <= 0)
		i = kv_name_find(vllm_methods, N_METHODS, s);
	if (i <= 0)
		i = kv_name_find(sglang_methods, N_METHODS, s);
	if (i <= 0 && strlen(s) > 4 && !strcmp(s + strlen(s) - 4, "_mtp"))
		i = KV_SPEC_MTP; /* vLLM's deepseek_mtp, qwen3_next_mtp, ... */
	if (i <= 0)
		return KV_EINVAL;
	*out = (enum kv_spec_method)i;
	return 0;
}

const char *kv_spec_engine_method(enum kv_server_kind k,
				  enum kv_spec_method m)
{
	const char *const *names = k == KV_SERVER_VLLM	   ? vllm_methods
				   : k == KV_SERVER_SGLANG ? sglang_methods
							   : NULL;
	return names && m > KV_SPEC_NONE && (int)m < N_METHODS ? names[m]
								: NULL;
}

/* A string field of vLLM's speculative config, or NULL. */
static const char *json_str(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(it) ? it->valuestring : NULL;
}

int kv_spec_vllm_parse(const char *json, struct kv_spec *s, char *model,
		       size_t n, char *err)
{
	const char *opt = "--speculative-config";
	cJSON *o = NULL;
	uint64_t k = 0;
	int e = kv_json_read(json, strlen(json), opt, &o, err);
	if (e)
		return e;
	const char *method = json_str(o, "method"), *m = json_str(o, "model");
	const cJSON *nk =
		cJSON_GetObjectItemCaseSensitive(o, "num_speculative_tokens");
	e = KV_EINVAL;
	if (!cJSON_IsObject(o))
		kv_fail(err, opt, "must be a JSON object");
	else if (!nk || !kv_json_whole(nk, KV_SPEC_MAX_TOKENS, &k) || !k)
		kv_fail(err, opt, "num_speculative_tokens: must be 1 to %d",
			KV_SPEC_MAX_TOKENS);
	else if (method && kv_spec_method_parse(method, &s->method))
		kv_fail(err, opt, "method: draft_model, eagle, eagle3, mtp or "
			"ngram, got '%s'", method);
	else if (!method && !m)
		kv_fail(err, opt, "needs a method or a model");
	else if (m && strlen(m) >= n)
		kv_fail(err, opt, "model: a path too long");
	else
		e = 0;
	if (!e) {
		if (!method) /* a model alone: vLLM's draft_model */
			s->method = KV_SPEC_DRAFT;
		s->k = (uint32_t)k;
		snprintf(model, n, "%s", m ? m : "");
	}
	cJSON_Delete(o);
	return e;
}

const char *kv_spec_method_name(enum kv_spec_method m)
{
	return kv_name_of(method_names, N_METHODS, (int)m);
}

bool kv_spec_on(const struct kv_spec *s)
{
	return s && s->method != KV_SPEC_NONE;
}

double kv_spec_tokens(const struct kv_spec *s)
{
	if (!kv_spec_on(s))
		return 1;
	if (s->accept_len > 0)
		return s->accept_len;
	if (!(s->accept > 0))
		return NAN;
	if (s->accept >= 1)
		return (double)s->k + 1;
	return (1 - pow(s->accept, (double)s->k + 1)) / (1 - s->accept);
}

/* Whether the method runs a drafter of its own config (--draft). */
static bool takes_draft(enum kv_spec_method m)
{
	return m == KV_SPEC_DRAFT || m == KV_SPEC_EAGLE || m == KV_SPEC_EAGLE3;
}

int kv_spec_check(const struct kv_spec *s, const struct kv_model *m,
		  char *err)
{
	const char *name;
	if (!kv_spec_on(s))
		return 0;
	name = kv_spec_method_name(s->method);
	if (s->k < 1 || s->k > KV_SPEC_MAX_TOKENS) {
		snprintf(err, KV_ERRLEN, "--spec-tokens: must be 1 to %d, got "
			 "%u", KV_SPEC_MAX_TOKENS, s->k);
		return KV_EINVAL;
	}
	if (s->accept && !(s->accept > 0 && s->accept <= 1)) {
		snprintf(err, KV_ERRLEN, "--acceptance: must be in (0, 1], got "
			 "%g", s->accept);
		return KV_EINVAL;
	}
	if (s->accept_len &&
	    !(s->accept_len >= 1 && s->accept_len <= (double)s->k + 1)) {
		snprintf(err, KV_ERRLEN, "--acceptance-length: must be 1 to "
			 "--spec-tokens + 1 (%u), got %g: a round gives the "
			 "tokens accepted and the verify step's own",
			 s->k + 1, s->accept_len);
		return KV_EINVAL;
	}
	if (takes_draft(s->method) && !s->draft) {
		snprintf(err, KV_ERRLEN, "--spec-method %s: needs --draft "
			 "CONFIG, the %s's config", name,
			 s->method == KV_SPEC_DRAFT ? "draft model" : "head");
		return KV_EINVAL;
	}
	if (!takes_draft(s->method) && s->draft) {
		snprintf(err, KV_ERRLEN, "--spec-method %s: takes no --draft "
			 "(%s)", name,
			 s->method == KV_SPEC_MTP ? "it runs the target's own "
						    "layers"
						  : "it drafts from the tokens "
						    "so far");
		return KV_EINVAL;
	}
	if (s->draft && s->draft->vocab != m->vocab) {
		snprintf(err, KV_ERRLEN, "%s: --draft %s: vocab_size %llu, the "
			 "target's %llu: a drafter must share its target's "
			 "vocabulary", m->name, s->draft->name,
			 (unsigned long long)s->draft->vocab,
			 (unsigned long long)m->vocab);
		return KV_EINVAL;
	}
	if (s->method == KV_SPEC_MTP && !m->n_mtp_layers) {
		snprintf(err, KV_ERRLEN, "%s: --spec-method mtp: the config has "
			 "no multi-token-prediction layers "
			 "(num_nextn_predict_layers, mtp_num_hidden_layers)",
			 m->name);
		return KV_EINVAL;
	}
	return 0;
}

/* Methods each engine runs (bit 1 << method): vLLM's
 * SpeculativeConfig.method (vllm/config/speculative.py, f19b16d9) draft
 * models, eagle, eagle3, mtp and ngram; SGLang's speculative_algorithm
 * (arg_groups/speculative_hook.py, 004c82e0) STANDALONE, EAGLE, EAGLE3,
 * NEXTN (as EAGLE) and NGRAM; TensorRT-LLM's PyTorch back end
 * (tensorrt_llm/_torch/speculative/utils.py, 3e906a0e) draft-target,
 * EAGLE-3, MTP and n-gram, no EAGLE-1/2 heads; llama-server
 * (docs/speculative.md, 067318e6) a draft model (-md) and n-gram maps
 * (--spec-type), no heads and no MTP; the ideal engine all. */
static uint32_t methods(enum kv_server_kind k)
{
	const uint32_t all = (1u << KV_SPEC_DRAFT) | (1u << KV_SPEC_EAGLE) |
			     (1u << KV_SPEC_EAGLE3) | (1u << KV_SPEC_MTP) |
			     (1u << KV_SPEC_NGRAM);
	switch (k) {
	case KV_SERVER_TRTLLM: return all & ~(1u << KV_SPEC_EAGLE);
	case KV_SERVER_LLAMACPP:
		return (1u << KV_SPEC_DRAFT) | (1u << KV_SPEC_NGRAM);
	default: return all;
	}
}

bool kv_spec_refuses(const struct kv_fit_in *in, char *err)
{
	const struct kv_spec *s = in->spec;
	const struct kv_server *sv = in->server;
	if (!kv_spec_on(s) || !sv)
		return false;
	if (kv_spec_check(s, in->m, err)) /* a drafter it cannot size */
		return true;
	const char *name = kv_spec_method_name(s->method);
	if (!(methods(sv->kind) & (1u << s->method))) {
		snprintf(err, KV_ERRLEN, "%s: --spec-method %s: %s does not "
			 "run it%s", sv->name, name, sv->label,
			 sv->kind == KV_SERVER_TRTLLM
				 ? " (its PyTorch back end runs EAGLE-3 heads, "
				   "not EAGLE-1/2: give eagle3)"
				 : " (llama-server drafts with a draft model, "
				   "-md, or n-gram maps, --spec-type)");
		return true;
	}
	if (in->pp > 1) {
		snprintf(err, KV_ERRLEN, "%s: --spec-method %s with --pp %u: not "
			 "modelled (give --pp 1)", sv->name, name, in->pp);
		return true;
	}
	if (in->windows && in->nwindows) {
		snprintf(err, KV_ERRLEN, "%s: --spec-method %s with "
			 "--max-attention-window: not modelled (the drafter's "
			 "layers in its window list)", sv->name, name);
		return true;
	}
	return false;
}

/* Bytes of n parameters in format t, into *out (checked). */
static int bytes(uint64_t n, enum kv_dtype t, uint64_t *out)
{
	return kv_weight_bytes(n, t, out) ? KV_ERANGE : 0;
}

/* Whether model d's weights are counted as its checkpoint stores them
 * (its quantization_config), not as parameters x a format. */
static bool stored(const struct kv_model *d)
{
	return d->quant.fmt != KV_QUANT_NONE && d->quant.fmt != KV_QUANT_UNKNOWN;
}

/* The format the engine runs a drafter config d's plain weights in. */
static enum kv_dtype draft_dtype(const struct kv_fit_in *in,
				 const struct kv_model *d)
{
	return kv_server_weights_dtype(in->server, d->dtype);
}

/* Layer i of model m as the drafter's storage has it: its bytes into
 * *b (the checkpoint's formats where it stores them, else parameters x
 * t), its parameters into *n. */
static int layer_bytes(const struct kv_model *m, const struct kv_quant *q,
		       bool as_stored, enum kv_dtype t, uint32_t i,
		       uint64_t *n, uint64_t *b)
{
	struct kv_params lp;
	int e = kv_layer_params_as(m, q, i, &lp);
	if (e)
		return e;
	*n = lp.total;
	if (as_stored) {
		*b = lp.bytes;
		return 0;
	}
	return bytes(lp.total, t, b);
}

/* The weights of an EAGLE or EAGLE-3 head d, split over the ranks
 * (*split) and held whole on each (*whole): vLLM's llama_eagle.py
 * (00da9231), its layers with the first one's input norm dropped and a
 * 2h -> h fc (nn.Linear: whole on each rank), the embedding and head the
 * target's (llm_base_proposer.py, 00c4f22d: _maybe_share_embeddings and
 * _maybe_share_lm_head share them where the checkpoint has none or the
 * same); llama_eagle3.py (00bd1493), its layers, the first one's q/k/v
 * over 2h, a hidden_norm each, a final norm, a head of draft_vocab_size
 * rows (ParallelLMHead, split), a 3h -> h fc and the draft-to-target map
 * of draft_vocab_size int64 (both whole). */
static int head_weights(const struct kv_fit_in *in, const struct kv_model *d,
			bool eagle3, uint64_t *split, uint64_t *whole)
{
	enum kv_dtype t = draft_dtype(in, d);
	uint64_t h = d->hidden, n = 0, b, sum = 0;
	int e;
	for (uint32_t i = 0; i < d->n_layers; i++) {
		uint64_t ln, lb;
		if ((e = layer_bytes(d, &d->quant, stored(d), t, i, &ln, &lb)))
			return e;
		sum += lb;
	}
	if (eagle3) {
		uint64_t q = (uint64_t)d->n_heads * d->head_dim;
		uint64_t kv = (uint64_t)d->n_kv_heads * d->head_dim;
		uint64_t dv = d->draft_vocab ? d->draft_vocab : d->vocab;
		n = h * (q + 2 * kv) + (uint64_t)d->n_layers * h + h + dv * h;
		if ((e = bytes(n, t, &b)))
			return e;
		*split = sum + b;
		if ((e = bytes(3 * h * h, t, whole)))
			return e;
		*whole += dv * 8;
		return 0;
	}
	/* the first layer's input norm is not loaded */
	b = 0;
	if ((e = bytes(d->layernorm ? 2 * h : h, t, &b)))
		return e;
	*split = sum > b ? sum - b : 0;
	return bytes(2 * h * h, t, whole);
}

/* The target's MTP layers (vLLM's deepseek_mtp.py, SGLang's
 * deepseek_nextn.py): each a decoder layer like the last one, split, and
 * beside it enorm, hnorm, the shared head's norm and an eh_proj of 2h -> h
 * (nn.Linear: whole on each rank) in 16 bits; the embedding and head the
 * target's (_maybe_share_lm_head: "Detected MTP model"). */
static int mtp_weights(const struct kv_fit_in *in, uint64_t *split,
		       uint64_t *whole)
{
	const struct kv_model *m = in->m;
	const struct kv_quant *q = in->quant ? in->quant : &m->quant;
	uint64_t n, b, h = m->hidden;
	int e = layer_bytes(m, q, in->stored, in->w_dtype, m->n_layers - 1, &n,
			    &b);
	if (e || (e = bytes(2 * h * h + 3 * (m->layernorm ? 2 * h : h),
			    in->w_dtype, whole)))
		return e;
	*split = b * m->n_mtp_layers;
	*whole *= m->n_mtp_layers;
	return 0;
}

int kv_spec_weights(const struct kv_fit_in *in, uint64_t *out, char *err)
{
	const struct kv_spec *s = in->spec;
	uint64_t split = 0, whole = 0;
	int e = 0;
	*out = 0;
	if (!kv_spec_on(s) || s->method == KV_SPEC_NGRAM)
		return 0;
	if (s->method == KV_SPEC_DRAFT) {
		/* a draft model loads whole, split as the target is */
		struct kv_params p;
		const struct kv_model *d = s->draft;
		if ((e = kv_model_params(d, &p, err)))
			return e;
		if (stored(d))
			split = p.bytes;
		else
			e = bytes(p.total, draft_dtype(in, d), &split);
	} else if (s->method == KV_SPEC_MTP) {
		e = mtp_weights(in, &split, &whole);
	} else {
		e = head_weights(in, s->draft, s->method == KV_SPEC_EAGLE3,
				 &split, &whole);
	}
	if (e) {
		snprintf(err, KV_ERRLEN, "%s: the drafter's weight bytes "
			 "overflow 64 bits", in->m->name);
		return KV_ERANGE;
	}
	*out = split / in->tp + (split % in->tp != 0) + whole;
	return 0;
}

/* The model whose layers the drafter's cache takes the geometry of. */
static const struct kv_model *geometry(const struct kv_spec *s,
				       const struct kv_model *m)
{
	return s->method == KV_SPEC_MTP ? m : s->draft;
}

/* Index of layer j of the drafter's that keep a cache (MTP: the target's
 * last attention layer, every time); n_layers where none is. */
static uint32_t nth_layer(const struct kv_spec *s, const struct kv_model *m,
			  uint32_t j)
{
	const struct kv_model *d = geometry(s, m);
	if (s->method == KV_SPEC_MTP) {
		for (uint32_t i = m->n_layers; i-- > 0;)
			if (m->layers[i].attn != KV_ATTN_NONE)
				return i;
		return m->n_layers;
	}
	for (uint32_t i = 0; i < d->n_layers; i++)
		if (d->layers[i].attn != KV_ATTN_NONE && !d->layers[i].cross &&
		    j-- == 0)
			return i;
	return d->n_layers;
}

uint32_t kv_spec_layers(const struct kv_fit_in *in)
{
	const struct kv_spec *s = in->spec;
	uint32_t n = 0;
	if (!kv_spec_on(s) || s->method == KV_SPEC_NGRAM)
		return 0;
	if (s->method == KV_SPEC_MTP)
		return in->m->n_mtp_layers;
	/* SGLang counts max(num_hidden_layers, num_attention_layers) of the
	 * draft's config (model_runner.py, eagle_draft_num_layers) */
	if (in->server && in->server->kind == KV_SERVER_SGLANG)
		return s->draft->n_layers;
	while (nth_layer(s, in->m, n) < s->draft->n_layers)
		n++;
	return n;
}

int kv_spec_layer_bytes(const struct kv_fit_in *in, const struct kv_opts *o,
			uint32_t j, uint64_t *tb, char *err)
{
	const struct kv_model *d = geometry(in->spec, in->m);
	uint32_t i = nth_layer(in->spec, in->m, j);
	struct kv_geom g;
	int e;
	*tb = 0;
	if (i >= d->n_layers)
		return 0;
	if ((e = kv_layer_geom(d, i, o, &g, err)))
		return e;
	return kv_geom_token_bytes(&g, o, tb, err);
}

int kv_spec_token_bytes(const struct kv_fit_in *in, const struct kv_opts *o,
			uint64_t cell, uint32_t n, uint64_t *out, char *err)
{
	uint32_t d = kv_spec_layers(in);
	int e;
	*out = 0;
	if (!d)
		return 0;
	if (in->server && in->server->kind == KV_SERVER_SGLANG) {
		/* DefaultPoolConfigurator (pool_configurator.py, 003fca80):
		 * cell_size = int(cell_size * (1 + draft layers / num_layers))
		 * for EAGLE, EAGLE-3, MTP and STANDALONE, "assumes draft and
		 * target share the same per-layer KV size"; the draft worker's
		 * pool is then made as many tokens as the target's */
		if (n)
			*out = (uint64_t)((double)cell *
					  (1 + (double)d / (double)n)) -
			       cell;
		return 0;
	}
	for (uint32_t j = 0; j < d; j++) {
		uint64_t tb;
		if ((e = kv_spec_layer_bytes(in, o, j, &tb, err)))
			return e;
		if (kv_add(*out, tb, out)) {
			snprintf(err, KV_ERRLEN, "%s: the drafter's bytes a "
				 "token overflow 64 bits", in->m->name);
			return KV_ERANGE;
		}
	}
	return 0;
}

uint64_t kv_spec_lookahead(const struct kv_fit_in *in)
{
	const struct kv_spec *s = in->spec;
	if (!kv_spec_on(s) || !in->server)
		return 0;
	switch (in->server->kind) {
	case KV_SERVER_VLLM:
		/* the scheduler (vllm/v1/core/sched/scheduler.py, b4622cf9)
		 * sets num_lookahead_tokens = num_speculative_tokens for
		 * use_eagle() (eagle, eagle3, mtp) and draft models */
		return s->method == KV_SPEC_NGRAM ? 0 : s->k;
	case KV_SERVER_SGLANG:
		/* mem_cache/allocation_sizing.py (84be7ff5),
		 * get_alloc_len_per_decode: max(steps x topk, draft tokens) =
		 * k + 1 at topk 1; the overlap scheduler keeps two outstanding
		 * (eagle_prepare_for_decode: kv_committed_len + 2 x alloc_len) */
		return 2 * ((uint64_t)s->k + 1);
	case KV_SERVER_TRTLLM:
		/* get_num_extra_kv_tokens (speculative/utils.py, 3e906a0e):
		 * max_draft_len - 1 for the one-model paths */
		return s->method == KV_SPEC_EAGLE3 || s->method == KV_SPEC_MTP
			       ? s->k - 1
			       : 0;
	default: return 0;
	}
}

uint64_t kv_spec_max_seqs(const struct kv_fit_in *in)
{
	/* _handle_eagle_family and _handle_ngram (speculative_hook.py,
	 * 004c82e0): "Max running requests is reset to 48 for speculative
	 * decoding" where --max-running-requests is not given */
	return kv_spec_on(in->spec) && in->server &&
			       in->server->kind == KV_SERVER_SGLANG
		       ? 48
		       : 0;
}

bool kv_spec_drafter(const struct kv_fit_in *in, struct kv_model *own,
		     struct kv_fit_in *out, double *extra_bytes,
		     double *extra_flops)
{
	const struct kv_spec *s = in->spec;
	const struct kv_model *m = in->m, *d;
	uint64_t wb = 0;
	double h, n = 0, whole = 0;
	*extra_bytes = *extra_flops = 0;
	if (!kv_spec_on(s) || s->method == KV_SPEC_NGRAM)
		return false;
	*out = *in;
	out->spec = NULL;
	out->counts = NULL;
	out->weights = 0;
	out->users = 0;
	if (s->method == KV_SPEC_MTP) {
		/* one MTP layer a pass, the target's last, in its format */
		*own = *m;
		own->n_layers = 1;
		own->layers = &m->layers[m->n_layers - 1];
		own->n_mtp_layers = 0;
		own->json = NULL;
		out->m = own;
		h = (double)m->hidden;
		whole = 2 * h * h; /* eh_proj */
	} else {
		d = s->draft;
		out->m = d;
		if (s->method == KV_SPEC_EAGLE3) { /* its own, smaller head */
			*own = *d;
			own->vocab = d->draft_vocab ? d->draft_vocab : d->vocab;
			own->json = NULL;
			out->m = own;
		}
		out->stored = stored(d);
		out->quant = NULL;
		out->w_dtype = draft_dtype(in, d);
		h = (double)d->hidden;
		if (s->method == KV_SPEC_EAGLE)
			whole = 2 * h * h;
		if (s->method == KV_SPEC_EAGLE3) {
			whole = 3 * h * h;
			n = h * ((double)d->n_heads * d->head_dim +
				 2.0 * d->n_kv_heads * d->head_dim);
		}
	}
	/* bytes a parameter of the drafter's plain format */
	if (kv_weight_bytes(1024, out->w_dtype, &wb))
		wb = 2048;
	*extra_bytes = (whole + n / in->tp) * (double)wb / 1024;
	*extra_flops = 2 * (whole + n / in->tp);
	return true;
}
