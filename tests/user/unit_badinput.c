// SPDX-License-Identifier: GPL-2.0
/*
 * lrb unit tests of bad input and resource failures:
 * - channel geometry and configurations just inside and just outside
 *   every limit (-EINVAL, nothing allocated, nothing leaked);
 * - allocation failure injected at every allocation point of channel
 *   creation (-ENOMEM, nothing leaked), then a working channel;
 * - zero-length and oversize records, the exact largest record;
 * - the writer nesting limit, in every commit order, across channels;
 * - every write failure leaves the thread's nesting depth and RCU read
 *   side balanced (a leak would hang lrb_channel_destroy()).
 */
#include "test.h"

static u64 now = 100;

static u64 test_clock(void)
{
	return now;
}

#define CFG(m, a, h, b)							\
	TEST_CONFIG(LRB_MODE_##m, LRB_ALLOC_##a, LRB_WAKEUP_BY_WRITER,	\
		    LRB_HEADER_##h, b, .clock_read = test_clock)

/* A global channel's configuration with raw mode and header values. */
#define RAW_CFG(m, h)							\
	TEST_CONFIG((enum lrb_mode)(m), LRB_ALLOC_GLOBAL,		\
		    LRB_WAKEUP_BY_WRITER,				\
		    (enum lrb_header_layout)(h), 27, .clock_read = test_clock)

static const struct lrb_config cfg_dgc = CFG(DISCARD, GLOBAL, COMPACT, 27);
static const struct lrb_config cfg_dgl = CFG(DISCARD, GLOBAL, LARGE, 27);
static const struct lrb_config cfg_ogc = CFG(OVERWRITE, GLOBAL, COMPACT, 27);

static const struct lrb_config alloc_cfgs[] = {
	CFG(DISCARD, PER_CPU, COMPACT, 27),
	CFG(DISCARD, GLOBAL, LARGE, 27),
	CFG(OVERWRITE, PER_CPU, LARGE, 27),
	CFG(OVERWRITE, GLOBAL, COMPACT, 27),
};

/* Valid and invalid configurations for lrb_channel_create(). */
static const struct lrb_config cfg_bits0 = CFG(DISCARD, GLOBAL, COMPACT, 0);
static const struct lrb_config cfg_bits1 = CFG(DISCARD, GLOBAL, COMPACT, 1);
static const struct lrb_config cfg_bits31 = CFG(DISCARD, GLOBAL, COMPACT, 31);
static const struct lrb_config cfg_bits32 = CFG(DISCARD, GLOBAL, COMPACT, 32);
static const struct lrb_config cfg_bits99 = CFG(DISCARD, PER_CPU, COMPACT, 99);
static const struct lrb_config cfg_large0 = CFG(DISCARD, GLOBAL, LARGE, 0);
static const struct lrb_config cfg_large99 = CFG(OVERWRITE, GLOBAL, LARGE, 99);
static const struct lrb_config cfg_noclock =
	TEST_CONFIG(LRB_MODE_DISCARD, LRB_ALLOC_GLOBAL, LRB_WAKEUP_BY_WRITER,
		    LRB_HEADER_COMPACT, 27, .clock_read = NULL);
static const struct lrb_config cfg_badheader = RAW_CFG(LRB_MODE_DISCARD, 2);
static const struct lrb_config cfg_badheader2 = RAW_CFG(LRB_MODE_DISCARD, -1);
static const struct lrb_config cfg_badmode = RAW_CFG(2, LRB_HEADER_COMPACT);
static const struct lrb_config cfg_badmode2 =
	RAW_CFG(0x7fffffff, LRB_HEADER_LARGE);

struct geo_case {
	const struct lrb_config *cfg;
	unsigned long subbuf_size;
	unsigned long num_subbuf;
	unsigned int nr_cpus;
	int ret;
	const char *what;
};

static const struct geo_case geo_cases[] = {
	{ &cfg_dgc, 4096, 4, 1, 0, "smallest sub-buffer" },
	{ &cfg_dgc, 8192, 2, 1, 0, "8 KiB" },
	{ &cfg_dgc, 1UL << 20, 2, 1, 0, "1 MiB" },
	{ &cfg_dgc, 0, 4, 1, -EINVAL, "subbuf 0" },
	{ &cfg_dgc, 1, 4, 1, -EINVAL, "subbuf 1" },
	{ &cfg_dgc, 2048, 4, 1, -EINVAL, "subbuf 2048 (power of 2 < page)" },
	{ &cfg_dgc, 4095, 4, 1, -EINVAL, "subbuf 4095" },
	{ &cfg_dgc, 4097, 4, 1, -EINVAL, "subbuf 4097" },
	{ &cfg_dgc, 12288, 4, 1, -EINVAL, "subbuf 12288" },
	{ &cfg_dgc, 3UL << 20, 4, 1, -EINVAL, "subbuf 3 MiB" },
	{ &cfg_dgc, 1UL << 31, 1, 1, -EINVAL, "subbuf 2 GiB" },
	{ &cfg_dgc, 1UL << 40, 1, 1, -EINVAL, "subbuf 1 TiB" },
	{ &cfg_dgc, 1UL << 63, 1, 1, -EINVAL, "subbuf 2^63" },
	{ &cfg_dgc, ~0UL, 1, 1, -EINVAL, "subbuf ~0" },
	{ &cfg_dgc, 4096, 0, 1, -EINVAL, "num_subbuf 0" },
	{ &cfg_dgc, 4096, 1, 1, -EINVAL, "discard, num_subbuf 1" },
	{ &cfg_dgc, 4096, 3, 1, -EINVAL, "num_subbuf 3" },
	{ &cfg_dgc, 4096, 6, 1, -EINVAL, "num_subbuf 6" },
	{ &cfg_dgc, 4096, 32769, 1, -EINVAL, "num_subbuf 32769" },
	{ &cfg_dgc, 4096, 65536, 1, -EINVAL, "num_subbuf 65536" },
	{ &cfg_dgc, 4096, 1UL << 40, 1, -EINVAL, "num_subbuf 2^40" },
	{ &cfg_dgc, 4096, 1UL << 63, 1, -EINVAL, "num_subbuf 2^63" },
	{ &cfg_dgc, 4096, ~0UL, 1, -EINVAL, "num_subbuf ~0" },
	{ &cfg_ogc, 4096, 1, 1, -EINVAL, "overwrite, num_subbuf 1" },
	{ &cfg_ogc, 4096, 0, 1, -EINVAL, "overwrite, num_subbuf 0" },
	{ &cfg_ogc, 4096, 2, 1, 0, "overwrite, num_subbuf 2" },
	{ &cfg_dgc, 4096, 4, 0, -EINVAL, "global, nr_cpus 0" },
	{ &alloc_cfgs[0], 4096, 4, 0, -EINVAL, "per-cpu, nr_cpus 0" },
	{ &alloc_cfgs[0], 4096, 2, 64, 0, "per-cpu, nr_cpus 64" },
	{ &cfg_dgc, 4096, 4, 1000, 0, "global, nr_cpus ignored" },
	{ &cfg_bits0, 4096, 4, 1, -EINVAL, "compact, tsc_bits 0" },
	{ &cfg_bits1, 4096, 4, 1, 0, "compact, tsc_bits 1" },
	{ &cfg_bits31, 4096, 4, 1, 0, "compact, tsc_bits 31" },
	{ &cfg_bits32, 4096, 4, 1, -EINVAL, "compact, tsc_bits 32" },
	{ &cfg_bits99, 4096, 4, 1, -EINVAL, "compact, tsc_bits 99" },
	{ &cfg_large0, 4096, 4, 1, 0, "large, tsc_bits 0 (ignored)" },
	{ &cfg_large99, 4096, 4, 1, 0, "large, tsc_bits 99 (ignored)" },
	{ &cfg_noclock, 4096, 4, 1, -EINVAL, "no clock_read" },
	{ &cfg_badheader, 4096, 4, 1, -EINVAL, "header layout 2" },
	{ &cfg_badheader2, 4096, 4, 1, -EINVAL, "header layout -1" },
	{ &cfg_badmode, 4096, 4, 1, -EINVAL, "mode 2" },
	{ &cfg_badmode2, 4096, 4, 1, -EINVAL, "mode 0x7fffffff" },
};

static void test_limits(void)
{
	CHECK_EQ(LRB_MIN_SUBBUF_SIZE, 4096);
	CHECK_EQ(LRB_MAX_SUBBUF_SIZE, 1UL << 30);
	CHECK_EQ(LRB_MAX_NUM_SUBBUF, 32768);
	CHECK_EQ(LRB_MAX_NESTING, 4);
	CHECK_EQ(LRB_PACKET_HEADER_SIZE, 64);
}

static void test_geometry(void)
{
	struct lrb_chan *chan;
	unsigned int i;
	long before;
	int ret;

	for (i = 0; i < ARRAY_SIZE(geo_cases); i++) {
		const struct geo_case *g = &geo_cases[i];
		struct lrb_chan_attr attr = {
			.subbuf_size = g->subbuf_size,
			.num_subbuf = g->num_subbuf,
			.nr_cpus = g->nr_cpus,
			.stream_id = 1,
		};

		before = lrb_port_live_allocs();
		chan = NULL;
		ret = lrb_channel_create(g->cfg, &attr, &chan);
		CHECK_EQ(ret, g->ret);
		if (ret != g->ret)
			fprintf(stderr, "  case: %s\n", g->what);
		if (!ret) {
			CHECK(chan);
			CHECK(lrb_port_live_allocs() > before);
			if (chan)
				lrb_channel_destroy(chan);
		} else {
			CHECK_EQ(lrb_port_live_allocs(), before);
		}
		CHECK_EQ(lrb_port_live_allocs(), before);
	}
}

/*
 * The largest sub-buffer (1 GiB) is valid: with the first allocation made
 * to fail, creating it must get past validation to -ENOMEM.
 */
static void test_max_geometry(void)
{
	struct lrb_chan_attr attr = { .num_subbuf = 2, .nr_cpus = 1 };
	struct lrb_chan *chan = NULL;
	long before = lrb_port_live_allocs();
	int ret;

	attr.subbuf_size = 1UL << 30;
	lrb_port_fail_alloc_after(0);
	ret = lrb_channel_create(&cfg_dgc, &attr, &chan);
	lrb_port_fail_alloc_after(-1);
	CHECK_EQ(ret, -ENOMEM);
	CHECK_EQ(lrb_port_live_allocs(), before);

	attr.subbuf_size = 1UL << 31;
	lrb_port_fail_alloc_after(0);
	ret = lrb_channel_create(&cfg_dgc, &attr, &chan);
	lrb_port_fail_alloc_after(-1);
	CHECK_EQ(ret, -EINVAL);

	/* the largest ring: 32768 sub-buffers of a page (128 MiB) */
	attr.subbuf_size = 4096;
	attr.num_subbuf = 32768;
	ret = lrb_channel_create(&cfg_dgc, &attr, &chan);
	CHECK_EQ(ret, 0);
	if (!ret) {
		CHECK_EQ(chan->num_subbuf_order, 15);
		CHECK_EQ(lrb_event_write(&cfg_dgc, chan, 1, "abcdefgh", 8), 0);
		lrb_channel_destroy(chan);
	}
	CHECK_EQ(lrb_port_live_allocs(), before);
}

/* Drain @buf (reader open) and return the records; payloads checked. */
static unsigned long read_records(struct lrb_chan *chan, struct lrb_buf *buf)
{
	struct lrb_decoder dec = {
		.header = chan->cfg->header,
		.tsc_bits = chan->cfg->tsc_bits,
		.payload_size = test_payload_size,
	};
	struct lrb_packet_iter it;
	struct lrb_record rec;
	struct lrb_subbuf sb;
	unsigned long n = 0, guard = 0;
	u8 *data;
	int ret;

	while (guard++ < 100000 && !lrb_get_next_subbuf(buf, &sb)) {
		data = malloc(sb.packet_size);
		lrb_subbuf_copy(chan, &sb, 0, data, sb.packet_size);
		ret = lrb_packet_open(&it, &dec, data, sb.packet_size);
		CHECK_EQ(ret, 0);
		while (!ret) {
			u32 seq;

			ret = lrb_packet_next(&it, &rec);
			if (ret != 1)
				break;
			ret = 0;
			seq = rec.len >= 8 ? test_payload_seq(rec.payload) : 0;
			CHECK(test_check_payload(rec.payload, rec.id, rec.len,
						 seq));
			n++;
		}
		CHECK_EQ(ret, 0);
		free(data);
		lrb_put_subbuf(buf, &sb);
	}
	return n;
}

static u8 payload[1 << 20];

static int put(const struct lrb_config *cfg, struct lrb_chan *chan, u32 id,
	       u32 len, u32 seq)
{
	if (len && len <= sizeof(payload))
		test_fill_payload(payload, id, len, seq);
	return lrb_event_write(cfg, chan, id, payload, len);
}

/* Create @cfg with the n-th allocation failing, for every n. */
static void alloc_fail_everywhere(const struct lrb_config *cfg,
				  unsigned int nr_cpus)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = 8192,
		.num_subbuf = 4,
		.nr_cpus = nr_cpus,
		.stream_id = 2,
	};
	unsigned int nr_bufs = cfg->alloc == LRB_ALLOC_GLOBAL ? 1 : nr_cpus;
	long base = lrb_port_live_allocs(), before, n;
	unsigned long i, enomem = 0, leaks = 0, other = 0;
	struct lrb_chan *chan = NULL;
	struct lrb_buf *buf;
	int ret = -1;

	for (n = 0; n < 100000; n++) {
		before = lrb_port_live_allocs();
		chan = NULL;
		lrb_port_fail_alloc_after(n);
		ret = lrb_channel_create(cfg, &attr, &chan);
		lrb_port_fail_alloc_after(-1);
		if (!ret)
			break;
		if (ret == -ENOMEM)
			enomem++;
		else
			other++;
		if (lrb_port_live_allocs() != before) {
			if (!leaks)
				fprintf(stderr,
					"  leak: allocation %ld failed, %ld allocations left\n",
					n, lrb_port_live_allocs() - before);
			leaks++;
		}
	}
	CHECK_EQ(ret, 0);
	CHECK_EQ(other, 0);
	CHECK_EQ(leaks, 0);
	CHECK_EQ(enomem, n);
	/* every page is its own allocation */
	CHECK(n >= (long)(nr_bufs * 4 * 2));
	if (ret)
		return;
	CHECK(lrb_port_live_allocs() - base >= (long)(nr_bufs * 4 * 2));
	CHECK(lrb_port_live_allocs() - base <= n);
	if (getenv("TEST_VERBOSE"))
		fprintf(stderr, "  %u buffers: %ld allocation points\n",
			nr_bufs, n);

	/* the channel that finally got created works */
	for (i = 0; i < 20; i++)
		CHECK_EQ(put(cfg, chan, 1, 100, i), 0);
	lrb_channel_flush(chan);
	for (i = 0, n = 0; i < nr_bufs; i++) {
		buf = lrb_channel_buf(chan, i);
		CHECK_EQ(lrb_reader_open(buf), 0);
		n += read_records(chan, buf);
		lrb_reader_close(buf);
	}
	CHECK_EQ(n, 20);
	lrb_channel_destroy(chan);
	CHECK_EQ(lrb_port_live_allocs(), base);

	/* failing later than the last allocation changes nothing */
	lrb_port_fail_alloc_after(100000);
	ret = lrb_channel_create(cfg, &attr, &chan);
	lrb_port_fail_alloc_after(-1);
	CHECK_EQ(ret, 0);
	if (!ret)
		lrb_channel_destroy(chan);
	CHECK_EQ(lrb_port_live_allocs(), base);
}

static void test_alloc_failure(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(alloc_cfgs); i++) {
		alloc_fail_everywhere(&alloc_cfgs[i], 1);
		alloc_fail_everywhere(&alloc_cfgs[i], 3);
	}
}

/* Reserve @n nested records and commit them: nesting depth is balanced. */
static void nest_ok(const struct lrb_config *cfg, struct lrb_chan *chan,
		    unsigned int n)
{
	struct lrb_ctx ctx[LRB_MAX_NESTING];
	unsigned int i, got = 0;

	for (i = 0; i < n && i < LRB_MAX_NESTING; i++) {
		test_fill_payload(payload, 2, 8, 1000 + i);
		if (lrb_reserve(cfg, chan, &ctx[i], 2, 8))
			break;
		lrb_write(&ctx[i], payload, 8);
		got++;
	}
	CHECK_EQ(got, n);
	while (got)
		lrb_commit(cfg, &ctx[--got]);
}

static void test_zero_length(void)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = 4096, .num_subbuf = 4, .nr_cpus = 1,
	};
	struct lrb_chan *chan;
	struct lrb_stats st0, st;
	struct lrb_buf *buf;
	struct lrb_ctx ctx;
	int i;

	REQUIRE_EQ(lrb_channel_create(&cfg_dgc, &attr, &chan), 0);
	buf = lrb_channel_buf(chan, 0);
	CHECK_EQ(lrb_reader_open(buf), 0);
	lrb_buf_stats(buf, &st0);
	for (i = 0; i < 10; i++) {
		CHECK_EQ(lrb_reserve(&cfg_dgc, chan, &ctx, 1, 0), -EINVAL);
		CHECK_EQ(lrb_event_write(&cfg_dgc, chan, 1, payload, 0),
			 -EINVAL);
	}
	lrb_buf_stats(buf, &st);
	CHECK_EQ(st.produced, st0.produced);
	test_check_lost(buf, 0, 0, 0);
	nest_ok(&cfg_dgc, chan, 4);
	/* one record in the middle of a packet, then zero lengths again */
	CHECK_EQ(put(&cfg_dgc, chan, 1, 8, 0), 0);
	lrb_buf_stats(buf, &st0);
	CHECK_EQ(lrb_event_write(&cfg_dgc, chan, 1, payload, 0), -EINVAL);
	lrb_buf_stats(buf, &st);
	CHECK_EQ(st.produced, st0.produced);
	test_check_lost(buf, 0, 0, 0);
	lrb_channel_flush(chan);
	CHECK_EQ(read_records(chan, buf), 4 + 1);
	lrb_reader_close(buf);
	lrb_channel_destroy(chan);
}

/* Records larger than a sub-buffer minus its header: -EMSGSIZE. */
static void oversize(const struct lrb_config *cfg, unsigned long sbsize)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = sbsize, .num_subbuf = 4, .nr_cpus = 1,
	};
	u32 room = sbsize - 64;
	u32 hl = cfg->header == LRB_HEADER_COMPACT ? 4 : 8;
	u32 ext_id = cfg->header == LRB_HEADER_COMPACT ? 40 : 0xFFFFFFFFU;
	unsigned long big = 0, ok = 0;
	struct lrb_subbuf sb;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	struct lrb_ctx ctx;

	REQUIRE_EQ(lrb_channel_create(cfg, &attr, &chan), 0);
	buf = lrb_channel_buf(chan, 0);
	CHECK_EQ(lrb_reader_open(buf), 0);
	now = 100;

#define BIG(id, len)							\
	do {								\
		CHECK_EQ(put(cfg, chan, id, len, 0), -EMSGSIZE);	\
		big++;							\
	} while (0)
#define FITS(id, len)							\
	do {								\
		CHECK_EQ(put(cfg, chan, id, len, 7), 0);		\
		ok++;							\
		ok -= read_records(chan, buf);				\
	} while (0)

	BIG(1, room - hl + 1);
	BIG(1, room - hl + 4);
	BIG(1, room);
	BIG(1, sbsize);
	BIG(1, sbsize * 2);
	BIG(1, 0x7FFFFFFF);
	BIG(1, 0xFFFFFFFF);
	CHECK_EQ(lrb_reserve(cfg, chan, &ctx, 1, 0xFFFFFFF0U), -EMSGSIZE);
	big++;
	test_check_lost(buf, 0, big, 0);
	/* the largest record fills the packet exactly */
	FITS(1, room - hl);
	CHECK_EQ(ok, 0);
	/* after a small record, it goes to the next packet */
	CHECK_EQ(put(cfg, chan, 1, 8, 1), 0);
	ok++;
	FITS(1, room - hl);
	CHECK_EQ(lrb_get_next_subbuf(buf, &sb), -EAGAIN);
	lrb_buf_flush(buf);
	CHECK_EQ(lrb_get_next_subbuf(buf, &sb), -EAGAIN);
	CHECK_EQ(ok, 0);
	/* the extended header leaves 12 bytes fewer */
	BIG(ext_id, room - 16 + 1);
	FITS(ext_id, room - 16);
	CHECK_EQ(ok, 0);
	nest_ok(cfg, chan, 4);
	test_check_lost(buf, 0, big, 0);
	lrb_channel_flush(chan);
	CHECK_EQ(read_records(chan, buf), 4);
#undef BIG
#undef FITS
	lrb_reader_close(buf);
	lrb_channel_destroy(chan);
}

static void test_oversize(void)
{
	oversize(&cfg_dgc, 4096);
	oversize(&cfg_dgl, 4096);
	oversize(&cfg_dgc, 16384);
	oversize(&cfg_ogc, 8192);
}

/* A full buffer in discard mode: -ENOBUFS, counted, nesting balanced. */
static void test_full(void)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = 4096, .num_subbuf = 2, .nr_cpus = 1,
	};
	unsigned long ok = 0, full = 0, i;
	struct lrb_chan *chan;
	struct lrb_buf *buf;

	REQUIRE_EQ(lrb_channel_create(&cfg_dgc, &attr, &chan), 0);
	buf = lrb_channel_buf(chan, 0);
	now = 100;
	for (i = 0; i < 100; i++)
		test_tally(put(&cfg_dgc, chan, 1, 100, i), -ENOBUFS, &ok,
			   &full);
	/* 38 records of 104 bytes per packet, two packets */
	CHECK_EQ(ok, 76);
	CHECK_EQ(full, 24);
	test_check_lost(buf, full, 0, 0);
	/* a record needing a reservation fails the same way */
	{
		struct lrb_ctx ctx;

		CHECK_EQ(lrb_reserve(&cfg_dgc, chan, &ctx, 1, 100), -ENOBUFS);
		full++;
	}
	test_check_lost(buf, full, 0, 0);
	CHECK_EQ(lrb_reader_open(buf), 0);
	lrb_buf_flush(buf);
	CHECK_EQ(read_records(chan, buf), ok);
	/* room again */
	nest_ok(&cfg_dgc, chan, 4);
	lrb_buf_flush(buf);
	CHECK_EQ(read_records(chan, buf), 4);
	test_check_lost(buf, full, 0, 0);
	lrb_reader_close(buf);
	lrb_channel_destroy(chan);
}

static void test_nesting(void)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = 4096, .num_subbuf = 4, .nr_cpus = 1,
	};
	struct lrb_ctx ctx[LRB_MAX_NESTING + 1];
	struct lrb_chan *chan, *chan2;
	struct lrb_buf *buf, *buf2;
	unsigned long nest = 0, written = 0;
	int i;

	REQUIRE_EQ(lrb_channel_create(&cfg_dgc, &attr, &chan), 0);
	REQUIRE_EQ(lrb_channel_create(&cfg_dgl, &attr, &chan2), 0);
	buf = lrb_channel_buf(chan, 0);
	buf2 = lrb_channel_buf(chan2, 0);
	now = 100;

	/* 4 open reservations, the 5th fails; commit last-in first-out */
	for (i = 0; i < LRB_MAX_NESTING; i++) {
		test_fill_payload(payload, 3, 8 + i, i);
		CHECK_EQ(lrb_reserve(&cfg_dgc, chan, &ctx[i], 3, 8 + i), 0);
		lrb_write(&ctx[i], payload, 8 + i);
	}
	CHECK_EQ(lrb_reserve(&cfg_dgc, chan, &ctx[4], 3, 8), -EBUSY);
	nest++;
	CHECK_EQ(put(&cfg_dgc, chan, 3, 8, 99), -EBUSY);
	nest++;
	test_check_lost(buf, 0, 0, nest);
	for (i = LRB_MAX_NESTING - 1; i >= 0; i--)
		lrb_commit(&cfg_dgc, &ctx[i]);
	written += LRB_MAX_NESTING;

	/* again, committing first-in first-out */
	for (i = 0; i < LRB_MAX_NESTING; i++) {
		test_fill_payload(payload, 4, 12, 10 + i);
		CHECK_EQ(lrb_reserve(&cfg_dgc, chan, &ctx[i], 4, 12), 0);
		lrb_write(&ctx[i], payload, 12);
	}
	CHECK_EQ(lrb_reserve(&cfg_dgc, chan, &ctx[4], 4, 12), -EBUSY);
	nest++;
	/* the depth is per thread: another channel is refused too */
	CHECK_EQ(put(&cfg_dgl, chan2, 4, 8, 98), -EBUSY);
	test_check_lost(buf2, 0, 0, 1);
	for (i = 0; i < LRB_MAX_NESTING; i++)
		lrb_commit(&cfg_dgc, &ctx[i]);
	written += LRB_MAX_NESTING;
	test_check_lost(buf, 0, 0, nest);

	/* a discarded reservation frees its nesting level */
	for (i = 0; i < LRB_MAX_NESTING; i++) {
		test_fill_payload(payload, 5, 8, 20 + i);
		CHECK_EQ(lrb_reserve(&cfg_dgc, chan, &ctx[i], 5, 8), 0);
		lrb_write(&ctx[i], payload, 8);
	}
	CHECK_EQ(lrb_try_discard(&cfg_dgc, &ctx[3]), 0);
	test_fill_payload(payload, 5, 8, 23);
	CHECK_EQ(lrb_reserve(&cfg_dgc, chan, &ctx[3], 5, 8), 0);
	lrb_write(&ctx[3], payload, 8);
	CHECK_EQ(lrb_reserve(&cfg_dgc, chan, &ctx[4], 5, 8), -EBUSY);
	nest++;
	/* a failed discard does not free it: the record must be committed */
	CHECK_EQ(lrb_try_discard(&cfg_dgc, &ctx[0]), -EBUSY);
	CHECK_EQ(lrb_reserve(&cfg_dgc, chan, &ctx[4], 5, 8), -EBUSY);
	nest++;
	for (i = 0; i < LRB_MAX_NESTING; i++)
		lrb_commit(&cfg_dgc, &ctx[i]);
	written += LRB_MAX_NESTING;
	test_check_lost(buf, 0, 0, nest);

	/* and all levels are free again */
	nest_ok(&cfg_dgc, chan, 4);
	nest_ok(&cfg_dgl, chan2, 4);
	written += 4;
	CHECK_EQ(put(&cfg_dgc, chan, 6, 8, 30), 0);
	written++;
	test_check_lost(buf, 0, 0, nest);

	lrb_channel_flush(chan);
	lrb_channel_flush(chan2);
	CHECK_EQ(lrb_reader_open(buf), 0);
	CHECK_EQ(lrb_reader_open(buf2), 0);
	CHECK_EQ(read_records(chan, buf), written);
	CHECK_EQ(read_records(chan2, buf2), 4);
	lrb_reader_close(buf);
	lrb_reader_close(buf2);
	lrb_channel_destroy(chan);
	lrb_channel_destroy(chan2);
}

int main(void)
{
	long base;

	test_main_begin(30);
	CHECK_EQ(lrb_thread_init(), 0);
	base = lrb_port_live_allocs();
	TEST_RUN(test_limits);
	TEST_RUN(test_geometry);
	TEST_RUN(test_max_geometry);
	TEST_RUN(test_alloc_failure);
	TEST_RUN(test_zero_length);
	TEST_RUN(test_oversize);
	TEST_RUN(test_full);
	TEST_RUN(test_nesting);
	test_current = "main";
	CHECK_EQ(lrb_port_live_allocs(), base);
	return test_main_end("unit_badinput");
}
