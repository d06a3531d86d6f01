/*
 * cli_parse.c - option values read with their checks, one message form
 * for every tool: counts, sizes, token counts, fractions, lists and
 * sweeps, KV formats.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kv/units.h"

int cli_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi,
	    uint64_t *out)
{
	uint64_t v;
	int e = kv_parse_u64(s, &v);
	if (e == KV_EINVAL)
		return cli_usage("%s: not a whole number: '%s'", opt, s);
	if (e || v > hi)
		return cli_usage("%s: at most %llu, got '%s'", opt,
				 (unsigned long long)hi, s);
	if (v < lo)
		return cli_usage("%s: at least %llu, got '%s'", opt,
				 (unsigned long long)lo, s);
	*out = v;
	return 0;
}

int cli_tokens(const char *opt, const char *s, uint64_t *out)
{
	int e = kv_parse_tokens(s, out);
	if (e == KV_ERANGE)
		return cli_usage("%s: too large: '%s'", opt, s);
	if (e)
		return cli_usage("%s: not a token count (8192, 8k, 128K): '%s'",
				 opt, s);
	if (*out == 0)
		return cli_usage("%s: must be at least 1, got '%s'", opt, s);
	return 0;
}

int cli_size(const char *opt, const char *s, uint64_t *out)
{
	int e = kv_parse_size(s, out);
	if (e == KV_ERANGE)
		return cli_usage("%s: too large: '%s'", opt, s);
	if (e)
		return cli_usage("%s: not a size (80GB, 80GiB, 16G, 4096B): "
				 "'%s'",
				 opt, s);
	/* a number with no unit could mean two sizes, or bytes */
	size_t n = strlen(s);
	if (*out && n && (isdigit((unsigned char)s[n - 1]) || s[n - 1] == '.'))
		return cli_usage("%s: '%s' has no unit: %sGB (x 10^9 bytes) or "
				 "%sGiB (x 2^30)? (%sB for bytes)",
				 opt, s, s, s, s);
	return 0;
}

int cli_double(const char *opt, const char *s, double lo, double hi,
	       double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		return cli_usage("%s: not a number: '%s'", opt, s);
	if (v < lo || v > hi)
		return cli_usage("%s: must be in [%g, %g], got '%s'", opt, lo,
				 hi, s);
	*out = v;
	return 0;
}

/* What a list option counts, for its message: tokens for a context
 * (under any of its names), else users, threads, heads, ... */
static const char *counts_of(const char *opt)
{
	return !strcmp(opt, "--ctx") || !strcmp(opt, "--max-model-len") ||
			       !strcmp(opt, "--ctx-size")
		       ? "token counts (8192,32k"
		       : "counts (1,8,64";
}

int cli_sweep(const char *opt, const char *s, uint64_t **vals, size_t *n)
{
	int e = kv_parse_sweep(s, vals, n);
	if (e == KV_ENOMEM) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	if (e == KV_ERANGE)
		return cli_usage("%s: too large or too many values: '%s'", opt,
				 s);
	if (e)
		return cli_usage("%s: not a list of %s or lo:hi:xF or "
				 "lo:hi:+S): '%s'",
				 opt, counts_of(opt), s);
	for (size_t i = 0; i < *n; i++)
		if ((*vals)[i] == 0) {
			free(*vals);
			*vals = NULL;
			return cli_usage("%s: must be at least 1, got '%s'",
					 opt, s);
		}
	return 0;
}

int cli_list(const char *opt, const char *s, uint64_t max, uint64_t **vals,
	     size_t *n)
{
	free(*vals);
	*vals = NULL;
	int e = cli_sweep(opt, s, vals, n);
	for (size_t i = 0; !e && i < *n; i++)
		if ((*vals)[i] > max)
			return cli_usage("%s: at most %llu, got '%s'", opt,
					 (unsigned long long)max, s);
	return e;
}

int cli_users(const char *s, uint64_t **vals, size_t *n)
{
	int e;
	free(*vals);
	*vals = NULL;
	if ((e = cli_sweep("--users", s, vals, n)))
		return e;
	for (size_t i = 0; i < *n; i++)
		if ((*vals)[i] > KV_MAX_USERS)
			return cli_usage("--users: each from 1 to 2^40, got "
					 "'%s'",
					 s);
	return 0;
}

int cli_u64s(const char *opt, const char *s, uint64_t lo, uint64_t hi,
	     uint64_t **vals, size_t *n)
{
	free(*vals);
	*vals = NULL;
	*n = 0;
	if (!strpbrk(s, ",:")) {
		uint64_t v = 0;
		int e = cli_u64(opt, s, lo, hi, &v);
		if (e)
			return e;
		if (!(*vals = malloc(sizeof **vals))) {
			cli_error("out of memory");
			return CLI_FAIL;
		}
		**vals = v;
		*n = 1;
		return 0;
	}
	int e = cli_sweep(opt, s, vals, n);
	for (size_t i = 0; !e && i < *n; i++)
		if ((*vals)[i] < lo || (*vals)[i] > hi)
			e = cli_usage("%s: each from %llu to %llu, got '%s'",
				      opt, (unsigned long long)lo,
				      (unsigned long long)hi, s);
	if (e) {
		free(*vals);
		*vals = NULL;
		*n = 0;
	}
	return e;
}

int cli_each(const char *opt, const char *s,
	     int (*item)(const char *tok, void *ctx), void *ctx, bool any)
{
	char *copy = strdup(s), *save = NULL;
	int status = 0, n = 0;
	if (!copy) {
		cli_error("out of memory");
		return CLI_FAIL;
	}
	for (char *tok = strtok_r(copy, ",", &save); tok && !status;
	     tok = strtok_r(NULL, ",", &save), n++)
		status = item(tok, ctx);
	if (!status && !n && !any)
		status = cli_usage("%s: empty list", opt);
	free(copy);
	return status;
}

int cli_stored(const char *opt, enum kv_dtype t)
{
	char list[128];
	if (kv_dtype_stored(t))
		return 0;
	return cli_usage("%s: %s: the engine sizes this format but does not "
			 "store it; it stores %s",
			 opt, kv_dtype_name(t),
			 kv_dtype_stored_list(list, sizeof list));
}

int cli_dtypes(const char *opt, const char *s, int **vals, size_t *n)
{
	char *copy = strdup(s);
	size_t cap = 1;
	for (const char *p = s; *p; p++)
		cap += *p == ',';
	*vals = malloc(cap * sizeof **vals);
	*n = 0;
	if (!copy || !*vals) {
		free(copy);
		free(*vals);
		cli_error("out of memory");
		return CLI_FAIL;
	}
	int status = 0;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		enum kv_dtype t;
		if (!strcmp(tok, "auto")) {
			(*vals)[(*n)++] = -1;
		} else if (kv_dtype_parse(tok, &t) == 0 &&
			   kv_dtype_info(t)->kv) {
			(*vals)[(*n)++] = (int)t;
		} else {
			char list[256];
			status = cli_usage("%s: unknown KV format '%s'; valid: "
					   "auto, %s",
					   opt, tok, kv_dtype_list(list, sizeof list, 1));
			break;
		}
	}
	if (!status && *n == 0)
		status = cli_usage("%s: empty list", opt);
	free(copy);
	if (status) {
		free(*vals);
		*vals = NULL;
	}
	return status;
}

int cli_cache_type(bool k, const char *s, struct cli_kv *kv)
{
	int **vals = k ? &kv->k : &kv->v;
	free(*vals);
	*vals = NULL;
	return cli_dtypes(k ? "--cache-type-k" : "--cache-type-v", s, vals,
			  k ? &kv->nk : &kv->nv);
}

int cli_kv_join(struct cli_kv *kv, int **vals, size_t *n)
{
	const int *k = kv->k ? kv->k : kv->v, *v = kv->v ? kv->v : kv->k;
	size_t nk = kv->k ? kv->nk : kv->nv, nv = kv->v ? kv->nv : kv->nk;
	int status = 0;
	if (!k)
		return 0;
	if (*vals)
		status = cli_usage("--kv-dtype and --cache-type-%s: give the "
				   "formats one way",
				   kv->k ? "k" : "v");
	else if (!(*vals = malloc(nk * nv * sizeof **vals))) {
		cli_error("out of memory");
		status = CLI_FAIL;
	}
	for (size_t i = 0; !status && i < nk; i++)
		for (size_t j = 0; !status && j < nv; j++) {
			if ((k[i] < 0 || v[j] < 0) && k[i] != v[j]) {
				status = cli_usage("--cache-type-k and "
						   "--cache-type-v: auto is "
						   "both's or neither's");
				break;
			}
			(*vals)[(*n)++] = k[i] < 0 ? -1
						   : kv_dtype_pack(
							     (enum kv_dtype)k[i],
							     (enum kv_dtype)v[j]);
		}
	if (status && *n) {
		free(*vals);
		*vals = NULL;
		*n = 0;
	}
	free(kv->k);
	free(kv->v);
	*kv = (struct cli_kv){0};
	return status;
}
