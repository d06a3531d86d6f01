/*
 * lora.c - the slots a serving engine preallocates for LoRA adapters, and
 * what a step reads and computes of them. An adapter of rank r adapts a
 * matrix of in x out with A (r x in) and B (out x r); an engine keeps
 * max_loras of them for every adapted matrix of every layer, at the
 * largest rank, split over tensor-parallel ranks as the base matrix is
 * (a column-parallel matrix's B by its rows, a row-parallel one's A by its
 * columns; vLLM's BaseLinearLayerWithLoRA.create_lora_weights, SGLang's
 * LoRAMemoryPool.get_lora_A_shape and get_lora_B_shape). A token costs an
 * adapter's shrink (x A) and expand (x B): 2 r (in + out) FLOPs a matrix.
 * Which matrices an engine adapts is its rules' (server_*.c).
 */
#include <stdio.h>
#include <string.h>

#include "kv/lora.h"
#include "kv/params.h"
#include "server_int.h"

#define ALL_MODULES 0xffu

/* The names engines give the matrices, and what each stands for (a name
 * of a packed matrix's part takes the whole packed matrix: vLLM's
 * is_in_target_modules, SGLang's get_normalized_target_modules). */
static const struct {
	const char *name;
	unsigned module;
} NAMES[] = {
	{"qkv_proj", KV_LORA_QKV},	   {"q_proj", KV_LORA_QKV},
	{"k_proj", KV_LORA_QKV},	   {"v_proj", KV_LORA_QKV},
	{"o_proj", KV_LORA_O},		   {"gate_up_proj", KV_LORA_GATE_UP},
	{"gate_proj", KV_LORA_GATE_UP},	   {"up_proj", KV_LORA_GATE_UP},
	{"down_proj", KV_LORA_DOWN},	   {"experts", KV_LORA_EXPERTS},
	{"gate", KV_LORA_ROUTER},	   {"embed_tokens", KV_LORA_EMBED},
	{"lm_head", KV_LORA_HEAD},
};
#define NNAMES (sizeof NAMES / sizeof *NAMES)

int kv_lora_modules_parse(const char *s, unsigned *out, char *bad, size_t n)
{
	unsigned m = 0;
	bool all = false;
	while (*s) {
		size_t len = strcspn(s, ",");
		size_t i = 0;
		if (len == 3 && !strncmp(s, "all", 3))
			all = true;
		else {
			while (i < NNAMES && !(strlen(NAMES[i].name) == len &&
					       !strncmp(s, NAMES[i].name, len)))
				i++;
			if (i == NNAMES || !len) {
				snprintf(bad, n, "%.*s", (int)len, s);
				return KV_EINVAL;
			}
			m |= NAMES[i].module;
		}
		s += len + (s[len] == ',');
	}
	*out = all ? 0 : m;
	return 0;
}

char *kv_lora_modules_name(unsigned modules, char *buf, size_t n)
{
	size_t at = 0;
	unsigned done = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NNAMES && at < n; i++) {
		unsigned b = NAMES[i].module;
		if (!(modules & b) || (done & b))
			continue;
		done |= b;
		at += (size_t)snprintf(buf + at, n - at, "%s%s", at ? "," : "",
				       NAMES[i].name);
	}
	return buf;
}

static const struct kv_lora_rules *rules(const struct kv_fit_in *in)
{
	return in->server ? in->server->lora : NULL;
}

uint64_t kv_lora_max_loras(const struct kv_fit_in *in)
{
	const struct kv_lora_rules *rl = rules(in);
	if (!in->lora)
		return 0;
	return in->lora->max_loras ? in->lora->max_loras
	       : rl		   ? rl->max_loras
				   : 0;
}

uint32_t kv_lora_rank(const struct kv_fit_in *in)
{
	const struct kv_lora_rules *rl = rules(in);
	if (!in->lora)
		return 0;
	return in->lora->rank ? in->lora->rank : rl ? rl->rank : 0;
}

uint64_t kv_lora_cpu_loras(const struct kv_fit_in *in)
{
	if (!in->lora)
		return 0;
	return in->lora->cpu_loras ? in->lora->cpu_loras : kv_lora_max_loras(in);
}

/* What the row adapts: the modules asked, or the engine's default for
 * the model. */
static unsigned modules(const struct kv_fit_in *in)
{
	const struct kv_lora_rules *rl = rules(in);
	if (in->lora->modules)
		return in->lora->modules;
	unsigned m = rl->modules;
	if (rl->archs && server_arch_is(in->m, rl->archs, rl->types))
		m |= rl->arch_modules;
	return m;
}

/* Why layer i's matrices are not sized here, or NULL. */
static const char *unmodelled(const struct kv_model *m, uint32_t i)
{
	const struct kv_layer *ly = &m->layers[i];
	if (ly->attn == KV_ATTN_MLA)
		return "multi-head latent attention layers";
	if (ly->ssm || (ly->attn == KV_ATTN_NONE && ly->mlp != KV_MLP_NONE))
		return "state-space mixers";
	if (ly->cross)
		return "cross-attention layers";
	return NULL;
}

bool kv_lora_refuses(const struct kv_fit_in *in, char *err)
{
	const struct kv_server *sv = in->server;
	const struct kv_lora_rules *rl = rules(in);
	const struct kv_model *m = in->m;
	char list[160], names[160];
	if (!in->lora || !sv)
		return false;
	if (!rl) {
		snprintf(err, KV_ERRLEN,
			 "%s: --max-loras: %s's LoRA is not modelled (%s)",
			 sv->name, sv->label,
			 sv->kind == KV_SERVER_TRTLLM
				 ? "it keeps adapters in the pages of its PEFT "
				   "cache, PeftCacheConfig"
				 : "it applies the --lora files it loads, "
				   "whole");
		return true;
	}
	uint32_t r = kv_lora_rank(in);
	if (!r) {
		snprintf(err, KV_ERRLEN,
			 "%s: --max-loras: %s takes the largest rank from the "
			 "adapters it loads; give --max-lora-rank",
			 sv->name, sv->label);
		return true;
	}
	bool ok = !rl->ranks;
	for (size_t i = 0; i < rl->nranks; i++)
		ok |= rl->ranks[i] == r;
	if (!ok) {
		size_t at = 0;
		list[0] = '\0';
		for (size_t i = 0; i < rl->nranks && at < sizeof list; i++)
			at += (size_t)snprintf(list + at, sizeof list - at,
					       "%s%u", i ? ", " : "",
					       rl->ranks[i]);
		snprintf(err, KV_ERRLEN,
			 "%s: --max-lora-rank %u: %s takes %s", sv->name, r,
			 sv->label, list);
		return true;
	}
	unsigned extra = in->lora->modules & ~rl->names;
	if (extra) {
		snprintf(err, KV_ERRLEN,
			 "%s: --lora-target-modules %s: %s has no such "
			 "module (it adapts %s)",
			 sv->name, kv_lora_modules_name(extra, list, sizeof list),
			 sv->label,
			 kv_lora_modules_name(rl->names, names, sizeof names));
		return true;
	}
	if (rl->cpu_at_least && in->lora->cpu_loras &&
	    in->lora->cpu_loras < kv_lora_max_loras(in)) {
		snprintf(err, KV_ERRLEN,
			 "%s: --max-cpu-loras %llu: must be at least "
			 "--max-loras %llu",
			 sv->name, (unsigned long long)in->lora->cpu_loras,
			 (unsigned long long)kv_lora_max_loras(in));
		return true;
	}
	if (rl->max_vocab && (modules(in) & KV_LORA_HEAD) &&
	    m->vocab > rl->max_vocab) {
		snprintf(err, KV_ERRLEN,
			 "%s: %s adapts the head of a vocabulary of at most "
			 "%llu tokens, and %s has %llu; leave lm_head out "
			 "(--lora-target-modules)",
			 sv->name, sv->label,
			 (unsigned long long)rl->max_vocab, m->name,
			 (unsigned long long)m->vocab);
		return true;
	}
	const char *why = NULL;
	for (uint32_t i = 0; i < m->n_layers && !why; i++)
		why = unmodelled(m, i);
	if (!why && m->family != KV_FAMILY_LLAMA &&
	    m->family != KV_FAMILY_GEMMA)
		why = "family's projections";
	if (!why && m->attn_gate)
		why = "gated attention";
	if (!why && m->embed_dim && m->embed_dim != m->hidden)
		why = "projected embedding";
	if (why) {
		snprintf(err, KV_ERRLEN,
			 "%s: LoRA slots of its %s are not modelled "
			 "(Llama-style q, k, v, o, gate, up and down "
			 "projections, MoE experts, embedding and head)",
			 m->name, why);
		return true;
	}
	return false;
}

/* Sums of one adapter on one rank: elements per unit of rank (the in
 * and out widths of each matrix adapted) and of them, what a token
 * computes. */
struct widths {
	uint64_t all;    /* every matrix's in + out */
	uint64_t lookup; /* of all: the embedding's A, looked up by row */
	double token;    /* the widths one token multiplies through: its
			    routed experts' share of theirs, the
			    embedding's B alone, no head */
	uint64_t head;   /* the head's, per sampled row */
};

/* A dense MLP of width f on one rank (gate and up packed; down). */
static void mlp(unsigned mods, bool gated, uint64_t h, uint64_t f,
		struct widths *w)
{
	uint64_t gu = (gated ? 2 : 1) * (h + f);
	if (mods & KV_LORA_GATE_UP) {
		w->all += gu;
		w->token += (double)gu;
	}
	if (mods & KV_LORA_DOWN) {
		w->all += f + h;
		w->token += (double)(f + h);
	}
}

/* The width a layer's expert MLPs take, of the first MoE layer (a dense
 * layer of a MoE model keeps SGLang's expert slots too). */
static uint64_t expert_ffn(const struct kv_model *m)
{
	for (uint32_t i = 0; i < m->n_layers; i++)
		if (m->layers[i].mlp == KV_MLP_MOE)
			return m->layers[i].ffn_dim;
	return 0;
}

/* Layer i's widths on one rank of tp. */
static void layer_widths(const struct kv_fit_in *in, unsigned mods,
			 uint32_t tp, uint32_t i, struct widths *w)
{
	const struct kv_lora_rules *rl = rules(in);
	const struct kv_model *m = in->m;
	const struct kv_layer *ly = &m->layers[i];
	uint64_t h = m->hidden;
	if (ly->attn != KV_ATTN_NONE && ly->q_heads) {
		uint64_t q = (uint64_t)ly->q_heads / tp;
		uint64_t kv = ly->kv_heads >= tp ? ly->kv_heads / tp : 1;
		/* q, k and v, each its A of h and its B of this rank's
		 * heads (a K/V head kept whole where tp is above them) */
		uint64_t qkv = 3 * h + q * ly->head_dim_k +
			       kv * (ly->head_dim_k + ly->head_dim_v);
		uint64_t o = q * ly->head_dim_v + h;
		if (mods & KV_LORA_QKV) {
			w->all += qkv;
			w->token += (double)qkv;
		}
		if (mods & KV_LORA_O) {
			w->all += o;
			w->token += (double)o;
		}
	}
	bool moe_model = m->n_experts > 0;
	if (ly->mlp == KV_MLP_DENSE && !(rl->experts_by_mlp && moe_model))
		mlp(mods, m->gated_mlp, h, ly->ffn_dim / tp, w);
	if (rl->experts_by_mlp && moe_model) {
		/* SGLang: gate_up_proj and down_proj of every layer of a MoE
		 * model: the routed experts' (4D) and, with shared experts,
		 * the dense or shared MLP's (3D) */
		if (m->n_shared_experts)
			mlp(mods, m->gated_mlp, h,
			    (ly->mlp == KV_MLP_MOE ? m->shared_ffn_dim
						   : ly->ffn_dim) /
				    tp,
			    w);
		struct widths e = {0};
		mlp(mods, m->gated_mlp, h, expert_ffn(m) / tp, &e);
		w->all += m->n_experts * e.all;
		if (ly->mlp == KV_MLP_MOE)
			w->token += m->n_experts_active * e.token;
		return;
	}
	if (ly->mlp != KV_MLP_MOE)
		return;
	if (m->n_shared_experts && m->shared_ffn_dim)
		mlp(mods, m->gated_mlp, h, m->shared_ffn_dim / tp, w);
	if (mods & KV_LORA_EXPERTS) {
		struct widths e = {0};
		mlp(KV_LORA_GATE_UP | KV_LORA_DOWN, m->gated_mlp, h,
		    ly->ffn_dim / tp, &e);
		w->all += m->n_experts * e.all;
		w->token += m->n_experts_active * e.token;
	}
	if (mods & KV_LORA_ROUTER) { /* replicated: h in, an expert out */
		static const char *const qwen2_moe[] = {"qwen2_moe", NULL};
		uint64_t g = h + m->n_experts;
		/* and Qwen2-MoE's shared_expert_gate: h in, one out */
		if (server_type_is(m, qwen2_moe))
			g += h + 1;
		w->all += g;
		w->token += (double)g;
	}
}

/* The head's B rows on one rank: the vocabulary, or SGLang's shard of
 * it (ParallelLMHead pads it to 64 and splits it; rank 0's share of the
 * original rows, get_lm_head_lora_b_shard_size). */
static uint64_t head_rows(const struct kv_fit_in *in, uint32_t tp)
{
	uint64_t v = in->m->vocab;
	if (!rules(in)->head_split || tp == 1)
		return v;
	uint64_t per = fit_round_up(v, 64) / tp;
	return per < v ? per : v;
}

/* The widths of layers [first, first + n), the embedding and head. */
static void widths_of(const struct kv_fit_in *in, uint32_t tp,
		      uint32_t first, uint32_t n, bool has_first,
		      bool has_last, struct widths *w)
{
	unsigned mods = modules(in);
	uint64_t h = in->m->hidden;
	*w = (struct widths){0};
	for (uint32_t i = first; i < first + n; i++)
		layer_widths(in, mods, tp, i, w);
	if (has_first && (mods & KV_LORA_EMBED)) {
		/* A of vocab x r (a table), B of h x r, whole on every rank */
		w->all += in->m->vocab + h;
		w->lookup += in->m->vocab;
		w->token += (double)h;
	}
	if (has_last && (mods & KV_LORA_HEAD)) {
		w->head = h + head_rows(in, tp);
		w->all += w->head;
	}
}

/* Bytes of `elems` values of the adapters' format: the model's, as the
 * engine runs it (vLLM's lora_dtype auto, SGLang's the model's dtype). */
static int bytes_of(const struct kv_fit_in *in, uint64_t elems, uint64_t *out)
{
	enum kv_dtype t = kv_server_weights_dtype(in->server, in->m->dtype);
	return kv_weight_bytes(elems, t, out);
}

int kv_lora_stage(const struct kv_fit_in *in, uint32_t first, uint32_t n,
		  bool has_first, bool has_last, struct kv_lora_stage *out)
{
	struct widths w;
	uint64_t e;
	*out = (struct kv_lora_stage){0};
	if (!in->lora || !rules(in))
		return 0;
	uint64_t r = kv_lora_rank(in);
	widths_of(in, in->tp, first, n, has_first, has_last, &w);
	if (kv_mul(w.all, r, &e) || bytes_of(in, e, &out->adapter) ||
	    bytes_of(in, w.lookup * r, &out->lookup) ||
	    kv_mul(out->adapter, kv_lora_max_loras(in), &out->slots))
		return KV_ERANGE;
	out->flops = 2.0 * (double)r * w.token;
	out->head_flops = 2.0 * (double)r * (double)w.head;
	return 0;
}

uint64_t kv_lora_host_bytes(const struct kv_fit_in *in)
{
	struct widths w;
	uint64_t e, b;
	if (!in->lora || !rules(in))
		return 0;
	widths_of(in, 1, 0, in->m->n_layers, true, true, &w);
	if (kv_mul(w.all, kv_lora_rank(in), &e) || bytes_of(in, e, &b) ||
	    kv_mul(b, kv_lora_cpu_loras(in), &b))
		return UINT64_MAX;
	return b;
}
