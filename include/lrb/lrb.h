/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb: lockless per-CPU ring buffers.
 *
 * The one header clients include: channels (create, flush, destroy), the
 * inline write fast paths (lrb/frontend.h), the reader API and statistics.
 * The record decoder is in lrb/decode.h.
 */
#ifndef _LRB_LRB_H
#define _LRB_LRB_H

#include <lrb/frontend.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes at the start of every sub-buffer taken by the packet header. */
#define LRB_PACKET_HEADER_SIZE sizeof(struct lrb_packet_header)

/* Limits on the channel geometry. */
#define LRB_MIN_SUBBUF_SIZE LRB_PAGE_SIZE
#define LRB_MAX_SUBBUF_SIZE (1UL << __LRB_MAX_SUBBUF_ORDER)
#define LRB_MAX_NUM_SUBBUF (1UL << (__LRB_SLOT_BITS - 1))

/*
 * Bits of a buffer position (lrb_positions(), struct lrb_subbuf.pos): 30 on
 * 32-bit machines, 62 on 64-bit ones. Positions wrap at 2^LRB_POS_BITS.
 */
#define LRB_POS_BITS __LRB_POS_BITS

/**
 * lrb_pos_advance() - a position moved forward
 * @pos: a position
 * @n: bytes to move it by (for instance a sub-buffer size)
 *
 * Use it instead of ``+``: positions wrap at 2^%LRB_POS_BITS.
 *
 * Context: any context.
 * Return: @pos + @n, wrapped.
 */
static inline unsigned long lrb_pos_advance(unsigned long pos, unsigned long n)
{
	return __lrb_pos_add(pos, n);
}

/**
 * lrb_pos_distance() - bytes from one position forward to another
 * @from: the earlier position
 * @to: the later position
 *
 * Use it instead of ``-``: the distance is right across the wrap of
 * positions, for positions less than 2^(%LRB_POS_BITS - 1) apart (a buffer
 * is much smaller).
 *
 * Context: any context.
 * Return: @to - @from, modulo 2^%LRB_POS_BITS.
 */
static inline unsigned long lrb_pos_distance(unsigned long from,
					     unsigned long to)
{
	return __lrb_pos_dist(from, to);
}

/**
 * lrb_pos_before() - is a position before another?
 * @a: a position
 * @b: another position, less than 2^(%LRB_POS_BITS - 1) bytes from @a
 *
 * Use it instead of ``<``: it is right across the wrap of positions.
 *
 * Context: any context.
 * Return: true if @a comes before @b.
 */
static inline bool lrb_pos_before(unsigned long a, unsigned long b)
{
	return __lrb_pos_before(a, b);
}

/**
 * struct lrb_chan_attr - run-time attributes of a channel
 * @subbuf_size: bytes per sub-buffer: a power of two, at least a page
 * @num_subbuf: sub-buffers per buffer: a power of two, at least 2
 * @nr_cpus: buffers of a per-CPU channel; in the kernel it must be
 *	nr_cpu_ids (a buffer for every possible CPU). User space accepts any
 *	count (lrb_possible_cpus() is the natural one) and maps CPU c to
 *	buffer c % nr_cpus. Ignored (but must not be 0) for global channels.
 * @stream_id: CTF stream id written into every packet header
 * @priv: client data, left in chan->priv
 * @region: for a persistent configuration (and only then): page-aligned
 *	memory the channel is laid out in, which it neither allocates nor
 *	frees (see lrb_region_size())
 * @region_size: bytes at @region
 * @run_id: identifier of this boot or process, kept in the region
 * @metadata: CTF metadata text kept in the region for recovery, or NULL
 * @switch_timer_us: user space: period of the channel's switch timer, a
 *	thread that flushes every buffer (lrb_buf_flush()) this often, so
 *	that records become readable within about this delay; 0: none, and
 *	records stay invisible until their packet fills or is flushed. In the
 *	kernel it must be 0: lrb.ko's channels have per-CPU switch timers
 *	(struct lrb_kchan_attr).
 */
struct lrb_chan_attr {
	unsigned long subbuf_size;
	unsigned long num_subbuf;
	unsigned int nr_cpus;
	uint32_t stream_id;
	void *priv;
	void *region;
	unsigned long region_size;
	uint64_t run_id;
	const char *metadata;
	unsigned int switch_timer_us;
};

/**
 * struct lrb_subbuf - a sub-buffer held by a reader
 * @pos: position of the sub-buffer's first byte
 * @pages: its page addresses (chan->pages_per_subbuf of them)
 * @slot: backing slot of those pages
 * @content_size: bytes holding the packet header and records
 * @packet_size: bytes of the packet, padding included: the content rounded
 *	up to a page, so that a flushed packet does not drag a whole
 *	sub-buffer of padding along; the packet header says the same
 * @seq: packet sequence number
 * @consuming: taken by lrb_get_next_subbuf(), which consumes it
 */
struct lrb_subbuf {
	unsigned long pos;
	void **pages;
	unsigned long slot;
	unsigned long content_size;
	unsigned long packet_size;
	uint64_t seq;
	bool consuming;
};

/**
 * lrb_channel_create() - create a channel and its buffers
 * @cfg: the client's configuration; must outlive the channel
 * @attr: geometry and identity of the channel
 * @chanp: receives the channel
 *
 * Allocates every buffer up front (one per CPU, or one global buffer),
 * each with zeroed pages, and in user space starts the switch timer's
 * thread if @attr asks for one. The channel accepts records at once. A
 * persistent channel (@cfg->persistent) is laid out afresh in
 * @attr->region instead: its buffers' pages and state are the region's,
 * whatever the region held before is gone (recover it first), and only
 * the small per-buffer structures are allocated.
 *
 * Context: process context; may sleep (allocates with GFP_KERNEL).
 * Return: 0, -EINVAL if @cfg or @attr is invalid (for a persistent
 * channel also: not overwrite, region not page aligned or smaller than
 * lrb_region_size(); in the kernel, a switch timer too), -ENOMEM if memory
 * ran out, or in user space the error of starting the switch timer's
 * thread (-EAGAIN: no more threads); nothing is left allocated.
 */
int lrb_channel_create(const struct lrb_config *cfg,
		       const struct lrb_chan_attr *attr,
		       struct lrb_chan **chanp);

/**
 * lrb_channel_destroy() - free a channel
 * @chan: channel from lrb_channel_create()
 *
 * Stops the switch timer (its thread has exited on return), then waits
 * until writers still inside a reserve/commit section have left it; the
 * client must have stopped starting new writes, and no reader may still
 * use the channel.
 *
 * Context: process context; sleeps (an RCU grace period in the kernel).
 */
void lrb_channel_destroy(struct lrb_chan *chan);

/**
 * lrb_channel_flush() - close the partly filled packet of every buffer
 * @chan: the channel
 *
 * See lrb_buf_flush().
 *
 * Context: process context; may sleep, as lrb_buf_flush().
 */
void lrb_channel_flush(struct lrb_chan *chan);

/**
 * lrb_channel_nth_buf() - a buffer of a channel
 * @chan: the channel
 * @i: buffer index: the CPU for per-CPU channels (in user space, where
 *	CPU c writes buffer c % nr_cpus, any index below nr_cpus), 0 for a
 *	global one
 *
 * Context: any context.
 * Return: the buffer, or NULL if @i is out of range.
 */
struct lrb_buf *lrb_channel_nth_buf(struct lrb_chan *chan, unsigned int i);

/**
 * lrb_buf_flush() - close the packet being filled so it can be read
 * @buf: the buffer
 *
 * The packet is padded and delivered once records still being written in
 * it are committed. A packet holding no record is left open. In the kernel
 * this runs on the buffer's CPU (by IPI), since its writers use CPU-local
 * operations.
 *
 * Context: process context; may sleep (CPU hotplug lock, IPI wait). Where
 * sleeping is not allowed, use lrb_buf_flush_local() on the buffer's CPU.
 */
void lrb_buf_flush(struct lrb_buf *buf);

/**
 * lrb_buf_flush_local() - lrb_buf_flush() on the buffer's own CPU
 * @buf: the buffer
 *
 * For callers that already run on the CPU owning @buf, with preemption
 * disabled (a pinned timer, a CPU hotplug callback), or that act for a
 * dead CPU while nothing else can flush it (a CPU hotplug callback after
 * the CPU is gone): it neither sleeps nor sends an IPI.
 *
 * Context: on @buf's CPU with preemption disabled, or for a dead CPU; in
 * user space, any thread. Does not sleep.
 */
void lrb_buf_flush_local(struct lrb_buf *buf);

/**
 * lrb_buf_flush_final() - close a last packet carrying every loss
 * @buf: a buffer no writer will write again (its channel is finalised)
 * @tsc: its time stamp: at least the timestamp_end of the packets read,
 *	so that timestamps never go back in the stream
 *
 * Records lost while no packet could be opened (a full ring) show in no
 * packet header. For a reader that has drained the buffer and found the
 * last events_discarded lower than lrb_buf_lost(): this closes the packet
 * being filled, even empty, or opens and closes an empty one, whose
 * header carries the final count. It does nothing if the ring has no room.
 * The client's clock is not read, but its packet_begin and packet_end
 * callbacks, if any, are called. lrb.ko calls it when a finalised
 * channel's reader reaches the end; a user-space reader calls it after its
 * writers have stopped for good, before the last drain, so that a CTF
 * reader sees the final discarded-events count.
 *
 * Context: no writer of @buf may run, then or later; does not sleep.
 */
void lrb_buf_flush_final(struct lrb_buf *buf, uint64_t tsc);

/**
 * lrb_buf_stats() - sample a buffer's counters
 * @buf: the buffer
 * @stats: receives them, as %LRB_IOC_GET_COUNTERS gives them: the counts
 *	do not wrap (produced and consumed are bytes since creation, not
 *	positions). packets_read, bytes_read and pages_spliced count what
 *	lrb.ko's files hand to readers: this sets them to 0.
 *
 * Each counter is read atomically, but not all of them at one instant:
 * with writers running, they may disagree by the records in flight.
 *
 * Context: any context; does not sleep.
 */
void lrb_buf_stats(struct lrb_buf *buf, struct lrb_buf_counters *stats);

/**
 * lrb_buf_lost() - records a buffer lost so far, all causes
 * @buf: the buffer
 *
 * What packet headers carry as events_discarded. Records in packets
 * overwritten in overwrite mode are included; readers also see those
 * packets as gaps in packet sequence numbers.
 *
 * Context: any context; does not sleep.
 * Return: the sum of the full, wrap, too-big, nesting and overwrite
 * counters.
 */
unsigned long lrb_buf_lost(struct lrb_buf *buf);

/**
 * lrb_reader_open() - become the consuming reader of a buffer
 * @buf: the buffer
 *
 * Context: any context; does not sleep.
 * Return: 0, or -EBUSY if another reader holds it.
 */
int lrb_reader_open(struct lrb_buf *buf);

/**
 * lrb_reader_close() - stop being the reader of a buffer
 * @buf: the buffer
 *
 * A sub-buffer still held is released first.
 *
 * Context: the reader's own context (the one that opened it).
 */
void lrb_reader_close(struct lrb_buf *buf);

/**
 * lrb_buf_readable() - is a sub-buffer ready at the read position?
 * @buf: the buffer
 *
 * Context: any context; does not sleep.
 * Return: true if lrb_get_next_subbuf() would likely succeed.
 */
bool lrb_buf_readable(struct lrb_buf *buf);

/**
 * lrb_buf_complete() - count complete sub-buffers waiting for the reader
 * @buf: the buffer
 * @max: stop counting there
 *
 * For watermarks: how full the buffer is, in sub-buffers a reader could
 * take one after the other from the read position: those whose every
 * record is committed (a packet closed by a flush counts once its last
 * writer committed). It counts from the read position up to the first
 * sub-buffer not complete, so a later complete one behind a slow writer
 * is not counted yet. In overwrite mode, writers may overwrite the counted
 * sub-buffers before the reader takes them.
 *
 * Context: any context; lockless, does not sleep.
 * Return: the count, at most @max and at most num_subbuf.
 */
unsigned long lrb_buf_complete(struct lrb_buf *buf, unsigned long max);

/**
 * lrb_get_next_subbuf() - take the oldest complete sub-buffer
 * @buf: the buffer, opened with lrb_reader_open()
 * @sb: receives the sub-buffer
 *
 * The sub-buffer stays the reader's until lrb_put_subbuf(), which
 * consumes it. In overwrite mode, a sub-buffer overwritten while being
 * taken is skipped: it shows as a gap in packet sequence numbers.
 *
 * Context: the reader's context; does not sleep.
 * Return: 0, -EBUSY if the reader already holds one, or -EAGAIN, which in
 * discard mode means that the sub-buffer at the read position is not
 * complete: nothing to read yet. In overwrite mode -EAGAIN means either
 * that, or that writers went round the ring and are rewriting the
 * sub-buffer at the read position: its packet is lost (a writer moves the
 * read position past it and counts it in lrb_buf_counters.lost_packets,
 * its records in lost_overwrite), and a later call returns the oldest
 * complete one that remains. Both are transient: wait
 * (lrb_wait_readable(), poll()) and call again.
 */
int lrb_get_next_subbuf(struct lrb_buf *buf, struct lrb_subbuf *sb);

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
 * it has more than %LRB_POS_BITS bits), -ENODATA if it is
 * behind the read position, -EAGAIN if it is not complete (or was just
 * overwritten, or is not before the write position), -EBUSY if the reader
 * already holds one.
 *
 * Context: the reader's context; does not sleep.
 */
int lrb_get_subbuf(struct lrb_buf *buf, unsigned long pos,
		   struct lrb_subbuf *sb);

/**
 * lrb_get_subbuf_at() - lrb_get_subbuf() by byte count since creation
 * @buf: the buffer, opened with lrb_reader_open()
 * @count: bytes since the channel was created where the sub-buffer starts,
 *	between the consumed and produced counts of lrb_buf_stats() (these
 *	do not wrap, unlike positions): packet sequence number times
 *	sub-buffer size
 * @sb: receives the sub-buffer, whose seq times subbuf_size is @count
 *	(modulo 2^64)
 *
 * What lrb.ko's %LRB_IOC_GET_SUBBUF takes: the same snapshot as
 * lrb_get_subbuf(), addressed by a count that never wraps.
 *
 * Context: the reader's context; does not sleep.
 * Return: as lrb_get_subbuf(); a @count a multiple of 2^%LRB_POS_BITS
 * behind the sub-buffer that its position holds gives -ENODATA, one ahead
 * -EAGAIN.
 */
int lrb_get_subbuf_at(struct lrb_buf *buf, uint64_t count,
		      struct lrb_subbuf *sb);

/**
 * lrb_put_subbuf() - release a sub-buffer taken by the reader
 * @buf: the buffer
 * @sb: the sub-buffer from lrb_get_next_subbuf() or lrb_get_subbuf()
 *
 * Context: the reader's context; does not sleep.
 * Return: 0, or -EINVAL if @sb is not the sub-buffer the reader holds
 * (released twice, or never taken): then nothing changes.
 */
int lrb_put_subbuf(struct lrb_buf *buf, struct lrb_subbuf *sb);

/**
 * lrb_subbuf_steal_page() - take a page of a held sub-buffer for good
 * @buf: the buffer
 * @sb: the sub-buffer the reader holds, taken by lrb_get_next_subbuf()
 * @i: page index within the sub-buffer
 * @fresh: the page to put in its place: NULL for a newly allocated zeroed
 *	page, or a page this buffer gave away earlier and that nothing else
 *	refers to any more (recycled: it goes back into the ring as it is)
 *
 * The caller may then hand the page on (to a pipe, by splice) without
 * copying it: writers never touch it again. A recycled page needs no
 * zeroing because its bytes are this buffer's own and writers rewrite every
 * byte of a sub-buffer, records then zeros to its end, before a reader can
 * take it. Only a consumed sub-buffer may be robbed; one taken for a
 * snapshot goes back to the ring.
 *
 * The page is %LRB_PAGE_SIZE bytes: in the kernel a page the caller frees
 * with put_page() (or hands to a pipe buffer, which does); in user space a
 * block from posix_memalign() the caller frees with free().
 *
 * Context: the reader's context; may sleep in the kernel (a replacement
 * page is allocated with GFP_KERNEL).
 * Return: the page, now the caller's to free, or NULL if @sb is not held
 * for consumption, the channel is persistent (its pages are the region's),
 * @i is out of range, or no page could be allocated; nothing changes then
 * (@fresh stays the caller's).
 */
void *lrb_subbuf_steal_page(struct lrb_buf *buf, struct lrb_subbuf *sb,
			    unsigned long i, void *fresh);

/**
 * lrb_positions() - sample the read and write positions
 * @buf: the buffer
 * @consumed: receives the read position
 * @produced: receives the write position: where the next record starts
 *
 * Both are positions: byte counts that wrap at 2^%LRB_POS_BITS; compare,
 * subtract and advance them with lrb_pos_before(), lrb_pos_distance() and
 * lrb_pos_advance(). lrb_buf_stats() gives the same two as counts that do
 * not wrap.
 *
 * Context: any context; does not sleep.
 */
void lrb_positions(struct lrb_buf *buf, unsigned long *consumed,
		   unsigned long *produced);

/**
 * lrb_subbuf_copy() - copy bytes out of a held sub-buffer
 * @chan: the channel
 * @sb: the held sub-buffer
 * @offset: first byte, from the start of the packet
 * @dst: destination
 * @len: bytes
 *
 * Context: the reader's context; does not sleep.
 * Return: 0, or -EINVAL if the range is not inside the packet.
 */
int lrb_subbuf_copy(const struct lrb_chan *chan, const struct lrb_subbuf *sb,
		    unsigned long offset, void *dst, unsigned long len);

#ifdef __cplusplus
}
#endif

#endif /* _LRB_LRB_H */
