/*
 * json.h - reading a JSON file strictly (RFC 8259), for model configs
 * and the GPU table. Shared by model.c and gpu.c only.
 */
#ifndef KV_JSON_H
#define KV_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* json[0 .. len) as a tree into *out. Besides what cJSON refuses, this
 * refuses what it lets through: numbers RFC 8259 does not write (08, 8.),
 * control characters and bad \u escapes in strings, bytes that are not
 * UTF-8, anything after the value, and a key given twice in one object.
 * Returns 0, KV_EINVAL with "path: why, at line L, column C" in err, or
 * KV_ENOMEM. */
int kv_json_read(const char *json, size_t len, const char *path,
		 cJSON **out, char *err);

#endif
