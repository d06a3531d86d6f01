/*
 * cli.c - messages, option values and output shared by the front ends, so
 * that every tool speaks with one voice (DESIGN.md, command-line
 * conventions).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "kv/units.h"

static const char *prog = "kvtools";

void cli_init(const char *name)
{
	prog = name;
}

const char *cli_prog(void)
{
	return prog;
}

/* A message on one line: control characters that a config or an
 * argument brought in (a newline, an escape) print as '?'. */
static void vmsg(const char *tag, const char *fmt, va_list ap)
{
	char msg[2048];
	vsnprintf(msg, sizeof msg, fmt, ap);
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	fflush(stdout);
	fprintf(stderr, "%s: %s%s\n", prog, tag, msg);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void cli_warn_beyond(const char *name, const uint64_t *ctx, size_t n,
		     uint64_t max_pos)
{
	size_t over = 0;
	uint64_t top = 0;
	for (size_t i = 0; i < n && max_pos; i++)
		if (ctx[i] > max_pos) {
			over++;
			top = ctx[i] > top ? ctx[i] : top;
		}
	if (over == 1)
		cli_warn("%s: context %llu is beyond the config's %llu "
			 "positions",
			 name, (unsigned long long)top,
			 (unsigned long long)max_pos);
	else if (over)
		cli_warn("%s: %zu contexts, up to %llu, are beyond the "
			 "config's %llu positions",
			 name, over, (unsigned long long)top,
			 (unsigned long long)max_pos);
}

int cli_usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	return CLI_USAGE;
}

/* The engines' own flags kvtools has no alias for, and what it has. */
static const struct {
	const char *flag; /* as the engine spells it, without dashes */
	const char *ours;
} engine_flags[] = {
	{"tp", "--tp (vLLM's -tp, --tensor-parallel-size)"},
	{"pp", "--pp (vLLM's -pp, --pipeline-parallel-size)"},
	{"ctk", "--cache-type-k, K's format (llama.cpp's -ctk; --kv-dtype "
		"for both)"},
	{"ctv", "--cache-type-v, V's format (llama.cpp's -ctv; --kv-dtype "
		"for both)"},
	{"np", "--max-num-seqs (llama.cpp's -np, --parallel)"},
	{"ub", "--max-num-batched-tokens (llama.cpp's -ub, --ubatch-size)"},
	{"kvu", "--kv-unified (llama.cpp's -kvu)"},
	{"ngl", "no such option: a plan puts every layer on the GPUs "
		"(llama.cpp's -ngl)"},
	{"n-gpu-layers", "no such option: a plan puts every layer on the "
			 "GPUs"},
	{"fa", "no such option: llama.cpp's cells are sized as with flash "
	       "attention"},
	{"flash-attn", "no such option: llama.cpp's cells are sized as with "
		       "flash attention"},
	{"dtype", "--weights-dtype (vLLM's --dtype)"},
	{"quantization", "--weights-dtype (vLLM's --quantization); a "
			 "checkpoint's quantization_config is read"},
	{"enforce-eager", "--reserve (what vLLM keeps for CUDA graphs is "
			  "part of it)"},
	{"model", "the config as an argument: a file, a folder or org/name"},
};

static const char *engine_flag(const char *arg)
{
	while (*arg == '-')
		arg++;
	size_t n = strcspn(arg, "=");
	for (size_t i = 0; i < sizeof engine_flags / sizeof *engine_flags;
	     i++)
		if (strlen(engine_flags[i].flag) == n &&
		    !strncmp(arg, engine_flags[i].flag, n))
			return engine_flags[i].ours;
	return NULL;
}

int cli_common(int c, const char *arg, const char *head, const char *foot,
	       bool *json, bool *header, bool *done)
{
	switch (c) {
	case 'h':
		cli_help(stdout, head, foot);
		*done = true;
		return 0;
	case OPT_VERSION:
		printf("%s %s\n", prog, KV_VERSION);
		*done = true;
		return 0;
	case OPT_JSON: *json = true; return 0;
	case 'o': return cli_output(arg, json);
	case 'v': cli_verbose(); return 0;
	case OPT_NO_HEADER: *header = false; return 0;
	default: return CLI_NOT_MINE;
	}
}

int cli_single_dash(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];
		if (a[0] != '-' || a[1] == '-' || strlen(a) < 3)
			continue;
		const char *ours = engine_flag(a);
		if (ours)
			return cli_usage("%s: a single-dash long option; "
					 "kvtools has %s",
					 a, ours);
	}
	return 0;
}

int cli_bad_option(char **argv, int c)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "?";
	const char *ours = engine_flag(arg);
	if (c == ':')
		return cli_usage("option '%s' needs a value", arg);
	if (optopt && arg[0] == '-' && arg[1] != '-')
		return cli_usage("unknown option '-%c'", optopt);
	if (ours)
		return cli_usage("unknown option '%s'; kvtools has %s", arg,
				 ours);
	return cli_usage("unknown option '%s'", arg);
}

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

int cli_load_model(const char *arg, struct kv_model **m)
{
	char path[8192], err[KV_ERRLEN];
	if (kv_config_find(arg, path, sizeof path)) {
		struct stat st;
		if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
			cli_error("%s: a folder without config.json", arg);
		else if (strchr(arg, '/'))
			cli_error("%s: no such file or folder, and no snapshot "
				  "of that model in the Hugging Face cache "
				  "($HF_HUB_CACHE, $HF_HOME/hub, "
				  "~/.cache/huggingface/hub)",
				  arg);
		else
			cli_error("%s: no such file, and no config of that "
				  "name in $KV_CONFIG_PATH or the data "
				  "directories (see --list)",
				  arg);
		return CLI_USAGE;
	}
	int e = kv_model_load(path, m, err);
	if (e)
		return cli_kv_error(e, err);
	/* a name found in the search path is printed bare, so that another
	 * tool can find it again; a path stays the path the user gave */
	if (strcmp(path, arg) != 0) {
		snprintf((*m)->name, sizeof (*m)->name, "%s", arg);
		size_t n = strlen((*m)->name);
		if (n > 5 && !strcmp((*m)->name + n - 5, ".json"))
			(*m)->name[n - 5] = '\0';
	} else {
		snprintf((*m)->name, sizeof (*m)->name, "%s", arg);
	}
	return 0;
}

/* --- TSV in --- */

int cli_read_text(const char *path, char **out, size_t *len)
{
	bool in = !strcmp(path, "-");
	FILE *f = in ? stdin : fopen(path, "r");
	struct stat st;
	*out = NULL;
	*len = 0;
	if (f && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		if (!in)
			fclose(f);
		f = NULL;
		errno = EISDIR;
	}
	if (!f) {
		cli_error("%s: %s", path, strerror(errno));
		return CLI_USAGE;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		char *p = cap < (64u << 20) ? realloc(buf, cap * 2 + 1) : NULL;
		if (!p) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = p;
		cap *= 2;
	}
	if (!in)
		fclose(f);
	if (!buf) {
		cli_error("%s: out of memory, or larger than 64 MiB", path);
		return CLI_FAIL;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int cli_tsv_split(char *buf, const char *src, struct kv_tsv *t)
{
	char err[KV_ERRLEN], msg[KV_ERRLEN + 256];
	int e = kv_tsv_split(buf, t, err);
	snprintf(msg, sizeof msg, "%s: %s", src, err);
	return cli_kv_error(e, msg);
}

int cli_exit(int kv_err)
{
	return !kv_err		      ? CLI_OK
	       : kv_err == KV_ENOMEM ? CLI_FAIL
				     : CLI_USAGE;
}

int cli_kv_error(int e, const char *err)
{
	if (e == KV_ENOMEM)
		cli_error("out of memory");
	else if (e)
		cli_error("%s", err);
	return cli_exit(e);
}

int cli_finish(int status)
{
	int bad = ferror(stdout);
	if (fclose(stdout) != 0 && !bad)
		bad = 1;
	if (bad && errno != EPIPE) {
		fprintf(stderr, "%s: write error: %s\n", prog, strerror(errno));
		return status ? status : CLI_FAIL;
	}
	return status;
}
