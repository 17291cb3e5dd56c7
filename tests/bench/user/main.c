// SPDX-License-Identifier: GPL-2.0
/*
 * make bench, user-space part: liblrb beside LTTng-UST and a floor loop in
 * one process, with the same 16-byte payload and channels of the same
 * geometry. Every round runs every contender once, in a rotating order, so
 * that all of them see the same machine. Costs are in each writer thread's
 * CPU time (runner.c), and each figure is the best of the rounds, so that
 * a noisy neighbour inflates little but the spread; the table shows wall
 * times beside them. A round ends with the consumer throughput of liblrb's
 * reader API (consumer.c).
 *
 * Run it through tests/bench/user/run.sh: that starts the LTTng session
 * daemon and the session recording lrb_bench:record, and checks LTTng-UST's
 * snapshot afterwards. Prints a table, then one BENCH line per figure.
 *
 *   bench-user [--records N] [--rounds N] [--subbuf-size BYTES]
 *		[--num-subbuf N]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include <lrb/lrb.h>
#include "bench.h"

/* How long to wait for the session daemon to enable the tracepoint. */
#define LTTNG_WAIT_S 20

struct contender {
	const char *key;
	const char *label;
	bench_loop_fn loop;
	int threads;
	void (*begin)(void);
	void (*end)(void);
	bool counts_lost;
	struct bench_run best;
	double best_wall_ns;
	unsigned long lost;
};

enum {
	FLOOR, LRB_1T, LRB_2T, LRB_MONO, LRB_DISCARD, LTTNG_1T, LTTNG_2T,
	NR_CONTENDERS
};

/* Only liblrb's writers say when they drop a record. */
static struct contender contenders[NR_CONTENDERS] = {
	[FLOOR] = {
		.key = "floor",
		.label = "floor: lrb_clock_cycles() (lfence+rdtsc) + 20-byte store",
		.loop = bench_floor_loop,
		.threads = 1,
	},
	[LRB_1T] = {
		.key = "lrb_1t",
		.label = "liblrb, 1 writer thread, 16-byte payload, overwrite, cycle clock",
		.loop = bench_lrb_loop,
		.threads = 1,
		.counts_lost = true,
	},
	[LRB_2T] = {
		.key = "lrb_2t",
		.label = "liblrb, 2 writer threads (CPUs 0 and 1)",
		.loop = bench_lrb_loop,
		.threads = 2,
		.counts_lost = true,
	},
	[LRB_MONO] = {
		.key = "lrb_mono",
		.label = "liblrb, 1 writer thread, CLOCK_MONOTONIC (LTTng-UST's clock)",
		.loop = bench_lrb_mono_loop,
		.threads = 1,
		.counts_lost = true,
	},
	[LRB_DISCARD] = {
		.key = "lrb_discard",
		.label = "liblrb discard, 1 writer thread, a reader draining",
		.loop = bench_lrb_discard_loop,
		.threads = 1,
		.begin = bench_drainer_start,
		.end = bench_drainer_stop,
		.counts_lost = true,
	},
	[LTTNG_1T] = {
		.key = "lttng_1t",
		.label = "LTTng-UST, 1 writer thread, 16-byte payload, flight recorder",
		.loop = bench_lttng_loop,
		.threads = 1,
	},
	[LTTNG_2T] = {
		.key = "lttng_2t",
		.label = "LTTng-UST, 2 writer threads (CPUs 0 and 1)",
		.loop = bench_lttng_loop,
		.threads = 2,
	},
};

/*
 * The better of two rounds: the cheaper, but first the one whose threads
 * more surely ran at once (by tenths), lest a round where a busy machine
 * ran them one after the other hide what they cost each other.
 */
static bool better(const struct bench_run *a, const struct bench_run *b)
{
	int oa = a->overlap * 10, ob = b->overlap * 10;

	if (oa != ob)
		return oa > ob;
	return a->agg_ns < b->agg_ns;
}

static void measure(struct contender *c, unsigned long n, bool first)
{
	struct bench_run run;

	if (c->begin)
		c->begin();
	bench_run_writers(c->loop, c->threads, n, &run);
	if (c->end)
		c->end();
	if (first || better(&run, &c->best))
		c->best = run;
	if (first || run.wall_ns < c->best_wall_ns)
		c->best_wall_ns = run.wall_ns;
	c->lost += run.lost;
}

/*
 * A figure of the run: one BENCH line, and a line of the table unless the
 * contenders' table shows it already. Times are thread CPU time.
 */
struct figure {
	char key[48];
	char label[160];
	const char *unit;
	double value;
	bool in_contender_table;
};

#define MAX_FIGURES 32
static struct figure figures[MAX_FIGURES];
static int nr_figures;

static struct figure *add(const char *key, const char *unit, double value,
			  const char *label)
{
	struct figure *f = &figures[nr_figures++];

	snprintf(f->key, sizeof(f->key), "%s", key);
	snprintf(f->label, sizeof(f->label), "%s", label);
	f->unit = unit;
	f->value = value;
	return f;
}

/* A contender's figure: its key and label, each with a suffix. */
static void add_contender(const struct contender *c, const char *key_suffix,
			  const char *unit, double value,
			  const char *label_suffix)
{
	struct figure *f = add("", unit, value, "");

	snprintf(f->key, sizeof(f->key), "%s%s", c->key, key_suffix);
	snprintf(f->label, sizeof(f->label), "%s%s", c->label, label_suffix);
	f->in_contender_table = true;
}

static void collect(double cons_mbps, unsigned long cons_lost)
{
	const struct contender *c = contenders;
	double floor_ns = c[FLOOR].best.thread_ns;
	double lrb_ns = c[LRB_1T].best.thread_ns;
	double lttng_ns = c[LTTNG_1T].best.thread_ns;
	int i;

	for (i = 0; i < NR_CONTENDERS; i++) {
		add_contender(&c[i], "_ns", "ns/rec", c[i].best.thread_ns,
			      c[i].threads > 1 ? ", per thread" : "");
		if (c[i].threads == 1)
			continue;
		add_contender(&c[i], "_agg_ns", "ns/rec", c[i].best.agg_ns,
			      ", aggregate (1 / sum of thread rates)");
		add_contender(&c[i], "_overlap", "%", c[i].best.overlap * 100,
			      ": share of the run both surely ran at once");
	}
	add("lrb_discard_lost", "records", c[LRB_DISCARD].lost,
	    "liblrb discard: records dropped in all rounds (reader behind)");
	add("lrb_scaling", "x", lrb_ns / c[LRB_2T].best.agg_ns,
	    "liblrb, 2 threads on 2 CPUs: sum of thread rates / 1-thread rate");
	add("lttng_scaling", "x", lttng_ns / c[LTTNG_2T].best.agg_ns,
	    "LTTng-UST, 2 threads on 2 CPUs: sum of thread rates / 1-thread rate");
	add("ratio_lrb_lttng", "x", lttng_ns / lrb_ns,
	    "LTTng-UST / liblrb, 1 thread: times faster");
	add("ratio_lrb_lttng_mono", "x", lttng_ns / c[LRB_MONO].best.thread_ns,
	    "LTTng-UST / liblrb on CLOCK_MONOTONIC (the same clock), 1 thread");
	add("ratio_lrb_floor", "x", lrb_ns / floor_ns,
	    "liblrb / floor, 1 thread");
	add("consumer_mbps", "MB/s", cons_mbps,
	    "liblrb reader API, 1 buffer: get + copy out + put, over their CPU time");
	add("consumer_lost", "records", cons_lost,
	    "liblrb reader API: records dropped in all rounds (reader behind)");
}

static void report(unsigned long n, int rounds,
		   const struct bench_geometry *geo)
{
	const struct contender *c = contenders;
	const char *fmt = "%-66s %7s %8s %8s %8s %8s %8s %8s\n";
	int i;

	printf("lrb user-space benchmark: 16-byte payload, best of %d interleaved rounds of %lu records per thread\n",
	       rounds, n);
	printf("channels: %lu x %lu-byte sub-buffers per CPU, liblrb and LTTng-UST alike\n",
	       geo->num_subbuf, geo->subbuf_size);
	printf("ns per record in thread CPU time; wall: the least wall time of the rounds, noise included;\n");
	printf("overlap: share of a 2-thread run during which both threads surely ran at once\n\n");
	printf(fmt, "", "threads", "/thread", "all", "wall all", "/floor",
	       "overlap", "lost");
	for (i = 0; i < NR_CONTENDERS; i++) {
		printf("%-66s %7d %8.2f %8.2f %8.2f %8.2f", c[i].label,
		       c[i].threads, c[i].best.thread_ns, c[i].best.agg_ns,
		       c[i].best_wall_ns,
		       c[i].best.thread_ns / c[FLOOR].best.thread_ns);
		if (c[i].threads > 1)
			printf(" %7.0f%%", c[i].best.overlap * 100);
		else
			printf(" %8s", "-");
		if (c[i].counts_lost)
			printf(" %8lu\n", c[i].lost);
		else
			printf(" %8s\n", "-");
	}
	printf("\n");
	for (i = 0; i < nr_figures; i++)
		if (!figures[i].in_contender_table)
			printf("%-70s %10.2f %s\n", figures[i].label,
			       figures[i].value, figures[i].unit);
	printf("\n");
	for (i = 0; i < nr_figures; i++)
		printf("BENCH\tuser\t%s\t%.2f\t%s\t%s\n", figures[i].key,
		       figures[i].value, figures[i].unit, figures[i].label);
}

static unsigned long parse_num(const char *opt, const char *arg)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 0);

	if (*end || !v) {
		fprintf(stderr, "lrb bench-user: --%s wants a positive number, not '%s'\n",
			opt, arg);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "records", required_argument, NULL, 'n' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "subbuf-size", required_argument, NULL, 's' },
		{ "num-subbuf", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_geometry geo = { .subbuf_size = 65536, .num_subbuf = 8 };
	struct bench_consumer cons;
	double cons_mbps = 0;
	unsigned long n = 5000000, cons_lost = 0;
	int c, i, r, rounds = 5, idx;

	while ((c = getopt_long(argc, argv, "", opts, &idx)) != -1) {
		if (c == '?')
			return 2;
		switch (c) {
		case 'n':
			n = parse_num(opts[idx].name, optarg);
			break;
		case 'r':
			rounds = parse_num(opts[idx].name, optarg);
			break;
		case 's':
			geo.subbuf_size = parse_num(opts[idx].name, optarg);
			break;
		case 'b':
			geo.num_subbuf = parse_num(opts[idx].name, optarg);
			break;
		}
	}
	if (bench_lttng_wait_enabled(LTTNG_WAIT_S)) {
		fprintf(stderr, "lrb bench-user: no LTTng-UST session enabled lrb_bench:record within %d s: run tests/bench/user/run.sh, which starts lttng-sessiond and that session\n",
			LTTNG_WAIT_S);
		return 1;
	}
	bench_writers_init(&geo);
	bench_consumer_init(&geo);
	for (r = 0; r < rounds; r++) {
		fprintf(stderr, "lrb bench-user: round %d of %d\n", r + 1, rounds);
		for (i = 0; i < NR_CONTENDERS; i++)
			measure(&contenders[(r + i) % NR_CONTENDERS], n, !r);
		bench_consumer_round(n, &cons);
		if (cons.mbps > cons_mbps)
			cons_mbps = cons.mbps;
		cons_lost += cons.lost;
	}
	if (bench_lttng_wait_enabled(0)) {
		fprintf(stderr, "lrb bench-user: lrb_bench:record was disabled during the run: was the LTTng session stopped or destroyed?\n");
		return 1;
	}
	collect(cons_mbps, cons_lost);
	report(n, rounds, &geo);
	bench_consumer_exit();
	bench_writers_exit();
	return 0;
}
