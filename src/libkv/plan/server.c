/*
 * server.c - the serving engines as a table: the rows (each in its
 * engine's file, server_*.c), looked up by name and release, and what is
 * read off a row the same way for every engine. Adding an engine, or a
 * release's rules, is a row there and its hooks.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "server_int.h"

/* The newest rules of each engine, in kind order, then older releases. */
static const struct kv_server *const SERVERS[] = {
	&kv_server_ideal,    &kv_server_vllm,     &kv_server_sglang,
	&kv_server_trtllm,   &kv_server_llamacpp, &kv_server_vllm_0_27,
};
#define NSERVERS (sizeof SERVERS / sizeof *SERVERS)

/* Other names users give an engine. */
static const struct {
	const char *name;
	enum kv_server_kind k;
} ALIASES[] = {
	{"trt-llm", KV_SERVER_TRTLLM},	   {"tensorrt-llm", KV_SERVER_TRTLLM},
	{"tensorrt_llm", KV_SERVER_TRTLLM}, {"llama.cpp", KV_SERVER_LLAMACPP},
	{"llama-cpp", KV_SERVER_LLAMACPP},
};

const struct kv_server *kv_server_at(size_t i)
{
	return i < NSERVERS ? SERVERS[i] : NULL;
}

const struct kv_server *kv_server_get(enum kv_server_kind k)
{
	return (unsigned)k < KV_SERVER_KINDS ? SERVERS[k] : NULL;
}

/* The kind a name (up to n bytes of s) names, or KV_SERVER_KINDS. */
static enum kv_server_kind kind_of(const char *s, size_t n)
{
	for (int k = 0; k < KV_SERVER_KINDS; k++)
		if (strlen(SERVERS[k]->name) == n &&
		    !strncasecmp(s, SERVERS[k]->name, n))
			return (enum kv_server_kind)k;
	for (size_t i = 0; i < sizeof ALIASES / sizeof *ALIASES; i++)
		if (strlen(ALIASES[i].name) == n &&
		    !strncasecmp(s, ALIASES[i].name, n))
			return ALIASES[i].k;
	return KV_SERVER_KINDS;
}

int kv_server_parse(const char *s, const struct kv_server **out)
{
	const char *at = strchr(s, '@');
	enum kv_server_kind k = kind_of(s, at ? (size_t)(at - s) : strlen(s));
	if (k == KV_SERVER_KINDS)
		return KV_EINVAL;
	*out = SERVERS[k];
	if (!at)
		return 0;
	for (size_t i = 0; i < NSERVERS; i++)
		if (SERVERS[i]->kind == k && SERVERS[i]->release &&
		    !strcmp(at + 1, SERVERS[i]->release)) {
			*out = SERVERS[i];
			return 0;
		}
	return KV_EUNSUP;
}

char *kv_server_releases(enum kv_server_kind k, char *buf, size_t n)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NSERVERS && at < n; i++)
		if (SERVERS[i]->kind == k && SERVERS[i]->release)
			at += (size_t)snprintf(buf + at, n - at, "%s%s%s",
					       at ? ", " : "",
					       SERVERS[i]->release,
					       SERVERS[i]->older ? ""
								 : " (newest)");
	return buf;
}

char *kv_server_rules(const struct kv_server *s, char *buf, size_t n)
{
	if (s->release)
		snprintf(buf, n, "%s %s", s->name, s->release);
	else
		snprintf(buf, n, "%s", s->name);
	return buf;
}

bool kv_server_stores(const struct kv_server *s, enum kv_dtype t)
{
	return s && (unsigned)t < KV_DTYPE_COUNT && (s->formats >> t & 1);
}

char *kv_server_formats(const struct kv_server *s, char *buf, size_t n)
{
	size_t at = 0;
	buf[0] = '\0';
	for (int t = 0; t < KV_DTYPE_COUNT && at < n; t++)
		if (kv_server_stores(s, (enum kv_dtype)t))
			at += (size_t)snprintf(buf + at, n - at, "%s%s",
					       at ? ", " : "",
					       kv_dtype_name((enum kv_dtype)t));
	return buf;
}

enum kv_dtype kv_server_weights_dtype(const struct kv_server *s,
				      enum kv_dtype model)
{
	if (model != KV_DTYPE_F32 || s->w_f32 == KV_DTYPE_COUNT)
		return model;
	return s->w_f32;
}

enum kv_dtype kv_server_kv_dtype(const struct kv_server *s,
				 const struct kv_model *m)
{
	if (s->kv_auto != KV_DTYPE_COUNT)
		return s->kv_auto;
	if (m->quant.kv_fp8)
		return KV_DTYPE_FP8;
	return kv_server_weights_dtype(s, m->dtype);
}

double kv_server_frac(const struct kv_server *s, uint64_t mem, uint32_t tp,
		      uint32_t pp, bool mla)
{
	struct kv_fit_in in = {.server = s, .mem = mem, .tp = tp, .pp = pp};
	struct fit_ctx c = {.in = &in, .sv = s, .mla = mla};
	return s->ops->frac ? s->ops->frac(&c) : s->frac;
}

void kv_server_batch(const struct kv_server *s, uint64_t mem, const char *gpu,
		     uint64_t *tokens, uint64_t *seqs)
{
	struct kv_fit_in in = {.server = s, .mem = mem, .gpu = gpu};
	struct fit_ctx c = {.in = &in, .sv = s, .batched = s->batched,
			    .seqs = s->seqs, .block = s->block};
	if (s->ops->sched)
		s->ops->sched(&c);
	*tokens = c.batched;
	*seqs = c.seqs;
}
