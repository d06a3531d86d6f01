/*
 * test_options - the one option table (src/options.c): a long name has one
 * key everywhere, a letter one long name in every tool, an engine's name
 * stands for an option its tools have, and each tool's --help shows
 * exactly its rows, both ways. "test_options names TOOL" prints the long
 * names the tool takes, one a line, for scripts/options.sh.
 */
#include <getopt.h>

#include "cli.h"
#include "test.h"

static const char *const tools[] = {"kvsize", "kvfit", "kvdecode",
				    "kvbench"};

/* The option of that name, with help, among the rows of tool. */
static const struct cli_opt *find(unsigned tool, const char *name)
{
	for (size_t i = 0; i < cli_nopts; i++)
		if ((cli_opts[i].tools & tool) && cli_opts[i].help &&
		    !strcmp(cli_opts[i].name, name))
			return &cli_opts[i];
	return NULL;
}

static void one_vocabulary(void)
{
	for (size_t i = 0; i < cli_nopts; i++) {
		const struct cli_opt *a = &cli_opts[i];
		CHECK(a->tools && !(a->tools & ~15u));
		CHECK(a->help || (a->engine && a->of));
		for (size_t j = i + 1; j < cli_nopts; j++) {
			const struct cli_opt *b = &cli_opts[j];
			if (!strcmp(a->name, b->name)) {
				/* a name: one key, one kind, no tool twice */
				if (a->help && b->help)
					CHECK(a->key == b->key);
				CHECK(!a->arg == !b->arg);
				CHECK(!(a->tools & b->tools));
			}
			/* a letter: one long name in every tool */
			if (a->key < 128 && a->key == b->key && a->help &&
			    b->help && strcmp(a->name, b->name)) {
				fprintf(stderr, "-%c is --%s and --%s\n",
					a->key, a->name, b->name);
				CHECK(0);
			}
		}
		/* help lines fit 80 columns beside the option's 25 */
		for (const char *p = a->help; p && *p;) {
			size_t n = strcspn(p, "\n");
			CHECK(n <= 55);
			p += n + (p[n] == '\n');
		}
	}
}

/* An engine's name stands for an option each of its tools has. */
static void aliases(void)
{
	for (size_t i = 0; i < cli_nopts; i++) {
		const struct cli_opt *a = &cli_opts[i];
		if (a->help)
			continue;
		for (unsigned t = 1; t <= 8; t <<= 1) {
			if (!(a->tools & t))
				continue;
			const struct cli_opt *of = find(t, a->of);
			CHECK(of != NULL);
			CHECK(!find(t, a->name));
			/* the same key, but for llama.cpp's K and V
			 * formats, which kvsize, kvfit and kvbench check
			 * agree, the engines' host tiers of KV, each in a
			 * unit of its own, which kvfit takes one of,
			 * kvfit's --ctx-size, llama.cpp's tokens of every
			 * --parallel slot together, vLLM's
			 * --enable-expert-parallel, a flag for --ep over
			 * every rank, and SGLang's --enable-dp-attention,
			 * one group without --dp-size */
			if (of && a->key != OPT_CTK && a->key != OPT_CTV &&
			    a->key != OPT_CTX_SIZE &&
			    !(a->key >= OPT_KV_OFFLOAD_GIB &&
			      a->key <= OPT_HOST_CACHE_SIZE) &&
			    a->key != OPT_EP_ALL && a->key != OPT_DP_ATTN_ONE)
				CHECK(a->key == of->key);
		}
	}
}

/* The tool's --help names each of its long names, and no other. */
static void help_in_step(size_t k)
{
	unsigned tool = 1u << k;
	char *text = NULL;
	size_t len = 0, rows = 0;
	FILE *f = open_memstream(&text, &len);
	cli_init(tools[k]);
	cli_help(f, "head\n\n", "\nfoot\n");
	fclose(f);
	for (size_t i = 0; i < cli_nopts; i++) {
		char want[80];
		if (!(cli_opts[i].tools & tool))
			continue;
		rows++;
		snprintf(want, sizeof want, "--%s%s", cli_opts[i].name,
			 cli_opts[i].arg ? " " : "");
		if (!strstr(text, want))
			fprintf(stderr, "%s: --help lacks %s\n", tools[k],
				want);
		CHECK(strstr(text, want) != NULL);
		if (cli_opts[i].help && cli_opts[i].key < 128) {
			snprintf(want, sizeof want, "  -%c, --%s",
				 cli_opts[i].key, cli_opts[i].name);
			CHECK(strstr(text, want) != NULL);
		}
	}
	CHECK(rows > 0 && rows <= CLI_MAX_OPTS);
	for (const char *p = text; (p = strstr(p, "--"));) {
		char name[64];
		size_t n = strspn(p + 2,
				  "abcdefghijklmnopqrstuvwxyz0123456789_-");
		snprintf(name, sizeof name, "%.*s", (int)n, p + 2);
		bool ours = false;
		for (size_t i = 0; i < cli_nopts; i++)
			ours |= (cli_opts[i].tools & tool) &&
				!strcmp(cli_opts[i].name, name);
		if (!ours)
			fprintf(stderr, "%s: --help names --%s\n", tools[k],
				name);
		CHECK(ours);
		p += 2 + n;
	}
	free(text);
}

/* getopt reads the table's names, aliases and letters. */
static void parses(void)
{
	char *argv[] = {"kvfit", "--tensor-parallel-size", "4", "-c", "8k",
			"--parallel=3", "cfg", NULL};
	cli_init("kvfit");
	optind = 0;
	CHECK(cli_getopt(7, argv) == OPT_TP);
	CHECK_STR(optarg, "4");
	CHECK(cli_getopt(7, argv) == 'c');
	CHECK_STR(optarg, "8k");
	CHECK(cli_getopt(7, argv) == OPT_SEQS);
	CHECK_STR(optarg, "3");
	CHECK(cli_getopt(7, argv) == -1);
	CHECK(optind == 6);
}

/* The one mapping of libkv's errors to exit statuses (cli_exit), every
 * code of kv.h: out of memory 1, bad input of any kind 2. */
static void exit_statuses(void)
{
	CHECK_U64(cli_exit(0), CLI_OK);
	CHECK_U64(cli_exit(KV_ENOMEM), CLI_FAIL);
	CHECK_U64(cli_exit(KV_EINVAL), CLI_USAGE);
	CHECK_U64(cli_exit(KV_ERANGE), CLI_USAGE);
	CHECK_U64(cli_exit(KV_EIO), CLI_USAGE);
	CHECK_U64(cli_exit(KV_EUNSUP), CLI_USAGE);
	CHECK_U64(cli_kv_error(0, "unsaid"), CLI_OK);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "names")) {
		unsigned tool = cli_tool(argv[2]);
		for (size_t i = 0; i < cli_nopts; i++)
			if (cli_opts[i].tools & tool)
				printf("%s\n", cli_opts[i].name);
		return tool ? 0 : 2;
	}
	one_vocabulary();
	aliases();
	exit_statuses();
	for (size_t k = 0; k < 4; k++)
		help_in_step(k);
	parses();
	return test_done("test_options");
}
