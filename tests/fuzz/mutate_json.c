/*
 * mutate_json.c - the generic half of the JSON tree mutators
 * (mutate_json.h): a byte-level fuzzer rarely makes a well-formed file
 * with one field of the wrong kind, which is what users' files get wrong;
 * these operations do little else:
 *
 *   - a key deleted, or a value swapped for another kind ([], {}, "x", 5,
 *     true, null, a list of numbers, a list of layer kinds);
 *   - a number set to an edge (0, -1, 2^31, 2^53, 2^64, 1e308, ...) or a
 *     NaN-like string ("NaN", "Infinity", "1e999");
 *   - a list shortened, lengthened, emptied or doubled;
 *   - (crossover) a member of another input put into this one.
 *
 * The format's own mutator adds what knows its fields, and the entry
 * points. The generator's state lives here (mutate.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mutate_json.h"

uint64_t rng_state;

#define BOM "\xEF\xBB\xBF"

void mj_collect(cJSON *parent, struct mj_nodes *ns)
{
	cJSON *it;
	cJSON_ArrayForEach(it, parent)
	{
		if (ns->n == MJ_MAX_NODES)
			return;
		ns->item[ns->n] = it;
		ns->parent[ns->n++] = parent;
		if (cJSON_IsArray(it) || cJSON_IsObject(it))
			mj_collect(it, ns);
	}
}

cJSON *mj_parse(const uint8_t *data, size_t size, bool *bom)
{
	bool b = size >= 3 && !memcmp(data, BOM, 3);
	if (bom)
		*bom = b;
	if (b) {
		data += 3;
		size -= 3;
	}
	/* an escaped NUL kept as MJ_NUL, so that it prints back */
	char *s = malloc(size ? size : 1);
	size_t n = 0;
	if (!s)
		return NULL;
	for (size_t i = 0; i < size; i++) {
		if (i + 6 <= size && !memcmp(data + i, "\\u0000", 6)) {
			memcpy(s + n, MJ_NUL, 3);
			n += 3;
			i += 5;
		} else {
			s[n++] = (char)data[i];
		}
	}
	cJSON *root = cJSON_ParseWithLength(s, n);
	free(s);
	return root;
}

size_t mj_emit(const cJSON *root, uint8_t *out, size_t max, bool bom)
{
	char *s = cJSON_PrintUnformatted(root);
	size_t k = 0;
	if (!s)
		return 0;
	if (bom && max >= 3) {
		memcpy(out, BOM, 3);
		k = 3;
	}
	for (const char *p = s; *p; p++) {
		/* byte by byte: the string may end before three */
		bool nul = p[0] == MJ_NUL[0] && p[1] == MJ_NUL[1] &&
			   p[2] == MJ_NUL[2];
		size_t w = nul ? 6 : 1;
		if (k + w > max) {
			free(s);
			return 0;
		}
		if (nul) {
			memcpy(out + k, "\\u0000", 6);
			p += 2;
		} else {
			out[k] = (uint8_t)*p;
		}
		k += w;
	}
	free(s);
	return k;
}

static const double EDGES[] = {
	0, -1, 1, 2, 3, 7, 64, 65536, 2147483647.0, 2147483648.0,
	4294967296.0, 9007199254740992.0, 9007199254740993.0,
	18446744073709551616.0, 1e308, -1e308, 0.5, 1e-300, -0.0, 1e19};
static const char *const STRINGS[] = {
	"NaN", "Infinity", "-Infinity", "1e999", "0x10", "", "x",
	"full_attention", "sliding_attention", "mamba", "auto", "bfloat16",
	"float8_e4m3fn", "Mamba2", "llama", "gemma3", "mamba"};

cJSON *mj_edge_number(void)
{
	return cJSON_CreateNumber(PICK(EDGES));
}

cJSON *mj_any_value(void)
{
	switch (rnd(11)) {
	case 0: return cJSON_CreateArray();
	case 1: return cJSON_CreateObject();
	case 2: return cJSON_CreateString(PICK(STRINGS));
	case 3: return mj_edge_number();
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

cJSON *mj_raw(const char *text)
{
	return cJSON_CreateRaw(text);
}

cJSON *mj_odd_number(double v)
{
	static const char *const FORMS[] = {"%.0f.0", "%.0fe0", "%.0f.0e0",
					    "%.0fE+0", "%.0f.5", "%.0f.000"};
	char buf[64];
	if (v == floor(v) && fabs(v) < 1e17)
		snprintf(buf, sizeof buf, PICK(FORMS), v);
	else
		snprintf(buf, sizeof buf, "%.17g", v);
	return mj_raw(buf);
}

void mj_replace(cJSON *parent, cJSON *old, cJSON *with)
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

void mj_set(cJSON *o, const char *k, cJSON *v)
{
	if (!v)
		return;
	/* k may be the key of the member it replaces: copied first */
	char *key = cJSON_IsObject(o) ? strdup(k) : NULL;
	if (!key) {
		cJSON_Delete(v);
		return;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	cJSON_AddItemToObject(o, key, v);
	free(key);
}

void mj_relength(cJSON *a)
{
	int n = cJSON_GetArraySize(a);
	switch (rnd(4)) {
	case 0:
		if (n)
			cJSON_DeleteItemFromArray(a, (int)rnd((uint32_t)n));
		break;
	case 1: {
		const cJSON *it = cJSON_GetArrayItem(a, (int)rnd((uint32_t)n));
		if (n)
			cJSON_AddItemToArray(a, cJSON_Duplicate(it, true));
		else
			cJSON_AddItemToArray(a, cJSON_CreateNumber(1));
		break;
	}
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

bool mj_mutate(cJSON *root)
{
	static struct mj_nodes ns;
	ns.n = 0;
	mj_collect(root, &ns);
	if (!ns.n)
		return false;
	size_t i = rnd((uint32_t)ns.n);
	cJSON *it = ns.item[i], *parent = ns.parent[i];
	switch (rnd(7)) {
	case 0: /* delete */
		cJSON_Delete(cJSON_DetachItemViaPointer(parent, it));
		break;
	case 1: case 2: /* another kind */
		mj_replace(parent, it, mj_any_value());
		break;
	case 3: case 4: { /* a number's edge, at a number when there is one */
		for (size_t k = 0; k < ns.n && !cJSON_IsNumber(it); k++) {
			size_t j = (i + k) % ns.n;
			it = ns.item[j];
			parent = ns.parent[j];
		}
		if (rnd(5))
			mj_replace(parent, it, mj_edge_number());
		else
			mj_replace(parent, it,
				   cJSON_CreateString(STRINGS[rnd(5)]));
		break;
	}
	default: /* a list's length, at a list when there is one */
		for (size_t k = 0; k < ns.n && !cJSON_IsArray(it); k++)
			it = ns.item[(i + k) % ns.n];
		if (cJSON_IsArray(it))
			mj_relength(it);
		else
			mj_replace(parent, ns.item[i], mj_any_value());
	}
	return true;
}

bool mj_odd_somewhere(cJSON *root)
{
	static struct mj_nodes ns;
	ns.n = 0;
	mj_collect(root, &ns);
	for (size_t k = 0, i = rnd((uint32_t)ns.n); k < ns.n; k++) {
		size_t j = (i + k) % ns.n;
		if (cJSON_IsNumber(ns.item[j])) {
			mj_replace(ns.parent[j], ns.item[j],
				   mj_odd_number(ns.item[j]->valuedouble));
			return true;
		}
	}
	return false;
}

bool mj_cross(cJSON *a, const cJSON *b)
{
	static struct mj_nodes na, nb;
	na.n = nb.n = 0;
	if (!cJSON_IsObject(a) || !cJSON_IsObject(b))
		return false;
	mj_collect(a, &na);
	mj_collect((cJSON *)b, &nb);
	if (!nb.n)
		return false;
	const cJSON *from = nb.item[rnd((uint32_t)nb.n)];
	cJSON *to = a;
	if (rnd(4) == 0 && na.n) {
		cJSON *o = na.item[rnd((uint32_t)na.n)];
		if (cJSON_IsObject(o))
			to = o;
	}
	if (!from->string)
		return false;
	mj_set(to, from->string, cJSON_Duplicate(from, true));
	return true;
}

int mj_count(const cJSON *o)
{
	return cJSON_IsArray(o) || cJSON_IsObject(o) ? cJSON_GetArraySize(o)
						     : 0;
}

cJSON *mj_member(const cJSON *o)
{
	int n = mj_count(o);
	return n ? cJSON_GetArrayItem(o, (int)rnd((uint32_t)n)) : NULL;
}

size_t mj_mutator(uint8_t *data, size_t size, size_t max_size,
		  unsigned int seed, void (*mutate)(cJSON *root))
{
	bool bom;
	rng_state = seed;
	cJSON *root = mj_parse(data, size, &bom);
	if (!root || rnd(20) == 0) { /* now and then, bytes */
		cJSON_Delete(root);
		return LLVMFuzzerMutate(data, size, max_size);
	}
	for (uint32_t k = 0, n = 1 + rnd(3); k < n; k++)
		mutate(root);
	if (rnd(32) == 0)
		bom = !bom;
	size_t out = mj_emit(root, data, max_size, bom);
	cJSON_Delete(root);
	return out ? out : LLVMFuzzerMutate(data, size, max_size);
}

size_t mj_crossover(const uint8_t *d1, size_t s1, const uint8_t *d2,
		    size_t s2, uint8_t *out, size_t max_out, unsigned int seed)
{
	rng_state = seed;
	cJSON *a = mj_parse(d1, s1, NULL), *b = mj_parse(d2, s2, NULL);
	size_t n = mj_cross(a, b) ? mj_emit(a, out, max_out, false) : 0;
	cJSON_Delete(a);
	cJSON_Delete(b);
	if (!n && s1 <= max_out) {
		memcpy(out, d1, s1);
		n = s1;
	}
	return n;
}
