// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures injected into lrb.ko by the kernel's fault injection
 * (CONFIG_FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC): writing N to
 * /proc/thread-self/fail-nth makes the N-th slab or page allocation of the
 * calling thread fail, so a sweep over N fails every allocation a system
 * call makes, one at a time. tests/vm/scenarios/65-faults.sh sets failslab
 * and fail_page_alloc to consider sleeping allocations (GFP_KERNEL) and to
 * fail nothing else.
 *
 *   fault-load --ko PATH [--params "P=V ..."] [--chan NAME]
 *	every allocation of loading the module (with a client's params, the
 *	channel it creates) fails in turn: the load must fail with ENOMEM
 *	and leave nothing behind (no module, no device of channel NAME), or
 *	succeed and unload cleanly; leaks are kmemleak's to find. With
 *	--chan, a reader races each load to open cpu0 of channel NAME and
 *	read it: a load that fails after publishing the file must end that
 *	read, with ENODEV if the channel's creation failed (or the end of
 *	the file if the client destroyed it)
 *   fault-open --chan NAME
 *	the same for opening and using the channel's files: cpu0 (open,
 *	GET_INFO, mmap, GET_POSITIONS), stats and metadata (open, read);
 *	after each failure the file still opens and reads as before
 *
 *   create-failed --ko PATH --params "P=V ..." --chan NAME
 *	loads the client with lrb.ko's test-only fail_publish set to NAME
 *	(tests/vm builds lrb.ko with LRB_FAILPOINTS=y): the creation
 *	publishes the files, waits for a reader on cpu0, then fails. This
 *	opens cpu0 as soon as it exists and reads it: the read must end with
 *	ENODEV within 10 s, then poll() reports EPOLLERR | EPOLLHUP, splice()
 *	and LRB_IOC_GET_NEXT_SUBBUF and LRB_IOC_FLUSH fail with ENODEV; the
 *	load fails with ENOMEM and leaves neither module nor device. (The
 *	load is finit_module() itself: busybox's insmod tries again with
 *	init_module() when it fails.)
 *
 * consume --fail-nth K arms the n-th allocation (n = 1..K in turn) of every
 * read, splice, GET_NEXT_SUBBUF and PUT_SUBBUF on the cpu files, and the
 * exact accounting then proves that no record was lost to a failure.
 */
#include "vmcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Give up a sweep that has not run out of allocations by then. */
#define VC_SWEEP_MAX 20000

int vc_fault_open(struct vc_fault *f, unsigned int max)
{
	*f = (struct vc_fault){ .next = 1, .max = max };
	f->fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (f->fd < 0) {
		vc_fail("open /proc/thread-self/fail-nth: %s: the kernel needs CONFIG_FAULT_INJECTION (make vmtest-debug)",
			strerror(errno));
		return -1;
	}
	return 0;
}

void vc_fault_close(struct vc_fault *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

static void vc_fault_write(struct vc_fault *f, unsigned int n)
{
	char s[16];
	int len = snprintf(s, sizeof(s), "%u", n);

	if (pwrite(f->fd, s, len, 0) != len) {
		vc_fail("write %u to fail-nth: %s", n, strerror(errno));
		exit(vc_report());
	}
}

void vc_fault_arm(struct vc_fault *f, unsigned int n)
{
	vc_fault_write(f, n);
	f->armed++;
	f->pending = true;
}

/*
 * Arm the next allocation of the cycle, unless the call failed from the
 * last @max armings in a row: its allocations before the one it is
 * waiting for are then all covered, and it runs without a failure once.
 */
void vc_fault_arm_next(struct vc_fault *f)
{
	if (f->streak >= f->max) {
		f->streak = 0;
		return;
	}
	vc_fault_arm(f, f->next);
	f->next = f->next % f->max + 1;
}

bool vc_fault_fired(struct vc_fault *f)
{
	int err = errno;
	char s[16] = "";
	bool fired;

	if (!f->pending)
		return false;
	f->pending = false;
	if (pread(f->fd, s, sizeof(s) - 1, 0) <= 0) {
		vc_fail("read fail-nth: %s", strerror(errno));
		exit(vc_report());
	}
	/* 0: the armed failure happened; else disarm what is left */
	fired = atoi(s) == 0;
	if (fired)
		f->fired++;
	else
		vc_fault_write(f, 0);
	errno = err;
	return fired;
}

/*
 * After a call armed with vc_fault_arm_next() that returned @ret: true if
 * it failed because of the injected failure, as it must, with ENOMEM (then
 * the caller repeats it); false if it was not the injected failure, or
 * was with another error (reported here).
 */
bool vc_fault_retry(struct vc_fault *f, long ret, const char *what)
{
	int err = errno;

	if (f->fd < 0 || !vc_fault_fired(f) || ret >= 0) {
		f->streak = 0;
		return false;
	}
	if (err == ENOMEM) {
		f->enomem++;
		f->streak++;
		return true;
	}
	vc_fail("%s: an injected allocation failure gave %s, want ENOMEM",
		what, strerrorname_np(err));
	errno = err;
	return false;
}

static int vc_finit_module(int fd, const char *params)
{
	return syscall(SYS_finit_module, fd, params, 0);
}

static int vc_delete_module(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK);
}

static bool vc_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

/* Wait up to a second for @path to be gone (a failed load tears down). */
static bool vc_gone(const char *path)
{
	int i;

	for (i = 0; i < 100 && vc_exists(path); i++)
		vc_sleep_ms(10);
	return !vc_exists(path);
}

/*
 * A failed load must leave neither the module nor the channel's device;
 * a load that got over its failure must have created the device. That is
 * its sysfs entry: devtmpfs makes the /dev node on a best-effort basis,
 * and the kernel does not report a node it could not make.
 */
static bool vc_load_clean(const char *name, unsigned int n, int r,
			  const char *mod, const char *sys)
{
	if (r)
		return vc_check(vc_gone(mod), "load %s, allocation %u failed: %s still exists",
				name, n, mod) &&
		       vc_check(!*sys || vc_gone(sys),
				"load %s, allocation %u failed: %s still exists",
				name, n, sys);
	return vc_check(!*sys || vc_exists(sys),
			"%s loaded after allocation %u failed, without %s",
			name, n, sys);
}

/* How long a read of a file whose channel went away may take to end. */
#define VC_RACE_WAIT_MS 10000

/**
 * struct vc_race - a reader racing a load to open and read cpu0
 * @path: /dev/lrb/<chan>/cpu0
 * @fd: the file, once opened
 * @thread: the reader
 * @stop: the load is over: stop trying to open
 * @opened: the reader opened the file and is reading it
 * @done: its read returned
 * @ret: what the read returned
 * @err: its errno
 */
struct vc_race {
	char path[256];
	int fd;
	pthread_t thread;
	atomic_bool stop;
	atomic_bool opened;
	atomic_bool done;
	ssize_t ret;
	int err;
};

static void *vc_race_fn(void *arg)
{
	struct vc_race *rc = arg;
	char buf[4096];

	rc->fd = -1;
	while (rc->fd < 0 && !atomic_load(&rc->stop))
		rc->fd = open(rc->path, O_RDONLY);
	if (rc->fd < 0)
		return NULL;
	atomic_store(&rc->opened, true);
	rc->ret = read(rc->fd, buf, sizeof(buf));
	rc->err = errno;
	atomic_store(&rc->done, true);
	close(rc->fd);
	return NULL;
}

static void vc_race_signal(int sig vc_unused)
{
}

static bool vc_race_start(struct vc_race *rc, const char *chan)
{
	int err;

	atomic_store(&rc->stop, false);
	atomic_store(&rc->opened, false);
	atomic_store(&rc->done, false);
	vc_chan_path(rc->path, sizeof(rc->path), chan, "cpu0");
	err = pthread_create(&rc->thread, NULL, vc_race_fn, rc);
	return vc_check(!err, "start a reader of %s: %s", rc->path,
			strerror(err));
}

/*
 * The load is over (@failed or not): its reader, if it opened the file,
 * must see the end of a failed channel within VC_RACE_WAIT_MS (a live one
 * is ended by the unload). Return 1 if it saw ENODEV, 0 if it did not
 * open the file or saw the end of the file, -1 on failure.
 */
static int vc_race_end(struct vc_race *rc, unsigned int n, bool failed,
		       const char *name)
{
	unsigned int ms;
	int ret = 0;

	atomic_store(&rc->stop, true);
	if (failed && atomic_load(&rc->opened)) {
		for (ms = 0; ms < VC_RACE_WAIT_MS && !atomic_load(&rc->done);
		     ms += 10)
			vc_sleep_ms(10);
		if (!vc_check(atomic_load(&rc->done),
			      "load %s, allocation %u failed: a read of %s opened during the load still waits after %u ms",
			      name, n, rc->path, VC_RACE_WAIT_MS)) {
			/* interrupt it: its wait is interruptible */
			pthread_kill(rc->thread, SIGUSR1);
			ret = -1;
		} else if (rc->ret == -1 && rc->err == ENODEV) {
			vc_pass();
			ret = 1;
		} else if (!vc_check(!rc->ret,
				     "load %s, allocation %u failed: a read of %s returned %zd (%s), want ENODEV or 0",
				     name, n, rc->path, rc->ret,
				     rc->ret < 0 ? strerrorname_np(rc->err) : "-")) {
			ret = -1;
		}
	}
	pthread_join(rc->thread, NULL);
	return ret;
}

int vc_cmd_fault_load(const struct vc_opts *o)
{
	char name[64], mod[128], sys[192] = "";
	const char *base = strrchr(o->ko, '/');
	u64 enomem = 0, tolerated = 0, opened = 0, nodev = 0;
	struct sigaction sa = { .sa_handler = vc_race_signal };
	struct vc_race rc;
	struct vc_fault f;
	unsigned int n;
	bool fired, clean = true;
	int fd, r, raced;

	base = base ? base + 1 : o->ko;
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(base, "."), base);
	snprintf(mod, sizeof(mod), "/sys/module/%s", name);
	if (o->chan)
		snprintf(sys, sizeof(sys), "/sys/class/lrb/lrb!%s!cpu0",
			 o->chan);
	fd = open(o->ko, O_RDONLY | O_CLOEXEC);
	if (!vc_check(fd >= 0, "open %s: %s", o->ko, strerror(errno)) ||
	    !vc_check(!vc_exists(mod), "%s is loaded: unload it first", name) ||
	    vc_fault_open(&f, 1))
		return vc_report();
	/* no SA_RESTART: a reader left waiting gets EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	for (n = 1; clean && n <= VC_SWEEP_MAX; n++) {
		if (o->chan && !vc_race_start(&rc, o->chan))
			break;
		vc_fault_arm(&f, n);
		r = vc_finit_module(fd, o->params);
		fired = vc_fault_fired(&f);
		if (r && !vc_check(fired && errno == ENOMEM,
				   "load %s, allocation %u %s: %s, want %s",
				   name, n, fired ? "failed" : "not reached",
				   strerrorname_np(errno),
				   fired ? "ENOMEM" : "success"))
			break;
		clean = vc_load_clean(name, n, r, mod, sys);
		if (!r && !vc_check(!vc_delete_module(name), "unload %s: %s",
				    name, strerror(errno)))
			break;
		/* the unload ended the read of a channel that went live */
		if (o->chan) {
			raced = vc_race_end(&rc, n, r, name);
			opened += atomic_load(&rc.opened);
			nodev += raced > 0;
			if (raced < 0)
				break;
		}
		if (r)
			enomem++;
		else if (fired)
			tolerated++;	/* a failure the load got over */
		else
			break;
	}
	vc_check(n <= VC_SWEEP_MAX,
		 "load %s still allocated after %u allocations", name, n - 1);
	vc_info("load %s: allocations 1 to %u failed in turn: %llu loads failed with ENOMEM, %llu succeeded anyway",
		name, n - 1, (ull)enomem, (ull)tolerated);
	if (o->chan) {
		/* a race, not always won: 66-create-fails makes it certain */
		vc_info("%llu racing readers opened cpu0 of %s; %llu read ENODEV when its creation failed",
			(ull)opened, o->chan, (ull)nodev);
	}
	vc_fault_close(&f);
	close(fd);
	return vc_report();
}

/* What fault-open does with one file; ENOMEM from any step is clean. */
enum vc_use { USE_CPU, USE_TEXT };

/*
 * Use @path as @use says; return 0, the errno of the first step that
 * failed, and in @text (USE_TEXT) what was read, malloc'd.
 */
static int vc_use_file(const char *path, enum vc_use use, char **text)
{
	struct lrb_buf_info info;
	struct lrb_positions pos;
	int fd, err = 0;
	void *map;

	fd = open(path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return errno;
	if (use == USE_TEXT) {
		size_t len = 0, cap = 65536;
		ssize_t r;

		*text = calloc(1, cap);
		while (*text && len < cap - 1 &&
		       (r = read(fd, *text + len, cap - 1 - len)) != 0) {
			if (r < 0) {
				err = errno;
				break;
			}
			len += r;
		}
	} else if (ioctl(fd, LRB_IOC_GET_INFO, &info)) {
		err = errno;
	} else {
		map = mmap(NULL, info.mmap_len, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED)
			err = errno;
		else if (ioctl(fd, LRB_IOC_GET_POSITIONS, &pos))
			err = errno;
		if (map != MAP_FAILED)
			munmap(map, info.mmap_len);
	}
	close(fd);
	return err;
}

static void vc_fault_open_file(struct vc_fault *f, const char *chan,
			       const char *file, enum vc_use use)
{
	char path[256], *ref = NULL, *text = NULL;
	u64 enomem = 0;
	unsigned int n;
	bool fired;
	int err;

	vc_chan_path(path, sizeof(path), chan, file);
	err = vc_use_file(path, use, &ref);
	if (!vc_check(!err, "%s before any failure: %s", path, strerror(err)))
		goto out;
	for (n = 1; n <= VC_SWEEP_MAX; n++) {
		vc_fault_arm(f, n);
		err = vc_use_file(path, use, &text);
		fired = vc_fault_fired(f);
		free(text);
		text = NULL;
		if (!vc_check(!err || (fired && err == ENOMEM),
			      "%s, allocation %u %s: %s, want %s", path, n,
			      fired ? "failed" : "not reached",
			      strerrorname_np(err), fired ? "ENOMEM" : "success"))
			break;
		enomem += !!err;
		/* then it works as before: no reader left busy, same text */
		err = vc_use_file(path, use, &text);
		if (!vc_check(!err, "%s after allocation %u failed: %s", path,
			      n, strerror(err)) ||
		    !vc_check(use != USE_TEXT || !strcmp(text, ref),
			      "%s reads differently after allocation %u failed",
			      path, n))
			break;
		free(text);
		text = NULL;
		if (!fired)
			break;
	}
	vc_check(n <= VC_SWEEP_MAX, "%s still allocated after %u allocations",
		 path, n - 1);
	vc_info("%s: %u allocations failed in turn, %llu times with ENOMEM",
		path, n - 1, (ull)enomem);
out:
	free(ref);
	free(text);
}

int vc_cmd_fault_open(const struct vc_opts *o)
{
	struct vc_fault f;

	if (vc_fault_open(&f, 1))
		return vc_report();
	vc_fault_open_file(&f, o->chan, "cpu0", USE_CPU);
	vc_fault_open_file(&f, o->chan, "stats", USE_TEXT);
	vc_fault_open_file(&f, o->chan, "metadata", USE_TEXT);
	vc_fault_close(&f);
	return vc_report();
}

/**
 * struct vc_load - a module load in a thread of its own
 * @fd: the module file
 * @params: its parameters
 * @thread: the thread
 * @ret: what finit_module() returned
 * @err: its errno
 */
struct vc_load {
	int fd;
	const char *params;
	pthread_t thread;
	int ret;
	int err;
};

static void *vc_load_fn(void *arg)
{
	struct vc_load *l = arg;

	l->ret = vc_finit_module(l->fd, l->params);
	l->err = errno;
	return NULL;
}

static void *vc_created_read(void *arg)
{
	struct vc_race *rc = arg;
	char buf[4096];

	rc->ret = read(rc->fd, buf, sizeof(buf));
	rc->err = errno;
	atomic_store(&rc->done, true);
	return NULL;
}

int vc_cmd_create_failed(const struct vc_opts *o)
{
	struct sigaction sa = { .sa_handler = vc_race_signal };
	struct vc_load l = { .params = o->params ? o->params : "" };
	struct vc_race rc = { .fd = -1 };
	char name[64], mod[128], sys[192];
	const char *base = strrchr(o->ko, '/');
	struct lrb_subbuf_desc d;
	struct pollfd pfd;
	unsigned int ms;
	int fd = -1, p[2], err;
	long r;

	base = base ? base + 1 : o->ko;
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(base, "."), base);
	snprintf(mod, sizeof(mod), "/sys/module/%s", name);
	snprintf(sys, sizeof(sys), "/sys/class/lrb/lrb!%s!cpu0", o->chan);
	l.fd = open(o->ko, O_RDONLY | O_CLOEXEC);
	if (!vc_check(l.fd >= 0, "open %s: %s", o->ko, strerror(errno)))
		return vc_report();
	err = pthread_create(&l.thread, NULL, vc_load_fn, &l);
	if (!vc_check(!err, "start loading %s: %s", name, strerror(err)))
		return vc_report();

	vc_chan_path(rc.path, sizeof(rc.path), o->chan, "cpu0");
	for (ms = 0; fd < 0 && ms < o->timeout_s * 1000; ms++) {
		fd = open(rc.path, O_RDONLY);
		if (fd < 0)
			vc_sleep_ms(1);
	}
	if (!vc_check(fd >= 0, "open %s within %u s: %s", rc.path,
		      o->timeout_s, strerror(errno)))
		return vc_report();
	vc_info("opened %s; reading it while its creation fails", rc.path);
	/* no SA_RESTART: a read left waiting gets EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	rc.fd = fd;
	err = pthread_create(&rc.thread, NULL, vc_created_read, &rc);
	if (!vc_check(!err, "start the reader: %s", strerror(err)))
		return vc_report();
	for (ms = 0; ms < VC_RACE_WAIT_MS && !atomic_load(&rc.done); ms += 10)
		vc_sleep_ms(10);
	if (!vc_check(atomic_load(&rc.done),
		      "read of %s, whose channel's creation failed: still waits after %u ms",
		      rc.path, VC_RACE_WAIT_MS))
		pthread_kill(rc.thread, SIGUSR1);
	pthread_join(rc.thread, NULL);
	vc_check_err(rc.ret, rc.err, ENODEV, 0,
		     "read of a file whose channel's creation failed");

	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	r = poll(&pfd, 1, 0);
	vc_check(r == 1 && pfd.revents == (POLLERR | POLLHUP),
		 "poll of a file whose channel's creation failed: %ld, revents %#x, want POLLERR|POLLHUP",
		 r, pfd.revents);
	if (vc_check(!pipe(p), "pipe: %s", strerror(errno))) {
		r = splice(fd, NULL, p[1], NULL, 4096, SPLICE_F_NONBLOCK);
		vc_check_err(r, errno, ENODEV, 0,
			     "splice of a file whose channel's creation failed");
		close(p[0]);
		close(p[1]);
	}
	r = ioctl(fd, LRB_IOC_GET_NEXT_SUBBUF, &d);
	vc_check_err(r, errno, ENODEV, 0,
		     "GET_NEXT_SUBBUF on a file whose channel's creation failed");
	r = ioctl(fd, LRB_IOC_FLUSH, 0);
	vc_check_err(r, errno, ENODEV, 0,
		     "FLUSH on a file whose channel's creation failed");
	close(fd);

	pthread_join(l.thread, NULL);
	close(l.fd);
	if (vc_check_err(l.ret, l.err, ENOMEM, 0, "the load whose creation failed"))
		vc_load_clean(name, 0, l.ret, mod, sys);
	else if (!l.ret)
		vc_delete_module(name);
	return vc_report();
}
