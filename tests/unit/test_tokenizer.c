/*
 * test_tokenizer - BPE tokenizers read from tokenizer.json: a tiny
 * byte-level one (GPT-2's pattern, bytes as characters) and a tiny
 * SentencePiece-style one (U+2581 spaces, byte fallback, <s> from the
 * template), each text's ids worked by hand, decoded back; the patterns'
 * pieces one by one; and the refusals. "test_tokenizer encode FILE.json
 * TEXT..." prints each text's ids, and "decode" checks decode(encode(x))
 * = x, for scripts/ and tests/scripts/bpe.sh.
 */
#include <stdlib.h>

#include "kv/tokenizer.h"
#include "model/pretok.h"
#include "test.h"

static char json[65536];

/* GPT-2's byte alphabet, as kv's own (pretok's tests hold its pieces). */
static unsigned b2u(unsigned b)
{
	static unsigned map[256];
	if (!map['!']) {
		unsigned next = 256;
		for (unsigned x = 0; x < 256; x++)
			map[x] = (x >= '!' && x <= '~') ||
					 (x >= 0xA1 && x <= 0xAC) || x >= 0xAE
				 ? x
				 : next++;
	}
	return map[b];
}

/* A byte-level tokenizer: ids 0-255 the bytes, then Ġt (256), he (257),
 * Ġthe (258), er (259); <|endoftext|> (260) added. */
static const char *bytelevel(const char *extra)
{
	size_t k = (size_t)snprintf(json, sizeof json, "{%s\"model\":{\"type\":"
				    "\"BPE\",\"vocab\":{", extra);
	for (unsigned b = 0; b < 256; b++)
		k += (size_t)snprintf(json + k, sizeof json - k,
				      "\"\\u%04x\":%u,", b2u(b), b);
	snprintf(json + k, sizeof json - k,
		 "\"\\u0120t\":256,\"he\":257,\"\\u0120the\":258,\"er\":259},"
		 "\"merges\":[\"\\u0120 t\",\"h e\",\"\\u0120t he\",\"e r\"]},"
		 "\"added_tokens\":[{\"id\":260,\"content\":\"<|endoftext|>\","
		 "\"special\":true}],\"pre_tokenizer\":{\"type\":\"ByteLevel\","
		 "\"add_prefix_space\":false,\"use_regex\":true}}");
	return json;
}

static const char sp[] =
	"{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,"
	"\"unk_token\":\"<unk>\",\"vocab\":{\"<unk>\":0,\"<s>\":1,\"</s>\":2,"
	"%s\"\\u2581\":259,\"a\":260,\"b\":261,\"\\u2581a\":262,\"ab\":263,"
	"\"\\u2581ab\":264},\"merges\":[\"\\u2581 a\",\"a b\",\"\\u2581a b\"]},"
	"\"added_tokens\":[{\"id\":1,\"content\":\"<s>\",\"special\":true}],"
	"\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":["
	"{\"type\":\"Prepend\",\"prepend\":\"\\u2581\"},{\"type\":\"Replace\","
	"\"pattern\":{\"String\":\" \"},\"content\":\"\\u2581\"}]},"
	"\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":["
	"{\"SpecialToken\":{\"id\":\"<s>\",\"type_id\":0}},{\"Sequence\":"
	"{\"id\":\"A\",\"type_id\":0}}],\"special_tokens\":{\"<s>\":{\"id\":"
	"\"<s>\",\"ids\":[1],\"tokens\":[\"<s>\"]}}}}";

static const char *sentencepiece(void)
{
	char bytes[8192];
	size_t k = 0;
	for (unsigned b = 0; b < 256; b++)
		k += (size_t)snprintf(bytes + k, sizeof bytes - k,
				      "\"<0x%02X>\":%u,", b, 3 + b);
	snprintf(json, sizeof json, sp, bytes);
	return json;
}

static struct kv_tok *parse(const char *text)
{
	struct kv_tok *t = NULL;
	char err[KV_ERRLEN];
	if (kv_tok_parse(text, strlen(text), "tok.json", &t, err))
		fprintf(stderr, "%s\n", err);
	return t;
}

/* text's ids are want[0 .. n), and decode back to text (or back_to). */
static void encodes(const struct kv_tok *t, const char *text, bool bos,
		    const uint32_t *want, size_t n, const char *back_to)
{
	uint32_t *ids;
	size_t m;
	char *back;
	size_t len;
	CHECK(kv_tok_encode(t, text, strlen(text), bos, &ids, &m) == 0);
	CHECK_U64(m, n);
	for (size_t i = 0; i < n && i < m; i++)
		CHECK_U64(ids[i], want[i]);
	CHECK(kv_tok_decode(t, ids, m, &back, &len) == 0);
	CHECK_STR(back, back_to ? back_to : text);
	free(back);
	free(ids);
}

static void test_bytelevel(void)
{
	struct kv_tok *t = parse(bytelevel(""));
	CHECK(t != NULL);
	if (!t)
		return;
	CHECK_U64(kv_tok_size(t), 261);
	/* "the" "Ġother": t he; Ġ o t he r (he before er: rank 1 < 3) */
	encodes(t, "the other", false,
		(const uint32_t[]){'t', 257, ' ', 'o', 't', 257, 'r'}, 7, NULL);
	/* "Ġthe": Ġt first (rank 0), then Ġt he (rank 2) */
	encodes(t, " the", false, (const uint32_t[]){258}, 1, NULL);
	/* the added token is found in the text; é is two bytes */
	encodes(t, "é<|endoftext|>", false,
		(const uint32_t[]){0xC3, 0xA9, 260}, 3, NULL);
	char piece[8];
	size_t len;
	kv_tok_piece(t, 258, true, piece, sizeof piece, &len);
	CHECK(len == 4 && !memcmp(piece, " the", 4));
	kv_tok_piece(t, 999, false, piece, sizeof piece, &len);
	CHECK_U64(len, 0);
	kv_tok_free(t);
}

static void test_sentencepiece(void)
{
	struct kv_tok *t = parse(sentencepiece());
	CHECK(t != NULL);
	if (!t)
		return;
	/* "▁ab▁ab": ▁ a first at 0 and 3, then ▁a b; <s> before */
	encodes(t, "ab ab", true, (const uint32_t[]){1, 264, 264}, 3,
		"<s>ab ab");
	/* é is not in the vocabulary: its bytes, <0xC3> <0xA9> */
	encodes(t, "é", false, (const uint32_t[]){259, 3 + 0xC3, 3 + 0xA9}, 3,
		NULL);
	char piece[8];
	size_t len;
	kv_tok_piece(t, 264, true, piece, sizeof piece, &len);
	CHECK(len == 2 && !memcmp(piece, "ab", 2)); /* the first's space */
	kv_tok_piece(t, 264, false, piece, sizeof piece, &len);
	CHECK(len == 3 && !memcmp(piece, " ab", 3));
	kv_tok_free(t);
}

/* The pieces of each pattern, worked by hand. */
static void pieces(enum kv_pretok p, const char *s, const char *const *want)
{
	size_t n = strlen(s), i = 0, k = 0;
	while (i < n) {
		size_t e = kv_pretok_next(p, s, n, i);
		CHECK(want[k] != NULL);
		if (!want[k])
			return;
		if (e - i != strlen(want[k]) || memcmp(s + i, want[k], e - i))
			fprintf(stderr, "piece %zu: '%.*s', want '%s'\n", k,
				(int)(e - i), s + i, want[k]);
		CHECK(e - i == strlen(want[k]) &&
		      !memcmp(s + i, want[k], e - i));
		i = e;
		k++;
	}
	CHECK(want[k] == NULL);
}

static void test_patterns(void)
{
	/* GPT-2: a run of spaces leaves its last to the word after it, a
	 * newline before a word stands alone */
	pieces(KV_PRETOK_GPT2, "I'm  here:12 x\n\nyes  ",
	       (const char *const[]){"I", "'m", " ", " here", ":", "12", " x",
				     "\n", "\n", "yes", "  ", NULL});
	/* Llama 3: a punctuation mark joins the word after it, numbers in
	 * threes, newlines kept with what ends there, 'S any case */
	pieces(KV_PRETOK_LLAMA3, "(hello) 12345 IT'S\n  ok",
	       (const char *const[]){"(hello", ")", " ", "123", "45", " IT",
				     "'S", "\n", " ", " ok", NULL});
	pieces(KV_PRETOK_QWEN2, "a 123",
	       (const char *const[]){"a", " ", "1", "2", "3", NULL});
	pieces(KV_PRETOK_GPT2, "日本語 café",
	       (const char *const[]){"日本語", " café", NULL});
	CHECK(kv_uni_letter(0x65E5) && !kv_uni_letter('1'));
	CHECK(kv_uni_number(0x0663) && kv_uni_space(0x3000));
}

/* Refusals: each names the file and what it lacks. */
static void test_bad(void)
{
	static const struct {
		const char *json, *want;
	} cases[] = {
		{"{\"model\":{\"type\":\"Unigram\",\"vocab\":[]}}",
		 "tok.json: model.type: unknown model type 'Unigram'; "
		 "kvtools runs BPE"},
		{"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":0}}}",
		 "model.vocab: b: an id another token has"},
		{"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":"
		 "[\"a b\"]},\"pre_tokenizer\":null}",
		 "model.merges: 'a b': a token not in the vocabulary"},
		{"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":-1}}}",
		 "model.vocab: 'a': not an integer id below 16777216"},
		/* ids are integers, as the tokenizers library reads them */
		{"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0.0}}}",
		 "model.vocab: 'a': not an integer id below 16777216"},
		{"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},"
		 "\"added_tokens\":[{\"id\":1e0,\"content\":\"<s>\"}]}",
		 "added_tokens: each needs an integer id below 16777216"},
		/* a token of no bytes: a scan for it would never move on */
		{"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"\":0}}}",
		 "model.vocab: an empty token (\"\"), which matches no text"},
		{"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},"
		 "\"added_tokens\":[{\"id\":7,\"content\":\"\"}]}",
		 "added_tokens: id 7: an empty content, which matches no text"},
		{"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},"
		 "\"added_tokens\":[{\"id\":7,\"content\":\"\\u0000\"}]}",
		 "not JSON: a NUL (\\u0000) in a string"},
		{"\xEF\xBB\xBF{\"model\":{\"type\":\"BPE\",\"vocab\":{}}}",
		 "tok.json: not JSON: a UTF-8 byte-order mark"},
		{"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},"
		 "\"pre_tokenizer\":{\"type\":\"Whitespace\"}}",
		 "pre_tokenizer: 'Whitespace': not one kvtools runs"},
		{"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},"
		 "\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":"
		 "\"\\\\w+\"}}}",
		 "pre_tokenizer: Split: \\w+: a pattern kvtools does not run"},
		{"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},"
		 "\"normalizer\":{\"type\":\"NFKC\"}}",
		 "normalizer: 'NFKC': not one kvtools runs"},
		{"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0}},"
		 "\"pre_tokenizer\":{\"type\":\"ByteLevel\"}}",
		 "model.vocab: lacks the byte-level token of byte 0x00"},
		{"[1]", "model: missing"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct kv_tok *t = (struct kv_tok *)1;
		char err[KV_ERRLEN] = "";
		CHECK(kv_tok_parse(cases[i].json, strlen(cases[i].json),
				   "tok.json", &t, err) != 0);
		CHECK(t == NULL);
		if (!strstr(err, cases[i].want))
			fprintf(stderr, "case %zu: %s\n", i, err);
		CHECK_HAS(err, cases[i].want);
	}
}

/* Every id a tokenizer gives held to the model's vocabulary, naming the
 * piece; an added token found by its content, with the vocabulary's id
 * where the vocabulary has it (as the tokenizers library reads it). */
static void test_vocab(void)
{
	struct kv_tok *t = parse(bytelevel(""));
	char err[KV_ERRLEN];
	CHECK(t != NULL);
	if (!t)
		return;
	CHECK(kv_tok_check(t, 261, "config.json's vocab_size", err) == 0);
	CHECK(kv_tok_check(t, 260, "config.json's vocab_size", err) ==
	      KV_EINVAL);
	CHECK_STR(err, "tok.json: added_tokens: '<|endoftext|>' is id 260, "
		       "not below the 260 tokens of config.json's vocab_size");
	CHECK(kv_tok_check(t, 259, "--vocab", err) == KV_EINVAL);
	CHECK_STR(err, "tok.json: model.vocab: 'er' is id 259, not below the "
		       "259 tokens of --vocab");
	kv_tok_free(t);
	/* "<s>" written as id 9 is the vocabulary's 1 */
	const char *j = "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,"
			"\"<s>\":1}},\"added_tokens\":[{\"id\":9,\"content\":"
			"\"<s>\"}],\"pre_tokenizer\":{\"type\":\"Metaspace\","
			"\"replacement\":\"\\u2581\"}}";
	char err2[KV_ERRLEN];
	CHECK(kv_tok_parse(j, strlen(j), "tok.json", &t, err2) == 0);
	if (!t)
		return;
	uint32_t *ids;
	size_t n;
	CHECK(kv_tok_encode(t, "<s>", 3, false, &ids, &n) == 0);
	CHECK_U64(n, 1);
	CHECK_U64(ids[0], 1);
	free(ids);
	kv_tok_free(t);
}

/* encode FILE TEXT...: a line of ids per text; decode FILE TEXT...: exit
 * 1 unless each text decodes back to itself. */
static int tool(int argc, char **argv)
{
	struct kv_tok *t;
	char err[KV_ERRLEN];
	int status = 0;
	if (kv_tok_load(argv[2], &t, err)) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	for (int a = 3; a < argc; a++) {
		uint32_t *ids;
		size_t n, len;
		char *back;
		if (kv_tok_encode(t, argv[a], strlen(argv[a]), false, &ids,
				  &n))
			return 1;
		if (!strcmp(argv[1], "encode")) {
			for (size_t i = 0; i < n; i++)
				printf("%s%u", i ? " " : "", ids[i]);
			putchar('\n');
		} else if (kv_tok_decode(t, ids, n, &back, &len) ||
			   strcmp(back, argv[a])) {
			fprintf(stderr, "decode(encode('%s')) differs\n",
				argv[a]);
			status = 1;
		} else {
			free(back);
		}
		free(ids);
	}
	kv_tok_free(t);
	return status;
}

int main(int argc, char **argv)
{
	if (argc >= 3)
		return tool(argc, argv);
	test_bytelevel();
	test_sentencepiece();
	test_patterns();
	test_bad();
	test_vocab();
	return test_done("test_tokenizer");
}
