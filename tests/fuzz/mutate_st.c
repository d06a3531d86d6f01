/*
 * mutate_st.c - libFuzzer's custom mutator for whole safetensors files
 * (fuzz_st): the file taken apart into its header's tree and its data,
 * the tree changed, the file put back together. Bytes alone would break
 * the 8-byte length or the JSON almost every time and never reach the
 * checks of a header that parses; this makes files that are right but
 * for one thing, which is what a bad writer or a truncated download
 * gives. Besides the generic tree operations (mutate_json.c):
 *
 *   - a dtype swapped for another valid name, or one that is not ("f32",
 *     "Q4_0", "BF16" with an escaped NUL after it);
 *   - a shape dimension set to an edge (0, 2^32, 2^53 + 1, -1), a
 *     dimension added or removed, nine of them;
 *   - data_offsets shifted, swapped, made to overlap another tensor's, run
 *     past the end, of one or three numbers;
 *   - a tensor duplicated under another name, renamed with odd characters
 *     (empty, quotes, an escaped NUL, "__metadata__"), removed or moved;
 *   - __metadata__ of the wrong kinds (a list, a number, an object of
 *     numbers), missing or moved;
 *   - a shape's or an offset's number written 4.0 or 4e0;
 *   - a UTF-8 byte-order mark before the JSON;
 *   - the offsets laid out again from the shapes and dtypes, so that a
 *     changed shape or dtype still makes a file that tiles.
 *
 * Put back together, the length field is the header's most of the time
 * and wrong now and then (one off, 0, past the file, 2^64 - 1); the data
 * is grown or cut to where the tensors end (or not, or a few bytes off).
 * Crossover puts a tensor of another file into this one. A file whose
 * header is not JSON falls back to libFuzzer's byte mutations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mutate_json.h"

#define MAX_TENSORS 4096

static const char *const DTYPES[] = {
	"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2", "I64", "I32",
	"I16", "I8", "U64", "U32", "U16", "U8", "BOOL"};
static const uint32_t DTYPE_BYTES[] = {8, 4, 2, 2, 1, 1, 8, 4,
				       2, 1, 8, 4, 2, 1, 1};
static const char *const BAD_DTYPES[] = {
	"", "f32", "F32 ", " F32", "FP32", "F4", "I4", "F8_E4M3FNUZ",
	"F8_E8M0", "Q4_0", "float32", ("BF16" MJ_NUL), ("F16" MJ_NUL "x"),
	"C64", "F6_E3M2", "\xc3\xa9", "BF1", "BF166"};
static const double DIMS[] = {
	0, 1, 2, 3, 8, 255, 65536, 4294967295.0, 4294967296.0,
	2305843009213693952.0 /* 2^61 */, 9007199254740992.0,
	9007199254740993.0, 18446744073709551616.0, -1, 0.5, 1e300};
static const char *const NAMES[] = {
	"", " ", "\t", "a\"b", "\\", "\xc3\xa9", "\xf0\x9f\x98\x80", "a.b.c",
	"__metadata__", "__metadata", ("x" MJ_NUL), MJ_NUL,
	("w" MJ_NUL "eight"),
	"model.layers.0.self_attn.q_proj.weight", "wte.weight", "../x", "a/b",
	"\x7f"};

/* A file taken apart: its header's tree, the data after it. */
struct file {
	cJSON *h;
	bool bom;
	const uint8_t *data;
	size_t len;
};

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* d[0 .. size) into f; false when its header is not a JSON object (a
 * length past the file reads the rest as the header, and no data). */
static bool take_apart(const uint8_t *d, size_t size, struct file *f)
{
	uint64_t n;
	memset(f, 0, sizeof *f);
	if (size < 8)
		return false;
	n = le64(d);
	if (n <= size - 8) {
		f->h = mj_parse(d + 8, n, &f->bom);
		f->data = d + 8 + n;
		f->len = size - 8 - n;
	}
	if (!f->h) {
		f->h = mj_parse(d + 8, size - 8, &f->bom);
		f->data = NULL;
		f->len = 0;
	}
	if (!cJSON_IsObject(f->h)) {
		cJSON_Delete(f->h);
		f->h = NULL;
		return false;
	}
	return true;
}

static bool is_tensor(const cJSON *it)
{
	return cJSON_IsObject(it) && strcmp(it->string, "__metadata__");
}

/* The header's tensors into t (MAX_TENSORS at most): their count. */
static size_t tensors(const cJSON *h, cJSON **t)
{
	size_t n = 0;
	cJSON *it;
	cJSON_ArrayForEach(it, h)
		if (n < MAX_TENSORS && is_tensor(it))
			t[n++] = it;
	return n;
}

static cJSON *a_tensor(const cJSON *h)
{
	static cJSON *t[MAX_TENSORS];
	size_t n = tensors(h, t);
	return n ? t[rnd((uint32_t)n)] : NULL;
}

/* Its key to name (a copy). */
static void rename_member(cJSON *it, const char *name)
{
	char *k = strdup(name);
	if (!k)
		return;
	if (!(it->type & cJSON_StringIsConst))
		free(it->string);
	it->type &= ~cJSON_StringIsConst;
	it->string = k;
}

/* The element size of a tensor's dtype; 0 when it has none known. */
static uint32_t elem_bytes(const cJSON *t)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(t, "dtype");
	for (size_t i = 0; cJSON_IsString(d) && i < sizeof DTYPES /
							 sizeof *DTYPES;
	     i++)
		if (!strcmp(d->valuestring, DTYPES[i]))
			return DTYPE_BYTES[i];
	return 0;
}

/* Its bytes from its shape and dtype; false when they give none (or
 * more than cap). */
static bool tensor_bytes(const cJSON *t, uint64_t cap, uint64_t *bytes)
{
	const cJSON *sh = cJSON_GetObjectItemCaseSensitive(t, "shape"), *d;
	uint64_t b = elem_bytes(t);
	if (!b || !cJSON_IsArray(sh))
		return false;
	cJSON_ArrayForEach(d, sh)
	{
		if (!cJSON_IsNumber(d) || !(d->valuedouble >= 0) ||
		    d->valuedouble > (double)cap)
			return false;
		b *= (uint64_t)d->valuedouble;
		if (b > cap)
			return false;
	}
	*bytes = b;
	return true;
}

/* The offsets laid out again from the shapes and dtypes, in the
 * header's order, data_offsets of the others left as they are. */
static void retile(cJSON *h, uint64_t cap)
{
	static cJSON *t[MAX_TENSORS];
	size_t n = tensors(h, t);
	uint64_t at = 0, b;
	for (size_t i = 0; i < n; i++) {
		if (!tensor_bytes(t[i], cap, &b) || at + b > cap)
			continue;
		cJSON *off = cJSON_CreateArray();
		cJSON_AddItemToArray(off, cJSON_CreateNumber((double)at));
		cJSON_AddItemToArray(off, cJSON_CreateNumber((double)(at + b)));
		mj_set(t[i], "data_offsets", off);
		at += b;
	}
}

/* Where the tensors' data ends, by their offsets: false when no tensor
 * gives one below cap. */
static bool data_end(const cJSON *h, uint64_t cap, uint64_t *end)
{
	static cJSON *t[MAX_TENSORS];
	size_t n = tensors(h, t);
	bool any = false;
	*end = 0;
	for (size_t i = 0; i < n; i++) {
		const cJSON *off = cJSON_GetObjectItemCaseSensitive(
				    t[i], "data_offsets"),
			    *e = cJSON_GetArrayItem(off, 1);
		if (cJSON_IsNumber(e) && e->valuedouble >= 0 &&
		    e->valuedouble <= (double)cap) {
			any = true;
			if ((uint64_t)e->valuedouble > *end)
				*end = (uint64_t)e->valuedouble;
		}
	}
	return any;
}

static void op_dtype(cJSON *t)
{
	mj_set(t, "dtype",
	       cJSON_CreateString(rnd(3) ? PICK(DTYPES) : PICK(BAD_DTYPES)));
}

static void op_shape(cJSON *t)
{
	cJSON *sh = cJSON_GetObjectItemCaseSensitive(t, "shape");
	int n = mj_count(sh);
	if (!cJSON_IsArray(sh)) {
		mj_set(t, "shape", cJSON_CreateArray());
		return;
	}
	switch (rnd(5)) {
	case 0: /* a dimension at an edge */
		if (n)
			mj_replace(sh, mj_member(sh),
				   cJSON_CreateNumber(PICK(DIMS)));
		break;
	case 1: /* one more */
		cJSON_AddItemToArray(
			sh, cJSON_CreateNumber(rnd(2) ? 1 : PICK(DIMS)));
		break;
	case 2: /* one fewer */
		if (n)
			cJSON_DeleteItemFromArray(sh, (int)rnd((uint32_t)n));
		break;
	case 3: /* nine: one past KV_ST_MAX_DIMS */
		while (mj_count(sh) < 9)
			cJSON_AddItemToArray(sh, cJSON_CreateNumber(1));
		break;
	default: /* a scalar */
		while (mj_count(sh))
			cJSON_DeleteItemFromArray(sh, 0);
	}
}

static void op_offsets(cJSON *h, cJSON *t, uint64_t len)
{
	cJSON *off = cJSON_GetObjectItemCaseSensitive(t, "data_offsets");
	cJSON *b = cJSON_GetArrayItem(off, 0), *e = cJSON_GetArrayItem(off, 1);
	double vb = cJSON_IsNumber(b) ? b->valuedouble : 0;
	double ve = cJSON_IsNumber(e) ? e->valuedouble : 0;
	static const double SHIFT[] = {1, -1, 2, -2, 4, -4, 8, -8};
	double d = PICK(SHIFT);
	cJSON *o = NULL;
	const cJSON *other;
	switch (rnd(9)) {
	case 0: /* shifted */
		vb += d;
		ve += d;
		break;
	case 1: { /* swapped */
		double x = vb;
		vb = ve;
		ve = x;
		break;
	}
	case 2: /* the end alone moved */
		ve += d;
		break;
	case 3: /* overlapping another's */
		other = cJSON_GetObjectItemCaseSensitive(a_tensor(h),
							 "data_offsets");
		if (cJSON_IsNumber(cJSON_GetArrayItem(other, 0))) {
			double w = ve - vb;
			vb = cJSON_GetArrayItem(other, 0)->valuedouble +
			     (rnd(2) ? 0 : 1);
			ve = vb + w;
		}
		break;
	case 4: /* past the end */
		ve = (double)len + 1 + rnd(8);
		vb = rnd(2) ? vb : ve;
		break;
	case 5: /* one number, or three */
		o = cJSON_CreateArray();
		cJSON_AddItemToArray(o, cJSON_CreateNumber(vb));
		if (rnd(2)) {
			cJSON_AddItemToArray(o, cJSON_CreateNumber(ve));
			cJSON_AddItemToArray(o, cJSON_CreateNumber(ve));
		}
		break;
	case 6: /* an edge */
		if (rnd(2))
			vb = PICK(DIMS);
		else
			ve = PICK(DIMS);
		break;
	case 7: /* written oddly */
		o = cJSON_CreateArray();
		cJSON_AddItemToArray(o, rnd(2) ? mj_odd_number(vb)
					       : cJSON_CreateNumber(vb));
		cJSON_AddItemToArray(o, mj_odd_number(ve));
		break;
	default: /* of another kind */
		o = mj_any_value();
	}
	if (!o) {
		o = cJSON_CreateArray();
		cJSON_AddItemToArray(o, cJSON_CreateNumber(vb));
		cJSON_AddItemToArray(o, cJSON_CreateNumber(ve));
	}
	mj_set(t, "data_offsets", o);
}

/* A name no member of h has into out (400 bytes): name itself, or it
 * with a suffix; name may be out. */
static void fresh_name(const cJSON *h, const char *name, char *out)
{
	char base[400];
	snprintf(base, sizeof base, "%s", name);
	snprintf(out, 400, "%s", base);
	for (int k = 2; cJSON_GetObjectItemCaseSensitive(h, out) && k < 100;
	     k++)
		snprintf(out, 400, "%.200s.%d", base, k);
}

static void op_name(cJSON *h, cJSON *t)
{
	char name[400];
	const char *base = t->string;
	switch (rnd(4)) {
	case 0: { /* duplicated under another name */
		cJSON *c = cJSON_Duplicate(t, true);
		fresh_name(h, rnd(2) ? PICK(NAMES) : base, name);
		if (c)
			cJSON_AddItemToObject(h, name, c);
		break;
	}
	case 1: /* renamed, with odd characters */
		fresh_name(h, PICK(NAMES), name);
		rename_member(t, name);
		break;
	case 2: /* an escaped NUL in its name */
		snprintf(name, sizeof name, "%.200s%s%s", base, MJ_NUL,
			 rnd(2) ? "" : "x");
		fresh_name(h, name, name);
		rename_member(t, name);
		break;
	default: { /* a long name */
		size_t n = 1 + rnd(399);
		memset(name, 'a' + (int)rnd(26), n);
		name[n] = '\0';
		fresh_name(h, name, name);
		rename_member(t, name);
	}
	}
}

static void op_metadata(cJSON *h)
{
	cJSON *m = cJSON_GetObjectItemCaseSensitive(h, "__metadata__"), *v;
	switch (rnd(6)) {
	case 0: /* gone */
		cJSON_DeleteItemFromObjectCaseSensitive(h, "__metadata__");
		return;
	case 1: /* moved to the end (or the start) */
		if (m) {
			cJSON_DetachItemViaPointer(h, m);
			if (rnd(2))
				cJSON_AddItemToObject(h, "__metadata__", m);
			else if (!cJSON_InsertItemInArray(h, 0, m))
				cJSON_Delete(m); /* it keeps its key */
		}
		return;
	case 2: /* an object of a wrong kind of value */
		v = cJSON_CreateObject();
		cJSON_AddItemToObject(v, "format",
				      rnd(2) ? mj_any_value()
					     : cJSON_CreateString("pt"));
		if (rnd(2))
			cJSON_AddItemToObject(v, "total", mj_edge_number());
		break;
	case 3: /* an object of strings, valid */
		v = cJSON_CreateObject();
		cJSON_AddStringToObject(v, "format", "pt");
		break;
	default: /* not an object */
		v = mj_any_value();
	}
	mj_set(h, "__metadata__", v);
}

/* A shape's or an offset's number written 4.0 or 4e0. */
static void op_odd(cJSON *h, cJSON *t)
{
	const char *k = rnd(2) ? "shape" : "data_offsets";
	cJSON *l = cJSON_GetObjectItemCaseSensitive(t, k);
	cJSON *it = mj_member(l);
	if (cJSON_IsNumber(it))
		mj_replace(l, it, mj_odd_number(it->valuedouble));
	else
		mj_odd_somewhere(h);
}

static void op_move(cJSON *h, cJSON *t)
{
	cJSON_DetachItemViaPointer(h, t);
	if (rnd(2))
		cJSON_Delete(t); /* removed */
	else
		cJSON_AddItemToArray(h, t); /* last */
}

/* One change to f, a file of cap bytes at most. */
static void mutate(struct file *f, uint64_t cap)
{
	cJSON *t = a_tensor(f->h);
	uint32_t op = rnd(13);
	if (!t && op < 10 && op != 5 && op != 8)
		op = 11;
	switch (op) {
	case 0: op_dtype(t); break;
	case 1: op_shape(t); break;
	case 2: op_offsets(f->h, t, f->len); break;
	case 3: case 4: op_name(f->h, t); break;
	case 5: op_metadata(f->h); break;
	case 6: op_odd(f->h, t); break;
	case 7: op_move(f->h, t); break;
	case 8: retile(f->h, cap); return;
	case 9: /* the dtype's name with an escaped NUL */
		mj_set(t, "dtype", cJSON_CreateString(rnd(2) ? "F32" MJ_NUL
							     : MJ_NUL "F32"));
		break;
	case 10: f->bom = !f->bom; break;
	default: mj_mutate(f->h);
	}
	/* after a change of size, laid out again half the time */
	if (op <= 4 && rnd(2))
		retile(f->h, cap);
}

/* f as a file into out (max bytes): its length, 0 when the header does
 * not fit. */
static size_t assemble(const struct file *f, uint8_t *out, size_t max)
{
	static const uint64_t WRONG[] = {0, 1, 2, 7, 104857600, 104857601,
					 (uint64_t)1 << 63, UINT64_MAX};
	if (max < 8)
		return 0;
	size_t hn = mj_emit(f->h, out + 8, max - 8, f->bom);
	if (!hn)
		return 0;
	if (rnd(2)) /* padded to 8 bytes with spaces, as writers do */
		while (hn % 8 && 8 + hn < max)
			out[8 + hn++] = ' ';
	uint64_t end, dn = f->len;
	uint32_t how = rnd(8);
	if (how && data_end(f->h, max, &end))
		dn = end;
	if (how == 1) { /* a few bytes off */
		uint64_t d = 1 + rnd(8);
		dn = rnd(2) ? dn + d : dn > d ? dn - d : 0;
	}
	if (dn > max - 8 - hn)
		dn = max - 8 - hn; /* cut to fit */
	size_t keep = dn < f->len ? (size_t)dn : f->len;
	if (keep)
		memcpy(out + 8 + hn, f->data, keep);
	memset(out + 8 + hn + keep, 0, (size_t)dn - keep);
	uint64_t n = hn;
	switch (rnd(24)) { /* now and then, a wrong length */
	case 0: n = hn - 1; break;
	case 1: n = hn + 1; break;
	case 2: n = hn + dn + 1; break; /* past the file */
	case 3: n = hn + dn; break; /* the whole file, no data */
	case 4: n = PICK(WRONG); break;
	}
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(n >> (8 * i));
	return 8 + hn + (size_t)dn;
}

/* Into data (max_size bytes) from f: the file, or libFuzzer's byte
 * mutation of what was there (size bytes) when it does not fit. */
static size_t put(struct file *f, uint8_t *data, size_t size,
		  size_t max_size)
{
	/* the input's bytes (f->data points into them) are read while the
	 * output is written over them */
	uint8_t *copy = malloc(f->len ? f->len : 1);
	size_t out = 0;
	if (copy) {
		memcpy(copy, f->data ? f->data : copy, f->len);
		f->data = copy;
		out = assemble(f, data, max_size);
	}
	free(copy);
	cJSON_Delete(f->h);
	return out ? out : LLVMFuzzerMutate(data, size, max_size);
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	struct file f;
	rng_state = seed;
	if (rnd(20) == 0 || !take_apart(data, size, &f)) /* bytes */
		return LLVMFuzzerMutate(data, size, max_size);
	for (uint32_t k = 0, n = 1 + rnd(3); k < n; k++)
		mutate(&f, max_size);
	return put(&f, data, size, max_size);
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1,
				 const uint8_t *d2, size_t s2, uint8_t *out,
				 size_t max_out, unsigned int seed)
{
	struct file a, b;
	size_t n = 0;
	rng_state = seed;
	bool ok = take_apart(d1, s1, &a);
	if (ok && take_apart(d2, s2, &b)) {
		/* a tensor of b (mostly) into a, laid out again mostly */
		cJSON *t = a_tensor(b.h);
		if (t && rnd(4))
			mj_set(a.h, t->string, cJSON_Duplicate(t, true));
		else
			mj_cross(a.h, b.h);
		if (rnd(4))
			retile(a.h, max_out);
		n = assemble(&a, out, max_out);
		cJSON_Delete(b.h);
	}
	if (ok)
		cJSON_Delete(a.h);
	if (!n && s1 <= max_out) {
		memcpy(out, d1, s1);
		n = s1;
	}
	return n;
}
