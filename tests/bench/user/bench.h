/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user-space benchmark's shared pieces (tests/bench/user/): the record
 * payload every contender writes, and the contenders' entry points.
 *
 * No lrb header here: lttng.c includes this file beside LTTng-UST's
 * headers, and the two must not meet in one translation unit (liblrb's
 * port defines _LGPL_SOURCE, which changes what LTTng-UST's headers need
 * at link time).
 */
#ifndef _BENCH_USER_BENCH_H
#define _BENCH_USER_BENCH_H

#include <stdint.h>

struct lrb_chan;

/*
 * The 16-byte payload of every record: a sequence number (the loop index,
 * little endian) and bytes 8 to 15 holding 8 to 15, which
 * tests/bench/user/check-trace.sh looks for in LTTng-UST's snapshot.
 */
struct bench_payload {
	uint64_t seq;
	uint8_t tail[8];
};

#define BENCH_PAYLOAD_INIT { 0, { 8, 9, 10, 11, 12, 13, 14, 15 } }

/* Channel geometry, per CPU; run.sh gives LTTng-UST's channel the same. */
struct bench_geometry {
	unsigned long subbuf_size;
	unsigned long num_subbuf;
};

/*
 * A writer loop: writes @n records, sequence numbers @first on, and returns
 * how many it dropped.
 */
typedef unsigned long (*bench_loop_fn)(unsigned long first, unsigned long n);

/* runner.c */
double bench_now_ns(void);
double bench_cpu_ns(void);
void bench_pin(int cpu);

/**
 * struct bench_run - one measurement of a writer loop
 * @thread_ns: ns per record in each thread's CPU time, averaged over the
 *	threads: what a record costs, without the time the thread spent
 *	preempted by the other work of a shared machine
 * @agg_ns: ns per record of all threads together, from the sum of their
 *	rates in CPU time (@thread_ns for one thread)
 * @wall_ns: wall time from the first thread's start to the last one's
 *	end, over every thread's records: the same plus the noise
 * @overlap: 2 threads: the share of the shorter one's CPU time during
 *	which both surely ran at once (see runner.c); @agg_ns tells what
 *	2 CPUs give only as far as it is near 1. 1 for one thread.
 * @lost: records the loop dropped
 */
struct bench_run {
	double thread_ns;
	double agg_ns;
	double wall_ns;
	double overlap;
	unsigned long lost;
};

void bench_run_writers(bench_loop_fn loop, int threads, unsigned long n,
		       struct bench_run *run);

/* writers.c: the floor and the liblrb writers */
void bench_writers_init(const struct bench_geometry *geo);
void bench_writers_exit(void);
unsigned long bench_floor_loop(unsigned long first, unsigned long n);
unsigned long bench_lrb_loop(unsigned long first, unsigned long n);
unsigned long bench_lrb_mono_loop(unsigned long first, unsigned long n);
unsigned long bench_lrb_discard_loop(unsigned long first, unsigned long n);
struct lrb_chan *bench_discard_channel(const struct bench_geometry *geo);
unsigned long bench_discard_write(struct lrb_chan *chan, unsigned long n);
void bench_drainer_start(void);
void bench_drainer_stop(void);

/* lttng.c: the LTTng-UST writer */
unsigned long bench_lttng_loop(unsigned long first, unsigned long n);
int bench_lttng_wait_enabled(int timeout_s);

/* consumer.c */

/**
 * struct bench_consumer - one measurement of the consumer
 * @mbps: MB/s (10^6 bytes) copied out, over the reader's CPU time in the
 *	reader API and the copy
 * @lost: records the writer dropped because the reader was behind
 */
struct bench_consumer {
	double mbps;
	unsigned long lost;
};

void bench_consumer_init(const struct bench_geometry *geo);
void bench_consumer_exit(void);
void bench_consumer_round(unsigned long n, struct bench_consumer *res);

#endif /* _BENCH_USER_BENCH_H */
