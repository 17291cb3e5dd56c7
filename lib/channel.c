// SPDX-License-Identifier: GPL-2.0
/*
 * lrb channels: validation of a client's configuration and geometry,
 * creation and teardown of its buffers, and the loading of a recovered
 * persistent channel's packets into them.
 */
#include <lrb/lrb.h>
#include <lrb/region.h>
#include "backend.h"
#include "port.h"

static int lrb_check_config(const struct lrb_config *cfg)
{
	if (cfg->mode != LRB_MODE_DISCARD && cfg->mode != LRB_MODE_OVERWRITE)
		return -EINVAL;
	if (cfg->alloc != LRB_ALLOC_PER_CPU && cfg->alloc != LRB_ALLOC_GLOBAL)
		return -EINVAL;
	if (cfg->wakeup != LRB_WAKEUP_BY_WRITER &&
	    cfg->wakeup != LRB_WAKEUP_BY_TIMER)
		return -EINVAL;
	if (cfg->header != LRB_HEADER_COMPACT &&
	    cfg->header != LRB_HEADER_LARGE)
		return -EINVAL;
	if (cfg->header == LRB_HEADER_COMPACT &&
	    (cfg->tsc_bits < 1 || cfg->tsc_bits > 31))
		return -EINVAL;
	if (!cfg->cb.clock_read)
		return -EINVAL;
	/* a flight recorder: see Documentation/design.rst */
	if (cfg->persistent && cfg->mode != LRB_MODE_OVERWRITE)
		return -EINVAL;
	return 0;
}

static bool lrb_is_pow2(unsigned long x)
{
	return x && !(x & (x - 1));
}

static unsigned int lrb_order(unsigned long x)
{
	unsigned int order = 0;

	while ((1UL << order) < x)
		order++;
	return order;
}

static int lrb_check_attr(const struct lrb_config *cfg,
			  const struct lrb_chan_attr *attr)
{
	if (!lrb_is_pow2(attr->subbuf_size) ||
	    attr->subbuf_size < LRB_MIN_SUBBUF_SIZE ||
	    attr->subbuf_size > LRB_MAX_SUBBUF_SIZE)
		return -EINVAL;
	/* with one sub-buffer, writers could never close the packet */
	if (!lrb_is_pow2(attr->num_subbuf) || attr->num_subbuf < 2 ||
	    attr->num_subbuf > LRB_MAX_NUM_SUBBUF)
		return -EINVAL;
	/* a lap number needs some bits of a position */
	if (lrb_order(attr->subbuf_size) + lrb_order(attr->num_subbuf) >
	    sizeof(long) * 8 - 8)
		return -EINVAL;
	/* a persistent channel lives in a region, and only such a channel */
	if (!cfg->persistent != !attr->region)
		return -EINVAL;
	if (cfg->alloc == LRB_ALLOC_GLOBAL)
		return attr->nr_cpus ? 0 : -EINVAL;
	return __lrb_port_check_nr_cpus(attr->nr_cpus);
}

static void lrb_channel_free(struct lrb_chan *chan)
{
	unsigned int i;

	if (chan->bufs) {
		for (i = 0; i < chan->nr_bufs; i++)
			if (chan->bufs[i])
				lrb_buf_free(chan->bufs[i]);
	}
	__lrb_port_free(chan->bufs);
	__lrb_port_free(chan);
}

int lrb_channel_create(const struct lrb_config *cfg,
		       const struct lrb_chan_attr *attr, struct lrb_chan **chanp)
{
	struct lrb_chan *chan;
	unsigned int i;
	int ret;

	ret = lrb_check_config(cfg);
	if (!ret)
		ret = lrb_check_attr(cfg, attr);
	if (ret)
		return ret;

	chan = __lrb_port_zalloc(sizeof(*chan), -1);
	if (!chan)
		return -ENOMEM;
	chan->cfg = cfg;
	chan->nr_bufs = cfg->alloc == LRB_ALLOC_GLOBAL ? 1 : attr->nr_cpus;
	chan->subbuf_size = attr->subbuf_size;
	chan->subbuf_order = lrb_order(attr->subbuf_size);
	chan->num_subbuf = attr->num_subbuf;
	chan->num_subbuf_order = lrb_order(attr->num_subbuf);
	chan->pages_per_subbuf = attr->subbuf_size >> LRB_PAGE_SHIFT;
	chan->base_mask = ~(attr->subbuf_size - 1);
	chan->idx_mask = attr->num_subbuf - 1;
	chan->records_mask = 2 * attr->num_subbuf - 1;
	chan->page_mask = chan->pages_per_subbuf - 1;
	chan->end_mask = attr->subbuf_size - 4;
	chan->stream_id = attr->stream_id;
	chan->priv = attr->priv;

	if (attr->region) {
		ret = lrb_region_format(chan, attr);
		if (ret) {
			__lrb_port_free(chan);
			return ret;
		}
	}
	chan->bufs = __lrb_port_zalloc(chan->nr_bufs * sizeof(*chan->bufs), -1);
	if (!chan->bufs)
		goto nomem;
	for (i = 0; i < chan->nr_bufs; i++) {
		chan->bufs[i] = lrb_buf_alloc(chan, i);
		if (!chan->bufs[i])
			goto nomem;
	}
	if (attr->switch_timer_us) {
		ret = __lrb_port_timer_start(chan, attr->switch_timer_us);
		if (ret) {
			lrb_channel_free(chan);
			return ret;
		}
	}
	*chanp = chan;
	return 0;

nomem:
	lrb_channel_free(chan);
	return -ENOMEM;
}
EXPORT_SYMBOL_GPL(lrb_channel_create);

void lrb_channel_destroy(struct lrb_chan *chan)
{
	might_sleep();
	__lrb_port_timer_stop(chan);
	__lrb_port_synchronize();
	lrb_channel_free(chan);
}
EXPORT_SYMBOL_GPL(lrb_channel_destroy);

struct lrb_buf *lrb_channel_nth_buf(struct lrb_chan *chan, unsigned int i)
{
	return i < chan->nr_bufs ? chan->bufs[i] : NULL;
}
EXPORT_SYMBOL_GPL(lrb_channel_nth_buf);

#if __LRB_PORT_TEST_HOOKS
/*
 * Put @buf in the state it would have after writers reached position @pos
 * (on pass @pass: positions wrapped @pass times) and a reader consumed
 * everything before it: the next packet opens at @pos, and every earlier
 * lap of every sub-buffer is complete.
 */
static void lrb_buf_start_at(struct lrb_buf *buf, unsigned long pos,
			     unsigned long pass)
{
	const struct lrb_chan *chan = buf->chan;
	bool per_cpu = __lrb_per_cpu(chan->cfg);
	unsigned long first = __lrb_subbuf_index(chan, pos);
	unsigned long ring = pos & ~(__lrb_buf_size(chan) - 1);
	unsigned long i, next, lap;

	__lrb_v_set(per_cpu, &buf->offset, pos);
	__lrb_atomic_set(&buf->consumed, pos);
	for (i = 0; i < chan->num_subbuf; i++) {
		/* where, and so in which lap, writers write sub-buffer i next */
		next = __lrb_pos_add(ring, i << chan->subbuf_order);
		if (i < first)
			next = __lrb_pos_add(next, __lrb_buf_size(chan));
		lap = __lrb_lap(chan, next);
		__lrb_v_set(per_cpu, &buf->commit[i], lap << chan->subbuf_order);
		/* as lrb_buf_alloc() leaves lap 0: claimed, not delivered */
		if (chan->cfg->mode == LRB_MODE_OVERWRITE)
			__lrb_atomic_set(&buf->wsb[i],
					 (__lrb_atomic_read(&buf->wsb[i]) &
					  __LRB_SLOT_MASK) |
					 lap << __LRB_WSB_TAG_SHIFT);
	}
	/* what the openers at the quarters would have recorded */
	buf->pass_hi = pass;
	buf->pass_lo = pos > 3 * BIT(__LRB_POS_BITS - 2) ? pass + 1 : pass;
}

/**
 * __lrb_channel_start_at() - test hook: start a new channel at a position
 * @chan: a channel just created: nothing written, no reader
 * @pos: position, counted from creation without wrapping (so up to 2^64
 *	on 64-bit machines and 2^62 on 32-bit ones), of a sub-buffer start
 *
 * Lets a test write and read across the wrap of positions, and of packet
 * sequence numbers, without writing 2^62 bytes first: the first packet of
 * every buffer opens at @pos (wrapped), its packet_seq_num is
 * @pos >> subbuf_order, and everything before it reads as consumed.
 *
 * Return: 0, -EINVAL if @pos is not a sub-buffer start, -EBUSY if a
 * buffer was already written.
 */
int __lrb_channel_start_at(struct lrb_chan *chan, u64 pos)
{
	unsigned long wrapped = (unsigned long)pos & __LRB_POS_MASK;
	unsigned int i;

	if (__lrb_subbuf_offset(chan, wrapped))
		return -EINVAL;
	for (i = 0; i < chan->nr_bufs; i++)
		if (__lrb_v_read(__lrb_per_cpu(chan->cfg), &chan->bufs[i]->offset) ||
		    __lrb_atomic_read(&chan->bufs[i]->reader_busy))
			return -EBUSY;
	for (i = 0; i < chan->nr_bufs; i++)
		lrb_buf_start_at(chan->bufs[i], wrapped, pos >> __LRB_POS_BITS);
	return 0;
}
EXPORT_SYMBOL_GPL(__lrb_channel_start_at);
#endif

void lrb_channel_flush(struct lrb_chan *chan)
{
	unsigned int i;

	for (i = 0; i < chan->nr_bufs; i++)
		lrb_buf_flush(chan->bufs[i]);
}
EXPORT_SYMBOL_GPL(lrb_channel_flush);

/**
 * lrb_recovery_load() - put the recovered packets in a channel's buffers
 * @rec: the recovery
 * @chan: a discard channel with the recovered geometry (sub-buffer size
 *	and count), nothing written to it, and no writer ever
 *
 * Buffer b of @chan receives the packets of buffer b of @rec, as
 * lrb_recovery_copy() hands them out, complete and delivered as if its
 * writers had written them: readers take them as any other packets, with
 * every reader interface. Buffers of @rec beyond @chan->nr_bufs are left
 * out (the caller says so). Readers must not be attached yet.
 *
 * Return: 0, or -EINVAL if @chan does not have the recovered geometry.
 */
int lrb_recovery_load(const struct lrb_recovery *rec, struct lrb_chan *chan)
{
	bool per_cpu = __lrb_per_cpu(chan->cfg);
	const struct lrb_rec_packet *pk;
	const struct lrb_rec_buf *rb;
	unsigned long hs = sizeof(pk->header), pos;
	struct lrb_buf *buf;
	unsigned int b, i;

	if (chan->cfg->mode != LRB_MODE_DISCARD ||
	    chan->subbuf_size != rec->header.subbuf_size ||
	    chan->num_subbuf != rec->header.num_subbuf)
		return -EINVAL;
	for (b = 0; b < rec->nr_bufs && b < chan->nr_bufs; b++) {
		rb = &rec->bufs[b];
		buf = chan->bufs[b];
		/* recovery keeps at most a ring of packets, oldest first */
		for (i = 0; i < rb->nr_packets && i < chan->num_subbuf; i++) {
			void **pages = __lrb_slot_pages(chan, buf, i);

			pk = &rb->packets[i];
			pos = (unsigned long)i << chan->subbuf_order;
			lrb_pages_fill(pages, 0, &pk->header, hs);
			lrb_pages_fill(pages, hs,
				       (const char *)rec->base + pk->offset + hs,
				       pk->content - hs);
			lrb_pages_fill(pages, pk->content, NULL,
				       chan->subbuf_size - pk->content);
			__lrb_v_set(per_cpu,
				    &buf->records[__lrb_records_index(chan, pos)],
				    pk->records);
			__lrb_v_set(per_cpu, &buf->commit[i], chan->subbuf_size);
		}
		__lrb_v_set(per_cpu, &buf->offset,
			    (unsigned long)i << chan->subbuf_order);
	}
	/* the packets before the state that says they are complete */
	smp_wmb();
	return 0;
}
EXPORT_SYMBOL_GPL(lrb_recovery_load);
