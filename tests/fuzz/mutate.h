/*
 * mutate.h - what the custom mutators share: libFuzzer's entry points and
 * a small generator (splitmix64) seeded by the seed libFuzzer passes, so
 * that a mutation is reproducible from it. Its state is one variable for
 * all the files of a mutator (the generic tree operations and a format's
 * own draw from the same sequence): defined by the core each mutator
 * links, mutate_json.c or mutate_tsv.c.
 */
#ifndef KV_MUTATE_H
#define KV_MUTATE_H

#include <stddef.h>
#include <stdint.h>

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1,
				 const uint8_t *d2, size_t s2, uint8_t *out,
				 size_t max_out, unsigned int seed);

extern uint64_t rng_state;

/* A number in [0, n), 0 when n is 0. */
static inline uint32_t rnd(uint32_t n)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return n ? (uint32_t)(z % n) : 0;
}

/* One of a static array's elements. */
#define PICK(a) ((a)[rnd(sizeof(a) / sizeof *(a))])

#endif
