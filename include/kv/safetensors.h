/*
 * safetensors.h - a checkpoint's tensors, read from its own files: one
 * model.safetensors, or shards named by model.safetensors.index.json's
 * weight_map. A file is an 8-byte little-endian header length, a JSON
 * header naming each tensor's dtype, shape and [begin, end) byte offsets
 * into the data that follows, then the data. Read strictly, as the
 * reference implementation does: every tensor's bytes are its shape times
 * its element size, the tensors tile the data without gap or overlap, and
 * nothing else is in the header but "__metadata__" (strings). The files
 * are mapped read-only; a tensor's data points into its map.
 */
#ifndef KV_SAFETENSORS_H
#define KV_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "kv.h"

/* The element types safetensors names ("F32", "BF16", ...). */
enum kv_st_dtype {
	KV_ST_F64, KV_ST_F32, KV_ST_F16, KV_ST_BF16, KV_ST_F8_E4M3,
	KV_ST_F8_E5M2, KV_ST_I64, KV_ST_I32, KV_ST_I16, KV_ST_I8, KV_ST_U64,
	KV_ST_U32, KV_ST_U16, KV_ST_U8, KV_ST_BOOL, KV_ST_COUNT
};

/* "BF16", and its element's bytes; for a value out of range "?" and 0. */
const char *kv_st_dtype_name(enum kv_st_dtype t);
uint32_t kv_st_dtype_bytes(enum kv_st_dtype t);

#define KV_ST_MAX_DIMS 8

struct kv_st_tensor {
	char *name;
	enum kv_st_dtype dtype;
	uint32_t ndim;
	uint64_t shape[KV_ST_MAX_DIMS];
	uint64_t elems;       /* the product of the shape (1 for a scalar) */
	uint64_t begin, end;  /* bytes into its file's data */
	uint32_t file;        /* which of the checkpoint's files */
	const void *data;     /* its bytes, once the file is mapped */
};

struct kv_st_file {
	char *path;
	void *map;     /* the whole file, read-only; NULL until mapped */
	uint64_t size; /* bytes of the file */
	uint64_t data; /* where its data starts: 8 + the header's length */
};

struct kv_st {
	struct kv_st_tensor *t; /* sorted by name */
	size_t n;
	struct kv_st_file *f;
	size_t nf;
	uint64_t bytes; /* of every tensor's data */
};

/*
 * Parses the header text[0 .. len) of file `file` of st, whose data is
 * `data` bytes, appending its tensors to st (unsorted until
 * kv_st_open() sorts them). Refuses, with "path: tensor: why" in err, a
 * header that is not a JSON object, a tensor without a known dtype, a
 * shape of whole numbers (at most KV_ST_MAX_DIMS) or [begin, end] offsets,
 * bytes that are not its shape's, offsets past the data, and tensors that
 * overlap or leave a gap in it. Returns 0, KV_EINVAL or KV_ENOMEM.
 */
int kv_st_parse(const char *text, size_t len, uint64_t data, const char *path,
		uint32_t file, struct kv_st *st, char *err);

/* The header's length from a file's first 8 bytes n8 (little-endian),
 * the file being size bytes: 0 with it in *n, or KV_EINVAL with "path: a
 * header of N bytes, in a file of S" in err for one below 2, above 100
 * MiB (the reference's limit) or past the file. */
int kv_st_header_len(const unsigned char n8[8], uint64_t size,
		     const char *path, uint64_t *n, char *err);

/*
 * Reads the index text[0 .. len) (path naming it) of the checkpoint in
 * folder dir: each shard its weight_map names, read with kv_st_parse()
 * (headers only, not mapped), every tensor where the map says and none it
 * leaves out; st's tensors sorted by name. Returns as kv_st_open().
 */
int kv_st_index_parse(const char *text, size_t len, const char *dir,
		      const char *path, struct kv_st *st, char *err);

/*
 * Opens the checkpoint in folder dir: model.safetensors.index.json and
 * the shards its weight_map names, else model.safetensors. Reads each
 * header, checks every tensor the weight_map names is in its shard and no
 * name is in two, refuses a checkpoint of no tensors, and maps every file (map = false reads the headers
 * only). Returns 0; KV_EIO (neither file, or one that does not read);
 * KV_EINVAL (malformed; err says which file and tensor); KV_ENOMEM. On
 * failure nothing stays open or mapped.
 */
int kv_st_open(const char *dir, int map, struct kv_st **out, char *err);

/* The checkpoint in the folder of config_path (a file; "-" has none),
 * mapped unless map is 0: 0 with *out NULL when there is none, else as
 * kv_st_open(). */
int kv_st_beside(const char *config_path, int map, struct kv_st **out,
		 char *err);

/* The type most of st's matrices (2-D float tensors, by bytes) are
 * stored in, as a KV format: KV_DTYPE_F32, _BF16 or _F16 (F32 when none
 * is). */
enum kv_dtype kv_st_weights_dtype(const struct kv_st *st);

/* The tensor of that name, or NULL. */
const struct kv_st_tensor *kv_st_get(const struct kv_st *st,
				     const char *name);

/* Unmaps and frees (NULL is fine). */
void kv_st_close(struct kv_st *st);

#endif
