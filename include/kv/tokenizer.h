/*
 * tokenizer.h - a model's own tokenizer, read from its tokenizer.json
 * (Hugging Face tokenizers' format): byte-level BPE as GPT-2, Llama 3 and
 * Qwen2 ship it (a pre-tokenizer's pattern, bytes as 256 characters,
 * merges by rank) and SentencePiece-style BPE as Llama 2, TinyLlama and
 * Mistral do (spaces as U+2581, characters merged by rank, bytes the
 * vocabulary lacks as <0xXX> tokens). Added tokens are found in the text
 * first; a template's leading special tokens (<s>, <|begin_of_text|>) are
 * what bos adds.
 */
#ifndef KV_TOKENIZER_H
#define KV_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kv.h"

struct kv_tok;

/*
 * Reads tokenizer.json at path (or the text json[0 .. len), path naming
 * it in messages). Refuses, with "path: field: why" in err, a model that
 * is not BPE ("model.type: unknown model type 'Unigram'"), a pre-tokenizer
 * pattern, normalizer or decoder it does not run, merges of tokens not in
 * the vocabulary, ids out of range or given twice. Returns 0, KV_EIO,
 * KV_EINVAL, KV_EUNSUP or KV_ENOMEM.
 */
int kv_tok_load(const char *path, struct kv_tok **out, char *err);
int kv_tok_parse(const char *json, size_t len, const char *path,
		 struct kv_tok **out, char *err);

/* The tokenizer.json in the folder of config_path (a file; "-" has
 * none): 0 with *out NULL when there is none, else as kv_tok_load(). */
int kv_tok_beside(const char *config_path, struct kv_tok **out, char *err);

/* The ids of text[0 .. len) into *ids (from malloc), *n of them, the
 * template's leading special tokens first when bos. 0 or KV_ENOMEM. */
int kv_tok_encode(const struct kv_tok *t, const char *text, size_t len,
		  bool bos, uint32_t **ids, size_t *n);

/* The bytes token id stands for into out (cap bytes, 64 are enough for
 * any but an absurd token; longer ones are cut), their count in *len; the
 * first of a text drops the leading space SentencePiece's decoder strips.
 * An id past the vocabulary gives nothing. Bytes of one character may be
 * split over tokens: print them as they come. */
void kv_tok_piece(const struct kv_tok *t, uint32_t id, bool first, char *out,
		  size_t cap, size_t *len);

/* The whole text of ids[0 .. n) into *out (from malloc, NUL-terminated),
 * *len bytes. 0 or KV_ENOMEM. */
int kv_tok_decode(const struct kv_tok *t, const uint32_t *ids, size_t n,
		  char **out, size_t *len);

/* Every id t can give (its vocabulary's, its added tokens', its
 * template's) below vocab, the model's tokens, whose names where that
 * count comes from ("config.json's vocab_size"): 0, or KV_EINVAL with
 * "tokenizer.json: model.vocab: 'piece' is id N, not below the V tokens
 * of WHOSE" in err. Run it where a tokenizer meets its model, so that no
 * text ever encodes to an id the model has no row for. */
int kv_tok_check(const struct kv_tok *t, uint64_t vocab, const char *whose,
		 char *err);

/* Ids run from 0 to this, less one. */
uint32_t kv_tok_size(const struct kv_tok *t);

void kv_tok_free(struct kv_tok *t);

#endif
