// SPDX-License-Identifier: GPL-2.0
/*
 * lrb unit tests of the public API: channel creation and destruction in
 * every configuration, the write path (reserve, write, commit, discard),
 * packet layout, readers (consuming and snapshot), positions, statistics
 * and the exact accounting of records in discard and overwrite modes.
 *
 * The test thread is pinned to one CPU so that per-CPU channels write one
 * known buffer, and a controllable clock makes every timestamp and header
 * form deterministic.
 */
#include <pthread.h>
#include <sched.h>

#include "test.h"

#define SB4K 4096UL
#define SB16K 16384UL
#define MODEL_MAX 65536
#define MAX_PACKETS 100000

static u64 now = 1000;

static u64 test_clock(void)
{
	return now;
}

#define CFG(m, a, h)							\
	TEST_CONFIG(LRB_MODE_##m, LRB_ALLOC_##a, LRB_WAKEUP_BY_WRITER,	\
		    LRB_HEADER_##h, 27, .clock_read = test_clock)

static const struct lrb_config variants[] = {
	CFG(DISCARD, PER_CPU, COMPACT),
	CFG(DISCARD, PER_CPU, LARGE),
	CFG(DISCARD, GLOBAL, COMPACT),
	CFG(DISCARD, GLOBAL, LARGE),
	CFG(OVERWRITE, PER_CPU, COMPACT),
	CFG(OVERWRITE, PER_CPU, LARGE),
	CFG(OVERWRITE, GLOBAL, COMPACT),
	CFG(OVERWRITE, GLOBAL, LARGE),
};

static const struct lrb_config cfg_timer =
	TEST_CONFIG(LRB_MODE_DISCARD, LRB_ALLOC_PER_CPU, LRB_WAKEUP_BY_TIMER,
		    LRB_HEADER_COMPACT, 27, .clock_read = test_clock);

static const struct lrb_config cfg_dgc = CFG(DISCARD, GLOBAL, COMPACT);
static const struct lrb_config cfg_dgl = CFG(DISCARD, GLOBAL, LARGE);
static const struct lrb_config cfg_dcc = CFG(DISCARD, PER_CPU, COMPACT);
static const struct lrb_config cfg_ogc = CFG(OVERWRITE, GLOBAL, COMPACT);

static int home_cpu;
static cpu_set_t orig_cpus;

/* ------------------------------------------------------------------ */
/* Model of the records written, matched by the reader.                */

struct exp_rec {
	u32 id;
	u32 len;
	u32 seq;
	u64 ts;
};

/*
 * @skip: overwrite mode, records of overwritten packets are never read:
 *	the reader skips ahead to the record carrying the sequence number it
 *	finds (all payloads are then at least 8 bytes).
 */
static struct {
	struct exp_rec e[MODEL_MAX];
	unsigned int n;
	unsigned int next;
	u32 seq;
	unsigned long attempts;
	unsigned long failed;
	bool skip;
} M;

static u8 payload_buf[1 << 17];

static void model_reset(bool skip)
{
	M.n = 0;
	M.next = 0;
	M.seq = 0;
	M.attempts = 0;
	M.failed = 0;
	M.skip = skip;
}

static void model_add(u32 id, u32 len, u32 seq, u64 ts)
{
	if (M.n < MODEL_MAX) {
		M.e[M.n].id = id;
		M.e[M.n].len = len;
		M.e[M.n].seq = seq;
		M.e[M.n].ts = ts;
		M.n++;
	} else {
		CHECK(!"model full");
	}
}

/* Write one record with lrb_event_write() and note it in the model. */
static int mwrite(const struct lrb_config *cfg, struct lrb_chan *chan, u32 id,
		  u32 len)
{
	u32 seq = M.seq++;
	int ret;

	test_fill_payload(payload_buf, id, len, seq);
	ret = lrb_event_write(cfg, chan, id, payload_buf, len);
	if (ret != -EINVAL)
		M.attempts++;
	if (!ret)
		model_add(id, len, seq, now);
	else if (ret != -EINVAL)
		M.failed++;
	return ret;
}

/* Same, with lrb_reserve() and lrb_write() in chunks of @chunk bytes. */
static int mwrite_chunked(const struct lrb_config *cfg, struct lrb_chan *chan,
			  u32 id, u32 len, u32 chunk)
{
	u32 seq = M.seq++;
	struct lrb_ctx ctx;
	u32 off, n;
	int ret;

	test_fill_payload(payload_buf, id, len, seq);
	M.attempts++;
	ret = lrb_reserve(cfg, chan, &ctx, id, len);
	if (ret) {
		M.failed++;
		return ret;
	}
	CHECK_EQ(ctx.len, len);
	CHECK_EQ(ctx.id, id);
	for (off = 0; off < len; off += n) {
		n = len - off < chunk ? len - off : chunk;
		lrb_write(&ctx, payload_buf + off, n);
	}
	/* the cursor moved by the header and the payload, to the end */
	CHECK_EQ(ctx.pos, ctx.end);
	CHECK(ctx.end - ctx.begin - len == 4 || ctx.end - ctx.begin - len == 8 ||
	      ctx.end - ctx.begin - len == 16);
	lrb_commit(cfg, &ctx);
	model_add(id, len, seq, now);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Reading and checking packets.                                      */

struct drain;

typedef void (*record_hook)(struct drain *d, struct lrb_buf *buf,
			    const struct lrb_record *rec);
typedef void (*packet_hook)(struct drain *d, struct lrb_chan *chan,
			    struct lrb_subbuf *sb, const u8 *data);

struct drain {
	bool use_model;
	unsigned long packets;
	unsigned long records;
	u64 next_seq;		/* expected next packet sequence number */
	u64 gaps;		/* packets skipped between those read */
	u64 last_discarded;
	unsigned long page_cross;
	u64 first_ts;
	u64 last_ts;
	record_hook on_record;
	packet_hook on_packet;
	unsigned long user;
};

static unsigned long align4(unsigned long x)
{
	return (x + 3) & ~3UL;
}

static unsigned int header_bytes(const struct lrb_config *cfg, bool ext)
{
	if (ext)
		return LRB_EXTENDED_HEADER_SIZE;
	return cfg->header == LRB_HEADER_COMPACT ? LRB_COMPACT_HEADER_SIZE :
						   LRB_LARGE_HEADER_SIZE;
}

/* Raw record header bytes must say what the decoder returned. */
static void check_raw_header(const struct lrb_config *cfg, const u8 *data,
			     const struct lrb_record *rec)
{
	const u8 *p = data + rec->offset;
	u32 w0, w1;
	u64 ts;

	memcpy(&w0, p, 4);
	if (!rec->extended) {
		if (cfg->header == LRB_HEADER_COMPACT) {
			CHECK_EQ(w0, rec->id |
				 (u32)rec->timestamp << (32 - cfg->tsc_bits));
		} else {
			memcpy(&w1, p + 4, 4);
			CHECK_EQ(w0, rec->id);
			CHECK_EQ(w1, (u32)rec->timestamp);
		}
		return;
	}
	memcpy(&w1, p + 4, 4);
	memcpy(&ts, p + 8, 8);
	if (cfg->header == LRB_HEADER_COMPACT)
		CHECK_EQ(w0, (1U << (32 - cfg->tsc_bits)) - 1);
	else
		CHECK_EQ(w0, LRB_LARGE_ID_EXTENDED);
	CHECK_EQ(w1, rec->id);
	CHECK_EQ(ts, rec->timestamp);
}

static void match_model(const struct lrb_record *rec)
{
	struct exp_rec *e;
	u32 seq;

	if (M.skip) {
		if (rec->len < 8) {
			CHECK(!"short record in skip mode");
			return;
		}
		seq = test_payload_seq(rec->payload);
		while (M.next < M.n && M.e[M.next].seq != seq)
			M.next++;
	}
	if (M.next >= M.n) {
		CHECK(!"record read that the model does not expect");
		return;
	}
	e = &M.e[M.next++];
	CHECK_EQ(rec->id, e->id);
	CHECK_EQ(rec->len, e->len);
	CHECK_EQ(rec->timestamp, e->ts);
	CHECK(test_check_payload(rec->payload, e->id, rec->len, e->seq));
}

/* Check one held sub-buffer: its header, padding and every record. */
static void process_packet(struct drain *d, struct lrb_chan *chan,
			   struct lrb_buf *buf, struct lrb_subbuf *sb)
{
	const struct lrb_config *cfg = chan->cfg;
	struct lrb_decoder dec = {
		.header = cfg->header,
		.tsc_bits = cfg->tsc_bits,
		.payload_size = test_payload_size,
	};
	struct lrb_packet_header h;
	struct lrb_packet_iter it;
	struct lrb_record rec;
	unsigned long i, end, nrec = 0;
	bool zero = true;
	u8 *data;
	int ret;

	CHECK_EQ(sb->packet_size, lrb_packet_size(chan, sb->content_size));
	CHECK_EQ(sb->pos & (chan->subbuf_size - 1), 0);
	CHECK_EQ(sb->seq, sb->pos >> chan->subbuf_order);
	CHECK(sb->content_size >= LRB_PACKET_HEADER_SIZE);
	CHECK(sb->content_size <= sb->packet_size);
	data = malloc(chan->subbuf_size);
	memset(data, 0x5a, chan->subbuf_size);
	lrb_subbuf_copy(chan, sb, 0, data, chan->subbuf_size);
	memcpy(&h, data, sizeof(h));
	CHECK_EQ(h.magic, LRB_PACKET_MAGIC);
	CHECK_EQ(h.stream_id, chan->stream_id);
	CHECK_EQ(h.header_size, 64);
	CHECK_EQ(h.content_size, sb->content_size * 8);
	CHECK_EQ(h.packet_size, sb->packet_size * 8);
	CHECK_EQ(h.packet_seq_num, sb->seq);
	CHECK_EQ(h.cpu_id, buf->cpu);
	CHECK(h.timestamp_begin <= h.timestamp_end);
	CHECK(h.events_discarded >= d->last_discarded);
	d->last_discarded = h.events_discarded;
	CHECK(sb->seq >= d->next_seq);
	if (sb->seq >= d->next_seq)
		d->gaps += sb->seq - d->next_seq;
	d->next_seq = sb->seq + 1;
	d->packets++;

	/* the padding after the content is zeroed, to the sub-buffer's end */
	for (i = sb->content_size; i < chan->subbuf_size; i++)
		if (data[i])
			zero = false;
	CHECK(zero);

	ret = lrb_packet_open(&it, &dec, data, sb->packet_size);
	CHECK_EQ(ret, 0);
	if (ret) {
		free(data);
		return;
	}
	CHECK_EQ(it.content, sb->content_size);
	while ((ret = lrb_packet_next(&it, &rec)) == 1) {
		unsigned int hl = header_bytes(cfg, rec.extended);

		nrec++;
		CHECK_EQ(rec.offset & 3, 0);
		CHECK(rec.offset >= LRB_PACKET_HEADER_SIZE);
		CHECK(rec.payload == data + rec.offset + hl);
		end = rec.offset + hl + rec.len;
		CHECK(end <= sb->content_size);
		CHECK(rec.timestamp >= h.timestamp_begin);
		CHECK(rec.timestamp <= h.timestamp_end);
		check_raw_header(cfg, data, &rec);
		/* alignment padding after the payload is zeroed */
		for (i = end; i < align4(end) && i < sb->content_size; i++)
			CHECK_EQ(data[i], 0);
		if (rec.offset / PAGE_SIZE != (end - 1) / PAGE_SIZE)
			d->page_cross++;
		if (!d->records)
			d->first_ts = rec.timestamp;
		CHECK(rec.timestamp >= d->last_ts);
		d->last_ts = rec.timestamp;
		d->records++;
		if (d->use_model)
			match_model(&rec);
		if (d->on_record)
			d->on_record(d, buf, &rec);
		if (nrec > sb->packet_size / 4)
			break;
	}
	CHECK_EQ(ret, 0);
	if (ret)
		fprintf(stderr, "  decode error: %s at %lu\n",
			it.error ? it.error : "?", it.error_offset);
	if (d->on_packet)
		d->on_packet(d, chan, sb, data);
	free(data);
}

/* Read and check every complete sub-buffer of @buf (reader opened). */
static void drain(struct drain *d, struct lrb_chan *chan, struct lrb_buf *buf)
{
	struct lrb_subbuf sb;
	unsigned long n;
	int ret = 0;

	for (n = 0; n < MAX_PACKETS; n++) {
		ret = lrb_get_next_subbuf(buf, &sb);
		if (ret)
			break;
		CHECK(sb.consuming);
		process_packet(d, chan, buf, &sb);
		lrb_put_subbuf(buf, &sb);
	}
	CHECK_EQ(ret, -EAGAIN);
}

/* Read and check the next complete sub-buffer of @buf, if there is one. */
static void drain_one(struct drain *d, struct lrb_chan *chan,
		      struct lrb_buf *buf)
{
	struct lrb_subbuf sb;

	if (!lrb_get_next_subbuf(buf, &sb)) {
		process_packet(d, chan, buf, &sb);
		lrb_put_subbuf(buf, &sb);
	}
}

/* The buffer a writer on this (pinned) thread uses. */
static struct lrb_buf *my_buf(const struct lrb_config *cfg,
			      struct lrb_chan *chan)
{
	if (cfg->alloc == LRB_ALLOC_GLOBAL)
		return lrb_channel_buf(chan, 0);
	return lrb_channel_buf(chan, (unsigned int)sched_getcpu() %
				     chan->nr_bufs);
}

static struct lrb_chan *make_chan(const struct lrb_config *cfg,
				  unsigned long subbuf_size,
				  unsigned long num_subbuf,
				  unsigned int nr_cpus)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = subbuf_size,
		.num_subbuf = num_subbuf,
		.nr_cpus = nr_cpus,
		.stream_id = 7,
	};
	struct lrb_chan *chan = NULL;
	int ret;

	ret = lrb_channel_create(cfg, &attr, &chan);
	CHECK_EQ(ret, 0);
	return ret ? NULL : chan;
}

/* setup_chan() flags */
#define SETUP_READER 1		/* open the reader before the test writes */
#define SETUP_SKIP 2		/* model_reset(true) rather than (false) */

/*
 * The usual start of a test: a one-buffer channel of @num_subbuf
 * sub-buffers of @subbuf_size bytes, its buffer in *@buf, the model reset
 * and the reader opened as @flags say. NULL, *@buf untouched, if the
 * channel cannot be created.
 */
static struct lrb_chan *setup_chan(const struct lrb_config *cfg,
				   unsigned long subbuf_size,
				   unsigned long num_subbuf, int flags,
				   struct lrb_buf **buf)
{
	struct lrb_chan *chan = make_chan(cfg, subbuf_size, num_subbuf, 1);

	if (!chan)
		return NULL;
	*buf = lrb_channel_buf(chan, 0);
	if (flags & SETUP_READER)
		CHECK_EQ(lrb_reader_open(*buf), 0);
	model_reset(flags & SETUP_SKIP);
	return chan;
}

/* The usual end: close the reader of @buf, destroy @chan. */
static void teardown_chan(struct lrb_chan *chan, struct lrb_buf *buf)
{
	lrb_reader_close(buf);
	lrb_channel_destroy(chan);
}

/* ------------------------------------------------------------------ */
/* Tests.                                                             */

static int marker;

static void one_variant(const struct lrb_config *cfg)
{
	bool global = cfg->alloc == LRB_ALLOC_GLOBAL;
	struct lrb_chan_attr attr = {
		.subbuf_size = SB16K,
		.num_subbuf = 4,
		.nr_cpus = 2,
		.stream_id = 42,
		.priv = &marker,
	};
	long allocs = lrb_port_live_allocs();
	struct lrb_chan *chan = NULL;
	struct drain d = { .use_model = true };
	struct lrb_buf *buf, *wb;
	unsigned long c, p;
	struct lrb_stats st;
	struct lrb_subbuf sb;
	unsigned int i;
	int ret;

	ret = lrb_channel_create(cfg, &attr, &chan);
	REQUIRE_EQ(ret, 0);
	REQUIRE(chan);
	CHECK(chan->cfg == cfg);
	CHECK_EQ(chan->nr_bufs, global ? 1 : 2);
	CHECK_EQ(chan->subbuf_size, SB16K);
	CHECK_EQ(chan->subbuf_order, 14);
	CHECK_EQ(chan->num_subbuf, 4);
	CHECK_EQ(chan->num_subbuf_order, 2);
	CHECK_EQ(chan->pages_per_subbuf, 4);
	CHECK_EQ(chan->stream_id, 42);
	CHECK(chan->priv == &marker);
	CHECK(lrb_port_live_allocs() > allocs);
	for (i = 0; i < chan->nr_bufs; i++) {
		buf = lrb_channel_buf(chan, i);
		CHECK(buf);
		if (!buf)
			continue;
		CHECK(buf->chan == chan);
		CHECK_EQ(buf->cpu, i);
		/* struct lrb_buf is cache-line aligned: so must its memory */
		CHECK_EQ((uintptr_t)buf % __alignof__(struct lrb_buf), 0);
		lrb_positions(buf, &c, &p);
		CHECK_EQ(c, 0);
		CHECK_EQ(p, 0);
		lrb_buf_stats(buf, &st);
		CHECK_EQ(st.produced, 0);
		CHECK_EQ(st.consumed, 0);
		test_check_lost(buf, 0, 0, 0);
		CHECK(!lrb_buf_readable(buf));
	}

	model_reset(false);
	for (i = 0; i < 150; i++)
		CHECK_EQ(mwrite(cfg, chan, 1 + i % 12, 8 + (i * 37) % 200), 0);
	now += 100;
	lrb_channel_flush(chan);
	wb = my_buf(cfg, chan);
	for (i = 0; i < chan->nr_bufs; i++) {
		buf = lrb_channel_buf(chan, i);
		CHECK_EQ(lrb_reader_open(buf), 0);
		if (buf == wb) {
			CHECK(lrb_buf_readable(buf));
			drain(&d, chan, buf);
			CHECK_EQ(d.records, 150);
			CHECK_EQ(M.next, M.n);
			CHECK(d.packets >= 2);
			CHECK_EQ(d.gaps, 0);
			test_check_lost(buf, 0, 0, 0);
			lrb_positions(buf, &c, &p);
			CHECK_EQ(c, p);
			CHECK_EQ(c, d.packets * SB16K);
		} else {
			CHECK_EQ(lrb_get_next_subbuf(buf, &sb), -EAGAIN);
		}
		lrb_reader_close(buf);
	}
	lrb_channel_destroy(chan);
	CHECK_EQ(lrb_port_live_allocs(), allocs);
}

static void test_create_variants(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(variants); i++)
		one_variant(&variants[i]);
	one_variant(&cfg_timer);
}

/* Compact layout: raw bytes of the packet header and 12-byte records. */
static void test_compact_layout(void)
{
	struct drain d = { .use_model = true };
	struct lrb_packet_header h;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	struct lrb_subbuf sb;
	struct lrb_stats st;
	unsigned long c, p;
	u8 data[256];
	u32 w, i;

	chan = setup_chan(&cfg_dgc, SB16K, 4, SETUP_READER, &buf);
	REQUIRE(chan);
	for (i = 0; i < 10; i++) {
		now = 1000 + 5 * i;
		CHECK_EQ(mwrite(&cfg_dgc, chan, i + 1, 8), 0);
	}
	lrb_positions(buf, &c, &p);
	CHECK_EQ(c, 0);
	CHECK_EQ(p, 64 + 10 * 12);
	lrb_buf_stats(buf, &st);
	CHECK_EQ(st.produced, 64 + 10 * 12);
	CHECK_EQ(st.consumed, 0);
	CHECK(!lrb_buf_readable(buf));
	CHECK_EQ(lrb_get_next_subbuf(buf, &sb), -EAGAIN);

	now = 2000;
	lrb_buf_flush(buf);
	CHECK(lrb_buf_readable(buf));
	REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
	CHECK_EQ(sb.pos, 0);
	CHECK_EQ(sb.seq, 0);
	CHECK_EQ(sb.content_size, 64 + 10 * 12);
	CHECK_EQ(sb.packet_size, 4096);
	lrb_subbuf_copy(chan, &sb, 0, data, sizeof(data));
	memcpy(&h, data, sizeof(h));
	CHECK_EQ(sizeof(h), 64);
	CHECK_EQ(h.magic, LRB_PACKET_MAGIC);
	CHECK_EQ(h.stream_id, 7);
	CHECK_EQ(h.timestamp_begin, 1000);
	CHECK_EQ(h.timestamp_end, 2000);
	CHECK_EQ(h.content_size, (64 + 10 * 12) * 8);
	CHECK_EQ(h.packet_size, 4096 * 8);
	CHECK_EQ(h.packet_seq_num, 0);
	CHECK_EQ(h.events_discarded, 0);
	CHECK_EQ(h.cpu_id, 0);
	CHECK_EQ(h.header_size, 64);
	for (i = 0; i < 10; i++) {
		memcpy(&w, data + 64 + 12 * i, 4);
		CHECK_EQ(w, (i + 1) | ((1000 + 5 * i) << 5));
		memcpy(&w, data + 68 + 12 * i, 4);
		CHECK_EQ(w, 8);
		memcpy(&w, data + 72 + 12 * i, 4);
		CHECK_EQ(w, i);
	}
	process_packet(&d, chan, buf, &sb);
	CHECK_EQ(d.records, 10);
	CHECK_EQ(M.next, 10);
	lrb_put_subbuf(buf, &sb);
	lrb_positions(buf, &c, &p);
	CHECK_EQ(c, SB16K);
	CHECK_EQ(p, SB16K);
	CHECK(!lrb_buf_readable(buf));
	teardown_chan(chan, buf);
}

/* Large layout: 8-byte headers; id 0xFFFFFFFF needs the extended form. */
static void test_large_layout(void)
{
	struct drain d = { .use_model = true };
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	struct lrb_subbuf sb;
	unsigned long c, p;
	u8 data[256];
	u32 w[6], i;
	u64 ts;

	chan = setup_chan(&cfg_dgl, SB16K, 4, SETUP_READER, &buf);
	REQUIRE(chan);
	now = 5000;
	for (i = 0; i < 4; i++) {
		now += 3;
		CHECK_EQ(mwrite(&cfg_dgl, chan, 100000 + i, 8), 0);
	}
	now += 1;
	CHECK_EQ(mwrite(&cfg_dgl, chan, 0xFFFFFFFEU, 8), 0);
	now += 1;
	CHECK_EQ(mwrite(&cfg_dgl, chan, 0xFFFFFFFFU, 8), 0);
	lrb_positions(buf, &c, &p);
	CHECK_EQ(p, 64 + 5 * 16 + 24);
	lrb_buf_flush(buf);
	REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
	CHECK_EQ(sb.content_size, 64 + 5 * 16 + 24);
	lrb_subbuf_copy(chan, &sb, 0, data, sizeof(data));
	for (i = 0; i < 4; i++) {
		memcpy(w, data + 64 + 16 * i, 16);
		CHECK_EQ(w[0], 100000 + i);
		CHECK_EQ(w[1], 5003 + 3 * i);
		CHECK_EQ(w[2], 8);
		CHECK_EQ(w[3], i);
	}
	memcpy(w, data + 64 + 4 * 16, 24);
	CHECK_EQ(w[0], 0xFFFFFFFEU);
	memcpy(w, data + 64 + 5 * 16, 24);
	CHECK_EQ(w[0], LRB_LARGE_ID_EXTENDED);
	CHECK_EQ(w[1], 0xFFFFFFFFU);
	memcpy(&ts, &w[2], 8);
	CHECK_EQ(ts, now);
	CHECK_EQ(w[4], 8);
	process_packet(&d, chan, buf, &sb);
	CHECK_EQ(d.records, 6);
	CHECK_EQ(M.next, 6);
	lrb_put_subbuf(buf, &sb);
	teardown_chan(chan, buf);
}

static u8 big_a[SB16K], big_b[SB16K];

/* lrb_subbuf_copy() at any offset and length agrees with a full copy. */
static void check_piecewise_copy(struct drain *d, struct lrb_chan *chan,
				 struct lrb_subbuf *sb, const u8 *data)
{
	static const unsigned long cuts[][2] = {
		{ 0, 1 }, { 4095, 2 }, { 4090, 4100 }, { 8191, 8193 },
		{ 12287, 4097 }, { 100, 16000 }, { 16383, 1 }, { 0, 16384 },
	};
	unsigned long off, n, i;
	bool same = true;

	(void)d;
	for (off = 0; off < SB16K; off += n) {
		n = SB16K - off > 1000 ? 1000 : SB16K - off;
		lrb_subbuf_copy(chan, sb, off, big_a + off, n);
	}
	CHECK(!memcmp(big_a, data, SB16K));
	for (i = 0; i < ARRAY_SIZE(cuts); i++) {
		memset(big_b, 0xee, sizeof(big_b));
		lrb_subbuf_copy(chan, sb, cuts[i][0], big_b, cuts[i][1]);
		if (memcmp(big_b, data + cuts[i][0], cuts[i][1]))
			same = false;
		if (cuts[i][1] < SB16K && big_b[cuts[i][1]] != 0xee)
			same = false;
	}
	CHECK(same);
}

/* Records of 1000-3000 bytes straddle the 4 KiB pages of sub-buffers. */
static void test_page_crossing(void)
{
	static const u32 chunks[] = { 1, 3, 7, 333, 4096 };
	struct drain d = {
		.use_model = true,
		.on_packet = check_piecewise_copy,
	};
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	u32 i;

	chan = setup_chan(&cfg_dgc, SB16K, 8, SETUP_READER, &buf);
	REQUIRE(chan);
	now = 3000;
	for (i = 0; i < 25; i++) {
		now += 17;
		CHECK_EQ(mwrite_chunked(&cfg_dgc, chan, 1 + i % 10,
					1000 + (i * 577) % 2001,
					chunks[i % 5]), 0);
	}
	for (i = 0; i < 5; i++) {
		now += 1;
		CHECK_EQ(mwrite(&cfg_dgc, chan, 2, 2999 + i), 0);
	}
	lrb_channel_flush(chan);
	drain(&d, chan, buf);
	CHECK_EQ(d.records, 30);
	CHECK_EQ(M.next, M.n);
	CHECK(d.packets >= 3);
	CHECK(d.page_cross > 5);
	test_check_lost(buf, 0, 0, 0);
	teardown_chan(chan, buf);
}

/*
 * Padding is zeroed even in reused, dirty memory: the alignment bytes
 * after payloads of 1 to 7 bytes and the end of a packet closed because
 * the next record did not fit.
 */
static void test_padding_zeroed(void)
{
	struct drain d = { .use_model = true };
	struct lrb_subbuf sb;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	u32 id;

	chan = setup_chan(&cfg_dgc, SB4K, 2, SETUP_READER, &buf);
	REQUIRE(chan);
	now = 100;

	/* one record filling a whole sub-buffer: delivered without flush */
	CHECK_EQ(mwrite(&cfg_dgc, chan, 1, SB4K - 64 - 4), 0);
	CHECK(lrb_buf_readable(buf));
	drain(&d, chan, buf);
	CHECK_EQ(d.packets, 1);
	CHECK_EQ(mwrite(&cfg_dgc, chan, 1, SB4K - 64 - 4), 0);
	drain(&d, chan, buf);
	CHECK_EQ(d.packets, 2);
	CHECK_EQ(d.records, 2);

	/* now the pages are dirty */
	now += 10;
	for (id = TEST_ID_FIXED_MIN; id < TEST_ID_FIXED_MAX; id++)
		CHECK_EQ(mwrite(&cfg_dgc, chan, id, test_fixed_len(id)), 0);
	CHECK_EQ(mwrite(&cfg_dgc, chan, 2, 3000), 0);
	CHECK(!lrb_buf_readable(buf));
	CHECK_EQ(mwrite(&cfg_dgc, chan, 3, 3000), 0);
	CHECK(lrb_buf_readable(buf));
	REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
	CHECK_EQ(sb.content_size, 64 + 4 * 8 + 3 * 12 + 3004);
	CHECK_EQ(sb.seq, 2);
	process_packet(&d, chan, buf, &sb);
	lrb_put_subbuf(buf, &sb);
	lrb_buf_flush(buf);
	drain(&d, chan, buf);
	CHECK_EQ(d.packets, 4);
	CHECK_EQ(d.records, 2 + 7 + 2);
	CHECK_EQ(M.next, M.n);
	test_check_lost(buf, 0, 0, 0);
	teardown_chan(chan, buf);
}

/* Reserve by hand, noting the record in the model at reservation time. */
static int reserve_rec(const struct lrb_config *cfg, struct lrb_chan *chan,
		       struct lrb_ctx *ctx, u32 id, u32 len)
{
	u32 seq = M.seq++;
	int ret;

	ret = lrb_reserve(cfg, chan, ctx, id, len);
	if (ret)
		return ret;
	test_fill_payload(payload_buf, id, len, seq);
	lrb_write(ctx, payload_buf, len);
	return 0;
}

static void test_try_discard(void)
{
	struct drain d = { .use_model = true };
	struct lrb_ctx a, b, e;
	unsigned long c, p, p2, begin_a, begin_b;
	struct lrb_subbuf sb;
	struct lrb_chan *chan;
	struct lrb_buf *buf;

	chan = setup_chan(&cfg_dgc, SB16K, 4, SETUP_READER, &buf);
	REQUIRE(chan);

	/* success; the next record is compact, as before the discard */
	now = (1ULL << 30) + 5;
	CHECK_EQ(mwrite(&cfg_dgc, chan, 1, 8), 0);
	now += 3;
	lrb_positions(buf, &c, &p);
	CHECK_EQ(mwrite(&cfg_dgc, chan, 2, 8), 0);
	lrb_positions(buf, &c, &p2);
	CHECK_EQ(p2 - p, 12);
	now += 3;
	REQUIRE_EQ(reserve_rec(&cfg_dgc, chan, &a, 3, 8), 0);
	begin_a = a.begin;
	CHECK_EQ(begin_a, p2);
	CHECK_EQ(lrb_try_discard(&cfg_dgc, &a), 0);
	lrb_positions(buf, &c, &p);
	CHECK_EQ(p, p2);
	now += 2;
	CHECK_EQ(mwrite(&cfg_dgc, chan, 4, 8), 0);
	lrb_positions(buf, &c, &p);
	CHECK_EQ(p - p2, 12);
	now += 2;
	CHECK_EQ(mwrite(&cfg_dgc, chan, 5, 8), 0);
	lrb_positions(buf, &c, &p2);
	CHECK_EQ(p2 - p, 12);

	/* -EBUSY: a later reservation exists, the first must be committed */
	now += 1;
	REQUIRE_EQ(reserve_rec(&cfg_dgc, chan, &a, 6, 8), 0);
	model_add(6, 8, M.seq - 1, now);
	now += 1;
	REQUIRE_EQ(reserve_rec(&cfg_dgc, chan, &b, 7, 20), 0);
	model_add(7, 20, M.seq - 1, now);
	CHECK(b.begin >= a.end);
	lrb_commit(&cfg_dgc, &b);
	CHECK_EQ(lrb_try_discard(&cfg_dgc, &a), -EBUSY);
	lrb_commit(&cfg_dgc, &a);

	/* a nested (later) reservation can be discarded under an open one */
	now += 1;
	REQUIRE_EQ(reserve_rec(&cfg_dgc, chan, &a, 8, 8), 0);
	model_add(8, 8, M.seq - 1, now);
	REQUIRE_EQ(reserve_rec(&cfg_dgc, chan, &b, 9, 8), 0);
	begin_b = b.begin;
	CHECK_EQ(lrb_try_discard(&cfg_dgc, &b), 0);
	lrb_commit(&cfg_dgc, &a);
	now += 1;
	REQUIRE_EQ(reserve_rec(&cfg_dgc, chan, &e, 10, 8), 0);
	CHECK_EQ(e.begin, begin_b);
	model_add(10, 8, M.seq - 1, now);
	lrb_commit(&cfg_dgc, &e);

	now += 1;
	lrb_buf_flush(buf);
	REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
	process_packet(&d, chan, buf, &sb);
	lrb_put_subbuf(buf, &sb);
	CHECK_EQ(d.records, 8);
	CHECK_EQ(M.next, M.n);
	test_check_lost(buf, 0, 0, 0);
	teardown_chan(chan, buf);
}

/*
 * A discarded record never becomes the timestamp reference: the next record
 * is 2^27 ticks after the one before the discarded one, but less after the
 * discarded one, and must use the extended form (decoder's view).
 */
static void note_extended(struct drain *d, struct lrb_buf *buf,
			  const struct lrb_record *rec)
{
	(void)buf;
	if (rec->extended)
		d->user |= 1UL << (d->records - 1);
}

static void test_try_discard_extended(void)
{
	struct drain d = { .use_model = true, .on_record = note_extended };
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	struct lrb_ctx a;

	chan = setup_chan(&cfg_dgc, SB16K, 4, SETUP_READER, &buf);
	REQUIRE(chan);
	now = (3ULL << 30) + 77;
	CHECK_EQ(mwrite(&cfg_dgc, chan, 1, 8), 0);	/* record 0 */
	now += 1;
	CHECK_EQ(mwrite(&cfg_dgc, chan, 1, 8), 0);	/* 1: compact */
	now += 1ULL << 26;
	REQUIRE_EQ(reserve_rec(&cfg_dgc, chan, &a, 3, 8), 0);
	CHECK_EQ(lrb_try_discard(&cfg_dgc, &a), 0);
	now += (1ULL << 26) + 10;
	CHECK_EQ(mwrite(&cfg_dgc, chan, 1, 8), 0);	/* 2: extended */
	now += 1;
	CHECK_EQ(mwrite(&cfg_dgc, chan, 1, 8), 0);	/* 3: compact */
	lrb_buf_flush(buf);
	drain(&d, chan, buf);
	CHECK_EQ(d.records, 4);
	CHECK_EQ(d.user & 0xe, 0x4);
	teardown_chan(chan, buf);
}

/*
 * Flushing @buf and @chan closes no packet: none to read, nothing consumed.
 * Returns the write position.
 */
static unsigned long check_nothing_closed(struct lrb_chan *chan,
					  struct lrb_buf *buf)
{
	struct lrb_subbuf sb;
	unsigned long c, p;

	lrb_buf_flush(buf);
	lrb_channel_flush(chan);
	CHECK(!lrb_buf_readable(buf));
	CHECK_EQ(lrb_get_next_subbuf(buf, &sb), -EAGAIN);
	lrb_positions(buf, &c, &p);
	CHECK_EQ(c, 0);
	return p;
}

/* A packet whose only record was discarded holds no record: not closed. */
static void test_header_only_not_closed(void)
{
	struct drain d = { .use_model = true };
	struct lrb_subbuf sb;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	struct lrb_ctx a;

	chan = setup_chan(&cfg_dgc, SB4K, 4, SETUP_READER, &buf);
	REQUIRE(chan);
	now = 500;
	REQUIRE_EQ(reserve_rec(&cfg_dgc, chan, &a, 1, 8), 0);
	CHECK_EQ(a.begin, 64);
	CHECK_EQ(lrb_try_discard(&cfg_dgc, &a), 0);
	CHECK(check_nothing_closed(chan, buf) <= 64);
	now = 600;
	CHECK_EQ(mwrite(&cfg_dgc, chan, 2, 8), 0);
	lrb_buf_flush(buf);
	REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
	CHECK_EQ(sb.seq, 0);
	CHECK_EQ(sb.content_size, 64 + 12);
	process_packet(&d, chan, buf, &sb);
	lrb_put_subbuf(buf, &sb);
	CHECK_EQ(d.records, 1);
	CHECK_EQ(M.next, M.n);
	teardown_chan(chan, buf);
}

/*
 * A record whose payload ends 1 to 3 bytes before its packet's end closes
 * the packet: the content ends with the payload, the next record starts in
 * the next packet, and the produced position says so.
 */
static void test_unaligned_packet_end(void)
{
	struct lrb_chan *chan;
	struct lrb_subbuf sb;
	struct lrb_buf *buf;
	unsigned long c, p, short_by;

	for (short_by = 0; short_by < LRB_RECORD_ALIGN; short_by++) {
		struct drain d = { .use_model = true };

		chan = setup_chan(&cfg_dgc, SB4K, 4, SETUP_READER, &buf);
		REQUIRE(chan);
		now = 100;
		/* packet header 64, record header 4 */
		CHECK_EQ(mwrite(&cfg_dgc, chan, 1, SB4K - 64 - 4 - short_by), 0);
		lrb_positions(buf, &c, &p);
		CHECK_EQ(p, SB4K);
		/* nothing left to flush */
		lrb_buf_flush(buf);
		lrb_positions(buf, &c, &p);
		CHECK_EQ(p, SB4K);
		REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
		CHECK_EQ(sb.content_size, SB4K - short_by);
		CHECK_EQ(sb.packet_size, SB4K);
		process_packet(&d, chan, buf, &sb);
		CHECK_EQ(lrb_put_subbuf(buf, &sb), 0);
		CHECK_EQ(lrb_get_next_subbuf(buf, &sb), -EAGAIN);
		/* the next record opens the next packet */
		CHECK_EQ(mwrite(&cfg_dgc, chan, 1, 5), 0);
		lrb_buf_flush(buf);
		REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
		CHECK_EQ(sb.pos, SB4K);
		CHECK_EQ(sb.content_size, 64 + 4 + 5);
		process_packet(&d, chan, buf, &sb);
		CHECK_EQ(lrb_put_subbuf(buf, &sb), 0);
		lrb_positions(buf, &c, &p);
		CHECK_EQ(c, 2 * SB4K);
		CHECK_EQ(p, 2 * SB4K);
		CHECK_EQ(d.records, 2);
		CHECK_EQ(M.next, M.n);
		teardown_chan(chan, buf);
	}
}

/*
 * Records lost while the ring was full are in no packet header until
 * lrb_buf_flush_final() closes an empty packet carrying the count.
 */
static void test_flush_final(void)
{
	struct lrb_packet_header h;
	struct lrb_chan *chan;
	struct lrb_subbuf sb;
	struct lrb_buf *buf;
	unsigned long lost;
	u64 last = 0, last_end = 0;
	int i;

	chan = setup_chan(&cfg_dgc, SB4K, 2, SETUP_READER, &buf);
	REQUIRE(chan);
	now = 10;
	/* a switch timer closes packets now and then: none may be open */
	for (i = 0; i < 1000; i++) {
		mwrite(&cfg_dgc, chan, 1, 16);
		if (i % 100 == 99)
			lrb_buf_flush(buf);
	}
	lost = lrb_buf_lost(buf);
	CHECK(lost > 0);
	while (!lrb_get_next_subbuf(buf, &sb)) {
		lrb_subbuf_copy(chan, &sb, 0, &h, sizeof(h));
		last = h.events_discarded;
		last_end = h.timestamp_end;
		lrb_put_subbuf(buf, &sb);
	}
	CHECK(last < lost);
	lrb_buf_flush_final(buf, last_end + 5);
	REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
	CHECK_EQ(sb.content_size, LRB_PACKET_HEADER_SIZE);
	lrb_subbuf_copy(chan, &sb, 0, &h, sizeof(h));
	CHECK_EQ(h.events_discarded, lost);
	CHECK_EQ(h.magic, LRB_PACKET_MAGIC);
	CHECK_EQ(h.timestamp_begin, last_end + 5);
	CHECK_EQ(h.timestamp_end, last_end + 5);
	lrb_put_subbuf(buf, &sb);
	CHECK_EQ(lrb_get_next_subbuf(buf, &sb), -EAGAIN);
	teardown_chan(chan, buf);
}

static void test_flush(void)
{
	struct drain d = { .use_model = true };
	struct lrb_subbuf sb;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	unsigned long c, p;

	chan = setup_chan(&cfg_dgc, SB4K, 4, SETUP_READER, &buf);
	REQUIRE(chan);

	/* nothing written: nothing to close */
	CHECK_EQ(check_nothing_closed(chan, buf), 0);

	now = 10;
	CHECK_EQ(mwrite(&cfg_dgc, chan, 1, 8), 0);
	now = 20;
	lrb_buf_flush(buf);
	REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
	CHECK_EQ(sb.pos, 0);
	CHECK_EQ(sb.content_size, 64 + 12);
	process_packet(&d, chan, buf, &sb);
	lrb_put_subbuf(buf, &sb);
	lrb_positions(buf, &c, &p);
	CHECK_EQ(c, SB4K);
	CHECK_EQ(p, SB4K);

	/* flushing again closes nothing */
	lrb_buf_flush(buf);
	lrb_channel_flush(chan);
	CHECK_EQ(lrb_get_next_subbuf(buf, &sb), -EAGAIN);

	now = 30;
	CHECK_EQ(mwrite(&cfg_dgc, chan, 1, 12), 0);
	CHECK_EQ(mwrite(&cfg_dgc, chan, 1, 13), 0);
	lrb_channel_flush(chan);
	REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
	CHECK_EQ(sb.pos, SB4K);
	CHECK_EQ(sb.seq, 1);
	/* the content ends with the last payload, not its padding */
	CHECK_EQ(sb.content_size, 64 + 16 + 17);
	process_packet(&d, chan, buf, &sb);
	lrb_put_subbuf(buf, &sb);
	CHECK_EQ(d.records, 3);
	CHECK_EQ(M.next, M.n);
	lrb_positions(buf, &c, &p);
	CHECK_EQ(c, 2 * SB4K);
	CHECK_EQ(p, 2 * SB4K);
	teardown_chan(chan, buf);
}

static void test_reader_busy(void)
{
	struct lrb_chan *chan = make_chan(&cfg_dcc, SB4K, 2, 2);
	struct lrb_buf *b0, *b1;

	REQUIRE(chan);
	b0 = lrb_channel_buf(chan, 0);
	b1 = lrb_channel_buf(chan, 1);
	CHECK_EQ(lrb_reader_open(b0), 0);
	CHECK_EQ(lrb_reader_open(b0), -EBUSY);
	CHECK_EQ(lrb_reader_open(b1), 0);
	CHECK_EQ(lrb_reader_open(b1), -EBUSY);
	lrb_reader_close(b0);
	CHECK_EQ(lrb_reader_open(b0), 0);
	CHECK_EQ(lrb_reader_open(b0), -EBUSY);
	lrb_reader_close(b0);
	lrb_reader_close(b1);
	lrb_channel_destroy(chan);
}

/* lrb_get_subbuf(): snapshot at a position, without consuming. */
static void test_get_subbuf_snapshot(void)
{
	struct drain d = { .use_model = true };
	static u8 snap0[SB4K], snap1[SB4K], tmp[SB4K];
	struct lrb_subbuf sb, sb2;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	unsigned long c, p;
	struct lrb_stats st;
	int i;

	chan = setup_chan(&cfg_dgc, SB4K, 4, SETUP_READER, &buf);
	REQUIRE(chan);
	now = 100;
	/* 38 records of 104 bytes per packet: 2.5 packets */
	for (i = 0; i < 95; i++)
		CHECK_EQ(mwrite(&cfg_dgc, chan, 1, 100), 0);
	lrb_positions(buf, &c, &p);
	CHECK_EQ(c, 0);
	CHECK_EQ(p, 2 * SB4K + 64 + 19 * 104);
	lrb_buf_stats(buf, &st);
	CHECK_EQ(st.produced, p);
	CHECK_EQ(st.consumed, 0);
	CHECK(lrb_buf_readable(buf));

	REQUIRE_EQ(lrb_get_subbuf(buf, 0, &sb), 0);
	CHECK_EQ(sb.pos, 0);
	CHECK_EQ(sb.seq, 0);
	CHECK(!sb.consuming);
	CHECK_EQ(sb.content_size, 64 + 38 * 104);
	lrb_subbuf_copy(chan, &sb, 0, snap0, SB4K);
	lrb_put_subbuf(buf, &sb);
	REQUIRE_EQ(lrb_get_subbuf(buf, SB4K, &sb), 0);
	CHECK_EQ(sb.pos, SB4K);
	CHECK_EQ(sb.seq, 1);
	CHECK(!sb.consuming);
	lrb_subbuf_copy(chan, &sb, 0, snap1, SB4K);
	lrb_put_subbuf(buf, &sb);
	CHECK_EQ(lrb_get_subbuf(buf, 2 * SB4K, &sb), -EAGAIN);
	CHECK_EQ(lrb_get_subbuf(buf, 3 * SB4K, &sb), -EAGAIN);
	lrb_positions(buf, &c, &p);
	CHECK_EQ(c, 0);

	/* the consuming reader still gets packet 0 */
	REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
	CHECK_EQ(sb.pos, 0);
	CHECK(sb.consuming);
	lrb_subbuf_copy(chan, &sb, 0, tmp, SB4K);
	CHECK(!memcmp(tmp, snap0, SB4K));
	lrb_positions(buf, &c, &p);
	CHECK_EQ(c, 0);
	process_packet(&d, chan, buf, &sb);
	lrb_put_subbuf(buf, &sb);
	lrb_positions(buf, &c, &p);
	CHECK_EQ(c, SB4K);

	CHECK_EQ(lrb_get_subbuf(buf, 0, &sb2), -ENODATA);
	REQUIRE_EQ(lrb_get_subbuf(buf, SB4K, &sb2), 0);
	lrb_subbuf_copy(chan, &sb2, 0, tmp, SB4K);
	CHECK(!memcmp(tmp, snap1, SB4K));
	lrb_put_subbuf(buf, &sb2);
	lrb_positions(buf, &c, &p);
	CHECK_EQ(c, SB4K);

	drain(&d, chan, buf);
	CHECK_EQ(d.packets, 2);
	lrb_buf_flush(buf);
	drain(&d, chan, buf);
	CHECK_EQ(d.packets, 3);
	CHECK_EQ(d.records, 95);
	CHECK_EQ(M.next, M.n);
	CHECK_EQ(lrb_get_subbuf(buf, SB4K, &sb2), -ENODATA);
	teardown_chan(chan, buf);
}

/*
 * Discard mode: with no reader the ring fills (4 packets of 38 records),
 * then every record is dropped and counted; nothing is overwritten, and
 * written == read + lost exactly. events_discarded follows the count.
 */
static void test_discard_full_accounting(void)
{
	struct drain d = { .use_model = true };
	unsigned long ok = 0, nobufs = 0, i, c, p;
	struct lrb_subbuf sb;
	struct lrb_stats st;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	int ret;

	chan = setup_chan(&cfg_dgc, SB4K, 4, 0, &buf);
	REQUIRE(chan);
	now = 1000;
	for (i = 0; i < 2000; i++)
		test_tally(mwrite(&cfg_dgc, chan, 1, 100), -ENOBUFS, &ok,
			   &nobufs);
	CHECK_EQ(ok, 4 * 38);
	CHECK_EQ(nobufs, 2000 - 4 * 38);
	test_check_lost(buf, nobufs, 0, 0);
	lrb_buf_stats(buf, &st);
	CHECK_EQ(st.consumed, 0);
	CHECK(st.produced <= 4 * SB4K);
	CHECK(st.produced >= 4 * SB4K - 104);

	CHECK_EQ(lrb_reader_open(buf), 0);
	drain(&d, chan, buf);
	CHECK(d.packets >= 3);
	lrb_buf_flush(buf);
	drain(&d, chan, buf);
	CHECK_EQ(d.packets, 4);
	CHECK_EQ(d.records, ok);
	CHECK_EQ(d.gaps, 0);
	CHECK_EQ(M.next, M.n);

	/* a packet closed after the losses reports all of them */
	CHECK_EQ(mwrite(&cfg_dgc, chan, 1, 8), 0);
	lrb_buf_flush(buf);
	REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
	CHECK_EQ(sb.seq, 4);
	process_packet(&d, chan, buf, &sb);
	CHECK_EQ(d.last_discarded, lrb_buf_lost(buf));
	lrb_put_subbuf(buf, &sb);

	/* a lagging reader: read one packet every 150 attempts */
	for (i = 0; i < 6000; i++) {
		if (i % 150 == 149)
			drain_one(&d, chan, buf);
		ret = mwrite(&cfg_dgc, chan, 1 + i % 12, 8 + i % 150);
		CHECK(ret == 0 || ret == -ENOBUFS);
	}
	lrb_buf_flush(buf);
	drain(&d, chan, buf);
	CHECK_EQ(M.next, M.n);
	CHECK_EQ(d.gaps, 0);
	CHECK_EQ(M.attempts, d.records + lrb_buf_lost(buf));
	CHECK_EQ(M.failed, lrb_buf_lost(buf));
	lrb_buf_stats(buf, &st);
	CHECK_EQ(st.lost_full, lrb_buf_lost(buf));
	CHECK(st.lost_full > nobufs);
	CHECK(d.last_discarded <= st.lost_full);
	lrb_positions(buf, &c, &p);
	CHECK_EQ(c, p);
	CHECK_EQ(st.consumed, c);
	CHECK_EQ(st.produced, p);
	teardown_chan(chan, buf);
}

/*
 * Overwrite mode, at the end: flush and read the rest of @buf (reader
 * open). The gaps in the packet sequence are the packets counted lost, the
 * newest record was read and none was dropped. Returns the packets lost.
 */
static u64 check_overwrite_end(struct drain *d, struct lrb_chan *chan,
			       struct lrb_buf *buf)
{
	struct lrb_stats st;

	lrb_buf_flush(buf);
	drain(d, chan, buf);
	lrb_buf_stats(buf, &st);
	CHECK_EQ(d->gaps, st.lost_packets);
	CHECK_EQ(d->next_seq, d->packets + st.lost_packets);
	CHECK_EQ(M.next, M.n);
	CHECK_EQ(lrb_buf_lost(buf), 0);
	return st.lost_packets;
}

/*
 * Overwrite mode: writers never drop records; readers see the newest
 * packets, and the gaps in their sequence numbers equal lost_packets.
 */
static void test_overwrite_gaps(void)
{
	struct drain d = { .use_model = true };
	struct lrb_stats st;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	unsigned long c, p;
	int i;

	chan = setup_chan(&cfg_ogc, SB4K, 4, SETUP_SKIP, &buf);
	REQUIRE(chan);
	now = 1;
	for (i = 0; i < 2000; i++) {
		now += 3;
		CHECK_EQ(mwrite(&cfg_ogc, chan, 1, 100), 0);
	}
	lrb_buf_stats(buf, &st);
	CHECK_EQ(lrb_buf_lost(buf), 0);
	CHECK(st.lost_packets > 40);
	CHECK_EQ(lrb_reader_open(buf), 0);
	drain(&d, chan, buf);
	CHECK(d.packets >= 2);
	check_overwrite_end(&d, chan, buf);
	CHECK_EQ(d.next_seq, (2000 + 37) / 38);
	lrb_positions(buf, &c, &p);
	CHECK_EQ(c, p);

	/* and again, now that a reader is attached but lags */
	for (i = 0; i < 3000; i++) {
		now += 1;
		CHECK_EQ(mwrite(&cfg_ogc, chan, 2, 8 + i % 200), 0);
		if (i % 500 == 0)
			drain_one(&d, chan, buf);
	}
	check_overwrite_end(&d, chan, buf);
	teardown_chan(chan, buf);
}

/* Overwrite mode: a sub-buffer the reader holds is never written. */
static void test_overwrite_hold(void)
{
	struct drain d = { .use_model = true };
	static u8 held[SB4K], again[SB4K];
	struct lrb_subbuf sb;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	int i;

	chan = setup_chan(&cfg_ogc, SB4K, 4, SETUP_SKIP, &buf);
	REQUIRE(chan);
	now = 50;
	for (i = 0; i < 200; i++)
		CHECK_EQ(mwrite(&cfg_ogc, chan, 3, 100), 0);
	CHECK_EQ(lrb_reader_open(buf), 0);
	REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
	CHECK(sb.consuming);
	lrb_subbuf_copy(chan, &sb, 0, held, SB4K);

	/* wrap the ring about 20 times */
	for (i = 0; i < 3000; i++) {
		now += 1;
		CHECK_EQ(mwrite(&cfg_ogc, chan, 4, 100), 0);
	}
	memset(again, 0, sizeof(again));
	lrb_subbuf_copy(chan, &sb, 0, again, SB4K);
	CHECK(!memcmp(held, again, SB4K));
	process_packet(&d, chan, buf, &sb);
	lrb_put_subbuf(buf, &sb);

	CHECK(check_overwrite_end(&d, chan, buf) > 60);
	CHECK_EQ(d.next_seq, (3200 + 37) / 38);
	teardown_chan(chan, buf);
}

/*
 * Overwrite mode: a snapshot (lrb_get_subbuf) is not written either while
 * held, and does not consume; writers push the read position past what
 * they overwrite.
 */
static void test_overwrite_snapshot(void)
{
	struct drain d = { .use_model = true };
	static u8 held[SB4K], again[SB4K];
	struct lrb_subbuf sb;
	struct lrb_stats st;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	unsigned long c, p;
	int i;

	chan = setup_chan(&cfg_ogc, SB4K, 4, SETUP_READER | SETUP_SKIP, &buf);
	REQUIRE(chan);
	now = 10;
	for (i = 0; i < 95; i++)
		CHECK_EQ(mwrite(&cfg_ogc, chan, 1, 100), 0);
	REQUIRE_EQ(lrb_get_subbuf(buf, SB4K, &sb), 0);
	CHECK_EQ(sb.pos, SB4K);
	CHECK_EQ(sb.seq, 1);
	CHECK(!sb.consuming);
	lrb_subbuf_copy(chan, &sb, 0, held, SB4K);
	lrb_positions(buf, &c, &p);
	CHECK_EQ(c, 0);
	for (i = 0; i < 2000; i++) {
		now += 1;
		CHECK_EQ(mwrite(&cfg_ogc, chan, 2, 100), 0);
	}
	lrb_subbuf_copy(chan, &sb, 0, again, SB4K);
	CHECK(!memcmp(held, again, SB4K));
	process_packet(&d, chan, buf, &sb);
	lrb_put_subbuf(buf, &sb);
	lrb_positions(buf, &c, &p);
	CHECK(c > 4 * SB4K);
	CHECK_EQ(lrb_get_subbuf(buf, SB4K, &sb), -ENODATA);
	CHECK_EQ(lrb_get_subbuf(buf, 0, &sb), -ENODATA);

	/* the consuming reader goes on from the oldest packet left */
	d.next_seq = 0;
	d.gaps = 0;
	M.next = 0;
	lrb_buf_flush(buf);
	drain(&d, chan, buf);
	lrb_buf_stats(buf, &st);
	CHECK(d.packets >= 4);
	CHECK_EQ(d.next_seq, (2095 + 37) / 38);
	CHECK_EQ(d.gaps, st.lost_packets);
	CHECK_EQ(M.next, M.n);
	CHECK_EQ(lrb_buf_lost(buf), 0);
	teardown_chan(chan, buf);
}

/*
 * Overwrite mode: a writer wrapping onto a sub-buffer still being
 * committed (an open reservation) drops with -EAGAIN and counts lost_wrap.
 */
static void test_lost_wrap(void)
{
	struct drain d = { .use_model = true };
	unsigned long ok = 0, again = 0;
	struct lrb_stats st;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	struct lrb_ctx a;
	int i;

	chan = setup_chan(&cfg_ogc, SB4K, 2, 0, &buf);
	REQUIRE(chan);
	now = 1000;
	REQUIRE_EQ(reserve_rec(&cfg_ogc, chan, &a, 1, 8), 0);
	model_add(1, 8, M.seq - 1, now);
	for (i = 0; i < 200; i++)
		test_tally(mwrite(&cfg_ogc, chan, 2, 100), -EAGAIN, &ok,
			   &again);
	lrb_commit(&cfg_ogc, &a);
	CHECK_EQ(ok, 38 * 2);
	CHECK_EQ(again, 200 - 38 * 2);
	lrb_buf_stats(buf, &st);
	CHECK_EQ(st.lost_wrap, again);
	CHECK_EQ(st.lost_full, 0);
	CHECK_EQ(st.lost_packets, 0);
	CHECK_EQ(lrb_buf_lost(buf), again);

	CHECK_EQ(lrb_reader_open(buf), 0);
	drain(&d, chan, buf);
	lrb_buf_flush(buf);
	drain(&d, chan, buf);
	CHECK_EQ(d.packets, 2);
	CHECK_EQ(d.records, 1 + ok);
	CHECK_EQ(M.next, M.n);
	lrb_buf_stats(buf, &st);
	CHECK_EQ(st.lost_packets, 0);
	teardown_chan(chan, buf);
}

static int begin_calls, end_calls;
static struct lrb_chan *cb_chan;

static void cb_begin(struct lrb_buf *buf, struct lrb_packet_header *h)
{
	begin_calls++;
	CHECK(buf && buf->chan == cb_chan);
	CHECK_EQ(h->magic, LRB_PACKET_MAGIC);
	CHECK_EQ(h->header_size, 64);
	CHECK_EQ(h->stream_id, 7);
	CHECK_EQ(h->timestamp_begin, now);
}

static void cb_end(struct lrb_buf *buf, struct lrb_packet_header *h)
{
	end_calls++;
	CHECK(buf && buf->chan == cb_chan);
	CHECK_EQ(h->magic, LRB_PACKET_MAGIC);
	CHECK_EQ(h->timestamp_end, now);
	CHECK_EQ(h->packet_size, SB4K * 8);
	CHECK(h->content_size <= h->packet_size);
	CHECK(h->content_size > 64 * 8);
	CHECK_EQ(h->events_discarded, 0);
}

static const struct lrb_config cfg_cb =
	TEST_CONFIG(LRB_MODE_DISCARD, LRB_ALLOC_GLOBAL, LRB_WAKEUP_BY_WRITER,
		    LRB_HEADER_COMPACT, 27, .clock_read = test_clock,
		    .packet_begin = cb_begin, .packet_end = cb_end);

static void test_callbacks(void)
{
	struct drain d = { .use_model = true };
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	int i;

	chan = setup_chan(&cfg_cb, SB4K, 4, SETUP_READER, &buf);
	REQUIRE(chan);
	cb_chan = chan;
	begin_calls = 0;
	end_calls = 0;
	now = 70;
	for (i = 0; i < 100; i++) {
		now += 2;
		CHECK_EQ(mwrite(&cfg_cb, chan, 5, 100), 0);
	}
	now += 5;
	lrb_channel_flush(chan);
	drain(&d, chan, buf);
	CHECK_EQ(d.packets, 3);
	CHECK_EQ(d.records, 100);
	CHECK_EQ(end_calls, 3);
	CHECK_EQ(begin_calls, 3);
	teardown_chan(chan, buf);
}

static void *late_writer(void *arg)
{
	struct lrb_chan *chan = arg;
	static const u32 payload[2] = { 8 };	/* its length, native order */
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	lrb_thread_init();
	nanosleep(&ts, NULL);
	CHECK_EQ(lrb_event_write(&cfg_dgc, chan, 1, payload, 8), 0);
	lrb_channel_flush(chan);
	return NULL;
}

static void test_wait_readable(void)
{
	struct drain d = { 0 };
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	pthread_t th;

	chan = setup_chan(&cfg_dgc, SB4K, 4, SETUP_READER, &buf);
	REQUIRE(chan);
	CHECK_EQ(lrb_wait_readable(buf, 20), -ETIMEDOUT);
	REQUIRE_EQ(pthread_create(&th, NULL, late_writer, chan), 0);
	CHECK_EQ(lrb_wait_readable(buf, 5000), 0);
	pthread_join(th, NULL);
	CHECK(lrb_buf_readable(buf));
	CHECK_EQ(lrb_wait_readable(buf, 0), 0);
	drain(&d, chan, buf);
	CHECK_EQ(d.records, 1);
	CHECK_EQ(lrb_wait_readable(buf, 10), -ETIMEDOUT);
	teardown_chan(chan, buf);
}

static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

#define PERCPU_MAX 64

static void percpu_record(struct drain *d, struct lrb_buf *buf,
			  const struct lrb_record *rec)
{
	u32 seq;

	(void)d;
	if (rec->len < 8)
		return;
	seq = test_payload_seq(rec->payload);
	CHECK_EQ((seq / 100) % buf->chan->nr_bufs, buf->cpu);
	CHECK(test_check_payload(rec->payload, rec->id, rec->len, seq));
}

/* Per-CPU channels: CPU c writes buffer c % nr_cpus, cpu_id says which. */
static void one_percpu(unsigned int nr_cpus)
{
	struct lrb_chan *chan = make_chan(&cfg_dcc, SB4K, 4, nr_cpus);
	unsigned long expect[PERCPU_MAX] = { 0 }, total = 0, read = 0;
	unsigned int i, k;
	int cpu;

	REQUIRE(chan);
	REQUIRE_EQ(chan->nr_bufs, nr_cpus);
	for (cpu = 0; cpu < CPU_SETSIZE && cpu < PERCPU_MAX * 8; cpu++) {
		if (!CPU_ISSET(cpu, &orig_cpus) || pin_to(cpu))
			continue;
		if (sched_getcpu() != cpu)
			continue;
		for (k = 0; k < 5; k++) {
			u32 seq = cpu * 100 + k;

			test_fill_payload(payload_buf, 1, 16, seq);
			CHECK_EQ(lrb_event_write(&cfg_dcc, chan, 1, payload_buf,
						 16), 0);
		}
		if (cpu % nr_cpus < PERCPU_MAX)
			expect[cpu % nr_cpus] += 5;
		total += 5;
	}
	pin_to(home_cpu);
	CHECK(total > 0);
	lrb_channel_flush(chan);
	for (i = 0; i < chan->nr_bufs && i < PERCPU_MAX; i++) {
		struct lrb_buf *buf = lrb_channel_buf(chan, i);
		struct drain d = { .on_record = percpu_record };

		CHECK_EQ(buf->cpu, i);
		CHECK_EQ(lrb_reader_open(buf), 0);
		drain(&d, chan, buf);
		CHECK_EQ(d.records, expect[i]);
		CHECK_EQ(d.packets > 0, expect[i] > 0);
		read += d.records;
		lrb_reader_close(buf);
	}
	CHECK_EQ(read, total);
	lrb_channel_destroy(chan);
}

static void test_percpu_mapping(void)
{
	int n = lrb_possible_cpus();

	CHECK(n >= 1);
	CHECK(n >= CPU_COUNT(&orig_cpus));
	if (n >= 1 && n <= PERCPU_MAX)
		one_percpu(n);
	one_percpu(1);
	one_percpu(3);
}

/* Counters never go backwards and add up across mixed failures. */
static void test_mixed_accounting(void)
{
	struct drain d = { .use_model = true };
	unsigned long big = 0, full = 0;
	struct lrb_stats st;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	int i, ret;

	chan = setup_chan(&cfg_dgl, SB4K, 2, SETUP_READER, &buf);
	REQUIRE(chan);
	for (i = 0; i < 3000; i++) {
		u32 len = 4 + (i * 131) % 1500;

		if (i % 97 == 0)
			len = SB4K;
		now += i % 7;
		ret = mwrite(&cfg_dgl, chan, 1 + i % 12, len);
		if (ret == -EMSGSIZE)
			big++;
		else if (ret == -ENOBUFS)
			full++;
		else
			CHECK_EQ(ret, 0);
		CHECK_EQ(mwrite(&cfg_dgl, chan, 1, 0), -EINVAL);
		if (i % 10 == 9)
			drain_one(&d, chan, buf);
	}
	lrb_buf_flush(buf);
	drain(&d, chan, buf);
	lrb_buf_stats(buf, &st);
	CHECK_EQ(st.lost_big, big);
	CHECK_EQ(st.lost_full, full);
	CHECK_EQ(big, (3000 + 96) / 97);
	CHECK_EQ(lrb_buf_lost(buf), big + full);
	CHECK_EQ(M.attempts, 3000);
	CHECK_EQ(M.attempts, d.records + lrb_buf_lost(buf));
	CHECK_EQ(M.next, M.n);
	CHECK_EQ(d.gaps, 0);
	teardown_chan(chan, buf);
}

/*
 * Releasing twice, or a sub-buffer never taken, is refused and changes
 * nothing; closing the reader while it holds one releases it. In overwrite
 * mode a second release used to put the reader's slot in the ring twice.
 */
static void test_put_misuse(void)
{
	const struct lrb_config *cfgs[] = { &cfg_dgc, &cfg_ogc };
	struct lrb_subbuf sb, other;
	unsigned long i, c, p;
	struct lrb_chan *chan;
	struct lrb_buf *buf;
	int k;

	for (k = 0; k < 2; k++) {
		chan = setup_chan(cfgs[k], SB4K, 4, SETUP_READER | SETUP_SKIP,
				  &buf);
		REQUIRE(chan);
		for (i = 0; i < 100; i++)
			CHECK_EQ(mwrite(cfgs[k], chan, 1, 100), 0);
		REQUIRE_EQ(lrb_get_subbuf(buf, 0, &sb), 0);
		other = sb;
		other.pos += SB4K;
		CHECK_EQ(lrb_put_subbuf(buf, &other), -EINVAL);
		CHECK_EQ(lrb_put_subbuf(buf, &sb), 0);
		CHECK_EQ(lrb_put_subbuf(buf, &sb), -EINVAL);
		/*
		 * Every slot still appears once: the ring goes on intact
		 * (overwrite mode wraps it many times; discard mode only has
		 * room for 52 more records, nothing having been consumed).
		 */
		for (i = 0; i < (k ? 400 : 40); i++)
			CHECK_EQ(mwrite(cfgs[k], chan, 1, 100), 0);
		lrb_buf_flush(buf);
		REQUIRE_EQ(lrb_get_next_subbuf(buf, &sb), 0);
		lrb_positions(buf, &c, &p);
		lrb_reader_close(buf);
		CHECK_EQ(lrb_put_subbuf(buf, &sb), -EINVAL);
		CHECK_EQ(lrb_reader_open(buf), 0);
		REQUIRE_EQ(lrb_get_next_subbuf(buf, &other), 0);
		CHECK(other.pos > sb.pos);
		CHECK(other.slot != sb.slot || k == 0);
		CHECK_EQ(lrb_put_subbuf(buf, &other), 0);
		teardown_chan(chan, buf);
	}
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

	TEST_RUN(test_create_variants);
	TEST_RUN(test_compact_layout);
	TEST_RUN(test_large_layout);
	TEST_RUN(test_page_crossing);
	TEST_RUN(test_padding_zeroed);
	TEST_RUN(test_try_discard);
	TEST_RUN(test_try_discard_extended);
	TEST_RUN(test_header_only_not_closed);
	TEST_RUN(test_flush);
	TEST_RUN(test_unaligned_packet_end);
	TEST_RUN(test_flush_final);
	TEST_RUN(test_reader_busy);
	TEST_RUN(test_get_subbuf_snapshot);
	TEST_RUN(test_discard_full_accounting);
	TEST_RUN(test_overwrite_gaps);
	TEST_RUN(test_overwrite_hold);
	TEST_RUN(test_overwrite_snapshot);
	TEST_RUN(test_lost_wrap);
	TEST_RUN(test_callbacks);
	TEST_RUN(test_wait_readable);
	TEST_RUN(test_percpu_mapping);
	TEST_RUN(test_mixed_accounting);
	TEST_RUN(test_put_misuse);
	return test_main_end("unit_api");
}
