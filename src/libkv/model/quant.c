/*
 * quant.c - the bytes of a matrix as a quantized checkpoint stores it.
 * Each format's tensors are those the engines' loaders create for it
 * (vLLM, model_executor/layers/quantization: Fp8LinearMethod,
 * GptOssMxfp4MoEMethod, AWQ and GPTQ linear methods,
 * CompressedTensorsWNA16 and W8A8Fp8, BitsAndBytesLinearMethod; NVFP4 as
 * ModelOpt stores it), for a matrix of k inputs (columns) and n outputs
 * (rows):
 *
 *   fp8       n k + float32 weight_scale_inv per block of bn x bk, or one
 *             per tensor; a float32 input_scale when activations are
 *             static
 *   mxfp4     n k / 2 + an e8m0 byte per 32 values (routed experts only)
 *   nvfp4     n k / 2 + an fp8 scale per 16 values + float32 weight_scale_2
 *             and input_scale
 *   awq       qweight k x n/8 int32, qzeros G x n/8 int32, scales G x n fp16
 *   gptq      qweight k/8 x n int32, qzeros G x n/8 int32, scales G x n
 *             fp16, g_idx k int32 (G = k / group_size groups, 4 bits)
 *   ct int    weight_packed n x ceil(k b / 32) int32, weight_scale n x G,
 *             weight_shape 2 int64, zero points n b/32 x G int32 when
 *             asymmetric, g_idx k int32 with an activation order
 *   ct fp8    n k + weight_scale per tensor, row or block
 *   bnb 4-bit n k / 2 + a float32 absmax per 64 values (with double
 *             quantization a byte per 64, a float32 per 256 of those and
 *             the 256-entry code), a 16-entry float32 quant_map
 *   bnb 8-bit n k + a float32 SCB per row
 *   mlx       weight n x k bits/32 uint32, scales n x k/group and, in the
 *             affine mode, biases as many, in the model's dtype; mxfp4
 *             and mxfp8 an e8m0 byte per 32, nvfp4 an e4m3 byte per 16
 *             (mlx/ops.cpp affine_quantize and fp_quantize, commit
 *             846d1762; mlx/nn/layers/quantized.py QuantizedLinear)
 *
 * mxfp4, nvfp4, compressed-tensors' ints and MLX are one shape: rows of
 * packed values and a few bytes per group of a row (grouped()).
 */
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/quant.h"

static uint64_t cdiv(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* Whether `key` is a run of whole dot-separated components of name. */
static bool component(const char *name, const char *key)
{
	size_t kl = strlen(key);
	if (!kl)
		return false;
	for (const char *p = name; (p = strstr(p, key)); p++) {
		bool start = p == name || p[-1] == '.';
		bool end = p[kl] == '\0' || p[kl] == '.';
		if (start && end)
			return true;
	}
	return false;
}

bool kv_quant_ignores(const struct kv_quant *q, const char *name)
{
	regex_t *re = q->re;
	for (uint32_t i = 0; i < q->n_ignore; i++) {
		const char *k = q->ignore[i];
		if (!strncmp(k, "re:", 3)) {
			if (!regexec(&re[i], name, 0, NULL, 0))
				return true;
		} else if (strchr(k, '*')) {
			char glob[128];
			snprintf(glob, sizeof glob, "%s.*", k);
			if (!fnmatch(k, name, 0) || !fnmatch(glob, name, 0))
				return true;
		} else if (component(name, k)) {
			return true;
		}
	}
	return false;
}

int kv_quant_ignore_add(struct kv_quant *q, const char *entry)
{
	char **p = realloc(q->ignore, (q->n_ignore + 1) * sizeof *p);
	if (!p)
		return KV_ENOMEM;
	q->ignore = p;
	regex_t *re = realloc(q->re, (q->n_ignore + 1) * sizeof *re);
	if (!re)
		return KV_ENOMEM;
	q->re = re;
	bool is_re = !strncmp(entry, "re:", 3);
	if (is_re && regcomp(&re[q->n_ignore], entry + 3,
			     REG_EXTENDED | REG_NOSUB))
		return KV_EINVAL;
	if (!(p[q->n_ignore] = strdup(entry))) {
		if (is_re)
			regfree(&re[q->n_ignore]);
		return KV_ENOMEM;
	}
	q->n_ignore++;
	return 0;
}

/* mlx-lm's names of modules Transformers names otherwise (mlx_lm/models:
 * SwitchGLU as switch_mlp, Mixtral's block, Qwen2-MoE's shared expert,
 * gpt-oss's router), and the prefixes of a wrapper's text model. */
static const char *const mlx_names[][2] = {
	{"switch_mlp", "experts"}, {"block_sparse_moe", "mlp"},
	{"shared_expert", "shared_experts"}, {"router", "gate"}};
static const char *const mlx_wrappers[] = {"model", "language_model",
					   "text_model"};

/* Whether name[0 .. len) is one of n words. */
static bool word_of(const char *name, size_t len, const char *const *w,
		    size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(w[i]) == len && !strncmp(name, w[i], len))
			return true;
	return false;
}

/* The part of key from its first component that is not a wrapper's
 * ("model", "language_model"). */
static const char *mlx_unwrap(const char *key)
{
	const char *p = key;
	size_t len;
	size_t nw = sizeof mlx_wrappers / sizeof *mlx_wrappers;
	while (p[len = strcspn(p, ".")] == '.' &&
	       word_of(p, len, mlx_wrappers, nw))
		p += len + 1;
	return p;
}

/* "layers.3.mlp.switch_mlp.up_proj" as params.c names it,
 * "model.layers.3.mlp.experts.up_proj", into out (n bytes); false when
 * it does not fit. */
static bool mlx_layer_name(const char *p, char *out, size_t n)
{
	size_t len = (size_t)snprintf(out, n, "model");
	while (*p && len < n) {
		size_t l = strcspn(p, ".");
		const char *w = NULL;
		size_t nn = sizeof mlx_names / sizeof *mlx_names;
		for (size_t i = 0; i < nn; i++)
			if (word_of(p, l, &mlx_names[i][0], 1))
				w = mlx_names[i][1];
		int k = snprintf(out + len, n - len, ".%.*s",
				 (int)(w ? strlen(w) : l), w ? w : p);
		if (k < 0 || (size_t)k >= n - len)
			return false;
		len += (size_t)k;
		p += l + (p[l] == '.');
	}
	return len < n;
}

/* params.c's name of the module mlx-lm calls key into out (n bytes; see
 * kv_quant_rule_add); false when it does not fit. */
static bool mlx_name(const char *key, char *out, size_t n)
{
	const char *p = mlx_unwrap(key);
	int w;
	if (!strncmp(p, "layers.", 7))
		return mlx_layer_name(p, out, n);
	if (!strcmp(p, "embed_tokens") || !strcmp(p, "lm_head"))
		w = snprintf(out, n, "%s%s", *p == 'e' ? "model." : "", p);
	else
		w = snprintf(out, n, "%s", key);
	return w >= 0 && (size_t)w < n;
}

int kv_quant_rule_add(struct kv_quant *q, const char *key,
		      const struct kv_quant_rule *r)
{
	char name[512];
	struct kv_quant_rule *p =
		realloc(q->rules, (q->n_rules + 1) * sizeof *p);
	if (!p)
		return KV_ENOMEM;
	q->rules = p;
	p[q->n_rules] = *r;
	if (!mlx_name(key, name, sizeof name))
		snprintf(name, sizeof name, "%s", key);
	if (!(p[q->n_rules].name = strdup(name)))
		return KV_ENOMEM;
	q->n_rules++;
	return 0;
}

void kv_quant_free(struct kv_quant *q)
{
	regex_t *re = q->re;
	for (uint32_t i = 0; i < q->n_ignore; i++) {
		if (!strncmp(q->ignore[i], "re:", 3))
			regfree(&re[i]);
		free(q->ignore[i]);
	}
	for (uint32_t i = 0; i < q->n_rules; i++)
		free(q->rules[i].name);
	free(q->ignore);
	free(q->re);
	free(q->rules);
	q->ignore = NULL;
	q->re = NULL;
	q->rules = NULL;
	q->n_ignore = 0;
	q->n_rules = 0;
}

/* acc += a * b * c, checked */
static int mac3(uint64_t *acc, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t t;
	return kv_mul(a, b, &t) || kv_mul(t, c, &t) || kv_add(*acc, t, acc)
		       ? KV_ERANGE
		       : 0;
}

/* acc += n rows of k values of `bits` each packed in words of `word`
 * bytes, and `per` bytes for each group of g values of a row (its scale,
 * or a scale and a zero point or bias); g 0: one group. Checked. */
static int grouped(uint64_t *acc, uint64_t n, uint64_t k, uint32_t bits,
		   uint32_t word, uint64_t g, uint64_t per)
{
	uint64_t groups = g ? cdiv(k, g) : 1;
	return mac3(acc, n, cdiv((uint64_t)bits * k, 8ULL * word), word) |
	       mac3(acc, n, groups, per);
}

/* The rule q has for the module `name`, or NULL. */
static const struct kv_quant_rule *rule_of(const struct kv_quant *q,
					   const char *name)
{
	for (uint32_t i = 0; i < q->n_rules; i++)
		if (!strcmp(q->rules[i].name, name))
			return &q->rules[i];
	return NULL;
}

/* An MLX checkpoint's matrix into *b: as its rule says, else in q's
 * format where q's group divides its k inputs (mlx-lm's quantize_model
 * leaves the others as they are: mlx_lm/utils.py, commit d78bf58e), in
 * e bytes a value where it is left. */
static int mlx_bytes(const struct kv_quant *q, const char *name, uint64_t k,
		     uint64_t n, uint64_t e, uint64_t *b)
{
	const struct kv_quant_rule *r = rule_of(q, name);
	struct kv_quant_rule d = {.bits = q->bits, .group = q->group,
				  .scale_bytes = q->scale_bytes,
				  .bias = q->zeros};
	if (!r && (!q->group || k % q->group))
		return mac3(b, n, k, e);
	if (!r)
		r = &d;
	if (r->off)
		return mac3(b, n, k, e);
	uint64_t s = r->scale_bytes ? r->scale_bytes : e;
	return grouped(b, n, k, r->bits, 4, r->group, r->bias ? 2 * s : s);
}

int kv_quant_matrix_bytes(const struct kv_quant *q, const char *name,
			  bool expert, uint64_t k, uint64_t n,
			  enum kv_dtype dtype, uint64_t *out)
{
	const struct kv_dtype_info *d = kv_dtype_info(dtype);
	uint64_t b = 0, e = d ? d->block_bytes / d->block : 2;
	uint64_t g = q->group == 0 || q->group > k ? k : q->group;
	uint64_t groups = g ? cdiv(k, g) : 1;
	uint64_t words = cdiv((uint64_t)q->bits * n, 32); /* n packed */
	int r = 0;
	*out = 0;
	if (q->fmt == KV_QUANT_NONE || q->fmt == KV_QUANT_UNKNOWN ||
	    (q->experts_only && !expert) || kv_quant_ignores(q, name))
		return mac3(out, n, k, e);
	if (q->fmt == KV_QUANT_MLX)
		return mlx_bytes(q, name, k, n, e, out) ? KV_ERANGE : 0;
	switch (q->fmt) {
	case KV_QUANT_FP8:
		r = mac3(&b, n, k, 1);
		if (q->block_n && q->block_k)
			r |= mac3(&b, cdiv(n, q->block_n), cdiv(k, q->block_k),
				  4);
		else
			b += 4;
		b += q->input_scale ? 4 : 0;
		break;
	case KV_QUANT_MXFP4:
		r = grouped(&b, n, k, 4, 1, 32, 1);
		break;
	case KV_QUANT_NVFP4:
		r = grouped(&b, n, k, 4, 1, 16, 1);
		b += 8; /* weight_scale_2, input_scale */
		break;
	case KV_QUANT_AWQ:
		r = mac3(&b, k, words, 4) | mac3(&b, groups, words, 4) |
		    mac3(&b, groups, n, 2);
		break;
	case KV_QUANT_GPTQ:
		r = mac3(&b, cdiv((uint64_t)q->bits * k, 32), n, 4) |
		    mac3(&b, groups, words, 4) | mac3(&b, groups, n, 2) |
		    mac3(&b, k, 4, 1);
		break;
	case KV_QUANT_CT_INT:
		r = grouped(&b, n, k, q->bits, q->packed ? 4 : 1, g,
			    q->scale_bytes);
		b += 16; /* weight_shape */
		if (q->zeros)
			r |= mac3(&b, words, groups, 4);
		if (q->g_idx)
			r |= mac3(&b, k, 4, 1);
		break;
	case KV_QUANT_CT_FP8:
		r = mac3(&b, n, k, 1);
		if (q->block_n && q->block_k)
			r |= mac3(&b, cdiv(n, q->block_n), cdiv(k, q->block_k),
				  q->scale_bytes);
		else if (q->group == UINT64_MAX)
			b += q->scale_bytes;
		else
			r |= mac3(&b, n, groups, q->scale_bytes);
		b += q->input_scale ? q->scale_bytes : 0;
		break;
	case KV_QUANT_BNB4: {
		uint64_t values, blocks;
		if (kv_mul(n, k, &values))
			return KV_ERANGE;
		blocks = cdiv(values, 64);
		b = cdiv(values, 2) + 64; /* the values, quant_map */
		if (q->double_quant)
			r = mac3(&b, blocks, 1, 1) |
			    mac3(&b, cdiv(blocks, 256), 4, 1) |
			    mac3(&b, 256 + 1, 4, 1); /* code, offset */
		else
			r = mac3(&b, blocks, 4, 1);
		break;
	}
	case KV_QUANT_BNB8:
		r = mac3(&b, n, k, 1) | mac3(&b, n, 4, 1);
		break;
	default:
		break;
	}
	*out = b;
	return r ? KV_ERANGE : 0;
}

int kv_quant_parse(const char *s, struct kv_quant *q)
{
	*q = (struct kv_quant){0};
	snprintf(q->method, sizeof q->method, "%s", s);
	if (!strcmp(s, "mxfp4")) {
		q->fmt = KV_QUANT_MXFP4;
		q->bits = 4;
		return 0;
	}
	if (!strcmp(s, "nvfp4")) {
		q->fmt = KV_QUANT_NVFP4;
		q->bits = 4;
		return 0;
	}
	unsigned bits;
	char *end;
	if (sscanf(s, "int%u-g", &bits) != 1 || !strchr(s, 'g') ||
	    (bits != 2 && bits != 4 && bits != 8))
		return KV_EINVAL;
	const char *g = strchr(s, 'g') + 1;
	unsigned long long group = strtoull(g, &end, 10);
	if (*end || end == g || group < 1 || group > (1u << 20) || *g == '-' ||
	    *g == '+' || *g == ' ')
		return KV_EINVAL;
	q->fmt = KV_QUANT_CT_INT;
	q->bits = bits;
	q->group = group;
	q->packed = true;
	q->scale_bytes = 2;
	return 0;
}

const char *kv_quant_fmt_name(enum kv_quant_fmt f)
{
	static const char *const names[] = {
		"none", "fp8", "mxfp4", "nvfp4", "awq", "gptq",
		"compressed-tensors", "compressed-tensors", "bitsandbytes",
		"bitsandbytes", "mlx", "unknown"};
	return (unsigned)f < sizeof names / sizeof *names ? names[f] : "?";
}
