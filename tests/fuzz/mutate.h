/*
 * mutate.h - what the custom mutators share: libFuzzer's entry points and
 * a small generator (splitmix64) seeded by the seed libFuzzer passes, so
 * that a mutation is reproducible from it.
 */
#ifndef KV_MUTATE_H
#define KV_MUTATE_H

#include <stddef.h>
#include <stdint.h>

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed);

static uint64_t rng_state;

/* A number in [0, n), 0 when n is 0. */
static uint32_t rnd(uint32_t n)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return n ? (uint32_t)(z % n) : 0;
}

#endif
