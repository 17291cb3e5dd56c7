/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb client configuration.
 *
 * Each client describes itself with one constant struct lrb_config and
 * passes its address to the inline fast paths. Because the struct is
 * constant and visible to the compiler, every test of one of its fields in
 * a fast path folds away: each client gets a fast path specialised for it.
 */
#ifndef _LRB_CONFIG_H
#define _LRB_CONFIG_H

#include <lrb/internal/port.h>
#include <uapi/lrb/lrb_abi.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lrb_buf;

/**
 * enum lrb_mode - what a writer does when the buffer is full
 * @LRB_MODE_DISCARD: drop the new record and count it
 * @LRB_MODE_OVERWRITE: overwrite the oldest sub-buffer (flight recorder)
 */
enum lrb_mode {
	LRB_MODE_DISCARD,
	LRB_MODE_OVERWRITE,
};

/**
 * enum lrb_alloc - how buffers map to CPUs
 * @LRB_ALLOC_PER_CPU: one buffer per CPU, written by that CPU only (in the
 *	kernel; user space may share it between threads that migrate)
 * @LRB_ALLOC_GLOBAL: one buffer for the whole channel, written by all CPUs
 */
enum lrb_alloc {
	LRB_ALLOC_PER_CPU,
	LRB_ALLOC_GLOBAL,
};

/**
 * enum lrb_wakeup - who tells sleeping readers that a sub-buffer is ready
 * @LRB_WAKEUP_BY_WRITER: the writer that delivers a sub-buffer
 * @LRB_WAKEUP_BY_TIMER: nobody on the write path; readers poll on a timer
 */
enum lrb_wakeup {
	LRB_WAKEUP_BY_WRITER,
	LRB_WAKEUP_BY_TIMER,
};

/**
 * enum lrb_header_layout - record header layout
 * @LRB_HEADER_COMPACT: 32 bits: (32 - tsc_bits)-bit id, tsc_bits timestamp
 * @LRB_HEADER_LARGE: 64 bits: 32-bit id, 32-bit timestamp
 *
 * Both have an extended 16-byte form with the full id and timestamp; see
 * include/uapi/lrb/lrb_abi.h.
 */
enum lrb_header_layout {
	LRB_HEADER_COMPACT,
	LRB_HEADER_LARGE,
};

/**
 * struct lrb_client_cb - client callbacks
 * @clock_read: the record clock; called on every reserve, so it should be
 *	an inline function the compiler can see (lrb_clock_default())
 * @packet_begin: optional; called when a writer opens a packet, after the
 *	library filled the header, to let the client adjust or observe it
 * @packet_end: optional; called when a packet is closed, after the library
 *	filled the end timestamp, sizes and discarded count, before the
 *	packet can be delivered to a reader
 */
struct lrb_client_cb {
	uint64_t (*clock_read)(void);
	void (*packet_begin)(struct lrb_buf *buf,
			     struct lrb_packet_header *header);
	void (*packet_end)(struct lrb_buf *buf,
			   struct lrb_packet_header *header);
};

/**
 * struct lrb_config - a client's constant configuration
 * @mode: discard or overwrite
 * @alloc: per-CPU buffers or one global buffer
 * @wakeup: how readers learn that data is ready
 * @header: record header layout
 * @tsc_bits: timestamp bits in a compact header (1 to 31; 27 is the usual
 *	choice, leaving 5 bits of event id); ignored by the large layout
 * @cb: client callbacks
 * @persistent: channels live in a caller's region (lrb_chan_attr.region)
 *	that outlives a crash; commits then record how far the packet is
 *	committed without a hole (the commit mark, see lib/region.c)
 */
struct lrb_config {
	enum lrb_mode mode;
	enum lrb_alloc alloc;
	enum lrb_wakeup wakeup;
	enum lrb_header_layout header;
	unsigned int tsc_bits;
	struct lrb_client_cb cb;
	bool persistent;
};

#ifdef __cplusplus
}
#endif

#endif /* _LRB_CONFIG_H */
