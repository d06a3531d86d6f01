/*
 * test_props.c - the properties every sizing must keep (tests/fuzz/props.h),
 * over every config the project ships (configs/) and tests
 * (tests/configs/): the same checks the config fuzzers make on each input
 * they accept. A property that fails names the config and what failed.
 */
#include <dirent.h>

#include "kv/model.h"
#include "test.h"
#include "../fuzz/props.h"

static int over(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	CHECK(d != NULL);
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".json") ||
		    !strcmp(e->d_name, "gpus.json") ||
		    !strcmp(e->d_name, "efficiency.json"))
			continue;
		char path[512], err[KV_ERRLEN];
		struct kv_model *m = NULL;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (kv_model_load(path, &m, err)) {
			fprintf(stderr, "load: %s\n", err);
			test_failures++;
			continue;
		}
		const char *why = kv_props_check(m);
		test_checks++;
		if (why) {
			props_report(m, why);
			test_failures++;
		}
		kv_model_free(m);
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	int n = over("configs");
	int t = over("tests/configs");
	printf("configs: %d shipped, %d tested\n", n, t);
	CHECK(n >= 20);
	CHECK(t >= 50);
	return test_done("test_props");
}
