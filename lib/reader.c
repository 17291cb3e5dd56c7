// SPDX-License-Identifier: GPL-2.0
/*
 * lrb reader side: one consuming reader per buffer takes complete
 * sub-buffers, reads them and releases them.
 *
 * Discard mode reads in place: writers never enter a sub-buffer before the
 * reader has released it. Overwrite mode never makes writers wait, so the
 * reader takes ownership instead: it swaps its spare slot into the ring in
 * place of the delivered sub-buffer, with one compare-and-swap that fails
 * if a writer has started the next lap there. Writers then fill the spare
 * while the reader holds the pages it took.
 */
#include <lrb/lrb.h>
#include "backend.h"
#include "port.h"

int lrb_reader_open(struct lrb_buf *buf)
{
	if (__lrb_atomic_cmpxchg(&buf->reader_busy, 0, 1) != 0)
		return -EBUSY;
	return 0;
}
EXPORT_SYMBOL_GPL(lrb_reader_open);

static void lrb_release(struct lrb_buf *buf);

void lrb_reader_close(struct lrb_buf *buf)
{
	if (buf->holding)
		lrb_release(buf);
	/* the reader's accesses before the next reader's */
	smp_mb();
	__lrb_atomic_set(&buf->reader_busy, 0);
}
EXPORT_SYMBOL_GPL(lrb_reader_close);

static unsigned long lrb_delivered_tag(const struct lrb_chan *chan,
				       unsigned long pos)
{
	return __lrb_lap(chan, pos) << __LRB_WSB_TAG_SHIFT | __LRB_WSB_NOREF;
}

/* Is the sub-buffer at @pos complete, in the lap of @pos? */
static bool lrb_subbuf_delivered(struct lrb_buf *buf, unsigned long pos)
{
	const struct lrb_chan *chan = buf->chan;
	unsigned long idx = __lrb_subbuf_index(chan, pos);

	if (chan->cfg->mode == LRB_MODE_OVERWRITE)
		return (__lrb_atomic_read(&buf->wsb[idx]) & ~__LRB_SLOT_MASK) ==
		       lrb_delivered_tag(chan, pos);
	return __lrb_commit_done(chan,
			       __lrb_v_read(__lrb_per_cpu(chan->cfg),
					    &buf->commit[idx]),
			       __lrb_lap(chan, pos) + 1);
}

bool lrb_buf_readable(struct lrb_buf *buf)
{
	return lrb_subbuf_delivered(buf, __lrb_atomic_read(&buf->consumed));
}
EXPORT_SYMBOL_GPL(lrb_buf_readable);

unsigned long lrb_buf_complete(struct lrb_buf *buf, unsigned long max)
{
	unsigned long pos = __lrb_atomic_read(&buf->consumed);
	unsigned long n;

	for (n = 0; n < max && n < buf->chan->num_subbuf; n++) {
		if (!lrb_subbuf_delivered(buf, pos))
			break;
		pos = __lrb_pos_add(pos, buf->chan->subbuf_size);
	}
	return n;
}
EXPORT_SYMBOL_GPL(lrb_buf_complete);

/* Overwrite mode: swap the spare slot in for the sub-buffer at @pos. */
static int lrb_swap_out(struct lrb_buf *buf, unsigned long pos,
			unsigned long *slot)
{
	const struct lrb_chan *chan = buf->chan;
	unsigned long idx = __lrb_subbuf_index(chan, pos);
	unsigned long tag = lrb_delivered_tag(chan, pos);
	unsigned long w = __lrb_atomic_read(&buf->wsb[idx]);

	for (;;) {
		unsigned long old;

		if ((w & ~__LRB_SLOT_MASK) != tag)
			return -EAGAIN;
		old = __lrb_atomic_cmpxchg(&buf->wsb[idx], w, buf->spare | tag);
		if (old == w)
			break;
		w = old;
	}
	*slot = w & __LRB_SLOT_MASK;
	return 0;
}

static void lrb_fill_subbuf(struct lrb_buf *buf, struct lrb_subbuf *sb,
			    unsigned long pos, unsigned long slot,
			    bool consuming)
{
	struct lrb_packet_header *ph;

	/* the packet's bytes after the state that says it is complete */
	smp_rmb();
	sb->pos = pos;
	sb->slot = slot;
	sb->pages = __lrb_slot_pages(buf->chan, buf, slot);
	sb->consuming = consuming;
	ph = sb->pages[0];
	sb->content_size = ph->content_size / 8;
	/* the reader owns the packet now: trim the padding it reports */
	/* a client's packet_end callback may have written nonsense */
	if (sb->content_size < LRB_PACKET_HEADER_SIZE ||
	    sb->content_size > buf->chan->subbuf_size) {
		sb->content_size = buf->chan->subbuf_size;
		ph->content_size = (u64)sb->content_size * 8;
	}
	sb->packet_size = __lrb_packet_size(buf->chan, sb->content_size);
	ph->packet_size = (u64)sb->packet_size * 8;
	sb->seq = ph->packet_seq_num;
	buf->held_pos = pos;
	buf->held_slot = slot;
	buf->held_consuming = consuming;
	buf->holding = true;
}

int lrb_get_next_subbuf(struct lrb_buf *buf, struct lrb_subbuf *sb)
{
	const struct lrb_chan *chan = buf->chan;
	unsigned long c, slot;
	int ret;

	if (buf->holding)
		return -EBUSY;
	for (;;) {
		c = __lrb_atomic_read(&buf->consumed);
		if (chan->cfg->mode == LRB_MODE_DISCARD) {
			if (!lrb_subbuf_delivered(buf, c))
				return -EAGAIN;
			lrb_fill_subbuf(buf, sb, c, __lrb_subbuf_index(chan, c),
					true);
			return 0;
		}
		ret = lrb_swap_out(buf, c, &slot);
		if (ret)
			return ret;
		if (__lrb_atomic_cmpxchg(&buf->consumed, c,
					 __lrb_pos_add(c, chan->subbuf_size)) == c) {
			lrb_fill_subbuf(buf, sb, c, slot, true);
			return 0;
		}
		/* a writer pushed the reader past it: counted as lost */
		buf->spare = slot;
	}
}
EXPORT_SYMBOL_GPL(lrb_get_next_subbuf);

int lrb_get_subbuf(struct lrb_buf *buf, unsigned long pos,
		   struct lrb_subbuf *sb)
{
	const struct lrb_chan *chan = buf->chan;
	unsigned long slot, consumed, produced;
	int ret;

	if (buf->holding)
		return -EBUSY;
	if (__lrb_subbuf_offset(chan, pos) || (pos & ~__LRB_POS_MASK))
		return -EINVAL;
	lrb_positions(buf, &consumed, &produced);
	if (__lrb_pos_before(pos, consumed))
		return -ENODATA;
	/* far ahead, a position would alias a lap the ring still holds */
	if (!__lrb_pos_before(pos, produced))
		return -EAGAIN;
	if (chan->cfg->mode == LRB_MODE_DISCARD) {
		if (!lrb_subbuf_delivered(buf, pos))
			return -EAGAIN;
		slot = __lrb_subbuf_index(chan, pos);
	} else {
		ret = lrb_swap_out(buf, pos, &slot);
		if (ret)
			return ret;
	}
	lrb_fill_subbuf(buf, sb, pos, slot, false);
	return 0;
}
EXPORT_SYMBOL_GPL(lrb_get_subbuf);

static void lrb_release(struct lrb_buf *buf)
{
	const struct lrb_chan *chan = buf->chan;
	unsigned long idx, tag;

	/* done reading before writers may reuse the pages */
	smp_mb();
	buf->holding = false;
	if (chan->cfg->mode == LRB_MODE_DISCARD) {
		if (buf->held_consuming)
			__lrb_atomic_set(&buf->consumed,
					 __lrb_pos_add(buf->held_pos,
						       chan->subbuf_size));
		return;
	}
	if (!buf->held_consuming) {
		idx = __lrb_subbuf_index(chan, buf->held_pos);
		tag = lrb_delivered_tag(chan, buf->held_pos);
		/* put the pages back where they were, if still unused */
		if (__lrb_atomic_cmpxchg(&buf->wsb[idx], buf->spare | tag,
					 buf->held_slot | tag) ==
		    (buf->spare | tag))
			return;
	}
	buf->spare = buf->held_slot;
}

int lrb_put_subbuf(struct lrb_buf *buf, struct lrb_subbuf *sb)
{
	if (!buf->holding || sb->pos != buf->held_pos ||
	    sb->slot != buf->held_slot)
		return -EINVAL;
	lrb_release(buf);
	return 0;
}
EXPORT_SYMBOL_GPL(lrb_put_subbuf);

int lrb_get_subbuf_at(struct lrb_buf *buf, u64 count, struct lrb_subbuf *sb)
{
	s64 diff;
	int ret;

	if (count & (buf->chan->subbuf_size - 1))
		return -EINVAL;
	ret = lrb_get_subbuf(buf, (unsigned long)count & __LRB_POS_MASK, sb);
	if (ret)
		return ret;
	/*
	 * The position held the packet of another pass: @count is not in the
	 * ring. Counts wrap at 2^64 as the sequence number times the size does.
	 */
	diff = (s64)((sb->seq << buf->chan->subbuf_order) - count);
	if (diff) {
		lrb_release(buf);
		return diff > 0 ? -ENODATA : -EAGAIN;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(lrb_get_subbuf_at);

void *lrb_subbuf_steal_page(struct lrb_buf *buf, struct lrb_subbuf *sb,
			    unsigned long i, void *fresh)
{
	void *old;

	/* a region's pages are not the library's to give away */
	if (!buf->holding || !buf->held_consuming || buf->chan->region ||
	    sb->slot != buf->held_slot || i >= buf->chan->pages_per_subbuf)
		return NULL;
	if (fresh)
		__lrb_port_adopt_page(fresh);
	else
		fresh = __lrb_port_alloc_page(__lrb_port_cpu_node(buf->cpu));
	if (!fresh)
		return NULL;
	old = sb->pages[i];
	sb->pages[i] = fresh;
	__lrb_port_disown_page(old);
	return old;
}
EXPORT_SYMBOL_GPL(lrb_subbuf_steal_page);

void lrb_positions(struct lrb_buf *buf, unsigned long *consumed,
		   unsigned long *produced)
{
	*consumed = __lrb_atomic_read(&buf->consumed);
	/* where the next record starts: the last one may end short of it */
	*produced = __lrb_align(__lrb_write_pos(__lrb_v_read(__lrb_per_cpu(buf->chan->cfg),
							     &buf->offset))) &
		    __LRB_POS_MASK;
}
EXPORT_SYMBOL_GPL(lrb_positions);

int lrb_subbuf_copy(const struct lrb_chan *chan, const struct lrb_subbuf *sb,
		    unsigned long offset, void *dst, unsigned long len)
{
	if (offset > chan->subbuf_size || len > chan->subbuf_size - offset)
		return -EINVAL;
	lrb_pages_copy_out(sb->pages, offset, dst, len);
	return 0;
}
EXPORT_SYMBOL_GPL(lrb_subbuf_copy);

void lrb_buf_stats(struct lrb_buf *buf, struct lrb_buf_counters *stats)
{
	bool per_cpu = __lrb_per_cpu(buf->chan->cfg);
	unsigned long consumed, produced, i;

	memset(stats, 0, sizeof(*stats));
	lrb_positions(buf, &consumed, &produced);
	/* both within a buffer of the write position: their pass is known */
	stats->consumed = ((u64)__lrb_pos_pass(buf, consumed) << __LRB_POS_BITS) +
			  consumed;
	stats->produced = ((u64)__lrb_pos_pass(buf, produced) << __LRB_POS_BITS) +
			  produced;
	for (i = 0; i < 2 * buf->chan->num_subbuf; i++)
		stats->records_written += __lrb_v_read(per_cpu, &buf->records[i]);
	stats->lost_full = __lrb_v_read(per_cpu, &buf->lost_full);
	stats->lost_wrap = __lrb_v_read(per_cpu, &buf->lost_wrap);
	stats->lost_big = __lrb_v_read(per_cpu, &buf->lost_big);
	stats->lost_nest = __lrb_v_read(per_cpu, &buf->lost_nest);
	stats->lost_packets = __lrb_atomic_read(&buf->lost_packets);
	stats->lost_overwrite = __lrb_atomic_read(&buf->lost_overwrite);
}
EXPORT_SYMBOL_GPL(lrb_buf_stats);
