// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-fuzz: the syscall fuzzer of lrb.ko's channel files. N worker
 * processes make random sequences of open, read, splice, mmap, munmap,
 * page reads, mprotect, ioctl, poll, fcntl, lseek and close on the files
 * of one channel, checking each result against Documentation/abi.rst,
 * while tests/fuzz/vm/90-fuzz.sh writes, destroys and recreates the
 * channel and takes CPUs offline. The parent is the watchdog: a worker
 * that dies of a signal, or makes no step for --hang seconds, is a finding.
 *
 *   lrb-fuzz --chan NAME [--workers N] [--duration SECONDS] [--seed S]
 *	      [--hang SECONDS]
 *
 * The seed (default: from the clock) is printed first; the same seed gives
 * each worker the same random choices again. Prints every finding (FINDING
 * ...: the worker, seed, step and call), the operations per kind, and
 * last "vmtest fuzz: 1 passed, 0 failed" or "0 passed, N failed" with N
 * findings. Exit status 0 if there was none.
 */
#include "fuzz.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define FZ_MAX_WORKERS 64

struct fz_run {
	const char *chan;
	unsigned int workers;
	double duration;
	double hang;
	u64 seed;
	u32 nr_cpus;
	struct fz_shared *sh;
	pid_t pid[FZ_MAX_WORKERS];
	u64 seen[FZ_MAX_WORKERS];
	double moved[FZ_MAX_WORKERS];
	u64 parent_findings;
};

static void fz_usage(void)
{
	fprintf(stderr, "usage: lrb-fuzz --chan NAME [--workers N] [--duration SECONDS] [--seed S] [--hang SECONDS]\n");
	exit(2);
}

static void fz_args(struct fz_run *run, int argc, char **argv)
{
	int i;

	run->workers = 4;
	run->duration = 60;
	run->hang = 60;
	run->seed = (u64)fz_now() * 1000003 ^ getpid();
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--chan"))
			run->chan = argv[i + 1];
		else if (!strcmp(argv[i], "--workers"))
			run->workers = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--duration"))
			run->duration = strtod(argv[i + 1], NULL);
		else if (!strcmp(argv[i], "--seed"))
			run->seed = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--hang"))
			run->hang = strtod(argv[i + 1], NULL);
		else
			fz_usage();
	}
	if (i != argc || !run->chan || !run->workers ||
	    run->workers > FZ_MAX_WORKERS || run->duration <= 0)
		fz_usage();
}

/* Possible CPUs: /sys/devices/system/cpu/possible is "0-N" (or "0"). */
static u32 fz_possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned int first = 0, last = 0;
	int n = f ? fscanf(f, "%u-%u", &first, &last) : 0;

	if (f)
		fclose(f);
	if (n < 1) {
		fprintf(stderr, "lrb-fuzz: cannot read /sys/devices/system/cpu/possible: is sysfs mounted?\n");
		exit(2);
	}
	return (n == 2 ? last : first) + 1;
}

static void fz_parent_finding(struct fz_run *run, unsigned int i,
			      const char *what)
{
	run->parent_findings++;
	printf("FINDING worker %u (seed %llu) step %llu: %s: %s\n", i,
	       (ull)run->seed, (ull)run->sh[i].steps, run->sh[i].op, what);
}

/* Where a hung worker sleeps in the kernel, from /proc. */
static void fz_show_stack(pid_t pid)
{
	char path[64], line[256];
	const char *const files[] = { "wchan", "stack" };
	unsigned int i;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, files[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			printf("    %s: %s%s", files[i], line,
			       strchr(line, '\n') ? "" : "\n");
		fclose(f);
	}
}

/* A worker ended: a finding unless it finished its time. */
static void fz_reap(struct fz_run *run, unsigned int i, int status)
{
	char what[80];

	run->pid[i] = 0;
	if (WIFEXITED(status) && !WEXITSTATUS(status) && run->sh[i].done)
		return;
	if (WIFSIGNALED(status))
		snprintf(what, sizeof(what), "worker died of signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(what, sizeof(what), "worker exited with status %d before its time",
			 WEXITSTATUS(status));
	fz_parent_finding(run, i, what);
}

/* Kill a worker that made no step for run->hang seconds. */
static void fz_hung(struct fz_run *run, unsigned int i)
{
	int status, n;

	fz_parent_finding(run, i, "worker hung: no step for the watchdog's time");
	fz_show_stack(run->pid[i]);
	kill(run->pid[i], SIGKILL);
	for (n = 0; n < 100; n++) {
		if (waitpid(run->pid[i], &status, WNOHANG) == run->pid[i]) {
			run->pid[i] = 0;
			return;
		}
		usleep(100000);
	}
	printf("    worker %u (pid %d) did not die of SIGKILL in 10 s: stuck in the kernel\n",
	       i, run->pid[i]);
	run->pid[i] = 0;
}

static void fz_watch(struct fz_run *run, double end)
{
	unsigned int i, alive;
	double now;
	int status;

	do {
		sleep(1);
		now = fz_now();
		alive = 0;
		for (i = 0; i < run->workers; i++) {
			if (!run->pid[i])
				continue;
			if (waitpid(run->pid[i], &status, WNOHANG) == run->pid[i]) {
				fz_reap(run, i, status);
				continue;
			}
			alive++;
			if (run->sh[i].steps != run->seen[i]) {
				run->seen[i] = run->sh[i].steps;
				run->moved[i] = now;
			} else if (now - run->moved[i] > run->hang) {
				fz_hung(run, i);
			}
		}
	} while (alive && now < end + run->hang + 5);
	for (i = 0; i < run->workers; i++)
		if (run->pid[i])
			fz_hung(run, i);
}

/* "EAGAIN 12, EBUSY 3": the commonest errnos of op @k's failures */
static void fz_errno_list(const struct fz_run *run, unsigned int k,
			  char *out, size_t size)
{
	u64 n[FZ_NR_ERRNO] = {};
	unsigned int i, e, shown;
	size_t len = 0;

	for (i = 0; i < run->workers; i++)
		for (e = 0; e < FZ_NR_ERRNO; e++)
			n[e] += run->sh[i].errnos[k][e];
	out[0] = '\0';
	for (shown = 0; shown < 4; shown++) {
		unsigned int best = 0;

		for (e = 1; e < FZ_NR_ERRNO; e++)
			if (n[e] > n[best])
				best = e;
		if (!n[best] || len >= size)
			break;
		len += snprintf(out + len, size - len, "%s%s %llu",
				shown ? ", " : "",
				best ? strerrorname_np(best) ?: "?" : "other",
				(ull)n[best]);
		n[best] = 0;
	}
}

/*
 * The calls per kind: succeeded, refused (an argument or state chosen
 * for the ABI to refuse) and failed (the channel's state said no), with
 * the errnos of the failures.
 */
static void fz_summary(const struct fz_run *run)
{
	u64 ops[FZ_NR_OPS] = {}, errs[FZ_NR_OPS] = {}, refused[FZ_NR_OPS] = {};
	u64 all = 0, all_ok = 0, all_refused = 0, findings;
	unsigned int i, k;
	char why[120];

	findings = run->parent_findings;
	for (i = 0; i < run->workers; i++) {
		findings += run->sh[i].findings;
		for (k = 0; k < FZ_NR_OPS; k++) {
			ops[k] += run->sh[i].ops[k];
			errs[k] += run->sh[i].errs[k];
			refused[k] += run->sh[i].refused[k];
		}
	}
	printf("lrb-fuzz: seed %llu, %u workers, %.0f s, channel %s\n",
	       (ull)run->seed, run->workers, run->duration, run->chan);
	printf("  %-12s %10s %10s %5s %10s %10s  %s\n", "operation", "calls",
	       "ok", "ok%", "refused", "failed", "failed with");
	for (k = 0; k < FZ_NR_OPS; k++) {
		u64 meant = ops[k] - refused[k], ok = ops[k] - errs[k];

		fz_errno_list(run, k, why, sizeof(why));
		/* ok%: of the calls not meant to be refused */
		printf("  %-12s %10llu %10llu %5.1f %10llu %10llu  %s\n",
		       fz_op_names[k], (ull)ops[k], (ull)ok,
		       meant ? 100.0 * ok / meant : 0.0, (ull)refused[k],
		       (ull)(errs[k] - refused[k]), why);
		all += ops[k];
		all_ok += ok;
		all_refused += refused[k];
	}
	printf("  %-12s %10llu %10llu %5.1f %10llu %10llu\n", "total",
	       (ull)all, (ull)all_ok,
	       all > all_refused ? 100.0 * all_ok / (all - all_refused) : 0.0,
	       (ull)all_refused, (ull)(all - all_ok - all_refused));
	printf("lrb-fuzz: %llu findings (replay: lrb-fuzz --chan %s --workers %u --seed %llu)\n",
	       (ull)findings, run->chan, run->workers, (ull)run->seed);
	printf("vmtest fuzz: %d passed, %llu failed\n", !findings, (ull)findings);
}

int main(int argc, char **argv)
{
	struct fz_run run = {};
	double start, end;
	unsigned int i;

	fz_args(&run, argc, argv);
	run.nr_cpus = fz_possible_cpus();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("lrb-fuzz: seed %llu, %u workers, %.0f s, channel %s, %u possible CPUs\n",
	       (ull)run.seed, run.workers, run.duration, run.chan, run.nr_cpus);
	run.sh = mmap(NULL, run.workers * sizeof(*run.sh), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (run.sh == MAP_FAILED) {
		perror("lrb-fuzz: mmap of the shared counters");
		return 2;
	}
	start = fz_now();
	end = start + run.duration;
	for (i = 0; i < run.workers; i++) {
		struct fz_worker w = {
			.id = i, .nr_workers = run.workers,
			.seed = run.seed, .chan = run.chan,
			.nr_cpus = run.nr_cpus, .sh = &run.sh[i],
		};

		run.pid[i] = fork();
		if (run.pid[i] < 0) {
			perror("lrb-fuzz: fork of a worker");
			return 2;
		}
		if (!run.pid[i]) {
			fz_worker_run(&w, end);
			exit(0);
		}
		run.moved[i] = start;
	}
	fz_watch(&run, end);
	fz_summary(&run);
	return 0;
}
