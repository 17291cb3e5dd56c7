// SPDX-License-Identifier: GPL-2.0
/*
 * lrb unit tests of the record decoder (lrb/decode.h) and of the record
 * header forms the writer produces:
 * - packets built by hand, byte by byte, in every header form (compact
 *   with several tsc_bits, large, extended forms), timestamp rebuilding
 *   across wraps of the low bits, padding after the content;
 * - packets written by the library with a controlled clock: the header
 *   form of every record follows the rules and timestamps decode to the
 *   values the writer read;
 * - corrupt packets: every header check, records and payloads crossing
 *   the end of the content, unknown events, absurd payload sizes, the
 *   packet truncated at every byte, bytes flipped everywhere, random data.
 *   Buffers are allocated at their exact size so that AddressSanitizer
 *   catches any read out of bounds.
 */
#include "test.h"

#define PK_MAX 8192
#define PK_RECS 1024

/* ------------------------------------------------------------------ */
/* Packets built by hand.                                             */

struct pk_rec {
	u32 id;
	u64 ts;
	u32 len;
	u32 seq;
	bool ext;
	unsigned long off;	/* record header */
	unsigned long end;	/* after the payload */
	unsigned long aend;	/* after the alignment padding */
};

struct pk {
	u8 data[PK_MAX];
	unsigned long pos;
	unsigned long size;	/* packet size, after pk_finish() */
	enum lrb_header_layout layout;
	unsigned int bits;
	u64 begin;
	u64 last;
	u32 seq;
	struct pk_rec r[PK_RECS];
	unsigned int n;
};

static struct pk pk_a, pk_b;

static unsigned long align4(unsigned long x)
{
	return (x + 3) & ~3UL;
}

static u32 ext_id_of(enum lrb_header_layout layout, unsigned int bits)
{
	if (layout == LRB_HEADER_COMPACT)
		return (u32)((1ULL << (32 - bits)) - 1);
	return LRB_LARGE_ID_EXTENDED;
}

/*
 * Whether the writer rules demand the extended form: the skip record's id
 * (all ones but the lowest bit) and the extended one do not fit.
 */
static bool needs_ext(enum lrb_header_layout layout, unsigned int bits,
		      u32 id, u64 delta)
{
	if (layout == LRB_HEADER_COMPACT)
		return id >= ext_id_of(layout, bits) - (bits < 31) ||
		       (delta >> bits);
	return id >= LRB_LARGE_ID_SKIP || (delta >> 32);
}

static void pk_init(struct pk *p, enum lrb_header_layout layout,
		    unsigned int bits, u64 begin)
{
	memset(p, 0, sizeof(*p));
	p->layout = layout;
	p->bits = bits;
	p->begin = begin;
	p->last = begin;
	p->pos = LRB_PACKET_HEADER_SIZE;
}

static void pk_add(struct pk *p, u32 id, u64 ts, u32 len, bool force_ext)
{
	struct pk_rec *r = &p->r[p->n];
	u8 *q = p->data + p->pos;
	unsigned int hl;
	u32 w[2];

	if (p->n >= PK_RECS || p->pos + 16 + len + 4 > PK_MAX) {
		CHECK(!"hand-made packet too big");
		return;
	}
	r->id = id;
	r->ts = ts;
	r->len = len;
	r->seq = p->seq++;
	r->off = p->pos;
	r->ext = force_ext || needs_ext(p->layout, p->bits, id, ts - p->last);
	if (r->ext) {
		w[0] = ext_id_of(p->layout, p->bits);
		w[1] = id;
		memcpy(q, w, 8);
		memcpy(q + 8, &ts, 8);
		hl = 16;
	} else if (p->layout == LRB_HEADER_COMPACT) {
		w[0] = id | (u32)ts << (32 - p->bits);
		memcpy(q, w, 4);
		hl = 4;
	} else {
		w[0] = id;
		w[1] = (u32)ts;
		memcpy(q, w, 8);
		hl = 8;
	}
	test_fill_payload(q + hl, id, len, r->seq);
	r->end = r->off + hl + len;
	r->aend = align4(r->end);
	memset(p->data + r->end, 0, r->aend - r->end);
	p->pos = r->aend;
	p->last = ts;
	p->n++;
}

static void pk_finish(struct pk *p, unsigned long packet_size)
{
	struct lrb_packet_header h = {
		.magic = LRB_PACKET_MAGIC,
		.stream_id = 3,
		.timestamp_begin = p->begin,
		.timestamp_end = p->last,
		.content_size = p->pos * 8,
		.packet_size = packet_size * 8,
		.packet_seq_num = 9,
		.events_discarded = 2,
		.cpu_id = 1,
		.header_size = LRB_PACKET_HEADER_SIZE,
	};

	if (packet_size < p->pos || packet_size > PK_MAX) {
		CHECK(!"bad hand-made packet size");
		return;
	}
	memcpy(p->data, &h, sizeof(h));
	memset(p->data + p->pos, 0, packet_size - p->pos);
	p->size = packet_size;
}

static void set_u64(u8 *data, size_t off, u64 v)
{
	memcpy(data + off, &v, sizeof(v));
}

static void set_u32(u8 *data, size_t off, u32 v)
{
	memcpy(data + off, &v, sizeof(v));
}

/* A valid packet header of @content and @packet bytes at @data. */
static void make_header(u8 *data, u64 begin, unsigned long content,
			unsigned long packet)
{
	struct lrb_packet_header h = {
		.magic = LRB_PACKET_MAGIC,
		.timestamp_begin = begin,
		.timestamp_end = begin,
		.content_size = content * 8,
		.packet_size = packet * 8,
		.header_size = LRB_PACKET_HEADER_SIZE,
	};

	memcpy(data, &h, sizeof(h));
}

/* A heap copy of exactly @n bytes (at least 1 allocated) of @src. */
static u8 *exact_copy(const u8 *src, unsigned long n)
{
	u8 *p = malloc(n ? n : 1);

	if (n)
		memcpy(p, src, n);
	return p;
}

static void dec_init(struct lrb_decoder *dec, enum lrb_header_layout layout,
		     unsigned int bits)
{
	memset(dec, 0, sizeof(*dec));
	dec->header = layout;
	dec->tsc_bits = bits;
	dec->payload_size = test_payload_size;
}

/* Decode @data and expect exactly the records of @p. */
static void expect_records(const struct pk *p, const u8 *data,
			   unsigned long avail)
{
	struct lrb_packet_iter it;
	struct lrb_decoder dec;
	struct lrb_record rec;
	unsigned int i;
	int ret;

	dec_init(&dec, p->layout, p->bits);
	ret = lrb_packet_open(&it, &dec, data, avail);
	REQUIRE_EQ(ret, 0);
	CHECK(it.base == data);
	CHECK(it.dec == &dec);
	CHECK_EQ(it.content, p->pos);
	CHECK_EQ(it.pos, LRB_PACKET_HEADER_SIZE);
	CHECK_EQ(it.last_ts, p->begin);
	CHECK(!memcmp(&it.header, data, sizeof(it.header)));
	CHECK_EQ(it.header.magic, LRB_PACKET_MAGIC);
	CHECK_EQ(it.header.stream_id, 3);
	CHECK_EQ(it.header.cpu_id, 1);
	CHECK_EQ(it.header.packet_seq_num, 9);
	CHECK_EQ(it.header.events_discarded, 2);
	for (i = 0; i < p->n; i++) {
		const struct pk_rec *r = &p->r[i];
		unsigned int hl;

		ret = lrb_packet_next(&it, &rec);
		REQUIRE_EQ(ret, 1);
		hl = r->ext ? 16 : p->layout == LRB_HEADER_COMPACT ? 4 : 8;
		CHECK_EQ(rec.id, r->id);
		CHECK_EQ(rec.timestamp, r->ts);
		CHECK_EQ(rec.len, r->len);
		CHECK_EQ(rec.offset, r->off);
		CHECK_EQ(rec.extended, r->ext);
		CHECK(rec.payload == data + r->off + hl);
		CHECK(test_check_payload(rec.payload, r->id, r->len, r->seq));
	}
	CHECK_EQ(lrb_packet_next(&it, &rec), 0);
	CHECK_EQ(lrb_packet_next(&it, &rec), 0);
}

/* Decode a copy of @p allocated at the exact packet size. */
static void expect_records_exact(const struct pk *p)
{
	u8 *copy = exact_copy(p->data, p->size);

	expect_records(p, copy, p->size);
	free(copy);
}

/* ------------------------------------------------------------------ */
/* Hand-made packets in every form.                                   */

/* Ids the decoder callback treats specially are avoided here. */
static u32 safe_id(u32 id)
{
	return id == TEST_ID_UNKNOWN || id == TEST_ID_HUGE ? 12 : id;
}

static u32 len_for(u32 id, u32 want)
{
	if (test_id_fixed(id))
		return test_fixed_len(id);
	return want < 4 ? 4 : want;
}

static void build_compact27(struct pk *p)
{
	u64 mask = (1ULL << 27) - 1;
	u64 t = mask;
	u32 id;

	pk_init(p, LRB_HEADER_COMPACT, 27, t);
	pk_add(p, 1, t, 8, false);		/* delta 0 from begin */
	pk_add(p, 0, t + 1, 4, false);		/* low bits wrap to 0 */
	t += 9;
	pk_add(p, 29, t, 12, false);		/* largest compact id */
	pk_add(p, 30, t, 12, false);		/* the skip id: ext */
	pk_add(p, 31, t, 9, false);		/* id field all ones: ext */
	pk_add(p, 32, t, 10, false);
	pk_add(p, 1000, t + 1, 11, false);
	pk_add(p, 0xFFFFFFFFU, t + 2, 8, false);
	t += 2;
	for (id = TEST_ID_FIXED_MIN; id <= TEST_ID_FIXED_MAX; id++)
		pk_add(p, id, ++t, test_fixed_len(id), false);
	t += (1ULL << 27) - 1;
	pk_add(p, 2, t, 8, false);		/* largest compact delta */
	t += 1ULL << 27;
	pk_add(p, 3, t, 8, false);		/* smallest extended delta */
	t += (1ULL << 27) + 1;
	pk_add(p, 4, t, 8, false);
	t += 1ULL << 40;
	pk_add(p, 5, t, 8, false);
	pk_add(p, 6, t, 8, true);		/* extended without need */
	t += ((mask - 1) - (t & mask)) & mask;	/* low bits about to wrap */
	pk_add(p, 7, t, 8, false);
	t += 5;
	pk_add(p, 8, t, 8, false);
	t += (1ULL << 27) - 2;
	pk_add(p, 9, t, 8, false);
	pk_add(p, 10, t, 200, false);
	pk_add(p, 11, t + 1, 4, false);
}

static void test_hand_compact(void)
{
	struct pk *p = &pk_a;
	unsigned int i, ext = 0;

	build_compact27(p);
	for (i = 0; i < p->n; i++)
		ext += p->r[i].ext;
	CHECK_EQ(ext, 9);
	CHECK(!p->r[1].ext);
	pk_finish(p, p->pos);
	expect_records_exact(p);
	/* padding after the content, and bytes after the packet */
	pk_finish(p, 4096);
	expect_records_exact(p);
	expect_records(p, p->data, PK_MAX);
}

static void test_hand_large(void)
{
	struct pk *p = &pk_a;
	u64 t = 0xFFFFFFF0ULL;

	pk_init(p, LRB_HEADER_LARGE, 0, t);
	pk_add(p, 0, t, 8, false);
	pk_add(p, 31, t + 0x20, 8, false);	/* low 32 bits wrap */
	t += 0x20;
	pk_add(p, 1000000, t, 5, false);
	pk_add(p, 0xFFFFFFFDU, t, 7, false);	/* largest plain id */
	pk_add(p, 0xFFFFFFFFU, t, 9, false);	/* needs extended */
	t += 0xFFFFFFFFULL;
	pk_add(p, 1, t, 8, false);		/* largest plain delta */
	t += 1ULL << 32;
	pk_add(p, 2, t, 8, false);		/* smallest extended delta */
	t += 1ULL << 50;
	pk_add(p, 3, t, 8, false);
	pk_add(p, 4, t + 1, 8, true);
	pk_add(p, TEST_ID_FIXED_MIN, t + 2, 1, false);
	pk_add(p, TEST_ID_FIXED_MIN + 2, t + 3, 3, false);
	pk_add(p, 5, t + 4, 100, false);
	CHECK(!p->r[1].ext && !p->r[3].ext && !p->r[5].ext);
	CHECK(p->r[4].ext && p->r[6].ext && p->r[7].ext);
	pk_finish(p, p->pos);
	expect_records_exact(p);
	pk_finish(p, p->pos + 1000);
	expect_records_exact(p);
}

/* Compact headers with other splits between id and timestamp bits. */
static void test_hand_bits(void)
{
	static const unsigned int bits[] = { 1, 2, 8, 20, 26, 27, 28, 31 };
	struct pk *p = &pk_a;
	unsigned int b, i;
	u32 id;
	u64 t;

	for (b = 0; b < ARRAY_SIZE(bits); b++) {
		u64 span = 1ULL << bits[b];
		u32 ext = ext_id_of(LRB_HEADER_COMPACT, bits[b]);

		t = span * 5 - 1;
		pk_init(p, LRB_HEADER_COMPACT, bits[b], t);
		pk_add(p, 0, t, 8, false);
		pk_add(p, 0, t + 1, 8, false);		/* wraps */
		t += 1;
		/* the largest compact id: below the skip id */
		id = safe_id(ext - 1 - (bits[b] < 31));
		pk_add(p, id, t + span - 1, len_for(id, 8), false);
		t += span - 1;
		pk_add(p, ext, t, 8, false);
		id = safe_id(ext + 1);
		pk_add(p, id, t, len_for(id, 8), false);
		pk_add(p, 0, t + span, 8, false);
		t += span;
		for (i = 0; i < 40; i++) {
			t += (i * 7919) % span;
			pk_add(p, i % 3 ? 0 : 100 + i, t, 8 + i, false);
		}
		CHECK(p->r[3].ext && p->r[4].ext && p->r[5].ext);
		CHECK(!p->r[0].ext && !p->r[1].ext && !p->r[2].ext);
		pk_finish(p, p->pos + 64);
		expect_records_exact(p);
	}
}

/* ------------------------------------------------------------------ */
/* Packets of the other byte order.                                   */

static void swap32_at(u8 *data, unsigned long off)
{
	u32 v;

	memcpy(&v, data + off, sizeof(v));
	v = __builtin_bswap32(v);
	memcpy(data + off, &v, sizeof(v));
}

static void swap64_at(u8 *data, unsigned long off)
{
	u64 v;

	memcpy(&v, data + off, sizeof(v));
	v = __builtin_bswap64(v);
	memcpy(data + off, &v, sizeof(v));
}

/*
 * @p (finished) into @out as a CPU of the other byte order writes it: the
 * packet header and every record header swapped. Payloads are left as
 * they are: the decoder hands them to the payload_size callback as written.
 */
static void swap_packet(const struct pk *p, u8 *out)
{
	unsigned long off;
	unsigned int i;

	memcpy(out, p->data, p->size);
	swap32_at(out, offsetof(struct lrb_packet_header, magic));
	swap32_at(out, offsetof(struct lrb_packet_header, stream_id));
	for (off = offsetof(struct lrb_packet_header, timestamp_begin);
	     off < offsetof(struct lrb_packet_header, cpu_id); off += 8)
		swap64_at(out, off);
	swap32_at(out, offsetof(struct lrb_packet_header, cpu_id));
	swap32_at(out, offsetof(struct lrb_packet_header, header_size));
	for (i = 0; i < p->n; i++) {
		off = p->r[i].off;
		swap32_at(out, off);
		if (p->r[i].ext) {
			swap32_at(out, off + 4);
			swap64_at(out, off + 8);
		} else if (p->layout == LRB_HEADER_LARGE) {
			swap32_at(out, off + 4);
		}
	}
}

/* The records of @p, from its byte-swapped copy. */
static void expect_swapped(const struct pk *p)
{
	static u8 sw[PK_MAX];
	struct lrb_packet_header h;
	struct lrb_packet_iter it;
	struct lrb_decoder dec;
	struct lrb_record rec;
	unsigned int i;

	swap_packet(p, sw);
	CHECK_EQ(lrb_packet_header_load(&h, p->data), 0);
	CHECK_EQ(lrb_packet_header_load(&h, sw), 1);
	CHECK(!memcmp(&h, p->data, sizeof(h)));
	dec_init(&dec, p->layout, p->bits);
	REQUIRE_EQ(lrb_packet_open(&it, &dec, sw, p->size), 0);
	CHECK(it.swapped);
	CHECK(!memcmp(&it.header, p->data, sizeof(it.header)));
	CHECK_EQ(it.content, p->pos);
	for (i = 0; i < p->n; i++) {
		const struct pk_rec *r = &p->r[i];

		REQUIRE_EQ(lrb_packet_next(&it, &rec), 1);
		CHECK_EQ(rec.id, r->id);
		CHECK_EQ(rec.timestamp, r->ts);
		CHECK_EQ(rec.len, r->len);
		CHECK_EQ(rec.offset, r->off);
		CHECK_EQ(rec.extended, r->ext);
		CHECK(test_check_payload(rec.payload, r->id, r->len, r->seq));
	}
	CHECK_EQ(lrb_packet_next(&it, &rec), 0);
	/* the native packet is not swapped */
	REQUIRE_EQ(lrb_packet_open(&it, &dec, p->data, p->size), 0);
	CHECK(!it.swapped);
}

/* Both header layouts and every compact split, in the other byte order. */
static void test_swapped(void)
{
	static const u8 neither[LRB_PACKET_HEADER_SIZE] = { 0xC1, 0xFC, 0x1F, 0xC0 };
	struct lrb_packet_header h;
	struct pk *p = &pk_a;

	build_compact27(p);
	pk_finish(p, p->pos + 100);
	expect_swapped(p);
	test_hand_large();	/* leaves a large packet in pk_a */
	expect_swapped(p);
	test_hand_bits();	/* leaves 31 timestamp bits in pk_a */
	expect_swapped(p);
	CHECK_EQ(lrb_packet_header_load(&h, neither), -EBADMSG);
}

/* ------------------------------------------------------------------ */
/* Packets written by the library.                                    */

static u64 now;

static u64 test_clock(void)
{
	return now;
}

#define WCFG(h, b)							\
	TEST_CONFIG(LRB_MODE_DISCARD, LRB_ALLOC_GLOBAL,			\
		    LRB_WAKEUP_BY_WRITER, LRB_HEADER_##h, b,		\
		    .clock_read = test_clock)

static const struct lrb_config wcfg[] = {
	WCFG(COMPACT, 27),
	WCFG(COMPACT, 1),
	WCFG(COMPACT, 20),
	WCFG(COMPACT, 31),
	WCFG(LARGE, 27),
	WCFG(LARGE, 0),
};

static u8 wpayload[1 << 16];

struct wstep {
	u32 id;
	u64 ts;
	u32 len;
};

/*
 * A record sequence exercising the boundaries of the header forms: ids
 * around the extended id, deltas around the timestamp field width.
 */
static unsigned int make_steps(const struct lrb_config *cfg,
			       struct wstep *s, unsigned int max)
{
	unsigned int bits = cfg->header == LRB_HEADER_COMPACT ?
			    cfg->tsc_bits : 32;
	u32 ext = ext_id_of(cfg->header, cfg->tsc_bits);
	u64 span = 1ULL << bits;
	static const u32 rand_ids[] = { 0, 1, 5, 12, 29, 30, 31, 32, 63, 64,
					1000, 65535, 1U << 20, 0x7FFFFFFF,
					0xFFFFFFFE, 0xFFFFFFFF };
	u64 deltas[12];
	u64 t = 1000;
	unsigned int n = 0, i;
	u32 id;

	deltas[0] = 0;
	deltas[1] = 1;
	deltas[2] = span - 1;
	deltas[3] = span;
	deltas[4] = span + 1;
	deltas[5] = 2 * span - 1;
	deltas[6] = 1ULL << 40;
	deltas[7] = 3;
	deltas[8] = span / 2;
	deltas[9] = span > 2 ? span - 2 : 1;
	deltas[10] = 7;
	deltas[11] = 0;
	for (i = 0; n < max && i < 160; i++) {
		switch (i % 4) {
		case 0:
			id = ext;
			break;
		case 1:
			id = ext - 1;
			break;
		case 2:
			id = ext == 0xFFFFFFFFU ? 0 : ext + 1;
			break;
		default:
			id = rand_ids[(i / 4) % 16];
			break;
		}
		id = safe_id(id);
		if (i)
			t += deltas[(i * 5) % 12];
		s[n].id = id;
		s[n].ts = t;
		s[n].len = len_for(id, 8 + i % 23);
		n++;
	}
	return n;
}

static struct wstep steps[256];

static void roundtrip_forms(const struct lrb_config *cfg)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = 65536,
		.num_subbuf = 2,
		.nr_cpus = 1,
		.stream_id = 11,
	};
	unsigned int n, i, hl, checked = 0;
	struct lrb_decoder dec;
	struct lrb_packet_iter it;
	struct lrb_record rec;
	struct lrb_subbuf sb;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	unsigned long off, end = 0;
	u8 *data;
	int ret;

	ret = lrb_channel_create(cfg, &attr, &chan);
	REQUIRE_EQ(ret, 0);
	buf = lrb_channel_nth_buf(chan, 0);
	CHECK_EQ(lrb_reader_open(buf), 0);
	n = make_steps(cfg, steps, 256);
	for (i = 0; i < n; i++) {
		now = steps[i].ts;
		test_fill_payload(wpayload, steps[i].id, steps[i].len, i);
		CHECK_EQ(lrb_event_write(cfg, chan, steps[i].id, wpayload,
					 steps[i].len), 0);
	}
	/* a record that does not fit closes the packet: padding follows */
	now += 1;
	test_fill_payload(wpayload, 1, 63000, n);
	CHECK_EQ(lrb_event_write(cfg, chan, 1, wpayload, 63000), 0);
	REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
	CHECK(sb.content_size < sb.packet_size);
	data = malloc(sb.packet_size);
	lrb_subbuf_copy(chan, &sb, 0, data, sb.packet_size);
	lrb_put_subbuf(buf, &sb);

	dec_init(&dec, cfg->header, cfg->tsc_bits);
	ret = lrb_packet_open(&it, &dec, data, sb.packet_size);
	CHECK_EQ(ret, 0);
	off = LRB_PACKET_HEADER_SIZE;
	for (i = 0; !ret && i < n; i++) {
		ret = lrb_packet_next(&it, &rec);
		CHECK_EQ(ret, 1);
		if (ret != 1)
			break;
		ret = 0;
		CHECK_EQ(rec.offset, off);
		CHECK_EQ(rec.id, steps[i].id);
		CHECK_EQ(rec.timestamp, steps[i].ts);
		CHECK_EQ(rec.len, steps[i].len);
		CHECK(test_check_payload(rec.payload, rec.id, rec.len, i));
		/* the first record's reference is the library's business */
		if (i) {
			CHECK_EQ(rec.extended,
				 needs_ext(cfg->header, cfg->tsc_bits,
					   steps[i].id,
					   steps[i].ts - steps[i - 1].ts));
			checked++;
		}
		hl = rec.extended ? 16 :
		     cfg->header == LRB_HEADER_COMPACT ? 4 : 8;
		end = off + hl + rec.len;
		off = align4(end);
	}
	CHECK_EQ(checked, n - 1);
	CHECK_EQ(lrb_packet_next(&it, &rec), 0);
	/* the content ends with the last payload, not its padding */
	CHECK_EQ(it.content, end);
	CHECK_EQ(sb.content_size, end);
	free(data);

	lrb_buf_flush(buf);
	REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
	data = malloc(sb.packet_size);
	lrb_subbuf_copy(chan, &sb, 0, data, sb.packet_size);
	lrb_put_subbuf(buf, &sb);
	CHECK_EQ(lrb_packet_open(&it, &dec, data, sb.packet_size), 0);
	CHECK_EQ(lrb_packet_next(&it, &rec), 1);
	CHECK_EQ(rec.len, 63000);
	CHECK_EQ(rec.timestamp, now);
	CHECK(test_check_payload(rec.payload, 1, 63000, n));
	CHECK_EQ(lrb_packet_next(&it, &rec), 0);
	free(data);
	lrb_reader_close(buf);
	lrb_channel_destroy(chan);
}

static void test_lib_forms(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(wcfg); i++)
		roundtrip_forms(&wcfg[i]);
}

/* ------------------------------------------------------------------ */
/* Corrupt packets.                                                   */

/* Expect lrb_packet_open() of @data (copied at exact size) to fail. */
static void expect_open_fails(const u8 *data, unsigned long len,
			      unsigned long avail,
			      enum lrb_header_layout layout, unsigned int bits,
			      const char *what)
{
	u8 *copy = exact_copy(data, len);
	struct lrb_packet_iter it;
	struct lrb_decoder dec;
	int ret;

	dec_init(&dec, layout, bits);
	ret = lrb_packet_open(&it, &dec, copy, avail);
	CHECK_EQ(ret, -EBADMSG);
	CHECK(ret != -EBADMSG || (it.error && it.error[0]));
	CHECK(ret != -EBADMSG || it.error_offset < 64);
	if (ret != -EBADMSG)
		fprintf(stderr, "  open accepted: %s\n", what);
	free(copy);
}

static void test_open_errors(void)
{
	struct pk *p = &pk_a;
	struct lrb_packet_header h;
	u8 *d = pk_b.data;
	unsigned long size;

	build_compact27(p);
	pk_finish(p, 1024);
	size = p->size;
	CHECK_EQ(sizeof(h), 64);

#define MUTATE(stmt, what)						\
	do {								\
		memcpy(d, p->data, size);				\
		stmt;							\
		expect_open_fails(d, size, size, LRB_HEADER_COMPACT, 27,\
				  what);				\
	} while (0)

	MUTATE(d[0] ^= 1, "magic");
	MUTATE(set_u32(d, 0, 0), "magic 0");
	MUTATE(set_u32(d, 60, 60), "header_size 60");
	MUTATE(set_u32(d, 60, 128), "header_size 128");
	MUTATE(set_u32(d, 60, 0), "header_size 0");
	MUTATE(set_u32(d, 60, 0xFFFFFFFF), "header_size ~0");
	MUTATE(set_u64(d, 24, p->pos * 8 + 3), "content not whole bytes");
	MUTATE(set_u64(d, 24, p->pos * 8 - 1), "content not whole bytes");
	MUTATE(set_u64(d, 32, size * 8 + 4), "packet not whole bytes");
	MUTATE(set_u64(d, 32, size * 8 - 7), "packet not whole bytes");
	MUTATE(set_u64(d, 24, 63 * 8), "content < header");
	MUTATE(set_u64(d, 24, 0), "content 0");
	MUTATE(set_u64(d, 24, (size + 1) * 8), "content > packet");
	MUTATE(set_u64(d, 24, ~7ULL), "content huge");
	MUTATE(set_u64(d, 32, (size + 8) * 8), "packet > avail");
	MUTATE(set_u64(d, 32, ~7ULL), "packet huge");
	MUTATE((set_u64(d, 32, ~7ULL), set_u64(d, 24, ~7ULL)),
	       "content and packet huge");
	MUTATE((set_u64(d, 32, 1ULL << 63), set_u64(d, 24, 1ULL << 63)),
	       "sizes wrapping when converted to bytes");
	MUTATE(set_u64(d, 32, 32 * 8), "packet < content");
#undef MUTATE

	/* a header shorter than 64 bytes */
	expect_open_fails(p->data, 0, 0, LRB_HEADER_COMPACT, 27, "avail 0");
	expect_open_fails(p->data, 63, 63, LRB_HEADER_COMPACT, 27, "avail 63");
	expect_open_fails(p->data, 64, 64, LRB_HEADER_COMPACT, 27,
			  "avail 64 < content");
	expect_open_fails(p->data, size - 1, size - 1, LRB_HEADER_COMPACT, 27,
			  "avail < packet");
}

/* An invalid decoder description is refused (not an -EBADMSG). */
static void test_bad_decoder(void)
{
	struct pk *p = &pk_a;
	struct lrb_packet_iter it;
	struct lrb_decoder dec;

	build_compact27(p);
	pk_finish(p, p->pos);
	dec_init(&dec, LRB_HEADER_COMPACT, 0);
	CHECK(lrb_packet_open(&it, &dec, p->data, p->size) < 0);
	dec_init(&dec, LRB_HEADER_COMPACT, 32);
	CHECK(lrb_packet_open(&it, &dec, p->data, p->size) < 0);
	dec_init(&dec, LRB_HEADER_COMPACT, 27);
	dec.payload_size = NULL;
	CHECK(lrb_packet_open(&it, &dec, p->data, p->size) < 0);
	dec_init(&dec, LRB_HEADER_LARGE, 0);
	CHECK_EQ(lrb_packet_open(&it, &dec, p->data, p->size), 0);
}

/*
 * Open @p's first @content bytes as a packet of @content bytes (exact
 * buffer) and expect @good records, then the result @want (0 or an
 * error) with, for an error, the failing record at @bad_off.
 */
static void expect_next(const struct pk *p, unsigned long content,
			unsigned int good, int want, unsigned long bad_off)
{
	u8 *copy = exact_copy(p->data, content);
	struct lrb_packet_iter it;
	struct lrb_decoder dec;
	struct lrb_record rec;
	unsigned int i;
	int ret;

	set_u64(copy, 24, content * 8);
	set_u64(copy, 32, content * 8);
	dec_init(&dec, p->layout, p->bits);
	ret = lrb_packet_open(&it, &dec, copy, content);
	CHECK_EQ(ret, 0);
	for (i = 0; !ret && i < good; i++) {
		CHECK_EQ(lrb_packet_next(&it, &rec), 1);
		CHECK_EQ(rec.offset, p->r[i].off);
	}
	if (!ret) {
		ret = lrb_packet_next(&it, &rec);
		if (want < 0) {
			CHECK(ret < 0);
			CHECK(ret >= 0 || (it.error && it.error[0]));
			CHECK(ret >= 0 || (it.error_offset >= bad_off &&
					   it.error_offset <= content));
			if (want == -EBADMSG)
				CHECK_EQ(ret, -EBADMSG);
		} else {
			CHECK_EQ(ret, want);
		}
	}
	free(copy);
}

/* Content ending @cut bytes into record @k of @p: -EBADMSG at record @k. */
static void expect_cut(const struct pk *p, unsigned int k, unsigned long cut)
{
	expect_next(p, p->r[k].off + cut, k, -EBADMSG, p->r[k].off);
}

static void test_next_errors(void)
{
	struct pk *p = &pk_a;

	/* compact header crossing the content end */
	pk_init(p, LRB_HEADER_COMPACT, 27, 10);
	pk_add(p, 1, 10, 8, false);
	pk_add(p, 2, 11, 8, false);
	pk_finish(p, p->pos);
	expect_next(p, p->pos, 2, 0, 0);
	expect_next(p, p->pos - 1, 1, -EBADMSG, p->r[1].off);
	expect_cut(p, 1, 2);
	expect_cut(p, 1, 3);
	expect_cut(p, 1, 4);
	expect_cut(p, 1, 6);

	/* extended header crossing the content end */
	pk_init(p, LRB_HEADER_COMPACT, 27, 10);
	pk_add(p, 1, 10, 8, false);
	pk_add(p, 200, 11, 8, false);
	pk_finish(p, p->pos);
	expect_next(p, p->pos, 2, 0, 0);
	expect_cut(p, 1, 4);
	expect_cut(p, 1, 8);
	expect_cut(p, 1, 12);
	expect_cut(p, 1, 15);
	expect_cut(p, 1, 16);

	/* large header crossing the content end, and its extended form */
	pk_init(p, LRB_HEADER_LARGE, 0, 10);
	pk_add(p, 1, 10, 8, false);
	pk_add(p, 2, 11, 8, false);
	pk_add(p, 0xFFFFFFFFU, 12, 8, false);
	pk_finish(p, p->pos);
	expect_next(p, p->pos, 3, 0, 0);
	expect_cut(p, 1, 4);
	expect_cut(p, 1, 8);
	expect_cut(p, 2, 8);
	expect_cut(p, 2, 12);

	/* payload crossing the content end */
	pk_init(p, LRB_HEADER_COMPACT, 27, 10);
	pk_add(p, 1, 10, 8, false);
	pk_add(p, 2, 10, 100, false);
	pk_add(p, TEST_ID_FIXED_MAX, 10, 8, false);
	pk_finish(p, p->pos);
	expect_next(p, p->pos, 3, 0, 0);
	expect_cut(p, 1, 4 + 50);
	expect_cut(p, 1, 4 + 99);
	expect_next(p, p->r[1].off + 4 + 2, 1, -1, p->r[1].off);
	expect_cut(p, 2, 4 + 5);
	expect_cut(p, 2, 4 + 7);

	/* unknown event, absurd payload size */
	pk_init(p, LRB_HEADER_COMPACT, 27, 10);
	pk_add(p, 1, 10, 8, false);
	pk_add(p, TEST_ID_UNKNOWN, 10, 8, false);
	pk_finish(p, p->pos);
	expect_next(p, p->pos, 1, -1, p->r[1].off);
	pk_init(p, LRB_HEADER_COMPACT, 27, 10);
	pk_add(p, 1, 10, 8, false);
	pk_add(p, TEST_ID_HUGE, 10, 8, false);
	pk_finish(p, p->pos);
	expect_next(p, p->pos, 1, -EBADMSG, p->r[1].off);
	pk_init(p, LRB_HEADER_LARGE, 0, 10);
	pk_add(p, TEST_ID_HUGE, 10, 8, true);
	pk_finish(p, p->pos);
	expect_next(p, p->pos, 0, -EBADMSG, p->r[0].off);
	/* a length prefix claiming almost 4 GiB */
	pk_init(p, LRB_HEADER_COMPACT, 27, 10);
	pk_add(p, 1, 10, 8, false);
	set_u32(p->data, p->r[0].off + 4, 0xFFFFFFF0U);
	pk_finish(p, p->pos);
	expect_next(p, p->pos, 0, -EBADMSG, p->r[0].off);
}

/* Decoding stops at the end of the content, not of the packet. */
static void test_padding_not_decoded(void)
{
	struct pk *p = &pk_a;
	struct lrb_packet_iter it;
	struct lrb_decoder dec;
	struct lrb_record rec;
	u8 *copy;

	pk_init(p, LRB_HEADER_COMPACT, 27, 10);
	pk_add(p, 1, 10, 8, false);
	pk_finish(p, 2048);
	/* garbage after the content must be ignored */
	memset(p->data + p->pos, 0xAB, 2048 - p->pos);
	copy = exact_copy(p->data, 2048);
	dec_init(&dec, LRB_HEADER_COMPACT, 27);
	CHECK_EQ(lrb_packet_open(&it, &dec, copy, 2048), 0);
	CHECK_EQ(lrb_packet_next(&it, &rec), 1);
	CHECK_EQ(lrb_packet_next(&it, &rec), 0);
	free(copy);
	/* a header-only packet has no record */
	pk_init(p, LRB_HEADER_COMPACT, 27, 10);
	pk_finish(p, 64);
	expect_records_exact(p);
}

/*
 * The payload_size callback is never told it may read past the content:
 * it checks every avail it is given against the content end.
 */
static const u8 *cb_base;
static unsigned long cb_content;
static unsigned long cb_bad;
static unsigned long cb_calls;

static long bounded_payload_size(const struct lrb_decoder *dec, u32 id,
				 const u8 *payload, unsigned long avail)
{
	cb_calls++;
	if (payload < cb_base + 64 || payload > cb_base + cb_content ||
	    avail > (unsigned long)(cb_base + cb_content - payload))
		cb_bad++;
	return test_payload_size(dec, id, payload, avail);
}

static void test_callback_bounds(void)
{
	struct pk *p = &pk_a;
	struct lrb_packet_iter it;
	struct lrb_decoder dec;
	struct lrb_record rec;
	unsigned long c;
	u8 *copy;
	int ret, n;

	build_compact27(p);
	pk_finish(p, p->pos + 256);
	dec_init(&dec, LRB_HEADER_COMPACT, 27);
	dec.payload_size = bounded_payload_size;
	cb_bad = 0;
	cb_calls = 0;
	for (c = 64; c <= p->pos; c++) {
		copy = exact_copy(p->data, p->size);
		set_u64(copy, 24, c * 8);
		cb_base = copy;
		cb_content = c;
		ret = lrb_packet_open(&it, &dec, copy, p->size);
		CHECK_EQ(ret, 0);
		for (n = 0; !ret && n < PK_RECS; n++)
			if (lrb_packet_next(&it, &rec) != 1)
				break;
		free(copy);
	}
	CHECK(cb_calls > 0);
	CHECK_EQ(cb_bad, 0);
}

/*
 * Content cut at every byte: records wholly inside are returned as built;
 * a cut at a record boundary ends cleanly, a cut through a record header
 * or payload is an error. @whole: the buffer holds the whole original
 * packet (the cut only changes content_size), else exactly @c bytes.
 */
static void cut_content(const struct pk *p, unsigned long c, bool whole)
{
	unsigned long size = whole ? p->size : c;
	unsigned int k = 0, full = 0, m = 0;
	struct lrb_packet_iter it;
	struct lrb_decoder dec;
	struct lrb_record rec;
	bool clean, ok = true;
	u8 *copy;
	int ret;

	copy = exact_copy(p->data, size);
	if (size >= 64) {
		set_u64(copy, 24, c * 8);
		set_u64(copy, 32, size * 8);
	}
	dec_init(&dec, p->layout, p->bits);
	ret = lrb_packet_open(&it, &dec, copy, size);
	if (c < 64) {
		CHECK_EQ(ret, -EBADMSG);
		free(copy);
		return;
	}
	CHECK_EQ(ret, 0);
	if (ret) {
		free(copy);
		return;
	}
	while (k < p->n && p->r[k].off < c)
		k++;
	while (full < p->n && p->r[full].aend <= c)
		full++;
	clean = k == full && (k == p->n || p->r[k].off == c) &&
		(k == 0 || p->r[k - 1].aend == c || c == p->pos);
	while ((ret = lrb_packet_next(&it, &rec)) == 1) {
		const struct pk_rec *r = &p->r[m];

		if (m >= k || rec.offset != r->off || rec.id != r->id ||
		    rec.timestamp != r->ts || rec.len != r->len ||
		    rec.offset + rec.len > c) {
			ok = false;
			break;
		}
		m++;
	}
	if (ret == 0)
		ok = ok && m == k && (k == 0 || p->r[k - 1].end <= c);
	else
		ok = ok && ret < 0 && !clean && m >= full && m <= k &&
		     it.error && it.error_offset <= c;
	if (clean)
		ok = ok && ret == 0;
	if (!ok)
		fprintf(stderr,
			"  cut at %lu (whole %d): ret %d after %u records, expected %u..%u\n",
			c, whole, ret, m, full, k);
	CHECK(ok);
	free(copy);
}

static void test_truncate_everywhere(void)
{
	struct pk *p = &pk_a;
	struct lrb_packet_iter it;
	struct lrb_decoder dec;
	unsigned long c, packet;
	u8 *copy;
	int ret;

	build_compact27(p);
	packet = p->pos + 37;
	pk_finish(p, packet);
	dec_init(&dec, p->layout, p->bits);
	/* the buffer shorter than the packet: never accepted */
	for (c = 0; c <= packet; c++) {
		copy = exact_copy(p->data, c);
		ret = lrb_packet_open(&it, &dec, copy, c);
		if (c < packet)
			CHECK_EQ(ret, -EBADMSG);
		else
			CHECK_EQ(ret, 0);
		free(copy);
	}
	for (c = 0; c <= p->pos; c++) {
		cut_content(p, c, false);
		cut_content(p, c, true);
	}

	/* large layout too */
	pk_init(p, LRB_HEADER_LARGE, 0, 1ULL << 33);
	for (c = 0; c < 30; c++) {
		u32 id = c % 3 ? safe_id(c) : 0xFFFFFFFFU;

		pk_add(p, id, (1ULL << 33) + (c << 31), len_for(id, 4 + c % 9),
		       c % 5 == 0);
	}
	pk_finish(p, p->pos);
	for (c = 0; c <= p->pos; c++) {
		cut_content(p, c, false);
		cut_content(p, c, true);
	}
}

static unsigned long fuzz_bad;
static unsigned long fuzz_opened, fuzz_records, fuzz_errors, fuzz_runs;

static void fuzz_reset(void)
{
	fuzz_bad = 0;
	fuzz_opened = 0;
	fuzz_records = 0;
	fuzz_errors = 0;
	fuzz_runs = 0;
}

static void fuzz_report(const char *what)
{
	if (getenv("TEST_VERBOSE"))
		fprintf(stderr,
			"  %s: %lu packets, %lu opened, %lu records, %lu record errors\n",
			what, fuzz_runs, fuzz_opened, fuzz_records,
			fuzz_errors);
	CHECK_EQ(fuzz_bad, 0);
	CHECK(fuzz_opened > 0 && fuzz_records > 0 && fuzz_errors > 0);
}

/* Decode anything: no crash, sane records, bounded iterations. */
static void decode_any(const u8 *data, unsigned long avail,
		       const struct lrb_decoder *dec)
{
	struct lrb_packet_iter it;
	struct lrb_record rec;
	unsigned long n = 0, last = 0, content;
	int ret;

	fuzz_runs++;
	ret = lrb_packet_open(&it, dec, data, avail);
	if (ret) {
		if (ret != -EBADMSG || !it.error)
			fuzz_bad++;
		return;
	}
	fuzz_opened++;
	content = it.content;
	if (content < 64 || content > avail)
		fuzz_bad++;
	while ((ret = lrb_packet_next(&it, &rec)) == 1) {
		if (rec.offset < 64 || rec.offset >= content ||
		    (rec.offset & 3) || (n && rec.offset <= last) ||
		    rec.payload < data + rec.offset + 4 ||
		    rec.payload > data + content ||
		    rec.len > (unsigned long)(data + content - rec.payload)) {
			fuzz_bad++;
			return;
		}
		last = rec.offset;
		fuzz_records++;
		if (++n > content / 4) {
			fuzz_bad++;	/* not making progress */
			return;
		}
	}
	if (ret < 0)
		fuzz_errors++;
	if (ret < 0 && (!it.error || it.error_offset > avail))
		fuzz_bad++;
	if (ret > 1)
		fuzz_bad++;
}

static void flip_all(const struct pk *p)
{
	static const u8 masks[] = { 0x01, 0x02, 0x10, 0x80, 0xFF, 0x7F };
	struct lrb_decoder dec;
	unsigned long off, m;
	u8 *copy;

	dec_init(&dec, p->layout, p->bits);
	for (off = 0; off < p->size; off++) {
		for (m = 0; m < sizeof(masks); m++) {
			copy = exact_copy(p->data, p->size);
			copy[off] ^= masks[m];
			decode_any(copy, p->size, &dec);
			free(copy);
		}
	}
}

static void test_byte_flips(void)
{
	struct pk *p = &pk_a;
	unsigned int i;

	fuzz_reset();
	build_compact27(p);
	pk_finish(p, p->pos + 16);
	flip_all(p);
	test_hand_large();	/* leaves a large packet in pk_a */
	flip_all(p);
	pk_init(p, LRB_HEADER_COMPACT, 1, 3);
	for (i = 0; i < 20; i++)
		pk_add(p, i * 1000, 3 + i * i, len_for(i, 4 + i), false);
	pk_finish(p, p->pos);
	flip_all(p);
	fuzz_report("byte flips");
}

static u64 rng = 0x9E3779B97F4A7C15ULL;

static u64 next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Valid headers over random records; valid packets randomly damaged. */
static void test_random(void)
{
	static const unsigned int bits[] = { 1, 5, 27, 31 };
	struct lrb_decoder dec;
	struct pk *p = &pk_a;
	unsigned long i, j, n, size;
	u8 *copy;

	fuzz_reset();
	for (i = 0; i < 20000; i++) {
		size = 64 + next_rand() % 600;
		copy = malloc(size);
		for (j = 0; j < size; j++)
			copy[j] = (u8)next_rand();
		if (i % 3 == 0) {
			/* few distinct bytes: more plausible headers */
			for (j = 64; j < size; j++)
				copy[j] &= 0x13;
		}
		make_header(copy, next_rand(),
			    64 + next_rand() % (size - 63), size);
		if (i & 1)
			dec_init(&dec, LRB_HEADER_LARGE, 0);
		else
			dec_init(&dec, LRB_HEADER_COMPACT,
				 bits[(i >> 1) % 4]);
		decode_any(copy, size, &dec);
		free(copy);
	}
	fuzz_report("random records");
	fuzz_reset();
	for (i = 0; i < 3000; i++) {
		enum lrb_header_layout layout = i & 1 ? LRB_HEADER_LARGE :
							LRB_HEADER_COMPACT;
		u64 t = next_rand() >> 8;

		pk_init(p, layout, 27, t);
		n = 1 + next_rand() % 30;
		for (j = 0; j < n; j++) {
			u32 id = next_rand() % 4 ? next_rand() % 40 :
						    (u32)next_rand();

			id = safe_id(id);
			t += next_rand() % 4 ? next_rand() % 1000 :
					       next_rand() >> 20;
			pk_add(p, id, t, len_for(id, next_rand() % 64),
			       !(next_rand() % 8));
		}
		pk_finish(p, p->pos + next_rand() % 64);
		copy = exact_copy(p->data, p->size);
		n = 1 + next_rand() % 4;
		for (j = 0; j < n; j++)
			copy[next_rand() % p->size] ^=
				(u8)(1 + next_rand() % 255);
		dec_init(&dec, layout, 27);
		decode_any(copy, p->size, &dec);
		free(copy);
	}
	fuzz_report("damaged packets");
}

int main(void)
{
	test_main_begin(60);
	CHECK_EQ(lrb_thread_init(), 0);
	TEST_RUN(test_hand_compact);
	TEST_RUN(test_hand_large);
	TEST_RUN(test_hand_bits);
	TEST_RUN(test_swapped);
	TEST_RUN(test_lib_forms);
	TEST_RUN(test_open_errors);
	TEST_RUN(test_bad_decoder);
	TEST_RUN(test_next_errors);
	TEST_RUN(test_padding_not_decoded);
	TEST_RUN(test_callback_bounds);
	TEST_RUN(test_truncate_everywhere);
	TEST_RUN(test_byte_flips);
	TEST_RUN(test_random);
	return test_main_end("unit_decode");
}
