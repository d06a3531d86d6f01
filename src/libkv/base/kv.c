/*
 * kv.c - error strings and an enum's names shared by every module (the
 * checked arithmetic is inline, in kv.h).
 */
#include <math.h>
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

uint64_t kv_floor_frac(uint64_t a, double f)
{
	if (!(f > 0))
		return 0;
	if (f >= 1)
		return a;
	int e;
	double m = frexp(f, &e); /* f = m 2^e, m in [0.5, 1), e <= 0 */
	uint64_t mi = (uint64_t)ldexp(m, 53); /* exact: 53 bits */
	int shift = 53 - e;
	if (shift >= 117) /* a x mi < 2^117 */
		return 0;
	unsigned __int128 p = (unsigned __int128)a * mi;
	return (uint64_t)(p >> shift);
}
