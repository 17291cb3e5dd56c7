/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb test hooks: what the tests reach inside the core. Never installed;
 * port_user.c has them always, port_kernel.c and channel.c with
 * CONFIG_LRB_KUNIT_TEST (__LRB_PORT_TEST_HOOKS).
 */
#ifndef _LRB_LIB_TEST_HOOKS_H
#define _LRB_LIB_TEST_HOOKS_H

#include <lrb/internal/port.h>

struct lrb_chan;
struct lrb_ctx;

/**
 * enum __lrb_test_point - points of the fast paths where a test can run a
 *	nested writer, as an NMI landing there would
 * @__LRB_TEST_AFTER_READ_POS: lrb_reserve() read the write position and has
 *	not read the clock yet
 * @__LRB_TEST_AFTER_CAS: lrb_reserve()'s fast-path compare-and-swap took the
 *	slot; the record header is not written yet
 * @__LRB_TEST_BEFORE_COMMIT_ADD: lrb_commit() is about to add the record to
 *	the sub-buffer's commit count
 * @__LRB_TEST_AFTER_COMMIT_ADD: lrb_commit() added to the commit count and
 *	has not delivered the sub-buffer yet (if its add completed it)
 * @__LRB_TEST_BEFORE_DISCARD: lrb_discard() has not tried to take the
 *	reservation back yet
 *
 * A file that defines __LRB_TEST_HOOKS and includes this header before the
 * lrb headers gets a call of __lrb_test_hook(), which it must define, at
 * each point. In every other file __LRB_TEST_HOOK() is nothing.
 */
enum __lrb_test_point {
	__LRB_TEST_AFTER_READ_POS,
	__LRB_TEST_AFTER_CAS,
	__LRB_TEST_BEFORE_COMMIT_ADD,
	__LRB_TEST_AFTER_COMMIT_ADD,
	__LRB_TEST_BEFORE_DISCARD,
};

#ifdef __LRB_TEST_HOOKS
#ifdef _LRB_FRONTEND_H
#error "include the test hooks before the lrb headers to hook the fast paths"
#endif
void __lrb_test_hook(enum __lrb_test_point point, struct lrb_ctx *ctx);
#define __LRB_TEST_HOOK(point, ctx) __lrb_test_hook(__LRB_TEST_##point, ctx)
#endif

/* Fail allocations after @n more succeed (n < 0: never fail). */
void __lrb_port_fail_alloc_after(long n);
/* Allocations (pages and others) not freed yet. */
long __lrb_port_live_allocs(void);
/* User space: 1 if writers use restartable sequences, 0 if locked ones. */
int __lrb_port_rseq_on(void);
/* User space: how often locked users blocked the restartable sequences. */
unsigned long __lrb_port_rseq_holds(void);
int __lrb_channel_start_at(struct lrb_chan *chan, uint64_t pos);

#endif /* _LRB_LIB_TEST_HOOKS_H */
