/*
 * st_write.h - writes safetensors files for the tests: a header built
 * from a list of tensors (name, dtype, shape, bytes) laid end to end, as
 * the reference writer lays them, or from a header text given whole.
 */
#ifndef KV_ST_WRITE_H
#define KV_ST_WRITE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct st_w {
	const char *name, *dtype;
	uint64_t shape[4];
	int ndim;
	const void *data;
	uint64_t bytes;
};

/* A file of header text `h` and `data` bytes of zeros. */
static inline int st_write_raw(const char *path, const char *h, size_t data)
{
	FILE *f = fopen(path, "wb");
	uint64_t n = strlen(h);
	if (!f)
		return -1;
	for (int i = 0; i < 8; i++)
		fputc((int)(n >> (8 * i) & 0xff), f);
	fputs(h, f);
	for (size_t i = 0; i < data; i++)
		fputc(0, f);
	return fclose(f);
}

/* A file of the n tensors t, their data in order. */
static inline int st_write(const char *path, const struct st_w *t, int n)
{
	char h[65536];
	size_t at = 0, len = 0;
	len += (size_t)snprintf(h + len, sizeof h - len, "{");
	for (int i = 0; i < n; i++) {
		len += (size_t)snprintf(h + len, sizeof h - len,
					"%s\"%s\":{\"dtype\":\"%s\",\"shape\":[",
					i ? "," : "", t[i].name, t[i].dtype);
		for (int d = 0; d < t[i].ndim; d++)
			len += (size_t)snprintf(h + len, sizeof h - len,
						"%s%llu", d ? "," : "",
						(unsigned long long)t[i].shape[d]);
		len += (size_t)snprintf(h + len, sizeof h - len,
					"],\"data_offsets\":[%zu,%zu]}", at,
					at + (size_t)t[i].bytes);
		at += (size_t)t[i].bytes;
	}
	len += (size_t)snprintf(h + len, sizeof h - len, "}");
	while (len % 8) /* the reference pads the header to 8 bytes */
		h[len++] = ' ';
	h[len] = '\0';
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	for (int i = 0; i < 8; i++)
		fputc((int)((uint64_t)len >> (8 * i) & 0xff), f);
	fwrite(h, 1, len, f);
	for (int i = 0; i < n; i++)
		fwrite(t[i].data, 1, (size_t)t[i].bytes, f);
	return fclose(f);
}

#endif
