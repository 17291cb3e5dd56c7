/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb port layer, kernel side: per-CPU buffers are written with local_t
 * operations under preempt_disable(); global buffers and every field shared
 * with readers use atomic_long_t.
 */
#ifndef _LRB_PORT_KERNEL_H
#define _LRB_PORT_KERNEL_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/cache.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/irq_work.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched/clock.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <asm/local.h>
#include <asm/local64.h>

#define LRB_PAGE_SHIFT PAGE_SHIFT
#define LRB_PAGE_SIZE PAGE_SIZE
/* The API checks of debug builds, out of the fast path otherwise. */
#define __LRB_DEBUG IS_ENABLED(CONFIG_LRB_DEBUG)

/* The reserved names the installed headers use, for the user build's sake. */
#define __lrb_likely(x) likely(x)
#define __lrb_unlikely(x) unlikely(x)
#define __lrb_read_once(x) READ_ONCE(x)
/* smp_wmb() itself; see the caller for its pairing */
#define __lrb_smp_wmb() smp_wmb()
/* a local the slow path fills: not zeroed by CONFIG_INIT_STACK_ALL_ZERO */
#define __lrb_uninitialized __uninitialized
#define __LRB_CACHELINE_BYTES SMP_CACHE_BYTES
/* Test hooks of the core (lib/) exist in the KUnit build only. */
#define __LRB_PORT_TEST_HOOKS IS_ENABLED(CONFIG_LRB_KUNIT_TEST)

/**
 * union __lrb_v - a counter written by the buffer's writers
 * @l: used when each buffer is written by one CPU (per-CPU allocation)
 * @a: used when all CPUs share the buffer (global allocation)
 */
union __lrb_v {
	local_t l;
	atomic_long_t a;
};

/**
 * struct __lrb_atomic - a value shared between writers and readers
 * @v: the value
 */
struct __lrb_atomic {
	atomic_long_t v;
};

#define __lrb_per_cpu(cfg) ((cfg)->alloc == LRB_ALLOC_PER_CPU)

static __always_inline unsigned long __lrb_v_read(bool per_cpu, union __lrb_v *v)
{
	return per_cpu ? local_read(&v->l) : atomic_long_read(&v->a);
}

static __always_inline void __lrb_v_set(bool per_cpu, union __lrb_v *v,
					unsigned long x)
{
	if (per_cpu)
		local_set(&v->l, x);
	else
		atomic_long_set(&v->a, x);
}

static __always_inline void __lrb_v_inc(bool per_cpu, union __lrb_v *v)
{
	if (per_cpu)
		local_inc(&v->l);
	else
		atomic_long_inc(&v->a);
}

static __always_inline unsigned long __lrb_v_add_return(bool per_cpu,
							unsigned long x,
							union __lrb_v *v)
{
	return per_cpu ? local_add_return(x, &v->l) :
			 atomic_long_add_return(x, &v->a);
}

static __always_inline unsigned long __lrb_v_cmpxchg(bool per_cpu,
						     union __lrb_v *v,
						     unsigned long old,
						     unsigned long new)
{
	return per_cpu ? local_cmpxchg(&v->l, old, new) :
			 atomic_long_cmpxchg(&v->a, old, new);
}

/**
 * union __lrb_v64 - a 64-bit value written by the buffer's writers (the
 *	reference timestamp): 64 bits on 32-bit machines too, where a clock
 *	passes 2^32 nanoseconds after four seconds
 * @l: used with per-CPU allocation
 * @a: used with global allocation
 */
union __lrb_v64 {
	local64_t l;
	atomic64_t a;
};

static __always_inline u64 __lrb_v64_read(bool per_cpu, union __lrb_v64 *v)
{
	return per_cpu ? local64_read(&v->l) : atomic64_read(&v->a);
}

static __always_inline void __lrb_v64_set(bool per_cpu, union __lrb_v64 *v, u64 x)
{
	if (per_cpu)
		local64_set(&v->l, x);
	else
		atomic64_set(&v->a, x);
}

#define __lrb_atomic_read(a) ((unsigned long)atomic_long_read(&(a)->v))
#define __lrb_atomic_set(a, x) atomic_long_set(&(a)->v, x)
#define __lrb_atomic_add(x, a) atomic_long_add(x, &(a)->v)
#define __lrb_atomic_cmpxchg(a, old, new) \
	((unsigned long)atomic_long_cmpxchg(&(a)->v, old, new))

/*
 * A writer runs with preemption disabled from reserve to commit, so it
 * stays on the CPU whose buffer it writes and channel teardown can wait for
 * it with synchronize_rcu().
 */
static __always_inline void __lrb_port_writer_begin(void)
{
	preempt_disable_notrace();
}

static __always_inline void __lrb_port_writer_end(void)
{
	preempt_enable_notrace();
}

static __always_inline unsigned int __lrb_port_cpu(void)
{
	return smp_processor_id();
}

/*
 * A kernel per-CPU channel has a buffer for every possible CPU
 * (__lrb_port_check_nr_cpus()), so __lrb_this_cpu_buf() needs no bound.
 */
#define __LRB_PORT_CPU_BELOW_NR_BUFS 1

DECLARE_PER_CPU(int, __lrb_nesting);

/*
 * Depth of lrb writers on this CPU, counting the caller. Preemption is off
 * and every interrupt that nests gives back what it took before it
 * returns, so the raw (interruptible) read-modify-write is exact: it spares
 * the interrupt masking of this_cpu ops on architectures without a
 * one-instruction form of them (UML among them). For the same reason the
 * read after the increment sees the caller's own count: an increment and a
 * read compare in memory (x86: incl, cmpl), where the increment-and-return
 * needs a register and an add besides its xadd. The writer's buffer is
 * that of @cpu in a channel of @nr_bufs; the kernel has no use for them
 * here (the user port has).
 */
static __always_inline int __lrb_port_nesting_inc(unsigned int cpu,
						  unsigned int nr_bufs)
{
	(void)cpu;
	(void)nr_bufs;
	raw_cpu_inc(__lrb_nesting);
	return raw_cpu_read(__lrb_nesting);
}

static __always_inline void __lrb_port_nesting_dec(void)
{
	raw_cpu_dec(__lrb_nesting);
}

/**
 * struct __lrb_port_wait - how writers wake a buffer's readers
 * @work: irq_work queued by the delivering writer; safe from NMI
 * @wq: readers sleep here
 */
struct __lrb_port_wait {
	struct irq_work work;
	wait_queue_head_t wq;
};

/**
 * lrb_clock_default - the kernel's default lrb clock
 *
 * Return: local_clock() in nanoseconds: cheap, monotonic per CPU and usable
 * from NMI, which is all a per-CPU buffer needs.
 */
static inline u64 lrb_clock_default(void)
{
	return local_clock();
}

#endif /* _LRB_PORT_KERNEL_H */
