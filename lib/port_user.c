// SPDX-License-Identifier: GPL-2.0
/*
 * lrb port layer, user space: allocation, wakeups, grace periods and the
 * switch timer thread on libc and liburcu-bp.
 */
#include <assert.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <lrb/lrb.h>
#include "port.h"

__thread int __lrb_nesting __attribute__((tls_model("initial-exec")));
__thread long __lrb_port_mode __attribute__((tls_model("initial-exec")));
__thread long __lrb_port_saved[__LRB_PORT_DEPTHS + 1]
	__attribute__((tls_model("initial-exec")));
unsigned int __lrb_rseq_min_bufs = UINT_MAX;
unsigned long __lrb_rseq_block;
static unsigned long rseq_holds;

/* every writer that may write runs in a mode of its own */
static_assert(LRB_MAX_NESTING < __LRB_PORT_DEPTHS,
	      "__LRB_PORT_DEPTHS must exceed LRB_MAX_NESTING");

static long fail_alloc_countdown = -1;
static long live_allocs;

unsigned int __lrb_port_cpu_slow(void)
{
	int cpu = sched_getcpu();

	return cpu < 0 ? 0 : cpu;
}

/**
 * __lrb_port_fail_alloc_after() - test hook: fail a future allocation
 * @n: the n-th allocation from now fails (0: the next one); -1 disables
 */
void __lrb_port_fail_alloc_after(long n)
{
	uatomic_set(&fail_alloc_countdown, n);
}

/**
 * __lrb_port_live_allocs() - test hook: allocations not yet freed
 *
 * Return: metadata blocks and pages the library currently holds.
 */
long __lrb_port_live_allocs(void)
{
	return uatomic_read(&live_allocs);
}

static bool alloc_should_fail(void)
{
	long n = uatomic_read(&fail_alloc_countdown);

	while (n >= 0) {
		long old = uatomic_cmpxchg(&fail_alloc_countdown, n, n - 1);

		if (old == n)
			return n == 0;
		n = old;
	}
	return false;
}

/* Cache-line aligned, as struct lrb_buf requires. */
void *__lrb_port_zalloc(unsigned long size, int node)
{
	void *p;

	(void)node;
	if (alloc_should_fail() || posix_memalign(&p, CAA_CACHE_LINE_SIZE, size))
		return NULL;
	memset(p, 0, size);
	uatomic_add(&live_allocs, 1);
	return p;
}

void __lrb_port_free(void *p)
{
	if (!p)
		return;
	free(p);
	uatomic_add(&live_allocs, -1);
}

void *__lrb_port_alloc_page(int node)
{
	void *p;

	(void)node;
	if (alloc_should_fail() || posix_memalign(&p, PAGE_SIZE, PAGE_SIZE))
		return NULL;
	memset(p, 0, PAGE_SIZE);
	uatomic_add(&live_allocs, 1);
	return p;
}

void __lrb_port_free_page(void *addr)
{
	__lrb_port_free(addr);
}

/* The caller of lrb_subbuf_steal_page() frees the page with free(). */
void __lrb_port_disown_page(void *addr)
{
	(void)addr;
	uatomic_add(&live_allocs, -1);
}

/* A page disowned earlier comes back: the buffer frees it again. */
void __lrb_port_adopt_page(void *addr)
{
	(void)addr;
	uatomic_add(&live_allocs, 1);
}

int __lrb_port_cpu_node(unsigned int cpu)
{
	(void)cpu;
	return 0;
}

int __lrb_port_check_nr_cpus(unsigned int nr_cpus)
{
	return nr_cpus ? 0 : -EINVAL;
}

static long membarrier(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0, 0);
}

/*
 * The rseq fast path needs glibc's rseq area (cpu_id and rseq_cs: none
 * where the kernel or glibc lacks rseq, or with
 * GLIBC_TUNABLES=glibc.pthread.rseq=0), and membarrier's command that
 * aborts the sequences of the process's running threads. LRB_RSEQ=0 in
 * the environment keeps the locked path, for tests and for comparison.
 * Decided once, before other constructors (priority 101, the first
 * programs may use) can start writers: every writer of the process sees
 * the same decision.
 */
static void __attribute__((constructor(101))) lrb_rseq_init(void)
{
	const char *env = getenv("LRB_RSEQ");
	long cmds;

	if (!__LRB_PORT_RSEQ || (env && !strcmp(env, "0")))
		return;
	if (__rseq_size < offsetof(struct rseq, rseq_cs) + sizeof(u64))
		return;
	cmds = membarrier(MEMBARRIER_CMD_QUERY);
	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) ||
	    membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ))
		return;
	__lrb_rseq_min_bufs = lrb_possible_cpus();
}

/**
 * __lrb_port_rseq_on() - test hook: do writers use restartable sequences?
 *
 * Return: 1 if the per-CPU buffers of channels with a buffer per CPU are
 * written in rseq critical sections, 0 if every writer operation is a
 * locked one.
 */
int __lrb_port_rseq_on(void)
{
	return __lrb_rseq_min_bufs != UINT_MAX;
}

/**
 * __lrb_port_rseq_holds() - test hook: how often locked users blocked the
 *	restartable sequences
 *
 * Return: the number of holds of __lrb_rseq_block so far.
 */
unsigned long __lrb_port_rseq_holds(void)
{
	return uatomic_read(&rseq_holds);
}

/*
 * Block the restartable sequences of every thread before a locked
 * operation on a per-CPU buffer's counter: the first to raise the count
 * from 0 aborts, with membarrier, every sequence begun before (one that
 * commits after the count is visible reads it first and does not), and
 * marks the count fenced; those that join while it is fenced need no
 * membarrier of their own. The fence dies with the count.
 */
static void lrb_rseq_hold(void)
{
	unsigned long old = uatomic_add_return(&__lrb_rseq_block, 2) - 2;

	uatomic_inc(&rseq_holds);
	if (old & 1)
		return;
	if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ)) {
		fprintf(stderr,
			"lrb: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) failed (%s) after it worked at start-up: the buffers cannot be written safely; run with LRB_RSEQ=0\n",
			strerror(errno));
		abort();
	}
	uatomic_or(&__lrb_rseq_block, 1);
}

void __lrb_rseq_release(void)
{
	unsigned long old = uatomic_read(&__lrb_rseq_block);
	unsigned long prev;

	for (;;) {
		prev = uatomic_cmpxchg(&__lrb_rseq_block, old,
				       old >= 4 ? old - 2 : 0);
		if (prev == old)
			return;
		old = prev;
	}
}

/*
 * A writer operation on a per-CPU buffer that its restartable sequence
 * could not do: the writer is not on the buffer's CPU, or locked users
 * exist. It blocks the sequences until its section ends (nested deeper
 * than __LRB_PORT_DEPTHS: for this operation only) and uses a locked
 * instruction. A signal handler that runs between the load and the store
 * of the mode gives it back as it found it.
 */
unsigned long __lrb_v_slow(enum __lrb_v_op op, unsigned long *p,
			   unsigned long a, unsigned long b)
{
	long mode = __lrb_port_mode;
	bool per_op = mode == __LRB_MODE_PER_OP;
	unsigned long r;

	if (per_op) {
		lrb_rseq_hold();
	} else if (mode > 0) {
		lrb_rseq_hold();
		__lrb_port_mode = mode | LONG_MIN;
	}
	if (op == __LRB_V_ADD) {
		r = uatomic_add_return(p, a);
	} else if (op == __LRB_V_CMPXCHG) {
		r = uatomic_cmpxchg(p, a, b);
	} else {
		uatomic_set(p, a);
		r = a;
	}
	if (per_op)
		__lrb_rseq_release();
	return r;
}

/*
 * Any thread can act for a CPU, with locked operations, once it blocks the
 * restartable sequences of channels that use them (the kernel port sends
 * an IPI instead).
 */
void __lrb_port_on_cpu(struct lrb_buf *buf, void (*fn)(void *arg), void *arg)
{
	bool hold = __lrb_per_cpu(buf->chan->cfg) &&
		    buf->chan->nr_bufs >= __lrb_rseq_min_bufs;

	if (hold)
		lrb_rseq_hold();
	fn(arg);
	if (hold)
		__lrb_rseq_release();
}

/* No thread is tied to a CPU in user space: as __lrb_port_on_cpu(). */
void __lrb_port_on_this_cpu(struct lrb_buf *buf, void (*fn)(void *arg),
			    void *arg)
{
	__lrb_port_on_cpu(buf, fn, arg);
}

void __lrb_port_wait_init(struct lrb_buf *buf)
{
	buf->wait.seq = 0;
	buf->wait.waiters = 0;
}

void __lrb_port_wait_fini(struct lrb_buf *buf)
{
	(void)buf;
}

static long futex(int *uaddr, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

/*
 * Called after the change that makes the buffer readable: the commit count
 * (lrb_commit_bytes()), the delivered mark (__lrb_deliver()) or the read
 * position (lrb_push_reader()), each a value-returning atomic operation.
 * uatomic_add_return() is a full barrier on both sides (liburcu's uatomic
 * API): the change is visible before the new @seq, which pairs with the
 * smp_rmb() of lrb_wait_readable(); and @seq is stored before @waiters is
 * loaded, which pairs with the reader's increment of @waiters before it
 * loads @seq: either the reader sees the new @seq (its futex wait returns
 * at once) or this writer sees it waiting and wakes it.
 */
void __lrb_port_wake(struct lrb_buf *buf)
{
	uatomic_add_return(&buf->wait.seq, 1);
	if (uatomic_read(&buf->wait.waiters))
		futex(&buf->wait.seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

void __lrb_port_synchronize(void)
{
	urcu_bp_synchronize_rcu();
}

/**
 * struct __lrb_port_timer - a channel's switch timer: a thread
 * @thread: flushes every buffer of @chan each @period_ns
 * @lock: protects @stop
 * @cond: signalled, on CLOCK_MONOTONIC, when @stop is set
 * @chan: the channel
 * @period_ns: the period
 * @stop: the thread must return
 */
struct __lrb_port_timer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct lrb_chan *chan;
	u64 period_ns;
	bool stop;
};

static struct timespec lrb_timespec(u64 ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000ULL,
				  .tv_nsec = ns % 1000000000ULL };
}

/*
 * The flush does what lrb.ko's switch timer does on each CPU: the packet
 * being filled is closed and delivered once its records are committed;
 * one without records stays open. Ticks are on a fixed grid; one missed
 * (the thread was not scheduled) is not made up for with a burst.
 */
static void *lrb_timer_thread(void *arg)
{
	struct __lrb_port_timer *t = arg;
	u64 next = lrb_clock_default();
	struct timespec ts;
	unsigned int i;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		next += t->period_ns;
		if (next < lrb_clock_default())
			next = lrb_clock_default() + t->period_ns;
		ts = lrb_timespec(next);
		while (!t->stop &&
		       pthread_cond_timedwait(&t->cond, &t->lock, &ts) != ETIMEDOUT)
			;
		if (t->stop)
			break;
		pthread_mutex_unlock(&t->lock);
		for (i = 0; i < t->chan->nr_bufs; i++)
			lrb_buf_flush(t->chan->bufs[i]);
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

/*
 * Starts @chan's switch timer thread, named "lrb-switch", with every signal
 * blocked: the program's signals go to its own threads.
 */
int __lrb_port_timer_start(struct lrb_chan *chan, unsigned int period_us)
{
	struct __lrb_port_timer *t;
	pthread_condattr_t ca;
	sigset_t all, old;
	int ret;

	t = __lrb_port_zalloc(sizeof(*t), -1);
	if (!t)
		return -ENOMEM;
	t->chan = chan;
	t->period_ns = period_us * 1000ULL;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	/* the deadlines are lrb_clock_default()'s, CLOCK_MONOTONIC */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &ca);
	pthread_condattr_destroy(&ca);

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&t->thread, NULL, lrb_timer_thread, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		pthread_cond_destroy(&t->cond);
		pthread_mutex_destroy(&t->lock);
		__lrb_port_free(t);
		return -ret;
	}
	pthread_setname_np(t->thread, "lrb-switch");
	chan->timer = t;
	return 0;
}

/* Stops the thread, if any; it no longer runs on return. */
void __lrb_port_timer_stop(struct lrb_chan *chan)
{
	struct __lrb_port_timer *t = chan->timer;

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	__lrb_port_free(t);
	chan->timer = NULL;
}

/**
 * lrb_wait_readable() - sleep until a sub-buffer of @buf can be taken
 * @buf: buffer of a channel whose config wakes readers by writer
 * @timeout_ms: give up after this many milliseconds
 *
 * Return: 0 when lrb_get_next_subbuf() should find a sub-buffer,
 * -ETIMEDOUT otherwise.
 */
int lrb_wait_readable(struct lrb_buf *buf, int timeout_ms)
{
	u64 deadline = lrb_clock_default() + timeout_ms * 1000000ULL;
	bool ready;

	/* full barrier: @waiters before @seq, see __lrb_port_wake() */
	uatomic_add_return(&buf->wait.waiters, 1);
	for (;;) {
		int seq = uatomic_read(&buf->wait.seq);
		u64 now = lrb_clock_default();
		struct timespec ts;

		/*
		 * @seq before the buffer's state. Pairs with the full barrier
		 * between a writer's state change and its increment of @seq
		 * in __lrb_port_wake(): a weakly ordered CPU (arm64, POWER)
		 * could otherwise load the old state after the new @seq and
		 * sleep on that @seq through the delivery it announced.
		 */
		smp_rmb();
		ready = lrb_buf_readable(buf);
		if (ready || now >= deadline)
			break;
		ts.tv_sec = (deadline - now) / 1000000000ULL;
		ts.tv_nsec = (deadline - now) % 1000000000ULL;
		/* woken, interrupted by a signal or timed out: look again */
		futex(&buf->wait.seq, FUTEX_WAIT_PRIVATE, seq, &ts);
	}
	uatomic_add(&buf->wait.waiters, -1);
	return ready ? 0 : -ETIMEDOUT;
}

int lrb_possible_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (int)n : 1;
}

int lrb_thread_init(void)
{
	urcu_bp_register_thread();
	return 0;
}

u64 lrb_clock_monotonic(void)
{
	return lrb_clock_default();
}

u64 lrb_clock_cycles_freq(void)
{
	static u64 freq;
	u64 t0, c0, t1, c1;

	if (uatomic_read(&freq))
		return uatomic_read(&freq);
	t0 = lrb_clock_monotonic();
	c0 = lrb_clock_cycles();
	do {
		t1 = lrb_clock_monotonic();
	} while (t1 - t0 < 20000000ULL);
	c1 = lrb_clock_cycles();
	uatomic_set(&freq, (c1 - c0) * 1000000000ULL / (t1 - t0));
	return uatomic_read(&freq);
}
