// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-fuzz: two processes on one reader. The reader of a cpu file is its
 * open file description (Documentation/abi.rst), which fork() shares: for
 * a few milliseconds the worker and a child it forks both read, splice,
 * take and put back packets through the same description, and interrupt
 * each other with SIGALRM, so calls wait for the reader's lock and some
 * are interrupted there. Neither can know the reader's state, so only the
 * errno of each call is checked against the set abi.rst documents for it
 * (they are counted as one "fork/shared" call, not one by one);
 * afterwards the worker closes the file and unmaps its mappings.
 */
#include "fuzz.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define FZ_TWIN_MS 20

/* One call on the shared reader; a finding if its result is not allowed. */
static void fz_twin_call(struct fz_worker *w, int fd)
{
	struct lrb_subbuf_desc d;
	const char *what;
	const int *allowed;
	ssize_t ret;
	u64 n;
	int err;

	switch (fz_below(w, 6)) {
	case 0:
		what = "read()";
		n = FZ_PAGE + fz_below(w, 3 * FZ_PAGE);
		ret = read(fd, w->buf, n);
		if (ret > (ssize_t)n)
			fz_finding(w, "shared reader: read() of %llu returned %zd",
				   (ull)n, ret);
		allowed = FZ_ERRS(EAGAIN, EBUSY, EINTR);
		break;
	case 1:
		what = "splice()";
		n = (1 + fz_below(w, 4)) * FZ_PAGE;
		ret = splice(fd, NULL, w->pipe[1], NULL, n, 0);
		if (ret > (ssize_t)n || (ret > 0 && ret % FZ_PAGE))
			fz_finding(w, "shared reader: splice() of %llu returned %zd",
				   (ull)n, ret);
		while (read(w->pipe[0], w->buf, FZ_BUF_SIZE) > 0)
			;
		/* EINVAL: the other's read() left the cursor in a page */
		allowed = FZ_ERRS(EINVAL, EBUSY, EAGAIN, EINTR, ENOMEM);
		break;
	case 2:
	case 3:
		what = "GET_NEXT_SUBBUF";
		ret = ioctl(fd, LRB_IOC_GET_NEXT_SUBBUF, &d);
		allowed = FZ_ERRS(EBUSY, EAGAIN, ENODEV, EINTR);
		break;
	case 4:
		what = "PUT_SUBBUF";
		ret = ioctl(fd, LRB_IOC_PUT_SUBBUF, 0);
		allowed = FZ_ERRS(EINVAL, EINTR);
		break;
	default:
		what = "GET_HELD";
		ret = ioctl(fd, LRB_IOC_GET_HELD, &d);
		allowed = FZ_ERRS(EINVAL, EINTR);
	}
	if (ret >= 0)
		return;
	err = errno;
	for (; *allowed; allowed++)
		if (*allowed == err)
			return;
	fz_finding(w, "shared reader: %s: errno %s (%s) is not documented for this call",
		   what, strerrorname_np(err) ?: "?", strerror(err));
}

/* The child: calls until killed, with SIGALRM every millisecond. */
static void fz_twin_child(struct fz_worker *w, int fd)
{
	struct itimerval it = {
		.it_value = { .tv_usec = 1000 },
		.it_interval = { .tv_usec = 1000 },
	};

	w->rng ^= 0x5bd1e995;	/* not the parent's sequence */
	/* a pipe of its own: the parent drains the one they share */
	while (pipe(w->pipe) || fcntl(w->pipe[0], F_SETFL, O_NONBLOCK))
		pause();	/* until the parent's SIGKILL */
	setitimer(ITIMER_REAL, &it, NULL);
	for (;;)
		fz_twin_call(w, fd);
}

void fz_op_twin(struct fz_worker *w)
{
	struct fz_file *f = fz_any_file(w);
	struct itimerval it = {
		.it_value = { .tv_usec = 2000 },
		.it_interval = { .tv_usec = 2000 },
	};
	struct itimerval off = {};
	unsigned int i;
	double end;
	pid_t pid;
	int status;

	if (!f || f->kind != FZ_CPU)
		return;
	fz_begin(w, FZ_TWIN, "fork: two processes on %s", f->path);
	pid = fork();
	if (pid < 0) {
		fz_errno_ok(w, FZ_TWIN, errno, FZ_ERRS(EAGAIN, ENOMEM));
		return;
	}
	if (!pid)
		fz_twin_child(w, f->fd);
	/* the parent's blocking calls are cut short too */
	setitimer(ITIMER_REAL, &it, NULL);
	end = fz_now() + FZ_TWIN_MS / 1000.0;
	while (fz_now() < end) {
		fz_twin_call(w, f->fd);
		kill(pid, SIGALRM);
	}
	setitimer(ITIMER_REAL, &off, NULL);
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status) ||
	    WTERMSIG(status) != SIGKILL) {
		fz_begin(w, FZ_TWIN, "the child on %s", f->path);
		fz_finding(w, "ended otherwise than by SIGKILL (status 0x%x)",
			   status);
	}
	/* what the reader holds and where its cursor is: unknown now */
	for (i = 0; i < FZ_MAX_MAPS; i++)
		if (w->maps[i].addr && w->maps[i].reader == f->reader)
			fz_unmap(w, &w->maps[i]);
	fz_close_file(w, f);
}
