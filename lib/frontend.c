// SPDX-License-Identifier: GPL-2.0
/*
 * lrb frontend slow paths: the reservation that crosses a sub-buffer
 * boundary (closing one packet and opening the next), delivery of complete
 * sub-buffers, flush, and the accounting of lost records.
 *
 * These run with the client's configuration read at run time; only the
 * inline fast paths in lrb/frontend.h are specialised per client.
 */
#include <lrb/lrb.h>
#include "backend.h"
#include "port.h"

static bool lrb_chan_per_cpu(const struct lrb_chan *chan)
{
	return __lrb_per_cpu(chan->cfg);
}

/*
 * The loss count a closing packet carries: @all as lrb_buf_lost(), the
 * part of it counting records of overwritten packets, and the sub-buffer
 * of the packet (for the closing count of a persistent channel).
 */
struct lrb_lost {
	unsigned long all;
	unsigned long overwritten;
	unsigned long idx;
};

/* @lost's two counts, from the same reads. */
static void lrb_lost_sample(struct lrb_buf *buf, struct lrb_lost *lost)
{
	bool per_cpu = lrb_chan_per_cpu(buf->chan);

	lost->overwritten = __lrb_atomic_read(&buf->lost_overwrite);
	lost->all = __lrb_v_read(per_cpu, &buf->lost_full) +
		    __lrb_v_read(per_cpu, &buf->lost_wrap) +
		    __lrb_v_read(per_cpu, &buf->lost_big) +
		    __lrb_v_read(per_cpu, &buf->lost_nest) + lost->overwritten;
}

unsigned long lrb_buf_lost(struct lrb_buf *buf)
{
	struct lrb_lost lost;

	lrb_lost_sample(buf, &lost);
	return lost.all;
}
EXPORT_SYMBOL_GPL(lrb_buf_lost);

/**
 * __lrb_bad_cfg() - report a fast path called with another configuration
 * @chan: the channel written
 * @caller: the fast path
 *
 * Debug builds only (__LRB_DEBUG): the struct lrb_config passed to @caller
 * is not the one @chan was created with, so every test of it folded into
 * the fast path may be wrong for @chan's buffers.
 *
 * Return: -EINVAL, for the fast path to return.
 */
int __lrb_bad_cfg(const struct lrb_chan *chan, const char *caller)
{
	pr_err_ratelimited("lrb: %s() called with a struct lrb_config other than the one its channel (stream %u) was created with: pass the channel's own configuration\n",
			   caller, chan->stream_id);
	return -EINVAL;
}
EXPORT_SYMBOL_GPL(__lrb_bad_cfg);

/**
 * __lrb_nesting_exceeded() - count a record refused for nesting too deep
 * @buf: buffer of the CPU (or the global buffer)
 *
 * Return: -EBUSY, for lrb_reserve() to return.
 */
int __lrb_nesting_exceeded(struct lrb_buf *buf)
{
	lrb_region_count_lost(buf, LRB_REGION_LOST_NEST);
	__lrb_v_inc(lrb_chan_per_cpu(buf->chan), &buf->lost_nest);
	return -EBUSY;
}
EXPORT_SYMBOL_GPL(__lrb_nesting_exceeded);

/**
 * __lrb_write_slow() - lrb_write() for a copy that crosses pages
 * @chan: the reservation's channel
 * @pages: the pages of its sub-buffer
 * @pos: where the copy starts
 * @src: bytes to copy
 * @len: how many
 */
void __lrb_write_slow(const struct lrb_chan *chan, void **pages,
		      unsigned long pos, const void *src, size_t len)
{
	lrb_pages_fill(pages, __lrb_subbuf_offset(chan, pos), src, len);
}
EXPORT_SYMBOL_GPL(__lrb_write_slow);

/**
 * __lrb_claim_slow() - mark a sub-buffer as being written in a new lap
 * @buf: the buffer (overwrite mode)
 * @idx: sub-buffer index
 * @lap: lap the caller writes in
 *
 * A reader swaps only entries marked delivered in the lap it expects, so
 * once this succeeds the slot cannot be taken from under the writers.
 *
 * Return: the slot whose pages the writer must use.
 */
unsigned long __lrb_claim_slow(struct lrb_buf *buf, unsigned long idx,
			       unsigned long lap)
{
	unsigned long tag = lap << __LRB_WSB_TAG_SHIFT;
	unsigned long w = __lrb_atomic_read(&buf->wsb[idx]);

	for (;;) {
		unsigned long new = (w & __LRB_SLOT_MASK) | tag;
		unsigned long old;

		if ((w & ~__LRB_SLOT_MASK) == tag)
			return w & __LRB_SLOT_MASK;
		old = __lrb_atomic_cmpxchg(&buf->wsb[idx], w, new);
		if (old == w)
			return new & __LRB_SLOT_MASK;
		w = old;
	}
}
EXPORT_SYMBOL_GPL(__lrb_claim_slow);

static void lrb_commit_bytes(struct lrb_buf *buf, unsigned long pos,
			     unsigned long len);
static void **lrb_writer_pages(struct lrb_buf *buf, unsigned long pos);

/*
 * Skipped records. Until its packet is complete, a skipped record holds
 * the list link (the offset of the skipped record pushed before it, 0 for
 * none) in its first word and its length in bytes in its second; the
 * packet header at offset 0 is never a record. Every access is to one
 * aligned 32-bit word, which never crosses a page.
 */
static u32 *lrb_skip_word(void **pages, unsigned long off)
{
	return (u32 *)((char *)pages[off >> LRB_PAGE_SHIFT] +
		       (off & (LRB_PAGE_SIZE - 1)));
}

static unsigned long lrb_skip_next(void **pages, unsigned long off)
{
	return *lrb_skip_word(pages, off);
}

static void lrb_skip_link(void **pages, unsigned long off, unsigned long next)
{
	*lrb_skip_word(pages, off) = next;
}

/*
 * Sort the list of skipped records at @list by offset, relinking them in
 * place: a merge sort of the list by runs doubling in length, which needs
 * no memory and no recursion (the deliverer may be in NMI).
 */
static unsigned long lrb_skips_sort(void **pages, unsigned long list)
{
	unsigned long run = 1, p, q, e, tail, merges, psize, qsize;

	if (!list)
		return 0;
	for (;;) {
		p = list;
		list = 0;
		tail = 0;
		merges = 0;
		while (p) {
			merges++;
			q = p;
			for (psize = 0; psize < run && q; psize++)
				q = lrb_skip_next(pages, q);
			qsize = run;
			while (psize || (qsize && q)) {
				if (psize && (!qsize || !q || p < q)) {
					e = p;
					p = lrb_skip_next(pages, p);
					psize--;
				} else {
					e = q;
					q = lrb_skip_next(pages, q);
					qsize--;
				}
				if (tail)
					lrb_skip_link(pages, tail, e);
				else
					list = e;
				tail = e;
			}
			p = q;
		}
		lrb_skip_link(pages, tail, 0);
		if (merges <= 1)
			return list;
		run *= 2;
	}
}

/*
 * Turn the skipped records of the complete packet @pages into skip records:
 * adjacent ones merge into one, whose header takes the timestamp bits of
 * the record after it (which the CTF description nests in the skip), and
 * a run that ends the content is cut from it. The deliverer owns the
 * packet: every writer of its lap is done, and no reader or writer of the
 * next lap may touch it before the deliverer adds the last byte.
 */
static void lrb_merge_skips(const struct lrb_chan *chan, void **pages,
			    unsigned long list)
{
	const struct lrb_config *cfg = chan->cfg;
	struct lrb_packet_header *ph = pages[0];
	unsigned long content = ph->content_size / 8;
	unsigned long start, end, next;
	u32 w, id_mask = __lrb_compact_id_extended(cfg);

	for (start = lrb_skips_sort(pages, list); start; start = next) {
		end = start;
		next = start;
		do {
			end += *lrb_skip_word(pages, next + 4);
			next = lrb_skip_next(pages, next);
		} while (next == end);
		if (end >= content) {
			/*
			 * Only the last run: the content then ends before it,
			 * and what follows the content is zeroes, as padding.
			 */
			ph->content_size = (u64)start * 8;
			lrb_pages_fill(pages, start, NULL, end - start);
			return;
		}
		if (cfg->header == LRB_HEADER_COMPACT)
			w = (*lrb_skip_word(pages, end) & ~id_mask) |
			    __lrb_compact_id_skip(cfg);
		else
			w = LRB_LARGE_ID_SKIP;
		*lrb_skip_word(pages, start) = w;
		*lrb_skip_word(pages, start + 4) =
			(end - start - LRB_SKIP_HEADER_SIZE) / 4;
	}
}

/**
 * __lrb_skip() - turn a reservation that is not the last into a skip
 * @ctx: the reservation
 *
 * The record goes onto its sub-buffer's list of skipped records and its
 * bytes into the commit count, as a commit's do; the writer that completes
 * the packet merges the list (__lrb_deliver()). No record is counted, and
 * the record's timestamp never becomes the reference of compact headers.
 *
 * Return: 0, for lrb_discard() to return.
 */
int __lrb_skip(struct lrb_ctx *ctx)
{
	struct lrb_chan *chan = ctx->chan;
	struct lrb_buf *buf = ctx->buf;
	bool per_cpu = lrb_chan_per_cpu(chan);
	union __lrb_v *head = &buf->skips[__lrb_subbuf_index(chan, ctx->begin)];
	unsigned long off = __lrb_subbuf_offset(chan, ctx->begin);
	unsigned long len = __lrb_align(ctx->end) - ctx->begin;
	unsigned long old, next = __lrb_v_read(per_cpu, head);

	*lrb_skip_word(ctx->pages, off + 4) = len;
	do {
		old = next;
		lrb_skip_link(ctx->pages, off, old);
		/* the link before the head that publishes it */
		smp_wmb();
		next = __lrb_v_cmpxchg(per_cpu, head, old, off);
	} while (next != old);
	/* the first skip of the lap holds a byte back (__lrb_commit_ends()) */
	lrb_commit_bytes(buf, ctx->begin, len - !old);
	__lrb_port_nesting_dec();
	__lrb_port_writer_end();
	return 0;
}
EXPORT_SYMBOL_GPL(__lrb_skip);

/**
 * __lrb_deliver() - hand a fully committed sub-buffer to readers
 * @buf: the buffer
 * @begin: any position inside the sub-buffer, in the lap completed
 *
 * Called by the one commit whose count completed the sub-buffer, or
 * brought it one byte short of complete: then the packet has skipped
 * records, which are merged before the last byte completes it.
 */
void __lrb_deliver(struct lrb_buf *buf, unsigned long begin)
{
	const struct lrb_chan *chan = buf->chan;
	bool per_cpu = lrb_chan_per_cpu(chan);
	unsigned long idx = __lrb_subbuf_index(chan, begin);
	unsigned long cc;

	if (__lrb_v_read(per_cpu, &buf->commit[idx]) & 3) {
		/* the list, the records and the packet header, of every writer */
		smp_rmb();
		lrb_merge_skips(chan, lrb_writer_pages(buf, begin),
				__lrb_v_read(per_cpu, &buf->skips[idx]));
		__lrb_v_set(per_cpu, &buf->skips[idx], 0);
		/* the merged packet before the count that completes it */
		smp_wmb();
		cc = __lrb_v_add_return(per_cpu, 1, &buf->commit[idx]);
		if (chan->cfg->persistent)
			__lrb_commit_mark(per_cpu, buf, begin, cc);
	}
	if (chan->cfg->mode == LRB_MODE_OVERWRITE) {
		unsigned long tag = __lrb_lap(chan, begin) << __LRB_WSB_TAG_SHIFT;
		unsigned long w = __lrb_atomic_read(&buf->wsb[idx]);

		/* a writer of the next lap may already own it: then skip */
		if ((w & ~__LRB_SLOT_MASK) == tag)
			__lrb_atomic_cmpxchg(&buf->wsb[idx], w, w | __LRB_WSB_NOREF);
	}
	if (chan->cfg->wakeup == LRB_WAKEUP_BY_WRITER)
		__lrb_port_wake(buf);
}
EXPORT_SYMBOL_GPL(__lrb_deliver);

static void lrb_commit_bytes(struct lrb_buf *buf, unsigned long pos,
			     unsigned long len)
{
	const struct lrb_chan *chan = buf->chan;
	unsigned long cc;

	/*
	 * The bytes before the count that publishes them; pairs with the
	 * reader's smp_rmb() in lrb_fill_subbuf().
	 */
	smp_wmb();
	cc = __lrb_v_add_return(lrb_chan_per_cpu(chan), len,
				&buf->commit[__lrb_subbuf_index(chan, pos)]);
	if (chan->cfg->persistent)
		__lrb_commit_mark(lrb_chan_per_cpu(chan), buf, pos, cc);
	if (__lrb_commit_ends(chan, cc))
		__lrb_deliver(buf, pos);
}

/* Pages of the packet at @pos, which a writer of its lap may touch. */
static void **lrb_writer_pages(struct lrb_buf *buf, unsigned long pos)
{
	const struct lrb_chan *chan = buf->chan;
	unsigned long slot;

	if (chan->cfg->mode == LRB_MODE_OVERWRITE)
		slot = __lrb_claim(buf, __lrb_subbuf_index(chan, pos),
				   __lrb_lap(chan, pos));
	else
		slot = __lrb_subbuf_index(chan, pos);
	return __lrb_slot_pages(chan, buf, slot);
}

/*
 * Fill the closing fields of the header of a packet of @content bytes. The
 * closer owns them, the opener owns the others: a nested writer may close
 * a packet before the writer that opened it has written its header.
 */
static void lrb_end_packet(struct lrb_buf *buf, void **pages,
			   unsigned long content, u64 tsc,
			   const struct lrb_lost *lost)
{
	const struct lrb_chan *chan = buf->chan;
	struct lrb_packet_header *ph = pages[0];

	ph->timestamp_end = tsc;
	ph->content_size = (u64)content * 8;
	ph->events_discarded = lost->all;
	/* recovery tells the overwritten records from the others with it */
	if (buf->region_closing)
		WRITE_ONCE(buf->region_closing[lost->idx], lost->overwritten);
	if (chan->cfg->cb.packet_end)
		chan->cfg->cb.packet_end(buf, ph);
}

/*
 * Close the packet whose content ends at @old: pad it and commit the pad.
 * The last record zeroes and commits its own alignment bytes.
 */
static void lrb_close_packet(struct lrb_buf *buf, unsigned long old, u64 tsc,
			     struct lrb_lost *lost)
{
	const struct lrb_chan *chan = buf->chan;
	unsigned long content = __lrb_subbuf_offset(chan, old);
	unsigned long pad = chan->subbuf_size - __lrb_align(content);
	void **pages = lrb_writer_pages(buf, old);

	lost->idx = __lrb_subbuf_index(chan, old);
	lrb_end_packet(buf, pages, content, tsc, lost);
	lrb_pages_fill(pages, __lrb_align(content), NULL, pad);
	lrb_commit_bytes(buf, old, pad);
}

/*
 * Overwrite mode: records of the last lap's packet at @pos. Exact from the
 * time the writer that opens the next lap there has checked the last lap
 * committed (lrb_check_space()) until that writer commits its packet
 * header, without which no later lap can begin there.
 */
static unsigned long lrb_packet_records(struct lrb_buf *buf, unsigned long pos)
{
	unsigned long k = __lrb_records_index(buf->chan, pos);

	return __lrb_v_read(lrb_chan_per_cpu(buf->chan), &buf->records[k]) -
	       READ_ONCE(buf->records_base[k]);
}

/*
 * Overwrite mode: move the reader past the sub-buffer about to be reused,
 * counting the packets it skips and their records. The records are read
 * before the compare-and-swap: while the read position is still before a
 * packet, the writer opening the next lap there has not committed its
 * header (see lrb_open_packet()), so the counts are exact.
 */
static void lrb_push_reader(struct lrb_buf *buf, unsigned long start)
{
	const struct lrb_chan *chan = buf->chan;
	unsigned long want = start + chan->subbuf_size - __lrb_buf_size(chan);
	unsigned long c = __lrb_atomic_read(&buf->consumed);

	want &= __LRB_POS_MASK;
	while (__lrb_pos_before(c, want)) {
		unsigned long old, pos, records = 0;

		for (pos = c; pos != want;
		     pos = __lrb_pos_add(pos, chan->subbuf_size))
			records += lrb_packet_records(buf, pos);
		old = __lrb_atomic_cmpxchg(&buf->consumed, c, want);
		if (old == c) {
			__lrb_atomic_add(__lrb_pos_dist(c, want) >> chan->subbuf_order,
					 &buf->lost_packets);
			if (buf->region_lost)
				__lrb_v_add_return(lrb_chan_per_cpu(chan), records,
						   &buf->region_lost[LRB_REGION_LOST_OVERWRITE]);
			__lrb_atomic_add(records, &buf->lost_overwrite);
			/* the new read position may hold a delivered packet */
			if (chan->cfg->wakeup == LRB_WAKEUP_BY_WRITER)
				__lrb_port_wake(buf);
			return;
		}
		c = old;
	}
}

/*
 * Overwrite mode: a new lap begins at @start. Move the reader past the
 * last lap's packet there, then start counting the records of the lap
 * after this one from where that packet's count ends. Only after the
 * push: a writer that skips the packet concurrently must read the base
 * from before it.
 */
static void lrb_overwrite_lap(struct lrb_buf *buf, unsigned long start)
{
	unsigned long last = __lrb_pos_add(start, -__lrb_buf_size(buf->chan));
	unsigned long k = __lrb_records_index(buf->chan, last);

	lrb_push_reader(buf, start);
	/* the read position seen past @last before the base moves */
	smp_mb();
	WRITE_ONCE(buf->records_base[k],
		   __lrb_v_read(lrb_chan_per_cpu(buf->chan), &buf->records[k]));
}

/*
 * The packet_seq_num of the packet at @start: its number since the buffer
 * was created, which unlike positions does not wrap before 2^64 bytes
 * (2^62 on 32-bit machines, where the pass has 32 bits), so that
 * readers see no gap and no step back where positions wrap.
 *
 * The high part is the pass: how many times positions wrapped before
 * @start. The opener of the packet a quarter into the position space
 * records the pass for the upper half, the one three quarters in the pass
 * after it for the lower half; openers of the other half read it. A quarter
 * of the position space (2^28 bytes or more) is at least 16 buffers, and
 * no writer gets a buffer ahead of an opener that has not committed its
 * packet header (lrb_check_space()), so the opener that records a pass
 * always runs before, and never concurrently with, the openers that read
 * it, whatever the nesting or the concurrency of writers.
 */
static u64 lrb_packet_seq(struct lrb_buf *buf, unsigned long start)
{
	const unsigned long quarter = BIT(__LRB_POS_BITS - 2);
	unsigned int order = buf->chan->subbuf_order;
	unsigned long pass = __lrb_pos_pass(buf, start);

	if (start == quarter)
		WRITE_ONCE(buf->pass_hi, pass);
	else if (start == 3 * quarter)
		WRITE_ONCE(buf->pass_lo, pass + 1);
	return ((u64)pass << (__LRB_POS_BITS - order)) + (start >> order);
}

static void lrb_open_packet(struct lrb_buf *buf, unsigned long start, u64 tsc)
{
	const struct lrb_chan *chan = buf->chan;
	struct lrb_packet_header *ph;

	if (chan->cfg->mode == LRB_MODE_OVERWRITE)
		lrb_overwrite_lap(buf, start);
	ph = lrb_writer_pages(buf, start)[0];
	ph->magic = LRB_PACKET_MAGIC;
	ph->stream_id = chan->stream_id;
	ph->timestamp_begin = tsc;
	ph->packet_size = (u64)chan->subbuf_size * 8;
	ph->packet_seq_num = lrb_packet_seq(buf, start);
	ph->cpu_id = buf->cpu;
	ph->header_size = LRB_PACKET_HEADER_SIZE;
	if (chan->cfg->cb.packet_begin)
		chan->cfg->cb.packet_begin(buf, ph);
	lrb_commit_bytes(buf, start, LRB_PACKET_HEADER_SIZE);
}

/*
 * Can a writer open the packet at @start? Not if the reader still holds it
 * (discard mode), nor if its previous lap is not fully committed: a writer
 * went round the whole ring while an older one, interrupted, still owns
 * bytes there.
 */
static int lrb_check_space(struct lrb_buf *buf, unsigned long start)
{
	const struct lrb_chan *chan = buf->chan;
	unsigned long cc;

	if (chan->cfg->mode == LRB_MODE_DISCARD &&
	    __lrb_pos_dist(__lrb_atomic_read(&buf->consumed), start) >=
		    __lrb_buf_size(chan))
		return -ENOBUFS;
	cc = __lrb_v_read(lrb_chan_per_cpu(chan),
			  &buf->commit[__lrb_subbuf_index(chan, start)]);
	if (!__lrb_commit_done(chan, cc, __lrb_lap(chan, start)))
		return -EAGAIN;
	return 0;
}

static int lrb_count_lost(struct lrb_buf *buf, int err)
{
	bool per_cpu = lrb_chan_per_cpu(buf->chan);

	lrb_region_count_lost(buf, err == -ENOBUFS ? LRB_REGION_LOST_FULL :
				   err == -EAGAIN  ? LRB_REGION_LOST_WRAP :
						     LRB_REGION_LOST_BIG);
	if (err == -ENOBUFS)
		__lrb_v_inc(per_cpu, &buf->lost_full);
	else if (err == -EAGAIN)
		__lrb_v_inc(per_cpu, &buf->lost_wrap);
	else
		__lrb_v_inc(per_cpu, &buf->lost_big);
	return err;
}

/**
 * struct lrb_slot_plan - what a slow-path reservation will do
 * @offset: write position (with its discard generation) the plan is for
 * @old: that write position
 * @start: the packet to open, if @open_new
 * @begin: position of the record
 * @end: position after the record's payload: 2^__LRB_POS_BITS, not wrapped,
 *	for a record that ends exactly where positions wrap
 * @lost: loss count sampled for the packet closed, if any
 * @header_len: record header bytes
 * @close_old: the packet at @old must be closed and padded
 * @open_new: a packet must be opened at @start
 */
struct lrb_slot_plan {
	unsigned long offset;
	unsigned long old;
	unsigned long start;
	unsigned long begin;
	unsigned long end;
	struct lrb_lost lost;
	u32 header_len;
	bool close_old;
	bool open_new;
};

/*
 * Plan the reservation of @ctx from the current write position.
 * Return: 0, a negative loss to count, or 1 if the position moved while the
 * plan was made and it must be made again.
 */
static int lrb_plan_slot(struct lrb_ctx *ctx, struct lrb_slot_plan *p)
{
	struct lrb_chan *chan = ctx->chan;
	struct lrb_buf *buf = ctx->buf;
	const struct lrb_config *cfg = chan->cfg;
	bool per_cpu = __lrb_per_cpu(cfg);
	unsigned long rec_len, used;
	int ret;

	p->offset = __lrb_v_read(per_cpu, &buf->offset);
	/* what others did before moving it: counters, commit counts */
	smp_rmb();
	p->old = __lrb_write_pos(p->offset);
	ctx->tsc = cfg->cb.clock_read();
	p->header_len = __lrb_header_len(cfg, ctx->id,
					 ctx->tsc -
					 __lrb_v64_read(per_cpu, &buf->last_tsc));
	/* compared before the sum, which wraps on 32-bit for len near 4 GiB */
	if (ctx->len > chan->subbuf_size - LRB_PACKET_HEADER_SIZE - p->header_len)
		return -EMSGSIZE;
	rec_len = (unsigned long)p->header_len + ctx->len;
	/* 0 also when the last record ended the packet on its boundary */
	used = __lrb_subbuf_offset(chan, __lrb_align(p->old));
	p->open_new = !used;
	p->close_old = used && used + rec_len > chan->subbuf_size;
	p->begin = __lrb_align(p->old) & __LRB_POS_MASK;
	p->start = p->begin;
	if (p->close_old) {
		p->begin = __lrb_pos_add(p->old | (chan->subbuf_size - 1), 1);
		p->open_new = true;
	}
	if (p->open_new) {
		p->start = p->begin;
		ret = lrb_check_space(buf, p->start);
		/* another writer may have opened it meanwhile */
		smp_rmb();
		if (ret)
			return __lrb_v_read(per_cpu, &buf->offset) == p->offset ?
				       ret : 1;
		p->begin += LRB_PACKET_HEADER_SIZE;
	}
	p->end = p->begin + rec_len;
	/*
	 * Sampled before the packet is closed, so that packets closed later,
	 * by writers nesting in this one, never show less.
	 */
	lrb_lost_sample(buf, &p->lost);
	return 0;
}

/**
 * __lrb_reserve_slow() - reserve a record that needs a sub-buffer switch
 * @ctx: the reservation: chan, buf, id and len set by lrb_reserve()
 *
 * Handles what the fast path does not: a record that opens a packet, that
 * does not fit in the rest of the current one (which is then closed and
 * padded), that ends exactly on the boundary, or a fast-path race lost to
 * a nested writer.
 *
 * Return: 0 or a negative error, as lrb_reserve().
 */
int __lrb_reserve_slow(struct lrb_ctx *ctx)
{
	struct lrb_chan *chan = ctx->chan;
	struct lrb_buf *buf = ctx->buf;
	bool per_cpu = lrb_chan_per_cpu(chan);
	struct lrb_slot_plan p;
	int ret;

	for (;;) {
		ret = lrb_plan_slot(ctx, &p);
		if (ret < 0)
			return lrb_count_lost(buf, ret);
		ctx->gen = p.offset & __LRB_OFFSET_GEN_MASK;
		if (!ret && __lrb_v_cmpxchg(per_cpu, &buf->offset, p.offset,
					    (p.end & __LRB_POS_MASK) | ctx->gen) ==
		    p.offset)
			break;
	}

	if (p.close_old)
		lrb_close_packet(buf, p.old, ctx->tsc, &p.lost);
	if (p.open_new)
		lrb_open_packet(buf, p.start, ctx->tsc);
	/* a discard must not reopen a packet this reservation closed */
	ctx->prev = p.open_new ? p.begin : p.old;
	ctx->begin = p.begin;
	ctx->end = p.end;
	/* a record ending on the boundary closes its packet: no padding */
	if (!__lrb_subbuf_offset(chan, __lrb_align(p.end))) {
		p.lost.idx = __lrb_subbuf_index(chan, p.begin);
		lrb_end_packet(buf, lrb_writer_pages(buf, p.begin),
			       p.end - (p.begin & ~(chan->subbuf_size - 1)),
			       ctx->tsc, &p.lost);
	}
	__lrb_open_record(chan->cfg, ctx, p.header_len, chan->subbuf_order,
			  chan->num_subbuf_order);
	return 0;
}
EXPORT_SYMBOL_GPL(__lrb_reserve_slow);

/*
 * @tsc, or the time of the last record committed in @buf if that is later:
 * a flush for a dead CPU reads another CPU's clock, which may lag behind
 * what interrupts wrote on the dying one.
 */
static u64 lrb_after_last_record(struct lrb_buf *buf, u64 tsc)
{
	u64 last = __lrb_v64_read(lrb_chan_per_cpu(buf->chan), &buf->last_tsc);

	return (s64)(last - tsc) > 0 ? last : tsc;
}

static void lrb_switch_packet(void *arg)
{
	struct lrb_buf *buf = arg;
	const struct lrb_chan *chan = buf->chan;
	bool per_cpu = lrb_chan_per_cpu(chan);
	unsigned long offset, old, end;
	struct lrb_lost lost;
	u64 tsc;

	do {
		offset = __lrb_v_read(per_cpu, &buf->offset);
		/* what others did before moving it: loss counters */
		smp_rmb();
		old = __lrb_write_pos(offset);
		/*
		 * nothing open (or closed by a record ending on the boundary),
		 * or a packet holding no record yet
		 */
		if (__lrb_subbuf_offset(chan, __lrb_align(old)) <=
		    LRB_PACKET_HEADER_SIZE)
			return;
		tsc = lrb_after_last_record(buf, chan->cfg->cb.clock_read());
		end = __lrb_pos_add(old | (chan->subbuf_size - 1), 1);
		lrb_lost_sample(buf, &lost);
	} while (__lrb_v_cmpxchg(per_cpu, &buf->offset, offset,
			       end | (offset & __LRB_OFFSET_GEN_MASK)) != offset);
	lrb_close_packet(buf, old, tsc, &lost);
}

struct lrb_final {
	struct lrb_buf *buf;
	u64 tsc;
};

/*
 * Close the packet being filled even if it holds no record, and open one
 * to close if none is open, so that the records lost since the last
 * packet closed are counted in a packet header. Only for a buffer no
 * writer uses any more; the client's clock is not called (its module may
 * be gone).
 */
static void lrb_close_final(void *arg)
{
	struct lrb_final *f = arg;
	struct lrb_buf *buf = f->buf;
	const struct lrb_chan *chan = buf->chan;
	bool per_cpu = lrb_chan_per_cpu(chan);
	unsigned long offset = __lrb_v_read(per_cpu, &buf->offset);
	unsigned long gen = offset & __LRB_OFFSET_GEN_MASK;
	unsigned long old = __lrb_write_pos(offset);
	unsigned long start = __lrb_align(old) & __LRB_POS_MASK;
	u64 tsc = lrb_after_last_record(buf, f->tsc);
	struct lrb_packet_header *ph;
	struct lrb_lost lost;

	if (__lrb_subbuf_offset(chan, start)) {
		/*
		 * A packet left open, perhaps empty after a try-discard, may
		 * have begun after @tsc: it must not end before it began.
		 */
		ph = lrb_writer_pages(buf, start)[0];
		if (ph->timestamp_begin > tsc)
			tsc = ph->timestamp_begin;
	} else {
		/* the reader must have made room */
		if (lrb_check_space(buf, start))
			return;
		old = start + LRB_PACKET_HEADER_SIZE;
		__lrb_v_set(per_cpu, &buf->offset, old | gen);
		lrb_open_packet(buf, start, tsc);
	}
	__lrb_v_set(per_cpu, &buf->offset,
		    __lrb_pos_add(old | (chan->subbuf_size - 1), 1) | gen);
	lrb_lost_sample(buf, &lost);
	lrb_close_packet(buf, old, tsc, &lost);
}

void lrb_buf_flush_final(struct lrb_buf *buf, u64 tsc)
{
	struct lrb_final f = { .buf = buf, .tsc = tsc };

	__lrb_port_on_cpu(buf, lrb_close_final, &f);
}
EXPORT_SYMBOL_GPL(lrb_buf_flush_final);

void lrb_buf_flush_local(struct lrb_buf *buf)
{
	__lrb_port_on_this_cpu(buf, lrb_switch_packet, buf);
}
EXPORT_SYMBOL_GPL(lrb_buf_flush_local);

void lrb_buf_flush(struct lrb_buf *buf)
{
	might_sleep();
	__lrb_port_on_cpu(buf, lrb_switch_packet, buf);
}
EXPORT_SYMBOL_GPL(lrb_buf_flush);
