// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-fuzz: one worker process. Its random numbers come from its own seed
 * only, so the sequence of operations it tries is the same for the same
 * seed (what each returns, and so the rest, depends on the writers and the
 * controller too). Blocking read() and splice() are cut short by SIGALRM
 * (EINTR is documented for both), so that a worker stuck for long is a
 * finding of the parent's watchdog, not of a wait for data.
 */
#include "fuzz.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

double fz_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* splitmix64 */
u64 fz_rand(struct fz_worker *w)
{
	u64 z = (w->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

u64 fz_below(struct fz_worker *w, u64 n)
{
	return n ? fz_rand(w) % n : 0;
}

bool fz_one_in(struct fz_worker *w, u64 n)
{
	return !fz_below(w, n);
}

/*
 * A pointer argument: @good 7 times in 8, else one the kernel must refuse
 * (*bad set): NULL, a kernel address, a PROT_NONE page, a wild value, or
 * one whose object runs into the PROT_NONE page; or a read-only page
 * (*ro_bad set: readable, holding zeros, not writable).
 */
void *fz_pointer(struct fz_worker *w, void *good, bool *bad, bool *ro_bad)
{
	*bad = false;
	*ro_bad = false;
	if (!fz_one_in(w, 8))
		return good;
	switch (fz_below(w, 6)) {
	case 0:
		*bad = true;
		return NULL;
	case 1:
		*bad = true;
		return (void *)0xffff888000000000UL;
	case 2:
		*bad = true;
		return w->none;
	case 3:
		*bad = true;
		/* non-canonical: never mapped */
		return (void *)((fz_rand(w) | (1ULL << 62)) & ~(1ULL << 63));
	case 4:
		*bad = true;
		/* an object that runs into the PROT_NONE page */
		return w->none - FZ_STRADDLE;
	}
	*ro_bad = true;
	return w->ro;
}

/* Put @len bytes of @src (zeros if NULL) in the read-only page. */
void fz_ro_fill(struct fz_worker *w, const void *src, size_t len)
{
	mprotect(w->ro, FZ_PAGE, PROT_READ | PROT_WRITE);
	memset(w->ro, 0, FZ_PAGE);
	if (src)
		memcpy(w->ro, src, len);
	mprotect(w->ro, FZ_PAGE, PROT_READ);
}

static void fz_alarm(int sig)
{
	(void)sig;
}

static const struct {
	void (*fn)(struct fz_worker *w);
	unsigned int weight;
} fz_ops[] = {
	{ fz_op_open, 6 }, { fz_op_close, 3 }, { fz_op_read, 12 },
	{ fz_op_splice, 8 }, { fz_op_mmap, 6 }, { fz_op_munmap, 6 },
	{ fz_op_touch, 12 }, { fz_op_mprotect, 2 }, { fz_op_ioctl, 28 },
	{ fz_op_poll, 5 }, { fz_op_fcntl, 2 }, { fz_op_seek, 2 },
	{ fz_op_twin, 1 },
};

static void fz_worker_init(struct fz_worker *w)
{
	struct sigaction sa = { .sa_handler = fz_alarm };
	char *pages;
	int i;

	/* no SA_RESTART: a blocking call returns EINTR */
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* each worker its own sequence, all from the one seed */
	w->rng = w->seed ^ ((u64)(w->id + 1) * 0xd1b54a32d192ed03ULL);
	for (i = 0; i < FZ_MAX_FDS; i++)
		w->files[i].fd = -1;
	w->buf = malloc(FZ_BUF_SIZE + 8);
	/* a read-write page, then a PROT_NONE page right after it */
	pages = mmap(NULL, 3 * FZ_PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/*
	 * Its read end only is non-blocking, for the drains: an O_NONBLOCK
	 * write end would make every splice() into it non-blocking.
	 */
	if (!w->buf || pages == MAP_FAILED || pipe(w->pipe) ||
	    fcntl(w->pipe[0], F_SETFL, O_NONBLOCK)) {
		dprintf(STDERR_FILENO, "lrb-fuzz: worker %d: out of memory or descriptors at start: %s\n",
			w->id, strerror(errno));
		exit(2);
	}
	w->none = pages + FZ_PAGE;
	w->ro = pages + 2 * FZ_PAGE;
	mprotect(w->none, FZ_PAGE, PROT_NONE);
	mprotect(w->ro, FZ_PAGE, PROT_READ);
}

void fz_worker_run(struct fz_worker *w, double deadline)
{
	unsigned int total = 0, i;
	u64 pick;

	fz_worker_init(w);
	for (i = 0; i < ARRAY_SIZE(fz_ops); i++)
		total += fz_ops[i].weight;
	while (fz_now() < deadline) {
		w->step++;
		w->sh->steps = w->step;
		/* drained files, other workers' CPUs: put them away soon */
		if (fz_one_in(w, 2) && fz_put_away(w))
			continue;
		pick = fz_below(w, total);
		for (i = 0; pick >= fz_ops[i].weight; i++)
			pick -= fz_ops[i].weight;
		fz_ops[i].fn(w);
	}
	/* leave everything: exit() closes and unmaps, as a crash would */
	w->sh->done = 1;
}
