// SPDX-License-Identifier: GPL-2.0
/*
 * lrb-pingpong: the fixed workload of make bench's workload-vm part
 * (tests/vm/workload/). Hackbench's pipe and thread mode, reduced to what
 * makes a scheduler and interrupt tracer work:
 *
 *  - --pairs P pairs of threads pass one byte back and forth through two
 *    pipes, --messages M times per pair: every message is a wakeup and a
 *    context switch (a cross-CPU wakeup and a rescheduling IPI when the two
 *    threads sit on different CPUs);
 *  - --readers R threads read --reads N blocks of 4 KiB each from a block
 *    device (--disk) with O_DIRECT, bypassing the page cache: every read
 *    is a device interrupt (irq_handler_entry/exit), a wakeup and a switch.
 *
 * The work is fixed (the same messages and reads every run); what varies
 * is how long it takes. Prints one line:
 *
 *   elapsed_ns=T messages=M reads=N
 *
 * where T is the wall time (CLOCK_MONOTONIC) from the moment every thread
 * is ready to the moment the last one is done. Static: the guest has no C
 * library.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 4096
/* The reads cycle over the first 1 MiB of the device. */
#define SPAN_BLOCKS 256

static unsigned long messages = 20000, reads = 2000, pairs = 8, readers = 1;
static const char *disk;
static pthread_barrier_t ready;

struct pp_pair {
	int ab[2], ba[2];
};

static void die(const char *what)
{
	fprintf(stderr, "lrb-pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void xfer(int rfd, int wfd, int first)
{
	unsigned long i;
	char c = 0;

	for (i = 0; i < messages; i++) {
		if (!first && read(rfd, &c, 1) != 1)
			die("read from a pipe");
		if (write(wfd, &c, 1) != 1)
			die("write to a pipe");
		if (first && read(rfd, &c, 1) != 1)
			die("read from a pipe");
	}
}

static void *ping(void *arg)
{
	struct pp_pair *p = arg;

	pthread_barrier_wait(&ready);
	xfer(p->ba[0], p->ab[1], 1);
	return NULL;
}

static void *pong(void *arg)
{
	struct pp_pair *p = arg;

	pthread_barrier_wait(&ready);
	xfer(p->ab[0], p->ba[1], 0);
	return NULL;
}

static void *reader(void *arg)
{
	unsigned long i, first = (unsigned long)arg;
	void *buf;
	int fd;

	fd = open(disk, O_RDONLY | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "lrb-pingpong: cannot open %s with O_DIRECT: %s; give --disk a block device\n",
			disk, strerror(errno));
		exit(1);
	}
	if (posix_memalign(&buf, BLOCK, BLOCK))
		die("posix_memalign");
	pthread_barrier_wait(&ready);
	for (i = 0; i < reads; i++) {
		off_t off = (off_t)((first + i) % SPAN_BLOCKS) * BLOCK;

		if (pread(fd, buf, BLOCK, off) != BLOCK)
			die("O_DIRECT read of 4 KiB from --disk (is it 1 MiB or more?)");
	}
	free(buf);
	close(fd);
	return NULL;
}

/* The options that give a count: getopt_long()'s value, name, count. */
static const struct pp_count {
	int opt;
	const char *name;
	unsigned long *count;
} counts[] = {
	{ 'p', "--pairs", &pairs },
	{ 'm', "--messages", &messages },
	{ 'r', "--readers", &readers },
	{ 'n', "--reads", &reads },
};

/* Sets the count of option @opt from @s. Return: whether @opt has one. */
static int parse_count(int opt, const char *s)
{
	const struct pp_count *k;
	char *end;

	for (k = counts; k < counts + sizeof(counts) / sizeof(*k); k++) {
		if (k->opt != opt)
			continue;
		errno = 0;
		*k->count = strtoul(s, &end, 10);
		if (errno || *end || end == s) {
			fprintf(stderr, "lrb-pingpong: %s %s: give a number\n",
				k->name, s);
			exit(2);
		}
		return 1;
	}
	return 0;
}

static void print_usage(FILE *f)
{
	fprintf(f, "usage: lrb-pingpong [--pairs P] [--messages M]\n"
		"                    [--disk DEV [--readers R] [--reads N]]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pairs", required_argument, NULL, 'p' },
		{ "messages", required_argument, NULL, 'm' },
		{ "disk", required_argument, NULL, 'd' },
		{ "readers", required_argument, NULL, 'r' },
		{ "reads", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct timespec t0, t1;
	struct pp_pair *pp;
	pthread_t *th;
	unsigned long i, nth;
	int c;

	while ((c = getopt_long(argc, argv, "p:m:d:r:n:h", opts, NULL)) != -1) {
		if (parse_count(c, optarg))
			continue;
		switch (c) {
		case 'd':
			disk = optarg;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !pairs) {
		print_usage(stderr);
		return 2;
	}
	if (!disk)
		readers = 0;
	nth = 2 * pairs + readers;
	pp = calloc(pairs, sizeof(*pp));
	th = calloc(nth, sizeof(*th));
	if (!pp || !th)
		die("calloc");
	if (pthread_barrier_init(&ready, NULL, nth + 1))
		die("pthread_barrier_init");
	for (i = 0; i < pairs; i++) {
		if (pipe(pp[i].ab) || pipe(pp[i].ba))
			die("pipe");
		if (pthread_create(&th[2 * i], NULL, ping, &pp[i]) ||
		    pthread_create(&th[2 * i + 1], NULL, pong, &pp[i]))
			die("pthread_create");
	}
	for (i = 0; i < readers; i++)
		if (pthread_create(&th[2 * pairs + i], NULL, reader,
				   (void *)(unsigned long)(i * SPAN_BLOCKS / readers)))
			die("pthread_create");
	pthread_barrier_wait(&ready);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("elapsed_ns=%lld messages=%lu reads=%lu\n",
	       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
		       (t1.tv_nsec - t0.tv_nsec),
	       2 * messages * pairs, reads * readers);
	return 0;
}
