// SPDX-License-Identifier: GPL-2.0
/*
 * lrb CTF 1.8 metadata. The packet header of lrb_abi.h is the trace packet
 * header (magic, stream id) followed by the stream packet context; the
 * record header is described as a tag, the clock bits, and a variant that
 * adds the full id and timestamp in the extended form.
 *
 * Writers store every field in the CPU's byte order, so the trace declares
 * that order. A compact record header is one native 32-bit word with the
 * id in its low bits; CTF packs bit fields from the least significant bit
 * in a little-endian trace and from the most significant bit in a
 * big-endian one, so there the timestamp bits come first.
 */
#include <lrb/metadata.h>
#include "port.h"

#define LRB_CLOCK_NAME "lrb_clock"

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define LRB_TSDL_BYTE_ORDER "be"
#define LRB_TSDL_BIG_ENDIAN true
#else
#define LRB_TSDL_BYTE_ORDER "le"
#define LRB_TSDL_BIG_ENDIAN false
#endif

static const char lrb_tsdl_types[] =
	"/* CTF 1.8 */\n\n"
	"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	"typealias integer { size = 8; align = 8; signed = true; } := int8_t;\n"
	"typealias integer { size = 16; align = 8; signed = true; } := int16_t;\n"
	"typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
	"typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n\n"
	"trace {\n"
	"\tmajor = 1;\n"
	"\tminor = 8;\n"
	"\tbyte_order = " LRB_TSDL_BYTE_ORDER ";\n"
	"\tpacket.header := struct {\n"
	"\t\tuint32_t magic;\n"
	"\t\tuint32_t stream_id;\n"
	"\t};\n"
	"};\n\n"
	"env {\n"
	"\ttracer_name = \"lrb\";\n"
	"};\n\n";

static const char lrb_tsdl_packet_context[] =
	"\tpacket.context := struct {\n"
	"\t\tuint64_clock_t timestamp_begin;\n"
	"\t\tuint64_clock_t timestamp_end;\n"
	"\t\tuint64_t content_size;\n"
	"\t\tuint64_t packet_size;\n"
	"\t\tuint64_t packet_seq_num;\n"
	"\t\tuint64_t events_discarded;\n"
	"\t\tuint32_t cpu_id;\n"
	"\t\tuint32_t header_size;\n"
	"\t};\n";

/* The variant option that adds the full id and timestamp. */
#define LRB_TSDL_EXTENDED						\
	"\t\t\tstruct {\n"						\
	"\t\t\t\tuint32_t id;\n"					\
	"\t\t\t\tuint64_clock_t timestamp;\n"				\
	"\t\t\t} extended;\n"

int lrb_metadata_format(const struct lrb_chan *chan,
			const struct lrb_metadata_attr *attr, char *out,
			unsigned long size)
{
	const struct lrb_config *cfg = chan->cfg;
	unsigned int id_bits = 32 - cfg->tsc_bits;
	unsigned long long id_max = (1ULL << id_bits) - 1;
	unsigned int ts_bits = cfg->tsc_bits;
	bool large = cfg->header == LRB_HEADER_LARGE;
	/* the compact timestamp bits: after the id, or before it (be) */
	const char *ts_field = large ? "" : "\t\tlrb_ts_t timestamp;\n";
	bool ts_first = LRB_TSDL_BIG_ENDIAN && !large;

	if (large) {
		id_bits = 32;
		id_max = LRB_LARGE_ID_EXTENDED;
		ts_bits = 32;
	}
	return snprintf(out, size,
		"%sclock {\n"
		"\tname = \"" LRB_CLOCK_NAME "\";\n"
		"\tfreq = %llu;\n"
		"\toffset_s = %lld;\n"
		"\toffset = %llu;\n"
		"\tabsolute = false;\n"
		"};\n\n"
		"typealias integer {\n"
		"\tsize = 64; align = 8; signed = false;\n"
		"\tmap = clock." LRB_CLOCK_NAME ".value;\n"
		"} := uint64_clock_t;\n\n"
		"typealias integer {\n"
		"\tsize = %u; align = %u; signed = false;\n"
		"\tmap = clock." LRB_CLOCK_NAME ".value;\n"
		"} := lrb_ts_t;\n\n"
		"stream {\n"
		"\tid = %u;\n"
		"\tevent.header := struct {\n"
		"%s\t\tenum : integer { size = %u; align = %u; signed = false; } {\n"
		"\t\t\tcompact = 0 ... %llu,\n"
		"\t\t\textended = %llu,\n"
		"\t\t} id;\n"
		"%s\t\tvariant <id> {\n"
		"%s" LRB_TSDL_EXTENDED
		"\t\t} v;\n"
		"\t} align(32);\n"
		"%s};\n\n"
		"%s",
		lrb_tsdl_types,
		(unsigned long long)attr->clock_freq,
		(long long)attr->clock_offset_s,
		(unsigned long long)attr->clock_offset,
		ts_bits, large ? 8 : 1,
		chan->stream_id, ts_first ? ts_field : "", id_bits,
		ts_first ? 1 : 8, id_max - 1, id_max,
		ts_first ? "" : ts_field,
		large ? "\t\t\tstruct {\n\t\t\t\tlrb_ts_t timestamp;\n\t\t\t} compact;\n" :
			"\t\t\tstruct {\n\t\t\t} compact;\n",
		lrb_tsdl_packet_context,
		attr->events ? attr->events : "");
}
EXPORT_SYMBOL_GPL(lrb_metadata_format);
