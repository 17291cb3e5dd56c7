// SPDX-License-Identifier: GPL-2.0
/*
 * lrb KUnit: positions across their wrap. Positions have __LRB_POS_BITS
 * bits (the top two bits of the write position hold the discard
 * generation), so they wrap at 2^30 bytes on 32-bit machines and 2^62 on
 * 64-bit ones; packet sequence numbers never wrap. Channels start just
 * below each point that matters, through the test hook
 * __lrb_channel_start_at(), and are written and read past it in both modes:
 *
 * - 2^__LRB_POS_BITS: positions wrap to 0, the generation bits stay clear;
 * - a quarter and three quarters of the way: where the openers record the
 *   pass that sequence numbers are made of;
 * - 2^32: where a 32-bit position would wrap (unsigned long on 32-bit);
 * - 2^64, 64-bit only: the last byte count a sequence number is made of.
 *
 * Every record written is read or counted lost, payloads are intact,
 * packet_seq_num is the byte count from creation over the sub-buffer
 * size, without a gap or a step back, and lrb_buf_stats() agrees. A
 * snapshot by those counts (lrb_get_subbuf_at(), what lrb.ko's ioctls
 * speak) gets the same packets, and the public position helpers
 * (lrb_pos_advance(), lrb_pos_distance(), lrb_pos_before()) are checked on
 * each side of the wrap.
 */
#include "lrb_kunit.h"

#define SB LRBK_SB4K
#define NSB 4
#define RING (SB * NSB)
#define SPAN (1ULL << __LRB_POS_BITS)

/* The points, as byte counts from the creation of the channel. */
static const u64 wrap_points[] = {
	SPAN / 4, SPAN / 2, SPAN * 3 / 4, SPAN, SPAN + SPAN / 4, 1ULL << 32,
	3 * SPAN + SPAN * 3 / 4,
	4 * SPAN, /* 2^64 (0) on 64-bit, 2^32 again on 32-bit */
};

static unsigned long wrapped(u64 pos)
{
	return (unsigned long)pos & __LRB_POS_MASK;
}

/*
 * A payload length from 8 to 307 bytes (LRBK_SCALE times that on larger
 * pages, for as many packets), so packets end unevenly.
 */
static u32 len_of(unsigned long i)
{
	return LRBK_LEN(8 + (i * 37) % 300);
}

/* Stats of @buf after a full drain from @start: positions and counts. */
static void check_drained(struct kunit *test, struct lrb_buf *buf,
			  struct lrbk_drain *d, struct lrbk_model *m, u64 start)
{
	u64 read_to = start + (u64)(d->packets + d->gaps) * SB;
	unsigned long consumed, produced;
	struct lrb_buf_counters st;

	lrb_positions(buf, &consumed, &produced);
	KUNIT_EXPECT_EQ_MSG(test, consumed, wrapped(read_to),
			    "read position after %llu packets from %llx",
			    d->packets + d->gaps, start);
	KUNIT_EXPECT_EQ(test, produced, consumed);
	/* the counts in the stats do not wrap */
	lrb_buf_stats(buf, &st);
	KUNIT_EXPECT_EQ(test, st.consumed, read_to);
	KUNIT_EXPECT_EQ(test, st.produced, read_to);
	/* 2^64 / SB packets fit where 2^64 bytes do not */
	KUNIT_EXPECT_EQ(test, d->next_seq, start / SB + d->packets + d->gaps);
	KUNIT_EXPECT_EQ(test, st.records_written, (unsigned long)m->n);
	KUNIT_EXPECT_EQ(test, st.lost_wrap + st.lost_big + st.lost_nest, 0UL);
	KUNIT_EXPECT_EQ(test, st.lost_full, m->failed);
	KUNIT_EXPECT_EQ(test, st.lost_packets, (unsigned long)d->gaps);
	/* read + lost = written, the records of overwritten packets too */
	KUNIT_EXPECT_EQ(test, st.records_written, d->records + st.lost_overwrite);
	KUNIT_EXPECT_EQ(test, !st.lost_overwrite, !st.lost_packets);
	KUNIT_EXPECT_EQ(test, lrb_buf_lost(buf), m->failed + st.lost_overwrite);
}

static struct lrb_buf *start_chan(struct kunit *test,
				  const struct lrb_config *cfg,
				  struct lrb_chan **chanp, u64 start)
{
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, SB, NSB);
	struct lrb_buf *buf;

	KUNIT_ASSERT_EQ(test, __lrb_channel_start_at(chan, start), 0);
	lrbk_pin();
	buf = lrbk_my_buf(cfg, chan);
	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	*chanp = chan;
	return buf;
}

static void drain_init(struct kunit *test, struct lrbk_drain *d,
		       struct lrb_chan *chan, struct lrb_buf *buf,
		       struct lrbk_model *m, u64 start)
{
	lrbk_drain_init(d, test, chan, buf, m);
	d->next_seq = start / SB;
}

/*
 * A reader that keeps up: from 8 sub-buffers below each point to 16
 * past it, nothing is lost, every record is read in order, and the
 * sequence numbers run on without a gap.
 */
static void wrap_consume(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	unsigned int p;

	for (p = 0; p < ARRAY_SIZE(wrap_points); p++) {
		u64 start = wrap_points[p] - 8 * SB;
		struct lrbk_model *m = lrbk_model_new(test, 2048, false);
		struct lrbk_drain d;
		struct lrb_chan *chan;
		struct lrb_buf *buf;
		unsigned long i;
		int ret;

		buf = start_chan(test, cfg, &chan, start);
		drain_init(test, &d, chan, buf, m, start);
		lrbk_set_clock(1000);
		for (i = 0; m->seq < 2048 && d.next_seq < start / SB + 24;
		     i++) {
			lrbk_tick(3);
			ret = lrbk_write(m, cfg, chan, 1, len_of(i));
			KUNIT_EXPECT_EQ_MSG(test, ret, 0,
					    "record %lu from %llx", i, start);
			if (ret)
				break;
			if (i % 8 == 7)
				lrbk_drain_all(&d);
		}
		lrb_buf_flush(buf);
		lrbk_drain_all(&d);
		KUNIT_EXPECT_EQ_MSG(test, d.records, (unsigned long)m->n,
				    "records read from %llx", start);
		KUNIT_EXPECT_EQ(test, m->next, m->n);
		KUNIT_EXPECT_EQ(test, m->failed, 0UL);
		KUNIT_EXPECT_EQ(test, d.gaps, 0ULL);
		KUNIT_EXPECT_GE(test, d.next_seq, start / SB + 24);
		check_drained(test, buf, &d, m, start);
		lrb_reader_close(buf);
		lrbk_chan_destroy(test, chan);
	}
}

/*
 * No reader while writers cross the point: discard mode drops and counts
 * every record the full ring refuses, overwrite mode overwrites packets
 * and the reader sees exactly lost_packets as gaps. Then the reader
 * drains and writers go on.
 */
static void wrap_lossy(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	bool overwrite = cfg->mode == LRB_MODE_OVERWRITE;
	unsigned int p;

	for (p = 0; p < ARRAY_SIZE(wrap_points); p++) {
		u64 start = wrap_points[p] - 2 * SB;
		struct lrbk_model *m = lrbk_model_new(test, 2048, overwrite);
		struct lrbk_drain d;
		struct lrb_chan *chan;
		struct lrb_buf *buf;
		unsigned long i, ok = 0;

		buf = start_chan(test, cfg, &chan, start);
		drain_init(test, &d, chan, buf, m, start);
		lrbk_set_clock(1000);
		/* about 12 sub-buffers, three rings */
		for (i = 0; i < 300; i++) {
			lrbk_tick(3);
			if (!lrbk_write(m, cfg, chan, 1, len_of(i)))
				ok++;
		}
		lrbk_drain_all(&d);
		for (; i < 350; i++) {
			lrbk_tick(3);
			if (!lrbk_write(m, cfg, chan, 1, len_of(i)))
				ok++;
		}
		lrb_buf_flush(buf);
		lrbk_drain_all(&d);
		KUNIT_EXPECT_EQ(test, ok, (unsigned long)m->n);
		KUNIT_EXPECT_EQ(test, ok + m->failed, m->attempts);
		if (overwrite) {
			KUNIT_EXPECT_EQ(test, m->failed, 0UL);
			KUNIT_EXPECT_GT_MSG(test, d.gaps, 0ULL,
					    "nothing overwritten from %llx",
					    start);
			/* the last record written is the last one read */
			KUNIT_EXPECT_EQ(test, m->next, m->n);
		} else {
			KUNIT_EXPECT_GT(test, m->failed, 0UL);
			KUNIT_EXPECT_EQ_MSG(test, d.records, ok,
					    "records read from %llx", start);
			KUNIT_EXPECT_EQ(test, m->next, m->n);
			KUNIT_EXPECT_EQ(test, d.gaps, 0ULL);
			KUNIT_EXPECT_EQ(test, d.last_discarded,
					(u64)m->failed);
		}
		KUNIT_EXPECT_GE(test, d.next_seq, start / SB + 6);
		check_drained(test, buf, &d, m, start);
		lrb_reader_close(buf);
		lrbk_chan_destroy(test, chan);
	}
}

/*
 * Overwrite mode: snapshots of the ring across the point, between the
 * read and write positions, with the public wrap-safe position helpers;
 * the same snapshot by the byte counts of lrb_buf_stats(), which do not
 * wrap (what lrb.ko's GET_POSITIONS and GET_SUBBUF speak); then the
 * consuming reader reads the same packets.
 */
static void wrap_snapshot(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	unsigned int p;

	for (p = 0; p < ARRAY_SIZE(wrap_points); p++) {
		u64 start = wrap_points[p] - 3 * SB;
		struct lrbk_model *m = lrbk_model_new(test, 2048, true);
		unsigned long i = 0, pos, consumed, produced, n = 0;
		struct lrbk_drain d;
		struct lrb_chan *chan;
		struct lrb_buf_counters st;
		struct lrb_subbuf sb;
		struct lrb_buf *buf;
		u64 first, count;
		int ret;

		buf = start_chan(test, cfg, &chan, start);
		lrbk_set_clock(1000);
		/* into the fifth packet: the ring holds the second to it */
		do {
			lrbk_tick(3);
			ret = lrbk_write(m, cfg, chan, 1, len_of(i));
			KUNIT_EXPECT_EQ_MSG(test, ret, 0,
					    "record %lu from %llx", i++, start);
			lrb_positions(buf, &consumed, &produced);
		} while (!ret &&
			 lrb_pos_distance(wrapped(start), produced) < 4 * SB + 512);
		lrb_buf_flush(buf);
		lrb_positions(buf, &consumed, &produced);
		KUNIT_EXPECT_EQ(test, lrb_pos_distance(consumed, produced), RING);
		first = start + lrb_pos_distance(wrapped(start), consumed);
		/* the snapshot straddles the point */
		KUNIT_EXPECT_EQ(test, first, wrap_points[p] - 2 * SB);
		lrb_buf_stats(buf, &st);
		KUNIT_EXPECT_EQ(test, st.consumed, first);
		KUNIT_EXPECT_EQ(test, st.produced, first + RING);
		drain_init(test, &d, chan, buf, m, first);
		for (pos = consumed; lrb_pos_before(pos, produced);
		     pos = lrb_pos_advance(pos, SB)) {
			KUNIT_ASSERT_EQ_MSG(test, lrb_get_subbuf(buf, pos, &sb),
					    0, "snapshot at %lx", pos);
			KUNIT_EXPECT_FALSE(test, sb.consuming);
			KUNIT_EXPECT_EQ(test, sb.seq, first / SB + n);
			lrbk_check_packet(&d, &sb);
			KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
			n++;
		}
		KUNIT_EXPECT_EQ(test, n, (unsigned long)NSB);
		KUNIT_EXPECT_EQ(test, d.gaps, 0ULL);
		KUNIT_EXPECT_EQ(test, m->next, m->n);
		KUNIT_EXPECT_EQ(test, lrb_get_subbuf(buf, produced, &sb),
				-EAGAIN);
		KUNIT_EXPECT_EQ(test,
				lrb_get_subbuf(buf, lrb_pos_advance(consumed, -SB),
					       &sb),
				-ENODATA);

		/* by count: the same packets; a count a pass off is refused */
		for (count = st.consumed; count != st.produced; count += SB) {
			KUNIT_ASSERT_EQ_MSG(test,
					    lrb_get_subbuf_at(buf, count, &sb),
					    0, "snapshot at count %llx", count);
			KUNIT_EXPECT_EQ(test, sb.seq * SB, count);
			KUNIT_EXPECT_EQ(test, sb.pos, wrapped(count));
			KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
			KUNIT_EXPECT_EQ(test,
					lrb_get_subbuf_at(buf, count + SPAN, &sb),
					-EAGAIN);
			if (count >= SPAN)
				KUNIT_EXPECT_EQ(test,
						lrb_get_subbuf_at(buf,
								  count - SPAN,
								  &sb),
						-ENODATA);
		}
		KUNIT_EXPECT_EQ(test, lrb_get_subbuf_at(buf, st.produced, &sb),
				-EAGAIN);
		KUNIT_EXPECT_EQ(test, lrb_get_subbuf_at(buf, st.consumed - SB, &sb),
				-ENODATA);
		KUNIT_EXPECT_EQ(test, lrb_get_subbuf_at(buf, st.consumed + 1, &sb),
				-EINVAL);
		KUNIT_EXPECT_EQ(test,
				lrb_get_subbuf(buf,
					       consumed | __LRB_OFFSET_GEN_ONE,
					       &sb),
				-EINVAL);

		/* the consuming reader gets the same packets */
		m->next = 0;
		drain_init(test, &d, chan, buf, m, first);
		KUNIT_EXPECT_EQ(test, lrbk_drain_all(&d), (unsigned long)NSB);
		KUNIT_EXPECT_EQ(test, d.gaps, 0ULL);
		KUNIT_EXPECT_EQ(test, m->next, m->n);
		d.gaps = (first - start) / SB;
		check_drained(test, buf, &d, m, start);
		lrb_reader_close(buf);
		lrbk_chan_destroy(test, chan);
	}
}

/*
 * A record that ends exactly where positions wrap: the write position
 * becomes 0 (generation bits untouched), the record can be taken back and
 * written again, and the next one opens the packet at 0.
 */
static void wrap_exact_end(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	u32 hl = cfg->header == LRB_HEADER_COMPACT ? LRB_COMPACT_HEADER_SIZE :
						     LRB_LARGE_HEADER_SIZE;
	u32 len = SB - LRB_PACKET_HEADER_SIZE - hl;
	struct lrbk_model *m = lrbk_model_new(test, 16, false);
	unsigned long consumed, produced;
	u64 start = SPAN - SB;
	struct lrbk_drain d;
	struct lrb_chan *chan;
	struct lrb_ctx ctx;
	struct lrb_buf *buf;

	buf = start_chan(test, cfg, &chan, start);
	drain_init(test, &d, chan, buf, m, start);
	lrbk_set_clock(1000);
	KUNIT_ASSERT_EQ(test, lrbk_reserve_rec(m, cfg, chan, &ctx, 1, 100), 0);
	KUNIT_EXPECT_EQ(test, lrb_try_discard(cfg, &ctx), 0);
	KUNIT_ASSERT_EQ(test, lrbk_reserve_rec(m, cfg, chan, &ctx, 1, len), 0);
	KUNIT_EXPECT_EQ(test, ctx.end, (unsigned long)SPAN);
	lrb_positions(buf, &consumed, &produced);
	KUNIT_EXPECT_EQ(test, produced, 0UL);
	KUNIT_EXPECT_EQ(test, lrb_try_discard(cfg, &ctx), 0);
	lrb_positions(buf, &consumed, &produced);
	KUNIT_EXPECT_EQ(test, produced,
			wrapped(start + LRB_PACKET_HEADER_SIZE));
	KUNIT_ASSERT_EQ(test, lrbk_reserve_rec(m, cfg, chan, &ctx, 1, len), 0);
	KUNIT_EXPECT_EQ(test, ctx.end, (unsigned long)SPAN);
	lrb_commit(cfg, &ctx);
	lrbk_model_add(m, 1, len, m->seq - 1, ctx.tsc);
	lrbk_tick(1);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 1, 100), 0);
	lrb_buf_flush(buf);
	KUNIT_EXPECT_EQ(test, lrbk_drain_all(&d), 2UL);
	KUNIT_EXPECT_EQ(test, d.records, 2UL);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	KUNIT_EXPECT_EQ(test, d.next_seq, SPAN / SB + 1);
	check_drained(test, buf, &d, m, start);
	lrb_reader_close(buf);
}

/*
 * The public position helpers of lrb.h, on each side of the wrap: what a
 * client's snapshot loop and fill level rely on.
 */
static void wrap_pos_helpers(struct kunit *test)
{
	const unsigned long top = wrapped(SPAN - 1), half = wrapped(SPAN / 2);

	KUNIT_EXPECT_EQ(test, LRB_POS_BITS, (int)(sizeof(long) * 8 - 2));
	KUNIT_EXPECT_EQ(test, lrb_pos_advance(top, 1), 0UL);
	KUNIT_EXPECT_EQ(test, lrb_pos_advance(top - SB + 1, SB + 5), 5UL);
	KUNIT_EXPECT_EQ(test, lrb_pos_advance(3, -3UL), 0UL);
	KUNIT_EXPECT_EQ(test, lrb_pos_advance(2, -3UL), top);
	KUNIT_EXPECT_EQ(test, lrb_pos_distance(top, 0), 1UL);
	KUNIT_EXPECT_EQ(test, lrb_pos_distance(top - RING + 1, RING), 2 * RING);
	KUNIT_EXPECT_EQ(test, lrb_pos_distance(SB, SB), 0UL);
	KUNIT_EXPECT_EQ(test, lrb_pos_distance(0, top), top);
	KUNIT_EXPECT_TRUE(test, lrb_pos_before(top, 0));
	KUNIT_EXPECT_FALSE(test, lrb_pos_before(0, top));
	KUNIT_EXPECT_TRUE(test, lrb_pos_before(top - SB, lrb_pos_advance(top, SB)));
	KUNIT_EXPECT_FALSE(test, lrb_pos_before(SB, SB));
	KUNIT_EXPECT_TRUE(test, lrb_pos_before(0, half - 1));
	KUNIT_EXPECT_FALSE(test, lrb_pos_before(0, half + 1));
	KUNIT_EXPECT_TRUE(test, lrb_pos_before(half, top));
	KUNIT_EXPECT_TRUE(test, lrb_pos_before(top - half + 2, 0));
	KUNIT_EXPECT_FALSE(test, lrb_pos_before(top - half, 0));
}

static const struct lrb_config overwrite_cfgs[] = {
	LRBK_CONFIG(OVERWRITE, PER_CPU, COMPACT),
	LRBK_CONFIG(OVERWRITE, GLOBAL, LARGE),
};

KUNIT_ARRAY_PARAM(wrap_variants, lrbk_variants, lrbk_variant_desc);
KUNIT_ARRAY_PARAM(wrap_overwrite, overwrite_cfgs, lrbk_cfg_desc);

static struct kunit_case lrb_wrap_cases[] = {
	KUNIT_CASE_PARAM(wrap_consume, wrap_variants_gen_params),
	KUNIT_CASE_PARAM(wrap_lossy, wrap_variants_gen_params),
	KUNIT_CASE_PARAM(wrap_snapshot, wrap_overwrite_gen_params),
	KUNIT_CASE_PARAM(wrap_exact_end, wrap_variants_gen_params),
	KUNIT_CASE(wrap_pos_helpers),
	{}
};

static struct kunit_suite lrb_wrap_suite = {
	.name = "lrb_wrap",
	.test_cases = lrb_wrap_cases,
};

kunit_test_suite(lrb_wrap_suite);
