// SPDX-License-Identifier: GPL-2.0
/*
 * lrb unit tests of what only the user-space port does. The API cases
 * that hold in both builds are KUnit suites (tests/kunit/api_test.c,
 * account_test.c, alloc_test.c), run here by build/<variant>/tests/kunit_user
 * and in the kernel by scripts/kunit.sh. Left here:
 *
 * - lrb_wait_readable(): a reader sleeps on the buffer's futex until a
 *   writer delivers a sub-buffer, or times out;
 * - a per-CPU channel with fewer buffers than CPUs: CPU c writes buffer
 *   c % nr_bufs (the kernel needs exactly nr_cpu_ids buffers).
 */
#include <pthread.h>
#include <sched.h>

#include "test.h"

#define SB4K 4096UL
#define PERCPU_MAX 64

static u64 now = 1000;

static u64 test_clock(void)
{
	return now;
}

static const struct lrb_config cfg_dgc =
	TEST_CONFIG(LRB_MODE_DISCARD, LRB_ALLOC_GLOBAL, LRB_WAKEUP_BY_WRITER,
		    LRB_HEADER_COMPACT, 27, .clock_read = test_clock);
static const struct lrb_config cfg_dcc =
	TEST_CONFIG(LRB_MODE_DISCARD, LRB_ALLOC_PER_CPU, LRB_WAKEUP_BY_WRITER,
		    LRB_HEADER_COMPACT, 27, .clock_read = test_clock);

static int home_cpu;
static cpu_set_t orig_cpus;

static struct lrb_chan *make_chan(const struct lrb_config *cfg,
				  unsigned int nr_cpus)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = SB4K,
		.num_subbuf = 4,
		.nr_cpus = nr_cpus,
		.stream_id = 7,
	};
	struct lrb_chan *chan = NULL;
	int ret;

	ret = lrb_channel_create(cfg, &attr, &chan);
	CHECK_EQ(ret, 0);
	return ret ? NULL : chan;
}

/*
 * Read every complete packet of @buf (reader open): each says the buffer's
 * CPU, each record's payload is intact and, if @cpu_of_seq, its sequence
 * number / 100 is a CPU that writes this buffer. Returns the records.
 */
static unsigned long drain(struct lrb_chan *chan, struct lrb_buf *buf,
			   bool cpu_of_seq)
{
	struct lrb_decoder dec = {
		.header = chan->cfg->header,
		.tsc_bits = chan->cfg->tsc_bits,
		.payload_size = test_payload_size,
	};
	static u8 data[SB4K];
	struct lrb_packet_header h;
	struct lrb_packet_iter it;
	unsigned long records = 0;
	struct lrb_record rec;
	struct lrb_subbuf sb;
	int ret;

	while (!(ret = lrb_get_next_subbuf(buf, &sb))) {
		CHECK_EQ(lrb_subbuf_copy(chan, &sb, 0, data, SB4K), 0);
		memcpy(&h, data, sizeof(h));
		CHECK_EQ(h.cpu_id, buf->cpu);
		CHECK_EQ(lrb_packet_open(&it, &dec, data, sb.packet_size), 0);
		while ((ret = lrb_packet_next(&it, &rec)) == 1) {
			u32 seq = test_payload_seq(rec.payload);

			if (cpu_of_seq)
				CHECK_EQ((seq / 100) % chan->nr_bufs, buf->cpu);
			CHECK(test_check_payload(rec.payload, rec.id, rec.len,
						 seq));
			records++;
		}
		CHECK_EQ(ret, 0);
		CHECK_EQ(lrb_put_subbuf(buf, &sb), 0);
	}
	CHECK_EQ(ret, -EAGAIN);
	return records;
}

static void *late_writer(void *arg)
{
	struct lrb_chan *chan = arg;
	u8 payload[8];
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	lrb_thread_init();
	nanosleep(&ts, NULL);
	test_fill_payload(payload, 1, 8, 0);
	CHECK_EQ(lrb_event_write(&cfg_dgc, chan, 1, payload, 8), 0);
	lrb_channel_flush(chan);
	return NULL;
}

/* lrb_wait_readable(): woken by the delivery, or -ETIMEDOUT. */
static void test_wait_readable(void)
{
	struct lrb_chan *chan = make_chan(&cfg_dgc, 1);
	struct lrb_buf *buf;
	pthread_t th;

	REQUIRE(chan);
	buf = lrb_channel_nth_buf(chan, 0);
	CHECK_EQ(lrb_reader_open(buf), 0);
	CHECK_EQ(lrb_wait_readable(buf, 20), -ETIMEDOUT);
	REQUIRE_EQ(pthread_create(&th, NULL, late_writer, chan), 0);
	CHECK_EQ(lrb_wait_readable(buf, 5000), 0);
	pthread_join(th, NULL);
	CHECK(lrb_buf_readable(buf));
	CHECK_EQ(lrb_wait_readable(buf, 0), 0);
	CHECK_EQ(drain(chan, buf, false), 1);
	CHECK_EQ(lrb_wait_readable(buf, 10), -ETIMEDOUT);
	lrb_reader_close(buf);
	lrb_channel_destroy(chan);
}

static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Per-CPU channels: CPU c writes buffer c % nr_cpus, cpu_id says which. */
static void one_percpu(unsigned int nr_cpus)
{
	struct lrb_chan *chan = make_chan(&cfg_dcc, nr_cpus);
	unsigned long expect[PERCPU_MAX] = { 0 }, total = 0, read = 0;
	u8 payload[16];
	unsigned int i, k;
	int cpu;

	REQUIRE(chan);
	REQUIRE_EQ(chan->nr_bufs, nr_cpus);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &orig_cpus) || pin_to(cpu))
			continue;
		if (sched_getcpu() != cpu)
			continue;
		for (k = 0; k < 5; k++) {
			test_fill_payload(payload, 1, 16, cpu * 100 + k);
			CHECK_EQ(lrb_event_write(&cfg_dcc, chan, 1, payload,
						 16), 0);
		}
		expect[cpu % nr_cpus] += 5;
		total += 5;
	}
	pin_to(home_cpu);
	CHECK(total > 0);
	lrb_channel_flush(chan);
	for (i = 0; i < chan->nr_bufs; i++) {
		struct lrb_buf *buf = lrb_channel_nth_buf(chan, i);

		CHECK_EQ(buf->cpu, i);
		CHECK_EQ(lrb_reader_open(buf), 0);
		k = drain(chan, buf, true);
		CHECK_EQ(k, expect[i]);
		read += k;
		lrb_reader_close(buf);
	}
	CHECK_EQ(read, total);
	lrb_channel_destroy(chan);
}

/* Fewer buffers than CPUs (a buffer per CPU: lrb_api.percpu_mapping). */
static void test_percpu_modulo(void)
{
	one_percpu(1);
	one_percpu(3);
}

int main(void)
{
	test_main_begin(60);
	CHECK_EQ(lrb_thread_init(), 0);
	if (sched_getaffinity(0, sizeof(orig_cpus), &orig_cpus))
		CPU_ZERO(&orig_cpus);
	home_cpu = sched_getcpu();
	if (home_cpu < 0 || pin_to(home_cpu))
		fprintf(stderr, "warning: cannot pin to a CPU\n");

	TEST_RUN(test_wait_readable);
	TEST_RUN(test_percpu_modulo);
	return test_main_end("unit_api");
}
