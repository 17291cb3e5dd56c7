// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-fuzz: what the ABI allows. Each operation says what it is doing
 * (fz_begin) before its system call, so that a finding, or the watchdog
 * of a hung worker, can name it with the seed and step that replay it.
 */
#include "fuzz.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *const fz_op_names[FZ_NR_OPS] = {
	[FZ_OPEN] = "open", [FZ_CLOSE] = "close", [FZ_READ] = "read",
	[FZ_SPLICE] = "splice", [FZ_MMAP] = "mmap", [FZ_MUNMAP] = "munmap",
	[FZ_TOUCH] = "touch", [FZ_MPROTECT] = "mprotect",
	[FZ_IOCTL] = "ioctl", [FZ_POLL] = "poll", [FZ_FCNTL] = "fcntl",
	[FZ_SEEK] = "lseek/pread", [FZ_TWIN] = "fork/shared",
};

void fz_begin(struct fz_worker *w, enum fz_op op, const char *fmt, ...)
{
	va_list ap;

	w->sh->ops[op]++;
	w->op = op;
	w->refuse = false;
	va_start(ap, fmt);
	vsnprintf(w->sh->op, sizeof(w->sh->op), fmt, ap);
	va_end(ap);
}

void fz_finding(struct fz_worker *w, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* atomic: the child of fz_op_twin() counts here too */
	if (__atomic_fetch_add(&w->sh->findings, 1, __ATOMIC_RELAXED) <
	    FZ_MAX_PRINTED)
		/* one write(): lines of workers do not interleave */
		dprintf(STDOUT_FILENO,
			"FINDING worker %d (seed %llu) step %llu: %s: %s\n",
			w->id, (ull)w->seed, (ull)w->step, w->sh->op, msg);
}

bool fz_errno_ok(struct fz_worker *w, enum fz_op op, int err,
		 const int *allowed)
{
	const int *a;

	w->sh->errs[op]++;
	if (w->refuse)
		w->sh->refused[op]++;
	else
		w->sh->errnos[op][err > 0 && err < FZ_NR_ERRNO ? err : 0]++;
	for (a = allowed; *a; a++)
		if (*a == err)
			return true;
	fz_finding(w, "errno %s (%s) is not documented for this call",
		   strerrorname_np(err) ?: "?", strerror(err));
	return false;
}
