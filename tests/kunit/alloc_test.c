// SPDX-License-Identifier: GPL-2.0
/*
 * lrb KUnit: allocation failure at every allocation point of channel
 * creation, through the port layer's test hook
 * (__lrb_port_fail_alloc_after()): each failing creation returns -ENOMEM
 * and frees everything it had allocated (__lrb_port_live_allocs()), and the
 * channel created once every allocation succeeds works. Also the largest
 * geometries.
 */
#include <linux/cpumask.h>

#include "lrb_kunit.h"

static const struct lrb_config alloc_cfgs[] = {
	LRBK_CONFIG(DISCARD, PER_CPU, COMPACT),
	LRBK_CONFIG(DISCARD, GLOBAL, LARGE),
	LRBK_CONFIG(OVERWRITE, PER_CPU, LARGE),
	LRBK_CONFIG(OVERWRITE, GLOBAL, COMPACT),
};

KUNIT_ARRAY_PARAM(alloc_cfgs, alloc_cfgs, lrbk_cfg_desc);

static const struct lrb_config cfg_dgc = LRBK_CONFIG(DISCARD, GLOBAL, COMPACT);

#define ALLOC_SUBBUF (2 * PAGE_SIZE)
#define ALLOC_NUM_SUBBUF 4UL

/*
 * Create the channel with the n-th allocation failing, for n = 0, 1, ...
 * until creation succeeds: every failure is -ENOMEM and leaks nothing.
 */
static void alloc_fail_everywhere(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	struct lrb_chan_attr attr = {
		.subbuf_size = ALLOC_SUBBUF,
		.num_subbuf = ALLOC_NUM_SUBBUF,
		.nr_cpus = nr_cpu_ids,
		.stream_id = 2,
	};
	unsigned int nr_bufs = cfg->alloc == LRB_ALLOC_GLOBAL ? 1 : nr_cpu_ids;
	unsigned long nr_pages = (ALLOC_NUM_SUBBUF +
				  (cfg->mode == LRB_MODE_OVERWRITE)) *
				 (ALLOC_SUBBUF / PAGE_SIZE);
	long base = __lrb_port_live_allocs(), before, n, first_leak = -1;
	unsigned long enomem = 0, leaks = 0, other = 0, read = 0, i;
	struct lrbk_model *m = lrbk_model_new(test, 32, false);
	struct lrb_chan *chan = NULL;
	struct lrbk_drain d;
	int ret = -1;

	for (n = 0; n < 1000000; n++) {
		before = __lrb_port_live_allocs();
		chan = NULL;
		__lrb_port_fail_alloc_after(n);
		ret = lrb_channel_create(cfg, &attr, &chan);
		__lrb_port_fail_alloc_after(-1);
		if (!ret)
			break;
		if (ret == -ENOMEM)
			enomem++;
		else
			other++;
		if (__lrb_port_live_allocs() != before) {
			if (first_leak < 0)
				first_leak = n;
			leaks++;
		}
	}
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, other, 0UL);
	KUNIT_EXPECT_EQ_MSG(test, leaks, 0UL,
			    "first leak when allocation %ld failed", first_leak);
	KUNIT_EXPECT_EQ(test, enomem, (unsigned long)n);
	/* the channel, its buffer table, and per buffer 5 or 7 blocks + pages */
	KUNIT_EXPECT_EQ(test, (unsigned long)n,
			2 + nr_bufs * (nr_pages + 5 +
				       2 * (cfg->mode == LRB_MODE_OVERWRITE)));
	KUNIT_EXPECT_EQ(test, __lrb_port_live_allocs() - base, n);
	kunit_info(test, "%u buffers: %ld allocation points, all failed cleanly",
		   nr_bufs, n);

	/* the channel that finally got created works */
	lrbk_set_clock(77);
	for (i = 0; i < 20; i++)
		KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 1, 100), 0);
	lrb_channel_flush(chan);
	for (i = 0; i < nr_bufs; i++) {
		struct lrb_buf *buf = lrb_channel_nth_buf(chan, i);

		KUNIT_EXPECT_EQ(test, lrb_reader_open(buf), 0);
		lrbk_drain_init(&d, test, chan, buf, m);
		lrbk_drain_all(&d);
		read += d.records;
		lrb_reader_close(buf);
	}
	KUNIT_EXPECT_EQ(test, read, 20UL);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	lrb_channel_destroy(chan);
	KUNIT_EXPECT_EQ(test, __lrb_port_live_allocs(), base);

	/* failing later than the last allocation changes nothing */
	__lrb_port_fail_alloc_after(n + 1);
	ret = lrb_channel_create(cfg, &attr, &chan);
	__lrb_port_fail_alloc_after(-1);
	KUNIT_EXPECT_EQ(test, ret, 0);
	if (!ret)
		lrb_channel_destroy(chan);
	KUNIT_EXPECT_EQ(test, __lrb_port_live_allocs(), base);
}

/*
 * A buffer holds at most 2^(BITS_PER_LONG - 8) bytes (16 MiB on 32-bit
 * machines; positions need spare bits for laps), a sub-buffer at most
 * 1 GiB, a ring at most 32768 sub-buffers.
 */
#define MAX_BUF_ORDER (sizeof(long) * 8 - 8)

/*
 * The largest sub-buffer a two-sub-buffer ring may have is valid: with the
 * first allocation made to fail, creating it gets past validation to
 * -ENOMEM (nothing is allocated); twice that is refused. The largest ring
 * of one-page sub-buffers works; twice as many are refused.
 */
static void max_geometry(struct kunit *test)
{
	struct lrb_chan_attr attr = { .num_subbuf = 2, .nr_cpus = 1 };
	unsigned long max_sb = 1UL << (MAX_BUF_ORDER - 1);
	unsigned long max_num = 1UL << (MAX_BUF_ORDER - LRB_PAGE_SHIFT);
	long before = __lrb_port_live_allocs();
	struct lrb_chan *chan = NULL;
	u64 v = 1;
	int ret;

	if (max_sb > 1UL << 30)
		max_sb = 1UL << 30;
	if (max_num > LRB_MAX_NUM_SUBBUF)
		max_num = LRB_MAX_NUM_SUBBUF;

	attr.subbuf_size = max_sb;
	__lrb_port_fail_alloc_after(0);
	ret = lrb_channel_create(&cfg_dgc, &attr, &chan);
	__lrb_port_fail_alloc_after(-1);
	KUNIT_EXPECT_EQ(test, ret, -ENOMEM);
	KUNIT_EXPECT_EQ(test, __lrb_port_live_allocs(), before);

	attr.subbuf_size = 2 * max_sb;
	__lrb_port_fail_alloc_after(0);
	ret = lrb_channel_create(&cfg_dgc, &attr, &chan);
	__lrb_port_fail_alloc_after(-1);
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);

	/* the largest ring of one-page sub-buffers */
	attr.subbuf_size = PAGE_SIZE;
	attr.num_subbuf = 2 * max_num;
	KUNIT_EXPECT_EQ(test, lrb_channel_create(&cfg_dgc, &attr, &chan),
			-EINVAL);
	attr.num_subbuf = max_num;
	ret = lrb_channel_create(&cfg_dgc, &attr, &chan);
	KUNIT_EXPECT_EQ(test, ret, 0);
	if (!ret) {
		KUNIT_EXPECT_EQ(test, 1UL << chan->num_subbuf_order, max_num);
		KUNIT_EXPECT_EQ(test, __lrb_port_live_allocs() - before,
				3L + 4 + (long)max_num);
		KUNIT_EXPECT_EQ(test, lrb_event_write(&cfg_dgc, chan, 1, &v, 8),
				0);
		lrb_channel_destroy(chan);
	}
	KUNIT_EXPECT_EQ(test, __lrb_port_live_allocs(), before);
}

static int lrb_alloc_init(struct kunit *test)
{
	lrbk_pin();
	return 0;
}

static void lrb_alloc_exit(struct kunit *test)
{
	__lrb_port_fail_alloc_after(-1);
}

static struct kunit_case lrb_alloc_cases[] = {
	KUNIT_CASE_PARAM(alloc_fail_everywhere, alloc_cfgs_gen_params),
	KUNIT_CASE(max_geometry),
	{}
};

static struct kunit_suite lrb_alloc_suite = {
	.name = "lrb_alloc",
	.init = lrb_alloc_init,
	.exit = lrb_alloc_exit,
	.test_cases = lrb_alloc_cases,
};

kunit_test_suite(lrb_alloc_suite);
