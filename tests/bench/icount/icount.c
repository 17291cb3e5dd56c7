// SPDX-License-Identifier: GPL-2.0
/*
 * Instruction-count driver of the user-space fast path, for callgrind.
 *
 * One thread, pinned to the CPU it starts on, writes a fixed number of records through
 * lrb_event_write() for each of a few constant configurations, after a
 * warm-up. Callgrind collects only inside the writing loop (client
 * requests, so run it with --collect-atstart=no) and dumps one profile per
 * configuration, named by its key. Sub-buffer switches happen as they
 * would in any run and count with the records. The discard configuration
 * drains its buffer between batches, from the same thread and uncounted.
 * No timing and no randomness: the counts depend only on the code.
 * check.sh also leaves __lrb_port_cpu_slow() out (--toggle-collect), which
 * replaces the rseq load under valgrind.
 *
 * The same loops on the kernel port's fast path come from kport.c.
 *
 * Prints, per configuration, "key<TAB>records<TAB>label" for
 * tests/bench/icount/check.sh, which divides each dump's Ir by records.
 *
 *   valgrind --tool=callgrind --collect-atstart=no \
 *	build/rel/bench-icount [--records N]
 */
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../../lib/kernel_compat.h"
#include <lrb/lrb.h>
#include <valgrind/callgrind.h>

#include "icount.h"

#define WARMUP 10000
/* Small enough that a discard buffer never fills between two drains. */
#define BATCH 1000
#define MAX_PAYLOAD 16
/* The first id a 5-bit compact id field cannot hold: extended headers. */
#define ID_EXTENDED 31

#define ICOUNT_CONFIG(m, h)						\
	{								\
		.mode = LRB_MODE_##m,					\
		.header = LRB_HEADER_##h,				\
		.tsc_bits = 27,						\
		.wakeup = LRB_WAKEUP_BY_TIMER,				\
		.cb.clock_read = lrb_clock_cycles,			\
	}

static const struct lrb_config overwrite = ICOUNT_CONFIG(OVERWRITE, COMPACT);
static const struct lrb_config discard = ICOUNT_CONFIG(DISCARD, COMPACT);
static const struct lrb_config large = ICOUNT_CONFIG(OVERWRITE, LARGE);

/*
 * @n records of @len bytes with event @id. Always inlined into a function
 * per configuration: @cfg, @id and @len are constants there, as in a
 * client, and the fast path is specialised for them.
 *
 * Return: records that failed to be written.
 */
static __always_inline unsigned long write_batch(const struct lrb_config *cfg,
						 struct lrb_chan *chan, u32 id,
						 u32 len, unsigned long n)
{
	u8 payload[MAX_PAYLOAD] = { 1, 2, 3 };
	unsigned long i, failed = 0;

	for (i = 0; i < n; i++) {
		payload[0] = i;
		failed += !!lrb_event_write(cfg, chan, id, payload, len);
	}
	return failed;
}

#define DEFINE_BATCH(name, cfg, id, len)				\
	static noinline unsigned long name(struct lrb_chan *chan,	\
					   unsigned long n)		\
	{								\
		return write_batch(cfg, chan, id, len, n);		\
	}

DEFINE_BATCH(batch_overwrite_8, &overwrite, 1, 8)
DEFINE_BATCH(batch_overwrite_16, &overwrite, 1, 16)
DEFINE_BATCH(batch_discard_16, &discard, 1, 16)
DEFINE_BATCH(batch_large_16, &large, 1, 16)
DEFINE_BATCH(batch_extended_16, &overwrite, ID_EXTENDED, 16)

static const struct icount_case cases[] = {
	{ "overwrite_8", "overwrite, compact header, 8-byte payload",
	  &overwrite, batch_overwrite_8, false },
	{ "overwrite_16", "overwrite, compact header, 16-byte payload",
	  &overwrite, batch_overwrite_16, false },
	{ "discard_16", "discard, compact header, 16-byte payload, reader drains",
	  &discard, batch_discard_16, true },
	{ "large_16", "overwrite, large (8-byte) header, 16-byte payload",
	  &large, batch_large_16, false },
	{ "extended_16", "overwrite, extended (16-byte) header, 16-byte payload",
	  &overwrite, batch_extended_16, false },
};

static void drain(struct lrb_chan *chan)
{
	struct lrb_subbuf sb;
	unsigned int i;

	for (i = 0; i < chan->nr_bufs; i++) {
		struct lrb_buf *buf = lrb_channel_nth_buf(chan, i);

		while (!lrb_get_next_subbuf(buf, &sb))
			lrb_put_subbuf(buf, &sb);
	}
}

/* @n records in batches; callgrind collects inside the batches if @count. */
static void run(const struct icount_case *c, struct lrb_chan *chan,
		unsigned long n, bool count)
{
	unsigned long done, todo, failed = 0;

	for (done = 0; done < n; done += todo) {
		todo = n - done < BATCH ? n - done : BATCH;
		if (count)
			CALLGRIND_TOGGLE_COLLECT;
		failed += c->batch(chan, todo);
		if (count)
			CALLGRIND_TOGGLE_COLLECT;
		if (c->drain)
			drain(chan);
	}
	if (failed) {
		/* a lost record takes another path: the count would lie */
		fprintf(stderr, "icount: %s: %lu of %lu records were not written; the buffer geometry or BATCH is wrong for this configuration\n",
			c->key, failed, n);
		exit(1);
	}
}

static struct lrb_chan *make_chan(const struct icount_case *c)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = 64 * 1024,
		.num_subbuf = 8,
		.nr_cpus = lrb_possible_cpus(),
	};
	struct lrb_chan *chan;
	unsigned int i;
	int ret = lrb_channel_create(c->cfg, &attr, &chan);

	if (ret) {
		fprintf(stderr, "icount: %s: channel creation failed: %s; is memory short?\n",
			c->key, strerror(-ret));
		exit(1);
	}
	for (i = 0; c->drain && i < chan->nr_bufs; i++)
		lrb_reader_open(lrb_channel_nth_buf(chan, i));
	return chan;
}

/* Warm up, then count @n records of case @c in one callgrind dump. */
static void measure(const struct icount_case *c, unsigned long n)
{
	struct lrb_chan *chan = make_chan(c);

	run(c, chan, WARMUP, false);
	/* what --toggle-collect= functions collected in the warm-up */
	CALLGRIND_ZERO_STATS;
	run(c, chan, n, true);
	CALLGRIND_DUMP_STATS_AT(c->key);
	lrb_channel_destroy(chan);
	printf("%s\t%lu\t%s\n", c->key, n, c->label);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "records", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	const unsigned int nr_user = sizeof(cases) / sizeof(cases[0]);
	static const unsigned long user_layout[] = ICOUNT_LAYOUT(LRB_PAGE_SIZE);
	unsigned long n = 100000;
	unsigned int i, cpu_now;
	cpu_set_t cpu;
	int opt;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt != 'n') {
			fprintf(stderr, "usage: %s [--records N]\n", argv[0]);
			return 2;
		}
		n = strtoul(optarg, NULL, 0);
	}
	/* one buffer for the whole run: a migration would change the path */
	cpu_now = __lrb_port_cpu_slow();
	CPU_ZERO(&cpu);
	CPU_SET(cpu_now, &cpu);
	if (sched_setaffinity(0, sizeof(cpu), &cpu)) {
		perror("icount: cannot pin the thread to its CPU (sched_setaffinity); run it where affinity can be set");
		return 1;
	}
	if (memcmp(user_layout, kport_layout, sizeof(user_layout))) {
		fprintf(stderr, "icount: the kernel port's stand-ins (tests/bench/icount/kport/) lay out struct lrb_buf, lrb_chan or lrb_ctx unlike liblrb: make them agree with include/lrb/internal/port_kernel.h\n");
		return 1;
	}
	kport_init(cpu_now);
	lrb_thread_init();
	for (i = 0; i < nr_user + kport_nr_cases; i++)
		measure(i < nr_user ? &cases[i] : &kport_cases[i - nr_user], n);
	return 0;
}
