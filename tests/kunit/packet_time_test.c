// SPDX-License-Identifier: GPL-2.0
/*
 * lrb KUnit: a packet's timestamp_end never precedes its timestamp_begin
 * nor any of its records (Documentation/design.rst, "Packet time stamps"),
 * whatever clock the closer reads:
 *
 * - a flush whose clock lags behind the records, as when lrb.ko flushes a
 *   dead CPU's buffer from another CPU, whose local_clock() may be behind
 *   what interrupts wrote on the dying one (the test clock plays both);
 * - lrb_buf_flush_final() closing a packet left open and empty by a
 *   try-discard, which began after the time stamp the reader passes.
 *
 * lrbk_check_packet() checks begin <= end and every record within; the
 * cases also check the exact end.
 */
#include <linux/preempt.h>

#include "lrb_kunit.h"

#define SB4K LRBK_SB4K

static const struct lrb_config per_cpu_cfgs[] = {
	LRBK_CONFIG(DISCARD, PER_CPU, COMPACT),
	LRBK_CONFIG(DISCARD, PER_CPU, LARGE),
	LRBK_CONFIG(OVERWRITE, PER_CPU, COMPACT),
	LRBK_CONFIG(OVERWRITE, PER_CPU, LARGE),
};

KUNIT_ARRAY_PARAM(per_cpu_cfgs, per_cpu_cfgs, lrbk_cfg_desc);
KUNIT_ARRAY_PARAM(variants, lrbk_variants, lrbk_variant_desc);

static u64 end_of(const struct lrb_subbuf *sb)
{
	return ((const struct lrb_packet_header *)sb->pages[0])->timestamp_end;
}

static u64 begin_of(const struct lrb_subbuf *sb)
{
	return ((const struct lrb_packet_header *)sb->pages[0])->timestamp_begin;
}

/* Take the next packet, check it, and return its timestamp_end. */
static u64 take_end(struct lrbk_drain *d, u64 begin)
{
	struct lrb_subbuf sb;
	u64 end;

	KUNIT_ASSERT_EQ(d->test, lrb_get_next_subbuf(d->buf, &sb), 0);
	lrbk_check_packet(d, &sb);
	KUNIT_EXPECT_EQ(d->test, begin_of(&sb), begin);
	end = end_of(&sb);
	KUNIT_EXPECT_EQ(d->test, lrb_put_subbuf(d->buf, &sb), 0);
	return end;
}

/* lrb_buf_flush_local() on this CPU, with the clock at @now. */
static void flush_local_at(struct lrb_buf *buf, u64 now)
{
	lrbk_set_clock(now);
	preempt_disable();
	lrb_buf_flush_local(buf);
	preempt_enable();
}

/*
 * A flush reading a clock behind the buffer's records: the packet ends
 * with its last record, not at the clock, so that it neither ends before
 * a record nor before it began.
 */
static void flush_clock_behind(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	struct lrbk_model *m = lrbk_model_new(test, 16, false);
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(cfg, chan);
	struct lrbk_drain d;
	struct lrb_subbuf sb;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);

	/* records at 1000 and 3000, flushed with a clock at 2000 */
	lrbk_set_clock(1000);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 1, 16), 0);
	lrbk_set_clock(3000);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 2, 16), 0);
	flush_local_at(buf, 2000);
	KUNIT_EXPECT_EQ(test, take_end(&d, 1000), 3000ULL);

	/* one record, which began the packet, and a clock before it */
	lrbk_set_clock(5000);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 3, 16), 0);
	flush_local_at(buf, 4000);
	KUNIT_EXPECT_EQ(test, take_end(&d, 5000), 5000ULL);

	/* a clock ahead, as on the buffer's own CPU, is taken as it is */
	lrbk_set_clock(6000);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 4, 16), 0);
	flush_local_at(buf, 7000);
	KUNIT_EXPECT_EQ(test, take_end(&d, 6000), 7000ULL);

	KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb), -EAGAIN);
	KUNIT_EXPECT_EQ(test, d.records, 4UL);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	lrb_reader_close(buf);
}

/*
 * A reservation taken back leaves its packet open and empty: a flush
 * leaves it so, and lrb_buf_flush_final(), given the end of the last
 * packet read, closes it no earlier than it began.
 */
static void close_final_after_discard(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	struct lrbk_model *m = lrbk_model_new(test, 16, false);
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(cfg, chan);
	struct lrbk_drain d;
	struct lrb_subbuf sb;
	struct lrb_ctx ctx;
	int reserved, discarded = -EINVAL;
	u64 last_end;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);

	lrbk_set_clock(1000);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 1, 16), 0);
	lrbk_set_clock(2000);
	lrb_buf_flush(buf);
	last_end = take_end(&d, 1000);
	KUNIT_EXPECT_EQ(test, last_end, 2000ULL);

	lrbk_set_clock(5000);
	reserved = lrb_reserve(cfg, chan, &ctx, 1, 16);
	if (!reserved)
		discarded = lrb_try_discard(cfg, &ctx);
	KUNIT_ASSERT_EQ(test, reserved, 0);
	KUNIT_ASSERT_EQ(test, discarded, 0);
	lrbk_set_clock(6000);
	lrb_buf_flush(buf);
	KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb), -EAGAIN);

	lrb_buf_flush_final(buf, last_end);
	KUNIT_EXPECT_EQ(test, take_end(&d, 5000), 5000ULL);
	KUNIT_EXPECT_EQ(test, d.records, 1UL);
	KUNIT_EXPECT_EQ(test, m->next, m->n);

	/* with no packet open, the final one begins and ends at @tsc */
	lrb_buf_flush_final(buf, 8000);
	KUNIT_EXPECT_EQ(test, take_end(&d, 8000), 8000ULL);
	lrb_reader_close(buf);
}

static int lrb_packet_time_init(struct kunit *test)
{
	lrbk_pin();
	return 0;
}

static struct kunit_case lrb_packet_time_cases[] = {
	KUNIT_CASE_PARAM(flush_clock_behind, per_cpu_cfgs_gen_params),
	KUNIT_CASE_PARAM(close_final_after_discard, variants_gen_params),
	{}
};

static struct kunit_suite lrb_packet_time_suite = {
	.name = "lrb_packet_time",
	.init = lrb_packet_time_init,
	.test_cases = lrb_packet_time_cases,
};

kunit_test_suite(lrb_packet_time_suite);
