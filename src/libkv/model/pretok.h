/*
 * pretok.h - the pre-tokenizers of byte-level BPE: a text cut into the
 * pieces the merges run within, by the patterns GPT-2 and Llama 3 (Qwen2
 * with single digits) split with, written as scanners over code points
 * (no regex engine), and the Unicode classes those patterns use.
 */
#ifndef KV_PRETOK_H
#define KV_PRETOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kv_pretok {
	KV_PRETOK_NONE,   /* the whole text one piece (SentencePiece BPE) */
	KV_PRETOK_GPT2,   /* 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+|
			   * ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
	KV_PRETOK_LLAMA3, /* (?i:'s|'t|'re|'ve|'m|'ll|'d)|
			   * [^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
			   *  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|
			   * \s+(?!\S)|\s+ */
	KV_PRETOK_QWEN2,  /* the same with \p{N} one digit at a time */
};

/* Unicode's letters (L*), numbers (N*) and White_Space. */
bool kv_uni_letter(uint32_t cp);
bool kv_uni_number(uint32_t cp);
bool kv_uni_space(uint32_t cp);

/* The code point at s[i] (of len bytes) and its length in *n (1 for a
 * byte that does not start valid UTF-8, read as U+FFFD). */
uint32_t kv_utf8_at(const char *s, size_t len, size_t i, size_t *n);

/* The end of the piece of s[0 .. len) that starts at i < len, under p
 * (len for KV_PRETOK_NONE). */
size_t kv_pretok_next(enum kv_pretok p, const char *s, size_t len, size_t i);

#endif
