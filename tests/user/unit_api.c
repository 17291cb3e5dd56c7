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
 *   c % nr_bufs (the kernel needs exactly nr_cpu_ids buffers);
 * - the switch timer (attr.switch_timer_us): records left alone become
 *   readable within its period plus a bound, its thread is gone after
 *   lrb_channel_destroy(), and without it records wait for a flush;
 * - the rseq fast path: enabled where it can be (LRB_RSEQ=0 keeps the
 *   locked path), and exclusive with the locked operations of a writer
 *   that migrated and of a flush, so that no update of either is lost.
 */
#include <dirent.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <time.h>

#include "test.h"
#include "../../lib/port.h"

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
	unsigned long expect[PERCPU_MAX] = { 0 }, total = 0, read = 0, holds;
	bool shared = nr_cpus < (unsigned int)lrb_possible_cpus();
	u8 payload[16];
	unsigned int i, k;
	int cpu;

	REQUIRE(chan);
	REQUIRE_EQ(chan->nr_bufs, nr_cpus);
	holds = __lrb_port_rseq_holds();
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
	/* writers on their buffer's CPU never block the sequences */
	CHECK_EQ(__lrb_port_rseq_holds(), holds);
	lrb_channel_flush(chan);
	/*
	 * Nor does anything on a channel whose buffers CPUs share: all its
	 * writers take the locked path (no membarrier per record).
	 */
	if (shared || !__lrb_port_rseq_on())
		CHECK_EQ(__lrb_port_rseq_holds(), holds);
	else
		CHECK_EQ(__lrb_port_rseq_holds() - holds, nr_cpus);
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

/*
 * Fewer buffers than CPUs, and a buffer per CPU (also
 * lrb_api.percpu_mapping), where writers use restartable sequences.
 */
static void test_percpu_modulo(void)
{
	one_percpu(1);
	one_percpu(3);
	if (lrb_possible_cpus() <= PERCPU_MAX)
		one_percpu(lrb_possible_cpus());
}

/* Threads of this process named @comm (from /proc/self/task/<tid>/comm). */
static int threads_named(const char *comm)
{
	char path[300], name[32];
	struct dirent *d;
	int n = 0;
	DIR *dir;
	FILE *f;

	dir = opendir("/proc/self/task");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) &&
		    !strncmp(name, comm, strlen(comm)) &&
		    name[strlen(comm)] == '\n')
			n++;
		fclose(f);
	}
	closedir(dir);
	return n;
}

static u64 mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/*
 * Threads named @comm still listed after their join: pthread_join()
 * returns once the thread has cleared its tid, a moment before the kernel
 * (or qemu-user, sooner still) takes it off /proc; wait up to two seconds.
 */
static int threads_left(const char *comm)
{
	u64 end = mono_ms() + 2000;
	int n;

	while ((n = threads_named(comm)) > 0 && mono_ms() < end)
		usleep(1000);
	return n;
}

#define TIMER_PERIOD_MS 20
/* How late a tick may be on a loaded machine, beyond its period. */
#define TIMER_SLACK_MS 2000

static struct lrb_chan *make_timer_chan(unsigned int nr_cpus,
					unsigned int period_us)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = SB4K,
		.num_subbuf = 4,
		.nr_cpus = nr_cpus,
		.switch_timer_us = period_us,
	};
	struct lrb_chan *chan = NULL;
	int ret;

	ret = lrb_channel_create(&cfg_dcc, &attr, &chan);
	CHECK_EQ(ret, 0);
	return ret ? NULL : chan;
}

/* Write @n records of 16 bytes, sequence numbers from @seq. */
static void write_n(struct lrb_chan *chan, unsigned int n, u32 seq)
{
	u8 payload[16];
	unsigned int i;

	for (i = 0; i < n; i++) {
		test_fill_payload(payload, 1, 16, seq + i);
		CHECK_EQ(lrb_event_write(&cfg_dcc, chan, 1, payload, 16), 0);
	}
}

/*
 * The records of every buffer, read once a buffer turns readable: waits
 * on each buffer up to @wait_ms (the writer's buffer is the one that gets
 * readable); returns the records read and in *@ms how long that took.
 */
static unsigned long read_all(struct lrb_chan *chan, int wait_ms, u64 *ms)
{
	u64 t0 = mono_ms();
	unsigned long n = 0;
	struct lrb_buf *buf;
	unsigned int i;

	buf = lrb_channel_nth_buf(chan, home_cpu % chan->nr_bufs);
	lrb_wait_readable(buf, wait_ms);
	*ms = mono_ms() - t0;
	for (i = 0; i < chan->nr_bufs; i++)
		n += drain(chan, lrb_channel_nth_buf(chan, i), false);
	return n;
}

/* Records left alone become readable by the switch timer, every time. */
static void test_switch_timer(void)
{
	struct lrb_chan *chan;
	unsigned int i, round, want[3] = { 5, 1, 40 };
	unsigned long total = 0;
	struct lrb_buf_counters st;
	u64 ms;

	CHECK_EQ(threads_named("lrb-switch"), 0);
	chan = make_timer_chan(2, TIMER_PERIOD_MS * 1000);
	REQUIRE(chan);
	CHECK_EQ(threads_named("lrb-switch"), 1);
	for (i = 0; i < chan->nr_bufs; i++)
		CHECK_EQ(lrb_reader_open(lrb_channel_nth_buf(chan, i)), 0);
	for (round = 0; round < ARRAY_SIZE(want); round++) {
		write_n(chan, want[round], total);
		CHECK_EQ(read_all(chan, TIMER_PERIOD_MS + TIMER_SLACK_MS, &ms),
			 want[round]);
		CHECK(ms <= TIMER_PERIOD_MS + TIMER_SLACK_MS);
		total += want[round];
	}
	/* nothing written: the ticks deliver no empty packet */
	usleep(3 * TIMER_PERIOD_MS * 1000);
	CHECK_EQ(read_all(chan, 0, &ms), 0);
	for (i = 0; i < chan->nr_bufs; i++) {
		lrb_buf_stats(lrb_channel_nth_buf(chan, i), &st);
		CHECK_EQ(st.lost_full + st.lost_wrap + st.lost_big +
			 st.lost_nest + st.lost_packets, 0);
		total -= st.records_written;
		lrb_reader_close(lrb_channel_nth_buf(chan, i));
	}
	CHECK_EQ(total, 0);
	/* records still unread when the channel goes are not an issue */
	write_n(chan, 3, 0);
	lrb_channel_destroy(chan);
	CHECK_EQ(threads_left("lrb-switch"), 0);
}

/* Without the switch timer, records wait for a full packet or a flush. */
static void test_no_switch_timer(void)
{
	struct lrb_chan *chan = make_timer_chan(2, 0);
	unsigned int i;
	u64 ms;

	REQUIRE(chan);
	CHECK_EQ(threads_named("lrb-switch"), 0);
	for (i = 0; i < chan->nr_bufs; i++)
		CHECK_EQ(lrb_reader_open(lrb_channel_nth_buf(chan, i)), 0);
	write_n(chan, 5, 0);
	CHECK_EQ(read_all(chan, 5 * TIMER_PERIOD_MS, &ms), 0);
	CHECK(ms >= 5 * TIMER_PERIOD_MS);
	lrb_channel_flush(chan);
	CHECK_EQ(read_all(chan, 0, &ms), 5);
	for (i = 0; i < chan->nr_bufs; i++)
		lrb_reader_close(lrb_channel_nth_buf(chan, i));
	lrb_channel_destroy(chan);
}

/* Several channels, each with its own thread; all gone after destroy. */
static void test_switch_timer_many(void)
{
	struct lrb_chan *chan[4];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(chan); i++) {
		chan[i] = make_timer_chan(1, 1000 * (i + 1));
		REQUIRE(chan[i]);
	}
	CHECK_EQ(threads_named("lrb-switch"), ARRAY_SIZE(chan));
	for (i = 0; i < ARRAY_SIZE(chan); i++)
		lrb_channel_destroy(chan[i]);
	CHECK_EQ(threads_left("lrb-switch"), 0);
}

/* The fast path runs wherever the build, libc and kernel allow it. */
static void test_rseq_mode(void)
{
	const char *env = getenv("LRB_RSEQ");
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	bool can = __LRB_PORT_RSEQ && __rseq_size > 0 && cmds > 0 &&
		   (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ);

	if (env && !strcmp(env, "0"))
		can = false;
	printf("# writers use %s\n", __lrb_port_rseq_on() ?
	       "restartable sequences" : "locked operations");
	CHECK_EQ(__lrb_port_rseq_on(), can);
	CHECK_EQ(uatomic_read(&__lrb_rseq_block), 0);
}

#define RSEQ_RACE_SECTIONS 1000000
#define RSEQ_RACE_REMOTE 100000

static struct lrb_buf *race_buf;
static int race_go;

static void race_wait(void)
{
	while (!uatomic_read(&race_go))
		caa_cpu_relax();
}

/* A writer of buffer 0 on CPU 0: two adds per section, in rseq there. */
static void *race_owner(void *arg)
{
	unsigned int i;

	(void)arg;
	CHECK_EQ(pin_to(0), 0);
	race_wait();
	for (i = 0; i < RSEQ_RACE_SECTIONS; i++) {
		__lrb_port_nesting_inc(race_buf->cpu, race_buf->chan->nr_bufs);
		__lrb_v_inc(true, &race_buf->lost_nest);
		__lrb_v_add_return(true, 2, &race_buf->lost_nest);
		__lrb_port_nesting_dec();
	}
	return NULL;
}

/* A writer of buffer 0 that migrated to the last CPU: locked adds. */
static void *race_migrated(void *arg)
{
	unsigned int i;

	CHECK_EQ(pin_to(*(int *)arg), 0);
	race_wait();
	for (i = 0; i < RSEQ_RACE_REMOTE; i++) {
		__lrb_port_nesting_inc(race_buf->cpu, race_buf->chan->nr_bufs);
		__lrb_v_inc(true, &race_buf->lost_nest);
		__lrb_v_cmpxchg(true, &race_buf->lost_nest, 0, 1);
		__lrb_v_inc(true, &race_buf->lost_nest);
		__lrb_port_nesting_dec();
	}
	return NULL;
}

static void race_flush_fn(void *arg)
{
	__lrb_v_inc(true, arg);
}

/* A flush of buffer 0 from the last CPU, as the switch timer does. */
static void *race_flusher(void *arg)
{
	unsigned int i;

	CHECK_EQ(pin_to(*(int *)arg), 0);
	race_wait();
	for (i = 0; i < RSEQ_RACE_REMOTE; i++)
		__lrb_port_on_cpu(race_buf, race_flush_fn, &race_buf->lost_nest);
	return NULL;
}

/*
 * Unlocked adds in restartable sequences on CPU 0 and locked adds to the
 * same counter from another CPU, by a migrated writer and by a flush: the
 * total is exact, and nothing blocks the sequences afterwards.
 */
static void test_rseq_exclusion(void)
{
	struct lrb_chan *chan = make_chan(&cfg_dcc, lrb_possible_cpus());
	int last = CPU_COUNT(&orig_cpus) > 1 ? 1 : 0;
	unsigned long holds = __lrb_port_rseq_holds();
	pthread_t t[3];
	unsigned int i;

	REQUIRE(chan);
	if (!CPU_ISSET(0, &orig_cpus) || (last && !CPU_ISSET(1, &orig_cpus))) {
		printf("# needs CPUs 0 and 1, skipped\n");
		lrb_channel_destroy(chan);
		return;
	}
	race_buf = chan->bufs[0];
	uatomic_set(&race_go, 0);
	REQUIRE(!pthread_create(&t[0], NULL, race_owner, NULL));
	REQUIRE(!pthread_create(&t[1], NULL, race_migrated, &last));
	REQUIRE(!pthread_create(&t[2], NULL, race_flusher, &last));
	uatomic_set(&race_go, 1);
	for (i = 0; i < ARRAY_SIZE(t); i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(uatomic_read(&race_buf->lost_nest.v),
		 3UL * RSEQ_RACE_SECTIONS + 3UL * RSEQ_RACE_REMOTE);
	/* each migrated section and each flush blocked the sequences */
	if (__lrb_port_rseq_on())
		CHECK(__lrb_port_rseq_holds() - holds >= 2UL * RSEQ_RACE_REMOTE);
	else
		CHECK_EQ(__lrb_port_rseq_holds(), holds);
	CHECK_EQ(uatomic_read(&__lrb_rseq_block), 0);
	lrb_channel_destroy(chan);
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
	TEST_RUN(test_switch_timer);
	TEST_RUN(test_no_switch_timer);
	TEST_RUN(test_switch_timer_many);
	TEST_RUN(test_percpu_modulo);
	TEST_RUN(test_rseq_mode);
	TEST_RUN(test_rseq_exclusion);
	return test_main_end("unit_api");
}
