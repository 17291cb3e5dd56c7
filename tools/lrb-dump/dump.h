/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb-dump's decoding core, a library on bytes in memory: the metadata
 * parser (a strict TSDL subset: what lib/metadata.c writes and the event
 * declarations clients append), the stream cursor that validates every
 * packet and record of one stream file, and the printer. main.c adds
 * files, merging and the summary; tests/fuzz/dump_fuzz.c feeds it
 * arbitrary bytes. Nothing here exits, and every length read from the
 * data is checked against the bytes given before it is used.
 */
#ifndef _LRB_DUMP_H
#define _LRB_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../../lib/kernel_compat.h"
#include <lrb/decode.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* Limits that keep hostile metadata from costing unbounded memory or time. */
#define DUMP_META_MAX_BYTES (16UL << 20)
#define DUMP_MAX_DEPTH 48		/* types nested in types (lrb: 37) */
#define DUMP_MAX_FIELDS 1024		/* fields of one struct */
#define DUMP_MAX_SCOPE 4096		/* fields of the structs on one path */
#define DUMP_MAX_NODES 100000		/* an event's fields, arrays unrolled once */
#define DUMP_MAX_ARRAY (1ULL << 30)	/* elements of a fixed array */
#define DUMP_MAX_STREAMS 64
#define DUMP_MAX_CLOCKS 16

enum dump_kind {
	DUMP_INT,
	DUMP_ENUM,
	DUMP_FLOAT,
	DUMP_STRING,
	DUMP_STRUCT,
	DUMP_VARIANT,
	DUMP_ARRAY,
	DUMP_SEQUENCE,
};

/* Byte order of an integer: the trace's (native), or given. */
enum dump_order {
	DUMP_ORDER_TRACE,
	DUMP_ORDER_LE,
	DUMP_ORDER_BE,
};

/* Display base of an integer. */
enum dump_base {
	DUMP_BASE_DEC,
	DUMP_BASE_HEX,
	DUMP_BASE_OCT,
	DUMP_BASE_BIN,
};

struct dump_clock;
struct dump_type;

/**
 * struct dump_field - a named member of a struct or variant
 * @name: its name
 * @type: its type
 */
struct dump_field {
	const char *name;
	const struct dump_type *type;
};

/**
 * struct dump_enum_entry - one label of an enum
 * @label: the label
 * @lo: lowest value (as the container's bits, sign-extended if signed)
 * @hi: highest value
 */
struct dump_enum_entry {
	const char *label;
	long long lo;
	long long hi;
};

/**
 * struct dump_type - a TSDL type, shared by every use of its alias
 * @kind: what it is
 * @align: alignment in bits (a power of two), relative to the packet start
 * @fixed: its size does not depend on the data
 * @bits: the size in bits when @fixed
 * @nodes: nodes of the type tree with each array element counted once
 *	(saturates at %DUMP_MAX_NODES + 1); bounds the checks of an event
 * @height: levels of the type tree, this one included
 * @size: integers, enum containers: bits (1 to 64); floats: 32 (IEEE 754
 *	binary32) or 64 (binary64)
 * @sign: integers: signed
 * @order: integers, floats: byte order
 * @base: integers: display base
 * @text: integers: encoding UTF8 or ASCII (arrays of them print as text)
 * @clock: integers: the clock they are mapped to, or NULL
 * @entries: enums: the labels
 * @nr_entries: enums: how many
 * @fields: structs and variants: the members
 * @nr_fields: how many
 * @tag: variants: the name of the tag field
 * @elem: arrays and sequences: the element type
 * @length: arrays: number of elements
 * @length_name: sequences: the name of the integer field holding the length
 */
struct dump_type {
	enum dump_kind kind;
	unsigned int align;
	bool fixed;
	unsigned long long bits;
	unsigned long nodes;
	unsigned int height;
	/* DUMP_INT, DUMP_ENUM (the container), DUMP_FLOAT */
	unsigned int size;
	bool sign;
	enum dump_order order;
	enum dump_base base;
	bool text;
	const struct dump_clock *clock;
	/* DUMP_ENUM */
	const struct dump_enum_entry *entries;
	unsigned int nr_entries;
	/* DUMP_STRUCT, DUMP_VARIANT */
	const struct dump_field *fields;
	unsigned int nr_fields;
	const char *tag;
	/* DUMP_ARRAY, DUMP_SEQUENCE */
	const struct dump_type *elem;
	unsigned long long length;
	const char *length_name;
};

/**
 * struct dump_clock - a clock block
 * @name: its name
 * @freq: cycles per second
 * @offset_s: seconds from the Unix epoch to the clock's origin
 * @offset: further cycles from there to the origin
 */
struct dump_clock {
	const char *name;
	unsigned long long freq;
	long long offset_s;
	unsigned long long offset;
};

/**
 * struct dump_stream_class - a stream block and its record header layout
 * @id: stream id, as in every packet header of the stream
 * @header: record header layout
 * @tsc_bits: timestamp bits of a compact record header
 * @clock: the clock of the timestamps
 * @big_endian: the trace's byte order (byte_order = be)
 */
struct dump_stream_class {
	unsigned int id;
	enum lrb_header_layout header;
	unsigned int tsc_bits;
	const struct dump_clock *clock;
	bool big_endian;
};

/**
 * struct dump_event - an event block
 * @name: event name
 * @id: event id, as in the record header
 * @stream: its stream class
 * @fields: payload layout (a struct), or NULL for an empty payload
 */
struct dump_event {
	const char *name;
	unsigned int id;
	const struct dump_stream_class *stream;
	const struct dump_type *fields;
};

/**
 * struct dump_meta - a parsed metadata text
 * @streams: the stream classes
 * @nr_streams: how many
 * @events: the events, sorted by stream class, then id
 * @nr_events: how many
 * @clock: the clock of the first stream class (timestamps are printed in it)
 * @big_endian: the trace block says byte_order = be (else le)
 * @arena: every allocation of the parser, freed at once
 */
struct dump_meta {
	struct dump_stream_class streams[DUMP_MAX_STREAMS];
	unsigned int nr_streams;
	struct dump_event *events;
	unsigned long nr_events;
	const struct dump_clock *clock;
	bool big_endian;
	void *arena;
};

/*
 * Parse @len bytes of TSDL at @text (no NUL needed). Returns the metadata,
 * or NULL with "line N: what is wrong" in @err (@errlen bytes).
 */
struct dump_meta *dump_meta_parse(const char *text, size_t len, char *err,
				  size_t errlen);
void dump_meta_free(struct dump_meta *meta);
const struct dump_event *dump_meta_event(const struct dump_meta *meta,
					 const struct dump_stream_class *sc,
					 unsigned int id);
const struct dump_stream_class *dump_meta_stream(const struct dump_meta *meta,
						 unsigned int id);

/* What dump_stream_next() returns. */
enum dump_item_kind {
	DUMP_ITEM_EVENT,
	DUMP_ITEM_DISCARDED,	/* records the buffer discarded */
	DUMP_ITEM_LOST,		/* packets missing (packet_seq_num gap) */
};

/**
 * struct dump_item - one event or loss notice of a stream
 * @kind: which
 * @ts: clock value of the event; of the start of a notice's range
 * @ts_end: end of a notice's range
 * @count: records discarded or packets lost
 * @approx: a discarded count from the first packet of a stream that does
 *	not start at packet 0: some of those records may predate the trace
 * @cpu: cpu_id of the packet
 * @event: the event
 * @packet: the packet's first byte (field alignment is relative to it)
 * @payload: payload offset in the packet
 * @len: payload bytes
 * @avail: bytes of the packet content from the payload on
 * @offset: file offset of the record
 */
struct dump_item {
	enum dump_item_kind kind;
	unsigned long long ts;
	unsigned long long ts_end;
	unsigned long long count;
	bool approx;
	unsigned int cpu;
	const struct dump_event *event;
	const unsigned char *packet;
	unsigned long payload;
	unsigned long len;
	unsigned long avail;
	unsigned long long offset;
};

/**
 * struct dump_stream - cursor over one stream file held in memory
 * @meta: the metadata
 * @data: the file's bytes
 * @len: how many
 * @pos: file offset of the current packet
 * @next: file offset of the packet after it
 * @in_packet: @it is decoding the packet at @pos
 * @it: record iterator of the current packet
 * @dec: decoder of the current packet's stream class
 * @sc: stream class of the stream (from its first packet)
 * @pending: notices to return before the packet's records
 * @nr_pending: how many
 * @started: a packet was read
 * @cpu: cpu_id of the first packet
 * @prev_seq: packet_seq_num of the previous packet
 * @prev_end: timestamp_end of the previous packet
 * @prev_discarded: events_discarded of the previous packet
 * @events: records returned
 * @packets: packets opened
 * @discarded: records discarded (sum of the notices)
 * @lost_packets: packets lost (sum of the notices)
 * @err: after an error, what was wrong
 * @err_offset: after an error, the file offset of the bad bytes
 * @cur_event: event of the record being decoded (set by the callback)
 * @cb_err: a payload error found by the payload size callback
 * @cb_offset: its offset in the packet
 */
struct dump_stream {
	const struct dump_meta *meta;
	const unsigned char *data;
	size_t len;
	unsigned long long pos;
	unsigned long long next;
	bool in_packet;
	struct lrb_packet_iter it;
	struct lrb_decoder dec;
	const struct dump_stream_class *sc;
	struct dump_item pending[2];
	unsigned int nr_pending;
	bool started;
	unsigned int cpu;
	unsigned long long prev_seq;
	unsigned long long prev_end;
	unsigned long long prev_discarded;
	unsigned long long events;
	unsigned long long packets;
	unsigned long long discarded;
	unsigned long long lost_packets;
	char err[256];
	unsigned long long err_offset;
	const struct dump_event *cur_event;
	char cb_err[256];
	unsigned long cb_offset;
};

void dump_stream_init(struct dump_stream *s, const struct dump_meta *meta,
		      const void *data, size_t len);
/*
 * The next item of the stream: 1 with @item filled, 0 at the end, or -1
 * after an error (s->err and s->err_offset; the stream stays there).
 */
int dump_stream_next(struct dump_stream *s, struct dump_item *item);

/*
 * The payload of @ev starting at byte @payload of @packet, with @avail
 * bytes readable from there: its size in bytes, or -1 with what is wrong
 * in @err and the offset (in the packet) of the bad field in @err_off.
 */
long dump_payload_size(const struct dump_event *ev,
		       const unsigned char *packet, unsigned long payload,
		       unsigned long avail, char *err, size_t errlen,
		       unsigned long *err_off);

/**
 * struct dump_recover_ctx - what recovery validates records against
 * @meta: the metadata the region holds
 * @sc: its stream class, the region's stream id
 */
struct dump_recover_ctx {
	const struct dump_meta *meta;
	const struct dump_stream_class *sc;
};

/*
 * lrb_decoder.payload_size for lrb_region_recover() (dec->priv: a struct
 * dump_recover_ctx): the payload's size as the metadata declares its
 * event, validated as lrb-dump reads it, or -1. The region must be page
 * aligned (its packets start on pages).
 */
long dump_recover_payload_size(const struct lrb_decoder *dec, u32 id,
			       const u8 *payload, unsigned long avail);

/* Print the fields of @item's payload, as text or JSON members. */
void dump_print_fields(FILE *f, const struct dump_item *item, bool json);

/* Output options of dump_print(). */
#define DUMP_JSON 0x1		/* one JSON object per line */
#define DUMP_CYCLES 0x2		/* timestamps as clock cycles */

/* Print @item as one line. */
void dump_print(FILE *f, const struct dump_meta *meta,
		const struct dump_item *item, unsigned int flags);
/* A clock value as "seconds.nanoseconds" since the epoch, in @buf. */
char *dump_time(char *buf, size_t len, const struct dump_clock *clock,
		unsigned long long cycles);

#endif /* _LRB_DUMP_H */
