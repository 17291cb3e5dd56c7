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

/**
 * lrb_reader_open() - become the consuming reader of a buffer
 * @buf: the buffer
 *
 * Return: 0, or -EBUSY if another reader holds it.
 */
int lrb_reader_open(struct lrb_buf *buf)
{
	if (__lrb_atomic_cmpxchg(&buf->reader_busy, 0, 1) != 0)
		return -EBUSY;
	return 0;
}
EXPORT_SYMBOL_GPL(lrb_reader_open);

static void lrb_release(struct lrb_buf *buf);

/**
 * lrb_reader_close() - stop being the reader of a buffer
 * @buf: the buffer
 *
 * A sub-buffer still held is released first.
 */
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

/**
 * lrb_buf_readable() - is a sub-buffer ready at the read position?
 * @buf: the buffer
 *
 * Return: true if lrb_get_next_subbuf() would likely succeed.
 */
bool lrb_buf_readable(struct lrb_buf *buf)
{
	return lrb_subbuf_delivered(buf, __lrb_atomic_read(&buf->consumed));
}
EXPORT_SYMBOL_GPL(lrb_buf_readable);

/**
 * lrb_buf_complete() - count complete sub-buffers waiting for the reader
 * @buf: the buffer
 * @max: stop counting there
 *
 * For watermarks: how full the buffer is, in sub-buffers a reader could
 * take one after the other from the read position.
 *
 * Return: the count, at most @max.
 */
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

/**
 * lrb_get_next_subbuf() - take the oldest complete sub-buffer
 * @buf: the buffer, opened with lrb_reader_open()
 * @sb: receives the sub-buffer
 *
 * The sub-buffer stays the reader's until lrb_put_subbuf(), which
 * consumes it. In overwrite mode, a sub-buffer overwritten while being
 * taken is skipped: it shows as a gap in packet sequence numbers.
 *
 * Return: 0, -EAGAIN if no complete sub-buffer is waiting, -EBUSY if the
 * reader already holds one.
 */
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

/**
 * lrb_get_subbuf() - take the complete sub-buffer at @pos, not consuming
 * @buf: the buffer, opened with lrb_reader_open()
 * @pos: position of a sub-buffer, between the consumed and produced
 *	positions (see lrb_positions())
 * @sb: receives the sub-buffer
 *
 * For snapshots of a flight recorder: writers keep going, and the
 * sub-buffer returns to the ring on release unless writers reused its
 * place meanwhile.
 *
 * Return: 0, -EINVAL if @pos is not a sub-buffer start (or not a position:
 * it has more than %__LRB_POS_BITS bits), -ENODATA if it is
 * behind the read position, -EAGAIN if it is not complete (or was just
 * overwritten), -EBUSY if the reader already holds one.
 */
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

/**
 * lrb_put_subbuf() - release a sub-buffer taken by the reader
 * @buf: the buffer
 * @sb: the sub-buffer from lrb_get_next_subbuf() or lrb_get_subbuf()
 *
 * Return: 0, or -EINVAL if @sb is not the sub-buffer the reader holds
 * (released twice, or never taken): then nothing changes.
 */
int lrb_put_subbuf(struct lrb_buf *buf, struct lrb_subbuf *sb)
{
	if (!buf->holding || sb->pos != buf->held_pos ||
	    sb->slot != buf->held_slot)
		return -EINVAL;
	lrb_release(buf);
	return 0;
}
EXPORT_SYMBOL_GPL(lrb_put_subbuf);

/**
 * lrb_subbuf_steal_page() - take a page of a held sub-buffer for good
 * @buf: the buffer
 * @sb: the sub-buffer the reader holds, taken by lrb_get_next_subbuf()
 * @i: page index within the sub-buffer
 *
 * A zeroed page replaces it in the buffer, so the caller may hand the page
 * on (to a pipe, by splice) without copying it: writers never touch it
 * again. Only a consumed sub-buffer may be robbed; one taken for a snapshot
 * goes back to the ring.
 *
 * Return: the page, now the caller's to free, or NULL if @sb is not held
 * for consumption, @i is out of range, or no page could be allocated;
 * nothing changes then.
 */
void *lrb_subbuf_steal_page(struct lrb_buf *buf, struct lrb_subbuf *sb,
			    unsigned long i)
{
	void *fresh, *old;

	if (!buf->holding || !buf->held_consuming ||
	    sb->slot != buf->held_slot || i >= buf->chan->pages_per_subbuf)
		return NULL;
	fresh = __lrb_port_alloc_page(__lrb_port_cpu_node(buf->cpu));
	if (!fresh)
		return NULL;
	old = sb->pages[i];
	sb->pages[i] = fresh;
	__lrb_port_disown_page(old);
	return old;
}
EXPORT_SYMBOL_GPL(lrb_subbuf_steal_page);

/**
 * lrb_positions() - sample the read and write positions
 * @buf: the buffer
 * @consumed: receives the read position
 * @produced: receives the write position: where the next record starts
 *
 * Both are positions: they wrap at 2^%__LRB_POS_BITS (see __lrb_pos_dist()).
 */
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

/**
 * lrb_subbuf_copy() - copy bytes out of a held sub-buffer
 * @chan: the channel
 * @sb: the held sub-buffer
 * @offset: first byte, from the start of the packet
 * @dst: destination
 * @len: bytes
 *
 * Return: 0, or -EINVAL if the range is not inside the packet.
 */
int lrb_subbuf_copy(const struct lrb_chan *chan, const struct lrb_subbuf *sb,
		    unsigned long offset, void *dst, unsigned long len)
{
	if (offset > chan->subbuf_size || len > chan->subbuf_size - offset)
		return -EINVAL;
	lrb_pages_copy_out(sb->pages, offset, dst, len);
	return 0;
}
EXPORT_SYMBOL_GPL(lrb_subbuf_copy);

/**
 * lrb_buf_stats() - sample a buffer's counters
 * @buf: the buffer
 * @stats: receives them
 */
void lrb_buf_stats(struct lrb_buf *buf, struct lrb_stats *stats)
{
	bool per_cpu = __lrb_per_cpu(buf->chan->cfg);
	unsigned long consumed, produced;

	lrb_positions(buf, &consumed, &produced);
	/* both within a buffer of the write position: their pass is known */
	stats->consumed = ((u64)__lrb_pos_pass(buf, consumed) << __LRB_POS_BITS) +
			  consumed;
	stats->produced = ((u64)__lrb_pos_pass(buf, produced) << __LRB_POS_BITS) +
			  produced;
	stats->records = __lrb_v_read(per_cpu, &buf->records);
	stats->lost_full = __lrb_v_read(per_cpu, &buf->lost_full);
	stats->lost_wrap = __lrb_v_read(per_cpu, &buf->lost_wrap);
	stats->lost_big = __lrb_v_read(per_cpu, &buf->lost_big);
	stats->lost_nest = __lrb_v_read(per_cpu, &buf->lost_nest);
	stats->lost_packets = __lrb_atomic_read(&buf->lost_packets);
}
EXPORT_SYMBOL_GPL(lrb_buf_stats);
