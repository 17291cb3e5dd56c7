/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb port layer: the one place where the kernel and user-space builds of
 * the core differ. Each side provides the same small set of primitives:
 * writer counters (union __lrb_v), shared atomics (struct __lrb_atomic), writer
 * context begin/end, the current CPU, per-context nesting depth, reader
 * wakeup state and the default clock. The out-of-line half (allocation,
 * running a function on a CPU, wakeups, grace periods) is declared in
 * lib/port.h and implemented in lib/port_kernel.c and lib/port_user.c.
 */
#ifndef _LRB_PORT_H
#define _LRB_PORT_H

#ifdef __KERNEL__
#include <lrb/internal/port_kernel.h>
#else
#include <lrb/internal/port_user.h>
#endif

#endif /* _LRB_PORT_H */
