/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb packet decoder: walks the records of one packet held in contiguous
 * memory, validating every header and length against the packet bounds.
 * It never reads outside the bytes it is given, so it serves both the
 * library's readers and tools reading untrusted trace files. Packets of
 * either byte order decode on any CPU (the magic says which they are in).
 */
#ifndef _LRB_DECODE_H
#define _LRB_DECODE_H

#include <lrb/config.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct lrb_decoder - how to decode records of one stream
 * @header: record header layout of the stream
 * @tsc_bits: timestamp bits of a compact header
 * @payload_size: returns the payload size of a record of event @id whose
 *	payload starts at @payload (@avail bytes readable there), or a
 *	negative error if the event is unknown or its payload malformed
 * @priv: for @payload_size
 *
 * @payload_size reads the payload as the writer stored it: in the byte
 * order of the packet (struct lrb_packet_iter.swapped).
 */
struct lrb_decoder {
	enum lrb_header_layout header;
	unsigned int tsc_bits;
	long (*payload_size)(const struct lrb_decoder *dec, uint32_t id,
			     const uint8_t *payload, unsigned long avail);
	void *priv;
};

/**
 * struct lrb_record - one decoded record
 * @id: event id
 * @timestamp: full timestamp, rebuilt from the compact form if needed
 * @payload: first payload byte
 * @len: payload bytes
 * @offset: offset of the record header within the packet
 * @extended: the record used an extended header
 */
struct lrb_record {
	uint32_t id;
	uint64_t timestamp;
	const uint8_t *payload;
	unsigned long len;
	unsigned long offset;
	bool extended;
};

/**
 * struct lrb_packet_iter - position in a packet being decoded
 * @dec: the decoder
 * @base: first byte of the packet
 * @content: bytes of header and records (from the packet header)
 * @pos: offset after the last record decoded (the next one starts at the
 *	next multiple of %LRB_RECORD_ALIGN)
 * @last_ts: timestamp of the previous record (or packet begin)
 * @skipped: bytes of skip records passed over (discarded records)
 * @header: copy of the packet header, in this CPU's byte order
 * @swapped: the packet was written in the other byte order than this
 *	CPU's (record headers are converted; payloads are as written)
 * @error: after a failure, what was wrong
 * @error_offset: after a failure, the offset of the bad bytes
 */
struct lrb_packet_iter {
	const struct lrb_decoder *dec;
	const uint8_t *base;
	unsigned long content;
	unsigned long pos;
	uint64_t last_ts;
	unsigned long skipped;
	struct lrb_packet_header header;
	bool swapped;
	const char *error;
	unsigned long error_offset;
};

/**
 * lrb_packet_header_load() - copy a packet header in this CPU's byte order
 * @h: receives the header, every field in this CPU's byte order
 * @data: the packet's first byte; sizeof(*@h) bytes must be readable
 *
 * Context: any context; does not sleep.
 * Return: 0 if the packet was written in this CPU's byte order, 1 if in
 * the other one (@h is converted), -EBADMSG if the magic is neither (@h
 * then holds the bytes as they are).
 */
int lrb_packet_header_load(struct lrb_packet_header *h, const void *data);

/**
 * lrb_packet_open() - start decoding a packet
 * @it: iterator to initialise
 * @dec: how records of the stream are laid out
 * @data: the packet's first byte
 * @avail: bytes readable at @data
 *
 * Validates the packet header: magic, header size, content and packet
 * sizes (whole bytes, content within packet, packet within @avail). The
 * magic gives the byte order of the packet: it->header holds the header in
 * this CPU's order, and it->swapped says if the packet is in the other.
 *
 * Context: any context; does not sleep.
 * Return: 0, -EINVAL if @dec is invalid, or -EBADMSG with it->error and
 * it->error_offset describing the problem.
 */
int lrb_packet_open(struct lrb_packet_iter *it, const struct lrb_decoder *dec,
		    const void *data, unsigned long avail);

/**
 * lrb_packet_next() - decode the next record of a packet
 * @it: iterator from lrb_packet_open()
 * @rec: receives the record; its payload points into the packet
 *
 * Context: any context; does not sleep.
 * Skip records (discarded records, see lrb_discard()) are passed over and
 * counted in it->skipped, never returned.
 *
 * Return: 1 with a record, 0 at the end of the packet content, or
 * -EBADMSG with it->error and it->error_offset describing the problem.
 * After an error the iterator stays at the bad record.
 */
int lrb_packet_next(struct lrb_packet_iter *it, struct lrb_record *rec);

#ifdef __cplusplus
}
#endif

#endif /* _LRB_DECODE_H */
