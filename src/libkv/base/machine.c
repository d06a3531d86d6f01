/*
 * machine.c - this machine's memory, from /proc/meminfo, and the part of
 * it a run may take ($KV_MEM_AVAILABLE, else 9/10 of MemAvailable).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv/machine.h"
#include "kv/units.h"

int kv_meminfo_parse(const char *text, uint64_t *avail)
{
	return kv_meminfo_field(text, "MemAvailable", avail);
}

int kv_meminfo_field(const char *text, const char *field, uint64_t *bytes)
{
	const char *p = text;
	size_t n = strlen(field);
	/* the field at a line's start, then its colon */
	while ((p = strstr(p, field)) &&
	       ((p != text && p[-1] != '\n') || p[n] != ':'))
		p += n;
	if (!p)
		return KV_EINVAL;
	p += n + 1;
	char *end;
	unsigned long long kb = strtoull(p, &end, 10);
	if (end == p)
		return KV_EINVAL;
	while (*end == ' ' || *end == '\t')
		end++;
	if (strncmp(end, "kB", 2) != 0)
		return KV_EINVAL;
	return kv_mul(kb, 1024, bytes);
}

int kv_mem_available(uint64_t *avail)
{
	char buf[8192];
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return KV_EIO;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return kv_meminfo_parse(buf, avail);
}

int kv_run_memory(uint64_t *avail, uint64_t *usable, char *err)
{
	const char *env = getenv("KV_MEM_AVAILABLE");
	*avail = *usable = 0;
	if (env && *env) {
		if (kv_parse_size(env, avail)) {
			snprintf(err, KV_ERRLEN,
				 "KV_MEM_AVAILABLE: not a size: '%s'", env);
			return KV_EINVAL;
		}
	} else if (kv_mem_available(avail)) {
		*avail = 0; /* unknown: the allocation decides */
	}
	*usable = *avail / 10 * 9;
	return 0;
}
