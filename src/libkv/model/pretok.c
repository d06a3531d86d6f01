/*
 * pretok.c - byte-level BPE's pre-tokenizers as scanners (pretok.h). Each
 * alternative of a pattern is tried in order at the piece's start, as a
 * backtracking regex engine would, and the first that matches gives the
 * piece; every alternative is written out where it differs from a greedy
 * run (\s+(?!\S) leaves the last space for the word that follows).
 */
#include "pretok.h"
#include "unicode_tab.h"

static bool in(const uint32_t (*r)[2], size_t n, uint32_t cp)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cp < r[mid][0])
			hi = mid;
		else if (cp > r[mid][1])
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

bool kv_uni_letter(uint32_t cp)
{
	return in(LETTERS, sizeof LETTERS / sizeof *LETTERS, cp);
}

bool kv_uni_number(uint32_t cp)
{
	return in(NUMBERS, sizeof NUMBERS / sizeof *NUMBERS, cp);
}

bool kv_uni_space(uint32_t cp)
{
	return (cp >= 0x9 && cp <= 0xD) || cp == 0x20 || cp == 0x85 ||
	       cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
	       cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
	       cp == 0x3000;
}

uint32_t kv_utf8_at(const char *str, size_t len, size_t i, size_t *n)
{
	const unsigned char *s = (const unsigned char *)str + i;
	size_t left = len - i;
	unsigned c = s[0];
	uint32_t cp;
	size_t k;
	*n = 1;
	if (c < 0x80)
		return c;
	if (c >= 0xC2 && c <= 0xDF)
		k = 2, cp = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		k = 3, cp = c & 0x0F;
	else if (c >= 0xF0 && c <= 0xF4)
		k = 4, cp = c & 0x07;
	else
		return 0xFFFD;
	if (left < k)
		return 0xFFFD;
	for (size_t j = 1; j < k; j++) {
		if ((s[j] & 0xC0) != 0x80)
			return 0xFFFD;
		cp = cp << 6 | (s[j] & 0x3F);
	}
	/* overlong forms, surrogates and past U+10FFFF are not UTF-8 */
	if ((k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000) ||
	    (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return 0xFFFD;
	*n = k;
	return cp;
}

/* A scanner over s: the code point at i and the index after it. */
struct scan {
	const char *s;
	size_t len;
};

static uint32_t at(const struct scan *c, size_t i, size_t *next)
{
	size_t n;
	uint32_t cp = kv_utf8_at(c->s, c->len, i, &n);
	*next = i + n;
	return cp;
}

static bool letter(uint32_t cp) { return kv_uni_letter(cp); }
static bool number(uint32_t cp) { return kv_uni_number(cp); }
static bool space(uint32_t cp) { return kv_uni_space(cp); }
static bool other(uint32_t cp)
{
	return !space(cp) && !letter(cp) && !number(cp);
}

/* The end of the run from i of code points cls says yes to (i: none). */
static size_t run(const struct scan *c, size_t i, bool (*cls)(uint32_t),
		  size_t most)
{
	size_t next, k = 0;
	while (i < c->len && k < most && cls(at(c, i, &next))) {
		i = next;
		k++;
	}
	return i;
}

/* 's|'t|'re|'ve|'m|'ll|'d at i (any case with nocase): its end, or 0. */
static size_t contraction(const struct scan *c, size_t i, bool nocase)
{
	static const char *const suf[] = {"s", "t", "re", "ve", "m", "ll", "d"};
	if (c->s[i] != '\'')
		return 0;
	for (size_t k = 0; k < sizeof suf / sizeof *suf; k++) {
		size_t n = 0;
		while (suf[k][n] && i + 1 + n < c->len &&
		       (c->s[i + 1 + n] == suf[k][n] ||
			(nocase && c->s[i + 1 + n] == suf[k][n] - 32)))
			n++;
		if (!suf[k][n])
			return i + 1 + n;
	}
	return 0;
}

/* \s+(?!\S), then \s+, from i (a space): the run, less its last space
 * when a non-space follows and more than one is there. */
static size_t spaces(const struct scan *c, size_t i)
{
	size_t end = run(c, i, space, SIZE_MAX), last = i, next;
	if (end == c->len)
		return end;
	for (size_t j = i; j < end; j = next) {
		at(c, j, &next);
		if (next == end)
			last = j;
	}
	return last > i ? last : end;
}

/* ' ?' then a run of cls from i: its end, or 0. */
static size_t spaced(const struct scan *c, size_t i, bool (*cls)(uint32_t))
{
	size_t j = i, next;
	if (c->s[i] == ' ')
		j = i + 1;
	if (j < c->len && cls(at(c, j, &next)))
		return run(c, j, cls, SIZE_MAX);
	return 0;
}

static size_t gpt2(const struct scan *c, size_t i)
{
	size_t e;
	if ((e = contraction(c, i, false)) || (e = spaced(c, i, letter)) ||
	    (e = spaced(c, i, number)) || (e = spaced(c, i, other)))
		return e;
	return spaces(c, i);
}

static bool newline(uint32_t cp) { return cp == '\r' || cp == '\n'; }

static size_t llama3(const struct scan *c, size_t i, size_t digits)
{
	size_t e, next;
	uint32_t cp = at(c, i, &next);
	if ((e = contraction(c, i, true)))
		return e;
	/* [^\r\n\p{L}\p{N}]?\p{L}+ */
	if (!newline(cp) && !letter(cp) && !number(cp) && next < c->len) {
		size_t n2;
		if (letter(at(c, next, &n2)))
			return run(c, next, letter, SIZE_MAX);
	}
	if (letter(cp))
		return run(c, i, letter, SIZE_MAX);
	if (number(cp))
		return run(c, i, number, digits);
	/*  ?[^\s\p{L}\p{N}]+[\r\n]* */
	if ((e = spaced(c, i, other)))
		return run(c, e, newline, SIZE_MAX);
	/* \s*[\r\n]+: up to the run's last newline */
	size_t end = run(c, i, space, SIZE_MAX), last = 0;
	for (size_t j = i; j < end; j = next)
		if (newline(at(c, j, &next)))
			last = next;
	if (last)
		return last;
	return spaces(c, i);
}

size_t kv_pretok_next(enum kv_pretok p, const char *s, size_t len, size_t i)
{
	struct scan c = {s, len};
	switch (p) {
	case KV_PRETOK_GPT2: return gpt2(&c, i);
	case KV_PRETOK_LLAMA3: return llama3(&c, i, 3);
	case KV_PRETOK_QWEN2: return llama3(&c, i, 1);
	default: return len;
	}
}
