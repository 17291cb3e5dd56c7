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
 * which liburcu 0.13 allocates less aligned than their type says. The
 * program's own _LGPL_SOURCE is left as it was after the includes below:
 * it decides how other headers (liburcu's, LTTng-UST's) build.
 */
#if !defined(_LGPL_SOURCE) && !defined(__SANITIZE_THREAD__) && \
	!defined(__SANITIZE_ADDRESS__)
#define _LGPL_SOURCE
#define __LRB_LGPL_SOURCE
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

#ifdef __LRB_LGPL_SOURCE
#undef _LGPL_SOURCE
#undef __LRB_LGPL_SOURCE
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * This header is installed and included by users' programs: it defines
 * reserved names (__lrb_*) and C's own (uint32_t...), never the kernel's
 * vocabulary, which lib/kernel_compat.h gives lib/ privately.
 */
#define __lrb_likely(x) __builtin_expect(!!(x), 1)
#define __lrb_unlikely(x) __builtin_expect(!!(x), 0)
#define __lrb_read_once(x) CMM_LOAD_SHARED(x)
/* the kernel's smp_wmb(), by liburcu; see the caller for its pairing */
#define __lrb_smp_wmb() cmm_smp_wmb()
/* the kernel's __uninitialized; user builds do not zero locals */
#define __lrb_uninitialized
#define __LRB_CACHELINE_BYTES CAA_CACHE_LINE_SIZE

/*
 * The API checks of debug builds (the program defines LRB_DEBUG), out of
 * the fast path otherwise.
 */
#ifdef LRB_DEBUG
#define __LRB_DEBUG 1
#else
#define __LRB_DEBUG 0
#endif

/* Buffers are made of 4 KiB units, allocated one by one like kernel pages. */
#define LRB_PAGE_SHIFT 12
#define LRB_PAGE_SIZE (1UL << LRB_PAGE_SHIFT)

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
						     unsigned long val)
{
	(void)per_cpu;
	return uatomic_cmpxchg(&v->v, old, val);
}

/**
 * union __lrb_v64 - a 64-bit value written by the buffer's writers (the
 *	reference timestamp), 64 bits on 32-bit machines too
 * @v: the value, loaded and stored whole
 */
union __lrb_v64 {
	uint64_t v;
};

static __always_inline uint64_t __lrb_v64_read(bool per_cpu, union __lrb_v64 *v)
{
	(void)per_cpu;
	return __atomic_load_n(&v->v, __ATOMIC_RELAXED);
}

static __always_inline void __lrb_v64_set(bool per_cpu, union __lrb_v64 *v, uint64_t x)
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
	cpu = (int)__lrb_read_once(rs->cpu_id);
	if (__lrb_unlikely(__rseq_size == 0 || cpu < 0))
		return __lrb_port_cpu_slow();
	return cpu;
}

extern __thread int __lrb_nesting __attribute__((tls_model("initial-exec")));

/* Depth of lrb writers on this thread (signal handlers nest), with caller. */
static __always_inline int __lrb_port_nesting_inc(void)
{
	int depth = ++__lrb_nesting;

	cmm_barrier();
	return depth;
}

static __always_inline void __lrb_port_nesting_dec(void)
{
	cmm_barrier();
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

#ifdef __cplusplus
}
#endif

/* The user-space API of the port: clocks, thread setup, waiting. */
#include <lrb/user.h>

#endif /* _LRB_PORT_USER_H */
