// SPDX-License-Identifier: GPL-2.0
/*
 * lrb KUnit: helpers shared by the suites; see lrb_kunit.h.
 */
#include <linux/cpumask.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>

#include "lrb_kunit.h"

u64 lrbk_now = 1000;

/* The test clock: what the test last set. */
u64 lrbk_clock(void)
{
	return READ_ONCE(lrbk_now);
}

const struct lrb_config lrbk_variants[LRBK_NR_VARIANTS] = {
	LRBK_CONFIG(DISCARD, PER_CPU, COMPACT),
	LRBK_CONFIG(DISCARD, PER_CPU, LARGE),
	LRBK_CONFIG(DISCARD, GLOBAL, COMPACT),
	LRBK_CONFIG(DISCARD, GLOBAL, LARGE),
	LRBK_CONFIG(OVERWRITE, PER_CPU, COMPACT),
	LRBK_CONFIG(OVERWRITE, PER_CPU, LARGE),
	LRBK_CONFIG(OVERWRITE, GLOBAL, COMPACT),
	LRBK_CONFIG(OVERWRITE, GLOBAL, LARGE),
};

/* "discard-percpu-compact" and so on, for parameter descriptions. */
void lrbk_cfg_desc(const struct lrb_config *cfg, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s-%s-%s%s",
		 cfg->mode == LRB_MODE_DISCARD ? "discard" : "overwrite",
		 cfg->alloc == LRB_ALLOC_PER_CPU ? "percpu" : "global",
		 cfg->header == LRB_HEADER_COMPACT ? "compact" : "large",
		 cfg->wakeup == LRB_WAKEUP_BY_TIMER ? "-timer" : "");
}

/* KUNIT_ARRAY_PARAM() description of an element of lrbk_variants[]. */
void lrbk_variant_desc(const struct lrb_config *cfg, char *desc)
{
	lrbk_cfg_desc(cfg, desc);
}

/**
 * lrbk_model_new() - an empty model of the records of a test
 * @test: the test (owns the memory)
 * @max: most records it can hold
 * @skip: overwrite mode: the reader may skip records
 *
 * Return: the model; the test is aborted if memory runs out.
 */
struct lrbk_model *lrbk_model_new(struct kunit *test, unsigned int max,
				  bool skip)
{
	struct lrbk_model *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, m);
	m->e = kunit_kcalloc(test, max, sizeof(*m->e), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m->e);
	m->payload = kunit_kzalloc(test, LRBK_PAYLOAD_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m->payload);
	m->test = test;
	m->max = max;
	m->skip = skip;
	return m;
}

/* Note that a record was written (in buffer order). */
void lrbk_model_add(struct lrbk_model *m, u32 id, u32 len, u32 seq, u64 ts)
{
	KUNIT_EXPECT_LT_MSG(m->test, m->n, m->max, "model full");
	if (m->n >= m->max)
		return;
	m->e[m->n].id = id;
	m->e[m->n].len = len;
	m->e[m->n].seq = seq;
	m->e[m->n].ts = ts;
	m->n++;
}

/**
 * lrbk_write() - write a record with lrb_event_write(), note it in a model
 * @m: the model
 * @cfg: channel configuration
 * @chan: channel
 * @id: event id
 * @len: payload length
 *
 * Return: as lrb_event_write().
 */
int lrbk_write(struct lrbk_model *m, const struct lrb_config *cfg,
	       struct lrb_chan *chan, u32 id, u32 len)
{
	u32 seq = m->seq++;
	int ret;

	if (len <= LRBK_PAYLOAD_MAX)
		test_fill_payload(m->payload, id, len, seq);
	ret = lrb_event_write(cfg, chan, id, m->payload, len);
	if (ret != -EINVAL)
		m->attempts++;
	/* a longer payload is only for records the library must refuse */
	KUNIT_EXPECT_TRUE_MSG(m->test, ret || len <= LRBK_PAYLOAD_MAX,
			      "record of %u bytes written from the model's %lu-byte payload: raise LRBK_PAYLOAD_MAX",
			      len, (unsigned long)LRBK_PAYLOAD_MAX);
	if (!ret)
		lrbk_model_add(m, id, len, seq, lrbk_clock());
	else if (ret != -EINVAL)
		m->failed++;
	return ret;
}

/* As lrbk_write(), with lrb_reserve() and lrb_write() of @chunk bytes. */
int lrbk_write_chunked(struct lrbk_model *m, const struct lrb_config *cfg,
		       struct lrb_chan *chan, u32 id, u32 len, u32 chunk)
{
	u32 seq = m->seq++, off, n;
	unsigned long wrote, hl;
	struct lrb_ctx ctx;
	int ret;

	test_fill_payload(m->payload, id, len, seq);
	m->attempts++;
	ret = lrb_reserve(cfg, chan, &ctx, id, len);
	if (ret) {
		m->failed++;
		return ret;
	}
	KUNIT_EXPECT_EQ(m->test, ctx.len, len);
	KUNIT_EXPECT_EQ(m->test, ctx.id, id);
	for (off = 0; off < len; off += n) {
		n = min(len - off, chunk);
		lrb_write(&ctx, m->payload + off, n);
	}
	wrote = ctx.pos - ctx.begin;
	hl = ctx.end - ctx.begin - len;
	lrb_commit(cfg, &ctx);
	/* the cursor moved by the header and the payload, to the end */
	KUNIT_EXPECT_EQ(m->test, wrote, (unsigned long)(ctx.end - ctx.begin));
	KUNIT_EXPECT_TRUE_MSG(m->test, hl == LRB_COMPACT_HEADER_SIZE ||
			      hl == LRB_LARGE_HEADER_SIZE ||
			      hl == LRB_EXTENDED_HEADER_SIZE,
			      "record header of %lu bytes", hl);
	lrbk_model_add(m, id, len, seq, ctx.tsc);
	return 0;
}

/*
 * Reserve a record and write its payload, without committing it nor
 * noting it in the model (the caller commits or discards).
 */
int lrbk_reserve_rec(struct lrbk_model *m, const struct lrb_config *cfg,
		     struct lrb_chan *chan, struct lrb_ctx *ctx, u32 id,
		     u32 len)
{
	u32 seq = m->seq++;
	int ret;

	test_fill_payload(m->payload, id, len, seq);
	ret = lrb_reserve(cfg, chan, ctx, id, len);
	if (ret)
		return ret;
	lrb_write(ctx, m->payload, len);
	return 0;
}

void lrbk_drain_init(struct lrbk_drain *d, struct kunit *test,
		     struct lrb_chan *chan, struct lrb_buf *buf,
		     struct lrbk_model *m)
{
	memset(d, 0, sizeof(*d));
	d->test = test;
	d->chan = chan;
	d->buf = buf;
	d->model = m;
	d->data = kunit_kmalloc(test, chan->subbuf_size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, d->data);
}

static unsigned int lrbk_header_bytes(const struct lrb_config *cfg, bool ext)
{
	if (ext)
		return LRB_EXTENDED_HEADER_SIZE;
	return cfg->header == LRB_HEADER_COMPACT ? LRB_COMPACT_HEADER_SIZE :
						   LRB_LARGE_HEADER_SIZE;
}

/* The raw record header bytes say what the decoder returned. */
static void lrbk_check_raw_header(struct lrbk_drain *d, const u8 *p,
				  const struct lrb_record *rec)
{
	const struct lrb_config *cfg = d->chan->cfg;
	struct kunit *test = d->test;
	u32 w0, w1;
	u64 ts;

	memcpy(&w0, p, 4);
	if (!rec->extended) {
		if (cfg->header == LRB_HEADER_COMPACT) {
			KUNIT_EXPECT_EQ(test, w0, rec->id |
					(u32)rec->timestamp <<
					(32 - cfg->tsc_bits));
		} else {
			memcpy(&w1, p + 4, 4);
			KUNIT_EXPECT_EQ(test, w0, rec->id);
			KUNIT_EXPECT_EQ(test, w1, (u32)rec->timestamp);
		}
		return;
	}
	memcpy(&w1, p + 4, 4);
	memcpy(&ts, p + 8, 8);
	if (cfg->header == LRB_HEADER_COMPACT)
		KUNIT_EXPECT_EQ(test, w0, (1U << (32 - cfg->tsc_bits)) - 1);
	else
		KUNIT_EXPECT_EQ(test, w0, LRB_LARGE_ID_EXTENDED);
	KUNIT_EXPECT_EQ(test, w1, rec->id);
	KUNIT_EXPECT_EQ(test, ts, rec->timestamp);
}

static void lrbk_match_model(struct lrbk_drain *d,
			     const struct lrb_record *rec)
{
	struct lrbk_model *m = d->model;
	struct kunit *test = d->test;
	struct lrbk_exp *e;
	u32 seq;

	if (m->skip) {
		KUNIT_EXPECT_GE_MSG(test, rec->len, 8UL,
				    "short record in a skipping model");
		if (rec->len < 8)
			return;
		seq = test_payload_seq(rec->payload);
		while (m->next < m->n && m->e[m->next].seq != seq)
			m->next++;
	}
	KUNIT_EXPECT_LT_MSG(test, m->next, m->n,
			    "record read that the model does not expect (id %u, len %lu)",
			    rec->id, rec->len);
	if (m->next >= m->n)
		return;
	e = &m->e[m->next++];
	KUNIT_EXPECT_EQ_MSG(test, rec->id, e->id, "record %u of the model",
			    m->next - 1);
	KUNIT_EXPECT_EQ_MSG(test, rec->len, (unsigned long)e->len,
			    "record %u of the model", m->next - 1);
	KUNIT_EXPECT_EQ_MSG(test, rec->timestamp, e->ts,
			    "record %u of the model", m->next - 1);
	KUNIT_EXPECT_TRUE_MSG(test, test_check_payload(rec->payload, e->id,
						       rec->len, e->seq),
			      "payload of record %u of the model",
			      m->next - 1);
}

/**
 * lrbk_check_packet() - verify a held sub-buffer and its records
 * @d: the reader
 * @sb: the sub-buffer, from lrb_get_next_subbuf() or lrb_get_subbuf()
 *
 * Checks the packet header against the sub-buffer and the channel, that
 * the padding after the content is zero, and decodes every record:
 * raw header, alignment padding zeroed, timestamps in order and within
 * the packet, and the model's record in order.
 */
void lrbk_check_packet(struct lrbk_drain *d, const struct lrb_subbuf *sb)
{
	struct lrb_chan *chan = d->chan;
	const struct lrb_config *cfg = chan->cfg;
	struct lrb_decoder dec = {
		.header = cfg->header,
		.tsc_bits = cfg->tsc_bits,
		.payload_size = test_payload_size,
	};
	struct kunit *test = d->test;
	struct lrb_packet_header h;
	struct lrb_packet_iter it;
	struct lrb_record rec;
	unsigned long i, end, bad = 0;
	u8 *data = d->data;
	int ret;

	KUNIT_EXPECT_EQ(test, sb->packet_size,
			__lrb_packet_size(chan, sb->content_size));
	KUNIT_EXPECT_EQ(test, sb->pos & (chan->subbuf_size - 1), 0UL);
	/* sequence numbers count packets since creation, positions wrap */
	KUNIT_EXPECT_EQ(test,
			(unsigned long)(sb->seq << chan->subbuf_order) &
				__LRB_POS_MASK,
			sb->pos);
	KUNIT_EXPECT_GE(test, sb->content_size, LRB_PACKET_HEADER_SIZE);
	KUNIT_EXPECT_LE(test, sb->content_size, sb->packet_size);
	if (sb->content_size > sb->packet_size)
		return;
	memset(data, 0x5a, chan->subbuf_size);
	KUNIT_EXPECT_EQ(test, lrb_subbuf_copy(chan, sb, 0, data,
					      chan->subbuf_size), 0);
	memcpy(&h, data, sizeof(h));
	KUNIT_EXPECT_EQ(test, h.magic, LRB_PACKET_MAGIC);
	KUNIT_EXPECT_EQ(test, h.stream_id, chan->stream_id);
	KUNIT_EXPECT_EQ(test, h.header_size, 64);
	KUNIT_EXPECT_EQ(test, h.content_size, (u64)sb->content_size * 8);
	KUNIT_EXPECT_EQ(test, h.packet_size, (u64)sb->packet_size * 8);
	KUNIT_EXPECT_EQ(test, h.packet_seq_num, sb->seq);
	KUNIT_EXPECT_EQ(test, h.cpu_id, d->buf->cpu);
	KUNIT_EXPECT_LE(test, h.timestamp_begin, h.timestamp_end);
	KUNIT_EXPECT_GE(test, h.events_discarded, d->last_discarded);
	d->last_discarded = h.events_discarded;
	KUNIT_EXPECT_GE(test, sb->seq, d->next_seq);
	if (sb->seq >= d->next_seq)
		d->gaps += sb->seq - d->next_seq;
	d->next_seq = sb->seq + 1;
	d->packets++;

	/* zero padding, up to the end of the sub-buffer */
	for (i = sb->content_size; i < chan->subbuf_size; i++)
		if (data[i])
			bad++;
	KUNIT_EXPECT_EQ_MSG(test, bad, 0UL,
			    "non-zero bytes after the content of packet %llu",
			    sb->seq);

	ret = lrb_packet_open(&it, &dec, data, sb->packet_size);
	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "packet %llu: %s at %lu", sb->seq,
			    it.error ? it.error : "-", it.error_offset);
	if (ret)
		return;
	KUNIT_EXPECT_EQ(test, it.content, sb->content_size);
	while ((ret = lrb_packet_next(&it, &rec)) == 1) {
		unsigned int hl = lrbk_header_bytes(cfg, rec.extended);

		KUNIT_EXPECT_EQ(test, rec.offset & 3, 0UL);
		KUNIT_EXPECT_GE(test, rec.offset, LRB_PACKET_HEADER_SIZE);
		KUNIT_EXPECT_PTR_EQ(test, rec.payload,
				    (const u8 *)data + rec.offset + hl);
		end = rec.offset + hl + rec.len;
		KUNIT_EXPECT_LE(test, end, sb->content_size);
		KUNIT_EXPECT_GE(test, rec.timestamp, h.timestamp_begin);
		KUNIT_EXPECT_LE(test, rec.timestamp, h.timestamp_end);
		KUNIT_EXPECT_GE(test, rec.timestamp, d->last_ts);
		lrbk_check_raw_header(d, data + rec.offset, &rec);
		for (i = end; i < ALIGN(end, 4) && i < sb->content_size; i++)
			KUNIT_EXPECT_EQ_MSG(test, data[i], 0,
					    "record padding at %lu", i);
		if (rec.offset / PAGE_SIZE != (end - 1) / PAGE_SIZE)
			d->page_cross++;
		d->last_ts = rec.timestamp;
		d->records++;
		if (d->model)
			lrbk_match_model(d, &rec);
		if (d->on_record)
			d->on_record(d, sb, &rec);
	}
	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "packet %llu: %s at %lu", sb->seq,
			    it.error ? it.error : "-", it.error_offset);
	if (d->on_packet)
		d->on_packet(d, sb, data);
}

/**
 * lrbk_drain_one() - read and check the next complete sub-buffer
 * @d: the reader
 *
 * Return: 0 if one was read, or lrb_get_next_subbuf()'s error.
 */
int lrbk_drain_one(struct lrbk_drain *d)
{
	struct lrb_subbuf sb;
	int ret;

	ret = lrb_get_next_subbuf(d->buf, &sb);
	if (ret)
		return ret;
	KUNIT_EXPECT_TRUE(d->test, sb.consuming);
	lrbk_check_packet(d, &sb);
	KUNIT_EXPECT_EQ(d->test, lrb_put_subbuf(d->buf, &sb), 0);
	return 0;
}

/**
 * lrbk_drain_all() - read and check every complete sub-buffer
 * @d: the reader
 *
 * Return: the packets read.
 */
unsigned long lrbk_drain_all(struct lrbk_drain *d)
{
	unsigned long n;
	int ret = 0;

	for (n = 0; n < 1000000; n++) {
		ret = lrbk_drain_one(d);
		if (ret)
			break;
	}
	KUNIT_EXPECT_EQ(d->test, ret, -EAGAIN);
	return n;
}

KUNIT_DEFINE_ACTION_WRAPPER(lrbk_destroy_action, lrb_channel_destroy,
			    struct lrb_chan *);

/**
 * lrbk_chan_new() - create a channel destroyed when the test ends
 * @test: the test; aborted if the channel cannot be created
 * @cfg: configuration
 * @subbuf_size: bytes per sub-buffer
 * @num_subbuf: sub-buffers per buffer
 *
 * Per-CPU channels get nr_cpu_ids buffers, as the kernel requires.
 *
 * Return: the channel.
 */
struct lrb_chan *lrbk_chan_new(struct kunit *test,
			       const struct lrb_config *cfg,
			       unsigned long subbuf_size,
			       unsigned long num_subbuf)
{
	struct lrb_chan_attr attr = {
		.subbuf_size = subbuf_size,
		.num_subbuf = num_subbuf,
		.nr_cpus = nr_cpu_ids,
		.stream_id = LRBK_STREAM_ID,
	};
	struct lrb_chan *chan = NULL;

	KUNIT_ASSERT_EQ(test, lrb_channel_create(cfg, &attr, &chan), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							lrbk_destroy_action,
							chan), 0);
	return chan;
}

/* Destroy a channel of lrbk_chan_new() now. */
void lrbk_chan_destroy(struct kunit *test, struct lrb_chan *chan)
{
	kunit_release_action(test, lrbk_destroy_action, chan);
}

/**
 * lrbk_pin() - keep the calling test thread on the CPU it runs on
 *
 * Each KUnit test case runs in a kthread of its own, so the affinity
 * ends with the case.
 *
 * Return: the CPU.
 */
unsigned int lrbk_pin(void)
{
	unsigned int cpu = raw_smp_processor_id();

	set_cpus_allowed_ptr(current, cpumask_of(cpu));
	return raw_smp_processor_id();
}

/* The buffer a writer on this (pinned) thread writes. */
struct lrb_buf *lrbk_my_buf(const struct lrb_config *cfg,
			    struct lrb_chan *chan)
{
	if (cfg->alloc == LRB_ALLOC_GLOBAL)
		return lrb_channel_nth_buf(chan, 0);
	return lrb_channel_nth_buf(chan, raw_smp_processor_id());
}

/*
 * The loss counters of @buf: @full, @big and @nest records dropped for
 * those reasons, none for wrapping, no packet lost.
 */
void lrbk_check_lost(struct kunit *test, struct lrb_buf *buf,
		     unsigned long full, unsigned long big, unsigned long nest)
{
	struct lrb_buf_counters st;

	lrb_buf_stats(buf, &st);
	KUNIT_EXPECT_EQ(test, st.lost_full, full);
	KUNIT_EXPECT_EQ(test, st.lost_big, big);
	KUNIT_EXPECT_EQ(test, st.lost_nest, nest);
	KUNIT_EXPECT_EQ(test, st.lost_wrap, 0UL);
	KUNIT_EXPECT_EQ(test, st.lost_packets, 0UL);
	KUNIT_EXPECT_EQ(test, lrb_buf_lost(buf), full + big + nest);
}
