/*
 * json.h - reading a JSON file strictly (RFC 8259): model configs
 * (cfg.c, model.c), the GPU table (gpu.c), a checkpoint's index and
 * safetensors headers (ckpt.c, safetensors.c).
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
