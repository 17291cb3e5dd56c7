// SPDX-License-Identifier: GPL-2.0
/*
 * Runs a writer loop on 1 or 2 threads pinned to CPUs 0 and 1, released
 * together by a barrier, and times it.
 *
 * Each thread runs the loop in chunks and reads, around each chunk, the
 * wall clock and its own CPU time. The CPU time gives the cost per record,
 * which the other work of a shared machine does not inflate when it
 * preempts the thread. A chunk whose CPU time is nearly its wall time ran
 * without being preempted: where such chunks of the two threads overlap
 * in wall time, both threads surely ran at once, and what they cost each
 * other shows in their CPU time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lrb/lrb.h>
#include "bench.h"

#define MAX_THREADS 2
/* Records per chunk: a fraction of a millisecond, far more than the clock reads. */
#define CHUNK 8192
/* A chunk ran unpreempted when its CPU time is this share of its wall time. */
#define RUNNING 0.9

/* A stretch of wall time during which a thread surely ran. */
struct span {
	double t0, t1;
};

struct worker {
	pthread_t tid;
	int cpu;
	bench_loop_fn loop;
	unsigned long n;
	pthread_barrier_t *start;
	double t0, t1;
	double cpu_ns;
	unsigned long lost;
	struct span *spans;
	int nr_spans;
};

double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

double bench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

void bench_pin(int cpu)
{
	cpu_set_t set;
	int ret;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ret = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (ret) {
		fprintf(stderr, "lrb bench-user: cannot pin a thread to CPU %d: %s; the benchmark needs CPUs 0 and 1 online and allowed (see taskset)\n",
			cpu, strerror(ret));
		exit(1);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long done, k;
	double wall, cpu, dwall, dcpu;

	bench_pin(w->cpu);
	/* liburcu-bp registers the thread here, not in the timed loop */
	lrb_thread_init();
	pthread_barrier_wait(w->start);
	w->t0 = bench_now_ns();
	wall = w->t0;
	cpu = bench_cpu_ns();
	for (done = 0; done < w->n; done += k) {
		k = w->n - done < CHUNK ? w->n - done : CHUNK;
		w->lost += w->loop(done, k);
		dwall = bench_now_ns() - wall;
		dcpu = bench_cpu_ns() - cpu;
		w->cpu_ns += dcpu;
		if (dcpu >= RUNNING * dwall) {
			/* extend the last span if this chunk follows it */
			if (w->nr_spans && w->spans[w->nr_spans - 1].t1 == wall)
				w->spans[w->nr_spans - 1].t1 = wall + dwall;
			else
				w->spans[w->nr_spans++] = (struct span){
					wall, wall + dwall };
		}
		wall += dwall;
		cpu += dcpu;
	}
	w->t1 = wall;
	return NULL;
}

/* Wall time during which both threads ran: where their spans intersect. */
static double both_ran(const struct worker *a, const struct worker *b)
{
	double both = 0, lo, hi;
	int i = 0, j = 0;

	while (i < a->nr_spans && j < b->nr_spans) {
		lo = a->spans[i].t0 > b->spans[j].t0 ? a->spans[i].t0 :
						       b->spans[j].t0;
		hi = a->spans[i].t1 < b->spans[j].t1 ? a->spans[i].t1 :
						       b->spans[j].t1;
		if (hi > lo)
			both += hi - lo;
		if (a->spans[i].t1 < b->spans[j].t1)
			i++;
		else
			j++;
	}
	return both;
}

/**
 * bench_run_writers() - run @loop for @n records on each of @threads threads
 * @loop: the writer loop
 * @threads: 1 or 2; thread i runs on CPU i
 * @n: records per thread
 * @run: receives the times
 */
void bench_run_writers(bench_loop_fn loop, int threads, unsigned long n,
		       struct bench_run *run)
{
	struct worker w[MAX_THREADS];
	pthread_barrier_t start;
	double first = 0, last = 0, ns = 0, rate = 0, shorter = 0;
	int i, ret;

	pthread_barrier_init(&start, NULL, threads);
	for (i = 0; i < threads; i++) {
		w[i] = (struct worker){ .cpu = i, .loop = loop, .n = n,
					.start = &start };
		w[i].spans = calloc(n / CHUNK + 1, sizeof(*w[i].spans));
		if (!w[i].spans) {
			fprintf(stderr, "lrb bench-user: out of memory for the writers' timings\n");
			exit(1);
		}
		ret = pthread_create(&w[i].tid, NULL, worker_main, &w[i]);
		if (ret) {
			fprintf(stderr, "lrb bench-user: cannot create a writer thread: %s\n",
				strerror(ret));
			exit(1);
		}
	}
	run->lost = 0;
	for (i = 0; i < threads; i++) {
		pthread_join(w[i].tid, NULL);
		if (!i || w[i].t0 < first)
			first = w[i].t0;
		if (!i || w[i].t1 > last)
			last = w[i].t1;
		if (!i || w[i].cpu_ns < shorter)
			shorter = w[i].cpu_ns;
		ns += w[i].cpu_ns / n;
		rate += n / w[i].cpu_ns;
		run->lost += w[i].lost;
	}
	pthread_barrier_destroy(&start);
	run->thread_ns = ns / threads;
	run->agg_ns = 1 / rate;
	run->wall_ns = (last - first) / ((double)n * threads);
	run->overlap = threads == 2 ? both_ran(&w[0], &w[1]) / shorter : 1;
	for (i = 0; i < threads; i++)
		free(w[i].spans);
}
