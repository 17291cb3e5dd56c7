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
 *
 * The events come from their LRB_EVENT() descriptions: their fields are
 * byte-aligned, as writers store them packed.
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

/* Text appended as snprintf() would: counted in full, stored while it fits. */
struct lrb_tsdl {
	char *out;
	unsigned long size;
	int len;
};

/*
 * The compiler's own va_list, which both builds' vsnprintf() take: the
 * kernel's and libc's <stdarg.h> are different headers.
 */
static __printf(2, 3) void lrb_tsdl_add(struct lrb_tsdl *o, const char *fmt,
					...)
{
	bool room = (unsigned long)o->len < o->size;
	__builtin_va_list ap;

	__builtin_va_start(ap, fmt);
	o->len += vsnprintf(room ? o->out + o->len : NULL,
			    room ? o->size - o->len : 0, fmt, ap);
	__builtin_va_end(ap);
}

static const struct lrb_event_field *
lrb_field_find(const struct lrb_event_desc *ev, unsigned int before,
	       const char *name)
{
	unsigned int i;

	for (i = 0; i < before; i++)
		if (!strcmp(ev->fields[i].name, name))
			return &ev->fields[i];
	return NULL;
}

static bool lrb_label_ok(const struct lrb_event_field *f,
			 const struct lrb_enum_label *l)
{
	unsigned int bits = f->size * 8;
	const unsigned char *c;

	if (!l->label || !l->label[0])
		return false;
	for (c = (const unsigned char *)l->label; *c; c++)
		if (*c == '"' || *c == '\\' || *c < 0x20 || *c == 0x7f)
			return false;
	if (bits == 64)
		return f->is_signed || l->value >= 0;
	if (f->is_signed)
		return l->value >= -(1LL << (bits - 1)) &&
		       l->value < (1LL << (bits - 1));
	return l->value >= 0 && l->value < (1LL << bits);
}

static bool lrb_field_ok(const struct lrb_event_desc *ev, unsigned int i)
{
	const struct lrb_event_field *f = &ev->fields[i];
	const struct lrb_event_field *len;
	unsigned int j;

	if (!f->name || !f->name[0] || lrb_field_find(ev, i, f->name))
		return false;
	switch (f->kind) {
	case LRB_KIND_ENUM:
		if (!f->nr_labels)
			return false;
		for (j = 0; j < f->nr_labels; j++)
			if (!lrb_label_ok(f, &f->labels[j]))
				return false;
		return true;
	case LRB_KIND_SEQUENCE:
		len = lrb_field_find(ev, i, f->length_field);
		return len && len->kind == LRB_KIND_INTEGER && !len->is_signed;
	case LRB_KIND_ARRAY:
		return f->length;
	case LRB_KIND_FLOAT:
		return f->size == 4 || f->size == 8;
	default:
		return true;
	}
}

static bool lrb_events_ok(const struct lrb_event_desc *const *events,
			  unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		if (!events[i]->name || !events[i]->name[0] ||
		    !events[i]->nr_fields)
			return false;
		for (j = 0; j < i; j++)
			if (events[j]->id == events[i]->id ||
			    !strcmp(events[j]->name, events[i]->name))
				return false;
		for (j = 0; j < events[i]->nr_fields; j++)
			if (!lrb_field_ok(events[i], j))
				return false;
	}
	return true;
}

/* The integer type of @f's values or elements. */
static void lrb_tsdl_integer(struct lrb_tsdl *o, const struct lrb_event_field *f)
{
	if (f->text)
		lrb_tsdl_add(o, "integer { size = 8; align = 8; signed = false; %s }",
			     "encoding = UTF8;");
	else
		lrb_tsdl_add(o, "%sint%u_t", f->is_signed ? "" : "u", f->size * 8);
}

static void lrb_tsdl_field(struct lrb_tsdl *o, const struct lrb_event_field *f)
{
	unsigned int i;

	lrb_tsdl_add(o, "\t\t");
	switch (f->kind) {
	case LRB_KIND_INTEGER:
		lrb_tsdl_integer(o, f);
		lrb_tsdl_add(o, " %s;\n", f->name);
		break;
	case LRB_KIND_ENUM:
		lrb_tsdl_add(o, "enum : ");
		lrb_tsdl_integer(o, f);
		lrb_tsdl_add(o, " {\n");
		for (i = 0; i < f->nr_labels; i++)
			lrb_tsdl_add(o, "\t\t\t\"%s\" = %lld,\n",
				     f->labels[i].label, f->labels[i].value);
		lrb_tsdl_add(o, "\t\t} %s;\n", f->name);
		break;
	case LRB_KIND_FLOAT:
		lrb_tsdl_add(o, "floating_point { exp_dig = %u; mant_dig = %u; align = 8; } %s;\n",
			     f->size == 4 ? 8 : 11, f->size == 4 ? 24 : 53,
			     f->name);
		break;
	case LRB_KIND_ARRAY:
		lrb_tsdl_integer(o, f);
		lrb_tsdl_add(o, " %s[%lu];\n", f->name, f->length);
		break;
	case LRB_KIND_SEQUENCE:
		lrb_tsdl_integer(o, f);
		lrb_tsdl_add(o, " %s[%s];\n", f->name, f->length_field);
		break;
	case LRB_KIND_STRING:
		lrb_tsdl_add(o, "string %s;\n", f->name);
		break;
	}
}

static void lrb_tsdl_event(struct lrb_tsdl *o, const struct lrb_event_desc *ev,
			   u32 stream_id)
{
	unsigned int i;

	lrb_tsdl_add(o, "\nevent {\n\tname = \"%s\";\n\tid = %u;\n", ev->name,
		     ev->id);
	lrb_tsdl_add(o, "\tstream_id = %u;\n\tfields := struct {\n", stream_id);
	for (i = 0; i < ev->nr_fields; i++)
		lrb_tsdl_field(o, &ev->fields[i]);
	lrb_tsdl_add(o, "\t};\n};\n");
}

/* How the record header of @chan's stream is laid out in TSDL. */
struct lrb_tsdl_hdr {
	unsigned int id_bits;
	unsigned long long id_max;
	bool large;
	bool ts_first;
	bool has_skip;
	unsigned int skip_bits;
};

static const char lrb_tabs[] = "\t\t\t\t\t\t\t\t";

/* A skip record's selector: one bit of its count of words. */
#define LRB_TSDL_BIT "enum : integer { size = 1; align = 1; signed = false; } { no = 0, yes = 1 }"
/* The bits of its count's word above the selectors. */
#define LRB_TSDL_ZERO "struct { integer { size = %u; align = 1; signed = false; } id; } zero;\n"

static void lrb_tsdl_header(struct lrb_tsdl *o, const struct lrb_tsdl_hdr *h,
			    int d, bool skip);

/*
 * The body of a skip record after its id: the count of 4-byte words
 * skipped, as one 1-bit selector per bit, each choosing an array of as
 * many words as the bit is worth or nothing (babeltrace2 decodes neither
 * sequences nor dynamic lengths in a record header), then the header of
 * the record that follows. The count's word is in the writer's order: the
 * selectors start from its least significant bit in a little-endian trace,
 * from its most significant one in a big-endian trace.
 *
 * Every integer here is a struct member named id: babeltrace2 2.0 warns
 * about any integer of a record header but an id or a timestamp, and the
 * event id it keeps is the last one decoded, the nested header's. So each
 * selector is the id of its own struct, which nests the next selector's
 * struct and then the variant tagged by its id (babeltrace2's tags are
 * plain names, found in the enclosing structs from the innermost out).
 */
static void lrb_tsdl_skip(struct lrb_tsdl *o, const struct lrb_tsdl_hdr *h,
			  int d)
{
	unsigned int i, bit, n = h->skip_bits;

	for (i = 0; i < n; i++) {
		lrb_tsdl_add(o, "%.*sstruct {\n", d, lrb_tabs);
		if (LRB_TSDL_BIG_ENDIAN && !i)
			lrb_tsdl_add(o, "%.*s" LRB_TSDL_ZERO, d + 1, lrb_tabs,
				     32 - n);
		lrb_tsdl_add(o, "%.*s" LRB_TSDL_BIT " id;\n", d + 1, lrb_tabs);
		if (!LRB_TSDL_BIG_ENDIAN && i == n - 1)
			lrb_tsdl_add(o, "%.*s" LRB_TSDL_ZERO, d + 1, lrb_tabs,
				     32 - n);
	}
	while (i--) {
		bit = LRB_TSDL_BIG_ENDIAN ? n - 1 - i : i;
		lrb_tsdl_add(o, "%.*svariant <id> { struct { } no; ", d + 1,
			     lrb_tabs);
		lrb_tsdl_add(o, "struct { struct { uint32_t id; } w[%lu]; } yes; } a;\n",
			     1UL << bit);
		lrb_tsdl_add(o, "%.*s} s%u;\n", d, lrb_tabs, bit);
	}
	lrb_tsdl_add(o, "%.*s", d, lrb_tabs);
	lrb_tsdl_header(o, h, d, false);
	lrb_tsdl_add(o, " h;\n");
}

/*
 * A record header: the id and, in the compact layout, the timestamp bits
 * (before the id in a big-endian trace: CTF packs bit fields from the top
 * there), then a variant that adds the full id and timestamp in the
 * extended form, or the skipped bytes and the next record's header in a
 * skip record (@skip: not in that nested header, as skips never follow
 * each other). Fields at indent @d + 1.
 */
static void lrb_tsdl_header(struct lrb_tsdl *o, const struct lrb_tsdl_hdr *h,
			    int d, bool skip)
{
	const char *ts = h->large ? "" : "lrb_ts_t timestamp;\n";

	d++;
	lrb_tsdl_add(o, "struct {\n");
	if (h->ts_first)
		lrb_tsdl_add(o, "%.*s%s", d, lrb_tabs, ts);
	lrb_tsdl_add(o, "%.*senum : integer { size = %u; align = %u; signed = false; } {\n",
		     d, lrb_tabs, h->id_bits, h->ts_first ? 1 : 8);
	lrb_tsdl_add(o, "%.*s\tcompact = 0 ... %llu,\n", d, lrb_tabs,
		     h->id_max - 1 - h->has_skip);
	if (skip && h->has_skip)
		lrb_tsdl_add(o, "%.*s\tskip = %llu,\n", d, lrb_tabs,
			     h->id_max - 1);
	lrb_tsdl_add(o, "%.*s\textended = %llu,\n%.*s} id;\n", d, lrb_tabs,
		     h->id_max, d, lrb_tabs);
	if (!h->ts_first)
		lrb_tsdl_add(o, "%.*s%s", d, lrb_tabs, ts);
	lrb_tsdl_add(o, "%.*svariant <id> {\n%.*s\tstruct {\n", d, lrb_tabs, d,
		     lrb_tabs);
	if (h->large)
		lrb_tsdl_add(o, "%.*s\t\tlrb_ts_t timestamp;\n", d, lrb_tabs);
	lrb_tsdl_add(o, "%.*s\t} compact;\n", d, lrb_tabs);
	if (skip && h->has_skip) {
		lrb_tsdl_add(o, "%.*s\tstruct {\n", d, lrb_tabs);
		lrb_tsdl_skip(o, h, d + 2);
		lrb_tsdl_add(o, "%.*s\t} skip;\n", d, lrb_tabs);
	}
	lrb_tsdl_add(o, "%.*s\tstruct {\n%.*s\t\tuint32_t id;\n"
		     "%.*s\t\tuint64_clock_t timestamp;\n%.*s\t} extended;\n",
		     d, lrb_tabs, d, lrb_tabs, d, lrb_tabs, d, lrb_tabs);
	lrb_tsdl_add(o, "%.*s} v;\n%.*s} align(32)", d, lrb_tabs, d - 1,
		     lrb_tabs);
}

int lrb_metadata_format(const struct lrb_chan *chan,
			const struct lrb_metadata_attr *attr, char *out,
			unsigned long size)
{
	const struct lrb_config *cfg = chan->cfg;
	bool large = cfg->header == LRB_HEADER_LARGE;
	struct lrb_tsdl_hdr h = {
		.id_bits = large ? 32 : 32 - cfg->tsc_bits,
		.large = large,
		.ts_first = LRB_TSDL_BIG_ENDIAN && !large,
		.has_skip = large || cfg->tsc_bits < 31,
	};
	struct lrb_tsdl o = { .out = out, .size = size };
	unsigned int i;

	h.id_max = (1ULL << h.id_bits) - 1;
	/*
	 * Bits of a skip's word count: below subbuf_size / 4; the largest
	 * sub-buffer's for a channel described without its geometry (tools)
	 */
	h.skip_bits = chan->subbuf_order >= LRB_PAGE_SHIFT &&
			      chan->subbuf_order <= __LRB_MAX_SUBBUF_ORDER ?
			      chan->subbuf_order - 2 :
			      __LRB_MAX_SUBBUF_ORDER - 2;
	if (!lrb_events_ok(attr->events, attr->nr_events))
		return -EINVAL;
	lrb_tsdl_add(&o, "%sclock {\n"
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
		     "\tevent.header := ",
		     lrb_tsdl_types,
		     (unsigned long long)attr->clock_freq,
		     (long long)attr->clock_offset_s,
		     (unsigned long long)attr->clock_offset,
		     large ? 32 : cfg->tsc_bits, large ? 8 : 1,
		     chan->stream_id);
	lrb_tsdl_header(&o, &h, 1, true);
	lrb_tsdl_add(&o, ";\n%s};\n", lrb_tsdl_packet_context);
	for (i = 0; i < attr->nr_events; i++)
		lrb_tsdl_event(&o, attr->events[i], chan->stream_id);
	return o.len;
}
EXPORT_SYMBOL_GPL(lrb_metadata_format);

/*
 * Offset after the first @nr fields of @ev in @payload (@avail bytes), or
 * -1 if the payload ends before: a sequence's length is the value of an
 * earlier field, found by walking up to it again.
 */
static long lrb_payload_walk(const struct lrb_event_desc *ev,
			     unsigned int nr, const u8 *payload,
			     unsigned long avail)
{
	const struct lrb_event_field *f, *len;
	unsigned long off = 0, n;
	unsigned int i, k;
	long end;
	u64 v;

	for (i = 0; i < nr; i++) {
		f = &ev->fields[i];
		switch (f->kind) {
		case LRB_KIND_STRING:
			n = 0;
			/* with its NUL: past @avail if there is none */
			while (off + n < avail && payload[off + n])
				n++;
			n++;
			break;
		case LRB_KIND_ARRAY:
			n = f->length * f->size;
			break;
		case LRB_KIND_SEQUENCE:
			for (k = 0; k < i; k++)
				if (!strcmp(ev->fields[k].name, f->length_field))
					break;
			len = &ev->fields[k];
			end = k < i ? lrb_payload_walk(ev, k + 1, payload, avail) :
				      -1;
			if (end < 0 || len->size > sizeof(v))
				return -1;
			v = 0;
			memcpy((u8 *)&v + (LRB_TSDL_BIG_ENDIAN ?
					   sizeof(v) - len->size : 0),
			       payload + end - len->size, len->size);
			if (f->size && v > avail / f->size)
				return -1;
			n = (unsigned long)v * f->size;
			break;
		default:
			n = f->size;
		}
		if (n > avail - off)
			return -1;
		off += n;
	}
	return off;
}

long lrb_events_payload_size(const struct lrb_decoder *dec, u32 id,
			     const u8 *payload, unsigned long avail)
{
	const struct lrb_metadata_attr *attr = dec->priv;
	const struct lrb_event_desc *ev;
	unsigned int i;
	long n;

	for (i = 0; i < attr->nr_events; i++) {
		ev = attr->events[i];
		if (ev->id != id)
			continue;
		n = lrb_payload_walk(ev, ev->nr_fields, payload, avail);
		return n < 0 ? -EBADMSG : n;
	}
	return -EBADMSG;
}
EXPORT_SYMBOL_GPL(lrb_events_payload_size);
