/*
 * configs.c - where a config is found by what a user typed: a file, a
 * snapshot folder, a Hugging Face hub cache's "org/name", or a name in the
 * directories searched (KV_CONFIG_PATH, the installed data, the source
 * tree's configs).
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kv/model.h"

#ifndef KV_DATADIR
#define KV_DATADIR "/usr/local/share/kvtools/configs"
#endif
#ifndef KV_SOURCE_TEST_CONFIGS
#define KV_SOURCE_TEST_CONFIGS "tests/configs"
#endif
#ifndef KV_SOURCE_CONFIGS
#define KV_SOURCE_CONFIGS "configs"
#endif

/* The installed data directory beside the running binary
 * (<prefix>/bin/../share/kvtools/configs), so an installed tree can move. */
static const char *exe_datadir(void)
{
	static char dir[4096];
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	slash = strrchr(exe, '/');
	if (!slash || strcmp(slash, "/bin") != 0)
		return NULL;
	*slash = '\0';
	snprintf(dir, sizeof dir, "%.4000s/share/kvtools/configs", exe);
	return dir;
}

/* The directories after KV_CONFIG_PATH's: beside an installed binary,
 * then the install's own, each with its more/ (published configs the
 * tests read, installed with the shipped ones), then the source tree's
 * configs/ and tests/configs/. */
const char *kv_config_dir(size_t i)
{
	static char dir[4096];
	const char *env = getenv("KV_CONFIG_PATH");
	size_t k = 0;
	if (env && *env) {
		const char *p = env;
		for (;;) {
			const char *colon = strchr(p, ':');
			size_t len = colon ? (size_t)(colon - p) : strlen(p);
			if (len > 0 && len < sizeof dir) {
				if (k == i) {
					memcpy(dir, p, len);
					dir[len] = '\0';
					return dir;
				}
				k++;
			}
			if (!colon)
				break;
			p = colon + 1;
		}
	}
	const char *base[3] = {NULL, KV_DATADIR, NULL};
	const char *rel = exe_datadir();
	if (rel && strcmp(rel, KV_DATADIR) != 0)
		base[0] = rel;
	for (int b = 0; b < 2; b++) {
		if (!base[b])
			continue;
		if (i == k)
			return base[b];
		if (i == k + 1) {
			snprintf(dir, sizeof dir, "%.4000s/more", base[b]);
			return dir;
		}
		k += 2;
	}
	if (i == k)
		return KV_SOURCE_CONFIGS;
	if (i == k + 1)
		return KV_SOURCE_TEST_CONFIGS;
	return NULL;
}

int kv_config_file(const char *name, char *out, size_t n)
{
	const char *dir;
	for (size_t i = 0; (dir = kv_config_dir(i)); i++) {
		struct stat st;
		snprintf(out, n, "%s/%s", dir, name);
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
	}
	snprintf(out, n, "%s", name);
	return KV_EIO;
}

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The config.json of a hub cache's model folder repo (models--org--name):
 * of the snapshot refs/main names, or else of the snapshot changed last.
 * Returns true with out filled. */
static bool repo_snapshot(const char *repo, char *out, size_t n)
{
	char p[8800], rev[128] = "";
	snprintf(p, sizeof p, "%s/refs/main", repo);
	FILE *f = fopen(p, "r");
	if (f) {
		if (!fgets(rev, sizeof rev, f))
			rev[0] = '\0';
		rev[strcspn(rev, " \r\n")] = '\0';
		fclose(f);
	}
	snprintf(p, sizeof p, "%s/snapshots/%s/config.json", repo, rev);
	if (rev[0] && !strchr(rev, '/') && is_file(p)) {
		snprintf(out, n, "%s", p);
		return true;
	}
	/* no ref: the snapshot changed last */
	snprintf(p, sizeof p, "%s/snapshots", repo);
	DIR *d = opendir(p);
	struct dirent *de;
	time_t best = 0;
	bool found = false;
	while (d && (de = readdir(d))) {
		char c[9400];
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		snprintf(c, sizeof c, "%s/%s/config.json", p, de->d_name);
		if (stat(c, &st) == 0 && S_ISREG(st.st_mode) &&
		    (!found || st.st_mtime > best)) {
			best = st.st_mtime;
			snprintf(out, n, "%s", c);
			found = true;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* The folder of root named name, or one named so but for case (the hub
 * takes meta-llama/llama-3.1-8b for meta-llama/Llama-3.1-8B): true with
 * its path in out. */
static bool folder_nocase(const char *root, const char *name, char *out,
			  size_t n)
{
	snprintf(out, n, "%.4000s/%.600s", root, name);
	if (is_dir(out))
		return true;
	DIR *d = opendir(root);
	struct dirent *de;
	bool found = false;
	while (d && !found && (de = readdir(d)))
		if (!strcasecmp(de->d_name, name)) {
			snprintf(out, n, "%.4000s/%.600s", root, de->d_name);
			found = is_dir(out);
		}
	if (d)
		closedir(d);
	return found;
}

/*
 * A model a Hugging Face hub cache holds, "org/name", as its newest
 * snapshot's config.json (repo_snapshot) in the cache's models--org--name,
 * its case as the hub's is not minded. The caches, in the order
 * huggingface_hub reads them: $HF_HUB_CACHE, $HF_HOME/hub,
 * ~/.cache/huggingface/hub. Returns true with out filled.
 */
static bool hub_snapshot(const char *arg, char *out, size_t n)
{
	const char *slash = strchr(arg, '/');
	if (!slash || strchr(slash + 1, '/') || slash == arg || !slash[1] ||
	    arg[0] == '.')
		return false;
	char roots[3][4096];
	const char *e;
	size_t nr = 0;
	if ((e = getenv("HF_HUB_CACHE")) && *e)
		snprintf(roots[nr++], sizeof roots[0], "%s", e);
	if ((e = getenv("HF_HOME")) && *e)
		snprintf(roots[nr++], sizeof roots[0], "%s/hub", e);
	if ((e = getenv("HOME")) && *e)
		snprintf(roots[nr++], sizeof roots[0],
			 "%s/.cache/huggingface/hub", e);
	for (size_t r = 0; r < nr; r++) {
		char name[600], repo[4800];
		snprintf(name, sizeof name, "models--%.*s--%.256s",
			 (int)(slash - arg < 256 ? slash - arg : 256), arg,
			 slash + 1);
		if (folder_nocase(roots[r], name, repo, sizeof repo) &&
		    repo_snapshot(repo, out, n))
			return true;
	}
	return false;
}

int kv_config_find(const char *arg, char *out, size_t n)
{
	if (!strcmp(arg, "-") || is_file(arg)) {
		snprintf(out, n, "%s", arg);
		return 0;
	}
	if (is_dir(arg)) { /* a snapshot: its config.json */
		size_t l = strlen(arg);
		snprintf(out, n, "%s%sconfig.json", arg,
			 l && arg[l - 1] == '/' ? "" : "/");
		if (is_file(out))
			return 0;
		/* a hub cache's model folder: its newest snapshot's */
		return repo_snapshot(arg, out, n) ? 0 : KV_EIO;
	}
	if (strchr(arg, '/')) {
		if (hub_snapshot(arg, out, n))
			return 0;
		snprintf(out, n, "%s", arg);
		/* a path is left for the loader to say what is wrong; a
		 * hub name (org/name, one slash) that no cache holds is an
		 * error here */
		const char *sl = strchr(arg, '/');
		size_t l = strlen(arg);
		bool path = arg[0] == '.' || arg[0] == '/' ||
			    strchr(sl + 1, '/') ||
			    (l > 5 && !strcmp(arg + l - 5, ".json"));
		return path ? 0 : KV_EIO;
	}
	const char *dir;
	for (size_t i = 0; (dir = kv_config_dir(i)); i++) {
		char p[8192];
		snprintf(p, sizeof p, "%s/%s", dir, arg);
		if (is_file(p)) {
			snprintf(out, n, "%s", p);
			return 0;
		}
		snprintf(p, sizeof p, "%s/%s.json", dir, arg);
		if (is_file(p)) {
			snprintf(out, n, "%s", p);
			return 0;
		}
	}
	snprintf(out, n, "%s", arg);
	return KV_EIO;
}

bool kv_config_beside(const char *config_path, const char *name, char *out,
		      size_t n)
{
	if (!strcmp(config_path, "-"))
		return false;
	const char *slash = strrchr(config_path, '/');
	int dir = slash ? (int)(slash - config_path) : 0;
	int w = !*name ? snprintf(out, n, "%.*s", slash ? dir : 1,
				  slash ? config_path : ".")
		: slash ? snprintf(out, n, "%.*s/%s", dir, config_path, name)
			: snprintf(out, n, "%s", name);
	return w > 0 && (size_t)w < n;
}
