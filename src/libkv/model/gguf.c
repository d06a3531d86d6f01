/*
 * gguf.c - the header of a GGUF file, read strictly (gguf.h): ggml's own
 * reader (ggml/src/gguf.cpp) is the reference for what it accepts, and
 * every count and length is held to the bytes left in the file before
 * anything is allocated or skipped. The file is read through one buffer
 * of bounded reads at known offsets; the tensors' data is never touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kv/gguf.h"

#define BUF_BYTES (64u << 10)
#define MAX_KV (1u << 20)      /* keys; a model has a few dozen */
#define MAX_TENSORS (1u << 22) /* DeepSeek V3 unfused: ~92,000 */
#define MAX_KEY 65535          /* the GGUF spec's limit on a key */
#define MAX_PARTS 99999        /* %05d in a split's names */

/* ggml.c's type_traits: values per block, bytes per block. The numbers
 * of types ggml has dropped (4, 5, 31-33, 36-38) have none. */
static const struct {
	const char *name;
	uint32_t block, bytes;
} GGML_TYPES[] = {
	[0] = {"F32", 1, 4},         [1] = {"F16", 1, 2},
	[2] = {"Q4_0", 32, 18},      [3] = {"Q4_1", 32, 20},
	[6] = {"Q5_0", 32, 22},      [7] = {"Q5_1", 32, 24},
	[8] = {"Q8_0", 32, 34},      [9] = {"Q8_1", 32, 36},
	[10] = {"Q2_K", 256, 84},    [11] = {"Q3_K", 256, 110},
	[12] = {"Q4_K", 256, 144},   [13] = {"Q5_K", 256, 176},
	[14] = {"Q6_K", 256, 210},   [15] = {"Q8_K", 256, 292},
	[16] = {"IQ2_XXS", 256, 66}, [17] = {"IQ2_XS", 256, 74},
	[18] = {"IQ3_XXS", 256, 98}, [19] = {"IQ1_S", 256, 50},
	[20] = {"IQ4_NL", 32, 18},   [21] = {"IQ3_S", 256, 110},
	[22] = {"IQ2_S", 256, 82},   [23] = {"IQ4_XS", 256, 136},
	[24] = {"I8", 1, 1},         [25] = {"I16", 1, 2},
	[26] = {"I32", 1, 4},        [27] = {"I64", 1, 8},
	[28] = {"F64", 1, 8},        [29] = {"IQ1_M", 256, 56},
	[30] = {"BF16", 1, 2},       [34] = {"TQ1_0", 256, 54},
	[35] = {"TQ2_0", 256, 66},   [39] = {"MXFP4", 32, 17},
};

/* A value's bytes in the file; 0 for a string or an array. */
static const uint32_t VALUE_BYTES[KV_GGUF_TYPE_COUNT] = {
	[KV_GGUF_U8] = 1,  [KV_GGUF_I8] = 1,   [KV_GGUF_U16] = 2,
	[KV_GGUF_I16] = 2, [KV_GGUF_U32] = 4,  [KV_GGUF_I32] = 4,
	[KV_GGUF_F32] = 4, [KV_GGUF_BOOL] = 1, [KV_GGUF_U64] = 8,
	[KV_GGUF_I64] = 8, [KV_GGUF_F64] = 8,
};

static const char *const TYPE_NAMES[KV_GGUF_TYPE_COUNT] = {
	"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
	"bool", "string", "array", "uint64", "int64", "float64"};

const char *kv_gguf_type_name(enum kv_gguf_type t)
{
	return (unsigned)t < KV_GGUF_TYPE_COUNT ? TYPE_NAMES[t] : "?";
}

bool kv_gguf_ggml_type(uint32_t type, uint32_t *block, uint32_t *bytes,
		       const char **name)
{
	if (type >= sizeof GGML_TYPES / sizeof *GGML_TYPES ||
	    !GGML_TYPES[type].name)
		return false;
	if (block)
		*block = GGML_TYPES[type].block;
	if (bytes)
		*bytes = GGML_TYPES[type].bytes;
	if (name)
		*name = GGML_TYPES[type].name;
	return true;
}

int kv_gguf_tensor_bytes(uint32_t type, uint32_t n_dims, const uint64_t *ne,
			 uint64_t *bytes)
{
	uint32_t block, size;
	uint64_t rows = 1, row;
	*bytes = 0;
	if (!kv_gguf_ggml_type(type, &block, &size, NULL) ||
	    n_dims > KV_GGUF_MAX_DIMS)
		return KV_EINVAL;
	uint64_t first = n_dims ? ne[0] : 1;
	if (first % block)
		return KV_EINVAL;
	for (uint32_t d = 1; d < n_dims; d++)
		if (kv_mul(rows, ne[d], &rows))
			return KV_ERANGE;
	if (kv_mul(first / block, size, &row) || kv_mul(row, rows, bytes) ||
	    *bytes > INT64_MAX)
		return KV_ERANGE;
	return 0;
}

bool kv_gguf_magic(const void *buf, size_t len)
{
	return len >= 4 && !memcmp(buf, "GGUF", 4);
}

/* --- bounded reads --- */

/* A file, or bytes in memory, read front to back. */
struct rd {
	const char *path; /* for messages */
	int fd;           /* -1: mem */
	const uint8_t *mem;
	uint64_t size, pos;
	uint8_t *buf;     /* BUF_BYTES of the file from bstart */
	uint64_t bstart;
	size_t blen;
	char *err;
};

static int fail(struct rd *r, int e, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, KV_ERRLEN, "%.300s: ", r->path);
	va_start(ap, fmt);
	vsnprintf(r->err + n, KV_ERRLEN - (size_t)n, fmt, ap);
	va_end(ap);
	return e;
}

/* Whether n more bytes are in the file; if not, says the file ends
 * inside `what`. */
static int need(struct rd *r, uint64_t n, const char *what)
{
	if (n <= r->size - r->pos)
		return 0;
	return fail(r, KV_EINVAL,
		    "truncated: the file ends inside %s (at byte %llu)", what,
		    (unsigned long long)r->size);
}

static int get(struct rd *r, void *dst, size_t n, const char *what)
{
	int e = need(r, n, what);
	uint8_t *d = dst;
	if (e)
		return e;
	if (!r->buf) {
		memcpy(d, r->mem + r->pos, n);
		r->pos += n;
		return 0;
	}
	while (n) {
		if (r->pos < r->bstart || r->pos >= r->bstart + r->blen) {
			ssize_t got = pread(r->fd, r->buf, BUF_BYTES,
					    (off_t)r->pos);
			if (got <= 0)
				return fail(r, KV_EIO, "%s",
					    got ? strerror(errno)
						: "shorter than it was");
			r->bstart = r->pos;
			r->blen = (size_t)got;
		}
		size_t at = (size_t)(r->pos - r->bstart);
		size_t k = r->blen - at < n ? r->blen - at : n;
		memcpy(d, r->buf + at, k);
		d += k;
		n -= k;
		r->pos += k;
	}
	return 0;
}

static int skip(struct rd *r, uint64_t n, const char *what)
{
	int e = need(r, n, what);
	if (!e)
		r->pos += n;
	return e;
}

/* Little-endian integers of 1, 2, 4 or 8 bytes. */
static int get_uint(struct rd *r, unsigned n, uint64_t *v, const char *what)
{
	uint8_t b[8];
	int e = get(r, b, n, what);
	*v = 0;
	for (unsigned i = 0; !e && i < n; i++)
		*v |= (uint64_t)b[i] << (8 * i);
	return e;
}

static int get_u32(struct rd *r, uint32_t *v, const char *what)
{
	uint64_t x;
	int e = get_uint(r, 4, &x, what);
	*v = (uint32_t)x;
	return e;
}

/* A string's length, held to max and to the bytes left. */
static int str_len(struct rd *r, uint64_t max, uint64_t *len,
		   const char *what)
{
	char w[160];
	snprintf(w, sizeof w, "%s's length", what);
	int e = get_uint(r, 8, len, w);
	if (e)
		return e;
	if (*len > max)
		return fail(r, KV_EINVAL, "%s: a string of %llu bytes, longer "
			    "than the %llu allowed", what,
			    (unsigned long long)*len, (unsigned long long)max);
	if (*len > r->size - r->pos)
		return fail(r, KV_EINVAL, "%s: a string of %llu bytes, past "
			    "the file's end (%llu bytes left)", what,
			    (unsigned long long)*len,
			    (unsigned long long)(r->size - r->pos));
	return 0;
}

/* --- the header --- */

/* A scalar of type t into kv (its bytes already known to fit). */
static int scalar(struct rd *r, enum kv_gguf_type t, struct kv_gguf_kv *kv,
		  const char *what)
{
	uint64_t x;
	int e = get_uint(r, VALUE_BYTES[t], &x, what);
	if (e)
		return e;
	switch (t) {
	case KV_GGUF_I8: kv->v.i = (int8_t)x; break;
	case KV_GGUF_I16: kv->v.i = (int16_t)x; break;
	case KV_GGUF_I32: kv->v.i = (int32_t)x; break;
	case KV_GGUF_I64: kv->v.i = (int64_t)x; break;
	case KV_GGUF_F32: {
		float f;
		uint32_t u = (uint32_t)x;
		memcpy(&f, &u, 4);
		kv->v.f = f;
		break;
	}
	case KV_GGUF_F64: memcpy(&kv->v.f, &x, 8); break;
	case KV_GGUF_BOOL:
		if (x > 1)
			return fail(r, KV_EINVAL, "%s: a bool of %llu, must be "
				    "0 or 1", what, (unsigned long long)x);
		/* fall through */
	default: kv->v.u = x; break;
	}
	return 0;
}

static double as_double(enum kv_gguf_type t, const struct kv_gguf_kv *x)
{
	return t == KV_GGUF_F32 || t == KV_GGUF_F64 ? x->v.f
	       : t == KV_GGUF_I8 || t == KV_GGUF_I16 || t == KV_GGUF_I32 ||
			 t == KV_GGUF_I64
		   ? (double)x->v.i
		   : (double)x->v.u;
}

/* An array's element type, count and (kept when short and not strings)
 * values. */
static int array(struct rd *r, struct kv_gguf_kv *kv, const char *key)
{
	char w[160];
	uint32_t t;
	uint64_t n, len;
	snprintf(w, sizeof w, "%.100s's array type", key);
	int e = get_u32(r, &t, w);
	if (e)
		return e;
	if (t == KV_GGUF_ARRAY)
		return fail(r, KV_EINVAL, "%s: an array of arrays, which GGUF "
			    "readers refuse", key);
	if (t >= KV_GGUF_TYPE_COUNT)
		return fail(r, KV_EINVAL, "%s: an array of unknown value type "
			    "%u", key, t);
	snprintf(w, sizeof w, "%.100s's array count", key);
	if ((e = get_uint(r, 8, &n, w)))
		return e;
	kv->elem = (enum kv_gguf_type)t;
	kv->n = n;
	/* each element takes its bytes, a string at least its length */
	uint64_t least = t == KV_GGUF_STRING ? 8 : VALUE_BYTES[t];
	if (n > (r->size - r->pos) / least)
		return fail(r, KV_EINVAL, "%s: an array of %llu %ss, past the "
			    "file's end (%llu bytes left)", key,
			    (unsigned long long)n, kv_gguf_type_name(kv->elem),
			    (unsigned long long)(r->size - r->pos));
	snprintf(w, sizeof w, "%.100s's values", key);
	if (t == KV_GGUF_STRING) {
		for (uint64_t i = 0; i < n && !e; i++) {
			snprintf(w, sizeof w, "%.100s[%llu]", key,
				 (unsigned long long)i);
			e = str_len(r, UINT64_MAX, &len, w);
			if (!e)
				e = skip(r, len, w);
		}
		return e;
	}
	if (n > KV_GGUF_ARR_KEPT)
		return skip(r, n * least, w);
	kv->arr = malloc((n ? n : 1) * sizeof *kv->arr);
	if (!kv->arr)
		return KV_ENOMEM;
	for (uint64_t i = 0; i < n && !e; i++) {
		struct kv_gguf_kv one = {0};
		snprintf(w, sizeof w, "%.100s[%llu]", key,
			 (unsigned long long)i);
		e = scalar(r, kv->elem, &one, w);
		kv->arr[i] = as_double(kv->elem, &one);
	}
	return e;
}

static int read_kv(struct rd *r, size_t i, struct kv_gguf_kv *kv)
{
	char w[160];
	uint64_t len;
	uint32_t t;
	snprintf(w, sizeof w, "key %zu's name", i);
	int e = str_len(r, MAX_KEY, &len, w);
	if (e)
		return e;
	if (!len)
		return fail(r, KV_EINVAL, "key %zu: an empty name", i);
	if (!(kv->key = malloc(len + 1)))
		return KV_ENOMEM;
	if ((e = get(r, kv->key, len, w)))
		return e;
	kv->key[len] = '\0';
	for (uint64_t j = 0; j < len; j++)
		if (kv->key[j] < 0x20 || kv->key[j] > 0x7e)
			return fail(r, KV_EINVAL, "key %zu's name: not "
				    "printable ASCII (byte %llu is 0x%02x)", i,
				    (unsigned long long)j,
				    (unsigned)(unsigned char)kv->key[j]);
	snprintf(w, sizeof w, "%.100s's value type", kv->key);
	if ((e = get_u32(r, &t, w)))
		return e;
	if (t >= KV_GGUF_TYPE_COUNT)
		return fail(r, KV_EINVAL, "%s: unknown value type %u", kv->key,
			    t);
	kv->type = (enum kv_gguf_type)t;
	snprintf(w, sizeof w, "%.100s's value", kv->key);
	if (kv->type == KV_GGUF_ARRAY)
		return array(r, kv, kv->key);
	if (kv->type != KV_GGUF_STRING)
		return scalar(r, kv->type, kv, w);
	if ((e = str_len(r, UINT64_MAX, &kv->n, w)))
		return e;
	if (kv->n > KV_GGUF_STR_KEPT)
		return skip(r, kv->n, w);
	if (!(kv->str = malloc(kv->n + 1)))
		return KV_ENOMEM;
	kv->str[kv->n] = '\0';
	return get(r, kv->str, kv->n, w);
}

static int by_key(const void *a, const void *b)
{
	return strcmp((*(struct kv_gguf_kv *const *)a)->key,
		      (*(struct kv_gguf_kv *const *)b)->key);
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(struct kv_gguf_tensor *const *)a)->name,
		      (*(struct kv_gguf_tensor *const *)b)->name);
}

/* A key given twice; 0 when none is. */
static int duplicate_keys(struct rd *r, const struct kv_gguf *g)
{
	struct kv_gguf_kv **s = malloc((g->n_kv + 1) * sizeof *s);
	int e = 0;
	if (!s)
		return KV_ENOMEM;
	for (size_t i = 0; i < g->n_kv; i++)
		s[i] = &g->kv[i];
	qsort(s, g->n_kv, sizeof *s, by_key);
	for (size_t i = 1; i < g->n_kv && !e; i++)
		if (!strcmp(s[i - 1]->key, s[i]->key))
			e = fail(r, KV_EINVAL, "%.200s: a key given twice",
				 s[i]->key);
	free(s);
	return e;
}

/* A tensor name given twice (over every part); 0 when none is. */
static int duplicate_tensors(struct rd *r, const struct kv_gguf *g)
{
	struct kv_gguf_tensor **s = malloc((g->n_t + 1) * sizeof *s);
	int e = 0;
	if (!s)
		return KV_ENOMEM;
	for (size_t i = 0; i < g->n_t; i++)
		s[i] = &g->t[i];
	qsort(s, g->n_t, sizeof *s, by_name);
	for (size_t i = 1; i < g->n_t && !e; i++)
		if (!strcmp(s[i - 1]->name, s[i]->name))
			e = fail(r, KV_EINVAL, "tensor %s: named twice",
				 s[i]->name);
	free(s);
	return e;
}

static int read_tensor(struct rd *r, size_t i, struct kv_gguf_tensor *t)
{
	char w[160];
	uint64_t len;
	snprintf(w, sizeof w, "tensor %zu's name", i);
	int e = str_len(r, KV_GGUF_NAME_MAX, &len, w);
	if (e || (e = get(r, t->name, len, w)))
		return e;
	t->name[len] = '\0';
	if (!len || strlen(t->name) != len)
		return fail(r, KV_EINVAL, "tensor %zu: %s", i,
			    len ? "a NUL inside its name" : "an empty name");
	snprintf(w, sizeof w, "tensor %s's dimensions", t->name);
	if ((e = get_u32(r, &t->n_dims, w)))
		return e;
	if (t->n_dims > KV_GGUF_MAX_DIMS)
		return fail(r, KV_EINVAL, "tensor %s: %u dimensions, more than "
			    "ggml's %u", t->name, t->n_dims, KV_GGUF_MAX_DIMS);
	for (uint32_t d = 0; d < KV_GGUF_MAX_DIMS; d++) {
		t->ne[d] = 1;
		if (d < t->n_dims && (e = get_uint(r, 8, &t->ne[d], w)))
			return e;
		if (t->ne[d] > INT64_MAX)
			return fail(r, KV_EINVAL, "tensor %s: dimension %u is "
				    "negative as ggml reads it (%llu)", t->name,
				    d, (unsigned long long)t->ne[d]);
	}
	snprintf(w, sizeof w, "tensor %s's type", t->name);
	if ((e = get_u32(r, &t->type, w)))
		return e;
	uint32_t block;
	const char *tn;
	if (!kv_gguf_ggml_type(t->type, &block, NULL, &tn))
		return fail(r, KV_EINVAL, "tensor %s: unknown ggml type %u",
			    t->name, t->type);
	snprintf(w, sizeof w, "tensor %s's offset", t->name);
	if ((e = get_uint(r, 8, &t->offset, w)))
		return e;
	e = kv_gguf_tensor_bytes(t->type, t->n_dims, t->ne, &t->bytes);
	if (e == KV_EINVAL)
		return fail(r, e, "tensor %s: rows of %llu values, not whole "
			    "blocks of %u (%s)", t->name,
			    (unsigned long long)t->ne[0], block, tn);
	if (e)
		return fail(r, KV_EINVAL, "tensor %s: its size overflows 63 "
			    "bits", t->name);
	return 0;
}

/* The tensors' data: each at a multiple of the alignment, inside the
 * file, where ggml's reader expects it (each after the one before,
 * padded to the alignment). */
static int place_tensors(struct rd *r, const struct kv_gguf *g, size_t from,
			 uint32_t align, uint64_t data)
{
	uint64_t avail = data <= r->size ? r->size - data : 0, at = 0;
	for (size_t i = from; i < g->n_t; i++) {
		const struct kv_gguf_tensor *t = &g->t[i];
		if (t->offset % align)
			return fail(r, KV_EINVAL, "tensor %s: offset %llu is "
				    "not a multiple of the alignment (%u)",
				    t->name, (unsigned long long)t->offset,
				    align);
		if (t->offset > avail || t->bytes > avail - t->offset)
			return fail(r, KV_EINVAL, "tensor %s: %llu bytes at "
				    "offset %llu of the data do not fit in the "
				    "file (%llu bytes of data)", t->name,
				    (unsigned long long)t->bytes,
				    (unsigned long long)t->offset,
				    (unsigned long long)avail);
		if (t->offset != at)
			return fail(r, KV_EINVAL, "tensor %s: at offset %llu of "
				    "the data, where the tensors before it end "
				    "at %llu", t->name,
				    (unsigned long long)t->offset,
				    (unsigned long long)at);
		at = t->offset + t->bytes;
		at += (align - at % align) % align;
	}
	return 0;
}

/* general.alignment: a power of two in a uint32, else 32. */
static int alignment(struct rd *r, struct kv_gguf *g)
{
	const struct kv_gguf_kv *a = kv_gguf_find(g, "general.alignment");
	g->alignment = 32;
	if (!a)
		return 0;
	if (a->type != KV_GGUF_U32)
		return fail(r, KV_EINVAL, "general.alignment: must be a "
			    "uint32, got a %s", kv_gguf_type_name(a->type));
	if (!a->v.u || a->v.u & (a->v.u - 1))
		return fail(r, KV_EINVAL, "general.alignment: must be a power "
			    "of two, got %llu", (unsigned long long)a->v.u);
	g->alignment = (uint32_t)a->v.u;
	return 0;
}

/* One file: its version, alignment and keys into *part, its tensors
 * appended to g's. */
static int read_file(struct rd *r, struct kv_gguf *g, struct kv_gguf *part)
{
	uint8_t magic[4];
	uint32_t version;
	uint64_t n_t, n_kv;
	int e = get(r, magic, 4, "the magic");
	if (e)
		return e;
	if (!kv_gguf_magic(magic, 4))
		return fail(r, KV_EINVAL, "not a GGUF file (it does not begin "
			    "with \"GGUF\")");
	if ((e = get_u32(r, &version, "the version")))
		return e;
	if (version == 1)
		return fail(r, KV_EINVAL, "GGUF version 1, which kvtools does "
			    "not read (only 2 and 3)");
	if (version == 0x02000000u || version == 0x03000000u)
		return fail(r, KV_EINVAL, "a big-endian GGUF, which kvtools "
			    "does not read");
	if (version != 2 && version != 3)
		return fail(r, KV_EINVAL, "version %u: not a GGUF version "
			    "kvtools reads (2 and 3)", version);
	part->version = version;
	if ((e = get_uint(r, 8, &n_t, "the tensor count")) ||
	    (e = get_uint(r, 8, &n_kv, "the metadata count")))
		return e;
	/* a key takes at least 14 bytes, a tensor 25 */
	uint64_t left = r->size - r->pos;
	if (n_kv > MAX_KV || n_kv > left / 14)
		return fail(r, KV_EINVAL, "the metadata count: %llu keys do "
			    "not fit in the %llu bytes left",
			    (unsigned long long)n_kv,
			    (unsigned long long)left);
	if (n_t > MAX_TENSORS || n_t > (left - n_kv * 14) / 25)
		return fail(r, KV_EINVAL, "the tensor count: %llu tensors do "
			    "not fit in the %llu bytes left",
			    (unsigned long long)n_t, (unsigned long long)left);
	part->kv = calloc(n_kv ? n_kv : 1, sizeof *part->kv);
	if (!part->kv)
		return KV_ENOMEM;
	for (size_t i = 0; i < n_kv; i++) {
		part->n_kv = i + 1;
		if ((e = read_kv(r, i, &part->kv[i])))
			return e;
	}
	if ((e = duplicate_keys(r, part)) || (e = alignment(r, part)))
		return e;
	size_t from = g->n_t;
	struct kv_gguf_tensor *t =
	    realloc(g->t, (g->n_t + n_t + 1) * sizeof *t);
	if (!t)
		return KV_ENOMEM;
	g->t = t;
	for (size_t i = 0; i < n_t; i++) {
		memset(&g->t[g->n_t], 0, sizeof *g->t);
		g->t[g->n_t].part = g->parts;
		if ((e = read_tensor(r, i, &g->t[g->n_t])))
			return e;
		if (kv_add(g->bytes, g->t[g->n_t].bytes, &g->bytes))
			return fail(r, KV_EINVAL, "the tensors' sizes add past "
				    "64 bits");
		g->n_t++;
	}
	uint64_t data = r->pos + (part->alignment - r->pos % part->alignment) %
					 part->alignment;
	g->parts++;
	g->file_bytes += r->size;
	return place_tensors(r, g, from, part->alignment, data);
}

static void free_kvs(struct kv_gguf_kv *kv, size_t n)
{
	for (size_t i = 0; kv && i < n; i++) {
		free(kv[i].key);
		free(kv[i].str);
		free(kv[i].arr);
	}
	free(kv);
}

void kv_gguf_free(struct kv_gguf *g)
{
	if (!g)
		return;
	free_kvs(g->kv, g->n_kv);
	free(g->t);
	free(g);
}

const struct kv_gguf_kv *kv_gguf_find(const struct kv_gguf *g,
				      const char *key)
{
	for (size_t i = 0; g && i < g->n_kv; i++)
		if (!strcmp(g->kv[i].key, key))
			return &g->kv[i];
	return NULL;
}

/* Reads one file into g: the first's keys become g's; a later part's
 * are dropped (read_parts checks them first). */
static int read_part(struct rd *r, struct kv_gguf *g, bool first)
{
	struct kv_gguf part = {0};
	int e = read_file(r, g, &part);
	if (first) {
		g->version = part.version;
		g->alignment = part.alignment;
		g->kv = part.kv;
		g->n_kv = part.n_kv;
	} else {
		free_kvs(part.kv, part.n_kv);
	}
	return e;
}

int kv_gguf_parse(const void *buf, size_t len, const char *name,
		  struct kv_gguf **out, char *err)
{
	struct kv_gguf *g = calloc(1, sizeof *g);
	struct rd r = {name, -1, buf, len, 0, NULL, 0, 0, err};
	*out = NULL;
	err[0] = '\0';
	if (!g)
		return KV_ENOMEM;
	int e = read_part(&r, g, true);
	if (!e)
		e = duplicate_tensors(&r, g);
	if (e) {
		if (e == KV_ENOMEM && !err[0])
			fail(&r, e, "out of memory");
		kv_gguf_free(g);
		return e;
	}
	*out = g;
	return 0;
}

/* Opens path for r; KV_EIO with err (and *en, its errno) when it cannot
 * be. */
static int open_rd(struct rd *r, const char *path, uint8_t *buf, int *en,
		   char *err)
{
	struct stat st;
	*r = (struct rd){path, open(path, O_RDONLY), NULL, 0, 0, buf, 0, 0,
			 err};
	*en = 0;
	if (r->fd < 0 || fstat(r->fd, &st))
		*en = errno;
	else if (S_ISDIR(st.st_mode))
		*en = EISDIR;
	if (*en) {
		if (r->fd >= 0)
			close(r->fd);
		r->fd = -1;
		return fail(r, KV_EIO, "%s", strerror(*en));
	}
	r->size = (uint64_t)st.st_size;
	return 0;
}

/* A split's part name NAME-%05u-of-%05u.gguf: where NAME ends, the part's
 * number and the count; false for another name. */
static bool split_name(const char *path, size_t *stem, unsigned *no,
		       unsigned *count)
{
	static const char tail[] = "-00000-of-00000.gguf";
	size_t n = strlen(path), t = sizeof tail - 1;
	if (n <= t)
		return false;
	const char *s = path + n - t;
	for (size_t i = 0; i < t; i++)
		if (tail[i] == '0' ? s[i] < '0' || s[i] > '9' : s[i] != tail[i])
			return false;
	*no = (unsigned)strtoul(s + 1, NULL, 10);
	*count = (unsigned)strtoul(s + 10, NULL, 10);
	*stem = n - t;
	return *no >= 1 && *count >= 1 && *no <= *count;
}

/* A split's count key (split.count, split.no, split.tensors.count): an
 * integer >= 0 into *v; 1 when absent. */
static int split_key(struct rd *r, const struct kv_gguf *g, const char *key,
		     uint64_t *v)
{
	const struct kv_gguf_kv *x = kv_gguf_find(g, key);
	*v = 0;
	if (!x)
		return 1;
	bool sgn = x->type == KV_GGUF_I8 || x->type == KV_GGUF_I16 ||
		   x->type == KV_GGUF_I32 || x->type == KV_GGUF_I64;
	bool uns = x->type == KV_GGUF_U8 || x->type == KV_GGUF_U16 ||
		   x->type == KV_GGUF_U32 || x->type == KV_GGUF_U64;
	if ((!sgn && !uns) || (sgn && x->v.i < 0))
		return fail(r, KV_EINVAL, "%s: must be a count, got a%s %s",
			    key, sgn ? " negative" : "",
			    kv_gguf_type_name(x->type));
	*v = x->v.u;
	return 0;
}

/* A split's key that must be `want`; 0 when it is. */
static int split_want(struct rd *r, const struct kv_gguf *g, const char *key,
		      uint64_t want)
{
	uint64_t v;
	int e = split_key(r, g, key, &v);
	if (e < 0)
		return e;
	if (e == 1)
		return fail(r, KV_EINVAL, "%s: missing, and the file is part of "
			    "a split model (must be %llu)", key,
			    (unsigned long long)want);
	if (v != want)
		return fail(r, KV_EINVAL, "%s: must be %llu, got %llu", key,
			    (unsigned long long)want, (unsigned long long)v);
	return 0;
}

/* The later parts of a split of `count` (stem: its name before
 * -00001-of-...), read after the first into g. */
static int read_parts(struct rd *first, struct kv_gguf *g, const char *path,
		      size_t stem, unsigned count, uint8_t *buf)
{
	char *p = malloc(stem + 32);
	int e = 0, en;
	if (!p)
		return KV_ENOMEM;
	for (unsigned i = 2; i <= count && !e; i++) {
		struct rd r;
		struct kv_gguf part = {0};
		snprintf(p, stem + 32, "%.*s-%05u-of-%05u.gguf", (int)stem,
			 path, i, count);
		if ((e = open_rd(&r, p, buf, &en, first->err))) {
			if (en == ENOENT)
				e = fail(&r, KV_EINVAL, "missing: part %u of "
					 "the %u of %.300s", i, count,
					 first->path);
			break;
		}
		e = read_file(&r, g, &part);
		if (!e)
			e = split_want(&r, &part, "split.no", i - 1);
		if (!e)
			e = split_want(&r, &part, "split.count", count);
		free_kvs(part.kv, part.n_kv);
		close(r.fd);
	}
	free(p);
	return e;
}

/* After the first part: the split's count (from split.count, held to the
 * name), its later parts, and split.tensors.count held to them. */
static int read_split(struct rd *r, struct kv_gguf *g, const char *path,
		      uint8_t *buf)
{
	size_t stem = 0;
	unsigned no = 0, count = 0;
	uint64_t n, nt;
	bool named = split_name(path, &stem, &no, &count);
	int e = split_key(r, g, "split.count", &n);
	if (e < 0)
		return e;
	if (e == 1 || n <= 1) {
		if (named && count > 1)
			return fail(r, KV_EINVAL, "split.count: %s, and the "
				    "name says %u parts",
				    e == 1 ? "missing" : "1", count);
		return 0;
	}
	if (!named || no != 1)
		return fail(r, KV_EINVAL, "split.count: %llu parts, but the "
			    "name is not NAME-00001-of-%05llu.gguf",
			    (unsigned long long)n, (unsigned long long)n);
	if (n != count)
		return fail(r, KV_EINVAL, "split.count: %llu, and the name says "
			    "%u parts", (unsigned long long)n, count);
	if ((e = split_want(r, g, "split.no", 0)) ||
	    (e = read_parts(r, g, path, stem, count, buf)))
		return e;
	if ((e = split_key(r, g, "split.tensors.count", &nt)) < 0)
		return e;
	if (e == 0 && nt != g->n_t)
		return fail(r, KV_EINVAL, "split.tensors.count: %llu, and the "
			    "%u parts hold %zu tensors",
			    (unsigned long long)nt, count, g->n_t);
	return 0;
}

int kv_gguf_open(const char *path, struct kv_gguf **out, char *err)
{
	size_t stem;
	unsigned no, count;
	char *first = NULL;
	int e, en;
	*out = NULL;
	err[0] = '\0';
	/* a split is read from its first part, whichever is named */
	if (split_name(path, &stem, &no, &count) && no != 1) {
		if (!(first = malloc(stem + 32)))
			return KV_ENOMEM;
		snprintf(first, stem + 32, "%.*s-00001-of-%05u.gguf",
			 (int)stem, path, count);
	}
	const char *p = first ? first : path;
	struct kv_gguf *g = calloc(1, sizeof *g);
	uint8_t *buf = malloc(BUF_BYTES);
	struct rd r;
	if (!g || !buf) {
		e = KV_ENOMEM;
	} else if ((e = open_rd(&r, p, buf, &en, err))) {
		if (first && en == ENOENT)
			e = fail(&r, KV_EINVAL, "missing: part 1 of the %u of "
				 "%.300s", count, path);
	} else {
		e = read_part(&r, g, true);
		if (!e)
			e = read_split(&r, g, p, buf);
		if (!e)
			e = duplicate_tensors(&r, g);
		close(r.fd);
	}
	if (e == KV_ENOMEM && !err[0])
		snprintf(err, KV_ERRLEN, "%.300s: out of memory", path);
	free(buf);
	free(first);
	if (e) {
		kv_gguf_free(g);
		return e;
	}
	*out = g;
	return 0;
}
