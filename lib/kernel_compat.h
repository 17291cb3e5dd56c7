/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's vocabulary (u32, likely, READ_ONCE, PAGE_SIZE,
 * EXPORT_SYMBOL_GPL...) for lib/ in user space, and for the project's own
 * user-space tests and tools: lib/port.h includes it in the user build. It
 * is never installed, so that none of these names reaches a program built
 * on the installed headers (the kernel's tools/include does the same for
 * the kernel sources its tools build).
 */
#ifndef _LRB_LIB_KERNEL_COMPAT_H
#define _LRB_LIB_KERNEL_COMPAT_H

#include <lrb/internal/port.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#define noinline __attribute__((__noinline__))
#define __cold __attribute__((__cold__))
#define __printf(a, b) __attribute__((__format__(printf, a, b)))
#define likely(x) __lrb_likely(x)
#define unlikely(x) __lrb_unlikely(x)
#define READ_ONCE(x) CMM_LOAD_SHARED(x)
#define WRITE_ONCE(x, v) CMM_STORE_SHARED(x, v)
#define barrier() cmm_barrier()
/* the kernel's barriers, by liburcu; see the callers for their pairing */
#define smp_wmb() cmm_smp_wmb()
#define smp_rmb() cmm_smp_rmb()
#define smp_mb() cmm_smp_mb()
#define ____cacheline_aligned __attribute__((__aligned__(__LRB_CACHELINE_BYTES)))
#define BIT(nr) (1UL << (nr))
#define EXPORT_SYMBOL_GPL(sym)
#define PAGE_SIZE LRB_PAGE_SIZE
#define pr_err_ratelimited(...) fprintf(stderr, __VA_ARGS__)
/* sleeping is always allowed where a user-space caller may call lrb */
#define might_sleep() do { } while (0)

/* Test hooks of the core (lib/): liblrb always has them, as port_user.c. */
#define __LRB_PORT_TEST_HOOKS 1

#endif /* _LRB_LIB_KERNEL_COMPAT_H */
