/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tiny helpers for the lrb user-space tests.
 *
 * CHECK(expr) and CHECK_EQ(a, b) count passed and failed checks and print
 * file:line and the failing expression (with both values for CHECK_EQ)
 * without stopping the program. TEST_RUN(fn) runs one test function,
 * test_main_begin() arms a watchdog and test_main_end() prints the final
 * "name: N passed, M failed" line and returns the exit status for main().
 * TEST_CONFIG() spells out a struct lrb_config, test_tally() counts the
 * results of writes that may fail in one expected way and test_check_lost()
 * checks the loss counters of a buffer. The payload convention is in
 * tests/common/payload.h.
 */
#ifndef _LRB_TEST_H
#define _LRB_TEST_H

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/kernel_compat.h"
#include "../../lib/test_hooks.h"
#include <lrb/lrb.h>
#include <lrb/decode.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* Failures printed in full; later ones are only counted. */
#define TEST_MAX_REPORTS 200

static int test_passed;
static int test_failed;
static const char *test_current = "";

#define CHECK(expr)							\
	do {								\
		if (expr) {						\
			test_passed++;					\
		} else {						\
			if (++test_failed <= TEST_MAX_REPORTS)		\
				fprintf(stderr,				\
					"%s:%d: %s: CHECK(%s) failed\n",\
					__FILE__, __LINE__, test_current,\
					#expr);				\
		}							\
	} while (0)

#define CHECK_EQ(a, b)							\
	do {								\
		long long __a = (long long)(a);				\
		long long __b = (long long)(b);				\
		if (__a == __b) {					\
			test_passed++;					\
		} else {						\
			if (++test_failed <= TEST_MAX_REPORTS)		\
				fprintf(stderr,				\
					"%s:%d: %s: CHECK_EQ(%s, %s) "	\
					"failed: %lld (0x%llx) != "	\
					"%lld (0x%llx)\n",		\
					__FILE__, __LINE__, test_current,\
					#a, #b, __a,			\
					(unsigned long long)__a, __b,	\
					(unsigned long long)__b);	\
		}							\
	} while (0)

/* Fail the enclosing test function early (after counting the failure). */
#define REQUIRE(expr)							\
	do {								\
		int __f = test_failed;					\
		CHECK(expr);						\
		if (test_failed != __f)					\
			return;						\
	} while (0)

#define REQUIRE_EQ(a, b)						\
	do {								\
		int __f = test_failed;					\
		CHECK_EQ(a, b);						\
		if (test_failed != __f)					\
			return;						\
	} while (0)

#define TEST_RUN(fn)							\
	do {								\
		int __f = test_failed;					\
		test_current = #fn;					\
		fn();							\
		if (getenv("TEST_VERBOSE") || test_failed != __f)	\
			fprintf(stderr, "%s %s\n",			\
				test_failed != __f ? "FAIL" : "ok", #fn);\
		test_current = "";					\
	} while (0)

static inline void test_watchdog(int sig)
{
	static const char msg[] = "test: watchdog expired, test hung\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

/* Arm a watchdog so that a hang fails the program instead of blocking. */
static inline void test_main_begin(unsigned int seconds)
{
	signal(SIGALRM, test_watchdog);
	alarm(seconds);
	setvbuf(stdout, NULL, _IOLBF, 0);
}

static inline int test_main_end(const char *name)
{
	alarm(0);
	printf("%s: %d passed, %d failed\n", name, test_passed, test_failed);
	return test_failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/*
 * Initializer of a struct lrb_config: the mode, alloc, wakeup and header
 * values, the compact timestamp bits, then the initializers of the
 * struct lrb_client_cb members (.clock_read = ...).
 */
#define TEST_CONFIG(m, a, w, h, bits, ...)				\
	{								\
		.mode = m,						\
		.alloc = a,						\
		.wakeup = w,						\
		.header = h,						\
		.tsc_bits = bits,					\
		.cb = { __VA_ARGS__ },					\
	}

/*
 * Count the result @ret of a write in *@ok (0) or *@failed (@err, the
 * expected failure); any other result fails a check.
 */
static inline void test_tally(int ret, int err, unsigned long *ok,
			      unsigned long *failed)
{
	if (!ret)
		(*ok)++;
	else if (ret == err)
		(*failed)++;
	else
		CHECK_EQ(ret, err);
}

/*
 * The loss counters of @buf: @full, @big and @nest records dropped for
 * those reasons, none for wrapping, no packet lost.
 */
static inline void test_check_lost(struct lrb_buf *buf, unsigned long full,
				   unsigned long big, unsigned long nest)
{
	struct lrb_buf_counters st;

	lrb_buf_stats(buf, &st);
	CHECK_EQ(st.lost_full, full);
	CHECK_EQ(st.lost_big, big);
	CHECK_EQ(st.lost_nest, nest);
	CHECK_EQ(st.lost_wrap, 0);
	CHECK_EQ(st.lost_packets, 0);
	CHECK_EQ(lrb_buf_lost(buf), full + big + nest);
}

#include "../common/payload.h"

#endif /* _LRB_TEST_H */
