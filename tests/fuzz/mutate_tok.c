/*
 * mutate_tok.c - libFuzzer's custom mutator for tokenizer.json
 * (fuzz_tok): the generic tree operations of mutate_json.c, and what a
 * tokenizer's own fields get wrong, each in a file that is otherwise
 * whole, so that the reader's checks and the encoder behind them are
 * reached:
 *
 *   - a vocabulary id set to another token's, to the vocabulary's size,
 *     to a huge or negative value, or written 7.0;
 *   - a vocabulary key that is empty or holds an escaped NUL;
 *   - an added token with empty content, with a vocabulary piece's
 *     content, with an id past the vocabulary (or another token's);
 *   - a merge naming a token not in the vocabulary, of one or three
 *     parts, as a list, repeated, whose two tokens make no token;
 *   - the pre_tokenizer, normalizer and post_processor swapped for others
 *     (ByteLevel, Metaspace, Split with each pattern tokenizer.c knows or
 *     another, Sequence, a type it does not know);
 *   - a template's special-token ids past the vocabulary, or five of them;
 *   - the model's type, byte_fallback, ignore_merges and unk_token.
 *
 * Crossover puts a member of another tokenizer into this one. Input that
 * is not JSON falls back to libFuzzer's byte mutations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mutate_json.h"

#define META "\xE2\x96\x81" /* U+2581, SentencePiece's space */

/* The byte-level patterns tokenizer.c runs (GPT-2's, Llama 3's,
 * Qwen2's), and one it does not. */
static const char *const PATTERNS[] = {
	"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|"
	"\\s+(?!\\S)|\\s+",
	"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
	"\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
	"\\s+(?!\\S)|\\s+",
	"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
	" ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
	"\\s+",
};
static const char *const ODD_KEYS[] = {
	"", MJ_NUL, ("a" MJ_NUL), (MJ_NUL "b"), "<s>", "<unk>", " ", META,
	"\xc4\xa0", "<0x00>", "<0xZZ>", "<0x0>", "\xff"};

static cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* The largest id of the vocabulary, + 1 (0 when none). */
static double vocab_size(const cJSON *vocab)
{
	const cJSON *it;
	double n = 0;
	cJSON_ArrayForEach(it, vocab)
		if (cJSON_IsNumber(it) && it->valuedouble + 1 > n)
			n = it->valuedouble + 1;
	return n;
}

/* An id for a token: another's, the size, past it, huge, negative. */
static cJSON *an_id(const cJSON *vocab)
{
	/* a large id read costs tables of its size (2^24 - 1, the largest,
	 * a second under the sanitizers): drawn seldom, 2^16 - 1 mostly */
	static const double HUGE_IDS[] = {
		65535, 16777216, 4294967295.0, 4294967296.0,
		9007199254740993.0, 1e300, -1, -2147483648.0, 0.5};
	static const double LARGE_IDS[] = {1048575, 16777215};
	double n = vocab_size(vocab);
	const cJSON *other = mj_member(vocab);
	switch (rnd(6)) {
	case 0:
		if (cJSON_IsNumber(other))
			return cJSON_CreateNumber(other->valuedouble);
		return cJSON_CreateNumber(0);
	case 1: return cJSON_CreateNumber(n);
	case 2: return cJSON_CreateNumber(n + 1 + rnd(1000));
	case 3:
		return cJSON_CreateNumber(rnd(32) ? PICK(HUGE_IDS)
						  : PICK(LARGE_IDS));
	case 4: return mj_odd_number(rnd(2) ? 7 : n ? n - 1 : 0);
	default: /* one below it */
		return cJSON_CreateNumber(
			n >= 1 && n < 16777216 ? rnd((uint32_t)n) : 0);
	}
}

/* A piece of the vocabulary (its key), or "x". */
static const char *a_piece(const cJSON *vocab)
{
	const cJSON *it = mj_member(vocab);
	return it && it->string ? it->string : "x";
}

static void op_vocab(cJSON *model)
{
	cJSON *vocab = get(model, "vocab"), *it = mj_member(vocab);
	char key[64];
	if (!cJSON_IsObject(vocab)) {
		mj_set(model, "vocab", cJSON_CreateObject());
		return;
	}
	switch (rnd(4)) {
	case 0: case 1: /* an id */
		if (it)
			mj_replace(vocab, it, an_id(vocab));
		break;
	case 2: /* an odd key */
		snprintf(key, sizeof key, "%s", PICK(ODD_KEYS));
		mj_set(vocab, key, rnd(2) ? an_id(vocab)
					  : cJSON_CreateNumber(
						    vocab_size(vocab)));
		break;
	default: /* a new token at the end, or past it */
		snprintf(key, sizeof key, "new%u", rnd(1000));
		mj_set(vocab, key,
		       cJSON_CreateNumber(vocab_size(vocab) +
					  (rnd(2) ? 0 : rnd(100))));
	}
}

static void op_added(cJSON *root, const cJSON *vocab)
{
	cJSON *added = get(root, "added_tokens");
	if (!cJSON_IsArray(added)) {
		added = cJSON_CreateArray();
		mj_set(root, "added_tokens", added);
		if (get(root, "added_tokens") != added)
			return;
	}
	if (rnd(4) == 0 && mj_count(added)) { /* an existing one's field */
		cJSON *a = mj_member(added);
		const char *c = rnd(2) ? "" : a_piece(vocab);
		if (rnd(2))
			mj_set(a, "id", an_id(vocab));
		else
			mj_set(a, "content", cJSON_CreateString(c));
		return;
	}
	cJSON *a = cJSON_CreateObject();
	const char *c;
	switch (rnd(5)) {
	case 0: c = ""; break;
	case 1: c = a_piece(vocab); break;
	case 2: c = "<|endoftext|>"; break;
	case 3: c = "x" MJ_NUL; break;
	default: c = rnd(2) ? "<s>" : "\n";
	}
	mj_set(a, "id", rnd(3) ? cJSON_CreateNumber(vocab_size(vocab) +
						    rnd(3))
			       : an_id(vocab));
	mj_set(a, "content", cJSON_CreateString(c));
	mj_set(a, "special", cJSON_CreateBool(rnd(2)));
	if (a && !cJSON_AddItemToArray(added, a))
		cJSON_Delete(a);
}

static void op_merges(cJSON *model, const cJSON *vocab)
{
	cJSON *m = get(model, "merges"), *v;
	char s[512];
	const char *a = a_piece(vocab), *b = a_piece(vocab);
	if (!cJSON_IsArray(m)) {
		mj_set(model, "merges", cJSON_CreateArray());
		return;
	}
	switch (rnd(8)) {
	case 0: /* a token not in the vocabulary */
		snprintf(s, sizeof s, "%.200s zzq%u", a, rnd(10));
		v = cJSON_CreateString(s);
		break;
	case 1: /* three parts, or one */
		if (rnd(2))
			snprintf(s, sizeof s, "%.150s %.150s %.150s", a, b, a);
		else
			snprintf(s, sizeof s, "%.200s", a);
		v = cJSON_CreateString(s);
		break;
	case 2: /* as a list, of two or three */
		v = cJSON_CreateArray();
		cJSON_AddItemToArray(v, cJSON_CreateString(a));
		cJSON_AddItemToArray(v, cJSON_CreateString(b));
		if (rnd(2))
			cJSON_AddItemToArray(v, cJSON_CreateString(a));
		break;
	case 3: /* spaces where they should not be */
		snprintf(s, sizeof s,
			 rnd(2) ? " %.200s %.200s" : "%.200s  %.200s", a, b);
		v = cJSON_CreateString(s);
		break;
	case 4: /* one repeated */
		v = cJSON_Duplicate(mj_member(m), true);
		break;
	case 5: /* two in the other order */
		if (mj_count(m) >= 2) {
			cJSON *x = cJSON_DetachItemFromArray(
				m, (int)rnd((uint32_t)mj_count(m)));
			if (x && !cJSON_InsertItemInArray(m, 0, x))
				cJSON_Delete(x);
		}
		return;
	case 6: /* two pieces whose join may be no token */
		snprintf(s, sizeof s, "%.200s %.200s", a, b);
		v = cJSON_CreateString(s);
		break;
	default: /* of another kind */
		v = mj_any_value();
	}
	if (v && !cJSON_AddItemToArray(m, v))
		cJSON_Delete(v);
}

static cJSON *pretok(int depth)
{
	cJSON *p = cJSON_CreateObject(), *l;
	switch (rnd(depth ? 5 : 6)) {
	case 0:
		mj_set(p, "type", cJSON_CreateString("ByteLevel"));
		mj_set(p, "add_prefix_space", cJSON_CreateBool(rnd(2)));
		mj_set(p, "trim_offsets", cJSON_CreateBool(rnd(2)));
		mj_set(p, "use_regex", cJSON_CreateBool(rnd(2)));
		break;
	case 1: {
		static const char *const SCHEMES[] = {"first", "always",
						      "never", ""};
		mj_set(p, "type", cJSON_CreateString("Metaspace"));
		mj_set(p, "replacement", cJSON_CreateString(rnd(4) ? META
								   : "_"));
		if (rnd(4))
			mj_set(p, "prepend_scheme",
			       cJSON_CreateString(PICK(SCHEMES)));
		mj_set(p, "split", cJSON_CreateBool(rnd(4) == 0));
		break;
	}
	case 2: case 3:
		mj_set(p, "type", cJSON_CreateString("Split"));
		l = cJSON_CreateObject();
		mj_set(l, rnd(6) ? "Regex" : "String",
		       cJSON_CreateString(PICK(PATTERNS)));
		mj_set(p, "pattern", l);
		mj_set(p, "behavior", cJSON_CreateString("Isolated"));
		mj_set(p, "invert", cJSON_CreateBool(false));
		break;
	case 4:
		mj_set(p, "type", cJSON_CreateString(rnd(2) ? "Whitespace"
							    : "Digits"));
		break;
	default:
		mj_set(p, "type", cJSON_CreateString("Sequence"));
		l = cJSON_CreateArray();
		for (uint32_t i = 0, n = rnd(4); i < n; i++)
			cJSON_AddItemToArray(l, pretok(depth + 1));
		mj_set(p, "pretokenizers", l);
	}
	return p;
}

static cJSON *normalizer(int depth)
{
	cJSON *p = cJSON_CreateObject(), *l;
	switch (rnd(depth ? 4 : 5)) {
	case 0:
		mj_set(p, "type", cJSON_CreateString(rnd(3) ? "NFC" : "NFKC"));
		break;
	case 1:
		mj_set(p, "type", cJSON_CreateString("Prepend"));
		mj_set(p, "prepend", cJSON_CreateString(rnd(4) ? META : " "));
		break;
	case 2:
		mj_set(p, "type", cJSON_CreateString("Replace"));
		l = cJSON_CreateObject();
		mj_set(l, rnd(4) ? "String" : "Regex",
		       cJSON_CreateString(rnd(4) ? " " : "\\s"));
		mj_set(p, "pattern", l);
		mj_set(p, "content", cJSON_CreateString(rnd(4) ? META : "_"));
		break;
	case 3:
		mj_set(p, "type", cJSON_CreateString("Lowercase"));
		break;
	default:
		mj_set(p, "type", cJSON_CreateString("Sequence"));
		l = cJSON_CreateArray();
		for (uint32_t i = 0, n = rnd(4); i < n; i++)
			cJSON_AddItemToArray(l, normalizer(depth + 1));
		mj_set(p, "normalizers", l);
	}
	return p;
}

/* A template whose special tokens (up to five) carry ids, some past the
 * vocabulary. */
static cJSON *processor(const cJSON *vocab, int depth)
{
	cJSON *p = cJSON_CreateObject(), *single, *sp, *l;
	if (depth == 0 && rnd(4) == 0) {
		mj_set(p, "type", cJSON_CreateString("Sequence"));
		l = cJSON_CreateArray();
		cJSON_AddItemToArray(l, processor(vocab, 1));
		if (rnd(2))
			cJSON_AddItemToArray(l, processor(vocab, 1));
		mj_set(p, "processors", l);
		return p;
	}
	if (rnd(6) == 0) {
		mj_set(p, "type",
		       cJSON_CreateString(rnd(2) ? "ByteLevel"
						 : "RobertaProcessing"));
		return p;
	}
	mj_set(p, "type", cJSON_CreateString("TemplateProcessing"));
	single = cJSON_CreateArray();
	sp = cJSON_CreateObject();
	for (uint32_t i = 0, n = 1 + rnd(5); i < n; i++) {
		char name[16];
		snprintf(name, sizeof name, "<s%u>", i);
		cJSON *s = cJSON_CreateObject(), *t = cJSON_CreateObject();
		mj_set(t, "id", cJSON_CreateString(name));
		mj_set(t, "type_id", cJSON_CreateNumber(0));
		mj_set(s, "SpecialToken", t);
		cJSON_AddItemToArray(single, s);
		cJSON *e = cJSON_CreateObject(), *ids = cJSON_CreateArray();
		cJSON_AddItemToArray(ids, an_id(vocab));
		if (rnd(4) == 0)
			cJSON_AddItemToArray(ids, an_id(vocab));
		mj_set(e, "id", cJSON_CreateString(name));
		mj_set(e, "ids", ids);
		mj_set(sp, name, e);
	}
	cJSON *seq = cJSON_CreateObject(), *a = cJSON_CreateObject();
	mj_set(a, "id", cJSON_CreateString("A"));
	mj_set(seq, "Sequence", a);
	cJSON_AddItemToArray(single, seq);
	mj_set(p, "single", single);
	mj_set(p, "special_tokens", sp);
	return p;
}

static void op_model(cJSON *model)
{
	static const char *const TYPES[] = {"BPE", "Unigram", "WordPiece",
					    "WordLevel", ""};
	switch (rnd(5)) {
	case 0:
		if (rnd(4))
			mj_set(model, "type", cJSON_CreateString(PICK(TYPES)));
		else
			cJSON_DeleteItemFromObjectCaseSensitive(model, "type");
		break;
	case 1:
		mj_set(model, "byte_fallback", cJSON_CreateBool(rnd(2)));
		break;
	case 2:
		mj_set(model, "ignore_merges", cJSON_CreateBool(rnd(2)));
		break;
	default:
		if (rnd(4))
			mj_set(model, "unk_token",
			       cJSON_CreateString(rnd(2) ? a_piece(get(model,
								       "vocab"))
							 : "<unk>"));
		else
			mj_set(model, "unk_token", mj_any_value());
	}
}

/* Replaces a part of the root by one of the kinds above or none. */
static void swap_part(cJSON *root, const char *k, cJSON *v)
{
	if (rnd(8) == 0) {
		cJSON_Delete(v);
		v = rnd(2) ? cJSON_CreateNull() : mj_any_value();
	}
	mj_set(root, k, v);
}

static void mutate(cJSON *root)
{
	cJSON *model = get(root, "model");
	const cJSON *vocab = get(model, "vocab");
	if (!cJSON_IsObject(model)) {
		mj_mutate(root);
		return;
	}
	switch (rnd(12)) {
	case 0: case 1: op_vocab(model); break;
	case 2: op_added(root, vocab); break;
	case 3: op_merges(model, vocab); break;
	case 4: swap_part(root, "pre_tokenizer", pretok(0)); break;
	case 5: swap_part(root, "normalizer", normalizer(0)); break;
	case 6: swap_part(root, "post_processor", processor(vocab, 0)); break;
	case 7: op_model(model); break;
	case 8: mj_odd_somewhere(root); break;
	default: mj_mutate(root);
	}
}

MJ_ENTRY_POINTS(mutate)
