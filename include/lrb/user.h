/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb in user space: what the user-space build adds to the API of
 * <lrb/lrb.h>, which includes this header: clocks, thread setup, the
 * number of CPUs, and a reader's wait for data.
 */
#ifndef _LRB_USER_H
#define _LRB_USER_H

#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * lrb_clock_default - the user-space default lrb clock
 *
 * Return: CLOCK_MONOTONIC in nanoseconds.
 */
static inline uint64_t lrb_clock_default(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/**
 * lrb_clock_cycles - a cheaper clock: the CPU's cycle counter
 *
 * Return: the time stamp counter on x86 (constant rate on modern CPUs; see
 * lrb_clock_cycles_freq()), CLOCK_MONOTONIC elsewhere. A writer reads the
 * clock after the write position, and the clock must not be read earlier
 * than that load, or a record could carry a timestamp older than the one
 * before it in the buffer.
 */
static inline uint64_t lrb_clock_cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
	/* lfence: rdtsc must not run before the load of the write position */
	__builtin_ia32_lfence();
	return __builtin_ia32_rdtsc();
#else
	return lrb_clock_default();
#endif
}

uint64_t lrb_clock_cycles_freq(void);
int lrb_thread_init(void);
int lrb_possible_cpus(void);
struct lrb_buf;
int lrb_wait_readable(struct lrb_buf *buf, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* _LRB_USER_H */
