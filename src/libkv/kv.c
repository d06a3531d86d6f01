/* kv.c - error strings, checked arithmetic and the allocation of large
 * buffers, shared by every module. */
#include <stdlib.h>
#include <sys/mman.h>

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

/* 2 MiB: an x86-64 huge page. */
#define HUGE_PAGE (2u << 20)

void *kv_alloc_big(uint64_t bytes)
{
	size_t align = bytes >= HUGE_PAGE ? HUGE_PAGE : 64;
	void *p = NULL;
	if (bytes > SIZE_MAX - HUGE_PAGE ||
	    posix_memalign(&p, align, bytes ? (size_t)bytes : 64))
		return NULL;
#ifdef MADV_HUGEPAGE
	if (align == HUGE_PAGE)
		madvise(p, (size_t)bytes, MADV_HUGEPAGE); /* advice only */
#endif
	return p;
}
