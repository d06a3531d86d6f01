/*
 * kv.c - error strings and an enum's names shared by every module (the
 * checked arithmetic is inline, in kv.h).
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
