// SPDX-License-Identifier: GPL-2.0
/*
 * lrb KUnit: the public API, in the kernel and, through
 * tests/user/kunit-shim, on liblrb: channels in every configuration, the
 * packet and record layouts, extended headers, records across pages,
 * padding, flush (also on the buffer's CPU, and the final one),
 * try-discard, readers (consuming and snapshot, the watermark count,
 * pages taken for splice), positions, statistics, packet callbacks,
 * per-CPU buffers, reader wakeups and the CTF metadata.
 *
 * Each case pins its thread to the CPU it starts on, so a per-CPU channel
 * is written in one known buffer, and uses the test clock, so every
 * timestamp and header form is known.
 */
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/sched.h>
#include <linux/slab.h>
#ifdef __KERNEL__
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/wait.h>
#endif

#include <lrb/event.h>

#include "lrb_kunit.h"

#define SB4K LRBK_SB4K
#define SB16K LRBK_SB16K

static const struct lrb_config cfg_dgc = LRBK_CONFIG(DISCARD, GLOBAL, COMPACT);
static const struct lrb_config cfg_dgl = LRBK_CONFIG(DISCARD, GLOBAL, LARGE);
static const struct lrb_config cfg_dcc = LRBK_CONFIG(DISCARD, PER_CPU, COMPACT);
static const struct lrb_config cfg_ocl = LRBK_CONFIG(OVERWRITE, PER_CPU, LARGE);

static const struct lrb_config create_cfgs[] = {
	LRBK_CONFIG(DISCARD, PER_CPU, COMPACT),
	LRBK_CONFIG(DISCARD, PER_CPU, LARGE),
	LRBK_CONFIG(DISCARD, GLOBAL, COMPACT),
	LRBK_CONFIG(DISCARD, GLOBAL, LARGE),
	LRBK_CONFIG(OVERWRITE, PER_CPU, COMPACT),
	LRBK_CONFIG(OVERWRITE, PER_CPU, LARGE),
	LRBK_CONFIG(OVERWRITE, GLOBAL, COMPACT),
	LRBK_CONFIG(OVERWRITE, GLOBAL, LARGE),
	{
		.mode = LRB_MODE_DISCARD,
		.alloc = LRB_ALLOC_PER_CPU,
		.wakeup = LRB_WAKEUP_BY_TIMER,
		.header = LRB_HEADER_COMPACT,
		.tsc_bits = 27,
		.cb = { .clock_read = lrbk_clock },
	},
};

KUNIT_ARRAY_PARAM(create_cfgs, create_cfgs, lrbk_cfg_desc);

static int marker;

/*
 * Every configuration: a channel has the geometry asked for, its buffers
 * start empty, records written on this CPU are read back from its buffer
 * (or the global one) and nowhere else, and destroying the channel frees
 * every allocation.
 */
static void create_variants(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	bool global = cfg->alloc == LRB_ALLOC_GLOBAL;
	struct lrb_chan_attr attr = {
		.subbuf_size = SB16K,
		.num_subbuf = 4,
		.nr_cpus = nr_cpu_ids,
		.stream_id = 42,
		.priv = &marker,
	};
	long allocs = __lrb_port_live_allocs();
	struct lrb_chan *chan = NULL;
	struct lrb_buf *buf, *wb;
	struct lrbk_model *m;
	struct lrbk_drain d;
	struct lrb_subbuf sb;
	struct lrb_buf_counters st;
	unsigned long c, p;
	unsigned int i;

	m = lrbk_model_new(test, 200, false);
	KUNIT_ASSERT_EQ(test, lrb_channel_create(cfg, &attr, &chan), 0);
	KUNIT_EXPECT_PTR_EQ(test, chan->cfg, cfg);
	KUNIT_EXPECT_EQ(test, chan->nr_bufs, global ? 1 : nr_cpu_ids);
	KUNIT_EXPECT_EQ(test, chan->subbuf_size, SB16K);
	/* SB16K is four pages */
	KUNIT_EXPECT_EQ(test, chan->subbuf_order, LRB_PAGE_SHIFT + 2);
	KUNIT_EXPECT_EQ(test, chan->num_subbuf, 4UL);
	KUNIT_EXPECT_EQ(test, chan->num_subbuf_order, 2);
	KUNIT_EXPECT_EQ(test, chan->pages_per_subbuf, SB16K / PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, chan->stream_id, 42);
	KUNIT_EXPECT_PTR_EQ(test, chan->priv, (void *)&marker);
	KUNIT_EXPECT_GT(test, __lrb_port_live_allocs(), allocs);
	KUNIT_EXPECT_NULL(test, lrb_channel_nth_buf(chan, chan->nr_bufs));
	for (i = 0; i < chan->nr_bufs; i++) {
		buf = lrb_channel_nth_buf(chan, i);
		KUNIT_EXPECT_NOT_NULL(test, buf);
		if (!buf)
			continue;
		KUNIT_EXPECT_PTR_EQ(test, buf->chan, chan);
		KUNIT_EXPECT_EQ(test, buf->cpu, i);
		KUNIT_EXPECT_EQ(test, (uintptr_t)buf % __alignof__(struct lrb_buf),
				0);
		lrb_positions(buf, &c, &p);
		KUNIT_EXPECT_EQ(test, c, 0UL);
		KUNIT_EXPECT_EQ(test, p, 0UL);
		lrb_buf_stats(buf, &st);
		KUNIT_EXPECT_EQ(test, st.produced, 0UL);
		KUNIT_EXPECT_EQ(test, st.consumed, 0UL);
		lrbk_check_lost(test, buf, 0, 0, 0);
		KUNIT_EXPECT_FALSE(test, lrb_buf_readable(buf));
	}

	lrbk_set_clock(5000);
	for (i = 0; i < 150; i++) {
		lrbk_tick(i % 3);
		/* with its 4-byte header, LRBK_SCALE times the room */
		KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 1 + i % 12,
						 LRBK_LEN(12 + (i * 37) % 200) - 4),
				0);
	}
	lrbk_tick(100);
	lrb_channel_flush(chan);
	wb = lrbk_my_buf(cfg, chan);
	for (i = 0; i < chan->nr_bufs; i++) {
		buf = lrb_channel_nth_buf(chan, i);
		KUNIT_EXPECT_EQ(test, lrb_reader_open(buf), 0);
		if (buf == wb) {
			KUNIT_EXPECT_TRUE(test, lrb_buf_readable(buf));
			lrbk_drain_init(&d, test, chan, buf, m);
			lrbk_drain_all(&d);
			KUNIT_EXPECT_EQ(test, d.records, 150UL);
			KUNIT_EXPECT_EQ(test, m->next, m->n);
			KUNIT_EXPECT_GE(test, d.packets, 2UL);
			KUNIT_EXPECT_EQ(test, d.gaps, 0ULL);
			lrbk_check_lost(test, buf, 0, 0, 0);
			lrb_positions(buf, &c, &p);
			KUNIT_EXPECT_EQ(test, c, p);
			KUNIT_EXPECT_EQ(test, c, d.packets * SB16K);
		} else {
			KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb),
					-EAGAIN);
		}
		lrb_reader_close(buf);
	}
	lrb_channel_destroy(chan);
	KUNIT_EXPECT_EQ(test, __lrb_port_live_allocs(), allocs);
}

/* Buffer counts relative to nr_cpu_ids in geometry cases. */
#define NR_OK (-1L)
#define NR_MORE (-2L)
#define NR_LESS (-3L)

static const struct lrb_config cfg_bits0 = {
	.header = LRB_HEADER_COMPACT, .tsc_bits = 0, .cb.clock_read = lrbk_clock,
};

static const struct lrb_config cfg_bits1 = {
	.header = LRB_HEADER_COMPACT, .tsc_bits = 1, .cb.clock_read = lrbk_clock,
	.alloc = LRB_ALLOC_GLOBAL,
};

static const struct lrb_config cfg_bits31 = {
	.header = LRB_HEADER_COMPACT, .tsc_bits = 31,
	.cb.clock_read = lrbk_clock,
};

static const struct lrb_config cfg_bits32 = {
	.header = LRB_HEADER_COMPACT, .tsc_bits = 32,
	.cb.clock_read = lrbk_clock,
};

static const struct lrb_config cfg_large0 = {
	.header = LRB_HEADER_LARGE, .tsc_bits = 0, .cb.clock_read = lrbk_clock,
	.mode = LRB_MODE_OVERWRITE,
};

static const struct lrb_config cfg_noclock = {
	.header = LRB_HEADER_COMPACT, .tsc_bits = 27,
};

static const struct lrb_config cfg_badmode = {
	.mode = (enum lrb_mode)2, .tsc_bits = 27, .cb.clock_read = lrbk_clock,
};

static const struct lrb_config cfg_badalloc = {
	.alloc = (enum lrb_alloc)2, .tsc_bits = 27,
	.cb.clock_read = lrbk_clock,
};

static const struct lrb_config cfg_badwakeup = {
	.wakeup = (enum lrb_wakeup)2, .tsc_bits = 27,
	.cb.clock_read = lrbk_clock,
};

static const struct lrb_config cfg_badheader = {
	.header = (enum lrb_header_layout)-1, .tsc_bits = 27,
	.cb.clock_read = lrbk_clock,
};

static const struct lrb_config cfg_badheader2 = {
	.header = (enum lrb_header_layout)2, .tsc_bits = 27,
	.cb.clock_read = lrbk_clock,
};

static const struct lrb_config cfg_badmode2 = {
	.mode = (enum lrb_mode)0x7fffffff, .header = LRB_HEADER_LARGE,
	.tsc_bits = 27, .cb.clock_read = lrbk_clock,
};

static const struct lrb_config cfg_bits99 = {
	.header = LRB_HEADER_COMPACT, .tsc_bits = 99,
	.cb.clock_read = lrbk_clock,
};

static const struct lrb_config cfg_large99 = {
	.header = LRB_HEADER_LARGE, .tsc_bits = 99, .cb.clock_read = lrbk_clock,
	.mode = LRB_MODE_OVERWRITE, .alloc = LRB_ALLOC_GLOBAL,
};

static const struct lrb_config cfg_ogc = LRBK_CONFIG(OVERWRITE, GLOBAL, COMPACT);

struct geo_case {
	const struct lrb_config *cfg;
	unsigned long subbuf_size;
	unsigned long num_subbuf;
	long nr_cpus;
	int ret;
	const char *what;
	bool exact;
};

static const struct geo_case geo_cases[] = {
	{ &cfg_dcc, SB4K, 4, NR_OK, 0, "per-cpu, smallest sub-buffer" },
	{ &cfg_dgc, 2 * SB4K, 2, 1, 0, "global, 2 x 2 pages" },
	{ &cfg_dgc, 1UL << 20, 2, 1, 0, "global, 1 MiB" },
	{ &cfg_dcc, SB4K, 4, NR_MORE, -EINVAL, "per-cpu, nr_cpu_ids + 1", true },
	{ &cfg_dcc, SB4K, 4, NR_LESS, -EINVAL, "per-cpu, nr_cpu_ids - 1", true },
	{ &cfg_dcc, SB4K, 4, 0, -EINVAL, "per-cpu, nr_cpus 0" },
	{ &cfg_dcc, SB4K, 4, 4096, -EINVAL, "per-cpu, nr_cpus 4096", true },
	{ &cfg_ocl, SB4K, 2, NR_OK, 0, "overwrite per-cpu, 2 sub-buffers" },
	{ &cfg_ocl, SB4K, 2, NR_MORE, -EINVAL, "overwrite per-cpu, too many", true },
	{ &cfg_dgc, SB4K, 4, 0, -EINVAL, "global, nr_cpus 0" },
	{ &cfg_dgc, SB4K, 4, 1000, 0, "global, nr_cpus ignored" },
	{ &cfg_dgc, 0, 4, 1, -EINVAL, "subbuf 0" },
	{ &cfg_dgc, 1, 4, 1, -EINVAL, "subbuf 1" },
	{ &cfg_dgc, PAGE_SIZE / 2, 4, 1, -EINVAL, "subbuf half a page" },
	{ &cfg_dgc, PAGE_SIZE - 1, 4, 1, -EINVAL, "subbuf page - 1" },
	{ &cfg_dgc, PAGE_SIZE + 1, 4, 1, -EINVAL, "subbuf page + 1" },
	{ &cfg_dgc, 3 * PAGE_SIZE, 4, 1, -EINVAL, "subbuf 3 pages" },
	{ &cfg_dgc, 3UL << 20, 4, 1, -EINVAL, "subbuf 3 MiB" },
	{ &cfg_dgc, 1UL << 31, 2, 1, -EINVAL, "subbuf 2 GiB" },
	{ &cfg_dgc, BIT(BITS_PER_LONG - 1), 2, 1, -EINVAL, "subbuf top bit" },
	{ &cfg_dgc, ~0UL, 2, 1, -EINVAL, "subbuf ~0" },
	{ &cfg_dgc, SB4K, 0, 1, -EINVAL, "num_subbuf 0" },
	{ &cfg_dgc, SB4K, 1, 1, -EINVAL, "num_subbuf 1" },
	{ &cfg_ogc, SB4K, 1, 1, -EINVAL, "overwrite, num_subbuf 1" },
	{ &cfg_ogc, SB4K, 0, 1, -EINVAL, "overwrite, num_subbuf 0" },
	{ &cfg_ogc, SB4K, 2, 1, 0, "overwrite, num_subbuf 2" },
	{ &cfg_dgc, SB4K, 3, 1, -EINVAL, "num_subbuf 3" },
	{ &cfg_dgc, SB4K, 6, 1, -EINVAL, "num_subbuf 6" },
	{ &cfg_dgc, SB4K, 32769, 1, -EINVAL, "num_subbuf 32769" },
	{ &cfg_dgc, SB4K, 65536, 1, -EINVAL, "num_subbuf 65536" },
	{ &cfg_dgc, SB4K, BIT(BITS_PER_LONG - 1), 1, -EINVAL, "num_subbuf top bit" },
	{ &cfg_dgc, SB4K, ~0UL, 1, -EINVAL, "num_subbuf ~0" },
	{ &cfg_bits0, SB4K, 4, NR_OK, -EINVAL, "compact, tsc_bits 0" },
	{ &cfg_bits1, SB4K, 4, 1, 0, "compact, tsc_bits 1" },
	{ &cfg_bits31, SB4K, 4, NR_OK, 0, "compact, tsc_bits 31" },
	{ &cfg_bits32, SB4K, 4, NR_OK, -EINVAL, "compact, tsc_bits 32" },
	{ &cfg_bits99, SB4K, 4, NR_OK, -EINVAL, "compact, tsc_bits 99" },
	{ &cfg_large0, SB4K, 4, NR_OK, 0, "large, tsc_bits 0 (ignored)" },
	{ &cfg_large99, SB4K, 4, 1, 0, "large, tsc_bits 99 (ignored)" },
	{ &cfg_noclock, SB4K, 4, NR_OK, -EINVAL, "no clock_read" },
	{ &cfg_badmode, SB4K, 4, NR_OK, -EINVAL, "mode 2" },
	{ &cfg_badmode2, SB4K, 4, NR_OK, -EINVAL, "mode 0x7fffffff" },
	{ &cfg_badalloc, SB4K, 4, NR_OK, -EINVAL, "alloc 2" },
	{ &cfg_badwakeup, SB4K, 4, NR_OK, -EINVAL, "wakeup 2" },
	{ &cfg_badheader, SB4K, 4, NR_OK, -EINVAL, "header -1" },
	{ &cfg_badheader2, SB4K, 4, NR_OK, -EINVAL, "header 2" },
};

/*
 * Geometry and configurations just inside and outside every limit: a bad
 * one is refused with -EINVAL and allocates nothing. A per-CPU channel
 * needs exactly nr_cpu_ids buffers in the kernel (cases marked exact),
 * any number in user space.
 */
static void bad_geometry(struct kunit *test)
{
	unsigned int i;

	KUNIT_EXPECT_EQ(test, LRB_MIN_SUBBUF_SIZE, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, LRB_MAX_SUBBUF_SIZE, 1UL << 30);
	KUNIT_EXPECT_EQ(test, LRB_MAX_NUM_SUBBUF, 32768UL);
	KUNIT_EXPECT_EQ(test, LRB_MAX_NESTING, 4);
	KUNIT_EXPECT_EQ(test, LRB_PACKET_HEADER_SIZE, 64UL);
	for (i = 0; i < ARRAY_SIZE(geo_cases); i++) {
		const struct geo_case *g = &geo_cases[i];
		struct lrb_chan_attr attr = {
			.subbuf_size = g->subbuf_size,
			.num_subbuf = g->num_subbuf,
			.stream_id = 1,
		};
		long before = __lrb_port_live_allocs();
		struct lrb_chan *chan = NULL;
		int ret, want = g->ret;

		if (g->nr_cpus == NR_OK)
			attr.nr_cpus = nr_cpu_ids;
		else if (g->nr_cpus == NR_MORE)
			attr.nr_cpus = nr_cpu_ids + 1;
		else if (g->nr_cpus == NR_LESS)
			attr.nr_cpus = nr_cpu_ids - 1;
		else
			attr.nr_cpus = g->nr_cpus;
		if (g->exact && !LRBK_EXACT_NR_CPUS)
			want = 0;
		ret = lrb_channel_create(g->cfg, &attr, &chan);
		KUNIT_EXPECT_EQ_MSG(test, ret, want, "case: %s", g->what);
		if (!ret) {
			KUNIT_EXPECT_GT_MSG(test, __lrb_port_live_allocs(), before,
					    "case: %s", g->what);
			lrb_channel_destroy(chan);
		}
		KUNIT_EXPECT_EQ_MSG(test, __lrb_port_live_allocs(), before,
				    "case: %s", g->what);
	}
}

/*
 * Debug builds: lrb_reserve() with a configuration other than the
 * channel's fails with -EINVAL, counts nothing and leaves no writer state.
 * kunit_user's ASan build is one (-DLRB_DEBUG); other builds do not check,
 * and the case has nothing to test there.
 */
static void debug_cfg_check(struct kunit *test)
{
	const struct lrb_config *cfg = &lrbk_variants[0];
	struct lrb_config copy = *cfg, other = *cfg;
	struct lrb_chan *chan;
	struct lrb_ctx ctx;
	struct lrb_buf_counters st;
	unsigned long c, p, p2, records = 0;
	unsigned int i;
	uint64_t v = 7;

	if (!__LRB_DEBUG)
		return;
	chan = lrbk_chan_new(test, cfg, SB16K, 4);
	other.mode = cfg->mode == LRB_MODE_DISCARD ? LRB_MODE_OVERWRITE :
						     LRB_MODE_DISCARD;
	lrb_positions(lrbk_my_buf(cfg, chan), &c, &p);
	KUNIT_EXPECT_EQ(test, lrb_reserve(&other, chan, &ctx, 1, 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, lrb_event_write(&other, chan, 1, &v, 8), -EINVAL);
	/* an equal copy, as lrb.ko's channels with files keep, is the same */
	KUNIT_EXPECT_EQ(test, lrb_event_write(&copy, chan, 1, &v, 8), 0);
	KUNIT_EXPECT_EQ(test, lrb_event_write(cfg, chan, 1, &v, 8), 0);
	lrb_positions(lrbk_my_buf(cfg, chan), &c, &p2);
	KUNIT_EXPECT_GT(test, p2, p);
	for (i = 0; i < chan->nr_bufs; i++) {
		lrb_buf_stats(lrb_channel_nth_buf(chan, i), &st);
		records += st.records_written;
		KUNIT_EXPECT_EQ(test, lrb_buf_lost(lrb_channel_nth_buf(chan, i)), 0);
	}
	KUNIT_EXPECT_EQ(test, records, 2);
	lrbk_chan_destroy(test, chan);
}

/* Compact layout: the raw bytes of the packet header and 12-byte records. */
static void compact_layout(struct kunit *test)
{
	struct lrbk_model *m = lrbk_model_new(test, 16, false);
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dgc, SB16K, 4);
	struct lrb_buf *buf = lrb_channel_nth_buf(chan, 0);
	struct lrb_packet_header h;
	struct lrbk_drain d;
	struct lrb_subbuf sb;
	struct lrb_buf_counters st;
	unsigned long c, p;
	u8 data[256];
	u32 w, i;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	for (i = 0; i < 10; i++) {
		lrbk_set_clock(1000 + 5 * i);
		KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dgc, chan, i + 1, 8), 0);
	}
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, 0UL);
	KUNIT_EXPECT_EQ(test, p, 64UL + 10 * 12);
	lrb_buf_stats(buf, &st);
	KUNIT_EXPECT_EQ(test, st.produced, 64UL + 10 * 12);
	KUNIT_EXPECT_EQ(test, st.consumed, 0UL);
	KUNIT_EXPECT_FALSE(test, lrb_buf_readable(buf));
	KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb), -EAGAIN);

	lrbk_set_clock(2000);
	lrb_buf_flush(buf);
	KUNIT_EXPECT_TRUE(test, lrb_buf_readable(buf));
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, sb.pos, 0UL);
	KUNIT_EXPECT_EQ(test, sb.seq, 0ULL);
	KUNIT_EXPECT_EQ(test, sb.content_size, 64UL + 10 * 12);
	KUNIT_EXPECT_EQ(test, sb.packet_size, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb), -EBUSY);
	KUNIT_EXPECT_EQ(test, lrb_subbuf_copy(chan, &sb, 0, data, sizeof(data)),
			0);
	KUNIT_EXPECT_EQ(test, lrb_subbuf_copy(chan, &sb, SB16K - 4, data, 5),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, lrb_subbuf_copy(chan, &sb, SB16K + 1, data, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, lrb_subbuf_copy(chan, &sb, SB16K, data, 0), 0);
	memcpy(&h, data, sizeof(h));
	KUNIT_EXPECT_EQ(test, sizeof(h), 64UL);
	KUNIT_EXPECT_EQ(test, h.magic, LRB_PACKET_MAGIC);
	KUNIT_EXPECT_EQ(test, h.stream_id, LRBK_STREAM_ID);
	KUNIT_EXPECT_EQ(test, h.timestamp_begin, 1000ULL);
	KUNIT_EXPECT_EQ(test, h.timestamp_end, 2000ULL);
	KUNIT_EXPECT_EQ(test, h.content_size, (64ULL + 10 * 12) * 8);
	KUNIT_EXPECT_EQ(test, h.packet_size, (u64)PAGE_SIZE * 8);
	KUNIT_EXPECT_EQ(test, h.packet_seq_num, 0ULL);
	KUNIT_EXPECT_EQ(test, h.events_discarded, 0ULL);
	KUNIT_EXPECT_EQ(test, h.cpu_id, 0);
	KUNIT_EXPECT_EQ(test, h.header_size, 64);
	for (i = 0; i < 10; i++) {
		memcpy(&w, data + 64 + 12 * i, 4);
		KUNIT_EXPECT_EQ(test, w, (i + 1) | ((1000 + 5 * i) << 5));
		memcpy(&w, data + 68 + 12 * i, 4);
		KUNIT_EXPECT_EQ(test, w, 8);
		memcpy(&w, data + 72 + 12 * i, 4);
		KUNIT_EXPECT_EQ(test, w, i);
	}
	lrbk_drain_init(&d, test, chan, buf, m);
	lrbk_check_packet(&d, &sb);
	KUNIT_EXPECT_EQ(test, d.records, 10UL);
	KUNIT_EXPECT_EQ(test, m->next, 10U);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, SB16K);
	KUNIT_EXPECT_EQ(test, p, SB16K);
	KUNIT_EXPECT_FALSE(test, lrb_buf_readable(buf));
	lrb_reader_close(buf);
}

/*
 * Large layout: 8-byte headers; ids 0xFFFFFFFE (the skip record's) and
 * 0xFFFFFFFF need the extended form.
 */
static void large_layout(struct kunit *test)
{
	struct lrbk_model *m = lrbk_model_new(test, 16, false);
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dgl, SB16K, 4);
	struct lrb_buf *buf = lrb_channel_nth_buf(chan, 0);
	struct lrbk_drain d;
	struct lrb_subbuf sb;
	unsigned long c, p;
	u8 data[256];
	u32 w[6], i;
	u64 ts;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_set_clock(5000);
	for (i = 0; i < 4; i++) {
		lrbk_tick(3);
		KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dgl, chan, 100000 + i, 8),
				0);
	}
	lrbk_tick(1);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dgl, chan, 0xFFFFFFFDU, 8), 0);
	lrbk_tick(1);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dgl, chan, 0xFFFFFFFFU, 8), 0);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, p, 64UL + 5 * 16 + 24);
	lrb_buf_flush(buf);
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, sb.content_size, 64UL + 5 * 16 + 24);
	lrb_subbuf_copy(chan, &sb, 0, data, sizeof(data));
	for (i = 0; i < 4; i++) {
		memcpy(w, data + 64 + 16 * i, 16);
		KUNIT_EXPECT_EQ(test, w[0], 100000 + i);
		KUNIT_EXPECT_EQ(test, w[1], 5003 + 3 * i);
		KUNIT_EXPECT_EQ(test, w[2], 8);
		KUNIT_EXPECT_EQ(test, w[3], i);
	}
	memcpy(w, data + 64 + 4 * 16, 16);
	KUNIT_EXPECT_EQ(test, w[0], 0xFFFFFFFDU);
	memcpy(w, data + 64 + 5 * 16, 24);
	KUNIT_EXPECT_EQ(test, w[0], LRB_LARGE_ID_EXTENDED);
	KUNIT_EXPECT_EQ(test, w[1], 0xFFFFFFFFU);
	memcpy(&ts, &w[2], 8);
	KUNIT_EXPECT_EQ(test, ts, lrbk_clock());
	KUNIT_EXPECT_EQ(test, w[4], 8);
	lrbk_drain_init(&d, test, chan, buf, m);
	lrbk_check_packet(&d, &sb);
	KUNIT_EXPECT_EQ(test, d.records, 6UL);
	KUNIT_EXPECT_EQ(test, m->next, 6U);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	lrb_reader_close(buf);
}

struct ext_step {
	u32 id;
	u64 dt;
	bool extended;
};

/*
 * Compact, 27 bits: 2^27 ticks since the last record, or id 30 (the skip
 * record's) or more, extend.
 */
static const struct ext_step ext_compact[] = {
	{ 1, 0, false },		/* 1000 ticks after last_tsc = 0 */
	{ 1, 1ULL << 27, true },
	{ 2, (1ULL << 27) - 1, false },
	{ 29, 1, false },
	{ 30, 1, true },
	{ 31, 1, true },
	{ 1000, 1, true },
	{ 3, 0, false },
	{ 4, 1ULL << 40, true },
	{ 5, 7, false },
};

/*
 * Large: 2^32 ticks since the last record, or id 0xFFFFFFFE (the skip
 * record's) or 0xFFFFFFFF, extend.
 */
static const struct ext_step ext_large[] = {
	{ 1, 0, false },
	{ 0xFFFFFFFE, 1ULL << 32, true },
	{ 2, (1ULL << 32) - 1, false },
	{ 0xFFFFFFFD, 1, false },
	{ 0xFFFFFFFE, 1, true },
	{ 0xFFFFFFFF, 1, true },
	{ 3, 5, false },
	{ 7, 3ULL << 33, true },
};

static void note_extended(struct lrbk_drain *d, const struct lrb_subbuf *sb,
			  const struct lrb_record *rec)
{
	if (rec->extended)
		d->user |= 1UL << (d->records - 1);
}

static void one_extended(struct kunit *test, const struct lrb_config *cfg,
			 const struct ext_step *steps, unsigned int n)
{
	struct lrbk_model *m = lrbk_model_new(test, 16, false);
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(cfg, chan);
	unsigned long want = 0, c, p, p0 = 0;
	struct lrbk_drain d;
	unsigned int i;
	u32 hl;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_set_clock(1000);
	for (i = 0; i < n; i++) {
		lrbk_tick(steps[i].dt);
		lrb_positions(buf, &c, &p0);
		KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, steps[i].id, 8), 0);
		lrb_positions(buf, &c, &p);
		hl = steps[i].extended ? LRB_EXTENDED_HEADER_SIZE :
		     cfg->header == LRB_HEADER_COMPACT ? LRB_COMPACT_HEADER_SIZE :
							 LRB_LARGE_HEADER_SIZE;
		/* the first record also takes the packet header */
		KUNIT_EXPECT_EQ_MSG(test, p - p0, hl + 8UL + (i ? 0 : 64),
				    "step %u", i);
		if (steps[i].extended)
			want |= 1UL << i;
	}
	lrb_buf_flush(buf);
	lrbk_drain_init(&d, test, chan, buf, m);
	d.on_record = note_extended;
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.records, (unsigned long)n);
	KUNIT_EXPECT_EQ(test, d.user, want);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	lrb_reader_close(buf);
}

/*
 * Extended record headers exactly when the id does not fit or the clock
 * moved too far since the last record; the decoder rebuilds every
 * timestamp (the model checks them).
 */
static void extended_headers(struct kunit *test)
{
	static const struct lrb_config cfg_occ =
		LRBK_CONFIG(OVERWRITE, PER_CPU, COMPACT);

	one_extended(test, &cfg_dgc, ext_compact, ARRAY_SIZE(ext_compact));
	one_extended(test, &cfg_occ, ext_compact, ARRAY_SIZE(ext_compact));
	one_extended(test, &cfg_dgl, ext_large, ARRAY_SIZE(ext_large));
	one_extended(test, &cfg_ocl, ext_large, ARRAY_SIZE(ext_large));
}

/* lrb_subbuf_copy() at any offset and length agrees with a full copy. */
static void check_piecewise_copy(struct lrbk_drain *d,
				 const struct lrb_subbuf *sb, const u8 *data)
{
	static const unsigned long cuts[][2] = {
		{ 0, 1 }, { 4095, 2 }, { 4090, 4100 }, { 8191, 8193 },
		{ 12287, 4097 }, { 100, 16000 }, { 16383, 1 }, { 0, 16384 },
	};
	unsigned long off, n, i;
	bool same = true;
	u8 *a;

	a = kmalloc(SB16K + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(d->test, a);
	for (off = 0; off < SB16K; off += n) {
		n = min(SB16K - off, 1000UL);
		lrb_subbuf_copy(d->chan, sb, off, a + off, n);
	}
	KUNIT_EXPECT_EQ(d->test, memcmp(a, data, SB16K), 0);
	for (i = 0; i < ARRAY_SIZE(cuts); i++) {
		memset(a, 0xee, SB16K + 1);
		lrb_subbuf_copy(d->chan, sb, cuts[i][0], a, cuts[i][1]);
		if (memcmp(a, data + cuts[i][0], cuts[i][1]))
			same = false;
		if (a[cuts[i][1]] != 0xee)
			same = false;
	}
	KUNIT_EXPECT_TRUE(d->test, same);
	kfree(a);
}

/*
 * Records of 1000 to 3000 bytes straddle the pages of 16 KiB sub-buffers
 * (each page allocated alone): written in chunks of 1 to 4096 bytes, they
 * read back intact.
 */
static void page_crossing(struct kunit *test)
{
	static const u32 chunks[] = { 1, 3, 7, 333, 4096 };
	struct lrbk_model *m = lrbk_model_new(test, 64, false);
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dcc, SB16K, 8);
	struct lrb_buf *buf = lrbk_my_buf(&cfg_dcc, chan);
	struct lrbk_drain d;
	u32 i;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_set_clock(3000);
	for (i = 0; i < 25; i++) {
		lrbk_tick(17);
		KUNIT_EXPECT_EQ(test, lrbk_write_chunked(m, &cfg_dcc, chan,
							 1 + i % 10,
							 LRBK_LEN(1000 + (i * 577) % 2001),
							 chunks[i % 5]), 0);
	}
	for (i = 0; i < 5; i++) {
		lrbk_tick(1);
		KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dcc, chan, 2,
						 LRBK_LEN(2999) + i),
				0);
	}
	lrb_channel_flush(chan);
	lrbk_drain_init(&d, test, chan, buf, m);
	d.on_packet = check_piecewise_copy;
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.records, 30UL);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	KUNIT_EXPECT_GE(test, d.packets, 3UL);
	KUNIT_EXPECT_GT(test, d.page_cross, 5UL);
	lrbk_check_lost(test, buf, 0, 0, 0);
	lrb_reader_close(buf);
}

/*
 * Padding is zeroed even in reused, dirty memory: the alignment bytes
 * after payloads of 1 to 7 bytes, and the end of a packet closed because
 * the next record did not fit.
 */
static void padding_zeroed(struct kunit *test)
{
	struct lrbk_model *m = lrbk_model_new(test, 32, false);
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dgc, SB4K, 2);
	struct lrb_buf *buf = lrb_channel_nth_buf(chan, 0);
	struct lrbk_drain d;
	struct lrb_subbuf sb;
	u32 id;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	lrbk_set_clock(100);

	/* one record filling a whole sub-buffer: delivered without flush */
	KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dgc, chan, 1, SB4K - 64 - 4), 0);
	KUNIT_EXPECT_TRUE(test, lrb_buf_readable(buf));
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.packets, 1UL);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dgc, chan, 1, SB4K - 64 - 4), 0);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.packets, 2UL);
	KUNIT_EXPECT_EQ(test, d.records, 2UL);

	/* now the pages are dirty */
	lrbk_tick(10);
	for (id = TEST_ID_FIXED_MIN; id < TEST_ID_FIXED_MAX; id++)
		KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dgc, chan, id,
						 test_fixed_len(id)), 0);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dgc, chan, 2, LRBK_LEN(3000)),
			0);
	KUNIT_EXPECT_FALSE(test, lrb_buf_readable(buf));
	KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dgc, chan, 3, LRBK_LEN(3000)),
			0);
	KUNIT_EXPECT_TRUE(test, lrb_buf_readable(buf));
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, sb.content_size,
			64UL + 4 * 8 + 3 * 12 + 4 + LRBK_LEN(3000));
	KUNIT_EXPECT_EQ(test, sb.seq, 2ULL);
	lrbk_check_packet(&d, &sb);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	lrb_buf_flush(buf);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.packets, 4UL);
	KUNIT_EXPECT_EQ(test, d.records, 2UL + 7 + 2);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	lrbk_check_lost(test, buf, 0, 0, 0);
	lrb_reader_close(buf);
}

/*
 * lrb_try_discard(): the last reservation goes away and the next record
 * takes its place; a reservation with a later one after it cannot
 * (-EBUSY) and is committed; a nested reservation can be discarded under
 * an open one.
 */
static void try_discard_outcomes(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	struct lrbk_model *m = lrbk_model_new(test, 32, false);
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, SB16K, 4);
	struct lrb_buf *buf = lrbk_my_buf(cfg, chan);
	unsigned long c, p, p2, begin_a = 0, begin_b = 0, begin_e;
	unsigned long hl = cfg->header == LRB_HEADER_COMPACT ? 4 : 8;
	struct lrb_ctx a, b, e;
	int ret_a, ret_b, busy;
	struct lrbk_drain d;
	struct lrb_subbuf sb;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);

	/* success; the next record is as short as before the discard */
	lrbk_set_clock((1ULL << 30) + 5);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 1, 8), 0);
	lrbk_tick(3);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 2, 8), 0);
	lrb_positions(buf, &c, &p2);
	KUNIT_EXPECT_EQ(test, p2 - p, hl + 8);
	lrbk_tick(3);
	ret_a = lrbk_reserve_rec(m, cfg, chan, &a, 3, 8);
	if (!ret_a) {
		begin_a = a.begin;
		ret_a = lrb_try_discard(cfg, &a);
	}
	KUNIT_EXPECT_EQ(test, ret_a, 0);
	KUNIT_EXPECT_EQ(test, begin_a, p2);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, p, p2);
	lrbk_tick(2);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 4, 8), 0);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, p - p2, hl + 8);
	lrbk_tick(2);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 5, 8), 0);
	lrb_positions(buf, &c, &p2);
	KUNIT_EXPECT_EQ(test, p2 - p, hl + 8);

	/* -EBUSY: a later reservation exists, the first must be committed */
	lrbk_tick(1);
	ret_a = lrbk_reserve_rec(m, cfg, chan, &a, 6, 8);
	if (!ret_a) {
		lrbk_model_add(m, 6, 8, m->seq - 1, lrbk_clock());
		lrbk_tick(1);
		ret_b = lrbk_reserve_rec(m, cfg, chan, &b, 7, 20);
		if (!ret_b) {
			lrbk_model_add(m, 7, 20, m->seq - 1, lrbk_clock());
			lrb_commit(cfg, &b);
		}
		busy = lrb_try_discard(cfg, &a);
		lrb_commit(cfg, &a);
		KUNIT_EXPECT_EQ(test, ret_b, 0);
		KUNIT_EXPECT_EQ(test, busy, -EBUSY);
		KUNIT_EXPECT_GE(test, b.begin, a.end);
	}
	KUNIT_EXPECT_EQ(test, ret_a, 0);

	/* a nested (later) reservation is discarded under an open one */
	lrbk_tick(1);
	ret_a = lrbk_reserve_rec(m, cfg, chan, &a, 8, 8);
	if (!ret_a) {
		lrbk_model_add(m, 8, 8, m->seq - 1, lrbk_clock());
		ret_b = lrbk_reserve_rec(m, cfg, chan, &b, 9, 8);
		begin_b = b.begin;
		busy = ret_b ? ret_b : lrb_try_discard(cfg, &b);
		lrb_commit(cfg, &a);
		KUNIT_EXPECT_EQ(test, busy, 0);
	}
	KUNIT_EXPECT_EQ(test, ret_a, 0);
	lrbk_tick(1);
	ret_a = lrbk_reserve_rec(m, cfg, chan, &e, 10, 8);
	if (!ret_a) {
		begin_e = e.begin;
		lrbk_model_add(m, 10, 8, m->seq - 1, lrbk_clock());
		lrb_commit(cfg, &e);
		KUNIT_EXPECT_EQ(test, begin_e, begin_b);
	}

	lrbk_tick(1);
	lrb_buf_flush(buf);
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	lrbk_check_packet(&d, &sb);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, d.records, 8UL);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	lrbk_check_lost(test, buf, 0, 0, 0);
	lrb_reader_close(buf);
}

KUNIT_ARRAY_PARAM(variants, lrbk_variants, lrbk_variant_desc);

static void note_ext_bit(struct lrbk_drain *d, const struct lrb_subbuf *sb,
			 const struct lrb_record *rec)
{
	note_extended(d, sb, rec);
}

/*
 * A discarded record never becomes the timestamp reference: the next
 * record is 2^27 ticks after the one before the discarded one, but less
 * after the discarded one, and must take the extended form.
 */
static void try_discard_extended(struct kunit *test)
{
	struct lrbk_model *m = lrbk_model_new(test, 8, false);
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dcc, SB16K, 4);
	struct lrb_buf *buf = lrbk_my_buf(&cfg_dcc, chan);
	struct lrbk_drain d;
	struct lrb_ctx a;
	int ret;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_set_clock((3ULL << 30) + 77);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dcc, chan, 1, 8), 0);
	lrbk_tick(1);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dcc, chan, 1, 8), 0);
	lrbk_tick(1ULL << 26);
	ret = lrbk_reserve_rec(m, &cfg_dcc, chan, &a, 3, 8);
	if (!ret)
		ret = lrb_try_discard(&cfg_dcc, &a);
	KUNIT_EXPECT_EQ(test, ret, 0);
	lrbk_tick((1ULL << 26) + 10);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dcc, chan, 1, 8), 0);
	lrbk_tick(1);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dcc, chan, 1, 8), 0);
	lrb_buf_flush(buf);
	lrbk_drain_init(&d, test, chan, buf, m);
	d.on_record = note_ext_bit;
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.records, 4UL);
	/* record 0 is compact too: 3 * 2^30 + 77 ticks after 0 is not */
	KUNIT_EXPECT_EQ(test, d.user & 0xe, 0x4UL);
	lrb_reader_close(buf);
}

/* Flushing closes no packet: none to read, nothing consumed. */
static unsigned long check_nothing_closed(struct kunit *test,
					  struct lrb_chan *chan,
					  struct lrb_buf *buf)
{
	struct lrb_subbuf sb;
	unsigned long c, p;

	lrb_buf_flush(buf);
	lrb_channel_flush(chan);
	KUNIT_EXPECT_FALSE(test, lrb_buf_readable(buf));
	KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb), -EAGAIN);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, 0UL);
	return p;
}

/*
 * lrb_buf_flush() and lrb_channel_flush(): nothing written or only a
 * discarded record, nothing closed; otherwise the packet is closed, padded
 * and readable at once, with the flush time as its end.
 */
static void flush_closes_packet(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	struct lrbk_model *m = lrbk_model_new(test, 8, false);
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(cfg, chan);
	unsigned long c, p, hl;
	struct lrbk_drain d;
	struct lrb_subbuf sb;
	unsigned long begin = 0;
	struct lrb_ctx a;
	int ret;

	hl = cfg->header == LRB_HEADER_COMPACT ? 4 : 8;
	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	KUNIT_EXPECT_EQ(test, check_nothing_closed(test, chan, buf), 0UL);

	/* a packet whose only record was discarded holds no record */
	lrbk_set_clock(500);
	ret = lrbk_reserve_rec(m, cfg, chan, &a, 1, 8);
	if (!ret) {
		begin = a.begin;
		ret = lrb_try_discard(cfg, &a);
	}
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, begin, 64UL);
	KUNIT_EXPECT_LE(test, check_nothing_closed(test, chan, buf), 64UL);

	lrbk_set_clock(600);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 2, 8), 0);
	lrbk_set_clock(700);
	lrb_buf_flush(buf);
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, sb.pos, 0UL);
	KUNIT_EXPECT_EQ(test, sb.content_size, 64 + hl + 8);
	lrbk_check_packet(&d, &sb);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, SB4K);
	KUNIT_EXPECT_EQ(test, p, SB4K);

	/* flushing again closes nothing */
	lrb_buf_flush(buf);
	lrb_channel_flush(chan);
	KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb), -EAGAIN);

	lrbk_set_clock(800);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 1, 12), 0);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 1, 13), 0);
	lrb_channel_flush(chan);
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, sb.pos, SB4K);
	KUNIT_EXPECT_EQ(test, sb.seq, 1ULL);
	/* the content ends with the last payload, not its padding */
	KUNIT_EXPECT_EQ(test, sb.content_size, 64 + hl + 12 + hl + 13);
	lrbk_check_packet(&d, &sb);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, d.records, 3UL);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, 2 * SB4K);
	KUNIT_EXPECT_EQ(test, p, 2 * SB4K);
	lrb_reader_close(buf);
}

/*
 * lrb_put_subbuf() releases only what the reader holds: a second release,
 * or one of a sub-buffer never taken, is refused with -EINVAL and changes
 * nothing; lrb_reader_close() releases what is still held. Afterwards
 * writers go round the ring many times and every packet still reads back
 * intact (a slot put back twice would be written twice).
 */
static void put_and_close(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	bool overwrite = cfg->mode == LRB_MODE_OVERWRITE;
	struct lrbk_model *m = lrbk_model_new(test, 4096, overwrite);
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(cfg, chan);
	struct lrb_subbuf sb, other;
	unsigned long c, p, c0, bad = 0;
	struct lrbk_drain d;
	int i, ret;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	memset(&sb, 0, sizeof(sb));
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), -EINVAL);
	/* four packets and a bit: the ring is full (or wrapped) */
	lrbk_set_clock(10);
	for (i = 0; i < 160; i++) {
		ret = lrbk_write(m, cfg, chan, 1, LRBK_LEN(100));
		if (ret && (overwrite || ret != -ENOBUFS))
			bad++;
	}

	/* consuming: released once */
	lrb_positions(buf, &c0, &p);
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	lrbk_check_packet(&d, &sb);
	other = sb;
	other.pos += SB4K;
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &other), -EINVAL);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, c0 + SB4K);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), -EINVAL);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, c0 + SB4K);

	/* a snapshot: released once, does not consume */
	KUNIT_ASSERT_EQ(test, lrb_get_subbuf(buf, c, &sb), 0);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), -EINVAL);
	lrb_positions(buf, &c0, &p);
	KUNIT_EXPECT_EQ(test, c0, c);

	/* closing while holding releases (and consumes) */
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	lrbk_check_packet(&d, &sb);
	lrb_reader_close(buf);
	KUNIT_EXPECT_EQ(test, lrb_reader_open(buf), 0);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), -EINVAL);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, c0 + SB4K);

	/* and a snapshot held at close goes back */
	KUNIT_ASSERT_EQ(test, lrb_get_subbuf(buf, c, &sb), 0);
	lrb_reader_close(buf);
	KUNIT_EXPECT_EQ(test, lrb_reader_open(buf), 0);

	for (i = 0; i < 2000; i++) {
		lrbk_tick(1);
		ret = lrbk_write(m, cfg, chan, 2, LRBK_LEN(8 + i % 150));
		if (ret && (overwrite || ret != -ENOBUFS))
			bad++;
		if (!overwrite && i % 30 == 29)
			lrbk_drain_one(&d);
	}
	KUNIT_EXPECT_EQ(test, bad, 0UL);
	lrb_buf_flush(buf);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	if (!overwrite)
		KUNIT_EXPECT_EQ(test, d.records + lrb_buf_lost(buf), m->attempts);
	lrb_reader_close(buf);
}

/* One consuming reader per buffer: a second one gets -EBUSY. */
static void reader_busy(struct kunit *test)
{
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dcc, SB4K, 2);
	struct lrb_chan *gchan = lrbk_chan_new(test, &cfg_dgc, SB4K, 2);
	struct lrb_buf *b0 = lrb_channel_nth_buf(chan, 0);
	struct lrb_buf *bl = lrb_channel_nth_buf(chan, nr_cpu_ids - 1);
	struct lrb_buf *g = lrb_channel_nth_buf(gchan, 0);

	KUNIT_EXPECT_EQ(test, lrb_reader_open(b0), 0);
	KUNIT_EXPECT_EQ(test, lrb_reader_open(b0), -EBUSY);
	KUNIT_EXPECT_EQ(test, lrb_reader_open(g), 0);
	KUNIT_EXPECT_EQ(test, lrb_reader_open(g), -EBUSY);
	if (bl != b0) {
		KUNIT_EXPECT_EQ(test, lrb_reader_open(bl), 0);
		KUNIT_EXPECT_EQ(test, lrb_reader_open(bl), -EBUSY);
		lrb_reader_close(bl);
	}
	lrb_reader_close(b0);
	KUNIT_EXPECT_EQ(test, lrb_reader_open(b0), 0);
	KUNIT_EXPECT_EQ(test, lrb_reader_open(b0), -EBUSY);
	lrb_reader_close(b0);
	lrb_reader_close(g);
	KUNIT_EXPECT_EQ(test, lrb_reader_open(g), 0);
	lrb_reader_close(g);
}

/*
 * Discard mode, lrb_get_subbuf(): a snapshot at a position does not
 * consume, refuses positions behind the reader, incomplete sub-buffers
 * and unaligned positions, and sees the bytes the consuming reader sees.
 */
static void snapshot_discard(struct kunit *test)
{
	struct lrbk_model *m = lrbk_model_new(test, 128, false);
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dcc, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(&cfg_dcc, chan);
	/* compact header and payload: 38 fit after the packet header */
	unsigned long rec = (SB4K - 64) / 38 & ~3UL;
	struct lrb_subbuf sb, sb2;
	struct lrbk_drain d;
	struct lrb_buf_counters st;
	unsigned long c, p;
	u8 *snap0, *snap1, *tmp;
	int i;

	snap0 = kunit_kzalloc(test, SB4K, GFP_KERNEL);
	snap1 = kunit_kzalloc(test, SB4K, GFP_KERNEL);
	tmp = kunit_kzalloc(test, SB4K, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, snap0 && snap1 && tmp);
	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	lrbk_set_clock(100);
	/* 38 records of rec bytes (104 on 4 KiB pages) per packet: 2.5 packets */
	for (i = 0; i < 95; i++)
		KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dcc, chan, 1, rec - 4),
				0);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, 0UL);
	KUNIT_EXPECT_EQ(test, p, 2 * SB4K + 64 + 19 * rec);
	lrb_buf_stats(buf, &st);
	KUNIT_EXPECT_EQ(test, st.produced, p);
	KUNIT_EXPECT_EQ(test, st.consumed, 0UL);
	KUNIT_EXPECT_TRUE(test, lrb_buf_readable(buf));

	KUNIT_EXPECT_EQ(test, lrb_get_subbuf(buf, 1, &sb), -EINVAL);
	KUNIT_EXPECT_EQ(test, lrb_get_subbuf(buf, SB4K + 64, &sb), -EINVAL);
	KUNIT_ASSERT_EQ(test, lrb_get_subbuf(buf, 0, &sb), 0);
	KUNIT_EXPECT_EQ(test, lrb_get_subbuf(buf, SB4K, &sb2), -EBUSY);
	KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb2), -EBUSY);
	KUNIT_EXPECT_EQ(test, sb.pos, 0UL);
	KUNIT_EXPECT_EQ(test, sb.seq, 0ULL);
	KUNIT_EXPECT_FALSE(test, sb.consuming);
	KUNIT_EXPECT_EQ(test, sb.content_size, 64UL + 38 * rec);
	lrb_subbuf_copy(chan, &sb, 0, snap0, SB4K);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	KUNIT_ASSERT_EQ(test, lrb_get_subbuf(buf, SB4K, &sb), 0);
	KUNIT_EXPECT_EQ(test, sb.pos, SB4K);
	KUNIT_EXPECT_EQ(test, sb.seq, 1ULL);
	KUNIT_EXPECT_FALSE(test, sb.consuming);
	lrb_subbuf_copy(chan, &sb, 0, snap1, SB4K);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, lrb_get_subbuf(buf, 2 * SB4K, &sb), -EAGAIN);
	KUNIT_EXPECT_EQ(test, lrb_get_subbuf(buf, 3 * SB4K, &sb), -EAGAIN);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, 0UL);

	/* the consuming reader still gets packet 0 */
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, sb.pos, 0UL);
	KUNIT_EXPECT_TRUE(test, sb.consuming);
	lrb_subbuf_copy(chan, &sb, 0, tmp, SB4K);
	KUNIT_EXPECT_EQ(test, memcmp(tmp, snap0, SB4K), 0);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, 0UL);
	lrbk_check_packet(&d, &sb);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, SB4K);

	KUNIT_EXPECT_EQ(test, lrb_get_subbuf(buf, 0, &sb2), -ENODATA);
	KUNIT_ASSERT_EQ(test, lrb_get_subbuf(buf, SB4K, &sb2), 0);
	lrb_subbuf_copy(chan, &sb2, 0, tmp, SB4K);
	KUNIT_EXPECT_EQ(test, memcmp(tmp, snap1, SB4K), 0);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb2), 0);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, SB4K);

	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.packets, 2UL);
	lrb_buf_flush(buf);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.packets, 3UL);
	KUNIT_EXPECT_EQ(test, d.records, 95UL);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	KUNIT_EXPECT_EQ(test, lrb_get_subbuf(buf, SB4K, &sb2), -ENODATA);
	lrb_reader_close(buf);
}

/*
 * Packet callbacks run in the writer's context (preemption disabled), so
 * they only record what they see; the test checks it afterwards.
 */
static struct {
	struct lrb_chan *chan;
	int begin_calls;
	int end_calls;
	int bad;
	u64 last_end;
} cb;

static void cb_begin(struct lrb_buf *buf, struct lrb_packet_header *h)
{
	cb.begin_calls++;
	if (!buf || buf->chan != cb.chan || h->magic != LRB_PACKET_MAGIC ||
	    h->header_size != 64 || h->stream_id != LRBK_STREAM_ID ||
	    h->timestamp_begin != lrbk_clock() ||
	    h->packet_seq_num != cb.begin_calls - 1)
		cb.bad++;
}

static void cb_end(struct lrb_buf *buf, struct lrb_packet_header *h)
{
	cb.end_calls++;
	if (!buf || buf->chan != cb.chan || h->magic != LRB_PACKET_MAGIC ||
	    h->timestamp_end != lrbk_clock() ||
	    h->packet_size != SB4K * 8 ||
	    h->content_size > h->packet_size ||
	    h->content_size <= 64 * 8 || h->events_discarded)
		cb.bad++;
	cb.last_end = h->timestamp_end;
}

static const struct lrb_config cfg_cb = {
	.mode = LRB_MODE_DISCARD,
	.alloc = LRB_ALLOC_PER_CPU,
	.wakeup = LRB_WAKEUP_BY_WRITER,
	.header = LRB_HEADER_COMPACT,
	.tsc_bits = 27,
	.cb = {
		.clock_read = lrbk_clock,
		.packet_begin = cb_begin,
		.packet_end = cb_end,
	},
};

/* packet_begin and packet_end see every packet opened and closed. */
static void packet_callbacks(struct kunit *test)
{
	struct lrbk_model *m = lrbk_model_new(test, 128, false);
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_cb, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(&cfg_cb, chan);
	struct lrbk_drain d;
	int i;

	memset(&cb, 0, sizeof(cb));
	cb.chan = chan;
	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_set_clock(70);
	for (i = 0; i < 100; i++) {
		lrbk_tick(2);
		KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_cb, chan, 5, LRBK_LEN(100)),
				0);
	}
	lrbk_tick(5);
	lrb_channel_flush(chan);
	lrbk_drain_init(&d, test, chan, buf, m);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.packets, 3UL);
	KUNIT_EXPECT_EQ(test, d.records, 100UL);
	KUNIT_EXPECT_EQ(test, cb.end_calls, 3);
	KUNIT_EXPECT_EQ(test, cb.begin_calls, 3);
	KUNIT_EXPECT_EQ(test, cb.bad, 0);
	KUNIT_EXPECT_EQ(test, cb.last_end, lrbk_clock());
	lrb_reader_close(buf);
}

static void percpu_record(struct lrbk_drain *d, const struct lrb_subbuf *sb,
			  const struct lrb_record *rec)
{
	u32 seq = test_payload_seq(rec->payload);

	KUNIT_EXPECT_EQ(d->test, seq / 100, d->buf->cpu);
	KUNIT_EXPECT_TRUE(d->test, test_check_payload(rec->payload, rec->id,
						      rec->len, seq));
}

/*
 * Per-CPU channels: a writer on CPU c writes buffer c, whose packets say
 * cpu_id c; a global channel's one buffer takes every CPU's records.
 */
static void percpu_mapping(struct kunit *test)
{
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dcc, SB4K, 4);
	struct lrb_chan *gchan = lrbk_chan_new(test, &cfg_dgc, SB4K, 64);
	unsigned long *expect, total = 0, read = 0;
	u8 payload[16];
	unsigned int i, k, home = raw_smp_processor_id();
	struct lrbk_drain d;
	int cpu;

	expect = kunit_kcalloc(test, nr_cpu_ids, sizeof(*expect), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, expect);
	for_each_online_cpu(cpu) {
		if (set_cpus_allowed_ptr(current, cpumask_of(cpu)))
			continue;
		KUNIT_EXPECT_EQ(test, raw_smp_processor_id(), cpu);
		for (k = 0; k < 5; k++) {
			test_fill_payload(payload, 1, 16, cpu * 100 + k);
			KUNIT_EXPECT_EQ(test, lrb_event_write(&cfg_dcc, chan, 1,
							      payload, 16), 0);
			KUNIT_EXPECT_EQ(test, lrb_event_write(&cfg_dgc, gchan, 1,
							      payload, 16), 0);
		}
		expect[cpu] += 5;
		total += 5;
	}
	set_cpus_allowed_ptr(current, cpumask_of(home));
	KUNIT_EXPECT_GT(test, total, 0UL);
	lrb_channel_flush(chan);
	lrb_channel_flush(gchan);
	for (i = 0; i < nr_cpu_ids; i++) {
		struct lrb_buf *buf = lrb_channel_nth_buf(chan, i);

		KUNIT_ASSERT_NOT_NULL(test, buf);
		KUNIT_EXPECT_EQ(test, buf->cpu, i);
		KUNIT_EXPECT_EQ(test, lrb_reader_open(buf), 0);
		lrbk_drain_init(&d, test, chan, buf, NULL);
		d.on_record = percpu_record;
		lrbk_drain_all(&d);
		KUNIT_EXPECT_EQ_MSG(test, d.records, expect[i], "buffer %u", i);
		KUNIT_EXPECT_EQ(test, d.packets, expect[i] ? 1UL : 0UL);
		read += d.records;
		lrb_reader_close(buf);
	}
	KUNIT_EXPECT_EQ(test, read, total);
	KUNIT_EXPECT_NULL(test, lrb_channel_nth_buf(chan, nr_cpu_ids));
	KUNIT_EXPECT_NULL(test, lrb_channel_nth_buf(gchan, 1));
	KUNIT_EXPECT_EQ(test, lrb_reader_open(lrb_channel_nth_buf(gchan, 0)), 0);
	lrbk_drain_init(&d, test, gchan, lrb_channel_nth_buf(gchan, 0), NULL);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.records, total);
	lrb_reader_close(lrb_channel_nth_buf(gchan, 0));
}

/*
 * A record whose payload ends 1 to 3 bytes before its packet's end closes
 * the packet: the content ends with the payload, the next record starts in
 * the next packet, and the write position says so.
 */
static void unaligned_packet_end(struct kunit *test)
{
	unsigned long c, p, short_by;
	struct lrb_subbuf sb;

	for (short_by = 0; short_by < LRB_RECORD_ALIGN; short_by++) {
		struct lrbk_model *m = lrbk_model_new(test, 4, false);
		struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dgc, SB4K, 4);
		struct lrb_buf *buf = lrb_channel_nth_buf(chan, 0);
		struct lrbk_drain d;

		KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
		lrbk_drain_init(&d, test, chan, buf, m);
		lrbk_set_clock(100);
		/* packet header 64, record header 4 */
		KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dgc, chan, 1,
						 SB4K - 64 - 4 - short_by), 0);
		lrb_positions(buf, &c, &p);
		KUNIT_EXPECT_EQ_MSG(test, p, SB4K, "short by %lu", short_by);
		/* nothing left to flush */
		lrb_buf_flush(buf);
		lrb_positions(buf, &c, &p);
		KUNIT_EXPECT_EQ(test, p, SB4K);
		KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
		KUNIT_EXPECT_EQ(test, sb.content_size, SB4K - short_by);
		KUNIT_EXPECT_EQ(test, sb.packet_size, SB4K);
		lrbk_check_packet(&d, &sb);
		KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
		KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb), -EAGAIN);
		/* the next record opens the next packet */
		KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dgc, chan, 1, 5), 0);
		lrb_buf_flush(buf);
		KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
		KUNIT_EXPECT_EQ(test, sb.pos, SB4K);
		KUNIT_EXPECT_EQ(test, sb.content_size, 64UL + 4 + 5);
		lrbk_check_packet(&d, &sb);
		KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
		lrb_positions(buf, &c, &p);
		KUNIT_EXPECT_EQ(test, c, 2 * SB4K);
		KUNIT_EXPECT_EQ(test, p, 2 * SB4K);
		KUNIT_EXPECT_EQ(test, d.records, 2UL);
		KUNIT_EXPECT_EQ(test, m->next, m->n);
		lrb_reader_close(buf);
		lrbk_chan_destroy(test, chan);
	}
}

/* on_packet of flush_final: the end of the last packet read. */
static void note_packet_end(struct lrbk_drain *d, const struct lrb_subbuf *sb,
			    const u8 *data)
{
	struct lrb_packet_header h;

	memcpy(&h, data, sizeof(h));
	d->user = h.timestamp_end;
}

/*
 * Records lost while the ring was full are in no packet header until
 * lrb_buf_flush_final() closes an empty packet carrying the count, at the
 * time given; every record written is read or counted lost.
 */
static void flush_final(struct kunit *test)
{
	/* the ring holds 2 * SB4K / 20 records of 16 bytes at most */
	struct lrbk_model *m = lrbk_model_new(test, 2 * SB4K / 20, false);
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dgc, SB4K, 2);
	struct lrb_buf *buf = lrb_channel_nth_buf(chan, 0);
	struct lrb_packet_header h;
	struct lrbk_drain d;
	struct lrb_subbuf sb;
	unsigned long lost, c, p, i;
	u64 final;
	int ret;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	d.on_packet = note_packet_end;
	lrbk_set_clock(10);
	/* a switch timer closes packets now and then: none may be open */
	for (i = 0; lrb_buf_lost(buf) < 100 && i < SB4K; i++) {
		lrbk_tick(1);
		ret = lrbk_write(m, &cfg_dgc, chan, 1, 16);
		KUNIT_EXPECT_TRUE(test, ret == 0 || ret == -ENOBUFS);
		if (i % 100 == 99)
			lrb_buf_flush(buf);
	}
	lost = lrb_buf_lost(buf);
	KUNIT_EXPECT_EQ(test, lost, 100UL);
	KUNIT_EXPECT_EQ(test, lost, m->failed);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, d.records + lost, m->attempts);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	KUNIT_EXPECT_LT(test, d.last_discarded, (u64)lost);

	/* the time given, not the clock's */
	lrbk_tick(100);
	final = d.user + 5;
	lrb_buf_flush_final(buf, final);
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, sb.content_size, LRB_PACKET_HEADER_SIZE);
	lrbk_check_packet(&d, &sb);
	KUNIT_EXPECT_EQ(test, lrb_subbuf_copy(chan, &sb, 0, &h, sizeof(h)), 0);
	KUNIT_EXPECT_EQ(test, h.events_discarded, (u64)lost);
	KUNIT_EXPECT_EQ(test, h.timestamp_begin, final);
	KUNIT_EXPECT_EQ(test, h.timestamp_end, h.timestamp_begin);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb), -EAGAIN);
	KUNIT_EXPECT_EQ(test, d.gaps, 0ULL);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, p);
	lrb_reader_close(buf);
}

/*
 * lrb_buf_flush_local(), as a pinned timer or a CPU hotplug callback calls
 * it (on the buffer's CPU, preemption disabled): like lrb_buf_flush(), it
 * closes the packet being filled at the time of the flush, and closes
 * nothing when no record is there.
 */
static void flush_local(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	struct lrbk_model *m = lrbk_model_new(test, 8, false);
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(cfg, chan);
	unsigned long hl = cfg->header == LRB_HEADER_COMPACT ? 4 : 8;
	struct lrb_packet_header h;
	struct lrbk_drain d;
	struct lrb_subbuf sb;
	unsigned long c, p;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	preempt_disable();
	lrb_buf_flush_local(buf);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb), -EAGAIN);

	lrbk_set_clock(300);
	KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 3, 10), 0);
	KUNIT_EXPECT_FALSE(test, lrb_buf_readable(buf));
	lrbk_set_clock(340);
	preempt_disable();
	lrb_buf_flush_local(buf);
	preempt_enable();
	KUNIT_EXPECT_TRUE(test, lrb_buf_readable(buf));
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_EQ(test, sb.content_size, 64 + hl + 10);
	KUNIT_EXPECT_EQ(test, lrb_subbuf_copy(chan, &sb, 0, &h, sizeof(h)), 0);
	KUNIT_EXPECT_EQ(test, h.timestamp_begin, 300ULL);
	KUNIT_EXPECT_EQ(test, h.timestamp_end, 340ULL);
	lrbk_check_packet(&d, &sb);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	lrb_positions(buf, &c, &p);
	KUNIT_EXPECT_EQ(test, c, SB4K);
	KUNIT_EXPECT_EQ(test, p, SB4K);

	/* again: the packet is already closed, nothing more to read */
	preempt_disable();
	lrb_buf_flush_local(buf);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, lrb_get_next_subbuf(buf, &sb), -EAGAIN);
	KUNIT_EXPECT_EQ(test, d.records, 1UL);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	lrb_reader_close(buf);
}

/*
 * lrb_buf_complete(), the watermark count: the complete sub-buffers from
 * the read position, never more than asked for nor than the ring holds.
 */
static void complete_count(struct kunit *test)
{
	const struct lrb_config *cfg = test->param_value;
	bool overwrite = cfg->mode == LRB_MODE_OVERWRITE;
	struct lrbk_model *m = lrbk_model_new(test, LRBK_LEN(1024), overwrite);
	struct lrb_chan *chan = lrbk_chan_new(test, cfg, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(cfg, chan);
	unsigned long per, slot, i;
	struct lrbk_drain d;

	slot = __lrb_slot_len(cfg->header == LRB_HEADER_COMPACT ?
			    LRB_COMPACT_HEADER_SIZE : LRB_LARGE_HEADER_SIZE, 100);
	per = (SB4K - LRB_PACKET_HEADER_SIZE) / slot;
	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(&d, test, chan, buf, m);
	KUNIT_EXPECT_EQ(test, lrb_buf_complete(buf, 10), 0UL);
	lrbk_set_clock(50);
	/* three packets full, a record in the fourth */
	for (i = 0; i < 3 * per + 1; i++)
		KUNIT_EXPECT_EQ(test, lrbk_write(m, cfg, chan, 1, 100), 0);
	KUNIT_EXPECT_EQ(test, lrb_buf_complete(buf, 10), 3UL);
	KUNIT_EXPECT_EQ(test, lrb_buf_complete(buf, 2), 2UL);
	KUNIT_EXPECT_EQ(test, lrb_buf_complete(buf, 0), 0UL);
	KUNIT_EXPECT_EQ(test, lrbk_drain_one(&d), 0);
	KUNIT_EXPECT_EQ(test, lrb_buf_complete(buf, 10), 2UL);
	lrb_buf_flush(buf);
	KUNIT_EXPECT_EQ(test, lrb_buf_complete(buf, 10), 3UL);
	/* the ring full: never more than num_subbuf */
	for (i = 0; i < 2 * per; i++)
		lrbk_write(m, cfg, chan, 1, 100);
	lrb_buf_flush(buf);
	KUNIT_EXPECT_EQ(test, lrb_buf_complete(buf, 100), 4UL);
	lrbk_drain_all(&d);
	KUNIT_EXPECT_EQ(test, lrb_buf_complete(buf, 10), 0UL);
	KUNIT_EXPECT_EQ(test, m->next, m->n);
	/* discard: written = read + lost; overwrite: nothing dropped */
	if (overwrite)
		KUNIT_EXPECT_EQ(test, m->n, m->attempts);
	else
		KUNIT_EXPECT_EQ(test, d.records + lrb_buf_lost(buf),
				m->attempts);
	lrb_reader_close(buf);
}

/* The steal_page cases' ring: 4 pages a sub-buffer whatever the page size */
#define STEAL_PAGES 4UL
#define STEAL_SIZE (STEAL_PAGES * PAGE_SIZE)
/* records of 124 bytes that go round the 4 sub-buffers twice */
#define STEAL_MORE (2 * 4 * STEAL_SIZE / 124)

/*
 * The steal_page cases' start: a ring of STEAL_SIZE sub-buffers holding
 * 100 records, flushed, its reader open and @d its checking drain.
 */
static void steal_fill(struct kunit *test, struct lrbk_drain *d)
{
	struct lrbk_model *m = lrbk_model_new(test, 100 + STEAL_MORE, false);
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dcc, STEAL_SIZE, 4);
	struct lrb_buf *buf = lrbk_my_buf(&cfg_dcc, chan);
	int i;

	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	lrbk_drain_init(d, test, chan, buf, m);
	lrbk_set_clock(20);
	for (i = 0; i < 100; i++)
		KUNIT_EXPECT_EQ(test, lrbk_write(m, &cfg_dcc, chan, 2, 120), 0);
	lrb_buf_flush(buf);
}

/*
 * The steal_page cases' end, with the page taken from @d's ring replaced:
 * writers go round the ring twice, and every record written is read,
 * none lost.
 */
static void steal_go_round(struct kunit *test, struct lrbk_drain *d)
{
	unsigned long i;

	lrbk_drain_all(d);
	for (i = 0; i < STEAL_MORE; i++) {
		lrbk_tick(1);
		KUNIT_EXPECT_EQ(test,
				lrbk_write(d->model, &cfg_dcc, d->chan, 3, 120),
				0);
		if (i % 50 == 49)
			lrbk_drain_all(d);
	}
	lrb_buf_flush(d->buf);
	lrbk_drain_all(d);
	KUNIT_EXPECT_EQ(test, d->records, 100UL + STEAL_MORE);
	KUNIT_EXPECT_EQ(test, d->model->next, d->model->n);
	lrbk_check_lost(test, d->buf, 0, 0, 0);
	lrb_reader_close(d->buf);
}

/*
 * lrb_subbuf_steal_page(): the page of a consumed, held sub-buffer is the
 * caller's with the bytes it held, a zeroed page takes its place in the
 * ring (which then goes on intact), and nothing else can be taken: a page
 * past the sub-buffer, one of a snapshot or of a released sub-buffer, or
 * one when no page can be allocated.
 */
static void steal_page(struct kunit *test)
{
	const unsigned long pages = STEAL_PAGES, size = STEAL_SIZE;
	struct lrb_chan *chan;
	struct lrbk_drain d;
	struct lrb_subbuf sb;
	struct lrb_buf *buf;
	u8 *data, *copy;
	long allocs;
	void *page;

	data = kunit_kzalloc(test, size, GFP_KERNEL);
	copy = kunit_kzalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, data && copy);
	steal_fill(test, &d);
	chan = d.chan;
	buf = d.buf;

	/* a snapshot is not the reader's to rob */
	KUNIT_ASSERT_EQ(test, lrb_get_subbuf(buf, 0, &sb), 0);
	KUNIT_EXPECT_NULL(test, lrb_subbuf_steal_page(buf, &sb, 0, NULL));
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);

	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	lrbk_check_packet(&d, &sb);
	KUNIT_EXPECT_EQ(test, lrb_subbuf_copy(chan, &sb, 0, data, size), 0);
	KUNIT_EXPECT_NULL(test, lrb_subbuf_steal_page(buf, &sb, pages, NULL));
	allocs = __lrb_port_live_allocs();
	__lrb_port_fail_alloc_after(0);
	page = lrb_subbuf_steal_page(buf, &sb, 1, NULL);
	__lrb_port_fail_alloc_after(-1);
	KUNIT_EXPECT_NULL(test, page);
	KUNIT_EXPECT_EQ(test, __lrb_port_live_allocs(), allocs);

	page = lrb_subbuf_steal_page(buf, &sb, 1, NULL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	/* the ring owns as many pages as before; the stolen one is ours */
	KUNIT_EXPECT_EQ(test, __lrb_port_live_allocs(), allocs);
	KUNIT_EXPECT_EQ(test, memcmp(page, data + PAGE_SIZE, PAGE_SIZE), 0);
	memset(copy, 0x5a, size);
	KUNIT_EXPECT_EQ(test, lrb_subbuf_copy(chan, &sb, 0, copy, size), 0);
	KUNIT_EXPECT_EQ(test, memcmp(copy, data, PAGE_SIZE), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(copy + PAGE_SIZE, 0, PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, memcmp(copy + 2 * PAGE_SIZE, data + 2 * PAGE_SIZE,
				     size - 2 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	KUNIT_EXPECT_NULL(test, lrb_subbuf_steal_page(buf, &sb, 0, NULL));
	free_page((unsigned long)page);

	/* the new page is in the ring: writers go round it twice, all read */
	steal_go_round(test, &d);
}

/*
 * lrb_subbuf_steal_page() with a recycled page: the page given back goes
 * into the ring as it is, without zeroing, and no reader ever sees its old
 * bytes. Here it is filled with a marker first, as if it held anything at
 * all; writers go round the ring twice and every packet drained must be
 * exactly the model's records followed by zeros. A call that fails leaves
 * the recycled page with the caller.
 */
static void steal_page_recycled(struct kunit *test)
{
	struct lrbk_drain d;
	struct lrb_subbuf sb;
	void *stale, *page;
	struct lrb_buf *buf;
	long allocs;

	steal_fill(test, &d);
	buf = d.buf;
	KUNIT_ASSERT_EQ(test, lrb_get_next_subbuf(buf, &sb), 0);
	lrbk_check_packet(&d, &sb);
	stale = lrb_subbuf_steal_page(buf, &sb, 1, NULL);
	KUNIT_ASSERT_NOT_NULL(test, stale);
	memset(stale, 0xa5, PAGE_SIZE);
	allocs = __lrb_port_live_allocs();
	KUNIT_EXPECT_NULL(test,
			  lrb_subbuf_steal_page(buf, &sb, STEAL_PAGES, stale));
	KUNIT_EXPECT_EQ(test, __lrb_port_live_allocs(), allocs);
	/* no allocation: a failure to allocate cannot matter */
	__lrb_port_fail_alloc_after(0);
	page = lrb_subbuf_steal_page(buf, &sb, 2, stale);
	__lrb_port_fail_alloc_after(-1);
	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_EXPECT_EQ(test, __lrb_port_live_allocs(), allocs);
	KUNIT_EXPECT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
	free_page((unsigned long)page);

	steal_go_round(test, &d);
}

static bool has(const char *text, const char *what)
{
	return strstr(text, what);
}

/*
 * lrb_metadata_format(): the CTF metadata of a channel, as snprintf()
 * returns it (the full length, whatever fits, NUL-terminated), with the
 * clock, stream id, record header of the layout, the build's byte order
 * and the client's events at the end (unit_ctf reads it with babeltrace2).
 */
LRB_EVENT(x, 40, LRB_INTEGER(short, v), LRB_STRING(s));

static void metadata_format(struct kunit *test)
{
	static const struct lrb_event_desc *const events[] = { &lrb_event_x };
	/* what lib/metadata.c makes of event x, after the stream */
	static const char x_tsdl[] =
		"};\n\nevent {\n\tname = \"x\";\n\tid = 40;\n\tstream_id = 7;\n"
		"\tfields := struct {\n\t\tint16_t v;\n\t\tstring s;\n\t};\n};\n";
	struct lrb_metadata_attr attr = {
		.clock_freq = 1000000000,
		.clock_offset_s = -5,
		.clock_offset = 77,
		.events = events,
		.nr_events = 1,
	};
	struct lrb_chan *cc = lrbk_chan_new(test, &cfg_dgc, SB4K, 2);
	struct lrb_chan *lc = lrbk_chan_new(test, &cfg_dgl, SB4K, 2);
	const bool le = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	char *text, small[10];
	int len, llen;

	len = lrb_metadata_format(cc, &attr, NULL, 0);
	KUNIT_ASSERT_GT(test, len, 0);
	text = kunit_kzalloc(test, len + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, text);
	KUNIT_EXPECT_EQ(test, lrb_metadata_format(cc, &attr, text, len + 1),
			len);
	KUNIT_EXPECT_EQ(test, strlen(text), (size_t)len);
	KUNIT_EXPECT_EQ(test, lrb_metadata_format(cc, &attr, small,
						  sizeof(small)), len);
	KUNIT_EXPECT_EQ(test, strlen(small), sizeof(small) - 1);
	KUNIT_EXPECT_EQ(test, memcmp(small, text, sizeof(small) - 1), 0);
	KUNIT_EXPECT_EQ(test, strncmp(text, "/* CTF 1.8 */", 13), 0);
	KUNIT_EXPECT_TRUE(test, has(text, le ? "byte_order = le;" :
					   "byte_order = be;"));
	KUNIT_EXPECT_TRUE(test, has(text, "\tfreq = 1000000000;\n"));
	KUNIT_EXPECT_TRUE(test, has(text, "\toffset_s = -5;\n"));
	KUNIT_EXPECT_TRUE(test, has(text, "\toffset = 77;\n"));
	KUNIT_EXPECT_TRUE(test, has(text, "stream {\n\tid = 7;\n"));
	KUNIT_EXPECT_TRUE(test, has(text, "uint64_t events_discarded;"));
	/*
	 * compact, 27 timestamp bits: 5 id bits, 30 says skip, 31 extended; the id
	 * comes first in a little-endian header, after the timestamp bits
	 * (so unaligned) in a big-endian one
	 */
	KUNIT_EXPECT_TRUE(test, has(text, "size = 27; align = 1;"));
	KUNIT_EXPECT_TRUE(test, has(text, le ? "integer { size = 5; align = 8;" :
					   "integer { size = 5; align = 1;"));
	KUNIT_EXPECT_TRUE(test, has(text, "compact = 0 ... 29,"));
	KUNIT_EXPECT_TRUE(test, has(text, "skip = 30,"));
	KUNIT_EXPECT_TRUE(test, has(text, "extended = 31,"));
	KUNIT_EXPECT_EQ(test, strcmp(text + len - strlen(x_tsdl), x_tsdl), 0);

	llen = lrb_metadata_format(lc, &attr, NULL, 0);
	KUNIT_ASSERT_GT(test, llen, 0);
	text = kunit_kzalloc(test, llen + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, text);
	KUNIT_EXPECT_EQ(test, lrb_metadata_format(lc, &attr, text, llen + 1),
			llen);
	KUNIT_EXPECT_TRUE(test, has(text, "size = 32; align = 8;"));
	KUNIT_EXPECT_TRUE(test, has(text, "integer { size = 32; align = 8;"));
	KUNIT_EXPECT_TRUE(test, has(text, "compact = 0 ... 4294967293,"));
	KUNIT_EXPECT_TRUE(test, has(text, "skip = 4294967294,"));
	KUNIT_EXPECT_TRUE(test, has(text, "extended = 4294967295,"));

	/* no events: the text ends with the stream */
	attr.nr_events = 0;
	KUNIT_EXPECT_EQ(test, lrb_metadata_format(lc, &attr, NULL, 0),
			llen - (int)strlen(x_tsdl) + 3);
}

#ifdef __KERNEL__
/*
 * The kernel port's wakeup (a wait queue and an irq_work); the user
 * port's, lrb_wait_readable() on a futex, is tested in
 * tests/user/unit_api.c.
 */
struct waiter {
	struct lrb_buf *buf;
	struct completion started;
	struct completion done;
	long ret;
};

static int waiter_fn(void *arg)
{
	struct waiter *w = arg;

	complete(&w->started);
	w->ret = wait_event_interruptible_timeout(w->buf->wait.wq,
						  lrb_buf_readable(w->buf),
						  30 * HZ);
	complete(&w->done);
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

/*
 * LRB_WAKEUP_BY_WRITER: a reader sleeping on the buffer's wait queue is
 * woken (through an irq_work) by the writer that delivers a sub-buffer.
 */
static void writer_wakeup(struct kunit *test)
{
	struct lrb_chan *chan = lrbk_chan_new(test, &cfg_dcc, SB4K, 4);
	struct lrb_buf *buf = lrbk_my_buf(&cfg_dcc, chan);
	struct task_struct *t;
	struct waiter w = { .buf = buf };
	u64 v = 42;
	int i;

	init_completion(&w.started);
	init_completion(&w.done);
	t = kthread_run(waiter_fn, &w, "lrb-kunit-waiter");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);
	wait_for_completion(&w.started);
	/* let it go to sleep; if it has not, the test proves less */
	for (i = 0; i < 1000 && task_is_running(t); i++)
		usleep_range(1000, 2000);
	KUNIT_EXPECT_FALSE(test, completion_done(&w.done));
	lrbk_set_clock(10);
	KUNIT_EXPECT_EQ(test, lrb_event_write(&cfg_dcc, chan, 1, &v, 8), 0);
	lrb_buf_flush(buf);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&w.done, 60 * HZ));
	KUNIT_EXPECT_GT_MSG(test, w.ret, 0L,
			    "the reader was not woken by the delivery");
	kthread_stop(t);
	put_task_struct(t);
}
#endif

static int lrb_api_init(struct kunit *test)
{
	lrbk_pin();
	lrbk_set_clock(1000);
	return 0;
}

static struct kunit_case lrb_api_cases[] = {
	KUNIT_CASE_PARAM(create_variants, create_cfgs_gen_params),
	KUNIT_CASE(bad_geometry),
	KUNIT_CASE(debug_cfg_check),
	KUNIT_CASE(compact_layout),
	KUNIT_CASE(large_layout),
	KUNIT_CASE(extended_headers),
	KUNIT_CASE(page_crossing),
	KUNIT_CASE(padding_zeroed),
	KUNIT_CASE_PARAM(try_discard_outcomes, variants_gen_params),
	KUNIT_CASE(try_discard_extended),
	KUNIT_CASE_PARAM(flush_closes_packet, variants_gen_params),
	KUNIT_CASE(reader_busy),
	KUNIT_CASE_PARAM(put_and_close, variants_gen_params),
	KUNIT_CASE(snapshot_discard),
	KUNIT_CASE(packet_callbacks),
	KUNIT_CASE(percpu_mapping),
	KUNIT_CASE(unaligned_packet_end),
	KUNIT_CASE(flush_final),
	KUNIT_CASE_PARAM(flush_local, variants_gen_params),
	KUNIT_CASE_PARAM(complete_count, variants_gen_params),
	KUNIT_CASE(steal_page),
	KUNIT_CASE(steal_page_recycled),
	KUNIT_CASE(metadata_format),
#ifdef __KERNEL__
	KUNIT_CASE(writer_wakeup),
#endif
	{}
};

static struct kunit_suite lrb_api_suite = {
	.name = "lrb_api",
	.init = lrb_api_init,
	.test_cases = lrb_api_cases,
};

kunit_test_suite(lrb_api_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests of lrb");
