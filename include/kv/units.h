/*
 * units.h - sizes and token counts as people type and read them.
 *
 * Sizes: "80GB" is 80 x 10^9 bytes, "80GiB" 80 x 2^30; bare K/M/G/T (and
 * KB... lowercase too) follow DESIGN: SI suffixes with a B are powers of
 * 1000, IEC suffixes (KiB...) and bare letters are powers of 1024.
 * Token counts: "8192", "8k" = 8192, "128K" = 131072, "1M" = 2^20.
 */
#ifndef KV_UNITS_H
#define KV_UNITS_H

#include "kv.h"

/* Parses a byte size ("80GB", "1.5GiB", "4096"). Fractions are allowed when
 * the result is a whole number of bytes after rounding to nearest. Returns 0,
 * KV_EINVAL for text that is not a size, KV_ERANGE past 2^64 - 1. */
int kv_parse_size(const char *s, uint64_t *out);

/* Parses a token count ("8192", "8k", "128K", "1M"): a whole number of tokens,
 * k/K = 1024, m/M = 2^20, g/G = 2^30. Returns 0, KV_EINVAL or KV_ERANGE. */
int kv_parse_tokens(const char *s, uint64_t *out);

/* Parses a plain unsigned integer (decimal, no sign, no suffix). */
int kv_parse_u64(const char *s, uint64_t *out);

/* Parses a list of token counts: "a,b,c", each item a count or a sweep
 * "lo:hi:xF" (lo, lo*F, ... up to hi) or "lo:hi:+S" (lo, lo+S, ...). The
 * values keep their order. On success *vals is allocated (free with free())
 * and *n > 0. At most KV_SWEEP_MAX values. Returns 0, KV_EINVAL, KV_ERANGE or
 * KV_ENOMEM. */
#define KV_SWEEP_MAX 100000
int kv_parse_sweep(const char *s, uint64_t **vals, size_t *n);

/* Writes bytes as IEC text ("128.00 KiB", "1.00 GiB", "512 B") into buf.
 * Returns buf. */
char *kv_format_iec(uint64_t bytes, char *buf, size_t n);

/* Writes v with its thousands grouped ("1,234,567") into buf, as much as
 * n bytes hold. Returns buf. */
char *kv_format_grouped(uint64_t v, char *buf, size_t n);

#endif
