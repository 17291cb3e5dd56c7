/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb port layer, user-space side, on liburcu.
 *
 * User space cannot disable preemption: a thread may migrate or be preempted
 * between reading its CPU number and committing, and another thread may then
 * write the same "per-CPU" buffer. Every writer operation is therefore a
 * full atomic operation (uatomic, lock-prefixed on x86), which keeps the
 * buffers correct under migration at the price of two locked instructions
 * per record. The CPU number only selects a buffer, for locality; it comes
 * from the rseq area glibc registers, so it costs one load.
 *
 * Channel lifetime is protected by liburcu-bp read-side critical sections,
 * which register each thread on its first use: a thread's first write must
 * not happen in a signal handler (call lrb_thread_init() first).
 */
#ifndef _LRB_PORT_USER_H
#define _LRB_PORT_USER_H

/*
 * liburcu's read side is inlined, except under the sanitizers: TSan cannot
 * see liburcu's inline assembly (lrb's own atomics then map to compiler
 * builtins TSan understands), and UBSan flags liburcu-bp's reader entries,
 * which liburcu 0.13 allocates less aligned than their type says.
 */
#if !defined(_LGPL_SOURCE) && !defined(__SANITIZE_THREAD__) && \
	!defined(__SANITIZE_ADDRESS__)
#define _LGPL_SOURCE
#endif

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/rseq.h>
#include <time.h>
#include <urcu-bp.h>
#include <urcu/arch.h>
#include <urcu/compiler.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#ifndef __always_inline
#define __always_inline inline __attribute__((__always_inline__))
#endif
#define noinline __attribute__((__noinline__))
#define __cold __attribute__((__cold__))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define READ_ONCE(x) CMM_LOAD_SHARED(x)
#define WRITE_ONCE(x, v) CMM_STORE_SHARED(x, v)
#define barrier() cmm_barrier()
/* the kernel's barriers, by liburcu; see the callers for their pairing */
#define smp_wmb() cmm_smp_wmb()
#define smp_rmb() cmm_smp_rmb()
#define smp_mb() cmm_smp_mb()
#define ____cacheline_aligned __attribute__((__aligned__(CAA_CACHE_LINE_SIZE)))
#define BIT(nr) (1UL << (nr))
#define EXPORT_SYMBOL_GPL(sym)
/* Test hooks of the core (lib/): liblrb always has them, as port_user.c. */
#define __LRB_PORT_TEST_HOOKS 1

/* Buffers are made of 4 KiB units, allocated one by one like kernel pages. */
#define LRB_PAGE_SHIFT 12
#define PAGE_SIZE BIT(LRB_PAGE_SHIFT)

/**
 * union __lrb_v - a counter written by the buffer's writers
 * @v: the value, always updated with atomic operations in user space
 */
union __lrb_v {
	unsigned long v;
};

/**
 * struct __lrb_atomic - a value shared between writers and readers
 * @v: the value
 */
struct __lrb_atomic {
	unsigned long v;
};

#define __lrb_per_cpu(cfg) ((cfg)->alloc == LRB_ALLOC_PER_CPU)

#ifdef __SANITIZE_THREAD__
#undef uatomic_read
#undef uatomic_set
#undef uatomic_add
#undef uatomic_add_return
#undef uatomic_cmpxchg
#define uatomic_read(p) __atomic_load_n(p, __ATOMIC_SEQ_CST)
#define uatomic_set(p, v) __atomic_store_n(p, v, __ATOMIC_SEQ_CST)
#define uatomic_add(p, v) ((void)__atomic_add_fetch(p, v, __ATOMIC_SEQ_CST))
#define uatomic_add_return(p, v) __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST)
#define uatomic_cmpxchg(p, old, new)                                         \
	({                                                                   \
		__typeof__(*(p)) __old = (old);                              \
		__atomic_compare_exchange_n(p, &__old, new, 0,               \
					    __ATOMIC_SEQ_CST,                \
					    __ATOMIC_SEQ_CST);               \
		__old;                                                       \
	})
#endif

static __always_inline unsigned long __lrb_v_read(bool per_cpu, union __lrb_v *v)
{
	(void)per_cpu;
	return uatomic_read(&v->v);
}

static __always_inline void __lrb_v_set(bool per_cpu, union __lrb_v *v,
				      unsigned long x)
{
	(void)per_cpu;
	uatomic_set(&v->v, x);
}

static __always_inline void __lrb_v_inc(bool per_cpu, union __lrb_v *v)
{
	(void)per_cpu;
	uatomic_add(&v->v, 1);
}

static __always_inline unsigned long __lrb_v_add_return(bool per_cpu,
						      unsigned long x,
						      union __lrb_v *v)
{
	(void)per_cpu;
	return uatomic_add_return(&v->v, x);
}

static __always_inline unsigned long __lrb_v_cmpxchg(bool per_cpu,
						   union __lrb_v *v,
						   unsigned long old,
						   unsigned long new)
{
	(void)per_cpu;
	return uatomic_cmpxchg(&v->v, old, new);
}

/**
 * union __lrb_v64 - a 64-bit value written by the buffer's writers (the
 *	reference timestamp), 64 bits on 32-bit machines too
 * @v: the value, loaded and stored whole
 */
union __lrb_v64 {
	u64 v;
};

static __always_inline u64 __lrb_v64_read(bool per_cpu, union __lrb_v64 *v)
{
	(void)per_cpu;
	return __atomic_load_n(&v->v, __ATOMIC_RELAXED);
}

static __always_inline void __lrb_v64_set(bool per_cpu, union __lrb_v64 *v, u64 x)
{
	(void)per_cpu;
	__atomic_store_n(&v->v, x, __ATOMIC_RELAXED);
}

#define __lrb_atomic_read(a) uatomic_read(&(a)->v)
#define __lrb_atomic_set(a, x) uatomic_set(&(a)->v, x)
#define __lrb_atomic_add(x, a) uatomic_add(&(a)->v, x)
#define __lrb_atomic_cmpxchg(a, old, new) uatomic_cmpxchg(&(a)->v, old, new)

static __always_inline void __lrb_port_writer_begin(void)
{
	urcu_bp_read_lock();
}

static __always_inline void __lrb_port_writer_end(void)
{
	urcu_bp_read_unlock();
}

unsigned int __lrb_port_cpu_slow(void);

static __always_inline unsigned int __lrb_port_cpu(void)
{
	const struct rseq *rs;
	int cpu;

	rs = (const struct rseq *)((char *)__builtin_thread_pointer() +
				   __rseq_offset);
	cpu = (int)READ_ONCE(rs->cpu_id);
	if (unlikely(__rseq_size == 0 || cpu < 0))
		return __lrb_port_cpu_slow();
	return cpu;
}

extern __thread int __lrb_nesting __attribute__((tls_model("initial-exec")));

/* Depth of lrb writers on this thread (signal handlers nest), with caller. */
static __always_inline int __lrb_port_nesting_inc(void)
{
	int depth = ++__lrb_nesting;

	barrier();
	return depth;
}

static __always_inline void __lrb_port_nesting_dec(void)
{
	barrier();
	__lrb_nesting--;
}

/**
 * struct __lrb_port_wait - how writers wake a buffer's readers
 * @seq: futex word, bumped by every delivery
 * @waiters: readers sleeping on @seq; writers skip the syscall when zero
 */
struct __lrb_port_wait {
	int seq;
	int waiters;
};

/**
 * lrb_clock_default - the user-space default lrb clock
 *
 * Return: CLOCK_MONOTONIC in nanoseconds.
 */
static inline u64 lrb_clock_default(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
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
static inline u64 lrb_clock_cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
	/* lfence: rdtsc must not run before the load of the write position */
	__builtin_ia32_lfence();
	return __builtin_ia32_rdtsc();
#else
	return lrb_clock_default();
#endif
}

u64 lrb_clock_cycles_freq(void);
int lrb_thread_init(void);
int lrb_possible_cpus(void);
struct lrb_buf;
int lrb_wait_readable(struct lrb_buf *buf, int timeout_ms);
void __lrb_port_fail_alloc_after(long n);
long __lrb_port_live_allocs(void);

#endif /* _LRB_PORT_USER_H */
