/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the two stress tests share, tests/user/stress.c (threads, signal
 * handlers, migration, sanitizers) and tests/kunit/stress_test.c
 * (kthreads and hrtimers on every CPU): the random numbers, how a record's
 * body follows from its writer and sequence number, its checksum, and the
 * classes of write failures. Written once so that a record means the same
 * in both.
 *
 * The includer provides u8, u32, u64, size_t and the errno values; @BODY_MAX
 * is its own (the longest record body) and passed in.
 */
#ifndef _LRB_TEST_STRESS_H
#define _LRB_TEST_STRESS_H

/* Failed reservations by error, and the loss counter each class feeds. */
enum { E_NOBUFS, E_AGAIN, E_MSGSIZE, E_BUSY, E_OTHER, NR_ERR };

static inline int stress_err(int err)
{
	switch (err) {
	case -ENOBUFS:
		return E_NOBUFS;
	case -EAGAIN:
		return E_AGAIN;
	case -EMSGSIZE:
		return E_MSGSIZE;
	case -EBUSY:
		return E_BUSY;
	}
	return E_OTHER;
}

/* xorshift64: the writers' and readers' own random numbers. */
static inline u64 stress_rng(u64 *s)
{
	u64 x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* splitmix64's finalizer. */
static inline u64 stress_mix(u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* Everything about a record but its position follows from this key. */
static inline u64 stress_key(u32 writer, u32 ctx, u64 seq)
{
	return stress_mix(seq ^ (u64)writer << 40 ^ (u64)ctx << 56 ^
			  0x2545f4914f6cdd1dULL);
}

static inline u32 stress_body_len(u64 key, u32 body_max)
{
	/* a 32-bit modulo: 32-bit kernels have no 64-bit division */
	return (u32)key % (body_max + 1);
}

static inline u8 stress_pattern(u64 key, u32 i)
{
	return (u8)(key >> ((i & 7) * 8)) + (u8)i;
}

#define STRESS_FNV_BASIS 2166136261U

/* FNV-1a, the records' checksum: continue @h over @len bytes at @p. */
static inline u32 stress_fnv(u32 h, const void *p, size_t len)
{
	const u8 *c = p;

	while (len--)
		h = (h ^ *c++) * 16777619U;
	return h;
}

#endif /* _LRB_TEST_STRESS_H */
