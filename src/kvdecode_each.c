/*
 * kvdecode_each.c - kvdecode's lists and the walk over the runs they
 * make: --users, --block-size and --threads given as lists run the
 * decode once per combination, in order (users, then block size, then
 * threads, the last varying fastest), each run's engine options set up
 * here. What the runs print on stdout is one table, led by a column for
 * each option given as a list of more than one value (unless the rows
 * have it already); one value adds none, so a single run prints as it
 * always has.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kvdecode.h"

static const struct {
	int key;
	const char *opt, *col;
	uint64_t lo, hi;
} lists[KVD_LISTS] = {
	[KVD_USERS] = {'u', "--users", "users", 1, 65536},
	[KVD_BLOCK] = {'b', "--block-size", "block_size", 0, UINT32_MAX},
	[KVD_THREADS] = {'j', "--threads", "threads", 1, 256},
};

/* Where e keeps list i's value, and the value. */
static uint64_t *value(struct kv_decode_ask *e, int i)
{
	return i == KVD_USERS ? &e->users
	       : i == KVD_BLOCK ? &e->block_size
				: &e->threads;
}

static uint64_t now(const struct kv_decode_ask *e, int i)
{
	return i == KVD_USERS ? e->users
	       : i == KVD_BLOCK ? e->block_size
				: e->threads;
}

int kvd_list(int c, const char *s, struct kvd_opts *a)
{
	for (int i = 0; i < KVD_LISTS; i++) {
		if (lists[i].key != c)
			continue;
		int e = cli_u64s(lists[i].opt, s, lists[i].lo, lists[i].hi,
				 &a->list[i], &a->nlist[i]);
		if (e)
			return e;
		*value(&a->e, i) = a->list[i][0];
		if (a->nlist[i] == 1) { /* one value: no list */
			free(a->list[i]);
			a->list[i] = NULL;
			a->nlist[i] = 0;
		}
		return 0;
	}
	return -1;
}

size_t kvd_count(const struct kvd_opts *a)
{
	size_t n = 1;
	for (int i = 0; i < KVD_LISTS; i++)
		if (a->list[i])
			n *= a->nlist[i];
	return n;
}

/* Sets r up as run r->k's: its values of the lists, then its engine. */
static void set_up(struct kvd_run *r)
{
	const struct kvd_opts *a = r->a;
	size_t k = r->k;
	r->e = a->e;
	r->e.ckpt = r->s->ckpt;
	for (int i = KVD_LISTS - 1; i >= 0; i--)
		if (a->list[i]) {
			*value(&r->e, i) = a->list[i][k % a->nlist[i]];
			k /= a->nlist[i];
		}
	r->o = kv_decode_ask_opts(&r->e);
	kv_decode_engine_opts(&r->o, a->prompt, a->gen, a->with, a->without);
}

void kvd_run_first(struct kvd_run *r, const struct kvd_opts *a,
		   struct kvd_state *s)
{
	*r = (struct kvd_run){.a = a, .s = s};
	if (kvd_run_more(r))
		set_up(r);
}

bool kvd_run_more(const struct kvd_run *r)
{
	return r->k < r->a->nruns;
}

void kvd_run_next(struct kvd_run *r)
{
	r->k++;
	if (kvd_run_more(r))
		set_up(r);
}

/* "--users 2 --threads 4": the run's values of the lists. */
static const char *label(const struct kvd_run *r, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < KVD_LISTS && len < n; i++)
		if (r->a->list[i])
			len += (size_t)snprintf(
				buf + len, n - len, "%s%s %llu",
				len ? " " : "", lists[i].opt,
				(unsigned long long)now(&r->e, i));
	return buf;
}

const char *kvd_about(const struct kvd_run *r, char *buf, size_t n)
{
	char l[96];
	if (r->a->nruns < 2)
		buf[0] = '\0';
	else
		snprintf(buf, n, "%s: ", label(r, l, sizeof l));
	return buf;
}

void kvd_say_run(const struct kvd_run *r)
{
	char l[96];
	if (r->a->nruns < 2)
		return;
	fflush(stdout);
	fprintf(stderr, "%s: run %zu of %zu: %s\n", cli_prog(), r->k + 1,
		r->a->nruns, label(r, l, sizeof l));
}

struct cli_table *kvd_table(const struct kvd_run *r,
			    const char *const *cols, size_t ncols)
{
	struct kvd_state *s = r->s;
	size_t k = 0;
	if (s->open)
		return &s->t;
	for (int i = 0; i < KVD_LISTS; i++) {
		s->lead[i] = r->a->list[i] != NULL;
		for (size_t j = 0; s->lead[i] && j < ncols; j++)
			s->lead[i] = strcmp(cols[j], lists[i].col) != 0;
		if (s->lead[i])
			s->cols[k++] = lists[i].col;
	}
	for (size_t j = 0; j < ncols && k < CLI_NCOLS(s->cols); j++)
		s->cols[k++] = cols[j];
	cli_table_begin(&s->t, s->cols, k, r->a->json, r->a->header, false);
	s->open = true;
	return &s->t;
}

void kvd_lead(const struct kvd_run *r, struct cli_table *t)
{
	for (int i = 0; i < KVD_LISTS; i++)
		if (r->s->lead[i])
			cli_put_u64(t, now(&r->e, i));
}

void kvd_table_done(const struct kvd_run *r)
{
	struct kvd_state *s = r->s;
	if (s->open && (r->k + 1 >= r->a->nruns || s->t.fmt == CLI_TABLE))
		kvd_table_close(s);
}

void kvd_table_close(struct kvd_state *s)
{
	if (s->open)
		cli_table_end(&s->t);
	s->open = false;
}
