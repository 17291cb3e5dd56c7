/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lrb CTF 1.8 metadata: the TSDL text that describes a channel's packets
 * and record headers to trace readers such as babeltrace2. The client adds
 * its own event declarations.
 */
#ifndef _LRB_METADATA_H
#define _LRB_METADATA_H

#include <lrb/internal/buffer.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct lrb_metadata_attr - what the metadata says besides the layout
 * @clock_freq: frequency of the channel's clock in Hz
 * @clock_offset_s: seconds from the Unix epoch to the clock's zero
 * @clock_offset: further clock cycles from there to the clock's zero
 * @events: TSDL event declarations of the client, or NULL
 */
struct lrb_metadata_attr {
	uint64_t clock_freq;
	int64_t clock_offset_s;
	uint64_t clock_offset;
	const char *events;
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
 * the text was cut and the caller needs that length plus one bytes.
 */
int lrb_metadata_format(const struct lrb_chan *chan,
			const struct lrb_metadata_attr *attr, char *out,
			unsigned long size);

#ifdef __cplusplus
}
#endif

#endif /* _LRB_METADATA_H */
