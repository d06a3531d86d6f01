/*
 * kv.h - what every part of libkv shares: error codes and the version.
 *
 * Ownership, for the whole library: a function that allocates says so and
 * names the matching *_free(); every *_free(NULL) is a no-op; no function
 * keeps a pointer it was given after it returns, unless it says so. libkv
 * never prints and never exits: it returns 0 or a negative KV_E* code, and
 * where a person needs more than the code it fills a caller's buffer with a
 * one-line message ("path: field: problem, got X").
 */
#ifndef KV_KV_H
#define KV_KV_H

#include <stddef.h>
#include <stdint.h>

#define KV_VERSION "0.1.0"

enum kv_error {
	KV_OK = 0,
	KV_EINVAL = -1,  /* bad input: a config, an option value */
	KV_ERANGE = -2,  /* a result does not fit in 64 bits */
	KV_ENOMEM = -3,  /* an allocation failed */
	KV_EIO = -4,     /* a file could not be read */
	KV_EUNSUP = -5,  /* valid, but not something this code can do */
};

/* A static description of a KV_E* code. */
const char *kv_strerror(int err);

/* Checked 64-bit arithmetic: 0 on success, KV_ERANGE on overflow. Inline:
 * a fit counts each layer's bytes and parameters through them, and as
 * calls they were a quarter of kvfit's time. */
static inline int kv_mul(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_mul_overflow(a, b, out) ? KV_ERANGE : 0;
}

static inline int kv_add(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_add_overflow(a, b, out) ? KV_ERANGE : 0;
}

/* floor(a x f) for f in [0, 1], exact: the product of a and f's binary
 * value, in 128 bits (long double rounds it, and differs by machine and
 * under valgrind); a for f >= 1, 0 for f <= 0 or NaN. */
uint64_t kv_floor_frac(uint64_t a, double f);

/* An enum's names, names[i] the name of value i (NULL: none): the value
 * named s, or -1; and value i's name, "?" out of range. */
int kv_name_find(const char *const *names, int n, const char *s);
const char *kv_name_of(const char *const *names, int n, int i);

/* Length of the message buffers filled by libkv. */
#define KV_ERRLEN 1024

#endif
