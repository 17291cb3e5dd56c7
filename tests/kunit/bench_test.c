// SPDX-License-Identifier: GPL-2.0
/*
 * lrb KUnit: lrb beside ftrace's ring buffer, measured in one boot
 * (scripts/kunit.sh --bench, run by make bench; CONFIG_LRB_BENCH).
 *
 * Three contenders write the same records, one after another in each
 * round, best of BENCH_ROUNDS rounds:
 *
 * - lrb: lrb_event_write() (reserve, copy, commit) of a compact-header
 *   per-CPU channel clocked by lrb_clock_default();
 * - ftrace: ring_buffer_lock_reserve(), a copy into
 *   ring_buffer_event_data(), ring_buffer_unlock_commit(), into a buffer
 *   of the same size per CPU, on its default clock;
 * - the floor: local_clock() and a store of the header word and payload,
 *   which any tracer must do.
 *
 * Both buffers run in discard mode, drained between batches by their
 * page-swapping readers (lrb_get_next_subbuf(), ring_buffer_read_page()
 * with a spare page) so that nothing is lost, and in overwrite mode.
 * Only the writing is timed (ktime over a batch of thousands of records).
 *
 * lrb_bench.single runs on one CPU for payloads of 8, 16, 64 and 256
 * bytes. lrb_bench.smp (two CPUs or more) puts a writer kthread on every
 * online CPU and one reader kthread draining all buffers while they write;
 * each writer pauses, untimed, after each batch until the reader has
 * emptied its buffer.
 *
 * Every figure is printed as "BENCH<tab>section<tab>key<tab>value<tab>unit
 * <tab>label" for scripts/bench.sh. A case fails only if a write was lost
 * where none may be, or if a buffer cannot be made.
 */
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/ring_buffer.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>

#include "lrb_kunit.h"

static unsigned long bench_records = 4000000;
module_param(bench_records, ulong, 0444);
MODULE_PARM_DESC(bench_records,
		 "records per measurement of lrb_bench.single (each writer of lrb_bench.smp writes a quarter)");

#define BENCH_SUBBUF 65536UL
#define BENCH_NUM_SUBBUF 8UL
#define BENCH_BUF_BYTES (BENCH_SUBBUF * BENCH_NUM_SUBBUF)
#define BENCH_ROUNDS 3
#define BENCH_PAYLOAD_MAX 256
#define BENCH_SMP_PAYLOAD 16
#define BENCH_FLOOR_BYTES 65536

enum bench_kind { BENCH_LRB, BENCH_FTRACE, BENCH_FLOOR, BENCH_NR_KINDS };

static const char *const bench_kind_names[] = { "lrb", "ftrace", "floor" };

#define BENCH_CONFIG(m)							\
	{								\
		.mode = LRB_MODE_##m,					\
		.alloc = LRB_ALLOC_PER_CPU,				\
		.wakeup = LRB_WAKEUP_BY_WRITER,				\
		.header = LRB_HEADER_COMPACT,				\
		.tsc_bits = 27,						\
		.cb = { .clock_read = lrb_clock_default },		\
	}

static const struct lrb_config bench_discard = BENCH_CONFIG(DISCARD);
static const struct lrb_config bench_overwrite = BENCH_CONFIG(OVERWRITE);

/**
 * struct bench_target - what one measurement writes into
 * @kind: lrb, ftrace or the floor
 * @overwrite: overwrite mode (else discard, drained between batches)
 * @chan: lrb's channel
 * @rb: ftrace's ring buffer
 * @floor: scratch area of the floor loop (one CPU writes it)
 */
struct bench_target {
	enum bench_kind kind;
	bool overwrite;
	struct lrb_chan *chan;
	struct trace_buffer *rb;
	u8 *floor;
};

static __always_inline unsigned long lrb_batch(const struct lrb_config *cfg,
					       struct lrb_chan *chan,
					       const u32 len, unsigned long n)
{
	u64 payload[BENCH_PAYLOAD_MAX / 8] = { 0 };
	unsigned long i, lost = 0;

	for (i = 0; i < n; i++) {
		payload[0] = i;
		lost += !!lrb_event_write(cfg, chan, 1, payload, len);
	}
	return lost;
}

static __always_inline unsigned long ftrace_batch(struct trace_buffer *rb,
						  const u32 len,
						  unsigned long n)
{
	u64 payload[BENCH_PAYLOAD_MAX / 8] = { 0 };
	struct ring_buffer_event *ev;
	unsigned long i, lost = 0;

	for (i = 0; i < n; i++) {
		payload[0] = i;
		ev = ring_buffer_lock_reserve(rb, len);
		if (unlikely(!ev)) {
			lost++;
			continue;
		}
		memcpy(ring_buffer_event_data(ev), payload, len);
		ring_buffer_unlock_commit(rb);
	}
	return lost;
}

/* The clock read and a header word plus payload stored, in a ring. */
static __always_inline unsigned long floor_batch(u8 *ring, const u32 len,
						 unsigned long n)
{
	u64 payload[BENCH_PAYLOAD_MAX / 8] = { 0 };
	unsigned long i, pos = 0;

	for (i = 0; i < n; i++) {
		u32 *slot = (u32 *)(ring + pos);

		payload[0] = i;
		preempt_disable_notrace();
		slot[0] = (u32)local_clock() << 5 | 1;
		memcpy(slot + 1, payload, len);
		preempt_enable_notrace();
		pos += sizeof(u32) + len;
		if (pos > BENCH_FLOOR_BYTES - sizeof(u32) - BENCH_PAYLOAD_MAX)
			pos = 0;
		/* the stores must happen: nothing reads them */
		barrier_data(slot);
	}
	return 0;
}

static __always_inline unsigned long bench_batch_len(struct bench_target *t,
						     const u32 len,
						     unsigned long n)
{
	switch (t->kind) {
	case BENCH_LRB:
		if (t->overwrite)
			return lrb_batch(&bench_overwrite, t->chan, len, n);
		return lrb_batch(&bench_discard, t->chan, len, n);
	case BENCH_FTRACE:
		return ftrace_batch(t->rb, len, n);
	default:
		return floor_batch(t->floor, len, n);
	}
}

/*
 * One batch of @n records of @len bytes; each length gets loops of its
 * own, with a constant-size copy, as a client's event would.
 *
 * Return: the records lost.
 */
static noinline unsigned long bench_batch(struct bench_target *t, u32 len,
					  unsigned long n)
{
	switch (len) {
	case 8:
		return bench_batch_len(t, 8, n);
	case 16:
		return bench_batch_len(t, 16, n);
	case 64:
		return bench_batch_len(t, 64, n);
	default:
		return bench_batch_len(t, 256, n);
	}
}

/* Consume every complete sub-buffer or page of @cpu's buffer. */
static void bench_drain(struct bench_target *t, unsigned int cpu,
			struct buffer_data_read_page *rpage)
{
	struct lrb_subbuf sb;

	if (t->kind == BENCH_LRB) {
		struct lrb_buf *buf = lrb_channel_nth_buf(t->chan, cpu);

		while (!lrb_get_next_subbuf(buf, &sb))
			lrb_put_subbuf(buf, &sb);
	} else if (t->kind == BENCH_FTRACE) {
		while (ring_buffer_read_page(t->rb, rpage, PAGE_SIZE, cpu, 1) >= 0)
			;
	}
}

/* Records per batch: a quarter of a buffer, so that a drained one never fills. */
static unsigned long bench_batch_records(u32 len)
{
	return BENCH_BUF_BYTES / 4 / (sizeof(u32) * 2 + len);
}

static void bench_free_rb(void *rb)
{
	ring_buffer_free(rb);
}

/* The three targets of a mode: an lrb channel, an ftrace buffer, the floor. */
static void bench_targets(struct kunit *test, struct bench_target *t,
			  bool overwrite)
{
	const struct lrb_config *cfg = overwrite ? &bench_overwrite :
						   &bench_discard;
	unsigned int cpu;
	int k;

	for (k = 0; k < BENCH_NR_KINDS; k++) {
		t[k].kind = k;
		t[k].overwrite = overwrite;
	}
	t[BENCH_LRB].chan = lrbk_chan_new(test, cfg, BENCH_SUBBUF,
					  BENCH_NUM_SUBBUF);
	for_each_possible_cpu(cpu)
		KUNIT_ASSERT_EQ(test, lrb_reader_open(lrb_channel_nth_buf(t[BENCH_LRB].chan, cpu)), 0);
	t[BENCH_FTRACE].rb = ring_buffer_alloc(BENCH_BUF_BYTES,
					       overwrite ? RB_FL_OVERWRITE : 0);
	KUNIT_ASSERT_NOT_NULL_MSG(test, t[BENCH_FTRACE].rb,
				  "ring_buffer_alloc(%lu) failed",
				  BENCH_BUF_BYTES);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, bench_free_rb,
							t[BENCH_FTRACE].rb), 0);
	t[BENCH_FLOOR].floor = kunit_kzalloc(test, BENCH_FLOOR_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t[BENCH_FLOOR].floor);
}

/* One figure for scripts/bench.sh; @v100 is the value times 100. */
static void bench_print(const char *section, const char *key, u64 v100,
			const char *unit, const char *label)
{
	pr_info("BENCH\t%s\t%s\t%llu.%02llu\t%s\t%s\n", section, key,
		v100 / 100, v100 % 100, unit, label);
}

static const char *bench_section(void)
{
	return IS_ENABLED(CONFIG_UML) ? "kernel-uml" : "kernel-x86_64";
}

/* Hundredths of a nanosecond per record. */
static u64 bench_ns100(u64 ns, unsigned long records)
{
	return div64_u64(ns * 100, records);
}

/* Hundredths of a/b. */
static u64 bench_ratio100(u64 a, u64 b)
{
	return b ? div64_u64(a * 100, b) : 0;
}

/* One measurement on this CPU: @n records, in batches. Return: ns. */
static u64 bench_single_run(struct kunit *test, struct bench_target *t,
			    u32 len, unsigned long n,
			    struct buffer_data_read_page *rpage)
{
	unsigned long batch = bench_batch_records(len), done, lost = 0;
	unsigned int cpu = raw_smp_processor_id();
	u64 ns = 0, t0;

	bench_drain(t, cpu, rpage);
	for (done = 0; done < n; done += batch) {
		unsigned long k = min(batch, n - done);

		t0 = ktime_get_ns();
		lost += bench_batch(t, len, k);
		ns += ktime_get_ns() - t0;
		if (!t->overwrite)
			bench_drain(t, cpu, rpage);
	}
	KUNIT_EXPECT_EQ_MSG(test, lost, 0UL, "%s %s, %u bytes: records lost",
			    bench_kind_names[t->kind],
			    t->overwrite ? "overwrite" : "discard", len);
	return ns;
}

static const u32 bench_lens[] = { 8, 16, 64, 256 };

static void bench_single(struct kunit *test)
{
	u64 best[2][ARRAY_SIZE(bench_lens)][BENCH_NR_KINDS];
	struct bench_target (*t)[BENCH_NR_KINDS];
	struct buffer_data_read_page *rpage[2];
	unsigned int cpu = lrbk_pin();
	int m, l, k, r;
	char key[32], label[96];

	t = kunit_kcalloc(test, 2, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	memset(best, 0xff, sizeof(best));
	for (m = 0; m < 2; m++) {
		bench_targets(test, t[m], m);
		KUNIT_ASSERT_EQ(test, ring_buffer_alloc_read_page(t[m][BENCH_FTRACE].rb,
								  cpu, &rpage[m]), 0);
	}
	for (r = 0; r < BENCH_ROUNDS; r++)
		for (l = 0; l < ARRAY_SIZE(bench_lens); l++)
			for (m = 0; m < 2; m++)
				for (k = 0; k < BENCH_NR_KINDS; k++)
					best[m][l][k] = min(best[m][l][k],
							    bench_single_run(test, &t[m][k],
									     bench_lens[l],
									     bench_records,
									     rpage[m]));
	for (m = 0; m < 2; m++) {
		const char *mode = m ? "overwrite" : "discard";

		for (l = 0; l < ARRAY_SIZE(bench_lens); l++) {
			u64 v[BENCH_NR_KINDS];

			for (k = 0; k < BENCH_NR_KINDS; k++) {
				v[k] = bench_ns100(best[m][l][k], bench_records);
				snprintf(key, sizeof(key), "%s_%s_%u_ns",
					 bench_kind_names[k], mode, bench_lens[l]);
				snprintf(label, sizeof(label),
					 "%s, %s mode, %u-byte payload, 1 CPU",
					 bench_kind_names[k], mode, bench_lens[l]);
				bench_print(bench_section(), key, v[k], "ns/rec", label);
			}
			snprintf(key, sizeof(key), "ratio_lrb_ftrace_%s_%u", mode,
				 bench_lens[l]);
			snprintf(label, sizeof(label),
				 "lrb / ftrace, %s, %u bytes (time per record)",
				 mode, bench_lens[l]);
			bench_print(bench_section(), key,
				    bench_ratio100(v[BENCH_LRB], v[BENCH_FTRACE]),
				    "x", label);
			snprintf(key, sizeof(key), "ratio_lrb_floor_%s_%u", mode,
				 bench_lens[l]);
			snprintf(label, sizeof(label),
				 "lrb / floor, %s, %u bytes (time per record)",
				 mode, bench_lens[l]);
			bench_print(bench_section(), key,
				    bench_ratio100(v[BENCH_LRB], v[BENCH_FLOOR]),
				    "x", label);
		}
		ring_buffer_free_read_page(t[m][BENCH_FTRACE].rb, cpu, rpage[m]);
	}
	kunit_info(test, "%lu records per measurement, best of %d rounds\n",
		   bench_records, BENCH_ROUNDS);
}

/**
 * struct bench_smp - the writers and the reader of one SMP measurement
 * @t: the target
 * @records: records per writer
 * @start: writers wait for it, so that they start together
 * @done: completed by each writer
 * @ns: per CPU: time spent writing
 * @lost: per CPU: records lost
 * @drain: per CPU: set by its writer after a batch, cleared by the reader
 *	once the buffer is empty
 * @stop: the reader's stop
 * @rpage: per CPU: the reader's spare page (ftrace)
 */
struct bench_smp {
	struct bench_target *t;
	unsigned long records;
	struct completion start;
	struct completion done;
	u64 ns[NR_CPUS];
	unsigned long lost[NR_CPUS];
	int drain[NR_CPUS];
	int stop;
	struct buffer_data_read_page *rpage[NR_CPUS];
};

static int bench_smp_writer(void *arg)
{
	struct bench_smp *s = arg;
	unsigned int cpu = raw_smp_processor_id();
	unsigned long batch = bench_batch_records(BENCH_SMP_PAYLOAD), done;
	u64 t0;

	wait_for_completion(&s->start);
	for (done = 0; done < s->records; done += batch) {
		unsigned long k = min(batch, s->records - done);

		t0 = ktime_get_ns();
		s->lost[cpu] += bench_batch(s->t, BENCH_SMP_PAYLOAD, k);
		s->ns[cpu] += ktime_get_ns() - t0;
		/* pairs with the reader's load: the batch is in before it looks */
		smp_store_release(&s->drain[cpu], 1);
		/* pairs with the reader's clear: it has drained by then */
		while (smp_load_acquire(&s->drain[cpu]))
			usleep_range(20, 50);
	}
	complete(&s->done);
	return 0;
}

static int bench_smp_reader(void *arg)
{
	struct bench_smp *s = arg;
	unsigned int cpu;

	while (!READ_ONCE(s->stop)) {
		for_each_online_cpu(cpu) {
			/* pairs with the writer's release after its batch */
			bool asked = smp_load_acquire(&s->drain[cpu]);

			bench_drain(s->t, cpu, s->rpage[cpu]);
			if (asked) /* drained before the writer goes on */
				smp_store_release(&s->drain[cpu], 0);
		}
		usleep_range(10, 20);
	}
	return 0;
}

/* All online CPUs write @t at once. Return: mean ns per record per writer. */
static u64 bench_smp_run(struct kunit *test, struct bench_target *t,
			 unsigned long records)
{
	struct task_struct *reader;
	unsigned int cpu, nr = 0;
	struct bench_smp *s;
	u64 ns = 0;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->t = t;
	s->records = records;
	init_completion(&s->start);
	init_completion(&s->done);
	if (t->kind == BENCH_FTRACE)
		for_each_online_cpu(cpu)
			KUNIT_ASSERT_EQ(test, ring_buffer_alloc_read_page(t->rb, cpu,
									  &s->rpage[cpu]), 0);
	reader = kthread_run(bench_smp_reader, s, "lrb_bench_reader");
	KUNIT_ASSERT_FALSE(test, IS_ERR(reader));
	get_task_struct(reader);
	for_each_online_cpu(cpu) {
		struct task_struct *w;

		w = kthread_create_on_cpu(bench_smp_writer, s, cpu,
					  "lrb_bench_writer/%u");
		KUNIT_ASSERT_FALSE(test, IS_ERR(w));
		wake_up_process(w);
		nr++;
	}
	complete_all(&s->start);
	for (cpu = 0; cpu < nr; cpu++)
		wait_for_completion(&s->done);
	WRITE_ONCE(s->stop, 1);
	KUNIT_EXPECT_EQ(test, kthread_stop(reader), 0);
	put_task_struct(reader);
	for_each_online_cpu(cpu)
		if (s->rpage[cpu])
			ring_buffer_free_read_page(t->rb, cpu, s->rpage[cpu]);

	for_each_online_cpu(cpu) {
		if (!t->overwrite)
			KUNIT_EXPECT_EQ_MSG(test, s->lost[cpu], 0UL,
					    "%s discard: records lost on CPU %u",
					    bench_kind_names[t->kind], cpu);
		ns += s->ns[cpu];
	}
	return div64_u64(ns, nr);
}

static void bench_smp(struct kunit *test)
{
	unsigned long records = bench_records / 4;
	struct bench_target (*t)[BENCH_NR_KINDS];
	u64 best[2][2];
	char key[32], label[96];
	int m, k, r;

	if (num_online_cpus() < 2)
		kunit_skip(test, "one CPU online: nothing to run side by side");
	t = kunit_kcalloc(test, 2, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	memset(best, 0xff, sizeof(best));
	for (m = 0; m < 2; m++)
		bench_targets(test, t[m], m);
	for (r = 0; r < BENCH_ROUNDS; r++)
		for (m = 0; m < 2; m++)
			for (k = BENCH_LRB; k <= BENCH_FTRACE; k++)
				best[m][k] = min(best[m][k],
						 bench_smp_run(test, &t[m][k], records));
	for (m = 0; m < 2; m++) {
		const char *mode = m ? "overwrite" : "discard";

		for (k = BENCH_LRB; k <= BENCH_FTRACE; k++) {
			snprintf(key, sizeof(key), "smp_%s_%s_ns",
				 bench_kind_names[k], mode);
			snprintf(label, sizeof(label),
				 "%s, %s mode, %u-byte payload, a writer on each of %u CPUs + a reader",
				 bench_kind_names[k], mode, BENCH_SMP_PAYLOAD,
				 num_online_cpus());
			bench_print(bench_section(), key,
				    bench_ns100(best[m][k], records), "ns/rec", label);
		}
		snprintf(key, sizeof(key), "smp_ratio_lrb_ftrace_%s", mode);
		snprintf(label, sizeof(label),
			 "lrb / ftrace, %s, every CPU writing (time per record)",
			 mode);
		bench_print(bench_section(), key,
			    bench_ratio100(best[m][BENCH_LRB], best[m][BENCH_FTRACE]),
			    "x", label);
	}
	kunit_info(test, "%lu records per writer and measurement, %u writers, best of %d rounds\n",
		   records, num_online_cpus(), BENCH_ROUNDS);
}

static struct kunit_case bench_cases[] = {
	KUNIT_CASE_SLOW(bench_single),
	KUNIT_CASE_SLOW(bench_smp),
	{}
};

static struct kunit_suite bench_suite = {
	.name = "lrb_bench",
	.test_cases = bench_cases,
};

kunit_test_suite(bench_suite);
