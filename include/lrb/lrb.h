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
 */
struct lrb_chan_attr {
	unsigned long subbuf_size;
	unsigned long num_subbuf;
	unsigned int nr_cpus;
	uint32_t stream_id;
	void *priv;
};

/**
 * struct lrb_stats - a buffer's counters, sampled
 * @records: records committed
 * @produced: where the next record will start: bytes reserved since
 *	creation, the last record's alignment bytes included (unlike a
 *	position, it does not wrap before 2^64 bytes, 2^62 on 32-bit)
 * @consumed: the read position, as bytes since creation
 * @lost_full: records dropped because the reader had not freed space
 * @lost_wrap: records dropped because the next sub-buffer was still being
 *	committed
 * @lost_big: records dropped because they did not fit in a sub-buffer
 * @lost_nest: records dropped because writers nested too deeply
 * @lost_packets: overwrite mode: packets overwritten before being read
 */
struct lrb_stats {
	unsigned long records;
	uint64_t produced;
	uint64_t consumed;
	unsigned long lost_full;
	unsigned long lost_wrap;
	unsigned long lost_big;
	unsigned long lost_nest;
	unsigned long lost_packets;
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

int lrb_channel_create(const struct lrb_config *cfg,
		       const struct lrb_chan_attr *attr,
		       struct lrb_chan **chanp);
void lrb_channel_destroy(struct lrb_chan *chan);
void lrb_channel_flush(struct lrb_chan *chan);
struct lrb_buf *lrb_channel_nth_buf(struct lrb_chan *chan, unsigned int i);

void lrb_buf_flush(struct lrb_buf *buf);
void lrb_buf_flush_local(struct lrb_buf *buf);
void lrb_buf_flush_final(struct lrb_buf *buf, uint64_t tsc);
void lrb_buf_stats(struct lrb_buf *buf, struct lrb_stats *stats);
unsigned long lrb_buf_lost(struct lrb_buf *buf);

int lrb_reader_open(struct lrb_buf *buf);
void lrb_reader_close(struct lrb_buf *buf);
bool lrb_buf_readable(struct lrb_buf *buf);
unsigned long lrb_buf_complete(struct lrb_buf *buf, unsigned long max);
int lrb_get_next_subbuf(struct lrb_buf *buf, struct lrb_subbuf *sb);
int lrb_get_subbuf(struct lrb_buf *buf, unsigned long pos,
		   struct lrb_subbuf *sb);
int lrb_put_subbuf(struct lrb_buf *buf, struct lrb_subbuf *sb);
void *lrb_subbuf_steal_page(struct lrb_buf *buf, struct lrb_subbuf *sb,
			    unsigned long i);
void lrb_positions(struct lrb_buf *buf, unsigned long *consumed,
		   unsigned long *produced);
int lrb_subbuf_copy(const struct lrb_chan *chan, const struct lrb_subbuf *sb,
		    unsigned long offset, void *dst, unsigned long len);

#ifdef __cplusplus
}
#endif

#endif /* _LRB_LRB_H */
