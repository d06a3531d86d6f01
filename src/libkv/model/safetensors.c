/*
 * safetensors.c - a checkpoint's tensors from its safetensors files,
 * headers read strictly and data mapped read-only (safetensors.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "kv/dtype.h"
#include "kv/model.h"
#include "kv/safetensors.h"

#define MAX_HEADER_BYTES (100u << 20) /* the reference's own limit */
#define MAX_INDEX_BYTES (64u << 20)

static const struct {
	const char *name;
	uint32_t bytes;
} DTYPES[KV_ST_COUNT] = {
	[KV_ST_F64] = {"F64", 8},       [KV_ST_F32] = {"F32", 4},
	[KV_ST_F16] = {"F16", 2},       [KV_ST_BF16] = {"BF16", 2},
	[KV_ST_F8_E4M3] = {"F8_E4M3", 1}, [KV_ST_F8_E5M2] = {"F8_E5M2", 1},
	[KV_ST_I64] = {"I64", 8},       [KV_ST_I32] = {"I32", 4},
	[KV_ST_I16] = {"I16", 2},       [KV_ST_I8] = {"I8", 1},
	[KV_ST_U64] = {"U64", 8},       [KV_ST_U32] = {"U32", 4},
	[KV_ST_U16] = {"U16", 2},       [KV_ST_U8] = {"U8", 1},
	[KV_ST_BOOL] = {"BOOL", 1},
};

const char *kv_st_dtype_name(enum kv_st_dtype t)
{
	return (unsigned)t < KV_ST_COUNT ? DTYPES[t].name : "?";
}

uint32_t kv_st_dtype_bytes(enum kv_st_dtype t)
{
	return (unsigned)t < KV_ST_COUNT ? DTYPES[t].bytes : 0;
}

/* A JSON number written as a whole number in [0, 2^53]: the reference
 * reads shapes and offsets as integers, and refuses 32.0 or 32e0. */
static bool whole(const cJSON *it, uint64_t *out)
{
	return kv_json_whole(it, 9007199254740992ULL, out);
}

static int grow(struct kv_st *st)
{
	if (st->n % 64)
		return 0;
	struct kv_st_tensor *t = realloc(st->t, (st->n + 64) * sizeof *t);
	if (!t)
		return KV_ENOMEM;
	st->t = t;
	return 0;
}

/* One tensor's entry of a header into *t (name not yet set). */
static int read_entry(const cJSON *it, uint64_t data, const char *path,
		      struct kv_st_tensor *t, char *err)
{
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(it, "dtype");
	const cJSON *sh = cJSON_GetObjectItemCaseSensitive(it, "shape");
	const cJSON *off = cJSON_GetObjectItemCaseSensitive(it, "data_offsets");
	const char *why = NULL;
	int i = 0;
	if (!cJSON_IsObject(it))
		why = "not an object of dtype, shape and data_offsets";
	else if (!cJSON_IsString(dt))
		why = "no dtype";
	for (i = 0; !why && i < KV_ST_COUNT; i++)
		if (!strcmp(dt->valuestring, DTYPES[i].name))
			break;
	if (!why && i == KV_ST_COUNT) {
		snprintf(err, KV_ERRLEN, "%.400s: %.200s: unknown dtype "
			 "'%.40s'", path, it->string, dt->valuestring);
		return KV_EINVAL;
	}
	t->dtype = (enum kv_st_dtype)i;
	t->ndim = 0;
	t->elems = 1;
	if (!why && (!cJSON_IsArray(sh) ||
		     cJSON_GetArraySize(sh) > KV_ST_MAX_DIMS))
		why = "shape: not a list of at most 8 sizes";
	for (const cJSON *d = why ? NULL : sh->child; d; d = d->next) {
		uint64_t v;
		if (!whole(d, &v)) {
			why = "shape: not a list of integers (no fraction, no "
			      "exponent)";
			break;
		}
		t->shape[t->ndim++] = v;
		if (v && t->elems > UINT64_MAX / 8 / v) {
			why = "shape: too large";
			break;
		}
		t->elems *= v;
	}
	if (!why && (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2 ||
		     !whole(off->child, &t->begin) ||
		     !whole(off->child->next, &t->end) || t->begin > t->end))
		why = "data_offsets: not [begin, end], two integers";
	if (why) {
		snprintf(err, KV_ERRLEN, "%.400s: %.200s: %s", path, it->string,
			 why);
		return KV_EINVAL;
	}
	uint64_t bytes = t->elems * DTYPES[t->dtype].bytes;
	if (t->end > data) {
		snprintf(err, KV_ERRLEN, "%.400s: %.200s: data_offsets [%llu, "
			 "%llu] run past the %llu bytes of data",
			 path, it->string, (unsigned long long)t->begin,
			 (unsigned long long)t->end, (unsigned long long)data);
		return KV_EINVAL;
	}
	if (t->end - t->begin != bytes) {
		snprintf(err, KV_ERRLEN, "%.400s: %.200s: data_offsets [%llu, "
			 "%llu] hold %llu bytes; its shape in %s is %llu",
			 path, it->string, (unsigned long long)t->begin,
			 (unsigned long long)t->end,
			 (unsigned long long)(t->end - t->begin),
			 DTYPES[t->dtype].name, (unsigned long long)bytes);
		return KV_EINVAL;
	}
	return 0;
}

static int by_offset(const void *a, const void *b)
{
	const struct kv_st_tensor *x = *(struct kv_st_tensor *const *)a;
	const struct kv_st_tensor *y = *(struct kv_st_tensor *const *)b;
	return x->begin != y->begin ? (x->begin < y->begin ? -1 : 1)
	       : x->end != y->end   ? (x->end < y->end ? -1 : 1)
				    : 0;
}

/* The tensors t[0 .. n) of one file tile its data bytes: sorted by
 * offset, each begins where the one before ends, the last ends at data. */
static int tiles(struct kv_st_tensor *t, size_t n, uint64_t data,
		 const char *path, char *err)
{
	struct kv_st_tensor **s = malloc((n ? n : 1) * sizeof *s);
	uint64_t at = 0;
	int e = 0;
	if (!s)
		return KV_ENOMEM;
	for (size_t i = 0; i < n; i++)
		s[i] = &t[i];
	if (n)
		qsort(s, n, sizeof *s, by_offset);
	for (size_t i = 0; i < n && !e; i++) {
		if (s[i]->begin != at) {
			snprintf(err, KV_ERRLEN, "%.400s: %.200s: data_offsets "
				 "begin at %llu, where %s",
				 path, s[i]->name,
				 (unsigned long long)s[i]->begin,
				 s[i]->begin < at ? "another tensor's bytes are"
						  : "the data before is no "
						    "tensor's");
			e = KV_EINVAL;
		}
		at = s[i]->end;
	}
	if (!e && at != data) {
		snprintf(err, KV_ERRLEN, "%.400s: the tensors end at byte %llu "
			 "of %llu bytes of data", path, (unsigned long long)at,
			 (unsigned long long)data);
		e = KV_EINVAL;
	}
	free(s);
	return e;
}

/* "__metadata__": an object of strings. */
static bool metadata_ok(const cJSON *m)
{
	if (!cJSON_IsObject(m))
		return false;
	for (const cJSON *c = m->child; c; c = c->next)
		if (!cJSON_IsString(c))
			return false;
	return true;
}

int kv_st_parse(const char *text, size_t len, uint64_t data, const char *path,
		uint32_t file, struct kv_st *st, char *err)
{
	cJSON *root = NULL;
	size_t first = st->n;
	int e = kv_json_read(text, len, path, &root, err);
	if (e)
		return e;
	if (!cJSON_IsObject(root)) {
		snprintf(err, KV_ERRLEN, "%.400s: the header is not a JSON "
			 "object", path);
		e = KV_EINVAL;
	}
	for (const cJSON *it = e ? NULL : root->child; it && !e;
	     it = it->next) {
		if (!strcmp(it->string, "__metadata__")) {
			if (!metadata_ok(it)) {
				snprintf(err, KV_ERRLEN, "%.400s: __metadata__: "
					 "not an object of strings", path);
				e = KV_EINVAL;
			}
			continue;
		}
		if ((e = grow(st)))
			break;
		struct kv_st_tensor *t = &st->t[st->n];
		memset(t, 0, sizeof *t);
		if ((e = read_entry(it, data, path, t, err)))
			break;
		if (!(t->name = strdup(it->string))) {
			e = KV_ENOMEM;
			break;
		}
		t->file = file;
		st->bytes += t->end - t->begin;
		st->n++;
	}
	if (!e && st->n > first)
		e = tiles(st->t + first, st->n - first, data, path, err);
	else if (!e && data) {
		snprintf(err, KV_ERRLEN, "%.400s: no tensors, and %llu bytes "
			 "of data", path, (unsigned long long)data);
		e = KV_EINVAL;
	}
	cJSON_Delete(root);
	return e;
}

int kv_st_header_len(const unsigned char n8[8], uint64_t size,
		     const char *path, uint64_t *n, char *err)
{
	*n = 0;
	for (int i = 7; i >= 0; i--)
		*n = *n << 8 | n8[i];
	if (*n < 2 || *n > MAX_HEADER_BYTES || size < 8 || *n > size - 8) {
		snprintf(err, KV_ERRLEN, "%.400s: a header of %llu bytes, in a "
			 "file of %llu", path, (unsigned long long)*n,
			 (unsigned long long)size);
		return KV_EINVAL;
	}
	return 0;
}

/* Reads the header of the file at path as st's file `file`. */
static int read_file(const char *path, uint32_t file, struct kv_st *st,
		     char *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	unsigned char n8[8];
	bool bad = fd < 0 || fstat(fd, &sb);
	if (bad || !S_ISREG(sb.st_mode)) {
		snprintf(err, KV_ERRLEN, "%.400s: %s", path,
			 bad ? strerror(errno) : "not a file");
		if (fd >= 0)
			close(fd);
		return KV_EIO;
	}
	uint64_t n = 0, size = (uint64_t)sb.st_size;
	struct kv_st_file *f = &st->f[file];
	char *text = NULL;
	int e = KV_EINVAL;
	if (size < 8 || read(fd, n8, 8) != 8) {
		snprintf(err, KV_ERRLEN, "%.400s: shorter than a safetensors "
			 "header's 8-byte length", path);
		goto out;
	}
	if ((e = kv_st_header_len(n8, size, path, &n, err)))
		goto out;
	e = KV_EINVAL;
	if (!(text = malloc(n + 1))) {
		e = KV_ENOMEM;
		snprintf(err, KV_ERRLEN, "%.400s: out of memory", path);
		goto out;
	}
	if (read(fd, text, n) != (ssize_t)n) {
		snprintf(err, KV_ERRLEN, "%.400s: truncated header", path);
		goto out;
	}
	text[n] = '\0';
	f->size = size;
	f->data = 8 + n;
	e = kv_st_parse(text, n, size - 8 - n, path, file, st, err);
out:
	free(text);
	close(fd);
	return e;
}

static int add_file(struct kv_st *st, const char *path)
{
	struct kv_st_file *f = realloc(st->f, (st->nf + 1) * sizeof *f);
	if (!f)
		return KV_ENOMEM;
	st->f = f;
	memset(&f[st->nf], 0, sizeof *f);
	if (!(f[st->nf].path = strdup(path)))
		return KV_ENOMEM;
	st->nf++;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct kv_st_tensor *)a)->name,
		      ((const struct kv_st_tensor *)b)->name);
}

const struct kv_st_tensor *kv_st_get(const struct kv_st *st,
				     const char *name)
{
	struct kv_st_tensor key = {.name = (char *)name};
	return st->n ? bsearch(&key, st->t, st->n, sizeof key, by_name)
		     : NULL;
}

int kv_st_index_parse(const char *text, size_t len, const char *dir,
		      const char *path, struct kv_st *st, char *err)
{
	char shard[4200];
	cJSON *root = NULL;
	int e = kv_json_read(text, len, path, &root, err);
	if (e)
		return e;
	const cJSON *wm = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
	if (!cJSON_IsObject(wm) || !wm->child) {
		snprintf(err, KV_ERRLEN, "%.400s: weight_map: not an object "
			 "naming each tensor's file", path);
		e = KV_EINVAL;
	}
	for (const cJSON *w = e ? NULL : wm->child; w && !e; w = w->next) {
		const char *s = cJSON_IsString(w) ? w->valuestring : "";
		if (!*s || strchr(s, '/') || !strcmp(s, "..")) {
			snprintf(err, KV_ERRLEN, "%.400s: weight_map: %.200s: "
				 "not a file name beside the index", path,
				 w->string);
			e = KV_EINVAL;
			break;
		}
		size_t k = 0;
		snprintf(shard, sizeof shard, "%s/%s", dir, s);
		while (k < st->nf && strcmp(st->f[k].path, shard))
			k++;
		if (k == st->nf && !(e = add_file(st, shard)))
			e = read_file(shard, (uint32_t)k, st, err);
	}
	if (!e && st->n)
		qsort(st->t, st->n, sizeof *st->t, by_name);
	/* each name where the map says, and no tensor the map leaves out */
	for (const cJSON *w = e ? NULL : wm->child; w && !e; w = w->next) {
		const struct kv_st_tensor *t = kv_st_get(st, w->string);
		snprintf(shard, sizeof shard, "%s/%s", dir, w->valuestring);
		if (!t || strcmp(st->f[t->file].path, shard)) {
			snprintf(err, KV_ERRLEN, "%.400s: %.200s: not in %.200s, "
				 "where weight_map names it", path, w->string,
				 w->valuestring);
			e = KV_EINVAL;
		}
	}
	if (!e && (size_t)cJSON_GetArraySize(wm) != st->n) {
		snprintf(err, KV_ERRLEN, "%.400s: the shards hold %zu tensors, "
			 "weight_map names %d", path, st->n,
			 cJSON_GetArraySize(wm));
		e = KV_EINVAL;
	}
	cJSON_Delete(root);
	return e;
}

static int map_files(struct kv_st *st, char *err)
{
	for (size_t i = 0; i < st->nf; i++) {
		struct kv_st_file *f = &st->f[i];
		int fd = open(f->path, O_RDONLY | O_CLOEXEC);
		void *m = fd < 0 ? MAP_FAILED
				 : mmap(NULL, f->size, PROT_READ, MAP_PRIVATE,
					fd, 0);
		if (fd >= 0)
			close(fd);
		if (m == MAP_FAILED) {
			snprintf(err, KV_ERRLEN, "%.400s: %s", f->path,
				 strerror(errno));
			return KV_EIO;
		}
		f->map = m;
	}
	for (size_t i = 0; i < st->n; i++) {
		struct kv_st_tensor *t = &st->t[i];
		t->data = (const unsigned char *)st->f[t->file].map +
			  st->f[t->file].data + t->begin;
	}
	return 0;
}

int kv_st_open(const char *dir, int map, struct kv_st **out, char *err)
{
	char path[4200];
	struct stat sb;
	struct kv_st *st = calloc(1, sizeof *st);
	int e = st ? 0 : KV_ENOMEM;
	*out = NULL;
	snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
	if (!e && stat(path, &sb) == 0) {
		char *text;
		size_t len;
		if (!(e = kv_file_read(path, MAX_INDEX_BYTES, &text, &len,
				       err)))
			e = kv_st_index_parse(text, len, dir, path, st, err);
		free(text);
	} else if (!e) {
		snprintf(path, sizeof path, "%s/model.safetensors", dir);
		if (stat(path, &sb)) {
			snprintf(err, KV_ERRLEN, "%.400s: no model.safetensors "
				 "or model.safetensors.index.json", dir);
			e = KV_EIO;
		} else if (!(e = add_file(st, path)) &&
			   !(e = read_file(path, 0, st, err)) && st->n) {
			qsort(st->t, st->n, sizeof *st->t, by_name);
		}
	}
	/* a checkpoint of no tensors has no weights, which every reader
	 * of one wants (kvdecode its tensors, kvfit their bytes) */
	if (!e && !st->n) {
		snprintf(err, KV_ERRLEN, "%.400s: holds no tensors", path);
		e = KV_EINVAL;
	}
	for (size_t i = 1; !e && i < st->n; i++)
		if (!strcmp(st->t[i - 1].name, st->t[i].name)) {
			snprintf(err, KV_ERRLEN, "%.400s: %.200s: in two "
				 "shards", dir, st->t[i].name);
			e = KV_EINVAL;
		}
	if (!e && map)
		e = map_files(st, err);
	if (e == KV_ENOMEM)
		snprintf(err, KV_ERRLEN, "%.400s: out of memory", dir);
	if (e) {
		kv_st_close(st);
		return e;
	}
	*out = st;
	return 0;
}

int kv_st_beside(const char *config_path, int map, struct kv_st **out,
		 char *err)
{
	char dir[4200], p[4300];
	struct stat sb;
	*out = NULL;
	if (!kv_config_beside(config_path, "", dir, sizeof dir))
		return 0;
	snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
	if (stat(p, &sb)) {
		snprintf(p, sizeof p, "%s/model.safetensors", dir);
		if (stat(p, &sb))
			return 0;
	}
	return kv_st_open(dir, map, out, err);
}

enum kv_dtype kv_st_weights_dtype(const struct kv_st *st)
{
	uint64_t bytes[3] = {0};
	for (size_t i = 0; i < st->n; i++) {
		const struct kv_st_tensor *t = &st->t[i];
		int k = t->dtype == KV_ST_F32	? 0
			: t->dtype == KV_ST_BF16 ? 1
			: t->dtype == KV_ST_F16	? 2
						: -1;
		if (k >= 0 && t->ndim == 2)
			bytes[k] += t->end - t->begin;
	}
	return bytes[1] > bytes[0] && bytes[1] >= bytes[2] ? KV_DTYPE_BF16
	       : bytes[2] > bytes[0]			   ? KV_DTYPE_F16
							   : KV_DTYPE_F32;
}

void kv_st_close(struct kv_st *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->nf; i++) {
		if (st->f[i].map)
			munmap(st->f[i].map, st->f[i].size);
		free(st->f[i].path);
	}
	for (size_t i = 0; i < st->n; i++)
		free(st->t[i].name);
	free(st->f);
	free(st->t);
	free(st);
}
