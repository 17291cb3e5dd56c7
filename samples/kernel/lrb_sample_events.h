/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The events of the LRB_EVENT() sample, recorded by the kernel module
 * lrb_sample_events.ko and by the user-space program samples/user/events.c
 * alike: three events, each with other kinds of fields. Record i of each
 * holds values computed from i alone, so that a reader of either trace can
 * check every field (tests/user/sample-events.sh).
 */
#ifndef _LRB_SAMPLE_EVENTS_H
#define _LRB_SAMPLE_EVENTS_H

#include <linux/types.h>
#include <lrb/event.h>

/* Names of sample_tick's states; 3 has none, readers print the number. */
static const struct lrb_enum_label lrb_sample_states[] = {
	{ "IDLE", 0 },
	{ "BUSY", 1 },
	{ "BLOCKED", 2 },
};

/* Integers, one signed, and an enumeration. */
LRB_EVENT(sample_tick, 1,
	  LRB_INTEGER(__u32, seq),
	  LRB_INTEGER(__s64, delta_ns),
	  LRB_ENUM(__u8, state, lrb_sample_states));

/* A string: quotes, a backslash and non-ASCII UTF-8 included. */
LRB_EVENT(sample_msg, 2,
	  LRB_INTEGER(__u32, seq),
	  LRB_STRING(text));

/* Fixed-size text and a byte sequence of 0 to 16 bytes. */
LRB_EVENT(sample_blob, 40,
	  LRB_INTEGER(__u32, seq),
	  LRB_ARRAY_TEXT(tag, 8),
	  LRB_INTEGER(__u16, len),
	  LRB_SEQUENCE(__u8, data, len));

#define LRB_SAMPLE_EVENTS_BLOB_MAX 16

/* Every event of the sample, for the channel's metadata. */
static const struct lrb_event_desc *const lrb_sample_events[] = {
	&lrb_event_sample_tick,
	&lrb_event_sample_msg,
	&lrb_event_sample_blob,
};

/*
 * Write record @i of each event; @text has room for the message (64
 * bytes). Return: how many of the three writes failed (and were counted
 * lost by the buffer).
 */
static inline unsigned int lrb_sample_events_write(const struct lrb_config *cfg,
						   struct lrb_chan *chan,
						   __u32 i, char *text)
{
	static const char tag[8] = "blob";
	__u8 data[LRB_SAMPLE_EVENTS_BLOB_MAX];
	__u16 len = i % (LRB_SAMPLE_EVENTS_BLOB_MAX + 1);
	unsigned int failed = 0;
	__u16 j;

	for (j = 0; j < len; j++)
		data[j] = (__u8)(i * 31 + j);
	snprintf(text, 64, "msg %u: \"quoted\" back\\slash caf\xc3\xa9", i);
	failed += !!lrb_write_sample_tick(cfg, chan, i, (__s64)i * -1000003,
					  i % 4);
	failed += !!lrb_write_sample_msg(cfg, chan, i, text);
	failed += !!lrb_write_sample_blob(cfg, chan, i, tag, len, data);
	return failed;
}

#endif /* _LRB_SAMPLE_EVENTS_H */
