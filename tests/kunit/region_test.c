// SPDX-License-Identifier: GPL-2.0
/*
 * lrb KUnit: what lrb.ko builds persistent kernel channels from, in both
 * builds (kernel-module/region.c is the glue around it):
 *
 * - lrb_events_payload_size(): the decoder recovery validates a kernel
 *   client's records with, from its LRB_EVENT() descriptions: exact sizes
 *   with sequences and strings, and every truncation or unknown id refused;
 * - lrb_recovery_load(): a persistent channel is written (wrapping its
 *   ring), recovered with that decoder, and its packets loaded into a
 *   discard channel: a reader takes exactly the packets recovery kept,
 *   byte for byte as lrb_recovery_copy() hands them out, their records
 *   the newest ones without a gap, and the buffer's stats count them;
 *   records discarded after a later one was reserved (lrb_discard()) are
 *   skip records there, which neither recovery nor the reader shows;
 * - lrb_region_release(): a released region holds nothing to recover.
 */
#include "lrb_kunit.h"
#include <lrb/event.h>
#include <lrb/region.h>

#define SB LRBK_SB4K
#define NSB 4
#define NAME "persist"

LRB_EVENT(lrbk_persist, 5,
	  LRB_INTEGER(u64, seq),
	  LRB_INTEGER(u16, len),
	  LRB_SEQUENCE(u8, data, len),
	  LRB_STRING(name));

static const struct lrb_event_desc *const region_events[] = {
	&lrb_event_lrbk_persist,
};

static const struct lrb_metadata_attr region_meta = {
	.events = region_events,
	.nr_events = ARRAY_SIZE(region_events),
};

/* What recovery validates the records with: the events' sizes. */
static const struct lrb_decoder region_dec = {
	.payload_size = lrb_events_payload_size,
	.priv = (void *)&region_meta,
};

static const struct lrb_config persist_cfg = {
	.mode = LRB_MODE_OVERWRITE,
	.alloc = LRB_ALLOC_PER_CPU,
	.wakeup = LRB_WAKEUP_BY_WRITER,
	.header = LRB_HEADER_COMPACT,
	.tsc_bits = 27,
	.cb = { .clock_read = lrbk_clock },
	.persistent = true,
};

static const struct lrb_config load_cfg = LRBK_CONFIG(DISCARD, PER_CPU,
						      COMPACT);

static u16 len_of(u64 seq)
{
	/* a 32-bit modulo, which i386 has: the test's counts stay below 2^32 */
	return LRBK_LEN((u32)seq % 97);
}

static u8 byte_of(u64 seq, unsigned int i)
{
	return (u8)(seq * 7 + i);
}

/* A payload of lrbk_persist as its write function stores it. */
static unsigned long build(u8 *p, u64 seq, u16 len, const char *name)
{
	unsigned long n = strlen(name) + 1;
	unsigned int i;

	memcpy(p, &seq, sizeof(seq));
	memcpy(p + 8, &len, sizeof(len));
	for (i = 0; i < len; i++)
		p[10 + i] = byte_of(seq, i);
	memcpy(p + 10 + len, name, n);
	return 10 + len + n;
}

static void region_payload_size(struct kunit *test)
{
	const struct lrb_decoder *dec = &region_dec;
	u8 *p = kunit_kzalloc(test, 512, GFP_KERNEL);
	unsigned long n, cut;

	KUNIT_ASSERT_NOT_NULL(test, p);
	n = build(p, 42, 300, NAME);
	KUNIT_EXPECT_EQ(test, n, 10UL + 300 + sizeof(NAME));
	KUNIT_EXPECT_EQ(test, lrb_events_payload_size(dec, 5, p, 512), (long)n);
	KUNIT_EXPECT_EQ(test, lrb_events_payload_size(dec, 5, p, n), (long)n);
	/* every truncation: the sequence or the string's NUL is missing */
	for (cut = 0; cut < n; cut++)
		KUNIT_EXPECT_EQ_MSG(test, lrb_events_payload_size(dec, 5, p, cut),
				    (long)-EBADMSG, "payload cut to %lu bytes",
				    cut);
	KUNIT_EXPECT_EQ(test, lrb_events_payload_size(dec, 6, p, 512),
			(long)-EBADMSG);
	/* a length far past the bytes there */
	p[8] = 0xff;
	p[9] = 0xff;
	KUNIT_EXPECT_EQ(test, lrb_events_payload_size(dec, 5, p, 512),
			(long)-EBADMSG);
	/* an empty sequence and an empty string */
	n = build(p, 1, 0, "");
	KUNIT_EXPECT_EQ(test, n, 11UL);
	KUNIT_EXPECT_EQ(test, lrb_events_payload_size(dec, 5, p, 512), 11L);
}

/*
 * The attributes of the test's persistent channel in @attr, with a
 * page-aligned region of zeroed bytes of the size it takes, freed with
 * the test.
 */
static void region_attr(struct kunit *test, struct lrb_chan_attr *attr)
{
	u64 size;
	u8 *raw;

	*attr = (struct lrb_chan_attr){
		.subbuf_size = SB,
		.num_subbuf = NSB,
		.nr_cpus = nr_cpu_ids,
		.stream_id = LRBK_STREAM_ID,
		.run_id = 77,
		.metadata = "/* CTF 1.8 */",
	};
	size = lrb_region_size(&persist_cfg, attr);
	KUNIT_ASSERT_GT(test, size, 0ULL);
	raw = kunit_kzalloc(test, size + PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, raw);
	attr->region_size = size;
	attr->region = (void *)(((unsigned long)raw + PAGE_SIZE - 1) &
				~(PAGE_SIZE - 1));
}

/*
 * Records of one loaded packet: payloads intact, seq following @next;
 * bytes of skip records added to @skipped.
 */
static void check_records(struct kunit *test, const struct lrb_decoder *dec,
			  const u8 *pkt, unsigned long size, u64 *next,
			  unsigned long *records, unsigned long *skipped)
{
	struct lrb_packet_iter it;
	struct lrb_record rec;
	unsigned int i;
	u64 seq;
	u16 len;
	int ret;

	KUNIT_ASSERT_EQ(test, lrb_packet_open(&it, dec, pkt, size), 0);
	while ((ret = lrb_packet_next(&it, &rec)) > 0) {
		memcpy(&seq, rec.payload, sizeof(seq));
		memcpy(&len, rec.payload + 8, sizeof(len));
		/* the first record kept may be any, the others follow */
		if (*records)
			KUNIT_EXPECT_EQ(test, seq, *next);
		KUNIT_EXPECT_EQ(test, len, len_of(seq));
		for (i = 0; i < len; i++)
			if (rec.payload[10 + i] != byte_of(seq, i))
				break;
		KUNIT_EXPECT_EQ_MSG(test, i, (unsigned int)len,
				    "record %llu: data byte %u", seq, i);
		KUNIT_EXPECT_EQ_MSG(test,
				    strcmp((const char *)rec.payload + 10 + len,
					   NAME), 0,
				    "record %llu: its string", seq);
		*next = seq + 1;
		(*records)++;
	}
	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "decode: %s", it.error);
	*skipped += it.skipped;
}

static void region_load(struct kunit *test)
{
	const u64 total = 4000;
	unsigned long records = 0, packets = 0, kept = 0, skipped = 0;
	struct lrb_buf_counters st;
	struct lrb_chan_attr attr;
	struct lrb_recovery *rec;
	struct lrb_chan *chan, *ld;
	struct lrb_subbuf sb;
	struct lrb_buf *buf;
	struct lrb_ctx ctx;
	const char *why;
	unsigned int cpu, b, i;
	u64 seq, next = 0;
	u8 *data, *pkt, *want;
	long len;

	cpu = lrbk_pin();
	region_attr(test, &attr);
	data = kunit_kzalloc(test, LRBK_LEN(97), GFP_KERNEL);
	pkt = kunit_kzalloc(test, SB, GFP_KERNEL);
	want = kunit_kzalloc(test, SB, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, data && pkt && want);
	KUNIT_ASSERT_EQ(test, lrb_channel_create(&persist_cfg, &attr, &chan), 0);
	/* many times the ring: the oldest packets are overwritten */
	for (seq = 0; seq < total; seq++) {
		for (i = 0; i < len_of(seq); i++)
			data[i] = byte_of(seq, i);
		lrbk_tick(10);
		/* one in 8 after a record reserved, to discard (bad bytes) */
		if (seq % 8 == 1) {
			KUNIT_ASSERT_EQ(test,
					lrb_reserve(&persist_cfg, chan, &ctx, 5,
						    len_of(seq) + 1),
					0);
			lrb_write(&ctx, data, len_of(seq) + 1);
		}
		KUNIT_ASSERT_EQ(test,
				lrb_write_lrbk_persist(&persist_cfg, chan, seq,
						       len_of(seq), data, NAME),
				0);
		if (seq % 8 == 1)
			KUNIT_ASSERT_EQ(test, lrb_discard(&persist_cfg, &ctx), 0);
	}
	lrb_channel_flush(chan);
	lrb_channel_destroy(chan);

	KUNIT_ASSERT_EQ(test,
			lrb_region_recover(attr.region, attr.region_size,
					   &region_dec, &rec, &why),
			0);
	KUNIT_EXPECT_EQ(test, rec->header.run_id, 77ULL);
	KUNIT_ASSERT_EQ(test, rec->nr_bufs, attr.nr_cpus);
	for (b = 0; b < rec->nr_bufs; b++) {
		const struct lrb_recovery_stats *rs = &rec->bufs[b].stats;

		for (i = 0; i < LRB_DROP_NR; i++)
			KUNIT_EXPECT_EQ_MSG(test, rs->drop_bytes[i], 0ULL,
					    "buffer %u, drop cause %u", b, i);
		/* the loss counters agree with the packets' counts */
		KUNIT_EXPECT_EQ_MSG(test, rs->untrusted, 0U, "buffer %u", b);
		if (b != cpu)
			KUNIT_EXPECT_EQ(test, rec->bufs[b].nr_packets, 0U);
	}
	/* the whole ring but the packet being overwritten */
	KUNIT_EXPECT_GE(test, rec->bufs[cpu].nr_packets, NSB - 1U);

	/* a channel of another geometry does not take them */
	ld = lrbk_chan_new(test, &load_cfg, SB, NSB * 2);
	KUNIT_EXPECT_EQ(test, lrb_recovery_load(rec, ld), -EINVAL);
	lrbk_chan_destroy(test, ld);

	ld = lrbk_chan_new(test, &load_cfg, SB, NSB);
	KUNIT_ASSERT_EQ(test, lrb_recovery_load(rec, ld), 0);
	buf = lrb_channel_nth_buf(ld, cpu);
	KUNIT_ASSERT_EQ(test, lrb_reader_open(buf), 0);
	while (lrb_get_next_subbuf(buf, &sb) == 0) {
		len = lrb_recovery_copy(rec, cpu, packets, want, SB);
		KUNIT_ASSERT_GT(test, len, 0L);
		KUNIT_EXPECT_EQ(test, sb.packet_size, (unsigned long)len);
		KUNIT_ASSERT_EQ(test, lrb_subbuf_copy(ld, &sb, 0, pkt, len), 0);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(pkt, want, len), 0,
				    "packet %lu differs from the recovered one",
				    packets);
		check_records(test, &rec->dec, pkt, len, &next, &records,
			      &skipped);
		KUNIT_ASSERT_EQ(test, lrb_put_subbuf(buf, &sb), 0);
		packets++;
	}
	lrb_reader_close(buf);
	KUNIT_EXPECT_EQ(test, packets, (unsigned long)rec->bufs[cpu].nr_packets);
	KUNIT_EXPECT_EQ(test, (u64)records, rec->bufs[cpu].stats.records);
	/* the newest records, up to the last one written */
	KUNIT_EXPECT_EQ(test, next, total);
	KUNIT_EXPECT_GT(test, records, 0UL);
	KUNIT_EXPECT_GT(test, skipped, 0UL);
	lrb_buf_stats(buf, &st);
	KUNIT_EXPECT_EQ(test, st.records_written, (u64)records);
	for (b = 0; b < rec->nr_bufs; b++)
		kept += rec->bufs[b].stats.records;
	KUNIT_EXPECT_EQ(test, kept, records);
	lrb_recovery_free(rec);
}

static void region_release(struct kunit *test)
{
	const struct lrb_decoder *dec = &region_dec;
	struct lrb_region_header h;
	struct lrb_chan_attr attr;
	struct lrb_recovery *rec;
	struct lrb_chan *chan;
	unsigned long size;
	const char *why;
	void *region;

	region_attr(test, &attr);
	region = attr.region;
	size = attr.region_size;
	KUNIT_ASSERT_EQ(test, lrb_channel_create(&persist_cfg, &attr, &chan), 0);
	lrb_channel_destroy(chan);
	KUNIT_EXPECT_NULL(test, lrb_region_check(region, size, &h));
	KUNIT_ASSERT_EQ(test, lrb_region_recover(region, size, dec, &rec, &why),
			0);
	lrb_recovery_free(rec);
	lrb_region_release(region);
	why = lrb_region_check(region, size, &h);
	KUNIT_EXPECT_TRUE_MSG(test,
			      why && !strcmp(why, "its previous run was released"),
			      "lrb_region_check(): %s", why ?: "valid");
	KUNIT_EXPECT_EQ(test, lrb_region_recover(region, size, dec, &rec, &why),
			-ENODATA);
	KUNIT_EXPECT_NULL(test, rec);
	/* a new channel lays the released region out afresh */
	KUNIT_ASSERT_EQ(test, lrb_channel_create(&persist_cfg, &attr, &chan), 0);
	lrb_channel_destroy(chan);
	KUNIT_EXPECT_NULL(test, lrb_region_check(region, size, &h));
}

static struct kunit_case region_cases[] = {
	KUNIT_CASE(region_payload_size),
	KUNIT_CASE(region_load),
	KUNIT_CASE(region_release),
	{}
};

static struct kunit_suite region_suite = {
	.name = "lrb_region",
	.test_cases = region_cases,
};
kunit_test_suite(region_suite);
