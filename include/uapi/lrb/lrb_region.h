/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * lrb region layout: a persistent channel's buffers and state in one
 * memory region the channel does not own (memory reserved at boot, a
 * mapped file), laid out so that the next boot or process can find and
 * validate the previous run's data (Documentation/design.rst, "Persistent
 * channels"). The region holds offsets only, never pointers; every field is
 * in the byte order of the machine that wrote it, which the magic tells.
 *
 *   offset 0          struct lrb_region_header
 *   metadata_offset   the client's CTF metadata text
 *   desc_offset       nr_bufs descriptors of desc_size bytes (words below)
 *   data_offset       nr_bufs * nr_slots slots of subbuf_size bytes
 */
#ifndef _UAPI_LRB_REGION_H
#define _UAPI_LRB_REGION_H

#include <linux/types.h>

/* "LRBREGN1" as a 64-bit word in the writer's byte order. */
#define LRB_REGION_MAGIC 0x4c52425245474e31ULL
#define LRB_REGION_VERSION 2U
/*
 * "LRBRLSD1": the magic of a region whose run was released (read, or let
 * go) after recovery: the next run lays it out afresh, and nothing is
 * recovered from it.
 */
#define LRB_REGION_RELEASED 0x4c5242524c534431ULL

/*
 * A buffer's descriptor is an array of words of word_size bytes (the
 * writer's unsigned long): the loss counters at these indexes (each
 * incremented before the buffer's own counter, which packet headers
 * sample: the region's is never the lower), then from word
 * LRB_REGION_DESC_ARRAYS the commit counts, the slot table, the commit
 * marks and the closing counts, num_subbuf words each. The closing count
 * of sub-buffer i is the part of the events_discarded of the packet last
 * closed there that counts records of overwritten packets
 * (LRB_REGION_LOST_OVERWRITE), from the same sample.
 */
#define LRB_REGION_LOST_FULL 0
#define LRB_REGION_LOST_WRAP 1
#define LRB_REGION_LOST_BIG 2
#define LRB_REGION_LOST_NEST 3
#define LRB_REGION_LOST_OVERWRITE 4
#define LRB_REGION_NR_LOST 5
#define LRB_REGION_DESC_ARRAYS 8
#define LRB_REGION_NR_DESC_ARRAYS 4

/**
 * struct lrb_region_header - the fixed part at the start of a region
 * @magic: %LRB_REGION_MAGIC, or %LRB_REGION_RELEASED once released
 * @version: %LRB_REGION_VERSION: the layout of everything below
 * @header_size: bytes of this header
 * @region_size: bytes of the region the layout spans
 * @run_id: identifier of the boot or process that laid the region out
 * @subbuf_size: bytes per sub-buffer (a CTF packet)
 * @num_subbuf: sub-buffers per buffer
 * @nr_slots: slots of subbuf_size bytes per buffer (num_subbuf + 1 in
 *	overwrite mode: the reader's spare)
 * @nr_bufs: buffers (one per CPU, or one global buffer)
 * @mode: %LRB_ABI_MODE_OVERWRITE (the only mode a region holds)
 * @alloc: 0 for per-CPU buffers, 1 for one global buffer
 * @header: record header layout, %LRB_ABI_HEADER_COMPACT or _LARGE
 * @tsc_bits: timestamp bits of a compact record header
 * @stream_id: CTF stream id of every packet
 * @word_size: bytes of a descriptor word (positions, commit counts)
 * @page_size: bytes of a page of the writer
 * @metadata_offset: where the CTF metadata text starts
 * @metadata_size: its bytes
 * @desc_offset: where the first buffer descriptor starts
 * @desc_size: bytes per descriptor
 * @data_offset: where the first buffer's slots start (page aligned)
 * @buf_data_size: bytes of slots per buffer (nr_slots * subbuf_size)
 * @checksum: 64-bit FNV-1a of the bytes of this header before it, then of
 *	the metadata text; written last
 */
struct lrb_region_header {
	__u64 magic;
	__u32 version;
	__u32 header_size;
	__u64 region_size;
	__u64 run_id;
	__u64 subbuf_size;
	__u32 num_subbuf;
	__u32 nr_slots;
	__u32 nr_bufs;
	__u32 mode;
	__u32 alloc;
	__u32 header;
	__u32 tsc_bits;
	__u32 stream_id;
	__u32 word_size;
	__u32 page_size;
	__u64 metadata_offset;
	__u64 metadata_size;
	__u64 desc_offset;
	__u64 desc_size;
	__u64 data_offset;
	__u64 buf_data_size;
	__u64 checksum;
};

#endif /* _UAPI_LRB_REGION_H */
