// SPDX-License-Identifier: GPL-2.0
/*
 * lrb port layer, kernel side: page allocation on the buffer's node,
 * running a function on the CPU that owns a buffer, irq_work wakeups and
 * RCU grace periods.
 */
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/topology.h>

#include <lrb/lrb.h>
#include "port.h"

DEFINE_PER_CPU(int, __lrb_nesting);
EXPORT_PER_CPU_SYMBOL_GPL(__lrb_nesting);

#if IS_ENABLED(CONFIG_LRB_KUNIT_TEST)
/*
 * Test hooks for the KUnit suites, as in port_user.c: fail a chosen
 * allocation, and count the allocations not yet freed.
 */
static atomic_long_t lrb_fail_alloc_countdown = ATOMIC_LONG_INIT(-1);
static atomic_long_t lrb_live_allocs = ATOMIC_LONG_INIT(0);

/**
 * __lrb_port_fail_alloc_after() - test hook: fail a future allocation
 * @n: the n-th allocation from now fails (0: the next one); -1 disables
 */
void __lrb_port_fail_alloc_after(long n)
{
	atomic_long_set(&lrb_fail_alloc_countdown, n);
}
EXPORT_SYMBOL_GPL(__lrb_port_fail_alloc_after);

/**
 * __lrb_port_live_allocs() - test hook: allocations not yet freed
 *
 * Return: metadata blocks and pages the library currently holds.
 */
long __lrb_port_live_allocs(void)
{
	return atomic_long_read(&lrb_live_allocs);
}
EXPORT_SYMBOL_GPL(__lrb_port_live_allocs);

static bool lrb_alloc_should_fail(void)
{
	long n = atomic_long_read(&lrb_fail_alloc_countdown);

	while (n >= 0) {
		if (atomic_long_try_cmpxchg(&lrb_fail_alloc_countdown, &n,
					    n - 1))
			return n == 0;
	}
	return false;
}

static void lrb_alloc_count(void *p, long n)
{
	if (p)
		atomic_long_add(n, &lrb_live_allocs);
}
#else
static inline bool lrb_alloc_should_fail(void)
{
	return false;
}

static inline void lrb_alloc_count(void *p, long n)
{
}
#endif

void *__lrb_port_zalloc(unsigned long size, int node)
{
	void *p;

	if (lrb_alloc_should_fail())
		return NULL;
	p = kvzalloc_node(size, GFP_KERNEL, node);
	lrb_alloc_count(p, 1);
	return p;
}

void __lrb_port_free(void *p)
{
	lrb_alloc_count(p, -1);
	kvfree(p);
}

void *__lrb_port_alloc_page(int node)
{
	struct page *page;

	if (lrb_alloc_should_fail())
		return NULL;
	page = alloc_pages_node(node, GFP_KERNEL | __GFP_ZERO, 0);
	if (!page)
		return NULL;
	lrb_alloc_count(page, 1);
	return page_address(page);
}

void __lrb_port_free_page(void *addr)
{
	lrb_alloc_count(addr, -1);
	free_page((unsigned long)addr);
}

/* The caller of lrb_subbuf_steal_page() drops the page with put_page(). */
void __lrb_port_disown_page(void *addr)
{
	lrb_alloc_count(addr, -1);
}

/* A page disowned earlier comes back: the buffer frees it again. */
void __lrb_port_adopt_page(void *addr)
{
	lrb_alloc_count(addr, 1);
}

int __lrb_port_cpu_node(unsigned int cpu)
{
	return cpu_to_node(cpu);
}

/* Per-CPU channels have a buffer for every possible CPU. */
int __lrb_port_check_nr_cpus(unsigned int nr_cpus)
{
	return nr_cpus == nr_cpu_ids ? 0 : -EINVAL;
}

/*
 * Writers of a per-CPU buffer use CPU-local operations, atomic only against
 * that CPU: anything else that moves the write position must run there. On
 * an offline CPU nothing writes, so the caller may act directly, one caller
 * at a time: CPU-local operations are not atomic between two callers.
 */
static DEFINE_MUTEX(lrb_offline_cpu_lock);

void __lrb_port_on_cpu(struct lrb_buf *buf, void (*fn)(void *arg), void *arg)
{
	if (!__lrb_per_cpu(buf->chan->cfg)) {
		fn(arg);
		return;
	}
	/* the CPU must not come online while we act for it */
	cpus_read_lock();
	if (!cpu_online(buf->cpu) ||
	    smp_call_function_single(buf->cpu, fn, arg, 1)) {
		mutex_lock(&lrb_offline_cpu_lock);
		fn(arg);
		mutex_unlock(&lrb_offline_cpu_lock);
	}
	cpus_read_unlock();
}

/* The caller runs on @buf's CPU with preemption disabled, or it is dead. */
void __lrb_port_on_this_cpu(struct lrb_buf *buf, void (*fn)(void *arg),
			    void *arg)
{
	fn(arg);
}

static void __lrb_port_wake_work(struct irq_work *work)
{
	struct __lrb_port_wait *wait = container_of(work, struct __lrb_port_wait,
						  work);

	wake_up_interruptible(&wait->wq);
}

void __lrb_port_wait_init(struct lrb_buf *buf)
{
	init_irq_work(&buf->wait.work, __lrb_port_wake_work);
	init_waitqueue_head(&buf->wait.wq);
}

void __lrb_port_wait_fini(struct lrb_buf *buf)
{
	irq_work_sync(&buf->wait.work);
}

/* irq_work, because the delivering writer may be in NMI context. */
void __lrb_port_wake(struct lrb_buf *buf)
{
	irq_work_queue(&buf->wait.work);
}

/* Writers run with preemption disabled, which RCU waits for. */
void __lrb_port_synchronize(void)
{
	synchronize_rcu();
}

/*
 * A per-CPU buffer is flushed on its own CPU, so a kernel switch timer is
 * a pinned timer per CPU that follows CPU hotplug: lrb.ko's channels have
 * them (kernel-module/kchan.c). A channel of the library alone has none.
 */
int __lrb_port_timer_start(struct lrb_chan *chan, unsigned int period_us)
{
	return -EINVAL;
}

void __lrb_port_timer_stop(struct lrb_chan *chan)
{
}
