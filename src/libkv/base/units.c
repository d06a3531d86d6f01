/*
 * units.c - parsing and printing of sizes and token counts. Every number a
 * user types goes through here, so the rules of DESIGN.md live in one place.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kv/units.h"

int kv_parse_u64(const char *s, uint64_t *out)
{
	if (!s || !isdigit((unsigned char)s[0]))
		return KV_EINVAL;
	uint64_t v = 0;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return KV_EINVAL;
		if (kv_mul(v, 10, &v) || kv_add(v, (uint64_t)(*s - '0'), &v))
			return KV_ERANGE;
	}
	*out = v;
	return 0;
}

/*
 * Splits "12.5GiB" into a number and a suffix. The number is exact when it
 * is an integer (whole part parsed in 64 bits); a fraction is kept as a
 * decimal numerator/denominator so that "1.5GiB" is exact as well.
 */
struct num {
	uint64_t whole;   /* digits before the point */
	uint64_t frac;    /* digits after the point, as an integer */
	uint64_t scale;   /* 10^(digits after the point) */
};

static int parse_num(const char *s, struct num *n, const char **end)
{
	n->whole = 0;
	n->frac = 0;
	n->scale = 1;
	if (!isdigit((unsigned char)*s))
		return KV_EINVAL;
	for (; isdigit((unsigned char)*s); s++)
		if (kv_mul(n->whole, 10, &n->whole) ||
		    kv_add(n->whole, (uint64_t)(*s - '0'), &n->whole))
			return KV_ERANGE;
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s))
			return KV_EINVAL;
		for (; isdigit((unsigned char)*s); s++) {
			if (n->scale >= 1000000000000ULL)
				continue; /* further digits are below a byte */
			n->frac = n->frac * 10 + (uint64_t)(*s - '0');
			n->scale *= 10;
		}
	}
	*end = s;
	return 0;
}

/* value = n * mult, rounded to the nearest integer; KV_ERANGE past 2^64-1. */
static int scale_num(const struct num *n, uint64_t mult, uint64_t *out)
{
	uint64_t w;
	if (kv_mul(n->whole, mult, &w))
		return KV_ERANGE;
	if (n->frac) {
		/* frac/scale * mult, in long double: mult <= 2^50, frac < 1e12 */
		long double f = (long double)n->frac * (long double)mult /
				(long double)n->scale;
		uint64_t r = (uint64_t)llroundl(f);
		if (kv_add(w, r, &w))
			return KV_ERANGE;
	}
	*out = w;
	return 0;
}

int kv_parse_size(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		uint64_t mult;
	} units[] = {
		{"", 1}, {"B", 1},
		{"K", 1ULL << 10}, {"M", 1ULL << 20}, {"G", 1ULL << 30},
		{"T", 1ULL << 40}, {"P", 1ULL << 50},
		{"KiB", 1ULL << 10}, {"MiB", 1ULL << 20}, {"GiB", 1ULL << 30},
		{"TiB", 1ULL << 40}, {"PiB", 1ULL << 50},
		{"KB", 1000ULL}, {"MB", 1000000ULL}, {"GB", 1000000000ULL},
		{"TB", 1000000000000ULL}, {"PB", 1000000000000000ULL},
	};
	struct num n;
	const char *end;
	int e;
	if (!s)
		return KV_EINVAL;
	if ((e = parse_num(s, &n, &end)))
		return e;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strcasecmp(end, units[i].suffix) == 0)
			return scale_num(&n, units[i].mult, out);
	return KV_EINVAL;
}

int kv_parse_tokens(const char *s, uint64_t *out)
{
	struct num n;
	uint64_t mult = 1;
	const char *end;
	int e;
	if (!s)
		return KV_EINVAL;
	if ((e = parse_num(s, &n, &end)))
		return e;
	if (*end) {
		if (end[1])
			return KV_EINVAL;
		switch (*end) {
		case 'k': case 'K': mult = 1ULL << 10; break;
		case 'm': case 'M': mult = 1ULL << 20; break;
		case 'g': case 'G': mult = 1ULL << 30; break;
		default: return KV_EINVAL;
		}
	}
	/* a fraction must land on a whole token: 1.5k = 1536 */
	if (n.frac) {
		uint64_t num;
		if (kv_mul(n.frac, mult, &num))
			return KV_ERANGE;
		if (num % n.scale)
			return KV_EINVAL;
	}
	return scale_num(&n, mult, out);
}

static int push(uint64_t **vals, size_t *n, size_t *cap, uint64_t v)
{
	if (*n == KV_SWEEP_MAX)
		return KV_ERANGE;
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		uint64_t *p = realloc(*vals, nc * sizeof *p);
		if (!p)
			return KV_ENOMEM;
		*vals = p;
		*cap = nc;
	}
	(*vals)[(*n)++] = v;
	return 0;
}

/* One "lo:hi:xF" or "lo:hi:+S" item, appended to vals. */
static int parse_range(char *item, uint64_t **vals, size_t *n, size_t *cap)
{
	char *c1 = strchr(item, ':');
	char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c1 || !c2 || strchr(c2 + 1, ':'))
		return KV_EINVAL;
	*c1 = *c2 = '\0';
	uint64_t lo, hi, step;
	int e;
	if ((e = kv_parse_tokens(item, &lo)) || (e = kv_parse_tokens(c1 + 1, &hi)))
		return e;
	char op = c2[1];
	if ((op != 'x' && op != '*' && op != '+') ||
	    (e = kv_parse_tokens(c2 + 2, &step)))
		return e ? e : KV_EINVAL;
	if (lo == 0 || hi < lo || (op == '+' && step == 0) ||
	    (op != '+' && step < 2))
		return KV_EINVAL;
	for (uint64_t v = lo; v <= hi;) {
		if ((e = push(vals, n, cap, v)))
			return e;
		uint64_t next;
		if (op == '+' ? kv_add(v, step, &next) : kv_mul(v, step, &next))
			break;
		v = next;
	}
	return 0;
}

int kv_parse_sweep(const char *s, uint64_t **vals, size_t *n)
{
	*vals = NULL;
	*n = 0;
	if (!s || !*s)
		return KV_EINVAL;
	char *copy = strdup(s);
	if (!copy)
		return KV_ENOMEM;
	size_t cap = 0;
	int e = 0;
	char *p = copy;
	for (;;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (!*p) {
			e = KV_EINVAL;
		} else if (strchr(p, ':')) {
			e = parse_range(p, vals, n, &cap);
		} else {
			uint64_t v;
			e = kv_parse_tokens(p, &v);
			if (!e)
				e = push(vals, n, &cap, v);
		}
		if (e || !comma)
			break;
		p = comma + 1;
	}
	free(copy);
	if (e) {
		free(*vals);
		*vals = NULL;
		*n = 0;
	}
	return e;
}

char *kv_format_iec(uint64_t bytes, char *buf, size_t n)
{
	static const char *unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	if (bytes < 1024) {
		snprintf(buf, n, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	int u = 0;
	long double v = (long double)bytes / 1024.0L;
	while (v >= 1024.0L && u < 5) {
		v /= 1024.0L;
		u++;
	}
	snprintf(buf, n, "%.2Lf %s", v, unit[u]);
	return buf;
}

char *kv_format_grouped(uint64_t v, char *buf, size_t n)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
	size_t j = 0;
	for (int i = 0; i < len && j + 2 < n; i++) {
		if (i && (len - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = '\0';
	return buf;
}
