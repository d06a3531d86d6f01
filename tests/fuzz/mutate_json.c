/*
 * mutate_json.c - libFuzzer's custom mutator for configs: mutates the JSON
 * tree, not its bytes. A byte-level fuzzer rarely makes a well-formed config
 * with one field of the wrong kind, which is what users' configs get wrong;
 * this one does little else. Each mutation parses the input with cJSON,
 * changes one thing and prints the tree back:
 *
 *   - a key deleted, or a value swapped for another kind ([], {}, "x", 5,
 *     true, null, a list of numbers, a list of layer kinds);
 *   - a number set to an edge (0, -1, 2^31, 2^53, 2^64, 1e308, ...) or a
 *     NaN-like string ("NaN", "Infinity", "1e999");
 *   - a list shortened, lengthened, emptied or doubled;
 *   - text_config nested wrongly (the whole config inside it, a text_config
 *     that is not an object, one inside another, a field moved into it);
 *   - (crossover) a member of another config of the corpus put into this
 *     one, so the fields and model types of every family meet every other.
 *
 * Input that is not JSON falls back to libFuzzer's byte mutations.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mutate.h"

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1,
				 const uint8_t *d2, size_t s2, uint8_t *out,
				 size_t max_out, unsigned int seed);

#define MAX_NODES 8192

/* Every item under the root, with its parent, in document order. */
struct nodes {
	cJSON *item[MAX_NODES], *parent[MAX_NODES];
	size_t n;
};

static void collect(cJSON *parent, struct nodes *ns)
{
	cJSON *it;
	cJSON_ArrayForEach(it, parent)
	{
		if (ns->n == MAX_NODES)
			return;
		ns->item[ns->n] = it;
		ns->parent[ns->n++] = parent;
		if (cJSON_IsArray(it) || cJSON_IsObject(it))
			collect(it, ns);
	}
}

static const double EDGES[] = {
	0, -1, 1, 2, 3, 7, 64, 65536, 2147483647.0, 2147483648.0,
	4294967296.0, 9007199254740992.0, 9007199254740993.0,
	18446744073709551616.0, 1e308, -1e308, 0.5, 1e-300, -0.0, 1e19};
static const char *const STRINGS[] = {
	"NaN", "Infinity", "-Infinity", "1e999", "0x10", "", "x",
	"full_attention", "sliding_attention", "mamba", "auto", "bfloat16",
	"float8_e4m3fn", "Mamba2", "llama", "gemma3", "mamba"};

/* A value of a random kind. */
static cJSON *any_value(void)
{
	switch (rnd(11)) {
	case 0: return cJSON_CreateArray();
	case 1: return cJSON_CreateObject();
	case 2: return cJSON_CreateString(STRINGS[rnd(sizeof STRINGS /
						      sizeof *STRINGS)]);
	case 3: return cJSON_CreateNumber(EDGES[rnd(sizeof EDGES /
						    sizeof *EDGES)]);
	case 4: return cJSON_CreateBool(rnd(2));
	case 5: return cJSON_CreateNull();
	case 6: {
		int v[4] = {(int)rnd(4), (int)rnd(64), 1, 0};
		return cJSON_CreateIntArray(v, 1 + (int)rnd(4));
	}
	case 7: {
		const char *k[3] = {"full_attention", "sliding_attention",
				    "mamba"};
		cJSON *a = cJSON_CreateArray();
		for (uint32_t i = 0, n = rnd(6); a && i < n; i++)
			cJSON_AddItemToArray(a, cJSON_CreateString(k[rnd(3)]));
		return a;
	}
	case 8: {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "layer", 1);
		return o;
	}
	case 9: return cJSON_CreateNumber(5);
	default: return cJSON_CreateString("x");
	}
}

/* old's place in parent (and its key) to with, which parent then owns */
static void replace(cJSON *parent, cJSON *old, cJSON *with)
{
	if (!with)
		return;
	with->string = old->string; /* the key moves over, not copied */
	with->type |= old->type & cJSON_StringIsConst;
	old->string = NULL;
	if (!cJSON_ReplaceItemViaPointer(parent, old, with)) {
		old->string = with->string;
		with->string = NULL;
		cJSON_Delete(with);
	}
}

/* Changes a list's length: shorter, longer, empty or doubled. */
static void relength(cJSON *a)
{
	int n = cJSON_GetArraySize(a);
	switch (rnd(4)) {
	case 0:
		if (n)
			cJSON_DeleteItemFromArray(a, (int)rnd((uint32_t)n));
		break;
	case 1:
		if (n)
			cJSON_AddItemToArray(
				a, cJSON_Duplicate(cJSON_GetArrayItem(
							   a, (int)rnd((uint32_t)n)),
						   true));
		else
			cJSON_AddItemToArray(a, cJSON_CreateNumber(1));
		break;
	case 2:
		while (cJSON_GetArraySize(a))
			cJSON_DeleteItemFromArray(a, 0);
		break;
	default:
		for (int i = 0; i < n && i < 4096; i++)
			cJSON_AddItemToArray(
				a, cJSON_Duplicate(cJSON_GetArrayItem(a, i),
						   true));
	}
}

/* text_config where it should not be. Returns the new root. */
static cJSON *misnest(cJSON *root)
{
	cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "text_config");
	switch (rnd(4)) {
	case 0: { /* the whole config inside text_config */
		cJSON *w = cJSON_CreateObject();
		if (!w)
			return root;
		cJSON_AddItemToObject(w, "text_config", root);
		if (rnd(2))
			cJSON_AddStringToObject(w, "model_type", "llava");
		return w;
	}
	case 1: /* a text_config of another kind */
		if (t)
			replace(root, t, any_value());
		else
			cJSON_AddItemToObject(root, "text_config", any_value());
		return root;
	case 2: /* text_config inside text_config */
		if (cJSON_IsObject(t))
			cJSON_AddItemToObject(t, "text_config",
					      cJSON_Duplicate(t, true));
		return root;
	default: { /* a root field moved into text_config */
		int n = cJSON_GetArraySize(root);
		if (!n)
			return root;
		cJSON *f = cJSON_DetachItemFromArray(root, (int)rnd((uint32_t)n));
		if (f == t) { /* text_config itself: back where it was */
			cJSON_AddItemToArray(root, f);
			return root;
		}
		if (!cJSON_IsObject(t)) {
			t = cJSON_CreateObject();
			cJSON_AddItemToObject(root, "text_config", t);
		}
		if (t && f && f->string) {
			cJSON_DeleteItemFromObjectCaseSensitive(t, f->string);
			cJSON_AddItemToObject(t, f->string, f);
		} else {
			cJSON_Delete(f);
		}
		return root;
	}
	}
}

static cJSON *mutate(cJSON *root)
{
	static struct nodes ns;
	ns.n = 0;
	collect(root, &ns);
	uint32_t op = rnd(8);
	if (op == 7 || !ns.n)
		return misnest(root);
	size_t i = rnd((uint32_t)ns.n);
	cJSON *it = ns.item[i], *parent = ns.parent[i];
	switch (op) {
	case 0: /* delete */
		cJSON_Delete(cJSON_DetachItemViaPointer(parent, it));
		break;
	case 1: case 2: /* another kind */
		replace(parent, it, any_value());
		break;
	case 3: case 4: { /* a number's edge, at a number when there is one */
		for (size_t k = 0; k < ns.n && !cJSON_IsNumber(it); k++) {
			size_t j = (i + k) % ns.n;
			it = ns.item[j];
			parent = ns.parent[j];
		}
		if (rnd(5))
			replace(parent, it,
				cJSON_CreateNumber(EDGES[rnd(sizeof EDGES /
							     sizeof *EDGES)]));
		else
			replace(parent, it,
				cJSON_CreateString(STRINGS[rnd(5)]));
		break;
	}
	default: { /* a list's length, at a list when there is one */
		for (size_t k = 0; k < ns.n && !cJSON_IsArray(it); k++)
			it = ns.item[(i + k) % ns.n];
		if (cJSON_IsArray(it))
			relength(it);
		else
			replace(parent, ns.item[i], any_value());
	}
	}
	return root;
}

/* The tree printed into data, or 0 when it does not fit. */
static size_t emit(cJSON *root, uint8_t *data, size_t max_size)
{
	char *s = cJSON_PrintUnformatted(root);
	size_t n = s ? strlen(s) : 0;
	if (!s || n > max_size) {
		free(s);
		return 0;
	}
	memcpy(data, s, n);
	free(s);
	return n;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	rng_state = seed;
	cJSON *root = cJSON_ParseWithLength((const char *)data, size);
	if (!root || rnd(20) == 0) { /* now and then, bytes */
		cJSON_Delete(root);
		return LLVMFuzzerMutate(data, size, max_size);
	}
	for (uint32_t k = 0, n = 1 + rnd(3); k < n; k++)
		root = mutate(root);
	size_t out = emit(root, data, max_size);
	cJSON_Delete(root);
	return out ? out : LLVMFuzzerMutate(data, size, max_size);
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1,
				 const uint8_t *d2, size_t s2, uint8_t *out,
				 size_t max_out, unsigned int seed)
{
	rng_state = seed;
	cJSON *a = cJSON_ParseWithLength((const char *)d1, s1);
	cJSON *b = cJSON_ParseWithLength((const char *)d2, s2);
	size_t n = 0;
	static struct nodes na, nb;
	na.n = nb.n = 0;
	if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
		collect(a, &na);
		collect(b, &nb);
	}
	/* a member of b (any depth) into an object of a (the root, mostly) */
	if (nb.n) {
		cJSON *from = nb.item[rnd((uint32_t)nb.n)];
		cJSON *to = a;
		if (rnd(4) == 0 && na.n) {
			cJSON *o = na.item[rnd((uint32_t)na.n)];
			if (cJSON_IsObject(o))
				to = o;
		}
		if (from->string) {
			cJSON *dup = cJSON_Duplicate(from, true);
			cJSON_DeleteItemFromObjectCaseSensitive(to, from->string);
			if (dup)
				cJSON_AddItemToObject(to, from->string, dup);
		}
		n = emit(a, out, max_out);
	}
	cJSON_Delete(a);
	cJSON_Delete(b);
	if (!n && s1 <= max_out) {
		memcpy(out, d1, s1);
		n = s1;
	}
	return n;
}
