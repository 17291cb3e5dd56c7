/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A user-space stand-in for the part of <kunit/test.h> (and the few kernel
 * helpers) that the KUnit suites listed in the Makefile's KUNIT_USER_SUITES
 * use, so that the same suites of tests/kunit run on liblrb, the way the
 * kernel's tools/testing/shared runs lib/ code on liburcu. Private to the
 * test build: it never reaches an installed header.
 *
 * Semantics follow KUnit: EXPECT records a failure and goes on, ASSERT
 * also ends the case; every case (and every parameter of a parameterized
 * case) runs in a thread of its own, so CPU affinity ends with it; memory
 * from kunit_kzalloc() and friends and the actions of kunit_add_action()
 * are released when the case ends. The runner (runner.c) prints KTAP as
 * KUnit does. Kernel-only interfaces are deliberately absent, so a suite
 * that needs them fails to build here instead of testing less.
 */
#ifndef _LRB_KUNIT_SHIM_TEST_H
#define _LRB_KUNIT_SHIM_TEST_H

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../../../lib/kernel_compat.h"
#include "../../../../../lib/test_hooks.h"
#include <lrb/lrb.h>

/*
 * The suites' marked accesses are relaxed atomics, as in the kernel's
 * memory model; ThreadSanitizer understands those, not the volatile
 * accesses of the user port's READ_ONCE().
 */
#undef READ_ONCE
#undef WRITE_ONCE
#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* Kernel helpers the suites use, on libc. */
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#define ALIGN(x, a) (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define min(a, b)							\
	({								\
		__typeof__(a) __ks_a = (a);				\
		__typeof__(b) __ks_b = (b);				\
		__ks_a < __ks_b ? __ks_a : __ks_b;			\
	})
#define max(a, b)							\
	({								\
		__typeof__(a) __ks_a = (a);				\
		__typeof__(b) __ks_b = (b);				\
		__ks_a > __ks_b ? __ks_a : __ks_b;			\
	})
#define min_t(t, a, b) min((t)(a), (t)(b))
#define max_t(t, a, b) max((t)(a), (t)(b))
#define BITS_PER_LONG (__SIZEOF_LONG__ * 8)
#define GENMASK(h, l) ((~0UL << (l)) & (~0UL >> (BITS_PER_LONG - 1 - (h))))
/* The user port's __lrb_nesting is per thread, which is what it reads. */
#define this_cpu_read(var) (var)
#define GFP_KERNEL 0
#define MODULE_LICENSE(s)
#define MODULE_DESCRIPTION(s)

static inline void *kmalloc(size_t n, int gfp)
{
	return malloc(n);
}

static inline void *kzalloc(size_t n, int gfp)
{
	return calloc(1, n);
}

static inline void kfree(const void *p)
{
	free((void *)p);
}

/* A page lrb_subbuf_steal_page() gave away: the user port's page. */
static inline void free_page(unsigned long addr)
{
	free((void *)addr);
}

static inline void *memchr_inv(const void *p, int c, size_t n)
{
	const unsigned char *s = p;

	for (; n; s++, n--)
		if (*s != (unsigned char)c)
			return (void *)s;
	return NULL;
}

/* sort() without its swap function, which the suites never pass. */
static inline void sort(void *base, size_t num, size_t size,
			int (*cmp)(const void *, const void *), void *swap)
{
	qsort(base, num, size, cmp);
}

/* The user port's writers use atomic operations: any thread may flush. */
#define preempt_disable() barrier()
#define preempt_enable() barrier()

/* CPUs: nr_cpu_ids is what a per-CPU channel has buffers for. */
#define nr_cpu_ids ((unsigned int)lrb_possible_cpus())
#define raw_smp_processor_id() ((unsigned int)sched_getcpu())
/* Only the calling thread can be moved: current is a token. */
#define current NULL
#define cpumask_of(cpu) (cpu)
int set_cpus_allowed_ptr(void *task, int cpu);
bool kunit_shim_cpu_online(int cpu);
#define for_each_online_cpu(cpu)					\
	for ((cpu) = 0; (cpu) < (int)nr_cpu_ids; (cpu)++)		\
		if (!kunit_shim_cpu_online(cpu)) {			\
		} else

#define KUNIT_PARAM_DESC_SIZE 128

struct kunit;

/**
 * struct kunit_case - a test case, as KUnit's
 * @run_case: the case
 * @name: its name
 * @generate_params: for a parameterized case, the next parameter after
 *	@prev (NULL: the first), its description written to @desc; NULL
 *	when there is none left
 */
struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
	const void *(*generate_params)(const void *prev, char *desc);
};

#define KUNIT_CASE(fn) { .run_case = fn, .name = #fn }
#define KUNIT_CASE_PARAM(fn, gen)					\
	{ .run_case = fn, .name = #fn, .generate_params = gen }
/* Attributes (speed) only matter to the kernel's filters. */
#define KUNIT_CASE_PARAM_ATTR(fn, gen, attr) KUNIT_CASE_PARAM(fn, gen)
#define KUNIT_CASE_ATTR(fn, attr) KUNIT_CASE(fn)

/**
 * struct kunit_suite - a suite, as KUnit's
 * @name: its name
 * @suite_init: run once before the cases; non-zero fails the suite
 * @suite_exit: run once after them
 * @init: run before each case, in its thread; non-zero fails the case
 * @exit: run after each case, in its thread
 * @test_cases: the cases, ended by an empty one
 */
struct kunit_suite {
	const char *name;
	int (*suite_init)(struct kunit_suite *suite);
	void (*suite_exit)(struct kunit_suite *suite);
	int (*init)(struct kunit *test);
	void (*exit)(struct kunit *test);
	struct kunit_case *test_cases;
};

struct kunit_resource;

/**
 * struct kunit - one running case
 * @priv: for the suite's init, exit and cases
 * @param_value: the current parameter of a parameterized case
 * @param_index: its index
 * @name: the case's name
 * @failed: an expectation or assertion failed
 * @resources: what to release when the case ends, newest first
 * @abort: where an assertion ends the case
 */
struct kunit {
	void *priv;
	const void *param_value;
	int param_index;
	const char *name;
	bool failed;
	struct kunit_resource *resources;
	jmp_buf abort;
};

/* Suites are collected in a section; the runner walks it. */
#define kunit_test_suites(...)						\
	static struct kunit_suite *__kunit_suites_##__LINE__[]		\
	__attribute__((used, section("lrb_kunit_suites"))) = { __VA_ARGS__ }
#define kunit_test_suite(suite) kunit_test_suites(&(suite))

#define KUNIT_ARRAY_PARAM(name, array, get_desc)			\
	static const void *name##_gen_params(const void *prev, char *desc) \
	{								\
		__typeof__((array)[0]) *__next =			\
			prev ? ((__typeof__(__next))prev) + 1 : (array); \
		if (__next - (array) < (long)ARRAY_SIZE(array)) {	\
			void (*__get_desc)(__typeof__(__next), char *) = \
				get_desc;				\
			if (__get_desc)					\
				__get_desc(__next, desc);		\
			return __next;					\
		}							\
		return NULL;						\
	}

/* Memory and actions released when the case ends. */
typedef void (kunit_action_t)(void *);
void *kunit_kmalloc(struct kunit *test, size_t size, int gfp);
int kunit_add_action(struct kunit *test, kunit_action_t *action, void *ctx);
int kunit_add_action_or_reset(struct kunit *test, kunit_action_t *action,
			      void *ctx);
void kunit_release_action(struct kunit *test, kunit_action_t *action,
			  void *ctx);

static inline void *kunit_kzalloc(struct kunit *test, size_t size, int gfp)
{
	void *p = kunit_kmalloc(test, size, gfp);

	if (p)
		memset(p, 0, size);
	return p;
}

static inline void *kunit_kcalloc(struct kunit *test, size_t n, size_t size,
				  int gfp)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return kunit_kzalloc(test, n * size, gfp);
}

static inline void *kunit_kmalloc_array(struct kunit *test, size_t n,
					size_t size, int gfp)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return kunit_kmalloc(test, n * size, gfp);
}

#define KUNIT_DEFINE_ACTION_WRAPPER(wrapper, orig, arg_type)		\
	static void wrapper(void *in)					\
	{								\
		orig((arg_type)in);					\
	}

/* Diagnostics, as KUnit prints them: "# " lines inside the case. */
void kunit_log(struct kunit *test, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define kunit_info(test, fmt, ...) kunit_log(test, fmt, ##__VA_ARGS__)
#define kunit_warn(test, fmt, ...) kunit_log(test, fmt, ##__VA_ARGS__)
#define kunit_err(test, fmt, ...) kunit_log(test, fmt, ##__VA_ARGS__)

void kunit_fail(struct kunit *test, bool assert, const char *file, int line,
		const char *what, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void kunit_fail_binary(struct kunit *test, bool assert, const char *file,
		       int line, const char *left, const char *op,
		       const char *right, long long l, long long r,
		       const char *fmt, ...)
	__attribute__((format(printf, 10, 11)));
void __attribute__((noreturn)) kunit_abort(struct kunit *test);

#define KUNIT_FAIL(test, fmt, ...)					\
	kunit_fail(test, false, __FILE__, __LINE__, "KUNIT_FAIL", fmt,	\
		   ##__VA_ARGS__)

#define KUNIT_SHIM_BINARY(test, assert, l, op, r, fmt, ...)		\
	do {								\
		const __typeof__(l) __ks_l = (l);				\
		const __typeof__(r) __ks_r = (r);				\
		if (!(__ks_l op __ks_r)) {					\
			kunit_fail_binary(test, assert, __FILE__, __LINE__, \
					  #l, #op, #r,			\
					  (long long)__ks_l, (long long)__ks_r, \
					  "%s" fmt, "", ##__VA_ARGS__);	\
			if (assert)					\
				kunit_abort(test);			\
		}							\
	} while (0)

#define KUNIT_SHIM_PTR(test, assert, l, op, r, fmt, ...)		\
	do {								\
		const void *__ks_l = (l);					\
		const void *__ks_r = (r);					\
		if (!(__ks_l op __ks_r)) {					\
			kunit_fail_binary(test, assert, __FILE__, __LINE__, \
					  #l, #op, #r,			\
					  (long long)(uintptr_t)__ks_l,	\
					  (long long)(uintptr_t)__ks_r,	\
					  "%s" fmt, "", ##__VA_ARGS__);	\
			if (assert)					\
				kunit_abort(test);			\
		}							\
	} while (0)

#define KUNIT_SHIM_BOOL(test, assert, cond, want, fmt, ...)		\
	do {								\
		if ((bool)(cond) != (want)) {				\
			kunit_fail(test, assert, __FILE__, __LINE__,	\
				   (want) ? "(" #cond ") is false" :	\
					    "(" #cond ") is true",	\
				   "%s" fmt, "", ##__VA_ARGS__);		\
			if (assert)					\
				kunit_abort(test);			\
		}							\
	} while (0)

#define KUNIT_EXPECT_EQ_MSG(t, l, r, fmt, ...)				\
	KUNIT_SHIM_BINARY(t, false, l, ==, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_NE_MSG(t, l, r, fmt, ...)				\
	KUNIT_SHIM_BINARY(t, false, l, !=, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_LT_MSG(t, l, r, fmt, ...)				\
	KUNIT_SHIM_BINARY(t, false, l, <, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_LE_MSG(t, l, r, fmt, ...)				\
	KUNIT_SHIM_BINARY(t, false, l, <=, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_GT_MSG(t, l, r, fmt, ...)				\
	KUNIT_SHIM_BINARY(t, false, l, >, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_GE_MSG(t, l, r, fmt, ...)				\
	KUNIT_SHIM_BINARY(t, false, l, >=, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_PTR_EQ_MSG(t, l, r, fmt, ...)			\
	KUNIT_SHIM_PTR(t, false, l, ==, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_PTR_NE_MSG(t, l, r, fmt, ...)			\
	KUNIT_SHIM_PTR(t, false, l, !=, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_NULL_MSG(t, p, fmt, ...)				\
	KUNIT_SHIM_PTR(t, false, p, ==, NULL, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_NOT_NULL_MSG(t, p, fmt, ...)			\
	KUNIT_SHIM_PTR(t, false, p, !=, NULL, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_TRUE_MSG(t, c, fmt, ...)				\
	KUNIT_SHIM_BOOL(t, false, c, true, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_FALSE_MSG(t, c, fmt, ...)				\
	KUNIT_SHIM_BOOL(t, false, c, false, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_EQ(t, l, r) KUNIT_EXPECT_EQ_MSG(t, l, r, "")
#define KUNIT_EXPECT_NE(t, l, r) KUNIT_EXPECT_NE_MSG(t, l, r, "")
#define KUNIT_EXPECT_LT(t, l, r) KUNIT_EXPECT_LT_MSG(t, l, r, "")
#define KUNIT_EXPECT_LE(t, l, r) KUNIT_EXPECT_LE_MSG(t, l, r, "")
#define KUNIT_EXPECT_GT(t, l, r) KUNIT_EXPECT_GT_MSG(t, l, r, "")
#define KUNIT_EXPECT_GE(t, l, r) KUNIT_EXPECT_GE_MSG(t, l, r, "")
#define KUNIT_EXPECT_PTR_EQ(t, l, r) KUNIT_EXPECT_PTR_EQ_MSG(t, l, r, "")
#define KUNIT_EXPECT_PTR_NE(t, l, r) KUNIT_EXPECT_PTR_NE_MSG(t, l, r, "")
#define KUNIT_EXPECT_NULL(t, p) KUNIT_EXPECT_NULL_MSG(t, p, "")
#define KUNIT_EXPECT_NOT_NULL(t, p) KUNIT_EXPECT_NOT_NULL_MSG(t, p, "")
#define KUNIT_EXPECT_TRUE(t, c) KUNIT_EXPECT_TRUE_MSG(t, c, "")
#define KUNIT_EXPECT_FALSE(t, c) KUNIT_EXPECT_FALSE_MSG(t, c, "")

#define KUNIT_ASSERT_EQ_MSG(t, l, r, fmt, ...)				\
	KUNIT_SHIM_BINARY(t, true, l, ==, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_NE_MSG(t, l, r, fmt, ...)				\
	KUNIT_SHIM_BINARY(t, true, l, !=, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_LT_MSG(t, l, r, fmt, ...)				\
	KUNIT_SHIM_BINARY(t, true, l, <, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_LE_MSG(t, l, r, fmt, ...)				\
	KUNIT_SHIM_BINARY(t, true, l, <=, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_GT_MSG(t, l, r, fmt, ...)				\
	KUNIT_SHIM_BINARY(t, true, l, >, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_GE_MSG(t, l, r, fmt, ...)				\
	KUNIT_SHIM_BINARY(t, true, l, >=, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_PTR_EQ_MSG(t, l, r, fmt, ...)			\
	KUNIT_SHIM_PTR(t, true, l, ==, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_PTR_NE_MSG(t, l, r, fmt, ...)			\
	KUNIT_SHIM_PTR(t, true, l, !=, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_NULL_MSG(t, p, fmt, ...)				\
	KUNIT_SHIM_PTR(t, true, p, ==, NULL, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_NOT_NULL_MSG(t, p, fmt, ...)			\
	KUNIT_SHIM_PTR(t, true, p, !=, NULL, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_TRUE_MSG(t, c, fmt, ...)				\
	KUNIT_SHIM_BOOL(t, true, c, true, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_FALSE_MSG(t, c, fmt, ...)				\
	KUNIT_SHIM_BOOL(t, true, c, false, fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_EQ(t, l, r) KUNIT_ASSERT_EQ_MSG(t, l, r, "")
#define KUNIT_ASSERT_NE(t, l, r) KUNIT_ASSERT_NE_MSG(t, l, r, "")
#define KUNIT_ASSERT_LT(t, l, r) KUNIT_ASSERT_LT_MSG(t, l, r, "")
#define KUNIT_ASSERT_LE(t, l, r) KUNIT_ASSERT_LE_MSG(t, l, r, "")
#define KUNIT_ASSERT_GT(t, l, r) KUNIT_ASSERT_GT_MSG(t, l, r, "")
#define KUNIT_ASSERT_GE(t, l, r) KUNIT_ASSERT_GE_MSG(t, l, r, "")
#define KUNIT_ASSERT_PTR_EQ(t, l, r) KUNIT_ASSERT_PTR_EQ_MSG(t, l, r, "")
#define KUNIT_ASSERT_PTR_NE(t, l, r) KUNIT_ASSERT_PTR_NE_MSG(t, l, r, "")
#define KUNIT_ASSERT_NULL(t, p) KUNIT_ASSERT_NULL_MSG(t, p, "")
#define KUNIT_ASSERT_NOT_NULL(t, p) KUNIT_ASSERT_NOT_NULL_MSG(t, p, "")
#define KUNIT_ASSERT_TRUE(t, c) KUNIT_ASSERT_TRUE_MSG(t, c, "")
#define KUNIT_ASSERT_FALSE(t, c) KUNIT_ASSERT_FALSE_MSG(t, c, "")

#endif /* _LRB_KUNIT_SHIM_TEST_H */
