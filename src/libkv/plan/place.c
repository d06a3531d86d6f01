/*
 * place.c - llama.cpp's --override-tensor rules read against a model's
 * tensors (kv/place.h), and the time of a split step's host part.
 *
 * llama.cpp matches each rule's pattern with std::regex_search (ECMAScript)
 * against a tensor's name, the first rule that finds it deciding its
 * buffer (src/llama-model.cpp, load_tensors, create_tensor; commit
 * 00342301). Here a pattern is a POSIX extended expression, which reads
 * the patterns people write alike (exps, \.ffn_.*_exps\., blk\.(1|2)\.);
 * ECMAScript's \d, \w and \s are read as their classes.
 */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/gguf.h"
#include "kv/place.h"

/* common/common.h's LLM_FFN_EXPS_REGEX, "\\.ffn_(up|down|gate|gate_up)_
 * (ch|)exps": the routed experts' tensors, which --cpu-moe and
 * --n-cpu-moe keep in host memory. */
#define EXPS_REGEX "\\.ffn_(up|down|gate|gate_up)_(ch)?exps"

/* The GPU's buffer types -ot names (each backend's first device) and CPU
 * (ggml_backend_buft_name: common/arg.cpp's -ot lists every device's). */
static const char *const gpu_bufts[] = {"CUDA0", "ROCm0", "Vulkan0", "SYCL0",
					"MUSA0", "CANN0",  "MTL0",    "Metal",
					NULL};

/* pattern as POSIX reads it: ECMAScript's \d \w \s (and \D \W \S) as
 * classes, inside brackets their members; into out (n bytes). False
 * where it does not fit. */
static bool posix_of(const char *pattern, char *out, size_t n)
{
	static const char *const cls[][2] = {
		{"d", "0-9"}, {"w", "_[:alnum:]"}, {"s", "[:space:]"}};
	size_t k = 0;
	bool in = false; /* inside a bracket expression */
	for (const char *p = pattern; *p; p++) {
		char buf[32] = {0};
		if (*p == '\\' && p[1]) {
			const char *c = strchr("dDwWsS", p[1]);
			int i = c ? (int)(c - "dDwWsS") / 2 : -1;
			bool neg = c && (c - "dDwWsS") % 2;
			if (i >= 0 && in)
				snprintf(buf, sizeof buf, "%s", cls[i][1]);
			else if (i >= 0)
				snprintf(buf, sizeof buf, "[%s%s]",
					 neg ? "^" : "", cls[i][1]);
			else if (in) /* a backslash is itself in brackets */
				snprintf(buf, sizeof buf, "%c", p[1]);
			else
				snprintf(buf, sizeof buf, "\\%c", p[1]);
			p++;
		} else {
			if (*p == '[' && !in) {
				in = true;
				/* a ] first, or after ^, is a member */
				buf[0] = '[';
				size_t j = 1;
				if (p[1] == '^')
					buf[j++] = *++p;
				if (p[1] == ']')
					buf[j++] = *++p;
			} else {
				in = in && *p != ']';
				buf[0] = *p;
			}
		}
		size_t len = strlen(buf);
		if (k + len >= n)
			return false;
		memcpy(out + k, buf, len);
		k += len;
	}
	out[k] = '\0';
	return true;
}

/* Compiles pattern into re; false with err (the library's reason). */
static bool compile(const char *pattern, regex_t *re, char *err)
{
	char posix[1024], why[128];
	if (!posix_of(pattern, posix, sizeof posix)) {
		snprintf(err, KV_ERRLEN, "--override-tensor '%s': too long",
			 pattern);
		return false;
	}
	int e = regcomp(re, posix, REG_EXTENDED | REG_NOSUB);
	if (e) {
		regerror(e, re, why, sizeof why);
		snprintf(err, KV_ERRLEN,
			 "--override-tensor '%s': not a regular expression "
			 "(POSIX extended, with \\d \\w \\s): %s",
			 pattern, why);
		return false;
	}
	return true;
}

/* Whether name is CPU (host) or the GPU's; false: neither. */
static bool buft_of(const char *name, bool *host)
{
	*host = !strcmp(name, "CPU");
	for (size_t i = 0; !*host && gpu_bufts[i]; i++)
		if (!strcmp(name, gpu_bufts[i]))
			return true;
	return *host;
}

int kv_ot_parse(const char *s, struct kv_ot *rules, size_t *n, char *err)
{
	const char *p = s;
	for (;;) { /* llama.cpp splits the value on ',' first */
		size_t len = strcspn(p, ",");
		char item[512], *eq;
		regex_t re;
		snprintf(item, sizeof item, "%.*s", (int)len, p);
		if (!(eq = strchr(item, '='))) {
			snprintf(err, KV_ERRLEN,
				 "--override-tensor '%s': must be "
				 "PATTERN=BUFFER (exps=CPU)",
				 item);
			return KV_EINVAL;
		}
		*eq = '\0';
		struct kv_ot r = {0};
		if (!item[0] || strlen(item) >= sizeof r.pattern) {
			snprintf(err, KV_ERRLEN, "--override-tensor '%s=%s': "
				 "the pattern must be 1 to %zu characters",
				 item, eq + 1, sizeof r.pattern - 1);
			return KV_EINVAL;
		}
		if (!buft_of(eq + 1, &r.host)) {
			snprintf(err, KV_ERRLEN,
				 "--override-tensor '%s=%s': unknown buffer "
				 "type '%s'; known: CPU (host memory), and the "
				 "GPU's: CUDA0, ROCm0, Vulkan0, SYCL0, MUSA0, "
				 "CANN0, MTL0",
				 item, eq + 1, eq + 1);
			return KV_EINVAL;
		}
		if (!compile(item, &re, err))
			return KV_EINVAL;
		regfree(&re);
		if (*n == KV_OT_MAX) {
			snprintf(err, KV_ERRLEN,
				 "--override-tensor: at most %d rules",
				 KV_OT_MAX);
			return KV_EINVAL;
		}
		snprintf(r.pattern, sizeof r.pattern, "%s", item);
		snprintf(r.buft, sizeof r.buft, "%s", eq + 1);
		rules[(*n)++] = r;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/* The slot a GGUF tensor is in: blk.N. the layer, the head's and final
 * norm's the output, the rest (embeddings, rope factors) the input. */
static uint32_t slot_of(const char *name, uint32_t n)
{
	unsigned long i;
	char *end;
	if (!strncmp(name, "blk.", 4)) {
		i = strtoul(name + 4, &end, 10);
		if (end != name + 4 && *end == '.')
			return i < n ? 1 + (uint32_t)i : n + 1;
	}
	if (!strncmp(name, "output", 6) || !strncmp(name, "cls", 3))
		return n + 1;
	return 0;
}

/* The rules' compiled patterns, and the experts' own. */
struct rules {
	regex_t re[KV_OT_MAX];
	size_t n;
	regex_t exps;
};

static void rules_free(struct rules *r)
{
	for (size_t i = 0; i < r->n; i++)
		regfree(&r->re[i]);
	regfree(&r->exps);
}

static bool rules_init(struct rules *r, const struct kv_ot *rules, size_t n,
		       char *err)
{
	r->n = 0;
	if (regcomp(&r->exps, EXPS_REGEX, REG_EXTENDED | REG_NOSUB)) {
		snprintf(err, KV_ERRLEN, "the experts' pattern does not "
			 "compile");
		return false;
	}
	for (; r->n < n; r->n++)
		if (!compile(rules[r->n].pattern, &r->re[r->n], err)) {
			rules_free(r);
			return false;
		}
	return true;
}

/* The first rule that finds name, or -1. */
static int first_rule(const struct rules *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!regexec(&r->re[i], name, 0, NULL, 0))
			return (int)i;
	return -1;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* A GGUF's tensors, each in its slot, placed by the first rule. */
static void exact(struct kv_place *p, const struct kv_gguf *g,
		  const struct kv_ot *rules, const struct rules *r)
{
	bool head = false;
	uint64_t embd = 0;
	p->exact = true;
	for (size_t t = 0; t < g->n_t; t++) {
		const struct kv_gguf_tensor *x = &g->t[t];
		struct kv_slot *s = &p->slot[slot_of(x->name, p->n_layers)];
		bool ex = !regexec(&r->exps, x->name, 0, NULL, 0);
		int k = first_rule(r, x->name);
		head |= !strcmp(x->name, "output.weight");
		if (!strcmp(x->name, "token_embd.weight"))
			embd = x->bytes;
		s->bytes += x->bytes;
		s->routed += ex ? x->bytes : 0;
		if (ex)
			s->largest_routed = max64(s->largest_routed, x->bytes);
		if (s != &p->slot[0])
			s->largest = max64(s->largest, x->bytes);
		if (k < 0)
			continue;
		p->matched[k]++;
		if (rules[k].host) {
			s->host += x->bytes;
			s->host_routed += ex ? x->bytes : 0;
			s->largest_host = max64(s->largest_host, x->bytes);
		} else {
			s->gpu += x->bytes;
			s->gpu_routed += ex ? x->bytes : 0;
		}
	}
	p->tied = head ? 0 : embd;
	for (uint32_t i = 0; i < p->n_layers + 2; i++) {
		struct kv_slot *s = &p->slot[i];
		s->host_share = s->routed ? (double)s->host_routed /
						    (double)s->routed
					  : 0;
		s->gpu_share = s->routed ? (double)s->gpu_routed /
						   (double)s->routed
					 : 0;
	}
}

/* The names llama.cpp's converter gives layer i's tensors
 * (src/llama-arch.cpp's LLM_TENSOR_NAMES) into names: first those other
 * than the routed experts' (*own of them), then the experts' (gate where
 * the MLP is gated). Returns how many. */
static size_t layer_names(const struct kv_model *m, uint32_t i,
			  char names[][48], size_t *own)
{
	static const char *const attn[] = {"attn_norm", "attn_q", "attn_k",
					   "attn_v", "attn_output",
					   "ffn_norm"};
	static const char *const dense[] = {"ffn_gate", "ffn_up", "ffn_down"};
	static const char *const moe[] = {"ffn_gate_inp", "ffn_gate_shexp",
					  "ffn_up_shexp", "ffn_down_shexp"};
	static const char *const exps[] = {"ffn_gate_exps", "ffn_up_exps",
					   "ffn_down_exps"};
	const struct kv_layer *l = &m->layers[i];
	size_t k = 0;
	for (size_t j = 0; j < 6; j++)
		snprintf(names[k++], 48, "blk.%u.%s.weight", i, attn[j]);
	for (size_t j = 0; l->mlp == KV_MLP_DENSE && j < 3; j++)
		snprintf(names[k++], 48, "blk.%u.%s.weight", i, dense[j]);
	for (size_t j = 0; l->mlp == KV_MLP_MOE && j < 4; j++)
		snprintf(names[k++], 48, "blk.%u.%s.weight", i, moe[j]);
	*own = k;
	for (size_t j = m->gated_mlp ? 0 : 1; l->mlp == KV_MLP_MOE && j < 3;
	     j++)
		snprintf(names[k++], 48, "blk.%u.%s.weight", i, exps[j]);
	return k;
}

/* A rule that finds a tensor no count sizes apart, said. */
static int not_experts(const struct kv_ot *rule, const char *name,
		       const struct kv_model *m, char *err)
{
	snprintf(err, KV_ERRLEN,
		 "--override-tensor '%s=%s': finds %s; %s lists no tensors "
		 "(a config, or a GGUF header alone), so only the experts' "
		 "(ffn_*_exps) can be placed",
		 rule->pattern, rule->buft, name, m->name);
	return KV_EINVAL;
}

/* No tensors listed: each rule may find the experts' tensors alone; each
 * layer's shares of them. */
static int counts(struct kv_place *p, const struct kv_model *m,
		  const struct kv_ot *rules, const struct rules *r, char *err)
{
	static const char *const edges[] = {"token_embd.weight",
					    "output_norm.weight",
					    "output.weight"};
	for (size_t e = 0; e < 3; e++) {
		int k = first_rule(r, edges[e]);
		if (k >= 0)
			return not_experts(&rules[k], edges[e], m, err);
	}
	for (uint32_t i = 0; i < m->n_layers; i++) {
		char names[16][48];
		size_t own, n = layer_names(m, i, names, &own);
		size_t host = 0, gpu = 0;
		for (size_t j = 0; j < n; j++) {
			int k = first_rule(r, names[j]);
			if (k >= 0 && j < own)
				return not_experts(&rules[k], names[j], m,
						   err);
			if (k < 0)
				continue;
			p->matched[k]++;
			host += rules[k].host;
			gpu += !rules[k].host;
		}
		if (n > own) {
			p->slot[1 + i].host_share =
				(double)host / (double)(n - own);
			p->slot[1 + i].gpu_share =
				(double)gpu / (double)(n - own);
		}
	}
	for (size_t k = 0; k < r->n; k++)
		if (!p->matched[k]) {
			snprintf(err, KV_ERRLEN,
				 "--override-tensor '%s=%s': finds none of the "
				 "experts' tensors (ffn_*_exps) of %s, which "
				 "lists no tensors (a config, or a GGUF header "
				 "alone): only those can be placed",
				 rules[k].pattern, rules[k].buft, m->name);
			return KV_EINVAL;
		}
	return 0;
}

int kv_place_init(struct kv_place *p, const struct kv_model *m,
		  const struct kv_ot *rules, size_t n, char *err)
{
	struct kv_gguf *g = NULL;
	struct rules r;
	int e = 0;
	*p = (struct kv_place){.n_layers = m->n_layers};
	if (n > KV_OT_MAX) {
		snprintf(err, KV_ERRLEN, "--override-tensor: at most %d rules",
			 KV_OT_MAX);
		return KV_EINVAL;
	}
	if (!(p->slot = calloc((size_t)m->n_layers + 2, sizeof *p->slot))) {
		snprintf(err, KV_ERRLEN, "%s: out of memory", m->name);
		return KV_ENOMEM;
	}
	if (!rules_init(&r, rules, n, err)) {
		kv_place_free(p);
		return KV_EINVAL;
	}
	if (m->gguf && (e = kv_gguf_open(m->path, &g, err)) == 0 && g->n_t)
		exact(p, g, rules, &r);
	else if (!e)
		e = counts(p, m, rules, &r, err);
	kv_gguf_free(g);
	rules_free(&r);
	if (e)
		kv_place_free(p);
	return e;
}

void kv_place_free(struct kv_place *p)
{
	if (!p)
		return;
	free(p->slot);
	p->slot = NULL;
}

void kv_ngl_ms(const struct kv_ngl *o, const struct kv_ngl_step *s,
		   double *host_ms, double *link_ms, bool *on_gpu)
{
	double link = o->link_gbps > 0 ? o->link_gbps * 1e6 : NAN; /* B/ms */
	*on_gpu = s->tokens >= KV_NGL_BATCH && s->host_bytes > 0;
	*link_ms = s->link_bytes > 0 ? s->link_bytes / link : 0;
	*host_ms = 0;
	if (*on_gpu) { /* the host's weights and KV cross to the GPU */
		*link_ms += s->host_bytes / link;
		return;
	}
	if (!(s->host_bytes > 0))
		return;
	double mem = o->host_gbps > 0 ? s->host_bytes / (o->host_gbps * 1e6)
				      : NAN;
	double comp = o->host_tflops > 0 ? s->host_flops /
						   (o->host_tflops * 1e9)
					 : 0;
	*host_ms = comp > mem ? comp : mem;
}
