// SPDX-License-Identifier: GPL-2.0
/*
 * lrb KUnit: what happens when records cannot all be kept (in the kernel
 * and, through tests/user/kunit-shim, on liblrb):
 *
 * - discard mode: a full ring drops records and counts them exactly
 *   (written = read + lost), events_discarded follows;
 * - overwrite mode: writers never drop, readers see gaps in packet
 *   sequence numbers equal to lost_packets, and the records of those
 *   packets are counted exactly (written = read + lost_overwrite, which
 *   events_discarded carries); a sub-buffer the reader holds
 *   (consuming, or a snapshot) is never written while writers go round
 *   the ring; a writer wrapping onto a sub-buffer still being committed
 *   drops and counts lost_wrap;
 * - zero-length and oversized records, the largest record, and the
 *   nesting limit of writers in task context.
 */
#include <linux/slab.h>

#include "lrb_kunit.h"

#define SB4K LRBK_SB4K

static const struct lrb_config discard_cfgs[] = {
	LRBK_CONFIG(DISCARD, PER_CPU, COMPACT),
	LRBK_CONFIG(DISCARD, PER_CPU, LARGE),
	LRBK_CONFIG(DISCARD, GLOBAL, COMPACT),
	LRBK_CONFIG(DISCARD, GLOBAL, LARGE),
};

static const struct lrb_config overwrite_cfgs[] = {
	LRBK_CONFIG(OVERWRITE, PER_CPU, COMPACT),
	LRBK_CONFIG(OVERWRITE, PER_CPU, LARGE),
	LRBK_CONFIG(OVERWRITE, GLOBAL, COMPACT),
	LRBK_CONFIG(OVERWRITE, GLOBAL, LARGE),
};

KUNIT_ARRAY_PARAM(discard_cfgs, discard_cfgs, lrbk_cfg_desc);
KUNIT_ARRAY_PARAM(overwrite_cfgs, overwrite_cfgs, lrbk_cfg_desc);

static const struct lrb_config cfg_dgc = LRBK_CONFIG(DISCARD, GLOBAL, COMPACT);
static const struct lrb_config cfg_dcl = LRBK_CONFIG(DISCARD, PER_CPU, LARGE);
static const struct lrb_config cfg_dgl = LRBK_CONFIG(DISCARD, GLOBAL, LARGE);
static const struct lrb_config cfg_occ = LRBK_CONFIG(OVERWRITE, PER_CPU, COMPACT);

/* Bytes a record with a @len-byte payload and a short header takes. */
static unsigned long slot_of(const struct lrb_config *cfg, u32 len)
{
	return __lrb_slot_len(cfg->header == LRB_HEADER_COMPACT ?
			    LRB_COMPACT_HEADER_SIZE : LRB_LARGE_HEADER_SIZE,
			    len);
}

/* Records of @len bytes in one packet of a one-page sub-buffer. */
static unsigned long per_packet(const struct lrb_config *cfg, u32 len)
{
	return (SB4K - LRB_PACKET_HEADER_SIZE) / slot_of(cfg, len);
}

/*
 * Discard mode: with no reader the ring fills, then every record is
 * dropped and counted; nothing is overwritten, and written == read + lost
 * exactly, with a reader that lags too. events_discarded follows the count.
 */
static void discard_full_accounting(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	struct lrbk_model *m = lrbk_model_new(test, 8192, false);
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(cfg, chan);
	unsigned long ok = 0, nobufs = 0, other = 0, i, c, p;
	unsigned long per = per_packet(cfg, LRBK_LEN(100));
	struct lrbk_drain d;
	struct lrb_subbuf sb;
	struct lrb_buf_counters st;
	struct lrb_ctx ctx;
	int ret;

	lrbk_set_clock(1000);
	for (i = 0; i < 2000; i++) {
		ret = lrbk_write(m, cfg, chan, 1, LRBK_LEN(100));
		if (!ret)
			ok++;
		else if (ret == -ENOBUFS)
			nobufs++;
		else
			other++;
	}
	KUNIT_EXPECT_EQ(test, other, 0UL);
	KUNIT_EXPECT_EQ(test, ok, 4 * per);
	KUNIT_EXPECT_EQ(test, nobufs, 2000 - 4 * per);
	lrbk_check_lost(test, buf, nobufs, 0, 0);
	/* a reservation fails the same way, counted, its nesting undone */
	KUNIT_EXPECT_EQ(test, lrb_reserve(cfg, chan, &ctx, 1, LRBK_LEN(100)),
			-ENOBUFS);
	nobufs++;
	m->attempts++;
	m->failed++;
	lrbk_check_lost(test, buf, nobufs, 0, 0);
	lrb_buf_stats(buf, &st);
	KUNIT_EXPECT_EQ(test, st.consumed, 0UL);
	KUNIT_EXPECT_LE(test, st.produced, 4 * SB4K);
	KUNIT_EXPECT_GE(test, st.produced, 4 * SB4K - slot_of(cfg, LRBK_LEN(100)));

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_GE(test, d.packets, 3UL);
	lrb_buf_flush(buf);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.packets, 4UL);
	KUNIT_EXPECT_EQ(test, d.records, ok);
	KUNIT_EXPECT_EQ(test, d.gaps, 0ULL);
	KUNIT_EXPECT_EQ(test, m->next, m->n);

	/* a packet closed after the losses reports all of them */
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 1, 8), 0);
	lrb_buf_flush(buf);
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, sb.seq, 4ULL);
	lrbk_check_packet(&d, &sb);
	KUNIT_EXPECT_EQ(test, d.last_discarded, (u64)lrb_buf_lost(buf));
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);

	/* a lagging reader: one packet every 150 attempts */
	other = 0;
	for (i = 0; i < 6000; i++) {
		if (i % 150 == 149)
			lrbk_drain_one(&d);
		lrbk_tick(i % 5);
		ret = lrbk_write(m, cfg, chan, 1 + i % 12, LRBK_LEN(8 + i % 150));
		if (ret && ret != -ENOBUFS)
			other++;
	}
	KUNIT_EXPECT_EQ(test, other, 0UL);
	lrb_buf_flush(buf);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	KUNIT_EXPECT_EQ(test, d.gaps, 0ULL);
	KUNIT_EXPECT_EQ(test, m->attempts, d.records + lrb_buf_lost(buf));
	KUNIT_EXPECT_EQ(test, m->failed, lrb_buf_lost(buf));
	lrb_buf_stats(buf, &st);
	KUNIT_EXPECT_EQ(test, st.lost_full, lrb_buf_lost(buf));
	KUNIT_EXPECT_GT(test, st.lost_full, nobufs);
	KUNIT_EXPECT_EQ(test, st.lost_packets, 0UL);
	KUNIT_EXPECT_LE(test, d.last_discarded, (u64)st.lost_full);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, p);
	KUNIT_EXPECT_EQ(test, st.consumed, c);
	KUNIT_EXPECT_EQ(test, st.produced, p);
	lrb_reader_close(buf);
}

/*
 * Overwrite mode, at the end: flush and read the rest (reader open). The
 * gaps in the packet sequence are the packets counted lost, the newest
 * record was read and none was dropped; every record written was read or
 * counted in lost_overwrite, which the last packet carries as
 * events_discarded. Returns the packets lost.
 */
static unsigned long check_overwrite_end(struct lrbk_drain *d)
{
	struct kunit *test = d->test;
	struct lrb_buf_counters st;
	unsigned long c, p;

	lrb_buf_flush(d->buf);
	lrbk_drain_all(d);
	lrb_buf_stats(d->buf, &st);
	KUNIT_EXPECT_EQ(test, d->gaps, (u64)st.lost_packets);
	KUNIT_EXPECT_EQ(test, d->next_seq, d->packets + st.lost_packets);
	KUNIT_EXPECT_EQ(test, d->model->next, d->model->n);
	KUNIT_EXPECT_EQ(test, (u64)st.records_written,
			(u64)d->records + st.lost_overwrite);
	KUNIT_EXPECT_EQ(test, lrb_buf_lost(d->buf), st.lost_overwrite);
	KUNIT_EXPECT_EQ(test, d->last_discarded, (u64)st.lost_overwrite);
	KUNIT_EXPECT_EQ(test, !st.lost_overwrite, !st.lost_packets);
	lrb_positions(d->buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, p);
	return st.lost_packets;
}

/*
 * Overwrite mode: writers never drop records; readers see the newest
 * packets, and the gaps in their sequence numbers equal lost_packets,
 * with no reader attached and with one that lags.
 */
static void overwrite_gaps(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	struct lrbk_model *m = lrbk_model_new(test, 8192, true);
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(cfg, chan);
	unsigned long per = per_packet(cfg, LRBK_LEN(100)), bad = 0;
	struct lrbk_drain d;
	struct lrb_buf_counters st;
	int i;

	lrbk_set_clock(1);
	for (i = 0; i < 2000; i++) {
		lrbk_tick(3);
		if (lrbk_write(m, cfg, chan, 1, LRBK_LEN(100)))
			bad++;
	}
	KUNIT_EXPECT_EQ(test, bad, 0UL);
	lrb_buf_stats(buf, &st);
	KUNIT_EXPECT_EQ(test, st.records_written, 2000UL);
	KUNIT_EXPECT_EQ(test, lrb_buf_lost(buf), st.lost_overwrite);
	KUNIT_EXPECT_GT(test, st.lost_packets, 40UL);
	/* every packet overwritten was full; the two left hold the rest */
	KUNIT_EXPECT_EQ(test, st.lost_overwrite, st.lost_packets * per);
	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_GE(test, d.packets, 2UL);
	check_overwrite_end(&d);
	KUNIT_EXPECT_EQ(test, d.next_seq, (u64)((2000 + per - 1) / per));

	/* and again, now that a reader is attached but lags */
	for (i = 0; i < 3000; i++) {
		lrbk_tick(1);
		if (lrbk_write(m, cfg, chan, 2, LRBK_LEN(8 + i % 200)))
			bad++;
		if (i % 500 == 0)
			lrbk_drain_one(&d);
	}
	KUNIT_EXPECT_EQ(test, bad, 0UL);
	KUNIT_EXPECT_GT(test, check_overwrite_end(&d), 40UL);
	lrb_reader_close(buf);
}

/*
 * Overwrite mode: the sub-buffer a consuming reader holds is never
 * written while writers wrap the ring about twenty times.
 */
static void overwrite_hold(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	struct lrbk_model *m = lrbk_model_new(test, 4096, true);
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(cfg, chan);
	unsigned long per = per_packet(cfg, LRBK_LEN(100)), bad = 0;
	struct lrbk_drain d;
	struct lrb_subbuf sb;
	u8 *held, *again;
	int i;

	held = kunit_kzalloc(test, SB4K, GFP_KERNEL);
	again = kunit_kzalloc(test, SB4K, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, held && again);
	lrbk_set_clock(50);
	for (i = 0; i < 200; i++)
		if (lrbk_write(m, cfg, chan, 3, LRBK_LEN(100)))
			bad++;
	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_TRUE(test, sb.consuming);
	lrb_subbuf_copy(chan, &sb, 0, held, SB4K);

	for (i = 0; i < 3000; i++) {
		lrbk_tick(1);
		if (lrbk_write(m, cfg, chan, 4, LRBK_LEN(100)))
			bad++;
	}
	KUNIT_EXPECT_EQ(test, bad, 0UL);
	memset(again, 0, SB4K);
	lrb_subbuf_copy(chan, &sb, 0, again, SB4K);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(held, again, SB4K), 0,
			    "the held sub-buffer changed under the reader");
	lrbk_check_packet(&d, &sb);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);

	KUNIT_EXPECT_GT(test, check_overwrite_end(&d), 60UL);
	KUNIT_EXPECT_EQ(test, d.next_seq, (u64)((3200 + per - 1) / per));
	lrb_reader_close(buf);
}

/*
 * Overwrite mode: a snapshot (lrb_get_subbuf()) is not written either
 * while held, and does not consume; writers push the read position past
 * what they overwrite, and the consuming reader goes on from there.
 */
static void overwrite_snapshot(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	struct lrbk_model *m = lrbk_model_new(test, 4096, true);
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(cfg, chan);
	unsigned long per = per_packet(cfg, LRBK_LEN(100)), bad = 0, c, p;
	struct lrb_subbuf sb, sb2;
	struct lrbk_drain d;
	struct lrb_buf_counters st;
	unsigned long snap;
	u8 *held, *again;
	int i;

	held = kunit_kzalloc(test, SB4K, GFP_KERNEL);
	again = kunit_kzalloc(test, SB4K, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, held && again);
	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	lrbk_set_clock(10);
	for (i = 0; i < 95; i++)
		if (lrbk_write(m, cfg, chan, 1, LRBK_LEN(100)))
			bad++;
	KUNIT_EXPECT_EQ(test, lrb_get_subbuf(buf, SB4K + 4, &sb), -EINVAL);
	KUNIT_EXPECT_EQ(test, lrb_get_subbuf(buf, 3 * SB4K, &sb), -EAGAIN);
	KUNIT_ASSERT_EQ(test, lrb_get_subbuf(buf, SB4K, &sb), 0);
	KUNIT_EXPECT_EQ(test, lrb_get_subbuf(buf, 0, &sb2), -EBUSY);
	KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb2), -EBUSY);
	KUNIT_EXPECT_EQ(test, sb.pos, SB4K);
	KUNIT_EXPECT_EQ(test, sb.seq, 1ULL);
	KUNIT_EXPECT_FALSE(test, sb.consuming);
	lrb_subbuf_copy(chan, &sb, 0, held, SB4K);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, 0UL);
	for (i = 0; i < 2000; i++) {
		lrbk_tick(1);
		if (lrbk_write(m, cfg, chan, 2, LRBK_LEN(100)))
			bad++;
	}
	KUNIT_EXPECT_EQ(test, bad, 0UL);
	lrb_subbuf_copy(chan, &sb, 0, again, SB4K);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(held, again, SB4K), 0,
			    "the snapshot changed under the reader");
	/* its records are overwritten later: not read by the consumer */
	snap = d.records;
	lrbk_check_packet(&d, &sb);
	snap = d.records - snap;
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_GT(test, c, 4 * SB4K);
	KUNIT_EXPECT_EQ(test, lrb_get_subbuf(buf, SB4K, &sb), -ENODATA);
	KUNIT_EXPECT_EQ(test, lrb_get_subbuf(buf, 0, &sb), -ENODATA);

	/* a snapshot of the newest complete packet, put back in place */
	p &= ~(SB4K - 1);
	KUNIT_ASSERT_EQ(test, lrb_get_subbuf(buf, p - SB4K, &sb), 0);
	lrb_subbuf_copy(chan, &sb, 0, held, SB4K);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	KUNIT_ASSERT_EQ(test, lrb_get_subbuf(buf, p - SB4K, &sb), 0);
	lrb_subbuf_copy(chan, &sb, 0, again, SB4K);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, memcmp(held, again, SB4K), 0);

	/* the consuming reader goes on from the oldest packet left */
	d.next_seq = 0;
	d.gaps = 0;
	m->next = 0;
	lrb_buf_flush(buf);
	lrbk_drain_all(&d);
	lrb_buf_stats(buf, &st);
	KUNIT_EXPECT_GE(test, d.packets, 4UL);
	KUNIT_EXPECT_EQ(test, d.next_seq, (u64)((2095 + per - 1) / per));
	KUNIT_EXPECT_EQ(test, d.gaps, (u64)st.lost_packets);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	KUNIT_EXPECT_EQ(test, st.records_written, 2095UL);
	KUNIT_EXPECT_EQ(test, st.records_written, d.records - snap + st.lost_overwrite);
	KUNIT_EXPECT_EQ(test, lrb_buf_lost(buf), st.lost_overwrite);
	KUNIT_EXPECT_EQ(test, d.last_discarded, (u64)st.lost_overwrite);
	lrb_reader_close(buf);
}

/*
 * Overwrite mode: writers wrapping onto a sub-buffer still being committed
 * (an open reservation) drop their records with -EAGAIN and count
 * lost_wrap; nothing of the open sub-buffer is lost.
 */
static void lost_wrap(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	struct lrbk_model *m = lrbk_model_new(test, 256, false);
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, SB4K, 2);
	struct lrb_buf *buf = lrbk_my_buf(cfg, chan);
	unsigned long ok = 0, again = 0, other = 0, fit0, per;
	struct lrbk_drain d;
	struct lrb_buf_counters st;
	struct lrb_ctx a;
	int i, ret;

	per = per_packet(cfg, LRBK_LEN(100));
	fit0 = (SB4K - LRB_PACKET_HEADER_SIZE - slot_of(cfg, 8)) /
	       slot_of(cfg, LRBK_LEN(100));
	lrbk_set_clock(1000);
	KUNIT_ASSERT_EQ(test, lrbk_reserve_rec(m, cfg, chan, &a, 1, 8), 0);
	lrbk_model_add(m, 1, 8, m->seq - 1, lrbk_clock());
	for (i = 0; i < 200; i++) {
		ret = lrbk_write(m, cfg, chan, 2, LRBK_LEN(100));
		if (!ret)
			ok++;
		else if (ret == -EAGAIN)
			again++;
		else
			other++;
	}
	lrb_commit(cfg, &a);
	KUNIT_EXPECT_EQ(test, other, 0UL);
	KUNIT_EXPECT_EQ(test, ok, fit0 + per);
	KUNIT_EXPECT_EQ(test, again, 200 - fit0 - per);
	lrb_buf_stats(buf, &st);
	KUNIT_EXPECT_EQ(test, st.lost_wrap, again);
	KUNIT_EXPECT_EQ(test, st.lost_full, 0UL);
	KUNIT_EXPECT_EQ(test, st.lost_packets, 0UL);
	KUNIT_EXPECT_EQ(test, lrb_buf_lost(buf), again);

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	lrbk_drain_all(&d);
	lrb_buf_flush(buf);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.packets, 2UL);
	KUNIT_EXPECT_EQ(test, d.records, 1 + ok);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	lrb_buf_stats(buf, &st);
	KUNIT_EXPECT_EQ(test, st.lost_packets, 0UL);
	KUNIT_EXPECT_EQ(test, d.last_discarded, (u64)again);
	lrb_reader_close(buf);
}

/* Counters never go backwards and add up across mixed failures. */
static void mixed_accounting(struct kunit *test)
{
	struct lrbk_model *m = lrbk_model_new(test, 4096, false);
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dgl, SB4K, 2);
	struct lrb_buf *buf = lrb_channel_nth_buf(chan, 0);
	unsigned long big = 0, full = 0, other = 0, inval = 0;
	struct lrbk_drain d;
	struct lrb_buf_counters st;
	int i, ret;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	for (i = 0; i < 3000; i++) {
		u32 len = LRBK_LEN(4 + (i * 131) % 1500);

		if (i % 97 == 0)
			len = SB4K;
		lrbk_tick(i % 7);
		ret = lrbk_write(m, &cfg_dgl, chan, 1 + i % 12, len);
		if (ret == -EMSGSIZE)
			big++;
		else if (ret == -ENOBUFS)
			full++;
		else if (ret)
			other++;
		if (lrbk_write(m, &cfg_dgl, chan, 1, 0) != -EINVAL)
			inval++;
		if (i % 10 == 9)
			lrbk_drain_one(&d);
	}
	lrb_buf_flush(buf);
	lrbk_drain_all(&d);
	lrb_buf_stats(buf, &st);
	KUNIT_EXPECT_EQ(test, other, 0UL);
	KUNIT_EXPECT_EQ(test, inval, 0UL);
	KUNIT_EXPECT_EQ(test, st.lost_big, big);
	KUNIT_EXPECT_EQ(test, st.lost_full, full);
	KUNIT_EXPECT_GT(test, full, 0UL);
	KUNIT_EXPECT_EQ(test, big, (3000UL + 96) / 97);
	KUNIT_EXPECT_EQ(test, lrb_buf_lost(buf), big + full);
	KUNIT_EXPECT_EQ(test, m->attempts, 3000UL);
	KUNIT_EXPECT_EQ(test, m->attempts, d.records + lrb_buf_lost(buf));
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	KUNIT_EXPECT_EQ(test, d.gaps, 0ULL);
	lrb_reader_close(buf);
}

/*
 * Reserve @n nested records (n <= LRB_MAX_NESTING) and commit them
 * last-in first-out; returns the reservations that succeeded.
 */
static unsigned int nest_ok(struct lrbk_model *m, const struct lrb_config *cfg,
			    struct lrb_chan *chan, unsigned int n)
{
	struct lrb_ctx ctx[LRB_MAX_NESTING];
	unsigned int i, got = 0;

	for (i = 0; i < n && i < LRB_MAX_NESTING; i++) {
		if (lrbk_reserve_rec(m, cfg, chan, &ctx[i], 2, 8))
			break;
		lrbk_model_add(m, 2, 8, m->seq - 1, lrbk_clock());
		got++;
	}
	for (i = got; i > 0; i--)
		lrb_commit(cfg, &ctx[i - 1]);
	return got;
}

/* Zero-length records: -EINVAL, not counted, nothing reserved. */
static void zero_length(struct kunit *test)
{
	struct lrbk_model *m = lrbk_model_new(test, 16, false);
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dcl, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(&cfg_dcl, chan);
	struct lrb_buf_counters st0, st;
	struct lrbk_drain d;
	struct lrb_ctx ctx;
	int i;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrb_buf_stats(buf, &st0);
	for (i = 0; i < 10; i++) {
		KUNIT_EXPECT_EQ(test, lrb_reserve(&cfg_dcl, chan, &ctx, 1, 0),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, lrb_event_write(&cfg_dcl, chan, 1,
						      m->payload, 0), -EINVAL);
	}
	lrb_buf_stats(buf, &st);
	KUNIT_EXPECT_EQ(test, st.produced, st0.produced);
	lrbk_check_lost(test, buf, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, nest_ok(m, &cfg_dcl, chan, 4), 4U);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dcl, chan, 1, 8), 0);
	lrb_buf_stats(buf, &st0);
	KUNIT_EXPECT_EQ(test, lrb_event_write(&cfg_dcl, chan, 1, m->payload, 0),
			-EINVAL);
	lrb_buf_stats(buf, &st);
	KUNIT_EXPECT_EQ(test, st.produced, st0.produced);
	lrbk_check_lost(test, buf, 0, 0, 0);
	lrb_channel_flush(chan);
	lrbk_drain_init(&d, test, chan, buf, m);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.records, 5UL);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	lrb_reader_close(buf);
}

struct big_case {
	const struct lrb_config *cfg;
	unsigned long subbuf_size;
};

static const struct big_case big_cases[] = {
	{ &cfg_dgc, SB4K },
	{ &cfg_dcl, SB4K },
	{ &cfg_dgc, 4 * SB4K },
	{ &cfg_occ, 2 * SB4K },
};

static void big_case_desc(const struct big_case *c, char *desc)
{
	char cfg[KUNIT_PARAM_DESC_SIZE];

	lrbk_cfg_desc(c->cfg, cfg);
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s-%lu", cfg, c->subbuf_size);
}

KUNIT_ARRAY_PARAM(big_cases, big_cases, big_case_desc);

/*
 * Records larger than a sub-buffer minus its packet header: -EMSGSIZE,
 * counted in lost_big. The largest record fills a packet exactly; the
 * extended header leaves 12 bytes less.
 */
static void oversize(struct kunit *test)
{
	const struct big_case *bc = test->param_value;
	const struct lrb_config *cfg = bc->cfg;
	unsigned long sbsize = bc->subbuf_size;
	struct lrbk_model *m = lrbk_model_new(test, 32, false);
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, sbsize, 4);
	struct lrb_buf *buf = lrbk_my_buf(cfg, chan);
	u32 room = sbsize - LRB_PACKET_HEADER_SIZE;
	u32 hl = cfg->header == LRB_HEADER_COMPACT ? 4 : 8;
	u32 ext_id = cfg->header == LRB_HEADER_COMPACT ? 40 : 0xFFFFFFFFU;
	unsigned long big = 0;
	struct lrbk_drain d;
	struct lrb_subbuf sb;
	struct lrb_ctx ctx;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	lrbk_set_clock(100);

#define BIG(id, len)							\
	do {								\
		KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, id, len),\
				-EMSGSIZE);				\
		big++;							\
	} while (0)
#define FITS(id, len, nrec)						\
	do {								\
		unsigned long __r = d.records;				\
		KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, id, len), 0);\
		lrbk_drain_all(&d);					\
		KUNIT_EXPECT_EQ(test, d.records - __r, nrec);		\
	} while (0)

	BIG(1, room - hl + 1);
	BIG(1, room - hl + 4);
	BIG(1, room);
	BIG(1, sbsize);
	BIG(1, sbsize * 2);
	BIG(1, 0x7FFFFFFF);
	BIG(1, 0xFFFFFFFF);
	KUNIT_EXPECT_EQ(test, lrb_reserve(cfg, chan, &ctx, 1, 0xFFFFFFF0U),
			-EMSGSIZE);
	big++;
	lrbk_check_lost(test, buf, 0, big, 0);
	/* the largest record fills the packet exactly: delivered at once */
	FITS(1, room - hl, 1UL);
	/* after a small record, it goes to the next packet */
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 1, 8), 0);
	FITS(1, room - hl, 2UL);
	KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb), -EAGAIN);
	lrb_buf_flush(buf);
	KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb), -EAGAIN);
	/* the extended header leaves 12 bytes fewer */
	BIG(ext_id, room - 16 + 1);
	FITS(ext_id, room - 16, 1UL);
	KUNIT_EXPECT_EQ(test, nest_ok(m, cfg, chan, 4), 4U);
	lrbk_check_lost(test, buf, 0, big, 0);
	lrb_channel_flush(chan);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	KUNIT_EXPECT_EQ(test, d.records, 4UL + 4);
	KUNIT_EXPECT_EQ(test, d.last_discarded, (u64)big);
#undef BIG
#undef FITS
	lrb_reader_close(buf);
}

/*
 * The writer nesting limit, in task context (reservations held open): a
 * fifth reservation fails with -EBUSY and counts lost_nest, whatever the
 * commit order; the depth is per CPU, for all channels together; a
 * discarded reservation frees its level, a refused discard does not.
 */
static void nesting_limit(struct kunit *test)
{
	struct lrbk_model *m = lrbk_model_new(test, 64, false);
	struct lrbk_model *m2 = lrbk_model_new(test, 16, false);
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dgc, SB4K, 4);
	struct lrb_chan *chan2 = lrbk_chan_new(test, &cfg_dcl, SB4K, 4);
	struct lrb_buf *buf = lrb_channel_nth_buf(chan, 0);
	struct lrb_buf *buf2 = lrbk_my_buf(&cfg_dcl, chan2);
	struct lrb_ctx ctx[LRB_MAX_NESTING + 1];
	int r[9], i, n;
	unsigned long nest = 0;
	struct lrbk_drain d;

	lrbk_set_clock(100);

	/* 4 open reservations, the 5th fails; commit last-in first-out */
	for (i = 0; i < LRB_MAX_NESTING; i++)
		r[i] = lrbk_reserve_rec(m, &cfg_dgc, chan, &ctx[i], 3, 8 + i);
	r[4] = lrbk_reserve_rec(m, &cfg_dgc, chan, &ctx[4], 3, 8);
	r[5] = lrb_event_write(&cfg_dgc, chan, 3, m->payload, 8);
	for (i = LRB_MAX_NESTING - 1; i >= 0; i--)
		if (!r[i])
			lrb_commit(&cfg_dgc, &ctx[i]);
	for (i = 0; i < LRB_MAX_NESTING; i++) {
		KUNIT_EXPECT_EQ(test, r[i], 0);
		lrbk_model_add(m, 3, 8 + i, i, 100);
	}
	KUNIT_EXPECT_EQ(test, r[4], -EBUSY);
	KUNIT_EXPECT_EQ(test, r[5], -EBUSY);
	nest += 2;
	lrbk_check_lost(test, buf, 0, 0, nest);

	/* again, committing first-in first-out */
	n = m->seq;
	for (i = 0; i < LRB_MAX_NESTING; i++)
		r[i] = lrbk_reserve_rec(m, &cfg_dgc, chan, &ctx[i], 4, 12);
	r[4] = lrbk_reserve_rec(m, &cfg_dgc, chan, &ctx[4], 4, 12);
	/* the depth is per CPU: another channel is refused too */
	r[5] = lrb_event_write(&cfg_dcl, chan2, 4, m->payload, 8);
	for (i = 0; i < LRB_MAX_NESTING; i++)
		if (!r[i])
			lrb_commit(&cfg_dgc, &ctx[i]);
	for (i = 0; i < LRB_MAX_NESTING; i++) {
		KUNIT_EXPECT_EQ(test, r[i], 0);
		lrbk_model_add(m, 4, 12, n + i, 100);
	}
	KUNIT_EXPECT_EQ(test, r[4], -EBUSY);
	KUNIT_EXPECT_EQ(test, r[5], -EBUSY);
	nest++;
	lrbk_check_lost(test, buf, 0, 0, nest);
	lrbk_check_lost(test, buf2, 0, 0, 1);

	/* a discarded reservation frees its level, a refused discard not */
	n = m->seq;
	for (i = 0; i < LRB_MAX_NESTING; i++)
		r[i] = lrbk_reserve_rec(m, &cfg_dgc, chan, &ctx[i], 5, 8);
	r[4] = lrb_try_discard(&cfg_dgc, &ctx[3]);
	r[5] = lrbk_reserve_rec(m, &cfg_dgc, chan, &ctx[3], 5, 8);
	r[6] = lrbk_reserve_rec(m, &cfg_dgc, chan, &ctx[4], 5, 8);
	r[7] = lrb_try_discard(&cfg_dgc, &ctx[0]);
	r[8] = lrbk_reserve_rec(m, &cfg_dgc, chan, &ctx[4], 5, 8);
	for (i = 0; i < LRB_MAX_NESTING; i++)
		lrb_commit(&cfg_dgc, &ctx[i]);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, r[i], 0);
	KUNIT_EXPECT_EQ(test, r[4], 0);
	KUNIT_EXPECT_EQ(test, r[5], 0);
	KUNIT_EXPECT_EQ(test, r[6], -EBUSY);
	KUNIT_EXPECT_EQ(test, r[7], -EBUSY);
	KUNIT_EXPECT_EQ(test, r[8], -EBUSY);
	for (i = 0; i < 3; i++)
		lrbk_model_add(m, 5, 8, n + i, 100);
	lrbk_model_add(m, 5, 8, n + 4, 100);
	nest += 2;
	lrbk_check_lost(test, buf, 0, 0, nest);

	/* and all levels are free again */
	KUNIT_EXPECT_EQ(test, nest_ok(m, &cfg_dgc, chan, 4), 4U);
	KUNIT_EXPECT_EQ(test, nest_ok(m2, &cfg_dcl, chan2, 4), 4U);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dgc, chan, 6, 8), 0);
	lrbk_check_lost(test, buf, 0, 0, nest);

	lrb_channel_flush(chan);
	lrb_channel_flush(chan2);
	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf2), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.records, 4UL * 3 + 4 + 1);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	KUNIT_EXPECT_EQ(test, d.last_discarded, (u64)nest);
	lrbk_drain_init(&d, test, chan2, buf2, m2);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.records, 4UL);
	KUNIT_EXPECT_EQ(test, m2->next, m2->n);
	lrb_reader_close(buf);
	lrb_reader_close(buf2);
}

static int lrb_accounting_init(struct kunit *test)
{
	lrbk_pin();
	lrbk_set_clock(1000);
	return 0;
}

static struct kunit_case lrb_accounting_cases[] = {
	KUNIT_CASE_PARAM(discard_full_accounting, discard_cfgs_gen_params),
	KUNIT_CASE_PARAM(overwrite_gaps, overwrite_cfgs_gen_params),
	KUNIT_CASE_PARAM(overwrite_hold, overwrite_cfgs_gen_params),
	KUNIT_CASE_PARAM(overwrite_snapshot, overwrite_cfgs_gen_params),
	KUNIT_CASE_PARAM(lost_wrap, overwrite_cfgs_gen_params),
	KUNIT_CASE(mixed_accounting),
	KUNIT_CASE(zero_length),
	KUNIT_CASE_PARAM(oversize, big_cases_gen_params),
	KUNIT_CASE(nesting_limit),
	{}
};

static struct kunit_suite lrb_accounting_suite = {
	.name = "lrb_accounting",
	.init = lrb_accounting_init,
	.test_cases = lrb_accounting_cases,
};

kunit_test_suite(lrb_accounting_suite);
