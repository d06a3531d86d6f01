/*
 * mutate_json.h - the tree mutator the JSON-shaped inputs share (configs,
 * safetensors headers, tokenizer.json, the safetensors index): the input
 * parsed with cJSON, changed in the tree and printed back, so that a
 * well-formed file comes out with one thing wrong. This is the generic
 * part; each format's mutator (mutate_config.c, mutate_st.c,
 * mutate_tok.c, mutate_index.c) adds the operations that know its fields
 * and defines libFuzzer's entry points.
 *
 * Two things cJSON cannot hold are written by the printer instead: a
 * string or key holding MJ_NUL prints it as the escape \u0000 (C's
 * strings end at a NUL), and a raw item (mj_raw()) prints its text as it
 * is, for numbers written 4.0 or 4e0 that cJSON would print 4.
 */
#ifndef KV_MUTATE_JSON_H
#define KV_MUTATE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "mutate.h"

#define MJ_MAX_NODES 8192

/* U+FDD0, a noncharacter no real file holds: printed as \u0000. */
#define MJ_NUL "\xEF\xB7\x90"

/* Every item under a root, with its parent, in document order. */
struct mj_nodes {
	cJSON *item[MJ_MAX_NODES], *parent[MJ_MAX_NODES];
	size_t n;
};

void mj_collect(cJSON *parent, struct mj_nodes *ns);

/* The tree of data[0 .. size), a UTF-8 byte-order mark before it skipped
 * (*bom says whether there was one; NULL is fine); NULL when it is not
 * JSON. */
cJSON *mj_parse(const uint8_t *data, size_t size, bool *bom);

/* The tree printed into out, after a byte-order mark when bom: its
 * length, or 0 when it does not fit in max bytes. */
size_t mj_emit(const cJSON *root, uint8_t *out, size_t max, bool bom);

/* A value of a random kind ([], {}, "x", an edge number, true, null, a
 * list of numbers, ...). */
cJSON *mj_any_value(void);

/* A number at an edge (0, -1, 2^31, 2^53, 2^64, 1e308, ...). */
cJSON *mj_edge_number(void);

/* Text printed as it is: a number written oddly ("4.0", "4e0"), or a
 * string with escapes. The text is copied. */
cJSON *mj_raw(const char *text);

/* v written as a number that is not an integer's text: "v.0", "ve0",
 * "v.0e0", "vE+0" or "v.5" (v itself when it is not whole). */
cJSON *mj_odd_number(double v);

/* old's place in parent (and its key) to with, which parent then owns;
 * with NULL changes nothing. */
void mj_replace(cJSON *parent, cJSON *old, cJSON *with);

/* The member of object o at key k set to v (o owns it), replacing any. */
void mj_set(cJSON *o, const char *k, cJSON *v);

/* A list shorter, longer, empty or doubled. */
void mj_relength(cJSON *a);

/* One generic change at a random node: deleted, of another kind, a
 * number's edge, a list's length. false when the root has no nodes. */
bool mj_mutate(cJSON *root);

/* A number of the tree, chosen at random, written oddly (mj_odd_number);
 * false when there is none. */
bool mj_odd_somewhere(cJSON *root);

/* A random member (any depth) of b copied into a (its root mostly, a
 * random object of it now and then), replacing one of the same key.
 * false when either is not an object or b has no member. */
bool mj_cross(cJSON *a, const cJSON *b);

/* A random member of an object or list o, or NULL when it has none. */
cJSON *mj_member(const cJSON *o);

/* The members of an object or list o (0 for anything else). */
int mj_count(const cJSON *o);

/* libFuzzer's custom mutator for a JSON format: the input's tree changed
 * by mutate() one to three times (a byte-order mark put in or taken out
 * now and then) and printed back; bytes mutated now and then, and where
 * the input is not JSON. */
size_t mj_mutator(uint8_t *data, size_t size, size_t max_size,
		  unsigned int seed, void (*mutate)(cJSON *root));

/* libFuzzer's custom crossover for a JSON format: a member of the second
 * input put into the first (mj_cross), else the first as it is. */
size_t mj_crossover(const uint8_t *d1, size_t s1, const uint8_t *d2,
		    size_t s2, uint8_t *out, size_t max_out, unsigned int seed);

/* libFuzzer's two entry points of a JSON format whose own change of the
 * tree is mutate(root): mj_mutator() and mj_crossover(). */
#define MJ_ENTRY_POINTS(mutate)                                              \
	size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,           \
				       size_t max_size, unsigned int seed)   \
	{                                                                    \
		return mj_mutator(data, size, max_size, seed, mutate);       \
	}                                                                    \
	size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1,       \
					 const uint8_t *d2, size_t s2,       \
					 uint8_t *out, size_t max_out,       \
					 unsigned int seed)                  \
	{                                                                    \
		return mj_crossover(d1, s1, d2, s2, out, max_out, seed);     \
	}

#endif
