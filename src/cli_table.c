/*
 * cli_table.c - the tables every tool writes: TSV (the default for pipes),
 * CSV, a JSON array, Markdown, or on a terminal an aligned table a person
 * reads (sizes in units, the answer's columns first unless -v).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kv/units.h"


static int output = -1; /* -o, for tables not --json; -1: by stdout */
static bool verbose;

int cli_output_find(const char *s)
{
	static const char *const names[] = {"tsv", "csv", "json", "md",
					    "table"};
	for (int i = 0; i < 5; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

int cli_output(const char *s, bool *json)
{
	int i = cli_output_find(s);
	if (i < 0)
		return cli_usage("--output: tsv, csv, json, md or table, got "
				 "'%s'",
				 s);
	output = i;
	*json = output == CLI_JSON;
	return 0;
}

void cli_verbose(void)
{
	verbose = true;
}

/* A CSV cell: quoted where it holds a comma, a quote or a line break. */
static void csv_str(const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

/* A Markdown cell: a pipe escaped, a line break a space. */
static void md_str(const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			putchar('\\');
		putchar(*s == '\n' || *s == '\t' ? ' ' : *s);
	}
}

void cli_table_begin(struct cli_table *t, const char *const *cols,
		     size_t ncols, bool json, bool header, bool human)
{
	enum cli_format fmt = json		? CLI_JSON
			      : output == CLI_JSON ? CLI_TSV
			      : output >= 0	? (enum cli_format)output
			      : isatty(fileno(stdout)) ? CLI_TABLE
						      : CLI_TSV;
	*t = (struct cli_table){.cols = cols, .ncols = ncols, .fmt = fmt,
				.json = json, .header = header,
				.human = (human && !json) || fmt == CLI_TABLE};
	for (size_t i = 0; i < ncols && i < CLI_TABLE_COLS; i++)
		t->show[t->nshow++] = (int)i;
	if (json) {
		fputs("[", stdout);
		return;
	}
	if (!header || fmt == CLI_TABLE)
		return;
	for (size_t i = 0; i < ncols; i++) {
		if (fmt == CLI_MD) {
			fputs(i ? " | " : "| ", stdout);
			md_str(cols[i]);
		} else if (fmt == CLI_CSV) {
			if (i)
				putchar(',');
			csv_str(cols[i]);
		} else {
			printf("%s%s", i ? "\t" : "", cols[i]);
		}
	}
	if (fmt == CLI_MD) {
		fputs(" |\n|", stdout);
		for (size_t i = 0; i < ncols; i++)
			fputs("---|", stdout);
	}
	putchar('\n');
	fflush(stdout);
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

/* Keeps a cell of a table for a person (cell() has counted it). */
static void keep(struct cli_table *t, const char *s, bool num)
{
	if (t->cell > t->ncols)
		return; /* past the header's columns */
	if (t->ntext == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		char **x = realloc(t->text, cap * sizeof *x);
		bool *n = x ? realloc(t->num, cap * sizeof *n) : NULL;
		if (x)
			t->text = x;
		if (!n)
			return; /* out of memory: the cell is lost */
		t->num = n;
		t->cap = cap;
	}
	char *c = strdup(s);
	if (!c)
		return;
	t->text[t->ntext] = c;
	t->num[t->ntext++] = num;
}

/* Starts a cell: the separator, and in JSON the key. */
static void cell(struct cli_table *t)
{
	if (t->fmt == CLI_TABLE) {
		t->cell++;
		return;
	} else if (t->json) {
		if (t->cell == 0)
			fputs(t->rows ? ",\n{" : "\n{", stdout);
		else
			putchar(',');
		json_str(t->cell < t->ncols ? t->cols[t->cell] : "?");
		putchar(':');
	} else if (t->fmt == CLI_MD) {
		fputs(t->cell ? " | " : "| ", stdout);
	} else if (t->cell) {
		putchar(t->fmt == CLI_CSV ? ',' : '\t');
	}
	t->cell++;
}

void cli_put_str(struct cli_table *t, const char *s)
{
	cell(t);
	if (t->fmt == CLI_TABLE) {
		keep(t, s, false);
		return;
	}
	if (t->json) {
		json_str(s);
		return;
	}
	if (t->fmt == CLI_CSV) {
		csv_str(s);
		return;
	}
	if (t->fmt == CLI_MD) {
		md_str(s);
		return;
	}
	for (; *s; s++) /* a TSV cell never holds a tab or a newline */
		putchar(*s == '\t' || *s == '\n' ? ' ' : *s);
}

/* A number's text, written or kept. */
static void put_num(struct cli_table *t, const char *s)
{
	cell(t);
	if (t->fmt == CLI_TABLE)
		keep(t, s, true);
	else
		fputs(s, stdout);
}

void cli_put_u64(struct cli_table *t, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
	put_num(t, buf);
}

void cli_put_bytes(struct cli_table *t, uint64_t v)
{
	char buf[64];
	if (!t->human) {
		cli_put_u64(t, v);
		return;
	}
	put_num(t, kv_format_iec(v, buf, sizeof buf));
}

void cli_put_f(struct cli_table *t, double v, int prec)
{
	char buf[64];
	if (!isfinite(v)) {
		cli_put_empty(t);
		return;
	}
	snprintf(buf, sizeof buf, "%.*f", prec, v);
	put_num(t, buf);
}

void cli_put_cell(struct cli_table *t, const struct kv_cell *c)
{
	switch (c->kind) {
	case KV_CELL_STR: cli_put_str(t, c->s); break;
	case KV_CELL_U64: cli_put_u64(t, c->u); break;
	case KV_CELL_BYTES: cli_put_bytes(t, c->u); break;
	case KV_CELL_REAL: cli_put_f(t, c->d, c->prec); break;
	default: cli_put_empty(t); break;
	}
}

void cli_put_empty(struct cli_table *t)
{
	cell(t);
	if (t->fmt == CLI_TABLE)
		keep(t, "", false);
	else if (t->json)
		fputs("null", stdout);
}

void cli_row_end(struct cli_table *t)
{
	if (t->fmt == CLI_TABLE) { /* a short row filled out */
		while (t->cell < t->ncols)
			cli_put_empty(t);
	} else {
		fputs(t->json ? "}" : t->fmt == CLI_MD ? " |\n" : "\n",
		      stdout);
		fflush(stdout);
	}
	t->rows++;
	t->cell = 0;
}

void cli_table_brief(struct cli_table *t, const char *const *names,
		     size_t n)
{
	if (t->fmt != CLI_TABLE || verbose)
		return;
	t->nshow = 0;
	for (size_t i = 0; i < n && t->nshow < CLI_TABLE_COLS; i++)
		for (size_t c = 0; c < t->ncols; c++)
			if (!strcmp(names[i], t->cols[c]))
				t->show[t->nshow++] = (int)c;
}

/* The kept cells, aligned: names over their columns, numbers to the
 * right, two spaces apart. */
static void print_table(struct cli_table *t)
{
	size_t w[CLI_TABLE_COLS] = {0}, n = t->ntext / (t->ncols ? t->ncols : 1);
	for (size_t k = 0; k < t->nshow; k++) {
		size_t c = (size_t)t->show[k];
		w[k] = t->header ? strlen(t->cols[c]) : 0;
		for (size_t r = 0; r < n; r++) {
			size_t len = strlen(t->text[r * t->ncols + c]);
			w[k] = len > w[k] ? len : w[k];
		}
	}
	for (size_t r = t->header ? 0 : 1; r <= n; r++) {
		for (size_t k = 0; k < t->nshow; k++) {
			size_t c = (size_t)t->show[k];
			const char *s = r ? t->text[(r - 1) * t->ncols + c]
					  : t->cols[c];
			bool right = r && t->num[(r - 1) * t->ncols + c];
			int pad = (int)w[k], last = k + 1 == t->nshow;
			if (right)
				printf("%*s", pad, s);
			else
				printf("%-*s", last ? 0 : pad, s);
			if (!last)
				fputs("  ", stdout);
		}
		putchar('\n');
	}
}

void cli_table_end(struct cli_table *t)
{
	if (t->json)
		fputs(t->rows ? "\n]\n" : "]\n", stdout);
	if (t->fmt == CLI_TABLE) {
		if (t->ntext == t->rows * t->ncols)
			print_table(t);
		else
			cli_error("out of memory: the table is lost");
		for (size_t i = 0; i < t->ntext; i++)
			free(t->text[i]);
		free(t->text);
		free(t->num);
		t->text = NULL;
		t->num = NULL;
		t->ntext = t->cap = 0;
	}
	fflush(stdout);
}

