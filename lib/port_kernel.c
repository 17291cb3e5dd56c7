// SPDX-License-Identifier: GPL-2.0
/*
 * lrb port layer, kernel side: page allocation on the buffer's node,
 * running a function on the CPU that owns a buffer, irq_work wakeups and
 * RCU grace periods.
 */
#include <linux/cpumask.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/topology.h>

#include <lrb/lrb.h>
#include "port.h"

DEFINE_PER_CPU(int, lrb_nesting);
EXPORT_PER_CPU_SYMBOL_GPL(lrb_nesting);

void *lrb_port_zalloc(unsigned long size, int node)
{
	return kvzalloc_node(size, GFP_KERNEL, node);
}

void lrb_port_free(void *p)
{
	kvfree(p);
}

void *lrb_port_alloc_page(int node)
{
	struct page *page = alloc_pages_node(node, GFP_KERNEL | __GFP_ZERO, 0);

	return page ? page_address(page) : NULL;
}

void lrb_port_free_page(void *addr)
{
	free_page((unsigned long)addr);
}

int lrb_port_cpu_node(unsigned int cpu)
{
	return cpu_to_node(cpu);
}

/* Per-CPU channels have a buffer for every possible CPU. */
int lrb_port_check_nr_cpus(unsigned int nr_cpus)
{
	return nr_cpus == nr_cpu_ids ? 0 : -EINVAL;
}

/*
 * Writers of a per-CPU buffer use CPU-local operations, atomic only against
 * that CPU: anything else that moves the write position must run there. On
 * an offline CPU nothing writes, so the caller may act directly.
 */
void lrb_port_on_cpu(struct lrb_buf *buf, void (*fn)(void *arg), void *arg)
{
	if (!lrb_per_cpu(buf->chan->cfg) ||
	    smp_call_function_single(buf->cpu, fn, arg, 1))
		fn(arg);
}

static void lrb_port_wake_work(struct irq_work *work)
{
	struct lrb_port_wait *wait = container_of(work, struct lrb_port_wait,
						  work);

	wake_up_interruptible(&wait->wq);
}

void lrb_port_wait_init(struct lrb_buf *buf)
{
	init_irq_work(&buf->wait.work, lrb_port_wake_work);
	init_waitqueue_head(&buf->wait.wq);
}

void lrb_port_wait_fini(struct lrb_buf *buf)
{
	irq_work_sync(&buf->wait.work);
}

/* irq_work, because the delivering writer may be in NMI context. */
void lrb_port_wake(struct lrb_buf *buf)
{
	irq_work_queue(&buf->wait.work);
}

/* Writers run with preemption disabled, which RCU waits for. */
void lrb_port_synchronize(void)
{
	synchronize_rcu();
}
