/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb persistent channels: a channel laid out in a region that outlives a
 * crash (lrb_chan_attr.region, include/uapi/lrb/lrb_region.h), and the
 * recovery of a previous run's region: every packet and record validated,
 * what cannot be trusted dropped and counted by cause. Recovery only reads
 * the region, and hands the packets kept out as copies.
 */
#ifndef _LRB_REGION_H
#define _LRB_REGION_H

#include <lrb/decode.h>
#include <uapi/lrb/lrb_region.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lrb_chan;
struct lrb_chan_attr;

/**
 * enum lrb_drop_cause - why recovery dropped data
 * @LRB_DROP_SLOT: the slot table names a slot out of range, or twice
 * @LRB_DROP_HEADER: invalid packet header (magic, sizes, ids), or one whose
 *	sequence number does not fit its place or its lap, or older than the
 *	ring; bytes only: a closed packet's content size past its last record
 * @LRB_DROP_STALE: a delivered entry whose slot holds an older packet: a
 *	reader had swapped the packet out (it was being read or was read)
 * @LRB_DROP_OPENING: a sub-buffer claimed for a new lap before its packet
 *	header was written: a switch torn by the crash
 * @LRB_DROP_COMMIT: delivered, but its commit count is incomplete
 * @LRB_DROP_UNCOMMITTED: an open packet's bytes after its first hole (a
 *	record reserved and not committed), or the whole packet if its header
 *	was not committed
 * @LRB_DROP_RECORD: a record failing validation, and the rest of its
 *	packet
 * @LRB_DROP_ORDER: a packet whose timestamps go back
 * @LRB_DROP_NR: number of causes
 */
enum lrb_drop_cause {
	LRB_DROP_SLOT,
	LRB_DROP_HEADER,
	LRB_DROP_STALE,
	LRB_DROP_OPENING,
	LRB_DROP_COMMIT,
	LRB_DROP_UNCOMMITTED,
	LRB_DROP_RECORD,
	LRB_DROP_ORDER,
	LRB_DROP_NR,
};

/**
 * struct lrb_recovery_stats - what recovery kept and dropped in a buffer
 * @packets: packets kept
 * @records: records kept
 * @bytes: packet content kept, headers included
 * @lost_full: the writers' loss counters, as the region holds them
 * @lost_wrap: see @lost_full
 * @lost_big: see @lost_full
 * @lost_nest: see @lost_full
 * @lost_overwrite: see @lost_full: records of packets overwritten
 * @untrusted: the counters above that recovery found corrupt, a bit
 *	(1 << LRB_REGION_LOST_*) each: a full-ring loss in an overwrite
 *	region, a count below what the packets kept counted, or more
 *	records overwritten than the packets before the newest could hold.
 *	The packets' discarded counts then use what the packets prove.
 * @drop_packets: per cause, whole packets dropped
 * @drop_records: per cause, records known to be dropped (a hole in an
 *	open packet hides how many records follow it: only bytes count)
 * @drop_bytes: per cause, bytes dropped
 */
struct lrb_recovery_stats {
	uint64_t packets;
	uint64_t records;
	uint64_t bytes;
	uint64_t lost_full;
	uint64_t lost_wrap;
	uint64_t lost_big;
	uint64_t lost_nest;
	uint64_t lost_overwrite;
	uint32_t untrusted;
	uint64_t drop_packets[LRB_DROP_NR];
	uint64_t drop_records[LRB_DROP_NR];
	uint64_t drop_bytes[LRB_DROP_NR];
};

/**
 * struct lrb_rec_packet - a packet recovery kept
 * @header: its header as handed out: content and packet size as kept,
 *	timestamp_end from its last record's to the next packet's
 *	timestamp_begin (the newest: its last record's), events_discarded
 *	the writers' records of overwritten packets (all of them: they are
 *	older than any packet kept) and their other losses up to its close
 *	(at most a later closed packet's), plus the records recovery
 *	dropped up to its end
 * @offset: where its slot starts in the region
 * @content: bytes kept (header and records)
 * @size: bytes handed out: @content rounded up to a page
 * @records: records in it
 * @dropped_records: records recovery dropped in it
 * @last_ts: its last record's timestamp (timestamp_begin if none)
 * @overwritten: closed: the part of the writers' count it carried that
 *	counts records of overwritten packets (the descriptor's closing
 *	count), at most a later closed packet's
 * @open: it was being written at the crash
 * @cut: bytes after @content were dropped
 */
struct lrb_rec_packet {
	struct lrb_packet_header header;
	unsigned long offset;
	unsigned long content;
	unsigned long size;
	uint64_t records;
	uint64_t dropped_records;
	uint64_t last_ts;
	uint64_t overwritten;
	bool open;
	bool cut;
};

/**
 * struct lrb_rec_buf - one recovered buffer
 * @packets: the packets kept, oldest first
 * @nr_packets: how many
 * @stats: what was kept and dropped
 */
struct lrb_rec_buf {
	struct lrb_rec_packet *packets;
	unsigned int nr_packets;
	struct lrb_recovery_stats stats;
};

/**
 * struct lrb_recovery - a previous run's region, validated
 * @header: the region header (validated copy)
 * @base: the region
 * @metadata: the channel's CTF metadata text, in the region (not
 *	terminated)
 * @metadata_size: its bytes
 * @dec: the decoder used
 * @bufs: the buffers, @nr_bufs of them
 * @nr_bufs: buffers
 * @map_size: user space, lrb_region_file_recover(): bytes mapped at @base
 */
struct lrb_recovery {
	struct lrb_region_header header;
	const void *base;
	const char *metadata;
	unsigned long metadata_size;
	struct lrb_decoder dec;
	struct lrb_rec_buf *bufs;
	unsigned int nr_bufs;
	unsigned long map_size;
};

uint64_t lrb_region_size(const struct lrb_config *cfg,
			 const struct lrb_chan_attr *attr);
const char *lrb_region_check(const void *base, unsigned long size,
			     struct lrb_region_header *h);
int lrb_region_recover(const void *base, unsigned long size,
		       const struct lrb_decoder *dec,
		       struct lrb_recovery **recp, const char **why);
long lrb_recovery_copy(const struct lrb_recovery *rec, unsigned int b,
		       unsigned int i, void *dst, unsigned long len);
void lrb_recovery_free(struct lrb_recovery *rec);
const char *lrb_drop_cause_name(enum lrb_drop_cause cause);
const char *lrb_region_lost_name(unsigned int i);
void lrb_region_release(void *base);
int lrb_recovery_load(const struct lrb_recovery *rec, struct lrb_chan *chan);

#ifdef __cplusplus
}
#endif

#endif /* _LRB_REGION_H */
