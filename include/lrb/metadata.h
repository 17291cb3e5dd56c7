/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb CTF 1.8 metadata: the TSDL text that describes a channel's packets,
 * record headers and events to trace readers such as babeltrace2. The
 * events are described by LRB_EVENT() (lrb/event.h).
 */
#ifndef _LRB_METADATA_H
#define _LRB_METADATA_H

#include <lrb/decode.h>
#include <lrb/internal/buffer.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * enum lrb_field_kind - what a field of an event holds
 * @LRB_KIND_INTEGER: an integer of 1, 2, 4 or 8 bytes, signed or not
 * @LRB_KIND_ENUM: an integer with names for some of its values
 * @LRB_KIND_FLOAT: an IEEE 754 binary32 (float) or binary64 (double)
 * @LRB_KIND_ARRAY: a fixed number of integers
 * @LRB_KIND_SEQUENCE: integers counted by an earlier unsigned field
 * @LRB_KIND_STRING: a NUL-terminated UTF-8 string
 */
enum lrb_field_kind {
	LRB_KIND_INTEGER,
	LRB_KIND_ENUM,
	LRB_KIND_FLOAT,
	LRB_KIND_ARRAY,
	LRB_KIND_SEQUENCE,
	LRB_KIND_STRING,
};

/**
 * struct lrb_enum_label - a named value of an enumeration field
 * @label: the name readers print; no '"', '\\' or control characters
 * @value: the value it names
 */
struct lrb_enum_label {
	const char *label;
	long long value;
};

/**
 * struct lrb_event_field - one field of an event, as LRB_EVENT() made it
 * @name: field name (a C identifier)
 * @kind: what it holds
 * @size: bytes of the integer, float or array or sequence element
 * @is_signed: the integer or element type is signed
 * @text: an array or sequence of bytes holding UTF-8 text
 * @length: elements of an array
 * @length_field: name of a sequence's length field
 * @labels: named values of an enumeration
 * @nr_labels: how many
 */
struct lrb_event_field {
	const char *name;
	enum lrb_field_kind kind;
	unsigned int size;
	bool is_signed;
	bool text;
	unsigned long length;
	const char *length_field;
	const struct lrb_enum_label *labels;
	unsigned int nr_labels;
};

/**
 * struct lrb_event_desc - an event, as LRB_EVENT() made it
 * @name: event name
 * @id: event id
 * @fields: its fields, in payload order
 * @nr_fields: how many
 */
struct lrb_event_desc {
	const char *name;
	unsigned int id;
	const struct lrb_event_field *fields;
	unsigned int nr_fields;
};

/**
 * struct lrb_metadata_attr - what the metadata says besides the layout
 * @clock_freq: frequency of the channel's clock in Hz
 * @clock_offset_s: seconds from the Unix epoch to the clock's zero
 * @clock_offset: further clock cycles from there to the clock's zero
 * @events: the client's events (LRB_EVENT()'s lrb_event_<name>)
 * @nr_events: how many
 */
struct lrb_metadata_attr {
	uint64_t clock_freq;
	int64_t clock_offset_s;
	uint64_t clock_offset;
	const struct lrb_event_desc *const *events;
	unsigned int nr_events;
};

/**
 * lrb_metadata_format() - write a channel's CTF metadata
 * @chan: the channel
 * @attr: clock and client events
 * @out: destination, may be NULL if @size is 0
 * @size: bytes available at @out, the terminating NUL included
 *
 * Context: any context; does not sleep.
 * Return: the length of the text, as snprintf(): when it is @size or more,
 * the text was cut and the caller needs that length plus one bytes;
 * -EINVAL if the events are inconsistent: two with the same id or name, a
 * field name used twice in an event, a sequence whose length field is not
 * an earlier unsigned integer field, an enumeration label with '"', '\\'
 * or control characters or a value its integer cannot hold.
 */
int lrb_metadata_format(const struct lrb_chan *chan,
			const struct lrb_metadata_attr *attr, char *out,
			unsigned long size);

/**
 * lrb_events_payload_size() - payload size of a record of the events of
 *	a struct lrb_metadata_attr, for struct lrb_decoder.payload_size
 * @dec: the decoder; its priv points to the struct lrb_metadata_attr
 *	whose events the records are
 * @id: event id of the record
 * @payload: its first payload byte
 * @avail: bytes readable at @payload
 *
 * Walks the fields as LRB_EVENT() stores them (packed, in this CPU's byte
 * order: sequence lengths are read that way): a kernel client's events
 * validate the records of a region this machine wrote.
 *
 * Context: any context; does not sleep.
 * Return: the payload bytes, or -EBADMSG if @id is not an event of the
 * list or the payload does not fit in @avail.
 */
long lrb_events_payload_size(const struct lrb_decoder *dec, uint32_t id,
			     const uint8_t *payload, unsigned long avail);

#ifdef __cplusplus
}
#endif

#endif /* _LRB_METADATA_H */
