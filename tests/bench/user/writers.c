// SPDX-License-Identifier: GPL-2.0
/*
 * The floor and the liblrb writers of the user-space benchmark.
 *
 * The floor does only what any tracer must per record: read the clock lrb
 * uses (lrb_clock_cycles(): lfence + rdtsc) and store a 4-byte header and
 * the 16-byte payload. liblrb writes the same payload with
 * lrb_event_write() into a per-CPU channel: in overwrite mode (a flight
 * recorder, like LTTng-UST's snapshot channel: nothing is dropped and no
 * reader is needed) with the cycle clock and with CLOCK_MONOTONIC (the
 * clock LTTng-UST reads), and in discard mode with a reader thread
 * draining every buffer while the writer runs.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../../lib/kernel_compat.h"
#include <lrb/lrb.h>
#include "bench.h"

#define WRITER_CONFIG(m, clk)						\
	{								\
		.mode = LRB_MODE_##m,					\
		.header = LRB_HEADER_COMPACT,				\
		.tsc_bits = 27,						\
		.wakeup = LRB_WAKEUP_BY_TIMER,				\
		.cb.clock_read = clk,					\
	}

static const struct lrb_config ow_cycles =
	WRITER_CONFIG(OVERWRITE, lrb_clock_cycles);
static const struct lrb_config ow_mono =
	WRITER_CONFIG(OVERWRITE, lrb_clock_default);
static const struct lrb_config dis_cycles =
	WRITER_CONFIG(DISCARD, lrb_clock_cycles);

static struct lrb_chan *ow_chan, *mono_chan, *dis_chan;

/* The floor's ring: 4096 records of 20 bytes, 80 KiB, for one thread. */
#define FLOOR_WORDS (4096 * 5)

unsigned long bench_floor_loop(unsigned long first, unsigned long n)
{
	static u32 ring[FLOOR_WORDS] __attribute__((aligned(64)));
	static unsigned long pos;
	struct bench_payload p = BENCH_PAYLOAD_INIT;
	unsigned long i;

	for (i = first; i < first + n; i++) {
		u32 *slot = &ring[pos];

		p.seq = i;
		slot[0] = (u32)lrb_clock_cycles() << 5 | 1;
		memcpy(&slot[1], &p, sizeof(p));
		pos += 5;
		if (pos == FLOOR_WORDS)
			pos = 0;
		/* the stores must happen, as they would into a buffer */
		__asm__ volatile("" : : "r"(slot) : "memory");
	}
	return 0;
}

/*
 * Always inlined: each caller passes a constant @cfg and gets a fast path
 * specialised for it, as a real client does.
 */
static __always_inline unsigned long write_loop(const struct lrb_config *cfg,
						struct lrb_chan *chan,
						unsigned long first,
						unsigned long n)
{
	struct bench_payload p = BENCH_PAYLOAD_INIT;
	unsigned long i, lost = 0;

	for (i = first; i < first + n; i++) {
		p.seq = i;
		lost += !!lrb_event_write(cfg, chan, 1, &p, sizeof(p));
	}
	return lost;
}

unsigned long bench_lrb_loop(unsigned long first, unsigned long n)
{
	return write_loop(&ow_cycles, ow_chan, first, n);
}

unsigned long bench_lrb_mono_loop(unsigned long first, unsigned long n)
{
	return write_loop(&ow_mono, mono_chan, first, n);
}

unsigned long bench_lrb_discard_loop(unsigned long first, unsigned long n)
{
	return write_loop(&dis_cycles, dis_chan, first, n);
}

/* The discard writer on the consumer's channel. */
unsigned long bench_discard_write(struct lrb_chan *chan, unsigned long n)
{
	return write_loop(&dis_cycles, chan, 0, n);
}

/* A per-CPU channel of the benchmark's geometry; exits on failure. */
static struct lrb_chan *make_channel(const struct lrb_config *cfg,
				     const struct bench_geometry *geo)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = geo->subbuf_size,
		.num_subbuf = geo->num_subbuf,
		.nr_cpus = lrb_possible_cpus(),
	};
	struct lrb_chan *chan;
	int ret = lrb_channel_create(cfg, &attr, &chan);

	if (ret) {
		fprintf(stderr, "lrb bench-user: cannot create a channel of %lu x %lu bytes per CPU: %s; sizes must be powers of two, at least a page and 2 sub-buffers\n",
			geo->num_subbuf, geo->subbuf_size, strerror(-ret));
		exit(1);
	}
	return chan;
}

struct lrb_chan *bench_discard_channel(const struct bench_geometry *geo)
{
	return make_channel(&dis_cycles, geo);
}

void bench_writers_init(const struct bench_geometry *geo)
{
	ow_chan = make_channel(&ow_cycles, geo);
	mono_chan = make_channel(&ow_mono, geo);
	dis_chan = make_channel(&dis_cycles, geo);
}

void bench_writers_exit(void)
{
	lrb_channel_destroy(dis_chan);
	lrb_channel_destroy(mono_chan);
	lrb_channel_destroy(ow_chan);
}

static pthread_t drainer;
static int drainer_stop;

static void *drainer_main(void *arg)
{
	struct lrb_subbuf sb;
	unsigned int i;

	for (i = 0; i < dis_chan->nr_bufs; i++)
		lrb_reader_open(lrb_channel_nth_buf(dis_chan, i));
	/*
	 * Sleep between polls rather than spin: the writer's CPU may share
	 * its core with the reader's on other machines.
	 */
	for (;;) {
		for (i = 0; i < dis_chan->nr_bufs; i++) {
			struct lrb_buf *buf = lrb_channel_nth_buf(dis_chan, i);

			while (!lrb_get_next_subbuf(buf, &sb))
				lrb_put_subbuf(buf, &sb);
		}
		/* a last pass after the writer ended: the next round starts empty */
		if (READ_ONCE(drainer_stop))
			break;
		usleep(50);
	}
	for (i = 0; i < dis_chan->nr_bufs; i++)
		lrb_reader_close(lrb_channel_nth_buf(dis_chan, i));
	return NULL;
}

/* The discard writer's reader runs only while that writer is measured. */
void bench_drainer_start(void)
{
	WRITE_ONCE(drainer_stop, 0);
	if (pthread_create(&drainer, NULL, drainer_main, NULL)) {
		fprintf(stderr, "lrb bench-user: cannot create the reader thread\n");
		exit(1);
	}
}

void bench_drainer_stop(void)
{
	WRITE_ONCE(drainer_stop, 1);
	pthread_join(drainer, NULL);
}
