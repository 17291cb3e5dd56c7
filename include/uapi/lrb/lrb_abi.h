/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * lrb user ABI: the on-buffer layout of packets and records.
 *
 * Every sub-buffer of an lrb buffer is one CTF 1.8 packet: a fixed packet
 * header (trace packet header and stream packet context in CTF terms)
 * followed by records. Records start on a 4-byte boundary; each is a record
 * header followed by the payload. All fields are little-endian on the
 * architectures lrb supports.
 */
#ifndef _UAPI_LRB_ABI_H
#define _UAPI_LRB_ABI_H

#include <linux/types.h>

/* CTF 1.8 packet magic number. */
#define LRB_PACKET_MAGIC 0xC1FC1FC1U

/**
 * struct lrb_packet_header - header at the start of every sub-buffer
 * @magic: %LRB_PACKET_MAGIC
 * @stream_id: CTF stream class id, chosen by the client
 * @timestamp_begin: clock value when the packet was opened
 * @timestamp_end: clock value when the packet was closed
 * @content_size: bits of the packet holding header and records
 * @packet_size: bits of the packet including padding (the sub-buffer size)
 * @packet_seq_num: sub-buffer sequence number within the buffer; a reader
 *	detects lost packets as gaps in this number
 * @events_discarded: records the buffer discarded (all causes) up to the
 *	close of this packet, cumulative since the buffer was created
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
 * Compact record header: one 32-bit word holding the event id in its low
 * (32 - tsc_bits) bits and the low tsc_bits bits of the timestamp above it
 * (tsc_bits is 27 by default, leaving 5 bits of id). The timestamp field is
 * a CTF clock-mapped integer: a reader rebuilds the full value from the
 * previous record's timestamp, assuming at most one wrap of the field.
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

/**
 * struct lrb_extended_header - tail of an extended record header
 * @id: full event id
 * @timestamp: full 64-bit clock value
 */
struct lrb_extended_header {
	__u32 id;
	__u64 timestamp;
} __attribute__((packed));

#endif /* _UAPI_LRB_ABI_H */
