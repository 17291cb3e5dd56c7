/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stand-ins for the few kernel headers include/lrb/internal/port_kernel.h
 * includes, so that the kernel port's fast path compiles into the
 * user-space instruction-count driver (tests/bench/icount/kport.c) and runs
 * under callgrind. Every primitive the fast path executes is the x86_64
 * kernel's (6.12) instruction sequence, with %fs where the kernel addresses
 * per-CPU data with %gs (valgrind follows %fs; the instructions are the
 * same):
 *
 *   local_read, local_set       a plain load, a plain store
 *   local_inc                   incq (no lock prefix: asm/local.h)
 *   local_add_return            xaddq, no lock, then the add
 *   local_cmpxchg               cmpxchgq, no lock (cmpxchg_local)
 *   raw_cpu_inc, raw_cpu_dec    incl, decl %fs:var
 *   raw_cpu_read                a plain %fs:var access, as the kernel's
 *                               __seg_gs (CONFIG_USE_X86_SEG_SUPPORT) is
 *   preempt_disable_notrace     incl %fs:preempt_count
 *   preempt_enable_notrace      decl %fs:preempt_count; je (reschedule)
 *   smp_processor_id            movl %fs:cpu_number
 *   smp_wmb                     a compiler barrier (x86 stores are ordered)
 *
 * The preemption count starts at the kernel's PREEMPT_ENABLED (the inverted
 * need-resched bit), so that the decrement reaches zero only when a
 * reschedule would be due, never here. Global (atomic_long_t) operations
 * are locked, as in the kernel; the counted configurations are per-CPU.
 * Nothing else of the kernel is used: the fast path calls the core's out
 * of line functions of liblrb, whose layouts kport.c checks.
 */
#ifndef _LRB_ICOUNT_KPORT_H
#define _LRB_ICOUNT_KPORT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#undef __always_inline
#define __always_inline inline __attribute__((__always_inline__))
#define noinline __attribute__((__noinline__))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define barrier() __asm__ __volatile__("" : : : "memory")
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define smp_wmb() barrier()
#define __uninitialized __attribute__((__uninitialized__))
/* no CONFIG_ option is set: no debug checks, no test hooks */
#define IS_ENABLED(option) 0

#define PAGE_SHIFT 12
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#define SMP_CACHE_BYTES 64

typedef struct {
	long counter;
} atomic_long_t;

typedef struct {
	s64 counter;
} atomic64_t;

#define atomic_long_read(v) READ_ONCE((v)->counter)
#define atomic_long_set(v, i) WRITE_ONCE((v)->counter, (i))
#define atomic_long_inc(v) ((void)__atomic_add_fetch(&(v)->counter, 1, __ATOMIC_SEQ_CST))
#define atomic_long_add(i, v) ((void)__atomic_add_fetch(&(v)->counter, i, __ATOMIC_SEQ_CST))
#define atomic_long_add_return(i, v) __atomic_add_fetch(&(v)->counter, i, __ATOMIC_SEQ_CST)
#define atomic64_read(v) READ_ONCE((v)->counter)
#define atomic64_set(v, i) WRITE_ONCE((v)->counter, (i))

static __always_inline long atomic_long_cmpxchg(atomic_long_t *v, long old, long new)
{
	__atomic_compare_exchange_n(&v->counter, &old, new, false,
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return old;
}

typedef struct {
	atomic_long_t a;
} local_t;

typedef struct {
	local_t a;
} local64_t;

#define local_read(l) atomic_long_read(&(l)->a)
#define local_set(l, i) atomic_long_set(&(l)->a, (i))
#define local64_read(l) ((u64)local_read(&(l)->a))
#define local64_set(l, i) local_set(&(l)->a, (long)(i))

static __always_inline void local_inc(local_t *l)
{
	__asm__ __volatile__("incq %0" : "+m"(l->a.counter));
}

static __always_inline long local_add_return(long i, local_t *l)
{
	long x = i;

	__asm__ __volatile__("xaddq %0, %1" : "+r"(i), "+m"(l->a.counter) : : "memory");
	return i + x;
}

static __always_inline long local_cmpxchg(local_t *l, long old, long new)
{
	long ret;

	__asm__ __volatile__("cmpxchgq %2, %1"
			     : "=a"(ret), "+m"(l->a.counter)
			     : "r"(new), "0"(old)
			     : "memory");
	return ret;
}

/* Per-CPU variables: one per thread, addressed %fs-relative. */
#define DECLARE_PER_CPU(type, name) \
	extern __thread type name __attribute__((tls_model("local-exec")))

#define raw_cpu_inc(var) __asm__ __volatile__("incl %0" : "+m"(var))
#define raw_cpu_dec(var) __asm__ __volatile__("decl %0" : "+m"(var))
/* a plain access: the kernel's __seg_gs named address space */
#define raw_cpu_read(var) (var)

DECLARE_PER_CPU(int, kport_preempt_count);
DECLARE_PER_CPU(int, kport_cpu_number);

/* the kernel's PREEMPT_ENABLED: the need-resched bit, inverted */
#define KPORT_PREEMPT_ENABLED 0x80000000

void kport_preempt_schedule(void);

static __always_inline void preempt_disable_notrace(void)
{
	__asm__ __volatile__("incl %0" : "+m"(kport_preempt_count));
	barrier();
}

static __always_inline void preempt_enable_notrace(void)
{
	bool zero;

	barrier();
	__asm__ __volatile__("decl %0" : "+m"(kport_preempt_count), "=@ccz"(zero));
	if (unlikely(zero))
		kport_preempt_schedule();
}

#define smp_processor_id() ((unsigned int)kport_cpu_number)

/* The reader wakeup state: never touched by the fast path. */
struct irq_work {
	void *func;
};

typedef struct {
	void *head;
} wait_queue_head_t;

u64 local_clock(void);

#endif /* _LRB_ICOUNT_KPORT_H */
