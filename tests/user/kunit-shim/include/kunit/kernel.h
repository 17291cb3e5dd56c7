/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user-space KUnit shim's kernel threads, timers and the like, for the
 * suites that use them (tests/kunit/stress_test.c), on pthreads and POSIX
 * timers (kernel.c):
 *
 * - a kthread is a thread, bound to its CPU by kthread_create_on_cpu(),
 *   started by wake_up_process(); kthread_stop() waits for it;
 * - an hrtimer is a POSIX timer whose signal goes to the thread that
 *   started it, so its function runs nested in that thread's code on its
 *   CPU, as an interrupt does: HRTIMER_MODE_*_HARD on SIGRTMIN,
 *   HRTIMER_MODE_*_SOFT on SIGRTMIN + 1, blocked while a hard one runs
 *   (a softirq does not interrupt a hardirq). A thread's timers are
 *   deleted when it ends;
 * - completions, atomic64_t, acquire/release, delays and ktime.
 */
#ifndef _LRB_KUNIT_SHIM_KERNEL_H
#define _LRB_KUNIT_SHIM_KERNEL_H

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <kunit/test.h>

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL
#define HZ 1000
#define container_of(ptr, type, member)					\
	((type *)((char *)(ptr) - offsetof(type, member)))
#define MAX_ERRNO 4095
#define IS_ERR(p) ((unsigned long)(p) >= (unsigned long)-MAX_ERRNO)
#define PTR_ERR(p) ((long)(p))
#define ERR_PTR(e) ((void *)(long)(e))
#define smp_store_release(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)
#define smp_load_acquire(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)

typedef s64 ktime_t;

static inline ktime_t ns_to_ktime(u64 ns)
{
	return ns;
}

static inline u64 ktime_get_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

void usleep_range(unsigned long min, unsigned long max);
void msleep(unsigned int ms);
/* Threads are preempted in user space: nothing to yield for. */
#define cond_resched() do { } while (0)

typedef struct {
	long long counter;
} atomic64_t;

#define ATOMIC64_INIT(i) { (i) }

static inline long long atomic64_inc_return(atomic64_t *v)
{
	return __atomic_add_fetch(&v->counter, 1, __ATOMIC_SEQ_CST);
}

/* CPUs do not come and go under a test. */
#define cpus_read_lock() do { } while (0)
#define cpus_read_unlock() do { } while (0)
unsigned int num_online_cpus(void);

static inline void strscpy(char *dst, const char *src, size_t size)
{
	snprintf(dst, size, "%s", src);
}

/* module_param(): from the environment, LRB_KUNIT_<name> (uint only). */
void kunit_shim_param(const char *name, unsigned int *value);
#define module_param(name, type, perm)					\
	static void __attribute__((constructor)) __kshim_param_##name(void) \
	{								\
		kunit_shim_param(#name, &(name));			\
	}
#define MODULE_PARM_DESC(name, desc)

struct completion {
	int done;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

void init_completion(struct completion *x);
void complete(struct completion *x);
void wait_for_completion(struct completion *x);
unsigned long wait_for_completion_timeout(struct completion *x,
					  unsigned long timeout);
bool completion_done(struct completion *x);

struct task_struct;

#define TASK_RUNNING 0
#define TASK_INTERRUPTIBLE 1

struct task_struct *kthread_create_on_cpu(int (*fn)(void *data), void *data,
					  unsigned int cpu, const char *namefmt);
struct task_struct *kthread_run(int (*fn)(void *data), void *data,
				const char *namefmt, ...);
int wake_up_process(struct task_struct *t);
bool kthread_should_stop(void);
int kthread_stop(struct task_struct *t);
void get_task_struct(struct task_struct *t);
void put_task_struct(struct task_struct *t);
#define set_current_state(state) do { } while (0)
#define __set_current_state(state) do { } while (0)
/* Sleep until woken (wake_up_process(), kthread_stop()) or 10 ms pass. */
void schedule(void);

enum hrtimer_restart { HRTIMER_NORESTART, HRTIMER_RESTART };

enum hrtimer_mode {
	HRTIMER_MODE_REL_PINNED_HARD,
	HRTIMER_MODE_REL_PINNED_SOFT,
};

/**
 * struct hrtimer - a timer whose function interrupts a thread
 * @function: called in the signal handler, nested in the thread's code
 * @soft: HRTIMER_MODE_*_SOFT
 * @id: the POSIX timer, once started
 * @started: @id exists
 * @next: the delay hrtimer_forward_now() set
 * @link: the other timers started by the same thread
 */
struct hrtimer {
	enum hrtimer_restart (*function)(struct hrtimer *timer);
	bool soft;
	timer_t id;
	bool started;
	u64 next;
	struct hrtimer *link;
};

/* Timers fire every hrtimer_resolution ns at best: 1, as with HRTIMERS. */
#define hrtimer_resolution 1U

void hrtimer_init(struct hrtimer *timer, clockid_t clock,
		  enum hrtimer_mode mode);
void hrtimer_start(struct hrtimer *timer, ktime_t delay,
		   enum hrtimer_mode mode);
u64 hrtimer_forward_now(struct hrtimer *timer, ktime_t interval);
int hrtimer_cancel(struct hrtimer *timer);

/* The end of a case's or a kthread's thread: delete the timers it started. */
void kunit_shim_thread_exit(void);

#endif /* _LRB_KUNIT_SHIM_KERNEL_H */
