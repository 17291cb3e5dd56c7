// SPDX-License-Identifier: GPL-2.0
/*
 * Consumer throughput of liblrb's reader API, per buffer.
 *
 * A writer thread pinned to CPU 0 writes records as fast as it can into its
 * buffer of a channel of its own, configured as liblrb's discard writer
 * (writers.c).
 * A reader thread pinned to CPU 1 drains that buffer: it takes each
 * sub-buffer with lrb_get_next_subbuf(), copies its content (packet header
 * and records, content_size bytes) out with lrb_subbuf_copy() into its own
 * memory, and gives it back with lrb_put_subbuf().
 *
 * Timed: each successful get + copy + put, from before the get to after
 * the put, in the reader thread's CPU time (so that being preempted by the
 * other work of a shared machine does not count); the polls that find no
 * complete sub-buffer are not, nor the writer's pace. Bytes copied over
 * that time is what one reader can drain; the two clock reads per
 * sub-buffer count in it, so the figure errs low.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../../lib/kernel_compat.h"
#include <lrb/lrb.h>
#include "bench.h"

static struct lrb_chan *chan;
static void *copy_dst;

struct round {
	unsigned long n;
	int writer_done;
	unsigned long lost;
	double bytes;
	double busy_ns;
};

static void *writer_main(void *arg)
{
	struct round *r = arg;

	bench_pin(0);
	lrb_thread_init();
	r->lost = bench_discard_write(chan, r->n);
	WRITE_ONCE(r->writer_done, 1);
	return NULL;
}

static void *reader_main(void *arg)
{
	struct round *r = arg;
	struct lrb_buf *buf = lrb_channel_nth_buf(chan, 0);
	struct lrb_subbuf sb;
	double t0;
	int done;

	bench_pin(1);
	for (;;) {
		done = READ_ONCE(r->writer_done);
		t0 = bench_cpu_ns();
		if (lrb_get_next_subbuf(buf, &sb)) {
			/* nothing complete is left once the writer is done */
			if (done)
				break;
			caa_cpu_relax();
			continue;
		}
		lrb_subbuf_copy(chan, &sb, 0, copy_dst, sb.content_size);
		lrb_put_subbuf(buf, &sb);
		r->busy_ns += bench_cpu_ns() - t0;
		r->bytes += sb.content_size;
	}
	return NULL;
}

void bench_consumer_init(const struct bench_geometry *geo)
{
	chan = bench_discard_channel(geo);
	copy_dst = calloc(1, geo->subbuf_size);
	if (!copy_dst) {
		fprintf(stderr, "lrb bench-user: out of memory for the consumer's copy buffer\n");
		exit(1);
	}
	lrb_reader_open(lrb_channel_nth_buf(chan, 0));
}

void bench_consumer_exit(void)
{
	lrb_reader_close(lrb_channel_nth_buf(chan, 0));
	lrb_channel_destroy(chan);
	free(copy_dst);
}

/**
 * bench_consumer_round() - drain a buffer while @n records are written to it
 * @n: records the writer writes
 * @res: receives the throughput and the writer's losses
 */
void bench_consumer_round(unsigned long n, struct bench_consumer *res)
{
	struct round r = { .n = n };
	pthread_t writer, reader;

	if (pthread_create(&reader, NULL, reader_main, &r) ||
	    pthread_create(&writer, NULL, writer_main, &r)) {
		fprintf(stderr, "lrb bench-user: cannot create the consumer's threads\n");
		exit(1);
	}
	pthread_join(writer, NULL);
	pthread_join(reader, NULL);
	res->mbps = r.bytes / r.busy_ns * 1e3;
	res->lost = r.lost;
}
