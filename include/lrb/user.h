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
 * lrb_clock_monotonic() - CLOCK_MONOTONIC in nanoseconds, out of line
 *
 * lrb_clock_default() for programs built without POSIX declarations
 * (strict ISO C, -std=c11 without _POSIX_C_SOURCE): the same clock, at the
 * price of a call.
 *
 * Context: any context, signal handlers included.
 * Return: CLOCK_MONOTONIC in nanoseconds.
 */
uint64_t lrb_clock_monotonic(void);

/**
 * lrb_clock_default - the user-space default lrb clock
 *
 * Inline where <time.h> declares clock_gettime() (the default gnu dialects,
 * C++, or the program's own _POSIX_C_SOURCE); otherwise a call to
 * lrb_clock_monotonic(). The headers define no feature macro for the
 * program.
 *
 * Context: any context, signal handlers included.
 * Return: CLOCK_MONOTONIC in nanoseconds.
 */
static inline uint64_t lrb_clock_default(void)
{
#ifdef CLOCK_MONOTONIC
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
#else
	return lrb_clock_monotonic();
#endif
}

/**
 * lrb_clock_cycles - a cheaper clock: the CPU's cycle counter
 *
 * Return: the time stamp counter on x86 (constant rate on modern CPUs; see
 * lrb_clock_cycles_freq()), CLOCK_MONOTONIC elsewhere. A writer reads the
 * clock after the write position, and the clock must not be read earlier
 * than that load, or a record could carry a timestamp older than the one
 * before it in the buffer.
 *
 * Context: any context, signal handlers included.
 */
static inline uint64_t lrb_clock_cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
	/*
	 * lfence: rdtsc must not run before the load of the write position,
	 * and no locked instruction orders it (design.rst, "Timestamps in
	 * buffer order")
	 */
	__builtin_ia32_lfence();
	return __builtin_ia32_rdtsc();
#else
	return lrb_clock_default();
#endif
}

/**
 * lrb_clock_cycles_freq() - ticks per second of lrb_clock_cycles()
 *
 * Measured once against CLOCK_MONOTONIC over 20 ms, then cached.
 *
 * Context: any thread; the first call busy-waits 20 ms.
 * Return: the frequency in Hz.
 */
uint64_t lrb_clock_cycles_freq(void);

/**
 * lrb_thread_init() - prepare the calling thread for writing
 *
 * A thread registers with liburcu-bp on its first write; call this first
 * in a thread whose first write may come from a signal handler.
 *
 * Context: a thread, not a signal handler.
 * Return: 0.
 */
int lrb_thread_init(void);

/**
 * lrb_possible_cpus() - CPUs a per-CPU channel needs buffers for
 *
 * Context: any thread.
 * Return: the number of CPUs configured on the system.
 */
int lrb_possible_cpus(void);
struct lrb_buf;

/**
 * lrb_wait_readable() - sleep until a sub-buffer of @buf can be taken
 * @buf: buffer of a channel whose config wakes readers by writer
 * @timeout_ms: give up after this many milliseconds
 *
 * Writers wake the waiter when they deliver a sub-buffer
 * (%LRB_WAKEUP_BY_WRITER). With %LRB_WAKEUP_BY_TIMER nothing wakes it in
 * user space (there is no read timer): it sleeps until @timeout_ms has
 * passed, then looks once, so @timeout_ms is the polling period. Records
 * become readable only when their sub-buffer fills or is flushed
 * (lrb_buf_flush(), or the channel's switch timer: switch_timer_us).
 *
 * Context: the reader's thread; sleeps.
 * Return: 0 when lrb_get_next_subbuf() should find a sub-buffer (checked
 * on waking, and once more at the deadline: a sub-buffer ready at the
 * deadline gives 0, in either wakeup mode), -ETIMEDOUT otherwise.
 */
int lrb_wait_readable(struct lrb_buf *buf, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* _LRB_USER_H */
