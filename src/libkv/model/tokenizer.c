/*
 * tokenizer.c - BPE tokenizers from tokenizer.json (tokenizer.h): the
 * vocabulary and merges in hash tables, a text encoded as token ids by
 * merging each piece's symbols lowest rank first (a heap of candidate
 * pairs, so a long text costs n log n), and ids decoded back to bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/json.h"
#include "kv/model.h"
#include "kv/tokenizer.h"
#include "pretok.h"

#define MAX_TOKENS (1u << 24)          /* ids below 16 Mi */
#define MAX_FILE (512u << 20)          /* tokenizer.json at most */
#define META "\xE2\x96\x81"            /* U+2581, SentencePiece's space */

enum style { BYTELEVEL, SENTENCEPIECE };

struct merge {
	uint64_t key;  /* left id << 32 | right id, + 1 (0: empty) */
	uint32_t rank; /* the lower, the earlier merged */
	uint32_t id;   /* the merged token */
};

struct added {
	char *s; /* its content, matched in a text (owned) */
	uint32_t len, id;
};

struct kv_tok {
	enum style style;
	enum kv_pretok pretok;
	bool prefix_space;   /* byte-level: a space before the text */
	bool prepend_all;    /* SentencePiece: U+2581 before every piece
			      * between added tokens, not the first alone */
	bool byte_fallback;  /* SentencePiece: <0xXX> for bytes */
	bool ignore_merges;  /* a piece in the vocabulary is one token */
	uint32_t unk;        /* UINT32_MAX: none */
	char **str;          /* (n) each id's text as stored (NULL: none) */
	uint32_t *len;
	uint32_t n;
	uint32_t *slot;      /* text -> id + 1, open addressing */
	uint32_t mask;
	struct merge *merges;
	uint64_t mmask;
	uint32_t byte_id[256]; /* the token of each byte */
	uint32_t b2u[256];     /* byte-level alphabet: byte -> code point */
	uint16_t u2b[324];     /* byte-level alphabet: code point -> byte
				* + 1 (0: not one of its characters) */
	struct added *add;     /* longest first */
	size_t nadd;
	bool starts[256];      /* the first bytes of added tokens */
	uint32_t bos[4];
	size_t nbos;
	char *path; /* the file it was read from, for messages */
};

/* --- the tables --- */

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

static uint32_t lookup(const struct kv_tok *t, const char *s, size_t n)
{
	for (uint64_t i = hash(s, n) & t->mask;; i = (i + 1) & t->mask) {
		uint32_t v = t->slot[i];
		if (!v)
			return UINT32_MAX;
		if (t->len[v - 1] == n && !memcmp(t->str[v - 1], s, n))
			return v - 1;
	}
}

static void insert(struct kv_tok *t, uint32_t id)
{
	uint64_t i = hash(t->str[id], t->len[id]) & t->mask;
	while (t->slot[i])
		i = (i + 1) & t->mask;
	t->slot[i] = id + 1;
}

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	return k ^ (k >> 33);
}

static const struct merge *merge_of(const struct kv_tok *t, uint32_t a,
				    uint32_t b)
{
	uint64_t key = ((uint64_t)a << 32 | b) + 1;
	for (uint64_t i = mix(key) & t->mmask;; i = (i + 1) & t->mmask) {
		if (!t->merges[i].key)
			return NULL;
		if (t->merges[i].key == key)
			return &t->merges[i];
	}
}

/* --- reading tokenizer.json --- */

static int bad(char *err, const char *path, const char *fmt, const char *a,
	       int code)
{
	char what[512];
	snprintf(what, sizeof what, fmt, a);
	snprintf(err, KV_ERRLEN, "%.400s: %s", path, what);
	return code;
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static bool is_type(const cJSON *o, const char *type)
{
	const cJSON *t = get(o, "type");
	return cJSON_IsString(t) && !strcmp(t->valuestring, type);
}

static const char *type_of(const cJSON *o)
{
	const cJSON *t = get(o, "type");
	return cJSON_IsString(t) ? t->valuestring : "?";
}

/* GPT-2's bytes as characters: the printable ones as themselves, the
 * others from U+0100 on, in order. */
static void byte_alphabet(uint32_t b2u[256])
{
	uint32_t next = 256;
	for (uint32_t b = 0; b < 256; b++)
		b2u[b] = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) ||
				 (b >= 0xAE)
			 ? b
			 : next++;
}

static size_t utf8_put(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* Sets id's text (a copy of s). */
static int set_str(struct kv_tok *t, uint32_t id, const char *s, size_t n)
{
	if (!(t->str[id] = malloc(n + 1)))
		return KV_ENOMEM;
	memcpy(t->str[id], s, n);
	t->str[id][n] = '\0';
	t->len[id] = (uint32_t)n;
	return 0;
}

/* The largest id of the vocabulary and of the added tokens, + 1. Ids are
 * whole numbers as the tokenizers library reads them (32.0 is not one),
 * and a token matches some bytes: an empty one would match nothing, and
 * a scan for it would never move on. */
static int count_ids(const cJSON *vocab, const cJSON *added, uint32_t *n,
		     const char *path, char *err)
{
	const cJSON *it;
	uint64_t id;
	*n = 0;
	cJSON_ArrayForEach(it, vocab)
	{
		if (!kv_json_whole(it, MAX_TOKENS - 1, &id))
			return bad(err, path, "model.vocab: '%.200s': not an "
				   "integer id below 16777216", it->string, KV_EINVAL);
		if (!*it->string)
			return bad(err, path, "model.vocab: %s", "an empty "
				   "token (\"\"), which matches no text",
				   KV_EINVAL);
		if (id + 1 > *n)
			*n = (uint32_t)id + 1;
	}
	cJSON_ArrayForEach(it, added)
	{
		const cJSON *c = get(it, "content");
		if (!kv_json_whole(get(it, "id"), MAX_TOKENS - 1, &id) ||
		    !cJSON_IsString(c))
			return bad(err, path, "added_tokens: %s", "each needs "
				   "an integer id below 16777216 and its "
				   "content",
				   KV_EINVAL);
		if (!*c->valuestring) {
			char num[24];
			snprintf(num, sizeof num, "%llu", (unsigned long long)id);
			return bad(err, path, "added_tokens: id %s: an empty "
				   "content, which matches no text", num,
				   KV_EINVAL);
		}
		if (id + 1 > *n)
			*n = (uint32_t)id + 1;
	}
	if (!*n)
		return bad(err, path, "model.vocab: %s", "empty", KV_EINVAL);
	return 0;
}

static int read_vocab(struct kv_tok *t, const cJSON *vocab, const char *path,
		      char *err)
{
	const cJSON *it;
	uint64_t cap = 2;
	while (cap < 2ULL * t->n)
		cap <<= 1;
	t->mask = (uint32_t)(cap - 1);
	if (!(t->slot = calloc(cap, sizeof *t->slot)))
		return KV_ENOMEM;
	cJSON_ArrayForEach(it, vocab)
	{
		uint32_t id = (uint32_t)it->valuedouble;
		size_t n = strlen(it->string);
		if (t->str[id])
			return bad(err, path, "model.vocab: %.200s: an id "
				   "another token has", it->string,
				   KV_EINVAL);
		if (lookup(t, it->string, n) != UINT32_MAX)
			return bad(err, path, "model.vocab: %.200s: twice",
				   it->string, KV_EINVAL);
		if (set_str(t, id, it->string, n))
			return KV_ENOMEM;
		insert(t, id);
	}
	return 0;
}

/* One merge: "a b", or ["a", "b"]. */
static int read_merge(struct kv_tok *t, const cJSON *m, uint32_t rank,
		      const char *path, char *err)
{
	char buf[1024], both[1024];
	const char *a, *b;
	size_t na, nb;
	if (cJSON_IsString(m)) {
		const char *sp = strchr(m->valuestring, ' ');
		if (!sp || sp == m->valuestring || !sp[1] ||
		    strchr(sp + 1, ' '))
			return bad(err, path, "model.merges: '%.200s': not "
				   "two tokens", m->valuestring, KV_EINVAL);
		a = m->valuestring;
		na = (size_t)(sp - a);
		b = sp + 1;
		nb = strlen(b);
	} else if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2 &&
		   cJSON_IsString(m->child) &&
		   cJSON_IsString(m->child->next)) {
		a = m->child->valuestring;
		b = m->child->next->valuestring;
		na = strlen(a);
		nb = strlen(b);
	} else {
		return bad(err, path, "model.merges: %s", "not a list of "
			   "pairs", KV_EINVAL);
	}
	if (na + nb >= sizeof both)
		return bad(err, path, "model.merges: %s", "a token too long",
			   KV_EINVAL);
	memcpy(both, a, na);
	memcpy(both + na, b, nb);
	uint32_t ia = lookup(t, a, na), ib = lookup(t, b, nb),
		 ic = lookup(t, both, na + nb);
	if (ia == UINT32_MAX || ib == UINT32_MAX || ic == UINT32_MAX) {
		snprintf(buf, sizeof buf, "%.*s %.*s", (int)(na < 100 ? na : 100),
			 a, (int)(nb < 100 ? nb : 100), b);
		return bad(err, path, "model.merges: '%.300s': a token not "
			   "in the vocabulary", buf, KV_EINVAL);
	}
	uint64_t key = ((uint64_t)ia << 32 | ib) + 1;
	for (uint64_t i = mix(key) & t->mmask;; i = (i + 1) & t->mmask) {
		if (t->merges[i].key == key)
			return 0; /* the first rank counts, as Transformers */
		if (!t->merges[i].key) {
			t->merges[i] = (struct merge){key, rank, ic};
			return 0;
		}
	}
}

static int read_merges(struct kv_tok *t, const cJSON *merges,
		       const char *path, char *err)
{
	int n = cJSON_GetArraySize(merges), e = 0;
	uint64_t cap = 2;
	uint32_t rank = 0;
	if (merges && !cJSON_IsArray(merges))
		return bad(err, path, "model.merges: %s", "not a list",
			   KV_EINVAL);
	while (cap < 2ULL * (uint64_t)(n > 0 ? n : 1))
		cap <<= 1;
	t->mmask = cap - 1;
	if (!(t->merges = calloc(cap, sizeof *t->merges)))
		return KV_ENOMEM;
	for (const cJSON *m = merges ? merges->child : NULL; m && !e;
	     m = m->next)
		e = read_merge(t, m, rank++, path, err);
	return e;
}

static int by_length(const void *x, const void *y)
{
	const struct added *a = x, *b = y;
	return a->len != b->len ? (a->len > b->len ? -1 : 1)
	       : a->id != b->id ? (a->id < b->id ? -1 : 1)
				: 0;
}

static int read_added(struct kv_tok *t, const cJSON *added)
{
	const cJSON *it;
	size_t n = (size_t)cJSON_GetArraySize(added);
	if (n && !(t->add = calloc(n, sizeof *t->add)))
		return KV_ENOMEM;
	/* found by its content, as the tokenizers library finds it: the
	 * vocabulary's id for a content in it, else the one written */
	cJSON_ArrayForEach(it, added)
	{
		uint32_t id = (uint32_t)get(it, "id")->valuedouble;
		const char *c = get(it, "content")->valuestring;
		size_t len = strlen(c);
		uint32_t v = lookup(t, c, len);
		struct added *a = &t->add[t->nadd];
		if (v != UINT32_MAX)
			id = v;
		else if (!t->str[id] && set_str(t, id, c, len))
			return KV_ENOMEM;
		if (!(a->s = malloc(len + 1)))
			return KV_ENOMEM;
		memcpy(a->s, c, len + 1);
		a->len = (uint32_t)len;
		a->id = id;
		t->nadd++;
		t->starts[(unsigned char)c[0]] = true;
	}
	if (t->nadd)
		qsort(t->add, t->nadd, sizeof *t->add, by_length);
	return 0;
}

/* The byte-level patterns a Split pre-tokenizer may carry. */
static const struct {
	const char *re;
	enum kv_pretok p;
} PATTERNS[] = {
	{"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|"
	 "\\s+(?!\\S)|\\s+",
	 KV_PRETOK_GPT2},
	{"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
	 "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
	 "\\s+(?!\\S)|\\s+",
	 KV_PRETOK_LLAMA3},
	{"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
	 " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
	 KV_PRETOK_QWEN2},
};

/* One pre-tokenizer of the list (Sequence) or the only one. */
static int pretok_one(struct kv_tok *t, const cJSON *p, const char *path,
		      char *err)
{
	if (is_type(p, "ByteLevel")) {
		t->style = BYTELEVEL;
		t->prefix_space = cJSON_IsTrue(get(p, "add_prefix_space"));
		if (!cJSON_IsFalse(get(p, "use_regex")))
			t->pretok = KV_PRETOK_GPT2;
		return 0;
	}
	if (is_type(p, "Metaspace")) {
		const cJSON *r = get(p, "replacement"), *s = get(p, "split");
		const cJSON *ps = get(p, "prepend_scheme");
		if (!cJSON_IsString(r) || strcmp(r->valuestring, META) ||
		    cJSON_IsTrue(s) ||
		    (cJSON_IsString(ps) && strcmp(ps->valuestring, "first") &&
		     strcmp(ps->valuestring, "always")))
			return bad(err, path, "pre_tokenizer: %s", "a Metaspace "
				   "other than U+2581, unsplit, prepended",
				   KV_EUNSUP);
		t->style = SENTENCEPIECE;
		t->prepend_all = cJSON_IsString(ps) &&
				 !strcmp(ps->valuestring, "always");
		return 0;
	}
	if (is_type(p, "Split")) {
		const cJSON *re = get(get(p, "pattern"), "Regex");
		for (size_t i = 0; cJSON_IsString(re) &&
				   i < sizeof PATTERNS / sizeof *PATTERNS;
		     i++)
			if (!strcmp(re->valuestring, PATTERNS[i].re)) {
				t->pretok = PATTERNS[i].p;
				return 0;
			}
		return bad(err, path, "pre_tokenizer: Split: %.300s: a pattern "
			   "kvtools does not run (GPT-2's, Llama 3's, "
			   "Qwen2's)",
			   cJSON_IsString(re) ? re->valuestring : "no Regex",
			   KV_EUNSUP);
	}
	return bad(err, path, "pre_tokenizer: '%.100s': not one kvtools runs "
		   "(ByteLevel, Split, Metaspace)", type_of(p), KV_EUNSUP);
}

static int read_pretok(struct kv_tok *t, const cJSON *p, const char *path,
		       char *err)
{
	int e = 0;
	if (!p || cJSON_IsNull(p))
		return 0;
	if (!is_type(p, "Sequence"))
		return pretok_one(t, p, path, err);
	for (const cJSON *q = get(p, "pretokenizers") ? get(p, "pretokenizers")
							      ->child
						      : NULL;
	     q && !e; q = q->next)
		e = pretok_one(t, q, path, err);
	return e;
}

/* Normalizers: none, NFC (texts already in NFC, as most are, read as
 * they are), or SentencePiece's U+2581 for every space and before the
 * text (Prepend and Replace). */
static int norm_one(struct kv_tok *t, const cJSON *n, const char *path,
		    char *err)
{
	if (is_type(n, "NFC"))
		return 0;
	if (is_type(n, "Prepend") && cJSON_IsString(get(n, "prepend")) &&
	    !strcmp(get(n, "prepend")->valuestring, META)) {
		t->style = SENTENCEPIECE;
		t->prepend_all = true;
		return 0;
	}
	if (is_type(n, "Replace") &&
	    cJSON_IsString(get(get(n, "pattern"), "String")) &&
	    !strcmp(get(get(n, "pattern"), "String")->valuestring, " ") &&
	    cJSON_IsString(get(n, "content")) &&
	    !strcmp(get(n, "content")->valuestring, META)) {
		t->style = SENTENCEPIECE;
		return 0;
	}
	return bad(err, path, "normalizer: '%.100s': not one kvtools runs "
		   "(NFC; Prepend and Replace of U+2581)", type_of(n),
		   KV_EUNSUP);
}

static int read_norm(struct kv_tok *t, const cJSON *n, const char *path,
		     char *err)
{
	int e = 0;
	if (!n || cJSON_IsNull(n))
		return 0;
	if (!is_type(n, "Sequence"))
		return norm_one(t, n, path, err);
	for (const cJSON *q = get(n, "normalizers") ? get(n, "normalizers")
							      ->child
						    : NULL;
	     q && !e; q = q->next)
		e = norm_one(t, q, path, err);
	return e;
}

/* The special tokens a template puts before the text ("single"). */
static void read_template(struct kv_tok *t, const cJSON *p)
{
	if (is_type(p, "Sequence")) {
		const cJSON *q;
		cJSON_ArrayForEach(q, get(p, "processors"))
			read_template(t, q);
		return;
	}
	if (!is_type(p, "TemplateProcessing"))
		return;
	const cJSON *piece;
	cJSON_ArrayForEach(piece, get(p, "single"))
	{
		const cJSON *sp = get(get(piece, "SpecialToken"), "id");
		if (!cJSON_IsString(sp))
			break; /* the text: what follows it is not a prefix */
		const cJSON *ids = get(get(get(p, "special_tokens"),
					   sp->valuestring),
				       "ids"), *id;
		cJSON_ArrayForEach(id, ids)
			if (cJSON_IsNumber(id) && id->valuedouble >= 0 &&
			    id->valuedouble < t->n &&
			    t->nbos < sizeof t->bos / sizeof *t->bos)
				t->bos[t->nbos++] = (uint32_t)id->valuedouble;
	}
}

/* What encoding needs beyond the tables: each byte's token. */
static int byte_tokens(struct kv_tok *t, const char *path, char *err)
{
	uint32_t *b2u = t->b2u;
	char s[8];
	byte_alphabet(b2u);
	for (int b = 0; b < 256; b++) {
		if (t->style == BYTELEVEL) {
			t->u2b[b2u[b]] = (uint16_t)(b + 1);
			t->byte_id[b] = lookup(t, s, utf8_put(b2u[b], s));
			if (t->byte_id[b] == UINT32_MAX) {
				snprintf(s, sizeof s, "%02X", b);
				return bad(err, path, "model.vocab: lacks the "
					   "byte-level token of byte 0x%s", s,
					   KV_EINVAL);
			}
		} else {
			snprintf(s, sizeof s, "<0x%02X>", b);
			t->byte_id[b] = lookup(t, s, 6);
			if (t->byte_fallback && t->byte_id[b] == UINT32_MAX)
				return bad(err, path, "model.vocab: byte_fallback "
					   "without the token %s", s,
					   KV_EINVAL);
		}
	}
	return 0;
}

static int build(struct kv_tok *t, const cJSON *root, const char *path,
		 char *err)
{
	const cJSON *model = get(root, "model"), *added = get(root,
							      "added_tokens");
	const cJSON *vocab = get(model, "vocab"), *unk = get(model, "unk_token");
	int e;
	if (!cJSON_IsObject(model))
		return bad(err, path, "model: %s", "missing", KV_EINVAL);
	if (get(model, "type") && !is_type(model, "BPE"))
		return bad(err, path, "model.type: unknown model type '%.100s'; "
			   "kvtools runs BPE", type_of(model), KV_EUNSUP);
	if (!cJSON_IsObject(vocab))
		return bad(err, path, "model.vocab: %s", "not an object",
			   KV_EINVAL);
	if (added && !cJSON_IsArray(added))
		return bad(err, path, "added_tokens: %s", "not a list",
			   KV_EINVAL);
	if ((e = count_ids(vocab, added, &t->n, path, err)))
		return e;
	t->str = calloc(t->n, sizeof *t->str);
	t->len = calloc(t->n, sizeof *t->len);
	if (!t->str || !t->len)
		return KV_ENOMEM;
	t->byte_fallback = cJSON_IsTrue(get(model, "byte_fallback"));
	t->ignore_merges = cJSON_IsTrue(get(model, "ignore_merges"));
	t->style = t->byte_fallback ? SENTENCEPIECE : BYTELEVEL;
	if ((e = read_vocab(t, vocab, path, err)) ||
	    (e = read_merges(t, get(model, "merges"), path, err)) ||
	    (e = read_added(t, added)) ||
	    (e = read_norm(t, get(root, "normalizer"), path, err)) ||
	    (e = read_pretok(t, get(root, "pre_tokenizer"), path, err)))
		return e;
	t->unk = cJSON_IsString(unk)
			 ? lookup(t, unk->valuestring, strlen(unk->valuestring))
			 : UINT32_MAX;
	read_template(t, get(root, "post_processor"));
	return byte_tokens(t, path, err);
}

int kv_tok_parse(const char *json, size_t len, const char *path,
		 struct kv_tok **out, char *err)
{
	cJSON *root = NULL;
	struct kv_tok *t = calloc(1, sizeof *t);
	int e = t ? kv_json_read(json, len, path, &root, err) : KV_ENOMEM;
	*out = NULL;
	if (!e)
		e = build(t, root, path, err);
	if (!e && !(t->path = strdup(path)))
		e = KV_ENOMEM;
	cJSON_Delete(root);
	if (e == KV_ENOMEM)
		snprintf(err, KV_ERRLEN, "%.400s: out of memory", path);
	if (e) {
		kv_tok_free(t);
		return e;
	}
	*out = t;
	return 0;
}

int kv_tok_load(const char *path, struct kv_tok **out, char *err)
{
	char *text;
	size_t len;
	int e = kv_file_read(path, MAX_FILE, &text, &len, err);
	*out = NULL;
	if (!e)
		e = kv_tok_parse(text, len, path, out, err);
	free(text);
	return e;
}

int kv_tok_beside(const char *config_path, struct kv_tok **out, char *err)
{
	char p[4200];
	struct stat sb;
	*out = NULL;
	if (!kv_config_beside(config_path, "tokenizer.json", p, sizeof p) ||
	    stat(p, &sb))
		return 0;
	return kv_tok_load(p, out, err);
}

void kv_tok_free(struct kv_tok *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; t->str && i < t->n; i++)
		free(t->str[i]);
	free(t->str);
	free(t->len);
	free(t->slot);
	free(t->merges);
	for (size_t k = 0; k < t->nadd; k++)
		free(t->add[k].s);
	free(t->add);
	free(t->path);
	free(t);
}

static bool is_added(const struct kv_tok *t, uint32_t id);

int kv_tok_check(const struct kv_tok *t, uint64_t vocab, const char *whose,
		 char *err)
{
	for (uint64_t id = vocab; id < t->n; id++) {
		if (!t->str[id])
			continue;
		snprintf(err, KV_ERRLEN, "%.400s: %s: '%.100s' is id %llu, not "
			 "below the %llu tokens of %.300s", t->path,
			 is_added(t, (uint32_t)id) ? "added_tokens"
						   : "model.vocab",
			 t->str[id], (unsigned long long)id,
			 (unsigned long long)vocab, whose);
		return KV_EINVAL;
	}
	for (size_t k = 0; k < t->nbos; k++)
		if (t->bos[k] >= vocab) {
			snprintf(err, KV_ERRLEN, "%.400s: post_processor: the "
				 "special token %u, not below the %llu tokens "
				 "of %.300s", t->path, t->bos[k],
				 (unsigned long long)vocab, whose);
			return KV_EINVAL;
		}
	return 0;
}

uint32_t kv_tok_size(const struct kv_tok *t)
{
	return t->n;
}

/* --- encoding --- */

struct ids {
	uint32_t *v;
	size_t n, cap;
};

static int push(struct ids *o, uint32_t id)
{
	if (o->n == o->cap) {
		size_t nc = o->cap ? 2 * o->cap : 64;
		uint32_t *v = realloc(o->v, nc * sizeof *v);
		if (!v)
			return KV_ENOMEM;
		o->v = v;
		o->cap = nc;
	}
	o->v[o->n++] = id;
	return 0;
}

/* A candidate merge of the symbols at pos and the one after it. */
struct cand {
	uint32_t rank, pos;
};

static bool before(struct cand a, struct cand b)
{
	return a.rank != b.rank ? a.rank < b.rank : a.pos < b.pos;
}

struct heap {
	struct cand *c;
	size_t n;
};

static void heap_push(struct heap *h, struct cand x)
{
	size_t i = h->n++;
	while (i && before(x, h->c[(i - 1) / 2])) {
		h->c[i] = h->c[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->c[i] = x;
}

static struct cand heap_pop(struct heap *h)
{
	struct cand top = h->c[0], x = h->c[--h->n];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct cand best = x;
		if (l < h->n && before(h->c[l], best))
			m = l, best = h->c[l];
		if (l + 1 < h->n && before(h->c[l + 1], best))
			m = l + 1;
		if (m == i)
			break;
		h->c[i] = h->c[m];
		i = m;
	}
	if (h->n)
		h->c[i] = x;
	return top;
}

/* Merges the symbols id[0 .. n) lowest rank first, leftmost first among
 * equals, and appends what is left to out. */
static int bpe(const struct kv_tok *t, uint32_t *id, size_t n,
	       struct ids *out)
{
	size_t cap = n ? n : 1; /* malloc(0) may say NULL */
	size_t *next = malloc(cap * sizeof *next),
	       *prev = malloc(cap * sizeof *prev);
	/* n - 1 candidates to start, at most two more per merge */
	struct heap h = {malloc(3 * cap * sizeof *h.c), 0};
	int e = 0;
	if (!next || !prev || !h.c) {
		e = KV_ENOMEM;
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		next[i] = i + 1;
		prev[i] = i - 1; /* SIZE_MAX for the first */
		const struct merge *m = i + 1 < n ? merge_of(t, id[i], id[i + 1])
						  : NULL;
		if (m)
			heap_push(&h, (struct cand){m->rank, (uint32_t)i});
	}
	while (h.n) {
		struct cand c = heap_pop(&h);
		size_t i = c.pos, j = next[i];
		if (id[i] == UINT32_MAX || j >= n)
			continue;
		const struct merge *m = merge_of(t, id[i], id[j]);
		if (!m || m->rank != c.rank)
			continue; /* stale: a neighbour merged first */
		id[i] = m->id;
		id[j] = UINT32_MAX;
		next[i] = next[j];
		if (next[j] < n)
			prev[next[j]] = i;
		/* the pairs the new symbol makes with its neighbours */
		if (prev[i] != SIZE_MAX &&
		    (m = merge_of(t, id[prev[i]], id[i])))
			heap_push(&h, (struct cand){m->rank,
						    (uint32_t)prev[i]});
		if (next[i] < n && (m = merge_of(t, id[i], id[next[i]])))
			heap_push(&h, (struct cand){m->rank, (uint32_t)i});
	}
	for (size_t i = 0; i < n && !e; i = next[i])
		e = push(out, id[i]);
done:
	free(next);
	free(prev);
	free(h.c);
	return e;
}

/* One piece of byte-level text: its bytes' tokens, merged. */
static int bytelevel_piece(const struct kv_tok *t, const char *s, size_t n,
			   struct ids *out)
{
	uint32_t *id = malloc((n ? n : 1) * sizeof *id);
	int e;
	if (!id)
		return KV_ENOMEM;
	if (t->ignore_merges && n <= 256) {
		char buf[1024];
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			k += utf8_put(t->b2u[(unsigned char)s[i]], buf + k);
		uint32_t whole = lookup(t, buf, k);
		if (whole != UINT32_MAX) {
			free(id);
			return push(out, whole);
		}
	}
	for (size_t i = 0; i < n; i++)
		id[i] = t->byte_id[(unsigned char)s[i]];
	e = bpe(t, id, n, out);
	free(id);
	return e;
}

/* A piece of SentencePiece text (spaces already U+2581): each character
 * its token, or its bytes' (or unk), merged. */
static int sp_piece(const struct kv_tok *t, const char *s, size_t n,
		    struct ids *out)
{
	uint32_t *id = malloc((n ? n : 1) * sizeof *id);
	size_t k = 0;
	int e;
	if (!id)
		return KV_ENOMEM;
	for (size_t i = 0, w; i < n; i += w) {
		kv_utf8_at(s, n, i, &w);
		uint32_t v = lookup(t, s + i, w);
		if (v != UINT32_MAX)
			id[k++] = v;
		else if (t->byte_fallback)
			for (size_t b = 0; b < w; b++)
				id[k++] = t->byte_id[(unsigned char)s[i + b]];
		else if (t->unk != UINT32_MAX)
			id[k++] = t->unk;
	}
	e = bpe(t, id, k, out);
	free(id);
	return e;
}

/* Text between added tokens: normalised, cut into pieces, each merged. */
static int segment(const struct kv_tok *t, const char *s, size_t n,
		   bool first, struct ids *out)
{
	int e = 0;
	if (t->style == SENTENCEPIECE) {
		/* U+2581 before the text (the first piece, or every one)
		 * and for every space */
		size_t spaces = 0, k = 0;
		for (size_t i = 0; i < n; i++)
			spaces += s[i] == ' ';
		char *buf = malloc(n + 2 * spaces + 4);
		if (!buf)
			return KV_ENOMEM;
		if (first || t->prepend_all)
			memcpy(buf + k, META, 3), k += 3;
		for (size_t i = 0; i < n; i++)
			if (s[i] == ' ')
				memcpy(buf + k, META, 3), k += 3;
			else
				buf[k++] = s[i];
		e = sp_piece(t, buf, k, out);
		free(buf);
		return e;
	}
	char *buf = NULL;
	if (t->prefix_space && first && (!n || s[0] != ' ')) {
		if (!(buf = malloc(n + 1)))
			return KV_ENOMEM;
		buf[0] = ' ';
		memcpy(buf + 1, s, n);
		s = buf;
		n++;
	}
	for (size_t i = 0; i < n && !e;) {
		size_t end = kv_pretok_next(t->pretok, s, n, i), w;
		if (end <= i) { /* never: every code point is in a class */
			kv_utf8_at(s, n, i, &w);
			end = i + w;
		}
		e = bytelevel_piece(t, s + i, end - i, out);
		i = end;
	}
	free(buf);
	return e;
}

/* The added token at s[0 .. n) (the longest), or NULL. */
static const struct added *added_at(const struct kv_tok *t, const char *s,
				    size_t n)
{
	if (!t->starts[(unsigned char)s[0]])
		return NULL;
	for (size_t k = 0; k < t->nadd; k++)
		if (t->add[k].len <= n && !memcmp(s, t->add[k].s, t->add[k].len))
			return &t->add[k];
	return NULL;
}

int kv_tok_encode(const struct kv_tok *t, const char *text, size_t len,
		  bool bos, uint32_t **ids, size_t *n)
{
	struct ids out = {0};
	int e = 0;
	bool first = true;
	for (size_t k = 0; bos && k < t->nbos && !e; k++)
		e = push(&out, t->bos[k]);
	for (size_t i = 0, start = 0; i <= len && !e;) {
		const struct added *a = i < len ? added_at(t, text + i, len - i)
						: NULL;
		if (i < len && !a) {
			i++;
			continue;
		}
		if (i > start) {
			e = segment(t, text + start, i - start, first, &out);
			first = false;
		}
		if (a && !e)
			e = push(&out, a->id);
		if (!a)
			break;
		i += a->len;
		start = i;
	}
	if (e) {
		free(out.v);
		return e;
	}
	*ids = out.v;
	*n = out.n;
	return 0;
}

/* --- decoding --- */

static bool is_added(const struct kv_tok *t, uint32_t id)
{
	for (size_t k = 0; k < t->nadd; k++)
		if (t->add[k].id == id)
			return true;
	return false;
}

void kv_tok_piece(const struct kv_tok *t, uint32_t id, bool first, char *out,
		  size_t cap, size_t *len)
{
	const char *s = id < t->n ? t->str[id] : NULL;
	size_t n = s ? t->len[id] : 0, k = 0;
	*len = 0;
	if (!s || !cap)
		return;
	if (is_added(t, id)) {
		k = n < cap ? n : cap;
		memcpy(out, s, k);
	} else if (t->style == BYTELEVEL) {
		for (size_t i = 0, w; i < n && k < cap; i += w) {
			uint32_t cp = kv_utf8_at(s, n, i, &w);
			if (cp < 324 && t->u2b[cp])
				out[k++] = (char)(t->u2b[cp] - 1);
			else
				for (size_t b = 0; b < w && k < cap; b++)
					out[k++] = s[i + b];
		}
	} else if (t->byte_fallback && n == 6 && !memcmp(s, "<0x", 3) &&
		   s[5] == '>') {
		out[k++] = (char)strtoul(s + 3, NULL, 16);
	} else {
		for (size_t i = 0; i < n && k < cap;)
			if (n - i >= 3 && !memcmp(s + i, META, 3)) {
				if (!(first && k == 0))
					out[k++] = ' ';
				i += 3;
			} else {
				out[k++] = s[i++];
			}
	}
	*len = k;
}

int kv_tok_decode(const struct kv_tok *t, const uint32_t *ids, size_t n,
		  char **out, size_t *len)
{
	size_t cap = 64, k = 0;
	char *buf = malloc(cap + 1);
	bool first = true;
	for (size_t i = 0; i < n && buf; i++) {
		char piece[1024];
		size_t m;
		kv_tok_piece(t, ids[i], first, piece, sizeof piece, &m);
		/* SentencePiece strips one space from the text's start */
		first = first && (m == 0 || is_added(t, ids[i]));
		if (k + m > cap) {
			while (k + m > cap)
				cap *= 2;
			char *nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		memcpy(buf + k, piece, m);
		k += m;
	}
	if (!buf)
		return KV_ENOMEM;
	buf[k] = '\0';
	*out = buf;
	*len = k;
	return 0;
}
