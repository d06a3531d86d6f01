/*
 * gguf.h - the header of a GGUF file (llama.cpp's model format), read
 * strictly and only the header: the magic "GGUF", the version (2 or 3),
 * the counts of tensors and of metadata, every key and value, then each
 * tensor's name, shape, ggml type and offset. The tensors' data is never
 * read or mapped: a 40 GB file answers in the time of its header. Split
 * models (NAME-00001-of-0000N.gguf) are read as one, every part's tensors
 * counted.
 *
 * Every count and length is checked against the bytes the file holds and
 * against limits no real model reaches, before anything is allocated.
 */
#ifndef KV_GGUF_H
#define KV_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kv.h"

/* A metadata value's type, as the file numbers it. */
enum kv_gguf_type {
	KV_GGUF_U8, KV_GGUF_I8, KV_GGUF_U16, KV_GGUF_I16, KV_GGUF_U32,
	KV_GGUF_I32, KV_GGUF_F32, KV_GGUF_BOOL, KV_GGUF_STRING, KV_GGUF_ARRAY,
	KV_GGUF_U64, KV_GGUF_I64, KV_GGUF_F64, KV_GGUF_TYPE_COUNT
};

/* "uint32", "string", "array", ...; "?" out of range. */
const char *kv_gguf_type_name(enum kv_gguf_type t);

#define KV_GGUF_STR_KEPT 4096   /* longer strings: their length only */
#define KV_GGUF_ARR_KEPT 65536  /* longer arrays: their count only */
#define KV_GGUF_MAX_DIMS 4      /* GGML_MAX_DIMS */
#define KV_GGUF_NAME_MAX 63     /* a tensor's name (GGML_MAX_NAME - 1) */

/* One key and its value. */
struct kv_gguf_kv {
	char *key;
	enum kv_gguf_type type;
	enum kv_gguf_type elem; /* an array's elements' type */
	uint64_t n;             /* an array's elements; a string's bytes */
	union {
		uint64_t u;     /* U8 .. U64, BOOL (0 or 1) */
		int64_t i;      /* I8 .. I64 */
		double f;       /* F32, F64 */
	} v;
	char *str;     /* a string, NUL-ended, when n <= KV_GGUF_STR_KEPT;
			  else NULL */
	double *arr;   /* a numeric or bool array's values, when n <=
			  KV_GGUF_ARR_KEPT; else NULL (strings: NULL) */
};

/* One tensor's description. */
struct kv_gguf_tensor {
	char name[KV_GGUF_NAME_MAX + 1];
	uint32_t n_dims;
	uint64_t ne[KV_GGUF_MAX_DIMS]; /* elements per dimension, 1 past
					  n_dims */
	uint32_t type;                 /* ggml type */
	uint64_t offset;               /* into its file's data */
	uint64_t bytes;                /* its data: rows x row bytes */
	uint32_t part;                 /* which file of a split, from 0 */
};

struct kv_gguf {
	uint32_t version;         /* 2 or 3 */
	uint32_t alignment;       /* general.alignment, or 32 */
	struct kv_gguf_kv *kv;    /* the first file's keys, in file order */
	size_t n_kv;
	struct kv_gguf_tensor *t; /* every part's tensors, in file order */
	size_t n_t;
	uint32_t parts;           /* files read: 1, or split.count */
	uint64_t bytes;           /* every tensor's data */
	uint64_t file_bytes;      /* the files' sizes added */
};

/*
 * Reads the header of the GGUF at path (all the parts of a split model,
 * from NAME-00001-of-0000N.gguf whichever part is named). Returns 0 with
 * *out (free with kv_gguf_free); KV_EINVAL with one line in err (KV_ERRLEN
 * bytes) naming the file and the field for a file that is not a GGUF,
 * truncated, or inconsistent; KV_EIO when it cannot be read; KV_ENOMEM.
 */
int kv_gguf_open(const char *path, struct kv_gguf **out, char *err);

/* The same for a whole file already in memory (len bytes); name only
 * names it in messages. A split's other parts are not looked for. */
int kv_gguf_parse(const void *buf, size_t len, const char *name,
		  struct kv_gguf **out, char *err);

void kv_gguf_free(struct kv_gguf *g);

/* The key, or NULL. */
const struct kv_gguf_kv *kv_gguf_find(const struct kv_gguf *g,
				      const char *key);

/* Whether the first bytes (len of them) are a GGUF's magic. */
bool kv_gguf_magic(const void *buf, size_t len);

/*
 * ggml's storage of a tensor type (ggml.c's type_traits): values per block
 * and bytes per block (F16: 1 and 2; Q4_K: 256 and 144); its name
 * ("Q4_K"). Returns false for a type ggml no longer has or never had.
 */
bool kv_gguf_ggml_type(uint32_t type, uint32_t *block, uint32_t *bytes,
		       const char **name);

/* Bytes of a tensor of ne[0..n_dims) of ggml type `type`: rows of ne[0]
 * values, ne[0] a multiple of the block. 0 with *bytes, KV_EINVAL for a
 * type unknown or a row not whole blocks, KV_ERANGE past 2^63. */
int kv_gguf_tensor_bytes(uint32_t type, uint32_t n_dims, const uint64_t *ne,
			 uint64_t *bytes);

#endif
