/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb channels and buffers: the structures the inline fast paths touch, and
 * the position arithmetic shared by writers and readers.
 *
 * Positions are free-running byte counts of __LRB_POS_BITS bits (they wrap
 * at 2^30 on 32-bit machines, 2^62 on 64-bit ones): a buffer of num_subbuf
 * sub-buffers of subbuf_size bytes (both powers of two) maps position p to
 * sub-buffer (p >> subbuf_order) & (num_subbuf - 1), at byte
 * p & (subbuf_size - 1). "Lap" p >> buf_order counts how many times the
 * writers went round the ring since positions last wrapped.
 */
#ifndef _LRB_BUFFER_H
#define _LRB_BUFFER_H

#include <lrb/config.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writers nested on one CPU (task, softirq, hardirq, NMI) or thread. */
#define LRB_MAX_NESTING 4

/*
 * Overwrite mode maps each sub-buffer of the ring to a slot of pages
 * through buf->wsb[]: bits 0-15 hold the slot, bit 16 is set ("noref") once
 * the sub-buffer is delivered and no writer may touch it any more, and the
 * bits above hold the lap the entry belongs to.
 */
#define __LRB_SLOT_BITS 16
#define __LRB_WSB_NOREF (1UL << __LRB_SLOT_BITS)
#define __LRB_SLOT_MASK (__LRB_WSB_NOREF - 1)
#define __LRB_WSB_TAG_SHIFT (__LRB_SLOT_BITS + 1)
#define __LRB_MAX_SUBBUF_ORDER 30

/*
 * The write position stops where the last record's payload ends, so that
 * a packet closed there ends exactly after its last record, as CTF readers
 * require; the next record starts at the next multiple of LRB_RECORD_ALIGN.
 *
 * The top two bits of the write position count discards, so positions
 * have __LRB_POS_BITS bits and wrap at 2^__LRB_POS_BITS. A discard moves the
 * position back, and a writer that read
 * the old value before the discard must not see its compare-and-swap
 * succeed when the position returns to it: its timestamp could then be
 * older than the record placed before it.
 */
#define __LRB_OFFSET_GEN_SHIFT (sizeof(unsigned long) * 8 - 2)
#define __LRB_OFFSET_GEN_ONE (1UL << __LRB_OFFSET_GEN_SHIFT)
#define __LRB_OFFSET_GEN_MASK (3UL << __LRB_OFFSET_GEN_SHIFT)
#define __LRB_POS_BITS __LRB_OFFSET_GEN_SHIFT
#define __LRB_POS_MASK (~__LRB_OFFSET_GEN_MASK)

/* Position @pos advanced by @n bytes, wrapped. */
static __always_inline unsigned long __lrb_pos_add(unsigned long pos,
						   unsigned long n)
{
	return (pos + n) & __LRB_POS_MASK;
}

/* Bytes from position @from forward to position @to, across a wrap. */
static __always_inline unsigned long __lrb_pos_dist(unsigned long from,
						    unsigned long to)
{
	return (to - from) & __LRB_POS_MASK;
}

/*
 * Is position @a before @b? Wrap-safe while they are less than half the
 * position space apart: the shift drops the two bits positions lack.
 */
static __always_inline bool __lrb_pos_before(unsigned long a, unsigned long b)
{
	return (long)((a - b) << 2) < 0;
}

/**
 * struct lrb_buf - one ring of sub-buffers (per CPU, or the global one)
 * @offset: write position: the end of the last record reserved, with a
 *	discard generation in its top bits (see %__LRB_OFFSET_GEN_MASK)
 * @last_tsc: timestamp of a recently committed record: the reference a
 *	writer compares its timestamp with to pick the compact header
 * @commit: per sub-buffer, bytes committed in all laps so far
 * @records: records committed, per sub-buffer and parity of its lap
 *	(see __lrb_records_index()), all laps so far; their sum is the count
 *	of records committed
 * @wsb: overwrite mode: per sub-buffer, slot, noref flag and lap
 * @mark: persistent channels: per sub-buffer, the commit mark (a position
 *	up to which every byte of its lap is committed; __lrb_commit_mark())
 * @skips: per sub-buffer, the list of records skipped in its current lap:
 *	the offset of the last one pushed, 0 if none (see __lrb_skip())
 * @region_lost: persistent channels: the loss counters in the region
 * @region_closing: persistent channels: per sub-buffer, the closing count
 *	in the region (the overwrite part of its last events_discarded)
 * @pages: page addresses, chan->pages_per_subbuf per slot
 * @chan: owning channel
 * @cpu: CPU this buffer belongs to (0 for a global buffer)
 * @lost_full: records dropped because the reader had not freed space
 * @lost_wrap: records dropped because the sub-buffer the writer wrapped to
 *	was still being committed
 * @lost_big: records dropped because they were larger than a sub-buffer
 * @lost_nest: records dropped because writers nested too deeply
 * @records_base: overwrite mode: per entry of @records, its value when
 *	the lap two laps back ended there; the difference is the record
 *	count of the packet the last lap left there
 * @consumed: read position: start of the oldest sub-buffer not consumed
 * @pass_lo: how many times positions wrapped, for positions in the lower
 *	half of the position space (see lrb_packet_seq())
 * @pass_hi: the same, for positions in the upper half
 * @lost_packets: overwrite mode: sub-buffers writers overwrote unread
 * @lost_overwrite: overwrite mode: records in those sub-buffers
 * @reader_busy: 1 while a consuming reader is attached
 * @spare: overwrite mode: the slot the reader owns when it holds nothing
 * @holding: the reader holds a sub-buffer
 * @held_pos: position of the sub-buffer held
 * @held_slot: its slot
 * @held_consuming: it was taken by lrb_get_next_subbuf()
 * @wait: reader wakeup state (port layer)
 */
struct lrb_buf {
	union __lrb_v offset;
	union __lrb_v64 last_tsc;
	union __lrb_v *commit;
	union __lrb_v *records;
	struct __lrb_atomic *wsb;
	union __lrb_v *mark;
	union __lrb_v *skips;
	union __lrb_v *region_lost;
	unsigned long *region_closing;
	void **pages;
	struct lrb_chan *chan;
	unsigned int cpu;
	union __lrb_v lost_full;
	union __lrb_v lost_wrap;
	union __lrb_v lost_big;
	union __lrb_v lost_nest;
	unsigned long *records_base;
	unsigned long pass_lo;
	unsigned long pass_hi;

	struct __lrb_atomic consumed
		__attribute__((__aligned__(__LRB_CACHELINE_BYTES)));
	struct __lrb_atomic lost_packets;
	struct __lrb_atomic lost_overwrite;
	struct __lrb_atomic reader_busy;
	unsigned long spare;
	bool holding;
	bool held_consuming;
	unsigned long held_pos;
	unsigned long held_slot;
	struct __lrb_port_wait wait;
};

struct __lrb_port_timer;

/**
 * struct lrb_chan - a channel: buffers of one client configuration
 * @cfg: the client's configuration
 * @bufs: per-CPU buffers (nr_bufs of them), or the single global buffer
 * @nr_bufs: number of buffers
 * @subbuf_size: bytes per sub-buffer
 * @subbuf_order: log2(subbuf_size)
 * @num_subbuf: sub-buffers per buffer
 * @num_subbuf_order: log2(num_subbuf)
 * @pages_per_subbuf: pages per sub-buffer
 * @base_mask: ~(subbuf_size - 1): the bits of a position above its sub-buffer
 * @idx_mask: num_subbuf - 1
 * @records_mask: 2 * num_subbuf - 1 (see __lrb_records_index())
 * @page_mask: pages_per_subbuf - 1
 * @end_mask: subbuf_size - 4 (see __lrb_commit_ends())
 * @stream_id: CTF stream id written in every packet header
 * @priv: client data
 * @region: the region a persistent channel lives in, or NULL
 * @timer: the port's switch timer (user space), NULL without one
 */
struct lrb_chan {
	const struct lrb_config *cfg;
	struct lrb_buf **bufs;
	unsigned int nr_bufs;
	unsigned long subbuf_size;
	unsigned int subbuf_order;
	unsigned long num_subbuf;
	unsigned int num_subbuf_order;
	unsigned int pages_per_subbuf;
	/* the fast path's masks, derived once rather than per record */
	unsigned long base_mask;
	unsigned long idx_mask;
	unsigned long records_mask;
	unsigned long page_mask;
	unsigned long end_mask;
	uint32_t stream_id;
	void *priv;
	void *region;
	struct __lrb_port_timer *timer;
};

static __always_inline unsigned long __lrb_subbuf_offset(const struct lrb_chan *chan,
							 unsigned long pos)
{
	return pos & (chan->subbuf_size - 1);
}

static __always_inline unsigned long __lrb_subbuf_index(const struct lrb_chan *chan,
							unsigned long pos)
{
	return (pos >> chan->subbuf_order) & (chan->num_subbuf - 1);
}

/*
 * Index in buf->records of the packet at @pos: its sub-buffer and the
 * parity of its lap, so that the records of a lap are counted apart from
 * those of the next lap in the same sub-buffer.
 */
static __always_inline unsigned long __lrb_records_index(const struct lrb_chan *chan,
							 unsigned long pos)
{
	return (pos >> chan->subbuf_order) & (2 * chan->num_subbuf - 1);
}

static __always_inline unsigned long __lrb_lap(const struct lrb_chan *chan,
					       unsigned long pos)
{
	return pos >> (chan->subbuf_order + chan->num_subbuf_order);
}

/* The write position of a buffer, without its discard generation. */
static __always_inline unsigned long __lrb_write_pos(unsigned long offset)
{
	return offset & ~__LRB_OFFSET_GEN_MASK;
}

/* Where a record reserved at write position @pos starts. */
static __always_inline unsigned long __lrb_align(unsigned long pos)
{
	return (pos + LRB_RECORD_ALIGN - 1) & ~(unsigned long)(LRB_RECORD_ALIGN - 1);
}

static __always_inline unsigned long __lrb_buf_size(const struct lrb_chan *chan)
{
	return chan->subbuf_size << chan->num_subbuf_order;
}

/*
 * True when a sub-buffer's commit count @cc is exactly @lap full
 * sub-buffers: every lap before @lap is complete and nothing of lap @lap is
 * committed. Laps wrap with positions, after 2^(__LRB_POS_BITS - buf_order)
 * of them, so lap * subbuf_size is defined modulo
 * 2^(__LRB_POS_BITS - num_subbuf_order): only those bits are compared.
 */
static __always_inline bool __lrb_commit_done(const struct lrb_chan *chan,
					      unsigned long cc, unsigned long lap)
{
	unsigned long mask = __LRB_POS_MASK >> chan->num_subbuf_order;

	return ((cc - (lap << chan->subbuf_order)) & mask) == 0;
}

/*
 * Did the add that returned commit count @cc complete its sub-buffer, or
 * bring it one byte short of complete? Every commit adds a multiple of 4
 * bytes, except the first skipped record of a lap, which holds one byte
 * back: a count 1 short of complete then tells the writer whose add brought
 * it there that every other writer of the lap is done, and that it must
 * merge the skipped records before adding the last byte (__lrb_deliver()).
 *
 * Only the offset in the sub-buffer is tested, not the lap: every add of
 * lap L comes after the opener of the lap saw lap L - 1 complete
 * (lrb_check_space()), at L * subbuf_size, and adds at least 4 (7 for a
 * held-back skip), while lap L + 1 cannot open before lap L completes. So
 * after an add of lap L the count lies in (L * subbuf_size + 3,
 * (L + 1) * subbuf_size], where only the top two values pass.
 */
static __always_inline bool __lrb_commit_ends(const struct lrb_chan *chan,
					      unsigned long cc)
{
	return !((cc + 1) & chan->end_mask);
}

/*
 * How many times positions wrapped before position @pos, which must be
 * within a buffer of the write position (see lrb_packet_seq()).
 */
static inline unsigned long __lrb_pos_pass(const struct lrb_buf *buf,
					   unsigned long pos)
{
	if (pos < (1UL << (__LRB_POS_BITS - 1)))
		return __lrb_read_once(buf->pass_lo);
	return __lrb_read_once(buf->pass_hi);
}

/*
 * Bytes a reader gets of a packet of @content bytes: the content rounded up
 * to a page, so that a flushed packet does not drag a whole sub-buffer of
 * padding along.
 */
static __always_inline unsigned long __lrb_packet_size(const struct lrb_chan *chan,
						       unsigned long content)
{
	unsigned long size = (content + LRB_PAGE_SIZE - 1) & ~(LRB_PAGE_SIZE - 1);

	return size < chan->subbuf_size ? size : chan->subbuf_size;
}

/* Slots of pages per buffer: the ring, plus the reader's spare in overwrite. */
static __always_inline unsigned long __lrb_nr_slots(const struct lrb_chan *chan)
{
	return chan->num_subbuf + (chan->cfg->mode == LRB_MODE_OVERWRITE);
}

static __always_inline void **__lrb_slot_pages(const struct lrb_chan *chan,
					       struct lrb_buf *buf,
					       unsigned long slot)
{
	return buf->pages + slot * chan->pages_per_subbuf;
}

/*
 * Persistent channels: after adding to the commit count of the sub-buffer
 * holding position @pos and getting @cc, record the commit mark if every
 * byte reserved in the sub-buffer is now committed. The add came first, so
 * every byte it counted lies below the write position read here (which
 * never moves back over a committed record): if they add up to the whole
 * distance from the sub-buffer's start, the prefix up to that position has
 * no hole. A late store only leaves an older mark, which is still true.
 */
static __always_inline void __lrb_commit_mark(bool per_cpu, struct lrb_buf *buf,
					      unsigned long pos, unsigned long cc)
{
	const struct lrb_chan *chan = buf->chan;
	unsigned long start = pos & ~(chan->subbuf_size - 1);
	unsigned long done = (cc - (__lrb_lap(chan, pos) << chan->subbuf_order)) &
			     (__LRB_POS_MASK >> chan->num_subbuf_order);
	unsigned long w = __lrb_align(__lrb_write_pos(__lrb_v_read(per_cpu,
								   &buf->offset))) &
			  __LRB_POS_MASK;

	if (__lrb_pos_dist(start, w) == done)
		__lrb_v_set(per_cpu, &buf->mark[__lrb_subbuf_index(chan, pos)], w);
}

/*
 * A port whose CPU numbers never reach a per-CPU channel's count of buffers
 * defines this to 1; elsewhere CPU c writes buffer c % nr_bufs.
 */
#ifndef __LRB_PORT_CPU_BELOW_NR_BUFS
#define __LRB_PORT_CPU_BELOW_NR_BUFS 0
#endif

static __always_inline struct lrb_buf *__lrb_this_cpu_buf(const struct lrb_config *cfg,
							  struct lrb_chan *chan)
{
	unsigned int cpu;

	if (cfg->alloc == LRB_ALLOC_GLOBAL)
		return chan->bufs[0];
	cpu = __lrb_port_cpu();
	if (!__LRB_PORT_CPU_BELOW_NR_BUFS && __lrb_unlikely(cpu >= chan->nr_bufs))
		cpu %= chan->nr_bufs;
	return chan->bufs[cpu];
}

#ifdef __cplusplus
}
#endif

#endif /* _LRB_BUFFER_H */
