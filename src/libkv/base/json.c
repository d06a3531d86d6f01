/*
 * json.c - JSON read strictly: cJSON builds the tree, and a scan of the
 * text first refuses what cJSON would let through (see json.h), so that
 * a file Python's json refuses is refused here too, with the line and
 * column of the fault.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include "kv/kv.h"

/* Line and column (1-based, in bytes) of a byte offset. */
static void locate(const char *json, size_t off, unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off; i++) {
		if (json[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* The first offset from off that is not a JSON blank. */
static size_t skip_blanks(const char *json, size_t off, size_t len)
{
	while (off < len && json[off] && strchr(" \t\r\n", json[off]))
		off++;
	return off;
}

static bool digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* The end of the number RFC 8259 writes at json[i]: -?(0|[1-9][0-9]*)
 * (.[0-9]+)?([eE][+-]?[0-9]+)?, not followed by more of a number; 0 when
 * there is none. */
static size_t number_end(const char *json, size_t i, size_t len)
{
	size_t j = i + (json[i] == '-');
	if (j < len && json[j] == '0')
		j++;
	else if (j < len && digit(json[j]))
		while (j < len && digit(json[j]))
			j++;
	else
		return 0;
	if (j < len && json[j] == '.') {
		if (++j >= len || !digit(json[j]))
			return 0;
		while (j < len && digit(json[j]))
			j++;
	}
	if (j < len && (json[j] == 'e' || json[j] == 'E')) {
		j++;
		if (j < len && (json[j] == '+' || json[j] == '-'))
			j++;
		if (j >= len || !digit(json[j]))
			return 0;
		while (j < len && digit(json[j]))
			j++;
	}
	if (j < len && json[j] && (digit(json[j]) || strchr(".eE+-", json[j])))
		return 0;
	return j;
}

/* Bytes of the UTF-8 sequence at s (at most n of them), or 0 when it is
 * not one: no overlong forms, no surrogates, nothing past U+10FFFF. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t k = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	if (c < 0xc2 || c > 0xf4 || k > n)
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
		return 0;
	return k;
}

/* What the scan finds wrong, at *at; NULL when nothing. Structure is
 * cJSON's to check: this looks at numbers and strings only. */
static const char *scan(const char *json, size_t len, size_t *at)
{
	const unsigned char *u = (const unsigned char *)json;
	for (size_t i = 0; i < len; i++) {
		*at = i;
		if (json[i] == '-' || digit(json[i])) {
			size_t j = number_end(json, i, len);
			if (!j)
				return "malformed number";
			i = j - 1;
			continue;
		}
		if (json[i] != '"')
			continue;
		for (i++; i < len && json[i] != '"'; i++) {
			*at = i;
			if (u[i] < 0x20)
				return "a control character in a string";
			if (u[i] >= 0x80) {
				size_t k = utf8_len(u + i, len - i);
				if (!k)
					return "bytes that are not UTF-8";
				i += k - 1;
			} else if (json[i] == '\\') {
				if (++i >= len)
					break;
				if (json[i] == 'u') {
					for (size_t h = 1; h <= 4; h++)
						if (i + h >= len ||
						    !isxdigit(u[i + h]))
							return "a bad \\u escape";
					/* C's strings end at it: a name
					 * would be cut short */
					if (!memcmp(json + i + 1, "0000", 4))
						return "a NUL (\\u0000) in a "
						       "string";
					i += 4;
				} else if (!json[i] ||
					   !strchr("\"\\/bfnrt", json[i])) {
					return "a bad escape";
				}
			}
		}
		*at = i;
	}
	return NULL;
}

/* The offset of the quote that ends the string opened at json[i] (len
 * when it does not end), escapes skipped. */
static size_t string_end(const char *json, size_t len, size_t i)
{
	for (i++; i < len && json[i] != '"'; i++)
		if (json[i] == '\\')
			i++;
	return i < len ? i : len;
}

/* The next number written in json[*pos .. len), strings skipped: 1 with
 * *notint set when it is not an integer a double holds exactly (it has a
 * fraction or an exponent, or is beyond 2^53), *pos past it; 0 when
 * there is none. */
static int next_number(const char *json, size_t len, size_t *pos,
		       bool *notint)
{
	for (size_t i = *pos; i < len; i++) {
		char ch = json[i];
		if (ch == '"') {
			i = string_end(json, len, i);
		} else if (ch == '-' || digit(ch)) {
			size_t j = number_end(json, i, len);
			char buf[24];
			*pos = j ? j : i + 1;
			*notint = !j || j - i >= sizeof buf;
			for (size_t k = i; k < j && !*notint; k++)
				*notint = json[k] == '.' || json[k] == 'e' ||
					  json[k] == 'E';
			/* 15 digits are below 2^53: only a longer one is
			 * read to know */
			if (!*notint && j - i - (json[i] == '-') > 15) {
				memcpy(buf, json + i, j - i);
				buf[j - i] = '\0';
				errno = 0;
				unsigned long long v = strtoull(
					buf + (buf[0] == '-'), NULL, 10);
				*notint = errno || v > 9007199254740992ULL;
			}
			return 1;
		}
	}
	return 0;
}

/* Marks each number of the tree under it that its text does not write
 * as an exact integer: cJSON keeps only the value, and in the tree the
 * numbers come in the order of the text. */
static void mark_reals(cJSON *it, const char *json, size_t len, size_t *pos)
{
	for (; it; it = it->next) {
		bool notint;
		if (cJSON_IsNumber(it) &&
		    next_number(json, len, pos, &notint) && notint)
			it->type |= KV_JSON_NOTINT;
		mark_reals(it->child, json, len, pos);
	}
}

bool kv_json_whole(const cJSON *it, uint64_t max, uint64_t *out)
{
	if (!cJSON_IsNumber(it) || (it->type & KV_JSON_NOTINT) ||
	    !(it->valuedouble >= 0) || it->valuedouble > (double)max)
		return false;
	*out = (uint64_t)it->valuedouble;
	return *out <= max;
}

/* cJSON says NULL both for bad JSON and for a failed allocation: its
 * allocations go through here, so that the two can be told apart. */
static _Thread_local bool json_oom;

static void *json_malloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		json_oom = true;
	return p;
}

/* Deepest nesting of arrays and objects in json[0 .. len), strings
 * skipped: cJSON stops at CJSON_NESTING_LIMIT levels and says only that
 * it stopped. */
static unsigned json_depth(const char *json, size_t len)
{
	unsigned depth = 0, most = 0;
	for (size_t i = 0; i < len; i++) {
		char ch = json[i];
		if (ch == '"') {
			i = string_end(json, len, i);
		} else if (ch == '[' || ch == '{') {
			most = ++depth > most ? depth : most;
		} else if ((ch == ']' || ch == '}') && depth) {
			depth--;
		}
	}
	return most;
}

static int by_key(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	return strcmp(x->string, y->string);
}

/* A key given twice in one object, anywhere under it, into where (its
 * dotted path): 1; Python's json keeps the last and cJSON the first, so
 * a file that has one means two things. */
static int duplicate_key(const cJSON *obj, char *where, size_t n, size_t at)
{
	int cnt = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, obj)
		cnt++;
	if (cJSON_IsObject(obj) && cnt > 1) {
		const cJSON **keys = malloc((size_t)cnt * sizeof *keys);
		if (!keys)
			return KV_ENOMEM;
		int k = 0;
		cJSON_ArrayForEach(it, obj)
			keys[k++] = it;
		qsort(keys, (size_t)cnt, sizeof *keys, by_key);
		const cJSON *dup = NULL;
		for (k = 1; k < cnt && !dup; k++)
			if (!strcmp(keys[k - 1]->string, keys[k]->string))
				dup = keys[k];
		free(keys);
		if (dup) {
			snprintf(where + at, n - at, "%s%.60s", at ? "." : "",
				 dup->string);
			return 1;
		}
	}
	cJSON_ArrayForEach(it, obj)
	{
		if (!cJSON_IsObject(it) && !cJSON_IsArray(it))
			continue;
		size_t next = at;
		if (it->string && at < n)
			next += (size_t)snprintf(where + at, n - at, "%s%.60s",
						 at ? "." : "", it->string);
		if (next >= n)
			next = n - 1;
		int e = duplicate_key(it, where, n, next);
		if (e)
			return e;
		where[at] = '\0';
	}
	return 0;
}

/* "path: not JSON: why at line L, column C, near '...'" for offset off. */
static int not_json(const char *json, size_t len, size_t off,
		    const char *path, const char *why, char *err)
{
	unsigned line, col;
	locate(json, off, &line, &col);
	char near[24];
	size_t k = 0;
	for (; k + 1 < sizeof near && off + k < len; k++) {
		char ch = json[off + k];
		if (ch == '\n' || ch == '\r' || ch == '\0')
			break;
		near[k] = (unsigned char)ch < 0x20 || (unsigned char)ch >= 0x7f
				  ? '?'
				  : ch;
	}
	near[k] = '\0';
	snprintf(err, KV_ERRLEN,
		 "%.400s: not JSON: %s at line %u, column %u%s%s%s", path,
		 why, line, col, k ? ", near '" : "", near, k ? "'" : "");
	return KV_EINVAL;
}

int kv_json_read(const char *json, size_t len, const char *path,
		 cJSON **out, char *err)
{
	*out = NULL;
	size_t at = 0;
	if (len >= 3 && !memcmp(json, "\xEF\xBB\xBF", 3))
		return not_json(json, len, 0, path, "a UTF-8 byte-order mark, "
				"which JSON does not begin with", err);
	const char *why = scan(json, len, &at);
	const char *end = NULL;
	cJSON_Hooks hooks = {json_malloc, free};
	cJSON_InitHooks(&hooks);
	json_oom = false;
	cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
	if (!root && json_oom) {
		snprintf(err, KV_ERRLEN, "%.400s: out of memory", path);
		return KV_ENOMEM;
	}
	size_t off = end && end >= json ? (size_t)(end - json) : len;
	if (off > len)
		off = len;
	if (why && (root || at <= off)) {
		cJSON_Delete(root);
		return not_json(json, len, at, path, why, err);
	}
	if (!root) {
		unsigned line, col;
		locate(json, off, &line, &col);
		if (json_depth(json, off + 1 < len ? off + 1 : len) >
		    CJSON_NESTING_LIMIT) {
			snprintf(err, KV_ERRLEN,
				 "%.400s: arrays and objects nested deeper "
				 "than the %d levels the JSON reader takes, at "
				 "line %u, column %u",
				 path, CJSON_NESTING_LIMIT, line, col);
			return KV_EINVAL;
		}
		if (skip_blanks(json, off, len) >= len) {
			snprintf(err, KV_ERRLEN,
				 "%.400s: not JSON: unexpected end of input at "
				 "line %u, column %u",
				 path, line, col);
			return KV_EINVAL;
		}
		return not_json(json, len, off, path, "syntax error", err);
	}
	off = skip_blanks(json, off, len);
	int e = 0;
	char dup[256] = "";
	if (off < len) { /* a NUL too, as Python's json.load() reads it */
		unsigned line, col;
		locate(json, off, &line, &col);
		snprintf(err, KV_ERRLEN,
			 "%.400s: not JSON: %s after the end of the value, "
			 "at line %u, column %u",
			 path, json[off] ? "more" : "a NUL byte", line, col);
		e = KV_EINVAL;
	} else if ((e = duplicate_key(root, dup, sizeof dup, 0)) == 1) {
		snprintf(err, KV_ERRLEN,
			 "%.400s: %s: given twice; Python's json reads the "
			 "last, other readers the first",
			 path, dup);
		e = KV_EINVAL;
	} else if (e) {
		snprintf(err, KV_ERRLEN, "%.400s: out of memory", path);
	}
	if (e) {
		cJSON_Delete(root);
		return e;
	}
	size_t pos = 0;
	mark_reals(root, json, len, &pos);
	*out = root;
	return 0;
}

int kv_file_read(const char *path, size_t max, char **text, size_t *len,
		 char *err)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	int e = 0;
	*text = NULL;
	*len = 0;
	if (!f || fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, KV_ERRLEN, "%.400s: %s", path,
			 f && !S_ISREG(st.st_mode) ? "not a file"
						   : strerror(errno));
		e = KV_EIO;
	} else if ((uint64_t)st.st_size > max) {
		snprintf(err, KV_ERRLEN, "%.400s: larger than %zu MiB", path,
			 max >> 20);
		e = KV_EINVAL;
	} else if (!(*text = malloc((size_t)st.st_size + 1))) {
		snprintf(err, KV_ERRLEN, "%.400s: out of memory", path);
		e = KV_ENOMEM;
	} else if (fread(*text, 1, (size_t)st.st_size, f) !=
		   (size_t)st.st_size) {
		snprintf(err, KV_ERRLEN, "%.400s: %s", path, strerror(EIO));
		free(*text);
		*text = NULL;
		e = KV_EIO;
	} else {
		(*text)[st.st_size] = '\0';
		*len = (size_t)st.st_size;
	}
	if (f)
		fclose(f);
	return e;
}

int kv_fail(char *err, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(err, KV_ERRLEN, "%.400s: %s", path, msg);
	return KV_EINVAL;
}
