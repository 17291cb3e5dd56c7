/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * lrb user ABI: the on-buffer layout of packets and records, and the
 * ioctl interface of the per-CPU files /dev/lrb/<channel>/cpuN
 * (Documentation/abi.rst describes both, and the files).
 *
 * Every sub-buffer of an lrb buffer is one CTF 1.8 packet: a fixed packet
 * header (trace packet header and stream packet context in CTF terms)
 * followed by records. Records start on a 4-byte boundary; each is a record
 * header followed by the payload. Every field is in the byte order of the
 * CPU that wrote it (big-endian on s390x): a reader that finds the magic
 * byte-swapped swaps every field (lrb_packet_header_load() of lrb/decode.h
 * does it for the packet header).
 */
#ifndef _UAPI_LRB_ABI_H
#define _UAPI_LRB_ABI_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* CTF 1.8 packet magic number. */
#define LRB_PACKET_MAGIC 0xC1FC1FC1U

/**
 * struct lrb_packet_header - header at the start of every sub-buffer
 * @magic: %LRB_PACKET_MAGIC
 * @stream_id: CTF stream class id, chosen by the client
 * @timestamp_begin: clock value when the packet was opened
 * @timestamp_end: clock value when the packet was closed
 * @content_size: bits of the packet holding header and records; it ends
 *	with the last record's payload, without alignment bytes
 * @packet_size: bits of the packet including padding (the sub-buffer size)
 * @packet_seq_num: sub-buffer sequence number within the buffer; a reader
 *	detects lost packets as gaps in this number
 * @events_discarded: records the buffer lost (all causes, records of
 *	overwritten packets included) up to the close of this packet,
 *	cumulative since the buffer was created
 * @cpu_id: CPU owning the buffer (0 for a global buffer)
 * @header_size: bytes of this header; records start at this offset
 */
struct lrb_packet_header {
	__u32 magic;
	__u32 stream_id;
	__u64 timestamp_begin;
	__u64 timestamp_end;
	__u64 content_size;
	__u64 packet_size;
	__u64 packet_seq_num;
	__u64 events_discarded;
	__u32 cpu_id;
	__u32 header_size;
};

/* Records are aligned on this many bytes within a packet. */
#define LRB_RECORD_ALIGN 4U

/*
 * Compact record header: one 32-bit word (in the writer's byte order)
 * holding the event id in its low (32 - tsc_bits) bits and the low
 * tsc_bits bits of the timestamp above it (tsc_bits is 27 by default,
 * leaving 5 bits of id). The timestamp field is a CTF clock-mapped
 * integer: a reader rebuilds the full value from the previous record's
 * timestamp, assuming at most one wrap of the field.
 *
 * The extended form, used when the event id does not fit or the timestamp
 * moved by 2^tsc_bits or more since the previous record, sets the id field
 * to all ones (and the timestamp field to zero) and is followed by the full
 * 32-bit id and 64-bit timestamp.
 *
 * Large record header: a 32-bit id and the low 32 bits of the timestamp.
 * Its extended form has id %LRB_LARGE_ID_EXTENDED, then the full 32-bit id
 * and 64-bit timestamp.
 */
#define LRB_COMPACT_HEADER_SIZE 4U
#define LRB_LARGE_HEADER_SIZE 8U
#define LRB_EXTENDED_HEADER_SIZE 16U
#define LRB_LARGE_ID_EXTENDED 0xFFFFFFFFU

/*
 * Skip record: bytes that hold no event (records discarded after a later
 * record was reserved), which readers pass over. Its header is 8 bytes: a
 * record header word whose id field is the skip id (compact: all ones but
 * the lowest bit, with the timestamp bits of the record that follows the
 * skip; large: %LRB_LARGE_ID_SKIP), then a 32-bit count of the 4-byte words
 * skipped after the header. A record, never a skip, follows a skip record:
 * CTF describes the skip as the first part of that record's header. A
 * packet's content never ends with a skip record. The compact layout has a
 * skip id only with tsc_bits of 30 or less.
 */
#define LRB_SKIP_HEADER_SIZE 8U
#define LRB_LARGE_ID_SKIP 0xFFFFFFFEU

/**
 * struct lrb_extended_header - tail of an extended record header
 * @id: full event id
 * @timestamp: full 64-bit clock value
 */
struct lrb_extended_header {
	__u32 id;
	__u64 timestamp;
} __attribute__((packed));

/* Values of struct lrb_buf_info.mode and .header. */
#define LRB_ABI_MODE_DISCARD 0U
#define LRB_ABI_MODE_OVERWRITE 1U
#define LRB_ABI_HEADER_COMPACT 0U
#define LRB_ABI_HEADER_LARGE 1U

/**
 * struct lrb_buf_info - geometry and settings of one per-CPU buffer
 * @subbuf_size: bytes per sub-buffer (the largest packet)
 * @num_subbuf: sub-buffers in the ring
 * @mmap_len: the only length mmap() accepts, at offset 0
 * @cpu: CPU the buffer belongs to
 * @mode: %LRB_ABI_MODE_DISCARD or %LRB_ABI_MODE_OVERWRITE
 * @stream_id: CTF stream id in every packet header
 * @watermark: complete sub-buffers poll() waits for (this file's setting)
 * @switch_timer_us: period of the channel's switch timer, 0 if none
 * @read_timer_us: period of the channel's read timer, 0 if writers wake
 *	readers themselves
 * @header: record header layout, %LRB_ABI_HEADER_COMPACT or
 *	%LRB_ABI_HEADER_LARGE
 * @tsc_bits: timestamp bits of a compact record header
 * @clock_freq: frequency of the record clock in Hz
 */
struct lrb_buf_info {
	__u64 subbuf_size;
	__u64 num_subbuf;
	__u64 mmap_len;
	__u32 cpu;
	__u32 mode;
	__u32 stream_id;
	__u32 watermark;
	__u32 switch_timer_us;
	__u32 read_timer_us;
	__u32 header;
	__u32 tsc_bits;
	__u64 clock_freq;
};

/**
 * struct lrb_subbuf_desc - a sub-buffer held by the reader
 * @pos: byte position of the packet in the buffer's stream; the input of
 *	%LRB_IOC_GET_SUBBUF
 * @seq: packet sequence number (pos / subbuf_size)
 * @content_size: bytes of header and records
 * @packet_size: bytes to read, padding included: @content_size rounded up
 *	to a page (at most subbuf_size); the packet header says the same
 * @mmap_offset: where the packet starts in the mapping of the file
 */
struct lrb_subbuf_desc {
	__u64 pos;
	__u64 seq;
	__u64 content_size;
	__u64 packet_size;
	__u64 mmap_offset;
};

/**
 * struct lrb_positions - the buffer's positions, in bytes since creation
 * @consumed: start of the oldest packet not consumed
 * @produced: where the next record will be written
 */
struct lrb_positions {
	__u64 consumed;
	__u64 produced;
};

/**
 * struct lrb_buf_counters - one buffer's counters, cumulative (what
 *	lrb_buf_stats() samples, and %LRB_IOC_GET_COUNTERS gives)
 * @records_written: records committed by writers
 * @lost_full: records dropped because the reader had not freed space
 *	(discard mode)
 * @lost_wrap: records dropped because the next sub-buffer was still being
 *	committed by an interrupted writer
 * @lost_big: records dropped because they did not fit in a sub-buffer
 * @lost_nest: records dropped because writers nested too deeply
 * @lost_packets: packets overwritten before a reader took them (overwrite
 *	mode); they show as gaps in packet sequence numbers
 * @produced: bytes reserved by writers
 * @consumed: bytes released by consuming readers
 * @packets_read: lrb.ko's files only (lrb_buf_stats() gives 0 for this
 *	and the next two): packets handed to readers whole: read or spliced to their
 *	end, or released by %LRB_IOC_PUT_SUBBUF after %LRB_IOC_GET_NEXT_SUBBUF
 * @bytes_read: packet bytes handed to readers (a packet held when its file
 *	is closed is consumed, and counts only for what was read of it)
 * @pages_spliced: pages moved into pipes by splice() without a copy
 * @lost_overwrite: records in the packets counted by @lost_packets; with
 *	the other lost_* counters, what packet headers carry as
 *	events_discarded
 */
struct lrb_buf_counters {
	__u64 records_written;
	__u64 lost_full;
	__u64 lost_wrap;
	__u64 lost_big;
	__u64 lost_nest;
	__u64 lost_packets;
	__u64 produced;
	__u64 consumed;
	__u64 packets_read;
	__u64 bytes_read;
	__u64 pages_spliced;
	__u64 lost_overwrite;
};

/* Values of struct lrb_status.flags. */
#define LRB_STATUS_FINAL 1U

/**
 * struct lrb_status - the status page of a per-CPU file, mapped read-only
 *	at offset lrb_buf_info.mmap_len (Documentation/abi.rst, "The status
 *	page"); in the CPU's byte order, with the same layout on 32-bit and
 *	64-bit CPUs
 * @seq: even when stable, odd while lrb.ko updates the fields after it:
 *	read it before and after them, as a seqcount
 * @size: bytes of this structure that lrb.ko fills; later fields would
 *	come after @counters
 * @flags: %LRB_STATUS_FINAL once the channel is destroyed: nothing more
 *	will be written
 * @cpu: CPU the buffer belongs to
 * @subbuf_size: bytes per sub-buffer
 * @num_subbuf: sub-buffers in the ring
 * @ready: complete packets from the oldest not consumed on (the one held
 *	included), up to @num_subbuf: what poll() compares with the watermark
 * @pages_recycled: of @counters.pages_spliced, those replaced in the
 *	buffer by a page the pipes had given back, not a newly allocated one
 * @counters: the buffer's counters, as %LRB_IOC_GET_COUNTERS gives them
 */
struct lrb_status {
	__u32 seq;
	__u32 size;
	__u32 flags;
	__u32 cpu;
	__u64 subbuf_size;
	__u64 num_subbuf;
	__u64 ready;
	__u64 pages_recycled;
	struct lrb_buf_counters counters;
};

#define LRB_IOC_MAGIC 0xB9

/* Buffer geometry and this file's settings. */
#define LRB_IOC_GET_INFO _IOR(LRB_IOC_MAGIC, 0x00, struct lrb_buf_info)
/* Take the oldest complete packet; consumed when released. */
#define LRB_IOC_GET_NEXT_SUBBUF _IOR(LRB_IOC_MAGIC, 0x01, struct lrb_subbuf_desc)
/* Take the complete packet at desc.pos without consuming it (snapshots). */
#define LRB_IOC_GET_SUBBUF _IOWR(LRB_IOC_MAGIC, 0x02, struct lrb_subbuf_desc)
/* Release the packet taken by LRB_IOC_GET_NEXT_SUBBUF or _GET_SUBBUF. */
#define LRB_IOC_PUT_SUBBUF _IO(LRB_IOC_MAGIC, 0x03)
/* Describe the packet held. */
#define LRB_IOC_GET_HELD _IOR(LRB_IOC_MAGIC, 0x04, struct lrb_subbuf_desc)
/* Sample the consumed and produced positions. */
#define LRB_IOC_GET_POSITIONS _IOR(LRB_IOC_MAGIC, 0x05, struct lrb_positions)
/* Close the packet being filled so that it can be read. */
#define LRB_IOC_FLUSH _IO(LRB_IOC_MAGIC, 0x06)
/* Read the buffer's counters. */
#define LRB_IOC_GET_COUNTERS _IOR(LRB_IOC_MAGIC, 0x07, struct lrb_buf_counters)
/* Complete packets (1 to num_subbuf) poll() waits for before EPOLLIN. */
#define LRB_IOC_SET_WATERMARK _IOW(LRB_IOC_MAGIC, 0x08, __u32)

#endif /* _UAPI_LRB_ABI_H */
