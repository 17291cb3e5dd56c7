/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb port layer, out-of-line half: what the core needs from its
 * environment off the fast paths. Implemented by port_kernel.c and
 * port_user.c.
 */
#ifndef _LRB_LIB_PORT_H
#define _LRB_LIB_PORT_H

#include <lrb/internal/buffer.h>
#ifdef __KERNEL__
#include <linux/kernel.h>
#else
#include "kernel_compat.h"
#endif
#include "test_hooks.h"

void *__lrb_port_zalloc(unsigned long size, int node);
void __lrb_port_free(void *p);
void *__lrb_port_alloc_page(int node);
void __lrb_port_free_page(void *addr);
void __lrb_port_disown_page(void *addr);
void __lrb_port_adopt_page(void *addr);
int __lrb_port_cpu_node(unsigned int cpu);
int __lrb_port_check_nr_cpus(unsigned int nr_cpus);

void __lrb_port_on_cpu(struct lrb_buf *buf, void (*fn)(void *arg), void *arg);
void __lrb_port_on_this_cpu(struct lrb_buf *buf, void (*fn)(void *arg),
			    void *arg);
void __lrb_port_wait_init(struct lrb_buf *buf);
void __lrb_port_wait_fini(struct lrb_buf *buf);
void __lrb_port_wake(struct lrb_buf *buf);
void __lrb_port_synchronize(void);
int __lrb_port_timer_start(struct lrb_chan *chan, unsigned int period_us);
void __lrb_port_timer_stop(struct lrb_chan *chan);

#endif /* _LRB_LIB_PORT_H */
