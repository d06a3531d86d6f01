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
#include "kv/ollama.h"
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
	{"ngl", "--n-gpu-layers (kvfit; llama.cpp's -ngl)"},
	{"ot", "--override-tensor (kvfit; llama.cpp's -ot)"},
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

/* llama.cpp's single-dash spellings of kvfit's options for its split,
 * which kvfit reads as their long names (getopt would take -ngl for -n
 * -g -l). */
static const struct {
	const char *flag, *as;
} spelled[] = {
	{"-ngl", "--n-gpu-layers"},  {"-ot", "--override-tensor"},
	{"-cmoe", "--cpu-moe"},      {"-ncmoe", "--n-cpu-moe"},
	{"-nkvo", "--no-kv-offload"},
};

int cli_single_dash(int argc, char **argv)
{
	bool fit = cli_tool(prog) == CLI_KVFIT;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];
		if (a[0] != '-' || a[1] == '-' || strlen(a) < 3)
			continue;
		for (size_t k = 0; fit && k < sizeof spelled / sizeof *spelled;
		     k++)
			if (!strcmp(a, spelled[k].flag))
				a = argv[i] = (char *)spelled[k].as;
		if (a[1] == '-')
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

int cli_load_model(const char *arg, struct kv_model **m)
{
	char path[8192], err[KV_ERRLEN] = "", store[4096];
	struct kv_ollama o = {.num_gpu = -1};
	int e = kv_config_find(arg, path, sizeof path) ? KV_EIO : 0;
	struct stat st;
	bool dir = stat(arg, &st) == 0 && S_ISDIR(st.st_mode);
	/* no config, or a path to no file: an Ollama model in its store
	 * (kv/ollama.h), else what the search or the loader says */
	if ((e || stat(path, &st) != 0) && !dir && kv_ollama_name(arg) &&
	    kv_ollama_store(store, sizeof store)) {
		int oe = kv_ollama_find(arg, store, &o, err);
		if (oe && oe != KV_EIO)
			return cli_kv_error(oe, err);
		if (!oe) {
			snprintf(path, sizeof path, "%s", o.blob);
			e = 0;
		}
	}
	if (e) {
		if (dir)
			cli_error("%s: a folder without config.json", arg);
		else if (strchr(arg, '/'))
			cli_error("%s: no such file or folder, and no snapshot "
				  "of that model in the Hugging Face cache "
				  "($HF_HUB_CACHE, $HF_HOME/hub, "
				  "~/.cache/huggingface/hub)",
				  arg);
		else if (strchr(arg, ':'))
			cli_error("%s: no such file, no config of that name, "
				  "and %s",
				  arg, err[0] ? err + strlen(arg) + 2
				  : kv_ollama_name(arg)
					  ? "no Ollama store ($OLLAMA_MODELS, "
					    "~/.ollama/models)"
					  : "not an Ollama model name");
		else
			cli_error("%s: no such file, and no config of that "
				  "name in $KV_CONFIG_PATH or the data "
				  "directories (see --list)",
				  arg);
		return CLI_USAGE;
	}
	if ((e = kv_model_load(path, m, err)))
		return cli_kv_error(e, err);
	(*m)->run_ctx = o.num_ctx;
	if (o.num_gpu >= 0) { /* at most 1 << 20 (kv_ollama_find) */
		(*m)->run_ngl_given = true;
		(*m)->run_ngl = (uint32_t)o.num_gpu;
	}
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
	char err[KV_ERRLEN] = "", msg[KV_ERRLEN + 256] = "";
	int e = kv_tsv_split(buf, t, err);
	if (e == KV_EINVAL)
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
