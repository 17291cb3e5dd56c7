/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb port layer, user-space side, on liburcu.
 *
 * User space cannot disable preemption: a thread may migrate or be preempted
 * between reading its CPU number and committing, and another thread may then
 * write the same "per-CPU" buffer. On x86_64 with rseq and membarrier, a
 * writer of a channel with a buffer per CPU updates its own CPU's buffer
 * with unlocked read-modify-writes inside restartable sequences, which the
 * kernel aborts if the thread is preempted, migrated or signalled; a
 * writer that is not on its buffer's CPU, and a flush from another
 * thread, first block those sequences process-wide (__lrb_rseq_block,
 * fenced by membarrier) and then use locked instructions
 * (Documentation/design.rst, "The user-space port"). Without rseq, and in
 * channels with fewer buffers than CPUs, every writer operation is a
 * locked one (uatomic).
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
#include <limits.h>
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

/*
 * The rseq fast path: x86_64, and not under the sanitizers, which cannot
 * follow a restartable sequence (the library then never enables it).
 */
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && \
	!defined(__SANITIZE_ADDRESS__)
#define __LRB_PORT_RSEQ 1
#else
#define __LRB_PORT_RSEQ 0
#endif

/* Writer depths that save the mode of the one they interrupt. */
#define __LRB_PORT_DEPTHS 8

extern __thread int __lrb_nesting __attribute__((tls_model("initial-exec")));
/*
 * How this thread's current writer updates its buffer's counters: 0,
 * locked operations (rseq off, a channel with fewer buffers than CPUs, or
 * no writer: channel setup, __lrb_port_on_cpu()); __LRB_MODE_RSEQ | cpu,
 * restartable sequences on @cpu, its buffer's CPU; that | LONG_MIN once a
 * sequence could not run: locked operations with the sequences blocked
 * (__lrb_rseq_block) until the writer ends; __LRB_MODE_PER_OP (writers
 * nested deeper than __LRB_PORT_DEPTHS): each operation blocks them for
 * itself. A writer saves the mode of the one it interrupts (signal
 * handlers nest) and gives it back.
 */
#if __LRB_PORT_RSEQ
#define __LRB_MODE_RSEQ (1L << 32)
#else
#define __LRB_MODE_RSEQ 0L
#endif
#define __LRB_MODE_PER_OP (-1L)
extern __thread long __lrb_port_mode __attribute__((tls_model("initial-exec")));
extern __thread long __lrb_port_saved[__LRB_PORT_DEPTHS + 1]
	__attribute__((tls_model("initial-exec")));
/*
 * The fewest buffers a per-CPU channel needs for its writers to use
 * restartable sequences: the number of CPUs, or UINT_MAX (never) without
 * rseq. A channel with fewer shares buffers between CPUs: all its writers
 * take the locked path, which then needs no blocking.
 */
extern unsigned int __lrb_rseq_min_bufs;
/*
 * 2 * writers and flushes using locked operations on per-CPU buffers of
 * rseq channels, plus bit 0 once a membarrier has aborted every sequence
 * begun before the count left 0. A sequence commits only if it reads 0.
 */
extern unsigned long __lrb_rseq_block;

enum __lrb_v_op {
	__LRB_V_ADD,
	__LRB_V_CMPXCHG,
	__LRB_V_SET,
};

unsigned long __lrb_v_slow(enum __lrb_v_op op, unsigned long *p,
			   unsigned long a, unsigned long b);

#if __LRB_PORT_RSEQ
/*
 * One restartable sequence: the descriptor (struct rseq_cs) in section
 * __rseq_cs, the abort handler, preceded by the signature glibc registers,
 * in __rseq_failure. The thread's rseq area is %fs:__rseq_offset. Between
 * labels 1 and 2 the kernel moves an aborted thread to label 4, which
 * jumps to the abort label; 2 follows the single store that commits. The
 * sequence goes to the slow label if the thread is not on @cpu or locked
 * operations are under way.
 */
#define __LRB_RSEQ_BEGIN                                                     \
	".pushsection __rseq_cs, \"aw\"\n\t"                                 \
	".balign 32\n\t"                                                     \
	"3:\n\t"                                                             \
	".long 0, 0\n\t"                                                     \
	".quad 1f, 2f - 1f, 4f\n\t"                                          \
	".popsection\n\t"                                                    \
	"leaq 3b(%%rip), %%rax\n\t"                                          \
	"movq %%rax, %%fs:%c[cs](%[rs])\n\t"                                 \
	"1:\n\t"                                                             \
	"cmpl %[cpu], %%fs:%c[cpu_id](%[rs])\n\t"                            \
	"jnz %l[slow]\n\t"                                                   \
	"cmpq $0, %[block]\n\t"                                              \
	"jnz %l[slow]\n\t"

#define __LRB_RSEQ_END                                                       \
	"2:\n\t"                                                             \
	".pushsection __rseq_failure, \"ax\"\n\t"                            \
	".byte 0x0f, 0xb9, 0x3d\n\t"                                         \
	".long 0x53053053\n\t"                                               \
	"4:\n\t"                                                             \
	"jmp %l[abort]\n\t"                                                  \
	".popsection\n\t"

#define __LRB_RSEQ_IN                                                        \
	[rs] "r"(__rseq_offset), [cs] "i"(offsetof(struct rseq, rseq_cs)),   \
		[cpu_id] "i"(offsetof(struct rseq, cpu_id)), [cpu] "r"(cpu), \
		[block] "m"(__lrb_rseq_block)

/*
 * @op on *@p (add @a; set it to @b if it is @a; store @a) in a sequence on
 * @cpu: 1 if done (the new value, or the one found, in *@r), 0 if it must
 * take the locked path, -1 if it was aborted.
 *
 * The sequences have no output operands: GCC 12.2 miscompiled the
 * output of an asm goto inlined in __lrb_reserve_slow()'s retry loop (a
 * completed sequence returned a stale stack slot, not the output register,
 * so a compare-and-swap that succeeded reported failure and the writer
 * moved on to new packets). They address *@p and *@r through registers,
 * and the "memory" clobber says they write both.
 */
static __always_inline int __lrb_rseq_op(enum __lrb_v_op op, unsigned int cpu,
					 unsigned long *p, unsigned long a,
					 unsigned long b, unsigned long *r)
{
	if (op == __LRB_V_ADD)
		__asm__ __volatile__ goto(__LRB_RSEQ_BEGIN
					  "movq (%[p]), %%rax\n\t"
					  "addq %[a], %%rax\n\t"
					  "movq %%rax, (%[r])\n\t"
					  "movq %%rax, (%[p])\n\t"
					  __LRB_RSEQ_END
					  :
					  : __LRB_RSEQ_IN, [p] "r"(p), [a] "r"(a),
					    [r] "r"(r)
					  : "rax", "memory", "cc"
					  : slow, abort);
	else if (op == __LRB_V_CMPXCHG)
		__asm__ __volatile__ goto(__LRB_RSEQ_BEGIN
					  "movq (%[p]), %%rax\n\t"
					  "movq %%rax, (%[r])\n\t"
					  "cmpq %[a], %%rax\n\t"
					  "jnz 2f\n\t"
					  "movq %[b], (%[p])\n\t"
					  __LRB_RSEQ_END
					  :
					  : __LRB_RSEQ_IN, [p] "r"(p), [a] "r"(a),
					    [b] "r"(b), [r] "r"(r)
					  : "rax", "memory", "cc"
					  : slow, abort);
	else
		__asm__ __volatile__ goto(__LRB_RSEQ_BEGIN
					  "movq %[a], (%[p])\n\t"
					  __LRB_RSEQ_END
					  :
					  : __LRB_RSEQ_IN, [p] "r"(p), [a] "r"(a)
					  : "rax", "memory", "cc"
					  : slow, abort);
	if (op == __LRB_V_SET)
		*r = a;
	return 1;
slow:
	return 0;
abort:
	return -1;
}
#endif

/*
 * A read-modify-write (or store) of a counter of a per-CPU buffer by a
 * writer: in a restartable sequence on the buffer's CPU while no locked
 * user exists (an aborted one retries), locked otherwise.
 */
static __always_inline unsigned long __lrb_v_op(enum __lrb_v_op op,
						unsigned long *p,
						unsigned long a,
						unsigned long b)
{
#if __LRB_PORT_RSEQ
	long mode = __lrb_port_mode;

	if (__lrb_likely(mode > 0)) {
		unsigned long r;
		int ret;

		do
			ret = __lrb_rseq_op(op, (unsigned int)mode, p, a, b, &r);
		while (__lrb_unlikely(ret < 0));
		if (__lrb_likely(ret))
			return r;
		return __lrb_v_slow(op, p, a, b);
	}
	if (__lrb_unlikely(mode))
		return __lrb_v_slow(op, p, a, b);
#endif
	if (op == __LRB_V_ADD)
		return uatomic_add_return(p, a);
	if (op == __LRB_V_CMPXCHG)
		return uatomic_cmpxchg(p, a, b);
	uatomic_set(p, a);
	return a;
}

static __always_inline unsigned long __lrb_v_read(bool per_cpu, union __lrb_v *v)
{
	(void)per_cpu;
	return uatomic_read(&v->v);
}

static __always_inline void __lrb_v_set(bool per_cpu, union __lrb_v *v,
					unsigned long x)
{
	if (per_cpu)
		__lrb_v_op(__LRB_V_SET, &v->v, x, 0);
	else
		uatomic_set(&v->v, x);
}

static __always_inline void __lrb_v_inc(bool per_cpu, union __lrb_v *v)
{
	if (per_cpu)
		__lrb_v_op(__LRB_V_ADD, &v->v, 1, 0);
	else
		uatomic_add(&v->v, 1);
}

static __always_inline unsigned long __lrb_v_add_return(bool per_cpu,
							unsigned long x,
							union __lrb_v *v)
{
	if (per_cpu)
		return __lrb_v_op(__LRB_V_ADD, &v->v, x, 0);
	return uatomic_add_return(&v->v, x);
}

static __always_inline unsigned long __lrb_v_cmpxchg(bool per_cpu,
						     union __lrb_v *v,
						     unsigned long old,
						     unsigned long val)
{
	if (per_cpu)
		return __lrb_v_op(__LRB_V_CMPXCHG, &v->v, old, val);
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

void __lrb_rseq_release(void);

/*
 * Depth of lrb writers on this thread (signal handlers nest), with caller;
 * the writer at that depth writes the buffer of @cpu in a channel of
 * @nr_bufs buffers. A signal handler may run between any two steps: it
 * saves and gives back the mode it finds.
 */
static __always_inline int __lrb_port_nesting_inc(unsigned int cpu,
						  unsigned int nr_bufs)
{
	unsigned int min_bufs = __lrb_rseq_min_bufs;
	int depth = ++__lrb_nesting;

	cmm_barrier();
	/* without rseq every mode stays 0 */
	if (__LRB_PORT_RSEQ && min_bufs != UINT_MAX) {
		if (__lrb_likely(depth <= __LRB_PORT_DEPTHS))
			__lrb_port_saved[depth] = __lrb_port_mode;
		cmm_barrier();
		if (__lrb_unlikely(depth >= __LRB_PORT_DEPTHS))
			__lrb_port_mode = __LRB_MODE_PER_OP;
		else if (nr_bufs >= min_bufs)
			__lrb_port_mode = __LRB_MODE_RSEQ | cpu;
		else
			__lrb_port_mode = 0;
		cmm_barrier();
	}
	return depth;
}

static __always_inline void __lrb_port_nesting_dec(void)
{
	cmm_barrier();
	if (__LRB_PORT_RSEQ && __lrb_rseq_min_bufs != UINT_MAX) {
		int depth = __lrb_nesting;
		long mode = __lrb_port_mode;

		__lrb_port_mode = __lrb_likely(depth <= __LRB_PORT_DEPTHS) ?
					  __lrb_port_saved[depth] :
					  __LRB_MODE_PER_OP;
		cmm_barrier();
		if (__lrb_unlikely(mode < 0 && mode != __LRB_MODE_PER_OP))
			__lrb_rseq_release();
		cmm_barrier();
	}
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
