/*
 * machine.h - this machine's own memory facts: the fields of
 * /proc/meminfo, and the memory a run may take (one policy for every
 * tool).
 */
#ifndef KV_MACHINE_H
#define KV_MACHINE_H

#include <stdint.h>

#include "kv.h"

/* MemAvailable of /proc/meminfo text, in bytes. Returns 0 or KV_EINVAL. */
int kv_meminfo_parse(const char *text, uint64_t *avail);
/* Any "Field:   N kB" line of /proc/meminfo text ("MemTotal"), in
 * bytes. Returns 0 or KV_EINVAL (no such line, or not in kB). */
int kv_meminfo_field(const char *text, const char *field, uint64_t *bytes);
/* MemAvailable of this machine. Returns 0, KV_EIO or KV_EINVAL. */
int kv_mem_available(uint64_t *avail);

/* The memory a run may take, one policy for every tool: the size
 * $KV_MEM_AVAILABLE names when set, else this machine's MemAvailable, of
 * which 9/10 (the rest left to the system). *avail gets the memory
 * available, *usable the part a run may take; both 0 when neither is
 * known (then any run may try). Returns 0, or KV_EINVAL for a
 * KV_MEM_AVAILABLE that is not a size (err says). */
int kv_run_memory(uint64_t *avail, uint64_t *usable, char *err);

#endif
