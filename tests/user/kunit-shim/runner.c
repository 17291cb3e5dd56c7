// SPDX-License-Identifier: GPL-2.0
/*
 * Runs the KUnit suites linked into the program (kunit_test_suite() puts
 * them in the lrb_kunit_suites section) on liblrb and prints KTAP as KUnit
 * does, so that tests/ktap.sh counts both builds' results the same way:
 *
 *	kunit_user [SUITE_GLOB[.CASE_GLOB]]
 *
 * Each case, and each parameter of a parameterized case, runs in a thread
 * of its own, like KUnit's kthread per case. A watchdog (LRB_KUNIT_TIMEOUT
 * seconds, default 900) fails a run that hangs. Exit status is non-zero if
 * any case failed.
 */
#include <fnmatch.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <unistd.h>

#include <kunit/kernel.h>

/* More failures than this in one case are counted, not printed. */
#define MAX_REPORTS 50

extern struct kunit_suite *__start_lrb_kunit_suites[];
extern struct kunit_suite *__stop_lrb_kunit_suites[];

/**
 * struct kunit_resource - something a case owns until it ends
 * @action: releases it
 * @ctx: its argument
 * @next: the one added before
 */
struct kunit_resource {
	kunit_action_t *action;
	void *ctx;
	struct kunit_resource *next;
};

static cpu_set_t online;
static const char *indent;
static int reports;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

bool kunit_shim_cpu_online(int cpu)
{
	return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &online);
}

int set_cpus_allowed_ptr(void *task, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int kunit_add_action(struct kunit *test, kunit_action_t *action, void *ctx)
{
	struct kunit_resource *r = malloc(sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->action = action;
	r->ctx = ctx;
	r->next = test->resources;
	test->resources = r;
	return 0;
}

int kunit_add_action_or_reset(struct kunit *test, kunit_action_t *action,
			      void *ctx)
{
	int ret = kunit_add_action(test, action, ctx);

	if (ret)
		action(ctx);
	return ret;
}

void kunit_release_action(struct kunit *test, kunit_action_t *action,
			  void *ctx)
{
	struct kunit_resource **p, *r;

	for (p = &test->resources; (r = *p); p = &r->next) {
		if (r->action == action && r->ctx == ctx) {
			*p = r->next;
			action(ctx);
			free(r);
			return;
		}
	}
}

static void free_action(void *p)
{
	free(p);
}

void *kunit_kmalloc(struct kunit *test, size_t size, int gfp)
{
	void *p = malloc(size ? size : 1);

	if (p && kunit_add_action_or_reset(test, free_action, p))
		return NULL;
	return p;
}

static void release_all(struct kunit *test)
{
	struct kunit_resource *r;

	while ((r = test->resources)) {
		test->resources = r->next;
		r->action(r->ctx);
		free(r);
	}
}

static void vlog(struct kunit *test, const char *fmt, va_list ap)
{
	char msg[512];

	/* the message of an expectation without one is "" */
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (!msg[0])
		return;
	pthread_mutex_lock(&log_lock);
	printf("%s# %s: %s\n", indent, test->name, msg);
	pthread_mutex_unlock(&log_lock);
}

void kunit_log(struct kunit *test, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(test, fmt, ap);
	va_end(ap);
}

/* The failure line, as KUnit's "EXPECTATION FAILED at file:line". */
static bool report(struct kunit *test, bool assert, const char *file,
		   int line)
{
	test->failed = true;
	if (__atomic_add_fetch(&reports, 1, __ATOMIC_RELAXED) > MAX_REPORTS)
		return false;
	kunit_log(test, "%s FAILED at %s:%d", assert ? "ASSERTION" :
		  "EXPECTATION", file, line);
	return true;
}

void kunit_fail(struct kunit *test, bool assert, const char *file, int line,
		const char *what, const char *fmt, ...)
{
	va_list ap;

	if (!report(test, assert, file, line))
		return;
	kunit_log(test, "Expected %s", what);
	va_start(ap, fmt);
	vlog(test, fmt, ap);
	va_end(ap);
}

void kunit_fail_binary(struct kunit *test, bool assert, const char *file,
		       int line, const char *left, const char *op,
		       const char *right, long long l, long long r,
		       const char *fmt, ...)
{
	va_list ap;

	if (!report(test, assert, file, line))
		return;
	kunit_log(test, "Expected %s %s %s, but", left, op, right);
	kunit_log(test, "    %s == %lld (0x%llx)", left, l,
		  (unsigned long long)l);
	kunit_log(test, "    %s == %lld (0x%llx)", right, r,
		  (unsigned long long)r);
	va_start(ap, fmt);
	vlog(test, fmt, ap);
	va_end(ap);
}

void kunit_abort(struct kunit *test)
{
	longjmp(test->abort, 1);
}

struct case_run {
	struct kunit_suite *suite;
	struct kunit_case *kc;
	struct kunit test;
};

static void *case_thread(void *arg)
{
	struct case_run *cr = arg;
	struct kunit *test = &cr->test;

	lrb_thread_init();
	if (!setjmp(test->abort)) {
		if (cr->suite->init && cr->suite->init(test)) {
			kunit_log(test, "the suite's init failed");
			test->failed = true;
		} else {
			cr->kc->run_case(test);
		}
	}
	if (!setjmp(test->abort) && cr->suite->exit)
		cr->suite->exit(test);
	release_all(test);
	kunit_shim_thread_exit();
	return NULL;
}

/* Run one case (or one parameter of it) in its own thread. */
static bool run_one(struct kunit_suite *suite, struct kunit_case *kc,
		    const void *param, int index)
{
	struct case_run cr = {
		.suite = suite,
		.kc = kc,
		.test = {
			.param_value = param,
			.param_index = index,
			.name = kc->name,
		},
	};
	pthread_t th;
	int ret;

	reports = 0;
	ret = pthread_create(&th, NULL, case_thread, &cr);
	if (ret) {
		printf("%s# %s: cannot start its thread: %s\n", indent,
		       kc->name, strerror(ret));
		return false;
	}
	pthread_join(th, NULL);
	if (reports > MAX_REPORTS)
		printf("%s# %s: %d more failures not shown\n", indent,
		       kc->name, reports - MAX_REPORTS);
	return !cr.test.failed;
}

/* The case's result line; its parameters as subtests first. */
static bool run_case(struct kunit_suite *suite, struct kunit_case *kc, int nr,
		     int *pass, int *fail)
{
	char desc[KUNIT_PARAM_DESC_SIZE];
	const void *param = NULL;
	int n = 0, p = 0, f = 0;
	bool ok;

	if (!kc->generate_params) {
		indent = "    ";
		ok = run_one(suite, kc, NULL, 0);
		*(ok ? pass : fail) += 1;
		printf("    %s %d %s\n", ok ? "ok" : "not ok", nr, kc->name);
		return ok;
	}
	printf("        KTAP version 1\n        # Subtest: %s\n", kc->name);
	for (;;) {
		desc[0] = 0;
		param = kc->generate_params(param, desc);
		if (!param)
			break;
		if (!desc[0])
			snprintf(desc, sizeof(desc), "param-%d", n);
		indent = "        ";
		ok = run_one(suite, kc, param, n);
		n++;
		ok ? p++ : f++;
		printf("        %s %d %s\n", ok ? "ok" : "not ok", n, desc);
	}
	printf("    # %s: pass:%d fail:%d skip:0 total:%d\n", kc->name, p, f,
	       n);
	*pass += p;
	*fail += f;
	ok = n && !f;
	printf("    %s %d %s\n", ok ? "ok" : "not ok", nr, kc->name);
	return ok;
}

static bool case_selected(struct kunit_suite *suite, struct kunit_case *kc,
			  const char *glob)
{
	char name[512];

	if (!glob)
		return true;
	if (!strchr(glob, '.'))
		return !fnmatch(glob, suite->name, 0);
	snprintf(name, sizeof(name), "%s.%s", suite->name, kc->name);
	return !fnmatch(glob, name, 0);
}

static int nr_selected(struct kunit_suite *suite, const char *glob)
{
	struct kunit_case *kc;
	int n = 0;

	for (kc = suite->test_cases; kc->run_case; kc++)
		n += case_selected(suite, kc, glob);
	return n;
}

static void watchdog(int sig)
{
	static const char msg[] =
		"kunit_user: watchdog expired (LRB_KUNIT_TIMEOUT), a case hung\n"
		"not ok 1 kunit_user\n";

	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

int main(int argc, char **argv)
{
	struct kunit_suite **s;
	const char *glob = argc > 1 ? argv[1] : NULL;
	const char *t = getenv("LRB_KUNIT_TIMEOUT");
	int pass = 0, fail = 0, nr = 0, nsuites = 0;

	if (argc > 2 || (glob && glob[0] == '-')) {
		fprintf(stderr, "usage: %s [SUITE_GLOB[.CASE_GLOB]]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, watchdog);
	alarm(t ? atoi(t) : 900);
	if (sched_getaffinity(0, sizeof(online), &online)) {
		perror("kunit_user: sched_getaffinity");
		return 1;
	}
	for (s = __start_lrb_kunit_suites; s < __stop_lrb_kunit_suites; s++)
		nsuites += nr_selected(*s, glob) > 0;
	printf("KTAP version 1\n1..%d\n", nsuites);
	for (s = __start_lrb_kunit_suites; s < __stop_lrb_kunit_suites; s++) {
		struct kunit_suite *suite = *s;
		int n = nr_selected(suite, glob), i = 0, sp = 0, sf = 0;
		struct kunit_case *kc;
		bool ok = true;

		if (!n)
			continue;
		printf("    KTAP version 1\n    # Subtest: %s\n    1..%d\n",
		       suite->name, n);
		if (suite->suite_init && suite->suite_init(suite)) {
			printf("    # %s: suite_init failed\n", suite->name);
			ok = false;
			sf++;
		} else {
			for (kc = suite->test_cases; kc->run_case; kc++)
				if (case_selected(suite, kc, glob))
					ok &= run_case(suite, kc, ++i, &sp, &sf);
			if (suite->suite_exit)
				suite->suite_exit(suite);
		}
		printf("# %s: pass:%d fail:%d skip:0 total:%d\n", suite->name,
		       sp, sf, sp + sf);
		printf("%s %d %s\n", ok ? "ok" : "not ok", ++nr, suite->name);
		pass += sp;
		fail += sf;
	}
	alarm(0);
	printf("# Totals: pass:%d fail:%d skip:0 total:%d\n", pass, fail,
	       pass + fail);
	return fail || !nsuites ? 1 : 0;
}
