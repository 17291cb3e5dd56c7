// SPDX-License-Identifier: GPL-2.0
/*
 * User-space fast-path micro-benchmark: cost per record of
 * lrb_reserve + lrb_write + lrb_commit with a 16-byte payload, beside a
 * floor loop doing only what any tracer must (read the clock, store 20
 * bytes), measured in the same run, in the same process.
 *
 * lrb runs in overwrite mode (a flight recorder: nothing is dropped and no
 * reader is needed, so the loop stays cache-hot) and in discard mode with a
 * reader thread draining, with each clock: the cycle counter (lfence +
 * rdtsc, as lrb_clock_cycles() reads it) and CLOCK_MONOTONIC. Each figure is the best of several rounds, so a
 * noisy neighbour inflates nothing but the spread.
 *
 *   bench-fastpath [--records N] [--rounds N]
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <lrb/lrb.h>

#define PAYLOAD 16

#define BENCH_CONFIG(m, clk)						\
	{								\
		.mode = LRB_MODE_##m,					\
		.header = LRB_HEADER_COMPACT,				\
		.tsc_bits = 27,						\
		.wakeup = LRB_WAKEUP_BY_TIMER,				\
		.cb.clock_read = clk,					\
	}

static const struct lrb_config ow_cycles =
	BENCH_CONFIG(OVERWRITE, lrb_clock_cycles);
static const struct lrb_config ow_mono =
	BENCH_CONFIG(OVERWRITE, lrb_clock_default);
static const struct lrb_config dis_cycles =
	BENCH_CONFIG(DISCARD, lrb_clock_cycles);

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The floor: the clock read and a 20-byte store (4-byte header + payload). */
static double floor_loop(u64 (*clock)(void), unsigned long n)
{
	static u32 ring[4096 * 5] __attribute__((aligned(64)));
	u8 payload[PAYLOAD] = { 1, 2, 3 };
	unsigned long i, pos = 0;
	double t0 = now_ns();

	for (i = 0; i < n; i++) {
		u32 *slot = &ring[pos];

		slot[0] = (u32)clock() << 5 | 1;
		memcpy(&slot[1], payload, PAYLOAD);
		pos = (pos + 5) % (4096 * 5);
		payload[0] = i;
		__asm__ volatile("" : : "r"(slot) : "memory");
	}
	return (now_ns() - t0) / n;
}

/*
 * The same @n records through lrb. Always inlined: each caller passes a
 * constant @cfg, and gets a fast path specialised for it.
 */
static __always_inline double lrb_loop(const struct lrb_config *cfg,
				       struct lrb_chan *chan, unsigned long n)
{
	u8 payload[PAYLOAD] = { 1, 2, 3 };
	unsigned long i, lost = 0;
	double t0 = now_ns();

	for (i = 0; i < n; i++) {
		payload[0] = i;
		lost += !!lrb_event_write(cfg, chan, 1, payload, PAYLOAD);
	}
	if (lost)
		fprintf(stderr, "bench: %lu records lost\n", lost);
	return (now_ns() - t0) / n;
}

struct drainer {
	struct lrb_chan *chan;
	volatile int stop;
};

static void *drain_main(void *arg)
{
	struct drainer *d = arg;
	struct lrb_subbuf sb;
	unsigned int i;

	for (i = 0; i < d->chan->nr_bufs; i++)
		lrb_reader_open(lrb_channel_buf(d->chan, i));
	/*
	 * Sleep between polls: a spinning reader would slow the writer down
	 * when the two CPUs share a core.
	 */
	while (!d->stop) {
		for (i = 0; i < d->chan->nr_bufs; i++) {
			struct lrb_buf *buf = lrb_channel_buf(d->chan, i);

			while (!lrb_get_next_subbuf(buf, &sb))
				lrb_put_subbuf(buf, &sb);
		}
		usleep(50);
	}
	return NULL;
}

static struct lrb_chan *make_chan(const struct lrb_config *cfg)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = 64 * 1024,
		.num_subbuf = 8,
		.nr_cpus = lrb_possible_cpus(),
	};
	struct lrb_chan *chan;
	int ret = lrb_channel_create(cfg, &attr, &chan);

	if (ret) {
		fprintf(stderr, "bench: channel creation failed: %s\n",
			strerror(-ret));
		exit(1);
	}
	return chan;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static double min(double a, double b)
{
	return a < b ? a : b;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "records", required_argument, NULL, 'n' },
		{ "rounds", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	double f_cyc = 1e9, f_mono = 1e9, l_cyc = 1e9, l_mono = 1e9;
	double l_dis = 1e9;
	unsigned long n = 5000000;
	struct lrb_chan *ow_c, *ow_m, *dis;
	struct drainer d = { 0 };
	pthread_t drainer;
	int c, r, rounds = 5;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'n')
			n = strtoul(optarg, NULL, 0);
		else if (c == 'r')
			rounds = atoi(optarg);
		else
			return 2;
	}
	pin(0);
	lrb_thread_init();
	ow_c = make_chan(&ow_cycles);
	ow_m = make_chan(&ow_mono);
	dis = make_chan(&dis_cycles);
	d.chan = dis;
	pthread_create(&drainer, NULL, drain_main, &d);

	for (r = 0; r < rounds; r++) {
		f_cyc = min(f_cyc, floor_loop(lrb_clock_cycles, n));
		l_cyc = min(l_cyc, lrb_loop(&ow_cycles, ow_c, n));
		f_mono = min(f_mono, floor_loop(lrb_clock_default, n));
		l_mono = min(l_mono, lrb_loop(&ow_mono, ow_m, n));
		l_dis = min(l_dis, lrb_loop(&dis_cycles, dis, n));
	}
	d.stop = 1;
	pthread_join(drainer, NULL);

	printf("lrb user-space fast path, 16-byte payload, 1 thread, best of %d x %lu records\n",
	       rounds, n);
	printf("%-44s %8s %10s\n", "", "ns/rec", "vs floor");
	printf("%-44s %8.1f %10s\n", "floor: lfence+rdtsc + 20-byte store", f_cyc, "1.00");
	printf("%-44s %8.1f %10.2f\n", "lrb overwrite, cycle clock", l_cyc,
	       l_cyc / f_cyc);
	printf("%-44s %8.1f %10.2f\n", "lrb discard + draining reader, cycles",
	       l_dis, l_dis / f_cyc);
	printf("%-44s %8.1f %10s\n", "floor: CLOCK_MONOTONIC + 20-byte store",
	       f_mono, "1.00");
	printf("%-44s %8.1f %10.2f\n", "lrb overwrite, CLOCK_MONOTONIC", l_mono,
	       l_mono / f_mono);
	printf("lrb cost above the floor: %.1f ns/record (goal: total <= 20 ns)\n",
	       l_cyc - f_cyc);
	lrb_channel_destroy(dis);
	lrb_channel_destroy(ow_m);
	lrb_channel_destroy(ow_c);
	return 0;
}
