/* kv.c - error strings shared by every module (the checked arithmetic is
 * inline, in kv.h). */
#include "kv/kv.h"

const char *kv_strerror(int err)
{
	switch (err) {
	case KV_OK: return "success";
	case KV_EINVAL: return "invalid input";
	case KV_ERANGE: return "result does not fit in 64 bits";
	case KV_ENOMEM: return "out of memory";
	case KV_EIO: return "input/output error";
	case KV_EUNSUP: return "not supported";
	}
	return "unknown error";
}
