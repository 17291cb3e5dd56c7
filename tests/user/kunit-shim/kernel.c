// SPDX-License-Identifier: GPL-2.0
/*
 * The user-space KUnit shim's kthreads, hrtimers and completions: see
 * <kunit/kernel.h>.
 */
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <kunit/kernel.h>

/**
 * struct task_struct - a kthread
 * @th: its thread
 * @fn: its function
 * @data: and argument
 * @cpu: the CPU it is bound to, or -1
 * @woken: wake_up_process() was called
 * @should_stop: kthread_stop() was called
 * @refs: references (the thread's own until kthread_stop())
 * @ret: what @fn returned
 * @lock: protects @woken, @should_stop, with @cond
 * @cond: where it sleeps
 */
struct task_struct {
	pthread_t th;
	int (*fn)(void *data);
	void *data;
	int cpu;
	bool woken;
	bool should_stop;
	int refs;
	int ret;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static __thread struct task_struct *current_task;
/* The timers the calling thread started, deleted when it ends. */
static __thread struct hrtimer *thread_timers;

void usleep_range(unsigned long min, unsigned long max)
{
	struct timespec ts = { 0, (long)(min * NSEC_PER_USEC) };

	nanosleep(&ts, NULL);
}

void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

unsigned int num_online_cpus(void)
{
	unsigned int n = 0;
	int cpu;

	for_each_online_cpu(cpu)
		n++;
	return n;
}

void kunit_shim_param(const char *name, unsigned int *value)
{
	char var[128];
	const char *s;

	snprintf(var, sizeof(var), "LRB_KUNIT_%s", name);
	s = getenv(var);
	if (s && *s)
		*value = strtoul(s, NULL, 0);
}

void init_completion(struct completion *x)
{
	x->done = 0;
	pthread_mutex_init(&x->lock, NULL);
	pthread_cond_init(&x->cond, NULL);
}

void complete(struct completion *x)
{
	pthread_mutex_lock(&x->lock);
	x->done++;
	pthread_cond_broadcast(&x->cond);
	pthread_mutex_unlock(&x->lock);
}

unsigned long wait_for_completion_timeout(struct completion *x,
					  unsigned long timeout)
{
	u64 end = ktime_get_ns() + (u64)timeout * (NSEC_PER_SEC / HZ);
	struct timespec ts;
	unsigned long left = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout / HZ + 1;
	pthread_mutex_lock(&x->lock);
	while (!x->done && ktime_get_ns() < end)
		if (pthread_cond_timedwait(&x->cond, &x->lock, &ts))
			break;
	if (x->done) {
		x->done--;
		left = 1 + (end > ktime_get_ns() ?
			    (end - ktime_get_ns()) / (NSEC_PER_SEC / HZ) : 0);
	}
	pthread_mutex_unlock(&x->lock);
	return left;
}

void wait_for_completion(struct completion *x)
{
	pthread_mutex_lock(&x->lock);
	while (!x->done)
		pthread_cond_wait(&x->cond, &x->lock);
	x->done--;
	pthread_mutex_unlock(&x->lock);
}

bool completion_done(struct completion *x)
{
	bool done;

	pthread_mutex_lock(&x->lock);
	done = x->done;
	pthread_mutex_unlock(&x->lock);
	return done;
}

/* A thread's end: its timers go, their signals never come. */
void kunit_shim_thread_exit(void)
{
	struct hrtimer *t;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGRTMIN + 1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (t = thread_timers; t; t = t->link) {
		if (t->started)
			timer_delete(t->id);
		t->started = false;
	}
	thread_timers = NULL;
}

static void *kthread_main(void *arg)
{
	struct task_struct *t = arg;
	bool run;

	current_task = t;
	if (t->cpu >= 0)
		set_cpus_allowed_ptr(NULL, t->cpu);
	lrb_thread_init();
	pthread_mutex_lock(&t->lock);
	while (!t->woken && !t->should_stop)
		pthread_cond_wait(&t->cond, &t->lock);
	run = !t->should_stop;
	pthread_mutex_unlock(&t->lock);
	t->ret = run ? t->fn(t->data) : -EINTR;
	kunit_shim_thread_exit();
	return NULL;
}

static struct task_struct *kthread_new(int (*fn)(void *data), void *data,
				       int cpu)
{
	struct task_struct *t = calloc(1, sizeof(*t));

	if (!t)
		return ERR_PTR(-ENOMEM);
	t->fn = fn;
	t->data = data;
	t->cpu = cpu;
	t->refs = 1;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	if (pthread_create(&t->th, NULL, kthread_main, t)) {
		free(t);
		return ERR_PTR(-EAGAIN);
	}
	return t;
}

struct task_struct *kthread_create_on_cpu(int (*fn)(void *data), void *data,
					  unsigned int cpu, const char *namefmt)
{
	return kthread_new(fn, data, cpu);
}

struct task_struct *kthread_run(int (*fn)(void *data), void *data,
				const char *namefmt, ...)
{
	struct task_struct *t = kthread_new(fn, data, -1);

	if (!IS_ERR(t))
		wake_up_process(t);
	return t;
}

int wake_up_process(struct task_struct *t)
{
	pthread_mutex_lock(&t->lock);
	t->woken = true;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	return 1;
}

bool kthread_should_stop(void)
{
	return current_task && __atomic_load_n(&current_task->should_stop,
					       __ATOMIC_ACQUIRE);
}

void schedule(void)
{
	struct task_struct *t = current_task;
	struct timespec ts;

	if (!t) {
		msleep(10);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 10 * NSEC_PER_MSEC;
	if (ts.tv_nsec >= (long)NSEC_PER_SEC) {
		ts.tv_sec++;
		ts.tv_nsec -= NSEC_PER_SEC;
	}
	pthread_mutex_lock(&t->lock);
	if (!t->should_stop)
		pthread_cond_timedwait(&t->cond, &t->lock, &ts);
	pthread_mutex_unlock(&t->lock);
}

int kthread_stop(struct task_struct *t)
{
	int ret;

	pthread_mutex_lock(&t->lock);
	__atomic_store_n(&t->should_stop, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->th, NULL);
	ret = t->ret;
	put_task_struct(t);
	return ret;
}

void get_task_struct(struct task_struct *t)
{
	__atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
}

void put_task_struct(struct task_struct *t)
{
	if (__atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL))
		return;
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->cond);
	free(t);
}

static void arm(struct hrtimer *t, u64 ns)
{
	struct itimerspec its = {
		.it_value = { ns / NSEC_PER_SEC, ns % NSEC_PER_SEC },
	};

	timer_settime(t->id, 0, &its, NULL);
}

/* The timer's "interrupt": its function, re-armed if it says so. */
static void timer_signal(int sig, siginfo_t *si, void *uc)
{
	struct hrtimer *t = si->si_value.sival_ptr;
	int saved = errno;

	if (t && t->started &&
	    t->function(t) == HRTIMER_RESTART && t->started)
		arm(t, t->next);
	errno = saved;
}

static void install_handlers_once(void)
{
	struct sigaction sa = {
		.sa_sigaction = timer_signal,
		.sa_flags = SA_SIGINFO | SA_RESTART,
	};

	/* a hardirq is not interrupted by a softirq */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGRTMIN + 1);
	sigaction(SIGRTMIN, &sa, NULL);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN + 1, &sa, NULL);
}

static void install_handlers(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, install_handlers_once);
}

void hrtimer_init(struct hrtimer *timer, clockid_t clock,
		  enum hrtimer_mode mode)
{
	memset(timer, 0, sizeof(*timer));
	timer->soft = mode == HRTIMER_MODE_REL_PINNED_SOFT;
}

void hrtimer_start(struct hrtimer *timer, ktime_t delay,
		   enum hrtimer_mode mode)
{
	struct sigevent sev = {
		.sigev_notify = SIGEV_THREAD_ID,
		.sigev_signo = timer->soft ? SIGRTMIN + 1 : SIGRTMIN,
		.sigev_value.sival_ptr = timer,
	};

	install_handlers();
	if (!timer->started) {
		sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		if (timer_create(CLOCK_MONOTONIC, &sev, &timer->id)) {
			perror("kunit_user: timer_create");
			return;
		}
		timer->started = true;
		timer->link = thread_timers;
		thread_timers = timer;
	}
	arm(timer, delay);
}

u64 hrtimer_forward_now(struct hrtimer *timer, ktime_t interval)
{
	timer->next = interval;
	return 1;
}

/* A started timer goes when its thread ends; before that, stop it. */
int hrtimer_cancel(struct hrtimer *timer)
{
	if (!timer->started)
		return 0;
	arm(timer, 0);
	return 1;
}
