/*
 * dtype.c - the table of storage formats and their exact byte counts.
 * Block sizes follow llama.cpp's ggml types (QK = 32); int8 carries one f32
 * scale per token per head, as vLLM's per-token-head quantized caches do.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kv/dtype.h"

static const struct kv_dtype_info table[KV_DTYPE_COUNT] = {
	[KV_DTYPE_F32] = {"f32", 1, 4, 0, 1},
	[KV_DTYPE_F16] = {"f16", 1, 2, 0, 1},
	[KV_DTYPE_BF16] = {"bf16", 1, 2, 0, 1},
	[KV_DTYPE_FP8] = {"fp8", 1, 1, 0, 1},
	[KV_DTYPE_FP8_E5M2] = {"fp8_e5m2", 1, 1, 0, 1},
	[KV_DTYPE_INT8] = {"int8", 1, 1, 4, 1},
	[KV_DTYPE_Q8_0] = {"q8_0", 32, 34, 0, 1},
	[KV_DTYPE_Q4_0] = {"q4_0", 32, 18, 0, 1},
	[KV_DTYPE_Q4_1] = {"q4_1", 32, 20, 0, 1},
	[KV_DTYPE_Q5_0] = {"q5_0", 32, 22, 0, 1},
	[KV_DTYPE_Q5_1] = {"q5_1", 32, 24, 0, 1},
	[KV_DTYPE_IQ4_NL] = {"iq4_nl", 32, 18, 0, 1},
	[KV_DTYPE_INT4] = {"int4", 32, 18, 0, 0},
};

static const struct {
	const char *alias;
	enum kv_dtype t;
} aliases[] = {
	{"float32", KV_DTYPE_F32},  {"fp32", KV_DTYPE_F32},
	{"float16", KV_DTYPE_F16},  {"fp16", KV_DTYPE_F16},
	{"half", KV_DTYPE_F16},     {"bfloat16", KV_DTYPE_BF16},
	{"fp8_e4m3", KV_DTYPE_FP8}, {"e4m3", KV_DTYPE_FP8},
	{"float8_e4m3fn", KV_DTYPE_FP8}, {"e5m2", KV_DTYPE_FP8_E5M2},
	{"float8_e5m2", KV_DTYPE_FP8_E5M2},
	/* vLLM's --kv-cache-dtype for it (vllm/config/cache.py) */
	{"int8_per_token_head", KV_DTYPE_INT8},
};

const struct kv_dtype_info *kv_dtype_info(enum kv_dtype t)
{
	if ((unsigned)t >= KV_DTYPE_COUNT)
		return NULL;
	return &table[t];
}

const char *kv_dtype_name(enum kv_dtype t)
{
	const struct kv_dtype_info *d = kv_dtype_info(t);
	return d ? d->name : "?";
}

char *kv_dtype_pair_name(enum kv_dtype k, enum kv_dtype v, char *buf,
			 size_t n)
{
	if (k == v)
		snprintf(buf, n, "%s", kv_dtype_name(k));
	else
		snprintf(buf, n, "K %s, V %s", kv_dtype_name(k),
			 kv_dtype_name(v));
	return buf;
}

int kv_dtype_pack(enum kv_dtype k, enum kv_dtype v)
{
	return k == v ? (int)k : (int)k + KV_DTYPE_COUNT * ((int)v + 1);
}

void kv_dtype_unpack(int packed, enum kv_dtype *k, enum kv_dtype *v)
{
	*k = (enum kv_dtype)(packed % KV_DTYPE_COUNT);
	*v = packed < KV_DTYPE_COUNT
		     ? *k
		     : (enum kv_dtype)(packed / KV_DTYPE_COUNT - 1);
}

char *kv_dtype_kv_name(enum kv_dtype k, enum kv_dtype v, char *buf, size_t n)
{
	if (k == v)
		snprintf(buf, n, "%s", kv_dtype_name(k));
	else
		snprintf(buf, n, "%s/%s", kv_dtype_name(k), kv_dtype_name(v));
	return buf;
}

int kv_dtype_kv_parse(const char *s, enum kv_dtype *k, enum kv_dtype *v)
{
	const char *slash = strchr(s, '/');
	char kn[32];
	if (!slash) {
		int e = kv_dtype_parse(s, k);
		*v = *k;
		return e;
	}
	if ((size_t)(slash - s) >= sizeof kn)
		return KV_EINVAL;
	memcpy(kn, s, (size_t)(slash - s));
	kn[slash - s] = '\0';
	if (kv_dtype_parse(kn, k) || kv_dtype_parse(slash + 1, v) || *k == *v)
		return KV_EINVAL;
	return 0;
}

int kv_dtype_parse(const char *s, enum kv_dtype *out)
{
	for (int t = 0; t < KV_DTYPE_COUNT; t++)
		if (strcasecmp(s, table[t].name) == 0) {
			*out = (enum kv_dtype)t;
			return 0;
		}
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (strcasecmp(s, aliases[i].alias) == 0) {
			*out = aliases[i].t;
			return 0;
		}
	return KV_EINVAL;
}

int kv_dtype_from_torch(const char *s, enum kv_dtype *out)
{
	static const struct {
		const char *name;
		enum kv_dtype t;
	} torch[] = {
		{"float32", KV_DTYPE_F32}, {"float", KV_DTYPE_F32},
		{"float16", KV_DTYPE_F16}, {"half", KV_DTYPE_F16},
		{"bfloat16", KV_DTYPE_BF16},
		{"float8_e4m3fn", KV_DTYPE_FP8},
		{"float8_e5m2", KV_DTYPE_FP8_E5M2},
	};
	if (strncmp(s, "torch.", 6) == 0)
		s += 6;
	for (size_t i = 0; i < sizeof torch / sizeof torch[0]; i++)
		if (strcmp(s, torch[i].name) == 0) {
			*out = torch[i].t;
			return 0;
		}
	return KV_EINVAL;
}

char *kv_dtype_list(char *buf, size_t n, int kv_only)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int t = 0; t < KV_DTYPE_COUNT; t++) {
		if (kv_only && !table[t].kv)
			continue;
		int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
				 table[t].name);
		if (w < 0 || (size_t)w >= n - len)
			break;
		len += (size_t)w;
	}
	return buf;
}

int kv_dtype_row_bytes(enum kv_dtype t, uint64_t n, uint64_t *out)
{
	const struct kv_dtype_info *d = kv_dtype_info(t);
	if (!d)
		return KV_EINVAL;
	if (n % d->block)
		return KV_EINVAL;
	uint64_t b;
	if (kv_mul(n / d->block, d->block_bytes, &b) ||
	    kv_add(b, n ? d->row_extra : 0, &b))
		return KV_ERANGE;
	*out = b;
	return 0;
}

int kv_dtype_stored(enum kv_dtype t)
{
	switch (t) {
	case KV_DTYPE_F32:
	case KV_DTYPE_F16:
	case KV_DTYPE_BF16:
	case KV_DTYPE_FP8:
	case KV_DTYPE_INT8:
	case KV_DTYPE_Q8_0:
	case KV_DTYPE_Q4_0:
	case KV_DTYPE_Q4_1:
		return 1;
	default:
		return 0;
	}
}

char *kv_dtype_stored_list(char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int t = 0; t < KV_DTYPE_COUNT; t++) {
		if (!kv_dtype_stored((enum kv_dtype)t))
			continue;
		int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
				 kv_dtype_name((enum kv_dtype)t));
		if (w < 0 || (size_t)w >= n - len)
			break;
		len += (size_t)w;
	}
	return buf;
}
