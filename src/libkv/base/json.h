/*
 * json.h - reading a JSON file strictly (RFC 8259): model configs
 * (cfg.c, model.c), the GPU table (gpu.c), a checkpoint's index and
 * safetensors headers (ckpt.c, safetensors.c).
 */
#ifndef KV_JSON_H
#define KV_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* json[0 .. len) as a tree into *out. Besides what cJSON refuses, this
 * refuses what it lets through: numbers RFC 8259 does not write (08, 8.),
 * control characters and bad \u escapes in strings, bytes that are not
 * UTF-8, a NUL written as \\u0000 (C's strings would end there), a
 * UTF-8 byte-order mark before the value (Python's json refuses it too),
 * anything after the value, and a key given twice in one object.
 * Returns 0, KV_EINVAL with "path: why, at line L, column C" in err, or
 * KV_ENOMEM. */
int kv_json_read(const char *json, size_t len, const char *path,
		 cJSON **out, char *err);

/* The whole of the file at path, a regular file of at most max bytes,
 * into *text (from malloc, NUL-terminated; the caller frees), *len bytes.
 * Returns 0; KV_EIO with "path: why" in err (it does not open, or is not
 * a file); KV_EINVAL ("path: larger than N MiB"); KV_ENOMEM. */
int kv_file_read(const char *path, size_t max, char **text, size_t *len,
		 char *err);

/* "path: " and the message into err (one line, KV_ERRLEN); returns
 * KV_EINVAL. The tables' readers (gpus.json, efficiency.json, result
 * files) say each bad field so. */
int kv_fail(char *err, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A number of a tree kv_json_read() returns that its text does not write
 * as an integer a double holds exactly (32.0, 32e0, 2^53 + 1): a bit of
 * its type above cJSON's own. */
#define KV_JSON_NOTINT (1 << 12)

/* it is a number written as an integer (no fraction, no exponent), in
 * [0, max] (max at most 2^53): true with it in *out. An integer field
 * of a file whose own reader takes integers only (safetensors, tokenizers)
 * is read with this, so that 32.0 is refused where it is refused. */
bool kv_json_whole(const cJSON *it, uint64_t max, uint64_t *out);

#endif
