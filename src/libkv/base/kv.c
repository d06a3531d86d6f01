/*
 * kv.c - error strings and checked arithmetic shared by every module.
 */
#include <string.h>

#include "kv/kv.h"

const char *kv_strerror(int err)
{
	switch (err) {
	case KV_OK: return "success";
	case KV_EINVAL: return "invalid input";
	case KV_ERANGE: return "result does not fit in 64 bits";
	case KV_ENOMEM: return "out of memory";
	case KV_EIO: return "input/output error";
	case KV_EUNSUP: return "not supported";
	}
	return "unknown error";
}

int kv_mul(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_mul_overflow(a, b, out) ? KV_ERANGE : 0;
}

int kv_add(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_add_overflow(a, b, out) ? KV_ERANGE : 0;
}

int kv_name_find(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (names[i] && !strcmp(s, names[i]))
			return i;
	return -1;
}

const char *kv_name_of(const char *const *names, int n, int i)
{
	return i >= 0 && i < n && names[i] ? names[i] : "?";
}
