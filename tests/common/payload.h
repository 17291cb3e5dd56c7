/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The payload convention of the lrb tests, shared by the user-space tests
 * and the KUnit suites, so that one decoder callback can size every record
 * they write:
 * - ids TEST_ID_FIXED_MIN..TEST_ID_FIXED_MAX have fixed payloads of 1 to 8
 *   bytes (id - TEST_ID_FIXED_MIN + 1);
 * - id TEST_ID_UNKNOWN is unknown to the decoder (callback fails);
 * - id TEST_ID_HUGE claims a payload of LONG_MAX bytes;
 * - every other id carries a payload of at least 4 bytes whose first u32
 *   is the payload length, then (from 8 bytes on) a u32 sequence number,
 *   then pattern bytes derived from the sequence number.
 *
 * The includer provides memcpy(), LONG_MAX and the errno values.
 */
#ifndef _LRB_TEST_PAYLOAD_H
#define _LRB_TEST_PAYLOAD_H

#include <lrb/decode.h>

#define TEST_ID_UNKNOWN 13
#define TEST_ID_HUGE 14
#define TEST_ID_FIXED_MIN 16
#define TEST_ID_FIXED_MAX 23

static inline bool test_id_fixed(u32 id)
{
	return id >= TEST_ID_FIXED_MIN && id <= TEST_ID_FIXED_MAX;
}

static inline u32 test_fixed_len(u32 id)
{
	return id - TEST_ID_FIXED_MIN + 1;
}

static inline u8 test_pattern(u32 seq, u32 i)
{
	return (u8)(seq * 7 + i * 13 + 1);
}

/* Fill a payload of @len bytes for event @id with sequence number @seq. */
static inline void test_fill_payload(u8 *p, u32 id, u32 len, u32 seq)
{
	u32 i = 0;

	if (!test_id_fixed(id)) {
		memcpy(p, &len, sizeof(len));
		i = 4;
		if (len >= 8) {
			memcpy(p + 4, &seq, sizeof(seq));
			i = 8;
		}
	}
	for (; i < len; i++)
		p[i] = test_pattern(seq, i);
}

/* True if the payload is what test_fill_payload() wrote. */
static inline bool test_check_payload(const u8 *p, u32 id, u32 len, u32 seq)
{
	u32 i = 0, v;

	if (!test_id_fixed(id)) {
		if (len < 4)
			return false;
		memcpy(&v, p, sizeof(v));
		if (v != len)
			return false;
		i = 4;
		if (len >= 8) {
			memcpy(&v, p + 4, sizeof(v));
			if (v != seq)
				return false;
			i = 8;
		}
	}
	for (; i < len; i++)
		if (p[i] != test_pattern(seq, i))
			return false;
	return true;
}

/* Sequence number carried by a length-prefixed payload of >= 8 bytes. */
static inline u32 test_payload_seq(const u8 *p)
{
	u32 seq;

	memcpy(&seq, p + 4, sizeof(seq));
	return seq;
}

/* lrb_decoder.payload_size for the convention above. */
static inline long test_payload_size(const struct lrb_decoder *dec, u32 id,
				     const u8 *payload, unsigned long avail)
{
	u32 len;

	if (test_id_fixed(id))
		return test_fixed_len(id);
	if (id == TEST_ID_UNKNOWN)
		return -ENOENT;
	if (id == TEST_ID_HUGE)
		return LONG_MAX;
	if (avail < sizeof(len))
		return -EBADMSG;
	memcpy(&len, payload, sizeof(len));
	if (len < sizeof(len))
		return -EBADMSG;
	return len;
}

#endif /* _LRB_TEST_PAYLOAD_H */
